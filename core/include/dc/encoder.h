// dc/encoder.h: the command encoder: binds a kernel's arguments one at a
// time, by index or by name, checks each against the kernel's reflection
// as it is bound, and submits dispatches to a stream.
// SPDX-License-Identifier: MIT
#ifndef DC_ENCODER_H_
#define DC_ENCODER_H_

#include <stddef.h>
#include <stdint.h>

#include "dc/kernel.h"
#include "dc/status.h"
#include "dc/stream.h"

DC_EXTERN_C_BEGIN

// An encoder holds a kernel, its bound arguments and a grid. Bindings stay
// between dispatches, so a loop changes only what differs. Every error
// names the function, the kernel and, where there is one, the argument:
//   "dc_encoder_set_arg: kernel 'scale': argument 1 'factor' (float): got
//    a value of i32"
// A call that fails changes nothing: a refused binding leaves the previous
// one in place, a refused grid the previous grid.
//
// The dispatch check of the grid, the group and the __local memory runs
// on the first dispatch after any of them (or a __local size) changed;
// later dispatches of the same geometry skip it, so the encoder adds only
// a record of the command to dc_stream_dispatch()'s own cost.
//
// The encoder keeps the last DC_ENCODER_HISTORY commands it submitted or
// rejected, and counts its work (dc_encoder_stats).
//
// Lifetime: reference counted like every engine object; create returns one
// reference, which the caller owns. The encoder holds references to its
// stream, kernel and bound buffers until they are replaced or its last
// reference goes, so the caller may release its own as soon as they are
// bound; it keeps the context of the stream it was created with alive.
// Memory comes from that context's allocator: the encoder on creation,
// its argument slots by dc_encoder_set_kernel() when a kernel has more
// arguments than any before it; nothing else allocates.
// Thread safety: an encoder is used by one thread at a time; different
// encoders may share a stream, a kernel and buffers.

typedef struct dc_encoder_t dc_encoder_t;

#define DC_ENCODER_HISTORY 32

// Creates an encoder that submits to |stream| (retained), with no kernel.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a released stream,
// DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_encoder_create(dc_stream_t* stream,
                                     dc_encoder_t** out_encoder);
// Adds a reference to |encoder|. NULL or a released encoder is a no-op.
DC_API void dc_encoder_retain(dc_encoder_t* encoder);

// Drops a reference to |encoder|. The last one releases the stream, the
// kernel and the bound buffers, and frees the encoder; commands already
// queued still run. NULL or a released encoder is a no-op.
DC_API void dc_encoder_release(dc_encoder_t* encoder);

// Every function below returns DC_ERR_INVALID_ARGUMENT for a NULL or
// released encoder.

// Submits later dispatches to |stream| instead: retains it and releases
// the previous one. Bindings, grid and history stay. A kernel already
// selected must live on |stream|'s device.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL or released stream, or one of
// another device than the kernel's.
DC_API dc_status_t dc_encoder_set_stream(dc_encoder_t* encoder,
                                         dc_stream_t* stream);

// Selects the kernel to dispatch (retained; the previous one released).
// Clears the bindings, releasing bound buffers, and the grid, also when
// |kernel| is the one already selected. The kernel must live on the
// stream's device.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL kernel or one of another
// device ("kernel 'k' lives on X, the stream on Y"), DC_ERR_OUT_OF_MEMORY
// (the encoder then keeps its previous kernel and bindings).
DC_API dc_status_t dc_encoder_set_kernel(dc_encoder_t* encoder,
                                         dc_kernel_t* kernel);

// Binds argument |index| / the argument called |name|. The argument is
// checked against the kernel's reflection now (kind, dtype, vector width,
// device, a struct's size), so a mistake is reported where it is made.
// |arg| is copied, a struct's bytes too (dc_arg_bytes); a buffer is
// retained until it is rebound, the kernel changes or the encoder goes,
// and the buffer it replaces is released.
// Returns DC_ERR_FAILED_PRECONDITION with no kernel selected,
// DC_ERR_OUT_OF_RANGE for an index past the kernel's arguments (listing
// them), DC_ERR_NOT_FOUND for an unknown name (listing the arguments),
// DC_ERR_INVALID_ARGUMENT for NULL pointers or an argument the kernel
// does not take. Counted in args_bound or arg_errors.
DC_API dc_status_t dc_encoder_set_arg(dc_encoder_t* encoder, size_t index,
                                      const dc_arg_t* arg);
DC_API dc_status_t dc_encoder_set_arg_by_name(dc_encoder_t* encoder,
                                              const char* name,
                                              const dc_arg_t* arg);

// Sets the grid: |dims| (1 to 3) sizes in |global|, none of them 0; the
// work-group size and offset reset to "engine's choice" and 0.
// Returns DC_ERR_FAILED_PRECONDITION with no kernel selected (selecting a
// kernel clears the grid), DC_ERR_INVALID_ARGUMENT for NULL, bad dims or a
// zero size.
DC_API dc_status_t dc_encoder_set_grid(dc_encoder_t* encoder, uint32_t dims,
                                       const size_t* global);
// Sets the work-group size (|dims| entries, as the grid, none of them 0),
// or NULL to let the engine choose. Whether it divides the grid and fits
// the device is checked by dc_encoder_validate() and dc_encoder_dispatch().
// Returns DC_ERR_FAILED_PRECONDITION with no kernel or no grid,
// DC_ERR_INVALID_ARGUMENT for a zero size.
DC_API dc_status_t dc_encoder_set_group(dc_encoder_t* encoder,
                                        const size_t* local);
// Sets the global offset (|dims| entries, as the grid), or NULL for 0.
// Returns DC_ERR_FAILED_PRECONDITION with no kernel or no grid.
DC_API dc_status_t dc_encoder_set_offset(dc_encoder_t* encoder,
                                         const size_t* offset);

// Checks that the encoder could dispatch now: a kernel, a grid, every
// argument bound, and the full dispatch check of dc_kernel_dispatch()
// (with the group the engine would choose when none is set; validating
// never takes a turn of autotuning).
// Returns DC_ERR_FAILED_PRECONDITION naming what is missing (the unbound
// arguments by name: "kernel 'k': arguments not bound: b, n"), or the
// dispatch check's error (DC_ERR_INVALID_ARGUMENT).
DC_API dc_status_t dc_encoder_validate(const dc_encoder_t* encoder);

// Validates (messages then start with "dc_encoder_dispatch"), then queues
// the dispatch on the encoder's stream. Either way the command goes into
// the history with its status and the time spent.
// Returns what dc_encoder_validate() or dc_stream_dispatch() returns.
DC_API dc_status_t dc_encoder_dispatch(dc_encoder_t* encoder);

// One command in the history.
typedef struct dc_encoder_record_t {
  uint64_t sequence;       // 1 for the encoder's first command
  char kernel[64];         // "" if none was selected; cut to 63 bytes
  uint32_t stream_id;      // dc_stream_id() of the stream it went to
  uint32_t dims;           // 0: no grid was set
  size_t global[3];        // zeros past |dims|
  size_t local[3];         // zeros: the engine chose
  dc_status_t status;      // DC_OK: submitted; else why it was refused
  uint64_t encode_ns;      // time spent validating and submitting
} dc_encoder_record_t;

// Copies the |index|-th most recent record (0: the latest).
// Returns DC_ERR_OUT_OF_RANGE past the history's length (|out_record| is
// then zeroed), DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_encoder_history(const dc_encoder_t* encoder,
                                      size_t index,
                                      dc_encoder_record_t* out_record);

typedef struct dc_encoder_stats_t {
  uint64_t args_bound;     // successful dc_encoder_set_arg* calls
  uint64_t arg_errors;     // refused bindings
  uint64_t dispatches;     // submitted
  uint64_t rejected;       // dc_encoder_dispatch calls refused
  uint64_t encode_ns;      // total time in dc_encoder_dispatch
  size_t history_length;   // records held (at most DC_ENCODER_HISTORY)
} dc_encoder_stats_t;

// Copies the encoder's counters into |out_stats|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_encoder_stats(const dc_encoder_t* encoder,
                                    dc_encoder_stats_t* out_stats);

DC_EXTERN_C_END

#endif  // DC_ENCODER_H_

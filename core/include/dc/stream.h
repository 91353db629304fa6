// dc/stream.h: streams (in-order asynchronous queues of device work),
// stream groups and cancellation tokens.
// SPDX-License-Identifier: MIT
#ifndef DC_STREAM_H_
#define DC_STREAM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/buffer.h"
#include "dc/device.h"
#include "dc/event.h"
#include "dc/kernel.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Streams ---------------------------------------------------------===//
//
// A stream is an in-order queue of commands for one device: dispatches,
// copies, fills, host callbacks, event records and event waits. Enqueuing
// returns at once; the commands run later, one after another, each
// starting after the previous one has finished. Different streams are
// independent and run concurrently (on the CPU device, each stream's
// commands are driven by the engine's stream threads and kernels run on
// the worker pool). dc_stream_sync() waits for everything queued so far.
//
// Validation happens when a command is enqueued: a bad argument is
// returned by the enqueue call, exactly as the synchronous function would
// return it, and nothing is queued. What can only fail while running (a
// bounds-check fault, a host callback's error, a device failure) fails
// the stream instead:
//
//   - The failing command's status and message become the stream's error.
//     It is logged and counted once.
//   - Every later command of the stream is skipped: it does not run, and
//     the events it would record are poisoned with that same error.
//     Another stream that waits for such an event fails with it too, so
//     the original error reaches every piece of work that depends on it.
//   - dc_stream_sync() and dc_stream_query() return the error (with its
//     message in dc_last_error()) until dc_stream_reset() clears it.
//     After a reset the stream runs new commands normally.
//
// Commands hold references to the buffers, kernels and events they use,
// so objects may be released as soon as their commands are queued. Host
// memory given to dc_stream_write() and dc_stream_read() must stay valid
// until the command has run (sync the stream, or wait for an event
// recorded after it).
//
// Lifetime: reference counted. Releasing the last reference lets the
// queued commands finish and then frees the stream. Releasing the context
// (the host's last reference) first waits for every stream's queued work.
//
// Thread safety: every function is thread-safe. Commands enqueued by
// several threads on one stream run in the order the calls took effect.

typedef struct dc_stream_t dc_stream_t;
typedef struct dc_cancel_token_t dc_cancel_token_t;

// The scheduler starts the ready command of the highest-priority stream
// first; streams of equal priority take turns.
typedef enum dc_priority_e {
  DC_PRIORITY_NORMAL = 0,
  DC_PRIORITY_LOW,
  DC_PRIORITY_HIGH,
} dc_priority_t;

typedef struct dc_stream_params_t {
  dc_priority_t priority;  // default normal
  const char* label;       // in traces, reports and messages; copied
} dc_stream_params_t;

// Creates a stream on |device|. |params| may be NULL for defaults.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or an unknown
// priority, DC_ERR_OUT_OF_MEMORY, DC_ERR_RESOURCE_EXHAUSTED when the
// engine's stream threads cannot be started.
DC_API dc_status_t dc_stream_create(dc_device_t* device,
                                    const dc_stream_params_t* params,
                                    dc_stream_t** out_stream);

DC_API void dc_stream_retain(dc_stream_t* stream);
DC_API void dc_stream_release(dc_stream_t* stream);

// Accessors; they return NULL, "" or 0 for NULL.
DC_API dc_device_t* dc_stream_device(const dc_stream_t* stream);
DC_API const char* dc_stream_label(const dc_stream_t* stream);
// A number unique among the context's streams, from 1.
DC_API uint32_t dc_stream_id(const dc_stream_t* stream);

//===-- Commands --------------------------------------------------------===//
//
// Each returns DC_ERR_INVALID_ARGUMENT (with a message naming the problem)
// when the command is malformed, DC_ERR_OUT_OF_MEMORY, or DC_OK once it
// is queued. Sizes and offsets are in elements of the buffers' dtypes.

// Queues |kernel| over |dispatch| with |args|, checked as
// dc_kernel_dispatch() checks them. The argument values are copied, a
// struct's bytes too (dc_arg_bytes), so the caller may reuse them at once.
DC_API dc_status_t dc_stream_dispatch(dc_stream_t* stream, dc_kernel_t* kernel,
                                      const dc_dispatch_t* dispatch,
                                      const dc_arg_t* args, size_t arg_count);

// Queues a copy of |count| elements from |src| at |src_offset| to |dst| at
// |dst_offset|. The buffers must have the same dtype; they may be on
// different devices (the stream's device must be one of them).
DC_API dc_status_t dc_stream_copy(dc_stream_t* stream, dc_buffer_t* dst,
                                  size_t dst_offset, dc_buffer_t* src,
                                  size_t src_offset, size_t count);

// Queues a copy of |count| elements from host memory |src| into |dst| at
// |offset|. |src| is read when the command runs.
DC_API dc_status_t dc_stream_write(dc_stream_t* stream, dc_buffer_t* dst,
                                   size_t offset, const void* src,
                                   size_t count);

// Queues a copy of |count| elements of |src| at |offset| into host memory
// |dst|, written when the command runs.
DC_API dc_status_t dc_stream_read(dc_stream_t* stream, dc_buffer_t* src,
                                  size_t offset, void* dst, size_t count);

// Queues setting |count| elements of |buffer| from |offset| on to the
// element at |value| (copied now).
DC_API dc_status_t dc_stream_fill(dc_stream_t* stream, dc_buffer_t* buffer,
                                  size_t offset, size_t count,
                                  const void* value);

// A host function run in stream order. Returning an error fails the
// stream with it (set dc_last_error() through dc_set_error() first to
// give a message).
typedef dc_status_t (*dc_host_fn_t)(void* user_data);

// Queues |fn|: it runs on an engine thread after every earlier command of
// the stream has finished, and before any later one starts. It must not
// wait for its own stream.
DC_API dc_status_t dc_stream_host(dc_stream_t* stream, dc_host_fn_t fn,
                                  void* user_data);

// Queues a record of |event| (a new generation of it; see dc/event.h).
// The event must belong to the stream's device.
DC_API dc_status_t dc_stream_record(dc_stream_t* stream, dc_event_t* event);

// Makes the stream's later commands wait until |event|'s last record (as
// of this call) completes. A poisoned event fails the stream with the
// event's error. Waiting for an event of another device is allowed.
DC_API dc_status_t dc_stream_wait_event(dc_stream_t* stream,
                                        dc_event_t* event);

//===-- Waiting, errors, cancellation -----------------------------------===//

// Waits until every command queued so far has finished, for at most
// |timeout_ns| (DC_TIMEOUT_INFINITE: no limit; 0: poll).
// Returns the stream's error if it has failed, DC_ERR_DEADLINE_EXCEEDED if
// the time ran out first, DC_ERR_INVALID_ARGUMENT for NULL.
DC_API dc_status_t dc_stream_sync(dc_stream_t* stream, uint64_t timeout_ns);

// Returns the stream's error if it has failed, DC_ERR_UNAVAILABLE while
// commands are queued or running (not a failure: nothing is logged), or
// DC_OK when it is idle.
DC_API dc_status_t dc_stream_query(const dc_stream_t* stream);

// Waits for the stream to drain (skipping what the error skips), then
// clears its error so that new commands run again.
// Returns the error it cleared (DC_OK if there was none), with its
// message in dc_last_error(); DC_ERR_INVALID_ARGUMENT for NULL.
DC_API dc_status_t dc_stream_reset(dc_stream_t* stream);

// Cancels every command of the stream that has not started: none of them
// runs, their events are poisoned with DC_ERR_CANCELLED, and the stream
// does not fail (later commands run). A command already running finishes.
// Returns the number of commands cancelled (0 for NULL).
DC_API size_t dc_stream_cancel(dc_stream_t* stream);

// Makes the commands queued on |stream| from now on carry |token| (NULL:
// none). Cancelling the token cancels those of them that have not
// started, as dc_stream_cancel() does. One token may serve many streams.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL stream or a token of another
// context.
DC_API dc_status_t dc_stream_set_cancel_token(dc_stream_t* stream,
                                              dc_cancel_token_t* token);

// A flag shared by commands across the streams of |context|, made with
// its allocator. Reference counted; commands hold references, and the
// token keeps the context alive.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_cancel_token_create(dc_context_t* context,
                                          dc_cancel_token_t** out_token);
DC_API void dc_cancel_token_retain(dc_cancel_token_t* token);
DC_API void dc_cancel_token_release(dc_cancel_token_t* token);
// Cancels the token for good; commands carrying it that have not started
// never run. Thread-safe, idempotent.
DC_API void dc_cancel_token_cancel(dc_cancel_token_t* token);
DC_API bool dc_cancel_token_is_cancelled(const dc_cancel_token_t* token);

//===-- Statistics ------------------------------------------------------===//

typedef struct dc_stream_stats_t {
  uint64_t submitted;   // commands queued since creation
  uint64_t completed;   // commands that ran and succeeded
  uint64_t failed;      // commands that ran and failed (0 or 1 per reset)
  uint64_t skipped;     // commands not run because the stream had failed
  uint64_t cancelled;   // commands cancelled before they started
  uint64_t busy_ns;     // time spent running commands
  size_t queued;        // commands queued or running now
  dc_priority_t priority;
  dc_status_t error;    // the stream's error, DC_OK if none
} dc_stream_stats_t;

// Copies |stream|'s statistics into |out_stats|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_stream_stats(const dc_stream_t* stream,
                                   dc_stream_stats_t* out_stats);

//===-- Stream groups ---------------------------------------------------===//
//
// A fixed set of streams on one device, used together: work is spread
// over them by picking a stream per command (round-robin, or the one with
// the fewest queued commands) and the whole group is synchronised at once.
// The streams are owned by the group (borrowed by callers; retain one to
// keep it past the group).

typedef struct dc_stream_group_t dc_stream_group_t;

typedef enum dc_pick_e {
  DC_PICK_ROUND_ROBIN = 0,
  DC_PICK_LEAST_LOADED,  // fewest queued commands; ties go round-robin
} dc_pick_t;

typedef struct dc_stream_group_params_t {
  size_t count;            // streams; 0: the device's stream_count
  dc_priority_t priority;  // of every stream
  const char* label;       // streams are labelled "<label>.<index>"
} dc_stream_group_params_t;

// Creates a group on |device|. |params| may be NULL for defaults.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, a count over 64 or an
// unknown priority, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_stream_group_create(
    dc_device_t* device, const dc_stream_group_params_t* params,
    dc_stream_group_t** out_group);

// Adds a reference to |group|. NULL or a released group is a no-op.
DC_API void dc_stream_group_retain(dc_stream_group_t* group);

// Drops a reference to |group|; the last one releases the group's
// references to its streams (their queued work still finishes). NULL or a
// released group is a no-op.
DC_API void dc_stream_group_release(dc_stream_group_t* group);

// Returns the number of streams (0 for NULL).
DC_API size_t dc_stream_group_size(const dc_stream_group_t* group);

// Returns stream |index| (borrowed), NULL if out of range.
DC_API dc_stream_t* dc_stream_group_stream(const dc_stream_group_t* group,
                                           size_t index);

// Picks a stream by |pick| (borrowed). Thread-safe. NULL for NULL.
DC_API dc_stream_t* dc_stream_group_next(dc_stream_group_t* group,
                                         dc_pick_t pick);

// Syncs every stream of the group, within |timeout_ns| in all.
// Returns the first failed stream's error (in index order),
// DC_ERR_DEADLINE_EXCEEDED, or DC_ERR_INVALID_ARGUMENT for NULL.
DC_API dc_status_t dc_stream_group_sync(dc_stream_group_t* group,
                                        uint64_t timeout_ns);

DC_EXTERN_C_END

#endif  // DC_STREAM_H_

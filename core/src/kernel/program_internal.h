// program_internal.h: programs and kernels, shared by the front end, the
// dispatch path and the backends.
// SPDX-License-Identifier: MIT
#ifndef DC_PROGRAM_INTERNAL_H_
#define DC_PROGRAM_INTERNAL_H_

#include "arena.h"
#include "ast.h"
#include "dc/backend.h"
#include "dc/kernel.h"
#include "object_cache.h"
#include "pp.h"


// A kernel is part of its program: it has no allocation or reference
// count of its own, and retaining it retains the program.
struct dc_kernel_t {
  dc_program_t* program;
  dc_kernel_info_t info;
  dc_kernel_arg_info_t* args;
  uint32_t function;  // index in the program's AST
  uint32_t line;      // where the kernel is declared
  void* impl;         // the backend's (CPU: entry points and mode)
  dc_native_kernel_fn_t native_fn;  // set for native kernels
  void* native_user_data;
  struct dc__tune_entry_t* tune;    // autotuned grids, guarded by the
                                    // program's lock
  _Atomic(void*) timing;  // telemetry's histogram for this kernel, once
                          // it has run (telemetry.c)
};

struct dc_program_t {
  dc__resource_t header;  // first (resource.h)
  pthread_mutex_t lock;  // guards the kernels' tuning tables
  // Owned by the engine (the built-in program): not a live object; the
  // engine's reference holds no context, every other one holds one.
  bool internal;
  bool building;  // inside the backend's program_build
  dc_device_t* device;
  dc__live_node_t live;
  dc__arena_t arena;  // names, argument tables, kernels, log
  char* name;
  char* build_log;
  char* source;          // as given, for building it for another device
  size_t source_length;
  char* options;         // NULL when none were given
  dc_kernel_t* kernels;
  size_t kernel_count;
  void* impl;  // the backend's (CPU: the loaded module)
};

// The build's inside (dc_program_build_t.tree): the typed tree and what
// the engine's own code generators write their results and diagnostics
// into. Backends outside the tree read dc_program_build_lower's text.
struct dc__build_tree_t {
  dc__arena_t* arena;  // scratch, freed after the build
  dc__diag_t* diag;
  const dc__program_ast_t* ast;
  const dc__build_options_t* options;
};

// Makes an empty program object on |device| (one reference, not yet on the
// live list); the caller fills it, then publishes it.
DC_INTERNAL dc_status_t dc__program_new(dc_device_t* device, const char* name,
                                        dc_program_t** out_program);
DC_INTERNAL void dc__program_publish(dc_program_t* program);
DC_INTERNAL void dc__program_free(dc_program_t* program);

// The size of the struct the context's program cache holds.
DC_INTERNAL size_t dc__program_object_size(void);
// Frees what a released program keeps while it waits in the cache's
// quarantine (its arena, with the kernels stale kernel handles point
// into): the cache's evict hook.
DC_INTERNAL void dc__program_evict(void* program);
// Turns a published program into one the engine owns: it leaves the live
// list and stops keeping the context alive (the context frees it).
DC_INTERNAL void dc__program_make_internal(dc_program_t* program);
// Picks a work-group size for |launch| as the threadgroup optimiser does,
// aiming at about |want| work-items per group (kernel.c).
DC_INTERNAL void dc__choose_local(const dc_kernel_t* kernel,
                                  dc_launch_t* launch, size_t want);

// A dispatch that passed every check, with its geometry completed.
typedef struct dc__prepared_t {
  dc_launch_t launch;
  int tuning;  // the autotune slot being timed, or -1
} dc__prepared_t;

// The dtype of an element type of the language (0 for void).
DC_INTERNAL dc_dtype_t dc__scalar_dtype(dc__scalar_t scalar);

// Describes a value argument of |type| into |a| when it is a struct or
// union (DC_ARG_RECORD: size, alignment, members, in |arena|) or an enum
// (an int); other types are left as they are (reflect_record.c). False
// when |arena| ran out of memory.
struct dc__ty_t;
DC_INTERNAL bool dc__reflect_value(dc__arena_t* arena,
                                   const struct dc__ty_t* type,
                                   dc_kernel_arg_info_t* a);

// Whether |program| is a program, not released.
DC_INTERNAL bool dc__program_valid(const dc_program_t* program);
// Whether |kernel| is a live kernel (its program not released).
DC_INTERNAL bool dc__kernel_valid(const dc_kernel_t* kernel);

// Checks argument |index| against the kernel's reflection; messages start
// with |fn|, the public function the caller is in.
DC_INTERNAL dc_status_t dc__kernel_check_arg(const char* fn,
                                             const dc_kernel_t* kernel,
                                             size_t index, const dc_arg_t* arg);

// Runs every check of dc_kernel_dispatch() (arguments, grid, group, local
// memory) and chooses the group size when none is given.
DC_INTERNAL dc_status_t dc__kernel_prepare(const char* fn, dc_kernel_t* kernel,
                                           const dc_dispatch_t* dispatch,
                                           const dc_arg_t* args,
                                           size_t arg_count,
                                           dc__prepared_t* out_prepared);

// Runs a prepared dispatch on the kernel's device and returns when it has
// finished. |args| must still be the arguments it was prepared with (their
// buffers alive). Reports nothing to telemetry: the caller does, timing
// the call if it wants a span.
DC_INTERNAL dc_status_t dc__kernel_run(dc_kernel_t* kernel,
                                       const dc__prepared_t* prepared,
                                       const dc_arg_t* args);

// Arguments kept beyond the call that gave them (kernel_args.c): a held
// copy retains its buffer and owns a copy of a record's bytes that did not
// fit in its inline value. Hold only arguments dc__kernel_check_arg()
// accepted. dc__args_hold() holds all or none (DC_ERR_OUT_OF_MEMORY);
// dc__args_drop() releases what a hold took.
DC_INTERNAL dc_status_t dc__arg_hold(dc_allocator_t allocator, dc_arg_t* dst,
                                     const dc_arg_t* src);
DC_INTERNAL void dc__arg_drop(dc_allocator_t allocator, dc_arg_t* arg);
DC_INTERNAL dc_status_t dc__args_hold(dc_allocator_t allocator, dc_arg_t* dst,
                                      const dc_arg_t* src, size_t count);
DC_INTERNAL void dc__args_drop(dc_allocator_t allocator, dc_arg_t* args,
                               size_t count);
// The bytes of a value or record argument.
DC_INTERNAL const void* dc__arg_data(const dc_arg_t* arg);

// Fills the backend's argument table for a dispatch of |kernel| with
// |args| (dc/backend.h: one value pointer and one size in bytes per
// argument).
DC_INTERNAL void dc__kernel_pack_args(const dc_kernel_t* kernel,
                                      const dc_arg_t* args, void** values,
                                      size_t* lengths);

// Puts a prepared dispatch on |queue|, a queue of the kernel's device
// (dc/backend.h), and returns without waiting for it: it has finished when
// the queue has. Not for a dispatch being autotuned (its time counts).
DC_INTERNAL dc_status_t dc__kernel_queue(dc_kernel_t* kernel,
                                         const dc__prepared_t* prepared,
                                         const dc_arg_t* args, dc_device_queue_t* queue);

// Autotuning (autotune.c): sets |launch|'s group size from the kernel's
// table for its grid and returns the candidate slot being timed, or -1 when
// the best size is already known. dc__autotune_record() stores the time.
DC_INTERNAL int dc__autotune_pick(dc_kernel_t* kernel, dc_launch_t* launch);
DC_INTERNAL void dc__autotune_record(dc_kernel_t* kernel,
                                     const dc_launch_t* launch, int slot,
                                     uint64_t ns);
DC_INTERNAL void dc__autotune_free(dc_kernel_t* kernel);

// Frees the built-in program of |device|, if any (builtins.c).
DC_INTERNAL void dc__builtins_release(dc_device_t* device);

#endif  // DC_PROGRAM_INTERNAL_H_

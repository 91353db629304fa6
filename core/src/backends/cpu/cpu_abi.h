// cpu_abi.h: what generated CPU kernels and the engine agree on.
//
// This file is compiled into the engine and also placed, as text, at the
// top of every generated kernel module, so both sides see one definition.
// It must stay plain C that needs no headers beyond the prelude's.
// SPDX-License-Identifier: MIT
#ifndef DC_CPU_ABI_H_
#define DC_CPU_ABI_H_

#include <stddef.h>

// Bump when anything here or in the code generator changes the binary
// interface; it is part of every compile cache key.
#define DC_CPU_ABI_VERSION 4

// The dispatch, as every work-item of it sees it. Unused dimensions have
// size 1 and offset 0.
typedef struct dc__launch_t {
  unsigned work_dim;
  size_t global_size[3];
  size_t global_offset[3];
  size_t local_size[3];
  size_t num_groups[3];
  // dc_grid_sync(): the group's thread calls grid_sync(grid_sync_ctx) once
  // every work-item of its group has reached it, and returns when every
  // group has (a barrier of the whole grid, with full memory fences). Set
  // by the engine for a kernel that uses it; NULL otherwise.
  void (*grid_sync)(void* ctx);
  void* grid_sync_ctx;
  // Checked kernels call poll(launch) now and then from their loops: a
  // nonzero answer (DC_KFAULT_STOPPED, DC_KFAULT_WATCHDOG) ends the
  // dispatch there. NULL: never stop.
  unsigned (*poll)(const struct dc__launch_t* launch);
  void* poll_ctx;
} dc__launch_t;

struct dc__fault_t;

// The work-item being run: its group and its place in the group, and, for
// code that runs outside the dispatch's entry function (helpers, fibers),
// the group's local memory and the bounds-checking state.
typedef struct dc__wi_t {
  const dc__launch_t* launch;
  size_t group[3];
  size_t local[3];
  char* localmem;
  const size_t* lengths;
  struct dc__fault_t* fault;
  unsigned polls;  // loop iterations left before the next launch->poll
  void** escape;   // a checked kernel's way out (__builtin_longjmp)
} dc__wi_t;

// Why a checked dispatch stopped or what it did wrong first.
enum {
  DC_KFAULT_INDEX = 0,  // an array index: |index| of |length| elements
  DC_KFAULT_POINTER,    // an access of |size| bytes at byte |index| of the
                       // |length|-byte allocation the pointer came from
  DC_KFAULT_STOPPED,    // launch->poll asked to stop (an interrupt)
  DC_KFAULT_WATCHDOG,   // launch->poll: the kernel ran past its time limit
};
// The origin of an allocation other than a kernel argument.
#define DC_ORIGIN_OBJECT (~0u)
typedef struct dc__fault_t {
  int set;
  unsigned kind;     // DC_KFAULT_*
  unsigned arg;      // kernel argument index, or DC_ORIGIN_OBJECT
  unsigned line;     // source line of the access
  long long index;
  size_t length;
  size_t size;
} dc__fault_t;

// The entry point of kernel K is dc_k_K_run, with this type.
typedef void (*dc__kernel_run_fn)(const dc__launch_t* launch,
                                  void* const* args, const size_t* lengths,
                                  size_t group_begin, size_t group_end,
                                  char* local_mem, char* scratch,
                                  dc__fault_t* fault);
typedef size_t (*dc__kernel_size_fn)(size_t work_group_size);

#define DC_ALIGN64(n) (((n) + 63) & ~(size_t)63)

#endif  // DC_CPU_ABI_H_

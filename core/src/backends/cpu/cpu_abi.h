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
#define DC_CPU_ABI_VERSION 3

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
} dc__wi_t;

// The first out-of-range access a bounds-checked dispatch saw.
typedef struct dc__fault_t {
  int set;
  unsigned arg;      // kernel argument index
  unsigned line;     // source line of the access
  long long index;   // element index used
  size_t length;     // elements the buffer has
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

// cuda_kernel.h: what the CUDA device keeps for built programs, shared by
// building (cuda_program.c) and launching (cuda_dispatch.c).
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_KERNEL_H_
#define DC_CUDA_KERNEL_H_

#include "cuda_internal.h"

// A loaded module, shared by every program built from one cache key; it
// stays loaded for the device's lifetime (the in-memory compile cache),
// as the CPU device keeps its shared objects.
typedef struct dc__cuda_module_t {
  uint8_t key[32];
  CUmodule module;
  unsigned refs;      // programs using it; guarded by the device lock
  CUdeviceptr grid;   // its dc__grid (grid synchronisation), or 0
  CUdeviceptr fault;  // its dc__fault (bounds checking), or 0
  size_t kernel_count;
  uint8_t* barriers;  // per kernel in source order: reaches a barrier
  struct dc__cuda_module_t* next;
} dc__cuda_module_t;

// A kernel's launch state (dc_kernel_t.impl).
typedef struct dc__cuda_kernel_t {
  CUfunction function;
  dc__cuda_module_t* module;
  int max_threads;       // per group, for this kernel's registers
  size_t static_shared;  // bytes of its __shared__ (__local) variables
  int preferred_block;   // the occupancy API's block size without
  int min_grid;          // dynamic shared memory, and its grid for that
  int dynamic_limit;     // dynamic shared bytes opted in to so far
                         // (guarded by the device lock)
  bool bounds_check;     // takes the lengths argument (cuda_codegen.h)
} dc__cuda_kernel_t;

// The launch record every kernel receives first (dc__launch_t in
// cuda_prelude.h, same layout).
typedef struct dc__cuda_launch_record_t {
  uint32_t dims;
  uint64_t offset[3];
} dc__cuda_launch_record_t;

// Mirrors of the prelude's dc__grid_t and dc__fault_t.
typedef struct dc__cuda_grid_state_t {
  uint32_t arrived, generation, exited, broken;
} dc__cuda_grid_state_t;
typedef struct dc__cuda_fault_state_t {
  int32_t set;
  uint32_t arg, line, pad;
  int64_t index;
  uint64_t length;
} dc__cuda_fault_state_t;

#endif  // DC_CUDA_KERNEL_H_

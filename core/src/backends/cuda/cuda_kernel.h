// cuda_kernel.h: what the CUDA device keeps for built programs, shared by
// building (cuda_program.c) and launching (cuda_dispatch.c).
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_KERNEL_H_
#define DC_CUDA_KERNEL_H_

#include <stdatomic.h>

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
  CUdeviceptr stop;   // its dc__stop (checked mode), or 0
  size_t kernel_count;
  uint8_t* barriers;  // per kernel in source order: reaches a barrier
  struct dc__cuda_module_t* next;
} dc__cuda_module_t;

// A kernel's launch state (its dc_kernel_backend_data), with what
// launches read of the kernel itself.
typedef struct dc__cuda_kernel_t {
  CUfunction function;
  // Its coarsened entry (dc_k4_K: DC_CUDA_ITEMS work-items per thread), or
  // NULL where the kernel has none, the build asked for none, or it would
  // fit fewer threads on an SM than the plain entry.
  CUfunction coarse;
  const char* name;      // borrowed from the kernel
  size_t arg_count;
  uint8_t arg_kinds[DC_KERNEL_MAX_ARGS];  // dc_arg_kind_t of each argument
  bool uses_grid_sync;   // its launches are cooperative
  dc__cuda_module_t* module;
  int max_threads;       // per group, for this kernel's registers
  size_t static_shared;  // bytes of its __shared__ (__local) variables
  int preferred_block;   // the occupancy API's block size without
  int min_grid;          // dynamic shared memory, and its grid for that
  atomic_int dynamic_limit;  // dynamic shared bytes opted in to so far
                             // (raised under the device lock)
  bool checked;     // takes the lengths argument (dc/backend.h,
                    // DC_KERNEL_DIALECT_CUDA_C)
} dc__cuda_kernel_t;

// The launch record every kernel receives first (dc/backend.h,
// DC_KERNEL_DIALECT_CUDA_C).
typedef struct dc__cuda_launch_record_t {
  uint32_t dims;
  uint64_t offset[3];
  uint64_t watchdog_ns;  // the kernel time limit (checked kernels)
  uint64_t group_base[3];  // the slice's first group (checked kernels)
  uint64_t groups[3];      // the dispatch's groups
} dc__cuda_launch_record_t;

// The program's globals dc__grid and dc__fault (dc/backend.h,
// DC_KERNEL_DIALECT_CUDA_C).
typedef struct dc__cuda_grid_state_t {
  uint32_t arrived, generation, exited, broken;
} dc__cuda_grid_state_t;
typedef struct dc__cuda_fault_state_t {
  int32_t set;
  uint32_t kind, arg, line;
  int64_t index;
  uint64_t length, size;
} dc__cuda_fault_state_t;

// The work-items a thread of a coarsened entry runs (dc/backend.h).
#define DC_CUDA_ITEMS 4

// A launch's parameters as cuLaunchKernel takes them (dc/backend.h): the
// function (the kernel's plain or coarsened entry) and its grid of
// blocks; |params| points at the record, the lengths and the argument
// values.
typedef struct dc__cuda_params_t {
  CUfunction function;
  unsigned grid[3];
  dc__cuda_launch_record_t record;
  uint64_t lengths[DC_KERNEL_MAX_ARGS];
  uint64_t local_offsets[DC_KERNEL_MAX_ARGS];
  void* params[DC_KERNEL_MAX_ARGS + 2];
} dc__cuda_params_t;

// Checks |launch| of the kernel |ck| against what CUDA allows, fills |p|
// from |args| and |lengths| (as the vtable's dispatch receives them),
// choosing the coarsened entry where it may run, and
// |out_dynamic| with the dynamic shared memory it needs, opting the
// kernel in to it (cuda_dispatch.c). Call with the lock held and the
// context current.
DC_INTERNAL dc_status_t dc__cuda_prepare_launch(
    dc__cuda_device_t* cuda, dc__cuda_kernel_t* ck, const dc_launch_t* launch,
    void* const* args, const size_t* lengths, dc__cuda_params_t* p,
    size_t* out_dynamic);

// The block size dispatches of |function| get when they give none: the
// smallest of 256, 512 and what the occupancy API suggests that reaches
// the best occupancy with |dynamic| bytes of dynamic shared memory, and
// the grid that fills the GPU with such blocks (cuda_dispatch.c). Call
// with the context current.
DC_INTERNAL dc_status_t dc__cuda_best_block(dc__cuda_device_t* cuda,
                                            CUfunction function,
                                            size_t dynamic, int* out_block,
                                            int* out_min_grid);

// Blocks of |block| threads of |function| with |dynamic| bytes of dynamic
// shared memory each that fit on an SM at once (0 when the call fails).
// Call with the context current.
DC_INTERNAL int dc__cuda_resident_blocks(dc__cuda_device_t* cuda,
                                         CUfunction function, int block,
                                         size_t dynamic);

#endif  // DC_CUDA_KERNEL_H_

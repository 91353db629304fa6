// opencl_kernel.h: what the OpenCL device keeps for built programs,
// shared by building (opencl_program.c) and launching
// (opencl_dispatch.c).
// SPDX-License-Identifier: MIT
#ifndef DC_OPENCL_KERNEL_H_
#define DC_OPENCL_KERNEL_H_

#include "opencl_internal.h"

// A built cl_program, shared by every program built from one cache key;
// it stays built for the device's lifetime (the in-memory compile cache),
// as CUDA keeps its modules.
typedef struct dc__opencl_module_t {
  uint8_t key[32];
  cl_program program;
  unsigned refs;           // programs using it; guarded by the device lock
  size_t state_size;       // checked mode: the fault record and scratch
  struct dc__opencl_module_t* next;
} dc__opencl_module_t;

// A checked dispatch's device state: the stop word the host writes while
// the kernel runs (opencl_dispatch.c), and the fault record followed by
// the global scratch. Kept for reuse on the device's free list.
typedef struct dc__opencl_checked_t {
  cl_mem control;  // the stop word
  // |control|'s mapping, for the state's life, on a device that shares
  // the host's memory; NULL on the others.
  volatile uint32_t* stop_word;
  cl_mem state;
  size_t state_size;
  struct dc__opencl_checked_t* next;
} dc__opencl_checked_t;

// The cl_kernel's arguments that a dispatch may leave as they are: the
// first DC_OPENCL_CACHED_ARGS argument indices, each with the value last
// set (at most DC_OPENCL_CACHED_ARG_BYTES bytes: a buffer's cl_mem and
// byte offset, a __local offset, a small scalar) or the size of the
// __local block last set. A dispatch that would set the same bytes again
// skips clSetKernelArg (opencl_dispatch.c).
#define DC_OPENCL_CACHED_ARGS 32
#define DC_OPENCL_CACHED_ARG_BYTES 16
typedef struct dc__opencl_arg_cache_t {
  size_t size;  // 0: unknown, set it
  bool local;   // a __local allocation of |size| bytes, no value
  unsigned char bytes[DC_OPENCL_CACHED_ARG_BYTES];
} dc__opencl_arg_cache_t;

// A kernel's launch state (dc_kernel_t.impl). clSetKernelArg changes the
// cl_kernel itself, so setting the arguments and enqueueing happen under
// |args_lock|, which also guards |args| (zeroed at creation: all unknown).
typedef struct dc__opencl_kernel_t {
  cl_kernel kernel;
  pthread_mutex_t args_lock;
  dc__opencl_arg_cache_t args[DC_OPENCL_CACHED_ARGS];
  dc__opencl_module_t* module;
  size_t arg_count;     // the kernel's parameters (dc_kernel_info)
  size_t max_group;     // CL_KERNEL_WORK_GROUP_SIZE
  size_t static_local;  // CL_KERNEL_LOCAL_MEM_SIZE before any argument
  size_t group_multiple;  // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
  bool local_block;     // takes dc_lmem (it has __local pointers)
  bool checked;         // takes the checked-mode arguments
} dc__opencl_kernel_t;

#endif  // DC_OPENCL_KERNEL_H_

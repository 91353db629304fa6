// bench_opencl.h: pocl, reached through the OpenCL ICD loader, as the
// baseline of bench_kernels and bench_streams: finding its CPU device, a
// context and in-order queues on it, and programs, kernels and buffers
// that abort on an error.
//
// Declared only where CMake found OpenCL (DC_BENCH_OPENCL); a program
// includes this header either way and keeps its pocl code under the same
// #ifdef.
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_OPENCL_H_
#define DC_BENCH_OPENCL_H_

#ifdef DC_BENCH_OPENCL
#include <stdbool.h>
#include <stddef.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define BENCH_OCL_MAX_QUEUES 2

// pocl's CPU device, a context on it and in-order queues.
typedef struct bench_ocl_t {
  cl_platform_id platform;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queues[BENCH_OCL_MAX_QUEUES];  // NULL past the count
  cl_uint units;  // compute units
  char platform_version[256];
  char device_name[256];
} bench_ocl_t;

// Aborts with the file, line and expression when |expr| (a cl_int) is not
// CL_SUCCESS.
#define OCL_CHECK(expr) bench_ocl_check_((expr), #expr, __FILE__, __LINE__)
void bench_ocl_check_(cl_int err, const char* expr, const char* file,
                      int line);

// Finds pocl's platform and its CPU device, and makes a context and
// |queues| (at most BENCH_OCL_MAX_QUEUES) in-order queues on it. Returns
// false, with a note under |note_name|, when the ICD loader has no pocl.
bool bench_ocl_open(bench_ocl_t* o, int queues, const char* note_name);

// The same for the device called |model| (CL_DEVICE_NAME) on any
// platform: the driver behind an engine's opencl:0 that is not pocl.
bool bench_ocl_open_model(bench_ocl_t* o, int queues, const char* model,
                          const char* note_name);

// Releases what bench_ocl_open() made.
void bench_ocl_close(bench_ocl_t* o);

// A new context on |device| alone, and an in-order queue.
cl_context bench_ocl_context(cl_device_id device);
cl_command_queue bench_ocl_queue(cl_context ctx, cl_device_id device);

// Builds |source| for |device|; prints the build log and aborts on a
// failure.
cl_program bench_ocl_build(cl_context ctx, cl_device_id device,
                           const char* source);

cl_kernel bench_ocl_kernel(cl_program p, const char* name);

// A read-write buffer of |bytes|, a copy of |init| unless it is NULL.
cl_mem bench_ocl_buffer(cl_context ctx, size_t bytes, const void* init);
#endif  // DC_BENCH_OPENCL

#endif  // DC_BENCH_OPENCL_H_

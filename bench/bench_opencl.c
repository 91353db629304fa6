// bench_opencl.c: the pocl helpers of bench_opencl.h. CMake builds this
// file only where it found OpenCL, with DC_BENCH_OPENCL defined.
// SPDX-License-Identifier: MIT
#include "bench_opencl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

void bench_ocl_check_(cl_int err, const char* expr, const char* file,
                      int line) {
  if (err == CL_SUCCESS) return;
  // The file's name alone: CMake passes sources by their full path.
  const char* base = strrchr(file, '/');
  fprintf(stderr, "%s:%d: %s failed: OpenCL error %d\n",
          base != NULL ? base + 1 : file, line, expr, (int)err);
  abort();
}

static bool is_pocl(cl_platform_id platform) {
  char name[256] = "";
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name), name, NULL);
  return strstr(name, "Portable Computing Language") != NULL ||
         strstr(name, "pocl") != NULL || strstr(name, "PoCL") != NULL;
}

// Whether |device| is the one called |model| (NULL: pocl's CPU device).
static bool is_wanted(cl_platform_id platform, cl_device_id device,
                      const char* model) {
  if (model == NULL) return is_pocl(platform);
  char name[256] = "";
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name), name, NULL);
  return strcmp(name, model) == 0;
}

// Finds the device |model| names (NULL: pocl's CPU device) on any
// platform and opens it as bench_ocl_open() says.
static bool open_device(bench_ocl_t* o, int queues, const char* model,
                        const char* note_name) {
  memset(o, 0, sizeof(*o));
  cl_platform_id platforms[16];
  cl_uint count = 0;
  if (clGetPlatformIDs(16, platforms, &count) != CL_SUCCESS || count == 0) {
    bench_note(note_name, "no OpenCL platform found (is pocl-opencl-icd "
               "installed?): pocl rows skipped");
    return false;
  }
  cl_device_type type = model == NULL ? CL_DEVICE_TYPE_CPU
                                      : CL_DEVICE_TYPE_ALL;
  for (cl_uint i = 0; i < count && i < 16 && o->platform == NULL; ++i) {
    cl_device_id devices[16];
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[i], type, 16, devices, &n) != CL_SUCCESS) {
      continue;
    }
    for (cl_uint d = 0; d < n && d < 16 && o->platform == NULL; ++d) {
      if (is_wanted(platforms[i], devices[d], model)) {
        o->platform = platforms[i];
        o->device = devices[d];
      }
    }
  }
  if (o->platform == NULL) {
    bench_note(note_name, "the OpenCL loader found no %s: its rows skipped",
               model != NULL ? model : "pocl CPU device");
    return false;
  }
  clGetPlatformInfo(o->platform, CL_PLATFORM_VERSION,
                    sizeof(o->platform_version), o->platform_version, NULL);
  clGetDeviceInfo(o->device, CL_DEVICE_NAME, sizeof(o->device_name),
                  o->device_name, NULL);
  clGetDeviceInfo(o->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(o->units),
                  &o->units, NULL);
  o->ctx = bench_ocl_context(o->device);
  for (int q = 0; q < queues && q < BENCH_OCL_MAX_QUEUES; ++q) {
    o->queues[q] = bench_ocl_queue(o->ctx, o->device);
  }
  return true;
}

bool bench_ocl_open(bench_ocl_t* o, int queues, const char* note_name) {
  return open_device(o, queues, NULL, note_name);
}

bool bench_ocl_open_model(bench_ocl_t* o, int queues, const char* model,
                          const char* note_name) {
  return open_device(o, queues, model, note_name);
}

void bench_ocl_close(bench_ocl_t* o) {
  for (int q = 0; q < BENCH_OCL_MAX_QUEUES; ++q) {
    if (o->queues[q] != NULL) clReleaseCommandQueue(o->queues[q]);
  }
  if (o->ctx != NULL) clReleaseContext(o->ctx);
  memset(o, 0, sizeof(*o));
}

cl_context bench_ocl_context(cl_device_id device) {
  cl_int err = CL_SUCCESS;
  cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  OCL_CHECK(err);
  return ctx;
}

cl_command_queue bench_ocl_queue(cl_context ctx, cl_device_id device) {
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &err);
  OCL_CHECK(err);
  return q;
}

cl_program bench_ocl_build(cl_context ctx, cl_device_id device,
                           const char* source) {
  cl_int err = CL_SUCCESS;
  size_t length = strlen(source);
  cl_program p = clCreateProgramWithSource(ctx, 1, &source, &length, &err);
  OCL_CHECK(err);
  err = clBuildProgram(p, 1, &device, "", NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[8192] = "";
    clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof(log), log,
                          NULL);
    fprintf(stderr, "%s: clBuildProgram failed (%d):\n%s\n",
            program_invocation_short_name, (int)err, log);
    abort();
  }
  return p;
}

cl_kernel bench_ocl_kernel(cl_program p, const char* name) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(p, name, &err);
  OCL_CHECK(err);
  return k;
}

cl_mem bench_ocl_buffer(cl_context ctx, size_t bytes, const void* init) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(
      ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
      (void*)init, &err);
  OCL_CHECK(err);
  return m;
}

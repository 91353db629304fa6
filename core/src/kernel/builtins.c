// builtins.c: the library's own kernels and the operations built on them.
// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "buffer_internal.h"
#include "dc/builtins.h"
#include "program_internal.h"

// The source of the built-in kernels (generated from builtin_kernels.cl).
extern const char dc__builtin_kernels_text[];

// Builds of the built-in program are rare; one lock for all devices.
static pthread_mutex_t builtins_lock = PTHREAD_MUTEX_INITIALIZER;

static const char* const kBuiltinNames = "add, mul, relu, sigmoid, matmul, sum";

// Builds |device|'s built-in program on first use.
static dc_status_t builtin_program(dc_device_t* device,
                                   dc_program_t** out_program) {
  pthread_mutex_lock(&builtins_lock);
  dc_status_t st = DC_OK;
  if (device->core->builtins == NULL) {
    // Built once per device and cached on disk, so the longer -O3
    // compile is paid rarely.
    dc_program_params_t params = {.source = dc__builtin_kernels_text,
                                  .name = "builtin_kernels.cl",
                                  .options = "-dc-O3"};
    dc_program_t* p = NULL;
    st = dc_program_create(device, &params, &p);
    if (st == DC_OK) {
      dc__program_make_internal(p);
      device->core->builtins = p;
    }
  }
  *out_program = device->core->builtins;
  pthread_mutex_unlock(&builtins_lock);
  return st;
}

void dc__builtins_release(dc_device_t* device) {
  dc_program_release(device->core->builtins);
  device->core->builtins = NULL;
}

dc_status_t dc_builtin_kernel(dc_device_t* device, const char* name,
                              dc_kernel_t** out_kernel) {
  static const char* fn = "dc_builtin_kernel";
  DC_REQUIRE_ARG(out_kernel, fn);
  *out_kernel = NULL;
  DC_REQUIRE_ARG(device, fn);
  DC_REQUIRE_ARG(name, fn);
  dc_program_t* p = NULL;
  DC_RETURN_IF_ERROR(builtin_program(device, &p));
  if (dc_program_find_kernel(p, name, out_kernel) != DC_OK) {
    return DC_FAIL(DC_ERR_NOT_FOUND, "%s: no built-in kernel '%s' (built-in "
                   "kernels: %s)", fn, name, kBuiltinNames);
  }
  dc_kernel_retain(*out_kernel);
  return DC_OK;
}

//===-- OpenBLAS --------------------------------------------------------===//

// cblas_sgemm's signature, with its enums as ints (CblasRowMajor = 101,
// CblasNoTrans = 111), so that no BLAS header is needed to build.
typedef void (*sgemm_fn_t)(int order, int trans_a, int trans_b, int m, int n,
                           int k, float alpha, const float* a, int lda,
                           const float* b, int ldb, float beta, float* c,
                           int ldc);

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static sgemm_fn_t blas_sgemm;

// Loads OpenBLAS if the machine has it; leaves the pointer NULL otherwise.
static void load_blas(void) {
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib != NULL) *(void**)&blas_sgemm = dlsym(lib, "cblas_sgemm");
}

static sgemm_fn_t cpu_sgemm(dc_device_t* device) {
  if (device->info.kind != DC_DEVICE_KIND_CPU) return NULL;
  pthread_once(&blas_once, load_blas);
  return blas_sgemm;
}

const char* dc_builtin_matmul_backend(dc_device_t* device) {
  if (device == NULL) return "";
  const dc_device_kernel_ops_t* ops = device->vtable->kernels;
  const char* library = ops != NULL && ops->matmul_library != NULL
                            ? ops->matmul_library(device)
                            : NULL;
  if (library != NULL) return library;
  return cpu_sgemm(device) != NULL ? "openblas" : "kernel";
}

//===-- Operations ------------------------------------------------------===//

static dc_status_t check_matrix(const char* fn, const char* name,
                                const dc_buffer_t* b, dc_device_t* device,
                                size_t rows, size_t cols) {
  if (b == NULL || dc_buffer_device(b) == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: '%s' is NULL or a released buffer",
                   fn, name);
  }
  if (b->dtype != DC_DTYPE_F32) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: '%s' holds %s, not f32", fn,
                   name, dc_dtype_name(b->dtype));
  }
  if (b->device != device) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: '%s' is on %s, not on %s",
                   fn, name, b->device->info.name, device->info.name);
  }
  if (rows != 0 && cols > SIZE_MAX / rows) cols = SIZE_MAX;
  if (b->length < rows * cols || rows > INT32_MAX || cols > INT32_MAX) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: '%s' has %zu elements; a %zu x %zu matrix needs %zu",
                   fn, name, b->length, rows, cols, rows * cols);
  }
  return DC_OK;
}

// The buffer's memory handle with its offset: host memory on the CPU, a
// device address elsewhere.
static float* memory_f32(dc_buffer_t* b) {
  return (float*)((char*)b->memory + b->byte_offset);
}

dc_status_t dc_builtin_matmul(dc_buffer_t* a, dc_buffer_t* b, dc_buffer_t* c,
                              size_t m, size_t n, size_t k) {
  static const char* fn = "dc_builtin_matmul";
  if (a == NULL || dc_buffer_device(a) == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'a' is NULL or a released buffer",
                   fn);
  }
  if (m == 0 || n == 0 || k == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: sizes must be positive (m %zu, n %zu, k %zu)", fn, m,
                   n, k);
  }
  dc_device_t* device = a->device;
  DC_RETURN_IF_ERROR(check_matrix(fn, "a", a, device, m, k));
  DC_RETURN_IF_ERROR(check_matrix(fn, "b", b, device, k, n));
  DC_RETURN_IF_ERROR(check_matrix(fn, "c", c, device, m, n));
  const dc_device_kernel_ops_t* ops = device->vtable->kernels;
  if (ops != NULL && ops->matmul != NULL) {  // the device's own library
    dc_status_t st = ops->matmul(
        device, memory_f32(a), memory_f32(b), memory_f32(c), m, n, k);
    if (st != DC_ERR_UNSUPPORTED) return st;
  }
  sgemm_fn_t sgemm = cpu_sgemm(device);
  if (sgemm != NULL) {
    sgemm(101, 111, 111, (int)m, (int)n, (int)k, 1.0f, memory_f32(a),
          (int)k, memory_f32(b), (int)n, 0.0f, memory_f32(c), (int)n);
    return DC_OK;
  }
  dc_kernel_t* kernel = NULL;
  DC_RETURN_IF_ERROR(dc_builtin_kernel(device, "matmul", &kernel));
  dc_arg_t args[6] = {dc_arg_buffer(a), dc_arg_buffer(b), dc_arg_buffer(c),
                      dc_arg_u32((uint32_t)m), dc_arg_u32((uint32_t)n),
                      dc_arg_u32((uint32_t)k)};
  // Each work-item computes 4 rows of a 16x16 tile (builtin_kernels.cl).
  dc_dispatch_t grid = {.dims = 2,
                        .global = {DC_ALIGN_UP(n, 16), DC_ALIGN_UP(m, 16) / 4},
                        .local = {16, 4}};
  dc_status_t st = dc_kernel_dispatch(kernel, &grid, args, 6);
  dc_kernel_release(kernel);
  return st;
}

dc_status_t dc_builtin_sum(dc_buffer_t* in, size_t count, float* out_sum) {
  static const char* fn = "dc_builtin_sum";
  DC_REQUIRE_ARG(out_sum, fn);
  if (count == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: count is 0", fn);
  }
  if (in == NULL || dc_buffer_device(in) == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'in' is NULL or a released buffer",
                   fn);
  }
  DC_RETURN_IF_ERROR(check_matrix(fn, "in", in, in->device, 1, count));
  if (count > UINT32_MAX) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: count %zu exceeds 2^32 - 1",
                   fn, count);
  }
  // One pass of 256-item groups leaves one partial sum per group; the
  // partials are few enough to add on the host.
  const size_t group = 256;
  size_t groups = (count + group - 1) / group;
  dc_buffer_t* partial = NULL;
  dc_buffer_params_t params = {.dtype = DC_DTYPE_F32, .length = groups,
                               .label = "dc_builtin_sum partials"};
  DC_RETURN_IF_ERROR(dc_buffer_create(in->device, &params, &partial));
  dc_kernel_t* kernel = NULL;
  dc_status_t st = dc_builtin_kernel(in->device, "sum", &kernel);
  if (st == DC_OK) {
    dc_arg_t args[4] = {dc_arg_buffer(in), dc_arg_buffer(partial),
                        dc_arg_u32((uint32_t)count),
                        dc_arg_local(group * sizeof(float))};
    dc_dispatch_t grid = {.dims = 1, .global = {groups * group},
                          .local = {group}};
    st = dc_kernel_dispatch(kernel, &grid, args, 4);
  }
  float sum = 0.0f;
  for (size_t g = 0; g < groups && st == DC_OK; ++g) {
    float value = 0.0f;
    st = dc_buffer_read(partial, g, &value, 1);
    sum += value;
  }
  dc_kernel_release(kernel);
  dc_buffer_release(partial);
  if (st == DC_OK) *out_sum = sum;
  return st;
}

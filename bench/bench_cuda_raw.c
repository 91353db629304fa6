// bench_cuda_raw.c: loading and setting up the raw CUDA side of bench_cuda
// (bench_cuda_raw.h).
// SPDX-License-Identifier: MIT
#include "bench_cuda_raw.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The empty kernel, in PTX, which the driver JIT-compiles for whatever GPU
// it finds: first for sm_75 (the oldest target CUDA 13 still compiles
// for; every GPU since Turing runs it), else for sm_52 (Maxwell and
// later, for older GPUs on older drivers). PTX ISA 7.0 loads on every
// driver of CUDA 11 and later. Its one parameter has the size and
// alignment of the engine's launch record, which every dc kernel takes.
static const char kEmptyPtxFormat[] =
    ".version 7.0\n"
    ".target %s\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry empty(.param .align 8 .b8 record[88])\n"
    "{\n"
    "  ret;\n"
    "}\n";
static const char* const kEmptyTargets[] = {"sm_75", "sm_52"};

_Static_assert(sizeof(bench_cu_record_t) == 88,
               "the PTX entry takes an 88-byte parameter");

// Opens the first of |names| (NULL-terminated) that loads; its name goes
// to |loaded|.
static void* open_first(const char* const* names, char* loaded,
                        size_t size) {
  for (const char* const* n = names; *n != NULL; ++n) {
    void* handle = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) {
      snprintf(loaded, size, "%s", *n);
      return handle;
    }
  }
  return NULL;
}

#define BENCH_CU_RESOLVE_(ret, symbol, field, params)          \
  table->field = (ret(*) params)dlsym(handle, symbol);          \
  if (table->field == NULL) {                                   \
    snprintf(why, size, "%s has no %s", library, symbol);       \
    return false;                                               \
  }

static bool resolve_driver(void* handle, bench_cu_driver_t* table,
                           const char* library, char* why, size_t size) {
  BENCH_CU_DRIVER_FUNCTIONS(BENCH_CU_RESOLVE_)
  return true;
}

static bool resolve_cublas(void* handle, bench_cu_cublas_t* table,
                           const char* library, char* why, size_t size) {
  BENCH_CU_CUBLAS_FUNCTIONS(BENCH_CU_RESOLVE_)
  return true;
}
#undef BENCH_CU_RESOLVE_

// Writes "<what>: CUDA_ERROR_X (n)" into |why| unless |r| is success.
static bool cu_ok(const bench_cu_t* cu, CUresult r, const char* what,
                  char* why, size_t size) {
  if (r == BENCH_CUDA_SUCCESS) return true;
  const char* name = "?";
  if (cu->d.get_error_name != NULL) cu->d.get_error_name(r, &name);
  snprintf(why, size, "%s: %s (%d)", what, name, r);
  return false;
}

void bench_cu_check(const bench_cu_t* cu, CUresult result, const char* expr,
                    const char* file, int line) {
  if (result == BENCH_CUDA_SUCCESS) return;
  const char* name = "?";
  const char* text = "?";
  cu->d.get_error_name(result, &name);
  cu->d.get_error_string(result, &text);
  fprintf(stderr, "%s: %s at %s:%d: %s (%d): %s\n",
          program_invocation_short_name, expr, file, line, name, result,
          text);
  abort();
}

// cuBLAS is optional: without it the matrix rows are left out. Its
// handle works on the raw stream.
static void open_cublas(bench_cu_t* cu) {
  static const char* const names[] = {"libcublas.so.13", "libcublas.so.12",
                                      "libcublas.so", NULL};
  char loaded[64] = "", why[256];
  void* handle = open_first(names, loaded, sizeof(loaded));
  if (handle == NULL) {
    snprintf(cu->blas_library, sizeof(cu->blas_library),
             "libcublas cannot be loaded");
    return;
  }
  if (!resolve_cublas(handle, &cu->blas_fn, loaded, why, sizeof(why))) {
    snprintf(cu->blas_library, sizeof(cu->blas_library), "%.63s", why);
    return;
  }
  cublasHandle_t h = NULL;
  cublasStatus_t s = cu->blas_fn.create(&h);
  if (s != 0 || cu->blas_fn.set_stream(h, cu->stream) != 0) {
    snprintf(cu->blas_library, sizeof(cu->blas_library),
             "%s: cublasCreate/SetStream failed (%d)", loaded, s);
    if (h != NULL) cu->blas_fn.destroy(h);
    return;
  }
  cu->blas = h;
  snprintf(cu->blas_library, sizeof(cu->blas_library), "%s", loaded);
}

// The driver library and the entry points; cuInit.
static bool open_driver(bench_cu_t* cu, char* why, size_t size) {
  static const char* const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  char loaded[64] = "";
  void* handle = open_first(names, loaded, sizeof(loaded));
  if (handle == NULL) {
    snprintf(why, size, "libcuda.so.1 cannot be loaded: %s", dlerror());
    return false;
  }
  if (!resolve_driver(handle, &cu->d, loaded, why, size)) return false;
  if (!cu_ok(cu, cu->d.init(0), "cuInit", why, size)) return false;
  return cu_ok(cu, cu->d.driver_get_version(&cu->driver_version),
               "cuDriverGetVersion", why, size);
}

// Loads the empty kernel's module for the first target of kEmptyTargets
// that the driver accepts.
static bool load_empty(bench_cu_t* cu, char* why, size_t size) {
  size_t count = sizeof(kEmptyTargets) / sizeof(kEmptyTargets[0]);
  CUresult r = BENCH_CUDA_SUCCESS;
  for (size_t i = 0; i < count; ++i) {
    char ptx[sizeof(kEmptyPtxFormat) + 16];
    snprintf(ptx, sizeof(ptx), kEmptyPtxFormat, kEmptyTargets[i]);
    r = cu->d.module_load_data(&cu->module, ptx);
    if (r == BENCH_CUDA_SUCCESS) {
      cu->empty_target = kEmptyTargets[i];
      return true;
    }
  }
  return cu_ok(cu, r, "cuModuleLoadData (the empty kernel's PTX)", why,
               size);
}

bool bench_cu_open(bench_cu_t* cu, int ordinal, char* why, size_t size) {
  memset(cu, 0, sizeof(*cu));
  cu->ordinal = ordinal;
  if (!open_driver(cu, why, size)) return false;
  const bench_cu_driver_t* d = &cu->d;
  bool ok =
      cu_ok(cu, d->device_get(&cu->device, ordinal), "cuDeviceGet", why,
            size) &&
      cu_ok(cu, d->primary_ctx_retain(&cu->context, cu->device),
            "cuDevicePrimaryCtxRetain", why, size) &&
      cu_ok(cu, d->ctx_set_current(cu->context), "cuCtxSetCurrent", why,
            size) &&
      cu_ok(cu, d->stream_create(&cu->stream, BENCH_CU_STREAM_NON_BLOCKING),
            "cuStreamCreate", why, size) &&
      load_empty(cu, why, size) &&
      cu_ok(cu, d->module_get_function(&cu->empty, cu->module, "empty"),
            "cuModuleGetFunction", why, size);
  if (!ok) return false;
  cu->empty_params[0] = &cu->record;
  open_cublas(cu);
  return true;
}

void bench_cu_close(bench_cu_t* cu) {
  if (cu->blas != NULL) cu->blas_fn.destroy(cu->blas);
  BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  BENCH_CU(cu, cu->d.module_unload(cu->module));
  BENCH_CU(cu, cu->d.stream_destroy(cu->stream));
  BENCH_CU(cu, cu->d.primary_ctx_release(cu->device));
}

void bench_cu_capture_empty_chain(bench_cu_t* cu, int count,
                                  CUgraph* out_graph, CUgraphExec* out_exec) {
  const bench_cu_driver_t* d = &cu->d;
  BENCH_CU(cu, d->stream_begin_capture(
                   cu->stream, BENCH_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  for (int i = 0; i < count; ++i) {
    BENCH_CU(cu, bench_cu_launch_empty(cu, cu->stream));
  }
  BENCH_CU(cu, d->stream_end_capture(cu->stream, out_graph));
  size_t nodes = 0;
  BENCH_CU(cu, d->graph_get_nodes(*out_graph, NULL, &nodes));
  if (nodes != (size_t)count) {
    fprintf(stderr, "%s: the captured CUDA graph has %zu nodes, expected "
            "%d\n", program_invocation_short_name, nodes, count);
    abort();
  }
  BENCH_CU(cu, d->graph_instantiate(out_exec, *out_graph, 0));
}

CUmemoryPool bench_cu_pool_create(bench_cu_t* cu, char* why, size_t size) {
  int pools = 0;
  BENCH_CU(cu, cu->d.device_get_attribute(
                   &pools, BENCH_CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                   cu->device));
  if (!pools) {
    snprintf(why, size, "the GPU has no stream-ordered memory pools");
    return NULL;
  }
  bench_cu_mem_pool_props_t props = {
      .alloc_type = BENCH_CU_MEM_ALLOCATION_TYPE_PINNED,
      .location = {.type = BENCH_CU_MEM_LOCATION_TYPE_DEVICE,
                   .id = cu->ordinal}};
  CUmemoryPool pool = NULL;
  if (!cu_ok(cu, cu->d.mem_pool_create(&pool, &props), "cuMemPoolCreate",
             why, size)) {
    return NULL;
  }
  uint64_t keep_all = UINT64_MAX;
  BENCH_CU(cu, cu->d.mem_pool_set_attribute(
                   pool, BENCH_CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep_all));
  return pool;
}

cublasStatus_t bench_cu_sgemm(bench_cu_t* cu, CUdeviceptr a, CUdeviceptr b,
                              CUdeviceptr c, int m, int n, int k) {
  const float alpha = 1.0f, beta = 0.0f;
  return cu->blas_fn.sgemm(cu->blas, BENCH_CUBLAS_OP_N, BENCH_CUBLAS_OP_N, n,
                           m, k, &alpha, (const float*)(uintptr_t)b, n,
                           (const float*)(uintptr_t)a, k, &beta,
                           (float*)(uintptr_t)c, n);
}

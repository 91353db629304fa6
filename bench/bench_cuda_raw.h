// bench_cuda_raw.h: the raw CUDA side of bench_cuda: the driver API and
// cuBLAS, called directly, as a program that uses CUDA itself would.
//
// Like the engine (core/src/backends/cuda/cuda_api.h, whose style this
// copies), the benchmark needs nothing CUDA at build time: the few types,
// constants and signatures it uses restate the stable C ABI of
// libcuda.so.1 (CUDA 12 and later: the _v2 entry points) and libcublas,
// and bench_cu_open() resolves them with dlopen/dlsym. The engine's
// internal header is not included: the benchmark uses only what a user of
// the public API and of CUDA would have.
//
// The raw side shares the GPU with the engine the way the engine shares
// it with anyone: it retains the device's primary context (the engine
// does the same, cuda_device.c), makes it current on the calling thread,
// and creates one non-blocking stream of its own. The empty kernel is a
// hand-written PTX entry that the driver compiles for the GPU when the
// module is loaded (the engine compiles its kernels to a cubin with
// NVRTC; once loaded, both are machine code for the GPU); it takes one 32-byte parameter, as the engine's
// kernels take their 32-byte launch record, so both launches pass the
// same bytes.
//
// Errors: a failed call on the raw side is a broken benchmark, not a
// result; BENCH_CU() prints the call, the driver's error name and text
// and aborts.
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_CUDA_RAW_H_
#define DC_BENCH_CUDA_RAW_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

//===-- Driver API and cuBLAS types -------------------------------------===//

typedef int CUresult;  // CUDA_SUCCESS = 0
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUgraphNode_st* CUgraphNode;

enum { BENCH_CUDA_SUCCESS = 0 };
enum { BENCH_CU_STREAM_NON_BLOCKING = 0x1 };
// CUstreamCaptureMode: only the capturing thread is restricted.
enum { BENCH_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };
enum { BENCH_CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4 };
enum { BENCH_CU_MEM_ALLOCATION_TYPE_PINNED = 0x1 };
enum { BENCH_CU_MEM_LOCATION_TYPE_DEVICE = 0x1 };
enum {  // CUdevice_attribute
  BENCH_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  BENCH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  BENCH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  BENCH_CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
};

typedef struct bench_cu_mem_location_t {
  int type;  // BENCH_CU_MEM_LOCATION_TYPE_DEVICE
  int id;    // the device ordinal
} bench_cu_mem_location_t;

// CUmemPoolProps: 88 bytes. CUDA 12 carved maxSize and usage out of the
// reserved bytes; zero there means the defaults, so a zeroed tail is
// right for every driver.
typedef struct bench_cu_mem_pool_props_t {
  int alloc_type;    // BENCH_CU_MEM_ALLOCATION_TYPE_PINNED
  int handle_types;  // 0: no export handles
  bench_cu_mem_location_t location;
  void* win32_security_attributes;
  unsigned char reserved[64];
} bench_cu_mem_pool_props_t;

typedef int cublasStatus_t;  // CUBLAS_STATUS_SUCCESS = 0
typedef struct cublasContext* cublasHandle_t;
enum { BENCH_CUBLAS_OP_N = 0 };

// The parameter of the raw empty kernel: the size and alignment of the
// engine's launch record (dc/backend.h, DC_KERNEL_DIALECT_CUDA_C: dims, a
// 3-D global offset, the time limit, a slice's first group and the
// groups).
typedef struct bench_cu_record_t {
  uint32_t dims;
  uint64_t offset[3];
  uint64_t watchdog_ns;
  uint64_t group_base[3];
  uint64_t groups[3];
} bench_cu_record_t;

//===-- The function tables ---------------------------------------------===//

// X(return type, symbol as resolved, field name, parameter list)
#define BENCH_CU_DRIVER_FUNCTIONS(X)                                          \
  X(CUresult, "cuInit", init, (unsigned int flags))                          \
  X(CUresult, "cuDriverGetVersion", driver_get_version, (int* version))      \
  X(CUresult, "cuGetErrorName", get_error_name,                              \
    (CUresult error, const char** name))                                     \
  X(CUresult, "cuGetErrorString", get_error_string,                          \
    (CUresult error, const char** text))                                     \
  X(CUresult, "cuDeviceGet", device_get, (CUdevice * device, int ordinal))   \
  X(CUresult, "cuDeviceGetName", device_get_name,                            \
    (char* name, int length, CUdevice device))                               \
  X(CUresult, "cuDeviceGetAttribute", device_get_attribute,                  \
    (int* value, int attribute, CUdevice device))                            \
  X(CUresult, "cuDevicePrimaryCtxRetain", primary_ctx_retain,                \
    (CUcontext * context, CUdevice device))                                  \
  X(CUresult, "cuDevicePrimaryCtxRelease_v2", primary_ctx_release,           \
    (CUdevice device))                                                       \
  X(CUresult, "cuCtxSetCurrent", ctx_set_current, (CUcontext context))       \
  X(CUresult, "cuStreamCreate", stream_create,                               \
    (CUstream * stream, unsigned int flags))                                 \
  X(CUresult, "cuStreamDestroy_v2", stream_destroy, (CUstream stream))       \
  X(CUresult, "cuStreamSynchronize", stream_synchronize, (CUstream stream))  \
  X(CUresult, "cuModuleLoadData", module_load_data,                          \
    (CUmodule * module, const void* image))                                  \
  X(CUresult, "cuModuleUnload", module_unload, (CUmodule module))            \
  X(CUresult, "cuModuleGetFunction", module_get_function,                    \
    (CUfunction * function, CUmodule module, const char* name))              \
  X(CUresult, "cuLaunchKernel", launch_kernel,                               \
    (CUfunction f, unsigned int grid_x, unsigned int grid_y,                 \
     unsigned int grid_z, unsigned int block_x, unsigned int block_y,        \
     unsigned int block_z, unsigned int shared_bytes, CUstream stream,       \
     void** params, void** extra))                                           \
  X(CUresult, "cuMemAlloc_v2", mem_alloc, (CUdeviceptr * ptr, size_t size))  \
  X(CUresult, "cuMemFree_v2", mem_free, (CUdeviceptr ptr))                   \
  X(CUresult, "cuMemcpyHtoD_v2", memcpy_htod,                                \
    (CUdeviceptr dst, const void* src, size_t size))                         \
  X(CUresult, "cuMemcpyDtoH_v2", memcpy_dtoh,                                \
    (void* dst, CUdeviceptr src, size_t size))                               \
  X(CUresult, "cuMemcpyDtoDAsync_v2", memcpy_dtod_async,                     \
    (CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream))        \
  X(CUresult, "cuMemcpyHtoDAsync_v2", memcpy_htod_async,                     \
    (CUdeviceptr dst, const void* src, size_t size, CUstream stream))        \
  X(CUresult, "cuMemcpyDtoHAsync_v2", memcpy_dtoh_async,                     \
    (void* dst, CUdeviceptr src, size_t size, CUstream stream))              \
  X(CUresult, "cuMemHostAlloc", mem_host_alloc,                              \
    (void** ptr, size_t size, unsigned int flags))                           \
  X(CUresult, "cuMemFreeHost", mem_free_host, (void* ptr))                   \
  X(CUresult, "cuMemPoolCreate", mem_pool_create,                            \
    (CUmemoryPool * pool, const bench_cu_mem_pool_props_t* props))           \
  X(CUresult, "cuMemPoolDestroy", mem_pool_destroy, (CUmemoryPool pool))     \
  X(CUresult, "cuMemPoolSetAttribute", mem_pool_set_attribute,               \
    (CUmemoryPool pool, int attribute, void* value))                         \
  X(CUresult, "cuMemPoolTrimTo", mem_pool_trim_to,                           \
    (CUmemoryPool pool, size_t keep))                                        \
  X(CUresult, "cuMemAllocFromPoolAsync", mem_alloc_from_pool_async,          \
    (CUdeviceptr * ptr, size_t size, CUmemoryPool pool, CUstream stream))    \
  X(CUresult, "cuMemFreeAsync", mem_free_async,                              \
    (CUdeviceptr ptr, CUstream stream))                                      \
  X(CUresult, "cuStreamBeginCapture_v2", stream_begin_capture,               \
    (CUstream stream, int mode))                                             \
  X(CUresult, "cuStreamEndCapture", stream_end_capture,                      \
    (CUstream stream, CUgraph * graph))                                      \
  X(CUresult, "cuGraphGetNodes", graph_get_nodes,                            \
    (CUgraph graph, CUgraphNode * nodes, size_t * count))                    \
  X(CUresult, "cuGraphInstantiateWithFlags", graph_instantiate,              \
    (CUgraphExec * exec, CUgraph graph, unsigned long long flags))           \
  X(CUresult, "cuGraphLaunch", graph_launch,                                 \
    (CUgraphExec exec, CUstream stream))                                     \
  X(CUresult, "cuGraphExecDestroy", graph_exec_destroy, (CUgraphExec exec))  \
  X(CUresult, "cuGraphDestroy", graph_destroy, (CUgraph graph))

#define BENCH_CU_CUBLAS_FUNCTIONS(X)                                          \
  X(cublasStatus_t, "cublasCreate_v2", create, (cublasHandle_t * handle))    \
  X(cublasStatus_t, "cublasDestroy_v2", destroy, (cublasHandle_t handle))    \
  X(cublasStatus_t, "cublasSetStream_v2", set_stream,                        \
    (cublasHandle_t handle, CUstream stream))                                \
  X(cublasStatus_t, "cublasSgemm_v2", sgemm,                                 \
    (cublasHandle_t handle, int transa, int transb, int m, int n, int k,     \
     const float* alpha, const float* a, int lda, const float* b, int ldb,   \
     const float* beta, float* c, int ldc))

#define BENCH_CU_FIELD_(ret, symbol, field, params) ret(*field) params;

typedef struct bench_cu_driver_t {
  BENCH_CU_DRIVER_FUNCTIONS(BENCH_CU_FIELD_)
} bench_cu_driver_t;

typedef struct bench_cu_cublas_t {
  BENCH_CU_CUBLAS_FUNCTIONS(BENCH_CU_FIELD_)
} bench_cu_cublas_t;

//===-- The raw side ----------------------------------------------------===//

typedef struct bench_cu_t {
  bench_cu_driver_t d;
  bench_cu_cublas_t blas_fn;  // valid when |blas| is not NULL
  int driver_version;         // e.g. 12040
  int ordinal;                // N of the engine's cuda:N
  CUdevice device;
  CUcontext context;  // the device's primary context (retained)
  CUstream stream;    // non-blocking, the raw side's own
  CUmodule module;    // the empty kernel's
  CUfunction empty;
  const char* empty_target;  // the PTX target it was loaded for
  bench_cu_record_t record;  // the empty kernel's parameter
  void* empty_params[1];     // -> record
  cublasHandle_t blas;       // on |stream|; NULL without cuBLAS
  char blas_library[64];     // the soname loaded, or why it is missing
} bench_cu_t;

// Loads libcuda.so.1 (and cuBLAS, optional), initialises the driver,
// retains GPU |ordinal|'s primary context and makes it current on the
// calling thread, creates the stream and loads the empty kernel. On
// failure writes why into |why| and returns false (what was made is
// left for the process exit to clean up).
bool bench_cu_open(bench_cu_t* cu, int ordinal, char* why, size_t size);

// Unloads, destroys and releases what bench_cu_open() made.
void bench_cu_close(bench_cu_t* cu);

// Aborts with "<program>: <expr> at <file>:<line>: CUDA_ERROR_X (n): text"
// unless |result| is success.
void bench_cu_check(const bench_cu_t* cu, CUresult result, const char* expr,
                    const char* file, int line);
#define BENCH_CU(cu, call) \
  bench_cu_check((cu), (call), #call, __FILE__, __LINE__)

// Queues one launch of the empty kernel (1 block of 1 thread) on |stream|.
static inline CUresult bench_cu_launch_empty(bench_cu_t* cu,
                                             CUstream stream) {
  return cu->d.launch_kernel(cu->empty, 1, 1, 1, 1, 1, 1, 0, stream,
                             cu->empty_params, NULL);
}

// Captures |count| launches of the empty kernel on the raw stream into a
// CUDA graph and instantiates it; checks that the graph has |count|
// nodes (aborts otherwise).
void bench_cu_capture_empty_chain(bench_cu_t* cu, int count,
                                  CUgraph* out_graph, CUgraphExec* out_exec);

// Creates a stream-ordered pool of its own on the device, with a release
// threshold of UINT64_MAX, so that freed blocks stay cached across
// synchronizations. Returns NULL (and writes why) when the GPU has no
// memory pools.
CUmemoryPool bench_cu_pool_create(bench_cu_t* cu, char* why, size_t size);

// Row-major C (m x n) = A (m x k) * B (k x n) with cublasSgemm on the raw
// stream (the column-major C^T = B^T A^T, as the engine computes it);
// returns cuBLAS's status. Does not synchronize.
cublasStatus_t bench_cu_sgemm(bench_cu_t* cu, CUdeviceptr a, CUdeviceptr b,
                              CUdeviceptr c, int m, int n, int k);

#endif  // DC_BENCH_CUDA_RAW_H_

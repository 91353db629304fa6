// cuda_api.h: the part of the CUDA driver API, NVRTC and cuBLAS that the
// CUDA backend uses, declared here and resolved at run time.
//
// dclua has no build-time CUDA dependency: the types, constants and
// function signatures below restate the stable C ABI of libcuda.so.1
// (driver API, CUDA 12 and later: the _v2 entry points), libnvrtc.so and
// libcublas.so, and dc__cuda_api() fills a table of function pointers with
// dlopen/dlsym the first time a context looks for GPUs. A machine without
// a driver simply has no table (and so no cuda devices), which is not an
// error. NVRTC and cuBLAS are optional on top: without NVRTC a device can
// hold buffers but not build programs; without cuBLAS the built-in matrix
// product runs as a kernel.
//
// Thread safety: the table is filled once (pthread_once) and read-only
// afterwards; the driver functions are thread-safe.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_API_H_
#define DC_CUDA_API_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

//===-- Driver API types and constants ---------------------------------===//

typedef int CUresult;  // CUDA_SUCCESS or a CUDA_ERROR_* value
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUgraphExec_st* CUgraphExec;

// A kernel node of a CUDA graph (CUDA_KERNEL_NODE_PARAMS_v2).
typedef struct CUDA_KERNEL_NODE_PARAMS {
  CUfunction func;
  unsigned int grid_x, grid_y, grid_z;
  unsigned int block_x, block_y, block_z;
  unsigned int shared_bytes;
  void** params;
  void** extra;
  void* kernel;    // CUkernel, unused: |func| is set
  CUcontext context;
} CUDA_KERNEL_NODE_PARAMS;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_SYSTEM_NOT_READY = 802,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_TIMEOUT = 909,
  CUDA_ERROR_UNKNOWN = 999,
};

// CUdevice_attribute values.
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
};

// CUfunction_attribute values.
enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum { CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4 };  // CUmemPool_attribute
enum { CU_STREAM_NON_BLOCKING = 0x1 };
enum { CU_EVENT_DEFAULT = 0x0, CU_EVENT_DISABLE_TIMING = 0x2 };
enum { CU_MEMHOSTALLOC_PORTABLE = 0x1, CU_MEMHOSTALLOC_DEVICEMAP = 0x2 };
enum { CU_MEMHOSTREGISTER_PORTABLE = 0x1 };
enum { CU_MEM_ATTACH_GLOBAL = 0x1 };  // CUmemAttach_flags
enum {  // CUpointer_attribute
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
};
enum { CU_MEMORYTYPE_HOST = 0x1, CU_MEMORYTYPE_DEVICE = 0x2 };

// Who may reach a memory pool's allocations (cuMemPoolSetAccess).
enum { CU_MEM_LOCATION_TYPE_DEVICE = 0x1 };        // CUmemLocationType
enum { CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3 };  // CUmemAccess_flags
typedef struct CUmemLocation {
  int type;  // CU_MEM_LOCATION_TYPE_*
  int id;    // the device ordinal
} CUmemLocation;
typedef struct CUmemAccessDesc {
  CUmemLocation location;
  int flags;  // CU_MEM_ACCESS_FLAGS_*
} CUmemAccessDesc;

//===-- NVRTC and cuBLAS types ------------------------------------------===//

typedef int nvrtcResult;  // NVRTC_SUCCESS = 0
typedef struct _nvrtcProgram* nvrtcProgram;
enum { NVRTC_SUCCESS = 0 };

typedef int cublasStatus_t;  // CUBLAS_STATUS_SUCCESS = 0
typedef struct cublasContext* cublasHandle_t;
enum { CUBLAS_STATUS_SUCCESS = 0 };
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };  // cublasOperation_t

//===-- The function table ----------------------------------------------===//

// X(return type, name as resolved, field name, parameter list)
#define DC_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(CUresult, "cuInit", init, (unsigned int flags))                          \
  X(CUresult, "cuDriverGetVersion", driver_get_version, (int* version))      \
  X(CUresult, "cuDeviceGetCount", device_get_count, (int* count))            \
  X(CUresult, "cuDeviceGet", device_get, (CUdevice * device, int ordinal))   \
  X(CUresult, "cuDeviceGetName", device_get_name,                            \
    (char* name, int length, CUdevice device))                               \
  X(CUresult, "cuDeviceGetAttribute", device_get_attribute,                  \
    (int* value, int attribute, CUdevice device))                            \
  X(CUresult, "cuDeviceTotalMem_v2", device_total_mem,                       \
    (size_t * bytes, CUdevice device))                                       \
  X(CUresult, "cuDevicePrimaryCtxRetain", primary_ctx_retain,                \
    (CUcontext * context, CUdevice device))                                  \
  X(CUresult, "cuDevicePrimaryCtxRelease_v2", primary_ctx_release,           \
    (CUdevice device))                                                       \
  X(CUresult, "cuCtxSetCurrent", ctx_set_current, (CUcontext context))       \
  X(CUresult, "cuCtxSynchronize", ctx_synchronize, (void))                   \
  X(CUresult, "cuStreamCreate", stream_create,                               \
    (CUstream * stream, unsigned int flags))                                 \
  X(CUresult, "cuStreamCreateWithPriority", stream_create_with_priority,     \
    (CUstream * stream, unsigned int flags, int priority))                   \
  X(CUresult, "cuCtxGetStreamPriorityRange", ctx_get_stream_priority_range,  \
    (int* least, int* greatest))                                             \
  X(CUresult, "cuStreamDestroy_v2", stream_destroy, (CUstream stream))       \
  X(CUresult, "cuStreamSynchronize", stream_synchronize, (CUstream stream))  \
  X(CUresult, "cuStreamQuery", stream_query, (CUstream stream))              \
  X(CUresult, "cuStreamWaitEvent", stream_wait_event,                        \
    (CUstream stream, CUevent event, unsigned int flags))                    \
  X(CUresult, "cuEventCreate", event_create,                                 \
    (CUevent * event, unsigned int flags))                                   \
  X(CUresult, "cuEventDestroy_v2", event_destroy, (CUevent event))           \
  X(CUresult, "cuEventRecord", event_record, (CUevent event, CUstream s))    \
  X(CUresult, "cuEventSynchronize", event_synchronize, (CUevent event))      \
  X(CUresult, "cuEventQuery", event_query, (CUevent event))                  \
  X(CUresult, "cuEventElapsedTime_v2", event_elapsed_time,                   \
    (float* ms, CUevent start, CUevent end))                                 \
  X(CUresult, "cuMemGetInfo_v2", mem_get_info, (size_t * free_bytes,         \
                                                size_t * total_bytes))       \
  X(CUresult, "cuMemAlloc_v2", mem_alloc, (CUdeviceptr * ptr, size_t size))  \
  X(CUresult, "cuMemFree_v2", mem_free, (CUdeviceptr ptr))                   \
  X(CUresult, "cuMemAllocManaged", mem_alloc_managed,                        \
    (CUdeviceptr * ptr, size_t size, unsigned int flags))                    \
  X(CUresult, "cuDeviceGetDefaultMemPool", device_get_default_mem_pool,      \
    (CUmemoryPool * pool, CUdevice device))                                  \
  X(CUresult, "cuMemPoolSetAttribute", mem_pool_set_attribute,               \
    (CUmemoryPool pool, int attribute, void* value))                         \
  X(CUresult, "cuMemPoolTrimTo", mem_pool_trim_to,                           \
    (CUmemoryPool pool, size_t keep))                                        \
  X(CUresult, "cuMemAllocFromPoolAsync", mem_alloc_from_pool_async,          \
    (CUdeviceptr * ptr, size_t size, CUmemoryPool pool, CUstream stream))    \
  X(CUresult, "cuMemFreeAsync", mem_free_async,                              \
    (CUdeviceptr ptr, CUstream stream))                                      \
  X(CUresult, "cuMemHostAlloc", mem_host_alloc,                              \
    (void** ptr, size_t size, unsigned int flags))                           \
  X(CUresult, "cuMemFreeHost", mem_free_host, (void* ptr))                   \
  X(CUresult, "cuMemHostRegister_v2", mem_host_register,                     \
    (void* ptr, size_t size, unsigned int flags))                            \
  X(CUresult, "cuMemHostUnregister", mem_host_unregister, (void* ptr))       \
  X(CUresult, "cuMemHostGetDevicePointer_v2", mem_host_get_device_pointer,   \
    (CUdeviceptr * device_ptr, void* host_ptr, unsigned int flags))          \
  X(CUresult, "cuMemcpyHtoDAsync_v2", memcpy_htod_async,                     \
    (CUdeviceptr dst, const void* src, size_t size, CUstream stream))        \
  X(CUresult, "cuMemcpyDtoHAsync_v2", memcpy_dtoh_async,                     \
    (void* dst, CUdeviceptr src, size_t size, CUstream stream))              \
  X(CUresult, "cuMemcpyAsync", memcpy_async,                                 \
    (CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream))        \
  X(CUresult, "cuPointerGetAttribute", pointer_get_attribute,                \
    (void* data, int attribute, CUdeviceptr ptr))                            \
  X(CUresult, "cuMemcpyDtoDAsync_v2", memcpy_dtod_async,                     \
    (CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream))        \
  X(CUresult, "cuMemcpyPeerAsync", memcpy_peer_async,                        \
    (CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, \
     size_t size, CUstream stream))                                          \
  X(CUresult, "cuMemsetD8Async", memset_d8_async,                            \
    (CUdeviceptr dst, unsigned char value, size_t count, CUstream stream))   \
  X(CUresult, "cuMemsetD16Async", memset_d16_async,                          \
    (CUdeviceptr dst, unsigned short value, size_t count, CUstream stream))  \
  X(CUresult, "cuMemsetD32Async", memset_d32_async,                          \
    (CUdeviceptr dst, unsigned int value, size_t count, CUstream stream))    \
  X(CUresult, "cuModuleLoadData", module_load_data,                          \
    (CUmodule * module, const void* image))                                  \
  X(CUresult, "cuModuleUnload", module_unload, (CUmodule module))            \
  X(CUresult, "cuModuleGetFunction", module_get_function,                    \
    (CUfunction * function, CUmodule module, const char* name))              \
  X(CUresult, "cuFuncGetAttribute", func_get_attribute,                      \
    (int* value, int attribute, CUfunction function))                        \
  X(CUresult, "cuFuncSetAttribute", func_set_attribute,                      \
    (CUfunction function, int attribute, int value))                         \
  X(CUresult, "cuLaunchKernel", launch_kernel,                               \
    (CUfunction f, unsigned int grid_x, unsigned int grid_y,                 \
     unsigned int grid_z, unsigned int block_x, unsigned int block_y,        \
     unsigned int block_z, unsigned int shared_bytes, CUstream stream,       \
     void** params, void** extra))                                           \
  X(CUresult, "cuGraphCreate", graph_create,                                 \
    (CUgraph * graph, unsigned int flags))                                   \
  X(CUresult, "cuGraphAddKernelNode_v2", graph_add_kernel_node,              \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* deps,             \
     size_t dep_count, const CUDA_KERNEL_NODE_PARAMS* params))               \
  X(CUresult, "cuGraphInstantiateWithFlags", graph_instantiate,              \
    (CUgraphExec * exec, CUgraph graph, unsigned long long flags))           \
  X(CUresult, "cuGraphLaunch", graph_launch,                                 \
    (CUgraphExec exec, CUstream stream))                                     \
  X(CUresult, "cuGraphExecDestroy", graph_exec_destroy, (CUgraphExec exec))  \
  X(CUresult, "cuGraphDestroy", graph_destroy, (CUgraph graph))              \
  X(CUresult, "cuLaunchCooperativeKernel", launch_cooperative_kernel,        \
    (CUfunction f, unsigned int grid_x, unsigned int grid_y,                 \
     unsigned int grid_z, unsigned int block_x, unsigned int block_y,        \
     unsigned int block_z, unsigned int shared_bytes, CUstream stream,       \
     void** params))                                                         \
  X(CUresult, "cuOccupancyMaxActiveBlocksPerMultiprocessor",                 \
    occupancy_max_active_blocks,                                             \
    (int* blocks, CUfunction f, int block_size, size_t dynamic_shared))      \
  X(CUresult, "cuOccupancyMaxPotentialBlockSize",                            \
    occupancy_max_potential_block_size,                                      \
    (int* min_grid, int* block_size, CUfunction f,                           \
     size_t (*shared_of_block)(int), size_t dynamic_shared, int limit))      \
  X(CUresult, "cuDeviceCanAccessPeer", device_can_access_peer,               \
    (int* can, CUdevice device, CUdevice peer))                              \
  X(CUresult, "cuCtxEnablePeerAccess", ctx_enable_peer_access,               \
    (CUcontext peer, unsigned int flags))                                    \
  X(CUresult, "cuMemPoolSetAccess", mem_pool_set_access,                     \
    (CUmemoryPool pool, const CUmemAccessDesc* map, size_t count))           \
  X(CUresult, "cuGetErrorName", get_error_name,                              \
    (CUresult error, const char** name))                                     \
  X(CUresult, "cuModuleGetGlobal_v2", module_get_global,                    \
    (CUdeviceptr * address, size_t * bytes, CUmodule module,                 \
     const char* name))                                                      \
  X(CUresult, "cuGetErrorString", get_error_string,                          \
    (CUresult error, const char** text))

#define DC_CUDA_NVRTC_FUNCTIONS(X)                                            \
  X(nvrtcResult, "nvrtcVersion", version, (int* major, int* minor))          \
  X(nvrtcResult, "nvrtcCreateProgram", create_program,                       \
    (nvrtcProgram * program, const char* source, const char* name,           \
     int header_count, const char* const* headers,                           \
     const char* const* header_names))                                       \
  X(nvrtcResult, "nvrtcDestroyProgram", destroy_program,                     \
    (nvrtcProgram * program))                                                \
  X(nvrtcResult, "nvrtcCompileProgram", compile_program,                     \
    (nvrtcProgram program, int option_count, const char* const* options))    \
  X(nvrtcResult, "nvrtcGetProgramLogSize", get_program_log_size,             \
    (nvrtcProgram program, size_t * size))                                   \
  X(nvrtcResult, "nvrtcGetProgramLog", get_program_log,                      \
    (nvrtcProgram program, char* log))                                       \
  X(nvrtcResult, "nvrtcGetCUBINSize", get_cubin_size,                        \
    (nvrtcProgram program, size_t * size))                                   \
  X(nvrtcResult, "nvrtcGetCUBIN", get_cubin,                                 \
    (nvrtcProgram program, char* cubin))                                     \
  X(nvrtcResult, "nvrtcGetPTXSize", get_ptx_size,                            \
    (nvrtcProgram program, size_t * size))                                   \
  X(nvrtcResult, "nvrtcGetPTX", get_ptx, (nvrtcProgram program, char* ptx))  \
  X(nvrtcResult, "nvrtcGetNumSupportedArchs", get_num_supported_archs,       \
    (int* count))                                                            \
  X(nvrtcResult, "nvrtcGetSupportedArchs", get_supported_archs,              \
    (int* archs))                                                            \
  X(const char*, "nvrtcGetErrorString", get_error_string, (nvrtcResult r))

#define DC_CUDA_CUBLAS_FUNCTIONS(X)                                           \
  X(cublasStatus_t, "cublasCreate_v2", create, (cublasHandle_t * handle))    \
  X(cublasStatus_t, "cublasDestroy_v2", destroy, (cublasHandle_t handle))    \
  X(cublasStatus_t, "cublasSetStream_v2", set_stream,                        \
    (cublasHandle_t handle, CUstream stream))                                \
  X(cublasStatus_t, "cublasSgemm_v2", sgemm,                                 \
    (cublasHandle_t handle, int transa, int transb, int m, int n, int k,     \
     const float* alpha, const float* a, int lda, const float* b, int ldb,   \
     const float* beta, float* c, int ldc))

#define DC_CUDA_FIELD_(ret, symbol, field, params) ret(*field) params;

typedef struct dc__cuda_driver_t {
  DC_CUDA_DRIVER_FUNCTIONS(DC_CUDA_FIELD_)
} dc__cuda_driver_t;

typedef struct dc__cuda_nvrtc_t {
  DC_CUDA_NVRTC_FUNCTIONS(DC_CUDA_FIELD_)
} dc__cuda_nvrtc_t;

typedef struct dc__cuda_cublas_t {
  DC_CUDA_CUBLAS_FUNCTIONS(DC_CUDA_FIELD_)
} dc__cuda_cublas_t;

// What was found on this machine. A NULL part is missing.
typedef struct dc__cuda_api_t {
  const dc__cuda_driver_t* cu;     // NULL: no driver, so no cuda devices
  const dc__cuda_nvrtc_t* nvrtc;   // NULL: programs cannot be built
  const dc__cuda_cublas_t* cublas; // NULL: matmul runs as a kernel
  int driver_version;              // e.g. 13000
  char nvrtc_library[64];          // the file name that was loaded
  char why_missing[256];           // for the debug log when |cu| is NULL
} dc__cuda_api_t;

// Loads the libraries once and returns what was found (never NULL).
// Thread-safe.
DC_INTERNAL const dc__cuda_api_t* dc__cuda_api(void);

// Loads NVRTC alone, once, whether or not a driver is present (for
// compiling without a GPU); NULL if it cannot be loaded. Thread-safe.
DC_INTERNAL const dc__cuda_nvrtc_t* dc__cuda_nvrtc(void);

// Sets the thread's last error for a failed driver call: |what| (the
// operation, e.g. "cuda:0: cuMemAlloc of 4096 bytes") and the driver's
// name and description of |result|. Returns the dc status it maps to:
// OUT_OF_MEMORY for CUDA_ERROR_OUT_OF_MEMORY, DATA_LOSS for uncorrectable
// ECC or NVLink errors, DEVICE_LOST for errors that leave the context
// unusable (illegal address, launch failure, a destroyed context, ...),
// UNAVAILABLE for a busy, unready or timed-out device, INVALID_ARGUMENT
// for bad launch shapes, UNSUPPORTED for code the GPU cannot run,
// INTERNAL otherwise (docs/resilience.md has the table).
DC_INTERNAL dc_status_t dc__cuda_fail(CUresult result, const char* what);

// Whether |result| leaves the CUDA context unusable (sticky errors): the
// device must be treated as lost.
DC_INTERNAL bool dc__cuda_is_sticky(CUresult result);

#endif  // DC_CUDA_API_H_

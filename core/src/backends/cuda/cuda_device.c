// cuda_device.c: finds the NVIDIA GPUs, reads their capabilities from the
// driver and sets each up as a dc device "cuda:N" (N: the CUDA ordinal).
//
// Each device holds the GPU's primary context (retained, so it is shared
// with any other CUDA user in the process, as the runtime API does), one
// non-blocking stream on which every operation runs, and, where the GPU
// has them, the stream-ordered default memory pool (cuda_memory.c).
//
// A machine without the driver or a GPU has no cuda devices; that is
// logged at debug level and is not an error. A GPU that is present but
// cannot be set up (busy in exclusive mode, prohibited, failing) is left
// out with a warning naming the driver's error: the other devices, and
// the CPU, still work.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"
#include "log_internal.h"

// Streams a stream group gets by default. The device runs one operation
// at a time on its CUDA stream, so more engine streams only help to keep
// host-side work (staging, waits) overlapped with it.
#define CUDA_STREAM_COUNT 4u

// Bytes the stream-ordered pool keeps mapped across synchronizations.
// dc's own pool (memory_pool.c) is the cache that the budget and the
// cache limit govern; this only spares the driver from unmapping and
// remapping the short-lived blocks dc frees (overlap temporaries, blocks
// over the cache limit). Anything above it goes back to the driver at
// the next synchronization, so a trim of dc's pool really frees memory.
#define CUDA_POOL_RELEASE_THRESHOLD ((uint64_t)256 << 20)

// The line size of the L2 and of global-memory transactions on every
// architecture since Fermi; the driver does not report it.
#define CUDA_CACHE_LINE 128u

//===-- Errors and the operation frame ----------------------------------===//

dc_status_t dc__cuda_failed(dc__cuda_device_t* cuda, CUresult result,
                            const char* format, ...) {
  char what[512];
  int n = snprintf(what, sizeof(what), "%s: ", cuda->base.info.name);
  va_list args;
  va_start(args, format);
  vsnprintf(what + n, sizeof(what) - (size_t)n, format, args);
  va_end(args);
  return dc__cuda_fail(result, what);
}

dc_status_t dc__cuda_enter(dc__cuda_device_t* cuda) {
  CUresult r = cuda->api->cu->ctx_set_current(cuda->context);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuCtxSetCurrent");
  }
  return DC_OK;
}

dc_status_t dc__cuda_wait(dc__cuda_device_t* cuda, CUstream stream,
                          const char* what) {
  CUresult r = cuda->api->cu->stream_synchronize(stream);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "%s (cuStreamSynchronize)", what);
  }
  return DC_OK;
}

dc_status_t dc__cuda_sync(dc__cuda_device_t* cuda, const char* what) {
  return dc__cuda_wait(cuda, cuda->stream, what);
}

// Marks |cuda| lost in its context's health, once: the first sticky
// failure does it; later ones (the context stays broken) find it marked.
// A failure reported through a stream or graph is noted there too, so
// such a failure counts twice in the device's failure count.
static void report_lost(dc__cuda_device_t* cuda, dc_status_t status) {
  atomic_store(&cuda->broken, true);
  // Kept whole (dc__error_save would cut it): the health query and the
  // health callback may overwrite the thread's message.
  char message[1024];
  dc__strlcpy(message, dc_last_error(), sizeof(message));
  dc_device_health_t health;
  bool marked = dc_device_health(&cuda->base, &health) == DC_OK &&
                health.state == DC_DEVICE_LOST;
  if (!marked) dc_device_report_failure(&cuda->base, status, message);
  dc__error_set_raw(message);
}

dc_status_t dc__cuda_settle(dc__cuda_device_t* cuda, dc_status_t status) {
  if (dc_status_class(status) == DC_STATUS_CLASS_DEVICE) {
    report_lost(cuda, status);
  }
  return status;
}

dc_status_t dc__cuda_leave(dc__cuda_device_t* cuda, dc_status_t status) {
  pthread_mutex_unlock(&cuda->lock);
  // Reported after unlocking: the health callback is the host's code and
  // may call back into the engine.
  return dc__cuda_settle(cuda, status);
}

//===-- The vtable ------------------------------------------------------===//

static void free_device(dc__cuda_device_t* cuda) {
  for (int i = 0; i < 2; ++i) pthread_mutex_destroy(&cuda->lanes[i].lock);
  pthread_mutex_destroy(&cuda->lock);
  dc_allocator_free(cuda->allocator, cuda, sizeof(*cuda));
}

// Runs alone: the context destroys a device after every buffer and
// program on it is gone, so no other call can reach it and nothing is
// locked (the kernel teardown may lock for itself).
static void cuda_destroy(dc_device_t* device) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  const dc__cuda_driver_t* cu = cuda->api->cu;
  bool current = dc__cuda_enter(cuda) == DC_OK;
  dc__cuda_kernels_teardown(cuda);
  if (current) {
    cu->stream_synchronize(cuda->stream);  // pending frees, then teardown
    dc__cuda_memory_teardown(cuda);
    dc__cuda_dispatch_teardown(cuda);
    if (cuda->cublas != NULL) cuda->api->cublas->destroy(cuda->cublas);
    cu->stream_destroy(cuda->stream);
    // Hand the pool's idle memory back: the default pool outlives us.
    if (cuda->pool != NULL) cu->mem_pool_trim_to(cuda->pool, 0);
  }
  cu->primary_ctx_release(cuda->device);
  free_device(cuda);
}

// A sticky error is for the rest of the process: the driver's
// documentation says that only a new process recovers.
static bool cuda_broken(dc_device_t* device) {
  return atomic_load(&((dc__cuda_device_t*)device)->broken);
}

static const dc_device_memory_ops_t kCudaMemory = {
    .allocate = dc__cuda_allocate,
    .deallocate = dc__cuda_deallocate,
    .host_pointer = dc__cuda_host_pointer,
    .write = dc__cuda_write,
    .read = dc__cuda_read,
    .fill = dc__cuda_fill,
    .copy = dc__cuda_copy,
};

static const dc_device_kernel_ops_t kCudaKernels = {
    .program_build = dc__cuda_program_build,
    .program_destroy = dc__cuda_program_destroy,
    .dispatch = dc__cuda_dispatch,
    .program_cache_stats = dc__cuda_program_cache_stats,
    .preferred_group_size = dc__cuda_preferred_group_size,
    .matmul = dc__cuda_matmul,
    .matmul_library = dc__cuda_matmul_library,
};

static const dc_device_queue_ops_t kCudaQueues = {
    .create = dc__cuda_queue_create,
    .destroy = dc__cuda_queue_destroy,
    .dispatch = dc__cuda_dispatch_queued,
    .finish = dc__cuda_queue_finish,
    .copy = dc__cuda_queue_copy,
    .write_pinned = dc__cuda_queue_write_pinned,
    .read_pinned = dc__cuda_queue_read_pinned,
};

static const dc_device_event_ops_t kCudaEvents = {
    .create = dc__cuda_event_create,
    .destroy = dc__cuda_event_destroy,
    .record = dc__cuda_queue_record,
    .wait = dc__cuda_queue_wait,
};

static const dc_device_graph_ops_t kCudaGraphs = {
    .create = dc__cuda_graph_create,
    .run = dc__cuda_graph_run,
    .destroy = dc__cuda_graph_destroy,
};

static const dc_device_peer_ops_t kCudaPeer = {
    .copy = dc__cuda_copy_peer,
    .direct = dc__cuda_peer_direct,
};

static const dc_device_pinning_ops_t kCudaPinning = {
    .pin = dc__cuda_pin,
    .unpin = dc__cuda_unpin,
    .write_pinned = dc__cuda_write_pinned,
    .read_pinned = dc__cuda_read_pinned,
};

static const dc_device_vtable_t kCudaVtable = {
    .destroy = cuda_destroy,
    .broken = cuda_broken,
    .memory = &kCudaMemory,
    .kernels = &kCudaKernels,
    .queues = &kCudaQueues,
    .events = &kCudaEvents,
    .graphs = &kCudaGraphs,
    .peer = &kCudaPeer,
    .pinning = &kCudaPinning,
};

//===-- Capabilities ----------------------------------------------------===//

// The attributes read once per GPU.
typedef struct gpu_attributes_t {
  int sm_count, warp_size, max_threads_per_block;
  int shared_per_block, shared_per_block_optin;
  int l2_size, cc_major, cc_minor;
  int unified_addressing, can_map_host, cooperative;
  int memory_pools, managed_memory;
  int pci_domain, pci_bus, pci_device;
} gpu_attributes_t;

static dc_status_t read_attributes(dc__cuda_device_t* cuda,
                                   gpu_attributes_t* a) {
  const struct {
    int attribute;
    int* value;
    const char* name;
  } wanted[] = {
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &a->sm_count, "SM count"},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &a->warp_size, "warp size"},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &a->max_threads_per_block,
       "max threads per block"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &a->shared_per_block,
       "shared memory per block"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &a->shared_per_block_optin, "opt-in shared memory per block"},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &a->l2_size, "L2 cache size"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &a->cc_major,
       "compute capability"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &a->cc_minor,
       "compute capability"},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, &a->unified_addressing,
       "unified addressing"},
      {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, &a->can_map_host,
       "host memory mapping"},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &a->cooperative,
       "cooperative launch"},
      {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, &a->memory_pools,
       "memory pools"},
      {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, &a->managed_memory,
       "managed memory"},
      {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &a->pci_domain, "PCI domain"},
      {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &a->pci_bus, "PCI bus"},
      {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &a->pci_device, "PCI device"},
  };
  for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); ++i) {
    CUresult r = cuda->api->cu->device_get_attribute(
        wanted[i].value, wanted[i].attribute, cuda->device);
    if (r != CUDA_SUCCESS) {
      return dc__cuda_failed(cuda, r, "cuDeviceGetAttribute (%s)",
                             wanted[i].name);
    }
  }
  return DC_OK;
}

// The backend's memory model rests on these; every GPU a CUDA 12 driver
// supports has them on a 64-bit host, so a miss means something odd.
static dc_status_t check_requirements(dc__cuda_device_t* cuda,
                                      const gpu_attributes_t* a) {
  const char* missing = NULL;
  if (!a->unified_addressing) missing = "unified addressing";
  if (!a->can_map_host) missing = "mapped host memory";
  if (a->sm_count <= 0 || a->warp_size <= 0 || a->max_threads_per_block <= 0)
    missing = "a positive SM count, warp size and block size";
  if (missing == NULL) return DC_OK;
  return DC_FAIL(DC_ERR_UNSUPPORTED,
                 "%s: the GPU has no %s, which the cuda backend needs",
                 cuda->base.info.name, missing);
}

// Fills |info| from the driver's answers. __local memory is the most a
// block may opt in to (227 KiB on Hopper): the dispatch opts a kernel in
// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) when its launch needs
// more than the default 48 KiB. GPUs without opt-in report the default.
static dc_status_t describe(dc__cuda_device_t* cuda,
                            const gpu_attributes_t* a,
                            dc_device_info_t* info) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  *info = (dc_device_info_t){.kind = DC_DEVICE_KIND_GPU};
  dc__strlcpy(info->name, cuda->base.info.name, sizeof(info->name));
  dc__strlcpy(info->backend, "cuda", sizeof(info->backend));
  CUresult r = cu->device_get_name(info->model, (int)sizeof(info->model),
                                   cuda->device);
  if (r != CUDA_SUCCESS) return dc__cuda_failed(cuda, r, "cuDeviceGetName");
  r = cu->device_total_mem(&info->memory_size, cuda->device);
  if (r != CUDA_SUCCESS) return dc__cuda_failed(cuda, r, "cuDeviceTotalMem");
  info->compute_units = (uint32_t)a->sm_count;
  info->worker_threads = (uint32_t)a->sm_count;
  info->simd_width = (uint32_t)a->warp_size;
  info->max_work_group_size = (uint32_t)a->max_threads_per_block;
  info->local_memory_size =
      (size_t)DC_MAX(a->shared_per_block, a->shared_per_block_optin);
  info->cache_l2_size = (size_t)a->l2_size;
  info->cache_line_size = CUDA_CACHE_LINE;
  info->unified_memory = false;  // device memory is apart from the host's
  info->stream_count = CUDA_STREAM_COUNT;
  // One group per SM can always be resident when the kernel fits in a
  // block at all; the dispatch checks each kernel's real limit with the
  // occupancy API and refuses a grid that cannot be resident.
  info->max_cooperative_groups = a->cooperative ? (uint32_t)a->sm_count : 0;
  snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "%04x:%02x:%02x.0",
           (unsigned)a->pci_domain & 0xffffu, (unsigned)a->pci_bus & 0xffu,
           (unsigned)a->pci_device & 0x1fu);
  return DC_OK;
}

//===-- Setting a GPU up ------------------------------------------------===//

// Uses the device's default pool, keeping CUDA_POOL_RELEASE_THRESHOLD
// bytes mapped. Without pools, allocations go through cuMemAlloc.
static dc_status_t set_up_pool(dc__cuda_device_t* cuda,
                               const gpu_attributes_t* a) {
  if (!a->memory_pools) return DC_OK;
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUmemoryPool pool = NULL;
  CUresult r = cu->device_get_default_mem_pool(&pool, cuda->device);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuDeviceGetDefaultMemPool");
  }
  uint64_t threshold = CUDA_POOL_RELEASE_THRESHOLD;
  r = cu->mem_pool_set_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                 &threshold);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r,
                           "cuMemPoolSetAttribute (release threshold)");
  }
  cuda->pool = pool;
  return DC_OK;
}

// Retains the primary context and creates the stream and pool. On
// failure, what was made is undone.
static dc_status_t open_gpu(dc__cuda_device_t* cuda,
                            const gpu_attributes_t* a) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = cu->primary_ctx_retain(&cuda->context, cuda->device);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuDevicePrimaryCtxRetain");
  }
  dc_status_t status = dc__cuda_enter(cuda);
  if (status == DC_OK) {
    r = cu->stream_create(&cuda->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
      status = dc__cuda_failed(cuda, r, "cuStreamCreate");
    }
  }
  if (status == DC_OK &&
      cu->ctx_get_stream_priority_range(&cuda->priority_least,
                                        &cuda->priority_greatest) !=
          CUDA_SUCCESS) {
    cuda->priority_least = cuda->priority_greatest = 0;  // all alike
  }
  if (status == DC_OK) {
    status = set_up_pool(cuda, a);
    if (status != DC_OK) cu->stream_destroy(cuda->stream);
  }
  if (status != DC_OK) cu->primary_ctx_release(cuda->device);
  return status;
}

static void log_device(dc_context_t* ctx, const dc__cuda_device_t* cuda,
                       const gpu_attributes_t* a) {
  const dc__cuda_api_t* api = cuda->api;
  const dc_device_info_t* info = &cuda->base.info;
  char memory[32], l2[32];
  DC_LOG(ctx, DC_LOG_INFO, "cuda",
         "%s: %s, compute capability %d.%d, %u SMs, %s, L2 %s; unified "
         "addressing%s%s%s; driver %d.%d; %s%s; %s",
         info->name, info->model, a->cc_major, a->cc_minor,
         info->compute_units,
         dc__format_bytes(info->memory_size, memory, sizeof(memory)),
         dc__format_bytes(info->cache_l2_size, l2, sizeof(l2)),
         a->memory_pools ? ", memory pool" : "",
         a->cooperative ? ", cooperative launch" : "",
         a->managed_memory ? ", managed memory" : "",
         api->driver_version / 1000, api->driver_version % 1000 / 10,
         api->nvrtc ? "NVRTC " : "no NVRTC (programs cannot be built)",
         api->nvrtc ? api->nvrtc_library : "",
         api->cublas ? "cuBLAS" : "no cuBLAS");
}

// Makes the device struct for |ordinal| with its name and driver handle.
static dc_status_t new_device(dc_context_t* ctx, const dc__cuda_api_t* api,
                              int ordinal, dc__cuda_device_t** out) {
  dc_allocator_t allocator = dc_context_allocator(ctx);
  dc__cuda_device_t* cuda = dc_allocator_calloc(allocator, 1, sizeof(*cuda));
  if (cuda == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the cuda:%d device",
                   ordinal);
  }
  cuda->api = api;
  cuda->allocator = allocator;
  cuda->ordinal = ordinal;
  // The name is needed by error messages before the device is initialised.
  snprintf(cuda->base.info.name, sizeof(cuda->base.info.name), "cuda:%d",
           ordinal);
  pthread_mutex_init(&cuda->lock, NULL);
  for (int i = 0; i < 2; ++i) pthread_mutex_init(&cuda->lanes[i].lock, NULL);
  *out = cuda;
  CUresult r = api->cu->device_get(&cuda->device, ordinal);
  return r == CUDA_SUCCESS ? DC_OK : dc__cuda_failed(cuda, r, "cuDeviceGet");
}

// Reads |cuda|'s capabilities and opens it; |info| gets what it can do.
static dc_status_t set_up(dc__cuda_device_t* cuda, gpu_attributes_t* a,
                          dc_device_info_t* info) {
  DC_RETURN_IF_ERROR(read_attributes(cuda, a));
  DC_RETURN_IF_ERROR(check_requirements(cuda, a));
  DC_RETURN_IF_ERROR(describe(cuda, a, info));
  cuda->cc_major = a->cc_major;
  cuda->cc_minor = a->cc_minor;
  cuda->sm_count = a->sm_count;
  cuda->max_threads_per_block = a->max_threads_per_block;
  cuda->shared_per_block_optin = a->shared_per_block_optin;
  cuda->cooperative = a->cooperative != 0;
  cuda->managed_memory = a->managed_memory != 0;
  return open_gpu(cuda, a);
}

// Adds GPU |ordinal|. A GPU the driver cannot set up is skipped with a
// warning (returns DC_OK); only a failure of the host (no memory for the
// device struct, a full context) fails the context's creation.
static dc_status_t add_gpu(dc_context_t* ctx, const dc__cuda_api_t* api,
                           int ordinal) {
  dc__cuda_device_t* cuda = NULL;
  dc_status_t status = new_device(ctx, api, ordinal, &cuda);
  if (cuda == NULL) return status;
  gpu_attributes_t a = {0};
  dc_device_info_t info;
  if (status == DC_OK) status = set_up(cuda, &a, &info);
  if (status != DC_OK) {
    DC_LOG(ctx, DC_LOG_WARN, "cuda", "cuda:%d left out: %s", ordinal,
           dc_last_error());
    free_device(cuda);
    return DC_OK;
  }
  status = dc_device_initialize(&cuda->base, &kCudaVtable, ctx, &info);
  if (status == DC_OK) status = dc_context_add_device(ctx, &cuda->base);
  if (status != DC_OK) {
    cuda_destroy(&cuda->base);  // the context did not take it
    return status;
  }
  log_device(ctx, cuda, &a);
  return DC_OK;
}

dc_status_t dc__cuda_enumerate(dc_context_t* ctx) {
  const dc__cuda_api_t* api = dc__cuda_api();
  if (api->cu == NULL) {
    DC_LOG(ctx, DC_LOG_DEBUG, "cuda", "no devices: %s", api->why_missing);
    return DC_OK;
  }
  int count = 0;
  CUresult r = api->cu->device_get_count(&count);
  if (r != CUDA_SUCCESS || count <= 0) {
    const char* name = "no GPU";
    if (r != CUDA_SUCCESS) api->cu->get_error_name(r, &name);
    DC_LOG(ctx, DC_LOG_DEBUG, "cuda",
           "no devices: the driver (version %d) reports %s",
           api->driver_version, r != CUDA_SUCCESS ? name : "no GPU");
    return DC_OK;
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    DC_RETURN_IF_ERROR(add_gpu(ctx, api, ordinal));
  }
  dc__cuda_enable_peers(ctx);  // once all are there (cuda_peer.c)
  return DC_OK;
}

// cuda_internal.h: the CUDA backend's private declarations.
//
// The backend has two halves that share this header: the device and its
// memory (cuda_device.c, cuda_memory.c) and kernels (cuda_codegen.c,
// cuda_program.c: the kernel language translated to CUDA C++, compiled by
// NVRTC, cached, loaded and launched).
//
// Execution model. Each engine stream on the device gets a CUDA stream of
// its own, a device queue (dc/backend.h, cuda_queue.c): the scheduler puts
// runs of consecutive dispatches on it without waiting, and synchronizes
// it once before anything that depends on them. Every other operation of
// the backend interface is synchronous: it runs on the device's own CUDA
// stream, |stream|, and returns after a synchronize on it. Those calls,
// from whichever host thread, are serialized by |lock| (one stream, one
// staging buffer); launches on a queue take it only when they must opt a
// kernel in to more shared memory or read its outcome back.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_INTERNAL_H_
#define DC_CUDA_INTERNAL_H_

#include <pthread.h>

#include "cuda_api.h"
#include "dc/backend.h"
#include "internal.h"

typedef struct dc__kcache_t dc__kcache_t;

typedef struct dc__cuda_device_t {
  dc_device_t base;  // first, as the backend interface requires
  const dc__cuda_api_t* api;
  dc_allocator_t allocator;
  CUdevice device;
  int ordinal;       // N of "cuda:N"
  CUcontext context; // the device's primary context (retained)
  int cc_major, cc_minor;
  int sm_count;
  int max_threads_per_block;
  int shared_per_block_optin;  // bytes a kernel may opt in to
  bool cooperative;            // cooperative launches supported
  bool managed_memory;         // cuMemAllocManaged works here
  CUmemoryPool pool;           // stream-ordered pool; NULL: cuMemAlloc
  // Bit N: this GPU reaches the memory of cuda:N directly (peer access
  // enabled, cuda:N's pool open to it). Set once the context's GPUs are
  // all found (cuda_peer.c), read-only afterwards.
  uint64_t peer_access;
  // A sticky error broke the context for the rest of the process.
  atomic_bool broken;

  // Copies with pinned host memory (cuda_memory.c), one lane a direction
  // ([0] to the GPU, [1] from it): its own stream and lock, so that a copy
  // each way runs at once on the two copy engines, beside the device
  // stream and the queues.
  struct {
    pthread_mutex_t lock;
    CUstream stream;  // made on first use
  } lanes[2];

  pthread_mutex_t lock;  // guards everything below
  CUstream stream;       // where every synchronous operation runs
  int priority_least, priority_greatest;  // CUDA stream priorities
  void* staging;         // pinned host memory for transfers
  size_t staging_size;
  CUevent staging_done[2];  // a staging half is free again (cuda_memory.c)
  cublasHandle_t cublas;  // NULL until the first matmul (or no cuBLAS)
  // Checked dispatches (cuda_dispatch.c), made on the first: the stream
  // that writes a running kernel's stop word, and the ends of the slice
  // that runs and of the one queued behind it.
  CUstream control;
  CUevent slice_done[2];
  // Kernels (cuda_program.c): set up on the first program build.
  bool kernels_ready;
  dc_status_t kernels_status;
  char kernels_message[512];
  dc__kcache_t* kcache;
  dc_program_cache_stats_t stats;
  int target_arch;       // what programs compile for (cuda_compile.h):
  bool target_ptx;       // sm_<arch>, or compute_<arch> PTX
  struct dc__cuda_module_t* modules;  // loaded modules, by cache key
} dc__cuda_device_t;

// The device address |offset| bytes into |memory| (a memory handle of
// the device, or, with unified addressing, host memory).
static inline CUdeviceptr dc__cuda_address(const void* memory,
                                           size_t offset) {
  return (CUdeviceptr)(uintptr_t)memory + offset;
}

// Makes |cuda|'s primary context current on the calling thread (cheap
// when it already is). Call with |lock| held before any driver call that
// uses the stream or the staging buffer (a query that touches neither,
// such as cuPointerGetAttribute, may run unlocked).
DC_INTERNAL dc_status_t dc__cuda_enter(dc__cuda_device_t* cuda);

// Synchronizes the device stream and turns a failure into a status
// (sticky failures mark the context unusable). |what| names the operation
// ("write of 4096 bytes"); the message adds the device's name.
DC_INTERNAL dc_status_t dc__cuda_sync(dc__cuda_device_t* cuda,
                                      const char* what);
// As dc__cuda_sync, for any CUDA stream of |cuda|.
DC_INTERNAL dc_status_t dc__cuda_wait(dc__cuda_device_t* cuda,
                                      CUstream stream, const char* what);

// Reports the failed driver call |result| on |cuda|: sets the thread's
// error to "cuda:N: <what>: CUDA_ERROR_X (n): <text>", where |format| and
// its arguments say what, and returns the dc status it maps to (see
// dc__cuda_fail; DC_ERR_DEVICE_LOST for sticky errors).
DC_INTERNAL dc_status_t dc__cuda_failed(dc__cuda_device_t* cuda,
                                        CUresult result, const char* format,
                                        ...) DC_PRINTF_LIKE(3, 4);

// Ends an operation begun by locking |lock|: unlocks it and, when |status|
// is DC_ERR_DEVICE_LOST, marks the device lost in the context's health
// (dc_device_health) so that even a failed plain buffer call takes it out
// of service. Returns |status| with the thread's message kept.
DC_INTERNAL dc_status_t dc__cuda_leave(dc__cuda_device_t* cuda,
                                       dc_status_t status);
// dc__cuda_leave for an operation that did not lock: marks the device
// lost when |status| is DC_ERR_DEVICE_LOST, and returns |status|.
DC_INTERNAL dc_status_t dc__cuda_settle(dc__cuda_device_t* cuda,
                                        dc_status_t status);

// Memory (cuda_memory.c): the vtable's memory functions, as described in
// dc/backend.h; the storage modes map as docs/cuda.md ("Devices and
// memory") says.
DC_INTERNAL dc_status_t dc__cuda_allocate(dc_device_t* device, size_t size,
                                          dc_storage_mode_t mode,
                                          void** out_memory);
DC_INTERNAL void dc__cuda_deallocate(dc_device_t* device, void* memory,
                                     size_t size, dc_storage_mode_t mode);
DC_INTERNAL void* dc__cuda_host_pointer(dc_device_t* device, void* memory,
                                        dc_storage_mode_t mode);
DC_INTERNAL dc_status_t dc__cuda_write(dc_device_t* device, void* memory,
                                       size_t offset, const void* src,
                                       size_t size);
DC_INTERNAL dc_status_t dc__cuda_read(dc_device_t* device,
                                      const void* memory, size_t offset,
                                      void* dst, size_t size);
DC_INTERNAL dc_status_t dc__cuda_fill(dc_device_t* device, void* memory,
                                      size_t offset, size_t size,
                                      const void* pattern,
                                      size_t pattern_size);
DC_INTERNAL dc_status_t dc__cuda_copy(dc_device_t* device, void* dst,
                                      size_t dst_offset, const void* src,
                                      size_t src_offset, size_t size);
// Host memory pinned for DMA (dc_device_pinning_ops_t).
DC_INTERNAL dc_status_t dc__cuda_pin(dc_device_t* device, void* host,
                                     size_t size);
DC_INTERNAL void dc__cuda_unpin(dc_device_t* device, void* host, size_t size);
DC_INTERNAL dc_status_t dc__cuda_write_pinned(dc_device_t* device,
                                              void* memory, size_t offset,
                                              const void* host, size_t size);
DC_INTERNAL dc_status_t dc__cuda_read_pinned(dc_device_t* device,
                                             const void* memory,
                                             size_t offset, void* host,
                                             size_t size);
// Frees the staging buffer and its events. Call with the context current.
DC_INTERNAL void dc__cuda_memory_teardown(dc__cuda_device_t* cuda);

// Finds the CUDA devices and adds them to |ctx| as cuda:0, cuda:1, ...
// Without a driver or a GPU it adds none and logs why at debug level.
DC_INTERNAL dc_status_t dc__cuda_enumerate(dc_context_t* ctx);

// Kernels (cuda_program.c).
DC_INTERNAL dc_status_t dc__cuda_program_build(dc_device_t* device,
                                               dc_program_build_t* build);
DC_INTERNAL void dc__cuda_program_destroy(dc_device_t* device,
                                          dc_program_t* program);
// Frees what checked dispatches made (the control stream, the slice
// events). Call with the context current.
DC_INTERNAL void dc__cuda_dispatch_teardown(dc__cuda_device_t* cuda);
DC_INTERNAL dc_status_t dc__cuda_dispatch(dc_device_t* device,
                                          dc_kernel_t* kernel,
                                          const dc_launch_t* launch,
                                          void* const* args,
                                          const size_t* lengths);
// Device queues and events (cuda_queue.c; dispatch_queued in
// cuda_dispatch.c): the vtable's queue and event functions, as described
// in dc/backend.h. A queue is a CUDA stream of the device's context, an
// event a CUDA event.
DC_INTERNAL dc_status_t dc__cuda_queue_create(dc_device_t* device,
                                              dc_priority_t priority,
                                              dc_device_queue_t** out_queue);
DC_INTERNAL void dc__cuda_queue_destroy(dc_device_t* device,
                                        dc_device_queue_t* queue);
DC_INTERNAL dc_status_t dc__cuda_dispatch_queued(
    dc_device_t* device, dc_device_queue_t* queue, dc_kernel_t* kernel,
    const dc_launch_t* launch, void* const* args, const size_t* lengths);
DC_INTERNAL dc_status_t dc__cuda_queue_finish(dc_device_t* device,
                                              dc_device_queue_t* queue);
DC_INTERNAL dc_status_t dc__cuda_queue_copy(dc_device_t* device,
                                            dc_device_queue_t* queue,
                                            void* dst, size_t dst_offset,
                                            const void* src,
                                            size_t src_offset, size_t size);
DC_INTERNAL dc_status_t dc__cuda_queue_write_pinned(
    dc_device_t* device, dc_device_queue_t* queue, void* memory,
    size_t offset, const void* host, size_t size);
DC_INTERNAL dc_status_t dc__cuda_queue_read_pinned(
    dc_device_t* device, dc_device_queue_t* queue, const void* memory,
    size_t offset, void* host, size_t size);
DC_INTERNAL dc_status_t dc__cuda_event_create(dc_device_t* device,
                                              dc_device_event_t** out_event);
DC_INTERNAL void dc__cuda_event_destroy(dc_device_t* device,
                                        dc_device_event_t* event);
DC_INTERNAL dc_status_t dc__cuda_queue_record(dc_device_t* device,
                                              dc_device_queue_t* queue,
                                              dc_device_event_t* event);
DC_INTERNAL dc_status_t dc__cuda_queue_wait(dc_device_t* device,
                                            dc_device_queue_t* queue,
                                            dc_device_event_t* event);
// Device graphs (cuda_graph.c): the vtable's graph functions, as
// described in dc/backend.h; a recording is an instantiated CUDA graph.
DC_INTERNAL dc_status_t dc__cuda_graph_create(
    dc_device_t* device, size_t count, dc_kernel_t* const* kernels,
    const dc_launch_t* launches, void* const* const* args,
    const size_t* const* lengths, const uint32_t* dep_first,
    const uint32_t* deps, dc_device_graph_t** out_graph);
DC_INTERNAL dc_status_t dc__cuda_graph_run(dc_device_t* device,
                                           dc_device_graph_t* graph,
                                           bool* out_started);
DC_INTERNAL void dc__cuda_graph_destroy(dc_device_t* device,
                                        dc_device_graph_t* graph);
DC_INTERNAL void dc__cuda_program_cache_stats(dc_device_t* device,
                                              dc_program_cache_stats_t* out);
// Frees the kernel state of |cuda|: unloads its modules (with the
// context current, when it could be made so) and closes the cache.
DC_INTERNAL void dc__cuda_kernels_teardown(dc__cuda_device_t* cuda);

// Optional vtable functions (dc/backend.h; cuda_dispatch.c): the group
// size the occupancy API suggests for a kernel, and the matrix product
// through cuBLAS when the machine has it.
DC_INTERNAL size_t dc__cuda_preferred_group_size(dc_device_t* device,
                                                 const dc_kernel_t* kernel,
                                                 size_t work_items,
                                                 size_t local_memory);
DC_INTERNAL dc_status_t dc__cuda_matmul(dc_device_t* device, const void* a,
                                        const void* b, void* c, size_t m,
                                        size_t n, size_t k);
DC_INTERNAL const char* dc__cuda_matmul_library(dc_device_t* device);

// Multiple GPUs (cuda_peer.c). Enables peer access between every pair of
// |ctx|'s GPUs that supports it, in both directions; called once, after
// enumeration. A pair that cannot be enabled is logged and left to
// copies that the driver stages through host memory.
DC_INTERNAL void dc__cuda_enable_peers(dc_context_t* ctx);
// The vtable's copy_peer and peer_direct (dc/backend.h).
DC_INTERNAL dc_status_t dc__cuda_copy_peer(dc_device_t* dst_device,
                                           void* dst, size_t dst_offset,
                                           dc_device_t* src_device,
                                           const void* src,
                                           size_t src_offset, size_t size,
                                           double* out_seconds);
DC_INTERNAL bool dc__cuda_peer_direct(dc_device_t* from, dc_device_t* to);

#endif  // DC_CUDA_INTERNAL_H_

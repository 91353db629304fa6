// opencl_internal.h: the OpenCL backend's private declarations.
//
// The backend drives any OpenCL 1.2 device the ICD loader finds (pocl on
// a CPU, NVIDIA, AMD and Intel GPUs) as "opencl:N", N counting devices
// across the platforms in the loader's order. It has two halves that
// share this header: the device and its memory (opencl_device.c,
// opencl_memory.c) and kernels (opencl_codegen.c, opencl_compile.c,
// opencl_program.c, opencl_dispatch.c: the kernel language translated to
// OpenCL C from the typed tree, built by the driver, cached, launched).
//
// Memory handles. The core adds byte offsets to a memory handle, which a
// cl_mem cannot take, so a handle is an address in a space of the
// backend's own: a slot of the device's table of cl_mem objects in the
// high bits and a byte offset in the low DC_OPENCL_OFFSET_BITS (slot
// numbers start at 1, so no handle is NULL). dc__opencl_decode() turns a
// handle plus an offset back into the pair every driver call takes.
//
// Execution model. Each engine stream on the device gets an in-order
// command queue of its own (opencl_queue.c); every other operation runs
// on the device's own queue, |queue|, and returns after it has finished
// (a blocking transfer or clFinish). OpenCL queues are thread-safe, so
// the synchronous operations need no lock; |lock| guards only the kernel
// state and the checked-mode states, |staging_lock| the staging buffer.
// SPDX-License-Identifier: MIT
#ifndef DC_OPENCL_INTERNAL_H_
#define DC_OPENCL_INTERNAL_H_

#include <pthread.h>
#include <stdatomic.h>

#include "dc/backend.h"
#include "internal.h"
#include "opencl_api.h"

typedef struct dc__kcache_t dc__kcache_t;

// A handle's low bits: a byte offset of up to 16 TiB into one allocation.
#define DC_OPENCL_OFFSET_BITS 44
#define DC_OPENCL_OFFSET_MASK ((UINT64_C(1) << DC_OPENCL_OFFSET_BITS) - 1)
// The slot table grows in chunks; 2^20 slots (the 20 high bits) at most.
#define DC_OPENCL_SLOT_CHUNK 4096u
#define DC_OPENCL_SLOT_CHUNKS 256u
#define DC_OPENCL_MAX_SLOTS (DC_OPENCL_SLOT_CHUNK * DC_OPENCL_SLOT_CHUNKS)

typedef struct dc__opencl_device_t {
  dc_device_t base;  // first, as the backend interface requires
  const dc__opencl_functions_t* cl;
  dc_allocator_t allocator;
  int ordinal;  // N of "opencl:N"
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;  // where every synchronous operation runs
  // Where the host writes a running checked kernel's stop word on a
  // device that does not share the host's memory: a queue of its own, so
  // the write runs beside the kernel (opencl_dispatch.c).
  cl_command_queue control_queue;
  cl_device_type type;
  size_t max_alloc;       // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  size_t max_item_sizes[3];
  bool fp64;              // cl_khr_fp64
  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: builds can ask for the float
  // division and square root the kernel language promises.
  bool rounded_div_sqrt;
  bool int64_atomics;     // cl_khr_int64_base_atomics
  bool host_unified;      // CL_DEVICE_HOST_UNIFIED_MEMORY (pocl, iGPUs)
  char version[128];      // CL_DEVICE_VERSION
  char driver[64];        // CL_DRIVER_VERSION
  char platform_name[128];

  // Memory slots (opencl_memory.c): slot s (from 1) is chunk (s - 1) /
  // DC_OPENCL_SLOT_CHUNK. A chunk is published once and never moves, so
  // decoding reads it without a lock; |slots_lock| guards allocation.
  _Atomic(cl_mem*) chunks[DC_OPENCL_SLOT_CHUNKS];
  pthread_mutex_t slots_lock;
  uint32_t slots_used;    // slots handed out so far (1..slots_used)
  uint32_t* free_slots;   // returned slots, reused first
  uint32_t free_count, free_capacity;

  pthread_mutex_t lock;  // guards everything below
  // Kernels (opencl_program.c): set up on the first program build.
  bool kernels_ready;
  dc_status_t kernels_status;
  char kernels_message[512];
  dc__kcache_t* kcache;
  dc_program_cache_stats_t stats;
  struct dc__opencl_module_t* modules;  // built programs, by cache key
  struct dc__opencl_checked_t* checked_free;  // idle checked-mode states

  // Transfers with host memory through pinned staging (opencl_memory.c),
  // on a device whose memory is not the host's: two halves of one
  // CL_MEM_ALLOC_HOST_PTR buffer, made on the first such transfer and
  // mapped for good; |staging_lock| lets one transfer use them at a time.
  bool stage_transfers;
  pthread_mutex_t staging_lock;
  cl_mem staging;
  char* staging_host;  // the mapped halves, NULL until made
} dc__opencl_device_t;

// Reports the failed OpenCL call |error| on |ocl|: sets the thread's error
// to "opencl:N: <what>: CL_X (n)", where |format| and its arguments say
// what, and returns the dc status it maps to.
DC_INTERNAL dc_status_t dc__opencl_failed(dc__opencl_device_t* ocl,
                                          cl_int error, const char* format,
                                          ...) DC_PRINTF_LIKE(3, 4);

// Finds the OpenCL devices and adds them to |ctx| as opencl:0, ... Without
// a loader, a platform or a device it adds none and logs why at debug
// level.
DC_INTERNAL dc_status_t dc__opencl_enumerate(dc_context_t* ctx);

// Memory (opencl_memory.c): the memory table's functions, as described in
// dc/backend.h. Private storage is a cl_mem; shared and managed storage
// are refused (host_pointer is always NULL).
DC_INTERNAL dc_status_t dc__opencl_allocate(dc_device_t* device, size_t size,
                                            dc_storage_mode_t mode,
                                            void** out_memory);
DC_INTERNAL void dc__opencl_deallocate(dc_device_t* device, void* memory,
                                       size_t size, dc_storage_mode_t mode);
DC_INTERNAL void* dc__opencl_host_pointer(dc_device_t* device, void* memory,
                                          dc_storage_mode_t mode);
DC_INTERNAL dc_status_t dc__opencl_write(dc_device_t* device, void* memory,
                                         size_t offset, const void* src,
                                         size_t size);
DC_INTERNAL dc_status_t dc__opencl_read(dc_device_t* device,
                                        const void* memory, size_t offset,
                                        void* dst, size_t size);
DC_INTERNAL dc_status_t dc__opencl_fill(dc_device_t* device, void* memory,
                                        size_t offset, size_t size,
                                        const void* pattern,
                                        size_t pattern_size);
DC_INTERNAL dc_status_t dc__opencl_copy(dc_device_t* device, void* dst,
                                        size_t dst_offset, const void* src,
                                        size_t src_offset, size_t size);
// The cl_mem and byte offset that |handle| plus |offset| denote; false
// (with the thread's error set, naming |what|) for a handle this device
// did not hand out.
DC_INTERNAL dc_status_t dc__opencl_decode(dc__opencl_device_t* ocl,
                                          const void* handle, size_t offset,
                                          const char* what, cl_mem* out_mem,
                                          size_t* out_offset);
// Both sides of a copy, as dc__opencl_decode each.
DC_INTERNAL dc_status_t dc__opencl_decode_copy(dc__opencl_device_t* ocl,
                                               void* dst, size_t dst_offset,
                                               const void* src,
                                               size_t src_offset,
                                               cl_mem* dst_mem, size_t* dst_at,
                                               cl_mem* src_mem, size_t* src_at);
// Releases the slot table (every buffer is gone) and the staging buffer,
// unmapping it on |queue|, which must still exist.
DC_INTERNAL void dc__opencl_memory_teardown(dc__opencl_device_t* ocl);

// Kernels (opencl_program.c, opencl_dispatch.c).
DC_INTERNAL dc_status_t dc__opencl_program_build(dc_device_t* device,
                                                 dc_program_build_t* build);
DC_INTERNAL void dc__opencl_program_destroy(dc_device_t* device,
                                            dc_program_t* program);
DC_INTERNAL void dc__opencl_program_cache_stats(dc_device_t* device,
                                                dc_program_cache_stats_t* out);
DC_INTERNAL dc_status_t dc__opencl_dispatch(dc_device_t* device,
                                            dc_kernel_t* kernel,
                                            const dc_launch_t* launch,
                                            void* const* args,
                                            const size_t* lengths);
DC_INTERNAL size_t dc__opencl_preferred_group_size(dc_device_t* device,
                                                   const dc_kernel_t* kernel,
                                                   size_t work_items,
                                                   size_t local_memory);
// Frees the kernel state: the built programs, the checked-mode states and
// the cache.
DC_INTERNAL void dc__opencl_kernels_teardown(dc__opencl_device_t* ocl);

// Device queues and events (opencl_queue.c; the queued dispatch in
// opencl_dispatch.c): a queue is an in-order cl_command_queue, an event
// the cl_event of the latest marker recorded for it.
DC_INTERNAL dc_status_t dc__opencl_queue_create(dc_device_t* device,
                                                dc_priority_t priority,
                                                dc_device_queue_t** out_queue);
DC_INTERNAL void dc__opencl_queue_destroy(dc_device_t* device,
                                          dc_device_queue_t* queue);
DC_INTERNAL dc_status_t dc__opencl_dispatch_queued(
    dc_device_t* device, dc_device_queue_t* queue, dc_kernel_t* kernel,
    const dc_launch_t* launch, void* const* args, const size_t* lengths);
DC_INTERNAL dc_status_t dc__opencl_queue_finish(dc_device_t* device,
                                                dc_device_queue_t* queue);
DC_INTERNAL dc_status_t dc__opencl_queue_copy(dc_device_t* device,
                                              dc_device_queue_t* queue,
                                              void* dst, size_t dst_offset,
                                              const void* src,
                                              size_t src_offset, size_t size);
DC_INTERNAL dc_status_t dc__opencl_event_create(dc_device_t* device,
                                                dc_device_event_t** out_event);
DC_INTERNAL void dc__opencl_event_destroy(dc_device_t* device,
                                          dc_device_event_t* event);
DC_INTERNAL dc_status_t dc__opencl_event_record(dc_device_t* device,
                                                dc_device_queue_t* queue,
                                                dc_device_event_t* event);
DC_INTERNAL dc_status_t dc__opencl_event_wait(dc_device_t* device,
                                              dc_device_queue_t* queue,
                                              dc_device_event_t* event);

#endif  // DC_OPENCL_INTERNAL_H_

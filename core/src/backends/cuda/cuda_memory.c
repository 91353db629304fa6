// cuda_memory.c: buffer memory on a CUDA device, and the transfers
// between it and the host.
//
// How the storage modes map:
//   private  device memory: from the device's stream-ordered pool
//            (cuMemAllocFromPoolAsync on the device stream), else from
//            cuMemAlloc when the GPU has no pools.
//   shared   pinned host memory mapped for the GPU (cuMemHostAlloc,
//            PORTABLE | DEVICEMAP). Under unified addressing, which every
//            cuda device has (cuda_device.c checks), such memory has the
//            same address on the device as on the host (the driver API
//            guarantees it), so the handle is both and host_pointer is the
//            identity. Kernels reach it over the bus.
//   managed  cuMemAllocManaged, attached globally: pages migrate to
//            whichever side touches them. It is refused when the GPU has
//            less free memory than asked, so managed memory never
//            oversubscribes the GPU (which would thrash instead of fail).
//
// Every handle is a device address (a CUdeviceptr cast to void*), so a
// copy between any two is one cuMemcpyAsync that the driver routes by
// address. Host memory the engine pinned (a CPU-device buffer's block,
// host_pins.h) moves by one DMA each way. Other writes from host memory
// go through a pinned staging buffer in two halves: while the copy engine
// moves one, the host fills the other (the worker pool's threads, for a
// large chunk); reads to other host memory come through the same halves,
// drained the same way, which is twice as fast as the driver's own path
// for pageable memory (docs/benchmarks.md). Shared memory is the host's: it is
// read, written and filled with memcpy directly, as the device stream is
// idle between operations.
//
// Every operation ends with a synchronize of the device stream (see
// cuda_internal.h); on failure too, so that no copy still reads the
// staging buffer when the next operation reuses it.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "cuda_internal.h"

// Each staging half grows, as transfers need it, from 64 KiB up to 16 MiB:
// large enough that a chunk's copy (~0.3 ms over PCIe 5) dwarfs the cost
// of waiting for it, small enough to stay a modest amount of pinned
// memory per device.
#define STAGING_MIN_HALF ((size_t)64 << 10)
#define STAGING_MAX_HALF ((size_t)16 << 20)

// An overlapping copy of more than this many pieces of its shift goes
// through a temporary instead, of at most OVERLAP_TEMP_MAX bytes.
#define OVERLAP_DIRECT_PIECES 16u
#define OVERLAP_TEMP_MAX ((size_t)64 << 20)

static dc__cuda_device_t* cuda_of(dc_device_t* device) {
  return (dc__cuda_device_t*)device;
}

// Begins an operation on the device stream; end it with dc__cuda_leave.
static dc_status_t begin(dc__cuda_device_t* cuda) {
  pthread_mutex_lock(&cuda->lock);
  return dc__cuda_enter(cuda);
}

// Ends the stream's part of an operation: synchronizes on success (the
// failure, if any, named by |what|); after a failure, drains the stream
// and keeps the first failure's message.
static dc_status_t finish(dc__cuda_device_t* cuda, dc_status_t status,
                          const char* what) {
  if (status == DC_OK) return dc__cuda_sync(cuda, what);
  cuda->api->cu->stream_synchronize(cuda->stream);
  return status;
}

// One asynchronous copy on the device stream, between any two addresses.
static dc_status_t copy_async(dc__cuda_device_t* cuda, CUdeviceptr dst,
                              CUdeviceptr src, size_t size) {
  CUresult r = cuda->api->cu->memcpy_async(dst, src, size, cuda->stream);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuMemcpyAsync of %zu bytes", size);
  }
  return DC_OK;
}

// Whether |memory| is host memory (a shared buffer). The query touches
// neither the stream nor the staging buffer, so it takes no lock.
static dc_status_t is_host_memory(dc__cuda_device_t* cuda,
                                  const void* memory, bool* out_host) {
  DC_RETURN_IF_ERROR(dc__cuda_enter(cuda));
  unsigned int type = 0;
  CUresult r = cuda->api->cu->pointer_get_attribute(
      &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dc__cuda_address(memory, 0));
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuPointerGetAttribute of %p", memory);
  }
  *out_host = type == CU_MEMORYTYPE_HOST;
  return DC_OK;
}

//===-- Allocation ------------------------------------------------------===//

// Private memory. When the pool runs out, it may still hold freed memory
// mapped in pieces that do not fit the request: it gives all of it back
// to the driver and tries once more.
static dc_status_t allocate_private(dc__cuda_device_t* cuda, size_t size,
                                    CUdeviceptr* out) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  if (cuda->pool == NULL) {
    CUresult r = cu->mem_alloc(out, size);
    if (r == CUDA_SUCCESS) return DC_OK;
    return dc__cuda_failed(cuda, r, "cuMemAlloc of %zu bytes", size);
  }
  CUresult r =
      cu->mem_alloc_from_pool_async(out, size, cuda->pool, cuda->stream);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    DC_RETURN_IF_ERROR(dc__cuda_sync(cuda, "trimming the memory pool"));
    cu->mem_pool_trim_to(cuda->pool, 0);
    r = cu->mem_alloc_from_pool_async(out, size, cuda->pool, cuda->stream);
  }
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(cuda, r, "cuMemAllocFromPoolAsync of %zu bytes",
                         size);
}

static dc_status_t allocate_shared(dc__cuda_device_t* cuda, size_t size,
                                   CUdeviceptr* out) {
  void* host = NULL;
  CUresult r = cuda->api->cu->mem_host_alloc(
      &host, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuMemHostAlloc of %zu bytes (shared)",
                           size);
  }
  *out = dc__cuda_address(host, 0);
  return DC_OK;
}

// The GPU's free memory; the pool's idle memory is handed back first, as
// the driver counts it as used.
static dc_status_t free_device_memory(dc__cuda_device_t* cuda,
                                      size_t* out_free) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  if (cuda->pool != NULL) {
    DC_RETURN_IF_ERROR(dc__cuda_sync(cuda, "trimming the memory pool"));
    cu->mem_pool_trim_to(cuda->pool, 0);
  }
  size_t total = 0;
  CUresult r = cu->mem_get_info(out_free, &total);
  if (r != CUDA_SUCCESS) return dc__cuda_failed(cuda, r, "cuMemGetInfo");
  return DC_OK;
}

static dc_status_t allocate_managed(dc__cuda_device_t* cuda, size_t size,
                                    CUdeviceptr* out) {
  const char* name = cuda->base.info.name;
  if (!cuda->managed_memory) {
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "%s: managed memory is not available with this GPU and "
                   "system; use private or shared storage",
                   name);
  }
  size_t free_bytes = 0;
  DC_RETURN_IF_ERROR(free_device_memory(cuda, &free_bytes));
  if (size > free_bytes) {
    char want[32], have[32];
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "%s: a managed allocation of %s does not fit in the %s "
                   "the GPU has free (managed memory is never "
                   "oversubscribed)",
                   name, dc__format_bytes(size, want, sizeof(want)),
                   dc__format_bytes(free_bytes, have, sizeof(have)));
  }
  CUresult r =
      cuda->api->cu->mem_alloc_managed(out, size, CU_MEM_ATTACH_GLOBAL);
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(cuda, r, "cuMemAllocManaged of %zu bytes", size);
}

static dc_status_t allocate(dc__cuda_device_t* cuda, size_t size,
                            dc_storage_mode_t mode, CUdeviceptr* out) {
  switch (mode) {
    case DC_STORAGE_SHARED:
      return allocate_shared(cuda, size, out);
    case DC_STORAGE_MANAGED:
      return allocate_managed(cuda, size, out);
    case DC_STORAGE_PRIVATE:
      break;
  }
  return allocate_private(cuda, size, out);
}

dc_status_t dc__cuda_allocate(dc_device_t* device, size_t size,
                              dc_storage_mode_t mode, void** out_memory) {
  dc__cuda_device_t* cuda = cuda_of(device);
  CUdeviceptr memory = 0;
  dc_status_t status = begin(cuda);
  if (status == DC_OK) status = allocate(cuda, size, mode, &memory);
  *out_memory = status == DC_OK ? (void*)(uintptr_t)memory : NULL;
  return dc__cuda_leave(cuda, status);
}

static dc_status_t release(dc__cuda_device_t* cuda, CUdeviceptr memory,
                           size_t size, dc_storage_mode_t mode) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = CUDA_SUCCESS;
  const char* call = "cuMemFree";
  if (mode == DC_STORAGE_SHARED) {
    call = "cuMemFreeHost";
    r = cu->mem_free_host((void*)(uintptr_t)memory);
  } else if (mode == DC_STORAGE_PRIVATE && cuda->pool != NULL) {
    call = "cuMemFreeAsync";
    r = cu->mem_free_async(memory, cuda->stream);
  } else {
    r = cu->mem_free(memory);
  }
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(cuda, r, "%s of %zu bytes (%s)", call, size,
                         dc_storage_mode_name(mode));
}

// A free cannot fail the caller (it returns nothing): a failure is
// logged, and the caller's own error message is left as it was. On a
// lost device every free fails; those go to the debug level only, and do
// not mark the device lost: frees run while the context is destroyed,
// after its breakers are gone, and the next real operation reports the
// loss anyway.
void dc__cuda_deallocate(dc_device_t* device, void* memory, size_t size,
                         dc_storage_mode_t mode) {
  dc__cuda_device_t* cuda = cuda_of(device);
  char caller_error[1024];
  dc__strlcpy(caller_error, dc_last_error(), sizeof(caller_error));
  dc_status_t status = begin(cuda);
  if (status == DC_OK) {
    status = release(cuda, dc__cuda_address(memory, 0), size, mode);
  }
  if (status != DC_OK) {
    dc_log_level_t level =
        status == DC_ERR_DEVICE_LOST ? DC_LOG_DEBUG : DC_LOG_WARN;
    dc_context_log(device->context, level, "cuda", "%s", dc_last_error());
  }
  pthread_mutex_unlock(&cuda->lock);
  dc__error_set_raw(caller_error);
}

void* dc__cuda_host_pointer(dc_device_t* device, void* memory,
                            dc_storage_mode_t mode) {
  (void)device;
  return mode == DC_STORAGE_PRIVATE ? NULL : memory;
}

//===-- Staging ---------------------------------------------------------===//

static dc_status_t create_staging_events(dc__cuda_device_t* cuda) {
  for (int h = 0; h < 2; ++h) {
    if (cuda->staging_done[h] != NULL) continue;
    CUresult r = cuda->api->cu->event_create(&cuda->staging_done[h],
                                             CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
      return dc__cuda_failed(cuda, r, "cuEventCreate (staging)");
    }
  }
  return DC_OK;
}

// Makes the staging buffer's halves big enough for |transfer| bytes (up
// to STAGING_MAX_HALF) and returns their size. The stream is idle, so an
// old buffer can go at once. If a bigger one cannot be pinned, the old
// one still serves, in more chunks.
static dc_status_t reserve_staging(dc__cuda_device_t* cuda, size_t transfer,
                                   size_t* out_half) {
  DC_RETURN_IF_ERROR(create_staging_events(cuda));
  size_t half = STAGING_MIN_HALF;
  while (half < transfer && half < STAGING_MAX_HALF) half *= 2;
  if (cuda->staging_size < 2 * half) {
    const dc__cuda_driver_t* cu = cuda->api->cu;
    void* fresh = NULL;
    CUresult r = cu->mem_host_alloc(&fresh, 2 * half, 0);
    if (r == CUDA_SUCCESS) {
      if (cuda->staging != NULL) cu->mem_free_host(cuda->staging);
      cuda->staging = fresh;
      cuda->staging_size = 2 * half;
    } else if (cuda->staging == NULL) {
      return dc__cuda_failed(cuda, r,
                             "cuMemHostAlloc of %zu bytes of staging",
                             2 * half);
    }
  }
  *out_half = cuda->staging_size / 2;
  return DC_OK;
}

void dc__cuda_memory_teardown(dc__cuda_device_t* cuda) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  for (int i = 0; i < 2; ++i) {
    if (cuda->lanes[i].stream != NULL) cu->stream_destroy(cuda->lanes[i].stream);
    cuda->lanes[i].stream = NULL;
  }
  if (cuda->staging != NULL) cu->mem_free_host(cuda->staging);
  cuda->staging = NULL;
  cuda->staging_size = 0;
  for (int h = 0; h < 2; ++h) {
    if (cuda->staging_done[h] == NULL) continue;
    cu->event_destroy(cuda->staging_done[h]);
    cuda->staging_done[h] = NULL;
  }
}

static char* staging_half(const dc__cuda_device_t* cuda, size_t half,
                          size_t index) {
  return (char*)cuda->staging + (index & 1) * half;
}

// Marks the point after which staging half |index| is free again.
static dc_status_t record_half(dc__cuda_device_t* cuda, size_t index) {
  CUresult r = cuda->api->cu->event_record(cuda->staging_done[index & 1],
                                           cuda->stream);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuEventRecord (staging)");
  }
  return DC_OK;
}

static dc_status_t wait_half(dc__cuda_device_t* cuda, size_t index) {
  CUresult r =
      cuda->api->cu->event_synchronize(cuda->staging_done[index & 1]);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuEventSynchronize (staging)");
  }
  return DC_OK;
}

//===-- Transfers -------------------------------------------------------===//

// Queues |size| bytes from |src| to device address |dst| through the
// staging halves in turn: a half is refilled once its previous chunk has
// left (the first two are free, the stream being idle).
static dc_status_t write_chunks(dc__cuda_device_t* cuda, CUdeviceptr dst,
                                const char* src, size_t size) {
  size_t half = 0;
  DC_RETURN_IF_ERROR(reserve_staging(cuda, size, &half));
  size_t index = 0;
  for (size_t done = 0; done < size; done += half, ++index) {
    size_t n = DC_MIN(half, size - done);
    if (index >= 2) DC_RETURN_IF_ERROR(wait_half(cuda, index));
    char* stage = staging_half(cuda, half, index);
    dc_context_host_copy(cuda->base.context, stage, src + done, n);
    CUresult r =
        cuda->api->cu->memcpy_htod_async(dst + done, stage, n, cuda->stream);
    if (r != CUDA_SUCCESS) {
      return dc__cuda_failed(cuda, r, "cuMemcpyHtoDAsync of %zu bytes", n);
    }
    DC_RETURN_IF_ERROR(record_half(cuda, index));
  }
  return DC_OK;
}

// Queues chunk |index| of a read into its staging half.
static dc_status_t queue_read_chunk(dc__cuda_device_t* cuda, CUdeviceptr src,
                                    size_t size, size_t half, size_t index) {
  size_t at = index * half;
  size_t n = DC_MIN(half, size - at);
  CUresult r = cuda->api->cu->memcpy_dtoh_async(
      staging_half(cuda, half, index), src + at, n, cuda->stream);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuMemcpyDtoHAsync of %zu bytes", n);
  }
  return record_half(cuda, index);
}

// Reads |size| bytes at device address |src| into |dst| through the
// staging halves: chunk i+1 is on its way into one half while the host
// drains chunk i from the other (over the worker pool, as writes fill
// them).
static dc_status_t read_chunks(dc__cuda_device_t* cuda, CUdeviceptr src,
                               char* dst, size_t size) {
  size_t half = 0;
  DC_RETURN_IF_ERROR(reserve_staging(cuda, size, &half));
  size_t chunks = (size + half - 1) / half;
  DC_RETURN_IF_ERROR(queue_read_chunk(cuda, src, size, half, 0));
  for (size_t index = 0; index < chunks; ++index) {
    if (index + 1 < chunks) {
      DC_RETURN_IF_ERROR(queue_read_chunk(cuda, src, size, half, index + 1));
    }
    DC_RETURN_IF_ERROR(wait_half(cuda, index));
    size_t at = index * half;
    dc_context_host_copy(cuda->base.context, dst + at,
                         staging_half(cuda, half, index),
                         DC_MIN(half, size - at));
  }
  return DC_OK;
}

dc_status_t dc__cuda_write(dc_device_t* device, void* memory, size_t offset,
                           const void* src, size_t size) {
  dc__cuda_device_t* cuda = cuda_of(device);
  bool host = false;
  dc_status_t status = is_host_memory(cuda, memory, &host);
  if (status != DC_OK) return status;
  if (host) {
    memcpy((char*)memory + offset, src, size);
    return DC_OK;
  }
  char what[64];
  snprintf(what, sizeof(what), "write of %zu bytes", size);
  status = begin(cuda);
  if (status == DC_OK) {
    status = write_chunks(cuda, dc__cuda_address(memory, offset), src, size);
    status = finish(cuda, status, what);
  }
  return dc__cuda_leave(cuda, status);
}

dc_status_t dc__cuda_read(dc_device_t* device, const void* memory,
                          size_t offset, void* dst, size_t size) {
  dc__cuda_device_t* cuda = cuda_of(device);
  bool host = false;
  dc_status_t status = is_host_memory(cuda, memory, &host);
  if (status != DC_OK) return status;
  if (host) {
    memcpy(dst, (const char*)memory + offset, size);
    return DC_OK;
  }
  char what[64];
  snprintf(what, sizeof(what), "read of %zu bytes", size);
  status = begin(cuda);
  if (status == DC_OK) {
    status = read_chunks(cuda, dc__cuda_address(memory, offset), dst, size);
    status = finish(cuda, status, what);
  }
  return dc__cuda_leave(cuda, status);
}

//===-- Pinned host memory ----------------------------------------------===//
// Registered portable, so a pin made through one GPU serves them all. A
// transfer with pinned memory is one DMA on its direction's lane: no
// staging, no host copy, and no wait for the device lock.

dc_status_t dc__cuda_pin(dc_device_t* device, void* host, size_t size) {
  dc__cuda_device_t* cuda = cuda_of(device);
  DC_RETURN_IF_ERROR(dc__cuda_enter(cuda));
  CUresult r = cuda->api->cu->mem_host_register(host, size,
                                                CU_MEMHOSTREGISTER_PORTABLE);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuMemHostRegister of %zu bytes", size);
  }
  return DC_OK;
}

// A failure is logged: the memory is about to be freed either way.
void dc__cuda_unpin(dc_device_t* device, void* host, size_t size) {
  dc__cuda_device_t* cuda = cuda_of(device);
  dc__saved_error_t caller_error;
  dc__error_save(&caller_error);
  dc_status_t status = dc__cuda_enter(cuda);
  if (status == DC_OK) {
    CUresult r = cuda->api->cu->mem_host_unregister(host);
    if (r != CUDA_SUCCESS) {
      status = dc__cuda_failed(cuda, r, "cuMemHostUnregister of %zu bytes",
                               size);
    }
  }
  if (status != DC_OK) {
    dc_context_log(device->context, DC_LOG_WARN, "cuda", "%s",
                   dc_last_error());
  }
  dc__error_restore(&caller_error);
}

// Copies |size| bytes between device address |device| and pinned host
// memory |host| on lane |to_host| (0: to the GPU) and waits for it.
static dc_status_t lane_copy(dc__cuda_device_t* cuda, bool to_host,
                             CUdeviceptr device, void* host, size_t size) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  pthread_mutex_lock(&cuda->lanes[to_host].lock);
  CUstream* stream = &cuda->lanes[to_host].stream;
  dc_status_t status = dc__cuda_enter(cuda);
  CUresult r = CUDA_SUCCESS;
  if (status == DC_OK && *stream == NULL) {
    r = cu->stream_create(stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
      *stream = NULL;
      status = dc__cuda_failed(cuda, r, "cuStreamCreate (copy lane)");
    }
  }
  if (status == DC_OK) {
    r = to_host ? cu->memcpy_dtoh_async(host, device, size, *stream)
                : cu->memcpy_htod_async(device, host, size, *stream);
    if (r != CUDA_SUCCESS) {
      status = dc__cuda_failed(cuda, r, "%s of %zu pinned bytes",
                               to_host ? "cuMemcpyDtoHAsync"
                                       : "cuMemcpyHtoDAsync",
                               size);
    }
  }
  if (status == DC_OK) {
    status = dc__cuda_wait(cuda, *stream,
                           to_host ? "read into pinned memory"
                                   : "write from pinned memory");
  } else if (*stream != NULL) {
    cu->stream_synchronize(*stream);  // nothing of it may still run
  }
  pthread_mutex_unlock(&cuda->lanes[to_host].lock);
  return dc__cuda_settle(cuda, status);
}

dc_status_t dc__cuda_write_pinned(dc_device_t* device, void* memory,
                                  size_t offset, const void* host,
                                  size_t size) {
  return lane_copy(cuda_of(device), false, dc__cuda_address(memory, offset),
                   (void*)host, size);
}

dc_status_t dc__cuda_read_pinned(dc_device_t* device, const void* memory,
                                 size_t offset, void* host, size_t size) {
  return lane_copy(cuda_of(device), true, dc__cuda_address(memory, offset), host,
                   size);
}

//===-- Fill ------------------------------------------------------------===//

// The shortest repeat of |pattern| among 1, 2 and 4 bytes, or its whole
// size when it has none (an f64 value, a 3-byte pattern: 3).
static size_t pattern_period(const unsigned char* pattern, size_t size) {
  for (size_t period = 1; period <= 4; period *= 2) {
    if (size % period != 0) continue;
    bool repeats = true;
    for (size_t i = period; i < size && repeats; ++i) {
      repeats = pattern[i] == pattern[i % period];
    }
    if (repeats) return period;
  }
  return size;
}

// Fills host memory: the pattern once, then the filled prefix doubled.
static void fill_host(char* dst, size_t size, const unsigned char* pattern,
                      size_t pattern_size) {
  if (pattern_period(pattern, pattern_size) == 1) {
    memset(dst, pattern[0], size);
    return;
  }
  memcpy(dst, pattern, pattern_size);
  for (size_t done = pattern_size; done < size;) {
    size_t n = DC_MIN(done, size - done);
    memcpy(dst + done, dst, n);
    done += n;
  }
}

// cuMemsetD8/D16/D32 for a |period|-byte value at an address aligned to
// it.
static dc_status_t fill_with_memset(dc__cuda_device_t* cuda, CUdeviceptr dst,
                                    size_t size, const unsigned char* pattern,
                                    size_t period) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = CUDA_SUCCESS;
  if (period == 1) {
    r = cu->memset_d8_async(dst, pattern[0], size, cuda->stream);
  } else if (period == 2) {
    uint16_t value;
    memcpy(&value, pattern, sizeof(value));
    r = cu->memset_d16_async(dst, value, size / 2, cuda->stream);
  } else {
    uint32_t value;
    memcpy(&value, pattern, sizeof(value));
    r = cu->memset_d32_async(dst, value, size / 4, cuda->stream);
  }
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(cuda, r, "cuMemsetD%zuAsync of %zu bytes",
                         period * 8, size);
}

// Any other pattern: the first staging half's worth of whole patterns
// (or one pattern, if it is larger) goes up from the host, then the
// filled prefix is doubled by device-to-device copies, so a fill of any
// size crosses the bus once and takes O(log n) copies.
static dc_status_t fill_by_doubling(dc__cuda_device_t* cuda, CUdeviceptr dst,
                                    size_t size,
                                    const unsigned char* pattern,
                                    size_t pattern_size) {
  size_t half = 0;
  DC_RETURN_IF_ERROR(reserve_staging(cuda, size, &half));
  size_t first = DC_MIN(size, half - half % pattern_size);
  if (pattern_size > half) {
    first = pattern_size;
    DC_RETURN_IF_ERROR(write_chunks(cuda, dst, (const char*)pattern, first));
  } else {
    fill_host(cuda->staging, first, pattern, pattern_size);
    CUresult r = cuda->api->cu->memcpy_htod_async(dst, cuda->staging, first,
                                                  cuda->stream);
    if (r != CUDA_SUCCESS) {
      return dc__cuda_failed(cuda, r, "cuMemcpyHtoDAsync of %zu bytes",
                             first);
    }
  }
  for (size_t done = first; done < size;) {
    size_t n = DC_MIN(done, size - done);
    DC_RETURN_IF_ERROR(copy_async(cuda, dst + done, dst, n));
    done += n;
  }
  return DC_OK;
}

static dc_status_t fill_device(dc__cuda_device_t* cuda, CUdeviceptr dst,
                               size_t size, const unsigned char* pattern,
                               size_t pattern_size) {
  size_t period = pattern_period(pattern, pattern_size);
  bool settable = period == 1 || period == 2 || period == 4;
  if (settable && dst % period == 0 && size % period == 0) {
    return fill_with_memset(cuda, dst, size, pattern, period);
  }
  return fill_by_doubling(cuda, dst, size, pattern, pattern_size);
}

dc_status_t dc__cuda_fill(dc_device_t* device, void* memory, size_t offset,
                          size_t size, const void* pattern,
                          size_t pattern_size) {
  dc__cuda_device_t* cuda = cuda_of(device);
  bool host = false;
  dc_status_t status = is_host_memory(cuda, memory, &host);
  if (status != DC_OK) return status;
  if (host) {
    fill_host((char*)memory + offset, size, pattern, pattern_size);
    return DC_OK;
  }
  char what[96];
  snprintf(what, sizeof(what), "fill of %zu bytes with a %zu-byte pattern",
           size, pattern_size);
  status = begin(cuda);
  if (status == DC_OK) {
    status = fill_device(cuda, dc__cuda_address(memory, offset), size, pattern,
                         pattern_size);
    status = finish(cuda, status, what);
  }
  return dc__cuda_leave(cuda, status);
}

//===-- Copy ------------------------------------------------------------===//

// Copies |size| bytes from |src| to |dst| in pieces of |piece| bytes, in
// the order that never overwrites a source byte before it is read: front
// to back when moving down, back to front when moving up. With |via|
// (a scratch address of |piece| bytes) each piece goes through it, which
// allows any piece size; without it, pieces must be no longer than the
// shift, so that a piece's source and destination do not overlap.
static dc_status_t copy_in_pieces(dc__cuda_device_t* cuda, CUdeviceptr dst,
                                  CUdeviceptr src, size_t size, size_t piece,
                                  CUdeviceptr via) {
  bool front_to_back = dst < src;
  for (size_t done = 0; done < size;) {
    size_t n = DC_MIN(piece, size - done);
    size_t at = front_to_back ? done : size - done - n;
    if (via != 0) {
      DC_RETURN_IF_ERROR(copy_async(cuda, via, src + at, n));
      DC_RETURN_IF_ERROR(copy_async(cuda, dst + at, via, n));
    } else {
      DC_RETURN_IF_ERROR(copy_async(cuda, dst + at, src + at, n));
    }
    done += n;
  }
  return DC_OK;
}

// A scratch device buffer for an overlapping copy; freed in stream order
// by release_scratch. DC_ERR_OUT_OF_MEMORY when the GPU has no room.
static dc_status_t get_scratch(dc__cuda_device_t* cuda, size_t size,
                               CUdeviceptr* out) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = cuda->pool != NULL
                   ? cu->mem_alloc_from_pool_async(out, size, cuda->pool,
                                                   cuda->stream)
                   : cu->mem_alloc(out, size);
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(cuda, r, "allocating %zu bytes of copy scratch",
                         size);
}

// Without a pool, cuMemFree must wait for the copies that use it.
static dc_status_t release_scratch(dc__cuda_device_t* cuda,
                                   CUdeviceptr scratch) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = CUDA_SUCCESS;
  if (cuda->pool != NULL) {
    r = cu->mem_free_async(scratch, cuda->stream);
  } else {
    r = cu->stream_synchronize(cuda->stream);
    if (r == CUDA_SUCCESS) r = cu->mem_free(scratch);
  }
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(cuda, r, "freeing the copy scratch");
}

// CUDA leaves overlapping copies undefined. A shift of at least a
// sixteenth of the size is copied directly in shift-sized pieces; a
// smaller one goes through a device scratch buffer (up to
// OVERLAP_TEMP_MAX), else, when the GPU has no room for it, through the
// pinned staging buffer.
static dc_status_t copy_overlapping(dc__cuda_device_t* cuda, CUdeviceptr dst,
                                    CUdeviceptr src, size_t size) {
  size_t shift = dst > src ? dst - src : src - dst;
  if (size / shift < OVERLAP_DIRECT_PIECES) {
    return copy_in_pieces(cuda, dst, src, size, shift, 0);
  }
  size_t piece = DC_MIN(size, OVERLAP_TEMP_MAX);
  CUdeviceptr scratch = 0;
  dc_status_t status = get_scratch(cuda, piece, &scratch);
  if (status == DC_OK) {
    status = copy_in_pieces(cuda, dst, src, size, piece, scratch);
    dc_status_t freed = release_scratch(cuda, scratch);
    return status != DC_OK ? status : freed;
  }
  if (status != DC_ERR_OUT_OF_MEMORY) return status;
  size_t half = 0;
  DC_RETURN_IF_ERROR(reserve_staging(cuda, size, &half));
  return copy_in_pieces(cuda, dst, src, size, 2 * half,
                        dc__cuda_address(cuda->staging, 0));
}

dc_status_t dc__cuda_copy(dc_device_t* device, void* dst, size_t dst_offset,
                          const void* src, size_t src_offset, size_t size) {
  dc__cuda_device_t* cuda = cuda_of(device);
  CUdeviceptr to = dc__cuda_address(dst, dst_offset);
  CUdeviceptr from = dc__cuda_address(src, src_offset);
  if (to == from) return DC_OK;
  char what[64];
  snprintf(what, sizeof(what), "copy of %zu bytes", size);
  dc_status_t status = begin(cuda);
  if (status == DC_OK) {
    bool overlap = to < from + size && from < to + size;
    status = overlap ? copy_overlapping(cuda, to, from, size)
                     : copy_async(cuda, to, from, size);
    status = finish(cuda, status, what);
  }
  return dc__cuda_leave(cuda, status);
}

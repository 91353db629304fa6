// opencl_memory.c: buffer memory on an OpenCL device, as encoded handles.
//
// How the storage modes map:
//   private  a cl_mem of the device's context (CL_MEM_READ_WRITE).
//   shared   refused: OpenCL 1.2 lets the host see a buffer only while
//   managed  it is mapped, and a kernel may not use a mapped buffer, so
//            no memory is both host-visible and usable by kernels at
//            once (host_pointer is always NULL).
//
// A handle is (slot << DC_OPENCL_OFFSET_BITS) | byte offset, slot >= 1
// (opencl_internal.h): the core adds view offsets to it as to an address,
// and every operation decodes it into the cl_mem and the offset the
// driver takes. Transfers are blocking calls on the device queue; fill
// and copy wait for the queue, so every operation has finished when it
// returns, as the memory table requires.
//
// A write or read of STAGE_MIN bytes or more on a device with memory of
// its own (stage_transfers) goes through pinned host memory the driver
// can move at the bus's speed: two halves of a CL_MEM_ALLOC_HOST_PTR
// buffer, mapped once. While the driver moves one half, the host fills
// or drains the other (over the worker pool: dc_context_host_copy),
// which is faster than the driver's own path for pageable memory both
// ways (docs/backends.md).
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "opencl_internal.h"

//===-- Slots -----------------------------------------------------------===//

static cl_mem* slot_entry(dc__opencl_device_t* ocl, uint32_t slot) {
  cl_mem* chunk = atomic_load_explicit(
      &ocl->chunks[(slot - 1) / DC_OPENCL_SLOT_CHUNK], memory_order_acquire);
  return chunk == NULL ? NULL : &chunk[(slot - 1) % DC_OPENCL_SLOT_CHUNK];
}

// Takes a free slot for |mem| (a returned one first).
static dc_status_t take_slot(dc__opencl_device_t* ocl, cl_mem mem,
                             uint32_t* out_slot) {
  dc_status_t st = DC_OK;
  pthread_mutex_lock(&ocl->slots_lock);
  uint32_t slot = 0;
  if (ocl->free_count > 0) {
    slot = ocl->free_slots[--ocl->free_count];
  } else if (ocl->slots_used == DC_OPENCL_MAX_SLOTS) {
    st = DC_FAIL(DC_ERR_RESOURCE_EXHAUSTED,
                 "%s: %u buffers are allocated already, the most an "
                 "encoded handle can name",
                 ocl->base.info.name, DC_OPENCL_MAX_SLOTS);
  } else {
    slot = ocl->slots_used + 1;
    uint32_t c = (slot - 1) / DC_OPENCL_SLOT_CHUNK;
    if (atomic_load(&ocl->chunks[c]) == NULL) {
      cl_mem* chunk = dc_allocator_calloc(ocl->allocator,
                                          DC_OPENCL_SLOT_CHUNK,
                                          sizeof(cl_mem));
      if (chunk == NULL) {
        st = DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "%s: no memory for the buffer table",
                     ocl->base.info.name);
      } else {
        atomic_store_explicit(&ocl->chunks[c], chunk, memory_order_release);
      }
    }
    if (st == DC_OK) ocl->slots_used = slot;
  }
  if (st == DC_OK) {
    *slot_entry(ocl, slot) = mem;
    *out_slot = slot;
  }
  pthread_mutex_unlock(&ocl->slots_lock);
  return st;
}

// Gives |slot| back; a free list that cannot grow leaks the slot number
// (never the cl_mem), which only lowers the most buffers that can live.
static void give_slot(dc__opencl_device_t* ocl, uint32_t slot) {
  pthread_mutex_lock(&ocl->slots_lock);
  *slot_entry(ocl, slot) = NULL;
  if (ocl->free_count == ocl->free_capacity) {
    uint32_t capacity = ocl->free_capacity ? 2 * ocl->free_capacity : 256;
    uint32_t* grown =
        dc_allocator_malloc(ocl->allocator, capacity * sizeof(uint32_t));
    if (grown != NULL) {
      if (ocl->free_count > 0) {
        memcpy(grown, ocl->free_slots, ocl->free_count * sizeof(uint32_t));
      }
      dc_allocator_free(ocl->allocator, ocl->free_slots,
                        ocl->free_capacity * sizeof(uint32_t));
      ocl->free_slots = grown;
      ocl->free_capacity = capacity;
    }
  }
  if (ocl->free_count < ocl->free_capacity) {
    ocl->free_slots[ocl->free_count++] = slot;
  }
  pthread_mutex_unlock(&ocl->slots_lock);
}

void dc__opencl_memory_teardown(dc__opencl_device_t* ocl) {
  if (ocl->staging_host != NULL && ocl->queue != NULL) {
    ocl->cl->enqueue_unmap_mem_object(ocl->queue, ocl->staging,
                                      ocl->staging_host, 0, NULL, NULL);
    ocl->cl->finish(ocl->queue);
    ocl->staging_host = NULL;
  }
  if (ocl->staging != NULL) ocl->cl->release_mem_object(ocl->staging);
  ocl->staging = NULL;
  for (uint32_t c = 0; c < DC_OPENCL_SLOT_CHUNKS; ++c) {
    cl_mem* chunk = atomic_load(&ocl->chunks[c]);
    if (chunk == NULL) continue;
    dc_allocator_free(ocl->allocator, chunk,
                      DC_OPENCL_SLOT_CHUNK * sizeof(cl_mem));
    atomic_store(&ocl->chunks[c], NULL);
  }
  dc_allocator_free(ocl->allocator, ocl->free_slots,
                    ocl->free_capacity * sizeof(uint32_t));
  ocl->free_slots = NULL;
  ocl->free_count = ocl->free_capacity = 0;
}

dc_status_t dc__opencl_decode(dc__opencl_device_t* ocl, const void* handle,
                              size_t offset, const char* what,
                              cl_mem* out_mem, size_t* out_offset) {
  uint64_t h = (uint64_t)(uintptr_t)handle;
  uint64_t slot = h >> DC_OPENCL_OFFSET_BITS;
  cl_mem* entry = slot >= 1 && slot <= DC_OPENCL_MAX_SLOTS
                      ? slot_entry(ocl, (uint32_t)slot)
                      : NULL;
  if (entry == NULL || *entry == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: %s: 0x%llx is not a memory handle of this device",
                   ocl->base.info.name, what, (unsigned long long)h);
  }
  *out_mem = *entry;
  *out_offset = (size_t)(h & DC_OPENCL_OFFSET_MASK) + offset;
  return DC_OK;
}

//===-- The memory table ------------------------------------------------===//

dc_status_t dc__opencl_allocate(dc_device_t* device, size_t size,
                                dc_storage_mode_t mode, void** out_memory) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  *out_memory = NULL;
  if (mode != DC_STORAGE_PRIVATE) {
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "%s: %s storage is not available: OpenCL 1.2 memory is "
                   "visible to the host only while mapped, when kernels may "
                   "not use it; use private storage",
                   device->info.name, dc_storage_mode_name(mode));
  }
  if (size > ocl->max_alloc || size > DC_OPENCL_OFFSET_MASK) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "%s: %zu bytes are more than one allocation may hold "
                   "(%zu)",
                   device->info.name, size, ocl->max_alloc);
  }
  cl_int err = CL_SUCCESS;
  cl_mem mem =
      ocl->cl->create_buffer(ocl->context, CL_MEM_READ_WRITE, size, NULL, &err);
  if (mem == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateBuffer of %zu bytes", size);
  }
  uint32_t slot = 0;
  dc_status_t st = take_slot(ocl, mem, &slot);
  if (st != DC_OK) {
    ocl->cl->release_mem_object(mem);
    return st;
  }
  *out_memory = (void*)(uintptr_t)((uint64_t)slot << DC_OPENCL_OFFSET_BITS);
  return DC_OK;
}

void dc__opencl_deallocate(dc_device_t* device, void* memory, size_t size,
                           dc_storage_mode_t mode) {
  (void)size;
  (void)mode;
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_mem mem = NULL;
  size_t offset = 0;
  if (dc__opencl_decode(ocl, memory, 0, "deallocate", &mem, &offset) !=
      DC_OK) {
    return;  // the core gives back only what allocate gave
  }
  ocl->cl->release_mem_object(mem);
  give_slot(ocl, (uint32_t)((uint64_t)(uintptr_t)memory >>
                            DC_OPENCL_OFFSET_BITS));
}

void* dc__opencl_host_pointer(dc_device_t* device, void* memory,
                              dc_storage_mode_t mode) {
  (void)device;
  (void)memory;
  (void)mode;
  return NULL;  // private memory only: never visible to the host
}

//===-- Staged transfers ------------------------------------------------===//

// Transfers of at least STAGE_MIN bytes are staged, STAGE_HALF bytes at a
// time: each chunk costs a wait and a flush that, on NVIDIA's driver,
// held 4 MiB chunks to 21 GB/s where 16 MiB ones reach 30 (writes) and 39
// (reads); 32 MiB of pinned memory per device is modest. One transfer
// at a time: a staging buffer a direction, so that a write and a read
// ran at once, moved both at 29.6-29.7 GB/s together against 33.7-35.4
// one after the other on an H200, since the host's copies into and out
// of staging, not the bus, bound them (docs/benchmarks.md).
#define STAGE_MIN ((size_t)1 << 20)
#define STAGE_HALF ((size_t)16 << 20)

// Makes and maps the staging buffer, once. Called with staging_lock held.
static dc_status_t reserve_staging(dc__opencl_device_t* ocl) {
  if (ocl->staging_host != NULL) return DC_OK;
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_int err = CL_SUCCESS;
  if (ocl->staging == NULL) {
    ocl->staging = cl->create_buffer(ocl->context, CL_MEM_ALLOC_HOST_PTR,
                                     2 * STAGE_HALF, NULL, &err);
    if (ocl->staging == NULL) {
      return dc__opencl_failed(ocl, err, "staging buffer of %zu bytes",
                               2 * STAGE_HALF);
    }
  }
  ocl->staging_host = cl->enqueue_map_buffer(
      ocl->queue, ocl->staging, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
      2 * STAGE_HALF, 0, NULL, NULL, &err);
  if (ocl->staging_host == NULL) {
    return dc__opencl_failed(ocl, err, "mapping the staging buffer");
  }
  return DC_OK;
}

// Waits for |*event| (if any) and releases it.
static cl_int settle(dc__opencl_device_t* ocl, cl_event* event) {
  if (*event == NULL) return CL_SUCCESS;
  cl_int err = ocl->cl->wait_for_events(1, event);
  ocl->cl->release_event(*event);
  *event = NULL;
  return err;
}

// Waits for both halves' events; returns |err|, or the first failure of
// a wait when |err| is CL_SUCCESS.
static cl_int settle_both(dc__opencl_device_t* ocl, cl_event events[2],
                          cl_int err) {
  for (int h = 0; h < 2; ++h) {
    cl_int e = settle(ocl, &events[h]);
    if (err == CL_SUCCESS) err = e;
  }
  return err;
}

static char* staging_half(const dc__opencl_device_t* ocl, size_t index) {
  return ocl->staging_host + (index % 2) * STAGE_HALF;
}

// Writes |size| bytes from |src| to |mem| at |at| through the staging
// halves in turn: a half is refilled once its previous chunk has left.
// Returns only when no chunk is still reading a half, on failure too.
// Called with staging_lock held.
static dc_status_t write_staged(dc__opencl_device_t* ocl, cl_mem mem,
                                size_t at, const char* src, size_t size) {
  DC_RETURN_IF_ERROR(reserve_staging(ocl));
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_event left[2] = {NULL, NULL};  // each half's chunk on its way
  cl_int err = CL_SUCCESS;
  size_t done = 0, index = 0;
  for (; done < size && err == CL_SUCCESS; ++index) {
    size_t n = DC_MIN(STAGE_HALF, size - done);
    cl_event* half_left = &left[index % 2];
    err = settle(ocl, half_left);
    if (err != CL_SUCCESS) break;
    char* stage = staging_half(ocl, index);
    dc_context_host_copy(ocl->base.context, stage, src + done, n);
    err = cl->enqueue_write_buffer(ocl->queue, mem, CL_FALSE, at + done, n,
                                   stage, 0, NULL, half_left);
    if (err == CL_SUCCESS) err = cl->flush(ocl->queue);
    if (err == CL_SUCCESS) done += n;
  }
  err = settle_both(ocl, left, err);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "staged write of %zu bytes at %zu "
                             "(%zu written)", size, at, done);
  }
  return DC_OK;
}

// Queues chunk |index| of a read of |mem| from |at| into its half.
static cl_int queue_read_chunk(dc__opencl_device_t* ocl, cl_mem mem,
                               size_t at, size_t size, size_t index,
                               cl_event* arrived) {
  size_t from = index * STAGE_HALF;
  cl_int err = ocl->cl->enqueue_read_buffer(
      ocl->queue, mem, CL_FALSE, at + from, DC_MIN(STAGE_HALF, size - from),
      staging_half(ocl, index), 0, NULL, arrived);
  return err == CL_SUCCESS ? ocl->cl->flush(ocl->queue) : err;
}

// Reads |size| bytes of |mem| from |at| into |dst| through the staging
// halves: chunk i+1 is on its way into one half while the host drains
// chunk i from the other. Returns only when no chunk is still writing a
// half, on failure too. Called with staging_lock held.
static dc_status_t read_staged(dc__opencl_device_t* ocl, cl_mem mem,
                               size_t at, char* dst, size_t size) {
  DC_RETURN_IF_ERROR(reserve_staging(ocl));
  cl_event arrived[2] = {NULL, NULL};  // each half's chunk on its way
  size_t chunks = (size + STAGE_HALF - 1) / STAGE_HALF, index = 0;
  cl_int err = queue_read_chunk(ocl, mem, at, size, 0, &arrived[0]);
  for (; index < chunks && err == CL_SUCCESS; ++index) {
    if (index + 1 < chunks) {
      err = queue_read_chunk(ocl, mem, at, size, index + 1,
                             &arrived[(index + 1) % 2]);
    }
    if (err == CL_SUCCESS) err = settle(ocl, &arrived[index % 2]);
    if (err != CL_SUCCESS) break;
    size_t from = index * STAGE_HALF;
    dc_context_host_copy(ocl->base.context, dst + from,
                         staging_half(ocl, index),
                         DC_MIN(STAGE_HALF, size - from));
  }
  err = settle_both(ocl, arrived, err);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "staged read of %zu bytes at %zu "
                             "(%zu chunks of %zu read)", size, at, index,
                             chunks);
  }
  return DC_OK;
}

dc_status_t dc__opencl_write(dc_device_t* device, void* memory, size_t offset,
                             const void* src, size_t size) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_mem mem = NULL;  // set by dc__opencl_decode (for gcc -O3)
  size_t at = 0;
  DC_RETURN_IF_ERROR(dc__opencl_decode(ocl, memory, offset, "write", &mem, &at));
  if (ocl->stage_transfers && size >= STAGE_MIN) {
    pthread_mutex_lock(&ocl->staging_lock);
    dc_status_t st = write_staged(ocl, mem, at, src, size);
    pthread_mutex_unlock(&ocl->staging_lock);
    return st;
  }
  cl_int err = ocl->cl->enqueue_write_buffer(ocl->queue, mem, CL_TRUE, at,
                                             size, src, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "write of %zu bytes at %zu", size, at);
  }
  return DC_OK;
}

dc_status_t dc__opencl_read(dc_device_t* device, const void* memory,
                            size_t offset, void* dst, size_t size) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_mem mem = NULL;
  size_t at = 0;
  DC_RETURN_IF_ERROR(dc__opencl_decode(ocl, memory, offset, "read", &mem, &at));
  if (ocl->stage_transfers && size >= STAGE_MIN) {
    pthread_mutex_lock(&ocl->staging_lock);
    dc_status_t st = read_staged(ocl, mem, at, dst, size);
    pthread_mutex_unlock(&ocl->staging_lock);
    return st;
  }
  cl_int err = ocl->cl->enqueue_read_buffer(ocl->queue, mem, CL_TRUE, at, size,
                                            dst, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "read of %zu bytes at %zu", size, at);
  }
  return DC_OK;
}

// Waits for the device queue after a non-blocking command.
static dc_status_t finish(dc__opencl_device_t* ocl, const char* what) {
  cl_int err = ocl->cl->finish(ocl->queue);
  if (err != CL_SUCCESS) return dc__opencl_failed(ocl, err, "%s", what);
  return DC_OK;
}

// clEnqueueFillBuffer takes patterns of 1 to 128 bytes, a power of two,
// with an offset and size that are multiples of it. Any other pattern is
// written once and doubled by copies within the buffer (log2 copies).
static dc_status_t fill_by_doubling(dc__opencl_device_t* ocl, cl_mem mem,
                                    size_t at, size_t size,
                                    const void* pattern,
                                    size_t pattern_size) {
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_int err = cl->enqueue_write_buffer(ocl->queue, mem, CL_TRUE, at,
                                        pattern_size, pattern, 0, NULL, NULL);
  size_t done = pattern_size;
  while (err == CL_SUCCESS && done < size) {
    size_t step = DC_MIN(done, size - done);
    err = cl->enqueue_copy_buffer(ocl->queue, mem, mem, at, at + done, step,
                                  0, NULL, NULL);
    done += step;
  }
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "fill of %zu bytes with a %zu-byte "
                             "pattern", size, pattern_size);
  }
  return finish(ocl, "fill");
}

dc_status_t dc__opencl_fill(dc_device_t* device, void* memory, size_t offset,
                            size_t size, const void* pattern,
                            size_t pattern_size) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_mem mem = NULL;
  size_t at = 0;
  DC_RETURN_IF_ERROR(dc__opencl_decode(ocl, memory, offset, "fill", &mem, &at));
  if (size == 0) return DC_OK;
  bool native = pattern_size <= 128 &&
                (pattern_size & (pattern_size - 1)) == 0 &&
                at % pattern_size == 0 && size % pattern_size == 0;
  if (!native) {
    return fill_by_doubling(ocl, mem, at, size, pattern, pattern_size);
  }
  cl_int err = ocl->cl->enqueue_fill_buffer(ocl->queue, mem, pattern,
                                            pattern_size, at, size, 0, NULL,
                                            NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "clEnqueueFillBuffer of %zu bytes",
                             size);
  }
  return finish(ocl, "fill");
}

// Copies whose ranges overlap in one cl_mem, which clEnqueueCopyBuffer
// refuses (CL_MEM_COPY_OVERLAP): in pieces no longer than the distance
// between the two ranges, ordered so that no piece reads bytes an
// earlier piece wrote.
static cl_int copy_overlapping(dc__opencl_device_t* ocl, cl_mem mem,
                               size_t dst, size_t src, size_t size) {
  size_t distance = dst > src ? dst - src : src - dst;
  cl_int err = CL_SUCCESS;
  for (size_t done = 0; done < size && err == CL_SUCCESS;) {
    size_t step = DC_MIN(distance, size - done);
    // Forwards when moving down, backwards when moving up.
    size_t at = dst < src ? done : size - done - step;
    err = ocl->cl->enqueue_copy_buffer(ocl->queue, mem, mem, src + at,
                                       dst + at, step, 0, NULL, NULL);
    done += step;
  }
  return err;
}

dc_status_t dc__opencl_decode_copy(dc__opencl_device_t* ocl, void* dst,
                                   size_t dst_offset, const void* src,
                                   size_t src_offset, cl_mem* dst_mem,
                                   size_t* dst_at, cl_mem* src_mem,
                                   size_t* src_at) {
  DC_RETURN_IF_ERROR(
      dc__opencl_decode(ocl, dst, dst_offset, "copy", dst_mem, dst_at));
  return dc__opencl_decode(ocl, src, src_offset, "copy", src_mem, src_at);
}

dc_status_t dc__opencl_copy(dc_device_t* device, void* dst, size_t dst_offset,
                            const void* src, size_t src_offset, size_t size) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_mem dst_mem = NULL, src_mem = NULL;
  size_t dst_at = 0, src_at = 0;
  DC_RETURN_IF_ERROR(dc__opencl_decode_copy(ocl, dst, dst_offset, src,
                                            src_offset, &dst_mem, &dst_at,
                                            &src_mem, &src_at));
  if (size == 0 || (dst_mem == src_mem && dst_at == src_at)) return DC_OK;
  bool overlap = dst_mem == src_mem && dst_at < src_at + size &&
                 src_at < dst_at + size;
  cl_int err =
      overlap ? copy_overlapping(ocl, dst_mem, dst_at, src_at, size)
              : ocl->cl->enqueue_copy_buffer(ocl->queue, src_mem, dst_mem,
                                             src_at, dst_at, size, 0, NULL,
                                             NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "copy of %zu bytes", size);
  }
  return finish(ocl, "copy");
}

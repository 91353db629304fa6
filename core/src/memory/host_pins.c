// host_pins.c: host memory pinned for a backend's DMA (host_pins.h).
// SPDX-License-Identifier: MIT
#include "host_pins.h"

#include <unistd.h>

#include "context_internal.h"

// A quarter of the machine's memory, or 1 GiB where the system does not
// say: memory locked for DMA cannot be swapped or reclaimed.
static size_t default_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return (size_t)1 << 30;
  return (size_t)pages / 4 * (size_t)page;
}

void dc__host_pins_init(dc__host_pins_t* pins) {
  *pins = (dc__host_pins_t){.limit = default_limit()};
  pthread_mutex_init(&pins->lock, NULL);
}

static void unpin(const dc__host_pin_t* pin) {
  if (pin->pinner == NULL) return;
  pin->pinner->vtable->pinning->unpin(pin->pinner, pin->host, pin->size);
}

void dc__host_pins_destroy(dc__host_pins_t* pins, dc_allocator_t allocator) {
  for (size_t i = 0; i < pins->count; ++i) unpin(&pins->entries[i]);
  dc_allocator_free(allocator, pins->entries,
                    pins->capacity * sizeof(*pins->entries));
  pthread_mutex_destroy(&pins->lock);
  // The pools free their blocks after this: nothing is pinned any more.
  pins->entries = NULL;
  pins->count = pins->capacity = 0;
  atomic_store(&pins->live, 0);
}

static dc__host_pin_t* find_locked(dc__host_pins_t* pins, const void* host) {
  for (size_t i = 0; i < pins->count; ++i) {
    if (pins->entries[i].host == host) return &pins->entries[i];
  }
  return NULL;
}

void dc__host_pins_forget(dc_device_t* device, void* memory,
                          dc_storage_mode_t mode) {
  dc__host_pins_t* pins = &device->context->pins;
  if (atomic_load(&pins->live) == 0) return;
  void* host = device->vtable->memory->host_pointer(device, memory, mode);
  if (host == NULL) return;
  pthread_mutex_lock(&pins->lock);
  dc__host_pin_t* pin = find_locked(pins, host);
  if (pin != NULL) {
    unpin(pin);
    if (pin->pinner != NULL) pins->pinned_bytes -= pin->size;
    *pin = pins->entries[--pins->count];
    atomic_store(&pins->live, pins->count);
  }
  pthread_mutex_unlock(&pins->lock);
}

static bool grow_locked(dc__host_pins_t* pins, dc_allocator_t allocator) {
  if (pins->count < pins->capacity) return true;
  size_t capacity = pins->capacity ? 2 * pins->capacity : 16;
  dc__host_pin_t* grown =
      dc_allocator_malloc(allocator, capacity * sizeof(*grown));
  if (grown == NULL) return false;
  for (size_t i = 0; i < pins->count; ++i) grown[i] = pins->entries[i];
  dc_allocator_free(allocator, pins->entries,
                    pins->capacity * sizeof(*pins->entries));
  pins->entries = grown;
  pins->capacity = capacity;
  return true;
}

// Whether |block| is pinned for |device|'s backend, pinning it now if it
// was never tried and fits under the limit. The lock is held while the
// backend pins, so two copies from one block pin it once.
static bool pinned_for(dc_device_t* device, void* block, size_t block_size) {
  dc_context_t* ctx = device->context;
  dc__host_pins_t* pins = &ctx->pins;
  pthread_mutex_lock(&pins->lock);
  dc__host_pin_t* pin = find_locked(pins, block);
  bool pinned = false;
  if (pin != NULL) {
    pinned = pin->pinner != NULL && pin->pinner->vtable == device->vtable;
  } else if (pins->pinned_bytes + block_size <= pins->limit &&
             grow_locked(pins, ctx->allocator)) {
    dc__saved_error_t caller_error;
    dc__error_save(&caller_error);
    pinned = device->vtable->pinning->pin(device, block, block_size) == DC_OK;
    if (!pinned) {
      DC_LOG(ctx, DC_LOG_DEBUG, "pool",
             "%s: host block of %zu bytes not pinned (%s); its copies are "
             "staged",
             device->info.name, block_size, dc_last_error());
    }
    dc__error_restore(&caller_error);
    pins->entries[pins->count++] =
        (dc__host_pin_t){block, block_size, pinned ? device : NULL};
    if (pinned) pins->pinned_bytes += block_size;
    atomic_store(&pins->live, pins->count);
  }
  pthread_mutex_unlock(&pins->lock);
  return pinned;
}

bool dc__host_pins_ready(dc_device_t* device, const void* block) {
  dc__host_pins_t* pins = &device->context->pins;
  if (atomic_load(&pins->live) == 0) return false;
  pthread_mutex_lock(&pins->lock);
  const dc__host_pin_t* pin = find_locked(pins, block);
  bool ready = pin != NULL && pin->pinner != NULL &&
               pin->pinner->vtable == device->vtable;
  pthread_mutex_unlock(&pins->lock);
  return ready;
}

static bool use_pinned(dc_device_t* device, void* block, size_t block_size,
                       size_t size) {
  return device->vtable->pinning != NULL && size >= DC__PIN_MIN_BYTES &&
         pinned_for(device, block, block_size);
}

dc_status_t dc__host_pins_write(dc_device_t* device, void* memory,
                                size_t offset, void* block, size_t block_size,
                                size_t host_offset, size_t size) {
  const char* host = (const char*)block + host_offset;
  if (use_pinned(device, block, block_size, size)) {
    return device->vtable->pinning->write_pinned(device, memory, offset, host,
                                                 size);
  }
  return device->vtable->memory->write(device, memory, offset, host, size);
}

dc_status_t dc__host_pins_read(dc_device_t* device, const void* memory,
                               size_t offset, void* block, size_t block_size,
                               size_t host_offset, size_t size) {
  char* host = (char*)block + host_offset;
  if (use_pinned(device, block, block_size, size)) {
    return device->vtable->pinning->read_pinned(device, memory, offset, host,
                                                size);
  }
  return device->vtable->memory->read(device, memory, offset, host, size);
}

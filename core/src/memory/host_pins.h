// host_pins.h: host memory pinned for a backend's DMA.
//
// A context keeps the pool blocks of host-visible buffers (the CPU
// device's) that it pinned through a backend's pinning table
// (dc/backend.h), so that copies between them and that backend's devices
// run at the bus's speed. A block is pinned the first time a copy of at
// least DC__PIN_MIN_BYTES moves between it and such a device, stays
// pinned while its pool caches it, and is unpinned before its pool gives
// it back to the system: pinning costs a system call over every page,
// once per block rather than per copy, and the pools' fast paths never
// look here. The bytes pinned stay under a quarter of the machine's
// memory; past that, copies are staged by the backend as before.
// SPDX-License-Identifier: MIT
#ifndef DC_HOST_PINS_H_
#define DC_HOST_PINS_H_

#include <pthread.h>
#include <stdatomic.h>

#include "dc/backend.h"
#include "internal.h"

#define DC__PIN_MIN_BYTES ((size_t)1 << 20)

typedef struct dc__host_pin_t {
  void* host;  // the block's first byte
  size_t size;
  // The device whose backend pinned it; NULL when pinning failed (the
  // block is not tried again while it lives).
  dc_device_t* pinner;
} dc__host_pin_t;

typedef struct dc__host_pins_t {
  pthread_mutex_t lock;
  dc__host_pin_t* entries;  // guarded by lock, as are the counts
  size_t count;
  size_t capacity;
  size_t pinned_bytes;
  size_t limit;
  atomic_size_t live;  // count, read without the lock by dc__host_pins_forget
} dc__host_pins_t;

DC_INTERNAL void dc__host_pins_init(dc__host_pins_t* pins);
// Unpins every block and frees the table: before any device goes.
DC_INTERNAL void dc__host_pins_destroy(dc__host_pins_t* pins,
                                       dc_allocator_t allocator);

// Forgets |memory|, a block of |device|'s pool about to be freed,
// unpinning it first if it was pinned.
DC_INTERNAL void dc__host_pins_forget(dc_device_t* device, void* memory,
                                      dc_storage_mode_t mode);

// Writes |size| bytes at byte |host_offset| of the host block |block|
// (|block_size| bytes) into |memory| + |offset| of |device|: straight
// from the block when |device|'s backend pins (pinning it first), else
// through the device's write.
DC_INTERNAL dc_status_t dc__host_pins_write(dc_device_t* device, void* memory,
                                            size_t offset, void* block,
                                            size_t block_size,
                                            size_t host_offset, size_t size);
// The other way: |memory| + |offset| of |device| into the block.
DC_INTERNAL dc_status_t dc__host_pins_read(dc_device_t* device,
                                           const void* memory, size_t offset,
                                           void* block, size_t block_size,
                                           size_t host_offset, size_t size);

// Whether |block| is already pinned for |device|'s backend. Looks only:
// pins nothing (the scheduler asks with its lock held).
DC_INTERNAL bool dc__host_pins_ready(dc_device_t* device, const void* block);

#endif  // DC_HOST_PINS_H_

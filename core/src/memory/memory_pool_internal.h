// memory_pool_internal.h: the per-device caching allocator (memory_pool.c).
// SPDX-License-Identifier: MIT
#ifndef DC_MEMORY_POOL_INTERNAL_H_
#define DC_MEMORY_POOL_INTERNAL_H_

#include "dc/backend.h"
#include "dc/memory_pool.h"
#include "internal.h"

typedef struct dc__memory_pool_t dc__memory_pool_t;

// Creates |device|'s pool. |budget| 0 means the device's memory size.
DC_INTERNAL dc_status_t dc__memory_pool_create(dc_device_t* device,
                                               size_t cache_limit,
                                               size_t budget,
                                               dc__memory_pool_t** out_pool);
// Frees the cache and the pool. No block may be in use.
DC_INTERNAL void dc__memory_pool_destroy(dc__memory_pool_t* pool);

// Gets a block of at least |size| bytes; |out_block_size| receives the
// size of its class, which dc__memory_pool_release() must be given back.
// |fn| names the public function asking, for messages.
// Whether |size| bytes could fit under the pool's budget once enough
// memory is released (false: waiting cannot help).
DC_INTERNAL bool dc__memory_pool_could_fit(dc__memory_pool_t* pool,
                                           size_t size);
DC_INTERNAL dc_status_t dc__memory_pool_acquire(dc__memory_pool_t* pool,
                                                const char* fn, size_t size,
                                                dc_storage_mode_t mode,
                                                void** out_memory,
                                                size_t* out_block_size);
DC_INTERNAL void dc__memory_pool_release(dc__memory_pool_t* pool,
                                         void* memory, size_t block_size,
                                         dc_storage_mode_t mode);

// Rounds |size| up to its size class. Returns false if no class holds it.
DC_INTERNAL bool dc__memory_pool_class_size(size_t size, size_t* out_size);

#endif  // DC_MEMORY_POOL_INTERNAL_H_

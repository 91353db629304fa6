// object_cache.h: recycles fixed-size engine objects, keeping released ones
// recognisable for a while so that use after release is detected.
// SPDX-License-Identifier: MIT
#ifndef DC_OBJECT_CACHE_H_
#define DC_OBJECT_CACHE_H_

#include <pthread.h>

#include "internal.h"
#include "resource.h"

#define DC_MAGIC_RELEASED 0xDEADDC00u

// Released objects wait in a FIFO and are reused only once more than
// |quarantine| of them wait, so a stale handle stays detectable for at
// least that many releases.
typedef struct dc__object_cache_t {
  pthread_mutex_t lock;
  dc_allocator_t allocator;
  size_t object_size;
  size_t quarantine;
  dc__object_header_t* head;  // oldest released object
  dc__object_header_t* tail;  // newest
  size_t released_count;
} dc__object_cache_t;

DC_INTERNAL void dc__object_cache_init(dc__object_cache_t* cache,
                                       dc_allocator_t allocator,
                                       size_t object_size, size_t quarantine);
// Frees every released object. No object may be live.
DC_INTERNAL void dc__object_cache_deinit(dc__object_cache_t* cache);
// Returns zeroed storage for one object, or NULL when out of memory.
DC_INTERNAL void* dc__object_cache_alloc(dc__object_cache_t* cache);
// Marks |object| released and queues it for reuse.
DC_INTERNAL void dc__object_cache_free(dc__object_cache_t* cache,
                                       void* object);

#endif  // DC_OBJECT_CACHE_H_

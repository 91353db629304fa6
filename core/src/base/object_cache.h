// object_cache.h: the quarantine of released engine objects: recycles
// their fixed-size storage, keeping released objects recognisable for a
// while so that use after release is detected (resource.h).
// SPDX-License-Identifier: MIT
#ifndef DC_OBJECT_CACHE_H_
#define DC_OBJECT_CACHE_H_

#include <pthread.h>

#include "internal.h"
#include "resource.h"

// Released objects wait in a FIFO and are reused only once more than
// |quarantine| of them wait, so a stale handle stays detectable for at
// least that many releases. Storage is freed only by deinit.
typedef struct dc__object_cache_t {
  pthread_mutex_t lock;
  dc_allocator_t allocator;
  size_t object_size;
  size_t quarantine;
  // Optional: frees what a released object keeps readable while it waits
  // (a program's kernels, which stale kernel handles point into), when it
  // leaves the quarantine for reuse or for good.
  void (*evict)(void* object);
  dc__resource_t* head;  // oldest released object
  dc__resource_t* tail;  // newest
  size_t released_count;
} dc__object_cache_t;

DC_INTERNAL void dc__object_cache_init(dc__object_cache_t* cache,
                                       dc_allocator_t allocator,
                                       size_t object_size, size_t quarantine,
                                       void (*evict)(void* object));
// Frees every released object. No object may be live.
DC_INTERNAL void dc__object_cache_deinit(dc__object_cache_t* cache);
// Returns zeroed storage for one object, or NULL when out of memory.
DC_INTERNAL void* dc__object_cache_alloc(dc__object_cache_t* cache);
// Marks |object| (a resource, header first) released and queues it for
// reuse. Its destroy calls this; so do create paths that fail after
// allocating.
DC_INTERNAL void dc__object_cache_free(dc__object_cache_t* cache,
                                       void* object);

#endif  // DC_OBJECT_CACHE_H_

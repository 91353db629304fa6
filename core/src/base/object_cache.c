// object_cache.c: FIFO quarantine of released objects (see
// object_cache.h), and the report of a handle that fails its check
// (resource.h).
// SPDX-License-Identifier: MIT
#include "object_cache.h"

#include <string.h>

void dc__object_cache_init(dc__object_cache_t* cache, dc_allocator_t allocator,
                           size_t object_size, size_t quarantine,
                           void (*evict)(void* object)) {
  pthread_mutex_init(&cache->lock, NULL);
  cache->allocator = allocator;
  cache->object_size = object_size;
  cache->quarantine = quarantine;
  cache->evict = evict;
  cache->head = cache->tail = NULL;
  cache->released_count = 0;
}

void dc__object_cache_deinit(dc__object_cache_t* cache) {
  dc__resource_t* object = cache->head;
  while (object != NULL) {
    dc__resource_t* next = object->next_released;
    if (cache->evict != NULL) cache->evict(object);
    dc_allocator_free(cache->allocator, object, cache->object_size);
    object = next;
  }
  cache->head = cache->tail = NULL;
  cache->released_count = 0;
  pthread_mutex_destroy(&cache->lock);
}

void* dc__object_cache_alloc(dc__object_cache_t* cache) {
  dc__resource_t* object = NULL;
  pthread_mutex_lock(&cache->lock);
  if (cache->released_count > cache->quarantine) {
    object = cache->head;
    cache->head = object->next_released;
    if (cache->head == NULL) cache->tail = NULL;
    --cache->released_count;
  }
  pthread_mutex_unlock(&cache->lock);
  if (object == NULL) {
    return dc_allocator_calloc(cache->allocator, 1, cache->object_size);
  }
  if (cache->evict != NULL) cache->evict(object);
  memset(object, 0, cache->object_size);
  return object;
}

void dc__object_cache_free(dc__object_cache_t* cache, void* ptr) {
  dc__resource_t* object = ptr;
  dc__resource_mark_released(object);
  object->next_released = NULL;
  pthread_mutex_lock(&cache->lock);
  if (cache->tail != NULL) {
    cache->tail->next_released = object;
  } else {
    cache->head = object;
  }
  cache->tail = object;
  ++cache->released_count;
  pthread_mutex_unlock(&cache->lock);
}

dc_status_t dc__resource_check_failed(const char* fn, const char* param,
                                      const dc__resource_t* r,
                                      const dc__resource_type_t* type) {
  // Another live object's descriptor is not dereferenced: |r| may be any
  // pointer the caller passed.
  if (r != NULL && atomic_load_explicit(&((dc__resource_t*)r)->type,
                                        memory_order_relaxed) != NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: '%s' is not a %s", fn,
                   param, type->name);
  }
  return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: '%s' is NULL or a released %s",
                 fn, param, type->name);
}

// object_cache.c: FIFO recycling of released objects (see object_cache.h).
// SPDX-License-Identifier: MIT
#include "object_cache.h"

#include <string.h>

void dc__object_cache_init(dc__object_cache_t* cache, dc_allocator_t allocator,
                           size_t object_size, size_t quarantine) {
  pthread_mutex_init(&cache->lock, NULL);
  cache->allocator = allocator;
  cache->object_size = object_size;
  cache->quarantine = quarantine;
  cache->head = cache->tail = NULL;
  cache->released_count = 0;
}

void dc__object_cache_deinit(dc__object_cache_t* cache) {
  dc__object_header_t* object = cache->head;
  while (object != NULL) {
    dc__object_header_t* next = object->next_released;
    dc_allocator_free(cache->allocator, object, cache->object_size);
    object = next;
  }
  cache->head = cache->tail = NULL;
  cache->released_count = 0;
  pthread_mutex_destroy(&cache->lock);
}

void* dc__object_cache_alloc(dc__object_cache_t* cache) {
  dc__object_header_t* object = NULL;
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
  memset(object, 0, cache->object_size);
  return object;
}

void dc__object_cache_free(dc__object_cache_t* cache, void* ptr) {
  dc__object_header_t* object = ptr;
  object->magic = DC_MAGIC_RELEASED;
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

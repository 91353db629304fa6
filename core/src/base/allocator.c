// allocator.c: the system allocator and allocation helpers.
// SPDX-License-Identifier: MIT
#include "dc/allocator.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void* system_alloc(void* user_data, void* ptr, size_t old_size,
                          size_t new_size) {
  (void)user_data;
  (void)old_size;
  if (new_size == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, new_size);
}

dc_allocator_t dc_allocator_system(void) {
  return (dc_allocator_t){.fn = system_alloc, .user_data = NULL};
}

void* dc_allocator_malloc(dc_allocator_t allocator, size_t size) {
  if (size == 0 || allocator.fn == NULL) return NULL;
  return allocator.fn(allocator.user_data, NULL, 0, size);
}

void* dc_allocator_calloc(dc_allocator_t allocator, size_t count,
                          size_t size) {
  if (count == 0 || size == 0 || count > SIZE_MAX / size) return NULL;
  void* ptr = dc_allocator_malloc(allocator, count * size);
  if (ptr != NULL) memset(ptr, 0, count * size);
  return ptr;
}

void dc_allocator_free(dc_allocator_t allocator, void* ptr, size_t size) {
  if (ptr == NULL || allocator.fn == NULL) return;
  allocator.fn(allocator.user_data, ptr, size, 0);
}

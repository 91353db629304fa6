// arena.c: bump allocation in chunks from the context's allocator.
// SPDX-License-Identifier: MIT
#include "arena.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CHUNK_SIZE ((size_t)64 << 10)

struct dc__arena_chunk_t {
  dc__arena_chunk_t* next;
  size_t size;  // usable bytes after the header
  size_t used;
  _Alignas(16) unsigned char data[];
};

void dc__arena_init(dc__arena_t* arena, dc_allocator_t allocator) {
  *arena = (dc__arena_t){.allocator = allocator};
}

void dc__arena_free_all(dc__arena_t* arena) {
  dc__arena_chunk_t* chunk = arena->chunks;
  while (chunk != NULL) {
    dc__arena_chunk_t* next = chunk->next;
    dc_allocator_free(arena->allocator, chunk, sizeof(*chunk) + chunk->size);
    chunk = next;
  }
  arena->chunks = NULL;
  arena->bytes = 0;
}

void* dc__arena_alloc(dc__arena_t* arena, size_t size) {
  size = (size + 15) & ~(size_t)15;
  dc__arena_chunk_t* chunk = arena->chunks;
  if (chunk == NULL || chunk->size - chunk->used < size) {
    size_t usable = size > CHUNK_SIZE / 2 ? size : CHUNK_SIZE;
    chunk = dc_allocator_malloc(arena->allocator, sizeof(*chunk) + usable);
    if (chunk == NULL) {
      arena->failed = true;
      return NULL;
    }
    chunk->size = usable;
    chunk->used = 0;
    // A large one-off allocation goes behind the current chunk so that the
    // current chunk's free space is not abandoned.
    if (usable != CHUNK_SIZE && arena->chunks != NULL) {
      chunk->next = arena->chunks->next;
      arena->chunks->next = chunk;
    } else {
      chunk->next = arena->chunks;
      arena->chunks = chunk;
    }
  }
  void* ptr = chunk->data + chunk->used;
  chunk->used += size;
  arena->bytes += size;
  return ptr;
}

char* dc__arena_strndup(dc__arena_t* arena, const char* text, size_t length) {
  char* copy = dc__arena_alloc(arena, length + 1);
  if (copy == NULL) return NULL;
  memcpy(copy, text, length);
  copy[length] = '\0';
  return copy;
}

char* dc__arena_printf(dc__arena_t* arena, const char* format, ...) {
  va_list args;
  va_start(args, format);
  int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n < 0) return NULL;
  char* text = dc__arena_alloc(arena, (size_t)n + 1);
  if (text == NULL) return NULL;
  va_start(args, format);
  vsnprintf(text, (size_t)n + 1, format, args);
  va_end(args);
  return text;
}

void* dc__arena_zalloc(dc__arena_t* arena, size_t count, size_t size) {
  size_t bytes = (count ? count : 1) * size;
  void* p = dc__arena_alloc(arena, bytes);
  if (p != NULL) memset(p, 0, bytes);
  return p;
}

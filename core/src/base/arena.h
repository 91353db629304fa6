// arena.h: bump allocation for short-lived work such as compiling a
// program; everything is freed at once.
// SPDX-License-Identifier: MIT
#ifndef DC_ARENA_H_
#define DC_ARENA_H_

#include <stddef.h>

#include "internal.h"

typedef struct dc__arena_chunk_t dc__arena_chunk_t;

typedef struct dc__arena_t {
  dc_allocator_t allocator;
  dc__arena_chunk_t* chunks;
  size_t bytes;  // handed out so far, for statistics
  bool failed;   // an allocation failed; callers check once at the end
} dc__arena_t;

DC_INTERNAL void dc__arena_init(dc__arena_t* arena, dc_allocator_t allocator);
DC_INTERNAL void dc__arena_free_all(dc__arena_t* arena);
// Returns |size| bytes aligned to 16, or NULL (and sets |failed|).
DC_INTERNAL void* dc__arena_alloc(dc__arena_t* arena, size_t size);
// Returns |count| (at least one) zeroed elements of |size| bytes, or NULL.
DC_INTERNAL void* dc__arena_zalloc(dc__arena_t* arena, size_t count,
                                   size_t size);
// Copies |length| bytes of |text| and a NUL.
DC_INTERNAL char* dc__arena_strndup(dc__arena_t* arena, const char* text,
                                    size_t length);
// Returns a NUL-terminated copy of the formatted text.
DC_INTERNAL char* dc__arena_printf(dc__arena_t* arena, const char* format,
                                   ...) DC_PRINTF_LIKE(2, 3);

#endif  // DC_ARENA_H_

// dc/allocator.h: the host allocator every engine object allocates with.
// SPDX-License-Identifier: MIT
#ifndef DC_ALLOCATOR_H_
#define DC_ALLOCATOR_H_

#include <stddef.h>

#include "dc/export.h"

DC_EXTERN_C_BEGIN

//===-- Host allocator --------------------------------------------------===//
//
// The engine's own bookkeeping (objects, tables, queues) is allocated with
// one host allocator, given once to dc_context_create() and captured by
// every object made in that context, so each object is freed by the same
// allocator that made it. Device memory (the bytes of a buffer) is not
// allocated here: each device obtains it from its own memory system, through
// the device's memory pool.
//
// The function has the shape of lua_Alloc:
//   - |new_size| == 0: free |ptr| (which may be NULL) and return NULL;
//   - |ptr| == NULL: allocate |new_size| bytes;
//   - otherwise: resize |ptr| from |old_size| to |new_size| bytes.
// It returns NULL when it cannot allocate, and must then leave |ptr| as it
// was. It must be thread-safe: worker threads allocate too, which is also
// why a Lua state's allocator must not be given to the engine.
typedef void* (*dc_alloc_fn_t)(void* user_data, void* ptr, size_t old_size,
                               size_t new_size);

typedef struct dc_allocator_t {
  dc_alloc_fn_t fn;
  void* user_data;
} dc_allocator_t;

// Returns the allocator that uses the C library's malloc, realloc and free.
DC_API dc_allocator_t dc_allocator_system(void);

// Allocates |size| bytes with |allocator|. Returns NULL on failure or when
// |size| is 0.
DC_API void* dc_allocator_malloc(dc_allocator_t allocator, size_t size);

// Allocates |count| * |size| zeroed bytes. Returns NULL on failure, when the
// product overflows, or when it is 0.
DC_API void* dc_allocator_calloc(dc_allocator_t allocator, size_t count,
                                 size_t size);

// Frees |ptr| of |size| bytes, as allocated by |allocator|. NULL is a no-op.
DC_API void dc_allocator_free(dc_allocator_t allocator, void* ptr,
                              size_t size);

DC_EXTERN_C_END

#endif  // DC_ALLOCATOR_H_

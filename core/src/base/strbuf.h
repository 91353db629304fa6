// strbuf.h: a growable string in an arena, for generated source.
// SPDX-License-Identifier: MIT
#ifndef DC_STRBUF_H_
#define DC_STRBUF_H_

#include <stdarg.h>

#include "arena.h"

typedef struct dc__strbuf_t {
  dc__arena_t* arena;
  char* data;  // always NUL-terminated once anything was written
  size_t length;
  size_t capacity;
} dc__strbuf_t;

DC_INTERNAL void dc__strbuf_init(dc__strbuf_t* sb, dc__arena_t* arena);
DC_INTERNAL void dc__strbuf_append(dc__strbuf_t* sb, const char* text,
                                   size_t length);
DC_INTERNAL void dc__strbuf_puts(dc__strbuf_t* sb, const char* text);
DC_INTERNAL void dc__strbuf_printf(dc__strbuf_t* sb, const char* format, ...)
    DC_PRINTF_LIKE(2, 3);
DC_INTERNAL void dc__strbuf_vprintf(dc__strbuf_t* sb, const char* format,
                                    va_list args) DC_PRINTF_LIKE(2, 0);

#endif  // DC_STRBUF_H_

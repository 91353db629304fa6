// strbuf.c: growable strings in an arena.
// SPDX-License-Identifier: MIT
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dc__strbuf_init(dc__strbuf_t* sb, dc__arena_t* arena) {
  *sb = (dc__strbuf_t){.arena = arena};
}

static bool reserve(dc__strbuf_t* sb, size_t extra) {
  if (sb->length + extra + 1 <= sb->capacity) return true;
  size_t capacity = sb->capacity ? sb->capacity : 4096;
  while (capacity < sb->length + extra + 1) capacity *= 2;
  char* data = dc__arena_alloc(sb->arena, capacity);
  if (data == NULL) return false;  // the arena remembers the failure
  if (sb->length) memcpy(data, sb->data, sb->length);
  data[sb->length] = '\0';
  sb->data = data;
  sb->capacity = capacity;
  return true;
}

void dc__strbuf_append(dc__strbuf_t* sb, const char* text, size_t length) {
  if (!reserve(sb, length)) return;
  memcpy(sb->data + sb->length, text, length);
  sb->length += length;
  sb->data[sb->length] = '\0';
}

void dc__strbuf_puts(dc__strbuf_t* sb, const char* text) {
  dc__strbuf_append(sb, text, strlen(text));
}

void dc__strbuf_vprintf(dc__strbuf_t* sb, const char* format, va_list args) {
  char small[512];
  va_list again;
  va_copy(again, args);
  int n = vsnprintf(small, sizeof(small), format, args);
  if (n >= 0 && (size_t)n < sizeof(small)) {
    dc__strbuf_append(sb, small, (size_t)n);
  } else if (n >= 0 && reserve(sb, (size_t)n)) {
    vsnprintf(sb->data + sb->length, (size_t)n + 1, format, again);
    sb->length += (size_t)n;
  }
  va_end(again);
}

void dc__strbuf_printf(dc__strbuf_t* sb, const char* format, ...) {
  va_list args;
  va_start(args, format);
  dc__strbuf_vprintf(sb, format, args);
  va_end(args);
}

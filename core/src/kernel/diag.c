// diag.c: the build log.
// SPDX-License-Identifier: MIT
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void dc__diag_init(dc__diag_t* diag, dc_allocator_t allocator,
                   const char* file) {
  memset(diag, 0, sizeof(*diag));
  diag->allocator = allocator;
  dc__safe_name(file && *file ? file : "source", diag->file_safe,
                sizeof(diag->file_safe));
  diag->file = diag->file_safe;
}

void dc__safe_name(const char* name, char* out, size_t size) {
  size_t n = 0;
  for (; name[n] != '\0' && n + 1 < size; ++n) {
    char c = name[n];
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || (c != '\0' && strchr("._-+/", c));
    out[n] = plain ? c : '_';
  }
  if (size > 0) out[n] = '\0';
}

void dc__diag_free(dc__diag_t* diag) {
  dc_allocator_free(diag->allocator, diag->log, diag->capacity);
  diag->log = NULL;
  diag->length = diag->capacity = 0;
}

void dc__diag_append(dc__diag_t* diag, const char* text) {
  size_t n = strlen(text);
  if (diag->length + n + 1 > diag->capacity) {
    size_t capacity = (diag->length + n + 1) * 2;
    char* log = diag->allocator.fn(diag->allocator.user_data, diag->log,
                                   diag->capacity, capacity);
    if (log == NULL) return;  // the log is best effort; the status is not
    diag->log = log;
    diag->capacity = capacity;
  }
  memcpy(diag->log + diag->length, text, n + 1);
  diag->length += n;
}

static void add(dc__diag_t* diag, const char* kind, uint32_t line,
                uint32_t col, const char* format, va_list args) {
  char message[600], entry[800];
  vsnprintf(message, sizeof(message), format, args);
  if (line == 0) {  // not tied to a place in the source (build options)
    snprintf(entry, sizeof(entry), "%s: %s: %s\n", diag->file, kind, message);
  } else {
    snprintf(entry, sizeof(entry), "%s:%u:%u: %s: %s\n", diag->file, line,
             col, kind, message);
  }
  if (strcmp(kind, "error") == 0 && diag->errors++ == 0) {
    dc__strlcpy(diag->first_error, entry, sizeof(diag->first_error));
    diag->first_error[strcspn(diag->first_error, "\n")] = '\0';
  }
  dc__diag_append(diag, entry);
}

void dc__diag_error(dc__diag_t* diag, uint32_t line, uint32_t col,
                    const char* format, ...) {
  va_list args;
  va_start(args, format);
  add(diag, "error", line, col, format, args);
  va_end(args);
}

void dc__diag_warning(dc__diag_t* diag, uint32_t line, uint32_t col,
                      const char* format, ...) {
  va_list args;
  va_start(args, format);
  ++diag->warnings;
  add(diag, "warning", line, col, format, args);
  va_end(args);
}

dc_status_t dc__diag_fail(const dc__diag_t* diag, const char* fn) {
  if (diag->errors > 1) {
    return DC_FAIL(DC_ERR_COMPILE, "%s: %s (and %u more error(s))", fn,
                   diag->first_error, diag->errors - 1);
  }
  return DC_FAIL(DC_ERR_COMPILE, "%s: %s", fn,
                 diag->errors ? diag->first_error : "compilation failed");
}

// diag.h: compile diagnostics in the user's own coordinates.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_DIAG_H_
#define DC_KERNEL_DIAG_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

// Collects "file:line:col: error: message" lines (the build log). The
// first error is also what dc_last_error() reports when a build fails.
// Program names reach messages and the #line directives of generated code,
// so they are kept to these characters (others become '_') and length.
#define DC_DIAG_FILE_SIZE 128

typedef struct dc__diag_t {
  dc_allocator_t allocator;
  const char* file;   // the program's name, made safe (points at file_safe)
  char file_safe[DC_DIAG_FILE_SIZE];
  char* log;          // NUL-terminated, grows
  size_t length;
  size_t capacity;
  uint32_t errors;
  uint32_t warnings;
  char first_error[512];
} dc__diag_t;

// Keeps the program's name |file| as letters, digits and "._-+/" (any
// other byte becomes '_'), at most DC_DIAG_FILE_SIZE - 1 of them: a name
// can then never carry a quote, a newline or a directive into a #line of
// generated code, nor odd bytes into a message.
DC_INTERNAL void dc__diag_init(dc__diag_t* diag, dc_allocator_t allocator,
                                const char* file);

// Writes |name| into |out| (|size| bytes) as dc__diag_init keeps a
// program's name: letters, digits and "._-+/", any other byte as '_'.
DC_INTERNAL void dc__safe_name(const char* name, char* out, size_t size);
DC_INTERNAL void dc__diag_free(dc__diag_t* diag);
DC_INTERNAL void dc__diag_error(dc__diag_t* diag, uint32_t line, uint32_t col,
                                const char* format, ...) DC_PRINTF_LIKE(4, 5);
DC_INTERNAL void dc__diag_warning(dc__diag_t* diag, uint32_t line,
                                  uint32_t col, const char* format, ...)
    DC_PRINTF_LIKE(4, 5);
// Appends text verbatim (e.g. a compiler's own output).
DC_INTERNAL void dc__diag_append(dc__diag_t* diag, const char* text);
// Sets dc_last_error() to "<fn>: <first error>" (and how many more) and
// returns DC_ERR_COMPILE.
DC_INTERNAL dc_status_t dc__diag_fail(const dc__diag_t* diag, const char* fn);

#endif  // DC_KERNEL_DIAG_H_

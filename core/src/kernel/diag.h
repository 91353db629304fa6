// diag.h: compile diagnostics in the user's own coordinates.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_DIAG_H_
#define DC_KERNEL_DIAG_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

// Collects "file:line:col: error: message" lines (the build log). The
// first error is also what dc_last_error() reports when a build fails.
typedef struct dc__diag_t {
  dc_allocator_t allocator;
  const char* file;   // the program's name, as the user gave it
  char* log;          // NUL-terminated, grows
  size_t length;
  size_t capacity;
  uint32_t errors;
  uint32_t warnings;
  char first_error[512];
} dc__diag_t;

DC_INTERNAL void dc__diag_init(dc__diag_t* diag, dc_allocator_t allocator,
                                const char* file);
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

// internal.h: helpers shared by the core's sources. Never installed.
// SPDX-License-Identifier: MIT
#ifndef DC_INTERNAL_H_
#define DC_INTERNAL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/allocator.h"
#include "dc/log.h"
#include "dc/status.h"

// Internal symbols are hidden by the build (-fvisibility=hidden); the
// macro documents that a non-static function is meant for the core only.
#define DC_INTERNAL extern

// Reports a failure: formats the message into the thread's buffer and
// evaluates to |status|. Use as `return DC_FAIL(DC_ERR_X, "fmt", ...);`.
#define DC_FAIL(status, ...) dc_set_error((status), __VA_ARGS__)

// Returns from the calling function if |expr| fails, keeping the message.
#define DC_RETURN_IF_ERROR(expr)        \
  do {                                  \
    dc_status_t dc__st_ = (expr);       \
    if (dc__st_ != DC_OK) return dc__st_; \
  } while (0)

// Fails with DC_ERR_INVALID_ARGUMENT if |ptr| is NULL, naming the function
// and the parameter.
#define DC_REQUIRE_ARG(ptr, fn_name)                                        \
  do {                                                                      \
    if ((ptr) == NULL)                                                      \
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: '%s' must not be NULL", \
                     fn_name, #ptr);                                        \
  } while (0)

// The six characters mkstemp() and mkdtemp() replace with a random
// suffix: the end of the template a temporary file's name is made from.
#define DC_MKTEMP_SUFFIX "XXXXXX"

#define DC_MIN(a, b) ((a) < (b) ? (a) : (b))
// Rounds |n| up to a multiple of |align| (a power of two).
#define DC_ALIGN_UP(n, align) (((n) + (align)-1) & ~(size_t)((align)-1))
#define DC_MAX(a, b) ((a) > (b) ? (a) : (b))

// Saves and restores the thread's error message around cleanup code, which
// must not overwrite the message of the failure being reported.
typedef struct dc__saved_error_t {
  char message[512];
} dc__saved_error_t;
DC_INTERNAL void dc__error_save(dc__saved_error_t* saved);
// Sets the thread's message to |message| (shorter than the message buffer)
// without formatting, for hot paths.
DC_INTERNAL void dc__error_set_raw(const char* message);
DC_INTERNAL void dc__error_restore(const dc__saved_error_t* saved);

//===-- Sticky errors ---------------------------------------------------===//
//
// The first failure of asynchronous work, kept on the object that ran it.
// Any thread may set it; only the first set wins. Readers copy the code and
// message out: dc__sticky_raise() puts the message into the reading
// thread's dc_last_error() and returns the code.

typedef struct dc__sticky_error_t {
  atomic_int state;  // 0 clear, 1 being written, 2 set
  dc_status_t status;
  char message[512];
} dc__sticky_error_t;

DC_INTERNAL void dc__sticky_init(dc__sticky_error_t* sticky);
// Stores |status| and the calling thread's dc_last_error() if nothing is
// stored yet. Returns true if this call stored it.
DC_INTERNAL bool dc__sticky_set_from_last_error(dc__sticky_error_t* sticky,
                                                dc_status_t status);
// Returns DC_OK if nothing is stored; else the stored code, after copying
// the stored message into the calling thread's dc_last_error().
DC_INTERNAL dc_status_t dc__sticky_raise(const dc__sticky_error_t* sticky);
// Returns the stored code without touching dc_last_error().
DC_INTERNAL dc_status_t dc__sticky_status(const dc__sticky_error_t* sticky);
DC_INTERNAL void dc__sticky_clear(dc__sticky_error_t* sticky);

//===-- Time and text ---------------------------------------------------===//

// Monotonic time in nanoseconds.
DC_INTERNAL uint64_t dc__now_ns(void);
// Wall-clock time in nanoseconds since the Unix epoch.
DC_INTERNAL uint64_t dc__wall_ns(void);
// Writes |bytes| as "1.5 MiB" into |buf| and returns |buf|.
DC_INTERNAL const char* dc__format_bytes(size_t bytes, char* buf,
                                         size_t buf_size);
// Copies |src| into |dst| of |size| bytes, always NUL-terminated.
DC_INTERNAL void dc__strlcpy(char* dst, const char* src, size_t size);
// Case-insensitive ASCII equality.
DC_INTERNAL bool dc__str_ieq(const char* a, const char* b);

// Parses a byte size: digits with an optional K, M, G or T suffix (binary
// units, optional trailing "iB" or "B"). Returns false if malformed or if
// it overflows.
DC_INTERNAL bool dc__parse_size(const char* text, size_t* out_size);
// Parses a non-negative decimal integer that fits in uint32_t.
DC_INTERNAL bool dc__parse_u32(const char* text, uint32_t* out_value);

#endif  // DC_INTERNAL_H_

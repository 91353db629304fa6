// dc/status.h: status codes, their names and classes, and the error message.
// SPDX-License-Identifier: MIT
#ifndef DC_STATUS_H_
#define DC_STATUS_H_

#include <stdbool.h>

#include "dc/export.h"

DC_EXTERN_C_BEGIN

//===-- The error model -----------------------------------------------===//
//
// Every fallible dc_ function returns a dc_status_t: DC_OK (zero) on
// success, a DC_ERR_* code otherwise. Results travel through out_
// parameters, which are cleared on entry, so a failed call never leaves a
// half-made object behind.
//
// The code that detects a failure also writes a detailed message into a
// thread-local buffer, read with dc_last_error(). The message names the
// function and says what was wrong, e.g.
//   "dc_buffer_create: length 0 is invalid (a buffer holds at least one
//    element)".
// Like errno it is meaningful only right after a call that returned an
// error: success does not clear it, and release functions never touch it.
//
// Failures that happen asynchronously, on a worker thread, are stored on
// the object that ran the work (a sticky error): the first failure wins,
// and the thread that later waits on the object gets the same code and a
// copy of the message in its own dc_last_error(). No failure is lost and
// none is reported twice.
//
// Each code belongs to a class that retry policies and circuit breakers
// read (docs/resilience.md has the table, and which native errors of each
// backend map to which code):
//   TRANSIENT      may succeed if tried again, after a delay or after
//                  freeing memory; counts against the device's health.
//   DEVICE         the device (or its driver context) is broken: not
//                  retried there; marks the device lost and sends the
//                  work to its fallback.
//   DETERMINISTIC  the same call fails the same way until the caller
//                  changes something (a bad argument, a kernel that does
//                  not compile, a cancelled op, a bug): never retried by
//                  default, and says nothing about the device's health.
//
// The numbers of the first codes follow the widely used canonical codes
// (as in gRPC and IREE), so they map one to one onto other systems.

// XX(name, value, class, description)
#define DC_STATUS_MAP(XX)                                                    \
  XX(OK, 0, OK, "ok")                                                        \
  XX(ERR_CANCELLED, 1, DETERMINISTIC, "cancelled")                           \
  XX(ERR_UNKNOWN, 2, DETERMINISTIC, "unknown error")                         \
  XX(ERR_INVALID_ARGUMENT, 3, DETERMINISTIC, "invalid argument")             \
  XX(ERR_DEADLINE_EXCEEDED, 4, TRANSIENT, "deadline exceeded")               \
  XX(ERR_NOT_FOUND, 5, DETERMINISTIC, "not found")                           \
  XX(ERR_ALREADY_EXISTS, 6, DETERMINISTIC, "already exists")                 \
  XX(ERR_PERMISSION_DENIED, 7, DETERMINISTIC, "permission denied")           \
  XX(ERR_RESOURCE_EXHAUSTED, 8, TRANSIENT, "resource exhausted")             \
  XX(ERR_FAILED_PRECONDITION, 9, DETERMINISTIC, "failed precondition")       \
  XX(ERR_ABORTED, 10, TRANSIENT, "aborted")                                  \
  XX(ERR_OUT_OF_RANGE, 11, DETERMINISTIC, "out of range")                    \
  XX(ERR_UNSUPPORTED, 12, DETERMINISTIC, "not supported")                    \
  XX(ERR_INTERNAL, 13, DETERMINISTIC, "internal error")                      \
  XX(ERR_UNAVAILABLE, 14, TRANSIENT, "temporarily unavailable")              \
  XX(ERR_DATA_LOSS, 15, DEVICE, "data loss")                                 \
  XX(ERR_OUT_OF_MEMORY, 16, TRANSIENT, "out of memory")                      \
  XX(ERR_DEVICE_LOST, 17, DEVICE, "device lost")                             \
  XX(ERR_COMPILE, 18, DETERMINISTIC, "kernel compilation failed")            \
  XX(ERR_CIRCUIT_OPEN, 19, TRANSIENT, "circuit breaker open")

// The status codes. DC_OK is 0; every error is positive.
typedef enum dc_status_e {
#define DC_STATUS_ENUM_(name, value, cls, desc) DC_##name = value,
  DC_STATUS_MAP(DC_STATUS_ENUM_)
#undef DC_STATUS_ENUM_
} dc_status_t;

// What a caller may do about a failure.
typedef enum dc_status_class_e {
  DC_STATUS_CLASS_OK = 0,         // not a failure
  DC_STATUS_CLASS_TRANSIENT,      // may succeed if tried again later
  DC_STATUS_CLASS_DETERMINISTIC,  // fails the same way until something changes
  DC_STATUS_CLASS_DEVICE,         // the device is broken
} dc_status_class_t;

// Returns "transient", "deterministic", "device" or "ok" ("unknown" for a
// value that is no class). The string is static.
DC_API const char* dc_status_class_name(dc_status_class_t cls);

// Returns the code's name without the prefix, e.g. "OUT_OF_MEMORY" or "OK".
// An unknown value gives "UNKNOWN_STATUS". The string is static.
DC_API const char* dc_status_name(dc_status_t status);

// Returns a short description of the code, e.g. "out of memory".
DC_API const char* dc_status_str(dc_status_t status);

// Returns the class of |status|. Unknown values are deterministic.
DC_API dc_status_class_t dc_status_class(dc_status_t status);

// Returns true when |status| is transient, the failures that retry
// policies retry by default: DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED,
// ABORTED, UNAVAILABLE, OUT_OF_MEMORY and CIRCUIT_OPEN.
DC_API bool dc_status_is_transient(dc_status_t status);

// Looks up a status by its name as dc_status_name() spells it. Returns
// false (and leaves |out_status| untouched) for an unknown name.
DC_API bool dc_status_from_name(const char* name, dc_status_t* out_status);

// Returns the detailed message of this thread's last failed dc_ call. Never
// NULL; empty if no call on this thread has failed yet. The buffer belongs
// to the thread and is overwritten by its next failure.
DC_API const char* dc_last_error(void);

// Records a failure the way the library does: formats the message into this
// thread's buffer and returns |status|. For host code and backends that
// report errors through the same channel.
DC_API dc_status_t dc_set_error(dc_status_t status, const char* format, ...)
    DC_PRINTF_LIKE(2, 3);

// Evaluates |expr| and, if it fails, prints the status and dc_last_error()
// to stderr and aborts. For examples and tests, where a failure ends the
// program anyway.
#define DC_CHECK(expr) dc_check_((expr), #expr, __FILE__, __LINE__)
DC_API void dc_check_(dc_status_t status, const char* expr, const char* file,
                      int line);

DC_EXTERN_C_END

#endif  // DC_STATUS_H_

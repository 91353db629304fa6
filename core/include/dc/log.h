// dc/log.h: leveled log messages with timestamps and component names.
// SPDX-License-Identifier: MIT
#ifndef DC_LOG_H_
#define DC_LOG_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/export.h"

DC_EXTERN_C_BEGIN

//===-- Logging ---------------------------------------------------------===//
//
// Each context has a log level and a sink. Messages at or above the level go
// to the sink; others cost one integer comparison. The level comes from the
// context parameters, else from the DC_LOG environment variable, else is
// "warn"; dc_context_set_log_level() changes it at run time.
//
// The default sink writes one line per message to stderr:
//   2026-11-22T10:17:03.123456Z W pool: trimmed 64 MiB from the cpu pool
// i.e. a UTC timestamp, the level's letter, the component and the text.
// A host installs its own sink through the context parameters (log_fn) to
// route messages into its own logging. Sinks are called from any thread,
// possibly concurrently, and must be thread-safe; they must not call back
// into the engine.

// Levels, from most to least severe. DC_LOG_OFF silences everything.
typedef enum dc_log_level_e {
  DC_LOG_DEFAULT = 0,  // in params: take DC_LOG, else warn
  DC_LOG_OFF,
  DC_LOG_ERROR,
  DC_LOG_WARN,
  DC_LOG_INFO,
  DC_LOG_DEBUG,
  DC_LOG_TRACE,
} dc_log_level_t;

// One log message, as given to a sink. All strings are valid only during
// the call.
typedef struct dc_log_record_t {
  dc_log_level_t level;
  const char* component;  // "context", "pool", "cpu", ...
  const char* message;    // one line, no trailing newline
  uint64_t time_ns;       // UTC wall time, nanoseconds since the Unix epoch
} dc_log_record_t;

// A log sink. |user_data| is the pointer given with it.
typedef void (*dc_log_fn_t)(void* user_data, const dc_log_record_t* record);

// Returns the level's lower-case name: "off", "error", ... "trace" (or
// "default" for DC_LOG_DEFAULT).
DC_API const char* dc_log_level_name(dc_log_level_t level);

// Parses a level name as DC_LOG accepts it ("off", "error", "warn",
// "warning", "info", "debug", "trace", any case). Returns false for
// anything else.
DC_API bool dc_log_level_parse(const char* name, dc_log_level_t* out_level);

// Formats |record| as the default sink does into |buffer| of |size| bytes
// (always NUL-terminated when |size| > 0). Hosts use it to keep the
// standard line format in their own sinks.
DC_API void dc_log_format(const dc_log_record_t* record, char* buffer,
                          size_t size);

DC_EXTERN_C_END

#endif  // DC_LOG_H_

// log_internal.h: logging from the core and its backends.
// SPDX-License-Identifier: MIT
#ifndef DC_LOG_INTERNAL_H_
#define DC_LOG_INTERNAL_H_

#include "dc/context.h"
#include "internal.h"

// Logs through the context's sink if |level| is enabled; the arguments
// are not evaluated otherwise.
#define DC_LOG(ctx, level, component, ...)                        \
  do {                                                            \
    if (dc__log_enabled((ctx), (level)))                          \
      dc_context_log((ctx), (level), (component), __VA_ARGS__);   \
  } while (0)

DC_INTERNAL bool dc__log_enabled(const dc_context_t* ctx,
                                 dc_log_level_t level);

#endif  // DC_LOG_INTERNAL_H_

// telemetry_private.h: what telemetry.c, trace.c and health.c share. The
// rest of the engine reports through telemetry_internal.h.
// SPDX-License-Identifier: MIT
#ifndef DC_TELEMETRY_PRIVATE_H_
#define DC_TELEMETRY_PRIVATE_H_

#include "telemetry_internal.h"

//===-- The timeline (trace.c) ------------------------------------------===//

typedef struct dc__trace_t dc__trace_t;

DC_INTERNAL dc_status_t dc__trace_create(dc_allocator_t allocator,
                                         dc__trace_t** out);
DC_INTERNAL void dc__trace_destroy(dc__trace_t* trace);
// Keeps |span| if the trace is recording; one relaxed load when it is not.
DC_INTERNAL void dc__trace_add(dc__trace_t* trace, const dc__span_t* span);

// The context's timeline (telemetry.c).
DC_INTERNAL dc__trace_t* dc__telemetry_trace(dc_context_t* ctx);

//===-- The error summary (telemetry.c) ---------------------------------===//

// Status codes are numbered from 0 without gaps; this counts them.
#define DC__COUNT_STATUS_(name, value, cls, desc) +1
enum { DC_STATUS_COUNT = 0 DC_STATUS_MAP(DC__COUNT_STATUS_) };

#define DC_RECENT_ERRORS 8

typedef struct dc__error_entry_t {
  dc_status_t status;
  uint64_t time_ns;  // dc__now_ns() when it was reported
  char message[512];
} dc__error_entry_t;

typedef struct dc__error_summary_t {
  uint64_t total;
  uint64_t by_status[DC_STATUS_COUNT];
  size_t recent_count;
  dc__error_entry_t recent[DC_RECENT_ERRORS];  // newest first
} dc__error_summary_t;

// Copies the context's error summary into |out|.
DC_INTERNAL void dc__telemetry_errors(dc_context_t* ctx,
                                      dc__error_summary_t* out);

#endif  // DC_TELEMETRY_PRIVATE_H_

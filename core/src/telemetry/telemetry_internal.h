// telemetry_internal.h: how the engine reports what it does to the
// context's telemetry (counters, kernel histograms, the timeline, the
// error summary). See dc/telemetry.h for what users read back.
// SPDX-License-Identifier: MIT
#ifndef DC_TELEMETRY_INTERNAL_H_
#define DC_TELEMETRY_INTERNAL_H_

#include <stdint.h>

#include "dc/kernel.h"
#include "dc/telemetry.h"
#include "internal.h"

typedef struct dc__telemetry_t dc__telemetry_t;

// What a span on the timeline is.
typedef enum dc__span_kind_e {
  DC_SPAN_KERNEL = 0,  // a dispatch
  DC_SPAN_COPY,        // buffer to buffer, host to buffer, buffer to host
  DC_SPAN_FILL,
  DC_SPAN_HOST,        // a host callback
  DC_SPAN_RECORD,      // an event record
  DC_SPAN_WAIT,        // a stream waiting for an event
  DC_SPAN_KIND_COUNT,
} dc__span_kind_t;

// How a command ended.
typedef enum dc__span_outcome_e {
  DC_SPAN_RAN = 0,    // ran; |status| says whether it succeeded
  DC_SPAN_SKIPPED,    // not run: its stream had failed
  DC_SPAN_CANCELLED,  // not run: cancelled
} dc__span_outcome_t;

// One finished command. Strings are borrowed for the call only.
typedef struct dc__span_t {
  dc__span_kind_t kind;
  dc__span_outcome_t outcome;
  dc_status_t status;        // DC_OK unless it ran and failed
  const char* name;          // kernel name, or a short description
  uint32_t stream_id;        // 0: synchronous work on the calling thread
  const char* stream_label;  // NULL when stream_id is 0
  uint64_t start_ns;         // dc__now_ns() clock; start == end if not run
  uint64_t end_ns;
  uint64_t bytes;            // copies and fills
  const dc_kernel_t* kernel; // DC_SPAN_KERNEL: for its histogram
} dc__span_t;

// Creates and destroys a context's telemetry (context.c calls these).
DC_INTERNAL dc_status_t dc__telemetry_create(dc_allocator_t allocator,
                                             dc__telemetry_t** out);
DC_INTERNAL void dc__telemetry_destroy(dc__telemetry_t* telemetry);

// Reports a finished command: counters, the kernel's histogram (kernels
// that ran), the timeline (while recording). Thread-safe; cheap when the
// timeline is off (a few atomic adds and, for kernels, one histogram
// update).
DC_INTERNAL void dc__telemetry_span(dc_context_t* ctx,
                                    const dc__span_t* span);

// Reports a host-side wait on an event (dc_event_wait).
DC_INTERNAL void dc__telemetry_host_wait(dc_context_t* ctx);

// Adds a failure to the error summary of the health report: a count per
// status and the last few messages. Called once per failure, where it is
// first detected (a stream's failing command, a failed synchronous call).
DC_INTERNAL void dc__telemetry_error(dc_context_t* ctx, dc_status_t status,
                                     const char* message);

//===-- Within telemetry/ (telemetry.c, trace.c, health.c) ----------------===//

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

#endif  // DC_TELEMETRY_INTERNAL_H_

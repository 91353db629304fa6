// dc/telemetry.h: what the engine has done: counters, per-kernel timing
// histograms, a profiling helper, a timeline in Chrome's trace format and
// a health report.
// SPDX-License-Identifier: MIT
#ifndef DC_TELEMETRY_H_
#define DC_TELEMETRY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/context.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

// Telemetry is always on: counters and histograms cost a few atomic
// operations per command. Everything is per context and thread-safe.

//===-- Counters --------------------------------------------------------===//

typedef struct dc_counters_t {
  uint64_t dispatches;        // kernels run (synchronous and on streams)
  uint64_t copies;            // buffer copies, reads and writes
  uint64_t bytes_copied;
  uint64_t fills;
  uint64_t host_callbacks;
  uint64_t events_recorded;   // records completed
  uint64_t event_waits;       // waits on streams and on the host
  uint64_t commands_failed;   // commands that ran and failed
  uint64_t commands_skipped;  // not run: their stream had failed
  uint64_t commands_cancelled;
  uint64_t pool_hits;         // buffer allocations served by a memory pool
  uint64_t pool_misses;
  uint64_t event_pool_hits;   // events served from an event pool
  uint64_t event_pool_misses;
} dc_counters_t;

// Copies the context's counters (since creation or the last reset).
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_telemetry_counters(dc_context_t* context,
                                         dc_counters_t* out_counters);

// Zeroes the counters, the kernel histograms and the error summary.
DC_API void dc_telemetry_reset(dc_context_t* context);

//===-- Kernel timing ---------------------------------------------------===//
//
// Every kernel run that succeeds is timed into a histogram per kernel
// name, with buckets 1/16 of a power of two wide (percentiles within
// about 4%; count, total, min and max are exact).

typedef struct dc_timing_stats_t {
  uint64_t count;
  double total_ns;
  double mean_ns;
  double min_ns;
  double max_ns;
  double p50_ns;
  double p95_ns;
  double p99_ns;
} dc_timing_stats_t;

// Copies the timing of kernels named |kernel_name|.
// Returns DC_ERR_NOT_FOUND if none has run, DC_ERR_INVALID_ARGUMENT for
// NULL pointers.
DC_API dc_status_t dc_telemetry_kernel(dc_context_t* context,
                                       const char* kernel_name,
                                       dc_timing_stats_t* out_stats);

// Returns the number of kernel names with timings (since the last
// reset), 0 for NULL.
DC_API size_t dc_telemetry_kernel_count(dc_context_t* context);

// Copies the |index|-th kernel's name (into |name|, |name_size| bytes,
// truncated to fit; |name| may be NULL when |name_size| is 0) and timing,
// in the order the kernels first ran.
// Returns DC_ERR_OUT_OF_RANGE past the end, DC_ERR_INVALID_ARGUMENT for
// NULL pointers.
DC_API dc_status_t dc_telemetry_kernel_at(dc_context_t* context, size_t index,
                                          char* name, size_t name_size,
                                          dc_timing_stats_t* out_stats);

//===-- Profiling -------------------------------------------------------===//

// The operation to profile; returning an error stops the run.
typedef dc_status_t (*dc_profile_fn_t)(void* user_data);

typedef struct dc_profile_params_t {
  uint32_t iterations;   // timed calls (required, > 0)
  uint32_t warmup;       // untimed calls first
  double work_per_call;  // e.g. bytes or flops per call, for a rate; 0: none
} dc_profile_params_t;

typedef struct dc_profile_result_t {
  uint32_t iterations;
  double mean_ns;
  double stddev_ns;
  double min_ns;
  double max_ns;
  double p50_ns;
  double p95_ns;
  double p99_ns;
  double calls_per_second;  // 1e9 / mean
  double work_per_second;   // work_per_call * calls_per_second
} dc_profile_result_t;

// Calls |fn| params->warmup times, then times params->iterations calls
// one by one with the monotonic clock. The statistics are exact, over
// every sample: percentiles interpolate linearly between the two closest
// ranks (numpy's default), stddev_ns is the sample standard deviation
// (0 for one call). A work_per_call must be finite and >= 0.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or 0 iterations,
// DC_ERR_OUT_OF_MEMORY, or the first error |fn| returns (with the message
// |fn| left in dc_last_error()); |out_result| is then zeroed.
DC_API dc_status_t dc_profile(dc_profile_fn_t fn, void* user_data,
                              const dc_profile_params_t* params,
                              dc_profile_result_t* out_result);

//===-- Timeline --------------------------------------------------------===//
//
// While recording, each command (kernels, copies, fills, waits, host
// callbacks, event records) and each synchronous dispatch is kept as a
// span with its start and end time. dc_trace_write() saves them as Chrome
// trace JSON (the "traceEvents" format), which Perfetto and
// chrome://tracing open: one track per stream, named by its label, plus
// one per host thread for synchronous work.

// Starts recording (discarding earlier spans), keeping at most
// |max_spans| (0: 1,000,000); later spans are counted as dropped.
// Returns DC_ERR_INVALID_ARGUMENT for NULL, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_trace_start(dc_context_t* context, size_t max_spans);

// Stops recording; the spans stay until the next start.
DC_API void dc_trace_stop(dc_context_t* context);

// Returns whether the context is recording.
DC_API bool dc_trace_active(dc_context_t* context);

// Writes the spans recorded so far to |path| (replacing it atomically:
// the file is written beside it and renamed over it). Works while
// recording and after dc_trace_stop(). Span times are relative to
// dc_trace_start(); commands that did not run (skipped, cancelled) are
// instant markers.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers,
// DC_ERR_PERMISSION_DENIED, DC_ERR_NOT_FOUND (no such directory) or
// DC_ERR_UNAVAILABLE when the file cannot be written (the message names
// the path and says why), DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_trace_write(dc_context_t* context, const char* path);

//===-- Health ----------------------------------------------------------===//

// Writes the context's health report as JSON into |buffer| (|size|
// bytes, NUL-terminated, truncated to fit) and the length it needs
// (without the NUL) into |out_length|, as snprintf does. The report has
// the devices (capabilities, memory pool and event pool statistics,
// health), the streams (label, priority, queued, counts, error), the
// circuit breakers of the context's registry, the counters, and the
// errors seen so far (a count per status and the last few messages).
// |buffer| may be NULL when |size| is 0.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL context or out_length.
DC_API dc_status_t dc_health_report(dc_context_t* context, char* buffer,
                                    size_t size, size_t* out_length);

//===-- Metrics ---------------------------------------------------------===//

// Writes the context's telemetry in the OpenMetrics text format (the
// Prometheus exposition format, ending with "# EOF") into |buffer|, with
// dc_health_report()'s contract: |size| bytes, NUL-terminated, truncated
// to fit, the length it needs in |out_length|. The families: every
// counter above (dc_dispatches_total, ...), dc_kernel_duration_seconds (a
// summary per kernel name: quantiles 0.5, 0.95, 0.99, sum, count), and per
// device (label device="cpu") its memory in use, cached and budget
// (dc_device_memory_*_bytes), dc_device_failures_total and
// dc_device_health (a stateset). docs/telemetry.md lists them.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL context or out_length, or a
// NULL buffer with a nonzero size.
DC_API dc_status_t dc_telemetry_openmetrics(dc_context_t* context,
                                            char* buffer, size_t size,
                                            size_t* out_length);

DC_EXTERN_C_END

#endif  // DC_TELEMETRY_H_

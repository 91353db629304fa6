// metrics.c: the context's telemetry in the OpenMetrics text format (the
// Prometheus exposition format), for monitoring systems to scrape:
// counters, kernel timings as summaries, each device's memory pool and
// health. Built from the public telemetry, pool and health calls only.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dc/dc.h"

// snprintf's contract over a whole document: writes what fits of it,
// NUL-terminated, and counts every byte it needs.
typedef struct text_t {
  char* buffer;
  size_t size;
  size_t length;
} text_t;

static void put(text_t* t, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

static void put(text_t* t, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  char* at = t->length < t->size ? t->buffer + t->length : NULL;
  size_t room = at != NULL ? t->size - t->length : 0;
  int n = vsnprintf(at, room, format, ap);
  va_end(ap);
  if (n > 0) t->length += (size_t)n;
}

// A label value with \, " and newlines escaped, as the format asks.
static void put_label(text_t* t, const char* value) {
  for (const char* c = value; *c != '\0'; ++c) {
    if (*c == '\\' || *c == '"') {
      put(t, "\\%c", *c);
    } else if (*c == '\n') {
      put(t, "\\n");
    } else {
      put(t, "%c", *c);
    }
  }
}

static void family(text_t* t, const char* name, const char* type,
                   const char* help) {
  put(t, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
}

//===-- Counters ----------------------------------------------------------===//

static void counters(text_t* t, const dc_counters_t* c) {
  static const struct {
    const char* name;
    const char* help;
    size_t offset;
  } kCounters[] = {
#define COUNTER(field, help) {"dc_" #field, help, offsetof(dc_counters_t, field)}
      COUNTER(dispatches, "Kernels run, synchronous and on streams."),
      COUNTER(copies, "Buffer copies, reads and writes."),
      COUNTER(bytes_copied, "Bytes those copies moved."),
      COUNTER(fills, "Buffer fills."),
      COUNTER(host_callbacks, "Host functions run on streams."),
      COUNTER(events_recorded, "Event records completed."),
      COUNTER(event_waits, "Waits on streams and on the host."),
      COUNTER(commands_failed, "Stream commands that ran and failed."),
      COUNTER(commands_skipped, "Stream commands not run: their stream had "
                                "failed."),
      COUNTER(commands_cancelled, "Stream commands cancelled before they "
                                  "ran."),
      COUNTER(pool_hits, "Buffer allocations a memory pool served."),
      COUNTER(pool_misses, "Buffer allocations no memory pool could "
                           "serve."),
      COUNTER(event_pool_hits, "Events an event pool served."),
      COUNTER(event_pool_misses, "Events no event pool could serve."),
#undef COUNTER
  };
  for (size_t i = 0; i < sizeof(kCounters) / sizeof(kCounters[0]); ++i) {
    uint64_t value;
    memcpy(&value, (const char*)c + kCounters[i].offset, sizeof(value));
    family(t, kCounters[i].name, "counter", kCounters[i].help);
    put(t, "%s_total %llu\n", kCounters[i].name, (unsigned long long)value);
  }
}

//===-- Kernels -----------------------------------------------------------===//

static void kernels(text_t* t, dc_context_t* ctx) {
  family(t, "dc_kernel_duration_seconds", "summary",
         "Time of the kernel runs that succeeded, per kernel name.");
  size_t count = dc_telemetry_kernel_count(ctx);
  for (size_t i = 0; i < count; ++i) {
    char name[256];
    dc_timing_stats_t s;
    if (dc_telemetry_kernel_at(ctx, i, name, sizeof(name), &s) != DC_OK) {
      continue;
    }
    static const double kQuantiles[] = {0.5, 0.95, 0.99};
    const double values[] = {s.p50_ns, s.p95_ns, s.p99_ns};
    for (size_t q = 0; q < 3; ++q) {
      put(t, "dc_kernel_duration_seconds{kernel=\"");
      put_label(t, name);
      put(t, "\",quantile=\"%g\"} %.9g\n", kQuantiles[q], values[q] * 1e-9);
    }
    put(t, "dc_kernel_duration_seconds_sum{kernel=\"");
    put_label(t, name);
    put(t, "\"} %.9g\n", s.total_ns * 1e-9);
    put(t, "dc_kernel_duration_seconds_count{kernel=\"");
    put_label(t, name);
    put(t, "\"} %llu\n", (unsigned long long)s.count);
  }
}

//===-- Devices -----------------------------------------------------------===//

// One sample per device of a gauge or counter read from |values|.
static void per_device(text_t* t, dc_context_t* ctx, const char* name,
                       const char* type, const char* help,
                       const uint64_t* values) {
  family(t, name, type, help);
  size_t n = dc_context_device_count(ctx);
  for (size_t d = 0; d < n; ++d) {
    dc_device_t* device = NULL;
    if (dc_context_device(ctx, d, &device) != DC_OK) continue;
    put(t, "%s%s{device=\"", name, strcmp(type, "counter") == 0 ? "_total"
                                                                 : "");
    put_label(t, dc_device_name(device));
    put(t, "\"} %llu\n", (unsigned long long)values[d]);
  }
}

static void devices(text_t* t, dc_context_t* ctx) {
  enum { kMax = 64 };
  size_t n = dc_context_device_count(ctx);
  if (n > kMax) n = kMax;
  uint64_t in_use[kMax] = {0}, cached[kMax] = {0}, budget[kMax] = {0};
  uint64_t failures[kMax] = {0};
  dc_device_health_state_t state[kMax] = {0};
  for (size_t d = 0; d < n; ++d) {
    dc_device_t* device = NULL;
    if (dc_context_device(ctx, d, &device) != DC_OK) continue;
    dc_memory_pool_stats_t pool;
    if (dc_memory_pool_stats(device, &pool) == DC_OK) {
      in_use[d] = pool.bytes_in_use;
      cached[d] = pool.bytes_cached;
      budget[d] = pool.budget;
    }
    dc_device_health_t health;
    if (dc_device_health(device, &health) == DC_OK) {
      failures[d] = health.failures;
      state[d] = health.state;
    }
  }
  per_device(t, ctx, "dc_device_memory_in_use_bytes", "gauge",
             "Device memory handed out and not yet released.", in_use);
  per_device(t, ctx, "dc_device_memory_cached_bytes", "gauge",
             "Free device memory the pool keeps for reuse.", cached);
  per_device(t, ctx, "dc_device_memory_budget_bytes", "gauge",
             "Most device memory the device may hold.", budget);
  per_device(t, ctx, "dc_device_failures", "counter",
             "Failures the device's health counts.", failures);
  family(t, "dc_device_health", "stateset",
         "The device's health: 1 for its state, 0 for the others.");
  for (size_t d = 0; d < n; ++d) {
    dc_device_t* device = NULL;
    if (dc_context_device(ctx, d, &device) != DC_OK) continue;
    for (int s = DC_DEVICE_HEALTHY; s <= DC_DEVICE_LOST; ++s) {
      put(t, "dc_device_health{device=\"");
      put_label(t, dc_device_name(device));
      put(t, "\",dc_device_health=\"%s\"} %d\n",
          dc_device_health_name((dc_device_health_state_t)s),
          state[d] == (dc_device_health_state_t)s);
    }
  }
}

dc_status_t dc_telemetry_openmetrics(dc_context_t* context, char* buffer,
                                     size_t size, size_t* out_length) {
  dc_counters_t c;
  if (context == NULL || out_length == NULL || (buffer == NULL && size)) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dc_telemetry_openmetrics: NULL context or "
                        "out_length, or a NULL buffer of %zu bytes",
                        size);
  }
  dc_status_t st = dc_telemetry_counters(context, &c);
  if (st != DC_OK) return st;
  text_t t = {.buffer = buffer, .size = size};
  if (size > 0) buffer[0] = '\0';
  counters(&t, &c);
  kernels(&t, context);
  devices(&t, context);
  put(&t, "# EOF\n");
  *out_length = t.length;
  return DC_OK;
}

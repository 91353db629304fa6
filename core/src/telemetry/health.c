// health.c: dc_health_report(), the context's state as one JSON object:
// devices, the paths between them, streams, circuit breakers, counters
// and errors.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "context_internal.h"
#include "dc/breaker.h"
#include "dc/event.h"
#include "dc/memory_pool.h"
#include "dc/stream.h"
#include "dc/version.h"
#include "json_writer.h"
#include "scheduler.h"
#include "telemetry_internal.h"

// Containers down to a device or a stream put a member per line; their
// own small objects (pool statistics) stay on one line.
#define WRAP_DEPTH 3

static const char* kind_name(dc_device_kind_t kind) {
  switch (kind) {
    case DC_DEVICE_KIND_CPU: return "cpu";
    case DC_DEVICE_KIND_GPU: return "gpu";
  }
  return "unknown";
}

static const char* priority_name(dc_priority_t priority) {
  switch (priority) {
    case DC_PRIORITY_NORMAL: return "normal";
    case DC_PRIORITY_LOW: return "low";
    case DC_PRIORITY_HIGH: return "high";
  }
  return "unknown";
}

static void write_memory_pool(dc__json_t* w, dc_device_t* device) {
  dc_memory_pool_stats_t s;
  dc__json_key(w, "memory_pool");
  if (dc_memory_pool_stats(device, &s) != DC_OK) {
    dc__json_null(w);
    return;
  }
  dc__json_begin_object(w);
  dc__json_member_u64(w, "hits", s.hits);
  dc__json_member_u64(w, "misses", s.misses);
  dc__json_member_u64(w, "trims", s.trims);
  dc__json_member_u64(w, "failures", s.failures);
  dc__json_member_u64(w, "bytes_in_use", s.bytes_in_use);
  dc__json_member_u64(w, "peak_bytes_in_use", s.peak_bytes_in_use);
  dc__json_member_u64(w, "bytes_cached", s.bytes_cached);
  dc__json_member_u64(w, "blocks_cached", s.blocks_cached);
  dc__json_member_u64(w, "cache_limit", s.cache_limit);
  dc__json_member_u64(w, "budget", s.budget);
  dc__json_end_object(w);
}

static void write_event_pool(dc__json_t* w, dc_device_t* device,
                             const char* key, uint32_t flags) {
  dc_event_pool_stats_t s;
  dc__json_key(w, key);
  if (dc_event_pool_stats(device, flags, &s) != DC_OK) {
    dc__json_null(w);
    return;
  }
  dc__json_begin_object(w);
  dc__json_member_u64(w, "created", s.created);
  dc__json_member_u64(w, "reused", s.reused);
  dc__json_member_u64(w, "destroyed", s.destroyed);
  dc__json_member_u64(w, "in_use", s.in_use);
  dc__json_member_u64(w, "peak_in_use", s.peak_in_use);
  dc__json_member_u64(w, "cached", s.cached);
  dc__json_member_double(w, "reuse_ratio", s.reuse_ratio);
  dc__json_end_object(w);
}

static void write_device(dc__json_t* w, dc_device_t* device) {
  const dc_device_info_t* info = dc_device_info(device);
  dc__json_begin_object(w);
  dc__json_member_string(w, "name", info->name);
  dc__json_member_string(w, "backend", info->backend);
  dc__json_member_string(w, "model", info->model);
  dc__json_member_string(w, "kind", kind_name(info->kind));
  dc__json_member_u64(w, "compute_units", info->compute_units);
  dc__json_member_u64(w, "worker_threads", info->worker_threads);
  dc__json_member_u64(w, "memory_size", info->memory_size);
  dc__json_member_u64(w, "stream_count", info->stream_count);
  write_memory_pool(w, device);
  dc__json_key(w, "event_pools");
  dc__json_begin_object(w);
  write_event_pool(w, device, "sync", DC_EVENT_DEFAULT);
  write_event_pool(w, device, "timing", DC_EVENT_TIMING);
  dc__json_end_object(w);
  dc_device_health_t health;
  if (dc_device_health(device, &health) == DC_OK) {
    dc__json_key(w, "health");
    dc__json_begin_object(w);
    dc__json_member_string(w, "state", dc_device_health_name(health.state));
    dc__json_member_u64(w, "failures", health.failures);
    dc__json_member_string(w, "reason", health.reason);
    dc__json_end_object(w);
  }
  dc__json_end_object(w);
}

static void write_stream(dc_stream_t* stream, void* user_data) {
  dc__json_t* w = user_data;
  dc_stream_stats_t s;
  if (dc_stream_stats(stream, &s) != DC_OK) return;
  dc__json_begin_object(w);
  dc__json_member_u64(w, "id", dc_stream_id(stream));
  dc__json_member_string(w, "label", dc_stream_label(stream));
  dc__json_member_string(w, "device",
                         dc_device_name(dc_stream_device(stream)));
  dc__json_member_string(w, "priority", priority_name(s.priority));
  dc__json_member_u64(w, "queued", s.queued);
  dc__json_member_u64(w, "submitted", s.submitted);
  dc__json_member_u64(w, "completed", s.completed);
  dc__json_member_u64(w, "failed", s.failed);
  dc__json_member_u64(w, "skipped", s.skipped);
  dc__json_member_u64(w, "cancelled", s.cancelled);
  dc__json_member_u64(w, "busy_ns", s.busy_ns);
  dc__json_member_string(
      w, "error", s.error == DC_OK ? NULL : dc_status_name(s.error));
  dc__json_end_object(w);
}

// Every ordered pair of devices: the path dc_buffer_copy() takes between
// them and its bandwidth, 0 until dc_device_peer() measured it (nothing
// is measured here).
static void write_peers(dc__json_t* w, dc_context_t* ctx) {
  dc__json_key(w, "peers");
  dc__json_begin_array(w);
  for (size_t i = 0; i < ctx->device_count; ++i) {
    for (size_t j = 0; j < ctx->device_count; ++j) {
      dc_peer_info_t peer;
      if (i == j || dc_device_peer(ctx->devices[i], ctx->devices[j], false,
                                   &peer) != DC_OK) {
        continue;
      }
      dc__json_begin_object(w);
      dc__json_member_string(w, "from", ctx->devices[i]->info.name);
      dc__json_member_string(w, "to", ctx->devices[j]->info.name);
      dc__json_member_string(w, "path", dc_peer_path_name(peer.path));
      dc__json_key(w, "direct");
      dc__json_bool(w, peer.direct);
      dc__json_member_u64(w, "bandwidth", peer.bandwidth);
      dc__json_end_object(w);
    }
  }
  dc__json_end_array(w);
}

// The breakers of the context's registry, in creation order.
static void write_breakers(dc__json_t* w, dc_context_t* ctx) {
  dc__json_key(w, "breakers");
  dc__json_begin_array(w);
  size_t count = dc_breaker_count(ctx);
  for (size_t i = 0; i < count; ++i) {
    dc_breaker_t* b = NULL;
    dc_breaker_stats_t s;
    if (dc_breaker_at(ctx, i, &b) != DC_OK ||
        dc_breaker_stats(b, &s) != DC_OK) {
      continue;
    }
    dc__json_begin_object(w);
    dc__json_member_string(w, "name", dc_breaker_name(b));
    dc__json_member_string(w, "state", dc_breaker_state_name(s.state));
    dc__json_key(w, "time_in_state_ms");
    dc__json_thousandths(w, (int64_t)(s.time_in_state_ns / 1000));
    dc__json_key(w, "open_remaining_ms");
    dc__json_thousandths(w, (int64_t)(s.open_remaining_ns / 1000));
    dc__json_member_u64(w, "window_calls", s.window_calls);
    dc__json_member_u64(w, "window_failures", s.window_failures);
    dc__json_member_u64(w, "calls", s.calls);
    dc__json_member_u64(w, "failures", s.failures);
    dc__json_member_u64(w, "rejections", s.rejections);
    dc__json_member_u64(w, "opens", s.opens);
    dc__json_member_u64(w, "half_opens", s.half_opens);
    dc__json_member_u64(w, "closes", s.closes);
    dc__json_end_object(w);
  }
  dc__json_end_array(w);
}

static void write_counters(dc__json_t* w, dc_context_t* ctx) {
  dc_counters_t c;
  dc__json_key(w, "counters");
  if (dc_telemetry_counters(ctx, &c) != DC_OK) {
    dc__json_null(w);
    return;
  }
  dc__json_begin_object(w);
  dc__json_member_u64(w, "dispatches", c.dispatches);
  dc__json_member_u64(w, "copies", c.copies);
  dc__json_member_u64(w, "bytes_copied", c.bytes_copied);
  dc__json_member_u64(w, "fills", c.fills);
  dc__json_member_u64(w, "host_callbacks", c.host_callbacks);
  dc__json_member_u64(w, "events_recorded", c.events_recorded);
  dc__json_member_u64(w, "event_waits", c.event_waits);
  dc__json_member_u64(w, "commands_failed", c.commands_failed);
  dc__json_member_u64(w, "commands_skipped", c.commands_skipped);
  dc__json_member_u64(w, "commands_cancelled", c.commands_cancelled);
  dc__json_member_u64(w, "pool_hits", c.pool_hits);
  dc__json_member_u64(w, "pool_misses", c.pool_misses);
  dc__json_member_u64(w, "event_pool_hits", c.event_pool_hits);
  dc__json_member_u64(w, "event_pool_misses", c.event_pool_misses);
  dc__json_end_object(w);
}

static void write_errors(dc__json_t* w, dc_context_t* ctx) {
  dc__error_summary_t errors;
  dc__telemetry_errors(ctx, &errors);
  uint64_t now = dc__now_ns();
  dc__json_key(w, "errors");
  dc__json_begin_object(w);
  dc__json_member_u64(w, "total", errors.total);
  dc__json_key(w, "by_status");
  dc__json_begin_object(w);
  for (int s = 0; s < DC_STATUS_COUNT; ++s) {
    if (errors.by_status[s] == 0) continue;
    dc__json_member_u64(w, dc_status_name((dc_status_t)s),
                        errors.by_status[s]);
  }
  dc__json_end_object(w);
  dc__json_key(w, "recent");  // newest first
  dc__json_begin_array(w);
  for (size_t i = 0; i < errors.recent_count; ++i) {
    const dc__error_entry_t* e = &errors.recent[i];
    dc__json_begin_object(w);
    dc__json_member_string(w, "status", dc_status_name(e->status));
    dc__json_member_string(w, "message", e->message);
    dc__json_key(w, "age_ms");
    uint64_t age_ns = now > e->time_ns ? now - e->time_ns : 0;
    dc__json_thousandths(w, (int64_t)(age_ns / 1000));
    dc__json_end_object(w);
  }
  dc__json_end_array(w);
  dc__json_end_object(w);
}

dc_status_t dc_health_report(dc_context_t* ctx, char* buffer, size_t size,
                             size_t* out_length) {
  static const char* fn = "dc_health_report";
  DC_REQUIRE_ARG(out_length, fn);
  *out_length = 0;
  if (buffer != NULL && size > 0) buffer[0] = '\0';
  DC_REQUIRE_ARG(ctx, fn);
  if (buffer == NULL && size > 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'buffer' is NULL but size is %zu", fn, size);
  }
  dc__json_t w;
  dc__json_init_buffer(&w, buffer, size, WRAP_DEPTH);
  dc__json_begin_object(&w);
  dc__json_member_string(&w, "engine", dc_version_string());
  dc__json_key(&w, "devices");
  dc__json_begin_array(&w);
  for (size_t i = 0; i < ctx->device_count; ++i) {
    write_device(&w, ctx->devices[i]);
  }
  dc__json_end_array(&w);
  write_peers(&w, ctx);
  dc__json_key(&w, "streams");
  dc__json_begin_array(&w);
  dc__context_foreach_stream(ctx, write_stream, &w);
  dc__json_end_array(&w);
  write_breakers(&w, ctx);
  write_counters(&w, ctx);
  write_errors(&w, ctx);
  dc__json_end_object(&w);
  *out_length = w.length;
  return DC_OK;
}

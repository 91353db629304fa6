// stream_group.c: a fixed set of streams used together.
// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "stream_internal.h"

#define MAX_GROUP_STREAMS 64

struct dc_stream_group_t {
  dc__resource_t header;  // first (resource.h)
  dc_context_t* ctx;
  atomic_size_t next;  // round-robin cursor
  size_t count;
  dc_stream_t* streams[MAX_GROUP_STREAMS];
};

static void destroy_group(dc__resource_t* r);

const dc__resource_type_t dc__stream_group_type = {
    .name = "stream group",
    .destroy = destroy_group,
};
DC__RESOURCE_FIRST(dc_stream_group_t, header);

static bool is_group(const dc_stream_group_t* g) {
  return dc__resource_live(DC__RES(g), &dc__stream_group_type);
}

size_t dc__stream_group_object_size(void) { return sizeof(dc_stream_group_t); }

dc_status_t dc_stream_group_create(dc_device_t* device,
                                   const dc_stream_group_params_t* params,
                                   dc_stream_group_t** out_group) {
  static const char* fn = "dc_stream_group_create";
  DC_REQUIRE_ARG(out_group, fn);
  *out_group = NULL;
  DC_REQUIRE_ARG(device, fn);
  dc_stream_group_params_t p = params ? *params
                                      : (dc_stream_group_params_t){0};
  size_t count = p.count ? p.count : device->info.stream_count;
  if (count > MAX_GROUP_STREAMS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: %zu streams asked for; a group holds at most %d", fn,
                   count, MAX_GROUP_STREAMS);
  }
  dc_stream_group_t* g = dc__object_cache_alloc(&device->context->group_cache);
  if (g == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate the group", fn);
  }
  g->ctx = device->context;
  atomic_init(&g->next, 0);
  dc__resource_init(&g->header, &dc__stream_group_type);
  for (size_t i = 0; i < count; ++i) {
    char label[48];
    snprintf(label, sizeof(label), "%s.%zu", p.label ? p.label : "group", i);
    dc_stream_params_t sp = {.priority = p.priority, .label = label};
    dc_status_t st = dc_stream_create(device, &sp, &g->streams[i]);
    if (st == DC_OK) g->count = i + 1;
    if (st != DC_OK) {
      dc__saved_error_t saved;
      dc__error_save(&saved);
      dc_stream_group_release(g);
      dc__error_restore(&saved);
      return st;
    }
  }
  *out_group = g;
  return DC_OK;
}

// The group holds no hold on the context: its streams keep the context
// (and its cache) alive, so the group goes back to the cache first, then
// the streams go.
static void destroy_group(dc__resource_t* r) {
  dc_stream_group_t* g = (dc_stream_group_t*)r;
  dc_stream_t* streams[MAX_GROUP_STREAMS];
  size_t count = g->count;
  for (size_t i = 0; i < count; ++i) streams[i] = g->streams[i];
  dc__object_cache_free(&g->ctx->group_cache, g);
  for (size_t i = 0; i < count; ++i) dc_stream_release(streams[i]);
}

void dc_stream_group_retain(dc_stream_group_t* g) {
  dc__resource_retain(DC__RES(g), &dc__stream_group_type);
}

void dc_stream_group_release(dc_stream_group_t* g) {
  dc__resource_release(DC__RES(g), &dc__stream_group_type);
}

size_t dc_stream_group_size(const dc_stream_group_t* g) {
  return is_group(g) ? g->count : 0;
}

dc_stream_t* dc_stream_group_stream(const dc_stream_group_t* g, size_t index) {
  return is_group(g) && index < g->count ? g->streams[index] : NULL;
}

dc_stream_t* dc_stream_group_next(dc_stream_group_t* g, dc_pick_t pick) {
  if (!is_group(g)) return NULL;
  size_t start = atomic_fetch_add(&g->next, 1) % g->count;
  if (pick != DC_PICK_LEAST_LOADED) return g->streams[start];
  // Scan from the round-robin position so that ties rotate.
  dc_stream_t* best = g->streams[start];
  dc_stream_stats_t stats;
  dc_stream_stats(best, &stats);
  size_t best_queued = stats.queued;
  for (size_t k = 1; k < g->count && best_queued > 0; ++k) {
    dc_stream_t* st = g->streams[(start + k) % g->count];
    dc_stream_stats(st, &stats);
    if (stats.queued < best_queued) {
      best = st;
      best_queued = stats.queued;
    }
  }
  return best;
}

dc_status_t dc_stream_group_sync(dc_stream_group_t* g, uint64_t timeout_ns) {
  static const char* fn = "dc_stream_group_sync";
  DC_RETURN_IF_ERROR(
      dc__resource_check(fn, "group", DC__RES(g), &dc__stream_group_type));
  bool infinite = timeout_ns == DC_TIMEOUT_INFINITE;
  uint64_t deadline = infinite ? 0 : dc__now_ns() + timeout_ns;
  dc_status_t first = DC_OK;
  dc__saved_error_t first_message;
  for (size_t i = 0; i < g->count; ++i) {
    uint64_t left = DC_TIMEOUT_INFINITE;
    if (!infinite) {
      uint64_t now = dc__now_ns();
      left = now < deadline ? deadline - now : 0;
    }
    dc_status_t st = dc_stream_sync(g->streams[i], left);
    if (st == DC_ERR_DEADLINE_EXCEEDED) {
      return DC_FAIL(st, "%s: stream '%s' did not drain within %llu ns", fn,
                     dc_stream_label(g->streams[i]),
                     (unsigned long long)timeout_ns);
    }
    if (st != DC_OK && first == DC_OK) {
      first = st;
      dc__error_save(&first_message);
    }
  }
  if (first != DC_OK) dc__error_restore(&first_message);
  return first;
}

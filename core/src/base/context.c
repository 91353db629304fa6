// context.c: context creation, lifetime, logging and live-object tracking.
// SPDX-License-Identifier: MIT

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "buffer_internal.h"
#include "context_internal.h"
#include "breaker_internal.h"
#include "fault_internal.h"
#include "graph_internal.h"
#include "program_internal.h"
#include "memory_pool_internal.h"
#include "scheduler.h"
#include "telemetry_internal.h"
#include "worker_pool_internal.h"

// Released objects stay recognisable for this many releases (see
// object_cache.h).
#define BUFFER_QUARANTINE 256
#define STREAM_QUARANTINE 64
#define GRAPH_QUARANTINE 64
#define EXEC_QUARANTINE 64
#define PROGRAM_QUARANTINE 64
#define BREAKER_QUARANTINE 64
#define TOKEN_QUARANTINE 64
#define GROUP_QUARANTINE 64
#define ENCODER_QUARANTINE 64

// Logical cores this process may run on (its affinity mask), which is what
// a worker pool can use; containers often allow fewer than the machine has.
static uint32_t available_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return (uint32_t)n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint32_t)n : 1u;
}

static void destroy_context(dc_context_t* ctx) {
  // Stream threads and pooled events refer to the devices: they go first.
  dc__scheduler_destroy(ctx->scheduler);
  dc__fault_forget(ctx);
  dc__resilience_context_destroy(ctx);
  for (size_t i = ctx->device_count; i-- > 0;) {
    dc__builtins_release(ctx->devices[i]);
  }
  // Pinned blocks are unpinned through their backend's device, which may
  // go before the pool that holds them.
  dc__host_pins_destroy(&ctx->pins, ctx->allocator);
  for (size_t i = ctx->device_count; i-- > 0;) {
    dc_device_t* device = ctx->devices[i];
    dc__memory_pool_destroy(device->core->pool);
    device->vtable->destroy(device);
  }
  dc__worker_pool_destroy(ctx->workers);
  dc__telemetry_destroy(ctx->telemetry);
  dc__object_cache_deinit(&ctx->buffer_cache);
  dc__object_cache_deinit(&ctx->stream_cache);
  dc__object_cache_deinit(&ctx->graph_cache);
  dc__object_cache_deinit(&ctx->exec_cache);
  dc__object_cache_deinit(&ctx->program_cache);
  dc__object_cache_deinit(&ctx->breaker_cache);
  dc__object_cache_deinit(&ctx->group_cache);
  dc__object_cache_deinit(&ctx->token_cache);
  dc__object_cache_deinit(&ctx->encoder_cache);
  pthread_mutex_destroy(&ctx->lock);
  dc_allocator_free(ctx->allocator, ctx, sizeof(*ctx));
}

static dc_status_t init_context(dc_context_t* ctx) {
  if (ctx->params.thread_count == 0) {
    ctx->params.thread_count = available_cores();
  }
  DC_RETURN_IF_ERROR(dc__telemetry_create(ctx->allocator, &ctx->telemetry));
  DC_RETURN_IF_ERROR(dc__worker_pool_create(
      ctx->allocator, ctx->params.thread_count, ctx->params.idle_policy,
      &ctx->workers));
  DC_RETURN_IF_ERROR(dc__scheduler_create(ctx, &ctx->scheduler));
  return dc__backends_enumerate(ctx, ctx->params.backends);
}

dc_status_t dc_context_create(const dc_context_params_t* params,
                              dc_context_t** out_context) {
  DC_REQUIRE_ARG(out_context, "dc_context_create");
  *out_context = NULL;
  dc_context_params_t resolved;
  dc__config_strings_t strings;
  DC_RETURN_IF_ERROR(dc__config_resolve(params, &resolved, &strings));

  dc_context_t* ctx = dc_allocator_calloc(resolved.allocator, 1, sizeof(*ctx));
  if (ctx == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the context");
  }
  ctx->allocator = resolved.allocator;
  ctx->params = resolved;
  ctx->strings = strings;
  dc__config_point_strings(&ctx->params, &ctx->strings);
  ctx->initial_log_level = resolved.log_level;
  atomic_init(&ctx->log_level, (int)resolved.log_level);
  atomic_init(&ctx->kernel_time_limit_ns, resolved.kernel_time_limit_ns);
  atomic_init(&ctx->interrupts, 0u);
  atomic_init(&ctx->host_refs, 1u);
  pthread_mutex_init(&ctx->lock, NULL);
  dc__host_pins_init(&ctx->pins);
  ctx->live.prev = ctx->live.next = &ctx->live;
  dc_allocator_t a = ctx->allocator;
  dc__object_cache_init(&ctx->buffer_cache, a, dc__buffer_object_size(),
                        BUFFER_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->stream_cache, a, dc__stream_object_size(),
                        STREAM_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->graph_cache, a, dc__graph_object_size(),
                        GRAPH_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->exec_cache, a, dc__graph_exec_object_size(),
                        EXEC_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->program_cache, a, dc__program_object_size(),
                        PROGRAM_QUARANTINE, dc__program_evict);
  dc__object_cache_init(&ctx->breaker_cache, a, dc__breaker_object_size(),
                        BREAKER_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->group_cache, a, dc__stream_group_object_size(),
                        GROUP_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->token_cache, a, dc__cancel_token_object_size(),
                        TOKEN_QUARANTINE, NULL);
  dc__object_cache_init(&ctx->encoder_cache, a, dc__encoder_object_size(),
                        ENCODER_QUARANTINE, NULL);
  dc__fault_set_init(&ctx->faults);

  dc_status_t status = init_context(ctx);
  if (status == DC_OK) status = dc__fault_init(ctx);  // DC_FAULTS
  if (status != DC_OK) {
    dc__saved_error_t saved;
    dc__error_save(&saved);
    destroy_context(ctx);
    dc__error_restore(&saved);
    return status;
  }
  DC_LOG(ctx, DC_LOG_INFO, "context", "created with %zu device(s), %u threads",
         ctx->device_count, ctx->params.thread_count);
  *out_context = ctx;
  return DC_OK;
}

void dc_context_retain(dc_context_t* ctx) {
  if (ctx != NULL) atomic_fetch_add(&ctx->host_refs, 1u);
}

void dc_context_release(dc_context_t* ctx) {
  if (ctx == NULL || atomic_fetch_sub(&ctx->host_refs, 1u) != 1u) return;
  // The host is gone. Work in flight finishes first (unless this is a
  // host callback of a stream, which cannot wait for itself). Then report
  // what the host left behind while the context is certainly alive, and
  // let the last object (or this call) destroy it.
  if (dc__current_stream() == NULL) dc__scheduler_drain(ctx->scheduler);
  dc_context_report_leaks(ctx);
  pthread_mutex_lock(&ctx->lock);
  ctx->shut_down = true;
  bool destroy_now = ctx->object_refs == 0;
  pthread_mutex_unlock(&ctx->lock);
  if (destroy_now) destroy_context(ctx);
}

dc_status_t dc_context_params(const dc_context_t* ctx,
                              dc_context_params_t* out_params) {
  DC_REQUIRE_ARG(ctx, "dc_context_params");
  DC_REQUIRE_ARG(out_params, "dc_context_params");
  *out_params = ctx->params;
  out_params->log_level = dc_context_log_level(ctx);
  out_params->kernel_time_limit_ns = atomic_load(
      &((dc_context_t*)ctx)->kernel_time_limit_ns);
  return DC_OK;
}

void dc_context_set_kernel_time_limit(dc_context_t* ctx, uint64_t limit_ns) {
  if (ctx != NULL) atomic_store(&ctx->kernel_time_limit_ns, limit_ns);
}

void dc_context_interrupt(dc_context_t* ctx) {
  if (ctx != NULL) atomic_fetch_add(&ctx->interrupts, 1u);
}

//===-- Logging ---------------------------------------------------------===//

bool dc__log_enabled(const dc_context_t* ctx, dc_log_level_t level) {
  if (ctx == NULL || level <= DC_LOG_OFF) return false;
  return (int)level <= atomic_load_explicit(
                           &((dc_context_t*)ctx)->log_level,
                           memory_order_relaxed);
}

void dc_context_set_log_level(dc_context_t* ctx, dc_log_level_t level) {
  if (ctx == NULL || level < DC_LOG_DEFAULT || level > DC_LOG_TRACE) return;
  if (level == DC_LOG_DEFAULT) level = ctx->initial_log_level;
  atomic_store(&ctx->log_level, (int)level);
}

dc_log_level_t dc_context_log_level(const dc_context_t* ctx) {
  if (ctx == NULL) return DC_LOG_OFF;
  return (dc_log_level_t)atomic_load(&((dc_context_t*)ctx)->log_level);
}

void dc_context_log(dc_context_t* ctx, dc_log_level_t level,
                    const char* component, const char* format, ...) {
  if (!dc__log_enabled(ctx, level) || format == NULL) return;
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  dc_log_record_t record = {
      .level = level,
      .component = component ? component : "host",
      .message = message,
      .time_ns = dc__wall_ns(),
  };
  ctx->params.log_fn(ctx->params.log_user_data, &record);
}

//===-- Live objects ----------------------------------------------------===//

void dc__context_track(dc_context_t* ctx, dc__live_node_t* node) {
  pthread_mutex_lock(&ctx->lock);
  node->next = &ctx->live;
  node->prev = ctx->live.prev;
  ctx->live.prev->next = node;
  ctx->live.prev = node;
  ++ctx->live_counts[node->kind];
  ++ctx->object_refs;
  pthread_mutex_unlock(&ctx->lock);
}

void dc__context_untrack(dc_context_t* ctx, dc__live_node_t* node) {
  pthread_mutex_lock(&ctx->lock);
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->prev = node->next = NULL;
  --ctx->live_counts[node->kind];
  pthread_mutex_unlock(&ctx->lock);
}

void dc__context_ref(dc_context_t* ctx) {
  pthread_mutex_lock(&ctx->lock);
  ++ctx->object_refs;
  pthread_mutex_unlock(&ctx->lock);
}

void dc__context_unref(dc_context_t* ctx) {
  pthread_mutex_lock(&ctx->lock);
  bool destroy_now = --ctx->object_refs == 0 && ctx->shut_down;
  pthread_mutex_unlock(&ctx->lock);
  if (destroy_now) destroy_context(ctx);
}

size_t dc_context_live_buffer_count(const dc_context_t* ctx) {
  if (ctx == NULL) return 0;
  dc_context_t* mutable_ctx = (dc_context_t*)ctx;
  pthread_mutex_lock(&mutable_ctx->lock);
  size_t count = ctx->live_counts[DC_LIVE_BUFFER];
  pthread_mutex_unlock(&mutable_ctx->lock);
  return count;
}

size_t dc_context_report_leaks(dc_context_t* ctx) {
  if (ctx == NULL) return 0;
  pthread_mutex_lock(&ctx->lock);
  const size_t* n = ctx->live_counts;
  size_t count = 0;
  for (int kind = 0; kind < DC_LIVE_KIND_COUNT; ++kind) count += n[kind];
  if (count > 0) {
    // "2 buffer(s), 1 stream(s) still alive:", naming only what leaked.
    static const char* const kNames[DC_LIVE_KIND_COUNT] = {
        "buffer", "program", "stream", "event", "graph"};
    char summary[160] = "";
    size_t used = 0;
    for (int kind = 0; kind < DC_LIVE_KIND_COUNT; ++kind) {
      if (n[kind] == 0 || used >= sizeof(summary)) continue;
      int w = snprintf(summary + used, sizeof(summary) - used, "%s%zu %s(s)",
                       used ? ", " : "", n[kind], kNames[kind]);
      if (w > 0) used += (size_t)w;
    }
    DC_LOG(ctx, DC_LOG_WARN, "leaks", "%s still alive:", summary);
  }
  for (dc__live_node_t* node = ctx->live.next; node != &ctx->live;
       node = node->next) {
    char line[256];
    node->describe(node, line, sizeof(line));
    DC_LOG(ctx, DC_LOG_WARN, "leaks", "  %s", line);
  }
  pthread_mutex_unlock(&ctx->lock);
  return count;
}

dc_allocator_t dc_context_allocator(const dc_context_t* ctx) {
  return ctx ? ctx->allocator : dc_allocator_system();
}

dc_worker_pool_t* dc_context_worker_pool(const dc_context_t* ctx) {
  return ctx ? ctx->workers : NULL;
}

// device_health.c: each device's health, from the failures of the work run
// on it and its circuit breaker (see dc/device.h).
// SPDX-License-Identifier: MIT
#include <string.h>

#include "context_internal.h"
#include "dc/breaker.h"

const char* dc_device_health_name(dc_device_health_state_t state) {
  switch (state) {
    case DC_DEVICE_HEALTHY: return "healthy";
    case DC_DEVICE_DEGRADED: return "degraded";
    case DC_DEVICE_QUARANTINED: return "quarantined";
    case DC_DEVICE_LOST: return "lost";
  }
  return "unknown";
}

static int index_of(const dc_device_t* device) {
  const dc_context_t* ctx = device->context;
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (ctx->devices[i] == device) return (int)i;
  }
  return -1;
}

// The device's breaker, if work has made it (|create|: make it now, with
// the context's defaults).
static dc_breaker_t* breaker_of(dc_device_t* device, bool create) {
  dc_breaker_t* b = NULL;
  if (create) {
    dc_device_breaker(device, NULL, &b);
  } else if (dc_breaker_find(device->context, device->info.name, &b) !=
             DC_OK) {
    b = NULL;
  }
  return b;
}

// The state from the record and the breaker (context lock held). A
// failure makes the device degraded for its breaker's window, even when
// the work that failed asked a breaker of its own (dc_graph_params_t).
static dc_device_health_state_t state_of(const dc__device_health_t* h,
                                         dc_breaker_t* breaker) {
  if (h->lost) return DC_DEVICE_LOST;
  dc_breaker_stats_t s;
  dc_breaker_params_t p;
  if (breaker != NULL && dc_breaker_stats(breaker, &s) == DC_OK &&
      dc_breaker_params(breaker, &p) == DC_OK) {
    if (s.state != DC_BREAKER_CLOSED) return DC_DEVICE_QUARANTINED;
    if (s.window_failures > 0) return DC_DEVICE_DEGRADED;
    if (h->last_failure_ns != 0 && p.window_calls == 0 &&
        dc__now_ns() - h->last_failure_ns < p.window_ns) {
      return DC_DEVICE_DEGRADED;
    }
  }
  return DC_DEVICE_HEALTHY;
}

dc_status_t dc_device_health(dc_device_t* device, dc_device_health_t* out) {
  static const char* fn = "dc_device_health";
  DC_REQUIRE_ARG(device, fn);
  DC_REQUIRE_ARG(out, fn);
  int i = index_of(device);
  if (i < 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the device is not part of its context", fn);
  }
  dc_breaker_t* breaker = breaker_of(device, false);
  dc_context_t* ctx = device->context;
  pthread_mutex_lock(&ctx->lock);
  const dc__device_health_t* h = &ctx->health[i];
  out->state = state_of(h, breaker);
  out->failures = h->failures;
  dc__strlcpy(out->reason, h->reason, sizeof(out->reason));
  pthread_mutex_unlock(&ctx->lock);
  return DC_OK;
}

dc_status_t dc_device_reset_health(dc_device_t* device) {
  DC_REQUIRE_ARG(device, "dc_device_reset_health");
  int i = index_of(device);
  if (i < 0) return DC_OK;
  dc_context_t* ctx = device->context;
  if (device->vtable->broken != NULL && device->vtable->broken(device)) {
    dc_device_health_t h;
    dc_device_health(device, &h);
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "dc_device_reset_health: %s stays lost: its driver cannot "
                   "recover from the error in this process (%s); a new "
                   "process gets it back",
                   device->info.name, h.reason);
  }
  pthread_mutex_lock(&ctx->lock);
  ctx->health[i] = (dc__device_health_t){0};
  pthread_mutex_unlock(&ctx->lock);
  dc_breaker_t* breaker = breaker_of(device, false);
  if (breaker != NULL) dc_breaker_reset(breaker);
  DC_LOG(ctx, DC_LOG_INFO, "health", "%s is back in service",
         device->info.name);
  return DC_OK;
}

dc_status_t dc_context_on_device_health(dc_context_t* ctx,
                                        dc_device_health_fn_t fn,
                                        void* user_data) {
  DC_REQUIRE_ARG(ctx, "dc_context_on_device_health");
  pthread_mutex_lock(&ctx->lock);
  ctx->health_fn = fn;
  ctx->health_user_data = user_data;
  pthread_mutex_unlock(&ctx->lock);
  return DC_OK;
}

bool dc__status_about_device(dc_status_t status) {
  // Deterministic failures say nothing about the device, nor does another
  // breaker's refusal.
  dc_status_class_t cls = dc_status_class(status);
  return status != DC_ERR_CIRCUIT_OPEN &&
         (cls == DC_STATUS_CLASS_TRANSIENT || cls == DC_STATUS_CLASS_DEVICE);
}

void dc_device_report_failure(dc_device_t* device, dc_status_t status,
                              const char* message) {
  if (device == NULL || message == NULL) return;
  dc__device_failed(device, status, message);
}

void dc__device_failed(dc_device_t* device, dc_status_t status,
                       const char* message) {
  if (!dc__status_about_device(status)) return;
  int i = index_of(device);
  if (i < 0) return;
  dc_breaker_t* breaker = breaker_of(device, true);
  bool lost = dc_status_class(status) == DC_STATUS_CLASS_DEVICE;
  if (lost && breaker != NULL) dc_breaker_trip(breaker);
  dc_context_t* ctx = device->context;
  pthread_mutex_lock(&ctx->lock);
  dc__device_health_t* h = &ctx->health[i];
  ++h->failures;
  h->last_failure_ns = dc__now_ns();
  dc__strlcpy(h->reason, message, sizeof(h->reason));
  h->lost |= lost;
  dc_device_health_t now = {.state = state_of(h, breaker),
                            .failures = h->failures};
  dc__strlcpy(now.reason, h->reason, sizeof(now.reason));
  bool announce = now.state >= DC_DEVICE_QUARANTINED &&
                  (int)now.state > h->announced;
  if (announce) h->announced = (int)now.state;
  dc_device_health_fn_t fn = ctx->health_fn;
  void* user_data = ctx->health_user_data;
  pthread_mutex_unlock(&ctx->lock);
  if (announce) {
    DC_LOG(ctx, DC_LOG_WARN, "health", "%s is %s: %s", device->info.name,
           dc_device_health_name(now.state), now.reason);
    if (fn != NULL) fn(device, &now, user_data);
  }
}

dc_status_t dc__device_outcome(dc_device_t* device, dc_status_t status) {
  if (device == NULL || !dc__status_about_device(status)) return status;
  dc__saved_error_t why;
  dc__error_save(&why);
  dc__device_failed(device, status, why.message);
  dc__error_restore(&why);
  return status;
}

// breaker_registry.c: the per-context state of resilience: the registry of
// named breakers (a device's, a kernel's on a device), the defaults they
// are made with, and each device's default retry policy.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "breaker_internal.h"
#include "context_internal.h"
#include "dc/device.h"

//===-- The per-context state -------------------------------------------===//

typedef struct dc__resilience_t {
  pthread_mutex_t lock;  // guards the fields below
  dc_breaker_params_t defaults;  // as set; zeroes mean built-in defaults
  dc_breaker_t** breakers;
  size_t count;
  size_t capacity;
  dc_retry_policy_t device_policy[DC_MAX_DEVICES];
} resilience_t;

// Returns the state of |ctx| (made on first use, kept in the context),
// creating it if |create|; NULL if there is none (or it cannot be
// allocated: then with the message set).
static resilience_t* state_of(dc_context_t* ctx, bool create) {
  pthread_mutex_lock(&ctx->lock);
  resilience_t* r = ctx->resilience;
  if (r == NULL && create) {
    r = dc_allocator_calloc(ctx->allocator, 1, sizeof(*r));
    if (r == NULL) {
      DC_FAIL(DC_ERR_OUT_OF_MEMORY,
              "cannot allocate the context's breaker registry");
    } else {
      pthread_mutex_init(&r->lock, NULL);
      ctx->resilience = r;
    }
  }
  pthread_mutex_unlock(&ctx->lock);
  return r;
}

void dc__resilience_context_destroy(dc_context_t* ctx) {
  if (ctx == NULL) return;
  resilience_t* r = ctx->resilience;
  ctx->resilience = NULL;
  if (r == NULL) return;
  // The registry's references are the last: each the host holds keeps the
  // context alive.
  for (size_t i = 0; i < r->count; ++i) dc_breaker_release(r->breakers[i]);
  dc_allocator_free(ctx->allocator, r->breakers,
                    r->capacity * sizeof(*r->breakers));
  pthread_mutex_destroy(&r->lock);
  dc_allocator_free(ctx->allocator, r, sizeof(*r));
}

static int device_index(const dc_device_t* device) {
  const dc_context_t* ctx = device->context;
  if (ctx == NULL) return -1;
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (ctx->devices[i] == device) return (int)i;
  }
  return -1;
}

dc_status_t dc__resilience_set_device_policy(dc_device_t* device,
                                             const dc_retry_policy_t* policy) {
  int index = device_index(device);
  if (index < 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_device_set_retry_policy: device '%s' is not one of "
                   "its context's devices",
                   device->info.name);
  }
  resilience_t* r = state_of(device->context, true);
  if (r == NULL) return DC_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&r->lock);
  if (policy != NULL) {
    r->device_policy[index] = *policy;
  } else {
    r->device_policy[index] = (dc_retry_policy_t){0};
  }
  pthread_mutex_unlock(&r->lock);
  return DC_OK;
}

void dc__resilience_device_policy(const dc_device_t* device,
                                  dc_retry_policy_t* out_policy) {
  *out_policy = (dc_retry_policy_t){0};
  int index = device_index(device);
  if (index < 0) return;
  resilience_t* r = state_of(device->context, false);
  if (r == NULL) return;
  pthread_mutex_lock(&r->lock);
  *out_policy = r->device_policy[index];
  pthread_mutex_unlock(&r->lock);
}


// The context's defaults, as set.
dc_breaker_params_t dc__breaker_context_defaults(dc_context_t* ctx) {
  dc_breaker_params_t p = {0};
  resilience_t* r = state_of(ctx, false);
  if (r != NULL) {
    pthread_mutex_lock(&r->lock);
    p = r->defaults;
    pthread_mutex_unlock(&r->lock);
  }
  return p;
}

//===-- The registry ----------------------------------------------------===//

dc_status_t dc_breaker_set_defaults(dc_context_t* ctx,
                                    const dc_breaker_params_t* params) {
  static const char* fn = "dc_breaker_set_defaults";
  DC_REQUIRE_ARG(ctx, fn);
  DC_RETURN_IF_ERROR(dc__breaker_checked_params(params, fn));
  resilience_t* r = state_of(ctx, true);
  if (r == NULL) return DC_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&r->lock);
  r->defaults = params != NULL ? *params : (dc_breaker_params_t){0};
  pthread_mutex_unlock(&r->lock);
  return DC_OK;
}

dc_status_t dc_breaker_defaults(dc_context_t* ctx,
                                dc_breaker_params_t* out_params) {
  DC_REQUIRE_ARG(out_params, "dc_breaker_defaults");
  memset(out_params, 0, sizeof(*out_params));
  DC_REQUIRE_ARG(ctx, "dc_breaker_defaults");
  *out_params = dc__breaker_context_defaults(ctx);
  return DC_OK;
}

static dc_breaker_t* find_locked(const resilience_t* r, const char* name) {
  for (size_t i = 0; i < r->count; ++i) {
    if (strcmp(dc_breaker_name(r->breakers[i]), name) == 0) return r->breakers[i];
  }
  return NULL;
}

// Finds or adds the registry's breaker |name| (with |params|, NULL: the
// context's defaults). With |must_be_new|, an existing one is an error
// (dc_breaker_register).
static dc_status_t registry_get(dc_context_t* ctx, const char* name,
                                bool must_be_new,
                                const dc_breaker_params_t* params,
                                const char* fn, dc_breaker_t** out) {
  *out = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  DC_RETURN_IF_ERROR(dc__breaker_check_name(name, fn));
  DC_RETURN_IF_ERROR(dc__breaker_checked_params(params, fn));
  resilience_t* r = state_of(ctx, true);
  if (r == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_status_t status = DC_OK;
  pthread_mutex_lock(&r->lock);
  dc_breaker_t* b = find_locked(r, name);
  if (b != NULL) {
    if (must_be_new) {
      status = DC_FAIL(DC_ERR_ALREADY_EXISTS,
                       "%s: the context already has a breaker named '%s'",
                       fn, name);
      b = NULL;
    }
  } else {
    if (r->count == r->capacity) {
      size_t grown = r->capacity ? 2 * r->capacity : 8;
      dc_breaker_t** items = ctx->allocator.fn(
          ctx->allocator.user_data, r->breakers,
          r->capacity * sizeof(*items), grown * sizeof(*items));
      if (items == NULL) {
        status = DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                         "%s: cannot grow the breaker registry", fn);
      } else {
        r->breakers = items;
        r->capacity = grown;
      }
    }
    if (status == DC_OK) {
      const dc_breaker_params_t* p = params != NULL ? params : &r->defaults;
      status = dc__breaker_new(ctx, name, p, true, &b);
      if (status == DC_OK) r->breakers[r->count++] = b;
    }
  }
  pthread_mutex_unlock(&r->lock);
  *out = b;
  return status;
}

dc_status_t dc_breaker_for(dc_context_t* ctx, const char* name,
                           dc_breaker_t** out_breaker) {
  DC_REQUIRE_ARG(out_breaker, "dc_breaker_for");
  return registry_get(ctx, name, false, NULL, "dc_breaker_for", out_breaker);
}

dc_status_t dc_breaker_register(dc_context_t* ctx, const char* name,
                                const dc_breaker_params_t* params,
                                dc_breaker_t** out_breaker) {
  DC_REQUIRE_ARG(out_breaker, "dc_breaker_register");
  return registry_get(ctx, name, true, params, "dc_breaker_register",
                      out_breaker);
}

dc_status_t dc_breaker_find(dc_context_t* ctx, const char* name,
                            dc_breaker_t** out_breaker) {
  static const char* fn = "dc_breaker_find";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  resilience_t* r = state_of(ctx, false);
  if (r != NULL) {
    pthread_mutex_lock(&r->lock);
    *out_breaker = find_locked(r, name);
    pthread_mutex_unlock(&r->lock);
  }
  if (*out_breaker == NULL) {
    return DC_FAIL(DC_ERR_NOT_FOUND, "%s: the context has no breaker '%s'",
                   fn, name);
  }
  return DC_OK;
}

size_t dc_breaker_count(dc_context_t* ctx) {
  if (ctx == NULL) return 0;
  resilience_t* r = state_of(ctx, false);
  if (r == NULL) return 0;
  pthread_mutex_lock(&r->lock);
  size_t count = r->count;
  pthread_mutex_unlock(&r->lock);
  return count;
}

dc_status_t dc_breaker_at(dc_context_t* ctx, size_t index,
                          dc_breaker_t** out_breaker) {
  static const char* fn = "dc_breaker_at";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  resilience_t* r = state_of(ctx, false);
  size_t count = 0;
  if (r != NULL) {
    pthread_mutex_lock(&r->lock);
    count = r->count;
    if (index < count) *out_breaker = r->breakers[index];
    pthread_mutex_unlock(&r->lock);
  }
  if (*out_breaker == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: index %zu is past the %zu breaker(s)", fn, index,
                   count);
  }
  return DC_OK;
}

dc_status_t dc_device_breaker(dc_device_t* device, const char* kernel,
                              dc_breaker_t** out_breaker) {
  static const char* fn = "dc_device_breaker";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(device, fn);
  char name[DC__BREAKER_NAME_SIZE + 1];
  const char* device_name = dc_device_name(device);
  int n = kernel != NULL ? snprintf(name, sizeof(name), "%s/%s", device_name,
                                    kernel)
                         : snprintf(name, sizeof(name), "%s", device_name);
  if (n < 0 || (size_t)n >= DC__BREAKER_NAME_SIZE) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the breaker name '%s/%s' is too long (at most %d "
                   "bytes)", fn, device_name, kernel != NULL ? kernel : "",
                   DC__BREAKER_NAME_SIZE - 1);
  }
  return registry_get(dc_device_context(device), name, false, NULL, fn,
                      out_breaker);
}

// config.c: resolves context parameters against the environment.
//
// A parameter left at zero takes the value of its environment variable,
// and else the built-in default; docs/configuration.md has the table. A
// malformed variable is an error that names it, never silently ignored.
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "context_internal.h"

// More threads than this is a typo, not a machine.
#define DC__MAX_THREADS 4096u

static dc_status_t env_log_level(dc_log_level_t* level) {
  const char* text = getenv("DC_LOG");
  if (*level != DC_LOG_DEFAULT) return DC_OK;
  if (text == NULL || *text == '\0') {
    *level = DC_LOG_WARN;
    return DC_OK;
  }
  if (!dc_log_level_parse(text, level)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: DC_LOG='%s' is not a log level "
                   "(off, error, warn, info, debug, trace)",
                   text);
  }
  return DC_OK;
}

static dc_status_t env_idle_policy(dc_idle_policy_t* policy) {
  const char* text = getenv("DC_IDLE");
  if (*policy != DC_IDLE_DEFAULT) return DC_OK;
  if (text == NULL || *text == '\0') {
    *policy = DC_IDLE_BALANCED;
    return DC_OK;
  }
  if (!dc_idle_policy_parse(text, policy)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: DC_IDLE='%s' is not an idle policy "
                   "(latency, balanced, power)",
                   text);
  }
  return DC_OK;
}

// Fills |*value| from |name| if it is still 0 and the variable is set.
static dc_status_t env_u32(const char* name, uint32_t* value) {
  const char* text = getenv(name);
  if (*value != 0 || text == NULL || *text == '\0') return DC_OK;
  if (!dc__parse_u32(text, value) || *value == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: %s='%s' is not a positive integer",
                   name, text);
  }
  return DC_OK;
}

static dc_status_t env_size(const char* name, size_t* value) {
  const char* text = getenv(name);
  if (*value != 0 || text == NULL || *text == '\0') return DC_OK;
  if (!dc__parse_size(text, value) || *value == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: %s='%s' is not a positive byte size "
                   "(digits with an optional K, M, G or T suffix)",
                   name, text);
  }
  return DC_OK;
}

static dc_status_t check_params(const dc_context_params_t* p) {
  if (p->allocator.fn == NULL && p->allocator.user_data != NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: allocator.user_data is set but "
                   "allocator.fn is NULL");
  }
  if (p->log_level < DC_LOG_DEFAULT || p->log_level > DC_LOG_TRACE) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: log_level %d is not a dc_log_level_t",
                   (int)p->log_level);
  }
  if (p->idle_policy < DC_IDLE_DEFAULT || p->idle_policy > DC_IDLE_POWER) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: idle_policy %d is not a "
                   "dc_idle_policy_t",
                   (int)p->idle_policy);
  }
  if (p->thread_count > DC__MAX_THREADS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: thread_count %u is more than %u",
                   p->thread_count, DC__MAX_THREADS);
  }
  return DC_OK;
}

dc_status_t dc__config_resolve(const dc_context_params_t* params,
                               dc_context_params_t* out,
                               char* backends_storage, size_t storage_size) {
  static const dc_context_params_t kNone;
  *out = params ? *params : kNone;
  DC_RETURN_IF_ERROR(check_params(out));
  if (out->allocator.fn == NULL) out->allocator = dc_allocator_system();
  if (out->log_fn == NULL) out->log_fn = dc__log_default_sink;
  DC_RETURN_IF_ERROR(env_log_level(&out->log_level));
  DC_RETURN_IF_ERROR(env_idle_policy(&out->idle_policy));
  DC_RETURN_IF_ERROR(env_u32("DC_WORKERS", &out->thread_count));
  if (out->thread_count > DC__MAX_THREADS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: DC_WORKERS=%u is more than %u",
                   out->thread_count, DC__MAX_THREADS);
  }
  // check_params() saw the field before DC_WORKERS filled it in.
  if (out->thread_count > 4096) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: DC_WORKERS=%u is more than 4096",
                   out->thread_count);
  }
  DC_RETURN_IF_ERROR(env_size("DC_POOL_CACHE_LIMIT", &out->pool_cache_limit));
  DC_RETURN_IF_ERROR(env_size("DC_MEMORY_BUDGET", &out->device_memory_budget));
  // Thread count, cache limit and budget still at 0 are resolved per
  // device, from its capabilities, when the devices are known.
  const char* backends = out->backends;
  if (backends == NULL) backends = getenv("DC_DEVICES");
  if (backends == NULL || *backends == '\0') backends = "all";
  if (strlen(backends) >= storage_size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: backend list '%s' is longer than %zu "
                   "characters",
                   backends, storage_size - 1);
  }
  dc__strlcpy(backends_storage, backends, storage_size);
  out->backends = backends_storage;
  return DC_OK;
}

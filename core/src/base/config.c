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
#define DC__MAX_CPU_DEVICES 8u

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
  if (p->cpu_devices > DC__MAX_CPU_DEVICES) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: cpu_devices %u is more than %u",
                   p->cpu_devices, DC__MAX_CPU_DEVICES);
  }
  return DC_OK;
}

// Copies the string setting |value| (else the variable |env|, else
// |fallback|) into |storage|.
static dc_status_t resolve_string(const char* what, const char* value,
                                  const char* env, const char* fallback,
                                  char* storage, size_t size) {
  if (value == NULL && env != NULL) value = getenv(env);
  if (value == NULL || *value == '\0') value = fallback;
  if (strlen(value) >= size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: %s '%s' is longer than %zu characters",
                   what, value, size - 1);
  }
  dc__strlcpy(storage, value, size);
  return DC_OK;
}

// Reads a boolean variable: 1/0, on/off, yes/no, true/false.
static dc_status_t env_bool(const char* name, bool* value) {
  const char* text = getenv(name);
  if (*value || text == NULL || *text == '\0') return DC_OK;
  if (dc__str_ieq(text, "1") || dc__str_ieq(text, "on") ||
      dc__str_ieq(text, "yes") || dc__str_ieq(text, "true")) {
    *value = true;
  } else if (!(dc__str_ieq(text, "0") || dc__str_ieq(text, "off") ||
               dc__str_ieq(text, "no") || dc__str_ieq(text, "false"))) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: %s='%s' is not a boolean (1, 0, on, "
                   "off, yes, no, true, false)",
                   name, text);
  }
  return DC_OK;
}

void dc__config_point_strings(dc_context_params_t* params,
                              dc__config_strings_t* strings) {
  params->backends = strings->backends;
  params->c_compiler = strings->c_compiler;
  params->kernel_cache_dir =
      strings->kernel_cache_dir[0] ? strings->kernel_cache_dir : NULL;
}

dc_status_t dc__config_resolve(const dc_context_params_t* params,
                               dc_context_params_t* out,
                               dc__config_strings_t* strings) {
  static const dc_context_params_t kNone;
  *out = params ? *params : kNone;
  DC_RETURN_IF_ERROR(check_params(out));
  if (out->allocator.fn == NULL) out->allocator = dc_allocator_system();
  if (out->log_fn == NULL) out->log_fn = dc__log_default_sink;
  DC_RETURN_IF_ERROR(env_log_level(&out->log_level));
  DC_RETURN_IF_ERROR(env_idle_policy(&out->idle_policy));
  DC_RETURN_IF_ERROR(env_u32("DC_WORKERS", &out->thread_count));
  // check_params() saw the field before DC_WORKERS filled it in.
  if (out->thread_count > DC__MAX_THREADS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: DC_WORKERS=%u is more than %u",
                   out->thread_count, DC__MAX_THREADS);
  }
  DC_RETURN_IF_ERROR(env_size("DC_POOL_CACHE_LIMIT", &out->pool_cache_limit));
  DC_RETURN_IF_ERROR(env_size("DC_MEMORY_BUDGET", &out->device_memory_budget));
  DC_RETURN_IF_ERROR(env_bool("DC_CHECKED", &out->checked_kernels));
  if (out->kernel_time_limit_ns == 0) {
    uint32_t ms = 0;
    DC_RETURN_IF_ERROR(env_u32("DC_KERNEL_TIME_LIMIT_MS", &ms));
    out->kernel_time_limit_ns = (uint64_t)ms * 1000000u;
  }
  DC_RETURN_IF_ERROR(env_bool("DC_AUTOTUNE", &out->autotune));
  DC_RETURN_IF_ERROR(env_u32("DC_CPU_DEVICES", &out->cpu_devices));
  if (out->cpu_devices > DC__MAX_CPU_DEVICES) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_context_create: DC_CPU_DEVICES=%u is more than %u",
                   out->cpu_devices, DC__MAX_CPU_DEVICES);
  }
  if (out->cpu_devices == 0) out->cpu_devices = 1;
  // Thread count, cache limit and budget still at 0 are resolved per
  // device, from its capabilities, when the devices are known. The cache
  // directory stays empty when it defaults: the kernel cache resolves it.
  DC_RETURN_IF_ERROR(resolve_string("backend list", out->backends,
                                    "DC_DEVICES", "all", strings->backends,
                                    sizeof(strings->backends)));
  DC_RETURN_IF_ERROR(resolve_string("C compiler", out->c_compiler, "DC_CC",
                                    "cc", strings->c_compiler,
                                    sizeof(strings->c_compiler)));
  DC_RETURN_IF_ERROR(resolve_string(
      "kernel cache directory", out->kernel_cache_dir, "DC_CACHE_DIR", "",
      strings->kernel_cache_dir, sizeof(strings->kernel_cache_dir)));
  dc__config_point_strings(out, strings);
  return DC_OK;
}

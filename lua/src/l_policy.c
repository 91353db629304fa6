// l_policy.c: retry policies and circuit-breaker parameters as Lua values,
// the registry's named breakers, the device-wide default policy, and
// dc.retry_call, a retry loop around a Lua function.
//
// A dc.retry or a dc.breaker is an immutable value, not a handle: its
// userdata holds the C struct itself (with every default filled in), so
// it owns nothing, needs no close and is freed by the collector alone.
// Scripts write times in seconds; the structs keep nanoseconds. Every
// field is checked when the value is made, so a typo ("attempt") or a bad
// value fails there with INVALID_ARGUMENT naming the field, not later in
// the middle of a run. Functions that take a policy take the object or a
// plain table of the same fields (dclua_check_retry, dclua_check_breaker).
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "dclua_internal.h"
#include "l_watchdog.h"

#define NS_PER_S 1e9
#define ALL_CLASSES \
  (DC_RETRY_ON_TRANSIENT | DC_RETRY_ON_DETERMINISTIC | DC_RETRY_ON_DEVICE)

// Every status code, for masks and their names.
static const dc_status_t kCodes[] = {
#define CODE_(name, value, cls, desc) DC_##name,
    DC_STATUS_MAP(CODE_)
#undef CODE_
};
#define CODE_COUNT (sizeof(kCodes) / sizeof(kCodes[0]))

static const char* const kJitters[] = {"full", "none", "equal",
                                       "decorrelated", NULL};

//===-- Reading fields --------------------------------------------------===//

// Raises INVALID_ARGUMENT for a bad field of the table a |what| reads.
static int field_error(lua_State* L, const char* what, const char* field,
                       const char* problem) {
  return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "%s: field '%s' %s", what,
                      field, problem);
}

// Reads a number field; false when absent. Raises unless it is a finite
// number.
static bool get_number(lua_State* L, int index, const char* what,
                       const char* field, double* out) {
  int type = lua_getfield(L, index, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  int is_number = 0;
  *out = (double)lua_tonumberx(L, -1, &is_number);
  if (type != LUA_TNUMBER || !is_number || !isfinite(*out)) {
    field_error(L, what, field,
                lua_pushfstring(L, "must be a finite number, got %s",
                                luaL_tolstring(L, -1, NULL)));
  }
  lua_pop(L, 1);
  return true;
}

// Reads an integer field in [min, max]; false when absent.
static bool get_integer(lua_State* L, int index, const char* what,
                        const char* field, lua_Integer min, lua_Integer max,
                        lua_Integer* out) {
  int type = lua_getfield(L, index, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  int is_integer = 0;
  *out = lua_tointegerx(L, -1, &is_integer);
  if (type != LUA_TNUMBER || !is_integer || *out < min || *out > max) {
    field_error(L, what, field,
                lua_pushfstring(L, "must be an integer from %I to %I, got %s",
                                min, max, luaL_tolstring(L, -1, NULL)));
  }
  lua_pop(L, 1);
  return true;
}

// Reads a duration in seconds (> 0) into nanoseconds; false when absent.
static bool get_seconds(lua_State* L, int index, const char* what,
                        const char* field, uint64_t* out_ns) {
  double s = 0;
  if (!get_number(L, index, what, field, &s)) return false;
  if (!(s > 0) || s * NS_PER_S > 1.8e19) {
    field_error(L, what, field,
                lua_pushfstring(L, "must be a positive number of seconds, "
                                "got %f", s));
  }
  *out_ns = dclua_seconds_to_ns(s);
  return true;
}

// Adds the status or class named by the string at the top of the stack to
// |codes| (a DC_STATUS_BIT mask) or |classes| (DC_RETRY_ON_* bits; NULL:
// classes are not allowed here).
static void add_code(lua_State* L, const char* what, const char* field,
                     uint64_t* codes, uint32_t* classes) {
  const char* name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                     : NULL;
  dc_status_t status;
  if (name == NULL) {
    field_error(L, what, field,
                lua_pushfstring(L, "must list status names, got %s",
                                luaL_typename(L, -1)));
  } else if (classes != NULL && strcmp(name, "transient") == 0) {
    *classes |= DC_RETRY_ON_TRANSIENT;
  } else if (classes != NULL && strcmp(name, "deterministic") == 0) {
    *classes |= DC_RETRY_ON_DETERMINISTIC;
  } else if (classes != NULL && strcmp(name, "device") == 0) {
    *classes |= DC_RETRY_ON_DEVICE;
  } else if (classes != NULL && strcmp(name, "all") == 0) {
    *classes |= ALL_CLASSES;
  } else if (dc_status_from_name(name, &status) && status != DC_OK) {
    *codes |= DC_STATUS_BIT(status);
  } else {
    field_error(L, what, field,
                lua_pushfstring(L, "names an unknown status '%s'%s", name,
                                classes != NULL ? " (or a class: "
                                "\"transient\", \"device\", "
                                "\"deterministic\", \"all\")" : ""));
  }
}

// Reads a field that is one status name or a list of them; false when
// absent.
static bool get_codes(lua_State* L, int index, const char* what,
                      const char* field, uint64_t* codes, uint32_t* classes) {
  int type = lua_getfield(L, index, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  if (type == LUA_TSTRING) {
    add_code(L, what, field, codes, classes);
  } else if (type == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n == 0) field_error(L, what, field, "is an empty list");
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, -1, i);
      add_code(L, what, field, codes, classes);
      lua_pop(L, 1);
    }
  } else {
    field_error(L, what, field,
                lua_pushfstring(L, "must be a status name or a list of "
                                "them, got %s", luaL_typename(L, -1)));
  }
  lua_pop(L, 1);
  return true;
}

// Pushes the list of the names of the codes in |mask|.
static void push_codes(lua_State* L, uint64_t mask) {
  lua_newtable(L);
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    if (mask & DC_STATUS_BIT(kCodes[i])) {
      lua_pushstring(L, dc_status_name(kCodes[i]));
      lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
    }
  }
}

//===-- Retry policies --------------------------------------------------===//

static const char* const kRetryFields[] = {
    "attempts", "base", "factor", "max", "jitter", "budget", "retry_on",
    "never_retry", "seed", NULL};

// The codes |policy| retries (as a mask), attempts and time aside.
static uint64_t retried_codes(const dc_retry_policy_t* policy) {
  uint64_t mask = 0;
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    if (dc_retry_is_retryable(policy, kCodes[i])) {
      mask |= DC_STATUS_BIT(kCodes[i]);
    }
  }
  return mask;
}

// Turns what `retry_on` listed into the policy's masks: exactly the listed
// classes and codes are retried. Codes of the default class that were not
// listed go to never_retry, so { "UNAVAILABLE" } means that code alone.
static void set_retry_on(dc_retry_policy_t* p, uint64_t codes,
                         uint32_t classes) {
  p->retry_on = classes != 0 ? classes : DC_RETRY_ON_TRANSIENT;
  p->also_retry = codes;
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    bool by_class = (classes & (1u << dc_status_class(kCodes[i]))) != 0;
    if (!by_class && !(codes & DC_STATUS_BIT(kCodes[i]))) {
      p->never_retry |= DC_STATUS_BIT(kCodes[i]);
    }
  }
}

// Reads `jitter` into |p|.
static void get_jitter(lua_State* L, int index, dc_retry_policy_t* p) {
  if (lua_getfield(L, index, "jitter") != LUA_TNIL) {
    const char* name = lua_tostring(L, -1);
    int found = -1;
    for (int i = 0; name != NULL && kJitters[i] != NULL; ++i) {
      if (lua_type(L, -1) == LUA_TSTRING && strcmp(name, kJitters[i]) == 0) {
        found = i;
      }
    }
    if (found < 0) {
      field_error(L, "dc.retry", "jitter",
                  lua_pushfstring(L, "must be \"none\", \"full\", \"equal\" "
                                  "or \"decorrelated\", got %s",
                                  luaL_tolstring(L, -1, NULL)));
    }
    p->jitter = (dc_jitter_t)found;  // kJitters is in enum order
  }
  lua_pop(L, 1);
}

// Reads attempts, base, max, budget and factor into |p|.
static void read_retry_times(lua_State* L, int index, dc_retry_policy_t* p) {
  static const char* what = "dc.retry";
  lua_Integer n = 0;
  if (get_integer(L, index, what, "attempts", 1, UINT32_MAX, &n)) {
    p->max_attempts = (uint32_t)n;
  }
  get_seconds(L, index, what, "base", &p->base_delay_ns);
  get_seconds(L, index, what, "max", &p->max_delay_ns);
  get_seconds(L, index, what, "budget", &p->budget_ns);
  double factor = 0;
  if (get_number(L, index, what, "factor", &factor)) {
    if (factor < 1) {
      field_error(L, what, "factor",
                  lua_pushfstring(L, "must be >= 1, got %f", factor));
    }
    p->multiplier = factor;
  }
  // Resolving clamps base to max: check first, with the defaults of both.
  uint64_t base = p->base_delay_ns ? p->base_delay_ns : 1000000u;
  uint64_t max = p->max_delay_ns ? p->max_delay_ns : 1000000000u;
  if (base > max) {
    dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                 "%s: field 'base' (%g s) exceeds 'max' (%g s%s)", what,
                 base / NS_PER_S, max / NS_PER_S,
                 p->max_delay_ns ? "" : ", the default");
  }
}

// Reads retry_on and never_retry into |p|.
static void read_retry_codes(lua_State* L, int index, dc_retry_policy_t* p) {
  static const char* what = "dc.retry";
  static const dc_status_t never_retried[] = {DC_ERR_INVALID_ARGUMENT,
                                              DC_ERR_CANCELLED};
  uint64_t codes = 0;
  uint32_t classes = 0;
  if (get_codes(L, index, what, "retry_on", &codes, &classes)) {
    for (int i = 0; i < 2; ++i) {
      if (codes & DC_STATUS_BIT(never_retried[i])) {
        field_error(L, what, "retry_on",
                    lua_pushfstring(L, "names %s, which is never retried",
                                    dc_status_name(never_retried[i])));
      }
    }
    set_retry_on(p, codes, classes);
  }
  uint64_t never = 0;
  if (get_codes(L, index, what, "never_retry", &never, NULL)) {
    p->never_retry |= never;
  }
}

// Reads the policy table at |index| (fields checked) into |out|, with
// every default filled in.
static void read_retry_table(lua_State* L, int index, dc_retry_policy_t* out) {
  dclua_check_fields(L, index, "dc.retry", kRetryFields);
  dc_retry_policy_t p = {0};
  read_retry_times(L, index, &p);
  get_jitter(L, index, &p);
  read_retry_codes(L, index, &p);
  lua_Integer seed = 0;
  if (get_integer(L, index, "dc.retry", "seed", 0, LUA_MAXINTEGER, &seed)) {
    p.seed = (uint64_t)seed;
  }
  if (dc_retry_policy_check(&p) != DC_OK) {
    dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "dc.retry: %s", dc_last_error());
  }
  dc_retry_policy_resolve(&p, out);
}

void dclua_check_retry(lua_State* L, int index, dc_retry_policy_t* out) {
  const dc_retry_policy_t* p = luaL_testudata(L, index, DCLUA_RETRY);
  if (p != NULL) {
    *out = *p;
  } else if (lua_istable(L, index)) {
    read_retry_table(L, lua_absindex(L, index), out);
  } else {
    luaL_typeerror(L, index, "dc.retry or table");
  }
}

// Pushes a dc.retry holding |policy|.
// [-0, +1, m]
static void push_retry(lua_State* L, const dc_retry_policy_t* policy) {
  dc_retry_policy_t* p = lua_newuserdatauv(L, sizeof(*p), 0);
  *p = *policy;
  luaL_setmetatable(L, DCLUA_RETRY);
}

// [-1, +1, e]  dc.retry(fields) -> dc.retry
static int l_retry(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  dc_retry_policy_t p;
  dclua_check_retry(L, 1, &p);
  push_retry(L, &p);
  return 1;
}

// Pushes how `retry_on` reads back: "transient", "all", or the codes.
static void push_retry_on(lua_State* L, const dc_retry_policy_t* p) {
  dc_retry_policy_t plain = {0};
  dc_retry_policy_t all = {.retry_on = ALL_CLASSES};
  uint64_t mask = retried_codes(p);
  if (mask == retried_codes(&plain)) {
    lua_pushliteral(L, "transient");
  } else if (mask == retried_codes(&all)) {
    lua_pushliteral(L, "all");
  } else {
    push_codes(L, mask);
  }
}

// [-2, +1, e]  policy.field -> the field's value (seconds for times; nil
// for an unknown field and for `budget` when there is none)
static int retry_index(lua_State* L) {
  const dc_retry_policy_t* p = dclua_udata_check(L, 1, DCLUA_RETRY);
  const char* key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (strcmp(key, "attempts") == 0) {
    lua_pushinteger(L, p->max_attempts);
  } else if (strcmp(key, "base") == 0) {
    lua_pushnumber(L, p->base_delay_ns / NS_PER_S);
  } else if (strcmp(key, "factor") == 0) {
    lua_pushnumber(L, p->multiplier);
  } else if (strcmp(key, "max") == 0) {
    lua_pushnumber(L, p->max_delay_ns / NS_PER_S);
  } else if (strcmp(key, "jitter") == 0) {
    lua_pushstring(L, kJitters[p->jitter]);
  } else if (strcmp(key, "budget") == 0 && p->budget_ns != 0) {
    lua_pushnumber(L, p->budget_ns / NS_PER_S);
  } else if (strcmp(key, "retry_on") == 0) {
    push_retry_on(L, p);
  } else if (strcmp(key, "seed") == 0) {
    lua_pushinteger(L, (lua_Integer)p->seed);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// Writes how `retry_on` reads in text: transient, all, or { "CODE", ... }.
static void retry_on_text(const dc_retry_policy_t* p, char* text,
                          size_t size) {
  dc_retry_policy_t plain = {0};
  dc_retry_policy_t all = {.retry_on = ALL_CLASSES};
  uint64_t mask = retried_codes(p);
  if (mask == retried_codes(&plain) || mask == retried_codes(&all)) {
    snprintf(text, size, "\"%s\"",
             mask == retried_codes(&all) ? "all" : "transient");
    return;
  }
  size_t used = (size_t)snprintf(text, size, "{");
  for (size_t i = 0; i < CODE_COUNT && used < size; ++i) {
    if (!(mask & DC_STATUS_BIT(kCodes[i]))) continue;
    int n = snprintf(text + used, size - used, "%s\"%s\"",
                     used > 1 ? ", " : " ", dc_status_name(kCodes[i]));
    if (n > 0) used += (size_t)n;
  }
  if (used < size) snprintf(text + used, size - used, " }");
}

// [-1, +1, m]  tostring(policy) -> "dc.retry { attempts = 3, ... }"
static int retry_tostring(lua_State* L) {
  const dc_retry_policy_t* p = dclua_udata_check(L, 1, DCLUA_RETRY);
  char budget[64] = "";
  if (p->budget_ns != 0) {
    snprintf(budget, sizeof(budget), ", budget = %g",
             p->budget_ns / NS_PER_S);
  }
  char retry_on[512];
  retry_on_text(p, retry_on, sizeof(retry_on));
  char text[1024];
  snprintf(text, sizeof(text),
           "dc.retry { attempts = %u, base = %g, factor = %g, max = %g, "
           "jitter = \"%s\"%s, retry_on = %s }",
           (unsigned)p->max_attempts, p->base_delay_ns / NS_PER_S,
           p->multiplier, p->max_delay_ns / NS_PER_S, kJitters[p->jitter],
           budget, retry_on);
  lua_pushstring(L, text);
  return 1;
}

//===-- The device-wide default -----------------------------------------===//

// [-2, +1, e]  dev:set_retry(policy | table | nil) -> dev (nil: back to
// the built-in defaults)
static int device_set_retry(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  if (lua_isnoneornil(L, 2)) {
    DCLUA_CHECK(L, dc_device_set_retry_policy(device, NULL));
  } else {
    dc_retry_policy_t p;
    dclua_check_retry(L, 2, &p);
    DCLUA_CHECK(L, dc_device_set_retry_policy(device, &p));
  }
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  dev:retry() -> dc.retry (the device's default, defaults
// filled in)
static int device_retry(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  dc_retry_policy_t p;
  DCLUA_CHECK(L, dc_device_retry_policy(device, &p));
  dc_retry_policy_resolve(&p, &p);
  push_retry(L, &p);
  return 1;
}

//===-- dc.retry_call ---------------------------------------------------===//

// Sleeps *|user_data| nanoseconds (the wait dclua_wait runs).
static dc_status_t sleep_ns(void* user_data) {
  uint64_t ns = *(const uint64_t*)user_data;
  struct timespec ts = {(time_t)(ns / 1000000000u),
                        (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) {
  }
  return DC_OK;
}

// Raises the error value at the top of the stack after the loop gave up.
// An error object is raised as a copy with `attempts` and, when the loop
// ran out of attempts or budget, the reason appended to its message (as
// dc_retry_call does); any other value is raised unchanged.
static int give_up(lua_State* L, const dc_retry_policy_t* p,
                   const dc_retry_state_t* s, dc_retry_verdict_t verdict) {
  if (!dclua_is_error(L, -1)) return lua_error(L);
  int err = lua_gettop(L);
  dclua_copy_table(L, err);
  lua_getmetatable(L, err);
  lua_setmetatable(L, -2);
  lua_getfield(L, -1, "message");
  const char* message = luaL_optstring(L, -1, "");
  if (verdict == DC_RETRY_ATTEMPTS_EXHAUSTED) {
    lua_pushfstring(L, "%s (gave up after %d attempts)", message,
                    (int)s->attempts);
  } else if (verdict == DC_RETRY_BUDGET_EXHAUSTED) {
    lua_pushfstring(L, "%s (gave up after %d attempts: the %f s budget "
                    "would be exceeded)", message, (int)s->attempts,
                    p->budget_ns / NS_PER_S);
  } else {
    lua_pushstring(L, message);
  }
  lua_setfield(L, -3, "message");
  lua_pop(L, 1);
  lua_pushinteger(L, s->attempts);
  lua_setfield(L, -2, "attempts");
  return lua_error(L);
}

// [-2, +n, e]  dc.retry_call(policy | table | nil, fn) -> fn's results
// Calls fn(attempt) (attempt = 1, 2, ...) on the Lua thread until it
// returns, or raises an error the policy does not retry, or the policy
// gives up; sleeps the policy's delays between attempts (running queued
// Lua callbacks meanwhile). A function signals a retryable failure by
// raising dc.error(code, message).
static int l_retry_call(lua_State* L) {
  dc_retry_policy_t p;
  if (lua_isnil(L, 1)) {
    dc_retry_policy_resolve(NULL, &p);
  } else {
    dclua_check_retry(L, 1, &p);
  }
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  dc_retry_state_t s;
  dc_retry_begin(&p, &s);
  uint64_t start = dclua_now_ns();
  for (lua_Integer attempt = 1;; ++attempt) {
    lua_pushvalue(L, 2);
    lua_pushinteger(L, attempt);
    if (lua_pcall(L, 1, LUA_MULTRET, 0) == LUA_OK) {
      return lua_gettop(L) - 2;
    }
    uint64_t delay = 0;
    dc_retry_verdict_t verdict = dc_retry_next(
        &p, &s, dclua_error_status(L, -1), dclua_now_ns() - start, &delay);
    if (verdict != DC_RETRY_AGAIN) return give_up(L, &p, &s, verdict);
    lua_pop(L, 1);
    // The backoff ends at the script's time limit too (l_watchdog.h).
    bool limited = false;
    delay = dclua_wait_budget_ns(L, delay, &limited);
    dclua_wait(L, sleep_ns, &delay);
    if (limited) dclua_wait_ended(L, DC_ERR_DEADLINE_EXCEEDED, limited);
  }
}

//===-- Circuit-breaker parameters --------------------------------------===//

static const char* const kBreakerFields[] = {
    "failures", "ratio", "min_calls", "window", "open_for", "probes",
    "failure_codes", NULL};

// Fills in |params|' defaults exactly as the core does, by asking a
// breaker made with them (so the two can never disagree).
static void resolve_breaker(lua_State* L, dc_breaker_params_t* params) {
  dc_breaker_t* b = NULL;
  dc_status_t st = dc_breaker_create(dclua_context(L), "dc.breaker", params,
                                     &b);
  if (st != DC_OK) {
    dclua_raisef(L, st, "dc.breaker: %s", dc_last_error());
  }
  dc_breaker_params(b, params);
  dc_breaker_release(b);
}

// Reads the breaker table at |index| (fields checked) into |out|.
static void read_breaker_table(lua_State* L, int index,
                               dc_breaker_params_t* out) {
  static const char* what = "dc.breaker";
  dclua_check_fields(L, index, what, kBreakerFields);
  dc_breaker_params_t p = {0};
  lua_Integer n = 0;
  if (get_integer(L, index, what, "failures", 1, UINT32_MAX, &n)) {
    p.failure_threshold = (uint32_t)n;
  }
  double ratio = 0;
  if (get_number(L, index, what, "ratio", &ratio)) {
    if (!(ratio > 0 && ratio <= 1)) {
      field_error(L, what, "ratio", "must be in (0, 1]");
    }
    p.failure_ratio = ratio;
  }
  if (get_integer(L, index, what, "min_calls", 1, UINT32_MAX, &n)) {
    p.min_calls = (uint32_t)n;
  }
  if (get_seconds(L, index, what, "window", &p.window_ns) &&
      p.window_ns < 10) {
    field_error(L, what, "window", "must be at least 1e-8 s (10 ns)");
  }
  get_seconds(L, index, what, "open_for", &p.open_ns);
  if (get_integer(L, index, what, "probes", 1, UINT32_MAX, &n)) {
    p.half_open_probes = (uint32_t)n;
  }
  get_codes(L, index, what, "failure_codes", &p.failure_codes, NULL);
  resolve_breaker(L, &p);
  *out = p;
}

void dclua_check_breaker(lua_State* L, int index, dc_breaker_params_t* out) {
  const dc_breaker_params_t* p = luaL_testudata(L, index, DCLUA_BREAKER);
  if (p != NULL) {
    *out = *p;
  } else if (lua_istable(L, index)) {
    read_breaker_table(L, lua_absindex(L, index), out);
  } else {
    luaL_typeerror(L, index, "dc.breaker or table");
  }
}

// [-1, +1, e]  dc.breaker(fields) -> dc.breaker
static int l_breaker(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  dc_breaker_params_t* p = lua_newuserdatauv(L, sizeof(*p), 0);
  dclua_check_breaker(L, 1, p);
  luaL_setmetatable(L, DCLUA_BREAKER);
  return 1;
}

// [-2, +1, e]  params.field -> the field's value (seconds for times; nil
// for an unknown field, `failures` or `ratio` when off)
static int breaker_index(lua_State* L) {
  const dc_breaker_params_t* p = dclua_udata_check(L, 1, DCLUA_BREAKER);
  const char* key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (strcmp(key, "failures") == 0 && p->failure_threshold != 0) {
    lua_pushinteger(L, p->failure_threshold);
  } else if (strcmp(key, "ratio") == 0 && p->failure_ratio != 0) {
    lua_pushnumber(L, p->failure_ratio);
  } else if (strcmp(key, "min_calls") == 0) {
    lua_pushinteger(L, p->min_calls);
  } else if (strcmp(key, "window") == 0) {
    lua_pushnumber(L, p->window_ns / NS_PER_S);
  } else if (strcmp(key, "open_for") == 0) {
    lua_pushnumber(L, p->open_ns / NS_PER_S);
  } else if (strcmp(key, "probes") == 0) {
    lua_pushinteger(L, p->half_open_probes);
  } else if (strcmp(key, "failure_codes") == 0) {
    push_codes(L, p->failure_codes);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-1, +1, m]  tostring(params) -> "dc.breaker { failures = 5, ... }"
static int breaker_tostring(lua_State* L) {
  const dc_breaker_params_t* p = dclua_udata_check(L, 1, DCLUA_BREAKER);
  char text[256];
  int used = snprintf(text, sizeof(text), "dc.breaker { ");
  if (p->failure_threshold != 0) {
    used += snprintf(text + used, sizeof(text) - (size_t)used,
                     "failures = %u, ", (unsigned)p->failure_threshold);
  }
  if (p->failure_ratio != 0) {
    used += snprintf(text + used, sizeof(text) - (size_t)used,
                     "ratio = %g, min_calls = %u, ", p->failure_ratio,
                     (unsigned)p->min_calls);
  }
  snprintf(text + used, sizeof(text) - (size_t)used,
           "window = %g, open_for = %g, probes = %u }",
           p->window_ns / NS_PER_S, p->open_ns / NS_PER_S,
           (unsigned)p->half_open_probes);
  lua_pushstring(L, text);
  return 1;
}

//===-- The registry's breakers -----------------------------------------===//

// Pushes a table of |breaker|'s name, state and statistics (times in
// seconds).
static void push_breaker_stats(lua_State* L, dc_breaker_t* breaker) {
  dc_breaker_stats_t s;
  DCLUA_CHECK(L, dc_breaker_stats(breaker, &s));
  lua_createtable(L, 0, 16);
  dclua_set_string(L, "name", dc_breaker_name(breaker));
  dclua_set_string(L, "state", dc_breaker_state_name(s.state));
  dclua_set_number(L, "time_in_state", s.time_in_state_ns / NS_PER_S);
  dclua_set_number(L, "open_remaining", s.open_remaining_ns / NS_PER_S);
  dclua_set_integer(L, "window_calls", s.window_calls);
  dclua_set_integer(L, "window_failures", s.window_failures);
  dclua_set_integer(L, "probes_in_flight", s.probes_in_flight);
  dclua_set_integer(L, "probes_succeeded", s.probes_succeeded);
  dclua_set_integer(L, "calls", s.calls);
  dclua_set_integer(L, "successes", s.successes);
  dclua_set_integer(L, "failures", s.failures);
  dclua_set_integer(L, "ignored", s.ignored);
  dclua_set_integer(L, "rejections", s.rejections);
  dclua_set_integer(L, "opens", s.opens);
  dclua_set_integer(L, "half_opens", s.half_opens);
  dclua_set_integer(L, "closes", s.closes);
}

// [-0, +1, e]  dc.breakers() -> { { name, state, calls, ... }, ... } (the
// context's named breakers, in the order they were made)
static int l_breakers(lua_State* L) {
  dc_context_t* context = dclua_context(L);
  size_t count = dc_breaker_count(context);
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; ++i) {
    dc_breaker_t* breaker = NULL;
    DCLUA_CHECK(L, dc_breaker_at(context, i, &breaker));
    push_breaker_stats(L, breaker);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

// The registry's breaker named by argument 1, or NULL.
static dc_breaker_t* find_breaker(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  dc_breaker_t* breaker = NULL;
  if (dc_breaker_find(dclua_context(L), name, &breaker) != DC_OK) {
    return NULL;
  }
  return breaker;
}

// The registry's breaker named by argument 1; raises NOT_FOUND if none.
static dc_breaker_t* check_breaker(lua_State* L) {
  dc_breaker_t* breaker = find_breaker(L);
  if (breaker == NULL) {
    dclua_raisef(L, DC_ERR_NOT_FOUND, "no circuit breaker named '%s' (one "
                 "is made when work first runs there)", lua_tostring(L, 1));
  }
  return breaker;
}

// [-1, +2, e]  dc.breaker_state(name) -> "closed" | "open" | "half_open",
// stats; nil when no breaker of that name exists yet
static int l_breaker_state(lua_State* L) {
  dc_breaker_t* breaker = find_breaker(L);
  if (breaker == NULL) {
    lua_pushnil(L);
    return 1;
  }
  push_breaker_stats(L, breaker);
  lua_getfield(L, -1, "state");
  lua_insert(L, -2);
  return 2;
}

// [-1, +1, e]  dc.breaker_trip(name) -> state: opens the breaker now
static int l_breaker_trip(lua_State* L) {
  dc_breaker_t* breaker = check_breaker(L);
  dc_breaker_trip(breaker);
  lua_pushstring(L, dc_breaker_state_name(dc_breaker_state(breaker)));
  return 1;
}

// [-1, +1, e]  dc.breaker_reset(name) -> state: closes the breaker now
static int l_breaker_reset(lua_State* L) {
  dc_breaker_t* breaker = check_breaker(L);
  dc_breaker_reset(breaker);
  lua_pushstring(L, dc_breaker_state_name(dc_breaker_state(breaker)));
  return 1;
}

void dclua_open_policy(lua_State* L) {
  static const luaL_Reg retry_meta[] = {{"__index", retry_index},
                                        {"__tostring", retry_tostring},
                                        {NULL, NULL}};
  static const luaL_Reg breaker_meta[] = {{"__index", breaker_index},
                                          {"__tostring", breaker_tostring},
                                          {NULL, NULL}};
  static const luaL_Reg device_methods[] = {{"set_retry", device_set_retry},
                                            {"retry", device_retry},
                                            {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"retry", l_retry},
                                   {"retry_call", l_retry_call},
                                   {"breaker", l_breaker},
                                   {"breakers", l_breakers},
                                   {"breaker_state", l_breaker_state},
                                   {"breaker_trip", l_breaker_trip},
                                   {"breaker_reset", l_breaker_reset},
                                   {NULL, NULL}};
  dclua_class_new(L, DCLUA_RETRY, retry_meta, NULL);
  dclua_class_new(L, DCLUA_BREAKER, breaker_meta, NULL);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
  dclua_set_funcs(L, funcs);
}

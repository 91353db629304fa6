// l_policy.c: retry policies as Lua values, the device-wide default
// policy, and dc.retry_call, a retry loop around a Lua function.
//
// A dc.retry is an immutable value, not a handle: its userdata holds the
// C struct itself (with every default filled in), so it owns nothing,
// needs no close and is freed by the collector alone. Scripts write times
// in seconds; the struct keeps nanoseconds. Every field is checked when
// the value is made, so a typo ("attempt") or a bad value fails there
// with INVALID_ARGUMENT naming the field, not later in the middle of a
// run. Functions that take a policy take the object or a plain table of
// the same fields (dclua_check_retry).
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "dclua_internal.h"
#include "l_fields.h"
#include "l_watchdog.h"

#define NS_PER_S 1e9

static const char* const kJitters[] = {"full", "none", "equal",
                                       "decorrelated", NULL};

//===-- Retry policies --------------------------------------------------===//

static const char* const kRetryFields[] = {
    "attempts", "base", "factor", "max", "jitter", "budget", "retry_on",
    "never_retry", "seed", NULL};

// The codes |policy| retries (as a mask), attempts and time aside.
static uint64_t retried_codes(const dc_retry_policy_t* policy) {
  uint64_t mask = 0;
  for (size_t i = 0; i < dclua_status_count(); ++i) {
    if (dc_retry_is_retryable(policy, dclua_status_at(i))) {
      mask |= DC_STATUS_BIT(dclua_status_at(i));
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
  for (size_t i = 0; i < dclua_status_count(); ++i) {
    bool by_class = (classes & (1u << dc_status_class(dclua_status_at(i)))) != 0;
    if (!by_class && !(codes & DC_STATUS_BIT(dclua_status_at(i)))) {
      p->never_retry |= DC_STATUS_BIT(dclua_status_at(i));
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
      dclua_field_error(L, "dc.retry", "jitter",
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
  if (dclua_get_integer(L, index, what, "attempts", 1, UINT32_MAX, &n)) {
    p->max_attempts = (uint32_t)n;
  }
  dclua_get_seconds(L, index, what, "base", &p->base_delay_ns);
  dclua_get_seconds(L, index, what, "max", &p->max_delay_ns);
  dclua_get_seconds(L, index, what, "budget", &p->budget_ns);
  double factor = 0;
  if (dclua_get_number(L, index, what, "factor", &factor)) {
    if (factor < 1) {
      dclua_field_error(L, what, "factor",
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
  if (dclua_get_codes(L, index, what, "retry_on", &codes, &classes)) {
    for (int i = 0; i < 2; ++i) {
      if (codes & DC_STATUS_BIT(never_retried[i])) {
        dclua_field_error(L, what, "retry_on",
                    lua_pushfstring(L, "names %s, which is never retried",
                                    dc_status_name(never_retried[i])));
      }
    }
    set_retry_on(p, codes, classes);
  }
  uint64_t never = 0;
  if (dclua_get_codes(L, index, what, "never_retry", &never, NULL)) {
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
  if (dclua_get_integer(L, index, "dc.retry", "seed", 0, LUA_MAXINTEGER, &seed)) {
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
  dc_retry_policy_t all = {.retry_on = DCLUA_ALL_CLASSES};
  uint64_t mask = retried_codes(p);
  if (mask == retried_codes(&plain)) {
    lua_pushliteral(L, "transient");
  } else if (mask == retried_codes(&all)) {
    lua_pushliteral(L, "all");
  } else {
    dclua_push_codes(L, mask);
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
  dc_retry_policy_t all = {.retry_on = DCLUA_ALL_CLASSES};
  uint64_t mask = retried_codes(p);
  if (mask == retried_codes(&plain) || mask == retried_codes(&all)) {
    snprintf(text, size, "\"%s\"",
             mask == retried_codes(&all) ? "all" : "transient");
    return;
  }
  size_t used = (size_t)snprintf(text, size, "{");
  for (size_t i = 0; i < dclua_status_count() && used < size; ++i) {
    if (!(mask & DC_STATUS_BIT(dclua_status_at(i)))) continue;
    int n = snprintf(text + used, size - used, "%s\"%s\"",
                     used > 1 ? ", " : " ", dc_status_name(dclua_status_at(i)));
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

// [-3, +n, e]  dc.retry_call(policy | table | nil, fn, [breaker]) -> fn's
// results
// Calls fn(attempt) (attempt = 1, 2, ...) on the Lua thread until it
// returns, or raises an error the policy does not retry, or the policy
// gives up; sleeps the policy's delays between attempts (running queued
// Lua callbacks meanwhile). A function signals a retryable failure by
// raising dc.error(code, message). With a dc.breaker, each attempt asks
// it first and reports its outcome and duration; a refusal counts as a
// CIRCUIT_OPEN failure, and the retry waits for the breaker's probe.
static int l_retry_call(lua_State* L) {
  dc_retry_policy_t p;
  if (lua_isnil(L, 1)) {
    dc_retry_policy_resolve(NULL, &p);
  } else {
    dclua_check_retry(L, 1, &p);
  }
  luaL_checktype(L, 2, LUA_TFUNCTION);
  dc_breaker_t* breaker =
      lua_isnoneornil(L, 3) ? NULL : dclua_box_check(L, 3, DCLUA_BREAKER);
  lua_settop(L, 3);  // the breaker stays alive on the stack
  dc_retry_state_t s;
  dc_retry_begin(&p, &s);
  uint64_t start = dclua_now_ns();
  for (lua_Integer attempt = 1;; ++attempt) {
    dc_breaker_permit_t permit = DC_BREAKER_NO_PERMIT;
    bool refused = breaker != NULL &&
                   dc_breaker_acquire(breaker, &permit) != DC_OK;
    if (refused) {
      dclua_push_error(L, DC_ERR_CIRCUIT_OPEN);
    } else {
      uint64_t began = dclua_now_ns();
      lua_pushvalue(L, 2);
      lua_pushinteger(L, attempt);
      int called = lua_pcall(L, 1, LUA_MULTRET, 0);
      dc_breaker_record_call(breaker, permit,
                             called == LUA_OK ? DC_OK
                                              : dclua_error_status(L, -1),
                             dclua_now_ns() - began);
      if (called == LUA_OK) return lua_gettop(L) - 3;
    }
    uint64_t delay = 0;
    dc_retry_verdict_t verdict = dc_retry_next(
        &p, &s, dclua_error_status(L, -1), dclua_now_ns() - start, &delay);
    if (verdict != DC_RETRY_AGAIN) return give_up(L, &p, &s, verdict);
    lua_pop(L, 1);
    if (refused) {  // wait for the breaker's probe, if that is longer
      dc_breaker_stats_t bs;
      if (dc_breaker_stats(breaker, &bs) == DC_OK &&
          bs.open_remaining_ns > delay) {
        delay = bs.open_remaining_ns;
      }
    }
    // The backoff ends at the script's time limit too (l_watchdog.h).
    bool limited = false;
    delay = dclua_wait_budget_ns(L, delay, &limited);
    dclua_wait(L, sleep_ns, &delay);
    if (limited) dclua_wait_ended(L, DC_ERR_DEADLINE_EXCEEDED, limited);
  }
}

void dclua_open_policy(lua_State* L) {
  static const luaL_Reg retry_meta[] = {{"__index", retry_index},
                                        {"__tostring", retry_tostring},
                                        {NULL, NULL}};
  static const luaL_Reg device_methods[] = {{"set_retry", device_set_retry},
                                            {"retry", device_retry},
                                            {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"retry", l_retry},
                                   {"retry_call", l_retry_call},
                                   {NULL, NULL}};
  dclua_class_new(L, DCLUA_RETRY, retry_meta, NULL);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
  dclua_set_funcs(L, funcs);
}

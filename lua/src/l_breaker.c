// l_breaker.c: circuit breakers as Lua objects. dc.breaker{...} makes one
// of the script's own, which graphs and ops take (`breaker = b`): sharing
// is passing the same object. dev:breaker([kernel]) gives the breakers the
// engine keeps per device and per kernel on a device (the context's
// registry), the ones graph ops ask by default; b:configure{...} tunes
// either kind at run time. dc.breakers() lists the registry.
//
// A box holds one reference to its breaker, and every reference keeps the
// context alive (dc/breaker.h), so a breaker object outlives nothing it
// needs.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "l_fields.h"

#define NS_PER_S 1e9

static const char* const kFields[] = {
    "name",      "failures",   "ratio",    "min_calls", "window",
    "window_calls", "slow_call", "slow_ratio", "open_for", "probes",
    "failure_codes", NULL};

//===-- Parameters ------------------------------------------------------===//

// Reads the parameter fields of the table at |index| into |out| (an
// absent field stays 0: its default). Raises INVALID_ARGUMENT naming the
// field.
static void read_params(lua_State* L, int index, const char* what,
                        dc_breaker_params_t* out) {
  dclua_check_fields(L, index, what, kFields);
  dc_breaker_params_t p = {0};
  lua_Integer n = 0;
  if (dclua_get_integer(L, index, what, "failures", 1, UINT32_MAX, &n)) {
    p.failure_threshold = (uint32_t)n;
  }
  double ratio = 0;
  if (dclua_get_number(L, index, what, "ratio", &ratio)) {
    if (!(ratio > 0 && ratio <= 1)) {
      dclua_field_error(L, what, "ratio", "must be in (0, 1]");
    }
    p.failure_ratio = ratio;
  }
  if (dclua_get_integer(L, index, what, "min_calls", 1, UINT32_MAX, &n)) {
    p.min_calls = (uint32_t)n;
  }
  if (dclua_get_seconds(L, index, what, "window", &p.window_ns) &&
      p.window_ns < 10) {
    dclua_field_error(L, what, "window", "must be at least 1e-8 s (10 ns)");
  }
  if (dclua_get_integer(L, index, what, "window_calls", 1,
                        DC_BREAKER_MAX_WINDOW_CALLS, &n)) {
    p.window_calls = (uint32_t)n;
  }
  dclua_get_seconds(L, index, what, "slow_call", &p.slow_call_ns);
  if (dclua_get_number(L, index, what, "slow_ratio", &ratio)) {
    if (!(ratio > 0 && ratio <= 1)) {
      dclua_field_error(L, what, "slow_ratio", "must be in (0, 1]");
    }
    if (p.slow_call_ns == 0) {
      dclua_field_error(L, what, "slow_ratio",
                        "needs 'slow_call' (which calls are slow)");
    }
    p.slow_call_ratio = ratio;
  }
  dclua_get_seconds(L, index, what, "open_for", &p.open_ns);
  if (dclua_get_integer(L, index, what, "probes", 1, UINT32_MAX, &n)) {
    p.half_open_probes = (uint32_t)n;
  }
  dclua_get_codes(L, index, what, "failure_codes", &p.failure_codes, NULL);
  *out = p;
}

// Reads `name` of the table at |index| into |name| (|fallback| when absent).
static void read_name(lua_State* L, int index, const char* fallback,
                      char* name, size_t size) {
  snprintf(name, size, "%s", fallback);
  if (lua_getfield(L, index, "name") != LUA_TNIL) {
    size_t length = 0;
    const char* given = lua_tolstring(L, -1, &length);
    if (lua_type(L, -1) != LUA_TSTRING || length == 0 || length >= size) {
      dclua_field_error(L, "dc.breaker", "name",
                        lua_pushfstring(L, "must be a string of 1 to %d "
                                        "bytes", (int)size - 1));
    }
    memcpy(name, given, length + 1);
  }
  lua_pop(L, 1);
}

//===-- Objects ---------------------------------------------------------===//

// Pushes a box holding |breaker| (a reference the box takes over).
static void push_breaker(lua_State* L, dc_breaker_t* breaker) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_BREAKER, 0);
  box->p = breaker;
}

dc_breaker_t* dclua_push_breaker_of(lua_State* L, int index,
                                    const char* default_name) {
  index = lua_absindex(L, index);
  if (!lua_istable(L, index)) {
    dc_breaker_t* b = dclua_box_check(L, index, DCLUA_BREAKER);
    lua_pushvalue(L, index);
    return b;
  }
  dc_breaker_params_t p;
  char name[64];
  read_params(L, index, "dc.breaker", &p);
  read_name(L, index, default_name, name, sizeof(name));
  dclua_box_t* box = dclua_box_new(L, DCLUA_BREAKER, 0);
  DCLUA_CHECK(L, dc_breaker_create(dclua_context(L), name, &p,
                                   (dc_breaker_t**)&box->p));
  return box->p;
}

// [-1, +1, e]  dc.breaker(fields) -> dc.breaker
static int l_breaker(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  dclua_push_breaker_of(L, 1, "breaker");
  return 1;
}

// [-1, +0, -]  b:close(), __gc, __close: drops the object's reference
static int breaker_close(lua_State* L) {
  dc_breaker_release(dclua_box_take(L, 1, DCLUA_BREAKER));
  return 0;
}

// Pushes |value| as an integer or a number, or nil when it is 0 (a rule
// that is off).
static void push_set(lua_State* L, double value, bool integer) {
  if (value == 0) {
    lua_pushnil(L);
  } else if (integer) {
    lua_pushinteger(L, (lua_Integer)value);
  } else {
    lua_pushnumber(L, value);
  }
}

// Pushes the value of parameter |key| of |p| (seconds for times; nil for
// rules that are off). Returns false for a key that is no parameter.
static bool push_param(lua_State* L, const dc_breaker_params_t* p,
                       const char* key) {
  if (strcmp(key, "failures") == 0) {
    push_set(L, p->failure_threshold, true);
  } else if (strcmp(key, "ratio") == 0) {
    push_set(L, p->failure_ratio, false);
  } else if (strcmp(key, "min_calls") == 0) {
    push_set(L, p->min_calls, true);
  } else if (strcmp(key, "window") == 0) {
    push_set(L, p->window_ns / NS_PER_S, false);
  } else if (strcmp(key, "window_calls") == 0) {
    push_set(L, p->window_calls, true);
  } else if (strcmp(key, "slow_call") == 0) {
    push_set(L, p->slow_call_ns / NS_PER_S, false);
  } else if (strcmp(key, "slow_ratio") == 0) {
    push_set(L, p->slow_call_ratio, false);
  } else if (strcmp(key, "open_for") == 0) {
    push_set(L, p->open_ns / NS_PER_S, false);
  } else if (strcmp(key, "probes") == 0) {
    push_set(L, p->half_open_probes, true);
  } else if (strcmp(key, "failure_codes") == 0) {
    dclua_push_codes(L, p->failure_codes);
  } else {
    return false;
  }
  return true;
}

// [-2, +1, e]  b.field -> a parameter (as dc.breaker takes it), the name,
// or a method
static int breaker_index(lua_State* L) {
  dclua_udata_check(L, 1, DCLUA_BREAKER);  // methods work on a closed one
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;
  dc_breaker_t* b = dclua_box_check(L, 1, DCLUA_BREAKER);
  if (strcmp(key, "name") == 0) {
    lua_pushstring(L, dc_breaker_name(b));
    return 1;
  }
  dc_breaker_params_t p;
  DCLUA_CHECK(L, dc_breaker_params(b, &p));
  if (!push_param(L, &p, key)) lua_pushnil(L);
  return 1;
}

// [-1, +1, m]  tostring(b) -> "dc.breaker 'cpu' (closed) { ratio = 0.5, ... }"
static int breaker_tostring(lua_State* L) {
  dc_breaker_t* b = dclua_box_for_tostring(L, 1, DCLUA_BREAKER);
  if (b == NULL) return 1;
  dc_breaker_params_t p;
  DCLUA_CHECK(L, dc_breaker_params(b, &p));
  luaL_Buffer out;
  luaL_buffinit(L, &out);
  lua_pushfstring(L, "dc.breaker '%s' (%s) {", dc_breaker_name(b),
                  dc_breaker_state_name(dc_breaker_state(b)));
  luaL_addvalue(&out);
  static const char* const shown[] = {
      "failures", "ratio", "min_calls", "window", "window_calls",
      "slow_call", "slow_ratio", "open_for", "probes", NULL};
  const char* sep = " ";
  for (int i = 0; shown[i] != NULL; ++i) {
    push_param(L, &p, shown[i]);
    if (!lua_isnil(L, -1)) {
      char text[96];
      snprintf(text, sizeof(text), "%s%s = %.14g", sep, shown[i],
               (double)lua_tonumber(L, -1));
      lua_pop(L, 1);
      luaL_addstring(&out, text);
      sep = ", ";
    } else {
      lua_pop(L, 1);
    }
  }
  luaL_addstring(&out, " }");
  luaL_pushresult(&out);
  return 1;
}

// Pushes a table of |breaker|'s name, state and statistics (times in
// seconds).
static void push_stats(lua_State* L, dc_breaker_t* breaker) {
  dc_breaker_stats_t s;
  DCLUA_CHECK(L, dc_breaker_stats(breaker, &s));
  lua_createtable(L, 0, 18);
  dclua_set_string(L, "name", dc_breaker_name(breaker));
  dclua_set_string(L, "state", dc_breaker_state_name(s.state));
  dclua_set_number(L, "time_in_state", s.time_in_state_ns / NS_PER_S);
  dclua_set_number(L, "open_remaining", s.open_remaining_ns / NS_PER_S);
  dclua_set_integer(L, "window_calls", s.window_calls);
  dclua_set_integer(L, "window_failures", s.window_failures);
  dclua_set_integer(L, "window_slow", s.window_slow);
  dclua_set_integer(L, "probes_in_flight", s.probes_in_flight);
  dclua_set_integer(L, "probes_succeeded", s.probes_succeeded);
  dclua_set_integer(L, "calls", s.calls);
  dclua_set_integer(L, "successes", s.successes);
  dclua_set_integer(L, "failures", s.failures);
  dclua_set_integer(L, "ignored", s.ignored);
  dclua_set_integer(L, "slow_calls", s.slow_calls);
  dclua_set_integer(L, "rejections", s.rejections);
  dclua_set_integer(L, "opens", s.opens);
  dclua_set_integer(L, "half_opens", s.half_opens);
  dclua_set_integer(L, "closes", s.closes);
}

// [-1, +2, e]  b:state() -> "closed" | "open" | "half_open", stats
static int breaker_state(lua_State* L) {
  dc_breaker_t* b = dclua_box_check(L, 1, DCLUA_BREAKER);
  push_stats(L, b);
  lua_getfield(L, -1, "state");
  lua_insert(L, -2);
  return 2;
}

// [-1, +1, e]  b:stats() -> { name, state, calls, ... }
static int breaker_stats(lua_State* L) {
  push_stats(L, dclua_box_check(L, 1, DCLUA_BREAKER));
  return 1;
}

// [-1, +1, e]  b:trip() -> state: opens the breaker now
static int breaker_trip(lua_State* L) {
  dc_breaker_t* b = dclua_box_check(L, 1, DCLUA_BREAKER);
  dc_breaker_trip(b);
  lua_pushstring(L, dc_breaker_state_name(dc_breaker_state(b)));
  return 1;
}

// [-1, +1, e]  b:reset() -> state: closes the breaker now
static int breaker_reset(lua_State* L) {
  dc_breaker_t* b = dclua_box_check(L, 1, DCLUA_BREAKER);
  dc_breaker_reset(b);
  lua_pushstring(L, dc_breaker_state_name(dc_breaker_state(b)));
  return 1;
}

// [-2, +1, e]  b:configure(fields) -> b: new parameters (absent fields:
// their defaults) while the breaker is in use; the state stays, the
// window starts empty. Refused in a sandbox for the registry's breakers,
// which the host's work shares.
static int breaker_configure(lua_State* L) {
  dc_breaker_t* b = dclua_box_check(L, 1, DCLUA_BREAKER);
  luaL_checktype(L, 2, LUA_TTABLE);
  dc_breaker_params_t p;
  read_params(L, 2, "b:configure", &p);
  lua_getfield(L, 2, "name");
  if (!lua_isnil(L, -1)) {
    dclua_field_error(L, "b:configure", "name",
                      "cannot change (a breaker keeps its name)");
  }
  lua_pop(L, 1);
  dc_breaker_t* registered = NULL;
  if (dclua_sandboxed(L) &&
      dc_breaker_find(dclua_context(L), dc_breaker_name(b), &registered) ==
          DC_OK &&
      registered == b) {
    dclua_raisef(L, DC_ERR_PERMISSION_DENIED,
                 "b:configure: the breaker '%s' belongs to the engine, "
                 "which a sandboxed script may not tune (make one with "
                 "dc.breaker)", dc_breaker_name(b));
  }
  DCLUA_CHECK(L, dc_breaker_set_params(b, &p));
  lua_settop(L, 1);
  return 1;
}

//===-- The registry ----------------------------------------------------===//

// [-2, +1, e]  dev:breaker([kernel]) -> dc.breaker: the device's breaker,
// or the one of |kernel| (a dc.kernel or a kernel name) on the device
static int device_breaker(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  const char* kernel = NULL;
  if (!lua_isnoneornil(L, 2)) {
    kernel = lua_type(L, 2) == LUA_TSTRING
                 ? lua_tostring(L, 2)
                 : dc_kernel_name(dclua_check_kernel(L, 2));
  }
  dc_breaker_t* b = NULL;
  DCLUA_CHECK(L, dc_device_breaker(device, kernel, &b));
  dc_breaker_retain(b);
  push_breaker(L, b);
  return 1;
}

// [-0, +1, e]  dc.breakers() -> { stats, ... } (the registry's breakers,
// in the order they were made)
static int l_breakers(lua_State* L) {
  dc_context_t* context = dclua_context(L);
  size_t count = dc_breaker_count(context);
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; ++i) {
    dc_breaker_t* breaker = NULL;
    DCLUA_CHECK(L, dc_breaker_at(context, i, &breaker));
    push_stats(L, breaker);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

void dclua_open_breaker(lua_State* L) {
  static const luaL_Reg meta[] = {{"__index", breaker_index},
                                  {"__tostring", breaker_tostring},
                                  {"__gc", breaker_close},
                                  {"__close", breaker_close},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"state", breaker_state},
                                     {"stats", breaker_stats},
                                     {"trip", breaker_trip},
                                     {"reset", breaker_reset},
                                     {"configure", breaker_configure},
                                     {"close", breaker_close},
                                     {NULL, NULL}};
  static const luaL_Reg device_methods[] = {{"breaker", device_breaker},
                                            {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"breaker", l_breaker},
                                   {"breakers", l_breakers},
                                   {NULL, NULL}};
  dclua_class_new(L, DCLUA_BREAKER, meta, methods);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
  dclua_set_funcs(L, funcs);
}

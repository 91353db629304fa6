// l_event.c: events and the event pool as Lua objects.
//
// A dc.event owns one reference to a dc_event_t; the core returns it to
// its device's pool when the last reference goes. Waits run through
// dclua_wait with the event retained, so Lua callbacks queued by engine
// threads keep running while the script blocks, and end by the engine
// run's deadline when there is one (l_watchdog.h).
//
// ev:on_complete(fn) registers a core completion callback. That callback
// fires on an engine thread (or at once, when the event has already
// completed), where Lua must not run, so it only posts the call to the
// state's queue: fn(ev, err) then runs on the Lua thread at the next
// dc.poll() or blocking call of the module. The function posted is a C
// closure holding fn and the dc.event, so the event object stays alive
// until the call has run; an error fn raises is warned about and raised
// again by the dc.poll() (or wait) that ran it.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dclua_internal.h"
#include "l_watchdog.h"

//===-- Events ----------------------------------------------------------===//

dc_event_t* dclua_check_event(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_EVENT);
}

// A dc.event has one user value: the dc_stream_t (light userdata) that
// s:record last recorded it on, set by l_stream.c.
void dclua_push_event(lua_State* L, dc_event_t* event) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_EVENT, 1);
  box->p = event;
}

// Reads the event flags of the options table at |index| (none or nil:
// a sync event): { timing = bool }.
static uint32_t opt_flags(lua_State* L, int index) {
  static const char* const options[] = {"timing", NULL};
  if (lua_isnoneornil(L, index)) return DC_EVENT_DEFAULT;
  dclua_check_options(L, index, options);
  int type = lua_getfield(L, index, "timing");
  luaL_argexpected(L, type == LUA_TNIL || type == LUA_TBOOLEAN, index,
                   "boolean field 'timing'");
  uint32_t flags = lua_toboolean(L, -1) ? DC_EVENT_TIMING : DC_EVENT_DEFAULT;
  lua_pop(L, 1);
  return flags;
}

void dclua_push_new_event(lua_State* L, dc_device_t* device, int options) {
  uint32_t flags = opt_flags(L, options);
  dclua_box_t* box = dclua_box_new(L, DCLUA_EVENT, 1);
  dc_event_t* event = NULL;
  DCLUA_CHECK(L, dc_event_create(device, flags, &event));
  box->p = event;
}

// [-2, +1, e]  dev:event([{ timing = bool }]) -> dc.event (unrecorded)
static int device_event(lua_State* L) {
  dclua_push_new_event(L, dclua_check_device(L, 1, false), 2);
  return 1;
}

// [-0, +0, -]  ev:close(); also __gc and __close: the event goes back to
// its pool once queued records and waits are done with it.
static int event_close(lua_State* L) {
  dc_event_release(dclua_box_take(L, 1, DCLUA_EVENT));
  return 0;
}

typedef struct event_wait_t {
  dc_event_t* event;  // retained for the wait
  uint64_t timeout_ns;
} event_wait_t;

static dc_status_t wait_event(void* p) {
  event_wait_t* w = p;
  return dc_event_wait(w->event, w->timeout_ns);
}

// Raises the run's time-limit error when the run's deadline, not
// |timeout_ns|, ended the wait.
dc_status_t dclua_wait_event(lua_State* L, dc_event_t* event,
                             uint64_t timeout_ns) {
  bool limited = false;
  event_wait_t w = {event, dclua_wait_budget_ns(L, timeout_ns, &limited)};
  dc_event_retain(event);
  dc_status_t st = dclua_wait(L, wait_event, &w);
  dc_event_release(event);
  return dclua_wait_ended(L, st, limited);
}

int dclua_push_query(lua_State* L, dc_status_t status) {
  if (status != DC_OK && status != DC_ERR_UNAVAILABLE) dclua_raise(L, status);
  lua_pushstring(L, status == DC_OK ? "done" : "pending");
  return 1;
}

// Raises FAILED_PRECONDITION when the event at 1 is pending on a stream
// whose host function is running: the record is queued after that
// function, so waiting for it from there would never end. The table of
// running host functions is l_stream.c's.
static void refuse_own_record(lua_State* L, dc_event_t* event) {
  if (dc_event_query(event) != DC_ERR_UNAVAILABLE) return;
  lua_getiuservalue(L, 1, 1);
  void* stream = lua_touserdata(L, -1);
  lua_getfield(L, LUA_REGISTRYINDEX, "dc.running_hosts");
  bool running = stream != NULL && lua_istable(L, -1) &&
                 lua_rawgetp(L, -1, stream) != LUA_TNIL;
  if (running) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "event:wait: called from a host function of the stream "
                 "the event is recorded on, which cannot wait for its own "
                 "later work");
  }
  lua_settop(L, 2);
}

// [-2, +1, e]  ev:wait([timeout_ms]) -> ev; raises the error that poisoned
// the event, or DEADLINE_EXCEEDED when the time runs out.
static int event_wait(lua_State* L) {
  dc_event_t* event = dclua_check_event(L, 1);
  uint64_t timeout_ns = dclua_opt_timeout_ns(L, 2);
  lua_settop(L, 2);
  refuse_own_record(L, event);
  dc_status_t st = dclua_wait_event(L, event, timeout_ns);
  if (st != DC_OK) dclua_raise(L, st);
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  ev:query() -> "done" | "pending"; raises the poisoning
// error.
static int event_query(lua_State* L) {
  return dclua_push_query(L, dc_event_query(dclua_check_event(L, 1)));
}

// Gets the nanoseconds from the event at 1 to the event at 2.
static int64_t elapsed_ns(lua_State* L) {
  dc_event_t* start = dclua_check_event(L, 1);
  dc_event_t* end = dclua_check_event(L, 2);
  int64_t ns = 0;
  DCLUA_CHECK(L, dc_event_elapsed_ns(start, end, &ns));
  return ns;
}

// [-2, +1, e]  t0:elapsed(t1) -> milliseconds from t0 to t1 (a float)
static int event_elapsed(lua_State* L) {
  lua_pushnumber(L, (lua_Number)elapsed_ns(L) / 1e6);
  return 1;
}

// [-2, +1, e]  t0:elapsed_ns(t1) -> nanoseconds from t0 to t1 (an integer)
static int event_elapsed_ns(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)elapsed_ns(L));
  return 1;
}

//===-- Completion callbacks --------------------------------------------===//

// What a completion carries from the engine thread to the Lua thread.
typedef struct completion_t {
  dclua_callback_t* callback;  // our reference
  dc_status_t status;
  char message[512];
} completion_t;

// Lua thread: pushes nil for success, else an error object.
static int push_outcome(lua_State* L, void* user_data) {
  completion_t* c = user_data;
  if (c->status == DC_OK) {
    lua_pushnil(L);
  } else {
    dc_set_error(c->status, "%s", c->message);
    dclua_push_error(L, c->status);
  }
  return 1;
}

static void free_completion(void* user_data) { free(user_data); }

// Any thread: the event completed; queue the Lua call and drop our
// reference (the queued call holds its own).
static void on_event_complete(dc_event_t* event, dc_status_t status,
                              void* user_data) {
  (void)event;
  completion_t* c = user_data;
  dclua_callback_t* callback = c->callback;
  c->status = status;
  if (status != DC_OK) {
    snprintf(c->message, sizeof(c->message), "%s", dc_last_error());
  }
  dclua_callback_post(callback, push_outcome, free_completion, c);
  dclua_callback_release(callback);
}

// [-1, +0, e]  The posted function: upvalue 1 is the script's function,
// upvalue 2 the dc.event; calls fn(ev, err).
static int completion_trampoline(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_call(L, 2, 0);
  return 0;
}

// [-2, +1, e]  ev:on_complete(fn) -> ev: fn(ev, err) runs on the Lua
// thread once the event's last record (as of now) completes; err is nil,
// or the error object that poisoned the event.
static int event_on_complete(lua_State* L) {
  dc_event_t* event = dclua_check_event(L, 1);
  luaL_argexpected(L, dclua_is_callable(L, 2), 2, "function");
  lua_settop(L, 2);
  lua_pushvalue(L, 1);
  lua_pushcclosure(L, completion_trampoline, 2);
  dclua_callback_t* callback =
      dclua_callback_create(L, -1, "event completion callback");
  completion_t* c = calloc(1, sizeof(*c));
  if (c == NULL) {
    dclua_callback_release(callback);
    return dclua_raisef(L, DC_ERR_OUT_OF_MEMORY,
                        "event:on_complete: out of memory");
  }
  c->callback = callback;
  dc_status_t st = dc_event_on_complete(event, on_event_complete, c);
  if (st != DC_OK) {
    dclua_callback_release(c->callback);
    free(c);
    dclua_raise(L, st);
  }
  lua_settop(L, 1);
  return 1;
}

// [-2, +1, e]  ev.device, or a method
static int event_index(lua_State* L) {
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;  // a method
  dc_event_t* event = dclua_check_event(L, 1);
  if (strcmp(key, "device") == 0) {
    dclua_push_device(L, dc_event_device(event));
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-1, +1, -]  tostring(ev) -> "dc.event: done on cpu"
static int event_tostring(lua_State* L) {
  dc_event_t* event = dclua_box_for_tostring(L, 1, DCLUA_EVENT);
  if (event == NULL) return 1;  // "dc.event (closed)"
  dc_status_t st = dc_event_query(event);
  const char* state = st == DC_OK ? "done"
                      : st == DC_ERR_UNAVAILABLE ? "pending"
                                                 : dc_status_name(st);
  lua_pushfstring(L, "dc.event: %s on %s", state,
                  dc_device_name(dc_event_device(event)));
  return 1;
}

//===-- The event pool --------------------------------------------------===//

// Reads a pool kind at |index|: "sync" (default) or "timing".
static uint32_t check_kind(lua_State* L, int index) {
  static const char* const kinds[] = {"sync", "timing", NULL};
  return luaL_checkoption(L, index, "sync", kinds) == 1 ? DC_EVENT_TIMING
                                                        : DC_EVENT_DEFAULT;
}

// [-2, +1, e]  dev:event_pool_stats(["sync" | "timing"]) -> { created,
//   reused, destroyed, in_use, peak_in_use, cached, quarantine,
//   reuse_ratio }
static int device_event_pool_stats(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  dc_event_pool_stats_t s;
  DCLUA_CHECK(L, dc_event_pool_stats(device, check_kind(L, 2), &s));
  lua_createtable(L, 0, 8);
  dclua_set_integer(L, "created", s.created);
  dclua_set_integer(L, "reused", s.reused);
  dclua_set_integer(L, "destroyed", s.destroyed);
  dclua_set_integer(L, "in_use", s.in_use);
  dclua_set_integer(L, "peak_in_use", s.peak_in_use);
  dclua_set_integer(L, "cached", s.cached);
  dclua_set_integer(L, "quarantine", DC_EVENT_POOL_QUARANTINE);
  dclua_set_number(L, "reuse_ratio", s.reuse_ratio);
  return 1;
}

// [-3, +1, e]  dev:event_pool_reserve(n [, "sync" | "timing"]) -> dev
static int device_event_pool_reserve(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_argcheck(L, n >= 0 && n <= 1 << 20, 2,
                "expected a count from 0 to 1048576");
  DCLUA_CHECK(L, dc_event_pool_reserve(device, check_kind(L, 3), (size_t)n));
  lua_settop(L, 1);
  return 1;
}

// [-2, +1, e]  dev:event_pool_trim([keep]) -> n: frees cached events of
// both pools beyond |keep| (default 0) each; returns how many.
static int device_event_pool_trim(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  lua_Integer keep = luaL_optinteger(L, 2, 0);
  luaL_argcheck(L, keep >= 0, 2, "expected a count >= 0");
  lua_pushinteger(L,
                  (lua_Integer)dc_event_pool_trim(device, (size_t)keep));
  return 1;
}

//===-- Registration ----------------------------------------------------===//

void dclua_open_event(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", event_index}, {"__gc", event_close},
      {"__close", event_close}, {"__tostring", event_tostring},
      {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"wait", event_wait}, {"query", event_query},
      {"elapsed", event_elapsed}, {"elapsed_ns", event_elapsed_ns},
      {"on_complete", event_on_complete}, {"close", event_close},
      {NULL, NULL}};
  static const luaL_Reg device_methods[] = {
      {"event", device_event},
      {"event_pool_stats", device_event_pool_stats},
      {"event_pool_reserve", device_event_pool_reserve},
      {"event_pool_trim", device_event_pool_trim},
      {NULL, NULL}};
  dclua_class_new(L, DCLUA_EVENT, meta, methods);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
}

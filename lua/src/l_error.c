// l_error.c: error objects raised by the binding.
//
// A failure reaches Lua as a table {code = "NAME", message = "..."} (and
// `op` or `kernel` where the failure belongs to one) with
// the metatable "dc.error", whose __tostring gives "NAME: message". Scripts
// test err.code instead of parsing strings, and an uncaught error still
// prints readably.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "dclua_internal.h"
#include "l_watchdog.h"

#define ERROR_MT "dc.error"


// Pushes raw field |key| of the table at |index| (an error object's
// fields are read raw: a script may give the dc.error metatable an
// __index, which the binding must not run unprotected).
// [-0, +1, -]
static int raw_field(lua_State* L, int index, const char* key) {
  index = lua_absindex(L, index);
  lua_pushstring(L, key);
  return lua_rawget(L, index);
}

// The text of the raw field |key| of the error object at |index|, pushed:
// a string or a number as it is, else NULL (pushing nothing).
// [-0, +(0|1), m]
static const char* push_text_field(lua_State* L, int index, const char* key) {
  int type = raw_field(L, index, key);
  if (type == LUA_TSTRING || type == LUA_TNUMBER) return lua_tostring(L, -1);
  lua_pop(L, 1);
  return NULL;
}

// [-1, +1, v]  tostring(err) -> "CODE: message"
static int dclua_error_tostring(lua_State* L) {
  dclua_table_check(L, 1, ERROR_MT);
  const char* code = push_text_field(L, 1, "code");
  const char* message = push_text_field(L, 1, "message");
  lua_pushfstring(L, "%s: %s", code != NULL ? code : "UNKNOWN",
                  message != NULL ? message : "");
  return 1;
}

// Pushes an error object of |status| with |message|.
static void push_error_object(lua_State* L, dc_status_t status,
                              const char* message) {
  lua_createtable(L, 0, 2);
  lua_pushstring(L, dc_status_name(status));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, message);
  lua_setfield(L, -2, "message");
  luaL_setmetatable(L, ERROR_MT);
}

void dclua_push_error(lua_State* L, dc_status_t status) {
  push_error_object(L, status, dc_last_error());
}

int dclua_raise(lua_State* L, dc_status_t status) {
  // Work the run's time limit stopped (a kernel the watchdog interrupted)
  // failed because of the limit: say so.
  if (status == DC_ERR_CANCELLED && dclua_time_limit_stopped(L)) {
    return dclua_raise_time_limit(L);
  }
  dclua_push_error(L, status);
  return lua_error(L);
}

int dclua_raisef(lua_State* L, dc_status_t status, const char* format, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof(message), format, ap);
  va_end(ap);
  dc_set_error(status, "%s", message);
  return dclua_raise(L, status);
}

int dclua_raise_with(lua_State* L, dc_status_t status, const char* key,
                     const char* value) {
  if (status == DC_ERR_CANCELLED && dclua_time_limit_stopped(L)) {
    return dclua_raise_time_limit(L);
  }
  dclua_push_error(L, status);
  lua_pushstring(L, value);
  lua_setfield(L, -2, key);
  return lua_error(L);
}

bool dclua_is_error(lua_State* L, int index) {
  bool is_error = false;
  // Only a table: debug.setmetatable could give a userdata the metatable,
  // and error objects are read with raw accesses.
  if (lua_type(L, index) == LUA_TTABLE && lua_getmetatable(L, index)) {
    luaL_getmetatable(L, ERROR_MT);
    is_error = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return is_error;
}

dc_status_t dclua_error_status(lua_State* L, int index) {
  dc_status_t status = DC_ERR_UNKNOWN;
  if (dclua_is_error(L, index)) {
    const char* code =
        raw_field(L, index, "code") == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (code == NULL || !dc_status_from_name(code, &status) ||
        status == DC_OK) {
      status = DC_ERR_UNKNOWN;
    }
    lua_pop(L, 1);
  }
  return status;
}

// [-1, +1, m]  The protected parts of dclua_describe_error, on the value
// at 1: its status (an integer), read raw ...
static int status_protected(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)dclua_error_status(L, 1));
  return 1;
}

// [-1, +1, e]  ... and its text, which may run script code: the value's
// __tostring, or that of an error object's message.
static int text_protected(lua_State* L) {
  if (dclua_is_error(L, 1)) {
    if (raw_field(L, 1, "message") == LUA_TNIL) lua_pushliteral(L, "");
    luaL_tolstring(L, -1, NULL);
  } else {
    luaL_tolstring(L, 1, NULL);
  }
  return 1;
}

// Calls |fn| on the value at |index| under protection; true when it
// returned, with its result pushed, false (pushing nothing) when it
// raised. Needs 2 free slots of stack.
// [-0, +(0|1), -]
static bool protected_apply(lua_State* L, lua_CFunction fn, int index) {
  lua_pushcfunction(L, fn);
  lua_pushvalue(L, index);
  if (lua_pcall(L, 1, 1, 0) == LUA_OK) return true;
  lua_pop(L, 1);
  return false;
}

dc_status_t dclua_describe_error(lua_State* L, int index, char* message,
                                 size_t size) {
  index = lua_absindex(L, index);
  if (size == 0) return DC_ERR_UNKNOWN;
  // Lua's own words for a value it cannot show (lua.c's msghandler).
  snprintf(message, size, "(error object is a %s value)",
           lua_typename(L, lua_type(L, index)));
  if (!lua_checkstack(L, 4)) return DC_ERR_UNKNOWN;
  int top = lua_gettop(L);
  dc_status_t status = DC_ERR_UNKNOWN;
  if (protected_apply(L, status_protected, index)) {
    status = (dc_status_t)lua_tointeger(L, -1);
  }
  // A conversion that raises (a __tostring that fails, out of memory)
  // leaves the fallback text.
  if (protected_apply(L, text_protected, index)) {
    snprintf(message, size, "%s", lua_tostring(L, -1));
  }
  lua_settop(L, top);
  return status;
}

// [-1, +1, -]  dc.is_error(value) -> boolean
static int l_is_error(lua_State* L) {
  lua_pushboolean(L, dclua_is_error(L, 1));
  return 1;
}

// [-2, +1, v]  dc.error(code, message) -> an error object, for scripts to
// raise (error(dc.error("UNAVAILABLE", "backend busy"))): a host op that
// raises one fails with that code, so retry policies treat it as the
// engine's own failures.
static int l_error(lua_State* L) {
  const char* code = luaL_checkstring(L, 1);
  const char* message = luaL_checkstring(L, 2);
  dc_status_t status;
  if (!dc_status_from_name(code, &status) || status == DC_OK) {
    return luaL_argerror(L, 1, lua_pushfstring(L, "unknown status code '%s'",
                                                code));
  }
  push_error_object(L, status, message);
  return 1;
}

void dclua_open_error(lua_State* L) {
  static const luaL_Reg meta[] = {{"__tostring", dclua_error_tostring},
                                  {NULL, NULL}};
  dclua_class_new(L, ERROR_MT, meta, NULL);
  lua_pushcfunction(L, l_is_error);
  lua_setfield(L, -2, "is_error");
  lua_pushcfunction(L, l_error);
  lua_setfield(L, -2, "error");
}

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

#define ERROR_MT "dc.error"

// [-1, +1, m]  tostring(err) -> "CODE: message"
static int dclua_error_tostring(lua_State* L) {
  lua_getfield(L, 1, "code");
  lua_getfield(L, 1, "message");
  lua_pushfstring(L, "%s: %s", luaL_optstring(L, -2, "UNKNOWN"),
                  luaL_optstring(L, -1, ""));
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
  dclua_push_error(L, status);
  lua_pushstring(L, value);
  lua_setfield(L, -2, key);
  return lua_error(L);
}

bool dclua_is_error(lua_State* L, int index) {
  bool is_error = false;
  if (lua_getmetatable(L, index)) {
    luaL_getmetatable(L, ERROR_MT);
    is_error = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  return is_error;
}

dc_status_t dclua_error_status(lua_State* L, int index) {
  dc_status_t status = DC_ERR_UNKNOWN;
  if (dclua_is_error(L, index)) {
    lua_getfield(L, index, "code");
    const char* code = lua_tostring(L, -1);
    if (code == NULL || !dc_status_from_name(code, &status) ||
        status == DC_OK) {
      status = DC_ERR_UNKNOWN;
    }
    lua_pop(L, 1);
  }
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
  if (luaL_newmetatable(L, ERROR_MT)) {
    lua_pushcfunction(L, dclua_error_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, l_is_error);
  lua_setfield(L, -2, "is_error");
  lua_pushcfunction(L, l_error);
  lua_setfield(L, -2, "error");
}

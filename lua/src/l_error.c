// l_error.c: error objects raised by the binding.
//
// A failure reaches Lua as a table {code = "NAME", message = "..."} with
// the metatable "dc.error", whose __tostring gives "NAME: message". Scripts
// test err.code instead of parsing strings, and an uncaught error still
// prints readably.
// SPDX-License-Identifier: MIT
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

void dclua_push_error(lua_State* L, dc_status_t status) {
  lua_createtable(L, 0, 2);
  lua_pushstring(L, dc_status_name(status));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, dc_last_error());
  lua_setfield(L, -2, "message");
  luaL_setmetatable(L, ERROR_MT);
}

int dclua_raise(lua_State* L, dc_status_t status) {
  dclua_push_error(L, status);
  return lua_error(L);
}

// [-1, +1, -]  dc.is_error(value) -> boolean
static int dclua_is_error(lua_State* L) {
  bool is_error = false;
  if (lua_getmetatable(L, 1)) {
    luaL_getmetatable(L, ERROR_MT);
    is_error = lua_rawequal(L, -1, -2);
  }
  lua_pushboolean(L, is_error);
  return 1;
}

void dclua_open_error(lua_State* L) {
  if (luaL_newmetatable(L, ERROR_MT)) {
    lua_pushcfunction(L, dclua_error_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, dclua_is_error);
  lua_setfield(L, -2, "is_error");
}

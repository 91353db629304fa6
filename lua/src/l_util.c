// l_util.c: small helpers that every part of the binding needs and no
// class owns: fields of result tables, checks of option tables, and
// times (see dclua_internal.h).
// SPDX-License-Identifier: MIT
#include <string.h>
#include <time.h>

#include "dclua_internal.h"

//===-- Result tables ---------------------------------------------------===//

void dclua_set_integer(lua_State* L, const char* key, lua_Integer value) {
  lua_pushinteger(L, value);
  lua_setfield(L, -2, key);
}

void dclua_set_number(lua_State* L, const char* key, lua_Number value) {
  lua_pushnumber(L, value);
  lua_setfield(L, -2, key);
}

void dclua_set_string(lua_State* L, const char* key, const char* value) {
  lua_pushstring(L, value);
  lua_setfield(L, -2, key);
}

void dclua_set_boolean(lua_State* L, const char* key, bool value) {
  lua_pushboolean(L, value);
  lua_setfield(L, -2, key);
}

void dclua_copy_table(lua_State* L, int index) {
  index = lua_absindex(L, index);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
}

//===-- Option tables ---------------------------------------------------===//

// Whether the key at the top of the stack is a string that |names| lists.
// Tested for its type first: lua_tostring would turn a number key into a
// string in place and derail lua_next.
static bool is_listed(lua_State* L, const char* const* names) {
  if (lua_type(L, -1) != LUA_TSTRING) return false;
  const char* key = lua_tostring(L, -1);
  for (; *names != NULL; ++names) {
    if (strcmp(*names, key) == 0) return true;
  }
  return false;
}

bool dclua_push_unknown_key(lua_State* L, int index,
                            const char* const* allowed) {
  index = lua_absindex(L, index);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    if (!is_listed(L, allowed)) return true;  // lua_next left the key
  }
  return false;
}

const char* dclua_push_names(lua_State* L, const char* const* names) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (size_t i = 0; names[i] != NULL; ++i) {
    if (i > 0) luaL_addstring(&b, ", ");
    luaL_addstring(&b, names[i]);
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

void dclua_check_options(lua_State* L, int index, const char* const* allowed) {
  luaL_checktype(L, index, LUA_TTABLE);
  if (!dclua_push_unknown_key(L, index, allowed)) return;
  const char* key = luaL_tolstring(L, -1, NULL);
  const char* expected = dclua_push_names(L, allowed);
  luaL_argerror(L, index, lua_pushfstring(L, "unknown option '%s' "
                                          "(expected %s)", key, expected));
}

void dclua_check_fields(lua_State* L, int index, const char* what,
                        const char* const* fields) {
  if (!dclua_push_unknown_key(L, index, fields)) return;
  const char* key = luaL_tolstring(L, -1, NULL);
  dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
               "%s: unknown field '%s' (fields: %s)", what, key,
               dclua_push_names(L, fields));
}

//===-- Times -----------------------------------------------------------===//

uint64_t dclua_opt_timeout_ns(lua_State* L, int index) {
  if (lua_isnoneornil(L, index)) return DC_TIMEOUT_INFINITE;
  lua_Number ms = luaL_checknumber(L, index);
  luaL_argcheck(L, ms >= 0, index, "timeout must be >= 0 milliseconds");
  if (ms * 1e6 >= 1.8e19) return DC_TIMEOUT_INFINITE;
  return (uint64_t)(ms * 1e6);
}

uint64_t dclua_seconds_to_ns(double seconds) {
  double ns = seconds * 1e9 + 0.5;
  return ns < 1 ? 1 : (uint64_t)ns;
}

uint64_t dclua_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// l_object.c: boxes and classes, the shape every Lua object of the
// binding shares (see dclua_internal.h).
// SPDX-License-Identifier: MIT
#include "dclua_internal.h"

dclua_box_t* dclua_box_new(lua_State* L, const char* class_name,
                           int user_values) {
  dclua_box_t* box = lua_newuserdatauv(L, sizeof(*box), user_values);
  box->p = NULL;
  luaL_setmetatable(L, class_name);
  return box;
}

dclua_box_t* dclua_box_test(lua_State* L, int index, const char* class_name) {
  return luaL_testudata(L, index, class_name);
}

void* dclua_box_check(lua_State* L, int index, const char* class_name) {
  dclua_box_t* box = luaL_checkudata(L, index, class_name);
  if (box->p == NULL) luaL_error(L, "attempt to use a closed %s", class_name);
  return box->p;
}

// [-0, +1, -]  tostring(obj) -> "dc.stream: 0x..." or "dc.stream (closed)"
static int box_tostring(lua_State* L) {
  const dclua_box_t* box = lua_touserdata(L, 1);
  const char* name = "dc object";
  if (luaL_getmetafield(L, 1, "__name") == LUA_TSTRING) {
    name = lua_tostring(L, -1);
  }
  if (box == NULL || box->p == NULL) {
    lua_pushfstring(L, "%s (closed)", name);
  } else {
    lua_pushfstring(L, "%s: %p", name, box->p);
  }
  return 1;
}

void dclua_class_new(lua_State* L, const char* class_name,
                     const luaL_Reg* meta, const luaL_Reg* methods) {
  luaL_newmetatable(L, class_name);
  if (meta != NULL) luaL_setfuncs(L, meta, 0);
  if (methods != NULL) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
  }
  if (lua_getfield(L, -1, "__tostring") == LUA_TNIL) {
    lua_pushcfunction(L, box_tostring);
    lua_setfield(L, -3, "__tostring");
  }
  lua_pop(L, 2);
}

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

void* dclua_box_object(lua_State* L, int index, const char* class_name) {
  dclua_box_t* box = dclua_box_test(L, index, class_name);
  return box != NULL ? box->p : NULL;
}

void* dclua_box_take(lua_State* L, int index, const char* class_name) {
  dclua_box_t* box = luaL_checkudata(L, index, class_name);
  void* object = box->p;
  box->p = NULL;
  return object;
}

void* dclua_box_for_tostring(lua_State* L, int index,
                             const char* class_name) {
  dclua_box_t* box = luaL_checkudata(L, index, class_name);
  if (box->p == NULL) lua_pushfstring(L, "%s (closed)", class_name);
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
  // A class with fields has its own __index, which asks
  // dclua_push_method() first; others index their method table directly.
  bool has_fields = lua_getfield(L, -1, "__index") != LUA_TNIL;
  lua_pop(L, 1);
  if (methods != NULL || has_fields) {
    lua_newtable(L);
    if (methods != NULL) luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, has_fields ? "methods" : "__index");
  }
  if (lua_getfield(L, -1, "__tostring") == LUA_TNIL) {
    lua_pushcfunction(L, box_tostring);
    lua_setfield(L, -3, "__tostring");
  }
  lua_pop(L, 2);
}

// The table a class keeps its methods in.
static void push_methods(lua_State* L, const char* class_name) {
  luaL_getmetatable(L, class_name);
  if (lua_getfield(L, -1, "methods") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_getfield(L, -1, "__index");
  }
  lua_remove(L, -2);
}

void dclua_add_methods(lua_State* L, const char* class_name,
                       const luaL_Reg* methods) {
  push_methods(L, class_name);
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 1);
}

bool dclua_push_method(lua_State* L) {
  if (luaL_getmetafield(L, 1, "methods") == LUA_TNIL) return false;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, -2) == LUA_TNIL) {
    lua_pop(L, 2);
    return false;
  }
  lua_remove(L, -2);
  return true;
}

const char* dclua_index_key(lua_State* L) {
  if (dclua_push_method(L)) return NULL;
  return lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
}

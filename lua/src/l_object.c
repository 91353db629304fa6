// l_object.c: boxes and classes, the shape every Lua object of the
// binding shares (see dclua_internal.h), and the one check every method
// and metamethod makes of its self.
//
// A script can reach every function of a class (getmetatable(dev).__index,
// dev.info) and call it with any value as self: a number, a light
// userdata, a table, another class's object. So no function of the
// module may look at its self before dclua_udata_check (or a check built
// on it: dclua_box_check, dclua_table_check) has said what it is. A bad
// self raises, in the style of the Lua libraries,
//   bad self to 'dc.device.__index' (dc.device expected, got number)
// naming the function by its class: each class records which C function
// is which of its methods (names_key), so the message needs no name at
// the call site.
// SPDX-License-Identifier: MIT
#include "dclua_internal.h"

// Registry: tables from each C function of a class (the function value
// itself) to "<class>.<name>", for messages, and to "<class>", for the
// __index helpers below.
static const char names_key = 'f';
static const char classes_key = 'c';

//===-- Checks ----------------------------------------------------------===//

// The name Lua's own messages give the type of the value at |index|: its
// __name, "light userdata", or the basic type (as luaL_typeerror).
// [-0, +(0|1), -]
static const char* type_name(lua_State* L, int index) {
  int type = luaL_getmetafield(L, index, "__name");  // raw: no script code
  if (type == LUA_TSTRING) return lua_tostring(L, -1);
  if (type != LUA_TNIL) lua_pop(L, 1);
  if (lua_type(L, index) == LUA_TLIGHTUSERDATA) return "light userdata";
  return luaL_typename(L, index);
}

// Pushes what the registry table at |key| maps the running C function to
// ("<class>.<name>" or "<class>") and returns it, or returns NULL (pushing
// nothing) when it is no function of a class.
// [-0, +(0|1), -]
static const char* push_running(lua_State* L, const void* key) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar)) return NULL;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) != LUA_TTABLE) {
    lua_pop(L, 1);
    return NULL;
  }
  lua_getinfo(L, "f", &ar);  // pushes the running function
  if (lua_rawget(L, -2) != LUA_TSTRING) {
    lua_pop(L, 2);
    return NULL;
  }
  lua_remove(L, -2);
  return lua_tostring(L, -1);
}

int dclua_type_error(lua_State* L, int index, const char* expected) {
  if (index == 1 || (index < 0 && index > LUA_REGISTRYINDEX &&
                     lua_absindex(L, index) == 1)) {
    // The type first: with no arguments, slot 1 would be the name.
    int top = lua_gettop(L);
    const char* got = type_name(L, 1);
    const char* name = push_running(L, &names_key);
    if (name != NULL) {
      return luaL_error(L, "bad self to '%s' (%s expected, got %s)", name,
                        expected, got);
    }
    lua_settop(L, top);
  }
  return luaL_typeerror(L, index, expected);
}

void* dclua_udata_check(lua_State* L, int index, const char* class_name) {
  void* p = luaL_testudata(L, index, class_name);
  if (p == NULL) dclua_type_error(L, index, class_name);
  return p;
}

void dclua_table_check(lua_State* L, int index, const char* class_name) {
  bool ok = false;
  if (lua_type(L, index) == LUA_TTABLE && lua_getmetatable(L, index)) {
    luaL_getmetatable(L, class_name);
    ok = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  if (!ok) dclua_type_error(L, index, class_name);
}

//===-- Boxes -----------------------------------------------------------===//

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
  dclua_box_t* box = dclua_udata_check(L, index, class_name);
  if (box->p == NULL) luaL_error(L, "attempt to use a closed %s", class_name);
  return box->p;
}

void* dclua_box_object(lua_State* L, int index, const char* class_name) {
  dclua_box_t* box = dclua_box_test(L, index, class_name);
  return box != NULL ? box->p : NULL;
}

void* dclua_box_take(lua_State* L, int index, const char* class_name) {
  dclua_box_t* box = dclua_udata_check(L, index, class_name);
  void* object = box->p;
  box->p = NULL;
  return object;
}

void* dclua_box_for_tostring(lua_State* L, int index,
                             const char* class_name) {
  dclua_box_t* box = dclua_udata_check(L, index, class_name);
  if (box->p == NULL) lua_pushfstring(L, "%s (closed)", class_name);
  return box->p;
}

// [-0, +1, v]  tostring(obj) -> "dc.stream: 0x..." or "dc.stream (closed)"
// The default __tostring of a class of boxes; upvalue 1 is its name.
static int box_tostring(lua_State* L) {
  const char* name = lua_tostring(L, lua_upvalueindex(1));
  const dclua_box_t* box = dclua_udata_check(L, 1, name);
  if (box->p == NULL) {
    lua_pushfstring(L, "%s (closed)", name);
  } else {
    lua_pushfstring(L, "%s: %p", name, box->p);
  }
  return 1;
}

//===-- Classes ---------------------------------------------------------===//

// Pushes the registry table at |key|, making it on first use.
// [-0, +1, m]
static void push_registry_table(lua_State* L, const void* key) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, key);
  }
}

// Records the function at the top of the stack as <class_name>.<name>,
// unless it has a name already (a function serves as close, __close and
// __gc: it keeps the first, its method's name).
// [-0, +0, m]
static void name_function(lua_State* L, const char* class_name,
                          const char* name) {
  push_registry_table(L, &names_key);
  lua_pushvalue(L, -2);
  if (lua_rawget(L, -2) == LUA_TNIL) {
    lua_pushvalue(L, -3);
    lua_pushfstring(L, "%s.%s", class_name, name);
    lua_rawset(L, -4);
    push_registry_table(L, &classes_key);
    lua_pushvalue(L, -4);
    lua_pushstring(L, class_name);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  lua_pop(L, 2);
}

static void name_functions(lua_State* L, const char* class_name,
                           const luaL_Reg* functions) {
  for (; functions != NULL && functions->name != NULL; ++functions) {
    if (functions->func == NULL) continue;
    lua_pushcfunction(L, functions->func);
    name_function(L, class_name, functions->name);
    lua_pop(L, 1);
  }
}

void dclua_class_new(lua_State* L, const char* class_name,
                     const luaL_Reg* meta, const luaL_Reg* methods) {
  name_functions(L, class_name, methods);  // methods' names first
  name_functions(L, class_name, meta);
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
    lua_pushstring(L, class_name);
    lua_pushcclosure(L, box_tostring, 1);
    name_function(L, class_name, "__tostring");
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
  name_functions(L, class_name, methods);
  push_methods(L, class_name);
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 1);
}

bool dclua_push_method(lua_State* L) {
  // The __index that asks is a class's: its self must be of that class
  // (open or closed) before anything looks at it, so that no __index can
  // forget (getmetatable(k).__index(0x41414141, "program")).
  const char* class_name = push_running(L, &classes_key);
  if (class_name != NULL) {
    dclua_udata_check(L, 1, class_name);
    lua_pop(L, 1);
  }
  // A script can change a metatable: whatever "methods" holds is checked
  // before a raw access.
  int type = luaL_getmetafield(L, 1, "methods");
  if (type != LUA_TTABLE) {
    if (type != LUA_TNIL) lua_pop(L, 1);
    return false;
  }
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

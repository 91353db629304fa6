// l_context.c: the dc_context_t that a lua_State works in.
//
// The context lives in the registry under the address of |context_key|,
// boxed in a userdata whose __gc releases it when the state closes.
// SPDX-License-Identifier: MIT
#include "dclua_internal.h"

static const char context_key = 'c';

#define CONTEXT_BOX_MT "dc.context_box"

typedef struct context_box_t {
  dc_context_t* context;
} context_box_t;

static int context_box_gc(lua_State* L) {
  context_box_t* box = luaL_checkudata(L, 1, CONTEXT_BOX_MT);
  dc_context_release(box->context);
  box->context = NULL;
  return 0;
}

static context_box_t* find_box(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &context_key);
  context_box_t* box = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return box;
}

// Creates the box closed (context NULL) first, so that an error while
// creating the context leaks nothing.
static context_box_t* new_box(lua_State* L) {
  context_box_t* box = lua_newuserdatauv(L, sizeof(*box), 0);
  box->context = NULL;
  if (luaL_newmetatable(L, CONTEXT_BOX_MT)) {
    lua_pushcfunction(L, context_box_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &context_key);
  return box;
}

dc_status_t dclua_set_context(lua_State* L, dc_context_t* context) {
  if (L == NULL || context == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_set_context: NULL state or context");
  }
  if (find_box(L) != NULL) {
    return dc_set_error(DC_ERR_FAILED_PRECONDITION,
                        "dclua_set_context: the state already has a context");
  }
  context_box_t* box = new_box(L);
  dc_context_retain(context);
  box->context = context;
  return DC_OK;
}

dc_context_t* dclua_context(lua_State* L) {
  context_box_t* box = find_box(L);
  if (box != NULL && box->context != NULL) return box->context;
  if (box == NULL) box = new_box(L);
  dc_context_t* context = NULL;
  DCLUA_CHECK(L, dc_context_create(NULL, &context));
  box->context = context;
  return context;
}

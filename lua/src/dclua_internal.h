// dclua_internal.h: shared declarations of the binding's sources.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_INTERNAL_H_
#define DCLUA_INTERNAL_H_

#include <lauxlib.h>
#include <lua.h>

#include "dclua.h"

// Raises an error object for |status| (with dc_last_error()). Never returns.
int dclua_raise(lua_State* L, dc_status_t status);

// Raises |status| if it is not DC_OK.
#define DCLUA_CHECK(L, expr)                     \
  do {                                           \
    dc_status_t dclua_st_ = (expr);              \
    if (dclua_st_ != DC_OK) dclua_raise(L, dclua_st_); \
  } while (0)

// Registers each part's functions into the module table at the top of the
// stack.
void dclua_open_error(lua_State* L);
void dclua_open_device(lua_State* L);

#endif  // DCLUA_INTERNAL_H_

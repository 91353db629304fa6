// dclua.h: the Lua 5.4 binding of the dc engine, for C hosts that embed it.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_H_
#define DCLUA_H_

#include <lua.h>

#include "dc/dc.h"

DC_EXTERN_C_BEGIN

//===-- The `dc` module -------------------------------------------------===//
//
// luaopen_dc() opens the module: `require("dc")` in a script, or
// luaL_requiref(L, "dc", luaopen_dc, 0) in a host. Every call into the
// module runs on the thread that owns the lua_State (Lua-thread only).
//
// The module works in one dc_context_t per lua_State. A host that already
// has a context hands it over with dclua_set_context() before the module
// is opened, so scripts and C share devices and buffers; otherwise the
// module creates a context with default parameters on first use and
// releases it when the state is closed.
//
// Errors: a failing call raises an error object, a table with fields
// `code` (a status name such as "INVALID_ARGUMENT"), `message`, and a
// __tostring that gives "CODE: message". See docs/lua-api.md.

// Opens the module and leaves its table on the stack.
// [-0, +1, e]
DC_API int luaopen_dc(lua_State* L);

// Makes |context| the one the module in |L| uses. Retains |context|; the
// reference is dropped when |L| is closed. Call before the first use of the
// module; a later call fails.
// [-0, +0, -]  Returns DC_ERR_FAILED_PRECONDITION if a context is already
// set, DC_ERR_INVALID_ARGUMENT for NULL arguments.
DC_API dc_status_t dclua_set_context(lua_State* L, dc_context_t* context);

// Returns the context of |L|, creating it if needed (borrowed; lives until
// the state is closed). Raises a Lua error object if it cannot be created.
// [-0, +0, e]
DC_API dc_context_t* dclua_context(lua_State* L);

// Pushes an error object for |status| with the message of the calling
// thread's dc_last_error().
// [-0, +1, m]
DC_API void dclua_push_error(lua_State* L, dc_status_t status);

DC_EXTERN_C_END

#endif  // DCLUA_H_

// l_sandbox.h: the sandbox that dclua_engine_sandbox applies (l_sandbox.c).
// SPDX-License-Identifier: MIT
#ifndef DCLUA_L_SANDBOX_H_
#define DCLUA_L_SANDBOX_H_

#include "dclua_internal.h"

// Takes out of the standard libraries of |L| what reaches the operating
// system, wraps the functions that write files so that they write only
// where dclua_path_writable allows, and makes loading text-only (see
// dclua_engine_sandbox in dclua.h). |root| is the resolved writable
// directory (NULL: none), for messages. Call dclua_set_write_root first.
// [-0, +0, e]
void dclua_sandbox_open(lua_State* L, const char* root);

#endif  // DCLUA_L_SANDBOX_H_

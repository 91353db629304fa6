// dclua.c: luaopen_dc, the entry point of the `dc` module.
// SPDX-License-Identifier: MIT
#include "dclua_internal.h"

int luaopen_dc(lua_State* L) {
  lua_newtable(L);
  lua_pushstring(L, dc_version_string());
  lua_setfield(L, -2, "version");
  dclua_open_error(L);
  dclua_open_device(L);
  return 1;
}

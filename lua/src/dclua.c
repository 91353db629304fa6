// dclua.c: luaopen_dc, the entry point of the `dc` module.
// SPDX-License-Identifier: MIT
#include "dclua_internal.h"
#include "l_progress.h"

// [-0, +1, e]  dc.poll() -> n: runs the Lua callbacks that engine threads
// have queued (event completions, stream host functions) and returns how
// many ran. Blocking calls of the module poll by themselves.
static int l_poll(lua_State* L) {
  lua_pushinteger(L, dclua_poll(L));
  return 1;
}

int luaopen_dc(lua_State* L) {
  dclua_context(L);  // fails here, not half-way into a script
  lua_newtable(L);
  lua_pushstring(L, dc_version_string());
  lua_setfield(L, -2, "version");
  lua_pushcfunction(L, l_poll);
  lua_setfield(L, -2, "poll");
  // Devices first: the later parts add methods to dc.device.
  dclua_open_error(L);
  dclua_open_device(L);
  dclua_open_buffer(L);
  dclua_open_kernel(L);
  dclua_open_stream(L);
  dclua_open_event(L);
  dclua_open_encoder(L);
  dclua_open_policy(L);
  dclua_open_breaker(L);
  dclua_open_graph(L);
  dclua_open_telemetry(L);
  dclua_open_fault(L);
  dclua_open_image(L);
  dclua_open_progress(L);
  return 1;
}

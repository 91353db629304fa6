// l_device.c: device discovery from Lua.
// SPDX-License-Identifier: MIT
#include "dclua_internal.h"

static void set_integer(lua_State* L, const char* key, lua_Integer value) {
  lua_pushinteger(L, value);
  lua_setfield(L, -2, key);
}

static void set_string(lua_State* L, const char* key, const char* value) {
  lua_pushstring(L, value);
  lua_setfield(L, -2, key);
}

// Pushes a table describing |info|; field names follow dc_device_info_t.
static void push_info(lua_State* L, const dc_device_info_t* info) {
  lua_createtable(L, 0, 16);
  set_string(L, "name", info->name);
  set_string(L, "backend", info->backend);
  set_string(L, "model", info->model);
  set_string(L, "kind", info->kind == DC_DEVICE_KIND_GPU ? "gpu" : "cpu");
  set_integer(L, "compute_units", info->compute_units);
  set_integer(L, "worker_threads", info->worker_threads);
  set_integer(L, "simd_width", info->simd_width);
  set_integer(L, "max_work_group_size", info->max_work_group_size);
  set_integer(L, "local_memory_size", (lua_Integer)info->local_memory_size);
  set_integer(L, "memory_size", (lua_Integer)info->memory_size);
  set_integer(L, "cache_l1d_size", (lua_Integer)info->cache_l1d_size);
  set_integer(L, "cache_l2_size", (lua_Integer)info->cache_l2_size);
  set_integer(L, "cache_l3_size", (lua_Integer)info->cache_l3_size);
  set_integer(L, "cache_line_size", (lua_Integer)info->cache_line_size);
  lua_pushboolean(L, info->unified_memory);
  lua_setfield(L, -2, "unified_memory");
}

// [-0, +1, e]  dc.devices() -> { info, ... } (index 1 is the CPU)
static int dclua_devices(lua_State* L) {
  dc_context_t* context = dclua_context(L);
  size_t count = dc_context_device_count(context);
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; ++i) {
    dc_device_t* device = NULL;
    DCLUA_CHECK(L, dc_context_device(context, i, &device));
    push_info(L, dc_device_info(device));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

void dclua_open_device(lua_State* L) {
  lua_pushcfunction(L, dclua_devices);
  lua_setfield(L, -2, "devices");
}

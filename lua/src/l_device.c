// l_device.c: devices as Lua objects.
//
// Devices belong to the context, which outlives every Lua object of the
// state, so a dc.device holds a plain pointer and no reference. There is
// one dc.device per device (kept in a registry table keyed by the
// pointer), so devices compare with ==. A device's capabilities read as
// fields (dev.name, dev.compute_units); its methods come from the parts
// that make objects on it (dev:buffer in l_buffer.c, dev:compile in
// l_kernel.c, ...), which add them to the shared method table.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "dclua_internal.h"

static const char devices_key = 'd';  // registry: pointer -> dc.device
static const char default_key = 'n';  // registry: dclua_set_default_device

// Pushes a table describing |info|; field names follow dc_device_info_t.
static void push_info(lua_State* L, const dc_device_info_t* info) {
  lua_createtable(L, 0, 17);
  dclua_set_string(L, "name", info->name);
  dclua_set_string(L, "backend", info->backend);
  dclua_set_string(L, "model", info->model);
  dclua_set_string(L, "kind",
                   info->kind == DC_DEVICE_KIND_GPU ? "gpu" : "cpu");
  dclua_set_integer(L, "compute_units", info->compute_units);
  dclua_set_integer(L, "worker_threads", info->worker_threads);
  dclua_set_integer(L, "simd_width", info->simd_width);
  dclua_set_integer(L, "max_work_group_size", info->max_work_group_size);
  dclua_set_integer(L, "local_memory_size", info->local_memory_size);
  dclua_set_integer(L, "memory_size", info->memory_size);
  dclua_set_integer(L, "cache_l1d_size", info->cache_l1d_size);
  dclua_set_integer(L, "cache_l2_size", info->cache_l2_size);
  dclua_set_integer(L, "cache_l3_size", info->cache_l3_size);
  dclua_set_integer(L, "cache_line_size", info->cache_line_size);
  dclua_set_boolean(L, "unified_memory", info->unified_memory);
  dclua_set_string(L, "pci_bus_id", info->pci_bus_id);
}

void dclua_push_device(lua_State* L, dc_device_t* device) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &devices_key);
  if (lua_rawgetp(L, -1, device) == LUA_TNIL) {
    lua_pop(L, 1);
    dclua_box_t* box = dclua_box_new(L, DCLUA_DEVICE, 1);
    box->p = device;
    push_info(L, dc_device_info(device));  // cached: capabilities are fixed
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, -3, device);
  }
  lua_remove(L, -2);
}

// A device's name stands for it as an argument, not as the self of a
// method: dev.info("cpu") is a bad self, as dev.info(0) is. Every call
// with |index| 1 that is not |optional| is a device method's self.
dc_device_t* dclua_check_device(lua_State* L, int index, bool optional) {
  if (index == 1 && !optional) return dclua_box_check(L, 1, DCLUA_DEVICE);
  dc_context_t* context = dclua_context(L);
  dc_device_t* device = NULL;
  if (optional && lua_isnoneornil(L, index)) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &default_key) == LUA_TSTRING) {
      DCLUA_CHECK(L, dc_context_find_device(context, lua_tostring(L, -1),
                                            &device));
    } else {
      DCLUA_CHECK(L, dc_context_default_device(context, &device));
    }
    lua_pop(L, 1);
  } else if (lua_type(L, index) == LUA_TSTRING) {
    DCLUA_CHECK(L, dc_context_find_device(context, lua_tostring(L, index),
                                          &device));
  } else if (dclua_box_test(L, index, DCLUA_DEVICE) != NULL) {
    device = dclua_box_check(L, index, DCLUA_DEVICE);
  } else {
    dclua_type_error(L, index, "dc.device or device name");
  }
  return device;
}

dc_status_t dclua_set_default_device(lua_State* L, const char* name) {
  if (L == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_set_default_device: NULL state");
  }
  lua_pushstring(L, name);  // NULL pushes nil: back to the best device
  lua_rawsetp(L, LUA_REGISTRYINDEX, &default_key);
  return DC_OK;
}

// [-0, +1, v]  dev.field -> a method, or a capability (nil if neither)
static int device_index(lua_State* L) {
  dclua_box_check(L, 1, DCLUA_DEVICE);
  if (dclua_push_method(L)) return 1;
  // The capabilities table, unless debug.setuservalue replaced it.
  if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

// [-0, +1, -]  tostring(dev) -> "dc.device: cpu (model)"
static int device_tostring(lua_State* L) {
  dc_device_t* device = dclua_box_check(L, 1, DCLUA_DEVICE);
  lua_pushfstring(L, "dc.device: %s (%s)", dc_device_name(device),
                  dc_device_info(device)->model);
  return 1;
}

// [-0, +1, -]  dev:info() -> a table of the capabilities (a copy)
static int device_info(lua_State* L) {
  push_info(L, dc_device_info(dclua_check_device(L, 1, false)));
  return 1;
}

// [-0, +1, e]  dev:health() -> { state = "healthy", failures = n,
//                                reason = "..." }
static int device_health(lua_State* L) {
  dc_device_health_t health;
  DCLUA_CHECK(L, dc_device_health(dclua_check_device(L, 1, false), &health));
  lua_createtable(L, 0, 3);
  dclua_set_string(L, "state", dc_device_health_name(health.state));
  dclua_set_integer(L, "failures", health.failures);
  dclua_set_string(L, "reason", health.reason);
  return 1;
}

// [-0, +1, e]  dev:reset_health() -> dev
static int device_reset_health(lua_State* L) {
  DCLUA_CHECK(L, dc_device_reset_health(dclua_check_device(L, 1, false)));
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  dev:set_memory_budget(bytes | nil) -> dev: the most bytes
// of buffers the device holds, in use plus cached (nil: back to the
// device's memory). Refused in a sandbox, whose budget is the host's.
static int device_set_memory_budget(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  size_t budget = 0;
  if (!lua_isnoneornil(L, 2)) {
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_argcheck(L, n >= 1, 2, "a budget is at least 1 byte (nil: none)");
    budget = (size_t)n;
  }
  if (dclua_sandboxed(L)) {
    dclua_raisef(L, DC_ERR_PERMISSION_DENIED,
                 "sandbox: the memory budget of %s is the host's to set",
                 dc_device_name(device));
  }
  DCLUA_CHECK(L, dc_memory_pool_set_budget(device, budget));
  lua_settop(L, 1);
  return 1;
}

// [-0, +1, e]  dev:memory() -> { in_use, peak, cached, budget,
//                                cache_limit, hits, misses, failures }
// (bytes; counts since the context was made)
static int device_memory(lua_State* L) {
  dc_memory_pool_stats_t s;
  DCLUA_CHECK(L, dc_memory_pool_stats(dclua_check_device(L, 1, false), &s));
  lua_createtable(L, 0, 8);
  dclua_set_integer(L, "in_use", (lua_Integer)s.bytes_in_use);
  dclua_set_integer(L, "peak", (lua_Integer)s.peak_bytes_in_use);
  dclua_set_integer(L, "cached", (lua_Integer)s.bytes_cached);
  dclua_set_integer(L, "budget", (lua_Integer)s.budget);
  dclua_set_integer(L, "cache_limit", (lua_Integer)s.cache_limit);
  dclua_set_integer(L, "hits", (lua_Integer)s.hits);
  dclua_set_integer(L, "misses", (lua_Integer)s.misses);
  dclua_set_integer(L, "failures", (lua_Integer)s.failures);
  return 1;
}

// [-0, +1, e]  dev:peer(other [, measure]) -> { path = "direct",
//                                              direct = true,
//                                              bandwidth = bytes/s }
// How a copy from dev to other travels; |other| is a device or a name.
// With measure, the first call for the pair times copies (dc_device_peer).
static int device_peer(lua_State* L) {
  dc_device_t* from = dclua_check_device(L, 1, false);
  dc_device_t* to = dclua_check_device(L, 2, false);
  int type = lua_type(L, 3);
  luaL_argexpected(L, type == LUA_TNONE || type == LUA_TNIL ||
                          type == LUA_TBOOLEAN,
                   3, "boolean");
  dc_peer_info_t peer;
  DCLUA_CHECK(L, dc_device_peer(from, to, lua_toboolean(L, 3), &peer));
  lua_createtable(L, 0, 3);
  dclua_set_string(L, "path", dc_peer_path_name(peer.path));
  dclua_set_boolean(L, "direct", peer.direct);
  dclua_set_integer(L, "bandwidth", peer.bandwidth);
  return 1;
}

// [-0, +1, e]  dc.device([name]) -> the named device, or the best one
// (the first GPU, else the CPU)
static int dclua_device(lua_State* L) {
  dclua_push_device(L, dclua_check_device(L, 1, true));
  return 1;
}

// [-0, +1, e]  dc.devices() -> { dev, ... } (index 1 is the CPU)
static int dclua_devices(lua_State* L) {
  dc_context_t* context = dclua_context(L);
  size_t count = dc_context_device_count(context);
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; ++i) {
    dc_device_t* device = NULL;
    DCLUA_CHECK(L, dc_context_device(context, i, &device));
    dclua_push_device(L, device);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

void dclua_open_device(lua_State* L) {
  static const luaL_Reg meta[] = {{"__index", device_index},
                                  {"__tostring", device_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"info", device_info},
                                     {"health", device_health},
                                     {"reset_health", device_reset_health},
                                     {"peer", device_peer},
                                     {"memory", device_memory},
                                     {"set_memory_budget",
                                      device_set_memory_budget},
                                     {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"device", dclua_device},
                                   {"devices", dclua_devices},
                                   {NULL, NULL}};
  dclua_class_new(L, DCLUA_DEVICE, meta, methods);
  lua_newtable(L);  // weak values: a device object lives while it is used
  lua_createtable(L, 0, 1);
  lua_pushstring(L, "v");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &devices_key);
  dclua_set_funcs(L, funcs);
}

// l_fault.c: fault injection from Lua (dc.fault), to make launches,
// copies, allocations and compiles fail on purpose and test what a
// pipeline does about it. A rule is a plain table with the fields of
// dc_fault_rule_t (dc/fault.h); rules are named by the ids the core gives.
// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <string.h>

#include "dclua_internal.h"

// The sites by the names the DC_FAULTS syntax uses.
static const struct {
  const char* name;
  dc_fault_site_t site;
} kSites[] = {{"launch", DC_FAULT_LAUNCH},
              {"copy", DC_FAULT_COPY},
              {"alloc", DC_FAULT_ALLOC},
              {"compile", DC_FAULT_COMPILE}};

#define SITE_COUNT (sizeof(kSites) / sizeof(kSites[0]))

// Raises a field error of the rule table (argument 1 of dc.fault.add).
static int field_error(lua_State* L, const char* field, const char* what) {
  return luaL_argerror(L, 1,
                       lua_pushfstring(L, "field '%s' %s", field, what));
}

// Adds the site named by |name| (|length| bytes) to |mask|.
static void add_site(lua_State* L, const char* name, size_t length,
                     uint32_t* mask) {
  for (size_t i = 0; i < SITE_COUNT; ++i) {
    if (strlen(kSites[i].name) == length &&
        memcmp(kSites[i].name, name, length) == 0) {
      *mask |= (uint32_t)kSites[i].site;
      return;
    }
  }
  field_error(L, "site",
              lua_pushfstring(L, "has '%s', which is no fault site (launch, "
                              "copy, alloc, compile)",
                              lua_pushlstring(L, name, length)));
}

// Adds the sites of a "launch" or "launch,copy" string to |mask|.
static void add_site_list(lua_State* L, const char* text, uint32_t* mask) {
  for (;;) {
    const char* comma = strchr(text, ',');
    size_t length = comma != NULL ? (size_t)(comma - text) : strlen(text);
    add_site(L, text, length, mask);
    if (comma == NULL) return;
    text = comma + 1;
  }
}

// Reads the field 'site' (a name, "a,b", or a list of names) at the top
// of the stack into a mask of sites.
static uint32_t check_sites(lua_State* L) {
  uint32_t mask = 0;
  if (lua_type(L, -1) == LUA_TSTRING) {
    add_site_list(L, lua_tostring(L, -1), &mask);
  } else if (lua_istable(L, -1)) {
    lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      if (lua_geti(L, -1, i) != LUA_TSTRING) {
        field_error(L, "site", "must list site names");
      }
      add_site_list(L, lua_tostring(L, -1), &mask);
      lua_pop(L, 1);
    }
  } else {
    field_error(L, "site", "must be a site name or a list of them "
                "(launch, copy, alloc, compile)");
  }
  if (mask == 0) field_error(L, "site", "names no site");
  return mask;
}

// Reads the value at the top of the stack as an integer >= 0.
static uint64_t check_count(lua_State* L, const char* field) {
  int is_integer = 0;
  lua_Integer value = lua_tointegerx(L, -1, &is_integer);
  if (!is_integer || value < 0) {
    field_error(L, field, "must be an integer >= 0");
  }
  return (uint64_t)value;
}

// Reads the value at the top of the stack as a status name.
static dc_status_t check_status(lua_State* L) {
  dc_status_t status = DC_OK;
  const char* name = lua_tostring(L, -1);
  if (lua_type(L, -1) != LUA_TSTRING || !dc_status_from_name(name, &status) ||
      status == DC_OK) {
    field_error(L, "status", "must be an error code name such as "
                "\"UNAVAILABLE\" or \"DEVICE_LOST\"");
  }
  return status;
}

// Reads the value at the top of the stack as a device filter: a device
// or backend name, or a dc.device (its name).
static const char* check_device_filter(lua_State* L) {
  if (lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  if (dclua_box_test(L, -1, DCLUA_DEVICE) != NULL) {
    return dc_device_name(dclua_box_check(L, -1, DCLUA_DEVICE));
  }
  field_error(L, "device", "must be a device name or a dc.device");
  return NULL;
}

// Reads one field of a rule (key at -2, value at -1) into |rule|. The
// strings stay valid while the rule table lives (device names: while the
// context does).
static void read_rule_field(lua_State* L, dc_fault_rule_t* rule) {
  const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                   : "";
  if (strcmp(key, "site") == 0) {
    rule->sites = check_sites(L);
  } else if (strcmp(key, "nth") == 0) {
    rule->nth = check_count(L, key);
  } else if (strcmp(key, "seed") == 0) {
    rule->seed = check_count(L, key);
  } else if (strcmp(key, "limit") == 0) {
    rule->limit = check_count(L, key);
  } else if (strcmp(key, "rate") == 0) {
    if (lua_type(L, -1) != LUA_TNUMBER) field_error(L, key, "must be a number");
    rule->rate = (double)lua_tonumber(L, -1);
  } else if (strcmp(key, "permanent") == 0 || strcmp(key, "halfway") == 0) {
    if (!lua_isboolean(L, -1)) field_error(L, key, "must be a boolean");
    bool* flag = strcmp(key, "permanent") == 0 ? &rule->permanent
                                                : &rule->halfway;
    *flag = lua_toboolean(L, -1);
  } else if (strcmp(key, "status") == 0) {
    rule->status = check_status(L);
  } else if (strcmp(key, "device") == 0) {
    rule->device = check_device_filter(L);
  } else if (strcmp(key, "name") == 0) {
    if (lua_type(L, -1) != LUA_TSTRING) field_error(L, key, "must be a string");
    rule->name = lua_tostring(L, -1);
  } else {
    luaL_argerror(L, 1, lua_pushfstring(L, "unknown field '%s' (site, nth, "
                                        "rate, seed, limit, permanent, "
                                        "halfway, status, device, name)",
                                        luaL_tolstring(L, -2, NULL)));
  }
}

// [-0, +1, e]  dc.fault.add { site = "launch", nth = n | rate = p,
//   seed = s, limit = n, permanent = bool, halfway = bool, status = "NAME",
//   device = "cpu", name = "kernel" } -> id
static int l_fault_add(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  dc_fault_rule_t rule;
  memset(&rule, 0, sizeof(rule));
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    read_rule_field(L, &rule);
    lua_pop(L, 1);
  }
  if (rule.sites == 0) field_error(L, "site", "is required");
  uint32_t id = 0;
  DCLUA_CHECK(L, dc_fault_add(dclua_context(L), &rule, &id));
  lua_pushinteger(L, id);
  return 1;
}

// Returns the id the next rule of |context| would get. dc_fault_parse
// does not say which ids it gave, so dc.fault.parse brackets it with two
// of these probes: a rule that cannot fire (its nth call never comes, and
// no program has its name), added and removed at once.
static uint32_t next_rule_id(lua_State* L, dc_context_t* context) {
  dc_fault_rule_t probe = {.sites = DC_FAULT_COMPILE,
                           .nth = UINT64_MAX,
                           .name = "dclua: rule id probe"};
  uint32_t id = 0;
  DCLUA_CHECK(L, dc_fault_add(context, &probe, &id));
  DCLUA_CHECK(L, dc_fault_remove(context, id));
  return id;
}

// [-0, +1, e]  dc.fault.parse(spec) -> { id, ... }: adds the rules of a
// DC_FAULTS text ("launch:rate=0.1:seed=7; alloc:nth=3"), all or none
static int l_fault_parse(lua_State* L) {
  const char* spec = luaL_checkstring(L, 1);
  dc_context_t* context = dclua_context(L);
  uint32_t before = next_rule_id(L, context);
  DCLUA_CHECK(L, dc_fault_parse(context, spec));
  uint32_t after = next_rule_id(L, context);
  lua_newtable(L);
  lua_Integer n = 0;
  for (uint32_t id = before + 1; id < after; ++id) {
    dc_fault_stats_t stats;
    if (dc_fault_stats(context, id, &stats) != DC_OK) continue;  // removed
    lua_pushinteger(L, id);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

// Reads a rule id at |index|.
static uint32_t check_rule_id(lua_State* L, int index) {
  lua_Integer id = luaL_checkinteger(L, index);
  luaL_argcheck(L, id >= 1 && id <= UINT32_MAX, index, "not a rule id");
  return (uint32_t)id;
}

// [-0, +0, e]  dc.fault.remove(id)
static int l_fault_remove(lua_State* L) {
  DCLUA_CHECK(L, dc_fault_remove(dclua_context(L), check_rule_id(L, 1)));
  return 0;
}

// [-0, +0, e]  dc.fault.clear(): removes every rule (DC_FAULTS' too)
static int l_fault_clear(lua_State* L) {
  dc_fault_clear(dclua_context(L));
  return 0;
}

// [-0, +1, e]  dc.fault.stats(id) -> { matched = n, injected = n }
static int l_fault_stats(lua_State* L) {
  dc_fault_stats_t stats;
  DCLUA_CHECK(L, dc_fault_stats(dclua_context(L), check_rule_id(L, 1),
                                &stats));
  lua_createtable(L, 0, 2);
  dclua_set_integer(L, "matched", stats.matched);
  dclua_set_integer(L, "injected", stats.injected);
  return 1;
}

void dclua_open_fault(lua_State* L) {
  static const luaL_Reg funcs[] = {{"add", l_fault_add},
                                   {"parse", l_fault_parse},
                                   {"remove", l_fault_remove},
                                   {"clear", l_fault_clear},
                                   {"stats", l_fault_stats},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  lua_setfield(L, -2, "fault");
}

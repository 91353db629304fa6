// l_fields.c: reading the fields of option tables (dc.retry, dc.breaker)
// with every value checked, and status names both ways.
// SPDX-License-Identifier: MIT
#include "l_fields.h"

#include <math.h>
#include <string.h>

#define NS_PER_S 1e9

// Every status code, for masks and their names.
static const dc_status_t kCodes[] = {
#define CODE_(name, value, cls, desc) DC_##name,
    DC_STATUS_MAP(CODE_)
#undef CODE_
};
#define CODE_COUNT (sizeof(kCodes) / sizeof(kCodes[0]))

size_t dclua_status_count(void) { return CODE_COUNT; }

dc_status_t dclua_status_at(size_t index) { return kCodes[index]; }

// Raises INVALID_ARGUMENT for a bad field of the table a |what| reads.
int dclua_field_error(lua_State* L, const char* what, const char* field,
                       const char* problem) {
  return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "%s: field '%s' %s", what,
                      field, problem);
}

// Reads a number field; false when absent. Raises unless it is a finite
// number.
bool dclua_get_number(lua_State* L, int index, const char* what,
                       const char* field, double* out) {
  int type = lua_getfield(L, index, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  int is_number = 0;
  *out = (double)lua_tonumberx(L, -1, &is_number);
  if (type != LUA_TNUMBER || !is_number || !isfinite(*out)) {
    dclua_field_error(L, what, field,
                lua_pushfstring(L, "must be a finite number, got %s",
                                luaL_tolstring(L, -1, NULL)));
  }
  lua_pop(L, 1);
  return true;
}

// Reads an integer field in [min, max]; false when absent.
bool dclua_get_integer(lua_State* L, int index, const char* what,
                        const char* field, lua_Integer min, lua_Integer max,
                        lua_Integer* out) {
  int type = lua_getfield(L, index, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  int is_integer = 0;
  *out = lua_tointegerx(L, -1, &is_integer);
  if (type != LUA_TNUMBER || !is_integer || *out < min || *out > max) {
    dclua_field_error(L, what, field,
                lua_pushfstring(L, "must be an integer from %I to %I, got %s",
                                min, max, luaL_tolstring(L, -1, NULL)));
  }
  lua_pop(L, 1);
  return true;
}

// Reads a duration in seconds (> 0) into nanoseconds; false when absent.
bool dclua_get_seconds(lua_State* L, int index, const char* what,
                        const char* field, uint64_t* out_ns) {
  double s = 0;
  if (!dclua_get_number(L, index, what, field, &s)) return false;
  if (!(s > 0) || s * NS_PER_S > 1.8e19) {
    dclua_field_error(L, what, field,
                lua_pushfstring(L, "must be a positive number of seconds, "
                                "got %f", s));
  }
  *out_ns = dclua_seconds_to_ns(s);
  return true;
}

// Adds the status or class named by the string at the top of the stack to
// |codes| (a DC_STATUS_BIT mask) or |classes| (DC_RETRY_ON_* bits; NULL:
// classes are not allowed here).
static void add_code(lua_State* L, const char* what, const char* field,
                     uint64_t* codes, uint32_t* classes) {
  const char* name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                     : NULL;
  dc_status_t status;
  if (name == NULL) {
    dclua_field_error(L, what, field,
                lua_pushfstring(L, "must list status names, got %s",
                                luaL_typename(L, -1)));
  } else if (classes != NULL && strcmp(name, "transient") == 0) {
    *classes |= DC_RETRY_ON_TRANSIENT;
  } else if (classes != NULL && strcmp(name, "deterministic") == 0) {
    *classes |= DC_RETRY_ON_DETERMINISTIC;
  } else if (classes != NULL && strcmp(name, "device") == 0) {
    *classes |= DC_RETRY_ON_DEVICE;
  } else if (classes != NULL && strcmp(name, "all") == 0) {
    *classes |= DCLUA_ALL_CLASSES;
  } else if (dc_status_from_name(name, &status) && status != DC_OK) {
    *codes |= DC_STATUS_BIT(status);
  } else {
    dclua_field_error(L, what, field,
                lua_pushfstring(L, "names an unknown status '%s'%s", name,
                                classes != NULL ? " (or a class: "
                                "\"transient\", \"device\", "
                                "\"deterministic\", \"all\")" : ""));
  }
}

// Reads a field that is one status name or a list of them; false when
// absent.
bool dclua_get_codes(lua_State* L, int index, const char* what,
                      const char* field, uint64_t* codes, uint32_t* classes) {
  int type = lua_getfield(L, index, field);
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
    return false;
  }
  if (type == LUA_TSTRING) {
    add_code(L, what, field, codes, classes);
  } else if (type == LUA_TTABLE) {
    lua_Integer n = luaL_len(L, -1);
    if (n == 0) dclua_field_error(L, what, field, "is an empty list");
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, -1, i);
      add_code(L, what, field, codes, classes);
      lua_pop(L, 1);
    }
  } else {
    dclua_field_error(L, what, field,
                lua_pushfstring(L, "must be a status name or a list of "
                                "them, got %s", luaL_typename(L, -1)));
  }
  lua_pop(L, 1);
  return true;
}

// Pushes the list of the names of the codes in |mask|.
void dclua_push_codes(lua_State* L, uint64_t mask) {
  lua_newtable(L);
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    if (mask & DC_STATUS_BIT(kCodes[i])) {
      lua_pushstring(L, dc_status_name(kCodes[i]));
      lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
    }
  }
}


// l_record.c: a struct or union argument from Lua: a table of its members
// by name, or a string of its exact bytes, written into the layout the
// kernel's reflection describes (dc_kernel_field_t).
//
// Members not given are zero; a nested record is a nested table, an array
// a sequence of exactly its elements (every dimension flattened), a
// vector a table of its components, as for vector arguments. Messages name
// the kernel, the argument and the member's path ("p.inner.lo",
// "p.items[2].n").
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dclua_internal.h"

// Where a conversion is: the argument, for messages.
typedef struct where_t {
  const dc_kernel_t* kernel;
  size_t arg;  // 0-based
  const dc_kernel_arg_info_t* info;
} where_t;

// A member's path, cut short if it ever grew past the buffer.
#define PATH_SIZE 256
static void make_path(char* buf, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
static void make_path(char* buf, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, PATH_SIZE, format, ap);
  va_end(ap);
}

// "argument 2 (p)" or "argument 2 (p) member 'inner.lo'".
static const char* locate(const where_t* w, const char* path, char* buf,
                          size_t size) {
  snprintf(buf, size, "argument %zu (%s)%s%s%s", w->arg + 1, w->info->name,
           *path ? " member '" : "", path, *path ? "'" : "");
  return buf;
}

// Raises "k: argument 2 (p) member 'lo' expects int, got 2.5 (not an
// integer)" for the value at |index| (|why| "" when its type is wrong).
static int member_fail(lua_State* L, const where_t* w, const char* path,
                       const char* expect, int index, const char* why) {
  char at[PATH_SIZE + 64], got[96];
  return dclua_args_fail(L, dc_kernel_name(w->kernel),
                         "%s expects %s, got %s%s%s%s",
                         locate(w, path, at, sizeof(at)), expect,
                         dclua_args_describe(L, index, got, sizeof(got)),
                         *why ? " (" : "", why, *why ? ")" : "");
}

static void convert_members(lua_State* L, const where_t* w, const char* path,
                            const dc_kernel_field_t* fields, size_t count,
                            bool is_union, const char* type_name, int index,
                            unsigned char* dst, size_t size);

// Raises for a value that is not a table of the right length: "... expects
// float4 (a table of 4 numbers), got a table of 3".
static int vector_fail(lua_State* L, const where_t* w, const char* path,
                       const char* expect, int index) {
  char at[PATH_SIZE + 64], got[96];
  const char* g = dclua_args_describe(L, index, got, sizeof(got));
  if (lua_type(L, index) == LUA_TTABLE) {
    snprintf(got, sizeof(got), "a table of %zu", (size_t)lua_rawlen(L, index));
    g = got;
  }
  return dclua_args_fail(L, dc_kernel_name(w->kernel), "%s expects %s, got %s",
                         locate(w, path, at, sizeof(at)), expect, g);
}

// One element of member |f| (not an array) from the value at |index|.
static void convert_element(lua_State* L, const where_t* w, const char* path,
                            const dc_kernel_field_t* f, size_t bytes,
                            int index, unsigned char* dst) {
  index = lua_absindex(L, index);
  if (f->fields != NULL) {  // a nested struct or union
    const char* type = strncmp(f->type_name, "const ", 6) == 0
                           ? f->type_name + 6 : f->type_name;
    char element[96];
    snprintf(element, sizeof(element), "%s", type);
    char* bracket = strchr(element, '[');  // "struct r[2]" -> "struct r"
    if (bracket != NULL) *bracket = '\0';
    convert_members(L, w, path, f->fields, f->field_count, f->is_union,
                    element, index, dst, bytes);
    return;
  }
  size_t esize = dc_dtype_size(f->dtype);
  if (f->vector_width == 1) {
    const char* why = dclua_put_element(L, index, f->dtype, dst);
    if (why != NULL) {
      member_fail(L, w, path, dclua_c_type(f->dtype), index, why);
    }
    return;
  }
  if (lua_type(L, index) != LUA_TTABLE ||
      lua_rawlen(L, index) != f->vector_width) {
    char expect[64];
    snprintf(expect, sizeof(expect), "%s%u (a table of %u numbers)",
             dclua_c_type(f->dtype), f->vector_width, f->vector_width);
    vector_fail(L, w, path, expect, index);
  }
  for (uint32_t e = 0; e < f->vector_width; ++e) {
    lua_rawgeti(L, index, (lua_Integer)e + 1);
    const char* why = dclua_put_element(L, -1, f->dtype, dst + e * esize);
    if (why != NULL) {
      char at[PATH_SIZE];
      make_path(at, "%s[%u]", path, e + 1);
      member_fail(L, w, at, dclua_c_type(f->dtype), -1, why);
    }
    lua_pop(L, 1);
  }
}

// Member |f| from the value at |index| into |dst| (its first byte).
static void convert_member(lua_State* L, const where_t* w, const char* path,
                           const dc_kernel_field_t* f, int index,
                           unsigned char* dst) {
  if (f->array_length == 0) {
    convert_element(L, w, path, f, f->size, index, dst);
    return;
  }
  size_t n = f->array_length, stride = f->size / n;
  if (lua_type(L, index) != LUA_TTABLE || lua_rawlen(L, index) != n) {
    char expect[64];
    snprintf(expect, sizeof(expect), "%s (a sequence of %zu elements)",
             f->type_name, n);
    vector_fail(L, w, path, expect, index);
  }
  for (size_t e = 0; e < n; ++e) {
    char at[PATH_SIZE];
    make_path(at, "%s[%zu]", path, e + 1);
    lua_rawgeti(L, index, (lua_Integer)e + 1);
    convert_element(L, w, at, f, stride, -1, dst + e * stride);
    lua_pop(L, 1);
  }
}

// Writes "a, b, c" into |buf|.
static const char* member_names(const dc_kernel_field_t* fields, size_t count,
                                char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < count && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     fields[i].name);
    if (n > 0) used += (size_t)n;
  }
  return buf;
}

// A record (the argument itself, or a member) from the table or string
// at |index| into |dst| (|size| bytes, zero when called).
static void convert_members(lua_State* L, const where_t* w, const char* path,
                            const dc_kernel_field_t* fields, size_t count,
                            bool is_union, const char* type_name, int index,
                            unsigned char* dst, size_t size) {
  index = lua_absindex(L, index);
  char at[PATH_SIZE + 64];
  locate(w, path, at, sizeof(at));
  if (lua_type(L, index) == LUA_TSTRING) {  // the raw bytes
    size_t length = 0;
    const char* bytes = lua_tolstring(L, index, &length);
    if (length == size) {
      memcpy(dst, bytes, size);
      return;
    }
    dclua_args_fail(L, dc_kernel_name(w->kernel),
                    "%s expects %s (a table of its members, or a string of "
                    "%zu bytes), got a string of %zu bytes", at, type_name,
                    size, length);
  }
  if (lua_type(L, index) != LUA_TTABLE) {
    char got[96];
    dclua_args_fail(L, dc_kernel_name(w->kernel),
                    "%s expects %s (a table of its members, or a string of "
                    "%zu bytes), got %s", at, type_name, size,
                    dclua_args_describe(L, index, got, sizeof(got)));
  }
  char names[512];
  const char* given = NULL;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                     : NULL;
    const dc_kernel_field_t* f = NULL;
    for (size_t i = 0; key != NULL && i < count && f == NULL; ++i) {
      if (strcmp(fields[i].name, key) == 0) f = &fields[i];
    }
    if (f == NULL) {
      char got[96];
      const char* what = key ? key
                             : dclua_args_describe(L, -2, got, sizeof(got));
      dclua_args_fail(L, dc_kernel_name(w->kernel),
                      "%s: %s has no member %s%s%s (members: %s)", at,
                      type_name, key ? "'" : "", what, key ? "'" : "",
                      member_names(fields, count, names, sizeof(names)));
    }
    if (is_union && given != NULL) {  // members overlap: which would win?
      dclua_args_fail(L, dc_kernel_name(w->kernel),
                      "%s: %s is a union: give one member, got '%s' and "
                      "'%s'", at, type_name, given, key);
    }
    given = key;
    char sub[PATH_SIZE];
    make_path(sub, "%s%s%s", path, *path ? "." : "", key);
    convert_member(L, w, sub, f, -1, dst + f->offset);
    lua_pop(L, 1);
  }
}

void dclua_record_from_value(lua_State* L, const dc_kernel_t* kernel,
                             size_t arg, int index, unsigned char* dst) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, arg);
  where_t w = {.kernel = kernel, .arg = arg, .info = info};
  const char* type = strncmp(info->type_name, "const ", 6) == 0
                         ? info->type_name + 6 : info->type_name;
  memset(dst, 0, info->size);
  convert_members(L, &w, "", info->fields, info->field_count, info->is_union,
                  type, index, dst, info->size);
}

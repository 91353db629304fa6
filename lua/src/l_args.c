// l_args.c: converting Lua values into a dispatch's arguments and launch
// shape, checked against the kernel's reflection.
//
// Streams, graphs, the encoder and the synchronous k(launch, ...) all bind
// arguments here, so that every path accepts the same values and fails
// with the same messages. Each message names the kernel and the argument
// the way a script sees it (1-based index and parameter name), says what
// was expected and what was given, and is raised as an INVALID_ARGUMENT
// error object whose `kernel` field holds the kernel's name. Conversion
// takes no references, so an error raised half-way leaks nothing; a
// dc_arg_t borrows its buffer from the dc.buffer on the stack, which the
// caller keeps there for as long as it uses the arguments.
// SPDX-License-Identifier: MIT
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dclua_internal.h"

// A DCLUA_LOCAL userdata (dc.localmem, l_kernel.c) holds one size_t: the
// number of bytes of __local memory per work-group.

//===-- Messages --------------------------------------------------------===//

// Raises INVALID_ARGUMENT "<kernel>: <message>" with field kernel.
static int raise_message(lua_State* L, const char* kernel,
                         const char* message) {
  dc_set_error(DC_ERR_INVALID_ARGUMENT, "%s: %s", kernel, message);
  return dclua_raise_with(L, DC_ERR_INVALID_ARGUMENT, "kernel", kernel);
}

int dclua_args_fail(lua_State* L, const char* kernel, const char* format,
                    ...) {
  char message[768];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof(message), format, ap);
  va_end(ap);
  return raise_message(L, kernel, message);
}

// Describes the value at |index| for a "got ..." clause: numbers by value
// (a wrong number is easier to find than "a number"), objects by class.
static const char* describe(lua_State* L, int index, char* buf, size_t size) {
  index = lua_absindex(L, index);
  switch (lua_type(L, index)) {
    case LUA_TNIL:
    case LUA_TNONE:
      return "nil";
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) {
        snprintf(buf, size, "%lld", (long long)lua_tointeger(L, index));
      } else {  // short where that reads back exactly
        double x = (double)lua_tonumber(L, index);
        snprintf(buf, size, "%.14g", x);
        if (strtod(buf, NULL) != x) snprintf(buf, size, "%.17g", x);
      }
      return buf;
    case LUA_TUSERDATA: {
      int type = luaL_getmetafield(L, index, "__name");  // pushes unless nil
      if (type == LUA_TSTRING) snprintf(buf, size, "a %s", lua_tostring(L, -1));
      if (type != LUA_TNIL) lua_pop(L, 1);
      return type == LUA_TSTRING ? buf : "a userdata";
    }
    default:
      snprintf(buf, size, "a %s", luaL_typename(L, index));
      return buf;
  }
}

// The kernel language's name of an element type, for messages.
static const char* c_type(dc_dtype_t dtype) {
  switch (dtype) {
    case DC_DTYPE_I8: return "char";
    case DC_DTYPE_U8: return "uchar";
    case DC_DTYPE_I16: return "short";
    case DC_DTYPE_U16: return "ushort";
    case DC_DTYPE_I32: return "int";
    case DC_DTYPE_U32: return "uint";
    case DC_DTYPE_I64: return "long";
    case DC_DTYPE_U64: return "ulong";
    case DC_DTYPE_F32: return "float";
    case DC_DTYPE_F64: return "double";
  }
  return "void";
}

// Writes "in, out, w" into |buf|.
static const char* arg_names(const dc_kernel_t* kernel, size_t count,
                             char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < count && used < size; ++i) {
    const dc_kernel_arg_info_t* a = dc_kernel_arg_info(kernel, i);
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     a != NULL ? a->name : "?");
    if (n > 0) used += (size_t)n;
  }
  return buf;
}

// Raises "k: expected 3 arguments (in, out, w), got 0".
static int count_fail(lua_State* L, const dc_kernel_t* kernel, size_t want,
                      size_t got) {
  char names[512];
  const char* name = dc_kernel_name(kernel);
  if (want == 0) {
    return dclua_args_fail(L, name, "expected no arguments, got %zu", got);
  }
  return dclua_args_fail(L, name, "expected %zu argument%s (%s), got %zu", want,
                   want == 1 ? "" : "s",
                   arg_names(kernel, want, names, sizeof(names)), got);
}

//===-- Scalars and vectors ---------------------------------------------===//

// The range of an integer dtype, as int64 (u64's upper end does not fit
// and is handled apart).
static void int_range(dc_dtype_t dtype, int64_t* lo, int64_t* hi) {
  switch (dtype) {
    case DC_DTYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; return;
    case DC_DTYPE_U8: *lo = 0; *hi = UINT8_MAX; return;
    case DC_DTYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; return;
    case DC_DTYPE_U16: *lo = 0; *hi = UINT16_MAX; return;
    case DC_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case DC_DTYPE_U32: *lo = 0; *hi = UINT32_MAX; return;
    case DC_DTYPE_U64: *lo = 0; *hi = INT64_MAX; return;
    default: *lo = INT64_MIN; *hi = INT64_MAX; return;
  }
}

// Stores |v| into |dst| as |dtype| (an integer type it fits).
static void store_int(dc_dtype_t dtype, uint64_t v, void* dst) {
  size_t size = dc_dtype_size(dtype);
  uint8_t b1 = (uint8_t)v;
  uint16_t b2 = (uint16_t)v;
  uint32_t b4 = (uint32_t)v;
  memcpy(dst, size == 1 ? (void*)&b1 : size == 2 ? (void*)&b2
                                     : size == 4 ? (void*)&b4 : (void*)&v,
         size);
}

// Converts the number at |index| to integer |dtype| into |dst|. Returns
// NULL, or why the value does not fit.
static const char* put_int(lua_State* L, int index, dc_dtype_t dtype,
                           void* dst) {
  int64_t lo, hi;
  int_range(dtype, &lo, &hi);
  if (!lua_isinteger(L, index)) {
    lua_Number x = lua_tonumber(L, index);
    if (!isfinite(x) || x != floor(x)) return "not an integer";
    // Floats beyond int64 reach u64 only (up to 2^64).
    if (dtype == DC_DTYPE_U64 && x >= 0x1p63 && x < 0x1p64) {
      store_int(dtype, (uint64_t)x, dst);
      return NULL;
    }
    if (x < -0x1p63 || x >= 0x1p63) return "out of range";
  }
  int isnum = 0;
  lua_Integer v = lua_tointegerx(L, index, &isnum);
  if (!isnum || v < lo || v > hi) return "out of range";
  store_int(dtype, (uint64_t)v, dst);
  return NULL;
}

static bool is_float(dc_dtype_t dtype) {
  return dtype == DC_DTYPE_F32 || dtype == DC_DTYPE_F64;
}

// Converts the value at |index| to one element of |dtype| into |dst|.
// Integer types also take booleans (1 and 0), for flags. Returns NULL, or
// why it cannot ("" when the value has the wrong type).
static const char* put_element(lua_State* L, int index, dc_dtype_t dtype,
                               void* dst) {
  if (!is_float(dtype) && lua_type(L, index) == LUA_TBOOLEAN) {
    store_int(dtype, (uint64_t)lua_toboolean(L, index), dst);
    return NULL;
  }
  if (lua_type(L, index) != LUA_TNUMBER) return "";
  if (!is_float(dtype)) return put_int(L, index, dtype, dst);
  double x = (double)lua_tonumber(L, index);
  if (dtype == DC_DTYPE_F64) {
    memcpy(dst, &x, sizeof(x));
    return NULL;
  }
  if (isfinite(x) && fabs(x) > FLT_MAX) return "out of range";
  float f = (float)x;
  memcpy(dst, &f, sizeof(f));
  return NULL;
}

// The conversions l_record.c shares (dclua_internal.h).
const char* dclua_args_describe(lua_State* L, int index, char* buf,
                                size_t size) {
  return describe(L, index, buf, size);
}

const char* dclua_c_type(dc_dtype_t dtype) { return c_type(dtype); }

const char* dclua_put_element(lua_State* L, int index, dc_dtype_t dtype,
                              void* dst) {
  return put_element(L, index, dtype, dst);
}

// The parameter's type without a leading "const ", for messages.
static const char* value_type(const dc_kernel_arg_info_t* info) {
  const char* t = info->type_name != NULL ? info->type_name : "?";
  return strncmp(t, "const ", 6) == 0 ? t + 6 : t;
}

// Raises "k: argument 3 (w) expects int, got ..." for an element that
// put_element() refused with |why| ("" when the type was wrong).
static int element_fail(lua_State* L, const dc_kernel_t* kernel, size_t i,
                        const char* element, const char* expect, int index,
                        const char* why) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, i);
  char got[64];
  return dclua_args_fail(L, dc_kernel_name(kernel),
                   "argument %zu (%s)%s expects %s, got %s%s%s%s", i + 1,
                   info->name, element, expect,
                   describe(L, index, got, sizeof(got)),
                   *why ? " (" : "", why, *why ? ")" : "");
}

// A value parameter: a number (or boolean), or a table of numbers for a
// vector.
static void convert_value(lua_State* L, const dc_kernel_t* kernel, size_t i,
                          int index, dc_arg_t* out) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, i);
  *out = dc_arg_value(info->dtype, info->vector_width, NULL);
  size_t esize = dc_dtype_size(info->dtype);
  if (info->vector_width == 1) {
    const char* why = put_element(L, index, info->dtype, out->value);
    if (why != NULL) element_fail(L, kernel, i, "", value_type(info), index,
                                  why);
    return;
  }
  uint32_t n = info->vector_width;
  if (lua_type(L, index) != LUA_TTABLE || lua_rawlen(L, index) != n) {
    char got[64];
    const char* g = describe(L, index, got, sizeof(got));
    if (lua_type(L, index) == LUA_TTABLE) {
      snprintf(got, sizeof(got), "a table of %zu",
               (size_t)lua_rawlen(L, index));
      g = got;
    }
    dclua_args_fail(L, dc_kernel_name(kernel),
              "argument %zu (%s) expects %s (a table of %u numbers), got %s",
              i + 1, info->name, value_type(info), n, g);
  }
  for (uint32_t e = 0; e < n; ++e) {
    lua_rawgeti(L, index, (lua_Integer)e + 1);
    const char* why = put_element(L, -1, info->dtype, out->value + e * esize);
    if (why != NULL) {
      char element[32];
      snprintf(element, sizeof(element), " element %u", e + 1);
      element_fail(L, kernel, i, element, c_type(info->dtype), -1, why);
    }
    lua_pop(L, 1);
  }
}

//===-- Buffers and local memory ----------------------------------------===//

static void convert_buffer(lua_State* L, const dc_kernel_t* kernel, size_t i,
                           int index, dc_arg_t* out) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, i);
  const char* kname = dc_kernel_name(kernel);
  dc_buffer_t* buffer = dclua_test_buffer(L, index);
  if (buffer == NULL) {
    dclua_box_t* box = dclua_box_test(L, index, DCLUA_BUFFER);
    if (box != NULL) {  // a dc.buffer, but closed
      dclua_args_fail(L, kname, "argument %zu (%s) is a closed dc.buffer", i + 1,
                info->name);
    }
    char got[64];
    dclua_args_fail(L, kname, "argument %zu (%s) expects a dc.buffer, got %s",
              i + 1, info->name, describe(L, index, got, sizeof(got)));
  }
  // The core checks this too; checking here gives the script's numbering.
  dc_dtype_t have = dc_buffer_dtype(buffer);
  if (info->dtype != 0 && have != info->dtype) {
    dclua_args_fail(L, kname,
              "argument %zu (%s) expects a dc.buffer of %s, got a dc.buffer "
              "of %s",
              i + 1, info->name, dc_dtype_name(info->dtype),
              dc_dtype_name(have));
  }
  *out = dc_arg_buffer(buffer);
}

static void convert_local(lua_State* L, const dc_kernel_t* kernel, size_t i,
                          int index, dc_arg_t* out) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, i);
  const size_t* bytes = luaL_testudata(L, index, DCLUA_LOCAL);
  if (bytes != NULL) {
    *out = dc_arg_local(*bytes);
    return;
  }
  int isnum = 0;
  lua_Integer n = lua_type(L, index) == LUA_TNUMBER
                      ? lua_tointegerx(L, index, &isnum) : 0;
  if (!isnum || n <= 0) {
    char got[64];
    dclua_args_fail(L, dc_kernel_name(kernel),
              "argument %zu (%s) is __local: expects dc.localmem(bytes) or a "
              "positive byte count, got %s",
              i + 1, info->name, describe(L, index, got, sizeof(got)));
  }
  *out = dc_arg_local((size_t)n);
}

// A struct or union: a table of members or a string of its bytes. One
// larger than the inline value goes to |spill|, the caller's storage.
static void convert_record(lua_State* L, const dc_kernel_t* kernel, size_t i,
                           int index, dc_arg_t* out, unsigned char* spill) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, i);
  *out = dc_arg_bytes(NULL, info->size);
  bool fits = info->size <= sizeof(out->value);
  dclua_record_from_value(L, kernel, i, index, fits ? out->value : spill);
  if (!fits) out->bytes = spill;
}

// Converts the value at |index| into argument |i| of |kernel|; |spill|
// holds a record too large for the argument's inline value.
static void convert_arg(lua_State* L, const dc_kernel_t* kernel, size_t i,
                        int index, dc_arg_t* out, unsigned char* spill) {
  switch (dc_kernel_arg_info(kernel, i)->kind) {
    case DC_ARG_BUFFER:
      convert_buffer(L, kernel, i, index, out);
      return;
    case DC_ARG_LOCAL:
      convert_local(L, kernel, i, index, out);
      return;
    case DC_ARG_SCALAR:
      convert_value(L, kernel, i, index, out);
      return;
    case DC_ARG_RECORD:
      convert_record(L, kernel, i, index, out, spill);
      return;
  }
}

//===-- Argument lists --------------------------------------------------===//

// The bytes arguments 0..|end|-1 need outside their dc_arg_t: records
// larger than its inline value, each rounded up to 16.
static size_t spill_bytes(const dc_kernel_t* kernel, size_t end) {
  size_t bytes = 0;
  for (size_t i = 0; i < end; ++i) {
    const dc_kernel_arg_info_t* a = dc_kernel_arg_info(kernel, i);
    if (a->kind == DC_ARG_RECORD && a->size > sizeof(((dc_arg_t*)0)->value)) {
      bytes += (a->size + 15) / 16 * 16;
    }
  }
  return bytes;
}

// Where argument |i| of |out| spills to (meaningful for large records).
static unsigned char* spill_of(const dc_kernel_t* kernel, size_t i,
                               const dclua_args_t* out) {
  return out->spill != NULL ? out->spill + spill_bytes(kernel, i) : NULL;
}

// Points |out| at storage for |count| arguments: its own array up to 16,
// past that a userdata pushed on the stack, which also holds the bytes of
// records too large for a dc_arg_t (returns whether it pushed).
static bool args_storage(lua_State* L, const dc_kernel_t* kernel,
                         size_t count, dclua_args_t* out) {
  out->count = count;
  out->args = out->inline_args;
  out->spill = NULL;
  bool fits = count <= sizeof(out->inline_args) / sizeof(out->inline_args[0]);
  size_t spill = spill_bytes(kernel, count);
  if (fits && spill == 0) return false;
  size_t head = fits ? 0 : count * sizeof(dc_arg_t);
  unsigned char* block = lua_newuserdatauv(L, head + spill, 0);
  if (!fits) out->args = (dc_arg_t*)(void*)block;
  if (spill > 0) out->spill = block + head;
  return true;
}

static size_t checked_arg_count(lua_State* L, dc_kernel_t* kernel) {
  dc_kernel_info_t info;
  DCLUA_CHECK(L, dc_kernel_info(kernel, &info));
  return info.arg_count;
}

void dclua_arg_from_value(lua_State* L, dc_kernel_t* kernel, size_t arg,
                          int index, dc_arg_t* out) {
  size_t count = checked_arg_count(L, kernel);
  if (arg >= count) {  // the caller's check, repeated: a bad index is a crash
    dclua_args_fail(L, dc_kernel_name(kernel), "no argument %zu (it has %zu)",
              arg + 1, count);
  }
  index = lua_absindex(L, index);
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(kernel, arg);
  unsigned char* spill = NULL;
  if (info->kind == DC_ARG_RECORD && info->size > sizeof(out->value)) {
    spill = lua_newuserdatauv(L, info->size, 0);
  }
  convert_arg(L, kernel, arg, index, out, spill);
}

void dclua_args_from_stack(lua_State* L, dc_kernel_t* kernel, int first,
                           int last, dclua_args_t* out) {
  first = lua_absindex(L, first);
  if (last < 0 && last > LUA_REGISTRYINDEX) last = lua_absindex(L, last);
  if (last < first) last = first - 1;
  size_t want = checked_arg_count(L, kernel);
  size_t got = (size_t)(last - first + 1);
  if (got != want) count_fail(L, kernel, want, got);
  args_storage(L, kernel, want, out);
  for (size_t i = 0; i < want; ++i) {
    convert_arg(L, kernel, i, first + (int)i, &out->args[i],
                spill_of(kernel, i, out));
  }
}

// Binds the named field at the top of the stack (key below it) to its
// argument; marks it in |given|.
static void bind_named(lua_State* L, dc_kernel_t* kernel, int positional,
                       bool* given, dclua_args_t* out) {
  const char* kname = dc_kernel_name(kernel);
  const char* key = lua_tostring(L, -2);
  size_t i = 0;
  if (dc_kernel_find_arg(kernel, key, &i) != DC_OK) {
    char names[512];
    size_t count = checked_arg_count(L, kernel);
    dclua_args_fail(L, kname, "no argument named '%s' (arguments: %s)", key,
              arg_names(kernel, count, names, sizeof(names)));
  }
  if (given[i] || (int)i < positional) {
    dclua_args_fail(L, kname, "argument %zu (%s) is given twice (by position and "
              "by name)", i + 1, key);
  }
  convert_arg(L, kernel, i, -1, &out->args[i], spill_of(kernel, i, out));
  given[i] = true;
}

// Checks the keys of the argument table at |index|: positions 1..#t and
// names. Returns #t.
static int check_arg_keys(lua_State* L, dc_kernel_t* kernel, int index,
                          size_t want) {
  int positional = (int)lua_rawlen(L, index);
  if ((size_t)positional > want) count_fail(L, kernel, want, positional);
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    bool ok = lua_type(L, -1) == LUA_TSTRING ||
              (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 &&
               lua_tointeger(L, -1) <= positional);
    if (!ok) {
      char got[64];
      dclua_args_fail(L, dc_kernel_name(kernel),
                "the argument table has a key %s that is neither a position "
                "1..%d nor an argument name",
                describe(L, -1, got, sizeof(got)), positional);
    }
  }
  return positional;
}

// Raises for the first argument that neither a position nor a name gave.
static void check_all_given(lua_State* L, dc_kernel_t* kernel, size_t want,
                            int positional, const bool* given) {
  bool named = false;
  for (size_t i = 0; i < want; ++i) named |= given[i];
  for (size_t i = (size_t)positional; i < want; ++i) {
    if (given[i]) continue;
    // Positions only: say how many were given, as a call does.
    if (!named) count_fail(L, kernel, want, (size_t)positional);
    dclua_args_fail(L, dc_kernel_name(kernel), "argument %zu (%s) is missing",
              i + 1, dc_kernel_arg_info(kernel, i)->name);
  }
}

void dclua_args_from_table(lua_State* L, dc_kernel_t* kernel, int index,
                           dclua_args_t* out) {
  index = lua_absindex(L, index);
  size_t want = checked_arg_count(L, kernel);
  bool given[DC_KERNEL_MAX_ARGS] = {false};  // by name
  if (want > sizeof(given)) {
    dclua_args_fail(L, dc_kernel_name(kernel), "too many arguments (%zu)", want);
  }
  if (lua_type(L, index) != LUA_TTABLE) {
    char got[64];
    dclua_args_fail(L, dc_kernel_name(kernel),
              "expected a table of arguments, got %s",
              describe(L, index, got, sizeof(got)));
  }
  int positional = check_arg_keys(L, kernel, index, want);
  args_storage(L, kernel, want, out);
  for (int p = 1; p <= positional; ++p) {
    lua_rawgeti(L, index, p);
    convert_arg(L, kernel, (size_t)p - 1, -1, &out->args[p - 1],
                spill_of(kernel, (size_t)p - 1, out));
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      bind_named(L, kernel, positional, given, out);
    }
    lua_pop(L, 1);
  }
  check_all_given(L, kernel, want, positional, given);
}

//===-- Launch shapes ---------------------------------------------------===//

// Reads the count at the top of the stack for launch.|field|[|d|] (d is 0
// for a plain count). Counts must be positive, offsets non-negative.
static size_t read_count(lua_State* L, const char* kname, const char* field,
                         int d, lua_Integer min) {
  int isnum = 0;
  lua_Integer n = lua_type(L, -1) == LUA_TNUMBER
                      ? lua_tointegerx(L, -1, &isnum) : 0;
  if (!isnum || n < min) {
    char got[64], where[32] = "";
    if (d > 0) snprintf(where, sizeof(where), "[%d]", d);
    dclua_args_fail(L, kname, "launch.%s%s must be a %s integer, got %s", field,
              where, min > 0 ? "positive" : "non-negative",
              describe(L, -1, got, sizeof(got)));
  }
  return (size_t)n;
}

// Reads launch.|field| (a count or a table of 1 to 3) from the launch
// table at |index| into |out|. Returns the dimensions, 0 when absent.
static uint32_t read_shape(lua_State* L, int index, const char* kname,
                           const char* field, lua_Integer min, size_t* out) {
  int type = lua_getfield(L, index, field);
  uint32_t dims = 0;
  if (type == LUA_TNIL) {
    dims = 0;
  } else if (type == LUA_TNUMBER) {
    out[0] = read_count(L, kname, field, 0, min);
    dims = 1;
  } else if (type == LUA_TTABLE) {
    size_t n = lua_rawlen(L, -1);
    if (n < 1 || n > 3) {
      dclua_args_fail(L, kname, "launch.%s has %zu dimensions (1 to 3 allowed)",
                field, n);
    }
    for (size_t d = 0; d < n; ++d) {
      lua_rawgeti(L, -1, (lua_Integer)d + 1);
      out[d] = read_count(L, kname, field, (int)d + 1, min);
      lua_pop(L, 1);
    }
    dims = (uint32_t)n;
  } else {
    char got[64];
    dclua_args_fail(L, kname, "launch.%s must be a count or a table of 1 to 3 "
              "counts, got %s", field, describe(L, -1, got, sizeof(got)));
  }
  lua_pop(L, 1);
  return dims;
}

// Refuses fields other than grid, group and offset (a typo would
// otherwise be silently ignored).
static void check_launch_keys(lua_State* L, int index, const char* kname) {
  static const char* const fields[] = {"grid", "group", "offset", NULL};
  if (!dclua_push_unknown_key(L, index, fields)) return;
  const char* key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                    : NULL;
  char got[64];
  const char* what = key ? key : describe(L, -1, got, sizeof(got));
  dclua_args_fail(L, kname, "launch table: unknown field %s%s%s (expected %s)",
            key ? "'" : "", what, key ? "'" : "",
            dclua_push_names(L, fields));
}

// Checks that |what| has the grid's dimensions.
static void check_dims(lua_State* L, const char* kname, const char* what,
                       uint32_t dims, uint32_t grid_dims) {
  if (dims != 0 && dims != grid_dims) {
    dclua_args_fail(L, kname, "launch.%s has %u dimension%s but launch.grid has %u",
              what, dims, dims == 1 ? "" : "s", grid_dims);
  }
}

void dclua_check_dispatch(lua_State* L, int index, dc_kernel_t* kernel,
                          dc_dispatch_t* out) {
  const char* kname = kernel != NULL ? dc_kernel_name(kernel) : "dispatch";
  index = lua_absindex(L, index);
  memset(out, 0, sizeof(*out));
  if (lua_type(L, index) != LUA_TTABLE) {
    char got[64];
    dclua_args_fail(L, kname, "expected a launch table ({ grid = ... }), got %s",
              describe(L, index, got, sizeof(got)));
  }
  check_launch_keys(L, index, kname);
  out->dims = read_shape(L, index, kname, "grid", 1, out->global);
  if (out->dims == 0) dclua_args_fail(L, kname, "launch.grid is missing");
  uint32_t group = read_shape(L, index, kname, "group", 1, out->local);
  check_dims(L, kname, "group", group, out->dims);
  check_dims(L, kname, "offset",
             read_shape(L, index, kname, "offset", 0, out->offset),
             out->dims);
  for (uint32_t d = 0; group != 0 && d < out->dims; ++d) {
    if (out->global[d] % out->local[d] != 0) {
      dclua_args_fail(L, kname, "launch.grid[%u] = %zu is not a multiple of "
                "launch.group[%u] = %zu", d + 1, out->global[d], d + 1,
                out->local[d]);
    }
  }
}

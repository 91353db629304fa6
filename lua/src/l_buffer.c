// l_buffer.c: buffers as Lua objects (dc.buffer).
//
// A dc.buffer is a box owning one reference to a dc_buffer_t. Its user
// value 1 is the dc.buffer a view was made from (nil for a buffer), so a
// view keeps its parent's Lua object alive as long as it lives; the core
// keeps the memory alive on its own.
//
// Lua indexes are 1-based: element i of a script is element i - 1 of the
// core, and every range a method takes is (first, count) with first >= 1.
// A range that does not fit in the buffer raises OUT_OF_RANGE; an element
// value that its dtype cannot hold exactly raises INVALID_ARGUMENT naming
// the element; wrong argument types raise ordinary argument errors.
//
// Conversions. Integer dtypes take Lua integers, or floats with an integral
// value, inside the dtype's range; they read back as Lua integers. u64 maps
// bit for bit onto Lua's 64-bit integers, as string.pack("J") does: values
// from 2^63 read back negative, and negative integers store their two's
// complement (floats in [2^63, 2^64) are taken as the value they name).
// f32 and f64 take any number (f32 rounds to nearest, and raises only when
// a finite value is beyond its range); they read back as floats.
//
// Memory pressure. Lua's collector sees only the small box, not the bytes
// the buffer holds outside Lua's heap, so a loop that drops big buffers
// would let garbage pile up until the device runs out. Each new buffer is
// therefore accounted to the collector in two ways (see pressure_add): an
// incremental step as if Lua itself had allocated the bytes, which paces
// the collector in proportion to buffer traffic; and a full collection
// when the bytes made since the last finished cycle exceed what survived
// it (and the Lua heap), which bounds garbage in generational mode and
// with large Lua heaps as well, at a cost proportional to the allocation.
// When the device is out of memory, creation collects fully and retries
// once, as Lua itself does when its own allocator fails.
//
// Progress. A large transfer (PROGRESS_BYTES or more, or PROGRESS_ELEMENTS
// to or from a table) shows a progress line when lines are on
// (l_progress.h): "buf:read: 64.0/256.0 MiB  1.2 s". It then moves its
// bytes in steps of PROGRESS_STEP_BYTES so the line can count them; a
// table's count advances as its elements are converted, the slow part.
// SPDX-License-Identifier: MIT
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dclua_internal.h"
#include "l_progress.h"

// Elements converted per step when a range moves through a host scratch
// block, so that reading a huge buffer into a table needs little memory.
#define CHUNK_ELEMENTS 8192

// Transfers of at least this many bytes, or to or from a table of at least
// this many elements, show a progress line; a line counts steps of
// PROGRESS_STEP_BYTES.
#define PROGRESS_BYTES ((size_t)64 << 20)
#define PROGRESS_ELEMENTS ((size_t)8 << 20)
#define PROGRESS_STEP_BYTES ((size_t)16 << 20)

// Below this many bytes of new buffers the backstop collection waits:
// small scripts never pay for a full collection.
#define MIN_COLLECT_BYTES ((size_t)64 << 20)

//===-- Memory pressure -------------------------------------------------===//

typedef struct pressure_t {
  size_t live;     // bytes of the root buffers that open boxes own
  size_t since;    // bytes accounted since the last finished cycle
  size_t base;     // |live| when that cycle finished
  size_t pending;  // bytes not yet handed to the collector (< 1 KiB)
} pressure_t;

static const char pressure_key = 'p';  // registry: the pressure_t

static pressure_t* pressure(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &pressure_key);
  pressure_t* p = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return p;
}

// The bytes a box of |buffer| accounts: its size for a buffer, none for a
// view (its root's box, if any, accounts the memory).
static size_t accounted_bytes(const dc_buffer_t* buffer) {
  return dc_buffer_is_view(buffer, NULL) ? 0 : dc_buffer_size_bytes(buffer);
}

static void cycle_finished(pressure_t* p) {
  p->base = p->live;
  p->since = 0;
}

// Accounts |bytes| of new buffer memory to the collector. It may run a
// collection, and so finalizers; the caller's new box is on the stack.
static void pressure_add(lua_State* L, size_t bytes) {
  pressure_t* p = pressure(L);
  if (p == NULL || bytes == 0) return;
  p->live += bytes;
  p->since += bytes;
  p->pending += bytes;
  if (!lua_gc(L, LUA_GCISRUNNING, 0)) return;  // the script stopped it
  if (p->pending >= 1024) {
    size_t kb = p->pending / 1024;
    if (kb > INT_MAX / 2) kb = INT_MAX / 2;
    p->pending -= kb * 1024;
    // Returns 1 when the step finished a cycle (incremental mode only).
    if (lua_gc(L, LUA_GCSTEP, (int)kb) == 1) cycle_finished(p);
  }
  size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024;
  size_t trigger = p->base > heap ? p->base : heap;
  if (trigger < MIN_COLLECT_BYTES) trigger = MIN_COLLECT_BYTES;
  if (p->since > trigger) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    cycle_finished(p);
  }
}

static void pressure_remove(lua_State* L, size_t bytes) {
  pressure_t* p = pressure(L);
  if (p == NULL) return;
  p->live -= bytes < p->live ? bytes : p->live;
}

//===-- Element conversion ----------------------------------------------===//

typedef enum convert_e {
  CONVERT_OK,
  CONVERT_NOT_NUMBER,
  CONVERT_NOT_INTEGER,
  CONVERT_TOO_BIG,  // outside the dtype's range
} convert_t;

static bool is_float_dtype(dc_dtype_t dtype) {
  return dtype == DC_DTYPE_F32 || dtype == DC_DTYPE_F64;
}

// The range of the integer dtypes narrower than 64 bits; false for the
// others, which take any Lua integer.
static bool narrow_range(dc_dtype_t dtype, lua_Integer* lo, lua_Integer* hi) {
  switch (dtype) {
    case DC_DTYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case DC_DTYPE_U8: *lo = 0; *hi = UINT8_MAX; return true;
    case DC_DTYPE_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case DC_DTYPE_U16: *lo = 0; *hi = UINT16_MAX; return true;
    case DC_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case DC_DTYPE_U32: *lo = 0; *hi = UINT32_MAX; return true;
    default: return false;
  }
}

// Stores the low bytes of |bits| as one element of |size| bytes: for a
// value inside the dtype's range that is its two's complement encoding.
static void store_bits(uint64_t bits, size_t size, void* dst) {
  uint8_t b8 = (uint8_t)bits;
  uint16_t b16 = (uint16_t)bits;
  uint32_t b32 = (uint32_t)bits;
  switch (size) {
    case 1: memcpy(dst, &b8, 1); break;
    case 2: memcpy(dst, &b16, 2); break;
    case 4: memcpy(dst, &b32, 4); break;
    default: memcpy(dst, &bits, 8); break;
  }
}

// A float that Lua could not turn into an integer: not integral (NaN
// included), or beyond 64 bits, except the u64 values from 2^63.
static convert_t float_to_integer(lua_Number d, dc_dtype_t dtype, void* dst) {
  if (d != floor(d)) return CONVERT_NOT_INTEGER;
  if (dtype == DC_DTYPE_U64 && d >= 0x1p63 && d < 0x1p64) {
    store_bits((uint64_t)d, 8, dst);
    return CONVERT_OK;
  }
  return CONVERT_TOO_BIG;
}

static convert_t to_integer_element(lua_State* L, int index, dc_dtype_t dtype,
                                    void* dst) {
  int exact = 0;
  lua_Integer v = lua_tointegerx(L, index, &exact);
  if (!exact) return float_to_integer(lua_tonumber(L, index), dtype, dst);
  lua_Integer lo = 0, hi = 0;
  if (narrow_range(dtype, &lo, &hi) && (v < lo || v > hi)) {
    return CONVERT_TOO_BIG;
  }
  store_bits((uint64_t)v, dc_dtype_size(dtype), dst);
  return CONVERT_OK;
}

static convert_t to_float_element(lua_State* L, int index, dc_dtype_t dtype,
                                  void* dst) {
  lua_Number d = lua_tonumber(L, index);
  if (dtype == DC_DTYPE_F64) {
    double x = (double)d;
    memcpy(dst, &x, sizeof(x));
    return CONVERT_OK;
  }
  // Checked first: converting an out-of-range double to float is undefined.
  if (isfinite(d) && fabs(d) > FLT_MAX) return CONVERT_TOO_BIG;
  float f = (float)d;
  memcpy(dst, &f, sizeof(f));
  return CONVERT_OK;
}

// Converts the Lua value at |index| into one element of |dtype| at |dst|.
static convert_t to_element(lua_State* L, int index, dc_dtype_t dtype,
                            void* dst) {
  if (lua_type(L, index) != LUA_TNUMBER) return CONVERT_NOT_NUMBER;
  return is_float_dtype(dtype) ? to_float_element(L, index, dtype, dst)
                               : to_integer_element(L, index, dtype, dst);
}

// Raises INVALID_ARGUMENT for the value at |index| that failed |result|;
// |where| says which value ("buf:write: element 3").
static int conversion_error(lua_State* L, int index, dc_dtype_t dtype,
                            convert_t result, const char* where) {
  const char* name = dc_dtype_name(dtype);
  if (result == CONVERT_NOT_NUMBER) {
    return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                        "%s: expected a number for %s, got %s", where, name,
                        luaL_typename(L, index));
  }
  // Lua prints a NaN as "-nan" or "nan" depending on its sign bit.
  const char* value = isnan(lua_tonumber(L, index))
                          ? "nan"
                          : luaL_tolstring(L, index, NULL);
  if (result == CONVERT_NOT_INTEGER) {
    return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                        "%s: %s is not an integer, as %s needs", where, value,
                        name);
  }
  return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "%s: %s does not fit in %s",
                      where, value, name);
}

// Converts the value at |index| as to_element does, raising on failure.
static void check_element(lua_State* L, int index, dc_dtype_t dtype, void* dst,
                          const char* where) {
  convert_t result = to_element(L, index, dtype, dst);
  if (result != CONVERT_OK) conversion_error(L, index, dtype, result, where);
}

// Pushes the element of |dtype| at |src|.
static void push_element(lua_State* L, dc_dtype_t dtype, const void* src) {
#define PUSH_AS(type, push)        \
  do {                             \
    type v_;                       \
    memcpy(&v_, src, sizeof(v_));  \
    push(L, v_);                   \
  } while (0)
  switch (dtype) {
    case DC_DTYPE_I8: PUSH_AS(int8_t, lua_pushinteger); break;
    case DC_DTYPE_U8: PUSH_AS(uint8_t, lua_pushinteger); break;
    case DC_DTYPE_I16: PUSH_AS(int16_t, lua_pushinteger); break;
    case DC_DTYPE_U16: PUSH_AS(uint16_t, lua_pushinteger); break;
    case DC_DTYPE_I32: PUSH_AS(int32_t, lua_pushinteger); break;
    case DC_DTYPE_U32: PUSH_AS(uint32_t, lua_pushinteger); break;
    case DC_DTYPE_I64: PUSH_AS(int64_t, lua_pushinteger); break;
    case DC_DTYPE_U64: PUSH_AS(int64_t, lua_pushinteger); break;  // bits
    case DC_DTYPE_F32: PUSH_AS(float, lua_pushnumber); break;
    case DC_DTYPE_F64: PUSH_AS(double, lua_pushnumber); break;
    default: lua_pushnil(L); break;
  }
#undef PUSH_AS
}

// Converts the |count| numbers of the table at |index| into a block of
// elements of |dtype|, left on the stack as a userdata (so an error while
// converting leaks nothing), counting the bytes converted on |line| (may
// be NULL). Raises naming the first bad element.
static void* table_to_elements(lua_State* L, int index, dc_dtype_t dtype,
                               size_t count, const char* fn,
                               dclua_progress_t* line) {
  size_t esize = dc_dtype_size(dtype);
  unsigned char* block = lua_newuserdatauv(L, count * esize, 0);
  for (size_t i = 0; i < count; ++i) {
    if (i % CHUNK_ELEMENTS == 0) dclua_progress_set(line, i * esize);
    lua_rawgeti(L, index, (lua_Integer)i + 1);
    convert_t result = to_element(L, -1, dtype, block + i * esize);
    if (result != CONVERT_OK) {
      char where[96];
      snprintf(where, sizeof(where), "%s: element %zu", fn, i + 1);
      conversion_error(L, -1, dtype, result, where);
    }
    lua_pop(L, 1);
  }
  return block;
}

//===-- Arguments -------------------------------------------------------===//

static dc_dtype_t check_dtype(lua_State* L, int arg) {
  const char* name = luaL_checkstring(L, arg);
  dc_dtype_t dtype;
  if (!dc_dtype_parse(name, &dtype)) {
    luaL_argerror(L, arg, lua_pushfstring(L, "unknown dtype '%s' (i8, u8, "
                                          "i16, u16, i32, u32, i64, u64, "
                                          "f32, f64)", name));
  }
  return dtype;
}

// An optional 1-based |first| at |arg|, as a 0-based offset.
static size_t opt_first(lua_State* L, int arg) {
  lua_Integer first = luaL_optinteger(L, arg, 1);
  luaL_argcheck(L, first >= 1, arg, "first must be at least 1 (indexes "
                "are 1-based)");
  return (size_t)(first - 1);
}

// An optional count at |arg|; |rest| when absent.
static size_t opt_count(lua_State* L, int arg, size_t rest) {
  if (lua_isnoneornil(L, arg)) return rest;
  lua_Integer count = luaL_checkinteger(L, arg);
  luaL_argcheck(L, count >= 0, arg, "count must not be negative");
  return (size_t)count;
}

// Raises OUT_OF_RANGE unless elements |offset|..|offset|+|count|-1
// (0-based) lie in |buffer|; the message speaks 1-based.
static void check_window(lua_State* L, const char* fn, const char* which,
                         const dc_buffer_t* buffer, size_t offset,
                         size_t count) {
  size_t length = dc_buffer_length(buffer);
  if (offset <= length && count <= length - offset) return;
  if (count == 0) {
    dclua_raisef(L, DC_ERR_OUT_OF_RANGE,
                 "%s: first %zu is past the end of the %s (%zu elements)", fn,
                 offset + 1, which, length);
  }
  dclua_raisef(L, DC_ERR_OUT_OF_RANGE,
               "%s: elements %zu..%zu are outside the %s (1..%zu)", fn,
               offset + 1, offset + count, which, length);
}

// The rest of |buffer| from |offset| (0 when past the end; the window
// check then reports it).
static size_t rest_of(const dc_buffer_t* buffer, size_t offset) {
  size_t length = dc_buffer_length(buffer);
  return offset < length ? length - offset : 0;
}

//===-- Transfers and their progress line -------------------------------===//

// The progress line of one transfer: |line| is NULL when there is none,
// and |slot| the stack index of the to-be-closed dc.progress that owns it
// (0 when nothing was pushed).
typedef struct transfer_t {
  dclua_progress_t* line;
  int slot;
} transfer_t;

// Begins the progress line of a transfer |fn| of |count| elements of
// |esize| bytes (converted to or from a table when |table|), if it is
// large enough and lines are on: pushes its to-be-closed dc.progress.
// [-0, +(0|1), m]
static transfer_t transfer_begin(lua_State* L, const char* fn, size_t count,
                                 size_t esize, bool table) {
  transfer_t t = {NULL, 0};
  bool large = count * esize >= PROGRESS_BYTES ||
               (table && count >= PROGRESS_ELEMENTS);
  if (!large || !dclua_progress_wanted(L, DCLUA_PROGRESS_DEFAULT)) return t;
  dclua_progress_params_t params = {.label = fn,
                                    .kind = DCLUA_PROGRESS_BYTES,
                                    .total = count * esize,
                                    .request = DCLUA_PROGRESS_DEFAULT};
  t.line = dclua_progress_push(L, &params);
  lua_toclose(L, -1);
  t.slot = lua_gettop(L);
  return t;
}

// Ends the line of |t| (its final count stays on stderr).
// [-0, +0, -]
static void transfer_end(lua_State* L, const transfer_t* t) {
  if (t->slot != 0) lua_closeslot(L, t->slot);
}

// A move between host memory and a buffer, or between two buffers: a read
// has |src| and |host|, a write |dst| and |host|, a copy |dst| and |src|.
typedef struct move_t {
  dc_buffer_t* dst;
  size_t dst_offset;
  const dc_buffer_t* src;
  size_t src_offset;
  unsigned char* host;
} move_t;

// Moves elements |done|..|done|+|n|-1 (of |esize| bytes) of |m|.
static dc_status_t move_part(const move_t* m, size_t done, size_t n,
                             size_t esize) {
  if (m->dst == NULL) {
    return dc_buffer_read(m->src, m->src_offset + done, m->host + done * esize,
                          n);
  }
  if (m->src == NULL) {
    return dc_buffer_write(m->dst, m->dst_offset + done,
                           m->host + done * esize, n);
  }
  return dc_buffer_copy(m->dst, m->dst_offset + done, m->src,
                        m->src_offset + done, n);
}

// Moves the |count| elements of |m|: at once without a progress line,
// else in steps that |t|'s line counts.
static dc_status_t move(const move_t* m, size_t count, size_t esize,
                        const transfer_t* t) {
  size_t step = t->line != NULL ? PROGRESS_STEP_BYTES / esize : count;
  for (size_t done = 0; done < count; done += step) {
    size_t n = count - done < step ? count - done : step;
    dc_status_t status = move_part(m, done, n, esize);
    if (status != DC_OK) return status;
    dclua_progress_set(t->line, (done + n) * esize);
  }
  return DC_OK;
}

//===-- Creation --------------------------------------------------------===//

// The device that the field 'device' at the top of the stack names; raises
// an argument error of the options |arg| for anything else.
static dc_device_t* opt_device(lua_State* L, int arg) {
  if (lua_type(L, -1) != LUA_TSTRING &&
      dclua_box_test(L, -1, DCLUA_DEVICE) == NULL) {
    luaL_argerror(L, arg, "field 'device' must be a dc.device or a device "
                  "name");
  }
  return dclua_check_device(L, lua_absindex(L, -1), false);
}

// Reads the options table at |arg| into |params| and |*device| (the field
// `device` is taken only where |device| is not NULL).
static void check_opts(lua_State* L, int arg, dc_buffer_params_t* params,
                       dc_device_t** device) {
  if (lua_isnoneornil(L, arg)) return;
  luaL_checktype(L, arg, LUA_TTABLE);
  lua_pushnil(L);
  while (lua_next(L, arg) != 0) {
    const char* key =
        lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
    if (strcmp(key, "storage") == 0) {
      if (lua_type(L, -1) != LUA_TSTRING ||
          !dc_storage_mode_parse(lua_tostring(L, -1), &params->storage)) {
        luaL_argerror(L, arg, "field 'storage' must be \"private\", "
                      "\"shared\" or \"managed\"");
      }
    } else if (strcmp(key, "label") == 0) {
      if (lua_type(L, -1) != LUA_TSTRING) {
        luaL_argerror(L, arg, "field 'label' must be a string");
      }
      params->label = lua_tostring(L, -1);  // the table keeps it alive
    } else if (device != NULL && strcmp(key, "device") == 0) {
      *device = opt_device(L, arg);
    } else {
      luaL_argerror(L, arg, lua_pushfstring(L, "unknown option '%s' (%s)",
                                            luaL_tolstring(L, -2, NULL),
                                            device != NULL
                                                ? "storage, label, device"
                                                : "storage, label"));
    }
    lua_pop(L, 1);
  }
}

// The length a buffer made from the value at |arg| gets.
static size_t init_length(lua_State* L, int arg, dc_dtype_t dtype) {
  size_t esize = dc_dtype_size(dtype);
  size_t length = 0;
  switch (lua_type(L, arg)) {
    case LUA_TNUMBER: {
      lua_Integer n = luaL_checkinteger(L, arg);
      luaL_argcheck(L, n >= 1, arg, "length must be at least 1");
      return (size_t)n;
    }
    case LUA_TTABLE:
      length = lua_rawlen(L, arg);
      luaL_argcheck(L, length >= 1, arg, "the table is empty");
      return length;
    case LUA_TSTRING:
      length = lua_rawlen(L, arg);
      if (length == 0 || length % esize != 0) {
        luaL_argerror(L, arg, lua_pushfstring(L, "a string of %I bytes is "
                                              "not a whole number of %s "
                                              "elements (%I bytes each)",
                                              (lua_Integer)length,
                                              dc_dtype_name(dtype),
                                              (lua_Integer)esize));
      }
      return length / esize;
    default:
      luaL_typeerror(L, arg, "length, table or string");
      return 0;
  }
}

typedef struct create_t {
  dc_device_t* device;
  const dc_buffer_params_t* params;
  dc_buffer_t** out;  // the new box's pointer
} create_t;

// dc_buffer_create can wait for queued work to free memory, and that work
// may need the Lua thread (a host function), so it runs under dclua_wait.
static dc_status_t create_call(void* user_data) {
  const create_t* c = user_data;
  return dc_buffer_create(c->device, c->params, c->out);
}

// Whether a failed creation may be short of memory that garbage buffers
// hold: a real OUT_OF_MEMORY, not one that a fault rule injected (an
// injected fault stays one failed call, as dc/fault.h promises).
static bool worth_collecting(dc_status_t status) {
  static const char injected[] = "injected fault";
  return status == DC_ERR_OUT_OF_MEMORY &&
         strncmp(dc_last_error(), injected, sizeof(injected) - 1) != 0;
}

dc_buffer_t* dclua_push_new_buffer(lua_State* L, dc_device_t* device,
                                   const dc_buffer_params_t* params) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_BUFFER, 1);
  create_t call = {device, params, (dc_buffer_t**)&box->p};
  dc_status_t status = dclua_wait(L, create_call, &call);
  if (worth_collecting(status)) {
    char message[512];  // finalizers may replace the thread's last error
    snprintf(message, sizeof(message), "%s", dc_last_error());
    dc_context_t* context = dclua_context(L);
    size_t before = dc_context_live_buffer_count(context);
    lua_gc(L, LUA_GCCOLLECT, 0);
    if (dc_context_live_buffer_count(context) < before) {
      status = dclua_wait(L, create_call, &call);
    } else {
      dc_set_error(status, "%s", message);
    }
  }
  DCLUA_CHECK(L, status);
  pressure_add(L, accounted_bytes(box->p));
  return box->p;
}

// Fills the new buffer from the value at |init|: zeros for a length, the
// converted elements at |elements| for a table, the bytes of a string
// (counted on |t|'s line).
static void fill_new(lua_State* L, dc_buffer_t* buffer, int init,
                     const void* elements, const transfer_t* t) {
  size_t length = dc_buffer_length(buffer);
  if (lua_type(L, init) == LUA_TNUMBER) {
    uint64_t zero = 0;  // all-zero bits are 0 in every dtype
    DCLUA_CHECK(L, dc_buffer_fill(buffer, 0, length, &zero));
  } else if (lua_type(L, init) == LUA_TTABLE) {
    DCLUA_CHECK(L, dc_buffer_write(buffer, 0, elements, length));
  } else {
    move_t m = {.dst = buffer, .host = (unsigned char*)lua_tostring(L, init)};
    DCLUA_CHECK(L, move(&m, length, dc_dtype_size(dc_buffer_dtype(buffer)),
                        t));
  }
}

// Makes a buffer from the arguments dtype, init, opts at |arg|.. on
// |device| (NULL: the default one, or opts.device).
static int new_buffer(lua_State* L, const char* fn, dc_device_t* device,
                      int arg) {
  dc_buffer_params_t params = {.dtype = check_dtype(L, arg)};
  dc_device_t* from_opts = NULL;
  check_opts(L, arg + 2, &params, device == NULL ? &from_opts : NULL);
  if (device == NULL) {
    device = from_opts;
    if (device == NULL) {
      DCLUA_CHECK(L, dc_context_default_device(dclua_context(L), &device));
    }
  }
  params.length = init_length(L, arg + 1, params.dtype);
  int init = lua_type(L, arg + 1);
  transfer_t t = {NULL, 0};
  if (init != LUA_TNUMBER) {  // a length makes zeros: nothing to transfer
    t = transfer_begin(L, fn, params.length, dc_dtype_size(params.dtype),
                       init == LUA_TTABLE);
  }
  const void* elements = NULL;
  if (init == LUA_TTABLE) {
    elements = table_to_elements(L, arg + 1, params.dtype, params.length, fn,
                                 t.line);
  }
  fill_new(L, dclua_push_new_buffer(L, device, &params), arg + 1, elements,
           &t);
  transfer_end(L, &t);
  return 1;
}

// [-(2|3), +1, e]  dev:buffer(dtype, init [, opts]) -> buffer
static int device_buffer(lua_State* L) {
  return new_buffer(L, "dev:buffer", dclua_check_device(L, 1, false), 2);
}

// [-(2|3), +1, e]  dc.buffer(dtype, init [, opts]) -> buffer, on
// opts.device or the default device
static int dclua_buffer(lua_State* L) {
  return new_buffer(L, "dc.buffer", NULL, 1);
}

//===-- Shared functions ------------------------------------------------===//

dc_buffer_t* dclua_check_buffer(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_BUFFER);
}

// NULL for a closed dc.buffer too: callers that take several kinds of
// value look for a closed box themselves to say so.
dc_buffer_t* dclua_test_buffer(lua_State* L, int index) {
  return dclua_box_object(L, index, DCLUA_BUFFER);
}

void dclua_push_buffer(lua_State* L, dc_buffer_t* buffer) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_BUFFER, 1);
  box->p = buffer;
  pressure_add(L, accounted_bytes(buffer));
}

//===-- Methods ---------------------------------------------------------===//

// [-(1..3), +1, e]  buf:read([first [, count]]) -> { numbers }
static int buffer_read(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  size_t offset = opt_first(L, 2);
  size_t count = opt_count(L, 3, rest_of(buffer, offset));
  check_window(L, "buf:read", "buffer", buffer, offset, count);
  dc_dtype_t dtype = dc_buffer_dtype(buffer);
  size_t esize = dc_dtype_size(dtype);
  transfer_t t = transfer_begin(L, "buf:read", count, esize, true);
  size_t chunk = count < CHUNK_ELEMENTS ? count : CHUNK_ELEMENTS;
  unsigned char* scratch = lua_newuserdatauv(L, chunk * esize, 0);
  lua_createtable(L, count < INT_MAX ? (int)count : 0, 0);
  for (size_t done = 0; done < count; done += chunk) {
    size_t n = count - done < chunk ? count - done : chunk;
    DCLUA_CHECK(L, dc_buffer_read(buffer, offset + done, scratch, n));
    for (size_t i = 0; i < n; ++i) {
      push_element(L, dtype, scratch + i * esize);
      lua_rawseti(L, -2, (lua_Integer)(done + i + 1));
    }
    dclua_progress_set(t.line, (done + n) * esize);
  }
  transfer_end(L, &t);
  return 1;
}

// [-(1..3), +1, e]  buf:bytes([first [, count]]) -> binary string
static int buffer_bytes(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  size_t offset = opt_first(L, 2);
  size_t count = opt_count(L, 3, rest_of(buffer, offset));
  check_window(L, "buf:bytes", "buffer", buffer, offset, count);
  size_t esize = dc_dtype_size(dc_buffer_dtype(buffer));
  transfer_t t = transfer_begin(L, "buf:bytes", count, esize, false);
  luaL_Buffer b;
  char* bytes = luaL_buffinitsize(L, &b, count * esize);
  move_t m = {.src = buffer, .src_offset = offset,
              .host = (unsigned char*)bytes};
  DCLUA_CHECK(L, move(&m, count, esize, &t));
  // The Lua buffer's box is a to-be-closed slot above the line's: it
  // closes first, when the result is pushed.
  luaL_pushresultsize(&b, count * esize);
  transfer_end(L, &t);
  return 1;
}

// Writes the string at |arg| as raw elements from |offset|.
static void write_string(lua_State* L, dc_buffer_t* buffer, int arg,
                         size_t offset) {
  size_t size = 0;
  const char* bytes = lua_tolstring(L, arg, &size);
  dc_dtype_t dtype = dc_buffer_dtype(buffer);
  size_t esize = dc_dtype_size(dtype);
  if (size % esize != 0) {
    luaL_argerror(L, arg, lua_pushfstring(L, "a string of %I bytes is not a "
                                          "whole number of %s elements (%I "
                                          "bytes each)", (lua_Integer)size,
                                          dc_dtype_name(dtype),
                                          (lua_Integer)esize));
  }
  check_window(L, "buf:write", "buffer", buffer, offset, size / esize);
  transfer_t t = transfer_begin(L, "buf:write", size / esize, esize, false);
  move_t m = {.dst = buffer, .dst_offset = offset,
              .host = (unsigned char*)bytes};
  DCLUA_CHECK(L, move(&m, size / esize, esize, &t));
  transfer_end(L, &t);
}

// [-(2|3), +1, e]  buf:write(table | string [, first]) -> buf: all the
// elements or none (every value is converted before the copy)
static int buffer_write(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  size_t offset = opt_first(L, 3);
  if (lua_type(L, 2) == LUA_TSTRING) {
    write_string(L, buffer, 2, offset);
  } else {
    luaL_argexpected(L, lua_type(L, 2) == LUA_TTABLE, 2, "table or string");
    size_t count = lua_rawlen(L, 2);
    check_window(L, "buf:write", "buffer", buffer, offset, count);
    if (count > 0) {
      dc_dtype_t dtype = dc_buffer_dtype(buffer);
      transfer_t t = transfer_begin(L, "buf:write", count,
                                    dc_dtype_size(dtype), true);
      const void* elements = table_to_elements(L, 2, dtype, count,
                                               "buf:write", t.line);
      DCLUA_CHECK(L, dc_buffer_write(buffer, offset, elements, count));
      transfer_end(L, &t);
    }
  }
  lua_settop(L, 1);
  return 1;
}

// [-(2..4), +1, e]  buf:fill(value [, first [, count]]) -> buf
static int buffer_fill(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  uint64_t value = 0;  // room for the widest element
  luaL_checkany(L, 2);
  check_element(L, 2, dc_buffer_dtype(buffer), &value, "buf:fill: value");
  size_t offset = opt_first(L, 3);
  size_t count = opt_count(L, 4, rest_of(buffer, offset));
  check_window(L, "buf:fill", "buffer", buffer, offset, count);
  if (count > 0) DCLUA_CHECK(L, dc_buffer_fill(buffer, offset, count, &value));
  lua_settop(L, 1);
  return 1;
}

// [-(2..5), +1, e]  buf:copy_from(src [, dst_first [, src_first
// [, count]]]) -> buf; count defaults to the rest of src
static int buffer_copy_from(lua_State* L) {
  dc_buffer_t* dst = dclua_check_buffer(L, 1);
  dc_buffer_t* src = dclua_check_buffer(L, 2);
  size_t dst_offset = opt_first(L, 3);
  size_t src_offset = opt_first(L, 4);
  size_t count = opt_count(L, 5, rest_of(src, src_offset));
  if (dc_buffer_dtype(dst) != dc_buffer_dtype(src)) {
    dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                 "buf:copy_from: dtypes differ (the buffer is %s, the "
                 "source %s)", dc_dtype_name(dc_buffer_dtype(dst)),
                 dc_dtype_name(dc_buffer_dtype(src)));
  }
  check_window(L, "buf:copy_from", "source", src, src_offset, count);
  check_window(L, "buf:copy_from", "buffer", dst, dst_offset, count);
  size_t esize = dc_dtype_size(dc_buffer_dtype(dst));
  transfer_t t = transfer_begin(L, "buf:copy_from", count, esize, false);
  move_t m = {.dst = dst, .dst_offset = dst_offset, .src = src,
              .src_offset = src_offset};
  DCLUA_CHECK(L, move(&m, count, esize, &t));
  transfer_end(L, &t);
  lua_settop(L, 1);
  return 1;
}

// [-(2|3), +1, e]  buf:view(first [, count]) -> a dc.buffer sharing the
// elements first..first+count-1 (count defaults to the rest)
static int buffer_view(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  luaL_checkinteger(L, 2);
  size_t offset = opt_first(L, 2);
  size_t count = opt_count(L, 3, rest_of(buffer, offset));
  luaL_argcheck(L, count >= 1 || lua_isnoneornil(L, 3), 3,
                "a view needs at least one element");
  // A first past the end leaves no rest: report the element it names.
  check_window(L, "buf:view", "buffer", buffer, offset, count ? count : 1);
  dclua_box_t* box = dclua_box_new(L, DCLUA_BUFFER, 1);
  lua_pushvalue(L, 1);  // the parent lives as long as the view
  lua_setiuservalue(L, -2, 1);
  DCLUA_CHECK(L, dc_buffer_create_view(buffer, offset, count,
                                       (dc_buffer_t**)&box->p));
  return 1;
}

// [-(1|2), +0, -]  buf:close(), and __gc and __close: releases the buffer
// (closing again does nothing)
static int buffer_close(lua_State* L) {
  dc_buffer_t* buffer = dclua_box_take(L, 1, DCLUA_BUFFER);
  if (buffer == NULL) return 0;
  pressure_remove(L, accounted_bytes(buffer));
  dc_buffer_release(buffer);
  lua_pushnil(L);  // a closed view no longer holds its parent
  lua_setiuservalue(L, 1, 1);
  return 0;
}

//===-- Elements, properties and metamethods -----------------------------===//

// The 0-based element that the key at index 2 of buf[key] names; raises
// for a non-integer key or one outside 1..#buf.
static size_t check_index(lua_State* L, const dc_buffer_t* buffer) {
  int exact = 0;
  lua_Integer i = lua_tointegerx(L, 2, &exact);
  if (!exact) {
    dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                 "dc.buffer: index %s is not an integer",
                 luaL_tolstring(L, 2, NULL));
  }
  size_t length = dc_buffer_length(buffer);
  if (i < 1 || (uint64_t)i > length) {
    dclua_raisef(L, DC_ERR_OUT_OF_RANGE,
                 "dc.buffer: index %lld is out of range 1..%zu", (long long)i,
                 length);
  }
  return (size_t)(i - 1);
}

// [-0, +1, e]  buf[i] -> the element i
static int element_get(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  size_t offset = check_index(L, buffer);
  uint64_t value = 0;
  DCLUA_CHECK(L, dc_buffer_read(buffer, offset, &value, 1));
  push_element(L, dc_buffer_dtype(buffer), &value);
  return 1;
}

// [-0, +0, e]  buf[i] = value
static int element_set(lua_State* L) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  size_t offset = check_index(L, buffer);
  uint64_t value = 0;
  char where[64];
  snprintf(where, sizeof(where), "buf[%zu]", offset + 1);
  check_element(L, 3, dc_buffer_dtype(buffer), &value, where);
  DCLUA_CHECK(L, dc_buffer_write(buffer, offset, &value, 1));
  return 0;
}

// Pushes the property |name| of the buffer at 1, or nil if none.
static int push_property(lua_State* L, const char* name) {
  dc_buffer_t* buffer = dclua_check_buffer(L, 1);
  if (strcmp(name, "dtype") == 0) {
    lua_pushstring(L, dc_dtype_name(dc_buffer_dtype(buffer)));
  } else if (strcmp(name, "length") == 0) {
    lua_pushinteger(L, (lua_Integer)dc_buffer_length(buffer));
  } else if (strcmp(name, "size") == 0) {
    lua_pushinteger(L, (lua_Integer)dc_buffer_size_bytes(buffer));
  } else if (strcmp(name, "device") == 0) {
    dclua_push_device(L, dc_buffer_device(buffer));
  } else if (strcmp(name, "label") == 0) {
    const char* label = dc_buffer_label(buffer);
    if (label[0] != '\0') lua_pushstring(L, label);
    else lua_pushnil(L);
  } else if (strcmp(name, "storage") == 0) {
    lua_pushstring(L, dc_storage_mode_name(dc_buffer_storage_mode(buffer)));
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-0, +1, e]  buf[key]: an element for a number, else a method (upvalue
// 1 holds the method table), else a property
static int buffer_index(lua_State* L) {
  int type = lua_type(L, 2);
  if (type == LUA_TNUMBER) return element_get(L);
  if (type != LUA_TSTRING) return 0;
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  return push_property(L, lua_tostring(L, 2));
}

// [-0, +0, e]  buf[i] = value; every other field is read-only
static int buffer_newindex(lua_State* L) {
  if (lua_type(L, 2) == LUA_TNUMBER) return element_set(L);
  return luaL_error(L, "dc.buffer: cannot set '%s' (only elements buf[i] "
                    "can be set)", luaL_tolstring(L, 2, NULL));
}

// [-0, +1, e]  #buf -> the length in elements
static int buffer_len(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)dc_buffer_length(dclua_check_buffer(L, 1)));
  return 1;
}

// [-0, +1, -]  tostring(buf) -> "dc.buffer: f32[1024] on cpu"
static int buffer_tostring(lua_State* L) {
  dc_buffer_t* buffer = dclua_box_for_tostring(L, 1, DCLUA_BUFFER);
  if (buffer == NULL) return 1;  // "dc.buffer (closed)"
  lua_pushfstring(L, "dc.buffer: %s[%I] on %s",
                  dc_dtype_name(dc_buffer_dtype(buffer)),
                  (lua_Integer)dc_buffer_length(buffer),
                  dc_device_name(dc_buffer_device(buffer)));
  return 1;
}

// [-0, +1, e]  dc.live_buffers() -> the number of buffers (views included)
// alive in the module's context, Lua's and the host's
static int dclua_live_buffers(lua_State* L) {
  lua_pushinteger(L,
                  (lua_Integer)dc_context_live_buffer_count(dclua_context(L)));
  return 1;
}

void dclua_open_buffer(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__newindex", buffer_newindex}, {"__len", buffer_len},
      {"__tostring", buffer_tostring}, {"__gc", buffer_close},
      {"__close", buffer_close},       {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"read", buffer_read},   {"bytes", buffer_bytes},
      {"write", buffer_write}, {"fill", buffer_fill},
      {"copy_from", buffer_copy_from}, {"view", buffer_view},
      {"close", buffer_close}, {NULL, NULL}};
  static const luaL_Reg device_methods[] = {{"buffer", device_buffer},
                                            {NULL, NULL}};
  static const luaL_Reg funcs[] = {{"buffer", dclua_buffer},
                                   {"live_buffers", dclua_live_buffers},
                                   {NULL, NULL}};
  dclua_class_new(L, DCLUA_BUFFER, meta, NULL);
  luaL_getmetatable(L, DCLUA_BUFFER);
  luaL_newlib(L, methods);
  lua_pushcclosure(L, buffer_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  pressure_t* p = lua_newuserdatauv(L, sizeof(*p), 0);
  memset(p, 0, sizeof(*p));
  lua_rawsetp(L, LUA_REGISTRYINDEX, &pressure_key);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
  dclua_set_funcs(L, funcs);
}

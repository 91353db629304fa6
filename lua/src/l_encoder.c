// l_encoder.c: the command encoder as a Lua object.
//
// A dc.encoder owns a dc_encoder_t. Its user values keep what the core
// cannot give back: 1, the dc.kernel selected (arguments are converted
// against its reflection here, by the rules every dispatch of the binding
// uses, before the core checks them again); 2, the grid's dimensions, so
// that group and offset can be checked to match; 3, the dc.stream it
// submits to. The core retains the stream, the kernel and bound buffers,
// so the script may drop its own objects once they are bound.
//
// A binding the binding refuses before the core sees it (an unknown name,
// an index out of range, a value that does not convert) is still counted
// in the core's arg_errors, by a refused call that changes nothing, so
// that enc:stats() counts every refused enc:arg.
// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dclua_internal.h"

enum { UV_KERNEL = 1, UV_DIMS = 2, UV_STREAM = 3 };

static dc_encoder_t* check_encoder(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_ENCODER);
}

// Pushes a new dc.encoder that submits to the dc.stream at |index|.
static void push_encoder(lua_State* L, int index) {
  dc_stream_t* stream = dclua_check_stream(L, index);
  dclua_box_t* box = dclua_box_new(L, DCLUA_ENCODER, 3);
  dc_encoder_t* encoder = NULL;
  DCLUA_CHECK(L, dc_encoder_create(stream, &encoder));
  box->p = encoder;
  lua_pushvalue(L, index);
  lua_setiuservalue(L, -2, UV_STREAM);
}

// [-1, +1, e]  s:encoder() -> dc.encoder
// [-1, +1, e]  dc.encoder(stream) -> dc.encoder
static int l_encoder(lua_State* L) {
  push_encoder(L, 1);
  return 1;
}

// [-0, +0, -]  enc:close(); also __gc and __close: releases the stream,
// the kernel and the bound buffers; dispatches already queued still run.
static int encoder_close(lua_State* L) {
  dc_encoder_release(dclua_box_take(L, 1, DCLUA_ENCODER));
  return 0;
}

// The selected kernel, or NULL (the dc.kernel stays in the user value).
static dc_kernel_t* selected_kernel(lua_State* L, int index) {
  lua_getiuservalue(L, index, UV_KERNEL);
  dc_kernel_t* kernel = lua_isnil(L, -1) ? NULL : dclua_check_kernel(L, -1);
  lua_pop(L, 1);
  return kernel;
}

// Raises FAILED_PRECONDITION unless a kernel is selected.
static dc_kernel_t* require_kernel(lua_State* L, const char* fname) {
  dc_kernel_t* kernel = selected_kernel(L, 1);
  if (kernel == NULL) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "%s: no kernel selected (call enc:kernel(k) first)", fname);
  }
  return kernel;
}

// Raises the core's error for |st|, naming the selected kernel.
static void check_core(lua_State* L, dc_status_t st) {
  if (st == DC_OK) return;
  dc_kernel_t* kernel = selected_kernel(L, 1);
  if (kernel == NULL) dclua_raise(L, st);
  dclua_raise_with(L, st, "kernel", dc_kernel_name(kernel));
}

// [-2, +1, e]  enc:kernel(k) -> enc: selects k, clearing the bindings and
// the grid.
static int encoder_kernel(lua_State* L) {
  dc_encoder_t* encoder = check_encoder(L, 1);
  dc_kernel_t* kernel = dclua_check_kernel(L, 2);
  dc_status_t st = dc_encoder_set_kernel(encoder, kernel);
  if (st != DC_OK) dclua_raise_with(L, st, "kernel", dc_kernel_name(kernel));
  lua_settop(L, 2);
  lua_setiuservalue(L, 1, UV_KERNEL);
  lua_pushnil(L);
  lua_setiuservalue(L, 1, UV_DIMS);
  return 1;
}

//===-- Arguments -------------------------------------------------------===//

// Counts a binding refused before the core saw it, by a call the core
// refuses without changing anything (an index past any kernel's).
static void count_refused(dc_encoder_t* encoder) {
  dc_arg_t none;
  memset(&none, 0, sizeof(none));
  (void)dc_encoder_set_arg(encoder, SIZE_MAX, &none);
}

// Writes "x, factor, n" into |buf|.
static const char* arg_list(const dc_kernel_t* kernel, char* buf,
                            size_t size) {
  dc_kernel_info_t info;
  size_t used = 0;
  buf[0] = '\0';
  if (dc_kernel_info(kernel, &info) != DC_OK) return buf;
  for (size_t i = 0; i < info.arg_count && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     dc_kernel_arg_info(kernel, i)->name);
    if (n > 0) used += (size_t)n;
  }
  return buf;
}

// Resolves enc:arg's argument 2 (a 1-based index or a name) to a 0-based
// index of |kernel|; raises naming the kernel and its arguments.
static size_t resolve_arg(lua_State* L, dc_encoder_t* encoder,
                          dc_kernel_t* kernel) {
  char names[512];
  const char* kname = dc_kernel_name(kernel);
  dc_kernel_info_t info;
  DCLUA_CHECK(L, dc_kernel_info(kernel, &info));
  if (lua_type(L, 2) == LUA_TSTRING) {
    size_t index = 0;
    if (dc_kernel_find_arg(kernel, lua_tostring(L, 2), &index) == DC_OK) {
      return index;
    }
    count_refused(encoder);
    dc_set_error(DC_ERR_NOT_FOUND, "encoder:arg: kernel '%s' has no "
                 "argument '%s' (arguments: %s)", kname, lua_tostring(L, 2),
                 arg_list(kernel, names, sizeof(names)));
    dclua_raise_with(L, DC_ERR_NOT_FOUND, "kernel", kname);
  }
  lua_Integer i = luaL_checkinteger(L, 2);
  if (i < 1 || (lua_Unsigned)i > info.arg_count) {
    count_refused(encoder);
    dc_set_error(DC_ERR_OUT_OF_RANGE, "encoder:arg: kernel '%s' has %zu "
                 "argument(s) (%s); there is no argument %lld", kname,
                 info.arg_count, arg_list(kernel, names, sizeof(names)),
                 (long long)i);
    dclua_raise_with(L, DC_ERR_OUT_OF_RANGE, "kernel", kname);
  }
  return (size_t)i - 1;
}

// [-4, +1, e]  Protected part of enc:arg: converts the value at 4 into
// argument |lua_tointeger(3)| of the kernel at 2, into the dc_arg_t at 1.
// Returns the storage of a large struct's bytes, which the argument
// borrows (nil for any other).
static int convert_protected(lua_State* L) {
  dc_arg_t* out = lua_touserdata(L, 1);
  dc_kernel_t* kernel = lua_touserdata(L, 2);
  dclua_arg_from_value(L, kernel, (size_t)lua_tointeger(L, 3), 4, out);
  if (lua_gettop(L) == 4) lua_pushnil(L);
  return 1;
}

// [-3, +1, e]  enc:arg(index | name, value) -> enc: binds one argument,
// converted and checked against the kernel's reflection now.
static int encoder_arg(lua_State* L) {
  dc_encoder_t* encoder = check_encoder(L, 1);
  luaL_checkany(L, 3);
  dc_kernel_t* kernel = require_kernel(L, "encoder:arg");
  size_t index = resolve_arg(L, encoder, kernel);
  dc_arg_t arg;
  lua_pushcfunction(L, convert_protected);
  lua_pushlightuserdata(L, &arg);
  lua_pushlightuserdata(L, kernel);
  lua_pushinteger(L, (lua_Integer)index);
  lua_pushvalue(L, 3);
  if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
    count_refused(encoder);
    return lua_error(L);
  }
  // A buffer argument borrows the dc.buffer at 3, a large struct the
  // storage on top, both still on the stack here; the core retains the
  // buffer and copies the struct as it binds.
  check_core(L, dc_encoder_set_arg(encoder, index, &arg));
  lua_settop(L, 1);
  return 1;
}

//===-- Geometry --------------------------------------------------------===//

// Reads 1 to 3 counts from |first|: numbers, or one table of them. Counts
// must be at least |min|. Returns the count of dimensions, 0 for none.
static uint32_t read_sizes(lua_State* L, int first, const char* fname,
                           lua_Integer min, size_t* out) {
  int top = lua_gettop(L);
  int table = lua_istable(L, first) ? first : 0;
  int n = table ? (int)lua_rawlen(L, table) : top - first + 1;
  if (n < 1 || n > 3 || (table && top > first)) {
    luaL_argerror(L, first, lua_pushfstring(L, "%s takes 1 to 3 sizes (or "
                  "one table of them)", fname));
  }
  for (int d = 0; d < n; ++d) {
    if (table) lua_rawgeti(L, table, d + 1);
    int index = table ? -1 : first + d;
    int isnum = 0;
    lua_Integer v = lua_tointegerx(L, index, &isnum);
    if (!isnum || v < min) {
      luaL_argerror(L, table ? first : first + d,
                    lua_pushfstring(L, "size %d must be an integer >= %d",
                                    d + 1, (int)min));
    }
    out[d] = (size_t)v;
    if (table) lua_pop(L, 1);
  }
  return (uint32_t)n;
}

// [-(1..3), +1, e]  enc:grid(x [, y [, z]]) or enc:grid({ x, y, z }) -> enc
// The group and offset go back to "engine's choice" and 0.
static int encoder_grid(lua_State* L) {
  dc_encoder_t* encoder = check_encoder(L, 1);
  size_t global[3];
  uint32_t dims = read_sizes(L, 2, "encoder:grid", 1, global);
  check_core(L, dc_encoder_set_grid(encoder, dims, global));
  lua_pushinteger(L, dims);
  lua_setiuservalue(L, 1, UV_DIMS);
  lua_settop(L, 1);
  return 1;
}

// Reads a group or offset with the grid's dimensions from 2, or nil (NULL:
// the default). Raises FAILED_PRECONDITION without a kernel or a grid.
static const size_t* read_like_grid(lua_State* L, const char* fname,
                                    lua_Integer min, size_t* out) {
  require_kernel(L, fname);
  lua_getiuservalue(L, 1, UV_DIMS);
  lua_Integer dims = lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (dims == 0) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "%s: no grid set (call enc:grid(...) first)", fname);
  }
  if (lua_isnoneornil(L, 2)) return NULL;
  uint32_t n = read_sizes(L, 2, fname, min, out);
  if (n != (uint32_t)dims) {
    luaL_argerror(L, 2, lua_pushfstring(L, "%s has %d dimension(s) but the "
                  "grid has %d", fname, (int)n, (int)dims));
  }
  return out;
}

// Sets what |set| sets (the group or the offset) from the sizes at 2,
// read as read_like_grid does, and returns the encoder.
static int set_like_grid(lua_State* L, const char* fname, lua_Integer min,
                         dc_status_t (*set)(dc_encoder_t*, const size_t*)) {
  dc_encoder_t* encoder = check_encoder(L, 1);
  size_t sizes[3];
  check_core(L, set(encoder, read_like_grid(L, fname, min, sizes)));
  lua_settop(L, 1);
  return 1;
}

// [-(1..3), +1, e]  enc:group(x [, y [, z]] | { ... } | nil) -> enc
// nil lets the engine choose the work-group size.
static int encoder_group(lua_State* L) {
  return set_like_grid(L, "encoder:group", 1, dc_encoder_set_group);
}

// [-(1..3), +1, e]  enc:offset(x [, y [, z]] | { ... } | nil) -> enc
static int encoder_offset(lua_State* L) {
  return set_like_grid(L, "encoder:offset", 0, dc_encoder_set_offset);
}

// [-1, +1, e]  enc:validate() -> enc; raises what a dispatch would.
static int encoder_validate(lua_State* L) {
  check_core(L, dc_encoder_validate(check_encoder(L, 1)));
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  enc:dispatch() -> enc: queues the dispatch on the stream.
static int encoder_dispatch(lua_State* L) {
  check_core(L, dc_encoder_dispatch(check_encoder(L, 1)));
  lua_settop(L, 1);
  return 1;
}

// [-2, +1, e]  enc:set_stream(s) -> enc: later dispatches go to s.
static int encoder_set_stream(lua_State* L) {
  dc_encoder_t* encoder = check_encoder(L, 1);
  check_core(L, dc_encoder_set_stream(encoder, dclua_check_stream(L, 2)));
  lua_settop(L, 2);
  lua_setiuservalue(L, 1, UV_STREAM);
  return 1;
}

//===-- History and statistics ------------------------------------------===//

// Sets t[key] = { sizes[1..dims] }.
static void set_sizes(lua_State* L, const char* key, const size_t* sizes,
                      uint32_t dims) {
  lua_createtable(L, (int)dims, 0);
  for (uint32_t d = 0; d < dims; ++d) {
    lua_pushinteger(L, (lua_Integer)sizes[d]);
    lua_rawseti(L, -2, (lua_Integer)d + 1);
  }
  lua_setfield(L, -2, key);
}

// Pushes one history record as a table.
static void push_record(lua_State* L, const dc_encoder_record_t* r) {
  lua_createtable(L, 0, 9);
  dclua_set_integer(L, "sequence", r->sequence);
  dclua_set_string(L, "kernel", r->kernel);
  dclua_set_integer(L, "stream_id", r->stream_id);
  dclua_set_integer(L, "dims", r->dims);
  set_sizes(L, "grid", r->global, r->dims);
  if (r->local[0] != 0) set_sizes(L, "group", r->local, r->dims);
  dclua_set_string(L, "status", dc_status_name(r->status));
  dclua_set_boolean(L, "ok", r->status == DC_OK);
  dclua_set_integer(L, "encode_ns", r->encode_ns);
}

// [-1, +1, e]  enc:history() -> { record, ... }, the latest first: each
// { sequence, kernel, stream_id, dims, grid, group, status, ok,
// encode_ns }
static int encoder_history(lua_State* L) {
  dc_encoder_t* encoder = check_encoder(L, 1);
  dc_encoder_stats_t stats;
  DCLUA_CHECK(L, dc_encoder_stats(encoder, &stats));
  lua_createtable(L, (int)stats.history_length, 0);
  for (size_t i = 0; i < stats.history_length; ++i) {
    dc_encoder_record_t record;
    DCLUA_CHECK(L, dc_encoder_history(encoder, i, &record));
    push_record(L, &record);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

// [-1, +1, e]  enc:stats() -> { args_bound, arg_errors, dispatches,
//   rejected, encode_ns, encode_ms, history_length }
static int encoder_stats(lua_State* L) {
  dc_encoder_stats_t s;
  DCLUA_CHECK(L, dc_encoder_stats(check_encoder(L, 1), &s));
  lua_createtable(L, 0, 7);
  dclua_set_integer(L, "args_bound", s.args_bound);
  dclua_set_integer(L, "arg_errors", s.arg_errors);
  dclua_set_integer(L, "dispatches", s.dispatches);
  dclua_set_integer(L, "rejected", s.rejected);
  dclua_set_integer(L, "encode_ns", s.encode_ns);
  dclua_set_number(L, "encode_ms", (lua_Number)s.encode_ns / 1e6);
  dclua_set_integer(L, "history_length", s.history_length);
  return 1;
}

// [-2, +1, e]  enc.stream (the dc.stream it submits to), or a method
static int encoder_index(lua_State* L) {
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;  // a method
  check_encoder(L, 1);
  if (strcmp(key, "stream") == 0) {
    lua_getiuservalue(L, 1, UV_STREAM);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-1, +1, -]  tostring(enc) -> "dc.encoder: kernel 'k'" or "... no kernel"
static int encoder_tostring(lua_State* L) {
  if (dclua_box_for_tostring(L, 1, DCLUA_ENCODER) == NULL) return 1;
  dc_kernel_t* kernel = selected_kernel(L, 1);
  if (kernel == NULL) {
    lua_pushliteral(L, "dc.encoder: no kernel");
  } else {
    lua_pushfstring(L, "dc.encoder: kernel '%s'", dc_kernel_name(kernel));
  }
  return 1;
}

void dclua_open_encoder(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", encoder_index}, {"__gc", encoder_close},
      {"__close", encoder_close}, {"__tostring", encoder_tostring},
      {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"kernel", encoder_kernel}, {"arg", encoder_arg},
      {"grid", encoder_grid}, {"group", encoder_group},
      {"offset", encoder_offset}, {"validate", encoder_validate},
      {"dispatch", encoder_dispatch}, {"set_stream", encoder_set_stream},
      {"history", encoder_history}, {"stats", encoder_stats},
      {"close", encoder_close}, {NULL, NULL}};
  static const luaL_Reg stream_methods[] = {{"encoder", l_encoder},
                                            {NULL, NULL}};
  dclua_class_new(L, DCLUA_ENCODER, meta, methods);
  dclua_add_methods(L, DCLUA_STREAM, stream_methods);
  lua_pushcfunction(L, l_encoder);
  lua_setfield(L, -2, "encoder");
}

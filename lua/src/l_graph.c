// l_graph.c: graphs as Lua objects: dc.graph, its ops (dispatches,
// copies, fills, host functions, nested graphs, subflows), explicit
// edges, validation and DOT. Running them is l_graph_run.c.
//
// The core copies or retains what an op needs, so the Lua objects an op
// names are kept only so that they stay what the script sees: each op's
// record in the graph's user value holds them (see l_graph.h). Host and
// subflow ops call Lua functions from engine threads through
// dclua_callback_call: the function runs on the Lua thread, which a run
// keeps servicing while it waits (dclua_wait), so device work goes on in
// parallel and Lua never runs on two threads.
//
// A subflow op hands its function a dc.graph of the subflow. That graph
// takes ops only while the function runs (its ops run after the function
// returns) and is closed when the outermost graph run in progress ends,
// after which nothing can run its host ops.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_graph.h"

//===-- Errors naming an op ---------------------------------------------===//

// Raises an error object with |status|, the message "<what> '<name>':
// <format>" and the field `op` = |name|.
static int op_error(lua_State* L, dc_status_t status, const char* what,
                    const char* name, const char* format, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(detail, sizeof(detail), format, ap);
  va_end(ap);
  dc_set_error(status, "%s '%s': %s", what, name, detail);
  return dclua_raise_with(L, status, "op", name);
}

// Raises |status| from the core with `op` = |name|, if it is an error.
static void check_op(lua_State* L, dc_status_t status, const char* name) {
  if (status != DC_OK) dclua_raise_with(L, status, "op", name);
}

//===-- The graph object ------------------------------------------------===//

dclua_graph_t* dclua_graph_check(lua_State* L, int index) {
  dclua_box_check(L, index, DCLUA_GRAPH);
  return lua_touserdata(L, index);
}

void dclua_graph_field(lua_State* L, int index, const char* field) {
  lua_getiuservalue(L, index, 1);
  lua_getfield(L, -1, field);
  lua_remove(L, -2);
}

// Sets a new table in the table at the top of the stack under |field|,
// weak-keyed when |weak|.
static void new_field(lua_State* L, const char* field, bool weak) {
  lua_newtable(L);
  if (weak) {
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
  }
  lua_setfield(L, -2, field);
}

// Pushes a new, closed dc.graph with its user value.
// [-0, +1, m]
static dclua_graph_t* new_graph(lua_State* L) {
  dclua_graph_t* g = lua_newuserdatauv(L, sizeof(*g), 1);
  memset(g, 0, sizeof(*g));
  atomic_init(&g->sealed, false);
  luaL_setmetatable(L, DCLUA_GRAPH);
  lua_createtable(L, 0, 5);
  new_field(L, "ops", false);
  new_field(L, "order", false);
  new_field(L, "execs", true);
  new_field(L, "parents", true);
  lua_setiuservalue(L, -2, 1);
  return g;
}

// Makes the graph own |callback| (released when it is collected).
static void own_callback(lua_State* L, dclua_graph_t* g,
                         dclua_callback_t* callback) {
  if (g->callback_count == g->callback_capacity) {
    size_t capacity = g->callback_capacity ? 2 * g->callback_capacity : 4;
    dclua_callback_t** grown =
        realloc(g->callbacks, capacity * sizeof(*grown));
    if (grown == NULL) {
      dclua_callback_release(callback);
      luaL_error(L, "dc.graph: out of memory");
    }
    g->callbacks = grown;
    g->callback_capacity = capacity;
  }
  g->callbacks[g->callback_count++] = callback;
}

// Gives |callback| (retained once more each) to every graph that nests
// the graph at |index|, transitively: their instances run it too, and
// must still hold it when a script calls this graph's __gc itself.
static void share_with_parents(lua_State* L, int index,
                               dclua_callback_t* callback, int depth) {
  if (depth > 64) return;  // nesting is acyclic; this only bounds it
  dclua_graph_field(L, index, "parents");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    dclua_graph_t* parent = luaL_testudata(L, -1, DCLUA_GRAPH);
    if (parent != NULL) {
      dclua_callback_retain(callback);
      own_callback(L, parent, callback);
      share_with_parents(L, lua_gettop(L), callback, depth + 1);
    }
  }
  lua_pop(L, 1);
}

static void release_callbacks(dclua_graph_t* g) {
  for (size_t i = 0; i < g->callback_count; ++i) {
    dclua_callback_release(g->callbacks[i]);
  }
  free(g->callbacks);
  g->callbacks = NULL;
  g->callback_count = g->callback_capacity = 0;
}

void dclua_graph_free(lua_State* L, int index) {
  dclua_graph_t* g = dclua_udata_check(L, index, DCLUA_GRAPH);
  atomic_store(&g->sealed, true);
  dc_graph_release(g->p);
  g->p = NULL;
  release_callbacks(g);
}

// A graph that may take a new op: open, not a subflow whose function has
// returned, and with no instance running (its instances are closed).
static dclua_graph_t* check_changeable(lua_State* L, int index) {
  dclua_graph_t* g = dclua_graph_check(L, index);
  if (g->subflow && atomic_load(&g->sealed)) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "graph '%s': a subflow's graph takes ops only while its "
                 "function runs", g->name);
  }
  dclua_graph_changing(L, index);
  return g;
}

// [-1, +0, -]  g:close(): drops the graph (its instances stay usable)
static int graph_close(lua_State* L) {
  dclua_graph_t* g = dclua_udata_check(L, 1, DCLUA_GRAPH);
  if (g->p == NULL) return 0;
  lua_getiuservalue(L, 1, 1);
  lua_pushnil(L);
  lua_setfield(L, -2, "exec");  // collected when no one holds it
  dc_graph_release(g->p);
  g->p = NULL;
  return 0;
}

// [-1, +0, -]  __gc: as close, and the Lua functions of its ops go too
// (nothing can run them now: a graph that nests this one, or an instance,
// would keep it alive).
static int graph_gc(lua_State* L) {
  dclua_graph_t* g = dclua_udata_check(L, 1, DCLUA_GRAPH);
  dc_graph_release(g->p);
  g->p = NULL;
  release_callbacks(g);
  return 0;
}

// [-1, +1, -]  #g -> the number of ops
static int graph_len(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)dc_graph_op_count(dclua_graph_check(L, 1)->p));
  return 1;
}

// [-1, +1, m]  tostring(g) -> "dc.graph 'name' (3 ops)"
static int graph_tostring(lua_State* L) {
  dclua_graph_t* g = dclua_udata_check(L, 1, DCLUA_GRAPH);
  if (g->p == NULL) {
    lua_pushfstring(L, "dc.graph '%s' (closed)", g->name);
  } else {
    lua_pushfstring(L, "dc.graph '%s' (%d ops)", g->name,
                    (int)dc_graph_op_count(g->p));
  }
  return 1;
}

//===-- Records of ops --------------------------------------------------===//

// Registers op |name| of |kind| in the graph at |index| and leaves its
// record table on the stack for the caller to fill.
// [-0, +1, m]
static void record_op(lua_State* L, int index, const char* name,
                      const char* kind) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, kind);
  lua_setfield(L, -2, "kind");
  dclua_graph_field(L, index, "ops");
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
  dclua_graph_field(L, index, "order");
  lua_pushstring(L, name);
  lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
  lua_pop(L, 1);
}

// Sets field |field| of the record at the top to the value at |index|.
static void record_set(lua_State* L, const char* field, int index) {
  lua_pushvalue(L, index);
  lua_setfield(L, -2, field);
}

// The graph runs where its first op with a device runs, unless told.
static void note_device(dclua_graph_t* g, dc_device_t* device) {
  if (g->device == NULL) g->device = device;
}

//===-- Op options ------------------------------------------------------===//

typedef struct op_options_t {
  dc_op_options_t o;
  dc_retry_policy_t retry;
} op_options_t;

static const char* const kCommonOptions[] = {
    "after", "reads", "writes", "read_writes", "retry", "fallback",
    "no_snapshot", "breaker", NULL};

static bool listed(const char* const* names, const char* name) {
  for (size_t i = 0; names != NULL && names[i] != NULL; ++i) {
    if (strcmp(names[i], name) == 0) return true;
  }
  return false;
}

// Raises for a key of the option table at |index| that is neither common
// nor in |extra|.
static void check_options(lua_State* L, int index, const char* what,
                          const char* name, const char* const* extra) {
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    const char* key = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                      : NULL;
    if (key == NULL || (!listed(kCommonOptions, key) && !listed(extra, key))) {
      op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
               "unknown option '%s'", luaL_tolstring(L, -1, NULL));
    }
  }
}

// The number of values of option |field| of the table at |index|: 0 when
// absent, 1 for a single value, the length of a list.
static size_t option_count(lua_State* L, int index, const char* field) {
  int type = lua_getfield(L, index, field);
  size_t n = type == LUA_TNIL ? 0 : 1;
  if (type == LUA_TTABLE) n = (size_t)luaL_len(L, -1);
  lua_pop(L, 1);
  return n;
}

// Pushes item |i| (1-based) of option |field|: the value itself when it
// is not a plain table.
static void option_item(lua_State* L, int index, const char* field,
                        lua_Integer i) {
  if (lua_getfield(L, index, field) == LUA_TTABLE) lua_geti(L, -1, i);
  else lua_pushvalue(L, -1);
  lua_remove(L, -2);
}

// Reads `after` (a name or a list of names) into an array left on the
// stack; the strings stay alive in the option table.
static void read_after(lua_State* L, int index, const char* what,
                       const char* name, op_options_t* out) {
  size_t n = option_count(L, index, "after");
  const char** after = lua_newuserdatauv(L, (n ? n : 1) * sizeof(char*), 0);
  for (size_t i = 0; i < n; ++i) {
    option_item(L, index, "after", (lua_Integer)i + 1);
    if (lua_type(L, -1) != LUA_TSTRING) {
      op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
               "option 'after' must be an op name or a list of them, got "
               "%s", luaL_typename(L, -1));
    }
    after[i] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  out->o.after = after;
  out->o.after_count = n;
}

// The buffer at the top of the stack, for option |field| of op |name|.
static dc_buffer_t* option_buffer(lua_State* L, const char* what,
                                  const char* name, const char* field) {
  dc_buffer_t* buffer = dclua_test_buffer(L, -1);
  if (buffer == NULL) {
    bool closed = dclua_box_test(L, -1, DCLUA_BUFFER) != NULL;
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
             "option '%s' must be a dc.buffer or a list of them, got %s",
             field, closed ? "a closed dc.buffer" : luaL_typename(L, -1));
  }
  return buffer;
}

// Reads reads/writes/read_writes into an access array left on the stack.
static void read_access(lua_State* L, int index, const char* what,
                        const char* name, op_options_t* out) {
  static const char* const fields[] = {"reads", "writes", "read_writes"};
  static const dc_access_t modes[] = {DC_ACCESS_READ, DC_ACCESS_WRITE,
                                      DC_ACCESS_READ_WRITE};
  size_t n = 0;
  for (int f = 0; f < 3; ++f) n += option_count(L, index, fields[f]);
  dc_buffer_access_t* access =
      lua_newuserdatauv(L, (n ? n : 1) * sizeof(*access), 0);
  size_t used = 0;
  for (int f = 0; f < 3; ++f) {
    size_t count = option_count(L, index, fields[f]);
    for (size_t i = 0; i < count; ++i) {
      option_item(L, index, fields[f], (lua_Integer)i + 1);
      access[used].buffer = option_buffer(L, what, name, fields[f]);
      access[used++].access = modes[f];
      lua_pop(L, 1);
    }
  }
  out->o.access = access;
  out->o.access_count = used;
}

// The device at the top of the stack (a dc.device or a name), for option
// |field| of op |name|.
static dc_device_t* option_device(lua_State* L, const char* what,
                                  const char* name, const char* field) {
  if (lua_type(L, -1) != LUA_TSTRING &&
      dclua_box_test(L, -1, DCLUA_DEVICE) == NULL) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
             "option '%s' must be a dc.device or a device name, got %s",
             field, luaL_typename(L, -1));
  }
  return dclua_check_device(L, -1, false);
}

// Reads the options of op |name| at |index| (none or nil: no options);
// |extra| lists the fields the op's kind adds. Leaves two arrays on the
// stack, and the op's breaker when it has one (alive until the op is
// added).
static void read_options(lua_State* L, int index, const char* what,
                         const char* name, const char* const* extra,
                         op_options_t* out) {
  memset(out, 0, sizeof(*out));
  if (lua_isnoneornil(L, index)) {
    lua_newtable(L);  // read the same way as an empty table
    lua_replace(L, index);
  }
  luaL_checktype(L, index, LUA_TTABLE);
  check_options(L, index, what, name, extra);
  read_after(L, index, what, name, out);
  read_access(L, index, what, name, out);
  if (lua_getfield(L, index, "retry") != LUA_TNIL) {
    if (!lua_istable(L, -1) && !luaL_testudata(L, -1, DCLUA_RETRY)) {
      op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
               "option 'retry' must be a dc.retry or a table, got %s",
               luaL_typename(L, -1));
    }
    dclua_check_retry(L, -1, &out->retry);
    out->o.retry = &out->retry;
  }
  if (lua_getfield(L, index, "fallback") != LUA_TNIL) {
    out->o.fallback = option_device(L, what, name, "fallback");
  }
  out->o.no_snapshot = lua_getfield(L, index, "no_snapshot") != LUA_TNIL &&
                       lua_toboolean(L, -1);
  lua_pop(L, 3);
  int type = lua_getfield(L, index, "breaker");
  if (type == LUA_TNIL) {
    lua_pop(L, 1);
  } else {
    if (type != LUA_TTABLE && !luaL_testudata(L, -1, DCLUA_BREAKER)) {
      op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
               "option 'breaker' must be a dc.breaker or a table, got %s",
               luaL_typename(L, -1));
    }
    out->o.breaker = dclua_push_breaker_of(L, -1, name);
  }
}

// Reads an optional non-negative integer option |field| (default |def|).
static size_t option_size(lua_State* L, int index, const char* what,
                          const char* name, const char* field, size_t def) {
  if (lua_getfield(L, index, field) == LUA_TNIL) {
    lua_pop(L, 1);
    return def;
  }
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok || v < 0) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
             "option '%s' must be a non-negative integer, got %s", field,
             luaL_tolstring(L, -1, NULL));
  }
  lua_pop(L, 1);
  return (size_t)v;
}

//===-- Adding ops ------------------------------------------------------===//

// The device of the first buffer among |args|, or NULL.
static dc_device_t* device_of_args(const dclua_args_t* args) {
  for (size_t i = 0; i < args->count; ++i) {
    if (args->args[i].kind == DC_ARG_BUFFER) {
      return dc_buffer_device(args->args[i].buffer);
    }
  }
  return NULL;
}

// The device of the dispatch of the kernel at |kernel| with |args|: its
// first buffer's, else its program's (k.program.device; none for a
// built-in without buffers).
static dc_device_t* dispatch_device(lua_State* L, int kernel,
                                   const dclua_args_t* args) {
  dc_device_t* device = device_of_args(args);
  if (device == NULL && lua_getfield(L, kernel, "program") != LUA_TNIL &&
      lua_getfield(L, -1, "device") != LUA_TNIL &&
      dclua_box_test(L, -1, DCLUA_DEVICE) != NULL) {
    device = dclua_check_device(L, -1, false);
  }
  return device;
}

// Reads the arguments at |index| (a table, or nil for none) of a dispatch.
static void read_args(lua_State* L, int index, dc_kernel_t* kernel,
                      dclua_args_t* out) {
  if (lua_isnoneornil(L, index)) {
    lua_newtable(L);
    lua_replace(L, index);
  }
  dclua_args_from_table(L, kernel, index, out);
}

// Records a dispatch (the kernel at 3, a copy of the arguments at |args|,
// the options at |opts|) and returns the graph.
static int finish_dispatch(lua_State* L, const char* name, const char* kind,
                           int args, int opts) {
  record_op(L, 1, name, kind);
  record_set(L, "kernel", 3);
  dclua_copy_table(L, args);
  lua_setfield(L, -2, "args");
  record_set(L, "opts", opts);
  lua_settop(L, 1);
  return 1;
}

// [-6, +1, e]  g:dispatch(name, kernel, launch, args, [opts]) -> g
// launch: { grid =, group =, offset = } as for streams; args: a table of
// the kernel's arguments (positions and/or names).
static int graph_dispatch(lua_State* L) {
  dclua_graph_t* g = check_changeable(L, 1);
  const char* name = luaL_checkstring(L, 2);
  dc_kernel_t* kernel = dclua_check_kernel(L, 3);
  luaL_checktype(L, 4, LUA_TTABLE);
  lua_settop(L, 6);
  dc_dispatch_t launch;
  dclua_check_dispatch(L, 4, kernel, &launch);
  dclua_args_t args;
  read_args(L, 5, kernel, &args);
  op_options_t o;
  read_options(L, 6, "g:dispatch", name, NULL, &o);
  check_op(L, dc_graph_dispatch(g->p, name, kernel, &launch, args.args,
                                args.count, &o.o), name);
  note_device(g, dispatch_device(L, 3, &args));
  return finish_dispatch(L, name, "dispatch", 5, 6);
}

// Reads a list of 1-3 sizes, or one size, at the top of the stack into
// |out| (zeros when nil); returns how many.
static uint32_t read_sizes(lua_State* L, const char* name, const char* field,
                           size_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  if (lua_isnil(L, -1)) return 0;
  bool list = lua_istable(L, -1);
  lua_Integer n = list ? luaL_len(L, -1) : 1;
  if (n < 1 || n > 3) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, "g:dispatch_indirect", name,
             "'%s' must be a size or a list of 1 to 3 sizes", field);
  }
  for (lua_Integer i = 0; i < n; ++i) {
    if (list) lua_geti(L, -1, i + 1);
    else lua_pushvalue(L, -1);
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 1) {
      op_error(L, DC_ERR_INVALID_ARGUMENT, "g:dispatch_indirect", name,
               "'%s' must hold positive integers, got %s", field,
               luaL_tolstring(L, -1, NULL));
    }
    out[i] = (size_t)v;
    lua_pop(L, 1);
  }
  return (uint32_t)n;
}

// The grid of an indirect dispatch: { buffer =, dims =, offset =, group = }.
typedef struct indirect_t {
  dc_buffer_t* buffer;
  uint32_t dims;
  size_t offset;
  size_t local[3];
  bool has_local;
} indirect_t;

static void read_indirect(lua_State* L, int index, const char* name,
                          indirect_t* out) {
  static const char* what = "g:dispatch_indirect";
  static const char* const fields[] = {"buffer", "dims", "offset", "group",
                                       NULL};
  luaL_checktype(L, index, LUA_TTABLE);
  if (dclua_push_unknown_key(L, index, fields)) {
    const char* key = luaL_tolstring(L, -1, NULL);
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name, "unknown grid field "
             "'%s' (fields: %s)", key, dclua_push_names(L, fields));
  }
  lua_getfield(L, index, "buffer");
  out->buffer = option_buffer(L, what, name, "buffer");
  lua_pop(L, 1);
  size_t dims = option_size(L, index, what, name, "dims", 1);
  if (dims < 1 || dims > 3) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
             "'dims' must be 1, 2 or 3, got %d", (int)dims);
  }
  out->dims = (uint32_t)dims;
  out->offset = option_size(L, index, what, name, "offset", 0);
  lua_getfield(L, index, "group");
  uint32_t n = read_sizes(L, name, "group", out->local);
  lua_pop(L, 1);
  if (n != 0 && n != out->dims) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
             "'group' has %d sizes for a %d-dimensional grid", (int)n,
             (int)out->dims);
  }
  out->has_local = n != 0;
}

// [-6, +1, e]  g:dispatch_indirect(name, kernel, grid, args, [opts]) -> g
// grid: { buffer = u32/u64 buffer, dims = 1, offset = 0, group = size(s) }:
// the grid's sizes are read from the buffer when the op runs.
static int graph_dispatch_indirect(lua_State* L) {
  dclua_graph_t* g = check_changeable(L, 1);
  const char* name = luaL_checkstring(L, 2);
  dc_kernel_t* kernel = dclua_check_kernel(L, 3);
  lua_settop(L, 6);
  indirect_t grid;
  read_indirect(L, 4, name, &grid);
  dclua_args_t args;
  read_args(L, 5, kernel, &args);
  op_options_t o;
  read_options(L, 6, "g:dispatch_indirect", name, NULL, &o);
  check_op(L, dc_graph_dispatch_indirect(
                  g->p, name, kernel, grid.dims, grid.buffer, grid.offset,
                  grid.has_local ? grid.local : NULL, args.args, args.count,
                  &o.o), name);
  note_device(g, dc_buffer_device(grid.buffer));
  finish_dispatch(L, name, "dispatch_indirect", 5, 6);
  return 1;
}

// The buffer argument at |index| of op |name|.
static dc_buffer_t* arg_buffer(lua_State* L, int index, const char* what,
                               const char* name, const char* role) {
  dc_buffer_t* buffer = dclua_test_buffer(L, index);
  if (buffer == NULL) {
    bool closed = dclua_box_test(L, index, DCLUA_BUFFER) != NULL;
    op_error(L, DC_ERR_INVALID_ARGUMENT, what, name,
             "the %s must be a dc.buffer, got %s", role,
             closed ? "a closed dc.buffer" : luaL_typename(L, index));
  }
  return buffer;
}

// [-5, +1, e]  g:copy(name, dst, src, [opts]) -> g
// opts adds dst_offset, src_offset (elements; 0) and count (default: the
// rest of src).
static int graph_copy(lua_State* L) {
  static const char* what = "g:copy";
  static const char* const extra[] = {"dst_offset", "src_offset", "count",
                                      NULL};
  dclua_graph_t* g = check_changeable(L, 1);
  const char* name = luaL_checkstring(L, 2);
  lua_settop(L, 5);
  dc_buffer_t* dst = arg_buffer(L, 3, what, name, "destination");
  dc_buffer_t* src = arg_buffer(L, 4, what, name, "source");
  op_options_t o;
  read_options(L, 5, what, name, extra, &o);
  size_t dst_offset = option_size(L, 5, what, name, "dst_offset", 0);
  size_t src_offset = option_size(L, 5, what, name, "src_offset", 0);
  size_t length = dc_buffer_length(src);
  size_t count = option_size(L, 5, what, name, "count",
                             src_offset < length ? length - src_offset : 0);
  check_op(L, dc_graph_copy(g->p, name, dst, dst_offset, src, src_offset,
                            count, &o.o), name);
  note_device(g, dc_buffer_device(dst));
  record_op(L, 1, name, "copy");
  record_set(L, "dst", 3);
  record_set(L, "src", 4);
  record_set(L, "opts", 5);
  lua_settop(L, 1);
  return 1;
}

// Converts the number at |index| to one element of |dtype| in |out|.
static void fill_value(lua_State* L, int index, const char* name,
                       dc_dtype_t dtype, unsigned char out[16]) {
  static const struct { lua_Integer min, max; } kRange[] = {
      [DC_DTYPE_I8] = {INT8_MIN, INT8_MAX},
      [DC_DTYPE_U8] = {0, UINT8_MAX},
      [DC_DTYPE_I16] = {INT16_MIN, INT16_MAX},
      [DC_DTYPE_U16] = {0, UINT16_MAX},
      [DC_DTYPE_I32] = {INT32_MIN, INT32_MAX},
      [DC_DTYPE_U32] = {0, UINT32_MAX},
      [DC_DTYPE_I64] = {LUA_MININTEGER, LUA_MAXINTEGER},
      [DC_DTYPE_U64] = {0, LUA_MAXINTEGER},
  };
  if (dtype == DC_DTYPE_F32 || dtype == DC_DTYPE_F64) {
    if (lua_type(L, index) != LUA_TNUMBER) {
      op_error(L, DC_ERR_INVALID_ARGUMENT, "g:fill", name,
               "the value must be a number, got %s", luaL_typename(L, index));
    }
    double v = (double)lua_tonumber(L, index);
    float f = (float)v;
    if (dtype == DC_DTYPE_F32) memcpy(out, &f, sizeof(f));
    else memcpy(out, &v, sizeof(v));
    return;
  }
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, index, &ok);
  if (lua_type(L, index) != LUA_TNUMBER || !ok || v < kRange[dtype].min ||
      v > kRange[dtype].max) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, "g:fill", name,
             "the value must be an integer that fits %s, got %s",
             dc_dtype_name(dtype), luaL_tolstring(L, index, NULL));
  }
  int64_t wide = (int64_t)v;  // little-endian: the low bytes are the value
  memcpy(out, &wide, sizeof(wide));
}

// [-5, +1, e]  g:fill(name, buffer, value, [opts]) -> g
// opts adds offset (elements; 0) and count (default: the rest).
static int graph_fill(lua_State* L) {
  static const char* what = "g:fill";
  static const char* const extra[] = {"offset", "count", NULL};
  dclua_graph_t* g = check_changeable(L, 1);
  const char* name = luaL_checkstring(L, 2);
  lua_settop(L, 5);
  dc_buffer_t* buffer = arg_buffer(L, 3, what, name, "buffer");
  unsigned char value[16] = {0};
  fill_value(L, 4, name, dc_buffer_dtype(buffer), value);
  op_options_t o;
  read_options(L, 5, what, name, extra, &o);
  size_t offset = option_size(L, 5, what, name, "offset", 0);
  size_t length = dc_buffer_length(buffer);
  size_t count = option_size(L, 5, what, name, "count",
                             offset < length ? length - offset : 0);
  check_op(L, dc_graph_fill(g->p, name, buffer, offset, count, value, &o.o),
           name);
  note_device(g, dc_buffer_device(buffer));
  record_op(L, 1, name, "fill");
  record_set(L, "buffer", 3);
  record_set(L, "opts", 5);
  lua_settop(L, 1);
  return 1;
}

// A host op: the engine thread asks the Lua thread to call the function.
static dc_status_t host_fn(void* user_data) {
  return dclua_callback_call(user_data, NULL, NULL);
}

// An op that calls the Lua function at 3 (a host or subflow op) while
// it is added: g:<kind>(name, fn, [opts]).
typedef struct function_op_t {
  dclua_graph_t* g;
  const char* name;
  const char* kind;
  dclua_callback_t* callback;  // owned by the graph
  op_options_t o;
} function_op_t;

// Starts adding a function op of |kind| (|what| names the method in
// errors): reads its name and options and hands the graph a callback of
// the function, for the core call that adds the op.
static void begin_function_op(lua_State* L, const char* what,
                              const char* kind, function_op_t* op) {
  op->g = check_changeable(L, 1);
  op->name = luaL_checkstring(L, 2);
  op->kind = kind;
  lua_settop(L, 4);
  read_options(L, 4, what, op->name, NULL, &op->o);
  char label[96];
  snprintf(label, sizeof(label), "%s op '%s'", kind, op->name);
  op->callback = dclua_callback_create(L, 3, label);
  own_callback(L, op->g, op->callback);
  share_with_parents(L, 1, op->callback, 0);
}

// Ends adding |op| with the |status| of the core call: records it and
// returns the graph.
static int finish_function_op(lua_State* L, const function_op_t* op,
                              dc_status_t status) {
  check_op(L, status, op->name);
  record_op(L, 1, op->name, op->kind);
  record_set(L, "fn", 3);
  record_set(L, "opts", 4);
  lua_settop(L, 1);
  return 1;
}

// [-4, +1, e]  g:host(name, fn, [opts]) -> g
// fn() runs on the Lua thread when the op's dependencies are done; raise
// dc.error(code, message) to fail the op with that code (retry policies
// then treat it as the engine's own failures).
static int graph_host(lua_State* L) {
  function_op_t op;
  begin_function_op(L, "g:host", "host", &op);
  return finish_function_op(L, &op, dc_graph_host(op.g->p, op.name, host_fn,
                                                   op.callback, &op.o.o));
}

// A call of a subflow op's function, from the engine thread.
typedef struct subflow_call_t {
  dc_graph_t* graph;    // the subflow's graph, from the engine
  dclua_graph_t* made;  // its dc.graph, once pushed
} subflow_call_t;

// Pushes the dc.graph of the subflow's graph (on the Lua thread).
static int push_subflow(lua_State* L, void* user_data) {
  subflow_call_t* call = user_data;
  dclua_graph_t* g = new_graph(L);
  dc_graph_retain(call->graph);
  g->p = call->graph;
  g->subflow = true;
  snprintf(g->name, sizeof(g->name), "subflow");
  dclua_graph_track_subflow(L, -1);
  call->made = g;
  return 1;
}

static dc_status_t subflow_fn(dc_graph_t* graph, void* user_data) {
  subflow_call_t call = {graph, NULL};
  dc_status_t status = dclua_callback_call(user_data, push_subflow, &call);
  // The engine runs the subflow's ops now: no more may be added.
  if (call.made != NULL) atomic_store(&call.made->sealed, true);
  return status;
}

// [-4, +1, e]  g:subflow(name, fn, [opts]) -> g
// fn(sub) runs on the Lua thread when the op's dependencies are done and
// adds ops to the dc.graph |sub|; they run when it returns, and the op's
// dependents start after them.
static int graph_subflow(lua_State* L) {
  function_op_t op;
  begin_function_op(L, "g:subflow", "subflow", &op);
  return finish_function_op(L, &op,
                            dc_graph_subflow(op.g->p, op.name, subflow_fn,
                                             op.callback, &op.o.o));
}

// [-4, +1, e]  g:graph(name, child, [opts]) -> g: the child's ops as one
// op (named "<name>/<child op>" in reports). The child is copied when the
// graph is instantiated; changing it later closes this graph's instances.
static int graph_graph(lua_State* L) {
  dclua_graph_t* g = check_changeable(L, 1);
  const char* name = luaL_checkstring(L, 2);
  dclua_graph_t* child = dclua_graph_check(L, 3);
  lua_settop(L, 4);
  if (child->subflow) {
    op_error(L, DC_ERR_INVALID_ARGUMENT, "g:graph", name,
             "a subflow's graph cannot be nested");
  }
  op_options_t o;
  read_options(L, 4, "g:graph", name, NULL, &o);
  check_op(L, dc_graph_add_graph(g->p, name, child->p, &o.o), name);
  // The child's callbacks are this graph's too: its instances run them
  // (and keep them, l_graph_run.c) even once the child is collected. Those
  // the child gains later come through share_with_parents.
  for (size_t i = 0; i < child->callback_count; ++i) {
    dclua_callback_retain(child->callbacks[i]);
    own_callback(L, g, child->callbacks[i]);
    share_with_parents(L, 1, child->callbacks[i], 0);
  }
  note_device(g, child->device);
  dclua_graph_field(L, 3, "parents");  // its changes invalidate ours
  lua_pushvalue(L, 1);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  record_op(L, 1, name, "graph");
  record_set(L, "child", 3);
  record_set(L, "opts", 4);
  lua_settop(L, 1);
  return 1;
}

// [-(2+n), +1, e]  g:after(op, dep, ...) -> g: op runs after every dep
// (names; either may be added later)
static int graph_after(lua_State* L) {
  dclua_graph_t* g = check_changeable(L, 1);
  const char* op = luaL_checkstring(L, 2);
  int top = lua_gettop(L);
  luaL_checkstring(L, 3);
  for (int i = 3; i <= top; ++i) {
    check_op(L, dc_graph_after(g->p, op, luaL_checkstring(L, i)), op);
  }
  lua_settop(L, 1);
  return 1;
}

//===-- Validation and DOT ----------------------------------------------===//

// [-1, +1, e]  g:validate() -> { warning, ... }; raises NOT_FOUND for an
// unknown `after` name and FAILED_PRECONDITION for a cycle (naming its
// ops in order)
static int graph_validate(lua_State* L) {
  dclua_graph_t* g = dclua_graph_check(L, 1);
  char* warnings = lua_newuserdatauv(L, 16384, 0);
  warnings[0] = '\0';
  DCLUA_CHECK(L, dc_graph_validate(g->p, warnings, 16384));
  lua_newtable(L);
  lua_Integer n = 0;
  for (const char* line = warnings; *line != '\0';) {
    const char* end = strchr(line, '\n');
    size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
    if (length > 0) {
      lua_pushlstring(L, line, length);
      lua_rawseti(L, -2, ++n);
    }
    line += length + (end != NULL);
  }
  return 1;
}

// [-1, +1, e]  g:dot() -> the graph in Graphviz DOT, edges labelled
// after/RAW/WAR/WAW
static int graph_dot(lua_State* L) {
  dclua_graph_t* g = dclua_graph_check(L, 1);
  size_t length = 0;
  DCLUA_CHECK(L, dc_graph_to_dot(g->p, NULL, 0, &length));
  luaL_Buffer b;
  char* text = luaL_buffinitsize(L, &b, length + 1);
  DCLUA_CHECK(L, dc_graph_to_dot(g->p, text, length + 1, &length));
  luaL_pushresultsize(&b, length);
  return 1;
}

//===-- dc.graph --------------------------------------------------------===//

static const char* const kGraphFields[] = {
    "name", "retry", "breaker", "fallback", "error_mode", "streams",
    "device", NULL};

// Reads `error_mode` ("finish", "stop" or "collect").
static dc_error_mode_t read_error_mode(lua_State* L, int index) {
  static const char* const names[] = {"finish", "stop", "collect", NULL};
  static const dc_error_mode_t modes[] = {DC_ERRORS_FINISH_INDEPENDENT,
                                          DC_ERRORS_STOP_AT_FIRST,
                                          DC_ERRORS_COLLECT_ALL};
  dc_error_mode_t mode = DC_ERRORS_FINISH_INDEPENDENT;
  if (lua_getfield(L, index, "error_mode") != LUA_TNIL) {
    const char* name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                       : "";
    int i = 0;
    while (names[i] != NULL && strcmp(names[i], name) != 0) ++i;
    if (names[i] == NULL) {
      dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                   "dc.graph: field 'error_mode' must be \"finish\", "
                   "\"stop\" or \"collect\", got %s",
                   luaL_tolstring(L, -1, NULL));
    }
    mode = modes[i];
  }
  lua_pop(L, 1);
  return mode;
}

// Raises INVALID_ARGUMENT for a bad field of dc.graph's options.
static int graph_field_error(lua_State* L, const char* field,
                             const char* expected) {
  return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                      "dc.graph: field '%s' must be %s, got %s", field,
                      expected, luaL_typename(L, -1));
}

// Reads `retry` and `breaker` (false: no breakers) into |params|; leaves
// the breaker on the stack when there is one (alive until the graph is
// made).
static void read_resilience(lua_State* L, int index, const char* name,
                            dc_graph_params_t* params,
                            dc_retry_policy_t* retry) {
  if (lua_getfield(L, index, "retry") != LUA_TNIL) {
    if (!lua_istable(L, -1) && !luaL_testudata(L, -1, DCLUA_RETRY)) {
      graph_field_error(L, "retry", "a dc.retry or a table");
    }
    dclua_check_retry(L, -1, retry);
    params->retry = retry;
  }
  lua_pop(L, 1);
  int type = lua_getfield(L, index, "breaker");
  if (type == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    params->no_breakers = true;
  } else if (type != LUA_TNIL) {
    if (type != LUA_TTABLE && !luaL_testudata(L, -1, DCLUA_BREAKER)) {
      graph_field_error(L, "breaker", "a dc.breaker, a table or false");
    }
    params->breaker = dclua_push_breaker_of(L, -1, name);
  }
}

// Reads `fallback` (a device, a name, or false: none) and `device`.
static void read_devices(lua_State* L, int index, dclua_graph_t* g,
                         dc_graph_params_t* params) {
  int type = lua_getfield(L, index, "fallback");
  if (type == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    params->no_fallback = true;
  } else if (type != LUA_TNIL) {
    if (type != LUA_TSTRING && dclua_box_test(L, -1, DCLUA_DEVICE) == NULL) {
      graph_field_error(L, "fallback", "a dc.device, a device name or false");
    }
    params->fallback = dclua_check_device(L, -1, false);
  }
  if (lua_getfield(L, index, "device") != LUA_TNIL) {
    if (lua_type(L, -1) != LUA_TSTRING &&
        dclua_box_test(L, -1, DCLUA_DEVICE) == NULL) {
      graph_field_error(L, "device", "a dc.device or a device name");
    }
    g->device = dclua_check_device(L, -1, false);
  }
  lua_pop(L, 2);
}

// Reads `name` and `streams`.
static void read_naming(lua_State* L, int index, dclua_graph_t* g) {
  if (lua_getfield(L, index, "name") != LUA_TNIL) {
    size_t length = 0;
    const char* name = lua_tolstring(L, -1, &length);
    if (lua_type(L, -1) != LUA_TSTRING || length == 0 ||
        length >= sizeof(g->name)) {
      dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "dc.graph: field 'name' must "
                   "be a string of 1 to %d bytes", (int)sizeof(g->name) - 1);
    }
    memcpy(g->name, name, length + 1);
  }
  if (lua_getfield(L, index, "streams") != LUA_TNIL) {
    int ok = 0;
    lua_Integer n = lua_tointegerx(L, -1, &ok);
    if (!ok || n < 1 || n > 64) {
      dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "dc.graph: field 'streams' "
                   "must be an integer from 1 to 64, got %s",
                   luaL_tolstring(L, -1, NULL));
    }
    g->streams = (uint32_t)n;
  }
  lua_pop(L, 2);
}

// [-1, +1, e]  dc.graph([opts]) -> dc.graph
// opts: name, retry (dc.retry), breaker (dc.breaker, or false: none),
// fallback (device or name, or false: none), error_mode ("finish",
// "stop", "collect"), streams (of the stream group it runs on), device
// (where it runs; default: where its first op's buffers are).
static int l_graph(lua_State* L) {
  lua_settop(L, 1);
  if (lua_isnil(L, 1)) {
    lua_newtable(L);
    lua_replace(L, 1);
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  dclua_check_fields(L, 1, "dc.graph", kGraphFields);
  dclua_graph_t* g = new_graph(L);
  snprintf(g->name, sizeof(g->name), "graph");
  dc_retry_policy_t retry;
  dc_graph_params_t params = {.error_mode = read_error_mode(L, 1)};
  read_naming(L, 1, g);
  read_devices(L, 1, g, &params);
  read_resilience(L, 1, g->name, &params, &retry);
  params.name = g->name;
  DCLUA_CHECK(L, dc_graph_create(dclua_context(L), &params, &g->p));
  lua_settop(L, 2);  // the graph
  return 1;
}

void dclua_open_graph(lua_State* L) {
  static const luaL_Reg meta[] = {{"__gc", graph_gc},
                                  {"__close", graph_close},
                                  {"__len", graph_len},
                                  {"__tostring", graph_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"dispatch", graph_dispatch},
      {"dispatch_indirect", graph_dispatch_indirect},
      {"copy", graph_copy},
      {"fill", graph_fill},
      {"host", graph_host},
      {"subflow", graph_subflow},
      {"graph", graph_graph},
      {"after", graph_after},
      {"validate", graph_validate},
      {"dot", graph_dot},
      {"close", graph_close},
      {NULL, NULL}};
  dclua_class_new(L, DCLUA_GRAPH, meta, methods);
  luaL_getmetatable(L, DCLUA_GRAPH);
  lua_getfield(L, -1, "__index");
  dclua_open_graph_run(L);
  lua_pop(L, 2);
  lua_pushcfunction(L, l_graph);
  lua_setfield(L, -2, "graph");
}

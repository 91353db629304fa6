// l_graph_run.c: running graphs: instances (dc.exec), runs, replay with
// new arguments, metrics and the progress line. The report of a run is
// l_graph_report.c.
//
// g:run() instantiates the graph on first need and keeps that instance
// for later runs (cheap replays); g:instantiate() makes an independent
// one. An instance copies the graph's plan, but the core's instances
// borrow the graph's op records, so a change to a graph (a new op or
// edge, in it or in a graph it nests) closes its instances: the next
// g:run() instantiates again, and a script's own dc.exec raises "attempt
// to use a closed dc.exec". A change while one of them runs is refused.
//
// A run waits through dclua_wait: the Lua thread runs host and subflow
// ops (and other queued Lua callbacks) while the engine's threads run the
// rest. What a run holds is released by a to-be-closed guard, so an error
// raised while waiting (a posted callback's) still ends the run cleanly.
// A failed run raises an error object whose `report` field has the
// report; g:run { raise = false } returns the report instead.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_graph.h"
#include "l_watchdog.h"
#include "l_progress.h"

#define GUARD_MT "dc.graph.run"

static const char runs_key = 'r';  // registry: runs in progress

//===-- Instances -------------------------------------------------------===//

// A dc.exec; its first field is the box's pointer. Its user value is a
// table: graph (the dc.graph, kept alive), report (the last run's), args
// (values bound by set_arg, kept alive).
typedef struct exec_t {
  dc_graph_exec_t* p;
  dc_stream_group_t* group;
  bool running;
  char name[64];
  // The graph's callbacks (host ops, subflows), retained while the
  // instance may run them: the graph's own references go when it is
  // collected or its __gc is called, which must not free what an
  // instance still runs.
  dclua_callback_t** callbacks;
  size_t callback_count;
} exec_t;

static exec_t* check_exec(lua_State* L, int index) {
  dclua_box_check(L, index, DCLUA_EXEC);
  return lua_touserdata(L, index);
}

// Destroys the instance at |index| (not running).
static void destroy_exec(exec_t* e) {
  dc_graph_exec_release(e->p);
  e->p = NULL;
  dc_stream_group_release(e->group);
  e->group = NULL;
  for (size_t i = 0; i < e->callback_count; ++i) {
    dclua_callback_release(e->callbacks[i]);
  }
  free(e->callbacks);
  e->callbacks = NULL;
  e->callback_count = 0;
}

// Retains the graph's callbacks for instance |e| (see exec_t).
static void hold_callbacks(lua_State* L, exec_t* e, const dclua_graph_t* g) {
  if (g->callback_count == 0) return;
  e->callbacks = malloc(g->callback_count * sizeof(*e->callbacks));
  if (e->callbacks == NULL) {
    dclua_raisef(L, DC_ERR_OUT_OF_MEMORY, "graph '%s': out of memory",
                 g->name);
  }
  for (size_t i = 0; i < g->callback_count; ++i) {
    dclua_callback_retain(g->callbacks[i]);
    e->callbacks[i] = g->callbacks[i];
  }
  e->callback_count = g->callback_count;
}

// [-1, +0, e]  exec:close(); also __close and __gc
static int exec_close(lua_State* L) {
  exec_t* e = dclua_udata_check(L, 1, DCLUA_EXEC);
  if (e->running) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "graph '%s': an instance cannot be closed while it runs",
                 e->name);
  }
  destroy_exec(e);
  return 0;
}

// [-1, +1, -]  #exec -> the number of ops, nested graphs flattened
static int exec_len(lua_State* L) {
  exec_t* e = check_exec(L, 1);
  lua_pushinteger(L, (lua_Integer)dc_graph_exec_op_count(e->p));
  return 1;
}

// [-1, +1, m]  tostring(exec) -> "dc.exec of graph 'g' (3 ops)"
static int exec_tostring(lua_State* L) {
  exec_t* e = dclua_udata_check(L, 1, DCLUA_EXEC);
  if (e->p == NULL) {
    lua_pushfstring(L, "dc.exec of graph '%s' (closed)", e->name);
  } else {
    lua_pushfstring(L, "dc.exec of graph '%s' (%d ops)", e->name,
                    (int)dc_graph_exec_op_count(e->p));
  }
  return 1;
}

//===-- Instantiating ---------------------------------------------------===//

// Where the graph at |index| runs: its device, else the first one a graph
// it nests has (nested graphs may get their ops after being added).
static dc_device_t* graph_device(lua_State* L, int index, int depth) {
  dc_device_t* device = dclua_graph_check(L, index)->device;
  if (device != NULL || depth > 64) return device;
  dclua_graph_field(L, index, "ops");
  lua_pushnil(L);
  while (device == NULL && lua_next(L, -2) != 0) {
    if (lua_getfield(L, -1, "child") != LUA_TNIL) {
      device = graph_device(L, lua_gettop(L), depth + 1);
    }
    lua_pop(L, 2);
  }
  lua_settop(L, lua_gettop(L) - (device != NULL ? 2 : 1));
  return device;
}

// Pushes a new instance of the graph at |index| on a new stream group.
static exec_t* instantiate(lua_State* L, int index) {
  index = lua_absindex(L, index);
  dclua_graph_t* g = dclua_graph_check(L, index);
  if (g->subflow) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "a subflow's graph runs as part of its op");
  }
  dc_device_t* device = graph_device(L, index, 0);
  if (device == NULL) {
    DCLUA_CHECK(L, dc_context_default_device(dclua_context(L), &device));
  }
  exec_t* e = lua_newuserdatauv(L, sizeof(*e), 1);
  memset(e, 0, sizeof(*e));
  luaL_setmetatable(L, DCLUA_EXEC);
  memcpy(e->name, g->name, sizeof(e->name));
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, index);
  lua_setfield(L, -2, "graph");
  lua_setiuservalue(L, -2, 1);
  dc_stream_group_params_t params = {.count = g->streams, .label = g->name};
  DCLUA_CHECK(L, dc_stream_group_create(device, &params, &e->group));
  hold_callbacks(L, e, g);
  DCLUA_CHECK(L, dc_graph_instantiate(g->p, e->group, &e->p));
  dclua_graph_field(L, index, "execs");
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return e;
}

// Pushes the instance g:run() uses, making it on first need.
static exec_t* cached_exec(lua_State* L, int index) {
  dclua_graph_check(L, index);
  dclua_graph_field(L, index, "exec");
  exec_t* e = luaL_testudata(L, -1, DCLUA_EXEC);
  if (e != NULL && e->p != NULL) return e;
  lua_pop(L, 1);
  e = instantiate(L, index);
  lua_getiuservalue(L, index, 1);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "exec");
  lua_pop(L, 1);
  return e;
}

// [-1, +1, e]  g:instantiate() -> dc.exec, a new instance: validates,
// plans onto a new stream group of the graph's device
static int graph_instantiate(lua_State* L) {
  instantiate(L, 1);
  return 1;
}

// Calls |fn| on every instance of the graph at |graph|.
static void each_exec(lua_State* L, int graph,
                      void (*fn)(lua_State* L, exec_t* e)) {
  dclua_graph_field(L, graph, "execs");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    exec_t* e = luaL_testudata(L, -1, DCLUA_EXEC);
    if (e != NULL) fn(L, e);
  }
  lua_pop(L, 1);
}

// Calls |visit| on the graph at |graph| and on every graph that nests it,
// at any depth (nesting is acyclic; the depth only bounds it).
static void each_nesting(lua_State* L, int graph, int depth,
                         void (*visit)(lua_State* L, int graph)) {
  if (depth > 64) return;
  visit(L, graph);
  dclua_graph_field(L, graph, "parents");
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    each_nesting(L, lua_gettop(L), depth + 1, visit);
  }
  lua_pop(L, 1);
}

static void refuse_running(lua_State* L, exec_t* e) {
  if (e->running) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "graph '%s' cannot change while it runs", e->name);
  }
}

static void close_exec(lua_State* L, exec_t* e) {
  (void)L;
  destroy_exec(e);
}

static void cancel_running(lua_State* L, exec_t* e) {
  (void)L;
  if (e->p != NULL && e->running) dc_graph_exec_cancel(e->p);
}

// Raises if an instance of the graph at |graph| is running.
static void check_idle(lua_State* L, int graph) {
  each_exec(L, graph, refuse_running);
}

// Closes the instances of the graph at |graph|, the cached one included.
static void invalidate(lua_State* L, int graph) {
  each_exec(L, graph, close_exec);
  lua_getiuservalue(L, graph, 1);
  lua_pushnil(L);
  lua_setfield(L, -2, "exec");
  lua_pop(L, 1);
}

void dclua_graph_changing(lua_State* L, int index) {
  index = lua_absindex(L, index);
  each_nesting(L, index, 0, check_idle);
  each_nesting(L, index, 0, invalidate);
}

//===-- Subflows of the runs in progress --------------------------------===//

// Pushes the registry's table of runs: `depth` (runs in progress, nested
// runs included) and the subflow graphs they made, in its array part.
static void push_runs(lua_State* L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &runs_key) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_createtable(L, 4, 1);
    lua_pushinteger(L, 0);
    lua_setfield(L, -2, "depth");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &runs_key);
  }
}

void dclua_graph_track_subflow(lua_State* L, int index) {
  index = lua_absindex(L, index);
  push_runs(L);
  lua_pushvalue(L, index);
  lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
  lua_pop(L, 1);
}

// Counts a run in (|delta| 1) or out (-1). When the last run ends, no
// subflow can run any more: their graphs are closed. (Tying them to the
// run that made them is not possible: the Lua thread serves every run's
// callbacks while any run waits.)
static void count_run(lua_State* L, int delta) {
  push_runs(L);
  lua_getfield(L, -1, "depth");
  lua_Integer depth = lua_tointeger(L, -1) + delta;
  lua_pop(L, 1);
  lua_pushinteger(L, depth);
  lua_setfield(L, -2, "depth");
  if (depth == 0) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      dclua_graph_free(L, -1);
      lua_pop(L, 1);
      lua_pushnil(L);
      lua_rawseti(L, -2, i);
    }
  }
  lua_pop(L, 1);
}

//===-- The run guard and the progress line -----------------------------===//

// What a run holds until it ends, released by the guard's __close: the
// instance's running mark, the count of runs, and the progress line
// ("graph 'g': 512/1000 ops  1.2 s", l_progress.h).
typedef struct guard_t {
  exec_t* exec;  // the instance, on the stack below the guard
  dc_cancel_token_t* token;  // the run's, retained: a script may close it
  bool open;
  dclua_progress_t* progress;  // NULL: no line
  uint64_t start_ns;
} guard_t;

// The progress line's count: the ops that have finished. Any thread.
static uint64_t finished_ops(void* exec) {
  return dc_graph_exec_finished(exec);
}

// Begins the progress line of the run |t| guards, as |request| asks (the
// line is for runs of many ops).
static void start_progress(lua_State* L, guard_t* t, int request) {
  size_t total = dc_graph_exec_op_count(t->exec->p);
  if (total < 2) return;
  char label[96];
  snprintf(label, sizeof(label), "graph '%s'", t->exec->name);
  dclua_progress_params_t params = {
      .label = label,
      .kind = DCLUA_PROGRESS_COUNT,
      .unit = "ops",
      .total = total,
      .poll = finished_ops,
      .poll_data = t->exec->p,
      .request = request,
  };
  t->progress = dclua_progress_begin(L, &params);
}

// [-1, +0, e]  __close and __gc of a run's guard: ends the run's hold.
static int guard_close(lua_State* L) {
  guard_t* t = luaL_checkudata(L, 1, GUARD_MT);
  if (!t->open) return 0;
  t->open = false;
  dclua_progress_end(t->progress);  // the final count stays
  t->progress = NULL;
  dc_cancel_token_release(t->token);
  t->token = NULL;
  t->exec->running = false;
  count_run(L, -1);
  return 0;
}

//===-- Run options -----------------------------------------------------===//

typedef struct run_options_t {
  dc_run_params_t params;
  bool raise;
  int progress;  // a dclua_progress_params_t request
} run_options_t;

static const char* const kRunFields[] = {"timeout", "token", "raise",
                                         "progress", NULL};

static void check_run_fields(lua_State* L, int index) {
  if (!dclua_push_unknown_key(L, index, kRunFields)) return;
  const char* key = luaL_tolstring(L, -1, NULL);
  dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "run: unknown option '%s' "
               "(options: %s)", key, dclua_push_names(L, kRunFields));
}

// Reads the run options at |index| (none or nil: the defaults).
static void read_run_options(lua_State* L, int index, run_options_t* out) {
  memset(out, 0, sizeof(*out));
  out->raise = true;
  out->progress = DCLUA_PROGRESS_DEFAULT;
  if (lua_isnoneornil(L, index)) return;
  luaL_checktype(L, index, LUA_TTABLE);
  check_run_fields(L, index);
  if (lua_getfield(L, index, "timeout") != LUA_TNIL) {
    double s = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(s > 0) || s > 1e9) {
      dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "run: option 'timeout' must "
                   "be a positive number of seconds, got %s",
                   luaL_tolstring(L, -1, NULL));
    }
    out->params.timeout_ns = dclua_seconds_to_ns(s);
  }
  if (lua_getfield(L, index, "token") != LUA_TNIL) {
    if (dclua_box_test(L, -1, DCLUA_TOKEN) == NULL) {
      dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "run: option 'token' must be "
                   "a dc.token, got %s", luaL_typename(L, -1));
    }
    out->params.cancel = dclua_box_check(L, -1, DCLUA_TOKEN);
  }
  if (lua_getfield(L, index, "raise") != LUA_TNIL) {
    out->raise = lua_toboolean(L, -1);
  }
  if (lua_getfield(L, index, "progress") != LUA_TNIL) {
    out->progress = lua_toboolean(L, -1) ? DCLUA_PROGRESS_ON
                                          : DCLUA_PROGRESS_OFF;
  }
  lua_pop(L, 4);
}

//===-- Running ---------------------------------------------------------===//

typedef struct run_call_t {
  dc_graph_exec_t* exec;
  dc_run_params_t params;
} run_call_t;

// The wait dclua_wait runs (on a thread of its own while Lua callbacks
// are live): the whole run.
static dc_status_t run_wait(void* user_data) {
  run_call_t* call = user_data;
  return dc_graph_exec_run(call->exec, &call->params);
}

// Raises the failure of a run: an error object with the run's status and
// message, `op` (the first failed op in the plan's order, the one the
// message names) and `report`.
static int raise_failure(lua_State* L, exec_t* e, dc_status_t status,
                         const char* message, int report) {
  dc_set_error(status, "%s", message);
  dclua_push_error(L, status);
  size_t count = dc_graph_exec_op_count(e->p);
  for (size_t i = 0; i < count; ++i) {
    dc_op_report_t r;
    if (dc_graph_exec_op(e->p, i, &r) == DC_OK && r.state == DC_OP_FAILED) {
      lua_pushstring(L, r.name);
      lua_setfield(L, -2, "op");
      break;
    }
  }
  lua_pushvalue(L, report);
  lua_setfield(L, -2, "report");
  return lua_error(L);
}

// Runs the instance at |index| with the options at |options|: pushes the
// report, or raises the failure.
static int run_exec(lua_State* L, int index, int options) {
  exec_t* e = check_exec(L, index);
  run_options_t o;
  read_run_options(L, options, &o);
  if (e->running) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION, "graph '%s' is already "
                 "running", e->name);
  }
  guard_t* guard = lua_newuserdatauv(L, sizeof(*guard), 0);
  memset(guard, 0, sizeof(*guard));
  luaL_setmetatable(L, GUARD_MT);
  int guard_index = lua_gettop(L);
  lua_toclose(L, guard_index);
  count_run(L, 1);
  guard->exec = e;
  guard->open = true;  // from here the guard undoes what follows
  e->running = true;
  guard->token = o.params.cancel;
  if (guard->token != NULL) dc_cancel_token_retain(guard->token);
  guard->start_ns = dclua_now_ns();
  start_progress(L, guard, o.progress);
  run_call_t call = {e->p, o.params};
  // The run ends at the script's time limit too (l_watchdog.h).
  bool limited = false;
  uint64_t budget = dclua_wait_budget_ns(
      L, o.params.timeout_ns ? o.params.timeout_ns : DC_TIMEOUT_INFINITE,
      &limited);
  if (limited) call.params.timeout_ns = budget ? budget : 1;
  dc_status_t status = dclua_wait(L, run_wait, &call);
  double elapsed_ms = (double)(dclua_now_ns() - guard->start_ns) / 1e6;
  char message[1024] = "";
  if (status != DC_OK) snprintf(message, sizeof(message), "%s", dc_last_error());
  lua_closeslot(L, guard_index);  // the run is over
  lua_getiuservalue(L, index, 1);
  lua_getfield(L, -1, "graph");
  dclua_graph_push_report(L, lua_gettop(L), e->p, status, message,
                          elapsed_ms);
  lua_replace(L, -3);
  lua_pop(L, 1);
  lua_getiuservalue(L, index, 1);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "report");
  lua_pop(L, 1);
  dclua_wait_ended(L, status, limited);
  if (status != DC_OK && o.raise) {
    raise_failure(L, e, status, message, lua_gettop(L));
  }
  return 1;
}

// [-2, +1, e]  g:run([opts]) -> report
// opts: timeout (s), token (dc.token), raise (default true: a failed run
// raises an error object with `report`; false: returns the report with
// ok = false), progress (a progress line on stderr; default: the
// runner's setting). Instantiates the graph on first need and reuses
// that instance.
static int graph_run(lua_State* L) {
  dclua_graph_check(L, 1);
  lua_settop(L, 2);
  cached_exec(L, 1);
  return run_exec(L, 3, 2);
}

// [-2, +1, e]  exec:run([opts]) -> report, as g:run
static int exec_run(lua_State* L) {
  check_exec(L, 1);
  lua_settop(L, 2);
  return run_exec(L, 1, 2);
}

// [-1, +1, e]  g:cancel() -> g: cancels the runs of the graph's
// instances in progress (called from a host op: ops that have not started
// are cancelled, running ones finish)
static int graph_cancel(lua_State* L) {
  dclua_graph_check(L, 1);
  each_exec(L, 1, cancel_running);
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  exec:cancel() -> exec
static int exec_cancel(lua_State* L) {
  exec_t* e = check_exec(L, 1);
  if (e->running) dc_graph_exec_cancel(e->p);
  lua_settop(L, 1);
  return 1;
}

//===-- Replay with new arguments ---------------------------------------===//

// Pushes the record of op |path| ("op", or "nested/op" through nested
// graphs) of the graph at |graph|, or nil.
static void find_record(lua_State* L, int graph, const char* path,
                        int depth) {
  int top = lua_gettop(L);
  dclua_graph_field(L, graph, "ops");
  if (lua_getfield(L, top + 1, path) == LUA_TNIL && depth <= 64) {
    for (const char* slash = strchr(path, '/'); slash != NULL;
         slash = strchr(slash + 1, '/')) {
      lua_settop(L, top + 1);
      lua_pushlstring(L, path, (size_t)(slash - path));
      if (lua_rawget(L, top + 1) == LUA_TTABLE &&
          lua_getfield(L, -1, "child") != LUA_TNIL) {
        find_record(L, top + 3, slash + 1, depth + 1);
        if (!lua_isnil(L, -1)) break;
      }
    }
  }
  if (!lua_istable(L, -1)) lua_pushnil(L);
  lua_replace(L, top + 1);
  lua_settop(L, top + 1);
}

// The index (0-based) of the argument given at |index|: a position
// (1-based) or a parameter name.
static size_t arg_index(lua_State* L, int index, dc_kernel_t* kernel,
                        const char* op) {
  dc_kernel_info_t info;
  DCLUA_CHECK(L, dc_kernel_info(kernel, &info));
  if (lua_type(L, index) == LUA_TSTRING) {
    size_t i = 0;
    if (dc_kernel_find_arg(kernel, lua_tostring(L, index), &i) != DC_OK) {
      dclua_raise_with(L, DC_ERR_NOT_FOUND, "op", op);
    }
    return i;
  }
  int ok = 0;
  lua_Integer i = lua_tointegerx(L, index, &ok);
  if (!ok || i < 1 || (size_t)i > info.arg_count) {
    dc_set_error(DC_ERR_INVALID_ARGUMENT, "set_arg: op '%s': argument %s is "
                 "not a position from 1 to %d or a parameter name", op,
                 luaL_tolstring(L, index, NULL), (int)info.arg_count);
    dclua_raise_with(L, DC_ERR_INVALID_ARGUMENT, "op", op);
  }
  return (size_t)i - 1;
}

// [-4, +1, e]  exec:set_arg(op, index_or_name, value) -> exec
// Changes one argument of dispatch |op| for later runs: a scalar of the
// same type, or a buffer of the same dtype and length.
static int exec_set_arg(lua_State* L) {
  exec_t* e = check_exec(L, 1);
  const char* op = luaL_checkstring(L, 2);
  luaL_checkany(L, 4);
  lua_settop(L, 4);
  lua_getiuservalue(L, 1, 1);
  lua_getfield(L, -1, "graph");
  find_record(L, lua_gettop(L), op, 0);
  if (lua_isnil(L, -1)) {
    dc_set_error(DC_ERR_NOT_FOUND, "set_arg: graph '%s' has no op '%s'",
                 e->name, op);
    dclua_raise_with(L, DC_ERR_NOT_FOUND, "op", op);
  }
  lua_getfield(L, -1, "kind");
  if (lua_getfield(L, -2, "kernel") == LUA_TNIL) {
    dc_set_error(DC_ERR_INVALID_ARGUMENT, "set_arg: op '%s' is a %s op, not "
                 "a dispatch", op, lua_tostring(L, -2));
    dclua_raise_with(L, DC_ERR_INVALID_ARGUMENT, "op", op);
  }
  dc_kernel_t* kernel = dclua_check_kernel(L, -1);
  size_t i = arg_index(L, 3, kernel, op);
  dc_arg_t arg;
  dclua_arg_from_value(L, kernel, i, 4, &arg);
  dc_status_t st = dc_graph_exec_set_arg(e->p, op, i, &arg);
  if (st != DC_OK) dclua_raise_with(L, st, "op", op);
  if (lua_getfield(L, 5, "args") == LUA_TNIL) {  // keeps the value alive
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, 5, "args");
  }
  lua_pushfstring(L, "%s#%d", op, (int)i);
  lua_pushvalue(L, 4);
  lua_rawset(L, -3);
  lua_settop(L, 1);
  return 1;
}

//===-- Metrics, last report, DOT ---------------------------------------===//

// Pushes { [op] = { runs, last_ms, mean_ms, p95_ms } } of instance |e|
// (empty for none).
static void push_metrics(lua_State* L, exec_t* e) {
  size_t count = e != NULL && e->p != NULL ? dc_graph_exec_op_count(e->p) : 0;
  lua_createtable(L, 0, (int)count);
  for (size_t i = 0; i < count; ++i) {
    dc_op_report_t r;
    DCLUA_CHECK(L, dc_graph_exec_op(e->p, i, &r));
    lua_createtable(L, 0, 4);
    dclua_set_integer(L, "runs", r.runs);
    dclua_set_number(L, "last_ms", (double)r.duration_ns / 1e6);
    dclua_set_number(L, "mean_ms", r.mean_ns / 1e6);
    dclua_set_number(L, "p95_ms", r.p95_ns / 1e6);
    lua_setfield(L, -2, r.name);
  }
}

// [-1, +1, e]  g:metrics() -> { [op] = { runs, last_ms, mean_ms, p95_ms } }
// over the runs of g:run() (successful runs of each op; p95 over the
// last 64)
static int graph_metrics(lua_State* L) {
  dclua_graph_check(L, 1);
  dclua_graph_field(L, 1, "exec");
  push_metrics(L, luaL_testudata(L, -1, DCLUA_EXEC));
  return 1;
}

// [-1, +1, e]  exec:metrics() -> as g:metrics, for this instance
static int exec_metrics(lua_State* L) {
  push_metrics(L, check_exec(L, 1));
  return 1;
}

// [-1, +1, e]  exec:report() -> the last run's report, or nil
static int exec_report(lua_State* L) {
  check_exec(L, 1);
  lua_getiuservalue(L, 1, 1);
  lua_getfield(L, -1, "report");
  return 1;
}

// [-1, +1, e]  exec:dot() -> DOT of the instance: each op's stream, and
// its state in the last run as its colour
static int exec_dot(lua_State* L) {
  exec_t* e = check_exec(L, 1);
  size_t length = 0;
  DCLUA_CHECK(L, dc_graph_exec_to_dot(e->p, NULL, 0, &length));
  luaL_Buffer b;
  char* text = luaL_buffinitsize(L, &b, length + 1);
  DCLUA_CHECK(L, dc_graph_exec_to_dot(e->p, text, length + 1, &length));
  luaL_pushresultsize(&b, length);
  return 1;
}

void dclua_open_graph_run(lua_State* L) {
  static const luaL_Reg exec_meta[] = {{"__gc", exec_close},
                                       {"__close", exec_close},
                                       {"__len", exec_len},
                                       {"__tostring", exec_tostring},
                                       {NULL, NULL}};
  static const luaL_Reg exec_methods[] = {{"run", exec_run},
                                          {"set_arg", exec_set_arg},
                                          {"cancel", exec_cancel},
                                          {"metrics", exec_metrics},
                                          {"report", exec_report},
                                          {"dot", exec_dot},
                                          {"close", exec_close},
                                          {NULL, NULL}};
  static const luaL_Reg guard_meta[] = {{"__close", guard_close},
                                        {"__gc", guard_close},
                                        {NULL, NULL}};
  static const luaL_Reg graph_methods[] = {{"run", graph_run},
                                           {"instantiate", graph_instantiate},
                                           {"cancel", graph_cancel},
                                           {"metrics", graph_metrics},
                                           {NULL, NULL}};
  dclua_set_funcs(L, graph_methods);
  dclua_class_new(L, DCLUA_EXEC, exec_meta, exec_methods);
  dclua_open_graph_report(L);
  dclua_class_new(L, GUARD_MT, guard_meta, NULL);
}

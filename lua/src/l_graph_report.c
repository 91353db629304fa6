// l_graph_report.c: the report of a graph run (dc.report): a table of the
// run's outcome and of every op's, in the order the ops were added, that
// prints as one line per op.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_graph.h"

#define REPORT_MT "dc.report"

static const char* const kStates[] = {"pending", "ok", "failed",
                                      "cancelled"};

// Adds to the table at |ranks| the flattened names of the ops of the
// graph at |graph| (nested graphs in place of their op, as
// "<op>/<child op>"), each mapped to its rank in the order of adding.
static void rank_ops(lua_State* L, int graph, int ranks, const char* prefix,
                     lua_Integer* rank, int depth) {
  if (depth > 64) return;  // nesting is acyclic; this only bounds it
  dclua_graph_field(L, graph, "order");
  int order = lua_gettop(L);
  dclua_graph_field(L, graph, "ops");
  int ops = order + 1;
  lua_Integer n = (lua_Integer)lua_rawlen(L, order);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, order, i);
    const char* full = lua_pushfstring(L, "%s%s", prefix, lua_tostring(L, -1));
    lua_getfield(L, ops, lua_tostring(L, -2));
    if (lua_getfield(L, -1, "child") != LUA_TNIL) {
      int child = lua_gettop(L);
      rank_ops(L, child, ranks, lua_pushfstring(L, "%s/", full), rank,
               depth + 1);
    } else {
      lua_pushinteger(L, ++*rank);
      lua_setfield(L, ranks, full);
    }
    lua_settop(L, ops);
  }
  lua_settop(L, order - 1);
}

typedef struct ranked_t {
  lua_Integer rank;
  size_t index;  // in the plan
} ranked_t;

static int by_rank(const void* a, const void* b) {
  const ranked_t* x = a;
  const ranked_t* y = b;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

// Returns the indices of |exec|'s ops (in its plan) in the order they
// were added to the graph at |graph| (a userdata left on the stack).
static ranked_t* ops_in_order(lua_State* L, int graph, dc_graph_exec_t* exec,
                              size_t count) {
  lua_newtable(L);
  int ranks = lua_gettop(L);
  lua_Integer rank = 0;
  rank_ops(L, graph, ranks, "", &rank, 0);
  lua_settop(L, ranks);
  ranked_t* order = lua_newuserdatauv(L, (count ? count : 1) * sizeof(*order),
                                      0);
  for (size_t i = 0; i < count; ++i) {
    dc_op_report_t r;
    DCLUA_CHECK(L, dc_graph_exec_op(exec, i, &r));
    lua_getfield(L, ranks, r.name);
    order[i].rank = lua_isinteger(L, -1) ? lua_tointeger(L, -1)
                                         : rank + 1 + (lua_Integer)i;
    order[i].index = i;
    lua_pop(L, 1);
  }
  qsort(order, count, sizeof(*order), by_rank);
  lua_remove(L, -2);
  return order;
}

// Pushes an error object for a failed or cancelled op.
static void push_op_error(lua_State* L, const dc_op_report_t* r) {
  dc_set_error(r->status, "%s", r->message);
  dclua_push_error(L, r->status);
  dclua_set_string(L, "op", r->name);
}

// Pushes the table describing one op after the last run.
static void push_op(lua_State* L, const dc_op_report_t* r) {
  lua_createtable(L, 0, 13);
  dclua_set_string(L, "name", r->name);
  dclua_set_string(L, "kind", r->kind);
  dclua_set_string(L, "state", kStates[r->state]);
  bool host = strcmp(r->kind, "host") == 0 || strcmp(r->kind, "subflow") == 0;
  dclua_set_string(L, "device", r->device[0] != '\0' ? r->device
                                : host ? "host"
                                       : "-");  // it did not run
  dclua_set_integer(L, "stream", r->stream_id);
  dclua_set_integer(L, "attempts", r->attempts);
  dclua_set_number(L, "time_ms", (double)r->duration_ns / 1e6);
  dclua_set_boolean(L, "fell_back", r->fell_back);
  dclua_set_integer(L, "runs", r->runs);
  dclua_set_number(L, "mean_ms", r->mean_ns / 1e6);
  dclua_set_number(L, "p95_ms", r->p95_ns / 1e6);
  if (r->state == DC_OP_FAILED || r->state == DC_OP_CANCELLED) {
    push_op_error(L, r);
    lua_setfield(L, -2, "error");
  }
}

void dclua_graph_push_report(lua_State* L, int graph, dc_graph_exec_t* exec,
                             dc_status_t status, const char* message,
                             double elapsed_ms) {
  graph = lua_absindex(L, graph);
  size_t count = dc_graph_exec_op_count(exec);
  ranked_t* order = ops_in_order(L, graph, exec, count);
  lua_createtable(L, 0, 6);
  dclua_set_boolean(L, "ok", status == DC_OK);
  dclua_set_string(L, "status", dc_status_name(status));
  dclua_set_string(L, "message", message);
  dclua_set_number(L, "elapsed_ms", elapsed_ms);
  lua_createtable(L, (int)count, (int)count);
  for (size_t i = 0; i < count; ++i) {
    dc_op_report_t r;
    DCLUA_CHECK(L, dc_graph_exec_op(exec, order[i].index, &r));
    push_op(L, &r);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, r.name);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "ops");
  luaL_setmetatable(L, REPORT_MT);
  lua_remove(L, -2);  // the order
}

// [-2, +1, -]  report.name -> the op of that name (report.ops[name]), for
// names that are not fields of the report
static int report_index(lua_State* L) {
  dclua_table_check(L, 1, REPORT_MT);
  lua_pushliteral(L, "ops");
  if (lua_rawget(L, 1) != LUA_TTABLE) return 0;
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

// [-1, +1, -]  #report -> the number of ops
static int report_len(lua_State* L) {
  dclua_table_check(L, 1, REPORT_MT);
  lua_pushliteral(L, "ops");
  lua_rawget(L, 1);
  lua_pushinteger(L, lua_istable(L, -1) ? (lua_Integer)lua_rawlen(L, -1) : 0);
  return 1;
}

// Copies string field |key| of the table at the top into |out|.
static void copy_field(lua_State* L, const char* key, char* out,
                       size_t size) {
  lua_getfield(L, -1, key);
  snprintf(out, size, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
  lua_pop(L, 1);
}

// Writes the note that ends the line of the op table at the top: the
// fallback, the retries, or why it failed or was cancelled.
static void format_note(lua_State* L, const char* state, char* out,
                        size_t size) {
  int op = lua_gettop(L);
  char device[64];
  copy_field(L, "device", device, sizeof(device));
  lua_getfield(L, op, "attempts");
  lua_Integer attempts = lua_tointeger(L, -1);
  lua_getfield(L, op, "fell_back");
  bool fell_back = lua_toboolean(L, -1);
  lua_getfield(L, op, "error");
  const char* why = lua_istable(L, -1) ? luaL_tolstring(L, -1, NULL) : NULL;
  int used = fell_back ? snprintf(out, size, "   (fell back to %s)", device)
                       : snprintf(out, size, "%s", "");
  if (strcmp(state, "ok") == 0 && attempts > 1) {
    snprintf(out + used, size - (size_t)used, "   (%lld failure%s retried)",
             (long long)attempts - 1, attempts > 2 ? "s" : "");
  } else if (why != NULL) {
    snprintf(out + used, size - (size_t)used, "   %s", why);
  }
  lua_settop(L, op);
}

// Writes the line of the op table at the top:
//   "blur_x   ok          cpu    attempts 1      0.412 ms"
static void format_op(lua_State* L, int name_width, int device_width,
                      char* line, size_t size) {
  char name[160], state[16], device[64], kind[24], note[640];
  copy_field(L, "name", name, sizeof(name));
  copy_field(L, "state", state, sizeof(state));
  copy_field(L, "device", device, sizeof(device));
  copy_field(L, "kind", kind, sizeof(kind));
  lua_getfield(L, -1, "attempts");
  lua_Integer attempts = lua_tointeger(L, -1);
  lua_getfield(L, -2, "time_ms");
  double ms = lua_tonumber(L, -1);
  lua_pop(L, 2);
  format_note(L, state, note, sizeof(note));
  char tries[24] = "";
  if (strcmp(device, "host") != 0 || attempts > 1) {
    snprintf(tries, sizeof(tries), "attempts %lld", (long long)attempts);
  }
  snprintf(line, size, "%-*s  %-9s  %-*s  %-11s %9.3f ms%s", name_width,
           name, strcmp(state, "failed") == 0 ? "FAILED" : state,
           device_width, device, tries, ms, note);
}

// [-1, +1, m]  tostring(report) -> one line per op:
//   name  state  device  attempts n  time  [(fell back to d)|error]
static int report_tostring(lua_State* L) {
  dclua_table_check(L, 1, REPORT_MT);
  lua_pushliteral(L, "ops");
  if (lua_rawget(L, 1) != LUA_TTABLE) return luaL_error(L, "not a report");
  int ops = lua_gettop(L);
  lua_Integer n = (lua_Integer)lua_rawlen(L, ops);
  int name_width = 8, device_width = 4;
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, ops, i);
    lua_getfield(L, -1, "name");
    lua_getfield(L, -2, "device");
    int w = (int)lua_rawlen(L, -2), d = (int)lua_rawlen(L, -1);
    if (w > name_width) name_width = w < 60 ? w : 60;
    if (d > device_width) device_width = d < 20 ? d : 20;
    lua_pop(L, 3);
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (lua_Integer i = 1; i <= n; ++i) {
    char line[1024];
    lua_rawgeti(L, ops, i);
    format_op(L, name_width, device_width, line, sizeof(line));
    lua_pop(L, 1);
    if (i > 1) luaL_addchar(&b, '\n');
    luaL_addstring(&b, line);
  }
  luaL_pushresult(&b);
  return 1;
}


void dclua_open_graph_report(lua_State* L) {
  static const luaL_Reg meta[] = {{"__index", report_index},
                                  {"__len", report_len},
                                  {"__tostring", report_tostring},
                                  {NULL, NULL}};
  dclua_class_new(L, REPORT_MT, meta, NULL);
}

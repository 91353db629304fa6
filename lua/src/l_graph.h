// l_graph.h: what the files of the dc.graph class share: l_graph.c
// builds graphs (the class, its ops, validation, DOT), l_graph_run.c runs
// them (dc.exec, runs, progress), l_graph_report.c describes a run
// (dc.report). Lua-thread only.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_L_GRAPH_H_
#define DCLUA_L_GRAPH_H_

#include <stdatomic.h>

#include "dclua_internal.h"

#define DCLUA_EXEC "dc.exec"

// A dc.graph. Its first field is the box's pointer, so dclua_box_check
// works on it. The Lua functions of its host and subflow ops are
// dclua_callback_t's that the engine calls during runs; the graph owns
// them (|callbacks|) and releases them only when it is collected (or, for
// a subflow's graph, when the run that made it ends): closing a graph
// drops its core reference, but a graph that nests it, or an instance,
// may still run its ops.
//
// Its user value is a table:
//   keep     list of the Lua objects its ops use (kernels, buffers,
//            argument and option tables, nested graphs)
//   ops      op name -> { kind =, kernel =, args =, child =, opts = }
//   order    op names in the order they were added
//   execs    weak set of its instances (dc.exec)
//   parents  weak set of the graphs that nest it
//   exec     the instance g:run() uses (made on first need)
typedef struct dclua_graph_t {
  dc_graph_t* p;          // NULL once closed
  dc_device_t* device;    // where it runs: opts.device, or its first op's
  uint32_t streams;       // of its instances' stream groups; 0: default
  bool subflow;           // made for a subflow op's function
  atomic_bool sealed;     // subflow: the function has returned
  dclua_callback_t** callbacks;
  size_t callback_count, callback_capacity;
  char name[64];
} dclua_graph_t;

// Returns the open graph at |index| (raises if it is not one or closed).
dclua_graph_t* dclua_graph_check(lua_State* L, int index);

// Pushes field |field| of the user value of the graph at |index|.
// [-0, +1, -]
void dclua_graph_field(lua_State* L, int index, const char* field);

// Closes the subflow graph at |index| for good: drops its core reference
// and releases its callbacks. Only once its run has ended.
void dclua_graph_free(lua_State* L, int index);

// Keeps the subflow graph at |index| until the outermost graph run in
// progress ends (then dclua_graph_free closes it).
void dclua_graph_track_subflow(lua_State* L, int index);

// Raises FAILED_PRECONDITION if an instance of the graph at |index|, or
// of a graph that nests it, is running; then closes those instances (a
// change to a graph invalidates them) and forgets the cached one.
void dclua_graph_changing(lua_State* L, int index);

// Pushes the report of the last run of |exec|, an instance of the graph
// at |graph|, which ended with |status| and |message| after |elapsed_ms|.
// [-0, +1, e]
void dclua_graph_push_report(lua_State* L, int graph, dc_graph_exec_t* exec,
                             dc_status_t status, const char* message,
                             double elapsed_ms);

// Creates the dc.report class.
void dclua_open_graph_report(lua_State* L);

// Creates the dc.exec class and adds the run methods (run, instantiate,
// cancel, metrics) to the graph method table at the top of the stack.
void dclua_open_graph_run(lua_State* L);

#endif  // DCLUA_L_GRAPH_H_

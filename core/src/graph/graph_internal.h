// graph_internal.h: graphs, their instances (plans) and runs.
//
// A graph is a list of ops in the order they were added. Instantiating
// flattens nested graphs into one list of "plan ops", derives every edge
// (explicit and from buffer access), orders the ops by critical path,
// gives each a stream and turns the result into prepared stream commands:
// waits, the op itself, records. A run pushes those commands (they belong
// to the plan and are never freed by the scheduler) and waits until the
// scheduler has let go of all of them.
// SPDX-License-Identifier: MIT
#ifndef DC_GRAPH_INTERNAL_H_
#define DC_GRAPH_INTERNAL_H_

#include "dc/breaker.h"
#include "dc/graph.h"
#include "context_internal.h"
#include "program_internal.h"
#include "scheduler.h"

#define DC_OP_HISTORY 64  // durations kept per op for its p95
#define DC_MAX_SNAPSHOTS 8  // buffers an op's retries restore, at most

typedef enum dc__op_kind_e {
  DC_OP_DISPATCH,
  DC_OP_INDIRECT,
  DC_OP_COPY,
  DC_OP_FILL,
  DC_OP_HOST,
  DC_OP_GRAPH,
  DC_OP_SUBFLOW,
} dc__op_kind_t;

// One access of an op to a buffer, by memory: the root buffer and a byte
// range of it.
typedef struct dc__access_t {
  dc_buffer_t* buffer;  // retained; the buffer as given
  const dc_buffer_t* root;
  size_t begin, end;    // bytes of the root's block
  dc_access_t mode;
} dc__access_t;

// An op as added to a graph. Everything is owned (strings, arrays) or
// retained (kernels, buffers, child graphs).
typedef struct dc__op_t {
  char* name;
  dc__op_kind_t kind;
  dc_kernel_t* kernel;        // DISPATCH, INDIRECT
  dc__prepared_t prepared;    // DISPATCH
  dc_arg_t* args;             // DISPATCH, INDIRECT (buffers retained)
  size_t arg_count;
  uint32_t dims;              // INDIRECT
  dc_buffer_t* grid_buffer;   // INDIRECT (retained)
  size_t grid_offset;
  size_t local[3];            // INDIRECT; zeros: the engine chooses
  dc_buffer_t* dst;           // COPY, FILL (retained)
  dc_buffer_t* src;           // COPY (retained)
  size_t dst_offset, src_offset, count;
  unsigned char value[16];    // FILL
  dc_host_fn_t host_fn;       // HOST
  dc_subflow_fn_t subflow_fn; // SUBFLOW
  void* user_data;
  dc_graph_t* child;          // GRAPH (retained)
  char** after;               // names this op runs after
  size_t after_count, after_capacity;
  dc__access_t* access;       // declared and implied accesses
  size_t access_count;
  dc_dispatch_t dispatch;     // DISPATCH: the grid as given (for fallback)
  dc_retry_policy_t retry;    // valid when has_retry
  bool has_retry;
  bool no_snapshot;
  dc_device_t* fallback;
  dc_breaker_t* breaker;      // its own breaker (retained), or NULL
} dc__op_t;

struct dc_graph_t {
  dc__resource_t header;  // first (resource.h)
  dc_context_t* ctx;
  dc__live_node_t live;
  char name[64];
  dc_error_mode_t error_mode;
  dc_retry_policy_t retry;    // valid when has_retry
  bool has_retry;
  dc_device_t* fallback;
  bool no_fallback;
  bool no_breakers;
  dc_breaker_t* breaker;      // the ops' own breaker (retained), or NULL
  dc__op_t** ops;             // each allocated alone: never moves
  size_t count, capacity;
  uint32_t* names;            // open-addressed: op index + 1, 0 empty
  size_t names_capacity;      // a power of two
};

// An edge of the flattened graph, for plans and DOT.
typedef enum dc__edge_kind_e {
  DC_EDGE_AFTER,
  DC_EDGE_RAW,
  DC_EDGE_WAR,
  DC_EDGE_WAW,
} dc__edge_kind_t;

typedef struct dc__edge_t {
  uint32_t from, to;
  dc__edge_kind_t kind;
} dc__edge_t;

// The flattened form of a graph: ops (borrowed from the graphs they were
// added to), their full names, and the edges between them.
typedef struct dc__flat_t {
  dc_allocator_t allocator;
  const dc__op_t** ops;
  char** names;               // "parent/child" for nested ops
  size_t count, capacity;
  dc__edge_t* edges;
  size_t edge_count, edge_capacity;
} dc__flat_t;

// Flattens |graph| (nested graphs expanded) and derives its edges; checks
// names and cycles. Messages start with |fn|. On failure |flat| is freed.
DC_INTERNAL dc_status_t dc__graph_flatten(const char* fn, dc_graph_t* graph,
                                          dc__flat_t* flat);
DC_INTERNAL void dc__flat_free(dc__flat_t* flat);
// Logs (and appends to |warnings|) every op of |flat| that reads a buffer
// that no op writes and that was never written before.
DC_INTERNAL void dc__graph_warn_uninitialised(dc_graph_t* graph,
                                              const dc__flat_t* flat,
                                              char* warnings, size_t size);
// The index of the op of |graph| called |name|, or -1 (a hash lookup).
DC_INTERNAL long dc__graph_find_op(const dc_graph_t* graph, const char* name);

// The sizes of the structs the context's object caches hold.
DC_INTERNAL size_t dc__graph_object_size(void);
DC_INTERNAL size_t dc__graph_exec_object_size(void);
// Writes DOT for |flat|; |stream_of| and |state_of| (may be NULL) label
// the nodes of an instance.
DC_INTERNAL dc_status_t dc__flat_to_dot(const char* graph_name,
                                        const dc__flat_t* flat,
                                        const uint32_t* stream_of,
                                        const dc_op_state_t* state_of,
                                        char* buffer, size_t size,
                                        size_t* out_length);
DC_INTERNAL const char* dc__op_kind_name(dc__op_kind_t kind);

// What an instance keeps for one op from run to run (graph_ops.c fills
// it; the instance releases the program and buffers).
typedef struct dc__op_memo_t {
  dc_program_t* fallback_program;  // built on the first fallback
  dc_buffer_t* snapshots[DC_MAX_SNAPSHOTS];  // copies for safe retries
  // The breakers of the op's own device, found on its first run: the
  // registry's breakers live as long as the context, and looking them up
  // by name every run cost more than an empty kernel.
  dc_breaker_t* breakers[2];
  bool breakers_found;
} dc__op_memo_t;

// One run of an op, with what it needs beyond the op (graph_ops.c).
typedef struct dc__attempt_t {
  const char* name;                 // the op's full name
  const dc__op_t* op;
  const dc_arg_t* args;             // the instance's arguments
  dc_graph_t* graph;                // whose defaults apply; owns subflows
  dc__op_memo_t* memo;              // written only by the op's own runs
  uint64_t start_ns;                // when the run began: the retry
                                    // budget counts from it
} dc__attempt_t;

typedef struct dc__attempt_result_t {
  uint32_t attempts;     // in all, on every device
  uint64_t end_ns;       // when the last attempt's work ended; 0 if none ran
  dc_device_t* device;   // where it ran last (NULL for host ops)
  bool fell_back;
} dc__attempt_result_t;

// Runs the op as its retry policy, the circuit breakers and its fallback
// say. Returns its last status (message set).
DC_INTERNAL dc_status_t dc__op_run(const dc__attempt_t* attempt,
                                   dc__attempt_result_t* out_result);
// The device an op runs on (NULL for host ops and subflows).
DC_INTERNAL dc_device_t* dc__op_device(const dc__op_t* op);

// Replaying a graph as one device graph (graph_replay.c). A replay op is
// a plan op seen as a dispatch: its kernel, prepared launch, arguments
// (the instance's own) and dependencies (plan indices, all before it).
typedef struct dc__replay_op_t {
  dc_kernel_t* kernel;  // NULL: not a dispatch
  const dc__prepared_t* prepared;
  const dc_arg_t* args;
  const uint32_t* preds;
  size_t pred_count;
} dc__replay_op_t;

typedef struct dc__replay_t {
  dc_device_t* device;       // the one device of every op; NULL: no replay
  dc_device_graph_t* graph;  // the device's recording, once made
  bool stale;                // an argument changed since it was made
  bool unsupported;          // the device cannot record these dispatches
} dc__replay_t;

// Whether |count| |ops| can replay: every op a dispatch (with its group
// size settled) on one device whose backend records graphs.
DC_INTERNAL void dc__replay_init(dc__replay_t* replay,
                                 const dc__replay_op_t* ops, size_t count);
DC_INTERNAL bool dc__replay_possible(const dc__replay_t* replay);
// Records the ops if needed and runs them once as a device graph. On a
// failure, |*out_started| says whether any of it may have run.
DC_INTERNAL dc_status_t dc__replay_run(dc__replay_t* replay,
                                       const dc__replay_op_t* ops,
                                       size_t count, bool* out_started);
DC_INTERNAL void dc__replay_free(dc__replay_t* replay);

#endif  // DC_GRAPH_INTERNAL_H_

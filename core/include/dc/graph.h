// dc/graph.h: execution graphs: named operations, their dependencies
// (declared and derived from buffer access), validation, instantiation
// onto a stream group, and cheap replay.
// SPDX-License-Identifier: MIT
#ifndef DC_GRAPH_H_
#define DC_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/buffer.h"
#include "dc/kernel.h"
#include "dc/breaker.h"
#include "dc/retry.h"
#include "dc/status.h"
#include "dc/stream.h"

DC_EXTERN_C_BEGIN

//===-- Building a graph ------------------------------------------------===//
//
// A graph is a set of operations ("ops"), each with a name unique in the
// graph: kernel dispatches, copies, fills, host functions, nested graphs
// and subflows (host functions that add ops while the graph runs).
//
// Dependencies are explicit (dc_graph_after: op B runs after op A) and
// implicit, from the buffers each op declares it reads and writes, in the
// order the ops were added (as StarPU derives them):
//   read after write   an op that reads a buffer runs after the last op
//                      added before it that writes the buffer;
//   write after read   an op that writes a buffer runs after every op
//                      since the last writer that reads it;
//   write after write  an op that writes a buffer runs after its last
//                      writer.
// Buffers are compared by their memory: two views of one buffer that
// overlap are the same buffer for this purpose; views that do not overlap
// are independent.
//
// A dispatch declares its buffer arguments by itself: a `const` pointer is
// read, any other is read and written. Copies read their source and write
// their destination; fills write. Host functions and subflows declare
// what they touch in dc_op_access_t. A nested graph accesses what its ops
// access.
//
// Building functions copy what they are given (arguments, names) and
// retain the objects (kernels, buffers, nested graphs). They check their
// input at once (a dispatch exactly as dc_stream_dispatch does); names
// and the graph's shape are checked by dc_graph_validate().
//
// Thread safety: a graph is built by one thread at a time. Instantiated
// graphs (dc_graph_exec_t) run from any thread, one run at a time each.

typedef struct dc_graph_t dc_graph_t;

// How a run treats a failing op. In every mode the ops that depend on a
// failed op (directly or not) do not run and are reported as cancelled.
typedef enum dc_error_mode_e {
  // Independent ops go on; the run returns the first failure (in op
  // order). The default.
  DC_ERRORS_FINISH_INDEPENDENT = 0,
  // The first failure cancels every op that has not started.
  DC_ERRORS_STOP_AT_FIRST,
  // As FINISH_INDEPENDENT, and the run's message lists every failure.
  DC_ERRORS_COLLECT_ALL,
} dc_error_mode_t;

// Resilience (see docs/resilience.md). An op that fails is tried again by
// its retry policy: the op's, else the graph's, else its device's default
// (dc_device_set_retry_policy; host ops without a device: the defaults).
// Before each attempt on a device the device's circuit breaker (named
// after the device) and, for a dispatch, the kernel's on that device
// ("<device>/<kernel>") are asked; an open breaker fails the attempt at once
// with DC_ERR_CIRCUIT_OPEN. A dispatch that still fails (or meets an open
// breaker) with a failure that is not the caller's reruns on its fallback
// device, when it has one: the same kernel source built there, its buffers
// copied over and the results copied back.
typedef struct dc_graph_params_t {
  const char* name;            // in messages, traces and DOT; copied
  dc_error_mode_t error_mode;  // default DC_ERRORS_FINISH_INDEPENDENT
  const dc_retry_policy_t* retry;  // default for the ops (copied); NULL
  // Default for the ops; NULL: the context's CPU device (device 0), for
  // ops on any other device.
  dc_device_t* fallback;
  bool no_fallback;            // no fallback at all
  bool no_breakers;            // skip the circuit breakers
  // A breaker of the graph's own (dc_breaker_create; retained) that its
  // ops ask instead of their device's and kernel's: parts of a program
  // that want other breaker parameters make their own and share them
  // explicitly. NULL: the device's and kernel's (the registry's).
  dc_breaker_t* breaker;
} dc_graph_params_t;

// Creates an empty graph in |context|. |params| may be NULL.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or an unknown error
// mode, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_graph_create(dc_context_t* context,
                                   const dc_graph_params_t* params,
                                   dc_graph_t** out_graph);

DC_API void dc_graph_retain(dc_graph_t* graph);
DC_API void dc_graph_release(dc_graph_t* graph);

// Returns the number of ops (0 for NULL).
DC_API size_t dc_graph_op_count(const dc_graph_t* graph);

// How an op uses a buffer.
typedef enum dc_access_e {
  DC_ACCESS_READ = 1,
  DC_ACCESS_WRITE = 2,
  DC_ACCESS_READ_WRITE = 3,
} dc_access_t;

typedef struct dc_buffer_access_t {
  dc_buffer_t* buffer;
  dc_access_t access;
} dc_buffer_access_t;

// What every op may add to its own dependencies.
typedef struct dc_op_options_t {
  // Names of ops this one runs after (they may be added later; unknown
  // names are reported by dc_graph_validate()).
  const char* const* after;
  size_t after_count;
  // Buffers the op touches besides those it declares by itself.
  const dc_buffer_access_t* access;
  size_t access_count;
  // The op's retry policy (copied); NULL: the graph's.
  const dc_retry_policy_t* retry;
  // Where a dispatch reruns when its device keeps failing; NULL: the
  // graph's (by default the CPU).
  dc_device_t* fallback;
  // The op overwrites what it writes in full, so a retry needs no restored
  // inputs (see "Retries are safe" in docs/resilience.md).
  bool no_snapshot;
  // The op's own breaker (retained), asked instead of the graph's or its
  // device's and kernel's; NULL: those.
  dc_breaker_t* breaker;
} dc_op_options_t;

// Each adder below takes the op's name and |options| (NULL: none), and
// returns DC_ERR_INVALID_ARGUMENT for NULL pointers, an empty name or a
// malformed op (naming the op), DC_ERR_ALREADY_EXISTS for a name the graph
// has, DC_ERR_OUT_OF_MEMORY.

DC_API dc_status_t dc_graph_dispatch(dc_graph_t* graph, const char* name,
                                     dc_kernel_t* kernel,
                                     const dc_dispatch_t* dispatch,
                                     const dc_arg_t* args, size_t arg_count,
                                     const dc_op_options_t* options);

// A dispatch whose grid is read when the op runs from |grid_buffer|, a u32
// or u64 buffer holding |dims| sizes (work-items per dimension) from
// element |grid_offset| on: an earlier op can compute the size without a
// round trip through the host. |local| (|dims| entries, or NULL) is the
// work-group size. The op reads |grid_buffer|. A grid that is invalid when
// read (a zero size, not divisible by |local|) fails the op.
DC_API dc_status_t dc_graph_dispatch_indirect(
    dc_graph_t* graph, const char* name, dc_kernel_t* kernel, uint32_t dims,
    dc_buffer_t* grid_buffer, size_t grid_offset, const size_t* local,
    const dc_arg_t* args, size_t arg_count, const dc_op_options_t* options);

DC_API dc_status_t dc_graph_copy(dc_graph_t* graph, const char* name,
                                 dc_buffer_t* dst, size_t dst_offset,
                                 dc_buffer_t* src, size_t src_offset,
                                 size_t count, const dc_op_options_t* options);

DC_API dc_status_t dc_graph_fill(dc_graph_t* graph, const char* name,
                                 dc_buffer_t* buffer, size_t offset,
                                 size_t count, const void* value,
                                 const dc_op_options_t* options);

// A host function; see dc_host_fn_t in dc/stream.h. It runs on an engine
// thread when its dependencies have finished.
DC_API dc_status_t dc_graph_host(dc_graph_t* graph, const char* name,
                                 dc_host_fn_t fn, void* user_data,
                                 const dc_op_options_t* options);

// Adds the ops of |child| as one op: they run after this op's
// dependencies, and this op's dependents run after all of them. The child
// is retained and flattened when the graph is instantiated (its ops are
// named "<name>/<child op>"); changing it later does not change this
// graph's instantiations.
DC_API dc_status_t dc_graph_add_graph(dc_graph_t* graph, const char* name,
                                      dc_graph_t* child,
                                      const dc_op_options_t* options);

// Builds ops while the graph runs: |fn| gets an empty graph to fill; the
// engine then validates it, runs it, and only then lets this op's
// dependents start. A failure in |fn| or in the subflow fails this op.
typedef dc_status_t (*dc_subflow_fn_t)(dc_graph_t* subflow, void* user_data);
DC_API dc_status_t dc_graph_subflow(dc_graph_t* graph, const char* name,
                                    dc_subflow_fn_t fn, void* user_data,
                                    const dc_op_options_t* options);

// Makes |op| run after |after| (both names; either may be added later).
DC_API dc_status_t dc_graph_after(dc_graph_t* graph, const char* op,
                                  const char* after);

//===-- Validation ------------------------------------------------------===//

// Checks the graph's shape: every name in an `after` exists, and the
// dependencies have no cycle. Writes warnings (an op that reads a buffer
// that no op writes and that was never written before the graph was
// built: "op 'b' reads buffer 'x', which nothing writes and was never
// initialised") to the context's log and to |warnings| (may be NULL;
// NUL-terminated, truncated to |warnings_size|).
// Returns DC_ERR_NOT_FOUND for an unknown name ("op 'b' runs after 'zz',
// which is not in graph 'g'"), DC_ERR_FAILED_PRECONDITION for a cycle,
// naming its ops in order ("a -> b -> c -> a"), DC_ERR_INVALID_ARGUMENT for
// NULL.
DC_API dc_status_t dc_graph_validate(dc_graph_t* graph, char* warnings,
                                     size_t warnings_size);

// Writes the graph in Graphviz DOT into |buffer| (snprintf-style: at most
// |size| bytes, NUL-terminated; the full length into |out_length|). Edges
// are labelled with their kind (after, RAW, WAR, WAW).
DC_API dc_status_t dc_graph_to_dot(dc_graph_t* graph, char* buffer,
                                   size_t size, size_t* out_length);

//===-- Instantiating and running ---------------------------------------===//
//
// Instantiating validates the graph, flattens nested graphs, derives the
// dependencies and plans the run: each op is given a stream of the group
// (a chain stays on one stream; independent ops spread out), ops are
// ordered by their critical path (the op with the longest chain of work
// after it goes first), and every edge between streams becomes an event
// record and wait. Everything a run needs is allocated here, so a run only
// queues prepared commands.

typedef struct dc_graph_exec_t dc_graph_exec_t;

// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or ops of a device
// the group is not on, and what dc_graph_validate() returns.
DC_API dc_status_t dc_graph_instantiate(dc_graph_t* graph,
                                        dc_stream_group_t* group,
                                        dc_graph_exec_t** out_exec);

// An instance is reference counted like a graph: instantiate returns one
// reference, which the caller owns. It retains its graph and its streams.

// Adds a reference to |exec|. NULL or a released instance is a no-op.
DC_API void dc_graph_exec_retain(dc_graph_exec_t* exec);

// Drops a reference to |exec|. The last one waits for a run in progress
// (on another thread), then frees the instance and releases its graph and
// streams. NULL or a released instance is a no-op.
DC_API void dc_graph_exec_release(dc_graph_exec_t* exec);

typedef struct dc_run_params_t {
  uint64_t timeout_ns;         // 0: none; past it the run is cancelled
  dc_cancel_token_t* cancel;   // cancelling it cancels the run
} dc_run_params_t;

// Runs every op once and waits for the run to end. |params| may be NULL.
// Returns DC_OK when every op succeeded; otherwise the failure the error
// mode selects (the first failed op's status, its message prefixed with
// the op's name), DC_ERR_CANCELLED when the token was cancelled,
// DC_ERR_DEADLINE_EXCEEDED when the timeout passed. The report below has
// every op's outcome either way.
DC_API dc_status_t dc_graph_exec_run(dc_graph_exec_t* exec,
                                     const dc_run_params_t* params);

// Cancels the run in progress (from another thread): ops that have not
// started are cancelled; running ones finish.
DC_API void dc_graph_exec_cancel(dc_graph_exec_t* exec);

// Replay with new inputs: changes argument |arg_index| of dispatch |op|
// for later runs. A buffer must have the dtype and length of the one it
// replaces, a value the same type and a struct the same size (the plan
// and the dependencies stay valid). The instance keeps its own copy of a
// struct's bytes.
// Returns DC_ERR_NOT_FOUND for an unknown op, DC_ERR_INVALID_ARGUMENT for
// an op that is not a dispatch, an index out of range or an argument of
// another type or shape, DC_ERR_FAILED_PRECONDITION during a run.
DC_API dc_status_t dc_graph_exec_set_arg(dc_graph_exec_t* exec,
                                         const char* op, size_t arg_index,
                                         const dc_arg_t* arg);

//===-- The run report --------------------------------------------------===//

typedef enum dc_op_state_e {
  DC_OP_PENDING = 0,  // not run yet (before the first run)
  DC_OP_SUCCEEDED,
  DC_OP_FAILED,
  DC_OP_CANCELLED,    // not run: a dependency failed, or the run stopped
} dc_op_state_t;

typedef struct dc_op_report_t {
  const char* name;         // borrowed from the instance
  const char* kind;         // "dispatch", "copy", "fill", "host", ...
  dc_op_state_t state;      // in the last run
  uint32_t stream_id;       // where it ran
  uint32_t attempts;        // tries in the last run (0 if not run)
  uint64_t duration_ns;     // in the last run
  dc_status_t status;       // DC_OK, or why it failed or was cancelled
  const char* message;      // "" or the failure's message (borrowed)
  const char* device;       // where it last ran ("" for host ops)
  bool fell_back;           // it ran on its fallback device
  // Over every run so far:
  uint64_t runs;
  double mean_ns;
  double p95_ns;            // over the last 64 runs
} dc_op_report_t;

// Returns the number of ops of the instance, nested graphs flattened.
DC_API size_t dc_graph_exec_op_count(const dc_graph_exec_t* exec);

// Returns how many ops of the run in progress have ended so far, whether
// they succeeded, failed or were cancelled (after a run: of that run; 0
// for NULL), for progress displays. Thread-safe: another thread may call
// it while the run goes on.
DC_API size_t dc_graph_exec_finished(const dc_graph_exec_t* exec);

// Describes op |index| (in the plan's order) after the last run.
// Returns DC_ERR_OUT_OF_RANGE past the end.
DC_API dc_status_t dc_graph_exec_op(const dc_graph_exec_t* exec, size_t index,
                                    dc_op_report_t* out_report);

// Writes the last run's report as text, one line per op ("name  state
// stream  attempts  time  [error]"), snprintf-style.
DC_API dc_status_t dc_graph_exec_report(const dc_graph_exec_t* exec,
                                        char* buffer, size_t size,
                                        size_t* out_length);

// DOT of the instance: as dc_graph_to_dot(), with each op's stream and its
// state in the last run.
DC_API dc_status_t dc_graph_exec_to_dot(const dc_graph_exec_t* exec,
                                        char* buffer, size_t size,
                                        size_t* out_length);

DC_EXTERN_C_END

#endif  // DC_GRAPH_H_

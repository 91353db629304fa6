// graph_ops.c: how one op of a graph runs: the work itself (dispatch,
// indirect dispatch, copy, fill, host function, subflow), and around it
// the retry policy, the circuit breakers, the snapshots that make retries
// safe and the fallback to another device.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "buffer_internal.h"
#include "breaker_internal.h"
#include "dc/breaker.h"
#include "graph_internal.h"

//===-- The work --------------------------------------------------------===//

static dc_status_t run_op(const char* name, const dc__op_t* op,
                          const dc_arg_t* args, dc_graph_t* owner);

// Reads an indirect dispatch's grid and runs it.
static dc_status_t run_indirect(const char* name, const dc__op_t* op,
                                const dc_arg_t* args) {
  uint64_t sizes[3] = {0, 0, 0};
  dc_buffer_t* b = op->grid_buffer;
  if (b->dtype == DC_DTYPE_U32) {
    uint32_t v[3];
    DC_RETURN_IF_ERROR(dc_buffer_read(b, op->grid_offset, v, op->dims));
    for (uint32_t d = 0; d < op->dims; ++d) sizes[d] = v[d];
  } else {
    DC_RETURN_IF_ERROR(dc_buffer_read(b, op->grid_offset, sizes, op->dims));
  }
  dc_dispatch_t grid = {.dims = op->dims};
  for (uint32_t d = 0; d < op->dims; ++d) {
    grid.global[d] = (size_t)sizes[d];
    grid.local[d] = op->local[d];
  }
  char fn[96];
  snprintf(fn, sizeof(fn), "indirect dispatch '%s'", name);
  dc__prepared_t prepared;
  DC_RETURN_IF_ERROR(dc__kernel_prepare(fn, op->kernel, &grid, args,
                                        op->arg_count, &prepared));
  return dc__kernel_run(op->kernel, &prepared, args);
}

// Builds a subflow and runs its ops one after another on this thread, in
// an order that respects their dependencies.
static dc_status_t run_subflow(const char* name, const dc__op_t* op,
                               dc_graph_t* owner) {
  dc_graph_t* sub = NULL;
  dc_graph_params_t params = {.name = name};
  DC_RETURN_IF_ERROR(dc_graph_create(owner->ctx, &params, &sub));
  dc_status_t st = op->subflow_fn(sub, op->user_data);
  dc__flat_t flat;
  if (st == DC_OK) st = dc__graph_flatten("subflow", sub, &flat);
  if (st == DC_OK) {
    // Explicit edges may point forward: run in a topological order.
    size_t n = flat.count;
    dc__arena_t scratch;
    dc__arena_init(&scratch, owner->ctx->allocator);
    uint32_t* order = dc__arena_zalloc(&scratch, n, sizeof(uint32_t));
    uint32_t* indegree = dc__arena_zalloc(&scratch, n, sizeof(uint32_t));
    if (order == NULL || indegree == NULL) {
      st = DC_FAIL(DC_ERR_OUT_OF_MEMORY, "subflow '%s': out of memory", name);
    }
    size_t head = 0, tail = 0;
    for (size_t e = 0; st == DC_OK && e < flat.edge_count; ++e) {
      ++indegree[flat.edges[e].to];
    }
    for (size_t i = 0; st == DC_OK && i < n; ++i) {
      if (indegree[i] == 0) order[tail++] = (uint32_t)i;
    }
    while (st == DC_OK && head < tail) {
      uint32_t i = order[head++];
      st = run_op(flat.names[i], flat.ops[i], flat.ops[i]->args, sub);
      if (st != DC_OK) {
        dc__saved_error_t saved;
        dc__error_save(&saved);
        st = dc_set_error(st, "subflow op '%s': %s", flat.names[i],
                          saved.message);
        break;
      }
      for (size_t e = 0; e < flat.edge_count; ++e) {
        if (flat.edges[e].from == i && --indegree[flat.edges[e].to] == 0) {
          order[tail++] = flat.edges[e].to;
        }
      }
    }
    dc__arena_free_all(&scratch);
    dc__flat_free(&flat);
  }
  dc__saved_error_t saved;
  dc__error_save(&saved);
  dc_graph_release(sub);
  dc__error_restore(&saved);
  return st;
}

// Runs |op| once with |args| (the dispatch's kernel and prepared grid as
// given, unless |kernel| and |prepared| say otherwise: fallback).
static dc_status_t run_work(const char* name, const dc__op_t* op,
                            const dc_arg_t* args, dc_graph_t* owner,
                            dc_kernel_t* kernel,
                            const dc__prepared_t* prepared) {
  if (op->kind == DC_OP_DISPATCH) {
    for (size_t i = 0; i < op->arg_count; ++i) {
      if (args[i].kind == DC_ARG_BUFFER) {
        dc__buffer_mark_written(args[i].buffer);
      }
    }
    return dc__kernel_run(kernel, prepared, args);
  }
  return run_op(name, op, args, owner);
}

static dc_status_t run_op(const char* name, const dc__op_t* op,
                          const dc_arg_t* args, dc_graph_t* owner) {
  switch (op->kind) {
    case DC_OP_DISPATCH:
      return run_work(name, op, args, owner, op->kernel, &op->prepared);
    case DC_OP_INDIRECT:
      return run_indirect(name, op, args);
    case DC_OP_COPY:
      return dc__buffer_copy(op->dst, op->dst_offset, op->src, op->src_offset,
                            op->count);
    case DC_OP_FILL:
      return dc__buffer_fill(op->dst, op->dst_offset, op->count, op->value);
    case DC_OP_HOST:
      return dc__call_host_fn(op->host_fn, op->user_data);
    case DC_OP_SUBFLOW:
      return run_subflow(name, op, owner);
    case DC_OP_GRAPH:
      break;  // flattened away
  }
  return DC_OK;
}

//===-- Snapshots -------------------------------------------------------===//
//
// A retry must start from the op's inputs as they were before the first
// attempt. Buffers the op only reads are unchanged by a failed attempt;
// buffers it may read and also write (a non-const kernel argument, an
// access declared READ_WRITE) are copied aside before the first attempt
// and copied back before each retry, unless the op says it overwrites what
// it writes in full (no_snapshot).

typedef struct snapshot_t {
  dc_buffer_t* original;
  dc_buffer_t* copy;
} snapshot_t;


// Whether the kernel may read argument |i| and also write it.
static bool in_place(const dc__op_t* op, const dc_arg_t* args, size_t i) {
  const dc_kernel_arg_info_t* info = dc_kernel_arg_info(op->kernel, i);
  return args[i].kind == DC_ARG_BUFFER && !info->is_const &&
         !info->is_write_only;
}

// Whether the kernel may write argument |i| (to copy it back).
static bool written(const dc__op_t* op, const dc_arg_t* args, size_t i) {
  return args[i].kind == DC_ARG_BUFFER &&
         !dc_kernel_arg_info(op->kernel, i)->is_const;
}

// The buffers |op| may read and write, into |targets|; returns how many
// (more than DC_MAX_SNAPSHOTS: only the first that many are stored).
static size_t in_place_buffers(const dc__op_t* op, const dc_arg_t* args,
                               dc_buffer_t** targets) {
  size_t n = 0;
  for (size_t i = 0; op->kind == DC_OP_DISPATCH && i < op->arg_count; ++i) {
    if (in_place(op, args, i)) {
      if (n < DC_MAX_SNAPSHOTS) targets[n] = args[i].buffer;
      ++n;
    }
  }
  for (size_t k = 0; op->kind != DC_OP_DISPATCH && k < op->access_count;
       ++k) {
    if (op->access[k].mode == DC_ACCESS_READ_WRITE) {
      if (n < DC_MAX_SNAPSHOTS) targets[n] = op->access[k].buffer;
      ++n;
    }
  }
  return n;
}

// Copies the buffers |op| may read and write; returns how many, or fails.
// The copies are kept in |cache| (DC_MAX_SNAPSHOTS slots) for later runs,
// so a replay allocates nothing.
static dc_status_t take_snapshots(const dc__op_t* op, const dc_arg_t* args,
                                  dc_buffer_t** cache, snapshot_t* out,
                                  size_t* count) {
  *count = 0;
  dc_buffer_t* targets[DC_MAX_SNAPSHOTS];
  size_t n = DC_MIN(in_place_buffers(op, args, targets),
                    (size_t)DC_MAX_SNAPSHOTS);
  for (size_t i = 0; i < n; ++i) {
    dc_buffer_t* b = targets[i];
    dc_buffer_t* copy = cache[i];
    if (copy == NULL || dc_buffer_device(copy) != dc_buffer_device(b) ||
        dc_buffer_dtype(copy) != dc_buffer_dtype(b) ||
        dc_buffer_length(copy) != dc_buffer_length(b)) {
      dc_buffer_release(copy);
      cache[i] = NULL;
      dc_buffer_params_t p = {.dtype = dc_buffer_dtype(b),
                              .length = dc_buffer_length(b),
                              .label = "retry snapshot"};
      DC_RETURN_IF_ERROR(dc_buffer_create(dc_buffer_device(b), &p, &copy));
      cache[i] = copy;
    }
    DC_RETURN_IF_ERROR(dc_buffer_copy(copy, 0, b, 0, dc_buffer_length(b)));
    out[i] = (snapshot_t){b, copy};
  }
  *count = n;
  return DC_OK;
}

static dc_status_t restore_snapshots(const snapshot_t* s, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    DC_RETURN_IF_ERROR(dc_buffer_copy(s[i].original, 0, s[i].copy, 0,
                                      dc_buffer_length(s[i].copy)));
  }
  return DC_OK;
}

//===-- Attempts --------------------------------------------------------===//

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000u),
                        (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

dc_device_t* dc__op_device(const dc__op_t* op) {
  if (op->kernel != NULL) return op->kernel->program->device;
  if (op->dst != NULL) return dc_buffer_device(op->dst);
  return NULL;
}

// The policy for |op|: its own, its graph's, its device's default.
static void policy_of(const dc__op_t* op, const dc_graph_t* graph,
                      dc_device_t* device, dc_retry_policy_t* out) {
  if (op->has_retry) {
    dc_retry_policy_resolve(&op->retry, out);
  } else if (graph->has_retry) {
    dc_retry_policy_resolve(&graph->retry, out);
  } else if (device != NULL && dc_device_retry_policy(device, out) == DC_OK) {
    dc_retry_policy_resolve(out, out);
  } else {
    dc_retry_policy_resolve(NULL, out);
  }
}

// The breakers guarding a run of |op| on |device|: the op's or the graph's
// own breaker when it has one (on its own device; a fallback device keeps
// its own breakers), else the device's (named after it) and, for a
// dispatch, the kernel's on that device ("<device>/<kernel>"), so that a
// kernel failing on one device neither blocks it on another nor stops
// other kernels. Unused slots stay NULL,
// as does one the registry could not make (then returns false).
static bool breakers_of(const dc__op_t* op, const dc_graph_t* graph,
                        dc_device_t* device, dc_breaker_t** out) {
  out[0] = out[1] = NULL;
  if (graph->no_breakers || device == NULL) return true;
  dc_breaker_t* own = op->breaker ? op->breaker : graph->breaker;
  if (own != NULL && device == dc__op_device(op)) {
    out[0] = own;  // the op's or graph's own, on its own device
    return true;
  }
  bool ok = dc_device_breaker(device, NULL, &out[0]) == DC_OK;
  if (op->kernel != NULL) {
    ok = dc_device_breaker(device, dc_kernel_name(op->kernel), &out[1]) ==
             DC_OK && ok;
  }
  return ok;
}

// One attempt, asking the breakers first and telling them after; sets
// |end_ns| when the work ran (one clock read for the breakers and the
// op's span).
static dc_status_t guarded(const dc__attempt_t* a, dc_device_t* device,
                           dc_breaker_t** breakers, dc_kernel_t* kernel,
                           const dc__prepared_t* prepared,
                           const dc_arg_t* args, uint64_t* end_ns) {
  dc_breaker_permit_t permits[2] = {DC_BREAKER_NO_PERMIT,
                                    DC_BREAKER_NO_PERMIT};
  for (int i = 0; i < 2; ++i) {
    if (breakers[i] == NULL) continue;
    dc_status_t st = dc_breaker_acquire(breakers[i], &permits[i]);
    if (st != DC_OK) {
      dc__saved_error_t why;
      dc__error_save(&why);
      for (int j = 0; j < i; ++j) {  // the attempt does not happen
        if (breakers[j]) {
          dc_breaker_record(breakers[j], permits[j], DC_ERR_CANCELLED);
        }
      }
      dc__error_restore(&why);
      return st;
    }
  }
  uint64_t start_ns = dc__now_ns();
  dc_status_t st =
      run_work(a->name, a->op, args, a->graph, kernel, prepared);
  *end_ns = dc__now_ns();
  for (int i = 0; i < 2; ++i) {
    dc__breaker_record_at(breakers[i], permits[i], st, *end_ns - start_ns,
                          *end_ns);
  }
  if (st != DC_OK && device != NULL) {
    dc__device_failed(device, st, dc_last_error());
  }
  return st;
}

// Runs |step| (taking or restoring the op's snapshots) as |policy| allows:
// an allocation or a copy that fails now and then must not fail the op.
typedef struct snapshot_step_t {
  const dc__attempt_t* a;
  const dc_arg_t* args;
  snapshot_t* snapshots;
  size_t* count;
  bool restore;
} snapshot_step_t;

static dc_status_t snapshot_step(const dc_retry_policy_t* policy,
                                 uint64_t start, const snapshot_step_t* s) {
  dc_retry_state_t state;
  dc_retry_begin(policy, &state);
  for (;;) {
    dc_status_t st =
        s->restore ? restore_snapshots(s->snapshots, *s->count)
                   : take_snapshots(s->a->op, s->args, s->a->memo->snapshots,
                                    s->snapshots, s->count);
    uint64_t delay = 0;
    if (st == DC_OK || dc_retry_next(policy, &state, st,
                                     dc__now_ns() - start,
                                     &delay) != DC_RETRY_AGAIN) {
      return st;
    }
    sleep_ns(delay);
  }
}

// How long until the open breakers among |breakers| let a probe through
// (0 when none is open: a half-open one whose probes are taken).
static uint64_t open_remaining(dc_breaker_t** breakers) {
  uint64_t longest = 0;
  for (int i = 0; i < 2; ++i) {
    dc_breaker_stats_t s;
    if (breakers[i] != NULL && dc_breaker_stats(breakers[i], &s) == DC_OK &&
        s.open_remaining_ns > longest) {
      longest = s.open_remaining_ns;
    }
  }
  return longest;
}

// Tries the op on |device| as its policy allows. |kernel|, |prepared| and
// |args| are the op's own or, on the fallback device, their copies there.
// An open breaker ends the attempts at once when the op has a fallback to
// go to (|can_fall_back|); otherwise its refusal counts as a transient
// failure and the op waits, as long as its policy allows, for the breaker
// to let a probe through.
static dc_status_t attempts_on(const dc__attempt_t* a, dc_device_t* device,
                               dc_kernel_t* kernel,
                               const dc__prepared_t* prepared,
                               const dc_arg_t* args, uint64_t start,
                               bool can_fall_back,
                               dc__attempt_result_t* out) {
  dc_retry_policy_t policy;
  policy_of(a->op, a->graph, device, &policy);
  dc_breaker_t* fallback_breakers[2];
  dc_breaker_t** breakers = fallback_breakers;
  if (device == dc__op_device(a->op)) {
    breakers = a->memo->breakers;
    if (!a->memo->breakers_found) {
      a->memo->breakers_found = breakers_of(a->op, a->graph, device, breakers);
    }
  } else {
    (void)breakers_of(a->op, a->graph, device, breakers);
  }
  snapshot_t snapshots[DC_MAX_SNAPSHOTS];
  size_t snapshot_count = 0;
  dc_buffer_t* targets[DC_MAX_SNAPSHOTS];
  if (!a->op->no_snapshot &&
      in_place_buffers(a->op, args, targets) > DC_MAX_SNAPSHOTS) {
    policy.max_attempts = 1;  // too many to restore: not retried
  }
  snapshot_step_t step = {a, args, snapshots, &snapshot_count, false};
  if (policy.max_attempts > 1 && !a->op->no_snapshot) {
    DC_RETURN_IF_ERROR(snapshot_step(&policy, start, &step));
  }
  dc_retry_state_t state;
  dc_retry_begin(&policy, &state);
  dc_status_t st;
  for (;;) {
    st = guarded(a, device, breakers, kernel, prepared, args, &out->end_ns);
    bool refused = st == DC_ERR_CIRCUIT_OPEN;
    if (refused) out->end_ns = dc__now_ns();
    ++out->attempts;
    if (st == DC_OK || (refused && can_fall_back)) break;
    // A broken device fails whatever runs there again: on to the fallback.
    if (dc_status_class(st) == DC_STATUS_CLASS_DEVICE) break;
    uint64_t delay = 0;
    if (dc_retry_next(&policy, &state, st, out->end_ns - start, &delay) !=
        DC_RETRY_AGAIN) {
      break;
    }
    if (refused) {
      uint64_t wait = open_remaining(breakers);
      if (policy.budget_ns != 0 &&
          out->end_ns - start + wait > policy.budget_ns) {
        break;  // the breaker stays open past the op's budget
      }
      if (wait > delay) delay = wait;
    }
    dc__saved_error_t why;
    dc__error_save(&why);
    sleep_ns(delay);
    if (!refused) {  // a refused attempt changed nothing
      step.restore = true;
      dc_status_t restored = snapshot_step(&policy, start, &step);
      if (restored != DC_OK) {
        st = restored;
        break;
      }
    }
    dc__error_restore(&why);
  }
  return st;
}

//===-- Fallback --------------------------------------------------------===//

// Whether a failure says something about the device (so another device
// may do better), rather than about the op itself.
static bool device_failure(dc_status_t st) {
  dc_status_class_t cls = dc_status_class(st);
  return cls == DC_STATUS_CLASS_TRANSIENT || cls == DC_STATUS_CLASS_DEVICE;
}

// Runs a dispatch on |fallback|: the kernel built there, its buffers
// copied over, the buffers it may write copied back.
static dc_status_t run_on_fallback(const dc__attempt_t* a,
                                   dc_device_t* fallback,
                                   dc__attempt_result_t* out) {
  const dc__op_t* op = a->op;
  dc_program_t** program = &a->memo->fallback_program;
  if (*program == NULL) {
    DC_RETURN_IF_ERROR(dc_program_build_for(op->kernel->program, fallback,
                                            program));
  }
  dc_kernel_t* kernel = NULL;
  DC_RETURN_IF_ERROR(dc_program_find_kernel(*program,
                                            dc_kernel_name(op->kernel),
                                            &kernel));
  dc_arg_t* args = NULL;
  size_t n = op->arg_count;
  dc_allocator_t allocator = dc_context_allocator(dc_device_context(fallback));
  if (n > 0) {
    args = dc_allocator_malloc(allocator, n * sizeof(dc_arg_t));
    if (args == NULL) {
      return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "op '%s': out of memory", a->name);
    }
    memcpy(args, a->args, n * sizeof(dc_arg_t));
  }
  dc_status_t st = DC_OK;
  size_t moved = 0;
  for (; moved < n && st == DC_OK; ++moved) {
    dc_buffer_t* b = a->args[moved].buffer;
    if (a->args[moved].kind != DC_ARG_BUFFER ||
        dc_buffer_device(b) == fallback) {
      continue;
    }
    dc_buffer_params_t p = {.dtype = dc_buffer_dtype(b),
                            .length = dc_buffer_length(b),
                            .label = dc_buffer_label(b)};
    dc_buffer_t* copy = NULL;
    st = dc_buffer_create(fallback, &p, &copy);
    if (st == DC_OK) st = dc_buffer_copy(copy, 0, b, 0, p.length);
    args[moved].buffer = copy;
  }
  dc__prepared_t prepared;
  if (st == DC_OK) {
    st = dc__kernel_prepare("fallback", kernel, &op->dispatch, args, n,
                            &prepared);
  }
  if (st == DC_OK) {
    st = attempts_on(a, fallback, kernel, &prepared, args, dc__now_ns(),
                     false, out);
  }
  for (size_t i = 0; i < moved; ++i) {  // the copies made above
    dc_buffer_t* copy = args[i].buffer;
    if (a->args[i].kind != DC_ARG_BUFFER || copy == a->args[i].buffer ||
        copy == NULL) {
      continue;
    }
    if (st == DC_OK && written(op, a->args, i)) {
      st = dc_buffer_copy(a->args[i].buffer, 0, copy, 0,
                          dc_buffer_length(copy));
    }
    dc_buffer_release(copy);
  }
  if (args) dc_allocator_free(allocator, args, n * sizeof(dc_arg_t));
  return st;
}

dc_status_t dc__op_run(const dc__attempt_t* a, dc__attempt_result_t* out) {
  const dc__op_t* op = a->op;
  dc_device_t* device = dc__op_device(op);
  out->attempts = 0;
  out->end_ns = 0;
  out->device = device;
  out->fell_back = false;
  dc_device_t* fallback = NULL;
  if (op->kind == DC_OP_DISPATCH) {
    fallback = op->fallback ? op->fallback : a->graph->fallback;
    if (fallback == NULL && !a->graph->no_fallback) {  // the CPU by default
      dc_context_t* ctx = dc_device_context(device);
      fallback = ctx->device_count > 0 ? ctx->devices[0] : NULL;
    }
    if (fallback == device) fallback = NULL;
  }
  dc_status_t st;
  if (op->kind == DC_OP_DISPATCH) {
    st = attempts_on(a, device, op->kernel, &op->prepared, a->args,
                     a->start_ns, fallback != NULL, out);
  } else {
    st = attempts_on(a, device, NULL, NULL, a->args, a->start_ns, false, out);
  }
  if (st == DC_OK || fallback == NULL || !device_failure(st)) return st;
  dc__saved_error_t first;
  dc__error_save(&first);
  dc_context_t* ctx = dc_device_context(fallback);
  DC_LOG(ctx, DC_LOG_WARN, "graph", "op '%s' failed on %s (%s); running it "
         "on %s", a->name, dc_device_name(device), first.message,
         dc_device_name(fallback));
  out->fell_back = true;
  out->device = fallback;
  dc_status_t again = run_on_fallback(a, fallback, out);
  if (again != DC_OK) {
    dc__saved_error_t second;
    dc__error_save(&second);
    return dc_set_error(again, "%s; on the fallback %s: %s", first.message,
                        dc_device_name(fallback), second.message);
  }
  return DC_OK;
}

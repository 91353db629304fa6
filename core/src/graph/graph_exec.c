// graph_exec.c: instantiated graphs: the plan (streams, order, events,
// prepared commands), runs, and the run report.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "buffer_internal.h"
#include "dc/breaker.h"
#include "fault_internal.h"
#include "graph_internal.h"
#include "telemetry_internal.h"

// One op of the plan, with its state in the last run and its history.
typedef struct plan_op_t {
  struct dc_graph_exec_t* exec;
  const dc__op_t* op;       // borrowed from the graph the exec retains
  const char* name;         // the flat name ("parent/child")
  dc_arg_t* args;           // the exec's own arguments (set_arg changes them)
  uint32_t* preds;          // plan indices of the ops it depends on
  size_t pred_count;
  uint32_t stream;          // index into exec->streams
  uint32_t priority;        // ops on its longest chain to the end
  dc_event_t* event;        // recorded after it when another stream waits
  // The last run (written by the thread that runs the op).
  dc_op_state_t state;
  dc_status_t status;
  uint32_t attempts;
  uint64_t duration_ns;
  dc_device_t* ran_on;
  bool fell_back;
  char* message;            // allocated on first failure, kept for reuse
  dc__op_memo_t memo;       // fallback build, snapshots, breakers
  // Every run.
  uint64_t runs;
  uint64_t total_ns;
  uint64_t recent[DC_OP_HISTORY];
} plan_op_t;

#define MESSAGE_SIZE 384

struct dc_graph_exec_t {
  dc__resource_t header;       // first (resource.h)
  dc__arena_t arena;           // the plan's arrays, freed with the exec
  dc_graph_t* graph;           // retained
  dc_context_t* ctx;
  dc__flat_t flat;
  plan_op_t* ops;              // in plan order
  size_t count;
  uint32_t* preds;             // every op's dependencies, one array
  dc_stream_t** streams;       // retained
  size_t stream_count;
  dc__batch_t* batch;          // the ops with their waits and records
  // A run, guarded by |lock|.
  pthread_mutex_t lock;
  pthread_cond_t done;
  size_t outstanding;          // commands the scheduler still holds
  bool running;
  // Why ops that have not started must not start: DC_OK, or
  // DC_ERR_CANCELLED / DC_ERR_DEADLINE_EXCEEDED / DC_ERR_ABORTED (an op
  // failed under DC_ERRORS_STOP_AT_FIRST).
  atomic_int stop;
  dc_cancel_token_t* token;    // the run's, borrowed
  atomic_size_t finished;      // ops of the run that have ended, any way
  // Runs that replay the whole graph as one device graph (graph_replay.c).
  dc__replay_t replay;
  dc__replay_op_t* replay_ops; // per plan op
};

static bool is_exec(const dc_graph_exec_t* e) {
  return dc__resource_live(DC__RES(e), &dc__graph_exec_type);
}

static dc_status_t check_exec(const char* fn, const dc_graph_exec_t* e) {
  return dc__resource_check(fn, "exec", DC__RES(e), &dc__graph_exec_type);
}

static const char* const kStateNames[] = {"pending", "ok", "FAILED",
                                          "cancelled"};

//===-- Running one op --------------------------------------------------===//

static const char* plan_op_name(const void* plan_op) {
  return ((const plan_op_t*)plan_op)->name;
}

static dc__span_kind_t span_kind(dc__op_kind_t kind) {
  switch (kind) {
    case DC_OP_DISPATCH:
    case DC_OP_INDIRECT: return DC_SPAN_KERNEL;
    case DC_OP_COPY: return DC_SPAN_COPY;
    case DC_OP_FILL: return DC_SPAN_FILL;
    default: return DC_SPAN_HOST;
  }
}

// Why |p| must not run (DC_OK if it may), with a message into |why|.
static dc_status_t reason_to_cancel(const plan_op_t* p, char* why,
                                    size_t size) {
  dc_graph_exec_t* e = p->exec;
  if (e->token && dc_cancel_token_is_cancelled(e->token)) {
    atomic_store(&e->stop, DC_ERR_CANCELLED);
  }
  dc_status_t stop = (dc_status_t)atomic_load(&e->stop);
  if (stop != DC_OK) {
    snprintf(why, size, "%s", stop == DC_ERR_DEADLINE_EXCEEDED
                                  ? "the run passed its timeout"
                                  : stop == DC_ERR_ABORTED
                                        ? "an op failed and the graph "
                                          "stops at the first failure"
                                        : "the run was cancelled");
    return DC_ERR_CANCELLED;
  }
  for (size_t i = 0; i < p->pred_count; ++i) {
    const plan_op_t* pred = &e->ops[p->preds[i]];
    if (pred->state == DC_OP_FAILED || pred->state == DC_OP_CANCELLED) {
      snprintf(why, size, "'%s', which it depends on, %s", pred->name,
               pred->state == DC_OP_FAILED ? "failed" : "was cancelled");
      return DC_ERR_CANCELLED;
    }
  }
  return DC_OK;
}

static void keep_message(plan_op_t* p, const char* text) {
  if (p->message == NULL) {
    p->message = dc_allocator_malloc(p->exec->ctx->allocator, MESSAGE_SIZE);
  }
  if (p->message) dc__strlcpy(p->message, text, MESSAGE_SIZE);
}

// Records the outcome of |p| in this run (|ran|: it was attempted; else
// cancelled for |why|) and reports its span.
static void settle_op(plan_op_t* p, dc_stream_t* stream, bool ran,
                      dc_status_t status, uint64_t start, uint64_t end,
                      const char* why) {
  dc_graph_exec_t* e = p->exec;
  p->status = status;
  p->duration_ns = end - start;
  if (!ran) {
    p->state = DC_OP_CANCELLED;
    keep_message(p, why);
  } else if (status != DC_OK) {
    p->state = DC_OP_FAILED;
    keep_message(p, dc_last_error());
  } else {
    p->state = DC_OP_SUCCEEDED;
    p->recent[p->runs % DC_OP_HISTORY] = p->duration_ns;
    ++p->runs;
    p->total_ns += p->duration_ns;
  }
  dc__span_t span = {
      .kind = span_kind(p->op->kind),
      .outcome = ran ? DC_SPAN_RAN : DC_SPAN_CANCELLED,
      .status = status,
      .name = p->name,
      .stream_id = dc_stream_id(stream),
      .stream_label = dc_stream_label(stream),
      .start_ns = start,
      .end_ns = ran ? end : start,
      .kernel = p->op->kind == DC_OP_DISPATCH ? p->op->kernel : NULL,
  };
  dc__telemetry_span(e->ctx, &span);
  atomic_fetch_add(&e->finished, 1);
}

// Runs one op, as a task of the run's batch on a stream thread: the op's
// failure is reported in the run, never by the stream.
static void plan_op_run(void* plan_op, dc_stream_t* stream,
                        uint64_t* out_start, uint64_t* out_end) {
  plan_op_t* p = plan_op;
  dc_graph_exec_t* e = p->exec;
  uint64_t start = dc__now_ns();
  char why[MESSAGE_SIZE];
  dc_status_t status = reason_to_cancel(p, why, sizeof(why));
  bool ran = status == DC_OK;
  uint64_t end = 0;  // the last attempt's, which the breakers were told
  if (ran) {
    dc__attempt_t attempt = {p->name, p->op, p->args, e->graph, &p->memo,
                             start};
    dc__attempt_result_t result;
    status = dc__op_run(&attempt, &result);
    p->attempts = result.attempts;
    p->ran_on = result.device;
    p->fell_back = result.fell_back;
    end = result.end_ns;
  }
  if (end == 0) end = dc__now_ns();
  if (ran && status != DC_OK) {
    dc__telemetry_error(e->ctx, status, dc_last_error());
    DC_LOG(e->ctx, DC_LOG_ERROR, "graph", "graph '%s': op '%s' failed: %s",
           e->graph->name, p->name, dc_last_error());
    if (e->graph->error_mode == DC_ERRORS_STOP_AT_FIRST) {
      atomic_store(&e->stop, DC_ERR_ABORTED);
    }
  }
  settle_op(p, stream, ran, status, start, end, why);
  *out_start = start;
  *out_end = end;
}

static const dc__task_ops_t kPlanOpTask = {
    .run = plan_op_run,
    .name = plan_op_name,
};

// The scheduler let go of a command of the run (its lock held).
static void command_released(void* run) {
  dc_graph_exec_t* e = run;
  pthread_mutex_lock(&e->lock);
  if (--e->outstanding == 0) pthread_cond_signal(&e->done);
  pthread_mutex_unlock(&e->lock);
}

//===-- Planning --------------------------------------------------------===//

typedef struct planner_t {
  dc__arena_t* scratch;  // everything below is allocated here
  const dc__flat_t* flat;
  size_t n;
  size_t* succ_first;   // successors of op i: succ[succ_first[i]..[i+1])
  uint32_t* succ;
  size_t* pred_first;
  uint32_t* pred;
  uint32_t* priority;   // longest chain of ops from i to an exit
  uint32_t* order;      // plan order -> flat index
  uint32_t* position;   // flat index -> plan order
} planner_t;

static bool build_adjacency(planner_t* pl) {
  const dc__flat_t* f = pl->flat;
  size_t n = pl->n, m = f->edge_count;
  pl->succ_first = dc__arena_zalloc(pl->scratch, n + 1, sizeof(size_t));
  pl->pred_first = dc__arena_zalloc(pl->scratch, n + 1, sizeof(size_t));
  pl->succ = dc__arena_zalloc(pl->scratch, m, sizeof(uint32_t));
  pl->pred = dc__arena_zalloc(pl->scratch, m, sizeof(uint32_t));
  if (!pl->succ_first || !pl->pred_first || !pl->succ || !pl->pred) {
    return false;
  }
  for (size_t e = 0; e < m; ++e) {
    ++pl->succ_first[f->edges[e].from + 1];
    ++pl->pred_first[f->edges[e].to + 1];
  }
  for (size_t i = 0; i < n; ++i) {
    pl->succ_first[i + 1] += pl->succ_first[i];
    pl->pred_first[i + 1] += pl->pred_first[i];
  }
  size_t* next_succ = dc__arena_zalloc(pl->scratch, n, sizeof(size_t));
  size_t* next_pred = dc__arena_zalloc(pl->scratch, n, sizeof(size_t));
  if (!next_succ || !next_pred) return false;
  memcpy(next_succ, pl->succ_first, n * sizeof(size_t));
  memcpy(next_pred, pl->pred_first, n * sizeof(size_t));
  for (size_t e = 0; e < m; ++e) {
    pl->succ[next_succ[f->edges[e].from]++] = f->edges[e].to;
    pl->pred[next_pred[f->edges[e].to]++] = f->edges[e].from;
  }
  return true;
}

// A max-heap of ready ops by priority, then by flat index (earlier first).
typedef struct heap_t {
  uint32_t* items;
  size_t count;
  const uint32_t* priority;
} heap_t;

static bool before(const heap_t* h, uint32_t a, uint32_t b) {
  if (h->priority[a] != h->priority[b]) {
    return h->priority[a] > h->priority[b];
  }
  return a < b;
}

static void heap_push(heap_t* h, uint32_t v) {
  size_t i = h->count++;
  h->items[i] = v;
  while (i > 0 && before(h, h->items[i], h->items[(i - 1) / 2])) {
    uint32_t t = h->items[i];
    h->items[i] = h->items[(i - 1) / 2];
    h->items[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static uint32_t heap_pop(heap_t* h) {
  uint32_t top = h->items[0];
  h->items[0] = h->items[--h->count];
  for (size_t i = 0;;) {
    size_t l = 2 * i + 1, r = l + 1, best = i;
    if (l < h->count && before(h, h->items[l], h->items[best])) best = l;
    if (r < h->count && before(h, h->items[r], h->items[best])) best = r;
    if (best == i) break;
    uint32_t t = h->items[i];
    h->items[i] = h->items[best];
    h->items[best] = t;
    i = best;
  }
  return top;
}

// Computes the critical-path priorities and the plan order: a topological
// order that always takes the ready op with the longest chain after it.
static bool order_ops(planner_t* pl) {
  size_t n = pl->n;
  pl->priority = dc__arena_zalloc(pl->scratch, n, sizeof(uint32_t));
  pl->order = dc__arena_zalloc(pl->scratch, n, sizeof(uint32_t));
  pl->position = dc__arena_zalloc(pl->scratch, n, sizeof(uint32_t));
  uint32_t* indegree = dc__arena_zalloc(pl->scratch, n, sizeof(uint32_t));
  uint32_t* topo = dc__arena_zalloc(pl->scratch, n, sizeof(uint32_t));
  heap_t h = {dc__arena_zalloc(pl->scratch, n, sizeof(uint32_t)), 0,
              pl->priority};
  bool ok = pl->priority && pl->order && pl->position && indegree && topo &&
            h.items;
  if (ok) {
    // Any topological order first (Kahn), for the priorities.
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; ++i) {
      indegree[i] = (uint32_t)(pl->pred_first[i + 1] - pl->pred_first[i]);
      if (indegree[i] == 0) topo[tail++] = (uint32_t)i;
    }
    while (head < tail) {
      uint32_t v = topo[head++];
      for (size_t k = pl->succ_first[v]; k < pl->succ_first[v + 1]; ++k) {
        if (--indegree[pl->succ[k]] == 0) topo[tail++] = pl->succ[k];
      }
    }
    for (size_t k = n; k-- > 0;) {
      uint32_t v = topo[k], longest = 0;
      for (size_t s = pl->succ_first[v]; s < pl->succ_first[v + 1]; ++s) {
        if (pl->priority[pl->succ[s]] > longest) {
          longest = pl->priority[pl->succ[s]];
        }
      }
      pl->priority[v] = longest + 1;
    }
    // Then the list schedule.
    for (size_t i = 0; i < n; ++i) {
      indegree[i] = (uint32_t)(pl->pred_first[i + 1] - pl->pred_first[i]);
      if (indegree[i] == 0) heap_push(&h, (uint32_t)i);
    }
    for (size_t k = 0; k < n; ++k) {
      uint32_t v = heap_pop(&h);
      pl->order[k] = v;
      pl->position[v] = (uint32_t)k;
      for (size_t s = pl->succ_first[v]; s < pl->succ_first[v + 1]; ++s) {
        if (--indegree[pl->succ[s]] == 0) heap_push(&h, pl->succ[s]);
      }
    }
  }
  return ok;
}

// Gives each op a stream: a chain stays on the stream of the op it
// continues; other ops go to the stream with the fewest ops so far.
static void assign_streams(dc_graph_exec_t* e, uint32_t* last_on_stream,
                           size_t* load) {
  for (size_t s = 0; s < e->stream_count; ++s) last_on_stream[s] = UINT32_MAX;
  for (size_t k = 0; k < e->count; ++k) {
    plan_op_t* p = &e->ops[k];
    uint32_t pick = UINT32_MAX, best_priority = 0;
    for (size_t i = 0; i < p->pred_count; ++i) {
      const plan_op_t* pred = &e->ops[p->preds[i]];
      if (last_on_stream[pred->stream] == p->preds[i] &&
          (pick == UINT32_MAX || pred->priority > best_priority)) {
        pick = pred->stream;
        best_priority = pred->priority;
      }
    }
    if (pick == UINT32_MAX) {
      pick = 0;
      for (uint32_t s = 1; s < e->stream_count; ++s) {
        if (load[s] < load[pick]) pick = s;
      }
    }
    p->stream = pick;
    last_on_stream[pick] = (uint32_t)k;
    ++load[pick];
  }
}

// Builds the run's batch: for each op in plan order, on its stream, the
// waits for ops on other streams it has not already waited for (by stream
// order), the op, and a record when another stream waits for it.
static dc_status_t build_commands(dc_graph_exec_t* e, dc__arena_t* scratch) {
  size_t n = e->count, S = e->stream_count;
  // waited[s * S + t]: position in stream t's sequence up to which stream s
  // has waited; a wait for an earlier op of t is implied.
  long* waited = dc__arena_zalloc(scratch, S * S, sizeof(long));
  uint32_t* seq =
      dc__arena_zalloc(scratch, n, sizeof(uint32_t));  // index on its stream
  size_t* on_stream = dc__arena_zalloc(scratch, S, sizeof(size_t));
  bool* wait_needed =
      dc__arena_zalloc(scratch, n, sizeof(bool));  // a record after it
  size_t edges = 0;
  for (size_t k = 0; k < n; ++k) edges += e->ops[k].pred_count;
  bool* edge_wait =
      dc__arena_zalloc(scratch, edges, sizeof(bool));  // per pred edge
  if (!waited || !seq || !on_stream || !wait_needed || !edge_wait) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "dc_graph_instantiate: out of "
                   "memory");
  }
  for (size_t i = 0; i < S * S; ++i) waited[i] = -1;
  for (size_t k = 0; k < n; ++k)
    seq[k] = (uint32_t)on_stream[e->ops[k].stream]++;
  // Pass 1: which edges need a wait, which ops a record.
  size_t waits = 0, records = 0, edge = 0;
  for (size_t k = 0; k < n; ++k) {
    plan_op_t* p = &e->ops[k];
    for (size_t i = 0; i < p->pred_count; ++i, ++edge) {
      plan_op_t* pred = &e->ops[p->preds[i]];
      size_t at = p->stream * S + pred->stream;
      if (pred->stream == p->stream || (long)seq[p->preds[i]] <= waited[at]) {
        continue;
      }
      waited[at] = seq[p->preds[i]];
      edge_wait[edge] = true;
      ++waits;
      if (!wait_needed[p->preds[i]]) {
        wait_needed[p->preds[i]] = true;
        ++records;
      }
    }
  }
  DC_RETURN_IF_ERROR(dc__batch_create(e->streams, S, n + waits + records,
                                      command_released, e, &e->batch));
  for (size_t k = 0; k < n; ++k) {
    plan_op_t* p = &e->ops[k];
    if (!wait_needed[k]) continue;
    DC_RETURN_IF_ERROR(dc_event_create(dc_stream_device(e->streams[p->stream]),
                                       DC_EVENT_DEFAULT, &p->event));
  }
  // Pass 2: the commands, in plan order (each stream's in order).
  edge = 0;
  for (size_t k = 0; k < n; ++k) {
    plan_op_t* p = &e->ops[k];
    for (size_t i = 0; i < p->pred_count; ++i) {
      if (!edge_wait[edge++]) continue;
      dc__batch_wait(e->batch, p->stream, e->ops[p->preds[i]].event);
    }
    dc__batch_task(e->batch, p->stream, &kPlanOpTask, p);
    if (p->event) {
      dc_status_t st = dc__batch_record(e->batch, p->stream, p->event);
      if (st != DC_OK) {
        return DC_FAIL(st, "dc_graph_instantiate: out of memory");
      }
    }
  }
  return DC_OK;
}

// Copies each dispatch's arguments so that set_arg changes the exec only.
static dc_status_t copy_args(dc_graph_exec_t* e) {
  for (size_t k = 0; k < e->count; ++k) {
    plan_op_t* p = &e->ops[k];
    size_t n = p->op->arg_count;
    if (n == 0) continue;
    p->args = dc_allocator_malloc(e->ctx->allocator, n * sizeof(dc_arg_t));
    if (p->args == NULL) {
      return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "dc_graph_instantiate: out of memory");
    }
    if (dc__args_hold(e->ctx->allocator, p->args, p->op->args, n) != DC_OK) {
      dc_allocator_free(e->ctx->allocator, p->args, n * sizeof(dc_arg_t));
      p->args = NULL;
      return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "dc_graph_instantiate: out of memory");
    }
  }
  return DC_OK;
}

// Every op must run on the group's device.
static dc_status_t check_devices(const dc_graph_exec_t* e,
                                 const dc_device_t* device) {
  for (size_t i = 0; i < e->flat.count; ++i) {
    const dc__op_t* op = e->flat.ops[i];
    const dc_device_t* d = NULL;
    if (op->kernel) {
      d = op->kernel->program->device;
    } else if (op->kind == DC_OP_FILL) {
      d = dc_buffer_device(op->dst);
    } else if (op->kind == DC_OP_COPY &&
               dc_buffer_device(op->dst) != device &&
               dc_buffer_device(op->src) != device) {
      d = dc_buffer_device(op->dst);
    }
    if (d != NULL && d != device) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "dc_graph_instantiate: op '%s' runs on %s, the stream "
                     "group on %s", e->flat.names[i], dc_device_name(d),
                     dc_device_name(device));
    }
  }
  return DC_OK;
}

// The plan's ops as a device graph would run them (graph_replay.c).
static dc_status_t plan_replay(dc_graph_exec_t* e) {
  e->replay_ops =
      dc__arena_zalloc(&e->arena, e->count, sizeof(dc__replay_op_t));
  if (e->replay_ops == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "dc_graph_instantiate: out of memory");
  }
  for (size_t k = 0; k < e->count; ++k) {
    const plan_op_t* p = &e->ops[k];
    dc__replay_op_t* r = &e->replay_ops[k];
    if (p->op->kind == DC_OP_DISPATCH) {
      r->kernel = p->op->kernel;
      r->prepared = &p->op->prepared;
      r->args = p->args;
    }
    r->preds = p->preds;
    r->pred_count = p->pred_count;
  }
  dc__replay_init(&e->replay, e->replay_ops, e->count);
  return DC_OK;
}

static dc_status_t plan(dc_graph_exec_t* e) {
  dc__arena_t scratch;
  dc__arena_init(&scratch, e->ctx->allocator);
  planner_t pl = {.scratch = &scratch, .flat = &e->flat, .n = e->flat.count};
  size_t n = pl.n, S = e->stream_count;
  uint32_t* last_on_stream = dc__arena_zalloc(&scratch, S, sizeof(uint32_t));
  size_t* load = dc__arena_zalloc(&scratch, S, sizeof(size_t));
  e->ops = dc__arena_zalloc(&e->arena, n, sizeof(plan_op_t));
  e->preds = dc__arena_zalloc(&e->arena, e->flat.edge_count, sizeof(uint32_t));
  dc_status_t st = DC_OK;
  if (!last_on_stream || !load || !e->ops || !e->preds ||
      !build_adjacency(&pl) || !order_ops(&pl)) {
    st = DC_FAIL(DC_ERR_OUT_OF_MEMORY, "dc_graph_instantiate: out of memory");
  }
  if (st == DC_OK) {
    e->count = n;
    size_t used = 0;
    for (size_t k = 0; k < n; ++k) {
      uint32_t v = pl.order[k];
      plan_op_t* p = &e->ops[k];
      p->exec = e;
      p->op = e->flat.ops[v];
      p->name = e->flat.names[v];
      p->priority = pl.priority[v];
      p->preds = e->preds + used;
      for (size_t i = pl.pred_first[v]; i < pl.pred_first[v + 1]; ++i) {
        p->preds[p->pred_count++] = pl.position[pl.pred[i]];
      }
      used += p->pred_count;
    }
    assign_streams(e, last_on_stream, load);
    st = copy_args(e);
  }
  if (st == DC_OK) st = plan_replay(e);
  if (st == DC_OK) st = build_commands(e, &scratch);
  dc__arena_free_all(&scratch);
  return st;
}

//===-- Lifetime --------------------------------------------------------===//

// Waits for a run in progress (on another thread, which holds no
// reference of its own), then drops everything the plan holds. The graph
// keeps the context alive: it goes last.
static void destroy_exec(dc__resource_t* r) {
  dc_graph_exec_t* e = (dc_graph_exec_t*)r;
  pthread_mutex_lock(&e->lock);
  while (e->running) pthread_cond_wait(&e->done, &e->lock);
  dc__resource_mark_released(&e->header);  // no run starts after this
  pthread_mutex_unlock(&e->lock);
  dc__batch_destroy(e->batch);
  dc_allocator_t a = e->ctx->allocator;
  dc__replay_free(&e->replay);
  for (size_t k = 0; e->ops && k < e->count; ++k) {
    plan_op_t* p = &e->ops[k];
    if (p->op == NULL) continue;
    dc__args_drop(a, p->args, p->op->arg_count);
    if (p->args)
      dc_allocator_free(a, p->args, p->op->arg_count * sizeof(dc_arg_t));
    dc_event_release(p->event);
    dc_program_release(p->memo.fallback_program);
    for (size_t i = 0; i < DC_MAX_SNAPSHOTS; ++i) {
      dc_buffer_release(p->memo.snapshots[i]);
    }
    if (p->message) dc_allocator_free(a, p->message, MESSAGE_SIZE);
  }
  for (size_t i = 0; i < e->stream_count; ++i) dc_stream_release(e->streams[i]);
  dc__arena_free_all(&e->arena);
  dc__flat_free(&e->flat);
  pthread_cond_destroy(&e->done);
  pthread_mutex_destroy(&e->lock);
  dc_graph_t* graph = e->graph;
  dc__object_cache_free(&e->ctx->exec_cache, e);
  dc_graph_release(graph);  // last: it may destroy the context
}

const dc__resource_type_t dc__graph_exec_type = {
    .name = "graph instance",
    .destroy = destroy_exec,
};
DC__RESOURCE_FIRST(dc_graph_exec_t, header);

void dc_graph_exec_retain(dc_graph_exec_t* e) {
  dc__resource_retain(DC__RES(e), &dc__graph_exec_type);
}

void dc_graph_exec_release(dc_graph_exec_t* e) {
  dc__resource_release(DC__RES(e), &dc__graph_exec_type);
}

size_t dc__graph_exec_object_size(void) {
  return sizeof(struct dc_graph_exec_t);
}

dc_status_t dc_graph_instantiate(dc_graph_t* g, dc_stream_group_t* group,
                                 dc_graph_exec_t** out_exec) {
  static const char* fn = "dc_graph_instantiate";
  DC_REQUIRE_ARG(out_exec, fn);
  *out_exec = NULL;
  DC_RETURN_IF_ERROR(
      dc__resource_check(fn, "graph", DC__RES(g), &dc__graph_type));
  DC_RETURN_IF_ERROR(dc__resource_check(fn, "group", DC__RES(group),
                                        &dc__stream_group_type));
  size_t S = dc_stream_group_size(group);
  dc_device_t* device = dc_stream_device(dc_stream_group_stream(group, 0));
  if (dc_device_context(device) != g->ctx) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the stream group belongs to another context", fn);
  }
  dc_graph_exec_t* e = dc__object_cache_alloc(&g->ctx->exec_cache);
  if (e == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate", fn);
  }
  e->ctx = g->ctx;
  pthread_mutex_init(&e->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);  // for run timeouts
  pthread_cond_init(&e->done, &attr);
  pthread_condattr_destroy(&attr);
  dc_graph_retain(g);
  e->graph = g;
  dc__resource_init(&e->header, &dc__graph_exec_type);
  dc__arena_init(&e->arena, g->ctx->allocator);
  e->streams = dc__arena_zalloc(&e->arena, S, sizeof(dc_stream_t*));
  dc_status_t st = e->streams ? DC_OK
                              : DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                                        "%s: cannot allocate", fn);
  for (size_t i = 0; st == DC_OK && i < S; ++i) {
    e->streams[i] = dc_stream_group_stream(group, i);
    dc_stream_retain(e->streams[i]);
    e->stream_count = i + 1;
  }
  if (st == DC_OK) st = dc__graph_flatten(fn, g, &e->flat);
  if (st == DC_OK) {
    dc__graph_warn_uninitialised(g, &e->flat, NULL, 0);
    st = check_devices(e, device);
  }
  if (st == DC_OK) st = plan(e);
  if (st != DC_OK) {
    dc__saved_error_t saved;
    dc__error_save(&saved);
    dc_graph_exec_release(e);
    dc__error_restore(&saved);
    return st;
  }
  *out_exec = e;
  return DC_OK;
}

//===-- Runs ------------------------------------------------------------===//

static bool runs_done(void* arg) {
  return ((dc_graph_exec_t*)arg)->outstanding == 0;
}

// Ends a run: a destroy or another run may go on.
static void run_over(dc_graph_exec_t* e) {
  pthread_mutex_lock(&e->lock);
  e->running = false;
  pthread_cond_broadcast(&e->done);
  pthread_mutex_unlock(&e->lock);
}

// The run's result, by the graph's error mode (after the run).
static dc_status_t outcome(dc_graph_exec_t* e, uint64_t timeout_ns) {
  dc_status_t stop = (dc_status_t)atomic_load(&e->stop);
  const char* name = e->graph->name;
  if (stop == DC_ERR_DEADLINE_EXCEEDED) {
    return DC_FAIL(stop, "graph '%s': the run passed its timeout of %llu ns",
                   name, (unsigned long long)timeout_ns);
  }
  if (stop == DC_ERR_CANCELLED) {
    return DC_FAIL(stop, "graph '%s': the run was cancelled", name);
  }
  const plan_op_t* first = NULL;
  size_t failed = 0;
  for (size_t k = 0; k < e->count; ++k) {
    if (e->ops[k].state != DC_OP_FAILED) continue;
    if (first == NULL) first = &e->ops[k];
    ++failed;
  }
  if (first == NULL) return DC_OK;
  const char* first_message = first->message ? first->message : "";
  if (e->graph->error_mode != DC_ERRORS_COLLECT_ALL || failed == 1) {
    return DC_FAIL(first->status, "graph '%s': op '%s' failed: %s", name,
                   first->name, first_message);
  }
  char text[1000];
  size_t used = (size_t)snprintf(text, sizeof(text), "graph '%s': %zu ops "
                                 "failed:", name, failed);
  for (size_t k = 0; k < e->count && used < sizeof(text); ++k) {
    const plan_op_t* p = &e->ops[k];
    if (p->state != DC_OP_FAILED) continue;
    int w = snprintf(text + used, sizeof(text) - used, " '%s' (%s: %s);",
                     p->name, dc_status_name(p->status),
                     p->message ? p->message : "");
    if (w > 0) used += (size_t)w;
  }
  return DC_FAIL(first->status, "%s", text);
}

// Whether this run replays the graph as one device graph: the graph can, the device is healthy, the run can neither time
// out nor be cancelled (a replay cannot stop between ops), no fault rule
// is armed (faults are injected per op), and nothing else is queued on
// the group's streams (the run would not wait for it).
static bool may_replay(const dc_graph_exec_t* e, const dc_run_params_t* p) {
  if (!dc__replay_possible(&e->replay) || p->timeout_ns != 0 ||
      p->cancel != NULL ||
      !dc__fault_none(e->ctx)) {
    return false;
  }
  dc_device_health_t health;
  if (dc_device_health(e->replay.device, &health) != DC_OK ||
      health.state != DC_DEVICE_HEALTHY) {
    return false;
  }
  return dc__batch_streams_idle(e->batch);
}

// Runs every op at once as the device graph. Returns false when it did
// not run (the device's breaker refused, or the device refused the graph
// before any of it ran), and the run then goes op by op. A failure once
// it ran fails every op with the device's message: which op failed is
// not known.
static bool replay(dc_graph_exec_t* e) {
  dc_device_t* device = e->replay.device;
  dc_breaker_t* breaker = NULL;
  dc_breaker_permit_t permit = DC_BREAKER_NO_PERMIT;
  if (!e->graph->no_breakers) {
    breaker = e->graph->breaker;
    if (breaker == NULL &&
        dc_breaker_for(e->ctx, dc_device_name(device), &breaker) != DC_OK) {
      breaker = NULL;
    }
    if (breaker != NULL && dc_breaker_acquire(breaker, &permit) != DC_OK) {
      return false;
    }
  }
  uint64_t start = dc__now_ns();
  bool started = false;
  dc_status_t status =
      dc__replay_run(&e->replay, e->replay_ops, e->count, &started);
  uint64_t end = dc__now_ns();
  // Not started: the ops' own attempts will count, this one does not.
  if (breaker) {
    dc_breaker_record(breaker, permit, started ? status : DC_ERR_CANCELLED);
  }
  if (status != DC_OK && !started) return false;
  if (status != DC_OK) {
    dc__telemetry_error(e->ctx, status, dc_last_error());
    DC_LOG(e->ctx, DC_LOG_ERROR, "graph", "graph '%s': replay on %s failed: %s",
           e->graph->name, dc_device_name(device), dc_last_error());
    dc__device_failed(device, status, dc_last_error());
  }
  for (size_t k = 0; k < e->count; ++k) {
    plan_op_t* p = &e->ops[k];
    p->attempts = 1;
    p->ran_on = device;
    settle_op(p, NULL, true, status, start, end, "");
  }
  return true;
}

dc_status_t dc_graph_exec_run(dc_graph_exec_t* e,
                              const dc_run_params_t* params) {
  static const char* fn = "dc_graph_exec_run";
  DC_RETURN_IF_ERROR(check_exec(fn, e));
  dc_run_params_t p = params ? *params : (dc_run_params_t){0};
  if (p.cancel != NULL) {
    DC_RETURN_IF_ERROR(dc__resource_check(fn, "cancel", DC__RES(p.cancel),
                                          &dc__cancel_token_type));
    if (dc__cancel_token_context(p.cancel) != e->ctx) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: the cancel token belongs to another context", fn);
    }
  }
  // The scheduler calls command_released with its lock held, which then
  // takes e->lock: never call the scheduler with e->lock held.
  pthread_mutex_lock(&e->lock);
  bool busy = e->running;
  e->running = true;
  pthread_mutex_unlock(&e->lock);
  if (busy) {
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "%s: graph '%s' is already running", fn, e->graph->name);
  }
  dc_status_t status = dc__batch_check(e->batch, fn);
  if (status != DC_OK) {
    run_over(e);
    return status;
  }
  atomic_store(&e->stop, DC_OK);
  atomic_store(&e->finished, 0);
  e->token = p.cancel;
  for (size_t k = 0; k < e->count; ++k) {
    plan_op_t* op = &e->ops[k];
    op->state = DC_OP_PENDING;
    op->status = DC_OK;
    op->attempts = 0;
    op->duration_ns = 0;
    op->ran_on = NULL;
    op->fell_back = false;
    if (op->message) op->message[0] = '\0';
  }
  if (may_replay(e, &p) && replay(e)) {
    run_over(e);
    return outcome(e, p.timeout_ns);
  }
  pthread_mutex_lock(&e->lock);
  e->outstanding = dc__batch_size(e->batch);
  pthread_mutex_unlock(&e->lock);
  status = dc__batch_submit(e->batch, fn);
  if (status != DC_OK) {  // a stream failed since the check
    pthread_mutex_lock(&e->lock);
    e->outstanding = 0;
    pthread_mutex_unlock(&e->lock);
    run_over(e);
    return status;
  }
  pthread_mutex_lock(&e->lock);
  if (p.timeout_ns != 0 &&
      dc__wait_on_locked(&e->done, &e->lock, runs_done, e, p.timeout_ns) !=
          DC_OK) {
    atomic_store(&e->stop, DC_ERR_DEADLINE_EXCEEDED);
  }
  while (e->outstanding > 0) pthread_cond_wait(&e->done, &e->lock);
  pthread_mutex_unlock(&e->lock);
  run_over(e);
  // Ops that never started (their stream was cancelled, say) are reported
  // as cancelled.
  for (size_t k = 0; k < e->count; ++k) {
    plan_op_t* op = &e->ops[k];
    if (op->state == DC_OP_PENDING) {
      op->state = DC_OP_CANCELLED;
      op->status = DC_ERR_CANCELLED;
      keep_message(op, "it did not start before the run ended");
    }
  }
  return outcome(e, p.timeout_ns);
}

void dc_graph_exec_cancel(dc_graph_exec_t* e) {
  if (is_exec(e)) atomic_store(&e->stop, DC_ERR_CANCELLED);
}

dc_status_t dc_graph_exec_set_arg(dc_graph_exec_t* e, const char* op,
                                  size_t arg_index, const dc_arg_t* arg) {
  static const char* fn = "dc_graph_exec_set_arg";
  DC_RETURN_IF_ERROR(check_exec(fn, e));
  DC_REQUIRE_ARG(op, fn);
  DC_REQUIRE_ARG(arg, fn);
  plan_op_t* p = NULL;
  for (size_t k = 0; k < e->count && p == NULL; ++k) {
    if (strcmp(e->ops[k].name, op) == 0) p = &e->ops[k];
  }
  if (p == NULL) {
    return DC_FAIL(DC_ERR_NOT_FOUND, "%s: graph '%s' has no op '%s'", fn,
                   e->graph->name, op);
  }
  if (p->op->kind != DC_OP_DISPATCH && p->op->kind != DC_OP_INDIRECT) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: op '%s' is a %s, not a "
                   "dispatch", fn, op, dc__op_kind_name(p->op->kind));
  }
  if (arg_index >= p->op->arg_count) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': argument %zu is out of range (kernel '%s' "
                   "has %zu)", fn, op, arg_index,
                   dc_kernel_name(p->op->kernel), p->op->arg_count);
  }
  DC_RETURN_IF_ERROR(dc__kernel_check_arg(fn, p->op->kernel, arg_index, arg));
  const dc_arg_t* old = &p->args[arg_index];
  if (arg->kind == DC_ARG_BUFFER &&
      dc_buffer_length(arg->buffer) != dc_buffer_length(old->buffer)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': argument %zu: the new buffer has %zu "
                   "elements, the one it replaces %zu", fn, op, arg_index,
                   dc_buffer_length(arg->buffer),
                   dc_buffer_length(old->buffer));
  }
  if (arg->kind == DC_ARG_LOCAL && arg->local_size != old->local_size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': argument %zu: a __local size of %zu bytes "
                   "cannot replace one of %zu", fn, op, arg_index,
                   arg->local_size, old->local_size);
  }
  pthread_mutex_lock(&e->lock);
  bool running = e->running;
  pthread_mutex_unlock(&e->lock);
  if (running) {
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "%s: graph '%s' is running", fn, e->graph->name);
  }
  dc_arg_t held;
  DC_RETURN_IF_ERROR(dc__arg_hold(e->ctx->allocator, &held, arg));
  dc__arg_drop(e->ctx->allocator, &p->args[arg_index]);
  p->args[arg_index] = held;
  e->replay.stale = true;  // the next replay records the graph again
  return DC_OK;
}

//===-- Reports ---------------------------------------------------------===//

size_t dc_graph_exec_op_count(const dc_graph_exec_t* e) {
  return is_exec(e) ? e->count : 0;
}

size_t dc_graph_exec_finished(const dc_graph_exec_t* e) {
  return is_exec(e) ? atomic_load(&((dc_graph_exec_t*)e)->finished) : 0;
}

static int by_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

dc_status_t dc_graph_exec_op(const dc_graph_exec_t* e, size_t index,
                             dc_op_report_t* out) {
  static const char* fn = "dc_graph_exec_op";
  DC_REQUIRE_ARG(out, fn);
  DC_RETURN_IF_ERROR(check_exec(fn, e));
  if (index >= e->count) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE, "%s: index %zu, the graph has %zu "
                   "op(s)", fn, index, e->count);
  }
  const plan_op_t* p = &e->ops[index];
  *out = (dc_op_report_t){
      .name = p->name,
      .kind = dc__op_kind_name(p->op->kind),
      .state = p->state,
      .stream_id = dc_stream_id(e->streams[p->stream]),
      .attempts = p->attempts,
      .duration_ns = p->duration_ns,
      .status = p->status,
      .message = p->message ? p->message : "",
      .device = p->ran_on ? dc_device_name(p->ran_on) : "",
      .fell_back = p->fell_back,
      .runs = p->runs,
      .mean_ns = p->runs ? (double)p->total_ns / (double)p->runs : 0.0,
  };
  size_t kept = DC_MIN(p->runs, (uint64_t)DC_OP_HISTORY);
  if (kept > 0) {
    uint64_t sorted[DC_OP_HISTORY];
    memcpy(sorted, p->recent, kept * sizeof(uint64_t));
    qsort(sorted, kept, sizeof(uint64_t), by_u64);
    size_t rank = (kept * 95 + 99) / 100;  // nearest rank
    out->p95_ns = (double)sorted[rank - 1];
  }
  return DC_OK;
}

dc_status_t dc_graph_exec_report(const dc_graph_exec_t* e, char* buffer,
                                 size_t size, size_t* out_length) {
  static const char* fn = "dc_graph_exec_report";
  DC_REQUIRE_ARG(out_length, fn);
  DC_RETURN_IF_ERROR(check_exec(fn, e));
  size_t used = 0;
  for (size_t k = 0; k < e->count; ++k) {
    dc_op_report_t r;
    dc_graph_exec_op(e, k, &r);
    char line[600];
    int n = snprintf(line, sizeof(line),
                     "%-24s %-9s stream %-3u attempts %u  %9.3f ms"
                     "%s%s%s%s%s%s%s\n",
                     r.name, kStateNames[r.state], r.stream_id, r.attempts,
                     (double)r.duration_ns / 1e6,
                     r.fell_back ? "  (fell back to " : "",
                     r.fell_back ? r.device : "",
                     r.fell_back ? ")" : "", r.message[0] ? "  " : "",
                     r.state == DC_OP_FAILED ? dc_status_name(r.status) : "",
                     r.state == DC_OP_FAILED ? ": " : "", r.message);
    if (n < 0) continue;
    if (buffer && used < size) {
      snprintf(buffer + used, size - used, "%s", line);
    }
    used += (size_t)n;
  }
  if (buffer && size) buffer[DC_MIN(used, size - 1)] = '\0';
  *out_length = used;
  return DC_OK;
}

dc_status_t dc_graph_exec_to_dot(const dc_graph_exec_t* e, char* buffer,
                                 size_t size, size_t* out_length) {
  static const char* fn = "dc_graph_exec_to_dot";
  DC_REQUIRE_ARG(out_length, fn);
  DC_RETURN_IF_ERROR(check_exec(fn, e));
  size_t n = e->flat.count;
  dc__arena_t scratch;
  dc__arena_init(&scratch, e->ctx->allocator);
  uint32_t* stream_of = dc__arena_zalloc(&scratch, n, sizeof(uint32_t));
  dc_op_state_t* state_of =
      dc__arena_zalloc(&scratch, n, sizeof(dc_op_state_t));
  if (stream_of == NULL || state_of == NULL) {
    dc__arena_free_all(&scratch);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  // Plan ops point at flat names; match them back by name pointer.
  for (size_t k = 0; k < e->count; ++k) {
    for (size_t i = 0; i < n; ++i) {
      if (e->flat.names[i] == e->ops[k].name) {
        stream_of[i] = dc_stream_id(e->streams[e->ops[k].stream]);
        state_of[i] = e->ops[k].state;
        break;
      }
    }
  }
  dc_status_t st = dc__flat_to_dot(e->graph->name, &e->flat, stream_of,
                                   state_of, buffer, size, out_length);
  dc__arena_free_all(&scratch);
  return st;
}

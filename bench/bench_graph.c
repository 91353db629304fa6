// bench_graph.c: execution graphs (dc/graph.h) on the CPU device against
// StarPU submitting the same dependency structure, side by side in one
// process run. Per node (a sample's time / 10,000):
//
//   graph chain 10000 host ops    op i runs after op i-1 (dc: `after`;
//                                 StarPU: starpu_task_declare_deps_array)
//   graph wide 10000 host ops     10,000 independent ops
//   graph chain 10000 empty kernels   the same with an empty kernel (1
//   graph wide 10000 empty kernels    work-item, no arguments,
//                                     dc_graph_dispatch)
//
// and in each, three cases:
//
//   dc first run   dc_graph_create, 10,000 adds, dc_graph_instantiate onto
//                  a stream group with the device's default stream count,
//                  one dc_graph_exec_run; the instance and the graph are
//                  freed after the clock stops (StarPU's tasks are cleaned
//                  after it stops too). The three steps are also reported
//                  apart (informational "first run split" rows).
//   dc replay      dc_graph_exec_run of an instance made before timing.
//   StarPU         starpu_task_init of 10,000 task structures of a
//                  preallocated array (no malloc of tasks), the chain's
//                  dependencies declared, starpu_task_submit of each in
//                  order, then starpu_task_wait_for_all; starpu_task_clean
//                  of each after the clock stops. StarPU has no replay: the
//                  replay goal compares with this same submission.
//
// Host ops (dc) and StarPU tasks run the same function: a relaxed atomic
// increment of a counter, which must have counted exactly 10,000 after every
// sample (else the program aborts). StarPU has no OpenCL C kernel here
// (its OpenCL driver is not used), so the kernel rows compare dc's empty
// kernel with the same empty CPU codelet.
//
// Checked once before anything is timed: the chain order on both sides
// (each op checks that its predecessor ran before it), and that every op
// of a row's replay instance succeeded in each of two runs.
//
// Samples: one untimed sample of each case of a row, then BENCH_REPS
// rounds of one sample of every case in turn, each after a wait until the
// process is idle.
//
// The StarPU part is built only where CMake found it (DC_BENCH_STARPU);
// without it the program prints a note and reports dc alone. StarPU runs
// with CPU workers only, as many as dc has stream threads (STARPU_NCPU
// overrides that), and its STARPU_HOME in a private temporary directory,
// removed at exit. Its idle workers poll, so it is paused (starpu_pause)
// outside its own samples.
//
// BENCH_GRAPH=chain-host,wide-host,chain-kernel,wide-kernel (a comma-
// separated subset) runs only those rows.
// SPDX-License-Identifier: MIT
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "dc/dc.h"
#include "harness.h"

#ifdef DC_BENCH_STARPU
#include <starpu.h>
#endif

#define NODES 10000
#define NAME_SIZE 8  // "n9999" and a NUL

static const dc_dispatch_t kOneItem = {.dims = 1, .global = {1}};

//===-- What the ops do ---------------------------------------------------===//

// The counter every host op and StarPU task increments.
typedef struct counter_t {
  atomic_uint_fast64_t n;
} counter_t;

static void count(counter_t* c) {
  atomic_fetch_add_explicit(&c->n, 1u, memory_order_relaxed);
}

// The chain-order check: node i finds node i-1 done, then marks itself.
typedef struct order_t {
  atomic_uchar* done;   // NODES flags
  atomic_uint wrong;    // nodes that ran before their predecessor
} order_t;

typedef struct order_node_t {
  order_t* order;
  uint32_t index;
} order_node_t;

static void check_order(order_node_t* node) {
  order_t* o = node->order;
  if (node->index > 0 &&
      !atomic_load_explicit(&o->done[node->index - 1], memory_order_acquire)) {
    atomic_fetch_add(&o->wrong, 1u);
  }
  atomic_store_explicit(&o->done[node->index], 1, memory_order_release);
}

static void order_reset(order_t* o) {
  for (size_t i = 0; i < NODES; ++i) atomic_store(&o->done[i], 0);
  atomic_store(&o->wrong, 0u);
}

// Whether every node ran, each after its predecessor; notes it otherwise.
static bool order_ok(const char* name, const char* who, order_t* o) {
  size_t ran = 0;
  for (size_t i = 0; i < NODES; ++i) ran += atomic_load(&o->done[i]) != 0;
  unsigned wrong = atomic_load(&o->wrong);
  if (ran != NODES || wrong != 0) {
    bench_note(name, "%s: chain order check FAILED: %zu of %d nodes ran, %u "
               "before their predecessor; row dropped", who, ran, NODES,
               wrong);
    return false;
  }
  return true;
}

static dc_status_t count_op(void* user_data) {
  count(user_data);
  return DC_OK;
}

static dc_status_t order_op(void* user_data) {
  check_order(user_data);
  return DC_OK;
}

//===-- dc ---------------------------------------------------------------===//

typedef struct dcx_t {
  dc_context_t* ctx;
  dc_device_t* dev;
  dc_program_t* program;
  dc_kernel_t* empty;
  dc_stream_group_t* group;
  char (*names)[NAME_SIZE];  // node names, formatted before timing
} dcx_t;

typedef enum op_kind_e { OP_HOST, OP_KERNEL } op_kind_t;

// One row: a shape and an op kind, with what its dc cases need.
typedef struct row_t {
  const char* name;
  const char* part;
  bool chain;
  op_kind_t kind;
  dcx_t* dc;
  counter_t counter;
  dc_graph_exec_t* replay;  // instantiated before timing
  // The split of the last first run.
  uint64_t build_ns, instantiate_ns, run_ns;
#ifdef DC_BENCH_STARPU
  struct starpu_task* tasks;  // NODES, preallocated
#endif
} row_t;

// Builds the row's graph; host ops call |fn| with |user_data| + i *
// |stride| bytes (NULL fn: the row's counting op).
static dc_graph_t* build_graph(row_t* r, dc_host_fn_t fn, char* user_data,
                               size_t stride) {
  dcx_t* d = r->dc;
  dc_graph_t* g = NULL;
  dc_graph_params_t params = {.name = r->part};
  DC_CHECK(dc_graph_create(d->ctx, &params, &g));
  for (size_t i = 0; i < NODES; ++i) {
    const char* prev = i > 0 ? d->names[i - 1] : NULL;
    dc_op_options_t after = {.after = &prev, .after_count = 1};
    const dc_op_options_t* o = r->chain && i > 0 ? &after : NULL;
    if (r->kind == OP_KERNEL) {
      DC_CHECK(dc_graph_dispatch(g, d->names[i], d->empty, &kOneItem, NULL, 0,
                                 o));
    } else if (fn != NULL) {
      DC_CHECK(dc_graph_host(g, d->names[i], fn, user_data + i * stride, o));
    } else {
      DC_CHECK(dc_graph_host(g, d->names[i], count_op, &r->counter, o));
    }
  }
  return g;
}

static void expect_count(row_t* r, const char* who) {
  if (r->kind != OP_HOST) return;
  uint64_t n = atomic_load(&r->counter.n);
  if (n != NODES) {
    fprintf(stderr, "bench_graph: %s, %s: %llu ops ran, expected %d\n",
            r->name, who, (unsigned long long)n, NODES);
    abort();
  }
}

static uint64_t dc_first_run(void* arg) {
  row_t* r = arg;
  atomic_store(&r->counter.n, 0u);
  uint64_t t0 = bench_now_ns();
  dc_graph_t* g = build_graph(r, NULL, NULL, 0);
  uint64_t t1 = bench_now_ns();
  dc_graph_exec_t* e = NULL;
  DC_CHECK(dc_graph_instantiate(g, r->dc->group, &e));
  uint64_t t2 = bench_now_ns();
  DC_CHECK(dc_graph_exec_run(e, NULL));
  uint64_t t3 = bench_now_ns();
  dc_graph_exec_release(e);
  dc_graph_release(g);
  expect_count(r, "dc first run");
  r->build_ns = t1 - t0;
  r->instantiate_ns = t2 - t1;
  r->run_ns = t3 - t2;
  return t3 - t0;
}

static uint64_t dc_replay(void* arg) {
  row_t* r = arg;
  atomic_store(&r->counter.n, 0u);
  uint64_t t0 = bench_now_ns();
  DC_CHECK(dc_graph_exec_run(r->replay, NULL));
  uint64_t t1 = bench_now_ns();
  expect_count(r, "dc replay");
  return t1 - t0;
}

// Every op of |e|'s last run succeeded, and has succeeded |runs| times;
// returns the number of streams the ops ran on (0 after a note when not).
static int dc_report_ok(const char* name, dc_graph_exec_t* e, uint64_t runs) {
  if (dc_graph_exec_op_count(e) != NODES) {
    bench_note(name, "dc: the instance has %zu ops, expected %d; row "
               "dropped", dc_graph_exec_op_count(e), NODES);
    return 0;
  }
  uint64_t used = 0;  // a bit per stream
  for (size_t i = 0; i < NODES; ++i) {
    dc_op_report_t rep;
    DC_CHECK(dc_graph_exec_op(e, i, &rep));
    if (rep.state != DC_OP_SUCCEEDED || rep.runs != runs) {
      bench_note(name, "dc: op '%s' is %d after %llu run(s) (ran %llu "
                 "times); row dropped", rep.name, (int)rep.state,
                 (unsigned long long)runs, (unsigned long long)rep.runs);
      return 0;
    }
    used |= 1ull << (rep.stream_id % 64u);
  }
  int streams = 0;
  for (; used != 0; used &= used - 1) ++streams;
  return streams;
}

// Checks the chain order with checking host ops, and the row's own graph:
// each op succeeds once per run and host ops count to NODES. Makes the
// replay instance. Returns false (with a note) on a failure.
static bool dc_prepare(row_t* r) {
  dcx_t* d = r->dc;
  if (r->chain) {
    order_t o = {.done = bench_xcalloc(NODES, sizeof(atomic_uchar))};
    order_node_t* nodes = bench_xcalloc(NODES, sizeof(order_node_t));
    for (size_t i = 0; i < NODES; ++i) {
      nodes[i] = (order_node_t){&o, (uint32_t)i};
    }
    order_reset(&o);
    row_t host = *r;
    host.kind = OP_HOST;
    dc_graph_t* g = build_graph(&host, order_op, (char*)nodes,
                                sizeof(order_node_t));
    dc_graph_exec_t* e = NULL;
    DC_CHECK(dc_graph_instantiate(g, d->group, &e));
    bool ok = true;
    for (int run = 0; run < 2 && ok; ++run) {  // first run and a replay
      order_reset(&o);
      DC_CHECK(dc_graph_exec_run(e, NULL));
      ok = order_ok(r->name, run ? "dc replay" : "dc first run", &o);
    }
    dc_graph_exec_release(e);
    dc_graph_release(g);
    free(nodes);
    free((void*)o.done);
    if (!ok) return false;
  }
  dc_graph_t* g = build_graph(r, NULL, NULL, 0);
  DC_CHECK(dc_graph_instantiate(g, d->group, &r->replay));
  dc_graph_release(g);  // the instance keeps what it needs
  int streams = 0;
  for (uint64_t run = 1; run <= 2; ++run) {
    atomic_store(&r->counter.n, 0u);
    DC_CHECK(dc_graph_exec_run(r->replay, NULL));
    expect_count(r, "dc check");
    streams = dc_report_ok(r->name, r->replay, run);
    if (streams == 0) return false;
  }
  bench_note(r->name, "dc: checked: every op succeeded once per run%s; the "
             "plan put the ops on %d of the group's %zu streams", r->kind ==
             OP_HOST ? " and the host ops counted 10000" : "", streams,
             dc_stream_group_size(d->group));
  return true;
}

//===-- StarPU ------------------------------------------------------------===//

#ifdef DC_BENCH_STARPU
static void count_task(void* buffers[], void* cl_arg) {
  (void)buffers;
  count(cl_arg);
}

static void order_task(void* buffers[], void* cl_arg) {
  (void)buffers;
  check_order(cl_arg);
}

static struct starpu_codelet g_count_cl = {
    .where = STARPU_CPU,
    .cpu_funcs = {count_task},
    .nbuffers = 0,
    .name = "count",
};

static struct starpu_codelet g_order_cl = {
    .where = STARPU_CPU,
    .cpu_funcs = {order_task},
    .nbuffers = 0,
    .name = "order",
};

// Submits NODES tasks of |cl| (the chain's with their dependencies), task
// i with |arg| + i * |stride| bytes as its argument, and waits for all.
// Returns the time from the first starpu_task_init to the end of the
// wait; cleans the tasks afterwards. StarPU's workers are resumed before
// the clock starts and paused after it stops.
static uint64_t starpu_submit_all(row_t* r, struct starpu_codelet* cl,
                                  char* arg, size_t stride) {
  struct starpu_task* t = r->tasks;
  starpu_resume();  // StarPU's idle workers poll: paused between samples
  uint64_t t0 = bench_now_ns();
  for (size_t i = 0; i < NODES; ++i) {
    starpu_task_init(&t[i]);
    t[i].cl = cl;
    t[i].cl_arg = arg + i * stride;
    t[i].destroy = 0;
    if (r->chain && i > 0) {
      struct starpu_task* prev = &t[i - 1];
      starpu_task_declare_deps_array(&t[i], 1, &prev);
    }
    int err = starpu_task_submit(&t[i]);
    if (err != 0) {
      fprintf(stderr, "bench_graph: starpu_task_submit: %s\n", strerror(-err));
      abort();
    }
  }
  starpu_task_wait_for_all();
  uint64_t t1 = bench_now_ns();
  for (size_t i = 0; i < NODES; ++i) starpu_task_clean(&t[i]);
  starpu_pause();
  return t1 - t0;
}

static uint64_t starpu_run(void* arg) {
  row_t* r = arg;
  atomic_store(&r->counter.n, 0u);
  uint64_t t = starpu_submit_all(r, &g_count_cl, (char*)&r->counter, 0);
  if (atomic_load(&r->counter.n) != NODES) {
    fprintf(stderr, "bench_graph: %s, StarPU: %llu tasks ran, expected %d\n",
            r->name, (unsigned long long)atomic_load(&r->counter.n), NODES);
    abort();
  }
  return t;
}

static bool starpu_prepare(row_t* r) {
  r->tasks = bench_xcalloc(NODES, sizeof(struct starpu_task));
  if (!r->chain) return true;
  order_t o = {.done = bench_xcalloc(NODES, sizeof(atomic_uchar))};
  order_node_t* nodes = bench_xcalloc(NODES, sizeof(order_node_t));
  for (size_t i = 0; i < NODES; ++i) {
    nodes[i] = (order_node_t){&o, (uint32_t)i};
  }
  order_reset(&o);
  starpu_submit_all(r, &g_order_cl, (char*)nodes, sizeof(order_node_t));
  bool ok = order_ok(r->name, "StarPU", &o);
  free(nodes);
  free((void*)o.done);
  return ok;
}
#endif  // DC_BENCH_STARPU

//===-- Rows --------------------------------------------------------------===//

typedef struct sample_case_t {
  const char* variant;
  uint64_t (*run)(void* arg);  // one sample: its time in ns
} sample_case_t;

static void bench_row(row_t* r, bool have_starpu) {
  if (!dc_prepare(r)) return;
  bool starpu = false;
#ifdef DC_BENCH_STARPU
  starpu = have_starpu && starpu_prepare(r);
#else
  (void)have_starpu;
#endif
  sample_case_t cases[3] = {
      {"dc first run (build+instantiate+run)", dc_first_run},
      {"dc replay (dc_graph_exec_run)", dc_replay},
#ifdef DC_BENCH_STARPU
      {"starpu 10000 tasks (init+submit+wait_for_all)", starpu_run},
#endif
  };
  int count = starpu ? 3 : 2;
  int reps = bench_reps();
  size_t n = (size_t)reps * (size_t)count;
  double* samples = bench_xcalloc(n, sizeof(double));
  double* split = bench_xcalloc((size_t)reps * 3u, sizeof(double));
  bool warned = false;
  for (int k = 0; k < count; ++k) {  // one untimed sample each
    bench_settle(r->name, &warned);
    cases[k].run(r);
  }
  for (int rep = 0; rep < reps; ++rep) {
    for (int k = 0; k < count; ++k) {
      bench_settle(r->name, &warned);
      uint64_t t = cases[k].run(r);
      samples[(size_t)k * (size_t)reps + (size_t)rep] = (double)t / NODES;
      if (k == 0) {
        split[rep] = (double)r->build_ns / NODES;
        split[(size_t)reps + (size_t)rep] = (double)r->instantiate_ns / NODES;
        split[2u * (size_t)reps + (size_t)rep] = (double)r->run_ns / NODES;
      }
    }
  }
  bench_case_t res[3];
  for (int k = 0; k < count; ++k) {
    res[k] = (bench_case_t){.variant = cases[k].variant, .iters = 1};
    bench_report_samples(r->name, &res[k], &samples[(size_t)k * (size_t)reps],
                         reps);
  }
  char split_name[128];
  snprintf(split_name, sizeof(split_name), "%s, dc first run split",
           r->name);
  static const char* const kSplit[3] = {"build (create + 10000 adds)",
                                        "dc_graph_instantiate",
                                        "first dc_graph_exec_run"};
  for (int k = 0; k < 3; ++k) {
    bench_case_t c = {.variant = kSplit[k], .iters = 1};
    bench_report_samples(split_name, &c, &split[(size_t)k * (size_t)reps],
                         reps);
  }
  if (count == 3) {
    bench_print_ratio(r->name, &res[0], &res[2], "ratio<=1");
    bench_print_ratio(r->name, &res[1], &res[2], "ratio<=0.25");
  } else {
    bench_note(r->name, "StarPU not available: no baseline");
  }
  free(samples);
  free(split);
  dc_graph_exec_release(r->replay);
  r->replay = NULL;
#ifdef DC_BENCH_STARPU
  free(r->tasks);
  r->tasks = NULL;
#endif
}

//===-- main -------------------------------------------------------------===//

int main(int argc, char** argv) {
  bench_init(argc, argv);
  const char* name = "graph";
  dcx_t d = {0};
  dc_context_params_t params = {.backends = "cpu", .kernel_cache_dir = "off"};
  DC_CHECK(dc_context_create(&params, &d.ctx));
  DC_CHECK(dc_context_device(d.ctx, 0, &d.dev));
  d.program = bench_dc_build(d.dev, bench_empty_source, "empty.cl");
  d.empty = bench_dc_find(d.program, "empty");
  dc_stream_group_params_t gp = {.label = "graph"};  // count 0: the default
  DC_CHECK(dc_stream_group_create(d.dev, &gp, &d.group));
  d.names = bench_xcalloc(NODES, NAME_SIZE);
  for (size_t i = 0; i < NODES; ++i) {
    snprintf(d.names[i], NAME_SIZE, "n%zu", i);
  }
  size_t streams = dc_stream_group_size(d.group);
  const dc_device_info_t* info = dc_device_info(d.dev);
  bench_note(name, "dc: device %s (%s), %u worker-pool threads; one stream "
             "group of %zu streams (the device's default stream count), so "
             "%zu stream threads; kernel cache off; node names (\"n0\" ...) "
             "formatted before timing; the empty kernel is '%s' over 1 "
             "work-item; threads in the process: %d", info->name, info->model,
             dc_worker_pool_thread_count(dc_context_worker_pool(d.ctx)),
             streams, streams, "__kernel void empty(void) {}",
             bench_thread_count());

  bool have_starpu = false;
#ifdef DC_BENCH_STARPU
  char starpu_home[512];
  bench_make_temp_dir(starpu_home, sizeof(starpu_home), "graph-starpu");
  setenv("STARPU_HOME", starpu_home, 1);
  int threads_before = bench_thread_count();
  struct starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = (int)streams;  // STARPU_NCPU, when set, wins
  conf.ncuda = 0;
  conf.nopencl = 0;
  conf.nmic = 0;
  conf.nmpi_ms = 0;
  int err = starpu_init(&conf);
  if (err != 0) {
    bench_note(name, "starpu_init failed (%s): StarPU rows skipped",
               strerror(-err));
  } else {
    have_starpu = true;
    // Idle StarPU workers poll for work (a vCPU's worth of CPU time here):
    // paused outside StarPU's own samples, so dc's cases run beside idle
    // threads, as StarPU's do.
    starpu_pause();
    int major, minor, release;
    starpu_get_version(&major, &minor, &release);
    struct starpu_sched_policy* policy = starpu_sched_ctx_get_sched_policy(0);
    const char* ncpu_env = getenv("STARPU_NCPU");
    bench_note(name, "StarPU %d.%d.%d: %u CPU workers (%u workers in all; "
               "conf.ncpus=%zu, STARPU_NCPU=%s), scheduler '%s', no CUDA, "
               "no OpenCL; STARPU_HOME private; paused (starpu_pause) outside "
               "its samples, as its idle workers poll; threads in the "
               "process: %d before starpu_init, %d after", major, minor,
               release, starpu_cpu_worker_get_count(),
               starpu_worker_get_count(),
               streams, ncpu_env ? ncpu_env : "unset",
               policy && policy->policy_name ? policy->policy_name : "?",
               threads_before, bench_thread_count());
  }
#else
  bench_note(name, "built without StarPU (libstarpu-dev): StarPU baselines "
             "skipped");
#endif

  row_t rows[4] = {
      {.name = "graph chain 10000 host ops (per node)", .part = "chain-host",
       .chain = true, .kind = OP_HOST},
      {.name = "graph wide 10000 host ops (per node)", .part = "wide-host",
       .chain = false, .kind = OP_HOST},
      {.name = "graph chain 10000 empty kernels (per node)",
       .part = "chain-kernel", .chain = true, .kind = OP_KERNEL},
      {.name = "graph wide 10000 empty kernels (per node)",
       .part = "wide-kernel", .chain = false, .kind = OP_KERNEL},
  };
  bench_note(name, "per node = a sample's time / 10000; dc first run: "
             "dc_graph_create + 10000 dc_graph_host or dc_graph_dispatch "
             "(chain: each with `after` = the previous op) + "
             "dc_graph_instantiate + dc_graph_exec_run (freeing untimed); dc "
             "replay: dc_graph_exec_run of an instance made before timing; "
             "StarPU: starpu_task_init of 10000 preallocated tasks (chain: "
             "starpu_task_declare_deps_array on the previous task), "
             "starpu_task_submit each, starpu_task_wait_for_all "
             "(starpu_task_clean untimed); host ops and StarPU tasks "
             "increment one atomic counter (checked to be 10000 after every "
             "sample); kernel rows: StarPU runs the same CPU codelet (no "
             "OpenCL C); goals: first run <= StarPU, replay <= StarPU / 4");
  for (int i = 0; i < 4; ++i) {
    rows[i].dc = &d;
    if (bench_want_part("BENCH_GRAPH", rows[i].part)) {
      bench_row(&rows[i], have_starpu);
    }
  }

#ifdef DC_BENCH_STARPU
  if (have_starpu) {
    starpu_resume();
    starpu_shutdown();
  }
  bench_remove_tree(starpu_home);
#endif
  free(d.names);
  dc_stream_group_release(d.group);
  dc_program_release(d.program);
  dc_context_release(d.ctx);
  return 0;
}

// check_graph.c: execution graphs: dependencies (explicit and from buffer
// access), validation, runs on stream groups, replay, nested graphs,
// subflows, indirect dispatch, failure, cancellation and reports.
//
// Device-generic: every kernel, buffer and stream group is on the device
// under test (check_util.h).
// SPDX-License-Identifier: MIT
#include <time.h>

#include "kernel_fixture.h"

//===-- Helpers ---------------------------------------------------------===//

static const char kKernels[] =
    "__kernel void add(__global const int* a, __global int* b, int k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = b[i] * 3 + a[i] + k;\n"
    "}\n"
    "__kernel void set(__global int* b, int v) {\n"
    "  b[get_global_id(0)] = v;\n"
    "}\n"
    "__kernel void size(__global uint* grid, uint n) {\n"
    "  grid[0] = n;\n"
    "}\n"
    "__kernel void count(__global int* hits) {\n"
    "  atomic_inc(&hits[0]);\n"
    "}\n";

static dc_program_t* program;

static dc_kernel_t* k(const char* name) { return kernel_of(program, name); }

static dc_graph_t* new_graph(const char* name, dc_error_mode_t mode) {
  dc_graph_params_t p = {.name = name, .error_mode = mode};
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(ctx, &p, &g));
  return g;
}

static dc_stream_group_t* new_group(size_t count) {
  dc_stream_group_params_t p = {.count = count, .label = "g"};
  dc_stream_group_t* grp = NULL;
  DC_CK_OK(dc_stream_group_create(dut, &p, &grp));
  return grp;
}

static dc_buffer_t* ints(size_t n, const char* label) {
  return dc_test_buffer_new(dut, DC_DTYPE_I32, n, label);
}

static char dot[65536];

static const char* dot_of(dc_graph_t* g) {
  size_t len = 0;
  DC_CK_OK(dc_graph_to_dot(g, dot, sizeof(dot), &len));
  ck_assert_uint_lt(len, sizeof(dot));
  return dot;
}

// Asserts the DOT has an edge from op |from| to op |to| (indices in the
// order added) labelled |kind|.
static void expect_edge(const char* text, int from, int to,
                        const char* kind) {
  char edge[64];
  snprintf(edge, sizeof(edge), "op%d -> op%d [label=\"%s\"]", from, to, kind);
  DC_CK_STR_HAS(text, edge);
}

static void expect_no_edge(const char* text, int from, int to) {
  char edge[64];
  snprintf(edge, sizeof(edge), "op%d -> op%d ", from, to);
  ck_assert_msg(strstr(text, edge) == NULL, "unexpected edge %s in\n%s",
                edge, text);
}

// Host ops that log their number in run order.
typedef struct order_log_t {
  pthread_mutex_t lock;
  int entries[256];
  int count;
} order_log_t;

typedef struct logged_t {
  order_log_t* log;
  int value;
} logged_t;

static dc_status_t log_value(void* arg) {
  logged_t* l = arg;
  pthread_mutex_lock(&l->log->lock);
  if (l->log->count < 256) l->log->entries[l->log->count++] = l->value;
  pthread_mutex_unlock(&l->log->lock);
  return DC_OK;
}

static int position(const order_log_t* log, int value) {
  for (int i = 0; i < log->count; ++i) {
    if (log->entries[i] == value) return i;
  }
  return -1;
}

static dc_status_t fail_op(void* arg) {
  return dc_set_error(DC_ERR_DATA_LOSS, "%s broke", (const char*)arg);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static dc_status_t sleep_50ms(void* arg) {
  (void)arg;
  sleep_ms(50);
  return DC_OK;
}

static void setup(void) {
  dc_test_kernel_setup();
  program = build_on(dut, "graph.cl", kKernels, NULL);
}

static void teardown(void) {
  dc_program_release(program);
  program = NULL;
  dc_test_kernel_teardown();
}

//===-- Dependencies ----------------------------------------------------===//

START_TEST(test_graph_derives_hazards_from_access) {
  dc_graph_t* g = new_graph("hazards", 0);
  dc_buffer_t* a = ints(64, "a");
  dc_buffer_t* b = ints(64, "b");
  int zero = 0;
  dc_dispatch_t grid = {.dims = 1, .global = {64}};
  dc_arg_t add_args[3] = {dc_arg_buffer(a), dc_arg_buffer(b), dc_arg_i32(1)};
  DC_CK_OK(dc_graph_fill(g, "init_a", a, 0, 64, &zero, NULL));       // 0
  DC_CK_OK(dc_graph_fill(g, "init_b", b, 0, 64, &zero, NULL));       // 1
  DC_CK_OK(dc_graph_dispatch(g, "add", k("add"), &grid, add_args, 3,
                             NULL));                                 // 2
  DC_CK_OK(dc_graph_fill(g, "reset_a", a, 0, 64, &zero, NULL));      // 3
  DC_CK_OK(dc_graph_copy(g, "copy_b", a, 0, b, 0, 64, NULL));        // 4
  // A view of the second half of b: independent of a write to the first.
  dc_buffer_t* low = NULL;
  dc_buffer_t* high = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 32, &low));
  DC_CK_OK(dc_buffer_create_view(b, 32, 32, &high));
  DC_CK_OK(dc_graph_fill(g, "low", low, 0, 32, &zero, NULL));        // 5
  DC_CK_OK(dc_graph_fill(g, "high", high, 0, 32, &zero, NULL));      // 6
  const char* text = dot_of(g);
  expect_edge(text, 0, 2, "RAW");  // add reads a after init_a writes it
  expect_edge(text, 1, 2, "RAW");  // add reads-writes b after init_b
  expect_edge(text, 2, 3, "WAR");  // reset_a writes a after add reads it
  expect_edge(text, 2, 4, "RAW");  // copy reads b after add writes it
  expect_edge(text, 3, 4, "WAW");  // copy writes a after reset_a
  expect_edge(text, 4, 5, "WAR");  // low writes b after copy reads it
  expect_edge(text, 4, 6, "WAR");
  expect_edge(text, 0, 3, "WAW");  // reset_a writes a after init_a
  expect_no_edge(text, 5, 6);      // disjoint views
  expect_no_edge(text, 0, 4);      // implied through reset_a
  dc_buffer_release(low);
  dc_buffer_release(high);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_graph_release(g);
}
END_TEST

START_TEST(test_graph_explicit_order_and_names) {
  dc_graph_t* g = new_graph("names", 0);
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  log.count = 0;
  logged_t one = {&log, 1}, two = {&log, 2}, three = {&log, 3};
  const char* after_later[] = {"later"};
  dc_op_options_t waits_for_later = {.after = after_later, .after_count = 1};
  DC_CK_OK(dc_graph_host(g, "first", log_value, &one, &waits_for_later));
  DC_CK_OK(dc_graph_host(g, "later", log_value, &two, NULL));
  DC_CK_OK(dc_graph_host(g, "last", log_value, &three, NULL));
  DC_CK_OK(dc_graph_after(g, "later", "last"));
  DC_CK_FAIL(dc_graph_host(g, "last", log_value, &three, NULL),
             DC_ERR_ALREADY_EXISTS,
             "dc_graph_host: graph 'names' already has an op named 'last'");
  DC_CK_FAIL(dc_graph_after(g, "nobody", "last"), DC_ERR_NOT_FOUND,
             "graph 'names' has no op 'nobody'");
  ck_assert_uint_eq(dc_graph_op_count(g), 3);
  dc_stream_group_t* grp = new_group(3);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  ck_assert_int_eq(log.count, 3);
  ck_assert_int_lt(position(&log, 3), position(&log, 2));
  ck_assert_int_lt(position(&log, 2), position(&log, 1));
  // Unknown names are found when validating.
  DC_CK_OK(dc_graph_after(g, "first", "ghost"));
  DC_CK_FAIL(dc_graph_validate(g, NULL, 0), DC_ERR_NOT_FOUND,
             "op 'first' runs after 'ghost', which is not in graph 'names'");
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
}
END_TEST

START_TEST(test_graph_reports_cycles_by_name) {
  dc_graph_t* g = new_graph("loop", 0);
  logged_t none = {NULL, 0};
  DC_CK_OK(dc_graph_host(g, "a", log_value, &none, NULL));
  DC_CK_OK(dc_graph_host(g, "b", log_value, &none, NULL));
  DC_CK_OK(dc_graph_host(g, "c", log_value, &none, NULL));
  DC_CK_OK(dc_graph_host(g, "outside", log_value, &none, NULL));
  DC_CK_OK(dc_graph_after(g, "b", "a"));
  DC_CK_OK(dc_graph_after(g, "c", "b"));
  DC_CK_OK(dc_graph_after(g, "a", "c"));
  DC_CK_OK(dc_graph_after(g, "outside", "a"));
  DC_CK_FAIL(dc_graph_validate(g, NULL, 0), DC_ERR_FAILED_PRECONDITION,
             "graph 'loop' has a cycle: ");
  // The cycle is named in edge order, starting anywhere on it.
  const char* msg = dc_last_error();
  ck_assert_msg(strstr(msg, "a -> b -> c -> a") ||
                    strstr(msg, "b -> c -> a -> b") ||
                    strstr(msg, "c -> a -> b -> c"),
                "no cycle in '%s'", msg);
  ck_assert_ptr_null(strstr(msg, "outside"));
  dc_stream_group_t* grp = new_group(2);
  dc_graph_exec_t* e = SENTINEL;
  DC_CK_FAIL(dc_graph_instantiate(g, grp, &e), DC_ERR_FAILED_PRECONDITION,
             "cycle");
  ck_assert_ptr_null(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
}
END_TEST

START_TEST(test_graph_warns_about_uninitialised_reads) {
  dc_graph_t* g = new_graph("warn", 0);
  dc_buffer_t* never = ints(16, "never");
  dc_buffer_t* out = ints(16, "out");
  dc_dispatch_t grid = {.dims = 1, .global = {16}};
  dc_arg_t args[3] = {dc_arg_buffer(never), dc_arg_buffer(out),
                      dc_arg_i32(0)};
  int zero = 0;
  DC_CK_OK(dc_graph_fill(g, "zero_out", out, 0, 16, &zero, NULL));
  DC_CK_OK(dc_graph_dispatch(g, "reads_never", k("add"), &grid, args, 3,
                             NULL));
  char warnings[512];
  DC_CK_OK(dc_graph_validate(g, warnings, sizeof(warnings)));
  DC_CK_STR_HAS(warnings, "graph 'warn': op 'reads_never' reads buffer "
                          "'never', which nothing writes and was never "
                          "initialised");
  ck_assert_ptr_null(strstr(warnings, "zero_out"));
  // Once written by the host, it is no longer suspicious.
  DC_CK_OK(dc_buffer_fill(never, 0, 16, &zero));
  DC_CK_OK(dc_graph_validate(g, warnings, sizeof(warnings)));
  ck_assert_str_eq(warnings, "");
  dc_buffer_release(never);
  dc_buffer_release(out);
  dc_graph_release(g);
}
END_TEST

//===-- Runs and replay -------------------------------------------------===//

// b = 3b + a + k, twice, over a group of streams; then replay with a new
// scalar and a new input buffer.
START_TEST(test_graph_runs_and_replays_with_new_arguments) {
  enum { N = 256 };
  dc_graph_t* g = new_graph("replay", 0);
  dc_buffer_t* a = ints(N, "a");
  dc_buffer_t* a2 = ints(N, "a2");
  dc_buffer_t* b = ints(N, "b");
  int32_t ha[N], ha2[N];
  for (int i = 0; i < N; ++i) {
    ha[i] = i;
    ha2[i] = 2 * i;
  }
  DC_CK_OK(dc_buffer_write(a, 0, ha, N));
  DC_CK_OK(dc_buffer_write(a2, 0, ha2, N));
  int zero = 0;
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(b), dc_arg_i32(1)};
  DC_CK_OK(dc_graph_fill(g, "zero", b, 0, N, &zero, NULL));
  DC_CK_OK(dc_graph_dispatch(g, "step1", k("add"), &grid, args, 3, NULL));
  DC_CK_OK(dc_graph_dispatch(g, "step2", k("add"), &grid, args, 3, NULL));
  dc_stream_group_t* grp = new_group(3);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  const int32_t* hb = contents(b);
  for (int i = 0; i < N; ++i) ck_assert_int_eq(hb[i], 4 * i + 4);
  dc_arg_t k5 = dc_arg_i32(5), in2 = dc_arg_buffer(a2);
  DC_CK_OK(dc_graph_exec_set_arg(e, "step2", 2, &k5));
  DC_CK_OK(dc_graph_exec_set_arg(e, "step1", 0, &in2));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  // step1: 0*3 + 2i + 1; step2: 3(2i + 1) + i + 5.
  hb = contents(b);
  for (int i = 0; i < N; ++i) ck_assert_int_eq(hb[i], 7 * i + 8);
  // Same shapes only.
  dc_buffer_t* short_b = ints(N / 2, "short");
  dc_arg_t bad = dc_arg_buffer(short_b);
  DC_CK_FAIL(dc_graph_exec_set_arg(e, "step1", 0, &bad),
             DC_ERR_INVALID_ARGUMENT,
             "the new buffer has 128 elements, the one it replaces 256");
  dc_arg_t wrong_type = dc_arg_f32(1.0f);
  DC_CK_FAIL(dc_graph_exec_set_arg(e, "step1", 2, &wrong_type),
             DC_ERR_INVALID_ARGUMENT, "got a value of f32");
  DC_CK_FAIL(dc_graph_exec_set_arg(e, "zero", 0, &k5),
             DC_ERR_INVALID_ARGUMENT, "op 'zero' is a fill, not a dispatch");
  DC_CK_FAIL(dc_graph_exec_set_arg(e, "nope", 0, &k5), DC_ERR_NOT_FOUND,
             "has no op 'nope'");
  // Metrics over the two runs.
  dc_op_report_t r;
  ck_assert_uint_eq(dc_graph_exec_op_count(e), 3);
  for (size_t i = 0; i < 3; ++i) {
    DC_CK_OK(dc_graph_exec_op(e, i, &r));
    ck_assert_int_eq(r.state, DC_OP_SUCCEEDED);
    ck_assert_uint_eq(r.runs, 2);
    ck_assert_uint_eq(r.attempts, 1);
    ck_assert(r.mean_ns > 0.0 && r.p95_ns > 0.0);
  }
  DC_CK_FAIL(dc_graph_exec_op(e, 3, &r), DC_ERR_OUT_OF_RANGE, "3 op(s)");
  dc_buffer_release(short_b);
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_buffer_release(a);
  dc_buffer_release(a2);
  dc_buffer_release(b);
  dc_graph_release(g);
}
END_TEST

//===-- Nested graphs, subflows, indirect dispatch ----------------------===//

START_TEST(test_graph_nests_graphs) {
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  log.count = 0;
  logged_t l[5];
  for (int i = 0; i < 5; ++i) l[i] = (logged_t){&log, i};
  dc_graph_t* child = new_graph("child", 0);
  DC_CK_OK(dc_graph_host(child, "x", log_value, &l[1], NULL));
  DC_CK_OK(dc_graph_host(child, "y", log_value, &l[2], NULL));
  DC_CK_OK(dc_graph_after(child, "y", "x"));
  dc_graph_t* g = new_graph("parent", 0);
  const char* after_before[] = {"before"};
  const char* after_inner[] = {"inner"};
  DC_CK_OK(dc_graph_host(g, "before", log_value, &l[0], NULL));
  DC_CK_OK(dc_graph_add_graph(g, "inner", child,
                              &(dc_op_options_t){.after = after_before,
                                                 .after_count = 1,
                                                 .access = NULL,
                                                 .access_count = 0}));
  DC_CK_OK(dc_graph_host(g, "after", log_value, &l[3],
                         &(dc_op_options_t){.after = after_inner,
                                            .after_count = 1,
                                            .access = NULL,
                                            .access_count = 0}));
  DC_CK_FAIL(dc_graph_add_graph(child, "self", g, NULL),
             DC_ERR_INVALID_ARGUMENT, "contains this graph");
  dc_stream_group_t* grp = new_group(2);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  ck_assert_int_eq(log.count, 4);
  for (int i = 0; i < 4; ++i) ck_assert_int_eq(log.entries[i], i);
  log.count = 0;
  // The ops are on the timeline under their own names.
  char trace_path[600];
  snprintf(trace_path, sizeof(trace_path), "%s/graph-trace.json", cache_dir);
  DC_CK_OK(dc_trace_start(ctx, 0));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  dc_trace_stop(ctx);
  DC_CK_OK(dc_trace_write(ctx, trace_path));
  FILE* trace = fopen(trace_path, "r");
  ck_assert_ptr_nonnull(trace);
  static char json[65536];
  size_t got = fread(json, 1, sizeof(json) - 1, trace);
  json[got] = '\0';
  fclose(trace);
  DC_CK_STR_HAS(json, "\"name\":\"inner/x\"");
  DC_CK_STR_HAS(json, "\"name\":\"after\"");
  char text[2048];
  size_t len = 0;
  DC_CK_OK(dc_graph_exec_report(e, text, sizeof(text), &len));
  DC_CK_STR_HAS(text, "inner/x");
  DC_CK_STR_HAS(text, "inner/y");
  DC_CK_OK(dc_graph_exec_to_dot(e, dot, sizeof(dot), &len));
  DC_CK_STR_HAS(dot, "inner/y\\nhost\\nstream ");
  DC_CK_STR_HAS(dot, "fillcolor=palegreen");
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_graph_release(child);
}
END_TEST

typedef struct subflow_t {
  dc_buffer_t* b;
  int parts;
} subflow_t;

// Adds one fill per part, each setting its slice to its index + 1.
static dc_status_t build_parts(dc_graph_t* sub, void* arg) {
  subflow_t* s = arg;
  size_t slice = dc_buffer_length(s->b) / (size_t)s->parts;
  for (int i = 0; i < s->parts; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "part%d", i);
    int value = i + 1;
    dc_status_t st = dc_graph_fill(sub, name, s->b, (size_t)i * slice, slice,
                                   &value, NULL);
    if (st != DC_OK) return st;
  }
  return DC_OK;
}

static dc_status_t check_parts(void* arg) {
  subflow_t* s = arg;
  int32_t values[64];
  dc_status_t st = dc_buffer_read(s->b, 0, values, 64);
  if (st != DC_OK) return st;
  for (int i = 0; i < 64; ++i) {
    if (values[i] != i / 16 + 1) {
      return dc_set_error(DC_ERR_DATA_LOSS, "b[%d] = %d", i, values[i]);
    }
  }
  return DC_OK;
}

START_TEST(test_graph_subflow_adds_work_at_run_time) {
  dc_buffer_t* b = ints(64, "b");
  subflow_t s = {b, 4};
  dc_graph_t* g = new_graph("dynamic", 0);
  dc_buffer_access_t writes_b = {b, DC_ACCESS_WRITE};
  dc_buffer_access_t reads_b = {b, DC_ACCESS_READ};
  DC_CK_OK(dc_graph_subflow(g, "split", build_parts, &s,
                            &(dc_op_options_t){.after = NULL, .after_count = 0,
                                  .access = &writes_b, .access_count = 1}));
  DC_CK_OK(dc_graph_host(g, "check", check_parts, &s,
                         &(dc_op_options_t){.after = NULL, .after_count = 0,
                                  .access = &reads_b, .access_count = 1}));
  dc_stream_group_t* grp = new_group(2);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  DC_CK_OK(dc_graph_exec_run(e, NULL));  // rebuilt on every run
  // A subflow that fails fails its op, and its dependents are cancelled.
  s.parts = 65;  // slices of 0 elements: the subflow's fills are refused
  DC_CK_FAIL(dc_graph_exec_run(e, NULL), DC_ERR_INVALID_ARGUMENT,
             "op 'split' failed");
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 1, &r));
  ck_assert_str_eq(r.name, "check");
  ck_assert_int_eq(r.state, DC_OP_CANCELLED);
  DC_CK_STR_HAS(r.message, "'split', which it depends on, failed");
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_graph_indirect_dispatch_reads_its_grid) {
  dc_graph_t* g = new_graph("indirect", 0);
  dc_buffer_t* grid_buf = dc_test_buffer_new(dut, DC_DTYPE_U32, 4, "grid");
  dc_buffer_t* hits = ints(1, "hits");
  int zero = 0;
  dc_dispatch_t one = {.dims = 1, .global = {1}};
  dc_arg_t size_args[2] = {dc_arg_buffer(grid_buf), dc_arg_u32(37)};
  dc_arg_t hit_arg = dc_arg_buffer(hits);
  DC_CK_OK(dc_graph_fill(g, "zero", hits, 0, 1, &zero, NULL));
  DC_CK_OK(dc_graph_dispatch(g, "size", k("size"), &one, size_args, 2,
                             NULL));
  DC_CK_OK(dc_graph_dispatch_indirect(g, "count", k("count"), 1, grid_buf, 0,
                                      NULL, &hit_arg, 1, NULL));
  const char* text = dot_of(g);
  expect_edge(text, 1, 2, "RAW");  // through the grid buffer
  dc_stream_group_t* grp = new_group(2);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  ck_assert_int_eq(((int32_t*)contents(hits))[0], 37);
  // A zero grid fails the op when it runs.
  dc_arg_t zero_size = dc_arg_u32(0);
  DC_CK_OK(dc_graph_exec_set_arg(e, "size", 1, &zero_size));
  DC_CK_FAIL(dc_graph_exec_run(e, NULL), DC_ERR_INVALID_ARGUMENT,
             "op 'count' failed: indirect dispatch 'count': kernel 'count': "
             "the grid is empty");
  DC_CK_FAIL(dc_graph_dispatch_indirect(g, "bad", k("count"), 1, hits, 0,
                                        NULL, &hit_arg, 1, NULL),
             DC_ERR_INVALID_ARGUMENT, "the grid buffer holds i32");
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_buffer_release(grid_buf);
  dc_buffer_release(hits);
}
END_TEST

//===-- Failure and cancellation ----------------------------------------===//

START_TEST(test_graph_failure_cancels_dependents_only) {
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  log.count = 0;
  logged_t l1 = {&log, 1}, l2 = {&log, 2};
  dc_graph_t* g = new_graph("failing", DC_ERRORS_FINISH_INDEPENDENT);
  const char* after_bad[] = {"bad"};
  const char* after_dep[] = {"dependent"};
  DC_CK_OK(dc_graph_host(g, "bad", fail_op, "bad", NULL));
  DC_CK_OK(dc_graph_host(g, "dependent", log_value, &l1,
                         &(dc_op_options_t){.after = after_bad,
                                            .after_count = 1,
                                            .access = NULL,
                                            .access_count = 0}));
  DC_CK_OK(dc_graph_host(g, "transitive", log_value, &l1,
                         &(dc_op_options_t){.after = after_dep,
                                            .after_count = 1,
                                            .access = NULL,
                                            .access_count = 0}));
  DC_CK_OK(dc_graph_host(g, "independent", log_value, &l2, NULL));
  dc_stream_group_t* grp = new_group(2);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_FAIL(dc_graph_exec_run(e, NULL), DC_ERR_DATA_LOSS,
             "graph 'failing': op 'bad' failed: bad broke");
  ck_assert_int_eq(log.count, 1);
  ck_assert_int_eq(log.entries[0], 2);
  size_t n = dc_graph_exec_op_count(e);
  for (size_t i = 0; i < n; ++i) {
    dc_op_report_t r;
    DC_CK_OK(dc_graph_exec_op(e, i, &r));
    if (strcmp(r.name, "bad") == 0) {
      ck_assert_int_eq(r.state, DC_OP_FAILED);
      ck_assert_int_eq(r.status, DC_ERR_DATA_LOSS);
      ck_assert_str_eq(r.message, "bad broke");
    } else if (strcmp(r.name, "independent") == 0) {
      ck_assert_int_eq(r.state, DC_OP_SUCCEEDED);
    } else {
      ck_assert_int_eq(r.state, DC_OP_CANCELLED);
      ck_assert_int_eq(r.status, DC_ERR_CANCELLED);
    }
  }
  char text[4096];
  size_t len = 0;
  DC_CK_OK(dc_graph_exec_report(e, text, sizeof(text), &len));
  DC_CK_STR_HAS(text, "FAILED");
  DC_CK_STR_HAS(text, "DATA_LOSS: bad broke");
  DC_CK_STR_HAS(text, "'dependent', which it depends on, was cancelled");
  // The group's streams are not failed: the next run works.
  dc_stream_stats_t stats;
  DC_CK_OK(dc_stream_stats(dc_stream_group_stream(grp, 0), &stats));
  ck_assert_int_eq(stats.error, DC_OK);
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
}
END_TEST

START_TEST(test_graph_error_modes) {
  // One stream, so that the order is the plan's: a, b, c.
  dc_stream_group_t* grp = new_group(1);
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  for (int mode = 0; mode < 3; ++mode) {
    log.count = 0;
    logged_t l = {&log, 7};
    dc_graph_t* g = new_graph("modes", (dc_error_mode_t)mode);
    DC_CK_OK(dc_graph_host(g, "a", fail_op, "a", NULL));
    DC_CK_OK(dc_graph_host(g, "b", fail_op, "b", NULL));
    DC_CK_OK(dc_graph_host(g, "c", log_value, &l, NULL));
    dc_graph_exec_t* e = NULL;
    DC_CK_OK(dc_graph_instantiate(g, grp, &e));
    dc_status_t st = dc_graph_exec_run(e, NULL);
    ck_assert_int_eq(st, DC_ERR_DATA_LOSS);
    if (mode == DC_ERRORS_STOP_AT_FIRST) {
      DC_CK_ERROR_HAS("op 'a' failed: a broke");
      ck_assert_int_eq(log.count, 0);  // b and c were cancelled
      dc_op_report_t r;
      DC_CK_OK(dc_graph_exec_op(e, 2, &r));
      ck_assert_int_eq(r.state, DC_OP_CANCELLED);
      DC_CK_STR_HAS(r.message, "stops at the first failure");
    } else if (mode == DC_ERRORS_COLLECT_ALL) {
      DC_CK_ERROR_HAS("graph 'modes': 2 ops failed: 'a' (DATA_LOSS: a "
                      "broke); 'b' (DATA_LOSS: b broke);");
      ck_assert_int_eq(log.count, 1);
    } else {
      DC_CK_ERROR_HAS("op 'a' failed: a broke");
      ck_assert_int_eq(log.count, 1);
    }
    dc_graph_exec_release(e);
    dc_graph_release(g);
  }
  dc_stream_group_release(grp);
}
END_TEST

static dc_status_t cancel_token(void* arg) {
  dc_cancel_token_cancel(arg);
  return DC_OK;
}

START_TEST(test_graph_run_cancellation_and_deadline) {
  dc_stream_group_t* grp = new_group(1);
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  log.count = 0;
  logged_t l = {&log, 1};
  dc_cancel_token_t* token = NULL;
  DC_CK_OK(dc_cancel_token_create(ctx, &token));
  dc_graph_t* g = new_graph("cancel", 0);
  DC_CK_OK(dc_graph_host(g, "stop", cancel_token, token, NULL));
  DC_CK_OK(dc_graph_host(g, "never", log_value, &l, NULL));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  dc_run_params_t params = {.cancel = token};
  DC_CK_FAIL(dc_graph_exec_run(e, &params), DC_ERR_CANCELLED,
             "graph 'cancel': the run was cancelled");
  ck_assert_int_eq(log.count, 0);
  dc_graph_exec_release(e);
  dc_graph_release(g);

  g = new_graph("slow", 0);
  DC_CK_OK(dc_graph_host(g, "sleep", sleep_50ms, NULL, NULL));
  DC_CK_OK(dc_graph_host(g, "late", log_value, &l, NULL));
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  params = (dc_run_params_t){.timeout_ns = 5000000};
  DC_CK_FAIL(dc_graph_exec_run(e, &params), DC_ERR_DEADLINE_EXCEEDED,
             "passed its timeout of 5000000 ns");
  ck_assert_int_eq(log.count, 0);
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  // A running op finishes; whether "sleep" was running when the 5 ms
  // passed depends on how soon a stream thread took it (a loaded machine,
  // a sanitizer): either it ran to the end, or it never started.
  ck_assert_msg(r.state == DC_OP_SUCCEEDED || r.state == DC_OP_CANCELLED,
                "op 'sleep' ended in state %d", (int)r.state);
  DC_CK_OK(dc_graph_exec_op(e, 1, &r));
  ck_assert_int_eq(r.state, DC_OP_CANCELLED);
  DC_CK_STR_HAS(r.message, "the run passed its timeout");
  // Without a deadline the same instance completes.
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  ck_assert_int_eq(log.count, 1);
  dc_graph_exec_release(e);
  dc_graph_release(g);
  dc_cancel_token_release(token);
  dc_stream_group_release(grp);
}
END_TEST

// A host op that notes how many ops of its run had ended when it ran.
typedef struct progress_probe_t {
  dc_graph_exec_t* exec;
  size_t seen;
} progress_probe_t;

static dc_status_t probe_progress(void* arg) {
  progress_probe_t* p = arg;
  p->seen = dc_graph_exec_finished(p->exec);
  return DC_OK;
}

START_TEST(test_graph_exec_finished_counts_ended_ops) {
  dc_stream_group_t* grp = new_group(1);
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  log.count = 0;
  logged_t l = {&log, 1};
  progress_probe_t probe = {0};
  const char* after_first[] = {"first"};
  const char* after_probe[] = {"probe"};
  const char* after_bad[] = {"bad"};
  dc_graph_t* g = new_graph("progress", 0);
  DC_CK_OK(dc_graph_host(g, "first", log_value, &l, NULL));
  DC_CK_OK(dc_graph_host(g, "probe", probe_progress, &probe,
                         &(dc_op_options_t){.after = after_first,
                                            .after_count = 1}));
  DC_CK_OK(dc_graph_host(g, "bad", fail_op, "bad",
                         &(dc_op_options_t){.after = after_probe,
                                            .after_count = 1}));
  DC_CK_OK(dc_graph_host(g, "dep", log_value, &l,
                         &(dc_op_options_t){.after = after_bad,
                                            .after_count = 1}));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  probe.exec = e;
  ck_assert_uint_eq(dc_graph_exec_finished(e), 0);
  ck_assert_uint_eq(dc_graph_exec_finished(NULL), 0);
  ck_assert_int_eq(dc_graph_exec_run(e, NULL), DC_ERR_DATA_LOSS);
  ck_assert_uint_eq(probe.seen, 1);  // "first" had ended
  // Succeeded, failed and cancelled ops all count.
  ck_assert_uint_eq(dc_graph_exec_finished(e), 4);
  ck_assert_int_eq(dc_graph_exec_run(e, NULL), DC_ERR_DATA_LOSS);
  ck_assert_uint_eq(probe.seen, 1);  // counted again from 0
  ck_assert_uint_eq(dc_graph_exec_finished(e), 4);
  dc_graph_exec_release(e);
  dc_graph_release(g);
  dc_stream_group_release(grp);
}
END_TEST

// An instance keeps running the ops it was made from while the graph
// grows past its array's capacity (the ops must not move), and the new
// ops stay out of it.
START_TEST(test_graph_instance_survives_graph_growth) {
  dc_stream_group_t* grp = new_group(1);
  static order_log_t log = {.lock = PTHREAD_MUTEX_INITIALIZER};
  log.count = 0;
  logged_t l = {&log, 7};
  dc_graph_t* g = new_graph("growing", 0);
  DC_CK_OK(dc_graph_host(g, "first", log_value, &l, NULL));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  for (int i = 0; i < 100; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "later%d", i);
    DC_CK_OK(dc_graph_host(g, name, log_value, &l, NULL));
  }
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  ck_assert_int_eq(log.count, 1);
  ck_assert_uint_eq(dc_graph_exec_op_count(e), 1);
  dc_graph_exec_release(e);
  dc_graph_release(g);
  dc_stream_group_release(grp);
}
END_TEST

//===-- Random graphs against sequential execution ----------------------===//

enum { RANDOM_BUFFERS = 5, RANDOM_LEN = 32 };

// Builds |ops| random ops over |buffers| into |g| (when not NULL) and
// applies each one at once on |ref| buffers (when not NULL): running the
// reference in insertion order is a valid order for every dependency.
static void random_ops(uint64_t seed, int ops, bool dispatches_only,
                       dc_graph_t* g, dc_buffer_t** bufs, dc_buffer_t** ref) {
  dc_dispatch_t grid = {.dims = 1, .global = {RANDOM_LEN}};
  for (int i = 0; i < ops; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "op%d", i);
    int kind = (int)(dc_test_rand(&seed) % 4);
    if (dispatches_only && (kind == 1 || kind == 2)) kind = 0;
    int x = (int)(dc_test_rand(&seed) % RANDOM_BUFFERS);
    int y = (int)(dc_test_rand(&seed) % RANDOM_BUFFERS);
    if (y == x) y = (x + 1) % RANDOM_BUFFERS;
    int v = (int)(dc_test_rand(&seed) % 7);
    size_t off = dc_test_rand(&seed) % (RANDOM_LEN / 2);
    for (int side = 0; side < 2; ++side) {
      dc_buffer_t** b = side == 0 ? bufs : ref;
      if (b == NULL || (side == 0 && g == NULL)) continue;
      if (kind == 0) {
        dc_arg_t args[3] = {dc_arg_buffer(b[x]), dc_arg_buffer(b[y]),
                            dc_arg_i32(v)};
        if (side == 0) {
          DC_CK_OK(dc_graph_dispatch(g, name, k("add"), &grid, args, 3,
                                     NULL));
        } else {
          DC_CK_OK(dc_kernel_dispatch(k("add"), &grid, args, 3));
        }
      } else if (kind == 1) {
        if (side == 0) {
          DC_CK_OK(dc_graph_fill(g, name, b[x], off, RANDOM_LEN / 2, &v,
                                 NULL));
        } else {
          DC_CK_OK(dc_buffer_fill(b[x], off, RANDOM_LEN / 2, &v));
        }
      } else if (kind == 2) {
        if (side == 0) {
          DC_CK_OK(dc_graph_copy(g, name, b[y], off, b[x], 0, RANDOM_LEN / 2,
                                 NULL));
        } else {
          DC_CK_OK(dc_buffer_copy(b[y], off, b[x], 0, RANDOM_LEN / 2));
        }
      } else {
        dc_arg_t args[2] = {dc_arg_buffer(b[x]), dc_arg_i32(v)};
        if (side == 0) {
          DC_CK_OK(dc_graph_dispatch(g, name, k("set"), &grid, args, 2,
                                     NULL));
        } else {
          DC_CK_OK(dc_kernel_dispatch(k("set"), &grid, args, 2));
        }
      }
    }
  }
}

// Random DAGs over a few buffers, run |runs| times, against the same ops
// run one by one as often. With |dispatches_only| a device that records
// graphs replays them whole (graph_replay.c); otherwise they run op by op.
static void check_random_dags(bool dispatches_only, int runs) {
  for (uint64_t trial = 1; trial <= 12; ++trial) {
    dc_buffer_t* bufs[RANDOM_BUFFERS];
    dc_buffer_t* ref[RANDOM_BUFFERS];
    for (int i = 0; i < RANDOM_BUFFERS; ++i) {
      bufs[i] = ints(RANDOM_LEN, "random");
      ref[i] = ints(RANDOM_LEN, "reference");
      int32_t init[RANDOM_LEN];
      for (int j = 0; j < RANDOM_LEN; ++j) init[j] = i * 100 + j;
      DC_CK_OK(dc_buffer_write(bufs[i], 0, init, RANDOM_LEN));
      DC_CK_OK(dc_buffer_write(ref[i], 0, init, RANDOM_LEN));
    }
    dc_graph_t* g = new_graph("random", 0);
    int ops = 20 + (int)(trial * 7 % 40);
    random_ops(trial * 7919, ops, dispatches_only, g, bufs, NULL);
    dc_stream_group_t* grp = new_group(1 + trial % 4);
    dc_graph_exec_t* e = NULL;
    DC_CK_OK(dc_graph_instantiate(g, grp, &e));
    for (int run = 0; run < runs; ++run) {
      DC_CK_OK(dc_graph_exec_run(e, NULL));
      random_ops(trial * 7919, ops, dispatches_only, NULL, NULL, ref);
    }
    for (int i = 0; i < RANDOM_BUFFERS; ++i) {
      const int32_t* got = contents(bufs[i]);
      const int32_t* want = contents(ref[i]);
      for (int j = 0; j < RANDOM_LEN; ++j) {
        ck_assert_msg(got[j] == want[j],
                      "trial %llu (%d ops): buffer %d [%d] = %d, sequential "
                      "gives %d", (unsigned long long)trial, ops, i, j,
                      got[j], want[j]);
      }
    }
    dc_graph_exec_release(e);
    dc_stream_group_release(grp);
    dc_graph_release(g);
    for (int i = 0; i < RANDOM_BUFFERS; ++i) {
      dc_buffer_release(bufs[i]);
      dc_buffer_release(ref[i]);
    }
  }
}

START_TEST(test_graph_random_dags_match_sequential_runs) {
  check_random_dags(false, 1);
}
END_TEST

START_TEST(test_graph_dispatch_dags_replay_like_sequential_runs) {
  check_random_dags(true, 3);
}
END_TEST

//===-- Out of memory ---------------------------------------------------===//

// Builds, instantiates and runs a small graph with every allocation on the
// way failing in turn: each call fails cleanly with OUT_OF_MEMORY or
// succeeds, and in the end every block is back. A replay allocates
// nothing.
static dc_status_t build_and_run(dc_device_t* d, dc_kernel_t* add,
                                 dc_buffer_t* a, dc_buffer_t* b,
                                 size_t* replay_allocations,
                                 dc_test_allocator_t* counter) {
  dc_context_t* c = dc_device_context(d);
  dc_graph_t* g = NULL;
  dc_graph_t* child = NULL;
  dc_stream_group_t* grp = NULL;
  dc_graph_exec_t* e = NULL;
  int zero = 0;
  dc_dispatch_t grid = {.dims = 1, .global = {16}};
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(b), dc_arg_i32(2)};
  const char* after_fill[] = {"fill"};
  dc_status_t st = dc_graph_create(c, &(dc_graph_params_t){.name = "oom"}, &g);
  if (st == DC_OK) st = dc_graph_create(c, NULL, &child);
  if (st == DC_OK) st = dc_graph_fill(child, "fill", b, 0, 16, &zero, NULL);
  if (st == DC_OK) {
    st = dc_graph_dispatch(child, "add", add, &grid, args, 3,
                           &(dc_op_options_t){.after = after_fill,
                                              .after_count = 1,
                                              .access = NULL,
                                              .access_count = 0});
  }
  if (st == DC_OK) st = dc_graph_add_graph(g, "inner", child, NULL);
  if (st == DC_OK) st = dc_graph_copy(g, "copy", a, 0, b, 0, 16, NULL);
  if (st == DC_OK) {
    st = dc_stream_group_create(d, &(dc_stream_group_params_t){.count = 2},
                                &grp);
  }
  if (st == DC_OK) st = dc_graph_instantiate(g, grp, &e);
  if (st == DC_OK) st = dc_graph_exec_run(e, NULL);
  if (st == DC_OK) {
    size_t before = atomic_load(&counter->attempts);
    st = dc_graph_exec_run(e, NULL);
    *replay_allocations = atomic_load(&counter->attempts) - before;
  }
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(child);
  dc_graph_release(g);
  return st;
}

START_TEST(test_graph_survives_every_allocation_failing) {
  dc_test_allocator_t counter = {0};
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  params.allocator = dc_test_allocator(&counter);
  dc_context_t* c = dc_test_context_new(&params);
  dc_device_t* d = dc_test_device(c);
  dc_program_t* p = build_on(d, "graph.cl", kKernels, NULL);
  dc_kernel_t* add = kernel_of(p, "add");
  dc_buffer_t* a = dc_test_buffer_new(d, DC_DTYPE_I32, 16, "a");
  dc_buffer_t* b = dc_test_buffer_new(d, DC_DTYPE_I32, 16, "b");
  int one = 1;
  DC_CK_OK(dc_buffer_fill(a, 0, 16, &one));
  // One pass without failures, to warm the caches (stream threads,
  // commands, events) that later passes reuse.
  size_t replay = 1;
  DC_CK_OK(build_and_run(d, add, a, b, &replay, &counter));
  ck_assert_uint_eq(replay, 0);
  int failed = 0;
  for (size_t n = 1;; ++n) {
    counter.fail_at = atomic_load(&counter.attempts) + n;
    counter.fail_once = true;
    dc_status_t st = build_and_run(d, add, a, b, &replay, &counter);
    bool hit = atomic_load(&counter.attempts) >= counter.fail_at;
    counter.fail_at = 0;
    if (!hit) {  // every allocation has failed once: done
      DC_CK_OK(st);
      break;
    }
    ck_assert_msg(st == DC_OK || st == DC_ERR_OUT_OF_MEMORY,
                  "allocation %zu failing gave %s: %s", n,
                  dc_status_name(st), dc_last_error());
    failed += st != DC_OK;
    // Only the program and the two buffers stay.
    ck_assert_msg(dc_context_report_leaks(c) == 3,
                  "allocation %zu failing (%s: %s) left objects behind", n,
                  dc_status_name(st), dc_last_error());
  }
  ck_assert_int_gt(failed, 10);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_program_release(p);
  dc_context_release(c);
  DC_CK_ALLOCATOR_BALANCED(&counter);
}
END_TEST

//===-- Invalid input ---------------------------------------------------===//

// Released graphs and instances stay recognisable (object_cache.h): a
// stale handle is refused, and checking it reads no freed memory (which
// AddressSanitizer would report).
START_TEST(test_graph_stale_handles_are_refused) {
  dc_graph_t* g = new_graph(NULL, 0);
  dc_graph_t* stale = g;
  dc_stream_group_t* grp = NULL;
  DC_CK_OK(dc_stream_group_create(dut, NULL, &grp));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  dc_graph_exec_release(e);
  dc_graph_exec_release(e);  // stale: a no-op
  ck_assert_uint_eq(dc_graph_exec_op_count(e), 0);
  dc_graph_release(g);
  ck_assert_uint_eq(dc_graph_op_count(stale), 0);
  dc_graph_retain(stale);   // no-ops
  dc_graph_release(stale);
  DC_CK_FAIL(dc_graph_host(stale, "h", fail_op, NULL, NULL),
             DC_ERR_INVALID_ARGUMENT, "'graph' is NULL or a released graph");
  dc_graph_exec_t* again = SENTINEL;
  DC_CK_FAIL(dc_graph_instantiate(stale, grp, &again),
             DC_ERR_INVALID_ARGUMENT, "graph");
  dc_stream_group_release(grp);
}
END_TEST

START_TEST(test_graph_rejects_bad_input) {
  dc_graph_t* g = SENTINEL;
  DC_CK_FAIL(dc_graph_create(NULL, NULL, &g), DC_ERR_INVALID_ARGUMENT,
             "'ctx' must not be NULL");
  ck_assert_ptr_null(g);
  DC_CK_FAIL(dc_graph_create(ctx, &(dc_graph_params_t){.error_mode = 9}, &g),
             DC_ERR_INVALID_ARGUMENT, "unknown error mode 9");
  g = new_graph(NULL, 0);
  dc_buffer_t* b = ints(8, "b");
  dc_buffer_t* f = dc_test_buffer_new(dut, DC_DTYPE_F32, 8, "f");
  int zero = 0;
  DC_CK_FAIL(dc_graph_host(g, "", fail_op, NULL, NULL),
             DC_ERR_INVALID_ARGUMENT, "the op needs a name");
  DC_CK_FAIL(dc_graph_host(g, "h", NULL, NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "op 'h': 'fn' must not be NULL");
  DC_CK_FAIL(dc_graph_host(NULL, "h", fail_op, NULL, NULL),
             DC_ERR_INVALID_ARGUMENT, "'graph' is NULL or a released graph");
  DC_CK_FAIL(dc_graph_copy(g, "c", b, 0, f, 0, 8, NULL),
             DC_ERR_INVALID_ARGUMENT, "op 'c': dtypes differ");
  DC_CK_FAIL(dc_graph_fill(g, "f", b, 4, 8, &zero, NULL), DC_ERR_OUT_OF_RANGE,
             "elements [4, 4 + 8)");
  dc_dispatch_t grid = {.dims = 1, .global = {8}};
  dc_arg_t wrong = dc_arg_buffer(f);
  DC_CK_FAIL(dc_graph_dispatch(g, "d", k("set"), &grid, &wrong, 1, NULL),
             DC_ERR_INVALID_ARGUMENT,
             "dc_graph_dispatch: kernel 'set' expects 2 argument(s)");
  const char* empty_after[] = {""};
  DC_CK_FAIL(dc_graph_host(g, "h", fail_op, NULL,
                           &(dc_op_options_t){.after = empty_after,
                                              .after_count = 1,
                                              .access = NULL,
                                              .access_count = 0}),
             DC_ERR_INVALID_ARGUMENT, "op 'h': after[0] is empty");
  dc_buffer_access_t bad_access = {b, (dc_access_t)0};
  DC_CK_FAIL(dc_graph_host(g, "h", fail_op, NULL,
                           &(dc_op_options_t){.after = NULL, .after_count = 0,
                                  .access = &bad_access, .access_count = 1}),
             DC_ERR_INVALID_ARGUMENT, "access[0] has unknown mode 0");
  ck_assert_uint_eq(dc_graph_op_count(g), 0);  // nothing was added
  DC_CK_FAIL(dc_graph_validate(NULL, NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_graph_validate");
  size_t len;
  DC_CK_FAIL(dc_graph_to_dot(g, NULL, 0, NULL), DC_ERR_INVALID_ARGUMENT,
             "out_length");
  DC_CK_OK(dc_graph_to_dot(g, NULL, 0, &len));  // just the length
  ck_assert_uint_gt(len, 0);
  dc_graph_exec_t* e = SENTINEL;
  DC_CK_FAIL(dc_graph_instantiate(g, NULL, &e), DC_ERR_INVALID_ARGUMENT,
             "'group' is NULL");
  ck_assert_ptr_null(e);
  DC_CK_FAIL(dc_graph_exec_run(NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "'exec' is NULL");
  ck_assert_uint_eq(dc_graph_exec_op_count(NULL), 0);
  dc_graph_exec_release(NULL);
  dc_graph_exec_cancel(NULL);
  dc_graph_release(NULL);
  // An empty graph runs.
  dc_stream_group_t* grp = new_group(2);
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_buffer_release(b);
  dc_buffer_release(f);
  dc_graph_release(g);
}
END_TEST

static Suite* graph_suite(void) {
  Suite* s = dc_test_kernel_suite("graph", "dc-check-graph");
  TCase* deps = tcase_create("dependencies");
  tcase_add_unchecked_fixture(deps, dc_test_kernel_make_root,
                              dc_test_kernel_remove_root);
  tcase_add_checked_fixture(deps, setup, teardown);
  tcase_set_timeout(deps, 120);
  suite_add_tcase(s, deps);
  tcase_add_test(deps, test_graph_derives_hazards_from_access);
  tcase_add_test(deps, test_graph_explicit_order_and_names);
  tcase_add_test(deps, test_graph_reports_cycles_by_name);
  tcase_add_test(deps, test_graph_warns_about_uninitialised_reads);
  tcase_add_test(deps, test_graph_runs_and_replays_with_new_arguments);
  tcase_add_test(deps, test_graph_nests_graphs);
  tcase_add_test(deps, test_graph_subflow_adds_work_at_run_time);
  tcase_add_test(deps, test_graph_indirect_dispatch_reads_its_grid);
  tcase_add_test(deps, test_graph_failure_cancels_dependents_only);
  tcase_add_test(deps, test_graph_error_modes);
  tcase_add_test(deps, test_graph_run_cancellation_and_deadline);
  tcase_add_test(deps, test_graph_exec_finished_counts_ended_ops);
  tcase_add_test(deps, test_graph_instance_survives_graph_growth);
  tcase_add_test(deps, test_graph_random_dags_match_sequential_runs);
  tcase_add_test(deps, test_graph_dispatch_dags_replay_like_sequential_runs);
  tcase_add_test(deps, test_graph_rejects_bad_input);
  tcase_add_test(deps, test_graph_stale_handles_are_refused);
  tcase_add_test(deps, test_graph_survives_every_allocation_failing);
  return s;
}

DC_CHECK_DEVICE_MAIN(graph_suite)

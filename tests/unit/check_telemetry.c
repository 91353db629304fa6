// check_telemetry.c: counters, kernel histograms, the profiling helper,
// the timeline (parsed back as JSON) and the health report, on
// synchronous work and on streams, and all of it under concurrency.
//
// Device-generic: compiled kernels, buffers and streams are on the device
// under test (check_util.h). The "cpu" test case times and fails native
// kernels (host functions that spin or refuse on demand), which only the
// CPU runs; the tests that touch no device run in every configuration.
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <time.h>

#include "json_check.h"
#include "kernel_fixture.h"

//===-- Kernels ---------------------------------------------------------===//

static const char kSource[] =
    "__kernel void add_one(__global float* x) {\n"
    "  x[get_global_id(0)] += 1.0f;\n"
    "}\n"
    "__kernel void twice(__global float* x) {\n"
    "  x[get_global_id(0)] *= 2.0f;\n"
    "}\n";

static dc_dispatch_t grid1(size_t global) {
  dc_dispatch_t g = {.dims = 1, .global = {global}};
  return g;
}

static void run(dc_kernel_t* k, dc_buffer_t* x) {
  dc_dispatch_t g = grid1(dc_buffer_length(x));
  dc_arg_t a = dc_arg_buffer(x);
  DC_CK_OK(dc_kernel_dispatch(k, &g, &a, 1));
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_for(uint64_t ns) {
  uint64_t end = now_ns() + ns;
  while (now_ns() < end) {
  }
}

// A native kernel "spin" that busy-waits its argument's nanoseconds, and
// fails with DC_ERR_ABORTED when the argument is 0.
static dc_status_t spin_group(void* user_data, const dc_native_group_t* g,
                              void* const* args) {
  (void)user_data;
  (void)g;
  uint64_t ns = *(const uint64_t*)args[0];
  if (ns == 0) return dc_set_error(DC_ERR_ABORTED, "spin: refused to spin");
  spin_for(ns);
  return DC_OK;
}

static const dc_kernel_arg_info_t kSpinArgs[] = {
    {.name = "ns", .kind = DC_ARG_SCALAR, .dtype = DC_DTYPE_U64,
     .vector_width = 1},
};

static dc_kernel_t* new_spin(const char* name) {
  dc_native_kernel_params_t np = {.name = name, .fn = spin_group,
                                  .args = kSpinArgs, .arg_count = 1};
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_kernel_create_native(cpu, &np, &k));  // native: the CPU
  return k;
}

static dc_status_t spin(dc_kernel_t* k, uint64_t ns) {
  dc_dispatch_t g = {.dims = 1, .global = {1}, .local = {1}};
  dc_arg_t a = dc_arg_u64(ns);
  return dc_kernel_dispatch(k, &g, &a, 1);
}

static dc_counters_t counters(void) {
  dc_counters_t c;
  memset(&c, 0xAB, sizeof(c));  // so a missed field shows
  DC_CK_OK(dc_telemetry_counters(ctx, &c));
  return c;
}

//===-- JSON helpers ----------------------------------------------------===//

static dc_json_t* parse_or_fail(const char* text, size_t length) {
  char why[160];
  dc_json_t* root = dc_json_parse(text, length, why, sizeof(why));
  ck_assert_msg(root != NULL, "invalid JSON (%s):\n%.2000s", why, text);
  return root;
}

static dc_json_t* read_trace(const char* path) {
  size_t length = 0;
  char* text = dc_json_read_file(path, &length);
  ck_assert_msg(text != NULL, "cannot read %s", path);
  dc_json_t* root = parse_or_fail(text, length);
  free(text);
  return root;
}

// The health report, parsed.
static dc_json_t* health(dc_context_t* c) {
  size_t length = 0;
  DC_CK_OK(dc_health_report(c, NULL, 0, &length));
  for (;;) {  // the report may grow between the two calls
    char* text = malloc(length + 1);
    ck_assert_ptr_nonnull(text);
    size_t needed = 0;
    DC_CK_OK(dc_health_report(c, text, length + 1, &needed));
    if (needed <= length) {
      ck_assert_uint_eq(strlen(text), needed);
      dc_json_t* root = parse_or_fail(text, needed);
      free(text);
      return root;
    }
    free(text);
    length = needed;
  }
}

static const dc_json_t* trace_events(const dc_json_t* root) {
  const dc_json_t* events = dc_json_get(root, "traceEvents");
  ck_assert_ptr_nonnull(events);
  ck_assert_int_eq(events->kind, DC_JSON_ARRAY);
  return events;
}

// The name of track |tid| from its thread_name metadata, or NULL.
static const char* track_name(const dc_json_t* events, double tid) {
  for (size_t i = 0; i < events->count; ++i) {
    const dc_json_t* e = &events->items[i];
    const char* name = dc_json_get_string(e, "name");
    const char* ph = dc_json_get_string(e, "ph");
    if (ph && strcmp(ph, "M") == 0 && name &&
        strcmp(name, "thread_name") == 0 &&
        dc_json_get_number(e, "tid", -1) == tid) {
      return dc_json_get_string(dc_json_get(e, "args"), "name");
    }
  }
  return NULL;
}

// Checks every event's fields and every track's name; returns the number
// of complete events named |name| (any name if NULL).
static size_t check_events(const dc_json_t* events, const char* name) {
  size_t found = 0;
  bool process_named = false;
  for (size_t i = 0; i < events->count; ++i) {
    const dc_json_t* e = &events->items[i];
    ck_assert_int_eq(e->kind, DC_JSON_OBJECT);
    const char* ph = dc_json_get_string(e, "ph");
    const char* ename = dc_json_get_string(e, "name");
    ck_assert_ptr_nonnull(ph);
    ck_assert_ptr_nonnull(ename);
    ck_assert(dc_json_get_number(e, "pid", -1) == 1);
    double tid = dc_json_get_number(e, "tid", -1);
    ck_assert(tid >= 0);
    if (strcmp(ph, "M") == 0) {
      process_named |= strcmp(ename, "process_name") == 0;
      continue;
    }
    ck_assert_msg(strcmp(ph, "X") == 0 || strcmp(ph, "i") == 0,
                  "event %zu has ph '%s'", i, ph);
    ck_assert_ptr_nonnull(dc_json_get_string(e, "cat"));
    ck_assert(dc_json_get_number(e, "ts", -1) >= 0);
    ck_assert_ptr_nonnull(dc_json_get_string(dc_json_get(e, "args"),
                                             "status"));
    ck_assert_msg(track_name(events, tid) != NULL, "track %g has no name",
                  tid);
    if (strcmp(ph, "X") == 0) {
      ck_assert(dc_json_get_number(e, "dur", -1) >= 0);
      if (name == NULL || strcmp(ename, name) == 0) ++found;
    }
  }
  ck_assert(process_named);
  return found;
}

static size_t count_phase(const dc_json_t* events, const char* ph,
                          const char* cat) {
  size_t n = 0;
  for (size_t i = 0; i < events->count; ++i) {
    const dc_json_t* e = &events->items[i];
    const char* p = dc_json_get_string(e, "ph");
    const char* c = dc_json_get_string(e, "cat");
    if (p && strcmp(p, ph) == 0 && (cat == NULL || (c && !strcmp(c, cat)))) {
      ++n;
    }
  }
  return n;
}

static void trace_path(char* path, size_t size, const char* file) {
  snprintf(path, size, "%s/%s", cache_dir, file);
}

//===-- counters and histograms -----------------------------------------===//

// The sum of every device's pool statistics in |c|.
static dc_memory_pool_stats_t all_pools(dc_context_t* c) {
  dc_memory_pool_stats_t sum;
  memset(&sum, 0, sizeof(sum));
  for (size_t i = 0; i < dc_context_device_count(c); ++i) {
    dc_device_t* device = NULL;
    DC_CK_OK(dc_context_device(c, i, &device));
    dc_memory_pool_stats_t one = dc_test_pool_stats(device);
    sum.hits += one.hits;
    sum.misses += one.misses;
  }
  return sum;
}

START_TEST(test_telemetry_counts_synchronous_dispatches) {
  dc_program_t* p = build_on(dut, "telemetry.cl", kSource, NULL);
  dc_kernel_t* add_one = kernel_of(p, "add_one");
  dc_counters_t c = counters();
  ck_assert_uint_eq(c.dispatches, 0);
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 64, "x");
  DC_CK_OK(dc_buffer_fill(x, 0, 64, &(float){0.0f}));
  for (int i = 0; i < 5; ++i) run(add_one, x);
  ck_assert(((float*)contents(x))[63] == 5.0f);

  // A dispatch that fails validation is the caller's error, not a run.
  dc_dispatch_t empty = grid1(0);
  dc_arg_t a = dc_arg_buffer(x);
  DC_CK_FAIL(dc_kernel_dispatch(add_one, &empty, &a, 1),
             DC_ERR_INVALID_ARGUMENT, "grid is empty");
  c = counters();
  ck_assert_uint_eq(c.dispatches, 5);
  ck_assert_uint_eq(c.commands_failed, 0);
  ck_assert_uint_eq(c.copies + c.bytes_copied + c.fills + c.host_callbacks +
                        c.events_recorded + c.event_waits +
                        c.commands_skipped + c.commands_cancelled,
                    0);

  // The pools' counters come from every device's pools.
  dc_buffer_release(x);
  x = dc_test_buffer_new(dut, DC_DTYPE_F32, 64, "again");  // from the cache
  dc_event_t* e = NULL;
  DC_CK_OK(dc_event_create(dut, DC_EVENT_DEFAULT, &e));
  dc_event_release(e);
  // One ready beyond the quarantine of released events.
  DC_CK_OK(dc_event_pool_reserve(dut, DC_EVENT_DEFAULT, 1));
  DC_CK_OK(dc_event_create(dut, DC_EVENT_DEFAULT, &e));  // reused
  dc_event_release(e);
  c = counters();
  dc_memory_pool_stats_t pool = all_pools(ctx);
  ck_assert_uint_eq(c.pool_hits, pool.hits);
  ck_assert_uint_eq(c.pool_misses, pool.misses);
  ck_assert_uint_ge(c.pool_hits, 1);
  ck_assert_uint_ge(c.pool_misses, 1);
  ck_assert_uint_ge(c.event_pool_hits, 1);
  ck_assert_uint_ge(c.event_pool_misses, 1);
  dc_buffer_release(x);
  dc_program_release(p);
}
END_TEST

START_TEST(test_telemetry_kernel_histogram) {
  dc_kernel_t* k = new_spin("spin");
  dc_timing_stats_t s;
  DC_CK_FAIL(dc_telemetry_kernel(ctx, "spin", &s), DC_ERR_NOT_FOUND,
             "no kernel named 'spin' has run");
  ck_assert_uint_eq(dc_telemetry_kernel_count(ctx), 0);
  // 20 runs of 200 us and 2 of 2 ms: the tail shows in p99.
  for (int i = 0; i < 20; ++i) DC_CK_OK(spin(k, 200000));
  for (int i = 0; i < 2; ++i) DC_CK_OK(spin(k, 2000000));
  DC_CK_OK(dc_telemetry_kernel(ctx, "spin", &s));
  ck_assert_uint_eq(s.count, 22);
  ck_assert(s.min_ns >= 200000);
  ck_assert(s.max_ns >= 2000000);
  ck_assert(s.min_ns <= s.p50_ns);
  ck_assert(s.p50_ns <= s.p95_ns);
  ck_assert(s.p95_ns <= s.p99_ns);
  ck_assert(s.p99_ns <= s.max_ns);
  // (No bound on the median: on a loaded machine a 200 us run may be
  // preempted for longer than the long ones take.)
  ck_assert(s.p99_ns >= 2000000 * 0.96);  // within a bucket of the tail
  ck_assert(s.mean_ns >= s.min_ns && s.mean_ns <= s.max_ns);
  ck_assert(fabs(s.total_ns - s.mean_ns * 22) < 1.0);

  // A failed run counts as a dispatch and a failure, not as a time.
  DC_CK_FAIL(spin(k, 0), DC_ERR_ABORTED, "refused to spin");
  DC_CK_OK(dc_telemetry_kernel(ctx, "spin", &s));
  ck_assert_uint_eq(s.count, 22);
  dc_counters_t c = counters();
  ck_assert_uint_eq(c.dispatches, 23);
  ck_assert_uint_eq(c.commands_failed, 1);

  DC_CK_FAIL(dc_telemetry_kernel(ctx, "no_such_kernel", &s),
             DC_ERR_NOT_FOUND, "'no_such_kernel'");
  ck_assert_uint_eq(s.count, 0);
  dc_kernel_release(k);
}
END_TEST

START_TEST(test_telemetry_kernels_share_a_histogram_by_name) {
  // Two kernels of one name (in two programs) add to one histogram.
  dc_kernel_t* a = new_spin("same");
  dc_kernel_t* b = new_spin("same");
  DC_CK_OK(spin(a, 1000));
  DC_CK_OK(spin(b, 1000));
  DC_CK_OK(spin(a, 1000));
  dc_timing_stats_t s;
  DC_CK_OK(dc_telemetry_kernel(ctx, "same", &s));
  ck_assert_uint_eq(s.count, 3);
  ck_assert_uint_eq(dc_telemetry_kernel_count(ctx), 1);
  dc_kernel_release(a);
  dc_kernel_release(b);
}
END_TEST

START_TEST(test_telemetry_kernel_at_lists_in_first_run_order) {
  dc_program_t* p = build_on(dut, "telemetry.cl", kSource, NULL);
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 16, "x");
  run(kernel_of(p, "twice"), x);
  run(kernel_of(p, "add_one"), x);
  run(kernel_of(p, "twice"), x);
  ck_assert_uint_eq(dc_telemetry_kernel_count(ctx), 2);
  char name[32];
  dc_timing_stats_t s;
  DC_CK_OK(dc_telemetry_kernel_at(ctx, 0, name, sizeof(name), &s));
  ck_assert_str_eq(name, "twice");
  ck_assert_uint_eq(s.count, 2);
  DC_CK_OK(dc_telemetry_kernel_at(ctx, 1, name, sizeof(name), &s));
  ck_assert_str_eq(name, "add_one");
  ck_assert_uint_eq(s.count, 1);
  DC_CK_FAIL(dc_telemetry_kernel_at(ctx, 2, name, sizeof(name), &s),
             DC_ERR_OUT_OF_RANGE, "index 2 is past the 2 kernel(s)");
  ck_assert_str_eq(name, "");
  ck_assert_uint_eq(s.count, 0);
  // A short buffer gets a truncated name; no buffer, just the timing.
  DC_CK_OK(dc_telemetry_kernel_at(ctx, 1, name, 4, &s));
  ck_assert_str_eq(name, "add");
  DC_CK_OK(dc_telemetry_kernel_at(ctx, 1, NULL, 0, &s));
  ck_assert_uint_eq(s.count, 1);
  dc_buffer_release(x);
  dc_program_release(p);
}
END_TEST

START_TEST(test_telemetry_reset) {
  dc_kernel_t* k = new_spin("spin");
  DC_CK_OK(spin(k, 1000));
  DC_CK_FAIL(spin(k, 0), DC_ERR_ABORTED, "");
  dc_buffer_t* x = dc_test_buffer_new(cpu, DC_DTYPE_F32, 16, "x");
  dc_buffer_release(x);
  x = dc_test_buffer_new(cpu, DC_DTYPE_F32, 16, "x");
  ck_assert_uint_ge(counters().pool_hits, 1);

  dc_telemetry_reset(ctx);
  dc_counters_t c = counters();
  dc_counters_t zero;
  memset(&zero, 0, sizeof(zero));
  ck_assert_mem_eq(&c, &zero, sizeof(c));
  ck_assert_uint_eq(dc_telemetry_kernel_count(ctx), 0);
  dc_timing_stats_t s;
  DC_CK_FAIL(dc_telemetry_kernel(ctx, "spin", &s), DC_ERR_NOT_FOUND, "spin");
  dc_json_t* report = health(ctx);
  const dc_json_t* errors = dc_json_get(report, "errors");
  ck_assert(dc_json_get_number(errors, "total", -1) == 0);
  ck_assert_uint_eq(dc_json_get(errors, "recent")->count, 0);
  dc_json_free(report);

  // The kernel's cached histogram keeps working after a reset.
  DC_CK_OK(spin(k, 1000));
  DC_CK_OK(dc_telemetry_kernel(ctx, "spin", &s));
  ck_assert_uint_eq(s.count, 1);
  ck_assert_uint_eq(counters().dispatches, 1);
  dc_telemetry_reset(NULL);  // harmless
  dc_buffer_release(x);
  dc_kernel_release(k);
}
END_TEST

//===-- profiling -------------------------------------------------------===//

typedef struct work_t {
  int calls;
  int fail_at;  // the call (from 1) that fails; 0: none
  uint64_t spin_ns;
} work_t;

static dc_status_t do_work(void* user_data) {
  work_t* w = user_data;
  if (++w->calls == w->fail_at) {
    return dc_set_error(DC_ERR_DATA_LOSS, "do_work: call %d lost its data",
                        w->calls);
  }
  spin_for(w->spin_ns);
  return DC_OK;
}

START_TEST(test_telemetry_profile_times_each_call) {
  work_t w = {.spin_ns = 300000};
  dc_profile_params_t pp = {.iterations = 9, .warmup = 2,
                            .work_per_call = 1e6};
  dc_profile_result_t r;
  DC_CK_OK(dc_profile(do_work, &w, &pp, &r));
  ck_assert_int_eq(w.calls, 11);
  ck_assert_uint_eq(r.iterations, 9);
  ck_assert(r.min_ns >= 300000);
  ck_assert(r.min_ns <= r.p50_ns && r.p50_ns <= r.p95_ns);
  ck_assert(r.p95_ns <= r.p99_ns && r.p99_ns <= r.max_ns);
  ck_assert(r.mean_ns >= r.min_ns && r.mean_ns <= r.max_ns);
  ck_assert(r.stddev_ns >= 0);
  ck_assert(fabs(r.calls_per_second - 1e9 / r.mean_ns) < 1e-6);
  ck_assert(fabs(r.work_per_second - 1e6 * r.calls_per_second) < 1e-3);
  ck_assert(r.calls_per_second < 1e9 / 300000 + 1);

  // One call: every statistic is that call, and no spread.
  w = (work_t){.spin_ns = 1000};
  pp = (dc_profile_params_t){.iterations = 1};
  DC_CK_OK(dc_profile(do_work, &w, &pp, &r));
  ck_assert(r.min_ns == r.max_ns && r.p50_ns == r.min_ns);
  ck_assert(r.p99_ns == r.min_ns && r.mean_ns == r.min_ns);
  ck_assert(r.stddev_ns == 0 && r.work_per_second == 0);
}
END_TEST

START_TEST(test_telemetry_profile_stops_at_the_first_error) {
  work_t w = {.fail_at = 4};
  dc_profile_params_t pp = {.iterations = 10, .warmup = 1};
  dc_profile_result_t r;
  DC_CK_FAIL(dc_profile(do_work, &w, &pp, &r), DC_ERR_DATA_LOSS,
             "do_work: call 4 lost its data");
  ck_assert_int_eq(w.calls, 4);
  ck_assert_uint_eq(r.iterations, 0);
  w = (work_t){.fail_at = 1};  // during the warm-up
  pp.warmup = 3;
  DC_CK_FAIL(dc_profile(do_work, &w, &pp, &r), DC_ERR_DATA_LOSS, "call 1");
  ck_assert_int_eq(w.calls, 1);
}
END_TEST

//===-- argument checks -------------------------------------------------===//

START_TEST(test_telemetry_rejects_invalid_arguments) {
  dc_counters_t c;
  dc_timing_stats_t s;
  DC_CK_FAIL(dc_telemetry_counters(NULL, &c), DC_ERR_INVALID_ARGUMENT,
             "dc_telemetry_counters: 'ctx' must not be NULL");
  DC_CK_FAIL(dc_telemetry_counters(ctx, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_telemetry_counters: 'out_counters'");
  DC_CK_FAIL(dc_telemetry_kernel(NULL, "k", &s), DC_ERR_INVALID_ARGUMENT,
             "dc_telemetry_kernel: 'ctx'");
  DC_CK_FAIL(dc_telemetry_kernel(ctx, NULL, &s), DC_ERR_INVALID_ARGUMENT,
             "dc_telemetry_kernel: 'kernel_name'");
  DC_CK_FAIL(dc_telemetry_kernel(ctx, "k", NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_telemetry_kernel: 'out_stats'");
  ck_assert_uint_eq(dc_telemetry_kernel_count(NULL), 0);
  char name[8];
  DC_CK_FAIL(dc_telemetry_kernel_at(NULL, 0, name, sizeof(name), &s),
             DC_ERR_INVALID_ARGUMENT, "dc_telemetry_kernel_at: 'ctx'");
  DC_CK_FAIL(dc_telemetry_kernel_at(ctx, 0, name, sizeof(name), NULL),
             DC_ERR_INVALID_ARGUMENT, "dc_telemetry_kernel_at: 'out_stats'");
  DC_CK_FAIL(dc_telemetry_kernel_at(ctx, 0, NULL, 8, &s),
             DC_ERR_INVALID_ARGUMENT, "'name' is NULL but name_size is 8");

  work_t w = {0};
  dc_profile_params_t pp = {.iterations = 1};
  dc_profile_result_t r;
  DC_CK_FAIL(dc_profile(NULL, &w, &pp, &r), DC_ERR_INVALID_ARGUMENT,
             "dc_profile: 'fn'");
  DC_CK_FAIL(dc_profile(do_work, &w, NULL, &r), DC_ERR_INVALID_ARGUMENT,
             "dc_profile: 'params'");
  DC_CK_FAIL(dc_profile(do_work, &w, &pp, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_profile: 'out_result'");
  pp.iterations = 0;
  DC_CK_FAIL(dc_profile(do_work, &w, &pp, &r), DC_ERR_INVALID_ARGUMENT,
             "iterations is 0");
  pp = (dc_profile_params_t){.iterations = 1, .work_per_call = -1};
  DC_CK_FAIL(dc_profile(do_work, &w, &pp, &r), DC_ERR_INVALID_ARGUMENT,
             "work_per_call is -1");
  ck_assert_int_eq(w.calls, 0);

  DC_CK_FAIL(dc_trace_start(NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_trace_start: 'ctx'");
  DC_CK_FAIL(dc_trace_write(NULL, "x.json"), DC_ERR_INVALID_ARGUMENT,
             "dc_trace_write: 'ctx'");
  DC_CK_FAIL(dc_trace_write(ctx, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_trace_write: 'path'");
  dc_trace_stop(NULL);
  ck_assert(!dc_trace_active(NULL));

  size_t length = 1;
  char text[8] = "junk";
  DC_CK_FAIL(dc_health_report(NULL, text, sizeof(text), &length),
             DC_ERR_INVALID_ARGUMENT, "dc_health_report: 'ctx'");
  ck_assert_uint_eq(length, 0);
  ck_assert_str_eq(text, "");
  DC_CK_FAIL(dc_health_report(ctx, text, sizeof(text), NULL),
             DC_ERR_INVALID_ARGUMENT, "dc_health_report: 'out_length'");
  DC_CK_FAIL(dc_health_report(ctx, NULL, 8, &length), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL but size is 8");
}
END_TEST

//===-- the trace -------------------------------------------------------===//

typedef struct dispatcher_t {
  dc_kernel_t* kernel;
  dc_buffer_t* buffer;
  int rounds;
  atomic_int failures;
} dispatcher_t;

static void* dispatcher_main(void* arg) {
  dispatcher_t* d = arg;
  dc_dispatch_t g = grid1(dc_buffer_length(d->buffer));
  dc_arg_t a = dc_arg_buffer(d->buffer);
  for (int i = 0; i < d->rounds; ++i) {
    if (dc_kernel_dispatch(d->kernel, &g, &a, 1) != DC_OK) {
      atomic_fetch_add(&d->failures, 1);
    }
  }
  return NULL;
}

// Counts the distinct tids of the X events named |name|.
static size_t distinct_tids(const dc_json_t* events, const char* name) {
  double seen[16];
  size_t n = 0;
  for (size_t i = 0; i < events->count; ++i) {
    const dc_json_t* e = &events->items[i];
    const char* ph = dc_json_get_string(e, "ph");
    const char* ename = dc_json_get_string(e, "name");
    if (!ph || strcmp(ph, "X") != 0 || !ename || strcmp(ename, name) != 0) {
      continue;
    }
    double tid = dc_json_get_number(e, "tid", -1);
    size_t j = 0;
    while (j < n && seen[j] != tid) ++j;
    if (j == n && n < 16) seen[n++] = tid;
  }
  return n;
}

START_TEST(test_telemetry_trace_of_two_host_threads) {
  dc_program_t* p = build_on(dut, "telemetry.cl", kSource, NULL);
  ck_assert(!dc_trace_active(ctx));
  DC_CK_OK(dc_trace_start(ctx, 0));
  ck_assert(dc_trace_active(ctx));
  dispatcher_t ds[2];
  memset(ds, 0, sizeof(ds));
  for (int t = 0; t < 2; ++t) {
    ds[t].kernel = kernel_of(p, "add_one");
    ds[t].buffer = dc_test_buffer_new(dut, DC_DTYPE_F32, 256, "x");
    ds[t].rounds = 10;
  }
  dc_test_run_threads(2, dispatcher_main, ds, sizeof(ds[0]));
  run(kernel_of(p, "twice"), ds[0].buffer);  // and one from this thread
  dc_trace_stop(ctx);
  ck_assert(!dc_trace_active(ctx));
  run(kernel_of(p, "twice"), ds[0].buffer);  // not recorded

  char path[600];
  trace_path(path, sizeof(path), "trace.json");
  DC_CK_OK(dc_trace_write(ctx, path));
  dc_json_t* root = read_trace(path);
  const dc_json_t* events = trace_events(root);
  ck_assert_uint_eq(check_events(events, "add_one"), 20);
  ck_assert_uint_eq(check_events(events, "twice"), 1);
  ck_assert_uint_eq(count_phase(events, "X", "kernel"), 21);
  ck_assert_uint_eq(distinct_tids(events, "add_one"), 2);
  const dc_json_t* twice = NULL;
  for (size_t i = 0; i < events->count; ++i) {
    const char* n = dc_json_get_string(&events->items[i], "name");
    if (n && strcmp(n, "twice") == 0) twice = &events->items[i];
  }
  const char* track = track_name(events, dc_json_get_number(twice, "tid", 0));
  ck_assert_msg(strncmp(track, "host thread ", 12) == 0, "track '%s'", track);
  ck_assert(dc_json_get_number(twice, "tid", 0) > 100000);
  ck_assert_str_eq(dc_json_get_string(root, "displayTimeUnit"), "ns");
  const dc_json_t* other = dc_json_get(root, "otherData");
  ck_assert(dc_json_get_number(other, "dropped_spans", -1) == 0);
  ck_assert(dc_json_get_number(other, "spans", -1) == 21);
  dc_json_free(root);

  // No temporary file stays behind.
  DIR* dir = opendir(cache_dir);
  ck_assert_ptr_nonnull(dir);
  for (struct dirent* d = readdir(dir); d != NULL; d = readdir(dir)) {
    ck_assert_msg(strstr(d->d_name, ".tmp-") == NULL, "left %s", d->d_name);
  }
  closedir(dir);

  // A new start discards the old spans.
  DC_CK_OK(dc_trace_start(ctx, 0));
  dc_trace_stop(ctx);
  DC_CK_OK(dc_trace_write(ctx, path));
  root = read_trace(path);
  ck_assert_uint_eq(count_phase(trace_events(root), "X", NULL), 0);
  dc_json_free(root);
  for (int t = 0; t < 2; ++t) {
    ck_assert_int_eq(atomic_load(&ds[t].failures), 0);
    dc_buffer_release(ds[t].buffer);
  }
  dc_program_release(p);
}
END_TEST

START_TEST(test_telemetry_trace_counts_dropped_spans) {
  dc_kernel_t* k = new_spin("spin");
  DC_CK_OK(dc_trace_start(ctx, 5));
  for (int i = 0; i < 12; ++i) DC_CK_OK(spin(k, 100));
  char path[600];
  trace_path(path, sizeof(path), "dropped.json");
  DC_CK_OK(dc_trace_write(ctx, path));  // while recording
  dc_json_t* root = read_trace(path);
  ck_assert_uint_eq(check_events(trace_events(root), "spin"), 5);
  const dc_json_t* other = dc_json_get(root, "otherData");
  ck_assert(dc_json_get_number(other, "dropped_spans", -1) == 7);
  ck_assert(dc_json_get_number(other, "max_spans", -1) == 5);
  ck_assert(dc_json_get(other, "recording")->boolean);
  dc_json_free(root);
  dc_trace_stop(ctx);
  dc_kernel_release(k);
}
END_TEST

START_TEST(test_telemetry_trace_write_failures) {
  char path[600];
  trace_path(path, sizeof(path), "no-such-dir/trace.json");
  DC_CK_FAIL(dc_trace_write(ctx, path), DC_ERR_NOT_FOUND, path);
  DC_CK_ERROR_HAS("dc_trace_write: cannot write");

  if (geteuid() != 0) {  // root writes anywhere
    char locked[600];
    trace_path(locked, sizeof(locked), "locked");
    ck_assert_int_eq(mkdir(locked, 0500), 0);
    trace_path(path, sizeof(path), "locked/trace.json");
    DC_CK_FAIL(dc_trace_write(ctx, path), DC_ERR_PERMISSION_DENIED, path);
  }

  // Writing a trace that never started gives an empty, valid one.
  trace_path(path, sizeof(path), "empty.json");
  DC_CK_OK(dc_trace_write(ctx, path));
  dc_json_t* root = read_trace(path);
  ck_assert_uint_eq(check_events(trace_events(root), NULL), 0);
  dc_json_free(root);
}
END_TEST

//===-- the health report -----------------------------------------------===//

START_TEST(test_telemetry_health_report) {
  dc_kernel_t* k = new_spin("spin");
  DC_CK_OK(spin(k, 100));
  DC_CK_FAIL(spin(k, 0), DC_ERR_ABORTED, "refused");  // a run-time failure
  dc_dispatch_t empty = grid1(0);  // a caller's error: not counted
  dc_arg_t a = dc_arg_u64(1);
  DC_CK_FAIL(dc_kernel_dispatch(k, &empty, &a, 1), DC_ERR_INVALID_ARGUMENT,
             "");

  dc_json_t* root = health(ctx);
  ck_assert_str_eq(dc_json_get_string(root, "engine"), dc_version_string());
  const dc_json_t* devices = dc_json_get(root, "devices");
  ck_assert_int_eq(devices->kind, DC_JSON_ARRAY);
  ck_assert_uint_ge(devices->count, 1);
  const dc_json_t* d = &devices->items[0];
  ck_assert_str_eq(dc_json_get_string(d, "name"), "cpu");
  ck_assert_str_eq(dc_json_get_string(d, "kind"), "cpu");
  ck_assert(dc_json_get_number(d, "compute_units", 0) >= 1);
  ck_assert_ptr_nonnull(dc_json_get(dc_json_get(d, "memory_pool"), "hits"));
  const dc_json_t* pools = dc_json_get(d, "event_pools");
  ck_assert_ptr_nonnull(dc_json_get(dc_json_get(pools, "sync"), "reused"));
  ck_assert_ptr_nonnull(dc_json_get(dc_json_get(pools, "timing"), "created"));
  ck_assert_int_eq(dc_json_get(root, "streams")->kind, DC_JSON_ARRAY);
  const dc_json_t* c = dc_json_get(root, "counters");
  ck_assert(dc_json_get_number(c, "dispatches", -1) == 2);
  ck_assert(dc_json_get_number(c, "commands_failed", -1) == 1);
  const dc_json_t* errors = dc_json_get(root, "errors");
  ck_assert(dc_json_get_number(errors, "total", -1) == 1);
  ck_assert(dc_json_get_number(dc_json_get(errors, "by_status"), "ABORTED",
                               -1) == 1);
  const dc_json_t* recent = dc_json_get(errors, "recent");
  ck_assert_uint_eq(recent->count, 1);
  ck_assert_str_eq(dc_json_get_string(&recent->items[0], "status"),
                   "ABORTED");
  DC_CK_STR_HAS(dc_json_get_string(&recent->items[0], "message"),
                "spin: refused to spin");
  ck_assert(dc_json_get_number(&recent->items[0], "age_ms", -1) >= 0);
  dc_json_free(root);

  // Only the last eight messages are kept, newest first.
  for (int i = 0; i < 10; ++i) DC_CK_FAIL(spin(k, 0), DC_ERR_ABORTED, "");
  root = health(ctx);
  errors = dc_json_get(root, "errors");
  ck_assert(dc_json_get_number(errors, "total", -1) == 11);
  ck_assert_uint_eq(dc_json_get(errors, "recent")->count, 8);
  dc_json_free(root);
  dc_kernel_release(k);
}
END_TEST

START_TEST(test_telemetry_health_report_truncates_like_snprintf) {
  size_t full = 0;
  DC_CK_OK(dc_health_report(ctx, NULL, 0, &full));
  ck_assert_uint_gt(full, 100);
  char* whole = malloc(full + 1);
  size_t length = 0;
  DC_CK_OK(dc_health_report(ctx, whole, full + 1, &length));
  ck_assert_uint_eq(length, full);
  ck_assert_uint_eq(strlen(whole), full);
  char small[16];
  memset(small, 'x', sizeof(small));
  DC_CK_OK(dc_health_report(ctx, small, sizeof(small), &length));
  ck_assert_uint_eq(length, full);
  ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
  ck_assert(strncmp(small, whole, sizeof(small) - 1) == 0);
  char one = 'x';
  DC_CK_OK(dc_health_report(ctx, &one, 1, &length));
  ck_assert_int_eq(one, '\0');
  ck_assert_uint_eq(length, full);
  free(whole);
}
END_TEST

// Every device of the context is in the report, in order, with what it
// is and its pools; the device under test's pool counts its reuse.
START_TEST(test_telemetry_health_report_lists_every_device) {
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 64, "x");
  dc_buffer_release(x);
  x = dc_test_buffer_new(dut, DC_DTYPE_F32, 64, "again");  // from the cache
  dc_json_t* root = health(ctx);
  const dc_json_t* devices = dc_json_get(root, "devices");
  ck_assert_int_eq(devices->kind, DC_JSON_ARRAY);
  ck_assert_uint_eq(devices->count, dc_context_device_count(ctx));
  bool found = false;
  for (size_t i = 0; i < devices->count; ++i) {
    dc_device_t* device = NULL;
    DC_CK_OK(dc_context_device(ctx, i, &device));
    const dc_device_info_t* info = dc_device_info(device);
    const dc_json_t* d = &devices->items[i];
    ck_assert_str_eq(dc_json_get_string(d, "name"), info->name);
    ck_assert_str_eq(dc_json_get_string(d, "backend"), info->backend);
    ck_assert_str_eq(dc_json_get_string(d, "kind"),
                     info->kind == DC_DEVICE_KIND_CPU ? "cpu" : "gpu");
    ck_assert(dc_json_get_number(d, "compute_units", 0) ==
              info->compute_units);
    const dc_json_t* pool = dc_json_get(d, "memory_pool");
    ck_assert_ptr_nonnull(dc_json_get(pool, "hits"));
    const dc_json_t* pools = dc_json_get(d, "event_pools");
    ck_assert_ptr_nonnull(dc_json_get(dc_json_get(pools, "sync"), "reused"));
    if (device == dut) {
      found = true;
      ck_assert(dc_json_get_number(pool, "hits", 0) >= 1);
      ck_assert(dc_json_get_number(pool, "bytes_in_use", 0) >= 256);
    }
  }
  ck_assert(found);
  dc_json_free(root);
  dc_buffer_release(x);
}
END_TEST

//===-- streams ---------------------------------------------------------===//

static dc_stream_t* new_stream(const char* label) {
  dc_stream_params_t sp = {.label = label};
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(dut, &sp, &s));
  return s;
}

static dc_status_t host_ok(void* user_data) {
  atomic_fetch_add((atomic_int*)user_data, 1);
  return DC_OK;
}

static dc_status_t host_fails(void* user_data) {
  (void)user_data;
  return dc_set_error(DC_ERR_DATA_LOSS, "checksum mismatch in block 3");
}

START_TEST(test_telemetry_stream_spans_and_counters) {
  dc_program_t* p = build_on(dut, "telemetry.cl", kSource, NULL);
  dc_stream_t* s = new_stream("uploads");
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 256, "x");
  dc_buffer_t* y = dc_test_buffer_new(dut, DC_DTYPE_F32, 256, "y");
  float in[256], out[256];
  for (int i = 0; i < 256; ++i) in[i] = (float)i;
  atomic_int calls = 0;
  DC_CK_OK(dc_trace_start(ctx, 0));
  DC_CK_OK(dc_stream_write(s, x, 0, in, 256));
  DC_CK_OK(dc_stream_copy(s, y, 0, x, 0, 256));
  DC_CK_OK(dc_stream_fill(s, x, 0, 256, &(float){1.0f}));
  dc_arg_t a = dc_arg_buffer(y);
  dc_dispatch_t g = grid1(256);
  DC_CK_OK(dc_stream_dispatch(s, kernel_of(p, "add_one"), &g, &a, 1));
  DC_CK_OK(dc_stream_read(s, y, 0, out, 256));
  DC_CK_OK(dc_stream_host(s, host_ok, &calls));
  dc_event_t* e = NULL;
  DC_CK_OK(dc_event_create(dut, DC_EVENT_DEFAULT, &e));
  DC_CK_OK(dc_stream_record(s, e));
  DC_CK_OK(dc_event_wait(e, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  ck_assert(out[255] == 256.0f);
  dc_trace_stop(ctx);

  dc_counters_t c = counters();
  ck_assert_uint_eq(c.dispatches, 1);
  ck_assert_uint_eq(c.copies, 3);  // write, copy and read
  ck_assert_uint_eq(c.bytes_copied, 3 * 256 * sizeof(float));
  ck_assert_uint_eq(c.fills, 1);
  ck_assert_uint_eq(c.host_callbacks, 1);
  ck_assert_uint_eq(c.events_recorded, 1);
  ck_assert_uint_ge(c.event_waits, 1);  // the host's wait
  ck_assert_uint_eq(c.commands_failed + c.commands_skipped, 0);
  dc_timing_stats_t ts;
  DC_CK_OK(dc_telemetry_kernel(ctx, "add_one", &ts));
  ck_assert_uint_eq(ts.count, 1);

  char path[600];
  trace_path(path, sizeof(path), "stream.json");
  DC_CK_OK(dc_trace_write(ctx, path));
  dc_json_t* root = read_trace(path);
  const dc_json_t* events = trace_events(root);
  ck_assert_uint_eq(check_events(events, "add_one"), 1);
  ck_assert_uint_eq(count_phase(events, "X", "copy"), 3);
  ck_assert_uint_eq(count_phase(events, "X", "fill"), 1);
  ck_assert_uint_eq(count_phase(events, "X", "host"), 1);
  ck_assert_uint_eq(count_phase(events, "X", "record"), 1);
  double id = dc_stream_id(s);
  ck_assert_str_eq(track_name(events, id), "uploads");
  for (size_t i = 0; i < events->count; ++i) {
    const dc_json_t* ev = &events->items[i];
    const char* cat = dc_json_get_string(ev, "cat");
    if (cat == NULL) continue;
    ck_assert(dc_json_get_number(ev, "tid", -1) == id);
    if (strcmp(cat, "copy") == 0) {
      ck_assert(dc_json_get_number(dc_json_get(ev, "args"), "bytes", 0) ==
                256 * sizeof(float));
    }
  }
  dc_json_free(root);

  // The stream is in the health report.
  root = health(ctx);
  const dc_json_t* streams = dc_json_get(root, "streams");
  ck_assert_uint_eq(streams->count, 1);
  const dc_json_t* st = &streams->items[0];
  ck_assert_str_eq(dc_json_get_string(st, "label"), "uploads");
  ck_assert_str_eq(dc_json_get_string(st, "device"), dc_device_name(dut));
  ck_assert_str_eq(dc_json_get_string(st, "priority"), "normal");
  ck_assert(dc_json_get_number(st, "completed", -1) == 7);
  ck_assert_int_eq(dc_json_get(st, "error")->kind, DC_JSON_NULL);
  dc_json_free(root);

  dc_event_release(e);
  dc_buffer_release(x);
  dc_buffer_release(y);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

START_TEST(test_telemetry_stream_failure_skips_the_rest) {
  dc_stream_t* s = new_stream("checker");
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 16, "x");
  atomic_int calls = 0;
  DC_CK_OK(dc_trace_start(ctx, 0));
  DC_CK_OK(dc_stream_host(s, host_fails, NULL));
  DC_CK_OK(dc_stream_fill(s, x, 0, 16, &(float){1.0f}));
  DC_CK_OK(dc_stream_host(s, host_ok, &calls));
  DC_CK_OK(dc_stream_fill(s, x, 0, 16, &(float){2.0f}));
  DC_CK_FAIL(dc_stream_sync(s, DC_TIMEOUT_INFINITE), DC_ERR_DATA_LOSS,
             "checksum mismatch in block 3");
  dc_trace_stop(ctx);
  ck_assert_int_eq(atomic_load(&calls), 0);

  dc_counters_t c = counters();
  ck_assert_uint_eq(c.commands_failed, 1);
  ck_assert_uint_eq(c.commands_skipped, 3);
  ck_assert_uint_eq(c.host_callbacks, 1);  // the failing one ran
  ck_assert_uint_eq(c.fills, 0);

  dc_json_t* root = health(ctx);
  const dc_json_t* st = &dc_json_get(root, "streams")->items[0];
  ck_assert_str_eq(dc_json_get_string(st, "error"), "DATA_LOSS");
  ck_assert(dc_json_get_number(st, "failed", -1) == 1);
  ck_assert(dc_json_get_number(st, "skipped", -1) == 3);
  const dc_json_t* errors = dc_json_get(root, "errors");
  ck_assert(dc_json_get_number(errors, "total", -1) == 1);
  ck_assert(dc_json_get_number(dc_json_get(errors, "by_status"), "DATA_LOSS",
                               -1) == 1);
  DC_CK_STR_HAS(
      dc_json_get_string(&dc_json_get(errors, "recent")->items[0], "message"),
      "checksum mismatch in block 3");
  dc_json_free(root);

  // The skipped commands are instant markers on the stream's track.
  char path[600];
  trace_path(path, sizeof(path), "failed.json");
  DC_CK_OK(dc_trace_write(ctx, path));
  root = read_trace(path);
  const dc_json_t* events = trace_events(root);
  check_events(events, NULL);
  ck_assert_uint_eq(count_phase(events, "X", "host"), 1);
  ck_assert_uint_eq(count_phase(events, "i", NULL), 3);
  for (size_t i = 0; i < events->count; ++i) {
    const dc_json_t* ev = &events->items[i];
    const char* ph = dc_json_get_string(ev, "ph");
    if (strcmp(ph, "i") != 0) continue;
    const dc_json_t* args = dc_json_get(ev, "args");
    ck_assert_str_eq(dc_json_get_string(args, "outcome"), "skipped");
    ck_assert_str_eq(dc_json_get_string(args, "status"), "DATA_LOSS");
  }
  dc_json_free(root);

  DC_CK_FAIL(dc_stream_reset(s), DC_ERR_DATA_LOSS, "");
  dc_buffer_release(x);
  dc_stream_release(s);
}
END_TEST

static dc_status_t host_blocks(void* user_data) {
  atomic_int* gate = user_data;
  atomic_store(gate, 1);  // started
  while (atomic_load(gate) != 2) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  return DC_OK;
}

START_TEST(test_telemetry_stream_cancellation_is_counted) {
  dc_stream_t* s = new_stream("cancelled");
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 16, "x");
  atomic_int gate = 0;
  DC_CK_OK(dc_trace_start(ctx, 0));
  DC_CK_OK(dc_stream_host(s, host_blocks, &gate));
  for (int i = 0; i < 4; ++i) {
    DC_CK_OK(dc_stream_fill(s, x, 0, 16, &(float){1.0f}));
  }
  while (atomic_load(&gate) != 1) {
    struct timespec pause = {0, 100000};
    nanosleep(&pause, NULL);
  }
  ck_assert_uint_eq(dc_stream_cancel(s), 4);
  atomic_store(&gate, 2);
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  dc_trace_stop(ctx);
  dc_counters_t c = counters();
  ck_assert_uint_eq(c.commands_cancelled, 4);
  ck_assert_uint_eq(c.fills, 0);
  ck_assert_uint_eq(c.host_callbacks, 1);
  char path[600];
  trace_path(path, sizeof(path), "cancelled.json");
  DC_CK_OK(dc_trace_write(ctx, path));
  dc_json_t* root = read_trace(path);
  ck_assert_uint_eq(count_phase(trace_events(root), "i", "fill"), 4);
  dc_json_free(root);
  dc_buffer_release(x);
  dc_stream_release(s);
}
END_TEST

START_TEST(test_telemetry_trace_escapes_labels) {
  // Quotes, a backslash, a control character, a byte that is not UTF-8
  // and one that is all come back as valid JSON.
  static const char kLabel[] = "say \"hi\"\\\n\x01 \xff\xc3\xa9!";
  dc_stream_t* s = new_stream(kLabel);
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_F32, 16, "x");
  DC_CK_OK(dc_trace_start(ctx, 0));
  DC_CK_OK(dc_stream_fill(s, x, 0, 16, &(float){1.0f}));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  char path[600];
  trace_path(path, sizeof(path), "escaped.json");
  DC_CK_OK(dc_trace_write(ctx, path));
  dc_json_t* root = read_trace(path);
  const char* name = track_name(trace_events(root), dc_stream_id(s));
  ck_assert_str_eq(name, "say \"hi\"\\\n\x01 \xef\xbf\xbd\xc3\xa9!");
  dc_json_free(root);
  root = health(ctx);
  ck_assert_str_eq(
      dc_json_get_string(&dc_json_get(root, "streams")->items[0], "label"),
      "say \"hi\"\\\n\x01 \xef\xbf\xbd\xc3\xa9!");
  dc_json_free(root);
  dc_buffer_release(x);
  dc_stream_release(s);
}
END_TEST

//===-- concurrency -----------------------------------------------------===//

typedef struct monitor_t {
  atomic_bool* stop;
  int writes;
  atomic_int failures;
  char message[256];
} monitor_t;

static void monitor_fail(monitor_t* m, const char* what) {
  if (atomic_fetch_add(&m->failures, 1) == 0) {
    snprintf(m->message, sizeof(m->message), "%s: %s", what,
             dc_last_error());
  }
}

// Starts, writes and stops the trace and reads everything else, over and
// over, while other threads dispatch.
static void* monitor_main(void* arg) {
  monitor_t* m = arg;
  char path[600];
  trace_path(path, sizeof(path), "live.json");
  char* report = malloc(1 << 16);
  while (!atomic_load(m->stop)) {
    if (dc_trace_start(ctx, 200) != DC_OK) monitor_fail(m, "start");
    dc_counters_t c;
    if (dc_telemetry_counters(ctx, &c) != DC_OK) monitor_fail(m, "counters");
    dc_timing_stats_t s;
    dc_telemetry_kernel(ctx, "spin", &s);  // NOT_FOUND at first
    char name[16];
    for (size_t i = 0; i < dc_telemetry_kernel_count(ctx); ++i) {
      dc_telemetry_kernel_at(ctx, i, name, sizeof(name), &s);
    }
    size_t length;
    if (dc_health_report(ctx, report, 1 << 16, &length) != DC_OK) {
      monitor_fail(m, "health");
    }
    if (dc_trace_write(ctx, path) != DC_OK) monitor_fail(m, "write");
    dc_trace_stop(ctx);
    ++m->writes;
  }
  free(report);
  return NULL;
}

typedef struct worker_t {
  dc_kernel_t* kernel;
  dc_stream_t* stream;  // NULL: dispatch synchronously
  int rounds;
  atomic_int failures;
} worker_t;

static void* worker_main(void* arg) {
  worker_t* w = arg;
  dc_dispatch_t g = {.dims = 1, .global = {1}, .local = {1}};
  dc_arg_t a = dc_arg_u64(1000);
  for (int i = 0; i < w->rounds; ++i) {
    dc_status_t st = w->stream
                         ? dc_stream_dispatch(w->stream, w->kernel, &g, &a, 1)
                         : dc_kernel_dispatch(w->kernel, &g, &a, 1);
    if (st != DC_OK) atomic_fetch_add(&w->failures, 1);
  }
  if (w->stream && dc_stream_sync(w->stream, DC_TIMEOUT_INFINITE) != DC_OK) {
    atomic_fetch_add(&w->failures, 1);
  }
  return NULL;
}

static void* run_workers(void* arg) {
  worker_t* ws = arg;
  dc_test_run_threads(4, worker_main, ws, sizeof(ws[0]));
  return NULL;
}

START_TEST(test_telemetry_concurrent_readers_and_writers) {
  enum { kWorkers = 4, kRounds = 150 };
  dc_kernel_t* k = new_spin("spin");
  dc_stream_t* s = new_stream("busy");
  worker_t ws[kWorkers];
  memset(ws, 0, sizeof(ws));
  for (int i = 0; i < kWorkers; ++i) {
    ws[i].kernel = k;
    ws[i].rounds = kRounds;
    ws[i].stream = i == 0 ? s : NULL;
  }
  atomic_bool stop = false;
  monitor_t m = {.stop = &stop};
  pthread_t monitor, workers;
  ck_assert_int_eq(pthread_create(&monitor, NULL, monitor_main, &m), 0);
  ck_assert_int_eq(pthread_create(&workers, NULL, run_workers, ws), 0);
  pthread_join(workers, NULL);
  atomic_store(&stop, true);
  pthread_join(monitor, NULL);
  ck_assert_msg(atomic_load(&m.failures) == 0, "%s", m.message);
  ck_assert_int_ge(m.writes, 1);
  for (int i = 0; i < kWorkers; ++i) {
    ck_assert_int_eq(atomic_load(&ws[i].failures), 0);
  }
  ck_assert_uint_eq(counters().dispatches, kWorkers * kRounds);
  dc_timing_stats_t st;
  DC_CK_OK(dc_telemetry_kernel(ctx, "spin", &st));
  ck_assert_uint_eq(st.count, kWorkers * kRounds);
  char path[600];
  trace_path(path, sizeof(path), "live.json");
  dc_json_t* root = read_trace(path);  // the last one written is whole
  check_events(trace_events(root), NULL);
  dc_json_free(root);
  dc_stream_release(s);
  dc_kernel_release(k);
}
END_TEST

static Suite* telemetry_suite(void) {
  Suite* s = dc_test_kernel_suite("telemetry", "dc-check-telemetry");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_telemetry_counts_synchronous_dispatches);
  tcase_add_test(core, test_telemetry_kernel_at_lists_in_first_run_order);
  tcase_add_test(core, test_telemetry_profile_times_each_call);
  tcase_add_test(core, test_telemetry_profile_stops_at_the_first_error);
  tcase_add_test(core, test_telemetry_rejects_invalid_arguments);

  TCase* trace = dc_test_kernel_tcase(s, "trace");
  tcase_add_test(trace, test_telemetry_trace_of_two_host_threads);
  tcase_add_test(trace, test_telemetry_trace_write_failures);
  tcase_add_test(trace, test_telemetry_trace_escapes_labels);

  TCase* report = dc_test_kernel_tcase(s, "health");
  tcase_add_test(report, test_telemetry_health_report_lists_every_device);
  tcase_add_test(report, test_telemetry_health_report_truncates_like_snprintf);

  TCase* streams = dc_test_kernel_tcase(s, "streams");
  tcase_add_test(streams, test_telemetry_stream_spans_and_counters);
  tcase_add_test(streams, test_telemetry_stream_failure_skips_the_rest);
  tcase_add_test(streams, test_telemetry_stream_cancellation_is_counted);

  // Native kernels that spin or refuse on demand: the CPU only.
  if (dc_test_device_is_the_cpu()) {
    TCase* cpu_only = dc_test_kernel_tcase(s, "cpu");
    tcase_add_test(cpu_only, test_telemetry_kernel_histogram);
    tcase_add_test(cpu_only,
                   test_telemetry_kernels_share_a_histogram_by_name);
    tcase_add_test(cpu_only, test_telemetry_reset);
    tcase_add_test(cpu_only, test_telemetry_trace_counts_dropped_spans);
    tcase_add_test(cpu_only, test_telemetry_health_report);
    tcase_add_test(cpu_only, test_telemetry_concurrent_readers_and_writers);
  }
  return s;
}

DC_CHECK_DEVICE_MAIN(telemetry_suite)

// check_resilience.c: graphs under faults: retries give results identical
// to a fault-free run, within the policy's bounds; retries start from
// restored inputs; copies cut off halfway are retried whole; permanent
// faults fail fast and cancel dependents;
// breakers open at their threshold; fallback to another device gives
// identical results.
//
// Device-generic: the graphs run on the device under test (check_util.h);
// where a second device is needed, the device under test is the primary
// and a CPU device the fallback.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <time.h>

#include "kernel_fixture.h"

static const char kKernels[] =
    "__kernel void step(__global int* x, int k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = x[i] * 3 + k;\n"
    "}\n"
    "__kernel void set(__global int* x, int v) {\n"
    "  x[get_global_id(0)] = v;\n"
    "}\n";

enum { LEN = 64, CHAINS = 4 };

static dc_program_t* program;

static void setup(void) {
  dc_test_kernel_setup();
  program = build_on(dut, "resilience.cl", kKernels, NULL);
}

static void teardown(void) {
  dc_program_release(program);
  program = NULL;
  dc_test_kernel_teardown();
}

static dc_buffer_t* ints(dc_device_t* d, const char* label) {
  dc_buffer_t* b = dc_test_buffer_new(d, DC_DTYPE_I32, LEN, label);
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(b, 0, LEN, &zero));
  return b;
}

// |ops| in-place steps spread over CHAINS buffers (each op depends on the
// previous op of its chain), on |p|'s kernels.
static dc_graph_t* chains(dc_program_t* p, dc_buffer_t** bufs, int ops,
                          const dc_graph_params_t* params) {
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(dc_device_context(dc_buffer_device(bufs[0])),
                           params, &g));
  dc_kernel_t* step = kernel_of(p, "step");
  dc_dispatch_t grid = {.dims = 1, .global = {LEN}};
  for (int i = 0; i < ops; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "op%d", i);
    dc_arg_t args[2] = {dc_arg_buffer(bufs[i % CHAINS]), dc_arg_i32(i % 7)};
    DC_CK_OK(dc_graph_dispatch(g, name, step, &grid, args, 2, NULL));
  }
  return g;
}

static void read_all(dc_buffer_t** bufs, int32_t* out) {
  for (int c = 0; c < CHAINS; ++c) {
    DC_CK_OK(dc_buffer_read(bufs[c], 0, out + c * LEN, LEN));
  }
}

static dc_stream_group_t* group_on(dc_device_t* d, size_t count) {
  dc_stream_group_t* grp = NULL;
  dc_stream_group_params_t gp = {.count = count};
  DC_CK_OK(dc_stream_group_create(d, &gp, &grp));
  return grp;
}

// Runs |ops| ops once and returns the buffers' contents (caller frees);
// with |rate| > 0, launches fail transiently at that rate.
static int32_t* run_chains(int ops, double rate, uint32_t max_attempts,
                           uint64_t* out_retries) {
  dc_buffer_t* bufs[CHAINS];
  for (int c = 0; c < CHAINS; ++c) bufs[c] = ints(dut, "chain");
  dc_retry_policy_t policy = {.max_attempts = max_attempts,
                              .base_delay_ns = 1000,
                              .max_delay_ns = 20000,
                              .seed = 11};
  // Retries alone: no breakers, and no fallback (which ops on a device
  // other than the CPU would otherwise take to the CPU).
  dc_graph_params_t params = {.name = "chains", .retry = &policy,
                              .no_breakers = true, .no_fallback = true};
  dc_graph_t* g = chains(program, bufs, ops, &params);
  uint32_t rule = 0;
  if (rate > 0.0) {
    dc_fault_rule_t r = {.sites = DC_FAULT_LAUNCH, .rate = rate, .seed = 5,
                         .name = "step"};
    DC_CK_OK(dc_fault_add(ctx, &r, &rule));
  }
  dc_stream_group_t* grp = group_on(dut, 3);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  uint64_t retries = 0;
  for (size_t i = 0; i < dc_graph_exec_op_count(e); ++i) {
    dc_op_report_t r;
    DC_CK_OK(dc_graph_exec_op(e, i, &r));
    ck_assert_int_eq(r.state, DC_OP_SUCCEEDED);
    ck_assert_uint_ge(r.attempts, 1);
    ck_assert_uint_le(r.attempts, max_attempts);  // within the policy
    retries += r.attempts - 1;
  }
  if (rate > 0.0) {
    dc_fault_stats_t stats;
    DC_CK_OK(dc_fault_stats(ctx, rule, &stats));
    ck_assert_uint_eq(stats.injected, retries);  // every fault was retried
    DC_CK_OK(dc_fault_remove(ctx, rule));
  }
  *out_retries = retries;
  int32_t* out = malloc(sizeof(int32_t) * LEN * CHAINS);
  read_all(bufs, out);
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  for (int c = 0; c < CHAINS; ++c) dc_buffer_release(bufs[c]);
  return out;
}

START_TEST(test_transient_faults_give_identical_results) {
  enum { OPS = 1000 };
  uint64_t retries = 0;
  int32_t* clean = run_chains(OPS, 0.0, 1, &retries);
  ck_assert_uint_eq(retries, 0);
  const double rates[] = {0.01, 0.10, 0.50};
  const uint32_t attempts[] = {8, 12, 24};
  for (int k = 0; k < 3; ++k) {
    int32_t* faulty = run_chains(OPS, rates[k], attempts[k], &retries);
    ck_assert_mem_eq(clean, faulty, sizeof(int32_t) * LEN * CHAINS);
    // About rate / (1 - rate) retries per op: loose bounds.
    double per_op = (double)retries / OPS;
    double expected = rates[k] / (1.0 - rates[k]);
    ck_assert_msg(per_op > expected * 0.5 && per_op < expected * 1.5,
                  "rate %.2f: %.3f retries per op, expected about %.3f",
                  rates[k], per_op, expected);
    free(faulty);
  }
  free(clean);
}
END_TEST

// A host op that changes its buffer and then fails transiently once: the
// retry starts from the buffer as it was, so the change lands once. It
// reads and writes the buffer through copies, which every device has.
typedef struct flaky_t {
  dc_buffer_t* buffer;
  atomic_int calls;
} flaky_t;

static dc_status_t add_then_fail_once(void* arg) {
  flaky_t* f = arg;
  int32_t x[LEN];
  dc_status_t st = dc_buffer_read(f->buffer, 0, x, LEN);
  if (st != DC_OK) return st;
  for (int i = 0; i < LEN; ++i) x[i] += 1;
  st = dc_buffer_write(f->buffer, 0, x, LEN);
  if (st != DC_OK) return st;
  if (atomic_fetch_add(&f->calls, 1) == 0) {
    return dc_set_error(DC_ERR_UNAVAILABLE, "flaky: try again");
  }
  return DC_OK;
}

START_TEST(test_retries_start_from_restored_inputs) {
  dc_buffer_t* b = ints(dut, "counted");
  flaky_t f = {b, 0};
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(ctx, NULL, &g));
  dc_buffer_access_t rw = {b, DC_ACCESS_READ_WRITE};
  dc_retry_policy_t policy = {.max_attempts = 3, .base_delay_ns = 1000,
                              .max_delay_ns = 1000};
  DC_CK_OK(dc_graph_host(g, "flaky", add_then_fail_once, &f,
                         &(dc_op_options_t){.access = &rw, .access_count = 1,
                                            .retry = &policy}));
  dc_stream_group_t* grp = group_on(dut, 1);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  ck_assert_int_eq(atomic_load(&f.calls), 2);
  int32_t v[LEN];
  DC_CK_OK(dc_buffer_read(b, 0, v, LEN));
  for (int i = 0; i < LEN; ++i) ck_assert_int_eq(v[i], 1);  // not 2
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  ck_assert_uint_eq(r.attempts, 2);
  // Without the snapshot (no_snapshot), the first attempt's change stays.
  dc_graph_exec_release(e);
  dc_graph_release(g);
  atomic_store(&f.calls, 0);
  DC_CK_OK(dc_graph_create(ctx, NULL, &g));
  DC_CK_OK(dc_graph_host(g, "flaky", add_then_fail_once, &f,
                         &(dc_op_options_t){.access = &rw, .access_count = 1,
                                            .retry = &policy,
                                            .no_snapshot = true}));
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  DC_CK_OK(dc_buffer_read(b, 0, v, LEN));
  ck_assert_int_eq(v[0], 3);  // 1 + twice
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_permanent_faults_fail_fast_and_cancel_dependents) {
  dc_buffer_t* b = ints(dut, "b");
  dc_fault_rule_t rule = {.sites = DC_FAULT_LAUNCH, .permanent = true,
                          .name = "step"};
  DC_CK_OK(dc_fault_add(ctx, &rule, NULL));
  dc_retry_policy_t policy = {.max_attempts = 5, .base_delay_ns = 1000};
  dc_graph_params_t params = {.name = "doomed", .retry = &policy,
                              .no_breakers = true, .no_fallback = true};
  dc_buffer_t* bufs[CHAINS] = {b, b, b, b};
  dc_graph_t* g = chains(program, bufs, 3, &params);
  dc_stream_group_t* grp = group_on(dut, 2);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_FAIL(dc_graph_exec_run(e, NULL), DC_ERR_DEVICE_LOST,
             "op 'op0' failed: injected fault: launch of kernel 'step'");
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  ck_assert_int_eq(r.state, DC_OP_FAILED);
  ck_assert_uint_eq(r.attempts, 1);  // permanent: not retried
  for (size_t i = 1; i < 3; ++i) {
    DC_CK_OK(dc_graph_exec_op(e, i, &r));
    ck_assert_int_eq(r.state, DC_OP_CANCELLED);
  }
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_buffer_release(b);
  dc_fault_clear(ctx);
}
END_TEST

// Copies cut off halfway (a halfway fault rule: the first half moves,
// then the copy fails) are retried and leave whole data behind: host
// memory to the device under test and back, over a length that is no
// multiple of any chunk or page, at element offsets.
START_TEST(test_copies_failing_halfway_are_retried_whole) {
  enum { BIG = (3 << 20) / 4 + 13, AT = 5 };
  int32_t* data = malloc(sizeof(int32_t) * BIG);
  int32_t* out = malloc(sizeof(int32_t) * BIG);
  ck_assert_ptr_nonnull(data);
  ck_assert_ptr_nonnull(out);
  for (int i = 0; i < BIG; ++i) data[i] = i * 7 + 1;
  dc_buffer_t* host = dc_test_buffer_new(cpu, DC_DTYPE_I32, BIG + AT, "src");
  dc_buffer_t* dev = dc_test_buffer_new(dut, DC_DTYPE_I32, BIG + AT, "dst");
  dc_buffer_t* back = dc_test_buffer_new(cpu, DC_DTYPE_I32, BIG, "back");
  DC_CK_OK(dc_buffer_write(host, AT, data, BIG));
  int32_t minus = -1;
  DC_CK_OK(dc_buffer_fill(dev, 0, BIG + AT, &minus));
  DC_CK_OK(dc_buffer_fill(back, 0, BIG, &minus));
  // The first copy into each of dst and back fails halfway.
  uint32_t rules[2];
  const char* names[2] = {"dst", "back"};
  for (int r = 0; r < 2; ++r) {
    dc_fault_rule_t rule = {.sites = DC_FAULT_COPY, .halfway = true,
                            .nth = 1, .name = names[r]};
    DC_CK_OK(dc_fault_add(ctx, &rule, &rules[r]));
  }
  dc_graph_t* g = NULL;
  dc_retry_policy_t policy = {.max_attempts = 3, .base_delay_ns = 1000,
                              .max_delay_ns = 1000};
  dc_graph_params_t params = {.name = "halfway", .retry = &policy,
                              .no_breakers = true, .no_fallback = true};
  DC_CK_OK(dc_graph_create(ctx, &params, &g));
  DC_CK_OK(dc_graph_copy(g, "up", dev, AT, host, AT, BIG, NULL));
  DC_CK_OK(dc_graph_copy(g, "down", back, 0, dev, AT, BIG, NULL));
  DC_CK_OK(dc_graph_after(g, "down", "up"));
  dc_stream_group_t* grp = group_on(dut, 2);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  for (size_t i = 0; i < 2; ++i) {
    dc_op_report_t r;
    DC_CK_OK(dc_graph_exec_op(e, i, &r));
    ck_assert_int_eq(r.state, DC_OP_SUCCEEDED);
    ck_assert_uint_eq(r.attempts, 2);
  }
  for (int r = 0; r < 2; ++r) {
    dc_fault_stats_t stats;
    DC_CK_OK(dc_fault_stats(ctx, rules[r], &stats));
    ck_assert_uint_eq(stats.injected, 1);
  }
  dc_fault_clear(ctx);
  DC_CK_OK(dc_buffer_read(back, 0, out, BIG));
  ck_assert_mem_eq(out, data, sizeof(int32_t) * BIG);
  DC_CK_OK(dc_buffer_read(dev, 0, out, AT));
  for (int i = 0; i < AT; ++i) ck_assert_int_eq(out[i], -1);  // untouched
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_buffer_release(back);
  dc_buffer_release(dev);
  dc_buffer_release(host);
  free(out);
  free(data);
}
END_TEST

// A context with two devices: |primary| is the device under test, and
// |backup| a CPU device to fall back to: the CPU (device 0), or, when that
// is the device under test, a second CPU device, "cpu:1".
static dc_context_t* two_devices(dc_device_t** primary,
                                 dc_device_t** backup) {
  dc_context_params_t p = dc_test_quiet_params();
  p.kernel_cache_dir = cache_dir;
  p.cpu_devices = 2;
  dc_context_t* c = dc_test_context_new(&p);
  *primary = dc_test_device(c);
  dc_device_t* first = dc_test_cpu(c);
  if (*primary != first) {
    *backup = first;
  } else {
    DC_CK_OK(dc_context_find_device(c, "cpu:1", backup));
  }
  return c;
}

// Asserts what the device's breaker shows after |successes| calls
// succeeded on the device (a run of |ops| ops, or one replay of them:
// docs/graphs.md) and |ops| more each asked it once, with |injected| launches
// reaching the device (and failing): the transition came exactly at the
// threshold (the open breaker's message names 3 failures, and it opened
// once), and every outcome was recorded. Returns how many calls it
// admitted whose launch did not happen: the kernel's breaker (asked after
// the device's, also at threshold 3) had opened in between; those are
// recorded as cancelled, an ignored outcome.
static uint64_t expect_opened_at_three(dc_breaker_t* breaker,
                                       uint64_t injected, uint64_t ops,
                                       uint64_t successes) {
  ck_assert_int_eq(dc_breaker_state(breaker), DC_BREAKER_OPEN);
  dc_breaker_stats_t bs;
  DC_CK_OK(dc_breaker_stats(breaker, &bs));
  ck_assert_uint_eq(bs.opens, 1);
  ck_assert_uint_eq(bs.successes, successes);
  ck_assert_uint_eq(bs.failures, injected);  // late ones count in totals
  ck_assert_uint_eq(bs.calls, successes + injected);
  ck_assert_uint_eq(bs.rejections + bs.ignored, ops - injected);
  dc_breaker_permit_t permit = DC_BREAKER_NO_PERMIT;
  DC_CK_FAIL(dc_breaker_acquire(breaker, &permit), DC_ERR_CIRCUIT_OPEN,
             "after 3 failures in");
  return bs.ignored;
}

// The primary device loses every launch; its breaker opens at the third
// failure and the rest fail fast; every op reruns on the backup with
// results identical to a fault-free run. The graph runs on |streams|
// streams. A breaker admits calls concurrently
// and opens exactly when the third failure is recorded
// (docs/resilience.md), so with one stream exactly three launches reach
// the device; with more, the calls already admitted by then (at most one
// per other stream in use) still go ahead.
static void check_breaker_and_fallback(size_t streams) {
  dc_device_t *primary, *backup;
  dc_context_t* c = two_devices(&primary, &backup);
  // Breakers made from now on open at the third failure and stay open.
  dc_breaker_params_t bp = {.failure_threshold = 3, .open_ns = 60000000000};
  DC_CK_OK(dc_breaker_set_defaults(c, &bp));
  dc_program_t* p = build_on(primary, "resilience.cl", kKernels, NULL);
  enum { OPS = 40 };
  int32_t clean[LEN * CHAINS], got[LEN * CHAINS];
  dc_buffer_t* bufs[CHAINS];
  for (int k = 0; k < CHAINS; ++k) bufs[k] = ints(primary, "chain");
  // Reference: no faults.
  dc_graph_t* g = chains(p, bufs, OPS, &(dc_graph_params_t){.name = "ref"});
  dc_stream_group_t* grp = group_on(primary, streams);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  read_all(bufs, clean);
  dc_graph_exec_release(e);
  dc_graph_release(g);
  dc_breaker_t* breaker = NULL;
  DC_CK_OK(dc_breaker_find(c, dc_device_name(primary), &breaker));
  dc_breaker_stats_t before;  // one success an op, or one for a replay
  DC_CK_OK(dc_breaker_stats(breaker, &before));
  ck_assert(before.successes == OPS || before.successes == 1);
  int32_t zero = 0;
  for (int k = 0; k < CHAINS; ++k) DC_CK_OK(dc_buffer_fill(bufs[k], 0, LEN,
                                                          &zero));
  dc_fault_rule_t rule = {.sites = DC_FAULT_LAUNCH,
                          .device = dc_device_name(primary),
                          .status = DC_ERR_UNAVAILABLE};
  uint32_t id = 0;
  DC_CK_OK(dc_fault_add(c, &rule, &id));
  dc_retry_policy_t once = {.max_attempts = 1};
  g = chains(p, bufs, OPS,
             &(dc_graph_params_t){.name = "fallback", .retry = &once,
                                  .fallback = backup});
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  read_all(bufs, got);
  ck_assert_mem_eq(clean, got, sizeof(clean));
  size_t fell_back = 0;
  for (size_t i = 0; i < dc_graph_exec_op_count(e); ++i) {
    dc_op_report_t r;
    DC_CK_OK(dc_graph_exec_op(e, i, &r));
    ck_assert_int_eq(r.state, DC_OP_SUCCEEDED);
    ck_assert(r.fell_back);
    ck_assert_str_eq(r.device, dc_device_name(backup));
    fell_back += r.fell_back;
  }
  ck_assert_uint_eq(fell_back, OPS);
  dc_fault_stats_t fs;
  DC_CK_OK(dc_fault_stats(c, id, &fs));
  uint64_t cancelled =
      expect_opened_at_three(breaker, fs.injected, OPS, before.successes);
  // The calls the device's breaker admitted: the three failures that
  // opened it, and those already admitted by then. An op waits for the
  // previous op of its chain and a stream runs one op at a time, so at
  // most min(streams, CHAINS) are in flight at once.
  size_t used = dc_stream_group_size(grp);
  if (used > CHAINS) used = CHAINS;
  uint64_t admitted = fs.injected + cancelled;
  ck_assert_msg(fs.injected >= 3 && admitted <= 3 + used - 1,
                "%llu launch(es) reached the device and %llu more were "
                "admitted, on %zu stream(s) in use; expected 3 to %zu in all",
                (unsigned long long)fs.injected,
                (unsigned long long)cancelled, used, 3 + used - 1);
  if (used == 1) {  // nothing in flight beside the third failure
    ck_assert_uint_eq(fs.injected, 3);
    ck_assert_uint_eq(cancelled, 0);
  }
  char report[8192];
  size_t len = 0;
  DC_CK_OK(dc_graph_exec_report(e, report, sizeof(report), &len));
  char fell_back_to[64];
  snprintf(fell_back_to, sizeof(fell_back_to), "(fell back to %s)",
           dc_device_name(backup));
  DC_CK_STR_HAS(report, fell_back_to);
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  for (int k = 0; k < CHAINS; ++k) dc_buffer_release(bufs[k]);
  dc_program_release(p);
  dc_context_release(c);
}

START_TEST(test_breaker_opens_and_fallback_gives_identical_results) {
  check_breaker_and_fallback(1);       // deterministic: exactly 3 launches
  check_breaker_and_fallback(CHAINS);  // every chain at once: 3 to 6
}
END_TEST


// Memory pressure: an allocation that does not fit waits for work in
// flight to release memory; one that can never fit fails at once. The
// work in flight is held at a gate, which a thread of the test opens
// |after_ms| later; what the test checks is whether the allocation came
// back before or after the gate opened, never how long it took, so a
// slow machine only makes the test slower.
typedef struct gate_t {
  atomic_bool open;
  int after_ms;
  pthread_t opener;
} gate_t;

static dc_status_t wait_at_gate(void* arg) {
  gate_t* gate = arg;
  struct timespec ts = {0, 1000000L};
  while (!atomic_load(&gate->open)) nanosleep(&ts, NULL);
  return DC_OK;
}

// Opens the gate after about |after_ms| (at once if the test did).
static void* open_later(void* arg) {
  gate_t* gate = arg;
  struct timespec ts = {0, 1000000L};
  for (int ms = 0; ms < gate->after_ms && !atomic_load(&gate->open); ++ms) {
    nanosleep(&ts, NULL);
  }
  atomic_store(&gate->open, true);
  return NULL;
}

static void gate_start(gate_t* gate, int after_ms) {
  atomic_store(&gate->open, false);
  gate->after_ms = after_ms;
  ck_assert_int_eq(pthread_create(&gate->opener, NULL, open_later, gate), 0);
}

static void gate_join(gate_t* gate) { pthread_join(gate->opener, NULL); }

START_TEST(test_allocation_waits_for_work_in_flight) {
  const size_t mib = (size_t)1 << 20;
  DC_CK_OK(dc_memory_pool_set_budget(dut, 2 * mib));
  dc_buffer_params_t big = {.dtype = DC_DTYPE_U8, .length = 3 * mib / 2,
                            .label = "big"};
  dc_buffer_t* a = NULL;
  DC_CK_OK(dc_buffer_create(dut, &big, &a));
  dc_stream_t* st = NULL;
  DC_CK_OK(dc_stream_create(dut, NULL, &st));
  uint8_t zero = 0;
  gate_t gate;
  gate_start(&gate, 50);
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &gate));
  DC_CK_OK(dc_stream_fill(st, a, 0, big.length, &zero));
  dc_buffer_release(a);  // the fill still holds it
  dc_buffer_t* b = NULL;
  DC_CK_OK(dc_buffer_create(dut, &big, &b));  // waits for the fill
  ck_assert_msg(atomic_load(&gate.open),
                "created while the fill still held the memory");
  gate_join(&gate);
  // Larger than the budget: no waiting (the gate opens only after ten
  // seconds, long after a call that does not wait), a clear message.
  dc_buffer_params_t huge = {.dtype = DC_DTYPE_U8, .length = 3 * mib};
  dc_buffer_t* c = SENTINEL;
  gate_start(&gate, 10000);
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &gate));
  DC_CK_FAIL(dc_buffer_create(dut, &huge, &c), DC_ERR_OUT_OF_MEMORY,
             "larger than the whole budget");
  ck_assert_msg(!atomic_load(&gate.open), "waited for work in flight");
  atomic_store(&gate.open, true);  // let the stream go now
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  gate_join(&gate);
  dc_stream_release(st);
  dc_buffer_release(b);
}
END_TEST

// A lost device is quarantined (its breaker tripped), the host is told,
// later work goes to the fallback, and a reset puts it back.
typedef struct told_t {
  int calls;
  dc_device_health_state_t state;
  char device[32];
} told_t;

static void tell(dc_device_t* device, const dc_device_health_t* health,
                 void* arg) {
  told_t* t = arg;
  ++t->calls;
  t->state = health->state;
  snprintf(t->device, sizeof(t->device), "%s", dc_device_name(device));
}

START_TEST(test_lost_device_is_quarantined_and_reported) {
  dc_device_t *primary, *backup;
  dc_context_t* c = two_devices(&primary, &backup);
  dc_program_t* p = build_on(primary, "resilience.cl", kKernels, NULL);
  told_t told = {0};
  DC_CK_OK(dc_context_on_device_health(c, tell, &told));
  dc_device_health_t h;
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_HEALTHY);
  dc_fault_rule_t rule = {.sites = DC_FAULT_LAUNCH,
                          .device = dc_device_name(primary),
                          .permanent = true, .nth = 2};
  DC_CK_OK(dc_fault_add(c, &rule, NULL));
  dc_buffer_t* bufs[CHAINS];
  for (int k = 0; k < CHAINS; ++k) bufs[k] = ints(primary, "chain");
  dc_graph_t* g = chains(p, bufs, 8,
                         &(dc_graph_params_t){.name = "lost",
                                              .fallback = backup});
  dc_stream_group_t* grp = group_on(primary, 1);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));  // everything after op1 fell back
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_LOST);
  ck_assert_uint_eq(h.failures, 1);  // then its breaker refused the rest
  DC_CK_STR_HAS(h.reason, "injected fault");
  ck_assert_int_eq(told.calls, 1);
  ck_assert_int_eq(told.state, DC_DEVICE_LOST);
  ck_assert_str_eq(told.device, dc_device_name(primary));
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  ck_assert(!r.fell_back);
  DC_CK_OK(dc_graph_exec_op(e, 7, &r));
  ck_assert(r.fell_back);
  char json[16384];
  size_t len = 0;
  DC_CK_OK(dc_health_report(c, json, sizeof(json), &len));
  DC_CK_STR_HAS(json, "\"state\":\"lost\"");
  // Back into service.
  dc_fault_clear(c);
  DC_CK_OK(dc_device_reset_health(primary));
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_HEALTHY);
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  DC_CK_OK(dc_graph_exec_op(e, 7, &r));
  ck_assert(!r.fell_back);
  ck_assert_str_eq(r.device, dc_device_name(primary));
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  for (int k = 0; k < CHAINS; ++k) dc_buffer_release(bufs[k]);
  dc_program_release(p);
  dc_context_release(c);
}
END_TEST


// Without a fallback given, ops on another device fall back to the CPU
// device (device 0); no_fallback turns that off. The other device is the
// device under test, or "cpu:1" when that is the CPU.
START_TEST(test_fallback_defaults_to_the_cpu) {
  dc_device_t *primary, *backup;
  dc_context_t* c = two_devices(&primary, &backup);
  dc_device_t* cpu0 = dc_test_cpu(c);
  dc_device_t* other = primary != cpu0 ? primary : backup;
  dc_program_t* p = build_on(other, "resilience.cl", kKernels, NULL);
  dc_fault_rule_t rule = {.sites = DC_FAULT_LAUNCH,
                          .device = dc_device_name(other)};
  DC_CK_OK(dc_fault_add(c, &rule, NULL));
  dc_retry_policy_t once = {.max_attempts = 1};
  dc_buffer_t* bufs[CHAINS];
  for (int k = 0; k < CHAINS; ++k) bufs[k] = ints(other, "chain");
  dc_stream_group_t* grp = group_on(other, 1);
  for (int off = 0; off < 2; ++off) {
    dc_graph_params_t gp = {.retry = &once, .no_fallback = off == 1,
                            .no_breakers = true};
    dc_graph_t* g = chains(p, bufs, 4, &gp);
    dc_graph_exec_t* e = NULL;
    DC_CK_OK(dc_graph_instantiate(g, grp, &e));
    dc_status_t st = dc_graph_exec_run(e, NULL);
    dc_op_report_t r;
    DC_CK_OK(dc_graph_exec_op(e, 0, &r));
    if (off == 0) {
      DC_CK_OK(st);
      ck_assert(r.fell_back);
      ck_assert_str_eq(r.device, dc_device_name(cpu0));
    } else {
      ck_assert_int_eq(st, DC_ERR_UNAVAILABLE);
      ck_assert(!r.fell_back);
    }
    dc_graph_exec_release(e);
    dc_graph_release(g);
  }
  dc_stream_group_release(grp);
  for (int k = 0; k < CHAINS; ++k) dc_buffer_release(bufs[k]);
  dc_program_release(p);
  dc_context_release(c);
}
END_TEST

// Synchronous calls feed the device's health as streams and graphs do: a
// failed dispatch, fill and compile each count once; the caller's mistakes
// do not; a lost device is marked lost.
START_TEST(test_synchronous_failures_feed_health) {
  dc_device_t *primary, *backup;
  dc_context_t* c = two_devices(&primary, &backup);
  dc_program_t* p = build_on(primary, "resilience.cl", kKernels, NULL);
  dc_buffer_t* b = ints(primary, "b");
  dc_arg_t args[2] = {dc_arg_buffer(b), dc_arg_i32(1)};
  dc_dispatch_t grid = {.dims = 1, .global = {LEN}};
  dc_device_health_t h;
  const uint32_t sites[] = {DC_FAULT_LAUNCH, DC_FAULT_COPY,
                            DC_FAULT_COMPILE};
  for (uint64_t k = 0; k < 3; ++k) {
    dc_fault_rule_t rule = {.sites = sites[k], .nth = 1,
                            .device = dc_device_name(primary)};
    uint32_t id = 0;
    DC_CK_OK(dc_fault_add(c, &rule, &id));
    int32_t v = 0;
    dc_program_t* q = NULL;
    dc_program_params_t pp = {.source = kKernels};
    dc_status_t st =
        k == 0   ? dc_kernel_dispatch(kernel_of(p, "step"), &grid, args, 2)
        : k == 1 ? dc_buffer_fill(b, 0, LEN, &v)
                 : dc_program_create(primary, &pp, &q);
    ck_assert_int_eq(st, DC_ERR_UNAVAILABLE);
    DC_CK_ERROR_HAS("injected fault");  // the message survives
    DC_CK_OK(dc_fault_remove(c, id));
    DC_CK_OK(dc_device_health(primary, &h));
    ck_assert_uint_eq(h.failures, k + 1);
    ck_assert_str_eq(h.reason, dc_last_error());
  }
  // The caller's mistake: not the device's.
  dc_arg_t wrong[1] = {dc_arg_i32(1)};
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "step"), &grid, wrong, 1),
             DC_ERR_INVALID_ARGUMENT, "step");
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_uint_eq(h.failures, 3);
  dc_fault_rule_t lost = {.sites = DC_FAULT_LAUNCH, .permanent = true,
                          .device = dc_device_name(primary)};
  DC_CK_OK(dc_fault_add(c, &lost, NULL));
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "step"), &grid, args, 2),
             DC_ERR_DEVICE_LOST, "injected fault");
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_LOST);
  dc_buffer_release(b);
  dc_program_release(p);
  dc_context_release(c);
}
END_TEST

// The class of a failure steers the op (dc/status.h): a deterministic one
// is not retried, does not fall back and says nothing about the device;
// a device-class one is not retried there, marks the device lost and
// runs the op on its fallback.
START_TEST(test_error_classes_steer_the_op) {
  dc_device_t *primary, *backup;
  dc_context_t* c = two_devices(&primary, &backup);
  dc_program_t* p = build_on(primary, "resilience.cl", kKernels, NULL);
  // Even a policy that retries device-class failures (for loops of the
  // host's own) does not retry them on the device that failed.
  dc_retry_policy_t policy = {.max_attempts = 4, .base_delay_ns = 1000,
                              .retry_on = DC_RETRY_ON_TRANSIENT |
                                          DC_RETRY_ON_DEVICE};
  dc_buffer_t* bufs[CHAINS];
  for (int k = 0; k < CHAINS; ++k) bufs[k] = ints(primary, "chain");
  dc_stream_group_t* grp = group_on(primary, 1);
  // No breakers: the class alone must keep the op off the broken device.
  dc_graph_params_t params = {.retry = &policy, .fallback = backup,
                              .no_breakers = true};
  dc_graph_t* g = chains(p, bufs, 1, &params);
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  dc_fault_rule_t bug = {.sites = DC_FAULT_LAUNCH, .nth = 1,
                         .status = DC_ERR_INTERNAL,
                         .device = dc_device_name(primary)};
  DC_CK_OK(dc_fault_add(c, &bug, NULL));
  DC_CK_FAIL(dc_graph_exec_run(e, NULL), DC_ERR_INTERNAL, "injected fault");
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  ck_assert_uint_eq(r.attempts, 1);
  ck_assert(!r.fell_back);
  dc_device_health_t h;
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_HEALTHY);
  ck_assert_uint_eq(h.failures, 0);
  dc_fault_clear(c);
  dc_fault_rule_t broken = {.sites = DC_FAULT_LAUNCH, .permanent = true,
                            .status = DC_ERR_DATA_LOSS,
                            .device = dc_device_name(primary)};
  uint32_t broken_id = 0;
  DC_CK_OK(dc_fault_add(c, &broken, &broken_id));
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  ck_assert(r.fell_back);
  DC_CK_OK(dc_device_health(primary, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_LOST);
  dc_fault_stats_t fs;
  DC_CK_OK(dc_fault_stats(c, broken_id, &fs));
  ck_assert_uint_eq(fs.injected, 1);  // one launch there, not four
  dc_fault_clear(c);
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  for (int k = 0; k < CHAINS; ++k) dc_buffer_release(bufs[k]);
  dc_program_release(p);
  dc_context_release(c);
}
END_TEST

// A graph may bring a breaker of its own: its ops ask that one, with its
// parameters, and nothing else; another graph on the same device keeps
// the registry's. No conflict between the two.
START_TEST(test_graph_breaker_objects) {
  dc_device_t *primary, *backup;
  dc_context_t* c = two_devices(&primary, &backup);
  dc_program_t* p = build_on(primary, "resilience.cl", kKernels, NULL);
  dc_breaker_params_t bp = {.failure_threshold = 2,
                            .open_ns = 60ull * 1000 * 1000 * 1000};
  dc_breaker_t* own = NULL;
  DC_CK_OK(dc_breaker_create(c, "mine", &bp, &own));
  dc_fault_rule_t rule = {.sites = DC_FAULT_LAUNCH,
                          .device = dc_device_name(primary)};
  DC_CK_OK(dc_fault_add(c, &rule, NULL));
  dc_retry_policy_t once = {.max_attempts = 1};
  dc_buffer_t* bufs[CHAINS];
  for (int k = 0; k < CHAINS; ++k) bufs[k] = ints(primary, "chain");
  dc_stream_group_t* grp = group_on(primary, 1);
  dc_graph_params_t mine = {.retry = &once, .no_fallback = true,
                            .breaker = own};
  dc_graph_params_t plain = {.retry = &once, .no_fallback = true};
  dc_graph_t* g = chains(p, bufs, 1, &mine);
  dc_graph_t* h = chains(p, bufs, 1, &plain);
  dc_breaker_release(own);  // the graph keeps it
  dc_graph_exec_t *eg = NULL, *eh = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &eg));
  DC_CK_OK(dc_graph_instantiate(h, grp, &eh));
  for (int run = 0; run < 2; ++run) {
    DC_CK_FAIL(dc_graph_exec_run(eg, NULL), DC_ERR_UNAVAILABLE,
               "injected fault");
  }
  DC_CK_FAIL(dc_graph_exec_run(eg, NULL), DC_ERR_CIRCUIT_OPEN,
             "circuit 'mine' is open");
  // The other graph's ops still reach the device: its breakers are the
  // registry's, which saw none of the first graph's failures.
  DC_CK_FAIL(dc_graph_exec_run(eh, NULL), DC_ERR_UNAVAILABLE,
             "injected fault");
  dc_breaker_t* registry = NULL;
  DC_CK_OK(dc_breaker_find(c, dc_device_name(primary), &registry));
  dc_breaker_stats_t rs;
  DC_CK_OK(dc_breaker_stats(registry, &rs));
  ck_assert_uint_eq(rs.failures, 1);
  dc_graph_exec_release(eg);
  dc_graph_exec_release(eh);
  dc_graph_release(g);
  dc_graph_release(h);
  dc_stream_group_release(grp);
  for (int k = 0; k < CHAINS; ++k) dc_buffer_release(bufs[k]);
  dc_program_release(p);
  dc_context_release(c);
}
END_TEST

static Suite* resilience_suite(void) {
  Suite* s = dc_test_kernel_suite("resilience", "dc-check-resilience");
  TCase* tc = tcase_create("graphs");
  tcase_add_unchecked_fixture(tc, dc_test_kernel_make_root,
                              dc_test_kernel_remove_root);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_transient_faults_give_identical_results);
  tcase_add_test(tc, test_retries_start_from_restored_inputs);
  tcase_add_test(tc, test_permanent_faults_fail_fast_and_cancel_dependents);
  tcase_add_test(tc, test_copies_failing_halfway_are_retried_whole);
  tcase_add_test(tc, test_breaker_opens_and_fallback_gives_identical_results);
  tcase_add_test(tc, test_allocation_waits_for_work_in_flight);
  tcase_add_test(tc, test_lost_device_is_quarantined_and_reported);
  tcase_add_test(tc, test_fallback_defaults_to_the_cpu);
  tcase_add_test(tc, test_synchronous_failures_feed_health);
  tcase_add_test(tc, test_graph_breaker_objects);
  tcase_add_test(tc, test_error_classes_steer_the_op);
  return s;
}

DC_CHECK_DEVICE_MAIN(resilience_suite)

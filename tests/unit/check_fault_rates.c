// check_fault_rates.c: the error handler's promise under real fault
// rates. A 1,000-op graph with a 5-attempt retry policy and the default
// breakers, under random transient faults at each site (launch, copy,
// allocation, compile) and at all of them together:
//   - at 1% and 10%: every op succeeds, results identical to a fault-free
//     run (the default breakers, which open on a failure rate of half the
//     calls, never open on faults that retries absorb);
//   - at 50% with a CPU fallback: results identical;
//   - at 50% without one: the run completes identically, or fails with a
//     transient error (an injected fault or the breaker's refusal), never
//     with a wrong result.
//
// The graph is 10 chains of in-place steps (retries restore their
// snapshots, which takes allocations and copies) with a copy op into a
// scratch buffer every tenth op. It runs on one stream, so its calls reach
// the fault rules in the same order every time: a seed gives the same
// faults on every run.
//
// Device-generic (check_util.h); the fallback device is the CPU, or
// "cpu:1" when the CPU is the device under test.
// SPDX-License-Identifier: MIT
#include "kernel_fixture.h"

static const char kKernels[] =
    "__kernel void step(__global int* x, int k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = x[i] * 3 + k;\n"
    "}\n";

enum { LEN = 64, CHAINS = 10, OPS = 1000, ATTEMPTS = 5 };

typedef struct rig_t {
  dc_context_t* ctx;
  dc_device_t* device;  // where the graph runs
  dc_device_t* backup;  // the CPU device it may fall back to
  dc_program_t* program;
  dc_buffer_t* chains[CHAINS];
  dc_buffer_t* scratch[CHAINS];
} rig_t;

static void rig_open(rig_t* r) {
  dc_context_params_t p = dc_test_quiet_params();
  p.kernel_cache_dir = cache_dir;
  p.cpu_devices = 2;
  r->ctx = dc_test_context_new(&p);
  r->device = dc_test_device(r->ctx);
  r->backup = dc_test_cpu(r->ctx);
  if (r->device == r->backup) {
    DC_CK_OK(dc_context_find_device(r->ctx, "cpu:1", &r->device));
  }
  r->program = build_on(r->device, "rates.cl", kKernels, NULL);
  for (int c = 0; c < CHAINS; ++c) {
    r->chains[c] = dc_test_buffer_new(r->device, DC_DTYPE_I32, LEN, "chain");
    r->scratch[c] =
        dc_test_buffer_new(r->device, DC_DTYPE_I32, LEN, "scratch");
  }
}

static void rig_close(rig_t* r) {
  for (int c = 0; c < CHAINS; ++c) {
    dc_buffer_release(r->chains[c]);
    dc_buffer_release(r->scratch[c]);
  }
  dc_program_release(r->program);
  dc_context_release(r->ctx);
}

// The graph: OPS ops, every tenth a copy of its chain into its scratch
// buffer, the rest in-place steps.
static dc_graph_t* graph_of(rig_t* r, bool fallback) {
  dc_retry_policy_t policy = {.max_attempts = ATTEMPTS,
                              .base_delay_ns = 1000,
                              .max_delay_ns = 20000,
                              .seed = 3};
  dc_graph_params_t params = {.name = "rates", .retry = &policy,
                              .fallback = fallback ? r->backup : NULL,
                              .no_fallback = !fallback};
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(r->ctx, &params, &g));
  dc_kernel_t* step = kernel_of(r->program, "step");
  dc_dispatch_t grid = {.dims = 1, .global = {LEN}};
  for (int i = 0; i < OPS; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "op%d", i);
    int c = i % CHAINS;
    if (i % 10 == 9) {
      DC_CK_OK(dc_graph_copy(g, name, r->scratch[c], 0, r->chains[c], 0, LEN,
                             NULL));
    } else {
      dc_arg_t args[2] = {dc_arg_buffer(r->chains[c]), dc_arg_i32(i % 7)};
      DC_CK_OK(dc_graph_dispatch(g, name, step, &grid, args, 2, NULL));
    }
  }
  return g;
}

// Zeroes the buffers, runs the graph once with |rule| (sites 0: none) in
// force, and copies the buffers' contents to |out| (2 * CHAINS * LEN) and
// the run's message to |why|.
static dc_status_t run_once(rig_t* r, bool fallback,
                            const dc_fault_rule_t* rule, int32_t* out,
                            char* why, size_t why_size) {
  int32_t zero = 0;
  for (int c = 0; c < CHAINS; ++c) {
    DC_CK_OK(dc_buffer_fill(r->chains[c], 0, LEN, &zero));
    DC_CK_OK(dc_buffer_fill(r->scratch[c], 0, LEN, &zero));
  }
  dc_graph_t* g = graph_of(r, fallback);
  dc_stream_group_t* grp = NULL;
  dc_stream_group_params_t gp = {.count = 1};
  DC_CK_OK(dc_stream_group_create(r->device, &gp, &grp));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  uint32_t id = 0;
  if (rule->sites != 0) DC_CK_OK(dc_fault_add(r->ctx, rule, &id));
  dc_status_t st = dc_graph_exec_run(e, NULL);
  snprintf(why, why_size, "%s", st == DC_OK ? "" : dc_last_error());
  if (id != 0) DC_CK_OK(dc_fault_remove(r->ctx, id));
  for (int c = 0; c < CHAINS; ++c) {
    DC_CK_OK(dc_buffer_read(r->chains[c], 0, out + c * LEN, LEN));
    DC_CK_OK(dc_buffer_read(r->scratch[c], 0, out + (CHAINS + c) * LEN, LEN));
  }
  if (st == DC_OK) {
    for (size_t i = 0; i < dc_graph_exec_op_count(e); ++i) {
      dc_op_report_t op;
      DC_CK_OK(dc_graph_exec_op(e, i, &op));
      ck_assert_int_eq(op.state, DC_OP_SUCCEEDED);
      ck_assert_uint_le(op.attempts, 2 * ATTEMPTS);  // the fallback's too
    }
  }
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  return st;
}

enum { WORDS = 2 * CHAINS * LEN };

static const struct {
  uint32_t sites;
  const char* name;
} kSites[] = {
    {DC_FAULT_LAUNCH, "launch"},
    {DC_FAULT_COPY, "copy"},
    {DC_FAULT_ALLOC, "alloc"},
    {DC_FAULT_COMPILE, "compile"},
    {DC_FAULT_LAUNCH | DC_FAULT_COPY | DC_FAULT_ALLOC | DC_FAULT_COMPILE,
     "all"},
};

// 1% and 10% at each site and at all together: absorbed.
START_TEST(test_rates_retries_absorb) {
  rig_t r;
  rig_open(&r);
  static int32_t clean[WORDS], faulty[WORDS];
  char why[512];
  dc_fault_rule_t none = {0};
  DC_CK_OK(run_once(&r, false, &none, clean, why, sizeof(why)));
  const double rates[] = {0.01, 0.10};
  for (size_t k = 0; k < 2; ++k) {
    for (size_t s = 0; s < sizeof(kSites) / sizeof(kSites[0]); ++s) {
      dc_fault_rule_t rule = {.sites = kSites[s].sites, .rate = rates[k],
                              .seed = 17 + s,
                              .device = dc_device_name(r.device)};
      dc_status_t st = run_once(&r, false, &rule, faulty, why, sizeof(why));
      ck_assert_msg(st == DC_OK, "%s at %.0f%%: %s: %s", kSites[s].name,
                    rates[k] * 100, dc_status_name(st), why);
      ck_assert_msg(memcmp(clean, faulty, sizeof(clean)) == 0,
                    "%s at %.0f%%: results differ", kSites[s].name,
                    rates[k] * 100);
    }
  }
  // No breaker of the device opened.
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_for(r.ctx, dc_device_name(r.device), &b));
  dc_breaker_stats_t bs;
  DC_CK_OK(dc_breaker_stats(b, &bs));
  ck_assert_uint_eq(bs.opens, 0);
  ck_assert_uint_gt(bs.failures, 0);
  rig_close(&r);
}
END_TEST

// 50% of launches fail on the device: with the CPU to fall back to, the
// results are those of a fault-free run; without it, the run completes
// identically or fails transiently. Breakers open here (half the calls
// fail), so they stay open only 10 ms: the ops that wait for them wait
// that long.
START_TEST(test_rates_half_fail) {
  rig_t r;
  rig_open(&r);
  dc_breaker_params_t quick = {.open_ns = 10 * 1000 * 1000};
  DC_CK_OK(dc_breaker_set_defaults(r.ctx, &quick));
  static int32_t clean[WORDS], faulty[WORDS];
  char why[512];
  dc_fault_rule_t none = {0};
  DC_CK_OK(run_once(&r, false, &none, clean, why, sizeof(why)));
  dc_fault_rule_t rule = {.sites = DC_FAULT_LAUNCH, .rate = 0.5, .seed = 29,
                          .device = dc_device_name(r.device)};
  dc_status_t st = run_once(&r, true, &rule, faulty, why, sizeof(why));
  ck_assert_msg(st == DC_OK, "with a fallback: %s", why);
  ck_assert_mem_eq(clean, faulty, sizeof(clean));
  st = run_once(&r, false, &rule, faulty, why, sizeof(why));
  if (st == DC_OK) {
    ck_assert_mem_eq(clean, faulty, sizeof(clean));
  } else {
    ck_assert_msg(st == DC_ERR_UNAVAILABLE || st == DC_ERR_CIRCUIT_OPEN,
                  "%s: %s", dc_status_name(st), why);
    ck_assert_msg(strstr(why, "injected fault") || strstr(why, "circuit '"),
                  "%s", why);
  }
  rig_close(&r);
}
END_TEST

// An op whose breaker is open waits for it, within its retry budget,
// instead of failing: the device's breaker is tripped, no fallback, and
// the op runs once the breaker lets a probe through.
START_TEST(test_rates_open_breaker_waits) {
  rig_t r;
  rig_open(&r);
  dc_breaker_params_t quick = {.open_ns = 20 * 1000 * 1000};
  DC_CK_OK(dc_breaker_set_defaults(r.ctx, &quick));
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_for(r.ctx, dc_device_name(r.device), &b));
  dc_breaker_trip(b);
  static int32_t out[WORDS];
  char why[512];
  dc_fault_rule_t none = {0};
  DC_CK_OK(run_once(&r, false, &none, out, why, sizeof(why)));
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  // With a single attempt there is no waiting: the error names the
  // breaker.
  dc_breaker_trip(b);
  dc_retry_policy_t once = {.max_attempts = 1};
  dc_graph_params_t params = {.retry = &once, .no_fallback = true};
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(r.ctx, &params, &g));
  int32_t v = 1;
  DC_CK_OK(dc_graph_fill(g, "f", r.chains[0], 0, LEN, &v, NULL));
  dc_stream_group_t* grp = NULL;
  dc_stream_group_params_t gp = {.count = 1};
  DC_CK_OK(dc_stream_group_create(r.device, &gp, &grp));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_FAIL(dc_graph_exec_run(e, NULL), DC_ERR_CIRCUIT_OPEN,
             dc_device_name(r.device));
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  rig_close(&r);
}
END_TEST

static Suite* fault_rates_suite(void) {
  Suite* s = dc_test_kernel_suite("fault_rates", "dc-check-fault-rates");
  TCase* tc = tcase_create("rates");
  tcase_add_unchecked_fixture(tc, dc_test_kernel_make_root,
                              dc_test_kernel_remove_root);
  tcase_add_checked_fixture(tc, dc_test_kernel_setup,
                            dc_test_kernel_teardown);
  tcase_set_timeout(tc, 600);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_rates_retries_absorb);
  tcase_add_test(tc, test_rates_half_fail);
  tcase_add_test(tc, test_rates_open_breaker_waits);
  return s;
}

DC_CHECK_DEVICE_MAIN(fault_rates_suite)

// check_breaker.c: circuit breakers: thresholds (count and ratio), the
// rolling window, open, half-open and closed, permits, statistics and
// logs, the context's registry, the health report, and concurrency.
// SPDX-License-Identifier: MIT
//
// Links the static library to reach dc__breaker_set_clock (a fake clock)
// and dc__resilience_context_destroy.
#include "breaker_internal.h"
#include "check_util.h"
#include "json_check.h"

#define MS 1000000ull
#define SEC 1000000000ull

static const dc_status_t kFailure = DC_ERR_UNAVAILABLE;

//===-- Helpers ---------------------------------------------------------===//

static uint64_t fake_now(void* user_data) { return *(uint64_t*)user_data; }

// Drops the context's breaker registry, as the context's destruction
// does, then the host's reference.
static void release_context(dc_context_t* ctx) {
  dc__resilience_context_destroy(ctx);
  dc_context_release(ctx);
}

// A breaker with |params| on a fake clock starting at |*clock|.
static dc_breaker_t* fake_breaker(dc_context_t* ctx, const char* name,
                                  const dc_breaker_params_t* params,
                                  uint64_t* clock) {
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, name, params, &b));
  dc__breaker_set_clock(b, fake_now, clock);
  return b;
}

// Acquires (asserting it is allowed) and records |outcome|.
static void call(dc_breaker_t* b, dc_status_t outcome) {
  dc_breaker_permit_t permit;
  DC_CK_OK(dc_breaker_acquire(b, &permit));
  dc_breaker_record(b, permit, outcome);
}

static dc_breaker_stats_t stats_of(dc_breaker_t* b) {
  dc_breaker_stats_t s;
  DC_CK_OK(dc_breaker_stats(b, &s));
  return s;
}

//===-- Parameters ------------------------------------------------------===//

START_TEST(test_breaker_params_check_names_the_bad_field) {
  DC_CK_FAIL(dc_breaker_params_check(NULL), DC_ERR_INVALID_ARGUMENT,
             "'params' must not be NULL");
  dc_breaker_params_t p = {.failure_ratio = 1.5};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "failure_ratio 1.5");
  p = (dc_breaker_params_t){.failure_ratio = -0.1};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "failure_ratio");
  p = (dc_breaker_params_t){.window_ns = 5};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "window_ns 5");
  p = (dc_breaker_params_t){.failure_codes = DC_STATUS_BIT(DC_OK)};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "failure_codes");
  p = (dc_breaker_params_t){.failure_ratio = 1.0, .window_ns = 10};
  DC_CK_OK(dc_breaker_params_check(&p));

  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_t* b = NULL;
  p = (dc_breaker_params_t){.failure_ratio = 2};
  DC_CK_FAIL(dc_breaker_create(ctx, "x", &p, &b), DC_ERR_INVALID_ARGUMENT,
             "dc_breaker_create: dc_breaker_params_check: failure_ratio 2");
  ck_assert_ptr_null(b);
  DC_CK_FAIL(dc_breaker_create(ctx, "", NULL, &b), DC_ERR_INVALID_ARGUMENT,
             "name '' is invalid");
  char long_name[80];
  memset(long_name, 'n', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  DC_CK_FAIL(dc_breaker_create(ctx, long_name, NULL, &b),
             DC_ERR_INVALID_ARGUMENT, "1 to 63 bytes");
  DC_CK_FAIL(dc_breaker_create(NULL, "x", NULL, &b), DC_ERR_INVALID_ARGUMENT,
             "ctx");
  DC_CK_FAIL(dc_breaker_create(ctx, "x", NULL, NULL),
             DC_ERR_INVALID_ARGUMENT, "out_breaker");
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_defaults_are_filled_in) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "d", NULL, &b));
  dc_breaker_params_t p;
  DC_CK_OK(dc_breaker_params(b, &p));
  // A failure rate, not a count (see DEFAULT_RATIO in breaker.c).
  ck_assert_uint_eq(p.failure_threshold, 0);
  ck_assert(p.failure_ratio == 0.5);
  ck_assert_uint_eq(p.min_calls, 20);
  ck_assert_uint_eq(p.window_ns, 10 * SEC);
  ck_assert_uint_eq(p.open_ns, 1 * SEC);
  ck_assert_uint_eq(p.half_open_probes, 1);
  ck_assert_uint_eq(p.failure_codes, dc_breaker_default_failure_codes());
  ck_assert_str_eq(dc_breaker_name(b), "d");
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_release(b);
  // In ratio mode an unset threshold is off.
  dc_breaker_params_t ratio = {.failure_ratio = 0.5};
  DC_CK_OK(dc_breaker_create(ctx, "r", &ratio, &b));
  DC_CK_OK(dc_breaker_params(b, &p));
  ck_assert_uint_eq(p.failure_threshold, 0);
  dc_breaker_release(b);
  ck_assert_str_eq(dc_breaker_state_name(DC_BREAKER_HALF_OPEN), "half_open");
  ck_assert_str_eq(dc_breaker_state_name((dc_breaker_state_t)9), "unknown");
  release_context(ctx);
}
END_TEST

//===-- Opening ---------------------------------------------------------===//

START_TEST(test_breaker_opens_exactly_at_the_failure_threshold) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 100 * SEC;
  dc_breaker_params_t p = {.failure_threshold = 3};
  dc_breaker_t* b = fake_breaker(ctx, "gpu", &p, &clock);
  call(b, kFailure);
  call(b, DC_OK);  // successes do not reset the window's count
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.window_calls, 3);
  ck_assert_uint_eq(s.window_failures, 2);
  call(b, kFailure);  // the third failure opens
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  s = stats_of(b);
  ck_assert_uint_eq(s.opens, 1);
  ck_assert_uint_eq(s.calls, 4);
  ck_assert_uint_eq(s.failures, 3);
  ck_assert_uint_eq(s.successes, 1);
  ck_assert_uint_eq(s.open_remaining_ns, 1 * SEC);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_caller_errors_do_not_count) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 2};
  dc_breaker_t* b = fake_breaker(ctx, "cpu", &p, &clock);
  static const dc_status_t kNeutral[] = {
      DC_ERR_INVALID_ARGUMENT, DC_ERR_OUT_OF_RANGE, DC_ERR_NOT_FOUND,
      DC_ERR_FAILED_PRECONDITION, DC_ERR_CANCELLED, DC_ERR_COMPILE,
      DC_ERR_CIRCUIT_OPEN, DC_ERR_UNSUPPORTED, DC_ERR_PERMISSION_DENIED,
      DC_ERR_ALREADY_EXISTS, DC_ERR_INTERNAL, DC_ERR_UNKNOWN,
  };
  for (int round = 0; round < 5; ++round) {
    for (size_t i = 0; i < sizeof(kNeutral) / sizeof(kNeutral[0]); ++i) {
      call(b, kNeutral[i]);
    }
  }
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.ignored, 60);
  ck_assert_uint_eq(s.calls, 0);
  ck_assert_uint_eq(s.window_calls, 0);
  // Transient and device-class failures count; deterministic ones
  // (INTERNAL, UNKNOWN above) do not.
  call(b, DC_ERR_DEVICE_LOST);
  call(b, DC_ERR_UNAVAILABLE);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_reset(b);
  call(b, DC_ERR_DATA_LOSS);
  ck_assert_uint_eq(stats_of(b).window_failures, 1);
  // Values that are not codes count as UNKNOWN: neither way.
  call(b, (dc_status_t)1234);
  ck_assert_uint_eq(stats_of(b).window_failures, 1);
  ck_assert_uint_eq(stats_of(b).ignored, 61);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_custom_failure_codes) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 2,
                           .failure_codes = DC_STATUS_BIT(DC_ERR_COMPILE)};
  dc_breaker_t* b = fake_breaker(ctx, "kernel:saxpy", &p, &clock);
  call(b, kFailure);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, DC_ERR_COMPILE);
  call(b, DC_ERR_COMPILE);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_opens_exactly_at_the_ratio) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_ratio = 0.5, .min_calls = 10};
  dc_breaker_t* b = fake_breaker(ctx, "ratio", &p, &clock);
  // Below min_calls even all failures do not open.
  for (int i = 0; i < 4; ++i) call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  for (int i = 0; i < 5; ++i) call(b, DC_OK);  // 4 of 9
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, DC_OK);  // 4 of 10: below the ratio
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, DC_OK);     // 4 of 11
  call(b, kFailure);  // 5 of 12
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, kFailure);  // 6 of 13 = 0.46
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, kFailure);  // 7 of 14 = 0.5: opens exactly here
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_permit_t permit;
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "after 7 of 14 calls failed in 10 s");
  dc_breaker_release(b);

  // The ratio can be reached when min_calls is: 3 failures then the 4th
  // call, a success, makes 3 of 4 >= 0.5 with min_calls 4.
  p = (dc_breaker_params_t){.failure_ratio = 0.5, .min_calls = 4};
  b = fake_breaker(ctx, "ratio2", &p, &clock);
  for (int i = 0; i < 3; ++i) call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, DC_OK);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_release(b);

  // Ratio and count together: whichever comes first.
  p = (dc_breaker_params_t){.failure_ratio = 0.9, .min_calls = 100,
                            .failure_threshold = 3};
  b = fake_breaker(ctx, "both", &p, &clock);
  for (int i = 0; i < 10; ++i) call(b, DC_OK);
  call(b, kFailure);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_old_failures_leave_the_window) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  // 10 s window: buckets of 1 s.
  dc_breaker_params_t p = {.failure_threshold = 3, .window_ns = 10 * SEC};
  dc_breaker_t* b = fake_breaker(ctx, "w", &p, &clock);
  call(b, kFailure);  // bucket 0
  clock = 500 * MS;
  call(b, kFailure);  // bucket 0
  clock = 10 * SEC;   // bucket 10: bucket 0 has left the window
  call(b, kFailure);
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.window_failures, 1);
  ck_assert_uint_eq(s.failures, 3);
  clock = 15 * SEC;
  call(b, kFailure);  // 2 in the window
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  // At 19.999 s the failure of 10 s still counts: the third opens.
  clock = 20 * SEC - 1;
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_release(b);

  // The same three failures within one window open it.
  clock = 0;
  b = fake_breaker(ctx, "w2", &p, &clock);
  call(b, kFailure);
  clock = 4 * SEC;
  call(b, kFailure);
  clock = 9 * SEC + 999 * MS;
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_release(b);

  // Calls age out too (ratio mode).
  clock = 0;
  p = (dc_breaker_params_t){.failure_ratio = 0.5, .min_calls = 4,
                            .window_ns = 10 * SEC};
  b = fake_breaker(ctx, "w3", &p, &clock);
  for (int i = 0; i < 3; ++i) call(b, kFailure);
  clock = 30 * SEC;
  call(b, kFailure);  // alone in the window: 1 of 1, below min_calls
  s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.window_calls, 1);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

//===-- Open, half-open, closed -----------------------------------------===//

START_TEST(test_breaker_open_rejects_fast_with_a_message) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 5, .open_ns = 1 * SEC};
  dc_breaker_t* b = fake_breaker(ctx, "cuda:0", &p, &clock);
  for (int i = 0; i < 5; ++i) call(b, kFailure);
  clock = 188 * MS;
  dc_breaker_permit_t permit = 77;
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "circuit 'cuda:0' is open for another 812 ms after 5 failures "
             "in 10 s");
  ck_assert_uint_eq(permit, DC_BREAKER_NO_PERMIT);
  clock = 1 * SEC - 1;  // rounds up: never "0 ms"
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "for another 1 ms");
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.rejections, 2);
  ck_assert_uint_eq(s.open_remaining_ns, 1);
  ck_assert_uint_eq(s.time_in_state_ns, 1 * SEC - 1);
  // dc_breaker_call does not call the function while open.
  DC_CK_FAIL(dc_breaker_call(b, NULL, NULL), DC_ERR_INVALID_ARGUMENT, "fn");
  ck_assert_str_eq(dc_status_name(DC_ERR_CIRCUIT_OPEN), "CIRCUIT_OPEN");
  ck_assert(dc_status_is_transient(DC_ERR_CIRCUIT_OPEN));
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_half_open_lets_exactly_the_probes_through) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 1, .open_ns = 1 * SEC,
                           .half_open_probes = 2};
  dc_breaker_t* b = fake_breaker(ctx, "probe", &p, &clock);
  call(b, kFailure);
  clock = 1 * SEC - 1;
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  clock = 1 * SEC;  // exactly open_ns later
  dc_breaker_permit_t p1, p2, p3;
  DC_CK_OK(dc_breaker_acquire(b, &p1));
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_HALF_OPEN);
  DC_CK_OK(dc_breaker_acquire(b, &p2));
  DC_CK_FAIL(dc_breaker_acquire(b, &p3), DC_ERR_CIRCUIT_OPEN,
             "circuit 'probe' is half-open and its 2 probes are taken");
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.probes_in_flight, 2);
  ck_assert_uint_eq(s.half_opens, 1);
  ck_assert_uint_eq(s.time_in_state_ns, 0);
  dc_breaker_record(b, p1, DC_OK);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_HALF_OPEN);
  // One succeeded, one in flight: still no room.
  DC_CK_FAIL(dc_breaker_acquire(b, &p3), DC_ERR_CIRCUIT_OPEN, "half-open");
  dc_breaker_record(b, p2, DC_OK);  // all probes succeeded: closes
  s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.closes, 1);
  ck_assert_uint_eq(s.window_calls, 0);  // a fresh window
  ck_assert_uint_eq(s.rejections, 2);
  call(b, DC_OK);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_failed_probe_reopens) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 2, .open_ns = 500 * MS};
  dc_breaker_t* b = fake_breaker(ctx, "re", &p, &clock);
  call(b, kFailure);
  call(b, kFailure);
  clock = 600 * MS;
  dc_breaker_permit_t probe;
  DC_CK_OK(dc_breaker_acquire(b, &probe));
  clock = 700 * MS;
  dc_breaker_record(b, probe, DC_ERR_DEADLINE_EXCEEDED);
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_OPEN);
  ck_assert_uint_eq(s.opens, 2);
  ck_assert_uint_eq(s.open_remaining_ns, 500 * MS);  // a new open period
  DC_CK_FAIL(dc_breaker_acquire(b, &probe), DC_ERR_CIRCUIT_OPEN,
             "circuit 're' is open for another 500 ms after a failed probe");
  clock = 1200 * MS;
  DC_CK_OK(dc_breaker_acquire(b, &probe));
  dc_breaker_record(b, probe, DC_OK);
  s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.half_opens, 2);
  ck_assert_uint_eq(s.closes, 1);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_neutral_probe_frees_its_slot) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 1, .open_ns = 10 * MS};
  dc_breaker_t* b = fake_breaker(ctx, "n", &p, &clock);
  call(b, kFailure);
  clock = 10 * MS;
  dc_breaker_permit_t probe, other;
  DC_CK_OK(dc_breaker_acquire(b, &probe));
  DC_CK_FAIL(dc_breaker_acquire(b, &other), DC_ERR_CIRCUIT_OPEN, "taken");
  dc_breaker_record(b, probe, DC_ERR_CANCELLED);  // did not happen
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_HALF_OPEN);
  DC_CK_OK(dc_breaker_acquire(b, &probe));
  dc_breaker_record(b, probe, DC_OK);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_late_outcomes_are_not_probes) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 2, .open_ns = 10 * MS};
  dc_breaker_t* b = fake_breaker(ctx, "late", &p, &clock);
  dc_breaker_permit_t slow_ok, slow_bad;
  DC_CK_OK(dc_breaker_acquire(b, &slow_ok));   // acquired while closed
  DC_CK_OK(dc_breaker_acquire(b, &slow_bad));
  call(b, kFailure);
  call(b, kFailure);  // opens
  clock = 10 * MS;
  dc_breaker_permit_t probe;
  DC_CK_OK(dc_breaker_acquire(b, &probe));
  // The old calls finish now: neither closes nor re-opens the breaker.
  dc_breaker_record(b, slow_ok, DC_OK);
  dc_breaker_record(b, slow_bad, kFailure);
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_HALF_OPEN);
  ck_assert_uint_eq(s.probes_in_flight, 1);
  ck_assert_uint_eq(s.failures, 3);  // still counted in the totals
  // Recording without a permit is an ordinary call, not a probe.
  dc_breaker_record(b, DC_BREAKER_NO_PERMIT, DC_OK);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_HALF_OPEN);
  dc_breaker_record(b, probe, DC_OK);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  // A probe permit of a past half-open period counts as a plain outcome.
  dc_breaker_record(b, probe, kFailure);
  s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.window_failures, 1);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

//===-- Transitions: logs, hooks, trip and reset ------------------------===//

typedef struct hook_log_t {
  int count;
  dc_breaker_state_t from[16];
  dc_breaker_state_t to[16];
} hook_log_t;

static void on_transition(dc_breaker_t* b, dc_breaker_state_t from,
                          dc_breaker_state_t to, void* user_data) {
  hook_log_t* h = user_data;
  // The hook may query the breaker: it runs outside the lock.
  ck_assert_int_eq(dc_breaker_state(b), to);
  if (h->count < 16) {
    h->from[h->count] = from;
    h->to[h->count] = to;
  }
  h->count++;
}

START_TEST(test_breaker_transitions_are_logged_counted_and_hooked) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t cp = dc_test_log_params(log, DC_LOG_WARN);
  dc_context_t* ctx = dc_test_context_new(&cp);
  uint64_t clock = 0;
  hook_log_t h = {0};
  dc_breaker_params_t p = {.failure_threshold = 2, .open_ns = 1 * SEC,
                           .on_transition = on_transition, .user_data = &h};
  dc_breaker_t* b = fake_breaker(ctx, "cuda:0", &p, &clock);
  size_t before = dc_test_log_count(log);
  call(b, kFailure);
  call(b, DC_ERR_OUT_OF_MEMORY);
  clock = 1 * SEC;
  call(b, DC_OK);  // half-open, then closed
  dc_breaker_trip(b);
  dc_breaker_reset(b);

  ck_assert_int_eq(h.count, 5);
  static const dc_breaker_state_t kFrom[] = {
      DC_BREAKER_CLOSED, DC_BREAKER_OPEN, DC_BREAKER_HALF_OPEN,
      DC_BREAKER_CLOSED, DC_BREAKER_OPEN};
  static const dc_breaker_state_t kTo[] = {
      DC_BREAKER_OPEN, DC_BREAKER_HALF_OPEN, DC_BREAKER_CLOSED,
      DC_BREAKER_OPEN, DC_BREAKER_CLOSED};
  for (int i = 0; i < 5; ++i) {
    ck_assert_int_eq(h.from[i], kFrom[i]);
    ck_assert_int_eq(h.to[i], kTo[i]);
  }
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.opens, 2);
  ck_assert_uint_eq(s.half_opens, 1);
  ck_assert_uint_eq(s.closes, 2);

  ck_assert_int_ge(
      dc_test_log_find(log, before,
                       "circuit 'cuda:0' opened after 2 failures in 10 s "
                       "(last: OUT_OF_MEMORY)"),
      0);
  ck_assert_int_ge(dc_test_log_find(log, before,
                                    "circuit 'cuda:0' is half-open after 1 s "
                                    "open: letting 1 probe through"),
                   0);
  ck_assert_int_ge(
      dc_test_log_find(log, before, "circuit 'cuda:0' closed after 1 probe "
                                    "succeeded"),
      0);
  ck_assert_int_ge(
      dc_test_log_find(log, before, "circuit 'cuda:0' opened by dc_breaker_trip"),
      0);
  ck_assert_int_ge(
      dc_test_log_find(log, before,
                       "circuit 'cuda:0' closed by dc_breaker_reset"),
      0);
  size_t transitions = 0;
  pthread_mutex_lock(&log->lock);
  for (size_t i = before; i < log->count; ++i) {
    if (strcmp(log->entries[i].component, "breaker") == 0) {
      ck_assert_int_eq(log->entries[i].level, DC_LOG_WARN);
      ++transitions;
    }
  }
  pthread_mutex_unlock(&log->lock);
  ck_assert_uint_eq(transitions, 5);
  dc_breaker_release(b);
  release_context(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_breaker_trip_and_reset) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 3, .open_ns = 100 * MS};
  dc_breaker_t* b = fake_breaker(ctx, "t", &p, &clock);
  call(b, kFailure);
  call(b, kFailure);
  dc_breaker_reset(b);  // closed already: only the window is emptied
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.window_failures, 0);
  ck_assert_uint_eq(s.closes, 0);
  call(b, kFailure);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_trip(b);
  dc_breaker_permit_t permit;
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "is open for another 100 ms (tripped with dc_breaker_trip)");
  clock = 60 * MS;
  dc_breaker_trip(b);  // starts the open time again
  ck_assert_uint_eq(stats_of(b).open_remaining_ns, 100 * MS);
  dc_breaker_reset(b);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, DC_OK);
  // NULL is harmless.
  dc_breaker_trip(NULL);
  dc_breaker_reset(NULL);
  dc_breaker_record(NULL, 0, DC_OK);
  ck_assert_int_eq(dc_breaker_state(NULL), DC_BREAKER_CLOSED);
  ck_assert_str_eq(dc_breaker_name(NULL), "");
  dc_breaker_release(NULL);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

typedef struct work_t {
  int calls;
  dc_status_t result;
} work_t;

static dc_status_t do_work(void* user_data) {
  work_t* w = user_data;
  w->calls++;
  if (w->result != DC_OK) {
    return dc_set_error(w->result, "work failed on call %d", w->calls);
  }
  return DC_OK;
}

START_TEST(test_breaker_call_wraps_a_function) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 2};
  dc_breaker_t* b = fake_breaker(ctx, "call", &p, &clock);
  work_t w = {.result = kFailure};
  DC_CK_FAIL(dc_breaker_call(b, do_work, &w), kFailure,
             "work failed on call 1");
  DC_CK_FAIL(dc_breaker_call(b, do_work, &w), kFailure,
             "work failed on call 2");
  DC_CK_FAIL(dc_breaker_call(b, do_work, &w), DC_ERR_CIRCUIT_OPEN,
             "circuit 'call' is open");
  ck_assert_int_eq(w.calls, 2);
  clock = 1 * SEC;
  w.result = DC_OK;
  DC_CK_OK(dc_breaker_call(b, do_work, &w));
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_keeps_its_context_alive) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "alive", NULL, &b));
  dc_breaker_retain(b);
  dc_context_release(ctx);  // the breaker still holds it
  dc_breaker_permit_t permit;
  DC_CK_OK(dc_breaker_acquire(b, &permit));
  dc_breaker_record(b, permit, DC_OK);
  dc_breaker_release(b);
  ck_assert_uint_eq(stats_of(b).successes, 1);
  dc_breaker_release(b);  // the last reference: the context goes too
}
END_TEST


//===-- Count windows, slow calls, parameters at run time ---------------===//

// Acquires and records |outcome| for a call that took |duration_ns|.
static void timed_call(dc_breaker_t* b, dc_status_t outcome,
                       uint64_t duration_ns) {
  dc_breaker_permit_t permit;
  DC_CK_OK(dc_breaker_acquire(b, &permit));
  dc_breaker_record_call(b, permit, outcome, duration_ns);
}

START_TEST(test_breaker_new_params_are_checked) {
  dc_breaker_params_t p = {.window_calls = DC_BREAKER_MAX_WINDOW_CALLS + 1};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "window_calls 1000001 is too many");
  p = (dc_breaker_params_t){.slow_call_ratio = 0.5};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "slow_call_ratio needs slow_call_ns");
  p = (dc_breaker_params_t){.slow_call_ns = 1, .slow_call_ratio = 1.5};
  DC_CK_FAIL(dc_breaker_params_check(&p), DC_ERR_INVALID_ARGUMENT,
             "slow_call_ratio 1.5");
  p = (dc_breaker_params_t){.slow_call_ns = 1};
  DC_CK_OK(dc_breaker_params_check(&p));
  // A slow-call time alone opens only on a window of slow calls.
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "slow", &p, &b));
  dc_breaker_params_t got;
  DC_CK_OK(dc_breaker_params(b, &got));
  ck_assert(got.slow_call_ratio == 1.0);
  ck_assert_uint_eq(got.window_calls, 0);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_count_window_keeps_the_last_calls) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.window_calls = 10, .failure_ratio = 0.5,
                           .min_calls = 10};
  dc_breaker_t* b = fake_breaker(ctx, "count", &p, &clock);
  // 4 failures, then successes push them out one by one: no time passes,
  // only calls.
  for (int i = 0; i < 4; ++i) call(b, kFailure);
  for (int i = 0; i < 20; ++i) call(b, DC_OK);
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.window_calls, 10);
  ck_assert_uint_eq(s.window_failures, 0);
  // 5 of the last 10 open it, exactly at the fifth.
  for (int i = 0; i < 4; ++i) call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_permit_t permit;
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "after 5 of 10 calls failed in the last 10 calls");
  // Time does not empty a count window; closing does.
  clock += 3600 * SEC;
  call(b, DC_OK);  // the probe
  s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.window_calls, 0);
  call(b, kFailure);
  clock += 3600 * SEC;
  ck_assert_uint_eq(stats_of(b).window_failures, 1);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_opens_on_the_slow_call_rate) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.slow_call_ns = 10 * MS, .slow_call_ratio = 0.5,
                           .min_calls = 4, .failure_threshold = 100};
  dc_breaker_t* b = fake_breaker(ctx, "slowish", &p, &clock);
  timed_call(b, DC_OK, 9 * MS);   // quick
  timed_call(b, DC_OK, 10 * MS);  // slow: at the limit
  call(b, DC_OK);                 // dc_breaker_record: quick
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(s.window_slow, 1);
  ck_assert_uint_eq(s.slow_calls, 1);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);  // 3 calls < min_calls
  // Slow failures are slow too; neutral outcomes are neither.
  timed_call(b, DC_ERR_INVALID_ARGUMENT, SEC);
  ck_assert_uint_eq(stats_of(b).slow_calls, 1);
  timed_call(b, kFailure, 50 * MS);  // 2 of 4 slow: opens
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  dc_breaker_permit_t permit;
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "after 2 of 4 calls were slow in 10 s");
  // A slow probe re-opens it; a quick one closes it.
  clock += SEC;
  timed_call(b, DC_OK, 20 * MS);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_CIRCUIT_OPEN,
             "after a slow probe");
  clock += SEC;
  timed_call(b, DC_OK, 1 * MS);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

// A released breaker's handle is refused (it stays recognisable while
// its context lives), never read as freed memory.
START_TEST(test_breaker_stale_handle_is_refused) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_t* keep = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "keeps the context", NULL, &keep));
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "short-lived", NULL, &b));
  dc_breaker_release(b);
  dc_breaker_permit_t permit;
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_INVALID_ARGUMENT,
             "dc_breaker_acquire: 'breaker' is NULL or a released breaker");
  dc_breaker_stats_t stats;
  DC_CK_FAIL(dc_breaker_stats(b, &stats), DC_ERR_INVALID_ARGUMENT,
             "'breaker' is NULL or a released breaker");
  ck_assert_str_eq(dc_breaker_name(b), "");
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  dc_breaker_trip(b);     // does nothing
  dc_breaker_release(b);  // does nothing
  dc_breaker_retain(b);   // does nothing
  // A new breaker does not take the released one's place at once.
  dc_breaker_t* next = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "next", NULL, &next));
  ck_assert_ptr_ne(next, b);
  DC_CK_FAIL(dc_breaker_acquire(b, &permit), DC_ERR_INVALID_ARGUMENT,
             "released");
  dc_breaker_release(next);
  dc_breaker_release(keep);
  release_context(ctx);
}
END_TEST

START_TEST(test_breaker_params_change_at_run_time) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 3};
  dc_breaker_t* b = fake_breaker(ctx, "tuned", &p, &clock);
  call(b, kFailure);
  call(b, kFailure);
  // New params: the window starts empty, the new threshold applies.
  dc_breaker_params_t q = {.failure_threshold = 2, .open_ns = 5 * SEC};
  DC_CK_OK(dc_breaker_set_params(b, &q));
  ck_assert_uint_eq(stats_of(b).window_failures, 0);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  ck_assert_uint_eq(stats_of(b).open_remaining_ns, 5 * SEC);
  // An open breaker stays open for the time it had.
  DC_CK_OK(dc_breaker_set_params(b, &p));
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_OPEN);
  ck_assert_uint_eq(stats_of(b).open_remaining_ns, 5 * SEC);
  dc_breaker_params_t got;
  DC_CK_OK(dc_breaker_params(b, &got));
  ck_assert_uint_eq(got.failure_threshold, 3);
  ck_assert_uint_eq(got.open_ns, 1 * SEC);
  // Bad params leave it as it was; NULL means the context's defaults.
  dc_breaker_params_t bad = {.failure_ratio = 7};
  DC_CK_FAIL(dc_breaker_set_params(b, &bad), DC_ERR_INVALID_ARGUMENT,
             "dc_breaker_set_params: dc_breaker_params_check: failure_ratio");
  DC_CK_FAIL(dc_breaker_set_params(NULL, &p), DC_ERR_INVALID_ARGUMENT,
             "'breaker' is NULL or a released breaker");
  DC_CK_OK(dc_breaker_set_params(b, NULL));
  DC_CK_OK(dc_breaker_params(b, &got));
  ck_assert(got.failure_ratio == 0.5);
  // A count window and back to a time window.
  dc_breaker_params_t counted = {.window_calls = 3, .failure_threshold = 2};
  DC_CK_OK(dc_breaker_set_params(b, &counted));
  dc_breaker_reset(b);
  call(b, kFailure);
  for (int i = 0; i < 3; ++i) call(b, DC_OK);
  call(b, kFailure);
  ck_assert_int_eq(dc_breaker_state(b), DC_BREAKER_CLOSED);  // 1 of last 3
  DC_CK_OK(dc_breaker_set_params(b, &p));
  ck_assert_uint_eq(stats_of(b).window_calls, 0);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

START_TEST(test_device_breaker_is_the_registry_one) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* cpu = NULL;
  DC_CK_OK(dc_context_device(ctx, 0, &cpu));
  dc_breaker_t *dev = NULL, *kernel = NULL, *found = NULL;
  DC_CK_OK(dc_device_breaker(cpu, NULL, &dev));
  DC_CK_OK(dc_breaker_find(ctx, "cpu", &found));
  ck_assert_ptr_eq(dev, found);
  DC_CK_OK(dc_device_breaker(cpu, "saxpy", &kernel));
  ck_assert_str_eq(dc_breaker_name(kernel), "cpu/saxpy");
  char long_name[80];
  memset(long_name, 'k', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  DC_CK_FAIL(dc_device_breaker(cpu, long_name, &found),
             DC_ERR_INVALID_ARGUMENT, "too long");
  ck_assert_ptr_null(found);
  DC_CK_FAIL(dc_device_breaker(NULL, NULL, &found), DC_ERR_INVALID_ARGUMENT,
             "device");
  // A reference to a registry breaker keeps the context alive.
  dc_breaker_retain(dev);
  dc_context_release(ctx);
  call(dev, DC_OK);
  ck_assert_uint_eq(stats_of(dev).successes, 1);
  dc_breaker_release(dev);  // the context goes, and its registry
}
END_TEST

//===-- The registry and the health report ------------------------------===//

START_TEST(test_breaker_registry_finds_by_name) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_t* found = NULL;
  ck_assert_uint_eq(dc_breaker_count(ctx), 0);
  DC_CK_FAIL(dc_breaker_find(ctx, "cpu", &found), DC_ERR_NOT_FOUND, "'cpu'");
  DC_CK_FAIL(dc_breaker_at(ctx, 0, &found), DC_ERR_OUT_OF_RANGE, "index 0");

  dc_breaker_t *cpu = NULL, *again = NULL, *kernel = NULL;
  DC_CK_OK(dc_breaker_for(ctx, "cpu", &cpu));
  DC_CK_OK(dc_breaker_for(ctx, "cpu", &again));
  ck_assert_ptr_eq(cpu, again);
  DC_CK_OK(dc_breaker_find(ctx, "cpu", &found));
  ck_assert_ptr_eq(found, cpu);

  // Defaults apply to breakers created afterwards.
  dc_breaker_params_t defaults = {.failure_threshold = 9, .open_ns = 5 * MS};
  DC_CK_OK(dc_breaker_set_defaults(ctx, &defaults));
  dc_breaker_params_t got;
  DC_CK_OK(dc_breaker_defaults(ctx, &got));
  ck_assert_uint_eq(got.failure_threshold, 9);
  DC_CK_OK(dc_breaker_for(ctx, "kernel:saxpy", &kernel));
  DC_CK_OK(dc_breaker_params(kernel, &got));
  ck_assert_uint_eq(got.failure_threshold, 9);
  ck_assert_uint_eq(got.open_ns, 5 * MS);
  DC_CK_OK(dc_breaker_params(cpu, &got));
  ck_assert_uint_eq(got.failure_threshold, 0);
  ck_assert(got.failure_ratio == 0.5);
  dc_breaker_params_t bad = {.failure_ratio = 3};
  DC_CK_FAIL(dc_breaker_set_defaults(ctx, &bad), DC_ERR_INVALID_ARGUMENT,
             "failure_ratio");
  // Standalone breakers take the context's defaults too.
  dc_breaker_t* standalone = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "alone", NULL, &standalone));
  DC_CK_OK(dc_breaker_params(standalone, &got));
  ck_assert_uint_eq(got.failure_threshold, 9);
  dc_breaker_release(standalone);
  DC_CK_OK(dc_breaker_set_defaults(ctx, NULL));
  DC_CK_OK(dc_breaker_defaults(ctx, &got));
  ck_assert_uint_eq(got.failure_threshold, 0);

  // Explicit parameters; a taken name is refused.
  dc_breaker_params_t custom = {.failure_threshold = 2};
  dc_breaker_t* gpu = NULL;
  DC_CK_OK(dc_breaker_register(ctx, "cuda:0", &custom, &gpu));
  DC_CK_FAIL(dc_breaker_register(ctx, "cuda:0", &custom, &found),
             DC_ERR_ALREADY_EXISTS, "'cuda:0'");
  ck_assert_ptr_null(found);
  DC_CK_FAIL(dc_breaker_for(ctx, "", &found), DC_ERR_INVALID_ARGUMENT,
             "name");

  // Listed in creation order.
  ck_assert_uint_eq(dc_breaker_count(ctx), 3);
  DC_CK_OK(dc_breaker_at(ctx, 0, &found));
  ck_assert_ptr_eq(found, cpu);
  DC_CK_OK(dc_breaker_at(ctx, 1, &found));
  ck_assert_ptr_eq(found, kernel);
  DC_CK_OK(dc_breaker_at(ctx, 2, &found));
  ck_assert_ptr_eq(found, gpu);
  DC_CK_FAIL(dc_breaker_at(ctx, 3, &found), DC_ERR_OUT_OF_RANGE, "3");
  ck_assert_uint_eq(dc_breaker_count(NULL), 0);

  // A second context has a registry of its own.
  dc_context_t* other = dc_test_context_new(NULL);
  ck_assert_uint_eq(dc_breaker_count(other), 0);
  dc_breaker_t* other_cpu = NULL;
  DC_CK_OK(dc_breaker_for(other, "cpu", &other_cpu));
  ck_assert_ptr_ne(other_cpu, cpu);
  release_context(other);
  ck_assert_uint_eq(dc_breaker_count(ctx), 3);
  release_context(ctx);
}
END_TEST

static const dc_json_t* find_breaker(const dc_json_t* breakers,
                                     const char* name) {
  for (size_t i = 0; i < breakers->count; ++i) {
    const char* n = dc_json_get_string(&breakers->items[i], "name");
    if (n != NULL && strcmp(n, name) == 0) return &breakers->items[i];
  }
  return NULL;
}

START_TEST(test_breaker_health_report_lists_the_breakers) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  char text[16384];
  size_t length = 0;
  char why[128];
  // No breakers: an empty array.
  DC_CK_OK(dc_health_report(ctx, text, sizeof(text), &length));
  dc_json_t* root = dc_json_parse(text, length, why, sizeof(why));
  ck_assert_msg(root != NULL, "invalid JSON: %s", why);
  const dc_json_t* breakers = dc_json_get(root, "breakers");
  ck_assert_ptr_nonnull(breakers);
  ck_assert_int_eq(breakers->kind, DC_JSON_ARRAY);
  ck_assert_uint_eq(breakers->count, 0);
  dc_json_free(root);

  uint64_t clock = 0;
  dc_breaker_params_t p = {.failure_threshold = 2, .open_ns = 1 * SEC};
  dc_breaker_t *gpu = NULL, *cpu = NULL;
  DC_CK_OK(dc_breaker_register(ctx, "cuda:0", &p, &gpu));
  dc__breaker_set_clock(gpu, fake_now, &clock);
  DC_CK_OK(dc_breaker_for(ctx, "cpu", &cpu));
  dc__breaker_set_clock(cpu, fake_now, &clock);
  call(gpu, kFailure);
  call(gpu, kFailure);
  clock = 250 * MS;
  dc_breaker_permit_t permit;
  ck_assert_int_eq(dc_breaker_acquire(gpu, &permit), DC_ERR_CIRCUIT_OPEN);
  call(cpu, DC_OK);
  call(cpu, kFailure);

  DC_CK_OK(dc_health_report(ctx, text, sizeof(text), &length));
  ck_assert_uint_lt(length, sizeof(text));
  root = dc_json_parse(text, length, why, sizeof(why));
  ck_assert_msg(root != NULL, "invalid JSON: %s", why);
  breakers = dc_json_get(root, "breakers");
  ck_assert_ptr_nonnull(breakers);
  ck_assert_uint_eq(breakers->count, 2);
  const dc_json_t* g = find_breaker(breakers, "cuda:0");
  ck_assert_ptr_nonnull(g);
  ck_assert_str_eq(dc_json_get_string(g, "state"), "open");
  ck_assert(dc_json_get_number(g, "opens", -1) == 1);
  ck_assert(dc_json_get_number(g, "rejections", -1) == 1);
  ck_assert(dc_json_get_number(g, "failures", -1) == 2);
  ck_assert(dc_json_get_number(g, "open_remaining_ms", -1) == 750);
  ck_assert(dc_json_get_number(g, "time_in_state_ms", -1) == 250);
  const dc_json_t* c = find_breaker(breakers, "cpu");
  ck_assert_ptr_nonnull(c);
  ck_assert_str_eq(dc_json_get_string(c, "state"), "closed");
  ck_assert(dc_json_get_number(c, "window_calls", -1) == 2);
  ck_assert(dc_json_get_number(c, "window_failures", -1) == 1);
  ck_assert(dc_json_get_number(c, "opens", -1) == 0);
  // The rest of the report is still there.
  ck_assert_ptr_nonnull(dc_json_get(root, "devices"));
  ck_assert_ptr_nonnull(dc_json_get(root, "counters"));
  dc_json_free(root);
  release_context(ctx);
}
END_TEST

//===-- Concurrency -----------------------------------------------------===//

#define THREADS 8
#define ITERATIONS 4000

// Probes in flight per half-open period (indexed by the permit's epoch),
// as the callers see them: acquired and not yet recorded.
#define EPOCH_SLOTS 4096
static atomic_int probes_by_epoch[EPOCH_SLOTS];

typedef struct hammer_t {
  dc_breaker_t* breaker;
  atomic_int* probes_max;
  atomic_ulong* acquired;
  atomic_ulong* rejected;
  uint64_t seed;
} hammer_t;

static void* hammer(void* arg) {
  hammer_t* h = arg;
  uint64_t rng = h->seed;
  for (int i = 0; i < ITERATIONS; ++i) {
    dc_breaker_permit_t permit;
    if (dc_breaker_acquire(h->breaker, &permit) != DC_OK) {
      atomic_fetch_add(h->rejected, 1);
      continue;
    }
    atomic_fetch_add(h->acquired, 1);
    bool probe = (permit & 1u) != 0;
    atomic_int* probes_now = &probes_by_epoch[(permit >> 1) % EPOCH_SLOTS];
    if (probe) {
      int now = atomic_fetch_add(probes_now, 1) + 1;
      int seen = atomic_load(h->probes_max);
      while (now > seen &&
             !atomic_compare_exchange_weak(h->probes_max, &seen, now)) {
      }
    }
    uint64_t r = dc_test_rand(&rng) % 100;
    dc_status_t outcome = r < 30   ? DC_ERR_UNAVAILABLE
                          : r < 35 ? DC_ERR_INVALID_ARGUMENT
                                   : DC_OK;
    if (probe) atomic_fetch_sub(probes_now, 1);
    dc_breaker_record(h->breaker, permit, outcome);
    if (r % 7 == 0) (void)dc_breaker_state(h->breaker);
  }
  return NULL;
}

START_TEST(test_breaker_concurrent_calls_keep_the_books) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_params_t p = {.failure_threshold = 20, .window_ns = 20 * MS,
                           .open_ns = 50000, .half_open_probes = 3};
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "hammered", &p, &b));
  atomic_int probes_max = 0;
  atomic_ulong acquired = 0, rejected = 0;
  hammer_t args[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    args[i] = (hammer_t){b, &probes_max, &acquired, &rejected,
                         (uint64_t)i * 7919 + 1};
  }
  dc_test_run_threads(THREADS, hammer, args, sizeof(args[0]));
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_uint_eq(atomic_load(&acquired) + atomic_load(&rejected),
                    (uint64_t)THREADS * ITERATIONS);
  ck_assert_uint_eq(s.rejections, atomic_load(&rejected));
  ck_assert_uint_eq(s.calls + s.ignored, atomic_load(&acquired));
  ck_assert_uint_eq(s.successes + s.failures, s.calls);
  ck_assert_int_le(atomic_load(&probes_max), 3);
  ck_assert_uint_eq(s.probes_in_flight, 0);
  // Every half-open period began with an open one.
  ck_assert_uint_le(s.half_opens, s.opens);
  ck_assert_uint_le(s.closes, s.half_opens);
  ck_assert_uint_gt(s.opens, 0);  // the states were exercised
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

// Successes on a closed breaker are counted without its lock; failures
// take it. Mixed from several threads, none may be lost.
static void* succeed_mostly(void* arg) {
  dc_breaker_t* b = *(dc_breaker_t**)arg;
  for (int i = 0; i < ITERATIONS; ++i) {
    dc_breaker_permit_t permit;
    if (dc_breaker_acquire(b, &permit) != DC_OK) return NULL;
    dc_breaker_record(b, permit, i % 10 == 0 ? DC_ERR_UNAVAILABLE : DC_OK);
  }
  return NULL;
}

START_TEST(test_breaker_concurrent_successes_are_all_counted) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  // A window far longer than the test, a threshold it never reaches.
  dc_breaker_params_t p = {.failure_threshold = 1000000,
                           .window_ns = 3600 * (uint64_t)1000000000u};
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "busy", &p, &b));
  dc_breaker_t* args[THREADS];
  for (int i = 0; i < THREADS; ++i) args[i] = b;
  dc_test_run_threads(THREADS, succeed_mostly, args, sizeof(args[0]));
  dc_breaker_stats_t s = stats_of(b);
  const uint64_t total = (uint64_t)THREADS * ITERATIONS;
  const uint64_t failures = (uint64_t)THREADS * ((ITERATIONS + 9) / 10);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.failures, failures);
  ck_assert_uint_eq(s.successes, total - failures);
  ck_assert_uint_eq(s.window_calls, total);
  ck_assert_uint_eq(s.window_failures, failures);
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST


// Params changed while other threads call: every outcome is still
// counted once, whichever window it lands in.
typedef struct retune_t {
  dc_breaker_t* b;
  int index;
} retune_t;

static void* call_or_retune(void* arg) {
  const retune_t* r = arg;
  for (int i = 0; i < ITERATIONS; ++i) {
    if (r->index == 0 && i % 50 == 0) {
      dc_breaker_params_t p = {.failure_threshold = 1000000,
                               .window_calls = (uint32_t)(i % 100),
                               .slow_call_ns = (uint64_t)(i % 3) * SEC};
      if (dc_breaker_set_params(r->b, &p) != DC_OK) return NULL;
    }
    dc_breaker_permit_t permit;
    if (dc_breaker_acquire(r->b, &permit) != DC_OK) return NULL;
    dc_breaker_record_call(r->b, permit, i % 7 == 0 ? kFailure : DC_OK,
                           (uint64_t)i);
  }
  return NULL;
}

START_TEST(test_breaker_params_change_under_load) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_breaker_params_t p = {.failure_threshold = 1000000};
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "retuned", &p, &b));
  retune_t args[THREADS];
  for (int i = 0; i < THREADS; ++i) args[i] = (retune_t){b, i};
  dc_test_run_threads(THREADS, call_or_retune, args, sizeof(args[0]));
  dc_breaker_stats_t s = stats_of(b);
  ck_assert_int_eq(s.state, DC_BREAKER_CLOSED);
  ck_assert_uint_eq(s.calls, (uint64_t)THREADS * ITERATIONS);
  ck_assert_uint_eq(s.failures,
                    (uint64_t)THREADS * ((ITERATIONS + 6) / 7));
  dc_breaker_release(b);
  release_context(ctx);
}
END_TEST

typedef struct lookup_t {
  dc_context_t* ctx;
  dc_breaker_t* seen[8];
} lookup_t;

static void* look_up(void* arg) {
  lookup_t* l = arg;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 8; ++i) {
      char name[16];
      snprintf(name, sizeof(name), "device:%d", (i + round) % 8);
      dc_breaker_t* b = NULL;
      if (dc_breaker_for(l->ctx, name, &b) != DC_OK) return NULL;
      l->seen[(i + round) % 8] = b;
      dc_breaker_record(b, DC_BREAKER_NO_PERMIT, DC_OK);
    }
    (void)dc_breaker_count(l->ctx);
  }
  return NULL;
}

START_TEST(test_breaker_registry_is_thread_safe) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  lookup_t args[THREADS];
  memset(args, 0, sizeof(args));
  for (int i = 0; i < THREADS; ++i) args[i].ctx = ctx;
  dc_test_run_threads(THREADS, look_up, args, sizeof(args[0]));
  ck_assert_uint_eq(dc_breaker_count(ctx), 8);
  for (int i = 0; i < 8; ++i) {
    for (int t = 1; t < THREADS; ++t) {
      ck_assert_ptr_eq(args[t].seen[i], args[0].seen[i]);
    }
    ck_assert_uint_eq(stats_of(args[0].seen[i]).successes, THREADS * 200);
  }
  release_context(ctx);
}
END_TEST

static Suite* breaker_suite(void) {
  Suite* s = suite_create("breaker");
  TCase* tc = tcase_create("params");
  tcase_add_test(tc, test_breaker_params_check_names_the_bad_field);
  tcase_add_test(tc, test_breaker_defaults_are_filled_in);
  suite_add_tcase(s, tc);
  tc = tcase_create("thresholds");
  tcase_add_test(tc, test_breaker_opens_exactly_at_the_failure_threshold);
  tcase_add_test(tc, test_breaker_caller_errors_do_not_count);
  tcase_add_test(tc, test_breaker_custom_failure_codes);
  tcase_add_test(tc, test_breaker_opens_exactly_at_the_ratio);
  tcase_add_test(tc, test_breaker_old_failures_leave_the_window);
  suite_add_tcase(s, tc);
  tc = tcase_create("states");
  tcase_add_test(tc, test_breaker_open_rejects_fast_with_a_message);
  tcase_add_test(tc, test_breaker_half_open_lets_exactly_the_probes_through);
  tcase_add_test(tc, test_breaker_failed_probe_reopens);
  tcase_add_test(tc, test_breaker_neutral_probe_frees_its_slot);
  tcase_add_test(tc, test_breaker_late_outcomes_are_not_probes);
  tcase_add_test(tc, test_breaker_transitions_are_logged_counted_and_hooked);
  tcase_add_test(tc, test_breaker_trip_and_reset);
  tcase_add_test(tc, test_breaker_call_wraps_a_function);
  tcase_add_test(tc, test_breaker_keeps_its_context_alive);
  suite_add_tcase(s, tc);
  tc = tcase_create("windows");
  tcase_add_test(tc, test_breaker_new_params_are_checked);
  tcase_add_test(tc, test_breaker_count_window_keeps_the_last_calls);
  tcase_add_test(tc, test_breaker_opens_on_the_slow_call_rate);
  tcase_add_test(tc, test_breaker_params_change_at_run_time);
  tcase_add_test(tc, test_breaker_stale_handle_is_refused);
  tcase_add_test(tc, test_device_breaker_is_the_registry_one);
  suite_add_tcase(s, tc);
  tc = tcase_create("registry");
  tcase_add_test(tc, test_breaker_registry_finds_by_name);
  tcase_add_test(tc, test_breaker_health_report_lists_the_breakers);
  suite_add_tcase(s, tc);
  tc = tcase_create("concurrency");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_breaker_concurrent_calls_keep_the_books);
  tcase_add_test(tc, test_breaker_concurrent_successes_are_all_counted);
  tcase_add_test(tc, test_breaker_registry_is_thread_safe);
  tcase_add_test(tc, test_breaker_params_change_under_load);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(breaker_suite)

// check_retry.c: retry policies: defaults, validation, which failures are
// retried, the backoff and jitter formulas, the budget, retry loops and
// the device-wide default.
// SPDX-License-Identifier: MIT
#include <math.h>

#include "check_util.h"

#define MS 1000000ull
#define US 1000ull

static const dc_status_t kFailure = DC_ERR_UNAVAILABLE;

//===-- Policies --------------------------------------------------------===//

START_TEST(test_retry_zeroed_policy_resolves_to_the_defaults) {
  dc_retry_policy_t zero = {0}, p;
  dc_retry_policy_resolve(&zero, &p);
  ck_assert_uint_eq(p.max_attempts, 3);
  ck_assert_uint_eq(p.base_delay_ns, 1 * MS);
  ck_assert(p.multiplier == 2.0);
  ck_assert_uint_eq(p.max_delay_ns, 1000 * MS);
  ck_assert_int_eq(p.jitter, DC_JITTER_FULL);
  ck_assert_uint_eq(p.budget_ns, 0);
  ck_assert_uint_eq(p.retry_on, DC_RETRY_ON_TRANSIENT);
  // Field by field: padding bytes are not part of the value.
  dc_retry_policy_t q;
  dc_retry_policy_resolve(NULL, &q);
  ck_assert_uint_eq(q.max_attempts, p.max_attempts);
  ck_assert_uint_eq(q.base_delay_ns, p.base_delay_ns);
  ck_assert(q.multiplier == p.multiplier);
  ck_assert_uint_eq(q.max_delay_ns, p.max_delay_ns);
  ck_assert_int_eq(q.jitter, p.jitter);
  ck_assert_uint_eq(q.budget_ns, p.budget_ns);
  ck_assert_uint_eq(q.retry_on, p.retry_on);
  ck_assert_uint_eq(q.also_retry, p.also_retry);
  ck_assert_uint_eq(q.never_retry, p.never_retry);
  ck_assert_uint_eq(q.seed, p.seed);
  DC_CK_OK(dc_retry_policy_check(&zero));
}
END_TEST

START_TEST(test_retry_check_names_the_bad_field) {
  DC_CK_FAIL(dc_retry_policy_check(NULL), DC_ERR_INVALID_ARGUMENT,
             "'policy' must not be NULL");
  dc_retry_policy_t p = {.multiplier = 0.5};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "multiplier 0.5");
  p = (dc_retry_policy_t){.multiplier = NAN};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "multiplier");
  p = (dc_retry_policy_t){.multiplier = INFINITY};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "multiplier");
  p = (dc_retry_policy_t){.jitter = (dc_jitter_t)9};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "jitter 9");
  p = (dc_retry_policy_t){.base_delay_ns = 5 * MS, .max_delay_ns = 2 * MS};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "base_delay_ns 5000000 exceeds max_delay_ns 2000000");
  // The default base (1 ms) against a smaller explicit cap.
  p = (dc_retry_policy_t){.max_delay_ns = 100 * US};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "base_delay_ns");
  p = (dc_retry_policy_t){.retry_on = 1u << DC_STATUS_CLASS_OK};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT, "retry_on");
  p = (dc_retry_policy_t){.retry_on = 1u << 7};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT, "retry_on");
  p = (dc_retry_policy_t){.also_retry =
                              DC_STATUS_BIT(DC_ERR_INVALID_ARGUMENT)};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "also_retry");
  p = (dc_retry_policy_t){.also_retry = DC_STATUS_BIT(DC_ERR_CANCELLED)};
  DC_CK_FAIL(dc_retry_policy_check(&p), DC_ERR_INVALID_ARGUMENT,
             "also_retry");
  // Valid corner cases.
  p = (dc_retry_policy_t){.multiplier = 1.0, .max_attempts = 1,
                          .base_delay_ns = 7, .max_delay_ns = 7,
                          .retry_on = DC_RETRY_ON_TRANSIENT |
                                      DC_RETRY_ON_DETERMINISTIC |
                                      DC_RETRY_ON_DEVICE,
                          .jitter = DC_JITTER_DECORRELATED};
  DC_CK_OK(dc_retry_policy_check(&p));
}
END_TEST

START_TEST(test_retry_resolve_clamps_what_check_rejects) {
  dc_retry_policy_t bad = {.multiplier = 0.25, .base_delay_ns = 9 * MS,
                           .max_delay_ns = 3 * MS, .jitter = (dc_jitter_t)42,
                           .also_retry = DC_STATUS_BIT(DC_ERR_CANCELLED)};
  dc_retry_policy_t p;
  dc_retry_policy_resolve(&bad, &p);
  ck_assert(p.multiplier == 1.0);
  ck_assert_uint_eq(p.base_delay_ns, 3 * MS);
  ck_assert_int_eq(p.jitter, DC_JITTER_FULL);
  ck_assert_uint_eq(p.also_retry, 0);
  // So even an unchecked policy never waits longer than its cap.
  uint64_t rng = 1;
  for (uint32_t r = 1; r < 50; ++r) {
    ck_assert_uint_le(dc_retry_delay_ns(&bad, r, 0, &rng), 3 * MS);
  }
}
END_TEST

//===-- Which failures are retried --------------------------------------===//

START_TEST(test_retry_default_classes) {
  static const dc_status_t kRetried[] = {
      DC_ERR_DEADLINE_EXCEEDED, DC_ERR_RESOURCE_EXHAUSTED, DC_ERR_ABORTED,
      DC_ERR_UNAVAILABLE, DC_ERR_OUT_OF_MEMORY, DC_ERR_CIRCUIT_OPEN,
  };
  static const dc_status_t kNot[] = {
      DC_OK, DC_ERR_CANCELLED, DC_ERR_INVALID_ARGUMENT, DC_ERR_INTERNAL,
      DC_ERR_DEVICE_LOST, DC_ERR_COMPILE, DC_ERR_NOT_FOUND, (dc_status_t)999,
  };
  for (size_t i = 0; i < sizeof(kRetried) / sizeof(kRetried[0]); ++i) {
    ck_assert_msg(dc_retry_is_retryable(NULL, kRetried[i]), "%s",
                  dc_status_name(kRetried[i]));
  }
  for (size_t i = 0; i < sizeof(kNot) / sizeof(kNot[0]); ++i) {
    ck_assert_msg(!dc_retry_is_retryable(NULL, kNot[i]), "%s",
                  dc_status_name(kNot[i]));
  }
}
END_TEST

START_TEST(test_retry_custom_masks) {
  // Deterministic only: the other classes are no longer retried.
  dc_retry_policy_t p = {.retry_on = DC_RETRY_ON_DETERMINISTIC};
  ck_assert(dc_retry_is_retryable(&p, DC_ERR_INTERNAL));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_DEVICE_LOST));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_UNAVAILABLE));
  p = (dc_retry_policy_t){.retry_on = DC_RETRY_ON_DEVICE};
  ck_assert(dc_retry_is_retryable(&p, DC_ERR_DEVICE_LOST));
  ck_assert(dc_retry_is_retryable(&p, DC_ERR_DATA_LOSS));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_INTERNAL));
  // Never invalid arguments, cancellations or successes, whatever the mask.
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_INVALID_ARGUMENT));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_CANCELLED));
  ck_assert(!dc_retry_is_retryable(&p, DC_OK));
  // Codes on top of the classes, and codes taken out.
  p = (dc_retry_policy_t){
      .also_retry = DC_STATUS_BIT(DC_ERR_DEVICE_LOST),
      .never_retry = DC_STATUS_BIT(DC_ERR_DEADLINE_EXCEEDED) |
                     DC_STATUS_BIT(DC_ERR_CIRCUIT_OPEN)};
  DC_CK_OK(dc_retry_policy_check(&p));
  ck_assert(dc_retry_is_retryable(&p, DC_ERR_DEVICE_LOST));
  ck_assert(dc_retry_is_retryable(&p, DC_ERR_UNAVAILABLE));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_DEADLINE_EXCEEDED));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_CIRCUIT_OPEN));
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_INTERNAL));
  // never_retry wins over also_retry.
  p.never_retry |= DC_STATUS_BIT(DC_ERR_DEVICE_LOST);
  ck_assert(!dc_retry_is_retryable(&p, DC_ERR_DEVICE_LOST));
}
END_TEST

START_TEST(test_retry_should_respects_attempts_and_budget) {
  dc_retry_policy_t p = {.max_attempts = 3, .budget_ns = 10 * MS};
  ck_assert(dc_retry_should(&p, kFailure, 1, 0));
  ck_assert(dc_retry_should(&p, kFailure, 2, 10 * MS - 1));
  ck_assert(!dc_retry_should(&p, kFailure, 3, 0));   // the third was last
  ck_assert(!dc_retry_should(&p, kFailure, 1, 10 * MS));  // budget spent
  ck_assert(!dc_retry_should(&p, DC_ERR_INVALID_ARGUMENT, 1, 0));
  ck_assert(!dc_retry_should(&p, DC_OK, 1, 0));
  dc_retry_policy_t once = {.max_attempts = 1};
  ck_assert(!dc_retry_should(&once, kFailure, 1, 0));
  // No budget: time does not matter.
  ck_assert(dc_retry_should(NULL, kFailure, 2, UINT64_MAX));
}
END_TEST

//===-- Backoff and jitter ----------------------------------------------===//

START_TEST(test_retry_backoff_grows_exponentially_up_to_the_cap) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_NONE, .base_delay_ns = 1 * MS,
                         .multiplier = 2.0, .max_delay_ns = 10 * MS};
  static const uint64_t kWant[] = {1 * MS, 2 * MS, 4 * MS, 8 * MS,
                                   10 * MS, 10 * MS, 10 * MS};
  uint64_t rng = 0;
  for (uint32_t r = 1; r <= 7; ++r) {
    ck_assert_uint_eq(dc_retry_delay_ns(&p, r, 0, &rng), kWant[r - 1]);
  }
  ck_assert_uint_eq(dc_retry_delay_ns(&p, 0, 0, &rng), 1 * MS);  // as 1
  // Far retries do not overflow: they stay at the cap.
  ck_assert_uint_eq(dc_retry_delay_ns(&p, 5000, 0, &rng), 10 * MS);
  ck_assert_uint_eq(dc_retry_delay_ns(&p, UINT32_MAX, 0, &rng), 10 * MS);
  p.multiplier = 1.5;
  ck_assert_uint_eq(dc_retry_delay_ns(&p, 3, 0, &rng), 2250 * US);
  p.multiplier = 1.0;  // constant delay
  ck_assert_uint_eq(dc_retry_delay_ns(&p, 9, 0, &rng), 1 * MS);
  // A huge cap with a huge multiplier: still bounded by the cap.
  p = (dc_retry_policy_t){.jitter = DC_JITTER_NONE, .multiplier = 1e300,
                          .max_delay_ns = UINT64_MAX};
  ck_assert_uint_eq(dc_retry_delay_ns(&p, 3, 0, &rng), UINT64_MAX);
}
END_TEST

#define DRAWS 20000

// Draws DRAWS delays of retry |retry| and checks they lie in [lo, hi],
// come close to both ends, and average |mean| within 3%.
static void check_distribution(const dc_retry_policy_t* p, uint32_t retry,
                               uint64_t previous, uint64_t lo, uint64_t hi,
                               double mean) {
  uint64_t rng = 12345;
  uint64_t min = UINT64_MAX, max = 0;
  double sum = 0;
  for (int i = 0; i < DRAWS; ++i) {
    uint64_t d = dc_retry_delay_ns(p, retry, previous, &rng);
    ck_assert_uint_ge(d, lo);
    ck_assert_uint_le(d, hi);
    min = d < min ? d : min;
    max = d > max ? d : max;
    sum += (double)d;
  }
  double span = (double)(hi - lo);
  ck_assert_msg((double)(min - lo) < 0.01 * span, "min %llu far from %llu",
                (unsigned long long)min, (unsigned long long)lo);
  ck_assert_msg((double)(hi - max) < 0.01 * span, "max %llu far from %llu",
                (unsigned long long)max, (unsigned long long)hi);
  double got = sum / DRAWS;
  ck_assert_msg(fabs(got - mean) < 0.03 * mean, "mean %.0f, expected %.0f",
                got, mean);
}

START_TEST(test_retry_full_jitter_is_uniform_up_to_the_backoff) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_FULL, .base_delay_ns = 1 * MS,
                         .max_delay_ns = 100 * MS};
  check_distribution(&p, 4, 0, 0, 8 * MS, 4 * MS);    // d = 8 ms
  check_distribution(&p, 20, 0, 0, 100 * MS, 50 * MS);  // capped
}
END_TEST

START_TEST(test_retry_equal_jitter_keeps_half_the_backoff) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_EQUAL, .base_delay_ns = 1 * MS,
                         .max_delay_ns = 100 * MS};
  check_distribution(&p, 4, 0, 4 * MS, 8 * MS, 6 * MS);
  // An odd delay: [d/2 rounded down, d].
  dc_retry_policy_t odd = {.jitter = DC_JITTER_EQUAL, .base_delay_ns = 7,
                           .max_delay_ns = 7};
  uint64_t rng = 3;
  bool seen3 = false, seen7 = false;
  for (int i = 0; i < 1000; ++i) {
    uint64_t d = dc_retry_delay_ns(&odd, 1, 0, &rng);
    ck_assert(d >= 3 && d <= 7);
    seen3 |= d == 3;
    seen7 |= d == 7;
  }
  ck_assert(seen3 && seen7);
}
END_TEST

START_TEST(test_retry_decorrelated_jitter_grows_from_the_previous_delay) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_DECORRELATED,
                         .base_delay_ns = 1 * MS, .max_delay_ns = 1000 * MS};
  // uniform[base, 3 * previous]
  check_distribution(&p, 5, 10 * MS, 1 * MS, 30 * MS, 15.5 * MS);
  // The first retry (no previous delay) draws from [base, 3 * base].
  check_distribution(&p, 1, 0, 1 * MS, 3 * MS, 2 * MS);
  // Capped: min(max, uniform[base, 3 * previous]).
  p.max_delay_ns = 20 * MS;
  uint64_t rng = 9, previous = 0;
  dc_retry_state_t s;
  p.max_attempts = 100000;
  dc_retry_begin(&p, &s);
  uint64_t max = 0;
  for (int i = 0; i < 2000; ++i) {
    uint64_t d = dc_retry_delay_ns(&p, (uint32_t)i + 1, previous, &rng);
    ck_assert_uint_ge(d, 1 * MS);
    ck_assert_uint_le(d, 20 * MS);
    ck_assert_uint_le(d, (previous > 1 * MS ? previous : 1 * MS) * 3);
    max = d > max ? d : max;
    previous = d;
    uint64_t next = 0;
    ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 0, &next),
                     DC_RETRY_AGAIN);
    ck_assert_uint_ge(next, 1 * MS);
    ck_assert_uint_le(next, 20 * MS);
  }
  ck_assert_uint_eq(max, 20 * MS);  // the cap is reached, never passed
}
END_TEST

START_TEST(test_retry_jitter_is_reproducible_from_the_seed) {
  static const dc_jitter_t kModes[] = {DC_JITTER_FULL, DC_JITTER_EQUAL,
                                       DC_JITTER_DECORRELATED};
  for (size_t m = 0; m < 3; ++m) {
    dc_retry_policy_t p = {.jitter = kModes[m], .seed = 42,
                           .max_attempts = 50};
    dc_retry_state_t a, b;
    dc_retry_begin(&p, &a);
    dc_retry_begin(&p, &b);
    int differ_from_other_seed = 0;
    dc_retry_policy_t q = p;
    q.seed = 43;
    dc_retry_state_t c;
    dc_retry_begin(&q, &c);
    for (int i = 0; i < 40; ++i) {
      uint64_t da, db, dc;
      ck_assert_int_eq(dc_retry_next(&p, &a, kFailure, 0, &da),
                       DC_RETRY_AGAIN);
      ck_assert_int_eq(dc_retry_next(&p, &b, kFailure, 0, &db),
                       DC_RETRY_AGAIN);
      ck_assert_int_eq(dc_retry_next(&q, &c, kFailure, 0, &dc),
                       DC_RETRY_AGAIN);
      ck_assert_uint_eq(da, db);
      differ_from_other_seed += da != dc;
    }
    ck_assert_int_gt(differ_from_other_seed, 20);
  }
  // Seed 0: successive sequences differ (callers that fail together do
  // not retry in lockstep).
  dc_retry_policy_t p = {.max_attempts = 50};
  dc_retry_state_t a, b;
  dc_retry_begin(&p, &a);
  dc_retry_begin(&p, &b);
  ck_assert_uint_ne(a.rng, b.rng);
}
END_TEST

//===-- Loops without sleeping ------------------------------------------===//

START_TEST(test_retry_next_verdicts) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_NONE, .max_attempts = 3,
                         .base_delay_ns = 1 * MS};
  dc_retry_state_t s;
  uint64_t delay = 99;
  dc_retry_begin(&p, &s);
  ck_assert_int_eq(dc_retry_next(&p, &s, DC_OK, 0, &delay),
                   DC_RETRY_SUCCEEDED);
  ck_assert_uint_eq(delay, 0);
  ck_assert_uint_eq(s.attempts, 1);
  dc_retry_begin(&p, &s);
  ck_assert_int_eq(dc_retry_next(&p, &s, DC_ERR_INVALID_ARGUMENT, 0, &delay),
                   DC_RETRY_NOT_RETRYABLE);
  dc_retry_begin(&p, &s);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 0, &delay),
                   DC_RETRY_AGAIN);
  ck_assert_uint_eq(delay, 1 * MS);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 0, &delay),
                   DC_RETRY_AGAIN);
  ck_assert_uint_eq(delay, 2 * MS);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 0, &delay),
                   DC_RETRY_ATTEMPTS_EXHAUSTED);
  ck_assert_uint_eq(delay, 0);
  ck_assert_uint_eq(s.attempts, 3);
  ck_assert_uint_eq(s.total_delay_ns, 3 * MS);
  ck_assert_str_eq(dc_retry_verdict_name(DC_RETRY_BUDGET_EXHAUSTED),
                   "BUDGET_EXHAUSTED");
  ck_assert_str_eq(dc_retry_verdict_name(DC_RETRY_AGAIN), "AGAIN");
  // A long run with full jitter never hands out more than max_attempts - 1
  // delays, and never one above the cap.
  dc_retry_policy_t storm = {.max_attempts = 1000, .max_delay_ns = 5 * MS};
  dc_retry_begin(&storm, &s);
  uint32_t agains = 0;
  while (dc_retry_next(&storm, &s, kFailure, 0, &delay) == DC_RETRY_AGAIN) {
    ck_assert_uint_le(delay, 5 * MS);
    ++agains;
  }
  ck_assert_uint_eq(agains, 999);
}
END_TEST

START_TEST(test_retry_budget_gives_up_before_exceeding) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_NONE, .max_attempts = 100,
                         .base_delay_ns = 10 * MS, .budget_ns = 35 * MS};
  dc_retry_state_t s;
  uint64_t delay;
  dc_retry_begin(&p, &s);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 0, &delay),
                   DC_RETRY_AGAIN);  // 0 + 10 <= 35
  ck_assert_uint_eq(delay, 10 * MS);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 15 * MS, &delay),
                   DC_RETRY_AGAIN);  // 15 + 20 == 35: ends at the budget
  ck_assert_uint_eq(delay, 20 * MS);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 15 * MS + 1, &delay),
                   DC_RETRY_BUDGET_EXHAUSTED);  // 40 ms would pass it
  ck_assert_uint_eq(delay, 0);
  // A budget already spent stops at once.
  dc_retry_begin(&p, &s);
  ck_assert_int_eq(dc_retry_next(&p, &s, kFailure, 35 * MS, &delay),
                   DC_RETRY_BUDGET_EXHAUSTED);
  // Simulated time: elapsed + delays never passes the budget.
  dc_retry_policy_t j = {.max_attempts = 1000, .base_delay_ns = 1 * MS,
                         .max_delay_ns = 8 * MS, .budget_ns = 100 * MS,
                         .jitter = DC_JITTER_EQUAL, .seed = 5};
  dc_retry_begin(&j, &s);
  uint64_t now = 0;
  dc_retry_verdict_t v;
  while ((v = dc_retry_next(&j, &s, kFailure, now, &delay)) ==
         DC_RETRY_AGAIN) {
    now += delay + 100 * US;  // the delay, then an attempt of 100 us
    ck_assert_uint_le(now - 100 * US, 100 * MS);
  }
  ck_assert_int_eq(v, DC_RETRY_BUDGET_EXHAUSTED);
}
END_TEST

//===-- dc_retry_call ---------------------------------------------------===//

typedef struct flaky_t {
  int calls;
  int fail_first;  // calls that fail before one succeeds (-1: all)
  dc_status_t failure;
} flaky_t;

static dc_status_t flaky(void* user_data) {
  flaky_t* f = user_data;
  f->calls += 1;
  if (f->fail_first < 0 || f->calls <= f->fail_first) {
    return dc_set_error(f->failure, "flaky: call %d failed", f->calls);
  }
  return DC_OK;
}

START_TEST(test_retry_call_retries_until_success) {
  dc_retry_policy_t p = {.jitter = DC_JITTER_NONE, .base_delay_ns = 100 * US,
                         .max_attempts = 5};
  flaky_t f = {.fail_first = 2, .failure = kFailure};
  dc_retry_report_t r;
  DC_CK_OK(dc_retry_call(&p, flaky, &f, &r));
  ck_assert_int_eq(f.calls, 3);
  ck_assert_uint_eq(r.attempts, 3);
  ck_assert_uint_eq(r.total_delay_ns, 300 * US);  // 100 + 200
  ck_assert_uint_ge(r.elapsed_ns, 300 * US);
  ck_assert_int_eq(r.last_status, DC_OK);
  ck_assert_int_eq(r.verdict, DC_RETRY_SUCCEEDED);
}
END_TEST

START_TEST(test_retry_call_gives_up_after_max_attempts) {
  dc_retry_policy_t p = {.base_delay_ns = 100 * US, .max_attempts = 4};
  flaky_t f = {.fail_first = -1, .failure = kFailure};
  dc_retry_report_t r;
  DC_CK_FAIL(dc_retry_call(&p, flaky, &f, &r), kFailure,
             "flaky: call 4 failed (gave up after 4 attempts)");
  ck_assert_int_eq(f.calls, 4);
  ck_assert_uint_eq(r.attempts, 4);
  ck_assert_int_eq(r.verdict, DC_RETRY_ATTEMPTS_EXHAUSTED);
  ck_assert_int_eq(r.last_status, kFailure);
  // Full jitter: each of the 3 delays within its backoff (100, 200, 400).
  ck_assert_uint_le(r.total_delay_ns, 700 * US);
}
END_TEST

START_TEST(test_retry_call_does_not_retry_deterministic_failures) {
  flaky_t f = {.fail_first = -1, .failure = DC_ERR_INVALID_ARGUMENT};
  dc_retry_report_t r;
  DC_CK_FAIL(dc_retry_call(NULL, flaky, &f, &r), DC_ERR_INVALID_ARGUMENT,
             "flaky: call 1 failed");
  ck_assert_str_eq(dc_last_error(), "flaky: call 1 failed");  // unchanged
  ck_assert_int_eq(f.calls, 1);
  ck_assert_uint_eq(r.attempts, 1);
  ck_assert_uint_eq(r.total_delay_ns, 0);
  ck_assert_int_eq(r.verdict, DC_RETRY_NOT_RETRYABLE);
  // max_attempts 1: no retry, and nothing appended.
  dc_retry_policy_t once = {.max_attempts = 1};
  f = (flaky_t){.fail_first = -1, .failure = kFailure};
  DC_CK_FAIL(dc_retry_call(&once, flaky, &f, NULL), kFailure, "flaky");
  ck_assert_str_eq(dc_last_error(), "flaky: call 1 failed");
  ck_assert_int_eq(f.calls, 1);
}
END_TEST

START_TEST(test_retry_call_stops_at_the_budget) {
  // Delays of 1, 2, 4 ms against a 5 ms budget: the third delay would end
  // past it (the second too, on a slow machine).
  dc_retry_policy_t p = {.jitter = DC_JITTER_NONE, .base_delay_ns = 1 * MS,
                         .max_attempts = 10, .budget_ns = 5 * MS};
  flaky_t f = {.fail_first = -1, .failure = kFailure};
  dc_retry_report_t r;
  DC_CK_FAIL(dc_retry_call(&p, flaky, &f, &r), kFailure,
             ": the 5 ms budget would be exceeded)");
  ck_assert_int_eq(r.verdict, DC_RETRY_BUDGET_EXHAUSTED);
  ck_assert(r.attempts == 2 || r.attempts == 3);
  ck_assert_int_eq(f.calls, (int)r.attempts);
  ck_assert_uint_le(r.total_delay_ns, 5 * MS);
  char expected[64];
  snprintf(expected, sizeof(expected), "(gave up after %u attempts: ",
           r.attempts);
  DC_CK_ERROR_HAS(expected);
  DC_CK_ERROR_HAS("flaky: call");
}
END_TEST

START_TEST(test_retry_call_rejects_bad_arguments) {
  flaky_t f = {.fail_first = 0};
  dc_retry_policy_t bad = {.multiplier = 0.5};
  dc_retry_report_t r;
  DC_CK_FAIL(dc_retry_call(&bad, flaky, &f, &r), DC_ERR_INVALID_ARGUMENT,
             "multiplier");
  ck_assert_int_eq(f.calls, 0);
  ck_assert_uint_eq(r.attempts, 0);
  DC_CK_FAIL(dc_retry_call(NULL, NULL, &f, NULL), DC_ERR_INVALID_ARGUMENT,
             "'fn'");
}
END_TEST

//===-- The device-wide default ------------------------------------------===//

START_TEST(test_retry_device_default_policy) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* cpu = dc_test_cpu(ctx);
  dc_retry_policy_t p;
  memset(&p, 0xAB, sizeof(p));
  DC_CK_OK(dc_device_retry_policy(cpu, &p));
  dc_retry_policy_t zero = {0};
  ck_assert_int_eq(memcmp(&p, &zero, sizeof(p)), 0);

  dc_retry_policy_t set = {.max_attempts = 7, .budget_ns = 2 * MS,
                           .jitter = DC_JITTER_EQUAL};
  DC_CK_OK(dc_device_set_retry_policy(cpu, &set));
  DC_CK_OK(dc_device_retry_policy(cpu, &p));
  ck_assert_int_eq(memcmp(&p, &set, sizeof(p)), 0);

  // A bad policy is refused and the old one stays.
  dc_retry_policy_t bad = {.jitter = (dc_jitter_t)77};
  DC_CK_FAIL(dc_device_set_retry_policy(cpu, &bad), DC_ERR_INVALID_ARGUMENT,
             "dc_device_set_retry_policy: dc_retry_policy_check: jitter 77");
  DC_CK_OK(dc_device_retry_policy(cpu, &p));
  ck_assert_uint_eq(p.max_attempts, 7);

  DC_CK_OK(dc_device_set_retry_policy(cpu, NULL));  // back to the defaults
  DC_CK_OK(dc_device_retry_policy(cpu, &p));
  ck_assert_int_eq(memcmp(&p, &zero, sizeof(p)), 0);

  DC_CK_FAIL(dc_device_set_retry_policy(NULL, &set), DC_ERR_INVALID_ARGUMENT,
             "device");
  DC_CK_FAIL(dc_device_retry_policy(cpu, NULL), DC_ERR_INVALID_ARGUMENT,
             "out_policy");
  dc_context_release(ctx);
}
END_TEST

static Suite* retry_suite(void) {
  Suite* s = suite_create("retry");
  TCase* tc = tcase_create("policy");
  tcase_add_test(tc, test_retry_zeroed_policy_resolves_to_the_defaults);
  tcase_add_test(tc, test_retry_check_names_the_bad_field);
  tcase_add_test(tc, test_retry_resolve_clamps_what_check_rejects);
  tcase_add_test(tc, test_retry_default_classes);
  tcase_add_test(tc, test_retry_custom_masks);
  tcase_add_test(tc, test_retry_should_respects_attempts_and_budget);
  suite_add_tcase(s, tc);
  tc = tcase_create("delays");
  tcase_add_test(tc, test_retry_backoff_grows_exponentially_up_to_the_cap);
  tcase_add_test(tc, test_retry_full_jitter_is_uniform_up_to_the_backoff);
  tcase_add_test(tc, test_retry_equal_jitter_keeps_half_the_backoff);
  tcase_add_test(tc,
                 test_retry_decorrelated_jitter_grows_from_the_previous_delay);
  tcase_add_test(tc, test_retry_jitter_is_reproducible_from_the_seed);
  suite_add_tcase(s, tc);
  tc = tcase_create("loops");
  tcase_add_test(tc, test_retry_next_verdicts);
  tcase_add_test(tc, test_retry_budget_gives_up_before_exceeding);
  tcase_add_test(tc, test_retry_call_retries_until_success);
  tcase_add_test(tc, test_retry_call_gives_up_after_max_attempts);
  tcase_add_test(tc, test_retry_call_does_not_retry_deterministic_failures);
  tcase_add_test(tc, test_retry_call_stops_at_the_budget);
  tcase_add_test(tc, test_retry_call_rejects_bad_arguments);
  tcase_add_test(tc, test_retry_device_default_policy);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(retry_suite)

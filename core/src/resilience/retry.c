// retry.c: retry policies: which failures are retried, the backoff and
// jitter formulas, the time budget, and a sleeping retry loop.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "breaker_internal.h"
#include "dc/retry.h"
#include "internal.h"

#define DEFAULT_ATTEMPTS 3u
#define DEFAULT_BASE_NS 1000000ull       // 1 ms
#define DEFAULT_MULTIPLIER 2.0
#define DEFAULT_MAX_NS 1000000000ull     // 1 s
#define DEFAULT_SEED 0x243F6A8885A308D3ull  // pi's first hex digits

#define KNOWN_CLASSES \
  (DC_RETRY_ON_TRANSIENT | DC_RETRY_ON_DETERMINISTIC | DC_RETRY_ON_DEVICE)
// Codes no policy retries: not failures, or the caller's to fix.
#define NEVER_RETRIED                                     \
  (DC_STATUS_BIT(DC_OK) | DC_STATUS_BIT(DC_ERR_CANCELLED) | \
   DC_STATUS_BIT(DC_ERR_INVALID_ARGUMENT))

//===-- The generator ---------------------------------------------------===//

// splitmix64: any state is valid, and consecutive states give unrelated
// outputs, so seeds 1, 2, 3 make unrelated sequences.
static uint64_t next_random(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [lo, hi], both included, without modulo bias.
static uint64_t uniform(uint64_t* state, uint64_t lo, uint64_t hi) {
  if (lo >= hi) return lo;
  uint64_t span = hi - lo;
  if (span == UINT64_MAX) return next_random(state);
  uint64_t n = span + 1;
  uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  for (;;) {
    uint64_t r = next_random(state);
    if (r >= threshold) return lo + r % n;
  }
}

static atomic_uint_fast64_t default_seed_series;

static uint64_t sequence_seed(const dc_retry_policy_t* p) {
  if (p->seed != 0) return p->seed;
  uint64_t n = atomic_fetch_add_explicit(&default_seed_series, 1,
                                         memory_order_relaxed);
  uint64_t s = DEFAULT_SEED + n;
  return next_random(&s);
}

//===-- Policies --------------------------------------------------------===//

void dc_retry_policy_resolve(const dc_retry_policy_t* policy,
                             dc_retry_policy_t* out) {
  dc_retry_policy_t p = {0};
  if (policy != NULL) p = *policy;
  if (p.max_attempts == 0) p.max_attempts = DEFAULT_ATTEMPTS;
  if (p.base_delay_ns == 0) p.base_delay_ns = DEFAULT_BASE_NS;
  if (p.multiplier == 0.0 || !isfinite(p.multiplier)) {
    p.multiplier = DEFAULT_MULTIPLIER;
  } else if (p.multiplier < 1.0) {
    p.multiplier = 1.0;
  }
  if (p.max_delay_ns == 0) p.max_delay_ns = DEFAULT_MAX_NS;
  if (p.base_delay_ns > p.max_delay_ns) p.base_delay_ns = p.max_delay_ns;
  if ((unsigned)p.jitter > DC_JITTER_DECORRELATED) p.jitter = DC_JITTER_FULL;
  p.retry_on &= KNOWN_CLASSES;
  if (p.retry_on == 0) p.retry_on = DC_RETRY_ON_TRANSIENT;
  p.also_retry &= ~NEVER_RETRIED;
  *out = p;
}

dc_status_t dc_retry_policy_check(const dc_retry_policy_t* policy) {
  static const char* fn = "dc_retry_policy_check";
  DC_REQUIRE_ARG(policy, fn);
  const dc_retry_policy_t* p = policy;
  if (p->multiplier != 0.0 && !(isfinite(p->multiplier) &&
                                p->multiplier >= 1.0)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: multiplier %g is invalid (0 for the default 2, or a "
                   "finite value >= 1)",
                   fn, p->multiplier);
  }
  if ((unsigned)p->jitter > DC_JITTER_DECORRELATED) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: jitter %d is not a dc_jitter_t", fn, (int)p->jitter);
  }
  uint64_t base = p->base_delay_ns ? p->base_delay_ns : DEFAULT_BASE_NS;
  uint64_t max = p->max_delay_ns ? p->max_delay_ns : DEFAULT_MAX_NS;
  if (base > max) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: base_delay_ns %llu exceeds max_delay_ns %llu", fn,
                   (unsigned long long)base, (unsigned long long)max);
  }
  if ((p->retry_on & ~KNOWN_CLASSES) != 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: retry_on 0x%x has bits that are not "
                   "DC_RETRY_ON_TRANSIENT, _DETERMINISTIC or _DEVICE",
                   fn, p->retry_on);
  }
  if ((p->also_retry & NEVER_RETRIED) != 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: also_retry names OK, CANCELLED or INVALID_ARGUMENT, "
                   "which are never retried",
                   fn);
  }
  return DC_OK;
}

bool dc_retry_is_retryable(const dc_retry_policy_t* policy,
                           dc_status_t status) {
  dc_retry_policy_t p;
  dc_retry_policy_resolve(policy, &p);
  unsigned code = (unsigned)status;
  if (code < 64) {
    uint64_t bit = DC_STATUS_BIT(code);
    if ((NEVER_RETRIED | p.never_retry) & bit) return false;
    if (p.also_retry & bit) return true;
  }
  dc_status_class_t cls = dc_status_class(status);
  return cls != DC_STATUS_CLASS_OK && (p.retry_on & (1u << cls)) != 0;
}

bool dc_retry_should(const dc_retry_policy_t* policy, dc_status_t status,
                     uint32_t attempt, uint64_t elapsed_ns) {
  dc_retry_policy_t p;
  dc_retry_policy_resolve(policy, &p);
  if (!dc_retry_is_retryable(&p, status)) return false;
  if (attempt >= p.max_attempts) return false;
  return p.budget_ns == 0 || elapsed_ns < p.budget_ns;
}

// x^n by squaring (the core does not link libm); overflows to infinity.
static double power(double x, uint32_t n) {
  double r = 1.0;
  while (n != 0) {
    if (n & 1u) r *= x;
    x *= x;
    n >>= 1;
  }
  return r;
}

// base * multiplier^(retry-1), capped at max; |p| resolved.
static uint64_t backoff(const dc_retry_policy_t* p, uint32_t retry) {
  double d = (double)p->base_delay_ns * power(p->multiplier, retry - 1);
  if (!(d < (double)p->max_delay_ns)) return p->max_delay_ns;
  uint64_t n = (uint64_t)d;
  return n < p->max_delay_ns ? n : p->max_delay_ns;
}

static uint64_t resolved_delay(const dc_retry_policy_t* p, uint32_t retry,
                               uint64_t previous_ns, uint64_t* rng) {
  if (retry == 0) retry = 1;
  switch (p->jitter) {
    case DC_JITTER_NONE:
      return backoff(p, retry);
    case DC_JITTER_EQUAL: {
      uint64_t d = backoff(p, retry);
      uint64_t half = d / 2;
      return half + uniform(rng, 0, d - half);
    }
    case DC_JITTER_DECORRELATED: {
      uint64_t base = p->base_delay_ns;
      uint64_t from = DC_MAX(previous_ns, base);
      uint64_t hi = from > UINT64_MAX / 3 ? UINT64_MAX : from * 3;
      uint64_t d = uniform(rng, base, hi);
      return DC_MIN(d, p->max_delay_ns);
    }
    case DC_JITTER_FULL:
    default:
      return uniform(rng, 0, backoff(p, retry));
  }
}

uint64_t dc_retry_delay_ns(const dc_retry_policy_t* policy, uint32_t retry,
                           uint64_t previous_ns, uint64_t* rng_state) {
  dc_retry_policy_t p;
  dc_retry_policy_resolve(policy, &p);
  uint64_t scratch = p.seed;
  return resolved_delay(&p, retry, previous_ns,
                        rng_state ? rng_state : &scratch);
}

//===-- Loops -----------------------------------------------------------===//

const char* dc_retry_verdict_name(dc_retry_verdict_t verdict) {
  switch (verdict) {
    case DC_RETRY_AGAIN: return "AGAIN";
    case DC_RETRY_SUCCEEDED: return "SUCCEEDED";
    case DC_RETRY_NOT_RETRYABLE: return "NOT_RETRYABLE";
    case DC_RETRY_ATTEMPTS_EXHAUSTED: return "ATTEMPTS_EXHAUSTED";
    case DC_RETRY_BUDGET_EXHAUSTED: return "BUDGET_EXHAUSTED";
  }
  return "UNKNOWN";
}

void dc_retry_begin(const dc_retry_policy_t* policy,
                    dc_retry_state_t* state) {
  if (state == NULL) return;
  dc_retry_policy_t p;
  dc_retry_policy_resolve(policy, &p);
  state->attempts = 0;
  state->last_delay_ns = 0;
  state->total_delay_ns = 0;
  state->rng = sequence_seed(&p);
}

dc_retry_verdict_t dc_retry_next(const dc_retry_policy_t* policy,
                                 dc_retry_state_t* state, dc_status_t status,
                                 uint64_t elapsed_ns,
                                 uint64_t* out_delay_ns) {
  if (out_delay_ns != NULL) *out_delay_ns = 0;
  if (state == NULL) return DC_RETRY_NOT_RETRYABLE;
  dc_retry_policy_t p;
  dc_retry_policy_resolve(policy, &p);
  if (state->attempts < UINT32_MAX) state->attempts += 1;
  if (status == DC_OK) return DC_RETRY_SUCCEEDED;
  if (!dc_retry_is_retryable(&p, status)) return DC_RETRY_NOT_RETRYABLE;
  if (state->attempts >= p.max_attempts) return DC_RETRY_ATTEMPTS_EXHAUSTED;
  if (p.budget_ns != 0 && elapsed_ns >= p.budget_ns) {
    return DC_RETRY_BUDGET_EXHAUSTED;
  }
  uint64_t delay =
      resolved_delay(&p, state->attempts, state->last_delay_ns, &state->rng);
  if (p.budget_ns != 0 && delay > p.budget_ns - elapsed_ns) {
    return DC_RETRY_BUDGET_EXHAUSTED;
  }
  state->last_delay_ns = delay;
  state->total_delay_ns += delay;
  if (out_delay_ns != NULL) *out_delay_ns = delay;
  return DC_RETRY_AGAIN;
}

static void sleep_ns(uint64_t ns) {
  if (ns == 0) return;
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                        .tv_nsec = (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

const char* dc__format_duration(uint64_t ns, char* buf, size_t size) {
  unsigned long long n = (unsigned long long)ns;
  if (ns != 0 && ns % 1000000000u == 0) {
    snprintf(buf, size, "%llu s", n / 1000000000u);
  } else if (ns >= 1000000000u) {
    snprintf(buf, size, "%.3g s", (double)ns / 1e9);
  } else if (ns != 0 && ns % 1000000u == 0) {
    snprintf(buf, size, "%llu ms", n / 1000000u);
  } else if (ns >= 1000000u) {
    snprintf(buf, size, "%.3g ms", (double)ns / 1e6);
  } else if (ns != 0 && ns % 1000u == 0) {
    snprintf(buf, size, "%llu us", n / 1000u);
  } else {
    snprintf(buf, size, "%llu ns", n);
  }
  return buf;
}

dc_status_t dc_retry_call(const dc_retry_policy_t* policy, dc_retry_fn_t fn,
                          void* user_data, dc_retry_report_t* out_report) {
  static const char* name = "dc_retry_call";
  if (out_report != NULL) {
    *out_report = (dc_retry_report_t){0};
    out_report->verdict = DC_RETRY_NOT_RETRYABLE;
  }
  DC_REQUIRE_ARG(fn, name);
  if (policy != NULL) DC_RETURN_IF_ERROR(dc_retry_policy_check(policy));
  dc_retry_policy_t p;
  dc_retry_policy_resolve(policy, &p);
  dc_retry_state_t state;
  dc_retry_begin(&p, &state);
  uint64_t start = dc__now_ns();
  dc_status_t status;
  dc_retry_verdict_t verdict;
  for (;;) {
    status = fn(user_data);
    uint64_t delay = 0;
    verdict = dc_retry_next(&p, &state, status, dc__now_ns() - start, &delay);
    if (verdict != DC_RETRY_AGAIN) break;
    sleep_ns(delay);
  }
  uint64_t elapsed = dc__now_ns() - start;
  if (verdict == DC_RETRY_BUDGET_EXHAUSTED) {
    char budget[32];
    dc__format_duration(p.budget_ns, budget, sizeof(budget));
    dc_set_error(status,
                 "%s (gave up after %u attempt%s: the %s budget would be "
                 "exceeded)",
                 dc_last_error(), state.attempts,
                 state.attempts == 1 ? "" : "s", budget);
  } else if (verdict == DC_RETRY_ATTEMPTS_EXHAUSTED && state.attempts > 1) {
    dc_set_error(status, "%s (gave up after %u attempts)", dc_last_error(),
                 state.attempts);
  }
  if (out_report != NULL) {
    out_report->attempts = state.attempts;
    out_report->total_delay_ns = state.total_delay_ns;
    out_report->elapsed_ns = elapsed;
    out_report->last_status = status;
    out_report->verdict = verdict;
  }
  return status;
}

//===-- The device-wide default ------------------------------------------===//

dc_status_t dc_device_set_retry_policy(dc_device_t* device,
                                       const dc_retry_policy_t* policy) {
  DC_REQUIRE_ARG(device, "dc_device_set_retry_policy");
  if (policy != NULL) {
    dc_status_t st = dc_retry_policy_check(policy);
    if (st != DC_OK) {
      return DC_FAIL(st, "dc_device_set_retry_policy: %s", dc_last_error());
    }
  }
  return dc__resilience_set_device_policy(device, policy);
}

dc_status_t dc_device_retry_policy(const dc_device_t* device,
                                   dc_retry_policy_t* out_policy) {
  DC_REQUIRE_ARG(out_policy, "dc_device_retry_policy");
  *out_policy = (dc_retry_policy_t){0};
  DC_REQUIRE_ARG(device, "dc_device_retry_policy");
  dc__resilience_device_policy(device, out_policy);
  return DC_OK;
}

// profile.c: dc_profile(), timing a host function call by call.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dc/telemetry.h"
#include "internal.h"

// The engine does not link libm; Newton's method from above converges to
// the square root monotonically, so it stops when it stops decreasing.
static double square_root(double x) {
  if (!(x > 0.0)) return 0.0;
  double r = x > 1.0 ? x : 1.0;
  for (int i = 0; i < 2000; ++i) {
    double next = 0.5 * (r + x / r);
    if (next >= r) break;
    r = next;
  }
  return r;
}

static int by_value(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

// The |q| quantile of the |n| sorted |samples|, interpolated linearly
// between the two closest ranks (numpy's default).
static double quantile(const uint64_t* samples, size_t n, double q) {
  double position = q * (double)(n - 1);
  size_t below = (size_t)position;
  if (below + 1 >= n) return (double)samples[n - 1];
  double fraction = position - (double)below;
  return (double)samples[below] +
         fraction * (double)(samples[below + 1] - samples[below]);
}

static void summarize(uint64_t* samples, size_t n, double work_per_call,
                      dc_profile_result_t* out) {
  qsort(samples, n, sizeof(*samples), by_value);
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += (double)samples[i];
  double mean = sum / (double)n;
  double squares = 0.0;
  for (size_t i = 0; i < n; ++i) {
    double d = (double)samples[i] - mean;
    squares += d * d;
  }
  out->iterations = (uint32_t)n;
  out->mean_ns = mean;
  out->stddev_ns = n > 1 ? square_root(squares / (double)(n - 1)) : 0.0;
  out->min_ns = (double)samples[0];
  out->max_ns = (double)samples[n - 1];
  out->p50_ns = quantile(samples, n, 0.50);
  out->p95_ns = quantile(samples, n, 0.95);
  out->p99_ns = quantile(samples, n, 0.99);
  out->calls_per_second = mean > 0.0 ? 1e9 / mean : 0.0;
  out->work_per_second = work_per_call * out->calls_per_second;
}

dc_status_t dc_profile(dc_profile_fn_t fn, void* user_data,
                       const dc_profile_params_t* params,
                       dc_profile_result_t* out_result) {
  static const char* name = "dc_profile";
  DC_REQUIRE_ARG(out_result, name);
  memset(out_result, 0, sizeof(*out_result));
  DC_REQUIRE_ARG(fn, name);
  DC_REQUIRE_ARG(params, name);
  if (params->iterations == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: iterations is 0 (at least one call must be timed)",
                   name);
  }
  if (!(params->work_per_call >= 0.0) || isinf(params->work_per_call)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: work_per_call is %g (must be finite and >= 0)", name,
                   params->work_per_call);
  }
  size_t n = params->iterations;
  dc_allocator_t allocator = dc_allocator_system();
  uint64_t* samples = dc_allocator_malloc(allocator, n * sizeof(*samples));
  if (samples == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "%s: cannot allocate room for %zu samples", name, n);
  }
  dc_status_t status = DC_OK;
  for (uint32_t i = 0; i < params->warmup && status == DC_OK; ++i) {
    status = fn(user_data);
  }
  for (size_t i = 0; i < n && status == DC_OK; ++i) {
    uint64_t start = dc__now_ns();
    status = fn(user_data);
    samples[i] = dc__now_ns() - start;
  }
  // A failure of |fn| returns as it is, with the message |fn| gave it.
  if (status == DC_OK) {
    summarize(samples, n, params->work_per_call, out_result);
  }
  dc_allocator_free(allocator, samples, n * sizeof(*samples));
  return status;
}

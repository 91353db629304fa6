// check_exact_rounding.c: the straight-line double arithmetic by which the
// CUDA prelude divides a float by a constant (dc__div_by, written where
// the generator meets `x / c`: cgen_expr.c, reciprocal_divisor) gives the
// correctly rounded quotient, checked against the host's IEEE division,
// bit for bit.
//
// Scaling x by a power of two scales every step exactly while the
// quotient is a normal float, so every float of one binade stands for
// every x with such a quotient. Where the quotient is subnormal or
// overflows, scaling does not carry over: every subnormal x, the top
// binade, every x whose quotient is an exact subnormal tie (the case the
// correcting fma is there for) and four million random x per divisor in
// the rest of those ranges are checked. The divisors are chosen to be
// awkward: inexact reciprocals, ones with exact subnormal ties (6, 98:
// for 98 the product x r alone, rounded to float, is wrong for 19,950
// subnormals), a subnormal and a huge divisor. The device-generic
// kernel_lang suite then checks the generated code on each device against
// the same division.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdint.h>

#include "check_util.h"

// dc__div_by of lower_cuda_prelude.h, in C.
static float div_by(float x, double r, double c) {
  double q = (double)x * r;
  double fixed = fma(fma(-q, c, (double)x), r, q);
  return (float)(isfinite(q) && q != 0.0 ? fixed : q);
}

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

static bool same(float got, float want) {
  return bits_of(got) == bits_of(want) || (isnan(got) && isnan(want));
}

// Checks x = float_of(first + i) for i < count, and their negations,
// divided by |c|; returns how many differ from x / c (bit for bit, any
// NaN matching any NaN), printing the first.
static uint64_t mismatches(float c, uint32_t first, uint32_t count) {
  const double r = 1.0 / (double)c;
  uint64_t bad = 0;
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t sign = 0; sign < 2; ++sign) {
      float x = float_of((first + i) | sign << 31);
      volatile float want = x / c;  // the host's IEEE division
      float got = div_by(x, r, c);
      if (same(got, want)) continue;
      if (bad++ == 0) {
        printf("%a / %a: got %a, the division gives %a\n", (double)x,
               (double)c, (double)got, (double)want);
      }
    }
  }
  return bad;
}

// The same for |count| random x with bit patterns in [lo, hi).
static uint64_t random_mismatches(float c, uint32_t lo, uint32_t hi,
                                  uint32_t count) {
  uint64_t bad = 0, state = 0x9E3779B97F4A7C15ull ^ bits_of(c);
  for (uint32_t i = 0; i < count && lo < hi; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    bad += mismatches(c, lo + (uint32_t)((state >> 32) % (hi - lo)), 1);
  }
  return bad;
}

static const float kDivisors[] = {3.0f,       7.0f,        10.0f, 0.1f,
                                  6.0f,       98.0f,       -5.0f, 1234.5678f,
                                  0x1.8p-140f, 3e38f};

START_TEST(test_every_significand_of_a_binade) {
  float c = kDivisors[_i];
  ck_assert_uint_eq(mismatches(c, bits_of(1.0f), 1u << 23), 0);
}
END_TEST

START_TEST(test_every_subnormal_and_zero) {
  float c = kDivisors[_i];
  ck_assert_uint_eq(mismatches(c, 0, 1u << 23), 0);
}
END_TEST

START_TEST(test_the_top_binade_and_the_special_values) {
  float c = kDivisors[_i];
  // From 2^127 up to FLT_MAX, infinity and every NaN payload's start.
  ck_assert_uint_eq(mismatches(c, bits_of(0x1p127f), (1u << 23) + 2), 0);
  ck_assert_uint_eq(mismatches(c, bits_of(0x1p-126f), 1024), 0);
}
END_TEST

START_TEST(test_subnormal_quotients_of_normal_numbers) {
  float c = kDivisors[_i];
  double m = fabs((double)c);
  // Every exact tie: x = M 2^-150 c for odd M, where x is a float.
  uint64_t bad = 0;
  for (uint32_t odd = 1; odd < 1u << 24; odd += 2) {
    double x = (double)odd * 0x1p-150 * m;
    if ((double)(float)x == x) bad += mismatches(c, bits_of((float)x), 1);
  }
  ck_assert_uint_eq(bad, 0);
  // Random x from 2^-126 to where the quotient reaches 2^-125.
  double top = fmin(m * 0x1p-125, 0x1p127);
  if (top > 0x1p-126) {
    ck_assert_uint_eq(random_mismatches(c, bits_of(0x1p-126f),
                                        bits_of((float)top), 1u << 22),
                      0);
  }
}
END_TEST

START_TEST(test_quotients_near_overflow) {
  float c = kDivisors[_i];
  double low = fabs((double)c) * 0x1p126;  // from 2^126 below the threshold
  if (low < 0x1p127) {
    ck_assert_uint_eq(random_mismatches(c, bits_of((float)low),
                                        bits_of(0x1p127f), 1u << 22),
                      0);
  }
}
END_TEST

static Suite* exact_rounding_suite(void) {
  Suite* s = suite_create("exact_rounding");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  int n = (int)(sizeof(kDivisors) / sizeof(kDivisors[0]));
  tcase_add_loop_test(tc, test_every_significand_of_a_binade, 0, n);
  tcase_add_loop_test(tc, test_every_subnormal_and_zero, 0, n);
  tcase_add_loop_test(tc, test_the_top_binade_and_the_special_values, 0, n);
  tcase_add_loop_test(tc, test_subnormal_quotients_of_normal_numbers, 0, n);
  tcase_add_loop_test(tc, test_quotients_near_overflow, 0, n);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(exact_rounding_suite)

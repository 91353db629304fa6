// check_exact_rounding.c: the straight-line double arithmetic by which the
// CUDA prelude divides a float by a constant (dc__div_by, written where
// the generator meets `x / c`: cgen_expr.c, reciprocal_divisor) gives the
// correctly rounded quotient, checked against the host's IEEE division,
// bit for bit.
//
// Scaling x by a power of two scales every step exactly while nothing is
// subnormal, so a binade, every subnormal and the top binade cover every
// float. The divisors are chosen to be awkward: inexact reciprocals, ones
// whose quotients include exact subnormal ties (6, 98: for 98 the product
// x r alone, rounded to float, is wrong for 19,950 subnormals), a
// subnormal and a huge divisor. The device-generic kernel_lang suite then
// checks the generated code on each device against the same division.
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

static Suite* exact_rounding_suite(void) {
  Suite* s = suite_create("exact_rounding");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  int n = (int)(sizeof(kDivisors) / sizeof(kDivisors[0]));
  tcase_add_loop_test(tc, test_every_significand_of_a_binade, 0, n);
  tcase_add_loop_test(tc, test_every_subnormal_and_zero, 0, n);
  tcase_add_loop_test(tc, test_the_top_binade_and_the_special_values, 0, n);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(exact_rounding_suite)

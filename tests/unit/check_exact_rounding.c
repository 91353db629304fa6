// check_exact_rounding.c: the straight-line arithmetic by which the CUDA
// prelude divides a float by a constant (dc__div_by, in double, written
// where the generator meets `x / c`: cgen_expr.c, reciprocal_divisor) and
// takes a float's square root (dc__sqrt_rn, in float) gives the correctly
// rounded result, checked against the host's IEEE division and sqrtf, bit
// for bit.
//
// Scaling x by a power of two (of four for sqrt) scales every step
// exactly while nothing is subnormal, so a binade (two for sqrt), every
// subnormal and the top binade cover every float. The divisors are chosen
// to be awkward: inexact reciprocals, ones whose quotients include exact
// subnormal ties (6, 98: for 98 the product x r alone, rounded to float,
// is wrong for 19,950 subnormals), a subnormal and a huge divisor. The
// square root's start, rsqrtf (2 ulp), is stood in for by the exact
// reciprocal root off by -2^-21, 0 and +2^-21 of itself. The
// device-generic kernel_lang suite then checks the generated code on each
// device against the same operations.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdbool.h>
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

// dc__sqrt_rn of lower_cuda_prelude.h, in C, with rsqrtf's answer off by
// |error| of itself.
static float sqrt_rn(float x, double error) {
  bool small = x < 0x1p-100f;
  float xs = small ? x * 0x1p64f : x;
  float y = (float)(1.0 / sqrt((double)xs) * (1.0 + error));
  float s = xs * y;
  s = fmaf(fmaf(-s, s, xs), 0.5f * y, s);
  float above = float_of(bits_of(s) + 1);
  float below = float_of(bits_of(s) - 1);
  s = fmaf(-s, above, xs) > 0.0f    ? above
      : fmaf(-s, below, xs) <= 0.0f ? below
                                    : s;
  s *= small ? 0x1p-32f : 1.0f;
  return x > 0.0f && x < INFINITY ? s
         : x >= 0.0f              ? x
                                  : NAN;
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

// The same for sqrt of float_of(first + i) and its negation, rsqrtf off
// by |error|.
static uint64_t sqrt_mismatches(double error, uint32_t first,
                                uint32_t count) {
  uint64_t bad = 0;
  uint32_t signs = first == 0 ? 2 : 1;  // negative numbers: NaN (or -0)
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t sign = 0; sign < signs; ++sign) {
      float x = float_of((first + i) | sign << 31);
      float want = sqrtf(x), got = sqrt_rn(x, error);
      if (same(got, want)) continue;
      if (bad++ == 0) {
        printf("sqrt(%a), rsqrtf off by %g: got %a, sqrtf gives %a\n",
               (double)x, error, (double)got, (double)want);
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

static const double kStartErrors[] = {-0x1p-21, 0.0, 0x1p-21};

START_TEST(test_sqrt_of_every_float) {
  double error = kStartErrors[_i];
  ck_assert_uint_eq(sqrt_mismatches(error, bits_of(1.0f), 1u << 24), 0);
  ck_assert_uint_eq(sqrt_mismatches(error, 0, 1u << 23), 0);
  // Either side of where the root starts scaling x.
  ck_assert_uint_eq(sqrt_mismatches(error, bits_of(0x1p-101f), 1u << 24), 0);
  ck_assert_uint_eq(sqrt_mismatches(error, bits_of(0x1p127f), (1u << 23) + 2),
                    0);
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
  tcase_add_loop_test(tc, test_sqrt_of_every_float, 0,
                      (int)(sizeof(kStartErrors) / sizeof(kStartErrors[0])));
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(exact_rounding_suite)

// prelude_test.c: checks every type and built-in of the CPU kernel prelude
// (core/src/kernel/lower_c_prelude.h) with scalars and all vector widths.
//
// Built by tests/prelude/CMakeLists.txt, or standalone from the top:
//   gcc -std=gnu11 -O3 -march=native -Wall -Wextra -I core/src/kernel
//       tests/prelude/prelude_test.c -lm -lpthread && ./a.out
// The CMake build compiles it several times with PRELUDE_TEST_PART set to
// 1..5, each part holding some of the tests (so they compile in parallel:
// all of them in one translation unit take a minute or more at -O3);
// without PRELUDE_TEST_PART every part is in one program.
// Exits 0 when every check passes, 1 otherwise. Built with -ffast-math
// (__FAST_MATH__), it skips what fast math gives up: NaNs, infinities,
// signed zeros and exact results of floating-point arithmetic.
//
// The checks: values of each scalar form against C's builtins or known
// results, each vector lane against the scalar form applied to that lane,
// and the result types (_Static_assert on __builtin_types_compatible_p).
// SPDX-License-Identifier: MIT

// libc headers come first: the prelude defines function-like macros named
// like C library functions.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DC_NEED_ALL 1
#include "lower_c_prelude.h"

#ifndef PRELUDE_TEST_PART
#define PRELUDE_TEST_PART 0
#endif
#define PART(n) (PRELUDE_TEST_PART == 0 || PRELUDE_TEST_PART == (n))
void prelude_test_part1(void);
void prelude_test_part2(void);
void prelude_test_part3(void);
void prelude_test_part4(void);
void prelude_test_part5(void);
void prelude_test_part6(void);

//===-- Harness ---------------------------------------------------------------===//

extern int g_failures, g_checks;
#if PART(1)
int g_failures, g_checks;
#endif

static inline void check_at(int ok, int line, const char* what) {
  g_checks++;
  if (ok) return;
  g_failures++;
  if (g_failures <= 100) fprintf(stderr, "prelude_test.c:%d: FAILED: %s\n", line, what);
}
#define CHECK(c) check_at(!!(c), __LINE__, #c)
// CHECK_AT: a check written inside a helper macro, reported at its line.
#define CHECK_AT(c, line, what) check_at(!!(c), line, what)
#define TYPE_IS(e, T)                                                        \
  _Static_assert(__builtin_types_compatible_p(__typeof__(e), T),            \
                 "type of " #e " is not " #T)
#define LANES(v) (sizeof(v) / sizeof((v)[0]))
// Each test is a function of its own, and the loops over reference values
// stay loops: inlined and unrolled, this file takes minutes to compile.
#define TEST_FN static __attribute__((noinline)) void
#define NO_UNROLL _Pragma("GCC unroll 1")

#ifdef __FAST_MATH__
#define FAST 1
#else
#define FAST 0
#endif

static inline uint32_t bits_f(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}
static inline uint64_t bits_d(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}
static inline int nan_f(float f) { return (bits_f(f) & 0x7fffffffu) > 0x7f800000u; }
static inline int nan_d(double d) {
  return (bits_d(d) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
}
// Distance in units in the last place (huge if exactly one is a NaN).
static inline int64_t ulps_f(float a, float b) {
  if (nan_f(a) || nan_f(b)) return nan_f(a) && nan_f(b) ? 0 : INT64_MAX;
  int64_t ia = (int32_t)bits_f(a), ib = (int32_t)bits_f(b);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? ia - ib : ib - ia;
}
static inline int64_t ulps_d(double a, double b) {
  if (nan_d(a) || nan_d(b)) return nan_d(a) && nan_d(b) ? 0 : INT64_MAX;
  __int128 ia = (int64_t)bits_d(a), ib = (int64_t)bits_d(b);
  if (ia < 0) ia = (__int128)INT64_MIN - ia;
  if (ib < 0) ib = (__int128)INT64_MIN - ib;
  __int128 d = ia > ib ? ia - ib : ib - ia;
  return d > INT64_MAX ? INT64_MAX : (int64_t)d;
}
// SAME: identical results (NaNs equal each other, zeros differ by sign).
// Under fast math, lanes may be computed by other instruction sequences
// than scalars, so SAME allows a few ulps and ignores the sign of zero.
static inline int same_f(float a, float b) {
  return FAST ? ulps_f(a, b) <= 4 || (a == 0 && b == 0) : ulps_f(a, b) == 0 && bits_f(a) == bits_f(b) ? 1 : nan_f(a) && nan_f(b);
}
static inline int same_d(double a, double b) {
  return FAST ? ulps_d(a, b) <= 4 || (a == 0 && b == 0) : ulps_d(a, b) == 0 && bits_d(a) == bits_d(b) ? 1 : nan_d(a) && nan_d(b);
}
#define SAME(a, b)                                                          \
  _Generic((a), float: same_f((float)(a), (float)(b)),                      \
           double: same_d((double)(a), (double)(b)),                        \
           default: (long long)(a) == (long long)(b))
// NEAR: within n ulps (plus what fast math adds).
#define NEAR(a, b, n)                                                       \
  _Generic((a), float: ulps_f((float)(a), (float)(b)) <= (n) + 8 * FAST,    \
           default: ulps_d((double)(a), (double)(b)) <= (n) + 8 * FAST)
// HIDE(v): the optimizer forgets v's value, so that the scalar references
// run at run time like the lanes they are compared with (gcc folds libm
// calls on constants with MPFR, which may differ from libm by an ulp).
#define HIDE(v) __asm__ volatile("" : "+m"(v))
// Exact checks that fast math may not keep (signed zeros, NaN, inf).
#define STRICT(c) (FAST || (c))

#if PART(1)
//===-- Types and constants --------------------------------------------------===//

#define ALL_SCALARS(X)                                                      \
  X(dc_char, char) X(uchar, uchar) X(short, short) X(ushort, ushort)        \
  X(int, int) X(uint, uint) X(long, long) X(ulong, ulong) X(float, float)   \
  X(double, double)

TEST_FN test_types(void) {
  CHECK(sizeof(uchar) == 1 && sizeof(ushort) == 2 && sizeof(uint) == 4 && sizeof(ulong) == 8);
  CHECK((dc_char)-1 < 0 && (uchar)-1 == 255 && (ulong)-1 > 0 && sizeof(long) == 8);
#define SIZES(E, P)                                                         \
  CHECK(sizeof(P##2) == 2 * sizeof(E) && sizeof(P##4) == 4 * sizeof(E) &&   \
        sizeof(P##8) == 8 * sizeof(E) && sizeof(P##16) == 16 * sizeof(E));  \
  TYPE_IS(((P##2){0})[0], E);                                               \
  TYPE_IS(((P##16){0})[15], E);
  ALL_SCALARS(SIZES)
  char4 c = {-1, 2, -3, 4};
  CHECK(c[0] < 0 && c[2] == -3);
  float4 f = {1, 2, 3, 4};
  int4 m = f < 2.5f;
  CHECK(m[0] == -1 && m[1] == -1 && m[2] == 0 && m[3] == 0);
}

TEST_FN test_constants(void) {
  CHECK(CHAR_BIT == 8 && SCHAR_MAX == 127 && SCHAR_MIN == -128 && CHAR_MAX == 127 && CHAR_MIN == -128);
  CHECK(UCHAR_MAX == 255 && SHRT_MAX == 32767 && SHRT_MIN == -32768 && USHRT_MAX == 65535);
  CHECK(INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1 && UINT_MAX == 4294967295u);
  CHECK(LONG_MAX == 9223372036854775807L && LONG_MIN == -LONG_MAX - 1 && ULONG_MAX == 18446744073709551615ul);
  CHECK(FLT_DIG == 6 && FLT_MANT_DIG == 24 && FLT_MAX_10_EXP == 38 && FLT_MAX_EXP == 128 &&
        FLT_MIN_10_EXP == -37 && FLT_MIN_EXP == -125 && FLT_RADIX == 2);
  CHECK(DBL_DIG == 15 && DBL_MANT_DIG == 53 && DBL_MAX_10_EXP == 308 && DBL_MAX_EXP == 1024 &&
        DBL_MIN_10_EXP == -307 && DBL_MIN_EXP == -1021);
  CHECK(bits_f(FLT_MAX) == 0x7f7fffffu && bits_f(FLT_MIN) == 0x00800000u && bits_f(FLT_EPSILON) == 0x34000000u);
  CHECK(bits_d(DBL_MAX) == 0x7fefffffffffffffull && bits_d(DBL_MIN) == 0x0010000000000000ull &&
        bits_d(DBL_EPSILON) == 0x3cb0000000000000ull);
  CHECK(bits_f(MAXFLOAT) == bits_f(FLT_MAX));
  CHECK(bits_f(INFINITY) == 0x7f800000u && bits_f(HUGE_VALF) == 0x7f800000u);
  CHECK(bits_d(HUGE_VAL) == 0x7ff0000000000000ull && nan_f(NAN));
  CHECK(FP_ILOGB0 == INT_MIN && FP_ILOGBNAN == INT_MAX);
  CHECK(M_PI_F == (float)M_PI && M_E_F == (float)M_E && M_LOG2E_F == (float)M_LOG2E &&
        M_LOG10E_F == (float)M_LOG10E && M_LN2_F == (float)M_LN2 && M_LN10_F == (float)M_LN10 &&
        M_PI_2_F == (float)M_PI_2 && M_PI_4_F == (float)M_PI_4 && M_1_PI_F == (float)M_1_PI &&
        M_2_PI_F == (float)M_2_PI && M_2_SQRTPI_F == (float)M_2_SQRTPI &&
        M_SQRT2_F == (float)M_SQRT2 && M_SQRT1_2_F == (float)M_SQRT1_2);
  CHECK(NEAR(M_PI, 3.14159265358979323846, 0) && NEAR(M_E * M_LOG2E, M_E / M_LN2, 2) &&
        NEAR(M_SQRT2 * M_SQRT1_2, 1.0, 1) && NEAR(M_PI_2 * 2, M_PI, 0) && NEAR(M_PI_4 * 4, M_PI, 0) &&
        NEAR(M_1_PI * M_PI, 1.0, 1) && NEAR(M_2_PI * M_PI, 2.0, 1) &&
        NEAR(M_2_SQRTPI * M_2_SQRTPI * M_PI, 4.0, 2) && NEAR(M_LOG10E * M_LN10, 1.0, 1));
}

//===-- Work-item functions, fences, vector construction ----------------------===//

static inline size_t wi_all(dc__wi_t* _wi, int d) {
  // Every work-item function at once, with a run-time dimension.
  return get_global_id(d) * 1000000 + get_local_id(d) * 10000 + get_group_id(d) * 1000 +
         get_global_size(d) * 100 + get_local_size(d) * 10 + get_num_groups(d) + get_global_offset(d);
}

TEST_FN test_workitem(void) {
  dc_c_launch_t launch = {.work_dim = 2,
                         .global_size = {64, 6, 1},
                         .global_offset = {5, 7, 0},
                         .local_size = {16, 3, 1},
                         .num_groups = {4, 2, 1}};
  dc__wi_t wi = {.launch = &launch, .group = {2, 1, 0}, .local = {3, 2, 0}};
  dc__wi_t* _wi = &wi;
  CHECK(get_work_dim() == 2);
  TYPE_IS(get_work_dim(), uint);
  TYPE_IS(get_global_id(0), size_t);
  CHECK(get_global_id(0) == 5 + 2 * 16 + 3 && get_global_id(1) == 7 + 1 * 3 + 2 && get_global_id(2) == 0);
  CHECK(get_local_id(0) == 3 && get_local_id(1) == 2 && get_local_id(2) == 0);
  CHECK(get_group_id(0) == 2 && get_group_id(1) == 1 && get_group_id(2) == 0);
  CHECK(get_global_size(0) == 64 && get_global_size(1) == 6 && get_global_size(2) == 1);
  CHECK(get_local_size(0) == 16 && get_local_size(1) == 3 && get_local_size(2) == 1);
  CHECK(get_num_groups(0) == 4 && get_num_groups(1) == 2 && get_num_groups(2) == 1);
  CHECK(get_global_offset(0) == 5 && get_global_offset(1) == 7 && get_global_offset(2) == 0);
  // Out of range: 0 for ids and offsets, 1 for sizes.
  for (int d = 3; d < 6; d++) CHECK(wi_all(_wi, d) == 0 + 0 + 0 + 100 + 10 + 1 + 0);
  CHECK(wi_all(_wi, -1) == 111 && get_global_id(-1) == 0 && get_local_size(7u) == 1);
  int d = 0;
  CHECK(get_global_id(d++) == 40 && d == 1);  // the dimension is evaluated once
  mem_fence(CLK_LOCAL_MEM_FENCE);
  read_mem_fence(CLK_GLOBAL_MEM_FENCE);
  write_mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  CHECK(CLK_LOCAL_MEM_FENCE == 1 && CLK_GLOBAL_MEM_FENCE == 2);
}

static int g_calls __attribute__((unused));
static inline float4 counted(float4 v) {
  g_calls++;
  return v;
}

TEST_FN test_vectors(void) {
  float4 v = DC_VEC(float4, 1, 2, 3, 4);
  TYPE_IS(DC_VEC(float4, 1, 2, 3, 4), float4);
  CHECK(v[0] == 1 && v[3] == 4);
  int16 w = DC_VEC(int16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  CHECK(w[15] == 15);
#define SPLAT_CHECK(E, P)                                                   \
  {                                                                         \
    P##16 s = DC_SPLAT(P##16, 3);                                           \
    P##2 t = DC_SPLAT(P##2, (E)5);                                          \
    TYPE_IS(DC_SPLAT(P##8, 1), P##8);                                       \
    int ok = t[0] == 5 && t[1] == 5;                                        \
    for (unsigned i = 0; i < 16; i++) ok &= s[i] == 3;                      \
    CHECK_AT(ok, __LINE__, "DC_SPLAT(" #P ")");                             \
  }
  ALL_SCALARS(SPLAT_CHECK)
  float4 nz = DC_SPLAT(float4, -0.0f);
  CHECK(STRICT(bits_f(nz[2]) == 0x80000000u));
  uchar4 trunc = DC_SPLAT(uchar4, 257);
  CHECK(trunc[1] == 1);
  float4 sp = DC_SPLAT(float4, 2.5);  // converted to the element type
  CHECK(sp[3] == 2.5f);

  g_calls = 0;
  float2 yx = DC_SWIZZLE(counted(v), 1, 0);
  CHECK(g_calls == 1 && yx[0] == 2 && yx[1] == 1);
  float z = DC_SWIZZLE(v, 2);
  TYPE_IS(DC_SWIZZLE(v, 2), float);
  TYPE_IS(DC_SWIZZLE(v, 3, 2, 1, 0), float4);
  TYPE_IS(DC_SWIZZLE(v, 0, 0), float2);
  TYPE_IS(DC_SWIZZLE(v, 0, 1, 2, 3, 0, 1, 2, 3), float8);
  TYPE_IS(DC_SWIZZLE(w, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), int16);
  int16 rev = DC_SWIZZLE(w, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  CHECK(z == 3 && rev[0] == 15 && rev[15] == 0);
  float4 wz = DC_SWIZZLE(v, 3, 3, 2, 0);
  CHECK(wz[0] == 4 && wz[1] == 4 && wz[2] == 3 && wz[3] == 1);
  float8 dup = DC_SWIZZLE(v, 0, 1, 2, 3, 3, 2, 1, 0);
  CHECK(dup[4] == 4 && dup[7] == 1);
  CHECK(sqrt(DC_SWIZZLE(v, 3, 3))[1] == 2);  // a swizzle dispatches as float2

  // lo, hi, even, odd: halves, a scalar for 2-lane vectors.
  TYPE_IS(DC_LO(v), float2);
  TYPE_IS(DC_HI(w), int8);
  TYPE_IS(DC_EVEN(DC_VEC(double2, 1, 2)), double);
  TYPE_IS(DC_ODD(DC_VEC(char16, 0)), char8);
  float2 lo = DC_LO(v), hi = DC_HI(v), ev = DC_EVEN(v), od = DC_ODD(v);
  CHECK(lo[0] == 1 && lo[1] == 2 && hi[0] == 3 && hi[1] == 4);
  CHECK(ev[0] == 1 && ev[1] == 3 && od[0] == 2 && od[1] == 4);
  int8 wlo = DC_LO(w), whi = DC_HI(w), wev = DC_EVEN(w), wod = DC_ODD(w);
  int ok = 1;
  for (int i = 0; i < 8; i++) ok &= wlo[i] == i && whi[i] == 8 + i && wev[i] == 2 * i && wod[i] == 2 * i + 1;
  CHECK(ok);
  CHECK(DC_LO(lo) == 1 && DC_HI(lo) == 2 && DC_EVEN(hi) == 3 && DC_ODD(hi) == 4);
  g_calls = 0;
  CHECK(DC_HI(counted(v))[1] == 4 && g_calls == 1);
}

#endif  // PART(1)

//===-- Math ------------------------------------------------------------------===//

// Functions of one argument, with an input range for the lane checks.
#define MATH_UNARY(X)                                                        \
  X(acos, -0.9, 0.9) X(acosh, 1.1, 9) X(acospi, -0.9, 0.9) X(asin, -0.9, 0.9) \
  X(asinh, -3, 3) X(asinpi, -0.9, 0.9) X(atan, -3, 3) X(atanh, -0.9, 0.9)   \
  X(atanpi, -3, 3) X(cbrt, -8, 8) X(ceil, -3, 3) X(cos, -3, 3)              \
  X(cosh, -3, 3) X(cospi, -3, 3) X(erfc, -2, 2) X(erf, -2, 2) X(exp, -3, 3)  \
  X(exp2, -3, 3) X(exp10, -3, 3) X(expm1, -3, 3) X(fabs, -3, 3)             \
  X(floor, -3, 3) X(lgamma, 0.5, 9) X(log, 0.1, 9) X(log2, 0.1, 9)          \
  X(log10, 0.1, 9) X(log1p, -0.5, 9) X(logb, 0.1, 99) X(rint, -3, 3)        \
  X(round, -3, 3) X(rsqrt, 0.1, 9) X(sin, -3, 3) X(sinh, -3, 3)             \
  X(sinpi, -3, 3) X(sqrt, 0.1, 9) X(tan, -1, 1) X(tanh, -3, 3)              \
  X(tanpi, -0.4, 0.4) X(tgamma, 0.5, 5) X(trunc, -3, 3)                     \
  X(degrees, -3, 3) X(radians, -200, 200) X(sign, -3, 3)                    \
  X(native_cos, -3, 3) X(native_exp, -3, 3) X(native_exp2, -3, 3)          \
  X(native_exp10, -3, 3) X(native_log, 0.1, 9) X(native_log2, 0.1, 9)      \
  X(native_log10, 0.1, 9) X(native_recip, 0.1, 9) X(native_rsqrt, 0.1, 9)  \
  X(native_sin, -3, 3) X(native_sqrt, 0.1, 9) X(native_tan, -1, 1)         \
  X(half_cos, -3, 3) X(half_exp, -3, 3) X(half_exp2, -3, 3)                \
  X(half_exp10, -3, 3) X(half_log, 0.1, 9) X(half_log2, 0.1, 9)            \
  X(half_log10, 0.1, 9) X(half_recip, 0.1, 9) X(half_rsqrt, 0.1, 9)        \
  X(half_sin, -3, 3) X(half_sqrt, 0.1, 9) X(half_tan, -1, 1)
// Those that are C's functions of the same name.
#define C_UNARY(X)                                                          \
  X(acos, 0.3) X(acosh, 2.5) X(asin, 0.3) X(asinh, 0.7) X(atan, 0.7)        \
  X(atanh, 0.3) X(cbrt, 5) X(ceil, 1.5) X(cos, 0.7) X(cosh, 0.7) X(erfc, 0.3) \
  X(erf, 0.3) X(exp, 0.7) X(exp2, 0.7) X(expm1, 0.7) X(fabs, -1.5)          \
  X(floor, -1.5) X(lgamma, 2.5) X(log, 2.5) X(log2, 2.5) X(log10, 2.5)     \
  X(log1p, 2.5) X(logb, 40) X(rint, 2.5) X(round, -2.5) X(sin, 0.7)         \
  X(sinh, 0.7) X(sqrt, 2.5) X(tan, 0.7) X(tanh, 0.7) X(tgamma, 2.5)         \
  X(trunc, -2.5)
// Two floating arguments (x in [0.5, 4], y in [0.5, 3]).
#define MATH_BINARY(X)                                                       \
  X(atan2) X(atan2pi) X(copysign) X(fdim) X(fmax) X(fmin) X(fmod) X(hypot)  \
  X(maxmag) X(minmag) X(nextafter) X(pow) X(powr) X(remainder) X(max)       \
  X(min) X(native_divide) X(half_divide) X(native_powr) X(half_powr)
#define C_BINARY(X)                                                         \
  X(atan2) X(copysign) X(fdim) X(fmax) X(fmin) X(fmod) X(hypot)             \
  X(nextafter) X(pow) X(remainder)
#define MATH_TERNARY(X) X(fma) X(mad) X(mix) X(clamp)

#define FVECS(X, ...)                                                        \
  X(float2, float, __VA_ARGS__) X(float4, float, __VA_ARGS__)               \
  X(float8, float, __VA_ARGS__) X(float16, float, __VA_ARGS__)              \
  X(double2, double, __VA_ARGS__) X(double4, double, __VA_ARGS__)           \
  X(double8, double, __VA_ARGS__) X(double16, double, __VA_ARGS__)

// Lane i of an N-lane test vector over [lo, hi].
#define RAMP(T, E, lo, hi)                                                  \
  ({                                                                        \
    T r_;                                                                   \
    for (unsigned i_ = 0; i_ < LANES(r_); i_++)                             \
      r_[i_] = (E)((lo) + ((hi) - (lo)) * (i_ + 0.5) / LANES(r_));          \
    HIDE(r_);                                                               \
    r_;                                                                     \
  })

#if PART(2)
#define UNARY_LANES(T, E, F, lo, hi)                                        \
  {                                                                         \
    T x = RAMP(T, E, lo, hi);                                               \
    T r = F(x);                                                             \
    TYPE_IS(F(x), T);                                                       \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) ok &= SAME(r[i], F(x[i]));      \
    CHECK_AT(ok, __LINE__, #F "(" #T ") lanes");                            \
  }
#define UNARY_TEST(F, lo, hi)                                               \
  TEST_FN test_unary_##F(void) {                                        \
    TYPE_IS(F(1.0f), float);                                                \
    TYPE_IS(F(1.0), double);                                                \
    TYPE_IS(F(1), double);                                                  \
    float xf = (float)((lo) + (hi)) / 3;                                    \
    CHECK_AT(NEAR(F(xf), (float)F((double)xf), 2), __LINE__, #F " float vs double"); \
    CHECK_AT(SAME(F((int)(hi)), F((double)(int)(hi))), __LINE__, #F " int"); \
    FVECS(UNARY_LANES, F, lo, hi)                                           \
  }
MATH_UNARY(UNARY_TEST)

#define BINARY_LANES(T, E, F)                                               \
  {                                                                         \
    T x = RAMP(T, E, 0.5, 4), y = RAMP(T, E, 3, 0.5);                       \
    E s = (E)1.7;                                                           \
    T r = F(x, y), rs = F(x, s);                                            \
    TYPE_IS(F(x, y), T);                                                    \
    TYPE_IS(F(x, s), T);                                                    \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++)                                 \
      ok &= SAME(r[i], F(x[i], y[i])) && SAME(rs[i], F(x[i], s));           \
    CHECK_AT(ok, __LINE__, #F "(" #T ") lanes");                            \
  }
#define BINARY_TEST(F)                                                      \
  TEST_FN test_binary_##F(void) {                                       \
    TYPE_IS(F(1.0f, 2.0f), float);                                          \
    TYPE_IS(F(1.0, 2.0), double);                                           \
    CHECK_AT(NEAR(F(1.25f, 0.75f), (float)F(1.25, 0.75), 2), __LINE__, #F " float vs double"); \
    FVECS(BINARY_LANES, F)                                                  \
  }
MATH_BINARY(BINARY_TEST)

#define TERNARY_LANES(T, E, F)                                              \
  {                                                                         \
    T x = RAMP(T, E, -1, 2), y = RAMP(T, E, 0.5, 3), z = RAMP(T, E, 1, 3);  \
    T r = F(x, y, z), rs = F(x, (E)0.25, (E)1.5);                           \
    TYPE_IS(F(x, y, z), T);                                                 \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++)                                 \
      ok &= SAME(r[i], F(x[i], y[i], z[i])) && SAME(rs[i], F(x[i], (E)0.25, (E)1.5)); \
    CHECK_AT(ok, __LINE__, #F "(" #T ") lanes");                            \
  }
#define TERNARY_TEST(F)                                                     \
  TEST_FN test_ternary_##F(void) {                                      \
    TYPE_IS(F(1.0f, 2.0f, 3.0f), float);                                    \
    TYPE_IS(F(1.0, 2.0, 3.0), double);                                      \
    FVECS(TERNARY_LANES, F)                                                 \
  }
MATH_TERNARY(TERNARY_TEST)

// ldexp, pown, rootn: an int operand, vector or scalar.
#define INTARG_LANES(T, E, F)                                               \
  {                                                                         \
    T x = RAMP(T, E, 0.5, 4);                                               \
    __typeof__(ilogb(x)) n;                                                 \
    for (unsigned i = 0; i < LANES(n); i++) n[i] = (int)i % 5 - 2 + ((int)i % 5 == 2); \
    T r = F(x, n), rs = F(x, 3);                                            \
    TYPE_IS(F(x, n), T);                                                    \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) ok &= SAME(r[i], F(x[i], n[i])) && SAME(rs[i], F(x[i], 3)); \
    CHECK_AT(ok, __LINE__, #F "(" #T ") lanes");                            \
  }
// Functions that store through a pointer: both results, lane by lane.
#define OUT_LANES(T, E, F, OT)                                              \
  {                                                                         \
    T x = RAMP(T, E, -3.3, 4.1);                                            \
    OT o;                                                                   \
    T r = F(x, &o);                                                         \
    TYPE_IS(F(x, &o), T);                                                   \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) {                               \
      __typeof__(o[0]) os;                                                  \
      E rs = F(x[i], &os);                                                  \
      ok &= SAME(r[i], rs) && SAME(o[i], os);                               \
    }                                                                       \
    CHECK_AT(ok, __LINE__, #F "(" #T ") lanes");                            \
  }
#define OUT_SAME(T, E, F) OUT_LANES(T, E, F, T)
#define OUT_INT(T, E, F) OUT_LANES(T, E, F, __typeof__(ilogb(x)))
#define REMQUO_LANES(T, E, unused)                                          \
  {                                                                         \
    T x = RAMP(T, E, -7, 9), y = RAMP(T, E, 0.5, 3);                        \
    __typeof__(ilogb(x)) q, qs;                                             \
    T r = remquo(x, y, &q), rs = remquo(x, (E)1.5, &qs);                    \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) {                               \
      int q1, q2;                                                           \
      ok &= SAME(r[i], remquo(x[i], y[i], &q1)) && q[i] == q1;              \
      ok &= SAME(rs[i], remquo(x[i], (E)1.5, &q2)) && qs[i] == q2;          \
    }                                                                       \
    CHECK_AT(ok, __LINE__, "remquo(" #T ") lanes");                         \
  }
#define CLASS_INT_LANES(T, E, unused)                                       \
  {                                                                         \
    T x = RAMP(T, E, -1e5, 1e6);                                            \
    __typeof__(ilogb(x)) e = ilogb(x);                                      \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) ok &= e[i] == ilogb(x[i]);      \
    CHECK_AT(ok, __LINE__, "ilogb(" #T ") lanes");                          \
  }

#define SMOOTHSTEP_LANES(T, E, unused)                                      \
  {                                                                         \
    T x = RAMP(T, E, -1, 2), y = RAMP(T, E, 0.5, 3), z = RAMP(T, E, 1, 3);  \
    T r = smoothstep(x, y, z), rs = smoothstep((E)0.25, (E)2.5, z);         \
    TYPE_IS(smoothstep((E)0.25, (E)2.5, z), T);                             \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++)                                 \
      ok &= SAME(r[i], smoothstep(x[i], y[i], z[i])) && SAME(rs[i], smoothstep((E)0.25, (E)2.5, z[i])); \
    CHECK_AT(ok, __LINE__, "smoothstep(" #T ") lanes");                     \
  }
#define STEP_LANES(T, E, unused)                                            \
  {                                                                         \
    T x = RAMP(T, E, -1, 2), y = RAMP(T, E, 2, -1);                         \
    T r = step(x, y), rs = step((E)0.5, y);                                 \
    TYPE_IS(step((E)0.5, y), T);                                            \
    int ok = 1;                                                             \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++)                                 \
      ok &= SAME(r[i], step(x[i], y[i])) && SAME(rs[i], step((E)0.5, y[i])); \
    CHECK_AT(ok, __LINE__, "step(" #T ") lanes");                           \
  }

TEST_FN test_math_lanes(void) {
  FVECS(SMOOTHSTEP_LANES, 0)
  FVECS(STEP_LANES, 0)
  FVECS(INTARG_LANES, ldexp)
  FVECS(INTARG_LANES, pown)
  FVECS(INTARG_LANES, rootn)
  FVECS(OUT_SAME, fract)
  FVECS(OUT_SAME, modf)
  FVECS(OUT_SAME, sincos)
  FVECS(OUT_INT, frexp)
  FVECS(OUT_INT, lgamma_r)
  FVECS(REMQUO_LANES, 0)
  FVECS(CLASS_INT_LANES, 0)
  // ilogb of a double vector is an int vector; nan() builds NaNs lane-wise.
  TYPE_IS(ilogb(DC_VEC(double4, 0)), int4);
  TYPE_IS(ilogb(1.0), int);
  TYPE_IS(nan(1u), float);
  TYPE_IS(nan(1ul), double);
  TYPE_IS(nan(DC_VEC(uint8, 0)), float8);
  TYPE_IS(nan(DC_VEC(ulong2, 0)), double2);
  uint4 codes = {0, 1, 2, 0x3fffff};
  float4 nf = nan(codes);
  double4 nd = nan(DC_VEC(ulong4, 0, 1, 2, 3));
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= nan_f(nf[i]) && bits_f(nf[i]) == bits_f(nan(codes[i])) && nan_d(nd[i]);
  CHECK(ok);
}

#define RUN_UNARY(F, lo, hi) test_unary_##F();
#define RUN_BINARY(F) test_binary_##F();
#define RUN_TERNARY(F) test_ternary_##F();
void prelude_test_part2(void) {
  MATH_UNARY(RUN_UNARY)
  MATH_BINARY(RUN_BINARY)
  MATH_TERNARY(RUN_TERNARY)
  test_math_lanes();
}
#endif  // PART(2)

#if PART(1)
// Specific values of the functions C does not have, and of the common and
// pointer-storing ones.
TEST_FN test_math_values(void) {
#define C1(F, x)                                                            \
  {                                                                         \
    float xf_ = (float)(x);                                                 \
    double xd_ = (double)(x);                                               \
    HIDE(xf_);                                                              \
    HIDE(xd_);                                                              \
    CHECK_AT(SAME(F(xf_), __builtin_##F##f(xf_)) && SAME(F(xd_), __builtin_##F(xd_)), \
             __LINE__, #F " is C's");                                       \
  }
  C_UNARY(C1)
#define C2(F)                                                               \
  {                                                                         \
    float xf_ = 1.3f, yf_ = -0.6f;                                          \
    double xd_ = 1.3, yd_ = -0.6;                                           \
    HIDE(xf_);                                                              \
    HIDE(xd_);                                                              \
    CHECK_AT(SAME(F(xf_, yf_), __builtin_##F##f(xf_, yf_)) &&               \
                 SAME(F(xd_, yd_), __builtin_##F(xd_, yd_)),                \
             __LINE__, #F " is C's");                                       \
  }
  C_BINARY(C2)
  CHECK(SAME(fma(2.0f, 3.0f, 1.0f), 7.0f) && SAME(fma(0x1p-30, 0x1p-30, 1.0), __builtin_fma(0x1p-30, 0x1p-30, 1.0)));
  CHECK(SAME(mad(2.0f, 3.0f, 4.0f), 10.0f) && SAME(mad(2.0, 3.0, 4.0), 10.0));

  // pi functions: exact at the special points, close elsewhere.
  CHECK(SAME(acospi(0.0f), 0.5f) && SAME(acospi(-1.0), 1.0) && SAME(asinpi(1.0f), 0.5f) && NEAR(asinpi(-0.5), -1.0 / 6, 2));
  CHECK(SAME(atanpi(1.0f), 0.25f) && SAME(atanpi(-1.0), -0.25) && STRICT(SAME(atanpi(INFINITY), 0.5f)));
  CHECK(SAME(atan2pi(1.0f, 1.0f), 0.25f) && NEAR(atan2pi(1.0, -1.0), 0.75, 2) && SAME(atan2pi(-2.0f, 0.0f), -0.5f));
  CHECK(NEAR(acospi(0.3), __builtin_acos(0.3) / M_PI, 1) && NEAR(asinpi(0.3f), 0.09698668f, 1));
  CHECK(SAME(sinpi(0.5f), 1.0f) && SAME(sinpi(1.5), -1.0) && NEAR(sinpi(0.25), M_SQRT1_2, 1) && NEAR(sinpi(1.0f / 6), 0.5f, 1));
  CHECK(STRICT(SAME(sinpi(1.0f), 0.0f) && SAME(sinpi(-1.0), -0.0) && SAME(sinpi(-0.0f), -0.0f) && SAME(sinpi(2.0), 0.0)));
  CHECK(SAME(sinpi(1e20f), 0.0f) && SAME(sinpi(0x1p51 + 1.5), -1.0) && STRICT(nan_f(sinpi(INFINITY))));
  CHECK(SAME(cospi(0.0f), 1.0f) && SAME(cospi(1.0), -1.0) && NEAR(cospi(0.25f), (float)M_SQRT1_2, 1) && SAME(cospi(-2.0), 1.0));
  CHECK(STRICT(SAME(cospi(0.5f), 0.0f) && SAME(cospi(1.5), 0.0) && SAME(cospi(-0.5), 0.0)) && NEAR(cospi(1.0 / 3), 0.5, 1));
  CHECK(SAME(tanpi(0.25f), 1.0f) && SAME(tanpi(-0.25), -1.0) && STRICT(SAME(tanpi(0.5f), INFINITY) && SAME(tanpi(1.5), -(double)INFINITY)));
  CHECK(STRICT(SAME(tanpi(1.0f), -0.0f) && SAME(tanpi(2.0), 0.0) && SAME(tanpi(-0.0f), -0.0f)));
  CHECK(NEAR(sinpi(0.1), __builtin_sin(M_PI * 0.1), 1) && NEAR(tanpi(0.1f), 0.3249197f, 1));
  CHECK(SAME(exp10(2.0f), 100.0f) && NEAR(exp10(-1.0), 0.1, 1) && NEAR(exp10(0.5f), 3.1622777f, 1));
  CHECK(SAME(rsqrt(4.0f), 0.5f) && SAME(rsqrt(0.25), 2.0) && STRICT(SAME(rsqrt(0.0f), INFINITY)));

  float fi;
  double di;
  CHECK(SAME(fract(2.5f, &fi), 0.5f) && fi == 2.0f && SAME(fract(-2.25, &di), 0.75) && di == -3.0);
  CHECK(SAME(fract(-1e-10f, &fi), 0x1.fffffep-1f) && fi == -1.0f);
  CHECK(SAME(fract(-1e-20, &di), 0x1.fffffffffffffp-1) && di == -1.0);
  CHECK(STRICT(SAME(fract(-INFINITY, &fi), -0.0f) && fi == -INFINITY && nan_f(fract(NAN, &fi)) && nan_f(fi)));
  CHECK(SAME(modf(3.25f, &fi), 0.25f) && fi == 3.0f && SAME(modf(-3.25, &di), -0.25) && di == -3.0);
  int e;
  CHECK(SAME(frexp(8.0f, &e), 0.5f) && e == 4 && SAME(frexp(-0.375, &e), -0.75) && e == -1);
  TYPE_IS(frexp(DC_VEC(double2, 0), &DC_VEC(int2, 0)), double2);
  CHECK(ilogb(8.0f) == 3 && ilogb(0.1) == -4 && ilogb(0x1p-140f) == -140 && ilogb(3) == 1);
  CHECK(STRICT(ilogb(0.0f) == FP_ILOGB0 && ilogb(NAN) == FP_ILOGBNAN && ilogb(-INFINITY) == INT_MAX));
  CHECK(SAME(ldexp(1.5f, 3), 12.0f) && SAME(ldexp(3.0, -2), 0.75) && SAME(logb(40.0f), 5.0f));
  CHECK(NEAR(lgamma_r(3.0f, &e), (float)M_LN2, 1) && e == 1);
  CHECK(NEAR(lgamma_r(-0.5, &e), __builtin_lgamma(-0.5), 0) && e == -1);
  CHECK(NEAR(lgamma_r(-1.5f, &e), __builtin_lgammaf(-1.5f), 0) && e == 1);
  CHECK(NEAR(lgamma_r(-2.5, &e), __builtin_lgamma(-2.5), 0) && e == -1);
  CHECK(STRICT(lgamma_r(-2.0f, &e) == INFINITY && e == 0));
  CHECK(SAME(maxmag(-3.0f, 2.0f), -3.0f) && SAME(maxmag(1.0, -2.0), -2.0) && SAME(maxmag(-2.0f, 2.0f), 2.0f));
  CHECK(SAME(minmag(-3.0f, 2.0f), 2.0f) && SAME(minmag(1.0, -2.0), 1.0) && SAME(minmag(-2.0, 2.0), -2.0));
  CHECK(STRICT(SAME(maxmag(NAN, 1.0f), 1.0f) && SAME(minmag(2.0, (double)NAN), 2.0)));
  CHECK(nan_f(nan(5u)) && (bits_f(nan(5u)) & 0x3fffff) == 5 && nan_d(nan(7ul)) && (bits_d(nan(7ul)) & 0xfffff) == 7);
  CHECK(SAME(nextafter(1.0f, 2.0f), 1.0f + FLT_EPSILON) && SAME(nextafter(1.0, 0.0), 1.0 - DBL_EPSILON / 2));
  CHECK(SAME(pown(2.0f, 10), 1024.0f) && SAME(pown(-2.0, 3), -8.0) && SAME(pown(2.0f, -2), 0.25f) && SAME(pown(5.0, 0), 1.0));
  CHECK(NEAR(pown(3.0f, 20), (float)3486784401.0, 0) && NEAR(pown(1.5, -7), 1 / 17.0859375, 1));
  CHECK(SAME(powr(2.0f, 3.0f), 8.0f) && SAME(powr(4.0, 0.5), 2.0) && STRICT(nan_f(powr(-1.0f, 2.0f))));
  CHECK(STRICT(nan_d(powr(0.0, 0.0)) && nan_f(powr(INFINITY, 0.0f)) && nan_d(powr(1.0, (double)INFINITY)) && nan_f(powr(1.0f, NAN))));
  CHECK(SAME(pow(-2.0f, 3.0f), -8.0f) && NEAR(pow(2, 0.5), M_SQRT2, 1) && SAME(pow(9.0f, 0.5f), 3.0f));
  int q;
  CHECK(SAME(remquo(7.0f, 2.0f, &q), -1.0f) && q == 4 && SAME(remquo(-10.0, 3.0, &q), -1.0) && q == -3);
  CHECK(SAME(rootn(27.0f, 3), 3.0f) && SAME(rootn(-8.0, 3), -2.0) && SAME(rootn(16.0f, 4), 2.0f));
  CHECK(SAME(rootn(0.25, -2), 2.0) && SAME(rootn(-32.0f, 5), -2.0f) && SAME(rootn(7.0, 1), 7.0) && SAME(rootn(0.5f, -1), 2.0f));
  CHECK(STRICT(nan_d(rootn(-8.0, 2)) && nan_f(rootn(8.0f, 0)) && SAME(rootn(0.0, -2), (double)INFINITY) &&
               SAME(rootn(-0.0f, -3), -INFINITY) && SAME(rootn(-0.0, 3), -0.0)));
  float c;
  CHECK(SAME(sincos(0.5f, &c), __builtin_sinf(0.5f)) && SAME(c, __builtin_cosf(0.5f)));
  double cd;
  CHECK(SAME(sincos(-2.0, &cd), __builtin_sin(-2.0)) && SAME(cd, __builtin_cos(-2.0)));

  // Common functions.
  CHECK(SAME(clamp(1.5f, 0.0f, 1.0f), 1.0f) && SAME(clamp(-1.5, 0.0, 1.0), 0.0) && SAME(clamp(0.25f, 0.0f, 1.0f), 0.25f));
  CHECK(STRICT(SAME(clamp(NAN, 0.0f, 1.0f), 0.0f)));
  CHECK(NEAR(degrees(M_PI), 180.0, 1) && NEAR(degrees(M_PI_F), 180.0f, 1) && NEAR(radians(180.0), M_PI, 1) && NEAR(radians(90.0f), M_PI_2_F, 1));
  CHECK(SAME(max(1.5f, 2.5f), 2.5f) && SAME(max(-1.0, -2.0), -1.0) && SAME(min(1.5f, 2.5f), 1.5f) && SAME(min(-1.0, -2.0), -2.0));
  CHECK(SAME(mix(1.0f, 3.0f, 0.5f), 2.0f) && SAME(mix(2.0, 4.0, 0.25), 2.5));
  CHECK(SAME(step(0.5f, 0.4f), 0.0f) && SAME(step(0.5, 0.5), 1.0) && SAME(step(0.5f, 0.6f), 1.0f));
  CHECK(SAME(smoothstep(0.0f, 1.0f, 0.5f), 0.5f) && SAME(smoothstep(0.0, 2.0, -1.0), 0.0) &&
        SAME(smoothstep(0.0f, 1.0f, 2.0f), 1.0f) && SAME(smoothstep(0.0, 4.0, 1.0), 0.15625));
  CHECK(SAME(sign(-2.5f), -1.0f) && SAME(sign(3.0), 1.0) && STRICT(SAME(sign(-0.0f), -0.0f) && SAME(sign(0.0), 0.0) && SAME(sign(NAN), 0.0f)));
  CHECK(SAME(abs(-2.5f), 2.5f) && SAME(abs(-0.5), 0.5) && SAME(fabs(-3.0f), 3.0f));
  TYPE_IS(abs(1.0f), float);
  TYPE_IS(abs(DC_VEC(double4, 0)), double4);
  TYPE_IS(clamp(DC_VEC(float4, 0), 0.0f, 1.0f), float4);
  TYPE_IS(step(0.5f, DC_VEC(float8, 0)), float8);
  TYPE_IS(smoothstep(0.0, 1.0, DC_VEC(double2, 0)), double2);
  TYPE_IS(mix(DC_VEC(float16, 0), DC_VEC(float16, 0), 0.5f), float16);
  float4 v = {-2, 0.25f, 0.75f, 3};
  float4 st = step(0.5f, v), ss = smoothstep(0.0f, 1.0f, v), cl = clamp(v, 0.0f, 1.0f);
  CHECK(st[0] == 0 && st[1] == 0 && st[2] == 1 && st[3] == 1);
  CHECK(ss[0] == 0 && ss[1] == smoothstep(0.0f, 1.0f, 0.25f) && ss[3] == 1 && cl[0] == 0 && cl[2] == 0.75f && cl[3] == 1);
  float4 fm = fmin(v, 0.5f), fx = fmax(v, 0.5);  // double scalar converted
  CHECK(fm[0] == -2 && fm[3] == 0.5f && fx[0] == 0.5f && fx[3] == 3);
  double4 dv = {1, 2, 3, 4};
  double4 mx = max(dv, 2.5), mn = min(dv, 2.5), ld = ldexp(dv, 1);
  CHECK(mx[0] == 2.5 && mx[3] == 4 && mn[0] == 1 && mn[3] == 2.5 && ld[3] == 8);

  // native_ and half_ are the full-precision functions.
  CHECK(SAME(native_sin(0.5f), sin(0.5f)) && SAME(half_cos(0.5), cos(0.5)) && SAME(native_divide(1.0f, 3.0f), 1.0f / 3.0f));
  CHECK(SAME(native_recip(4.0f), 0.25f) && SAME(half_recip(8.0), 0.125) && SAME(native_powr(2.0f, 3.0f), 8.0f));
  CHECK(SAME(half_exp10(2.0f), 100.0f) && SAME(native_sqrt(9.0), 3.0) && SAME(half_rsqrt(16.0f), 0.25f));
}

#endif  // PART(1)

//===-- Integer functions -----------------------------------------------------===//

// Reference results computed in __int128.
typedef __int128 i128;
typedef unsigned __int128 u128;
static inline i128 sat_to(i128 v, i128 lo, i128 hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline int clz_ref(u128 x, int bits) {
  int n = 0;
  for (int b = bits - 1; b >= 0 && !((x >> b) & 1); b--) n++;
  return n;
}
static inline int pop_ref(u128 x) {
  int n = 0;
  for (; x; x >>= 1) n += (int)(x & 1);
  return n;
}

static const long long kIntValues[] __attribute__((unused)) = {0, 1, -1, 2, -2, 7, -100, 0x55, 127, -128, 255, 32767, -32768,
                                       65535, 0x7fffffff, (long long)0x80000000u, 0xffffffffll,
                                       0x123456789abcdefll, LONG_MAX, LONG_MIN, 12345, -999999};
#define NV ((int)(sizeof(kIntValues) / sizeof(kIntValues[0])))

// INT_SUITE(T, U, signedness, bits): scalars over all value pairs, then each
// vector width against the scalars.
#define INT_SUITE(T, P, U, SIGNED, B)                                       \
  TEST_FN test_int_##P(void) {                                          \
    const i128 lo = SIGNED ? -((i128)1 << (B - 1)) : 0;                     \
    const i128 hi = SIGNED ? ((i128)1 << (B - 1)) - 1 : ((i128)1 << B) - 1; \
    int ok = 1;                                                             \
    TYPE_IS(abs((T)0), U);                                                  \
    TYPE_IS(abs_diff((T)0, (T)0), U);                                       \
    TYPE_IS(add_sat((T)0, (T)0), T);                                        \
    TYPE_IS(clz((T)0), T);                                                  \
    for (int i = 0; i < NV; i++) {                                          \
      T x = (T)kIntValues[i];                                               \
      i128 X = x;                                                           \
      ok &= abs(x) == (U)(X < 0 ? -X : X);                                  \
      ok &= clz(x) == (T)clz_ref((u128)(U)x, B);                            \
      ok &= popcount(x) == (T)pop_ref((u128)(U)x);                          \
      for (int j = 0; j < NV; j++) {                                        \
        T y = (T)kIntValues[j];                                             \
        T z = (T)kIntValues[(i + j) % NV];                                  \
        i128 Y = y, Z = z;                                                  \
        ok &= abs_diff(x, y) == (U)(X > Y ? X - Y : Y - X);                 \
        ok &= add_sat(x, y) == (T)sat_to(X + Y, lo, hi);                    \
        ok &= sub_sat(x, y) == (T)sat_to(X - Y, lo, hi);                    \
        ok &= hadd(x, y) == (T)((X + Y) >> 1);                              \
        ok &= rhadd(x, y) == (T)((X + Y + 1) >> 1);                         \
        T mh = SIGNED ? (T)((X * Y) >> B) : (T)(((u128)X * (u128)Y) >> B);  \
        ok &= mul_hi(x, y) == mh;                                           \
        ok &= mad_hi(x, y, z) == (T)(U)((U)mh + (U)z);                      \
        i128 ms = SIGNED ? sat_to(X * Y + Z, lo, hi)                        \
                         : (i128)((u128)X * (u128)Y + (u128)Z > (u128)hi ? (u128)hi \
                                                                         : (u128)X * (u128)Y + (u128)Z); \
        ok &= mad_sat(x, y, z) == (T)ms;                                    \
        unsigned s = (unsigned)((U)y % B);                                  \
        u128 ux = (U)x;                                                     \
        ok &= rotate(x, y) == (T)(U)(s ? (ux << s | ux >> (B - s)) : ux);   \
        ok &= min(x, y) == (X < Y ? x : y) && max(x, y) == (X < Y ? y : x); \
        i128 L = Y < Z ? Y : Z, H = Y < Z ? Z : Y;                         \
        ok &= clamp(x, (T)L, (T)H) == (T)(X < L ? L : X > H ? H : X);      \
      }                                                                     \
    }                                                                       \
    CHECK_AT(ok, __LINE__, "integer functions on " #T);                     \
    INT_VECS(P, 2) INT_VECS(P, 4) INT_VECS(P, 8) INT_VECS(P, 16)            \
  }
#define IV1(F)                                                              \
  {                                                                         \
    __typeof__(F(x)) r = F(x);                                              \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) ok &= r[i] == F(x[i]);          \
  }
#define IV2(F)                                                              \
  {                                                                         \
    __typeof__(F(x, y)) r = F(x, y), rs = F(x, y[1]);                       \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++) ok &= r[i] == F(x[i], y[i]) && rs[i] == F(x[i], y[1]); \
  }
#define IV3(F)                                                              \
  {                                                                         \
    __typeof__(F(x, y, z)) r = F(x, y, z), rs = F(x, y[0], z[0]);           \
    NO_UNROLL for (unsigned i = 0; i < LANES(x); i++)                                 \
      ok &= r[i] == F(x[i], y[i], z[i]) && rs[i] == F(x[i], y[0], z[0]);    \
  }
#define INT_VECS(P, N)                                                      \
  {                                                                         \
    P##N x, y, z;                                                           \
    for (unsigned i = 0; i < N; i++) {                                      \
      x[i] = (__typeof__(x[0]))kIntValues[(i * 3) % NV];                    \
      y[i] = (__typeof__(x[0]))kIntValues[(i * 5 + 1) % NV];               \
      z[i] = (__typeof__(x[0]))kIntValues[(i * 7 + 2) % NV];                \
    }                                                                       \
    HIDE(x);                                                                \
    HIDE(y);                                                                \
    HIDE(z);                                                                \
    TYPE_IS(abs(x), u##P##N);                                               \
    TYPE_IS(abs_diff(x, y), u##P##N);                                       \
    TYPE_IS(mad_sat(x, y, z), P##N);                                        \
    TYPE_IS(popcount(x), P##N);                                             \
    ok = 1;                                                                 \
    IV1(abs) IV1(clz) IV1(popcount)                                         \
    IV2(abs_diff) IV2(add_sat) IV2(sub_sat) IV2(hadd) IV2(rhadd)            \
    IV2(mul_hi) IV2(rotate) IV2(min) IV2(max)                               \
    IV3(mad_hi) IV3(mad_sat) IV3(clamp)                                     \
    CHECK_AT(ok, __LINE__, "integer functions on " #P #N);                  \
  }
// Unsigned types: abs is the identity and u##P##N must name the same type.
typedef uchar uuchar2 __attribute__((vector_size(2)));
typedef uchar uuchar4 __attribute__((vector_size(4)));
typedef uchar uuchar8 __attribute__((vector_size(8)));
typedef uchar uuchar16 __attribute__((vector_size(16)));
typedef ushort uushort2 __attribute__((vector_size(4)));
typedef ushort uushort4 __attribute__((vector_size(8)));
typedef ushort uushort8 __attribute__((vector_size(16)));
typedef ushort uushort16 __attribute__((vector_size(32)));
typedef uint uuint2 __attribute__((vector_size(8)));
typedef uint uuint4 __attribute__((vector_size(16)));
typedef uint uuint8 __attribute__((vector_size(32)));
typedef uint uuint16 __attribute__((vector_size(64)));
typedef ulong uulong2 __attribute__((vector_size(16)));
typedef ulong uulong4 __attribute__((vector_size(32)));
typedef ulong uulong8 __attribute__((vector_size(64)));
typedef ulong uulong16 __attribute__((vector_size(128)));
#if PART(3)
INT_SUITE(dc_char, char, uchar, 1, 8)
INT_SUITE(uchar, uchar, uchar, 0, 8)
INT_SUITE(short, short, ushort, 1, 16)
INT_SUITE(ushort, ushort, ushort, 0, 16)
INT_SUITE(int, int, uint, 1, 32)
INT_SUITE(uint, uint, uint, 0, 32)
INT_SUITE(long, long, ulong, 1, 64)
INT_SUITE(ulong, ulong, ulong, 0, 64)
void prelude_test_part3(void) {
  test_int_char();
  test_int_uchar();
  test_int_short();
  test_int_ushort();
  test_int_int();
  test_int_uint();
  test_int_long();
  test_int_ulong();
}
#endif  // PART(3)

#if PART(1)

TEST_FN test_int_other(void) {
  // upsample: hi in the upper half, lo (unsigned) in the lower.
  TYPE_IS(upsample((dc_char)0, (uchar)0), short);
  TYPE_IS(upsample((uchar)0, (uchar)0), ushort);
  TYPE_IS(upsample((short)0, (ushort)0), int);
  TYPE_IS(upsample((ushort)0, (ushort)0), uint);
  TYPE_IS(upsample(0, 0u), long);
  TYPE_IS(upsample(0u, 0u), ulong);
  TYPE_IS(upsample(DC_VEC(char4, 0), DC_VEC(uchar4, 0)), short4);
  TYPE_IS(upsample(DC_VEC(uint16, 0), DC_VEC(uint16, 0)), ulong16);
  CHECK(upsample((dc_char)-1, (uchar)2) == (short)0xff02 && upsample((uchar)0x12, (uchar)0x34) == 0x1234);
  CHECK(upsample((short)-2, (ushort)0xffff) == (int)0xfffeffff && upsample((ushort)1, (ushort)2) == 0x10002u);
  CHECK(upsample(-1, 5u) == (long)0xffffffff00000005ull && upsample(0x80000000u, 1u) == 0x8000000000000001ul);
  int4 hi = {1, -1, 0x7fffffff, INT_MIN};
  uint4 lo = {2, 3, 0xffffffffu, 0};
  long4 up = upsample(hi, lo);
  int ok = 1;
  for (int i = 0; i < 4; i++) ok &= up[i] == upsample(hi[i], lo[i]);
  CHECK(ok);
  // mul24, mad24: 24-bit operands, int and uint.
  CHECK(mul24(-3, 0x7fffff) == -3 * 0x7fffff && mul24(0x800000u, 0x100u) == 0x80000000u);
  CHECK(mad24(1000, -1000, 7) == -999993 && mad24(0xffffffu, 2u, 1u) == 0x1ffffffu);
  int8 a = {1, -2, 3, -4, 5, -6, 7, -8}, b = {8, 7, 6, 5, 4, 3, 2, 1};
  int8 m = mul24(a, b), md = mad24(a, b, a), ms = mul24(a, 3);
  ok = 1;
  for (int i = 0; i < 8; i++) ok &= m[i] == a[i] * b[i] && md[i] == a[i] * b[i] + a[i] && ms[i] == 3 * a[i];
  CHECK(ok);
  uint2 ua = {0xffffffu, 3}, um = mad24(ua, ua, 1u);
  CHECK(um[1] == 10 && um[0] == (uint)(0xffffffu * 0xffffffu + 1));
  // min/max/clamp with scalar bounds and mixed literals.
  uchar16 u = DC_SPLAT(uchar16, 200);
  uchar16 mn = min(u, (uchar)100), cl = clamp(u, 10, 150);
  CHECK(mn[5] == 100 && cl[15] == 150 && max(DC_VEC(uint4, 1, 2, 3, 4), 3u)[0] == 3);
  CHECK(abs(INT_MIN) == 0x80000000u && abs((dc_char)-128) == 128 && abs(LONG_MIN) == 0x8000000000000000ul);
  CHECK(abs_diff(INT_MIN, INT_MAX) == 0xffffffffu && abs_diff((dc_char)-128, (dc_char)127) == 255);
  CHECK(rotate(1u, 33u) == 2 && rotate((uchar)0x81, (uchar)1) == 3 && rotate(1, -1) == INT_MIN);
  CHECK(clz(0) == 32 && clz((ushort)1) == 15 && clz(-1L) == 0 && popcount(-1L) == 64 && popcount((dc_char)-1) == 8);
}

//===-- Geometric functions ---------------------------------------------------===//

TEST_FN test_geometric(void) {
  float4 a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  double2 c = {3, 4};
  TYPE_IS(dot(a, b), float);
  TYPE_IS(dot(c, c), double);
  TYPE_IS(length(a), float);
  TYPE_IS(distance(c, c), double);
  TYPE_IS(normalize(a), float4);
  TYPE_IS(fast_normalize(c), double2);
  TYPE_IS(cross(a, b), float4);
  TYPE_IS(length(2.0f), float);
  CHECK(dot(a, b) == 70 && dot(c, c) == 25 && dot(2.0f, 3.0f) == 6 && dot(DC_VEC(float2, 1, 2), DC_VEC(float2, 3, 4)) == 11);
  CHECK(length(c) == 5 && length(DC_VEC(float2, 3, 4)) == 5 && length(-2.0f) == 2 && length(DC_VEC(double4, 1, 1, 1, 1)) == 2);
  CHECK(NEAR(length(a), 5.4772258f, 1) && distance(a, b) == 8 && distance(DC_VEC(double2, 0, 0), c) == 5 && distance(1.0, 4.0) == 3);
  // No overflow or underflow in the squares.
  CHECK(NEAR(length(DC_VEC(float2, 2e38f, 1e38f)), 2.236068e38f, 1) && NEAR(length(DC_VEC(float2, 3e-30f, 4e-30f)), 5e-30f, 1));
  CHECK(NEAR(length(DC_VEC(double2, 3e300, 4e300)), 5e300, 1) && NEAR(length(DC_VEC(double4, 0, 3e-300, 0, 4e-300)), 5e-300, 1));
  CHECK(STRICT(length(DC_VEC(float2, INFINITY, 1)) == INFINITY && nan_d(length(DC_VEC(double2, (double)NAN, 1)))));
  float2 n = normalize(DC_VEC(float2, 3, 4));
  CHECK(NEAR(n[0], 0.6f, 1) && NEAR(n[1], 0.8f, 1));
  double4 nd = normalize(DC_VEC(double4, 0, 0, 2e300, 0));
  CHECK(nd[2] == 1 && nd[0] == 0);
  float4 z = normalize(DC_VEC(float4, 0, 0, 0, 0));
  CHECK(z[0] == 0 && z[3] == 0 && normalize(-3.0f) == -1 && normalize(0.5) == 1);
  float2 ni = normalize(DC_VEC(float2, -INFINITY, 2));
  CHECK(STRICT(ni[0] == -1 && ni[1] == 0));
  float4 fn = fast_normalize(a);
  CHECK(NEAR(fast_length(a), 5.4772258f, 2) && NEAR(fast_distance(a, b), 8.0f, 2) && NEAR(fn[3], 4 / 5.4772258f, 4));
  CHECK(fast_normalize(DC_VEC(float2, 0, 0))[1] == 0 && NEAR(fast_length(c), 5.0, 2));
  float4 x = cross(DC_VEC(float4, 1, 0, 0, 7), DC_VEC(float4, 0, 1, 0, 9));
  CHECK(x[0] == 0 && x[1] == 0 && x[2] == 1 && x[3] == 0);
  double4 y = cross(DC_VEC(double4, 1, 2, 3, 0), DC_VEC(double4, 4, 5, 6, 0));
  CHECK(y[0] == -3 && y[1] == 6 && y[2] == -3 && y[3] == 0);
}

// 3-lane vectors are the 4-lane types; the 3-lane forms the code
// generator writes ignore the 4th lane.
TEST_FN test_three_lanes(void) {
  CHECK(sizeof(float3) == 16 && sizeof(char3) == 4 && sizeof(double3) == 32);
  TYPE_IS(dc__dot3((float3){0}, (float3){0}), float);
  float3 p = {3, 4, 12, 100}, q = {1, 2, 11, -50};
  CHECK(dc__dot3(p, q) == 143 && dc__length3(p) == 13 && dc__distance3(p, q) == 3);
  CHECK(NEAR(dc__fast_length3(p), 13.0f, 1) && NEAR(dc__fast_distance3(p, q), 3.0f, 1));
  double3 d = {0, 3, 4, 1e300};
  double3 n = dc__normalize3(d);
  CHECK(dc__length3(d) == 5 && NEAR(n[1], 0.6, 1) && NEAR(n[2], 0.8, 1) && n[3] == 0);
  float3 u = {0, 3, 4, 1e30f};
  float3 f = dc__fast_normalize3(u);
  CHECK(NEAR(f[1], 0.6f, 2) && f[3] == 0);
  int3 none = {0, 0, 0, -1}, one = {0, -1, 0, 0};
  long3 every = {-1, -1, -1, 0};
  char3 most = {-1, 0, -1, -1};
  CHECK(!dc__any3(none) && dc__any3(one) && dc__all3(every) && !dc__all3(most));
  float3 a = {1, 2, 3, 7}, b = {4, 5, 6, 9};
  float3 x = cross(a, b);
  CHECK(x[0] == -3 && x[1] == 6 && x[2] == -3);
}

//===-- Relational functions --------------------------------------------------===//

#define REL_BINARY(X)                                                       \
  X(isequal, ==) X(isnotequal, !=) X(isgreater, >) X(isgreaterequal, >=)    \
  X(isless, <) X(islessequal, <=)

TEST_FN test_relational(void) {
  float4 a = {1, 2, 3, 4}, b = {4, 2, 1, 4};
  double4 da = {1, 2, 3, 4}, db = {4, 2, 1, 4};
  TYPE_IS(isequal(a, b), int4);
  TYPE_IS(isequal(da, db), long4);
  TYPE_IS(isless(1.0, 2.0), int);
  TYPE_IS(isnan(1.0f), int);
  TYPE_IS(isnan(1.0), int);
  TYPE_IS(isinf(DC_VEC(double16, 0)), long16);
  TYPE_IS(signbit(DC_VEC(float8, 0)), int8);
  TYPE_IS(isunordered(DC_VEC(double2, 0), DC_VEC(double2, 0)), long2);
  int ok = 1;
#define REL_CHECK(F, OP)                                                    \
  {                                                                         \
    int4 r = F(a, b);                                                       \
    long4 dr = F(da, db);                                                   \
    for (int i = 0; i < 4; i++)                                             \
      ok &= r[i] == (a[i] OP b[i] ? -1 : 0) && dr[i] == (da[i] OP db[i] ? -1 : 0) && \
            F(a[i], b[i]) == (a[i] OP b[i]) && F(da[i], db[i]) == (da[i] OP db[i]); \
  }
  REL_BINARY(REL_CHECK)
  int4 lg = islessgreater(a, b);
  ok &= lg[0] == -1 && lg[1] == 0 && lg[2] == -1 && islessgreater(1.0, 2.0) == 1 && islessgreater(2.0f, 2.0f) == 0;
  CHECK(ok);
  int4 vs = isgreater(a, 2.5f);
  CHECK(vs[0] == 0 && vs[3] == -1);
#ifndef __FAST_MATH__
  float nanf_ = NAN;
  CHECK(isequal(nanf_, nanf_) == 0 && isnotequal(nanf_, nanf_) == 1 && islessgreater(nanf_, 1.0f) == 0);
  CHECK(isgreater(nanf_, 1.0f) == 0 && islessequal((double)nanf_, 1.0) == 0);
#endif
  // Classification by bits: every class, scalar and vector, float and double.
  float4 cf = {1.5f, 0x1p-140f, INFINITY, NAN};
  double4 cd = {-0.0, 0x1p-1070, -(double)INFINITY, -(double)NAN};
  int4 fin = isfinite(cf), inf = isinf(cf), nan = isnan(cf), nrm = isnormal(cf), sgn = signbit(cf);
  long4 dfin = isfinite(cd), dinf = isinf(cd), dnan = isnan(cd), dnrm = isnormal(cd), dsgn = signbit(cd);
  CHECK(fin[0] == -1 && fin[1] == -1 && fin[2] == 0 && fin[3] == 0);
  CHECK(inf[0] == 0 && inf[1] == 0 && inf[2] == -1 && inf[3] == 0);
  CHECK(nan[0] == 0 && nan[1] == 0 && nan[2] == 0 && nan[3] == -1);
  CHECK(nrm[0] == -1 && nrm[1] == 0 && nrm[2] == 0 && nrm[3] == 0);
  CHECK(sgn[0] == 0 && sgn[1] == 0 && sgn[2] == 0 && sgn[3] == 0);
  CHECK(dfin[0] == -1 && dfin[1] == -1 && dfin[2] == 0 && dfin[3] == 0);
  CHECK(dinf[0] == 0 && dinf[2] == -1 && dnan[3] == -1 && dnan[2] == 0 && dnrm[0] == 0 && dnrm[1] == 0);
  CHECK(dsgn[0] == -1 && dsgn[1] == 0 && dsgn[2] == -1 && dsgn[3] == -1);
  CHECK(isfinite(1.0f) == 1 && isinf(-INFINITY) == 1 && isnan((double)NAN) == 1 && isnormal(1e-310) == 0);
  CHECK(isnormal(2.0f) == 1 && signbit(-0.0f) == 1 && signbit(2.0) == 0 && isnan(3) == 0 && isinf(1.0) == 0);
  int4 ord = isordered(cf, a), uno = isunordered(cf, a);
  CHECK(ord[0] == -1 && ord[3] == 0 && uno[0] == 0 && uno[3] == -1);
  CHECK(isordered(1.0, 2.0) == 1 && isunordered(1.0f, NAN) == 1 && isunordered((double)NAN, 1.0) == 1 && isordered(NAN, 1.0f) == 0);

  // any/all: the most significant bit; scalars too.
  CHECK(any(DC_VEC(int4, 0, 0, -1, 0)) == 1 && any(DC_VEC(int4, 0, 1, 2, 3)) == 0 && all(DC_VEC(int4, -1, -2, INT_MIN, -7)) == 1);
  CHECK(all(DC_VEC(char16, -1)) == 0 && any(DC_VEC(char16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -128)) == 1);
  CHECK(all(isless(a, 10.0f)) == 1 && any(isgreater(da, 3.5)) == 1 && all(isgreater(da, 3.5)) == 0);
  CHECK(any(-5) == 1 && all(5) == 0 && any(DC_VEC(long2, 0, LONG_MIN)) == 1 && all(DC_VEC(short8, -1, -1, -1, -1, -1, -1, -1, -1)) == 1);
  CHECK(any(da < db) == 1 && all(da <= 4) == 1);  // raw comparisons of double vectors

  // bitselect and select.
  CHECK(bitselect(0xf0f0u, 0x0f0fu, 0xff00u) == 0x0ff0u && bitselect((uchar)0xaa, (uchar)0x55, (uchar)0x0f) == 0xa5);
  CHECK(bitselect(1.0f, -1.0f, -0.0f) == -1.0f && bitselect(2.0, 4.0, 0.0) == 2.0);
  float4 bs = bitselect(a, -a, as_float4(DC_SPLAT(int4, INT_MIN)));
  CHECK(bs[0] == -1 && bs[3] == -4);
  long2 bl = bitselect(DC_VEC(long2, 0, -1), DC_VEC(long2, -1, 0), DC_VEC(long2, 0x0f, 0x0f));
  CHECK(bl[0] == 0x0f && bl[1] == ~0x0fL);
  CHECK(select(1, 2, 0) == 1 && select(1, 2, 5) == 2 && select(1.5f, 2.5f, -1) == 2.5f && select(1.0, 2.0, 0L) == 1.0);
  float4 sel = select(a, b, DC_VEC(int4, 0, -1, 1, INT_MIN));
  CHECK(sel[0] == 1 && sel[1] == 2 && sel[2] == 3 && sel[3] == 4);
  float4 sel2 = select(a, b, DC_VEC(uint4, 0, 0x80000000u, 1, 0xffffffffu));
  CHECK(sel2[0] == 1 && sel2[1] == 2 && sel2[2] == 3 && sel2[3] == 4);
  double4 dsel = select(da, db, da < db);
  CHECK(dsel[0] == 4 && dsel[2] == 3);
  uchar16 cs = select(DC_VEC(uchar16, 1), DC_VEC(uchar16, 2), DC_VEC(char16, -1));
  CHECK(cs[0] == 2 && cs[1] == 0);
  int4 isel = select(DC_VEC(int4, 1, 2, 3, 4), DC_VEC(int4, 5, 6, 7, 8), a > 2);
  CHECK(isel[0] == 1 && isel[3] == 8);
}

//===-- Conversions -----------------------------------------------------------===//
#endif  // PART(1)

// Reference conversions, by integer arithmetic. Integers: the value
// rounded in the given mode (0 default = toward zero), saturated or
// wrapped. Floats: the value rounded to p significant bits (24 or 53), with
// the mode's direction (0 and 1 = to nearest even, 2 toward zero, 3 up,
// 4 down); for float results quanta below 2^-149 do not exist.
static inline double round_ref(double v, int mode) {
  switch (mode) {
    case 1: return __builtin_rint(v);
    case 3: return __builtin_ceil(v);
    case 4: return __builtin_floor(v);
    default: return __builtin_trunc(v);
  }
}
// Rounds m * q (m >= 0 an integer, q a power of two) to an integer
// multiple of q with at most p bits, and back to double.
static inline double round_bits(u128 m, int p, double q, int negative, int mode) {
  int shift = 0;
  while ((m >> shift) >> p) shift++;
  u128 t = m >> shift, rest = m - (t << shift), half = shift ? (u128)1 << (shift - 1) : 0;
  int up;
  switch (mode) {
    case 2: up = 0; break;
    case 3: up = rest && !negative; break;
    case 4: up = rest && negative; break;
    default: up = rest > half || (rest == half && rest && (t & 1)); break;
  }
  t += up;
  double r = __builtin_ldexp((double)t * q, shift);
  return negative ? -r : r;
}
static inline double i2fp_ref(i128 s, int p, int mode) {
  return round_bits(s < 0 ? (u128)-s : (u128)s, p, 1.0, s < 0, mode);
}
static inline float i2f_ref(i128 s, int mode) { return (float)i2fp_ref(s, 24, mode); }
static inline double i2d_ref(i128 s, int mode) { return i2fp_ref(s, 53, mode); }
static inline float d2f_ref(double s, int mode) {
  if (s == 0) return (float)s;
  double a = __builtin_fabs(s);
  // a = m * 2^e exactly, m a 53-bit integer; no quantum below 2^-149.
  int e = __builtin_ilogb(a) - 52;
  int p = 24;
  if (e < -149) {
    u128 m = (u128)__builtin_ldexp(a, -e);
    // Drop to the 2^-149 quantum first: fewer bits survive.
    int extra = -149 - e, bits = 0;
    while (m >> bits) bits++;
    p = bits - extra > 0 ? bits - extra : 0;
    if (p == 0) {  // below half the smallest subnormal's scale
      double tiny = __builtin_ldexp(1.0, -149);
      int up = mode == 3 ? s > 0 : mode == 4 ? s < 0 : mode == 2 ? 0 : a > tiny / 2;
      return (float)(up ? (s < 0 ? -tiny : tiny) : (s < 0 ? -0.0 : 0.0));
    }
    return (float)round_bits(m, p, __builtin_ldexp(1.0, e), s < 0, mode);
  }
  return (float)round_bits((u128)__builtin_ldexp(a, -e), p, __builtin_ldexp(1.0, e), s < 0, mode);
}

static const double kFloatSources[] __attribute__((unused)) = {0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.7, -3.7, 100.2, 127.5, 128.0,
                                       -128.5, 255.5, 256.0, 40000.7, -40000.7, 3e9, -3e9, 1e19, -1e19,
                                       1e30, -1e30, 0.1, 1.0 / 3, 16777217.0, 1e-45, -1e-300};
static const long long kIntSources[] __attribute__((unused)) = {0, 1, -1, 100, -129, 255, 256, 40000, -40000, 16777217, -16777217,
                                        2147483647, -2147483648LL, 4294967295LL, 9007199254740993LL,
                                        LONG_MAX, LONG_MIN};
#define NFS ((int)(sizeof(kFloatSources) / sizeof(kFloatSources[0])))
#define NIS ((int)(sizeof(kIntSources) / sizeof(kIntSources[0])))

// Every destination type and modifier; the name is pasted together here.
#define MODES(X, T, SAT, ...)                                               \
  X(T, SAT, , 0, __VA_ARGS__) X(T, SAT, _rte, 1, __VA_ARGS__)               \
  X(T, SAT, _rtz, 2, __VA_ARGS__) X(T, SAT, _rtp, 3, __VA_ARGS__)           \
  X(T, SAT, _rtn, 4, __VA_ARGS__)
#define CVT(T, SAT, M) convert_##T##SAT##M

// Integer destination T (element E, range lo..hi): from float, double and
// every integer source, scalar only; the vectors come below.
#define CVT_TO_INT(T, SAT, M, MODE, E, LOV, HIV)                            \
  {                                                                         \
    const i128 lo = (LOV), hi = (HIV);                                      \
    const int sat = sizeof(#SAT) > 1;                                       \
    int ok = 1;                                                             \
    for (int i = 0; i < NFS; i++) {                                         \
      double s = kFloatSources[i];                                          \
      double r = round_ref(s, MODE);                                        \
      if (!sat && (r < (double)lo || r > (double)hi)) continue;             \
      E want = (E)(r <= (double)lo ? lo : r >= (double)hi ? hi : (i128)r);  \
      ok &= CVT(T, SAT, M)(s) == want;                                      \
      if ((float)s == s || sat) {                                           \
        float fs = (float)s;                                                \
        double fr = round_ref(fs, MODE);                                    \
        if (sat || (fr >= (double)lo && fr <= (double)hi))                  \
          ok &= CVT(T, SAT, M)(fs) == (E)(fr <= (double)lo ? lo : fr >= (double)hi ? hi : (i128)fr); \
      }                                                                     \
    }                                                                       \
    for (int i = 0; i < NIS; i++) {                                         \
      long long s = kIntSources[i];                                         \
      E want = sat ? (E)sat_to(s, lo, hi) : (E)s;                           \
      ok &= CVT(T, SAT, M)(s) == want && CVT(T, SAT, M)((int)s) == (sat ? (E)sat_to((int)s, lo, hi) : (E)(int)s); \
      ok &= CVT(T, SAT, M)((ulong)s) == (sat ? (E)sat_to((ulong)s, lo, hi) : (E)(ulong)s); \
      ok &= CVT(T, SAT, M)((short)s) == (sat ? (E)sat_to((short)s, lo, hi) : (E)(short)s); \
      ok &= CVT(T, SAT, M)((uchar)s) == (sat ? (E)sat_to((uchar)s, lo, hi) : (E)(uchar)s); \
      ok &= CVT(T, SAT, M)((dc_char)s) == (sat ? (E)sat_to((dc_char)s, lo, hi) : (E)(dc_char)s); \
    }                                                                       \
    if (sat && !FAST) ok &= CVT(T, SAT, M)((float)NAN) == 0 && CVT(T, SAT, M)((double)INFINITY) == (E)hi && CVT(T, SAT, M)(-INFINITY) == (E)lo; \
    TYPE_IS(CVT(T, SAT, M)(1.5), E);                                        \
    CHECK_AT(ok, __LINE__, "convert_" #T #SAT #M);                          \
  }
#define CVT_TO_FLOAT(T, SAT, M, MODE, E, REF_I, REF_F)                      \
  {                                                                         \
    int ok = 1;                                                             \
    for (int i = 0; i < NIS; i++) {                                         \
      long long s = kIntSources[i];                                         \
      ok &= SAME(CVT(T, SAT, M)(s), REF_I(s, MODE));                        \
      ok &= SAME(CVT(T, SAT, M)((ulong)s), REF_I((ulong)s, MODE));          \
      ok &= SAME(CVT(T, SAT, M)((int)s), REF_I((int)s, MODE));              \
      ok &= SAME(CVT(T, SAT, M)((uint)s), REF_I((uint)s, MODE));            \
    }                                                                       \
    for (int i = 0; i < NFS; i++) {                                         \
      double s = kFloatSources[i];                                          \
      ok &= SAME(CVT(T, SAT, M)(s), (E)REF_F(s, MODE));                     \
      ok &= SAME(CVT(T, SAT, M)((float)s), (E)(float)s);                    \
    }                                                                       \
    TYPE_IS(CVT(T, SAT, M)(1), E);                                          \
    CHECK_AT(ok, __LINE__, "convert_" #T #SAT #M);                          \
  }
static inline double d2d_ref(double s, int mode) {
  (void)mode;
  return s;
}
#define INT_DESTS(X)                                                        \
  X(char, dc_char, SCHAR_MIN, SCHAR_MAX) X(uchar, uchar, 0, UCHAR_MAX)      \
  X(short, short, SHRT_MIN, SHRT_MAX) X(ushort, ushort, 0, USHRT_MAX)       \
  X(int, int, INT_MIN, INT_MAX) X(uint, uint, 0, UINT_MAX)                  \
  X(long, long, LONG_MIN, LONG_MAX) X(ulong, ulong, 0, ULONG_MAX)
#define SCALAR_INT_DEST(T, E, LO, HI)                                       \
  MODES(CVT_TO_INT, T, , E, LO, HI) MODES(CVT_TO_INT, T, _sat, E, LO, HI)

// Whether a rounded value r converts to E without overflow (always, for
// floating E).
static inline int fits(double r, int bytes, int is_signed, int is_float) {
  if (is_float) return 1;
  double span = __builtin_ldexp(1.0, 8 * bytes - is_signed);
  return is_signed ? r >= -span && r < span : r >= 0 && r < span;
}
#define FITS(E, r) fits(r, (int)sizeof(E), (E)-1 < (E)1, (E)0.5 != 0)

// Vectors: each lane is the scalar conversion of that lane, from a float,
// a double, an int and a ulong vector of the same width.
#define CVT_VEC(T, SAT, M, MODE, P, N)                                      \
  {                                                                         \
    float##N fs;                                                            \
    double##N ds;                                                           \
    int##N is;                                                              \
    ulong##N us;                                                            \
    for (int i = 0; i < N; i++) {                                           \
      ds[i] = kFloatSources[(i * 5 + MODE) % NFS];                          \
      fs[i] = (float)kFloatSources[(i * 3 + 1) % NFS];                      \
      is[i] = (int)kIntSources[(i * 7 + MODE) % NIS];                       \
      us[i] = (ulong)kIntSources[(i * 3 + 2) % NIS];                        \
    }                                                                       \
    HIDE(fs);                                                               \
    HIDE(ds);                                                               \
    HIDE(is);                                                               \
    HIDE(us);                                                               \
    T rf = CVT(T, SAT, M)(fs), rd = CVT(T, SAT, M)(ds), ri = CVT(T, SAT, M)(is), ru = CVT(T, SAT, M)(us); \
    TYPE_IS(CVT(T, SAT, M)(fs), T);                                         \
    int ok = 1;                                                             \
    NO_UNROLL for (int i = 0; i < N; i++) {                                 \
      int fok = sizeof(#SAT) > 1 || FITS(__typeof__(rf[0]), round_ref(fs[i], MODE)); \
      int dok = sizeof(#SAT) > 1 || FITS(__typeof__(rf[0]), round_ref(ds[i], MODE)); \
      if (fok) ok &= SAME(rf[i], CVT(P, SAT, M)(fs[i]));                    \
      if (dok) ok &= SAME(rd[i], CVT(P, SAT, M)(ds[i]));                    \
      ok &= SAME(ri[i], CVT(P, SAT, M)(is[i])) && SAME(ru[i], CVT(P, SAT, M)(us[i])); \
    }                                                                       \
    CHECK_AT(ok, __LINE__, "convert_" #T #SAT #M " lanes");                 \
  }
#define CVT_VEC_W(T, SAT, M, MODE, P)                                       \
  CVT_VEC(T##2, SAT, M, MODE, P, 2) CVT_VEC(T##4, SAT, M, MODE, P, 4)       \
  CVT_VEC(T##8, SAT, M, MODE, P, 8) CVT_VEC(T##16, SAT, M, MODE, P, 16)
#define CVT_VEC_W1(T, SAT, M, MODE, unused) CVT_VEC_W(T, SAT, M, MODE, T)
#define VEC_INT_DEST(T, E, LO, HI)                                          \
  MODES(CVT_VEC_W1, T, , 0) MODES(CVT_VEC_W1, T, _sat, 0)
#define VEC_FLOAT_DEST(T) MODES(CVT_VEC_W1, T, , 0)

#if PART(4)
TEST_FN test_convert_scalar(void) {
  INT_DESTS(SCALAR_INT_DEST)
  MODES(CVT_TO_FLOAT, float, , float, i2f_ref, d2f_ref)
  MODES(CVT_TO_FLOAT, double, , double, i2d_ref, d2d_ref)
}
TEST_FN test_convert_vector_float(void) {
  VEC_FLOAT_DEST(float)
  VEC_FLOAT_DEST(double)
}
void prelude_test_part4(void) {
  test_convert_scalar();
  test_convert_vector_float();
}
#endif  // PART(4)
#if PART(5)
void prelude_test_part5(void) {
  VEC_INT_DEST(char, dc_char, 0, 0)
  VEC_INT_DEST(uchar, uchar, 0, 0)
  VEC_INT_DEST(short, short, 0, 0)
  VEC_INT_DEST(ushort, ushort, 0, 0)
}
#endif  // PART(5)
#if PART(6)
void prelude_test_part6(void) {
  VEC_INT_DEST(int, int, 0, 0)
  VEC_INT_DEST(uint, uint, 0, 0)
  VEC_INT_DEST(long, long, 0, 0)
  VEC_INT_DEST(ulong, ulong, 0, 0)
}
#endif  // PART(6)

#if PART(1)

TEST_FN test_convert_values(void) {
  // Spot checks of the rules, independent of the reference functions.
  CHECK(convert_int(2.7f) == 2 && convert_int(-2.7) == -2 && convert_int_rte(2.5f) == 2 && convert_int_rte(3.5) == 4);
  CHECK(convert_int_rtp(2.1f) == 3 && convert_int_rtn(-2.1) == -3 && convert_int_rtz(-2.9f) == -2);
  CHECK(convert_uchar_sat(300) == 255 && convert_uchar_sat(-5) == 0 && convert_char_sat(200u) == 127);
  CHECK(convert_uchar(300) == 44 && convert_char(200) == -56 && convert_ushort_sat(-1.5f) == 0);
  CHECK(convert_int_sat(3e9) == INT_MAX && convert_int_sat(-3e9f) == INT_MIN && convert_uint_sat(-1) == 0);
  CHECK(convert_long_sat(1e19) == LONG_MAX && convert_ulong_sat(1e20f) == ULONG_MAX && convert_ulong_sat(-1L) == 0);
  CHECK(convert_long_sat(9.2233720368547758e18) == LONG_MAX && convert_long_sat_rtn(-9.3e18) == LONG_MIN);
  CHECK(convert_uint_sat(ULONG_MAX) == UINT_MAX && convert_long_sat(ULONG_MAX) == LONG_MAX && convert_ulong_sat(LONG_MIN) == 0);
  CHECK(convert_char_sat_rte(-128.5f) == -128 && convert_char_sat_rtp(126.2) == 127 && convert_uchar_sat_rtn(0.9f) == 0);
  CHECK(STRICT(convert_int_sat(NAN) == 0 && convert_short_sat_rte((double)NAN) == 0));
  CHECK(convert_float(16777217) == 16777216.0f && convert_float_rtp(16777217) == 16777218.0f);
  CHECK(convert_float_rtn(-16777217) == -16777218.0f && convert_float_rtz(-16777217) == -16777216.0f);
  CHECK(convert_float_rtz(ULONG_MAX) == 0x1.fffffep63f && convert_float(ULONG_MAX) == 0x1p64f);
  CHECK(convert_float_rtp(1.0 / 3) == 0x1.555556p-2f && convert_float_rtn(1.0 / 3) == 0x1.555554p-2f && convert_float_rte(1.0 / 3) == 0x1.555556p-2f);
  CHECK(convert_float_rtz(-1.0 / 3) == -0x1.555554p-2f && convert_float_rtz(1e39) == FLT_MAX);
  CHECK(convert_double_rtz(9007199254740993L) == 9007199254740992.0 && convert_double_rtp(9007199254740993L) == 9007199254740994.0);
  CHECK(convert_double_rtn(0.1f) == (double)0.1f && convert_double(LONG_MIN) == -0x1p63);
  int4 iv = convert_int4_sat_rte(DC_VEC(float4, 2.5f, 3.5f, -1e10f, 1e10f));
  CHECK(iv[0] == 2 && iv[1] == 4 && iv[2] == INT_MIN && iv[3] == INT_MAX);
  uchar8 cv = convert_uchar8_sat(DC_VEC(int8, -1, 0, 1, 255, 256, 1000, -1000, 128));
  CHECK(cv[0] == 0 && cv[3] == 255 && cv[4] == 255 && cv[6] == 0 && cv[7] == 128);
  float2 fv = convert_float2_rtp(DC_VEC(long2, 16777217, -16777217));
  CHECK(fv[0] == 16777218.0f && fv[1] == -16777216.0f);
  double16 dv = convert_double16(DC_VEC(char16, -1, 2));
  CHECK(dv[0] == -1 && dv[1] == 2 && dv[15] == 0);
  short4 sv = convert_short4(DC_VEC(float4, 1.9f, -1.9f, 0, 3));
  CHECK(sv[0] == 1 && sv[1] == -1 && sv[3] == 3);

  // as_<T>: the same bits.
  CHECK(as_int(1.0f) == 0x3f800000 && as_uint(-0.0f) == 0x80000000u && as_float(0x40490fdb) == (float)M_PI);
  CHECK(as_long(1.0) == 0x3ff0000000000000L && as_double(0x4000000000000000ul) == 2.0 && as_ulong(as_double(7ul)) == 7);
  TYPE_IS(as_float4(DC_VEC(int4, 0)), float4);
  TYPE_IS(as_char16(DC_VEC(double2, 0)), char16);
  TYPE_IS(as_char((uchar)1), dc_char);
  uchar4 bytes = as_uchar4(0x04030201);
  CHECK(bytes[0] == 1 && bytes[3] == 4 && as_int(bytes) == 0x04030201 && as_char((uchar)255) == -1);
  CHECK(as_short2(0xffff0001u)[1] == -1 && as_ushort((short)-1) == 0xffff && as_uchar((dc_char)-2) == 254);
  float4 f4 = as_float4(DC_VEC(uint4, 0x3f800000u, 0x40000000u, 0, 0x80000000u));
  CHECK(f4[0] == 1 && f4[1] == 2 && bits_f(f4[3]) == 0x80000000u);
  int ok = 1;
  // Every as_ name, round-tripped through a type of the same size.
#define AS_ROUND(T1, T2)                                                    \
  {                                                                         \
    T1 a_;                                                                  \
    memset(&a_, 0x5a, sizeof a_);                                           \
    ((unsigned char*)&a_)[0] = 0x11;                                        \
    T1 b_ = as_##T1(as_##T2(a_));                                           \
    ok &= memcmp(&a_, &b_, sizeof a_) == 0;                                 \
    TYPE_IS(as_##T2(a_), __typeof__(as_##T2(a_)));                          \
  }
  AS_ROUND(char, uchar) AS_ROUND(uchar, char) AS_ROUND(short, ushort) AS_ROUND(ushort, char2)
  AS_ROUND(int, float) AS_ROUND(uint, short2) AS_ROUND(float, uchar4) AS_ROUND(long, double)
  AS_ROUND(ulong, int2) AS_ROUND(double, float2) AS_ROUND(char2, uchar2) AS_ROUND(uchar2, short)
  AS_ROUND(short2, ushort2) AS_ROUND(ushort2, char4) AS_ROUND(int2, uint2) AS_ROUND(uint2, long)
  AS_ROUND(float2, ulong) AS_ROUND(long2, double2) AS_ROUND(ulong2, float4) AS_ROUND(double2, int4)
  AS_ROUND(char4, uchar4) AS_ROUND(uchar4, int) AS_ROUND(short4, ushort4) AS_ROUND(ushort4, double)
  AS_ROUND(int4, uint4) AS_ROUND(uint4, char16) AS_ROUND(float4, uchar16) AS_ROUND(long4, double4)
  AS_ROUND(ulong4, float8) AS_ROUND(double4, int8) AS_ROUND(char8, uchar8) AS_ROUND(uchar8, ulong)
  AS_ROUND(short8, ushort8) AS_ROUND(ushort8, long2) AS_ROUND(int8, uint8) AS_ROUND(uint8, short16)
  AS_ROUND(float8, ushort16) AS_ROUND(long8, double8) AS_ROUND(ulong8, float16) AS_ROUND(double8, int16)
  AS_ROUND(char16, uchar16) AS_ROUND(uchar16, short8) AS_ROUND(short16, ushort16) AS_ROUND(ushort16, int8)
  AS_ROUND(int16, uint16) AS_ROUND(uint16, long8) AS_ROUND(float16, ulong8) AS_ROUND(long16, double16)
  AS_ROUND(ulong16, long16) AS_ROUND(double16, ulong16)
  CHECK(ok);
}

//===-- vloadN / vstoreN ------------------------------------------------------===//

#define VLOAD_TYPE(E, P)                                                    \
  {                                                                         \
    _Alignas(64) unsigned char raw[1 + 64 * sizeof(E)];                     \
    E* p = (E*)(void*)(raw + 1); /* misaligned on purpose */                \
    E ref[64];                                                              \
    for (int i = 0; i < 64; i++) ref[i] = (E)(i * 3 - 50);                  \
    memcpy(p, ref, sizeof ref);                                             \
    const E* cp = p;                                                        \
    P##2 v2 = vload2(3, cp);                                                \
    P##4 v4 = vload4(2, p);                                                 \
    P##8 v8 = vload8(1, cp);                                                \
    P##16 v16 = vload16(3, p);                                              \
    P##3 v3 = vload3(1, cp);                                                \
    TYPE_IS(vload2(0, cp), P##2);                                           \
    TYPE_IS(vload3(0, cp), P##3);                                           \
    TYPE_IS(vload16(0, p), P##16);                                          \
    int ok = v2[0] == ref[6] && v2[1] == ref[7] && v4[0] == ref[8] && v4[3] == ref[11]; \
    ok &= v8[0] == ref[8] && v8[7] == ref[15] && v16[0] == ref[48] && v16[15] == ref[63]; \
    ok &= v3[0] == ref[3] && v3[2] == ref[5] && v3[3] == 0;                 \
    vstore2(v2, 0, p);                                                      \
    vstore4(v4, 1, p);                                                      \
    vstore8(v8, 2, p);                                                      \
    vstore16(v16, 2, p);                                                    \
    vstore3(v3, 17, p); /* 51..53: 3 elements, not 4 */                     \
    E out[64];                                                              \
    memcpy(out, p, sizeof out);                                             \
    ok &= out[0] == ref[6] && out[1] == ref[7] && out[4] == ref[8] && out[7] == ref[11]; \
    ok &= out[16] == ref[8] && out[23] == ref[15] && out[32] == ref[48] && out[47] == ref[63]; \
    ok &= out[2] == ref[2] && out[48] == ref[48];                           \
    ok &= out[50] == ref[50] && out[51] == ref[3] && out[53] == ref[5] && out[54] == ref[54]; \
    CHECK_AT(ok, __LINE__, "vload/vstore of " #E);                          \
  }

TEST_FN test_vload(void) {
  ALL_SCALARS(VLOAD_TYPE)
  size_t off = 1;
  float buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float4 v = vload4(off++, buf);  // arguments evaluated once
  CHECK(v[0] == 5 && off == 2);
}

//===-- Atomics ---------------------------------------------------------------===//

#define ATOMIC_SINGLE(T)                                                    \
  {                                                                         \
    volatile T x = 10;                                                      \
    T* px = (T*)&x;                                                         \
    int ok = atomic_add(&x, 5) == 10 && x == 15 && atomic_sub(px, 3) == 15 && x == 12; \
    ok &= atomic_inc(&x) == 12 && x == 13 && atomic_dec(px) == 13 && x == 12; \
    ok &= atomic_xchg(&x, 7) == 12 && x == 7;                               \
    ok &= atomic_cmpxchg(&x, 6, 9) == 7 && x == 7 && atomic_cmpxchg(px, 7, 9) == 7 && x == 9; \
    ok &= atomic_min(&x, 4) == 9 && x == 4 && atomic_min(px, 8) == 4 && x == 4; \
    ok &= atomic_max(&x, 2) == 4 && x == 4 && atomic_max(px, 11) == 4 && x == 11; \
    ok &= atomic_and(&x, 6) == 11 && x == 2 && atomic_or(px, 5) == 2 && x == 7; \
    ok &= atomic_xor(&x, 3) == 7 && x == 4;                                 \
    ok &= atom_add(&x, 1) == 4 && atom_sub(&x, 2) == 5 && atom_inc(px) == 3 && atom_dec(&x) == 4; \
    ok &= atom_xchg(&x, 20) == 3 && atom_cmpxchg(&x, 20, 21) == 20 && atom_min(px, 1) == 21; \
    ok &= atom_max(&x, 30) == 1 && atom_and(&x, 7) == 30 && atom_or(&x, 8) == 6 && atom_xor(px, 1) == 14 && x == 15; \
    TYPE_IS(atomic_add(&x, 1), T);                                          \
    TYPE_IS(atomic_cmpxchg(&x, 1, 2), T);                                   \
    TYPE_IS(atom_max(px, 1), T);                                            \
    CHECK_AT(ok, __LINE__, "atomics on " #T);                               \
  }

enum { kThreads = 4, kIters = 100000 };
static int g_count;
static long g_lcount;
static uint g_ucount;
static int g_cas;
static int g_min = INT_MAX, g_max = INT_MIN;
static long g_lmin = LONG_MAX;
static ulong g_umax;
static float g_token = 0;
static double g_token_sum[kThreads];

static void* hammer(void* arg) {
  int id = (int)(intptr_t)arg;
  for (int i = 0; i < kIters; i++) {
    atomic_inc(&g_count);
    atom_add(&g_lcount, 2);
    atomic_add(&g_ucount, 3u);
    int v = (i * 7919 + id * 104729) % 1000003 - 500000;
    atomic_min(&g_min, v);
    atomic_max(&g_max, v);
    atom_min(&g_lmin, (long)v * 1000000);
    atom_max(&g_umax, (ulong)v * 3u);
    int old;
    do old = g_cas;
    while (atomic_cmpxchg(&g_cas, old, old + 1) != old);
    // Exchanging tokens keeps every token exactly once.
    g_token_sum[id] += atomic_xchg(&g_token, (float)(id * kIters + i + 1));
  }
  return NULL;
}

TEST_FN test_atomics(void) {
  ATOMIC_SINGLE(int)
  ATOMIC_SINGLE(uint)
  ATOMIC_SINGLE(long)
  ATOMIC_SINGLE(ulong)
  float f = 1.5f;
  CHECK(atomic_xchg(&f, 2.5f) == 1.5f && f == 2.5f && atom_xchg(&f, 3.0f) == 2.5f);
  volatile uint u = 5;
  CHECK(atomic_sub(&u, 6u) == 5 && u == 0xffffffffu && atomic_max(&u, 1u) == 0xffffffffu && u == 0xffffffffu);
  volatile long l = -1;
  CHECK(atomic_min(&l, -2) == -1 && l == -2 && atomic_max(&l, 0) == -2 && l == 0);

  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; i++) pthread_create(&threads[i], NULL, hammer, (void*)(intptr_t)i);
  for (int i = 0; i < kThreads; i++) pthread_join(threads[i], NULL);
  int vmin = INT_MAX, vmax = INT_MIN;
  ulong umax = 0;
  for (int id = 0; id < kThreads; id++) {
    for (int i = 0; i < kIters; i++) {
      int v = (i * 7919 + id * 104729) % 1000003 - 500000;
      if (v < vmin) vmin = v;
      if (v > vmax) vmax = v;
      if ((ulong)v * 3u > umax) umax = (ulong)v * 3u;
    }
  }
  CHECK(g_count == kThreads * kIters && g_lcount == 2L * kThreads * kIters && g_ucount == 3u * kThreads * kIters);
  CHECK(g_cas == kThreads * kIters && g_min == vmin && g_max == vmax && g_lmin == (long)vmin * 1000000);
  CHECK(g_umax == umax);
  double sum = g_token;
  for (int i = 0; i < kThreads; i++) sum += g_token_sum[i];
  double n = (double)kThreads * kIters;
  CHECK(sum == n * (n + 1) / 2);
}

//===-- Async copies ----------------------------------------------------------===//

// A 3 x 2 work-group, run one work-item after another as the CPU device
// runs it; each copy is the group's work-items' shares together.
#define ASYNC_GROUP(stmt)                                                   \
  for (size_t ly = 0; ly < 2; ly++)                                         \
    for (size_t lx = 0; lx < 3; lx++) {                                     \
      wi.local[0] = lx;                                                     \
      wi.local[1] = ly;                                                     \
      stmt;                                                                 \
    }

TEST_FN test_async(void) {
  dc_c_launch_t launch = {.work_dim = 2,
                         .global_size = {3, 2, 1},
                         .local_size = {3, 2, 1},
                         .num_groups = {1, 1, 1}};
  dc__wi_t wi = {.launch = &launch};
  dc__wi_t* _wi = &wi;
  int g[40], l[40];
  float4 gv[16], lv[16];
  for (int i = 0; i < 40; i++) g[i] = 3 * i + 1, l[i] = -1;
  for (int i = 0; i < 16; i++) gv[i] = (float4){i, -i, 0.5f * i, 7}, lv[i] = (float4){0};
  event_t none = 0, ev = 0;
  TYPE_IS(async_work_group_copy(l, (const int*)g, 1, none), event_t);
  // Contiguous, more elements than work-items and not a multiple of them.
  ASYNC_GROUP(ev = async_work_group_copy(l, (const int*)g + 2, 17, none))
  int ok = ev != 0;
  for (int i = 0; i < 40; i++) ok &= l[i] == (i < 17 ? g[i + 2] : -1);
  CHECK_AT(ok, __LINE__, "async_work_group_copy of int");
  ASYNC_GROUP(ev = async_work_group_copy(lv + 1, (const float4*)gv, 13, ev))
  ok = lv[0][0] == 0 && lv[14][3] == 0;
  for (int i = 0; i < 13; i++) ok &= !any(lv[i + 1] != gv[i]);
  CHECK_AT(ok, __LINE__, "async_work_group_copy of float4");
  // Strided: to __local gathers, to __global scatters.
  for (int i = 0; i < 40; i++) l[i] = -1;
  ASYNC_GROUP(ev = dc_async_strided_copy_g2l(l, (const int*)g + 1, 13, 3, ev))
  ok = l[13] == -1;
  for (int i = 0; i < 13; i++) ok &= l[i] == g[1 + 3 * i];
  CHECK_AT(ok, __LINE__, "async_work_group_strided_copy to __local");
  int out[40];
  for (int i = 0; i < 40; i++) out[i] = 0;
  ASYNC_GROUP(ev = dc_async_strided_copy_l2g(out + 2, (const int*)l, 12, 3, ev))
  ok = 1;
  for (int i = 0; i < 40; i++) {
    int k = i - 2;
    ok &= out[i] == (k >= 0 && k % 3 == 0 && k / 3 < 12 ? l[k / 3] : 0);
  }
  CHECK_AT(ok, __LINE__, "async_work_group_strided_copy to __global");
  // Arguments are evaluated once; prefetch and wait_group_events do nothing.
  size_t n = 4;
  int* dst = l;
  ev = async_work_group_copy(dst++, (const int*)g, n++, ev);
  CHECK(dst == l + 1 && n == 5);
  prefetch(g, 40);
  wait_group_events(1, &ev);
}

//===-- Driver ----------------------------------------------------------------===//

void prelude_test_part1(void) {
  test_types();
  test_constants();
  test_workitem();
  test_vectors();
  test_math_values();
  test_int_other();
  test_geometric();
  test_three_lanes();
  test_relational();
  test_convert_values();
  test_vload();
  test_atomics();
  test_async();
}

int main(void) {
  prelude_test_part1();
  prelude_test_part2();
  prelude_test_part3();
  prelude_test_part4();
  prelude_test_part5();
  prelude_test_part6();
  printf("prelude test (%s%s): %d checks, %d failed\n",
#ifdef __clang__
         "clang",
#else
         "gcc",
#endif
         FAST ? ", fast math" : "", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
#endif  // PART(1)

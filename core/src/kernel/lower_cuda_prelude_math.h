// lower_cuda_prelude_math.h: OpenCL C 1.2's math built-ins on CUDA, and the
// machinery that lifts every built-in to vectors, for kernels the CUDA
// device translates (docs/kernel-builtins.md lists the built-ins;
// docs/cuda.md ("Kernels") says where CUDA differs). Compiled after
// lower_cuda_prelude.h, whose types and traits it uses; lower_cuda_prelude_builtins.h
// follows with the other built-ins.
//
// How a built-in is made. Its lanes are scalar functions: for floating
// types a float and a double overload (mostly CUDA's own sinf / sin ...),
// for integers one template; a template for integer arguments of a math
// function computes in double, as the CPU device does. The DC__VEC*
// macros then add the vector forms, lane by lane, for every width: the
// first argument gives the shape, and later arguments are either of the
// same vector type or scalars, which are converted to the lane type
// (docs/kernel-builtins.md: "the second may be a scalar when the first is
// a vector"). Every function is inlined; the lane loops unroll.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_PRELUDE_MATH_H_
#define DC_CUDA_PRELUDE_MATH_H_

//===-- Lifting scalar built-ins to vectors -------------------------------===//

// A later argument Y of a built-in whose first argument is dc__vec<T, N>.
#define DC__LATER_ARG(Y)                                                  \
  static_assert(dc__t<Y>::is_scalar || dc__same<Y, dc__vec<T, N>>::value, \
                "dclua: the vector arguments of a built-in differ in type")
#define DC__VEC1(name, COND)                                       \
  template <class T, int N, DC__IF(COND)>                          \
  static __forceinline__ auto dc__##name(const dc__vec<T, N>& x) { \
    dc__vec<decltype(dc__##name(x.s[0])), N> r;                    \
    for (int i = 0; i < N; ++i) r.s[i] = dc__##name(x.s[i]);       \
    return r;                                                      \
  }
#define DC__VEC2(name, COND)                                                   \
  template <class T, int N, class Y, DC__IF(COND)>                             \
  static __forceinline__ auto dc__##name(const dc__vec<T, N>& x, const Y& y) { \
    DC__LATER_ARG(Y);                                                          \
    dc__vec<decltype(dc__##name(x.s[0], x.s[0])), N> r;                        \
    for (int i = 0; i < N; ++i) {                                              \
      r.s[i] = dc__##name(x.s[i], (T)dc__get(y, i));                           \
    }                                                                          \
    return r;                                                                  \
  }
#define DC__VEC3(name, COND)                                                \
  template <class T, int N, class Y, class Z, DC__IF(COND)>                 \
  static __forceinline__ dc__vec<T, N> dc__##name(const dc__vec<T, N>& x,   \
                                                  const Y& y, const Z& z) { \
    DC__LATER_ARG(Y);                                                       \
    DC__LATER_ARG(Z);                                                       \
    dc__vec<T, N> r;                                                        \
    for (int i = 0; i < N; ++i) {                                           \
      r.s[i] = dc__##name(x.s[i], (T)dc__get(y, i), (T)dc__get(z, i));      \
    }                                                                       \
    return r;                                                               \
  }
#define DC__FLOATING dc__t<T>::is_float
#define DC__INTEGER dc__t<T>::is_int

// Floating built-ins whose float and double forms exist: the integer form
// (computing in double), the mixed scalar forms (later arguments
// converted to the first one's type) and the vector forms.
#define DC__FLIFT1(name)                        \
  template <class I, DC__IF(dc__t<I>::is_int)>  \
  static __forceinline__ auto dc__##name(I x) { \
    return dc__##name((double)x);               \
  }                                             \
  DC__VEC1(name, DC__FLOATING)
#define DC__FLIFT2(name)                                       \
  template <class Y, DC__IF(dc__t<Y>::is_scalar)>              \
  static __forceinline__ float dc__##name(float x, Y y) {      \
    return dc__##name(x, (float)y);                            \
  }                                                            \
  template <class Y, DC__IF(dc__t<Y>::is_scalar)>              \
  static __forceinline__ double dc__##name(double x, Y y) {    \
    return dc__##name(x, (double)y);                           \
  }                                                            \
  template <class I, class Y,                                  \
            DC__IF((dc__t<I>::is_int && dc__t<Y>::is_scalar))> \
  static __forceinline__ double dc__##name(I x, Y y) {         \
    return dc__##name((double)x, (double)y);                   \
  }                                                            \
  DC__VEC2(name, DC__FLOATING)
#define DC__FLIFT3(name)                                          \
  template <class Y, class Z,                                     \
            DC__IF((dc__t<Y>::is_scalar && dc__t<Z>::is_scalar))> \
  static __forceinline__ float dc__##name(float x, Y y, Z z) {    \
    return dc__##name(x, (float)y, (float)z);                     \
  }                                                               \
  template <class Y, class Z,                                     \
            DC__IF((dc__t<Y>::is_scalar && dc__t<Z>::is_scalar))> \
  static __forceinline__ double dc__##name(double x, Y y, Z z) {  \
    return dc__##name(x, (double)y, (double)z);                   \
  }                                                               \
  template <class I, class Y, class Z,                            \
            DC__IF((dc__t<I>::is_int && dc__t<Y>::is_scalar &&    \
                    dc__t<Z>::is_scalar))>                        \
  static __forceinline__ double dc__##name(I x, Y y, Z z) {       \
    return dc__##name((double)x, (double)y, (double)z);           \
  }                                                               \
  DC__VEC3(name, DC__FLOATING)

//===-- Math: the functions CUDA has --------------------------------------===//

#define DC__CUDA1(name)                                                     \
  static __forceinline__ float dc__##name(float x) { return ::name##f(x); } \
  static __forceinline__ double dc__##name(double x) { return ::name(x); }  \
  DC__FLIFT1(name)
#define DC__CUDA2(name)                                          \
  static __forceinline__ float dc__##name(float x, float y) {    \
    return ::name##f(x, y);                                      \
  }                                                              \
  static __forceinline__ double dc__##name(double x, double y) { \
    return ::name(x, y);                                         \
  }                                                              \
  DC__FLIFT2(name)
DC__CUDA1(acos)
DC__CUDA1(acosh)
DC__CUDA1(asin)
DC__CUDA1(asinh)
DC__CUDA1(atan)
DC__CUDA1(atanh)
DC__CUDA1(cbrt)
DC__CUDA1(ceil)
DC__CUDA1(cos)
DC__CUDA1(cosh)
DC__CUDA1(erfc)
DC__CUDA1(erf)
DC__CUDA1(exp)
DC__CUDA1(exp2)
DC__CUDA1(exp10)
DC__CUDA1(expm1)
DC__CUDA1(fabs)
DC__CUDA1(floor)
DC__CUDA1(lgamma)
DC__CUDA1(log)
DC__CUDA1(log2)
DC__CUDA1(log10)
DC__CUDA1(log1p)
DC__CUDA1(logb)
DC__CUDA1(rint)
DC__CUDA1(round)
DC__CUDA1(rsqrt)
DC__CUDA1(sin)
DC__CUDA1(sinh)
DC__CUDA1(sqrt)
DC__CUDA1(tan)
DC__CUDA1(tanh)
DC__CUDA1(tgamma)
DC__CUDA1(trunc)
DC__CUDA2(atan2)
DC__CUDA2(copysign)
DC__CUDA2(fdim)
DC__CUDA2(fmax)
DC__CUDA2(fmin)
DC__CUDA2(fmod)
DC__CUDA2(hypot)
DC__CUDA2(nextafter)
DC__CUDA2(pow)
DC__CUDA2(remainder)
#undef DC__CUDA1
#undef DC__CUDA2
static __forceinline__ float dc__fma(float a, float b, float c) {
  return fmaf(a, b, c);
}
static __forceinline__ double dc__fma(double a, double b, double c) {
  return fma(a, b, c);
}
DC__FLIFT3(fma)
// mad: a * b + c, which the compiler fuses (NVRTC contracts by default).
static __forceinline__ float dc__mad(float a, float b, float c) {
  return a * b + c;
}
static __forceinline__ double dc__mad(double a, double b, double c) {
  return a * b + c;
}
DC__FLIFT3(mad)

//===-- Math: OpenCL's additions ------------------------------------------===//

// Float results of the pi functions, pown, rootn and powr are computed in
// double and rounded once, as on the CPU device.
static __forceinline__ double dc__acospi(double x) { return acos(x) * M_1_PI; }
static __forceinline__ double dc__asinpi(double x) { return asin(x) * M_1_PI; }
static __forceinline__ double dc__atanpi(double x) { return atan(x) * M_1_PI; }
static __forceinline__ double dc__atan2pi(double y, double x) {
  return atan2(y, x) * M_1_PI;
}
static __forceinline__ double dc__sinpi(double x) { return ::sinpi(x); }
static __forceinline__ double dc__cospi(double x) { return ::cospi(x); }
// tan has period pi: y = x - rint(x) is exact and in [-0.5, 0.5]; above
// 0.25 the cotangent of the (exact) complement keeps the argument small.
static __forceinline__ double dc__tanpi(double x) {
  if (!isfinite(x)) return x - x;
  double y = x - rint(x), a = fabs(y), t;
  if (a == 0) {  // integers: +-0, the sign of x for even, of -x for odd
    return ::fmod(x, 2.0) == 0 ? copysign(0.0, x) : copysign(0.0, -x);
  }
  if (a == 0.5) return copysign(HUGE_VAL, y);
  if (a == 0.25) {
    t = 1;
  } else if (a < 0.25) {
    t = tan(M_PI * a);
  } else {
    t = 1 / tan(M_PI * (0.5 - a));
  }
  return copysign(t, y);
}
static __forceinline__ double dc__maxmag(double x, double y) {
  double ax = fabs(x), ay = fabs(y);
  return ax > ay ? x : ay > ax ? y : fmax(x, y);
}
static __forceinline__ double dc__minmag(double x, double y) {
  double ax = fabs(x), ay = fabs(y);
  return ax < ay ? x : ay < ax ? y : fmin(x, y);
}
static __forceinline__ double dc__powr(double x, double y) {
  if (x != x || y != y || x < 0)
    return __longlong_as_double(0x7ff8000000000000LL);
  if (y == 0 && (x == 0 || isinf(x))) {
    return __longlong_as_double(0x7ff8000000000000LL);
  }
  if (x == 1 && isinf(y)) return __longlong_as_double(0x7ff8000000000000LL);
  return pow(x, y);
}
#define DC__VIA_DOUBLE1(name)                        \
  static __forceinline__ float dc__##name(float x) { \
    return (float)dc__##name((double)x);             \
  }                                                  \
  DC__FLIFT1(name)
#define DC__VIA_DOUBLE2(name)                                 \
  static __forceinline__ float dc__##name(float x, float y) { \
    return (float)dc__##name((double)x, (double)y);           \
  }                                                           \
  DC__FLIFT2(name)
DC__VIA_DOUBLE1(acospi)
DC__VIA_DOUBLE1(asinpi)
DC__VIA_DOUBLE1(atanpi)
DC__VIA_DOUBLE1(sinpi)
DC__VIA_DOUBLE1(cospi)
DC__VIA_DOUBLE1(tanpi)
DC__VIA_DOUBLE2(atan2pi)
DC__VIA_DOUBLE2(powr)
static __forceinline__ float dc__maxmag(float x, float y) {
  return (float)dc__maxmag((double)x, (double)y);
}
static __forceinline__ float dc__minmag(float x, float y) {
  return (float)dc__minmag((double)x, (double)y);
}
DC__FLIFT2(maxmag)
DC__FLIFT2(minmag)
#undef DC__VIA_DOUBLE1
#undef DC__VIA_DOUBLE2

// Functions with an int operand (n: int, or intN for a vector x).
static __forceinline__ double dc__rootn(double x, int n) {
  if (n == 0 || (x < 0 && !(n & 1))) {
    return __longlong_as_double(0x7ff8000000000000LL);
  }
  if (n == 1) return x;
  if (n == 2) return sqrt(x);
  if (n == 3) return cbrt(x);
  if (n == -1) return 1.0 / x;
  double r = pow(fabs(x), 1.0 / n);
  return (n & 1) ? copysign(r, x) : r;
}
static __forceinline__ float dc__rootn(float x, int n) {
  return (float)dc__rootn((double)x, n);
}
static __forceinline__ double dc__pown(double x, int n) {
  return pow(x, (double)n);
}
static __forceinline__ float dc__pown(float x, int n) {
  return (float)pow((double)x, (double)n);
}
static __forceinline__ double dc__ldexp(double x, int n) {
  return ::ldexp(x, n);
}
static __forceinline__ float dc__ldexp(float x, int n) { return ldexpf(x, n); }
#define DC__WITH_INT(name)                                                    \
  template <class I, class J, DC__IF((dc__t<I>::is_int && dc__t<J>::is_int))> \
  static __forceinline__ double dc__##name(I x, J n) {                        \
    return dc__##name((double)x, (int)n);                                     \
  }                                                                           \
  template <class T, int N, class J, DC__IF(DC__FLOATING)>                    \
  static __forceinline__ dc__vec<T, N> dc__##name(const dc__vec<T, N>& x,     \
                                                  const J& n) {               \
    static_assert(dc__shape<J>::n == 1 || dc__shape<J>::n == N,               \
                  "dclua: " #name                                             \
                  " needs an int or an int vector as wide "                   \
                  "as its first argument");                                   \
    dc__vec<T, N> r;                                                          \
    for (int i = 0; i < N; ++i)                                               \
      r.s[i] = dc__##name(x.s[i], (int)dc__get(n, i));                        \
    return r;                                                                 \
  }
DC__WITH_INT(rootn)
DC__WITH_INT(pown)
DC__WITH_INT(ldexp)
#undef DC__WITH_INT

static __forceinline__ int dc__ilogb(double x) {
  if (x == 0) return FP_ILOGB0;
  if (x != x) return FP_ILOGBNAN;
  if (isinf(x)) return INT_MAX;
  return ::ilogb(x);
}
static __forceinline__ int dc__ilogb(float x) { return dc__ilogb((double)x); }
DC__FLIFT1(ilogb)

// nan(code): uint codes give float, ulong codes double.
static __forceinline__ float dc__nan(uint code) {
  return __uint_as_float(0x7fc00000u | (code & 0x3fffffu));
}
static __forceinline__ float dc__nan(int code) { return dc__nan((uint)code); }
static __forceinline__ double dc__nan(ulong code) {
  return __longlong_as_double(
      (long long)(0x7ff8000000000000ull | (code & 0x7ffffffffffffull)));
}
static __forceinline__ double dc__nan(long code) {
  return dc__nan((ulong)code);
}
DC__VEC1(nan, DC__INTEGER)

// Functions that also store through a pointer to the argument's type
// (fract, modf, sincos) or to int of its shape (frexp, lgamma_r, remquo).
// fract rounds in its own type, or x - floor(x) could round up to 1.
template <class T, DC__IF(DC__FLOATING)>
static __forceinline__ T dc__fract(T x, T* fl) {
  *fl = floor(x);
  if (x != x) return x;
  if (isinf(x)) return copysign((T)0, x);
  T r = x - *fl;
  T one_less = sizeof(T) == 4 ? (T)0x1.fffffep-1f : (T)0x1.fffffffffffffp-1;
  return r < one_less ? r : one_less;
}
static __forceinline__ float dc__modf(float x, float* i) { return modff(x, i); }
static __forceinline__ double dc__modf(double x, double* i) {
  return ::modf(x, i);
}
static __forceinline__ float dc__sincos(float x, float* c) {
  float s;
  sincosf(x, &s, c);
  return s;
}
static __forceinline__ double dc__sincos(double x, double* c) {
  double s;
  ::sincos(x, &s, c);
  return s;
}
static __forceinline__ float dc__frexp(float x, int* e) { return frexpf(x, e); }
static __forceinline__ double dc__frexp(double x, int* e) {
  return ::frexp(x, e);
}
// lgamma_r's sign: 0 for poles (non-positive integers) and NaN.
static __forceinline__ int dc__lgamma_sign(double x) {
  if (x > 0) return 1;
  if (x == 0) return signbit(x) ? -1 : 1;
  double f = floor(x);
  if (f == x || x != x) return 0;
  return ::fmod(f, 2.0) == 0 ? 1 : -1;
}
template <class T, DC__IF(DC__FLOATING)>
static __forceinline__ T dc__lgamma_r(T x, int* sign) {
  *sign = dc__lgamma_sign((double)x);
  return dc__lgamma(x);
}
static __forceinline__ float dc__remquo(float x, float y, int* q) {
  return remquof(x, y, q);
}
static __forceinline__ double dc__remquo(double x, double y, int* q) {
  return ::remquo(x, y, q);
}
// Vector forms: the pointee has lanes of E (the argument's T, or int).
#define DC__OUT_VEC(name, E)                                              \
  template <class T, int N, DC__IF(DC__FLOATING)>                         \
  static __forceinline__ dc__vec<T, N> dc__##name(const dc__vec<T, N>& x, \
                                                  dc__vec<E, N>* out) {   \
    dc__vec<T, N> r;                                                      \
    dc__vec<E, N> o;                                                      \
    for (int i = 0; i < N; ++i) r.s[i] = dc__##name(x.s[i], &o.s[i]);     \
    *out = o;                                                             \
    return r;                                                             \
  }
DC__OUT_VEC(fract, T)
DC__OUT_VEC(modf, T)
DC__OUT_VEC(sincos, T)
DC__OUT_VEC(frexp, int)
DC__OUT_VEC(lgamma_r, int)
#undef DC__OUT_VEC
template <class T, int N, class Y, DC__IF(DC__FLOATING)>
static __forceinline__ dc__vec<T, N> dc__remquo(const dc__vec<T, N>& x,
                                                const Y& y,
                                                dc__vec<int, N>* quo) {
  DC__LATER_ARG(Y);
  dc__vec<T, N> r;
  dc__vec<int, N> q;
  for (int i = 0; i < N; ++i) {
    r.s[i] = dc__remquo(x.s[i], (T)dc__get(y, i), &q.s[i]);
  }
  *quo = q;
  return r;
}

//===-- Math: common functions --------------------------------------------===//

// Each defined for float and double (FT), then lifted.
#define DC__FLOAT_AND_DOUBLE(DEF) DEF(float) DEF(double)
#define DC__DEGREES(FT)                                         \
  static __forceinline__ FT dc__degrees(FT x) {                 \
    return x * (FT)57.295779513082320876798154814105;           \
  }                                                             \
  static __forceinline__ FT dc__radians(FT x) {                 \
    return x * (FT)0.017453292519943295769236907684886;         \
  }                                                             \
  static __forceinline__ FT dc__sign(FT x) {                    \
    return x > 0 ? (FT)1 : x < 0 ? (FT)-1 : x == x ? x : (FT)0; \
  }                                                             \
  static __forceinline__ FT dc__mix(FT x, FT y, FT a) {         \
    return x + (y - x) * a;                                     \
  }
DC__FLOAT_AND_DOUBLE(DC__DEGREES)
#undef DC__DEGREES
DC__FLIFT1(degrees)
DC__FLIFT1(radians)
DC__FLIFT1(sign)
DC__FLIFT3(mix)
// step and smoothstep take the shape from x, their last argument; the
// edges may be scalars.
template <class T, DC__IF(DC__FLOATING)>
static __forceinline__ T dc__step_lane(T edge, T x) {
  return x < edge ? (T)0 : (T)1;
}
template <class T, DC__IF(DC__FLOATING)>
static __forceinline__ T dc__smoothstep_lane(T e0, T e1, T x) {
  T t = (x - e0) / (e1 - e0);
  t = t < 0 ? (T)0 : t;
  t = (T)1 < t ? (T)1 : t;
  return t * t * (3 - 2 * t);
}
template <class E, class X>
static __forceinline__ X dc__step(const E& edge, const X& x) {
  typedef typename dc__shape<X>::elem T;
  X r;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    dc__set(r, i, dc__step_lane((T)dc__get(edge, i), (T)dc__get(x, i)));
  }
  return r;
}
template <class E0, class E1, class X>
static __forceinline__ X dc__smoothstep(const E0& e0, const E1& e1,
                                        const X& x) {
  typedef typename dc__shape<X>::elem T;
  X r;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    dc__set(r, i,
            dc__smoothstep_lane((T)dc__get(e0, i), (T)dc__get(e1, i),
                                (T)dc__get(x, i)));
  }
  return r;
}

// native_*: CUDA's fast hardware approximations for float (what the
// native_ forms are for), full precision for double. half_*: the full-
// precision functions, as on the CPU device.
static __forceinline__ float dc__native_cos(float x) { return __cosf(x); }
static __forceinline__ float dc__native_sin(float x) { return __sinf(x); }
static __forceinline__ float dc__native_tan(float x) { return __tanf(x); }
static __forceinline__ float dc__native_exp(float x) { return __expf(x); }
static __forceinline__ float dc__native_exp2(float x) { return exp2f(x); }
static __forceinline__ float dc__native_exp10(float x) { return __exp10f(x); }
static __forceinline__ float dc__native_log(float x) { return __logf(x); }
static __forceinline__ float dc__native_log2(float x) { return __log2f(x); }
static __forceinline__ float dc__native_log10(float x) { return __log10f(x); }
static __forceinline__ float dc__native_powr(float x, float y) {
  return __powf(x, y);
}
static __forceinline__ float dc__native_recip(float x) { return __frcp_rn(x); }
static __forceinline__ float dc__native_rsqrt(float x) { return rsqrtf(x); }
static __forceinline__ float dc__native_sqrt(float x) { return __fsqrt_rn(x); }
static __forceinline__ float dc__native_divide(float x, float y) {
  return __fdividef(x, y);
}
#define DC__NATIVE_D1(name, full)                             \
  static __forceinline__ double dc__native_##name(double x) { \
    return full(x);                                           \
  }                                                           \
  DC__FLIFT1(native_##name)
DC__NATIVE_D1(cos, cos)
DC__NATIVE_D1(sin, sin)
DC__NATIVE_D1(tan, tan)
DC__NATIVE_D1(exp, exp)
DC__NATIVE_D1(exp2, exp2)
DC__NATIVE_D1(exp10, exp10)
DC__NATIVE_D1(log, log)
DC__NATIVE_D1(log2, log2)
DC__NATIVE_D1(log10, log10)
DC__NATIVE_D1(recip, 1.0 /)
DC__NATIVE_D1(rsqrt, rsqrt)
DC__NATIVE_D1(sqrt, sqrt)
#undef DC__NATIVE_D1
static __forceinline__ double dc__native_powr(double x, double y) {
  return dc__powr(x, y);
}
static __forceinline__ double dc__native_divide(double x, double y) {
  return x / y;
}
DC__FLIFT2(native_powr)
DC__FLIFT2(native_divide)
template <class X>
static __forceinline__ X dc__half_recip(const X& x) {
  return (typename dc__shape<X>::elem)1 / x;
}
template <class X, class Y>
static __forceinline__ X dc__half_divide(const X& x, const Y& y) {
  return x / y;
}

#endif  // DC_CUDA_PRELUDE_MATH_H_

// lower_cuda_prelude_builtins.h: OpenCL C 1.2's integer, geometric, relational,
// conversion and vload/vstore built-ins on CUDA, for kernels the CUDA
// device translates (docs/kernel-builtins.md lists them;
// docs/cuda.md ("Kernels") says where CUDA differs). Compiled after
// lower_cuda_prelude_math.h, whose lifting macros (DC__VEC*) it uses; see there
// for how a built-in is made.
//
// At the end, object-like macros map OpenCL's names onto the prelude's
// (sin -> dc__sin, float4 -> dc_float4, ...); see lower_cuda_prelude.h for why.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_PRELUDE_BUILTINS_H_
#define DC_CUDA_PRELUDE_BUILTINS_H_

//===-- Integer functions -------------------------------------------------===//

// The range of an integer type.
template <class T>
struct dc__lim {
  typedef typename dc__t<T>::uns U;
  static constexpr T max() {
    return dc__t<T>::is_signed ? (T)((U) ~(U)0 >> 1) : (T) ~(U)0;
  }
  static constexpr T min() {
    return dc__t<T>::is_signed ? (T)(-max() - 1) : (T)0;
  }
};
#define DC__INT_T template <class T, DC__IF(DC__INTEGER)>
#define DC__U typename dc__t<T>::uns

DC__INT_T __forceinline__ T dc__hadd(T x, T y) {
  return (T)((x >> 1) + (y >> 1) + (x & y & 1));
}
DC__INT_T __forceinline__ T dc__rhadd(T x, T y) {
  return (T)((x >> 1) + (y >> 1) + ((x | y) & 1));
}
DC__INT_T __forceinline__ DC__U dc__abs_diff(T x, T y) {
  return x > y ? (DC__U)((DC__U)x - (DC__U)y) : (DC__U)((DC__U)y - (DC__U)x);
}
DC__INT_T __forceinline__ T dc__add_sat(T x, T y) {
  if (dc__t<T>::bits < 64) {
    long long s = (long long)x + (long long)y;
    return s < (long long)dc__lim<T>::min()   ? dc__lim<T>::min()
           : s > (long long)dc__lim<T>::max() ? dc__lim<T>::max()
                                              : (T)s;
  }
  T s = (T)((DC__U)x + (DC__U)y);
  if (!dc__t<T>::is_signed) return s < x ? dc__lim<T>::max() : s;
  if (((x ^ s) & (y ^ s)) < 0)
    return x < 0 ? dc__lim<T>::min() : dc__lim<T>::max();
  return s;
}
DC__INT_T __forceinline__ T dc__sub_sat(T x, T y) {
  if (dc__t<T>::bits < 64) {
    long long s = (long long)x - (long long)y;
    return s < (long long)dc__lim<T>::min()   ? dc__lim<T>::min()
           : s > (long long)dc__lim<T>::max() ? dc__lim<T>::max()
                                              : (T)s;
  }
  T s = (T)((DC__U)x - (DC__U)y);
  if (!dc__t<T>::is_signed) return x < y ? (T)0 : s;
  if (((x ^ y) & (x ^ s)) < 0)
    return x < 0 ? dc__lim<T>::min() : dc__lim<T>::max();
  return s;
}
DC__INT_T __forceinline__ T dc__clz(T x) {
  if (dc__t<T>::bits == 64) return (T)__clzll((long long)x);
  return (T)(__clz((int)(uint)(DC__U)x) - (32 - dc__t<T>::bits));
}
DC__INT_T __forceinline__ T dc__popcount(T x) {
  if (dc__t<T>::bits == 64) return (T)__popcll((unsigned long long)x);
  return (T)__popc((uint)(DC__U)x);
}
DC__INT_T __forceinline__ T dc__mul_hi(T x, T y) {
  if (dc__t<T>::bits == 64) {
    return dc__t<T>::is_signed
               ? (T)__mul64hi((long long)x, (long long)y)
               : (T)__umul64hi((unsigned long long)x, (unsigned long long)y);
  }
  if (dc__t<T>::is_signed) {
    return (T)(((long long)x * (long long)y) >> dc__t<T>::bits);
  }
  return (T)(((unsigned long long)x * (unsigned long long)y) >> dc__t<T>::bits);
}
DC__INT_T __forceinline__ T dc__mad_hi(T x, T y, T z) {
  return (T)((DC__U)dc__mul_hi(x, y) + (DC__U)z);
}
// mad_sat of 64-bit lanes: the 128-bit product as hi:lo, plus z.
DC__INT_T __forceinline__ T dc__mad_sat64(T x, T y, T z) {
  typedef unsigned long long U64;
  if (!dc__t<T>::is_signed) {
    U64 lo = (U64)x * (U64)y;
    if (__umul64hi((U64)x, (U64)y) != 0) return dc__lim<T>::max();
    U64 s = lo + (U64)z;
    return s < lo ? dc__lim<T>::max() : (T)s;
  }
  long long hi = __mul64hi((long long)x, (long long)y);
  U64 lo = (U64)x * (U64)y;
  U64 s = lo + (U64)z;
  hi += (z < 0 ? -1 : 0) + (s < lo ? 1 : 0);
  if (hi == ((long long)s >> 63)) return (T)s;
  return hi < 0 ? dc__lim<T>::min() : dc__lim<T>::max();
}
DC__INT_T __forceinline__ T dc__mad_sat(T x, T y, T z) {
  if (dc__t<T>::bits == 64) return dc__mad_sat64(x, y, z);
  if (dc__t<T>::is_signed) {
    long long p = (long long)x * (long long)y + (long long)z;
    return p < (long long)dc__lim<T>::min()   ? dc__lim<T>::min()
           : p > (long long)dc__lim<T>::max() ? dc__lim<T>::max()
                                              : (T)p;
  }
  unsigned long long p =
      (unsigned long long)x * (unsigned long long)y + (unsigned long long)z;
  return p > (unsigned long long)dc__lim<T>::max() ? dc__lim<T>::max() : (T)p;
}
DC__INT_T __forceinline__ T dc__rotate(T v, T n) {
  const int b = dc__t<T>::bits;
  DC__U x = (DC__U)v;
  unsigned s = (unsigned)((DC__U)n & (b - 1));
  return (T)(DC__U)((x << s) | (x >> ((b - s) & (b - 1))));
}
// mul24/mad24: the full 32-bit product (what 24-bit operands give).
DC__INT_T __forceinline__ T dc__mul24(T x, T y) {
  return (T)((uint)x * (uint)y);
}
DC__INT_T __forceinline__ T dc__mad24(T x, T y, T z) {
  return (T)((uint)x * (uint)y + (uint)z);
}
#undef DC__INT_T

// Mixed scalar forms (later arguments converted to the first one's type)
// and vector forms of the integer functions.
#define DC__ILIFT2(name)                                  \
  template <class T, class Y,                             \
            DC__IF((DC__INTEGER && dc__t<Y>::is_scalar && \
                    !dc__same<T, Y>::value))>             \
  static __forceinline__ auto dc__##name(T x, Y y) {      \
    return dc__##name(x, (T)y);                           \
  }                                                       \
  DC__VEC2(name, DC__INTEGER)
#define DC__ILIFT3(name)                                                      \
  template <class T, class Y, class Z,                                        \
            DC__IF((DC__INTEGER && dc__t<Y>::is_scalar &&                     \
                    dc__t<Z>::is_scalar &&                                    \
                    !(dc__same<T, Y>::value && dc__same<T, Z>::value)))>      \
  static __forceinline__ T dc__##name(T x, Y y, Z z) {                        \
    return dc__##name(x, (T)y, (T)z);                                         \
  }                                                                           \
  DC__VEC3(name, DC__INTEGER)
DC__ILIFT2(hadd)
DC__ILIFT2(rhadd)
DC__ILIFT2(abs_diff)
DC__ILIFT2(add_sat)
DC__ILIFT2(sub_sat)
DC__ILIFT2(mul_hi)
DC__ILIFT2(rotate)
DC__ILIFT2(mul24)
DC__ILIFT3(mad_hi)
DC__ILIFT3(mad_sat)
DC__ILIFT3(mad24)
DC__VEC1(clz, DC__INTEGER)
DC__VEC1(popcount, DC__INTEGER)
#undef DC__ILIFT2
#undef DC__ILIFT3

// min, max, clamp and abs take integer and floating types alike. min and
// max follow OpenCL's definitions (y < x ? y : x); clamp is
// fmin(fmax(x, lo), hi) for floating types, so a NaN x gives lo.
template <class T, class Y,
          DC__IF((dc__t<T>::is_scalar && dc__t<Y>::is_scalar))>
static __forceinline__ T dc__min(T x, Y y) {
  T b = (T)y;
  return b < x ? b : x;
}
template <class T, class Y,
          DC__IF((dc__t<T>::is_scalar && dc__t<Y>::is_scalar))>
static __forceinline__ T dc__max(T x, Y y) {
  T b = (T)y;
  return x < b ? b : x;
}
template <class T, class Y, class Z,
          DC__IF((dc__t<T>::is_scalar && dc__t<Y>::is_scalar &&
                  dc__t<Z>::is_scalar))>
static __forceinline__ T dc__clamp(T x, Y lo, Z hi) {
  if constexpr (dc__t<T>::is_float) {
    return (T)fmin(fmax(x, (T)lo), (T)hi);
  } else {
    return dc__min(dc__max(x, (T)lo), (T)hi);
  }
}
template <class T, DC__IF(DC__INTEGER)>
static __forceinline__ DC__U dc__abs(T x) {
  return x < 0 ? (DC__U)(0 - (DC__U)x) : (DC__U)x;
}
static __forceinline__ float dc__abs(float x) { return fabsf(x); }
static __forceinline__ double dc__abs(double x) { return fabs(x); }
DC__VEC2(min, dc__t<T>::is_scalar)
DC__VEC2(max, dc__t<T>::is_scalar)
DC__VEC3(clamp, dc__t<T>::is_scalar)
DC__VEC1(abs, dc__t<T>::is_scalar)
#undef DC__U

// upsample(hi, lo) = hi << bits(lo) | lo, in the type twice as wide.
template <class T>
struct dc__wider {};
template <>
struct dc__wider<dc_char> {
  typedef short type;
};
template <>
struct dc__wider<uchar> {
  typedef ushort type;
};
template <>
struct dc__wider<short> {
  typedef int type;
};
template <>
struct dc__wider<ushort> {
  typedef uint type;
};
template <>
struct dc__wider<int> {
  typedef long type;
};
template <>
struct dc__wider<uint> {
  typedef ulong type;
};
template <class T, class L, DC__IF(DC__INTEGER)>
static __forceinline__ typename dc__wider<T>::type dc__upsample(T hi, L lo) {
  typedef typename dc__wider<T>::type W;
  typedef typename dc__t<W>::uns WU;
  typedef typename dc__t<T>::uns U;
  return (W)(WU)(((WU)(U)hi << dc__t<T>::bits) | (WU)(U)lo);
}
template <class T, int N, class L>
static __forceinline__ dc__vec<typename dc__wider<T>::type, N> dc__upsample(
    const dc__vec<T, N>& hi, const L& lo) {
  dc__vec<typename dc__wider<T>::type, N> r;
  for (int i = 0; i < N; ++i) r.s[i] = dc__upsample(hi.s[i], dc__get(lo, i));
  return r;
}

//===-- Geometric functions -----------------------------------------------===//

// float and double scalars and vectors. Lengths of float vectors are
// computed in double, so they neither overflow nor underflow; double ones
// are rescaled by a power of two when their largest component is huge or
// tiny (as on the CPU device).
template <class X>
static __forceinline__ typename dc__shape<X>::elem dc__dot(const X& x,
                                                           const X& y) {
  typename dc__shape<X>::elem s = 0;
  for (int i = 0; i < dc__shape<X>::n; ++i) s += dc__get(x, i) * dc__get(y, i);
  return s;
}
template <class X>
static __forceinline__ double dc__length_d(const X& x) {
  double m = 0, s = 0;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    double a = fabs((double)dc__get(x, i));
    if (!(a <= m)) m = a;  // NaN propagates
  }
  if (m == 0 || !isfinite(m)) return m;
  bool single = sizeof(typename dc__shape<X>::elem) == 4;
  int e = !single && (m > 0x1p500 || m < 0x1p-500) ? ilogb(m) : 0;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    double a = ::ldexp((double)dc__get(x, i), -e);
    s += a * a;
  }
  return ::ldexp(sqrt(s), e);
}
template <class X>
static __forceinline__ typename dc__shape<X>::elem dc__length(const X& x) {
  return (typename dc__shape<X>::elem)dc__length_d(x);
}
template <class X, class Y>
static __forceinline__ typename dc__shape<X>::elem dc__distance(const X& x,
                                                                const Y& y) {
  return dc__length(X(x - y));
}
// Zero vectors come back unchanged; if components are infinite, those
// become +-1 and the others +-0 before normalizing.
template <class X>
static __forceinline__ X dc__normalize(X x) {
  typedef typename dc__shape<X>::elem T;
  bool inf = false;
  for (int i = 0; i < dc__shape<X>::n; ++i) inf |= isinf(dc__get(x, i));
  if (inf) {
    for (int i = 0; i < dc__shape<X>::n; ++i) {
      T v = dc__get(x, i);
      dc__set(x, i, copysign(isinf(v) ? (T)1 : (T)0, v));
    }
  }
  double l = dc__length_d(x);
  if (l == 0) return x;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    dc__set(x, i, (T)(dc__get(x, i) / l));
  }
  return x;
}
template <class X>
static __forceinline__ typename dc__shape<X>::elem dc__fast_length(const X& x) {
  return sqrt(dc__dot(x, x));
}
template <class X, class Y>
static __forceinline__ typename dc__shape<X>::elem dc__fast_distance(
    const X& x, const Y& y) {
  return dc__fast_length(X(x - y));
}
template <class X>
static __forceinline__ X dc__fast_normalize(X x) {
  typename dc__shape<X>::elem d2 = dc__dot(x, x);
  if (d2 > 0) x = x * (1 / sqrt(d2));
  return x;
}
// cross of 3- and 4-lane vectors; the fourth lane of a 4-lane result is 0.
template <class T>
static __forceinline__ dc__vec<T, 4> dc__cross(const dc__vec<T, 4>& a,
                                               const dc__vec<T, 4>& b) {
  return dc__vec<T, 4>(a.s[1] * b.s[2] - a.s[2] * b.s[1],
                       a.s[2] * b.s[0] - a.s[0] * b.s[2],
                       a.s[0] * b.s[1] - a.s[1] * b.s[0], 0);
}
template <class T>
static __forceinline__ dc__vec<T, 3> dc__cross(const dc__vec<T, 3>& a,
                                               const dc__vec<T, 3>& b) {
  return dc__vec<T, 3>(a.s[1] * b.s[2] - a.s[2] * b.s[1],
                       a.s[2] * b.s[0] - a.s[0] * b.s[2],
                       a.s[0] * b.s[1] - a.s[1] * b.s[0]);
}

//===-- Relational functions ----------------------------------------------===//

// Scalars give int 1 or 0; vectors lanes of -1 or 0, as wide as the
// argument's (intN for floatN, longN for doubleN). The classifications
// test the bits, so they hold under fast math too.
#define DC__COMPARE(name, EXPR)                                              \
  template <class T, class Y, DC__IF((DC__FLOATING && dc__t<Y>::is_scalar))> \
  static __forceinline__ int dc__##name(T x, Y y_) {                         \
    T y = (T)y_;                                                             \
    return (EXPR) ? 1 : 0;                                                   \
  }                                                                          \
  template <class T, int N, class Y, DC__IF(DC__FLOATING)>                   \
  static __forceinline__ dc__vec<typename dc__t<T>::mask, N> dc__##name(     \
      const dc__vec<T, N>& a, const Y& b) {                                  \
    DC__LATER_ARG(Y);                                                        \
    dc__vec<typename dc__t<T>::mask, N> r;                                   \
    for (int i = 0; i < N; ++i) {                                            \
      T x = a.s[i], y = (T)dc__get(b, i);                                    \
      r.s[i] = (EXPR) ? -1 : 0;                                              \
    }                                                                        \
    return r;                                                                \
  }
DC__COMPARE(isequal, x == y)
DC__COMPARE(isnotequal, x != y)
DC__COMPARE(isgreater, x > y)
DC__COMPARE(isgreaterequal, x >= y)
DC__COMPARE(isless, x < y)
DC__COMPARE(islessequal, x <= y)
DC__COMPARE(islessgreater, x<y || x> y)
DC__COMPARE(isordered, x == x && y == y)
DC__COMPARE(isunordered, x != x || y != y)
#undef DC__COMPARE

template <class T>
static __forceinline__ typename dc__t<T>::uns dc__bits(T x) {
  typename dc__t<T>::uns b;
  memcpy(&b, &x, sizeof b);
  return b;
}
#define DC__CLASSIFY(name, EXPR)                                             \
  template <class T, DC__IF(DC__FLOATING)>                                   \
  static __forceinline__ int dc__##name##_lane(T x) {                        \
    typedef typename dc__t<T>::uns U;                                        \
    const U ex = sizeof(T) == 4 ? (U)0x7f800000u : (U)0x7ff0000000000000ull; \
    const U ab = (U) ~(U)0 >> 1;                                             \
    U b = dc__bits(x);                                                       \
    (void)ex;                                                                \
    (void)ab;                                                                \
    return (EXPR) ? 1 : 0;                                                   \
  }                                                                          \
  template <class T, DC__IF(DC__FLOATING)>                                   \
  static __forceinline__ int dc__##name(T x) {                               \
    return dc__##name##_lane(x);                                             \
  }                                                                          \
  template <class T, int N, DC__IF(DC__FLOATING)>                            \
  static __forceinline__ dc__vec<typename dc__t<T>::mask, N> dc__##name(     \
      const dc__vec<T, N>& x) {                                              \
    dc__vec<typename dc__t<T>::mask, N> r;                                   \
    for (int i = 0; i < N; ++i) r.s[i] = dc__##name##_lane(x.s[i]) ? -1 : 0; \
    return r;                                                                \
  }
DC__CLASSIFY(isfinite, (b & ex) != ex)
DC__CLASSIFY(isinf, (b & ab) == ex)
DC__CLASSIFY(isnan, (b & ab) > ex)
DC__CLASSIFY(isnormal, (b & ex) != 0 && (b & ex) != ex)
DC__CLASSIFY(signbit, (b >> (8 * sizeof(T) - 1)) != 0)
#undef DC__CLASSIFY

// any/all: whether the most significant bit of any / every lane of an
// integer scalar or vector is set.
template <class X>
static __forceinline__ int dc__any(const X& x) {
  typedef typename dc__shape<X>::elem T;
  int r = 0;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    r |= (int)(((typename dc__t<T>::uns)dc__get(x, i)) >> (dc__t<T>::bits - 1));
  }
  return r;
}
template <class X>
static __forceinline__ int dc__all(const X& x) {
  typedef typename dc__shape<X>::elem T;
  int r = 1;
  for (int i = 0; i < dc__shape<X>::n; ++i) {
    r &= (int)(((typename dc__t<T>::uns)dc__get(x, i)) >> (dc__t<T>::bits - 1));
  }
  return r;
}

// bitselect(a, b, c): each bit from b where c has a 1, else from a
// (floating types by their bits).
template <class T, DC__IF(dc__t<T>::is_scalar)>
static __forceinline__ T dc__bitselect(T a, T b, T c) {
  typename dc__t<T>::uns ia = dc__bits(a), ib = dc__bits(b), ic = dc__bits(c);
  ia = (ia & ~ic) | (ib & ic);
  T r;
  memcpy(&r, &ia, sizeof r);
  return r;
}
DC__VEC3(bitselect, dc__t<T>::is_scalar)

// select(a, b, c): scalars c ? b : a; vectors lane by lane, b where the
// most significant bit of c's lane is set (c's lanes are integers as wide
// as a's, signed or unsigned).
template <class T, class Y, class C,
          DC__IF((dc__t<T>::is_scalar && dc__t<C>::is_int))>
static __forceinline__ T dc__select(T a, Y b, C c) {
  return c ? (T)b : a;
}
template <class T, int N, class Y, class C>
static __forceinline__ dc__vec<T, N> dc__select(const dc__vec<T, N>& a,
                                                const Y& b,
                                                const dc__vec<C, N>& c) {
  DC__LATER_ARG(Y);
  static_assert(sizeof(C) == sizeof(T) && dc__t<C>::is_int,
                "dclua: select needs a mask of integers as wide as its "
                "operands' lanes");
  dc__vec<T, N> r;
  for (int i = 0; i < N; ++i) {
    r.s[i] = (typename dc__t<C>::sgn)c.s[i] < 0 ? (T)dc__get(b, i) : a.s[i];
  }
  return r;
}

//===-- Conversions -------------------------------------------------------===//

// convert_<T>[_sat][_<mode>](x) is dc__convert<T, SAT, MODE>(x) (the code
// generator writes it so), modes 0 default, 1 rte, 2 rtz, 3 rtp, 4 rtn.
// Without a mode, floating to integer rounds toward zero and integer to
// floating to nearest even, as C casts do. _sat clamps to the
// destination's range, NaN giving 0. The explicit modes use CUDA's
// rounding intrinsics, which are exact.
template <int MODE>
static __forceinline__ double dc__round_mode(double v) {
  return MODE == 1   ? rint(v)
         : MODE == 3 ? ceil(v)
         : MODE == 4 ? floor(v)
                     : trunc(v);
}
template <class D, int SAT, int MODE, class S>
static __forceinline__ D dc__float_to_int(S s) {
  if (!SAT && (MODE == 0 || MODE == 2)) return (D)s;  // C truncates
  double v = dc__round_mode<MODE>((double)s);
  if (!SAT) return (D)v;
  if (v != v) return 0;
  if (v < (double)dc__lim<D>::min()) return dc__lim<D>::min();
  // The smallest double above the range: 2^bits or 2^(bits - 1).
  double above = ::ldexp(1.0, dc__t<D>::bits - (dc__t<D>::is_signed ? 1 : 0));
  return v >= above ? dc__lim<D>::max() : (D)v;
}
template <class D, class S>
static __forceinline__ D dc__int_saturate(S s) {
  if (dc__t<S>::is_signed && (long long)s < 0) {
    if (!dc__t<D>::is_signed) return 0;
    return (long long)s < (long long)dc__lim<D>::min() ? dc__lim<D>::min()
                                                       : (D)s;
  }
  return (unsigned long long)s > (unsigned long long)dc__lim<D>::max()
             ? dc__lim<D>::max()
             : (D)s;
}
#define DC__ROUNDED(rn, rz, ru, rd, x) \
  (MODE == 2 ? rz(x) : MODE == 3 ? ru(x) : MODE == 4 ? rd(x) : rn(x))
template <class D, int MODE, class S>
static __forceinline__ D dc__int_to_float(S s) {
  const bool wide = dc__t<S>::bits == 64;
  const bool sgn = dc__t<S>::is_signed;
  if (sizeof(D) == 8) {
    if (!wide || MODE <= 1) return (D)s;
    if (sgn) {
      return DC__ROUNDED(__ll2double_rn, __ll2double_rz, __ll2double_ru,
                         __ll2double_rd, (long long)s);
    }
    return DC__ROUNDED(__ull2double_rn, __ull2double_rz, __ull2double_ru,
                       __ull2double_rd, (unsigned long long)s);
  }
  if (MODE <= 1 || dc__t<S>::bits < 32) return (D)s;
  if (wide && sgn) {
    return DC__ROUNDED(__ll2float_rn, __ll2float_rz, __ll2float_ru,
                       __ll2float_rd, (long long)s);
  }
  if (wide) {
    return DC__ROUNDED(__ull2float_rn, __ull2float_rz, __ull2float_ru,
                       __ull2float_rd, (unsigned long long)s);
  }
  if (sgn) {
    return DC__ROUNDED(__int2float_rn, __int2float_rz, __int2float_ru,
                       __int2float_rd, (int)s);
  }
  return DC__ROUNDED(__uint2float_rn, __uint2float_rz, __uint2float_ru,
                     __uint2float_rd, (uint)s);
}
template <class D, int SAT, int MODE, class S>
static __forceinline__ D dc__convert_lane(S s) {
  if constexpr (dc__t<D>::is_float && dc__t<S>::is_float) {
    if (sizeof(D) >= sizeof(S) || MODE <= 1) return (D)s;
    return (D)DC__ROUNDED(__double2float_rn, __double2float_rz,
                          __double2float_ru, __double2float_rd, (double)s);
  } else if constexpr (dc__t<D>::is_float) {
    return dc__int_to_float<D, MODE>(s);
  } else if constexpr (dc__t<S>::is_float) {
    return dc__float_to_int<D, SAT, MODE>(s);
  } else {
    return SAT ? dc__int_saturate<D>(s) : (D)s;
  }
}
#undef DC__ROUNDED
template <class D, int SAT, int MODE, class X>
static __forceinline__ D dc__convert(const X& x) {
  static_assert(dc__shape<D>::n == dc__shape<X>::n,
                "dclua: convert_ needs an operand with as many components "
                "as its result type");
  typedef typename dc__shape<D>::elem E;
  D r;
  for (int i = 0; i < dc__shape<D>::n; ++i) {
    dc__set(r, i, dc__convert_lane<E, SAT, MODE>(dc__get(x, i)));
  }
  return r;
}

// as_<T>(x): x's bits as T, which must have x's size.
template <class D, class X>
static __forceinline__ D dc__as(const X& x) {
  static_assert(sizeof(D) == sizeof(X),
                "dclua: as_ needs an operand of the size of its result type");
  D r;
  memcpy(&r, &x, sizeof r);
  return r;
}

//===-- vload and vstore --------------------------------------------------===//

// vloadN(offset, p) reads the N elements at p + offset * N, vstoreN
// writes them; the address need not be aligned (one vector access when it
// is, element by element when not). vload3 and vstore3 move 3 elements,
// never the 4-lane slot that a 3-lane vector takes in memory.
template <class T>
struct dc__unqualified {
  typedef T type;
};
template <class T>
struct dc__unqualified<const T> {
  typedef T type;
};
template <int N, class T>
static __forceinline__ dc__vec<typename dc__unqualified<T>::type, N> dc__vload(
    size_t offset, T* p) {
  typedef dc__vec<typename dc__unqualified<T>::type, N> V;
  const T* q = p + offset * N;
  if (N != 3 && (uintptr_t)q % alignof(V) == 0) return *(const V*)q;
  V r{};  // a 3-lane vector's padding slot 0, as on the CPU
  for (int i = 0; i < N; ++i) r.s[i] = q[i];
  return r;
}
template <int N, class V, class T>
static __forceinline__ void dc__vstore(const V& data, size_t offset, T* p) {
  static_assert(dc__same<V, dc__vec<T, N>>::value,
                "dclua: vstore needs a vector of N lanes of the pointer's "
                "type");
  T* q = p + offset * N;
  if (N != 3 && (uintptr_t)q % alignof(V) == 0) {
    *(V*)q = data;
    return;
  }
  for (int i = 0; i < N; ++i) q[i] = data.s[i];
}

#undef DC__LATER_ARG
#undef DC__VEC1
#undef DC__VEC2
#undef DC__VEC3
#undef DC__FLIFT1
#undef DC__FLIFT2
#undef DC__FLIFT3
#undef DC__FLOATING
#undef DC__INTEGER

//===-- OpenCL's names ----------------------------------------------------===//

#define char2 dc_char2
#define char3 dc_char3
#define char4 dc_char4
#define char8 dc_char8
#define char16 dc_char16
#define uchar2 dc_uchar2
#define uchar3 dc_uchar3
#define uchar4 dc_uchar4
#define uchar8 dc_uchar8
#define uchar16 dc_uchar16
#define short2 dc_short2
#define short3 dc_short3
#define short4 dc_short4
#define short8 dc_short8
#define short16 dc_short16
#define ushort2 dc_ushort2
#define ushort3 dc_ushort3
#define ushort4 dc_ushort4
#define ushort8 dc_ushort8
#define ushort16 dc_ushort16
#define int2 dc_int2
#define int3 dc_int3
#define int4 dc_int4
#define int8 dc_int8
#define int16 dc_int16
#define uint2 dc_uint2
#define uint3 dc_uint3
#define uint4 dc_uint4
#define uint8 dc_uint8
#define uint16 dc_uint16
#define long2 dc_long2
#define long3 dc_long3
#define long4 dc_long4
#define long8 dc_long8
#define long16 dc_long16
#define ulong2 dc_ulong2
#define ulong3 dc_ulong3
#define ulong4 dc_ulong4
#define ulong8 dc_ulong8
#define ulong16 dc_ulong16
#define float2 dc_float2
#define float3 dc_float3
#define float4 dc_float4
#define float8 dc_float8
#define float16 dc_float16
#define double2 dc_double2
#define double3 dc_double3
#define double4 dc_double4
#define double8 dc_double8
#define double16 dc_double16

#define acos dc__acos
#define acosh dc__acosh
#define acospi dc__acospi
#define asin dc__asin
#define asinh dc__asinh
#define asinpi dc__asinpi
#define atan dc__atan
#define atan2 dc__atan2
#define atanh dc__atanh
#define atanpi dc__atanpi
#define atan2pi dc__atan2pi
#define cbrt dc__cbrt
#define ceil dc__ceil
#define copysign dc__copysign
#define cos dc__cos
#define cosh dc__cosh
#define cospi dc__cospi
#define erfc dc__erfc
#define erf dc__erf
#define exp dc__exp
#define exp2 dc__exp2
#define exp10 dc__exp10
#define expm1 dc__expm1
#define fabs dc__fabs
#define fdim dc__fdim
#define floor dc__floor
#define fma dc__fma
#define fmax dc__fmax
#define fmin dc__fmin
#define fmod dc__fmod
#define fract dc__fract
#define frexp dc__frexp
#define hypot dc__hypot
#define ilogb dc__ilogb
#define ldexp dc__ldexp
#define lgamma dc__lgamma
#define lgamma_r dc__lgamma_r
#define log dc__log
#define log2 dc__log2
#define log10 dc__log10
#define log1p dc__log1p
#define logb dc__logb
#define mad dc__mad
#define maxmag dc__maxmag
#define minmag dc__minmag
#define modf dc__modf
#define nan dc__nan
#define nextafter dc__nextafter
#define pow dc__pow
#define pown dc__pown
#define powr dc__powr
#define remainder dc__remainder
#define remquo dc__remquo
#define rint dc__rint
#define rootn dc__rootn
#define round dc__round
#define rsqrt dc__rsqrt
#define sin dc__sin
#define sincos dc__sincos
#define sinh dc__sinh
#define sinpi dc__sinpi
#define sqrt dc__sqrt
#define tan dc__tan
#define tanh dc__tanh
#define tanpi dc__tanpi
#define tgamma dc__tgamma
#define trunc dc__trunc
#define degrees dc__degrees
#define radians dc__radians
#define sign dc__sign
#define mix dc__mix
#define step dc__step
#define smoothstep dc__smoothstep
#define native_cos dc__native_cos
#define native_divide dc__native_divide
#define native_exp dc__native_exp
#define native_exp2 dc__native_exp2
#define native_exp10 dc__native_exp10
#define native_log dc__native_log
#define native_log2 dc__native_log2
#define native_log10 dc__native_log10
#define native_powr dc__native_powr
#define native_recip dc__native_recip
#define native_rsqrt dc__native_rsqrt
#define native_sin dc__native_sin
#define native_sqrt dc__native_sqrt
#define native_tan dc__native_tan
#define half_cos dc__cos
#define half_divide dc__half_divide
#define half_exp dc__exp
#define half_exp2 dc__exp2
#define half_exp10 dc__exp10
#define half_log dc__log
#define half_log2 dc__log2
#define half_log10 dc__log10
#define half_powr dc__powr
#define half_recip dc__half_recip
#define half_rsqrt dc__rsqrt
#define half_sin dc__sin
#define half_sqrt dc__sqrt
#define half_tan dc__tan

#define abs dc__abs
#define abs_diff dc__abs_diff
#define add_sat dc__add_sat
#define clamp dc__clamp
#define clz dc__clz
#define hadd dc__hadd
#define mad24 dc__mad24
#define mad_hi dc__mad_hi
#define mad_sat dc__mad_sat
#define max dc__max
#define min dc__min
#define mul24 dc__mul24
#define mul_hi dc__mul_hi
#define popcount dc__popcount
#define rhadd dc__rhadd
#define rotate dc__rotate
#define sub_sat dc__sub_sat
#define upsample dc__upsample

#define dot dc__dot
#define cross dc__cross
#define distance dc__distance
#define length dc__length
#define normalize dc__normalize
#define fast_distance dc__fast_distance
#define fast_length dc__fast_length
#define fast_normalize dc__fast_normalize

#define isequal dc__isequal
#define isnotequal dc__isnotequal
#define isgreater dc__isgreater
#define isgreaterequal dc__isgreaterequal
#define isless dc__isless
#define islessequal dc__islessequal
#define islessgreater dc__islessgreater
#define isfinite dc__isfinite
#define isinf dc__isinf
#define isnan dc__isnan
#define isnormal dc__isnormal
#define signbit dc__signbit
#define isordered dc__isordered
#define isunordered dc__isunordered
#define any dc__any
#define all dc__all
#define bitselect dc__bitselect
#define select dc__select

#define mem_fence dc__mem_fence
#define read_mem_fence dc__mem_fence
#define write_mem_fence dc__mem_fence

#define atomic_add dc__atomic_add
#define atomic_sub dc__atomic_sub
#define atomic_inc dc__atomic_inc
#define atomic_dec dc__atomic_dec
#define atomic_and dc__atomic_and
#define atomic_or dc__atomic_or
#define atomic_xor dc__atomic_xor
#define atomic_xchg dc__atomic_xchg
#define atomic_cmpxchg dc__atomic_cmpxchg
#define atomic_min dc__atomic_min
#define atomic_max dc__atomic_max
#define atom_add dc__atomic_add
#define atom_sub dc__atomic_sub
#define atom_inc dc__atomic_inc
#define atom_dec dc__atomic_dec
#define atom_and dc__atomic_and
#define atom_or dc__atomic_or
#define atom_xor dc__atomic_xor
#define atom_xchg dc__atomic_xchg
#define atom_cmpxchg dc__atomic_cmpxchg
#define atom_min dc__atomic_min
#define atom_max dc__atomic_max

// async_work_group_strided_copy is never written: the code generator
// spells its direction (dc_async_strided_copy_g2l or _l2g).
#define async_work_group_copy dc__async_work_group_copy
#define prefetch dc__prefetch

#endif  // DC_CUDA_PRELUDE_BUILTINS_H_

// lower_cuda_prelude.h: OpenCL C 1.2 types and the core of the language for
// kernels that the CUDA device has translated into CUDA C++ (see
// lower_cuda.c and docs/cuda.md ("Kernels")). NVRTC compiles it, with
// lower_cuda_prelude_math.h and lower_cuda_prelude_builtins.h after it, in front of
// every program, as the header "dclua_prelude.cuh".
//
// Why C++. NVRTC compiles C++, so where the CPU prelude needs _Generic
// macros, this one uses overloads, templates and operator overloading:
// OpenCL's vector types are one template, dc__vec<T, N>, whose operators
// work lane by lane, and a built-in is a small set of overloads (scalar,
// vector, integer argument) that the compiler inlines. Everything here is
// a device function: programs are compiled with -default-device.
//
// Names. Internal names start with dc__ (which kernel sources cannot
// declare). The OpenCL names that kernels use (float4, sin, min, ...) are
// object-like macros, defined at the very end of lower_cuda_prelude_builtins.h,
// that rename them to the prelude's own: after the CUDA headers that NVRTC
// includes implicitly, so CUDA's own float4, sin and min stay untouched,
// and object-like, so a kernel variable that happens to be called `step`
// is renamed consistently and still works.
//
// What the code generator relies on: dc__launch_t (the launch record every
// kernel receives first and passes to its helpers as _wi), dc__smem (the
// dynamic shared memory holding __local arguments), the dc_<type>N
// vector types with their operator[] and dc__swizzle (components),
// select (a vector ?:), dc__convert, dc__as, dc__vload, dc__vstore,
// dc_async_strided_copy_g2l and _l2g (the spellings of
// async_work_group_strided_copy's two directions), and with
// DC__GRID_SYNC or DC__CHECKED defined, the grid barrier and checked
// mode (dc_fptr, DC_AT, DC_SPAN, DC_AIDX, DC_POLL, dc__cwi_t).
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_PRELUDE_H_
#define DC_CUDA_PRELUDE_H_

//===-- Scalar types ------------------------------------------------------===//

// OpenCL's char is signed: the code generator writes it as dc_char. long
// is 64 bits on every target NVRTC compiles for (LP64 hosts).
typedef signed char dc_char;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef long intptr_t;
typedef unsigned long uintptr_t;
// The handle of an async copy (see "Async copies" below): a 64-bit
// integer, as large as the front end takes event_t to be.
typedef long event_t;
static_assert(sizeof(long) == 8 && sizeof(void*) == 8,
              "dclua: the CUDA prelude assumes 64-bit long and pointers");

#define restrict __restrict__

//===-- Constants (OpenCL C 1.2 sections 6.12.2 and 6.12.3) ---------------===//

#define CHAR_BIT 8
#define SCHAR_MAX 127
#define SCHAR_MIN (-127 - 1)
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define UCHAR_MAX 255
#define SHRT_MAX 32767
#define SHRT_MIN (-32767 - 1)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 0xffffffffU
#define LONG_MAX 0x7fffffffffffffffL
#define LONG_MIN (-0x7fffffffffffffffL - 1)
#define ULONG_MAX 0xffffffffffffffffUL

#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_10_EXP 38
#define FLT_MAX_EXP 128
#define FLT_MIN_10_EXP (-37)
#define FLT_MIN_EXP (-125)
#define FLT_RADIX 2
#define FLT_MAX 0x1.fffffep127f
#define FLT_MIN 0x1.0p-126f
#define FLT_EPSILON 0x1.0p-23f
#define DBL_DIG 15
#define DBL_MANT_DIG 53
#define DBL_MAX_10_EXP 308
#define DBL_MAX_EXP 1024
#define DBL_MIN_10_EXP (-307)
#define DBL_MIN_EXP (-1021)
#define DBL_MAX 0x1.fffffffffffffp1023
#define DBL_MIN 0x1.0p-1022
#define DBL_EPSILON 0x1.0p-52

#define HUGE_VALF __int_as_float(0x7f800000)
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#define INFINITY HUGE_VALF
#define NAN __int_as_float(0x7fc00000)
#define MAXFLOAT FLT_MAX
#define FP_ILOGB0 INT_MIN
#define FP_ILOGBNAN INT_MAX

#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f
#define M_E 2.71828182845904523536
#define M_LOG2E 1.44269504088896340736
#define M_LOG10E 0.434294481903251827651
#define M_LN2 0.693147180559945309417
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.785398163397448309616
#define M_1_PI 0.318309886183790671538
#define M_2_PI 0.636619772367581343076
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.707106781186547524401

//===-- Type traits -------------------------------------------------------===//

// NVRTC has no standard library headers without an include path, so the
// few traits the built-ins need are here. dc__t<T> describes a scalar:
// kind, signedness, width, the unsigned and signed types of its width
// (|uns|, |sgn|) and the lane type of a comparison's result (|mask|: the
// signed integer as wide as T; for float int, for double long).
template <bool B, class T = int>
struct dc__enable_if {};
template <class T>
struct dc__enable_if<true, T> {
  typedef T type;
};
#define DC__IF(...) typename dc__enable_if<(__VA_ARGS__), int>::type = 0

template <class A, class B>
struct dc__same {
  enum { value = 0 };
};
template <class A>
struct dc__same<A, A> {
  enum { value = 1 };
};

template <class T>
struct dc__t {
  enum { is_scalar = 0, is_int = 0, is_float = 0 };
};
#define DC__INT_TRAITS(T, S, U, M)                           \
  template <>                                                \
  struct dc__t<T> {                                          \
    enum { is_scalar = 1, is_int = 1, is_float = 0 };        \
    enum { is_signed = (T)-1 < (T)0, bits = 8 * sizeof(T) }; \
    typedef U uns;                                           \
    typedef S sgn;                                           \
    typedef M mask;                                          \
  };
DC__INT_TRAITS(bool, dc_char, uchar, dc_char)
DC__INT_TRAITS(char, dc_char, uchar, dc_char)
DC__INT_TRAITS(dc_char, dc_char, uchar, dc_char)
DC__INT_TRAITS(uchar, dc_char, uchar, dc_char)
DC__INT_TRAITS(short, short, ushort, short)
DC__INT_TRAITS(ushort, short, ushort, short)
DC__INT_TRAITS(int, int, uint, int)
DC__INT_TRAITS(uint, int, uint, int)
DC__INT_TRAITS(long, long, ulong, long)
DC__INT_TRAITS(ulong, long, ulong, long)
DC__INT_TRAITS(long long, long long, unsigned long long, long)
DC__INT_TRAITS(unsigned long long, long long, unsigned long long, long)
#undef DC__INT_TRAITS
#define DC__FLOAT_TRAITS(T, M, U)                     \
  template <>                                         \
  struct dc__t<T> {                                   \
    enum { is_scalar = 1, is_int = 0, is_float = 1 }; \
    enum { is_signed = 1, bits = 8 * sizeof(T) };     \
    typedef U uns;                                    \
    typedef M sgn;                                    \
    typedef M mask;                                   \
  };
DC__FLOAT_TRAITS(float, int, uint)
DC__FLOAT_TRAITS(double, long, ulong)
#undef DC__FLOAT_TRAITS

//===-- Vector types ------------------------------------------------------===//

// An OpenCL vector: N lanes of T (N = 2, 3, 4, 8, 16), aligned to its size
// up to 16 bytes (the widest load the GPU makes in one instruction), so a
// float4 moves as one 128-bit load. A 3-lane vector has the size and
// alignment of a 4-lane one (OpenCL C 6.1.5): its 4th slot is padding,
// which no operation reads. Trivially constructible, so it can
// live in __shared__ memory, and constexpr-constructible, so program-scope
// __constant vectors are constant-initialised. A scalar converts to a
// vector implicitly (every lane gets it), as OpenCL allows in assignments.
#define DC__SLOTS(N) ((N) == 3 ? 4 : (N))
template <class T, int N>
struct alignas(sizeof(T) * DC__SLOTS(N) < 16 ? sizeof(T) * DC__SLOTS(N)
                                             : 16) dc__vec {
  T s[DC__SLOTS(N)];
  dc__vec() = default;
  template <class S, DC__IF(dc__t<S>::is_scalar)>
  constexpr dc__vec(S x) : s{} {
    for (int i = 0; i < N; ++i) s[i] = T(x);
  }
  template <class A, class B, class... R, DC__IF(2 + sizeof...(R) == N)>
  constexpr dc__vec(A a, B b, R... r) : s{T(a), T(b), T(r)...} {}
  constexpr T& operator[](int i) { return s[i]; }
  constexpr const T& operator[](int i) const { return s[i]; }
  template <class U>
  dc__vec& operator+=(const U& o);
  template <class U>
  dc__vec& operator-=(const U& o);
  template <class U>
  dc__vec& operator*=(const U& o);
  template <class U>
  dc__vec& operator/=(const U& o);
  template <class U>
  dc__vec& operator%=(const U& o);
  template <class U>
  dc__vec& operator&=(const U& o);
  template <class U>
  dc__vec& operator|=(const U& o);
  template <class U>
  dc__vec& operator^=(const U& o);
  template <class U>
  dc__vec& operator<<=(const U& o);
  template <class U>
  dc__vec& operator>>=(const U& o);
  dc__vec& operator++() {
    for (int i = 0; i < N; ++i) ++s[i];
    return *this;
  }
  dc__vec& operator--() {
    for (int i = 0; i < N; ++i) --s[i];
    return *this;
  }
  dc__vec operator++(int) {
    dc__vec old = *this;
    ++*this;
    return old;
  }
  dc__vec operator--(int) {
    dc__vec old = *this;
    --*this;
    return old;
  }
};

#define DC__VECTORS(E, P)          \
  typedef dc__vec<E, 2> dc_##P##2; \
  typedef dc__vec<E, 3> dc_##P##3; \
  typedef dc__vec<E, 4> dc_##P##4; \
  typedef dc__vec<E, 8> dc_##P##8; \
  typedef dc__vec<E, 16> dc_##P##16;
DC__VECTORS(dc_char, char)
DC__VECTORS(uchar, uchar)
DC__VECTORS(short, short)
DC__VECTORS(ushort, ushort)
DC__VECTORS(int, int)
DC__VECTORS(uint, uint)
DC__VECTORS(long, long)
DC__VECTORS(ulong, ulong)
DC__VECTORS(float, float)
DC__VECTORS(double, double)
#undef DC__VECTORS

// dc__shape<X>: a scalar or vector type's lanes: |elem|, |n| (1 for a
// scalar) and with<E>, the type of the same shape with lanes of E.
template <class X>
struct dc__shape {
  typedef X elem;
  enum { n = 1 };
  template <class E>
  using with = E;
};
template <class T, int N>
struct dc__shape<dc__vec<T, N>> {
  typedef T elem;
  enum { n = N };
  template <class E>
  using with = dc__vec<E, N>;
};

// Uniform lane access: a scalar is its own lane 0 (and every lane, when it
// is broadcast against a vector).
template <class X>
static __forceinline__ X dc__get(const X& x, int) {
  return x;
}
template <class T, int N>
static __forceinline__ T dc__get(const dc__vec<T, N>& v, int i) {
  return v.s[i];
}
template <class X, class E>
static __forceinline__ void dc__set(X& x, int, E e) {
  x = X(e);
}
template <class T, int N, class E>
static __forceinline__ void dc__set(dc__vec<T, N>& v, int i, E e) {
  v.s[i] = T(e);
}

// Operators lane by lane, for vector op vector, vector op scalar and
// scalar op vector; the scalar is converted to the lane type first, as
// OpenCL widens it. Arithmetic keeps the lane type (no promotion of char
// and short lanes); comparisons and logical operators give the signed
// integer vector of the same lane width, with lanes of -1 (true) or 0.
#define DC__BINARY(op, RES, LANE)                                              \
  template <class T, int N>                                                    \
  static __forceinline__ dc__vec<RES, N> operator op(const dc__vec<T, N>& a,   \
                                                     const dc__vec<T, N>& b) { \
    dc__vec<RES, N> r;                                                         \
    for (int i = 0; i < N; ++i) r.s[i] = (RES)(LANE(a.s[i], op, b.s[i]));      \
    return r;                                                                  \
  }                                                                            \
  template <class T, int N, class S, DC__IF(dc__t<S>::is_scalar)>              \
  static __forceinline__ dc__vec<RES, N> operator op(const dc__vec<T, N>& a,   \
                                                     S b) {                    \
    T c = T(b);                                                                \
    dc__vec<RES, N> r;                                                         \
    for (int i = 0; i < N; ++i) r.s[i] = (RES)(LANE(a.s[i], op, c));           \
    return r;                                                                  \
  }                                                                            \
  template <class T, int N, class S, DC__IF(dc__t<S>::is_scalar)>              \
  static __forceinline__ dc__vec<RES, N> operator op(S a,                      \
                                                     const dc__vec<T, N>& b) { \
    T c = T(a);                                                                \
    dc__vec<RES, N> r;                                                         \
    for (int i = 0; i < N; ++i) r.s[i] = (RES)(LANE(c, op, b.s[i]));           \
    return r;                                                                  \
  }
#define DC__ARITH_LANE(x, op, y) ((x)op(y))
#define DC__MASK_LANE(x, op, y) (((x)op(y)) ? -1 : 0)
#define DC__MASK typename dc__t<T>::mask
DC__BINARY(+, T, DC__ARITH_LANE)
DC__BINARY(-, T, DC__ARITH_LANE)
DC__BINARY(*, T, DC__ARITH_LANE)
DC__BINARY(/, T, DC__ARITH_LANE)
DC__BINARY(%, T, DC__ARITH_LANE)
DC__BINARY(&, T, DC__ARITH_LANE)
DC__BINARY(|, T, DC__ARITH_LANE)
DC__BINARY(^, T, DC__ARITH_LANE)
DC__BINARY(<<, T, DC__ARITH_LANE)
DC__BINARY(>>, T, DC__ARITH_LANE)
DC__BINARY(==, DC__MASK, DC__MASK_LANE)
DC__BINARY(!=, DC__MASK, DC__MASK_LANE)
DC__BINARY(<, DC__MASK, DC__MASK_LANE)
DC__BINARY(>, DC__MASK, DC__MASK_LANE)
DC__BINARY(<=, DC__MASK, DC__MASK_LANE)
DC__BINARY(>=, DC__MASK, DC__MASK_LANE)
DC__BINARY(&&, DC__MASK, DC__MASK_LANE)
DC__BINARY(||, DC__MASK, DC__MASK_LANE)
#undef DC__BINARY
#undef DC__ARITH_LANE
#undef DC__MASK_LANE

#define DC__UNARY(op, RES, EXPR)                                               \
  template <class T, int N>                                                    \
  static __forceinline__ dc__vec<RES, N> operator op(const dc__vec<T, N>& a) { \
    dc__vec<RES, N> r;                                                         \
    for (int i = 0; i < N; ++i) r.s[i] = (RES)(EXPR);                          \
    return r;                                                                  \
  }
DC__UNARY(-, T, -a.s[i])
DC__UNARY(+, T, +a.s[i])
DC__UNARY(~, T, ~a.s[i])
DC__UNARY(!, DC__MASK, a.s[i] == 0 ? -1 : 0)
#undef DC__UNARY
#undef DC__MASK

#define DC__COMPOUND(op, base)                                            \
  template <class T, int N>                                               \
  template <class U>                                                      \
  __forceinline__ dc__vec<T, N>& dc__vec<T, N>::operator op(const U& o) { \
    *this = *this base o;                                                 \
    return *this;                                                         \
  }
DC__COMPOUND(+=, +)
DC__COMPOUND(-=, -)
DC__COMPOUND(*=, *)
DC__COMPOUND(/=, /)
DC__COMPOUND(%=, %)
DC__COMPOUND(&=, &)
DC__COMPOUND(|=, |)
DC__COMPOUND(^=, ^)
DC__COMPOUND(<<=, <<)
DC__COMPOUND(>>=, >>)
#undef DC__COMPOUND

//===-- Division by a constant --------------------------------------------===//
//
// A correctly rounded float division ends in a branch to a slow path for
// rare operands, and the device compiler moves no later load above that
// branch: a stencil that divides waits for each load in turn. On GPUs
// whose doubles run at half the float rate (P100, V100, A100, H100 and
// H200, B200: DC__FAST_DOUBLES) a division by a constant gives the same
// result in a few double operations without a branch; elsewhere, and
// under --use_fast_math (whose approximate division is faster still), it
// stays CUDA's own. (A square root done so, in float or double
// arithmetic, made Sobel slower on an H200 than CUDA's sqrtf: it stays
// CUDA's.)

#if defined(__CUDA_ARCH__) &&                                           \
    (__CUDA_ARCH__ == 600 || __CUDA_ARCH__ == 700 ||                    \
     __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000)
#define DC__FAST_DOUBLES 1
#else
#define DC__FAST_DOUBLES 0
#endif

// x / c for a float constant c, as the generator writes it (r is the
// double nearest 1/c). In double, x r is within 1.5 ulps of x / c, so one
// fma gives its remainder exactly and one more the double nearest x / c
// (x / c itself where that is a double); rounding that to float is
// rounding x / c (cgen_expr.c, reciprocal_divisor, says why). Zeros,
// infinities and NaN keep the product, which has the right sign.
static __forceinline__ float dc__div_by(float x, double r, double c) {
#if DC__FAST_DOUBLES && !__USE_FAST_MATH__
  double q = (double)x * r;
  double fixed = fma(fma(-q, c, (double)x), r, q);
  return (float)(isfinite(q) && q != 0.0 ? fixed : q);
#else
  (void)r;
  return x / (float)c;
#endif
}

//===-- Components --------------------------------------------------------===//

// The code generator writes v.x as v[0] (dc__vec's operator[], a
// reference) and v.xy, v.s0123 as dc__swizzle<I...>(v), a new vector;
// .hi and .odd of a 3-lane v take its padding slot 3 as their undefined
// lane (OpenCL C 6.1.7). The prelude's built-ins take halves with dc__lo
// and the rest (a scalar for a 2-lane v).

template <int... I>
struct dc__max_index {
  enum { value = 0 };
};
template <int F, int... R>
struct dc__max_index<F, R...> {
  enum {
    value = F > (int)dc__max_index<R...>::value
                ? F
                : (int)dc__max_index<R...>::value
  };
};
template <int... I, class T, int N>
static __forceinline__ dc__vec<T, sizeof...(I)> dc__swizzle(
    const dc__vec<T, N>& v) {
  static_assert(dc__max_index<I...>::value < DC__SLOTS(N),
                "dclua: vector component out of range");
  return dc__vec<T, sizeof...(I)>(v.s[I]...);
}

template <int FIRST, int STEP, class T, int N>
static __forceinline__ dc__vec<T, DC__SLOTS(N) / 2> dc__half(
    const dc__vec<T, N>& v) {
  dc__vec<T, DC__SLOTS(N) / 2> r;
  for (int i = 0; i < DC__SLOTS(N) / 2; ++i) r.s[i] = v.s[FIRST + STEP * i];
  return r;
}
template <int FIRST, int STEP, class T>
static __forceinline__ T dc__half(const dc__vec<T, 2>& v) {
  return v.s[FIRST];
}
template <class T, int N>
static __forceinline__ auto dc__lo(const dc__vec<T, N>& v) {
  return dc__half<0, 1>(v);
}
template <class T, int N>
static __forceinline__ auto dc__hi(const dc__vec<T, N>& v) {
  return dc__half<DC__SLOTS(N) / 2, 1>(v);
}
template <class T, int N>
static __forceinline__ auto dc__even(const dc__vec<T, N>& v) {
  return dc__half<0, 2>(v);
}
template <class T, int N>
static __forceinline__ auto dc__odd(const dc__vec<T, N>& v) {
  return dc__half<1, 2>(v);
}


//===-- Work-item functions -----------------------------------------------===//

// The launch record, the first argument of every kernel (the engine fills
// it, cuda_dispatch.c has the same layout) and of every helper function
// (as _wi): what the CUDA built-in variables do not give.
struct dc__launch_t {
  uint dims;
  unsigned long long offset[3];
  unsigned long long watchdog_ns;  // checked kernels: 0, or their limit
  // Checked kernels run in slices of the dispatch (dc_launch_slicer_t,
  // dc/backend.h): the slice's first group, and the dispatch's groups.
  unsigned long long group_base[3];
  unsigned long long groups[3];
};
static __forceinline__ unsigned long long dc__globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// __local arguments live in the group's dynamic shared memory, at byte
// offsets the engine passes as kernel arguments.
extern __shared__ __align__(16) unsigned char dc__smem[];

// Dimensions past 2 give OpenCL's 0 (ids, offsets) or 1 (sizes); past the
// dispatch's dimensions the CUDA values are already 0 and 1. The
// arithmetic is in size_t, as get_global_id returns it.
#define DC__PICK(d, v, other) \
  ((d) == 0   ? (size_t)v.x   \
   : (d) == 1 ? (size_t)v.y   \
   : (d) == 2 ? (size_t)v.z   \
              : (size_t)(other))
static __forceinline__ size_t dc__local_id(uint d) {
  return DC__PICK(d, threadIdx, 0);
}
static __forceinline__ size_t dc__group_id(uint d) {
  return DC__PICK(d, blockIdx, 0);
}
static __forceinline__ size_t dc__local_size(uint d) {
  return DC__PICK(d, blockDim, 1);
}
static __forceinline__ size_t dc__num_groups(uint d) {
  return DC__PICK(d, gridDim, 1);
}
static __forceinline__ size_t dc__global_size(uint d) {
  return dc__num_groups(d) * dc__local_size(d);
}
static __forceinline__ size_t dc__global_offset(const dc__launch_t& l, uint d) {
  return d < 3 ? (size_t)l.offset[d] : 0;
}
static __forceinline__ size_t dc__global_id(const dc__launch_t& l, uint d) {
  return dc__global_offset(l, d) + dc__group_id(d) * dc__local_size(d) +
         dc__local_id(d);
}
#undef DC__PICK
#define get_work_dim() ((uint)_wi.dims)
#define get_global_id(d) dc__global_id(_wi, (uint)(d))
#define get_global_offset(d) dc__global_offset(_wi, (uint)(d))
#define get_local_id(d) dc__local_id((uint)(d))
#define get_group_id(d) dc__group_id((uint)(d))
#define get_local_size(d) dc__local_size((uint)(d))
#define get_enqueued_local_size(d) dc__local_size((uint)(d))
#define get_global_size(d) dc__global_size((uint)(d))
#define get_num_groups(d) dc__num_groups((uint)(d))

// Thread coarsening (lower_cuda.c): a kernel whose work-items depend on
// neither each other nor the shape of their group also has the entry
// dc_k4_K, whose threads each run DC__ITEMS work-items of the launch's
// last dimension in turn, over a grid of 1/DC__ITEMS the groups in that
// dimension: thread t of group g runs items (g * DC__ITEMS + k) * size + t,
// so that a warp's accesses stay as contiguous as in the plain launch.
// Item k sees a launch record of its own whose offset says where it is.
#define DC__ITEMS 4
static __forceinline__ dc__launch_t dc__item_record(dc__launch_t l, uint k) {
  if (l.dims == 1) {
    l.offset[0] += ((size_t)blockIdx.x * (DC__ITEMS - 1) + k) * blockDim.x;
  } else if (l.dims == 2) {
    l.offset[1] += ((size_t)blockIdx.y * (DC__ITEMS - 1) + k) * blockDim.y;
  } else {
    l.offset[2] += ((size_t)blockIdx.z * (DC__ITEMS - 1) + k) * blockDim.z;
  }
  return l;
}
// A 2-D launch's items: thread t of group g (in dimension 1) runs rows
// (g * size + t) * DC__ITEMS + k, consecutive, of the same columns, so
// that row y + 1 of one item is row y of the next one as the compiler
// sees it (a stencil's shared loads), while a warp, which spans
// dimension 0, stays as contiguous as in the plain launch.
static __forceinline__ dc__launch_t dc__row_record(dc__launch_t l, uint k) {
  size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
  l.offset[1] += row * (DC__ITEMS - 1) + k;
  return l;
}

//===-- Fences ------------------------------------------------------------===//

// barrier() is the code generator's (__syncthreads()). A fence orders the
// work-item's accesses to both address spaces, whatever the flags.
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
static __forceinline__ void dc__mem_fence(int flags) {
  (void)flags;
  __threadfence();
}

//===-- Atomics -----------------------------------------------------------===//

// OpenCL 1.2's atomic_* (32-bit int and uint, atomic_xchg also float) and
// atom_* (also 64-bit long and ulong; double for xchg), through any
// pointer, __global or __local: CUDA's atomics take generic addresses.
// Relaxed, as OpenCL 1.2's are. Each returns the old value.
#define DC__ATOMIC32(name, T, expr)                                 \
  static __forceinline__ T dc__atomic_##name(volatile T* vp, T v) { \
    T* p = (T*)vp;                                                  \
    return expr;                                                    \
  }
#define DC__ATOMIC64(name, T, expr)                                 \
  static __forceinline__ T dc__atomic_##name(volatile T* vp, T v) { \
    unsigned long long* p = (unsigned long long*)vp;                \
    unsigned long long u = (unsigned long long)v;                   \
    (void)u;                                                        \
    return (T)(expr);                                               \
  }
#define DC__ATOMIC_INTS(name, expr32, expr64) \
  DC__ATOMIC32(name, int, expr32)             \
  DC__ATOMIC32(name, uint, expr32)            \
  DC__ATOMIC64(name, long, expr64)            \
  DC__ATOMIC64(name, ulong, expr64)
DC__ATOMIC_INTS(add, atomicAdd(p, v), atomicAdd(p, u))
DC__ATOMIC_INTS(sub, atomicSub(p, v), atomicAdd(p, 0ull - u))
DC__ATOMIC_INTS(and, atomicAnd(p, v), atomicAnd(p, u))
DC__ATOMIC_INTS(or, atomicOr(p, v), atomicOr(p, u))
DC__ATOMIC_INTS(xor, atomicXor(p, v), atomicXor(p, u))
DC__ATOMIC_INTS(xchg, atomicExch(p, v), atomicExch(p, u))
DC__ATOMIC32(min, int, atomicMin(p, v))
DC__ATOMIC32(min, uint, atomicMin(p, v))
DC__ATOMIC32(max, int, atomicMax(p, v))
DC__ATOMIC32(max, uint, atomicMax(p, v))
DC__ATOMIC64(min, long, atomicMin((long long*)p, (long long)v))
DC__ATOMIC64(min, ulong, atomicMin(p, u))
DC__ATOMIC64(max, long, atomicMax((long long*)p, (long long)v))
DC__ATOMIC64(max, ulong, atomicMax(p, u))
DC__ATOMIC32(xchg, float, atomicExch(p, v))
#undef DC__ATOMIC_INTS
#undef DC__ATOMIC32
#undef DC__ATOMIC64
static __forceinline__ double dc__atomic_xchg(volatile double* p, double v) {
  return __longlong_as_double((long long)atomicExch(
      (unsigned long long*)p, (unsigned long long)__double_as_longlong(v)));
}
#define DC__ATOMIC_CMPXCHG(T, U)                                           \
  static __forceinline__ T dc__atomic_cmpxchg(volatile T* p, T cmp, T v) { \
    return (T)atomicCAS((U*)p, (U)cmp, (U)v);                              \
  }                                                                        \
  static __forceinline__ T dc__atomic_inc(volatile T* p) {                 \
    return dc__atomic_add(p, (T)1);                                        \
  }                                                                        \
  static __forceinline__ T dc__atomic_dec(volatile T* p) {                 \
    return dc__atomic_sub(p, (T)1);                                        \
  }
DC__ATOMIC_CMPXCHG(int, int)
DC__ATOMIC_CMPXCHG(uint, uint)
DC__ATOMIC_CMPXCHG(long, unsigned long long)
DC__ATOMIC_CMPXCHG(ulong, unsigned long long)
#undef DC__ATOMIC_CMPXCHG

//===-- Async copies and events -------------------------------------------===//

// async_work_group_copy and async_work_group_strided_copy are cooperative
// copies: the thread with linear id l in its block (threadIdx.x +
// blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) copies elements
// l, l + W, l + 2W, ... (W the block's size). The front end makes
// `wait_group_events(n, events);` a barrier statement, which the code
// generator writes as __syncthreads() and never as a call: after it every
// element is visible to every thread of the block. The stride applies to
// the __global side, so the strided copy's two directions differ, and the
// code generator writes the built-in table's spelling of each:
// dc_async_strided_copy_g2l (to __local: dst[i] = src[i * stride]) and
// dc_async_strided_copy_l2g (to __global: dst[i * stride] = src[i]). The
// event returned is 1 (events carry nothing). prefetch is a hint: it does
// nothing.
template <class T>
static __forceinline__ void dc__async_copy(T* dst, const T* src, size_t n,
                                           size_t dst_stride,
                                           size_t src_stride) {
  size_t first =
      threadIdx.x +
      (size_t)blockDim.x * (threadIdx.y + (size_t)blockDim.y * threadIdx.z);
  size_t step = (size_t)blockDim.x * blockDim.y * blockDim.z;
  for (size_t i = first; i < n; i += step) {
    dst[i * dst_stride] = src[i * src_stride];
  }
}
template <class T>
static __forceinline__ event_t dc__async_work_group_copy(T* dst,
                                                         const T* src,
                                                         size_t n,
                                                         event_t event) {
  (void)event;
  dc__async_copy(dst, src, n, 1, 1);
  return 1;
}
template <class T>
static __forceinline__ event_t dc_async_strided_copy_g2l(T* dst, const T* src,
                                                         size_t n,
                                                         size_t stride,
                                                         event_t event) {
  (void)event;
  dc__async_copy(dst, src, n, 1, stride);
  return 1;
}
template <class T>
static __forceinline__ event_t dc_async_strided_copy_l2g(T* dst, const T* src,
                                                         size_t n,
                                                         size_t stride,
                                                         event_t event) {
  (void)event;
  dc__async_copy(dst, src, n, stride, 1);
  return 1;
}
template <class T>
static __forceinline__ void dc__prefetch(const T* p, size_t n) {
  (void)p;
  (void)n;
}
// A barrier statement in generated code (see above); never evaluated.
#define wait_group_events(num_events, event_list) ((void)0)

//===-- Grid synchronisation (kernels with dc_grid_sync) ------------------===//

// dc_grid_sync() across the blocks of a cooperative launch (every block is
// resident): a sense-reversing barrier in the module's global memory, as
// the CPU's grid barrier in cpu_program.c. Thread 0 of each block arrives
// for its block: it reads the generation, arrives, and the last block to
// arrive resets the count and moves the generation on, which releases the
// others. Fences before and after order every block's memory accesses
// before the barrier ahead of every block's accesses after it.
//
// A block whose kernel returns while another waits (dc_grid_sync reached
// in some work-groups but not in others) would otherwise leave the GPU
// hanging for ever: on leaving the kernel, a block counts itself as
// exited and, if some block is waiting, breaks the barrier; a block that
// arrives after an exit breaks it too, unless the barrier has been
// released meanwhile (exits after a release are normal). A broken barrier
// lets everything through, and the engine reads |broken| after the launch
// and fails the dispatch. The engine zeroes the record before each launch.
#ifdef DC__GRID_SYNC
struct dc__grid_t {
  uint arrived;
  uint generation;
  uint exited;
  uint broken;
};
__device__ dc__grid_t dc__grid;

static __forceinline__ bool dc__first_thread() {
  return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}
static __forceinline__ uint dc__grid_read(uint* p) {
  return *(volatile uint*)p;
}
static __noinline__ void dc__grid_break() {
  atomicExch(&dc__grid.broken, 1u);
  __threadfence();
  atomicAdd(&dc__grid.generation, 1u);
}
static __noinline__ void dc__grid_arrive() {
  uint blocks = gridDim.x * gridDim.y * gridDim.z;
  __threadfence();
  if (dc__grid_read(&dc__grid.broken)) return;
  uint generation = dc__grid_read(&dc__grid.generation);
  __threadfence();
  if (atomicAdd(&dc__grid.arrived, 1u) + 1u == blocks) {
    atomicExch(&dc__grid.arrived, 0u);  // before anyone can arrive again
    __threadfence();
    atomicAdd(&dc__grid.generation, 1u);
    return;
  }
  __threadfence();
  // An exit breaks the barrier only if the barrier still holds: the last
  // block may have arrived since, released it, and it or another block
  // returned, all before this look. exited is read first, then (after a
  // fence) the generation: an exit that came after the release shows it.
  if (dc__grid_read(&dc__grid.exited) != 0u) {
    __threadfence();
    if (dc__grid_read(&dc__grid.generation) == generation) {
      dc__grid_break();  // a block returned without arriving: it never will
      return;
    }
  }
  while (dc__grid_read(&dc__grid.generation) == generation) {
#if __CUDA_ARCH__ >= 700
    __nanosleep(64);
#endif
  }
  __threadfence();
}
static __forceinline__ void dc__grid_sync() {
  __syncthreads();
  if (dc__first_thread()) dc__grid_arrive();
  __syncthreads();
}
// Called by every thread when the kernel body has returned.
static __forceinline__ void dc__grid_exit() {
  __syncthreads();
  if (!dc__first_thread()) return;
  __threadfence();
  atomicAdd(&dc__grid.exited, 1u);
  __threadfence();
  if (dc__grid_read(&dc__grid.arrived) != 0u) dc__grid_break();
}
#endif  // DC__GRID_SYNC

//===-- Checked mode (-dc-checked) -----------------------------------===//

// What checked kernels call (cgen_checked.c): fat pointers, their checks,
// and the loop polls of the watchdog. A failed check or a watchdog stop
// records the fault in dc__fault (which the engine zeroes before the
// launch and reads after it) and ends the work-item there (PTX exit), so
// nothing past the fault runs and no access is made out of bounds.
#ifdef DC__CHECKED
enum { DC_KFAULT_INDEX, DC_KFAULT_POINTER, DC_KFAULT_STOPPED,
       DC_KFAULT_WATCHDOG };
#define DC_ORIGIN_OBJECT (~0u)
#define DC_POLL_EVERY 1024u
struct dc__fault_t {
  int set;  // 0 none, 2 being written, 1 written
  uint kind;
  uint arg;
  uint line;
  long long index;
  unsigned long long length;
  unsigned long long size;
};
__device__ dc__fault_t dc__fault;
// Nonzero (a DC_KFAULT_* kind) once the host stops the dispatch: written
// from a stream of its own while the kernel runs.
__device__ uint dc__stop;

// The kernel's buffer and __local sizes in bytes, one per argument.
template <int K>
struct dc__lengths_t {
  unsigned long long n[K];
};

static __noinline__ __attribute__((noreturn)) void dc__escape(
    uint kind, uint arg, uint line, long long index,
    unsigned long long length, unsigned long long size) {
  if (atomicCAS(&dc__fault.set, 0, 2) == 0) {
    dc__fault.kind = kind;
    dc__fault.arg = arg;
    dc__fault.line = line;
    dc__fault.index = index;
    dc__fault.length = length;
    dc__fault.size = size;
    __threadfence();
    atomicExch(&dc__fault.set, 1);
  }
#ifdef DC__GRID_SYNC
  dc__grid_break();  // no block waits at a grid barrier for this one
#endif
  asm volatile("exit;");
  __builtin_unreachable();
}
// An index into an array of |n|, or the end of the work-item.
template <class I>
static __forceinline__ long long dc__aidx(I index, unsigned long long n,
                                          uint line) {
  long long i = (long long)index;
  if (i >= 0 && (unsigned long long)i < n) return i;
  dc__escape(DC_KFAULT_INDEX, DC_ORIGIN_OBJECT, line, i, n, 1);
}
#define DC_AIDX(i, n, line) dc__aidx(i, n, line)

struct dc_fptr {
  unsigned long long p, lo, hi;
  uint origin;
};
#define DC_FP_NULL (dc_fptr{0, 0, 0, 0})
static __forceinline__ dc_fptr dc_fp(const volatile void* p,
                                     unsigned long long n, uint origin) {
  unsigned long long a = (unsigned long long)p;
  return dc_fptr{a, a, a + n, origin};
}
#define DC_FP_OBJ(p, n) dc_fp(p, n, DC_ORIGIN_OBJECT)
static __forceinline__ dc_fptr dc_fp_add(dc_fptr f, long long bytes) {
  f.p += (unsigned long long)bytes;
  return f;
}
static __forceinline__ dc_fptr dc_fp_step(dc_fptr* f, long long bytes,
                                          int post) {
  dc_fptr old = *f;
  f->p += (unsigned long long)bytes;
  return post ? old : *f;
}
static __noinline__ __attribute__((noreturn)) void dc__fp_fault(
    dc_fptr f, unsigned long long a, unsigned long long size, uint line) {
  dc__escape(DC_KFAULT_POINTER, f.origin, line, (long long)(a - f.lo),
             f.hi - f.lo, size);
}
// The address |index| elements of |size| bytes past f, if |size| bytes
// there lie in f's allocation (modulo 2^64: the address checked is the
// address used).
static __forceinline__ void* dc_fp_at(dc_fptr f, long long index,
                                      unsigned long long size, uint line) {
  unsigned long long a = f.p + (unsigned long long)index * size;
  if (a - f.lo <= f.hi - f.lo && f.hi - a >= size) return (void*)a;
  dc__fp_fault(f, a, size, line);
}
// count elements |stride| elements apart from f: the first and the last
// in the allocation (none for count 0).
static __forceinline__ void* dc_fp_span(dc_fptr f, unsigned long long count,
                                        unsigned long long stride,
                                        unsigned long long size, uint line) {
  if (count == 0) return (void*)f.p;
  unsigned long long room =
      f.p - f.lo <= f.hi - f.lo ? (f.hi - f.p) / size : 0;
  if (room == 0 || (stride != 0 && count - 1 > (room - 1) / stride)) {
    dc__fp_fault(f, f.p + (count - 1) * stride * size, size, line);
  }
  return (void*)f.p;
}
#define DC_AT(f, i, size, line) dc_fp_at(f, i, size, line)
#define DC_SPAN(f, n, stride, size, line) dc_fp_span(f, n, stride, size, line)

// The work-item record of a checked kernel: the launch, with when the
// work-item started (%globaltimer, ns) and its polls left. Its loops poll;
// every DC_POLL_EVERY iterations one reads the host's stop word (from
// memory: the host changes it while the kernel runs) and ends the
// work-item when it is set or when the work-item has run past the
// launch's watchdog_ns.
struct dc__cwi_t : dc__launch_t {
  unsigned long long t0;
  uint polls;
  __device__ explicit dc__cwi_t(const dc__launch_t& l)
      : dc__launch_t(l), t0(dc__globaltimer()), polls(1) {}
};
static __noinline__ void dc__poll(dc__cwi_t& w, uint line) {
  w.polls = DC_POLL_EVERY;
  uint kind = *(volatile uint*)&dc__stop;
  if (kind == 0 && w.watchdog_ns != 0 &&
      dc__globaltimer() - w.t0 > w.watchdog_ns) {
    kind = DC_KFAULT_WATCHDOG;
  }
  if (kind != 0) dc__escape(kind, DC_ORIGIN_OBJECT, line, 0, 0, 0);
}
#define DC_POLL(line)                                \
  do {                                               \
    if (--_wi.polls == 0) dc__poll(_wi, line);       \
  } while (0)

// A checked dispatch runs in slices, each a grid of its own: a group's id
// is the slice's first group plus its own, and the counts the dispatch's.
static __forceinline__ size_t dc__sliced_group_id(const dc__launch_t& l,
                                                  uint d) {
  return d < 3 ? dc__group_id(d) + (size_t)l.group_base[d] : 0;
}
static __forceinline__ size_t dc__sliced_num_groups(const dc__launch_t& l,
                                                    uint d) {
  return d < 3 ? (size_t)l.groups[d] : 1;
}
#undef get_global_id
#undef get_group_id
#undef get_global_size
#undef get_num_groups
#define get_global_id(d)                                  \
  (dc__global_offset(_wi, (uint)(d)) +                    \
   dc__sliced_group_id(_wi, (uint)(d)) *                  \
       dc__local_size((uint)(d)) +                        \
   dc__local_id((uint)(d)))
#define get_group_id(d) dc__sliced_group_id(_wi, (uint)(d))
#define get_global_size(d) \
  (dc__sliced_num_groups(_wi, (uint)(d)) * dc__local_size((uint)(d)))
#define get_num_groups(d) dc__sliced_num_groups(_wi, (uint)(d))
#endif  // DC__CHECKED

#endif  // DC_CUDA_PRELUDE_H_

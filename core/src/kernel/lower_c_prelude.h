// lower_c_prelude.h: OpenCL C 1.2 types and built-in functions for kernels
// lowered to C (lower_c.c) (docs/kernel-builtins.md lists them).
//
// Which sections a kernel needs: the code generator defines DC_NEED_<name>
// for every section whose line below names an identifier the kernel uses
// (DC_NEED_ALL turns all of them on). The core (types, constants,
// work-item functions, fences, vector construction) is always compiled.
// @section DC_NEED_MATH: acos acosh asin asinh atan atanh cbrt ceil cos cosh erfc erf exp exp2 expm1 floor lgamma log log2 log10 log1p logb rint round sin sinh sqrt tan tanh tgamma trunc atan2 fdim fmod hypot nextafter pow remainder fabs copysign fmax fmin mad acospi asinpi atanpi atan2pi cospi sinpi tanpi exp10 rsqrt fma maxmag minmag powr ldexp pown rootn ilogb nan fract modf sincos frexp lgamma_r remquo degrees radians step mix smoothstep sign native_cos native_divide native_exp native_exp2 native_exp10 native_log native_log2 native_log10 native_powr native_recip native_rsqrt native_sin native_sqrt native_tan half_cos half_divide half_exp half_exp2 half_exp10 half_log half_log2 half_log10 half_powr half_recip half_rsqrt half_sin half_sqrt half_tan
// @section DC_NEED_INTEGER: rotate mul_hi mad_hi mad_sat clz popcount mul24 mad24 upsample hadd rhadd abs_diff add_sat sub_sat min max clamp abs
// @section DC_NEED_GEOMETRIC: dot length distance normalize fast_length fast_distance fast_normalize cross
// @section DC_NEED_RELATIONAL: isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater isfinite isinf isnan isnormal signbit isordered isunordered any all bitselect select
// @section DC_NEED_CONVERT: convert_char convert_char_rte convert_char_rtz convert_char_rtp convert_char_rtn convert_char_sat convert_char_sat_rte convert_char_sat_rtz convert_char_sat_rtp convert_char_sat_rtn convert_char2 convert_char2_rte convert_char2_rtz convert_char2_rtp convert_char2_rtn convert_char2_sat convert_char2_sat_rte convert_char2_sat_rtz convert_char2_sat_rtp convert_char2_sat_rtn convert_char4 convert_char4_rte convert_char4_rtz convert_char4_rtp convert_char4_rtn convert_char4_sat convert_char4_sat_rte convert_char4_sat_rtz convert_char4_sat_rtp convert_char4_sat_rtn convert_char8 convert_char8_rte convert_char8_rtz convert_char8_rtp convert_char8_rtn convert_char8_sat convert_char8_sat_rte convert_char8_sat_rtz convert_char8_sat_rtp convert_char8_sat_rtn convert_char16 convert_char16_rte convert_char16_rtz convert_char16_rtp convert_char16_rtn convert_char16_sat convert_char16_sat_rte convert_char16_sat_rtz convert_char16_sat_rtp convert_char16_sat_rtn convert_uchar convert_uchar_rte convert_uchar_rtz convert_uchar_rtp convert_uchar_rtn convert_uchar_sat convert_uchar_sat_rte convert_uchar_sat_rtz convert_uchar_sat_rtp convert_uchar_sat_rtn convert_uchar2 convert_uchar2_rte convert_uchar2_rtz convert_uchar2_rtp convert_uchar2_rtn convert_uchar2_sat convert_uchar2_sat_rte convert_uchar2_sat_rtz convert_uchar2_sat_rtp convert_uchar2_sat_rtn convert_uchar4 convert_uchar4_rte convert_uchar4_rtz convert_uchar4_rtp convert_uchar4_rtn convert_uchar4_sat convert_uchar4_sat_rte convert_uchar4_sat_rtz convert_uchar4_sat_rtp convert_uchar4_sat_rtn convert_uchar8 convert_uchar8_rte convert_uchar8_rtz convert_uchar8_rtp convert_uchar8_rtn convert_uchar8_sat convert_uchar8_sat_rte convert_uchar8_sat_rtz convert_uchar8_sat_rtp convert_uchar8_sat_rtn convert_uchar16 convert_uchar16_rte convert_uchar16_rtz convert_uchar16_rtp convert_uchar16_rtn convert_uchar16_sat convert_uchar16_sat_rte convert_uchar16_sat_rtz convert_uchar16_sat_rtp convert_uchar16_sat_rtn convert_short convert_short_rte convert_short_rtz convert_short_rtp convert_short_rtn convert_short_sat convert_short_sat_rte convert_short_sat_rtz convert_short_sat_rtp convert_short_sat_rtn convert_short2 convert_short2_rte convert_short2_rtz convert_short2_rtp convert_short2_rtn convert_short2_sat convert_short2_sat_rte convert_short2_sat_rtz convert_short2_sat_rtp convert_short2_sat_rtn convert_short4 convert_short4_rte convert_short4_rtz convert_short4_rtp convert_short4_rtn convert_short4_sat convert_short4_sat_rte convert_short4_sat_rtz convert_short4_sat_rtp convert_short4_sat_rtn convert_short8 convert_short8_rte convert_short8_rtz convert_short8_rtp convert_short8_rtn convert_short8_sat convert_short8_sat_rte convert_short8_sat_rtz convert_short8_sat_rtp convert_short8_sat_rtn convert_short16 convert_short16_rte convert_short16_rtz convert_short16_rtp convert_short16_rtn convert_short16_sat convert_short16_sat_rte convert_short16_sat_rtz convert_short16_sat_rtp convert_short16_sat_rtn convert_ushort convert_ushort_rte convert_ushort_rtz convert_ushort_rtp convert_ushort_rtn convert_ushort_sat convert_ushort_sat_rte convert_ushort_sat_rtz convert_ushort_sat_rtp convert_ushort_sat_rtn convert_ushort2 convert_ushort2_rte convert_ushort2_rtz convert_ushort2_rtp convert_ushort2_rtn convert_ushort2_sat convert_ushort2_sat_rte convert_ushort2_sat_rtz convert_ushort2_sat_rtp convert_ushort2_sat_rtn convert_ushort4 convert_ushort4_rte convert_ushort4_rtz convert_ushort4_rtp convert_ushort4_rtn convert_ushort4_sat convert_ushort4_sat_rte convert_ushort4_sat_rtz convert_ushort4_sat_rtp convert_ushort4_sat_rtn convert_ushort8 convert_ushort8_rte convert_ushort8_rtz convert_ushort8_rtp convert_ushort8_rtn convert_ushort8_sat convert_ushort8_sat_rte convert_ushort8_sat_rtz convert_ushort8_sat_rtp convert_ushort8_sat_rtn convert_ushort16 convert_ushort16_rte convert_ushort16_rtz convert_ushort16_rtp convert_ushort16_rtn convert_ushort16_sat convert_ushort16_sat_rte convert_ushort16_sat_rtz convert_ushort16_sat_rtp convert_ushort16_sat_rtn convert_int convert_int_rte convert_int_rtz convert_int_rtp convert_int_rtn convert_int_sat convert_int_sat_rte convert_int_sat_rtz convert_int_sat_rtp convert_int_sat_rtn convert_int2 convert_int2_rte convert_int2_rtz convert_int2_rtp convert_int2_rtn convert_int2_sat convert_int2_sat_rte convert_int2_sat_rtz convert_int2_sat_rtp convert_int2_sat_rtn convert_int4 convert_int4_rte convert_int4_rtz convert_int4_rtp convert_int4_rtn convert_int4_sat convert_int4_sat_rte convert_int4_sat_rtz convert_int4_sat_rtp convert_int4_sat_rtn convert_int8 convert_int8_rte convert_int8_rtz convert_int8_rtp convert_int8_rtn convert_int8_sat convert_int8_sat_rte convert_int8_sat_rtz convert_int8_sat_rtp convert_int8_sat_rtn convert_int16 convert_int16_rte convert_int16_rtz convert_int16_rtp convert_int16_rtn convert_int16_sat convert_int16_sat_rte convert_int16_sat_rtz convert_int16_sat_rtp convert_int16_sat_rtn convert_uint convert_uint_rte convert_uint_rtz convert_uint_rtp convert_uint_rtn convert_uint_sat convert_uint_sat_rte convert_uint_sat_rtz convert_uint_sat_rtp convert_uint_sat_rtn convert_uint2 convert_uint2_rte convert_uint2_rtz convert_uint2_rtp convert_uint2_rtn convert_uint2_sat convert_uint2_sat_rte convert_uint2_sat_rtz convert_uint2_sat_rtp convert_uint2_sat_rtn convert_uint4 convert_uint4_rte convert_uint4_rtz convert_uint4_rtp convert_uint4_rtn convert_uint4_sat convert_uint4_sat_rte convert_uint4_sat_rtz convert_uint4_sat_rtp convert_uint4_sat_rtn convert_uint8 convert_uint8_rte convert_uint8_rtz convert_uint8_rtp convert_uint8_rtn convert_uint8_sat convert_uint8_sat_rte convert_uint8_sat_rtz convert_uint8_sat_rtp convert_uint8_sat_rtn convert_uint16 convert_uint16_rte convert_uint16_rtz convert_uint16_rtp convert_uint16_rtn convert_uint16_sat convert_uint16_sat_rte convert_uint16_sat_rtz convert_uint16_sat_rtp convert_uint16_sat_rtn convert_long convert_long_rte convert_long_rtz convert_long_rtp convert_long_rtn convert_long_sat convert_long_sat_rte convert_long_sat_rtz convert_long_sat_rtp convert_long_sat_rtn convert_long2 convert_long2_rte convert_long2_rtz convert_long2_rtp convert_long2_rtn convert_long2_sat convert_long2_sat_rte convert_long2_sat_rtz convert_long2_sat_rtp convert_long2_sat_rtn convert_long4 convert_long4_rte convert_long4_rtz convert_long4_rtp convert_long4_rtn convert_long4_sat convert_long4_sat_rte convert_long4_sat_rtz convert_long4_sat_rtp convert_long4_sat_rtn convert_long8 convert_long8_rte convert_long8_rtz convert_long8_rtp convert_long8_rtn convert_long8_sat convert_long8_sat_rte convert_long8_sat_rtz convert_long8_sat_rtp convert_long8_sat_rtn convert_long16 convert_long16_rte convert_long16_rtz convert_long16_rtp convert_long16_rtn convert_long16_sat convert_long16_sat_rte convert_long16_sat_rtz convert_long16_sat_rtp convert_long16_sat_rtn convert_ulong convert_ulong_rte convert_ulong_rtz convert_ulong_rtp convert_ulong_rtn convert_ulong_sat convert_ulong_sat_rte convert_ulong_sat_rtz convert_ulong_sat_rtp convert_ulong_sat_rtn convert_ulong2 convert_ulong2_rte convert_ulong2_rtz convert_ulong2_rtp convert_ulong2_rtn convert_ulong2_sat convert_ulong2_sat_rte convert_ulong2_sat_rtz convert_ulong2_sat_rtp convert_ulong2_sat_rtn convert_ulong4 convert_ulong4_rte convert_ulong4_rtz convert_ulong4_rtp convert_ulong4_rtn convert_ulong4_sat convert_ulong4_sat_rte convert_ulong4_sat_rtz convert_ulong4_sat_rtp convert_ulong4_sat_rtn convert_ulong8 convert_ulong8_rte convert_ulong8_rtz convert_ulong8_rtp convert_ulong8_rtn convert_ulong8_sat convert_ulong8_sat_rte convert_ulong8_sat_rtz convert_ulong8_sat_rtp convert_ulong8_sat_rtn convert_ulong16 convert_ulong16_rte convert_ulong16_rtz convert_ulong16_rtp convert_ulong16_rtn convert_ulong16_sat convert_ulong16_sat_rte convert_ulong16_sat_rtz convert_ulong16_sat_rtp convert_ulong16_sat_rtn convert_float convert_float_rte convert_float_rtz convert_float_rtp convert_float_rtn convert_float2 convert_float2_rte convert_float2_rtz convert_float2_rtp convert_float2_rtn convert_float4 convert_float4_rte convert_float4_rtz convert_float4_rtp convert_float4_rtn convert_float8 convert_float8_rte convert_float8_rtz convert_float8_rtp convert_float8_rtn convert_float16 convert_float16_rte convert_float16_rtz convert_float16_rtp convert_float16_rtn convert_double convert_double_rte convert_double_rtz convert_double_rtp convert_double_rtn convert_double2 convert_double2_rte convert_double2_rtz convert_double2_rtp convert_double2_rtn convert_double4 convert_double4_rte convert_double4_rtz convert_double4_rtp convert_double4_rtn convert_double8 convert_double8_rte convert_double8_rtz convert_double8_rtp convert_double8_rtn convert_double16 convert_double16_rte convert_double16_rtz convert_double16_rtp convert_double16_rtn as_char as_char2 as_char4 as_char8 as_char16 as_uchar as_uchar2 as_uchar4 as_uchar8 as_uchar16 as_short as_short2 as_short4 as_short8 as_short16 as_ushort as_ushort2 as_ushort4 as_ushort8 as_ushort16 as_int as_int2 as_int4 as_int8 as_int16 as_uint as_uint2 as_uint4 as_uint8 as_uint16 as_long as_long2 as_long4 as_long8 as_long16 as_ulong as_ulong2 as_ulong4 as_ulong8 as_ulong16 as_float as_float2 as_float4 as_float8 as_float16 as_double as_double2 as_double4 as_double8 as_double16
// @section DC_NEED_VLOAD: vload2 vload3 vload4 vload8 vload16 vstore2 vstore3 vstore4 vstore8 vstore16
// @section DC_NEED_ATOMIC: atomic_add atomic_sub atomic_inc atomic_dec atomic_and atomic_or atomic_xor atomic_xchg atomic_cmpxchg atomic_min atomic_max atom_add atom_sub atom_xchg atom_inc atom_dec atom_cmpxchg atom_min atom_max atom_and atom_or atom_xor
// @section DC_NEED_ASYNC: async_work_group_copy async_work_group_strided_copy wait_group_events prefetch
//
// How it is built, and why. Every kernel compile includes this file, so it
// must cost the C compiler almost nothing. A function costs gcc 8 to 30 us
// to parse even when it is never called, and OpenCL's overloads (every
// built-in for every scalar and vector type) number in the thousands, so
// almost nothing here is a function: each built-in is one function-like
// macro that works for scalars and for every vector width alike. It binds
// its arguments once (__auto_type) and picks the result type with _Generic,
// then either
//  - walks the lanes through a pointer to the first element (a scalar
//    being a vector of one lane, a scalar operand of a vector built-in
//    broadcast), each lane going to a __builtin_* or to one of the few
//    helper functions below: for what needs a library call per lane; or
//  - computes on whole vectors, scalars lifted to vectors of one lane so
//    that comparisons give lane masks either way: for what is a few
//    operators (min, clamp, fmax, select, add_sat, ...). Loops cost gcc
//    about 2 ms of -O3 time per call, straight vector code a tenth of that.
// The per-call text also matters (gcc spends more time lexing and checking
// the _Generic lists of a call than optimizing what they select), so every
// argument appears once in an expansion (nested calls do not grow the text
// exponentially) and the type lists are as short as each use allows.
// Internal names start with dc__ or DC__, which OpenCL C programs cannot
// declare after rewriting.
//
// It assumes gcc >= 12 or clang >= 14 (statement expressions, __auto_type,
// _Generic, vector extensions, __builtin_convertvector and
// __builtin_shufflevector) on an LP64 target. Include no libc header after
// it: it defines function-like macros named like libm functions (sin, abs,
// isnan, ...), which would mangle their declarations.
// SPDX-License-Identifier: MIT
#ifndef DC_LOWER_C_PRELUDE_H_
#define DC_LOWER_C_PRELUDE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef DC_NEED_ALL
#define DC_NEED_MATH 1
#define DC_NEED_INTEGER 1
#define DC_NEED_GEOMETRIC 1
#define DC_NEED_RELATIONAL 1
#define DC_NEED_CONVERT 1
#define DC_NEED_VLOAD 1
#define DC_NEED_ATOMIC 1
#define DC_NEED_ASYNC 1
#endif

_Static_assert(sizeof(long) == 8 && sizeof(void*) == 8 && sizeof(int) == 4,
               "the dclua CPU prelude assumes an LP64 target");

//===-- Types -------------------------------------------------------------===//

// OpenCL's char is signed; the code generator writes it as dc_char because
// the signedness of C's char depends on the target. long is C's long (LP64).
typedef signed char dc_char;
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

// The handle of an async copy (DC_NEED_ASYNC). Copies complete at the
// wait_group_events that the code generator turns into a barrier, so an
// event carries nothing; it is a 64-bit integer, as large as the front
// end takes event_t to be.
typedef long event_t;

// Vector types: gcc/clang vector extensions, so arithmetic, comparisons
// (lanes of -1/0) and subscripts work as in OpenCL. A 3-component type is
// its 4-component type, whose size and alignment OpenCL gives it (C has
// no 3-lane vectors): the code generator keeps the 4th lane defined and
// spells the built-ins that must not see it otherwise (dc__dot3, ...).
#define DC__VECTORS(E, P)                                                    \
  typedef E P##2 __attribute__((vector_size(2 * sizeof(E))));                \
  typedef E P##4 __attribute__((vector_size(4 * sizeof(E))));                \
  typedef P##4 P##3;                                                         \
  typedef E P##8 __attribute__((vector_size(8 * sizeof(E))));                \
  typedef E P##16 __attribute__((vector_size(16 * sizeof(E))));
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
// clang types a comparison of double vectors as a vector of long long, a
// type distinct from long4 in _Generic; the built-ins accept those too.
DC__VECTORS(long long, dc__llong)

//===-- Constants (OpenCL C 1.2 section 6.12.2 and 6.12.3) ------------------===//

// Each group is skipped if a libc header (limits.h, float.h, math.h) that
// defines it with the same values was included first.
#ifndef INT_MAX
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
#endif

#ifndef FLT_MAX
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
#endif

#ifndef INFINITY
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VAL __builtin_huge_val()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define FP_ILOGB0 INT_MIN
#define FP_ILOGBNAN INT_MAX
#endif
#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif

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
#ifndef M_PI
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
#endif

//===-- Type machinery shared by the sections --------------------------------===//

// X-lists of the vector types with their element types.
#define DC__IVECS(X)                                                         \
  X(char2, dc_char) X(char4, dc_char) X(char8, dc_char) X(char16, dc_char)   \
  X(uchar2, uchar) X(uchar4, uchar) X(uchar8, uchar) X(uchar16, uchar)       \
  X(short2, short) X(short4, short) X(short8, short) X(short16, short)       \
  X(ushort2, ushort) X(ushort4, ushort) X(ushort8, ushort)                   \
  X(ushort16, ushort) X(int2, int) X(int4, int) X(int8, int) X(int16, int)   \
  X(uint2, uint) X(uint4, uint) X(uint8, uint) X(uint16, uint)               \
  X(long2, long) X(long4, long) X(long8, long) X(long16, long)               \
  X(ulong2, ulong) X(ulong4, ulong) X(ulong8, ulong) X(ulong16, ulong)
#define DC__LLVECS(X)                                                        \
  X(dc__llong2, long long) X(dc__llong4, long long)                          \
  X(dc__llong8, long long) X(dc__llong16, long long)
#define DC__FVECS(X)                                                         \
  X(float2, float) X(float4, float) X(float8, float) X(float16, float)       \
  X(double2, double) X(double4, double) X(double8, double)                   \
  X(double16, double)
#define DC__EP_(T, E) T: (E*)0,

// dc__EP(v): a null pointer to v's element type (v itself for scalars);
// dc__FEP knows only the floating vectors, dc__IEP only the integer ones.
// DC__SEP(v, E) is for an operand that is either a scalar or a vector of
// the element type E already found for another operand: it lists only
// scalar types. Each v must be a plain identifier (it appears twice).
#define dc__EP(v)                                                            \
  _Generic((v), DC__IVECS(DC__EP_) DC__FVECS(DC__EP_) default: (__typeof__(v)*)0)
#define dc__FEP(v) _Generic((v), DC__FVECS(DC__EP_) default: (__typeof__(v)*)0)
#define dc__IEP(v)                                                           \
  _Generic((v), DC__IVECS(DC__EP_) DC__LLVECS(DC__EP_) default: (__typeof__(v)*)0)
#define DC__SEP(v, E)                                                        \
  _Generic((v), dc_char: (dc_char*)0, char: (char*)0, uchar: (uchar*)0,      \
           short: (short*)0, ushort: (ushort*)0, int: (int*)0,               \
           uint: (uint*)0, long: (long*)0, ulong: (ulong*)0,                 \
           long long: (long long*)0, unsigned long long: (unsigned long long*)0, \
           float: (float*)0, double: (double*)0, _Bool: (_Bool*)0,           \
           default: (E*)0)

// Associations mapping a scalar S and its vectors SV<n> to R and RV<n>.
#define DC__SHAPE(S, R, SV, RV) S: *(R*)0, DC__SHAPEV(SV, RV)
#define DC__SHAPEV(SV, RV)                                                   \
  SV##2: *(RV##2*)0, SV##4: *(RV##4*)0, SV##8: *(RV##8*)0, SV##16: *(RV##16*)0,

// dc__FT: the floating type a math built-in computes in (integers: double).
#define dc__FT(v)                                                            \
  __typeof__(_Generic((v), DC__SHAPE(float, float, float, float)             \
                               DC__SHAPEV(double, double) default: *(double*)0))
// dc__RT: what a relational built-in returns (scalars int, vectors a
// signed integer vector with lanes as wide as the operand's).
#define dc__RT(v)                                                            \
  __typeof__(_Generic((v), DC__SHAPE(float, int, float, int)                 \
                               DC__SHAPE(double, int, double, long)          \
                                   default: *(int*)0))
// dc__BT: the integer type holding v's bits (integers: their own type).
#define dc__BT(v)                                                            \
  __typeof__(_Generic((v), DC__SHAPE(float, int, float, int)                 \
                               DC__SHAPE(double, long, double, long)         \
                                   default: (v)))
// dc__I32T: int with v's lane count (frexp, ilogb, remquo, lgamma_r).
#define dc__I32T(v)                                                          \
  __typeof__(_Generic((v), DC__SHAPE(float, int, float, int)                 \
                               DC__SHAPE(double, int, double, int)           \
                                   default: *(int*)0))
// dc__UT: the unsigned type of v's shape (floating types stay as they are).
#define dc__UT(v)                                                            \
  __typeof__(_Generic((v), DC__SHAPE(dc_char, uchar, char, uchar)            \
                               DC__SHAPE(short, ushort, short, ushort)       \
                                   DC__SHAPE(int, uint, int, uint)           \
                                       DC__SHAPE(long, ulong, long, ulong)   \
                                           default: (v)))

// Lane loops. DC__LP declares p pointing at the first lane of variable v;
// DC__LI(v, p) is the lane of v to read for result lane dc__i (a scalar
// operand is broadcast); DC__SAMEN rejects vector operands whose width is
// not the result's.
#define DC__LP(EP, v, p) __typeof__(*EP(v))* p = (void*)&(v)
#define DC__LI(v, p) (sizeof(v) > sizeof(*(p)) ? dc__i : 0)
#define DC__SAMEN(v, p, r, q)                                                \
  _Static_assert(sizeof(v) == sizeof(*(p)) ||                                \
                     sizeof(v) / sizeof(*(p)) == sizeof(r) / sizeof(*(q)),   \
                 "dclua: the vector arguments of a built-in differ in width")
// DC__SAMET: a vector operand must have the result's type dc__r.
#define DC__SAMET(v, p)                                                      \
  _Static_assert(sizeof(v) == sizeof(*(p)) ||                                \
                     __builtin_types_compatible_p(__typeof__(v), __typeof__(dc__r)), \
                 "dclua: the vector arguments of a built-in differ in type")
#define DC__FOR(r, q) for (unsigned dc__i = 0; dc__i < sizeof(r) / sizeof(*(q)); dc__i++)

// Floating maps: the result has type dc__FT of the shape argument S
// (dc__a, dc__b or dc__c for the first, second or third argument), every
// operand lane is converted to its element type, and OP(N, lanes...)
// computes one lane of function N.
#define DC__FMAP1(OP, N, x)                                                  \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    dc__FT(dc__a) dc__r = dc__a;                                             \
    DC__LP(dc__FEP, dc__r, dc__pr);                                          \
    DC__FOR(dc__r, dc__pr) dc__pr[dc__i] = OP(N, dc__pr[dc__i]);             \
    dc__r;                                                                   \
  })
#define DC__FMAP2(OP, N, S, x, y)                                            \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __auto_type dc__b = (y);                                                 \
    dc__FT(S) dc__r;                                                         \
    DC__LP(dc__FEP, dc__r, dc__pr);                                          \
    DC__LP(dc__FEP, dc__a, dc__pa);                                          \
    DC__LP(dc__FEP, dc__b, dc__pb);                                          \
    DC__SAMET(dc__a, dc__pa);                                                \
    DC__SAMET(dc__b, dc__pb);                                                \
    DC__FOR(dc__r, dc__pr) {                                                 \
      __typeof__(*dc__pr) dc__u = dc__pa[DC__LI(dc__a, dc__pa)],             \
                          dc__v = dc__pb[DC__LI(dc__b, dc__pb)];             \
      dc__pr[dc__i] = OP(N, dc__u, dc__v);                                   \
    }                                                                        \
    dc__r;                                                                   \
  })
#define DC__FMAP3(OP, N, S, x, y, z)                                         \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __auto_type dc__b = (y);                                                 \
    __auto_type dc__c = (z);                                                 \
    dc__FT(S) dc__r;                                                         \
    DC__LP(dc__FEP, dc__r, dc__pr);                                          \
    DC__LP(dc__FEP, dc__a, dc__pa);                                          \
    DC__LP(dc__FEP, dc__b, dc__pb);                                          \
    DC__LP(dc__FEP, dc__c, dc__pc);                                          \
    DC__SAMET(dc__a, dc__pa);                                                \
    DC__SAMET(dc__b, dc__pb);                                                \
    DC__SAMET(dc__c, dc__pc);                                                \
    DC__FOR(dc__r, dc__pr) {                                                 \
      __typeof__(*dc__pr) dc__u = dc__pa[DC__LI(dc__a, dc__pa)],             \
                          dc__v = dc__pb[DC__LI(dc__b, dc__pb)],             \
                          dc__w = dc__pc[DC__LI(dc__c, dc__pc)];             \
      dc__pr[dc__i] = OP(N, dc__u, dc__v, dc__w);                            \
    }                                                                        \
    dc__r;                                                                   \
  })

// Generic maps: dc__a, the first argument, gives the shape; dc__E is its
// element type (found with EP) and the lanes of the other arguments are
// converted to it; the result has type RT and lanes of type RE (both may
// name dc__a and dc__E). Other vector arguments must have dc__a's type.
#define DC__GMAP_HEAD(EP, RT, RE, x)                                         \
  __auto_type dc__a = (x);                                                   \
  typedef __typeof__(*EP(dc__a)) dc__E;                                      \
  RT dc__r;                                                                  \
  dc__E* dc__pa = (void*)&dc__a;                                             \
  RE* dc__pr = (void*)&dc__r
#define DC__GARG(v, p, y)                                                    \
  __auto_type v = (y);                                                       \
  __typeof__(*DC__SEP(v, dc__E))* p = (void*)&v;                             \
  _Static_assert(sizeof(v) == sizeof(*p) ||                                  \
                     __builtin_types_compatible_p(__typeof__(v), __typeof__(dc__a)), \
                 "dclua: the vector arguments of a built-in differ in type")
#define DC__GMAP1(EP, RT, RE, OP, x)                                         \
  ({                                                                         \
    DC__GMAP_HEAD(EP, RT, RE, x);                                            \
    DC__FOR(dc__r, dc__pr) dc__pr[dc__i] = OP(dc__pa[dc__i]);                \
    dc__r;                                                                   \
  })
#define DC__GMAP2(EP, RT, RE, OP, x, y)                                      \
  ({                                                                         \
    DC__GMAP_HEAD(EP, RT, RE, x);                                            \
    DC__GARG(dc__b, dc__pb, y);                                              \
    DC__FOR(dc__r, dc__pr) {                                                 \
      dc__E dc__u = dc__pa[dc__i], dc__v = dc__pb[DC__LI(dc__b, dc__pb)];    \
      dc__pr[dc__i] = OP(dc__u, dc__v);                                      \
    }                                                                        \
    dc__r;                                                                   \
  })
#define DC__GMAP3(EP, RT, RE, OP, x, y, z)                                   \
  ({                                                                         \
    DC__GMAP_HEAD(EP, RT, RE, x);                                            \
    DC__GARG(dc__b, dc__pb, y);                                              \
    DC__GARG(dc__c, dc__pc, z);                                              \
    DC__FOR(dc__r, dc__pr) {                                                 \
      dc__E dc__u = dc__pa[dc__i], dc__v = dc__pb[DC__LI(dc__b, dc__pb)],    \
            dc__w = dc__pc[DC__LI(dc__c, dc__pc)];                           \
      dc__pr[dc__i] = OP(dc__u, dc__v, dc__w);                               \
    }                                                                        \
    dc__r;                                                                   \
  })

// Whole-vector maps, for the functions that are a few operators. Scalars
// become vectors of one lane, so comparisons give lane masks (-1/0) for
// scalars and vectors alike. The head binds dc__a (the
// first argument, which gives the shape), dc__E (its element type), dc__V
// (its type as a vector), dc__I and dc__U (signed and unsigned integer
// vectors with lanes as wide as dc__E) and dc__va (dc__a as a dc__V);
// DC__VARG adds an argument as a dc__V, broadcasting a scalar; DC__VRET
// copies the dc__V value e into the result type RT.
#define DC__SINT(n)                                                          \
  __typeof__(__builtin_choose_expr(                                          \
      n == 1, (dc_char)0,                                                    \
      __builtin_choose_expr(n == 2, (short)0, __builtin_choose_expr(n == 4, 0, 0L))))
#define DC__UINT(n)                                                          \
  __typeof__(__builtin_choose_expr(                                          \
      n == 1, (uchar)0,                                                      \
      __builtin_choose_expr(n == 2, (ushort)0, __builtin_choose_expr(n == 4, 0u, 0ul))))
#define DC__VTYPES                                                           \
  typedef dc__E dc__V __attribute__((vector_size(sizeof(dc__a))));           \
  typedef DC__SINT(sizeof(dc__E)) dc__I __attribute__((vector_size(sizeof(dc__a)), unused)); \
  typedef DC__UINT(sizeof(dc__E)) dc__U __attribute__((vector_size(sizeof(dc__a)), unused)); \
  dc__V dc__va;                                                              \
  __builtin_memcpy(&dc__va, &dc__a, sizeof dc__va)
// Head for any element type (EP finds it), and for floating functions
// (an integer first argument computes in double).
#define DC__VHEAD(EP, x)                                                     \
  __auto_type dc__a = (x);                                                   \
  typedef __typeof__(*EP(dc__a)) dc__E;                                      \
  DC__VTYPES
#define DC__VHEADF(EP, x)                                                    \
  __auto_type dc__a0 = (x);                                                  \
  dc__FT(dc__a0) dc__a = dc__a0;                                             \
  typedef __typeof__(*dc__FEP(dc__a)) dc__E;                                 \
  DC__VTYPES
#define DC__VARG(v, p, vv, y)                                                \
  DC__GARG(v, p, y);                                                         \
  dc__V vv;                                                                  \
  if (sizeof(v) > sizeof(*p)) __builtin_memcpy(&vv, &v, sizeof vv);          \
  else vv = (dc__E)*p - (dc__V){0}
#define DC__VRET(RT, e)                                                      \
  RT dc__r;                                                                  \
  dc__V dc__vr = (e);                                                        \
  __builtin_memcpy(&dc__r, &dc__vr, sizeof dc__r);                           \
  dc__r
#define DC__VMAP1(HEAD, EP, RT, BODY, x) ({ HEAD(EP, x); DC__VRET(RT, BODY); })
#define DC__VMAP2(HEAD, EP, RT, BODY, x, y)                                  \
  ({                                                                         \
    HEAD(EP, x);                                                             \
    DC__VARG(dc__b, dc__pb, dc__vb, y);                                      \
    DC__VRET(RT, BODY);                                                      \
  })
#define DC__VMAP3(HEAD, EP, RT, BODY, x, y, z)                               \
  ({                                                                         \
    HEAD(EP, x);                                                             \
    DC__VARG(dc__b, dc__pb, dc__vb, y);                                      \
    DC__VARG(dc__c, dc__pc, dc__vc, z);                                      \
    DC__VRET(RT, BODY);                                                      \
  })
// Lane masks and selection: DC__SEL(m, x, y) takes x where m is -1, y
// where it is 0; DC__LT(x, y) is the mask of x < y; DC__SIGNBITS the
// sign bit of every lane.
#define DC__SEL(m, x, y)                                                     \
  ({                                                                         \
    dc__I dc__sy = (dc__I)(y);                                               \
    (dc__V)(dc__sy ^ (((dc__I)(x) ^ dc__sy) & (m)));                         \
  })
#define DC__LT(x, y) ((dc__I)((x) < (y)))
#define DC__NAN(x) ((dc__I)((x) != (x)))
#define DC__SIGNBITS (((dc__I){0} + 1) << (8 * sizeof(dc__E) - 1))
// Whether dc__E is a signed integer type, as a mask for every lane.
#define DC__SIGNED                                                           \
  ((dc__I){0} - _Generic((dc__E)0, dc_char: 1, short: 1, int: 1, long: 1, long long: 1, default: 0))
#define DC__ISFLOAT _Generic((dc__E)0, float: 1, double: 1, default: 0)

// Per-lane dispatch of a floating operation to its float or double form.
#define DC__F1(ff, df, u) _Generic((u), float: ff((float)(u)), default: df(u))
#define DC__F2(ff, df, u, v) _Generic((u), float: ff(u, v), default: df(u, v))

//===-- Work-item functions ---------------------------------------------------===//

// The launch record is shared with the engine, whose dc/kernel_abi_c.h
// comes first in a lowered program; without it (the prelude's own tests)
// a record of the same layout up to num_groups stands in.
#if !defined(DC_KERNEL_ABI_C_H_) && !defined(DC__LAUNCH_TYPES_DEFINED)
#define DC__LAUNCH_TYPES_DEFINED 1
typedef struct dc_c_launch_t {
  uint32_t work_dim;
  size_t global_size[3];
  size_t global_offset[3];
  size_t local_size[3];
  size_t num_groups[3];
} dc_c_launch_t;
#endif

// The work-item being run: its group and its place in the group, and, for
// code that runs outside the dispatch's entry function (helpers, fibers),
// the group's local memory and the bounds-checking state.
typedef struct dc__wi_t {
  const dc_c_launch_t* launch;
  size_t group[3];
  size_t local[3];
  char* localmem;
  const size_t* lengths;
  struct dc_c_fault_t* fault;
  unsigned polls;  // loop iterations left before the next launch->poll
  void** escape;   // a checked kernel's way out (__builtin_longjmp)
} dc__wi_t;

#define DC_ALIGN64(n) (((n) + 63) & ~(size_t)63)

// Generated code has `dc__wi_t* _wi` in scope wherever these are used.
// Functions rather than bare expressions so that the dimension is
// evaluated once; inlined, a constant dimension folds the range check.
// Dimensions 0..2 read the launch record, which holds size 1, offset 0 and
// id 0 for the unused ones; others give OpenCL's 0 (ids) or 1 (sizes).
#define DC__WI_FN(name, expr, other)                                         \
  static inline __attribute__((always_inline)) size_t dc__##name(            \
      const dc__wi_t* w, uint d) {                                           \
    return d < 3 ? (size_t)(expr) : (size_t)(other);                         \
  }
DC__WI_FN(global_id, w->launch->global_offset[d] +
                         w->group[d] * w->launch->local_size[d] + w->local[d],
          0)
DC__WI_FN(local_id, w->local[d], 0)
DC__WI_FN(group_id, w->group[d], 0)
DC__WI_FN(global_size, w->launch->global_size[d], 1)
DC__WI_FN(local_size, w->launch->local_size[d], 1)
DC__WI_FN(num_groups, w->launch->num_groups[d], 1)
DC__WI_FN(global_offset, w->launch->global_offset[d], 0)
#define get_work_dim() ((uint)_wi->launch->work_dim)
#define get_global_id(d) dc__global_id(_wi, (uint)(d))
#define get_local_id(d) dc__local_id(_wi, (uint)(d))
#define get_group_id(d) dc__group_id(_wi, (uint)(d))
#define get_global_size(d) dc__global_size(_wi, (uint)(d))
#define get_local_size(d) dc__local_size(_wi, (uint)(d))
#define get_num_groups(d) dc__num_groups(_wi, (uint)(d))
#define get_global_offset(d) dc__global_offset(_wi, (uint)(d))

//===-- Fences -----------------------------------------------------------------===//

// Work-items of a group may run on different threads, so every fence is a
// full sequentially consistent one whatever the flags. barrier() is the
// code generator's business.
#define CLK_LOCAL_MEM_FENCE 1
#define CLK_GLOBAL_MEM_FENCE 2
#define mem_fence(flags) ((void)(flags), __atomic_thread_fence(__ATOMIC_SEQ_CST))
#define read_mem_fence(flags) mem_fence(flags)
#define write_mem_fence(flags) mem_fence(flags)

//===-- Vector construction and components ----------------------------------===//

// (float4)(a, b, c, d) and (float4)(x), in expressions. gcc accepts
// neither (no vector compound literal) as the initializer of a variable
// with static storage: there a plain {a, b, c, d} is needed. DC_SPLAT
// subtracts a zero vector (rather than adding one) so that -0.0 survives.
#define DC_VEC(T, ...) ((T){__VA_ARGS__})
#define DC_SPLAT(T, x) ((__typeof__(((T){0})[0]))(x) - (T){0})
// x, a 3-component vector, with its 4th lane 0 (-1): what the 3-lane
// forms of the built-ins that reduce over lanes pass on.
#define DC__Z3(x) ({ __auto_type dc__z = (x); dc__z[3] = 0; dc__z; })
#define DC__M3(x) ({ __auto_type dc__z = (x); dc__z[3] = -1; dc__z; })

// Integer division and remainder as the code generator writes them where
// the divisor is not a constant known to be safe. OpenCL leaves x / 0 and
// INT_MIN / -1 undefined, but x86 raises SIGFPE for both, which would end
// the host process: these divide by 1 instead (x / 0 gives x, x % 0 gives
// 0; INT_MIN / -1 gives INT_MIN, the wrapped result, and INT_MIN % -1 0).
#define DC__SMIN(T) ((T)(~0ull << (8 * sizeof(T) - 1)))
#define DC__DIVISOR(n, d)                                                    \
  (((d) == 0 || ((__typeof__(d))-1 < 0 && (d) == (__typeof__(d))-1 &&       \
                 (n) == DC__SMIN(__typeof__(n))))                            \
       ? (__typeof__(d))1                                                    \
       : (d))
#define DC_DIV(a, b)                                                         \
  ({                                                                         \
    __auto_type dc__n = (a);                                                 \
    __auto_type dc__d = (b);                                                 \
    dc__n / DC__DIVISOR(dc__n, dc__d);                                       \
  })
#define DC_MOD(a, b)                                                         \
  ({                                                                         \
    __auto_type dc__n = (a);                                                 \
    __auto_type dc__d = (b);                                                 \
    dc__n % DC__DIVISOR(dc__n, dc__d);                                       \
  })
// Lane by lane: a mask of the lanes to divide by 1 instead.
#define DC__VDIVISOR(n, d)                                                   \
  ({                                                                         \
    typedef __typeof__((d)[0]) dc__L;                                        \
    __typeof__(d) dc__m = (__typeof__(d))((d) == 0);                         \
    if ((dc__L)-1 < 0) {                                                     \
      dc__m |= (__typeof__(d))((d) == (dc__L)-1) &                           \
               (__typeof__(d))((n) == DC__SMIN(dc__L));                      \
    }                                                                        \
    ((d) & ~dc__m) | (dc__m & 1);                                            \
  })
#define DC_VDIV(a, b)                                                        \
  ({                                                                         \
    __auto_type dc__n = (a);                                                 \
    __auto_type dc__d = (b);                                                 \
    dc__n / DC__VDIVISOR(dc__n, dc__d);                                      \
  })
#define DC_VMOD(a, b)                                                        \
  ({                                                                         \
    __auto_type dc__n = (a);                                                 \
    __auto_type dc__d = (b);                                                 \
    dc__n % DC__VDIVISOR(dc__n, dc__d);                                      \
  })

// v.xy etc.: DC_SWIZZLE(v, 0, 1) evaluates v once. One index gives the
// lane itself (a scalar), as OpenCL's v.x does. A 3-lane selection comes
// with a 4th index (a defined lane of v) for the 4th lane of its type.
#define DC__ARG17(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,    \
                  _14, _15, _16, _17, ...) _17
#define DC__MANY(...) DC__ARG17(__VA_ARGS__, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, 1, 0)
#define DC__CAT(a, b) DC__CAT_(a, b)
#define DC__CAT_(a, b) a##b
#define DC_SWIZZLE(x, ...) DC__CAT(DC__SWIZZLE, DC__MANY(__VA_ARGS__))(x, __VA_ARGS__)
#define DC__SWIZZLE1(x, i) ((x)[i])
#define DC__SWIZZLEM(x, ...)                                                 \
  ({                                                                         \
    __auto_type dc__sw = (x);                                                \
    __builtin_shufflevector(dc__sw, dc__sw, __VA_ARGS__);                    \
  })

// v.lo, v.hi, v.even, v.odd: half the lanes (a scalar for a 2-lane v).
#define DC__HALF(x, first, step)                                             \
  ({                                                                         \
    __auto_type dc__h = (x);                                                 \
    typedef __typeof__(dc__h[0]) dc__E;                                      \
    typedef dc__E dc__V __attribute__((vector_size(sizeof(dc__h) / 2)));     \
    dc__V dc__hr;                                                            \
    for (unsigned dc__i = 0; dc__i < sizeof(dc__h) / sizeof(dc__E) / 2;      \
         dc__i++)                                                            \
      dc__hr[dc__i] = dc__h[(first) + (step) * dc__i];                       \
    __builtin_choose_expr(sizeof(dc__h) == 2 * sizeof(dc__E), dc__hr[0],     \
                          dc__hr);                                           \
  })
#define DC_LO(x) DC__HALF(x, 0, 1)
#define DC_HI(x) DC__HALF(x, sizeof(dc__h) / sizeof(dc__E) / 2, 1)
#define DC_EVEN(x) DC__HALF(x, 0, 2)
#define DC_ODD(x) DC__HALF(x, 1, 2)

//===-- Math (DC_NEED_MATH) -----------------------------------------------------===//

// Every function takes float, double and their vectors (lane by lane; an
// integer argument computes in double); binary ones also take a scalar
// second argument with a vector first. Most lanes go to the compiler's
// __builtin_<name>f / __builtin_<name>; the functions below cover what C
// lacks, computing float results in double where that makes them exact.
#ifdef DC_NEED_MATH

// sin(pi x) with exact argument reduction: x mod 2 is exact in binary
// floating point, so only the final sin/cos of |r| <= pi/4 rounds.
static inline double dc__sinpi(double x) {
  if (!__builtin_isfinite(x)) return x - x;
  double y = __builtin_fmod(__builtin_fabs(x), 2.0);
  double n = __builtin_rint(y * 2.0);
  double r = (y - n * 0.5) * M_PI, s;
  switch ((int)n & 3) {
    case 0: s = __builtin_sin(r); break;
    case 1: s = __builtin_cos(r); break;
    case 2: s = 0.0 - __builtin_sin(r); break;  // sinpi(1) is +0
    default: s = -__builtin_cos(r); break;
  }
  return __builtin_copysign(1.0, x) * s;
}
static inline double dc__cospi(double x) {
  if (!__builtin_isfinite(x)) return x - x;
  double y = __builtin_fmod(__builtin_fabs(x), 2.0);
  double n = __builtin_rint(y * 2.0);
  double r = (y - n * 0.5) * M_PI;
  switch ((int)n & 3) {
    case 0: return __builtin_cos(r);
    case 1: return 0.0 - __builtin_sin(r);  // cospi(0.5) is +0
    case 2: return -__builtin_cos(r);
    default: return __builtin_sin(r);
  }
}
// tan has period pi: y = x - rint(x) is exact and in [-0.5, 0.5]; above
// 0.25 the cotangent of the (exact) complement keeps the argument small.
static inline double dc__tanpi(double x) {
  if (!__builtin_isfinite(x)) return x - x;
  double y = x - __builtin_rint(x), a = __builtin_fabs(y), t;
  if (a == 0) {  // integers: +-0, the sign of x for even, of -x for odd
    return __builtin_fmod(x, 2.0) == 0 ? __builtin_copysign(0.0, x)
                                       : __builtin_copysign(0.0, -x);
  }
  if (a == 0.5) return __builtin_copysign(__builtin_inf(), y);
  if (a == 0.25) t = 1;
  else if (a < 0.25) t = __builtin_tan(M_PI * a);
  else t = 1 / __builtin_tan(M_PI * (0.5 - a));
  return __builtin_copysign(t, y);
}
static inline double dc__maxmag(double x, double y) {
  double ax = __builtin_fabs(x), ay = __builtin_fabs(y);
  return ax > ay ? x : ay > ax ? y : __builtin_fmax(x, y);
}
static inline double dc__minmag(double x, double y) {
  double ax = __builtin_fabs(x), ay = __builtin_fabs(y);
  return ax < ay ? x : ay < ax ? y : __builtin_fmin(x, y);
}
static inline double dc__rootn(double x, int n) {
  if (n == 0 || (x < 0 && !(n & 1))) return __builtin_nan("");
  if (n == 1) return x;
  if (n == 2) return __builtin_sqrt(x);
  if (n == 3) return __builtin_cbrt(x);
  if (n == -1) return 1.0 / x;
  double r = __builtin_pow(__builtin_fabs(x), 1.0 / n);
  return (n & 1) ? __builtin_copysign(r, x) : r;
}
static inline double dc__powr(double x, double y) {
  if (x != x || y != y || x < 0) return __builtin_nan("");
  if (y == 0 && (x == 0 || __builtin_isinf(x))) return __builtin_nan("");
  if (x == 1 && __builtin_isinf(y)) return __builtin_nan("");
  return __builtin_pow(x, y);
}
static inline int dc__ilogb(double x) {
  if (x == 0) return FP_ILOGB0;
  if (x != x) return FP_ILOGBNAN;
  if (__builtin_isinf(x)) return INT_MAX;
  return __builtin_ilogb(x);
}
static inline int dc__lgamma_sign(double x) {
  if (x > 0) return 1;
  if (x == 0) return __builtin_signbit(x) ? -1 : 1;
  double f = __builtin_floor(x);
  if (f == x || x != x) return 0;  // poles and NaN
  return __builtin_fmod(f, 2.0) == 0 ? 1 : -1;
}
static inline float dc__nan_f(uint code) {
  uint b = 0x7fc00000u | (code & 0x3fffffu);
  float f;
  __builtin_memcpy(&f, &b, sizeof f);
  return f;
}
static inline double dc__nan_d(ulong code) {
  ulong b = 0x7ff8000000000000ul | (code & 0x7fffffffffffful);
  double f;
  __builtin_memcpy(&f, &b, sizeof f);
  return f;
}
// fract rounds in its own type, or x - floor(x) could round up to 1.
#define DC__FRACT_FN(T, name, one_less)                                      \
  static inline T name(T x, T* fl) {                                         \
    *fl = __builtin_floor(x);                                                \
    if (x != x) return x;                                                    \
    if (__builtin_isinf(x)) return __builtin_copysign((T)0, x);              \
    T r = x - *fl;                                                           \
    return r < (one_less) ? r : (one_less);                                  \
  }
DC__FRACT_FN(float, dc__fract_f, 0x1.fffffep-1f)
DC__FRACT_FN(double, dc__fract_d, 0x1.fffffffffffffp-1)

// Lane operations. DC__BF1/DC__BF2(name, ...) call __builtin_<name>f or
// __builtin_<name> by the lane's type; DC__FN(name, ...) calls the lane
// macro DC__FN_<name> below (u, v, w are lanes of the result's type, n an
// int lane).
#define DC__BF1(name, u) DC__F1(__builtin_##name##f, __builtin_##name, u)
#define DC__BF2(name, u, v) DC__F2(__builtin_##name##f, __builtin_##name, u, v)
#define DC__FN(name, ...) DC__FN_##name(__VA_ARGS__)
#define DC__PI1(f, u) _Generic((u), float: (float)(f((double)(u)) * M_1_PI), default: f(u) / M_PI)
#define DC__FN_acospi(u) DC__PI1(__builtin_acos, u)
#define DC__FN_asinpi(u) DC__PI1(__builtin_asin, u)
#define DC__FN_atanpi(u) DC__PI1(__builtin_atan, u)
#define DC__FN_atan2pi(u, v)                                                 \
  _Generic((u), float: (float)(__builtin_atan2((double)(u), (double)(v)) * M_1_PI), \
           default: __builtin_atan2(u, v) / M_PI)
#define DC__FN_sinpi(u) ((__typeof__(u))dc__sinpi(u))
#define DC__FN_cospi(u) ((__typeof__(u))dc__cospi(u))
#define DC__FN_tanpi(u) ((__typeof__(u))dc__tanpi(u))
#define DC__FN_exp10(u) DC__F2(__builtin_powf, __builtin_pow, (__typeof__(u))10, u)
#define DC__FN_rsqrt(u) ((__typeof__(u))1 / DC__BF1(sqrt, u))
#define DC__FN_fma(u, v, w) _Generic((u), float: __builtin_fmaf(u, v, w), default: __builtin_fma(u, v, w))
#define DC__FN_maxmag(u, v) ((__typeof__(u))dc__maxmag(u, v))
#define DC__FN_minmag(u, v) ((__typeof__(u))dc__minmag(u, v))
#define DC__FN_powr(u, v) ((__typeof__(u))dc__powr(u, v))
#define DC__FN_pown(u, n) ((__typeof__(u))__builtin_pow(u, (double)(n)))
#define DC__FN_rootn(u, n) ((__typeof__(u))dc__rootn(u, n))
#define DC__FN_ldexp(u, n) DC__F2(__builtin_ldexpf, __builtin_ldexp, u, n)
#define DC__FN_sign(u)                                                       \
  ((u) > 0 ? (__typeof__(u))1 : (u) < 0 ? (__typeof__(u))-1 : (u) == (u) ? (u) : (__typeof__(u))0)

// The functions C has, under their own names.
#define acos(x) DC__FMAP1(DC__BF1, acos, x)
#define acosh(x) DC__FMAP1(DC__BF1, acosh, x)
#define asin(x) DC__FMAP1(DC__BF1, asin, x)
#define asinh(x) DC__FMAP1(DC__BF1, asinh, x)
#define atan(x) DC__FMAP1(DC__BF1, atan, x)
#define atanh(x) DC__FMAP1(DC__BF1, atanh, x)
#define cbrt(x) DC__FMAP1(DC__BF1, cbrt, x)
#define ceil(x) DC__FMAP1(DC__BF1, ceil, x)
#define cos(x) DC__FMAP1(DC__BF1, cos, x)
#define cosh(x) DC__FMAP1(DC__BF1, cosh, x)
#define erfc(x) DC__FMAP1(DC__BF1, erfc, x)
#define erf(x) DC__FMAP1(DC__BF1, erf, x)
#define exp(x) DC__FMAP1(DC__BF1, exp, x)
#define exp2(x) DC__FMAP1(DC__BF1, exp2, x)
#define expm1(x) DC__FMAP1(DC__BF1, expm1, x)
#define floor(x) DC__FMAP1(DC__BF1, floor, x)
#define lgamma(x) DC__FMAP1(DC__BF1, lgamma, x)
#define log(x) DC__FMAP1(DC__BF1, log, x)
#define log2(x) DC__FMAP1(DC__BF1, log2, x)
#define log10(x) DC__FMAP1(DC__BF1, log10, x)
#define log1p(x) DC__FMAP1(DC__BF1, log1p, x)
#define logb(x) DC__FMAP1(DC__BF1, logb, x)
#define rint(x) DC__FMAP1(DC__BF1, rint, x)
#define round(x) DC__FMAP1(DC__BF1, round, x)
#define sin(x) DC__FMAP1(DC__BF1, sin, x)
#define sinh(x) DC__FMAP1(DC__BF1, sinh, x)
#define sqrt(x) DC__FMAP1(DC__BF1, sqrt, x)
#define tan(x) DC__FMAP1(DC__BF1, tan, x)
#define tanh(x) DC__FMAP1(DC__BF1, tanh, x)
#define tgamma(x) DC__FMAP1(DC__BF1, tgamma, x)
#define trunc(x) DC__FMAP1(DC__BF1, trunc, x)
#define atan2(y, x) DC__FMAP2(DC__BF2, atan2, dc__a, y, x)
#define fdim(x, y) DC__FMAP2(DC__BF2, fdim, dc__a, x, y)
#define fmod(x, y) DC__FMAP2(DC__BF2, fmod, dc__a, x, y)
#define hypot(x, y) DC__FMAP2(DC__BF2, hypot, dc__a, x, y)
#define nextafter(x, y) DC__FMAP2(DC__BF2, nextafter, dc__a, x, y)
#define pow(x, y) DC__FMAP2(DC__BF2, pow, dc__a, x, y)
#define remainder(x, y) DC__FMAP2(DC__BF2, remainder, dc__a, x, y)

// Bit and select operations as whole vectors (see DC__VMAP1).
#define DC__VF1(BODY, x) DC__VMAP1(DC__VHEADF, _, __typeof__(dc__a), BODY, x)
#define DC__VF2(BODY, x, y) DC__VMAP2(DC__VHEADF, _, __typeof__(dc__a), BODY, x, y)
#define DC__VF3(BODY, x, y, z) DC__VMAP3(DC__VHEADF, _, __typeof__(dc__a), BODY, x, y, z)
#define fabs(x) DC__VF1((dc__V)((dc__I)dc__va & ~DC__SIGNBITS), x)
#define copysign(x, y)                                                       \
  DC__VF2((dc__V)(((dc__I)dc__va & ~DC__SIGNBITS) | ((dc__I)dc__vb & DC__SIGNBITS)), x, y)
// fmax/fmin: a NaN operand gives the other one.
#define fmax(x, y) DC__VF2(DC__SEL(DC__LT(dc__va, dc__vb) | DC__NAN(dc__va), dc__vb, dc__va), x, y)
#define fmin(x, y) DC__VF2(DC__SEL(DC__LT(dc__vb, dc__va) | DC__NAN(dc__va), dc__vb, dc__va), x, y)
#define mad(a, b, c) DC__VF3(dc__va * dc__vb + dc__vc, a, b, c)

// OpenCL's additions.
#define acospi(x) DC__FMAP1(DC__FN, acospi, x)
#define asinpi(x) DC__FMAP1(DC__FN, asinpi, x)
#define atanpi(x) DC__FMAP1(DC__FN, atanpi, x)
#define atan2pi(y, x) DC__FMAP2(DC__FN, atan2pi, dc__a, y, x)
#define cospi(x) DC__FMAP1(DC__FN, cospi, x)
#define sinpi(x) DC__FMAP1(DC__FN, sinpi, x)
#define tanpi(x) DC__FMAP1(DC__FN, tanpi, x)
#define exp10(x) DC__FMAP1(DC__FN, exp10, x)
#define rsqrt(x) DC__FMAP1(DC__FN, rsqrt, x)
#define fma(a, b, c) DC__FMAP3(DC__FN, fma, dc__a, a, b, c)
#define maxmag(x, y) DC__FMAP2(DC__FN, maxmag, dc__a, x, y)
#define minmag(x, y) DC__FMAP2(DC__FN, minmag, dc__a, x, y)
#define powr(x, y) DC__FMAP2(DC__FN, powr, dc__a, x, y)

// Functions with an int (or intN) operand or result.
#define DC__FMAP2I(N, x, n)                                                  \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __auto_type dc__b = (n);                                                 \
    dc__FT(dc__a) dc__r = dc__a;                                             \
    DC__LP(dc__FEP, dc__r, dc__pr);                                          \
    DC__LP(dc__IEP, dc__b, dc__pb);                                          \
    DC__SAMEN(dc__b, dc__pb, dc__r, dc__pr);                                 \
    DC__FOR(dc__r, dc__pr) {                                                 \
      int dc__v = (int)dc__pb[DC__LI(dc__b, dc__pb)];                        \
      dc__pr[dc__i] = DC__FN_##N(dc__pr[dc__i], dc__v);                      \
    }                                                                        \
    dc__r;                                                                   \
  })
#define ldexp(x, n) DC__FMAP2I(ldexp, x, n)
#define pown(x, n) DC__FMAP2I(pown, x, n)
#define rootn(x, n) DC__FMAP2I(rootn, x, n)
#define ilogb(x) DC__GMAP1(dc__FEP, dc__I32T(dc__a), int, dc__ilogb, x)
// nan(uint[N]) is float[N]; nan(ulong[N]) is double[N].
#define dc__NANT(v)                                                          \
  __typeof__(_Generic((v), DC__SHAPE(uint, float, uint, float)               \
                               DC__SHAPE(int, float, int, float)             \
                                   DC__SHAPE(ulong, double, ulong, double)   \
                                       DC__SHAPE(long, double, long, double) \
                                           default: *(float*)0))
#define DC__NAN1(u) _Generic((u), ulong: dc__nan_d(u), long: dc__nan_d(u), default: dc__nan_f(u))
#define nan(x) DC__GMAP1(dc__IEP, dc__NANT(dc__a), __typeof__(*dc__FEP(dc__r)), DC__NAN1, x)

// Functions that also store through a pointer: the result has x's
// floating type, the pointer's target the type OT, of the same shape.
// LANE computes lane dc__i from dc__pr[dc__i] into dc__pr and dc__po.
#define DC__FOUT(x, p, OT, LANE)                                             \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __auto_type dc__op = (p);                                                \
    dc__FT(dc__a) dc__r = dc__a;                                             \
    OT dc__o;                                                                \
    DC__LP(dc__FEP, dc__r, dc__pr);                                          \
    DC__LP(dc__EP, dc__o, dc__po);                                           \
    DC__FOR(dc__r, dc__pr) { LANE; }                                         \
    *dc__op = dc__o;                                                         \
    dc__r;                                                                   \
  })
#define fract(x, iptr)                                                       \
  DC__FOUT(x, iptr, dc__FT(dc__a),                                           \
           dc__pr[dc__i] = _Generic(dc__pr[dc__i],                           \
               float: dc__fract_f((float)dc__pr[dc__i], (float*)&dc__po[dc__i]), \
               default: dc__fract_d(dc__pr[dc__i], (double*)&dc__po[dc__i])))
#define modf(x, iptr)                                                        \
  DC__FOUT(x, iptr, dc__FT(dc__a),                                           \
           dc__pr[dc__i] = _Generic(dc__pr[dc__i],                           \
               float: __builtin_modff((float)dc__pr[dc__i], (float*)&dc__po[dc__i]), \
               default: __builtin_modf(dc__pr[dc__i], (double*)&dc__po[dc__i])))
#define sincos(x, cosval)                                                    \
  DC__FOUT(x, cosval, dc__FT(dc__a),                                         \
           dc__po[dc__i] = DC__BF1(cos, dc__pr[dc__i]);                      \
           dc__pr[dc__i] = DC__BF1(sin, dc__pr[dc__i]))
#define frexp(x, e)                                                          \
  DC__FOUT(x, e, dc__I32T(dc__a),                                            \
           dc__pr[dc__i] = _Generic(dc__pr[dc__i],                           \
               float: __builtin_frexpf((float)dc__pr[dc__i], &dc__po[dc__i]), \
               default: __builtin_frexp(dc__pr[dc__i], &dc__po[dc__i])))
#define lgamma_r(x, signp)                                                   \
  DC__FOUT(x, signp, dc__I32T(dc__a),                                        \
           dc__po[dc__i] = dc__lgamma_sign(dc__pr[dc__i]);                   \
           dc__pr[dc__i] = DC__BF1(lgamma, dc__pr[dc__i]))
#define remquo(x, y, quo)                                                    \
  ({                                                                         \
    __auto_type dc__qb = (y);                                                \
    DC__LP(dc__FEP, dc__qb, dc__qpb);                                        \
    DC__FOUT(x, quo, dc__I32T(dc__a),                                        \
             DC__SAMET(dc__qb, dc__qpb);                                     \
             __typeof__(*dc__pr) dc__v = dc__qpb[DC__LI(dc__qb, dc__qpb)];   \
             dc__pr[dc__i] = _Generic(dc__pr[dc__i],                         \
                 float: __builtin_remquof((float)dc__pr[dc__i], (float)dc__v, &dc__po[dc__i]), \
                 default: __builtin_remquo(dc__pr[dc__i], dc__v, &dc__po[dc__i]))); \
  })

// Common functions (min, max, clamp and abs are in the integer section,
// which handles every type). step's and smoothstep's last argument gives
// the shape (their edges may be scalars), so it binds first.
#define degrees(x) DC__VF1(dc__va * (dc__E)57.295779513082320876798154814105, x)
#define radians(x) DC__VF1(dc__va * (dc__E)0.017453292519943295769236907684886, x)
#define step(edge, x)                                                        \
  DC__VF2(DC__SEL(DC__LT(dc__va, dc__vb), (dc__V){0}, (dc__E)1 - (dc__V){0}), x, edge)
#define mix(x, y, a) DC__VF3(dc__va + (dc__vb - dc__va) * dc__vc, x, y, a)
#define smoothstep(e0, e1, x)                                                \
  DC__VF3(({                                                                 \
            dc__V dc__t = (dc__va - dc__vb) / (dc__vc - dc__vb);             \
            dc__t = DC__SEL(DC__LT(dc__t, (dc__V){0}), (dc__V){0}, dc__t);   \
            dc__t = DC__SEL(DC__LT((dc__E)1 - (dc__V){0}, dc__t), (dc__E)1 - (dc__V){0}, dc__t); \
            dc__t * dc__t * (3 - 2 * dc__t);                                 \
          }),                                                                \
          x, e0, e1)
#define sign(x) DC__FMAP1(DC__FN, sign, x)

// native_* and half_*: the same functions at full precision.
#define native_cos(x) cos(x)
#define native_divide(x, y) DC__VF2(dc__va / dc__vb, x, y)
#define native_exp(x) exp(x)
#define native_exp2(x) exp2(x)
#define native_exp10(x) exp10(x)
#define native_log(x) log(x)
#define native_log2(x) log2(x)
#define native_log10(x) log10(x)
#define native_powr(x, y) powr(x, y)
#define native_recip(x) DC__VF1((dc__E)1 / dc__va, x)
#define native_rsqrt(x) rsqrt(x)
#define native_sin(x) sin(x)
#define native_sqrt(x) sqrt(x)
#define native_tan(x) tan(x)
#define half_cos(x) cos(x)
#define half_divide(x, y) native_divide(x, y)
#define half_exp(x) exp(x)
#define half_exp2(x) exp2(x)
#define half_exp10(x) exp10(x)
#define half_log(x) log(x)
#define half_log2(x) log2(x)
#define half_log10(x) log10(x)
#define half_powr(x, y) powr(x, y)
#define half_recip(x) native_recip(x)
#define half_rsqrt(x) rsqrt(x)
#define half_sin(x) sin(x)
#define half_sqrt(x) sqrt(x)
#define half_tan(x) tan(x)

#endif  // DC_NEED_MATH

//===-- Integer functions (DC_NEED_INTEGER) ------------------------------------===//

// The functions that are a few operators work on whole vectors (hadd,
// rhadd, abs_diff, add_sat, sub_sat, min, max, clamp, abs, further below).
// The others go lane by lane to one small function per element type
// (generated here: 8 types times 6 operations stay cheap to parse). Signed
// and unsigned types get separate bodies so that neither compares an
// unsigned value with 0.
#ifdef DC_NEED_INTEGER

// gcc 12 at -O3 with AVX-512 VPOPCNTDQ/BITALG vectorizes short popcount
// loops wrongly (4 x 64-bit and 16 x 8-bit lanes give the inputs back);
// an empty asm on each lane's count keeps its vectorizer off them.
#if defined(__GNUC__) && !defined(__clang__)
#define DC__NO_VECTORIZE(v) __asm__("" : "+r"(v))
#else
#define DC__NO_VECTORIZE(v) (void)0
#endif

#define DC__INT_COMMON(T, U, B)                                              \
  static inline T dc__rotate_##T(T v, T n) {                                 \
    U x = (U)v;                                                              \
    unsigned s = (unsigned)((U)n & (B - 1));                                 \
    return (T)(U)((x << s) | (x >> ((B - s) & (B - 1))));                    \
  }                                                                          \
  static inline T dc__clz_##T(T x) {                                         \
    return (T)(x ? __builtin_clzll((unsigned long long)(U)x) - (64 - B) : B); \
  }                                                                          \
  static inline T dc__popcount_##T(T x) {                                    \
    int n = __builtin_popcountll((unsigned long long)(U)x);                  \
    DC__NO_VECTORIZE(n);                                                     \
    return (T)n;                                                             \
  }                                                                          \
  static inline T dc__mad_hi_##T(T x, T y, T z) {                            \
    return (T)((U)dc__mul_hi_##T(x, y) + (U)z);                              \
  }
#define DC__INT_SIGNED(T, U, B, MIN, MAX)                                    \
  static inline T dc__mul_hi_##T(T x, T y) {                                 \
    return (T)(((__int128)x * (__int128)y) >> B);                            \
  }                                                                          \
  static inline T dc__mad_sat_##T(T x, T y, T z) {                           \
    __int128 p = (__int128)x * y + z;                                        \
    return p < MIN ? MIN : p > MAX ? MAX : (T)p;                             \
  }                                                                          \
  DC__INT_COMMON(T, U, B)
#define DC__INT_UNSIGNED(T, B, MAX)                                          \
  static inline T dc__mul_hi_##T(T x, T y) {                                 \
    return (T)(((unsigned __int128)x * y) >> B);                             \
  }                                                                          \
  static inline T dc__mad_sat_##T(T x, T y, T z) {                           \
    unsigned __int128 p = (unsigned __int128)x * y;                          \
    if (p > MAX) return MAX;                                                 \
    p += z;                                                                  \
    return p > MAX ? MAX : (T)p;                                             \
  }                                                                          \
  DC__INT_COMMON(T, T, B)
// upsample(hi, lo) = hi << bits(lo) | lo, in the type twice as wide.
#define DC__UPSAMPLE(T, U, W, WU, B)                                         \
  static inline W dc__upsample_##T(T hi, U lo) {                             \
    return (W)(WU)(((WU)(U)hi << B) | lo);                                   \
  }
DC__INT_SIGNED(dc_char, uchar, 8, SCHAR_MIN, SCHAR_MAX)
DC__INT_UNSIGNED(uchar, 8, UCHAR_MAX)
DC__INT_SIGNED(short, ushort, 16, SHRT_MIN, SHRT_MAX)
DC__INT_UNSIGNED(ushort, 16, USHRT_MAX)
DC__INT_SIGNED(int, uint, 32, INT_MIN, INT_MAX)
DC__INT_UNSIGNED(uint, 32, UINT_MAX)
DC__INT_SIGNED(long, ulong, 64, LONG_MIN, LONG_MAX)
DC__INT_UNSIGNED(ulong, 64, ULONG_MAX)
DC__UPSAMPLE(dc_char, uchar, short, ushort, 8)
DC__UPSAMPLE(uchar, uchar, ushort, ushort, 8)
DC__UPSAMPLE(short, ushort, int, uint, 16)
DC__UPSAMPLE(ushort, ushort, uint, uint, 16)
DC__UPSAMPLE(int, uint, long, ulong, 32)
DC__UPSAMPLE(uint, uint, ulong, ulong, 32)
// mul24/mad24: the full 32-bit product (what 24-bit operands give).
static inline int dc__mul24_int(int x, int y) { return (int)((uint)x * (uint)y); }
static inline uint dc__mul24_uint(uint x, uint y) { return x * y; }
static inline int dc__mad24_int(int x, int y, int z) { return (int)((uint)x * (uint)y + (uint)z); }
static inline uint dc__mad24_uint(uint x, uint y, uint z) { return x * y + z; }

// The function for one integer lane u (long long lanes use long's).
#define DC__IFN(name, u)                                                     \
  _Generic((u), dc_char: dc__##name##_dc_char, uchar: dc__##name##_uchar,    \
           short: dc__##name##_short, ushort: dc__##name##_ushort,           \
           int: dc__##name##_int, uint: dc__##name##_uint,                   \
           long: dc__##name##_long, ulong: dc__##name##_ulong,               \
           long long: dc__##name##_long)
#define DC__L_rotate(u, v) DC__IFN(rotate, u)(u, v)
#define DC__L_mul_hi(u, v) DC__IFN(mul_hi, u)(u, v)
#define DC__L_mad_hi(u, v, w) DC__IFN(mad_hi, u)(u, v, w)
#define DC__L_mad_sat(u, v, w) DC__IFN(mad_sat, u)(u, v, w)
#define DC__L_clz(u) DC__IFN(clz, u)(u)
#define DC__L_popcount(u) DC__IFN(popcount, u)(u)
#define DC__L_mul24(u, v) _Generic((u), int: dc__mul24_int, uint: dc__mul24_uint)(u, v)
#define DC__L_mad24(u, v, w) _Generic((u), int: dc__mad24_int, uint: dc__mad24_uint)(u, v, w)
#define DC__L_upsample(u, v)                                                 \
  _Generic((u), dc_char: dc__upsample_dc_char, uchar: dc__upsample_uchar,    \
           short: dc__upsample_short, ushort: dc__upsample_ushort,           \
           int: dc__upsample_int, uint: dc__upsample_uint)(u, v)
// upsample's result: the type with lanes twice as wide.
#define dc__UPT(v)                                                           \
  __typeof__(_Generic((v), DC__SHAPE(dc_char, short, char, short)            \
                               DC__SHAPE(uchar, ushort, uchar, ushort)       \
                                   DC__SHAPE(short, int, short, int)         \
                                       DC__SHAPE(ushort, uint, ushort, uint) \
                                           DC__SHAPE(int, long, int, long)   \
                                               DC__SHAPE(uint, ulong, uint, ulong) \
                                                   default: (void)0))

#define DC__ISAME __typeof__(dc__a)
#define rotate(v, i) DC__GMAP2(dc__IEP, DC__ISAME, dc__E, DC__L_rotate, v, i)
#define mul_hi(x, y) DC__GMAP2(dc__IEP, DC__ISAME, dc__E, DC__L_mul_hi, x, y)
#define mad_hi(a, b, c) DC__GMAP3(dc__IEP, DC__ISAME, dc__E, DC__L_mad_hi, a, b, c)
#define mad_sat(a, b, c) DC__GMAP3(dc__IEP, DC__ISAME, dc__E, DC__L_mad_sat, a, b, c)
#define clz(x) DC__GMAP1(dc__IEP, DC__ISAME, dc__E, DC__L_clz, x)
#define popcount(x) DC__GMAP1(dc__IEP, DC__ISAME, dc__E, DC__L_popcount, x)
#define mul24(x, y) DC__GMAP2(dc__IEP, DC__ISAME, dc__E, DC__L_mul24, x, y)
#define mad24(a, b, c) DC__GMAP3(dc__IEP, DC__ISAME, dc__E, DC__L_mad24, a, b, c)
// upsample's lo keeps its own (unsigned) lanes.
#define upsample(hi, lo)                                                     \
  ({                                                                         \
    __auto_type dc__a = (hi);                                                \
    __auto_type dc__b = (lo);                                                \
    dc__UPT(dc__a) dc__r;                                                    \
    DC__LP(dc__IEP, dc__a, dc__pa);                                          \
    DC__LP(dc__IEP, dc__b, dc__pb);                                          \
    DC__LP(dc__IEP, dc__r, dc__pr);                                          \
    DC__SAMEN(dc__b, dc__pb, dc__r, dc__pr);                                 \
    DC__FOR(dc__r, dc__pr)                                                   \
    dc__pr[dc__i] = DC__L_upsample(dc__pa[dc__i], dc__pb[DC__LI(dc__b, dc__pb)]); \
    dc__r;                                                                   \
  })

// Whole-vector integer functions (see DC__VMAP1).
#define DC__VI2(BODY, x, y) DC__VMAP2(DC__VHEAD, dc__IEP, __typeof__(dc__a), BODY, x, y)
#define DC__HALVES (dc__va >> 1) + (dc__vb >> 1)
#define hadd(x, y) DC__VI2(DC__HALVES + (dc__va & dc__vb & 1), x, y)
#define rhadd(x, y) DC__VI2(DC__HALVES + ((dc__va | dc__vb) & 1), x, y)
#define abs_diff(x, y)                                                       \
  DC__VMAP2(DC__VHEAD, dc__IEP, dc__UT(dc__a),                               \
            DC__SEL(DC__LT(dc__vb, dc__va), (dc__V)((dc__U)dc__va - (dc__U)dc__vb), \
                    (dc__V)((dc__U)dc__vb - (dc__U)dc__va)),                 \
            x, y)
// Saturation: signed lanes overflow when the result's sign differs from
// what the operands' signs imply, and then go to MIN or MAX by a's sign;
// unsigned lanes carry or borrow.
#define DC__SAT_TO ((dc__I)dc__va >> (8 * sizeof(dc__E) - 1) ^ ~DC__SIGNBITS)
#define DC__SAT(OVF_S, OVF_U, SAT_U, OP)                                     \
  ({                                                                         \
    dc__V dc__s = (dc__V)((dc__U)dc__va OP (dc__U)dc__vb);                   \
    dc__I dc__o = ((OVF_S) & DC__SIGNED) | ((OVF_U) & ~DC__SIGNED);          \
    DC__SEL(dc__o, DC__SEL(DC__SIGNED, DC__SAT_TO, SAT_U), dc__s);           \
  })
#define add_sat(x, y)                                                        \
  DC__VI2(DC__SAT((((dc__I)dc__va ^ (dc__I)dc__s) & ((dc__I)dc__vb ^ (dc__I)dc__s)) < 0, \
                  DC__LT(dc__s, dc__va), (dc__I){0} - 1, +),                 \
          x, y)
#define sub_sat(x, y)                                                        \
  DC__VI2(DC__SAT((((dc__I)dc__va ^ (dc__I)dc__vb) & ((dc__I)dc__va ^ (dc__I)dc__s)) < 0, \
                  DC__LT(dc__va, dc__vb), (dc__I){0}, -),                    \
          x, y)

// min, max, clamp and abs take integer and floating types alike. min and
// max follow OpenCL's definitions (y < x ? y : x); clamp is
// fmin(fmax(x, lo), hi), so a NaN x gives lo (for integers the NaN masks
// are 0).
#define DC__VG2(BODY, x, y) DC__VMAP2(DC__VHEAD, dc__EP, __typeof__(dc__a), BODY, x, y)
#define min(x, y) DC__VG2(DC__SEL(DC__LT(dc__vb, dc__va), dc__vb, dc__va), x, y)
#define max(x, y) DC__VG2(DC__SEL(DC__LT(dc__va, dc__vb), dc__vb, dc__va), x, y)
#define clamp(x, lo, hi)                                                     \
  DC__VMAP3(DC__VHEAD, dc__EP, __typeof__(dc__a),                            \
            ({                                                               \
              dc__V dc__t = DC__SEL(DC__LT(dc__va, dc__vb) | DC__NAN(dc__va), dc__vb, dc__va); \
              DC__SEL(DC__LT(dc__vc, dc__t) | DC__NAN(dc__t), dc__vc, dc__t); \
            }),                                                              \
            x, lo, hi)
#define abs(x)                                                               \
  DC__VMAP1(DC__VHEAD, dc__EP, dc__UT(dc__a),                                \
            __builtin_choose_expr(DC__ISFLOAT, (dc__V)((dc__I)dc__va & ~DC__SIGNBITS), \
                                  DC__SEL(DC__LT(dc__va, (dc__V){0}) & DC__SIGNED, \
                                          (dc__V)((dc__U){0} - (dc__U)dc__va), dc__va)), \
            x)

#endif  // DC_NEED_INTEGER

//===-- Geometric functions (DC_NEED_GEOMETRIC) ---------------------------------===//

// float/double scalars and 2- and 4-lane vectors (wider ones work too).
// Lengths of float vectors are computed in double, so they neither
// overflow nor underflow; double ones are rescaled by a power of two when
// their largest component is huge or tiny.
#ifdef DC_NEED_GEOMETRIC

static inline double dc__length_f(const float* p, unsigned n) {
  double s = 0;
  for (unsigned i = 0; i < n; i++) s += (double)p[i] * p[i];
  return __builtin_sqrt(s);
}
static inline double dc__length_d(const double* p, unsigned n) {
  double m = 0, s = 0;
  for (unsigned i = 0; i < n; i++) {
    double a = __builtin_fabs(p[i]);
    if (!(a <= m)) m = a;  // NaN propagates
  }
  if (m == 0 || !__builtin_isfinite(m)) return m;
  if (m > 0x1p500 || m < 0x1p-500) {
    int e = __builtin_ilogb(m);
    for (unsigned i = 0; i < n; i++) {
      double a = __builtin_ldexp(p[i], -e);
      s += a * a;
    }
    return __builtin_ldexp(__builtin_sqrt(s), e);
  }
  for (unsigned i = 0; i < n; i++) s += p[i] * p[i];
  return __builtin_sqrt(s);
}
// normalize: zero vectors come back unchanged; if components are
// infinite, those become +-1 and the others +-0 before normalizing.
#define DC__NORMALIZE_FN(T, name, len)                                       \
  static inline void name(T* p, unsigned n) {                                \
    int inf = 0;                                                             \
    for (unsigned i = 0; i < n; i++) inf |= __builtin_isinf(p[i]);           \
    if (inf) {                                                               \
      for (unsigned i = 0; i < n; i++)                                       \
        p[i] = __builtin_copysign(__builtin_isinf(p[i]) ? (T)1 : (T)0, p[i]); \
    }                                                                        \
    double l = len(p, n);                                                    \
    if (l == 0) return;                                                      \
    for (unsigned i = 0; i < n; i++) p[i] = (T)(p[i] / l);                   \
  }
DC__NORMALIZE_FN(float, dc__normalize_f, dc__length_f)
DC__NORMALIZE_FN(double, dc__normalize_d, dc__length_d)

// dc__GEO(x, BODY): BODY sees dc__g (x as its floating type), dc__gp (its
// lanes) and dc__gn (how many).
#define DC__GEO(x, BODY)                                                     \
  ({                                                                         \
    __auto_type dc__g0 = (x);                                                \
    dc__FT(dc__g0) dc__g = dc__g0;                                           \
    DC__LP(dc__FEP, dc__g, dc__gp);                                          \
    const unsigned dc__gn = sizeof(dc__g) / sizeof(*dc__gp);                 \
    (void)dc__gn;                                                            \
    BODY;                                                                    \
  })
#define DC__LEN(p, n)                                                        \
  _Generic(*(p), float: (float)dc__length_f((const float*)(p), n),           \
           default: dc__length_d((const double*)(p), n))
#define DC__DOT(x, y)                                                        \
  ({                                                                         \
    __auto_type dc__da = (x);                                                \
    __typeof__(dc__da) dc__db = (y);                                         \
    DC__LP(dc__FEP, dc__da, dc__dpa);                                        \
    DC__LP(dc__FEP, dc__db, dc__dpb);                                        \
    __typeof__(*dc__dpa) dc__s = 0;                                          \
    for (unsigned dc__i = 0; dc__i < sizeof(dc__da) / sizeof(*dc__dpa); dc__i++) \
      dc__s += dc__dpa[dc__i] * dc__dpb[dc__i];                              \
    dc__s;                                                                   \
  })
#define dot(x, y) DC__GEO(x, DC__DOT(dc__g, y))
#define length(x) DC__GEO(x, DC__LEN(dc__gp, dc__gn))
#define distance(x, y) DC__GEO(x, dc__g -= (y); DC__LEN(dc__gp, dc__gn))
#define normalize(x)                                                         \
  DC__GEO(x, _Generic(*dc__gp, float: dc__normalize_f((float*)dc__gp, dc__gn), \
                      default: dc__normalize_d((double*)dc__gp, dc__gn));    \
          dc__g)
#define fast_length(x) DC__GEO(x, DC__L_gsqrt(DC__DOT(dc__g, dc__g)))
#define fast_distance(x, y) DC__GEO(x, dc__g -= (y); DC__L_gsqrt(DC__DOT(dc__g, dc__g)))
#define fast_normalize(x)                                                    \
  DC__GEO(x, __typeof__(*dc__gp) dc__d2 = DC__DOT(dc__g, dc__g);             \
          if (dc__d2 > 0) dc__g = dc__g * (1 / DC__L_gsqrt(dc__d2)); dc__g)
#define DC__L_gsqrt(u) DC__F1(__builtin_sqrtf, __builtin_sqrt, u)
// The 3-component forms: a float3 is a float4 here (see Types), whose
// 4th lane must not count. cross reads lanes 0 to 2 only.
#define dc__dot3(x, y) dot(DC__Z3(x), DC__Z3(y))
#define dc__length3(x) length(DC__Z3(x))
#define dc__distance3(x, y) distance(DC__Z3(x), DC__Z3(y))
#define dc__normalize3(x) normalize(DC__Z3(x))
#define dc__fast_length3(x) fast_length(DC__Z3(x))
#define dc__fast_distance3(x, y) fast_distance(DC__Z3(x), DC__Z3(y))
#define dc__fast_normalize3(x) fast_normalize(DC__Z3(x))
// cross of 3- or 4-lane vectors (the 3-lane type is the 4-lane one); the
// fourth lane of the result is 0.
#define cross(x, y)                                                          \
  ({                                                                         \
    __auto_type dc__ca = (x);                                                \
    __typeof__(dc__ca) dc__cb = (y);                                         \
    _Static_assert(sizeof(dc__ca) == 4 * sizeof(dc__ca[0]),                  \
                   "dclua: cross takes 4-component vectors");                \
    (__typeof__(dc__ca)){dc__ca[1] * dc__cb[2] - dc__ca[2] * dc__cb[1],      \
                         dc__ca[2] * dc__cb[0] - dc__ca[0] * dc__cb[2],      \
                         dc__ca[0] * dc__cb[1] - dc__ca[1] * dc__cb[0], 0};  \
  })

#endif  // DC_NEED_GEOMETRIC

//===-- Relational functions (DC_NEED_RELATIONAL) -----------------------------===//

// Vector comparisons already give OpenCL's lanes of -1/0 (scalars 1/0), so
// the comparisons are the operators cast to the OpenCL result type. The
// classifications test the bits rather than use comparisons, so they hold
// under -ffast-math too.
#ifdef DC_NEED_RELATIONAL

#define DC__CMP(x, y, EXPR)                                                  \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __auto_type dc__b = (y);                                                 \
    (dc__RT(dc__a))(EXPR);                                                   \
  })
#define isequal(x, y) DC__CMP(x, y, dc__a == dc__b)
#define isnotequal(x, y) DC__CMP(x, y, dc__a != dc__b)
#define isgreater(x, y) DC__CMP(x, y, dc__a > dc__b)
#define isgreaterequal(x, y) DC__CMP(x, y, dc__a >= dc__b)
#define isless(x, y) DC__CMP(x, y, dc__a < dc__b)
#define islessequal(x, y) DC__CMP(x, y, dc__a <= dc__b)
#define islessgreater(x, y) DC__CMP(x, y, (dc__a < dc__b) | (dc__a > dc__b))

// DC__CLASS1/2 bind the bits of x (converted to its floating type) as
// dc__xb, and of y as dc__yb, with dc__ex the exponent mask and dc__ab the
// mask of everything but the sign, typed as a lane of dc__xb.
#define DC__BITS(v, f, b)                                                    \
  dc__FT(v) f = v;                                                           \
  dc__BT(f) b;                                                               \
  __builtin_memcpy(&b, &f, sizeof b)
#define DC__MASKS                                                            \
  typedef __typeof__(_Generic(*dc__FEP(dc__xf), float: 0, default: 0L)) dc__BE; \
  const dc__BE dc__ex = (dc__BE)(sizeof(dc__BE) == 4 ? 0x7f800000 : 0x7ff0000000000000LL), \
               dc__ab = (dc__BE)(sizeof(dc__BE) == 4 ? 0x7fffffff : 0x7fffffffffffffffLL); \
  (void)dc__ex, (void)dc__ab
#define DC__CLASS1(x, EXPR)                                                  \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    DC__BITS(dc__a, dc__xf, dc__xb);                                         \
    DC__MASKS;                                                               \
    (dc__RT(dc__xf))(EXPR);                                                  \
  })
#define DC__CLASS2(x, y, EXPR)                                               \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __auto_type dc__b = (y);                                                 \
    DC__BITS(dc__a, dc__xf, dc__xb);                                         \
    DC__BITS(dc__b, dc__yf, dc__yb);                                         \
    DC__MASKS;                                                               \
    (dc__RT(dc__xf))(EXPR);                                                  \
  })
#define isfinite(x) DC__CLASS1(x, (dc__xb & dc__ex) != dc__ex)
#define isinf(x) DC__CLASS1(x, (dc__xb & dc__ab) == dc__ex)
#define isnan(x) DC__CLASS1(x, (dc__xb & dc__ab) > dc__ex)
#define isnormal(x)                                                          \
  DC__CLASS1(x, ((dc__xb & dc__ex) != 0) & ((dc__xb & dc__ex) != dc__ex))
#define signbit(x) DC__CLASS1(x, dc__xb < 0)
#define isordered(x, y)                                                      \
  DC__CLASS2(x, y, ((dc__xb & dc__ab) <= dc__ex) & ((dc__yb & dc__ab) <= dc__ex))
#define isunordered(x, y)                                                    \
  DC__CLASS2(x, y, ((dc__xb & dc__ab) > dc__ex) | ((dc__yb & dc__ab) > dc__ex))

// any/all: the most significant bit of any / every lane.
#define DC__MSB(u) (((u) >> (sizeof(u) * 8 - 1)) & 1)
#define DC__ANYALL(x, INIT, OP)                                              \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    DC__LP(dc__IEP, dc__a, dc__pa);                                          \
    int dc__r = INIT;                                                        \
    for (unsigned dc__i = 0; dc__i < sizeof(dc__a) / sizeof(*dc__pa); dc__i++) \
      dc__r OP (int)DC__MSB(dc__pa[dc__i]);                                  \
    dc__r;                                                                   \
  })
#define any(x) DC__ANYALL(x, 0, |=)
#define all(x) DC__ANYALL(x, 1, &=)
// Of a 3-component vector (its 4-component type): the 4th lane is made
// neutral.
#define dc__any3(x) any(DC__Z3(x))
#define dc__all3(x) all(DC__M3(x))

// bitselect(a, b, c): each bit from b where c has a 1, else from a.
#define bitselect(x, y, z)                                                   \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    __typeof__(dc__a) dc__b = (y), dc__c = (z);                              \
    dc__BT(dc__a) dc__ia, dc__ib, dc__ic;                                    \
    __builtin_memcpy(&dc__ia, &dc__a, sizeof dc__a);                         \
    __builtin_memcpy(&dc__ib, &dc__b, sizeof dc__a);                         \
    __builtin_memcpy(&dc__ic, &dc__c, sizeof dc__a);                         \
    dc__ia = (dc__ia & ~dc__ic) | (dc__ib & dc__ic);                         \
    __builtin_memcpy(&dc__a, &dc__ia, sizeof dc__a);                         \
    dc__a;                                                                   \
  })
// select(a, b, c): scalars c ? b : a; vectors per lane by c's MSB, c's
// lanes being integers as wide as a's (their signedness does not matter).
#define select(x, y, z)                                                      \
  ({                                                                         \
    DC__VHEAD(dc__EP, x);                                                    \
    __typeof__(dc__a) dc__b = (y);                                           \
    __auto_type dc__c = (z);                                                 \
    dc__V dc__vb;                                                            \
    dc__I dc__m;                                                             \
    __builtin_memcpy(&dc__vb, &dc__b, sizeof dc__vb);                        \
    _Static_assert(sizeof(dc__c) == sizeof(dc__a) || sizeof(dc__a) == sizeof(dc__E), \
                   "dclua: select needs a mask as wide as its operands");    \
    if (sizeof(dc__a) == sizeof(dc__E)) {                                    \
      DC__SINT(sizeof(dc__c)) dc__cs;                                        \
      __builtin_memcpy(&dc__cs, &dc__c, sizeof dc__cs);                      \
      dc__m = (dc__I){0} - (DC__SINT(sizeof(dc__E)))(dc__cs != 0);           \
    } else {                                                                 \
      __builtin_memcpy(&dc__m, &dc__c, sizeof dc__m);                        \
      dc__m = (dc__I)(dc__m < 0);                                            \
    }                                                                        \
    DC__VRET(__typeof__(dc__a), DC__SEL(dc__m, dc__vb, dc__va));             \
  })

#endif  // DC_NEED_RELATIONAL

//===-- Conversions (DC_NEED_CONVERT) -------------------------------------------===//

// convert_<T>[_sat][_<rounding>](x) and as_<T>(x). The plain conversions
// are C casts and __builtin_convertvector, which round floats to integers
// toward zero and integers to floats to nearest, as OpenCL's defaults do.
// _sat and explicit rounding go lane by lane through one small function
// per destination element type, so that a call expands to little text:
// dc__f2i_<E> (from a floating value: round in the mode, then clamp, NaN
// giving 0, when saturating), dc__sati_<E> (clamp an integer held in
// __int128, which holds every source value), dc__f2f_<E> and dc__i2f_<E>
// (round to nearest, then step one ulp if the mode wants the other
// neighbour of the exact value, held in a double, or for 64-bit integers
// in a long double, which holds them exactly). Rounding modes: 0 default, 1 rte, 2 rtz, 3 rtp, 4 rtn.
#ifdef DC_NEED_CONVERT

static inline double dc__round_mode(double v, int mode) {
  switch (mode) {
    case 1: return __builtin_rint(v);
    case 3: return __builtin_ceil(v);
    case 4: return __builtin_floor(v);
    default: return __builtin_trunc(v);
  }
}
// Integer destinations. hi_f is the smallest double above the range.
#define DC__CVT_INT_FN(E, MIN, MAX, hi_f)                                    \
    static inline E dc__f2i_##E(double v, int mode, int sat) {               \
    v = dc__round_mode(v, mode);                                             \
    if (!sat) return (E)v;                                                   \
    v = v == v ? v : 0;                                                      \
    v = v < (double)(MIN) ? (double)(MIN) : v;                               \
    return v >= (hi_f) ? (E)(MAX) : (E)v;                                    \
  }                                                                          \
  static inline E dc__sati_##E(__int128 v) {                                 \
    return v < (MIN) ? (E)(MIN) : v > (MAX) ? (E)(MAX) : (E)v;               \
  }
DC__CVT_INT_FN(dc_char, SCHAR_MIN, SCHAR_MAX, 128.0)
DC__CVT_INT_FN(uchar, 0, UCHAR_MAX, 256.0)
DC__CVT_INT_FN(short, SHRT_MIN, SHRT_MAX, 32768.0)
DC__CVT_INT_FN(ushort, 0, USHRT_MAX, 65536.0)
DC__CVT_INT_FN(int, INT_MIN, INT_MAX, 0x1p31)
DC__CVT_INT_FN(uint, 0, UINT_MAX, 0x1p32)
DC__CVT_INT_FN(long, LONG_MIN, LONG_MAX, 0x1p63)
DC__CVT_INT_FN(ulong, 0, ULONG_MAX, 0x1p64)
// Floating destinations. dc__step_<T> moves r (not a NaN) one ulp up or
// down by its bits: away from zero is +1 on the magnitude. Explicit
// rounding toward a float type is rare, so the adjustment is out of line:
// inlined into every lane it costs gcc several ms per call.
#define DC__CVT_FP_FN(T, B, SIGN)                                            \
  static inline T dc__step_##T(T r, int up) {                                \
    B b;                                                                     \
    __builtin_memcpy(&b, &r, sizeof b);                                      \
    if ((b & ~(SIGN)) == 0) b = up ? 1 : (SIGN) | 1;                         \
    else b += (!(b & (SIGN)) == !!up) ? 1 : (B)-1;                           \
    __builtin_memcpy(&r, &b, sizeof b);                                      \
    return r;                                                                \
  }                                                                          \
  static __attribute__((noinline, unused)) T dc__fadj_##T(T r, int above, int below, int mode) { \
    int down = above && (mode == 4 || (mode == 2 && r > 0));                 \
    int up = below && (mode == 3 || (mode == 2 && r < 0));                   \
    return down || up ? dc__step_##T(r, up) : r;                             \
  }                                                                          \
  static inline T dc__i2f_##T(long double exact, int mode) {                 \
    T r = (T)exact;                                                          \
    return mode <= 1 ? r : dc__fadj_##T(r, r > exact, r < exact, mode);      \
  }                                                                          \
  static inline T dc__f2f_##T(double exact, int mode) {                      \
    T r = (T)exact;                                                          \
    return mode <= 1 ? r : dc__fadj_##T(r, r > exact, r < exact, mode);      \
  }
DC__CVT_FP_FN(float, uint, 0x80000000u)
DC__CVT_FP_FN(double, ulong, 0x8000000000000000ul)

// One lane s (any scalar) to element type E: integer (DC__CVI) or
// floating (DC__CVF).
#define DC__ISFP(s) _Generic((s), float: 1, double: 1, default: 0)
#define DC__CVI(E, SAT, MODE, s)                                             \
  __builtin_choose_expr(DC__ISFP(s), dc__f2i_##E((double)(s), MODE, SAT),    \
                        __builtin_choose_expr(SAT, dc__sati_##E((__int128)(s)), (E)(s)))
#define DC__CVF(E, SAT, MODE, s)                                             \
  __builtin_choose_expr(DC__ISFP(s) || sizeof(s) <= 4, dc__f2f_##E((double)(s), MODE), \
                        dc__i2f_##E((long double)(s), MODE))

// Scalar and vector forms; E is T's element type, K is DC__CVI or DC__CVF.
#define DC__CVS(E, K, SAT, MODE, x)                                          \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    (E)K(E, SAT, MODE, dc__a);                                               \
  })
#define DC__CVV(T, E, K, SAT, MODE, x)                                       \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    T dc__r;                                                                 \
    E* dc__pr = (void*)&dc__r;                                               \
    DC__LP(dc__EP, dc__a, dc__pa);                                           \
    _Static_assert(sizeof(dc__a) / sizeof(*dc__pa) == sizeof(T) / sizeof(E), \
                   "dclua: convert_" #T " needs a " #T "-wide operand");     \
    DC__FOR(dc__r, dc__pr) dc__pr[dc__i] = K(E, SAT, MODE, dc__pa[dc__i]);   \
    dc__r;                                                                   \
  })
#define DC__AS(T, x)                                                         \
  ({                                                                         \
    __auto_type dc__a = (x);                                                 \
    T dc__r;                                                                 \
    _Static_assert(sizeof(dc__a) == sizeof(T), "dclua: as_" #T " needs an operand of the same size"); \
    __builtin_memcpy(&dc__r, &dc__a, sizeof dc__r);                          \
    dc__r;                                                                   \
  })

// The names, one per destination type and modifier.
#define convert_char(x) ((dc_char)(x))
#define convert_char_rte(x) DC__CVS(dc_char, DC__CVI, 0, 1, x)
#define convert_char_rtz(x) DC__CVS(dc_char, DC__CVI, 0, 2, x)
#define convert_char_rtp(x) DC__CVS(dc_char, DC__CVI, 0, 3, x)
#define convert_char_rtn(x) DC__CVS(dc_char, DC__CVI, 0, 4, x)
#define convert_char_sat(x) DC__CVS(dc_char, DC__CVI, 1, 0, x)
#define convert_char_sat_rte(x) DC__CVS(dc_char, DC__CVI, 1, 1, x)
#define convert_char_sat_rtz(x) DC__CVS(dc_char, DC__CVI, 1, 2, x)
#define convert_char_sat_rtp(x) DC__CVS(dc_char, DC__CVI, 1, 3, x)
#define convert_char_sat_rtn(x) DC__CVS(dc_char, DC__CVI, 1, 4, x)
#define convert_char2(x) __builtin_convertvector((x), char2)
#define convert_char2_rte(x) DC__CVV(char2, dc_char, DC__CVI, 0, 1, x)
#define convert_char2_rtz(x) DC__CVV(char2, dc_char, DC__CVI, 0, 2, x)
#define convert_char2_rtp(x) DC__CVV(char2, dc_char, DC__CVI, 0, 3, x)
#define convert_char2_rtn(x) DC__CVV(char2, dc_char, DC__CVI, 0, 4, x)
#define convert_char2_sat(x) DC__CVV(char2, dc_char, DC__CVI, 1, 0, x)
#define convert_char2_sat_rte(x) DC__CVV(char2, dc_char, DC__CVI, 1, 1, x)
#define convert_char2_sat_rtz(x) DC__CVV(char2, dc_char, DC__CVI, 1, 2, x)
#define convert_char2_sat_rtp(x) DC__CVV(char2, dc_char, DC__CVI, 1, 3, x)
#define convert_char2_sat_rtn(x) DC__CVV(char2, dc_char, DC__CVI, 1, 4, x)
#define convert_char4(x) __builtin_convertvector((x), char4)
#define convert_char4_rte(x) DC__CVV(char4, dc_char, DC__CVI, 0, 1, x)
#define convert_char4_rtz(x) DC__CVV(char4, dc_char, DC__CVI, 0, 2, x)
#define convert_char4_rtp(x) DC__CVV(char4, dc_char, DC__CVI, 0, 3, x)
#define convert_char4_rtn(x) DC__CVV(char4, dc_char, DC__CVI, 0, 4, x)
#define convert_char4_sat(x) DC__CVV(char4, dc_char, DC__CVI, 1, 0, x)
#define convert_char4_sat_rte(x) DC__CVV(char4, dc_char, DC__CVI, 1, 1, x)
#define convert_char4_sat_rtz(x) DC__CVV(char4, dc_char, DC__CVI, 1, 2, x)
#define convert_char4_sat_rtp(x) DC__CVV(char4, dc_char, DC__CVI, 1, 3, x)
#define convert_char4_sat_rtn(x) DC__CVV(char4, dc_char, DC__CVI, 1, 4, x)
#define convert_char8(x) __builtin_convertvector((x), char8)
#define convert_char8_rte(x) DC__CVV(char8, dc_char, DC__CVI, 0, 1, x)
#define convert_char8_rtz(x) DC__CVV(char8, dc_char, DC__CVI, 0, 2, x)
#define convert_char8_rtp(x) DC__CVV(char8, dc_char, DC__CVI, 0, 3, x)
#define convert_char8_rtn(x) DC__CVV(char8, dc_char, DC__CVI, 0, 4, x)
#define convert_char8_sat(x) DC__CVV(char8, dc_char, DC__CVI, 1, 0, x)
#define convert_char8_sat_rte(x) DC__CVV(char8, dc_char, DC__CVI, 1, 1, x)
#define convert_char8_sat_rtz(x) DC__CVV(char8, dc_char, DC__CVI, 1, 2, x)
#define convert_char8_sat_rtp(x) DC__CVV(char8, dc_char, DC__CVI, 1, 3, x)
#define convert_char8_sat_rtn(x) DC__CVV(char8, dc_char, DC__CVI, 1, 4, x)
#define convert_char16(x) __builtin_convertvector((x), char16)
#define convert_char16_rte(x) DC__CVV(char16, dc_char, DC__CVI, 0, 1, x)
#define convert_char16_rtz(x) DC__CVV(char16, dc_char, DC__CVI, 0, 2, x)
#define convert_char16_rtp(x) DC__CVV(char16, dc_char, DC__CVI, 0, 3, x)
#define convert_char16_rtn(x) DC__CVV(char16, dc_char, DC__CVI, 0, 4, x)
#define convert_char16_sat(x) DC__CVV(char16, dc_char, DC__CVI, 1, 0, x)
#define convert_char16_sat_rte(x) DC__CVV(char16, dc_char, DC__CVI, 1, 1, x)
#define convert_char16_sat_rtz(x) DC__CVV(char16, dc_char, DC__CVI, 1, 2, x)
#define convert_char16_sat_rtp(x) DC__CVV(char16, dc_char, DC__CVI, 1, 3, x)
#define convert_char16_sat_rtn(x) DC__CVV(char16, dc_char, DC__CVI, 1, 4, x)
#define convert_uchar(x) ((uchar)(x))
#define convert_uchar_rte(x) DC__CVS(uchar, DC__CVI, 0, 1, x)
#define convert_uchar_rtz(x) DC__CVS(uchar, DC__CVI, 0, 2, x)
#define convert_uchar_rtp(x) DC__CVS(uchar, DC__CVI, 0, 3, x)
#define convert_uchar_rtn(x) DC__CVS(uchar, DC__CVI, 0, 4, x)
#define convert_uchar_sat(x) DC__CVS(uchar, DC__CVI, 1, 0, x)
#define convert_uchar_sat_rte(x) DC__CVS(uchar, DC__CVI, 1, 1, x)
#define convert_uchar_sat_rtz(x) DC__CVS(uchar, DC__CVI, 1, 2, x)
#define convert_uchar_sat_rtp(x) DC__CVS(uchar, DC__CVI, 1, 3, x)
#define convert_uchar_sat_rtn(x) DC__CVS(uchar, DC__CVI, 1, 4, x)
#define convert_uchar2(x) __builtin_convertvector((x), uchar2)
#define convert_uchar2_rte(x) DC__CVV(uchar2, uchar, DC__CVI, 0, 1, x)
#define convert_uchar2_rtz(x) DC__CVV(uchar2, uchar, DC__CVI, 0, 2, x)
#define convert_uchar2_rtp(x) DC__CVV(uchar2, uchar, DC__CVI, 0, 3, x)
#define convert_uchar2_rtn(x) DC__CVV(uchar2, uchar, DC__CVI, 0, 4, x)
#define convert_uchar2_sat(x) DC__CVV(uchar2, uchar, DC__CVI, 1, 0, x)
#define convert_uchar2_sat_rte(x) DC__CVV(uchar2, uchar, DC__CVI, 1, 1, x)
#define convert_uchar2_sat_rtz(x) DC__CVV(uchar2, uchar, DC__CVI, 1, 2, x)
#define convert_uchar2_sat_rtp(x) DC__CVV(uchar2, uchar, DC__CVI, 1, 3, x)
#define convert_uchar2_sat_rtn(x) DC__CVV(uchar2, uchar, DC__CVI, 1, 4, x)
#define convert_uchar4(x) __builtin_convertvector((x), uchar4)
#define convert_uchar4_rte(x) DC__CVV(uchar4, uchar, DC__CVI, 0, 1, x)
#define convert_uchar4_rtz(x) DC__CVV(uchar4, uchar, DC__CVI, 0, 2, x)
#define convert_uchar4_rtp(x) DC__CVV(uchar4, uchar, DC__CVI, 0, 3, x)
#define convert_uchar4_rtn(x) DC__CVV(uchar4, uchar, DC__CVI, 0, 4, x)
#define convert_uchar4_sat(x) DC__CVV(uchar4, uchar, DC__CVI, 1, 0, x)
#define convert_uchar4_sat_rte(x) DC__CVV(uchar4, uchar, DC__CVI, 1, 1, x)
#define convert_uchar4_sat_rtz(x) DC__CVV(uchar4, uchar, DC__CVI, 1, 2, x)
#define convert_uchar4_sat_rtp(x) DC__CVV(uchar4, uchar, DC__CVI, 1, 3, x)
#define convert_uchar4_sat_rtn(x) DC__CVV(uchar4, uchar, DC__CVI, 1, 4, x)
#define convert_uchar8(x) __builtin_convertvector((x), uchar8)
#define convert_uchar8_rte(x) DC__CVV(uchar8, uchar, DC__CVI, 0, 1, x)
#define convert_uchar8_rtz(x) DC__CVV(uchar8, uchar, DC__CVI, 0, 2, x)
#define convert_uchar8_rtp(x) DC__CVV(uchar8, uchar, DC__CVI, 0, 3, x)
#define convert_uchar8_rtn(x) DC__CVV(uchar8, uchar, DC__CVI, 0, 4, x)
#define convert_uchar8_sat(x) DC__CVV(uchar8, uchar, DC__CVI, 1, 0, x)
#define convert_uchar8_sat_rte(x) DC__CVV(uchar8, uchar, DC__CVI, 1, 1, x)
#define convert_uchar8_sat_rtz(x) DC__CVV(uchar8, uchar, DC__CVI, 1, 2, x)
#define convert_uchar8_sat_rtp(x) DC__CVV(uchar8, uchar, DC__CVI, 1, 3, x)
#define convert_uchar8_sat_rtn(x) DC__CVV(uchar8, uchar, DC__CVI, 1, 4, x)
#define convert_uchar16(x) __builtin_convertvector((x), uchar16)
#define convert_uchar16_rte(x) DC__CVV(uchar16, uchar, DC__CVI, 0, 1, x)
#define convert_uchar16_rtz(x) DC__CVV(uchar16, uchar, DC__CVI, 0, 2, x)
#define convert_uchar16_rtp(x) DC__CVV(uchar16, uchar, DC__CVI, 0, 3, x)
#define convert_uchar16_rtn(x) DC__CVV(uchar16, uchar, DC__CVI, 0, 4, x)
#define convert_uchar16_sat(x) DC__CVV(uchar16, uchar, DC__CVI, 1, 0, x)
#define convert_uchar16_sat_rte(x) DC__CVV(uchar16, uchar, DC__CVI, 1, 1, x)
#define convert_uchar16_sat_rtz(x) DC__CVV(uchar16, uchar, DC__CVI, 1, 2, x)
#define convert_uchar16_sat_rtp(x) DC__CVV(uchar16, uchar, DC__CVI, 1, 3, x)
#define convert_uchar16_sat_rtn(x) DC__CVV(uchar16, uchar, DC__CVI, 1, 4, x)
#define convert_short(x) ((short)(x))
#define convert_short_rte(x) DC__CVS(short, DC__CVI, 0, 1, x)
#define convert_short_rtz(x) DC__CVS(short, DC__CVI, 0, 2, x)
#define convert_short_rtp(x) DC__CVS(short, DC__CVI, 0, 3, x)
#define convert_short_rtn(x) DC__CVS(short, DC__CVI, 0, 4, x)
#define convert_short_sat(x) DC__CVS(short, DC__CVI, 1, 0, x)
#define convert_short_sat_rte(x) DC__CVS(short, DC__CVI, 1, 1, x)
#define convert_short_sat_rtz(x) DC__CVS(short, DC__CVI, 1, 2, x)
#define convert_short_sat_rtp(x) DC__CVS(short, DC__CVI, 1, 3, x)
#define convert_short_sat_rtn(x) DC__CVS(short, DC__CVI, 1, 4, x)
#define convert_short2(x) __builtin_convertvector((x), short2)
#define convert_short2_rte(x) DC__CVV(short2, short, DC__CVI, 0, 1, x)
#define convert_short2_rtz(x) DC__CVV(short2, short, DC__CVI, 0, 2, x)
#define convert_short2_rtp(x) DC__CVV(short2, short, DC__CVI, 0, 3, x)
#define convert_short2_rtn(x) DC__CVV(short2, short, DC__CVI, 0, 4, x)
#define convert_short2_sat(x) DC__CVV(short2, short, DC__CVI, 1, 0, x)
#define convert_short2_sat_rte(x) DC__CVV(short2, short, DC__CVI, 1, 1, x)
#define convert_short2_sat_rtz(x) DC__CVV(short2, short, DC__CVI, 1, 2, x)
#define convert_short2_sat_rtp(x) DC__CVV(short2, short, DC__CVI, 1, 3, x)
#define convert_short2_sat_rtn(x) DC__CVV(short2, short, DC__CVI, 1, 4, x)
#define convert_short4(x) __builtin_convertvector((x), short4)
#define convert_short4_rte(x) DC__CVV(short4, short, DC__CVI, 0, 1, x)
#define convert_short4_rtz(x) DC__CVV(short4, short, DC__CVI, 0, 2, x)
#define convert_short4_rtp(x) DC__CVV(short4, short, DC__CVI, 0, 3, x)
#define convert_short4_rtn(x) DC__CVV(short4, short, DC__CVI, 0, 4, x)
#define convert_short4_sat(x) DC__CVV(short4, short, DC__CVI, 1, 0, x)
#define convert_short4_sat_rte(x) DC__CVV(short4, short, DC__CVI, 1, 1, x)
#define convert_short4_sat_rtz(x) DC__CVV(short4, short, DC__CVI, 1, 2, x)
#define convert_short4_sat_rtp(x) DC__CVV(short4, short, DC__CVI, 1, 3, x)
#define convert_short4_sat_rtn(x) DC__CVV(short4, short, DC__CVI, 1, 4, x)
#define convert_short8(x) __builtin_convertvector((x), short8)
#define convert_short8_rte(x) DC__CVV(short8, short, DC__CVI, 0, 1, x)
#define convert_short8_rtz(x) DC__CVV(short8, short, DC__CVI, 0, 2, x)
#define convert_short8_rtp(x) DC__CVV(short8, short, DC__CVI, 0, 3, x)
#define convert_short8_rtn(x) DC__CVV(short8, short, DC__CVI, 0, 4, x)
#define convert_short8_sat(x) DC__CVV(short8, short, DC__CVI, 1, 0, x)
#define convert_short8_sat_rte(x) DC__CVV(short8, short, DC__CVI, 1, 1, x)
#define convert_short8_sat_rtz(x) DC__CVV(short8, short, DC__CVI, 1, 2, x)
#define convert_short8_sat_rtp(x) DC__CVV(short8, short, DC__CVI, 1, 3, x)
#define convert_short8_sat_rtn(x) DC__CVV(short8, short, DC__CVI, 1, 4, x)
#define convert_short16(x) __builtin_convertvector((x), short16)
#define convert_short16_rte(x) DC__CVV(short16, short, DC__CVI, 0, 1, x)
#define convert_short16_rtz(x) DC__CVV(short16, short, DC__CVI, 0, 2, x)
#define convert_short16_rtp(x) DC__CVV(short16, short, DC__CVI, 0, 3, x)
#define convert_short16_rtn(x) DC__CVV(short16, short, DC__CVI, 0, 4, x)
#define convert_short16_sat(x) DC__CVV(short16, short, DC__CVI, 1, 0, x)
#define convert_short16_sat_rte(x) DC__CVV(short16, short, DC__CVI, 1, 1, x)
#define convert_short16_sat_rtz(x) DC__CVV(short16, short, DC__CVI, 1, 2, x)
#define convert_short16_sat_rtp(x) DC__CVV(short16, short, DC__CVI, 1, 3, x)
#define convert_short16_sat_rtn(x) DC__CVV(short16, short, DC__CVI, 1, 4, x)
#define convert_ushort(x) ((ushort)(x))
#define convert_ushort_rte(x) DC__CVS(ushort, DC__CVI, 0, 1, x)
#define convert_ushort_rtz(x) DC__CVS(ushort, DC__CVI, 0, 2, x)
#define convert_ushort_rtp(x) DC__CVS(ushort, DC__CVI, 0, 3, x)
#define convert_ushort_rtn(x) DC__CVS(ushort, DC__CVI, 0, 4, x)
#define convert_ushort_sat(x) DC__CVS(ushort, DC__CVI, 1, 0, x)
#define convert_ushort_sat_rte(x) DC__CVS(ushort, DC__CVI, 1, 1, x)
#define convert_ushort_sat_rtz(x) DC__CVS(ushort, DC__CVI, 1, 2, x)
#define convert_ushort_sat_rtp(x) DC__CVS(ushort, DC__CVI, 1, 3, x)
#define convert_ushort_sat_rtn(x) DC__CVS(ushort, DC__CVI, 1, 4, x)
#define convert_ushort2(x) __builtin_convertvector((x), ushort2)
#define convert_ushort2_rte(x) DC__CVV(ushort2, ushort, DC__CVI, 0, 1, x)
#define convert_ushort2_rtz(x) DC__CVV(ushort2, ushort, DC__CVI, 0, 2, x)
#define convert_ushort2_rtp(x) DC__CVV(ushort2, ushort, DC__CVI, 0, 3, x)
#define convert_ushort2_rtn(x) DC__CVV(ushort2, ushort, DC__CVI, 0, 4, x)
#define convert_ushort2_sat(x) DC__CVV(ushort2, ushort, DC__CVI, 1, 0, x)
#define convert_ushort2_sat_rte(x) DC__CVV(ushort2, ushort, DC__CVI, 1, 1, x)
#define convert_ushort2_sat_rtz(x) DC__CVV(ushort2, ushort, DC__CVI, 1, 2, x)
#define convert_ushort2_sat_rtp(x) DC__CVV(ushort2, ushort, DC__CVI, 1, 3, x)
#define convert_ushort2_sat_rtn(x) DC__CVV(ushort2, ushort, DC__CVI, 1, 4, x)
#define convert_ushort4(x) __builtin_convertvector((x), ushort4)
#define convert_ushort4_rte(x) DC__CVV(ushort4, ushort, DC__CVI, 0, 1, x)
#define convert_ushort4_rtz(x) DC__CVV(ushort4, ushort, DC__CVI, 0, 2, x)
#define convert_ushort4_rtp(x) DC__CVV(ushort4, ushort, DC__CVI, 0, 3, x)
#define convert_ushort4_rtn(x) DC__CVV(ushort4, ushort, DC__CVI, 0, 4, x)
#define convert_ushort4_sat(x) DC__CVV(ushort4, ushort, DC__CVI, 1, 0, x)
#define convert_ushort4_sat_rte(x) DC__CVV(ushort4, ushort, DC__CVI, 1, 1, x)
#define convert_ushort4_sat_rtz(x) DC__CVV(ushort4, ushort, DC__CVI, 1, 2, x)
#define convert_ushort4_sat_rtp(x) DC__CVV(ushort4, ushort, DC__CVI, 1, 3, x)
#define convert_ushort4_sat_rtn(x) DC__CVV(ushort4, ushort, DC__CVI, 1, 4, x)
#define convert_ushort8(x) __builtin_convertvector((x), ushort8)
#define convert_ushort8_rte(x) DC__CVV(ushort8, ushort, DC__CVI, 0, 1, x)
#define convert_ushort8_rtz(x) DC__CVV(ushort8, ushort, DC__CVI, 0, 2, x)
#define convert_ushort8_rtp(x) DC__CVV(ushort8, ushort, DC__CVI, 0, 3, x)
#define convert_ushort8_rtn(x) DC__CVV(ushort8, ushort, DC__CVI, 0, 4, x)
#define convert_ushort8_sat(x) DC__CVV(ushort8, ushort, DC__CVI, 1, 0, x)
#define convert_ushort8_sat_rte(x) DC__CVV(ushort8, ushort, DC__CVI, 1, 1, x)
#define convert_ushort8_sat_rtz(x) DC__CVV(ushort8, ushort, DC__CVI, 1, 2, x)
#define convert_ushort8_sat_rtp(x) DC__CVV(ushort8, ushort, DC__CVI, 1, 3, x)
#define convert_ushort8_sat_rtn(x) DC__CVV(ushort8, ushort, DC__CVI, 1, 4, x)
#define convert_ushort16(x) __builtin_convertvector((x), ushort16)
#define convert_ushort16_rte(x) DC__CVV(ushort16, ushort, DC__CVI, 0, 1, x)
#define convert_ushort16_rtz(x) DC__CVV(ushort16, ushort, DC__CVI, 0, 2, x)
#define convert_ushort16_rtp(x) DC__CVV(ushort16, ushort, DC__CVI, 0, 3, x)
#define convert_ushort16_rtn(x) DC__CVV(ushort16, ushort, DC__CVI, 0, 4, x)
#define convert_ushort16_sat(x) DC__CVV(ushort16, ushort, DC__CVI, 1, 0, x)
#define convert_ushort16_sat_rte(x) DC__CVV(ushort16, ushort, DC__CVI, 1, 1, x)
#define convert_ushort16_sat_rtz(x) DC__CVV(ushort16, ushort, DC__CVI, 1, 2, x)
#define convert_ushort16_sat_rtp(x) DC__CVV(ushort16, ushort, DC__CVI, 1, 3, x)
#define convert_ushort16_sat_rtn(x) DC__CVV(ushort16, ushort, DC__CVI, 1, 4, x)
#define convert_int(x) ((int)(x))
#define convert_int_rte(x) DC__CVS(int, DC__CVI, 0, 1, x)
#define convert_int_rtz(x) DC__CVS(int, DC__CVI, 0, 2, x)
#define convert_int_rtp(x) DC__CVS(int, DC__CVI, 0, 3, x)
#define convert_int_rtn(x) DC__CVS(int, DC__CVI, 0, 4, x)
#define convert_int_sat(x) DC__CVS(int, DC__CVI, 1, 0, x)
#define convert_int_sat_rte(x) DC__CVS(int, DC__CVI, 1, 1, x)
#define convert_int_sat_rtz(x) DC__CVS(int, DC__CVI, 1, 2, x)
#define convert_int_sat_rtp(x) DC__CVS(int, DC__CVI, 1, 3, x)
#define convert_int_sat_rtn(x) DC__CVS(int, DC__CVI, 1, 4, x)
#define convert_int2(x) __builtin_convertvector((x), int2)
#define convert_int2_rte(x) DC__CVV(int2, int, DC__CVI, 0, 1, x)
#define convert_int2_rtz(x) DC__CVV(int2, int, DC__CVI, 0, 2, x)
#define convert_int2_rtp(x) DC__CVV(int2, int, DC__CVI, 0, 3, x)
#define convert_int2_rtn(x) DC__CVV(int2, int, DC__CVI, 0, 4, x)
#define convert_int2_sat(x) DC__CVV(int2, int, DC__CVI, 1, 0, x)
#define convert_int2_sat_rte(x) DC__CVV(int2, int, DC__CVI, 1, 1, x)
#define convert_int2_sat_rtz(x) DC__CVV(int2, int, DC__CVI, 1, 2, x)
#define convert_int2_sat_rtp(x) DC__CVV(int2, int, DC__CVI, 1, 3, x)
#define convert_int2_sat_rtn(x) DC__CVV(int2, int, DC__CVI, 1, 4, x)
#define convert_int4(x) __builtin_convertvector((x), int4)
#define convert_int4_rte(x) DC__CVV(int4, int, DC__CVI, 0, 1, x)
#define convert_int4_rtz(x) DC__CVV(int4, int, DC__CVI, 0, 2, x)
#define convert_int4_rtp(x) DC__CVV(int4, int, DC__CVI, 0, 3, x)
#define convert_int4_rtn(x) DC__CVV(int4, int, DC__CVI, 0, 4, x)
#define convert_int4_sat(x) DC__CVV(int4, int, DC__CVI, 1, 0, x)
#define convert_int4_sat_rte(x) DC__CVV(int4, int, DC__CVI, 1, 1, x)
#define convert_int4_sat_rtz(x) DC__CVV(int4, int, DC__CVI, 1, 2, x)
#define convert_int4_sat_rtp(x) DC__CVV(int4, int, DC__CVI, 1, 3, x)
#define convert_int4_sat_rtn(x) DC__CVV(int4, int, DC__CVI, 1, 4, x)
#define convert_int8(x) __builtin_convertvector((x), int8)
#define convert_int8_rte(x) DC__CVV(int8, int, DC__CVI, 0, 1, x)
#define convert_int8_rtz(x) DC__CVV(int8, int, DC__CVI, 0, 2, x)
#define convert_int8_rtp(x) DC__CVV(int8, int, DC__CVI, 0, 3, x)
#define convert_int8_rtn(x) DC__CVV(int8, int, DC__CVI, 0, 4, x)
#define convert_int8_sat(x) DC__CVV(int8, int, DC__CVI, 1, 0, x)
#define convert_int8_sat_rte(x) DC__CVV(int8, int, DC__CVI, 1, 1, x)
#define convert_int8_sat_rtz(x) DC__CVV(int8, int, DC__CVI, 1, 2, x)
#define convert_int8_sat_rtp(x) DC__CVV(int8, int, DC__CVI, 1, 3, x)
#define convert_int8_sat_rtn(x) DC__CVV(int8, int, DC__CVI, 1, 4, x)
#define convert_int16(x) __builtin_convertvector((x), int16)
#define convert_int16_rte(x) DC__CVV(int16, int, DC__CVI, 0, 1, x)
#define convert_int16_rtz(x) DC__CVV(int16, int, DC__CVI, 0, 2, x)
#define convert_int16_rtp(x) DC__CVV(int16, int, DC__CVI, 0, 3, x)
#define convert_int16_rtn(x) DC__CVV(int16, int, DC__CVI, 0, 4, x)
#define convert_int16_sat(x) DC__CVV(int16, int, DC__CVI, 1, 0, x)
#define convert_int16_sat_rte(x) DC__CVV(int16, int, DC__CVI, 1, 1, x)
#define convert_int16_sat_rtz(x) DC__CVV(int16, int, DC__CVI, 1, 2, x)
#define convert_int16_sat_rtp(x) DC__CVV(int16, int, DC__CVI, 1, 3, x)
#define convert_int16_sat_rtn(x) DC__CVV(int16, int, DC__CVI, 1, 4, x)
#define convert_uint(x) ((uint)(x))
#define convert_uint_rte(x) DC__CVS(uint, DC__CVI, 0, 1, x)
#define convert_uint_rtz(x) DC__CVS(uint, DC__CVI, 0, 2, x)
#define convert_uint_rtp(x) DC__CVS(uint, DC__CVI, 0, 3, x)
#define convert_uint_rtn(x) DC__CVS(uint, DC__CVI, 0, 4, x)
#define convert_uint_sat(x) DC__CVS(uint, DC__CVI, 1, 0, x)
#define convert_uint_sat_rte(x) DC__CVS(uint, DC__CVI, 1, 1, x)
#define convert_uint_sat_rtz(x) DC__CVS(uint, DC__CVI, 1, 2, x)
#define convert_uint_sat_rtp(x) DC__CVS(uint, DC__CVI, 1, 3, x)
#define convert_uint_sat_rtn(x) DC__CVS(uint, DC__CVI, 1, 4, x)
#define convert_uint2(x) __builtin_convertvector((x), uint2)
#define convert_uint2_rte(x) DC__CVV(uint2, uint, DC__CVI, 0, 1, x)
#define convert_uint2_rtz(x) DC__CVV(uint2, uint, DC__CVI, 0, 2, x)
#define convert_uint2_rtp(x) DC__CVV(uint2, uint, DC__CVI, 0, 3, x)
#define convert_uint2_rtn(x) DC__CVV(uint2, uint, DC__CVI, 0, 4, x)
#define convert_uint2_sat(x) DC__CVV(uint2, uint, DC__CVI, 1, 0, x)
#define convert_uint2_sat_rte(x) DC__CVV(uint2, uint, DC__CVI, 1, 1, x)
#define convert_uint2_sat_rtz(x) DC__CVV(uint2, uint, DC__CVI, 1, 2, x)
#define convert_uint2_sat_rtp(x) DC__CVV(uint2, uint, DC__CVI, 1, 3, x)
#define convert_uint2_sat_rtn(x) DC__CVV(uint2, uint, DC__CVI, 1, 4, x)
#define convert_uint4(x) __builtin_convertvector((x), uint4)
#define convert_uint4_rte(x) DC__CVV(uint4, uint, DC__CVI, 0, 1, x)
#define convert_uint4_rtz(x) DC__CVV(uint4, uint, DC__CVI, 0, 2, x)
#define convert_uint4_rtp(x) DC__CVV(uint4, uint, DC__CVI, 0, 3, x)
#define convert_uint4_rtn(x) DC__CVV(uint4, uint, DC__CVI, 0, 4, x)
#define convert_uint4_sat(x) DC__CVV(uint4, uint, DC__CVI, 1, 0, x)
#define convert_uint4_sat_rte(x) DC__CVV(uint4, uint, DC__CVI, 1, 1, x)
#define convert_uint4_sat_rtz(x) DC__CVV(uint4, uint, DC__CVI, 1, 2, x)
#define convert_uint4_sat_rtp(x) DC__CVV(uint4, uint, DC__CVI, 1, 3, x)
#define convert_uint4_sat_rtn(x) DC__CVV(uint4, uint, DC__CVI, 1, 4, x)
#define convert_uint8(x) __builtin_convertvector((x), uint8)
#define convert_uint8_rte(x) DC__CVV(uint8, uint, DC__CVI, 0, 1, x)
#define convert_uint8_rtz(x) DC__CVV(uint8, uint, DC__CVI, 0, 2, x)
#define convert_uint8_rtp(x) DC__CVV(uint8, uint, DC__CVI, 0, 3, x)
#define convert_uint8_rtn(x) DC__CVV(uint8, uint, DC__CVI, 0, 4, x)
#define convert_uint8_sat(x) DC__CVV(uint8, uint, DC__CVI, 1, 0, x)
#define convert_uint8_sat_rte(x) DC__CVV(uint8, uint, DC__CVI, 1, 1, x)
#define convert_uint8_sat_rtz(x) DC__CVV(uint8, uint, DC__CVI, 1, 2, x)
#define convert_uint8_sat_rtp(x) DC__CVV(uint8, uint, DC__CVI, 1, 3, x)
#define convert_uint8_sat_rtn(x) DC__CVV(uint8, uint, DC__CVI, 1, 4, x)
#define convert_uint16(x) __builtin_convertvector((x), uint16)
#define convert_uint16_rte(x) DC__CVV(uint16, uint, DC__CVI, 0, 1, x)
#define convert_uint16_rtz(x) DC__CVV(uint16, uint, DC__CVI, 0, 2, x)
#define convert_uint16_rtp(x) DC__CVV(uint16, uint, DC__CVI, 0, 3, x)
#define convert_uint16_rtn(x) DC__CVV(uint16, uint, DC__CVI, 0, 4, x)
#define convert_uint16_sat(x) DC__CVV(uint16, uint, DC__CVI, 1, 0, x)
#define convert_uint16_sat_rte(x) DC__CVV(uint16, uint, DC__CVI, 1, 1, x)
#define convert_uint16_sat_rtz(x) DC__CVV(uint16, uint, DC__CVI, 1, 2, x)
#define convert_uint16_sat_rtp(x) DC__CVV(uint16, uint, DC__CVI, 1, 3, x)
#define convert_uint16_sat_rtn(x) DC__CVV(uint16, uint, DC__CVI, 1, 4, x)
#define convert_long(x) ((long)(x))
#define convert_long_rte(x) DC__CVS(long, DC__CVI, 0, 1, x)
#define convert_long_rtz(x) DC__CVS(long, DC__CVI, 0, 2, x)
#define convert_long_rtp(x) DC__CVS(long, DC__CVI, 0, 3, x)
#define convert_long_rtn(x) DC__CVS(long, DC__CVI, 0, 4, x)
#define convert_long_sat(x) DC__CVS(long, DC__CVI, 1, 0, x)
#define convert_long_sat_rte(x) DC__CVS(long, DC__CVI, 1, 1, x)
#define convert_long_sat_rtz(x) DC__CVS(long, DC__CVI, 1, 2, x)
#define convert_long_sat_rtp(x) DC__CVS(long, DC__CVI, 1, 3, x)
#define convert_long_sat_rtn(x) DC__CVS(long, DC__CVI, 1, 4, x)
#define convert_long2(x) __builtin_convertvector((x), long2)
#define convert_long2_rte(x) DC__CVV(long2, long, DC__CVI, 0, 1, x)
#define convert_long2_rtz(x) DC__CVV(long2, long, DC__CVI, 0, 2, x)
#define convert_long2_rtp(x) DC__CVV(long2, long, DC__CVI, 0, 3, x)
#define convert_long2_rtn(x) DC__CVV(long2, long, DC__CVI, 0, 4, x)
#define convert_long2_sat(x) DC__CVV(long2, long, DC__CVI, 1, 0, x)
#define convert_long2_sat_rte(x) DC__CVV(long2, long, DC__CVI, 1, 1, x)
#define convert_long2_sat_rtz(x) DC__CVV(long2, long, DC__CVI, 1, 2, x)
#define convert_long2_sat_rtp(x) DC__CVV(long2, long, DC__CVI, 1, 3, x)
#define convert_long2_sat_rtn(x) DC__CVV(long2, long, DC__CVI, 1, 4, x)
#define convert_long4(x) __builtin_convertvector((x), long4)
#define convert_long4_rte(x) DC__CVV(long4, long, DC__CVI, 0, 1, x)
#define convert_long4_rtz(x) DC__CVV(long4, long, DC__CVI, 0, 2, x)
#define convert_long4_rtp(x) DC__CVV(long4, long, DC__CVI, 0, 3, x)
#define convert_long4_rtn(x) DC__CVV(long4, long, DC__CVI, 0, 4, x)
#define convert_long4_sat(x) DC__CVV(long4, long, DC__CVI, 1, 0, x)
#define convert_long4_sat_rte(x) DC__CVV(long4, long, DC__CVI, 1, 1, x)
#define convert_long4_sat_rtz(x) DC__CVV(long4, long, DC__CVI, 1, 2, x)
#define convert_long4_sat_rtp(x) DC__CVV(long4, long, DC__CVI, 1, 3, x)
#define convert_long4_sat_rtn(x) DC__CVV(long4, long, DC__CVI, 1, 4, x)
#define convert_long8(x) __builtin_convertvector((x), long8)
#define convert_long8_rte(x) DC__CVV(long8, long, DC__CVI, 0, 1, x)
#define convert_long8_rtz(x) DC__CVV(long8, long, DC__CVI, 0, 2, x)
#define convert_long8_rtp(x) DC__CVV(long8, long, DC__CVI, 0, 3, x)
#define convert_long8_rtn(x) DC__CVV(long8, long, DC__CVI, 0, 4, x)
#define convert_long8_sat(x) DC__CVV(long8, long, DC__CVI, 1, 0, x)
#define convert_long8_sat_rte(x) DC__CVV(long8, long, DC__CVI, 1, 1, x)
#define convert_long8_sat_rtz(x) DC__CVV(long8, long, DC__CVI, 1, 2, x)
#define convert_long8_sat_rtp(x) DC__CVV(long8, long, DC__CVI, 1, 3, x)
#define convert_long8_sat_rtn(x) DC__CVV(long8, long, DC__CVI, 1, 4, x)
#define convert_long16(x) __builtin_convertvector((x), long16)
#define convert_long16_rte(x) DC__CVV(long16, long, DC__CVI, 0, 1, x)
#define convert_long16_rtz(x) DC__CVV(long16, long, DC__CVI, 0, 2, x)
#define convert_long16_rtp(x) DC__CVV(long16, long, DC__CVI, 0, 3, x)
#define convert_long16_rtn(x) DC__CVV(long16, long, DC__CVI, 0, 4, x)
#define convert_long16_sat(x) DC__CVV(long16, long, DC__CVI, 1, 0, x)
#define convert_long16_sat_rte(x) DC__CVV(long16, long, DC__CVI, 1, 1, x)
#define convert_long16_sat_rtz(x) DC__CVV(long16, long, DC__CVI, 1, 2, x)
#define convert_long16_sat_rtp(x) DC__CVV(long16, long, DC__CVI, 1, 3, x)
#define convert_long16_sat_rtn(x) DC__CVV(long16, long, DC__CVI, 1, 4, x)
#define convert_ulong(x) ((ulong)(x))
#define convert_ulong_rte(x) DC__CVS(ulong, DC__CVI, 0, 1, x)
#define convert_ulong_rtz(x) DC__CVS(ulong, DC__CVI, 0, 2, x)
#define convert_ulong_rtp(x) DC__CVS(ulong, DC__CVI, 0, 3, x)
#define convert_ulong_rtn(x) DC__CVS(ulong, DC__CVI, 0, 4, x)
#define convert_ulong_sat(x) DC__CVS(ulong, DC__CVI, 1, 0, x)
#define convert_ulong_sat_rte(x) DC__CVS(ulong, DC__CVI, 1, 1, x)
#define convert_ulong_sat_rtz(x) DC__CVS(ulong, DC__CVI, 1, 2, x)
#define convert_ulong_sat_rtp(x) DC__CVS(ulong, DC__CVI, 1, 3, x)
#define convert_ulong_sat_rtn(x) DC__CVS(ulong, DC__CVI, 1, 4, x)
#define convert_ulong2(x) __builtin_convertvector((x), ulong2)
#define convert_ulong2_rte(x) DC__CVV(ulong2, ulong, DC__CVI, 0, 1, x)
#define convert_ulong2_rtz(x) DC__CVV(ulong2, ulong, DC__CVI, 0, 2, x)
#define convert_ulong2_rtp(x) DC__CVV(ulong2, ulong, DC__CVI, 0, 3, x)
#define convert_ulong2_rtn(x) DC__CVV(ulong2, ulong, DC__CVI, 0, 4, x)
#define convert_ulong2_sat(x) DC__CVV(ulong2, ulong, DC__CVI, 1, 0, x)
#define convert_ulong2_sat_rte(x) DC__CVV(ulong2, ulong, DC__CVI, 1, 1, x)
#define convert_ulong2_sat_rtz(x) DC__CVV(ulong2, ulong, DC__CVI, 1, 2, x)
#define convert_ulong2_sat_rtp(x) DC__CVV(ulong2, ulong, DC__CVI, 1, 3, x)
#define convert_ulong2_sat_rtn(x) DC__CVV(ulong2, ulong, DC__CVI, 1, 4, x)
#define convert_ulong4(x) __builtin_convertvector((x), ulong4)
#define convert_ulong4_rte(x) DC__CVV(ulong4, ulong, DC__CVI, 0, 1, x)
#define convert_ulong4_rtz(x) DC__CVV(ulong4, ulong, DC__CVI, 0, 2, x)
#define convert_ulong4_rtp(x) DC__CVV(ulong4, ulong, DC__CVI, 0, 3, x)
#define convert_ulong4_rtn(x) DC__CVV(ulong4, ulong, DC__CVI, 0, 4, x)
#define convert_ulong4_sat(x) DC__CVV(ulong4, ulong, DC__CVI, 1, 0, x)
#define convert_ulong4_sat_rte(x) DC__CVV(ulong4, ulong, DC__CVI, 1, 1, x)
#define convert_ulong4_sat_rtz(x) DC__CVV(ulong4, ulong, DC__CVI, 1, 2, x)
#define convert_ulong4_sat_rtp(x) DC__CVV(ulong4, ulong, DC__CVI, 1, 3, x)
#define convert_ulong4_sat_rtn(x) DC__CVV(ulong4, ulong, DC__CVI, 1, 4, x)
#define convert_ulong8(x) __builtin_convertvector((x), ulong8)
#define convert_ulong8_rte(x) DC__CVV(ulong8, ulong, DC__CVI, 0, 1, x)
#define convert_ulong8_rtz(x) DC__CVV(ulong8, ulong, DC__CVI, 0, 2, x)
#define convert_ulong8_rtp(x) DC__CVV(ulong8, ulong, DC__CVI, 0, 3, x)
#define convert_ulong8_rtn(x) DC__CVV(ulong8, ulong, DC__CVI, 0, 4, x)
#define convert_ulong8_sat(x) DC__CVV(ulong8, ulong, DC__CVI, 1, 0, x)
#define convert_ulong8_sat_rte(x) DC__CVV(ulong8, ulong, DC__CVI, 1, 1, x)
#define convert_ulong8_sat_rtz(x) DC__CVV(ulong8, ulong, DC__CVI, 1, 2, x)
#define convert_ulong8_sat_rtp(x) DC__CVV(ulong8, ulong, DC__CVI, 1, 3, x)
#define convert_ulong8_sat_rtn(x) DC__CVV(ulong8, ulong, DC__CVI, 1, 4, x)
#define convert_ulong16(x) __builtin_convertvector((x), ulong16)
#define convert_ulong16_rte(x) DC__CVV(ulong16, ulong, DC__CVI, 0, 1, x)
#define convert_ulong16_rtz(x) DC__CVV(ulong16, ulong, DC__CVI, 0, 2, x)
#define convert_ulong16_rtp(x) DC__CVV(ulong16, ulong, DC__CVI, 0, 3, x)
#define convert_ulong16_rtn(x) DC__CVV(ulong16, ulong, DC__CVI, 0, 4, x)
#define convert_ulong16_sat(x) DC__CVV(ulong16, ulong, DC__CVI, 1, 0, x)
#define convert_ulong16_sat_rte(x) DC__CVV(ulong16, ulong, DC__CVI, 1, 1, x)
#define convert_ulong16_sat_rtz(x) DC__CVV(ulong16, ulong, DC__CVI, 1, 2, x)
#define convert_ulong16_sat_rtp(x) DC__CVV(ulong16, ulong, DC__CVI, 1, 3, x)
#define convert_ulong16_sat_rtn(x) DC__CVV(ulong16, ulong, DC__CVI, 1, 4, x)
#define convert_float(x) ((float)(x))
#define convert_float_rte(x) DC__CVS(float, DC__CVF, 0, 1, x)
#define convert_float_rtz(x) DC__CVS(float, DC__CVF, 0, 2, x)
#define convert_float_rtp(x) DC__CVS(float, DC__CVF, 0, 3, x)
#define convert_float_rtn(x) DC__CVS(float, DC__CVF, 0, 4, x)
#define convert_float2(x) __builtin_convertvector((x), float2)
#define convert_float2_rte(x) DC__CVV(float2, float, DC__CVF, 0, 1, x)
#define convert_float2_rtz(x) DC__CVV(float2, float, DC__CVF, 0, 2, x)
#define convert_float2_rtp(x) DC__CVV(float2, float, DC__CVF, 0, 3, x)
#define convert_float2_rtn(x) DC__CVV(float2, float, DC__CVF, 0, 4, x)
#define convert_float4(x) __builtin_convertvector((x), float4)
#define convert_float4_rte(x) DC__CVV(float4, float, DC__CVF, 0, 1, x)
#define convert_float4_rtz(x) DC__CVV(float4, float, DC__CVF, 0, 2, x)
#define convert_float4_rtp(x) DC__CVV(float4, float, DC__CVF, 0, 3, x)
#define convert_float4_rtn(x) DC__CVV(float4, float, DC__CVF, 0, 4, x)
#define convert_float8(x) __builtin_convertvector((x), float8)
#define convert_float8_rte(x) DC__CVV(float8, float, DC__CVF, 0, 1, x)
#define convert_float8_rtz(x) DC__CVV(float8, float, DC__CVF, 0, 2, x)
#define convert_float8_rtp(x) DC__CVV(float8, float, DC__CVF, 0, 3, x)
#define convert_float8_rtn(x) DC__CVV(float8, float, DC__CVF, 0, 4, x)
#define convert_float16(x) __builtin_convertvector((x), float16)
#define convert_float16_rte(x) DC__CVV(float16, float, DC__CVF, 0, 1, x)
#define convert_float16_rtz(x) DC__CVV(float16, float, DC__CVF, 0, 2, x)
#define convert_float16_rtp(x) DC__CVV(float16, float, DC__CVF, 0, 3, x)
#define convert_float16_rtn(x) DC__CVV(float16, float, DC__CVF, 0, 4, x)
#define convert_double(x) ((double)(x))
#define convert_double_rte(x) DC__CVS(double, DC__CVF, 0, 1, x)
#define convert_double_rtz(x) DC__CVS(double, DC__CVF, 0, 2, x)
#define convert_double_rtp(x) DC__CVS(double, DC__CVF, 0, 3, x)
#define convert_double_rtn(x) DC__CVS(double, DC__CVF, 0, 4, x)
#define convert_double2(x) __builtin_convertvector((x), double2)
#define convert_double2_rte(x) DC__CVV(double2, double, DC__CVF, 0, 1, x)
#define convert_double2_rtz(x) DC__CVV(double2, double, DC__CVF, 0, 2, x)
#define convert_double2_rtp(x) DC__CVV(double2, double, DC__CVF, 0, 3, x)
#define convert_double2_rtn(x) DC__CVV(double2, double, DC__CVF, 0, 4, x)
#define convert_double4(x) __builtin_convertvector((x), double4)
#define convert_double4_rte(x) DC__CVV(double4, double, DC__CVF, 0, 1, x)
#define convert_double4_rtz(x) DC__CVV(double4, double, DC__CVF, 0, 2, x)
#define convert_double4_rtp(x) DC__CVV(double4, double, DC__CVF, 0, 3, x)
#define convert_double4_rtn(x) DC__CVV(double4, double, DC__CVF, 0, 4, x)
#define convert_double8(x) __builtin_convertvector((x), double8)
#define convert_double8_rte(x) DC__CVV(double8, double, DC__CVF, 0, 1, x)
#define convert_double8_rtz(x) DC__CVV(double8, double, DC__CVF, 0, 2, x)
#define convert_double8_rtp(x) DC__CVV(double8, double, DC__CVF, 0, 3, x)
#define convert_double8_rtn(x) DC__CVV(double8, double, DC__CVF, 0, 4, x)
#define convert_double16(x) __builtin_convertvector((x), double16)
#define convert_double16_rte(x) DC__CVV(double16, double, DC__CVF, 0, 1, x)
#define convert_double16_rtz(x) DC__CVV(double16, double, DC__CVF, 0, 2, x)
#define convert_double16_rtp(x) DC__CVV(double16, double, DC__CVF, 0, 3, x)
#define convert_double16_rtn(x) DC__CVV(double16, double, DC__CVF, 0, 4, x)
#define as_char(x) DC__AS(dc_char, x)
#define as_char2(x) DC__AS(char2, x)
#define as_char4(x) DC__AS(char4, x)
#define as_char8(x) DC__AS(char8, x)
#define as_char16(x) DC__AS(char16, x)
#define as_uchar(x) DC__AS(uchar, x)
#define as_uchar2(x) DC__AS(uchar2, x)
#define as_uchar4(x) DC__AS(uchar4, x)
#define as_uchar8(x) DC__AS(uchar8, x)
#define as_uchar16(x) DC__AS(uchar16, x)
#define as_short(x) DC__AS(short, x)
#define as_short2(x) DC__AS(short2, x)
#define as_short4(x) DC__AS(short4, x)
#define as_short8(x) DC__AS(short8, x)
#define as_short16(x) DC__AS(short16, x)
#define as_ushort(x) DC__AS(ushort, x)
#define as_ushort2(x) DC__AS(ushort2, x)
#define as_ushort4(x) DC__AS(ushort4, x)
#define as_ushort8(x) DC__AS(ushort8, x)
#define as_ushort16(x) DC__AS(ushort16, x)
#define as_int(x) DC__AS(int, x)
#define as_int2(x) DC__AS(int2, x)
#define as_int4(x) DC__AS(int4, x)
#define as_int8(x) DC__AS(int8, x)
#define as_int16(x) DC__AS(int16, x)
#define as_uint(x) DC__AS(uint, x)
#define as_uint2(x) DC__AS(uint2, x)
#define as_uint4(x) DC__AS(uint4, x)
#define as_uint8(x) DC__AS(uint8, x)
#define as_uint16(x) DC__AS(uint16, x)
#define as_long(x) DC__AS(long, x)
#define as_long2(x) DC__AS(long2, x)
#define as_long4(x) DC__AS(long4, x)
#define as_long8(x) DC__AS(long8, x)
#define as_long16(x) DC__AS(long16, x)
#define as_ulong(x) DC__AS(ulong, x)
#define as_ulong2(x) DC__AS(ulong2, x)
#define as_ulong4(x) DC__AS(ulong4, x)
#define as_ulong8(x) DC__AS(ulong8, x)
#define as_ulong16(x) DC__AS(ulong16, x)
#define as_float(x) DC__AS(float, x)
#define as_float2(x) DC__AS(float2, x)
#define as_float4(x) DC__AS(float4, x)
#define as_float8(x) DC__AS(float8, x)
#define as_float16(x) DC__AS(float16, x)
#define as_double(x) DC__AS(double, x)
#define as_double2(x) DC__AS(double2, x)
#define as_double4(x) DC__AS(double4, x)
#define as_double8(x) DC__AS(double8, x)
#define as_double16(x) DC__AS(double16, x)
#endif  // DC_NEED_CONVERT

//===-- vloadN / vstoreN (DC_NEED_VLOAD) ----------------------------------------===//

// Any element type, any alignment (memcpy). The vector type is built from
// the pointer's element type with its qualifiers dropped. vload3 and
// vstore3 move 3 elements (at p + 3 * offset); their vector is the
// 4-component type, whose 4th lane vload3 sets to 0.
#ifdef DC_NEED_VLOAD

#define DC__VLANES(N) ((N) == 3 ? 4 : (N))
#define DC__VLOAD(N, off, p)                                                 \
  ({                                                                         \
    __auto_type dc__vp = (p);                                                \
    typedef __typeof__(((void)0, *dc__vp)) dc__E;                            \
    typedef dc__E dc__V __attribute__((vector_size(DC__VLANES(N) * sizeof(dc__E)))); \
    dc__V dc__r = {0};                                                       \
    __builtin_memcpy(&dc__r, dc__vp + (size_t)(off) * N, N * sizeof(dc__E)); \
    dc__r;                                                                   \
  })
#define DC__VSTORE(N, data, off, p)                                          \
  ({                                                                         \
    __auto_type dc__vd = (data);                                             \
    __auto_type dc__vp = (p);                                                \
    _Static_assert(__builtin_types_compatible_p(__typeof__(dc__vd[0]),       \
                                                __typeof__(*dc__vp)) &&      \
                       sizeof(dc__vd) == DC__VLANES(N) * sizeof(*dc__vp),    \
                   "dclua: vstore" #N " needs " #N " lanes of the pointer's type"); \
    __builtin_memcpy(dc__vp + (size_t)(off) * N, &dc__vd, N * sizeof(*dc__vp)); \
    (void)0;                                                                 \
  })
#define vload2(off, p) DC__VLOAD(2, off, p)
#define vload3(off, p) DC__VLOAD(3, off, p)
#define vload4(off, p) DC__VLOAD(4, off, p)
#define vload8(off, p) DC__VLOAD(8, off, p)
#define vload16(off, p) DC__VLOAD(16, off, p)
#define vstore2(data, off, p) DC__VSTORE(2, data, off, p)
#define vstore3(data, off, p) DC__VSTORE(3, data, off, p)
#define vstore4(data, off, p) DC__VSTORE(4, data, off, p)
#define vstore8(data, off, p) DC__VSTORE(8, data, off, p)
#define vstore16(data, off, p) DC__VSTORE(16, data, off, p)

#endif  // DC_NEED_VLOAD

//===-- Atomics (DC_NEED_ATOMIC) -------------------------------------------------===//

// 32- and 64-bit integers through any (volatile) pointer; atomic_xchg also
// floats. Relaxed ordering, as OpenCL 1.2 atomics have; they are real
// hardware atomics because work-items run on several threads. gcc has no
// fetch-min/max, so those are compare-exchange loops. __typeof__(+*p) is
// the pointee type without qualifiers (these types do not promote).
#ifdef DC_NEED_ATOMIC

#define DC__RLX __ATOMIC_RELAXED
#define atomic_add(p, v) __atomic_fetch_add((p), (v), DC__RLX)
#define atomic_sub(p, v) __atomic_fetch_sub((p), (v), DC__RLX)
#define atomic_inc(p) __atomic_fetch_add((p), 1, DC__RLX)
#define atomic_dec(p) __atomic_fetch_sub((p), 1, DC__RLX)
#define atomic_and(p, v) __atomic_fetch_and((p), (v), DC__RLX)
#define atomic_or(p, v) __atomic_fetch_or((p), (v), DC__RLX)
#define atomic_xor(p, v) __atomic_fetch_xor((p), (v), DC__RLX)
#define atomic_xchg(p, v)                                                    \
  ({                                                                         \
    __auto_type dc__xp = (p);                                                \
    __typeof__(+*dc__xp) dc__xv = (v), dc__xo;                               \
    __atomic_exchange(dc__xp, &dc__xv, &dc__xo, DC__RLX);                    \
    dc__xo;                                                                  \
  })
#define atomic_cmpxchg(p, cmp, v)                                            \
  ({                                                                         \
    __auto_type dc__cp = (p);                                                \
    __typeof__(+*dc__cp) dc__ce = (cmp);                                     \
    __atomic_compare_exchange_n(dc__cp, &dc__ce, (v), 0, DC__RLX, DC__RLX);  \
    dc__ce;                                                                  \
  })
#define DC__ATOMIC_MINMAX(p, v, CMP)                                         \
  ({                                                                         \
    __auto_type dc__mp = (p);                                                \
    __typeof__(+*dc__mp) dc__mv = (v), dc__mo = __atomic_load_n(dc__mp, DC__RLX); \
    while (dc__mv CMP dc__mo &&                                              \
           !__atomic_compare_exchange_n(dc__mp, &dc__mo, dc__mv, 1, DC__RLX, DC__RLX)) { \
    }                                                                        \
    dc__mo;                                                                  \
  })
#define atomic_min(p, v) DC__ATOMIC_MINMAX(p, v, <)
#define atomic_max(p, v) DC__ATOMIC_MINMAX(p, v, >)
#define atom_add(p, v) atomic_add(p, v)
#define atom_sub(p, v) atomic_sub(p, v)
#define atom_xchg(p, v) atomic_xchg(p, v)
#define atom_inc(p) atomic_inc(p)
#define atom_dec(p) atomic_dec(p)
#define atom_cmpxchg(p, cmp, v) atomic_cmpxchg(p, cmp, v)
#define atom_min(p, v) atomic_min(p, v)
#define atom_max(p, v) atomic_max(p, v)
#define atom_and(p, v) atomic_and(p, v)
#define atom_or(p, v) atomic_or(p, v)
#define atom_xor(p, v) atomic_xor(p, v)

#endif  // DC_NEED_ATOMIC

//===-- Async copies and events (DC_NEED_ASYNC) -----------------------------------===//

// async_work_group_copy and async_work_group_strided_copy are cooperative
// copies: the work-item with linear local id l (get_local_id(0) +
// get_local_size(0) * (get_local_id(1) + get_local_size(1) *
// get_local_id(2))) copies elements l, l + W, l + 2W, ... (W the group's
// size), so the group's work-items together copy every element once. The
// front end makes `wait_group_events(n, events);` a barrier statement, so
// the code generator splits the region there (or switches fibers) and
// never emits the call: after it, every element is in place for every
// work-item. There is no data race: a work-group runs on one thread, in
// every execution mode (its work-items are iterations of the region loops
// or fibers switched only at barriers), so the work-items' shares of a
// copy are written one after another and all of them before any
// work-item passes the barrier. A copy that no wait_group_events follows
// is complete only for its own share, which OpenCL does not promise more
// of anyway.
//
// The work-item functions are those in scope where the macro expands: the
// module's (loop variables of the region) in generated code. The element
// is copied with memcpy of its size (any scalar or vector type); the
// helper is always inlined, so the size is a constant there. The stride
// applies to the __global side, so the strided copy's two directions
// differ; a CPU pointer does not carry its address space, so the code
// generator writes the built-in table's spelling of each direction:
// dc_async_strided_copy_g2l (to __local: dst[i] = src[i * stride]) and
// dc_async_strided_copy_l2g (to __global: dst[i * stride] = src[i]). The
// event returned is 1 (events carry nothing); the one passed is evaluated
// and otherwise ignored. prefetch is a hint: it evaluates its arguments
// and does nothing.
#ifdef DC_NEED_ASYNC

static inline __attribute__((always_inline)) void dc__async_copy(
    void* dst, const void* src, size_t size, size_t n, size_t dst_stride,
    size_t src_stride, size_t first, size_t step) {
  for (size_t i = first; i < n; i += step) {
    __builtin_memcpy((char*)dst + i * dst_stride * size,
                     (const char*)src + i * src_stride * size, size);
  }
}
#define DC__ASYNC_LID                                                        \
  (get_local_id(0) +                                                         \
   get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))
#define DC__ASYNC_WG (get_local_size(0) * get_local_size(1) * get_local_size(2))
// DST_STRIDE and SRC_STRIDE may name dc__st, the stride argument.
#define DC__ASYNC(dst, src, n, st, DST_STRIDE, SRC_STRIDE, ev)               \
  ({                                                                         \
    __auto_type dc__ad = (dst);                                              \
    __auto_type dc__as = (src);                                              \
    size_t dc__an = (n), dc__st = (st);                                      \
    (void)dc__st;                                                            \
    _Static_assert(sizeof(*dc__ad) == sizeof(*dc__as),                       \
                   "dclua: an async copy's pointers differ in element type"); \
    (void)(ev);                                                              \
    dc__async_copy(dc__ad, dc__as, sizeof(*dc__ad), dc__an, DST_STRIDE,      \
                   SRC_STRIDE, DC__ASYNC_LID, DC__ASYNC_WG);                 \
    (event_t)1;                                                              \
  })
// Either direction: a contiguous copy is the same both ways.
#define async_work_group_copy(dst, src, n, ev) DC__ASYNC(dst, src, n, 1, 1, 1, ev)
#define dc_async_strided_copy_g2l DC__ASYNC_G2L
#define dc_async_strided_copy_l2g DC__ASYNC_L2G
#define DC__ASYNC_G2L(dst, src, n, stride, ev) DC__ASYNC(dst, src, n, stride, 1, dc__st, ev)
#define DC__ASYNC_L2G(dst, src, n, stride, ev) DC__ASYNC(dst, src, n, stride, dc__st, 1, ev)
// Never emitted (the code generator writes the direction's spelling); for
// a source that reaches the C compiler some other way, it fails to
// compile rather than guess the direction.
#define async_work_group_strided_copy(dst, src, n, stride, ev)              \
  ({                                                                         \
    _Static_assert(0, "dclua: async_work_group_strided_copy needs the "      \
                      "direction the code generator spells");                \
    (event_t)0;                                                              \
  })
// A barrier statement in generated code (see above); never evaluated.
#define wait_group_events(num_events, event_list) ((void)0)
#define prefetch(p, n) ((void)(p), (void)(n))

#endif  // DC_NEED_ASYNC

#endif  // DC_LOWER_C_PRELUDE_H_

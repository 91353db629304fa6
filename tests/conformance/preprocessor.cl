// preprocessor.cl: OpenCL C 1.2 section 6.10 (preprocessor directives
// and macros) with the C99 preprocessor it keeps: the predefined macros
// __OPENCL_VERSION__, CL_VERSION_1_0/1_1/1_2, __OPENCL_C_VERSION__ (which
// follows -cl-std), __ENDIAN_LITTLE__, __FILE__, __LINE__,
// __kernel_exec, __FAST_RELAXED_MATH__ (only with -cl-fast-relaxed-math)
// and the extension macros such as cl_khr_fp64; the limits of 6.12.2 and
// 6.12.3 (FLT_MAX, INT_MAX, ...) as macros that #if and #ifdef see;
// #pragma OPENCL EXTENSION and FP_CONTRACT; object-like, function-like
// and variadic macros, # and ##, nested and recursive-looking expansion,
// #if arithmetic with defined, #elif, #undef, and -D/-U build options.
// The runs and their expected outputs are in manifest.txt.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION all : enable
#pragma OPENCL FP_CONTRACT OFF

#define SQUARE(x) ((x) * (x))
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)
#define STR(a) #a
#define XSTR(a) STR(a)
#define FIRST(a, ...) (a)
#define COUNT(...) count_args(0, __VA_ARGS__)
#define EMPTY
#define SELF SELF                  // a macro naming itself stops there
#define TWICE(f, x) f(f(x))
#define NEG(x) (-(x))
#define FIVE 5
#define PLUS_ONE(x) x + 1          // no parentheses: precedence shows

#ifndef SCALE
#define SCALE 1
#endif

int count_args(int zero, int a, int b, int c) { return zero + a + b + c; }

__kernel_exec(1, float4)
void macros(__global int* o) {
  int CAT(my, var) = 7;                          // myvar
  int SELF = 3;                                  // stays SELF
  o[0] = SQUARE(myvar + 1);                      // 64
  o[1] = MAX2(FIVE, 3) * SCALE;
  o[2] = XCAT(1, 0);                             // the number 10
  o[3] = (int)sizeof(STR(abc));                  // 4 with the NUL
  o[4] = (int)sizeof(XSTR(FIVE));                // "5": 2
  o[5] = (int)sizeof(STR(FIVE));                 // "FIVE": 5
  o[6] = FIRST(11, 12, 13);
  o[7] = COUNT(1, 2, 3);
  o[8] = TWICE(NEG, 9);                          // 9
  o[9] = PLUS_ONE(2) * 3;                        // 2 + 1 * 3 = 5
  o[10] = SELF EMPTY + CAT(FI, VE);              // CAT's operands are not
                                                 // expanded first: FIVE
  o[11] = __LINE__;                              // 53
  o[12] = (int)sizeof(__FILE__);                 // "preprocessor.cl": 16
#define LOCAL_ONLY 40
  o[13] = LOCAL_ONLY + 2;
#undef LOCAL_ONLY
#ifdef LOCAL_ONLY
  o[13] = -1;
#endif
  o[14] = SCALE * 100;
}

// The predefined macros and the limits, seen by #if and #ifdef.
__kernel void predefined(__global int* o) {
  o[0] = __OPENCL_VERSION__;
  o[1] = __OPENCL_C_VERSION__;
  o[2] = CL_VERSION_1_0 + CL_VERSION_1_1 * 10 + CL_VERSION_1_2 * 100;
  o[3] = __ENDIAN_LITTLE__;
#if defined(cl_khr_fp64) && cl_khr_fp64
  double d = 0.5;
  o[4] = (int)(d * 4.0);                        // 2
#else
  o[4] = -1;
#endif
#ifdef FLT_MAX
  o[5] = 1;
#else
  o[5] = 0;
#endif
#if INT_MAX == 2147483647 && INT_MIN < -2147483647 && UINT_MAX == 0xffffffffU
  o[6] = 1;
#else
  o[6] = 0;
#endif
#if CHAR_BIT == 8 && SCHAR_MIN == -128 && LONG_MAX > INT_MAX && FLT_DIG == 6
  o[7] = FLT_MANT_DIG + DBL_MANT_DIG * 100;     // 5324
#else
  o[7] = 0;
#endif
#if defined(__FAST_RELAXED_MATH__)
  o[8] = 1;
#else
  o[8] = 0;
#endif
#if defined(__IMAGE_SUPPORT__)
  o[9] = 1;
#else
  o[9] = 0;                                     // the engine has no images
#endif
  o[10] = (int)(FLT_MAX > 3e38f) + (int)(FLT_EPSILON == 0x1.0p-23f) * 10 +
          (int)(DBL_EPSILON == 0x1.0p-52) * 100 + (SHRT_MAX == 32767) * 1000;
  o[11] = (int)(M_PI_F * 1000.0f);              // 3141
  o[12] = (int)(M_E * 1000.0);                  // 2718
#if __OPENCL_C_VERSION__ >= CL_VERSION_1_2
  o[13] = 12;
#elif __OPENCL_C_VERSION__ >= CL_VERSION_1_1
  o[13] = 11;
#else
  o[13] = 10;
#endif
#if (3 * 4 + 1) % 5 == 3 && !defined(NOT_DEFINED) && (1 << 4) == 16 && -1 < 0
  o[14] = 1;
#elif 1
  o[14] = 2;
#endif
#if 0
  o[14] = 99;  // never compiled
#error not reached
#endif
}

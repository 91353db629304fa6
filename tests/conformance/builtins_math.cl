// builtins_math.cl: OpenCL C 1.2 section 6.12.2 (math functions) for
// float and double, scalar and vector overloads, checked against values
// computed on the host (in double for float results, in long double for
// double results) within the ULP bounds of section 7.4 (table 7.1 for
// float, 7.2 for double): each output buffer gathers the functions of one
// bound, and the manifest gives it that bound as its tolerance (ulp:N).
// The special values of section 7.5.1 (NaN, infinities, zeros, denormals)
// are among the inputs.
//
// Each kernel body is a macro instantiated for scalars and vectors: item
// i of function k goes to out[k * n + i] whatever the width, so that the
// scalar and vector kernels of one input set have the same expected
// values.
// The runs and their expected outputs are in manifest.txt.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define LD1(p) (*(p))
#define ST1(v, p) (*(p) = (v))
#define LD2(p) vload2(0, p)
#define ST2(v, p) vstore2(v, 0, p)
#define LD4(p) vload4(0, p)
#define ST4(v, p) vstore4(v, 0, p)
#define LD8(p) vload8(0, p)
#define ST8(v, p) vstore8(v, 0, p)
#define LD16(p) vload16(0, p)
#define ST16(v, p) vstore16(v, 0, p)

// One argument. R is the scalar type, T the argument type, I the int
// type of T's width, W the width, ONE R's 1, CM a conversion of T's
// comparison results to I.
#define UNARY(NAME, R, T, I, W, ONE, CM)                                     \
  __kernel void NAME(__global const R* x, __global R* z0, __global R* z1,    \
                     __global R* u2, __global R* u3a, __global R* u3b,       \
                     __global R* sq, __global R* u4a, __global R* u4b,       \
                     __global R* u5, __global R* u6, __global R* u16,        \
                     __global int* ie, uint n) {                             \
    size_t i = get_global_id(0) * W;                                         \
    T v = LD##W(x + i);                                                      \
    T ip, c;                                                                 \
    I e;                                                                     \
    ST##W(fabs(v), z0 + 0 * n + i);                                          \
    ST##W(floor(v), z0 + 1 * n + i);                                         \
    ST##W(ceil(v), z0 + 2 * n + i);                                          \
    ST##W(trunc(v), z0 + 3 * n + i);                                         \
    ST##W(round(v), z0 + 4 * n + i);                                         \
    ST##W(rint(v), z0 + 5 * n + i);                                          \
    ST##W(logb(v), z0 + 6 * n + i);                                          \
    ST##W(fract(v, &ip), z1 + 0 * n + i);                                    \
    ST##W(ip, z1 + 1 * n + i);                                               \
    ST##W(modf(v, &ip), z1 + 2 * n + i);                                     \
    ST##W(ip, z1 + 3 * n + i);                                               \
    ST##W(frexp(v, &e), z1 + 4 * n + i);                                     \
    ST##W(e, ie + 0 * n + i);                                                \
    /* ilogb of 0 and NaN is FP_ILOGB0 and FP_ILOGBNAN, whose values are */  \
    /* the implementation's: -7777 stands for them */                        \
    ST##W(select(ilogb(v), (I)(-7777), CM(isnan(v) | (v == v - v))),         \
          ie + 1 * n + i);                                                   \
    ST##W(copysign(v, (T)(-ONE)), z1 + 5 * n + i);                           \
    ST##W(cbrt(v), u2 + 0 * n + i);                                          \
    ST##W(log1p(v), u2 + 1 * n + i);                                         \
    ST##W(rsqrt(v), u2 + 2 * n + i);                                         \
    ST##W(exp(v), u3a + 0 * n + i);                                          \
    ST##W(exp2(v), u3a + 1 * n + i);                                         \
    ST##W(exp10(v), u3a + 2 * n + i);                                        \
    ST##W(expm1(v), u3a + 3 * n + i);                                        \
    ST##W(log(v), u3b + 0 * n + i);                                          \
    ST##W(log2(v), u3b + 1 * n + i);                                         \
    ST##W(log10(v), u3b + 2 * n + i);                                        \
    ST##W(sqrt(v), sq + i);                                                  \
    ST##W(sin(v), u4a + 0 * n + i);                                          \
    ST##W(cos(v), u4a + 1 * n + i);                                          \
    ST##W(sinh(v), u4a + 2 * n + i);                                         \
    ST##W(cosh(v), u4a + 3 * n + i);                                         \
    ST##W(sincos(v, &c), u4a + 4 * n + i);                                   \
    ST##W(c, u4a + 5 * n + i);                                               \
    ST##W(asin(v), u4b + 0 * n + i);                                         \
    ST##W(acos(v), u4b + 1 * n + i);                                         \
    ST##W(asinh(v), u4b + 2 * n + i);                                        \
    ST##W(acosh(v), u4b + 3 * n + i);                                        \
    ST##W(sinpi(v), u4b + 4 * n + i);                                        \
    ST##W(cospi(v), u4b + 5 * n + i);                                        \
    ST##W(tan(v), u5 + 0 * n + i);                                           \
    ST##W(atan(v), u5 + 1 * n + i);                                          \
    ST##W(atanh(v), u5 + 2 * n + i);                                         \
    ST##W(tanh(v), u5 + 3 * n + i);                                          \
    ST##W(asinpi(v), u5 + 4 * n + i);                                        \
    ST##W(acospi(v), u5 + 5 * n + i);                                        \
    ST##W(atanpi(v), u5 + 6 * n + i);                                        \
    ST##W(tanpi(v), u6 + i);                                                 \
    ST##W(erf(v), u16 + 0 * n + i);                                          \
    ST##W(erfc(v), u16 + 1 * n + i);                                         \
    ST##W(tgamma(v), u16 + 2 * n + i);                                       \
  }

UNARY(unary, float, float, int, 1, 1.0f, (int))
UNARY(unary4, float, float4, int4, 4, 1.0f, as_int4)
UNARY(unary16, float, float16, int16, 16, 1.0f, as_int16)
UNARY(unary_d, double, double, int, 1, 1.0, (int))
UNARY(unary_d2, double, double2, int2, 2, 1.0, convert_int2)
UNARY(unary_d8, double, double8, int8, 8, 1.0, convert_int8)

// Two and three arguments, and an int argument k.
#define BINARY(NAME, R, T, I, W, CM)                                         \
  __kernel void NAME(__global const R* x, __global const R* y,               \
                     __global const R* z, __global const int* k,             \
                     __global R* b0a, __global R* b0b, __global R* b4,       \
                     __global R* b6, __global R* b16, __global int* bq,      \
                     uint n) {                                               \
    size_t i = get_global_id(0) * W;                                         \
    T a = LD##W(x + i), b = LD##W(y + i), c = LD##W(z + i);                  \
    I m = LD##W(k + i), q;                                                   \
    ST##W(copysign(a, b), b0a + 0 * n + i);                                  \
    ST##W(fdim(a, b), b0a + 1 * n + i);                                      \
    ST##W(fmax(a, b), b0a + 2 * n + i);                                      \
    ST##W(fmin(a, b), b0a + 3 * n + i);                                      \
    ST##W(fmod(a, b), b0a + 4 * n + i);                                      \
    ST##W(maxmag(a, b), b0a + 5 * n + i);                                    \
    ST##W(minmag(a, b), b0a + 6 * n + i);                                    \
    ST##W(nextafter(a, b), b0b + 0 * n + i);                                 \
    ST##W(remainder(a, b), b0b + 1 * n + i);                                 \
    ST##W(remquo(a, b, &q), b0b + 2 * n + i);                                \
    ST##W(fma(a, b, c), b0b + 3 * n + i);                                    \
    ST##W(ldexp(a, m), b0b + 4 * n + i);                                     \
    ST##W(hypot(a, b), b4 + i);                                              \
    ST##W(atan2(a, b), b6 + 0 * n + i);                                      \
    ST##W(atan2pi(a, b), b6 + 1 * n + i);                                    \
    ST##W(pow(a, b), b16 + 0 * n + i);                                       \
    ST##W(powr(a, b), b16 + 1 * n + i);                                      \
    ST##W(pown(a, m), b16 + 2 * n + i);                                      \
    ST##W(rootn(a, m), b16 + 3 * n + i);                                     \
    /* the quotient's sign and its 3 low bits, all 7.5.1 requires, */        \
    /* where it is specified (the remainder is not a NaN) */                 \
    q = select(q & 7, -((-q) & 7), q < 0);                                   \
    ST##W(select(q, (I)(0), CM(isnan(remquo(a, b, &m)))), bq + i);           \
  }

BINARY(binary, float, float, int, 1, (int))
BINARY(binary4, float, float4, int4, 4, as_int4)
BINARY(binary8, float, float8, int8, 8, as_int8)
BINARY(binary_d, double, double, int, 1, (int))
BINARY(binary_d4, double, double4, int4, 4, convert_int4)

// The overloads that take a scalar for a vector argument (6.12.2: fmax,
// fmin with a float, ldexp with an int) and mad, on values for which
// every allowed result is the same.
__kernel void scalar_args(__global const float* x, __global float* o,
                          __global double* d, float s, int k) {
  float4 v = vload4(0, x);
  float16 w = vload16(0, x);
  vstore4(fmax(v, s), 0, o);
  vstore4(fmin(v, s), 1, o);
  vstore4(ldexp(v, k), 2, o);
  vstore16(fmax(w, s), 0, o + 12);
  vstore16(fmin(w, s), 1, o + 12);
  vstore4(mad(v, (float4)(2.0f), (float4)(s)), 11, o);   // exact here
  double2 dv = (double2)(x[0], x[1]);
  vstore2(fmax(dv, (double)s), 0, d);
  vstore2(ldexp(dv, k), 1, d);
  vstore2(fma(dv, dv, (double2)(s)), 2, d);
  o[48] = mad(x[2], x[3], s);
  o[49] = isnan(nan(0x12345u)) + isnan(nan((uint4)(1u)).w) * 10 +
          isnan(nan(7ul)) * 100;
}

// The reduced-precision forms: half_* within 8192 ulp of the exact value
// for the arguments 7.4 allows, native_* with an implementation-defined
// precision (checked loosely).
__kernel void reduced(__global const float* x, __global float* h,
                      __global float* nv) {
  size_t i = get_global_id(0), n = get_global_size(0);
  float v = x[i];           // in (0.5, 8)
  h[0 * n + i] = half_sin(v);
  h[1 * n + i] = half_cos(v);
  h[2 * n + i] = half_tan(v);
  h[3 * n + i] = half_exp(v);
  h[4 * n + i] = half_exp2(v);
  h[5 * n + i] = half_exp10(v);
  h[6 * n + i] = half_log(v);
  h[7 * n + i] = half_log2(v);
  h[8 * n + i] = half_log10(v);
  h[9 * n + i] = half_sqrt(v);
  h[10 * n + i] = half_rsqrt(v);
  h[11 * n + i] = half_recip(v);
  h[12 * n + i] = half_divide(v, 3.0f);
  h[13 * n + i] = half_powr(v, 1.5f);
  nv[0 * n + i] = native_sin(v);
  nv[1 * n + i] = native_cos(v);
  nv[2 * n + i] = native_exp(v);
  nv[3 * n + i] = native_log(v);
  nv[4 * n + i] = native_sqrt(v);
  nv[5 * n + i] = native_rsqrt(v);
  nv[6 * n + i] = native_recip(v);
  nv[7 * n + i] = native_divide(v, 3.0f);
  nv[8 * n + i] = native_powr(v, 1.5f);
  nv[9 * n + i] = native_exp2(v);
  nv[10 * n + i] = native_log2(v);
  nv[11 * n + i] = native_tan(v);
}

// Results whose sign 7.5.1 fixes, as bits (signed zeros, which the ulp
// comparison does not tell apart).
__kernel void signed_zeros(__global uint* o, float pz, float nz) {
  float ip;
  o[0] = as_uint(sinpi(nz));          // -0
  o[1] = as_uint(sinpi(-2.0f + pz));  // -0 (sinpi(-n) is -0)
  o[2] = as_uint(floor(nz));          // -0
  fract(nz, &ip);
  o[3] = as_uint(ip);                 // fract's floor(-0): -0
  o[4] = as_uint(tanpi(nz));          // -0
  o[5] = as_uint(copysign(pz, -1.0f));
  o[6] = as_uint(round(-0.25f + pz)); // -0
  o[7] = as_uint(ceil(-0.5f + pz));   // -0
  o[8] = as_uint(trunc(-0.75f + pz)); // -0
  o[9] = as_uint(rint(-0.5f + pz));   // -0
  o[10] = as_uint(fmod(nz, 3.0f));    // -0
  o[11] = as_uint(cbrt(nz));          // -0
  o[12] = as_uint(sqrt(nz));          // -0
  o[13] = as_uint(rootn(nz, 3));      // -0
  o[14] = as_uint(atan2(nz, 1.0f));   // -0
  o[15] = as_uint(modf(nz, &ip));     // -0
  o[16] = as_uint(sinpi(2.0f + pz));  // +0
  o[17] = as_uint(fract(pz, &ip));    // +0
}

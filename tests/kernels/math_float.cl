// math_float.cl: every math built-in on float, as scalars and as float4
// (the vector forms lane by lane), on inputs across each function's
// domain. Each function writes its own slice of |out|: out[f * n + i].
// The runs and their expected outputs are in manifest.txt.
#define UNARY(X)                                                             \
  X(acos) X(acosh) X(acospi) X(asin) X(asinh) X(asinpi) X(atan) X(atanh)     \
  X(atanpi) X(cbrt) X(ceil) X(cos) X(cosh) X(cospi) X(erfc) X(erf) X(exp)    \
  X(exp2) X(exp10) X(expm1) X(fabs) X(floor) X(lgamma) X(log) X(log2)        \
  X(log10) X(log1p) X(logb) X(rint) X(round) X(rsqrt) X(sin) X(sinh)         \
  X(sinpi) X(sqrt) X(tan) X(tanh) X(tanpi) X(tgamma) X(trunc) X(degrees)     \
  X(radians) X(sign) X(half_cos) X(half_exp) X(half_exp2) X(half_exp10)      \
  X(half_log) X(half_log2) X(half_log10) X(half_rsqrt) X(half_sin)           \
  X(half_sqrt) X(half_tan)
#define BINARY(X)                                                            \
  X(atan2) X(atan2pi) X(copysign) X(fdim) X(fmax) X(fmin) X(fmod) X(hypot)   \
  X(maxmag) X(minmag) X(nextafter) X(pow) X(powr) X(remainder) X(step)       \
  X(half_divide) X(half_powr)

__kernel void unary(__global const float* x, __global float* out, uint n) {
  size_t i = get_global_id(0);
  float v = x[i];
  uint f = 0;
#define ONE(name) out[(f++) * n + i] = name(v);
  UNARY(ONE)
}

__kernel void binary(__global const float* x, __global const float* y,
                     __global float* out, uint n) {
  size_t i = get_global_id(0);
  float a = x[i], b = y[i];
  uint f = 0;
#define TWO(name) out[(f++) * n + i] = name(a, b);
  BINARY(TWO)
}

// The same through float4 (four consecutive inputs per work-item), and
// with a scalar second argument where a vector first one allows it.
__kernel void unary4(__global const float4* x, __global float4* out,
                     uint n) {
  size_t i = get_global_id(0);
  float4 v = x[i];
  uint f = 0;
  UNARY(ONE)
}

__kernel void binary4(__global const float4* x, __global const float4* y,
                      __global float4* out, __global float4* out_scalar,
                      uint n) {
  size_t i = get_global_id(0);
  float4 a = x[i], b = y[i];
  uint f = 0;
  BINARY(TWO)
  f = 0;
  float s = b.y;
  out_scalar[(f++) * n + i] = fmax(a, s);
  out_scalar[(f++) * n + i] = fmin(a, s);
  out_scalar[(f++) * n + i] = pow(a, s);
  out_scalar[(f++) * n + i] = fmod(a, s);
  out_scalar[(f++) * n + i] = mix(a, b, 0.25f);
  out_scalar[(f++) * n + i] = clamp(a, -1.0f, 1.0f);
  out_scalar[(f++) * n + i] = step(0.5f, a);
  out_scalar[(f++) * n + i] = smoothstep(-1.0f, 2.0f, a);
  out_scalar[(f++) * n + i] = fma(a, b, s);
  out_scalar[(f++) * n + i] = mad(a, b, (float4)(1.0f));
}

// Functions with int operands or results, and those that store through
// a pointer.
__kernel void with_ints(__global const float* x, __global const float* y,
                        __global float* out, __global int* iout, uint n) {
  size_t i = get_global_id(0);
  float a = x[i], b = y[i];
  int k = (int)i % 7 - 3;
  out[0 * n + i] = ldexp(a, k);
  out[1 * n + i] = pown(a, k);
  out[2 * n + i] = rootn(fabs(a), k == 0 ? 3 : k);
  float ip, cs;
  out[3 * n + i] = fract(a, &ip);
  out[4 * n + i] = ip;
  out[5 * n + i] = modf(a, &ip);
  out[6 * n + i] = ip;
  out[7 * n + i] = sincos(a, &cs);
  out[8 * n + i] = cs;
  int e, q, s;
  out[9 * n + i] = frexp(a, &e);
  out[10 * n + i] = remquo(a, b, &q);
  out[11 * n + i] = lgamma_r(a, &s);
  out[12 * n + i] = nan((uint)i) != nan((uint)i);
  iout[0 * n + i] = ilogb(a);
  iout[1 * n + i] = e;
  iout[2 * n + i] = (q < 0 ? -1 : 1) * (abs(q) % 8);  // 3 bits are defined
  iout[3 * n + i] = s;
}

// native_* are fast approximations on a GPU: compared loosely.
__kernel void natives(__global const float* x, __global float* out,
                      uint n) {
  size_t i = get_global_id(0);
  float v = x[i];
  uint f = 0;
  out[(f++) * n + i] = native_sin(v);
  out[(f++) * n + i] = native_cos(v);
  out[(f++) * n + i] = native_exp(v);
  out[(f++) * n + i] = native_exp2(v);
  out[(f++) * n + i] = native_exp10(v * 0.25f);
  out[(f++) * n + i] = native_log(fabs(v) + 1.0f);
  out[(f++) * n + i] = native_log2(fabs(v) + 1.0f);
  out[(f++) * n + i] = native_log10(fabs(v) + 1.0f);
  out[(f++) * n + i] = native_sqrt(fabs(v));
  out[(f++) * n + i] = native_rsqrt(fabs(v) + 1.0f);
  out[(f++) * n + i] = native_recip(v + 10.0f);
  out[(f++) * n + i] = native_divide(v, 3.0f);
  out[(f++) * n + i] = native_powr(fabs(v) + 1.0f, 1.5f);
  out[(f++) * n + i] = native_tan(v * 0.25f);
}

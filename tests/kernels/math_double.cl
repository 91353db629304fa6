// math_double.cl: the math built-ins on double and double2, and an
// integer argument (which computes in double). Each function writes its
// own slice of |out|: out[f * n + i].
// The runs and their expected outputs are in manifest.txt.
#define UNARY(X)                                                             \
  X(acos) X(acosh) X(acospi) X(asin) X(asinh) X(asinpi) X(atan) X(atanh)     \
  X(atanpi) X(cbrt) X(ceil) X(cos) X(cosh) X(cospi) X(erfc) X(erf) X(exp)    \
  X(exp2) X(exp10) X(expm1) X(fabs) X(floor) X(lgamma) X(log) X(log2)        \
  X(log10) X(log1p) X(logb) X(rint) X(round) X(rsqrt) X(sin) X(sinh)         \
  X(sinpi) X(sqrt) X(tan) X(tanh) X(tanpi) X(tgamma) X(trunc) X(degrees)     \
  X(radians) X(sign)
#define BINARY(X)                                                            \
  X(atan2) X(atan2pi) X(copysign) X(fdim) X(fmax) X(fmin) X(fmod) X(hypot)   \
  X(maxmag) X(minmag) X(nextafter) X(pow) X(powr) X(remainder)

__kernel void unary(__global const double* x, __global double* out,
                    uint n) {
  size_t i = get_global_id(0);
  double v = x[i];
  uint f = 0;
#define ONE(name) out[(f++) * n + i] = name(v);
  UNARY(ONE)
}

__kernel void binary(__global const double* x, __global const double* y,
                     __global double* out, uint n) {
  size_t i = get_global_id(0);
  double a = x[i], b = y[i];
  uint f = 0;
#define TWO(name) out[(f++) * n + i] = name(a, b);
  BINARY(TWO)
}

__kernel void unary2(__global const double2* x, __global double2* out,
                     uint n) {
  size_t i = get_global_id(0);
  double2 v = x[i];
  uint f = 0;
  UNARY(ONE)
}

__kernel void integer_args(__global const int* x, __global double* out,
                           uint n) {
  size_t i = get_global_id(0);
  int v = x[i];
  out[0 * n + i] = sqrt(v);
  out[1 * n + i] = exp(v % 50);
  out[2 * n + i] = pow(v, 2);
  out[3 * n + i] = fmax(v, 3.5);
  out[4 * n + i] = sin(v);
}

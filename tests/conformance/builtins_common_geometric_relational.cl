// builtins_common_geometric_relational.cl: OpenCL C 1.2 sections 6.12.4
// (common functions: clamp, degrees, max, min, mix, radians, step,
// smoothstep, sign, with the overloads taking scalars for vector
// arguments), 6.12.5 (geometric functions: cross, dot, distance, length,
// normalize and their fast_ forms, on float2/float4 and double4) and
// 6.12.6 (relational functions: the comparisons and classifications on
// scalars, giving int 1/0, and on vectors, giving -1/0 in the signed
// integer vector of the argument's element size; any, all, bitselect,
// select), with NaN, infinities, signed zeros and denormals among the
// inputs. Expected values were computed on the host; tolerances follow
// section 7.4 (degrees and radians 2 ulp; mix and smoothstep are checked
// on values for which they are exact).
// The runs and their expected outputs are in manifest.txt.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define LD1(p) (*(p))
#define ST1(v, p) (*(p) = (v))
#define ST2(v, p) vstore2(v, 0, p)
#define LD4(p) vload4(0, p)
#define ST4(v, p) vstore4(v, 0, p)
#define LD8(p) vload8(0, p)
#define ST8(v, p) vstore8(v, 0, p)

// Common functions; R the scalar type, T the argument type, W its width.
// Function k of item i goes to out[k * n + i].
#define COMMON(NAME, R, T, W)                                                \
  __kernel void NAME(__global const R* x, __global const R* y,               \
                     __global R* e0, __global R* e2, uint n) {               \
    size_t i = get_global_id(0) * W;                                         \
    T a = LD##W(x + i), b = LD##W(y + i);                                    \
    ST##W(clamp(a, (R)-1, (R)2), e0 + 0 * n + i);                            \
    ST##W(clamp(a, b, b + (R)1), e0 + 1 * n + i);                            \
    ST##W(max(a, b), e0 + 2 * n + i);                                        \
    ST##W(min(a, b), e0 + 3 * n + i);                                        \
    ST##W(max(a, (R)0.5), e0 + 4 * n + i);                                   \
    ST##W(min(a, (R)0.5), e0 + 5 * n + i);                                   \
    ST##W(mix(a, b, (R)0.25), e0 + 6 * n + i);                               \
    ST##W(mix(a, b, b - b + (R)0.75), e0 + 7 * n + i);                       \
    ST##W(step((R)0.5, a), e0 + 8 * n + i);                                  \
    ST##W(step(b, a), e0 + 9 * n + i);                                       \
    ST##W(smoothstep((R)-2, (R)2, a), e0 + 10 * n + i);                      \
    ST##W(sign(a), e0 + 11 * n + i);                                         \
    ST##W(degrees(a), e2 + 0 * n + i);                                       \
    ST##W(radians(a), e2 + 1 * n + i);                                       \
  }

COMMON(common, float, float, 1)
COMMON(common4, float, float4, 4)
COMMON(common_d, double, double, 1)
COMMON(common_d8, double, double8, 8)

// Geometric functions on the 4 floats of item i (p and q), as float4,
// float2 (the first two) and float (the first), and as double4.
__kernel void geometric(__global const float4* p, __global const float4* q,
                        __global float* g0, __global float* g4,
                        __global float* gf, __global double* d) {
  size_t i = get_global_id(0);
  float4 a = p[i], b = q[i];
  float4 c = cross(a, b);             // w is 0
  __global float* o = g0 + i * 8;
  o[0] = dot(a, b);
  o[1] = dot(a.lo, b.lo);
  o[2] = dot(a.x, b.x);
  o[3] = c.x; o[4] = c.y; o[5] = c.z; o[6] = c.w;
  o[7] = length(a.x);                 // |a.x|
  __global float* l = g4 + i * 8;
  l[0] = length(a);
  l[1] = length(a.lo);
  l[2] = distance(a, b);
  l[3] = distance(a.lo, b.lo);
  float4 u = normalize(a);
  l[4] = u.x; l[5] = u.y; l[6] = u.z; l[7] = u.w;
  __global float* f = gf + i * 4;
  f[0] = fast_length(a);
  f[1] = fast_distance(a, b);
  f[2] = fast_normalize(a).x;
  f[3] = fast_length(a.lo);
  double4 da = convert_double4(a), db = convert_double4(b);
  d[i * 4 + 0] = dot(da, db);
  d[i * 4 + 1] = length(da);
  d[i * 4 + 2] = distance(da, db);
  d[i * 4 + 3] = normalize(da).y;
}

// Relational functions: scalars (int 1/0) into s, float4 (int4 -1/0)
// into v, double scalars into ds and double2 (long2 masks, as int) into
// dv. Function k of item i at out[k * n + i].
#define REL(OUT, ST, T, CV, x, y, n, i)                                      \
  ST(CV(isequal(x, y)), OUT + 0 * n + i);                                    \
  ST(CV(isnotequal(x, y)), OUT + 1 * n + i);                                 \
  ST(CV(isgreater(x, y)), OUT + 2 * n + i);                                  \
  ST(CV(isgreaterequal(x, y)), OUT + 3 * n + i);                             \
  ST(CV(isless(x, y)), OUT + 4 * n + i);                                     \
  ST(CV(islessequal(x, y)), OUT + 5 * n + i);                                \
  ST(CV(islessgreater(x, y)), OUT + 6 * n + i);                              \
  ST(CV(isfinite(x)), OUT + 7 * n + i);                                      \
  ST(CV(isinf(x)), OUT + 8 * n + i);                                         \
  ST(CV(isnan(x)), OUT + 9 * n + i);                                         \
  ST(CV(isnormal(x)), OUT + 10 * n + i);                                     \
  ST(CV(isordered(x, y)), OUT + 11 * n + i);                                 \
  ST(CV(isunordered(x, y)), OUT + 12 * n + i);                               \
  ST(CV(signbit(x)), OUT + 13 * n + i)

#define SAME(x) (x)

__kernel void relational(__global const float* x, __global const float* y,
                         __global const double* dx,
                         __global const double* dy, __global int* s,
                         __global int* v, __global int* ds,
                         __global int* dv, uint n) {
  size_t i = get_global_id(0);
  REL(s, ST1, float, SAME, x[i], y[i], n, i);
  if (i % 4 == 0) {
    float4 a = vload4(0, x + i), b = vload4(0, y + i);
    REL(v, ST4, float4, SAME, a, b, n, i);
  }
  REL(ds, ST1, double, SAME, dx[i], dy[i], n, i);
  if (i % 2 == 0) {
    double2 a = vload2(0, dx + i), b = vload2(0, dy + i);
    REL(dv, ST2, double2, convert_int2, a, b, n, i);
  }
}

// any, all (the most significant bit of any or all components),
// select (the MSB of each mask component picks b, for vectors; c != 0
// for scalars) and bitselect (bit by bit), on integer and floating types.
__kernel void masks(__global const uint* x, __global const uint* y,
                    __global const uint* m, __global int* o,
                    __global uint* u, __global float* f) {
  size_t i = get_global_id(0);
  uint4 a = vload4(0, x + i * 4), b = vload4(0, y + i * 4);
  uint4 c = vload4(0, m + i * 4);
  int4 ic = as_int4(c);
  __global int* r = o + i * 12;
  r[0] = any(ic);
  r[1] = all(ic);
  r[2] = any(as_char16(c));
  r[3] = all(as_char16(c));
  r[4] = any(as_short8(c));
  r[5] = all(as_short8(c));
  r[6] = any(as_long2(c));
  r[7] = all(as_long2(c));
  r[8] = any(ic.x);                  // a scalar: its MSB
  r[9] = all(ic.lo);
  r[10] = select(7, -7, ic.x);       // scalar: c != 0 picks b
  r[11] = select(7, -7, 0);
  __global uint* w = u + i * 16;
  vstore4(select(a, b, ic), 0, w);               // MSB of int4 lanes
  vstore4(select(a, b, c), 1, w);                // an unsigned mask too
  vstore4(bitselect(a, b, c), 2, w);
  uchar16 s = select(as_uchar16(a), as_uchar16(b), as_char16(c));
  vstore4(as_uint4(s), 3, w);                    // per byte
  float4 fa = as_float4(a), fb = as_float4(b);
  __global float* g = f + i * 12;
  vstore4(select(fa, fb, ic), 0, g);
  vstore4(bitselect(fa, fb, as_float4(c)), 1, g);
  double2 da = (double2)(1.5, -2.5), db = (double2)((double)fb.x, 4.0);
  double2 sd = select(da, db, as_long2(c));
  g[8] = (float)sd.x;
  g[9] = (float)sd.y;
  g[10] = select(fa.x, fb.x, ic.y);              // scalar float select
  g[11] = bitselect(1.0f, -2.0f, as_float(0x80000000u));  // the sign bit
}

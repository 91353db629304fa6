// builtin_edges.cl: built-ins at the inputs where an OpenCL driver was
// found to differ from OpenCL C or from the other devices (NVIDIA's, by
// the differential tests): lgamma_r's sign, mad_sat of 64-bit signed
// integers where the product or the sum overflows, saturating
// conversions of NaN. The runs and their expected outputs are in
// manifest.txt, so every device, the CPU included, is held to the values.

// lgamma_r's sign for x and for -x, as float (through a __private, a
// __global and a __local pointer, and a float2) and as double:
// s[4 * i] for x, s[4 * i + 1] for -x, s[4 * i + 2] 1 when the pointer
// and vector forms agree with those, s[4 * i + 3] for x as a double.
// Groups of one work-item (the __local int is the group's).
__kernel void lgamma_signs(__global const float* x, __global int* s) {
  __local int l[1];
  size_t i = get_global_id(0);
  float f = x[i];
  int a, d;
  int2 v;
  lgamma_r(f, &a);
  lgamma_r(-f, &s[4 * i + 1]);
  lgamma_r(f, &l[0]);
  lgamma_r((float2)(f, -f), &v);
  lgamma_r((double)f, &d);
  s[4 * i] = a;
  s[4 * i + 2] = l[0] == a && v.x == a && v.y == s[4 * i + 1];
  s[4 * i + 3] = d;
}

// mad_sat(a, b, c) of the rows (a, b, c) of x, and the same in a long4
// whose lane k takes row i + k: o[5 * i] the scalar, o[5 * i + 1 + k]
// lane k.
__kernel void mad_sat_long(__global const long* x, __global long* o) {
  size_t i = get_global_id(0), n = get_global_size(0);
  size_t r0 = i, r1 = (i + 1) % n, r2 = (i + 2) % n, r3 = (i + 3) % n;
  long4 a = (long4)(x[3 * r0], x[3 * r1], x[3 * r2], x[3 * r3]);
  long4 b = (long4)(x[3 * r0 + 1], x[3 * r1 + 1], x[3 * r2 + 1],
                    x[3 * r3 + 1]);
  long4 c = (long4)(x[3 * r0 + 2], x[3 * r1 + 2], x[3 * r2 + 2],
                    x[3 * r3 + 2]);
  long4 v = mad_sat(a, b, c);
  o[5 * i] = mad_sat(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
  o[5 * i + 1] = v.x;
  o[5 * i + 2] = v.y;
  o[5 * i + 3] = v.z;
  o[5 * i + 4] = v.w;
}

// The same rows' mad_sat in ptrdiff_t, a long on a 64-bit device.
__kernel void mad_sat_ptrdiff(__global const long* x, __global long* o) {
  size_t i = get_global_id(0);
  ptrdiff_t a = (ptrdiff_t)x[3 * i], b = (ptrdiff_t)x[3 * i + 1];
  o[i] = (long)mad_sat(a, b, (ptrdiff_t)x[3 * i + 2]);
}

// Saturating conversions of x[i] from float and from double to every
// integer type, with rounding modes and in vectors.
__kernel void sat_conversions(__global const float* x, __global long* o) {
  size_t i = get_global_id(0);
  float f = x[i];
  double d = f;
  __global long* p = o + 24 * i;
  p[0] = convert_char_sat(f);
  p[1] = convert_uchar_sat(f);
  p[2] = convert_short_sat(f);
  p[3] = convert_ushort_sat(f);
  p[4] = convert_int_sat(f);
  p[5] = convert_uint_sat(f);
  p[6] = convert_long_sat(f);
  p[7] = (long)convert_ulong_sat(f);
  p[8] = convert_char_sat(d);
  p[9] = convert_uchar_sat(d);
  p[10] = convert_short_sat(d);
  p[11] = convert_ushort_sat(d);
  p[12] = convert_int_sat(d);
  p[13] = convert_uint_sat(d);
  p[14] = convert_long_sat(d);
  p[15] = (long)convert_ulong_sat(d);
  p[16] = convert_long_sat_rte(f);
  p[17] = convert_int_sat_rtz(d);
  long4 l4 = convert_long4_sat((float4)(f, 1.5f, f, -1e30f));
  p[18] = l4.x;
  p[19] = l4.y;
  p[20] = l4.w;
  int2 i2 = convert_int2_sat_rtn((double2)(d, 3.7));
  p[21] = i2.x;
  p[22] = i2.y;
  p[23] = (long)convert_ulong3_sat((float3)(f, f, -f)).z;
}

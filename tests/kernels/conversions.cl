// conversions.cl: convert_* with every rounding mode and saturation, from
// floats to each integer type and between integer and floating types, and
// as_* reinterpretation.
// The runs and their expected outputs are in manifest.txt.
#define MODES(X, T, v)                                                       \
  X(convert_##T(v)) X(convert_##T##_rte(v)) X(convert_##T##_rtz(v))          \
  X(convert_##T##_rtp(v)) X(convert_##T##_rtn(v)) X(convert_##T##_sat(v))   \
  X(convert_##T##_sat_rte(v)) X(convert_##T##_sat_rtz(v))                   \
  X(convert_##T##_sat_rtp(v)) X(convert_##T##_sat_rtn(v))
#define PUT(e) o[k++] = (long)(e);

// Floats (in and out of every type's range, infinities and NaN) to each
// integer type with saturation; unsaturated conversions of values out of
// range are undefined, so those convert the value's remainder by 100.
__kernel void float_to_int(__global const float* x, __global long* out) {
  size_t i = get_global_id(0);
  float v = x[i];
  float small = isfinite(v) ? fmod(v, 100.0f) : 0.0f;
  __global long* o = out + i * 80;
  int k = 0;
  MODES(PUT, char, (v < 1e30f ? small : 0.0f))
  MODES(PUT, uchar, (fabs(small)))
  MODES(PUT, short, small)
  MODES(PUT, ushort, (fabs(small)))
  MODES(PUT, int, small)
  MODES(PUT, uint, (fabs(small)))
  MODES(PUT, long, small)
  k = 70;
  o[k++] = convert_char_sat(v);
  o[k++] = convert_uchar_sat(v);
  o[k++] = convert_short_sat_rte(v);
  o[k++] = convert_ushort_sat_rtp(v);
  o[k++] = convert_int_sat_rtn(v);
  o[k++] = convert_uint_sat(v);
  o[k++] = convert_long_sat_rte(v);
  o[k++] = (long)convert_ulong_sat_rtz(v);
  o[k++] = convert_int_sat((double)v * 1e10);
  o[k++] = convert_long_sat((double)v * 1e20);
}

// Integers to float and double in every rounding mode, doubles to
// floats, and integer saturation between integer types.
__kernel void to_float(__global const long* x, __global float* f,
                       __global double* d, __global long* l) {
  size_t i = get_global_id(0);
  long v = x[i];
  __global float* fo = f + i * 20;
  __global double* dout = d + i * 10;
  __global long* lo = l + i * 12;
  fo[0] = convert_float(v);
  fo[1] = convert_float_rte(v);
  fo[2] = convert_float_rtz(v);
  fo[3] = convert_float_rtp(v);
  fo[4] = convert_float_rtn(v);
  fo[5] = convert_float_rtz((ulong)v);
  fo[6] = convert_float_rtp((ulong)v);
  fo[7] = convert_float_rtz((int)v);
  fo[8] = convert_float_rtp((uint)v);
  fo[9] = convert_float_rtn((int)v);
  double dv = (double)v * 1.000000119;
  fo[10] = convert_float(dv);
  fo[11] = convert_float_rtz(dv);
  fo[12] = convert_float_rtp(dv);
  fo[13] = convert_float_rtn(dv);
  fo[14] = convert_float_rte(dv);
  fo[15] = convert_float((short)v);
  dout[0] = convert_double(v);
  dout[1] = convert_double_rtz(v);
  dout[2] = convert_double_rtp(v);
  dout[3] = convert_double_rtn((ulong)v);
  dout[4] = convert_double((float)v);
  dout[5] = convert_double_rtp((uint)v);
  lo[0] = convert_char_sat(v);
  lo[1] = convert_uchar_sat(v);
  lo[2] = convert_short_sat(v);
  lo[3] = convert_ushort_sat(v);
  lo[4] = convert_int_sat(v);
  lo[5] = convert_uint_sat(v);
  lo[6] = (long)convert_ulong_sat(v);
  lo[7] = convert_long_sat((ulong)v);
  lo[8] = convert_char((int)v);
  lo[9] = convert_uint_sat((int)v);
  lo[10] = convert_short_sat((uint)v);
  lo[11] = convert_uchar_sat((char)v);
}

// Vector conversions and reinterpretation.
__kernel void vectors(__global const float4* x, __global int* out) {
  size_t i = get_global_id(0);
  float4 v = x[i];
  __global int* o = out + i * 24;
  int4 a = convert_int4(v);
  int4 b = convert_int4_sat_rte(v * 1e9f);
  uchar4 c = convert_uchar4_sat(v);
  short4 s = convert_short4_rtp(v);
  long4 l = convert_long4_rtn(v);
  double4 dd = convert_double4(v);
  float4 back = convert_float4(convert_int4_rtz(v));
  int4 bits = as_int4(v);
  uint2 halves = as_uint2((double)v.x);
  char16 bytes = as_char16(v);
  float asf = as_float(bits.y);
  o[0] = a.x; o[1] = a.y; o[2] = a.z; o[3] = a.w;
  o[4] = b.x; o[5] = b.w;
  o[6] = c.x + 256 * c.y; o[7] = c.z + 256 * c.w;
  o[8] = s.x; o[9] = s.w;
  o[10] = (int)l.y; o[11] = (int)l.z;
  o[12] = (int)(dd.x * 4.0);
  o[13] = (int)back.w;
  o[14] = bits.x; o[15] = bits.w;
  o[16] = (int)halves.x; o[17] = (int)halves.y;
  o[18] = bytes.s0; o[19] = bytes.sF;
  o[20] = as_int(asf);
  o[21] = as_int(convert_float8(convert_int8((float8)(v.x * 3.0f))).s6);
  o[22] = as_short(convert_ushort_sat(v.x));
  o[23] = convert_int(as_float(0x3fc00000));
}

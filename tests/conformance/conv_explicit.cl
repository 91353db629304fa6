// conv_explicit.cl: OpenCL C 1.2 sections 6.2.2 (explicit casts between
// scalar types), 6.2.3 (explicit conversions: convert_<T>, with _sat and
// the rounding modes _rte, _rtz, _rtp, _rtn, on scalars and vectors of
// every width) and 6.2.4 (reinterpretation with as_<T>, between types of
// the same size, vectors included). Only conversions whose results the
// specification defines are checked: casts and unsaturated conversions
// of floating values get values in the destination's range, and
// unsaturated conversions between integers go to unsigned types
// (modulo 2^N) or hold values in range; everything out of range goes
// through _sat, which clamps and turns NaN into 0 (6.2.3.3).
// CAST_SCALAR (a scalar cast to a vector type without parentheses around
// the scalar, 6.2.2) and CAST_BOOL (a bool cast to an integer vector
// type), are compiled only when the manifest's program line defines
// them.
// The runs and their expected outputs are in manifest.txt.

// Casts (6.2.2): floating to integer rounds toward zero, integer to
// floating to nearest even; x[i] is within +-500.
__kernel void casts(__global const float* x, __global long* out,
                    __global float* fo, __global double* dout) {
  size_t i = get_global_id(0);
  float v = x[i];
  __global long* o = out + i * 8;
  o[0] = (int)v;
  o[1] = (long)v;
  o[2] = (short)(v * 10.0f);
  o[3] = (char)(v / 4.0f);
  o[4] = (uint)fabs(v);
  o[5] = (uchar)(fabs(v) / 2.0f);
  o[6] = (ulong)(fabs(v) * 1e6f);
  o[7] = (int)(double)v;
  fo[i * 2 + 0] = (float)(int)v;           // truncated, back to float
  fo[i * 2 + 1] = (float)((double)v / 3.0);  // double division, rounded
  dout[i] = (double)v * (1.0 / 3.0);
}

// Floating to integer with each rounding mode, unsaturated (on a value
// kept in int's range) and saturated (on x[i] itself: infinities, NaN and
// values far out of every range included).
__kernel void rounding(__global const float* x, __global int* out) {
  size_t i = get_global_id(0);
  float v = x[i];
  float r = isfinite(v) && fabs(v) < 1e9f ? v : 0.5f;
  __global int* o = out + i * 20;
  o[0] = convert_int(r);          // toward zero
  o[1] = convert_int_rte(r);
  o[2] = convert_int_rtz(r);
  o[3] = convert_int_rtp(r);
  o[4] = convert_int_rtn(r);
  o[5] = convert_int_sat(v);      // toward zero, clamped, NaN to 0
  o[6] = convert_int_sat_rte(v);
  o[7] = convert_int_sat_rtz(v);
  o[8] = convert_int_sat_rtp(v);
  o[9] = convert_int_sat_rtn(v);
  o[10] = convert_char_sat(v);
  o[11] = convert_uchar_sat_rte(v);
  o[12] = convert_short_sat_rtn(v);
  o[13] = convert_ushort_sat_rtp(v);
  o[14] = (int)convert_uint_sat(v);       // the bits of the uint
  o[15] = (int)convert_uint_sat_rte(v);
  o[16] = convert_char_sat_rtp(v);
  o[17] = (int)(convert_long_sat(v) >> 32);  // the high word
  o[18] = (int)(convert_ulong_sat_rtn(v) >> 40);
  o[19] = convert_long_rte(r) == (long)convert_int_rte(r);
}

// Between integer types (6.2.3): saturation on every destination, and
// unsaturated conversions to unsigned types (modulo 2^N).
__kernel void integers(__global const long* x, __global long* out,
                       __global ulong* uout) {
  size_t i = get_global_id(0);
  long v = x[i];
  __global long* o = out + i * 12;
  o[0] = convert_char_sat(v);
  o[1] = convert_uchar_sat(v);
  o[2] = convert_short_sat(v);
  o[3] = convert_ushort_sat(v);
  o[4] = convert_int_sat(v);
  o[5] = convert_uint_sat(v);
  o[6] = convert_long_sat((ulong)v);        // above LONG_MAX: LONG_MAX
  o[7] = convert_uchar(v);                  // modulo 256
  o[8] = convert_ushort(v);
  o[9] = convert_uint(v);
  o[10] = convert_char_sat((int)convert_short_sat(v));
  o[11] = convert_short_sat(convert_uint_sat(v));  // from uint
  __global ulong* u = uout + i * 3;
  u[0] = convert_ulong_sat(v);              // negative: 0
  u[1] = convert_ulong(v);                  // modulo 2^64
  u[2] = convert_ulong_sat(convert_int_sat(v));
}

// Integers to floating types with each rounding mode; doubles to float.
__kernel void to_floating(__global const long* x, __global float* f,
                          __global double* d) {
  size_t i = get_global_id(0);
  long v = x[i];
  __global float* fo = f + i * 12;
  fo[0] = convert_float(v);       // to nearest even
  fo[1] = convert_float_rte(v);
  fo[2] = convert_float_rtz(v);
  fo[3] = convert_float_rtp(v);
  fo[4] = convert_float_rtn(v);
  fo[5] = convert_float_rtz((ulong)v);
  fo[6] = convert_float_rtp((uint)v);
  fo[7] = convert_float_rtn(convert_int_sat(v >> 4));
  double dv = (double)v * 1.0000001;
  fo[8] = convert_float_rte(dv);
  fo[9] = convert_float_rtz(dv);
  fo[10] = convert_float_rtp(dv);
  fo[11] = convert_float_rtn(dv);
  __global double* dout = d + i * 4;
  dout[0] = convert_double(v);
  dout[1] = convert_double_rtz(v);
  dout[2] = convert_double_rtp(v);
  dout[3] = convert_double_rtn((ulong)v);
}

// Vector conversions of every width (6.2.3: "The number of elements in
// the source and destination vectors must match").
__kernel void vectors(__global const float* x, __global int* out,
                      __global float* fout) {
  float16 v = vload16(0, x);
  float4 a = v.lo.lo;
  int4 r0 = convert_int4(a);
  int4 r1 = convert_int4_rte(a);
  int4 r2 = convert_int4_rtp(a);
  int4 r3 = convert_int4_sat_rtn(a * 1e9f);
  uchar4 r4 = convert_uchar4_sat(a * 100.0f);
  short2 r5 = convert_short2_sat_rte(v.s01 * 1e5f);
  char8 r6 = convert_char8_sat(v.hi * 10.0f);
  ushort16 r7 = convert_ushort16_sat_rtz(v * 1000.0f);
  long2 r8 = convert_long2_rtp(v.s23);
  uint8 r9 = convert_uint8_sat(convert_int8_rtn(v.lo));
  vstore4(r0, 0, out);
  vstore4(r1, 1, out);
  vstore4(r2, 2, out);
  vstore4(r3, 3, out);
  vstore4(convert_int4(r4), 4, out);
  vstore2(convert_int2(r5), 10, out);
  vstore8(convert_int8(r6), 3, out);
  vstore16(convert_int16(r7), 2, out);
  vstore2(convert_int2_sat(r8), 24, out);
  vstore8(as_int8(r9), 7, out);
  // to floating types
  float4 f0 = convert_float4(r0 * 3);
  float8 f1 = convert_float8(convert_char8_sat(v.lo * 7.0f));
  float2 f2 = convert_float2_rtz((int2)(16777217, -16777217));
  float2 f3 = convert_float2_rtp((long2)(16777217L, -16777217L));
  double4 d = convert_double4(a);
  float4 f4 = convert_float4_rtn(d * 1.1);
  vstore4(f0, 0, fout);
  vstore8(f1, 1, fout);
  vstore2(f2, 8, fout);
  vstore2(f3, 9, fout);
  vstore4(f4, 5, fout);
}

// Reinterpretation (6.2.4): the bits of one type as another of the same
// size, scalars and vectors (little-endian devices, __ENDIAN_LITTLE__).
__kernel void reinterpret(__global const uint* x, __global uint* out) {
  size_t i = get_global_id(0);
  uint v = x[i];
  __global uint* o = out + i * 16;
  float f = as_float(v);
  o[0] = as_uint(f);                       // the bits back, NaNs included
  o[1] = as_uint(-f) ^ v;                  // only the sign bit differs...
  o[1] = isnan(f) ? 0x80000000u : o[1];    // (a NaN's negation too)
  uchar4 b = as_uchar4(v);
  o[2] = b.x;                              // the low byte
  o[3] = b.w;                              // the high byte
  ushort2 h = as_ushort2(v);
  o[4] = h.y;
  char4 c = as_char4(v);
  o[5] = (uint)(int)c.w;                   // sign-extended
  ulong l = ((ulong)v << 32) | (v ^ 0x12345678u);
  uint2 w = as_uint2(l);
  o[6] = w.x;
  o[7] = w.y;
  double d = as_double(l);
  o[8] = (uint)(as_ulong(d) >> 32);
  float2 ff = as_float2(d);
  o[9] = as_uint(ff.y);
  int4 i4 = as_int4((float4)(f, 1.0f, -2.0f, 0.5f));
  o[10] = (uint)i4.x;
  o[11] = (uint)i4.y + (uint)i4.z;
  short8 s8 = as_short8((uint4)(v, v >> 1, 0xffff0000u, 7u));
  o[12] = (uint)(int)s8.s1;                // the high half of v, signed
  o[13] = (uint)(ushort)s8.s6;             // 7
  uchar16 u16 = as_uchar16((ulong2)(l, ~l));
  o[14] = u16.s0 | (u16.s8 << 8) | (u16.sF << 16);
  long2 l2 = as_long2((int4)(-1, 0, 5, -1));
  o[15] = (uint)(l2.x >> 31) ^ (uint)(l2.y >> 32);
}

#ifdef CAST_SCALAR
// 6.2.2: "Scalar to vector conversions may be performed by casting the
// scalar to the desired vector data type", rounding toward zero to
// integer vectors.
__kernel void cast_scalar(__global float* f, __global int* o, float x,
                          int n, uchar u) {
  float4 a = (float4)x;
  float4 b = (float4)u;
  int2 c = (int2)x;
  long2 l = (long2)n;
  vstore4(a, 0, f);
  vstore4(b, 0, f + 4);
  o[0] = c.x; o[1] = c.y;
  o[2] = (int)l.y;
  o[3] = (int)(l.x >> 32);
}
#endif

#ifdef CAST_BOOL
// 6.2.2: "When casting a bool to a vector integer data type, the vector
// components will be set to -1 (i.e. all bits set) if the bool value is
// true and 0 otherwise."
__kernel void cast_bool(__global int* o, int n) {
  bool b = n > 0;
  uchar4 t = (uchar4)true;
  uchar4 z = (uchar4)false;
  int4 i = (int4)b;
  bool neg = n < 0;
  short2 s = (short2)neg;
  o[0] = t.x; o[1] = t.w;
  o[2] = z.y;
  o[3] = i.x; o[4] = i.z;
  o[5] = s.y;
}
#endif

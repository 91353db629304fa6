// integer_builtins.cl: every integer built-in on every integer type, as
// scalars and as 4-lane vectors, on inputs that include each type's
// extremes (the inputs are 64-bit patterns, cut to each type).
// The runs and their expected outputs are in manifest.txt.
#define ONE_TYPE(T, T4, U, U4)                                               \
  {                                                                          \
    T a = (T)xa, b = (T)xb, c = (T)xc;                                       \
    T4 va = (T4)(a, b, c, (T)(a ^ b));                                       \
    T4 vb = (T4)(b, c, a, (T)((U)b + (U)c));                                 \
    T4 vc = (T4)(c, a, b, (T)((U)a - (U)c));                                 \
    o[k++] = abs(a);                                                         \
    o[k++] = abs_diff(a, b);                                                 \
    o[k++] = add_sat(a, b);                                                  \
    o[k++] = sub_sat(a, b);                                                  \
    o[k++] = hadd(a, b);                                                     \
    o[k++] = rhadd(a, b);                                                    \
    o[k++] = clamp(a, (T)(b < c ? b : c), (T)(b < c ? c : b));               \
    o[k++] = clz(a);                                                         \
    o[k++] = popcount(a);                                                    \
    o[k++] = mad_hi(a, b, c);                                                \
    o[k++] = mad_sat(a, b, c);                                               \
    o[k++] = max(a, b);                                                      \
    o[k++] = min(a, b);                                                      \
    o[k++] = mul_hi(a, b);                                                   \
    o[k++] = rotate(a, b);                                                   \
    U4 ua = abs(va);                                                         \
    U4 ud = abs_diff(va, vb);                                                \
    T4 r = add_sat(va, vb) ^ sub_sat(va, vb) ^ hadd(va, vb) ^                \
           rhadd(va, vb) ^ clz(va) ^ popcount(vb) ^ mad_hi(va, vb, vc) ^     \
           mad_sat(va, vb, vc) ^ max(va, vb) ^ min(va, c) ^                  \
           mul_hi(va, vb) ^ rotate(va, vb) ^ clamp(va, (T)-5, (T)5);         \
    o[k++] = r.x; o[k++] = r.y; o[k++] = r.z; o[k++] = r.w;                  \
    o[k++] = ua.x ^ ua.y ^ ua.z ^ ua.w;                                      \
    o[k++] = ud.x ^ ud.y ^ ud.z ^ ud.w;                                      \
  }

// Each work-item reads three 64-bit patterns and writes 21 results per
// type, 8 types: out[i * 168 + ...].
__kernel void integers(__global const ulong* x, __global long* out) {
  size_t i = get_global_id(0);
  ulong xa = x[3 * i], xb = x[3 * i + 1], xc = x[3 * i + 2];
  __global long* o = out + i * 168;
  int k = 0;
  ONE_TYPE(char, char4, uchar, uchar4)
  ONE_TYPE(uchar, uchar4, uchar, uchar4)
  ONE_TYPE(short, short4, ushort, ushort4)
  ONE_TYPE(ushort, ushort4, ushort, ushort4)
  ONE_TYPE(int, int4, uint, uint4)
  ONE_TYPE(uint, uint4, uint, uint4)
  ONE_TYPE(long, long4, ulong, ulong4)
  ONE_TYPE(ulong, ulong4, ulong, ulong4)
}

// upsample, mul24 and mad24, and integer vectors of every width.
__kernel void widen(__global const uint* x, __global long* out) {
  size_t i = get_global_id(0);
  uint a = x[2 * i], b = x[2 * i + 1];
  __global long* o = out + i * 16;
  o[0] = upsample((char)a, (uchar)b);
  o[1] = upsample((uchar)a, (uchar)b);
  o[2] = upsample((short)a, (ushort)b);
  o[3] = upsample((ushort)a, (ushort)b);
  o[4] = upsample((int)a, b);
  o[5] = (long)upsample(a, b);
  o[6] = mul24((int)(a & 0x7fffff), (int)(b & 0x7fffff));
  o[7] = mad24(a & 0xffffff, b & 0xffffff, a);
  // (operands kept small: signed overflow is undefined)
  int2 v2 = (int2)((int)(a & 0xffff), (int)(b & 0xffff)) * 3;
  int8 v8 = (int8)((int)(a & 0xffffff)) + (int8)(0, 1, 2, 3, 4, 5, 6, 7);
  int16 v16 = (int16)((int)(b & 0xffff)) << 2;
  o[8] = v2.x + v2.y;
  o[9] = v8.s7 - v8.s0;
  o[10] = v16.sF;
  short8 s8 = convert_short8(v8) >> 3;
  o[11] = s8.s3;
  ulong2 u2 = (ulong2)(a, b) * (ulong2)(0x100000001ul);
  o[12] = (long)(u2.x ^ u2.y);
  uchar16 c16 = (uchar16)((uchar)a) + (uchar16)((uchar)b);
  o[13] = c16.s5;
  long4 l4 = (long4)((long)a - (long)b) / 3;
  o[14] = l4.z;
  o[15] = (a % 9 == 0) ? -1 : (long)(a / 9 + b % 7);
}

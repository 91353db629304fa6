// builtins_integer.cl: OpenCL C 1.2 section 6.12.3 (integer functions)
// on every integer type, scalar and vector: abs, abs_diff, add_sat,
// sub_sat, hadd, rhadd, clamp, clz, mad_hi, mad_sat, max, min, mul_hi,
// rotate, popcount; the overloads taking a scalar for a vector argument
// (clamp, min, max); upsample; mul24 and mad24 on the 24-bit values they
// are defined for. Results go out as the unsigned type of the same size
// (as_<T>), exactly; the inputs mix every width's extremes with random
// bits.
//
// Each kernel body is a macro instantiated for scalars and vectors: item
// i of function k goes to out[k * n + i] whatever the width, so that the
// scalar and vector kernels of one type have the same expected values.
// The runs and their expected outputs are in manifest.txt.

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

// T the scalar type, U its unsigned type, V the argument type, W its
// width, AS_U the reinterpretation of V as U's vector (empty when T is
// unsigned).
#define INTEGER(NAME, T, U, V, W, AS_U)                                      \
  __kernel void NAME(__global const T* x, __global const T* y,               \
                     __global const T* z, __global U* o0, __global U* o1,    \
                     __global U* o2, uint n) {                               \
    size_t i = get_global_id(0) * W;                                         \
    V a = LD##W(x + i), b = LD##W(y + i), c = LD##W(z + i);                  \
    ST##W(abs(a), o0 + 0 * n + i);                                           \
    ST##W(abs_diff(a, b), o0 + 1 * n + i);                                   \
    ST##W(AS_U(add_sat(a, b)), o0 + 2 * n + i);                              \
    ST##W(AS_U(sub_sat(a, b)), o0 + 3 * n + i);                              \
    ST##W(AS_U(hadd(a, b)), o0 + 4 * n + i);                                 \
    ST##W(AS_U(rhadd(a, b)), o1 + 0 * n + i);                                \
    ST##W(AS_U(clamp(a, min(b, c), max(b, c))), o1 + 1 * n + i);             \
    ST##W(AS_U(clz(a)), o1 + 2 * n + i);                                     \
    ST##W(AS_U(mad_hi(a, b, c)), o1 + 3 * n + i);                            \
    ST##W(AS_U(mad_sat(a, b, c)), o1 + 4 * n + i);                           \
    ST##W(AS_U(max(a, b)), o2 + 0 * n + i);                                  \
    ST##W(AS_U(min(a, b)), o2 + 1 * n + i);                                  \
    ST##W(AS_U(mul_hi(a, b)), o2 + 2 * n + i);                               \
    ST##W(AS_U(rotate(a, b)), o2 + 3 * n + i);                               \
    ST##W(AS_U(popcount(a)), o2 + 4 * n + i);                                \
  }

INTEGER(int_char, char, uchar, char, 1, as_uchar)
INTEGER(int_char16, char, uchar, char16, 16, as_uchar16)
INTEGER(int_uchar, uchar, uchar, uchar, 1, )
INTEGER(int_uchar4, uchar, uchar, uchar4, 4, )
INTEGER(int_short, short, ushort, short, 1, as_ushort)
INTEGER(int_short8, short, ushort, short8, 8, as_ushort8)
INTEGER(int_ushort, ushort, ushort, ushort, 1, )
INTEGER(int_ushort2, ushort, ushort, ushort2, 2, )
INTEGER(int_int, int, uint, int, 1, as_uint)
INTEGER(int_int4, int, uint, int4, 4, as_uint4)
INTEGER(int_uint, uint, uint, uint, 1, )
INTEGER(int_uint16, uint, uint, uint16, 16, )
INTEGER(int_long, long, ulong, long, 1, as_ulong)
INTEGER(int_long2, long, ulong, long2, 2, as_ulong2)
INTEGER(int_ulong, ulong, ulong, ulong, 1, )
INTEGER(int_ulong4, ulong, ulong, ulong4, 4, )

// upsample (hi << bits) | lo into the type twice as wide, scalars and
// vectors.
__kernel void upsamples(__global const uint* x, __global const uint* y,
                        __global ulong* o) {
  size_t i = get_global_id(0), n = get_global_size(0);
  uint p = x[i], q = y[i];
  o[0 * n + i] = as_ushort(upsample(as_char((uchar)p), (uchar)q));
  o[1 * n + i] = upsample((uchar)p, (uchar)q);
  o[2 * n + i] = as_uint(upsample(as_short((ushort)p), (ushort)q));
  o[3 * n + i] = upsample((ushort)p, (ushort)q);
  o[4 * n + i] = as_ulong(upsample(as_int(p), q));
  o[5 * n + i] = upsample(p, q);
  long4 v = upsample((int4)(as_int(p), as_int(q), -1, 0),
                     (uint4)(q, p, 1u, 2u));
  o[6 * n + i] = as_ulong(v.x);
  o[7 * n + i] = as_ulong(v.y);
  short8 s = upsample((char8)(as_char((uchar)p)), (uchar8)((uchar)q));
  o[8 * n + i] = as_ushort(s.s7);
}

// mul24 and mad24 on values that fit in 24 bits (signed for int, unsigned
// for uint), outside which their results are the implementation's; the
// second operand has 8 bits, so that the products fit in 32.
__kernel void int24(__global const uint* x, __global const uint* y,
                    __global const uint* z, __global uint* o) {
  size_t i = get_global_id(0), n = get_global_size(0);
  int a = as_int(x[i] << 8) >> 8, b = as_int(y[i] << 24) >> 24;  // signed
  uint p = x[i] & 0xffffffu, q = y[i] & 0xffu;                   // unsigned
  o[0 * n + i] = as_uint(mul24(a, b));
  o[1 * n + i] = as_uint(mad24(a, b, as_int(z[i] << 16) >> 16));
  o[2 * n + i] = mul24(p, q);
  o[3 * n + i] = mad24(p, q, z[i]);
  int4 av = (int4)(a, b, -a, 1);
  int4 m = mul24(av, (int4)(b, a, b, a));
  o[4 * n + i] = as_uint(m.x ^ m.y ^ m.z ^ m.w);
}

// The overloads with scalar bounds and operands (6.12.3: "gentype
// clamp(gentype x, sgentype minval, sgentype maxval)", min and max with
// an sgentype y).
__kernel void scalar_operands(__global const int* x, __global int* o,
                              __global uchar* u, __global long* l, int lo,
                              int hi, uchar s, long t) {
  int16 v = vload16(0, x);
  vstore16(clamp(v, lo, hi), 0, o);
  vstore16(min(v, lo), 1, o);
  vstore16(max(v, hi), 2, o);
  uchar8 c = convert_uchar8_sat(v.lo);
  vstore8(clamp(c, (uchar)10, s), 0, u);
  vstore8(max(c, s), 1, u);
  long4 w = convert_long4(v.hi.lo) * 1000000000L;
  vstore4(min(w, t), 0, l);
  vstore4(clamp(w, -t, t), 1, l);
}

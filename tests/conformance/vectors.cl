// vectors.cl: OpenCL C 1.2 sections 6.1.2 (the built-in vector types,
// widths 2, 4, 8 and 16 of every scalar type), 6.1.5 (their sizes and
// alignment: a vector of n elements of T takes n * sizeof(T) bytes and is
// aligned to its size), 6.1.6 (vector literals) and 6.1.7 (vector
// components: .xyzw, .s0-.sF and .S0-.SF, numeric and letter swizzles,
// .lo/.hi/.even/.odd at every width and chained, single components as
// lvalues, components of vectors in __global memory).
// The forms C has no syntax for are compiled only when the manifest's
// program line defines their macro, so that a regression in one shows
// alone: LITERAL_PARTS (literals with vector operands), LITERAL_TYPEDEF
// (a literal spelled with a typedef of a vector type), SWIZZLE_ASSIGN
// (several components as an lvalue), SWIZZLE_CHAIN (a component of a
// swizzle as an lvalue). 3-component vectors are in vectors3.cl.
// The runs and their expected outputs are in manifest.txt.

// Literals (6.1.6) with one scalar of the element type per component, or
// one scalar for all of them.
__constant float4 kConstVec = (float4)(1.5f, 2.5f, -3.5f, 4.5f);
__constant int4 kConstVecs[2] = {(int4)(1, 2, 3, 4), (int4)(-7)};

int4 take4(int4 v) { return v * 2; }

__kernel void literals(__global int* i, __global float* f, __global long* l,
                       __global double* d, int a, float x) {
  vstore2((int2)(a, -a), 0, i);                                  // 0..1
  vstore4((int4)(a, a + 1, 2 * a, -1), 0, i + 2);                // 2..5
  vstore8((int8)(a, 1, 2, 3, 4, 5, 6, a * a), 0, i + 6);         // 6..13
  vstore16((int16)(a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7,
                   a + 8, a + 9, a + 10, a + 11, a + 12, a + 13, a + 14,
                   a + 15), 0, i + 14);                          // 14..29
  vstore4((int4)(a), 0, i + 30);                                 // 30..33
  vstore16((int16)(a * 3), 0, i + 34);                           // 34..49
  uchar4 u = (uchar4)((uchar)a, (uchar)200, (uchar)(a + 1), (uchar)0);
  vstore4(convert_int4(u), 0, i + 50);                           // 50..53
  vstore16(convert_int16((char16)((char)a)), 0, i + 54);         // 54..69
  short8 s = (short8)((short)a, (short)-2, (short)3, (short)-4, (short)5,
                      (short)-6, (short)7, (short)(a * 100));
  vstore8(convert_int8(s), 0, i + 70);                           // 70..77
  i[78] = ((int4)(1, 2, 3, 4) + (int4)(a)).w;     // in an expression
  i[79] = take4((int4)(a, 0, 0, 9)).w;            // as an argument
  i[80] = kConstVecs[0].z + kConstVecs[1].y;      // __constant
  i[81] = (int)kConstVec.z;
  uint2 uu = (uint2)(0xffffffffu, (uint)a);
  i[82] = (int)(uu.x >> 28);
  i[83] = (int)uu.y;
  vstore2((float2)(x, -x), 0, f);                                // 0..1
  vstore4((float4)(x, 1.5f, x * x, -0.0f), 0, f + 2);            // 2..5
  vstore8((float8)(x, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, x + 1.0f), 0,
          f + 6);                                                // 6..13
  vstore16((float16)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f,
                     9.0f, 10.0f, 11.0f, 12.0f, 13.0f, 14.0f, x),
           0, f + 14);                                           // 14..29
  vstore8((float8)(x), 0, f + 30);                               // 30..37
  vstore2((long2)(1L << 40, (long)a), 0, l);
  vstore4((long4)((long)a * 3000000000L), 0, l + 2);
  ulong2 ul = (ulong2)((ulong)a, 0xffffffffffffffffUL);
  l[6] = (long)((ul.x + 1) >> 1);
  l[7] = (long)(ul.y >> 1);
  vstore2((double2)(0.5, (double)x), 0, d);
  vstore4((double4)((double)x * 3.0), 0, d + 2);
}

// Components (6.1.7) of an int16 and a float4 passed by value.
__kernel void components(__global int* o, __global float* f, int16 v,
                         float4 w) {
  o[0] = v.s0; o[1] = v.s1; o[2] = v.s2; o[3] = v.s3;
  o[4] = v.s4; o[5] = v.s5; o[6] = v.s6; o[7] = v.s7;
  o[8] = v.s8; o[9] = v.s9; o[10] = v.sa; o[11] = v.sB;
  o[12] = v.Sc; o[13] = v.SD; o[14] = v.se; o[15] = v.SF;
  vstore8(v.lo, 0, o + 16);                      // 16..23
  vstore8(v.hi, 0, o + 24);                      // 24..31
  vstore8(v.even, 0, o + 32);                    // 32..39
  vstore8(v.odd, 0, o + 40);                     // 40..47
  int4 a = v.lo.lo;
  vstore4(a.wzyx, 0, o + 48);                    // 48..51
  vstore4(a.xxyy, 0, o + 52);                    // 52..55
  vstore2(a.yw, 0, o + 56);                      // 56..57
  vstore2(v.hi.hi.hi, 0, o + 58);                // 58..59: s14, s15
  vstore4(v.odd.even, 0, o + 60);                // 60..63: s1 s5 s9 s13
  vstore4(v.even.hi, 0, o + 64);                 // 64..67: s8 s10 s12 s14
  vstore4(v.s05af, 0, o + 68);                   // 68..71
  vstore8(v.sfedcba98, 0, o + 72);               // 72..79
  vstore16(v.s0011223344556677, 0, o + 80);      // 80..95
  int2 p = v.s9c;
  o[96] = p.lo;                                  // a 2-vector's halves
  o[97] = p.hi;                                  // are scalars
  o[98] = p.even + p.odd * 1000;
  vstore2(p.yx, 0, o + 99);                      // 99..100
  o[101] = v.s7654.x;                            // a component of a swizzle
  o[102] = (v.lo + v.hi).s3;
  o[103] = v.odd.odd.odd.odd;                    // s15
  // single components as lvalues
  int16 t = v;
  t.s0 = 100;
  t.sF = -1;
  t.sa += 5;
  t.s5++;
  ++t.s6;
  t.S9 *= 2;
  vstore16(t, 0, o + 104);                       // 104..119
  int4 q = a;
  q.x = 7;
  q.w = q.x + q.y;
  q.z -= 1;
  q.y = -q.y;
  vstore4(q, 0, o + 120);                        // 120..123
  f[0] = w.x; f[1] = w.y; f[2] = w.z; f[3] = w.w;
  f[4] = w.s3; f[5] = w.S0;
  vstore4(w.wzyx, 0, f + 6);                     // 6..9
  vstore2(w.lo, 0, f + 10);                      // 10..11
  vstore2(w.odd, 0, f + 12);                     // 12..13
  f[14] = w.x * w.w + w.y;
  float4 r = w;
  r.y = 0.25f;
  r.s2 *= 2.0f;
  vstore4(r, 0, f + 15);                         // 15..18
}

// Components of vectors in __global memory (a buffer of int4) and through
// a private pointer to a vector.
__kernel void memory(__global int4* g, __global int* o) {
  size_t i = get_global_id(0);
  int4 v = g[i];
  g[i].y = 42 + (int)i;        // one component of a vector in memory
  g[i].w += 1;
  o[i * 4 + 0] = v.x + v.z;
  o[i * 4 + 1] = g[i].y;
  int4 copy = v;
  int4* p = &copy;
  (*p).x = -1;
  (*p).z = -3;
  o[i * 4 + 2] = copy.x + copy.z;
  o[i * 4 + 3] = (*p).w;
}

// Sizes (6.1.5): sizeof of every vector type, and the offset of each in a
// struct after a char (its alignment is its size).
#define SIZES(T)                                                             \
  sizeof(T##2), sizeof(T##4), sizeof(T##8), sizeof(T##16)
#define OFFSET(T)                                                            \
  (int)((__private char*)&s_##T.v - (__private char*)&s_##T.c)
#define HOLDER(T) struct { char c; T v; } s_##T

__kernel void sizes(__global int* o) {
  int n[] = {SIZES(char),  SIZES(uchar), SIZES(short), SIZES(ushort),
             SIZES(int),   SIZES(uint),  SIZES(long),  SIZES(ulong),
             SIZES(float), SIZES(double)};
  for (int k = 0; k < 40; ++k) o[k] = n[k];
  HOLDER(char2);
  HOLDER(short2);
  HOLDER(int2);
  HOLDER(float4);
  HOLDER(char16);
  HOLDER(double8);
  HOLDER(long16);
  HOLDER(ushort8);
  o[40] = OFFSET(char2);
  o[41] = OFFSET(short2);
  o[42] = OFFSET(int2);
  o[43] = OFFSET(float4);
  o[44] = OFFSET(char16);
  o[45] = OFFSET(double8);
  o[46] = OFFSET(long16);
  o[47] = OFFSET(ushort8);
  o[48] = (int)sizeof(s_long16);
}

#ifdef LITERAL_PARTS
// 6.1.6: "(float4)(float2, float, float)" and every other list of scalars
// and vectors of the element type whose components add up to the width.
__kernel void literal_parts(__global float* f, __global int* o, float4 a,
                            float x) {
  float2 b = (float2)(x, -x);
  vstore4((float4)(a.xy, b), 0, f);              // a.x a.y x -x
  vstore4((float4)(x, a.zw, 1.0f), 0, f + 4);    // x a.z a.w 1
  vstore8((float8)(a, a.wzyx), 0, f + 8);
  vstore4((float4)(b, b.yx), 0, f + 16);
  int4 v = (int4)(1, 2, 3, 4);
  vstore8((int8)(v, v * 10), 0, o);
  vstore16((int16)(v.lo, v, v.hi, (int8)(7)), 0, o + 8);
  vstore4((int4)(v.s01, v.s3, 9), 0, o + 24);
}
#endif

#ifdef LITERAL_TYPEDEF
// A literal spelled with a typedef name of a vector type (6.1.6 allows
// any vector type name).
typedef float4 vec4_t;
typedef int2 pair_t;

__kernel void literal_typedef(__global float* f, __global int* o, float x) {
  vec4_t v = (vec4_t)(x, 2.0f, 3.0f, 4.0f);
  vec4_t s = (vec4_t)(x);
  pair_t p = (pair_t)(5, -6);
  vstore4(v, 0, f);
  vstore4(s, 0, f + 4);
  vstore2(p, 0, o);
}
#endif

#ifdef SWIZZLE_ASSIGN
// 6.1.7: swizzles with distinct components, .lo/.hi/.even/.odd and
// components of those are lvalues.
__kernel void swizzle_assign(__global int* o, int4 a) {
  int4 v = a;
  v.xy = (int2)(10, 20);             // 10 20 a.z a.w
  vstore4(v, 0, o);
  int4 w = a;
  w.s21 = (int2)(7, 8);              // a.x 8 7 a.w
  vstore4(w, 0, o + 4);
  int8 e = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
  e.hi = (int4)(-1);                 // 0 1 2 3 -1 -1 -1 -1
  e.odd = (int4)(9, 9, 9, 9);        // 0 9 2 9 -1 9 -1 9
  vstore8(e, 0, o + 8);
  int8 g = (int8)(0, 1, 2, 3, 4, 5, 6, 7);
  g.s7654 = g.s0123;                 // 0 1 2 3 3 2 1 0
  g.s31 = (int2)(-9, -8);            // 0 -8 2 -9 3 2 1 0
  vstore8(g, 0, o + 16);
  int4 z = a;
  z.wzyx = z;                        // reversed
  vstore4(z, 0, o + 24);
}
#endif

#ifdef SWIZZLE_CHAIN
// 6.1.7: a single component of a swizzle, of .lo/.hi/.even/.odd, is an
// lvalue like any other component.
__kernel void swizzle_chain(__global int* o, int8 a) {
  int8 v = a;
  v.hi.x = 100;                      // s4
  v.odd.w = -1;                      // s7
  v.s6543.y = 7;                     // s5
  v.lo.lo.yx.x += 1000;              // s1
  v.even.lo = (int2)(-2, -3);        // s0 s2
  vstore8(v, 0, o);
}
#endif

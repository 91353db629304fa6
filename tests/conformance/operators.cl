// operators.cl: OpenCL C 1.2 section 6.3 (operators) on scalars and
// vectors: arithmetic (6.3.a), unary + and - (6.3.b), pre- and
// post-increment and decrement (6.3.c), relational and equality
// operators giving int 0/1 on scalars and -1/0 masks of the signed
// integer type of the operands' size on vectors (6.3.d, e), bitwise
// operators (6.3.f), logical operators on scalars (6.3.g, h), the
// ternary selection with a scalar condition (6.3.i), shifts with the
// count taken modulo the width of the promoted scalar or of the vector's
// element (6.3.j), sizeof (6.3.k), the comma operator (6.3.l) and the
// assignment operators (6.3.o). No operation overflows a signed type or
// divides by zero: those are undefined.
// The forms C has no operator for are compiled only when the manifest's
// program line defines their macro, so that a regression in one shows
// alone: VECTOR_SELECT (?: with a vector condition, 6.3.i), VECTOR_NOT
// (! on a vector, 6.3.h), VECTOR_LOGICAL (&& and || on vectors, 6.3.g)
// and VEC_STEP (vec_step, 6.12.12).
// The runs and their expected outputs are in manifest.txt.

int bump(int* counter) { return ++*counter; }

// Integer scalars. b and q are never 0, and a * b fits an int.
__kernel void scalar_int(__global int* o, __global uint* u, int a, int b,
                         uint p, uint q) {
  o[0] = a + b;
  o[1] = a - b;
  o[2] = a * b;
  o[3] = a / b;               // toward zero
  o[4] = a % b;               // the sign of a
  o[5] = -a;
  o[6] = +a;
  o[7] = ~a;
  o[8] = a & b;
  o[9] = a | b;
  o[10] = a ^ b;
  o[11] = a < b;              // int 1 or 0
  o[12] = a <= b;
  o[13] = a > b;
  o[14] = a >= b;
  o[15] = a == b;
  o[16] = a != b;
  o[17] = !a;
  o[18] = a && b;
  o[19] = a || 0;
  int n = 0;
  o[20] = (a > 0 || bump(&n)) + (a < 0 && bump(&n)) * 10;  // short circuit
  o[21] = n;
  int t = a;
  int r1 = t++;
  int r2 = ++t;
  int r3 = t--;
  int r4 = --t;
  o[22] = r1 * 1000 + r2 - a * 1000;   // 2
  o[23] = r3 - r4;                      // 1
  o[24] = t - a;                        // 0
  o[25] = (n++, n + a);                 // comma: the right operand
  o[26] = a > b ? a : b > 0 ? b : -b;   // nested ?:
  o[27] = (int)sizeof(t++);             // not evaluated
  o[28] = t - a;                        // still 0
  int c = a;
  c += b; c -= 3; c *= 2; c /= 4; c %= 7;
  o[29] = c;
  int d = a;
  d &= 0x0ff0; d |= 0x1001; d ^= b & 0x7777; d <<= 3; d >>= 1;
  o[30] = d;
  o[31] = (a < b) + (a < b) * 2 == 3 * (a < b);  // 0/1 arithmetic: 1
  u[0] = p + q;               // modulo 2^32
  u[1] = p - q;
  u[2] = p * q;
  u[3] = p / q;
  u[4] = p % q;
  u[5] = -p;                  // 2^32 - p
  u[6] = ~p;
  u[7] = p & q;
  u[8] = p | q;
  u[9] = p ^ q;
  u[10] = p < q;
  u[11] = p >= q;
  u[12] = p == q;
  u[13] = p > (uint)a;        // unsigned comparison
  uint w = p;
  w += q; w *= 3u; w -= 7u; w /= 2u; w %= 1000003u;
  u[14] = w;
  u[15] = p++ + ++q;          // the arguments' own copies
  u[16] = p + q;
}

// Floating scalars: the operators that apply to them.
__kernel void scalar_float(__global float* f, __global int* o, float x,
                           float y) {
  f[0] = x + y;
  f[1] = x - y;
  f[2] = x * y;
  f[3] = x / y;
  f[4] = -x;
  float t = x;
  float r1 = t++;
  float r2 = --t;
  f[5] = r1;
  f[6] = r2;
  float c = x;
  c += y; c *= 2.0f; c -= 0.5f; c /= 4.0f;
  f[7] = c;
  f[8] = x > y ? x : y;
  o[0] = x < y;
  o[1] = x <= y;
  o[2] = x > y;
  o[3] = x >= y;
  o[4] = x == y;
  o[5] = x != y;              // true for a NaN operand
  o[6] = !x;                  // 1 only for +-0
  o[7] = x && y;              // a NaN is true
  o[8] = x || y;
  o[9] = (int)sizeof(x + y);
}

// Shift counts of scalars taken at run time (n), always modulo the width
// of the promoted left operand: 32 for char, short and int, 64 for long.
__kernel void scalar_shift(__global int* o, __global long* l, int a,
                           uint p, char c, uchar uc, long v, int n) {
  o[0] = a >> n;              // arithmetic for a negative a
  o[1] = (int)(p << n);
  o[2] = (int)(p >> n);
  o[3] = c << n;              // c (>= 0) is promoted: 32 bits
  o[4] = uc >> n;
  o[5] = (int)((uint)a >> (n + 32));
  l[0] = v >> n;              // modulo 64
  l[1] = (long)((ulong)v << n);
  l[2] = (long)((ulong)v >> (n + 64));
  l[3] = v >> (n + 64);
}

// Vectors: the arithmetic, bitwise and shift operators component-wise,
// comparisons giving -1/0 masks of the signed type of the same size.
__kernel void vector_ops(__global int* o, __global long* l, __global float* f,
                         int4 a, int4 b, uint4 p, float4 x, float4 y,
                         double2 d, double2 e) {
  int4 r[18];
  r[0] = a + b;
  r[1] = a - b;
  r[2] = a * b;
  r[3] = a / b;
  r[4] = a % b;
  r[5] = -a;
  r[6] = ~a;
  r[7] = a & b;
  r[8] = a | b;
  r[9] = a ^ b;
  r[10] = a < b;
  r[11] = a <= b;
  r[12] = a == b;
  r[13] = a != b;
  r[14] = a >> (int4)(1, 2, 3, 4);
  r[15] = as_int4(as_uint4(a) << 2);
  r[16] = +b;
  int4 t = a;
  int4 t1 = t++;
  int4 t2 = --t;
  r[17] = t1 * 100 + t2;   // 101 * a
  for (int k = 0; k < 18; ++k) vstore4(r[k], k, o);     // 0..71
  uint4 q = p * 3u + (uint4)(1u, 2u, 3u, 4u);
  vstore4(as_int4(p > q), 18, o);                      // 72..75
  vstore4(as_int4(p >> (uint4)(31u, 0u, 7u, 16u)), 19, o);  // 76..79
  vstore4(x < y, 20, o);                               // 80..83: NaN false
  vstore4(x >= y, 21, o);
  vstore4(x != y, 22, o);                              // NaN true
  vstore4(x == x, 23, o);                              // false for a NaN
  char4 c = convert_char4_sat(a);
  char4 cm = c > (char4)(0);                           // a char4 mask
  short4 sm = convert_short4_sat(a) <= convert_short4_sat(b);  // a mask
  o[96] = cm.x; o[97] = cm.y; o[98] = cm.z; o[99] = cm.w;
  o[100] = sm.x; o[101] = sm.y; o[102] = sm.z; o[103] = sm.w;
  o[104] = (int)sizeof(cm);
  o[105] = (int)sizeof(sm);
  o[106] = (int)sizeof(x < y);
  o[107] = (int)sizeof(d < e);
  long2 dm = d < e;                                    // a long2 mask
  long2 de = d == e;
  long2 lm = convert_long2(a.lo) > convert_long2(b.lo);
  ulong2 uv = (ulong2)(1ul, 0xfffffffffffffffful);
  long2 um = uv > (ulong2)(0x8000000000000000ul);
  l[0] = dm.x; l[1] = dm.y; l[2] = de.x; l[3] = de.y;
  l[4] = lm.x; l[5] = lm.y; l[6] = um.x; l[7] = um.y;
  int4 w = a;
  w += b; w *= (int4)(2); w -= 1; w >>= 1; w |= (int4)(1); w ^= b;
  vstore4(w, 27, o);                                   // 108..111
  float4 fr[6];
  fr[0] = x + y;
  fr[1] = x - y;
  fr[2] = x * y;
  fr[3] = x / y;
  fr[4] = -x;
  float4 g = x;
  g *= 2.0f;
  g += y;
  fr[5] = g;
  for (int k = 0; k < 6; ++k) vstore4(fr[k], k, f);
  double2 dd = d * e - d;
  f[24] = (float)dd.x;
  f[25] = (float)dd.y;
}

// Vector shift counts beyond the width of the element: modulo 8, 16, 32
// and 64 (6.3.j: "the number of bits used to represent the type of E1
// elements, if E1 is a vector"), the counts taken at run time from n.
__kernel void vector_shift(__global int* o, __global long* l, int n) {
  char4 c = (char4)(1, 2, -128, 3) << (char4)((char)n);
  uchar4 uc = (uchar4)(128, 255, 1, 16) >> (uchar4)((uchar)n);
  short4 s = (short4)(1, -1, 3, 0x4000) << (short4)((short)(n + 8));
  ushort2 us = (ushort2)(0x8000, 0xffff) >> (ushort2)((ushort)(n + 8));
  int4 i = (int4)(1, -1, 5, 0x40000000) << (int4)(n + 24);
  uint2 ui = (uint2)(0x80000000u, 7u) >> (n + 24);
  long2 lv = (long2)(1L, -3L) << (long2)((long)(n + 56));
  ulong2 ul = (ulong2)(0x8000000000000000UL, 1UL) >> (ulong2)(n + 56);
  o[0] = c.x; o[1] = c.y; o[2] = c.z; o[3] = c.w;
  o[4] = uc.x; o[5] = uc.y; o[6] = uc.z; o[7] = uc.w;
  o[8] = s.x; o[9] = s.y; o[10] = s.z; o[11] = s.w;
  o[12] = us.x; o[13] = us.y;
  o[14] = i.x; o[15] = i.y; o[16] = i.z; o[17] = i.w;
  o[18] = (int)ui.x; o[19] = (int)ui.y;
  l[0] = lv.x; l[1] = lv.y;
  l[2] = (long)ul.x; l[3] = (long)ul.y;
}

// Shift counts that are constants, modulo the width like any other.
__kernel void constant_shift(__global int* o, __global long* l) {
  o[0] = 1 << 33;                         // 2
  o[1] = (int)(0x80000000u >> 33);        // 0x40000000
  o[2] = -64 >> 34;                       // -16
  char c = 1;
  o[3] = c << 33;                         // promoted to int: 2
  char4 v = (char4)(1) << (char4)(9);     // modulo 8: 2
  o[4] = v.x;
  ushort4 u = (ushort4)(0x8000) >> (ushort4)(17);  // modulo 16
  o[5] = u.y;
  int4 w = (int4)(3) << 34;               // modulo 32: 12
  o[6] = w.z;
  l[0] = 1L << 65;                        // 2
  l[1] = ((long2)(1L) << (long2)(66)).y;  // 4
}

#ifdef VECTOR_SELECT
// 6.3.i: with a vector condition, each component of the result comes from
// the second operand where the condition's component has its most
// significant bit set, else from the third (select()).
__kernel void vector_select(__global int* o, __global float* f, int4 a,
                            int4 b, float4 x, float4 y) {
  int4 r = a < b ? a : b;                  // component-wise min
  int4 s = (int4)(-1, 0, 1, 0x80000000) ? a : b;  // the MSB decides
  float4 m = x > y ? x : y;
  vstore4(r, 0, o);
  vstore4(s, 1, o);
  vstore4(m, 0, f);
}
#endif

#ifdef VECTOR_NOT
// 6.3.h: ! on a vector gives -1 where the component is 0, else 0.
__kernel void vector_not(__global int* o, int4 a, float4 x) {
  int4 n = !a;
  int4 m = !x;                             // +-0 only
  vstore4(n, 0, o);
  vstore4(m, 1, o);
}
#endif

#ifdef VECTOR_LOGICAL
// 6.3.g: && and || on vectors are component-wise (-1 or 0) and evaluate
// both operands.
__kernel void vector_logical(__global int* o, int4 a, int4 b) {
  int4 c = a && b;
  int4 d = a || b;
  int4 e = (a > 0) && (b < 0);
  vstore4(c, 0, o);
  vstore4(d, 1, o);
  vstore4(e, 2, o);
}
#endif

#ifdef VEC_STEP
// vec_step (6.12.12): the number of elements of a scalar or vector type
// or expression (1 for a scalar).
__kernel void vec_steps(__global int* o) {
  float4 v;
  o[0] = vec_step(float4);
  o[1] = vec_step(v);
  o[2] = vec_step(char16);
  o[3] = vec_step(int);
  o[4] = vec_step(double2);
  o[5] = vec_step(uchar8);
}
#endif

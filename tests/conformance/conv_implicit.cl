// conv_implicit.cl: OpenCL C 1.2 section 6.2.1 (implicit conversions)
// and 6.2.6 (usual arithmetic conversions), with the C99 rules they
// refer to (6.3.1.1 integer promotions, 6.3.1.8 usual arithmetic
// conversions, 6.4.4.1 the types of integer constants): char and short
// operands promoted to int, signed against unsigned operands of the same
// and of other ranks, integers against floating operands, conversions on
// assignment, initialisation, argument passing and return, and the
// widening of a scalar operand to the vector operand's element type and
// width (6.2.6, 6.3). Operands come in as kernel arguments, so that no
// folding in a front end can stand in for what the device computes.
// The conversions C itself does not make are compiled only when the
// manifest's program line defines their macro, so that a regression in
// one shows alone: WIDEN_TO_FLOATING (an int, uint or long variable
// widened to a float vector), SPLAT_INIT, SPLAT_ASSIGN and SPLAT_RETURN
// (a scalar converted to a vector type on initialisation, assignment
// and return, 6.2.1).
// The runs and their expected outputs are in manifest.txt.

// Integer promotions and the usual arithmetic conversions on scalars.
__kernel void promote(__global int* o, __global long* l, __global ulong* ul,
                      char c, uchar uc, short s, ushort us, int i, uint u) {
  o[0] = c + c;                    // int: no wrap at 8 bits
  o[1] = uc * uc;                  // int: up to 65025
  o[2] = s * 3;                    // int: no wrap at 16 bits
  o[3] = us + us;                  // int: up to 131070
  o[4] = ~uc;                      // ~ of the promoted int: -(uc + 1)
  o[5] = -us;                      // negative int, not a ushort
  o[6] = c < uc;                   // compared as ints
  o[7] = (uchar)c == uc;           // c's bits as a uchar
  o[8] = i < u;                    // i converted to uint
  o[9] = (int)(i + u > 5u);        // unsigned addition
  o[10] = (int)((uint)i / 3u);     // unsigned division of i's bits
  o[11] = (int)(u >> 28);
  o[12] = i / 3;                   // truncation toward zero
  o[13] = i % 3;                   // the sign of i
  o[14] = c * s;                   // both promoted
  o[15] = uc - 200;                // int, may be negative
  o[16] = (int)sizeof(c + c);      // 4
  o[17] = (int)sizeof(us + uc);    // 4
  o[18] = (int)sizeof(c + 1L);     // 8
  o[19] = (int)sizeof(u + i);      // 4
  o[20] = (int)sizeof(u + 1L);     // 8
  o[21] = (int)sizeof(1.0f + i);   // 4
  o[22] = (int)sizeof(1.0 + 1.0f); // 8
  o[23] = (int)sizeof(s ? 1 : 2L); // 8: the usual conversions of ?:
  l[0] = i + 1u;          // uint, then converted to long: 0 .. 2^32-1
  l[1] = (long)i * 3000000;
  l[2] = i * 3000000L;    // i converted to long
  l[3] = -1L < u;         // long holds every uint: 1
  l[4] = -1 < u;          // int converted to uint: 0
  l[5] = u + (long)i;     // long arithmetic
  l[6] = c + 4000000000;  // 4000000000 is a long constant
  l[7] = us * 100000L;
  ul[0] = i + 1ul;        // i converted to ulong (modulo 2^64)
  ul[1] = u + 1ul;        // zero-extended
  ul[2] = c * 2ul;
  ul[3] = (ulong)s << 40;
}

// Integers meeting floating operands, and mixed float/double.
__kernel void mixed(__global float* f, __global double* d, __global int* o,
                    char c, int i, uint u, float x, double y) {
  f[0] = i + x;          // i converted to float
  f[1] = u * 0.25f;      // u converted to float
  f[2] = c / 2;          // integer division, then to float
  f[3] = c / 2.0f;       // float division
  f[4] = x * 2 - i;      // the literal 2 converted to float
  f[5] = (i > 0 ? 1 : 2.5f);  // the arms' usual conversions: float
  f[6] = -x;
  f[7] = x + (float)y;   // y rounded to float first
  d[0] = x + y;          // x converted to double
  d[1] = x;              // exact
  d[2] = i * 0.5;        // i converted to double
  d[3] = u + y;
  d[4] = x * x;          // float multiplication, then widened
  d[5] = (double)x * x;  // double multiplication
  o[0] = x < y;          // compared as doubles
  o[1] = x == (float)y;
  o[2] = i < x;          // i converted to float
  o[3] = (int)sizeof(x * y);   // 8
  o[4] = (int)sizeof(c * x);   // 4
  o[5] = (int)sizeof(i * 2.0); // 8
}

// Conversion on assignment, initialisation, argument passing and return
// (C99 6.5.16.1, 6.7.8, 6.5.2.2, 6.8.6.4).
float half_of(int n) { return n / 2.0f; }
int truncated(float v) { return v; }       // toward zero
double widened(float v) { return v; }      // exact
uchar low_byte(int n) { return n; }        // modulo 256
float takes_float(float v) { return v * 0.5f; }

__kernel void assign(__global int* o, __global float* f, __global double* d,
                     float x, int n, double y) {
  int t = x;              // toward zero (x is in range)
  float g = n;            // to nearest even
  uchar b = n;            // modulo 256
  ushort h = n;           // modulo 65536
  uint w = n;             // modulo 2^32
  bool z = x;             // 0 or 1
  bool zz = n;
  float fy = y;           // to nearest even
  long wide = n;          // sign-extended
  o[0] = t;
  o[1] = b;
  o[2] = h;
  o[3] = (int)(w >> 1);
  o[4] = z;
  o[5] = zz;
  o[6] = truncated(x * 3.0f);
  o[7] = low_byte(n * 7);
  uchar acc = 250;
  acc += n;               // computed as int, stored modulo 256
  o[8] = acc;
  ushort wrap = 65535;
  wrap++;                 // 0
  o[9] = wrap;
  uint down = 0;
  down--;                 // 0xffffffff
  o[10] = (int)(down >> 4);
  char ch = 100;
  ch += 27;               // 127, in range
  o[11] = ch;
  short sh = -5;
  sh *= 1000;             // -5000
  o[12] = sh;
  o[13] = (int)(wide >> 63);  // the sign, extended
  o[14] = takes_float(n) == n * 0.5f;  // n converted to float for the call
  int k = 7.9f;           // 7
  o[15] = k;
  f[0] = g;
  f[1] = half_of(n);
  f[2] = fy;
  f[3] = takes_float(n);
  f[4] = n / 2;           // integer division, then to float
  d[0] = widened(x);
  d[1] = x + y;
  d[2] = n * 0.1;
}

// The types of integer and floating constants (C99 6.4.4), seen through
// sizeof and through comparisons that depend on them.
__kernel void constants(__global int* o) {
  o[0] = (int)sizeof(2147483647);    // int
  o[1] = (int)sizeof(2147483648);    // long: a decimal constant never
                                     // becomes unsigned
  o[2] = (int)sizeof(0x7fffffff);    // int
  o[3] = (int)sizeof(0x80000000);    // uint
  o[4] = (int)sizeof(0x100000000);   // long
  o[5] = (int)sizeof(4294967295u);   // uint
  o[6] = (int)sizeof(1L);            // 8
  o[7] = (int)sizeof('a');           // int: 4
  o[8] = (int)sizeof(1.0);           // double
  o[9] = (int)sizeof(1.0f);          // float
  o[10] = (int)sizeof(1u + 1L);      // 8
  o[11] = 0x80000000 > 0;            // unsigned: 1
  o[12] = -2147483648 < 0;           // long: 1
  o[13] = -1 < 0u;                   // -1 converted to uint: 0
  o[14] = 'A' + 1;                   // 66
  o[15] = 017 + 0x1F + 10;           // octal, hex, decimal: 56
  o[16] = (int)(0xFFFFFFFFu + 1ul == 0x100000000ul);  // 1
  o[17] = (int)(1.5e1f * 2);         // 30
  o[18] = (int)(0x1.8p1f * 4);       // hex float: 3.0 * 4
}

// Scalar operands widened to the vector operand (6.2.6): the scalar is
// converted to the element type and repeated in every component. The
// scalars have lower rank than the elements, as 6.2.6 requires.
__kernel void widen(__global int* o, __global float* f, __global long* l,
                    __global uint* u, int4 v, float4 w, char c, short s,
                    int k, float x) {
  int4 r[10];
  r[0] = v + k;
  r[1] = k - v;
  r[2] = v * c;
  r[3] = v / 2;
  r[4] = v % 3;
  r[5] = v & 0xff;
  r[6] = c | v;
  r[7] = v < k;           // -1 or 0 per component
  r[8] = s == v;          // short converted to int, then compared
  r[9] = v >> 1;
  for (int n = 0; n < 10; ++n) {
    o[n * 4 + 0] = r[n].x;
    o[n * 4 + 1] = r[n].y;
    o[n * 4 + 2] = r[n].z;
    o[n * 4 + 3] = r[n].w;
  }
  int4 m = w > x;         // float4 against a float: an int4 mask
  o[40] = m.x; o[41] = m.y; o[42] = m.z; o[43] = m.w;
  float4 q[5];
  q[0] = w * c;           // c converted to float
  q[1] = w + x;
  q[2] = w / 2;           // 2 converted to float
  q[3] = 1.0f - w;
  q[4] = x - w;
  for (int n = 0; n < 5; ++n) {
    f[n * 4 + 0] = q[n].x;
    f[n * 4 + 1] = q[n].y;
    f[n * 4 + 2] = q[n].z;
    f[n * 4 + 3] = q[n].w;
  }
  long4 lv = convert_long4(v) * k + 5000000000L;
  l[0] = lv.x; l[1] = lv.y; l[2] = lv.z; l[3] = lv.w;
  long2 lc = (long2)(-1L, 1L) * s;   // short converted to long
  l[4] = lc.x; l[5] = lc.y;
  uint4 uv = as_uint4(v) + (ushort)s;  // ushort converted to uint
  u[0] = uv.x; u[1] = uv.y; u[2] = uv.z; u[3] = uv.w;
  uchar4 b = (uchar4)((uchar)1, (uchar)2, (uchar)128, (uchar)255) +
             (uchar)c;                 // modulo 256 per component
  u[4] = b.x; u[5] = b.y; u[6] = b.z; u[7] = b.w;
  short8 s8 = (short8)(s) - (short)k;  // 16-bit components
  u[8] = (ushort)s8.s0;
  u[9] = (ushort)s8.s7;
  double2 dv = (double2)(0.5, -2.0) * x;  // float converted to double
  f[20] = (float)dv.x;
  f[21] = (float)dv.y;
}

#ifdef WIDEN_TO_FLOATING
// An int, uint or long scalar widened to a float or double vector: the
// rank of a floating type is above every integer type's (6.2.6), so the
// integer is converted to the element type (to nearest even) and
// repeated.
__kernel void widen_to_floating(__global float* f, __global int* o,
                                float4 w, int k, uint u, long n) {
  float4 q[4];
  q[0] = w * k;
  q[1] = w + u;
  q[2] = n - w;
  q[3] = k / w;
  for (int j = 0; j < 4; ++j) {
    f[j * 4 + 0] = q[j].x;
    f[j * 4 + 1] = q[j].y;
    f[j * 4 + 2] = q[j].z;
    f[j * 4 + 3] = q[j].w;
  }
  int4 m = w < k;
  o[0] = m.x; o[1] = m.y; o[2] = m.z; o[3] = m.w;
  double2 d = (double2)(0.5, -0.25) * k + n;
  f[16] = (float)d.x;
  f[17] = (float)d.y;
}
#endif

// 6.2.1: "Implicit conversions from a scalar type to a vector type are
// allowed. In this case, the scalar may be subject to the usual
// arithmetic conversion to the element type used by the vector ... and
// widened" - on initialisation, assignment and return as anywhere else.
#ifdef SPLAT_INIT
__kernel void splat_init(__global float* f, __global int* o, float x,
                         int n) {
  float4 a = x;
  int8 b = n;
  double2 d = x;     // float converted to double, then repeated
  float2 e = 3;      // the constant converted to float
  f[0] = a.x; f[1] = a.w; f[2] = (float)d.y; f[3] = e.y;
  o[0] = b.s0; o[1] = b.s7;
}
#endif

#ifdef SPLAT_ASSIGN
__kernel void splat_assign(__global float* f, __global int* o, float x,
                           int n) {
  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  int4 b = (int4)(5, 6, 7, 8);
  a = x;
  b = n;
  f[0] = a.x; f[1] = a.w;
  o[0] = b.x; o[1] = b.w;
}
#endif

#ifdef SPLAT_RETURN
float4 as_vector(float x) { return x; }
int2 pair_of(int n) { return n; }

__kernel void splat_return(__global float* f, __global int* o, float x,
                           int n) {
  float4 a = as_vector(x);
  int2 b = pair_of(n);
  f[0] = a.x; f[1] = a.w;
  o[0] = b.x; o[1] = b.y;
}
#endif

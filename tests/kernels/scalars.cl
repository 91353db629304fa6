// scalars.cl: Scalar types: sizes, signedness, overflow, literals, every
// scalar type as an argument (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void scalars(__global const char* cin, __global int* o,
                      __global long* lo, __global ulong* ulo,
                      __global double* d, __global uchar* uo) {
  o[0] = cin[0];
  char c = (char)200; o[1] = c;
  o[2] = c < 0;
  uchar u = (uchar)200; o[3] = u;
  unsigned char u2 = 255; u2 += 1; o[4] = u2;
  signed char sc = -3; o[5] = sc;
  short s = (short)40000; o[6] = s;
  ushort us = (ushort)70000; o[7] = us;
  o[8] = sizeof(char) * 1000 + sizeof(short) * 100 + sizeof(int) * 10;
  o[9] = sizeof(long) * 100 + sizeof(double) * 10 + sizeof(float);
  o[10] = sizeof(float4) + sizeof(int8) * 100 +
          sizeof(double2) * 10000;
  o[11] = -7 / 2;
  o[12] = -7 % 2;
  uint big = 0xFFFFFFFFu; big += 2; o[13] = (int)big;
  o[14] = (int)2.9f + (int)-2.9f;
  bool b = 5; o[15] = b;
  size_t z = get_global_size(0); o[16] = (int)z * 3;
  o[17] = cin[1] + cin[2];
  o[18] = (cin[2] >> 1);
  unsigned u3 = 7; signed int si = -9; o[19] = u3 + si;
  lo[0] = 3000000000L * 3;
  lo[1] = (long)INT_MAX + 1;
  lo[2] = -(1L << 62);
  long m = 1; for (int i = 0; i < 40; ++i) m *= 2; lo[3] = m;
  lo[4] = LONG_MIN;
  ulo[0] = 0xFFFFFFFFFFFFFFFFUL;
  ulo[1] = (ulong)1 << 63;
  unsigned long ul = 10; ul -= 11; ulo[2] = ul;
  ulo[3] = (ulong)0x123456789UL * 16 >> 4;
  ulo[4] = (ulong)UINT_MAX * UINT_MAX;
  d[0] = 1.0 / 3.0;
  d[1] = 1e300 * 10.0;
  d[2] = (float)(1.0 / 3.0);
  d[3] = 0.1 + 0.2;
  uo[0] = cin[0];
  uo[1] = (uchar)(cin[3] * 2);
}
__kernel void args(__global long* o, __global double* od, char c,
                   uchar uc, short s, ushort us, int i, uint ui,
                   long l, ulong ul, float f, double d) {
  o[0] = c; o[1] = uc; o[2] = s; o[3] = us; o[4] = i; o[5] = ui;
  o[6] = l; o[7] = (long)ul; o[8] = (long)(f * 4.0f);
  od[0] = d; od[1] = f;
}

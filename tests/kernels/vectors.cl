// vectors.cl: Vector literals, components, swizzles, lo/hi/even/odd,
// arithmetic, comparisons and vector arguments (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
float4 twice4(float4 v) { return v * 2.0f; }
__kernel void vec(__global float* f, __global int* i, float4 arg,
                  __global float4* fv, int4 iarg) {
  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  float4 s = (float4)(2.0f);
  float4 r = a * s + 1.0f;
  f[0] = r.x; f[1] = r.y; f[2] = r.z; f[3] = r.w;
  float2 xy = a.xy; f[4] = xy.x; f[5] = xy.y;
  float4 rev = a.wzyx; f[6] = rev.s0; f[7] = rev.s1; f[8] = rev.s2;
  f[9] = rev.s3;
  f[10] = a.s0 + a.S3;
  float2 lo = a.lo, hi = a.hi; f[11] = lo.y; f[12] = hi.x;
  float2 ev = a.even, od = a.odd; f[13] = ev.y; f[14] = od.x;
  float4 q = a / (float4)(2.0f); f[15] = q.y;
  float4 neg = -a; f[16] = neg.w;
  f[17] = arg.x + arg.y * 10.0f + arg.z * 100.0f + arg.w * 1000.0f;
  float8 e = (float8)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
  float4 elo = e.lo; float4 ehi = e.hi; f[18] = elo.w; f[19] = ehi.x;
  f[20] = e.s7;
  float4 sw = e.s7654; f[21] = sw.y;
  f[22] = (a + s).w;
  float2 t = twice4(a).yx; f[23] = t.x * 10.0f + t.y;
  float2 pr = (a * 3.0f).zw; f[24] = pr.x + pr.y;
  double2 d2 = (double2)(0.5, 0.25); f[25] = (float)(d2.x + d2.y);
  a.x = 10.0f; a.s2 = 30.0f; f[26] = a.x + a.z + a.y;
  f[27] = fv[1].y;
  float2 fxy = fv[1].xy; f[28] = fxy.x;
  int4 b = (int4)(1, -2, 3, -4);
  int4 c = (int4)(3);
  int4 lt = b < c;
  i[0] = lt.x; i[1] = lt.y; i[2] = lt.z; i[3] = lt.w;
  int4 eq = b == (int4)(1, 2, 3, 4);
  i[4] = eq.x; i[5] = eq.y; i[6] = eq.z; i[7] = eq.w;
  int4 bits = (b & (int4)(6)) | (c << 4);
  i[8] = bits.x; i[9] = bits.y; i[10] = bits.z; i[11] = bits.w;
  int4 m = b * c - 1;
  i[12] = m.x; i[13] = m.y; i[14] = m.z; i[15] = m.w;
  int4 dv = b / 2;
  i[16] = dv.x; i[17] = dv.y; i[18] = dv.z; i[19] = dv.w;
  uint2 u2 = (uint2)(0xFFFFFFFFu, 1u); u2 += 1u;
  i[20] = (int)u2.x; i[21] = (int)u2.y;
  long4 l4 = (long4)(1L << 40); i[22] = (int)(l4.z >> 38);
  int4 gt = a > (float4)(2.5f);
  i[23] = gt.x; i[24] = gt.y; i[25] = gt.z; i[26] = gt.w;
  int4 ne = b != c; i[27] = ne.x + ne.y * 10 + ne.z * 100;
  i[28] = iarg.x + iarg.y + iarg.z + iarg.w;
  int16 w = (int16)(7);
  w.sA = 1; w.sf = 2; i[29] = w.s0 + w.sa * 10 + w.sF * 100;
  uchar4 uc = (uchar4)(250, 5, 128, 0) + (uchar4)(10);
  i[30] = uc.x + uc.y * 1000;
  size_t g = get_global_id(0);
  fv[g] = fv[g] * 2.0f + (float4)(0.0f, 1.0f, 2.0f, 3.0f);
}

// builtins_smoke.cl: A light touch of every built-in family
// (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void builtins(__global float* f, __global int* i) {
  f[0] = sqrt(16.0f); f[1] = fabs(-2.5f); f[2] = pow(2.0f, 10.0f);
  f[3] = fmax(1.0f, 3.0f); f[4] = exp(0.0f); f[5] = floor(-1.5f);
  f[6] = mad(2.0f, 3.0f, 1.0f); f[7] = clamp(5.0f, 0.0f, 1.0f);
  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  f[8] = dot(a, a);
  f[9] = length((float4)(3.0f, 4.0f, 0.0f, 0.0f));
  float4 cr = cross((float4)(1.0f, 0.0f, 0.0f, 0.0f),
                    (float4)(0.0f, 1.0f, 0.0f, 0.0f));
  f[10] = cr.z;
  float4 sq = sqrt((float4)(4.0f, 9.0f, 16.0f, 25.0f)); f[11] = sq.w;
  float4 cf = convert_float4((int4)(1, 2, 3, 4)); f[12] = cf.w;
  f[13] = sin(0.0f); f[14] = hypot(3.0f, 4.0f); f[15] = fmin(-1.0f, 2.0f);
  f[16] = (float)sqrt(2.0);
  i[0] = abs(-7); i[1] = min(3, -2); i[2] = max(3u, 7u);
  i[3] = clamp(15, 0, 10); i[4] = popcount(0xF0F0);
  i[5] = mul24(3, 4); i[6] = mad24(2, 3, 4); i[7] = rotate(1u, 3u);
  i[8] = clz(1);
  i[9] = convert_int(2.7f); i[10] = convert_int_sat(3e10f);
  i[11] = convert_uchar_sat(300); i[12] = as_int(1.0f);
  int4 ci = convert_int4((float4)(1.5f, -1.5f, 2.5f, 0.0f));
  i[13] = ci.x * 1000 + ci.y * 100 + ci.z * 10;
  i[14] = convert_int_rte(2.5f); i[15] = convert_char_sat(-200);
  i[16] = abs_diff(-3, 4); i[17] = add_sat(2147483647, 1);
}

// unroll.cl: #pragma unroll, unroll N and nounroll on for, while and do
// loops, and on a loop whose trip count is not a multiple of N.
__kernel void unrolled(__global int* o, int n) {
  int i = get_global_id(0);
  int a = 0, b = 0, c = 0, d = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) a += k * i;
#pragma unroll 4
  for (int k = 0; k < n; ++k) b += k;
  int w = 0;
#pragma nounroll
  while (w < n) { c += 2; ++w; }
  int v = 0;
#pragma unroll 2
  do { d += 3; } while (++v < 5);
  o[i * 4 + 0] = a;
  o[i * 4 + 1] = b;
  o[i * 4 + 2] = c;
  o[i * 4 + 3] = d;
}

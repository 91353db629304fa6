// checked.cl: Out-of-range buffer indexing caught by -dc-checked
// (check_dispatch.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void scale(__global float* data, float f) {
  size_t i = get_global_id(0);
  data[i] = data[i] * f;
  if (i + 1 == get_global_size(0)) data[i + 1] = -1.0f;
}
__kernel void reader(__global const int* src, __constant int* table,
                     __global int* dst, int shift) {
  int i = get_global_id(0);
  dst[i] = src[i] + table[i + shift];
}
__kernel void regions(__global int* data, __local int* t) {
  int l = get_local_id(0);
  t[l] = l;
  barrier(CLK_LOCAL_MEM_FENCE);
  data[(int)get_global_id(0) - 1] = t[l];
}
__kernel void fibers(__global int* data, __local int* t, int m) {
  int l = get_local_id(0);
  t[l] = l;
  switch (m) { default: barrier(CLK_LOCAL_MEM_FENCE); break; }
  data[get_global_id(0) + m] = t[l];
}
// Indexes into private, __local and __constant arrays are checked too, in
// kernels and in helpers.
__constant int kSquares[4] = {0, 1, 4, 9};
int pick(int i) {
  int t[4] = {10, 11, 12, 13};
  return t[i] + kSquares[i];
}
__kernel void arrays(__global int* o, int i) {
  __local int shared[8];
  int l = get_local_id(0);
  shared[l] = l;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = pick(i) + shared[(l + i) % 8];
}

// reduce.cl: Tree reductions in __local memory: a static array and a __local
// argument (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void reduce_static(__global const int* in,
                            __global int* out) {
  __local int s[256];
  int l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = get_local_size(0) / 2; k > 0; k /= 2) {
    if (l < k) s[l] += s[l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = s[0];
}
__kernel void reduce_arg(__global const int* in, __global int* out,
                         __local int* s) {
  int l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  int k = get_local_size(0) / 2;
  while (k > 0) {
    if (l < k) s[l] += s[l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
    k >>= 1;
  }
  if (l == 0) out[get_group_id(0)] = s[0];
}

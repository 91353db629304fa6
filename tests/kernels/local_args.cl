// local_args.cl: Several __local arguments with a static __local array; a
// private pointer into __local memory (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void two_locals(__global int* o, __local int* a,
                         __local float* b) {
  int l = get_local_id(0), n = get_local_size(0);
  __local int tile[8];
  a[l] = l;
  b[l] = l * 0.5f;
  if (l < 8) tile[l] = 100 + l;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = a[n - 1 - l] +
                        (int)(b[(l + 1) % n] * 2.0f) * 1000 +
                        tile[l % 8] * 1000000;
}
__kernel void private_ptr(__global int* o, __local int* a) {
  __local int* p = a + 1;
  p[get_local_id(0)] = (int)get_local_id(0);
  o[get_global_id(0)] = p[get_local_id(0)] * 2 + (int)(p - a);
}

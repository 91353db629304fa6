// atomics.cl: Histograms with global and local atomics; every atomic_* and a
// 64-bit atom_add (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void hist_global(__global const uint* in, __global uint* bins,
                          uint nbins) {
  atomic_inc(&bins[in[get_global_id(0)] % nbins]);
}
__kernel void hist_local(__global const uint* in, __global uint* bins,
                         uint nbins, __local uint* lb) {
  uint l = get_local_id(0);
  for (uint b = l; b < nbins; b += get_local_size(0)) lb[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&lb[in[get_global_id(0)] % nbins]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint b = l; b < nbins; b += get_local_size(0)) {
    atomic_add(&bins[b], lb[b]);
  }
}
__kernel void misc(__global int* v, __global long* lv) {
  int i = get_global_id(0);
  atomic_add(&v[0], i);
  atomic_sub(&v[1], 2);
  atomic_max(&v[2], i);
  atomic_min(&v[3], -i);
  atomic_or(&v[4], 1 << (i % 31));
  atomic_dec(&v[5]);
  int old;
  do { old = v[6]; } while (atomic_cmpxchg(&v[6], old, old + 3) != old);
  atom_add(&lv[0], (long)i << 32);
  atomic_xchg(&v[7], 5);
}

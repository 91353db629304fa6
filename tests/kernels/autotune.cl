// autotune.cl: Kernels that autotuning times: results independent of the group
// size (check_dispatch.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void inc(__global int* o) {
  size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1))
             * get_global_size(0) + get_global_id(0);
  o[i] += 1;
}
__kernel void inc_barrier(__global int* o, __local int* t) {
  t[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] += t[get_local_id(0)];
}

// reqd_group_size.cl: reqd_work_group_size with and without barriers
// (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel __attribute__((reqd_work_group_size(8, 4, 1)))
void reqd(__global int* o) {
  o[get_global_id(1) * get_global_size(0) + get_global_id(0)] =
      get_local_size(0) * 10 + get_local_size(1) +
      get_num_groups(0) * 1000;
}
__kernel void __attribute__((reqd_work_group_size(16, 1, 1)))
with_barrier(__global int* o, __local int* t) {
  t[get_local_id(0)] = get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = t[15 - get_local_id(0)];
}

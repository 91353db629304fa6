// grid_sync_reduce.cl: A whole-grid sum in one dispatch: group partials,
// dc_grid_sync, then one total (check_grid_sync.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void reduce(__global const int* x, __global int* partial,
                     __global int* total, __local int* t) {
  size_t l = get_local_id(0);
  t[l] = x[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {
    if (l < s) t[l] += t[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) partial[get_group_id(0)] = t[0];
  dc_grid_sync();
  if (get_group_id(0) == 0 && l == 0) {
    int sum = 0;
    for (size_t g = 0; g < get_num_groups(0); ++g) sum += partial[g];
    total[0] = sum;
  }
}

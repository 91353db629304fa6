// grid_sync.cl: dc_grid_sync: exchanges across the whole grid, directly and
// through a helper (check_grid_sync.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void exchange(__global int* a, __global int* out, int rounds) {
  size_t n = get_global_size(0);
  size_t i = get_global_id(0);
  int acc = 0;
  int mine = (int)i * 3;
  for (int r = 0; r < rounds; ++r) {
    a[i] = mine + r * 1000;
    dc_grid_sync();
    int other = a[n - 1 - i];
    acc += other;
    mine += 1;
    dc_grid_sync();
  }
  out[i] = acc;
}
void sync_all(void) { dc_grid_sync(); }
__kernel void exchange_fibers(__global int* a, __global int* out,
                              int rounds) {
  size_t n = get_global_size(0);
  size_t i = get_global_id(0);
  int acc = 0;
  int mine = (int)i * 3;
  for (int r = 0; r < rounds; ++r) {
    a[i] = mine + r * 1000;
    sync_all();
    acc += a[n - 1 - i];
    mine += 1;
    sync_all();
  }
  out[i] = acc;
}
__kernel void plain_barrier(__global int* a) {
  a[get_global_id(0)] = 1;
  barrier(CLK_GLOBAL_MEM_FENCE);
}
__kernel void shape(__global int* o) {
  dc_grid_sync();
  if (get_global_id(0) == 0 && get_global_id(1) == 0) {
    o[0] = (int)get_local_size(0); o[1] = (int)get_local_size(1);
    o[2] = (int)(get_num_groups(0) * get_num_groups(1));
  }
}

// grid_sync_faulty.cl: dc_grid_sync reached by some work-groups only, and with
// a bounds-check fault: the dispatch fails instead of hanging
// (check_grid_sync.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void fault(__global int* a, __global int* out) {
  size_t i = get_global_id(0);
  if (get_group_id(0) == 1 && get_local_id(0) == 0) a[i + 100000] = 1;
  a[i] = (int)i;
  dc_grid_sync();
  out[i] = a[get_global_size(0) - 1 - i];
}
__kernel void uneven(__global int* a) {
  if (get_group_id(0) != 0) dc_grid_sync();
  a[get_global_id(0)] = 1;
}
__kernel void extra(__global int* a) {
  dc_grid_sync();
  if (get_group_id(0) == 0) { dc_grid_sync(); dc_grid_sync(); }
  a[get_global_id(0)] = 2;
}

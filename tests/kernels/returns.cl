// returns.cl: Early returns in loops, switches and around barriers
// (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void ret_loop(__global int* o, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  o[i] = 1;
  for (int k = 0; k < 100; ++k) {
    if (k == i % 7) { o[i] += k; return; }
  }
  o[i] = -1;
}
__kernel void ret_switch(__global int* o) {
  int i = get_global_id(0);
  switch (i % 3) {
    case 0: o[i] = 10; return;
    case 1: o[i] = 11; break;
    default: o[i] = 12;
  }
  o[i] += 100;
}
__kernel void ret_regions(__global int* o, __local int* t) {
  int l = get_local_id(0), g = get_global_id(0);
  if (get_group_id(0) == 1) return;
  t[l] = l * 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  int v = t[(l + 1) % get_local_size(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l % 3 == 0) return;
  o[g] = v;
  for (int k = 0; k < 8; ++k) {
    if (k == l % 4) { o[g] += 1000 * k; return; }
  }
  o[g] = -1;
}
__kernel void ret_fibers(__global int* o, __local int* t, int m) {
  int l = get_local_id(0);
  t[l] = l;
  switch (m) { case 1: barrier(CLK_LOCAL_MEM_FENCE); break; }
  if (l % 2) return;
  for (int k = 0; ; ++k) {
    if (k == 3) { o[get_global_id(0)] = t[(l + 1) % 16] + 50; return; }
  }
}

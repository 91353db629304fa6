// barrier_shapes.cl: Barriers in helpers, switches, after labels, with break,
// continue and goto (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
void sync_all(void) { barrier(CLK_LOCAL_MEM_FENCE); }
int exchange(__local int* t, int v) {
  int l = get_local_id(0), n = get_local_size(0);
  t[l] = v;
  sync_all();
  int r = t[n - 1 - l];
  sync_all();
  return r;
}
__kernel void in_helper(__global int* o, __local int* t) {
  int l = get_local_id(0);
  o[get_global_id(0)] = exchange(t, l * 3) + exchange(t, 1000);
}
__kernel void with_break(__global int* o, __local int* t) {
  int l = get_local_id(0), n = get_local_size(0), rounds = 0;
  if (l == 0) t[0] = 0;
  for (;;) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) t[0] += 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    rounds++;
    if (t[0] >= 5) break;
  }
  o[get_global_id(0)] = rounds * 100 + t[0] + n * 0;
}
__kernel void in_switch(__global int* o, __local int* t, int m) {
  int l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  t[l] = l * m;
  switch (m) {
    case 2: barrier(CLK_LOCAL_MEM_FENCE); o[g] = t[n - 1 - l]; break;
    default: barrier(CLK_LOCAL_MEM_FENCE); o[g] = -t[n - 1 - l]; break;
  }
}
__kernel void with_goto(__global int* o, __local int* t) {
  int l = get_local_id(0), n = get_local_size(0), v = 0;
again:
  t[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  v += t[(l + 1) % n] + 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (v < 10) goto again;
  o[get_global_id(0)] = v;
}
__kernel void with_continue(__global int* o, __local int* t) {
  int l = get_local_id(0), n = get_local_size(0), sum = 0;
  for (int i = 0; i < 6; ++i) {
    t[l] = i * (l + 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    int peer = t[(l + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i % 2) continue;
    sum += peer;
  }
  o[get_global_id(0)] = sum;
}

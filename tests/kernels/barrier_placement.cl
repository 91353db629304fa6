// barrier_placement.cl: Barriers in a switch, after a label, with goto, break
// and continue, in nested helpers (check_program.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void in_switch(__global int* o, int m) {
  switch (m) {
    case 0: barrier(CLK_LOCAL_MEM_FENCE); break;
  }
}
__kernel void after_label(__global int* o) {
  o[0] = 1;
  here: barrier(CLK_LOCAL_MEM_FENCE);
}
__kernel void with_goto(__global int* o) {
  barrier(CLK_LOCAL_MEM_FENCE);
  goto done;
  done: o[0] = 1;
}
__kernel void with_break(__global int* o, int m) {
  for (int i = 0; i < 4; ++i) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i == m) break;
  }
}
__kernel void with_continue(__global int* o, int m) {
  int i = 0;
  while (i < 4) {
    ++i;
    if (i == m) continue;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
void inner(void) { work_group_barrier(CLK_LOCAL_MEM_FENCE); }
void outer(void) { inner(); }
__kernel void in_helper(__global int* o) { outer(); }
__kernel void structured(__global int* o, int m) {
  for (int i = 0; i < m; ++i) {
    if (m > 2) { barrier(CLK_LOCAL_MEM_FENCE); }
    int k = 0;
    while (k < 2) { ++k; barrier(CLK_LOCAL_MEM_FENCE); }
    do { barrier(CLK_LOCAL_MEM_FENCE); } while (0);
    for (int j = 0; j < 3; ++j) { if (j == 1) break; }
  }
}
__kernel void loop_goto(__global int* o) {
  goto done;
  done: o[0] = 1;
}

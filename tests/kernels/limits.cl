// limits.cl: The largest work-group, 16-lane vectors of every width, a
// chain of helpers near the private memory limit (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void big_group(__global const int* in, __global int* out,
                        __local int* s) {
  int l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = get_local_size(0) / 2; k > 0; k /= 2) {
    if (l < k) s[l] += s[l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[get_global_id(0)] = s[0];
}
void group_step(void) { barrier(CLK_LOCAL_MEM_FENCE); }
__kernel void big_fibers(__global int* out, __local int* s) {
  int l = get_local_id(0), n = get_local_size(0);
  s[l] = l;
  group_step();
  out[get_global_id(0)] = s[n - 1 - l];
}
__kernel void wide(__global double* o, __global long* lo) {
  double16 d = (double16)(0.5);
  d.sF = 2.0; d.s0 = -1.0;
  double8 h = d.hi;
  o[0] = h.s7 + d.s0 + d.s7;
  long16 l = (long16)(1L << 40);
  long16 m = l * 3 + (long16)(1);
  lo[0] = m.sA;
  char16 c = (char16)(-1);
  uchar16 u = (uchar16)(200);
  lo[1] = c.s3 + u.sE;
}
// Helpers whose private arrays, with the kernel's, come near the limit
// for a kernel and the helpers it calls (16384 bytes), on fibers (the
// barrier in a helper): a work-item's stack of 64 KiB holds them.
int leaf(int n) {
  volatile int a[1000];
  for (int i = 0; i < 1000; ++i) a[i] = i + n;
  barrier(CLK_LOCAL_MEM_FENCE);
  return a[999];
}
int middle(int n) {
  volatile int a[1000];
  for (int i = 0; i < 1000; ++i) a[i] = i * n;
  return a[1] + leaf(n);
}
int outer(int n) {
  volatile int a[1000];
  for (int i = 0; i < 1000; ++i) a[i] = n - i;
  return a[0] + middle(n);
}
__kernel void deep(__global int* o) {
  volatile int a[1000];
  for (int i = 0; i < 1000; ++i) a[i] = i;
  int id = get_global_id(0);
  o[id] = a[id] + outer(id);
}

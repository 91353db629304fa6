// privates.cl: Private variables, shadowing and pointers to privates across
// barriers (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
void bump(int* p, int by) { *p += by; }
__kernel void privates(__global int* o, __local int* t) {
  int l = get_local_id(0), n = get_local_size(0);
  int x = l * 2;
  int acc;
  int a = l + 1, b = a * 3;
  int s = 0;
  for (int k = 0; k < 4; ++k) s += k * a;
  int addr = 5;
  bump(&addr, l);
  acc = l;
  t[l] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  { int x = 100; t[l] += x; }
  bump(&addr, 1000);
  barrier(CLK_LOCAL_MEM_FENCE);
  acc += t[(l + 1) % n];
  s *= 2;
  if (l == n - 1) return;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = t[l] + x + acc * 1000 + b * 100000 +
                        s * 10000000 + addr * 0 + (addr - 1005 == l);
}

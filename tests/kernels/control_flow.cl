// control_flow.cl: for, while, do, switch with fall-through, break, continue,
// comma expressions (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void flow(__global int* o) {
  int i = get_global_id(0), acc = 0;
  for (int k = 0; k < 10; ++k) {
    if (k == 2) continue;
    if (k == 7) break;
    acc += k;
  }
  int w = 0;
  while (1) { if (++w >= i % 5) break; }
  do { acc += 100; } while (0);
  switch (i % 4) {
    case 0: acc += 1000;
    case 1: acc += 1000; break;
    default: acc -= 1;
  }
  acc += (i & 1) ? 10000 : 20000;
  int x = 3, y = (x += 2, x * 2);
  acc += y * 100000 + w * 1000000;
  o[i] = acc;
}

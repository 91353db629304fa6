// control.cl: Barriers in loops and uniform branches, swapped __local
// pointers, private state across barriers (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void scan(__global const int* in, __global int* out,
                   __local int* a, __local int* b) {
  int l = get_local_id(0), n = get_local_size(0);
  __local int* src = a;
  __local int* dst = b;
  src[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < n; off *= 2) {
    dst[l] = l >= off ? src[l] + src[l - off] : src[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    __local int* tmp = src; src = dst; dst = tmp;
  }
  out[get_global_id(0)] = src[l];
}
__kernel void uniform_if(__global int* o, __local int* t, int mode) {
  int l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);
  t[l] = g;
  if (mode == 1 || get_group_id(0) % 2 == 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    o[g] = t[n - 1 - l];
  } else {
    barrier(CLK_LOCAL_MEM_FENCE);
    o[g] = t[(l + 1) % n] + 100000;
  }
}
__kernel void loops(__global const int* in, __global int* out,
                    __local int* s) {
  int l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  int k = get_local_size(0) / 2;
  while (k > 0) {
    if (l < k) s[l] = max(s[l], s[l + k]);
    barrier(CLK_LOCAL_MEM_FENCE);
    k >>= 1;
  }
  int rounds = 0;
  do {
    rounds++;
    barrier(CLK_LOCAL_MEM_FENCE);
  } while (rounds < 3);
  for (int outer = 0; outer < 2; ++outer) {
    for (int inner = 0; inner < 2; ++inner) {
      barrier(CLK_LOCAL_MEM_FENCE);
      rounds += outer + inner;
    }
  }
  out[get_global_id(0)] = s[0] * 100 + rounds;
}
__kernel void private_state(__global int* o, __local int* t) {
  int l = get_local_id(0);
  int priv[4];
  for (int k = 0; k < 4; ++k) priv[k] = l * 10 + k;
  int acc = l;
  float4 v = (float4)(l);
  t[l] = l;
  barrier(CLK_LOCAL_MEM_FENCE);
  acc += t[(l + 1) % get_local_size(0)];
  priv[2] += acc;
  v.y = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  t[l] = priv[3];
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = priv[0] + priv[1] + priv[2] + t[l] +
                        acc * 1000 + (int)(v.x + v.y) * 100000;
}

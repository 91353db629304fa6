// local_memory.cl: __local memory in every form: arrays of scalars and
// vectors in a kernel's body (in nested blocks too), several __local
// arguments of different types, one large argument (40 KiB, near what a
// GPU group may have without opting in to more), and pointer arithmetic
// on __local pointers.
// The runs and their expected outputs are in manifest.txt.
__kernel void forms(__global int* out, __local float4* vecs,
                    __local uchar* bytes, __local int* big, uint big_count) {
  int l = get_local_id(0), n = get_local_size(0);
  __local int ints[64];
  __local float4 tile[16];
  vecs[l] = (float4)(l, l * 2, l * 3, l * 4);
  bytes[l] = (uchar)(l * 37);
  for (uint k = l; k < big_count; k += n) big[k] = (int)k;
  if (l < 64) ints[l] = -l;
  if (l < 16) tile[l] = vecs[l] * 0.5f;
  barrier(CLK_LOCAL_MEM_FENCE);
  {
    __local short inner[8];
    if (l < 8) inner[l] = (short)(l * 1000);
    barrier(CLK_LOCAL_MEM_FENCE);
    __local int* p = big + big_count - 1;
    __local float4* q = vecs + (n - 1 - l);
    out[get_global_id(0)] = (int)(*q).y + bytes[(l + 1) % n] + p[-l] +
                            ints[l % 64] + (int)tile[l % 16].w +
                            inner[l % 8] + (int)(p - big);
  }
}

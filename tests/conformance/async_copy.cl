// async_copy.cl: OpenCL C 1.2 section 6.12.10 (async copies from global
// to local memory and back, and prefetch): async_work_group_copy both
// ways, async_work_group_strided_copy both ways (the stride applies to
// the __global side), wait_group_events on one and on several events,
// an event passed in to chain a second copy on the first, element types
// of several sizes (char, int, float4, long), copies of fewer and more
// elements than the group has work-items, and prefetch. Every work-item
// of a group calls each copy with the same arguments, as 6.12.10
// requires.
// The runs and their expected outputs are in manifest.txt.

// Global -> local of n elements (n may differ from the group's size),
// then every work-item reads the tile: out[g] = tile[l] + tile[n - 1 - l']
// where l' = l % n.
__kernel void to_local(__global const int* in, __global int* out,
                       __local int* tile, uint n) {
  size_t l = get_local_id(0), grp = get_group_id(0);
  event_t e = async_work_group_copy(tile, in + grp * n, n, 0);
  wait_group_events(1, &e);
  size_t k = l % n;
  out[get_global_id(0)] = tile[k] * 10 + tile[n - 1 - k];
}

// Local -> global: the group fills a __local array, then copies it out
// reversed through two copies chained by their event.
__kernel void to_global(__global int* out, __global char* bytes) {
  __local int tile[64];
  __local char chars[64];
  size_t l = get_local_id(0), n = get_local_size(0), grp = get_group_id(0);
  tile[l] = (int)(grp * 1000 + l * l);
  chars[l] = (char)(l * 3 - 20);
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t e = async_work_group_copy(out + grp * n, tile, n, 0);
  e = async_work_group_copy(bytes + grp * n, chars, n, e);  // the same event
  wait_group_events(1, &e);
}

// Strided: gather every stride-th element of the group's region into
// __local, transform it, scatter it back to every stride-th element of
// out (the other elements keep the sentinel).
__kernel void strided(__global const float* in, __global float* out,
                      __local float* tile, uint stride) {
  size_t l = get_local_id(0), n = get_local_size(0), grp = get_group_id(0);
  __global const float* src = in + grp * n * stride;
  event_t e = async_work_group_strided_copy(tile, src, n, stride, 0);
  wait_group_events(1, &e);
  float v = tile[l] * 2.0f + 1.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  tile[(l + 1) % n] = v;                       // rotated by one
  barrier(CLK_LOCAL_MEM_FENCE);
  e = async_work_group_strided_copy(out + grp * n * stride, tile, n, stride, 0);
  wait_group_events(1, &e);
}

// Vector and 64-bit elements, two copies waited for together, prefetch.
__kernel void vectors(__global const float4* a, __global const long* b,
                      __global float4* fo, __global long* lo) {
  __local float4 ta[32];
  __local long tb[32];
  size_t l = get_local_id(0), n = get_local_size(0), grp = get_group_id(0);
  prefetch(a + grp * n, n);
  prefetch(b + grp * n, n);
  event_t ev[2];
  ev[0] = async_work_group_copy(ta, a + grp * n, n, 0);
  ev[1] = async_work_group_copy(tb, b + grp * n, n, 0);
  wait_group_events(2, ev);
  size_t o = n - 1 - l;
  fo[grp * n + l] = ta[o] * (float4)(1.0f, -1.0f, 0.5f, 2.0f) + ta[l].wzyx;
  lo[grp * n + l] = tb[o] * 3 - tb[l];
}

// A copy smaller than the group: the first half of the tile comes from
// global memory, the second half is set by the work-items, and a copy of
// the whole tile goes back.
__kernel void partial(__global const int* in, __global int* out) {
  __local int tile[32];
  size_t l = get_local_id(0), n = get_local_size(0), grp = get_group_id(0);
  size_t h = n / 2;
  event_t e = async_work_group_copy(tile, in + grp * h, h, 0);
  wait_group_events(1, &e);
  if (l >= h) tile[l] = -(int)l;
  barrier(CLK_LOCAL_MEM_FENCE);
  e = async_work_group_copy(out + grp * n, tile, n, 0);
  wait_group_events(1, &e);
}

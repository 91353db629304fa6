// async_copy.cl: async_work_group_copy, async_work_group_strided_copy,
// wait_group_events and prefetch (OpenCL C 1.2 section 6.12.10). Every
// kernel reads what other work-items of its group copied, so a copy that
// is not cooperative, or a wait_group_events that is not a barrier, shows.
// The runs and their expected outputs are in manifest.txt.

// global -> __local, then each work-item reads its right neighbour's
// element: o[g] = in[base + (l + 1) % n] * 2 + l.
__kernel void to_local(__global const int* in, __global int* o,
                       __local int* tile) {
  size_t l = get_local_id(0), n = get_local_size(0);
  size_t base = get_group_id(0) * n;
  event_t none;  // an event not in use: the copy starts a new one
  event_t ev = async_work_group_copy(tile, in + base, n, none);
  wait_group_events(1, &ev);
  o[base + l] = tile[(l + 1) % n] * 2 + (int)l;
}

// A tile computed in __local memory, then copied out: o[base + i] =
// (base + n - 1 - i) * 3, each element written by another work-item.
__kernel void to_global(__global int* o) {
  __local int tile[64];
  size_t l = get_local_id(0), n = get_local_size(0);
  size_t base = get_group_id(0) * n;
  tile[n - 1 - l] = (int)(base + l) * 3;
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t none;
  event_t ev = async_work_group_copy(o + base, tile, n, none);
  wait_group_events(1, &ev);
}

// Strided both ways, stride 3. Group g gathers in[(g * n + i) * 3] into
// the tile (to __local: dst[i] = src[i * 3]), work-items negate their
// neighbours' elements, then the group scatters the tile to o[(g * n + i)
// * 3] (to __global: dst[i * 3] = src[i]); the other elements of o keep
// their sentinel.
__kernel void strided(__global const int* in, __global int* o) {
  __local int tile[32];
  __local int result[32];
  size_t l = get_local_id(0), n = get_local_size(0);
  size_t base = get_group_id(0) * n;
  event_t none;
  event_t gathered = async_work_group_strided_copy(tile, in + base * 3, n, 3,
                                                   none);
  wait_group_events(1, &gathered);
  result[l] = -tile[(l + n - 1) % n];
  barrier(CLK_LOCAL_MEM_FENCE);
  // An event passed in is the one returned: the copy joins it.
  event_t scattered =
      async_work_group_strided_copy(o + base * 3, result, n, 3, gathered);
  wait_group_events(1, &scattered);
}

// float4 elements, in a 2-D group, more elements than work-items: the
// group copies 2 * n vectors (n = 4 x 2 work-items), each work-item sums
// two of them that other work-items copied.
__kernel void vectors(__global const float4* in, __global float4* o) {
  __local float4 tile[16];
  size_t l = get_local_id(0) + get_local_size(0) * get_local_id(1);
  size_t n = get_local_size(0) * get_local_size(1);
  size_t g = get_group_id(0) + get_num_groups(0) * get_group_id(1);
  event_t none;
  event_t ev = async_work_group_copy(tile, in + g * 2 * n, 2 * n, none);
  wait_group_events(1, &ev);
  o[g * n + l] = tile[2 * n - 1 - l] + tile[(l + 3) % (2 * n)] * 10.0f;
}

// int elements with a count that is not a multiple of the group's size
// (8 work-items, 21 elements), and prefetch (a hint that does nothing):
// each work-item adds 1000 * (l + 1) to the elements l, l + 8 and l + 16
// of the tile, then two copies write the first 10 and the next 11 of each
// group's 32 elements of o; the last 11 keep their sentinel.
__kernel void partial(__global const int* in, __global int* o) {
  __local int tile[32];
  size_t l = get_local_id(0);
  size_t base = get_group_id(0) * 32;
  prefetch(in + base, 32);
  event_t none;
  event_t ev = async_work_group_copy(tile, in + base, 21, none);
  wait_group_events(1, &ev);
  for (size_t i = l; i < 21; i += 8) tile[i] += 1000 * (int)(l + 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t out[2] = {async_work_group_copy(o + base, tile, 10, none),
                    async_work_group_copy(o + base + 10, tile + 10, 11,
                                          none)};
  wait_group_events(2, out);
}

// Two copies waited for together: two halves of the input, one of them
// strided, into two tiles; each work-item adds elements of both that
// other work-items copied. o[g] = a[(l + 1) % n] + 100 * b[n - 1 - l].
__kernel void two_events(__global const int* a, __global const int* b,
                         __global int* o, __local int* ta) {
  __local int tb[16];
  size_t l = get_local_id(0), n = get_local_size(0);
  size_t base = get_group_id(0) * n;
  event_t none;
  event_t evs[2] = {async_work_group_copy(ta, a + base, n, none),
                    async_work_group_strided_copy(tb, b + base * 2, n, 2,
                                                  none)};
  wait_group_events(2, evs);
  o[base + l] = ta[(l + 1) % n] + 100 * tb[n - 1 - l];
}

// A helper that copies for the group: the copy is cooperative wherever
// it is called.
void load_tile(__local int* tile, __global const int* src, size_t n) {
  event_t none;
  event_t ev = async_work_group_copy(tile, src, n, none);
  wait_group_events(1, &ev);
}
__kernel void in_helper(__global const int* in, __global int* o,
                        __local int* tile) {
  size_t l = get_local_id(0), n = get_local_size(0);
  size_t base = get_group_id(0) * n;
  load_tile(tile, in + base, n);
  o[base + l] = tile[n - 1 - l];
}

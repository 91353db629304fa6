// work_items.cl: Every work-item function in 1, 2 and 3 dimensions with
// offsets, directly and from helpers, with and without barriers
// (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
#define FIELDS 29
#define RECORD(o) do { \
  size_t x = get_global_id(0) - get_global_offset(0); \
  size_t y = get_global_id(1) - get_global_offset(1); \
  size_t z = get_global_id(2) - get_global_offset(2); \
  __global ulong* r = (o) + ((z * get_global_size(1) + y) * \
                             get_global_size(0) + x) * FIELDS; \
  r[0] = get_work_dim(); \
  for (uint d = 0; d < 4; ++d) { \
    r[1 + 7 * d] = get_global_id(d); \
    r[2 + 7 * d] = get_local_id(d); \
    r[3 + 7 * d] = get_group_id(d); \
    r[4 + 7 * d] = get_global_size(d); \
    r[5 + 7 * d] = get_local_size(d); \
    r[6 + 7 * d] = get_num_groups(d); \
    r[7 + 7 * d] = get_global_offset(d); \
  } } while (0)
void record(__global ulong* o) { RECORD(o); }
size_t flat_local(void) {
  return (get_local_id(2) * get_local_size(1) + get_local_id(1)) *
         get_local_size(0) + get_local_id(0);
}
__kernel void loop_direct(__global ulong* o) { RECORD(o); }
__kernel void loop_helper(__global ulong* o) { record(o); }
__kernel void regions_direct(__global ulong* o, __local int* t) {
  size_t l = flat_local();
  t[l] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  RECORD(o);
}
__kernel void regions_helper(__global ulong* o, __local int* t) {
  t[flat_local()] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t[0] == 1) record(o);
}
void group_sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }
__kernel void fibers_helper(__global ulong* o, __local int* t) {
  t[flat_local()] = 1;
  group_sync();
  record(o);
}

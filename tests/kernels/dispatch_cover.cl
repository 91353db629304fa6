// dispatch_cover.cl: Every work-item of 1- to 3-D grids runs exactly once,
// with the group sizes the engine picks (check_dispatch.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void cover(__global int* hits, __global int* sizes) {
  size_t x = get_global_id(0), y = get_global_id(1),
         z = get_global_id(2);
  size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;
  atomic_inc(&hits[i]);
  if (i == 0) {
    sizes[0] = get_local_size(0); sizes[1] = get_local_size(1);
    sizes[2] = get_local_size(2);
  }
}
__kernel void cover_barrier(__global int* hits, __global int* sizes) {
  size_t x = get_global_id(0), y = get_global_id(1),
         z = get_global_id(2);
  size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&hits[i]);
  if (i == 0) {
    sizes[0] = get_local_size(0); sizes[1] = get_local_size(1);
    sizes[2] = get_local_size(2);
  }
}

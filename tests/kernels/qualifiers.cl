// qualifiers.cl: restrict, volatile, const, private, attributes, every barrier
// and fence form, atomic_xchg on float (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
__kernel __attribute__((vec_type_hint(float4)))
__attribute__((work_group_size_hint(16, 1, 1)))
void quals(__global float* restrict o, __global const float* restrict i,
           volatile __global float* fx) {
  __attribute__((aligned(16))) __local float tile[16];
  const int l = get_local_id(0);
  private float p = i[get_global_id(0)];
  tile[l] = p;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  read_mem_fence(CLK_LOCAL_MEM_FENCE);
  write_mem_fence(CLK_LOCAL_MEM_FENCE);
  if (get_global_id(0) == 0) fx[1] = atomic_xchg(&fx[0], 2.5f);
  o[get_global_id(0)] = tile[15 - l];
}

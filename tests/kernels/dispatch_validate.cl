// dispatch_validate.cl: The kernels dispatch validation runs: saxpy, __local
// arguments, a fixed group size, vector arguments, no arguments
// (check_dispatch.c).
// The runs and their expected outputs are in manifest.txt.
__kernel void saxpy(__global const float* x, __global float* y,
                    float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void with_local(__global int* o, __local int* t) {
  t[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = t[0];
}
__kernel __attribute__((reqd_work_group_size(8, 2, 1)))
void fixed(__global int* o) { o[0] = 1; }
__kernel void vec4(__global float4* v, int4 k) {
  v[get_global_id(0)] += (float4)(k.x);
}
__kernel void none(void) {}

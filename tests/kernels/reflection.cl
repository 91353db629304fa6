// reflection.cl: Kernels whose arguments reflection describes, void* and every
// scalar type among them (check_program.c).
// The runs and their expected outputs are in manifest.txt.
typedef float real;
float twice(float x) { return 2.0f * x; }
__kernel void first(__global const float* in, __global real* out,
                    uint n, float4 scale, __constant int* table,
                    __local float* scratch) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = twice(in[i]) * scale.x + table[0];
  scratch[0] = 0.0f;
}
kernel void second(global void* any, char c, uchar uc, short s,
                   ushort us, int x, unsigned int ux, long l,
                   ulong ul, double d, unsigned long ul2,
                   global int4* v4, const global double2* d2) {}
__kernel __attribute__((reqd_work_group_size(8, 4, 1)))
void third(__global int* out) {
  __local int tile[8][4];
  tile[get_local_id(0)][get_local_id(1)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[0][0];
}

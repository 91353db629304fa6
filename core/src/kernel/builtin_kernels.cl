// builtin_kernels.cl: the kernels the library ships, in the kernel
// language, built for each device on first use (dc/builtins.h).
// Element-wise kernels take the element count, so any grid that covers it
// works; work-items past the end do nothing.

__kernel void add(__global const float* a, __global const float* b,
                  __global float* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = a[i] + b[i];
}

__kernel void mul(__global const float* a, __global const float* b,
                  __global float* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = a[i] * b[i];
}

__kernel void relu(__global const float* in, __global float* out, uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

__kernel void sigmoid(__global const float* in, __global float* out,
                      uint n) {
  size_t i = get_global_id(0);
  if (i < n) out[i] = 1.0f / (1.0f + exp(-in[i]));
}

// C (m x n) = A (m x k) * B (k x n), row-major. Each 16x16 work-group
// computes a tile of C, staging 16x16 tiles of A and B in local memory.
// The grid is (n, m) rounded up to multiples of 16. Indices are ints and
// the edge guards use `&` rather than `&&`, so that the CPU compiler turns
// the guarded loads into masked vector loads instead of branches.
#define TILE 16
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul(__global const float* A, __global const float* B,
            __global float* C, uint m, uint n, uint k) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int M = (int)m, N = (int)n, K = (int)k;
  int lx = get_local_id(0), ly = get_local_id(1);
  int col = get_global_id(0), row = get_global_id(1);
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ly][lx] = (row < M) & (t + lx < K) ? A[row * K + t + lx] : 0.0f;
    Bs[ly][lx] = (t + ly < K) & (col < N) ? B[(t + ly) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TILE; ++i) acc += As[ly][i] * Bs[i][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if ((row < M) & (col < N)) C[row * N + col] = acc;
}

// Sums each work-group's slice of |in| (n elements) into partial[group],
// with a tree reduction in local memory; |scratch| holds one float per
// work-item.
__kernel void sum(__global const float* in, __global float* partial, uint n,
                  __local float* scratch) {
  size_t i = get_global_id(0);
  uint lid = get_local_id(0), size = get_local_size(0);
  scratch[lid] = i < n ? in[i] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = size / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = scratch[0];
}

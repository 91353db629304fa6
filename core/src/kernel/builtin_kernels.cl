// builtin_kernels.cl: the kernels the library ships, in the kernel
// language, built for each device on first use (dc/builtins.h).
// Element-wise kernels take the element count n. Work-item i does the
// four elements from 4 i (vload4/vstore4: one 16-byte access each where
// the buffers are aligned, which is what lets a GPU stream them at its
// copy bandwidth), the last one the 1 to 3 left over; so a 1-D grid of
// ceil(n / 4) covers n, and work-items past the end do nothing (a grid
// of n, as these kernels once needed, still works).

__kernel void add(__global const float* a, __global const float* b,
                  __global float* out, uint n) {
  size_t i = get_global_id(0);
  size_t first = i * 4;
  if (first + 4 <= n) {
    vstore4(vload4(i, a) + vload4(i, b), i, out);
  } else {
    for (size_t j = first; j < n; ++j) out[j] = a[j] + b[j];
  }
}

__kernel void mul(__global const float* a, __global const float* b,
                  __global float* out, uint n) {
  size_t i = get_global_id(0);
  size_t first = i * 4;
  if (first + 4 <= n) {
    vstore4(vload4(i, a) * vload4(i, b), i, out);
  } else {
    for (size_t j = first; j < n; ++j) out[j] = a[j] * b[j];
  }
}

__kernel void relu(__global const float* in, __global float* out, uint n) {
  size_t i = get_global_id(0);
  size_t first = i * 4;
  if (first + 4 <= n) {
    vstore4(fmax(vload4(i, in), (float4)(0.0f)), i, out);
  } else {
    for (size_t j = first; j < n; ++j) out[j] = in[j] > 0.0f ? in[j] : 0.0f;
  }
}

__kernel void sigmoid(__global const float* in, __global float* out,
                      uint n) {
  size_t i = get_global_id(0);
  size_t first = i * 4;
  if (first + 4 <= n) {
    vstore4(1.0f / (1.0f + exp(-vload4(i, in))), i, out);
  } else {
    for (size_t j = first; j < n; ++j) out[j] = 1.0f / (1.0f + exp(-in[j]));
  }
}

// C (m x n) = A (m x k) * B (k x n), row-major. Each 16x4 work-group
// computes a 16x16 tile of C, staging 16x16 tiles of A and B in local
// memory; each work-item keeps 4 rows of its column in registers, so one
// load of B feeds 4 multiply-adds. The grid is (n, m / 4), both rounded
// up to the group size. Indices are ints and the edge guards use `&`
// rather than `&&`, so that the CPU compiler turns the guarded loads into
// masked vector loads instead of branches.
#define TILE 16
#define ROWS 4             // rows of C per work-item
#define STRIDE (TILE / ROWS) // between a work-item's rows
__kernel __attribute__((reqd_work_group_size(TILE, TILE / ROWS, 1)))
void matmul(__global const float* A, __global const float* B,
            __global float* C, uint m, uint n, uint k) {
  __local float As[TILE][TILE];
  __local float Bs[TILE][TILE];
  int M = (int)m, N = (int)n, K = (int)k;
  int lx = get_local_id(0), ly = get_local_id(1);
  int col = get_global_id(0);
  int row = get_group_id(1) * TILE + ly;  // then row + STRIDE, ...
  float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    for (int r = 0; r < ROWS; ++r) {
      int y = ly + r * STRIDE;
      As[y][lx] = (row + r * STRIDE < M) & (t + lx < K)
                      ? A[(row + r * STRIDE) * K + t + lx] : 0.0f;
      Bs[y][lx] = (t + y < K) & (col < N) ? B[(t + y) * N + col] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < TILE; ++i) {
      float b = Bs[i][lx];
      acc0 += As[ly][i] * b;
      acc1 += As[ly + STRIDE][i] * b;
      acc2 += As[ly + 2 * STRIDE][i] * b;
      acc3 += As[ly + 3 * STRIDE][i] * b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (col < N) {
    if (row < M) C[row * N + col] = acc0;
    if (row + STRIDE < M) C[(row + STRIDE) * N + col] = acc1;
    if (row + 2 * STRIDE < M) C[(row + 2 * STRIDE) * N + col] = acc2;
    if (row + 3 * STRIDE < M) C[(row + 3 * STRIDE) * N + col] = acc3;
  }
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

// matmul_tiled.cl: A tiled matrix product with 2-D __local tiles and barriers
// (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
#define T 16
__kernel void matmul(__global const float* A, __global const float* B,
                     __global float* C, int M, int N, int K) {
  __local float As[T][T];
  __local float Bs[T][T];
  int tx = get_local_id(0), ty = get_local_id(1);
  int col = get_global_id(0), row = get_global_id(1);
  float acc = 0.0f;
  for (int t = 0; t < K; t += T) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

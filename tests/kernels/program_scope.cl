// program_scope.cl: __constant tables and vectors, typedefs, helpers
// (calling each other), macros and -D (check_kernel_lang.c).
// The runs and their expected outputs are in manifest.txt.
#define N 8
#define SQR(x) ((x) * (x))
typedef float real;
typedef int4 ivec;
typedef unsigned int count_t;
__constant real kWeights[N] = {1, 2, 3, 4, 5, 6, 7, 8};
__constant int kOffsets[2][2] = {{1, 2}, {3, 4}};
__constant real kScale = 0.5f;
constant float4 kVec = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
__constant int4 kQuad[2] = {(int4)(1, 2, 3, 4), (int4)(7)};
int fact(int n) { int r = 1; for (; n > 1; --n) r *= n; return r; }
int fib(int n) {
  int a = 0, b = 1;
  for (; n > 0; --n) { int t = a + b; a = b; b = t; }
  return a;
}
int id_twice(void) { return 2 * (int)get_global_id(0); }
int via(int x) { return x + id_twice() - 2 * (int)get_global_id(0); }
void store(__global real* o, real v) { o[get_global_id(0)] = v; }
real weight(count_t i) { return kWeights[i % N] * kScale; }
__kernel void tables(__global real* out, __constant int* extra,
                     __global int* ints) {
  count_t i = get_global_id(0);
  ivec v = (int4)(kOffsets[0][0], kOffsets[0][1], kOffsets[1][0],
                  kOffsets[1][1]);
  store(out, weight(i) + SQR(v.w) + extra[i % 3] + BIAS + kVec.z +
             kQuad[1].y + kQuad[0].w);
  ints[i] = via(fact(i % 8) + fib(i % 10) * 100000);
}

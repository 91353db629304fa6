// helpers.cl: helper functions in every role: declared before they are
// defined, returning vectors, taking __global, __local, __constant and
// private pointers, calling each other and reading work-item functions
// (not recursing: OpenCL C forbids it).
// The runs and their expected outputs are in manifest.txt.
__constant int kPrimes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
int gcd(int a, int b);
float4 spread(float x) { return (float4)(x, x + 1.0f, x + 2.0f, x + 3.0f); }
int gcd(int a, int b) {
  while (b != 0) {
    int r = a % b;
    a = b;
    b = r;
  }
  return a;
}
int prime(__constant int* table, int k) { return table[k % 8]; }
void accumulate(int* acc, int v) { *acc += v; }
size_t my_id(void) { return get_global_id(0) - get_global_offset(0); }
int neighbour(__local int* t) {
  return t[(get_local_id(0) + 1) % get_local_size(0)];
}
void publish(__local int* t, __global const int* in) {
  t[get_local_id(0)] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
}
__kernel void helpers(__global const int* in, __global int* out,
                      __local int* t) {
  int acc = 0;
  publish(t, in);
  accumulate(&acc, neighbour(t));
  accumulate(&acc, gcd(in[get_global_id(0)], 36) * 1000);
  accumulate(&acc, prime(kPrimes, (int)my_id()) * 100000);
  float4 s = spread((float)get_local_id(0));
  out[get_global_id(0)] = acc + (int)(s.w * 10000000.0f);
}

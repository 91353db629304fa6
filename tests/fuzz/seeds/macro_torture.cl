// macro_torture.cl: #, ##, variadic macros, empty arguments, painted
// names, #if arithmetic and pragmas.
#define CAT(a, b) a ## b
#define XCAT(a, b) CAT(a, b)
#define STR(x) #x
#define XSTR(x) STR(x)
#define V(fmt, ...) fmt __VA_ARGS__
#define self self
#define f(a) a * g
#define g(a) f(a)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT ON
#if defined(cl_khr_fp64) && (INT_MIN < 0) && !defined NOPE && (1 ? 2 : 3) == 2
#define HAVE 1
#elif 0
#error never
#else
#endif
__kernel void k(__global int* o, __global float* f) {
  int XCAT(va, r) = CAT(, 3) + CAT(4, ) + V(5) V(6, +7);
  o[0] = var + sizeof(XSTR(__LINE__ "q\"\\")) + HAVE;
  int self = 1, g = 1;
  o[1] = f(2)(9) + self;
  #pragma unroll 4
  for (int i = 0; i < 8; ++i) o[2] += i;
  #pragma nounroll
  for (int i = 0; i < 8; ++i) o[3] += i;
  f[0] = FLT_MAX + FLT_EPSILON + M_PI_F + 0x1.8p1f;
}

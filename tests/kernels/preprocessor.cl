// preprocessor.cl: The preprocessor: macros, ##, #, variadic macros, #if
// arithmetic, predefined macros, #line (check_program.c).
// The runs and their expected outputs are in manifest.txt.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define SQUARE(x) ((x) * (x))
#define SUM(...) sum_of(__VA_ARGS__)
#define GLUE(a, b) a##b
#define STR(a) #a
#define GONE 1
#undef GONE
#define LEVEL 2
int sum_of(int a, int b, int c) { return a + b + c; }
__kernel void k(__global int* o) {
  int GLUE(my, var) = 5;
  o[0] = SQUARE(myvar + 1);
  o[1] = SUM(1, 2, 3);
  o[2] = sizeof(STR(hello));
#if defined(GONE) || defined GONE
  o[3] = -1;
#elif LEVEL == 1
  o[3] = 1;
#elif LEVEL * 2 == 4 && !defined(NOPE)
  o[3] = 2;
#else
  o[3] = 3;
#endif
  o[4] = __LINE__;
  o[5] = __OPENCL_VERSION__ + __OPENCL_C_VERSION__;
  o[6] = CL_VERSION_1_0 + CL_VERSION_1_1 + CL_VERSION_1_2;
  o[7] = __ENDIAN_LITTLE__ + 10 * __DCLUA__;
#line 500
  o[8] = sizeof(__FILE__); o[9] = __LINE__;
#if 0
#error not taken
#include <never.h>
#endif
}

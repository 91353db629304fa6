// check_kernel_sema.c: the semantic analysis of kernel expressions,
// through the public API: programs that OpenCL C 1.2 accepts compile
// (conversions, vectors, swizzles, pointer arithmetic, structs,
// initialisers), and each construct it rejects (or that the kernel
// language refuses because kernels are a trust boundary) fails with
// DC_ERR_COMPILE and a message at the user's own line and column.
// SPDX-License-Identifier: MIT
#include "kernel_fixture.h"

//===-- Helpers (the fixture is kernel_fixture.h's) ---------------------===//

// Asserts that building |marked| (the mark removed) with |options| fails
// with DC_ERR_COMPILE, that the first error is at the mark ("sema.cl:L:C:
// error: ") and that it says |message|.
static void expect_error_with(const char* marked, const char* options,
                              const char* message) {
  dc_test_expect_error_at("sema.cl", marked, options, message);
}

static void expect_error(const char* marked, const char* message) {
  expect_error_with(marked, NULL, message);
}

// Asserts that |source| compiles on the CPU.
static void expect_compiles(const char* name, const char* source) {
  dc_program_t* p = build(name, source, NULL);
  dc_program_release(p);
}

//===-- core: what compiles ---------------------------------------------===//

// Integer and floating constants, the usual arithmetic conversions, casts
// and constant expressions where the language needs one.
START_TEST(test_kernel_sema_conversions_compile) {
  expect_compiles(
      "conversions.cl",
      "#define N (sizeof(float4) / sizeof(float))\n"
      "__kernel void k(__global float* f, __global long* l,\n"
      "                __global uint* u, int n) {\n"
      "  float tmp[N * 2 + (1 << 2) - 4];\n"
      "  char c = 'a'; uchar uc = '\\xff'; short sh = -3;\n"
      "  tmp[0] = c + uc * sh + 1.5f;\n"
      "  tmp[1] = 0x1.8p1f + 1e-3f + .5f + 2.f;\n"
      "  f[0] = tmp[0] + tmp[1] + (float)(n / 2) + 07;\n"
      "  l[0] = 0xFFFFFFFF + 2147483648 + 10l + 10ul + 10u;\n"
      "  u[0] = (uint)-1 >> 1;\n"
      "  size_t i = get_global_id(0);\n"
      "  u[1] = i < n ? (uint)i : 0u;\n"
      "  double d = 1.0 / 3; f[1] = (float)d;\n"
      "  bool b = n; u[2] = b + !n + ~n;\n"
      "  int m = 7; m += 2.5f; m <<= 1; m %= 5; u[3] = m;\n"
      "  switch (n) { case 1 + 2: break; case 'x': break; default: break; }\n"
      "  u[4] = sizeof(float8) + sizeof(long) * sizeof(uchar4);\n"
      "  u[5] = (n, 3);\n"
      "  u[6] = CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE;\n"
      "}\n");
}
END_TEST

// Vector literals, swizzles (also as lvalues), .lo/.hi/.even/.odd,
// vector-scalar arithmetic (the scalar converted and repeated),
// comparisons to masks. (Vector literals with vector parts, a vector
// condition in '?:' and '!' of a vector are analysed too, but the
// token-based CPU generator cannot emit them yet.)
START_TEST(test_kernel_sema_vectors_compile) {
  expect_compiles(
      "vectors.cl",
      "__kernel void k(__global float4* out, __global int4* masks,\n"
      "                float4 arg) {\n"
      "  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
      "  float4 b = (float4)(1, 2, 3.0, 'a');\n"
      "  float4 c = (float4)(0.5f), d = (float4)(2);\n"
      "  float4 e = { 1, 2, 3, 4 };\n"
      "  float2 lo = a.lo, hi = a.hi, ev = a.even, od = a.odd;\n"
      "  float8 w = (float8)(1, 2, 3, 4, 5, 6, 7, 8);\n"
      "  a.x = hi.y; a.s2 = 5; a.w += 1.0f; b.z = w.s7 + lo.x + ev.y;\n"
      "  float4 r = a * 2 + b / c - d * 0.5f + e + arg.wzyx;\n"
      "  r += od.x * (float4)(3);\n"
      "  int4 m = a < b;\n"
      "  uchar4 uc = (uchar4)(250, 5, 128, 0) + (uchar4)(10);\n"
      "  int4 bits = (m & 6) | (m << 4) | (int4)(uc.x) | -m;\n"
      "  out[get_global_id(0)] = r + convert_float4(bits);\n"
      "  masks[0] = (a == b) + ~bits + (w.lo >= w.hi);\n"
      "}\n");
}
END_TEST

// Pointer arithmetic and comparisons, &local_array[i], void* and const
// conversions, null pointers, casts between pointers of one space.
START_TEST(test_kernel_sema_pointers_compile) {
  expect_compiles(
      "pointers.cl",
      "float sum(__global const float* p, int n) {\n"
      "  float s = 0.0f;\n"
      "  for (__global const float* q = p; q < p + n; ++q) s += *q;\n"
      "  return s;\n"
      "}\n"
      "__kernel void k(__global float* out, __local float* scratch,\n"
      "                __constant int* table) {\n"
      "  __local float tile[16];\n"
      "  size_t i = get_local_id(0);\n"
      "  __local float* t = &tile[i % 16];\n"
      "  *t = table[0];\n"
      "  scratch[i] = tile[15 - i % 16];\n"
      "  __global float* end = out + 4;\n"
      "  ptrdiff_t n = end - out;\n"
      "  __global void* any = out;\n"
      "  __global float* back = any;\n"
      "  __global int* bits = (__global int*)out;\n"
      "  float x = 1.0f; float* px = &x; *px += 1.0f;\n"
      "  if (back != NULL && out != 0 && !(end == out)) out[n] = sum(out, 4);\n"
      "  bits[1] = (int)(back == out) + *px;\n"
      "  __global float* none = 0;\n"
      "  out[2] = none ? 1.0f : 2.0f;\n"
      "}\n");
}
END_TEST

// Structs and unions: members through values and pointers, initialisers
// with nested braces, elided braces and designators.
START_TEST(test_kernel_sema_structs_compile) {
  expect_compiles(
      "structs.cl",
      "typedef struct pair { int a; float b; } pair_t;\n"
      "union bits { float f; uint u; };\n"
      "__constant pair_t kPairs[] = { {1, 2.0f}, {3, 4.0f}, [3] = {.b = 1} };\n"
      "float twice(struct pair p) { return 2.0f * p.b + p.a; }\n"
      "__kernel void k(__global struct pair* ps, __global float* out) {\n"
      "  pair_t p = { 1, 2.5f };\n"
      "  struct pair q = { .b = 1.0f, .a = 2 };\n"
      "  struct pair arr[2] = { 1, 2.0f, 3, 4.0f };\n"
      "  union bits u = { 1.0f };\n"
      "  ps->a = p.a + q.a + arr[1].a + kPairs[0].a;\n"
      "  ps[1] = p;\n"
      "  out[0] = twice(*ps) + (u.u != 0) + kPairs[3].b;\n"
      "  int grid[2][3] = { {1, 2, 3}, {4, 5, 6} };\n"
      "  int flat[][2] = { 1, 2, 3 };\n"
      "  out[1] = grid[1][2] + flat[1][0];\n"
      "}\n");
}
END_TEST

// Dropping const from a pointed-to type is a warning, as in clang; the
// program still builds and the log says why.
START_TEST(test_kernel_sema_discarding_const_warns) {
  dc_program_t* p = build(
      "warn.cl",
      "__kernel void k(__global const float* in, __global float* out) {\n"
      "  __global float* w = in;\n"
      "  out[0] = w[0];\n"
      "}\n",
      NULL);
  DC_CK_STR_HAS(dc_program_build_log(p), "warn.cl:2:23: warning: ");
  DC_CK_STR_HAS(dc_program_build_log(p), "discards the 'const' qualifier");
  dc_program_release(p);
}
END_TEST

//===-- errors: names ---------------------------------------------------===//

START_TEST(test_kernel_sema_undeclared_identifier) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  o[0] = `y + 1;\n"
               "}\n",
               "use of undeclared identifier 'y'");
}
END_TEST

// No name a program does not declare reaches the C compiler: a call of
// the C library or a compiler built-in is an error, not passed through.
START_TEST(test_kernel_sema_call_to_system) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  o[0] = 1;\n"
               "  `system(\"rm -rf /\");\n"
               "}\n",
               "call to undeclared function 'system'");
}
END_TEST

START_TEST(test_kernel_sema_call_to_compiler_builtin) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  if (o[0]) `__builtin_trap();\n"
               "}\n",
               "call to undeclared function '__builtin_trap'");
}
END_TEST

START_TEST(test_kernel_sema_builtin_not_called) {
  expect_error("__kernel void k(__global float* o) {\n"
               "  o[0] = `sin + 1;\n"
               "}\n",
               "built-in function 'sin' must be called");
}
END_TEST

START_TEST(test_kernel_sema_kernel_calls_kernel) {
  expect_error("__kernel void a(__global int* o) { o[0] = 1; }\n"
               "__kernel void b(__global int* o) {\n"
               "  `a(o);\n"
               "}\n",
               "a kernel cannot call another kernel");
}
END_TEST

START_TEST(test_kernel_sema_too_many_arguments) {
  expect_error("int add(int x, int y) { return x + y; }\n"
               "__kernel void k(__global int* o) {\n"
               "  o[0] = `add(1, 2, 3);\n"
               "}\n",
               "too many arguments to 'add' (expects 2, got 3)");
}
END_TEST

//===-- errors: recursion -----------------------------------------------===//

// OpenCL C 1.2 6.9 forbids recursion, and a work-item's stack could not
// bound it: the call that closes a cycle is the error, naming the cycle.
START_TEST(test_kernel_sema_direct_recursion) {
  expect_error("int f(int n) {\n"
               "  return n > 0 ? n + `f(n - 1) : 0;\n"
               "}\n"
               "__kernel void k(__global int* o) { o[0] = f(o[1]); }\n",
               "recursion is not allowed in OpenCL C (f calls f)");
}
END_TEST

// Through a prototype: 'even' calls 'odd' before its body is read.
START_TEST(test_kernel_sema_mutual_recursion) {
  expect_error("int odd(int n);\n"
               "int even(int n) { return n == 0 ? 1 : odd(n - 1); }\n"
               "int odd(int n) { return n == 0 ? 0 : `even(n - 1); }\n"
               "__kernel void k(__global int* o) { o[0] = even(o[1]); }\n",
               "recursion is not allowed in OpenCL C (even calls odd calls "
               "even)");
}
END_TEST

START_TEST(test_kernel_sema_recursion_through_three_functions) {
  expect_error("int b(int n);\n"
               "int c(int n);\n"
               "int a(int n) { return n + b(n); }\n"
               "int b(int n) { return n * c(n - 1); }\n"
               "int c(int n) {\n"
               "  if (n < 2) return 1;\n"
               "  return `a(n / 2);\n"
               "}\n"
               "__kernel void k(__global int* o) { o[0] = a(o[1]); }\n",
               "recursion is not allowed in OpenCL C (a calls b calls c "
               "calls a)");
}
END_TEST

// A chain of 2,000 helpers, each calling the one before, is no cycle;
// the check walks it without recursing itself.
// 200 levels of helpers compile; each level counts a call frame
// (DC_LIMIT_CALL_FRAME_BYTES), so 300 are over the private memory limit.
START_TEST(test_kernel_sema_deep_call_chain_compiles) {
  enum { kDepth = 200 };
  char* source = malloc(kDepth * 64 + 128);
  ck_assert_ptr_nonnull(source);
  char* p = source + sprintf(source, "int f0(int x) { return x + 1; }\n");
  for (int i = 1; i < kDepth; ++i) {
    p += sprintf(p, "int f%d(int x) { return f%d(x) + 1; }\n", i, i - 1);
  }
  sprintf(p, "__kernel void k(__global int* o) { o[0] = f%d(o[1]); }\n",
          kDepth - 1);
  expect_compiles("chain.cl", source);
  free(source);
}
END_TEST

// C would go on inside the member a designator chain reached; the front
// end asks for a designator instead of guessing.
START_TEST(test_kernel_sema_element_after_designator_chain) {
  expect_error("typedef struct { int a; int b; } in_t;\n"
               "typedef struct { in_t i; int c; } out_t;\n"
               "__kernel void k(__global int* o) {\n"
               "  out_t x = { .i.a = 1, `2 };\n"
               "  o[0] = x.c;\n"
               "}\n",
               "after a designator such as '.a.b = ...', the next element "
               "needs a designator of its own");
}
END_TEST

// A string literal initialises an array of char or uchar only, and must
// fit it (its NUL may be left out when it does not).
START_TEST(test_kernel_sema_string_initialisers) {
  expect_compiles("str.cl",
                  "__constant char kWord[5] = \"hello\";\n"
                  "__constant uchar kEsc[] = \"a\\n\\x41\" \"z\";\n"
                  "__kernel void k(__global int* o) {\n"
                  "  char t[8] = \"hi\";\n"
                  "  o[0] = kWord[4] + kEsc[2] + t[1] + (int)sizeof(kEsc);\n"
                  "}\n");
  expect_error("__constant char kWord[4] = `\"hello\";\n"
               "__kernel void k(__global int* o) { o[0] = kWord[0]; }\n",
               "the string has 5 characters, more than '__constant char[4]' "
               "holds");
  expect_error("__constant int kWide[4] = `\"abc\";\n"
               "__kernel void k(__global int* o) { o[0] = kWide[0]; }\n",
               "a string literal initialises an array of char or uchar");
}
END_TEST

//===-- errors: built-ins -----------------------------------------------===//

START_TEST(test_kernel_sema_get_global_id_without_argument) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  o[`get_global_id()] = 1;\n"
               "}\n",
               "get_global_id");
}
END_TEST

START_TEST(test_kernel_sema_vstore_of_a_scalar) {
  expect_error("__kernel void k(__global float* o) {\n"
               "  `vstore4(1.0f, 0, o);\n"
               "}\n",
               "vstore4");
}
END_TEST

START_TEST(test_kernel_sema_mul_hi_of_a_pointer) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  o[0] = `mul_hi(1, o);\n"
               "}\n",
               "mul_hi");
}
END_TEST

//===-- errors: literals ------------------------------------------------===//

START_TEST(test_kernel_sema_string_literal) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  o[0] = `\"abc\"[0];\n"
               "}\n",
               "string literals are not supported in kernels");
}
END_TEST

START_TEST(test_kernel_sema_long_long_suffix) {
  expect_error("__kernel void k(__global long* o) {\n"
               "  o[0] = `1ll << 40;\n"
               "}\n",
               "long long");
}
END_TEST

START_TEST(test_kernel_sema_half_constant) {
  expect_error("__kernel void k(__global float* o) {\n"
               "  o[0] = `1.5h;\n"
               "}\n",
               "half is not supported");
}
END_TEST

START_TEST(test_kernel_sema_constant_division_by_zero) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  o[0] = o[1] / `0;\n"
               "}\n",
               "division by zero");
}
END_TEST

//===-- errors: pointers ------------------------------------------------===//

// No integer ever becomes a pointer, even by an explicit cast: a kernel
// must not forge an address.
START_TEST(test_kernel_sema_int_to_pointer_cast) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  __global int* p = `(__global int*)0x1000;\n"
               "  p[0] = 1;\n"
               "}\n",
               "cannot convert an integer to a pointer");
}
END_TEST

START_TEST(test_kernel_sema_int_to_pointer_implicit) {
  expect_error("__kernel void k(__global int* o, long a) {\n"
               "  __global int* p = `a;\n"
               "  p[0] = 1;\n"
               "}\n",
               "cannot convert an integer to a pointer");
}
END_TEST

START_TEST(test_kernel_sema_address_space_mismatch) {
  expect_error("__kernel void k(__global float* o) {\n"
               "  __local float* l = `o;\n"
               "  l[0] = 1.0f;\n"
               "}\n",
               "cannot convert '__global float*' to '__local float*'");
}
END_TEST

START_TEST(test_kernel_sema_address_space_cast) {
  expect_error("__kernel void k(__global float* o, __local float* l) {\n"
               "  (`(__global float*)l)[0] = 1.0f;\n"
               "}\n",
               "cannot cast '__local float*' to '__global float*'");
}
END_TEST

START_TEST(test_kernel_sema_constant_index_out_of_bounds) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  int a[4] = {1, 2, 3, 4};\n"
               "  o[0] = a[`4];\n"
               "}\n",
               "index 4 is outside 'int[4]'");
}
END_TEST

//===-- errors: vectors -------------------------------------------------===//

START_TEST(test_kernel_sema_mixed_vector_types) {
  expect_error("__kernel void k(__global float4* o) {\n"
               "  float4 a = (float4)(1.0f);\n"
               "  int4 b = (int4)(1);\n"
               "  o[0] = a `+ b;\n"
               "}\n",
               "cannot mix float4 and int4 in '+': convert one with "
               "convert_float4()");
}
END_TEST

START_TEST(test_kernel_sema_vector_cast) {
  expect_error("__kernel void k(__global int4* o, float4 v) {\n"
               "  o[0] = `(int4)v;\n"
               "}\n",
               "use convert_int4() or as_int4()");
}
END_TEST

START_TEST(test_kernel_sema_swizzle_out_of_range) {
  expect_error("__kernel void k(__global float* o) {\n"
               "  float2 v = (float2)(1.0f, 2.0f);\n"
               "  o[0] = v.`z;\n"
               "}\n",
               "'.z' is out of range for float2");
}
END_TEST

// A 3-component vector has x, y, z and s0-s2 (OpenCL C 6.1.7), though it
// takes the room of four; .w and .s3 are errors at the selector.
START_TEST(test_kernel_sema_three_component_selectors) {
  expect_error("__kernel void k(__global float* o) {\n"
               "  float3 v = (float3)(1.0f, 2.0f, 3.0f);\n"
               "  o[0] = v.`w;\n"
               "}\n",
               "'.w' is out of range for float3, which has 3 components "
               "(x, y, z)");
  expect_error("__kernel void k(__global int* o, int3 v) {\n"
               "  o[0] = v.x + v.`s3;\n"
               "}\n",
               "'.s3' is out of range for int3, which has 3 components "
               "(s0-s2)");
  expect_error("__kernel void k(__global float* o, float3 v) {\n"
               "  float4 w = v.`xyzw;\n"
               "}\n",
               "'.xyzw' is out of range for float3");
  expect_error("__kernel void k(__global float4* o) {\n"
               "  o[0] = `(float3)(1.0f, 2.0f);\n"
               "}\n",
               "has 2 components, but float3 has 3");
  expect_error("__kernel void k(__global float4* o, float3 v) {\n"
               "  o[0] = v `+ (float4)(1.0f);\n"
               "}\n",
               "cannot mix float3 and float4 in '+'");
  expect_error("__kernel void k(__global float* o, float4 v) {\n"
               "  o[0] = `vload3(0, v);\n"
               "}\n",
               "no overload of 'vload3'");
  expect_error("__kernel void k(__global float* o, float4 v) {\n"
               "  `vstore3(v, 0, o);\n"
               "}\n",
               "no overload of 'vstore3'");
  expect_error("__kernel void k(__global int* o, float3 v) {\n"
               "  int4 i = `convert_int4(v);\n"
               "}\n",
               "no overload of 'convert_int4'");
  expect_error("__kernel void k(__global int* o, float3 v) {\n"
               "  int2 i = `as_int2(v);\n"
               "}\n",
               "one scalar or vector of 8 bytes");
}
END_TEST

START_TEST(test_kernel_sema_vector_member_that_is_no_component) {
  expect_error("__kernel void k(__global float* o, float4 v) {\n"
               "  o[0] = v.`length;\n"
               "}\n",
               "'length' is not a component of float4");
}
END_TEST

START_TEST(test_kernel_sema_vector_literal_of_wrong_width) {
  expect_error("__kernel void k(__global float4* o) {\n"
               "  o[0] = `(float4)(1.0f, 2.0f, 3.0f);\n"
               "}\n",
               "has 3 components, but float4 has 4");
}
END_TEST

START_TEST(test_kernel_sema_vector_condition) {
  expect_error("__kernel void k(__global float* o, float4 v) {\n"
               "  if (`v) o[0] = 1.0f;\n"
               "}\n",
               "the condition must be a scalar, not float4: use any() or "
               "all()");
}
END_TEST

//===-- errors: assignment ----------------------------------------------===//

START_TEST(test_kernel_sema_assign_to_const) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  const int n = 4;\n"
               "  `n = 5;\n"
               "  o[0] = n;\n"
               "}\n",
               "cannot assign to 'n'");
}
END_TEST

START_TEST(test_kernel_sema_assign_through_const_pointer) {
  expect_error("__kernel void k(__global const int* in) {\n"
               "  `in[0] = 5;\n"
               "}\n",
               "cannot assign to an element of 'in'");
}
END_TEST

START_TEST(test_kernel_sema_assign_to_constant_space) {
  expect_error("__kernel void k(__constant int* table) {\n"
               "  `table[0]++;\n"
               "}\n",
               "in the __constant address space");
}
END_TEST

START_TEST(test_kernel_sema_assign_to_repeated_swizzle) {
  expect_error("__kernel void k(__global float2* o) {\n"
               "  float4 v = (float4)(0.0f);\n"
               "  `v.xx = (float2)(1.0f, 2.0f);\n"
               "  o[0] = v.xy;\n"
               "}\n",
               "selects a component more than once");
}
END_TEST

//===-- errors: structs -------------------------------------------------===//

START_TEST(test_kernel_sema_no_such_member) {
  expect_error("struct pair { int a; float b; };\n"
               "__kernel void k(__global struct pair* p) {\n"
               "  p->`c = 1;\n"
               "}\n",
               "no member named 'c' in 'struct pair'");
}
END_TEST

// Jumps need the statement they jump to or belong in.
START_TEST(test_kernel_sema_jumps) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  `break;\n"
               "}\n",
               "'break' outside a loop or switch");
  expect_error("__kernel void k(__global int* o) {\n"
               "  switch (o[0]) { case 1: `continue; }\n"
               "}\n",
               "'continue' outside a loop");
  expect_error("__kernel void k(__global int* o) {\n"
               "  `case 3: o[0] = 1;\n"
               "}\n",
               "'case' outside a switch");
  expect_error("__kernel void k(__global int* o) {\n"
               "  switch (o[0]) { case 1: break; `case 1: break; }\n"
               "}\n",
               "duplicate case value in a switch (the first is at line 2)");
  expect_error("__kernel void k(__global int* o) {\n"
               "  switch (o[0]) { default: break; `default: break; }\n"
               "}\n",
               "duplicate 'default' in a switch");
  expect_error("__kernel void k(__global int* o) {\n"
               "  goto `nowhere;\n"
               "}\n",
               "goto to label 'nowhere', which the function does not have");
  expect_error("__kernel void k(__global int* o) {\n"
               "  again: o[0] = 1;\n"
               "  `again: o[1] = 2;\n"
               "}\n",
               "duplicate label 'again' (the first is at line 2)");
  expect_compiles("jumps.cl",
                  "__kernel void k(__global int* o) {\n"
                  "  for (int i = 0; i < 4; ++i) {\n"
                  "    switch (i) { case 0: continue; case 1: break;\n"
                  "                 default: goto out; }\n"
                  "    o[i] = i;\n"
                  "  }\n"
                  "out: o[3] = 9;\n"
                  "}\n");
}
END_TEST

// A line comment ending in a backslash goes on over the next line, as in
// C: the undeclared name there is never read.
START_TEST(test_kernel_sema_line_comment_continues) {
  expect_compiles("comment.cl",
                  "__kernel void k(__global int* o) {\n"
                  "  // a comment that goes on \\\n"
                  "  o[0] = not_declared;\n"
                  "  o[1] = 2;\n"
                  "}\n");
}
END_TEST

// A function's outermost block shares its parameters' scope.
START_TEST(test_kernel_sema_parameter_redeclared) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  int `o = 1;\n"
               "}\n",
               "redefinition of 'o' (first declared at line 1)");
  expect_compiles("shadow.cl",
                  "__kernel void k(__global int* o) {\n"
                  "  { int o = 1; (void)o; }\n"
                  "}\n");
}
END_TEST

//===-- limits ----------------------------------------------------------===//

// A function's private variables are capped: a larger frame could overrun
// a CPU fiber's stack.
START_TEST(test_kernel_sema_private_memory_limit) {
  expect_error("__kernel void k(__global int* o) {\n"
               "  int a[2048];\n"
               "  int `b[2049];\n"
               "  o[0] = a[o[1]] + b[o[2]];\n"
               "}\n",
               "private memory limit (16384 bytes per function) exceeded by "
               "'b'");
  expect_compiles("private.cl",
                  "__kernel void k(__global int* o) {\n"
                  "  int a[4000];\n"
                  "  for (int i = 0; i < 4000; ++i) a[i] = i;\n"
                  "  o[0] = a[o[1] % 4000];\n"
                  "}\n");
}
END_TEST

// The limit holds for a kernel with the helpers it calls: a fiber's stack
// holds the whole chain. Each function here is under the limit by itself.
// A prototype after a definition still counts the definition's bytes.
START_TEST(test_kernel_sema_private_memory_of_a_call_chain) {
  expect_error("int leaf(int i) {\n"
               "  int a[3000];\n"
               "  a[i] = i;\n"
               "  return a[0];\n"
               "}\n"
               "int leaf(int i);\n"
               "int mid(int i) {\n"
               "  int b[1000];\n"
               "  b[i] = leaf(i);\n"
               "  return b[1];\n"
               "}\n"
               "__kernel void `k(__global int* o) {\n"
               "  int c[1000];\n"
               "  c[o[0]] = mid(o[1]);\n"
               "  o[2] = c[0];\n"
               "}\n",
               "private memory limit (16384 bytes for a kernel and the "
               "helpers it calls) exceeded by kernel 'k': 20144 bytes along "
               "k calls mid calls leaf");
  // A struct passed by value is copied twice: into the caller's outgoing
  // copy (counted in the caller) and the callee's parameter.
  expect_error("typedef struct big { int v[3000]; } big_t;\n"
               "int get(big_t b, int i) { return b.v[i]; }\n"
               "__kernel void k(__global int* o) {\n"
               "  big_t b;\n"
               "  b.v[o[0]] = 1;\n"
               "  o[1] = `get(b, o[2]);\n"
               "}\n",
               "private memory limit (16384 bytes per function) exceeded by "
               "'get'");
  expect_error("typedef struct mid { int v[1500]; } mid_t;\n"
               "int get(mid_t b, int i) { return b.v[i]; }\n"
               "int twice(mid_t b, int i) { return get(b, i) * 2; }\n"
               "__kernel void `k(__global int* o) {\n"
               "  mid_t b;\n"
               "  b.v[o[0]] = 1;\n"
               "  o[1] = twice(b, o[2]);\n"
               "}\n",
               // k: o 8 + b 6000 + the copy 6000; twice: b 6000 + i 4 +
               // the copy 6000; get: b 6000 + i 4; two call frames of 64.
               "exceeded by kernel 'k': 30144 bytes along k calls twice calls "
               "get");
}
END_TEST

// In a diamond (k calls b and c, both call d) each chain counts d once,
// and the kernel needs its worst chain, not the sum of all four.
// |C_INTS|: the size of c's array; |MARK|: the mark before the kernel.
#define DIAMOND(C_INTS, MARK)                                                \
  "int d(int i) { int a[1250]; a[i] = i; return a[0]; }\n"                   \
  "int b(int i) { int a[1250]; a[i] = d(i); return a[1]; }\n"                \
  "int c(int i) { int a[" C_INTS "]; a[i] = d(i); return a[2]; }\n"          \
  "__kernel void " MARK "k(__global int* o) {\n"                             \
  "  int a[1250];\n"                                                         \
  "  a[o[0]] = b(o[1]) + c(o[2]);\n"                                         \
  "  o[3] = a[0];\n"                                                         \
  "}\n"

START_TEST(test_kernel_sema_private_memory_of_a_diamond) {
  expect_compiles("diamond.cl", DIAMOND("1250", ""));  // 15144 of 20020
  expect_error(DIAMOND("1700", "`"), "exceeded by kernel 'k': 16944 bytes "
                                     "along k calls c calls d");
}
END_TEST

// 30,000 nested parentheses are an error that names the nesting limit,
// never a stack overflow.
START_TEST(test_kernel_sema_deep_parentheses) {
  char* source = dc_test_nested_parens(
      "__kernel void k(__global int* o) {\n  o[0] = ", 30000, ";\n}\n");
  dc_program_t* prog = SENTINEL;
  DC_CK_FAIL(try_build(cpu, "sema.cl", source, NULL, &prog), DC_ERR_COMPILE,
             "sema.cl:2:");
  DC_CK_ERROR_HAS("nesting limit");
  DC_CK_ERROR_HAS("256");
  ck_assert_ptr_null(prog);
  free(source);
}
END_TEST

// The same for unary operators and casts, which recurse without
// parentheses of their own.
START_TEST(test_kernel_sema_deep_unary_chains) {
  enum { kDepth = 30000 };
  static const char* const kChains[] = {"-", "!", "~", "(int)"};
  for (size_t c = 0; c < sizeof(kChains) / sizeof(kChains[0]); ++c) {
    size_t n = strlen(kChains[c]);
    char* source = malloc(64 + n * kDepth * 2);
    ck_assert_ptr_nonnull(source);
    char* p = source + sprintf(source, "__kernel void k(__global int* o) {\n"
                                       "  o[0] = ");
    for (int i = 0; i < kDepth; ++i) {
      memcpy(p, kChains[c], n);  // "- -" would lex "--": spaces between
      p += n;
      *p++ = ' ';
    }
    strcpy(p, "1;\n}\n");
    dc_program_t* prog = SENTINEL;
    DC_CK_FAIL(try_build(cpu, "sema.cl", source, NULL, &prog),
               DC_ERR_COMPILE, "sema.cl:2:");
    DC_CK_ERROR_HAS("nesting limit");
    free(source);
  }
}
END_TEST

static Suite* kernel_sema_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_sema", "dc-check-kernel-sema");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_kernel_sema_conversions_compile);
  tcase_add_test(core, test_kernel_sema_vectors_compile);
  tcase_add_test(core, test_kernel_sema_pointers_compile);
  tcase_add_test(core, test_kernel_sema_structs_compile);
  tcase_add_test(core, test_kernel_sema_discarding_const_warns);

  TCase* errors = dc_test_kernel_tcase(s, "errors");
  tcase_add_test(errors, test_kernel_sema_undeclared_identifier);
  tcase_add_test(errors, test_kernel_sema_call_to_system);
  tcase_add_test(errors, test_kernel_sema_call_to_compiler_builtin);
  tcase_add_test(errors, test_kernel_sema_builtin_not_called);
  tcase_add_test(errors, test_kernel_sema_kernel_calls_kernel);
  tcase_add_test(errors, test_kernel_sema_too_many_arguments);
  tcase_add_test(errors, test_kernel_sema_direct_recursion);
  tcase_add_test(errors, test_kernel_sema_mutual_recursion);
  tcase_add_test(errors, test_kernel_sema_recursion_through_three_functions);
  tcase_add_test(errors, test_kernel_sema_deep_call_chain_compiles);
  tcase_add_test(errors, test_kernel_sema_element_after_designator_chain);
  tcase_add_test(errors, test_kernel_sema_string_initialisers);
  tcase_add_test(errors, test_kernel_sema_get_global_id_without_argument);
  tcase_add_test(errors, test_kernel_sema_vstore_of_a_scalar);
  tcase_add_test(errors, test_kernel_sema_mul_hi_of_a_pointer);
  tcase_add_test(errors, test_kernel_sema_string_literal);
  tcase_add_test(errors, test_kernel_sema_long_long_suffix);
  tcase_add_test(errors, test_kernel_sema_half_constant);
  tcase_add_test(errors, test_kernel_sema_constant_division_by_zero);
  tcase_add_test(errors, test_kernel_sema_int_to_pointer_cast);
  tcase_add_test(errors, test_kernel_sema_int_to_pointer_implicit);
  tcase_add_test(errors, test_kernel_sema_address_space_mismatch);
  tcase_add_test(errors, test_kernel_sema_address_space_cast);
  tcase_add_test(errors, test_kernel_sema_constant_index_out_of_bounds);
  tcase_add_test(errors, test_kernel_sema_mixed_vector_types);
  tcase_add_test(errors, test_kernel_sema_vector_cast);
  tcase_add_test(errors, test_kernel_sema_swizzle_out_of_range);
  tcase_add_test(errors, test_kernel_sema_three_component_selectors);
  tcase_add_test(errors, test_kernel_sema_vector_member_that_is_no_component);
  tcase_add_test(errors, test_kernel_sema_vector_literal_of_wrong_width);
  tcase_add_test(errors, test_kernel_sema_vector_condition);
  tcase_add_test(errors, test_kernel_sema_assign_to_const);
  tcase_add_test(errors, test_kernel_sema_assign_through_const_pointer);
  tcase_add_test(errors, test_kernel_sema_assign_to_constant_space);
  tcase_add_test(errors, test_kernel_sema_assign_to_repeated_swizzle);
  tcase_add_test(errors, test_kernel_sema_no_such_member);
  tcase_add_test(errors, test_kernel_sema_jumps);
  tcase_add_test(errors, test_kernel_sema_parameter_redeclared);
  tcase_add_test(errors, test_kernel_sema_line_comment_continues);

  TCase* limits = dc_test_kernel_tcase(s, "limits");
  tcase_add_test(limits, test_kernel_sema_deep_parentheses);
  tcase_add_test(limits, test_kernel_sema_deep_unary_chains);
  tcase_add_test(limits, test_kernel_sema_private_memory_limit);
  tcase_add_test(limits, test_kernel_sema_private_memory_of_a_call_chain);
  tcase_add_test(limits, test_kernel_sema_private_memory_of_a_diamond);
  return s;
}

DC_CHECK_MAIN(kernel_sema_suite)

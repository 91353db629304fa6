// check_program.c: building programs in the kernel language: reflection,
// build options, the preprocessor, compile errors and where they point,
// every construct the language rejects, and the compile cache (memory,
// disk, corrupt entries, concurrent builders, a missing compiler).
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <fcntl.h>
#include <float.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_fixture.h"

//===-- Fixture (kernel_fixture.h) and contexts on other caches ---------===//

// A quiet context whose kernel cache is |dir| and C compiler |compiler|
// (NULL: the default).
static dc_context_t* context_on(const char* dir, const char* compiler) {
  dc_test_kernel_options_t o = {.cache_dir = dir, .c_compiler = compiler};
  return dc_test_kernel_context(&o);
}

//===-- Helpers ---------------------------------------------------------===//

// Asserts that building |source| as |name| fails with DC_ERR_COMPILE and
// that the first error is exactly "|name|:|where|: error: |message|".
static void expect_error(const char* name, const char* source,
                         const char* options, const char* where,
                         const char* message) {
  dc_program_t* p = SENTINEL;
  char want[1024];
  snprintf(want, sizeof(want), "dc_program_create: %s:%s: error: %s", name,
           where, message);
  dc_status_t st = try_build(cpu, name, source, options, &p);
  ck_assert_msg(st == DC_ERR_COMPILE, "%s: got %s (%s), expected COMPILE",
                want, dc_status_name(st), dc_last_error());
  ck_assert_ptr_null(p);
  ck_assert_msg(strncmp(dc_last_error(), want, strlen(want)) == 0,
                "message '%s' does not start with '%s'", dc_last_error(),
                want);
  // Nothing follows but the count of further errors.
  const char* rest = dc_last_error() + strlen(want);
  ck_assert_msg(*rest == '\0' || strncmp(rest, " (and ", 6) == 0,
                "message '%s' goes on after '%s'", dc_last_error(), want);
}

// Runs the 1-D kernel |k| of |device| over |n| items with one i32 buffer
// argument and returns what it wrote (caller frees).
static int32_t* run_i32_on(dc_device_t* device, dc_kernel_t* k, size_t n) {
  dc_buffer_t* out = dc_test_buffer_new(device, DC_DTYPE_I32, n, "out");
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(out, 0, n, &zero));
  dc_arg_t arg = dc_arg_buffer(out);
  dc_dispatch_t grid = {.dims = 1, .global = {n}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, &arg, 1));
  int32_t* values = malloc(n * sizeof(*values));
  DC_CK_OK(dc_buffer_read(out, 0, values, n));
  dc_buffer_release(out);
  return values;
}

// run_i32_on the test's CPU.
static int32_t* run_i32(dc_kernel_t* k, size_t n) {
  return run_i32_on(cpu, k, n);
}

static dc_program_cache_stats_t stats_of(dc_device_t* device) {
  dc_program_cache_stats_t s;
  memset(&s, 0xAB, sizeof(s));
  DC_CK_OK(dc_program_cache_stats(device, &s));
  return s;
}

//===-- core: reflection ------------------------------------------------===//

static const char kReflect[] =
    "typedef float real;\n"
    "float twice(float x) { return 2.0f * x; }\n"
    "__kernel void first(__global const float* in, __global real* out,\n"
    "                    uint n, float4 scale, __constant int* table,\n"
    "                    __local float* scratch) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) out[i] = twice(in[i]) * scale.x + table[0];\n"
    "  scratch[0] = 0.0f;\n"
    "}\n"
    "kernel void second(global void* any, char c, uchar uc, short s,\n"
    "                   ushort us, int x, unsigned int ux, long l,\n"
    "                   ulong ul, double d, unsigned long ul2,\n"
    "                   global int4* v4, const global double2* d2) {}\n"
    "__kernel __attribute__((reqd_work_group_size(8, 4, 1)))\n"
    "void third(__global int* out) {\n"
    "  __local int tile[8][4];\n"
    "  tile[get_local_id(0)][get_local_id(1)] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[get_global_id(0)] = tile[0][0];\n"
    "}\n";

static void check_arg(const dc_kernel_t* k, size_t i, const char* name,
                      const char* type_name, dc_arg_kind_t kind,
                      dc_address_space_t space, dc_dtype_t dtype,
                      uint32_t width, size_t size, bool is_const) {
  const dc_kernel_arg_info_t* a = dc_kernel_arg_info(k, i);
  ck_assert_ptr_nonnull(a);
  ck_assert_str_eq(a->name, name);
  ck_assert_str_eq(a->type_name, type_name);
  ck_assert_int_eq(a->kind, kind);
  ck_assert_int_eq(a->address_space, space);
  ck_assert_int_eq(a->dtype, dtype);
  ck_assert_uint_eq(a->vector_width, width);
  if (kind == DC_ARG_SCALAR) ck_assert_uint_eq(a->size, size);
  ck_assert_msg(a->is_const == is_const, "argument %zu '%s' is_const", i,
                name);
}

START_TEST(test_program_reflection) {
  dc_program_t* p = build("reflect.cl", kReflect, NULL);
  ck_assert_uint_eq(dc_program_kernel_count(p), 3);  // not the helper
  const char* names[] = {"first", "second", "third"};
  for (size_t i = 0; i < 3; ++i) {
    dc_kernel_t* k = NULL;
    DC_CK_OK(dc_program_kernel(p, i, &k));
    ck_assert_str_eq(dc_kernel_name(k), names[i]);  // source order
    ck_assert_ptr_eq(kernel_of(p, names[i]), k);
  }

  dc_kernel_t* first = kernel_of(p, "first");
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(first, &info));
  ck_assert_str_eq(info.name, "first");
  ck_assert_uint_eq(info.arg_count, 6);
  ck_assert(!info.uses_barrier);
  ck_assert_str_eq(info.execution, "loop");
  ck_assert_uint_eq(info.static_local_size, 0);
  ck_assert_uint_eq(info.required_group_size[0], 0);
  check_arg(first, 0, "in", "__global const float*", DC_ARG_BUFFER,
            DC_ADDRESS_GLOBAL, DC_DTYPE_F32, 1, 0, true);
  check_arg(first, 1, "out", "__global float*", DC_ARG_BUFFER,
            DC_ADDRESS_GLOBAL, DC_DTYPE_F32, 1, 0, false);
  check_arg(first, 2, "n", "uint", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_U32, 1, 4, false);
  check_arg(first, 3, "scale", "float4", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_F32, 4, 16, false);
  check_arg(first, 4, "table", "__constant int*", DC_ARG_BUFFER,
            DC_ADDRESS_CONSTANT, DC_DTYPE_I32, 1, 0, true);
  check_arg(first, 5, "scratch", "__local float*", DC_ARG_LOCAL,
            DC_ADDRESS_LOCAL, DC_DTYPE_F32, 1, 0, false);
  ck_assert_ptr_null(dc_kernel_arg_info(first, 6));

  dc_kernel_t* second = kernel_of(p, "second");
  DC_CK_OK(dc_kernel_info(second, &info));
  ck_assert_uint_eq(info.arg_count, 13);
  check_arg(second, 0, "any", "__global void*", DC_ARG_BUFFER,
            DC_ADDRESS_GLOBAL, (dc_dtype_t)0, 1, 0, false);
  check_arg(second, 1, "c", "char", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_I8, 1, 1, false);
  check_arg(second, 2, "uc", "uchar", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_U8, 1, 1, false);
  check_arg(second, 3, "s", "short", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_I16, 1, 2, false);
  check_arg(second, 4, "us", "ushort", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_U16, 1, 2, false);
  check_arg(second, 5, "x", "int", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_I32, 1, 4, false);
  check_arg(second, 6, "ux", "uint", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_U32, 1, 4, false);
  check_arg(second, 7, "l", "long", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_I64, 1, 8, false);
  check_arg(second, 8, "ul", "ulong", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_U64, 1, 8, false);
  check_arg(second, 9, "d", "double", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_F64, 1, 8, false);
  check_arg(second, 10, "ul2", "ulong", DC_ARG_SCALAR, DC_ADDRESS_PRIVATE,
            DC_DTYPE_U64, 1, 8, false);
  check_arg(second, 11, "v4", "__global int4*", DC_ARG_BUFFER,
            DC_ADDRESS_GLOBAL, DC_DTYPE_I32, 4, 0, false);
  check_arg(second, 12, "d2", "__global const double2*", DC_ARG_BUFFER,
            DC_ADDRESS_GLOBAL, DC_DTYPE_F64, 2, 0, true);

  dc_kernel_t* third = kernel_of(p, "third");
  DC_CK_OK(dc_kernel_info(third, &info));
  ck_assert(info.uses_barrier);
  ck_assert_str_eq(info.execution, "regions");
  ck_assert_uint_ge(info.static_local_size, 8 * 4 * sizeof(int32_t));
  ck_assert_uint_eq(info.required_group_size[0], 8);
  ck_assert_uint_eq(info.required_group_size[1], 4);
  ck_assert_uint_eq(info.required_group_size[2], 1);

  size_t index = 99;
  DC_CK_OK(dc_kernel_find_arg(first, "table", &index));
  ck_assert_uint_eq(index, 4);
  DC_CK_FAIL(dc_kernel_find_arg(first, "nope", &index), DC_ERR_NOT_FOUND,
             "kernel 'first' has no argument 'nope'");
  DC_CK_ERROR_HAS("in, out, n, scale, table, scratch");
  ck_assert_str_eq(dc_program_build_log(p), "");
  dc_program_release(p);
}
END_TEST

START_TEST(test_program_lookup_errors) {
  dc_program_t* p = build("two.cl",
                          "__kernel void a(__global int* o) { o[0] = 1; }\n"
                          "__kernel void b(__global int* o) { o[0] = 2; }\n",
                          NULL);
  dc_kernel_t* k = SENTINEL;
  DC_CK_FAIL(dc_program_kernel(p, 2, &k), DC_ERR_OUT_OF_RANGE,
             "index 2 is out of range (program 'two.cl' has 2 kernel(s))");
  ck_assert_ptr_null(k);
  k = SENTINEL;
  DC_CK_FAIL(dc_program_find_kernel(p, "c", &k), DC_ERR_NOT_FOUND,
             "program 'two.cl' has no kernel 'c' (kernels: a, b)");
  ck_assert_ptr_null(k);
  DC_CK_FAIL(dc_program_find_kernel(p, NULL, &k), DC_ERR_INVALID_ARGUMENT,
             "");
  DC_CK_FAIL(dc_program_kernel(NULL, 0, &k), DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_program_kernel(p, 0, NULL), DC_ERR_INVALID_ARGUMENT, "");
  ck_assert_uint_eq(dc_program_kernel_count(NULL), 0);
  ck_assert_str_eq(dc_kernel_name(NULL), "");
  ck_assert_ptr_null(dc_kernel_arg_info(NULL, 0));
  ck_assert_str_eq(dc_program_build_log(NULL), "");
  dc_kernel_info_t info;
  DC_CK_FAIL(dc_kernel_info(NULL, &info), DC_ERR_INVALID_ARGUMENT, "");
  k = kernel_of(p, "b");
  DC_CK_FAIL(dc_kernel_info(k, NULL), DC_ERR_INVALID_ARGUMENT, "");
  size_t index;
  DC_CK_FAIL(dc_kernel_find_arg(NULL, "o", &index), DC_ERR_INVALID_ARGUMENT,
             "");
  DC_CK_FAIL(dc_kernel_find_arg(k, NULL, &index), DC_ERR_INVALID_ARGUMENT,
             "");
  int32_t* v = run_i32(k, 1);
  ck_assert_int_eq(v[0], 2);
  free(v);
  dc_program_release(p);
}
END_TEST

START_TEST(test_program_kernel_keeps_program_alive) {
  dc_program_t* p = build("alive.cl",
                          "__kernel void k(__global int* o) {\n"
                          "  o[get_global_id(0)] = 7 * get_global_id(0);\n"
                          "}\n",
                          NULL);
  dc_kernel_t* k = kernel_of(p, "k");
  dc_kernel_retain(k);
  dc_program_release(p);  // the kernel's reference keeps it
  int32_t* v = run_i32(k, 10);
  for (int i = 0; i < 10; ++i) ck_assert_int_eq(v[i], 7 * i);
  free(v);
  dc_kernel_release(k);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
}
END_TEST

// A released program stays recognisable (object_cache.h): a stale handle
// is refused, and checking it reads no freed memory (which
// AddressSanitizer would report).
START_TEST(test_program_stale_handle_is_refused) {
  dc_program_t* p = build("stale.cl", "__kernel void k(__global int* o) {}\n",
                          NULL);
  dc_program_release(p);
  ck_assert_uint_eq(dc_program_kernel_count(p), 0);
  ck_assert_str_eq(dc_program_build_log(p), "");
  dc_program_retain(p);  // no-ops
  dc_program_release(p);
  dc_program_t* copy = dc_test_sentinel();
  DC_CK_FAIL(dc_program_build_for(p, cpu, &copy), DC_ERR_INVALID_ARGUMENT,
             "'program' is NULL or a released program");
  ck_assert_ptr_null(copy);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
}
END_TEST

//===-- core: options and the preprocessor ------------------------------===//

START_TEST(test_program_define_options) {
  static const char kSource[] =
      "#ifndef FLAG\n"
      "#error FLAG is not defined\n"
      "#endif\n"
      "__kernel void k(__global int* o) {\n"
      "  o[0] = FLAG; o[1] = VALUE; o[2] = OTHER; o[3] = LAST;\n"
      "#ifdef __FAST_RELAXED_MATH__\n"
      "  o[4] = 1;\n"
      "#else\n"
      "  o[4] = 0;\n"
      "#endif\n"
      "}\n";
  // INT32_MIN: not checked. (-cl-unsafe-math-optimizations defines
  // __FAST_RELAXED_MATH__ here too; OpenCL reserves it for
  // -cl-fast-relaxed-math.)
  static const struct {
    const char* options;
    int32_t want[5];
  } kCases[] = {
      {"-D FLAG -DVALUE=42 -D OTHER=-7 -DLAST", {1, 42, -7, 1, 0}},
      {"  -DFLAG=3   -D VALUE=(6*7) -DOTHER=0x10 -D LAST=VALUE+1 ",
       {3, 42, 16, 43, 0}},
      {"-cl-fast-relaxed-math -DFLAG -DVALUE=1 -DOTHER=2 -DLAST=3",
       {1, 1, 2, 3, 1}},
      {"-cl-unsafe-math-optimizations -cl-finite-math-only "
       "-cl-no-signed-zeros -cl-mad-enable -cl-opt-disable -cl-std=CL1.2 "
       "-cl-std=CL1.0 -cl-std=CL1.1 -w -Werror -g -dc-checked "
       "-DFLAG -DVALUE=2 -DOTHER=3 -DLAST=4",
       {1, 2, 3, 4, INT32_MIN}},
  };
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    dc_program_t* p = build("defs.cl", kSource, kCases[c].options);
    int32_t* v = run_i32(kernel_of(p, "k"), 5);
    for (int i = 0; i < 5; ++i) {
      if (kCases[c].want[i] == INT32_MIN) continue;
      ck_assert_msg(v[i] == kCases[c].want[i], "'%s': o[%d] is %d, not %d",
                    kCases[c].options, i, v[i], kCases[c].want[i]);
    }
    free(v);
    dc_program_release(p);
  }
}
END_TEST

START_TEST(test_program_unknown_options) {
  static const char kSource[] = "__kernel void k(__global int* o) {}\n";
  dc_program_t* p = NULL;
  DC_CK_FAIL(try_build(cpu, NULL, kSource, "-O2", &p), DC_ERR_COMPILE,
             "dc_program_create: program: error: unknown build option "
             "'-O2'");
  ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_program_option_errors_name_the_program) {
  static const char kSource[] = "__kernel void k(__global int* o) {}\n";
  dc_program_t* p = NULL;
  DC_CK_FAIL(try_build(cpu, "opts.cl", kSource, "-DX=1 -foo", &p),
             DC_ERR_COMPILE,
             "dc_program_create: opts.cl: error: unknown build option "
             "'-foo'");
  DC_CK_FAIL(try_build(cpu, "opts.cl", kSource, "-D", &p), DC_ERR_COMPILE,
             "opts.cl: error: build option -D needs a macro name");
  DC_CK_FAIL(try_build(cpu, "opts.cl", kSource, "-D=3", &p), DC_ERR_COMPILE,
             "build option -D needs a macro name");
  DC_CK_FAIL(try_build(cpu, "opts.cl", kSource, "-cl-fast -x", &p),
             DC_ERR_COMPILE, "unknown build option '-cl-fast' (and 1 more");
  ck_assert_ptr_null(p);
}
END_TEST

START_TEST(test_program_preprocessor) {
  static const char kSource[] =
      "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"           // 1
      "#define SQUARE(x) ((x) * (x))\n"                            // 2
      "#define SUM(...) sum_of(__VA_ARGS__)\n"                     // 3
      "#define GLUE(a, b) a##b\n"                                  // 4
      "#define STR(a) #a\n"                                        // 5
      "#define GONE 1\n"                                           // 6
      "#undef GONE\n"                                              // 7
      "#define LEVEL 2\n"                                          // 8
      "int sum_of(int a, int b, int c) { return a + b + c; }\n"    // 9
      "__kernel void k(__global int* o) {\n"                       // 10
      "  int GLUE(my, var) = 5;\n"                                 // 11
      "  o[0] = SQUARE(myvar + 1);\n"                              // 12
      "  o[1] = SUM(1, 2, 3);\n"                                   // 13
      "  o[2] = sizeof(STR(hello));\n"                             // 14
      "#if defined(GONE) || defined GONE\n"                        // 15
      "  o[3] = -1;\n"                                             // 16
      "#elif LEVEL == 1\n"                                         // 17
      "  o[3] = 1;\n"                                              // 18
      "#elif LEVEL * 2 == 4 && !defined(NOPE)\n"                   // 19
      "  o[3] = 2;\n"                                              // 20
      "#else\n"                                                    // 21
      "  o[3] = 3;\n"                                              // 22
      "#endif\n"                                                   // 23
      "  o[4] = __LINE__;\n"                                       // 24
      "  o[5] = __OPENCL_VERSION__ + __OPENCL_C_VERSION__;\n"      // 25
      "  o[6] = CL_VERSION_1_0 + CL_VERSION_1_1 + CL_VERSION_1_2;\n"
      "  o[7] = __ENDIAN_LITTLE__ + 10 * __DCLUA__;\n"             // 27
      "#line 500\n"                                                // 28
      "  o[8] = sizeof(__FILE__); o[9] = __LINE__;\n"             // 29
      "#if 0\n"                                                    // 30
      "#error not taken\n"                                         // 31
      "#include <never.h>\n"                                       // 32
      "#endif\n"                                                   // 33
      "}\n";
  dc_program_t* p = build("pp.cl", kSource, NULL);
  int32_t* v = run_i32(kernel_of(p, "k"), 10);
  ck_assert_int_eq(v[0], 36);
  ck_assert_int_eq(v[1], 6);
  ck_assert_int_eq(v[2], (int)sizeof("hello"));
  ck_assert_int_eq(v[3], 2);
  ck_assert_int_eq(v[4], 24);
  ck_assert_int_eq(v[5], 240);
  ck_assert_int_eq(v[6], 330);
  ck_assert_int_eq(v[7], 11);
  ck_assert_int_eq(v[8], (int)sizeof("pp.cl"));
  ck_assert_int_eq(v[9], 29);  // #line is ignored
  free(v);
  dc_program_release(p);
}
END_TEST

START_TEST(test_program_warnings_reach_the_build_log) {
  dc_program_t* p = build("warn.cl",
                          "#warning careful now\n"
                          "__kernel void k(__global int* o) { o[0] = 1; }\n",
                          NULL);
  DC_CK_STR_HAS(dc_program_build_log(p), "warn.cl:1:2: warning: #warning "
                                         "careful now");
  dc_program_release(p);
}
END_TEST

// The same source under two names: __FILE__ differs, so the compiled
// programs must too (the cache key must not merge them).
START_TEST(test_program_file_macro_follows_the_name) {
  static const char kSource[] =
      "__kernel void k(__global int* o) { o[0] = sizeof(__FILE__); }\n";
  dc_program_t* a = build("a.cl", kSource, NULL);
  dc_program_t* b = build("longer_name.cl", kSource, NULL);
  int32_t* va = run_i32(kernel_of(a, "k"), 1);
  int32_t* vb = run_i32(kernel_of(b, "k"), 1);
  ck_assert_int_eq(va[0], (int)sizeof("a.cl"));
  ck_assert_int_eq(vb[0], (int)sizeof("longer_name.cl"));
  free(va);
  free(vb);
  dc_program_release(a);
  dc_program_release(b);
}
END_TEST

//===-- errors: where compile errors point ------------------------------===//

START_TEST(test_program_front_end_errors_point_at_the_source) {
  expect_error("syntax.cl",
               "__kernel void k(__global int* o) {\n"
               "  int x = 1;\n"
               "  if x) o[0] = x;\n"
               "}\n",
               NULL, "3:6", "expected '(' before 'x'");
  expect_error("params.cl",
               "__kernel void k(__global int* o {\n"
               "}\n",
               NULL, "1:33", "expected ',' before '{'");
  expect_error("lex.cl",
               "__kernel void k(__global int* o) {\n"
               "  o[0] = 1 @ 2;\n"
               "}\n",
               NULL, "2:12", "unexpected character '@'");
  expect_error("comment.cl",
               "__kernel void k(__global int* o) {}\n"
               "   /* never closed\n",
               NULL, "2:4", "unterminated comment");
  expect_error("pp.cl",
               "#define A 1\n"
               "#if A\n"
               "  #error A is set\n"
               "#endif\n"
               "__kernel void k(__global int* o) {}\n",
               NULL, "3:4", "#error A is set");
  expect_error("if.cl",
               "#ifdef X\n"
               "__kernel void k(__global int* o) {}\n",
               NULL, "1:2", "#if without #endif");
  expect_error("dir.cl",
               "#frobnicate\n"
               "__kernel void k(__global int* o) {}\n",
               NULL, "1:2", "unknown preprocessor directive 'frobnicate'");
  expect_error("type.cl",
               "__kernel void k(__global int* o) {\n"
               "  o[0] = 1;\n"
               "}\n"
               "__kernel void j(__global notatype* o) {}\n",
               NULL, "4:26", "unknown type name 'notatype'");
  expect_error("ifexpr.cl",
               "#if 1 +\n"
               "#endif\n"
               "__kernel void k(__global int* o) {}\n",
               NULL, "1:2", "missing operand in #if expression");
  expect_error("ifdiv.cl",
               "#if 4 / (2 - 2)\n"
               "#endif\n"
               "__kernel void k(__global int* o) {}\n",
               NULL, "1:2", "division by zero in #if expression");
  expect_error("reqd.cl",
               "__kernel __attribute__((reqd_work_group_size(8, n, 1)))\n"
               "void k(__global int* o) {}\n",
               NULL, "1:49", "use of undeclared identifier 'n'");
  expect_error("reqd0.cl",
               "__kernel __attribute__((reqd_work_group_size(8, 4 - 4, 1)))\n"
               "void k(__global int* o) {}\n",
               NULL, "1:49", "reqd_work_group_size: dimension 1 is 0 (must "
               "be 1 to 65536)");
  expect_error("reqd2.cl",
               "__kernel __attribute__((reqd_work_group_size(8, 4)))\n"
               "void k(__global int* o) {}\n",
               NULL, "1:50", "reqd_work_group_size takes three sizes (x, y, "
               "z), found ')'");
  // Two bad characters: the first is reported and the second counted.
  dc_program_t* p = NULL;
  DC_CK_FAIL(try_build(cpu, "two.cl",
                       "__kernel void k(__global int* o) {\n"
                       "  o[0] = 1 $ 2 ` 3;\n"
                       "}\n",
                       NULL, &p),
             DC_ERR_COMPILE,
             "two.cl:2:12: error: unexpected character '$' (and 1 more "
             "error(s))");
}
END_TEST

// Undeclared names are reported at the user's line by the front end, in
// loop kernels, barrier kernels and helpers, and every error of a program
// is found, not only the first.
START_TEST(test_program_undeclared_names_point_at_the_source_line) {
  static const struct {
    const char* source;
    const char* where;  // "name:line:"
    const char* detail;
  } kCases[] = {
      {"__kernel void k(__global float* o) {\n"
       "  int i = get_global_id(0);\n"
       "\n"
       "  o[i] = undeclared_thing * 2.0f;\n"
       "}\n",
       "cc1.cl:4:", "undeclared_thing"},
      {"__kernel void k(__global float* o) {\n"
       "  int i = get_global_id(0);\n"
       "  o[i] = 1.0f;\n"
       "  o[i] += frobnicate(i);\n"
       "  o[i] *= 2.0f;\n"
       "}\n",
       "cc2.cl:4:", "frobnicate"},
      {"__kernel void k(__global float* o, __local float* t) {\n"
       "  int i = get_local_id(0);\n"
       "  t[i] = 1.0f;\n"
       "  barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  float s = t[0];\n"
       "  barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  o[i] = s + missing_var;\n"
       "}\n",
       "cc3.cl:7:", "missing_var"},
      {"float helper(float x) {\n"
       "  return x * no_such_scale;\n"
       "}\n"
       "__kernel void k(__global float* o) {\n"
       "  o[0] = helper(1.0f);\n"
       "}\n",
       "cc4.cl:2:", "no_such_scale"},
      {"__kernel void k(__global float* o, __local float* t) {\n"
       "  for (int s = 0; s < 4; ++s) {\n"
       "    t[get_local_id(0)] = s;\n"
       "    barrier(CLK_LOCAL_MEM_FENCE);\n"
       "    if (get_local_id(0) == 0)\n"
       "      o[s] = t[1] + not_here(s);\n"
       "    barrier(CLK_LOCAL_MEM_FENCE);\n"
       "  }\n"
       "}\n",
       "cc5.cl:6:", "not_here"},
  };
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    char name[16];
    snprintf(name, sizeof(name), "cc%zu.cl", c + 1);
    dc_program_t* p = NULL;
    dc_status_t st = try_build(cpu, name, kCases[c].source, NULL, &p);
    ck_assert_msg(st == DC_ERR_COMPILE, "%s: %s", name, dc_status_name(st));
    ck_assert_ptr_null(p);
    char want[64];
    snprintf(want, sizeof(want), "dc_program_create: %s", kCases[c].where);
    ck_assert_msg(strncmp(dc_last_error(), want, strlen(want)) == 0,
                  "'%s' does not start with '%s'", dc_last_error(), want);
    DC_CK_ERROR_HAS(": error: ");
    DC_CK_ERROR_HAS(kCases[c].detail);
  }
  // Two errors on two lines: the first is reported, the second counted.
  dc_program_t* p = NULL;
  DC_CK_FAIL(try_build(cpu, "cc6.cl",
                       "__kernel void k(__global float* o) {\n"
                       "  o[0] = first_missing;\n"
                       "  o[1] = second_missing;\n"
                       "}\n",
                       NULL, &p),
             DC_ERR_COMPILE, "dc_program_create: cc6.cl:2:");
  DC_CK_ERROR_HAS("first_missing");
  DC_CK_ERROR_HAS("(and 1 more error(s))");
  // The front end caught them all: the device's compiler never ran.
  dc_program_cache_stats_t s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 0);
  ck_assert_uint_eq(s.failures, 0);
}
END_TEST

START_TEST(test_program_create_null_arguments) {
  dc_program_t* p = SENTINEL;
  dc_program_params_t pp = {.source = "__kernel void k() {}"};
  DC_CK_FAIL(dc_program_create(NULL, &pp, &p), DC_ERR_INVALID_ARGUMENT, "");
  ck_assert_ptr_null(p);
  DC_CK_FAIL(dc_program_create(cpu, NULL, &p), DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_program_create(cpu, &pp, NULL), DC_ERR_INVALID_ARGUMENT, "");
  pp.source = NULL;
  DC_CK_FAIL(dc_program_create(cpu, &pp, &p), DC_ERR_INVALID_ARGUMENT,
             "the source is NULL");
  pp.source = "";
  DC_CK_FAIL(dc_program_create(cpu, &pp, &p), DC_ERR_INVALID_ARGUMENT,
             "the source is empty");
  dc_program_cache_stats_t s;
  DC_CK_FAIL(dc_program_cache_stats(NULL, &s), DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_program_cache_stats(cpu, NULL), DC_ERR_INVALID_ARGUMENT, "");
  dc_program_release(NULL);  // no-ops
  dc_program_retain(NULL);
  dc_kernel_release(NULL);
  dc_kernel_retain(NULL);
}
END_TEST

START_TEST(test_program_source_length_is_honoured) {
  // Only the first |source_length| bytes count; what follows is garbage.
  static const char kText[] =
      "__kernel void k(__global int* o) { o[0] = 11; }\n"
      "this is not the kernel language @@@";
  size_t length = strchr(kText, '\n') - kText + 1;
  dc_program_params_t pp = {.source = kText, .source_length = length,
                            .name = "len.cl"};
  dc_program_t* p = NULL;
  DC_CK_OK(dc_program_create(cpu, &pp, &p));
  int32_t* v = run_i32(kernel_of(p, "k"), 1);
  ck_assert_int_eq(v[0], 11);
  free(v);
  dc_program_release(p);
}
END_TEST

//===-- errors: every construct the language rejects --------------------===//

typedef struct rejected_t {
  const char* source;
  const char* where;
  const char* message;
} rejected_t;

static void expect_rejected(const rejected_t* cases, size_t count) {
  for (size_t c = 0; c < count; ++c) {
    expect_error("rej.cl", cases[c].source, NULL, cases[c].where,
                 cases[c].message);
  }
}

START_TEST(test_program_rejected_constructs) {
  static const rejected_t kCases[] = {
      {"__kernel void k(__global half* h) {}\n",
       "1:26", "the half type is not supported; use float"},
      {"__kernel void k(__global int* o) {\n"
       "  half x;\n"
       "}\n",
       "2:3", "the half type is not supported; use float"},
      {"__kernel void k(image2d_t img) {}\n",
       "1:17", "images are not supported; use buffers"},
      {"__kernel void k(read_only image2d_t img) {}\n",
       "1:17", "images are not supported; use buffers"},
      {"__kernel void k(__write_only image3d_t img) {}\n",
       "1:17", "images are not supported; use buffers"},
      {"__kernel void k(__global int* o) {\n"
       "  float3 v = (float3)(1.0f, 2.0f, 3.0f);\n"
       "  o[0] = v.w;\n"
       "}\n",
       "3:12",
       "'.w' is out of range for float3, which has 3 components (x, y, z)"},
      {"__kernel void k(__global float* o) {\n"
       "  float4 v = (float4)(0.0f);\n"
       "  o[0] = v.foo;\n"
       "}\n",
       "3:12",
       "'foo' is not a component of float4: use .x, .y, .z, .w, .s0-.sF, "
       ".lo, .hi, .even or .odd"},
      {"__kernel void a(__global int* o) { o[0] = 1; }\n"
       "__kernel void b(__global int* o) {\n"
       "  a(o);\n"
       "}\n",
       "3:3",
       "a kernel cannot call another kernel; move the shared code into a "
       "helper function"},
      {"__kernel void k(__global int* o) {\n"
       "  o[0] = (barrier(CLK_LOCAL_MEM_FENCE), 1);\n"
       "}\n",
       "2:11",
       "barrier must be called as a statement of its own: "
       "'barrier(CLK_LOCAL_MEM_FENCE);'"},
      {"__kernel void k(__global int* o) {\n"
       "  if (o[0] && barrier(CLK_LOCAL_MEM_FENCE)) o[0] = 1;\n"
       "}\n",
       "2:15",
       "barrier must be called as a statement of its own: "
       "'barrier(CLK_LOCAL_MEM_FENCE);'"},
      {"__kernel void k(__global int* o) {\n"
       "  int x = (barrier(CLK_LOCAL_MEM_FENCE), 1);\n"
       "}\n",
       "2:12",
       "barrier must be called as a statement of its own: "
       "'barrier(CLK_LOCAL_MEM_FENCE);'"},
      {"int counter = 0;\n"
       "__kernel void k(__global int* o) {}\n",
       "1:5", "a variable outside functions must be __constant"},
      {"__global float data[4];\n"
       "__kernel void k(__global int* o) {}\n",
       "1:16", "a variable outside functions must be __constant"},
      {"#include <math.h>\n"
       "__kernel void k(__global int* o) {}\n",
       "1:2",
       "#include is not supported: a program is one source; pass "
       "definitions with -D options"},
      {"__kernel int k(__global int* o) { return 1; }\n",
       "1:14", "kernel 'k' must return void"},
      {"__kernel float* k(__global int* o) { return 0; }\n",
       "1:17", "kernel 'k' must return void"},
      {"__kernel void k(int* p) {}\n",
       "1:22",
       "kernel pointer parameter 'p' must be __global, __constant or "
       "__local"},
      {"__kernel void k(__global int** p) {}\n",
       "1:32",
       "kernel parameter 'p' is a pointer to a pointer, which a kernel "
       "cannot receive"},
      {"__kernel void k(__global int* o, bool b) {}\n",
       "1:39",
       "kernel parameter 'b' cannot have type bool, size_t, ptrdiff_t, "
       "intptr_t, uintptr_t or void (OpenCL C 6.9)"},
      {"__kernel void k(__global int* o, size_t n) {}\n",
       "1:41",
       "kernel parameter 'n' cannot have type bool, size_t, ptrdiff_t, "
       "intptr_t, uintptr_t or void (OpenCL C 6.9)"},
  };
  expect_rejected(kCases, sizeof(kCases) / sizeof(kCases[0]));
}
END_TEST

// The spec gives samplers the images' message; the front end words it for
// samplers. Either way it says they are not supported and what to use.
START_TEST(test_program_rejected_samplers) {
  dc_program_t* p = NULL;
  DC_CK_FAIL(try_build(cpu, "rej.cl",
                       "__kernel void k(__global int* o) {\n"
                       "  sampler_t s = 0;\n"
                       "}\n",
                       NULL, &p),
             DC_ERR_COMPILE, "rej.cl:2:3: error: ");
  DC_CK_ERROR_HAS("not supported; use buffers");
  ck_assert_ptr_null(p);
}
END_TEST

// Barriers the region transform cannot run are no longer rejected: those
// kernels run on fibers (their results are checked in check_kernel_lang).
START_TEST(test_program_barrier_shapes_choose_the_execution_mode) {
  static const char kSource[] =
      "__kernel void in_switch(__global int* o, int m) {\n"
      "  switch (m) {\n"
      "    case 0: barrier(CLK_LOCAL_MEM_FENCE); break;\n"
      "  }\n"
      "}\n"
      "__kernel void after_label(__global int* o) {\n"
      "  o[0] = 1;\n"
      "  here: barrier(CLK_LOCAL_MEM_FENCE);\n"
      "}\n"
      "__kernel void with_goto(__global int* o) {\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  goto done;\n"
      "  done: o[0] = 1;\n"
      "}\n"
      "__kernel void with_break(__global int* o, int m) {\n"
      "  for (int i = 0; i < 4; ++i) {\n"
      "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      "    if (i == m) break;\n"
      "  }\n"
      "}\n"
      "__kernel void with_continue(__global int* o, int m) {\n"
      "  int i = 0;\n"
      "  while (i < 4) {\n"
      "    ++i;\n"
      "    if (i == m) continue;\n"
      "    barrier(CLK_GLOBAL_MEM_FENCE);\n"
      "  }\n"
      "}\n"
      "void inner(void) { work_group_barrier(CLK_LOCAL_MEM_FENCE); }\n"
      "void outer(void) { inner(); }\n"
      "__kernel void in_helper(__global int* o) { outer(); }\n"
      "__kernel void structured(__global int* o, int m) {\n"
      "  for (int i = 0; i < m; ++i) {\n"
      "    if (m > 2) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
      "    int k = 0;\n"
      "    while (k < 2) { ++k; barrier(CLK_LOCAL_MEM_FENCE); }\n"
      "    do { barrier(CLK_LOCAL_MEM_FENCE); } while (0);\n"
      "    for (int j = 0; j < 3; ++j) { if (j == 1) break; }\n"
      "  }\n"
      "}\n"
      "__kernel void loop_goto(__global int* o) {\n"
      "  goto done;\n"
      "  done: o[0] = 1;\n"
      "}\n";
  static const struct {
    const char* name;
    const char* execution;
  } kModes[] = {
      {"in_switch", "fibers"},   {"after_label", "fibers"},
      {"with_goto", "fibers"},   {"with_break", "fibers"},
      {"with_continue", "fibers"}, {"in_helper", "fibers"},
      {"structured", "regions"}, {"loop_goto", "loop"},
  };
  dc_program_t* p = build("shapes.cl", kSource, NULL);
  for (size_t i = 0; i < sizeof(kModes) / sizeof(kModes[0]); ++i) {
    dc_kernel_t* k = kernel_of(p, kModes[i].name);
    expect_mode(k, kModes[i].execution);
    dc_kernel_info_t info;
    DC_CK_OK(dc_kernel_info(k, &info));
    ck_assert_msg(info.uses_barrier ==
                      (strcmp(kModes[i].execution, "loop") != 0),
                  "kernel '%s': uses_barrier is %d", kModes[i].name,
                  (int)info.uses_barrier);
  }
  dc_program_release(p);
}
END_TEST

// What the rejections above must not catch: the same statements in the
// shapes the language allows.
START_TEST(test_program_allowed_neighbours_of_rejected_shapes) {
  static const char kSource[] =
      "__kernel void loop_goto(__global int* o) {\n"
      "  int i = get_global_id(0);\n"
      "  if (i == 1) goto skip;\n"
      "  o[i] = 10;\n"
      "  return;\n"
      "skip:\n"
      "  o[i] = 20;\n"
      "}\n"
      "__kernel void barrier_inner_break(__global int* o, __local int* t) {\n"
      "  int l = get_local_id(0);\n"
      "  t[l] = l;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  int found = -1;\n"
      "  for (int k = 0; k < 4; ++k) {\n"  // no barrier inside: fine
      "    if (t[k] == 2) { found = k; break; }\n"
      "  }\n"
      "  switch (l) { case 0: found += 100; break; default: break; }\n"
      "  o[get_global_id(0)] = found;\n"
      "}\n"
      "float scale(float x) { return 3.0f * x; }\n"
      "__kernel void v(__global float* o) {\n"
      "  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
      "  a.x = scale(a.y);\n"
      "  o[0] = a.x + a.s3;\n"
      "}\n";
  dc_program_t* p = build("ok.cl", kSource, NULL);
  int32_t* v = run_i32(kernel_of(p, "loop_goto"), 4);
  ck_assert_int_eq(v[0], 10);
  ck_assert_int_eq(v[1], 20);
  ck_assert_int_eq(v[3], 10);
  free(v);
  dc_kernel_t* k = kernel_of(p, "barrier_inner_break");
  dc_buffer_t* out = dc_test_buffer_new(cpu, DC_DTYPE_I32, 8, "out");
  dc_arg_t args[2] = {dc_arg_buffer(out), dc_arg_local(4 * sizeof(int))};
  dc_dispatch_t grid = {.dims = 1, .global = {8}, .local = {4}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, 2));
  int32_t got[8];
  DC_CK_OK(dc_buffer_read(out, 0, got, 8));
  for (int i = 0; i < 8; ++i) ck_assert_int_eq(got[i], i % 4 ? 2 : 102);
  dc_buffer_release(out);
  dc_buffer_t* f = dc_test_buffer_new(cpu, DC_DTYPE_F32, 1, "f");
  dc_arg_t farg = dc_arg_buffer(f);
  dc_dispatch_t one = {.dims = 1, .global = {1}};
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "v"), &one, &farg, 1));
  float fv = 0.0f;
  DC_CK_OK(dc_buffer_read(f, 0, &fv, 1));
  ck_assert(fv == 10.0f);
  dc_buffer_release(f);
  dc_program_release(p);
}
END_TEST

//===-- lifecycle: the compile cache ------------------------------------===//

static const char kCacheSource[] =
    "__kernel void k(__global int* o) {\n"
    "  o[get_global_id(0)] = SCALE * (int)get_global_id(0);\n"
    "}\n";

// Builds kCacheSource with SCALE=|scale| on |device|, runs it over 64
// items and checks the result.
static void build_and_check(dc_device_t* device, int scale) {
  char options[32];
  snprintf(options, sizeof(options), "-DSCALE=%d", scale);
  dc_program_t* p = build_on(device, "cache.cl", kCacheSource, options);
  int32_t* v = run_i32_on(device, kernel_of(p, "k"), 64);
  for (int i = 0; i < 64; ++i) ck_assert_int_eq(v[i], scale * i);
  free(v);
  dc_program_release(p);
}

// Every *.so file under |dir|: calls |fn| on each; returns how many.
static size_t for_each_entry(const char* dir, void (*fn)(const char* path)) {
  DIR* d = opendir(dir);
  if (d == NULL) return 0;
  size_t n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len < 4 ||
        strcmp(e->d_name + len - 3, ".so") != 0) {
      continue;
    }
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    if (fn) fn(path);
    ++n;
  }
  closedir(d);
  return n;
}

// Flips bytes in the middle and near the end of |path|.
static void corrupt_file(const char* path) {
  int fd = open(path, O_RDWR);
  ck_assert_int_ge(fd, 0);
  struct stat st;
  ck_assert_int_eq(fstat(fd, &st), 0);
  off_t offsets[] = {st.st_size / 2, st.st_size / 3, st.st_size - 70};
  for (size_t i = 0; i < 3; ++i) {
    unsigned char byte = 0;
    ck_assert_int_eq(pread(fd, &byte, 1, offsets[i]), 1);
    byte ^= 0x5A;
    ck_assert_int_eq(pwrite(fd, &byte, 1, offsets[i]), 1);
  }
  close(fd);
}

// Cuts |path| to half its size.
static void truncate_file(const char* path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(truncate(path, st.st_size / 2), 0);
}

START_TEST(test_program_cache_memory_hits) {
  dc_program_cache_stats_t s = stats_of(cpu);
  ck_assert_uint_eq(s.memory_hits, 0);
  ck_assert_uint_eq(s.disk_hits, 0);
  ck_assert_uint_eq(s.compiles, 0);
  ck_assert_uint_eq(s.failures, 0);
  ck_assert_uint_eq(s.corrupt, 0);
  build_and_check(cpu, 3);
  s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 1);
  ck_assert_uint_gt(s.compile_ns, 0);
  ck_assert_uint_eq(s.memory_hits + s.disk_hits, 0);
  build_and_check(cpu, 3);  // the same source and options: in memory
  build_and_check(cpu, 3);
  s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 1);
  ck_assert_uint_eq(s.memory_hits, 2);
  ck_assert_uint_eq(s.disk_hits, 0);
  build_and_check(cpu, 4);  // other options: another program
  s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 2);
  // Other source text (one more space) is another program too.
  dc_program_t* p = build("cache.cl",
                          "__kernel void k(__global int* o) {\n"
                          "  o[get_global_id(0)] = 1 ;\n"
                          "}\n",
                          NULL);
  dc_program_release(p);
  s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 3);
  ck_assert_uint_eq(s.memory_hits, 2);
  ck_assert_uint_eq(s.failures, 0);
  ck_assert_uint_eq(for_each_entry(cache_dir, NULL), 3);  // one per key
  // A build the front end rejects never reaches the device's compiler.
  ck_assert_int_eq(try_build(cpu, "bad.cl",
                             "__kernel void k(__global int* o) { o[0] = y; }",
                             NULL, &p),
                   DC_ERR_COMPILE);
  s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 3);
  ck_assert_uint_eq(s.failures, 0);
}
END_TEST

START_TEST(test_program_cache_disk_hit_in_a_fresh_context) {
  build_and_check(cpu, 5);
  ck_assert_uint_eq(stats_of(cpu).compiles, 1);
  dc_context_t* other = context_on(cache_dir, NULL);
  dc_device_t* other_cpu = dc_test_cpu(other);
  build_and_check(other_cpu, 5);
  dc_program_cache_stats_t s = stats_of(other_cpu);
  ck_assert_uint_eq(s.disk_hits, 1);
  ck_assert_uint_eq(s.compiles, 0);
  ck_assert_uint_eq(s.memory_hits, 0);
  build_and_check(other_cpu, 5);  // now loaded there: a memory hit
  s = stats_of(other_cpu);
  ck_assert_uint_eq(s.memory_hits, 1);
  ck_assert_uint_eq(s.disk_hits, 1);
  dc_context_release(other);
  // The first context's counters are its own.
  s = stats_of(cpu);
  ck_assert_uint_eq(s.compiles, 1);
  ck_assert_uint_eq(s.disk_hits, 0);
}
END_TEST

// Builds kCacheSource with |scale| in a context of its own on the kernel
// cache |dir| and returns that context's cache statistics. It releases the
// context, so that no loaded module maps the entry a test then damages.
static dc_program_cache_stats_t build_in_passing(const char* dir, int scale) {
  dc_context_t* passing = context_on(dir, NULL);
  dc_device_t* passing_cpu = dc_test_cpu(passing);
  build_and_check(passing_cpu, scale);
  dc_program_cache_stats_t s = stats_of(passing_cpu);
  dc_context_release(passing);
  return s;
}

START_TEST(test_program_cache_corrupt_entry_is_rebuilt) {
  build_in_passing(cache_dir, 6);
  ck_assert_uint_eq(for_each_entry(cache_dir, corrupt_file), 1);
  // A second context gets correct results from a rebuild.
  dc_program_cache_stats_t s = build_in_passing(cache_dir, 6);
  ck_assert_uint_eq(s.corrupt, 1);
  ck_assert_uint_eq(s.compiles, 1);
  ck_assert_uint_eq(s.disk_hits, 0);
  // The rebuild stored a good entry: a third context hits it.
  s = build_in_passing(cache_dir, 6);
  ck_assert_uint_eq(s.disk_hits, 1);
  ck_assert_uint_eq(s.corrupt, 0);
  ck_assert_uint_eq(s.compiles, 0);
}
END_TEST

START_TEST(test_program_cache_truncated_entry_is_rebuilt) {
  build_in_passing(cache_dir, 7);
  ck_assert_uint_ge(for_each_entry(cache_dir, truncate_file), 1);
  dc_program_cache_stats_t s = build_in_passing(cache_dir, 7);
  ck_assert_uint_eq(s.corrupt, 1);
  ck_assert_uint_eq(s.compiles, 1);
}
END_TEST

START_TEST(test_program_cache_off_keeps_nothing_on_disk) {
  dc_context_t* off = context_on("off", NULL);
  dc_device_t* off_cpu = dc_test_cpu(off);
  build_and_check(off_cpu, 8);
  build_and_check(off_cpu, 8);
  dc_program_cache_stats_t s = stats_of(off_cpu);
  ck_assert_uint_eq(s.compiles, 1);
  ck_assert_uint_eq(s.memory_hits, 1);
  dc_context_release(off);
  s = build_in_passing("off", 8);  // a new context compiles again
  ck_assert_uint_eq(s.compiles, 1);
  ck_assert_uint_eq(s.disk_hits, 0);
}
END_TEST

//===-- lifecycle: a missing compiler -----------------------------------===//

START_TEST(test_program_missing_compiler_is_unavailable) {
  dc_context_t* broken = context_on(cache_dir, "/nonexistent/cc");
  dc_device_t* broken_cpu = dc_test_cpu(broken);
  for (int round = 0; round < 2; ++round) {  // the outcome is remembered
    dc_program_t* p = SENTINEL;
    DC_CK_FAIL(try_build(broken_cpu, "cc.cl", kCacheSource, "-DSCALE=1", &p),
               DC_ERR_UNAVAILABLE, "/nonexistent/cc");
    DC_CK_ERROR_HAS("C compiler");
    ck_assert_ptr_null(p);
  }
  // The front end still reports the user's errors first.
  dc_program_t* p = NULL;
  DC_CK_FAIL(try_build(broken_cpu, "bad.cl", "__kernel void k( {}", NULL, &p),
             DC_ERR_COMPILE, "bad.cl:1:");
  dc_kernel_t* k = NULL;
  DC_CK_FAIL(dc_builtin_kernel(broken_cpu, "add", &k), DC_ERR_UNAVAILABLE,
             "/nonexistent/cc");
  ck_assert_ptr_null(k);
  // Buffers and everything else of the context still work.
  dc_buffer_t* b = dc_test_buffer_new(broken_cpu, DC_DTYPE_F32, 4, "b");
  dc_buffer_release(b);
  dc_context_release(broken);

  dc_context_t* unnamed = context_on(cache_dir, "dclua-no-such-cc-here");
  DC_CK_FAIL(try_build(dc_test_cpu(unnamed), "cc.cl", kCacheSource,
                       "-DSCALE=1", &p),
             DC_ERR_UNAVAILABLE, "dclua-no-such-cc-here");
  dc_context_release(unnamed);
}
END_TEST

// A compiler that runs but lacks the C library's headers (libc6-dev not
// installed) is the machine's problem, said as such: not an engine bug.
START_TEST(test_program_missing_headers_are_unavailable) {
  char wrapper[600];
  snprintf(wrapper, sizeof(wrapper), "%s/cc-without-headers", cache_dir);
  FILE* f = fopen(wrapper, "w");
  ck_assert_ptr_nonnull(f);
  fputs("#!/bin/sh\nexec cc -nostdinc -I/ \"$@\"\n", f);
  ck_assert_int_eq(fclose(f), 0);
  ck_assert_int_eq(chmod(wrapper, 0755), 0);
  dc_context_t* bare = context_on(cache_dir, wrapper);
  dc_program_t* p = SENTINEL;
  DC_CK_FAIL(try_build(dc_test_cpu(bare), "cc.cl", kCacheSource, "-DSCALE=1",
                       &p),
             DC_ERR_UNAVAILABLE,
             "the C library's development files are missing");
  DC_CK_ERROR_HAS("cc-without-headers");
  ck_assert_ptr_null(p);
  dc_context_release(bare);
}
END_TEST

//===-- lifecycle: fast math stays in its program -----------------------===//

// gcc and clang link a start file into anything linked with -ffast-math
// whose constructor turns on flush-to-zero and denormals-are-zero for the
// thread that loads it (and the threads that thread creates later). A
// fast-relaxed-math program must not change how anything else computes.

// Whether |x| has exactly the bits of |want|. Compared as floats, a
// denormal would equal zero on a thread that reads denormals as zero.
static bool same_bits(float x, float want) {
  return memcmp(&x, &want, sizeof(x)) == 0;
}

// Whether the calling thread computes with denormals as IEEE says: a
// denormal result is kept (no flush to zero) and a denormal operand is
// read as itself (not as zero). volatile keeps the compiler from folding.
static bool thread_keeps_denormals(void) {
  volatile float smallest_normal = FLT_MIN, half = 0.5f, two = 2.0f;
  volatile float denormal = FLT_MIN / 4;
  float halved = smallest_normal * half;  // FLT_MIN / 2, a denormal
  float doubled = denormal * two;         // FLT_MIN / 2 again
  return same_bits(halved, FLT_MIN / 2) && same_bits(doubled, FLT_MIN / 2);
}

static const char kHalve[] =
    "__kernel void halve(__global float* x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = x[i] * 0.5f;\n"
    "}\n";

// Runs kHalve (without fast math) on |device| over normal and denormal
// values and asserts the IEEE results.
static void expect_kernel_keeps_denormals(dc_device_t* device) {
  dc_program_t* p = build_on(device, "halve.cl", kHalve, NULL);
  float v[4] = {FLT_MIN, FLT_MIN / 2, 1.0f, FLT_MIN / 8};
  dc_buffer_t* b = dc_test_buffer_new(device, DC_DTYPE_F32, 4, "x");
  DC_CK_OK(dc_buffer_write(b, 0, v, 4));
  dc_arg_t arg = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {4}};
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "halve"), &grid, &arg, 1));
  DC_CK_OK(dc_buffer_read(b, 0, v, 4));
  ck_assert_msg(same_bits(v[0], FLT_MIN / 2) &&
                    same_bits(v[1], FLT_MIN / 4) && same_bits(v[2], 0.5f) &&
                    same_bits(v[3], FLT_MIN / 16),
                "denormals lost: %a %a %a %a", (double)v[0], (double)v[1],
                (double)v[2], (double)v[3]);
  dc_buffer_release(b);
  dc_program_release(p);
}

START_TEST(test_program_fast_math_does_not_leak_flush_to_zero) {
  ck_assert_msg(thread_keeps_denormals(), "denormals lost before the test");
  // The source is unique to this test, so that the build loads a fresh
  // shared object (its constructors run at that load).
  dc_program_t* fast = build("fast.cl",
                             "__kernel void fast_scale(__global float* x) {\n"
                             "  size_t i = get_global_id(0);\n"
                             "  x[i] = native_sqrt(x[i]) * 0.75f;\n"
                             "}\n",
                             "-cl-fast-relaxed-math");
  ck_assert_msg(thread_keeps_denormals(),
                "building a fast-relaxed-math program turned on "
                "flush-to-zero in the calling thread");
  // A kernel without fast math, on the workers that were already there
  // and on those of a context created after the load (they start from
  // this thread's floating-point state).
  expect_kernel_keeps_denormals(cpu);
  dc_context_t* later = context_on(cache_dir, NULL);
  expect_kernel_keeps_denormals(dc_test_cpu(later));
  dc_context_release(later);
  ck_assert(thread_keeps_denormals());
  dc_program_release(fast);
}
END_TEST

//===-- limits: concurrent builders -------------------------------------===//

#define BUILDERS 6
#define ROUNDS 6

typedef struct builder_t {
  dc_device_t* device;
  size_t index;
  int failures;
  char message[256];
} builder_t;

// Builds and runs |scale|'s program; records the first failure.
static void builder_round(builder_t* b, int scale) {
  char options[32];
  snprintf(options, sizeof(options), "-DSCALE=%d", scale);
  dc_program_params_t pp = {.source = kCacheSource, .name = "conc.cl",
                            .options = options};
  dc_program_t* p = NULL;
  dc_kernel_t* k = NULL;
  dc_buffer_t* out = NULL;
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = 256};
  dc_status_t st = dc_program_create(b->device, &pp, &p);
  if (st == DC_OK) st = dc_program_find_kernel(p, "k", &k);
  if (st == DC_OK) st = dc_buffer_create(b->device, &bp, &out);
  if (st == DC_OK) {
    dc_arg_t arg = dc_arg_buffer(out);
    dc_dispatch_t grid = {.dims = 1, .global = {256}};
    st = dc_kernel_dispatch(k, &grid, &arg, 1);
  }
  int32_t v[256];
  if (st == DC_OK) st = dc_buffer_read(out, 0, v, 256);
  if (st != DC_OK) {
    if (b->failures++ == 0) {
      snprintf(b->message, sizeof(b->message), "%s", dc_last_error());
    }
  } else {
    for (int i = 0; i < 256; ++i) {
      if (v[i] != scale * i && b->failures++ == 0) {
        snprintf(b->message, sizeof(b->message), "scale %d: v[%d] = %d",
                 scale, i, v[i]);
      }
    }
  }
  dc_buffer_release(out);
  dc_program_release(p);
}

// Each builder builds three sources, sharing them with the others, in an
// order of its own.
static void* builder_main(void* arg) {
  builder_t* b = arg;
  for (size_t r = 0; r < ROUNDS; ++r) {
    builder_round(b, 20 + (int)((b->index + r) % 3));
  }
  return NULL;
}

static void check_builders(const builder_t* builders, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    ck_assert_msg(builders[i].failures == 0, "builder %zu: %d failure(s): %s",
                  i, builders[i].failures, builders[i].message);
  }
}

START_TEST(test_program_concurrent_builders_share_a_context) {
  builder_t builders[BUILDERS];
  memset(builders, 0, sizeof(builders));
  for (size_t i = 0; i < BUILDERS; ++i) {
    builders[i].device = cpu;
    builders[i].index = i;
  }
  dc_test_run_threads(BUILDERS, builder_main, builders, sizeof(builders[0]));
  check_builders(builders, BUILDERS);
  dc_program_cache_stats_t s = stats_of(cpu);
  ck_assert_uint_eq(s.failures, 0);
  ck_assert_uint_eq(s.memory_hits + s.disk_hits + s.compiles,
                    BUILDERS * ROUNDS);
  ck_assert_uint_ge(s.compiles, 1);  // threads may race on a key
  ck_assert_uint_le(s.compiles + s.disk_hits, 3 * BUILDERS);
  ck_assert_uint_eq(for_each_entry(cache_dir, NULL), 3);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
}
END_TEST

// Several contexts on one cache directory stand for several processes.
START_TEST(test_program_concurrent_builders_share_a_cache_directory) {
  enum { kContexts = 4 };
  dc_context_t* contexts[kContexts];
  builder_t builders[kContexts];
  memset(builders, 0, sizeof(builders));
  for (size_t i = 0; i < kContexts; ++i) {
    contexts[i] = context_on(cache_dir, NULL);
    builders[i].device = dc_test_cpu(contexts[i]);
    builders[i].index = i;
  }
  dc_test_run_threads(kContexts, builder_main, builders, sizeof(builders[0]));
  check_builders(builders, kContexts);
  uint64_t compiles = 0, disk_hits = 0;
  for (size_t i = 0; i < kContexts; ++i) {
    dc_program_cache_stats_t s = stats_of(builders[i].device);
    ck_assert_uint_eq(s.failures, 0);
    ck_assert_uint_eq(s.corrupt, 0);  // no reader ever sees a torn entry
    ck_assert_uint_eq(s.memory_hits + s.disk_hits + s.compiles, ROUNDS);
    compiles += s.compiles;
    disk_hits += s.disk_hits;
    dc_context_release(contexts[i]);
  }
  ck_assert_uint_eq(compiles + disk_hits, 3 * kContexts);
  ck_assert_uint_eq(for_each_entry(cache_dir, NULL), 3);
}
END_TEST

//===-- limits: size ----------------------------------------------------===//

START_TEST(test_program_many_kernels_in_one_program) {
  // 40 kernels made by one macro, each writing its own number.
#define KERNELS 40
  char source[8192];
  size_t used = (size_t)snprintf(
      source, sizeof(source),
      "#define K(n) __kernel void k##n(__global int* o) { o[0] = n; }\n");
  for (int i = 0; i < KERNELS; ++i) {
    used += (size_t)snprintf(source + used, sizeof(source) - used, "K(%d)\n",
                             i);
  }
  ck_assert_uint_lt(used, sizeof(source));
  dc_program_t* p = build("many.cl", source, NULL);
  ck_assert_uint_eq(dc_program_kernel_count(p), KERNELS);
  for (int i = 0; i < KERNELS; i += 13) {
    char name[8];
    snprintf(name, sizeof(name), "k%d", i);
    int32_t* v = run_i32(kernel_of(p, name), 1);
    ck_assert_int_eq(v[0], i);
    free(v);
  }
  dc_program_release(p);
#undef KERNELS
}
END_TEST

// The same source, name and options, built for another device.
START_TEST(test_program_build_for_another_device) {
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  params.cpu_devices = 2;
  dc_context_t* c = dc_test_context_new(&params);
  dc_device_t* first = NULL;
  dc_device_t* second = NULL;
  DC_CK_OK(dc_context_device(c, 0, &first));
  DC_CK_OK(dc_context_device(c, 1, &second));
  dc_program_t* p = build_on(first, "twice.cl",
                             "__kernel void twice(__global int* x) {\n"
                             "  x[get_global_id(0)] *= K;\n"
                             "}\n",
                             "-D K=2");
  dc_program_t* q = SENTINEL;
  DC_CK_OK(dc_program_build_for(p, second, &q));
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(q, "twice", &k));
  dc_buffer_t* b = dc_test_buffer_new(second, DC_DTYPE_I32, 4, "x");
  int32_t v[4] = {1, 2, 3, 4};
  DC_CK_OK(dc_buffer_write(b, 0, v, 4));
  dc_arg_t arg = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {4}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, &arg, 1));  // the option came along
  DC_CK_OK(dc_buffer_read(b, 0, v, 4));
  ck_assert_int_eq(v[3], 8);
  dc_program_t* none = SENTINEL;
  DC_CK_FAIL(dc_program_build_for(NULL, second, &none),
             DC_ERR_INVALID_ARGUMENT, "'program' is NULL");
  ck_assert_ptr_null(none);
  dc_buffer_release(b);
  dc_program_release(p);
  dc_program_release(q);
  dc_context_release(c);
}
END_TEST

static Suite* program_suite(void) {
  Suite* s = dc_test_kernel_suite("program", "dc-check-program");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_program_reflection);
  tcase_add_test(core, test_program_build_for_another_device);
  tcase_add_test(core, test_program_lookup_errors);
  tcase_add_test(core, test_program_kernel_keeps_program_alive);
  tcase_add_test(core, test_program_stale_handle_is_refused);
  tcase_add_test(core, test_program_define_options);
  tcase_add_test(core, test_program_preprocessor);
  tcase_add_test(core, test_program_warnings_reach_the_build_log);
  tcase_add_test(core, test_program_file_macro_follows_the_name);
  tcase_add_test(core, test_program_source_length_is_honoured);
  tcase_add_test(core, test_program_allowed_neighbours_of_rejected_shapes);
  tcase_add_test(core, test_program_barrier_shapes_choose_the_execution_mode);

  TCase* errors = dc_test_kernel_tcase(s, "errors");
  tcase_add_test(errors, test_program_unknown_options);
  tcase_add_test(errors, test_program_option_errors_name_the_program);
  tcase_add_test(errors, test_program_front_end_errors_point_at_the_source);
  tcase_add_test(errors,
                 test_program_undeclared_names_point_at_the_source_line);
  tcase_add_test(errors, test_program_create_null_arguments);
  tcase_add_test(errors, test_program_rejected_constructs);
  tcase_add_test(errors, test_program_rejected_samplers);

  TCase* lifecycle = dc_test_kernel_tcase(s, "lifecycle");
  tcase_add_test(lifecycle, test_program_cache_memory_hits);
  tcase_add_test(lifecycle, test_program_cache_disk_hit_in_a_fresh_context);
  tcase_add_test(lifecycle, test_program_cache_corrupt_entry_is_rebuilt);
  tcase_add_test(lifecycle, test_program_cache_truncated_entry_is_rebuilt);
  tcase_add_test(lifecycle, test_program_cache_off_keeps_nothing_on_disk);
  tcase_add_test(lifecycle, test_program_missing_compiler_is_unavailable);
  tcase_add_test(lifecycle, test_program_missing_headers_are_unavailable);
  tcase_add_test(lifecycle,
                 test_program_fast_math_does_not_leak_flush_to_zero);

  TCase* limits = dc_test_kernel_tcase(s, "limits");
  tcase_add_test(limits, test_program_concurrent_builders_share_a_context);
  tcase_add_test(limits,
                 test_program_concurrent_builders_share_a_cache_directory);
  tcase_add_test(limits, test_program_many_kernels_in_one_program);
  return s;
}

DC_CHECK_MAIN(program_suite)

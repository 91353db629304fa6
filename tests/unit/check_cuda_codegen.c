// check_cuda_codegen.c: the lowering to CUDA C++ (DC_KERNEL_DIALECT_CUDA_C)
// and the CUDA device's NVRTC compile of it, without a GPU. The generator's output is checked as text
// everywhere; where NVRTC can be loaded (the CUDA toolkit installed), the
// whole kernel corpus (tests/kernels), the built-in kernels and the
// compile errors are compiled for sm_90 too. Launching is the corpus
// runner's business (check_kernel_corpus.c) on a machine with a GPU.
// SPDX-License-Identifier: MIT
#include "check_util.h"
#include "cuda_compile.h"
#include "kernel_manifest.h"
#include "lower.h"
#include "pp.h"

extern const char dc__builtin_kernels_text[];

//===-- Translating -----------------------------------------------------===//

typedef struct translated_t {
  dc__arena_t arena;
  dc__diag_t diag;
  dc_lowered_program_t t;
  dc_status_t status;
} translated_t;

// Runs the front end and the CUDA code generator on |source|.
static void translate(translated_t* x, const char* source, bool bounds) {
  dc_allocator_t a = dc_allocator_system();
  dc__arena_init(&x->arena, a);
  dc__diag_init(&x->diag, a, "gen.cl");
  dc__build_options_t options;
  dc__token_list_t tokens = {0};
  dc__program_ast_t ast;
  x->status = dc__parse_build_options(&x->arena, NULL, &x->diag, &options);
  if (x->status == DC_OK) {
    x->status = dc__preprocess(&x->arena, source, strlen(source), &options,
                               &x->diag, &tokens);
  }
  if (x->status == DC_OK) {
    x->status = dc__parse(&x->arena, &tokens, &x->diag, &ast);
  }
  if (x->status == DC_OK) {
    x->status = dc__lower_cuda(&x->arena, &ast, "gen.cl", bounds, &x->diag,
                               &x->t);
  }
}

static void translated_free(translated_t* x) {
  dc__diag_free(&x->diag);
  dc__arena_free_all(&x->arena);
}

// Asserts that |source| translates and that the result contains each of
// the NULL-terminated |wanted| strings.
static void expect_translation(const char* source, bool bounds,
                               const char* const* wanted) {
  translated_t x;
  translate(&x, source, bounds);
  ck_assert_msg(x.status == DC_OK, "translation failed: %s",
                x.diag.log ? x.diag.log : dc_last_error());
  for (const char* const* w = wanted; *w != NULL; ++w) {
    ck_assert_msg(strstr(x.t.text, *w) != NULL,
                  "the translation lacks '%s':\n%s", *w, x.t.text);
  }
  translated_free(&x);
}

// Asserts that |source| fails to translate with |where| ("gen.cl:2:5:")
// and |what| in its first error.
static void expect_codegen_error(const char* source, const char* where,
                                 const char* what) {
  translated_t x;
  translate(&x, source, false);
  ck_assert_msg(x.status == DC_ERR_COMPILE, "'%s' translated", source);
  ck_assert_msg(strncmp(x.diag.first_error, where, strlen(where)) == 0,
                "'%s' does not start with '%s'", x.diag.first_error, where);
  ck_assert_msg(strstr(x.diag.first_error, what) != NULL, "'%s' lacks '%s'",
                x.diag.first_error, what);
  translated_free(&x);
}

//===-- The generator's output ------------------------------------------===//

START_TEST(test_kernels_become_cuda_entry_points) {
  static const char kSource[] =
      "float helper(float x) { return x * get_global_id(0); }\n"
      "__kernel void k(__global float* o, __local float* t, int n) {\n"
      "  __local float tile[16];\n"
      "  t[get_local_id(0)] = helper(1.0f);\n"
      "  tile[get_local_id(0) % 16] = n;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  o[get_global_id(0)] = t[0] + tile[0];\n"
      "}\n"
      "__kernel __attribute__((reqd_work_group_size(8, 4, 1)))\n"
      "void fixed(__global int* o) { o[0] = 1; }\n";
  static const char* const kWanted[] = {
      "#include \"dclua_prelude.cuh\"",
      "extern \"C\" __global__ void",
      " dc_k_k(const dc__launch_t _wi,",
      " unsigned long long dc_loff_1",
      "float * dcu_t = (float * )(dc__smem + dc_loff_1);",
      "__shared__ float dcu_tile[16];",
      "static float dcu_helper(const dc__launch_t _wi, float dcu_x)",
      "dcu_helper(_wi, 0x1p+0f)",
      "__syncthreads();",
      "__launch_bounds__(32)",
      "dc_k_fixed(const dc__launch_t _wi,",
      "#line 2 \"gen.cl\"",
      NULL};
  expect_translation(kSource, false, kWanted);
}
END_TEST

// A kernel whose work-items see only their global ids also gets an entry
// that runs four of them per thread, with restrict pointers (pointers
// already restrict stay so once), whatever helpers it does not call do;
// one that sees its group through a helper (one defined after the kernel
// too), one whose accesses are 16
// bytes wide already, and a checked build's kernels do not.
START_TEST(test_independent_kernels_get_a_coarsened_entry) {
  static const char kSource[] =
      "float twice(__global const float* p, size_t i) { return 2 * p[i]; }\n"
      "__kernel void k(__global const float* restrict in,\n"
      "                __global float* out, int n) {\n"
      "  size_t i = get_global_id(0);\n"
      "  if (i >= n) return;\n"
      "  out[i] = twice(in, i) + get_work_dim();\n"
      "}\n"
      "uint late(void);\n"
      "__kernel void h(__global uint* o) { o[get_global_id(0)] = late(); }\n"
      "uint late(void) { return get_group_id(0); }\n"
      "uint lid(void) { return get_local_id(0); }\n"
      "__kernel void g(__global int* o) { o[get_global_id(0)] = lid(); }\n"
      "__kernel void wide(__global float4* v) { v[get_global_id(0)] *= 2; }\n"
      "__kernel void wide2(__global float* v) {\n"
      "  vstore4(vload4(get_global_id(0), v) * 2, get_global_id(0), v);\n"
      "}\n";
  static const char* const kWanted[] = {
      " dc_k_k(const dc__launch_t _wi, const float * __restrict__ dcu_in,"
      " float * dcu_out, int dcu_n)",
      " dc_k4_k(const dc__launch_t _wl, const float * __restrict__ dcu_in,"
      " float * __restrict__ dcu_out, int dcu_n)",
      "auto _item = [&](const dc__launch_t _wi) {",
      "if (_wl.dims == 2) { for (uint _k = 0; _k < DC__ITEMS; ++_k)"
      " _item(dc__row_record(_wl, _k)); } else {"
      " for (uint _k = 0; _k < DC__ITEMS; ++_k)"
      " _item(dc__item_record(_wl, _k)); }",
      " dc_k_g(", NULL};
  expect_translation(kSource, false, kWanted);
  translated_t x;
  translate(&x, kSource, false);
  ck_assert_int_eq(x.status, DC_OK);
  ck_assert_ptr_null(strstr(x.t.text, "dc_k4_g("));
  ck_assert_ptr_null(strstr(x.t.text, "dc_k4_h("));
  ck_assert_ptr_null(strstr(x.t.text, "dc_k4_wide("));
  ck_assert_ptr_null(strstr(x.t.text, "dc_k4_wide2("));
  translated_free(&x);
  translate(&x, kSource, true);
  ck_assert_int_eq(x.status, DC_OK);
  ck_assert_ptr_null(strstr(x.t.text, "dc_k4_"));
  translated_free(&x);
}
END_TEST

START_TEST(test_vectors_components_and_typed_builtins) {
  static const char kSource[] =
      "__kernel void k(__global float4* v, __global int* o) {\n"
      "  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
      "  float4 s = (float4)(2.0f);\n"
      "  a.x = a.w + s.y;\n"
      "  float2 b = a.wzyx.lo;\n"
      "  float8 c = vload8(0, (__global const float*)v);\n"
      "  vstore4(a, 1, (__global float*)v);\n"
      "  int4 r = convert_int4_sat_rte(a) + as_int4(s);\n"
      "  o[0] = (int)(*v).y + r.s3 + convert_uchar(c.s7) + b.x;\n"
      "}\n";
  static const char* const kWanted[] = {
      "dc_float4(0x1p+0f, 0x1p+1f, 0x1.8p+1f, 0x1p+2f)",
      "dc_float4(0x1p+1f)",
      "((dcu_a)[0] = ((dcu_a)[3] + (dcu_s)[1]))",
      "dc__swizzle<0, 1>(dc__swizzle<3, 2, 1, 0>(dcu_a))",
      "dc__vload<8>",
      "dc__vstore<4>",
      "dc__convert<dc_int4, 1, 1>",
      "dc__as<dc_int4>",
      "((int)(((*(dcu_v)))[1]))",  // the cast applies to .y
      "dc__convert<uchar, 0, 0>",
      NULL};
  expect_translation(kSource, false, kWanted);
}
END_TEST

// 3-component vectors are the prelude's dc__vec<T, 3> (the room of four
// lanes); their built-ins are its templates at N = 3.
START_TEST(test_three_component_vectors) {
  static const char kSource[] =
      "typedef struct { char c; float3 v; } holder_t;\n"
      "__kernel void k(__global float* f, __global float3* p, int3 n,\n"
      "                __global holder_t* h) {\n"
      "  float3 a = (float3)(1.0f, 2.0f, 3.0f);\n"
      "  float3 b = p[0].zyx + a.xyz * 2.0f + h->v;\n"
      "  float2 hi = a.hi;\n"
      "  int3 m = a > b;\n"
      "  vstore3(m ? a : b, 1, f);\n"
      "  float3 c = cross(a, vload3(0, (__global const float*)f));\n"
      "  f[0] = dot(a, b) + length(c) + hi.x + as_float4(a).x;\n"
      "  int3 q = convert_int3_sat_rte(b) / n;\n"
      "  f[1] = any(q > 0) + all(m) + as_int3(c).z;\n"
      "}\n";
  static const char* const kWanted[] = {
      "alignas(16) dc_float3 dcu_v;",
      "sizeof(struct dc_r1) == 32 && alignof(struct dc_r1) == 16",
      "dc_int3 dcu_n",
      "dc_float3(0x1p+0f, 0x1p+1f, 0x1.8p+1f)",
      "dc__swizzle<2, 1, 0>",
      "dc__swizzle<0, 1, 2>(dcu_a)",
      "dc__swizzle<2, 3>(dcu_a)",
      "select(",
      "dc__vstore<3>",
      "dc__vload<3>",
      "cross(",
      "dc__convert<dc_int3, 1, 1>",
      "dc__as<dc_float4>",
      "dc__as<dc_int3>",
      NULL};
  expect_translation(kSource, false, kWanted);
  expect_translation(kSource, true, kWanted + 4);
}
END_TEST

START_TEST(test_c_that_cxx_rejects_is_rewritten) {
  static const char kSource[] =
      "int use(int new, int class) { return new + class; }\n"
      "__kernel void k(__global void* raw, __global int* o, char c) {\n"
      "  __global int* p = raw;\n"
      "  unsigned char u = 1; signed char s = 2;\n"
      "  int this = use(1, 2);\n"
      "  o[0] = p[0] + c + u + s + this + sizeof('a');\n"
      "}\n";
  // C++ has no implicit conversion from void*: the cast the analysis
  // made explicit is written; sizeof is folded (a char constant is an int).
  static const char* const kWanted[] = {"void * dcu_raw",
                                        "int * dcu_p = ((int * )(dcu_raw))",
                                        "dc_char dcu_c",
                                        "uchar dcu_u",
                                        "dc_char dcu_s",
                                        "dcu_this",
                                        "dcu_new",
                                        "dcu_class",
                                        "((size_t)4ul)",
                                        NULL};
  expect_translation(kSource, false, kWanted);
  translated_t x;
  translate(&x, kSource, false);
  ck_assert_ptr_null(strstr(x.t.text, "__global int"));
  translated_free(&x);
}
END_TEST

START_TEST(test_float_division_by_a_constant_multiplies) {
  static const char kSource[] =
      "__kernel void k(__global float* f, __global double* d,\n"
      "                __global float2* v, int n) {\n"
      "  f[0] = f[1] / 3;\n"
      "  f[2] /= 0.1f;\n"
      "  f[9] = f[10] / 0.25f;\n"
      "  f[3] = f[4] / f[5];\n"
      "  f[6] = f[7] / 0.0f;\n"
      "  d[0] = d[1] / 3.0;\n"
      "  v[0] = v[1] / 3.0f;\n"
      "  f[8] = n / 7;\n"
      "}\n";
  // The reciprocal and the divisor, exactly, as hexadecimal doubles.
  static const char* const kWanted[] = {
      "0x1.5555555555555p-2, 0x1.8p+1)",
      "0x1.3fffffb000001p+3, 0x1.99999ap-4)", NULL};
  expect_translation(kSource, false, kWanted);
  translated_t x;
  translate(&x, kSource, false);
  // Each float / constant becomes one dc__div_by, in the plain entry and
  // the coarsened one; division by a variable, by zero or by a power of
  // two, double and vector division and integer division stay.
  size_t calls = 0;
  for (const char* at = x.t.text; (at = strstr(at, "dc__div_by(")) != NULL;
       ++at) {
    ++calls;
  }
  ck_assert_uint_eq(calls, 4);
  ck_assert_ptr_nonnull(strstr(x.t.text, "/ (dcu_f)[5]"));
  ck_assert_ptr_nonnull(strstr(x.t.text, "/ 0x0p+0f"));
  ck_assert_ptr_nonnull(strstr(x.t.text, "/ 0x1p-2f"));
  ck_assert_ptr_nonnull(strstr(x.t.text, "((dcu_d)[1] / 0x1.8p+1)"));
  ck_assert_ptr_nonnull(strstr(x.t.text, "/ dc_float2(0x1.8p+1f)"));
  ck_assert_ptr_nonnull(strstr(x.t.text, "(dcu_n / 7)"));
  translated_free(&x);
}
END_TEST

START_TEST(test_grid_sync_and_checked_mode) {
  static const char kSource[] =
      "void step(void) { dc_grid_sync(); }\n"
      "__kernel void k(__global int* a, __global int* b) {\n"
      "  if (get_global_id(0) == 0) return;\n"
      "  a[get_global_id(0)] = 1;\n"
      "  step();\n"
      "  b[0] = a[1];\n"
      "}\n";
  static const char* const kWanted[] = {
      "#define DC__GRID_SYNC 1",
      "#define DC__CHECKED 1",
      "const dc__lengths_t<2> dc_len",
      " [&]() {",
      " }(); dc__grid_exit();",
      "dc__grid_sync();",
      "dc__cwi_t _wi(_wl);",
      "dc_fptr dcu_a = dc_fp(dc_a0, dc_len.n[0], 0u);",
      "static void dcu_step(dc__cwi_t& _wi)",
      "(*(int (*))DC_AT(dcu_a, (long long)(get_global_id(0u)), sizeof(int), "
      "4u))",
      "(*(int (*))DC_AT(dcu_b, (long long)(0), sizeof(int), 6u))",
      NULL};
  expect_translation(kSource, true, kWanted);
  translated_t x;
  translate(&x, kSource, true);
  DC_CK_STR_HAS(x.t.text, "#define DC__GRID_SYNC 1\n");
  ck_assert_uint_eq(x.t.kernel_count, 1);
  ck_assert_str_eq(x.t.kernels[0].entry, "dc_k_k");
  ck_assert(x.t.kernels[0].reaches_barrier);  // k, through step
  ck_assert_str_eq(x.t.header_name, "dclua_prelude.cuh");
  translated_free(&x);
}
END_TEST

START_TEST(test_what_the_generator_rejects) {
  expect_codegen_error(
      "__kernel void k(__global float* v) {\n  v[0] = 1.0f;\n"
      "  printf(\"%f\", v[0]);\n}\n",
      "gen.cl:3:3:", "call to undeclared function 'printf'");
  expect_codegen_error(
      "__kernel void a(__global int* o) { o[0] = 1; }\n"
      "__kernel void b(__global int* o) {\n  a(o);\n}\n",
      "gen.cl:3:3:", "a kernel cannot call another kernel");
  expect_codegen_error(
      "__kernel void k(__global float4* v) {\n  v[0] = v[0].q;\n}\n",
      "gen.cl:2:15:", "'q' is not a component of float4");
  expect_codegen_error(
      "__kernel void k(__global int* o) {\n  __local int t = 3;\n"
      "  o[0] = t;\n}\n",
      "gen.cl:2:15:", "a __local variable cannot be initialised");
}
END_TEST

START_TEST(test_several_lanes_are_assigned_through_a_pointer) {
  static const char kSource[] =
      "__kernel void k(__global float4* v) {\n"
      "  v[0].xy = (float2)(1.0f);\n"
      "  v[1].wx += v[0].zy;\n"
      "}\n";
  static const char* const kWanted[] = {
      "[&]() { auto dc_p1 = &((dcu_v)[0]);",
      "(*dc_p1)[0] = dc_v1[0]; (*dc_p1)[1] = dc_v1[1]; return dc_v1; }()",
      "dc_float2 dc_o2 = dc__swizzle<3, 0>((*dc_p2));",
      NULL};
  expect_translation(kSource, false, kWanted);
}
END_TEST

//===-- Compiling with NVRTC --------------------------------------------===//

static const dc__cuda_nvrtc_t* nvrtc;

// NVRTC's log, into the build log of a compile without a device.
static void log_to_diag(void* diag, const char* text) {
  dc__diag_append(diag, text);
}

// Parses "sm_90" or "compute_90".
static bool parse_arch(const char* arch, dc__cuda_target_t* out) {
  char* end = NULL;
  const char* digits = NULL;
  if (strncmp(arch, "sm_", 3) == 0) digits = arch + 3;
  if (strncmp(arch, "compute_", 8) == 0) digits = arch + 8;
  if (digits == NULL) return false;
  long value = strtol(digits, &end, 10);
  out->arch = (int)value;
  out->ptx = digits == arch + 8;
  return end != digits && *end == '\0' && value > 0 && value < 1000;
}

// Builds |source| (the program |name|, with the build |options|, may be
// NULL) as dc_program_create would for a CUDA device, for |arch|
// ("sm_90" for a cubin, "compute_90" for PTX), checked when |checked|:
// the front end, the lowering and NVRTC. Returns what dc_program_create
// would (DC_ERR_COMPILE with the first error in dc_last_error()); the
// build log goes to |log| (|log_size| bytes, truncated, may be 0), the
// image to |out| when it compiled.
static dc_status_t compile_for_arch(const char* name, const char* source,
                                    const char* options, const char* arch,
                                    bool checked, char* log, size_t log_size,
                                    dc__cuda_image_t* out) {
  memset(out, 0, sizeof(*out));
  if (log_size > 0) log[0] = '\0';
  dc__cuda_target_t target;
  ck_assert_msg(parse_arch(arch, &target), "'%s' is no architecture", arch);
  dc_allocator_t allocator = dc_allocator_system();
  dc__arena_t arena;
  dc__arena_init(&arena, allocator);
  dc__diag_t diag;
  dc__diag_init(&diag, allocator, name);
  dc__build_options_t opts;
  dc__token_list_t tokens = {0};
  dc__program_ast_t ast;
  dc_lowered_program_t lowered;
  dc_status_t st = dc__parse_build_options(&arena, options, &diag, &opts);
  if (st == DC_OK) {
    st = dc__preprocess(&arena, source, strlen(source), &opts, &diag,
                        &tokens);
  }
  if (st == DC_OK) st = dc__parse(&arena, &tokens, &diag, &ast);
  if (st == DC_OK) {
    st = dc__lower_cuda(&arena, &ast, diag.file, checked || opts.checked,
                        &diag, &lowered);
  }
  if (st == DC_OK) {
    dc_build_flags_t flags = {.fast_math = opts.fast_math,
                              .finite_math = opts.finite_math,
                              .no_signed_zeros = opts.no_signed_zeros,
                              .mad_enable = opts.mad_enable,
                              .opt_disable = opts.opt_disable,
                              .opt_max = opts.opt_max};
    dc__cuda_log_sink_t sink = {log_to_diag, &diag};
    st = dc__cuda_nvrtc_compile(nvrtc, &lowered, diag.file, &flags, &target,
                                &sink, allocator, out);
  }
  if (st == DC_ERR_COMPILE || (st != DC_OK && diag.errors > 0)) {
    st = dc__diag_fail(&diag, "dc_program_create");
  }
  if (log_size > 0 && diag.log != NULL) dc__strlcpy(log, diag.log, log_size);
  dc__diag_free(&diag);
  dc__arena_free_all(&arena);
  return st;
}

// Compiles |source| for |arch|; returns the status, the image freed.
static dc_status_t compile(const char* name, const char* source,
                           const char* options, const char* arch, bool bounds,
                           char* log, size_t log_size) {
  dc__cuda_image_t image;
  dc_status_t st =
      compile_for_arch(name, source, options, arch, bounds, log, log_size,
                       &image);
  if (st == DC_OK) {
    ck_assert_ptr_nonnull(image.data);
    ck_assert_uint_gt(image.size, 0);
    dc__cuda_image_free(&image);
  }
  return st;
}


// Compiles every program of the corpus in |dir|, with the options its runs
// use, for sm_90 (the H100), checked and not; returns
// how many. Programs whose runs expect COMPILE are not compiled.
static size_t compile_corpus(const char* dir) {
  dc_manifest_t m;
  ck_assert_msg(dc_corpus_read_manifest_in(dir, &m), "%s", m.error);
  static char log[1 << 16];
  size_t compiled = 0;
  for (size_t i = 0; i < m.count; ++i) {
    const dc_manifest_run_t* r = &m.runs[i];
    bool seen = strcmp(r->status, "COMPILE") == 0;
    for (size_t k = 0; k < i && !seen; ++k) {  // once per program, options
      seen = strcmp(m.runs[k].file, r->file) == 0 &&
             strcmp(m.runs[k].options, r->options) == 0;
    }
    if (seen) continue;
    char* source = dc_corpus_read_file_in(dir, r->file);
    ck_assert_msg(source != NULL, "cannot read %s", r->file);
    for (int bounds = 0; bounds < 2; ++bounds) {
      dc_status_t st = compile(r->file, source, r->options, "sm_90",
                               bounds == 1, log, sizeof(log));
      // The log may exceed what a Check message holds: it goes to stderr.
      if (st != DC_OK) fprintf(stderr, "%s\n", log);
      ck_assert_msg(st == DC_OK, "%s (%s%s): %s: %.300s", r->file, r->options,
                    bounds ? ", checked" : "", dc_status_name(st),
                    dc_last_error());
    }
    ++compiled;
    free(source);
  }
  dc_manifest_free(&m);
  return compiled;
}

// The kernel corpus and the conformance suite compile for sm_90.
START_TEST(test_corpus_compiles_for_sm_90) {
  if (nvrtc == NULL) return;
  size_t corpus = compile_corpus(DC_KERNEL_CORPUS_DIR);
  size_t conformance = compile_corpus(DC_CONFORMANCE_DIR);
  printf("cuda_codegen: %zu corpus and %zu conformance programs compile "
         "for sm_90\n", corpus, conformance);
  ck_assert_uint_gt(corpus, 30);
  ck_assert_uint_gt(conformance, 30);
}
END_TEST

START_TEST(test_builtin_kernels_compile_for_every_target) {
  if (nvrtc == NULL) return;
  static char log[1 << 16];
  static const char* const kArchs[] = {"sm_75", "sm_80", "sm_90", "compute_90"};
  for (size_t i = 0; i < sizeof(kArchs) / sizeof(kArchs[0]); ++i) {
    dc_status_t st = compile("builtin_kernels.cl", dc__builtin_kernels_text,
                             "-dc-O3", kArchs[i], false, log, sizeof(log));
    ck_assert_msg(st == DC_OK, "%s: %s\n%s", kArchs[i], dc_last_error(), log);
  }
}
END_TEST

// The module holds each kernel's entry point, under its prefixed name;
// PTX is text with the same entries.
START_TEST(test_images_hold_the_entry_points) {
  if (nvrtc == NULL) return;
  static const char kSource[] =
      "__kernel void first(__global int* o) { o[0] = 1; }\n"
      "__kernel void second(__global int* o) { o[1] = 2; }\n";
  static const char* const kArchs[] = {"sm_90", "compute_90"};
  for (size_t a = 0; a < 2; ++a) {
    dc__cuda_image_t image;
    DC_CK_OK(compile_for_arch("entries.cl", kSource, NULL, kArchs[a], false,
                              NULL, 0, &image));
    ck_assert(image.ptx == (a == 1));
    for (const char* name = "dc_k_first"; name != NULL;
         name = strcmp(name, "dc_k_first") == 0 ? "dc_k_second" : NULL) {
      ck_assert_msg(memmem(image.data, image.size, name, strlen(name)),
                    "%s: no %s", kArchs[a], name);
    }
    if (image.ptx) DC_CK_STR_HAS(image.data, ".entry dc_k_first");
    dc__cuda_image_free(&image);
  }
}
END_TEST

// The PTX NVRTC makes of |source| for |arch| (a virtual architecture),
// as a malloc'd string.
static char* ptx_of(const char* name, const char* source,
                    const char* options, const char* arch) {
  dc__cuda_image_t image;
  DC_CK_OK(compile_for_arch(name, source, options, arch, false, NULL, 0,
                            &image));
  char* ptx = strndup(image.data, image.size);
  ck_assert_ptr_nonnull(ptx);
  dc__cuda_image_free(&image);
  return ptx;
}

// A float division by a constant compiles to double multiply-adds, with
// no float division left, where doubles run at half the float rate
// (compute_90); to CUDA's division elsewhere (compute_75) and under
// -cl-fast-relaxed-math, whose approximate division is faster still.
START_TEST(test_division_by_a_constant_reaches_the_ptx) {
  if (nvrtc == NULL) return;
  static const char kSource[] =
      "__kernel void third(__global const float* x, __global float* o) {\n"
      "  size_t i = get_global_id(0);\n"
      "  o[i] = x[i] / 3.0f;\n"
      "}\n";
  static const struct {
    const char* arch;
    const char* options;
    bool doubles;
  } kCases[] = {{"compute_90", NULL, true},
                {"compute_75", NULL, false},
                {"compute_90", "-cl-fast-relaxed-math", false}};
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    char* ptx = ptx_of("third.cl", kSource, kCases[c].options,
                       kCases[c].arch);
    bool fma64 = strstr(ptx, "fma.rn.f64") != NULL;
    bool div32 = strstr(ptx, "div.rn.f32") != NULL ||
                 strstr(ptx, "div.approx") != NULL ||
                 strstr(ptx, "div.full") != NULL;
    ck_assert_msg(fma64 == kCases[c].doubles && div32 == !kCases[c].doubles,
                  "%s %s: fma.rn.f64 %d, a float division %d", kCases[c].arch,
                  kCases[c].options ? kCases[c].options : "", fma64, div32);
    free(ptx);
  }
}
END_TEST

// The distinct addresses ("[%rd7]") that global loads read in the PTX
// of entry |name|, up to the next entry.
static int distinct_load_addresses(const char* ptx, const char* name) {
  const char* at = strstr(ptx, name);
  ck_assert_msg(at != NULL, "no entry '%s' in the PTX", name);
  const char* end = strstr(at + strlen(name), ".entry");
  char seen[64][32];
  int n = 0;
  for (const char* p = strstr(at, "ld.global"); p != NULL &&
       (end == NULL || p < end); p = strstr(p + 1, "ld.global")) {
    const char* open = strchr(p, '[');
    const char* close = open ? strchr(open, ']') : NULL;
    ck_assert(close != NULL && close - open < 32);
    char address[32];
    snprintf(address, sizeof(address), "%.*s", (int)(close - open), open);
    bool known = false;
    for (int i = 0; i < n && !known; ++i) known = strcmp(seen[i], address) == 0;
    if (!known && n < 64) snprintf(seen[n++], sizeof(seen[0]), "%s", address);
  }
  return n;
}

// A 2-D launch's coarsened items are consecutive rows, and the compiler
// sees them as such: a vertical blur's four items read the six rows they
// cover at six addresses, where items a group apart read three each,
// twelve in all. With NVRTC 13 the coarsened entry, whose other loop
// serves 1-D and 3-D launches, reads 21 addresses, and 27 when 2-D items
// were a group apart. (Loads of one address may repeat in the PTX; the
// GPU's L1 serves the repeats.)
START_TEST(test_coarsened_rows_share_their_loads) {
  if (nvrtc == NULL) return;
  static const char kSource[] =
      "__kernel void blur(__global const float* in, __global float* out,\n"
      "                   int w, int h) {\n"
      "  int x = get_global_id(0), y = get_global_id(1);\n"
      "  float s = 0.0f;\n"
      "  for (int d = -1; d <= 1; ++d) {\n"
      "    s += in[clamp(y + d, 0, h - 1) * w + x];\n"
      "  }\n"
      "  out[y * w + x] = s / 3;\n"
      "}\n";
  char* ptx = ptx_of("blur.cl", kSource, NULL, "compute_90");
  ck_assert_int_eq(distinct_load_addresses(ptx, ".entry dc_k_blur("), 3);
  int coarse = distinct_load_addresses(ptx, ".entry dc_k4_blur(");
  ck_assert_msg(coarse <= 21, "%d load addresses in the coarsened entry",
                coarse);
  free(ptx);
}
END_TEST

// Errors are found by the front end, at the user's file, line and
// column, before NVRTC sees the program.
START_TEST(test_compile_errors_point_at_the_user_source) {
  if (nvrtc == NULL) return;
  static const struct {
    const char* source;
    const char* where;
    const char* what;
  } kCases[] = {
      {"__kernel void k(__global float* o) {\n"
       "  int i = get_global_id(0);\n"
       "\n"
       "  o[i] = undeclared_thing * 2.0f;\n"
       "}\n",
       "dc_program_create: err.cl:4:10: error: ", "undeclared_thing"},
      {"__kernel void k(__global float* o) {\n"
       "  float4 v = (float4)(1.0f);\n"
       "  o[0] = v.x + frobnicate(v.y, 3);\n"
       "}\n",
       "dc_program_create: err.cl:3:16: error: ", "frobnicate"},
      // Inside the prelude: reported at the line that called the built-in,
      // with OpenCL's names.
      {"__kernel void k(__global float4* o, __global int4* i) {\n"
       "  float4 a = o[0];\n"
       "  o[1] = clamp(a, i[0], 1.0f);\n"
       "}\n",
       "dc_program_create: err.cl:3:", "no overload of 'clamp'"},
      {"__kernel void k(__global float* o, __global int4* i) {\n"
       "  o[0] = sin(i[0]).x;\n"
       "}\n",
       "dc_program_create: err.cl:2:", "no overload of 'sin'"},
      {"float helper(float x) {\n"
       "  return x * no_such_scale;\n"
       "}\n"
       "__kernel void k(__global float* o) { o[0] = helper(1.0f); }\n",
       "dc_program_create: err.cl:2:14: error: ", "no_such_scale"},
  };
  static char log[1 << 16];
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    dc_status_t st = compile("err.cl", kCases[c].source, NULL, "sm_90", false,
                             log, sizeof(log));
    ck_assert_msg(st == DC_ERR_COMPILE, "case %zu: %s", c, dc_status_name(st));
    const char* e = dc_last_error();
    ck_assert_msg(strncmp(e, kCases[c].where, strlen(kCases[c].where)) == 0,
                  "case %zu: '%s' does not start with '%s'", c, e,
                  kCases[c].where);
    ck_assert_msg(strstr(e, kCases[c].what) != NULL,
                  "case %zu: '%s' lacks '%s'", c, e, kCases[c].what);
    ck_assert_msg(strstr(log, "dc__") == NULL,
                  "case %zu: the log shows the engine's names:\n%s", c, log);
  }
}
END_TEST

START_TEST(test_targets_follow_nvrtc) {
  if (nvrtc == NULL) return;
  dc__cuda_target_t t;
  DC_CK_OK(dc__cuda_pick_target(nvrtc, 9, 0, &t));
  ck_assert_int_eq(t.arch, 90);
  ck_assert(!t.ptx);
  // A GPU newer than NVRTC gets PTX of the newest architecture it knows.
  DC_CK_OK(dc__cuda_pick_target(nvrtc, 99, 9, &t));
  ck_assert(t.ptx);
  ck_assert_int_ge(t.arch, 90);
  ck_assert_int_lt(t.arch, 999);
  DC_CK_FAIL(dc__cuda_pick_target(nvrtc, 1, 0, &t), DC_ERR_UNSUPPORTED,
             "compute capability 1.0");
  char text[256];
  dc_build_flags_t options = {.fast_math = true};
  dc__cuda_options_text(&options, &(dc__cuda_target_t){86, false}, text,
                        sizeof(text));
  DC_CK_STR_HAS(text, "--gpu-architecture=sm_86");
  DC_CK_STR_HAS(text, "--use_fast_math");
}
END_TEST

static void find_nvrtc(void) {
  nvrtc = dc__cuda_nvrtc();
  static bool told;
  if (nvrtc == NULL && !told) {
    printf("NVRTC not found, CUDA codegen tests skipped\n");
    told = true;
  }
}

static Suite* cuda_codegen_suite(void) {
  Suite* s = suite_create("cuda_codegen");
  TCase* gen = tcase_create("generator");
  tcase_add_test(gen, test_kernels_become_cuda_entry_points);
  tcase_add_test(gen, test_independent_kernels_get_a_coarsened_entry);
  tcase_add_test(gen, test_vectors_components_and_typed_builtins);
  tcase_add_test(gen, test_three_component_vectors);
  tcase_add_test(gen, test_c_that_cxx_rejects_is_rewritten);
  tcase_add_test(gen, test_float_division_by_a_constant_multiplies);
  tcase_add_test(gen, test_grid_sync_and_checked_mode);
  tcase_add_test(gen, test_what_the_generator_rejects);
  tcase_add_test(gen, test_several_lanes_are_assigned_through_a_pointer);
  suite_add_tcase(s, gen);
  TCase* nv = tcase_create("nvrtc");
  tcase_add_unchecked_fixture(nv, find_nvrtc, NULL);
  tcase_set_timeout(nv, 600);
  tcase_add_test(nv, test_corpus_compiles_for_sm_90);
  tcase_add_test(nv, test_builtin_kernels_compile_for_every_target);
  tcase_add_test(nv, test_images_hold_the_entry_points);
  tcase_add_test(nv, test_division_by_a_constant_reaches_the_ptx);
  tcase_add_test(nv, test_coarsened_rows_share_their_loads);
  tcase_add_test(nv, test_compile_errors_point_at_the_user_source);
  tcase_add_test(nv, test_targets_follow_nvrtc);
  suite_add_tcase(s, nv);
  return s;
}

DC_CHECK_MAIN(cuda_codegen_suite)

// check_backend_build.c: a backend outside the tree builds and runs
// kernels through dc/backend.h alone (issue 17): the build it receives,
// the program lowered to OpenCL C, build errors, and the data it binds to
// programs and kernels.
//
// The backend here ("proxy") uses only the public headers. Its memory is
// the test fake's host memory (check_util.h); its builds lower the program (and check what comes
// out), then build the same source for the context's CPU device, whose
// kernels its dispatches run on buffers staged from its own memory.
// SPDX-License-Identifier: MIT
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "dc/backend.h"
#include "dc/dc.h"

//===-- The proxy backend -----------------------------------------------===//

typedef struct proxy_device_t {
  dc_device_t base;  // first, as the interface requires
  dc_device_t* cpu;  // runs the kernels
} proxy_device_t;

// What the last build saw, for the tests.
static struct {
  dc_lowered_program_t lowered;  // pointers valid during the build only
  char entries[4][64];
  bool reaches_barrier[4];
  bool checked;
  bool flags_fast_math;
  char options[64];
  char name[64];
  bool text_has_fault_record;
  bool text_has_wide_local_block;
  char text[1 << 16];  // the lowered text (cut to fit)
  int builds;
} seen;

// Records what the build looks like from outside the tree.
static void record_build(const dc_program_build_t* b,
                         const dc_lowered_program_t* lowered) {
  ++seen.builds;
  seen.lowered = *lowered;
  for (size_t i = 0; i < lowered->kernel_count && i < 4; ++i) {
    snprintf(seen.entries[i], sizeof(seen.entries[i]), "%s",
             lowered->kernels[i].entry);
    seen.reaches_barrier[i] = lowered->kernels[i].reaches_barrier;
  }
  seen.checked = b->checked;
  seen.flags_fast_math = b->flags.fast_math;
  snprintf(seen.options, sizeof(seen.options), "%s", b->options);
  snprintf(seen.name, sizeof(seen.name), "%s", b->name);
  seen.text_has_fault_record = strstr(lowered->text, "dc_fault") != NULL;
  seen.text_has_wide_local_block =
      strstr(lowered->text, "__local ulong16* dc_lmem") != NULL;
  snprintf(seen.text, sizeof(seen.text), "%s", lowered->text);
}

static dc_status_t proxy_build(dc_device_t* device, dc_program_build_t* b) {
  proxy_device_t* proxy = (proxy_device_t*)device;
  dc_lowered_program_t lowered;
  dc_status_t st =
      dc_program_build_lower(b, DC_KERNEL_DIALECT_OPENCL_C, &lowered);
  if (st != DC_OK) return st;
  record_build(b, &lowered);
  if (lowered.kernel_count != dc_program_kernel_count(b->program)) {
    return dc_program_build_error(b, 0, "lowered %zu kernels of %zu",
                                  lowered.kernel_count,
                                  dc_program_kernel_count(b->program));
  }
  // A stand-in for a device compiler that rejects a program.
  if (strstr(lowered.text, "refused_by_the_device") != NULL) {
    return dc_program_build_error(b, 2, "the device refuses '%s'",
                                  "refused_by_the_device");
  }
  char* source = malloc(b->source_length + 1);
  if (source == NULL) return DC_ERR_OUT_OF_MEMORY;
  memcpy(source, b->source, b->source_length);
  source[b->source_length] = '\0';
  dc_program_params_t params = {.source = source,
                                .name = b->name,
                                .options = b->options};
  dc_program_t* cpu_program = NULL;
  st = dc_program_create(proxy->cpu, &params, &cpu_program);
  free(source);
  if (st != DC_OK) return st;
  dc_program_set_backend_data(b->program, cpu_program);
  for (size_t i = 0; i < lowered.kernel_count && st == DC_OK; ++i) {
    dc_kernel_t* k = NULL;
    dc_kernel_t* cpu_kernel = NULL;
    st = dc_program_kernel(b->program, i, &k);
    if (st == DC_OK) st = dc_program_kernel(cpu_program, i, &cpu_kernel);
    dc_kernel_binding_t binding = {
        .data = cpu_kernel,
        .execution = "proxy",
        .static_local_size = 64 * (i + 1),
        .reaches_barrier = lowered.kernels[i].reaches_barrier};
    if (st == DC_OK) st = dc_kernel_bind(k, &binding);
  }
  return st;
}

static void proxy_destroy_program(dc_device_t* device, dc_program_t* p) {
  (void)device;
  dc_program_release(dc_program_backend_data(p));
}

// Stages each buffer argument into a CPU buffer, runs the CPU kernel and
// copies the buffers back.
static dc_status_t proxy_dispatch(dc_device_t* device, dc_kernel_t* kernel,
                                  const dc_launch_t* launch,
                                  void* const* args, const size_t* lengths) {
  proxy_device_t* proxy = (proxy_device_t*)device;
  dc_kernel_t* cpu_kernel = dc_kernel_backend_data(kernel);
  dc_kernel_info_t info;
  dc_status_t st = dc_kernel_info(kernel, &info);
  if (st != DC_OK || info.arg_count > 8) return DC_ERR_UNSUPPORTED;
  dc_arg_t cpu_args[8];
  dc_buffer_t* staged[8] = {0};
  for (size_t i = 0; i < info.arg_count && st == DC_OK; ++i) {
    const dc_kernel_arg_info_t* a = dc_kernel_arg_info(kernel, i);
    if (a->kind == DC_ARG_BUFFER) {
      dc_buffer_params_t bp = {.dtype = a->dtype,
                               .length = lengths[i] / dc_dtype_size(a->dtype)};
      st = dc_buffer_create(proxy->cpu, &bp, &staged[i]);
      if (st == DC_OK) st = dc_buffer_write(staged[i], 0, args[i], bp.length);
      cpu_args[i] = dc_arg_buffer(staged[i]);
    } else if (a->kind == DC_ARG_SCALAR) {
      cpu_args[i] = dc_arg_value(a->dtype, a->vector_width, args[i]);
    } else {
      st = DC_ERR_UNSUPPORTED;
    }
  }
  dc_dispatch_t d = {.dims = launch->dims};
  for (uint32_t i = 0; i < 3; ++i) {
    d.global[i] = launch->global[i];
    d.offset[i] = launch->offset[i];
    d.local[i] = launch->local[i];
  }
  if (st == DC_OK) st = dc_kernel_dispatch(cpu_kernel, &d, cpu_args,
                                           info.arg_count);
  for (size_t i = 0; i < info.arg_count; ++i) {
    if (staged[i] == NULL) continue;
    size_t n = dc_buffer_length(staged[i]);
    if (st == DC_OK) st = dc_buffer_read(staged[i], 0, args[i], n);
    dc_buffer_release(staged[i]);
  }
  return st;
}

static const dc_device_kernel_ops_t kKernels = {
    .program_build = proxy_build,
    .program_destroy = proxy_destroy_program,
    .dispatch = proxy_dispatch,
};

static void proxy_destroy(dc_device_t* device) { free(device); }

static const dc_device_vtable_t kVtable = {
    .destroy = proxy_destroy,
    .memory = &dc_test_fake_memory,  // host memory (check_util.h)
    .kernels = &kKernels,
};

static dc_status_t proxy_enumerate(dc_context_t* ctx, void* user_data) {
  (void)user_data;
  dc_device_t* cpu = NULL;
  dc_status_t st = dc_context_find_device(ctx, "cpu", &cpu);
  if (st != DC_OK) return st;
  proxy_device_t* proxy = calloc(1, sizeof(*proxy));
  if (proxy == NULL) return DC_ERR_OUT_OF_MEMORY;
  proxy->cpu = cpu;
  dc_device_info_t info = dc_test_fake_info("proxy:0");
  st = dc_device_initialize(&proxy->base, &kVtable, ctx, &info);
  if (st == DC_OK) st = dc_context_add_device(ctx, &proxy->base);
  if (st != DC_OK) free(proxy);
  return st;
}

//===-- Fixture ---------------------------------------------------------===//

static dc_context_t* ctx;
static dc_device_t* proxy;

static void setup(void) {
  memset(&seen, 0, sizeof(seen));
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "cpu,proxy";
  DC_CK_OK(dc_context_create(&p, &ctx));
  DC_CK_OK(dc_context_find_device(ctx, "proxy:0", &proxy));
}

static void teardown(void) {
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
  dc_context_release(ctx);
}

static const char* kSource =
    "void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "kernel void scale(global float* a, float s) {\n"
    "  a[get_global_id(0)] *= s;\n"
    "}\n"
    "kernel void with_helper_barrier(global int* a) { sync(); a[0] = 1; }\n";

static dc_program_t* build(const char* source, const char* options) {
  dc_program_params_t params = {
      .source = source, .name = "proxied.cl", .options = options};
  dc_program_t* program = NULL;
  DC_CK_OK(dc_program_create(proxy, &params, &program));
  return program;
}

//===-- Tests -----------------------------------------------------------===//

START_TEST(test_registered_backend_builds_and_runs_kernels) {
  dc_program_t* program = build(kSource, NULL);
  dc_kernel_t* scale = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "scale", &scale));
  dc_buffer_t* a = NULL;
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_F32, .length = 1000};
  DC_CK_OK(dc_buffer_create(proxy, &bp, &a));
  float host[1000];
  for (int i = 0; i < 1000; ++i) host[i] = (float)i;
  DC_CK_OK(dc_buffer_write(a, 0, host, 1000));
  dc_arg_t args[] = {dc_arg_buffer(a), dc_arg_f32(2.5f)};
  dc_dispatch_t d = {.dims = 1, .global = {1000}};
  DC_CK_OK(dc_kernel_dispatch(scale, &d, args, 2));
  DC_CK_OK(dc_buffer_read(a, 0, host, 1000));
  for (int i = 0; i < 1000; ++i) ck_assert_float_eq(host[i], 2.5f * i);
  // What the backend bound is what the kernel reports.
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(scale, &info));
  ck_assert_str_eq(info.execution, "proxy");
  ck_assert_uint_eq(info.static_local_size, 64);
  ck_assert(!info.uses_barrier);
  dc_buffer_release(a);
  dc_program_release(program);
}
END_TEST

START_TEST(test_the_build_carries_the_program_lowered_to_opencl_c) {
  dc_program_t* program = build(kSource, "-cl-fast-relaxed-math -D X=1");
  ck_assert_int_eq(seen.builds, 1);
  ck_assert_uint_eq(seen.lowered.kernel_count, 2);
  ck_assert_str_eq(seen.name, "proxied.cl");
  ck_assert_str_eq(seen.options, "-cl-fast-relaxed-math -D X=1");
  ck_assert(seen.flags_fast_math);
  ck_assert(!seen.checked);
  ck_assert(!seen.text_has_fault_record);
  ck_assert_uint_eq(seen.lowered.checked_state_size, 0);
  // Entries are distinct names the text defines, in the kernels' order.
  ck_assert_str_ne(seen.entries[0], seen.entries[1]);
  ck_assert_ptr_nonnull(strstr(seen.entries[0], "scale"));
  ck_assert_ptr_nonnull(strstr(seen.entries[1], "with_helper_barrier"));
  // A barrier reached through a helper is the lowering's to say.
  ck_assert(!seen.reaches_barrier[0]);
  ck_assert(seen.reaches_barrier[1]);
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "with_helper_barrier", &k));
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert(info.uses_barrier);
  ck_assert_uint_eq(info.static_local_size, 128);
  dc_program_release(program);
}
END_TEST

START_TEST(test_local_arguments_share_one_block_of_the_widest_alignment) {
  // Typed as its widest member, the block starts 128-byte aligned on every
  // driver; declared uchar, NVIDIA's may start it at an odd byte.
  dc_program_t* program = build(
      "kernel void k(global int* o, local int* t, local double* u) {\n"
      "  t[0] = 1; u[0] = 2.0; o[0] = t[0] + (int)u[0];\n"
      "}\n",
      NULL);
  ck_assert(seen.text_has_wide_local_block);
  dc_program_release(program);
  program = build(kSource, NULL);  // no __local pointers, no block
  ck_assert(!seen.text_has_wide_local_block);
  dc_program_release(program);
}
END_TEST

// Where OpenCL drivers were found to differ from OpenCL C (NVIDIA's: the
// differential tests), the lowering calls the prelude's forms instead:
// lgamma_r, mad_sat of longs, saturating conversions of floating values.
// The same built-ins of other types stay the driver's.
START_TEST(test_builtins_drivers_get_wrong_go_through_the_prelude) {
  dc_program_t* program = build(
      "kernel void k(global long* o, global float* f, global int* s,\n"
      "              global double* d) {\n"
      "  long la = o[0]; int ia = s[0]; ptrdiff_t pa = la;\n"
      "  o[1] = mad_sat(la, la, la);\n"
      "  o[5] = mad_sat(pa, pa, pa);\n"
      "  s[1] = mad_sat(ia, ia, ia);\n"
      "  o[2] = convert_long_sat(f[0]);\n"
      "  s[2] = convert_int4_sat_rte((double4)(d[0])).y;\n"
      "  s[3] = convert_int_sat(la);\n"
      "  f[1] = lgamma_r(f[2], &s[4]);\n"
      "}\n",
      NULL);
  ck_assert_ptr_nonnull(strstr(seen.text, "= dc_mad_sat(dcu_la,"));
  ck_assert_ptr_nonnull(strstr(seen.text, "dc_mad_sat(dcu_pa,"));
  ck_assert_ptr_nonnull(strstr(seen.text, "= mad_sat(dcu_ia,"));
  // The driver's conversion, which may be a macro, of NaN made 0.
  ck_assert_ptr_nonnull(strstr(seen.text, "= convert_long_sat(dc_nan0("));
  ck_assert_ptr_nonnull(strstr(seen.text, "convert_int4_sat_rte(dc_nan0("));
  ck_assert_ptr_nonnull(strstr(seen.text, "= convert_int_sat(dcu_la)"));
  ck_assert_ptr_nonnull(strstr(seen.text, "= dc_lgamma_r("));
  // OpenCL C 1.2 has no variadic macros, and NVIDIA's compiler refuses
  // them (pocl's takes them): the prelude must not use any.
  ck_assert_ptr_null(strstr(seen.text, "__VA_ARGS__"));
  dc_program_release(program);
}
END_TEST

// Reads the file at |path| into a malloc'd string (NULL when absent).
static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char* text = calloc(1, 1 << 20);
  ck_assert_ptr_nonnull(text);
  size_t n = fread(text, 1, (1 << 20) - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

// DC_KERNEL_DUMP keeps what every lowering gave a device's compiler, named
// by the build and the dialect; a directory it cannot write to leaves the
// build as it was.
START_TEST(test_kernel_dump_keeps_each_lowering) {
  char dir[512], path[600];
  dc_test_make_temp_dir(dir, sizeof(dir), "dc-dump");
  setenv("DC_KERNEL_DUMP", dir, 1);
  dc_program_t* program = build(kSource, NULL);
  dc_program_release(program);
  snprintf(path, sizeof(path), "%s/proxied.cl.cl", dir);
  char* cl = read_text(path);
  ck_assert_msg(cl != NULL, "no %s", path);
  ck_assert_ptr_nonnull(strstr(cl, "__kernel void"));
  ck_assert_ptr_nonnull(strstr(cl, "with_helper_barrier"));
  free(cl);
  setenv("DC_KERNEL_DUMP", "/nonexistent/dc-dump", 1);
  program = build(kSource, NULL);
  dc_program_release(program);
  char long_dir[1100];  // longer than any path the dump writes
  memset(long_dir, 'd', sizeof(long_dir) - 1);
  long_dir[0] = '/';
  long_dir[sizeof(long_dir) - 1] = '\0';
  setenv("DC_KERNEL_DUMP", long_dir, 1);
  program = build(kSource, NULL);
  dc_program_release(program);
  unsetenv("DC_KERNEL_DUMP");
  dc_test_remove_tree(dir);
}
END_TEST

START_TEST(test_a_checked_build_lowers_with_its_fault_record) {
  dc_program_t* program = build(kSource, "-dc-checked");
  ck_assert(seen.checked);
  ck_assert(seen.text_has_fault_record);
  ck_assert_uint_ge(seen.lowered.checked_state_size,
                    128 + seen.lowered.checked_local_scratch);
  ck_assert_uint_ge(seen.lowered.checked_local_scratch, 128);
  dc_program_release(program);
}
END_TEST

START_TEST(test_device_compiler_errors_reach_the_caller) {
  dc_program_params_t params = {
      .source = "kernel void k(global int* a) {\n"
                "  int refused_by_the_device = 1; a[0] = refused_by_the_device;\n"
                "}\n",
      .name = "refused.cl"};
  dc_program_t* program = NULL;
  ck_assert_int_eq(dc_program_create(proxy, &params, &program),
                   DC_ERR_COMPILE);
  ck_assert_ptr_null(program);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "refused.cl:2"));
  ck_assert_ptr_nonnull(
      strstr(dc_last_error(), "the device refuses 'refused_by_the_device'"));
}
END_TEST

// OpenCL C 1.2 cannot synchronise a grid: the lowering leaves it out, and
// a device that builds the dialect reports max_cooperative_groups 0, so
// the engine refuses to dispatch such a kernel.
START_TEST(test_grid_sync_kernels_build_but_never_run) {
  ck_assert_uint_eq(dc_device_info(proxy)->max_cooperative_groups, 0);
  dc_program_t* program = build(
      "kernel void k(global int* a) { dc_grid_sync(); a[0] = 1; }\n", NULL);
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "k", &k));
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert(info.uses_grid_sync);
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = 1};
  dc_buffer_t* a = NULL;
  DC_CK_OK(dc_buffer_create(proxy, &bp, &a));
  dc_arg_t args[] = {dc_arg_buffer(a)};
  dc_dispatch_t d = {.dims = 1, .global = {1}};
  ck_assert_int_ne(dc_kernel_dispatch(k, &d, args, 1), DC_OK);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "cooperative"));
  dc_buffer_release(a);
  dc_program_release(program);
}
END_TEST

START_TEST(test_build_functions_refuse_what_is_not_a_build) {
  dc_lowered_program_t lowered;
  ck_assert_int_eq(
      dc_program_build_lower(NULL, DC_KERNEL_DIALECT_OPENCL_C, &lowered),
      DC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "dc_program_build_lower"));
  // A struct made up by the caller is no build in progress.
  dc_program_build_t fake = {0};
  ck_assert_int_eq(
      dc_program_build_lower(&fake, DC_KERNEL_DIALECT_OPENCL_C, &lowered),
      DC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(
      dc_program_build_lower(&fake, DC_KERNEL_DIALECT_OPENCL_C, NULL),
      DC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(dc_program_build_error(&fake, 1, "x"),
                   DC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(dc_program_build_error(NULL, 1, "x"),
                   DC_ERR_INVALID_ARGUMENT);
  // A built program's kernels are bound once, during their build.
  dc_program_t* program = build(kSource, NULL);
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "scale", &k));
  dc_kernel_binding_t binding = {.execution = "other"};
  ck_assert_int_eq(dc_kernel_bind(k, &binding), DC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "dc_kernel_bind"));
  ck_assert_int_eq(dc_kernel_bind(NULL, &binding), DC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(dc_kernel_bind(k, NULL), DC_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(dc_kernel_backend_data(k));
  ck_assert_ptr_null(dc_kernel_backend_data(NULL));
  ck_assert_ptr_nonnull(dc_program_backend_data(program));
  ck_assert_ptr_null(dc_program_backend_data(NULL));
  dc_program_set_backend_data(NULL, NULL);  // ignored
  dc_program_release(program);
}
END_TEST

START_TEST(test_fault_records_become_statuses_naming_the_kernel) {
  dc_program_t* program = build(kSource, NULL);
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "scale", &k));
  dc_kernel_fault_t f = {.set = 1, .kind = DC_KERNEL_FAULT_POINTER,
                         .arg = 0, .line = 3, .index = 4000, .length = 4000,
                         .size = 4};
  ck_assert_int_eq(dc_kernel_fault_status(k, "my_fn", &f), DC_ERR_OUT_OF_RANGE);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "my_fn: kernel 'scale'"));
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "index 1000 of argument 0"));
  f.kind = DC_KERNEL_FAULT_STOPPED;
  ck_assert_int_eq(dc_kernel_fault_status(k, NULL, &f), DC_ERR_CANCELLED);
  f.kind = DC_KERNEL_FAULT_WATCHDOG;
  ck_assert_int_eq(dc_kernel_fault_status(k, NULL, &f),
                   DC_ERR_DEADLINE_EXCEEDED);
  f.kind = 99;
  ck_assert_int_eq(dc_kernel_fault_status(k, NULL, &f), DC_ERR_INTERNAL);
  ck_assert_int_eq(dc_kernel_fault_status(k, NULL, NULL),
                   DC_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(dc_kernel_fault_status(NULL, NULL, &f),
                   DC_ERR_INVALID_ARGUMENT);
  dc_program_release(program);
}
END_TEST

static Suite* suite(void) {
  dc_backend_t backend = {"proxy", proxy_enumerate, NULL};
  if (dc_backend_register(&backend) != DC_OK) abort();
  Suite* s = suite_create("backend_build");
  TCase* tc = tcase_create("build");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_registered_backend_builds_and_runs_kernels);
  tcase_add_test(tc, test_the_build_carries_the_program_lowered_to_opencl_c);
  tcase_add_test(tc,
                 test_local_arguments_share_one_block_of_the_widest_alignment);
  tcase_add_test(tc, test_builtins_drivers_get_wrong_go_through_the_prelude);
  tcase_add_test(tc, test_kernel_dump_keeps_each_lowering);
  tcase_add_test(tc, test_a_checked_build_lowers_with_its_fault_record);
  tcase_add_test(tc, test_device_compiler_errors_reach_the_caller);
  tcase_add_test(tc, test_grid_sync_kernels_build_but_never_run);
  tcase_add_test(tc, test_build_functions_refuse_what_is_not_a_build);
  tcase_add_test(tc, test_fault_records_become_statuses_naming_the_kernel);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(suite)

// check_dispatch.c: validated dispatch (every rejected dispatch and its
// message), automatic and autotuned group sizes, bounds checking, native
// kernels, and the built-in kernels and operations.
//
// Device-generic: every test runs on the device under test (dut; see
// check_util.h) except those of the "cpu" test case, which are about the
// CPU device itself (native kernels, the fake backend).
// SPDX-License-Identifier: MIT
#include <math.h>

#include "kernel_fixture.h"

//===-- Fixture (kernel_fixture.h) and other contexts -------------------===//

// A quiet context on the test's cache, with |checked| and |autotune|.
static dc_context_t* context_with(bool checked, bool autotune) {
  dc_test_kernel_options_t o = {.checked = checked,
                                .autotune = autotune};
  return dc_test_kernel_context(&o);
}

//===-- Helpers ---------------------------------------------------------===//

static dc_buffer_t* new_buffer(dc_device_t* device, dc_dtype_t dtype,
                               size_t n) {
  return dc_test_buffer_new(device, dtype, n, "dispatch");
}

static void fill_f32(dc_buffer_t* b, float v) {
  DC_CK_OK(dc_buffer_fill(b, 0, dc_buffer_length(b), &v));
}

static void fill_i32(dc_buffer_t* b, int32_t v) {
  DC_CK_OK(dc_buffer_fill(b, 0, dc_buffer_length(b), &v));
}

static dc_dispatch_t grid1(size_t global, size_t local) {
  dc_dispatch_t g = {.dims = 1, .global = {global}, .local = {local}};
  return g;
}

//===-- errors: every invalid dispatch ----------------------------------===//

static const char kValidate[] =
    "__kernel void saxpy(__global const float* x, __global float* y,\n"
    "                    float a, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n"
    "__kernel void with_local(__global int* o, __local int* t) {\n"
    "  t[get_local_id(0)] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] = t[0];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n"
    "void fixed(__global int* o) { o[0] = 1; }\n"
    "__kernel void vec4(__global float4* v, int4 k) {\n"
    "  v[get_global_id(0)] += (float4)(k.x);\n"
    "}\n"
    "__kernel void none(void) {}\n";

// Asserts that dispatching |k| fails with INVALID_ARGUMENT and a message
// holding |want| and the kernel's name.
#define EXPECT_REJECTED(k, grid, args, n, want)                           \
  do {                                                                    \
    dc_dispatch_t g_ = (grid);                                            \
    DC_CK_FAIL(dc_kernel_dispatch((k), &g_, (args), (n)),                 \
               DC_ERR_INVALID_ARGUMENT, (want));                          \
    DC_CK_ERROR_HAS("dc_kernel_dispatch: ");                              \
  } while (0)

// EXPECT_REJECTED with the four arguments |good| but argument |i| replaced
// by |arg|.
#define EXPECT_ARG_REJECTED(k, grid, good, i, arg, want)                  \
  do {                                                                    \
    dc_arg_t a_[4];                                                       \
    memcpy(a_, (good), sizeof(a_));                                       \
    a_[i] = (arg);                                                        \
    EXPECT_REJECTED((k), (grid), a_, 4, (want));                          \
  } while (0)

START_TEST(test_dispatch_rejects_bad_arguments) {
  dc_program_t* p = build_on(dut, "validate.cl", kValidate, NULL);
  dc_kernel_t* saxpy = kernel_of(p, "saxpy");
  dc_buffer_t* x = new_buffer(dut, DC_DTYPE_F32, 64);
  dc_buffer_t* y = new_buffer(dut, DC_DTYPE_F32, 64);
  dc_buffer_t* wrong = new_buffer(dut, DC_DTYPE_I32, 64);
  fill_f32(x, 1.0f);
  fill_f32(y, 5.0f);
  dc_arg_t good[4] = {dc_arg_buffer(x), dc_arg_buffer(y), dc_arg_f32(2.0f),
                      dc_arg_u32(64)};
  dc_dispatch_t g = grid1(64, 0);

  EXPECT_REJECTED(saxpy, g, good, 3,
                  "kernel 'saxpy' expects 4 argument(s) (x, y, a, n), got 3");
  EXPECT_REJECTED(saxpy, g, good, 5,
                  "kernel 'saxpy' expects 4 argument(s) (x, y, a, n), got 5");
  EXPECT_REJECTED(saxpy, g, NULL, 4,
                  "kernel 'saxpy' expects 4 argument(s) (x, y, a, n), got 0");

  EXPECT_ARG_REJECTED(saxpy, g, good, 2, dc_arg_buffer(x),
                      "kernel 'saxpy': argument 2 'a' (float): expected a "
                      "value, got a buffer");
  EXPECT_ARG_REJECTED(saxpy, g, good, 0, dc_arg_f32(1.0f),
                      "kernel 'saxpy': argument 0 'x' (__global const "
                      "float*): expected a buffer, got a value");
  EXPECT_ARG_REJECTED(saxpy, g, good, 0, dc_arg_local(64),
                      "argument 0 'x' (__global const float*): expected a "
                      "buffer, got a __local size");
  EXPECT_ARG_REJECTED(saxpy, g, good, 0, dc_arg_buffer(wrong),
                      "kernel 'saxpy': argument 0 'x' (__global const "
                      "float*): the buffer holds i32, the kernel expects "
                      "f32");
  EXPECT_ARG_REJECTED(saxpy, g, good, 0, dc_arg_buffer(NULL),
                      "kernel 'saxpy': argument 0 'x' (__global const "
                      "float*): the buffer is NULL or a released buffer");
  EXPECT_ARG_REJECTED(saxpy, g, good, 2, dc_arg_f64(2.0),
                      "kernel 'saxpy': argument 2 'a' (float): got a value "
                      "of f64");
  EXPECT_ARG_REJECTED(saxpy, g, good, 3, dc_arg_i32(64),
                      "kernel 'saxpy': argument 3 'n' (uint): got a value "
                      "of i32");

  // A released buffer.
  dc_buffer_t* gone = new_buffer(dut, DC_DTYPE_F32, 64);
  dc_buffer_release(gone);
  EXPECT_ARG_REJECTED(saxpy, g, good, 1, dc_arg_buffer(gone),
                      "kernel 'saxpy': argument 1 'y' (__global float*): the "
                      "buffer is NULL or a released buffer");

  // Vectors: the value's width and the buffer's length in whole vectors.
  dc_kernel_t* vec4 = kernel_of(p, "vec4");
  dc_buffer_t* v10 = new_buffer(dut, DC_DTYPE_F32, 10);
  int32_t k4[4] = {1, 2, 3, 4};
  dc_arg_t va[2] = {dc_arg_buffer(v10), dc_arg_value(DC_DTYPE_I32, 4, k4)};
  EXPECT_REJECTED(vec4, grid1(2, 0), va, 2,
                  "kernel 'vec4': argument 0 'v' (__global float4*): the "
                  "buffer's 10 elements are not whole f32x4 vectors");
  dc_buffer_t* v12 = new_buffer(dut, DC_DTYPE_F32, 12);
  va[0] = dc_arg_buffer(v12);
  va[1] = dc_arg_i32(1);
  EXPECT_REJECTED(vec4, grid1(3, 0), va, 2,
                  "kernel 'vec4': argument 1 'k' (int4): got a value of i32");
  va[1] = dc_arg_value(DC_DTYPE_I32, 2, k4);
  EXPECT_REJECTED(vec4, grid1(3, 0), va, 2, "got a value of i32x2");
  va[1] = dc_arg_value(DC_DTYPE_I32, 4, k4);
  fill_f32(v12, 0.5f);
  DC_CK_OK(dc_kernel_dispatch(vec4, &(dc_dispatch_t){.dims = 1,
                                                      .global = {3}},
                              va, 2));
  const float* v = contents(v12);
  for (int i = 0; i < 12; ++i) ck_assert(v[i] == 1.5f);

  dc_kernel_t* with_local = kernel_of(p, "with_local");
  dc_buffer_t* o = new_buffer(dut, DC_DTYPE_I32, 64);
  dc_arg_t la[2] = {dc_arg_buffer(o), dc_arg_local(0)};
  EXPECT_REJECTED(with_local, grid1(64, 16), la, 2,
                  "kernel 'with_local': argument 1 't' (__local int*): the "
                  "__local size is 0");
  la[1] = dc_arg_i32(5);
  EXPECT_REJECTED(with_local, grid1(64, 16), la, 2,
                  "argument 1 't' (__local int*): expected a __local size, "
                  "got a value");

  dc_kernel_t* none = kernel_of(p, "none");
  EXPECT_REJECTED(none, grid1(4, 0), good, 1,
                  "kernel 'none' expects 0 argument(s) (), got 1");
  DC_CK_OK(dc_kernel_dispatch(none, &g, NULL, 0));

  DC_CK_FAIL(dc_kernel_dispatch(saxpy, NULL, good, 4),
             DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_kernel_dispatch(NULL, &g, good, 4), DC_ERR_INVALID_ARGUMENT,
             "'kernel' is NULL");

  // Nothing of the above ran.
  v = contents(y);
  for (int i = 0; i < 64; ++i) ck_assert(v[i] == 5.0f);
  DC_CK_OK(dc_kernel_dispatch(saxpy, &g, good, 4));
  v = contents(y);
  for (int i = 0; i < 64; ++i) ck_assert(v[i] == 7.0f);

  dc_buffer_release(x);
  dc_buffer_release(y);
  dc_buffer_release(wrong);
  dc_buffer_release(v10);
  dc_buffer_release(v12);
  dc_buffer_release(o);
  dc_program_release(p);
}
END_TEST

START_TEST(test_dispatch_rejects_buffers_of_other_devices) {
  dc_program_t* p = build_on(dut, "validate.cl", kValidate, NULL);
  dc_kernel_t* saxpy = kernel_of(p, "saxpy");
  dc_buffer_t* x = new_buffer(dut, DC_DTYPE_F32, 16);
  // The same device of another context is another device.
  dc_context_t* other = context_with(false, false);
  dc_buffer_t* y = new_buffer(dc_test_device(other), DC_DTYPE_F32, 16);
  fill_f32(y, 3.0f);
  dc_arg_t a[4] = {dc_arg_buffer(x), dc_arg_buffer(y), dc_arg_f32(1.0f),
                   dc_arg_u32(16)};
  char want[160];
  snprintf(want, sizeof(want),
           "kernel 'saxpy': argument 1 'y' (__global float*): the buffer "
           "lives on %s, the kernel on %s; copy it first",
           dc_device_name(dut), dc_device_name(dut));
  EXPECT_REJECTED(saxpy, grid1(16, 0), a, 4, want);
  ck_assert(((float*)contents(y))[0] == 3.0f);
  dc_buffer_release(y);
  dc_context_release(other);

  // Another device of the same context: the CPU, when it is not the
  // device under test (the "cpu" test case does this with a fake GPU).
  if (dut != cpu) {
    dc_buffer_t* on_cpu = new_buffer(cpu, DC_DTYPE_F32, 16);
    a[1] = dc_arg_buffer(on_cpu);
    snprintf(want, sizeof(want),
             "argument 1 'y' (__global float*): the buffer lives on cpu, "
             "the kernel on %s; copy it first", dc_device_name(dut));
    EXPECT_REJECTED(saxpy, grid1(16, 0), a, 4, want);
    dc_buffer_release(on_cpu);
  }
  dc_buffer_release(x);
  dc_program_release(p);
}
END_TEST

// CPU only: a fake GPU's buffer, and programs on a device that runs no
// kernels.
START_TEST(test_dispatch_rejects_buffers_of_a_fake_device) {
  // A device of another kind in the same context.
  dc_context_t* fakes = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_device(fakes, 1, &fake));
  dc_program_t* fp = build_on(dc_test_cpu(fakes), "validate.cl", kValidate,
                              NULL);
  dc_buffer_t* fy = new_buffer(fake, DC_DTYPE_F32, 16);
  dc_buffer_t* fx = new_buffer(dc_test_cpu(fakes), DC_DTYPE_F32, 16);
  dc_arg_t fa[4] = {dc_arg_buffer(fx), dc_arg_buffer(fy), dc_arg_f32(1.0f),
                    dc_arg_u32(16)};
  EXPECT_REJECTED(kernel_of(fp, "saxpy"), grid1(16, 0), fa, 4,
                  "argument 1 'y' (__global float*): the buffer lives on "
                  "fake:0, the kernel on cpu; copy it first");
  // Programs build only for devices that run kernels.
  dc_program_params_t pp = {.source = kValidate};
  dc_program_t* none = NULL;
  DC_CK_FAIL(dc_program_create(fake, &pp, &none), DC_ERR_UNSUPPORTED,
             "device fake:0 does not run kernels");
  dc_buffer_release(fx);
  dc_buffer_release(fy);
  dc_program_release(fp);
  dc_context_release(fakes);
}
END_TEST

START_TEST(test_dispatch_rejects_bad_grids) {
  dc_program_t* p = build_on(dut, "validate.cl", kValidate, NULL);
  dc_kernel_t* saxpy = kernel_of(p, "saxpy");
  const dc_device_info_t* info = dc_device_info(dut);
  // A group twice the largest the device allows (2048 on the CPU).
  const size_t too_big = 2 * (size_t)info->max_work_group_size;
  dc_buffer_t* x = new_buffer(dut, DC_DTYPE_F32, 2 * too_big);
  dc_buffer_t* y = new_buffer(dut, DC_DTYPE_F32, 2 * too_big);
  dc_arg_t a[4] = {dc_arg_buffer(x), dc_arg_buffer(y), dc_arg_f32(1.0f),
                   dc_arg_u32((uint32_t)(2 * too_big))};
  dc_dispatch_t g = {.dims = 0, .global = {16}};
  EXPECT_REJECTED(saxpy, g, a, 4, "kernel 'saxpy': dims is 0 (must be 1, 2 "
                                  "or 3)");
  g.dims = 4;
  EXPECT_REJECTED(saxpy, g, a, 4, "kernel 'saxpy': dims is 4");
  EXPECT_REJECTED(saxpy, grid1(0, 0), a, 4,
                  "kernel 'saxpy': the grid is empty (global size of "
                  "dimension 0 is 0)");
  g = (dc_dispatch_t){.dims = 3, .global = {4, 4, 0}};
  EXPECT_REJECTED(saxpy, g, a, 4, "the grid is empty (global size of "
                                  "dimension 2 is 0)");
  EXPECT_REJECTED(saxpy, grid1(10, 4), a, 4,
                  "kernel 'saxpy': global size 10 of dimension 0 is not a "
                  "multiple of the work-group size 4");
  g = (dc_dispatch_t){.dims = 2, .global = {16, 9}, .local = {4, 2}};
  EXPECT_REJECTED(saxpy, g, a, 4, "global size 9 of dimension 1 is not a "
                                  "multiple of the work-group size 2");
  char want[160];
  snprintf(want, sizeof(want),
           "kernel 'saxpy': a work-group of %zu work-items is more than %s "
           "allows (%u)", too_big, info->name, info->max_work_group_size);
  EXPECT_REJECTED(saxpy, grid1(2 * too_big, too_big), a, 4, want);
  g = (dc_dispatch_t){.dims = 2, .global = {64, too_big / 32},
                      .local = {64, too_big / 64}};
  snprintf(want, sizeof(want), "a work-group of %zu work-items", too_big);
  EXPECT_REJECTED(saxpy, g, a, 4, want);
  g = (dc_dispatch_t){.dims = 2, .global = {16, 16}, .local = {4, 0}};
  EXPECT_REJECTED(saxpy, g, a, 4,
                  "kernel 'saxpy': work-group size of dimension 1 is 0 "
                  "(give every dimension, or none)");
  g = (dc_dispatch_t){.dims = 3, .global = {4, 4, 4}, .local = {0, 0, 2}};
  EXPECT_REJECTED(saxpy, g, a, 4, "work-group size of dimension 0 is 0");

  // __local memory beyond the device's.
  dc_kernel_t* with_local = kernel_of(p, "with_local");
  dc_buffer_t* o = new_buffer(dut, DC_DTYPE_I32, 64);
  dc_arg_t la[2] = {dc_arg_buffer(o),
                    dc_arg_local(info->local_memory_size + 1)};
  snprintf(want, sizeof(want), "; %s has %zu", info->name,
           info->local_memory_size);
  EXPECT_REJECTED(with_local, grid1(64, 16), la, 2,
                  "kernel 'with_local' needs ");
  DC_CK_ERROR_HAS("bytes of __local memory per work-group");
  DC_CK_ERROR_HAS(want);
  la[1] = dc_arg_local(info->local_memory_size / 2);  // fits
  DC_CK_OK(dc_kernel_dispatch(with_local, &(dc_dispatch_t){.dims = 1,
                                                           .global = {64},
                                                           .local = {16}},
                              la, 2));

  // reqd_work_group_size(8, 2, 1).
  dc_kernel_t* fixed = kernel_of(p, "fixed");
  dc_arg_t fa = dc_arg_buffer(o);
  g = (dc_dispatch_t){.dims = 2, .global = {16, 4}, .local = {4, 4}};
  EXPECT_REJECTED(fixed, g, &fa, 1,
                  "kernel 'fixed' requires work-groups of 8x2x1 "
                  "(reqd_work_group_size)");
  g = (dc_dispatch_t){.dims = 1, .global = {16}, .local = {16}};
  EXPECT_REJECTED(fixed, g, &fa, 1, "requires work-groups of 8x2x1");
  g = (dc_dispatch_t){.dims = 2, .global = {16, 4}, .local = {8, 2}};
  DC_CK_OK(dc_kernel_dispatch(fixed, &g, &fa, 1));
  g.local[0] = g.local[1] = 0;  // the engine takes the required size
  DC_CK_OK(dc_kernel_dispatch(fixed, &g, &fa, 1));
  g = (dc_dispatch_t){.dims = 2, .global = {12, 4}};  // 12 % 8 != 0
  EXPECT_REJECTED(fixed, g, &fa, 1, "global size 12 of dimension 0 is not a "
                                    "multiple of the work-group size 8");
  dc_buffer_release(o);
  dc_buffer_release(x);
  dc_buffer_release(y);
  dc_program_release(p);
}
END_TEST

//===-- core: the automatic group size ----------------------------------===//

static const char kCover[] =
    "__kernel void cover(__global int* hits, __global int* sizes) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1),\n"
    "         z = get_global_id(2);\n"
    "  size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;\n"
    "  atomic_inc(&hits[i]);\n"
    "  if (i == 0) {\n"
    "    sizes[0] = get_local_size(0); sizes[1] = get_local_size(1);\n"
    "    sizes[2] = get_local_size(2);\n"
    "  }\n"
    "}\n"
    "__kernel void cover_barrier(__global int* hits, __global int* sizes) {\n"
    "  size_t x = get_global_id(0), y = get_global_id(1),\n"
    "         z = get_global_id(2);\n"
    "  size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  atomic_inc(&hits[i]);\n"
    "  if (i == 0) {\n"
    "    sizes[0] = get_local_size(0); sizes[1] = get_local_size(1);\n"
    "    sizes[2] = get_local_size(2);\n"
    "  }\n"
    "}\n";

// Dispatches |k| over |global| with the group size left to the engine and
// checks that every work-item ran once and that the group divides the grid.
static void check_cover(dc_kernel_t* k, uint32_t dims, const size_t* global,
                        size_t* out_local) {
  size_t items = 1;
  for (uint32_t d = 0; d < dims; ++d) items *= global[d];
  dc_buffer_t* hits = new_buffer(dut, DC_DTYPE_I32, items);
  dc_buffer_t* sizes = new_buffer(dut, DC_DTYPE_I32, 3);
  fill_i32(hits, 0);
  fill_i32(sizes, -1);
  dc_arg_t a[2] = {dc_arg_buffer(hits), dc_arg_buffer(sizes)};
  dc_dispatch_t g = {.dims = dims};
  for (uint32_t d = 0; d < dims; ++d) g.global[d] = global[d];
  DC_CK_OK(dc_kernel_dispatch(k, &g, a, 2));
  const int32_t* h = contents(hits);
  for (size_t i = 0; i < items; ++i) {
    ck_assert_msg(h[i] == 1, "%s: item %zu ran %d time(s)", dc_kernel_name(k),
                  i, h[i]);
  }
  const int32_t* s = contents(sizes);
  size_t group = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    size_t gd = d < dims ? global[d] : 1;
    ck_assert_int_gt(s[d], 0);
    ck_assert_msg(gd % (size_t)s[d] == 0,
                  "%s: group size %d does not divide %zu in dimension %u",
                  dc_kernel_name(k), s[d], gd, d);
    group *= (size_t)s[d];
    if (out_local) out_local[d] = (size_t)s[d];
  }
  ck_assert_uint_le(group, dc_device_info(dut)->max_work_group_size);
  dc_buffer_release(hits);
  dc_buffer_release(sizes);
}

START_TEST(test_dispatch_automatic_group_size_divides_the_grid) {
  dc_program_t* p = build_on(dut, "cover.cl", kCover, NULL);
  static const struct {
    uint32_t dims;
    size_t global[3];
  } kGrids[] = {
      {1, {997}},        {1, {1}},         {1, {1000}},   {1, {3 * 1024 + 1}},
      {1, {65536}},      {2, {3, 5}},      {2, {97, 13}}, {3, {3, 5, 7}},
      {3, {64, 1, 17}},  {3, {2, 2, 2}},
  };
  for (int b = 0; b < 2; ++b) {
    dc_kernel_t* k = kernel_of(p, b ? "cover_barrier" : "cover");
    for (size_t c = 0; c < sizeof(kGrids) / sizeof(kGrids[0]); ++c) {
      size_t local[3];
      check_cover(k, kGrids[c].dims, kGrids[c].global, local);
      // The CPU keeps barrier kernels' groups small (their private
      // variables live per work-item); a GPU's occupancy calculator
      // chooses within the device's limit, which check_cover checked.
      if (b && dut_is_cpu()) {
        ck_assert_uint_le(local[0] * local[1] * local[2], 256);
      }
    }
  }
  dc_program_release(p);
}
END_TEST

//===-- core: work-item ids of 1-D launches ------------------------------===//

// A 1-D launch of a barrier-free kernel that never asks for its local or
// group id runs each chunk of groups as one loop on the CPU; the others
// keep a loop per group. Ids must come out the same either way, also
// through helpers, which is where a wrong choice would show.
static const char kIds[] =
    "size_t global_of_helper(void) { return get_global_id(0); }\n"
    "size_t local_of_helper(void) { return get_local_id(0); }\n"
    "#define RECORD(value)                                     \\\n"
    "  size_t i = get_global_id(0);                            \\\n"
    "  out[i - get_global_offset(0)] = (long)(value);          \\\n"
    "  if (i == get_global_offset(0)) size[0] = get_local_size(0)\n"
    "__kernel void by_global(__global long* out, __global long* size) {\n"
    "  RECORD(i);\n"
    "}\n"
    "__kernel void by_global_helper(__global long* out,\n"
    "                               __global long* size) {\n"
    "  RECORD(global_of_helper());\n"
    "}\n"
    "__kernel void by_group(__global long* out, __global long* size) {\n"
    "  RECORD(get_group_id(0) * 100000 + get_local_id(0));\n"
    "}\n"
    "__kernel void by_local_helper(__global long* out, __global long* size) {\n"
    "  RECORD(local_of_helper());\n"
    "}\n";

// What |kernel| records for the work-item at |index| of a grid that
// starts at |offset|, in groups of |local| (which do not count the offset).
static long expected_id(const char* kernel, size_t index, size_t offset,
                        size_t local) {
  if (strcmp(kernel, "by_group") == 0) {
    return (long)(index / local * 100000 + index % local);
  }
  if (strcmp(kernel, "by_local_helper") == 0) return (long)(index % local);
  return (long)(index + offset);
}

START_TEST(test_dispatch_one_dimensional_ids_with_and_without_groups) {
  static const char* const kKernels[] = {"by_global", "by_global_helper",
                                         "by_group", "by_local_helper"};
  static const struct {
    size_t global, local, offset;
  } kLaunches[] = {
      {1000, 0, 0},  {1000, 8, 0},   {997, 1, 5},        {4096, 64, 3},
      {3000, 0, 77}, {65536, 0, 0},  {65536, 256, 1000}, {1, 0, 9},
  };
  dc_program_t* p = build_on(dut, "ids.cl", kIds, NULL);
  for (size_t k = 0; k < sizeof(kKernels) / sizeof(kKernels[0]); ++k) {
    dc_kernel_t* kernel = kernel_of(p, kKernels[k]);
    for (size_t l = 0; l < sizeof(kLaunches) / sizeof(kLaunches[0]); ++l) {
      size_t n = kLaunches[l].global, offset = kLaunches[l].offset;
      dc_buffer_t* out = new_buffer(dut, DC_DTYPE_I64, n);
      dc_buffer_t* size = new_buffer(dut, DC_DTYPE_I64, 1);
      int64_t unset = -1;
      DC_CK_OK(dc_buffer_fill(out, 0, n, &unset));
      dc_dispatch_t g = grid1(n, kLaunches[l].local);
      g.offset[0] = offset;
      dc_arg_t a[2] = {dc_arg_buffer(out), dc_arg_buffer(size)};
      DC_CK_OK(dc_kernel_dispatch(kernel, &g, a, 2));
      const int64_t* got = contents(out);
      int64_t local = *(const int64_t*)contents(size);
      ck_assert_msg(local > 0 && n % (size_t)local == 0,
                    "%s: group size %lld for a grid of %zu", kKernels[k],
                    (long long)local, n);
      for (size_t i = 0; i < n; ++i) {
        long want = expected_id(kKernels[k], i, offset, (size_t)local);
        ck_assert_msg(got[i] == want,
                      "%s, grid %zu in groups of %lld from %zu: item %zu "
                      "recorded %lld, expected %ld",
                      kKernels[k], n, (long long)local, offset, i,
                      (long long)got[i], want);
      }
      dc_buffer_release(out);
      dc_buffer_release(size);
    }
  }
  dc_program_release(p);
}
END_TEST

//===-- core: bounds checking -------------------------------------------===//

static const char kBounds[] =
    "__kernel void scale(__global float* data, float f) {\n"
    "  size_t i = get_global_id(0);\n"
    "  data[i] = data[i] * f;\n"
    "  if (i + 1 == get_global_size(0)) data[i + 1] = -1.0f;\n"
    "}\n"
    "__kernel void reader(__global const int* src, __constant int* table,\n"
    "                     __global int* dst, int shift) {\n"
    "  int i = get_global_id(0);\n"
    "  dst[i] = src[i] + table[i + shift];\n"
    "}\n"
    "__kernel void regions(__global int* data, __local int* t) {\n"
    "  int l = get_local_id(0);\n"
    "  t[l] = l;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  data[(int)get_global_id(0) - 1] = t[l];\n"
    "}\n"
    "__kernel void fibers(__global int* data, __local int* t, int m) {\n"
    "  int l = get_local_id(0);\n"
    "  t[l] = l;\n"
    "  switch (m) { default: barrier(CLK_LOCAL_MEM_FENCE); break; }\n"
    "  data[get_global_id(0) + m] = t[l];\n"
    "}\n";

// Builds kBounds on |device| with the build |options| (the two together must
// turn checked mode on), runs its four kernels with one planted overflow
// each, and checks the message and that the neighbouring memory is
// untouched.
static void check_bounds(dc_device_t* device, const char* options) {
  dc_program_t* p = build_on(device, "bounds.cl", kBounds, options);
  // data and its neighbour are views of one buffer: an unchecked write one
  // past data's end lands in the neighbour.
  dc_buffer_t* root = new_buffer(device, DC_DTYPE_F32, 2048);
  dc_buffer_t *data = NULL, *neighbour = NULL;
  DC_CK_OK(dc_buffer_create_view(root, 0, 1024, &data));
  DC_CK_OK(dc_buffer_create_view(root, 1024, 1024, &neighbour));
  fill_f32(data, 2.0f);
  fill_f32(neighbour, 7.0f);
  dc_arg_t a[2] = {dc_arg_buffer(data), dc_arg_f32(3.0f)};
  dc_dispatch_t g = grid1(1024, 64);
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "scale"), &g, a, 2),
             DC_ERR_OUT_OF_RANGE,
             "kernel 'scale' (bounds.cl:4): index 1024 of argument 0 'data' "
             "is outside its 1024 element(s)");
  // The dispatch ends at the fault: what ran before it did its work, and
  // nothing reached the neighbour.
  const float* r = contents(root);
  for (int i = 0; i < 1024; ++i) ck_assert(r[i] == 6.0f || r[i] == 2.0f);
  for (int i = 1024; i < 2048; ++i) ck_assert(r[i] == 7.0f);

  // A read past a __constant argument, and a correct dispatch after it.
  int32_t table[8] = {0, 10, 20, 30, 40, 50, 60, 70};
  dc_buffer_t* src = new_buffer(device, DC_DTYPE_I32, 8);
  dc_buffer_t* tb = new_buffer(device, DC_DTYPE_I32, 8);
  dc_buffer_t* dst = new_buffer(device, DC_DTYPE_I32, 8);
  DC_CK_OK(dc_buffer_write(tb, 0, table, 8));
  fill_i32(src, 1);
  dc_arg_t ra[4] = {dc_arg_buffer(src), dc_arg_buffer(tb), dc_arg_buffer(dst),
                    dc_arg_i32(1)};
  g = grid1(8, 0);
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "reader"), &g, ra, 4),
             DC_ERR_OUT_OF_RANGE,
             "kernel 'reader' (bounds.cl:9): index 8 of argument 1 'table' "
             "is outside its 8 element(s)");
  ra[3] = dc_arg_i32(0);
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "reader"), &g, ra, 4));
  const int32_t* d = contents(dst);
  for (int i = 0; i < 8; ++i) ck_assert_int_eq(d[i], 1 + 10 * i);

  // A negative index, in a barrier kernel.
  dc_buffer_t* iroot = new_buffer(device, DC_DTYPE_I32, 96);
  dc_buffer_t *before = NULL, *idata = NULL;
  DC_CK_OK(dc_buffer_create_view(iroot, 0, 32, &before));
  DC_CK_OK(dc_buffer_create_view(iroot, 32, 64, &idata));
  fill_i32(iroot, -5);
  dc_arg_t ba[2] = {dc_arg_buffer(idata), dc_arg_local(16 * 4)};
  g = grid1(64, 16);
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "regions"), &g, ba, 2),
             DC_ERR_OUT_OF_RANGE,
             "kernel 'regions' (bounds.cl:15): index -1 of argument 0 "
             "'data' is outside its 64 element(s)");
  const int32_t* ir = contents(iroot);
  for (int i = 0; i < 32; ++i) ck_assert_int_eq(ir[i], -5);
  for (int i = 0; i < 63; ++i) {
    ck_assert(ir[32 + i] == -5 || ir[32 + i] == (i + 1) % 16);
  }

  // Past the end, in a kernel on fibers.
  fill_i32(iroot, -5);
  dc_arg_t fa[3] = {dc_arg_buffer(before), dc_arg_local(16 * 4),
                    dc_arg_i32(1)};
  g = grid1(32, 16);
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "fibers"), &g, fa, 3),
             DC_ERR_OUT_OF_RANGE,
             "kernel 'fibers' (bounds.cl:21): index 32 of argument 0 'data' "
             "is outside its 32 element(s)");
  ir = contents(iroot);
  ck_assert_int_eq(ir[32], -5);  // idata's first element

  dc_buffer_release(before);
  dc_buffer_release(idata);
  dc_buffer_release(iroot);
  dc_buffer_release(src);
  dc_buffer_release(tb);
  dc_buffer_release(dst);
  dc_buffer_release(data);
  dc_buffer_release(neighbour);
  dc_buffer_release(root);
  dc_program_release(p);
}

START_TEST(test_dispatch_checked_build_option) {
  check_bounds(dut, "-dc-checked");
}
END_TEST

START_TEST(test_dispatch_checked_context_parameter) {
  dc_context_t* checked = context_with(true, false);
  check_bounds(dc_test_device(checked), NULL);
  dc_context_release(checked);
}
END_TEST

START_TEST(test_dispatch_checked_environment) {
  setenv("DC_CHECKED", "1", 1);
  dc_context_t* checked = context_with(false, false);
  unsetenv("DC_CHECKED");
  check_bounds(dc_test_device(checked), NULL);
  dc_context_release(checked);
}
END_TEST

// Without bounds checking the same overflow runs, and lands in the
// neighbour: what the checks above prevent is real.
START_TEST(test_dispatch_unchecked_overflow_reaches_the_neighbour) {
  dc_program_t* p = build_on(dut, "bounds.cl", kBounds, NULL);
  dc_buffer_t* root = new_buffer(dut, DC_DTYPE_F32, 2048);
  dc_buffer_t* data = NULL;
  DC_CK_OK(dc_buffer_create_view(root, 0, 1024, &data));
  fill_f32(root, 2.0f);
  dc_arg_t a[2] = {dc_arg_buffer(data), dc_arg_f32(3.0f)};
  dc_dispatch_t g = grid1(1024, 64);
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "scale"), &g, a, 2));
  ck_assert(((float*)contents(root))[1024] == -1.0f);
  dc_buffer_release(data);
  dc_buffer_release(root);
  dc_program_release(p);
}
END_TEST

//===-- core: autotuning ------------------------------------------------===//

static const char kTune[] =
    "__kernel void inc(__global int* o) {\n"
    "  size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1))\n"
    "             * get_global_size(0) + get_global_id(0);\n"
    "  o[i] += 1;\n"
    "}\n"
    "__kernel void inc_barrier(__global int* o, __local int* t) {\n"
    "  t[get_local_id(0)] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] += t[get_local_id(0)];\n"
    "}\n";

START_TEST(test_dispatch_autotune_keeps_results_and_finds_a_size) {
  dc_context_t* tuned = context_with(false, true);
  dc_device_t* tdev = dc_test_device(tuned);
  dc_program_t* p = build_on(tdev, "tune.cl", kTune, NULL);
  static const struct {
    const char* kernel;
    uint32_t dims;
    size_t global[3];
  } kCases[] = {
      {"inc", 1, {997}},
      {"inc", 1, {4096}},
      {"inc", 2, {60, 35}},
      {"inc", 3, {3, 5, 7}},
      {"inc_barrier", 1, {1000}},
  };
  for (size_t c = 0; c < sizeof(kCases) / sizeof(kCases[0]); ++c) {
    dc_kernel_t* k = kernel_of(p, kCases[c].kernel);
    bool barrier = strcmp(kCases[c].kernel, "inc_barrier") == 0;
    size_t items = 1;
    for (uint32_t d = 0; d < kCases[c].dims; ++d) items *= kCases[c].global[d];
    dc_buffer_t* b = new_buffer(tdev, DC_DTYPE_I32, items);
    fill_i32(b, 0);
    size_t local[3];
    DC_CK_FAIL(dc_kernel_tuned_group_size(k, kCases[c].dims,
                                          kCases[c].global, local),
               DC_ERR_NOT_FOUND, "has not finished tuning this grid");
    dc_arg_t a[2] = {dc_arg_buffer(b), dc_arg_local(1024 * 4)};
    dc_dispatch_t g = {.dims = kCases[c].dims};
    memcpy(g.global, kCases[c].global, sizeof(g.global));
    bool found = false;
    for (int round = 1; round <= 12; ++round) {
      DC_CK_OK(dc_kernel_dispatch(k, &g, a, barrier ? 2 : 1));
      const int32_t* v = contents(b);
      for (size_t i = 0; i < items; ++i) {
        ck_assert_msg(v[i] == round, "%s over %zu: round %d: v[%zu] = %d",
                      kCases[c].kernel, items, round, i, v[i]);
      }
      if (dc_kernel_tuned_group_size(k, kCases[c].dims, kCases[c].global,
                                     local) == DC_OK) {
        found = true;
      }
    }
    ck_assert_msg(found, "%s: tuning never finished", kCases[c].kernel);
    for (uint32_t d = 0; d < 3; ++d) {
      size_t gd = d < kCases[c].dims ? kCases[c].global[d] : 1;
      ck_assert_uint_gt(local[d], 0);
      ck_assert_msg(gd % local[d] == 0, "tuned size %zu does not divide %zu",
                    local[d], gd);
    }
    // Another grid of the same kernel is tuned on its own.
    size_t other[3] = {kCases[c].global[0] * 2, 1, 1};
    ck_assert_int_eq(dc_kernel_tuned_group_size(k, 1, other, local),
                     DC_ERR_NOT_FOUND);
    dc_buffer_release(b);
  }
  size_t global = 8, local[3];
  DC_CK_FAIL(dc_kernel_tuned_group_size(NULL, 1, &global, local),
             DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_kernel_tuned_group_size(kernel_of(p, "inc"), 1, NULL, local),
             DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_kernel_tuned_group_size(kernel_of(p, "inc"), 1, &global,
                                        NULL),
             DC_ERR_INVALID_ARGUMENT, "");
  dc_program_release(p);
  dc_context_release(tuned);
}
END_TEST

//===-- limits: concurrent dispatches -----------------------------------===//

typedef struct dispatcher_t {
  dc_kernel_t* kernel;
  dc_buffer_t* buffer;
  size_t items;
  int rounds;
  int failures;
  char message[256];
} dispatcher_t;

static void* dispatcher_main(void* arg) {
  dispatcher_t* d = arg;
  dc_arg_t a = dc_arg_buffer(d->buffer);
  dc_dispatch_t g = {.dims = 1, .global = {d->items}};
  for (int r = 0; r < d->rounds; ++r) {
    dc_status_t st = dc_kernel_dispatch(d->kernel, &g, &a, 1);
    if (st != DC_OK && d->failures++ == 0) {
      snprintf(d->message, sizeof(d->message), "%s", dc_last_error());
    }
  }
  return NULL;
}

// Several threads dispatch one kernel at once (while it is autotuned) and
// one other kernel; each work-item must run exactly once per dispatch.
START_TEST(test_dispatch_concurrent_dispatches) {
  dc_context_t* tuned = context_with(false, true);
  dc_device_t* tdev = dc_test_device(tuned);
  dc_program_t* p = build_on(tdev, "tune.cl", kTune, NULL);
  dc_program_t* q = build_on(tdev, "cover.cl", kCover, NULL);
  enum { kThreads = 4, kRounds = 25 };
  dispatcher_t ds[kThreads];
  memset(ds, 0, sizeof(ds));
  for (int t = 0; t < kThreads; ++t) {
    ds[t].kernel = kernel_of(p, "inc");
    ds[t].items = 997 + (t % 2) * 3000;  // two grids, tuned at once
    ds[t].rounds = kRounds;
    ds[t].buffer = new_buffer(tdev, DC_DTYPE_I32, ds[t].items);
    fill_i32(ds[t].buffer, 0);
  }
  dc_test_run_threads(kThreads, dispatcher_main, ds, sizeof(ds[0]));
  for (int t = 0; t < kThreads; ++t) {
    ck_assert_msg(ds[t].failures == 0, "thread %d: %s", t, ds[t].message);
    const int32_t* v = contents(ds[t].buffer);
    for (size_t i = 0; i < ds[t].items; ++i) {
      ck_assert_msg(v[i] == kRounds, "thread %d: v[%zu] = %d", t, i, v[i]);
    }
    dc_buffer_release(ds[t].buffer);
  }
  dc_program_release(q);
  dc_program_release(p);
  dc_context_release(tuned);
}
END_TEST

//===-- core: native kernels --------------------------------------------===//

typedef struct native_state_t {
  atomic_int calls;
  atomic_int problems;
  uint32_t threads;
  size_t fail_group;  // SIZE_MAX: never fail
} native_state_t;

// out[global id] += 1 + table[0], for every work-item of the group;
// |scratch| must hold one float per work-item, private to the call.
static dc_status_t native_fill(void* user_data, const dc_native_group_t* g,
                               void* const* args) {
  native_state_t* s = user_data;
  float* out = args[0];
  uint32_t n = *(const uint32_t*)args[1];
  float* scratch = args[2];
  const int32_t* table = args[3];
  atomic_fetch_add(&s->calls, 1);
  if (g->thread_index >= s->threads) atomic_fetch_add(&s->problems, 1);
  size_t flat_group = (g->group_id[2] * (g->global_size[1] / g->local_size[1]) +
                       g->group_id[1]) *
                          (g->global_size[0] / g->local_size[0]) +
                      g->group_id[0];
  if (flat_group == s->fail_group) {
    return dc_set_error(DC_ERR_ABORTED, "native_fill: group %zu refused",
                        flat_group);
  }
  size_t items = g->local_size[0] * g->local_size[1] * g->local_size[2];
  for (size_t w = 0; w < items; ++w) scratch[w] = (float)flat_group;
  for (size_t z = 0; z < g->local_size[2]; ++z) {
    for (size_t y = 0; y < g->local_size[1]; ++y) {
      for (size_t x = 0; x < g->local_size[0]; ++x) {
        size_t gx = g->first_global_id[0] + x;
        size_t gy = g->first_global_id[1] + y;
        size_t gz = g->first_global_id[2] + z;
        size_t i = (gz * g->global_size[1] + gy) * g->global_size[0] + gx;
        if (i < n) out[i] += 1.0f + (float)table[0];
      }
    }
  }
  for (size_t w = 0; w < items; ++w) {
    if (scratch[w] != (float)flat_group) atomic_fetch_add(&s->problems, 1);
  }
  return DC_OK;
}

static const dc_kernel_arg_info_t kNativeArgs[] = {
    {.name = "out", .kind = DC_ARG_BUFFER, .dtype = DC_DTYPE_F32,
     .vector_width = 1},
    {.name = "n", .kind = DC_ARG_SCALAR, .dtype = DC_DTYPE_U32,
     .vector_width = 1},
    {.name = "scratch", .kind = DC_ARG_LOCAL, .dtype = DC_DTYPE_F32},
    {.name = "table", .kind = DC_ARG_BUFFER, .dtype = DC_DTYPE_I32,
     .vector_width = 1, .is_const = true},
};

static dc_kernel_t* new_native(native_state_t* state) {
  dc_native_kernel_params_t np = {.name = "fill", .fn = native_fill,
                                  .user_data = state, .args = kNativeArgs,
                                  .arg_count = 4};
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_kernel_create_native(cpu, &np, &k));
  return k;
}

START_TEST(test_dispatch_native_kernel_covers_the_grid) {
  native_state_t state = {.fail_group = SIZE_MAX};
  state.threads = dc_worker_pool_thread_count(dc_context_worker_pool(ctx));
  dc_kernel_t* k = new_native(&state);
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert_str_eq(info.name, "fill");
  ck_assert_str_eq(info.execution, "native");
  ck_assert_uint_eq(info.arg_count, 4);
  ck_assert_str_eq(dc_kernel_arg_info(k, 0)->type_name, "__global float*");
  ck_assert_str_eq(dc_kernel_arg_info(k, 1)->type_name, "uint");
  ck_assert_uint_eq(dc_kernel_arg_info(k, 1)->size, 4);
  ck_assert_str_eq(dc_kernel_arg_info(k, 2)->type_name, "__local float*");
  ck_assert_int_eq(dc_kernel_arg_info(k, 2)->address_space, DC_ADDRESS_LOCAL);
  ck_assert_str_eq(dc_kernel_arg_info(k, 3)->type_name,
                   "__global const int*");
  ck_assert_int_eq(dc_kernel_arg_info(k, 3)->address_space,
                   DC_ADDRESS_GLOBAL);
  size_t index = 0;
  DC_CK_OK(dc_kernel_find_arg(k, "table", &index));
  ck_assert_uint_eq(index, 3);

  static const struct {
    uint32_t dims;
    size_t global[3], local[3], offset[3];
  } kGrids[] = {
      {1, {1000}, {10}, {0}},
      {1, {997}, {0}, {0}},
      {2, {12, 10}, {4, 5}, {0, 0}},
      {3, {6, 4, 4}, {3, 2, 4}, {0, 0, 0}},
      {2, {8, 8}, {2, 8}, {5, 1}},
  };
  int32_t table = 2;
  dc_buffer_t* tb = buffer_from(DC_DTYPE_I32, 1, &table);
  for (size_t c = 0; c < sizeof(kGrids) / sizeof(kGrids[0]); ++c) {
    size_t items = 1, groups = 1;
    for (uint32_t d = 0; d < kGrids[c].dims; ++d) items *= kGrids[c].global[d];
    dc_buffer_t* out = new_buffer(cpu, DC_DTYPE_F32, items + 64);
    fill_f32(out, 0.0f);
    dc_dispatch_t g = {.dims = kGrids[c].dims};
    memcpy(g.global, kGrids[c].global, sizeof(g.global));
    memcpy(g.local, kGrids[c].local, sizeof(g.local));
    memcpy(g.offset, kGrids[c].offset, sizeof(g.offset));
    dc_arg_t a[4] = {dc_arg_buffer(out), dc_arg_u32((uint32_t)(items + 64)),
                     dc_arg_local(1024 * sizeof(float)), dc_arg_buffer(tb)};
    atomic_store(&state.calls, 0);
    DC_CK_OK(dc_kernel_dispatch(k, &g, a, 4));
    const float* v = host(out);
    // The offset moves the grid: item (x, y) writes at (x + ox, y + oy).
    size_t ox = kGrids[c].offset[0], oy = kGrids[c].offset[1];
    size_t gx = kGrids[c].global[0];
    size_t gy = kGrids[c].dims > 1 ? kGrids[c].global[1] : 1;
    size_t gz = kGrids[c].dims > 2 ? kGrids[c].global[2] : 1;
    size_t written = 0;
    for (size_t i = 0; i < items + 64; ++i) {
      ck_assert_msg(v[i] == 0.0f || v[i] == 3.0f, "grid %zu: v[%zu] = %g", c,
                    i, v[i]);
      written += v[i] == 3.0f;
    }
    if (ox == 0 && oy == 0) {
      for (size_t i = 0; i < items; ++i) ck_assert(v[i] == 3.0f);
    } else {
      for (size_t y = 0; y < gy; ++y) {
        for (size_t x = 0; x < gx; ++x) {
          size_t i = (y + oy) * gx + x + ox;
          if (i < items + 64) ck_assert(v[i] == 3.0f);
        }
      }
    }
    (void)gz;
    ck_assert_uint_le(written, items);
    if (kGrids[c].local[0] != 0) {
      for (uint32_t d = 0; d < kGrids[c].dims; ++d) {
        groups *= kGrids[c].global[d] / kGrids[c].local[d];
      }
      ck_assert_int_eq(atomic_load(&state.calls), (int)groups);
    }
    dc_buffer_release(out);
  }
  ck_assert_int_eq(atomic_load(&state.problems), 0);

  // Dispatch checks apply as to compiled kernels.
  dc_buffer_t* out = new_buffer(cpu, DC_DTYPE_F32, 16);
  dc_arg_t bad[4] = {dc_arg_buffer(out), dc_arg_buffer(out),
                     dc_arg_local(64), dc_arg_buffer(tb)};
  EXPECT_REJECTED(k, grid1(16, 0), bad, 4,
                  "kernel 'fill': argument 1 'n' (uint): expected a value, "
                  "got a buffer");
  bad[1] = dc_arg_u32(16);
  bad[3] = dc_arg_buffer(out);
  EXPECT_REJECTED(k, grid1(16, 0), bad, 4,
                  "kernel 'fill': argument 3 'table' (__global const int*): "
                  "the buffer holds f32, the kernel expects i32");
  dc_buffer_release(out);
  dc_buffer_release(tb);

  // The kernel holds a reference of its own; releasing it frees it.
  dc_kernel_retain(k);
  dc_kernel_release(k);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 1);
  dc_kernel_release(k);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
}
END_TEST

START_TEST(test_dispatch_native_kernel_failure_reaches_the_caller) {
  native_state_t state = {.fail_group = 7};
  state.threads = dc_worker_pool_thread_count(dc_context_worker_pool(ctx));
  dc_kernel_t* k = new_native(&state);
  int32_t table = 0;
  dc_buffer_t* tb = buffer_from(DC_DTYPE_I32, 1, &table);
  dc_buffer_t* out = new_buffer(cpu, DC_DTYPE_F32, 640);
  dc_arg_t a[4] = {dc_arg_buffer(out), dc_arg_u32(640),
                   dc_arg_local(64 * sizeof(float)), dc_arg_buffer(tb)};
  dc_dispatch_t g = grid1(640, 64);
  DC_CK_FAIL(dc_kernel_dispatch(k, &g, a, 4), DC_ERR_ABORTED,
             "native_fill: group 7 refused");
  state.fail_group = SIZE_MAX;
  DC_CK_OK(dc_kernel_dispatch(k, &g, a, 4));  // and it recovers
  dc_buffer_release(out);
  dc_buffer_release(tb);
  dc_kernel_release(k);
}
END_TEST

static dc_status_t native_nop(void* user_data, const dc_native_group_t* g,
                              void* const* args) {
  (void)user_data;
  (void)g;
  (void)args;
  return DC_OK;
}

START_TEST(test_dispatch_native_kernel_validation) {
  dc_kernel_t* k = SENTINEL;
  dc_native_kernel_params_t np = {.name = "v", .fn = native_nop};
  DC_CK_FAIL(dc_kernel_create_native(NULL, &np, &k), DC_ERR_INVALID_ARGUMENT,
             "");
  ck_assert_ptr_null(k);
  DC_CK_FAIL(dc_kernel_create_native(cpu, NULL, &k), DC_ERR_INVALID_ARGUMENT,
             "");
  DC_CK_FAIL(dc_kernel_create_native(cpu, &np, NULL),
             DC_ERR_INVALID_ARGUMENT, "");
  np.name = NULL;
  DC_CK_FAIL(dc_kernel_create_native(cpu, &np, &k), DC_ERR_INVALID_ARGUMENT,
             "the kernel needs a name");
  np.name = "";
  DC_CK_FAIL(dc_kernel_create_native(cpu, &np, &k), DC_ERR_INVALID_ARGUMENT,
             "the kernel needs a name");
  np.name = "v";
  np.fn = NULL;
  DC_CK_FAIL(dc_kernel_create_native(cpu, &np, &k), DC_ERR_INVALID_ARGUMENT,
             "kernel 'v' has no function");
  np.fn = native_nop;
  np.arg_count = 2;
  DC_CK_FAIL(dc_kernel_create_native(cpu, &np, &k), DC_ERR_INVALID_ARGUMENT,
             "kernel 'v' needs 2 argument descriptions");
  np.arg_count = 1000;
  np.args = kNativeArgs;
  DC_CK_FAIL(dc_kernel_create_native(cpu, &np, &k), DC_ERR_INVALID_ARGUMENT,
             "(at most 128)");

  static const struct {
    dc_kernel_arg_info_t arg;
    const char* message;
  } kBad[] = {
      {{.name = NULL, .kind = DC_ARG_BUFFER}, "argument 0 has no name"},
      {{.name = "", .kind = DC_ARG_BUFFER}, "argument 0 has no name"},
      {{.name = "s", .kind = DC_ARG_SCALAR, .vector_width = 1},
       "argument 0 's' is a value, so it needs a dtype and a vector width "
       "of 1, 2, 4, 8 or 16"},
      {{.name = "s", .kind = DC_ARG_SCALAR, .dtype = DC_DTYPE_F32,
        .vector_width = 3},
       "argument 0 's' is a value, so it needs a dtype"},
      {{.name = "s", .kind = DC_ARG_SCALAR, .dtype = DC_DTYPE_F32},
       "argument 0 's' is a value, so it needs a dtype"},
      {{.name = "s", .kind = DC_ARG_SCALAR, .dtype = (dc_dtype_t)42,
        .vector_width = 1},
       "argument 0 's' is a value"},
      {{.name = "b", .kind = DC_ARG_BUFFER, .dtype = (dc_dtype_t)99},
       "argument 0 'b' has an unknown dtype 99"},
      {{.name = "x", .kind = (dc_arg_kind_t)9}, "argument 0 'x' has an "
                                                "unknown kind 9"},
  };
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    np.args = &kBad[i].arg;
    np.arg_count = 1;
    DC_CK_FAIL(dc_kernel_create_native(cpu, &np, &k), DC_ERR_INVALID_ARGUMENT,
               kBad[i].message);
    DC_CK_ERROR_HAS("dc_kernel_create_native: ");
    ck_assert_ptr_null(k);
  }
  // A void buffer takes any dtype; vectors are described by width.
  static const dc_kernel_arg_info_t kGood[] = {
      {.name = "any", .kind = DC_ARG_BUFFER},
      {.name = "v", .kind = DC_ARG_SCALAR, .dtype = DC_DTYPE_F32,
       .vector_width = 4},
  };
  np.args = kGood;
  np.arg_count = 2;
  DC_CK_OK(dc_kernel_create_native(cpu, &np, &k));
  ck_assert_str_eq(dc_kernel_arg_info(k, 0)->type_name, "__global void*");
  ck_assert_str_eq(dc_kernel_arg_info(k, 1)->type_name, "float4");
  ck_assert_uint_eq(dc_kernel_arg_info(k, 1)->size, 16);
  dc_buffer_t* b = new_buffer(cpu, DC_DTYPE_U8, 3);
  float v4[4] = {1, 2, 3, 4};
  dc_arg_t a[2] = {dc_arg_buffer(b), dc_arg_value(DC_DTYPE_F32, 4, v4)};
  DC_CK_OK(dc_kernel_dispatch(k, &(dc_dispatch_t){.dims = 1, .global = {3}},
                              a, 2));
  dc_buffer_release(b);
  dc_kernel_release(k);

  // Only the CPU runs host functions.
  dc_context_t* fakes = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_device(fakes, 1, &fake));
  np.args = NULL;
  np.arg_count = 0;
  DC_CK_FAIL(dc_kernel_create_native(fake, &np, &k), DC_ERR_UNSUPPORTED,
             "device fake:0 cannot run host functions as kernels");
  dc_context_release(fakes);
}
END_TEST

//===-- core: built-in kernels and operations ---------------------------===//

static const char* const kElementwise[] = {"add", "mul", "relu", "sigmoid"};

// Runs built-in element-wise kernel |op| (kElementwise) over |n| elements
// of |ba| (and |bb|, holding |a| and |b|) into |out| on a grid of |grid|
// and checks every element, and that |out| is untouched past |n|.
static void check_elementwise(size_t op, dc_kernel_t* k, dc_buffer_t* ba,
                              dc_buffer_t* bb, dc_buffer_t* out,
                              const float* a, const float* b, size_t n,
                              size_t grid) {
  fill_f32(out, 99.0f);
  dc_arg_t args[4];
  size_t count = 0;
  args[count++] = dc_arg_buffer(ba);
  if (op < 2) args[count++] = dc_arg_buffer(bb);
  args[count++] = dc_arg_buffer(out);
  args[count++] = dc_arg_u32((uint32_t)n);
  dc_dispatch_t g = grid1(grid, 0);
  DC_CK_OK(dc_kernel_dispatch(k, &g, args, count));
  float* v = malloc((n + 1) * sizeof(float));
  DC_CK_OK(dc_buffer_read(out, 0, v, n + 1));
  for (size_t i = 0; i < n; ++i) {
    float want = op == 0   ? a[i] + b[i]
                 : op == 1 ? a[i] * b[i]
                 : op == 2 ? (a[i] > 0.0f ? a[i] : 0.0f)
                           : 1.0f / (1.0f + expf(-a[i]));
    ck_assert_msg(fabsf(v[i] - want) <= 1e-6f,
                  "%s[%zu] = %.9g, not %.9g (grid %zu)", kElementwise[op], i,
                  v[i], want, grid);
  }
  ck_assert_msg(v[n] == 99.0f, "%s wrote past its %zu elements",
                kElementwise[op], n);
  free(v);
}

START_TEST(test_dispatch_builtin_elementwise_kernels) {
  // Not a multiple of 4, so the last work-item does the 1 to 3 left over.
  const size_t n = 1003, cap = 1024;
  float* a = malloc(cap * sizeof(float));
  float* b = malloc(cap * sizeof(float));
  for (size_t i = 0; i < cap; ++i) {
    a[i] = (float)((int)(i % 21) - 10) * 0.5f;
    b[i] = (float)((int)(i % 13) - 6);
  }
  dc_buffer_t* ba = buffer_on(dut, DC_DTYPE_F32, cap, a);
  dc_buffer_t* bb = buffer_on(dut, DC_DTYPE_F32, cap, b);
  dc_buffer_t* out = new_buffer(dut, DC_DTYPE_F32, cap);
  // Views one element in: no buffer 16-byte aligned, so the kernels take
  // the element-wise path of vload4/vstore4.
  dc_buffer_t *va = NULL, *vb = NULL, *vout = NULL;
  DC_CK_OK(dc_buffer_create_view(ba, 1, n + 1, &va));
  DC_CK_OK(dc_buffer_create_view(bb, 3, n + 1, &vb));
  DC_CK_OK(dc_buffer_create_view(out, 2, n + 1, &vout));
  float* b3 = malloc(cap * sizeof(float));  // b from element 3
  for (size_t i = 0; i + 3 < cap; ++i) b3[i] = b[i + 3];
  for (size_t op = 0; op < 4; ++op) {
    dc_kernel_t* k = NULL;
    DC_CK_OK(dc_builtin_kernel(dut, kElementwise[op], &k));
    ck_assert_str_eq(dc_kernel_name(k), kElementwise[op]);
    // A work-item per 4 elements, and the grid of one per element that
    // the kernels took before (the extra work-items do nothing).
    check_elementwise(op, k, ba, bb, out, a, b, n, (n + 3) / 4);
    check_elementwise(op, k, ba, bb, out, a, b, n, cap);
    check_elementwise(op, k, va, vb, vout, a + 1, b3, n, (n + 3) / 4);
    dc_kernel_release(k);
  }
  dc_kernel_t* k = SENTINEL;
  DC_CK_FAIL(dc_builtin_kernel(dut, "conv", &k), DC_ERR_NOT_FOUND,
             "no built-in kernel 'conv' (built-in kernels: add, mul, relu, "
             "sigmoid, matmul, sum)");
  ck_assert_ptr_null(k);
  DC_CK_FAIL(dc_builtin_kernel(NULL, "add", &k), DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_builtin_kernel(dut, NULL, &k), DC_ERR_INVALID_ARGUMENT, "");
  free(a);
  free(b);
  free(b3);
  dc_buffer_release(va);
  dc_buffer_release(vb);
  dc_buffer_release(vout);
  dc_buffer_release(ba);
  dc_buffer_release(bb);
  dc_buffer_release(out);
}
END_TEST

START_TEST(test_dispatch_builtin_sum) {
  static const size_t kCounts[] = {1, 255, 256, 257, 1000, 100000};
  float* values = malloc(100000 * sizeof(float));
  for (size_t i = 0; i < 100000; ++i) values[i] = (float)((int)(i % 17) - 8);
  dc_buffer_t* in = buffer_on(dut, DC_DTYPE_F32, 100000, values);
  for (size_t c = 0; c < sizeof(kCounts) / sizeof(kCounts[0]); ++c) {
    float want = 0.0f;
    for (size_t i = 0; i < kCounts[c]; ++i) want += values[i];
    float got = NAN;
    DC_CK_OK(dc_builtin_sum(in, kCounts[c], &got));
    ck_assert_msg(got == want, "sum of %zu: %g, expected %g", kCounts[c], got,
                  want);
  }
  // The kernel directly: one partial sum per group of 128.
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_builtin_kernel(dut, "sum", &k));
  dc_buffer_t* partial = new_buffer(dut, DC_DTYPE_F32, 8);
  dc_arg_t a[4] = {dc_arg_buffer(in), dc_arg_buffer(partial), dc_arg_u32(1000),
                   dc_arg_local(128 * sizeof(float))};
  dc_dispatch_t g = grid1(1024, 128);
  DC_CK_OK(dc_kernel_dispatch(k, &g, a, 4));
  const float* p = contents(partial);
  for (size_t grp = 0; grp < 8; ++grp) {
    float want = 0.0f;
    for (size_t i = grp * 128; i < (grp + 1) * 128 && i < 1000; ++i) {
      want += values[i];
    }
    ck_assert_msg(p[grp] == want, "partial %zu: %g, expected %g", grp, p[grp],
                  want);
  }
  dc_kernel_release(k);
  dc_buffer_release(partial);

  float sum = 0.0f;
  DC_CK_FAIL(dc_builtin_sum(in, 0, &sum), DC_ERR_INVALID_ARGUMENT,
             "count is 0");
  DC_CK_FAIL(dc_builtin_sum(NULL, 4, &sum), DC_ERR_INVALID_ARGUMENT,
             "'in' is NULL or a released buffer");
  DC_CK_FAIL(dc_builtin_sum(in, 4, NULL), DC_ERR_INVALID_ARGUMENT, "");
  DC_CK_FAIL(dc_builtin_sum(in, 100001, &sum), DC_ERR_INVALID_ARGUMENT,
             "'in' has 100000 elements");
  dc_buffer_t* ints = new_buffer(dut, DC_DTYPE_I32, 4);
  DC_CK_FAIL(dc_builtin_sum(ints, 4, &sum), DC_ERR_INVALID_ARGUMENT,
             "'in' holds i32, not f32");
  dc_buffer_release(ints);
  dc_buffer_release(in);
  free(values);
}
END_TEST

// Small integer entries: every product sum is exact on both paths.
static void check_builtin_matmul(size_t m, size_t n, size_t k,
                                 bool through_kernel) {
  uint64_t seed = m * 131 + n * 7 + k;
  float* a = dc_test_small_ints(m * k, &seed, 7);
  float* b = dc_test_small_ints(k * n, &seed, 5);
  dc_buffer_t* ba = buffer_on(dut, DC_DTYPE_F32, m * k, a);
  dc_buffer_t* bb = buffer_on(dut, DC_DTYPE_F32, k * n, b);
  dc_buffer_t* bc = new_buffer(dut, DC_DTYPE_F32, m * n);
  fill_f32(bc, 1234.0f);
  if (through_kernel) {
    dc_kernel_t* kernel = NULL;
    DC_CK_OK(dc_builtin_kernel(dut, "matmul", &kernel));
    dc_arg_t args[6] = {dc_arg_buffer(ba), dc_arg_buffer(bb),
                        dc_arg_buffer(bc), dc_arg_u32((uint32_t)m),
                        dc_arg_u32((uint32_t)n), dc_arg_u32((uint32_t)k)};
    // 16x16 tiles of C; each work-item computes 4 rows of one.
    dc_dispatch_t g = {.dims = 2,
                       .global = {(n + 15) / 16 * 16, (m + 15) / 16 * 4},
                       .local = {16, 4}};
    DC_CK_OK(dc_kernel_dispatch(kernel, &g, args, 6));
    dc_kernel_info_t info;
    DC_CK_OK(dc_kernel_info(kernel, &info));
    ck_assert_uint_eq(info.required_group_size[0], 16);
    ck_assert_uint_eq(info.required_group_size[1], 4);
    dc_kernel_release(kernel);
  } else {
    DC_CK_OK(dc_builtin_matmul(ba, bb, bc, m, n, k));
  }
  dc_test_check_matmul(contents(bc), a, b, m, n, k,
                       through_kernel ? "kernel" : "dc_builtin_matmul");
  free(a);
  free(b);
  dc_buffer_release(ba);
  dc_buffer_release(bb);
  dc_buffer_release(bc);
}

START_TEST(test_dispatch_builtin_matmul_both_paths) {
  // The CPU uses OpenBLAS or the kernel; another device its vendor's
  // library ("cublas") or the kernel.
  const char* backend = dc_builtin_matmul_backend(dut);
  ck_assert_msg(dut_is_cpu() ? strcmp(backend, "openblas") == 0 ||
                                   strcmp(backend, "kernel") == 0
                             : backend[0] != '\0',
                "backend '%s'", backend);
  ck_assert_str_eq(dc_builtin_matmul_backend(NULL), "");
  static const size_t kSizes[][3] = {
      {17, 33, 45}, {1, 1, 1}, {70, 5, 100}, {16, 16, 16}, {31, 47, 3},
  };
  for (size_t s = 0; s < sizeof(kSizes) / sizeof(kSizes[0]); ++s) {
    // Whatever dc_builtin_matmul uses, and the kernel path directly (the
    // only way to reach it when a library is present).
    check_builtin_matmul(kSizes[s][0], kSizes[s][1], kSizes[s][2], false);
    check_builtin_matmul(kSizes[s][0], kSizes[s][1], kSizes[s][2], true);
  }
}
END_TEST

START_TEST(test_dispatch_builtin_matmul_errors) {
  dc_buffer_t* a = new_buffer(dut, DC_DTYPE_F32, 6);   // 2 x 3
  dc_buffer_t* b = new_buffer(dut, DC_DTYPE_F32, 12);  // 3 x 4
  dc_buffer_t* c = new_buffer(dut, DC_DTYPE_F32, 8);   // 2 x 4
  dc_buffer_t* ints = new_buffer(dut, DC_DTYPE_I32, 12);
  DC_CK_FAIL(dc_builtin_matmul(NULL, b, c, 2, 4, 3), DC_ERR_INVALID_ARGUMENT,
             "'a' is NULL or a released buffer");
  DC_CK_FAIL(dc_builtin_matmul(a, NULL, c, 2, 4, 3), DC_ERR_INVALID_ARGUMENT,
             "'b' is NULL or a released buffer");
  DC_CK_FAIL(dc_builtin_matmul(a, b, c, 0, 4, 3), DC_ERR_INVALID_ARGUMENT,
             "sizes must be positive (m 0, n 4, k 3)");
  DC_CK_FAIL(dc_builtin_matmul(a, ints, c, 2, 4, 3), DC_ERR_INVALID_ARGUMENT,
             "'b' holds i32, not f32");
  DC_CK_FAIL(dc_builtin_matmul(a, b, c, 2, 5, 3), DC_ERR_INVALID_ARGUMENT,
             "'b' has 12 elements; a 3 x 5 matrix needs 15");
  DC_CK_FAIL(dc_builtin_matmul(a, b, c, 3, 4, 3), DC_ERR_INVALID_ARGUMENT,
             "'a' has 6 elements; a 3 x 3 matrix needs 9");
  dc_context_t* other = context_with(false, false);
  dc_buffer_t* far = new_buffer(dc_test_device(other), DC_DTYPE_F32, 8);
  char want[64];
  snprintf(want, sizeof(want), "'c' is on %s, not on %s",
           dc_device_name(dut), dc_device_name(dut));
  DC_CK_FAIL(dc_builtin_matmul(a, b, far, 2, 4, 3), DC_ERR_INVALID_ARGUMENT,
             want);
  dc_buffer_release(far);
  dc_context_release(other);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_buffer_release(c);
  dc_buffer_release(ints);
}
END_TEST

//===-- lifecycle: kernels keep their context alive ---------------------===//

// The host releases the context first; the kernels (compiled, built-in and,
// on a CPU, native) and buffers it made keep it alive until they are
// released too.
START_TEST(test_dispatch_kernels_outlive_the_host_context_reference) {
  dc_context_t* c = context_with(false, false);
  dc_device_t* d = dc_test_device(c);
  const bool native_too = dc_device_info(d)->kind == DC_DEVICE_KIND_CPU;
  dc_program_t* p = build_on(d, "validate.cl", kValidate, NULL);
  dc_kernel_t* saxpy = kernel_of(p, "saxpy");
  dc_kernel_retain(saxpy);
  dc_program_release(p);  // the kernel's reference holds the program
  dc_kernel_t* add = NULL;
  DC_CK_OK(dc_builtin_kernel(d, "add", &add));
  native_state_t state = {.fail_group = SIZE_MAX, .threads = 1024};
  dc_native_kernel_params_t np = {.name = "fill", .fn = native_fill,
                                  .user_data = &state, .args = kNativeArgs,
                                  .arg_count = 4};
  dc_kernel_t* native = NULL;
  if (native_too) DC_CK_OK(dc_kernel_create_native(d, &np, &native));
  dc_buffer_t* x = new_buffer(d, DC_DTYPE_F32, 32);
  dc_buffer_t* y = new_buffer(d, DC_DTYPE_F32, 32);
  dc_buffer_t* t = new_buffer(d, DC_DTYPE_I32, 1);
  fill_f32(x, 1.0f);
  fill_f32(y, 2.0f);
  fill_i32(t, 0);
  dc_context_release(c);  // the host's last reference

  dc_dispatch_t g = grid1(32, 0);
  dc_arg_t sa[4] = {dc_arg_buffer(x), dc_arg_buffer(y), dc_arg_f32(3.0f),
                    dc_arg_u32(32)};
  DC_CK_OK(dc_kernel_dispatch(saxpy, &g, sa, 4));  // y = 5
  dc_arg_t aa[4] = {dc_arg_buffer(x), dc_arg_buffer(y), dc_arg_buffer(y),
                    dc_arg_u32(32)};
  DC_CK_OK(dc_kernel_dispatch(add, &g, aa, 4));  // y = 6
  dc_arg_t na[4] = {dc_arg_buffer(y), dc_arg_u32(32), dc_arg_local(32 * 4),
                    dc_arg_buffer(t)};
  if (native_too) DC_CK_OK(dc_kernel_dispatch(native, &g, na, 4));  // y = 7
  float got[32];
  DC_CK_OK(dc_buffer_read(y, 0, got, 32));
  for (int i = 0; i < 32; ++i) ck_assert(got[i] == (native_too ? 7 : 6));
  dc_kernel_release(add);
  dc_kernel_release(native);
  dc_kernel_release(saxpy);
  dc_buffer_release(x);
  dc_buffer_release(t);
  dc_buffer_release(y);  // the last object: the context goes with it
}
END_TEST

static Suite* dispatch_suite(void) {
  dc_test_fake_register();
  Suite* s = dc_test_kernel_suite("dispatch", "dc-check-dispatch");
  TCase* errors = dc_test_kernel_tcase(s, "errors");
  tcase_add_test(errors, test_dispatch_rejects_bad_arguments);
  tcase_add_test(errors, test_dispatch_rejects_buffers_of_other_devices);
  tcase_add_test(errors, test_dispatch_rejects_bad_grids);
  tcase_add_test(errors, test_dispatch_builtin_matmul_errors);

  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_dispatch_automatic_group_size_divides_the_grid);
  tcase_add_test(core,
                 test_dispatch_one_dimensional_ids_with_and_without_groups);
  tcase_add_test(core, test_dispatch_checked_build_option);
  tcase_add_test(core, test_dispatch_checked_context_parameter);
  tcase_add_test(core, test_dispatch_checked_environment);
  tcase_add_test(core, test_dispatch_unchecked_overflow_reaches_the_neighbour);
  tcase_add_test(core, test_dispatch_autotune_keeps_results_and_finds_a_size);
  tcase_add_test(core, test_dispatch_builtin_elementwise_kernels);
  tcase_add_test(core, test_dispatch_builtin_sum);
  tcase_add_test(core, test_dispatch_builtin_matmul_both_paths);

  TCase* lifecycle = dc_test_kernel_tcase(s, "lifecycle");
  tcase_add_test(lifecycle,
                 test_dispatch_kernels_outlive_the_host_context_reference);

  TCase* limits = dc_test_kernel_tcase(s, "limits");
  tcase_add_test(limits, test_dispatch_concurrent_dispatches);

  // About the CPU device itself: native kernels and the fake backend.
  if (dc_test_device_is_the_cpu()) {
    TCase* cpu_only = dc_test_kernel_tcase(s, "cpu");
    tcase_add_test(cpu_only, test_dispatch_rejects_buffers_of_a_fake_device);
    tcase_add_test(cpu_only, test_dispatch_native_kernel_validation);
    tcase_add_test(cpu_only, test_dispatch_native_kernel_covers_the_grid);
    tcase_add_test(cpu_only,
                   test_dispatch_native_kernel_failure_reaches_the_caller);
  }
  return s;
}

DC_CHECK_DEVICE_MAIN(dispatch_suite)

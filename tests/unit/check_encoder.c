// check_encoder.c: the command encoder: binding by index and by name, every
// refused binding, grid and validation errors, what bound buffers and
// streams it keeps alive, the history ring, statistics, moving to another
// stream, and NULL handling.
//
// Device-generic: encoders record onto streams of the device under test
// (check_util.h); the "cpu" test case pairs the CPU with a fake GPU.
// SPDX-License-Identifier: MIT

#include "kernel_fixture.h"

//===-- Kernels and helpers ---------------------------------------------===//

static const char kSource[] =
    "__kernel void scale(__global float* x, float factor, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) x[i] *= factor;\n"
    "}\n"
    "__kernel void inc(__global int* c, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) c[i] += 1;\n"
    "}\n"
    "__kernel void with_local(__global int* o, __local int* t) {\n"
    "  t[get_local_id(0)] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] = t[0];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(8, 2, 1)))\n"
    "void fixed(__global int* o) { o[0] = 1; }\n"
    "__kernel void none(void) {}\n";

static dc_stream_t* new_stream(dc_device_t* device) {
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(device, NULL, &s));
  ck_assert_ptr_nonnull(s);
  return s;
}

static dc_encoder_t* new_encoder(dc_stream_t* stream) {
  dc_encoder_t* e = NULL;
  DC_CK_OK(dc_encoder_create(stream, &e));
  ck_assert_ptr_nonnull(e);
  return e;
}

static dc_buffer_t* f32_buffer(size_t n, float value) {
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_F32, n, "encoder");
  DC_CK_OK(dc_buffer_fill(b, 0, n, &value));
  return b;
}

static dc_buffer_t* i32_buffer(size_t n, int32_t value) {
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_I32, n, "encoder");
  DC_CK_OK(dc_buffer_fill(b, 0, n, &value));
  return b;
}

static void expect_f32(dc_buffer_t* b, size_t from, size_t to, float want) {
  const float* v = contents(b);
  for (size_t i = from; i < to; ++i) {
    ck_assert_msg(v[i] == want, "element %zu is %g, expected %g", i, v[i],
                  want);
  }
}

static void expect_i32(dc_buffer_t* b, size_t n, int32_t want) {
  const int32_t* v = contents(b);
  for (size_t i = 0; i < n; ++i) {
    ck_assert_msg(v[i] == want, "element %zu is %d, expected %d", i, v[i],
                  want);
  }
}

static void sync_stream(dc_stream_t* s) {
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
}

// A finished command drops its references before dc_stream_sync()
// returns, so counts taken after a sync are exact.
static void expect_live_buffers(dc_context_t* c, size_t want) {
  ck_assert_uint_eq(dc_context_live_buffer_count(c), want);
}

static void set_grid1(dc_encoder_t* e, size_t global) {
  DC_CK_OK(dc_encoder_set_grid(e, 1, &global));
}

static dc_encoder_stats_t stats_of(const dc_encoder_t* e) {
  dc_encoder_stats_t st;
  memset(&st, 0xAB, sizeof(st));  // so a missed field shows
  DC_CK_OK(dc_encoder_stats(e, &st));
  return st;
}

//===-- core: binding and dispatching -----------------------------------===//

START_TEST(test_encoder_binds_by_index_and_by_name) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  dc_buffer_t* x = f32_buffer(256, 1.0f);

  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "scale")));
  dc_arg_t a = dc_arg_buffer(x);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_f32(2.0f);
  DC_CK_OK(dc_encoder_set_arg_by_name(e, "factor", &a));
  a = dc_arg_u32(256);
  DC_CK_OK(dc_encoder_set_arg_by_name(e, "n", &a));
  set_grid1(e, 256);
  DC_CK_OK(dc_encoder_validate(e));
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  expect_f32(x, 0, 256, 2.0f);

  // Bindings stay: only the factor changes.
  a = dc_arg_f32(3.0f);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  expect_f32(x, 0, 256, 6.0f);

  // A group of the caller's, and an offset: only the second half.
  size_t group = 16, offset = 128;
  set_grid1(e, 128);
  DC_CK_OK(dc_encoder_set_group(e, &group));
  DC_CK_OK(dc_encoder_set_offset(e, &offset));
  a = dc_arg_f32(0.5f);
  DC_CK_OK(dc_encoder_set_arg_by_name(e, "factor", &a));
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  expect_f32(x, 0, 128, 6.0f);
  expect_f32(x, 128, 256, 3.0f);
  dc_encoder_record_t r;
  DC_CK_OK(dc_encoder_history(e, 0, &r));
  ck_assert_uint_eq(r.local[0], 16);
  ck_assert_uint_eq(r.global[0], 128);
  // NULL offset: back to 0; NULL group: the engine chooses again.
  DC_CK_OK(dc_encoder_set_offset(e, NULL));
  DC_CK_OK(dc_encoder_set_group(e, NULL));
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  expect_f32(x, 0, 128, 3.0f);
  DC_CK_OK(dc_encoder_history(e, 0, &r));
  ck_assert_uint_eq(r.local[0], 0);

  // A kernel without arguments needs only a grid.
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "none")));
  set_grid1(e, 4);
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);

  dc_encoder_stats_t st = stats_of(e);
  ck_assert_uint_eq(st.args_bound, 5);
  ck_assert_uint_eq(st.arg_errors, 0);
  ck_assert_uint_eq(st.dispatches, 5);
  ck_assert_uint_eq(st.rejected, 0);
  ck_assert_uint_eq(st.history_length, 5);
  ck_assert_uint_gt(st.encode_ns, 0);

  dc_encoder_release(e);
  dc_buffer_release(x);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

// Validating does not take a turn of autotuning: only dispatches do.
START_TEST(test_encoder_validate_takes_no_autotuning_turn) {
  dc_test_kernel_options_t o = {.autotune = true};
  dc_context_t* c = dc_test_kernel_context(&o);
  dc_device_t* d = dc_test_device(c);
  dc_program_t* p = build_on(d, "encoder.cl", kSource, NULL);
  dc_kernel_t* inc = kernel_of(p, "inc");
  dc_stream_t* s = new_stream(d);
  dc_encoder_t* e = new_encoder(s);
  dc_buffer_t* b = dc_test_buffer_new(d, DC_DTYPE_I32, 4096, "tuned");
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(b, 0, 4096, &zero));
  DC_CK_OK(dc_encoder_set_kernel(e, inc));
  dc_arg_t a = dc_arg_buffer(b);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_u32(4096);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  set_grid1(e, 4096);
  size_t global = 4096, local[3];
  for (int i = 0; i < 50; ++i) DC_CK_OK(dc_encoder_validate(e));
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  DC_CK_FAIL(dc_kernel_tuned_group_size(inc, 1, &global, local),
             DC_ERR_NOT_FOUND, "has not finished tuning this grid");
  for (int i = 0; i < 49; ++i) DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  DC_CK_OK(dc_kernel_tuned_group_size(inc, 1, &global, local));
  ck_assert_uint_eq(global % local[0], 0);
  expect_live_buffers(c, 1);
  const int32_t* v = contents(b);
  for (int i = 0; i < 4096; ++i) ck_assert_int_eq(v[i], 50);
  dc_encoder_release(e);
  dc_buffer_release(b);
  dc_stream_release(s);
  dc_program_release(p);
  dc_context_release(c);
}
END_TEST

//===-- errors: refused bindings ----------------------------------------===//

START_TEST(test_encoder_rejects_bad_arguments) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_kernel_t* scale = kernel_of(p, "scale");
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  dc_buffer_t* x = f32_buffer(64, 1.0f);
  dc_buffer_t* ints = i32_buffer(64, 0);
  dc_arg_t a = dc_arg_f32(2.0f);

  // No kernel yet.
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_arg: no kernel selected (call "
             "dc_encoder_set_kernel first)");
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "factor", &a),
             DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_arg_by_name: no kernel selected");

  DC_CK_OK(dc_encoder_set_kernel(e, scale));
  DC_CK_FAIL(dc_encoder_set_arg(e, 3, &a), DC_ERR_OUT_OF_RANGE,
             "dc_encoder_set_arg: kernel 'scale': argument index 3 is out "
             "of range (it has 3 argument(s): x, factor, n)");
  DC_CK_FAIL(dc_encoder_set_arg(e, SIZE_MAX, &a), DC_ERR_OUT_OF_RANGE,
             "argument index 18446744073709551615 is out of range");
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "scale", &a), DC_ERR_NOT_FOUND,
             "dc_encoder_set_arg_by_name: kernel 'scale' has no argument "
             "'scale' (arguments: x, factor, n)");
  ck_assert_ptr_null(strstr(dc_last_error(), "dc_kernel_find_arg"));

  // Each checked against the reflection, under the caller's function.
  a = dc_arg_i32(2);
  DC_CK_FAIL(dc_encoder_set_arg(e, 1, &a), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg: kernel 'scale': argument 1 'factor' "
             "(float): got a value of i32");
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "factor", &a),
             DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg_by_name: kernel 'scale': argument 1 "
             "'factor' (float): got a value of i32");
  a = dc_arg_f64(2.0);
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "n", &a), DC_ERR_INVALID_ARGUMENT,
             "kernel 'scale': argument 2 'n' (uint): got a value of f64");
  a = dc_arg_buffer(ints);
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg: kernel 'scale': argument 0 'x' (__global "
             "float*): the buffer holds i32, the kernel expects f32");
  a = dc_arg_f32(1.0f);
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "x", &a), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg_by_name: kernel 'scale': argument 0 'x' "
             "(__global float*): expected a buffer, got a value");
  a = dc_arg_buffer(x);
  DC_CK_FAIL(dc_encoder_set_arg(e, 1, &a), DC_ERR_INVALID_ARGUMENT,
             "argument 1 'factor' (float): expected a value, got a buffer");
  a = dc_arg_local(16);
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_INVALID_ARGUMENT,
             "argument 0 'x' (__global float*): expected a buffer, got a "
             "__local size");
  a = dc_arg_buffer(NULL);
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_INVALID_ARGUMENT,
             "kernel 'scale': argument 0 'x' (__global float*): the buffer "
             "is NULL or a released buffer");
  dc_buffer_t* gone = f32_buffer(8, 0.0f);
  dc_buffer_release(gone);
  a = dc_arg_buffer(gone);
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_INVALID_ARGUMENT,
             "the buffer is NULL or a released buffer");

  // A buffer of another device: the same device of another context.
  dc_context_t* other = dc_test_kernel_context(NULL);
  dc_buffer_t* far = dc_test_buffer_new(dc_test_device(other), DC_DTYPE_F32,
                                        8, "far");
  a = dc_arg_buffer(far);
  char want[200];
  snprintf(want, sizeof(want),
           "dc_encoder_set_arg: kernel 'scale': argument 0 'x' (__global "
           "float*): the buffer lives on %s, the kernel on %s; copy it "
           "first", dc_device_name(dut), dc_device_name(dut));
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_INVALID_ARGUMENT, want);
  dc_buffer_release(far);
  dc_context_release(other);

  // __local sizes.
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "with_local")));
  a = dc_arg_local(0);
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "t", &a), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg_by_name: kernel 'with_local': argument 1 "
             "'t' (__local int*): the __local size is 0");

  // A refused binding leaves the previous one in place.
  DC_CK_OK(dc_encoder_set_kernel(e, scale));
  a = dc_arg_buffer(x);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_f32(4.0f);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  a = dc_arg_u32(64);
  DC_CK_OK(dc_encoder_set_arg(e, 2, &a));
  a = dc_arg_buffer(ints);
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &a), DC_ERR_INVALID_ARGUMENT,
             "the buffer holds i32");
  a = dc_arg_i64(7);
  DC_CK_FAIL(dc_encoder_set_arg(e, 1, &a), DC_ERR_INVALID_ARGUMENT,
             "got a value of i64");
  set_grid1(e, 64);
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  expect_f32(x, 0, 64, 4.0f);
  expect_i32(ints, 64, 0);

  dc_encoder_stats_t st = stats_of(e);
  ck_assert_uint_eq(st.args_bound, 3);
  ck_assert_uint_eq(st.arg_errors, 18);
  ck_assert_uint_eq(st.dispatches, 1);

  dc_encoder_release(e);
  dc_buffer_release(x);
  dc_buffer_release(ints);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

//===-- errors: kernels and streams of other devices --------------------===//

START_TEST(test_encoder_rejects_kernels_of_another_device) {
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  const char* name = dc_device_name(dut);
  // The same device of another context is another device.
  dc_context_t* other = dc_test_kernel_context(NULL);
  dc_device_t* other_dut = dc_test_device(other);
  dc_program_t* far = build_on(other_dut, "encoder.cl", kSource, NULL);
  char want[160];
  snprintf(want, sizeof(want),
           "dc_encoder_set_kernel: kernel 'scale' lives on %s, the stream "
           "on %s", name, name);
  DC_CK_FAIL(dc_encoder_set_kernel(e, kernel_of(far, "scale")),
             DC_ERR_INVALID_ARGUMENT, want);
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "no kernel selected");

  // A kernel selected: the encoder may move only to its device.
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "scale")));
  dc_stream_t* far_stream = new_stream(other_dut);
  snprintf(want, sizeof(want),
           "dc_encoder_set_stream: kernel 'scale' lives on %s, the stream "
           "on %s", name, name);
  DC_CK_FAIL(dc_encoder_set_stream(e, far_stream), DC_ERR_INVALID_ARGUMENT,
             want);
  // The kernel of the other device, after moving there.
  dc_encoder_t* e2 = new_encoder(far_stream);
  DC_CK_OK(dc_encoder_set_kernel(e2, kernel_of(far, "inc")));
  snprintf(want, sizeof(want), "kernel 'inc' lives on %s", name);
  DC_CK_FAIL(dc_encoder_set_kernel(e2, kernel_of(p, "inc")),
             DC_ERR_INVALID_ARGUMENT, want);
  dc_encoder_release(e2);

  // Another device of the same context: the CPU, when it is not the
  // device under test (the "cpu" test case does this with a fake GPU).
  if (dut != cpu) {
    dc_stream_t* cpu_stream = new_stream(cpu);
    DC_CK_FAIL(dc_encoder_set_stream(e, cpu_stream), DC_ERR_INVALID_ARGUMENT,
               "dc_encoder_set_stream: kernel 'scale' lives on ");
    DC_CK_ERROR_HAS(", the stream on cpu");
    e2 = new_encoder(cpu_stream);
    snprintf(want, sizeof(want),
             "dc_encoder_set_kernel: kernel 'scale' lives on %s, the stream "
             "on cpu", name);
    DC_CK_FAIL(dc_encoder_set_kernel(e2, kernel_of(p, "scale")),
               DC_ERR_INVALID_ARGUMENT, want);
    dc_encoder_release(e2);
    dc_stream_release(cpu_stream);
  }

  dc_encoder_release(e);
  dc_stream_release(far_stream);
  dc_stream_release(s);
  dc_program_release(far);
  dc_program_release(p);
  dc_context_release(other);
}
END_TEST

// CPU only: a device of another kind in one context: a kernel on the CPU,
// a stream on a fake GPU.
START_TEST(test_encoder_rejects_kernels_of_a_fake_device) {
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  dc_context_t* fakes = dc_test_context_with_fakes(&params, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_device(fakes, 1, &fake));
  dc_program_t* fp = build_on(dc_test_cpu(fakes), "encoder.cl", kSource,
                              NULL);
  dc_stream_t* fake_stream = new_stream(fake);
  dc_stream_t* cpu_stream = new_stream(dc_test_cpu(fakes));
  dc_encoder_t* e = new_encoder(fake_stream);
  DC_CK_FAIL(dc_encoder_set_kernel(e, kernel_of(fp, "scale")),
             DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_kernel: kernel 'scale' lives on cpu, the stream "
             "on fake:0");
  DC_CK_OK(dc_encoder_set_stream(e, cpu_stream));  // no kernel: any device
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(fp, "scale")));
  DC_CK_FAIL(dc_encoder_set_stream(e, fake_stream), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_stream: kernel 'scale' lives on cpu, the stream "
             "on fake:0");
  dc_encoder_record_t r;
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_FAILED_PRECONDITION, "no grid");
  DC_CK_OK(dc_encoder_history(e, 0, &r));
  ck_assert_uint_eq(r.stream_id, dc_stream_id(cpu_stream));
  dc_encoder_release(e);
  dc_stream_release(cpu_stream);
  dc_stream_release(fake_stream);
  dc_program_release(fp);
  dc_context_release(fakes);
}
END_TEST

//===-- errors: grids ---------------------------------------------------===//

START_TEST(test_encoder_rejects_bad_grids) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  size_t sizes[3] = {16, 4, 2};

  DC_CK_FAIL(dc_encoder_set_grid(e, 1, sizes), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_grid: no kernel selected");
  DC_CK_FAIL(dc_encoder_set_group(e, sizes), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_group: no kernel selected");
  DC_CK_FAIL(dc_encoder_set_offset(e, sizes), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_offset: no kernel selected");

  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "scale")));
  DC_CK_FAIL(dc_encoder_set_group(e, sizes), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_group: kernel 'scale': no grid (call "
             "dc_encoder_set_grid first)");
  DC_CK_FAIL(dc_encoder_set_offset(e, sizes), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_set_offset: kernel 'scale': no grid");
  DC_CK_FAIL(dc_encoder_set_grid(e, 0, sizes), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_grid: kernel 'scale': dims is 0 (must be 1, 2 "
             "or 3)");
  DC_CK_FAIL(dc_encoder_set_grid(e, 4, sizes), DC_ERR_INVALID_ARGUMENT,
             "kernel 'scale': dims is 4");
  DC_CK_FAIL(dc_encoder_set_grid(e, 1, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_grid: 'global' must not be NULL");
  size_t empty[3] = {16, 0, 2};
  DC_CK_FAIL(dc_encoder_set_grid(e, 3, empty), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_grid: kernel 'scale': the grid is empty (global "
             "size of dimension 1 is 0)");
  empty[0] = 0;
  DC_CK_FAIL(dc_encoder_set_grid(e, 1, empty), DC_ERR_INVALID_ARGUMENT,
             "global size of dimension 0 is 0");
  // Still no grid after the refusals.
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_validate: kernel 'scale': no grid");

  DC_CK_OK(dc_encoder_set_grid(e, 2, sizes));
  size_t zero_group[2] = {4, 0};
  DC_CK_FAIL(dc_encoder_set_group(e, zero_group), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_group: kernel 'scale': work-group size of "
             "dimension 1 is 0 (give every dimension, or NULL to let the "
             "engine choose)");
  DC_CK_FAIL(dc_encoder_set_grid(e, 2, empty), DC_ERR_INVALID_ARGUMENT,
             "the grid is empty");
  dc_encoder_release(e);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

//===-- errors: validation ----------------------------------------------===//

START_TEST(test_encoder_validate_names_what_is_missing) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_kernel_t* scale = kernel_of(p, "scale");
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  dc_buffer_t* x = f32_buffer(16, 1.0f);

  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_validate: no kernel selected (call "
             "dc_encoder_set_kernel first)");
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_dispatch: no kernel selected");
  DC_CK_OK(dc_encoder_set_kernel(e, scale));
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_validate: kernel 'scale': no grid (call "
             "dc_encoder_set_grid first)");
  set_grid1(e, 10);
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_validate: kernel 'scale': arguments not bound: x, "
             "factor, n");
  dc_arg_t a = dc_arg_buffer(x);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_validate: kernel 'scale': arguments not bound: "
             "factor, n");
  a = dc_arg_u32(10);
  DC_CK_OK(dc_encoder_set_arg(e, 2, &a));
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_FAILED_PRECONDITION,
             "dc_encoder_dispatch: kernel 'scale': arguments not bound: "
             "factor");
  a = dc_arg_f32(3.0f);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  DC_CK_OK(dc_encoder_validate(e));

  // The dispatch check: a group that does not divide the grid.
  size_t group = 4;
  DC_CK_OK(dc_encoder_set_group(e, &group));
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_validate: kernel 'scale': global size 10 of "
             "dimension 0 is not a multiple of the work-group size 4");
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_dispatch: kernel 'scale': global size 10 of "
             "dimension 0 is not a multiple of the work-group size 4");
  // Twice the largest group the device allows (2048 on the CPU).
  group = 2 * (size_t)dc_device_info(dut)->max_work_group_size;
  DC_CK_OK(dc_encoder_set_group(e, &group));
  set_grid1(e, 2 * group);  // resets the group to the engine's choice
  DC_CK_OK(dc_encoder_validate(e));
  DC_CK_OK(dc_encoder_set_group(e, &group));
  char want[160];
  snprintf(want, sizeof(want),
           "dc_encoder_dispatch: kernel 'scale': a work-group of %zu "
           "work-items is more than %s allows", group, dc_device_name(dut));
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_INVALID_ARGUMENT, want);

  // Every change of geometry is checked again, also after a dispatch
  // passed: the group, the grid and __local sizes.
  group = 5;
  set_grid1(e, 10);
  DC_CK_OK(dc_encoder_set_group(e, &group));
  DC_CK_OK(dc_encoder_dispatch(e));
  group = 4;
  DC_CK_OK(dc_encoder_set_group(e, &group));
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_dispatch: kernel 'scale': global size 10 of "
             "dimension 0 is not a multiple of the work-group size 4");
  group = 5;
  DC_CK_OK(dc_encoder_set_group(e, &group));
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s);
  expect_f32(x, 0, 10, 9.0f);
  expect_f32(x, 10, 16, 1.0f);

  dc_kernel_t* with_local = kernel_of(p, "with_local");
  dc_buffer_t* o = i32_buffer(64, 0);
  DC_CK_OK(dc_encoder_set_kernel(e, with_local));
  set_grid1(e, 64);
  group = 16;
  DC_CK_OK(dc_encoder_set_group(e, &group));
  a = dc_arg_buffer(o);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_local(16 * sizeof(int32_t));
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  DC_CK_OK(dc_encoder_dispatch(e));
  a = dc_arg_local(dc_device_info(dut)->local_memory_size + 1);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));  // one argument alone is fine
  DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_dispatch: kernel 'with_local' needs ");
  snprintf(want, sizeof(want),
           "bytes of __local memory per work-group; %s has",
           dc_device_name(dut));
  DC_CK_ERROR_HAS(want);
  sync_stream(s);
  expect_i32(o, 64, 1);

  // reqd_work_group_size(8, 2, 1): the engine's choice is the required
  // size, which must divide the grid.
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "fixed")));
  dc_arg_t unknown;
  memset(&unknown, 0, sizeof(unknown));
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, &unknown), DC_ERR_INVALID_ARGUMENT,
             "argument 0 'o' (__global int*): expected a buffer, got an "
             "unknown kind of argument");
  a = dc_arg_buffer(o);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  size_t grid[2] = {16, 4};
  DC_CK_OK(dc_encoder_set_grid(e, 2, grid));
  DC_CK_OK(dc_encoder_validate(e));
  grid[0] = 12;
  DC_CK_OK(dc_encoder_set_grid(e, 2, grid));
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_validate: kernel 'fixed': global size 12 of "
             "dimension 0 is not a multiple of the work-group size 8");

  dc_encoder_stats_t st = stats_of(e);
  ck_assert_uint_eq(st.dispatches, 3);
  ck_assert_uint_eq(st.rejected, 6);
  dc_encoder_release(e);
  dc_buffer_release(o);
  dc_buffer_release(x);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

//===-- lifecycle: references -------------------------------------------===//

START_TEST(test_encoder_rebinding_releases_the_previous_buffer) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "inc")));
  dc_buffer_t* b1 = i32_buffer(8, 0);
  dc_buffer_t* b2 = i32_buffer(8, 0);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 2);

  dc_arg_t a = dc_arg_buffer(b1);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));  // the same again: one reference
  dc_buffer_release(b1);                   // the encoder's keeps it
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 2);
  ck_assert_uint_eq(dc_buffer_length(b1), 8);

  a = dc_arg_buffer(b2);
  DC_CK_OK(dc_encoder_set_arg_by_name(e, "c", &a));  // b1 goes
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 1);
  dc_buffer_release(b2);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 1);

  // Queued commands hold their own references.
  a = dc_arg_u32(8);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  set_grid1(e, 8);
  DC_CK_OK(dc_encoder_dispatch(e));

  // Selecting a kernel drops the bindings.
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "inc")));
  sync_stream(s);
  expect_live_buffers(ctx, 0);
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "kernel 'inc': no grid");
  set_grid1(e, 8);
  DC_CK_FAIL(dc_encoder_validate(e), DC_ERR_FAILED_PRECONDITION,
             "arguments not bound: c, n");

  // Destroying the encoder releases what it holds.
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "scale")));
  dc_buffer_t* x = f32_buffer(4, 1.0f);
  a = dc_arg_buffer(x);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  dc_buffer_release(x);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 1);
  dc_encoder_release(e);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);

  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

// Destroying an encoder that holds bindings, a kernel and a stream leaves
// nothing behind: not in the context, not in the host allocator.
START_TEST(test_encoder_destroy_with_bindings_leaks_nothing) {
  dc_test_allocator_t counter = {0};
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  params.allocator = dc_test_allocator(&counter);
  dc_context_t* c = dc_test_context_new(&params);
  dc_device_t* d = dc_test_device(c);
  dc_program_t* p = build_on(d, "encoder.cl", kSource, NULL);
  dc_stream_t* s = new_stream(d);

  // Out of memory on creating, and on the argument slots: nothing changes.
  dc_encoder_t* e = SENTINEL;
  counter.fail_at = atomic_load(&counter.attempts) + 1;
  counter.fail_once = true;
  DC_CK_FAIL(dc_encoder_create(s, &e), DC_ERR_OUT_OF_MEMORY,
             "dc_encoder_create: cannot allocate the encoder");
  ck_assert_ptr_null(e);
  e = new_encoder(s);
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "none")));
  counter.fail_at = atomic_load(&counter.attempts) + 1;
  DC_CK_FAIL(dc_encoder_set_kernel(e, kernel_of(p, "scale")),
             DC_ERR_OUT_OF_MEMORY,
             "dc_encoder_set_kernel: kernel 'scale': cannot allocate 3 "
             "argument slots");
  set_grid1(e, 4);  // still "none", with its grid
  DC_CK_OK(dc_encoder_validate(e));
  counter.fail_at = 0;

  // Fewer arguments than before reuse the slots: no allocation.
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "scale")));
  size_t before = atomic_load(&counter.attempts);
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "inc")));
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "scale")));
  ck_assert_uint_eq(atomic_load(&counter.attempts), before);

  dc_buffer_t* x = dc_test_buffer_new(d, DC_DTYPE_F32, 32, "bound");
  dc_arg_t a = dc_arg_buffer(x);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_f32(1.0f);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  dc_buffer_release(x);
  dc_program_release(p);
  dc_stream_release(s);
  ck_assert_uint_eq(dc_context_live_buffer_count(c), 1);
  dc_encoder_release(e);
  ck_assert_uint_eq(dc_context_live_buffer_count(c), 0);
  ck_assert_uint_eq(dc_context_report_leaks(c), 0);
  dc_context_release(c);
  DC_CK_ALLOCATOR_BALANCED(&counter);
}
END_TEST

//===-- core: history, statistics, streams ------------------------------===//

START_TEST(test_encoder_history_wraps_around) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = new_encoder(s);
  dc_encoder_record_t r;
  DC_CK_FAIL(dc_encoder_history(e, 0, &r), DC_ERR_OUT_OF_RANGE,
             "dc_encoder_history: index 0 is past the history's 0 "
             "record(s)");
  ck_assert_uint_eq(stats_of(e).history_length, 0);

  dc_buffer_t* c = i32_buffer(64, 0);
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "inc")));
  dc_arg_t a = dc_arg_buffer(c);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_u32(64);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  set_grid1(e, 64);
  // 40 commands; the 20th and 35th are refused (a group of 48).
  const size_t total = DC_ENCODER_HISTORY + 8;
  for (size_t i = 1; i <= total; ++i) {
    if (i == 20 || i == 35) {
      size_t bad = 48;
      DC_CK_OK(dc_encoder_set_group(e, &bad));
      DC_CK_FAIL(dc_encoder_dispatch(e), DC_ERR_INVALID_ARGUMENT,
                 "dc_encoder_dispatch: kernel 'inc': global size 64 of "
                 "dimension 0 is not a multiple of the work-group size 48");
      DC_CK_OK(dc_encoder_set_group(e, NULL));
    } else {
      DC_CK_OK(dc_encoder_dispatch(e));
    }
  }
  sync_stream(s);
  expect_i32(c, 64, (int32_t)total - 2);

  dc_encoder_stats_t st = stats_of(e);
  ck_assert_uint_eq(st.dispatches, total - 2);
  ck_assert_uint_eq(st.rejected, 2);
  ck_assert_uint_eq(st.history_length, DC_ENCODER_HISTORY);
  uint64_t sum = 0;
  for (size_t i = 0; i < DC_ENCODER_HISTORY; ++i) {
    DC_CK_OK(dc_encoder_history(e, i, &r));
    uint64_t seq = total - i;
    ck_assert_uint_eq(r.sequence, seq);
    ck_assert_str_eq(r.kernel, "inc");
    ck_assert_uint_eq(r.stream_id, dc_stream_id(s));
    ck_assert_uint_eq(r.dims, 1);
    ck_assert_uint_eq(r.global[0], 64);
    ck_assert_uint_eq(r.global[1], 0);
    bool refused = seq == 20 || seq == 35;
    ck_assert_int_eq(r.status, refused ? DC_ERR_INVALID_ARGUMENT : DC_OK);
    ck_assert_uint_eq(r.local[0], refused ? 48 : 0);
    sum += r.encode_ns;
  }
  ck_assert_uint_ge(st.encode_ns, sum);
  ck_assert_uint_gt(sum, 0);
  // The oldest 8 are gone.
  DC_CK_FAIL(dc_encoder_history(e, DC_ENCODER_HISTORY, &r),
             DC_ERR_OUT_OF_RANGE,
             "dc_encoder_history: index 32 is past the history's 32 "
             "record(s)");
  ck_assert_uint_eq(r.sequence, 0);  // cleared

  // A refusal before a kernel is recorded too.
  dc_encoder_t* fresh = new_encoder(s);
  DC_CK_FAIL(dc_encoder_dispatch(fresh), DC_ERR_FAILED_PRECONDITION,
             "no kernel selected");
  DC_CK_OK(dc_encoder_history(fresh, 0, &r));
  ck_assert_uint_eq(r.sequence, 1);
  ck_assert_str_eq(r.kernel, "");
  ck_assert_uint_eq(r.dims, 0);
  ck_assert_int_eq(r.status, DC_ERR_FAILED_PRECONDITION);
  st = stats_of(fresh);
  ck_assert_uint_eq(st.rejected, 1);
  ck_assert_uint_eq(st.dispatches, 0);
  ck_assert_uint_eq(st.history_length, 1);
  dc_encoder_release(fresh);

  dc_encoder_release(e);
  dc_buffer_release(c);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

START_TEST(test_encoder_set_stream_moves_later_dispatches) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_stream_t* s1 = new_stream(dut);
  dc_stream_t* s2 = new_stream(dut);
  ck_assert_uint_ne(dc_stream_id(s1), dc_stream_id(s2));
  dc_encoder_t* e = new_encoder(s1);
  dc_buffer_t* c = i32_buffer(32, 0);
  DC_CK_OK(dc_encoder_set_kernel(e, kernel_of(p, "inc")));
  dc_arg_t a = dc_arg_buffer(c);
  DC_CK_OK(dc_encoder_set_arg(e, 0, &a));
  a = dc_arg_u32(32);
  DC_CK_OK(dc_encoder_set_arg(e, 1, &a));
  set_grid1(e, 32);
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s1);

  DC_CK_OK(dc_encoder_set_stream(e, s2));
  DC_CK_OK(dc_encoder_set_stream(e, s2));  // the same again
  dc_stream_release(s2);                   // the encoder keeps it
  DC_CK_OK(dc_encoder_dispatch(e));        // bindings and grid stay
  DC_CK_OK(dc_encoder_dispatch(e));
  dc_encoder_record_t r;
  DC_CK_OK(dc_encoder_history(e, 0, &r));
  ck_assert_uint_eq(r.stream_id, dc_stream_id(s2));
  DC_CK_OK(dc_encoder_history(e, 2, &r));
  ck_assert_uint_eq(r.stream_id, dc_stream_id(s1));

  dc_stream_retain(s2);  // valid: the encoder holds a reference
  sync_stream(s2);
  expect_i32(c, 32, 3);
  dc_stream_stats_t st1, st2;
  DC_CK_OK(dc_stream_stats(s1, &st1));
  DC_CK_OK(dc_stream_stats(s2, &st2));
  ck_assert_uint_eq(st1.submitted, 1);
  ck_assert_uint_eq(st2.submitted, 2);

  // Back to s1: s2's last reference goes with it.
  DC_CK_OK(dc_encoder_set_stream(e, s1));
  dc_stream_release(s2);
  DC_CK_OK(dc_encoder_dispatch(e));
  sync_stream(s1);
  expect_i32(c, 32, 4);
  DC_CK_OK(dc_stream_stats(s1, &st1));
  ck_assert_uint_eq(st1.submitted, 2);

  dc_encoder_release(e);
  dc_stream_release(s1);
  dc_buffer_release(c);
  dc_program_release(p);
}
END_TEST

//===-- errors: NULL ----------------------------------------------------===//

START_TEST(test_encoder_null_handling) {
  dc_program_t* p = build_on(dut, "encoder.cl", kSource, NULL);
  dc_kernel_t* scale = kernel_of(p, "scale");
  dc_stream_t* s = new_stream(dut);
  dc_encoder_t* e = SENTINEL;
  dc_arg_t a = dc_arg_f32(1.0f);
  size_t sizes[3] = {4, 4, 4};
  dc_encoder_record_t r;
  dc_encoder_stats_t st;

  DC_CK_FAIL(dc_encoder_create(NULL, &e), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_create: 'stream' must not be NULL");
  ck_assert_ptr_null(e);
  DC_CK_FAIL(dc_encoder_create(s, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_create: 'out_encoder' must not be NULL");
  dc_encoder_release(NULL);

#define EXPECT_NULL_ENCODER(call, fn)                                     \
  DC_CK_FAIL(call, DC_ERR_INVALID_ARGUMENT, fn ": 'encoder' is NULL or a " \
                                            "released encoder")
  EXPECT_NULL_ENCODER(dc_encoder_set_stream(NULL, s),
                      "dc_encoder_set_stream");
  EXPECT_NULL_ENCODER(dc_encoder_set_kernel(NULL, scale),
                      "dc_encoder_set_kernel");
  EXPECT_NULL_ENCODER(dc_encoder_set_arg(NULL, 0, &a), "dc_encoder_set_arg");
  EXPECT_NULL_ENCODER(dc_encoder_set_arg_by_name(NULL, "x", &a),
                      "dc_encoder_set_arg_by_name");
  EXPECT_NULL_ENCODER(dc_encoder_set_grid(NULL, 1, sizes),
                      "dc_encoder_set_grid");
  EXPECT_NULL_ENCODER(dc_encoder_set_group(NULL, sizes),
                      "dc_encoder_set_group");
  EXPECT_NULL_ENCODER(dc_encoder_set_group(NULL, NULL),
                      "dc_encoder_set_group");
  EXPECT_NULL_ENCODER(dc_encoder_set_offset(NULL, sizes),
                      "dc_encoder_set_offset");
  EXPECT_NULL_ENCODER(dc_encoder_validate(NULL), "dc_encoder_validate");
  EXPECT_NULL_ENCODER(dc_encoder_dispatch(NULL), "dc_encoder_dispatch");
  r.sequence = 99;
  EXPECT_NULL_ENCODER(dc_encoder_history(NULL, 0, &r), "dc_encoder_history");
  ck_assert_uint_eq(r.sequence, 0);
  st.dispatches = 99;
  EXPECT_NULL_ENCODER(dc_encoder_stats(NULL, &st), "dc_encoder_stats");
  ck_assert_uint_eq(st.dispatches, 0);
#undef EXPECT_NULL_ENCODER

  e = new_encoder(s);
  DC_CK_FAIL(dc_encoder_set_stream(e, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_stream: 'stream' must not be NULL");
  DC_CK_FAIL(dc_encoder_set_kernel(e, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_kernel: 'kernel' is NULL or a released kernel");
  DC_CK_OK(dc_encoder_set_kernel(e, scale));
  DC_CK_FAIL(dc_encoder_set_arg(e, 0, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg: 'arg' must not be NULL");
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, NULL, &a),
             DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg_by_name: 'name' must not be NULL");
  DC_CK_FAIL(dc_encoder_set_arg_by_name(e, "factor", NULL),
             DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_set_arg_by_name: 'arg' must not be NULL");
  DC_CK_FAIL(dc_encoder_history(e, 0, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_history: 'out_record' must not be NULL");
  DC_CK_FAIL(dc_encoder_stats(e, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_encoder_stats: 'out_stats' must not be NULL");
  st = stats_of(e);
  ck_assert_uint_eq(st.arg_errors, 3);
  ck_assert_uint_eq(st.args_bound, 0);

  dc_encoder_release(e);
  dc_stream_release(s);
  dc_program_release(p);
}
END_TEST

static Suite* encoder_suite(void) {
  dc_test_fake_register();
  Suite* s = dc_test_kernel_suite("encoder", "dc-check-encoder");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_encoder_binds_by_index_and_by_name);
  tcase_add_test(core, test_encoder_history_wraps_around);
  tcase_add_test(core, test_encoder_set_stream_moves_later_dispatches);
  tcase_add_test(core, test_encoder_validate_takes_no_autotuning_turn);

  TCase* errors = dc_test_kernel_tcase(s, "errors");
  tcase_add_test(errors, test_encoder_rejects_bad_arguments);
  tcase_add_test(errors, test_encoder_rejects_kernels_of_another_device);
  tcase_add_test(errors, test_encoder_rejects_bad_grids);
  tcase_add_test(errors, test_encoder_validate_names_what_is_missing);
  tcase_add_test(errors, test_encoder_null_handling);

  TCase* lifecycle = dc_test_kernel_tcase(s, "lifecycle");
  tcase_add_test(lifecycle,
                 test_encoder_rebinding_releases_the_previous_buffer);
  tcase_add_test(lifecycle, test_encoder_destroy_with_bindings_leaks_nothing);

  // The CPU with the fake backend's GPU: the CPU only.
  if (dc_test_device_is_the_cpu()) {
    TCase* cpu_only = dc_test_kernel_tcase(s, "cpu");
    tcase_add_test(cpu_only, test_encoder_rejects_kernels_of_a_fake_device);
  }
  return s;
}

DC_CHECK_DEVICE_MAIN(encoder_suite)

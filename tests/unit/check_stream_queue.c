// check_stream_queue.c: deep streams of dispatches, as a device with
// queues runs them (docs/execution.md, "Queued dispatches"): the calling
// thread puts dispatches on the device queue while everything ahead of
// them is there, and a stream thread finishes them. Order, event records
// between them, a failure in the middle and arguments that change from
// one dispatch to the next must come out as on any stream.
//
// Device-generic: on the CPU (no device queues) the same tests check that
// the stream thread's path gives the same results.
// SPDX-License-Identifier: MIT
#include "dc/stream.h"
#include "kernel_fixture.h"

// step is order-sensitive: a different order of two steps gives another
// value. scale reads |in| at its offset and writes |out|.
static const char kSource[] =
    "__kernel void step(__global uint* a, uint k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = a[i] * 3u + k + (uint)i;\n"
    "}\n"
    "__kernel void scale(__global const float* in, __global float* out,\n"
    "                    float k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * k;\n"
    "}\n";

#define N 8
#define DEEP 3000
#define EVERY 250

static dc_stream_t* new_stream(const char* label) {
  dc_stream_params_t p = {.label = label};
  dc_stream_t* st = NULL;
  DC_CK_OK(dc_stream_create(dut, &p, &st));
  return st;
}

static void step_on(dc_stream_t* st, dc_kernel_t* k, dc_buffer_t* a,
                    uint32_t value) {
  dc_arg_t args[2] = {dc_arg_buffer(a), dc_arg_u32(value)};
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  DC_CK_OK(dc_stream_dispatch(st, k, &grid, args, 2));
}

static void step_host(uint32_t* a, uint32_t value) {
  for (uint32_t i = 0; i < N; ++i) a[i] = a[i] * 3u + value + i;
}

static dc_stream_stats_t stats_of(dc_stream_t* st) {
  dc_stream_stats_t s;
  DC_CK_OK(dc_stream_stats(st, &s));
  return s;
}

// Thousands of dispatches with a record and a read every EVERY of them:
// each read sees exactly the dispatches before it, each event completes.
START_TEST(test_deep_stream_keeps_order_and_records) {
  dc_program_t* p = build_on(dut, "queue.cl", kSource, NULL);
  dc_kernel_t* k = kernel_of(p, "step");
  dc_buffer_t* a = dc_test_buffer_new(dut, DC_DTYPE_U32, N, "a");
  uint32_t zero[N] = {0};
  DC_CK_OK(dc_buffer_write(a, 0, zero, N));
  dc_stream_t* st = new_stream("deep");
  dc_stream_stats_t before = stats_of(st);
  enum { MARKS = DEEP / EVERY };
  dc_event_t* marks[MARKS];
  static uint32_t seen[MARKS][N], expect[MARKS][N];
  uint32_t h[N] = {0};
  for (int i = 0; i < DEEP; ++i) {
    uint32_t value = (uint32_t)(i * 7 + 1);
    step_on(st, k, a, value);
    step_host(h, value);
    if ((i + 1) % EVERY == 0) {
      int m = (i + 1) / EVERY - 1;
      DC_CK_OK(dc_event_create(dut, 0, &marks[m]));
      DC_CK_OK(dc_stream_record(st, marks[m]));
      DC_CK_OK(dc_stream_read(st, a, 0, seen[m], N));
      memcpy(expect[m], h, sizeof(h));
    }
  }
  // An event of the middle completes no later than the stream.
  DC_CK_OK(dc_event_wait(marks[MARKS / 2], DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  for (int m = 0; m < MARKS; ++m) {
    DC_CK_OK(dc_event_query(marks[m]));
    for (int i = 0; i < N; ++i) ck_assert_uint_eq(seen[m][i], expect[m][i]);
    dc_event_release(marks[m]);
  }
  dc_stream_stats_t after = stats_of(st);
  ck_assert_uint_eq(after.completed - before.completed, DEEP + 2 * MARKS);
  ck_assert_uint_eq(after.failed, 0);
  ck_assert_uint_eq(after.skipped, 0);
  dc_stream_release(st);
  dc_buffer_release(a);
  dc_program_release(p);
}
END_TEST

// A failing dispatch in the middle of a deep stream: the dispatches and
// the record before it finish, it fails the stream, everything after it
// is skipped, the record after it carries its failure.
START_TEST(test_deep_stream_reports_a_failure_in_the_middle) {
  dc_program_t* p = build_on(dut, "queue.cl", kSource, NULL);
  dc_program_t* bad = build_on(dut, "over.cl",
                               "__kernel void over(__global int* x) {\n"
                               "  x[get_global_id(0) + 1] = 1;\n"
                               "}\n",
                               "-dc-checked");
  dc_kernel_t* k = kernel_of(p, "step");
  dc_buffer_t* a = dc_test_buffer_new(dut, DC_DTYPE_U32, N, "a");
  dc_buffer_t* small = dc_test_buffer_new(dut, DC_DTYPE_I32, 16, "small");
  uint32_t zero[N] = {0};
  DC_CK_OK(dc_buffer_write(a, 0, zero, N));
  dc_stream_t* st = new_stream("failing");
  dc_event_t *first = NULL, *second = NULL;
  DC_CK_OK(dc_event_create(dut, 0, &first));
  DC_CK_OK(dc_event_create(dut, 0, &second));
  uint32_t h[N] = {0};
  for (int i = 0; i < 1000; ++i) {
    step_on(st, k, a, (uint32_t)i);
    step_host(h, (uint32_t)i);
  }
  DC_CK_OK(dc_stream_record(st, first));
  dc_arg_t arg = dc_arg_buffer(small);
  dc_dispatch_t grid = {.dims = 1, .global = {16}};
  DC_CK_OK(dc_stream_dispatch(st, kernel_of(bad, "over"), &grid, &arg, 1));
  for (int i = 0; i < 1000; ++i) step_on(st, k, a, 5u);
  DC_CK_OK(dc_stream_record(st, second));
  DC_CK_FAIL(dc_stream_sync(st, DC_TIMEOUT_INFINITE), DC_ERR_OUT_OF_RANGE,
             "over");
  DC_CK_OK(dc_event_wait(first, DC_TIMEOUT_INFINITE));
  DC_CK_FAIL(dc_event_wait(second, DC_TIMEOUT_INFINITE), DC_ERR_OUT_OF_RANGE,
             "over");
  dc_stream_stats_t s = stats_of(st);
  ck_assert_uint_eq(s.completed, 1001);
  ck_assert_uint_eq(s.failed, 1);
  ck_assert_uint_eq(s.skipped, 1001);
  // The skipped steps never ran.
  uint32_t out[N];
  DC_CK_OK(dc_buffer_read(a, 0, out, N));
  for (int i = 0; i < N; ++i) ck_assert_uint_eq(out[i], h[i]);
  // Reset, the stream runs again.
  DC_CK_FAIL(dc_stream_reset(st), DC_ERR_OUT_OF_RANGE, "over");
  step_on(st, k, a, 9u);
  step_host(h, 9u);
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_buffer_read(a, 0, out, N));
  for (int i = 0; i < N; ++i) ck_assert_uint_eq(out[i], h[i]);
  dc_event_release(first);
  dc_event_release(second);
  dc_stream_release(st);
  dc_buffer_release(small);
  dc_buffer_release(a);
  dc_program_release(bad);
  dc_program_release(p);
}
END_TEST

// Runs scale(in, out, k) on |st| and checks out[0..n) = in_host * k.
static void expect_scaled(dc_stream_t* st, dc_kernel_t* k, dc_buffer_t* in,
                          dc_buffer_t* out, float factor, const float* in_host,
                          size_t n) {
  dc_arg_t args[3] = {dc_arg_buffer(in), dc_arg_buffer(out),
                      dc_arg_f32(factor)};
  dc_dispatch_t grid = {.dims = 1, .global = {n}};
  DC_CK_OK(dc_stream_dispatch(st, k, &grid, args, 3));
  float got[N];
  DC_CK_OK(dc_stream_read(st, out, 0, got, n));
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  for (size_t i = 0; i < n; ++i) {
    ck_assert_float_eq(got[i], in_host[i] * factor);
  }
}

// The device may keep a kernel's arguments from one dispatch to the next
// (opencl_dispatch.c): a changed buffer, view offset, value, or a buffer
// released and made again is always seen.
START_TEST(test_changed_arguments_are_seen) {
  dc_program_t* p = build_on(dut, "queue.cl", kSource, NULL);
  dc_kernel_t* k = kernel_of(p, "scale");
  float va[2 * N], vb[N];
  for (int i = 0; i < 2 * N; ++i) va[i] = (float)(i + 1);
  for (int i = 0; i < N; ++i) vb[i] = (float)(100 + i);
  dc_buffer_t* a = buffer_on(dut, DC_DTYPE_F32, 2 * N, va);
  dc_buffer_t* b = buffer_on(dut, DC_DTYPE_F32, N, vb);
  dc_buffer_t* out = dc_test_buffer_new(dut, DC_DTYPE_F32, N, "out");
  dc_stream_t* st = new_stream("args");
  expect_scaled(st, k, a, out, 2.0f, va, N);
  expect_scaled(st, k, a, out, 2.0f, va, N);  // all the same
  expect_scaled(st, k, b, out, 2.0f, vb, N);  // another buffer
  expect_scaled(st, k, b, out, 3.0f, vb, N);  // another value
  for (size_t offset = 1; offset <= N; offset += 3) {  // view offsets
    dc_buffer_t* view = NULL;
    DC_CK_OK(dc_buffer_create_view(a, offset, N, &view));
    expect_scaled(st, k, view, out, 3.0f, va + offset, N);
    dc_buffer_release(view);
  }
  // Released and made again (the device may hand out the same memory).
  for (int round = 0; round < 3; ++round) {
    dc_buffer_release(b);
    for (int i = 0; i < N; ++i) vb[i] = (float)(round * 10 + i);
    b = buffer_on(dut, DC_DTYPE_F32, N, vb);
    expect_scaled(st, k, b, out, 3.0f, vb, N);
  }
  // And through dc_kernel_dispatch, which shares the kernel's arguments.
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(out), dc_arg_f32(0.5f)};
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, 3));
  float got[N];
  DC_CK_OK(dc_buffer_read(out, 0, got, N));
  for (int i = 0; i < N; ++i) ck_assert_float_eq(got[i], va[i] * 0.5f);
  dc_stream_release(st);
  dc_buffer_release(out);
  dc_buffer_release(b);
  dc_buffer_release(a);
  dc_program_release(p);
}
END_TEST

static Suite* stream_queue_suite(void) {
  Suite* s = dc_test_kernel_suite("stream_queue", "dc-check-stream-queue");
  TCase* deep = dc_test_kernel_tcase(s, "deep");
  tcase_add_test(deep, test_deep_stream_keeps_order_and_records);
  tcase_add_test(deep, test_deep_stream_reports_a_failure_in_the_middle);
  TCase* args = dc_test_kernel_tcase(s, "arguments");
  tcase_add_test(args, test_changed_arguments_are_seen);
  return s;
}

DC_CHECK_DEVICE_MAIN(stream_queue_suite)

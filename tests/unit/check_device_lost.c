// check_device_lost.c: a real sticky error on a GPU (docs/resilience.md,
// "Error classes"). An unchecked kernel that stores far outside its
// buffer breaks the CUDA context (CUDA_ERROR_ILLEGAL_ADDRESS): the call
// fails with DEVICE_LOST, a device-class code; the device is marked lost
// and its breaker trips; graph ops there are not retried on it and do not
// hang; and it stays lost (only a new process recovers the GPU). Runs
// as cuda.device_lost on a GPU; on a CPU device the test would
// crash the process, so it is skipped there (exit 77).
// SPDX-License-Identifier: MIT
#include "check_util.h"
#include "kernel_fixture.h"

static const char kLost[] =
    "__kernel void poke(__global int* p, long far) {\n"
    "  p[get_global_id(0) + far] = 1;\n"
    "}\n"
    "__kernel void inc(__global int* x) { x[get_global_id(0)] += 1; }\n";

START_TEST(test_sticky_error_marks_the_device_lost) {
  dc_program_t* p = build_on(dut, "lost.cl", kLost, NULL);
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_I32, 256, "lost");
  dc_dispatch_t grid = {.dims = 1, .global = {256}};
  // A graph instance made while the GPU still works.
  dc_retry_policy_t policy = {.max_attempts = 5, .base_delay_ns = 1000};
  dc_graph_params_t gp = {.retry = &policy};
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(ctx, &gp, &g));
  dc_arg_t one[1] = {dc_arg_buffer(b)};
  DC_CK_OK(dc_graph_dispatch(g, "inc", kernel_of(p, "inc"), &grid, one, 1,
                             NULL));
  dc_stream_group_t* grp = NULL;
  DC_CK_OK(dc_stream_group_create(dut, NULL, &grp));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  DC_CK_OK(dc_graph_exec_run(e, NULL));

  dc_arg_t far[2] = {dc_arg_buffer(b), dc_arg_i64((int64_t)1 << 36)};
  dc_status_t st = dc_kernel_dispatch(kernel_of(p, "poke"), &grid, far, 2);
  ck_assert_msg(st == DC_ERR_DEVICE_LOST, "got %s: %s", dc_status_name(st),
                dc_last_error());
  DC_CK_STR_HAS(dc_last_error(), "CUDA_ERROR_");
  ck_assert_int_eq(dc_status_class(st), DC_STATUS_CLASS_DEVICE);
  dc_device_health_t h;
  DC_CK_OK(dc_device_health(dut, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_LOST);
  dc_breaker_t* breaker = NULL;
  DC_CK_OK(dc_device_breaker(dut, NULL, &breaker));
  ck_assert_int_eq(dc_breaker_state(breaker), DC_BREAKER_OPEN);

  // The op meets the open breaker and goes to its fallback, which cannot
  // read the lost device's buffer: the run fails at once, with nothing
  // retried on the broken device and nothing waiting for it.
  st = dc_graph_exec_run(e, NULL);
  ck_assert_int_ne(st, DC_OK);
  dc_op_report_t r;
  DC_CK_OK(dc_graph_exec_op(e, 0, &r));
  ck_assert_uint_le(r.attempts, 2);  // refused on the GPU, one fallback
  // CUDA recovers from a sticky error only in a new process: the GPU
  // stays lost.
  DC_CK_FAIL(dc_device_reset_health(dut), DC_ERR_FAILED_PRECONDITION,
             "a new process gets it back");
  DC_CK_OK(dc_device_health(dut, &h));
  ck_assert_int_eq(h.state, DC_DEVICE_LOST);
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_graph_release(g);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

static Suite* device_lost_suite(void) {
  Suite* s = dc_test_kernel_suite("device_lost", "dc-check-device-lost");
  TCase* tc = dc_test_kernel_tcase(s, "sticky");
  tcase_add_test(tc, test_sticky_error_marks_the_device_lost);
  return s;
}

// Whether the device's backend can tell that a failure broke its driver
// state (dc/backend.h's broken hook). Without it an access outside memory
// is not something the device survives to report (a CPU, or pocl, ends
// the process), so the suite has nothing to test.
static bool reports_lost_state(dc_device_t* device) {
  return device->vtable->broken != NULL;
}

int main(void) {
  dc_test_device_generic = true;
  if (dc_test_device_is_a_cpu()) {
    printf("device_lost: the device under test is a CPU, where an access "
           "outside memory ends the process: skipped\n");
    return DC_TEST_SKIPPED;
  }
  int absent = dc_test_device_present();
  if (absent == 0) {
    absent = dc_test_device_has(reports_lost_state, "device_lost",
                                "cannot report a lost driver state");
  }
  if (absent != 0) return absent;
  SRunner* runner = srunner_create(device_lost_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

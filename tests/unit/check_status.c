// check_status.c: status codes, names, classes and the error message.
// SPDX-License-Identifier: MIT
#include <signal.h>

#include "check_util.h"

// Every code with the name, description and class the header promises,
// written out by hand so that a change to the map shows up here.
static const struct {
  dc_status_t status;
  int value;
  const char* name;
  const char* desc;
  dc_status_class_t cls;
} kCodes[] = {
    {DC_OK, 0, "OK", "ok", DC_STATUS_CLASS_OK},
    {DC_ERR_CANCELLED, 1, "CANCELLED", "cancelled", DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_UNKNOWN, 2, "UNKNOWN", "unknown error", DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_INVALID_ARGUMENT, 3, "INVALID_ARGUMENT", "invalid argument",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_DEADLINE_EXCEEDED, 4, "DEADLINE_EXCEEDED", "deadline exceeded",
     DC_STATUS_CLASS_TRANSIENT},
    {DC_ERR_NOT_FOUND, 5, "NOT_FOUND", "not found", DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_ALREADY_EXISTS, 6, "ALREADY_EXISTS", "already exists",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_PERMISSION_DENIED, 7, "PERMISSION_DENIED", "permission denied",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_RESOURCE_EXHAUSTED, 8, "RESOURCE_EXHAUSTED", "resource exhausted",
     DC_STATUS_CLASS_TRANSIENT},
    {DC_ERR_FAILED_PRECONDITION, 9, "FAILED_PRECONDITION",
     "failed precondition", DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_ABORTED, 10, "ABORTED", "aborted", DC_STATUS_CLASS_TRANSIENT},
    {DC_ERR_OUT_OF_RANGE, 11, "OUT_OF_RANGE", "out of range",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_UNSUPPORTED, 12, "UNSUPPORTED", "not supported",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_INTERNAL, 13, "INTERNAL", "internal error",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_UNAVAILABLE, 14, "UNAVAILABLE", "temporarily unavailable",
     DC_STATUS_CLASS_TRANSIENT},
    {DC_ERR_DATA_LOSS, 15, "DATA_LOSS", "data loss", DC_STATUS_CLASS_DEVICE},
    {DC_ERR_OUT_OF_MEMORY, 16, "OUT_OF_MEMORY", "out of memory",
     DC_STATUS_CLASS_TRANSIENT},
    {DC_ERR_DEVICE_LOST, 17, "DEVICE_LOST", "device lost",
     DC_STATUS_CLASS_DEVICE},
    {DC_ERR_COMPILE, 18, "COMPILE", "kernel compilation failed",
     DC_STATUS_CLASS_DETERMINISTIC},
    {DC_ERR_CIRCUIT_OPEN, 19, "CIRCUIT_OPEN", "circuit breaker open",
     DC_STATUS_CLASS_TRANSIENT},
};
#define CODE_COUNT (sizeof(kCodes) / sizeof(kCodes[0]))

//===-- core ------------------------------------------------------------===//

START_TEST(test_status_values_match_canonical_codes) {
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    ck_assert_int_eq((int)kCodes[i].status, kCodes[i].value);
  }
}
END_TEST

START_TEST(test_status_map_lists_every_code) {
  // The X-macro and the table above must describe the same set of codes.
  size_t mapped = 0;
#define COUNT_(name, value, cls, desc) ++mapped;
  DC_STATUS_MAP(COUNT_)
#undef COUNT_
  ck_assert_uint_eq(mapped, CODE_COUNT);
}
END_TEST

START_TEST(test_status_names_and_descriptions) {
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    ck_assert_str_eq(dc_status_name(kCodes[i].status), kCodes[i].name);
    ck_assert_str_eq(dc_status_str(kCodes[i].status), kCodes[i].desc);
  }
}
END_TEST

START_TEST(test_status_from_name_round_trips_every_code) {
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    dc_status_t parsed = (dc_status_t)-1;
    ck_assert(dc_status_from_name(dc_status_name(kCodes[i].status), &parsed));
    ck_assert_int_eq(parsed, kCodes[i].status);
  }
}
END_TEST

START_TEST(test_status_classes) {
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    ck_assert_msg(dc_status_class(kCodes[i].status) == kCodes[i].cls,
                  "class of %s", kCodes[i].name);
  }
  ck_assert_str_eq(dc_status_class_name(DC_STATUS_CLASS_DEVICE), "device");
  ck_assert_str_eq(dc_status_class_name(DC_STATUS_CLASS_DETERMINISTIC),
                   "deterministic");
  ck_assert_str_eq(dc_status_class_name(DC_STATUS_CLASS_TRANSIENT),
                   "transient");
  ck_assert_str_eq(dc_status_class_name((dc_status_class_t)77), "unknown");
}
END_TEST

START_TEST(test_status_transient_set_is_exactly_the_documented_one) {
  // The header names the transient codes; everything else is not.
  static const dc_status_t kTransient[] = {
      DC_ERR_DEADLINE_EXCEEDED, DC_ERR_RESOURCE_EXHAUSTED, DC_ERR_ABORTED,
      DC_ERR_UNAVAILABLE, DC_ERR_OUT_OF_MEMORY, DC_ERR_CIRCUIT_OPEN,
  };
  for (size_t i = 0; i < CODE_COUNT; ++i) {
    bool expected = false;
    for (size_t j = 0; j < sizeof(kTransient) / sizeof(kTransient[0]); ++j) {
      expected |= kCodes[i].status == kTransient[j];
    }
    ck_assert_msg(dc_status_is_transient(kCodes[i].status) == expected,
                  "dc_status_is_transient(%s)", kCodes[i].name);
  }
  ck_assert(!dc_status_is_transient(DC_OK));
  ck_assert(!dc_status_is_transient(DC_ERR_FAILED_PRECONDITION));
}
END_TEST

START_TEST(test_status_set_error_formats_and_returns_code) {
  dc_status_t st = dc_set_error(DC_ERR_ABORTED, "step %d of %s", 3, "plan");
  ck_assert_int_eq(st, DC_ERR_ABORTED);
  ck_assert_str_eq(dc_last_error(), "step 3 of plan");
  // The next failure overwrites the message.
  dc_set_error(DC_ERR_INTERNAL, "second");
  ck_assert_str_eq(dc_last_error(), "second");
}
END_TEST

START_TEST(test_status_set_error_can_quote_the_last_error) {
  // Hosts add context to a failure they pass on, quoting its message.
  dc_set_error(DC_ERR_NOT_FOUND, "no device named 'gpu'");
  dc_status_t st =
      dc_set_error(DC_ERR_NOT_FOUND, "loading model: %s", dc_last_error());
  ck_assert_int_eq(st, DC_ERR_NOT_FOUND);
  ck_assert_str_eq(dc_last_error(), "loading model: no device named 'gpu'");
}
END_TEST

START_TEST(test_status_check_macro_passes_ok) {
  DC_CHECK(DC_OK);
  DC_CHECK(dc_context_create(NULL, NULL) == DC_ERR_INVALID_ARGUMENT
               ? DC_OK
               : DC_ERR_INTERNAL);
}
END_TEST

// Runs only in fork mode: the child must die of SIGABRT.
START_TEST(test_status_check_macro_aborts_on_failure) {
  // Keep the abort report out of the test log.
  ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
  DC_CHECK(dc_set_error(DC_ERR_DATA_LOSS, "on purpose"));
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_status_unknown_values) {
  static const int kUnknown[] = {-1, 20, 100, 1 << 20};
  for (size_t i = 0; i < sizeof(kUnknown) / sizeof(kUnknown[0]); ++i) {
    dc_status_t s = (dc_status_t)kUnknown[i];
    ck_assert_str_eq(dc_status_name(s), "UNKNOWN_STATUS");
    ck_assert_str_eq(dc_status_str(s), "unknown status");
    ck_assert_int_eq(dc_status_class(s), DC_STATUS_CLASS_DETERMINISTIC);
    ck_assert(!dc_status_is_transient(s));
  }
}
END_TEST

START_TEST(test_status_from_name_rejects_unknown_names) {
  static const char* const kBad[] = {
      "", "ok", "Ok", "ERR_CANCELLED", "DC_OK", "OUT_OF_MEMORY ",
      " OK", "UNKNOWN_STATUS", "NOT-FOUND",
  };
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    dc_status_t out = DC_ERR_DATA_LOSS;
    ck_assert_msg(!dc_status_from_name(kBad[i], &out), "'%s' parsed",
                  kBad[i]);
    ck_assert_int_eq(out, DC_ERR_DATA_LOSS);  // untouched
  }
  dc_status_t out = DC_ERR_DATA_LOSS;
  ck_assert(!dc_status_from_name(NULL, &out));
  ck_assert_int_eq(out, DC_ERR_DATA_LOSS);
  ck_assert(!dc_status_from_name("OK", NULL));
}
END_TEST

START_TEST(test_status_set_error_truncates_long_messages) {
  char big[4096];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  dc_set_error(DC_ERR_INTERNAL, "%s", big);
  size_t n = strlen(dc_last_error());
  ck_assert_uint_gt(n, 255);  // long messages are kept, up to a bound
  ck_assert_uint_lt(n, sizeof(big) - 1);
  ck_assert_int_eq(dc_last_error()[0], 'x');
}
END_TEST

START_TEST(test_status_success_does_not_clear_message) {
  dc_context_t* ctx = NULL;
  DC_CK_FAIL(dc_context_create(NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_context_create");
  char saved[1024];
  snprintf(saved, sizeof(saved), "%s", dc_last_error());
  ctx = dc_test_context_new(NULL);
  ck_assert_str_eq(dc_last_error(), saved);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_status_release_does_not_touch_message) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_buffer_t* buf = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_F32, 16,
                                        "kept");
  dc_buffer_t* view = NULL;
  DC_CK_OK(dc_buffer_create_view(buf, 0, 4, &view));
  dc_set_error(DC_ERR_ABORTED, "the message to keep");
  dc_buffer_release(buf);
  dc_context_release(ctx);   // leak report path: the view is still alive
  dc_buffer_release(view);   // destroys the context
  ck_assert_str_eq(dc_last_error(), "the message to keep");
}
END_TEST

//===-- lifecycle: the message belongs to the thread ----------------------===//

typedef struct thread_probe_t {
  char seen_at_start[64];
  char seen_after_set[64];
} thread_probe_t;

static void* probe_thread(void* arg) {
  thread_probe_t* probe = arg;
  snprintf(probe->seen_at_start, sizeof(probe->seen_at_start), "%s",
           dc_last_error());
  dc_set_error(DC_ERR_UNAVAILABLE, "set in the other thread");
  snprintf(probe->seen_after_set, sizeof(probe->seen_after_set), "%s",
           dc_last_error());
  return NULL;
}

START_TEST(test_status_last_error_is_per_thread) {
  dc_set_error(DC_ERR_NOT_FOUND, "set in the main thread");
  thread_probe_t probe = {{0}, {0}};
  dc_test_run_threads(1, probe_thread, &probe, sizeof(probe));
  // A new thread starts with an empty message, and its failure stays its
  // own.
  ck_assert_str_eq(probe.seen_at_start, "");
  ck_assert_str_eq(probe.seen_after_set, "set in the other thread");
  ck_assert_str_eq(dc_last_error(), "set in the main thread");
}
END_TEST

START_TEST(test_status_last_error_never_null) {
  ck_assert_ptr_nonnull(dc_last_error());
  dc_set_error(DC_ERR_UNKNOWN, "%s", "");
  ck_assert_ptr_nonnull(dc_last_error());
  ck_assert_str_eq(dc_last_error(), "");
}
END_TEST

static Suite* status_suite(void) {
  Suite* s = suite_create("status");
  TCase* core = tcase_create("core");
  tcase_add_test(core, test_status_values_match_canonical_codes);
  tcase_add_test(core, test_status_map_lists_every_code);
  tcase_add_test(core, test_status_names_and_descriptions);
  tcase_add_test(core, test_status_from_name_round_trips_every_code);
  tcase_add_test(core, test_status_classes);
  tcase_add_test(core, test_status_transient_set_is_exactly_the_documented_one);
  tcase_add_test(core, test_status_set_error_formats_and_returns_code);
  tcase_add_test(core, test_status_set_error_can_quote_the_last_error);
  tcase_add_test(core, test_status_check_macro_passes_ok);
  if (dc_test_forking()) {
    tcase_add_test_raise_signal(core, test_status_check_macro_aborts_on_failure,
                                SIGABRT);
  }
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_test(errors, test_status_unknown_values);
  tcase_add_test(errors, test_status_from_name_rejects_unknown_names);
  tcase_add_test(errors, test_status_set_error_truncates_long_messages);
  tcase_add_test(errors, test_status_success_does_not_clear_message);
  tcase_add_test(errors, test_status_release_does_not_touch_message);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_test(lifecycle, test_status_last_error_is_per_thread);
  tcase_add_test(lifecycle, test_status_last_error_never_null);
  suite_add_tcase(s, lifecycle);
  return s;
}

DC_CHECK_MAIN(status_suite)

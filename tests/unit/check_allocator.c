// check_allocator.c: the host allocator and its use by the engine.
// SPDX-License-Identifier: MIT
#include "check_util.h"
#include "dc/backend.h"

// Records each call to an allocator function.
typedef struct call_log_t {
  int calls;
  void* last_ptr;
  size_t last_old_size;
  size_t last_new_size;
} call_log_t;

static void* logging_alloc(void* user_data, void* ptr, size_t old_size,
                           size_t new_size) {
  call_log_t* log = user_data;
  log->calls++;
  log->last_ptr = ptr;
  log->last_old_size = old_size;
  log->last_new_size = new_size;
  if (new_size == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, new_size);
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_allocator_system_malloc_and_free) {
  dc_allocator_t a = dc_allocator_system();
  ck_assert_ptr_nonnull(a.fn);
  unsigned char* p = dc_allocator_malloc(a, 100);
  ck_assert_ptr_nonnull(p);
  memset(p, 0x5A, 100);  // all of it is usable (ASan checks)
  dc_allocator_free(a, p, 100);
}
END_TEST

START_TEST(test_allocator_system_function_follows_lua_alloc) {
  dc_allocator_t a = dc_allocator_system();
  char* p = a.fn(a.user_data, NULL, 0, 16);
  ck_assert_ptr_nonnull(p);
  memcpy(p, "0123456789abcde", 16);
  p = a.fn(a.user_data, p, 16, 4096);  // grow keeps the contents
  ck_assert_ptr_nonnull(p);
  ck_assert_str_eq(p, "0123456789abcde");
  ck_assert_ptr_null(a.fn(a.user_data, p, 4096, 0));  // free returns NULL
  ck_assert_ptr_null(a.fn(a.user_data, NULL, 0, 0));  // free NULL is fine
}
END_TEST

START_TEST(test_allocator_calloc_zeroes) {
  dc_allocator_t a = dc_allocator_system();
  // Dirty the heap first so that zeroed memory is not a coincidence.
  for (int i = 0; i < 8; ++i) {
    unsigned char* junk = dc_allocator_malloc(a, 4000);
    ck_assert_ptr_nonnull(junk);
    memset(junk, 0xFF, 4000);
    dc_allocator_free(a, junk, 4000);
  }
  uint32_t* p = dc_allocator_calloc(a, 1000, sizeof(uint32_t));
  ck_assert_ptr_nonnull(p);
  for (int i = 0; i < 1000; ++i) ck_assert_uint_eq(p[i], 0);
  dc_allocator_free(a, p, 1000 * sizeof(uint32_t));
}
END_TEST

START_TEST(test_allocator_helpers_call_the_function) {
  call_log_t log = {0};
  dc_allocator_t a = {logging_alloc, &log};
  void* p = dc_allocator_malloc(a, 48);
  ck_assert_ptr_nonnull(p);
  ck_assert_int_eq(log.calls, 1);
  ck_assert_ptr_null(log.last_ptr);
  ck_assert_uint_eq(log.last_new_size, 48);
  dc_allocator_free(a, p, 48);
  ck_assert_int_eq(log.calls, 2);
  ck_assert_ptr_eq(log.last_ptr, p);
  ck_assert_uint_eq(log.last_old_size, 48);
  ck_assert_uint_eq(log.last_new_size, 0);
  void* q = dc_allocator_calloc(a, 3, 8);
  ck_assert_ptr_nonnull(q);
  ck_assert_int_eq(log.calls, 3);
  ck_assert_uint_eq(log.last_new_size, 24);
  dc_allocator_free(a, q, 24);
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_allocator_zero_sizes_give_null) {
  call_log_t log = {0};
  dc_allocator_t a = {logging_alloc, &log};
  ck_assert_ptr_null(dc_allocator_malloc(a, 0));
  ck_assert_ptr_null(dc_allocator_calloc(a, 0, 8));
  ck_assert_ptr_null(dc_allocator_calloc(a, 8, 0));
  ck_assert_int_eq(log.calls, 0);  // nothing reached the function
}
END_TEST

START_TEST(test_allocator_calloc_overflow_gives_null) {
  call_log_t log = {0};
  dc_allocator_t a = {logging_alloc, &log};
  ck_assert_ptr_null(dc_allocator_calloc(a, SIZE_MAX / 2, 3));
  ck_assert_ptr_null(dc_allocator_calloc(a, SIZE_MAX, SIZE_MAX));
  ck_assert_ptr_null(dc_allocator_calloc(a, (SIZE_MAX >> 8) + 1, 256));
  ck_assert_int_eq(log.calls, 0);
}
END_TEST

START_TEST(test_allocator_null_function_and_pointer) {
  dc_allocator_t none = {NULL, NULL};
  ck_assert_ptr_null(dc_allocator_malloc(none, 16));
  ck_assert_ptr_null(dc_allocator_calloc(none, 2, 8));
  dc_allocator_free(none, NULL, 0);
  call_log_t log = {0};
  dc_allocator_t a = {logging_alloc, &log};
  dc_allocator_free(a, NULL, 64);  // a no-op: the function is not called
  ck_assert_int_eq(log.calls, 0);
}
END_TEST

START_TEST(test_allocator_failure_is_reported_as_null) {
  dc_test_allocator_t counting = {0};
  counting.fail_at = 1;
  dc_allocator_t a = dc_test_allocator(&counting);
  ck_assert_ptr_null(dc_allocator_malloc(a, 32));
  ck_assert_ptr_null(dc_allocator_calloc(a, 4, 8));
  ck_assert_uint_eq(atomic_load(&counting.failures), 2);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

//===-- lifecycle: the engine allocates through the given allocator -------===//

START_TEST(test_allocator_context_uses_and_returns_everything) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 3;
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_uint_gt(atomic_load(&counting.allocations), 0);
  dc_allocator_t used = dc_context_allocator(ctx);
  ck_assert_ptr_eq(used.fn, dc_test_allocator_fn);
  ck_assert_ptr_eq(used.user_data, &counting);

  // Buffers and views allocate their bookkeeping there too.
  size_t before = atomic_load(&counting.allocations);
  dc_device_t* cpu = dc_test_cpu(ctx);
  dc_buffer_t* b = dc_test_buffer_new(cpu, DC_DTYPE_F64, 1000, "b");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 10, 10, &v));
  ck_assert_uint_gt(atomic_load(&counting.allocations), before);
  dc_buffer_release(b);
  dc_buffer_release(v);
  dc_context_release(ctx);
  // Everything came back, each block with the size it was allocated with.
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_allocator_params_resolve_to_the_system_allocator) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_context_params_t resolved;
  DC_CK_OK(dc_context_params(ctx, &resolved));
  dc_allocator_t system = dc_allocator_system();
  ck_assert_ptr_eq(resolved.allocator.fn, system.fn);
  ck_assert_ptr_eq(dc_context_allocator(ctx).fn, system.fn);
  dc_context_release(ctx);
  // A NULL context answers with the system allocator as well.
  ck_assert_ptr_eq(dc_context_allocator(NULL).fn, system.fn);
}
END_TEST

START_TEST(test_allocator_user_data_without_function_is_rejected) {
  int dummy = 0;
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator.user_data = &dummy;
  dc_context_t* ctx = (dc_context_t*)&dummy;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "dc_context_create");
  DC_CK_ERROR_HAS("allocator");
  ck_assert_ptr_null(ctx);
}
END_TEST

static Suite* allocator_suite(void) {
  Suite* s = suite_create("allocator");
  TCase* core = tcase_create("core");
  tcase_add_test(core, test_allocator_system_malloc_and_free);
  tcase_add_test(core, test_allocator_system_function_follows_lua_alloc);
  tcase_add_test(core, test_allocator_calloc_zeroes);
  tcase_add_test(core, test_allocator_helpers_call_the_function);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_test(errors, test_allocator_zero_sizes_give_null);
  tcase_add_test(errors, test_allocator_calloc_overflow_gives_null);
  tcase_add_test(errors, test_allocator_null_function_and_pointer);
  tcase_add_test(errors, test_allocator_failure_is_reported_as_null);
  tcase_add_test(errors, test_allocator_user_data_without_function_is_rejected);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_test(lifecycle, test_allocator_context_uses_and_returns_everything);
  tcase_add_test(lifecycle,
                 test_allocator_params_resolve_to_the_system_allocator);
  suite_add_tcase(s, lifecycle);
  return s;
}

DC_CHECK_MAIN(allocator_suite)

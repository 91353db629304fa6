// check_fault.c: fault injection (dc/fault.h): each site fires, nth, rate
// with a seed, permanent, limit, halfway copies, the device and name
// filters, statistics,
// removal, the DC_FAULTS variable and its error messages, argument checks,
// and rules changing while other threads run work.
// SPDX-License-Identifier: MIT
#include <math.h>

#include "kernel_fixture.h"

//===-- Helpers ---------------------------------------------------------===//

static const char kSource[] =
    "__kernel void inc(__global int* x) { x[get_global_id(0)] += 1; }\n"
    "__kernel void dec(__global int* x) { x[get_global_id(0)] -= 1; }\n";

enum { N = 16 };

static uint32_t add_rule(dc_context_t* c, dc_fault_rule_t rule) {
  uint32_t id = 0;
  DC_CK_OK(dc_fault_add(c, &rule, &id));
  ck_assert_uint_ne(id, 0);
  return id;
}

static dc_fault_stats_t stats_of(dc_context_t* c, uint32_t id) {
  dc_fault_stats_t s = {99, 99};
  DC_CK_OK(dc_fault_stats(c, id, &s));
  return s;
}

#define CK_STATS(c, id, want_matched, want_injected)         \
  do {                                                       \
    dc_fault_stats_t s_ = stats_of((c), (id));               \
    ck_assert_uint_eq(s_.matched, (want_matched));           \
    ck_assert_uint_eq(s_.injected, (want_injected));         \
  } while (0)

static dc_status_t run(dc_kernel_t* k, dc_buffer_t* b) {
  dc_arg_t arg = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  return dc_kernel_dispatch(k, &grid, &arg, 1);
}

static int32_t first_of(dc_buffer_t* b) {
  int32_t v = -1;
  DC_CK_OK(dc_buffer_read(b, 0, &v, 1));
  return v;
}

// A buffer of N zeros on |device|.
static dc_buffer_t* zeros_on(dc_device_t* device, const char* label) {
  dc_buffer_t* b = dc_test_buffer_new(device, DC_DTYPE_I32, N, label);
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(b, 0, N, &zero));
  return b;
}

static dc_status_t write_one(dc_buffer_t* b, int32_t v) {
  return dc_buffer_write(b, 0, &v, 1);
}

//===-- Sites -----------------------------------------------------------===//

START_TEST(test_fault_launch_fires_on_the_nth) {
  dc_program_t* p = build("tiny.cl", kSource, NULL);
  dc_kernel_t* inc = kernel_of(p, "inc");
  dc_buffer_t* b = zeros_on(cpu, "x");
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_LAUNCH,
                                                .nth = 2});
  ck_assert_uint_eq(id, 1);
  DC_CK_OK(run(inc, b));
  DC_CK_FAIL(run(inc, b), DC_ERR_UNAVAILABLE,
             "injected fault: launch of kernel 'inc' on cpu (rule 1, "
             "matching call 2)");
  ck_assert(dc_status_is_transient(DC_ERR_UNAVAILABLE));
  DC_CK_OK(run(inc, b));  // transient: the next one runs
  DC_CK_OK(run(inc, b));
  ck_assert_int_eq(first_of(b), 3);  // the failed launch did nothing
  CK_STATS(ctx, id, 4, 1);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

START_TEST(test_fault_copy_fires_on_each_transfer) {
  dc_buffer_t* a = zeros_on(cpu, "a");
  dc_buffer_t* b = zeros_on(cpu, "b");
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY});
  int32_t v = 7;
  DC_CK_FAIL(dc_buffer_write(a, 0, &v, 1), DC_ERR_UNAVAILABLE,
             "injected fault: copy of buffer 'a' on cpu (rule 1, matching "
             "call 1)");
  DC_CK_FAIL(dc_buffer_read(b, 0, &v, 1), DC_ERR_UNAVAILABLE,
             "copy of buffer 'b'");
  ck_assert_int_eq(v, 7);  // nothing read
  DC_CK_FAIL(dc_buffer_fill(a, 0, N, &v), DC_ERR_UNAVAILABLE, "call 3)");
  DC_CK_FAIL(dc_buffer_copy(b, 0, a, 0, N), DC_ERR_UNAVAILABLE,
             "copy of buffer 'b'");
  CK_STATS(ctx, id, 4, 4);
  // A call that is invalid anyway fails as such and is not counted.
  DC_CK_FAIL(dc_buffer_write(a, 0, NULL, 1), DC_ERR_INVALID_ARGUMENT,
             "'src' must not be NULL");
  DC_CK_FAIL(dc_buffer_read(a, N, &v, 1), DC_ERR_OUT_OF_RANGE, "outside");
  CK_STATS(ctx, id, 4, 4);
  DC_CK_OK(dc_fault_remove(ctx, id));
  ck_assert_int_eq(first_of(a), 0);  // nothing was written
  DC_CK_OK(write_one(a, 5));
  DC_CK_OK(dc_buffer_copy(b, 0, a, 0, N));
  ck_assert_int_eq(first_of(b), 5);
  dc_buffer_release(a);
  dc_buffer_release(b);
}
END_TEST

// A halfway rule lets the first half of each transfer move, then fails
// it; a transfer of one element moves nothing.
START_TEST(test_fault_copy_halfway_moves_the_first_half) {
  dc_buffer_t* a = zeros_on(cpu, "a");
  dc_buffer_t* b = zeros_on(cpu, "b");
  int32_t src[N], out[N];
  for (int i = 0; i < N; ++i) src[i] = 200 + i;
  DC_CK_OK(dc_buffer_write(b, 0, src, N));
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                                .halfway = true,
                                                .name = "a"});
  for (int i = 0; i < N; ++i) src[i] = 100 + i;
  DC_CK_FAIL(dc_buffer_write(a, 0, src, N), DC_ERR_UNAVAILABLE,
             "injected fault: copy of buffer 'a' on cpu (rule 1, matching "
             "call 1), halfway: the first half moved");
  for (int i = 0; i < N; ++i) out[i] = -1;
  DC_CK_FAIL(dc_buffer_read(a, 0, out, N), DC_ERR_UNAVAILABLE, "halfway");
  for (int i = 0; i < N; ++i) {
    ck_assert_int_eq(out[i], i < N / 2 ? 100 + i : -1);
  }
  int32_t five = 5;
  DC_CK_FAIL(dc_buffer_fill(a, 2, N - 2, &five), DC_ERR_UNAVAILABLE,
             "call 3), halfway");
  DC_CK_FAIL(dc_buffer_copy(a, 1, b, 0, 4), DC_ERR_UNAVAILABLE, "call 4)");
  DC_CK_FAIL(write_one(a, 9), DC_ERR_UNAVAILABLE, "call 5)");
  CK_STATS(ctx, id, 5, 5);
  DC_CK_OK(dc_fault_remove(ctx, id));
  DC_CK_OK(dc_buffer_read(a, 0, out, N));
  // write: [0, 8) = 100 + i; fill 7 of [2, 16): [2, 9) = 5; copy 2 of
  // b[0, 4) to [1, 3); the one-element write: nothing.
  const int32_t want[N] = {100, 200, 201, 5, 5, 5, 5, 5,
                           5,   0,   0,   0, 0, 0, 0, 0};
  ck_assert_mem_eq(out, want, sizeof(want));
  dc_buffer_release(a);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_fault_alloc_fails_like_out_of_memory) {
  dc_memory_pool_stats_t before = dc_test_pool_stats(cpu);
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_ALLOC,
                                                .nth = 2});
  dc_buffer_t* first = dc_test_buffer_new(cpu, DC_DTYPE_F32, 64, "first");
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_F32, .length = 64,
                           .label = "second"};
  dc_buffer_t* second = SENTINEL;
  DC_CK_FAIL(dc_buffer_create(cpu, &bp, &second), DC_ERR_OUT_OF_MEMORY,
             "injected fault: allocation of buffer 'second' on cpu (rule 1, "
             "matching call 2)");
  ck_assert_ptr_null(second);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 1);
  dc_memory_pool_stats_t after = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(after.bytes_in_use - before.bytes_in_use, 256);
  DC_CK_OK(dc_buffer_create(cpu, &bp, &second));  // transient
  // Views take no memory: not an allocation.
  dc_buffer_t* view = NULL;
  DC_CK_OK(dc_buffer_create_view(first, 0, 8, &view));
  CK_STATS(ctx, id, 3, 1);
  dc_buffer_release(view);
  dc_buffer_release(second);
  dc_buffer_release(first);
}
END_TEST

START_TEST(test_fault_compile_filtered_by_program_name) {
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COMPILE,
                                                .name = "bad.cl"});
  dc_program_t* p = SENTINEL;
  DC_CK_FAIL(try_build(cpu, "bad.cl", kSource, NULL, &p), DC_ERR_UNAVAILABLE,
             "injected fault: compile of program 'bad.cl' on cpu (rule 1, "
             "matching call 1)");
  ck_assert_ptr_null(p);
  dc_program_t* good = build("good.cl", kSource, NULL);
  CK_STATS(ctx, id, 1, 1);
  dc_program_release(good);
  // A program without a name is "program".
  dc_fault_clear(ctx);
  add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COMPILE});
  dc_program_params_t pp = {.source = kSource};
  DC_CK_FAIL(dc_program_create(cpu, &pp, &p), DC_ERR_UNAVAILABLE,
             "compile of program 'program' on cpu");
}
END_TEST

START_TEST(test_fault_launch_filtered_by_kernel_name) {
  dc_program_t* p = build("tiny.cl", kSource, NULL);
  dc_buffer_t* b = zeros_on(cpu, "x");
  DC_CK_OK(dc_fault_parse(ctx, "launch:name=dec"));
  DC_CK_OK(run(kernel_of(p, "inc"), b));
  DC_CK_FAIL(run(kernel_of(p, "dec"), b), DC_ERR_UNAVAILABLE,
             "launch of kernel 'dec'");
  DC_CK_OK(run(kernel_of(p, "inc"), b));
  ck_assert_int_eq(first_of(b), 2);
  CK_STATS(ctx, 1, 1, 1);  // only the matching call counts
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

START_TEST(test_fault_on_a_stream_fails_the_stream) {
  dc_program_t* p = build("tiny.cl", kSource, NULL);
  dc_buffer_t* b = zeros_on(cpu, "x");
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(cpu, NULL, &s));
  DC_CK_OK(dc_fault_parse(ctx, "launch:nth=1"));
  dc_arg_t arg = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  DC_CK_OK(dc_stream_dispatch(s, kernel_of(p, "inc"), &grid, &arg, 1));
  DC_CK_FAIL(dc_stream_sync(s, DC_TIMEOUT_INFINITE), DC_ERR_UNAVAILABLE,
             "injected fault: launch of kernel 'inc'");
  ck_assert_int_eq(dc_stream_reset(s), DC_ERR_UNAVAILABLE);
  DC_CK_OK(dc_stream_dispatch(s, kernel_of(p, "inc"), &grid, &arg, 1));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(first_of(b), 1);
  dc_stream_release(s);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- Firing ----------------------------------------------------------===//

START_TEST(test_fault_permanent_fails_every_later_call) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){
                                  .sites = DC_FAULT_COPY, .nth = 3,
                                  .permanent = true});
  DC_CK_OK(write_one(b, 1));
  DC_CK_OK(write_one(b, 2));
  DC_CK_FAIL(write_one(b, 3), DC_ERR_DEVICE_LOST, "(rule 1, matching call 3)");
  ck_assert(!dc_status_is_transient(DC_ERR_DEVICE_LOST));
  for (int i = 4; i <= 10; ++i) {
    DC_CK_FAIL(write_one(b, i), DC_ERR_DEVICE_LOST, "permanent since call 3");
  }
  CK_STATS(ctx, id, 10, 8);
  DC_CK_OK(dc_fault_remove(ctx, id));
  DC_CK_OK(write_one(b, 11));

  // A limit ends the outage.
  id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY, .nth = 2,
                                       .permanent = true, .limit = 3});
  dc_status_t want[] = {DC_OK, DC_ERR_DEVICE_LOST, DC_ERR_DEVICE_LOST,
                        DC_ERR_DEVICE_LOST, DC_OK, DC_OK};
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); ++i) {
    ck_assert_int_eq(write_one(b, 0), want[i]);
  }
  CK_STATS(ctx, id, 6, 3);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_fault_limit_caps_the_faults) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                                .limit = 3});
  for (int i = 0; i < 10; ++i) {
    ck_assert_int_eq(write_one(b, i), i < 3 ? DC_ERR_UNAVAILABLE : DC_OK);
  }
  CK_STATS(ctx, id, 10, 3);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_fault_status_defaults_and_overrides) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY, .nth = 1,
                                  .status = DC_ERR_ABORTED});
  DC_CK_FAIL(write_one(b, 1), DC_ERR_ABORTED, "injected fault");
  dc_fault_clear(ctx);
  DC_CK_OK(dc_fault_parse(ctx, "copy:nth=1:status=data_loss"));
  DC_CK_FAIL(write_one(b, 1), DC_ERR_DATA_LOSS, "(rule 2, matching call 1)");
  dc_fault_clear(ctx);
  DC_CK_OK(dc_fault_parse(ctx, "copy : nth=1 : status=DC_ERR_INTERNAL"));
  DC_CK_FAIL(write_one(b, 1), DC_ERR_INTERNAL, "(rule 3, matching call 1)");
  dc_fault_clear(ctx);
  // Allocations default to out-of-memory; permanent rules to device lost.
  DC_CK_OK(dc_fault_parse(ctx, "alloc,copy:limit=2"));
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = 4};
  dc_buffer_t* c = NULL;
  DC_CK_FAIL(dc_buffer_create(cpu, &bp, &c), DC_ERR_OUT_OF_MEMORY,
             "allocation of an unnamed buffer on cpu");
  DC_CK_FAIL(write_one(b, 1), DC_ERR_UNAVAILABLE, "copy of buffer 'x'");
  dc_fault_clear(ctx);
  DC_CK_OK(dc_fault_parse(ctx, "alloc:permanent"));
  DC_CK_FAIL(dc_buffer_create(cpu, &bp, &c), DC_ERR_DEVICE_LOST,
             "allocation");
  dc_fault_clear(ctx);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_fault_first_rule_that_fires_wins) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  uint32_t first = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                                   .nth = 2});
  uint32_t second = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                                    .status =
                                                        DC_ERR_ABORTED});
  DC_CK_FAIL(write_one(b, 1), DC_ERR_ABORTED, "(rule 2, matching call 1)");
  DC_CK_FAIL(write_one(b, 1), DC_ERR_UNAVAILABLE,
             "(rule 1, matching call 2)");
  CK_STATS(ctx, first, 2, 1);
  CK_STATS(ctx, second, 1, 1);  // did not see the call rule 1 failed
  dc_buffer_release(b);
}
END_TEST

// Writes |count| times to |b| and marks in |failed| which writes failed;
// returns how many did.
static size_t failures_of(dc_buffer_t* b, bool* failed, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    dc_status_t st = write_one(b, (int32_t)i);
    ck_assert(st == DC_OK || st == DC_ERR_UNAVAILABLE);
    failed[i] = st != DC_OK;
    n += failed[i];
  }
  return n;
}

START_TEST(test_fault_rate_is_reproducible_with_a_seed) {
  enum { CALLS = 2000 };
  static bool run1[CALLS], run2[CALLS], run3[CALLS];
  dc_context_t* other = dc_test_kernel_context(NULL);
  dc_context_t* third = dc_test_kernel_context(NULL);
  dc_buffer_t* b1 = zeros_on(cpu, "x");
  dc_buffer_t* b2 = zeros_on(dc_test_cpu(other), "x");
  dc_buffer_t* b3 = zeros_on(dc_test_cpu(third), "x");
  uint32_t id = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                                .rate = 0.25, .seed = 42});
  DC_CK_OK(dc_fault_parse(other, "copy:rate=0.25:seed=42"));
  DC_CK_OK(dc_fault_parse(third, "copy:rate=0.25:seed=43"));
  size_t n1 = failures_of(b1, run1, CALLS);
  size_t n2 = failures_of(b2, run2, CALLS);
  size_t n3 = failures_of(b3, run3, CALLS);
  ck_assert_uint_eq(n1, n2);
  ck_assert(memcmp(run1, run2, sizeof(run1)) == 0);  // the same calls
  ck_assert(memcmp(run1, run3, sizeof(run1)) != 0);  // another seed
  // 500 expected; the standard deviation is about 19.
  ck_assert_msg(n1 > 400 && n1 < 600, "%zu of %d failed", n1, CALLS);
  ck_assert_msg(n3 > 400 && n3 < 600, "%zu of %d failed", n3, CALLS);
  CK_STATS(ctx, id, CALLS, n1);
  dc_buffer_release(b1);
  dc_buffer_release(b2);
  dc_buffer_release(b3);
  dc_context_release(other);
  dc_context_release(third);
}
END_TEST

START_TEST(test_fault_rate_one_always_fires) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  DC_CK_OK(dc_fault_parse(ctx, "copy:rate=1"));
  for (int i = 0; i < 20; ++i) {
    ck_assert_int_eq(write_one(b, i), DC_ERR_UNAVAILABLE);
  }
  dc_fault_clear(ctx);
  dc_buffer_release(b);
}
END_TEST

//===-- Device filter ---------------------------------------------------===//

START_TEST(test_fault_device_filter) {
  atomic_store(&dc_test_fake.devices_to_add, 1);
  dc_context_t* c = dc_test_kernel_context(NULL);
  atomic_store(&dc_test_fake.devices_to_add, 0);
  ck_assert_uint_eq(dc_context_device_count(c), 2);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(c, "fake:0", &fake));
  dc_buffer_t* on_cpu = zeros_on(dc_test_cpu(c), "host");
  dc_buffer_t* on_fake = zeros_on(fake, "gpu");
  uint32_t id = add_rule(c, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                              .device = "fake:0"});
  DC_CK_OK(write_one(on_cpu, 1));
  DC_CK_FAIL(write_one(on_fake, 1), DC_ERR_UNAVAILABLE,
             "copy of buffer 'gpu' on fake:0");
  // A copy counts on the device of the buffer written.
  DC_CK_OK(dc_buffer_copy(on_cpu, 0, on_fake, 0, N));
  DC_CK_FAIL(dc_buffer_copy(on_fake, 0, on_cpu, 0, N), DC_ERR_UNAVAILABLE,
             "on fake:0");
  CK_STATS(c, id, 2, 2);
  DC_CK_OK(dc_fault_remove(c, id));
  // A backend name matches its devices.
  DC_CK_OK(dc_fault_parse(c, "copy:device=fake"));
  DC_CK_OK(write_one(on_cpu, 1));
  DC_CK_FAIL(write_one(on_fake, 1), DC_ERR_UNAVAILABLE, "on fake:0");
  dc_fault_clear(c);
  // A device name may hold ':'; a key after one ends it.
  DC_CK_OK(dc_fault_parse(c, "copy:device=fake:0:nth=2:status=aborted"));
  DC_CK_OK(write_one(on_fake, 1));
  DC_CK_FAIL(write_one(on_fake, 1), DC_ERR_ABORTED, "on fake:0 (rule 3,");
  DC_CK_FAIL(dc_fault_parse(c, "copy:device=cuda:1:limit=1"),
             DC_ERR_INVALID_ARGUMENT,
             "dc_fault_parse: 'cuda:1' is neither a device nor a backend of "
             "this context (devices: cpu, fake:0), in rule "
             "'copy:device=cuda:1:limit=1'");
  dc_buffer_release(on_cpu);
  dc_buffer_release(on_fake);
  dc_context_release(c);
}
END_TEST

//===-- Ids, statistics, removal ----------------------------------------===//

START_TEST(test_fault_ids_stats_remove_and_clear) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  uint32_t a = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_LAUNCH});
  uint32_t c = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                               .nth = 100});
  ck_assert_uint_eq(a, 1);
  ck_assert_uint_eq(c, 2);
  CK_STATS(ctx, a, 0, 0);
  DC_CK_OK(write_one(b, 1));
  CK_STATS(ctx, c, 1, 0);
  DC_CK_OK(dc_fault_remove(ctx, a));
  dc_fault_stats_t s;
  DC_CK_FAIL(dc_fault_stats(ctx, a, &s), DC_ERR_NOT_FOUND,
             "dc_fault_stats: the context has no fault rule 1");
  DC_CK_FAIL(dc_fault_remove(ctx, a), DC_ERR_NOT_FOUND,
             "dc_fault_remove: the context has no fault rule 1");
  uint32_t d = add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY});
  ck_assert_uint_eq(d, 3);  // ids are not reused
  DC_CK_FAIL(write_one(b, 1), DC_ERR_UNAVAILABLE, "(rule 3,");
  CK_STATS(ctx, c, 2, 0);
  dc_fault_clear(ctx);
  DC_CK_FAIL(dc_fault_stats(ctx, c, &s), DC_ERR_NOT_FOUND, "rule 2");
  DC_CK_FAIL(dc_fault_stats(ctx, d, &s), DC_ERR_NOT_FOUND, "rule 3");
  DC_CK_OK(write_one(b, 1));
  dc_fault_clear(ctx);  // twice is fine
  ck_assert_uint_eq(add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY}),
                    4);
  // Rules are per context.
  dc_context_t* other = dc_test_kernel_context(NULL);
  dc_buffer_t* ob = zeros_on(dc_test_cpu(other), "x");
  DC_CK_OK(write_one(ob, 1));
  DC_CK_FAIL(dc_fault_stats(other, 4, &s), DC_ERR_NOT_FOUND, "rule 4");
  dc_buffer_release(ob);
  dc_context_release(other);
  dc_fault_clear(ctx);
  dc_buffer_release(b);
}
END_TEST

//===-- Arguments -------------------------------------------------------===//

START_TEST(test_fault_invalid_arguments) {
  dc_fault_rule_t ok = {.sites = DC_FAULT_COPY};
  uint32_t id = 77;
  DC_CK_FAIL(dc_fault_add(NULL, &ok, &id), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_add: 'context' must not be NULL");
  ck_assert_uint_eq(id, 0);
  DC_CK_FAIL(dc_fault_add(ctx, NULL, &id), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_add: 'rule' must not be NULL");
  DC_CK_OK(dc_fault_add(ctx, &ok, NULL));  // the id is optional
  dc_fault_clear(ctx);

  char long_name[200];
  memset(long_name, 'k', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  struct {
    dc_fault_rule_t rule;
    const char* message;
  } bad[] = {
      {{.sites = 0}, "dc_fault_add: sites is 0 (a mask of DC_FAULT_LAUNCH"},
      {{.sites = 1u << 7}, "sites 0x80 has bits that are no dc_fault_site_t"},
      {{.sites = DC_FAULT_COPY, .status = (dc_status_t)999},
       "status 999 is not a dc_status_t error code"},
      {{.sites = DC_FAULT_COPY, .rate = -0.5}, "rate -0.5 is outside [0, 1]"},
      {{.sites = DC_FAULT_COPY, .rate = 1.5}, "rate 1.5 is outside [0, 1]"},
      {{.sites = DC_FAULT_COPY, .rate = NAN}, "is outside [0, 1]"},
      {{.sites = DC_FAULT_COPY, .rate = 0.5, .nth = 2},
       "nth (2) and rate (0.5) exclude each other"},
      {{.sites = DC_FAULT_COPY, .seed = 9},
       "seed 9 is given without a rate"},
      {{.sites = DC_FAULT_COPY | DC_FAULT_LAUNCH, .halfway = true},
       "halfway applies to copies only, and the rule also watches other "
       "sites"},
      {{.sites = DC_FAULT_COPY, .device = ""}, "device is empty"},
      {{.sites = DC_FAULT_COPY, .device = "gpu"},
       "'gpu' is neither a device nor a backend of this context (devices: "
       "cpu)"},
      {{.sites = DC_FAULT_COPY, .name = ""}, "name is empty"},
      {{.sites = DC_FAULT_COPY, .name = long_name},
       "is longer than 127 characters"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    id = 77;
    DC_CK_FAIL(dc_fault_add(ctx, &bad[i].rule, &id), DC_ERR_INVALID_ARGUMENT,
               bad[i].message);
    ck_assert_uint_eq(id, 0);
  }
  dc_fault_stats_t s;
  DC_CK_FAIL(dc_fault_remove(NULL, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_remove: 'context' must not be NULL");
  DC_CK_FAIL(dc_fault_remove(ctx, 0), DC_ERR_NOT_FOUND, "no fault rule 0");
  DC_CK_FAIL(dc_fault_stats(NULL, 1, &s), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_stats: 'context' must not be NULL");
  DC_CK_FAIL(dc_fault_stats(ctx, 1, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_stats: 'out_stats' must not be NULL");
  DC_CK_FAIL(dc_fault_stats(ctx, 12345, &s), DC_ERR_NOT_FOUND,
             "no fault rule 12345");
  DC_CK_FAIL(dc_fault_parse(NULL, "copy"), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_parse: 'context' must not be NULL");
  DC_CK_FAIL(dc_fault_parse(ctx, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_fault_parse: 'spec' must not be NULL");
  dc_fault_clear(NULL);  // a no-op
  // Empty specs and empty rules add nothing.
  DC_CK_OK(dc_fault_parse(ctx, ""));
  DC_CK_OK(dc_fault_parse(ctx, " ;; ; "));
  ck_assert_uint_eq(add_rule(ctx, ok), 2);
  dc_fault_clear(ctx);
}
END_TEST

//===-- DC_FAULTS -------------------------------------------------------===//

START_TEST(test_fault_env_adds_rules_at_create) {
  dc_test_log_t* log = dc_test_log_new();
  setenv("DC_FAULTS", " copy:nth=2 ; launch:name=inc:limit=1 ", 1);
  dc_context_params_t params = dc_test_log_params(log, DC_LOG_DEBUG);
  params.kernel_cache_dir = cache_dir;
  dc_context_t* c = dc_test_context_new(&params);
  unsetenv("DC_FAULTS");
  ck_assert_int_ge(dc_test_log_find(log, 0, "fault injection is on: "
                                            "DC_FAULTS=' copy:nth=2 ; "
                                            "launch:name=inc:limit=1 ' (2 "
                                            "rule(s))"),
                   0);
  dc_buffer_t* b = zeros_on(dc_test_cpu(c), "x");  // the fill is copy 1
  DC_CK_FAIL(write_one(b, 1), DC_ERR_UNAVAILABLE, "(rule 1, matching call 2)");
  ck_assert_int_ge(dc_test_log_find(log, 0,
                                    "injected fault: copy of buffer 'x' on "
                                    "cpu (rule 1, matching call 2): "
                                    "UNAVAILABLE"),
                   0);
  CK_STATS(c, 1, 2, 1);
  CK_STATS(c, 2, 0, 0);
  dc_fault_stats_t s;
  DC_CK_FAIL(dc_fault_stats(c, 3, &s), DC_ERR_NOT_FOUND, "rule 3");
  dc_buffer_release(b);
  dc_context_release(c);
  // Released, the context reports what each rule did.
  ck_assert_int_ge(dc_test_log_find(log, 0,
                                    "rule 1 (copy:nth=2): 2 matching "
                                    "call(s), 1 fault(s)"),
                   0);
  ck_assert_int_ge(dc_test_log_find(log, 0,
                                    "rule 2 (launch:limit=1:name=inc): 0 "
                                    "matching call(s), 0 fault(s)"),
                   0);
  dc_test_log_free(log);
  // An empty variable adds nothing.
  setenv("DC_FAULTS", "", 1);
  c = dc_test_kernel_context(NULL);
  unsetenv("DC_FAULTS");
  ck_assert_uint_eq(add_rule(c, (dc_fault_rule_t){.sites = DC_FAULT_COPY}),
                    1);
  dc_context_release(c);
}
END_TEST

// Malformed specs and the message each gives, after "<prefix>: ".
static const struct {
  const char* spec;
  const char* message;
} kMalformed[] = {
    {"lanch:rate=0.1",
     "'lanch' is not a fault site (launch, copy, alloc, compile), in rule "
     "'lanch:rate=0.1'"},
    {":rate=0.1", "the rule names no site (launch, copy, alloc, compile)"},
    {"launch,,copy", "'' is not a fault site"},
    {"launch:rat=0.1",
     "'rat' is not a key (rate, seed, nth, limit, permanent, halfway, "
     "status, device, name), in rule 'launch:rat=0.1'"},
    {"launch:rate", "'rate' needs a value, as in rate=0.1"},
    {"launch:rate=", "'rate' needs a value, as in rate=0.1"},
    {"launch:rate=1.5", "'rate=1.5' is not a probability (0 < rate <= 1)"},
    {"launch:rate=0", "'rate=0' is not a probability"},
    {"launch:rate=nan", "'rate=nan' is not a probability"},
    {"launch:rate=0.5x", "'rate=0.5x' is not a probability"},
    {"launch:rate=0.5:seed=-1", "'seed=-1' is not an unsigned integer"},
    {"launch:nth=0", "'nth=0' is not a positive integer"},
    {"launch:nth=99999999999999999999999",
     "'nth=99999999999999999999999' is not a positive integer"},
    {"launch:limit=x", "'limit=x' is not a positive integer"},
    {"launch:permanent=1", "'permanent=1': permanent takes no value"},
    {"copy:halfway=yes", "'halfway=yes': halfway takes no value"},
    {"launch:halfway", "halfway applies to copies only"},
    {"launch:status=BOGUS",
     "'status=BOGUS' is not a status name (e.g. UNAVAILABLE, "
     "OUT_OF_MEMORY, DEVICE_LOST)"},
    {"launch:status=ok", "'status=ok' is not an error"},
    {"launch:nth=1:nth=2", "'nth' is given twice"},
    {"launch:nth=2:rate=0.5", "nth (2) and rate (0.5) exclude each other"},
    {"launch:seed=7", "seed 7 is given without a rate"},
    {"launch:device=gpu7",
     "'gpu7' is neither a device nor a backend of this context (devices: "
     "cpu)"},
    {"launch:name=", "'name' needs a value, as in name=blur"},
    {"launch::nth=1", "a field is empty, in rule 'launch::nth=1'"},
    {"copy:nth=1; lanch", "'lanch' is not a fault site (launch, copy, "
                          "alloc, compile), in rule 'lanch'"},
};

START_TEST(test_fault_env_malformed_fails_create) {
  for (size_t i = 0; i < sizeof(kMalformed) / sizeof(kMalformed[0]); ++i) {
    setenv("DC_FAULTS", kMalformed[i].spec, 1);
    dc_context_params_t params = dc_test_quiet_params();
    dc_context_t* c = SENTINEL;
    char want[512];
    snprintf(want, sizeof(want), "dc_context_create: DC_FAULTS: %s",
             kMalformed[i].message);
    DC_CK_FAIL(dc_context_create(&params, &c), DC_ERR_INVALID_ARGUMENT,
               want);
    ck_assert_ptr_null(c);
  }
  unsetenv("DC_FAULTS");
}
END_TEST

START_TEST(test_fault_parse_malformed_adds_nothing) {
  dc_buffer_t* b = zeros_on(cpu, "x");
  for (size_t i = 0; i < sizeof(kMalformed) / sizeof(kMalformed[0]); ++i) {
    char want[512];
    snprintf(want, sizeof(want), "dc_fault_parse: %s", kMalformed[i].message);
    DC_CK_FAIL(dc_fault_parse(ctx, kMalformed[i].spec),
               DC_ERR_INVALID_ARGUMENT, want);
  }
  // Not even the good rule before a bad one was added.
  DC_CK_OK(write_one(b, 1));
  ck_assert_uint_eq(add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY,
                                                    .nth = 5}),
                    1);
  // Long names are refused, not cut.
  char spec[300];
  snprintf(spec, sizeof(spec), "launch:name=%0200d", 7);
  DC_CK_FAIL(dc_fault_parse(ctx, spec), DC_ERR_INVALID_ARGUMENT,
             "is longer than 127 characters");
  // Sites, keys and status names in any case; spaces around separators.
  DC_CK_OK(dc_fault_parse(ctx, "LAUNCH , Copy : Rate = 0.5 : SEED=3 ; "
                               "alloc:NTH=2:Permanent:status=Out_Of_Memory;"
                               "copy:HalfWay"));
  dc_fault_clear(ctx);
  dc_buffer_release(b);
}
END_TEST

//===-- Concurrency -----------------------------------------------------===//

enum { WORKERS = 4, ROUNDS = 150 };

typedef struct worker_t {
  pthread_t thread;
  dc_kernel_t* kernel;
  dc_buffer_t* buffer;
  size_t failed;
  size_t unexpected;  // neither OK nor an injected UNAVAILABLE
} worker_t;

static atomic_int workers_left;

static void* worker_main(void* arg) {
  worker_t* w = arg;
  for (int i = 0; i < ROUNDS; ++i) {
    dc_status_t st = (i % 4 == 0) ? run(w->kernel, w->buffer)
                                  : write_one(w->buffer, i);
    if (st == DC_ERR_UNAVAILABLE &&
        strncmp(dc_last_error(), "injected fault: ", 16) == 0) {
      w->failed++;
    } else if (st != DC_OK) {
      w->unexpected++;
    }
  }
  atomic_fetch_sub(&workers_left, 1);
  return NULL;
}

START_TEST(test_fault_rules_change_while_threads_run) {
  dc_program_t* p = build("tiny.cl", kSource, NULL);
  worker_t workers[WORKERS];
  atomic_store(&workers_left, WORKERS);
  for (int i = 0; i < WORKERS; ++i) {
    workers[i] = (worker_t){.kernel = kernel_of(p, "inc"),
                            .buffer = zeros_on(cpu, "x")};
  }
  for (int i = 0; i < WORKERS; ++i) {
    ck_assert_int_eq(
        pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]),
        0);
  }
  // This thread adds, inspects and removes rules while they run.
  uint64_t seed = 1;
  size_t changes = 0;
  while (atomic_load(&workers_left) > 0 || changes < 4) {
    uint32_t a = add_rule(ctx, (dc_fault_rule_t){
                                   .sites = DC_FAULT_COPY | DC_FAULT_LAUNCH,
                                   .rate = 0.3, .seed = seed++});
    DC_CK_OK(dc_fault_parse(ctx, "launch:nth=2"));
    dc_fault_stats_t s = stats_of(ctx, a);
    ck_assert_uint_le(s.injected, s.matched);
    DC_CK_OK(dc_fault_remove(ctx, a));
    add_rule(ctx, (dc_fault_rule_t){.sites = DC_FAULT_COPY, .limit = 1});
    dc_fault_clear(ctx);
    ++changes;
  }
  size_t failed = 0;
  for (int i = 0; i < WORKERS; ++i) {
    ck_assert_int_eq(pthread_join(workers[i].thread, NULL), 0);
    ck_assert_uint_eq(workers[i].unexpected, 0);
    failed += workers[i].failed;
    // With every rule gone, work runs again.
    DC_CK_OK(write_one(workers[i].buffer, 1));
    DC_CK_OK(run(workers[i].kernel, workers[i].buffer));
    dc_buffer_release(workers[i].buffer);
  }
  ck_assert_uint_le(failed, (size_t)WORKERS * ROUNDS);
  dc_program_release(p);
}
END_TEST

//===-- Suite -----------------------------------------------------------===//

static Suite* fault_suite(void) {
  dc_test_fake_register();
  Suite* s = dc_test_kernel_suite("fault", "dc-check-fault");
  TCase* sites = dc_test_kernel_tcase(s, "sites");
  tcase_add_test(sites, test_fault_launch_fires_on_the_nth);
  tcase_add_test(sites, test_fault_copy_fires_on_each_transfer);
  tcase_add_test(sites, test_fault_copy_halfway_moves_the_first_half);
  tcase_add_test(sites, test_fault_alloc_fails_like_out_of_memory);
  tcase_add_test(sites, test_fault_compile_filtered_by_program_name);
  tcase_add_test(sites, test_fault_launch_filtered_by_kernel_name);
  tcase_add_test(sites, test_fault_on_a_stream_fails_the_stream);
  TCase* firing = dc_test_kernel_tcase(s, "firing");
  tcase_add_test(firing, test_fault_permanent_fails_every_later_call);
  tcase_add_test(firing, test_fault_limit_caps_the_faults);
  tcase_add_test(firing, test_fault_status_defaults_and_overrides);
  tcase_add_test(firing, test_fault_first_rule_that_fires_wins);
  tcase_add_test(firing, test_fault_rate_is_reproducible_with_a_seed);
  tcase_add_test(firing, test_fault_rate_one_always_fires);
  tcase_add_test(firing, test_fault_device_filter);
  TCase* api = dc_test_kernel_tcase(s, "api");
  tcase_add_test(api, test_fault_ids_stats_remove_and_clear);
  tcase_add_test(api, test_fault_invalid_arguments);
  tcase_add_test(api, test_fault_env_adds_rules_at_create);
  tcase_add_test(api, test_fault_env_malformed_fails_create);
  tcase_add_test(api, test_fault_parse_malformed_adds_nothing);
  TCase* threads = dc_test_kernel_tcase(s, "concurrency");
  tcase_add_test(threads, test_fault_rules_change_while_threads_run);
  return s;
}

DC_CHECK_MAIN(fault_suite)

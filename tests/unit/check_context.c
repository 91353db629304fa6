// check_context.c: context creation, configuration, lifetime and leaks.
// SPDX-License-Identifier: MIT
#include <sched.h>
#include <unistd.h>

#include "check_util.h"

static void env_fixture(void) { dc_test_clear_env(); }

// Logical cores this process may run on, as the context should count them.
static uint32_t available_cores(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
  return (uint32_t)CPU_COUNT(&set);
}

static dc_context_params_t resolved_params(dc_context_t* ctx) {
  dc_context_params_t p;
  memset(&p, 0xCD, sizeof(p));
  DC_CK_OK(dc_context_params(ctx, &p));
  return p;
}

// Quiet parameters whose backends are left to DC_DEVICES (the tests'
// contexts otherwise enable the CPU backend alone: check_util.h).
static dc_context_params_t env_backends_params(void) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = NULL;
  return p;
}

// Creates a quiet context with the environment as it is and asserts that it
// fails with |status| and a message holding both |a| and |b|.
static void expect_create_fails(dc_status_t status, const char* a,
                                const char* b) {
  dc_context_params_t p = env_backends_params();
  dc_context_t* ctx = (dc_context_t*)&p;  // must be cleared
  DC_CK_FAIL(dc_context_create(&p, &ctx), status, "dc_context_create");
  DC_CK_ERROR_HAS(a);
  DC_CK_ERROR_HAS(b);
  ck_assert_ptr_null(ctx);
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_context_create_with_null_params) {
  dc_context_t* ctx = NULL;
  DC_CK_OK(dc_context_create(NULL, &ctx));
  ck_assert_ptr_nonnull(ctx);
  ck_assert_uint_ge(dc_context_device_count(ctx), 1);
  ck_assert_str_eq(dc_device_name(dc_test_cpu(ctx)), "cpu");
  ck_assert_ptr_eq(dc_device_context(dc_test_cpu(ctx)), ctx);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_defaults_are_resolved) {
  dc_context_params_t defaults = env_backends_params();
  dc_context_t* ctx = dc_test_context_new(&defaults);
  dc_context_params_t p = resolved_params(ctx);
  ck_assert_int_eq(p.log_level, DC_LOG_OFF);  // as asked
  ck_assert_int_eq(p.idle_policy, DC_IDLE_BALANCED);
  ck_assert_uint_eq(p.thread_count, available_cores());
  ck_assert_ptr_eq(p.allocator.fn, dc_allocator_system().fn);
  ck_assert_ptr_nonnull(p.log_fn);
  ck_assert_str_eq(p.backends, "all");
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  ck_assert_ptr_nonnull(pool);
  ck_assert_uint_eq(dc_worker_pool_thread_count(pool), p.thread_count);
  ck_assert_int_eq(dc_worker_pool_idle_policy(pool), DC_IDLE_BALANCED);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_default_pool_limits_derive_from_memory) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* cpu = dc_test_cpu(ctx);
  size_t memory = dc_device_info(cpu)->memory_size;
  ck_assert_uint_gt(memory, 0);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  size_t gib = (size_t)1 << 30;
  ck_assert_uint_eq(s.cache_limit, memory / 4 < gib ? memory / 4 : gib);
  ck_assert_uint_eq(s.budget, memory);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_env_workers) {
  setenv("DC_WORKERS", "3", 1);
  dc_context_t* ctx = dc_test_context_new(NULL);
  ck_assert_uint_eq(resolved_params(ctx).thread_count, 3);
  ck_assert_uint_eq(dc_worker_pool_thread_count(dc_context_worker_pool(ctx)),
                    3);
  ck_assert_uint_eq(dc_device_info(dc_test_cpu(ctx))->worker_threads, 3);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_env_idle) {
  static const struct {
    const char* text;
    dc_idle_policy_t policy;
  } kCases[] = {
      {"power", DC_IDLE_POWER},
      {"LATENCY", DC_IDLE_LATENCY},
      {"Balanced", DC_IDLE_BALANCED},
      {"", DC_IDLE_BALANCED},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    setenv("DC_IDLE", kCases[i].text, 1);
    dc_context_t* ctx = dc_test_context_new(NULL);
    ck_assert_int_eq(resolved_params(ctx).idle_policy, kCases[i].policy);
    ck_assert_int_eq(dc_worker_pool_idle_policy(dc_context_worker_pool(ctx)),
                     kCases[i].policy);
    dc_context_release(ctx);
  }
}
END_TEST

START_TEST(test_context_env_sizes) {
  static const struct {
    const char* text;
    size_t bytes;
  } kCases[] = {
      {"65536", 65536},         {"64K", 64 << 10},   {"64KiB", 64 << 10},
      {"3M", (size_t)3 << 20},  {"3mb", (size_t)3 << 20},
      {"1G", (size_t)1 << 30},  {"2GiB", (size_t)2 << 30},
      {"1T", (size_t)1 << 40},  {"512B", 512},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    setenv("DC_POOL_CACHE_LIMIT", kCases[i].text, 1);
    setenv("DC_MEMORY_BUDGET", kCases[i].text, 1);
    dc_context_t* ctx = dc_test_context_new(NULL);
    dc_memory_pool_stats_t s = dc_test_pool_stats(dc_test_cpu(ctx));
    ck_assert_msg(s.cache_limit == kCases[i].bytes, "cache limit '%s'",
                  kCases[i].text);
    ck_assert_msg(s.budget == kCases[i].bytes, "budget '%s'",
                  kCases[i].text);
    dc_context_params_t p = resolved_params(ctx);
    ck_assert_uint_eq(p.pool_cache_limit, kCases[i].bytes);
    ck_assert_uint_eq(p.device_memory_budget, kCases[i].bytes);
    dc_context_release(ctx);
  }
}
END_TEST

START_TEST(test_context_env_devices) {
  dc_context_params_t p = env_backends_params();
  setenv("DC_DEVICES", "cpu", 1);
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_str_eq(resolved_params(ctx).backends, "cpu");
  ck_assert_uint_eq(dc_context_device_count(ctx), 1);
  dc_context_release(ctx);
  setenv("DC_DEVICES", "", 1);  // empty: every backend
  ctx = dc_test_context_new(&p);
  ck_assert_str_eq(resolved_params(ctx).backends, "all");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_explicit_params_win_over_env) {
  setenv("DC_WORKERS", "7", 1);
  setenv("DC_IDLE", "power", 1);
  setenv("DC_POOL_CACHE_LIMIT", "1M", 1);
  setenv("DC_MEMORY_BUDGET", "64M", 1);
  setenv("DC_DEVICES", "cpu", 1);
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 2;
  p.idle_policy = DC_IDLE_LATENCY;
  p.pool_cache_limit = 4096;
  p.device_memory_budget = (size_t)32 << 20;
  p.backends = "all";
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_context_params_t r = resolved_params(ctx);
  ck_assert_uint_eq(r.thread_count, 2);
  ck_assert_int_eq(r.idle_policy, DC_IDLE_LATENCY);
  ck_assert_str_eq(r.backends, "all");
  dc_memory_pool_stats_t s = dc_test_pool_stats(dc_test_cpu(ctx));
  ck_assert_uint_eq(s.cache_limit, 4096);
  ck_assert_uint_eq(s.budget, (size_t)32 << 20);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_explicit_params_ignore_malformed_env) {
  setenv("DC_WORKERS", "many", 1);
  setenv("DC_IDLE", "sleepy", 1);
  setenv("DC_POOL_CACHE_LIMIT", "huge", 1);
  setenv("DC_MEMORY_BUDGET", "-1", 1);
  setenv("DC_DEVICES", "warp-drive", 1);
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 1;
  p.idle_policy = DC_IDLE_POWER;
  p.pool_cache_limit = 1 << 20;
  p.device_memory_budget = 1 << 30;
  p.backends = "cpu";
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_params_strings_point_into_the_context) {
  char backends[8] = "cpu";
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = backends;
  dc_context_t* ctx = dc_test_context_new(&p);
  strcpy(backends, "xxx");  // the context copied what it keeps
  dc_context_params_t r = resolved_params(ctx);
  ck_assert_ptr_ne(r.backends, backends);
  ck_assert_str_eq(r.backends, "cpu");
  dc_context_release(ctx);
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_context_create_null_out) {
  DC_CK_FAIL(dc_context_create(NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_context_create");
  DC_CK_ERROR_HAS("out_context");
}
END_TEST

START_TEST(test_context_env_workers_malformed) {
  static const char* const kBad[] = {
      "abc", "0", "-1", "3x", " 3", "4294967296", "1e3", "0x10",
  };
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    setenv("DC_WORKERS", kBad[i], 1);
    expect_create_fails(DC_ERR_INVALID_ARGUMENT, "DC_WORKERS", kBad[i]);
  }
}
END_TEST

START_TEST(test_context_env_workers_above_the_limit) {
  // The same bound as the thread_count parameter applies to DC_WORKERS.
  setenv("DC_WORKERS", "5000", 1);
  expect_create_fails(DC_ERR_INVALID_ARGUMENT, "DC_WORKERS", "5000");
}
END_TEST

START_TEST(test_context_env_idle_malformed) {
  static const char* const kBad[] = {"fast", "default", "0", "power "};
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    setenv("DC_IDLE", kBad[i], 1);
    expect_create_fails(DC_ERR_INVALID_ARGUMENT, "DC_IDLE", kBad[i]);
  }
}
END_TEST

START_TEST(test_context_env_sizes_malformed) {
  static const char* const kBad[] = {
      "lots", "-1", "0", "0K", "12Q", "1.5G", "K", "64 K", "64KK",
      "99999999999999999999", "17179869184T", "64iB", "64B64",
  };
  static const char* const kVars[] = {"DC_POOL_CACHE_LIMIT",
                                      "DC_MEMORY_BUDGET"};
  for (size_t v = 0; v < 2; ++v) {
    for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
      setenv(kVars[v], kBad[i], 1);
      expect_create_fails(DC_ERR_INVALID_ARGUMENT, kVars[v], kBad[i]);
    }
    unsetenv(kVars[v]);
  }
}
END_TEST

START_TEST(test_context_env_devices_unknown) {
  setenv("DC_DEVICES", "cpu,nope", 1);
  expect_create_fails(DC_ERR_NOT_FOUND, "unknown backend", "'nope'");
  setenv("DC_DEVICES", "gpu", 1);
  expect_create_fails(DC_ERR_NOT_FOUND, "unknown backend", "'gpu'");
  unsetenv("DC_DEVICES");
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "vulkan";
  dc_context_t* ctx = NULL;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_NOT_FOUND, "'vulkan'");
  ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(test_context_bad_params) {
  dc_context_t* ctx = NULL;
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 4097;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "thread_count");
  p = dc_test_quiet_params();
  p.idle_policy = (dc_idle_policy_t)(DC_IDLE_POWER + 1);
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "idle_policy");
  p = dc_test_quiet_params();
  char long_list[300];
  memset(long_list, 'c', sizeof(long_list) - 1);
  long_list[sizeof(long_list) - 1] = '\0';
  p.backends = long_list;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "dc_context_create");
  DC_CK_ERROR_HAS("longer than");
  ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(test_context_null_arguments) {
  ck_assert_uint_eq(dc_context_device_count(NULL), 0);
  ck_assert_ptr_null(dc_context_worker_pool(NULL));
  ck_assert_uint_eq(dc_context_live_buffer_count(NULL), 0);
  ck_assert_uint_eq(dc_context_report_leaks(NULL), 0);
  dc_context_retain(NULL);
  dc_context_release(NULL);
  dc_context_params_t p;
  DC_CK_FAIL(dc_context_params(NULL, &p), DC_ERR_INVALID_ARGUMENT,
             "dc_context_params");
  dc_context_t* ctx = dc_test_context_new(NULL);
  DC_CK_FAIL(dc_context_params(ctx, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_context_params");
  dc_device_t* d = (dc_device_t*)&p;
  DC_CK_FAIL(dc_context_device(NULL, 0, &d), DC_ERR_INVALID_ARGUMENT,
             "dc_context_device");
  ck_assert_ptr_null(d);
  DC_CK_FAIL(dc_context_device(ctx, 0, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_context_device");
  dc_context_release(ctx);
}
END_TEST

// Fails the |k|-th allocation of creating a context with |backends| (only
// that one, or that one and every later one) and checks the failure is
// clean. Returns true once creation no longer reaches the |k|-th
// allocation.
static bool create_failing_at(const char* backends, size_t k, bool once) {
  dc_test_allocator_t counting = {0};
  counting.fail_at = k;
  counting.fail_once = once;
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = backends;
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 3;
  dc_context_t* ctx = NULL;
  dc_status_t st = dc_context_create(&p, &ctx);
  bool done = st == DC_OK;
  if (done) {
    ck_assert_ptr_nonnull(ctx);
    dc_context_release(ctx);
  } else {
    ck_assert_msg(st == DC_ERR_OUT_OF_MEMORY,
                  "allocation %zu failing gave %s: %s", k, dc_status_name(st),
                  dc_last_error());
    DC_CK_ERROR_HAS("dc_context_create");
    ck_assert_ptr_null(ctx);
  }
  ck_assert_msg(atomic_load(&counting.live_blocks) == 0,
                "allocation %zu failing (once: %d) leaks %zu block(s)", k,
                (int)once, atomic_load(&counting.live_blocks));
  DC_CK_ALLOCATOR_BALANCED(&counting);
  return done;
}

// Fails each allocation of creating a context with |backends| in turn.
// The bound only stops a loop that never ends: each GPU adds a few dozen
// allocations to the CPU's.
static void create_failing_at_every_step(const char* backends) {
  size_t k = 1;
  while (!create_failing_at(backends, k, false)) {
    ck_assert_uint_lt(k, 1000);
    ++k;
  }
  ck_assert_uint_gt(k, 2);  // creation does allocate several objects
  for (size_t once = 1; once < k; ++once) {
    create_failing_at(backends, once, true);
  }
}

START_TEST(test_context_create_out_of_memory_at_every_step) {
  create_failing_at_every_step(dc_test_backends());
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_context_retain_release) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_context_retain(ctx);
  dc_context_retain(ctx);
  dc_context_release(ctx);
  dc_context_release(ctx);
  // One reference left: still fully usable.
  dc_buffer_t* b = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_I32, 4, "r");
  dc_buffer_release(b);
  ck_assert_uint_gt(atomic_load(&counting.live_blocks), 0);
  dc_context_release(ctx);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_context_buffers_keep_it_alive) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_buffer_t* b = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_I32, 4, "k");
  dc_context_release(ctx);  // the host is gone; the buffer is not
  int32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
  DC_CK_OK(dc_buffer_write(b, 0, in, 4));
  DC_CK_OK(dc_buffer_read(b, 0, out, 4));
  ck_assert_mem_eq(in, out, sizeof(in));
  ck_assert_uint_gt(atomic_load(&counting.live_blocks), 0);
  dc_buffer_release(b);  // the last object destroys the context
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_context_leak_report_at_host_release) {
  dc_test_allocator_t counting = {0};
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  p.allocator = dc_test_allocator(&counting);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_buffer_t* b =
      dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_F32, 100, "leaky-buffer");
  ck_assert_uint_eq(dc_test_log_count(log), 0);
  dc_context_release(ctx);

  long head = dc_test_log_find(log, 0, "1 buffer(s) still alive");
  ck_assert_int_ge(head, 0);
  ck_assert_int_eq(log->entries[head].level, DC_LOG_WARN);
  ck_assert_str_eq(log->entries[head].component, "leaks");
  long line = dc_test_log_find(log, 0, "'leaky-buffer'");
  ck_assert_int_gt(line, head);
  DC_CK_STR_HAS(log->entries[line].message, "f32[100]");
  DC_CK_STR_HAS(log->entries[line].message, "cpu");

  dc_buffer_release(b);  // now the context is destroyed
  DC_CK_ALLOCATOR_BALANCED(&counting);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_context_no_leak_report_when_clean) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_buffer_t* b = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_U8, 10, "x");
  dc_buffer_release(b);
  dc_context_release(ctx);
  ck_assert_uint_eq(dc_test_log_count(log), 0);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_context_report_leaks_on_demand) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
  ck_assert_uint_eq(dc_test_log_count(log), 0);

  dc_device_t* cpu = dc_test_cpu(ctx);
  dc_buffer_t* a = dc_test_buffer_new(cpu, DC_DTYPE_I64, 8, "alpha");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(a, 2, 3, &v));
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 2);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 2);
  ck_assert_int_ge(dc_test_log_find(log, 0, "2 buffer(s) still alive"), 0);
  ck_assert_int_ge(dc_test_log_find(log, 0, "buffer 'alpha' i64[8]"), 0);
  ck_assert_int_ge(dc_test_log_find(log, 0, "view 'alpha' i64[3]"), 0);

  dc_buffer_release(v);
  dc_buffer_release(a);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  dc_test_log_clear(log);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
  ck_assert_uint_eq(dc_test_log_count(log), 0);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_context_unnamed_buffer_in_leak_report) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_buffer_t* b = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_U16, 3, NULL);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 1);
  ck_assert_int_ge(dc_test_log_find(log, 0, "'unnamed' u16[3]"), 0);
  dc_buffer_release(b);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_context_several_are_independent) {
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 2;
  dc_context_t* a = dc_test_context_new(&p);
  p.thread_count = 1;
  dc_context_t* b = dc_test_context_new(&p);
  ck_assert_ptr_ne(dc_test_cpu(a), dc_test_cpu(b));
  ck_assert_ptr_ne(dc_context_worker_pool(a), dc_context_worker_pool(b));
  dc_buffer_t* buf = dc_test_buffer_new(dc_test_cpu(a), DC_DTYPE_U8, 4, "a");
  ck_assert_uint_eq(dc_context_live_buffer_count(a), 1);
  ck_assert_uint_eq(dc_context_live_buffer_count(b), 0);
  dc_context_release(b);
  ck_assert_uint_eq(dc_context_live_buffer_count(a), 1);
  dc_buffer_release(buf);
  dc_context_release(a);
}
END_TEST

typedef struct release_arg_t {
  dc_buffer_t* buffer;
} release_arg_t;

static void* release_thread(void* arg) {
  dc_buffer_release(((release_arg_t*)arg)->buffer);
  return NULL;
}

START_TEST(test_context_destroyed_by_last_buffer_on_another_thread) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 2;
  dc_context_t* ctx = dc_test_context_new(&p);
  release_arg_t arg = {dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_U8, 64,
                                          "t")};
  dc_context_release(ctx);
  dc_test_run_threads(1, release_thread, &arg, sizeof(arg));
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

//===-- every_backend ---------------------------------------------------===//
//
// Contexts as a host makes them by default, with every backend the
// machine has: a GPU where there is one (the other suites leave it out).

// Creating a context with its GPUs fails cleanly at each allocation too.
// Another context holds the GPUs meanwhile: the driver keeps a GPU's
// primary context while anyone retains it, so each of the hundreds of
// attempts costs the engine's own set-up, not a driver start.
START_TEST(test_context_out_of_memory_with_every_backend) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "all";
  dc_context_t* holder = dc_test_context_new(&p);
  create_failing_at_every_step("all");
  dc_context_release(holder);
}
END_TEST

// Several contexts with every backend at once are independent: each has
// devices of its own, buffers on its default device (the first GPU where
// there is one), and they can go in any order.
START_TEST(test_context_several_with_every_backend) {
  enum { CONTEXTS = 4 };
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "all";
  p.thread_count = 2;
  dc_context_t* ctx[CONTEXTS];
  dc_buffer_t* buf[CONTEXTS];
  for (int i = 0; i < CONTEXTS; ++i) {
    ctx[i] = dc_test_context_new(&p);
    dc_device_t* device = NULL;
    DC_CK_OK(dc_context_default_device(ctx[i], &device));
    buf[i] = dc_test_buffer_new(device, DC_DTYPE_I32, 256, "own");
    int32_t value = i + 1;
    DC_CK_OK(dc_buffer_fill(buf[i], 0, 256, &value));
  }
  dc_device_t* first = NULL;
  DC_CK_OK(dc_context_default_device(ctx[0], &first));
  dc_device_t* second = NULL;
  DC_CK_OK(dc_context_default_device(ctx[1], &second));
  ck_assert_ptr_ne(first, second);
  ck_assert_str_eq(dc_device_name(first), dc_device_name(second));
  dc_context_release(ctx[1]);  // out of order; its buffer keeps it alive
  for (int i = 0; i < CONTEXTS; ++i) {
    int32_t out[256];
    DC_CK_OK(dc_buffer_read(buf[i], 0, out, 256));
    ck_assert_int_eq(out[0], i + 1);
    ck_assert_int_eq(out[255], i + 1);
    dc_buffer_release(buf[i]);
    if (i != 1) dc_context_release(ctx[i]);
  }
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_context_single_thread) {
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 1;
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(dc_worker_pool_thread_count(dc_context_worker_pool(ctx)),
                    1);
  ck_assert_uint_eq(dc_device_info(dc_test_cpu(ctx))->worker_threads, 1);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_context_many_at_once) {
  dc_context_t* ctx[8];
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 2;
  for (int i = 0; i < 8; ++i) ctx[i] = dc_test_context_new(&p);
  for (int i = 0; i < 8; ++i) dc_context_release(ctx[7 - i]);
}
END_TEST

START_TEST(test_context_many_buffers_left_behind) {
  dc_test_allocator_t counting = {0};
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  p.allocator = dc_test_allocator(&counting);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_buffer_t* b[300];
  for (int i = 0; i < 300; ++i) {
    char label[16];
    snprintf(label, sizeof(label), "leak%d", i);
    b[i] = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_U8, 1, label);
  }
  dc_context_release(ctx);
  ck_assert_int_ge(dc_test_log_find(log, 0, "300 buffer(s)"), 0);
  ck_assert_int_ge(dc_test_log_find(log, 0, "'leak299'"), 0);
  for (int i = 0; i < 300; ++i) dc_buffer_release(b[i]);
  DC_CK_ALLOCATOR_BALANCED(&counting);
  dc_test_log_free(log);
}
END_TEST

static Suite* context_suite(void) {
  Suite* s = suite_create("context");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, env_fixture, env_fixture);
  // The tests of the defaults create contexts with every backend, which
  // on a GPU machine start the driver: more than Check's default 4 s.
  tcase_set_timeout(core, 60);
  tcase_add_test(core, test_context_create_with_null_params);
  tcase_add_test(core, test_context_defaults_are_resolved);
  tcase_add_test(core, test_context_default_pool_limits_derive_from_memory);
  tcase_add_test(core, test_context_env_workers);
  tcase_add_test(core, test_context_env_idle);
  tcase_add_test(core, test_context_env_sizes);
  tcase_add_test(core, test_context_env_devices);
  tcase_add_test(core, test_context_explicit_params_win_over_env);
  tcase_add_test(core, test_context_explicit_params_ignore_malformed_env);
  tcase_add_test(core, test_context_params_strings_point_into_the_context);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, env_fixture, env_fixture);
  tcase_add_test(errors, test_context_create_null_out);
  tcase_add_test(errors, test_context_env_workers_malformed);
  tcase_add_test(errors, test_context_env_workers_above_the_limit);
  tcase_add_test(errors, test_context_env_idle_malformed);
  tcase_add_test(errors, test_context_env_sizes_malformed);
  tcase_add_test(errors, test_context_env_devices_unknown);
  tcase_add_test(errors, test_context_bad_params);
  tcase_add_test(errors, test_context_null_arguments);
  tcase_add_test(errors, test_context_create_out_of_memory_at_every_step);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, env_fixture, env_fixture);
  tcase_add_test(lifecycle, test_context_retain_release);
  tcase_add_test(lifecycle, test_context_buffers_keep_it_alive);
  tcase_add_test(lifecycle, test_context_leak_report_at_host_release);
  tcase_add_test(lifecycle, test_context_no_leak_report_when_clean);
  tcase_add_test(lifecycle, test_context_report_leaks_on_demand);
  tcase_add_test(lifecycle, test_context_unnamed_buffer_in_leak_report);
  tcase_add_test(lifecycle, test_context_several_are_independent);
  tcase_add_test(lifecycle,
                 test_context_destroyed_by_last_buffer_on_another_thread);
  suite_add_tcase(s, lifecycle);

  // On a GPU machine each of these contexts starts the driver, which
  // takes longer than Check's default 4 s allows.
  TCase* every = tcase_create("every_backend");
  tcase_add_checked_fixture(every, env_fixture, env_fixture);
  tcase_set_timeout(every, 300);
  tcase_add_test(every, test_context_out_of_memory_with_every_backend);
  tcase_add_test(every, test_context_several_with_every_backend);
  suite_add_tcase(s, every);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, env_fixture, env_fixture);
  tcase_add_test(limits, test_context_single_thread);
  tcase_add_test(limits, test_context_many_at_once);
  tcase_add_test(limits, test_context_many_buffers_left_behind);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(context_suite)

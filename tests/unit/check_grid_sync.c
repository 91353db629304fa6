// check_grid_sync.c: cooperative dispatch: dc_grid_sync() across the
// groups of a grid (regions and fibers), grid-wide reductions, reflection,
// the residency rule and its message, the engine's group choice, and the
// failures that must not hang (a bounds-check fault while other groups
// wait, a sync not reached by every group, a dispatch from a pool body).
//
// Device-generic: the kernels run on the device under test (check_util.h),
// whose max_cooperative_groups sets the residency limit; on the CPU that
// is the context's THREADS, and the tests check the exact group choices
// too. The "cpu" test case is about the CPU's worker pool.
// SPDX-License-Identifier: MIT
#include "kernel_fixture.h"

#include "dc/stream.h"
#include "dc/worker_pool.h"

// Every test runs its kernels on a context of this many threads, so that
// the CPU's residency limit is known (and above the test machine's cores,
// which also exercises the barrier's sleeping path).
#define THREADS 4

// The tests' context and its device under test.
static dc_context_t* gctx;
static dc_device_t* gdev;

static void grid_setup(void) {
  dc_test_kernel_setup();
  dc_context_params_t p = dc_test_quiet_params();
  p.kernel_cache_dir = cache_dir;
  p.thread_count = THREADS;
  gctx = dc_test_context_new(&p);
  gdev = dc_test_device(gctx);
}

// True when the device under test is a CPU, whose limit is THREADS.
static bool on_cpu(void) {
  return dc_device_info(gdev)->kind == DC_DEVICE_KIND_CPU;
}

// How many work-groups of one cooperative dispatch the device keeps
// resident at once.
static size_t resident_limit(void) {
  return dc_device_info(gdev)->max_cooperative_groups;
}

static void grid_teardown(void) {
  ck_assert_uint_eq(dc_context_live_buffer_count(gctx), 0);
  ck_assert_uint_eq(dc_context_report_leaks(gctx), 0);
  dc_context_release(gctx);
  gctx = NULL;
  gdev = NULL;
  dc_test_kernel_teardown();
}

static dc_buffer_t* ints(size_t n) {
  dc_buffer_t* b = dc_test_buffer_new(gdev, DC_DTYPE_I32, n, "grid");
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(b, 0, n, &zero));
  return b;
}

static dc_dispatch_t grid1(size_t global, size_t local) {
  dc_dispatch_t g = {.dims = 1, .global = {global}, .local = {local}};
  return g;
}

//===-- Exchange across groups --------------------------------------------===//

// Each round, every work-item publishes a value, the grid syncs, and each
// reads the element mirrored from the other end of the grid, which another
// group wrote; a second sync keeps the next round's writes from racing
// with this round's reads. |acc| and |mine| live across every sync.
static const char kExchange[] =
    "__kernel void exchange(__global int* a, __global int* out, int rounds) {\n"
    "  size_t n = get_global_size(0);\n"
    "  size_t i = get_global_id(0);\n"
    "  int acc = 0;\n"
    "  int mine = (int)i * 3;\n"
    "  for (int r = 0; r < rounds; ++r) {\n"
    "    a[i] = mine + r * 1000;\n"
    "    dc_grid_sync();\n"
    "    int other = a[n - 1 - i];\n"
    "    acc += other;\n"
    "    mine += 1;\n"
    "    dc_grid_sync();\n"
    "  }\n"
    "  out[i] = acc;\n"
    "}\n"
    // The same through a helper, which puts the kernel on fibers.
    "void sync_all(void) { dc_grid_sync(); }\n"
    "__kernel void exchange_fibers(__global int* a, __global int* out,\n"
    "                              int rounds) {\n"
    "  size_t n = get_global_size(0);\n"
    "  size_t i = get_global_id(0);\n"
    "  int acc = 0;\n"
    "  int mine = (int)i * 3;\n"
    "  for (int r = 0; r < rounds; ++r) {\n"
    "    a[i] = mine + r * 1000;\n"
    "    sync_all();\n"
    "    acc += a[n - 1 - i];\n"
    "    mine += 1;\n"
    "    sync_all();\n"
    "  }\n"
    "  out[i] = acc;\n"
    "}\n"
    "__kernel void plain_barrier(__global int* a) {\n"
    "  a[get_global_id(0)] = 1;\n"
    "  barrier(CLK_GLOBAL_MEM_FENCE);\n"
    "}\n"
    "__kernel void shape(__global int* o) {\n"
    "  dc_grid_sync();\n"
    "  if (get_global_id(0) == 0 && get_global_id(1) == 0) {\n"
    "    o[0] = (int)get_local_size(0); o[1] = (int)get_local_size(1);\n"
    "    o[2] = (int)(get_num_groups(0) * get_num_groups(1));\n"
    "  }\n"
    "}\n";

static void check_exchange(dc_kernel_t* k, size_t n, size_t local,
                           int rounds) {
  dc_buffer_t* a = ints(n);
  dc_buffer_t* out = ints(n);
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(out),
                      dc_arg_i32(rounds)};
  dc_dispatch_t g = grid1(n, local);
  DC_CK_OK(dc_kernel_dispatch(k, &g, args, 3));
  const int32_t* o = contents(out);
  for (size_t i = 0; i < n; ++i) {
    int64_t want = 0;
    for (int r = 0; r < rounds; ++r) {
      want += (int64_t)(n - 1 - i) * 3 + r + r * 1000;
    }
    ck_assert_msg(o[i] == want, "%s: out[%zu] = %d, expected %lld",
                  dc_kernel_name(k), i, o[i], (long long)want);
  }
  dc_buffer_release(a);
  dc_buffer_release(out);
}

START_TEST(test_grid_sync_exchanges_across_groups) {
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "exchange");
  expect_dut_mode(k, "regions");
  // Four groups of 64, and of 1 (private values per work-item matter
  // less), and one group (the barrier of a single thread).
  for (int rep = 0; rep < 10; ++rep) check_exchange(k, 256, 64, 5);
  check_exchange(k, 4, 1, 7);
  check_exchange(k, 128, 128, 3);
  check_exchange(k, 96, 32, 4);  // three groups: one thread stays idle
  dc_program_release(p);
}
END_TEST

START_TEST(test_grid_sync_in_a_helper_runs_on_fibers) {
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "exchange_fibers");
  expect_dut_mode(k, "fibers");
  for (int rep = 0; rep < 5; ++rep) check_exchange(k, 64, 16, 4);
  dc_program_release(p);
}
END_TEST

//===-- Grid-wide reduction ---------------------------------------------===//

static const char kReduce[] =
    "__kernel void reduce(__global const int* x, __global int* partial,\n"
    "                     __global int* total, __local int* t) {\n"
    "  size_t l = get_local_id(0);\n"
    "  t[l] = x[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (size_t s = get_local_size(0) / 2; s > 0; s /= 2) {\n"
    "    if (l < s) t[l] += t[l + s];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) partial[get_group_id(0)] = t[0];\n"
    "  dc_grid_sync();\n"
    "  if (get_group_id(0) == 0 && l == 0) {\n"
    "    int sum = 0;\n"
    "    for (size_t g = 0; g < get_num_groups(0); ++g) sum += partial[g];\n"
    "    total[0] = sum;\n"
    "  }\n"
    "}\n";

START_TEST(test_grid_sync_reduces_the_whole_grid_in_one_kernel) {
  dc_program_t* p = build_on(gdev, "reduce.cl", kReduce, NULL);
  dc_kernel_t* k = kernel_of(p, "reduce");
  const size_t n = 1024, local = 256;
  dc_buffer_t* x = ints(n);
  dc_buffer_t* partial = ints(n / local);
  dc_buffer_t* total = ints(1);
  int32_t xs[1024];
  uint64_t seed = 7;
  for (int rep = 0; rep < 20; ++rep) {
    int64_t want = 0;
    for (size_t i = 0; i < n; ++i) {
      xs[i] = (int32_t)(dc_test_rand(&seed) % 2001) - 1000;
      want += xs[i];
    }
    DC_CK_OK(dc_buffer_write(x, 0, xs, n));
    dc_arg_t args[4] = {dc_arg_buffer(x), dc_arg_buffer(partial),
                        dc_arg_buffer(total), dc_arg_local(local * 4)};
    dc_dispatch_t g = grid1(n, local);
    DC_CK_OK(dc_kernel_dispatch(k, &g, args, 4));
    ck_assert_int_eq(((int32_t*)contents(total))[0], want);
  }
  dc_buffer_release(x);
  dc_buffer_release(partial);
  dc_buffer_release(total);
  dc_program_release(p);
}
END_TEST

//===-- Reflection and device info --------------------------------------===//

START_TEST(test_grid_sync_reflection_and_device_info) {
  const dc_device_info_t* info = dc_device_info(gdev);
  if (on_cpu()) {  // one group per worker thread
    ck_assert_uint_eq(info->max_cooperative_groups, THREADS);
    ck_assert_uint_eq(info->max_cooperative_groups, info->worker_threads);
  } else {  // these tests need a device that runs cooperative kernels
    ck_assert_uint_gt(info->max_cooperative_groups, 0);
  }
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  struct {
    const char* name;
    bool grid;
  } kWant[] = {{"exchange", true}, {"exchange_fibers", true},
               {"plain_barrier", false}, {"shape", true}};
  for (size_t i = 0; i < sizeof(kWant) / sizeof(kWant[0]); ++i) {
    dc_kernel_info_t ki;
    DC_CK_OK(dc_kernel_info(kernel_of(p, kWant[i].name), &ki));
    ck_assert_msg(ki.uses_grid_sync == kWant[i].grid, "%s: uses_grid_sync",
                  kWant[i].name);
    ck_assert(ki.uses_barrier);
  }
  dc_program_release(p);
}
END_TEST

START_TEST(test_grid_sync_must_be_a_statement) {
  static const struct {
    const char* source;
    const char* message;
  } kCases[] = {
      {"__kernel void k(__global int* a) {\n"
       "  int x = (dc_grid_sync(), 1);\n  a[0] = x;\n}\n",
       "sync.cl:2:12: error: dc_grid_sync must be called as a statement of "
       "its own: 'dc_grid_sync();'"},
      {"__kernel void k(__global int* a) {\n  dc_grid_sync(1);\n}\n",
       "sync.cl:2:16: error: dc_grid_sync takes no arguments: "
       "'dc_grid_sync();'"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    dc_program_t* p = SENTINEL;
    DC_CK_FAIL(try_build(gdev, "sync.cl", kCases[i].source, NULL, &p),
               DC_ERR_COMPILE, kCases[i].message);
    ck_assert_ptr_null(p);
  }
}
END_TEST

//===-- Residency -------------------------------------------------------===//

// The limit is the device's (THREADS on the CPU): groups of 64 past it
// are refused, as is any grid larger than the limit's groups of the
// largest size can hold; the engine's own choice for a grid that fits
// does fit.
START_TEST(test_grid_sync_refuses_grids_that_cannot_be_resident) {
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "exchange");
  const size_t limit = resident_limit();
  const size_t largest = dc_device_info(gdev)->max_work_group_size;
  const size_t n = 64 * (limit + 1);  // 320 on the CPU
  dc_buffer_t* a = ints(n);
  dc_buffer_t* out = ints(n);
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(out), dc_arg_i32(1)};
  dc_dispatch_t g = grid1(n, 64);
  char want[256];
  snprintf(want, sizeof(want),
           "dc_kernel_dispatch: kernel 'exchange' synchronises its grid "
           "(dc_grid_sync) but its %zu work-groups cannot all be resident "
           "on %s at once (at most %zu); use fewer, larger groups",
           limit + 1, dc_device_name(gdev), limit);
  DC_CK_FAIL(dc_kernel_dispatch(k, &g, args, 3), DC_ERR_INVALID_ARGUMENT,
             want);
  // Left to the engine, the same work-items make fewer, larger groups:
  // they fit.
  g = grid1(n, 0);
  DC_CK_OK(dc_kernel_dispatch(k, &g, args, 3));
  // Twice what the limit's groups of the largest size hold cannot fit
  // (8192 on the CPU: 8 groups of 1024, at most 4).
  const size_t too_many = 2 * limit * largest;
  dc_buffer_t* big = ints(too_many);
  args[0] = args[1] = dc_arg_buffer(big);
  g = grid1(too_many, 0);
  snprintf(want, sizeof(want),
           "work-groups cannot all be resident on %s at once (at most %zu)",
           dc_device_name(gdev), limit);
  DC_CK_FAIL(dc_kernel_dispatch(k, &g, args, 3), DC_ERR_INVALID_ARGUMENT,
             want);
  if (on_cpu()) {
    DC_CK_ERROR_HAS("its 8 work-groups cannot all be resident on");
  }
  // Streams check the same, when the command is queued.
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(gdev, NULL, &s));
  g = grid1(n, 64);
  args[0] = dc_arg_buffer(a);
  args[1] = dc_arg_buffer(out);
  snprintf(want, sizeof(want), "its %zu work-groups cannot all be resident",
           limit + 1);
  DC_CK_FAIL(dc_stream_dispatch(s, k, &g, args, 3), DC_ERR_INVALID_ARGUMENT,
             want);
  dc_stream_release(s);
  dc_buffer_release(big);
  dc_buffer_release(a);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

// Runs |shape| over |global| with the engine choosing the group and
// returns what the kernel saw: local sizes and group count.
static void run_shape(dc_kernel_t* k, uint32_t dims, size_t g0, size_t g1,
                      int32_t seen[3]) {
  dc_buffer_t* o = ints(3);
  dc_arg_t arg = dc_arg_buffer(o);
  dc_dispatch_t g = {.dims = dims, .global = {g0, g1}};
  DC_CK_OK(dc_kernel_dispatch(k, &g, &arg, 1));
  DC_CK_OK(dc_buffer_read(o, 0, seen, 3));
  dc_buffer_release(o);
}

// Asserts that the groups |seen| (local sizes and group count) of a 1-D
// grid of |global| work-items fit the device and cover the grid.
static void expect_fits(const int32_t seen[3], size_t global) {
  ck_assert_int_ge(seen[2], 1);
  ck_assert_uint_le((size_t)seen[2], resident_limit());
  ck_assert_uint_le((size_t)seen[0],
                    dc_device_info(gdev)->max_work_group_size);
  ck_assert_uint_eq((size_t)seen[0] * (size_t)seen[2], global);
}

START_TEST(test_grid_sync_engine_chooses_groups_that_fit) {
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "shape");
  int32_t seen[3];
  // As many groups as can be resident, each as large as it may be.
  const size_t full = resident_limit() *
                      dc_device_info(gdev)->max_work_group_size;
  run_shape(k, 1, full, 1, seen);  // on the CPU, 4096: 4 groups of 1024
  expect_fits(seen, full);
  run_shape(k, 1, 1000, 1, seen);
  expect_fits(seen, 1000);
  if (on_cpu()) {  // one group of 1024 per thread; 250 fits 1000
    run_shape(k, 1, 4096, 1, seen);
    ck_assert_int_eq(seen[0], 1024);
    ck_assert_int_eq(seen[2], 4);
    run_shape(k, 1, 1000, 1, seen);
    ck_assert_int_eq(seen[0], 250);
    ck_assert_int_eq(seen[2], 4);
  }
  run_shape(k, 1, 6, 1, seen);  // a small grid (on the CPU: 3 groups of 2)
  expect_fits(seen, 6);
  run_shape(k, 2, 64, 64, seen);  // dimension 1 grows too
  ck_assert_uint_le((size_t)seen[2], resident_limit());
  ck_assert_uint_le((size_t)(seen[0] * seen[1]),
                    dc_device_info(gdev)->max_work_group_size);
  ck_assert_int_eq(64 % seen[0], 0);
  ck_assert_int_eq(64 % seen[1], 0);
  ck_assert_int_eq(seen[0] * seen[1] * seen[2], 64 * 64);
  dc_program_release(p);
}
END_TEST

START_TEST(test_grid_sync_autotuned_sizes_fit) {
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  params.thread_count = THREADS;
  params.autotune = true;
  dc_context_t* tuned = dc_test_context_new(&params);
  dc_device_t* dev = dc_test_device(tuned);
  dc_program_t* p = build_on(dev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "exchange");
  dc_buffer_t* a = dc_test_buffer_new(dev, DC_DTYPE_I32, 512, "a");
  dc_buffer_t* out = dc_test_buffer_new(dev, DC_DTYPE_I32, 512, "out");
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(out), dc_arg_i32(2)};
  dc_dispatch_t g = grid1(512, 0);
  for (int i = 0; i < 8; ++i) DC_CK_OK(dc_kernel_dispatch(k, &g, args, 3));
  size_t local[3];
  DC_CK_OK(dc_kernel_tuned_group_size(k, 1, g.global, local));
  ck_assert_uint_le(512 / local[0],
                    dc_device_info(dev)->max_cooperative_groups);
  dc_buffer_release(a);
  dc_buffer_release(out);
  dc_program_release(p);
  dc_context_release(tuned);
}
END_TEST

// CPU only: a pool of one thread keeps one group resident.
START_TEST(test_grid_sync_single_thread_pool_runs_one_group) {
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  params.thread_count = 1;
  dc_context_t* one = dc_test_context_new(&params);
  dc_device_t* dev = dc_test_cpu(one);
  ck_assert_uint_eq(dc_device_info(dev)->max_cooperative_groups, 1);
  dc_program_t* p = build_on(dev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "exchange");
  dc_buffer_t* a = dc_test_buffer_new(dev, DC_DTYPE_I32, 64, "a");
  dc_buffer_t* out = dc_test_buffer_new(dev, DC_DTYPE_I32, 64, "out");
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(out), dc_arg_i32(3)};
  dc_dispatch_t g = grid1(64, 0);
  DC_CK_OK(dc_kernel_dispatch(k, &g, args, 3));
  const int32_t* o = contents(out);
  ck_assert_int_eq(o[0], 63 * 3 * 3 + 0 + 1 + 2 + 3000);
  g = grid1(64, 32);
  DC_CK_FAIL(dc_kernel_dispatch(k, &g, args, 3), DC_ERR_INVALID_ARGUMENT,
             "its 2 work-groups cannot all be resident on cpu at once (at "
             "most 1)");
  dc_buffer_release(a);
  dc_buffer_release(out);
  dc_program_release(p);
  dc_context_release(one);
}
END_TEST

//===-- Streams and nested dispatches -------------------------------------===//

START_TEST(test_grid_sync_runs_from_a_stream) {
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  dc_kernel_t* k = kernel_of(p, "exchange");
  dc_buffer_t* a = ints(256);
  dc_buffer_t* out = ints(256);
  dc_arg_t args[3] = {dc_arg_buffer(a), dc_arg_buffer(out), dc_arg_i32(2)};
  dc_dispatch_t g = grid1(256, 64);
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(gdev, NULL, &s));
  for (int i = 0; i < 5; ++i) DC_CK_OK(dc_stream_dispatch(s, k, &g, args, 3));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  const int32_t* o = contents(out);
  ck_assert_int_eq(o[0], 255 * 3 * 2 + 1 + 1000);
  dc_stream_release(s);
  dc_buffer_release(a);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

typedef struct nested_t {
  dc_kernel_t* kernel;
  dc_arg_t args[3];
  size_t groups;
} nested_t;

static dc_status_t dispatch_in_body(void* user_data, size_t begin,
                                    size_t end, uint32_t thread) {
  (void)begin;
  (void)end;
  (void)thread;
  nested_t* n = user_data;
  dc_dispatch_t g = grid1(64, 64 / n->groups);
  return dc_kernel_dispatch(n->kernel, &g, n->args, 3);
}

// CPU only: the CPU runs each group on a worker of the pool, so a
// dispatch from a pool body has none to spare.
START_TEST(test_grid_sync_from_a_pool_body_is_refused) {
  dc_program_t* p = build_on(gdev, "exchange.cl", kExchange, NULL);
  dc_buffer_t* a = ints(64);
  dc_buffer_t* out = ints(64);
  nested_t n = {.kernel = kernel_of(p, "exchange"),
                .args = {dc_arg_buffer(a), dc_arg_buffer(out),
                         dc_arg_i32(1)},
                .groups = 2};
  dc_worker_pool_t* pool = dc_context_worker_pool(gctx);
  // The pool's workers are taken: two groups cannot run at once...
  DC_CK_FAIL(dc_worker_pool_parallel_for(pool, 0, 1, 1, dispatch_in_body,
                                         &n),
             DC_ERR_UNSUPPORTED,
             "dc_kernel_dispatch: kernel 'exchange' synchronises its grid "
             "(dc_grid_sync), but its 2 work-groups cannot run at once");
  // ... but one can, on the body's own thread.
  n.groups = 1;
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, 1, 1, dispatch_in_body, &n));
  dc_buffer_release(a);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

//===-- Failures that must not hang ---------------------------------------===//

static const char kFaulty[] =
    "__kernel void fault(__global int* a, __global int* out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (get_group_id(0) == 1 && get_local_id(0) == 0) a[i + 100000] = 1;\n"
    "  a[i] = (int)i;\n"
    "  dc_grid_sync();\n"
    "  out[i] = a[get_global_size(0) - 1 - i];\n"
    "}\n"
    "__kernel void uneven(__global int* a) {\n"
    "  if (get_group_id(0) != 0) dc_grid_sync();\n"
    "  a[get_global_id(0)] = 1;\n"
    "}\n"
    "__kernel void extra(__global int* a) {\n"
    "  dc_grid_sync();\n"
    "  if (get_group_id(0) == 0) { dc_grid_sync(); dc_grid_sync(); }\n"
    "  a[get_global_id(0)] = 2;\n"
    "}\n";

START_TEST(test_grid_sync_bounds_fault_does_not_hang) {
  dc_program_t* p = build_on(gdev, "faulty.cl", kFaulty, "-dc-checked");
  dc_kernel_t* k = kernel_of(p, "fault");
  dc_buffer_t* a = ints(256);
  dc_buffer_t* out = ints(256);
  dc_arg_t args[2] = {dc_arg_buffer(a), dc_arg_buffer(out)};
  dc_dispatch_t g = grid1(256, 64);
  for (int rep = 0; rep < 5; ++rep) {
    DC_CK_FAIL(dc_kernel_dispatch(k, &g, args, 2), DC_ERR_OUT_OF_RANGE,
               "dc_kernel_dispatch: kernel 'fault' (faulty.cl:3): index "
               "100064 of argument 0 'a' is outside its 256 element(s)");
  }
  // The faulting group stopped there (checked mode ends a work-item at its
  // fault), and the others did not wait for it for ever.
  dc_buffer_release(a);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

START_TEST(test_grid_sync_not_reached_by_every_group_fails) {
  dc_program_t* p = build_on(gdev, "faulty.cl", kFaulty, NULL);
  dc_buffer_t* a = ints(256);
  dc_arg_t arg = dc_arg_buffer(a);
  dc_dispatch_t g = grid1(256, 64);
  const char* names[] = {"uneven", "extra"};
  for (size_t i = 0; i < 2; ++i) {
    dc_kernel_t* k = kernel_of(p, names[i]);
    for (int rep = 0; rep < 5; ++rep) {
      DC_CK_FAIL(dc_kernel_dispatch(k, &g, &arg, 1),
                 DC_ERR_FAILED_PRECONDITION,
                 "reached dc_grid_sync() in some work-groups but not in "
                 "others");
      DC_CK_ERROR_HAS(names[i]);
    }
  }
  // The pool is still usable afterwards.
  dc_program_t* q = build_on(gdev, "exchange.cl", kExchange, NULL);
  check_exchange(kernel_of(q, "exchange"), 128, 32, 2);
  dc_program_release(q);
  dc_buffer_release(a);
  dc_program_release(p);
}
END_TEST

//===-- A barrier followed closely by exits -----------------------------===//

// Each round, every work-item writes the round into one half of |a| (the
// halves alternate), the grid syncs, and it checks its neighbour's value
// of that round; then the kernel returns at once. A group that arrives
// and is not the last may be slow to look at the other groups: by then
// the last may have released the barrier and its group, or others, have
// returned. Such exits came after the barrier was passed, so they must
// not break it.
static const char kSyncThenExit[] =
    "__kernel void sync_then_exit(__global int* a, int rounds) {\n"
    "  size_t n = get_global_size(0), i = get_global_id(0);\n"
    "  int wrong = 0;\n"
    "  for (int r = 0; r < rounds; ++r) {\n"
    "    __global int* part = a + (r & 1) * n;\n"
    "    part[i] = r + 1;\n"
    "    dc_grid_sync();\n"
    "    wrong += part[(i + 1) % n] != r + 1;\n"
    "  }\n"
    "  a[2 * n + i] = wrong;\n"
    "}\n";

// On a GPU the window between a block's arrival and its look at the
// exits spans several memory round trips, and the race showed in ordinary
// runs. On the CPU it is a few instructions: a group must be descheduled
// right there, so more threads than cores make that happen now and then
// (about once in 8000 dispatches on a 2-core machine without the fix).
// So on the CPU this is a cheap check that seldom catches a regression;
// on a GPU it is the real one.
#define STRESS_THREADS 16
#define STRESS_DISPATCHES 400

START_TEST(test_grid_sync_exits_after_the_last_barrier_do_not_break_it) {
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache_dir;
  params.thread_count = STRESS_THREADS;
  dc_context_t* many = dc_test_context_new(&params);
  dc_device_t* dev = dc_test_device(many);
  dc_program_t* p = build_on(dev, "exit.cl", kSyncThenExit, NULL);
  dc_kernel_t* k = kernel_of(p, "sync_then_exit");
  // As many groups as can be resident (at most 256), of one work-item
  // each: the shortest time from the release to the exits.
  size_t groups = dc_device_info(dev)->max_cooperative_groups;
  if (groups > 256) groups = 256;
  dc_buffer_t* a = dc_test_buffer_new(dev, DC_DTYPE_I32, 3 * groups, "a");
  int32_t* wrong = malloc(groups * sizeof(*wrong));
  ck_assert_ptr_nonnull(wrong);
  for (int d = 0; d < STRESS_DISPATCHES; ++d) {
    int32_t zero = 0;
    DC_CK_OK(dc_buffer_fill(a, 0, 3 * groups, &zero));
    int rounds = 1 + d % 3;
    dc_arg_t args[2] = {dc_arg_buffer(a), dc_arg_i32(rounds)};
    dc_dispatch_t g = grid1(groups, 1);
    dc_status_t st = dc_kernel_dispatch(k, &g, args, 2);
    ck_assert_msg(st == DC_OK, "dispatch %d of %zu groups, %d round(s): "
                  "%s: %s", d, groups, rounds, dc_status_name(st),
                  dc_last_error());
    DC_CK_OK(dc_buffer_read(a, 2 * groups, wrong, groups));
    for (size_t i = 0; i < groups; ++i) {
      ck_assert_msg(wrong[i] == 0, "dispatch %d: work-item %zu saw %d "
                    "stale value(s)", d, i, wrong[i]);
    }
  }
  free(wrong);
  dc_buffer_release(a);
  dc_program_release(p);
  dc_context_release(many);
}
END_TEST

static Suite* grid_sync_suite(void) {
  Suite* s = dc_test_kernel_suite("grid_sync", "dc-check-grid-sync");
  TCase* tc = tcase_create("core");
  tcase_add_unchecked_fixture(tc, dc_test_kernel_make_root,
                              dc_test_kernel_remove_root);
  tcase_add_checked_fixture(tc, grid_setup, grid_teardown);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tcase_add_test(tc, test_grid_sync_exchanges_across_groups);
  tcase_add_test(tc, test_grid_sync_in_a_helper_runs_on_fibers);
  tcase_add_test(tc, test_grid_sync_reduces_the_whole_grid_in_one_kernel);
  tcase_add_test(tc, test_grid_sync_reflection_and_device_info);
  tcase_add_test(tc, test_grid_sync_must_be_a_statement);
  tcase_add_test(tc, test_grid_sync_refuses_grids_that_cannot_be_resident);
  tcase_add_test(tc, test_grid_sync_engine_chooses_groups_that_fit);
  tcase_add_test(tc, test_grid_sync_autotuned_sizes_fit);
  tcase_add_test(tc, test_grid_sync_runs_from_a_stream);
  tcase_add_test(tc, test_grid_sync_bounds_fault_does_not_hang);
  tcase_add_test(tc, test_grid_sync_not_reached_by_every_group_fails);
  tcase_add_test(tc,
                 test_grid_sync_exits_after_the_last_barrier_do_not_break_it);

  // About the CPU device's worker pool: the CPU only.
  if (dc_test_device_is_the_cpu()) {
    TCase* cpu_only = tcase_create("cpu");
    tcase_add_unchecked_fixture(cpu_only, dc_test_kernel_make_root,
                                dc_test_kernel_remove_root);
    tcase_add_checked_fixture(cpu_only, grid_setup, grid_teardown);
    tcase_set_timeout(cpu_only, 120);
    suite_add_tcase(s, cpu_only);
    tcase_add_test(cpu_only, test_grid_sync_single_thread_pool_runs_one_group);
    tcase_add_test(cpu_only, test_grid_sync_from_a_pool_body_is_refused);
  }
  return s;
}

static bool cooperative(dc_device_t* device) {
  return dc_device_info(device)->max_cooperative_groups > 0;
}

int main(void) {
  dc_test_device_generic = true;
  int absent = dc_test_device_present();
  if (absent == 0) {
    absent = dc_test_device_has(cooperative, "grid_sync",
                                "runs no cooperative dispatches "
                                "(max_cooperative_groups is 0)");
  }
  if (absent != 0) return absent;
  SRunner* runner = srunner_create(grid_sync_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// check_cuda_peer.c: the paths between devices (dc_device_peer, the
// copy_peer and peer_direct hooks, the "peers" of the health report) and
// copies from one GPU to another.
//
// Three parts. The argument checks and the host path (between two CPU
// devices) run everywhere. The hooks run everywhere too, on "twin", a
// backend of this file whose two devices copy between themselves through
// copy_peer, as two GPUs of one backend do. The GPU tests need two CUDA
// devices; with fewer, the runner says so and the test exits with 77,
// which CTest reports as skipped (after the other parts passed).
//
// The CUDA driver does not survive fork(), and Check forks a child per
// test, so this process never touches the driver itself: a child process
// counts the GPUs (as check_cuda_device.c does), and the tests that do not
// need a GPU enable only the backends they are about.
// SPDX-License-Identifier: MIT
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"

// GPUs the probe found (set in main before any test runs).
static int g_gpus;

static void fixture(void) {
  dc_test_clear_env();
  unsetenv("DC_CUDA_PEER");
  dc_test_fake_reset();
}

// A quiet context with |backends| and |cpus| CPU devices.
static dc_context_t* context_with(const char* backends, uint32_t cpus) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = backends;
  p.cpu_devices = cpus;
  return dc_test_context_new(&p);
}

static dc_device_t* find(dc_context_t* ctx, const char* name) {
  dc_device_t* device = NULL;
  DC_CK_OK(dc_context_find_device(ctx, name, &device));
  return device;
}

static dc_peer_info_t peer(dc_device_t* from, dc_device_t* to,
                           bool measure) {
  dc_peer_info_t info;
  memset(&info, 0xAB, sizeof(info));  // so a missed field shows
  DC_CK_OK(dc_device_peer(from, to, measure, &info));
  return info;
}

// The health report of |ctx| (free it).
static char* health_report(dc_context_t* ctx) {
  size_t length = 0;
  DC_CK_OK(dc_health_report(ctx, NULL, 0, &length));
  char* text = malloc(length + 1);
  ck_assert_ptr_nonnull(text);
  DC_CK_OK(dc_health_report(ctx, text, length + 1, &length));
  return text;
}

// The bandwidth the report gives from |from| to |to|, or -1 when it has
// no such pair (or its path is not |path|).
static long long reported_bandwidth(const char* report, const char* from,
                                    const char* to, const char* path) {
  char pair[160];
  snprintf(pair, sizeof(pair),
           "\"from\":\"%s\",\"to\":\"%s\",\"path\":\"%s\"", from, to, path);
  // The report puts one member per line inside a pair: compare without
  // the white space.
  size_t n = strlen(report);
  char* flat = malloc(n + 1);
  ck_assert_ptr_nonnull(flat);
  size_t used = 0;
  for (size_t i = 0; i < n; ++i) {
    if (report[i] != ' ' && report[i] != '\n') flat[used++] = report[i];
  }
  flat[used] = '\0';
  long long bandwidth = -1;
  const char* at = strstr(flat, pair);
  const char* key = at ? strstr(at, "\"bandwidth\":") : NULL;
  if (key != NULL) bandwidth = atoll(key + strlen("\"bandwidth\":"));
  free(flat);
  return bandwidth;
}

//===-- Arguments and the host path (everywhere) ------------------------===//

START_TEST(test_peer_rejects_null) {
  dc_context_t* ctx = context_with("cpu", 2);
  dc_device_t* a = find(ctx, "cpu");
  dc_device_t* b = find(ctx, "cpu:1");
  dc_peer_info_t info;
  DC_CK_FAIL(dc_device_peer(a, b, false, NULL), DC_ERR_INVALID_ARGUMENT,
             "'out_info' must not be NULL");
  memset(&info, 0xAB, sizeof(info));
  DC_CK_FAIL(dc_device_peer(NULL, b, false, &info), DC_ERR_INVALID_ARGUMENT,
             "'from' must not be NULL");
  ck_assert_int_eq(info.path, 0);  // cleared on entry
  ck_assert(!info.direct);
  ck_assert_uint_eq(info.bandwidth, 0);
  DC_CK_FAIL(dc_device_peer(a, NULL, true, &info), DC_ERR_INVALID_ARGUMENT,
             "'to' must not be NULL");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_peer_rejects_the_same_device) {
  dc_context_t* ctx = context_with("cpu", 1);
  dc_device_t* cpu = find(ctx, "cpu");
  dc_peer_info_t info;
  DC_CK_FAIL(dc_device_peer(cpu, cpu, false, &info), DC_ERR_INVALID_ARGUMENT,
             "the same device (cpu)");
  DC_CK_ERROR_HAS("no peer of itself");
  DC_CK_FAIL(dc_device_peer(cpu, cpu, true, &info), DC_ERR_INVALID_ARGUMENT,
             "dc_device_peer");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_peer_rejects_devices_of_two_contexts) {
  dc_context_t* one = context_with("cpu", 1);
  dc_context_t* two = context_with("cpu", 1);
  dc_peer_info_t info;
  DC_CK_FAIL(dc_device_peer(find(one, "cpu"), find(two, "cpu"), false,
                            &info),
             DC_ERR_INVALID_ARGUMENT, "different contexts");
  dc_context_release(one);
  dc_context_release(two);
}
END_TEST

START_TEST(test_peer_path_names) {
  ck_assert_str_eq(dc_peer_path_name(DC_PEER_PATH_HOST), "host");
  ck_assert_str_eq(dc_peer_path_name(DC_PEER_PATH_DRIVER), "driver");
  ck_assert_str_eq(dc_peer_path_name(DC_PEER_PATH_DIRECT), "direct");
  ck_assert_str_eq(dc_peer_path_name((dc_peer_path_t)0), "unknown");
  ck_assert_str_eq(dc_peer_path_name((dc_peer_path_t)99), "unknown");
}
END_TEST

// Two CPU devices copy through host memory: measured on request, kept by
// the context per ordered pair.
START_TEST(test_peer_between_cpus_takes_the_host_path) {
  dc_context_t* ctx = context_with("cpu", 2);
  dc_device_t* a = find(ctx, "cpu");
  dc_device_t* b = find(ctx, "cpu:1");
  dc_peer_info_t info = peer(a, b, false);
  ck_assert_int_eq(info.path, DC_PEER_PATH_HOST);
  ck_assert(!info.direct);
  ck_assert_uint_eq(info.bandwidth, 0);  // not measured yet
  info = peer(a, b, true);
  ck_assert_int_eq(info.path, DC_PEER_PATH_HOST);
  ck_assert_uint_gt(info.bandwidth, 0);
  uint64_t measured = info.bandwidth;
  ck_assert_uint_eq(peer(a, b, false).bandwidth, measured);  // kept
  ck_assert_uint_eq(peer(a, b, true).bandwidth, measured);   // not redone
  ck_assert_uint_eq(peer(b, a, false).bandwidth, 0);  // the other way
  dc_memory_pool_stats_t s = dc_test_pool_stats(a);
  ck_assert_uint_eq(s.bytes_in_use, 0);  // the probe's buffers are gone
  dc_context_release(ctx);
}
END_TEST

// A budget too small for the whole probe: it measures with less.
START_TEST(test_peer_measures_within_the_budget) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "cpu";
  p.cpu_devices = 2;
  p.device_memory_budget = (size_t)6 << 20;
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_peer_info_t info = peer(find(ctx, "cpu:1"), find(ctx, "cpu"), true);
  ck_assert_uint_gt(info.bandwidth, 0);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_peer_health_report_lists_the_pairs) {
  dc_context_t* ctx = context_with("cpu", 2);
  char* report = health_report(ctx);
  DC_CK_STR_HAS(report, "\"peers\":");
  ck_assert_int_eq(reported_bandwidth(report, "cpu", "cpu:1", "host"), 0);
  ck_assert_int_eq(reported_bandwidth(report, "cpu:1", "cpu", "host"), 0);
  ck_assert_int_eq(reported_bandwidth(report, "cpu", "cpu", "host"), -1);
  free(report);
  uint64_t measured = peer(find(ctx, "cpu"), find(ctx, "cpu:1"), true)
                          .bandwidth;
  report = health_report(ctx);
  ck_assert_int_eq(reported_bandwidth(report, "cpu", "cpu:1", "host"),
                   (long long)measured);
  free(report);
  dc_context_release(ctx);

  ctx = context_with("cpu", 1);  // one device: no pairs
  report = health_report(ctx);
  DC_CK_STR_HAS(report, "\"peers\":[]");
  free(report);
  dc_context_release(ctx);
}
END_TEST

//===-- The hooks, on the twin backend (everywhere) ---------------------===//
//
// "twin:0" and "twin:1" keep memory on the host like the fake backend
// (check_util.h) and copy between each other through copy_peer, which
// counts its calls and says each took TWIN_SECONDS. twin:0 reaches
// twin:1 directly; the other way it is "staged".

#define TWIN_SECONDS 0.001

static struct {
  atomic_int copies;        // copy_peer calls
  atomic_int timed;         // of which with out_seconds
  atomic_size_t last_size;  // bytes of the last one
  atomic_int fail;          // return DC_ERR_UNAVAILABLE when set
} g_twin;

static dc_status_t twin_copy_peer(dc_device_t* dst_device, void* dst,
                                  size_t dst_offset, dc_device_t* src_device,
                                  const void* src, size_t src_offset,
                                  size_t size, double* out_seconds) {
  (void)dst_device;
  (void)src_device;
  if (atomic_load(&g_twin.fail)) {
    return dc_set_error(DC_ERR_UNAVAILABLE, "twin: copy failed on purpose");
  }
  memcpy((char*)dst + dst_offset, (const char*)src + src_offset, size);
  atomic_fetch_add(&g_twin.copies, 1);
  atomic_store(&g_twin.last_size, size);
  if (out_seconds != NULL) {
    atomic_fetch_add(&g_twin.timed, 1);
    *out_seconds = TWIN_SECONDS;
  }
  return DC_OK;
}

static bool twin_peer_direct(dc_device_t* from, dc_device_t* to) {
  return strcmp(from->info.name, "twin:0") == 0 &&
         strcmp(to->info.name, "twin:1") == 0;
}

// The fake device's hooks, with copy_peer and peer_direct (set by
// twin_register()).
static dc_device_vtable_t twin_vtable;
static const dc_device_peer_ops_t twin_peer = {
    .copy = twin_copy_peer,
    .direct = twin_peer_direct,
};

static dc_status_t twin_enumerate(dc_context_t* ctx, void* user_data) {
  (void)user_data;
  for (int i = 0; i < 2; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "twin:%d", i);
    dc_device_info_t info = dc_test_fake_info(name);
    info.memory_size = (size_t)1 << 30;
    dc_test_fake_device_t* twin =
        dc_test_fake_device_make(ctx, &twin_vtable, &info);
    if (twin == NULL) return DC_ERR_OUT_OF_MEMORY;
    dc_status_t st = dc_context_add_device(ctx, &twin->base);
    if (st != DC_OK) {
      dc_test_fake_destroy(&twin->base);  // the caller still owns it
      return st;
    }
  }
  return DC_OK;
}

// Registers "twin" for the process (from the suite function, before the
// runner forks).
static void twin_register(void) {
  twin_vtable = dc_test_fake_vtable;
  twin_vtable.peer = &twin_peer;
  dc_backend_t backend = {"twin", twin_enumerate, NULL};
  if (dc_backend_register(&backend) != DC_OK) {
    fprintf(stderr, "cannot register the twin backend: %s\n",
            dc_last_error());
    abort();
  }
}

static dc_context_t* g_ctx;

static void twin_setup(void) {
  fixture();
  atomic_store(&g_twin.copies, 0);
  atomic_store(&g_twin.timed, 0);
  atomic_store(&g_twin.last_size, 0);
  atomic_store(&g_twin.fail, 0);
  g_ctx = context_with("cpu,twin", 1);
}

static void twin_teardown(void) {
  dc_context_release(g_ctx);
  g_ctx = NULL;
}

START_TEST(test_peer_paths_follow_the_hooks) {
  dc_device_t* cpu = find(g_ctx, "cpu");
  dc_device_t* t0 = find(g_ctx, "twin:0");
  dc_device_t* t1 = find(g_ctx, "twin:1");
  dc_peer_info_t info = peer(t0, t1, false);
  ck_assert_int_eq(info.path, DC_PEER_PATH_DIRECT);
  ck_assert(info.direct);
  ck_assert_uint_eq(info.bandwidth, 0);
  info = peer(t1, t0, false);
  ck_assert_int_eq(info.path, DC_PEER_PATH_DRIVER);
  ck_assert(!info.direct);
  ck_assert_int_eq(peer(cpu, t0, false).path, DC_PEER_PATH_HOST);
  ck_assert_int_eq(peer(t1, cpu, false).path, DC_PEER_PATH_HOST);
  char* report = health_report(g_ctx);
  ck_assert_int_eq(reported_bandwidth(report, "twin:0", "twin:1", "direct"),
                   0);
  ck_assert_int_eq(reported_bandwidth(report, "twin:1", "twin:0", "driver"),
                   0);
  ck_assert_int_eq(reported_bandwidth(report, "cpu", "twin:1", "host"), 0);
  DC_CK_STR_HAS(report, "\"direct\":true");
  free(report);
  ck_assert_int_eq(atomic_load(&g_twin.copies), 0);  // nothing measured
}
END_TEST

// dc_buffer_copy between the twins goes through copy_peer, views and
// offsets included; with the CPU it does not.
START_TEST(test_peer_buffer_copy_uses_copy_peer) {
  size_t n = 1000;
  dc_buffer_t* a = dc_test_buffer_new(find(g_ctx, "twin:0"), DC_DTYPE_U32, n,
                                      "a");
  dc_buffer_t* b = dc_test_buffer_new(find(g_ctx, "twin:1"), DC_DTYPE_U32, n,
                                      "b");
  uint32_t want[1000], got[1000];
  for (size_t i = 0; i < n; ++i) want[i] = (uint32_t)(i * 2654435761u);
  DC_CK_OK(dc_buffer_write(a, 0, want, n));
  DC_CK_OK(dc_buffer_fill(b, 0, n, &(uint32_t){7}));
  dc_buffer_t* view = NULL;
  DC_CK_OK(dc_buffer_create_view(a, 100, 500, &view));
  DC_CK_OK(dc_buffer_copy(b, 3, view, 10, 333));
  ck_assert_int_eq(atomic_load(&g_twin.copies), 1);
  ck_assert_uint_eq(atomic_load(&g_twin.last_size), 333 * 4);
  DC_CK_OK(dc_buffer_read(b, 0, got, n));
  for (size_t i = 0; i < n; ++i) {
    uint32_t expected = i >= 3 && i < 336 ? want[i - 3 + 110] : 7;
    ck_assert_msg(got[i] == expected, "element %zu is %u, not %u", i, got[i],
                  expected);
  }
  DC_CK_OK(dc_buffer_copy(a, 0, b, 0, n));  // the other way, too
  ck_assert_int_eq(atomic_load(&g_twin.copies), 2);
  dc_buffer_t* c = dc_test_buffer_new(find(g_ctx, "cpu"), DC_DTYPE_U32, n,
                                      "c");
  DC_CK_OK(dc_buffer_copy(c, 0, a, 0, n));
  DC_CK_OK(dc_buffer_copy(b, 0, c, 0, n));
  ck_assert_int_eq(atomic_load(&g_twin.copies), 2);  // host path
  atomic_store(&g_twin.fail, 1);
  DC_CK_FAIL(dc_buffer_copy(b, 0, a, 0, n), DC_ERR_UNAVAILABLE,
             "on purpose");
  dc_buffer_release(c);
  dc_buffer_release(view);
  dc_buffer_release(a);
  dc_buffer_release(b);
}
END_TEST

// A stream's copy between the twins takes the same way.
START_TEST(test_peer_stream_copy_uses_copy_peer) {
  size_t n = 4099;
  dc_buffer_t* a = dc_test_buffer_new(find(g_ctx, "twin:1"), DC_DTYPE_U8, n,
                                      "a");
  dc_buffer_t* b = dc_test_buffer_new(find(g_ctx, "twin:0"), DC_DTYPE_U8, n,
                                      "b");
  DC_CK_OK(dc_buffer_fill(a, 0, n, &(uint8_t){0x5A}));
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(find(g_ctx, "twin:0"), NULL, &s));
  DC_CK_OK(dc_stream_copy(s, b, 1, a, 0, n - 1));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&g_twin.copies), 1);
  uint8_t last = 0;
  DC_CK_OK(dc_buffer_read(b, n - 1, &last, 1));
  ck_assert_uint_eq(last, 0x5A);
  dc_stream_release(s);
  dc_buffer_release(a);
  dc_buffer_release(b);
}
END_TEST

// The measurement times copy_peer (the device's figure, not the host's
// clock): 3 timed copies of the whole probe after one to warm up.
START_TEST(test_peer_measure_times_copy_peer) {
  dc_device_t* t0 = find(g_ctx, "twin:0");
  dc_device_t* t1 = find(g_ctx, "twin:1");
  dc_peer_info_t info = peer(t0, t1, true);
  ck_assert_int_eq(info.path, DC_PEER_PATH_DIRECT);
  int timed = atomic_load(&g_twin.timed);
  ck_assert_int_ge(timed, 2);
  ck_assert_int_eq(atomic_load(&g_twin.copies), timed);
  double probe = (double)atomic_load(&g_twin.last_size);
  ck_assert_double_ge(probe, 1 << 20);
  double want = probe / TWIN_SECONDS;  // bytes per second
  ck_assert_msg(info.bandwidth > want * 0.99 && info.bandwidth < want * 1.01,
                "bandwidth %llu, expected about %.0f",
                (unsigned long long)info.bandwidth, want);
  peer(t0, t1, true);  // kept: no more copies
  ck_assert_int_eq(atomic_load(&g_twin.copies), timed);
  char* report = health_report(g_ctx);
  ck_assert_int_eq(reported_bandwidth(report, "twin:0", "twin:1", "direct"),
                   (long long)info.bandwidth);
  free(report);
  ck_assert_uint_eq(dc_test_pool_stats(t0).bytes_in_use, 0);
  ck_assert_uint_eq(dc_test_pool_stats(t1).bytes_in_use, 0);
}
END_TEST

// A failing copy fails the measurement, which says which pair it was,
// and leaves the figure unmeasured.
START_TEST(test_peer_measure_failure) {
  dc_device_t* t0 = find(g_ctx, "twin:0");
  dc_device_t* t1 = find(g_ctx, "twin:1");
  atomic_store(&g_twin.fail, 1);
  dc_peer_info_t info;
  DC_CK_FAIL(dc_device_peer(t1, t0, true, &info), DC_ERR_UNAVAILABLE,
             "dc_device_peer: measuring twin:1 -> twin:0: ");
  DC_CK_ERROR_HAS("on purpose");
  atomic_store(&g_twin.fail, 0);
  ck_assert_uint_eq(peer(t1, t0, false).bandwidth, 0);
  ck_assert_uint_eq(dc_test_pool_stats(t0).bytes_in_use, 0);
  ck_assert_uint_eq(dc_test_pool_stats(t1).bytes_in_use, 0);
}
END_TEST

//===-- Two GPUs --------------------------------------------------------===//

static dc_device_t* g_gpu0;
static dc_device_t* g_gpu1;

static void gpu_setup(void) {
  fixture();
  g_ctx = context_with("cpu,cuda", 1);
  g_gpu0 = find(g_ctx, "cuda:0");
  g_gpu1 = find(g_ctx, "cuda:1");
}

static void gpu_teardown(void) {
  dc_context_release(g_ctx);
  g_ctx = NULL;
  g_gpu0 = g_gpu1 = NULL;
  unsetenv("DC_CUDA_PEER");
}

// The same as gpu_setup, with peer access left off: every pair of GPUs
// is staged by the driver, even over NVLink.
static void staged_setup(void) {
  fixture();
  setenv("DC_CUDA_PEER", "off", 1);
  g_ctx = context_with("cpu,cuda", 1);
  g_gpu0 = find(g_ctx, "cuda:0");
  g_gpu1 = find(g_ctx, "cuda:1");
}

static const dc_storage_mode_t kModes[] = {
    DC_STORAGE_PRIVATE, DC_STORAGE_SHARED, DC_STORAGE_MANAGED};
#define MODE_COUNT (sizeof(kModes) / sizeof(kModes[0]))

// A u8 buffer in |mode|, or NULL for managed memory where there is none.
static dc_buffer_t* new_buffer(dc_device_t* device, size_t length,
                               dc_storage_mode_t mode) {
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_U8, .length = length,
                           .storage = mode, .label = "peer test"};
  dc_buffer_t* buffer = NULL;
  dc_status_t st = dc_buffer_create(device, &bp, &buffer);
  if (st == DC_ERR_UNSUPPORTED && mode == DC_STORAGE_MANAGED) return NULL;
  DC_CK_OK(st);
  return buffer;
}

// Copies |size| random bytes from |from| (a view at 5) to |to| (at 3) and
// checks them and the untouched bytes around them.
static void check_copy(dc_device_t* from, dc_storage_mode_t from_mode,
                       dc_device_t* to, dc_storage_mode_t to_mode,
                       size_t size, uint64_t seed) {
  dc_buffer_t* src = new_buffer(from, size + 9, from_mode);
  dc_buffer_t* dst = new_buffer(to, size + 7, to_mode);
  if (src != NULL && dst != NULL) {
    unsigned char* want = dc_test_xmalloc(size + 9);
    unsigned char* got = dc_test_xmalloc(size + 7);
    dc_test_fill_random(want, size + 9, seed);
    DC_CK_OK(dc_buffer_write(src, 0, want, size + 9));
    DC_CK_OK(dc_buffer_fill(dst, 0, size + 7, &(uint8_t){0xEE}));
    dc_buffer_t* view = NULL;
    DC_CK_OK(dc_buffer_create_view(src, 2, size + 4, &view));
    DC_CK_OK(dc_buffer_copy(dst, 3, view, 3, size));
    DC_CK_OK(dc_buffer_read(dst, 0, got, size + 7));
    const char* what = dc_device_name(from);
    for (size_t i = 0; i < size + 7; ++i) {
      unsigned char expected = i >= 3 && i < 3 + size ? want[i + 2] : 0xEE;
      if (got[i] != expected) {
        ck_abort_msg("%s %s -> %s %s, %zu bytes: byte %zu is %#x, not %#x",
                     what, dc_storage_mode_name(from_mode),
                     dc_device_name(to), dc_storage_mode_name(to_mode), size,
                     i, got[i], expected);
      }
    }
    dc_buffer_release(view);
    free(want);
    free(got);
  }
  dc_buffer_release(src);
  dc_buffer_release(dst);
}

static void check_copies_both_ways(void) {
  static const size_t kSizes[] = {1, 3, 4097, (1u << 20) + 13,
                                  ((size_t)64 << 20) + 5};
  for (size_t i = 0; i < sizeof(kSizes) / sizeof(kSizes[0]); ++i) {
    check_copy(g_gpu0, DC_STORAGE_PRIVATE, g_gpu1, DC_STORAGE_PRIVATE,
               kSizes[i], i + 1);
    check_copy(g_gpu1, DC_STORAGE_PRIVATE, g_gpu0, DC_STORAGE_PRIVATE,
               kSizes[i], i + 100);
  }
  for (size_t m = 0; m < MODE_COUNT; ++m) {
    for (size_t k = 0; k < MODE_COUNT; ++k) {
      check_copy(g_gpu0, kModes[m], g_gpu1, kModes[k], 65537, 7 * m + k);
      check_copy(g_gpu1, kModes[m], g_gpu0, kModes[k], 333, 9 * m + k);
    }
  }
}

START_TEST(test_cuda_peer_info_is_sane) {
  dc_peer_info_t there = peer(g_gpu0, g_gpu1, false);
  dc_peer_info_t back = peer(g_gpu1, g_gpu0, false);
  ck_assert(there.path == DC_PEER_PATH_DIRECT ||
            there.path == DC_PEER_PATH_DRIVER);
  ck_assert(there.direct == (there.path == DC_PEER_PATH_DIRECT));
  ck_assert_int_eq(back.path, there.path);  // CUDA's access is both ways
  ck_assert_uint_eq(there.bandwidth, 0);
  dc_device_t* cpu = find(g_ctx, "cpu");
  ck_assert_int_eq(peer(cpu, g_gpu0, false).path, DC_PEER_PATH_HOST);
  ck_assert_int_eq(peer(g_gpu1, cpu, false).path, DC_PEER_PATH_HOST);
  // The topology, for the log of the run.
  for (int i = 0; i < g_gpus; ++i) {
    for (int j = 0; j < g_gpus; ++j) {
      if (i == j) continue;
      char a[16], b[16];
      snprintf(a, sizeof(a), "cuda:%d", i);
      snprintf(b, sizeof(b), "cuda:%d", j);
      printf("cuda peer: %s -> %s: %s\n", a, b,
             dc_peer_path_name(peer(find(g_ctx, a), find(g_ctx, b), false)
                                   .path));
    }
  }
}
END_TEST

// A context that enabled peer access says so in its log.
START_TEST(test_cuda_peer_access_is_logged) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_DEBUG);
  p.backends = "cpu,cuda";
  dc_context_t* ctx = dc_test_context_new(&p);
  bool direct = peer(find(ctx, "cuda:0"), find(ctx, "cuda:1"), false).direct;
  long line = dc_test_log_find(log, 0, "cuda:0: direct access to");
  if (direct) {
    ck_assert_msg(line >= 0, "no 'direct access' line");
    DC_CK_STR_HAS(log->entries[line].message, "cuda:1");
  } else {
    ck_assert_int_lt(line, 0);
    ck_assert_int_ge(dc_test_log_find(log, 0, "staged through host memory"),
                     0);
  }
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_cuda_peer_copies_match) { check_copies_both_ways(); }
END_TEST

START_TEST(test_cuda_peer_measures_bandwidth) {
  dc_peer_info_t info = peer(g_gpu0, g_gpu1, true);
  ck_assert_uint_gt(info.bandwidth, 100000000);  // 0.1 GB/s: a floor
  printf("cuda peer: cuda:0 -> cuda:1 (%s): %.1f GB/s\n",
         dc_peer_path_name(info.path), (double)info.bandwidth * 1e-9);
  ck_assert_uint_eq(peer(g_gpu0, g_gpu1, false).bandwidth, info.bandwidth);
  dc_peer_info_t host = peer(g_gpu1, find(g_ctx, "cpu"), true);
  ck_assert_int_eq(host.path, DC_PEER_PATH_HOST);
  ck_assert_uint_gt(host.bandwidth, 100000000);
  printf("cuda peer: cuda:1 -> cpu (host): %.1f GB/s\n",
         (double)host.bandwidth * 1e-9);
  char* report = health_report(g_ctx);
  ck_assert_int_eq(reported_bandwidth(report, "cuda:0", "cuda:1",
                                      dc_peer_path_name(info.path)),
                   (long long)info.bandwidth);
  ck_assert_int_eq(reported_bandwidth(report, "cuda:1", "cuda:0",
                                      dc_peer_path_name(info.path)),
                   0);
  ck_assert_int_eq(reported_bandwidth(report, "cuda:1", "cpu", "host"),
                   (long long)host.bandwidth);
  free(report);
  ck_assert_uint_eq(dc_test_pool_stats(g_gpu0).bytes_in_use, 0);
  ck_assert_uint_eq(dc_test_pool_stats(g_gpu1).bytes_in_use, 0);
}
END_TEST

typedef struct copy_job_t {
  dc_buffer_t* dst;
  dc_buffer_t* src;
  atomic_int* failures;
} copy_job_t;

static void* copy_rounds(void* arg) {
  copy_job_t* job = arg;
  for (int round = 0; round < 50; ++round) {
    if (dc_buffer_copy(job->dst, 0, job->src, 0,
                       dc_buffer_length(job->src)) != DC_OK) {
      atomic_fetch_add(job->failures, 1);
    }
  }
  return NULL;
}

// Copies in opposite directions at once lock both GPUs in one order, so
// they cannot deadlock (the test's timeout would catch it).
START_TEST(test_cuda_peer_copies_both_ways_at_once) {
  size_t n = (size_t)8 << 20;
  dc_buffer_t* a0 = new_buffer(g_gpu0, n, DC_STORAGE_PRIVATE);
  dc_buffer_t* b0 = new_buffer(g_gpu0, n, DC_STORAGE_PRIVATE);
  dc_buffer_t* a1 = new_buffer(g_gpu1, n, DC_STORAGE_PRIVATE);
  dc_buffer_t* b1 = new_buffer(g_gpu1, n, DC_STORAGE_PRIVATE);
  DC_CK_OK(dc_buffer_fill(a0, 0, n, &(uint8_t){0x11}));
  DC_CK_OK(dc_buffer_fill(a1, 0, n, &(uint8_t){0x22}));
  atomic_int failures = 0;
  copy_job_t jobs[2] = {{b1, a0, &failures}, {b0, a1, &failures}};
  dc_test_run_threads(2, copy_rounds, jobs, sizeof(jobs[0]));
  ck_assert_int_eq(atomic_load(&failures), 0);
  uint8_t x = 0, y = 0;
  DC_CK_OK(dc_buffer_read(b1, n - 1, &x, 1));
  DC_CK_OK(dc_buffer_read(b0, n - 1, &y, 1));
  ck_assert_uint_eq(x, 0x11);
  ck_assert_uint_eq(y, 0x22);
  dc_buffer_release(a0);
  dc_buffer_release(b0);
  dc_buffer_release(a1);
  dc_buffer_release(b1);
}
END_TEST

// A stream on cuda:1 copies from cuda:0 once a fill on a cuda:0 stream,
// which an event orders before it, has finished.
START_TEST(test_cuda_peer_stream_copy) {
  size_t n = (size_t)3 << 20;
  dc_buffer_t* a = new_buffer(g_gpu0, n, DC_STORAGE_PRIVATE);
  dc_buffer_t* b = new_buffer(g_gpu1, n, DC_STORAGE_PRIVATE);
  dc_stream_t *s0 = NULL, *s = NULL;
  dc_event_t* filled = NULL;
  DC_CK_OK(dc_stream_create(g_gpu0, NULL, &s0));
  DC_CK_OK(dc_stream_create(g_gpu1, NULL, &s));
  DC_CK_OK(dc_event_create(g_gpu0, 0, &filled));
  DC_CK_OK(dc_stream_fill(s0, a, 0, n, &(uint8_t){0x77}));
  DC_CK_OK(dc_stream_record(s0, filled));
  DC_CK_OK(dc_stream_wait_event(s, filled));
  DC_CK_OK(dc_stream_copy(s, b, 0, a, 0, n));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  dc_event_release(filled);
  dc_stream_release(s0);
  unsigned char* got = dc_test_xmalloc(n);
  DC_CK_OK(dc_buffer_read(b, 0, got, n));
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != 0x77) ck_abort_msg("byte %zu is %#x", i, got[i]);
  }
  free(got);
  dc_stream_release(s);
  dc_buffer_release(a);
  dc_buffer_release(b);
}
END_TEST

// DC_CUDA_PEER=off: the driver stages every copy; the bytes still match.
START_TEST(test_cuda_peer_staged_by_the_driver) {
  dc_peer_info_t info = peer(g_gpu0, g_gpu1, false);
  ck_assert_int_eq(info.path, DC_PEER_PATH_DRIVER);
  ck_assert(!info.direct);
  check_copies_both_ways();
  info = peer(g_gpu1, g_gpu0, true);
  ck_assert_uint_gt(info.bandwidth, 100000000);
  printf("cuda peer: cuda:1 -> cuda:0 (driver, DC_CUDA_PEER=off): "
         "%.1f GB/s\n", (double)info.bandwidth * 1e-9);
}
END_TEST

//===-- Runner ----------------------------------------------------------===//

static Suite* cuda_peer_suite(void) {
  twin_register();
  Suite* s = suite_create("cuda_peer");
  TCase* errors = tcase_create("errors");
  tcase_set_timeout(errors, 60);  // measurements copy 64 MiB a few times
  tcase_add_checked_fixture(errors, fixture, fixture);
  tcase_add_test(errors, test_peer_rejects_null);
  tcase_add_test(errors, test_peer_rejects_the_same_device);
  tcase_add_test(errors, test_peer_rejects_devices_of_two_contexts);
  tcase_add_test(errors, test_peer_path_names);
  tcase_add_test(errors, test_peer_between_cpus_takes_the_host_path);
  tcase_add_test(errors, test_peer_measures_within_the_budget);
  tcase_add_test(errors, test_peer_health_report_lists_the_pairs);
  suite_add_tcase(s, errors);

  TCase* hooks = tcase_create("hooks");
  tcase_set_timeout(hooks, 60);
  tcase_add_checked_fixture(hooks, twin_setup, twin_teardown);
  tcase_add_test(hooks, test_peer_paths_follow_the_hooks);
  tcase_add_test(hooks, test_peer_buffer_copy_uses_copy_peer);
  tcase_add_test(hooks, test_peer_stream_copy_uses_copy_peer);
  tcase_add_test(hooks, test_peer_measure_times_copy_peer);
  tcase_add_test(hooks, test_peer_measure_failure);
  suite_add_tcase(s, hooks);
  if (g_gpus < 2) return s;

  TCase* gpus = tcase_create("gpus");
  tcase_set_timeout(gpus, 240);
  tcase_add_checked_fixture(gpus, gpu_setup, gpu_teardown);
  tcase_add_test(gpus, test_cuda_peer_info_is_sane);
  tcase_add_test(gpus, test_cuda_peer_access_is_logged);
  tcase_add_test(gpus, test_cuda_peer_copies_match);
  tcase_add_test(gpus, test_cuda_peer_measures_bandwidth);
  tcase_add_test(gpus, test_cuda_peer_copies_both_ways_at_once);
  tcase_add_test(gpus, test_cuda_peer_stream_copy);
  suite_add_tcase(s, gpus);
  TCase* staged = tcase_create("staged");
  tcase_set_timeout(staged, 240);
  tcase_add_checked_fixture(staged, staged_setup, gpu_teardown);
  tcase_add_test(staged, test_cuda_peer_staged_by_the_driver);
  suite_add_tcase(s, staged);
  return s;
}

int main(void) {
  unsetenv("DC_DEVICES");
  unsetenv("DC_CUDA_PEER");
  g_gpus = dc_test_probe_cuda_devices();
  if (g_gpus < 0) {
    fprintf(stderr, "cuda peer tests: the probe for GPUs failed\n");
    return EXIT_FAILURE;
  }
  SRunner* runner = srunner_create(cuda_peer_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  if (failed != 0) return EXIT_FAILURE;
  if (g_gpus < 2) {
    printf("cuda peer tests: %d GPU(s) here, 2 needed: skipped\n", g_gpus);
    return DC_TEST_SKIPPED;
  }
  return EXIT_SUCCESS;
}

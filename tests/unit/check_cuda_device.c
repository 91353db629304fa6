// check_cuda_device.c: the CUDA device: discovery with and without a GPU,
// its capabilities, and its memory in every storage mode (transfers,
// fills, overlapping and cross-device copies, host pointers, the pool,
// out-of-memory and the budget).
//
// Without a GPU (CI) only the discovery tests run, and the runner says
// that the device tests were skipped. The CUDA driver does not survive
// fork(), and Check forks a child per test, so this process never touches
// the driver itself: a child process finds out whether there is a GPU.
// SPDX-License-Identifier: MIT
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"

// GPUs the probe found (set in main before any test runs).
static int g_gpus;

static void fixture(void) {
  dc_test_clear_env();
  dc_test_fake_reset();
}

static size_t cuda_device_count(dc_context_t* ctx) {
  size_t n = 0;
  for (size_t i = 0; i < dc_context_device_count(ctx); ++i) {
    dc_device_t* d = NULL;
    DC_CK_OK(dc_context_device(ctx, i, &d));
    if (strcmp(dc_device_info(d)->backend, "cuda") == 0) ++n;
  }
  return n;
}

//===-- Discovery (with or without a GPU) -------------------------------===//

START_TEST(test_cuda_discovery_matches_the_machine) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  ck_assert_uint_eq(cuda_device_count(ctx), (size_t)g_gpus);
  dc_device_t* found = NULL;
  dc_device_t* fallback = NULL;
  DC_CK_OK(dc_context_default_device(ctx, &fallback));
  if (g_gpus == 0) {
    DC_CK_FAIL(dc_context_find_device(ctx, "cuda:0", &found),
               DC_ERR_NOT_FOUND, "no device named 'cuda:0'");
    DC_CK_ERROR_HAS("(devices: cpu)");
    ck_assert_ptr_null(found);
    DC_CK_FAIL(dc_context_find_device(ctx, "cuda", &found),
               DC_ERR_NOT_FOUND, "'cuda'");
    ck_assert_ptr_eq(fallback, dc_test_cpu(ctx));
  } else {
    DC_CK_OK(dc_context_find_device(ctx, "cuda:0", &found));
    ck_assert_str_eq(dc_device_info(found)->backend, "cuda");
    ck_assert_ptr_eq(fallback, found);  // the first GPU is the default
    for (int i = 0; i < g_gpus; ++i) {
      char name[16];
      snprintf(name, sizeof(name), "cuda:%d", i);
      DC_CK_OK(dc_context_find_device(ctx, name, &found));
    }
  }
  dc_context_release(ctx);
}
END_TEST

// "cuda" is a backend name DC_DEVICES and the parameters accept; the CPU
// is there whatever the list says.
START_TEST(test_cuda_selected_by_the_device_list) {
  setenv("DC_DEVICES", "cuda", 1);
  dc_context_t* ctx = dc_test_context_new(NULL);
  ck_assert_uint_eq(dc_context_device_count(ctx), 1 + (size_t)g_gpus);
  ck_assert_str_eq(dc_device_name(dc_test_cpu(ctx)), "cpu");
  dc_context_release(ctx);

  setenv("DC_DEVICES", "cpu", 1);
  ctx = dc_test_context_new(NULL);
  ck_assert_uint_eq(dc_context_device_count(ctx), 1);
  dc_context_release(ctx);

  setenv("DC_DEVICES", "cpu,cuda", 1);
  ctx = dc_test_context_new(NULL);
  ck_assert_uint_eq(cuda_device_count(ctx), (size_t)g_gpus);
  dc_context_release(ctx);

  setenv("DC_DEVICES", "cpu,cudaa", 1);
  dc_context_t* none = NULL;
  DC_CK_FAIL(dc_context_create(NULL, &none), DC_ERR_NOT_FOUND,
             "unknown backend 'cudaa'");
  unsetenv("DC_DEVICES");

  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "cuda";
  ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(dc_context_device_count(ctx), 1 + (size_t)g_gpus);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_cuda_name_is_reserved) {
  dc_backend_t b = {"cuda", dc_test_fake_enumerate, NULL};
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_ALREADY_EXISTS,
             "'cuda' is a reserved name");
}
END_TEST

// No GPU: one debug line says why, and nothing louder. A GPU: one info
// line per device with what it is.
START_TEST(test_cuda_logs_what_it_found) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_DEBUG);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_context_release(ctx);
  bool said = false;
  for (size_t i = 0; i < log->count; ++i) {
    const dc_test_log_entry_t* e = &log->entries[i];
    if (strcmp(e->component, "cuda") != 0) continue;
    if (g_gpus == 0) {
      ck_assert_int_eq(e->level, DC_LOG_DEBUG);
      ck_assert_msg(strncmp(e->message, "no devices: ", 12) == 0, "'%s'",
                    e->message);
      said = true;
    } else if (strncmp(e->message, "cuda:0: ", 8) == 0 &&
               strstr(e->message, " access to ") == NULL) {
      // (Not the peer-access lines of a machine with several GPUs.)
      ck_assert_int_eq(e->level, DC_LOG_INFO);
      DC_CK_STR_HAS(e->message, "compute capability");
      DC_CK_STR_HAS(e->message, "unified addressing");
      said = true;
    }
  }
  ck_assert_msg(said, "no cuda log line");
  dc_test_log_free(log);
}
END_TEST

//===-- The device (a GPU only) -----------------------------------------===//

static dc_context_t* g_ctx;
static dc_device_t* g_gpu;

static void gpu_setup(void) {
  fixture();
  g_ctx = dc_test_context_new(NULL);
  DC_CK_OK(dc_context_find_device(g_ctx, "cuda:0", &g_gpu));
}

static void gpu_teardown(void) {
  dc_context_release(g_ctx);
  g_ctx = NULL;
  g_gpu = NULL;
  dc_test_clear_env();
}

static const dc_storage_mode_t kModes[] = {
    DC_STORAGE_PRIVATE, DC_STORAGE_SHARED, DC_STORAGE_MANAGED};
#define MODE_COUNT (sizeof(kModes) / sizeof(kModes[0]))

// A buffer in |mode|, or NULL for managed memory on a system without it.
static dc_buffer_t* new_buffer(dc_device_t* device, dc_dtype_t dtype,
                               size_t length, dc_storage_mode_t mode) {
  dc_buffer_params_t bp = {.dtype = dtype, .length = length,
                           .storage = mode, .label = "cuda test"};
  dc_buffer_t* buffer = NULL;
  dc_status_t st = dc_buffer_create(device, &bp, &buffer);
  if (st == DC_ERR_UNSUPPORTED && mode == DC_STORAGE_MANAGED) return NULL;
  DC_CK_OK(st);
  return buffer;
}

START_TEST(test_cuda_capabilities_are_sane) {
  const dc_device_info_t* info = dc_device_info(g_gpu);
  ck_assert_str_eq(info->name, "cuda:0");
  ck_assert_str_eq(info->backend, "cuda");
  ck_assert_int_eq(info->kind, DC_DEVICE_KIND_GPU);
  ck_assert_uint_gt(strlen(info->model), 0);
  ck_assert_uint_gt(info->compute_units, 0);
  ck_assert_uint_eq(info->worker_threads, info->compute_units);
  ck_assert_uint_eq(info->simd_width, 32);
  ck_assert_uint_ge(info->max_work_group_size, 256);
  ck_assert_uint_ge(info->local_memory_size, (size_t)16 << 10);
  ck_assert_uint_gt(info->memory_size, (size_t)1 << 30);
  ck_assert_uint_gt(info->cache_l2_size, 0);
  ck_assert_uint_eq(info->cache_line_size, 128);
  ck_assert(!info->unified_memory);
  ck_assert_uint_gt(info->stream_count, 0);
  ck_assert(info->max_cooperative_groups == 0 ||
            info->max_cooperative_groups == info->compute_units);
  dc_memory_pool_stats_t s = dc_test_pool_stats(g_gpu);
  ck_assert_uint_eq(s.budget, info->memory_size);
}
END_TEST

// Writes then reads |bytes| bytes whole, then a window inside them.
static void round_trip(dc_storage_mode_t mode, size_t bytes, uint64_t seed) {
  dc_buffer_t* b = new_buffer(g_gpu, DC_DTYPE_U8, bytes, mode);
  if (b == NULL) return;
  unsigned char* in = dc_test_xmalloc(bytes);
  unsigned char* out = dc_test_xmalloc(bytes);
  dc_test_fill_random(in, bytes, seed);
  DC_CK_OK(dc_buffer_write(b, 0, in, bytes));
  memset(out, 0, bytes);
  DC_CK_OK(dc_buffer_read(b, 0, out, bytes));
  ck_assert_msg(memcmp(in, out, bytes) == 0, "%s, %zu bytes",
                dc_storage_mode_name(mode), bytes);
  if (bytes > 2) {
    dc_test_fill_random(in + 1, bytes - 2, seed + 1);
    DC_CK_OK(dc_buffer_write(b, 1, in + 1, bytes - 2));
    DC_CK_OK(dc_buffer_read(b, 0, out, bytes));
    ck_assert_msg(memcmp(in, out, bytes) == 0, "window, %s, %zu bytes",
                  dc_storage_mode_name(mode), bytes);
  }
  free(in);
  free(out);
  dc_buffer_release(b);
}

START_TEST(test_cuda_round_trip_in_every_mode) {
  static const size_t kSizes[] = {1,     3,         255,   256,
                                  257,   4097,      65537, (1u << 20) + 13,
                                  65536 * 3 + 1};
  for (size_t m = 0; m < MODE_COUNT; ++m) {
    for (size_t i = 0; i < sizeof(kSizes) / sizeof(kSizes[0]); ++i) {
      round_trip(kModes[m], kSizes[i], 7 * i + m);
    }
  }
}
END_TEST

// 256 MiB: many chunks through both staging halves, each way.
START_TEST(test_cuda_large_transfer_through_staging) {
  size_t bytes = (size_t)256 << 20;
  round_trip(DC_STORAGE_PRIVATE, bytes, 99);
  round_trip(DC_STORAGE_PRIVATE, 100, 5);  // small after large
  round_trip(DC_STORAGE_MANAGED, bytes + 3, 98);
}
END_TEST

// Fills |count| elements at |offset| of a zeroed buffer with |value| and
// checks them and their untouched neighbours.
static void check_fill(dc_storage_mode_t mode, dc_dtype_t dtype,
                       size_t length, size_t offset, size_t count,
                       uint64_t value) {
  size_t esize = dc_dtype_size(dtype);
  dc_buffer_t* b = new_buffer(g_gpu, dtype, length, mode);
  if (b == NULL) return;
  unsigned char* want = calloc(length, esize);
  unsigned char* got = dc_test_xmalloc(length * esize);
  ck_assert_ptr_nonnull(want);
  DC_CK_OK(dc_buffer_write(b, 0, want, length));
  DC_CK_OK(dc_buffer_fill(b, offset, count, &value));
  for (size_t i = offset; i < offset + count; ++i) {
    memcpy(want + i * esize, &value, esize);
  }
  DC_CK_OK(dc_buffer_read(b, 0, got, length));
  ck_assert_msg(memcmp(want, got, length * esize) == 0,
                "%s fill of %zu x %zu bytes at %zu, value %#llx",
                dc_storage_mode_name(mode), count, esize, offset,
                (unsigned long long)value);
  free(want);
  free(got);
  dc_buffer_release(b);
}

START_TEST(test_cuda_fill_patterns) {
  static const struct {
    dc_dtype_t dtype;
    uint64_t value;
  } kPatterns[] = {
      {DC_DTYPE_U8, 0x5A},                      // memset, 1 byte
      {DC_DTYPE_U16, 0xBEEF},                   // 2 bytes
      {DC_DTYPE_U32, 0x01020304},               // 4 bytes
      {DC_DTYPE_U32, 0x07070707},               // repeats every byte
      {DC_DTYPE_F64, 0x3FF8000000000000ull},    // 1.5: no repeat, 8 bytes
      {DC_DTYPE_U64, 0x1234123412341234ull},    // repeats every 2 bytes
      {DC_DTYPE_I64, 0xAABBCCDDAABBCCDDull},    // repeats every 4 bytes
  };
  for (size_t m = 0; m < MODE_COUNT; ++m) {
    for (size_t i = 0; i < sizeof(kPatterns) / sizeof(kPatterns[0]); ++i) {
      check_fill(kModes[m], kPatterns[i].dtype, 1001, 3, 990,
                 kPatterns[i].value);
      check_fill(kModes[m], kPatterns[i].dtype, 7, 0, 7, kPatterns[i].value);
    }
  }
  // Larger than a staging half: the prefix doubles on the device.
  check_fill(DC_STORAGE_PRIVATE, DC_DTYPE_F64, 3000007, 1, 3000005,
             0x400921FB54442D18ull);
}
END_TEST

// Fills through the vtable, which takes any pattern size and offset:
// 16- and 3-byte patterns, and a 4-byte one at an odd address.
static void check_raw_fill(size_t alloc, size_t offset, size_t size,
                           const unsigned char* pattern, size_t psize) {
  void* memory = NULL;
  DC_CK_OK(g_gpu->vtable->memory->allocate(g_gpu, alloc, DC_STORAGE_PRIVATE,
                                   &memory));
  unsigned char* want = calloc(1, alloc);
  unsigned char* got = dc_test_xmalloc(alloc);
  ck_assert_ptr_nonnull(want);
  DC_CK_OK(g_gpu->vtable->memory->write(g_gpu, memory, 0, want, alloc));
  DC_CK_OK(g_gpu->vtable->memory->fill(g_gpu, memory, offset, size, pattern, psize));
  for (size_t at = 0; at < size; at += psize) {
    memcpy(want + offset + at, pattern, psize);
  }
  DC_CK_OK(g_gpu->vtable->memory->read(g_gpu, memory, 0, got, alloc));
  ck_assert_msg(memcmp(want, got, alloc) == 0,
                "%zu-byte pattern, %zu bytes at %zu", psize, size, offset);
  free(want);
  free(got);
  g_gpu->vtable->memory->deallocate(g_gpu, memory, alloc, DC_STORAGE_PRIVATE);
}

START_TEST(test_cuda_fill_any_pattern_size) {
  unsigned char p16[16], p3[3] = {1, 2, 3}, p4[4] = {9, 8, 7, 6};
  for (int i = 0; i < 16; ++i) p16[i] = (unsigned char)(i * 17 + 1);
  check_raw_fill(1 << 20, 32, 16 * 60000, p16, 16);
  // Past the largest staging half: the prefix doubles on the device.
  check_raw_fill((size_t)48 << 20, 16, (size_t)40 << 20, p16, 16);
  check_raw_fill(4096, 1, 3 * 1000, p3, 3);
  check_raw_fill(4096, 1, 4 * 1000, p4, 4);  // misaligned: no memset
  check_raw_fill(4096, 2, 2 * 4 * 100, p4, 4);
}
END_TEST

START_TEST(test_cuda_large_fill) {
  size_t count = (size_t)256 << 20;
  dc_buffer_t* b = new_buffer(g_gpu, DC_DTYPE_U8, count, DC_STORAGE_PRIVATE);
  unsigned char* got = dc_test_xmalloc(count);
  uint8_t value = 0xC3;
  DC_CK_OK(dc_buffer_fill(b, 0, count, &value));
  DC_CK_OK(dc_buffer_read(b, 0, got, count));
  for (size_t i = 0; i < count; ++i) {
    if (got[i] != value) ck_abort_msg("byte %zu is %#x", i, got[i]);
  }
  dc_buffer_release(b);
  // 8-byte pattern over 256 MiB: the doubling path.
  size_t n = count / 8;
  b = new_buffer(g_gpu, DC_DTYPE_F64, n, DC_STORAGE_PRIVATE);
  double pi = 3.14159265358979, *d = (double*)got;
  DC_CK_OK(dc_buffer_fill(b, 0, n, &pi));
  DC_CK_OK(dc_buffer_read(b, 0, d, n));
  for (size_t i = 0; i < n; ++i) {
    if (d[i] != pi) ck_abort_msg("element %zu is %g", i, d[i]);
  }
  dc_buffer_release(b);
  free(got);
}
END_TEST

// dc_buffer_copy within one buffer, checked against memmove.
static void check_overlap(dc_storage_mode_t mode, size_t length, size_t dst,
                          size_t src, size_t count) {
  dc_buffer_t* b = new_buffer(g_gpu, DC_DTYPE_U32, length, mode);
  if (b == NULL) return;
  uint32_t* want = dc_test_xmalloc(length * 4);
  uint32_t* got = dc_test_xmalloc(length * 4);
  for (size_t i = 0; i < length; ++i) want[i] = (uint32_t)(i * 2654435761u);
  DC_CK_OK(dc_buffer_write(b, 0, want, length));
  DC_CK_OK(dc_buffer_copy(b, dst, b, src, count));
  memmove(want + dst, want + src, count * 4);
  DC_CK_OK(dc_buffer_read(b, 0, got, length));
  for (size_t i = 0; i < length; ++i) {
    if (got[i] != want[i]) {
      ck_abort_msg("%s copy of %zu from %zu to %zu: element %zu is %u, "
                   "not %u",
                   dc_storage_mode_name(mode), count, src, dst, i, got[i],
                   want[i]);
    }
  }
  free(want);
  free(got);
  dc_buffer_release(b);
}

START_TEST(test_cuda_copy_overlapping_ranges) {
  for (size_t m = 0; m < MODE_COUNT; ++m) {
    dc_storage_mode_t mode = kModes[m];
    check_overlap(mode, 1000, 500, 0, 500);  // adjacent: no overlap
    check_overlap(mode, 1000, 100, 0, 900);  // shift 100: direct pieces
    check_overlap(mode, 1000, 0, 100, 900);
    check_overlap(mode, 1000, 1, 0, 999);    // shift 1: via scratch
    check_overlap(mode, 1000, 0, 1, 999);
    check_overlap(mode, 1001, 3, 3, 990);    // onto itself
  }
  // 80 MiB shifted by one element: more than one scratch piece.
  size_t n = (size_t)20 << 20;
  check_overlap(DC_STORAGE_PRIVATE, n, 1, 0, n - 1);
  check_overlap(DC_STORAGE_PRIVATE, n, 0, 1, n - 1);
}
END_TEST

// Views of one buffer, and copies between buffers of different modes.
START_TEST(test_cuda_copy_between_views_and_modes) {
  size_t n = 4096;
  uint32_t* want = dc_test_xmalloc(n * 4);
  uint32_t* got = dc_test_xmalloc(n * 4);
  for (size_t i = 0; i < n; ++i) want[i] = (uint32_t)i;
  dc_buffer_t* b = new_buffer(g_gpu, DC_DTYPE_U32, n, DC_STORAGE_PRIVATE);
  DC_CK_OK(dc_buffer_write(b, 0, want, n));
  dc_buffer_t *lo = NULL, *hi = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 3000, &lo));
  DC_CK_OK(dc_buffer_create_view(b, 1000, 3000, &hi));
  DC_CK_OK(dc_buffer_copy(hi, 0, lo, 0, 3000));
  memmove(want + 1000, want, 3000 * 4);
  DC_CK_OK(dc_buffer_read(b, 0, got, n));
  ck_assert_mem_eq(want, got, n * 4);
  for (size_t m = 1; m < MODE_COUNT; ++m) {
    dc_buffer_t* other = new_buffer(g_gpu, DC_DTYPE_U32, n, kModes[m]);
    if (other == NULL) continue;
    DC_CK_OK(dc_buffer_copy(other, 0, b, 0, n));
    memset(got, 0, n * 4);
    DC_CK_OK(dc_buffer_read(other, 0, got, n));
    ck_assert_mem_eq(want, got, n * 4);
    DC_CK_OK(dc_buffer_fill(b, 0, n, &(uint32_t){0}));
    DC_CK_OK(dc_buffer_copy(b, 0, other, 0, n));
    DC_CK_OK(dc_buffer_read(b, 0, got, n));
    ck_assert_mem_eq(want, got, n * 4);
    dc_buffer_release(other);
  }
  dc_buffer_release(lo);
  dc_buffer_release(hi);
  dc_buffer_release(b);
  free(want);
  free(got);
}
END_TEST

// CPU <-> GPU through dc_buffer_copy, larger than the core's staging.
START_TEST(test_cuda_copy_across_devices) {
  size_t n = (size_t)3 << 20;  // 12 MiB of f32
  float* want = dc_test_xmalloc(n * 4);
  float* got = dc_test_xmalloc(n * 4);
  for (size_t i = 0; i < n; ++i) want[i] = (float)i * 0.25f;
  dc_buffer_t* cpu = dc_test_buffer_new(dc_test_cpu(g_ctx), DC_DTYPE_F32, n,
                                        "on the cpu");
  for (size_t m = 0; m < MODE_COUNT; ++m) {
    dc_buffer_t* gpu = new_buffer(g_gpu, DC_DTYPE_F32, n, kModes[m]);
    if (gpu == NULL) continue;
    DC_CK_OK(dc_buffer_write(cpu, 0, want, n));
    DC_CK_OK(dc_buffer_copy(gpu, 0, cpu, 0, n));
    DC_CK_OK(dc_buffer_fill(cpu, 0, n, &(float){-1.0f}));
    DC_CK_OK(dc_buffer_copy(cpu, 7, gpu, 7, n - 7));
    DC_CK_OK(dc_buffer_read(cpu, 7, got, n - 7));
    ck_assert_mem_eq(want + 7, got, (n - 7) * 4);
    dc_buffer_release(gpu);
  }
  dc_buffer_release(cpu);
  free(want);
  free(got);
}
END_TEST

START_TEST(test_cuda_host_pointer_of_shared_memory) {
  size_t n = 1000;
  dc_buffer_t* b = new_buffer(g_gpu, DC_DTYPE_I32, n, DC_STORAGE_SHARED);
  int32_t* host = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, (void**)&host));
  ck_assert_ptr_nonnull(host);
  for (size_t i = 0; i < n; ++i) host[i] = (int32_t)i * 3;
  int32_t got[1000];
  DC_CK_OK(dc_buffer_read(b, 0, got, n));
  ck_assert_mem_eq(host, got, sizeof(got));
  int32_t seven = 7;
  DC_CK_OK(dc_buffer_fill(b, 10, 5, &seven));
  ck_assert_int_eq(host[12], 7);
  dc_buffer_t* view = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 100, 50, &view));
  int32_t* at = NULL;
  DC_CK_OK(dc_buffer_host_pointer(view, (void**)&at));
  ck_assert_ptr_eq(at, host + 100);
  dc_buffer_release(view);
  dc_buffer_release(b);

  b = new_buffer(g_gpu, DC_DTYPE_I32, n, DC_STORAGE_PRIVATE);
  DC_CK_FAIL(dc_buffer_host_pointer(b, (void**)&host),
             DC_ERR_FAILED_PRECONDITION, "not visible to the host");
  DC_CK_ERROR_HAS("cuda:0");
  dc_buffer_release(b);

  b = new_buffer(g_gpu, DC_DTYPE_I32, n, DC_STORAGE_MANAGED);
  if (b != NULL) {
    DC_CK_OK(dc_buffer_host_pointer(b, (void**)&host));
    host[5] = 55;
    DC_CK_OK(dc_buffer_read(b, 5, got, 1));
    ck_assert_int_eq(got[0], 55);
    dc_buffer_release(b);
  }
}
END_TEST

START_TEST(test_cuda_pool_reuses_blocks) {
  uint64_t state = 42;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) {
      size_t length = 1 + dc_test_rand(&state) % (1u << 20);
      dc_storage_mode_t mode = kModes[dc_test_rand(&state) % 2];
      dc_buffer_t* b = new_buffer(g_gpu, DC_DTYPE_U8, length, mode);
      uint8_t v = (uint8_t)i, last = 0;
      DC_CK_OK(dc_buffer_fill(b, 0, length, &v));
      DC_CK_OK(dc_buffer_read(b, length - 1, &last, 1));
      ck_assert_uint_eq(last, v);
      dc_buffer_release(b);
    }
  }
  dc_memory_pool_stats_t s = dc_test_pool_stats(g_gpu);
  ck_assert_uint_gt(s.hits, 0);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.failures, 0);
  DC_CK_OK(dc_memory_pool_trim(g_gpu, 0));
  s = dc_test_pool_stats(g_gpu);
  ck_assert_uint_eq(s.bytes_cached, 0);
}
END_TEST

static double seconds_since(const struct timespec* start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) +
         (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

START_TEST(test_cuda_out_of_memory) {
  size_t too_big = dc_device_info(g_gpu)->memory_size + ((size_t)1 << 30);
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_U8, .length = too_big};
  dc_buffer_t* b = NULL;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  DC_CK_FAIL(dc_buffer_create(g_gpu, &bp, &b), DC_ERR_OUT_OF_MEMORY,
             "cuda:0");
  DC_CK_ERROR_HAS("larger than the whole budget");
  ck_assert_msg(seconds_since(&start) < 1.0, "it waited");
  ck_assert_ptr_null(b);
  // With the budget out of the way, the driver itself refuses, in every
  // mode (managed memory never oversubscribes).
  DC_CK_OK(dc_memory_pool_set_budget(g_gpu, SIZE_MAX / 2));
  for (size_t m = 0; m < MODE_COUNT; ++m) {
    if (kModes[m] == DC_STORAGE_SHARED) continue;  // host memory
    bp.storage = kModes[m];
    dc_status_t st = dc_buffer_create(g_gpu, &bp, &b);
    if (st == DC_ERR_UNSUPPORTED) continue;
    ck_assert_msg(st == DC_ERR_OUT_OF_MEMORY, "%s: %s: %s",
                  dc_storage_mode_name(kModes[m]), dc_status_name(st),
                  dc_last_error());
    DC_CK_ERROR_HAS("cuda:0");
  }
  DC_CK_OK(dc_memory_pool_set_budget(g_gpu, 0));
  round_trip(DC_STORAGE_PRIVATE, 4096, 3);  // still fine
}
END_TEST

START_TEST(test_cuda_memory_budget_applies) {
  setenv("DC_MEMORY_BUDGET", "64M", 1);
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* gpu = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "cuda:0", &gpu));
  ck_assert_uint_eq(dc_test_pool_stats(gpu).budget, (size_t)64 << 20);
  dc_buffer_t* a = dc_test_buffer_new(gpu, DC_DTYPE_U8, 40 << 20, "a");
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_U8, .length = 40 << 20};
  dc_buffer_t* b = NULL;
  DC_CK_FAIL(dc_buffer_create(gpu, &bp, &b), DC_ERR_OUT_OF_MEMORY,
             "budget");
  dc_buffer_release(a);
  DC_CK_OK(dc_buffer_create(gpu, &bp, &b));
  dc_buffer_release(b);
  dc_context_release(ctx);
  unsetenv("DC_MEMORY_BUDGET");

  dc_context_params_t p = dc_test_quiet_params();
  p.device_memory_budget = (size_t)32 << 20;
  ctx = dc_test_context_new(&p);
  DC_CK_OK(dc_context_find_device(ctx, "cuda:0", &gpu));
  ck_assert_uint_eq(dc_test_pool_stats(gpu).budget, (size_t)32 << 20);
  dc_context_release(ctx);
}
END_TEST

typedef struct transfer_job_t {
  dc_buffer_t* buffer;
  uint64_t seed;
  atomic_int* mismatches;
} transfer_job_t;

static void* transfer_rounds(void* arg) {
  transfer_job_t* job = arg;
  size_t bytes = dc_buffer_size_bytes(job->buffer);
  unsigned char* in = malloc(bytes);
  unsigned char* out = malloc(bytes);
  for (int round = 0; round < 20 && in && out; ++round) {
    dc_test_fill_random(in, bytes, job->seed + (uint64_t)round);
    if (dc_buffer_write(job->buffer, 0, in, bytes) != DC_OK ||
        dc_buffer_read(job->buffer, 0, out, bytes) != DC_OK ||
        memcmp(in, out, bytes) != 0) {
      atomic_fetch_add(job->mismatches, 1);
    }
  }
  free(in);
  free(out);
  return NULL;
}

// Threads share the device's stream and staging buffer: the lock keeps
// their transfers apart.
START_TEST(test_cuda_transfers_from_many_threads) {
  enum { kThreads = 4 };
  atomic_int mismatches = 0;
  transfer_job_t jobs[kThreads];
  for (size_t i = 0; i < kThreads; ++i) {
    jobs[i].buffer = new_buffer(g_gpu, DC_DTYPE_U8, (size_t)9 << 20,
                                i % 2 ? DC_STORAGE_SHARED
                                      : DC_STORAGE_PRIVATE);
    jobs[i].seed = 1000 * (i + 1);
    jobs[i].mismatches = &mismatches;
  }
  dc_test_run_threads(kThreads, transfer_rounds, jobs, sizeof(jobs[0]));
  ck_assert_int_eq(atomic_load(&mismatches), 0);
  for (size_t i = 0; i < kThreads; ++i) dc_buffer_release(jobs[i].buffer);
}
END_TEST

//===-- Runner ----------------------------------------------------------===//

static Suite* cuda_device_suite(void) {
  Suite* s = suite_create("cuda_device");
  TCase* discovery = tcase_create("discovery");
  // Each context opens every GPU (and, with several, enables peer access
  // between them): seconds, on a machine busy with other GPU tests.
  tcase_set_timeout(discovery, 120);
  tcase_add_checked_fixture(discovery, fixture, fixture);
  tcase_add_test(discovery, test_cuda_discovery_matches_the_machine);
  tcase_add_test(discovery, test_cuda_selected_by_the_device_list);
  tcase_add_test(discovery, test_cuda_name_is_reserved);
  tcase_add_test(discovery, test_cuda_logs_what_it_found);
  suite_add_tcase(s, discovery);
  if (g_gpus == 0) return s;
  TCase* device = tcase_create("device");
  tcase_set_timeout(device, 240);
  tcase_add_checked_fixture(device, gpu_setup, gpu_teardown);
  tcase_add_test(device, test_cuda_capabilities_are_sane);
  tcase_add_test(device, test_cuda_round_trip_in_every_mode);
  tcase_add_test(device, test_cuda_large_transfer_through_staging);
  tcase_add_test(device, test_cuda_fill_patterns);
  tcase_add_test(device, test_cuda_fill_any_pattern_size);
  tcase_add_test(device, test_cuda_large_fill);
  tcase_add_test(device, test_cuda_copy_overlapping_ranges);
  tcase_add_test(device, test_cuda_copy_between_views_and_modes);
  tcase_add_test(device, test_cuda_copy_across_devices);
  tcase_add_test(device, test_cuda_host_pointer_of_shared_memory);
  tcase_add_test(device, test_cuda_pool_reuses_blocks);
  tcase_add_test(device, test_cuda_out_of_memory);
  tcase_add_test(device, test_cuda_memory_budget_applies);
  tcase_add_test(device, test_cuda_transfers_from_many_threads);
  suite_add_tcase(s, device);
  return s;
}

int main(void) {
  unsetenv("DC_DEVICES");
  g_gpus = dc_test_probe_cuda_devices();
  if (g_gpus < 0) {
    fprintf(stderr, "cuda: the probe for GPUs failed\n");
    return EXIT_FAILURE;
  }
  if (g_gpus == 0) {
    printf("cuda: no GPU here, device tests skipped\n");
  } else {
    printf("cuda: %d GPU(s); running the device tests on cuda:0\n", g_gpus);
  }
  SRunner* runner = srunner_create(cuda_device_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

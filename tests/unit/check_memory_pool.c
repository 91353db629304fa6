// check_memory_pool.c: size classes, caching, limits, budgets and stats.
// SPDX-License-Identifier: MIT
#include "check_util.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

static dc_context_t* ctx;
static dc_device_t* cpu;

// A quiet context whose CPU pool caches up to 256 MiB.
static void setup(void) {
  dc_test_clear_env();
  dc_test_fake_reset();
  dc_context_params_t p = dc_test_quiet_params();
  p.pool_cache_limit = 256 * MIB;
  p.thread_count = 1;
  ctx = dc_test_context_new(&p);
  cpu = dc_test_cpu(ctx);
}

static void teardown(void) {
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  dc_context_release(ctx);
  ctx = NULL;
  cpu = NULL;
}

// A buffer of |bytes| bytes (u8 elements) on |device|.
static dc_buffer_t* bytes_on(dc_device_t* device, size_t bytes) {
  return dc_test_buffer_new(device, DC_DTYPE_U8, bytes, "pool");
}

static dc_buffer_t* bytes_buffer(size_t bytes) { return bytes_on(cpu, bytes); }

static void* host_of(dc_buffer_t* b) {
  void* p = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, &p));
  return p;
}

// The size class a request of |bytes| gets, read off the pool's gauge.
static size_t class_of(size_t bytes) {
  size_t before = dc_test_pool_stats(cpu).bytes_in_use;
  dc_buffer_t* b = bytes_buffer(bytes);
  size_t cls = dc_test_pool_stats(cpu).bytes_in_use - before;
  dc_buffer_release(b);
  return cls;
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_memory_pool_hits_and_misses) {
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 0);
  ck_assert_uint_eq(s.misses, 0);
  dc_buffer_t* b = bytes_buffer(1000);
  void* first = host_of(b);
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.misses, 1);
  ck_assert_uint_eq(s.bytes_in_use, 1024);  // the class, not the request
  dc_buffer_release(b);
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.bytes_cached, 1024);
  ck_assert_uint_eq(s.blocks_cached, 1);

  // 1000 and 1024 bytes share a class: the cached block comes back.
  b = bytes_buffer(1024);
  ck_assert_ptr_eq(host_of(b), first);
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 1);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.blocks_cached, 0);
  ck_assert_uint_eq(s.bytes_in_use, 1024);
  dc_buffer_release(b);

  // A different class misses.
  b = bytes_buffer(1025);
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 2);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_memory_pool_size_classes) {
  static const size_t kClasses[][2] = {
      {1, 256},           {255, 256},          {256, 256},
      {257, 512},         {1000, 1024},        {4095, 4096},
      {4096, 4096},       {4097, 5120},        {5120, 5120},
      {5121, 6144},       {7000, 7168},        {7169, 8192},
      {8192, 8192},       {8193, 10240},       {MIB, MIB},
      {MIB + 1, MIB + MIB / 4},               {3000000, 3 * MIB},
      {64 * MIB - 1, 64 * MIB},
  };
  for (size_t i = 0; i < sizeof(kClasses) / sizeof(kClasses[0]); ++i) {
    ck_assert_msg(class_of(kClasses[i][0]) == kClasses[i][1],
                  "%zu bytes: class %zu, expected %zu", kClasses[i][0],
                  class_of(kClasses[i][0]), kClasses[i][1]);
  }
}
END_TEST

START_TEST(test_memory_pool_classes_waste_at_most_a_fifth) {
  DC_CK_OK(dc_memory_pool_set_cache_limit(cpu, 0));  // measure, not cache
  uint64_t state = 12345;
  for (int i = 0; i < 300; ++i) {
    size_t bytes = 4097 + (size_t)(dc_test_rand(&state) % (8 * MIB));
    size_t cls = class_of(bytes);
    ck_assert_uint_ge(cls, bytes);
    ck_assert_msg((cls - bytes) * 5 <= cls, "%zu bytes get %zu", bytes, cls);
    ck_assert_uint_eq(cls % 256, 0);  // as the device interface promises
  }
}
END_TEST

START_TEST(test_memory_pool_large_block_is_reused) {
  dc_buffer_t* b = bytes_buffer(64 * MIB);
  void* first = host_of(b);
  dc_buffer_release(b);
  b = bytes_buffer(64 * MIB);
  ck_assert_ptr_eq(host_of(b), first);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 1);
  ck_assert_uint_eq(s.misses, 1);
  ck_assert_uint_eq(s.bytes_in_use, 64 * MIB);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_memory_pool_classes_kept_apart_per_storage_mode) {
  dc_buffer_params_t p = {DC_DTYPE_U8, 1024, DC_STORAGE_PRIVATE, "m"};
  dc_buffer_t* b = NULL;
  DC_CK_OK(dc_buffer_create(cpu, &p, &b));
  dc_buffer_release(b);
  p.storage = DC_STORAGE_SHARED;
  DC_CK_OK(dc_buffer_create(cpu, &p, &b));
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 0);
  ck_assert_uint_eq(s.misses, 2);
  ck_assert_uint_eq(s.bytes_cached, 1024);  // the private block waits
  dc_buffer_release(b);
  p.storage = DC_STORAGE_PRIVATE;
  DC_CK_OK(dc_buffer_create(cpu, &p, &b));
  ck_assert_uint_eq(dc_test_pool_stats(cpu).hits, 1);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_memory_pool_views_use_no_pool_memory) {
  dc_buffer_t* b = bytes_buffer(4096);
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 100, 200, &v));
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_in_use, 4096);
  ck_assert_uint_eq(s.misses, 1);
  dc_buffer_release(b);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_in_use, 4096);
  dc_buffer_release(v);
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.bytes_cached, 4096);
}
END_TEST

START_TEST(test_memory_pool_cache_limit_respected) {
  DC_CK_OK(dc_memory_pool_set_cache_limit(cpu, 8 * KIB));
  dc_buffer_t* b[4];
  for (int i = 0; i < 4; ++i) b[i] = bytes_buffer(4 * KIB);
  for (int i = 0; i < 4; ++i) {
    dc_buffer_release(b[i]);
    ck_assert_uint_le(dc_test_pool_stats(cpu).bytes_cached, 8 * KIB);
  }
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.cache_limit, 8 * KIB);
  ck_assert_uint_eq(s.bytes_cached, 8 * KIB);
  ck_assert_uint_eq(s.blocks_cached, 2);
  // A block larger than the whole cache is never kept.
  dc_buffer_release(bytes_buffer(16 * KIB));
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_cached, 8 * KIB);
}
END_TEST

START_TEST(test_memory_pool_cache_limit_zero_disables_caching) {
  DC_CK_OK(dc_memory_pool_set_cache_limit(cpu, 0));
  for (int i = 0; i < 3; ++i) dc_buffer_release(bytes_buffer(512));
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 0);
  ck_assert_uint_eq(s.misses, 3);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.blocks_cached, 0);
}
END_TEST

START_TEST(test_memory_pool_set_cache_limit_trims_at_once) {
  dc_buffer_t* b[3];
  for (int i = 0; i < 3; ++i) b[i] = bytes_buffer(4 * KIB);
  for (int i = 0; i < 3; ++i) dc_buffer_release(b[i]);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_cached, 12 * KIB);
  DC_CK_OK(dc_memory_pool_set_cache_limit(cpu, 5 * KIB));
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_cached, 4 * KIB);
  ck_assert_uint_eq(s.blocks_cached, 1);
  ck_assert_uint_eq(s.trims, 1);
  ck_assert_uint_eq(s.cache_limit, 5 * KIB);
}
END_TEST

START_TEST(test_memory_pool_trim) {
  dc_buffer_t* b[4];
  b[0] = bytes_buffer(4 * KIB);
  b[1] = bytes_buffer(4 * KIB);
  b[2] = bytes_buffer(16 * KIB);
  b[3] = bytes_buffer(512);
  dc_buffer_t* kept = bytes_buffer(2 * KIB);
  for (int i = 0; i < 4; ++i) dc_buffer_release(b[i]);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_cached, 24 * KIB + 512);
  ck_assert_uint_eq(s.blocks_cached, 4);

  DC_CK_OK(dc_memory_pool_trim(cpu, 10 * KIB));  // largest go first
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_le(s.bytes_cached, 10 * KIB);
  ck_assert_uint_eq(s.bytes_cached, 8 * KIB + 512);
  ck_assert_uint_eq(s.trims, 1);

  DC_CK_OK(dc_memory_pool_trim(cpu, 0));
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.blocks_cached, 0);
  ck_assert_uint_eq(s.trims, 2);
  ck_assert_uint_eq(s.bytes_in_use, 2 * KIB);  // in-use blocks untouched

  DC_CK_OK(dc_memory_pool_trim(cpu, 0));  // nothing to free: not a trim
  ck_assert_uint_eq(dc_test_pool_stats(cpu).trims, 2);
  unsigned char x = 9;
  DC_CK_OK(dc_buffer_fill(kept, 0, 2 * KIB, &x));
  dc_buffer_release(kept);
}
END_TEST

START_TEST(test_memory_pool_peak_tracking) {
  dc_buffer_t* a = bytes_buffer(4 * KIB);
  dc_buffer_t* b = bytes_buffer(8 * KIB);
  dc_buffer_t* c = bytes_buffer(16 * KIB);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).peak_bytes_in_use, 28 * KIB);
  dc_buffer_release(b);
  dc_buffer_release(c);
  dc_buffer_t* d = bytes_buffer(1 * KIB);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_in_use, 5 * KIB);
  ck_assert_uint_eq(s.peak_bytes_in_use, 28 * KIB);  // peak stays
  dc_buffer_release(a);
  dc_buffer_release(d);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).peak_bytes_in_use, 28 * KIB);
}
END_TEST

START_TEST(test_memory_pool_budget_and_its_message) {
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 1 * MIB));
  ck_assert_uint_eq(dc_test_pool_stats(cpu).budget, 1 * MIB);
  dc_buffer_t* a = bytes_buffer(512 * KIB);
  dc_buffer_params_t p = {DC_DTYPE_U8, 768 * KIB, DC_STORAGE_PRIVATE, "big"};
  dc_buffer_t* b = a;
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &b), DC_ERR_OUT_OF_MEMORY,
             "768.0 KiB");  // what was asked
  DC_CK_ERROR_HAS("512.0 KiB in use");
  DC_CK_ERROR_HAS("budget 1.0 MiB");
  ck_assert_ptr_null(b);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.failures, 1);
  ck_assert_uint_eq(s.bytes_in_use, 512 * KIB);
  // What fits still works.
  dc_buffer_t* c = bytes_buffer(512 * KIB);
  dc_buffer_release(c);
  dc_buffer_release(a);
  // Released blocks may be cached only within the budget.
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_le(s.bytes_in_use + s.bytes_cached, 1 * MIB);
}
END_TEST

START_TEST(test_memory_pool_larger_than_budget_fails_at_once) {
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 1 * MIB));
  dc_buffer_release(bytes_buffer(256 * KIB));  // something cached
  dc_memory_pool_stats_t before = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(before.bytes_cached, 256 * KIB);
  dc_buffer_params_t p = {DC_DTYPE_U8, 2 * MIB, DC_STORAGE_PRIVATE, "huge"};
  dc_buffer_t* b = NULL;
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &b), DC_ERR_OUT_OF_MEMORY,
             "2.0 MiB");
  DC_CK_ERROR_HAS("budget 1.0 MiB");
  dc_memory_pool_stats_t after = dc_test_pool_stats(cpu);
  // The cache was not sacrificed for a request that could never fit.
  ck_assert_uint_eq(after.bytes_cached, 256 * KIB);
  ck_assert_uint_eq(after.trims, before.trims);
  ck_assert_uint_eq(after.failures, before.failures + 1);
}
END_TEST

START_TEST(test_memory_pool_cache_trimmed_before_failing) {
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 1 * MIB));
  dc_buffer_release(bytes_buffer(512 * KIB));
  dc_memory_pool_stats_t before = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(before.bytes_cached, 512 * KIB);
  // Fits only if the cached block goes.
  dc_buffer_t* b = bytes_buffer(768 * KIB);
  dc_memory_pool_stats_t after = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(after.trims, before.trims + 1);
  ck_assert_uint_eq(after.bytes_cached, 0);
  ck_assert_uint_eq(after.failures, 0);
  ck_assert_uint_eq(after.bytes_in_use, 768 * KIB);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_memory_pool_budget_below_use_takes_effect_on_release) {
  dc_buffer_t* a = bytes_buffer(768 * KIB);
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 256 * KIB));
  dc_buffer_params_t p = {DC_DTYPE_U8, 1024, DC_STORAGE_PRIVATE, "small"};
  dc_buffer_t* b = NULL;
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &b), DC_ERR_OUT_OF_MEMORY,
             "in use");
  dc_buffer_release(a);  // over the budget: freed, not cached
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.bytes_cached, 0);
  DC_CK_OK(dc_buffer_create(cpu, &p, &b));
  dc_buffer_release(b);
  // 0 restores the default: the device's memory.
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 0));
  ck_assert_uint_eq(dc_test_pool_stats(cpu).budget,
                    dc_device_info(cpu)->memory_size);
}
END_TEST

START_TEST(test_memory_pool_set_budget_trims_cache_to_fit) {
  for (int i = 0; i < 4; ++i) {
    dc_buffer_t* b[4];
    for (int j = 0; j < 4; ++j) b[j] = bytes_buffer(64 * KIB);
    for (int j = 0; j < 4; ++j) dc_buffer_release(b[j]);
  }
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_cached, 256 * KIB);
  dc_buffer_t* used = bytes_buffer(64 * KIB);  // a hit: 192 KiB stay cached
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 128 * KIB));
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_le(s.bytes_in_use + s.bytes_cached, 128 * KIB);
  ck_assert_uint_eq(s.bytes_cached, 64 * KIB);
  dc_buffer_release(used);
}
END_TEST

//===-- core: a device that refuses memory ------------------------------===//

START_TEST(test_memory_pool_device_refusal_frees_cache_and_retries) {
  dc_context_t* c = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(c, "fake", &fake));
  dc_buffer_release(bytes_on(fake, 4 * KIB));
  dc_buffer_release(bytes_on(fake, 8 * KIB));
  ck_assert_uint_eq(dc_test_pool_stats(fake).bytes_cached, 12 * KIB);
  atomic_store(&dc_test_fake.refuse, 1);
  dc_buffer_t* b = bytes_on(fake, 16 * KIB);  // refused once, then given
  dc_memory_pool_stats_t s = dc_test_pool_stats(fake);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.refusals), 1);
  ck_assert_uint_eq(s.bytes_cached, 0);
  ck_assert_uint_eq(s.trims, 1);
  ck_assert_uint_eq(s.failures, 0);
  ck_assert_uint_eq(s.bytes_in_use, 16 * KIB);
  dc_buffer_release(b);
  dc_context_release(c);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.allocations),
                    atomic_load(&dc_test_fake.deallocations));
}
END_TEST

START_TEST(test_memory_pool_device_refusal_fails_cleanly) {
  dc_context_t* c = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(c, "fake", &fake));
  dc_buffer_t* held = bytes_on(fake, 4 * KIB);
  atomic_store(&dc_test_fake.refuse, -1);
  dc_buffer_params_t p = {DC_DTYPE_U8, 100 * KIB, DC_STORAGE_PRIVATE, "no"};
  dc_buffer_t* b = held;
  DC_CK_FAIL(dc_buffer_create(fake, &p, &b), DC_ERR_OUT_OF_MEMORY,
             "fake:0");
  DC_CK_ERROR_HAS("4.0 KiB in use");
  ck_assert_ptr_null(b);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.refusals), 2);  // and a retry
  dc_memory_pool_stats_t s = dc_test_pool_stats(fake);
  ck_assert_uint_eq(s.failures, 1);
  ck_assert_uint_eq(s.bytes_in_use, 4 * KIB);  // the reservation undone
  atomic_store(&dc_test_fake.refuse, 0);
  dc_buffer_release(held);
  dc_context_release(c);
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_memory_pool_null_device) {
  dc_memory_pool_stats_t s;
  DC_CK_FAIL(dc_memory_pool_stats(NULL, &s), DC_ERR_INVALID_ARGUMENT,
             "dc_memory_pool_stats");
  DC_CK_FAIL(dc_memory_pool_stats(cpu, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_memory_pool_stats");
  DC_CK_FAIL(dc_memory_pool_trim(NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_memory_pool_trim");
  DC_CK_FAIL(dc_memory_pool_set_budget(NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_memory_pool_set_budget");
  DC_CK_FAIL(dc_memory_pool_set_cache_limit(NULL, 0),
             DC_ERR_INVALID_ARGUMENT, "dc_memory_pool_set_cache_limit");
}
END_TEST

START_TEST(test_memory_pool_impossible_request_counts_a_failure) {
  dc_buffer_params_t p = {DC_DTYPE_U8, SIZE_MAX / 2, DC_STORAGE_PRIVATE,
                          "impossible"};
  dc_buffer_t* b = NULL;
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &b), DC_ERR_OUT_OF_MEMORY, "cpu");
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.failures, 1);
  ck_assert_uint_eq(s.bytes_in_use, 0);
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_memory_pool_stats_per_device) {
  dc_context_t* c = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(c, "fake", &fake));
  dc_device_t* other_cpu = dc_test_cpu(c);
  dc_buffer_t* b = bytes_on(fake, 1000);
  ck_assert_uint_eq(dc_test_pool_stats(fake).bytes_in_use, 1024);
  ck_assert_uint_eq(dc_test_pool_stats(other_cpu).bytes_in_use, 0);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_in_use, 0);  // other ctx
  dc_buffer_release(b);
  dc_context_release(c);
}
END_TEST

START_TEST(test_memory_pool_cache_freed_with_the_context) {
  dc_context_t* c = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(c, "fake", &fake));
  for (int i = 0; i < 5; ++i) dc_buffer_release(bytes_on(fake, 1000 * i + 1));
  ck_assert_uint_eq(dc_test_pool_stats(fake).blocks_cached, 5);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.deallocations), 0);
  dc_context_release(c);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.deallocations), 5);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_memory_pool_exact_limits) {
  DC_CK_OK(dc_memory_pool_set_cache_limit(cpu, 4096));
  dc_buffer_release(bytes_buffer(4096));  // exactly the limit: kept
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_cached, 4096);
  DC_CK_OK(dc_memory_pool_trim(cpu, 0));
  DC_CK_OK(dc_memory_pool_set_budget(cpu, 8192));
  dc_buffer_t* b = bytes_buffer(8192);  // exactly the budget: fits
  dc_buffer_params_t p = {DC_DTYPE_U8, 1, DC_STORAGE_PRIVATE, "one more"};
  dc_buffer_t* c = NULL;
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &c), DC_ERR_OUT_OF_MEMORY,
             "8.0 KiB in use");
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_memory_pool_many_blocks_of_one_class) {
  dc_buffer_t* b[200];
  for (int i = 0; i < 200; ++i) b[i] = bytes_buffer(300);
  for (int i = 0; i < 200; ++i) dc_buffer_release(b[i]);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.blocks_cached, 200);
  ck_assert_uint_eq(s.bytes_cached, 200 * 512);
  for (int i = 0; i < 200; ++i) b[i] = bytes_buffer(512);
  s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.hits, 200);
  ck_assert_uint_eq(s.blocks_cached, 0);
  // Every block is distinct.
  for (int i = 1; i < 200; ++i) ck_assert_ptr_ne(host_of(b[i]), host_of(b[0]));
  for (int i = 0; i < 200; ++i) dc_buffer_release(b[i]);
}
END_TEST

static Suite* memory_pool_suite(void) {
  dc_test_fake_register();
  Suite* s = suite_create("memory_pool");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 30);
  tcase_add_test(core, test_memory_pool_hits_and_misses);
  tcase_add_test(core, test_memory_pool_size_classes);
  tcase_add_test(core, test_memory_pool_classes_waste_at_most_a_fifth);
  tcase_add_test(core, test_memory_pool_large_block_is_reused);
  tcase_add_test(core, test_memory_pool_classes_kept_apart_per_storage_mode);
  tcase_add_test(core, test_memory_pool_views_use_no_pool_memory);
  tcase_add_test(core, test_memory_pool_cache_limit_respected);
  tcase_add_test(core, test_memory_pool_cache_limit_zero_disables_caching);
  tcase_add_test(core, test_memory_pool_set_cache_limit_trims_at_once);
  tcase_add_test(core, test_memory_pool_trim);
  tcase_add_test(core, test_memory_pool_peak_tracking);
  tcase_add_test(core, test_memory_pool_budget_and_its_message);
  tcase_add_test(core, test_memory_pool_larger_than_budget_fails_at_once);
  tcase_add_test(core, test_memory_pool_cache_trimmed_before_failing);
  tcase_add_test(core,
                 test_memory_pool_budget_below_use_takes_effect_on_release);
  tcase_add_test(core, test_memory_pool_set_budget_trims_cache_to_fit);
  tcase_add_test(core,
                 test_memory_pool_device_refusal_frees_cache_and_retries);
  tcase_add_test(core, test_memory_pool_device_refusal_fails_cleanly);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_memory_pool_null_device);
  tcase_add_test(errors, test_memory_pool_impossible_request_counts_a_failure);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, setup, teardown);
  tcase_add_test(lifecycle, test_memory_pool_stats_per_device);
  tcase_add_test(lifecycle, test_memory_pool_cache_freed_with_the_context);
  suite_add_tcase(s, lifecycle);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, setup, teardown);
  tcase_add_test(limits, test_memory_pool_exact_limits);
  tcase_add_test(limits, test_memory_pool_many_blocks_of_one_class);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(memory_pool_suite)

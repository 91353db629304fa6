// check_buffer.c: buffers, views, transfers, and their validation.
// SPDX-License-Identifier: MIT
#include "check_util.h"

static const dc_dtype_t kDtypes[] = {
    DC_DTYPE_I8,  DC_DTYPE_U8,  DC_DTYPE_I16, DC_DTYPE_U16, DC_DTYPE_I32,
    DC_DTYPE_U32, DC_DTYPE_I64, DC_DTYPE_U64, DC_DTYPE_F32, DC_DTYPE_F64,
};
#define DTYPE_COUNT (sizeof(kDtypes) / sizeof(kDtypes[0]))

static const dc_storage_mode_t kModes[] = {
    DC_STORAGE_PRIVATE, DC_STORAGE_SHARED, DC_STORAGE_MANAGED,
};

static dc_context_t* ctx;
static dc_device_t* cpu;

// A non-NULL handle to preset out parameters with, so that a test sees
// whether a failing call cleared them.
static char sentinel_storage;
#define SENTINEL ((dc_buffer_t*)&sentinel_storage)

static void setup(void) {
  dc_test_clear_env();
  dc_test_fake_reset();
  ctx = dc_test_context_new(NULL);
  cpu = dc_test_cpu(ctx);
}

static void teardown(void) {
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  dc_context_release(ctx);
  ctx = NULL;
  cpu = NULL;
}

static dc_buffer_t* make(dc_dtype_t dtype, size_t length, const char* label) {
  return dc_test_buffer_new(cpu, dtype, length, label);
}

static dc_buffer_t* make_on(dc_device_t* device, dc_dtype_t dtype,
                            size_t length, dc_storage_mode_t storage,
                            const char* label) {
  dc_buffer_params_t p = {dtype, length, storage, label};
  dc_buffer_t* b = NULL;
  DC_CK_OK(dc_buffer_create(device, &p, &b));
  return b;
}

// A u32 buffer holding 0, 1, ..., length - 1.
static dc_buffer_t* make_iota(size_t length, const char* label) {
  dc_buffer_t* b = make(DC_DTYPE_U32, length, label);
  uint32_t* v = malloc(length * sizeof(*v));
  for (size_t i = 0; i < length; ++i) v[i] = (uint32_t)i;
  DC_CK_OK(dc_buffer_write(b, 0, v, length));
  free(v);
  return b;
}

static void read_u32(const dc_buffer_t* b, uint32_t* out, size_t count) {
  DC_CK_OK(dc_buffer_read(b, 0, out, count));
}

// Deterministic bytes that differ from one element to the next.
static void pattern_bytes(unsigned char* out, size_t n, unsigned seed) {
  uint64_t state = 0x9E3779B97F4A7C15ull ^ seed;
  for (size_t i = 0; i < n; ++i) out[i] = (unsigned char)dc_test_rand(&state);
}

//===-- core: types -----------------------------------------------------===//

START_TEST(test_buffer_dtype_sizes_and_names) {
  static const struct {
    dc_dtype_t dtype;
    size_t size;
    const char* name;
  } kInfo[] = {
      {DC_DTYPE_I8, 1, "i8"},   {DC_DTYPE_U8, 1, "u8"},
      {DC_DTYPE_I16, 2, "i16"}, {DC_DTYPE_U16, 2, "u16"},
      {DC_DTYPE_I32, 4, "i32"}, {DC_DTYPE_U32, 4, "u32"},
      {DC_DTYPE_I64, 8, "i64"}, {DC_DTYPE_U64, 8, "u64"},
      {DC_DTYPE_F32, 4, "f32"}, {DC_DTYPE_F64, 8, "f64"},
  };
  for (size_t i = 0; i < sizeof(kInfo) / sizeof(kInfo[0]); ++i) {
    ck_assert_uint_eq(dc_dtype_size(kInfo[i].dtype), kInfo[i].size);
    ck_assert_str_eq(dc_dtype_name(kInfo[i].dtype), kInfo[i].name);
    dc_dtype_t parsed = (dc_dtype_t)0;
    ck_assert(dc_dtype_parse(kInfo[i].name, &parsed));
    ck_assert_int_eq(parsed, kInfo[i].dtype);
  }
  ck_assert_int_eq(DC_DTYPE_I8, 1);  // the numbering is ABI
  ck_assert_int_eq(DC_DTYPE_F64, 10);
}
END_TEST

START_TEST(test_buffer_storage_mode_names) {
  static const char* const kNames[] = {"private", "shared", "managed"};
  for (size_t i = 0; i < 3; ++i) {
    ck_assert_str_eq(dc_storage_mode_name(kModes[i]), kNames[i]);
    dc_storage_mode_t parsed = (dc_storage_mode_t)-1;
    ck_assert(dc_storage_mode_parse(kNames[i], &parsed));
    ck_assert_int_eq(parsed, kModes[i]);
  }
}
END_TEST

//===-- core: buffers ---------------------------------------------------===//

START_TEST(test_buffer_create_every_dtype_and_mode) {
  for (size_t d = 0; d < DTYPE_COUNT; ++d) {
    for (size_t m = 0; m < 3; ++m) {
      dc_buffer_t* b = make_on(cpu, kDtypes[d], 37, kModes[m], "every");
      size_t esize = dc_dtype_size(kDtypes[d]);
      ck_assert_int_eq(dc_buffer_dtype(b), kDtypes[d]);
      ck_assert_uint_eq(dc_buffer_length(b), 37);
      ck_assert_uint_eq(dc_buffer_size_bytes(b), 37 * esize);
      ck_assert_int_eq(dc_buffer_storage_mode(b), kModes[m]);
      ck_assert_ptr_eq(dc_buffer_device(b), cpu);
      ck_assert_str_eq(dc_buffer_label(b), "every");
      size_t offset = 99;
      ck_assert(!dc_buffer_is_view(b, &offset));
      ck_assert_uint_eq(offset, 99);  // untouched for a buffer

      unsigned char in[37 * 8], out[37 * 8];
      pattern_bytes(in, 37 * esize, (unsigned)(d * 3 + m));
      DC_CK_OK(dc_buffer_write(b, 0, in, 37));
      memset(out, 0, sizeof(out));
      DC_CK_OK(dc_buffer_read(b, 0, out, 37));
      ck_assert_mem_eq(in, out, 37 * esize);
      void* host = NULL;
      DC_CK_OK(dc_buffer_host_pointer(b, &host));
      ck_assert_mem_eq(host, in, 37 * esize);  // CPU memory is the buffer
      dc_buffer_release(b);
    }
  }
}
END_TEST

START_TEST(test_buffer_memory_is_64_byte_aligned) {
  static const size_t kBytes[] = {1,    7,    63,   64,    65,    255,
                                  256,  257,  1000, 1024,  4095,  4097,
                                  5000, 8191, 65536, 65537, 1 << 20};
  for (size_t i = 0; i < sizeof(kBytes) / sizeof(kBytes[0]); ++i) {
    for (int round = 0; round < 2; ++round) {  // fresh, then from the cache
      dc_buffer_t* b = make(DC_DTYPE_U8, kBytes[i], "aligned");
      void* host = NULL;
      DC_CK_OK(dc_buffer_host_pointer(b, &host));
      ck_assert_msg(((uintptr_t)host & 63) == 0, "%zu bytes at %p",
                    kBytes[i], host);
      memset(host, 0xEE, kBytes[i]);  // all of it is ours (ASan checks)
      dc_buffer_release(b);
    }
  }
}
END_TEST

START_TEST(test_buffer_partial_write_and_read) {
  dc_buffer_t* b = make_iota(100, "partial");
  uint32_t in[5] = {1000, 1001, 1002, 1003, 1004}, out[100];
  DC_CK_OK(dc_buffer_write(b, 95, in, 5));  // the very end
  DC_CK_OK(dc_buffer_write(b, 10, in, 3));
  read_u32(b, out, 100);
  for (uint32_t i = 0; i < 100; ++i) {
    uint32_t want = i;
    if (i >= 95) want = 1000 + (i - 95);
    if (i >= 10 && i < 13) want = 1000 + (i - 10);
    ck_assert_uint_eq(out[i], want);
  }
  uint32_t mid[4];
  DC_CK_OK(dc_buffer_read(b, 50, mid, 4));
  ck_assert_uint_eq(mid[0], 50);
  ck_assert_uint_eq(mid[3], 53);
  dc_buffer_release(b);
}
END_TEST

// Fills elements [3, 23) of a 30-element buffer of |dtype| with |value| and
// checks them and their untouched neighbours byte by byte.
static void check_fill(dc_dtype_t dtype, const void* value) {
  size_t esize = dc_dtype_size(dtype);
  dc_buffer_t* b = make(dtype, 30, "fill");
  unsigned char before[30 * 8], after[30 * 8];
  pattern_bytes(before, 30 * esize, (unsigned)dtype);
  DC_CK_OK(dc_buffer_write(b, 0, before, 30));
  DC_CK_OK(dc_buffer_fill(b, 3, 20, value));
  DC_CK_OK(dc_buffer_read(b, 0, after, 30));
  for (size_t i = 0; i < 30; ++i) {
    const void* want = (i >= 3 && i < 23) ? value : before + i * esize;
    ck_assert_msg(memcmp(after + i * esize, want, esize) == 0,
                  "%s element %zu", dc_dtype_name(dtype), i);
  }
  dc_buffer_release(b);
}

START_TEST(test_buffer_fill_patterns_of_every_size) {
  int8_t i8 = -91;
  uint16_t u16 = 0x1234;       // bytes differ
  uint16_t u16_same = 0xFFFF;  // bytes equal
  int32_t i32 = 0;
  float f32 = 1.5f;
  uint32_t u32 = 0xA5A5A5A5u;
  double f64 = -2.25;
  uint64_t u64 = 0x0102030405060708ull;
  int64_t i64 = -1;
  check_fill(DC_DTYPE_I8, &i8);
  check_fill(DC_DTYPE_U8, &i8);
  check_fill(DC_DTYPE_U16, &u16);
  check_fill(DC_DTYPE_I16, &u16_same);
  check_fill(DC_DTYPE_I32, &i32);
  check_fill(DC_DTYPE_F32, &f32);
  check_fill(DC_DTYPE_U32, &u32);
  check_fill(DC_DTYPE_F64, &f64);
  check_fill(DC_DTYPE_U64, &u64);
  check_fill(DC_DTYPE_I64, &i64);
}
END_TEST

START_TEST(test_buffer_fill_whole_large_buffer) {
  size_t n = ((size_t)3 << 20) + 5;  // not a power of two
  dc_buffer_t* b = make(DC_DTYPE_F64, n, "big fill");
  double v = 3.25;
  DC_CK_OK(dc_buffer_fill(b, 0, n, &v));
  double* host = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, (void**)&host));
  for (size_t i = 0; i < n; i += 4099) ck_assert(host[i] == 3.25);
  ck_assert(host[n - 1] == 3.25);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_copy_within_device) {
  dc_buffer_t* src = make_iota(64, "src");
  dc_buffer_t* dst = make(DC_DTYPE_U32, 64, "dst");
  uint32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(dst, 0, 64, &zero));
  DC_CK_OK(dc_buffer_copy(dst, 10, src, 20, 30));
  uint32_t out[64];
  read_u32(dst, out, 64);
  for (uint32_t i = 0; i < 64; ++i) {
    ck_assert_uint_eq(out[i], (i >= 10 && i < 40) ? i + 10 : 0);
  }
  dc_buffer_release(src);
  dc_buffer_release(dst);
}
END_TEST

START_TEST(test_buffer_copy_overlapping_ranges) {
  // Forward overlap: as if the source were copied aside first.
  dc_buffer_t* b = make_iota(100, "overlap");
  DC_CK_OK(dc_buffer_copy(b, 10, b, 0, 50));
  uint32_t out[100];
  read_u32(b, out, 100);
  for (uint32_t i = 0; i < 100; ++i) {
    uint32_t want = (i >= 10 && i < 60) ? i - 10 : i;
    ck_assert_uint_eq(out[i], want);
  }
  dc_buffer_release(b);
  // Backward overlap.
  b = make_iota(100, "overlap");
  DC_CK_OK(dc_buffer_copy(b, 0, b, 10, 50));
  read_u32(b, out, 100);
  for (uint32_t i = 0; i < 100; ++i) {
    ck_assert_uint_eq(out[i], i < 50 ? i + 10 : i);
  }
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_copy_between_overlapping_views) {
  dc_buffer_t* b = make_iota(100, "base");
  dc_buffer_t *lo = NULL, *hi = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 60, &lo));
  DC_CK_OK(dc_buffer_create_view(b, 5, 60, &hi));
  DC_CK_OK(dc_buffer_copy(hi, 0, lo, 0, 55));  // b[5..60) = old b[0..55)
  uint32_t out[100];
  read_u32(b, out, 100);
  for (uint32_t i = 0; i < 100; ++i) {
    ck_assert_uint_eq(out[i], (i >= 5 && i < 60) ? i - 5 : i);
  }
  dc_buffer_release(lo);
  dc_buffer_release(hi);
  dc_buffer_release(b);
}
END_TEST

//===-- core: views -----------------------------------------------------===//

START_TEST(test_buffer_view_shares_memory) {
  dc_buffer_t* b = make_iota(50, "parent");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 10, 20, &v));
  size_t offset = 0;
  ck_assert(dc_buffer_is_view(v, &offset));
  ck_assert(dc_buffer_is_view(v, NULL));
  ck_assert_uint_eq(offset, 10);
  ck_assert_uint_eq(dc_buffer_length(v), 20);
  ck_assert_uint_eq(dc_buffer_size_bytes(v), 80);
  ck_assert_int_eq(dc_buffer_dtype(v), DC_DTYPE_U32);
  ck_assert_int_eq(dc_buffer_storage_mode(v), DC_STORAGE_PRIVATE);
  ck_assert_str_eq(dc_buffer_label(v), "parent");
  ck_assert_ptr_eq(dc_buffer_device(v), cpu);

  uint32_t first = 0;
  DC_CK_OK(dc_buffer_read(v, 0, &first, 1));
  ck_assert_uint_eq(first, 10);
  uint32_t marker = 777;
  DC_CK_OK(dc_buffer_write(v, 19, &marker, 1));  // last element of the view
  uint32_t seen = 0;
  DC_CK_OK(dc_buffer_read(b, 29, &seen, 1));
  ck_assert_uint_eq(seen, 777);

  char *pb = NULL, *pv = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, (void**)&pb));
  DC_CK_OK(dc_buffer_host_pointer(v, (void**)&pv));
  ck_assert_ptr_eq(pv, pb + 10 * sizeof(uint32_t));
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 2);
  dc_buffer_release(v);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_view_of_view_is_view_of_original) {
  dc_buffer_t* b = make_iota(100, "root");
  dc_buffer_t *v1 = NULL, *v2 = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 10, 50, &v1));
  DC_CK_OK(dc_buffer_create_view(v1, 5, 20, &v2));
  size_t offset = 0;
  ck_assert(dc_buffer_is_view(v2, &offset));
  ck_assert_uint_eq(offset, 15);  // within the original buffer
  uint32_t out[20];
  read_u32(v2, out, 20);
  for (uint32_t i = 0; i < 20; ++i) ck_assert_uint_eq(out[i], 15 + i);
  uint32_t seven = 7;
  DC_CK_OK(dc_buffer_fill(v2, 0, 20, &seven));
  uint32_t all[100];
  read_u32(b, all, 100);
  for (uint32_t i = 0; i < 100; ++i) {
    ck_assert_uint_eq(all[i], (i >= 15 && i < 35) ? 7 : i);
  }
  dc_buffer_release(v2);
  dc_buffer_release(v1);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_labels) {
  char label[64] = "original";
  dc_buffer_t* b = make(DC_DTYPE_U8, 4, label);
  strcpy(label, "changed");  // the buffer copied it
  ck_assert_str_eq(dc_buffer_label(b), "original");
  dc_buffer_t* unnamed = make(DC_DTYPE_U8, 4, NULL);
  ck_assert_str_eq(dc_buffer_label(unnamed), "");
  char long_label[101];
  memset(long_label, 'L', 100);
  long_label[100] = '\0';
  dc_buffer_t* longer = make(DC_DTYPE_U8, 4, long_label);
  size_t kept = strlen(dc_buffer_label(longer));
  ck_assert_uint_gt(kept, 30);  // a useful prefix survives
  ck_assert_uint_lt(kept, 100);
  ck_assert_int_eq(strncmp(dc_buffer_label(longer), long_label, kept), 0);
  dc_buffer_release(b);
  dc_buffer_release(unnamed);
  dc_buffer_release(longer);
}
END_TEST

START_TEST(test_buffer_retain_release) {
  dc_buffer_t* b = make(DC_DTYPE_I32, 8, "counted");
  dc_buffer_retain(b);
  dc_buffer_retain(b);
  dc_buffer_release(b);
  dc_buffer_release(b);
  int32_t v = 5;
  DC_CK_OK(dc_buffer_fill(b, 0, 8, &v));  // one reference left
  dc_buffer_release(b);
  DC_CK_FAIL(dc_buffer_fill(b, 0, 8, &v), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL or a released buffer");
  dc_buffer_retain(NULL);
  dc_buffer_release(NULL);
}
END_TEST

//===-- core: across devices and contexts -------------------------------===//

START_TEST(test_buffer_copy_across_contexts_goes_host_to_host) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 1;
  dc_context_t* other = dc_test_context_new(&p);
  size_t n = ((size_t)5 << 20) / 4 + 3;
  dc_buffer_t* src = make_iota(n, "src");
  dc_buffer_t* dst = dc_test_buffer_new(dc_test_cpu(other), DC_DTYPE_U32, n,
                                        "dst");
  size_t before = atomic_load(&counting.allocations);
  DC_CK_OK(dc_buffer_copy(dst, 0, src, 0, n));
  // Both sides are host memory: the copy needs no staging.
  ck_assert_uint_eq(atomic_load(&counting.allocations), before);
  uint32_t* host = NULL;
  DC_CK_OK(dc_buffer_host_pointer(dst, (void**)&host));
  for (size_t i = 0; i < n; ++i) {
    if (host[i] != (uint32_t)i) ck_abort_msg("element %zu is %u", i, host[i]);
  }
  // Back the other way, a small piece at offsets.
  DC_CK_OK(dc_buffer_copy(src, 1, dst, n - 4, 3));
  uint32_t out[4];
  read_u32(src, out, 4);
  ck_assert_uint_eq(out[0], 0);
  ck_assert_uint_eq(out[1], (uint32_t)(n - 4));
  ck_assert_uint_eq(out[3], (uint32_t)(n - 2));
  dc_buffer_release(src);
  dc_buffer_release(dst);
  dc_context_release(other);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

// Two fake GPUs: private memory the host cannot see, no peer copies.
static dc_context_t* context_with_two_fakes(dc_test_allocator_t* counting,
                                            dc_buffer_t** out_src,
                                            dc_buffer_t** out_dst,
                                            size_t n) {
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(counting);
  p.thread_count = 1;
  dc_context_t* c = dc_test_context_with_fakes(&p, 2);
  dc_device_t *f0 = NULL, *f1 = NULL;
  DC_CK_OK(dc_context_find_device(c, "fake:0", &f0));
  DC_CK_OK(dc_context_find_device(c, "fake:1", &f1));
  *out_src = make_on(f0, DC_DTYPE_U32, n, DC_STORAGE_PRIVATE, "src");
  *out_dst = make_on(f1, DC_DTYPE_U32, n, DC_STORAGE_PRIVATE, "dst");
  return c;
}

START_TEST(test_buffer_copy_between_hidden_memories_uses_staging) {
  dc_test_allocator_t counting = {0};
  size_t n = ((size_t)5 << 20) / 4 + 3;  // more than one staging piece
  dc_buffer_t *src = NULL, *dst = NULL;
  dc_context_t* c = context_with_two_fakes(&counting, &src, &dst, n);
  uint32_t* in = dc_test_xmalloc(n * 4);
  for (size_t i = 0; i < n; ++i) in[i] = (uint32_t)(i * 3);
  DC_CK_OK(dc_buffer_write(src, 0, in, n));
  size_t before = atomic_load(&counting.allocations);
  DC_CK_OK(dc_buffer_copy(dst, 0, src, 0, n));
  // The copy staged through the context's host allocator, in pieces of
  // at most 4 MiB, and gave the staging memory back.
  ck_assert_uint_eq(atomic_load(&counting.allocations), before + 1);
  ck_assert_uint_eq(atomic_load(&counting.largest), (size_t)4 << 20);
  memset(in, 0, n * 4);
  DC_CK_OK(dc_buffer_read(dst, 0, in, n));
  for (size_t i = 0; i < n; ++i) {
    if (in[i] != (uint32_t)(i * 3)) ck_abort_msg("element %zu is %u", i, in[i]);
  }
  free(in);
  dc_buffer_release(src);
  dc_buffer_release(dst);
  dc_context_release(c);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_buffer_copy_across_devices) {
  dc_context_t* both = dc_test_context_with_fakes(NULL, 1);
  dc_device_t *host_dev = dc_test_cpu(both), *fake = NULL;
  DC_CK_OK(dc_context_find_device(both, "fake", &fake));
  dc_buffer_t* a = make_on(host_dev, DC_DTYPE_I16, 1000, DC_STORAGE_PRIVATE,
                           "a");
  dc_buffer_t* g = make_on(fake, DC_DTYPE_I16, 1000, DC_STORAGE_PRIVATE, "g");
  dc_buffer_t* c = make_on(host_dev, DC_DTYPE_I16, 1000, DC_STORAGE_PRIVATE,
                           "c");
  int16_t in[1000], out[1000];
  for (int i = 0; i < 1000; ++i) in[i] = (int16_t)(i * 7 - 3000);
  DC_CK_OK(dc_buffer_write(a, 0, in, 1000));
  DC_CK_OK(dc_buffer_copy(g, 0, a, 0, 1000));
  memset(out, 0, sizeof(out));
  DC_CK_OK(dc_buffer_read(g, 0, out, 1000));
  ck_assert_mem_eq(in, out, sizeof(in));
  int16_t zero = 0;
  DC_CK_OK(dc_buffer_fill(c, 0, 1000, &zero));
  DC_CK_OK(dc_buffer_copy(c, 100, g, 200, 300));
  DC_CK_OK(dc_buffer_read(c, 0, out, 1000));
  for (int i = 0; i < 1000; ++i) {
    ck_assert_int_eq(out[i], (i >= 100 && i < 400) ? in[i + 100] : 0);
  }
  dc_buffer_release(a);
  dc_buffer_release(g);
  dc_buffer_release(c);
  dc_context_release(both);
}
END_TEST

START_TEST(test_buffer_host_pointer_needs_host_visible_memory) {
  dc_context_t* both = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(both, "fake", &fake));
  dc_buffer_t* hidden = make_on(fake, DC_DTYPE_F32, 8, DC_STORAGE_PRIVATE,
                                "hidden");
  void* p = &p;
  DC_CK_FAIL(dc_buffer_host_pointer(hidden, &p), DC_ERR_FAILED_PRECONDITION,
             "dc_buffer_host_pointer");
  DC_CK_ERROR_HAS("not visible to the host");
  DC_CK_ERROR_HAS("'hidden'");
  DC_CK_ERROR_HAS("fake:0");
  ck_assert_ptr_null(p);
  dc_buffer_t* shared = make_on(fake, DC_DTYPE_F32, 8, DC_STORAGE_SHARED,
                                "shared");
  DC_CK_OK(dc_buffer_host_pointer(shared, &p));
  ck_assert_ptr_nonnull(p);
  dc_buffer_release(hidden);
  dc_buffer_release(shared);
  dc_context_release(both);
}
END_TEST

//===-- errors: creation ------------------------------------------------===//

START_TEST(test_buffer_create_null_arguments) {
  dc_buffer_params_t p = {DC_DTYPE_F32, 4, DC_STORAGE_PRIVATE, NULL};
  dc_buffer_t* b = SENTINEL;
  DC_CK_FAIL(dc_buffer_create(NULL, &p, &b), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_create");
  DC_CK_ERROR_HAS("device");
  ck_assert_ptr_null(b);
  DC_CK_FAIL(dc_buffer_create(cpu, NULL, &b), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_create");
  DC_CK_ERROR_HAS("params");
  DC_CK_FAIL(dc_buffer_create(cpu, &p, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_create");
  DC_CK_ERROR_HAS("out_buffer");
}
END_TEST

START_TEST(test_buffer_create_bad_params) {
  static const struct {
    dc_buffer_params_t params;
    const char* says;
  } kBad[] = {
      {{(dc_dtype_t)0, 4, DC_STORAGE_PRIVATE, NULL}, "dtype 0"},
      {{(dc_dtype_t)11, 4, DC_STORAGE_PRIVATE, NULL}, "dtype 11"},
      {{(dc_dtype_t)-1, 4, DC_STORAGE_PRIVATE, NULL}, "dtype -1"},
      {{DC_DTYPE_F32, 4, (dc_storage_mode_t)3, NULL}, "storage mode 3"},
      {{DC_DTYPE_F32, 4, (dc_storage_mode_t)-1, NULL}, "storage mode -1"},
      {{DC_DTYPE_F32, 0, DC_STORAGE_PRIVATE, NULL}, "length 0"},
      {{DC_DTYPE_F64, SIZE_MAX / 2, DC_STORAGE_PRIVATE, NULL}, "overflows"},
      {{DC_DTYPE_F64, SIZE_MAX / 8 + 1, DC_STORAGE_PRIVATE, NULL},
       "overflows"},
      {{DC_DTYPE_U16, SIZE_MAX, DC_STORAGE_SHARED, NULL}, "overflows"},
  };
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    dc_buffer_t* b = SENTINEL;
    DC_CK_FAIL(dc_buffer_create(cpu, &kBad[i].params, &b),
               DC_ERR_INVALID_ARGUMENT, "dc_buffer_create");
    DC_CK_ERROR_HAS(kBad[i].says);
    ck_assert_ptr_null(b);
  }
  ck_assert_uint_eq(dc_test_pool_stats(cpu).misses, 0);  // no memory asked
}
END_TEST

START_TEST(test_buffer_create_too_large_for_the_device) {
  dc_buffer_t* b = NULL;
  // Fits in size_t but in no device.
  dc_buffer_params_t p = {DC_DTYPE_U8, SIZE_MAX / 2, DC_STORAGE_PRIVATE,
                          "huge"};
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &b), DC_ERR_OUT_OF_MEMORY, "cpu");
  ck_assert_ptr_null(b);
  // Beyond the budget.
  DC_CK_OK(dc_memory_pool_set_budget(cpu, (size_t)1 << 20));
  p.length = (size_t)2 << 20;
  DC_CK_FAIL(dc_buffer_create(cpu, &p, &b), DC_ERR_OUT_OF_MEMORY,
             "2.0 MiB");
  ck_assert_ptr_null(b);
  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_eq(s.failures, 2);
}
END_TEST

START_TEST(test_buffer_create_out_of_host_memory) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 1;
  dc_context_t* c = dc_test_context_new(&p);
  dc_device_t* d = dc_test_cpu(c);
  counting.fail_at = atomic_load(&counting.attempts) + 1;  // all from now
  dc_buffer_params_t bp = {DC_DTYPE_F32, 100, DC_STORAGE_PRIVATE, "oom"};
  dc_buffer_t* b = SENTINEL;
  DC_CK_FAIL(dc_buffer_create(d, &bp, &b), DC_ERR_OUT_OF_MEMORY,
             "dc_buffer_create");
  ck_assert_ptr_null(b);
  ck_assert_uint_eq(dc_test_pool_stats(d).bytes_in_use, 0);
  ck_assert_uint_eq(dc_context_live_buffer_count(c), 0);

  counting.fail_at = 0;
  dc_buffer_t* root = dc_test_buffer_new(d, DC_DTYPE_F32, 100, "root");
  counting.fail_at = atomic_load(&counting.attempts) + 1;
  dc_buffer_t* v = SENTINEL;
  DC_CK_FAIL(dc_buffer_create_view(root, 0, 10, &v), DC_ERR_OUT_OF_MEMORY,
             "dc_buffer_create_view");
  ck_assert_ptr_null(v);
  ck_assert_uint_eq(dc_context_live_buffer_count(c), 1);
  dc_buffer_release(root);  // the failed view took no reference
  ck_assert_uint_eq(dc_test_pool_stats(d).bytes_in_use, 0);
  ck_assert_uint_eq(dc_context_live_buffer_count(c), 0);
  counting.fail_at = 0;
  dc_context_release(c);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_buffer_copy_staging_out_of_memory) {
  dc_test_allocator_t counting = {0};
  dc_buffer_t *src = NULL, *dst = NULL;
  dc_context_t* c = context_with_two_fakes(&counting, &src, &dst, 10);
  counting.fail_at = atomic_load(&counting.attempts) + 1;
  DC_CK_FAIL(dc_buffer_copy(dst, 0, src, 0, 10), DC_ERR_OUT_OF_MEMORY,
             "dc_buffer_copy");
  DC_CK_ERROR_HAS("staging");
  counting.fail_at = 0;
  dc_buffer_release(src);
  dc_buffer_release(dst);
  dc_context_release(c);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

//===-- errors: ranges --------------------------------------------------===//

START_TEST(test_buffer_view_bad_ranges) {
  dc_buffer_t* b = make(DC_DTYPE_F64, 10, "tenner");
  const char* fn = "dc_buffer_create_view";
  dc_buffer_t* v = b;
  DC_CK_FAIL(dc_buffer_create_view(b, 0, 0, &v), DC_ERR_INVALID_ARGUMENT, fn);
  ck_assert_ptr_null(v);
  static const size_t kRanges[][2] = {
      {10, 1}, {0, 11}, {9, 2}, {11, 1}, {SIZE_MAX, 1}, {SIZE_MAX, 2},
      {1, SIZE_MAX}, {5, SIZE_MAX - 4},
  };
  for (size_t i = 0; i < sizeof(kRanges) / sizeof(kRanges[0]); ++i) {
    v = b;
    DC_CK_FAIL(dc_buffer_create_view(b, kRanges[i][0], kRanges[i][1], &v),
               DC_ERR_OUT_OF_RANGE, fn);
    DC_CK_ERROR_HAS("(tenner, length 10)");
    ck_assert_ptr_null(v);
  }
  DC_CK_FAIL(dc_buffer_create_view(NULL, 0, 1, &v), DC_ERR_INVALID_ARGUMENT,
             fn);
  DC_CK_FAIL(dc_buffer_create_view(b, 0, 1, NULL), DC_ERR_INVALID_ARGUMENT,
             fn);
  // A view's window is checked against the view, not its parent.
  DC_CK_OK(dc_buffer_create_view(b, 2, 5, &v));
  dc_buffer_t* w = NULL;
  DC_CK_FAIL(dc_buffer_create_view(v, 1, 5, &w), DC_ERR_OUT_OF_RANGE, fn);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 2);
  dc_buffer_release(v);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_transfer_bad_ranges) {
  dc_buffer_t* b = make(DC_DTYPE_I32, 10, "ten");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 4, &v));
  int32_t data[16] = {0};
  static const size_t kRanges[][2] = {
      {10, 1}, {0, 11}, {9, 2}, {SIZE_MAX, 1}, {SIZE_MAX, 2}, {1, SIZE_MAX},
      {2, SIZE_MAX / 4},
  };
  for (size_t i = 0; i < sizeof(kRanges) / sizeof(kRanges[0]); ++i) {
    size_t off = kRanges[i][0], n = kRanges[i][1];
    DC_CK_FAIL(dc_buffer_write(b, off, data, n), DC_ERR_OUT_OF_RANGE,
               "dc_buffer_write");
    DC_CK_ERROR_HAS("(ten, length 10)");
    DC_CK_FAIL(dc_buffer_read(b, off, data, n), DC_ERR_OUT_OF_RANGE,
               "dc_buffer_read");
    DC_CK_FAIL(dc_buffer_fill(b, off, n, data), DC_ERR_OUT_OF_RANGE,
               "dc_buffer_fill");
  }
  // Views check against their own length.
  DC_CK_FAIL(dc_buffer_write(v, 0, data, 5), DC_ERR_OUT_OF_RANGE,
             "dc_buffer_write");
  DC_CK_FAIL(dc_buffer_read(v, 3, data, 2), DC_ERR_OUT_OF_RANGE,
             "dc_buffer_read");
  DC_CK_FAIL(dc_buffer_fill(v, 4, 1, data), DC_ERR_OUT_OF_RANGE,
             "dc_buffer_fill");
  // Zero counts.
  DC_CK_FAIL(dc_buffer_write(b, 0, data, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_write");
  DC_CK_FAIL(dc_buffer_read(b, 0, data, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_read");
  DC_CK_FAIL(dc_buffer_fill(b, 0, 0, data), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_fill");
  dc_buffer_release(v);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_transfer_null_arguments) {
  dc_buffer_t* b = make(DC_DTYPE_I32, 10, "n");
  int32_t data[10] = {0};
  DC_CK_FAIL(dc_buffer_write(NULL, 0, data, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_write");
  DC_CK_FAIL(dc_buffer_write(b, 0, NULL, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_write");
  DC_CK_ERROR_HAS("src");
  DC_CK_FAIL(dc_buffer_read(NULL, 0, data, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_read");
  DC_CK_FAIL(dc_buffer_read(b, 0, NULL, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_read");
  DC_CK_ERROR_HAS("dst");
  DC_CK_FAIL(dc_buffer_fill(NULL, 0, 1, data), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_fill");
  DC_CK_FAIL(dc_buffer_fill(b, 0, 1, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_fill");
  DC_CK_ERROR_HAS("value");
  DC_CK_FAIL(dc_buffer_copy(NULL, 0, b, 0, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_copy");
  DC_CK_ERROR_HAS("dst");
  DC_CK_FAIL(dc_buffer_copy(b, 0, NULL, 0, 1), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_copy");
  DC_CK_ERROR_HAS("src");
  void* p = &p;
  DC_CK_FAIL(dc_buffer_host_pointer(NULL, &p), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_host_pointer");
  ck_assert_ptr_null(p);
  DC_CK_FAIL(dc_buffer_host_pointer(b, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_buffer_host_pointer");
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_copy_bad_arguments) {
  dc_buffer_t* a = make(DC_DTYPE_F32, 10, "a");
  dc_buffer_t* b = make(DC_DTYPE_F32, 20, "b");
  dc_buffer_t* i = make(DC_DTYPE_I32, 10, "i");
  const char* fn = "dc_buffer_copy";
  DC_CK_FAIL(dc_buffer_copy(a, 0, i, 0, 5), DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_ERROR_HAS("dtypes differ");
  DC_CK_ERROR_HAS("f32");
  DC_CK_ERROR_HAS("i32");
  DC_CK_FAIL(dc_buffer_copy(a, 0, b, 0, 0), DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_buffer_copy(a, 0, b, 0, 11), DC_ERR_OUT_OF_RANGE,
             "'dst' (a, length 10)");
  DC_CK_FAIL(dc_buffer_copy(b, 0, a, 5, 6), DC_ERR_OUT_OF_RANGE,
             "'src' (a, length 10)");
  DC_CK_FAIL(dc_buffer_copy(b, SIZE_MAX, a, 0, 2), DC_ERR_OUT_OF_RANGE, fn);
  DC_CK_FAIL(dc_buffer_copy(b, 0, a, SIZE_MAX, 2), DC_ERR_OUT_OF_RANGE, fn);
  DC_CK_FAIL(dc_buffer_copy(b, 1, a, 1, SIZE_MAX), DC_ERR_OUT_OF_RANGE, fn);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_buffer_release(i);
}
END_TEST

//===-- errors: use after release (resource.h's one check) --------------===//

START_TEST(test_buffer_use_after_release) {
  dc_buffer_t* live = make(DC_DTYPE_F32, 10, "live");
  dc_buffer_t* gone = make(DC_DTYPE_F32, 10, "gone");
  dc_buffer_release(gone);
  float data[10] = {0};
  const char* msg = "is NULL or a released buffer";
  DC_CK_FAIL(dc_buffer_write(gone, 0, data, 1), DC_ERR_INVALID_ARGUMENT,
             msg);
  DC_CK_ERROR_HAS("dc_buffer_write");
  DC_CK_FAIL(dc_buffer_read(gone, 0, data, 1), DC_ERR_INVALID_ARGUMENT,
             msg);
  DC_CK_ERROR_HAS("dc_buffer_read");
  DC_CK_FAIL(dc_buffer_fill(gone, 0, 1, data), DC_ERR_INVALID_ARGUMENT,
             msg);
  DC_CK_ERROR_HAS("dc_buffer_fill");
  DC_CK_FAIL(dc_buffer_copy(gone, 0, live, 0, 1), DC_ERR_INVALID_ARGUMENT,
             msg);
  DC_CK_ERROR_HAS("'dst'");
  DC_CK_FAIL(dc_buffer_copy(live, 0, gone, 0, 1), DC_ERR_INVALID_ARGUMENT,
             msg);
  DC_CK_ERROR_HAS("'src'");
  dc_buffer_t* v = live;
  DC_CK_FAIL(dc_buffer_create_view(gone, 0, 1, &v),
             DC_ERR_INVALID_ARGUMENT, msg);
  DC_CK_ERROR_HAS("dc_buffer_create_view");
  ck_assert_ptr_null(v);
  void* p = &p;
  DC_CK_FAIL(dc_buffer_host_pointer(gone, &p), DC_ERR_INVALID_ARGUMENT,
             msg);
  ck_assert_ptr_null(p);
  // Accessors answer as for NULL.
  ck_assert_int_eq(dc_buffer_dtype(gone), 0);
  ck_assert_uint_eq(dc_buffer_length(gone), 0);
  ck_assert_uint_eq(dc_buffer_size_bytes(gone), 0);
  ck_assert_ptr_null(dc_buffer_device(gone));
  ck_assert_str_eq(dc_buffer_label(gone), "");
  ck_assert(!dc_buffer_is_view(gone, NULL));
  // Extra retains and releases of a released buffer do nothing.
  dc_buffer_retain(gone);
  dc_buffer_release(gone);
  dc_buffer_release(gone);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 1);
  DC_CK_OK(dc_buffer_write(live, 0, data, 10));
  dc_buffer_release(live);
}
END_TEST

START_TEST(test_buffer_use_after_release_of_a_view) {
  dc_buffer_t* b = make(DC_DTYPE_U8, 10, "b");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 5, &v));
  dc_buffer_release(v);
  unsigned char x = 1;
  DC_CK_FAIL(dc_buffer_write(v, 0, &x, 1), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL or a released buffer");
  DC_CK_OK(dc_buffer_write(b, 0, &x, 1));  // the parent is unaffected
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_not_a_buffer) {
  static uint64_t junk[64];  // zeroed: no resource type
  dc_buffer_t* fake = (dc_buffer_t*)junk;
  unsigned char x = 0;
  DC_CK_FAIL(dc_buffer_write(fake, 0, &x, 1), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL or a released buffer");
  ck_assert_uint_eq(dc_buffer_length(fake), 0);
  dc_buffer_release(fake);  // ignored
  dc_buffer_retain(fake);
}
END_TEST

START_TEST(test_buffer_null_accessors) {
  ck_assert_int_eq(dc_buffer_dtype(NULL), 0);
  ck_assert_uint_eq(dc_buffer_length(NULL), 0);
  ck_assert_uint_eq(dc_buffer_size_bytes(NULL), 0);
  ck_assert_int_eq(dc_buffer_storage_mode(NULL), DC_STORAGE_PRIVATE);
  ck_assert_ptr_null(dc_buffer_device(NULL));
  ck_assert_str_eq(dc_buffer_label(NULL), "");
  size_t off = 3;
  ck_assert(!dc_buffer_is_view(NULL, &off));
  ck_assert_uint_eq(off, 3);
}
END_TEST

START_TEST(test_buffer_unknown_type_names) {
  ck_assert_uint_eq(dc_dtype_size((dc_dtype_t)0), 0);
  ck_assert_uint_eq(dc_dtype_size((dc_dtype_t)11), 0);
  ck_assert_uint_eq(dc_dtype_size((dc_dtype_t)-5), 0);
  ck_assert_str_eq(dc_dtype_name((dc_dtype_t)0), "?");
  ck_assert_str_eq(dc_dtype_name((dc_dtype_t)99), "?");
  ck_assert_str_eq(dc_storage_mode_name((dc_storage_mode_t)3), "?");
  ck_assert_str_eq(dc_storage_mode_name((dc_storage_mode_t)-1), "?");
  static const char* const kBadTypes[] = {"F32", "float", "", "f16", "i8 "};
  for (size_t i = 0; i < sizeof(kBadTypes) / sizeof(kBadTypes[0]); ++i) {
    dc_dtype_t d = DC_DTYPE_U8;
    ck_assert_msg(!dc_dtype_parse(kBadTypes[i], &d), "'%s'", kBadTypes[i]);
    ck_assert_int_eq(d, DC_DTYPE_U8);
  }
  dc_dtype_t d = DC_DTYPE_U8;
  ck_assert(!dc_dtype_parse(NULL, &d));
  ck_assert(!dc_dtype_parse("f32", NULL));
  dc_storage_mode_t m = DC_STORAGE_SHARED;
  ck_assert(!dc_storage_mode_parse("Private", &m));
  ck_assert(!dc_storage_mode_parse("device", &m));
  ck_assert(!dc_storage_mode_parse(NULL, &m));
  ck_assert(!dc_storage_mode_parse("shared", NULL));
  ck_assert_int_eq(m, DC_STORAGE_SHARED);
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_buffer_view_keeps_parent_alive) {
  dc_buffer_t* b = make_iota(40, "parent");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 8, 16, &v));
  size_t in_use = dc_test_pool_stats(cpu).bytes_in_use;
  dc_buffer_release(b);
  // The memory stays in use; the view still reads the parent's data.
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_in_use, in_use);
  uint32_t out[16];
  read_u32(v, out, 16);
  for (uint32_t i = 0; i < 16; ++i) ck_assert_uint_eq(out[i], 8 + i);
  // The parent is still alive too, held by the view.
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 2);
  dc_buffer_release(v);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_in_use, 0);
}
END_TEST

START_TEST(test_buffer_view_of_view_outlives_both_parents) {
  dc_buffer_t* b = make_iota(100, "root");
  dc_buffer_t *v1 = NULL, *v2 = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 20, 60, &v1));
  DC_CK_OK(dc_buffer_create_view(v1, 10, 30, &v2));
  dc_buffer_release(b);
  dc_buffer_release(v1);
  uint32_t out[30];
  read_u32(v2, out, 30);
  for (uint32_t i = 0; i < 30; ++i) ck_assert_uint_eq(out[i], 30 + i);
  DC_CK_OK(dc_buffer_copy(v2, 0, v2, 1, 29));
  read_u32(v2, out, 30);
  ck_assert_uint_eq(out[0], 31);
  ck_assert_uint_eq(out[28], 59);
  ck_assert_uint_eq(out[29], 59);
  dc_buffer_release(v2);
  ck_assert_uint_eq(dc_test_pool_stats(cpu).bytes_in_use, 0);
}
END_TEST

START_TEST(test_buffer_release_order_does_not_matter) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 1;
  dc_context_t* c = dc_test_context_new(&p);
  dc_buffer_t* b = dc_test_buffer_new(dc_test_cpu(c), DC_DTYPE_U8, 64, "b");
  dc_buffer_t *v1 = NULL, *v2 = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 32, &v1));
  DC_CK_OK(dc_buffer_create_view(v1, 0, 16, &v2));
  dc_context_release(c);
  dc_buffer_release(v1);
  dc_buffer_release(b);
  ck_assert_uint_gt(atomic_load(&counting.live_blocks), 0);
  dc_buffer_release(v2);  // last object: the context goes too
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_buffer_stale_handle_detected_after_many_releases) {
  dc_buffer_t* stale = make(DC_DTYPE_U8, 1, "stale");
  dc_buffer_release(stale);
  for (int i = 0; i < 100; ++i) dc_buffer_release(make(DC_DTYPE_U8, 1, "x"));
  unsigned char x = 0;
  DC_CK_FAIL(dc_buffer_write(stale, 0, &x, 1), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL or a released buffer");
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_buffer_single_element_of_every_dtype) {
  for (size_t d = 0; d < DTYPE_COUNT; ++d) {
    dc_buffer_t* b = make(kDtypes[d], 1, "one");
    unsigned char in[8], out[8] = {0};
    pattern_bytes(in, sizeof(in), (unsigned)d);
    DC_CK_OK(dc_buffer_fill(b, 0, 1, in));
    DC_CK_OK(dc_buffer_read(b, 0, out, 1));
    ck_assert_mem_eq(in, out, dc_dtype_size(kDtypes[d]));
    dc_buffer_t* v = NULL;
    DC_CK_OK(dc_buffer_create_view(b, 0, 1, &v));
    dc_buffer_release(b);
    dc_buffer_release(v);
  }
}
END_TEST

START_TEST(test_buffer_last_element_and_tail_views) {
  dc_buffer_t* b = make_iota(1000, "tail");
  dc_buffer_t* v = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 999, 1, &v));
  uint32_t x = 0;
  DC_CK_OK(dc_buffer_read(v, 0, &x, 1));
  ck_assert_uint_eq(x, 999);
  DC_CK_OK(dc_buffer_read(b, 999, &x, 1));
  ck_assert_uint_eq(x, 999);
  dc_buffer_t* all = NULL;
  DC_CK_OK(dc_buffer_create_view(b, 0, 1000, &all));  // the whole buffer
  ck_assert_uint_eq(dc_buffer_length(all), 1000);
  dc_buffer_release(all);
  dc_buffer_release(v);
  dc_buffer_release(b);
}
END_TEST

START_TEST(test_buffer_large_round_trip) {
  size_t n = (size_t)16 << 20;  // 64 MiB of f32
  dc_buffer_t* b = make(DC_DTYPE_F32, n, "large");
  float* data = malloc(n * sizeof(float));
  ck_assert_ptr_nonnull(data);
  for (size_t i = 0; i < n; ++i) data[i] = (float)(i % 1000003);
  DC_CK_OK(dc_buffer_write(b, 0, data, n));
  memset(data, 0, n * sizeof(float));
  DC_CK_OK(dc_buffer_read(b, 0, data, n));
  for (size_t i = 0; i < n; i += 997) {
    ck_assert(data[i] == (float)(i % 1000003));
  }
  ck_assert(data[n - 1] == (float)((n - 1) % 1000003));
  free(data);
  dc_buffer_release(b);
}
END_TEST

static Suite* buffer_suite(void) {
  dc_test_fake_register();
  Suite* s = suite_create("buffer");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_add_test(core, test_buffer_dtype_sizes_and_names);
  tcase_add_test(core, test_buffer_storage_mode_names);
  tcase_add_test(core, test_buffer_create_every_dtype_and_mode);
  tcase_add_test(core, test_buffer_memory_is_64_byte_aligned);
  tcase_add_test(core, test_buffer_partial_write_and_read);
  tcase_add_test(core, test_buffer_fill_patterns_of_every_size);
  tcase_add_test(core, test_buffer_fill_whole_large_buffer);
  tcase_add_test(core, test_buffer_copy_within_device);
  tcase_add_test(core, test_buffer_copy_overlapping_ranges);
  tcase_add_test(core, test_buffer_copy_between_overlapping_views);
  tcase_add_test(core, test_buffer_view_shares_memory);
  tcase_add_test(core, test_buffer_view_of_view_is_view_of_original);
  tcase_add_test(core, test_buffer_labels);
  tcase_add_test(core, test_buffer_retain_release);
  tcase_add_test(core, test_buffer_copy_across_contexts_goes_host_to_host);
  tcase_add_test(core, test_buffer_copy_between_hidden_memories_uses_staging);
  tcase_add_test(core, test_buffer_copy_across_devices);
  tcase_add_test(core, test_buffer_host_pointer_needs_host_visible_memory);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_buffer_create_null_arguments);
  tcase_add_test(errors, test_buffer_create_bad_params);
  tcase_add_test(errors, test_buffer_create_too_large_for_the_device);
  tcase_add_test(errors, test_buffer_create_out_of_host_memory);
  tcase_add_test(errors, test_buffer_copy_staging_out_of_memory);
  tcase_add_test(errors, test_buffer_view_bad_ranges);
  tcase_add_test(errors, test_buffer_transfer_bad_ranges);
  tcase_add_test(errors, test_buffer_transfer_null_arguments);
  tcase_add_test(errors, test_buffer_copy_bad_arguments);
  tcase_add_test(errors, test_buffer_use_after_release);
  tcase_add_test(errors, test_buffer_use_after_release_of_a_view);
  tcase_add_test(errors, test_buffer_not_a_buffer);
  tcase_add_test(errors, test_buffer_null_accessors);
  tcase_add_test(errors, test_buffer_unknown_type_names);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, setup, teardown);
  tcase_add_test(lifecycle, test_buffer_view_keeps_parent_alive);
  tcase_add_test(lifecycle, test_buffer_view_of_view_outlives_both_parents);
  tcase_add_test(lifecycle, test_buffer_release_order_does_not_matter);
  tcase_add_test(lifecycle,
                 test_buffer_stale_handle_detected_after_many_releases);
  suite_add_tcase(s, lifecycle);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, setup, teardown);
  tcase_set_timeout(limits, 30);
  tcase_add_test(limits, test_buffer_single_element_of_every_dtype);
  tcase_add_test(limits, test_buffer_last_element_and_tail_views);
  tcase_add_test(limits, test_buffer_large_round_trip);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(buffer_suite)

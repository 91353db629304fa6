// check_host_pins.c: host memory pinned for a backend's DMA (the pinning
// table of dc/backend.h; core/src/memory/host_pins.c).
//
// A backend registered from here ("dma") keeps its private memory on the
// host (the test fake's, check_util.h) and has a pinning table that
// records what it pins; its pinned transfers refuse memory it did not
// pin. The tests copy between CPU-device buffers and it.
// SPDX-License-Identifier: MIT
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "dc/backend.h"
#include "dc/dc.h"

#define MIB ((size_t)1 << 20)
#define MAX_PINS 16

static struct {
  struct {
    void* host;
    size_t size;
  } pinned[MAX_PINS];
  int pin_calls, unpin_calls, pinned_transfers, plain_transfers;
  bool refuse_pins;
} dma;

static bool is_pinned(const void* host, size_t size) {
  for (int i = 0; i < MAX_PINS; ++i) {
    const char* base = dma.pinned[i].host;
    if (base != NULL && (const char*)host >= base &&
        (const char*)host + size <= base + dma.pinned[i].size) {
      return true;
    }
  }
  return false;
}

static dc_status_t dma_pin(dc_device_t* device, void* host, size_t size) {
  (void)device;
  dma.pin_calls++;
  if (dma.refuse_pins) {
    return dc_set_error(DC_ERR_OUT_OF_MEMORY, "dma: no more locked memory");
  }
  for (int i = 0; i < MAX_PINS; ++i) {
    if (dma.pinned[i].host == NULL) {
      dma.pinned[i].host = host;
      dma.pinned[i].size = size;
      return DC_OK;
    }
  }
  return dc_set_error(DC_ERR_OUT_OF_MEMORY, "dma: table full");
}

static void dma_unpin(dc_device_t* device, void* host, size_t size) {
  (void)device;
  dma.unpin_calls++;
  for (int i = 0; i < MAX_PINS; ++i) {
    if (dma.pinned[i].host == host) {
      ck_assert_uint_eq(dma.pinned[i].size, size);
      dma.pinned[i].host = NULL;
      return;
    }
  }
  ck_abort_msg("unpin of memory that is not pinned");
}

static dc_status_t dma_write_pinned(dc_device_t* device, void* memory,
                                    size_t offset, const void* host,
                                    size_t size) {
  if (!is_pinned(host, size)) {
    return dc_set_error(DC_ERR_INTERNAL, "dma: write from unpinned memory");
  }
  dma.pinned_transfers++;
  return dc_test_fake_write(device, memory, offset, host, size);
}

static dc_status_t dma_read_pinned(dc_device_t* device, const void* memory,
                                   size_t offset, void* host, size_t size) {
  if (!is_pinned(host, size)) {
    return dc_set_error(DC_ERR_INTERNAL, "dma: read into unpinned memory");
  }
  dma.pinned_transfers++;
  return dc_test_fake_read(device, memory, offset, host, size);
}

static dc_status_t dma_write(dc_device_t* device, void* memory,
                             size_t offset, const void* src, size_t size) {
  dma.plain_transfers++;
  return dc_test_fake_write(device, memory, offset, src, size);
}

static dc_status_t dma_read(dc_device_t* device, const void* memory,
                            size_t offset, void* dst, size_t size) {
  dma.plain_transfers++;
  return dc_test_fake_read(device, memory, offset, dst, size);
}

static dc_device_memory_ops_t dma_memory;  // the fake's, counting transfers

static const dc_device_pinning_ops_t dma_pinning = {
    .pin = dma_pin,
    .unpin = dma_unpin,
    .write_pinned = dma_write_pinned,
    .read_pinned = dma_read_pinned,
};

static const dc_device_vtable_t dma_vtable = {
    .destroy = dc_test_fake_destroy,
    .memory = &dma_memory,
    .pinning = &dma_pinning,
};

static dc_status_t dma_enumerate(dc_context_t* ctx, void* user_data) {
  (void)user_data;
  dc_device_info_t info = dc_test_fake_info("dma:0");
  dc_test_fake_device_t* fake =
      dc_test_fake_device_make(ctx, &dma_vtable, &info);
  if (fake == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_status_t st = dc_context_add_device(ctx, &fake->base);
  if (st != DC_OK) dc_test_fake_destroy(&fake->base);
  return st;
}

//===-- Fixture ---------------------------------------------------------===//

static dc_context_t* ctx;
static dc_device_t* cpu;
static dc_device_t* gpu;

static void setup(void) {
  memset(&dma, 0, sizeof(dma));
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "cpu,dma";
  DC_CK_OK(dc_context_create(&p, &ctx));
  DC_CK_OK(dc_context_find_device(ctx, "cpu", &cpu));
  DC_CK_OK(dc_context_find_device(ctx, "dma:0", &gpu));
}

static void teardown(void) {
  if (ctx == NULL) return;
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
  dc_context_release(ctx);
  ctx = NULL;
}

// |bytes| bytes on |device|, unnamed.
static dc_buffer_t* make(dc_device_t* device, size_t bytes) {
  return dc_test_buffer_new(device, DC_DTYPE_U8, bytes, NULL);
}

static uint8_t pattern(size_t i, unsigned seed) {
  return (uint8_t)(i * 7u + (i >> 9) + seed);
}

// Fills |b| (a CPU-device buffer) with the pattern of |seed|.
static void fill_host(dc_buffer_t* b, size_t bytes, unsigned seed) {
  uint8_t* host = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, (void**)&host));
  for (size_t i = 0; i < bytes; ++i) host[i] = pattern(i, seed);
}

// Checks |count| bytes of |b| from |at| against the pattern from |from|.
static void expect(dc_buffer_t* b, size_t at, size_t count, size_t from,
                   unsigned seed) {
  uint8_t* got = malloc(count);
  ck_assert_ptr_nonnull(got);
  DC_CK_OK(dc_buffer_read(b, at, got, count));
  for (size_t i = 0; i < count; ++i) {
    if (got[i] != pattern(from + i, seed)) {
      ck_abort_msg("byte %zu is %u, expected %u", at + i, got[i],
                   pattern(from + i, seed));
    }
  }
  free(got);
}

//===-- Tests -----------------------------------------------------------===//

START_TEST(test_a_large_copy_pins_the_block_once_and_moves_it_directly) {
  size_t bytes = 3 * MIB;
  dc_buffer_t* h = make(cpu, bytes);
  dc_buffer_t* d = make(gpu, bytes);
  fill_host(h, bytes, 1);
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  ck_assert_int_eq(dma.pin_calls, 1);
  ck_assert_int_eq(dma.pinned_transfers, 1);
  int plain_before_check = dma.plain_transfers;
  expect(d, 0, bytes, 0, 1);
  // Back into the host buffer, which is pinned already.
  dma.plain_transfers = plain_before_check;
  fill_host(h, bytes, 9);
  DC_CK_OK(dc_buffer_copy(h, 0, d, 0, bytes));
  ck_assert_int_eq(dma.pin_calls, 1);
  ck_assert_int_eq(dma.pinned_transfers, 2);
  ck_assert_int_eq(dma.plain_transfers, plain_before_check);
  expect(h, 0, bytes, 0, 1);
  dc_buffer_release(h);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_small_copies_are_not_pinned) {
  size_t bytes = 64 << 10;
  dc_buffer_t* h = make(cpu, bytes);
  dc_buffer_t* d = make(gpu, bytes);
  fill_host(h, bytes, 2);
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  ck_assert_int_eq(dma.pin_calls, 0);
  ck_assert_int_eq(dma.pinned_transfers, 0);
  ck_assert_int_eq(dma.plain_transfers, 1);
  expect(d, 0, bytes, 0, 2);
  dc_buffer_release(h);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_views_copy_the_right_bytes_through_the_pinned_block) {
  size_t bytes = 4 * MIB;
  dc_buffer_t* h = make(cpu, bytes);
  dc_buffer_t* d = make(gpu, bytes);
  fill_host(h, bytes, 3);
  dc_buffer_t* hv = NULL;
  dc_buffer_t* dv = NULL;
  DC_CK_OK(dc_buffer_create_view(h, 12345, 2 * MIB + 17, &hv));
  DC_CK_OK(dc_buffer_create_view(d, 999, 2 * MIB + 17, &dv));
  DC_CK_OK(dc_buffer_copy(dv, 1, hv, 3, 2 * MIB + 13));
  ck_assert_int_eq(dma.pin_calls, 1);
  ck_assert_int_eq(dma.pinned_transfers, 1);
  expect(d, 1000, 2 * MIB + 13, 12348, 3);
  // And back, into another part of the host block.
  DC_CK_OK(dc_buffer_copy(h, 7, d, 1000, 2 * MIB));
  ck_assert_int_eq(dma.pinned_transfers, 2);
  expect(h, 7, 2 * MIB, 12348, 3);
  dc_buffer_release(hv);
  dc_buffer_release(dv);
  dc_buffer_release(h);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_a_pinned_block_stays_pinned_in_the_pool_until_freed) {
  size_t bytes = 2 * MIB;
  dc_buffer_t* h = make(cpu, bytes);
  dc_buffer_t* d = make(gpu, bytes);
  fill_host(h, bytes, 4);
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  dc_buffer_release(h);
  // The pool keeps the block, pinned: the next buffer of its size reuses
  // it and copies without pinning again.
  ck_assert_int_eq(dma.unpin_calls, 0);
  h = make(cpu, bytes);
  fill_host(h, bytes, 5);
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  ck_assert_int_eq(dma.pin_calls, 1);
  ck_assert_int_eq(dma.pinned_transfers, 2);
  expect(d, 0, bytes, 0, 5);
  dc_buffer_release(h);
  // Freed to the system: unpinned first (dma_unpin checks the range).
  DC_CK_OK(dc_memory_pool_trim(cpu, 0));
  ck_assert_int_eq(dma.unpin_calls, 1);
  // A new block is pinned afresh.
  h = make(cpu, bytes);
  fill_host(h, bytes, 6);
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  ck_assert_int_eq(dma.pin_calls, 2);
  dc_buffer_release(h);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_the_context_unpins_everything_when_it_goes) {
  dc_buffer_t* a = make(cpu, 2 * MIB);
  dc_buffer_t* b = make(cpu, 5 * MIB);
  dc_buffer_t* d = make(gpu, 5 * MIB);
  DC_CK_OK(dc_buffer_copy(d, 0, a, 0, 2 * MIB));
  DC_CK_OK(dc_buffer_copy(b, 0, d, 0, 5 * MIB));
  ck_assert_int_eq(dma.pin_calls, 2);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_buffer_release(d);
  teardown();
  ck_assert_int_eq(dma.unpin_calls, 2);
}
END_TEST

START_TEST(test_a_refused_pin_stages_the_copy_and_is_not_retried) {
  size_t bytes = 2 * MIB;
  dma.refuse_pins = true;
  dc_buffer_t* h = make(cpu, bytes);
  dc_buffer_t* d = make(gpu, bytes);
  fill_host(h, bytes, 7);
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, bytes));
  ck_assert_int_eq(dma.pin_calls, 1);
  ck_assert_int_eq(dma.pinned_transfers, 0);
  ck_assert_int_eq(dma.plain_transfers, 2);
  expect(d, 0, bytes, 0, 7);
  dc_buffer_release(h);
  dc_buffer_release(d);
  teardown();
  ck_assert_int_eq(dma.unpin_calls, 0);
}
END_TEST

START_TEST(test_copies_on_streams_take_the_same_path) {
  size_t bytes = 3 * MIB;
  dc_buffer_t* h = make(cpu, bytes);
  dc_buffer_t* d = make(gpu, bytes);
  fill_host(h, bytes, 8);
  dc_stream_t* s = NULL;
  dc_stream_params_t sp = {.label = "copies"};
  DC_CK_OK(dc_stream_create(cpu, &sp, &s));
  DC_CK_OK(dc_stream_copy(s, d, 0, h, 0, bytes));
  DC_CK_OK(dc_stream_sync(s, UINT64_MAX));
  ck_assert_int_eq(dma.pinned_transfers, 1);
  expect(d, 0, bytes, 0, 8);
  dc_stream_release(s);
  dc_buffer_release(h);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_an_incomplete_pinning_table_is_refused) {
  dc_device_pinning_ops_t partial = dma_pinning;
  partial.read_pinned = NULL;
  dc_device_vtable_t vtable = dma_vtable;
  vtable.pinning = &partial;
  dc_device_info_t info = dc_test_fake_info("dma:9");
  dc_test_fake_device_t* fake = dc_test_fake_device_make(ctx, &vtable, &info);
  ck_assert_ptr_null(fake);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "pinning table"));
}
END_TEST

static Suite* suite(void) {
  dma_memory = dc_test_fake_memory;
  dma_memory.write = dma_write;
  dma_memory.read = dma_read;
  dc_backend_t backend = {"dma", dma_enumerate, NULL};
  if (dc_backend_register(&backend) != DC_OK) abort();
  Suite* s = suite_create("host_pins");
  TCase* tc = tcase_create("pins");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_a_large_copy_pins_the_block_once_and_moves_it_directly);
  tcase_add_test(tc, test_small_copies_are_not_pinned);
  tcase_add_test(tc, test_views_copy_the_right_bytes_through_the_pinned_block);
  tcase_add_test(tc, test_a_pinned_block_stays_pinned_in_the_pool_until_freed);
  tcase_add_test(tc, test_the_context_unpins_everything_when_it_goes);
  tcase_add_test(tc, test_a_refused_pin_stages_the_copy_and_is_not_retried);
  tcase_add_test(tc, test_copies_on_streams_take_the_same_path);
  tcase_add_test(tc, test_an_incomplete_pinning_table_is_refused);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(suite)

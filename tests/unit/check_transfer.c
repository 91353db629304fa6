// check_transfer.c: bytes between host memory and the device under test
// on every path the backends have, in both directions: CPU-device
// blocks (pinned on their first large copy by the CUDA backend, one DMA
// a direction on its copy lanes), plain host memory (staged in pieces
// into pinned halves both ways over the worker pool), and, when
// the device under test is the CPU, a second CPU device. Sizes that are
// no multiple of a piece, a half or the pin threshold, offsets and
// views, copies on several streams at once both ways, a failed copy that
// leaves its destination alone, and one cut off halfway, both whole once
// tried again.
//
// Device-generic (check_util.h): unit.transfer, cuda.transfer and
// opencl.transfer run it on the CPU, a GPU and an OpenCL device.
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "check_util.h"

#define MIB ((size_t)1 << 20)

static dc_context_t* ctx;
static dc_device_t* cpu;
static dc_device_t* far;  // the device under test, or cpu:1 for the CPU

static void setup(void) {
  dc_test_clear_env();
  dc_context_params_t p = dc_test_quiet_params();
  p.cpu_devices = 2;
  ctx = dc_test_context_new(&p);
  cpu = dc_test_cpu(ctx);
  far = dc_test_device(ctx);
  if (far == cpu) DC_CK_OK(dc_context_find_device(ctx, "cpu:1", &far));
}

static void teardown(void) {
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);
  dc_context_release(ctx);
}

// |bytes| bytes on |device|, unnamed.
static dc_buffer_t* make(dc_device_t* device, size_t bytes) {
  return dc_test_buffer_new(device, DC_DTYPE_U8, bytes, NULL);
}

static uint8_t pattern(size_t i, unsigned seed) {
  return (uint8_t)(i * 131u + (i >> 11) + seed * 7u);
}

static void fill(uint8_t* p, size_t bytes, unsigned seed) {
  for (size_t i = 0; i < bytes; ++i) p[i] = pattern(i, seed);
}

static uint8_t* host_of(dc_buffer_t* b) {
  void* p = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, &p));
  return p;
}

// Checks that |got| holds the pattern of |seed| from index |from|.
static void expect(const uint8_t* got, size_t bytes, size_t from,
                   unsigned seed, const char* what) {
  for (size_t i = 0; i < bytes; ++i) {
    if (got[i] != pattern(from + i, seed)) {
      ck_abort_msg("%s: byte %zu of %zu is %u, expected %u", what, i, bytes,
                   got[i], pattern(from + i, seed));
    }
  }
}

START_TEST(test_cpu_buffers_cross_at_every_size_and_offset) {
  // Below, at and above the pin threshold, none a multiple of a piece.
  const size_t sizes[] = {MIB - 1, MIB, 9 * MIB + 7, 100, 3 * MIB + 511};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
    size_t n = sizes[s];
    dc_buffer_t* h = make(cpu, n + 64);
    dc_buffer_t* d = make(far, n + 64);
    dc_buffer_t* back = make(cpu, n + 64);
    fill(host_of(h), n + 64, (unsigned)s);
    memset(host_of(back), 0xEE, n + 64);
    DC_CK_OK(dc_buffer_copy(d, 5, h, 17, n));
    DC_CK_OK(dc_buffer_copy(back, 3, d, 5, n));
    const uint8_t* out = host_of(back);
    expect(out + 3, n, 17, (unsigned)s, "there and back");
    ck_assert_uint_eq(out[2], 0xEE);  // nothing before the range
    ck_assert_uint_eq(out[3 + n], 0xEE);  // nor after it
    dc_buffer_release(h);
    dc_buffer_release(d);
    dc_buffer_release(back);
  }
}
END_TEST

START_TEST(test_views_of_a_host_block) {
  size_t n = 6 * MIB + 3;
  dc_buffer_t* h = make(cpu, n);
  dc_buffer_t* d = make(far, n);
  fill(host_of(h), n, 9);
  dc_buffer_t *hv = NULL, *dv = NULL;
  DC_CK_OK(dc_buffer_create_view(h, MIB + 1, 2 * MIB + 2, &hv));
  DC_CK_OK(dc_buffer_create_view(d, 333, 2 * MIB + 2, &dv));
  DC_CK_OK(dc_buffer_copy(dv, 0, hv, 0, 2 * MIB + 2));
  uint8_t* out = malloc(2 * MIB + 2);
  ck_assert_ptr_nonnull(out);
  DC_CK_OK(dc_buffer_read(d, 333, out, 2 * MIB + 2));
  expect(out, 2 * MIB + 2, MIB + 1, 9, "through views");
  free(out);
  dc_buffer_release(hv);
  dc_buffer_release(dv);
  dc_buffer_release(h);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_plain_host_memory_crosses_the_staging_chunks) {
  // Over two 16 MiB staging halves and into a third chunk, no multiple
  // of a 512 KiB piece, both ways; then a small read (a half of its own
  // size on CUDA).
  size_t n = 32 * MIB + 512 * 1024 + 13;
  uint8_t* in = malloc(n);
  uint8_t* out = malloc(n);
  ck_assert_ptr_nonnull(in);
  ck_assert_ptr_nonnull(out);
  fill(in, n, 4);
  dc_buffer_t* d = make(far, n + 10);
  DC_CK_OK(dc_buffer_write(d, 10, in, n));
  memset(out, 0, n);
  DC_CK_OK(dc_buffer_read(d, 10, out, n));
  expect(out, n, 0, 4, "read over three chunks");
  memset(out, 0, n);
  DC_CK_OK(dc_buffer_read(d, 10 + 5 * MIB, out, 300 * 1024 + 1));
  expect(out, 300 * 1024 + 1, 5 * MIB, 4, "small read");
  free(in);
  free(out);
  dc_buffer_release(d);
}
END_TEST

START_TEST(test_copies_on_several_streams_both_ways_at_once) {
  enum { STREAMS = 4 };
  size_t n = 3 * MIB + 5;
  dc_stream_t* s[STREAMS];
  dc_buffer_t *up[STREAMS], *dev[STREAMS], *down[STREAMS], *pre[STREAMS];
  for (int i = 0; i < STREAMS; ++i) {
    DC_CK_OK(dc_stream_create(far, NULL, &s[i]));
    up[i] = make(cpu, n);
    dev[i] = make(far, n);
    down[i] = make(cpu, n);
    pre[i] = make(far, n);
    fill(host_of(up[i]), n, 20u + (unsigned)i);
    fill(host_of(down[i]), n, 40u + (unsigned)i);
    DC_CK_OK(dc_buffer_copy(pre[i], 0, down[i], 0, n));
  }
  // Each stream uploads one buffer while another of its downloads runs.
  for (int i = 0; i < STREAMS; ++i) {
    DC_CK_OK(dc_stream_copy(s[i], dev[i], 0, up[i], 0, n));
    DC_CK_OK(dc_stream_copy(s[(i + 1) % STREAMS], down[i], 0, pre[i], 0, n));
  }
  for (int i = 0; i < STREAMS; ++i) {
    DC_CK_OK(dc_stream_sync(s[i], DC_TIMEOUT_INFINITE));
  }
  for (int i = 0; i < STREAMS; ++i) {
    expect(host_of(down[i]), n, 0, 40u + (unsigned)i, "downloaded");
    DC_CK_OK(dc_buffer_copy(down[i], 0, dev[i], 0, n));
    expect(host_of(down[i]), n, 0, 20u + (unsigned)i, "uploaded");
    dc_stream_release(s[i]);
    dc_buffer_release(up[i]);
    dc_buffer_release(dev[i]);
    dc_buffer_release(down[i]);
    dc_buffer_release(pre[i]);
  }
}
END_TEST

// Fails one upload and one download, both cut off |halfway| or failing
// before any byte moves: each destination holds new data in front of the
// cut (none without halfway) and its old data behind it, and whole data
// once the copies are tried again.
static void fail_copies_then_retry(bool halfway) {
  size_t n = 4 * MIB + 1;
  size_t cut = halfway ? n / 2 : 0;
  dc_buffer_t* h = make(cpu, n);
  dc_buffer_t* d = make(far, n);
  dc_buffer_t* back = make(cpu, n);
  fill(host_of(back), n, 1);
  DC_CK_OK(dc_buffer_copy(d, 0, back, 0, n));  // d holds seed 1
  fill(host_of(h), n, 2);
  fill(host_of(back), n, 3);
  dc_fault_rule_t rule = {.sites = DC_FAULT_COPY, .halfway = halfway,
                          .limit = 2};
  uint32_t id = 0;
  DC_CK_OK(dc_fault_add(ctx, &rule, &id));
  const char* says = halfway ? "halfway: the first half moved"
                             : "injected fault";
  DC_CK_FAIL(dc_buffer_copy(d, 0, h, 0, n), DC_ERR_UNAVAILABLE, says);
  DC_CK_FAIL(dc_buffer_copy(back, 0, d, 0, n), DC_ERR_UNAVAILABLE, says);
  // The download moved d's front (the upload's front: seed 2) to back.
  expect(host_of(back), cut, 0, 2, "cut-off download, front");
  expect(host_of(back) + cut, n - cut, cut, 3, "cut-off download, rest");
  DC_CK_OK(dc_buffer_copy(back, 0, d, 0, n));  // the limit is spent
  expect(host_of(back), cut, 0, 2, "after a cut-off upload, front");
  expect(host_of(back) + cut, n - cut, cut, 1, "after a cut-off upload, rest");
  DC_CK_OK(dc_buffer_copy(d, 0, h, 0, n));  // tried again
  DC_CK_OK(dc_buffer_copy(back, 0, d, 0, n));
  expect(host_of(back), n, 0, 2, "after the retry");
  DC_CK_OK(dc_fault_remove(ctx, id));
  dc_buffer_release(h);
  dc_buffer_release(d);
  dc_buffer_release(back);
}

START_TEST(test_a_failed_copy_moves_nothing_and_is_retried) {
  fail_copies_then_retry(false);
}
END_TEST

START_TEST(test_a_copy_cut_off_halfway_is_whole_once_retried) {
  fail_copies_then_retry(true);
}
END_TEST

static Suite* suite(void) {
  Suite* s = suite_create("transfer");
  TCase* tc = tcase_create("transfers");
  tcase_set_timeout(tc, 240);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_cpu_buffers_cross_at_every_size_and_offset);
  tcase_add_test(tc, test_views_of_a_host_block);
  tcase_add_test(tc, test_plain_host_memory_crosses_the_staging_chunks);
  tcase_add_test(tc, test_copies_on_several_streams_both_ways_at_once);
  tcase_add_test(tc, test_a_failed_copy_moves_nothing_and_is_retried);
  tcase_add_test(tc, test_a_copy_cut_off_halfway_is_whole_once_retried);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_DEVICE_MAIN(suite)

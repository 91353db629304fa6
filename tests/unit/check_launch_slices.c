// check_launch_slices.c: the slices a GPU runs a checked dispatch in
// (dc/backend.h, dc_launch_slicer_t): boxes of whole groups that cover every group of the
// grid once, in every dimension; the first holds about
// DC_LAUNCH_SLICE_FIRST_ITEMS work-items, and each quick slice makes the next
// larger (at most 16 times) until a slice is as long as the target; the
// reasons to stop between two slices; and how a watching host pauses.
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <time.h>

#include "check_util.h"
#include "dc/backend.h"

static dc_launch_t launch_of(const size_t groups[3], const size_t local[3]) {
  dc_launch_t l = {.dims = 3};
  for (int d = 0; d < 3; ++d) {
    l.groups[d] = groups[d];
    l.local[d] = local[d];
    l.global[d] = groups[d] * local[d];
  }
  return l;
}

static size_t items_of(const dc_launch_slice_t* s, const size_t local[3]) {
  return s->groups[0] * s->groups[1] * s->groups[2] * local[0] * local[1] *
         local[2];
}

// Walks the slices of |groups|, telling the slicer each took |took_ns|,
// and checks that they cover every group once; returns the slice count
// and the first and largest slices' work-items.
static size_t walk(const size_t groups[3], const size_t local[3],
                   uint64_t took_ns, size_t* first_items,
                   size_t* largest_items) {
  dc_launch_t l = launch_of(groups, local);
  size_t total = groups[0] * groups[1] * groups[2];
  unsigned char* seen = calloc(total, 1);
  ck_assert_ptr_nonnull(seen);
  dc_launch_slicer_t s;
  dc_launch_slicer_init(&s, &l);
  dc_launch_slice_t slice;
  size_t count = 0;
  *largest_items = 0;
  while (dc_launch_slicer_next(&s, &slice)) {
    size_t items = items_of(&slice, local);
    if (count == 0) *first_items = items;
    if (items > *largest_items) *largest_items = items;
    for (int d = 0; d < 3; ++d) {
      ck_assert_uint_ge(slice.groups[d], 1);
      ck_assert_uint_le(slice.first[d] + slice.groups[d], groups[d]);
    }
    for (size_t z = 0; z < slice.groups[2]; ++z) {
      for (size_t y = 0; y < slice.groups[1]; ++y) {
        for (size_t x = 0; x < slice.groups[0]; ++x) {
          size_t at = ((slice.first[2] + z) * groups[1] + slice.first[1] + y) *
                          groups[0] +
                      slice.first[0] + x;
          if (seen[at] < 255) seen[at]++;
        }
      }
    }
    dc_launch_slicer_took(&s, took_ns);
    ++count;
  }
  // Counted first, asserted once: a Check assertion per group is slow.
  size_t wrong = total;
  for (size_t i = 0; i < total && wrong == total; ++i) {
    if (seen[i] != 1) wrong = i;
  }
  ck_assert_msg(wrong == total, "group %zu is in %u slices", wrong,
                wrong < total ? seen[wrong] : 0);
  free(seen);
  return count;
}

// Grids cut along each dimension, odd sizes among them.
static const size_t kGrids[][6] = {
    // groups            local
    {1, 1, 1, 1, 1, 1},
    {100000, 1, 1, 64, 1, 1},
    {4097, 33, 1, 16, 16, 1},
    {7, 5, 3, 1, 1, 1},
    {3, 1000, 1000, 8, 4, 2},
    {1000003, 3, 2, 1, 1, 1},
};

START_TEST(test_slices_cover_every_group_once) {
  const size_t* g = kGrids[_i];
  size_t first = 0, largest = 0;
  // Slow slices keep their size; quick ones grow.
  size_t slow = walk(g, g + 3, DC_LAUNCH_SLICE_TARGET_NS, &first, &largest);
  ck_assert_uint_eq(first, largest);
  size_t quick = walk(g, g + 3, 0, &first, &largest);
  ck_assert_uint_le(quick, slow);
}
END_TEST

START_TEST(test_first_slice_is_a_gpu_s_worth_and_quick_ones_grow) {
  size_t groups[3] = {(size_t)1 << 24, 1, 1}, local[3] = {256, 1, 1};
  dc_launch_t l = launch_of(groups, local);
  dc_launch_slicer_t s;
  dc_launch_slicer_init(&s, &l);
  dc_launch_slice_t slice;
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(items_of(&slice, local), DC_LAUNCH_SLICE_FIRST_ITEMS);
  dc_launch_slicer_took(&s, DC_LAUNCH_SLICE_TARGET_NS / 4);  // quick: the next doubles
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(items_of(&slice, local), 2 * DC_LAUNCH_SLICE_FIRST_ITEMS);
  ck_assert_uint_eq(slice.first[0], DC_LAUNCH_SLICE_FIRST_ITEMS / 256);
  dc_launch_slicer_took(&s, DC_LAUNCH_SLICE_TARGET_NS);  // long enough: it stays
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(items_of(&slice, local), 2 * DC_LAUNCH_SLICE_FIRST_ITEMS);
  dc_launch_slicer_took(&s, 0);  // far too quick: at most 16 times larger
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(items_of(&slice, local), 32 * DC_LAUNCH_SLICE_FIRST_ITEMS);
  // A group larger than the first slice is a slice of one group.
  size_t one[3] = {10, 1, 1}, big[3] = {DC_LAUNCH_SLICE_FIRST_ITEMS * 2, 1, 1};
  l = launch_of(one, big);
  dc_launch_slicer_init(&s, &l);
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(slice.groups[0], 1);
}
END_TEST

// Vast grids: no size overflows. The slices of a first row of 2^63 + 1
// groups follow one another, growing, to its end, and then whole rows
// do; a grid of 4 x 2^62 groups starts with 4 x 2^16.
START_TEST(test_vast_grids_slice_without_overflow) {
  size_t huge = ((size_t)1 << 63) + 1;
  size_t groups[3] = {huge, 1000, 1}, local[3] = {1, 1, 1};
  dc_launch_t l = launch_of(groups, local);
  dc_launch_slicer_t s;
  dc_launch_slicer_init(&s, &l);
  dc_launch_slice_t slice;
  size_t next = 0, last = 0;
  int count = 0;
  while (next < huge) {
    ck_assert_int_lt(count++, 100);
    ck_assert(dc_launch_slicer_next(&s, &slice));
    ck_assert_uint_eq(slice.first[0], next);
    ck_assert_uint_eq(slice.first[1], 0);
    ck_assert_uint_ge(slice.groups[0], 1);
    ck_assert_uint_le(slice.groups[0], huge - next);
    // Never smaller, but for the rest of the row.
    if (slice.groups[0] < huge - next) {
      ck_assert_uint_ge(slice.groups[0], last);
    }
    last = slice.groups[0];
    next += slice.groups[0];
    dc_launch_slicer_took(&s, 0);
  }
  ck_assert(dc_launch_slicer_next(&s, &slice));  // whole rows now
  ck_assert_uint_eq(slice.first[0], 0);
  ck_assert_uint_eq(slice.first[1], 1);
  ck_assert_uint_eq(slice.groups[0], huge);
  size_t rows = slice.groups[1];
  ck_assert_uint_gt(rows, 1);
  dc_launch_slicer_took(&s, 0);
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(slice.first[1], 1 + rows);
  ck_assert_uint_gt(slice.groups[1], rows);

  size_t tall[3] = {4, (size_t)1 << 62, 1};
  l = launch_of(tall, local);
  dc_launch_slicer_init(&s, &l);
  ck_assert(dc_launch_slicer_next(&s, &slice));
  ck_assert_uint_eq(slice.groups[0], 4);
  ck_assert_uint_eq(slice.groups[1], DC_LAUNCH_SLICE_FIRST_ITEMS / 4);
}
END_TEST

START_TEST(test_an_empty_grid_has_no_slice) {
  size_t groups[3] = {0, 4, 4}, local[3] = {1, 1, 1};
  dc_launch_t l = launch_of(groups, local);
  dc_launch_slicer_t s;
  dc_launch_slicer_init(&s, &l);
  dc_launch_slice_t slice;
  ck_assert(!dc_launch_slicer_next(&s, &slice));
}
END_TEST

START_TEST(test_stop_reasons) {
  unsigned interrupts = 3;
  dc_launch_t l = {.dims = 1, .interrupts = &interrupts,
                   .interrupts_at_start = 3};
  dc_launch_slicer_t s;
  dc_launch_slicer_init(&s, &l);
  ck_assert_int_eq(dc_launch_stop_reason(&s), -1);  // no limit
  l.time_limit_ns = UINT64_MAX / 2;  // not within this test
  ck_assert_int_eq(dc_launch_stop_reason(&s), -1);
  s.start_ns = 0;  // as if begun when the clock started: long past
  l.time_limit_ns = 1;
  ck_assert_int_eq(dc_launch_stop_reason(&s), DC_KERNEL_FAULT_WATCHDOG);
  interrupts = 4;  // an interrupt wins over the limit
  ck_assert_int_eq(dc_launch_stop_reason(&s), DC_KERNEL_FAULT_STOPPED);
  l.interrupts = NULL;
  l.time_limit_ns = 0;
  ck_assert_int_eq(dc_launch_stop_reason(&s), -1);
}
END_TEST

START_TEST(test_null_arguments_make_a_walk_without_slices) {
  dc_launch_slicer_t s;
  dc_launch_slice_t slice;
  dc_launch_slicer_init(NULL, NULL);  // nothing happens
  dc_launch_slicer_init(&s, NULL);
  ck_assert(!dc_launch_slicer_next(&s, &slice));
  ck_assert(!dc_launch_slicer_next(NULL, &slice));
  size_t groups[3] = {4, 1, 1}, local[3] = {1, 1, 1};
  dc_launch_t l = launch_of(groups, local);
  dc_launch_slicer_init(&s, &l);
  ck_assert(!dc_launch_slicer_next(&s, NULL));
  dc_launch_slicer_took(NULL, 0);
  ck_assert_int_eq(dc_launch_stop_reason(NULL), -1);
}
END_TEST

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// A sleep lasts at least its time whatever the machine does; how soon a
// spin returns is not asserted (the machine may be busy).
START_TEST(test_a_watch_sleeps_once_long_or_on_shared_cores) {
  uint64_t t0 = monotonic_ns();
  dc_launch_watch_pause(t0, true);  // pocl's kind of device: a sleep
  ck_assert_uint_ge(monotonic_ns() - t0, DC_LAUNCH_WATCH_SLEEP_NS);
  t0 = monotonic_ns();
  dc_launch_watch_pause(0, false);  // watched since the clock started
  ck_assert_uint_ge(monotonic_ns() - t0, DC_LAUNCH_WATCH_SLEEP_NS);
  dc_launch_watch_pause(monotonic_ns(), false);  // just begun: a spin
  dc_launch_watch_pause(UINT64_MAX, false);  // a start ahead of the clock
}
END_TEST

static Suite* launch_slices_suite(void) {
  Suite* s = suite_create("launch_slices");
  TCase* tc = tcase_create("slices");
  tcase_add_loop_test(tc, test_slices_cover_every_group_once, 0,
                      sizeof(kGrids) / sizeof(kGrids[0]));
  tcase_add_test(tc, test_first_slice_is_a_gpu_s_worth_and_quick_ones_grow);
  tcase_add_test(tc, test_an_empty_grid_has_no_slice);
  tcase_add_test(tc, test_vast_grids_slice_without_overflow);
  tcase_add_test(tc, test_stop_reasons);
  tcase_add_test(tc, test_null_arguments_make_a_walk_without_slices);
  tcase_add_test(tc, test_a_watch_sleeps_once_long_or_on_shared_cores);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(launch_slices_suite)

// check_kernel_ranges.c: checked mode's index ranges (cgen_ranges.c), on
// the device under test (check_util.h).
//
// A checked kernel whose indexes are simple functions of the work-item and
// of loop counters may run a chunk of groups without per-access checks,
// after checking the whole range of each index once. Whichever way a
// group runs, the results and the faults must be those of fully checked
// code: a fault at the exact access that leaves the buffer, everything
// before it written, nothing outside touched. The kernels here sit on the
// edges of that analysis: a grid one group too large, loop counters with
// steps and <=, unsigned wrap-around, products that overflow, division,
// remainder, masks and shifts of negative values, 2-D groups, private
// arrays; and loops that look counted but are not, which must still stop
// at the time limit.
// SPDX-License-Identifier: MIT
#include "kernel_fixture.h"

#ifndef COUNT_OF
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#endif

// Builds |source| checked, dispatches k(o, a, n) over |global| work-items
// in groups of |local| (2-D when global[1] is set); o has |o_len|
// elements (a view, with sentinels on both sides), a holds 0, 1, 2, ...
// (|a_len| elements). Returns the dispatch's status; o's contents go to
// |out| (o_len elements).
typedef struct run_t {
  const char* source;
  size_t global[2];
  size_t local[2];
  size_t o_len;
  size_t a_len;
  int32_t n;
} run_t;

static dc_status_t run_checked(const run_t* r, int32_t* out) {
  dc_program_t* p = build_on(dut, "ranges.cl", r->source, "-dc-checked");
  dc_buffer_t* root =
      dc_test_buffer_new(dut, DC_DTYPE_I32, r->o_len + 16, "root");
  fill_bytes(root, 0x5A);
  dc_buffer_t* o = NULL;
  DC_CK_OK(dc_buffer_create_view(root, 8, r->o_len, &o));
  int32_t* a_init = malloc(r->a_len * sizeof(int32_t));
  ck_assert_ptr_nonnull(a_init);
  for (size_t i = 0; i < r->a_len; ++i) a_init[i] = (int32_t)i;
  dc_buffer_t* a = buffer_on(dut, DC_DTYPE_I32, r->a_len, a_init);
  free(a_init);
  dc_arg_t args[3] = {dc_arg_buffer(o), dc_arg_buffer(a), dc_arg_i32(r->n)};
  dc_dispatch_t grid = {.dims = r->global[1] ? 2 : 1,
                        .global = {r->global[0], r->global[1]},
                        .local = {r->local[0], r->local[1]}};
  dc_status_t st = dc_kernel_dispatch(kernel_of(p, "k"), &grid, args, 3);
  const uint32_t* all = contents(root);
  for (size_t i = 0; i < 8; ++i) {
    ck_assert_uint_eq(all[i], 0x5A5A5A5Au);
    ck_assert_uint_eq(all[8 + r->o_len + i], 0x5A5A5A5Au);
  }
  memcpy(out, all + 8, r->o_len * sizeof(int32_t));
  dc_buffer_release(a);
  dc_buffer_release(o);
  dc_buffer_release(root);
  dc_program_release(p);
  return st;
}

#define KERNEL_OPEN \
  "__kernel void k(__global int* o, __global const int* a, int n) {\n"

static const int32_t kUnset = 0x5A5A5A5A;

// A grid one group larger than its buffer: the first three groups run,
// the last faults at its third work-item, after writing its first two.
START_TEST(test_ranges_last_group_faults_where_it_leaves) {
  run_t r = {.source = KERNEL_OPEN "  o[get_global_id(0)] = 1;\n}\n",
             .global = {16}, .local = {4}, .o_len = 14, .a_len = 1};
  int32_t o[14];
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE,
             "index 14 of argument 0 'o' is outside its 14 element(s)");
  for (int i = 0; i < 14; ++i) ck_assert_int_eq(o[i], 1);
  r.o_len = 16;
  int32_t whole[16];
  DC_CK_OK(run_checked(&r, whole));
  for (int i = 0; i < 16; ++i) ck_assert_int_eq(whole[i], 1);
}
END_TEST

// Loop counters: a step of 3 up to n stays inside 8 elements; with <= and
// n = 9, the counter reaches 9.
START_TEST(test_ranges_loop_counters) {
  run_t r = {.source = KERNEL_OPEN
             "  for (int i = 0; i < n; i += 3) o[i] = a[i] + 100;\n}\n",
             .global = {1}, .local = {1}, .o_len = 8, .a_len = 16, .n = 8};
  int32_t o[8];
  DC_CK_OK(run_checked(&r, o));
  for (int i = 0; i < 8; ++i) {
    ck_assert_int_eq(o[i], i % 3 == 0 ? i + 100 : kUnset);
  }
  r.source = KERNEL_OPEN
      "  for (int i = 0; i <= n; i += 3) o[i] = a[i] + 100;\n}\n";
  r.n = 9;
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE,
             "index 9 of argument 0 'o' is outside its 8 element(s)");
  ck_assert_int_eq(o[6], 106);
  // A counter that a nested loop indexes with, its bound another counter.
  r.source = KERNEL_OPEN
      "  for (int i = 0; i < 4; ++i)\n"
      "    for (int j = i; j < n; ++j) o[i * 2 + j - i] = j;\n}\n";
  r.n = 8;
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE,
             "index 8 of argument 0 'o' is outside its 8 element(s)");
}
END_TEST

// Unsigned wrap-around: gid - 1 is 4294967295 for work-item 0; a product
// that wraps back inside the buffer is as fine checked as unchecked.
START_TEST(test_ranges_wrap_around) {
  run_t r = {.source = KERNEL_OPEN
             "  o[(uint)get_global_id(0) - 1u] = 1;\n}\n",
             .global = {4}, .local = {2}, .o_len = 4, .a_len = 1};
  int32_t o[9];
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE,
             "index 4294967295 of argument 0 'o' is outside its 4 "
             "element(s)");
  r.source = KERNEL_OPEN
      "  uint g = (uint)get_global_id(0);\n"
      "  if (g % 2u == 0u) o[(g * 0x80000000u) >> 28] = 7;\n"
      "  else o[((g * 0x80000000u) >> 28) - 4u] = 9;\n}\n";
  r.o_len = 9;
  DC_CK_OK(run_checked(&r, o));
  int32_t want[9] = {7, kUnset, kUnset, kUnset, 9,
                     kUnset, kUnset, kUnset, kUnset};
  for (int i = 0; i < 9; ++i) ck_assert_int_eq(o[i], want[i]);
}
END_TEST

// Division, remainder, masks, shifts and negation of negative values, in
// int; each work-item sums what it reads at five computed indexes.
START_TEST(test_ranges_arithmetic_of_negative_values) {
  run_t r = {.source = KERNEL_OPEN
             "  int g = (int)get_global_id(0) - 8;\n"
             "  o[get_global_id(0)] = a[g % 3 + 2] + a[g / 4 + 2]\n"
             "      + a[g & 3] + a[(g >> 2) + 2] + a[-g / 2 + n];\n}\n",
             .global = {16}, .local = {4}, .o_len = 16, .a_len = 9, .n = 4};
  int32_t o[16];
  DC_CK_OK(run_checked(&r, o));
  for (int i = 0; i < 16; ++i) {
    int g = i - 8;
    int want = (g % 3 + 2) + (g / 4 + 2) + (g & 3) + ((g >> 2) + 2) +
               (-g / 2 + 4);
    ck_assert_int_eq(o[i], want);
  }
  // -g / 2 + n reaches 4 + 5 = 9 at g = -8 (work-item 0, the first group).
  r.n = 5;
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE,
             "index 9 of argument 1 'a' is outside its 9 element(s)");
}
END_TEST

// 2-D groups: row-major indexes over an 8 x 6 grid in 2 x 3 groups.
START_TEST(test_ranges_two_dimensions) {
  run_t r = {.source = KERNEL_OPEN
             "  size_t col = get_global_id(0), row = get_global_id(1);\n"
             "  o[row * get_global_size(0) + col] = (int)(row * 10 + col);\n"
             "}\n",
             .global = {8, 6}, .local = {2, 3}, .o_len = 48, .a_len = 1};
  int32_t o[48];
  DC_CK_OK(run_checked(&r, o));
  for (int row = 0; row < 6; ++row) {
    for (int col = 0; col < 8; ++col) {
      ck_assert_int_eq(o[row * 8 + col], row * 10 + col);
    }
  }
  r.o_len = 47;
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE,
             "index 47 of argument 0 'o' is outside its 47 element(s)");
}
END_TEST

// Private and __local arrays: indexes in range run; one past faults.
START_TEST(test_ranges_arrays) {
  run_t r = {.source = KERNEL_OPEN
             "  __local int t[4];\n"
             "  int p[4];\n"
             "  size_t l = get_local_id(0);\n"
             "  for (int i = 0; i < 4; ++i) p[i] = i * 10;\n"
             "  t[l] = (int)l;\n"
             "  barrier(CLK_LOCAL_MEM_FENCE);\n"
             "  o[get_global_id(0)] = p[(l & 1) + n] + t[3 - l];\n}\n",
             .global = {8}, .local = {4}, .o_len = 8, .a_len = 1, .n = 2};
  int32_t o[8];
  DC_CK_OK(run_checked(&r, o));
  for (int i = 0; i < 8; ++i) {
    int l = i % 4;
    ck_assert_int_eq(o[i], ((l & 1) + 2) * 10 + (3 - l));
  }
  r.n = 3;
  DC_CK_FAIL(run_checked(&r, o), DC_ERR_OUT_OF_RANGE, "index 4");
}
END_TEST

// Loops that look counted but are not: each must still poll and stop.
static const char* const kDisguised[] = {
    // The body resets the counter.
    "  for (int i = 0; i < 10; ++i) { if (i == 5) i = 0; o[1]++; }\n",
    // The counter is changed through its address.
    "  for (int i = 0; i < 10; ++i) { int* q = &i; *q = 0; o[1]++; }\n",
    // i <= UINT_MAX always holds: the step wraps.
    "  for (uint i = 0; i <= 4294967295u; ++i) o[1]++;\n",
    // A short loop around an endless one.
    "  for (int i = 0; i < 4; ++i) while (o[0] != 12345) o[1]++;\n",
};

START_TEST(test_ranges_disguised_loops_stop) {
  char source[512];
  snprintf(source, sizeof(source), KERNEL_OPEN "%s}\n", kDisguised[_i]);
  run_t r = {.source = source, .global = {1}, .local = {1}, .o_len = 2,
             .a_len = 1};
  dc_context_set_kernel_time_limit(ctx, 50 * 1000 * 1000);  // 50 ms
  int32_t o[2];
  ck_assert_int_eq(run_checked(&r, o), DC_ERR_DEADLINE_EXCEEDED);
  dc_context_set_kernel_time_limit(ctx, 0);
}
END_TEST

static Suite* kernel_ranges_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_ranges", "dc-check-ranges");
  TCase* ranges = dc_test_kernel_tcase(s, "ranges");
  tcase_add_test(ranges, test_ranges_last_group_faults_where_it_leaves);
  tcase_add_test(ranges, test_ranges_loop_counters);
  tcase_add_test(ranges, test_ranges_wrap_around);
  tcase_add_test(ranges, test_ranges_arithmetic_of_negative_values);
  tcase_add_test(ranges, test_ranges_two_dimensions);
  tcase_add_test(ranges, test_ranges_arrays);
  tcase_add_loop_test(ranges, test_ranges_disguised_loops_stop, 0,
                      COUNT_OF(kDisguised));
  return s;
}

DC_CHECK_DEVICE_MAIN(kernel_ranges_suite)

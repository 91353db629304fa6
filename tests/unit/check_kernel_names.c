// check_kernel_names.c: kernel names of any length the front end accepts
// build, bind and run on the CPU device (issue 16).
//
// The CPU device finds a kernel's entry points in its compiled module by
// symbol, dc_k_<name>_run, dc_k_<name>_scratch_size and
// dc_k_<name>_local_size. They used to be spelled in a 300-byte buffer, so
// a name past about 280 characters looked up a truncated symbol and the
// build failed with INTERNAL "the compiled module lacks the entry points";
// they are now spelled in the build's arena. These tests build such names
// around the old limit and far past it, in each execution mode (loop,
// regions, fibers), checked and not, several in one program, and from the
// disk cache.
// SPDX-License-Identifier: MIT
#include "kernel_fixture.h"

// Lengths around the old 300-byte buffer's end: the longest name that
// fitted every symbol (281: "dc_k_" + name + "_scratch_size" + NUL), the
// first that did not, and those where "_local_size" (283) and "_run"
// (290) ran out in turn.
static const size_t kAroundOldLimit[] = {281, 282, 284, 291, 300};

// A kernel name of |length| characters, distinct from other lengths' and
// from |tag|'s: "k<tag>" then 'n' up to |length| (caller frees).
static char* long_name(size_t length, char tag) {
  char* name = malloc(length + 1);
  ck_assert_ptr_nonnull(name);
  memset(name, 'n', length);
  name[0] = 'k';
  if (length > 1) name[1] = tag;
  name[length] = '\0';
  return name;
}

// The source of a kernel |name| that writes 7 to o[gid] in the shape of
// |mode|: "loop" (no barrier), "regions" (a barrier), "fibers" (a barrier
// in a helper function).
static char* source_for(const char* name, const char* mode) {
  const char* body = NULL;
  const char* prelude = "";
  if (strcmp(mode, "loop") == 0) {
    body = "o[get_global_id(0)] = 7;";
  } else if (strcmp(mode, "regions") == 0) {
    body = "__local int t[4]; t[get_local_id(0)] = 7;"
           " barrier(CLK_LOCAL_MEM_FENCE);"
           " o[get_global_id(0)] = t[3 - get_local_id(0)];";
  } else {
    prelude = "void step(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n";
    body = "__local int t[4]; t[get_local_id(0)] = 7; step();"
           " o[get_global_id(0)] = t[3 - get_local_id(0)];";
  }
  size_t size = strlen(prelude) + strlen(name) + strlen(body) + 128;
  char* source = malloc(size);
  ck_assert_ptr_nonnull(source);
  snprintf(source, size, "%s__kernel void %s(__global int* o) { %s }\n",
           prelude, name, body);
  return source;
}

// Runs kernel |name| of |program| over 4 items in groups of 4 and checks
// that it wrote 7 everywhere and runs in |mode|.
static void expect_runs(dc_program_t* program, const char* name,
                        const char* mode) {
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(program, name, &k));
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert_str_eq(info.name, name);
  ck_assert_str_eq(info.execution, mode);
  dc_buffer_t* out = dc_test_buffer_new(cpu, DC_DTYPE_I32, 4, "out");
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(out, 0, 4, &zero));
  dc_arg_t arg = dc_arg_buffer(out);
  dc_dispatch_t grid = {.dims = 1, .global = {4}, .local = {4}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, &arg, 1));
  int32_t values[4];
  DC_CK_OK(dc_buffer_read(out, 0, values, 4));
  for (int i = 0; i < 4; ++i) ck_assert_int_eq(values[i], 7);
  dc_buffer_release(out);
}

// Builds, binds and runs a kernel of |length| characters in |mode|, with
// |options|.
static void check_length(size_t length, const char* mode,
                         const char* options) {
  char* name = long_name(length, mode[0]);
  char* source = source_for(name, mode);
  dc_program_t* p = NULL;
  dc_status_t st = try_build(cpu, "names.cl", source, options, &p);
  ck_assert_msg(st == DC_OK, "a %zu-character %s kernel: %s (%s)", length,
                mode, dc_status_name(st), dc_last_error());
  expect_runs(p, name, mode);
  dc_program_release(p);
  free(source);
  free(name);
}

//===-- core ------------------------------------------------------------===//

static const char* const kModes[] = {"loop", "regions", "fibers"};

// Around where the old buffer ran out, for every suffix.
START_TEST(test_kernel_names_around_the_old_limit) {
  const char* mode = kModes[_i];
  size_t count = sizeof(kAroundOldLimit) / sizeof(kAroundOldLimit[0]);
  for (size_t i = 0; i < count; ++i) {
    check_length(kAroundOldLimit[i], mode, NULL);
  }
}
END_TEST

START_TEST(test_kernel_names_far_past_the_old_limit) {
  const char* mode = kModes[_i];
  check_length(1000, mode, NULL);
  check_length(8000, mode, NULL);
}
END_TEST

START_TEST(test_kernel_names_checked_mode) {
  check_length(400, kModes[_i], "-dc-checked");
}
END_TEST

// Several long names that differ only at their end, in one program: each
// binds its own entry points.
START_TEST(test_kernel_names_sharing_a_long_prefix) {
  char* base = long_name(600, 's');
  size_t size = 4 * (strlen(base) + 96);
  char* source = malloc(size);
  ck_assert_ptr_nonnull(source);
  size_t used = 0;
  for (int i = 0; i < 4; ++i) {
    used += (size_t)snprintf(source + used, size - used,
                             "__kernel void %s%d(__global int* o) "
                             "{ o[get_global_id(0)] = %d; }\n",
                             base, i, 10 + i);
  }
  dc_program_t* p = build_on(cpu, "prefix.cl", source, NULL);
  ck_assert_uint_eq(dc_program_kernel_count(p), 4);
  for (int i = 0; i < 4; ++i) {
    char* name = malloc(strlen(base) + 8);
    ck_assert_ptr_nonnull(name);
    sprintf(name, "%s%d", base, i);
    dc_kernel_t* k = NULL;
    DC_CK_OK(dc_program_find_kernel(p, name, &k));
    dc_buffer_t* out = dc_test_buffer_new(cpu, DC_DTYPE_I32, 1, "out");
    dc_arg_t arg = dc_arg_buffer(out);
    dc_dispatch_t grid = {.dims = 1, .global = {1}};
    DC_CK_OK(dc_kernel_dispatch(k, &grid, &arg, 1));
    int32_t value = 0;
    DC_CK_OK(dc_buffer_read(out, 0, &value, 1));
    ck_assert_int_eq(value, 10 + i);
    dc_buffer_release(out);
    free(name);
  }
  dc_program_release(p);
  free(source);
  free(base);
}
END_TEST

//===-- lifecycle: the disk cache ---------------------------------------===//

// A long-named kernel stored by one context binds from the disk cache in
// the next.
START_TEST(test_kernel_names_from_the_disk_cache) {
  char* name = long_name(2000, 'd');
  char* source = source_for(name, "regions");
  dc_program_t* p = build_on(cpu, "cached.cl", source, NULL);
  expect_runs(p, name, "regions");
  dc_program_release(p);
  dc_context_t* second = dc_test_kernel_context(NULL);
  dc_device_t* second_cpu = dc_test_cpu(second);
  dc_program_params_t pp = {.source = source, .name = "cached.cl"};
  dc_program_t* again = NULL;
  DC_CK_OK(dc_program_create(second_cpu, &pp, &again));
  dc_program_cache_stats_t stats;
  DC_CK_OK(dc_program_cache_stats(second_cpu, &stats));
  ck_assert_uint_eq(stats.disk_hits, 1);
  ck_assert_uint_eq(stats.compiles, 0);
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(again, name, &k));
  dc_program_release(again);
  dc_context_release(second);
  free(source);
  free(name);
}
END_TEST

static Suite* kernel_names_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_names", "dc-check-names");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_set_timeout(core, 600);
  tcase_add_loop_test(core, test_kernel_names_around_the_old_limit, 0, 3);
  tcase_add_loop_test(core, test_kernel_names_far_past_the_old_limit, 0, 3);
  tcase_add_loop_test(core, test_kernel_names_checked_mode, 0, 3);
  tcase_add_test(core, test_kernel_names_sharing_a_long_prefix);
  TCase* lifecycle = dc_test_kernel_tcase(s, "lifecycle");
  tcase_add_test(lifecycle, test_kernel_names_from_the_disk_cache);
  return s;
}

DC_CHECK_MAIN(kernel_names_suite)

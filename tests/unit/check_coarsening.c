// check_coarsening.c: kernels whose work-items the CUDA device runs
// several to a thread (docs/cuda.md, "Several work-items per thread"),
// end to end on the device under test (check_util.h). Each test launches
// grids large enough for the coarsened entry on any GPU and checks every
// element: ids in 1, 2 and 3 dimensions with global offsets, a return
// that ends one item only, buffers that overlap (which must run the plain
// entry, whose pointers may alias), and which kernels have a coarsened
// entry at all. On other devices the same kernels must give the same
// results, which is what makes the suite device-generic.
// SPDX-License-Identifier: MIT
#include "kernel_fixture.h"

// 8 Mi work-items: four fills of the largest GPU's threads, four items
// per thread, with room to spare (cuda_dispatch.c, runs_coarse).
#define ITEMS ((size_t)1 << 23)

static bool dut_is_cuda(void) {
  return strcmp(dc_device_info(dut)->backend, "cuda") == 0;
}

// The execution a kernel that may run coarsened reports on the device
// under test.
static const char* coarse_mode(void) {
  if (dut_is_cuda()) return "cuda-coarsened";
  return dut_is_cpu() ? "loop" : dc_device_info(dut)->backend;
}

//===-- Ids ---------------------------------------------------------------===//

// Writes, at its place in a w x h x d array (offsets taken off), a value
// made of its three ids.
static const char kIds[] =
    "__kernel void ids(__global uint* out, uint w, uint h,\n"
    "                  uint ox, uint oy, uint oz) {\n"
    "  uint x = get_global_id(0), y = get_global_id(1),\n"
    "       z = get_global_id(2);\n"
    "  size_t at = ((size_t)(z - oz) * h + (y - oy)) * w + (x - ox);\n"
    "  out[at] = x + 3u * y + 5u * z + 1u + get_work_dim() * 0x1000000u;\n"
    "}\n";

static void check_ids(dc_kernel_t* k, const dc_dispatch_t* grid) {
  size_t w = grid->global[0];
  size_t h = grid->dims > 1 ? grid->global[1] : 1;
  size_t d = grid->dims > 2 ? grid->global[2] : 1;
  dc_buffer_t* out = dc_test_buffer_new(dut, DC_DTYPE_U32, w * h * d, "out");
  fill_bytes(out, 0);
  uint32_t o[3] = {(uint32_t)grid->offset[0], (uint32_t)grid->offset[1],
                   (uint32_t)grid->offset[2]};
  dc_arg_t args[] = {dc_arg_buffer(out),   dc_arg_u32((uint32_t)w),
                     dc_arg_u32((uint32_t)h), dc_arg_u32(o[0]),
                     dc_arg_u32(o[1]),     dc_arg_u32(o[2])};
  DC_CK_OK(dc_kernel_dispatch(k, grid, args, 6));
  const uint32_t* r = contents(out);
  for (size_t z = 0; z < d; ++z) {
    for (size_t y = 0; y < h; ++y) {
      for (size_t x = 0; x < w; ++x) {
        uint32_t want = (uint32_t)(x + o[0]) + 3u * (uint32_t)(y + o[1]) +
                        5u * (uint32_t)(z + o[2]) + 1u +
                        grid->dims * 0x1000000u;
        size_t at = (z * h + y) * w + x;
        if (r[at] != want) {
          ck_abort_msg("%u-D grid: item (%zu, %zu, %zu) wrote %u, expected %u",
                       grid->dims, x, y, z, r[at], want);
        }
      }
    }
  }
  dc_buffer_release(out);
}

START_TEST(test_every_item_sees_its_own_ids) {
  dc_program_t* p = build_on(dut, "ids.cl", kIds, NULL);
  dc_kernel_t* k = kernel_of(p, "ids");
  expect_mode(k, coarse_mode());
  dc_dispatch_t one = {.dims = 1, .global = {ITEMS}, .offset = {3}};
  check_ids(k, &one);
  dc_dispatch_t two = {.dims = 2, .global = {4096, ITEMS / 4096},
                       .offset = {5, 7}};
  check_ids(k, &two);
  dc_dispatch_t three = {.dims = 3, .global = {512, 128, ITEMS / 65536},
                         .offset = {1, 2, 3}};
  check_ids(k, &three);
  // A grid whose last dimension's groups do not divide by 4, explicit
  // groups, and one too small to coarsen: the plain entry, same values.
  dc_dispatch_t odd = {.dims = 2, .global = {1 << 16, 129},
                       .local = {256, 1}};
  check_ids(k, &odd);
  dc_dispatch_t small = {.dims = 1, .global = {1000}};
  check_ids(k, &small);
  dc_program_release(p);
}
END_TEST

//===-- Returns -----------------------------------------------------------===//

// A guard that returns early must end its own item only, not the items
// the same thread runs after it.
static const char kGuarded[] =
    "__kernel void guarded(__global const float* in, __global float* out,\n"
    "                      uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i % 3 == 1 || i >= n) return;\n"
    "  out[i] = in[i] * 2.0f + 1.0f;\n"
    "}\n";

START_TEST(test_a_return_ends_one_item) {
  dc_program_t* p = build_on(dut, "guarded.cl", kGuarded, NULL);
  dc_kernel_t* k = kernel_of(p, "guarded");
  expect_mode(k, coarse_mode());
  float* values = malloc(ITEMS * sizeof(float));
  ck_assert_ptr_nonnull(values);
  for (size_t i = 0; i < ITEMS; ++i) values[i] = (float)(i % 1000);
  dc_buffer_t* in = buffer_on(dut, DC_DTYPE_F32, ITEMS, values);
  dc_buffer_t* out = dc_test_buffer_new(dut, DC_DTYPE_F32, ITEMS, "out");
  float poison = -5.0f;
  DC_CK_OK(dc_buffer_fill(out, 0, ITEMS, &poison));
  uint32_t n = (uint32_t)(ITEMS - 12345);
  dc_arg_t args[] = {dc_arg_buffer(in), dc_arg_buffer(out),
                     dc_arg_u32(n)};
  dc_dispatch_t grid = {.dims = 1, .global = {ITEMS}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, 3));
  const float* r = contents(out);
  for (size_t i = 0; i < ITEMS; ++i) {
    float want = (i % 3 == 1 || i >= n) ? poison : values[i] * 2.0f + 1.0f;
    if (r[i] != want) {
      ck_abort_msg("out[%zu] = %g, expected %g", i, (double)r[i],
                   (double)want);
    }
  }
  free(values);
  dc_buffer_release(in);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

//===-- Overlapping buffers -----------------------------------------------===//

// With a and b the same memory, each item must read back the 7 it has
// just stored: a compiler told that a and b never alias (the coarsened
// entry's restrict pointers) may load b[i] before the store to a[i].
static const char kStoreThenLoad[] =
    "__kernel void store_load(__global int* a, __global const int* b,\n"
    "                         __global int* r) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = 7;\n"
    "  r[i] = b[i] + 1;\n"
    "}\n";

static void check_store_load(dc_kernel_t* k, dc_buffer_t* a, dc_buffer_t* b,
                             size_t n, int32_t want) {
  dc_buffer_t* r = dc_test_buffer_new(dut, DC_DTYPE_I32, n, "r");
  int32_t old = 100;
  DC_CK_OK(dc_buffer_fill(a, 0, dc_buffer_length(a), &old));
  if (b != a) DC_CK_OK(dc_buffer_fill(b, 0, dc_buffer_length(b), &old));
  dc_arg_t args[] = {dc_arg_buffer(a), dc_arg_buffer(b), dc_arg_buffer(r)};
  dc_dispatch_t grid = {.dims = 1, .global = {n}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, 3));
  const int32_t* got = contents(r);
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want) {
      ck_abort_msg("r[%zu] = %d, expected %d", i, got[i], want);
    }
  }
  dc_buffer_release(r);
}

START_TEST(test_overlapping_buffers_alias_as_written) {
  dc_program_t* p = build_on(dut, "store_load.cl", kStoreThenLoad, NULL);
  dc_kernel_t* k = kernel_of(p, "store_load");
  expect_mode(k, coarse_mode());
  dc_buffer_t* a = dc_test_buffer_new(dut, DC_DTYPE_I32, ITEMS + 64, "a");
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_I32, ITEMS, "b");
  check_store_load(k, a, b, ITEMS, 101);  // apart: the coarsened entry
  check_store_load(k, a, a, ITEMS, 8);    // one buffer twice
  // Two views of one buffer that share all but their ends.
  dc_buffer_t* va = NULL;
  dc_buffer_t* vb = NULL;
  DC_CK_OK(dc_buffer_create_view(a, 0, ITEMS, &va));
  DC_CK_OK(dc_buffer_create_view(a, 0, ITEMS + 64, &vb));
  check_store_load(k, va, vb, ITEMS, 8);
  dc_buffer_release(va);
  dc_buffer_release(vb);
  // Views of one buffer that do not overlap behave as separate buffers.
  DC_CK_OK(dc_buffer_create_view(a, 0, ITEMS / 2, &va));
  DC_CK_OK(dc_buffer_create_view(a, ITEMS / 2, ITEMS / 2, &vb));
  check_store_load(k, va, vb, ITEMS / 2, 101);
  dc_buffer_release(va);
  dc_buffer_release(vb);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- Which kernels ---------------------------------------------------===//

// Only kernels whose items depend on neither each other nor the launch's
// shape have a coarsened entry; the others keep one item per thread and
// give the values the language promises.
static const char kShapes[] =
    "__kernel void plain(__global uint* o) {\n"
    "  o[get_global_id(0)] = 1u;\n"
    "}\n"
    "uint where(void) { return get_local_id(0); }\n"
    "__kernel void local_id(__global uint* o) {\n"
    "  o[get_global_id(0)] = where();\n"
    "}\n"
    "__kernel void global_size(__global uint* o) {\n"
    "  o[get_global_id(0)] = (uint)get_global_size(0);\n"
    "}\n"
    "__kernel void groups(__global uint* o) {\n"
    "  o[get_global_id(0)] = (uint)get_num_groups(0);\n"
    "}\n"
    "__kernel void with_local(__global uint* o) {\n"
    "  __local uint t[1];\n"
    "  t[0] = 2u;\n"
    "  o[get_global_id(0)] = t[0];\n"
    "}\n";

static void expect_all(dc_kernel_t* k, size_t n, size_t group,
                       uint32_t (*want)(size_t i)) {
  dc_buffer_t* o = dc_test_buffer_new(dut, DC_DTYPE_U32, n, "o");
  fill_bytes(o, 0xff);
  dc_arg_t arg = dc_arg_buffer(o);
  dc_dispatch_t grid = {.dims = 1, .global = {n}, .local = {group}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, &arg, 1));
  const uint32_t* r = contents(o);
  for (size_t i = 0; i < n; ++i) {
    if (r[i] != want(i)) {
      ck_abort_msg("o[%zu] = %u, expected %u", i, r[i], want(i));
    }
  }
  dc_buffer_release(o);
}

static uint32_t local_id_of(size_t i) { return (uint32_t)(i % 256); }
static uint32_t global_size_of(size_t i) { (void)i; return (uint32_t)ITEMS; }
static uint32_t groups_of(size_t i) { (void)i; return (uint32_t)(ITEMS / 256); }
static uint32_t two(size_t i) { (void)i; return 2; }

START_TEST(test_kernels_that_see_the_launch_run_one_item_per_thread) {
  dc_program_t* p = build_on(dut, "shapes.cl", kShapes, NULL);
  const char* plain = dut_is_cuda() ? "cuda" : NULL;
  expect_mode(kernel_of(p, "plain"), coarse_mode());
  if (plain != NULL) {
    expect_mode(kernel_of(p, "local_id"), plain);
    expect_mode(kernel_of(p, "global_size"), plain);
    expect_mode(kernel_of(p, "groups"), plain);
    expect_mode(kernel_of(p, "with_local"), plain);
  }
  expect_all(kernel_of(p, "local_id"), ITEMS, 256, local_id_of);
  expect_all(kernel_of(p, "global_size"), ITEMS, 256, global_size_of);
  expect_all(kernel_of(p, "groups"), ITEMS, 256, groups_of);
  expect_all(kernel_of(p, "with_local"), ITEMS, 256, two);
  dc_program_release(p);
  // The build option that keeps every kernel at one item per thread.
  p = build_on(dut, "shapes.cl", kShapes, "-dc-no-coarsening");
  if (plain != NULL) expect_mode(kernel_of(p, "plain"), plain);
  dc_program_release(p);
  // Checked kernels count their polls and watchdog per item.
  p = build_on(dut, "shapes.cl", kShapes, "-dc-checked");
  if (plain != NULL) expect_mode(kernel_of(p, "plain"), plain);
  dc_program_release(p);
}
END_TEST

static Suite* coarsening_suite(void) {
  Suite* s = dc_test_kernel_suite("coarsening", "dc-check-coarsening");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_every_item_sees_its_own_ids);
  tcase_add_test(core, test_a_return_ends_one_item);
  tcase_add_test(core, test_overlapping_buffers_alias_as_written);
  tcase_add_test(core,
                 test_kernels_that_see_the_launch_run_one_item_per_thread);
  return s;
}

DC_CHECK_DEVICE_MAIN(coarsening_suite)

// check_kernel_checked.c: checked mode (-dc-checked, dclua --sandbox), on
// the device under test (check_util.h).
//
// A kernel nobody vetted may compute any address it likes: every route
// by which one could reach memory outside its buffers is tried here, and
// each must end the dispatch with DC_ERR_OUT_OF_RANGE, a message that
// names the line, and the memory next to the buffer untouched:
// arithmetic on a buffer pointer, a pointer handed to a helper, vloadN
// and vstoreN, atomics, async copies, a __local argument, pointers to
// private arrays and variables, and a cast to a wider type. What would
// let a pointer be forged (pointers stored in records, memory holding a
// pointer reinterpreted) is refused at compile time. A runaway kernel
// (an endless loop, a goto loop, a vast grid) ends at the kernel time
// limit and at dc_context_interrupt(), and the next dispatch runs as
// usual. A GPU runs a checked dispatch in slices of its groups: every
// work-item still sees the whole dispatch.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <time.h>

#include "kernel_fixture.h"

#ifndef COUNT_OF
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#endif

//===-- Escapes: each ends the dispatch, and touches nothing -----------===//

// A kernel k(__global int* o, __local int* t, int n) that writes outside
// what it was given, and what the fault message says.
typedef struct escape_t {
  const char* body;
  const char* message;
} escape_t;

#define ESCAPE_OPEN \
  "__kernel void k(__global int* o, __local int* t, int n) {\n"

static const escape_t kEscapes[] = {
    // o has 8 elements; n is 8.
    {"  __global int* p = o + 1000;\n  *p = 1;\n",
     "(esc.cl:4): index 1000 of argument 0 'o' is outside its 8 element(s)"},
    {"  for (__global int* p = o;; ++p) *p = 1;\n",
     "(esc.cl:3): index 8 of argument 0 'o' is outside its 8 element(s)"},
    {"  (o - 1)[0] = 1;\n",
     "(esc.cl:3): index -1 of argument 0 'o' is outside its 8 element(s)"},
    {"  poke(o, n + 3);\n",
     "(esc.cl:1): index 11 of argument 0 'o' is outside its 8 element(s)"},
    {"  vstore4((int4)(1), n / 4, o);\n",
     "(esc.cl:3): an access of 16 byte(s) at byte 32 of argument 0 'o' is "
     "outside its 32 byte(s)"},
    {"  int4 v = vload4(1, o + 1);\n  o[0] = v.x;\n",
     "(esc.cl:3): an access of 16 byte(s) at byte 20 of argument 0 'o' is "
     "outside its 32 byte(s)"},
    // vload3 and vstore3 reach 3 elements (12 bytes), at p + 3 * offset.
    {"  vstore3((int3)(1), n / 3, o);\n",
     "(esc.cl:3): an access of 12 byte(s) at byte 24 of argument 0 'o' is "
     "outside its 32 byte(s)"},
    {"  int3 v = vload3(1, o + 3);\n  o[0] = v.x;\n",
     "(esc.cl:3): an access of 12 byte(s) at byte 24 of argument 0 'o' is "
     "outside its 32 byte(s)"},
    {"  atomic_add(o + n, 1);\n",
     "(esc.cl:3): index 8 of argument 0 'o' is outside its 8 element(s)"},
    {"  ((__global int4*)o)[2] = (int4)(1);\n",
     "(esc.cl:3): an access of 16 byte(s) at byte 32 of argument 0 'o' is "
     "outside its 32 byte(s)"},
    // t has 4 elements (16 bytes).
    {"  t[n] = 1;\n",
     "(esc.cl:3): index 8 of argument 1 't' is outside its 4 element(s)"},
    {"  event_t e = async_work_group_copy(o, t, n, 0);\n"
     "  wait_group_events(1, &e);\n",
     "(esc.cl:3): index 7 of argument 1 't' is outside its 4 element(s)"},
    {"  event_t e = async_work_group_copy(t, o, n, 0);\n"
     "  wait_group_events(1, &e);\n",
     "(esc.cl:3): index 7 of argument 1 't' is outside its 4 element(s)"},
    // Private memory, through pointers.
    {"  int a[4] = {1, 2, 3, 4};\n  int* q = a;\n  q[n] = 7;\n  o[0] = a[0];\n",
     "(esc.cl:5): an access of 4 byte(s) at byte 32 is outside the 16-byte "
     "object its pointer points into"},
    {"  int x = 1;\n  int* q = &x;\n  *(q + 1) = 7;\n  o[0] = x;\n",
     "(esc.cl:5): an access of 4 byte(s) at byte 4 is outside the 4-byte "
     "object its pointer points into"},
    {"  float whole;\n  o[0] = (int)fract(1.5f, &whole + n);\n",
     "(esc.cl:4): an access of 4 byte(s) at byte 32 is outside the 4-byte "
     "object its pointer points into"},
};

START_TEST(test_checked_escapes_end_the_dispatch) {
  const escape_t* x = &kEscapes[_i];
  char source[1024];
  snprintf(source, sizeof(source),
           "void poke(__global int* p, int i) { p[i] = 1; }\n" ESCAPE_OPEN
           "%s}\n",
           x->body);
  // Line 1 holds poke, line 2 the kernel's head: its body starts on 3.
  dc_program_t* p = build_on(dut, "esc.cl", source, "-dc-checked");
  // o is a view: the 8 elements after it are its neighbour.
  dc_buffer_t* root = dc_test_buffer_new(dut, DC_DTYPE_I32, 24, "root");
  fill_bytes(root, 0x5A);
  dc_buffer_t* o = NULL;
  DC_CK_OK(dc_buffer_create_view(root, 8, 8, &o));
  dc_arg_t a[3] = {dc_arg_buffer(o), dc_arg_local(16), dc_arg_i32(8)};
  dc_dispatch_t grid = {.dims = 1, .global = {1}, .local = {1}};
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "k"), &grid, a, 3),
             DC_ERR_OUT_OF_RANGE, x->message);
  const uint32_t* r = contents(root);
  for (int i = 0; i < 8; ++i) ck_assert_uint_eq(r[i], 0x5A5A5A5Au);
  for (int i = 16; i < 24; ++i) ck_assert_uint_eq(r[i], 0x5A5A5A5Au);
  dc_buffer_release(o);
  dc_buffer_release(root);
  dc_program_release(p);
}
END_TEST

// Within bounds the same operations run and compute what they would
// unchecked; an address one past the end may be formed and compared.
START_TEST(test_checked_pointers_within_bounds_run) {
  static const char kSource[] =
      "int sum(__global const int* p, int n) {\n"
      "  int s = 0;\n"
      "  for (__global const int* e = p + n; p != e; ++p) s += *p;\n"
      "  return s;\n"
      "}\n"
      "__kernel void k(__global int* o, __local int* t) {\n"
      "  int a[4] = {1, 2, 3, 4};\n"
      "  int* q = &a[1];\n"
      "  t[get_local_id(0)] = q[2];\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  vstore4(vload4(0, o) + (int4)(t[0]), 1, o);\n"
      "  atomic_add(&o[0], sum(o, 4));\n"
      "  __global int* end = &o[8];\n"
      "  o[1] = (int)(end - o);\n"
      "}\n";
  dc_program_t* p = build_on(dut, "ok.cl", kSource, "-dc-checked");
  int32_t init[8] = {1, 2, 3, 4, 0, 0, 0, 0};
  dc_buffer_t* o = buffer_on(dut, DC_DTYPE_I32, 8, init);
  dc_arg_t a[2] = {dc_arg_buffer(o), dc_arg_local(16)};
  dc_dispatch_t grid = {.dims = 1, .global = {1}, .local = {1}};
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "k"), &grid, a, 2));
  const int32_t* r = contents(o);
  int32_t want[8] = {1 + 10, 8, 3, 4, 5, 6, 7, 8};
  for (int i = 0; i < 8; ++i) ck_assert_int_eq(r[i], want[i]);
  dc_buffer_release(o);
  dc_program_release(p);
}
END_TEST

//===-- Forgery: refused at compile time --------------------------------===//

static const char* const kForgeries[] = {
    "typedef struct { __global int* p; } holder;\n"
    "__kernel void k(__global int* o) { holder h = {o}; h.p[0] = 1; }\n",
    "union u { __global int* p; ulong4 bits; };\n"
    "__kernel void k(__global int* o) { union u x; x.bits = 0; *x.p = 1; }\n",
    "__kernel void k(__global int* o) {\n"
    "  __global int* p = o;\n  ulong* bits = (ulong*)&p;\n  bits[0] = 64;\n"
    "  p[0] = 1;\n}\n",
    "__kernel void k(__global int* o) {\n"
    "  __global int* ps[2] = {o, o};\n  void* v = ps;\n"
    "  ((__private char*)v)[0] = 1;\n}\n",
};

START_TEST(test_checked_pointer_forgery_refused) {
  dc_program_t* p = SENTINEL;
  dc_status_t st = try_build(dut, "forge.cl", kForgeries[_i], "-dc-checked",
                             &p);
  ck_assert_int_eq(st, DC_ERR_COMPILE);
  ck_assert_ptr_null(p);
  const char* e = dc_last_error();
  ck_assert_msg(strstr(e, "checked mode") != NULL, "%s", e);
  ck_assert_msg(strstr(e, "forge.cl:") != NULL, "%s", e);
  // Unchecked, the same programs build (they are valid OpenCL C).
  DC_CK_OK(try_build(dut, "forge.cl", kForgeries[_i], NULL, &p));
  dc_program_release(p);
}
END_TEST

//===-- Runaway kernels -------------------------------------------------===//

static const char* const kRunaways[] = {
    // An endless loop, in the kernel and in a helper.
    "__kernel void k(__global int* o) { while (o[0] != 12345) o[1]++; }\n",
    "void spin(__global int* o) { for (;;) o[1]++; }\n"
    "__kernel void k(__global int* o) { spin(o); }\n",
    // A loop made with goto.
    "__kernel void k(__global int* o) {\n again: o[1]++; goto again;\n}\n",
    // An endless loop around a barrier (regions), and in a kernel whose
    // barrier is in a helper (fibers).
    "__kernel void k(__global int* o) {\n"
    "  for (;;) { barrier(CLK_GLOBAL_MEM_FENCE); o[1]++; }\n}\n",
    "void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "__kernel void k(__global int* o) { sync(); for (;;) o[1]++; }\n",
};

// Dispatches k(o) over |global| work-items in groups of |local|, o a
// 2-element buffer.
static dc_status_t run_k(dc_program_t* p, size_t global, size_t local) {
  dc_buffer_t* o = dc_test_buffer_new(dut, DC_DTYPE_I32, 2, "o");
  fill_bytes(o, 0);
  dc_arg_t a = dc_arg_buffer(o);
  dc_dispatch_t grid = {.dims = 1, .global = {global}, .local = {local}};
  dc_status_t st = dc_kernel_dispatch(kernel_of(p, "k"), &grid, &a, 1);
  dc_buffer_release(o);
  return st;
}

START_TEST(test_checked_runaway_stops_at_the_time_limit) {
  dc_program_t* p = build_on(dut, "run.cl", kRunaways[_i], "-dc-checked");
  dc_context_set_kernel_time_limit(ctx, 50 * 1000 * 1000);  // 50 ms
  ck_assert_int_eq(run_k(p, 1, 1), DC_ERR_DEADLINE_EXCEEDED);
  DC_CK_STR_HAS(dc_last_error(), "ran past the kernel time limit");
  DC_CK_STR_HAS(dc_last_error(), "kernel 'k' (run.cl:");
  dc_program_release(p);
}
END_TEST

// A kernel without loops, which a GPU runs in slices of its groups
// (dc_launch_slicer_t, dc/backend.h), over 2^38 work-items: hours on the
// CPU, minutes on a GPU.
static const char kVast[] =
    "__kernel void k(__global int* o) {\n"
    "  if (get_global_id(0) == 0) o[1] = 1;\n}\n";
#define VAST ((size_t)1 << 38)

// A kernel without loops over a grid that would take hours also stops:
// the CPU polls once per work-group, a GPU's host between slices.
START_TEST(test_checked_vast_grid_stops) {
  dc_program_t* p = build_on(dut, "vast.cl", kVast, "-dc-checked");
  dc_context_set_kernel_time_limit(ctx, 50 * 1000 * 1000);
  ck_assert_int_eq(run_k(p, VAST, 256), DC_ERR_DEADLINE_EXCEEDED);
  DC_CK_STR_HAS(dc_last_error(), "kernel 'k' (vast.cl:1) ran past the kernel "
                "time limit");
  dc_context_set_kernel_time_limit(ctx, 0);
  DC_CK_OK(run_k(p, 64 * 256, 256));  // the next dispatch runs as usual
  dc_program_release(p);
}
END_TEST

// The shapes a sliced dispatch is cut along: every dimension, with
// global offsets, each more than the first slice's 2^18 work-items.
typedef struct slice_shape_t {
  uint32_t dims;
  size_t global[3], offset[3], local[3];
} slice_shape_t;
static const slice_shape_t kSliceShapes[] = {
    {1, {(size_t)1 << 20, 1, 1}, {5, 0, 0}, {64, 1, 1}},
    {2, {2048, 256, 1}, {3, 1000, 0}, {32, 8, 1}},
    {3, {256, 64, 32}, {0, 2, 9}, {16, 4, 2}},
};

// Every work-item of a dispatch run in slices sees the dispatch's group
// ids, counts, sizes and offset, and runs once.
START_TEST(test_checked_slices_see_the_whole_dispatch) {
  const slice_shape_t* sh = &kSliceShapes[_i];
  dc_program_t* p = build_on(
      dut, "ids.cl",
      "__kernel void k(__global uint* o, uint w, uint h, uint d) {\n"
      "  size_t x = get_global_id(0) - get_global_offset(0);\n"
      "  size_t y = get_global_id(1) - get_global_offset(1);\n"
      "  size_t z = get_global_id(2) - get_global_offset(2);\n"
      "  bool ok = get_global_size(0) == w && get_global_size(1) == h &&\n"
      "            get_global_size(2) == d;\n"
      "  for (uint i = 0; i < 3; ++i) {\n"
      "    size_t at = i == 0 ? x : i == 1 ? y : z;\n"
      "    ok = ok && get_group_id(i) == at / get_local_size(i) &&\n"
      "         get_num_groups(i) * get_local_size(i) == get_global_size(i);\n"
      "  }\n"
      "  o[(z * h + y) * w + x] += ok ? (uint)(x + 7 * y + 13 * z) : 1u;\n"
      "}\n",
      "-dc-checked");
  uint32_t w = (uint32_t)sh->global[0], h = (uint32_t)sh->global[1],
           d = (uint32_t)sh->global[2];
  size_t n = (size_t)w * h * d;
  dc_buffer_t* o = dc_test_buffer_new(dut, DC_DTYPE_U32, n, "o");
  fill_bytes(o, 0);
  dc_arg_t a[] = {dc_arg_buffer(o), dc_arg_u32(w), dc_arg_u32(h),
                  dc_arg_u32(d)};
  dc_dispatch_t grid = {.dims = sh->dims};
  for (int i = 0; i < 3; ++i) {
    grid.global[i] = sh->global[i];
    grid.offset[i] = sh->offset[i];
    grid.local[i] = sh->local[i];
  }
  dc_context_set_kernel_time_limit(ctx, (uint64_t)60 * 1000 * 1000 * 1000);
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "k"), &grid, a, 4));
  uint32_t* out = malloc(n * sizeof(*out));
  ck_assert_ptr_nonnull(out);
  DC_CK_OK(dc_buffer_read(o, 0, out, n));
  size_t wrong = 0, first = n;
  for (size_t i = 0; i < n; ++i) {
    size_t x = i % w, y = i / w % h, z = i / w / h;
    if (out[i] != (uint32_t)(x + 7 * y + 13 * z)) {
      wrong++;
      if (first == n) first = i;
    }
  }
  ck_assert_msg(wrong == 0, "%zu of %zu work-items wrong, the first at %zu "
                "(%u)", wrong, n, first, first < n ? out[first] : 0);
  free(out);
  dc_buffer_release(o);
  dc_program_release(p);
}
END_TEST

typedef struct interrupter_t {
  dc_context_t* ctx;
  atomic_bool done;
} interrupter_t;

// Interrupts until the dispatch has returned (an interrupt before it
// started would not stop it).
static void* interrupt_until_done(void* arg) {
  interrupter_t* in = arg;
  struct timespec ms = {0, 1000 * 1000};
  while (!atomic_load(&in->done)) {
    dc_context_interrupt(in->ctx);
    nanosleep(&ms, NULL);
  }
  return NULL;
}

// Runs k of |p| over |global| work-items in groups of |local| while
// another thread interrupts the context until the dispatch has returned.
static dc_status_t run_k_interrupted(dc_program_t* p, size_t global,
                                     size_t local) {
  interrupter_t in = {.ctx = ctx};
  atomic_init(&in.done, false);
  pthread_t thread;
  ck_assert_int_eq(pthread_create(&thread, NULL, interrupt_until_done, &in),
                   0);
  dc_status_t st = run_k(p, global, local);
  atomic_store(&in.done, true);
  pthread_join(thread, NULL);
  return st;
}

// An interrupt stops a vast loop-free grid too: on a GPU between slices.
START_TEST(test_checked_interrupt_stops_a_vast_grid) {
  dc_program_t* p = build_on(dut, "vast.cl", kVast, "-dc-checked");
  ck_assert_int_eq(run_k_interrupted(p, VAST, 256), DC_ERR_CANCELLED);
  DC_CK_STR_HAS(dc_last_error(), "kernel 'k' (vast.cl:1) was interrupted");
  dc_program_release(p);
}
END_TEST

START_TEST(test_checked_interrupt_stops_a_running_kernel) {
  dc_program_t* p = build_on(dut, "run.cl", kRunaways[_i], "-dc-checked");
  ck_assert_int_eq(run_k_interrupted(p, 4, 1), DC_ERR_CANCELLED);
  DC_CK_STR_HAS(dc_last_error(), "was interrupted while it ran");
  dc_program_release(p);
}
END_TEST

// Unchecked kernels never poll: an interrupt leaves them be.
START_TEST(test_checked_interrupt_leaves_other_work_alone) {
  dc_program_t* p = build_on(dut, "plain.cl",
                             "__kernel void k(__global int* o) {\n"
                             "  for (int i = 0; i < 1000; ++i) o[1] += 1;\n"
                             "}\n",
                             NULL);
  dc_context_interrupt(ctx);
  dc_context_interrupt(NULL);  // a no-op
  DC_CK_OK(run_k(p, 1, 1));
  dc_context_params_t params;
  DC_CK_OK(dc_context_params(ctx, &params));
  ck_assert_uint_eq(params.kernel_time_limit_ns, 0);
  dc_context_set_kernel_time_limit(ctx, 7);
  DC_CK_OK(dc_context_params(ctx, &params));
  ck_assert_uint_eq(params.kernel_time_limit_ns, 7);
  dc_program_release(p);
}
END_TEST

static Suite* kernel_checked_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_checked", "dc-check-checked");
  TCase* escapes = dc_test_kernel_tcase(s, "escapes");
  tcase_add_loop_test(escapes, test_checked_escapes_end_the_dispatch, 0,
                      COUNT_OF(kEscapes));
  tcase_add_test(escapes, test_checked_pointers_within_bounds_run);
  tcase_add_loop_test(escapes, test_checked_pointer_forgery_refused, 0,
                      COUNT_OF(kForgeries));
  TCase* stops = dc_test_kernel_tcase(s, "stops");
  tcase_add_loop_test(stops, test_checked_runaway_stops_at_the_time_limit, 0,
                      COUNT_OF(kRunaways));
  tcase_add_test(stops, test_checked_interrupt_leaves_other_work_alone);
  tcase_add_test(stops, test_checked_vast_grid_stops);
  tcase_add_test(stops, test_checked_interrupt_stops_a_vast_grid);
  tcase_add_loop_test(stops, test_checked_slices_see_the_whole_dispatch, 0,
                      COUNT_OF(kSliceShapes));
  // On a GPU the host writes the stop word the running kernel's loops read.
  tcase_add_loop_test(stops, test_checked_interrupt_stops_a_running_kernel, 0,
                      COUNT_OF(kRunaways));
  return s;
}

DC_CHECK_DEVICE_MAIN(kernel_checked_suite)

// bench_opencl_device.c: the engine on an OpenCL device (opencl:0, pocl's
// CPU device here) against the same work done with pocl called directly
// (the OpenCL ICD loader, bench_opencl.h), side by side in one process run
// (issue 17):
//
//   dispatch round trip             one dc_kernel_dispatch (synchronous)
//                                   vs clEnqueueNDRangeKernel + clFinish
//                                   on an in-order queue; two kernels:
//                                   vadd over 1024 floats (three buffer
//                                   arguments) and the empty kernel (none)
//   10000 queued dispatches         per dispatch: 10,000 dc_stream_dispatch
//                                   on one dc stream of opencl:0, then one
//                                   dc_stream_sync, vs 10,000
//                                   clEnqueueNDRangeKernel on one in-order
//                                   queue, then one clFinish; same kernels
//   vector add 16M f32              c = a + b over 16M floats (192 MiB
//                                   moved an operation), dc_kernel_dispatch
//                                   vs clEnqueueNDRangeKernel + clFinish,
//                                   GB/s
//   copies with the CPU, 64 MiB     bench_opencl_transfer.c
//
// Both sides build the same OpenCL C text (bench_util.h's "vadd" and
// "empty"). The dispatch rows give both sides the same grid and the same
// explicit work-group size (1024 items in groups of 256; the empty kernel
// one item), so they differ only in what lies between the caller and
// clEnqueueNDRangeKernel. The vector add lets each side pick its group
// size as a user would: the engine its own (local left zero), pocl its
// own (local NULL); a third case gives pocl the engine's group size.
// Goals (issue 17): the engine at most 1.1x pocl in the dispatch rows,
// and at least 0.95x pocl's bandwidth in the vector add (a time ratio of
// at most 1.053).
//
// The engine side uses the public API only (dc/dc.h), on a context with
// backends "cpu,opencl" (OpenCL is enabled by naming it), kernel cache
// off. The pocl side has a context and queue of its own on the same
// device. Buffers, programs, kernels and the stream are made before
// anything is timed, and every row checks its results once before timing
// (aborting with a message when one is wrong).
//
// Without OpenCL (CMake registers this program only where it found the
// loader and headers), without pocl, or without an engine device
// opencl:0 that is pocl's CPU device, the program prints a note and exits
// 0.
//
// The round trips use the harness as it is (bench_run_group,
// BENCH_QUIESCE); the batched rows and the vector add take one sample per
// batch (bench_run_sampled): one untimed call of each case, then
// BENCH_REPS rounds of one sample of every case in turn, each after a
// wait until the process is idle.
//
// BENCH_OPENCL_DEVICE=roundtrip,queued,vadd,transfer (a comma-separated
// subset) runs only those parts; transfer is bench_opencl_transfer.c.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_opencl_parts.h"
#include "bench_util.h"
#include "dc/dc.h"
#include "harness.h"

#ifdef DC_BENCH_OPENCL

#define PROGRAM "bench_opencl_device"
#define SMALL_N 1024                  // floats of the small vadd
#define SMALL_GROUP 256               // its work-group size, both sides
#define QUEUED 10000                  // dispatches per batch
#define VADD_N ((size_t)16 << 20)     // 16M f32: 64 MiB per buffer
#define VADD_CALLS 4                  // operations per sample
#define VADD_BYTES ((double)(3 * VADD_N * sizeof(float)))
#define CHECK_RUN 4096                // elements per checked range
#define ENGINE_GROUP 256              // the engine's group for the vadd

static const char* const kPart = "BENCH_OPENCL_DEVICE";

// One kernel on both sides, with its arguments and grid.
typedef struct kern_t {
  const char* what;  // "vadd 1024 f32", "empty"
  dc_kernel_t* dc;
  cl_kernel cl;
  dc_arg_t args[3];
  size_t nargs;
  dc_dispatch_t grid;  // the engine's
  size_t global, local;  // pocl's (local 0: NULL)
  cl_mem mems[3];        // pocl's arguments, set again by trip_cl_args
} kern_t;

typedef struct bench_t {
  dc_context_t* ctx;
  dc_device_t* dev;  // opencl:0
  dc_stream_t* stream;
  dc_program_t *vadd_program, *empty_program;
  bench_ocl_t ocl;
  cl_command_queue q;
  cl_program vadd_cl, empty_cl;
  // The small vadd's buffers, both sides.
  dc_buffer_t *sa, *sb, *sc;
  cl_mem ma, mb, mc;
  kern_t small, empty;
} bench_t;

//===-- Helpers ----------------------------------------------------------===//

static void fail(const char* format, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, PROGRAM ": ");
  vfprintf(stderr, format, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  abort();
}

static float pattern_a(size_t i) { return (float)(i % 1000); }
static float pattern_b(size_t i) { return (float)(i % 77) * 2.0f; }

static void fill(float* host, size_t n, float (*f)(size_t)) {
  for (size_t i = 0; i < n; ++i) host[i] = f(i);
}

// Checks |n| floats read from offset |at|: a + b.
static void check_sum(const char* what, const float* got, size_t at,
                      size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float want = pattern_a(at + i) + pattern_b(at + i);
    if (got[i] != want) {
      fail("%s: element %zu is %g, expected %g", what, at + i,
           (double)got[i], (double)want);
    }
  }
}

static void dc_run(kern_t* k) {
  DC_CHECK(dc_kernel_dispatch(k->dc, &k->grid, k->args, k->nargs));
}

static void cl_enqueue(bench_t* B, kern_t* k) {
  OCL_CHECK(clEnqueueNDRangeKernel(B->q, k->cl, 1, NULL, &k->global,
                                   k->local ? &k->local : NULL, 0, NULL,
                                   NULL));
}

//===-- 1. dispatch round trip ------------------------------------------===//

typedef struct trip_t {
  bench_t* B;
  kern_t* k;
} trip_t;

static void trip_dc(void* arg, uint64_t iters) {
  trip_t* t = arg;
  for (uint64_t i = 0; i < iters; ++i) dc_run(t->k);
}

static void trip_cl(void* arg, uint64_t iters) {
  trip_t* t = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    cl_enqueue(t->B, t->k);
    OCL_CHECK(clFinish(t->B->q));
  }
}

// pocl with the kernel's arguments set before every enqueue, as the engine
// must (a dispatch carries its arguments); informational.
static void set_cl_args(kern_t* k) {
  for (size_t i = 0; i < k->nargs; ++i) {
    OCL_CHECK(clSetKernelArg(k->cl, (cl_uint)i, sizeof(cl_mem), &k->mems[i]));
  }
}

static void trip_cl_args(void* arg, uint64_t iters) {
  trip_t* t = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    set_cl_args(t->k);
    cl_enqueue(t->B, t->k);
    OCL_CHECK(clFinish(t->B->q));
  }
}

static void bench_roundtrip_of(bench_t* B, kern_t* k) {
  char name[128];
  snprintf(name, sizeof(name), "opencl:0 dispatch round trip, %s", k->what);
  trip_t t = {.B = B, .k = k};
  bench_case_t cases[3] = {
      {.variant = "dc_kernel_dispatch (sync)", .body = trip_dc, .arg = &t},
      {.variant = "clEnqueueNDRangeKernel+clFinish", .body = trip_cl,
       .arg = &t},
      {.variant = "clSetKernelArg x3+clEnqueueNDRangeKernel+clFinish",
       .body = trip_cl_args, .arg = &t},
  };
  int count = k->nargs > 0 ? 3 : 2;
  bench_run_group(name, cases, count, BENCH_QUIESCE);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.1");
  if (count == 3) bench_print_ratio(name, &cases[0], &cases[2], "-");
}

static void bench_roundtrip(bench_t* B) {
  bench_note("opencl:0 dispatch round trip", "per operation: one "
             "dc_kernel_dispatch on opencl:0 (it returns when the kernel "
             "has finished: clEnqueueNDRangeKernel + clFinish on the "
             "device's queue) vs clEnqueueNDRangeKernel + clFinish on "
             "pocl's in-order queue, the kernel's arguments set once "
             "beforehand; vadd: %d floats in groups of %d, empty: 1 "
             "work-item, on both sides; goal: dc at most 1.1x pocl; also "
             "pocl with vadd's 3 arguments set before every enqueue, as "
             "the engine must (informational)", SMALL_N, SMALL_GROUP);
  bench_roundtrip_of(B, &B->small);
  bench_roundtrip_of(B, &B->empty);
}

//===-- 2. 10,000 queued dispatches -------------------------------------===//

static void queued_dc(void* arg, uint64_t calls) {
  trip_t* t = arg;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < QUEUED; ++i) {
      DC_CHECK(dc_stream_dispatch(t->B->stream, t->k->dc, &t->k->grid,
                                  t->k->args, t->k->nargs));
    }
    DC_CHECK(dc_stream_sync(t->B->stream, DC_TIMEOUT_INFINITE));
  }
}

static void queued_cl(void* arg, uint64_t calls) {
  trip_t* t = arg;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < QUEUED; ++i) cl_enqueue(t->B, t->k);
    OCL_CHECK(clFinish(t->B->q));
  }
}

static void queued_cl_args(void* arg, uint64_t calls) {
  trip_t* t = arg;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < QUEUED; ++i) {
      set_cl_args(t->k);
      cl_enqueue(t->B, t->k);
    }
    OCL_CHECK(clFinish(t->B->q));
  }
}

static uint64_t completed(dc_stream_t* s) {
  dc_stream_stats_t st;
  DC_CHECK(dc_stream_stats(s, &st));
  return st.completed;
}

static void bench_queued_of(bench_t* B, kern_t* k) {
  char name[128];
  snprintf(name, sizeof(name),
           "opencl:0 10000 queued dispatches, %s (per dispatch)", k->what);
  trip_t t = {.B = B, .k = k};
  uint64_t before = completed(B->stream);
  queued_dc(&t, 1);
  uint64_t done = completed(B->stream) - before;
  if (done != QUEUED) {
    fail("%s: %llu of %d dc stream commands completed after the sync", name,
         (unsigned long long)done, QUEUED);
  }
  bench_case_t cases[3] = {
      {.variant = "dc_stream_dispatch x10000+dc_stream_sync",
       .body = queued_dc, .arg = &t},
      {.variant = "clEnqueueNDRangeKernel x10000+clFinish",
       .body = queued_cl, .arg = &t},
      {.variant = "(clSetKernelArg x3+clEnqueueNDRangeKernel) x10000+"
                  "clFinish", .body = queued_cl_args, .arg = &t},
  };
  const double units[3] = {QUEUED, QUEUED, QUEUED};
  int count = k->nargs > 0 ? 3 : 2;
  bench_run_sampled(name, cases, count, bench_reps(), 1, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.1");
  if (count == 3) bench_print_ratio(name, &cases[0], &cases[2], "-");
}

static void bench_queued(bench_t* B) {
  bench_note("opencl:0 10000 queued dispatches", "a sample: %d "
             "dc_stream_dispatch on one dc stream of opencl:0, then one "
             "dc_stream_sync, vs %d clEnqueueNDRangeKernel on pocl's "
             "in-order queue, then one clFinish; divided by %d; same "
             "kernels, grids and variants as the round trip; goal: dc at "
             "most 1.1x pocl", QUEUED, QUEUED, QUEUED);
  bench_queued_of(B, &B->small);
  bench_queued_of(B, &B->empty);
}

//===-- 3. vector add bandwidth -----------------------------------------===//

typedef struct vadd_t {
  bench_t* B;
  dc_buffer_t *a, *b, *c;
  cl_mem ma, mb, mc;
  kern_t dc_k;     // the engine's group size
  kern_t cl_auto;  // pocl's group size (local NULL)
  kern_t cl_same;  // the engine's group size on pocl
} vadd_t;

static void vadd_dc(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  for (uint64_t i = 0; i < calls; ++i) dc_run(&v->dc_k);
}

static void vadd_cl_run(vadd_t* v, kern_t* k, uint64_t calls) {
  for (uint64_t i = 0; i < calls; ++i) {
    cl_enqueue(v->B, k);
    OCL_CHECK(clFinish(v->B->q));
  }
}

static void vadd_cl_auto(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  vadd_cl_run(v, &v->cl_auto, calls);
}

static void vadd_cl_same(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  vadd_cl_run(v, &v->cl_same, calls);
}

// Checks c = a + b over the start, the middle and the end of |c| (or
// |mc|, whichever is set).
static void vadd_check(vadd_t* v, const char* what, dc_buffer_t* c,
                       cl_mem mc) {
  float got[CHECK_RUN];
  const size_t at[3] = {0, VADD_N / 2 - CHECK_RUN / 2, VADD_N - CHECK_RUN};
  for (int r = 0; r < 3; ++r) {
    if (c != NULL) {
      DC_CHECK(dc_buffer_read(c, at[r], got, CHECK_RUN));
    } else {
      OCL_CHECK(clEnqueueReadBuffer(v->B->q, mc, CL_TRUE,
                                    at[r] * sizeof(float), sizeof(got), got,
                                    0, NULL, NULL));
    }
    check_sum(what, got, at[r], CHECK_RUN);
  }
}

static void vadd_clear(vadd_t* v) {
  static const float zero = 0.0f;
  DC_CHECK(dc_buffer_fill(v->c, 0, VADD_N, &zero));
  OCL_CHECK(clEnqueueFillBuffer(v->B->q, v->mc, &zero, sizeof(zero), 0,
                                VADD_N * sizeof(float), 0, NULL, NULL));
  OCL_CHECK(clFinish(v->B->q));
}

static void vadd_setup(vadd_t* v) {
  bench_t* B = v->B;
  v->a = bench_dc_buffer(B->dev, DC_DTYPE_F32, VADD_N, "vadd a", NULL);
  v->b = bench_dc_buffer(B->dev, DC_DTYPE_F32, VADD_N, "vadd b", NULL);
  v->c = bench_dc_buffer(B->dev, DC_DTYPE_F32, VADD_N, "vadd c", NULL);
  float* host = bench_xmalloc(VADD_N * sizeof(float));
  fill(host, VADD_N, pattern_a);
  DC_CHECK(dc_buffer_write(v->a, 0, host, VADD_N));
  v->ma = bench_ocl_buffer(B->ocl.ctx, VADD_N * sizeof(float), host);
  fill(host, VADD_N, pattern_b);
  DC_CHECK(dc_buffer_write(v->b, 0, host, VADD_N));
  v->mb = bench_ocl_buffer(B->ocl.ctx, VADD_N * sizeof(float), host);
  v->mc = bench_ocl_buffer(B->ocl.ctx, VADD_N * sizeof(float), NULL);
  free(host);
  v->dc_k = (kern_t){.dc = B->small.dc, .nargs = 3,
                     .grid = {.dims = 1, .global = {VADD_N}}};
  v->dc_k.args[0] = dc_arg_buffer(v->a);
  v->dc_k.args[1] = dc_arg_buffer(v->b);
  v->dc_k.args[2] = dc_arg_buffer(v->c);
  // pocl's kernel object is shared with the small rows: its arguments are
  // set here for the vector add and set back afterwards.
  cl_kernel k = B->small.cl;
  OCL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &v->ma));
  OCL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &v->mb));
  OCL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &v->mc));
  v->cl_auto = (kern_t){.cl = k, .global = VADD_N, .local = 0};
  v->cl_same = v->cl_auto;
}

static void bench_vadd(bench_t* B) {
  const char* name = "opencl:0 vector add 16M f32 (192 MiB moved)";
  vadd_t v = {.B = B};
  vadd_setup(&v);
  // The engine's group size for this kernel and grid (the public API does
  // not report it): the OpenCL backend's preferred size, min(the kernel's
  // largest group, 256) in multiples of its preferred multiple
  // (dc__opencl_preferred_group_size), which divides 16M.
  const size_t group = ENGINE_GROUP;
  v.cl_same.local = group;
  vadd_clear(&v);
  vadd_dc(&v, 1);
  vadd_check(&v, "dc vadd", v.c, NULL);
  vadd_cl_auto(&v, 1);
  vadd_check(&v, "pocl vadd (local NULL)", NULL, v.mc);
  vadd_clear(&v);
  vadd_cl_same(&v, 1);
  vadd_check(&v, "pocl vadd (engine's group)", NULL, v.mc);
  bench_note(name, "c = a + b over %zu floats (3 x 64 MiB moved an "
             "operation): dc_kernel_dispatch of vadd on opencl:0, group "
             "size left to the engine (%zu), vs clEnqueueNDRangeKernel + "
             "clFinish of the same source, local size NULL (pocl's "
             "choice), and with the engine's %zu (informational); %d "
             "operations per sample; results checked first over 3 x %d "
             "elements; goal: dc at least 0.95x pocl's bandwidth (time "
             "ratio <= 1.053)", VADD_N, group, group, VADD_CALLS,
             CHECK_RUN);
  bench_case_t cases[3] = {
      {.variant = "dc_kernel_dispatch vadd", .body = vadd_dc, .arg = &v},
      {.variant = "clEnqueueNDRangeKernel vadd+clFinish (local NULL)",
       .body = vadd_cl_auto, .arg = &v},
      {.variant = "clEnqueueNDRangeKernel vadd+clFinish (engine's group)",
       .body = vadd_cl_same, .arg = &v},
  };
  const double units[3] = {1, 1, 1};
  bench_run_sampled(name, cases, 3, bench_reps(), VADD_CALLS, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.053");
  bench_print_ratio(name, &cases[0], &cases[2], "-");
  for (int k = 0; k < 3; ++k) {
    bench_print_rate(name, &cases[k], VADD_BYTES, "GB/s");
  }
  bench_note(name, "bandwidth (bytes read + written / median time): dc "
             "%.2f GB/s, pocl %.2f GB/s, pocl with the engine's group "
             "%.2f GB/s; dc / pocl %.3f",
             VADD_BYTES / cases[0].median_ns,
             VADD_BYTES / cases[1].median_ns,
             VADD_BYTES / cases[2].median_ns,
             cases[1].median_ns / cases[0].median_ns);
  // Back to the small rows' arguments.
  set_cl_args(&B->small);
  clReleaseMemObject(v.ma);
  clReleaseMemObject(v.mb);
  clReleaseMemObject(v.mc);
  dc_buffer_release(v.a);
  dc_buffer_release(v.b);
  dc_buffer_release(v.c);
}

//===-- Setup ------------------------------------------------------------===//

// The small vadd's buffers and both kernels on both sides; checks that
// each side computes the small vadd and runs the empty kernel.
static void setup_kernels(bench_t* B) {
  B->vadd_program = bench_dc_build(B->dev, bench_vadd_source, "vadd.cl");
  B->empty_program = bench_dc_build(B->dev, bench_empty_source, "empty.cl");
  B->vadd_cl = bench_ocl_build(B->ocl.ctx, B->ocl.device, bench_vadd_source);
  B->empty_cl =
      bench_ocl_build(B->ocl.ctx, B->ocl.device, bench_empty_source);
  float a[SMALL_N], b[SMALL_N], c[SMALL_N];
  fill(a, SMALL_N, pattern_a);
  fill(b, SMALL_N, pattern_b);
  B->sa = bench_dc_buffer(B->dev, DC_DTYPE_F32, SMALL_N, "small a", NULL);
  B->sb = bench_dc_buffer(B->dev, DC_DTYPE_F32, SMALL_N, "small b", NULL);
  B->sc = bench_dc_buffer(B->dev, DC_DTYPE_F32, SMALL_N, "small c", NULL);
  DC_CHECK(dc_buffer_write(B->sa, 0, a, SMALL_N));
  DC_CHECK(dc_buffer_write(B->sb, 0, b, SMALL_N));
  B->ma = bench_ocl_buffer(B->ocl.ctx, sizeof(a), a);
  B->mb = bench_ocl_buffer(B->ocl.ctx, sizeof(b), b);
  B->mc = bench_ocl_buffer(B->ocl.ctx, sizeof(c), NULL);

  kern_t* s = &B->small;
  *s = (kern_t){.what = "vadd 1024 f32",
                .dc = bench_dc_find(B->vadd_program, "vadd"),
                .cl = bench_ocl_kernel(B->vadd_cl, "vadd"),
                .nargs = 3,
                .grid = {.dims = 1, .global = {SMALL_N},
                         .local = {SMALL_GROUP, 1, 1}},
                .global = SMALL_N,
                .local = SMALL_GROUP};
  s->mems[0] = B->ma;
  s->mems[1] = B->mb;
  s->mems[2] = B->mc;
  s->args[0] = dc_arg_buffer(B->sa);
  s->args[1] = dc_arg_buffer(B->sb);
  s->args[2] = dc_arg_buffer(B->sc);
  set_cl_args(s);

  B->empty = (kern_t){.what = "empty kernel",
                      .dc = bench_dc_find(B->empty_program, "empty"),
                      .cl = bench_ocl_kernel(B->empty_cl, "empty"),
                      .grid = {.dims = 1, .global = {1}, .local = {1, 1, 1}},
                      .global = 1,
                      .local = 1};

  dc_run(s);
  DC_CHECK(dc_buffer_read(B->sc, 0, c, SMALL_N));
  check_sum("dc small vadd", c, 0, SMALL_N);
  cl_enqueue(B, s);
  OCL_CHECK(clEnqueueReadBuffer(B->q, B->mc, CL_TRUE, 0, sizeof(c), c, 0,
                                NULL, NULL));
  check_sum("pocl small vadd", c, 0, SMALL_N);
  dc_run(&B->empty);
  cl_enqueue(B, &B->empty);
  OCL_CHECK(clFinish(B->q));
  dc_stream_params_t sp = {.label = "bench"};
  DC_CHECK(dc_stream_create(B->dev, &sp, &B->stream));
}

static void teardown(bench_t* B) {
  dc_stream_release(B->stream);
  dc_buffer_release(B->sa);
  dc_buffer_release(B->sb);
  dc_buffer_release(B->sc);
  dc_program_release(B->vadd_program);
  dc_program_release(B->empty_program);
  clReleaseKernel(B->small.cl);
  clReleaseKernel(B->empty.cl);
  clReleaseProgram(B->vadd_cl);
  clReleaseProgram(B->empty_cl);
  clReleaseMemObject(B->ma);
  clReleaseMemObject(B->mb);
  clReleaseMemObject(B->mc);
  bench_ocl_close(&B->ocl);
  dc_context_release(B->ctx);
}

int main(int argc, char** argv) {
  bench_init(argc, argv);
  const char* name = "opencl device";
  bench_t B = {0};
  dc_context_params_t params = {.backends = "cpu,opencl",
                                .kernel_cache_dir = "off"};
  DC_CHECK(dc_context_create(&params, &B.ctx));
  if (dc_context_find_device(B.ctx, "opencl:0", &B.dev) != DC_OK) {
    bench_note(name, "the engine found no opencl:0 (%s): rows skipped",
               dc_last_error());
    teardown(&B);
    return 0;
  }
  const dc_device_info_t* info = dc_device_info(B.dev);
  bool pocl = bench_ocl_open(&B.ocl, 1, name) &&
              strcmp(info->model, B.ocl.device_name) == 0;
  if (!pocl) {
    // Another driver's device (a GPU): its transfer rows, against that
    // driver called directly; the other rows are pocl's.
    bench_ocl_close(&B.ocl);
    if (bench_ocl_open_model(&B.ocl, 1, info->model, name) &&
        bench_want_part(kPart, "transfer")) {
      bench_note(name, "opencl:0 = %s (%s): the transfer rows only",
                 info->model, B.ocl.platform_version);
      bench_opencl_transfer(B.ctx, B.dev, &B.ocl);
    }
    teardown(&B);
    return 0;
  }
  B.q = B.ocl.queues[0];
  bench_note(name, "opencl:0 = %s, %u compute units; pocl: %s, its own "
             "context and one in-order queue on the same device; "
             "DC_CHECKED=%s, POCL_MAX_PTHREAD_COUNT=%s", info->model,
             info->compute_units, B.ocl.platform_version,
             bench_env_or("DC_CHECKED"),
             bench_env_or("POCL_MAX_PTHREAD_COUNT"));
  setup_kernels(&B);
  if (bench_want_part(kPart, "roundtrip")) bench_roundtrip(&B);
  if (bench_want_part(kPart, "queued")) bench_queued(&B);
  if (bench_want_part(kPart, "vadd")) bench_vadd(&B);
  if (bench_want_part(kPart, "transfer")) {
    bench_opencl_transfer(B.ctx, B.dev, &B.ocl);
  }
  teardown(&B);
  return 0;
}

#else  // !DC_BENCH_OPENCL

int main(int argc, char** argv) {
  bench_init(argc, argv);
  bench_note("opencl device", "built without OpenCL: no rows");
  return 0;
}

#endif  // DC_BENCH_OPENCL

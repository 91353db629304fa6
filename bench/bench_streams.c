// bench_streams.c: streams and events on the CPU device against pocl's
// command queues and events, side by side in one process run:
//
//   10000 empty kernels on a stream   per kernel: 10,000 dc_stream_dispatch
//                                     calls on one stream, then one
//                                     dc_stream_sync, vs pocl enqueuing
//                                     10,000 kernels on an in-order queue,
//                                     then one clFinish; and, as a row of
//                                     its own, the enqueue calls alone
//   two-stream dependent pair         a dispatch on stream A, an event
//                                     recorded there, stream B waiting for
//                                     it, a dispatch on B, both synced, vs
//                                     two pocl queues and one cl_event
//   event record + host wait          dc_stream_record on an idle stream
//                                     and dc_event_wait vs pocl's
//                                     clEnqueueMarkerWithWaitList and
//                                     clWaitForEvents
//   1000 vector adds 4096 f32         per dispatch: a group of 4 streams
//                                     (round-robin) vs one stream vs
//                                     synchronous dc_kernel_dispatch calls
//
// dc kernels are built with dc_program_create() on a context whose kernel
// cache is off (kernels are compiled in memory; the user's cache is never
// read or written). pocl's cache lives in a private temporary directory
// (POCL_CACHE_DIR, set before the first OpenCL call), removed at exit.
// What can be checked is checked once before anything is timed: the
// dependent pair with kernels that write a value and read it back, the
// vector adds against the host, the command counts of the streams. A
// failed check drops the row with a note.
//
// The pocl part is built only where CMake found OpenCL (DC_BENCH_OPENCL);
// without it, or without a pocl CPU device at run time, the program prints
// a note and leaves the pocl rows out.
//
// Batched rows (the 10,000 kernels, the 1,000 vector adds) take one batch
// per sample, BENCH_REPS samples per case after one untimed batch of each,
// the cases taking turns sample by sample, each sample after a wait until
// the process is idle; a sample is the batch's time divided by the number
// of kernels. The other rows use the harness as it is (bench_run_group,
// BENCH_QUIESCE).
//
// BENCH_STREAMS=enqueue,pair,record,group (a comma-separated subset) runs
// only those parts.
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "bench_opencl.h"
#include "bench_util.h"
#include "dc/dc.h"
#include "harness.h"

#define QUEUE_KERNELS 10000   // kernels per batch of the enqueue rows
#define PAIR_CHECKS 1000      // checked iterations of the dependent pair
#define GROUP_STREAMS 4
#define GROUP_KERNELS 1000    // vector adds per batch
#define VADD_N 4096

//===-- Kernel sources ---------------------------------------------------===//

// The empty kernel and vadd are bench_util.h's (bench_kernels builds them
// too).

// The dependent pair's check: A writes a value, B reads it and writes it
// plus one. Were B not to wait for A, it would read an older value.
static const char kPairSource[] =
    "__kernel void put(__global uint* cell, uint value) {\n"
    "  cell[0] = value;\n"
    "}\n"
    "__kernel void next(__global const uint* cell, __global uint* out) {\n"
    "  out[0] = cell[0] + 1u;\n"
    "}\n";

//===-- Batched samples --------------------------------------------------===//

// A case of a batched row: |run| does one batch and says how long the
// enqueue calls alone took and how long the whole batch took.
typedef struct batch_case_t {
  const char* variant;          // the whole batch
  const char* enqueue_variant;  // the enqueue calls alone (or NULL)
  void (*run)(void* arg, uint64_t* enqueue_ns, uint64_t* total_ns);
  void* arg;
} batch_case_t;

// Runs one untimed batch of each case, then bench_reps() rounds of one
// batch of every case in turn, each after a wait for an idle process.
// Reports the whole batches under |name| into |totals|, and the enqueue
// calls under |enqueue_name| into |enqueues| when that is not NULL. A
// sample is a batch's time divided by |kernels|.
static void run_batches(const char* name, const char* enqueue_name,
                        batch_case_t* cases, int count, double kernels,
                        bench_case_t* totals, bench_case_t* enqueues) {
  int reps = bench_reps();
  size_t n = (size_t)reps * (size_t)count;
  double* total = bench_xmalloc(sizeof(double) * n);
  double* enqueue = bench_xmalloc(sizeof(double) * n);
  bool warned = false;
  uint64_t e, t;
  for (int k = 0; k < count; ++k) {
    bench_settle(name, &warned);
    cases[k].run(cases[k].arg, &e, &t);
  }
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < count; ++k) {
      bench_settle(name, &warned);
      cases[k].run(cases[k].arg, &e, &t);
      size_t at = (size_t)k * (size_t)reps + (size_t)r;
      total[at] = (double)t / kernels;
      enqueue[at] = (double)e / kernels;
    }
  }
  for (int k = 0; k < count; ++k) {
    totals[k] = (bench_case_t){.variant = cases[k].variant, .iters = 1};
    bench_report_samples(name, &totals[k], &total[(size_t)k * (size_t)reps],
                         reps);
  }
  for (int k = 0; enqueue_name != NULL && k < count; ++k) {
    enqueues[k] = (bench_case_t){.variant = cases[k].enqueue_variant,
                                 .iters = 1};
    bench_report_samples(enqueue_name, &enqueues[k],
                         &enqueue[(size_t)k * (size_t)reps], reps);
  }
  free(total);
  free(enqueue);
}

//===-- dc ---------------------------------------------------------------===//

typedef struct dcx_t {
  dc_context_t* ctx;
  dc_device_t* dev;
} dcx_t;

static dc_stream_t* dc_new_stream(dc_device_t* dev, const char* label) {
  dc_stream_params_t params = {.label = label};
  dc_stream_t* s = NULL;
  DC_CHECK(dc_stream_create(dev, &params, &s));
  return s;
}

static uint64_t completed(dc_stream_t* s) {
  dc_stream_stats_t st;
  DC_CHECK(dc_stream_stats(s, &st));
  return st.completed;
}

//===-- Shared state -----------------------------------------------------===//

typedef struct bench_t {
  dcx_t dc;
  dc_kernel_t* empty;       // dc's empty kernel
  dc_stream_t* a;           // two streams, made before anything runs
  dc_stream_t* b;
  dc_event_t* event;
  bool have_ocl;
#ifdef DC_BENCH_OPENCL
  bench_ocl_t ocl;
  cl_program empty_program;
  cl_kernel empty_cl;
#endif
} bench_t;

static const dc_dispatch_t kOneItem = {.dims = 1, .global = {1}};

//===-- 1. 10,000 empty kernels on a stream -----------------------------===//

static void queue_dc_run(void* arg, uint64_t* enqueue_ns, uint64_t* total_ns) {
  bench_t* B = arg;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < QUEUE_KERNELS; ++i) {
    DC_CHECK(dc_stream_dispatch(B->a, B->empty, &kOneItem, NULL, 0));
  }
  uint64_t t1 = bench_now_ns();
  DC_CHECK(dc_stream_sync(B->a, DC_TIMEOUT_INFINITE));
  uint64_t t2 = bench_now_ns();
  *enqueue_ns = t1 - t0;
  *total_ns = t2 - t0;
}

#ifdef DC_BENCH_OPENCL
static void queue_ocl_run(void* arg, uint64_t* enqueue_ns,
                          uint64_t* total_ns) {
  bench_t* B = arg;
  size_t global = 1;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < QUEUE_KERNELS; ++i) {
    OCL_CHECK(clEnqueueNDRangeKernel(B->ocl.queues[0], B->empty_cl, 1, NULL,
                                     &global, NULL, 0, NULL, NULL));
  }
  uint64_t t1 = bench_now_ns();
  OCL_CHECK(clFinish(B->ocl.queues[0]));
  uint64_t t2 = bench_now_ns();
  *enqueue_ns = t1 - t0;
  *total_ns = t2 - t0;
}
#endif

static void bench_queue(bench_t* B) {
  const char* name = "10000 empty kernels on a stream (per kernel)";
  const char* ename = "10000 empty kernels on a stream, enqueue only "
                      "(per kernel)";
  // Every command of a batch must have run and succeeded (the calls abort
  // on an error).
  uint64_t before = completed(B->a), e, t;
  queue_dc_run(B, &e, &t);
  uint64_t done = completed(B->a) - before;
  if (done != QUEUE_KERNELS) {
    bench_note(name, "dc: %llu of %d commands completed after the sync; "
               "rows dropped", (unsigned long long)done, QUEUE_KERNELS);
    return;
  }
  bench_note(name, "dc: %d dc_stream_dispatch calls of a kernel with no "
             "arguments over 1 work-item on one stream, then one "
             "dc_stream_sync; pocl: %d clEnqueueNDRangeKernel (local NULL) "
             "on an in-order queue, then one clFinish; a sample is one "
             "batch's time / %d; %d samples per case; goal: dc under 1 us "
             "per kernel", QUEUE_KERNELS, QUEUE_KERNELS, QUEUE_KERNELS,
             bench_reps());
  bench_note(ename, "the same batches, timed from the first enqueue call "
             "to the return of the last one (the stream threads run "
             "commands meanwhile); informational");
  batch_case_t cases[2] = {
      {.variant = "dc 10000 stream dispatches+sync",
       .enqueue_variant = "dc 10000 stream dispatches",
       .run = queue_dc_run, .arg = B},
#ifdef DC_BENCH_OPENCL
      {.variant = "pocl 10000 enqueues+finish",
       .enqueue_variant = "pocl 10000 enqueues", .run = queue_ocl_run,
       .arg = B},
#endif
  };
  int count = B->have_ocl ? 2 : 1;
  bench_case_t totals[2], enqueues[2];
  run_batches(name, ename, cases, count, (double)QUEUE_KERNELS, totals,
              enqueues);
  if (count == 2) {
    bench_print_ratio(name, &totals[0], &totals[1], "median<1000");
    bench_print_ratio(ename, &enqueues[0], &enqueues[1], "-");
  } else {
    bench_note(name, "pocl not available: no baseline (goal: dc median "
               "under 1000 ns; here %.1f ns)", totals[0].median_ns);
  }
}

//===-- 2. two-stream dependent pair ------------------------------------===//

static void pair_dc_body(void* arg, uint64_t iters) {
  bench_t* B = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_stream_dispatch(B->a, B->empty, &kOneItem, NULL, 0));
    DC_CHECK(dc_stream_record(B->a, B->event));
    DC_CHECK(dc_stream_wait_event(B->b, B->event));
    DC_CHECK(dc_stream_dispatch(B->b, B->empty, &kOneItem, NULL, 0));
    DC_CHECK(dc_stream_sync(B->b, DC_TIMEOUT_INFINITE));
    DC_CHECK(dc_stream_sync(B->a, DC_TIMEOUT_INFINITE));
  }
}

// The pattern of pair_dc_body with kernels that write: returns whether B
// saw every value A wrote.
static bool pair_dc_check(bench_t* B, const char* name) {
  dc_program_t* p = bench_dc_build(B->dc.dev, kPairSource, "pair.cl");
  dc_kernel_t* put = bench_dc_find(p, "put");
  dc_kernel_t* next = bench_dc_find(p, "next");
  uint32_t *cell, *out;
  dc_buffer_t* bc = bench_dc_buffer(B->dc.dev, DC_DTYPE_U32, 1, "pair cell",
                                    (void**)&cell);
  dc_buffer_t* bo = bench_dc_buffer(B->dc.dev, DC_DTYPE_U32, 1, "pair out",
                                    (void**)&out);
  *cell = 0;
  *out = 0;
  bool ok = true;
  dc_arg_t next_args[2] = {dc_arg_buffer(bc), dc_arg_buffer(bo)};
  for (uint32_t i = 1; i <= PAIR_CHECKS && ok; ++i) {
    dc_arg_t put_args[2] = {dc_arg_buffer(bc), dc_arg_u32(i * 7u)};
    DC_CHECK(dc_stream_dispatch(B->a, put, &kOneItem, put_args, 2));
    DC_CHECK(dc_stream_record(B->a, B->event));
    DC_CHECK(dc_stream_wait_event(B->b, B->event));
    DC_CHECK(dc_stream_dispatch(B->b, next, &kOneItem, next_args, 2));
    DC_CHECK(dc_stream_sync(B->b, DC_TIMEOUT_INFINITE));
    DC_CHECK(dc_stream_sync(B->a, DC_TIMEOUT_INFINITE));
    if (*out != i * 7u + 1u) {
      bench_note(name, "dc: MISMATCH at iteration %u: B read %u, expected "
                 "%u; row dropped", i, *out - 1u, i * 7u);
      ok = false;
    }
  }
  dc_buffer_release(bc);
  dc_buffer_release(bo);
  dc_program_release(p);
  return ok;
}

#ifdef DC_BENCH_OPENCL
static void pair_ocl_body(void* arg, uint64_t iters) {
  bench_t* B = arg;
  size_t global = 1;
  for (uint64_t i = 0; i < iters; ++i) {
    cl_event ev;
    OCL_CHECK(clEnqueueNDRangeKernel(B->ocl.queues[0], B->empty_cl, 1, NULL,
                                     &global, NULL, 0, NULL, &ev));
    OCL_CHECK(clEnqueueNDRangeKernel(B->ocl.queues[1], B->empty_cl, 1, NULL,
                                     &global, NULL, 1, &ev, NULL));
    OCL_CHECK(clFinish(B->ocl.queues[1]));
    OCL_CHECK(clReleaseEvent(ev));
  }
}

static bool pair_ocl_check(bench_t* B, const char* name) {
  bench_ocl_t* o = &B->ocl;
  cl_program p = bench_ocl_build(o->ctx, o->device, kPairSource);
  cl_kernel put = bench_ocl_kernel(p, "put");
  cl_kernel next = bench_ocl_kernel(p, "next");
  cl_uint zero = 0;
  cl_mem cell = bench_ocl_buffer(o->ctx, sizeof(zero), &zero);
  cl_mem out = bench_ocl_buffer(o->ctx, sizeof(zero), &zero);
  OCL_CHECK(clSetKernelArg(put, 0, sizeof(cl_mem), &cell));
  OCL_CHECK(clSetKernelArg(next, 0, sizeof(cl_mem), &cell));
  OCL_CHECK(clSetKernelArg(next, 1, sizeof(cl_mem), &out));
  size_t global = 1;
  bool ok = true;
  for (cl_uint i = 1; i <= PAIR_CHECKS && ok; ++i) {
    cl_uint value = i * 7u, got = 0;
    cl_event ev;
    OCL_CHECK(clSetKernelArg(put, 1, sizeof(value), &value));
    OCL_CHECK(clEnqueueNDRangeKernel(o->queues[0], put, 1, NULL, &global,
                                     NULL, 0, NULL, &ev));
    OCL_CHECK(clEnqueueNDRangeKernel(o->queues[1], next, 1, NULL, &global,
                                     NULL, 1, &ev, NULL));
    OCL_CHECK(clFinish(o->queues[1]));
    OCL_CHECK(clReleaseEvent(ev));
    OCL_CHECK(clEnqueueReadBuffer(o->queues[1], out, CL_TRUE, 0, sizeof(got),
                                  &got, 0, NULL, NULL));
    if (got != value + 1u) {
      bench_note(name, "pocl: MISMATCH at iteration %u: q2 read %u, "
                 "expected %u; row dropped", i, got - 1u, value);
      ok = false;
    }
  }
  clReleaseMemObject(cell);
  clReleaseMemObject(out);
  clReleaseKernel(put);
  clReleaseKernel(next);
  clReleaseProgram(p);
  return ok;
}
#endif

static void bench_pair(bench_t* B) {
  const char* name = "two-stream dependent pair";
  if (!pair_dc_check(B, name)) return;
  bool ocl = false;
#ifdef DC_BENCH_OPENCL
  ocl = B->have_ocl && pair_ocl_check(B, name);
#endif
  bench_note(name, "per iteration, dc: dc_stream_dispatch (empty kernel, 1 "
             "work-item) on stream A, dc_stream_record of one event on A, "
             "dc_stream_wait_event on B, dc_stream_dispatch on B, "
             "dc_stream_sync of B then A; pocl: clEnqueueNDRangeKernel on "
             "queue 1 with an output event, clEnqueueNDRangeKernel on queue "
             "2 waiting for it, clFinish(queue 2), clReleaseEvent; checked "
             "first over %d iterations with kernels that write a value on A "
             "and read it on B; goal: dc at most half pocl's time",
             PAIR_CHECKS);
  bench_case_t cases[2] = {
      {.variant = "dc 2 streams + event", .body = pair_dc_body, .arg = B},
#ifdef DC_BENCH_OPENCL
      {.variant = "pocl 2 queues + event", .body = pair_ocl_body, .arg = B},
#endif
  };
  int count = ocl ? 2 : 1;
  bench_run_group(name, cases, count, BENCH_QUIESCE);
  if (count == 2) {
    bench_print_ratio(name, &cases[0], &cases[1], "ratio<=0.5");
  } else {
    bench_note(name, "pocl not available: no baseline");
  }
}

//===-- 3. event record + host wait -------------------------------------===//

static void record_dc_body(void* arg, uint64_t iters) {
  bench_t* B = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_stream_record(B->a, B->event));
    DC_CHECK(dc_event_wait(B->event, DC_TIMEOUT_INFINITE));
  }
}

#ifdef DC_BENCH_OPENCL
static void record_ocl_body(void* arg, uint64_t iters) {
  bench_t* B = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    cl_event ev;
    OCL_CHECK(clEnqueueMarkerWithWaitList(B->ocl.queues[0], 0, NULL, &ev));
    OCL_CHECK(clWaitForEvents(1, &ev));
    OCL_CHECK(clReleaseEvent(ev));
  }
}
#endif

static void bench_record(bench_t* B) {
  const char* name = "event record + host wait";
  DC_CHECK(dc_stream_sync(B->a, DC_TIMEOUT_INFINITE));
  uint64_t before = completed(B->a);
  record_dc_body(B, 100);
  if (completed(B->a) - before != 100 || dc_event_query(B->event) != DC_OK) {
    bench_note(name, "dc: the records did not all complete; row dropped");
    return;
  }
  bench_note(name, "dc: dc_stream_record on an idle stream, then "
             "dc_event_wait(event, DC_TIMEOUT_INFINITE), one event recorded "
             "again and again; pocl: clEnqueueMarkerWithWaitList on an idle "
             "in-order queue, clWaitForEvents, clReleaseEvent; "
             "informational");
  bench_case_t cases[2] = {
      {.variant = "dc record+wait", .body = record_dc_body, .arg = B},
#ifdef DC_BENCH_OPENCL
      {.variant = "pocl marker+wait", .body = record_ocl_body, .arg = B},
#endif
  };
  int count = B->have_ocl ? 2 : 1;
  bench_run_group(name, cases, count, BENCH_QUIESCE);
  if (count == 2) {
    bench_print_ratio(name, &cases[0], &cases[1], "-");
  } else {
    bench_note(name, "pocl not available: no baseline");
  }
}

//===-- 4. a stream group against one stream ----------------------------===//

typedef struct group_t {
  dc_kernel_t* kernel;
  dc_stream_group_t* group;
  dc_stream_t* streams[GROUP_STREAMS];  // the group's, borrowed
  dc_stream_t* one;
  // One set of buffers per stream of the group, so that streams running
  // at once never write the same buffer.
  dc_buffer_t* a[GROUP_STREAMS];
  dc_buffer_t* b[GROUP_STREAMS];
  dc_buffer_t* c[GROUP_STREAMS];
  float* hc[GROUP_STREAMS];
} group_t;

static const dc_dispatch_t kVaddGrid = {.dims = 1, .global = {VADD_N}};

// Queues vector add |i| of a batch on |s|, with the buffers of set |set|.
static void group_dispatch(group_t* g, dc_stream_t* s, size_t set) {
  dc_arg_t args[3] = {dc_arg_buffer(g->a[set]), dc_arg_buffer(g->b[set]),
                      dc_arg_buffer(g->c[set])};
  DC_CHECK(dc_stream_dispatch(s, g->kernel, &kVaddGrid, args, 3));
}

static void group_run(void* arg, uint64_t* enqueue_ns, uint64_t* total_ns) {
  group_t* g = arg;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < GROUP_KERNELS; ++i) {
    dc_stream_t* s = dc_stream_group_next(g->group, DC_PICK_ROUND_ROBIN);
    size_t set = 0;
    while (set + 1 < GROUP_STREAMS && g->streams[set] != s) ++set;
    group_dispatch(g, s, set);
  }
  uint64_t t1 = bench_now_ns();
  DC_CHECK(dc_stream_group_sync(g->group, DC_TIMEOUT_INFINITE));
  uint64_t t2 = bench_now_ns();
  *enqueue_ns = t1 - t0;
  *total_ns = t2 - t0;
}

static void one_stream_run(void* arg, uint64_t* enqueue_ns,
                           uint64_t* total_ns) {
  group_t* g = arg;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < GROUP_KERNELS; ++i) {
    group_dispatch(g, g->one, (size_t)i % GROUP_STREAMS);
  }
  uint64_t t1 = bench_now_ns();
  DC_CHECK(dc_stream_sync(g->one, DC_TIMEOUT_INFINITE));
  uint64_t t2 = bench_now_ns();
  *enqueue_ns = t1 - t0;
  *total_ns = t2 - t0;
}

static void direct_run(void* arg, uint64_t* enqueue_ns, uint64_t* total_ns) {
  group_t* g = arg;
  uint64_t t0 = bench_now_ns();
  for (int i = 0; i < GROUP_KERNELS; ++i) {
    size_t set = (size_t)i % GROUP_STREAMS;
    dc_arg_t args[3] = {dc_arg_buffer(g->a[set]), dc_arg_buffer(g->b[set]),
                        dc_arg_buffer(g->c[set])};
    DC_CHECK(dc_kernel_dispatch(g->kernel, &kVaddGrid, args, 3));
  }
  *total_ns = *enqueue_ns = bench_now_ns() - t0;
}

// Clears the outputs, runs one batch of |run| and compares every output
// with a + b.
static bool group_check(group_t* g, const char* name, const char* variant,
                        void (*run)(void*, uint64_t*, uint64_t*)) {
  for (size_t s = 0; s < GROUP_STREAMS; ++s) {
    memset(g->hc[s], 0, VADD_N * sizeof(float));
  }
  uint64_t e, t;
  run(g, &e, &t);
  for (size_t s = 0; s < GROUP_STREAMS; ++s) {
    for (size_t i = 0; i < VADD_N; ++i) {
      float want = (float)(i % 1000) + (float)(s + 1) * (float)(i % 77);
      if (g->hc[s][i] != want) {
        bench_note(name, "%s: MISMATCH in buffer %zu at element %zu: got "
                   "%g, expected %g; row dropped", variant, s, i,
                   (double)g->hc[s][i], (double)want);
        return false;
      }
    }
  }
  return true;
}

static void bench_group(bench_t* B) {
  const char* name = "1000 vector adds 4096 f32 (per dispatch)";
  group_t g = {0};
  dc_program_t* p = bench_dc_build(B->dc.dev, bench_vadd_source, "vadd.cl");
  g.kernel = bench_dc_find(p, "vadd");
  dc_stream_group_params_t gp = {.count = GROUP_STREAMS, .label = "group"};
  DC_CHECK(dc_stream_group_create(B->dc.dev, &gp, &g.group));
  for (size_t s = 0; s < GROUP_STREAMS; ++s) {
    g.streams[s] = dc_stream_group_stream(g.group, s);
  }
  g.one = dc_new_stream(B->dc.dev, "one stream");
  for (size_t s = 0; s < GROUP_STREAMS; ++s) {
    float *ha, *hb;
    g.a[s] = bench_dc_buffer(B->dc.dev, DC_DTYPE_F32, VADD_N, "vadd a",
                             (void**)&ha);
    g.b[s] = bench_dc_buffer(B->dc.dev, DC_DTYPE_F32, VADD_N, "vadd b",
                             (void**)&hb);
    g.c[s] = bench_dc_buffer(B->dc.dev, DC_DTYPE_F32, VADD_N, "vadd c",
                             (void**)&g.hc[s]);
    for (size_t i = 0; i < VADD_N; ++i) {
      ha[i] = (float)(i % 1000);
      hb[i] = (float)(s + 1) * (float)(i % 77);
    }
  }
  bool ok = group_check(&g, name, "group", group_run) &&
            group_check(&g, name, "one stream", one_stream_run) &&
            group_check(&g, name, "dc_kernel_dispatch", direct_run);
  if (ok) {
    bench_note(name, "a batch: %d dispatches of vadd over %d floats (work-"
               "group size left to the engine), spread round-robin "
               "(dc_stream_group_next) over a group of %d streams then "
               "dc_stream_group_sync, or all on one stream then "
               "dc_stream_sync, or as synchronous dc_kernel_dispatch calls; "
               "each stream has its own buffers; a sample is one batch's "
               "time / %d; informational", GROUP_KERNELS, VADD_N,
               GROUP_STREAMS, GROUP_KERNELS);
    batch_case_t cases[3] = {
        {.variant = "dc group of 4 streams", .run = group_run, .arg = &g},
        {.variant = "dc one stream", .run = one_stream_run, .arg = &g},
        {.variant = "dc_kernel_dispatch", .run = direct_run, .arg = &g},
    };
    bench_case_t totals[3];
    run_batches(name, NULL, cases, 3, (double)GROUP_KERNELS, totals, NULL);
    bench_print_ratio(name, &totals[0], &totals[1], "-");
  }
  for (size_t s = 0; s < GROUP_STREAMS; ++s) {
    dc_buffer_release(g.a[s]);
    dc_buffer_release(g.b[s]);
    dc_buffer_release(g.c[s]);
  }
  dc_stream_release(g.one);
  dc_stream_group_release(g.group);
  dc_program_release(p);
}

//===-- main -------------------------------------------------------------===//

int main(int argc, char** argv) {
  bench_init(argc, argv);
  const char* name = "streams";
  bench_t B = {0};

#ifdef DC_BENCH_OPENCL
  // pocl's cache in a private directory: set before the first OpenCL call.
  char pocl_dir[512];
  bench_make_temp_dir(pocl_dir, sizeof(pocl_dir), "streams-pocl");
  setenv("POCL_CACHE_DIR", pocl_dir, 1);
  setenv("POCL_KERNEL_CACHE", "1", 1);
#endif

  dc_context_params_t params = {.backends = "cpu", .kernel_cache_dir = "off"};
  DC_CHECK(dc_context_create(&params, &B.dc.ctx));
  DC_CHECK(dc_context_device(B.dc.ctx, 0, &B.dc.dev));
  dc_program_t* empty =
      bench_dc_build(B.dc.dev, bench_empty_source, "empty.cl");
  B.empty = bench_dc_find(empty, "empty");
  B.a = dc_new_stream(B.dc.dev, "A");
  B.b = dc_new_stream(B.dc.dev, "B");
  DC_CHECK(dc_event_create(B.dc.dev, DC_EVENT_DEFAULT, &B.event));
  const dc_device_info_t* info = dc_device_info(B.dc.dev);
  bench_note(name, "dc: device %s (%s), %u worker-pool threads; two streams "
             "(two stream threads) for the first three parts, five more "
             "for the last; kernel cache off (compiled in memory)",
             info->name, info->model,
             dc_worker_pool_thread_count(dc_context_worker_pool(B.dc.ctx)));

#ifdef DC_BENCH_OPENCL
  int threads_before = bench_thread_count();
  B.have_ocl = bench_ocl_open(&B.ocl, 2, name);
  if (B.have_ocl) {
    B.empty_program =
        bench_ocl_build(B.ocl.ctx, B.ocl.device, bench_empty_source);
    B.empty_cl = bench_ocl_kernel(B.empty_program, "empty");
    bench_note(name, "pocl: %s; two in-order queues on one context; "
               "private POCL_CACHE_DIR; threads in the process: %d before "
               "pocl, %d after", B.ocl.platform_version, threads_before,
               bench_thread_count());
  }
#else
  bench_note(name, "built without OpenCL (pocl): pocl baselines skipped");
#endif

  if (bench_want_part("BENCH_STREAMS", "enqueue")) bench_queue(&B);
  if (bench_want_part("BENCH_STREAMS", "pair")) bench_pair(&B);
  if (bench_want_part("BENCH_STREAMS", "record")) bench_record(&B);
  if (bench_want_part("BENCH_STREAMS", "group")) bench_group(&B);

  dc_stream_stats_t sa, sb;
  DC_CHECK(dc_stream_stats(B.a, &sa));
  DC_CHECK(dc_stream_stats(B.b, &sb));
  bench_note(name, "dc streams A and B: %llu and %llu commands submitted, "
             "%llu and %llu completed, %llu and %llu failed; threads in the "
             "process at the end: %d",
             (unsigned long long)sa.submitted, (unsigned long long)sb.submitted,
             (unsigned long long)sa.completed, (unsigned long long)sb.completed,
             (unsigned long long)sa.failed, (unsigned long long)sb.failed,
             bench_thread_count());

#ifdef DC_BENCH_OPENCL
  if (B.have_ocl) {
    clReleaseKernel(B.empty_cl);
    clReleaseProgram(B.empty_program);
    bench_ocl_close(&B.ocl);
  }
  bench_remove_tree(pocl_dir);
#endif
  dc_event_release(B.event);
  dc_stream_release(B.a);
  dc_stream_release(B.b);
  dc_program_release(empty);
  dc_context_release(B.dc.ctx);
  return 0;
}

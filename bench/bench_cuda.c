// bench_cuda.c: the engine on a CUDA device (cuda:0) against the same work
// done with CUDA directly (driver API, cuBLAS), side by side in one process
// run:
//
//   10000 empty kernels on a stream   per kernel: 10,000 dc_stream_dispatch
//                                     calls on one dc stream, then one
//                                     dc_stream_sync, vs 10,000
//                                     cuLaunchKernel on one CUstream, then
//                                     one cuStreamSynchronize
//   empty kernel round trip           one dispatch and its wait vs one
//                                     cuLaunchKernel + cuStreamSynchronize
//   vector add 256M f32               the built-in add kernel (3 GiB moved)
//                                     vs cuMemcpyDtoDAsync of 1 GiB (2 GiB
//                                     moved), per GiB moved (GB/s)
//   built-in matmul 1024, 4096        dc_builtin_matmul vs cublasSgemm
//                                     called directly (GFLOP/s)
//   graph replay, 100-kernel chain    per node: dc_graph_exec_run vs
//                                     cuGraphLaunch of a CUDA graph captured
//                                     from the same 100 launches
//   buffer create+release 1, 64 MiB   dc_buffer_create + release vs
//                                     cuMemAllocFromPoolAsync + cuMemFreeAsync
//                                     on a caching pool
//   host <-> device transfers         bench_cuda_transfer.c
//
// The engine side uses the public API only (dc/dc.h); the raw side is
// bench_cuda_raw.h, loaded with dlopen like the engine's backend, so the
// program builds without CUDA. Both sides use the GPU's primary context.
// Buffers, kernels, streams and graphs are made before anything is timed,
// and every row checks its results once before timing (aborting with a
// message when one is wrong).
//
// Without a CUDA device (no driver, no GPU) the program prints a note and
// exits 0, so run.sh works on machines without a GPU.
//
// Rows whose operation is long or whose unit is not the call (per kernel
// of a batch, per node of a replay, per GiB moved) take their samples
// here (run_sampled): one untimed call of each case, then BENCH_REPS
// rounds of one sample of every case in turn, each after a wait until the
// process is idle. The others use the harness as it is (bench_run_group,
// BENCH_QUIESCE).
//
// BENCH_CUDA=launch,roundtrip,vadd,matmul,graph,alloc,transfer (a
// comma-separated subset) runs only those parts.
//
// Besides row/ratio/note, this program prints `rate` records (GB/s,
// GFLOP/s from a row's median), which run.sh shows beside the medians.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cuda_parts.h"
#include "bench_util.h"
#include "dc/dc.h"
#include "harness.h"

#define LAUNCH_KERNELS 10000           // kernels per batch of row 1
#define GRAPH_NODES 100                // empty kernels per graph
#define GRAPH_CALLS 10                 // replays per sample
#define VADD_N ((size_t)256 << 20)     // 256M f32: 1 GiB per buffer
#define VADD_CALLS 4                   // operations per sample
#define GIB ((double)((size_t)1 << 30))
#define CHECK_RUN 4096                 // elements per checked range

static const dc_dispatch_t kOneItem = {.dims = 1, .global = {1}};

typedef struct bench_t {
  dc_context_t* ctx;
  dc_device_t* dev;      // cuda:0
  dc_program_t* empty_program;  // NULL when dc cannot build programs
  dc_kernel_t* empty;
  dc_stream_t* stream;
  bench_cu_t cu;
} bench_t;

//===-- Helpers ----------------------------------------------------------===//

// Prints "bench_cuda: <message>" and aborts: a wrong result.
static void fail(const char* format, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void fail(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "bench_cuda: ");
  vfprintf(stderr, format, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  abort();
}

//===-- 1. 10,000 empty kernels on a stream -----------------------------===//

static void launch_dc_stream(void* arg, uint64_t calls) {
  bench_t* B = arg;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < LAUNCH_KERNELS; ++i) {
      DC_CHECK(dc_stream_dispatch(B->stream, B->empty, &kOneItem, NULL, 0));
    }
    DC_CHECK(dc_stream_sync(B->stream, DC_TIMEOUT_INFINITE));
  }
}

static void launch_dc_direct(void* arg, uint64_t calls) {
  bench_t* B = arg;
  for (uint64_t c = 0; c < calls * LAUNCH_KERNELS; ++c) {
    DC_CHECK(dc_kernel_dispatch(B->empty, &kOneItem, NULL, 0));
  }
}

static void launch_raw(void* arg, uint64_t calls) {
  bench_cu_t* cu = &((bench_t*)arg)->cu;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < LAUNCH_KERNELS; ++i) {
      BENCH_CU(cu, bench_cu_launch_empty(cu, cu->stream));
    }
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

static uint64_t completed(dc_stream_t* s) {
  dc_stream_stats_t st;
  DC_CHECK(dc_stream_stats(s, &st));
  return st.completed;
}

static void bench_launch(bench_t* B) {
  const char* name = "10000 empty kernels on a cuda:0 stream (per kernel)";
  uint64_t before = completed(B->stream);
  launch_dc_stream(B, 1);
  uint64_t done = completed(B->stream) - before;
  if (done != LAUNCH_KERNELS) {
    fail("%s: %llu of %d dc stream commands completed after the sync", name,
         (unsigned long long)done, LAUNCH_KERNELS);
  }
  bench_note(name, "dc: %d dc_stream_dispatch of an empty kernel (no "
             "arguments, 1 work-item) on one stream of cuda:0, then one "
             "dc_stream_sync; raw: %d cuLaunchKernel (1x1, an 88-byte "
             "parameter like dc's launch record) on one non-blocking "
             "CUstream, then one cuStreamSynchronize; also %d synchronous "
             "dc_kernel_dispatch calls, for scale; a sample is one batch / "
             "%d; goal: dc at most 1.2x raw", LAUNCH_KERNELS,
             LAUNCH_KERNELS, LAUNCH_KERNELS, LAUNCH_KERNELS);
  bench_case_t cases[3] = {
      {.variant = "dc 10000 stream dispatches+sync",
       .body = launch_dc_stream, .arg = B},
      {.variant = "cuLaunchKernel x10000+sync", .body = launch_raw,
       .arg = B},
      {.variant = "dc 10000 dc_kernel_dispatch", .body = launch_dc_direct,
       .arg = B},
  };
  const double units[3] = {LAUNCH_KERNELS, LAUNCH_KERNELS, LAUNCH_KERNELS};
  bench_run_sampled(name, cases, 3, bench_reps(), 1, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.2");
  bench_print_ratio(name, &cases[2], &cases[1], "-");
}

//===-- 2. launch + sync round trip -------------------------------------===//

static void trip_dc_stream(void* arg, uint64_t iters) {
  bench_t* B = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_stream_dispatch(B->stream, B->empty, &kOneItem, NULL, 0));
    DC_CHECK(dc_stream_sync(B->stream, DC_TIMEOUT_INFINITE));
  }
}

static void trip_dc_direct(void* arg, uint64_t iters) {
  bench_t* B = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_kernel_dispatch(B->empty, &kOneItem, NULL, 0));
  }
}

static void trip_raw(void* arg, uint64_t iters) {
  bench_cu_t* cu = &((bench_t*)arg)->cu;
  for (uint64_t i = 0; i < iters; ++i) {
    BENCH_CU(cu, bench_cu_launch_empty(cu, cu->stream));
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

static void bench_roundtrip(bench_t* B) {
  const char* name = "empty kernel launch+sync round trip on cuda:0";
  bench_note(name, "per operation, dc: dc_stream_dispatch of the empty "
             "kernel then dc_stream_sync (goal: at most 1.2x raw), and "
             "dc_kernel_dispatch (synchronous), informational; raw: "
             "cuLaunchKernel then cuStreamSynchronize");
  bench_case_t cases[3] = {
      {.variant = "dc stream dispatch+sync", .body = trip_dc_stream,
       .arg = B},
      {.variant = "cuLaunchKernel+cuStreamSynchronize", .body = trip_raw,
       .arg = B},
      {.variant = "dc_kernel_dispatch", .body = trip_dc_direct, .arg = B},
  };
  bench_run_group(name, cases, 3, BENCH_QUIESCE);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.2");
  bench_print_ratio(name, &cases[2], &cases[1], "-");
}

//===-- 3. vector add against the copy bandwidth ------------------------===//

typedef struct vadd_t {
  bench_t* B;
  dc_kernel_t* add;
  dc_program_t* program4;  // add4: one float4 a work-item
  dc_kernel_t* add4;
  dc_buffer_t *a, *b, *c;
  CUdeviceptr src, dst;  // raw, 1 GiB each
} vadd_t;

// The built-in add does 4 elements a work-item (dc/builtins.h).
static const dc_dispatch_t kVaddGrid = {.dims = 1, .global = {VADD_N / 4}};

static void vadd_dc(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  dc_arg_t args[4] = {dc_arg_buffer(v->a), dc_arg_buffer(v->b),
                      dc_arg_buffer(v->c), dc_arg_u32((uint32_t)VADD_N)};
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_kernel_dispatch(v->add, &kVaddGrid, args, 4));
  }
}

// The same sum written for speed in OpenCL C: a float4 a work-item.
static const char kAdd4[] =
    "__kernel void add4(__global const float4* a, __global const float4* b,\n"
    "                   __global float4* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n";

static void vadd4_dc(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  dc_arg_t args[3] = {dc_arg_buffer(v->a), dc_arg_buffer(v->b),
                      dc_arg_buffer(v->c)};
  const dc_dispatch_t grid = {.dims = 1, .global = {VADD_N / 4}};
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_kernel_dispatch(v->add4, &grid, args, 3));
  }
}

static void copy_dc(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(v->c, 0, v->a, 0, VADD_N));
  }
}

static void copy_raw(void* arg, uint64_t calls) {
  vadd_t* v = arg;
  bench_cu_t* cu = &v->B->cu;
  for (uint64_t i = 0; i < calls; ++i) {
    BENCH_CU(cu, cu->d.memcpy_dtod_async(v->dst, v->src, VADD_N * 4,
                                         cu->stream));
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

static float pattern_a(size_t i) { return (float)(i % 1000); }
static float pattern_b(size_t i) { return (float)(i % 77) * 2.0f; }

// The offsets of the ranges checked: the start, the middle, the end.
static size_t check_at(int which) {
  size_t at[3] = {0, VADD_N / 2 - CHECK_RUN / 2, VADD_N - CHECK_RUN};
  return at[which];
}

// Checks c = a + b (|sum|) or c = a over the three ranges; |got| holds
// CHECK_RUN floats read from each in turn by |read|.
static void check_vadd(const char* what, bool sum,
                       void (*read)(vadd_t*, size_t, float*), vadd_t* v) {
  float got[CHECK_RUN];
  for (int r = 0; r < 3; ++r) {
    size_t at = check_at(r);
    read(v, at, got);
    for (size_t i = 0; i < CHECK_RUN; ++i) {
      float want = pattern_a(at + i) + (sum ? pattern_b(at + i) : 0.0f);
      if (got[i] != want) {
        fail("%s: element %zu is %g, expected %g", what, at + i,
             (double)got[i], (double)want);
      }
    }
  }
}

static void read_dc_c(vadd_t* v, size_t at, float* out) {
  DC_CHECK(dc_buffer_read(v->c, at, out, CHECK_RUN));
}

static void read_raw_dst(vadd_t* v, size_t at, float* out) {
  bench_cu_t* cu = &v->B->cu;
  BENCH_CU(cu, cu->d.memcpy_dtoh(out, v->dst + at * 4, CHECK_RUN * 4));
}

// Makes and fills the buffers: a and the raw source hold pattern_a, b
// pattern_b.
static void vadd_setup(vadd_t* v) {
  bench_cu_t* cu = &v->B->cu;
  v->a = bench_dc_buffer(v->B->dev, DC_DTYPE_F32, VADD_N, "vadd a", NULL);
  v->b = bench_dc_buffer(v->B->dev, DC_DTYPE_F32, VADD_N, "vadd b", NULL);
  v->c = bench_dc_buffer(v->B->dev, DC_DTYPE_F32, VADD_N, "vadd c", NULL);
  BENCH_CU(cu, cu->d.mem_alloc(&v->src, VADD_N * 4));
  BENCH_CU(cu, cu->d.mem_alloc(&v->dst, VADD_N * 4));
  float* host = bench_xmalloc(VADD_N * 4);
  for (size_t i = 0; i < VADD_N; ++i) host[i] = pattern_a(i);
  DC_CHECK(dc_buffer_write(v->a, 0, host, VADD_N));
  BENCH_CU(cu, cu->d.memcpy_htod(v->src, host, VADD_N * 4));
  for (size_t i = 0; i < VADD_N; ++i) host[i] = pattern_b(i);
  DC_CHECK(dc_buffer_write(v->b, 0, host, VADD_N));
  free(host);
}

static void vadd_notes(const char* name, const bench_case_t* cases) {
  bench_note(name, "bandwidth (bytes read + written / median time): dc "
             "add %.0f GB/s, cuMemcpyDtoDAsync %.0f GB/s, dc_buffer_copy "
             "%.0f GB/s, dc float4 add %.0f GB/s", GIB / cases[0].median_ns,
             GIB / cases[1].median_ns, GIB / cases[2].median_ns,
             GIB / cases[3].median_ns);
  for (int k = 0; k < 4; ++k) bench_print_rate(name, &cases[k], GIB, "GB/s");
}

static void bench_vadd(bench_t* B) {
  const char* name = "vector add 256M f32 vs device copy (per GiB moved)";
  vadd_t v = {.B = B};
  if (dc_builtin_kernel(B->dev, "add", &v.add) != DC_OK) {
    bench_note(name, "dc has no built-in add on cuda:0 (%s); row skipped",
               dc_last_error());
    return;
  }
  dc_program_params_t add4 = {.source = kAdd4, .name = "add4.cl"};
  DC_CHECK(dc_program_create(B->dev, &add4, &v.program4));
  DC_CHECK(dc_program_find_kernel(v.program4, "add4", &v.add4));
  vadd_setup(&v);
  vadd4_dc(&v, 1);
  check_vadd("dc float4 add", true, read_dc_c, &v);
  vadd_dc(&v, 1);
  check_vadd("dc built-in add", true, read_dc_c, &v);
  copy_raw(&v, 1);
  check_vadd("cuMemcpyDtoDAsync", false, read_raw_dst, &v);
  copy_dc(&v, 1);
  check_vadd("dc_buffer_copy", false, read_dc_c, &v);
  bench_note(name, "dc: the built-in add kernel (c = a + b over 256M f32, "
             "3 GiB moved, grid of 64M work-items of 4 elements each, group "
             "size left to the engine) by dc_kernel_dispatch; raw: "
             "cuMemcpyDtoDAsync of 1 GiB + cuStreamSynchronize (2 GiB "
             "moved); also dc_buffer_copy of 1 GiB, and an OpenCL C add of "
             "float4 (64M work-items); %d operations per sample, each "
             "divided by the GiB it moves; results checked first over 3 x "
             "%d elements; goal: dc's add at least 0.95x the copy's "
             "bandwidth (ratio<=1.053)",
             VADD_CALLS, CHECK_RUN);
  bench_case_t cases[4] = {
      {.variant = "dc built-in add (3 GiB/op)", .body = vadd_dc, .arg = &v},
      {.variant = "cuMemcpyDtoDAsync 1 GiB+sync (2 GiB/op)",
       .body = copy_raw, .arg = &v},
      {.variant = "dc_buffer_copy 1 GiB (2 GiB/op)", .body = copy_dc,
       .arg = &v},
      {.variant = "dc OpenCL C float4 add (3 GiB/op)", .body = vadd4_dc,
       .arg = &v},
  };
  const double gib = (double)(VADD_N * 4) / GIB;  // per buffer
  const double units[4] = {3.0 * gib, 2.0 * gib, 2.0 * gib, 3.0 * gib};
  bench_run_sampled(name, cases, 4, bench_reps(), VADD_CALLS, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.053");
  bench_print_ratio(name, &cases[2], &cases[1], "-");
  bench_print_ratio(name, &cases[3], &cases[1], "-");
  vadd_notes(name, cases);
  BENCH_CU(&B->cu, B->cu.d.mem_free(v.src));
  BENCH_CU(&B->cu, B->cu.d.mem_free(v.dst));
  dc_buffer_release(v.a);
  dc_buffer_release(v.b);
  dc_buffer_release(v.c);
  dc_kernel_release(v.add);
  dc_program_release(v.program4);
}

//===-- 4. the matrix product against cuBLAS ----------------------------===//

typedef struct matmul_t {
  bench_t* B;
  int n;  // square
  dc_buffer_t *a, *b, *c;
  CUdeviceptr ra, rb, rc;
  float* ha;  // host inputs, for the reference
  float* hb;
} matmul_t;

static void matmul_dc(void* arg, uint64_t iters) {
  matmul_t* m = arg;
  size_t n = (size_t)m->n;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_builtin_matmul(m->a, m->b, m->c, n, n, n));
  }
}

static void matmul_raw(void* arg, uint64_t iters) {
  matmul_t* m = arg;
  bench_cu_t* cu = &m->B->cu;
  for (uint64_t i = 0; i < iters; ++i) {
    cublasStatus_t s = bench_cu_sgemm(cu, m->ra, m->rb, m->rc, m->n, m->n,
                                      m->n);
    if (s != 0) fail("cublasSgemm_v2 of %d: status %d", m->n, s);
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

// Entries are multiples of 1/8 in [-0.75, 0.75], so every product is a
// multiple of 1/64 and every partial sum (at most 0.5625 n in size) is
// exact in f32 for n up to 2^14, whatever the summation order (and in
// TF32 too): every correct product is bit-identical to the reference.
static void matmul_fill(float* a, float* b, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    a[i] = (float)((int)(i * 7 % 13) - 6) / 8.0f;
    b[i] = (float)((int)(i * 5 % 11) - 5) / 8.0f;
  }
}

static void matmul_setup(matmul_t* m) {
  bench_cu_t* cu = &m->B->cu;
  size_t count = (size_t)m->n * (size_t)m->n;
  m->ha = bench_xmalloc(count * 4);
  m->hb = bench_xmalloc(count * 4);
  matmul_fill(m->ha, m->hb, count);
  m->a = bench_dc_buffer(m->B->dev, DC_DTYPE_F32, count, "matmul a", NULL);
  m->b = bench_dc_buffer(m->B->dev, DC_DTYPE_F32, count, "matmul b", NULL);
  m->c = bench_dc_buffer(m->B->dev, DC_DTYPE_F32, count, "matmul c", NULL);
  DC_CHECK(dc_buffer_write(m->a, 0, m->ha, count));
  DC_CHECK(dc_buffer_write(m->b, 0, m->hb, count));
  BENCH_CU(cu, cu->d.mem_alloc(&m->ra, count * 4));
  BENCH_CU(cu, cu->d.mem_alloc(&m->rb, count * 4));
  BENCH_CU(cu, cu->d.mem_alloc(&m->rc, count * 4));
  BENCH_CU(cu, cu->d.memcpy_htod(m->ra, m->ha, count * 4));
  BENCH_CU(cu, cu->d.memcpy_htod(m->rb, m->hb, count * 4));
}

static void matmul_teardown(matmul_t* m) {
  bench_cu_t* cu = &m->B->cu;
  BENCH_CU(cu, cu->d.mem_free(m->ra));
  BENCH_CU(cu, cu->d.mem_free(m->rb));
  BENCH_CU(cu, cu->d.mem_free(m->rc));
  dc_buffer_release(m->a);
  dc_buffer_release(m->b);
  dc_buffer_release(m->c);
  free(m->ha);
  free(m->hb);
}

// Compares 8 x 8 entries spread over C with the host's, and all of dc's
// C with the raw one's (both must be exact).
static void matmul_check(matmul_t* m) {
  size_t n = (size_t)m->n, count = n * n;
  float* dc = bench_xmalloc(count * 4);
  float* raw = bench_xmalloc(count * 4);
  DC_CHECK(dc_buffer_read(m->c, 0, dc, count));
  BENCH_CU(&m->B->cu, m->B->cu.d.memcpy_dtoh(raw, m->rc, count * 4));
  for (size_t r = 0; r < n; r += n / 8 - 1) {
    for (size_t c = 0; c < n; c += n / 8 - 1) {
      double want = 0.0;
      for (size_t k = 0; k < n; ++k) {
        want += (double)m->ha[r * n + k] * (double)m->hb[k * n + c];
      }
      if (dc[r * n + c] != (float)want || raw[r * n + c] != (float)want) {
        fail("matmul %zu: C[%zu][%zu] is %g (dc) and %g (cuBLAS), "
             "expected %g", n, r, c, (double)dc[r * n + c],
             (double)raw[r * n + c], want);
      }
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (dc[i] != raw[i]) {
      fail("matmul %zu: dc's C[%zu] is %g, cuBLAS's %g", n, i,
           (double)dc[i], (double)raw[i]);
    }
  }
  free(dc);
  free(raw);
}

static void bench_matmul_size(bench_t* B, int n) {
  char name[96], variant[64];
  snprintf(name, sizeof(name), "built-in matmul %d f32 on cuda:0", n);
  snprintf(variant, sizeof(variant), "dc_builtin_matmul (%s)",
           dc_builtin_matmul_backend(B->dev));
  matmul_t m = {.B = B, .n = n};
  matmul_setup(&m);
  if (dc_builtin_matmul(m.a, m.b, m.c, (size_t)n, (size_t)n, (size_t)n) !=
      DC_OK) {
    bench_note(name, "dc_builtin_matmul failed: %s; row skipped",
               dc_last_error());
    matmul_teardown(&m);
    return;
  }
  matmul_raw(&m, 1);
  matmul_check(&m);
  bench_case_t cases[2] = {
      {.variant = variant, .body = matmul_dc, .arg = &m},
      {.variant = "cublasSgemm+sync", .body = matmul_raw, .arg = &m},
  };
  bench_run_group(name, cases, 2, BENCH_QUIESCE);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.053");
  double flops = 2.0 * (double)n * (double)n * (double)n;
  for (int k = 0; k < 2; ++k) bench_print_rate(name, &cases[k], flops, "GFLOP/s");
  bench_note(name, "GFLOP/s: dc %.0f, cuBLAS %.0f", flops / cases[0].median_ns,
             flops / cases[1].median_ns);
  matmul_teardown(&m);
}

static void bench_matmul(bench_t* B) {
  const char* name = "built-in matmul on cuda:0";
  if (B->cu.blas == NULL) {
    bench_note(name, "no cuBLAS for the raw side (%s); rows skipped",
               B->cu.blas_library);
    return;
  }
  bench_note(name, "dc: dc_builtin_matmul (row-major, f32, square; %s on "
             "cuda:0); raw: cublasSgemm_v2 (%s, default math mode) of the "
             "same row-major product (C^T = B^T A^T) on the raw stream, then "
             "cuStreamSynchronize; inputs are multiples of 1/8, so both "
             "results are exact and checked entry by entry first; goal: dc "
             "at least 0.95x cuBLAS's GFLOP/s (ratio<=1.053)",
             dc_builtin_matmul_backend(B->dev), B->cu.blas_library);
  bench_matmul_size(B, 1024);
  bench_matmul_size(B, 4096);
}

//===-- 5. graph replay -------------------------------------------------===//

typedef struct graph_t {
  bench_t* B;
  dc_stream_group_t* group;
  dc_graph_exec_t* exec;
  CUgraph raw_graph;
  CUgraphExec raw_exec;
} graph_t;

static void graph_dc(void* arg, uint64_t calls) {
  graph_t* g = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_graph_exec_run(g->exec, NULL));
  }
}

static void graph_raw(void* arg, uint64_t calls) {
  graph_t* g = arg;
  bench_cu_t* cu = &g->B->cu;
  for (uint64_t i = 0; i < calls; ++i) {
    BENCH_CU(cu, cu->d.graph_launch(g->raw_exec, cu->stream));
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

// A chain of GRAPH_NODES dispatches of the empty kernel, instantiated
// onto a group of cuda:0's streams.
static void graph_build(graph_t* g) {
  bench_t* B = g->B;
  dc_stream_group_params_t gp = {.label = "graph"};  // the default count
  DC_CHECK(dc_stream_group_create(B->dev, &gp, &g->group));
  dc_graph_params_t params = {.name = "cuda chain"};
  dc_graph_t* graph = NULL;
  DC_CHECK(dc_graph_create(B->ctx, &params, &graph));
  char name[16], prev[16] = "";
  for (int i = 0; i < GRAPH_NODES; ++i) {
    snprintf(name, sizeof(name), "n%d", i);
    const char* after = prev;
    dc_op_options_t o = {.after = &after, .after_count = 1};
    DC_CHECK(dc_graph_dispatch(graph, name, B->empty, &kOneItem, NULL, 0,
                               i > 0 ? &o : NULL));
    memcpy(prev, name, sizeof(prev));
  }
  DC_CHECK(dc_graph_instantiate(graph, g->group, &g->exec));
  dc_graph_release(graph);  // the instance keeps what it needs
}

// Every op must have run on cuda:0 and succeeded, in each of two runs.
static void graph_check(graph_t* g) {
  if (dc_graph_exec_op_count(g->exec) != GRAPH_NODES) {
    fail("graph: %zu ops instantiated, expected %d",
         dc_graph_exec_op_count(g->exec), GRAPH_NODES);
  }
  for (int run = 0; run < 2; ++run) {
    DC_CHECK(dc_graph_exec_run(g->exec, NULL));
    for (size_t i = 0; i < GRAPH_NODES; ++i) {
      dc_op_report_t rep;
      DC_CHECK(dc_graph_exec_op(g->exec, i, &rep));
      const char* where = rep.device != NULL ? rep.device : "";
      if (rep.state != DC_OP_SUCCEEDED || rep.fell_back ||
          strcmp(where, dc_device_name(g->B->dev)) != 0) {
        fail("graph: op %s: state %d on '%s'%s", rep.name, (int)rep.state,
             where, rep.fell_back ? " (fell back)" : "");
      }
    }
  }
}

static void bench_graph(bench_t* B) {
  const char* name = "graph chain of 100 empty kernels on cuda:0, replay "
                     "(per node)";
  graph_t g = {.B = B};
  graph_build(&g);
  graph_check(&g);
  bench_cu_capture_empty_chain(&B->cu, GRAPH_NODES, &g.raw_graph,
                               &g.raw_exec);
  graph_raw(&g, 1);
  bench_note(name, "dc: dc_graph_exec_run of a chain of %d dispatches of "
             "the empty kernel (each after the one before), instantiated "
             "once onto a group of %zu cuda:0 streams; raw: a CUDA graph "
             "captured from %d cuLaunchKernel on the raw stream "
             "(cuStreamBeginCapture), instantiated once, cuGraphLaunch + "
             "cuStreamSynchronize; %d replays per sample, divided by %d "
             "nodes; goal: dc at most 1.3x raw", GRAPH_NODES,
             dc_stream_group_size(g.group), GRAPH_NODES, GRAPH_CALLS,
             GRAPH_NODES);
  bench_case_t cases[2] = {
      {.variant = "dc_graph_exec_run", .body = graph_dc, .arg = &g},
      {.variant = "cuGraphLaunch+sync (captured)", .body = graph_raw,
       .arg = &g},
  };
  const double units[2] = {GRAPH_NODES, GRAPH_NODES};
  bench_run_sampled(name, cases, 2, bench_reps(), GRAPH_CALLS, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.3");
  BENCH_CU(&B->cu, B->cu.d.graph_exec_destroy(g.raw_exec));
  BENCH_CU(&B->cu, B->cu.d.graph_destroy(g.raw_graph));
  dc_graph_exec_release(g.exec);
  dc_stream_group_release(g.group);
}

//===-- 6. pooled allocation --------------------------------------------===//

typedef struct alloc_t {
  bench_t* B;
  size_t bytes;
  CUmemoryPool pool;
} alloc_t;

static void alloc_dc(void* arg, uint64_t iters) {
  alloc_t* a = arg;
  const dc_buffer_params_t params = {.dtype = DC_DTYPE_U8,
                                     .length = a->bytes};
  for (uint64_t i = 0; i < iters; ++i) {
    dc_buffer_t* buffer = NULL;
    DC_CHECK(dc_buffer_create(a->B->dev, &params, &buffer));
    dc_buffer_release(buffer);
  }
}

static void alloc_raw(void* arg, uint64_t iters) {
  alloc_t* a = arg;
  bench_cu_t* cu = &a->B->cu;
  for (uint64_t i = 0; i < iters; ++i) {
    CUdeviceptr p = 0;
    BENCH_CU(cu, cu->d.mem_alloc_from_pool_async(&p, a->bytes, a->pool,
                                                 cu->stream));
    BENCH_CU(cu, cu->d.mem_free_async(p, cu->stream));
  }
  BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
}

static void bench_alloc_size(bench_t* B, CUmemoryPool pool, size_t mib) {
  char name[64];
  snprintf(name, sizeof(name), "cuda:0 buffer create+release %zu MiB", mib);
  alloc_t a = {.B = B, .bytes = mib << 20, .pool = pool};
  // The vector add leaves dc's cache full of its 1 GiB blocks, and a full
  // cache frees what is released: empty it so the row times the pool.
  DC_CHECK(dc_memory_pool_trim(B->dev, 0));
  dc_memory_pool_stats_t before, after;
  DC_CHECK(dc_memory_pool_stats(B->dev, &before));
  bench_case_t cases[2] = {
      {.variant = "dc buffer create+release", .body = alloc_dc, .arg = &a},
      {.variant = "cuMemAllocFromPoolAsync+cuMemFreeAsync", .body = alloc_raw,
       .arg = &a},
  };
  bench_run_group(name, cases, 2, BENCH_QUIESCE);
  bench_print_ratio(name, &cases[0], &cases[1], "-");
  DC_CHECK(dc_memory_pool_stats(B->dev, &after));
  bench_note(name, "dc pool hits %llu, misses %llu during the run",
             (unsigned long long)(after.hits - before.hits),
             (unsigned long long)(after.misses - before.misses));
}

static void bench_alloc(bench_t* B) {
  const char* name = "cuda:0 buffer create+release";
  char why[256];
  CUmemoryPool pool = bench_cu_pool_create(&B->cu, why, sizeof(why));
  if (pool == NULL) {
    bench_note(name, "raw side: %s; rows skipped", why);
    return;
  }
  bench_note(name, "dc: dc_buffer_create (u8, private) + dc_buffer_release "
             "on cuda:0, dc's pool warm; raw: cuMemAllocFromPoolAsync + "
             "cuMemFreeAsync on the raw stream from a pool of its own with "
             "a release threshold of UINT64_MAX (it keeps what is freed), "
             "one cuStreamSynchronize at the end of each batch; neither "
             "side touches the memory; informational");
  bench_alloc_size(B, pool, 1);
  bench_alloc_size(B, pool, 64);
  BENCH_CU(&B->cu, B->cu.d.mem_pool_trim_to(pool, 0));
  BENCH_CU(&B->cu, B->cu.d.mem_pool_destroy(pool));
}

//===-- main -------------------------------------------------------------===//

// Notes what runs where; the device's identity comes from both sides.
static void note_setup(bench_t* B, const char* name) {
  const dc_device_info_t* info = dc_device_info(B->dev);
  int major = 0, minor = 0;
  BENCH_CU(&B->cu, B->cu.d.device_get_attribute(
                       &major, BENCH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                       B->cu.device));
  BENCH_CU(&B->cu, B->cu.d.device_get_attribute(
                       &minor, BENCH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                       B->cu.device));
  bench_note(name, "dc: device %s (%s), compute capability %d.%d, %u SMs, "
             "kernel cache off (NVRTC compiles in memory); dc matmul: %s; "
             "raw: driver %d.%d, primary context shared with dc, one "
             "non-blocking stream, empty kernel from PTX for %s (JIT-compiled by "
             "the driver); cuBLAS: %s",
             info->name, info->model, major, minor, info->compute_units,
             dc_builtin_matmul_backend(B->dev), B->cu.driver_version / 1000,
             B->cu.driver_version % 1000 / 10, B->cu.empty_target,
             B->cu.blas_library);
}

// The empty kernel needs NVRTC; without it the kernel rows are skipped.
static bool build_empty(bench_t* B, const char* name) {
  dc_program_params_t params = {.source = bench_empty_source,
                                .name = "empty.cl"};
  if (dc_program_create(B->dev, &params, &B->empty_program) != DC_OK) {
    bench_note(name, "dc cannot build programs on cuda:0 (%s): the kernel "
               "rows are skipped", dc_last_error());
    return false;
  }
  B->empty = bench_dc_find(B->empty_program, "empty");
  dc_stream_params_t sp = {.label = "bench"};
  DC_CHECK(dc_stream_create(B->dev, &sp, &B->stream));
  return true;
}

static void run_parts(bench_t* B, bool kernels) {
  if (kernels && bench_want_part("BENCH_CUDA", "launch")) bench_launch(B);
  if (kernels && bench_want_part("BENCH_CUDA", "roundtrip")) {
    bench_roundtrip(B);
  }
  if (bench_want_part("BENCH_CUDA", "vadd")) bench_vadd(B);
  if (bench_want_part("BENCH_CUDA", "matmul")) bench_matmul(B);
  if (kernels && bench_want_part("BENCH_CUDA", "graph")) bench_graph(B);
  if (bench_want_part("BENCH_CUDA", "alloc")) bench_alloc(B);
  if (bench_want_part("BENCH_CUDA", "transfer")) bench_transfer(&B->cu);
}

int main(int argc, char** argv) {
  bench_init(argc, argv);
  const char* name = "cuda";
  bench_t B = {0};
  dc_context_params_t params = {.backends = "cuda",
                                .kernel_cache_dir = "off"};
  DC_CHECK(dc_context_create(&params, &B.ctx));
  if (dc_context_find_device(B.ctx, "cuda:0", &B.dev) != DC_OK) {
    bench_note(name, "no CUDA device found (no NVIDIA driver or GPU on "
               "this machine): CUDA rows skipped");
    dc_context_release(B.ctx);
    return 0;
  }
  char why[256];
  if (!bench_cu_open(&B.cu, 0, why, sizeof(why))) {
    fprintf(stderr, "bench_cuda: dc found cuda:0 but the raw side cannot "
            "use it: %s\n", why);
    return 1;
  }
  note_setup(&B, name);
  bool kernels = build_empty(&B, name);
  run_parts(&B, kernels);
  bench_cu_close(&B.cu);
  dc_stream_release(B.stream);
  dc_program_release(B.empty_program);
  dc_context_release(B.ctx);
  return 0;
}

// bench_kernels.c: kernels on the CPU device against the baselines a user
// would otherwise reach for, side by side in one process run:
//
//   vector add 16M f32       a dc kernel vs an OpenMP parallel loop (GB/s)
//   tiled matmul 1024        one OpenCL C source (16x16 __local tiles,
//                            barriers) built by dc and by pocl (GFLOP/s)
//   built-in matmul 1024     dc_builtin_matmul vs cblas_sgemm called
//                            directly, and the built-in "matmul" kernel
//                            dispatched directly (the engine's own path)
//   empty kernel round trip  one dispatch + wait vs pocl's enqueue + finish
//                            and vs an empty OpenMP parallel region
//   10,000 empty kernels     per kernel: dc's back-to-back synchronous
//                            dispatches (dc has no queue yet) vs pocl
//                            enqueuing 10,000 then finishing once
//   compile                  cold (fresh cache directory and context) and
//                            cache hit, dc vs pocl
//   particle step 1M         a kernel taking its parameters as one struct
//                            vs the same with separate arguments and vs
//                            an OpenMP loop (bench_kernels_struct.c)
//
// dc kernels are built and run as a user would: dc_program_create() and
// dc_kernel_dispatch(). The engine's kernel cache and pocl's live in private
// temporary directories, removed at exit, so the user's caches are never
// read or written. Every result is checked once against a host reference
// before anything is timed; a mismatch drops the row with a note.
//
// The pocl and OpenBLAS parts are built only where CMake found them
// (DC_BENCH_OPENCL, DC_BENCH_OPENBLAS); OpenMP where the compiler has it.
// A missing baseline leaves a note and its rows out.
//
// BENCH_KERNELS=vadd,tiled,matmul,empty,compile,struct (a comma-separated
// subset) runs only those parts.
//
// Slow rows (the kernel matrix products, 60 ms to 1 s each; the
// 10,000-kernel batches; the compiles) take one operation per sample,
// BENCH_SLOW_REPS samples per case (default: the smaller of BENCH_REPS and
// 11), after one untimed run of each case, interleaved case by case and
// each preceded by a wait until the process is idle. The other rows use the
// harness as it is (bench_run_group, BENCH_QUIESCE).
//
// pocl reads POCL_KERNEL_CACHE once per process, so the cold compile rows
// run in a child process (this program again, DC_BENCH_KERNELS_PART=
// compile-cold) with POCL_KERNEL_CACHE=0; dc's cold compiles run there too,
// interleaved with pocl's.
//
// Besides row/ratio/note, this program prints
//   rate   <name> <variant> <value> <unit>
// records (GB/s, GFLOP/s from a row's median), which run.sh shows beside
// the medians.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dc/dc.h"
#include "bench_kernels_struct.h"
#include "bench_opencl.h"
#include "bench_util.h"
#include "harness.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef DC_BENCH_OPENBLAS
// OpenBLAS's CBLAS entry point with its enums as ints (CblasRowMajor = 101,
// CblasNoTrans = 111), as dc's own fast path declares it; Debian keeps
// cblas.h behind the alternatives system, so no header is needed.
extern void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n,
                        int k, float alpha, const float* a, int lda,
                        const float* b, int ldb, float beta, float* c,
                        int ldc);
extern int openblas_get_num_threads(void);
extern char* openblas_get_corename(void);
extern char* openblas_get_config(void);
#endif

#define VADD_N ((size_t)16 << 20)  // 16M elements
#define MM_N 1024                  // square matrices
#define SMALL_N 16                 // the first run after a compile
#define QUEUE_KERNELS 10000

//===-- Kernel sources ---------------------------------------------------===//

// The empty kernel and vadd are bench_util.h's (bench_streams builds them
// too).

// The textbook tiled product: C (n x n) = A * B, row-major, n a multiple
// of 16; each 16x16 work-group stages 16x16 tiles of A and B in __local
// memory. dc and pocl build this very text.
static const char kTiledSource[] =
    "#define TILE 16\n"
    "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))\n"
    "void matmul_tiled(__global const float* A, __global const float* B,\n"
    "                  __global float* C, uint n) {\n"
    "  __local float As[TILE][TILE];\n"
    "  __local float Bs[TILE][TILE];\n"
    "  uint lx = get_local_id(0), ly = get_local_id(1);\n"
    "  uint col = get_global_id(0), row = get_global_id(1);\n"
    "  float acc = 0.0f;\n"
    "  for (uint t = 0; t < n; t += TILE) {\n"
    "    As[ly][lx] = A[row * n + t + lx];\n"
    "    Bs[ly][lx] = B[(t + ly) * n + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint i = 0; i < TILE; ++i) acc += As[ly][i] * Bs[i][lx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  C[row * n + col] = acc;\n"
    "}\n";

//===-- Small helpers ----------------------------------------------------===//

static int g_slow_reps = 11;

static int slow_reps(void) {
  const char* env = getenv("BENCH_SLOW_REPS");
  int reps = bench_reps() < 11 ? bench_reps() : 11;
  if (env != NULL && *env != '\0') {
    char* end = NULL;
    long v = strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > 100000) {
      fprintf(stderr, "BENCH_SLOW_REPS=%s is not a count from 1 to 100000\n",
              env);
      exit(2);
    }
    reps = (int)v;
  }
  return reps;
}

// Integer-valued floats in -2..2: every product and partial sum of the
// matrix products below is an integer under 2^24, so any summation order
// (tiles, FMA, OpenBLAS's blocking) gives exactly the reference.
static void fill_small_ints(float* p, size_t n, uint32_t seed) {
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = (float)((x >> 16) % 5) - 2.0f;
  }
}

static void host_matmul(const float* restrict a, const float* restrict b,
                        float* restrict c, int n) {
#ifdef _OPENMP
#pragma omp parallel for
#endif
  for (int i = 0; i < n; ++i) {
    float* ci = c + (size_t)i * n;
    for (int j = 0; j < n; ++j) ci[j] = 0.0f;
    for (int k = 0; k < n; ++k) {
      float aik = a[(size_t)i * n + k];
      const float* bk = b + (size_t)k * n;
      for (int j = 0; j < n; ++j) ci[j] += aik * bk[j];
    }
  }
}

// Compares |n| floats exactly; notes the first difference under |name|.
static bool same_floats(const char* name, const char* variant,
                        const float* got, const float* want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      bench_note(name, "%s: MISMATCH at element %zu: got %g, expected %g; "
                 "row dropped", variant, i, (double)got[i], (double)want[i]);
      return false;
    }
  }
  return true;
}

// Runs the cases of a slow group (bench_run_sampled): g_slow_reps rounds
// of one call of every case; a sample is the call's time divided by
// |ops_per_call|.
static void run_slow_group(const char* name, bench_case_t* cases, int count,
                           double ops_per_call) {
  double units[8];
  if (count > (int)(sizeof(units) / sizeof(units[0]))) abort();
  for (int k = 0; k < count; ++k) units[k] = ops_per_call;
  bench_run_sampled(name, cases, count, g_slow_reps, 1, units);
}

//===-- dc ---------------------------------------------------------------===//

typedef struct dcx_t {
  dc_context_t* ctx;
  dc_device_t* dev;
  uint32_t threads;
} dcx_t;

static dcx_t dc_open(const char* cache_dir) {
  dc_context_params_t params = {.backends = "cpu",
                                .kernel_cache_dir = cache_dir};
  dcx_t x = {0};
  DC_CHECK(dc_context_create(&params, &x.ctx));
  DC_CHECK(dc_context_device(x.ctx, 0, &x.dev));
  x.threads = dc_worker_pool_thread_count(dc_context_worker_pool(x.ctx));
  return x;
}

static dc_buffer_t* dc_f32(dc_device_t* dev, size_t n, const char* label,
                          float** host) {
  return bench_dc_buffer(dev, DC_DTYPE_F32, n, label, (void**)host);
}

// Notes how |variant|'s dispatches used the worker pool since |before|.
static void note_pool(const char* name, const char* variant, dcx_t* x,
                      const dc_worker_pool_stats_t* before) {
  dc_worker_pool_stats_t s;
  DC_CHECK(dc_worker_pool_stats(dc_context_worker_pool(x->ctx), &s));
  bench_note(name, "%s: worker pool: %llu jobs on the workers, %llu on the "
             "caller alone, %llu wakeups of parked workers", variant,
             (unsigned long long)(s.jobs - before->jobs),
             (unsigned long long)(s.inline_jobs - before->inline_jobs),
             (unsigned long long)(s.wakeups - before->wakeups));
}

static dc_worker_pool_stats_t pool_stats(dcx_t* x) {
  dc_worker_pool_stats_t s;
  DC_CHECK(dc_worker_pool_stats(dc_context_worker_pool(x->ctx), &s));
  return s;
}

//===-- Shared state -----------------------------------------------------===//

typedef struct bench_t {
  dcx_t dc;
  char dc_cache[512];
  bool have_ocl;
#ifdef DC_BENCH_OPENCL
  bench_ocl_t ocl;
#endif
  // 1024 x 1024 inputs and the host reference product.
  float* mm_a;
  float* mm_b;
  float* mm_ref;
} bench_t;

// bench_dc_build() with the build option -dc-checked (checked mode).
static dc_program_t* build_checked(dc_device_t* dev, const char* source,
                                   const char* name) {
  dc_program_params_t params = {.source = source, .name = name,
                                .options = "-dc-checked"};
  dc_program_t* p = NULL;
  DC_CHECK(dc_program_create(dev, &params, &p));
  return p;
}

//===-- 1. vector add ----------------------------------------------------===//

typedef struct vadd_t {
  dc_kernel_t* kernel;
  dc_kernel_t* checked;  // the same kernel in checked mode
  dc_buffer_t* a;
  dc_buffer_t* b;
  dc_buffer_t* c;
  float* ha;
  float* hb;
  float* hc;
  int threads;
} vadd_t;

static void vadd_run(vadd_t* v, dc_kernel_t* k, uint64_t iters) {
  dc_arg_t args[3] = {dc_arg_buffer(v->a), dc_arg_buffer(v->b),
                      dc_arg_buffer(v->c)};
  dc_dispatch_t grid = {.dims = 1, .global = {VADD_N}};
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_kernel_dispatch(k, &grid, args, 3));
  }
}

static void vadd_dc_body(void* arg, uint64_t iters) {
  vadd_t* v = arg;
  vadd_run(v, v->kernel, iters);
}

static void vadd_checked_body(void* arg, uint64_t iters) {
  vadd_t* v = arg;
  vadd_run(v, v->checked, iters);
}

#ifdef _OPENMP
static void vadd_omp_body(void* arg, uint64_t iters) {
  vadd_t* v = arg;
  const float* restrict a = v->ha;
  const float* restrict b = v->hb;
  float* restrict c = v->hc;
  const long n = (long)VADD_N;
  for (uint64_t it = 0; it < iters; ++it) {
#pragma omp parallel for num_threads(v->threads)
    for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];
    bench_escape(c);
  }
}
#endif

static void bench_vadd(bench_t* B) {
  const char* name = "vector add 16M f32";
  vadd_t v = {.threads = (int)B->dc.threads};
  v.a = dc_f32(B->dc.dev, VADD_N, "vadd a", &v.ha);
  v.b = dc_f32(B->dc.dev, VADD_N, "vadd b", &v.hb);
  v.c = dc_f32(B->dc.dev, VADD_N, "vadd c", &v.hc);
  float* want = bench_xmalloc(VADD_N * sizeof(float));
  for (size_t i = 0; i < VADD_N; ++i) {
    v.ha[i] = (float)(i % 1000);
    v.hb[i] = (float)(i % 777) * 2.0f;
    want[i] = v.ha[i] + v.hb[i];
  }
  dc_program_t* p = bench_dc_build(B->dc.dev, bench_vadd_source, "vadd.cl");
  v.kernel = bench_dc_find(p, "vadd");
  dc_program_t* pc = build_checked(B->dc.dev, bench_vadd_source, "vadd.cl");
  v.checked = bench_dc_find(pc, "vadd");
  bool ok = true;
  memset(v.hc, 0, VADD_N * sizeof(float));
  vadd_dc_body(&v, 1);
  ok = ok && same_floats(name, "dc kernel", v.hc, want, VADD_N);
  memset(v.hc, 0, VADD_N * sizeof(float));
  vadd_checked_body(&v, 1);
  ok = ok && same_floats(name, "dc kernel checked", v.hc, want, VADD_N);
#ifdef _OPENMP
  memset(v.hc, 0, VADD_N * sizeof(float));
  vadd_omp_body(&v, 1);
  ok = ok && same_floats(name, "openmp", v.hc, want, VADD_N);
#endif
  free(want);
  if (ok) {
    dc_kernel_info_t info;
    DC_CHECK(dc_kernel_info(v.kernel, &info));
    bench_note(name, "dc: 1-D grid of %zu, work-group size left to the "
               "engine, execution '%s'; openmp: parallel for, "
               "num_threads(%d), default schedule; both read and write the "
               "same three buffers; GB/s counts 12 bytes per element",
               (size_t)VADD_N, info.execution, v.threads);
    bench_case_t cases[] = {
        {.variant = "dc kernel", .body = vadd_dc_body, .arg = &v},
#ifdef _OPENMP
        {.variant = "openmp", .body = vadd_omp_body, .arg = &v},
#endif
        {.variant = "dc kernel checked", .body = vadd_checked_body,
         .arg = &v},
    };
    int count = (int)(sizeof(cases) / sizeof(cases[0]));
    dc_worker_pool_stats_t before = pool_stats(&B->dc);
    bench_run_group(name, cases, count, BENCH_QUIESCE);
    note_pool(name, "dc kernel", &B->dc, &before);
    for (int k = 0; k < count; ++k) {
      bench_print_rate(name, &cases[k], 3.0 * 4.0 * (double)VADD_N, "GB/s");
    }
#ifdef _OPENMP
    // dc >= 0.95x OpenMP's bandwidth <=> time ratio <= 1/0.95.
    bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.05263");
#else
    bench_note(name, "built without OpenMP: no baseline");
#endif
    // Checked mode costs at most half again the unchecked time.
    bench_print_ratio(name, &cases[count - 1], &cases[0], "ratio<=1.5");
  }
  dc_program_release(p);
  dc_program_release(pc);
  dc_buffer_release(v.a);
  dc_buffer_release(v.b);
  dc_buffer_release(v.c);
}

//===-- 2. tiled matmul, dc vs pocl -------------------------------------===//

typedef struct tiled_t {
  dc_kernel_t* kernel;
  dc_kernel_t* checked;  // the same kernel in checked mode
  dc_buffer_t* a;
  dc_buffer_t* b;
  dc_buffer_t* c;
  float* hc;
#ifdef DC_BENCH_OPENCL
  bench_ocl_t* ocl;
  cl_kernel ck;
  cl_mem ma, mb, mc;
#endif
} tiled_t;

static void tiled_run(tiled_t* t, dc_kernel_t* k, uint64_t iters) {
  dc_arg_t args[4] = {dc_arg_buffer(t->a), dc_arg_buffer(t->b),
                      dc_arg_buffer(t->c), dc_arg_u32(MM_N)};
  dc_dispatch_t grid = {.dims = 2, .global = {MM_N, MM_N}, .local = {16, 16}};
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_kernel_dispatch(k, &grid, args, 4));
  }
}

static void tiled_dc_body(void* arg, uint64_t iters) {
  tiled_t* t = arg;
  tiled_run(t, t->kernel, iters);
}

static void tiled_checked_body(void* arg, uint64_t iters) {
  tiled_t* t = arg;
  tiled_run(t, t->checked, iters);
}

#ifdef DC_BENCH_OPENCL
static void tiled_ocl_body(void* arg, uint64_t iters) {
  tiled_t* t = arg;
  size_t global[2] = {MM_N, MM_N}, local[2] = {16, 16};
  for (uint64_t i = 0; i < iters; ++i) {
    OCL_CHECK(clEnqueueNDRangeKernel(t->ocl->queues[0], t->ck, 2, NULL, global,
                                     local, 0, NULL, NULL));
    OCL_CHECK(clFinish(t->ocl->queues[0]));
  }
}
#endif

static void bench_tiled(bench_t* B) {
  const char* name = "tiled matmul 1024 (OpenCL C)";
  const size_t nn = (size_t)MM_N * MM_N;
  tiled_t t = {0};
  float *ha, *hb;
  t.a = dc_f32(B->dc.dev, nn, "tiled a", &ha);
  t.b = dc_f32(B->dc.dev, nn, "tiled b", &hb);
  t.c = dc_f32(B->dc.dev, nn, "tiled c", &t.hc);
  memcpy(ha, B->mm_a, nn * sizeof(float));
  memcpy(hb, B->mm_b, nn * sizeof(float));
  dc_program_t* p = bench_dc_build(B->dc.dev, kTiledSource, "matmul_tiled.cl");
  t.kernel = bench_dc_find(p, "matmul_tiled");
  dc_program_t* pc = build_checked(B->dc.dev, kTiledSource, "matmul_tiled.cl");
  t.checked = bench_dc_find(pc, "matmul_tiled");
  memset(t.hc, 0, nn * sizeof(float));
  tiled_dc_body(&t, 1);
  bool ok = same_floats(name, "dc", t.hc, B->mm_ref, nn);
  memset(t.hc, 0, nn * sizeof(float));
  tiled_checked_body(&t, 1);
  ok = ok && same_floats(name, "dc checked", t.hc, B->mm_ref, nn);
#ifdef DC_BENCH_OPENCL
  cl_program cp = NULL;
  if (B->have_ocl) {
    t.ocl = &B->ocl;
    cp = bench_ocl_build(B->ocl.ctx, B->ocl.device, kTiledSource);
    t.ck = bench_ocl_kernel(cp, "matmul_tiled");
    t.ma = bench_ocl_buffer(B->ocl.ctx, nn * sizeof(float), B->mm_a);
    t.mb = bench_ocl_buffer(B->ocl.ctx, nn * sizeof(float), B->mm_b);
    t.mc = bench_ocl_buffer(B->ocl.ctx, nn * sizeof(float), NULL);
    cl_uint n = MM_N;
    OCL_CHECK(clSetKernelArg(t.ck, 0, sizeof(cl_mem), &t.ma));
    OCL_CHECK(clSetKernelArg(t.ck, 1, sizeof(cl_mem), &t.mb));
    OCL_CHECK(clSetKernelArg(t.ck, 2, sizeof(cl_mem), &t.mc));
    OCL_CHECK(clSetKernelArg(t.ck, 3, sizeof(cl_uint), &n));
    tiled_ocl_body(&t, 1);
    float* got = bench_xmalloc(nn * sizeof(float));
    OCL_CHECK(clEnqueueReadBuffer(B->ocl.queues[0], t.mc, CL_TRUE, 0,
                                  nn * sizeof(float), got, 0, NULL, NULL));
    ok = ok && same_floats(name, "pocl", got, B->mm_ref, nn);
    free(got);
  }
#endif
  if (ok) {
    dc_kernel_info_t info;
    DC_CHECK(dc_kernel_info(t.kernel, &info));
    bench_note(name, "both build the same source; 16x16 work-groups over a "
               "1024x1024 grid; dc execution '%s'; GFLOP/s counts 2*n^3",
               info.execution);
    bench_case_t cases[3] = {
        {.variant = "dc", .body = tiled_dc_body, .arg = &t},
    };
    int count = 1;
#ifdef DC_BENCH_OPENCL
    if (B->have_ocl) {
      cases[count++] = (bench_case_t){.variant = "pocl",
                                      .body = tiled_ocl_body, .arg = &t};
    }
#endif
    cases[count++] = (bench_case_t){.variant = "dc checked",
                                    .body = tiled_checked_body, .arg = &t};
    run_slow_group(name, cases, count, 1.0);
    for (int k = 0; k < count; ++k) {
      bench_print_rate(name, &cases[k], 2.0 * MM_N * MM_N * (double)MM_N,
                 "GFLOP/s");
    }
    if (B->have_ocl) {
      // dc >= 3x pocl's speed.
      bench_print_ratio(name, &cases[0], &cases[1], "ratio<=0.333333");
    } else {
      bench_note(name, "pocl not available: no baseline");
    }
    // Checked mode costs at most twice the unchecked time.
    bench_print_ratio(name, &cases[count - 1], &cases[0], "ratio<=2");
  }
  dc_program_release(pc);
#ifdef DC_BENCH_OPENCL
  if (cp != NULL) {
    clReleaseMemObject(t.ma);
    clReleaseMemObject(t.mb);
    clReleaseMemObject(t.mc);
    clReleaseKernel(t.ck);
    clReleaseProgram(cp);
  }
#endif
  dc_program_release(p);
  dc_buffer_release(t.a);
  dc_buffer_release(t.b);
  dc_buffer_release(t.c);
}

//===-- 3. built-in matmul vs OpenBLAS ----------------------------------===//

typedef struct mm_t {
  dc_kernel_t* kernel;  // the built-in "matmul" kernel
  dc_buffer_t* a;
  dc_buffer_t* b;
  dc_buffer_t* c;
  float *ha, *hb, *hc;
} mm_t;

static void mm_builtin_body(void* arg, uint64_t iters) {
  mm_t* m = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_builtin_matmul(m->a, m->b, m->c, MM_N, MM_N, MM_N));
  }
}

static void mm_kernel_body(void* arg, uint64_t iters) {
  mm_t* m = arg;
  // As dc_builtin_matmul dispatches it when OpenBLAS is missing.
  dc_arg_t args[6] = {dc_arg_buffer(m->a), dc_arg_buffer(m->b),
                      dc_arg_buffer(m->c), dc_arg_u32(MM_N), dc_arg_u32(MM_N),
                      dc_arg_u32(MM_N)};
  dc_dispatch_t grid = {.dims = 2, .global = {MM_N, MM_N / 4},
                        .local = {16, 4}};
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_kernel_dispatch(m->kernel, &grid, args, 6));
  }
}

#ifdef DC_BENCH_OPENBLAS
static void mm_blas_body(void* arg, uint64_t iters) {
  mm_t* m = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    cblas_sgemm(101, 111, 111, MM_N, MM_N, MM_N, 1.0f, m->ha, MM_N, m->hb,
                MM_N, 0.0f, m->hc, MM_N);
  }
  bench_escape(m->hc);
}
#endif

static void bench_builtin_matmul(bench_t* B) {
  const char* name = "built-in matmul 1024";
  const char* kname = "built-in matmul kernel 1024";
  const size_t nn = (size_t)MM_N * MM_N;
  const double flops = 2.0 * MM_N * MM_N * (double)MM_N;
  mm_t m = {0};
  m.a = dc_f32(B->dc.dev, nn, "mm a", &m.ha);
  m.b = dc_f32(B->dc.dev, nn, "mm b", &m.hb);
  m.c = dc_f32(B->dc.dev, nn, "mm c", &m.hc);
  memcpy(m.ha, B->mm_a, nn * sizeof(float));
  memcpy(m.hb, B->mm_b, nn * sizeof(float));
  if (dc_builtin_kernel(B->dc.dev, "matmul", &m.kernel) != DC_OK) {
    bench_note(kname, "dc_builtin_kernel(\"matmul\") failed, row dropped: "
               "%s", dc_last_error());
  }
  const char* backend = dc_builtin_matmul_backend(B->dc.dev);
  bench_note(name, "dc_builtin_matmul backend: %s", backend);

  memset(m.hc, 0, nn * sizeof(float));
  mm_builtin_body(&m, 1);
  bool ok_builtin = same_floats(name, "dc_builtin_matmul", m.hc, B->mm_ref,
                                nn);
  bool ok_kernel = false;
  if (m.kernel != NULL) {
    memset(m.hc, 0, nn * sizeof(float));
    mm_kernel_body(&m, 1);
    ok_kernel = same_floats(kname, "dc matmul kernel", m.hc, B->mm_ref, nn);
  }
#ifdef DC_BENCH_OPENBLAS
  memset(m.hc, 0, nn * sizeof(float));
  mm_blas_body(&m, 1);
  bool ok_blas = same_floats(name, "openblas sgemm", m.hc, B->mm_ref, nn);
  ok_builtin = ok_builtin && ok_blas;
  ok_kernel = ok_kernel && ok_blas;
  bench_note(name, "OpenBLAS %s, core %s, %d threads; OPENBLAS_NUM_THREADS="
             "%s OPENBLAS_CORETYPE=%s; both sides use the same buffers",
             openblas_get_config(), openblas_get_corename(),
             openblas_get_num_threads(), bench_env_or("OPENBLAS_NUM_THREADS"),
             bench_env_or("OPENBLAS_CORETYPE"));
  if (ok_builtin) {
    bench_case_t cases[] = {
        {.variant = "dc_builtin_matmul", .body = mm_builtin_body, .arg = &m},
        {.variant = "openblas sgemm", .body = mm_blas_body, .arg = &m},
    };
    bench_run_group(name, cases, 2, BENCH_QUIESCE);
    for (int k = 0; k < 2; ++k) bench_print_rate(name, &cases[k], flops, "GFLOP/s");
    // >= 0.9x OpenBLAS's speed <=> time ratio <= 1/0.9.
    bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.11111");
  }
#else
  bench_note(name, "built without OpenBLAS: no baseline");
  if (ok_builtin) {
    bench_case_t cases[1] = {
        {.variant = "dc_builtin_matmul", .body = mm_builtin_body, .arg = &m}};
    run_slow_group(name, cases, 1, 1.0);
    bench_print_rate(name, &cases[0], flops, "GFLOP/s");
  }
#endif
  if (ok_kernel) {
    bench_note(kname, "the built-in 'matmul' kernel dispatched directly "
               "(16x4 groups), the path dc_builtin_matmul takes without "
               "OpenBLAS; goal: 30 GFLOP/s, i.e. a median under 71.58 ms");
    bench_case_t cases[2] = {
        {.variant = "dc matmul kernel", .body = mm_kernel_body, .arg = &m},
#ifdef DC_BENCH_OPENBLAS
        {.variant = "openblas sgemm", .body = mm_blas_body, .arg = &m},
#endif
    };
    int count = (int)(sizeof(cases) / sizeof(cases[0]));
#ifndef DC_BENCH_OPENBLAS
    count = 1;
#endif
    run_slow_group(kname, cases, count, 1.0);
    for (int k = 0; k < count; ++k) {
      bench_print_rate(kname, &cases[k], flops, "GFLOP/s");
    }
    if (count == 2) {
      // 30 GFLOP/s: 2 * 1024^3 flop / 30 flop/ns = 71582788 ns.
      bench_print_ratio(kname, &cases[0], &cases[1], "median<71582788");
    }
  }
  dc_kernel_release(m.kernel);
  dc_buffer_release(m.a);
  dc_buffer_release(m.b);
  dc_buffer_release(m.c);
}

//===-- 4. and 5. empty kernels -----------------------------------------===//

typedef struct empty_t {
  dc_kernel_t* kernel;
  size_t global;
  int threads;
  int per_call;  // kernels per call of a queue body
#ifdef DC_BENCH_OPENCL
  bench_ocl_t* ocl;
  cl_kernel ck;
#endif
} empty_t;

static void empty_dc_body(void* arg, uint64_t iters) {
  empty_t* e = arg;
  dc_dispatch_t grid = {.dims = 1, .global = {e->global}};
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_kernel_dispatch(e->kernel, &grid, NULL, 0));
  }
}

#ifdef DC_BENCH_OPENCL
static void empty_ocl_body(void* arg, uint64_t iters) {
  empty_t* e = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    OCL_CHECK(clEnqueueNDRangeKernel(e->ocl->queues[0], e->ck, 1, NULL,
                                     &e->global, NULL, 0, NULL, NULL));
    OCL_CHECK(clFinish(e->ocl->queues[0]));
  }
}
#endif

#ifdef _OPENMP
static void empty_omp_body(void* arg, uint64_t iters) {
  empty_t* e = arg;
  for (uint64_t i = 0; i < iters; ++i) {
#pragma omp parallel num_threads(e->threads)
    { bench_escape(e); }
  }
}
#endif

// 10,000 kernels a call: dc, one synchronous dispatch after another.
static void queue_dc_body(void* arg, uint64_t iters) {
  empty_t* e = arg;
  empty_dc_body(e, iters * (uint64_t)e->per_call);
}

#ifdef DC_BENCH_OPENCL
// 10,000 kernels a call: pocl, all enqueued, then one clFinish.
static void queue_ocl_body(void* arg, uint64_t iters) {
  empty_t* e = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    for (int k = 0; k < e->per_call; ++k) {
      OCL_CHECK(clEnqueueNDRangeKernel(e->ocl->queues[0], e->ck, 1, NULL,
                                       &e->global, NULL, 0, NULL, NULL));
    }
    OCL_CHECK(clFinish(e->ocl->queues[0]));
  }
}
#endif

static void bench_empty(bench_t* B) {
  dc_program_t* p = bench_dc_build(B->dc.dev, bench_empty_source, "empty.cl");
  empty_t e = {.kernel = bench_dc_find(p, "empty"),
               .threads = (int)B->dc.threads, .per_call = QUEUE_KERNELS};
#ifdef DC_BENCH_OPENCL
  cl_program cp = NULL;
  if (B->have_ocl) {
    e.ocl = &B->ocl;
    cp = bench_ocl_build(B->ocl.ctx, B->ocl.device, bench_empty_source);
    e.ck = bench_ocl_kernel(cp, "empty");
  }
#endif
  static const size_t grids[2] = {1, 64};
  for (int g = 0; g < 2; ++g) {
    char name[96];
    snprintf(name, sizeof(name), "empty kernel round trip (%zu item%s)",
             grids[g], grids[g] == 1 ? "" : "s");
    e.global = grids[g];
    // Nothing to compare: the check is that every call succeeds (the
    // bodies abort otherwise).
    bench_case_t cases[3];
    int count = 0;
    cases[count++] = (bench_case_t){.variant = "dc dispatch",
                                    .body = empty_dc_body, .arg = &e};
#ifdef DC_BENCH_OPENCL
    int ocl_at = -1;
    if (B->have_ocl) {
      ocl_at = count;
      cases[count++] = (bench_case_t){.variant = "pocl enqueue+finish",
                                      .body = empty_ocl_body, .arg = &e};
    }
#endif
#ifdef _OPENMP
    int omp_at = count;
    cases[count++] = (bench_case_t){.variant = "openmp empty region",
                                    .body = empty_omp_body, .arg = &e};
#endif
    if (g == 0) {
      bench_note(name, "dc: dc_kernel_dispatch of a kernel with no "
                 "arguments, group size left to the engine; pocl: "
                 "clEnqueueNDRangeKernel (local NULL) + clFinish; openmp: "
                 "#pragma omp parallel num_threads(%d) with an empty body",
                 e.threads);
    }
    dc_worker_pool_stats_t before = pool_stats(&B->dc);
    bench_run_group(name, cases, count, BENCH_QUIESCE);
    note_pool(name, "dc dispatch", &B->dc, &before);
#ifdef DC_BENCH_OPENCL
    if (ocl_at >= 0) {
      bench_print_ratio(name, &cases[0], &cases[ocl_at], "ratio<=0.1");
    }
#endif
#ifdef _OPENMP
    bench_print_ratio(name, &cases[0], &cases[omp_at], "ratio<=3");
#endif
  }

  const char* qname = "10000 empty kernels (per kernel)";
  e.global = 1;
  bench_note(qname, "dc has no asynchronous queue yet: dc runs 10000 "
             "synchronous dc_kernel_dispatch calls back to back; pocl "
             "enqueues 10000 kernels on an in-order queue, then calls "
             "clFinish once; 1 work-item each; a sample is one batch's time "
             "/ 10000");
  bench_case_t qcases[2] = {
      {.variant = "dc 10000 sync dispatches", .body = queue_dc_body,
       .arg = &e},
#ifdef DC_BENCH_OPENCL
      {.variant = "pocl 10000 enqueues+finish", .body = queue_ocl_body,
       .arg = &e},
#endif
  };
  int qcount = B->have_ocl ? 2 : 1;
  run_slow_group(qname, qcases, qcount, (double)QUEUE_KERNELS);
  if (qcount == 2) {
    bench_print_ratio(qname, &qcases[0], &qcases[1], "ratio<=0.333333");
  }
#ifdef DC_BENCH_OPENCL
  if (cp != NULL) {
    clReleaseKernel(e.ck);
    clReleaseProgram(cp);
  }
#endif
  dc_program_release(p);
}

//===-- 6. compile -------------------------------------------------------===//

// The first run after a build: the tiled kernel on 16x16 matrices, checked
// against the host.
typedef struct small_mm_t {
  float a[SMALL_N * SMALL_N], b[SMALL_N * SMALL_N], ref[SMALL_N * SMALL_N];
  float got[SMALL_N * SMALL_N];
} small_mm_t;

static void small_init(small_mm_t* s) {
  fill_small_ints(s->a, SMALL_N * SMALL_N, 11);
  fill_small_ints(s->b, SMALL_N * SMALL_N, 12);
  host_matmul(s->a, s->b, s->ref, SMALL_N);
}

typedef struct compile_t {
  const char* tag;      // "cold" or "hit"
  const char* dc_dir;   // the warm cache directory for "hit"
  small_mm_t* small;
  bool failed;
#ifdef DC_BENCH_OPENCL
  bench_ocl_t* ocl;
#endif
} compile_t;

// One dc sample: a fresh context on a fresh (cold) or warm (hit) cache
// directory, then dc_program_create timed alone and with the first run.
static void compile_dc_sample(compile_t* c, double* build_ns,
                              double* first_ns) {
  char dir[512];
  if (c->dc_dir != NULL) {
    snprintf(dir, sizeof(dir), "%s", c->dc_dir);
  } else {
    bench_make_temp_dir(dir, sizeof(dir), "dc-cold");
  }
  dcx_t x = dc_open(dir);
  dc_buffer_t *a, *b, *out;
  float *ha, *hb, *hc;
  a = dc_f32(x.dev, SMALL_N * SMALL_N, "small a", &ha);
  b = dc_f32(x.dev, SMALL_N * SMALL_N, "small b", &hb);
  out = dc_f32(x.dev, SMALL_N * SMALL_N, "small c", &hc);
  memcpy(ha, c->small->a, sizeof(c->small->a));
  memcpy(hb, c->small->b, sizeof(c->small->b));
  memset(hc, 0, sizeof(c->small->got));
  dc_arg_t args[4] = {dc_arg_buffer(a), dc_arg_buffer(b), dc_arg_buffer(out),
                      dc_arg_u32(SMALL_N)};
  dc_dispatch_t grid = {.dims = 2, .global = {SMALL_N, SMALL_N},
                        .local = {16, 16}};

  uint64_t t0 = bench_now_ns();
  dc_program_t* p = bench_dc_build(x.dev, kTiledSource, "matmul_tiled.cl");
  uint64_t t1 = bench_now_ns();
  dc_kernel_t* k = bench_dc_find(p, "matmul_tiled");
  DC_CHECK(dc_kernel_dispatch(k, &grid, args, 4));
  uint64_t t2 = bench_now_ns();

  *build_ns = (double)(t1 - t0);
  *first_ns = (double)(t2 - t0);
  if (!same_floats("compile tiled matmul", "dc first run", hc, c->small->ref,
                   SMALL_N * SMALL_N)) {
    c->failed = true;
  }
  dc_program_cache_stats_t st;
  DC_CHECK(dc_program_cache_stats(x.dev, &st));
  bool expected = c->dc_dir != NULL
                      ? st.disk_hits == 1 && st.compiles == 0
                      : st.compiles == 1 && st.disk_hits == 0;
  if (!expected || st.memory_hits != 0) {
    bench_note("compile tiled matmul", "dc %s sample: unexpected cache "
               "counters (memory hits %llu, disk hits %llu, compiles %llu)",
               c->tag, (unsigned long long)st.memory_hits,
               (unsigned long long)st.disk_hits,
               (unsigned long long)st.compiles);
    c->failed = true;
  }
  dc_program_release(p);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_buffer_release(out);
  dc_context_release(x.ctx);
  if (c->dc_dir == NULL) bench_remove_tree(dir);
}

#ifdef DC_BENCH_OPENCL
// One pocl sample: a fresh cl_context, then clCreateProgramWithSource +
// clBuildProgram + clCreateKernel timed alone and with the first run
// (pocl generates the work-group function for a local size at the first
// enqueue with that size).
static void compile_ocl_sample(compile_t* c, double* build_ns,
                               double* first_ns) {
  bench_ocl_t* o = c->ocl;
  cl_context ctx = bench_ocl_context(o->device);
  cl_command_queue q = bench_ocl_queue(ctx, o->device);
  size_t bytes = sizeof(c->small->a);
  cl_mem ma = bench_ocl_buffer(ctx, bytes, c->small->a);
  cl_mem mb = bench_ocl_buffer(ctx, bytes, c->small->b);
  cl_mem mc = bench_ocl_buffer(ctx, bytes, NULL);
  cl_uint n = SMALL_N;
  size_t global[2] = {SMALL_N, SMALL_N}, local[2] = {16, 16};

  uint64_t t0 = bench_now_ns();
  cl_program p = bench_ocl_build(ctx, o->device, kTiledSource);
  cl_kernel k = bench_ocl_kernel(p, "matmul_tiled");
  uint64_t t1 = bench_now_ns();
  OCL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &ma));
  OCL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &mb));
  OCL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &mc));
  OCL_CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &n));
  OCL_CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, local, 0, NULL,
                                   NULL));
  OCL_CHECK(clFinish(q));
  uint64_t t2 = bench_now_ns();

  *build_ns = (double)(t1 - t0);
  *first_ns = (double)(t2 - t0);
  OCL_CHECK(clEnqueueReadBuffer(q, mc, CL_TRUE, 0, bytes, c->small->got, 0,
                                NULL, NULL));
  if (!same_floats("compile tiled matmul", "pocl first run", c->small->got,
                   c->small->ref, SMALL_N * SMALL_N)) {
    c->failed = true;
  }
  clReleaseKernel(k);
  clReleaseProgram(p);
  clReleaseMemObject(ma);
  clReleaseMemObject(mb);
  clReleaseMemObject(mc);
  clReleaseCommandQueue(q);
  clReleaseContext(ctx);
}
#endif

// Runs the compile samples of |c| (dc, and pocl where present),
// interleaved, and prints two groups: the build alone, and the build with
// the first run.
static void run_compile_rows(compile_t* c, const char* pocl_variant,
                             const char* goal) {
  char name[128], fname[128];
  snprintf(name, sizeof(name), "compile tiled matmul, %s", c->tag);
  snprintf(fname, sizeof(fname), "compile + first 16x16 run, %s", c->tag);
  int reps = g_slow_reps;
  bool with_ocl = false;
#ifdef DC_BENCH_OPENCL
  with_ocl = c->ocl != NULL;
#endif
  double* s = bench_xmalloc(sizeof(double) * 4 * (size_t)reps);
  double *dc_b = s, *dc_f = s + reps, *cl_b = s + 2 * reps,
         *cl_f = s + 3 * reps;
  for (int r = 0; r < reps; ++r) {
    bench_quiesce(500000000u);
    compile_dc_sample(c, &dc_b[r], &dc_f[r]);
#ifdef DC_BENCH_OPENCL
    if (with_ocl) {
      bench_quiesce(500000000u);
      compile_ocl_sample(c, &cl_b[r], &cl_f[r]);
    }
#endif
  }
  if (!c->failed) {
    bench_case_t cases[4] = {{.variant = "dc"}, {.variant = pocl_variant},
                             {.variant = "dc"}, {.variant = pocl_variant}};
    bench_report_samples(name, &cases[0], dc_b, reps);
    if (with_ocl) {
      bench_report_samples(name, &cases[1], cl_b, reps);
      bench_print_ratio(name, &cases[0], &cases[1], goal);
    }
    bench_report_samples(fname, &cases[2], dc_f, reps);
    if (with_ocl) {
      bench_report_samples(fname, &cases[3], cl_f, reps);
      bench_print_ratio(fname, &cases[2], &cases[3], "-");
    }
  }
  (void)cl_b;
  (void)cl_f;
  free(s);
}

static void compile_note(void) {
  bench_note("compile tiled matmul", "%d samples per case; dc: a fresh "
             "context per sample on a fresh empty kernel_cache_dir (cold) or "
             "on one that holds the entry (hit), timing dc_program_create; "
             "pocl: a fresh cl_context per sample, timing "
             "clCreateProgramWithSource + clBuildProgram + clCreateKernel; "
             "'+ first run' adds one 16x16 dispatch and its wait",
             g_slow_reps);
}

// Cold compiles: runs in the child process, where pocl's kernel cache is
// off (POCL_KERNEL_CACHE=0).
static void bench_compile_cold(void) {
  small_mm_t* small = bench_xmalloc(sizeof(small_mm_t));
  small_init(small);
  compile_t c = {.tag = "cold", .small = small};
#ifdef DC_BENCH_OPENCL
  bench_ocl_t o;
  if (bench_ocl_open(&o, 1, "compile tiled matmul, cold")) c.ocl = &o;
  bench_note("compile tiled matmul, cold", "child process: "
             "POCL_KERNEL_CACHE=%s POCL_CACHE_DIR=(private)",
             bench_env_or("POCL_KERNEL_CACHE"));
#endif
  run_compile_rows(&c, "pocl (POCL_KERNEL_CACHE=0)", "ratio<=1");
#ifdef DC_BENCH_OPENCL
  if (c.ocl != NULL) bench_ocl_close(&o);
#endif
  free(small);
}

// Cache hits: runs in the main process (POCL_KERNEL_CACHE=1, private
// POCL_CACHE_DIR). Each side's cache is warmed once first.
static void bench_compile_hit(bench_t* B) {
  small_mm_t* small = bench_xmalloc(sizeof(small_mm_t));
  small_init(small);
  char warm[512];
  bench_make_temp_dir(warm, sizeof(warm), "dc-warm");
  compile_t c = {.tag = "cache hit", .small = small};
  // Warm dc's directory: one cold build there.
  dcx_t x = dc_open(warm);
  dc_program_release(bench_dc_build(x.dev, kTiledSource, "matmul_tiled.cl"));
  dc_context_release(x.ctx);
  c.dc_dir = warm;
#ifdef DC_BENCH_OPENCL
  if (B->have_ocl) {
    c.ocl = &B->ocl;
    double b, f;
    compile_ocl_sample(&c, &b, &f);  // warms pocl's cache, 16x16 included
  }
#else
  (void)B;
#endif
  // dc's goal: a cache hit under 1 ms.
  run_compile_rows(&c, "pocl (POCL_KERNEL_CACHE=1)", "median<1000000");
  bench_remove_tree(warm);
  free(small);
}

// Runs this program again with DC_BENCH_KERNELS_PART=compile-cold and
// POCL_KERNEL_CACHE=0 (pocl reads it once per process), its output going
// to ours.
static void spawn_compile_cold(char** argv) {
  char pocl_dir[512];
  bench_make_temp_dir(pocl_dir, sizeof(pocl_dir), "pocl-cold");
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    setenv("DC_BENCH_KERNELS_PART", "compile-cold", 1);
    setenv("POCL_KERNEL_CACHE", "0", 1);
    setenv("POCL_CACHE_DIR", pocl_dir, 1);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "bench_kernels: exec /proc/self/exe: %s\n",
            strerror(errno));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    bench_note("compile tiled matmul, cold", "the child process failed "
               "(status 0x%x): cold compile rows missing", status);
  }
  bench_remove_tree(pocl_dir);
}

//===-- main -------------------------------------------------------------===//

int main(int argc, char** argv) {
  const char* part = getenv("DC_BENCH_KERNELS_PART");
  bench_init(argc, argv);
  g_slow_reps = slow_reps();
  if (part != NULL && strcmp(part, "compile-cold") == 0) {
    bench_compile_cold();
    return 0;
  }
  const char* name = "kernels";

  // Private caches: pocl's must be set before the first OpenCL call.
  bench_t B = {0};
  char pocl_dir[512];
  bench_make_temp_dir(pocl_dir, sizeof(pocl_dir), "pocl");
  bench_make_temp_dir(B.dc_cache, sizeof(B.dc_cache), "dc");
  setenv("POCL_CACHE_DIR", pocl_dir, 1);
  setenv("POCL_KERNEL_CACHE", "1", 1);

  int threads_before = 0;
  B.dc = dc_open(B.dc_cache);
  const dc_device_info_t* info = dc_device_info(B.dc.dev);
  bench_note(name, "dc: device %s (%s), %u threads, simd %u bytes, private "
             "kernel_cache_dir; slow rows: %d samples per case",
             info->name, info->model, B.dc.threads, info->simd_width,
             g_slow_reps);
#ifdef _OPENMP
  bench_note(name, "openmp: omp_get_max_threads() %d; OMP_WAIT_POLICY=%s "
             "OMP_NUM_THREADS=%s", omp_get_max_threads(),
             bench_env_or("OMP_WAIT_POLICY"), bench_env_or("OMP_NUM_THREADS"));
#else
  bench_note(name, "built without OpenMP: OpenMP baselines skipped");
#endif
  // The reference product (on OpenMP's threads, which then exist before
  // pocl starts its own).
  const size_t nn = (size_t)MM_N * MM_N;
  B.mm_a = bench_xmalloc(nn * sizeof(float));
  B.mm_b = bench_xmalloc(nn * sizeof(float));
  B.mm_ref = bench_xmalloc(nn * sizeof(float));
  fill_small_ints(B.mm_a, nn, 1);
  fill_small_ints(B.mm_b, nn, 2);
  host_matmul(B.mm_a, B.mm_b, B.mm_ref, MM_N);
#ifdef DC_BENCH_OPENCL
  threads_before = bench_thread_count();
  B.have_ocl = bench_ocl_open(&B.ocl, 1, name);
  if (B.have_ocl) {
    bench_note(name, "pocl: %s; device '%s', %u compute units; "
               "POCL_MAX_PTHREAD_COUNT=%s POCL_CPU_MAX_CU_COUNT=%s "
               "POCL_AFFINITY=%s; private POCL_CACHE_DIR, "
               "POCL_KERNEL_CACHE=1 (cold compiles: 0, in a child process)",
               B.ocl.platform_version, B.ocl.device_name, B.ocl.units,
               bench_env_or("POCL_MAX_PTHREAD_COUNT"),
               bench_env_or("POCL_CPU_MAX_CU_COUNT"),
               bench_env_or("POCL_AFFINITY"));
  }
#else
  bench_note(name, "built without OpenCL (pocl): pocl baselines skipped");
#endif
#ifndef DC_BENCH_OPENBLAS
  bench_note(name, "built without OpenBLAS: OpenBLAS baselines skipped");
#endif

  if (bench_want_part("BENCH_KERNELS", "vadd")) bench_vadd(&B);
  if (bench_want_part("BENCH_KERNELS", "tiled")) bench_tiled(&B);
#ifdef DC_BENCH_OPENCL
  if (B.have_ocl && bench_want_part("BENCH_KERNELS", "tiled")) {
    bench_note(name, "threads in the process: %d before pocl started, %d "
               "after pocl's first kernels", threads_before,
               bench_thread_count());
  }
#endif
  (void)threads_before;
  if (bench_want_part("BENCH_KERNELS", "matmul")) bench_builtin_matmul(&B);
  if (bench_want_part("BENCH_KERNELS", "empty")) bench_empty(&B);
  if (bench_want_part("BENCH_KERNELS", "struct")) {
    bench_struct_args(B.dc.dev, B.dc.threads);
  }
  if (bench_want_part("BENCH_KERNELS", "compile")) {
    compile_note();
    spawn_compile_cold(argv);
    bench_compile_hit(&B);
  }

  dc_program_cache_stats_t st;
  DC_CHECK(dc_program_cache_stats(B.dc.dev, &st));
  bench_note(name, "dc program builds in the main context: %llu compiles, "
             "%llu disk hits, %llu memory hits",
             (unsigned long long)st.compiles,
             (unsigned long long)st.disk_hits,
             (unsigned long long)st.memory_hits);

#ifdef DC_BENCH_OPENCL
  if (B.have_ocl) bench_ocl_close(&B.ocl);
#endif
  dc_context_release(B.dc.ctx);
  free(B.mm_a);
  free(B.mm_b);
  free(B.mm_ref);
  bench_remove_tree(B.dc_cache);
  bench_remove_tree(pocl_dir);
  return 0;
}

// bench_kernels_struct.c: bench_kernels' "struct" part: one step of a
// particle update whose parameters come as one struct argument, against
// the same kernel taking them as separate scalar and vector arguments,
// and against the same loop in C under OpenMP:
//
//   particle step 1M (struct argument)
//     dc struct arg vs dc scalar args   what passing a struct costs (the
//                                       arguments' bytes are copied per
//                                       dispatch either way)
//   particle step 1M (struct argument) vs openmp
//     dc struct arg vs openmp           the kernel against plain C
// (two groups, so that OpenMP never runs between the two dc variants).
//
// Each step reads and writes 1M float2 positions and velocities (32 MiB of
// traffic); the three variants start from the same state and are checked
// against each other after one step before anything is timed.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_kernels_struct.h"
#include "bench_util.h"
#include "harness.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define PARTICLES ((size_t)1 << 20)

static const char kStepSource[] =
    "typedef struct {\n"
    "  float2 gravity;\n"
    "  float dt;\n"
    "  float damping;\n"
    "  float4 bounds;  // min x, min y, max x, max y\n"
    "  uint n;\n"
    "} step_t;\n"
    "#define STEP(gravity, dt, damping, bounds, n)                  \\\n"
    "  size_t i = get_global_id(0);                                 \\\n"
    "  if (i >= n) return;                                          \\\n"
    "  float2 v = vel[i] * damping + gravity * dt;                  \\\n"
    "  pos[i] = clamp(pos[i] + v * dt, bounds.xy, bounds.zw);       \\\n"
    "  vel[i] = v;\n"
    "__kernel void step_struct(__global float2* pos, __global float2* vel,\n"
    "                          step_t s) {\n"
    "  STEP(s.gravity, s.dt, s.damping, s.bounds, s.n)\n"
    "}\n"
    "__kernel void step_scalars(__global float2* pos, __global float2* vel,\n"
    "                           float2 gravity, float dt, float damping,\n"
    "                           float4 bounds, uint n) {\n"
    "  STEP(gravity, dt, damping, bounds, n)\n"
    "}\n";

// The host's step_t (float2 and float4 as GCC vectors: the same layout).
typedef float hfloat2 __attribute__((vector_size(8)));
typedef float hfloat4 __attribute__((vector_size(16)));
typedef struct {
  hfloat2 gravity;
  float dt;
  float damping;
  hfloat4 bounds;
  uint32_t n;
} step_t;

typedef struct step_bench_t {
  dc_kernel_t* with_struct;
  dc_kernel_t* with_scalars;
  dc_buffer_t* pos;
  dc_buffer_t* vel;
  float* hpos;  // the buffers' memory (CPU device)
  float* hvel;
  step_t s;
  int threads;
} step_bench_t;

static const dc_dispatch_t kGrid = {.dims = 1, .global = {PARTICLES}};

static void struct_body(void* arg, uint64_t iters) {
  step_bench_t* b = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    dc_arg_t args[3] = {dc_arg_buffer(b->pos), dc_arg_buffer(b->vel),
                        dc_arg_bytes(&b->s, sizeof(b->s))};
    DC_CHECK(dc_kernel_dispatch(b->with_struct, &kGrid, args, 3));
  }
}

static void scalars_body(void* arg, uint64_t iters) {
  step_bench_t* b = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    float gravity[2] = {b->s.gravity[0], b->s.gravity[1]};
    float bounds[4] = {b->s.bounds[0], b->s.bounds[1], b->s.bounds[2],
                       b->s.bounds[3]};
    dc_arg_t args[7] = {dc_arg_buffer(b->pos),
                        dc_arg_buffer(b->vel),
                        dc_arg_value(DC_DTYPE_F32, 2, gravity),
                        dc_arg_f32(b->s.dt),
                        dc_arg_f32(b->s.damping),
                        dc_arg_value(DC_DTYPE_F32, 4, bounds),
                        dc_arg_u32(b->s.n)};
    DC_CHECK(dc_kernel_dispatch(b->with_scalars, &kGrid, args, 7));
  }
}

#ifdef _OPENMP
static void omp_body(void* arg, uint64_t iters) {
  step_bench_t* b = arg;
  float* restrict pos = b->hpos;
  float* restrict vel = b->hvel;
  const step_t s = b->s;
  const long n = (long)s.n;
  for (uint64_t it = 0; it < iters; ++it) {
#pragma omp parallel for num_threads(b->threads)
    for (long i = 0; i < n; ++i) {
      for (int c = 0; c < 2; ++c) {
        float v = vel[2 * i + c] * s.damping + s.gravity[c] * s.dt;
        float p = pos[2 * i + c] + v * s.dt;
        // clamp() without libm calls (no NaNs here), so the loop
        // vectorises as the kernel does.
        p = p < s.bounds[c] ? s.bounds[c] : p;
        pos[2 * i + c] = p > s.bounds[2 + c] ? s.bounds[2 + c] : p;
        vel[2 * i + c] = v;
      }
    }
    bench_escape(pos);
    bench_escape(vel);
  }
}
#endif

// The state every variant starts its check from.
static void reset(step_bench_t* b) {
  for (size_t i = 0; i < 2 * PARTICLES; ++i) {
    b->hpos[i] = (float)(i % 1000) * 0.01f;
    b->hvel[i] = (float)(i % 37) * 0.1f - 1.5f;
  }
}

// Runs one step of |body| from the reset state and compares it with
// |want| (positions then velocities) within a few ulps: the compilers may
// contract the multiply-adds differently.
static bool one_step_matches(const char* name, const char* variant,
                             step_bench_t* b, bench_body_fn body,
                             const float* want) {
  reset(b);
  body(b, 1);
  for (size_t i = 0; i < 4 * PARTICLES; ++i) {
    float got = i < 2 * PARTICLES ? b->hpos[i] : b->hvel[i - 2 * PARTICLES];
    if (fabsf(got - want[i]) > 1e-5f * fmaxf(1.0f, fabsf(want[i]))) {
      bench_note(name, "%s: element %zu is %.9g, expected %.9g; row dropped",
                 variant, i, got, want[i]);
      return false;
    }
  }
  return true;
}

void bench_struct_args(dc_device_t* dev, uint32_t threads) {
  const char* name = "particle step 1M (struct argument)";
  step_bench_t b = {.threads = (int)threads};
  b.pos = bench_dc_buffer(dev, DC_DTYPE_F32, 2 * PARTICLES, "pos",
                          (void**)&b.hpos);
  b.vel = bench_dc_buffer(dev, DC_DTYPE_F32, 2 * PARTICLES, "vel",
                          (void**)&b.hvel);
  memset(&b.s, 0, sizeof(b.s));
  b.s.gravity = (hfloat2){0.5f, -9.8f};  // no velocity decays to denormals
  b.s.dt = 0.001f;
  b.s.damping = 0.999f;
  b.s.bounds = (hfloat4){0.0f, 0.0f, 10.0f, 10.0f};
  b.s.n = (uint32_t)PARTICLES;
  dc_program_t* p = bench_dc_build(dev, kStepSource, "step.cl");
  b.with_struct = bench_dc_find(p, "step_struct");
  b.with_scalars = bench_dc_find(p, "step_scalars");

  // The reference: one step of the scalar-argument kernel.
  float* want = bench_xmalloc(4 * PARTICLES * sizeof(float));
  reset(&b);
  scalars_body(&b, 1);
  memcpy(want, b.hpos, 2 * PARTICLES * sizeof(float));
  memcpy(want + 2 * PARTICLES, b.hvel, 2 * PARTICLES * sizeof(float));
  bool ok = one_step_matches(name, "dc struct arg", &b, struct_body, want);
#ifdef _OPENMP
  ok = ok && one_step_matches(name, "openmp", &b, omp_body, want);
#endif
  free(want);
  if (ok) {
    bench_note(name, "dc: 1-D grid of %zu, work-group size left to the "
               "engine; the struct is %zu bytes (dc_arg_bytes), the scalar "
               "variant takes the same values as 5 arguments; openmp: "
               "parallel for, num_threads(%d); every variant reads and "
               "writes the same buffers; GB/s counts 32 bytes per particle",
               (size_t)PARTICLES, sizeof(step_t), b.threads);
    // Two groups, so that OpenMP's threads never run between the two dc
    // variants, whose difference is the subject.
    bench_case_t dc_cases[] = {
        {.variant = "dc struct arg", .body = struct_body, .arg = &b},
        {.variant = "dc scalar args", .body = scalars_body, .arg = &b},
    };
    bench_run_group(name, dc_cases, 2, BENCH_QUIESCE);
    for (int k = 0; k < 2; ++k) {
      bench_print_rate(name, &dc_cases[k], 32.0 * (double)PARTICLES, "GB/s");
    }
    // No goal: the two kernels compile to the same inner loop, and what
    // differs between them is where the C compiler put it
    // (docs/benchmarks.md).
    bench_print_ratio(name, &dc_cases[0], &dc_cases[1], "-");
#ifdef _OPENMP
    const char* vs = "particle step 1M (struct argument) vs openmp";
    bench_case_t omp_cases[] = {
        {.variant = "dc struct arg", .body = struct_body, .arg = &b},
        {.variant = "openmp", .body = omp_body, .arg = &b},
    };
    bench_run_group(vs, omp_cases, 2, BENCH_QUIESCE);
    for (int k = 0; k < 2; ++k) {
      bench_print_rate(vs, &omp_cases[k], 32.0 * (double)PARTICLES, "GB/s");
    }
    bench_print_ratio(vs, &omp_cases[0], &omp_cases[1], "-");
#else
    bench_note(name, "built without OpenMP: no plain C baseline");
#endif
  }
  dc_program_release(p);
  dc_buffer_release(b.pos);
  dc_buffer_release(b.vel);
}

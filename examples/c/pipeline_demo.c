// pipeline_demo.c: a small pipeline on the CPU device.
//
// Generates a signal into a buffer, smooths it with a 3-point filter into a
// second buffer, normalises a window of it through a view, and reduces it
// to a sum, each step a parallel-for over the worker pool. Every result is
// checked against a plain serial computation. Run: ./pipeline_demo [n]
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dc/dc.h"

typedef struct pipeline_t {
  float* signal;
  float* smooth;
  size_t n;
  double partial[256];  // per-thread partial sums, indexed by thread
} pipeline_t;

static float signal_at(size_t i) {
  return sinf((float)i * 0.001f) + 0.25f * (float)(i % 7);
}

static dc_status_t generate(void* user, size_t begin, size_t end,
                            uint32_t thread) {
  (void)thread;
  pipeline_t* p = user;
  for (size_t i = begin; i < end; ++i) p->signal[i] = signal_at(i);
  return DC_OK;
}

static float smooth_at(const float* s, size_t n, size_t i) {
  size_t l = i > 0 ? i - 1 : 0, r = i + 1 < n ? i + 1 : n - 1;
  return (s[l] + s[i] + s[r]) / 3.0f;
}

static dc_status_t smooth(void* user, size_t begin, size_t end,
                          uint32_t thread) {
  (void)thread;
  pipeline_t* p = user;
  for (size_t i = begin; i < end; ++i) {
    p->smooth[i] = smooth_at(p->signal, p->n, i);
  }
  return DC_OK;
}

static dc_status_t reduce(void* user, size_t begin, size_t end,
                          uint32_t thread) {
  pipeline_t* p = user;
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += p->smooth[i];
  p->partial[thread] += sum;
  return DC_OK;
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_device(dc_device_t* device) {
  const dc_device_info_t* d = dc_device_info(device);
  printf("device %s: %s\n", d->name, d->model);
  printf("  %u logical cores, %u threads, %u-byte SIMD, %zu MiB memory\n",
         d->compute_units, d->worker_threads, d->simd_width,
         d->memory_size >> 20);
  printf("  caches: L1d %zu KiB, L2 %zu KiB, L3 %zu KiB\n",
         d->cache_l1d_size >> 10, d->cache_l2_size >> 10,
         d->cache_l3_size >> 10);
}

// Recomputes the pipeline serially and compares. Returns 0 when it agrees.
static int verify(const pipeline_t* p, double sum) {
  double expected = 0;
  for (size_t i = 0; i < p->n; ++i) {
    if (p->signal[i] != signal_at(i)) return 1;
    float want = smooth_at(p->signal, p->n, i);
    if (p->smooth[i] != want) return 1;
    expected += want;
  }
  return fabs(sum - expected) > 1e-6 * fabs(expected) + 1e-6;
}

int main(int argc, char** argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 24;
  if (n < 2) n = 2;
  dc_context_t* ctx = NULL;
  DC_CHECK(dc_context_create(NULL, &ctx));
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_find_device(ctx, "cpu", &cpu));
  print_device(cpu);
  dc_worker_pool_t* workers = dc_context_worker_pool(ctx);

  dc_buffer_t *signal = NULL, *smoothed = NULL;
  dc_buffer_params_t params = {.dtype = DC_DTYPE_F32, .length = n,
                               .label = "signal"};
  DC_CHECK(dc_buffer_create(cpu, &params, &signal));
  params.label = "smoothed";
  DC_CHECK(dc_buffer_create(cpu, &params, &smoothed));

  pipeline_t p = {.n = n};
  DC_CHECK(dc_buffer_host_pointer(signal, (void**)&p.signal));
  DC_CHECK(dc_buffer_host_pointer(smoothed, (void**)&p.smooth));
  double t0 = seconds();
  DC_CHECK(dc_worker_pool_parallel_for(workers, 0, n, 0, generate, &p));
  double t1 = seconds();
  DC_CHECK(dc_worker_pool_parallel_for(workers, 0, n, 0, smooth, &p));
  double t2 = seconds();
  DC_CHECK(dc_worker_pool_parallel_for(workers, 0, n, 0, reduce, &p));
  double t3 = seconds();
  double sum = 0;
  for (size_t t = 0; t < 256; ++t) sum += p.partial[t];

  // A view of the middle half, copied out and read back through the API.
  dc_buffer_t *middle = NULL, *copy = NULL;
  DC_CHECK(dc_buffer_create_view(smoothed, n / 4, n / 2, &middle));
  params.length = n / 2;
  params.label = "middle";
  DC_CHECK(dc_buffer_create(cpu, &params, &copy));
  DC_CHECK(dc_buffer_copy(copy, 0, middle, 0, n / 2));
  float first = 0;
  DC_CHECK(dc_buffer_read(copy, 0, &first, 1));

  int bad = verify(&p, sum) || first != p.smooth[n / 4];
  printf("pipeline over %zu floats: generate %.2f ms, smooth %.2f ms, "
         "reduce %.2f ms\n",
         n, 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2));
  printf("sum %.6g; results %s\n", sum, bad ? "WRONG" : "match the serial run");

  dc_buffer_release(middle);
  dc_buffer_release(copy);
  dc_buffer_release(signal);
  dc_buffer_release(smoothed);
  dc_memory_pool_stats_t stats;
  DC_CHECK(dc_memory_pool_stats(cpu, &stats));
  printf("memory pool: %llu misses, %llu hits, %zu MiB cached, peak %zu MiB\n",
         (unsigned long long)stats.misses, (unsigned long long)stats.hits,
         stats.bytes_cached >> 20, stats.peak_bytes_in_use >> 20);
  dc_context_release(ctx);
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

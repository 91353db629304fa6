// bench_memory_pool.c: a pooled buffer's acquire + release on the CPU
// device, with the pool warm, against malloc + free of the same size.
//
// Both sides write one byte through the pointer they get, so neither the
// buffer nor the malloc'd block can be optimised away, and both pay for
// touching their memory. glibc serves a 64 MiB malloc with mmap (it is
// above the largest mmap threshold, 32 MiB), so the baseline there is
// mmap + one page fault + munmap: exactly the cost the pool exists to
// avoid. A 1 MiB malloc is served from the heap once glibc's dynamic mmap
// threshold has risen, which it does after the first free.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>

#include "dc/dc.h"
#include "harness.h"

typedef struct size_arg_t {
  dc_device_t* device;  // NULL for malloc
  size_t bytes;
} size_arg_t;

static void pool_body(void* arg, uint64_t iters) {
  const size_arg_t* a = arg;
  const dc_buffer_params_t params = {.dtype = DC_DTYPE_U8,
                                     .length = a->bytes};
  for (uint64_t i = 0; i < iters; ++i) {
    dc_buffer_t* buffer = NULL;
    DC_CHECK(dc_buffer_create(a->device, &params, &buffer));
    void* p = NULL;
    DC_CHECK(dc_buffer_host_pointer(buffer, &p));
    *(volatile unsigned char*)p = (unsigned char)i;
    bench_escape(p);
    dc_buffer_release(buffer);
  }
}

static void malloc_body(void* arg, uint64_t iters) {
  const size_arg_t* a = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    unsigned char* p = malloc(a->bytes);
    if (p == NULL) abort();
    *(volatile unsigned char*)p = (unsigned char)i;
    bench_escape(p);
    free(p);
  }
}

static void run_size(dc_device_t* device, size_t mib, const char* goal) {
  char name[64];
  snprintf(name, sizeof(name), "buffer acquire+release %zu MiB", mib);
  size_arg_t pool_arg = {device, mib << 20};
  size_arg_t malloc_arg = {NULL, mib << 20};

  dc_memory_pool_stats_t before, after;
  DC_CHECK(dc_memory_pool_stats(device, &before));
  bench_case_t cases[] = {
      {.variant = "dc pool", .body = pool_body, .arg = &pool_arg},
      {.variant = "malloc+free", .body = malloc_body, .arg = &malloc_arg},
  };
  bench_run_group(name, cases, 2, BENCH_DEFAULT);
  bench_print_ratio(name, &cases[0], &cases[1], goal);
  DC_CHECK(dc_memory_pool_stats(device, &after));
  bench_note(name, "pool hits %llu, misses %llu during the run",
             (unsigned long long)(after.hits - before.hits),
             (unsigned long long)(after.misses - before.misses));
}

int main(int argc, char** argv) {
  bench_init(argc, argv);
  dc_context_params_t params = {.backends = "cpu"};
  dc_context_t* ctx = NULL;
  DC_CHECK(dc_context_create(&params, &ctx));
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_find_device(ctx, "cpu", &cpu));

  run_size(cpu, 1, "-");
  run_size(cpu, 64, "ratio<=0.05");  // the pool at least 20x faster

  dc_context_release(ctx);
  return 0;
}

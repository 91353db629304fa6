// bench_util.c: the helpers of bench_util.h.
// SPDX-License-Identifier: MIT
#include "bench_util.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

const char bench_empty_source[] = "__kernel void empty(void) {}\n";

const char bench_vadd_source[] =
    "__kernel void vadd(__global const float* a, __global const float* b,\n"
    "                   __global float* c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  c[i] = a[i] + b[i];\n"
    "}\n";

// Errors name the program ("bench_kernels: ..."), as each did before these
// helpers were shared; glibc keeps the name (needs _GNU_SOURCE).
#define PROGRAM program_invocation_short_name

void* bench_xmalloc(size_t bytes) {
  void* p = NULL;
  if (posix_memalign(&p, 64, bytes) != 0) {
    fprintf(stderr, "%s: out of memory (%zu bytes)\n", PROGRAM, bytes);
    abort();
  }
  return p;
}

void* bench_xcalloc(size_t count, size_t bytes) {
  void* p = calloc(count, bytes);
  if (p == NULL) {
    fprintf(stderr, "%s: out of memory (%zu x %zu bytes)\n", PROGRAM, count,
            bytes);
    abort();
  }
  return p;
}

bool bench_want_part(const char* env, const char* part) {
  const char* list = getenv(env);
  if (list == NULL || *list == '\0') return true;
  size_t n = strlen(part);
  for (const char* p = list; (p = strstr(p, part)) != NULL; p += n) {
    bool starts = p == list || p[-1] == ',';
    bool ends = p[n] == '\0' || p[n] == ',';
    if (starts && ends) return true;
  }
  return false;
}

int bench_thread_count(void) {
  FILE* f = fopen("/proc/self/status", "r");
  int threads = -1;
  char line[256];
  while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
    if (sscanf(line, "Threads: %d", &threads) == 1) break;
  }
  if (f != NULL) fclose(f);
  return threads;
}

const char* bench_env_or(const char* name) {
  const char* v = getenv(name);
  return v ? v : "(unset)";
}

void bench_make_temp_dir(char* out, size_t size, const char* tag) {
  const char* t = getenv("TMPDIR");
  snprintf(out, size, "%s/dc-bench-%s-XXXXXX",
           t != NULL && *t != '\0' ? t : "/tmp", tag);
  if (mkdtemp(out) == NULL) {
    fprintf(stderr, "%s: mkdtemp %s: %s\n", PROGRAM, out, strerror(errno));
    abort();
  }
}

static int remove_entry(const char* path, const struct stat* st, int flag,
                        struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void bench_remove_tree(const char* dir) {
  nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void bench_settle(const char* name, bool* warned) {
  if (!bench_quiesce(500000000u) && !*warned) {
    bench_note(name, "process did not go idle within 500 ms");
    *warned = true;
  }
}

dc_program_t* bench_dc_build(dc_device_t* dev, const char* source,
                             const char* name) {
  dc_program_params_t params = {.source = source, .name = name};
  dc_program_t* p = NULL;
  if (dc_program_create(dev, &params, &p) != DC_OK) {
    fprintf(stderr, "%s: dc_program_create(%s): %s\n", PROGRAM, name,
            dc_last_error());
    abort();
  }
  return p;
}

dc_kernel_t* bench_dc_find(dc_program_t* p, const char* name) {
  dc_kernel_t* k = NULL;
  DC_CHECK(dc_program_find_kernel(p, name, &k));
  return k;
}

dc_buffer_t* bench_dc_buffer(dc_device_t* dev, dc_dtype_t dtype, size_t n,
                             const char* label, void** host) {
  dc_buffer_params_t params = {.dtype = dtype, .length = n, .label = label};
  dc_buffer_t* b = NULL;
  DC_CHECK(dc_buffer_create(dev, &params, &b));
  if (host != NULL) DC_CHECK(dc_buffer_host_pointer(b, host));
  return b;
}

void bench_run_sampled(const char* name, bench_case_t* cases, int count,
                       int reps, uint64_t calls, const double* units) {
  double* samples =
      bench_xmalloc(sizeof(double) * (size_t)reps * (size_t)count);
  bool warned = false;
  for (int k = 0; k < count; ++k) cases[k].body(cases[k].arg, 1);
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < count; ++k) {
      bench_settle(name, &warned);
      uint64_t t0 = bench_now_ns();
      cases[k].body(cases[k].arg, calls);
      double t = (double)(bench_now_ns() - t0);
      samples[(size_t)k * (size_t)reps + (size_t)r] =
          t / (double)calls / units[k];
    }
  }
  for (int k = 0; k < count; ++k) {
    cases[k].iters = calls;
    bench_report_samples(name, &cases[k], &samples[(size_t)k * (size_t)reps],
                         reps);
  }
  free(samples);
}

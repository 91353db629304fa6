// harness.c: calibration, interleaved batches, medians and the output
// format described in harness.h.
// SPDX-License-Identifier: MIT
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE "unknown"
#endif

static int g_reps = 31;
static double g_batch_ms = 1.0;

static bool parse_int(const char* text, int* out) {
  if (text == NULL || *text == '\0') return false;
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > 1000000) return false;
  *out = (int)v;
  return true;
}

static bool parse_double(const char* text, double* out) {
  if (text == NULL || *text == '\0') return false;
  char* end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || *end != '\0' || !(v > 0.0) || v > 60000.0) return false;
  *out = v;
  return true;
}

static void usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [--reps N] [--batch-ms M]\n"
          "  --reps N      batches per case (env BENCH_REPS, default 31)\n"
          "  --batch-ms M  least time per batch in ms (env BENCH_BATCH_MS, "
          "default 1)\n",
          prog);
  exit(2);
}

void bench_init(int argc, char** argv) {
  const char* env = getenv("BENCH_REPS");
  if (env != NULL && !parse_int(env, &g_reps)) {
    fprintf(stderr, "BENCH_REPS=%s is not a count from 1 to 1000000\n", env);
    exit(2);
  }
  env = getenv("BENCH_BATCH_MS");
  if (env != NULL && !parse_double(env, &g_batch_ms)) {
    fprintf(stderr, "BENCH_BATCH_MS=%s is not a positive number\n", env);
    exit(2);
  }
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      if (!parse_int(argv[++i], &g_reps)) usage(argv[0]);
    } else if (strcmp(argv[i], "--batch-ms") == 0 && i + 1 < argc) {
      if (!parse_double(argv[++i], &g_batch_ms)) usage(argv[0]);
    } else {
      usage(argv[0]);
    }
  }
  const char* prog = strrchr(argv[0], '/');
  prog = prog ? prog + 1 : argv[0];
  bench_note(prog, "reps=%d batch>=%.3g ms build=%s", g_reps, g_batch_ms,
             BENCH_BUILD_TYPE);
}

int bench_reps(void) { return g_reps; }

static uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

uint64_t bench_process_cpu_ns(void) {
  return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

void bench_sleep_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                        .tv_nsec = (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Whether a thread of this process other than the caller is running or
// waiting for a CPU (state R in /proc). The process's CPU time alone does
// not show a spinning thread: the kernel adds another thread's time to it
// only at scheduler ticks, so a 1 ms window may see none of it.
static bool other_thread_runnable(void) {
  DIR* dir = opendir("/proc/self/task");
  if (dir == NULL) return false;
  const long self = (long)syscall(SYS_gettid);
  bool runnable = false;
  struct dirent* entry;
  while (!runnable && (entry = readdir(dir)) != NULL) {
    char* end = NULL;
    long tid = strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || tid == self) continue;
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
    FILE* f = fopen(path, "r");
    if (f == NULL) continue;  // the thread has exited
    bool read = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    // "tid (name) S ...": the name may hold spaces and parentheses.
    const char* close = read ? strrchr(line, ')') : NULL;
    runnable = close != NULL && close[1] == ' ' && close[2] == 'R';
  }
  closedir(dir);
  return runnable;
}

bool bench_quiesce(uint64_t max_ns) {
  uint64_t start = bench_now_ns();
  for (;;) {
    uint64_t cpu0 = bench_process_cpu_ns();
    uint64_t wall0 = bench_now_ns();
    bench_sleep_ns(1000000);
    uint64_t cpu = bench_process_cpu_ns() - cpu0;
    uint64_t wall1 = bench_now_ns();
    if (cpu * 10 < wall1 - wall0 && !other_thread_runnable()) return true;
    if (wall1 - start >= max_ns) return false;
  }
}

void bench_note(const char* name, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  printf("note\t%s\t", name);
  vprintf(format, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

static int compare_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

void bench_report_samples(const char* name, bench_case_t* c,
                          const double* samples, int n) {
  double* sorted = malloc(sizeof(double) * (size_t)n);
  if (sorted == NULL) abort();
  memcpy(sorted, samples, sizeof(double) * (size_t)n);
  qsort(sorted, (size_t)n, sizeof(double), compare_double);
  c->median_ns = n % 2 ? sorted[n / 2]
                       : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  c->min_ns = sorted[0];
  c->max_ns = sorted[n - 1];
  free(sorted);
  printf("row\t%s\t%s\t%.2f\t%.2f\t%.2f\n", name, c->variant, c->median_ns,
         c->min_ns, c->max_ns);
  fflush(stdout);
}

static uint64_t time_batch(bench_case_t* c, uint64_t iters) {
  uint64_t t0 = bench_now_ns();
  c->body(c->arg, iters);
  return bench_now_ns() - t0;
}

// Wait for idle before a batch of a BENCH_QUIESCE group.
static void settle(const char* name, unsigned flags, bool* warned) {
  if (!(flags & BENCH_QUIESCE)) return;
  if (!bench_quiesce(500000000u) && !*warned) {
    bench_note(name, "process did not go idle within 500 ms between batches");
    *warned = true;
  }
}

// Doubles (or scales) the batch until one takes at least the target time.
static uint64_t calibrate(bench_case_t* c, const char* name, unsigned flags,
                          bool* warned) {
  const uint64_t target = (uint64_t)(g_batch_ms * 1e6);
  uint64_t iters = 1;
  settle(name, flags, warned);
  c->body(c->arg, 1);  // first touch: page faults, lazy binding, thread start
  for (;;) {
    settle(name, flags, warned);
    c->body(c->arg, iters / 10 + 1);  // warm, as before every batch
    uint64_t t = time_batch(c, iters);
    // One slow outlier must not fix the batch size: confirm with a second
    // timing and keep the faster one.
    if (t >= target) {
      uint64_t again = time_batch(c, iters);
      if (again < t) t = again;
    }
    if (t >= target) return iters;
    uint64_t next = t > 0 ? (uint64_t)((double)iters * 1.3 * target / t) : 0;
    if (next < iters * 2) next = iters * 2;
    if (next > iters * 16) next = iters * 16;
    iters = next;
  }
}

void bench_run_group(const char* name, bench_case_t* cases, int count,
                     unsigned flags) {
  const uint64_t target = (uint64_t)(g_batch_ms * 1e6);
  bool warned = false;
  for (int k = 0; k < count; ++k) {
    cases[k].iters = calibrate(&cases[k], name, flags, &warned);
  }
  double* samples = malloc(sizeof(double) * (size_t)g_reps * (size_t)count);
  if (samples == NULL) abort();
  for (int r = 0; r < g_reps; ++r) {
    for (int k = 0; k < count; ++k) {
      bench_case_t* c = &cases[k];
      settle(name, flags, &warned);
      c->body(c->arg, c->iters / 10 + 1);  // untimed warm-up
      uint64_t t = time_batch(c, c->iters);
      samples[(size_t)k * (size_t)g_reps + (size_t)r] =
          (double)t / (double)c->iters;
      // Calibrated while the body was slow (a stall, a busy machine), the
      // batch may now be short: grow it so later batches reach the target.
      if (t < target / 2) {
        uint64_t grow = t > 0 ? (uint64_t)((double)c->iters * 1.3 * target / t)
                              : c->iters * 16;
        c->iters = grow < c->iters * 16 ? grow : c->iters * 16;
      }
    }
  }
  for (int k = 0; k < count; ++k) {
    bench_report_samples(name, &cases[k], &samples[(size_t)k * (size_t)g_reps],
                         g_reps);
  }
  free(samples);
}

void bench_print_rate(const char* name, const bench_case_t* c,
                      double units_per_op, const char* unit) {
  if (c->median_ns <= 0.0) return;
  // bytes / ns = GB/s; flops / ns = GFLOP/s.
  printf("rate\t%s\t%s\t%.4g\t%s\n", name, c->variant,
         units_per_op / c->median_ns, unit);
  fflush(stdout);
}

void bench_print_ratio(const char* name, const bench_case_t* candidate,
                       const bench_case_t* baseline, const char* goal) {
  double value = baseline->median_ns > 0.0
                     ? candidate->median_ns / baseline->median_ns
                     : 0.0;
  printf("ratio\t%s\t%s\t%s\t%.6g\t%s\n", name, candidate->variant,
         baseline->variant, value, goal ? goal : "-");
  fflush(stdout);
}

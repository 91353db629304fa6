// harness.h: dc's own benchmark harness.
//
// A benchmark compares a candidate with a baseline side by side in one
// process run. Each case is a body that runs |iters| operations; the
// harness calibrates a batch size per case so one batch takes at least
// BENCH_BATCH_MS (default 1 ms; a batch that later takes under half of that
// makes the following ones longer), then runs BENCH_REPS (default 31) batches
// of every case of a group, interleaved round-robin (A B A B ...) so that
// drift in clock speed or machine load hits every case alike. Each batch
// gives one sample: its mean time per operation. A case reports the median
// sample, and the min and max.
//
// Output, one record a line, tab-separated (run.sh turns it into a table):
//   row    <name> <variant> <median_ns> <min_ns> <max_ns>
//   ratio  <name> <candidate> <baseline> <value> <goal>
//   note   <name> <text>
// A ratio's value is median(candidate) / median(baseline): below 1 the
// candidate is faster. Its goal is "-" (none), "ratio<=X" (the value must be
// at most X) or "median<N" (the candidate's median must be under N ns).
//
// Options (environment or flags; flags win):
//   BENCH_REPS=N      --reps N       batches per case (default 31)
//   BENCH_BATCH_MS=M  --batch-ms M   least time per batch (default 1)
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_HARNESS_H_
#define DC_BENCH_HARNESS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// Runs |iters| operations. The harness times the whole call.
typedef void (*bench_body_fn)(void* arg, uint64_t iters);

typedef struct bench_case_t {
  const char* variant;  // e.g. "dc pool", "malloc+free"
  bench_body_fn body;
  void* arg;
  // Filled in by bench_run_group():
  uint64_t iters;       // operations per batch, as calibrated
  double median_ns;     // per operation
  double min_ns;
  double max_ns;
} bench_case_t;

typedef enum bench_flags_e {
  BENCH_DEFAULT = 0,
  // Before every batch, wait until the process is idle (no thread of it
  // burning CPU, e.g. spinning workers of the case that ran before), so a
  // case never runs against another one's spinning threads.
  BENCH_QUIESCE = 1 << 0,
} bench_flags_t;

// Reads the options from the environment and |argv|, and prints the
// settings as notes. Call once at the start of main().
void bench_init(int argc, char** argv);

// Batches per case (BENCH_REPS / --reps).
int bench_reps(void);

// Monotonic wall clock, and the CPU time of the whole process, in ns.
uint64_t bench_now_ns(void);
uint64_t bench_process_cpu_ns(void);

// Sleeps |ns| nanoseconds.
void bench_sleep_ns(uint64_t ns);

// Waits until the process burns less than a tenth of a core over 1 ms and
// no thread of it but the caller is running or runnable (a runtime's
// spinning workers, OpenMP's or dc's), at most |max_ns|. Returns true if it
// went idle in time.
bool bench_quiesce(uint64_t max_ns);

// Calibrates, warms up and runs |count| cases interleaved, fills in their
// results and prints one row per case under |name|.
void bench_run_group(const char* name, bench_case_t* cases, int count,
                     unsigned flags);

// Prints the ratio of |candidate| to |baseline| (results of
// bench_run_group()) with |goal| ("-", "ratio<=X" or "median<N").
// Prints a `rate` record: |units_per_op| (bytes, flops) over the case's
// median, in |unit| ("GB/s" for bytes, "GFLOP/s" for flops).
void bench_print_rate(const char* name, const bench_case_t* c,
                      double units_per_op, const char* unit);

void bench_print_ratio(const char* name, const bench_case_t* candidate,
                       const bench_case_t* baseline, const char* goal);

// Summarises |n| samples (ns) into |c|'s median, min and max and prints
// its row; for benchmarks that take their samples themselves.
void bench_report_samples(const char* name, bench_case_t* c,
                          const double* samples, int n);

// Prints a note line: printf-style text under |name|.
void bench_note(const char* name, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// Keeps |p| (and what it points to) alive in the optimiser's eyes.
static inline void bench_escape(void* p) {
  __asm__ volatile("" : : "g"(p) : "memory");
}

#endif  // DC_BENCH_HARNESS_H_

// bench_parallel_for.c: the cost of one fork-join: dc's parallel-for over
// an empty body on every core, against an OpenMP parallel-for region over
// the same range with the same thread count.
//
// Fairness. Both run back-to-back calls within a batch, so each runtime's
// workers are awake and spinning between calls, as in a loop of short
// kernels. Between batches the harness waits until the process is idle
// (BENCH_QUIESCE): the workers of the runtime that just ran must have
// stopped spinning and parked before the other runtime's batch starts, so
// neither ever competes for a core with the other's spinning threads. Each
// batch starts with an untimed warm-up, so waking parked workers is not
// counted either. OpenMP runs with its defaults (run.sh unsets OMP_* and
// GOMP_*); the notes record what the process saw.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>

#include "dc/dc.h"
#include "harness.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define RANGE 1024

typedef struct pf_arg_t {
  dc_worker_pool_t* pool;  // NULL for OpenMP
  int threads;
} pf_arg_t;

static dc_status_t empty_body(void* user_data, size_t begin, size_t end,
                              uint32_t thread_index) {
  (void)user_data;
  (void)begin;
  (void)end;
  (void)thread_index;
  return DC_OK;
}

static void dc_body(void* arg, uint64_t iters) {
  const pf_arg_t* a = arg;
  for (uint64_t i = 0; i < iters; ++i) {
    DC_CHECK(dc_worker_pool_parallel_for(a->pool, 0, RANGE, 0, empty_body,
                                         NULL));
  }
}

#ifdef _OPENMP
static void omp_body(void* arg, uint64_t iters) {
  const pf_arg_t* a = arg;
  for (uint64_t i = 0; i < iters; ++i) {
#pragma omp parallel for num_threads(a->threads)
    for (int j = 0; j < RANGE; ++j) {
    }
  }
}
#endif

static dc_context_t* make_context(dc_idle_policy_t policy) {
  dc_context_params_t params = {.backends = "cpu", .idle_policy = policy};
  dc_context_t* ctx = NULL;
  DC_CHECK(dc_context_create(&params, &ctx));
  return ctx;
}

static const char* env_or(const char* name) {
  const char* v = getenv(name);
  return v ? v : "(unset)";
}

static void note_stats(const char* name, const char* variant,
                       dc_worker_pool_t* pool,
                       const dc_worker_pool_stats_t* before) {
  dc_worker_pool_stats_t s;
  DC_CHECK(dc_worker_pool_stats(pool, &s));
  bench_note(name, "%s: %llu jobs, %llu chunks, %llu parks, %llu wakeups",
             variant, (unsigned long long)(s.jobs - before->jobs),
             (unsigned long long)(s.chunks - before->chunks),
             (unsigned long long)(s.parks - before->parks),
             (unsigned long long)(s.wakeups - before->wakeups));
}

// Runs one group: |policy|'s pool (the only dc context alive) against
// OpenMP, side by side.
static void run_policy(const char* base, dc_idle_policy_t policy,
                       const char* variant, const char* goal) {
  char name[96];
  snprintf(name, sizeof(name), "%s (%s)", base, dc_idle_policy_name(policy));
  dc_context_t* ctx = make_context(policy);
  pf_arg_t dc_arg = {dc_context_worker_pool(ctx), 0};
  dc_arg.threads = (int)dc_worker_pool_thread_count(dc_arg.pool);
  pf_arg_t omp_arg = {NULL, dc_arg.threads};
  dc_worker_pool_stats_t before;
  DC_CHECK(dc_worker_pool_stats(dc_arg.pool, &before));

  bench_case_t cases[] = {
      {.variant = variant, .body = dc_body, .arg = &dc_arg},
#ifdef _OPENMP
      {.variant = "openmp", .body = omp_body, .arg = &omp_arg},
#endif
  };
  int count = (int)(sizeof(cases) / sizeof(cases[0]));
  bench_run_group(name, cases, count, BENCH_QUIESCE);
#ifdef _OPENMP
  bench_print_ratio(name, &cases[0], &cases[1], goal);
#else
  (void)omp_arg;
  (void)goal;
#endif
  note_stats(name, variant, dc_arg.pool, &before);
  dc_context_release(ctx);
}

int main(int argc, char** argv) {
  bench_init(argc, argv);
  const char* name = "parallel-for 1024 empty";
  dc_context_t* probe = make_context(DC_IDLE_DEFAULT);
  int threads = (int)dc_worker_pool_thread_count(dc_context_worker_pool(probe));
  dc_context_release(probe);
  bench_note(name, "threads=%d (dc default: every core), range=%d, chunk=0",
             threads, RANGE);
  bench_note(name, "OMP_WAIT_POLICY=%s GOMP_SPINCOUNT=%s OMP_PROC_BIND=%s",
             env_or("OMP_WAIT_POLICY"), env_or("GOMP_SPINCOUNT"),
             env_or("OMP_PROC_BIND"));
#ifndef _OPENMP
  bench_note(name, "built without OpenMP: no baseline");
#endif
  // The default policy carries the goal; latency is shown for comparison.
  run_policy(name, DC_IDLE_BALANCED, "dc balanced", "ratio<=1.5");
  run_policy(name, DC_IDLE_LATENCY, "dc latency", "-");
  return 0;
}

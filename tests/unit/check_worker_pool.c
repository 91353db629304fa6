// check_worker_pool.c: parallel-for coverage, failures, nesting, idle
// policies and counters.
// SPDX-License-Identifier: MIT
#include <sched.h>
#include <time.h>

#include "check_util.h"

static void env_fixture(void) { dc_test_clear_env(); }

static dc_context_t* pool_context(uint32_t threads, dc_idle_policy_t idle) {
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = threads;
  p.idle_policy = idle;
  return dc_test_context_new(&p);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Waits (yielding) until |flag| is set or 10 s have passed.
static bool wait_for_flag(atomic_bool* flag) {
  uint64_t deadline = now_ns() + 10000000000ull;
  while (!atomic_load(flag)) {
    if (now_ns() > deadline) return false;
    sched_yield();
  }
  return true;
}

static dc_worker_pool_stats_t pool_stats(dc_worker_pool_t* pool) {
  dc_worker_pool_stats_t s;
  memset(&s, 0xAB, sizeof(s));
  DC_CK_OK(dc_worker_pool_stats(pool, &s));
  return s;
}

//===-- A body that records what it is given ----------------------------===//

typedef struct cover_t {
  size_t begin;
  size_t end;
  uint32_t threads;
  atomic_uint* hits;          // per index
  atomic_size_t calls;
  atomic_bool bad_range;      // a chunk outside [begin, end) or empty
  atomic_bool bad_thread;     // a thread_index out of range
  pthread_mutex_t lock;
  pthread_t owner[64];        // the thread seen with each thread_index
  bool seen[64];
  atomic_bool owner_changed;  // one thread_index on two threads
} cover_t;

static void cover_init(cover_t* c, size_t begin, size_t end,
                       uint32_t threads) {
  memset(c, 0, sizeof(*c));
  c->begin = begin;
  c->end = end;
  c->threads = threads;
  c->hits = calloc(end - begin + 1, sizeof(*c->hits));
  ck_assert_ptr_nonnull(c->hits);
  pthread_mutex_init(&c->lock, NULL);
}

static void cover_free(cover_t* c) {
  free(c->hits);
  pthread_mutex_destroy(&c->lock);
}

static dc_status_t cover_body(void* user_data, size_t begin, size_t end,
                              uint32_t thread_index) {
  cover_t* c = user_data;
  atomic_fetch_add(&c->calls, 1);
  if (begin >= end || begin < c->begin || end > c->end) {
    atomic_store(&c->bad_range, true);
    return DC_OK;
  }
  if (thread_index >= c->threads || thread_index >= 64) {
    atomic_store(&c->bad_thread, true);
    return DC_OK;
  }
  pthread_mutex_lock(&c->lock);
  if (!c->seen[thread_index]) {
    c->seen[thread_index] = true;
    c->owner[thread_index] = pthread_self();
  } else if (!pthread_equal(c->owner[thread_index], pthread_self())) {
    atomic_store(&c->owner_changed, true);
  }
  pthread_mutex_unlock(&c->lock);
  for (size_t i = begin; i < end; ++i) {
    atomic_fetch_add(&c->hits[i - c->begin], 1);
  }
  return DC_OK;
}

// Asserts that every index ran exactly once, on sane chunks and threads.
static void cover_check(cover_t* c, const char* what) {
  ck_assert_msg(!atomic_load(&c->bad_range), "%s: bad chunk", what);
  ck_assert_msg(!atomic_load(&c->bad_thread), "%s: bad thread_index", what);
  ck_assert_msg(!atomic_load(&c->owner_changed),
                "%s: a thread_index moved between threads", what);
  for (size_t i = 0; i < c->end - c->begin; ++i) {
    unsigned n = atomic_load(&c->hits[i]);
    if (n != 1) ck_abort_msg("%s: index %zu ran %u times", what, i, n);
  }
  if (c->seen[0]) {
    ck_assert_msg(pthread_equal(c->owner[0], pthread_self()),
                  "%s: thread_index 0 is not the caller", what);
  }
}

// Runs [begin, end) in |chunk|s on |pool| and checks the coverage.
static void run_and_check(dc_worker_pool_t* pool, size_t begin, size_t end,
                          size_t chunk) {
  cover_t c;
  cover_init(&c, begin, end, dc_worker_pool_thread_count(pool));
  char what[96];
  snprintf(what, sizeof(what), "[%zu, %zu) chunk %zu on %u threads", begin,
           end, chunk, c.threads);
  DC_CK_OK(dc_worker_pool_parallel_for(pool, begin, end, chunk, cover_body,
                                       &c));
  cover_check(&c, what);
  cover_free(&c);
}

static dc_status_t never_called(void* user_data, size_t begin, size_t end,
                                uint32_t thread_index) {
  (void)begin;
  (void)end;
  (void)thread_index;
  atomic_fetch_add((atomic_int*)user_data, 1);
  return DC_OK;
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_worker_pool_covers_every_index_once) {
  static const size_t kRanges[][2] = {
      {0, 1}, {0, 2}, {0, 7}, {3, 4}, {0, 100}, {5, 1005}, {0, 4096},
      {1000000, 1000333},
  };
  static const size_t kChunks[] = {0, 1, 3, 7, 64, 1000, 5000, SIZE_MAX};
  static const uint32_t kThreads[] = {1, 2, 4};
  for (size_t t = 0; t < 3; ++t) {
    dc_context_t* ctx = pool_context(kThreads[t], DC_IDLE_BALANCED);
    dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
    for (size_t r = 0; r < sizeof(kRanges) / sizeof(kRanges[0]); ++r) {
      for (size_t k = 0; k < sizeof(kChunks) / sizeof(kChunks[0]); ++k) {
        run_and_check(pool, kRanges[r][0], kRanges[r][1], kChunks[k]);
      }
    }
    dc_context_release(ctx);
  }
}
END_TEST

START_TEST(test_worker_pool_chunks_have_the_asked_size) {
  dc_context_t* ctx = pool_context(3, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  dc_worker_pool_stats_t before = pool_stats(pool);
  cover_t c;
  cover_init(&c, 0, 1000, 3);
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, 1000, 7, cover_body, &c));
  cover_check(&c, "chunk 7");
  // 142 full chunks and one of 6.
  ck_assert_uint_eq(atomic_load(&c.calls), 143);
  dc_worker_pool_stats_t after = pool_stats(pool);
  ck_assert_uint_eq(after.jobs, before.jobs + 1);
  ck_assert_uint_eq(after.chunks, before.chunks + 143);
  ck_assert_uint_eq(after.inline_jobs, before.inline_jobs);
  cover_free(&c);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_chunk_zero_gives_several_chunks_per_thread) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  cover_t c;
  cover_init(&c, 0, 10000, 4);
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, 10000, 0, cover_body, &c));
  cover_check(&c, "chunk 0");
  ck_assert_uint_ge(atomic_load(&c.calls), 8);  // more than one per thread
  ck_assert_uint_le(atomic_load(&c.calls), 10000);
  cover_free(&c);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_large_chunk_runs_inline) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  dc_worker_pool_stats_t before = pool_stats(pool);
  cover_t c;
  cover_init(&c, 10, 60, 4);
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 10, 60, 50, cover_body, &c));
  cover_check(&c, "one chunk");
  ck_assert_uint_eq(atomic_load(&c.calls), 1);
  ck_assert(c.seen[0]);  // on the caller
  dc_worker_pool_stats_t after = pool_stats(pool);
  ck_assert_uint_eq(after.inline_jobs, before.inline_jobs + 1);
  ck_assert_uint_eq(after.jobs, before.jobs);
  cover_free(&c);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_empty_range_calls_nothing) {
  dc_context_t* ctx = pool_context(2, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  dc_worker_pool_stats_t before = pool_stats(pool);
  atomic_int calls = 0;
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, 0, 1, never_called, &calls));
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 77, 77, 0, never_called,
                                       &calls));
  DC_CK_OK(dc_worker_pool_parallel_for(pool, SIZE_MAX, SIZE_MAX, 5,
                                       never_called, &calls));
  ck_assert_int_eq(atomic_load(&calls), 0);
  dc_worker_pool_stats_t after = pool_stats(pool);
  ck_assert_uint_eq(after.jobs, before.jobs);
  ck_assert_uint_eq(after.inline_jobs, before.inline_jobs);
  ck_assert_uint_eq(after.chunks, before.chunks);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_thread_index_identifies_threads) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_LATENCY);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  ck_assert_uint_eq(dc_worker_pool_thread_count(pool), 4);
  for (int round = 0; round < 10; ++round) {
    run_and_check(pool, 0, 10000, 1);  // checks index range and ownership
  }
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_env_workers_one_runs_inline) {
  setenv("DC_WORKERS", "1", 1);
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  ck_assert_uint_eq(dc_worker_pool_thread_count(pool), 1);
  cover_t c;
  cover_init(&c, 0, 1000, 1);
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, 1000, 10, cover_body, &c));
  cover_check(&c, "DC_WORKERS=1");
  ck_assert_uint_eq(atomic_load(&c.calls), 1);  // the whole range at once
  ck_assert(c.seen[0]);
  dc_worker_pool_stats_t s = pool_stats(pool);
  ck_assert_uint_eq(s.jobs, 0);
  ck_assert_uint_eq(s.inline_jobs, 1);
  ck_assert_uint_eq(s.chunks, 1);
  cover_free(&c);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_idle_policy_names) {
  ck_assert_str_eq(dc_idle_policy_name(DC_IDLE_LATENCY), "latency");
  ck_assert_str_eq(dc_idle_policy_name(DC_IDLE_BALANCED), "balanced");
  ck_assert_str_eq(dc_idle_policy_name(DC_IDLE_POWER), "power");
  ck_assert_str_eq(dc_idle_policy_name(DC_IDLE_DEFAULT), "balanced");
  static const struct {
    const char* text;
    dc_idle_policy_t policy;
  } kGood[] = {
      {"latency", DC_IDLE_LATENCY}, {"balanced", DC_IDLE_BALANCED},
      {"power", DC_IDLE_POWER},     {"POWER", DC_IDLE_POWER},
      {"Latency", DC_IDLE_LATENCY},
  };
  for (size_t i = 0; i < sizeof(kGood) / sizeof(kGood[0]); ++i) {
    dc_idle_policy_t p = DC_IDLE_DEFAULT;
    ck_assert_msg(dc_idle_policy_parse(kGood[i].text, &p), "'%s'",
                  kGood[i].text);
    ck_assert_int_eq(p, kGood[i].policy);
  }
}
END_TEST

START_TEST(test_worker_pool_idle_policy_from_params) {
  static const dc_idle_policy_t kPolicies[] = {
      DC_IDLE_LATENCY, DC_IDLE_BALANCED, DC_IDLE_POWER};
  for (size_t i = 0; i < 3; ++i) {
    dc_context_t* ctx = pool_context(2, kPolicies[i]);
    dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
    ck_assert_int_eq(dc_worker_pool_idle_policy(pool), kPolicies[i]);
    run_and_check(pool, 0, 500, 1);
    dc_context_release(ctx);
  }
  dc_context_t* ctx = pool_context(2, DC_IDLE_DEFAULT);
  ck_assert_int_eq(dc_worker_pool_idle_policy(dc_context_worker_pool(ctx)),
                   DC_IDLE_BALANCED);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_parked_workers_are_woken) {
  dc_context_t* ctx = pool_context(3, DC_IDLE_POWER);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  // With the power policy idle workers park at once.
  uint64_t deadline = now_ns() + 10000000000ull;
  while (pool_stats(pool).parks < 2 && now_ns() < deadline) sched_yield();
  dc_worker_pool_stats_t before = pool_stats(pool);
  ck_assert_uint_ge(before.parks, 2);
  ck_assert_uint_eq(before.wakeups, 0);
  run_and_check(pool, 0, 1000, 1);
  // Both parked workers are woken for the job. The caller does not wait
  // for workers that had not joined when it ran out of chunks, so a late
  // one may still be on its way.
  deadline = now_ns() + 10000000000ull;
  while (pool_stats(pool).wakeups < 2 && now_ns() < deadline) sched_yield();
  ck_assert_uint_eq(pool_stats(pool).wakeups, 2);
  dc_context_release(ctx);
}
END_TEST

//===-- core: failures --------------------------------------------------===//

typedef struct fail_t {
  atomic_bool worker_ran;   // a worker thread has started a chunk
  atomic_bool caller_ran;   // the caller has started a chunk
  atomic_size_t chunks;
  uint32_t fail_on;         // 0: the caller fails; else workers fail
} fail_t;

static const dc_status_t kWorkerStatus[] = {
    DC_ERR_DATA_LOSS, DC_ERR_ABORTED, DC_ERR_INTERNAL, DC_ERR_UNAVAILABLE,
};

// Fails on the threads |fail_on| selects, after making sure the other
// side has run a chunk too, so that the failure comes from the thread the
// test wants.
static dc_status_t failing_body(void* user_data, size_t begin, size_t end,
                                uint32_t thread_index) {
  (void)end;
  fail_t* f = user_data;
  atomic_fetch_add(&f->chunks, 1);
  if (thread_index == 0) {
    atomic_store(&f->caller_ran, true);
    if (f->fail_on != 0) {
      wait_for_flag(&f->worker_ran);
      return DC_OK;
    }
    return dc_set_error(DC_ERR_OUT_OF_RANGE, "caller failed at %zu", begin);
  }
  atomic_store(&f->worker_ran, true);
  if (f->fail_on == 0) {
    wait_for_flag(&f->caller_ran);
    return DC_OK;
  }
  dc_status_t st = kWorkerStatus[thread_index % 4];
  return dc_set_error(st, "worker %u failed at %zu with %s", thread_index,
                      begin, dc_status_name(st));
}

START_TEST(test_worker_pool_worker_failure_reaches_the_caller) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  fail_t f = {.fail_on = 1};
  dc_set_error(DC_ERR_UNKNOWN, "stale message of the caller");
  dc_status_t st = dc_worker_pool_parallel_for(pool, 0, 10000, 1,
                                               failing_body, &f);
  ck_assert(atomic_load(&f.worker_ran));
  ck_assert_msg(st == DC_ERR_ABORTED || st == DC_ERR_INTERNAL ||
                    st == DC_ERR_UNAVAILABLE,
                "got %s", dc_status_name(st));
  // The message is the one the failing body set on its worker thread, and
  // it belongs to the same failure as the code.
  DC_CK_ERROR_HAS("worker ");
  DC_CK_ERROR_HAS(dc_status_name(st));
  // No new chunks start after a failure.
  ck_assert_uint_lt(atomic_load(&f.chunks), 10000);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_caller_failure_is_returned) {
  dc_context_t* ctx = pool_context(3, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  fail_t f = {.fail_on = 0};
  DC_CK_FAIL(dc_worker_pool_parallel_for(pool, 0, 10000, 1, failing_body,
                                         &f),
             DC_ERR_OUT_OF_RANGE, "caller failed at ");
  ck_assert_uint_lt(atomic_load(&f.chunks), 10000);
  dc_context_release(ctx);
}
END_TEST

static dc_status_t fail_inline(void* user_data, size_t begin, size_t end,
                               uint32_t thread_index) {
  (void)user_data;
  return dc_set_error(DC_ERR_CANCELLED, "inline [%zu, %zu) on %u", begin, end,
                      thread_index);
}

START_TEST(test_worker_pool_inline_failure_is_returned) {
  dc_context_t* ctx = pool_context(1, DC_IDLE_BALANCED);
  DC_CK_FAIL(dc_worker_pool_parallel_for(dc_context_worker_pool(ctx), 4, 9, 1,
                                         fail_inline, NULL),
             DC_ERR_CANCELLED, "inline [4, 9) on 0");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_works_again_after_a_failure) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  for (int round = 0; round < 5; ++round) {
    fail_t f = {.fail_on = 1};
    dc_status_t st = dc_worker_pool_parallel_for(pool, 0, 5000, 1,
                                                 failing_body, &f);
    ck_assert_int_ne(st, DC_OK);
    run_and_check(pool, 0, 5000, 3);  // no failure left behind
  }
  dc_context_release(ctx);
}
END_TEST

//===-- core: nesting ---------------------------------------------------===//

typedef struct nest_t {
  dc_worker_pool_t* pool;
  cover_t* inner;        // one per outer index
  atomic_bool inner_failed;
} nest_t;

static dc_status_t outer_body(void* user_data, size_t begin, size_t end,
                              uint32_t thread_index) {
  (void)thread_index;
  nest_t* n = user_data;
  for (size_t i = begin; i < end; ++i) {
    dc_status_t st = dc_worker_pool_parallel_for(n->pool, 0, 64, 4,
                                                 cover_body, &n->inner[i]);
    if (st != DC_OK) atomic_store(&n->inner_failed, true);
  }
  return DC_OK;
}

START_TEST(test_worker_pool_nested_parallel_for_runs_inline) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  enum { kOuter = 40 };
  cover_t inner[kOuter];
  // A nested call runs its range on its own thread alone, numbered 0.
  for (int i = 0; i < kOuter; ++i) cover_init(&inner[i], 0, 64, 1);
  nest_t n = {pool, inner, false};
  dc_worker_pool_stats_t before = pool_stats(pool);
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, kOuter, 1, outer_body, &n));
  ck_assert(!atomic_load(&n.inner_failed));
  for (int i = 0; i < kOuter; ++i) {
    ck_assert_msg(!atomic_load(&inner[i].bad_range), "inner %d", i);
    ck_assert_msg(!atomic_load(&inner[i].bad_thread), "inner %d", i);
    ck_assert_uint_eq(atomic_load(&inner[i].calls), 1);  // one inline call
    for (size_t j = 0; j < 64; ++j) {
      ck_assert_uint_eq(atomic_load(&inner[i].hits[j]), 1);
    }
    cover_free(&inner[i]);
  }
  dc_worker_pool_stats_t after = pool_stats(pool);
  ck_assert_uint_eq(after.jobs, before.jobs + 1);
  ck_assert_uint_eq(after.inline_jobs, before.inline_jobs + kOuter);
  dc_context_release(ctx);
}
END_TEST

//===-- gangs -----------------------------------------------------------===//

// Each member counts itself in, then waits until every member has: only
// members that run at the same time get past the wait.
typedef struct gang_t {
  uint32_t count;
  atomic_uint arrived;
  atomic_uint threads_seen;  // a bit per thread index
  atomic_bool timed_out;
  atomic_int fail_index;     // the member that fails, or -1
} gang_t;

static dc_status_t gang_member(void* user_data, size_t begin, size_t end,
                               uint32_t thread_index) {
  gang_t* g = user_data;
  ck_assert_uint_eq(end, begin + 1);
  atomic_fetch_or(&g->threads_seen, 1u << thread_index);
  atomic_fetch_add(&g->arrived, 1u);
  uint64_t deadline = now_ns() + 10000000000ull;
  while (atomic_load(&g->arrived) < g->count) {
    if (now_ns() > deadline) {
      atomic_store(&g->timed_out, true);
      break;
    }
    sched_yield();
  }
  if ((int)begin == atomic_load(&g->fail_index)) {
    return dc_set_error(DC_ERR_INTERNAL, "member %zu failed", begin);
  }
  return DC_OK;
}

static dc_status_t gang_inside_parallel_for(void* user_data, size_t begin,
                                            size_t end, uint32_t thread) {
  (void)begin, (void)end, (void)thread;
  gang_t inner = {.count = 2, .fail_index = -1};
  dc_status_t st =
      dc_worker_pool_gang((dc_worker_pool_t*)user_data, 2, gang_member, &inner);
  return st == DC_ERR_UNSUPPORTED ? DC_OK : DC_ERR_INTERNAL;
}

START_TEST(test_worker_pool_gang_members_run_at_once) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  uint32_t threads = dc_worker_pool_thread_count(pool);
  gang_t g = {.count = threads, .fail_index = -1};
  DC_CK_OK(dc_worker_pool_gang(pool, threads, gang_member, &g));
  ck_assert(!atomic_load(&g.timed_out));
  ck_assert_uint_eq(atomic_load(&g.arrived), threads);
  // Every member on a thread of its own.
  ck_assert_uint_eq(atomic_load(&g.threads_seen), (1u << threads) - 1u);
  // A failing member fails the gang, after every member ran.
  gang_t failing = {.count = threads, .fail_index = 1};
  DC_CK_FAIL(dc_worker_pool_gang(pool, threads, gang_member, &failing),
             DC_ERR_INTERNAL, "member 1 failed");
  ck_assert_uint_eq(atomic_load(&failing.arrived), threads);
  // None and one.
  gang_t none = {.count = 0, .fail_index = -1};
  DC_CK_OK(dc_worker_pool_gang(pool, 0, gang_member, &none));
  ck_assert_uint_eq(atomic_load(&none.arrived), 0);
  gang_t one = {.count = 1, .fail_index = -1};
  DC_CK_OK(dc_worker_pool_gang(pool, 1, gang_member, &one));
  ck_assert_uint_eq(atomic_load(&one.arrived), 1);
  // Inside a parallel-for body the workers are taken.
  DC_CK_OK(dc_worker_pool_parallel_for(pool, 0, 8, 1,
                                       gang_inside_parallel_for, pool));
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_gang_bad_arguments) {
  dc_context_t* ctx = pool_context(2, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  gang_t g = {.count = 3, .fail_index = -1};
  const char* fn = "dc_worker_pool_gang";
  DC_CK_FAIL(dc_worker_pool_gang(NULL, 1, gang_member, &g),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_worker_pool_gang(pool, 1, NULL, &g), DC_ERR_INVALID_ARGUMENT,
             fn);
  DC_CK_FAIL(dc_worker_pool_gang(pool, 3, gang_member, &g),
             DC_ERR_INVALID_ARGUMENT, "cannot run at once on 2 thread(s)");
  ck_assert_uint_eq(atomic_load(&g.arrived), 0);
  dc_context_release(ctx);
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_worker_pool_bad_arguments) {
  dc_context_t* ctx = pool_context(2, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  const char* fn = "dc_worker_pool_parallel_for";
  atomic_int calls = 0;
  DC_CK_FAIL(dc_worker_pool_parallel_for(pool, 10, 9, 1, never_called,
                                         &calls),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_ERROR_HAS("end 9 is before its begin 10");
  DC_CK_FAIL(dc_worker_pool_parallel_for(pool, SIZE_MAX, 0, 0, never_called,
                                         &calls),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_worker_pool_parallel_for(NULL, 0, 10, 1, never_called,
                                         &calls),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_ERROR_HAS("pool");
  DC_CK_FAIL(dc_worker_pool_parallel_for(pool, 0, 10, 1, NULL, &calls),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_ERROR_HAS("fn");
  ck_assert_int_eq(atomic_load(&calls), 0);

  DC_CK_FAIL(dc_worker_pool_stats(NULL, &(dc_worker_pool_stats_t){0}),
             DC_ERR_INVALID_ARGUMENT, "dc_worker_pool_stats");
  DC_CK_FAIL(dc_worker_pool_stats(pool, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_worker_pool_stats");
  ck_assert_uint_eq(dc_worker_pool_thread_count(NULL), 0);
  ck_assert_int_eq(dc_worker_pool_idle_policy(NULL), DC_IDLE_DEFAULT);
  dc_context_release(ctx);
}
END_TEST

// A body that holds its call until |release|, saying it started.
typedef struct hold_t {
  dc_worker_pool_t* pool;
  atomic_bool started;
  atomic_bool release;
} hold_t;

static dc_status_t hold_body(void* user_data, size_t begin, size_t end,
                             uint32_t thread) {
  (void)begin;
  (void)end;
  (void)thread;
  hold_t* h = user_data;
  atomic_store(&h->started, true);
  while (!atomic_load(&h->release)) sched_yield();
  return DC_OK;
}

static void* hold_thread(void* arg) {
  hold_t* h = arg;
  dc_status_t st = dc_worker_pool_parallel_for(h->pool, 0, 8, 1, hold_body, h);
  return (void*)(intptr_t)st;
}

static dc_status_t count_body(void* user_data, size_t begin, size_t end,
                              uint32_t thread) {
  (void)thread;
  atomic_fetch_add((atomic_size_t*)user_data, end - begin);
  return DC_OK;
}

START_TEST(test_worker_pool_try_gives_way_to_a_running_call) {
  dc_context_t* ctx = pool_context(2, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  atomic_size_t done = 0;
  // Free: it runs everything, in chunks over the workers.
  DC_CK_OK(dc_worker_pool_try_parallel_for(pool, 0, 1000, 10, count_body,
                                           &done));
  ck_assert_uint_eq(atomic_load(&done), 1000);
  // Busy with another thread's call: it runs nothing and says so.
  hold_t h = {.pool = pool};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, hold_thread, &h), 0);
  ck_assert(wait_for_flag(&h.started));
  atomic_store(&done, 0);
  DC_CK_FAIL(dc_worker_pool_try_parallel_for(pool, 0, 1000, 10, count_body,
                                             &done),
             DC_ERR_UNAVAILABLE, "the workers are running another call");
  ck_assert_uint_eq(atomic_load(&done), 0);
  atomic_store(&h.release, true);
  void* status = NULL;
  ck_assert_int_eq(pthread_join(t, &status), 0);
  ck_assert_int_eq((int)(intptr_t)status, DC_OK);
  DC_CK_OK(dc_worker_pool_try_parallel_for(pool, 0, 1000, 10, count_body,
                                           &done));
  ck_assert_uint_eq(atomic_load(&done), 1000);
  // Its arguments are checked as parallel_for's.
  DC_CK_FAIL(dc_worker_pool_try_parallel_for(NULL, 0, 10, 1, count_body,
                                             &done),
             DC_ERR_INVALID_ARGUMENT, "dc_worker_pool_try_parallel_for");
  DC_CK_FAIL(dc_worker_pool_try_parallel_for(pool, 10, 9, 1, count_body,
                                             &done),
             DC_ERR_INVALID_ARGUMENT, "end 9 is before its begin 10");
  DC_CK_FAIL(dc_worker_pool_try_parallel_for(pool, 0, 10, 1, NULL, &done),
             DC_ERR_INVALID_ARGUMENT, "dc_worker_pool_try_parallel_for");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_idle_policy_parse_rejects_other_text) {
  static const char* const kBad[] = {"", "default", "fast", "powe",
                                     "power ", "0"};
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    dc_idle_policy_t p = DC_IDLE_LATENCY;
    ck_assert_msg(!dc_idle_policy_parse(kBad[i], &p), "'%s'", kBad[i]);
    ck_assert_int_eq(p, DC_IDLE_LATENCY);
  }
  dc_idle_policy_t p = DC_IDLE_LATENCY;
  ck_assert(!dc_idle_policy_parse(NULL, &p));
  ck_assert(!dc_idle_policy_parse("power", NULL));
  ck_assert_str_eq(dc_idle_policy_name((dc_idle_policy_t)9), "?");
  ck_assert_str_eq(dc_idle_policy_name((dc_idle_policy_t)-1), "?");
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_worker_pool_many_calls_in_a_row) {
  static const dc_idle_policy_t kPolicies[] = {DC_IDLE_POWER,
                                               DC_IDLE_LATENCY};
  for (size_t p = 0; p < 2; ++p) {
    dc_context_t* ctx = pool_context(3, kPolicies[p]);
    dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
    ck_assert_ptr_eq(dc_context_worker_pool(ctx), pool);  // stable
    for (int i = 0; i < 300; ++i) run_and_check(pool, 0, 37 + i % 50, 2);
    dc_worker_pool_stats_t s = pool_stats(pool);
    ck_assert_uint_eq(s.jobs, 300);
    dc_context_release(ctx);
  }
}
END_TEST

START_TEST(test_worker_pool_released_with_the_context) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 4;
  dc_context_t* ctx = dc_test_context_new(&p);
  run_and_check(dc_context_worker_pool(ctx), 0, 1000, 1);
  dc_context_release(ctx);  // joins the workers
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_worker_pool_range_at_the_top_of_size_t) {
  dc_context_t* ctx = pool_context(3, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  static const size_t kChunks[] = {0, 1, 3, 7, 64, 100};
  for (size_t k = 0; k < sizeof(kChunks) / sizeof(kChunks[0]); ++k) {
    run_and_check(pool, SIZE_MAX - 100, SIZE_MAX, kChunks[k]);
    run_and_check(pool, SIZE_MAX - 5, SIZE_MAX, kChunks[k]);
  }
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_many_tiny_chunks) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  run_and_check(dc_context_worker_pool(ctx), 0, 100000, 1);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_worker_pool_more_threads_than_cores) {
  dc_context_t* ctx = pool_context(12, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  ck_assert_uint_eq(dc_worker_pool_thread_count(pool), 12);
  for (int i = 0; i < 10; ++i) run_and_check(pool, 0, 5000, 5);
  dc_context_release(ctx);
}
END_TEST

static Suite* worker_pool_suite(void) {
  Suite* s = suite_create("worker_pool");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, env_fixture, env_fixture);
  tcase_set_timeout(core, 60);
  tcase_add_test(core, test_worker_pool_covers_every_index_once);
  tcase_add_test(core, test_worker_pool_chunks_have_the_asked_size);
  tcase_add_test(core,
                 test_worker_pool_chunk_zero_gives_several_chunks_per_thread);
  tcase_add_test(core, test_worker_pool_large_chunk_runs_inline);
  tcase_add_test(core, test_worker_pool_empty_range_calls_nothing);
  tcase_add_test(core, test_worker_pool_thread_index_identifies_threads);
  tcase_add_test(core, test_worker_pool_env_workers_one_runs_inline);
  tcase_add_test(core, test_worker_pool_idle_policy_names);
  tcase_add_test(core, test_worker_pool_idle_policy_from_params);
  tcase_add_test(core, test_worker_pool_parked_workers_are_woken);
  tcase_add_test(core, test_worker_pool_worker_failure_reaches_the_caller);
  tcase_add_test(core, test_worker_pool_caller_failure_is_returned);
  tcase_add_test(core, test_worker_pool_inline_failure_is_returned);
  tcase_add_test(core, test_worker_pool_works_again_after_a_failure);
  tcase_add_test(core, test_worker_pool_nested_parallel_for_runs_inline);
  tcase_add_test(core, test_worker_pool_gang_members_run_at_once);
  tcase_add_test(core, test_worker_pool_gang_bad_arguments);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, env_fixture, env_fixture);
  tcase_add_test(errors, test_worker_pool_bad_arguments);
  tcase_add_test(errors, test_worker_pool_try_gives_way_to_a_running_call);
  tcase_add_test(errors, test_worker_pool_idle_policy_parse_rejects_other_text);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, env_fixture, env_fixture);
  tcase_set_timeout(lifecycle, 60);
  tcase_add_test(lifecycle, test_worker_pool_many_calls_in_a_row);
  tcase_add_test(lifecycle, test_worker_pool_released_with_the_context);
  suite_add_tcase(s, lifecycle);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, env_fixture, env_fixture);
  tcase_set_timeout(limits, 60);
  tcase_add_test(limits, test_worker_pool_range_at_the_top_of_size_t);
  tcase_add_test(limits, test_worker_pool_many_tiny_chunks);
  tcase_add_test(limits, test_worker_pool_more_threads_than_cores);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(worker_pool_suite)

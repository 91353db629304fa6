// check_worker_stress.c: several host threads sharing one worker pool:
// concurrent calls, nested calls, and failures from many threads.
// SPDX-License-Identifier: MIT
#include "check_util.h"

#define HOSTS 4

static void env_fixture(void) { dc_test_clear_env(); }

static dc_context_t* pool_context(uint32_t threads, dc_idle_policy_t idle) {
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = threads;
  p.idle_policy = idle;
  return dc_test_context_new(&p);
}

// One call's bookkeeping: a hit counter per index.
typedef struct count_t {
  size_t begin;
  size_t end;
  uint32_t threads;
  atomic_uint* hits;
  atomic_bool bad;  // a chunk or thread_index out of range
} count_t;

static dc_status_t count_body(void* user_data, size_t begin, size_t end,
                              uint32_t thread_index) {
  count_t* c = user_data;
  if (begin >= end || begin < c->begin || end > c->end ||
      thread_index >= c->threads) {
    atomic_store(&c->bad, true);
    return DC_OK;
  }
  for (size_t i = begin; i < end; ++i) {
    atomic_fetch_add_explicit(&c->hits[i - c->begin], 1,
                              memory_order_relaxed);
  }
  return DC_OK;
}

// Counts the indices of |c| that did not run exactly once.
static size_t count_misses(count_t* c) {
  size_t misses = atomic_load(&c->bad) ? 1 : 0;
  for (size_t i = 0; i < c->end - c->begin; ++i) {
    if (atomic_load(&c->hits[i]) != 1) ++misses;
  }
  return misses;
}

// What one host thread did; asserted on by the test's own thread.
typedef struct host_t {
  dc_worker_pool_t* pool;
  unsigned id;
  int calls;
  bool nested;           // bodies make nested calls
  size_t non_empty;      // calls with at least one index
  size_t misses;         // indices not run exactly once
  size_t bad_status;     // calls that returned the wrong status
  size_t bad_message;    // failures whose message was not this thread's
  char first_problem[200];
} host_t;

static void note(host_t* h, const char* what) {
  if (h->first_problem[0] == '\0') {
    snprintf(h->first_problem, sizeof(h->first_problem), "host %u: %s: %s",
             h->id, what, dc_last_error());
  }
}

//===-- Concurrent callers ----------------------------------------------===//

static void* caller_thread(void* arg) {
  host_t* h = arg;
  uint64_t rng = 0xC0FFEEull + h->id;
  uint32_t threads = dc_worker_pool_thread_count(h->pool);
  atomic_uint* hits = calloc(4096, sizeof(*hits));
  for (int call = 0; call < h->calls; ++call) {
    size_t n = (size_t)(dc_test_rand(&rng) % 4096);  // 0 is allowed
    size_t begin = (size_t)(dc_test_rand(&rng) % 1000000);
    size_t chunk = (size_t)(dc_test_rand(&rng) % 65);
    for (size_t i = 0; i < n; ++i) atomic_store(&hits[i], 0);
    count_t c = {begin, begin + n, threads, hits, false};
    dc_status_t st = dc_worker_pool_parallel_for(h->pool, begin, begin + n,
                                                 chunk, count_body, &c);
    if (st != DC_OK) {
      h->bad_status++;
      note(h, "parallel_for failed");
    }
    if (n > 0) h->non_empty++;
    h->misses += count_misses(&c);
  }
  free(hits);
  return NULL;
}

static void check_hosts(host_t* hosts) {
  for (int i = 0; i < HOSTS; ++i) {
    ck_assert_msg(hosts[i].misses == 0 && hosts[i].bad_status == 0 &&
                      hosts[i].bad_message == 0,
                  "host %d: %zu misses, %zu bad statuses, %zu bad messages "
                  "(%s)",
                  i, hosts[i].misses, hosts[i].bad_status,
                  hosts[i].bad_message, hosts[i].first_problem);
  }
}

START_TEST(test_worker_stress_concurrent_callers) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_BALANCED);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  host_t hosts[HOSTS];
  memset(hosts, 0, sizeof(hosts));
  for (int i = 0; i < HOSTS; ++i) {
    hosts[i] = (host_t){.pool = pool, .id = (unsigned)i, .calls = 150};
  }
  dc_test_run_threads(HOSTS, caller_thread, hosts, sizeof(hosts[0]));
  check_hosts(hosts);
  // Every non-empty call was counted once, as a job or inline.
  size_t non_empty = 0;
  for (int i = 0; i < HOSTS; ++i) non_empty += hosts[i].non_empty;
  dc_worker_pool_stats_t s;
  DC_CK_OK(dc_worker_pool_stats(pool, &s));
  ck_assert_uint_eq(s.jobs + s.inline_jobs, non_empty);
  ck_assert_uint_gt(s.jobs, 0);
  dc_context_release(ctx);
}
END_TEST

//===-- Nested calls from many threads ----------------------------------===//

typedef struct nest_t {
  dc_worker_pool_t* pool;
  count_t* inner;  // one per outer index
  atomic_size_t inner_failures;
} nest_t;

static dc_status_t nesting_body(void* user_data, size_t begin, size_t end,
                                uint32_t thread_index) {
  (void)thread_index;
  nest_t* n = user_data;
  for (size_t i = begin; i < end; ++i) {
    count_t* c = &n->inner[i];
    if (dc_worker_pool_parallel_for(n->pool, c->begin, c->end, 3, count_body,
                                    c) != DC_OK) {
      atomic_fetch_add(&n->inner_failures, 1);
    }
  }
  return DC_OK;
}

enum { kOuter = 24, kInner = 50 };

static void* nesting_thread(void* arg) {
  host_t* h = arg;
  atomic_uint* hits = calloc(kOuter * kInner, sizeof(*hits));
  count_t inner[kOuter];
  for (int call = 0; call < h->calls; ++call) {
    for (size_t i = 0; i < (size_t)kOuter * kInner; ++i) {
      atomic_store(&hits[i], 0);
    }
    for (size_t i = 0; i < kOuter; ++i) {
      // A nested call runs on its own thread alone, numbered 0.
      inner[i] = (count_t){i * kInner, (i + 1) * kInner, 1, hits + i * kInner,
                           false};
    }
    nest_t n = {h->pool, inner, 0};
    dc_status_t st = dc_worker_pool_parallel_for(h->pool, 0, kOuter, 1,
                                                 nesting_body, &n);
    if (st != DC_OK || atomic_load(&n.inner_failures) != 0) {
      h->bad_status++;
      note(h, "nested parallel_for failed");
    }
    for (size_t i = 0; i < kOuter; ++i) h->misses += count_misses(&inner[i]);
  }
  free(hits);
  return NULL;
}

START_TEST(test_worker_stress_nested_calls_from_many_threads) {
  dc_context_t* ctx = pool_context(3, DC_IDLE_LATENCY);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  host_t hosts[HOSTS];
  memset(hosts, 0, sizeof(hosts));
  for (int i = 0; i < HOSTS; ++i) {
    hosts[i] = (host_t){.pool = pool, .id = (unsigned)i, .calls = 60};
  }
  dc_test_run_threads(HOSTS, nesting_thread, hosts, sizeof(hosts[0]));
  check_hosts(hosts);
  dc_worker_pool_stats_t s;
  DC_CK_OK(dc_worker_pool_stats(pool, &s));
  ck_assert_uint_eq(s.jobs, HOSTS * 60);
  ck_assert_uint_eq(s.inline_jobs, HOSTS * 60 * kOuter);
  dc_context_release(ctx);
}
END_TEST

//===-- Failures from many threads --------------------------------------===//

static const dc_status_t kHostStatus[HOSTS] = {
    DC_ERR_DATA_LOSS, DC_ERR_ABORTED, DC_ERR_UNAVAILABLE, DC_ERR_CANCELLED,
};

typedef struct failing_call_t {
  unsigned host;
  int call;
  size_t fail_at;  // the one index whose body fails
} failing_call_t;

static dc_status_t fail_at_body(void* user_data, size_t begin, size_t end,
                                uint32_t thread_index) {
  const failing_call_t* f = user_data;
  if (f->fail_at < begin || f->fail_at >= end) return DC_OK;
  return dc_set_error(kHostStatus[f->host],
                      "host %u call %d failed at %zu on thread %u", f->host,
                      f->call, f->fail_at, thread_index);
}

static void* failing_thread(void* arg) {
  host_t* h = arg;
  uint64_t rng = 0xFA11ull * (h->id + 1);
  uint32_t threads = dc_worker_pool_thread_count(h->pool);
  atomic_uint* hits = calloc(2000, sizeof(*hits));
  for (int call = 0; call < h->calls; ++call) {
    size_t n = 1 + (size_t)(dc_test_rand(&rng) % 2000);
    size_t chunk = (size_t)(dc_test_rand(&rng) % 17);
    if (call % 3 == 2) {
      // Between failures, a clean call must succeed: no failure of this or
      // another thread is left behind in the pool.
      for (size_t i = 0; i < n; ++i) atomic_store(&hits[i], 0);
      count_t c = {0, n, threads, hits, false};
      if (dc_worker_pool_parallel_for(h->pool, 0, n, chunk, count_body,
                                      &c) != DC_OK) {
        h->bad_status++;
        note(h, "a clean call failed");
      }
      h->misses += count_misses(&c);
      continue;
    }
    failing_call_t f = {h->id, call, (size_t)(dc_test_rand(&rng) % n)};
    dc_status_t st = dc_worker_pool_parallel_for(h->pool, 0, n, chunk,
                                                 fail_at_body, &f);
    if (st != kHostStatus[h->id]) {
      h->bad_status++;
      note(h, dc_status_name(st));
      continue;
    }
    char want[64];
    snprintf(want, sizeof(want), "host %u call %d failed at %zu ", h->id,
             call, f.fail_at);
    if (strstr(dc_last_error(), want) == NULL) {
      h->bad_message++;
      note(h, want);
    }
  }
  free(hits);
  return NULL;
}

START_TEST(test_worker_stress_failures_from_many_threads) {
  dc_context_t* ctx = pool_context(4, DC_IDLE_POWER);
  dc_worker_pool_t* pool = dc_context_worker_pool(ctx);
  host_t hosts[HOSTS];
  memset(hosts, 0, sizeof(hosts));
  for (int i = 0; i < HOSTS; ++i) {
    hosts[i] = (host_t){.pool = pool, .id = (unsigned)i, .calls = 150};
  }
  dc_test_run_threads(HOSTS, failing_thread, hosts, sizeof(hosts[0]));
  check_hosts(hosts);
  dc_context_release(ctx);
}
END_TEST

//===-- Two pools, one calling into the other ---------------------------===//

typedef struct cross_t {
  dc_worker_pool_t* other;
  count_t* inner;
  atomic_size_t failures;
} cross_t;

static dc_status_t cross_body(void* user_data, size_t begin, size_t end,
                              uint32_t thread_index) {
  (void)thread_index;
  cross_t* x = user_data;
  for (size_t i = begin; i < end; ++i) {
    count_t* c = &x->inner[i];
    if (dc_worker_pool_parallel_for(x->other, c->begin, c->end, 2,
                                    count_body, c) != DC_OK) {
      atomic_fetch_add(&x->failures, 1);
    }
  }
  return DC_OK;
}

START_TEST(test_worker_stress_calls_into_another_pool) {
  dc_context_t* a = pool_context(3, DC_IDLE_BALANCED);
  dc_context_t* b = pool_context(2, DC_IDLE_BALANCED);
  enum { kCalls = 40, kItems = 16, kWidth = 30 };
  atomic_uint* hits = calloc(kItems * kWidth, sizeof(*hits));
  for (int call = 0; call < kCalls; ++call) {
    count_t inner[kItems];
    for (size_t i = 0; i < (size_t)kItems * kWidth; ++i) {
      atomic_store(&hits[i], 0);
    }
    for (size_t i = 0; i < kItems; ++i) {
      // A call made from inside a body runs on that thread alone.
      inner[i] = (count_t){i * kWidth, (i + 1) * kWidth, 1, hits + i * kWidth,
                           false};
    }
    cross_t x = {dc_context_worker_pool(b), inner, 0};
    DC_CK_OK(dc_worker_pool_parallel_for(dc_context_worker_pool(a), 0,
                                         kItems, 1, cross_body, &x));
    ck_assert_uint_eq(atomic_load(&x.failures), 0);
    for (size_t i = 0; i < kItems; ++i) {
      ck_assert_uint_eq(count_misses(&inner[i]), 0);
    }
  }
  free(hits);
  dc_context_release(b);
  dc_context_release(a);
}
END_TEST

static Suite* worker_stress_suite(void) {
  Suite* s = suite_create("worker_stress");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, env_fixture, env_fixture);
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_worker_stress_concurrent_callers);
  tcase_add_test(core, test_worker_stress_nested_calls_from_many_threads);
  tcase_add_test(core, test_worker_stress_calls_into_another_pool);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, env_fixture, env_fixture);
  tcase_set_timeout(errors, 120);
  tcase_add_test(errors, test_worker_stress_failures_from_many_threads);
  suite_add_tcase(s, errors);
  return s;
}

DC_CHECK_MAIN(worker_stress_suite)

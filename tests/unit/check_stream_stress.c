// check_stream_stress.c: streams, events, cancel tokens and stream groups
// used by many host threads at once: events handed between threads, one
// stream shared by many producers, failures and resets racing with work,
// cancellation racing with execution, objects and contexts released with
// work in flight, and stream groups picked concurrently.
//
// The iteration counts are scaled down under ThreadSanitizer. Threads the
// tests start never call ck_assert: they note what went wrong in |g_errs|
// and the test asserts on it after joining them. Waits are bounded by
// HANG_NS so that a deadlock fails with a message instead of a timeout.
//
// The "bugs" test case at the end holds minimal reproductions of defects
// this stress test found in the implementation; see each test's comment.
// SPDX-License-Identifier: MIT
#include <sched.h>
#include <stdarg.h>
#include <time.h>

#include "kernel_fixture.h"

#if defined(__SANITIZE_THREAD__)
#define DC_STRESS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DC_STRESS_TSAN 1
#endif
#endif
#ifdef DC_STRESS_TSAN
#define SCALE(n) (n)
#else
#define SCALE(n) ((n) * 4)
#endif

// A wait this long means a deadlock.
#define HANG_NS (30ull * 1000000000ull)

//===-- Helpers ---------------------------------------------------------===//

// What went wrong on threads the tests started.
static struct {
  pthread_mutex_t lock;
  int count;
  char first[512];
} g_errs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void errs_reset(void) {
  pthread_mutex_lock(&g_errs.lock);
  g_errs.count = 0;
  g_errs.first[0] = '\0';
  pthread_mutex_unlock(&g_errs.lock);
}

static void note(const char* format, ...) {
  pthread_mutex_lock(&g_errs.lock);
  if (g_errs.count++ == 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(g_errs.first, sizeof(g_errs.first), format, args);
    va_end(args);
  }
  pthread_mutex_unlock(&g_errs.lock);
}

// On a test's thread: notes a call that did not return DC_OK.
#define T_OK(expr)                                                         \
  do {                                                                     \
    dc_status_t t_st_ = (expr);                                            \
    if (t_st_ != DC_OK) {                                                  \
      note("line %d: %s returned %s: %s", __LINE__, #expr,                 \
           dc_status_name(t_st_), dc_last_error());                        \
    }                                                                      \
  } while (0)

// On a test's thread: notes a condition that does not hold.
#define T_CHECK(cond, ...)                                                 \
  do {                                                                     \
    if (!(cond)) note(__VA_ARGS__);                                        \
  } while (0)

// In the test: asserts that its threads noted nothing.
#define CK_NO_THREAD_ERRORS()                                              \
  do {                                                                     \
    pthread_mutex_lock(&g_errs.lock);                                      \
    int ck_n_ = g_errs.count;                                              \
    char ck_first_[512];                                                   \
    memcpy(ck_first_, g_errs.first, sizeof(ck_first_));                    \
    pthread_mutex_unlock(&g_errs.lock);                                    \
    ck_assert_msg(ck_n_ == 0, "%d error(s) on the test's threads; first: " \
                  "%s", ck_n_, ck_first_);                                 \
  } while (0)

static void start_threads(pthread_t* threads, size_t n,
                          void* (*fn)(void*), void* args, size_t arg_size) {
  for (size_t i = 0; i < n; ++i) {
    ck_assert_int_eq(
        pthread_create(&threads[i], NULL, fn, (char*)args + i * arg_size),
        0);
  }
}

static void join_threads(pthread_t* threads, size_t n) {
  for (size_t i = 0; i < n; ++i) pthread_join(threads[i], NULL);
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
  nanosleep(&ts, NULL);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// Spins (yielding) until |*value| >= |target|; false after HANG_NS.
static bool await_at_least(atomic_int* value, int target) {
  uint64_t until = now_ns() + HANG_NS;
  while (atomic_load(value) < target) {
    if (now_ns() > until) return false;
    sched_yield();
  }
  return true;
}

static dc_stream_t* stream_on(dc_device_t* device, const char* label) {
  dc_stream_params_t p = {.label = label};
  dc_stream_t* st = NULL;
  DC_CK_OK(dc_stream_create(device, &p, &st));
  return st;
}

static dc_event_t* event_on(dc_device_t* device) {
  dc_event_t* ev = NULL;
  DC_CK_OK(dc_event_create(device, DC_EVENT_DEFAULT, &ev));
  return ev;
}

static dc_status_t count_up(void* arg) {
  atomic_fetch_add((atomic_int*)arg, 1);
  return DC_OK;
}

static const char kKernels[] =
    "__kernel void inc(__global int* x) { x[get_global_id(0)] += 1; }\n"
    "__kernel void add_into(__global int* acc, __global const int* src) {\n"
    "  acc[get_global_id(0)] += src[get_global_id(0)];\n"
    "}\n";

// A log sink shared by the tests that make contexts of their own. Static:
// a context destroyed on a stream thread may log after the test moved on.
static dc_test_log_t g_log = {.lock = PTHREAD_MUTEX_INITIALIZER};

// A context with its own kernel cache dir (the fixture's), logging
// warnings into g_log.
static dc_context_t* logged_context(void) {
  dc_test_log_clear(&g_log);
  dc_context_params_t p = dc_test_log_params(&g_log, DC_LOG_WARN);
  p.kernel_cache_dir = cache_dir;
  return dc_test_context_new(&p);
}

// Asserts that g_log holds no leak report.
static void expect_no_leak_report(const char* when) {
  long at = dc_test_log_find(&g_log, 0, "still alive");
  ck_assert_msg(at < 0, "%s: leak report '%s'", when,
                at < 0 ? "" : g_log.entries[at].message);
}

//===-- 1. Events handed between threads --------------------------------===//
//
// Each of X1_THREADS threads has two streams. Per iteration, a thread
// writes region i of its stage buffer on stream 1, adds 1 to it with a
// kernel, records a fresh event and mails it to the next thread; that
// thread's stream 2 waits for the event, copies the region into a scratch
// buffer and adds it into its accumulator with a kernel. Every event is
// created on one thread and released on another, so the pool is used
// from all of them at once.

#define X1_THREADS 4
#define X1_ITERS SCALE(240)
#define X1_M 64

typedef struct mail_t {
  int from;
  int iter;
  dc_event_t* event;
} mail_t;

typedef struct mailbox_t {
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int head, tail;
  mail_t items[X1_ITERS];
} mailbox_t;

typedef struct x1_thread_t {
  int id;
  dc_stream_t* s1;
  dc_stream_t* s2;
  dc_buffer_t* stage;  // X1_ITERS regions of X1_M, written on s1
  dc_buffer_t* tmp;    // X1_M, scratch of s2
  dc_buffer_t* acc;    // X1_M, accumulated on s2
  int32_t* values;     // what s1 writes, kept until the end
  mailbox_t inbox;
  int received;
} x1_thread_t;

static x1_thread_t* x1;  // X1_THREADS
static dc_kernel_t* x1_inc;
static dc_kernel_t* x1_add;

static int32_t x1_value(int t, int i, int j) {
  return (t + 1) * 100000 + i * 131 + j;
}

static void x1_post(mailbox_t* box, mail_t mail) {
  pthread_mutex_lock(&box->lock);
  box->items[box->tail++] = mail;
  pthread_cond_signal(&box->cv);
  pthread_mutex_unlock(&box->lock);
}

// Takes a mail; waits for one if |block|. False if none.
static bool x1_take(mailbox_t* box, bool block, mail_t* out) {
  pthread_mutex_lock(&box->lock);
  if (block) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(HANG_NS / 1000000000ull);
    while (box->head == box->tail) {
      if (pthread_cond_timedwait(&box->cv, &box->lock, &until) != 0) break;
    }
  }
  bool got = box->head != box->tail;
  if (got) *out = box->items[box->head++];
  pthread_mutex_unlock(&box->lock);
  return got;
}

static void x1_consume(x1_thread_t* me, const mail_t* m) {
  x1_thread_t* from = &x1[m->from];
  T_OK(dc_stream_wait_event(me->s2, m->event));
  T_OK(dc_stream_copy(me->s2, me->tmp, 0, from->stage,
                      (size_t)m->iter * X1_M, X1_M));
  dc_arg_t args[2] = {dc_arg_buffer(me->acc), dc_arg_buffer(me->tmp)};
  dc_dispatch_t grid = {.dims = 1, .global = {X1_M}};
  T_OK(dc_stream_dispatch(me->s2, x1_add, &grid, args, 2));
  // Now and then the host waits for the other thread's event too.
  if (m->iter % 16 == 0) T_OK(dc_event_wait(m->event, HANG_NS));
  if (m->iter % 8 == 1) {
    dc_status_t q = dc_event_query(m->event);
    T_CHECK(q == DC_OK || q == DC_ERR_UNAVAILABLE,
            "event query returned %s", dc_status_name(q));
  }
  dc_event_release(m->event);
  me->received++;
}

static void* x1_main(void* arg) {
  x1_thread_t* me = arg;
  x1_thread_t* next = &x1[(me->id + 1) % X1_THREADS];
  dc_device_t* dev = dc_stream_device(me->s1);
  for (int i = 0; i < X1_ITERS; ++i) {
    size_t at = (size_t)i * X1_M;
    T_OK(dc_stream_write(me->s1, me->stage, at, me->values + at, X1_M));
    dc_arg_t arg_stage = dc_arg_buffer(me->stage);
    dc_dispatch_t grid = {.dims = 1, .global = {X1_M}, .offset = {at}};
    T_OK(dc_stream_dispatch(me->s1, x1_inc, &grid, &arg_stage, 1));
    dc_event_t* ev = NULL;
    T_OK(dc_event_create(dev, DC_EVENT_DEFAULT, &ev));
    if (ev == NULL) return NULL;
    T_OK(dc_stream_record(me->s1, ev));
    x1_post(&next->inbox, (mail_t){me->id, i, ev});  // hands its reference
    if (i % 8 == 0) {
      // A short-lived marker: once its wait returns, the record has let
      // go of it, so releasing it returns it to the pool for the next
      // dc_event_create.
      dc_event_t* marker = NULL;
      T_OK(dc_event_create(dev, DC_EVENT_DEFAULT, &marker));
      T_OK(dc_stream_record(me->s1, marker));
      T_OK(dc_event_wait(marker, HANG_NS));
      dc_event_release(marker);
    }
    mail_t m;
    while (x1_take(&me->inbox, false, &m)) x1_consume(me, &m);
  }
  while (me->received < X1_ITERS) {
    mail_t m;
    if (!x1_take(&me->inbox, true, &m)) {
      note("thread %d: no mail after %d of %d", me->id, me->received,
           X1_ITERS);
      break;
    }
    x1_consume(me, &m);
  }
  return NULL;
}

START_TEST(test_events_cross_threads) {
  errs_reset();
  dc_program_t* p = build("x1.cl", kKernels, NULL);
  x1_inc = kernel_of(p, "inc");
  x1_add = kernel_of(p, "add_into");
  x1 = calloc(X1_THREADS, sizeof(*x1));
  ck_assert_ptr_nonnull(x1);
  int32_t zero = 0;
  for (int t = 0; t < X1_THREADS; ++t) {
    x1_thread_t* th = &x1[t];
    th->id = t;
    th->s1 = stream_on(cpu, "x1.producer");
    th->s2 = stream_on(cpu, "x1.consumer");
    th->stage = dc_test_buffer_new(cpu, DC_DTYPE_I32,
                                   (size_t)X1_ITERS * X1_M, "stage");
    th->tmp = dc_test_buffer_new(cpu, DC_DTYPE_I32, X1_M, "tmp");
    th->acc = dc_test_buffer_new(cpu, DC_DTYPE_I32, X1_M, "acc");
    DC_CK_OK(dc_buffer_fill(th->acc, 0, X1_M, &zero));
    th->values = malloc((size_t)X1_ITERS * X1_M * sizeof(int32_t));
    ck_assert_ptr_nonnull(th->values);
    for (int i = 0; i < X1_ITERS; ++i) {
      for (int j = 0; j < X1_M; ++j) {
        th->values[i * X1_M + j] = x1_value(t, i, j);
      }
    }
    pthread_mutex_init(&th->inbox.lock, NULL);
    pthread_cond_init(&th->inbox.cv, NULL);
  }
  pthread_t threads[X1_THREADS];
  start_threads(threads, X1_THREADS, x1_main, x1, sizeof(*x1));
  join_threads(threads, X1_THREADS);
  for (int t = 0; t < X1_THREADS; ++t) {
    DC_CK_OK(dc_stream_sync(x1[t].s1, HANG_NS));
    DC_CK_OK(dc_stream_sync(x1[t].s2, HANG_NS));
  }
  CK_NO_THREAD_ERRORS();
  for (int u = 0; u < X1_THREADS; ++u) {
    int from = (u + X1_THREADS - 1) % X1_THREADS;
    int32_t got[X1_M];
    DC_CK_OK(dc_buffer_read(x1[u].acc, 0, got, X1_M));
    for (int j = 0; j < X1_M; ++j) {
      int64_t want = 0;
      for (int i = 0; i < X1_ITERS; ++i) want += x1_value(from, i, j) + 1;
      ck_assert_msg(got[j] == want, "acc[%d][%d] = %d, expected %lld", u, j,
                    got[j], (long long)want);
    }
    ck_assert_int_eq(x1[u].received, X1_ITERS);
    dc_stream_stats_t s;
    DC_CK_OK(dc_stream_stats(x1[u].s2, &s));
    ck_assert_uint_eq(s.submitted, 3u * X1_ITERS);
    ck_assert_uint_eq(s.completed, 3u * X1_ITERS);
  }
  dc_event_pool_stats_t ps;
  DC_CK_OK(dc_event_pool_stats(cpu, DC_EVENT_DEFAULT, &ps));
  ck_assert_uint_eq(ps.in_use, 0);
  ck_assert_uint_eq(ps.created + ps.reused,
                    (uint64_t)X1_THREADS * (X1_ITERS + (X1_ITERS + 7) / 8));
  ck_assert_uint_eq(ps.cached, ps.created);
  ck_assert_uint_gt(ps.reused, 0);
  ck_assert_double_gt(ps.reuse_ratio, 0.0);
  for (int t = 0; t < X1_THREADS; ++t) {
    x1_thread_t* th = &x1[t];
    dc_stream_release(th->s1);
    dc_stream_release(th->s2);
    dc_buffer_release(th->stage);
    dc_buffer_release(th->tmp);
    dc_buffer_release(th->acc);
    free(th->values);
    pthread_mutex_destroy(&th->inbox.lock);
    pthread_cond_destroy(&th->inbox.cv);
  }
  free(x1);
  x1 = NULL;
  dc_program_release(p);
}
END_TEST

//===-- 2. Many threads on one stream -----------------------------------===//

#define X2_THREADS 6
#define X2_PER SCALE(1200)

typedef struct x2_pair_t {
  int thread;
  int seq;
} x2_pair_t;

static struct {
  pthread_mutex_t lock;
  size_t count;
  x2_pair_t* entries;  // X2_THREADS * X2_PER
} x2_log = {.lock = PTHREAD_MUTEX_INITIALIZER};

typedef struct x2_thread_t {
  int id;
  dc_stream_t* stream;
  x2_pair_t* items;  // X2_PER, read by the callbacks
  int records;
} x2_thread_t;

static dc_status_t x2_append(void* arg) {
  const x2_pair_t* pair = arg;
  pthread_mutex_lock(&x2_log.lock);
  if (x2_log.count < (size_t)X2_THREADS * X2_PER) {
    x2_log.entries[x2_log.count] = *pair;
  }
  x2_log.count++;
  pthread_mutex_unlock(&x2_log.lock);
  return DC_OK;
}

static void* x2_main(void* arg) {
  x2_thread_t* me = arg;
  dc_device_t* dev = dc_stream_device(me->stream);
  for (int i = 0; i < X2_PER; ++i) {
    me->items[i] = (x2_pair_t){me->id, i};
    T_OK(dc_stream_host(me->stream, x2_append, &me->items[i]));
    if (i % 97 == 0) {
      dc_event_t* ev = NULL;
      T_OK(dc_event_create(dev, DC_EVENT_DEFAULT, &ev));
      T_OK(dc_stream_record(me->stream, ev));
      me->records++;
      if (i % 2 == 0) T_OK(dc_event_wait(ev, HANG_NS));
      dc_event_release(ev);
    }
    if (i % 301 == 300) T_OK(dc_stream_sync(me->stream, HANG_NS));
    if (i % 50 == 0) {
      dc_status_t q = dc_stream_query(me->stream);
      T_CHECK(q == DC_OK || q == DC_ERR_UNAVAILABLE,
              "stream query returned %s", dc_status_name(q));
    }
  }
  return NULL;
}

START_TEST(test_many_threads_one_stream) {
  errs_reset();
  dc_stream_t* st = stream_on(cpu, "x2.shared");
  x2_log.count = 0;
  x2_log.entries = calloc((size_t)X2_THREADS * X2_PER, sizeof(x2_pair_t));
  x2_thread_t args[X2_THREADS];
  for (int t = 0; t < X2_THREADS; ++t) {
    args[t] = (x2_thread_t){.id = t, .stream = st};
    args[t].items = calloc(X2_PER, sizeof(x2_pair_t));
    ck_assert_ptr_nonnull(args[t].items);
  }
  pthread_t threads[X2_THREADS];
  start_threads(threads, X2_THREADS, x2_main, args, sizeof(args[0]));
  join_threads(threads, X2_THREADS);
  DC_CK_OK(dc_stream_sync(st, HANG_NS));
  CK_NO_THREAD_ERRORS();
  ck_assert_uint_eq(x2_log.count, (size_t)X2_THREADS * X2_PER);
  int next[X2_THREADS] = {0};
  for (size_t k = 0; k < x2_log.count; ++k) {
    x2_pair_t e = x2_log.entries[k];
    ck_assert_msg(e.thread >= 0 && e.thread < X2_THREADS,
                  "entry %zu: thread %d", k, e.thread);
    ck_assert_msg(e.seq == next[e.thread],
                  "entry %zu: thread %d's item %d ran, expected %d", k,
                  e.thread, e.seq, next[e.thread]);
    next[e.thread]++;
  }
  uint64_t records = 0;
  for (int t = 0; t < X2_THREADS; ++t) {
    ck_assert_int_eq(next[t], X2_PER);
    records += (uint64_t)args[t].records;
    free(args[t].items);
  }
  dc_stream_stats_t s;
  DC_CK_OK(dc_stream_stats(st, &s));
  ck_assert_uint_eq(s.submitted, (uint64_t)X2_THREADS * X2_PER + records);
  ck_assert_uint_eq(s.completed, s.submitted);
  ck_assert_uint_eq(s.queued, 0);
  free(x2_log.entries);
  x2_log.entries = NULL;
  dc_stream_release(st);
}
END_TEST

//===-- 3. Failures and resets racing with work -------------------------===//

#define X3_STREAMS 3
#define X3_WORKERS 3
#define X3_PER SCALE(800)
#define X3_INJECT SCALE(80)

static dc_stream_t* x3_streams[X3_STREAMS];
static atomic_int x3_ok_ran;
static atomic_int x3_fail_ran;
static atomic_int x3_workers_left;

static dc_status_t x3_fail(void* arg) {
  (void)arg;
  int n = atomic_fetch_add(&x3_fail_ran, 1);
  return dc_set_error(DC_ERR_DATA_LOSS, "injected failure #%d", n);
}

// A sync, reset or query result must be DC_OK (or, for a query, pending)
// or the injected error with its message.
static void x3_check(const char* what, dc_status_t st) {
  if (st == DC_OK) return;
  if (st == DC_ERR_DATA_LOSS && strstr(dc_last_error(), "injected failure")) {
    return;
  }
  note("%s returned %s: %s", what, dc_status_name(st), dc_last_error());
}

typedef struct x3_thread_t {
  int id;
} x3_thread_t;

static void* x3_worker(void* arg) {
  x3_thread_t* me = arg;
  for (int k = 0; k < X3_PER; ++k) {
    dc_stream_t* st = x3_streams[(k + me->id) % X3_STREAMS];
    T_OK(dc_stream_host(st, count_up, &x3_ok_ran));
    if (k % 40 == 39) x3_check("dc_stream_sync", dc_stream_sync(st, HANG_NS));
    if (k % 23 == 0) {
      dc_status_t q = dc_stream_query(st);
      if (q != DC_ERR_UNAVAILABLE) x3_check("dc_stream_query", q);
    }
  }
  atomic_fetch_sub(&x3_workers_left, 1);
  return NULL;
}

static void* x3_injector(void* arg) {
  (void)arg;
  for (int j = 0; j < X3_INJECT; ++j) {
    dc_stream_t* st = x3_streams[j % X3_STREAMS];
    T_OK(dc_stream_host(st, x3_fail, NULL));
    if (j % 3 == 1) x3_check("dc_stream_sync", dc_stream_sync(st, HANG_NS));
    if (j % 5 == 0) sched_yield();
  }
  return NULL;
}

static void* x3_resetter(void* arg) {
  (void)arg;
  for (int k = 0; atomic_load(&x3_workers_left) > 0; ++k) {
    x3_check("dc_stream_reset", dc_stream_reset(x3_streams[k % X3_STREAMS]));
    sched_yield();
  }
  return NULL;
}

START_TEST(test_failures_and_resets_race_with_work) {
  errs_reset();
  atomic_store(&x3_ok_ran, 0);
  atomic_store(&x3_fail_ran, 0);
  atomic_store(&x3_workers_left, X3_WORKERS);
  for (int i = 0; i < X3_STREAMS; ++i) x3_streams[i] = stream_on(cpu, "x3");
  x3_thread_t args[X3_WORKERS];
  pthread_t workers[X3_WORKERS], injector, resetter;
  for (int w = 0; w < X3_WORKERS; ++w) args[w].id = w;
  start_threads(workers, X3_WORKERS, x3_worker, args, sizeof(args[0]));
  ck_assert_int_eq(pthread_create(&injector, NULL, x3_injector, NULL), 0);
  ck_assert_int_eq(pthread_create(&resetter, NULL, x3_resetter, NULL), 0);
  join_threads(workers, X3_WORKERS);
  pthread_join(injector, NULL);
  pthread_join(resetter, NULL);
  CK_NO_THREAD_ERRORS();
  uint64_t completed = 0, failed = 0;
  for (int i = 0; i < X3_STREAMS; ++i) {
    dc_stream_t* st = x3_streams[i];
    dc_status_t r = dc_stream_reset(st);
    ck_assert_msg(r == DC_OK || (r == DC_ERR_DATA_LOSS &&
                                 strstr(dc_last_error(), "injected failure")),
                  "final reset returned %s: %s", dc_status_name(r),
                  dc_last_error());
    DC_CK_OK(dc_stream_reset(st));
    // The stream works after the reset.
    DC_CK_OK(dc_stream_host(st, count_up, &x3_ok_ran));
    DC_CK_OK(dc_stream_sync(st, HANG_NS));
    dc_stream_stats_t s;
    DC_CK_OK(dc_stream_stats(st, &s));
    ck_assert_uint_eq(s.submitted, s.completed + s.failed + s.skipped);
    ck_assert_uint_eq(s.cancelled, 0);
    ck_assert_uint_eq(s.queued, 0);
    ck_assert_int_eq(s.error, DC_OK);
    completed += s.completed;
    failed += s.failed;
  }
  // Every callback that ran was counted where it ran: the ones that
  // succeeded as completed, the injected ones as failed.
  ck_assert_uint_eq(completed, (uint64_t)atomic_load(&x3_ok_ran));
  ck_assert_uint_eq(failed, (uint64_t)atomic_load(&x3_fail_ran));
  // The first injected callback of each stream found it healthy.
  ck_assert_uint_ge(failed, X3_STREAMS);
  ck_assert_uint_le(failed, X3_INJECT);
  ck_assert_int_ge(atomic_load(&x3_ok_ran), X3_STREAMS);
  for (int i = 0; i < X3_STREAMS; ++i) dc_stream_release(x3_streams[i]);
}
END_TEST

//===-- 4. Cancellation racing with execution ---------------------------===//
//
// Each worker owns a stream carrying a shared cancel token and queues
// triples (a host callback "before", a record of a fresh event, a host
// callback "after") and a filler callback, under a per-stream lock that
// the canceller also holds around dc_stream_cancel, so a cancel never
// splits a triple's queuing. The canceller cancels the streams now and
// then and, half-way, the token. In stream order: the record ran if
// "after" ran, and did not if "before" did not.

#define X4_WORKERS 3
#define X4_TRIPLES SCALE(400)

typedef struct x4_thread_t {
  int id;
  dc_stream_t* stream;
  pthread_mutex_t push_lock;
  atomic_int host_ran;        // callbacks of this stream that ran
  atomic_int triples_pushed;
  atomic_int before[X4_TRIPLES];
  atomic_int after[X4_TRIPLES];
  atomic_int callback_status[X4_TRIPLES];  // from dc_event_on_complete
  bool after_token[X4_TRIPLES];  // queued once the token was cancelled
  dc_event_t* events[X4_TRIPLES];
  size_t cancelled_by_calls;  // what dc_stream_cancel returned
} x4_thread_t;

typedef struct x4_flag_t {
  x4_thread_t* owner;
  atomic_int* flag;  // NULL for a filler
} x4_flag_t;

static x4_thread_t* x4;
static x4_flag_t (*x4_flags)[X4_TRIPLES][3];  // [worker][triple][kind]
static dc_cancel_token_t* x4_token;
static atomic_int x4_total_pushed;
static atomic_int x4_token_done;  // the canceller cancelled the token

static dc_status_t x4_mark(void* arg) {
  x4_flag_t* f = arg;
  if (f->flag != NULL) atomic_store(f->flag, 1);
  atomic_fetch_add(&f->owner->host_ran, 1);
  return DC_OK;
}

static void x4_on_complete(dc_event_t* ev, dc_status_t status, void* arg) {
  (void)ev;
  atomic_store((atomic_int*)arg, (int)status);
}

static void* x4_worker(void* arg) {
  x4_thread_t* me = arg;
  dc_device_t* dev = dc_stream_device(me->stream);
  for (int i = 0; i < X4_TRIPLES; ++i) {
    // The last quarter is queued after the token was cancelled.
    if (i == X4_TRIPLES * 3 / 4 && !await_at_least(&x4_token_done, 1)) {
      note("worker %d: the token was never cancelled", me->id);
    }
    x4_flag_t* f = x4_flags[me->id][i];
    f[0] = (x4_flag_t){me, &me->before[i]};
    f[1] = (x4_flag_t){me, &me->after[i]};
    f[2] = (x4_flag_t){me, NULL};
    dc_event_t* ev = NULL;
    T_OK(dc_event_create(dev, DC_EVENT_DEFAULT, &ev));
    if (ev == NULL) return NULL;
    me->events[i] = ev;
    pthread_mutex_lock(&me->push_lock);
    me->after_token[i] = dc_cancel_token_is_cancelled(x4_token);
    T_OK(dc_stream_host(me->stream, x4_mark, &f[0]));
    T_OK(dc_stream_record(me->stream, ev));
    T_OK(dc_stream_host(me->stream, x4_mark, &f[1]));
    pthread_mutex_unlock(&me->push_lock);
    T_OK(dc_event_on_complete(ev, x4_on_complete, &me->callback_status[i]));
    T_OK(dc_stream_host(me->stream, x4_mark, &f[2]));
    atomic_fetch_add(&me->triples_pushed, 1);
    atomic_fetch_add(&x4_total_pushed, 1);
    if (i % 50 == 49) {
      // Cancelling never fails the stream.
      pthread_mutex_lock(&me->push_lock);
      T_OK(dc_stream_sync(me->stream, HANG_NS));
      // Everything recorded so far has an outcome now.
      for (int j = 0; j <= i; ++j) {
        dc_status_t q = dc_event_query(me->events[j]);
        T_CHECK(q == DC_OK || q == DC_ERR_CANCELLED,
                "worker %d: event %d is %s after a sync", me->id, j,
                dc_status_name(q));
      }
      pthread_mutex_unlock(&me->push_lock);
    }
  }
  return NULL;
}

static void* x4_canceller(void* arg) {
  (void)arg;
  const int total = X4_WORKERS * X4_TRIPLES;
  for (int round = 1; round <= 8; ++round) {
    if (!await_at_least(&x4_total_pushed, total * round / 10)) {
      note("canceller: the workers stopped at %d",
           atomic_load(&x4_total_pushed));
      return NULL;
    }
    if (round == 5) {
      dc_cancel_token_cancel(x4_token);
      atomic_store(&x4_token_done, 1);
    }
    for (int w = 0; w < X4_WORKERS; ++w) {
      if ((round + w) % 2 == 0) continue;
      pthread_mutex_lock(&x4[w].push_lock);
      x4[w].cancelled_by_calls += dc_stream_cancel(x4[w].stream);
      pthread_mutex_unlock(&x4[w].push_lock);
    }
  }
  return NULL;
}

START_TEST(test_cancellation_races_with_execution) {
  errs_reset();
  x4 = calloc(X4_WORKERS, sizeof(*x4));
  x4_flags = calloc(X4_WORKERS, sizeof(*x4_flags));
  ck_assert_ptr_nonnull(x4);
  ck_assert_ptr_nonnull(x4_flags);
  atomic_store(&x4_total_pushed, 0);
  atomic_store(&x4_token_done, 0);
  DC_CK_OK(dc_cancel_token_create(ctx, &x4_token));
  for (int w = 0; w < X4_WORKERS; ++w) {
    x4[w].id = w;
    x4[w].stream = stream_on(cpu, "x4");
    pthread_mutex_init(&x4[w].push_lock, NULL);
    for (int i = 0; i < X4_TRIPLES; ++i) {
      atomic_init(&x4[w].callback_status[i], -1);
    }
    DC_CK_OK(dc_stream_set_cancel_token(x4[w].stream, x4_token));
  }
  pthread_t workers[X4_WORKERS], canceller;
  start_threads(workers, X4_WORKERS, x4_worker, x4, sizeof(*x4));
  ck_assert_int_eq(pthread_create(&canceller, NULL, x4_canceller, NULL), 0);
  join_threads(workers, X4_WORKERS);
  pthread_join(canceller, NULL);
  for (int w = 0; w < X4_WORKERS; ++w) {
    DC_CK_OK(dc_stream_sync(x4[w].stream, HANG_NS));
  }
  CK_NO_THREAD_ERRORS();
  ck_assert(dc_cancel_token_is_cancelled(x4_token));
  for (int w = 0; w < X4_WORKERS; ++w) {
    x4_thread_t* th = &x4[w];
    int records_ran = 0;
    for (int i = 0; i < X4_TRIPLES; ++i) {
      dc_status_t q = dc_event_query(th->events[i]);
      dc_status_t waited = dc_event_wait(th->events[i], 0);
      int cb = atomic_load(&th->callback_status[i]);
      ck_assert_msg(q == DC_OK || q == DC_ERR_CANCELLED,
                    "worker %d event %d: %s", w, i, dc_status_name(q));
      ck_assert_int_eq(waited, q);
      ck_assert_msg(cb == (int)q, "worker %d event %d: callback got %d, "
                    "query %s", w, i, cb, dc_status_name(q));
      if (atomic_load(&th->after[i])) {
        ck_assert_msg(q == DC_OK, "worker %d triple %d: 'after' ran but "
                      "the event is %s", w, i, dc_status_name(q));
      }
      if (!atomic_load(&th->before[i])) {
        ck_assert_msg(q == DC_ERR_CANCELLED, "worker %d triple %d: "
                      "'before' did not run but the event is %s", w, i,
                      dc_status_name(q));
      }
      if (th->after_token[i]) {
        ck_assert_msg(!atomic_load(&th->before[i]) &&
                      !atomic_load(&th->after[i]) && q == DC_ERR_CANCELLED,
                      "worker %d triple %d ran after the token was "
                      "cancelled", w, i);
      }
      records_ran += q == DC_OK;
    }
    // The last quarter was queued after the token was cancelled.
    ck_assert(th->after_token[X4_TRIPLES * 3 / 4]);
    dc_stream_stats_t s;
    DC_CK_OK(dc_stream_stats(th->stream, &s));
    int host_ran = atomic_load(&th->host_ran);
    ck_assert_uint_eq(s.submitted, 4u * X4_TRIPLES);
    ck_assert_uint_eq(s.completed + s.cancelled, s.submitted);
    ck_assert_uint_eq(s.completed, (uint64_t)(host_ran + records_ran));
    ck_assert_uint_eq(s.failed, 0);
    ck_assert_uint_eq(s.skipped, 0);
    ck_assert_uint_ge(s.cancelled, th->cancelled_by_calls);
    ck_assert_int_eq(s.error, DC_OK);
    ck_assert_uint_eq(s.queued, 0);
  }
  for (int w = 0; w < X4_WORKERS; ++w) {
    for (int i = 0; i < X4_TRIPLES; ++i) dc_event_release(x4[w].events[i]);
    dc_stream_release(x4[w].stream);
    pthread_mutex_destroy(&x4[w].push_lock);
  }
  dc_event_pool_stats_t ps;
  DC_CK_OK(dc_event_pool_stats(cpu, DC_EVENT_DEFAULT, &ps));
  ck_assert_uint_eq(ps.in_use, 0);
  dc_cancel_token_release(x4_token);
  x4_token = NULL;
  free(x4_flags);
  free(x4);
  x4 = NULL;
}
END_TEST

//===-- 5. Lifetime: objects and contexts released with work queued -----===//

#define X5_THREADS 4
#define X5_ROUNDS SCALE(48)
#define X5_M 32

typedef struct x5_thread_t {
  int id;
  dc_device_t* device;
  dc_kernel_t* inc;
  atomic_int* ran;
  int32_t out[X5_ROUNDS][X5_M];
  dc_event_t* done[X5_ROUNDS];
} x5_thread_t;

static void* x5_main(void* arg) {
  x5_thread_t* me = arg;
  for (int r = 0; r < X5_ROUNDS; ++r) {
    dc_stream_t* st = NULL;
    dc_buffer_t* b = NULL;
    dc_event_t* drop = NULL;
    dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = X5_M};
    T_OK(dc_stream_create(me->device, NULL, &st));
    T_OK(dc_buffer_create(me->device, &bp, &b));
    T_OK(dc_event_create(me->device, DC_EVENT_DEFAULT, &me->done[r]));
    T_OK(dc_event_create(me->device, DC_EVENT_TIMING, &drop));
    if (st == NULL || b == NULL || me->done[r] == NULL || drop == NULL) {
      return NULL;
    }
    int32_t value = me->id * 1000 + r;
    T_OK(dc_stream_fill(st, b, 0, X5_M, &value));
    dc_arg_t a = dc_arg_buffer(b);
    dc_dispatch_t grid = {.dims = 1, .global = {X5_M}};
    T_OK(dc_stream_dispatch(st, me->inc, &grid, &a, 1));
    T_OK(dc_stream_record(st, drop));
    T_OK(dc_stream_read(st, b, 0, me->out[r], X5_M));
    T_OK(dc_stream_host(st, count_up, me->ran));
    T_OK(dc_stream_record(st, me->done[r]));
    // Everything goes while the work is still queued (most of the time).
    dc_event_release(drop);
    dc_buffer_release(b);
    dc_stream_release(st);
  }
  return NULL;
}

START_TEST(test_objects_released_with_work_queued) {
  errs_reset();
  dc_context_t* own = logged_context();
  dc_device_t* dev = dc_test_cpu(own);
  dc_program_t* p = build_on(dev, "x5.cl", kKernels, NULL);
  dc_kernel_t* inc = kernel_of(p, "inc");
  dc_kernel_retain(inc);
  dc_program_release(p);  // the kernel keeps what it needs
  atomic_int ran = 0;
  x5_thread_t* args = calloc(X5_THREADS, sizeof(*args));
  ck_assert_ptr_nonnull(args);
  for (int t = 0; t < X5_THREADS; ++t) {
    args[t] = (x5_thread_t){.id = t, .device = dev, .inc = inc, .ran = &ran};
  }
  pthread_t threads[X5_THREADS];
  start_threads(threads, X5_THREADS, x5_main, args, sizeof(*args));
  join_threads(threads, X5_THREADS);
  dc_kernel_release(inc);
  CK_NO_THREAD_ERRORS();
  for (int t = 0; t < X5_THREADS; ++t) {
    for (int r = 0; r < X5_ROUNDS; ++r) {
      DC_CK_OK(dc_event_wait(args[t].done[r], HANG_NS));
      dc_event_release(args[t].done[r]);
      for (int j = 0; j < X5_M; ++j) {
        ck_assert_int_eq(args[t].out[r][j], t * 1000 + r + 1);
      }
    }
  }
  ck_assert_int_eq(atomic_load(&ran), X5_THREADS * X5_ROUNDS);
  // A released stream is freed by the thread that finishes its last
  // command, just after that command's event completed: give them time.
  uint64_t until = now_ns() + HANG_NS;
  while (dc_context_report_leaks(own) != 0 && now_ns() < until) {
    sleep_us(1000);
  }
  ck_assert_uint_eq(dc_context_report_leaks(own), 0);
  dc_event_pool_stats_t ps;
  DC_CK_OK(dc_event_pool_stats(dev, DC_EVENT_DEFAULT, &ps));
  ck_assert_uint_eq(ps.in_use, 0);
  ck_assert_uint_eq(ps.cached, ps.created);
  DC_CK_OK(dc_event_pool_stats(dev, DC_EVENT_TIMING, &ps));
  ck_assert_uint_eq(ps.in_use, 0);
  dc_test_log_clear(&g_log);
  dc_context_release(own);
  expect_no_leak_report("dc_context_release");
  free(args);
}
END_TEST

// Releasing the context with work in flight on streams the host already
// released waits for all of it.
#define X5B_CONTEXTS SCALE(12)
#define X5B_THREADS 3
#define X5B_STREAMS 2  // per thread
#define X5B_COMMANDS 12  // per stream

typedef struct x5b_thread_t {
  dc_device_t* device;
  atomic_int* ran;
} x5b_thread_t;

static dc_status_t x5b_slow_count(void* arg) {
  sleep_us(200);
  return count_up(arg);
}

static void* x5b_main(void* arg) {
  x5b_thread_t* me = arg;
  for (int s = 0; s < X5B_STREAMS; ++s) {
    dc_stream_t* st = NULL;
    T_OK(dc_stream_create(me->device, NULL, &st));
    if (st == NULL) return NULL;
    dc_event_t* ev = NULL;
    T_OK(dc_event_create(me->device, DC_EVENT_DEFAULT, &ev));
    for (int c = 0; c < X5B_COMMANDS; ++c) {
      T_OK(dc_stream_host(st, x5b_slow_count, me->ran));
      if (c % 4 == 0) T_OK(dc_stream_record(st, ev));
    }
    dc_event_release(ev);
    dc_stream_release(st);
  }
  return NULL;
}

START_TEST(test_context_release_waits_for_work_in_flight) {
  errs_reset();
  for (int round = 0; round < X5B_CONTEXTS; ++round) {
    dc_context_t* own = logged_context();
    dc_device_t* dev = dc_test_cpu(own);
    atomic_int ran = 0;
    x5b_thread_t args[X5B_THREADS];
    for (int t = 0; t < X5B_THREADS; ++t) {
      args[t] = (x5b_thread_t){dev, &ran};
    }
    pthread_t threads[X5B_THREADS];
    start_threads(threads, X5B_THREADS, x5b_main, args, sizeof(args[0]));
    join_threads(threads, X5B_THREADS);
    CK_NO_THREAD_ERRORS();
    dc_context_release(own);
    ck_assert_int_eq(atomic_load(&ran),
                     X5B_THREADS * X5B_STREAMS * X5B_COMMANDS);
  }
}
END_TEST

//===-- 6. Stream groups picked concurrently ----------------------------===//

#define X6_THREADS 4
#define X6_PER SCALE(300)
#define X6_STREAMS 4

typedef struct x6_thread_t {
  int id;
  dc_stream_group_t* group;
  dc_buffer_t* a;   // X6_PER, written element by element
  dc_buffer_t* b;   // X6_PER, copied from a after an event
  int32_t values[X6_PER];
  atomic_int copied;
} x6_thread_t;

static void* x6_main(void* arg) {
  x6_thread_t* me = arg;
  for (int i = 0; i < X6_PER; ++i) {
    dc_pick_t first = (i + me->id) % 2 ? DC_PICK_LEAST_LOADED
                                       : DC_PICK_ROUND_ROBIN;
    dc_pick_t second = first == DC_PICK_ROUND_ROBIN ? DC_PICK_LEAST_LOADED
                                                    : DC_PICK_ROUND_ROBIN;
    dc_stream_t* s1 = dc_stream_group_next(me->group, first);
    dc_stream_t* s2 = dc_stream_group_next(me->group, second);
    T_CHECK(s1 != NULL && s2 != NULL, "dc_stream_group_next gave NULL");
    if (s1 == NULL || s2 == NULL) return NULL;
    dc_event_t* ev = NULL;
    T_OK(dc_event_create(dc_stream_device(s1), DC_EVENT_DEFAULT, &ev));
    T_OK(dc_stream_write(s1, me->a, (size_t)i, &me->values[i], 1));
    T_OK(dc_stream_record(s1, ev));
    T_OK(dc_stream_wait_event(s2, ev));
    T_OK(dc_stream_copy(s2, me->b, (size_t)i, me->a, (size_t)i, 1));
    T_OK(dc_stream_host(s2, count_up, &me->copied));
    dc_event_release(ev);
  }
  return NULL;
}

START_TEST(test_stream_group_used_concurrently) {
  errs_reset();
  dc_stream_group_params_t gp = {.count = X6_STREAMS, .label = "x6"};
  dc_stream_group_t* g = NULL;
  DC_CK_OK(dc_stream_group_create(cpu, &gp, &g));
  x6_thread_t* args = calloc(X6_THREADS, sizeof(*args));
  ck_assert_ptr_nonnull(args);
  int32_t minus_one = -1;
  for (int t = 0; t < X6_THREADS; ++t) {
    args[t].id = t;
    args[t].group = g;
    args[t].a = dc_test_buffer_new(cpu, DC_DTYPE_I32, X6_PER, "a");
    args[t].b = dc_test_buffer_new(cpu, DC_DTYPE_I32, X6_PER, "b");
    DC_CK_OK(dc_buffer_fill(args[t].b, 0, X6_PER, &minus_one));
    for (int i = 0; i < X6_PER; ++i) args[t].values[i] = t * 10000 + i;
  }
  pthread_t threads[X6_THREADS];
  start_threads(threads, X6_THREADS, x6_main, args, sizeof(*args));
  join_threads(threads, X6_THREADS);
  DC_CK_OK(dc_stream_group_sync(g, HANG_NS));
  CK_NO_THREAD_ERRORS();
  uint64_t submitted = 0, completed = 0;
  for (size_t i = 0; i < dc_stream_group_size(g); ++i) {
    dc_stream_stats_t s;
    DC_CK_OK(dc_stream_stats(dc_stream_group_stream(g, i), &s));
    submitted += s.submitted;
    completed += s.completed;
    ck_assert_uint_eq(s.queued, 0);
  }
  ck_assert_uint_eq(submitted, 5ull * X6_THREADS * X6_PER);
  ck_assert_uint_eq(completed, submitted);
  for (int t = 0; t < X6_THREADS; ++t) {
    ck_assert_int_eq(atomic_load(&args[t].copied), X6_PER);
    int32_t got[X6_PER];
    DC_CK_OK(dc_buffer_read(args[t].b, 0, got, X6_PER));
    for (int i = 0; i < X6_PER; ++i) {
      ck_assert_msg(got[i] == args[t].values[i], "b[%d][%d] = %d, "
                    "expected %d", t, i, got[i], args[t].values[i]);
    }
    dc_buffer_release(args[t].a);
    dc_buffer_release(args[t].b);
  }
  dc_event_pool_stats_t ps;
  DC_CK_OK(dc_event_pool_stats(cpu, DC_EVENT_DEFAULT, &ps));
  ck_assert_uint_eq(ps.in_use, 0);
  ck_assert_uint_eq(ps.created + ps.reused, (uint64_t)X6_THREADS * X6_PER);
  dc_stream_group_release(g);
  free(args);
}
END_TEST

//===-- Bugs found by the tests above -----------------------------------===//

typedef struct gate_t {
  atomic_int entered;
  atomic_int open;
} gate_t;

// Blocks until the gate opens (at most HANG_NS).
static dc_status_t wait_at_gate(void* arg) {
  gate_t* g = arg;
  atomic_fetch_add(&g->entered, 1);
  uint64_t until = now_ns() + HANG_NS;
  while (!atomic_load(&g->open)) {
    if (now_ns() > until) {
      return dc_set_error(DC_ERR_DEADLINE_EXCEEDED, "the gate never opened");
    }
    sleep_us(200);
  }
  return DC_OK;
}

// dc_stream_cancel() on a stream that is on a ready list (queued, no
// thread has taken it yet) empties its queue but leaves it on the list; the
// thread that later pops it runs settle_head() on a NULL head and crashes.
// Here every stream thread is kept busy so that the stream stays ready.
START_TEST(test_bug_cancel_of_a_ready_stream) {
  enum { BLOCKERS = 8 };  // DC_MAX_STREAM_THREADS: every thread busy
  gate_t gate = {0};
  dc_stream_t* blockers[BLOCKERS];
  for (int i = 0; i < BLOCKERS; ++i) {
    blockers[i] = stream_on(cpu, "blocker");
    DC_CK_OK(dc_stream_host(blockers[i], wait_at_gate, &gate));
  }
  ck_assert(await_at_least(&gate.entered, BLOCKERS));
  dc_stream_t* st = stream_on(cpu, "ready");  // no thread of its own
  atomic_int ran = 0;
  for (int i = 0; i < 3; ++i) DC_CK_OK(dc_stream_host(st, count_up, &ran));
  ck_assert_uint_eq(dc_stream_cancel(st), 3);
  atomic_store(&gate.open, 1);
  for (int i = 0; i < BLOCKERS; ++i) {
    DC_CK_OK(dc_stream_sync(blockers[i], HANG_NS));
  }
  DC_CK_OK(dc_stream_host(st, count_up, &ran));
  DC_CK_OK(dc_stream_sync(st, HANG_NS));
  ck_assert_int_eq(atomic_load(&ran), 1);
  for (int i = 0; i < BLOCKERS; ++i) dc_stream_release(blockers[i]);
  dc_stream_release(st);
}
END_TEST

// A wait targets the generation last recorded when it was made, but it is
// satisfied as soon as the event's highest completed generation reaches
// it: a later record of the event on another stream that completes first
// releases the waiter before the record it waits for has run.
static dc_status_t set_42_after_gate(void* arg) {
  gate_t* g = arg;
  dc_status_t st = wait_at_gate(g);
  atomic_store(&g->entered, 42);
  return st;
}

static dc_status_t expect_42(void* arg) {
  gate_t* g = arg;
  int v = atomic_load(&g->entered);
  return v == 42 ? DC_OK
                 : dc_set_error(DC_ERR_INTERNAL,
                                "ran before the event it waited for (%d)", v);
}

START_TEST(test_bug_wait_released_by_a_later_record) {
  dc_stream_t* slow = stream_on(cpu, "slow");
  dc_stream_t* fast = stream_on(cpu, "fast");
  dc_stream_t* waiter = stream_on(cpu, "waiter");
  dc_event_t* ev = event_on(cpu);
  gate_t gate = {0};
  DC_CK_OK(dc_stream_host(slow, set_42_after_gate, &gate));
  DC_CK_OK(dc_stream_record(slow, ev));        // generation 1
  DC_CK_OK(dc_stream_wait_event(waiter, ev));  // waits for generation 1
  DC_CK_OK(dc_stream_host(waiter, expect_42, &gate));
  DC_CK_OK(dc_stream_record(fast, ev));        // generation 2, at once
  DC_CK_OK(dc_stream_sync(fast, HANG_NS));
  // Give a wrongly released waiter time to run its check.
  dc_stream_sync(waiter, 300 * 1000000ull);
  atomic_store(&gate.open, 1);
  DC_CK_OK(dc_stream_sync(slow, HANG_NS));
  DC_CK_OK(dc_stream_sync(waiter, HANG_NS));
  dc_event_release(ev);
  dc_stream_release(slow);
  dc_stream_release(fast);
  dc_stream_release(waiter);
}
END_TEST

// dc_stream_cancel() takes the commands off the queue (so the stream
// counts as drained) and only afterwards, without the lock, completes the
// events of the cancelled records. A dc_stream_sync() in between returns
// with those events still pending. An event callback of one cancelled
// record holds the canceller inside that window here.
typedef struct hold_t {
  atomic_int inside;
  atomic_int release;
} hold_t;

static void hold_in_callback(dc_event_t* ev, dc_status_t status, void* arg) {
  (void)ev;
  (void)status;
  hold_t* h = arg;
  atomic_store(&h->inside, 1);
  uint64_t until = now_ns() + HANG_NS;
  while (!atomic_load(&h->release) && now_ns() < until) sleep_us(200);
}

static void* cancel_stream(void* arg) {
  dc_stream_cancel(arg);
  return NULL;
}

START_TEST(test_bug_sync_returns_before_cancelled_events_complete) {
  dc_stream_t* st = stream_on(cpu, "cancelled");
  dc_event_t* first = event_on(cpu);
  dc_event_t* second = event_on(cpu);
  gate_t gate = {0};
  hold_t hold = {0};
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &gate));
  ck_assert(await_at_least(&gate.entered, 1));  // running: not cancelled
  DC_CK_OK(dc_stream_record(st, first));
  DC_CK_OK(dc_stream_record(st, second));
  DC_CK_OK(dc_event_on_complete(second, hold_in_callback, &hold));
  pthread_t canceller;
  ck_assert_int_eq(pthread_create(&canceller, NULL, cancel_stream, st), 0);
  uint64_t until = now_ns() + HANG_NS;
  while (!atomic_load(&hold.inside) && now_ns() < until) sched_yield();
  ck_assert(atomic_load(&hold.inside));
  atomic_store(&gate.open, 1);
  // The canceller is held in the callback. Once the stream counts as
  // drained, the cancelled record's event must have its outcome. (An
  // implementation whose sync also waits for the callbacks of cancelled
  // records never drains here: that is fine too.)
  dc_status_t q = DC_ERR_CANCELLED;
  until = now_ns() + 1000000000ull;
  while (now_ns() < until) {
    if (dc_stream_sync(st, 0) == DC_OK) {
      q = dc_event_query(first);
      break;
    }
    sleep_us(1000);
  }
  atomic_store(&hold.release, 1);
  pthread_join(canceller, NULL);
  DC_CK_OK(dc_stream_sync(st, HANG_NS));
  ck_assert_msg(q == DC_ERR_CANCELLED, "after the sync, the cancelled "
                "record's event is %s", dc_status_name(q));
  DC_CK_FAIL(dc_event_wait(first, HANG_NS), DC_ERR_CANCELLED, "cancelled");
  dc_event_release(first);
  dc_event_release(second);
  dc_stream_release(st);
}
END_TEST

// dc_context_release() waits until no command is queued (s->queued == 0)
// and then reports leaks. A released stream is freed by the stream thread
// only after its last command has left the queue and that thread has
// dropped the scheduler lock, so the report can name a stream that is
// about to be freed: "1 stream(s) still alive".
START_TEST(test_bug_context_release_reports_released_streams) {
  enum { STREAMS = 6 };  // finishing together, on more threads than cores
  int reports = 0, rounds = SCALE(100);
  for (int round = 0; round < rounds && reports == 0; ++round) {
    dc_context_t* own = logged_context();
    dc_device_t* dev = dc_test_cpu(own);
    atomic_int ran = 0;
    for (int i = 0; i < STREAMS; ++i) {
      dc_stream_t* st = stream_on(dev, "released");
      DC_CK_OK(dc_stream_host(st, x5b_slow_count, &ran));
      dc_stream_release(st);
    }
    dc_context_release(own);
    ck_assert_int_eq(atomic_load(&ran), STREAMS);
    reports += dc_test_log_find(&g_log, 0, "still alive") >= 0;
  }
  expect_no_leak_report("dc_context_release with work in flight");
}
END_TEST

// dc_program_release() (core/src/kernel/program.c) reads p->internal after
// its atomic_fetch_sub when that was not the last reference; by then the
// thread holding the last one may have freed |p|. Here the last reference
// is a queued dispatch's, dropped on a stream thread: ThreadSanitizer
// reports the read racing with the free (a plain build rarely notices).
START_TEST(test_bug_program_release_reads_after_decrement) {
  // ThreadSanitizer sees the race most of the time: a few rounds.
  for (int round = 0; round < 6; ++round) {
    dc_program_t* p = build("bug.cl", kKernels, NULL);
    dc_kernel_t* inc = kernel_of(p, "inc");
    dc_buffer_t* b = dc_test_buffer_new(cpu, DC_DTYPE_I32, 1024, "b");
    dc_stream_t* st = stream_on(cpu, "holds the kernel");
    gate_t gate = {0};
    DC_CK_OK(dc_stream_host(st, wait_at_gate, &gate));
    dc_arg_t a = dc_arg_buffer(b);
    dc_dispatch_t grid = {.dims = 1, .global = {1024}};
    DC_CK_OK(dc_stream_dispatch(st, inc, &grid, &a, 1));
    ck_assert(await_at_least(&gate.entered, 1));
    atomic_store(&gate.open, 1);
    dc_program_release(p);  // the queued dispatch still holds the program
    sleep_us(50000);        // no synchronisation while the stream frees it
    DC_CK_OK(dc_stream_sync(st, HANG_NS));
    dc_stream_release(st);
    dc_buffer_release(b);
  }
}
END_TEST

static Suite* stream_stress_suite(void) {
  Suite* s = dc_test_kernel_suite("stream_stress", "dc-check-stream-stress");
  TCase* stress = dc_test_kernel_tcase(s, "stress");
  tcase_add_test(stress, test_events_cross_threads);
  tcase_add_test(stress, test_many_threads_one_stream);
  tcase_add_test(stress, test_failures_and_resets_race_with_work);
  tcase_add_test(stress, test_cancellation_races_with_execution);
  tcase_add_test(stress, test_objects_released_with_work_queued);
  tcase_add_test(stress, test_context_release_waits_for_work_in_flight);
  tcase_add_test(stress, test_stream_group_used_concurrently);
  TCase* bugs = dc_test_kernel_tcase(s, "bugs");
  tcase_add_test(bugs, test_bug_cancel_of_a_ready_stream);
  tcase_add_test(bugs, test_bug_wait_released_by_a_later_record);
  tcase_add_test(bugs, test_bug_sync_returns_before_cancelled_events_complete);
  tcase_add_test(bugs, test_bug_context_release_reports_released_streams);
  tcase_add_test(bugs, test_bug_program_release_reads_after_decrement);
  return s;
}

DC_CHECK_MAIN(stream_stress_suite)

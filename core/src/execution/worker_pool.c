// worker_pool.c: fork-join parallel-for over spinning-then-parking workers.
//
// One job at a time. |state| holds the job's epoch and an "open" bit. The
// caller publishes a job by storing a new epoch with the bit set; each
// worker notices (while spinning) or is woken (when parked on the futex),
// announces itself in |active|, checks that the same job is still open,
// and then takes chunks from the shared counter alongside the caller.
// When the caller has run out of chunks it closes the job and waits only
// for the workers that joined (|active| back to zero). It never waits for
// a worker that has not started yet: on a loaded machine such a worker may
// share the caller's core, and waiting for it would cost a full spin.
//
// Every handshake pairs a write and a read on two words with sequentially
// consistent operations on both sides (a worker bumps |active| and then
// reads |state|; the caller closes |state| and then reads |active|), so at
// least one side sees the other: a worker either sees the job closed and
// leaves without touching it, or the caller waits for it. Parking uses the
// same pairing with |sleepers|, so the caller makes no system call while
// every worker is still spinning.
//
// A gang (dc_worker_pool_gang) is a job whose "chunks" are |count| member
// indices, one per thread: the caller takes index 0 and each worker that
// joins claims at most one more from |gang_next|. Members may wait for
// each other (a grid barrier), so the caller keeps the job open until
// every index has been claimed, however long a parked worker takes to
// wake, rather than closing it when its own part is done.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdalign.h>
#include <string.h>

#include "futex.h"
#include "worker_pool_internal.h"

// Spin budgets per idle policy, in nanoseconds.
static const uint64_t kSpinNs[] = {
    [DC_IDLE_DEFAULT] = 100000,
    [DC_IDLE_LATENCY] = 2000000,
    [DC_IDLE_BALANCED] = 100000,
    [DC_IDLE_POWER] = 0,
};

typedef struct job_t {
  dc_range_fn_t fn;
  void* user_data;
  size_t begin;
  size_t end;
  size_t chunk;
  size_t chunk_count;
  alignas(64) atomic_size_t next_chunk;
  atomic_bool failed;
  dc__sticky_error_t error;
  // A gang: members run indices [0, gang_count); the next unclaimed one.
  bool gang;
  unsigned gang_count;
  alignas(64) atomic_uint gang_next;
  atomic_uint gang_waiting;  // the caller sleeps until all are claimed
} job_t;

typedef struct worker_t {
  dc_worker_pool_t* pool;
  uint32_t index;
  pthread_t thread;
} worker_t;

struct dc_worker_pool_t {
  void* block;  // from the allocator; the pool is aligned inside it
  dc_allocator_t allocator;
  uint32_t thread_count;
  dc_idle_policy_t policy;
  uint64_t spin_ns;
  pthread_mutex_t submit_lock;  // one job at a time
  worker_t* workers;
  uint32_t started;
  atomic_bool shutdown;
  job_t job;
  // Each word that threads hammer gets its own cache line.
  alignas(64) atomic_uint state;  // epoch << 1 | open
  alignas(64) atomic_uint sleepers;
  alignas(64) atomic_uint active;  // workers inside the current job
  alignas(64) atomic_uint caller_sleeping;
  alignas(64) atomic_uint_least64_t stat_jobs;
  atomic_uint_least64_t stat_inline_jobs;
  atomic_uint_least64_t stat_chunks;
  atomic_uint_least64_t stat_parks;
  atomic_uint_least64_t stat_wakeups;
};

#define POOL_BLOCK_SIZE (sizeof(dc_worker_pool_t) + 63)

// Set while a thread runs a parallel-for body, so nested calls run inline.
static _Thread_local bool tls_in_body;

static void run_chunks(dc_worker_pool_t* pool, uint32_t thread_index) {
  job_t* job = &pool->job;
  uint64_t ran = 0;
  tls_in_body = true;
  while (!atomic_load_explicit(&job->failed, memory_order_relaxed)) {
    size_t c = atomic_fetch_add_explicit(&job->next_chunk, 1,
                                         memory_order_relaxed);
    if (c >= job->chunk_count) break;
    size_t begin = job->begin + c * job->chunk;
    // Compares what is left, as begin + chunk may wrap near SIZE_MAX.
    size_t end =
        job->end - begin > job->chunk ? begin + job->chunk : job->end;
    dc_status_t status = job->fn(job->user_data, begin, end, thread_index);
    ++ran;
    if (status != DC_OK) {
      dc__sticky_set_from_last_error(&job->error, status);
      atomic_store_explicit(&job->failed, true, memory_order_relaxed);
    }
  }
  tls_in_body = false;
  atomic_fetch_add_explicit(&pool->stat_chunks, ran, memory_order_relaxed);
}

// Runs one member of a gang: claims the next index, if any is left.
static void run_gang_member(dc_worker_pool_t* pool, uint32_t thread_index) {
  job_t* job = &pool->job;
  unsigned index = atomic_fetch_add(&job->gang_next, 1u);
  if (index >= job->gang_count) return;  // the gang is complete
  if (index + 1u == job->gang_count && atomic_load(&job->gang_waiting)) {
    dc__futex_wake(&job->gang_next, 1);
  }
  tls_in_body = true;
  dc_status_t status = job->fn(job->user_data, index, index + 1u,
                               thread_index);
  tls_in_body = false;
  if (status != DC_OK) dc__sticky_set_from_last_error(&job->error, status);
  atomic_fetch_add_explicit(&pool->stat_chunks, 1, memory_order_relaxed);
}

// Waits until every member index of the gang has been claimed: spins, then
// sleeps. Pairs |gang_waiting| with the last claim as wait_for_job() pairs
// |sleepers| with the job's publication.
static void wait_for_gang(dc_worker_pool_t* pool) {
  job_t* job = &pool->job;
  uint64_t deadline = 0;
  unsigned n;
  for (unsigned i = 1; (n = atomic_load(&job->gang_next)) < job->gang_count;
       ++i) {
    dc__cpu_relax();
    if ((i & 63) != 0) continue;
    uint64_t now = dc__now_ns();
    if (deadline == 0) deadline = now + pool->spin_ns;
    if (now >= deadline) break;
  }
  if (n >= job->gang_count) return;
  atomic_store(&job->gang_waiting, 1u);
  while ((n = atomic_load(&job->gang_next)) < job->gang_count) {
    dc__futex_wait(&job->gang_next, n);
  }
  atomic_store(&job->gang_waiting, 0u);
}

// Waits until |state| carries an epoch other than |seen|: spins, then
// parks. Returns that state (whose job may already be closed again).
static unsigned wait_for_job(dc_worker_pool_t* pool, unsigned seen) {
  uint64_t deadline = 0;
  unsigned s;
  for (unsigned i = 1;
       ((s = atomic_load_explicit(&pool->state, memory_order_acquire)) >>
        1) == seen;
       ++i) {
    dc__cpu_relax();
    if ((i & 63) != 0) continue;  // reading the clock costs more than a pause
    uint64_t now = dc__now_ns();
    if (deadline == 0) deadline = now + pool->spin_ns;
    if (now >= deadline) break;
  }
  if ((s >> 1) != seen) return s;
  atomic_fetch_add_explicit(&pool->stat_parks, 1, memory_order_relaxed);
  atomic_fetch_add(&pool->sleepers, 1u);
  while (((s = atomic_load(&pool->state)) >> 1) == seen) {
    dc__futex_wait(&pool->state, s);
  }
  atomic_fetch_sub(&pool->sleepers, 1u);
  atomic_fetch_add_explicit(&pool->stat_wakeups, 1, memory_order_relaxed);
  return s;
}

// Joins the job published as |s| if it is still open.
static void join_job(dc_worker_pool_t* pool, unsigned s, uint32_t index) {
  atomic_fetch_add(&pool->active, 1u);
  if (atomic_load(&pool->state) == s) {
    if (pool->job.gang) {
      run_gang_member(pool, index);
    } else {
      run_chunks(pool, index);
    }
  }
  if (atomic_fetch_sub(&pool->active, 1u) == 1u &&
      atomic_load(&pool->caller_sleeping)) {
    dc__futex_wake(&pool->active, 1);
  }
}

static void* worker_main(void* arg) {
  worker_t* self = arg;
  dc_worker_pool_t* pool = self->pool;
  // Threads start before any job exists, at epoch 0; a job published
  // before this thread runs is still seen as new.
  unsigned seen = 0;
  for (;;) {
    unsigned s = wait_for_job(pool, seen);
    if (atomic_load(&pool->shutdown)) break;
    seen = s >> 1;
    if (s & 1u) join_job(pool, s, self->index);
  }
  return NULL;
}

// Waits until the workers that joined the closed job have left it: spins
// while they finish their last chunks, then sleeps.
static void wait_for_workers(dc_worker_pool_t* pool) {
  uint64_t deadline = 0;
  unsigned left;
  for (unsigned i = 1; (left = atomic_load(&pool->active)) != 0u; ++i) {
    dc__cpu_relax();
    if ((i & 63) != 0) continue;
    uint64_t now = dc__now_ns();
    if (deadline == 0) deadline = now + pool->spin_ns;
    if (now >= deadline) break;
  }
  if (left == 0u) return;
  atomic_store(&pool->caller_sleeping, 1u);
  while ((left = atomic_load(&pool->active)) != 0u) {
    dc__futex_wait(&pool->active, left);
  }
  atomic_store(&pool->caller_sleeping, 0u);
}

static dc_status_t run_inline(dc_worker_pool_t* pool, size_t begin,
                              size_t end, dc_range_fn_t fn, void* user_data) {
  atomic_fetch_add_explicit(&pool->stat_inline_jobs, 1, memory_order_relaxed);
  bool nested = tls_in_body;
  tls_in_body = true;
  dc_status_t status = fn(user_data, begin, end, 0);
  tls_in_body = nested;
  atomic_fetch_add_explicit(&pool->stat_chunks, 1, memory_order_relaxed);
  return status;
}

// The parallel-for of both entry points: |wait| false gives up with
// DC_ERR_UNAVAILABLE, running nothing, when another call has the workers.
static dc_status_t parallel_for(dc_worker_pool_t* pool, size_t begin,
                                size_t end, size_t chunk, dc_range_fn_t fn,
                                void* user_data, bool wait,
                                const char* fname) {
  DC_REQUIRE_ARG(pool, fname);
  DC_REQUIRE_ARG(fn, fname);
  if (end < begin) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: range end %zu is before its begin %zu", fname, end,
                   begin);
  }
  size_t count = end - begin;
  if (count == 0) return DC_OK;
  if (chunk == 0) chunk = DC_MAX(count / ((size_t)pool->thread_count * 4), 1);
  if (pool->thread_count == 1 || chunk >= count || tls_in_body) {
    return run_inline(pool, begin, end, fn, user_data);
  }

  if (wait) {
    pthread_mutex_lock(&pool->submit_lock);
  } else if (pthread_mutex_trylock(&pool->submit_lock) != 0) {
    return DC_FAIL(DC_ERR_UNAVAILABLE,
                   "%s: the workers are running another call", fname);
  }
  job_t* job = &pool->job;
  job->gang = false;
  job->fn = fn;
  job->user_data = user_data;
  job->begin = begin;
  job->end = end;
  job->chunk = chunk;
  job->chunk_count = count / chunk + (count % chunk != 0);
  atomic_store_explicit(&job->next_chunk, 0, memory_order_relaxed);
  atomic_store_explicit(&job->failed, false, memory_order_relaxed);
  dc__sticky_clear(&job->error);
  unsigned epoch = (atomic_load(&pool->state) >> 1) + 1u;
  atomic_store(&pool->state, epoch << 1 | 1u);  // publishes the job
  if (atomic_load(&pool->sleepers) != 0u) {
    dc__futex_wake(&pool->state, (int)pool->thread_count);
  }
  run_chunks(pool, 0);
  atomic_store(&pool->state, epoch << 1);  // no worker may join any more
  wait_for_workers(pool);
  dc_status_t status = dc__sticky_raise(&job->error);
  atomic_fetch_add_explicit(&pool->stat_jobs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&pool->submit_lock);
  return status;
}

dc_status_t dc_worker_pool_parallel_for(dc_worker_pool_t* pool, size_t begin,
                                        size_t end, size_t chunk,
                                        dc_range_fn_t fn, void* user_data) {
  return parallel_for(pool, begin, end, chunk, fn, user_data, true,
                      "dc_worker_pool_parallel_for");
}

dc_status_t dc_worker_pool_try_parallel_for(dc_worker_pool_t* pool,
                                            size_t begin, size_t end,
                                            size_t chunk, dc_range_fn_t fn,
                                            void* user_data) {
  return parallel_for(pool, begin, end, chunk, fn, user_data, false,
                      "dc_worker_pool_try_parallel_for");
}

dc_status_t dc_worker_pool_gang(dc_worker_pool_t* pool, uint32_t count,
                                dc_range_fn_t fn, void* user_data) {
  static const char* fname = "dc_worker_pool_gang";
  DC_REQUIRE_ARG(pool, fname);
  DC_REQUIRE_ARG(fn, fname);
  if (count > pool->thread_count) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: %u bodies cannot run at once on %u thread(s)", fname,
                   count, pool->thread_count);
  }
  if (count == 0) return DC_OK;
  if (count == 1) return run_inline(pool, 0, 1, fn, user_data);
  if (tls_in_body) {
    // The workers are busy with the job this body belongs to.
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "%u bodies cannot run at once from inside a parallel-for "
                   "body, whose workers are busy",
                   count);
  }
  pthread_mutex_lock(&pool->submit_lock);
  job_t* job = &pool->job;
  job->gang = true;
  job->gang_count = count;
  job->fn = fn;
  job->user_data = user_data;
  atomic_store(&job->gang_next, 1u);  // index 0 is the caller's
  atomic_store(&job->gang_waiting, 0u);
  dc__sticky_clear(&job->error);
  unsigned epoch = (atomic_load(&pool->state) >> 1) + 1u;
  atomic_store(&pool->state, epoch << 1 | 1u);  // publishes the gang
  if (atomic_load(&pool->sleepers) != 0u) {
    dc__futex_wake(&pool->state, (int)pool->thread_count);
  }
  tls_in_body = true;
  dc_status_t status = fn(user_data, 0, 1, 0);
  tls_in_body = false;
  if (status != DC_OK) dc__sticky_set_from_last_error(&job->error, status);
  wait_for_gang(pool);
  atomic_store(&pool->state, epoch << 1);  // later joiners find it closed
  wait_for_workers(pool);
  status = dc__sticky_raise(&job->error);
  atomic_fetch_add_explicit(&pool->stat_chunks, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&pool->stat_jobs, 1, memory_order_relaxed);
  pthread_mutex_unlock(&pool->submit_lock);
  return status;
}

//===-- Lifecycle -------------------------------------------------------===//

static void stop_workers(dc_worker_pool_t* pool) {
  atomic_store(&pool->shutdown, true);
  atomic_store(&pool->state, ((atomic_load(&pool->state) >> 1) + 1u) << 1);
  dc__futex_wake(&pool->state, (int)pool->thread_count);
  for (uint32_t i = 0; i < pool->started; ++i) {
    pthread_join(pool->workers[i].thread, NULL);
  }
  pool->started = 0;
}

dc_status_t dc__worker_pool_create(dc_allocator_t allocator,
                                   uint32_t thread_count,
                                   dc_idle_policy_t policy,
                                   dc_worker_pool_t** out_pool) {
  *out_pool = NULL;
  // The struct needs 64-byte alignment, more than a host allocator
  // promises, so it is placed inside a larger block.
  void* block = dc_allocator_calloc(allocator, 1, POOL_BLOCK_SIZE);
  dc_worker_pool_t* pool =
      block ? (dc_worker_pool_t*)(((uintptr_t)block + 63) & ~(uintptr_t)63)
            : NULL;
  worker_t* workers =
      thread_count > 1
          ? dc_allocator_calloc(allocator, thread_count - 1, sizeof(*workers))
          : NULL;
  if (pool == NULL || (thread_count > 1 && workers == NULL)) {
    if (workers != NULL) {
      dc_allocator_free(allocator, workers,
                        sizeof(*workers) * (thread_count - 1));
    }
    dc_allocator_free(allocator, block, POOL_BLOCK_SIZE);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the worker pool");
  }
  pool->block = block;
  pool->allocator = allocator;
  pool->thread_count = thread_count;
  pool->policy = policy;
  pool->spin_ns = kSpinNs[policy];
  pool->workers = workers;
  pthread_mutex_init(&pool->submit_lock, NULL);
  dc__sticky_init(&pool->job.error);
  for (uint32_t i = 0; i + 1 < thread_count; ++i) {
    workers[i] = (worker_t){.pool = pool, .index = i + 1};
    int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
    if (rc != 0) {
      stop_workers(pool);
      dc__worker_pool_destroy(pool);
      return DC_FAIL(DC_ERR_RESOURCE_EXHAUSTED,
                     "dc_context_create: cannot start worker thread %u of %u "
                     "(error %d)",
                     i + 1, thread_count - 1, rc);
    }
    pool->started = i + 1;
  }
  *out_pool = pool;
  return DC_OK;
}

void dc__worker_pool_destroy(dc_worker_pool_t* pool) {
  if (pool == NULL) return;
  stop_workers(pool);
  pthread_mutex_destroy(&pool->submit_lock);
  if (pool->workers != NULL) {
    dc_allocator_free(pool->allocator, pool->workers,
                      sizeof(worker_t) * (pool->thread_count - 1));
  }
  dc_allocator_free(pool->allocator, pool->block, POOL_BLOCK_SIZE);
}

//===-- Queries ---------------------------------------------------------===//

uint32_t dc_worker_pool_thread_count(const dc_worker_pool_t* pool) {
  return pool ? pool->thread_count : 0;
}

dc_idle_policy_t dc_worker_pool_idle_policy(const dc_worker_pool_t* pool) {
  return pool ? pool->policy : DC_IDLE_DEFAULT;
}

dc_status_t dc_worker_pool_stats(const dc_worker_pool_t* pool,
                                 dc_worker_pool_stats_t* out_stats) {
  DC_REQUIRE_ARG(pool, "dc_worker_pool_stats");
  DC_REQUIRE_ARG(out_stats, "dc_worker_pool_stats");
  dc_worker_pool_t* p = (dc_worker_pool_t*)pool;
  *out_stats = (dc_worker_pool_stats_t){
      .jobs = atomic_load(&p->stat_jobs),
      .inline_jobs = atomic_load(&p->stat_inline_jobs),
      .chunks = atomic_load(&p->stat_chunks),
      .parks = atomic_load(&p->stat_parks),
      .wakeups = atomic_load(&p->stat_wakeups),
  };
  return DC_OK;
}

static const char* const kPolicyNames[] = {
    [DC_IDLE_DEFAULT] = "balanced",
    [DC_IDLE_LATENCY] = "latency",
    [DC_IDLE_BALANCED] = "balanced",
    [DC_IDLE_POWER] = "power",
};

const char* dc_idle_policy_name(dc_idle_policy_t policy) {
  if (policy < DC_IDLE_DEFAULT || policy > DC_IDLE_POWER) return "?";
  return kPolicyNames[policy];
}

bool dc_idle_policy_parse(const char* name, dc_idle_policy_t* out_policy) {
  if (name == NULL || out_policy == NULL) return false;
  for (int p = DC_IDLE_LATENCY; p <= DC_IDLE_POWER; ++p) {
    if (dc__str_ieq(name, kPolicyNames[p])) {
      *out_policy = (dc_idle_policy_t)p;
      return true;
    }
  }
  return false;
}

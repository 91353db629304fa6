// dc/worker_pool.h: the CPU worker threads and the parallel-for primitive.
// SPDX-License-Identifier: MIT
#ifndef DC_WORKER_POOL_H_
#define DC_WORKER_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- The worker pool -------------------------------------------------===//
//
// Each context owns one pool of worker threads (by default one thread per
// logical core, counting the calling thread: N cores give N-1 workers plus
// the caller). The CPU device runs kernels on it; host code may use it too.
//
// dc_worker_pool_parallel_for() splits an index range into chunks and runs
// them on the workers and on the calling thread, returning when every chunk
// has run. Chunks are handed out dynamically (an atomic counter), so uneven
// chunks balance themselves.
//
// Idle workers first spin for a short while, so that back-to-back calls
// start in well under a microsecond, and then park in the kernel, so that
// an idle pool burns no CPU. The idle policy sets the spin time:
//
//   policy    spin before parking   for
//   latency   2 ms                  many short calls in a row
//   balanced  100 us (default)      general use
//   power     none                  machines shared with other work
//
// Small ranges (one chunk), pools of one thread, and calls made from
// inside a parallel-for body run on the calling thread alone, as a single
// call of the body over the whole range; nesting therefore never
// deadlocks.
//
// Thread safety: thread-safe. Calls that use the workers are serialised
// (each uses every worker); calls that run inline proceed concurrently.
//
// Failure: a body returns a dc_status_t. After the first failure no new
// chunks start; chunks already running finish. The call returns the first
// failure's code, and dc_last_error() on the calling thread holds the
// message that the failing body set on its own (worker) thread, cut to
// 511 bytes.

typedef struct dc_worker_pool_t dc_worker_pool_t;

// How idle workers wait for work; see the table above.
typedef enum dc_idle_policy_e {
  DC_IDLE_DEFAULT = 0,  // in params: take DC_IDLE, else balanced
  DC_IDLE_LATENCY,
  DC_IDLE_BALANCED,
  DC_IDLE_POWER,
} dc_idle_policy_t;

// The body of a parallel-for: runs the indices [|begin|, |end|).
// |thread_index| is in [0, dc_worker_pool_thread_count()) and is unique
// among the threads running one call (0 is the calling thread), so a body
// can keep scratch state per thread of the call, in storage that belongs
// to that call, without locks.
typedef dc_status_t (*dc_range_fn_t)(void* user_data, size_t begin,
                                     size_t end, uint32_t thread_index);

// Counters since the pool was created.
typedef struct dc_worker_pool_stats_t {
  uint64_t jobs;     // parallel-for calls that used the workers
  uint64_t inline_jobs;  // calls run on the caller alone (small or nested)
  uint64_t chunks;   // chunks run, by all threads
  uint64_t parks;    // times a worker went to sleep after spinning
  uint64_t wakeups;  // times a parked worker was woken for work
} dc_worker_pool_stats_t;

// Returns the idle policy's name: "latency", "balanced" or "power".
DC_API const char* dc_idle_policy_name(dc_idle_policy_t policy);

// Parses a policy name as DC_IDLE accepts it. Returns false if unknown.
DC_API bool dc_idle_policy_parse(const char* name,
                                 dc_idle_policy_t* out_policy);

// Runs |fn| over [|begin|, |end|) in chunks of |chunk| indices (0 picks a
// size that gives each thread several chunks; an inline call passes the
// whole range at once). Returns when all chunks have
// run or, after a failure, when the running chunks have finished. An empty
// range returns DC_OK at once without calling |fn|.
// Returns DC_ERR_INVALID_ARGUMENT if |pool| or |fn| is NULL or |end| <
// |begin|, else the first status a body returned.
DC_API dc_status_t dc_worker_pool_parallel_for(dc_worker_pool_t* pool,
                                               size_t begin, size_t end,
                                               size_t chunk, dc_range_fn_t fn,
                                               void* user_data);

// As dc_worker_pool_parallel_for, but when another thread's call has the
// workers it runs nothing and returns DC_ERR_UNAVAILABLE at once, instead
// of waiting for that call to end: for a caller that holds a lock another
// call's bodies might need, and would rather do the work itself. (A call
// from inside a body still runs inline, as there.)
DC_API dc_status_t dc_worker_pool_try_parallel_for(dc_worker_pool_t* pool,
                                                   size_t begin, size_t end,
                                                   size_t chunk,
                                                   dc_range_fn_t fn,
                                                   void* user_data);

// Runs |fn| once for each index i in [0, |count|) as the range (i, i + 1),
// all at the same time, each on a thread of its own (index 0 on the
// caller, the others on distinct workers, parked ones woken), and returns
// when all have finished. Unlike a parallel-for, no thread runs two
// indices and the call waits for every member, so members may wait for
// each other (a barrier across the gang: what a CPU device's kernels that
// synchronise their whole grid need). Every member runs even when another
// fails; the first failure is returned. A |count| of 0 returns DC_OK and
// 1 runs inline.
// Returns DC_ERR_INVALID_ARGUMENT if |pool| or |fn| is NULL or |count|
// exceeds dc_worker_pool_thread_count(), DC_ERR_UNSUPPORTED for a |count|
// above 1 from inside a parallel-for or gang body (the workers are taken),
// else the first status a member returned.
DC_API dc_status_t dc_worker_pool_gang(dc_worker_pool_t* pool, uint32_t count,
                                       dc_range_fn_t fn, void* user_data);

// Returns the number of threads a parallel-for runs on: the workers plus
// the calling thread. 0 if |pool| is NULL.
DC_API uint32_t dc_worker_pool_thread_count(const dc_worker_pool_t* pool);

// Returns the pool's idle policy.
DC_API dc_idle_policy_t dc_worker_pool_idle_policy(
    const dc_worker_pool_t* pool);

// Copies the pool's counters into |out_stats|.
// Returns DC_ERR_INVALID_ARGUMENT if either pointer is NULL.
DC_API dc_status_t dc_worker_pool_stats(const dc_worker_pool_t* pool,
                                        dc_worker_pool_stats_t* out_stats);

DC_EXTERN_C_END

#endif  // DC_WORKER_POOL_H_

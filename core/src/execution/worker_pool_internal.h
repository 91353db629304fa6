// worker_pool_internal.h: creating and destroying the worker pool.
// SPDX-License-Identifier: MIT
#ifndef DC_WORKER_POOL_INTERNAL_H_
#define DC_WORKER_POOL_INTERNAL_H_

#include "dc/worker_pool.h"
#include "internal.h"

// Starts |thread_count| - 1 worker threads (the caller of a parallel-for is
// the last thread). Returns DC_ERR_RESOURCE_EXHAUSTED if threads cannot be
// started.
DC_INTERNAL dc_status_t dc__worker_pool_create(dc_allocator_t allocator,
                                               uint32_t thread_count,
                                               dc_idle_policy_t policy,
                                               dc_worker_pool_t** out_pool);
// Stops and joins the workers. No parallel-for may be running.
DC_INTERNAL void dc__worker_pool_destroy(dc_worker_pool_t* pool);

// Runs |fn| for each index in [0, |count|) as (index, index + 1), all at
// the same time, each on a thread of its own (index 0 on the caller, the
// others on distinct workers, parked ones woken), and returns when all have
// finished. Unlike a parallel-for, no thread runs two indices and the call
// waits for every member, so members may wait for each other (a grid
// barrier). Every member runs even when another fails; the first failure
// is returned. |count| of 1 runs inline; called with |count| > 1 from
// inside a parallel-for or gang body it returns DC_ERR_UNSUPPORTED, as the
// workers are taken. Returns DC_ERR_INVALID_ARGUMENT if |count| exceeds
// dc_worker_pool_thread_count().
DC_INTERNAL dc_status_t dc__worker_pool_gang(dc_worker_pool_t* pool,
                                             uint32_t count, dc_range_fn_t fn,
                                             void* user_data);

#endif  // DC_WORKER_POOL_INTERNAL_H_

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

#endif  // DC_WORKER_POOL_INTERNAL_H_

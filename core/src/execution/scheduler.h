// scheduler.h: what the rest of the core asks of the scheduler: its
// lifetime, waits for progress, and batches of commands submitted to
// several streams at once (a graph run). Streams' and commands' internals
// (stream_internal.h) stay inside execution/: nothing else takes the
// scheduler's lock or reads a stream's state.
// SPDX-License-Identifier: MIT
#ifndef DC_SCHEDULER_H_
#define DC_SCHEDULER_H_

#include <pthread.h>

#include "dc/event.h"
#include "dc/stream.h"
#include "internal.h"

typedef struct dc__scheduler_t dc__scheduler_t;

// Scheduler lifetime (context.c). Destroying stops and joins the threads;
// it may run on one of them (when the last object of a context goes away
// on a stream thread), which then exits without touching the scheduler.
DC_INTERNAL dc_status_t dc__scheduler_create(dc_context_t* ctx,
                                             dc__scheduler_t** out);
DC_INTERNAL void dc__scheduler_destroy(dc__scheduler_t* sched);
// Waits until some queued command finishes, for at most |timeout_ns|.
// Returns false at once when nothing is queued (waiting cannot help).
DC_INTERNAL bool dc__scheduler_wait_progress(dc__scheduler_t* sched,
                                             uint64_t timeout_ns);
// Waits until every stream of the context has drained (the host released
// the context; work in flight finishes).
DC_INTERNAL void dc__scheduler_drain(dc__scheduler_t* sched);
// Gives device |index| of the context its event pools (device.c).
DC_INTERNAL void dc__scheduler_add_device(dc__scheduler_t* sched,
                                          size_t index, dc_device_t* device);
// The size of struct dc_stream_t, for the context's object cache.
DC_INTERNAL size_t dc__stream_object_size(void);
// The stream whose command the calling thread is running, or NULL.
DC_INTERNAL dc_stream_t* dc__current_stream(void);
// Calls |fn| for every stream of |ctx| that the user has not released,
// in creation order, holding a reference to each for the call (not the
// lock: |fn| may call any stream function).
DC_INTERNAL void dc__context_foreach_stream(dc_context_t* ctx,
                                            void (*fn)(dc_stream_t* stream,
                                                       void* user_data),
                                            void* user_data);
// The size of struct dc_stream_group_t, for the context's object cache.
DC_INTERNAL size_t dc__stream_group_object_size(void);
// The size of struct dc_cancel_token_t, for the context's object cache.
DC_INTERNAL size_t dc__cancel_token_object_size(void);
// The context |token| belongs to; NULL for a token released or NULL.
DC_INTERNAL dc_context_t* dc__cancel_token_context(
    const dc_cancel_token_t* token);

// Calls a host function; if it fails without setting a message, gives the
// failure one that says so.
DC_INTERNAL dc_status_t dc__call_host_fn(dc_host_fn_t fn, void* user_data);

// Waits on |cv| (of CLOCK_MONOTONIC), used with |lock|, which is held,
// until |done(arg)| is true or |timeout_ns| passes (DC_TIMEOUT_INFINITE:
// never; 0: no wait). Returns DC_OK or DC_ERR_DEADLINE_EXCEEDED, setting
// no message.
DC_INTERNAL dc_status_t dc__wait_on_locked(pthread_cond_t* cv,
                                           pthread_mutex_t* lock,
                                           bool (*done)(void* arg), void* arg,
                                           uint64_t timeout_ns);

//===-- Tasks and batches -------------------------------------------------===//
//
// A task is work the scheduler runs as a stream's command without knowing
// what it is (a graph op): it calls run on a stream thread when the task
// reaches the head of its stream, and the task's failure is its own (it
// never fails the stream). A batch is a fixed list of tasks, event records
// and event waits over a fixed set of streams, built once and submitted as
// often as its owner likes, one submission at a time; the batch keeps its
// commands, and hands each back to its owner through |released| once the
// scheduler is done with it, so the owner knows when a submission is over.

typedef struct dc__task_ops_t {
  // Runs |task| on a thread of |stream| and stores when it started and
  // ended (dc__now_ns).
  void (*run)(void* task, dc_stream_t* stream, uint64_t* out_start,
              uint64_t* out_end);
  // Its name, for traces and logs.
  const char* (*name)(const void* task);
} dc__task_ops_t;

typedef struct dc__batch_t dc__batch_t;

// Makes an empty batch for up to |capacity| commands on |streams| (the
// batch retains each). |released| is called (with the scheduler's lock
// held: it must not call the scheduler) once per command of a submission
// when the scheduler lets go of it.
DC_INTERNAL dc_status_t dc__batch_create(dc_stream_t* const* streams,
                                         size_t stream_count, size_t capacity,
                                         void (*released)(void* owner),
                                         void* owner, dc__batch_t** out);
// Frees |batch|, which has no submission in flight.
DC_INTERNAL void dc__batch_destroy(dc__batch_t* batch);
// Append to stream |stream| (an index into the batch's streams), up to
// the batch's capacity: a task; a record of |event| (of the streams'
// context; at most one record of an event per batch), which gets a new
// generation at each submission; a wait for the latest record of |event|
// as of the submission (the batch's own records included). The batch
// retains |event|. dc__batch_record fails with DC_ERR_OUT_OF_MEMORY when
// the event cannot make room for the generation.
DC_INTERNAL void dc__batch_task(dc__batch_t* batch, size_t stream,
                                const dc__task_ops_t* ops, void* task);
DC_INTERNAL dc_status_t dc__batch_record(dc__batch_t* batch, size_t stream,
                                         dc_event_t* event);
DC_INTERNAL void dc__batch_wait(dc__batch_t* batch, size_t stream,
                                dc_event_t* event);
// The number of commands in |batch|.
DC_INTERNAL size_t dc__batch_size(const dc__batch_t* batch);
// Whether the batch's streams hold no work (nothing queued or running).
DC_INTERNAL bool dc__batch_streams_idle(dc__batch_t* batch);
// Fails, naming |fn| and the stream, if one of the batch's streams has
// failed (it must be reset first).
DC_INTERNAL dc_status_t dc__batch_check(dc__batch_t* batch, const char* fn);
// Submits every command of |batch| at once, each stream's in the order
// they were added. Fails as dc__batch_check does, submitting nothing.
DC_INTERNAL dc_status_t dc__batch_submit(dc__batch_t* batch, const char* fn);

#endif  // DC_SCHEDULER_H_

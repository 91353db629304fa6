// stream_internal.h: streams, events and the scheduler that runs them.
//
// Every context has one scheduler. Its lock guards the state of all the
// context's streams and events: queues, ready lists, event generations and
// waiters. Commands run outside the lock, on the scheduler's threads (the
// "stream threads"); a stream runs one command at a time, so its commands
// keep their order, and different streams run at once on different
// threads. Waits on events need no thread: a stream whose next command
// waits for an incomplete event is parked on the event and made ready
// again by the record that completes it.
//
// Lock order: the scheduler lock, then the context's lock or an event
// pool's. Finished commands drop their references under the scheduler
// lock, before waiters wake; user code (host callbacks, event callbacks)
// never runs under it.
// SPDX-License-Identifier: MIT
#ifndef DC_STREAM_INTERNAL_H_
#define DC_STREAM_INTERNAL_H_

#include <pthread.h>

#include "context_internal.h"
#include "dc/event.h"
#include "dc/stream.h"
#include "program_internal.h"
#include "scheduler.h"
#include "telemetry_internal.h"

#define DC_MAX_STREAM_THREADS 8
#define DC_EVENT_CALLBACKS 8
#define DC_EVENT_FAILURES 16
// Commands come in four sizes, by the dispatch arguments they hold inline
// (more than the largest go to a separate allocation).
#define DC_CMD_CLASSES 4
#define DC_CMD_MAX_INLINE_ARGS 8

typedef enum dc__cmd_kind_e {
  DC_CMD_DISPATCH,
  DC_CMD_COPY,   // buffer to buffer
  DC_CMD_WRITE,  // host to buffer
  DC_CMD_READ,   // buffer to host
  DC_CMD_FILL,
  DC_CMD_HOST,
  DC_CMD_RECORD,
  DC_CMD_WAIT,
  DC_CMD_TASK,   // a task of a batch (scheduler.h); never fails its stream
} dc__cmd_kind_t;

typedef struct dc__event_callback_t {
  dc_event_callback_t fn;
  void* user_data;
  uint64_t generation;
} dc__event_callback_t;

typedef struct dc__cmd_t dc__cmd_t;
struct dc__cmd_t {
  dc__cmd_t* next;
  dc__cmd_kind_t kind;
  uint64_t sequence;          // per stream, from 1
  dc_cancel_token_t* token;   // a reference, or NULL
  uint64_t queued_ns;         // when it went on the device queue
  struct dc__batch_t* batch;  // set: the command belongs to a batch,
                              // which owns it and its references
  union {
    struct {
      dc_kernel_t* kernel;    // a reference
      dc__prepared_t prepared;
      dc_arg_t* args;         // inline_args or allocated; buffers retained
      size_t arg_count;
    } dispatch;
    struct {                  // COPY, WRITE, READ and FILL
      dc_buffer_t* dst;       // retained (NULL for READ)
      dc_buffer_t* src;       // retained (NULL for WRITE and FILL)
      size_t dst_offset;      // elements
      size_t src_offset;
      size_t count;
      void* host;             // WRITE: source; READ: destination
      unsigned char value[16];  // FILL: the element
    } transfer;
    struct {
      dc_host_fn_t fn;
      void* user_data;
    } host;
    struct {                  // RECORD: the generation it completes;
      dc_event_t* event;      // WAIT: the one it waits for. A reference.
      uint64_t generation;
      bool host_only;         // WAIT: the device refused it; the host waits
      // A cancelled record's callbacks, run once the lock is dropped.
      dc__event_callback_t due[DC_EVENT_CALLBACKS];
      size_t due_count;
    } event;
    struct {
      const dc__task_ops_t* ops;
      void* task;
    } task;
  } u;
  size_t inline_capacity;     // of inline_args
  dc_arg_t inline_args[];
};

struct dc_cancel_token_t {
  dc__resource_t header;  // first (resource.h)
  dc_context_t* ctx;  // the token keeps it alive
  atomic_bool cancelled;
};

// Whether |t| is a live token (not NULL, not released).
static inline bool dc__is_cancel_token(const dc_cancel_token_t* t) {
  return dc__resource_live(DC__RES(t), &dc__cancel_token_type);
}

struct dc_stream_t {
  dc__resource_t header;  // first (resource.h)
  dc_device_t* device;
  struct dc__scheduler_t* sched;
  uint32_t id;
  dc_priority_t priority;
  char label[48];
  dc__live_node_t live;

  // Guarded by the scheduler's lock.
  dc__cmd_t* head;            // the running or next command
  dc__cmd_t* tail;
  size_t queued;              // commands in the list
  uint64_t next_sequence;
  bool running;               // a thread is running the head command
  // Queued dispatches (scheduler.c): the first |in_flight| commands are
  // on the device queue or being put there, and the first |on_device|
  // of them are there; |flight_tail| is the last of them. One thread at a
  // time puts commands there (|launching|), without the lock.
  size_t in_flight;
  size_t on_device;
  dc__cmd_t* flight_tail;
  bool launching;
  bool dawdling;              // its thread waits to finish (scheduler.c)
  bool hurry;                 // a host thread waits: finish at once
  dc_device_queue_t* queue;   // the device queue (dc/backend.h), or NULL
  bool blocked;               // the head waits for an event
  bool ready;                 // on a ready list
  bool released;              // the user let go; freed once drained
  dc_stream_t* ready_next;
  dc_stream_t* wait_next;     // in the waited event's list
  dc_stream_t* all_next;      // in the scheduler's list of streams
  dc_stream_t* all_prev;
  uint64_t blocked_since_ns;
  uint64_t wake_at;           // host syncs wait for this command at least
  _Atomic uint64_t done_seq;  // the last command that finished
  dc_cancel_token_t* token;   // given to new commands
  dc_status_t error;          // the first failure, until reset
  char message[512];
  dc_stream_stats_t stats;
};

struct dc_event_t {
  dc__resource_t header;      // first (resource.h); its link chains the
                              // pool's free list
  dc_device_t* device;
  struct dc__event_pool_t* pool;
  uint32_t flags;
  dc__live_node_t live;

  // Guarded by the scheduler's lock. Records of one event may complete
  // out of order (on different streams), so each generation is tracked:
  // a generation is complete when it is recorded and no longer pending.
  uint64_t recorded;          // generations queued by records
  uint64_t* pending;          // generations queued and not yet complete
  uint32_t pending_count, pending_capacity;
  struct {                    // the last DC_EVENT_FAILURES poisoned ones
    uint64_t generation;
    dc_status_t status;
  } failed[DC_EVENT_FAILURES];
  uint32_t failed_count;
  char message[512];          // the latest poisoning error's message
  uint64_t time_ns;           // when the latest generation completed
  // The device's marker (dc/backend.h), or NULL.
  dc_device_event_t* device_event;
  uint64_t device_generation; // the generation last recorded on the device
  dc_stream_t* waiters;       // streams parked on this event
  uint32_t host_waiters;      // host threads in dc_event_wait
  // Copies of recorded and pending_count for lock-free polling.
  _Atomic uint64_t recorded_now;
  atomic_uint pending_now;
  dc__event_callback_t callbacks[DC_EVENT_CALLBACKS];
  uint32_t callback_count;
};

// Released events of one device and kind.
typedef struct dc__event_pool_t {
  pthread_mutex_t lock;
  dc_device_t* device;
  uint32_t flags;
  // Cached events, oldest release first: dc_event_create takes the head
  // only while more than DC_EVENT_POOL_QUARANTINE wait, so a released
  // event's handle stays detectably stale for that many releases.
  dc_event_t* free_head;
  dc_event_t* free_tail;
  dc_event_pool_stats_t stats;
} dc__event_pool_t;

struct dc__scheduler_t {
  dc_context_t* ctx;
  pthread_mutex_t lock;
  pthread_cond_t work_cv;     // stream threads wait here for work
  pthread_cond_t done_cv;     // host threads wait here for completions
  dc_stream_t* ready_head[3]; // by rank: high, normal, low
  dc_stream_t* ready_tail[3];
  atomic_uint ready_count;    // streams on the ready lists
  dc_stream_t* streams;       // every stream not yet freed
  size_t stream_count;
  size_t queued;              // commands queued on all streams
  uint32_t next_stream_id;
  pthread_t threads[DC_MAX_STREAM_THREADS];
  uint32_t thread_count;
  uint32_t sleeping;          // threads blocked on work_cv
  uint32_t spinning;          // threads polling for work before sleeping
  uint32_t drain_waiters;     // threads waiting for every stream to drain
  uint32_t progress_waiters;  // threads waiting for any command to finish
  uint64_t finished;          // commands finished, ever
  bool stopping;
  dc__cmd_t* free_cmds[DC_CMD_CLASSES];  // recycled commands, by size
  size_t free_cmd_bytes;                 // held on those lists
  dc__event_pool_t event_pools[DC_MAX_DEVICES][2];  // [device][timing]
  struct dc__scheduler_t* registry_next;  // for cancel tokens
};

// Makes sure the scheduler has a thread for each of its streams, up to
// DC_MAX_STREAM_THREADS. Called with the lock held.
DC_INTERNAL dc_status_t dc__scheduler_grow(dc__scheduler_t* sched);

// A command with room for |arg_count| inline arguments (if that many fit)
// from the scheduler's free lists or the allocator (lock held), zeroed
// but for the argument storage; NULL when out of memory.
DC_INTERNAL dc__cmd_t* dc__cmd_new(dc__scheduler_t* sched, size_t arg_count);
// Puts |stream| on its scheduler's ready list unless it is there or
// running (lock held): a thread will take it.
DC_INTERNAL void dc__stream_make_ready_locked(dc_stream_t* stream);
// Appends |cmd| to |stream|, which is alive and not released (lock held),
// and makes the stream ready if it was idle.
DC_INTERNAL void dc__stream_push(dc_stream_t* stream, dc__cmd_t* cmd);
// dc__stream_push for a dispatch, which the calling thread puts on the
// stream's device queue itself when everything ahead of it on the stream
// is there already (scheduler.c). Called with the lock held; drops it
// while launching.
DC_INTERNAL void dc__stream_push_dispatch(dc_stream_t* stream,
                                          dc__cmd_t* cmd);
// Finishes |stream|'s work on the calling thread when all it holds is on
// the device queue and no thread runs it (lock held; drops it while
// waiting for the device), so that a host waiting for the stream does not
// wait for a stream thread to take it first. Returns whether it did.
DC_INTERNAL bool dc__stream_help_locked(dc_stream_t* stream);
// Tells the thread running |stream| that a host thread waits for it, so
// that it finishes what is on the device queue at once (lock held).
DC_INTERNAL void dc__stream_hurry_locked(dc_stream_t* stream);
// Completes the record |cmd| on |stream|, which is idle (nothing queued or
// running), on the calling thread: with nothing before it, it is due at
// once. Returns the number of callbacks moved to |due| (lock held; run
// them with dc__event_run_callbacks() after unlocking).
DC_INTERNAL size_t dc__stream_record_now_locked(dc_stream_t* stream,
                                               dc__cmd_t* cmd,
                                               dc__event_callback_t* due);
// Drops the references a finished command holds and recycles it (lock
// held). Releasing objects here is safe: a command's stream keeps the
// context alive, and the context's lock is only ever taken after the
// scheduler's.
DC_INTERNAL void dc__cmd_free_locked(dc__scheduler_t* sched, dc__cmd_t* cmd);
// Takes |stream|, parked on the event its head waits for, off that
// event's waiter list (lock held; stream_cancel.c).
DC_INTERNAL void dc__stream_unpark_locked(dc_stream_t* stream);
// Takes every command of |stream| that has not started off its queue and
// chains them through ->next onto |*out|; returns how many. Lock held. The
// caller then calls dc__cancelled_free() without the lock, which poisons
// the events of cancelled records with DC_ERR_CANCELLED and frees the
// commands (stream_cancel.c).
DC_INTERNAL size_t dc__stream_cancel_locked(dc_stream_t* stream,
                                            dc__cmd_t** out);
DC_INTERNAL void dc__cancelled_free(dc__scheduler_t* sched, dc__cmd_t* list);
// Hands a command of |batch| back to the batch's owner (lock held).
DC_INTERNAL void dc__batch_command_done_locked(struct dc__batch_t* batch);
// Frees a released stream that has drained (no lock held).
DC_INTERNAL void dc__stream_free(dc_stream_t* stream);

// Reports |cmd| of |st| to telemetry as a span from |start| to |end| with
// |outcome| and |status| (a transfer that ran, with its bytes).
DC_INTERNAL void dc__stream_report(dc_stream_t* stream, const dc__cmd_t* cmd,
                                   dc__span_outcome_t outcome,
                                   dc_status_t status, uint64_t start,
                                   uint64_t end);
// Makes the streams parked on |event| ready again, to look at their
// waits anew (lock held): once a generation completes, or once its record
// is on the device, where a wait of a stream of that device can follow
// it without the host.
DC_INTERNAL void dc__event_wake_waiters_locked(dc_event_t* event);
// Completes generation |generation| of |event| with |status| (lock held):
// wakes the streams and host threads waiting for it, and moves the
// callbacks now due into |due| (at most DC_EVENT_CALLBACKS), to be run by
// dc__event_run_callbacks() after unlocking.
DC_INTERNAL size_t dc__event_complete_locked(dc_event_t* event,
                                             uint64_t generation,
                                             dc_status_t status,
                                             const char* message,
                                             dc__event_callback_t* due);
DC_INTERNAL void dc__event_run_callbacks(dc_event_t* event,
                                         const dc__event_callback_t* due,
                                         size_t count);
// Whether generation |generation| of |event| has completed (lock held).
DC_INTERNAL bool dc__event_done_locked(const dc_event_t* event,
                                       uint64_t generation);
// Queues a new generation of |event| and returns it; 0 when out of memory
// (lock held).
DC_INTERNAL uint64_t dc__event_new_generation_locked(dc_event_t* event);
// Makes room for |count| pending generations (lock held).
DC_INTERNAL bool dc__event_reserve_locked(dc_event_t* event, uint32_t count);
// The outcome of completed generation |generation| (lock held): DC_OK, or
// its error with the message into the caller's dc_last_error().
DC_INTERNAL dc_status_t dc__event_outcome_locked(const dc_event_t* event,
                                                 uint64_t generation);

// Waits on the scheduler's done_cv (lock held) until |done(arg)| is true
// or |timeout_ns| passes (DC_TIMEOUT_INFINITE: never; 0: no wait).
// Returns DC_OK or DC_ERR_DEADLINE_EXCEEDED, setting no message.
DC_INTERNAL dc_status_t dc__wait_locked(dc__scheduler_t* sched,
                                        bool (*done)(void* arg), void* arg,
                                        uint64_t timeout_ns);

// How long a host thread polls before it sleeps in a wait: a command that
// finishes within it costs no wake-up.
#define DC_HOST_SPIN_NS 20000u

// Polls |done(arg)| for at most |spin_ns| (and |timeout_ns|) without any
// lock; returns whether it became true. A hint for the locked wait after.
DC_INTERNAL bool dc__poll_ns(bool (*done)(const void* arg), const void* arg,
                             uint64_t spin_ns, uint64_t timeout_ns);


// The event pools of |device|, which its scheduler holds (event.c).
DC_INTERNAL dc__event_pool_t* dc__event_pool_of(dc_device_t* device,
                                                bool timing);
DC_INTERNAL void dc__event_pool_deinit(dc__event_pool_t* pool);

#endif  // DC_STREAM_INTERNAL_H_

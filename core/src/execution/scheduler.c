// scheduler.c: the stream threads: which stream runs next, running its
// head command, and what follows a command (events, failures, wake-ups).
// See stream_internal.h for the locking rules.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "buffer_internal.h"
#include "fault_internal.h"
#include "stream_internal.h"
#include "telemetry_internal.h"

// An idle stream thread polls for new work this long before it sleeps, so
// that commands queued back to back do not each pay a wake-up.
#define SPIN_NS 50000u
// Commands kept for reuse, by size class (0, 2, 4 or 8 inline arguments:
// about 0.3, 0.6, 1 and 1.7 KiB), up to CMD_CACHE_BYTES in all: enough
// for a stream that keeps 10,000 dispatches of a few arguments queued
// to take every command from the free lists. Only commands that were
// queued at once are ever kept, so a program that never queues deep
// keeps little.
static const size_t kClassArgs[DC_CMD_CLASSES] = {0, 2, 4,
                                                  DC_CMD_MAX_INLINE_ARGS};
#define CMD_CACHE_BYTES ((size_t)16 << 20)

static size_t class_of(size_t arg_count) {
  size_t c = 0;
  while (c + 1 < DC_CMD_CLASSES && kClassArgs[c] < arg_count) ++c;
  return c;
}

static size_t cmd_bytes(size_t inline_capacity) {
  return offsetof(dc__cmd_t, inline_args) + inline_capacity * sizeof(dc_arg_t);
}

// Set on a stream thread whose scheduler was destroyed under it (the last
// object of the context went away on that thread): it must exit at once.
static _Thread_local bool tls_orphaned;
// The stream whose command this thread is running, if any.
static _Thread_local dc_stream_t* tls_current_stream;

static const char kNoMessage[] = "\x01(no message)";

// Schedulers that cancel tokens search (tokens are not tied to one
// context).
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static dc__scheduler_t* registry;

static int rank_of(dc_priority_t p) {
  return p == DC_PRIORITY_HIGH ? 0 : p == DC_PRIORITY_LOW ? 2 : 1;
}

//===-- Ready lists -----------------------------------------------------===//

// Puts |st| on its ready list if it has work and nobody runs it. |lookers|
// threads besides the polling ones will look for work at once (a stream
// thread putting back the stream it just ran), so they need no wake-up.
static void make_ready_for(dc__scheduler_t* s, dc_stream_t* st,
                           unsigned lookers) {
  if (st->ready || st->running || st->blocked || st->head == NULL) return;
  int r = rank_of(st->priority);
  st->ready = true;
  st->ready_next = NULL;
  if (s->ready_tail[r]) {
    s->ready_tail[r]->ready_next = st;
  } else {
    s->ready_head[r] = st;
  }
  s->ready_tail[r] = st;
  unsigned ready =
      atomic_fetch_add_explicit(&s->ready_count, 1u, memory_order_release) +
      1u;
  // A spinning thread will take it; wake a sleeper only for the rest.
  if (s->sleeping > 0 && ready > s->spinning + lookers) {
    pthread_cond_signal(&s->work_cv);
  }
}

static void make_ready(dc__scheduler_t* s, dc_stream_t* st) {
  make_ready_for(s, st, 0);
}

void dc__stream_make_ready_locked(dc_stream_t* st) {
  make_ready(st->sched, st);
}

// The first stream of the highest non-empty rank; equal ranks take turns
// because a stream goes to the back of its list after each command.
// A stream that dc_stream_cancel() emptied while it waited on a list is
// dropped here.
static dc_stream_t* pop_ready(dc__scheduler_t* s) {
  for (int r = 0; r < 3; ++r) {
    while (s->ready_head[r] != NULL) {
      dc_stream_t* st = s->ready_head[r];
      s->ready_head[r] = st->ready_next;
      if (s->ready_head[r] == NULL) s->ready_tail[r] = NULL;
      st->ready = false;
      atomic_fetch_sub_explicit(&s->ready_count, 1u, memory_order_relaxed);
      // (A stream a host thread is finishing is left to it: see
      // dc__stream_help_locked.)
      if (st->head != NULL && !st->running) return st;
    }
  }
  return NULL;
}

// Wakes the host threads waiting for |st| to drain up to a command that
// has now finished (lock held). Each waiter sets wake_at to its target,
// so that finishing commands wakes nobody until one is reached.
static void wake_stream_waiters(dc__scheduler_t* s, dc_stream_t* st) {
  if (st->head == NULL || st->head->sequence > st->wake_at) {
    st->wake_at = UINT64_MAX;
    pthread_cond_broadcast(&s->done_cv);
  }
  if ((s->queued == 0 && s->drain_waiters > 0) || s->progress_waiters > 0) {
    pthread_cond_broadcast(&s->done_cv);
  }
}

//===-- Commands --------------------------------------------------------===//

dc__cmd_t* dc__cmd_new(dc__scheduler_t* s, size_t arg_count) {
  size_t c = class_of(arg_count);
  dc__cmd_t* cmd = s->free_cmds[c];
  if (cmd != NULL) {
    s->free_cmds[c] = cmd->next;
    s->free_cmd_bytes -= cmd_bytes(kClassArgs[c]);
  } else {
    cmd = dc_allocator_malloc(s->ctx->allocator, cmd_bytes(kClassArgs[c]));
    if (cmd == NULL) return NULL;
  }
  // The inline argument storage is written only when used.
  memset(cmd, 0, offsetof(dc__cmd_t, inline_args));
  cmd->inline_capacity = kClassArgs[c];
  return cmd;
}

void dc__cmd_free_locked(dc__scheduler_t* s, dc__cmd_t* cmd) {
  dc_allocator_t a = s->ctx->allocator;
  dc_cancel_token_release(cmd->token);
  cmd->token = NULL;
  if (cmd->batch != NULL) {  // the batch keeps it for the next submission
    dc__batch_command_done_locked(cmd->batch);
    return;
  }
  switch (cmd->kind) {
    case DC_CMD_DISPATCH:
      dc__args_drop(a, cmd->u.dispatch.args, cmd->u.dispatch.arg_count);
      if (cmd->u.dispatch.args != cmd->inline_args) {
        dc_allocator_free(a, cmd->u.dispatch.args,
                          cmd->u.dispatch.arg_count * sizeof(dc_arg_t));
      }
      dc_kernel_release(cmd->u.dispatch.kernel);
      break;
    case DC_CMD_COPY:
    case DC_CMD_WRITE:
    case DC_CMD_READ:
    case DC_CMD_FILL:
      dc_buffer_release(cmd->u.transfer.dst);
      dc_buffer_release(cmd->u.transfer.src);
      break;
    case DC_CMD_RECORD:
    case DC_CMD_WAIT:
      dc_event_release(cmd->u.event.event);
      break;
    case DC_CMD_HOST:
    case DC_CMD_TASK:
      break;
  }
  size_t c = class_of(cmd->inline_capacity);
  size_t bytes = cmd_bytes(cmd->inline_capacity);
  if (s->free_cmd_bytes + bytes <= CMD_CACHE_BYTES) {
    cmd->next = s->free_cmds[c];
    s->free_cmds[c] = cmd;
    s->free_cmd_bytes += bytes;
  } else {
    dc_allocator_free(a, cmd, cmd_bytes(cmd->inline_capacity));
  }
}

// Appends |cmd| to |st| (lock held) without making the stream ready.
static void link_cmd(dc_stream_t* st, dc__cmd_t* cmd) {
  cmd->sequence = ++st->next_sequence;
  if (st->token != NULL && cmd->token == NULL) {
    cmd->token = st->token;
    dc_cancel_token_retain(cmd->token);
  }
  cmd->next = NULL;
  if (st->tail) {
    st->tail->next = cmd;
  } else {
    st->head = cmd;
  }
  st->tail = cmd;
  ++st->queued;
  ++st->sched->queued;
  ++st->stats.submitted;
}

// A command that a thread must deal with came to |st| (lock held).
static void hand_over(dc__scheduler_t* s, dc_stream_t* st) {
  make_ready(s, st);
  dc__stream_hurry_locked(st);  // its thread finishes the device's first
}

static void mark_behind_device_work(dc_stream_t* st, dc__cmd_t* cmd);

void dc__stream_push(dc_stream_t* st, dc__cmd_t* cmd) {
  link_cmd(st, cmd);
  mark_behind_device_work(st, cmd);
  hand_over(st->sched, st);
}

static const char* cmd_name(const dc__cmd_t* cmd) {
  switch (cmd->kind) {
    case DC_CMD_DISPATCH: return dc_kernel_name(cmd->u.dispatch.kernel);
    case DC_CMD_COPY: return "copy";
    case DC_CMD_WRITE: return "write";
    case DC_CMD_READ: return "read";
    case DC_CMD_FILL: return "fill";
    case DC_CMD_HOST: return "host callback";
    case DC_CMD_RECORD: return "record event";
    case DC_CMD_WAIT: return "wait for event";
    case DC_CMD_TASK: return cmd->u.task.ops->name(cmd->u.task.task);
  }
  return "command";
}

static dc__span_kind_t span_kind(dc__cmd_kind_t kind) {
  switch (kind) {
    case DC_CMD_DISPATCH: return DC_SPAN_KERNEL;
    case DC_CMD_FILL: return DC_SPAN_FILL;
    case DC_CMD_HOST: return DC_SPAN_HOST;
    case DC_CMD_RECORD: return DC_SPAN_RECORD;
    case DC_CMD_WAIT: return DC_SPAN_WAIT;
    case DC_CMD_TASK: return DC_SPAN_HOST;  // only when not run (settled)
    default: return DC_SPAN_COPY;
  }
}

static uint64_t transfer_bytes(const dc__cmd_t* cmd) {
  const dc_buffer_t* b =
      cmd->u.transfer.dst ? cmd->u.transfer.dst : cmd->u.transfer.src;
  return (uint64_t)cmd->u.transfer.count * dc_dtype_size(dc_buffer_dtype(b));
}

void dc__stream_report(dc_stream_t* st, const dc__cmd_t* cmd,
                       dc__span_outcome_t outcome, dc_status_t status,
                       uint64_t start, uint64_t end) {
  dc__span_t span = {
      .kind = span_kind(cmd->kind),
      .outcome = outcome,
      .status = status,
      .name = cmd_name(cmd),
      .stream_id = st->id,
      .stream_label = st->label,
      .start_ns = start,
      .end_ns = end,
      .kernel = cmd->kind == DC_CMD_DISPATCH ? cmd->u.dispatch.kernel : NULL,
  };
  if (cmd->kind >= DC_CMD_COPY && cmd->kind <= DC_CMD_FILL &&
      outcome == DC_SPAN_RAN) {
    span.bytes = transfer_bytes(cmd);
  }
  dc__telemetry_span(st->sched->ctx, &span);
}

dc_status_t dc__call_host_fn(dc_host_fn_t fn, void* user_data) {
  // A function that fails without a message of its own still gets one.
  // (A plain copy: this runs for every host op.)
  dc__error_set_raw(kNoMessage);
  dc_status_t st = fn(user_data);
  if (st != DC_OK && strcmp(dc_last_error(), kNoMessage) == 0) {
    dc_set_error(st, "a host callback failed with %s (it gave no message)",
                 dc_status_name(st));
  }
  return st;
}

// Runs a command that does real work, without the lock.
static dc_status_t execute(dc__cmd_t* cmd) {
  switch (cmd->kind) {
    case DC_CMD_DISPATCH:
      return dc__kernel_run(cmd->u.dispatch.kernel, &cmd->u.dispatch.prepared,
                            cmd->u.dispatch.args);
    case DC_CMD_COPY:
      return dc__buffer_copy(cmd->u.transfer.dst, cmd->u.transfer.dst_offset,
                            cmd->u.transfer.src, cmd->u.transfer.src_offset,
                            cmd->u.transfer.count);
    case DC_CMD_WRITE:
      return dc__buffer_write(cmd->u.transfer.dst, cmd->u.transfer.dst_offset,
                             cmd->u.transfer.host, cmd->u.transfer.count);
    case DC_CMD_READ:
      return dc__buffer_read(cmd->u.transfer.src, cmd->u.transfer.src_offset,
                            cmd->u.transfer.host, cmd->u.transfer.count);
    case DC_CMD_FILL:
      return dc__buffer_fill(cmd->u.transfer.dst, cmd->u.transfer.dst_offset,
                            cmd->u.transfer.count, cmd->u.transfer.value);
    case DC_CMD_HOST:
      return dc__call_host_fn(cmd->u.host.fn, cmd->u.host.user_data);
    default:  // DC_CMD_TASK runs in run_head, timing itself
      break;
  }
  return DC_OK;
}

//===-- Finishing commands ----------------------------------------------===//

// Takes the head command off |st| (lock held) and counts it.
static dc__cmd_t* pop_head(dc_stream_t* st) {
  dc__cmd_t* cmd = st->head;
  st->head = cmd->next;
  if (st->head == NULL) st->tail = NULL;
  --st->queued;
  --st->sched->queued;
  ++st->sched->finished;
  if (st->in_flight > 0) {  // it was on the device queue
    --st->in_flight;
    --st->on_device;
    if (st->in_flight == 0) st->flight_tail = NULL;
  }
  cmd->next = NULL;
  atomic_store_explicit(&st->done_seq, cmd->sequence, memory_order_release);
  return cmd;
}

// Fails |st| with |status| and |message| (lock held). Only the first
// failure sticks; it is counted and logged once, where it happened.
static void fail_stream(dc_stream_t* st, dc_status_t status,
                        const char* message) {
  if (st->error != DC_OK) return;
  st->error = status;
  dc__strlcpy(st->message, message, sizeof(st->message));
}

// After a command left the head of |st| (lock held): the stream goes back
// on its ready list, or, when it is drained and released, is handed back
// for freeing.
static bool after_command(dc__scheduler_t* s, dc_stream_t* st) {
  st->running = false;
  wake_stream_waiters(s, st);
  if (st->head != NULL) {
    make_ready_for(s, st, 1);
    return false;
  }
  return st->released;
}

// Completes the record |cmd| (lock held) with |status|. Due callbacks are
// returned to run after unlocking.
static size_t complete_record(dc__cmd_t* cmd, dc_status_t status,
                              const char* message,
                              dc__event_callback_t* due) {
  return dc__event_complete_locked(cmd->u.event.event, cmd->u.event.generation,
                                   status, message, due);
}

static bool waits_on_device(const dc_stream_t* st, const dc__cmd_t* cmd);

// What a stream thread does with the head command of its stream.
typedef enum settle_e {
  SETTLED,  // finished without a thread (a record, a wait, or not run)
  PARKED,   // waits for an event: the stream leaves the thread
  RUN,      // real work: the thread runs it
} settle_t;

// Deals with the head command of |st| as far as it can without running it
// (lock held): cancelled or skipped commands, records and waits. Records
// move the callbacks they make due into |due|.
static settle_t settle_head(dc_stream_t* st, dc__event_callback_t* due,
                            size_t* due_count) {
  dc__cmd_t* cmd = st->head;
  // The common case first, without reading the clock.
  if ((cmd->kind == DC_CMD_TASK || cmd->kind == DC_CMD_DISPATCH) &&
      (cmd->token == NULL || !atomic_load(&cmd->token->cancelled)) &&
      st->error == DC_OK) {
    return RUN;
  }
  uint64_t now = dc__now_ns();
  if (cmd->token != NULL && atomic_load(&cmd->token->cancelled)) {
    if (cmd->kind == DC_CMD_RECORD) {
      *due_count = complete_record(cmd, DC_ERR_CANCELLED,
                                   "cancelled by its cancel token", due);
    }
    ++st->stats.cancelled;
    dc__stream_report(st, cmd, DC_SPAN_CANCELLED, DC_ERR_CANCELLED, now, now);
    return SETTLED;
  }
  if (st->error != DC_OK) {
    if (cmd->kind == DC_CMD_RECORD) {
      *due_count = complete_record(cmd, st->error, st->message, due);
    }
    ++st->stats.skipped;
    dc__stream_report(st, cmd, DC_SPAN_SKIPPED, st->error, now, now);
    return SETTLED;
  }
  if (cmd->kind == DC_CMD_RECORD) {
    *due_count = complete_record(cmd, DC_OK, "", due);
    ++st->stats.completed;
    dc__stream_report(st, cmd, DC_SPAN_RAN, DC_OK, now, now);
    return SETTLED;
  }
  if (cmd->kind != DC_CMD_WAIT) return RUN;
  dc_event_t* ev = cmd->u.event.event;
  if (!dc__event_done_locked(ev, cmd->u.event.generation)) {
    if (waits_on_device(st, cmd)) return RUN;  // run_queued queues it
    st->blocked = true;
    st->blocked_since_ns = now;
    st->wait_next = ev->waiters;
    ev->waiters = st;
    return PARKED;
  }
  uint64_t start = st->blocked_since_ns ? st->blocked_since_ns : now;
  st->blocked_since_ns = 0;
  dc_status_t outcome = dc__event_outcome_locked(ev, cmd->u.event.generation);
  if (outcome != DC_OK) {
    // The error travels on with its original status and message. It was
    // counted where it happened; here the wait counts as skipped work.
    fail_stream(st, outcome, ev->message);
    ++st->stats.skipped;
    dc__stream_report(st, cmd, DC_SPAN_SKIPPED, outcome, start, now);
  } else {
    ++st->stats.completed;
    dc__stream_report(st, cmd, DC_SPAN_RAN, DC_OK, start, now);
  }
  return SETTLED;
}

size_t dc__stream_record_now_locked(dc_stream_t* st, dc__cmd_t* cmd,
                                   dc__event_callback_t* due) {
  dc__scheduler_t* s = st->sched;
  cmd->sequence = ++st->next_sequence;
  if (st->token != NULL) {
    cmd->token = st->token;
    dc_cancel_token_retain(cmd->token);
  }
  ++st->stats.submitted;
  cmd->next = NULL;
  st->head = st->tail = cmd;
  ++st->queued;
  ++s->queued;
  size_t n = 0;
  settle_head(st, due, &n);  // a record always settles
  dc__cmd_free_locked(s, pop_head(st));
  wake_stream_waiters(s, st);
  return n;
}

// Reports the failure of |cmd| on |st| where it happened: telemetry, the
// log and the device's health (a host callback's failure is not the
// device's). Called without the lock.
static void note_failure(dc__scheduler_t* s, dc_stream_t* st,
                         const dc__cmd_t* cmd, dc_status_t status) {
  dc__telemetry_error(s->ctx, status, dc_last_error());
  DC_LOG(s->ctx, DC_LOG_ERROR, "stream", "stream %u '%s': %s failed: %s",
         st->id, st->label, cmd_name(cmd), dc_last_error());
  if (cmd->kind != DC_CMD_HOST) {
    dc__device_failed(st->device, status, dc_last_error());
  }
}

// Runs the head command of |st|, which the calling thread has claimed
// (st->running keeps it at the head). Enters and leaves with the lock.
static void run_head(dc__scheduler_t* s, dc_stream_t* st) {
  dc__cmd_t* cmd = st->head;
  pthread_mutex_unlock(&s->lock);
  tls_current_stream = st;
  uint64_t start, end;
  dc_status_t status = DC_OK;
  if (cmd->kind == DC_CMD_TASK) {
    // A task times, reports and contains its own failure.
    cmd->u.task.ops->run(cmd->u.task.task, st, &start, &end);
  } else {
    start = dc__now_ns();
    status = execute(cmd);
    end = dc__now_ns();
  }
  tls_current_stream = NULL;
  if (status != DC_OK) note_failure(s, st, cmd, status);
  if (cmd->kind != DC_CMD_TASK) {
    dc__stream_report(st, cmd, DC_SPAN_RAN, status, start, end);
  }
  pthread_mutex_lock(&s->lock);
  st->stats.busy_ns += end - start;
  if (status != DC_OK) {
    fail_stream(st, status, dc_last_error());
    ++st->stats.failed;
  } else {
    ++st->stats.completed;
  }
}

//===-- Queued dispatches and copies ------------------------------------===//
//
// On a device with queues (dc/backend.h), a stream's consecutive dispatches
// (and the copies the device can queue: dc__buffer_copy_queueable, between
// its own buffers or with host memory already pinned for it, while no
// fault rule is armed) go onto the stream's device queue without a wait
// for each, and stay at the head of the stream until the device has
// finished them, so that its
// completion (syncs, waits, records, callbacks) never runs ahead of the
// device. The first |in_flight| commands of a stream are on the queue or
// being put there; one thread at a time puts commands there
// (|launching|), outside the lock, in stream order.
//
// Who puts them there: the thread that calls dc_stream_dispatch, when
// everything ahead of its dispatch on the stream is on the queue already
// (or nothing is ahead), so that a stream fed faster than the device runs
// needs no stream thread to launch its work; otherwise a stream thread,
// which takes the run of commands that can go at the head (launch_more).
// Who finishes them: a stream thread, or a host thread in dc_stream_sync
// when the stream holds nothing else (dc__stream_help_locked). It waits
// once for the queue (finish) and takes off every command that was on the
// device when it started to wait; dispatches launched meanwhile are
// finished by the next round.
//
// With device events, a run also takes in waits for events of the device
// whose record is already on a queue (the device waits: the run goes on),
// and records, which mark the event on the device; a record ends what a
// stream thread launches, and completes on the host once the device has
// passed it. A run's wait finishes once its record has completed on the
// host, and fails the stream if that record failed. A stream parked on a
// wait whose record was not on a queue yet is woken when the record gets
// there, and its wait then starts a run of its own (settle_head).

// The most commands of one stream on its device queue at once: an
// in-order queue keeps them in order, so this only bounds how many
// commands one finish covers (and keeps a stream fed without pause from
// holding its commands for ever).
#define QUEUE_RUN_MAX 65536u

// A stream thread that finds every command of its stream on the device
// queue (a host thread feeding it dispatches) waits this long before it
// waits for the queue, unless a host thread waits for the stream or
// something else comes: it then finishes many in one round instead of
// waking whenever the device catches up.
#define DAWDLE_NS 200000u

// What a command can be in a run (lock held).
typedef enum part_e {
  PART_NONE,      // not in a run: the thread deals with it alone
  PART_DISPATCH,
  PART_WAIT,      // a wait the device can do, or one already satisfied
  PART_RECORD,    // a record the device can mark; it ends the run
} part_t;

static bool cancelled(const dc__cmd_t* cmd) {
  return cmd->token != NULL && atomic_load(&cmd->token->cancelled);
}

// Whether |cmd| can go on the stream's device queue: a dispatch not being
// autotuned, or a copy the device can queue (dc__buffer_copy_queueable)
// while no fault rule is armed (the rules draw on copies run by the host).
static bool queueable(const dc_stream_t* st, const dc__cmd_t* cmd) {
  if (cmd == NULL || st->device->vtable->queues == NULL || cancelled(cmd)) {
    return false;
  }
  if (cmd->kind == DC_CMD_DISPATCH) {
    return cmd->u.dispatch.prepared.tuning < 0;
  }
  return cmd->kind == DC_CMD_COPY && dc__fault_none(st->sched->ctx) &&
         dc__buffer_copy_queueable(
             cmd->u.transfer.dst, cmd->u.transfer.dst_offset,
             cmd->u.transfer.src, cmd->u.transfer.src_offset,
             cmd->u.transfer.count, st->device);
}

// Puts |cmd|, which queueable() allowed, on |queue|, noting when.
static dc_status_t put_on_queue(dc_stream_t* st, dc__cmd_t* cmd,
                                dc_device_queue_t* queue) {
  cmd->queued_ns = dc__now_ns();
  if (cmd->kind == DC_CMD_DISPATCH) {
    return dc__kernel_queue(cmd->u.dispatch.kernel, &cmd->u.dispatch.prepared,
                            cmd->u.dispatch.args, queue);
  }
  return dc__buffer_copy_queue(cmd->u.transfer.dst, cmd->u.transfer.dst_offset,
                               cmd->u.transfer.src, cmd->u.transfer.src_offset,
                               cmd->u.transfer.count, st->device, queue);
}

void dc__stream_push_dispatch(dc_stream_t* st, dc__cmd_t* cmd) {
  dc__scheduler_t* s = st->sched;
  link_cmd(st, cmd);
  // Only right behind the commands on the queue, on a healthy stream
  // whose queue exists, and never with fault rules armed (a launch tried
  // twice would draw twice on them). A GPU leaves the host's cores free:
  // there the caller launches only on an idle stream, and the stream
  // thread launches what follows while the caller queues more (measured:
  // launching every dispatch on the caller made 10,000 queued CUDA
  // dispatches 1.25x slower on an H200 host). On a CPU device the host's
  // cores run the kernels, and waking a thread to launch costs more than
  // launching (docs/benchmarks.md, OpenCL device).
  bool gpu = st->device->info.kind == DC_DEVICE_KIND_GPU;
  bool direct = st->queue != NULL && !st->launching &&
                st->in_flight + 1 == st->queued &&
                (!gpu || st->in_flight == 0) &&
                st->in_flight < QUEUE_RUN_MAX && st->error == DC_OK &&
                queueable(st, cmd) &&
                dc__fault_none(s->ctx);
  if (!direct) {
    hand_over(s, st);
    return;
  }
  dc__cmd_t* before = st->flight_tail;
  ++st->in_flight;  // from here on, cancelling leaves it be
  st->flight_tail = cmd;
  st->launching = true;
  dc_device_queue_t* queue = st->queue;
  pthread_mutex_unlock(&s->lock);
  dc_status_t status = put_on_queue(st, cmd, queue);
  pthread_mutex_lock(&s->lock);
  st->launching = false;
  if (status == DC_OK) {
    ++st->on_device;
  } else {
    // A refused launch is left to a stream thread, which tries it again
    // and reports the failure where streams report failures. The
    // commands before it are still on the queue (nobody finishes a
    // command that is not on the device yet), so |before| is too.
    --st->in_flight;
    st->flight_tail = st->in_flight > 0 ? before : NULL;
  }
  // Somebody finishes it: a stream thread, unless one runs the stream.
  make_ready(s, st);
}

static part_t part_of(const dc_stream_t* st, const dc__cmd_t* cmd) {
  if (queueable(st, cmd)) return PART_DISPATCH;
  if (cmd == NULL || cancelled(cmd) || st->error != DC_OK ||
      st->device->vtable->events == NULL ||
      (cmd->kind != DC_CMD_WAIT && cmd->kind != DC_CMD_RECORD) ||
      cmd->u.event.event->device != st->device) {
    return PART_NONE;
  }
  if (cmd->kind == DC_CMD_RECORD) return PART_RECORD;
  if (cmd->u.event.host_only) return PART_NONE;
  const dc_event_t* ev = cmd->u.event.event;
  uint64_t generation = cmd->u.event.generation;
  if (dc__event_done_locked(ev, generation)) {
    return dc__event_outcome_locked(ev, generation) == DC_OK ? PART_WAIT
                                                            : PART_NONE;
  }
  return ev->device_generation == generation ? PART_WAIT : PART_NONE;
}

// Puts |cmd|'s record or wait on the stream's queue (lock held, so that a
// wait and a later record of one event reach the device in the order the
// engine saw them). Returns false when the device declined: the command
// is then left to the host.
static bool mark_on_device(dc_stream_t* st, dc__cmd_t* cmd) {
  dc_device_t* device = st->device;
  dc_event_t* ev = cmd->u.event.event;
  if (cmd->kind == DC_CMD_WAIT) {
    if (dc__event_done_locked(ev, cmd->u.event.generation)) return true;
    if (device->vtable->events->wait(device, st->queue, ev->device_event) ==
        DC_OK) {
      return true;
    }
    cmd->u.event.host_only = true;  // not asked again: the host waits
    return false;
  }
  if (ev->device_event == NULL &&
      device->vtable->events->create(device, &ev->device_event) != DC_OK) {
    ev->device_event = NULL;
    return false;
  }
  if (device->vtable->events->record(device, st->queue, ev->device_event) !=
      DC_OK) {
    return false;
  }
  ev->device_generation = cmd->u.event.generation;
  // A stream of the device parked on this record can now wait for it on
  // the device, without waiting for the host to see it complete.
  dc__event_wake_waiters_locked(ev);
  return true;
}

// Whether the wait |cmd|, at the head of |st| with nothing in flight, can
// go on the stream's queue: its record is on the device already.
static bool waits_on_device(const dc_stream_t* st, const dc__cmd_t* cmd) {
  return part_of(st, cmd) == PART_WAIT;
}

// Counts |cmd|, the command after the stream's in-flight ones, in them.
static void claim(dc_stream_t* st, dc__cmd_t* cmd) {
  ++st->in_flight;
  st->flight_tail = cmd;
}

// A record or wait queued right behind commands on the device queue (put
// there by the calling thread, see dc__stream_push_dispatch) goes on the
// queue at once too, as a stream thread would have put it there had it
// launched them (lock held).
static void mark_behind_device_work(dc_stream_t* st, dc__cmd_t* cmd) {
  if (st->queue == NULL || st->launching || st->in_flight == 0 ||
      st->in_flight + 1 != st->queued || st->in_flight >= QUEUE_RUN_MAX) {
    return;
  }
  part_t part = part_of(st, cmd);
  if ((part == PART_WAIT || part == PART_RECORD) && mark_on_device(st, cmd)) {
    claim(st, cmd);  // cancelling leaves it be
    ++st->on_device;
  }
}

// Puts the commands that follow the stream's in-flight ones on the device
// queue, as many as can go at once, for a thread that holds |launching|.
// Returns whether the run may go on (false: nothing went, a record went,
// or a launch was refused: that command is left in |refused|, its
// failure in |status|, and is no longer in flight). Enters and leaves with
// the lock.
static bool launch_more(dc__scheduler_t* s, dc_stream_t* st,
                        dc__cmd_t** refused, dc_status_t* status) {
  // A failed stream's later commands are skipped by a stream thread.
  if (st->in_flight >= QUEUE_RUN_MAX || st->error != DC_OK) return false;
  dc__cmd_t* before = st->flight_tail;
  dc__cmd_t* first = before != NULL ? before->next : st->head;
  part_t part = part_of(st, first);
  if (part == PART_WAIT || part == PART_RECORD) {
    if (!mark_on_device(st, first)) return false;
    claim(st, first);  // cancelling leaves it be
    ++st->on_device;
    return part == PART_WAIT;
  }
  size_t n = 0;
  for (dc__cmd_t* c = first;
       st->in_flight < QUEUE_RUN_MAX && queueable(st, c); c = c->next) {
    claim(st, c);  // from here on, cancelling leaves them be
    ++n;
  }
  if (n == 0) return false;
  pthread_mutex_unlock(&s->lock);
  dc__cmd_t* cmd = first;
  size_t went = 0;
  for (; went < n; ++went) {
    if (went > 0) cmd = cmd->next;  // links inside the claimed run are stable
    *status = put_on_queue(st, cmd, st->queue);
    if (*status != DC_OK) {
      *refused = cmd;
      break;
    }
    before = cmd;
  }
  pthread_mutex_lock(&s->lock);
  st->on_device += went;
  if (went < n) {  // the refused command and those after it go back
    st->in_flight -= n - went;
    st->flight_tail = st->in_flight > 0 ? before : NULL;
    return false;
  }
  return true;
}

// Takes the dispatch or copy at the head of |st| off as finished at |end|
// (lock held): failed with |status| and |message| unless |status| is
// DC_OK, or skipped when a wait before it in the run failed the stream.
static void finish_queued(dc__scheduler_t* s, dc_stream_t* st,
                          dc_status_t status, const char* message,
                          uint64_t end) {
  dc__cmd_t* cmd = st->head;
  uint64_t start = cmd->queued_ns;
  if (st->error != DC_OK && status == DC_OK) {
    dc__stream_report(st, cmd, DC_SPAN_SKIPPED, st->error, start, end);
    ++st->stats.skipped;
  } else {
    dc__stream_report(st, cmd, DC_SPAN_RAN, status, start, end);
    if (status != DC_OK) {
      fail_stream(st, status, message);
      ++st->stats.failed;
    } else {
      ++st->stats.completed;
    }
  }
  dc__cmd_free_locked(s, pop_head(st));
}

typedef struct generation_t {
  const dc_event_t* event;
  uint64_t generation;
} generation_t;

static bool generation_done(void* arg) {
  const generation_t* g = arg;
  return dc__event_done_locked(g->event, g->generation);
}

// Takes the wait at the head of |st| off (lock held). The device has
// passed the record it waits for; the record may still be completing on
// the host (on the thread that ran it, which does nothing else before),
// and its outcome decides the stream's.
static void finish_wait(dc__scheduler_t* s, dc_stream_t* st, uint64_t end) {
  dc__cmd_t* cmd = st->head;
  dc_event_t* ev = cmd->u.event.event;
  generation_t g = {ev, cmd->u.event.generation};
  ++ev->host_waiters;
  dc__wait_locked(s, generation_done, &g, DC_TIMEOUT_INFINITE);
  --ev->host_waiters;
  dc_status_t outcome = dc__event_outcome_locked(ev, g.generation);
  if (outcome != DC_OK) {
    fail_stream(st, outcome, ev->message);
    ++st->stats.skipped;
    dc__stream_report(st, cmd, DC_SPAN_SKIPPED, outcome, end, end);
  } else {
    ++st->stats.completed;
    dc__stream_report(st, cmd, DC_SPAN_RAN, DC_OK, end, end);
  }
  dc__cmd_free_locked(s, pop_head(st));
}

// Takes the finished head command of |st| off (lock held), after running
// the |due| callbacks its record made due, without the lock.
static void pop_finished(dc__scheduler_t* s, dc_stream_t* st,
                         const dc__event_callback_t* due, size_t due_count) {
  if (due_count > 0) {  // the record stays at the head until they ran
    dc_event_t* ev = st->head->u.event.event;
    pthread_mutex_unlock(&s->lock);
    dc__event_run_callbacks(ev, due, due_count);
    pthread_mutex_lock(&s->lock);
  }
  // The command lets go of its objects before anyone learns that it has
  // finished, so that a host thread returning from a wait may count on
  // them being released.
  dc__cmd_free_locked(s, pop_head(st));
}

// Completes a record at the head of |st| (lock held) and takes it off.
static void settle_and_pop(dc__scheduler_t* s, dc_stream_t* st) {
  dc__event_callback_t due[DC_EVENT_CALLBACKS];
  size_t due_count = 0;
  settle_head(st, due, &due_count);
  pop_finished(s, st, due, due_count);
}

// Whether the thread running |st| should stop dawdling (lock held).
static bool hurried(void* arg) {
  const dc_stream_t* st = arg;
  const dc__scheduler_t* s = st->sched;
  return st->hurry || st->in_flight != st->queued || s->stopping ||
         s->drain_waiters > 0 || s->progress_waiters > 0;
}

void dc__stream_hurry_locked(dc_stream_t* st) {
  if (!st->dawdling || st->hurry) return;
  st->hurry = true;
  pthread_cond_broadcast(&st->sched->done_cv);
}

// Runs the commands at the head of |st| through the device queue (see
// above) for the thread that runs the stream: puts more there unless
// another thread is doing so, waits for those on the device, and takes
// them off. A launch the device refuses fails its own command; a failure
// found while waiting for the queue fails the last dispatch waited for.
// A stream thread (|dawdle|) may first wait a while for more (DAWDLE_NS).
// Enters and leaves with the lock.
static void run_queued(dc__scheduler_t* s, dc_stream_t* st, bool dawdle) {
  dc_device_t* device = st->device;
  dc__cmd_t* refused = NULL;
  dc_status_t status = DC_OK;
  char refusal[sizeof(st->message)], finish_message[sizeof(st->message)];
  uint64_t start = dc__now_ns();
  if (st->queue == NULL) {  // only a thread running the stream makes it
    pthread_mutex_unlock(&s->lock);
    dc_device_queue_t* queue = NULL;
    status = device->vtable->queues->create(device, st->priority, &queue);
    pthread_mutex_lock(&s->lock);  // dc__stream_push_dispatch reads it
    st->queue = queue;
    if (status != DC_OK) refused = st->head;  // not in flight
  }
  if (refused == NULL && !st->launching) {
    st->launching = true;
    tls_current_stream = st;
    while (launch_more(s, st, &refused, &status)) {
    }
    tls_current_stream = NULL;
    st->launching = false;
  }
  if (dawdle && st->on_device == st->queued && st->on_device > 0 &&
      !st->hurry && atomic_load(&s->ready_count) == 0) {
    st->dawdling = true;
    dc__wait_locked(s, hurried, st, DAWDLE_NS);
    st->dawdling = false;
  }
  st->hurry = false;
  // What is on the device now is finished by this wait; the commands
  // there are this thread's alone (nobody cancels or pops them).
  size_t n = st->on_device;
  dc__cmd_t* head = st->head;
  pthread_mutex_unlock(&s->lock);
  if (refused != NULL) {
    dc__strlcpy(refusal, dc_last_error(), sizeof(refusal));
  }
  dc_status_t finish =
      n > 0 ? device->vtable->queues->finish(device, st->queue) : DC_OK;
  uint64_t end = dc__now_ns();
  // The last dispatch or copy waited for answers for a failure found by
  // the wait.
  dc__cmd_t* blamed = NULL;
  if (finish != DC_OK) {
    dc__strlcpy(finish_message, dc_last_error(), sizeof(finish_message));
    dc__cmd_t* c = head;
    for (size_t i = 0; i < n; ++i) {
      if (c->kind == DC_CMD_DISPATCH || c->kind == DC_CMD_COPY) blamed = c;
      if (i + 1 < n) c = c->next;  // stable up to the last one waited for
    }
    note_failure(s, st, blamed ? blamed : head, finish);
  }
  if (refused != NULL) {
    dc__error_set_raw(refusal);
    note_failure(s, st, refused, status);
  }
  pthread_mutex_lock(&s->lock);
  for (size_t i = 0; i < n; ++i) {
    if (st->head->kind == DC_CMD_WAIT) {
      finish_wait(s, st, end);
    } else if (st->head->kind == DC_CMD_RECORD) {
      // Completed here, on this thread, so that the waits of other runs
      // on it never wait for a thread to be free.
      settle_and_pop(s, st);
    } else {
      bool failed = finish != DC_OK && st->head == blamed;
      finish_queued(s, st, failed ? finish : DC_OK, finish_message, end);
    }
  }
  // Nothing ahead of a refused command is left on the stream now.
  if (refused != NULL && st->head == refused) {
    finish_queued(s, st, status, refusal, end);
  }
  st->stats.busy_ns += end - start;
}

bool dc__stream_help_locked(dc_stream_t* st) {
  dc__scheduler_t* s = st->sched;
  if (st->running || st->released || st->launching || st->head == NULL ||
      st->on_device != st->queued) {
    return false;
  }
  st->running = true;  // a stream thread that pops it now leaves it be
  run_queued(s, st, false);
  st->running = false;
  wake_stream_waiters(s, st);
  make_ready(s, st);  // if more came meanwhile
  return true;
}

//===-- Stream threads --------------------------------------------------===//

// Waits for a ready stream (lock held on entry and exit). Returns NULL when
// the scheduler stops.
static dc_stream_t* next_stream(dc__scheduler_t* s) {
  for (;;) {
    if (s->stopping) return NULL;
    dc_stream_t* st = pop_ready(s);
    if (st != NULL) return st;
    // Poll a while without the lock before sleeping.
    ++s->spinning;
    pthread_mutex_unlock(&s->lock);
    uint64_t until = dc__now_ns() + SPIN_NS;
    while (atomic_load_explicit(&s->ready_count, memory_order_acquire) ==
               0u &&
           dc__now_ns() < until) {
    }
    pthread_mutex_lock(&s->lock);
    --s->spinning;
    if (s->stopping || atomic_load(&s->ready_count) != 0u) continue;
    ++s->sleeping;
    pthread_cond_wait(&s->work_cv, &s->lock);
    --s->sleeping;
  }
}

static void* stream_thread(void* arg) {
  dc__scheduler_t* s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    dc_stream_t* st = next_stream(s);
    if (st == NULL) break;
    dc__event_callback_t due[DC_EVENT_CALLBACKS];
    size_t due_count = 0;
    if (st->launching && st->on_device == 0) {
      continue;  // a host thread is launching: it makes the stream ready
    }
    st->running = true;
    // Commands on the device queue are finished through it, even if they
    // were cancelled or their stream failed since.
    settle_t what = st->in_flight > 0 ? RUN : settle_head(st, due, &due_count);
    if (what == PARKED) {
      st->running = false;
      continue;
    }
    // A wait that settle_head let run waits on the device.
    if (what == RUN && (st->in_flight > 0 || queueable(st, st->head) ||
                        st->head->kind == DC_CMD_WAIT)) {
      run_queued(s, st, true);  // takes its commands off itself
    } else {
      if (what == RUN) run_head(s, st);
      pop_finished(s, st, due, due_count);
    }
    if (after_command(s, st)) {
      pthread_mutex_unlock(&s->lock);
      dc__stream_free(st);
      if (tls_orphaned) return NULL;  // the context went away with it
      pthread_mutex_lock(&s->lock);
    }
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

dc_status_t dc__scheduler_grow(dc__scheduler_t* s) {
  uint32_t want = (uint32_t)DC_MIN(s->stream_count,
                                   (size_t)DC_MAX_STREAM_THREADS);
  while (s->thread_count < want) {
    int err = pthread_create(&s->threads[s->thread_count], NULL,
                             stream_thread, s);
    if (err != 0) {
      if (s->thread_count > 0) return DC_OK;  // fewer threads still work
      return DC_FAIL(DC_ERR_RESOURCE_EXHAUSTED,
                     "dc_stream_create: cannot start a stream thread: %s",
                     strerror(err));
    }
    ++s->thread_count;
  }
  return DC_OK;
}

//===-- Lifetime --------------------------------------------------------===//

dc_status_t dc__scheduler_create(dc_context_t* ctx, dc__scheduler_t** out) {
  dc__scheduler_t* s = dc_allocator_calloc(ctx->allocator, 1, sizeof(*s));
  if (s == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the stream scheduler");
  }
  s->ctx = ctx;
  pthread_mutex_init(&s->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&s->work_cv, NULL);
  pthread_cond_init(&s->done_cv, &attr);
  pthread_condattr_destroy(&attr);
  for (size_t d = 0; d < DC_MAX_DEVICES; ++d) {
    for (int t = 0; t < 2; ++t) {
      pthread_mutex_init(&s->event_pools[d][t].lock, NULL);
    }
  }
  pthread_mutex_lock(&registry_lock);
  s->registry_next = registry;
  registry = s;
  pthread_mutex_unlock(&registry_lock);
  *out = s;
  return DC_OK;
}

typedef struct progress_t {
  const dc__scheduler_t* sched;
  uint64_t finished;
} progress_t;

static bool made_progress(void* arg) {
  const progress_t* p = arg;
  return p->sched->finished != p->finished || p->sched->queued == 0;
}

bool dc__scheduler_wait_progress(dc__scheduler_t* s, uint64_t timeout_ns) {
  pthread_mutex_lock(&s->lock);
  bool busy = s->queued > 0;
  if (busy) {
    progress_t p = {s, s->finished};
    ++s->progress_waiters;
    dc__wait_locked(s, made_progress, &p, timeout_ns);
    --s->progress_waiters;
  }
  pthread_mutex_unlock(&s->lock);
  return busy;
}

void dc__scheduler_drain(dc__scheduler_t* s) {
  pthread_mutex_lock(&s->lock);
  ++s->drain_waiters;
  while (s->queued > 0) {
    pthread_cond_wait(&s->done_cv, &s->lock);
  }
  --s->drain_waiters;
  pthread_mutex_unlock(&s->lock);
}

void dc__scheduler_destroy(dc__scheduler_t* s) {
  if (s == NULL) return;
  pthread_mutex_lock(&registry_lock);
  for (dc__scheduler_t** p = &registry; *p != NULL; p = &(*p)->registry_next) {
    if (*p == s) {
      *p = s->registry_next;
      break;
    }
  }
  pthread_mutex_unlock(&registry_lock);
  pthread_mutex_lock(&s->lock);
  s->stopping = true;
  pthread_cond_broadcast(&s->work_cv);
  pthread_mutex_unlock(&s->lock);
  pthread_t self = pthread_self();
  for (uint32_t i = 0; i < s->thread_count; ++i) {
    if (pthread_equal(s->threads[i], self)) {
      pthread_detach(self);
      tls_orphaned = true;
    } else {
      pthread_join(s->threads[i], NULL);
    }
  }
  for (size_t c = 0; c < DC_CMD_CLASSES; ++c) {
    while (s->free_cmds[c] != NULL) {
      dc__cmd_t* next = s->free_cmds[c]->next;
      dc_allocator_free(s->ctx->allocator, s->free_cmds[c],
                        cmd_bytes(kClassArgs[c]));
      s->free_cmds[c] = next;
    }
  }
  for (size_t d = 0; d < DC_MAX_DEVICES; ++d) {
    for (int t = 0; t < 2; ++t) dc__event_pool_deinit(&s->event_pools[d][t]);
  }
  pthread_cond_destroy(&s->work_cv);
  pthread_cond_destroy(&s->done_cv);
  pthread_mutex_destroy(&s->lock);
  dc_allocator_free(s->ctx->allocator, s, sizeof(*s));
}

//===-- Cancellation by token -------------------------------------------===//

// Cancelling a token marks it; each stream thread then drops the
// token's commands as they reach the head of their stream, without running
// them (settle_head). Streams parked on an event behind such a command are
// woken here so that this happens at once.
void dc_cancel_token_cancel(dc_cancel_token_t* token) {
  if (!dc__is_cancel_token(token) || atomic_exchange(&token->cancelled, true)) {
    return;
  }
  pthread_mutex_lock(&registry_lock);
  for (dc__scheduler_t* s = registry; s != NULL; s = s->registry_next) {
    pthread_mutex_lock(&s->lock);
    for (dc_stream_t* st = s->streams; st != NULL; st = st->all_next) {
      if (st->blocked && st->head->token == token) {
        dc__stream_unpark_locked(st);
        make_ready(s, st);
      }
    }
    pthread_mutex_unlock(&s->lock);
  }
  pthread_mutex_unlock(&registry_lock);
}

dc_stream_t* dc__current_stream(void) { return tls_current_stream; }

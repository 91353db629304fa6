// stream_cancel.c: taking a stream's commands off it without running
// them (dc_stream_cancel): what the device already runs finishes, records
// complete as cancelled, and the rest is freed once the lock is dropped.
// Cancel tokens mark commands that stream threads then drop at the head
// (scheduler.c, dc_cancel_token_cancel).
// SPDX-License-Identifier: MIT
#include "stream_internal.h"

void dc__stream_unpark_locked(dc_stream_t* st) {
  dc_event_t* ev = st->head->u.event.event;
  for (dc_stream_t** w = &ev->waiters; *w != NULL; w = &(*w)->wait_next) {
    if (*w == st) {
      *w = st->wait_next;
      break;
    }
  }
  st->blocked = false;
  st->wait_next = NULL;
  st->blocked_since_ns = 0;
}

size_t dc__stream_cancel_locked(dc_stream_t* st, dc__cmd_t** out) {
  dc__scheduler_t* s = st->sched;
  if (st->blocked) dc__stream_unpark_locked(st);
  // A running head finishes, and so do the dispatches already on the
  // device queue; everything else goes.
  size_t keep_count = DC_MAX(st->in_flight, st->running ? (size_t)1 : 0);
  dc__cmd_t* keep = NULL;
  dc__cmd_t* cmd = st->head;
  for (size_t i = 0; i < keep_count; ++i) {
    keep = cmd;
    cmd = cmd->next;
  }
  size_t n = 0;
  uint64_t now = dc__now_ns();
  while (cmd != NULL) {
    dc__cmd_t* next = cmd->next;
    // The events of cancelled records are complete (poisoned) before the
    // stream counts as drained; their callbacks run after unlocking.
    if (cmd->kind == DC_CMD_RECORD) {
      cmd->u.event.due_count = dc__event_complete_locked(
          cmd->u.event.event, cmd->u.event.generation, DC_ERR_CANCELLED,
          "the record was cancelled before it ran", cmd->u.event.due);
    }
    dc__stream_report(st, cmd, DC_SPAN_CANCELLED, DC_ERR_CANCELLED, now, now);
    cmd->next = *out;
    *out = cmd;
    ++n;
    cmd = next;
  }
  if (keep) {
    keep->next = NULL;
  } else {
    st->head = NULL;
  }
  st->tail = keep;
  st->queued -= n;
  s->queued -= n;
  st->stats.cancelled += n;
  if (n > 0) {
    if (keep == NULL) {
      atomic_store_explicit(&st->done_seq, (*out)->sequence,
                            memory_order_release);
    }
    pthread_cond_broadcast(&s->done_cv);
  }
  return n;
}

void dc__cancelled_free(dc__scheduler_t* s, dc__cmd_t* list) {
  while (list != NULL) {
    dc__cmd_t* cmd = list;
    list = cmd->next;
    if (cmd->kind == DC_CMD_RECORD && cmd->u.event.due_count > 0) {
      dc__event_run_callbacks(cmd->u.event.event, cmd->u.event.due,
                              cmd->u.event.due_count);
    }
    pthread_mutex_lock(&s->lock);
    dc__cmd_free_locked(s, cmd);
    pthread_mutex_unlock(&s->lock);
  }
}

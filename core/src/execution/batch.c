// batch.c: batches of commands over several streams, submitted at once
// and kept for the next submission (scheduler.h).
// SPDX-License-Identifier: MIT
#include <string.h>

#include "stream_internal.h"

struct dc__batch_t {
  dc__scheduler_t* sched;
  dc_allocator_t allocator;
  dc_stream_t** streams;  // retained
  size_t stream_count;    // retained so far
  size_t stream_slots;
  dc__cmd_t* cmds;        // in the order they were added
  uint32_t* cmd_stream;   // the stream index of each
  size_t count;
  size_t capacity;
  void (*released)(void* owner);
  void* owner;
};

dc_status_t dc__batch_create(dc_stream_t* const* streams, size_t stream_count,
                             size_t capacity, void (*released)(void* owner),
                             void* owner, dc__batch_t** out) {
  *out = NULL;
  dc_context_t* ctx = dc_device_context(dc_stream_device(streams[0]));
  dc_allocator_t a = dc_context_allocator(ctx);
  dc__batch_t* b = dc_allocator_calloc(a, 1, sizeof(*b));
  if (b == NULL) return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "out of memory");
  b->allocator = a;
  b->sched = streams[0]->sched;
  b->released = released;
  b->owner = owner;
  b->capacity = capacity;
  b->stream_slots = stream_count;
  b->streams = dc_allocator_calloc(a, stream_count, sizeof(dc_stream_t*));
  if (capacity > 0) {
    b->cmds = dc_allocator_calloc(a, capacity, sizeof(dc__cmd_t));
    b->cmd_stream = dc_allocator_calloc(a, capacity, sizeof(uint32_t));
  }
  if (b->streams == NULL ||
      (capacity > 0 && (b->cmds == NULL || b->cmd_stream == NULL))) {
    dc__batch_destroy(b);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (size_t i = 0; i < stream_count; ++i) {
    b->streams[i] = streams[i];
    dc_stream_retain(streams[i]);
    b->stream_count = i + 1;
  }
  *out = b;
  return DC_OK;
}

void dc__batch_destroy(dc__batch_t* b) {
  if (b == NULL) return;
  for (size_t i = 0; i < b->count; ++i) {
    dc__cmd_t* cmd = &b->cmds[i];
    if (cmd->kind == DC_CMD_RECORD || cmd->kind == DC_CMD_WAIT) {
      dc_event_release(cmd->u.event.event);
    }
  }
  for (size_t i = 0; i < b->stream_count; ++i) dc_stream_release(b->streams[i]);
  dc_allocator_t a = b->allocator;
  if (b->streams) {
    dc_allocator_free(a, b->streams, b->stream_slots * sizeof(dc_stream_t*));
  }
  if (b->cmds) dc_allocator_free(a, b->cmds, b->capacity * sizeof(dc__cmd_t));
  if (b->cmd_stream) {
    dc_allocator_free(a, b->cmd_stream, b->capacity * sizeof(uint32_t));
  }
  dc_allocator_free(a, b, sizeof(*b));
}

// The next command of |b|, on stream |stream|, of |kind|.
static dc__cmd_t* add(dc__batch_t* b, size_t stream, dc__cmd_kind_t kind) {
  dc__cmd_t* cmd = &b->cmds[b->count];
  b->cmd_stream[b->count++] = (uint32_t)stream;
  cmd->kind = kind;
  cmd->batch = b;
  return cmd;
}

void dc__batch_task(dc__batch_t* b, size_t stream, const dc__task_ops_t* ops,
                    void* task) {
  dc__cmd_t* cmd = add(b, stream, DC_CMD_TASK);
  cmd->u.task.ops = ops;
  cmd->u.task.task = task;
}

dc_status_t dc__batch_record(dc__batch_t* b, size_t stream,
                             dc_event_t* event) {
  // One pending generation per submission, reserved now so that a
  // submission cannot fail for want of memory.
  pthread_mutex_lock(&b->sched->lock);
  bool reserved = dc__event_reserve_locked(event, 1);
  pthread_mutex_unlock(&b->sched->lock);
  if (!reserved) return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "out of memory");
  dc_event_retain(event);
  add(b, stream, DC_CMD_RECORD)->u.event.event = event;
  return DC_OK;
}

void dc__batch_wait(dc__batch_t* b, size_t stream, dc_event_t* event) {
  dc_event_retain(event);
  add(b, stream, DC_CMD_WAIT)->u.event.event = event;
}

size_t dc__batch_size(const dc__batch_t* b) { return b->count; }

void dc__batch_command_done_locked(dc__batch_t* b) { b->released(b->owner); }

bool dc__batch_streams_idle(dc__batch_t* b) {
  bool idle = true;
  pthread_mutex_lock(&b->sched->lock);
  for (size_t i = 0; i < b->stream_count && idle; ++i) {
    idle = b->streams[i]->head == NULL && !b->streams[i]->running;
  }
  pthread_mutex_unlock(&b->sched->lock);
  return idle;
}

static dc_status_t check_locked(dc__batch_t* b, const char* fn) {
  for (size_t i = 0; i < b->stream_count; ++i) {
    dc_stream_t* st = b->streams[i];
    if (st->error != DC_OK) {
      return dc_set_error(st->error,
                          "%s: stream '%s' of the group has failed (reset it "
                          "first): %s",
                          fn, st->label, st->message);
    }
  }
  return DC_OK;
}

dc_status_t dc__batch_check(dc__batch_t* b, const char* fn) {
  pthread_mutex_lock(&b->sched->lock);
  dc_status_t status = check_locked(b, fn);
  pthread_mutex_unlock(&b->sched->lock);
  return status;
}

dc_status_t dc__batch_submit(dc__batch_t* b, const char* fn) {
  pthread_mutex_lock(&b->sched->lock);
  dc_status_t status = check_locked(b, fn);
  if (status == DC_OK) {
    // This submission's generation of each recorded event first, so that
    // the waits below wait for it.
    for (size_t i = 0; i < b->count; ++i) {
      dc__cmd_t* cmd = &b->cmds[i];
      if (cmd->kind == DC_CMD_RECORD) {  // room was reserved: cannot fail
        cmd->u.event.generation =
            dc__event_new_generation_locked(cmd->u.event.event);
      }
    }
    for (size_t i = 0; i < b->count; ++i) {
      dc__cmd_t* cmd = &b->cmds[i];
      if (cmd->kind == DC_CMD_WAIT) {
        cmd->u.event.generation = cmd->u.event.event->recorded;
        cmd->u.event.host_only = false;
      }
    }
    for (size_t i = 0; i < b->count; ++i) {
      dc__stream_push(b->streams[b->cmd_stream[i]], &b->cmds[i]);
    }
  }
  pthread_mutex_unlock(&b->sched->lock);
  return status;
}

// stream.c: the public stream API: creating streams, checking and queuing
// commands, waiting, errors, cancellation and statistics. The scheduler
// (scheduler.c) runs what is queued here.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "buffer_internal.h"
#include "stream_internal.h"

static bool is_stream(const dc_stream_t* st) {
  return dc__resource_live(DC__RES(st), &dc__stream_type);
}

size_t dc__stream_object_size(void) { return sizeof(dc_stream_t); }

static dc_status_t check_stream(const char* fn, const dc_stream_t* st) {
  return dc__resource_check(fn, "stream", DC__RES(st), &dc__stream_type);
}

//===-- Lifetime --------------------------------------------------------===//

static void describe_stream(const dc__live_node_t* node, char* buf,
                            size_t size) {
  const dc_stream_t* st =
      (const dc_stream_t*)((const char*)node - offsetof(dc_stream_t, live));
  snprintf(buf, size, "stream %u '%s' on %s", st->id, st->label,
           st->device->info.name);
}

dc_status_t dc_stream_create(dc_device_t* device,
                             const dc_stream_params_t* params,
                             dc_stream_t** out_stream) {
  static const char* fn = "dc_stream_create";
  DC_REQUIRE_ARG(out_stream, fn);
  *out_stream = NULL;
  DC_REQUIRE_ARG(device, fn);
  dc_stream_params_t p = params ? *params : (dc_stream_params_t){0};
  if (p.priority != DC_PRIORITY_NORMAL && p.priority != DC_PRIORITY_LOW &&
      p.priority != DC_PRIORITY_HIGH) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: unknown priority %d", fn,
                   (int)p.priority);
  }
  dc_context_t* ctx = device->context;
  dc__scheduler_t* s = ctx->scheduler;
  dc_stream_t* st = dc__object_cache_alloc(&ctx->stream_cache);
  if (st == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate a stream", fn);
  }
  st->device = device;
  st->sched = s;
  st->priority = p.priority;
  st->stats.priority = p.priority;
  st->live.kind = DC_LIVE_STREAM;
  st->live.describe = describe_stream;
  pthread_mutex_lock(&s->lock);
  st->id = ++s->next_stream_id;
  st->wake_at = UINT64_MAX;
  if (p.label != NULL && p.label[0] != '\0') {
    dc__strlcpy(st->label, p.label, sizeof(st->label));
  } else {
    snprintf(st->label, sizeof(st->label), "stream %u", st->id);
  }
  ++s->stream_count;
  dc_status_t status = dc__scheduler_grow(s);
  if (status != DC_OK) {
    --s->stream_count;
    pthread_mutex_unlock(&s->lock);
    dc__object_cache_free(&ctx->stream_cache, st);
    return status;
  }
  st->all_next = s->streams;
  if (s->streams) s->streams->all_prev = st;
  s->streams = st;
  dc__resource_init(&st->header, &dc__stream_type);
  pthread_mutex_unlock(&s->lock);
  dc__context_track(ctx, &st->live);
  *out_stream = st;
  return DC_OK;
}

void dc__stream_free(dc_stream_t* st) {
  dc__scheduler_t* s = st->sched;
  dc_context_t* ctx = s->ctx;
  pthread_mutex_lock(&s->lock);
  if (st->all_prev) {
    st->all_prev->all_next = st->all_next;
  } else {
    s->streams = st->all_next;
  }
  if (st->all_next) st->all_next->all_prev = st->all_prev;
  --s->stream_count;
  dc_cancel_token_t* token = st->token;
  pthread_mutex_unlock(&s->lock);
  dc_cancel_token_release(token);
  if (st->queue != NULL) st->device->vtable->queues->destroy(st->device, st->queue);
  dc__object_cache_free(&ctx->stream_cache, st);
  dc__context_unref(ctx);  // may destroy the context: the very last step
}

static void destroy_stream(dc__resource_t* r) {
  dc_stream_t* st = (dc_stream_t*)r;
  dc__scheduler_t* s = st->sched;
  // Released with work queued is not a leak: off the live list now. The
  // stream still keeps the context alive until it is freed.
  dc__context_untrack(s->ctx, &st->live);
  pthread_mutex_lock(&s->lock);
  dc__resource_mark_released(&st->header);
  st->released = true;
  // A stream with work queued is freed by the thread that finishes it.
  bool free_now = st->head == NULL && !st->running;
  pthread_mutex_unlock(&s->lock);
  if (free_now) dc__stream_free(st);
}

const dc__resource_type_t dc__stream_type = {
    .name = "stream",
    .destroy = destroy_stream,
};
DC__RESOURCE_FIRST(dc_stream_t, header);

void dc_stream_retain(dc_stream_t* st) {
  dc__resource_retain(DC__RES(st), &dc__stream_type);
}

void dc_stream_release(dc_stream_t* st) {
  dc__resource_release(DC__RES(st), &dc__stream_type);
}

dc_device_t* dc_stream_device(const dc_stream_t* st) {
  return is_stream(st) ? st->device : NULL;
}

const char* dc_stream_label(const dc_stream_t* st) {
  return is_stream(st) ? st->label : "";
}

uint32_t dc_stream_id(const dc_stream_t* st) {
  return is_stream(st) ? st->id : 0u;
}

//===-- Queuing ---------------------------------------------------------===//

// Takes a command for |st| (NULL and an error when out of memory).
static dc__cmd_t* new_cmd(const char* fn, dc_stream_t* st,
                          dc__cmd_kind_t kind, size_t arg_count) {
  pthread_mutex_lock(&st->sched->lock);
  dc__cmd_t* cmd = dc__cmd_new(st->sched, arg_count);
  pthread_mutex_unlock(&st->sched->lock);
  if (cmd == NULL) {
    DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate a command", fn);
    return NULL;
  }
  cmd->kind = kind;
  return cmd;
}

// Queues |cmd|, whose references are taken. A stream released meanwhile
// by another thread is a use after release: the command is dropped.
static dc_status_t push(const char* fn, dc_stream_t* st, dc__cmd_t* cmd) {
  dc__scheduler_t* s = st->sched;
  pthread_mutex_lock(&s->lock);
  bool alive = is_stream(st) && !st->released;
  if (alive && cmd->kind == DC_CMD_DISPATCH) {
    dc__stream_push_dispatch(st, cmd);
  } else if (alive) {
    dc__stream_push(st, cmd);
  }
  pthread_mutex_unlock(&s->lock);
  if (!alive) {
    pthread_mutex_lock(&s->lock);
    dc__cmd_free_locked(s, cmd);
    pthread_mutex_unlock(&s->lock);
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'stream' was released", fn);
  }
  return DC_OK;
}

dc_status_t dc_stream_dispatch(dc_stream_t* st, dc_kernel_t* kernel,
                               const dc_dispatch_t* dispatch,
                               const dc_arg_t* args, size_t arg_count) {
  static const char* fn = "dc_stream_dispatch";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  // The device first: preparing may take an autotuning turn.
  if (dc__kernel_valid(kernel) && kernel->program->device != st->device) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' lives on %s, the stream on %s", fn,
                   kernel->info.name, kernel->program->device->info.name,
                   st->device->info.name);
  }
  dc__prepared_t prepared;
  DC_RETURN_IF_ERROR(
      dc__kernel_prepare(fn, kernel, dispatch, args, arg_count, &prepared));
  dc__cmd_t* cmd = new_cmd(fn, st, DC_CMD_DISPATCH, arg_count);
  if (cmd == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_arg_t* copy = cmd->inline_args;
  if (arg_count > cmd->inline_capacity) {
    copy = dc_allocator_malloc(st->device->context->allocator,
                               arg_count * sizeof(dc_arg_t));
    if (copy == NULL) {
      pthread_mutex_lock(&st->sched->lock);
      dc__cmd_free_locked(st->sched, cmd);
      pthread_mutex_unlock(&st->sched->lock);
      return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "%s: cannot allocate %zu arguments", fn, arg_count);
    }
  }
  // Held: the command outlives the caller's arguments.
  dc_status_t held = dc__args_hold(st->device->context->allocator, copy,
                                   args, arg_count);
  if (held != DC_OK) {
    if (copy != cmd->inline_args) {
      dc_allocator_free(st->device->context->allocator, copy,
                        arg_count * sizeof(dc_arg_t));
    }
    pthread_mutex_lock(&st->sched->lock);
    dc__cmd_free_locked(st->sched, cmd);
    pthread_mutex_unlock(&st->sched->lock);
    return DC_FAIL(held, "%s: kernel '%s': %s", fn, kernel->info.name,
                   dc_last_error());
  }
  dc_kernel_retain(kernel);
  cmd->u.dispatch.kernel = kernel;
  cmd->u.dispatch.prepared = prepared;
  cmd->u.dispatch.args = copy;
  cmd->u.dispatch.arg_count = arg_count;
  return push(fn, st, cmd);
}

// Checks a buffer operand of a transfer: alive and |count| elements from
// |offset| in range.
static dc_status_t check_operand(const char* fn, const dc_buffer_t* b,
                                 const char* name, size_t offset,
                                 size_t count) {
  DC_RETURN_IF_ERROR(dc__buffer_check(b, fn, name));
  return dc__buffer_check_range(b, offset, count, fn, name);
}

static dc_status_t check_device(const char* fn, const dc_stream_t* st,
                                const dc_buffer_t* b, const char* name) {
  if (b->device != st->device) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: '%s' lives on %s, the stream on %s", fn, name,
                   b->device->info.name, st->device->info.name);
  }
  return DC_OK;
}

static dc_status_t push_transfer(const char* fn, dc_stream_t* st,
                                 dc__cmd_kind_t kind, dc_buffer_t* dst,
                                 size_t dst_offset, dc_buffer_t* src,
                                 size_t src_offset, size_t count,
                                 void* host) {
  dc__cmd_t* cmd = new_cmd(fn, st, kind, 0);
  if (cmd == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_buffer_retain(dst);
  dc_buffer_retain(src);
  cmd->u.transfer.dst = dst;
  cmd->u.transfer.src = src;
  cmd->u.transfer.dst_offset = dst_offset;
  cmd->u.transfer.src_offset = src_offset;
  cmd->u.transfer.count = count;
  cmd->u.transfer.host = host;
  return push(fn, st, cmd);
}

dc_status_t dc_stream_copy(dc_stream_t* st, dc_buffer_t* dst,
                           size_t dst_offset, dc_buffer_t* src,
                           size_t src_offset, size_t count) {
  static const char* fn = "dc_stream_copy";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_RETURN_IF_ERROR(check_operand(fn, dst, "dst", dst_offset, count));
  DC_RETURN_IF_ERROR(check_operand(fn, src, "src", src_offset, count));
  if (dst->dtype != src->dtype) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: dtypes differ (dst is %s, src is %s)", fn,
                   dc_dtype_name(dst->dtype), dc_dtype_name(src->dtype));
  }
  if (dst->device != st->device && src->device != st->device) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: neither buffer lives on the stream's device %s", fn,
                   st->device->info.name);
  }
  return push_transfer(fn, st, DC_CMD_COPY, dst, dst_offset, src, src_offset,
                       count, NULL);
}

dc_status_t dc_stream_write(dc_stream_t* st, dc_buffer_t* dst, size_t offset,
                            const void* src, size_t count) {
  static const char* fn = "dc_stream_write";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_REQUIRE_ARG(src, fn);
  DC_RETURN_IF_ERROR(check_operand(fn, dst, "dst", offset, count));
  DC_RETURN_IF_ERROR(check_device(fn, st, dst, "dst"));
  return push_transfer(fn, st, DC_CMD_WRITE, dst, offset, NULL, 0, count,
                       (void*)src);
}

dc_status_t dc_stream_read(dc_stream_t* st, dc_buffer_t* src, size_t offset,
                           void* dst, size_t count) {
  static const char* fn = "dc_stream_read";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_REQUIRE_ARG(dst, fn);
  DC_RETURN_IF_ERROR(check_operand(fn, src, "src", offset, count));
  DC_RETURN_IF_ERROR(check_device(fn, st, src, "src"));
  return push_transfer(fn, st, DC_CMD_READ, NULL, 0, src, offset, count, dst);
}

dc_status_t dc_stream_fill(dc_stream_t* st, dc_buffer_t* buffer,
                           size_t offset, size_t count, const void* value) {
  static const char* fn = "dc_stream_fill";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_REQUIRE_ARG(value, fn);
  DC_RETURN_IF_ERROR(check_operand(fn, buffer, "buffer", offset, count));
  DC_RETURN_IF_ERROR(check_device(fn, st, buffer, "buffer"));
  dc__cmd_t* cmd = new_cmd(fn, st, DC_CMD_FILL, 0);
  if (cmd == NULL) return DC_ERR_OUT_OF_MEMORY;
  memcpy(cmd->u.transfer.value, value, dc_dtype_size(buffer->dtype));
  dc_buffer_retain(buffer);
  cmd->u.transfer.dst = buffer;
  cmd->u.transfer.dst_offset = offset;
  cmd->u.transfer.count = count;
  return push(fn, st, cmd);
}

dc_status_t dc_stream_host(dc_stream_t* st, dc_host_fn_t host_fn,
                           void* user_data) {
  static const char* fn = "dc_stream_host";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  if (host_fn == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'fn' must not be NULL", fn);
  }
  dc__cmd_t* cmd = new_cmd(fn, st, DC_CMD_HOST, 0);
  if (cmd == NULL) return DC_ERR_OUT_OF_MEMORY;
  cmd->u.host.fn = host_fn;
  cmd->u.host.user_data = user_data;
  return push(fn, st, cmd);
}

static dc_status_t check_event(const char* fn, const dc_stream_t* st,
                               const dc_event_t* ev, bool same_device) {
  DC_RETURN_IF_ERROR(
      dc__resource_check(fn, "event", DC__RES(ev), &dc__event_type));
  if (same_device ? ev->device != st->device
                  : ev->device->context != st->device->context) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the event belongs to %s, the stream to %s%s", fn,
                   ev->device->info.name, st->device->info.name,
                   same_device ? "" : " of another context");
  }
  return DC_OK;
}

dc_status_t dc_stream_record(dc_stream_t* st, dc_event_t* ev) {
  static const char* fn = "dc_stream_record";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_RETURN_IF_ERROR(check_event(fn, st, ev, true));
  dc__cmd_t* cmd = new_cmd(fn, st, DC_CMD_RECORD, 0);
  if (cmd == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_event_retain(ev);
  cmd->u.event.event = ev;
  dc__scheduler_t* s = st->sched;
  pthread_mutex_lock(&s->lock);
  bool alive = is_stream(st) && !st->released;
  uint64_t generation = alive ? dc__event_new_generation_locked(ev) : 0;
  dc__event_callback_t due[DC_EVENT_CALLBACKS];
  size_t due_count = 0;
  if (generation == 0) {
    dc__cmd_free_locked(s, cmd);
  } else if (st->head == NULL && !st->running) {
    // An idle stream: the record is due now, no thread needs to wake.
    cmd->u.event.generation = generation;
    due_count = dc__stream_record_now_locked(st, cmd, due);
  } else {
    cmd->u.event.generation = generation;
    dc__stream_push(st, cmd);
  }
  pthread_mutex_unlock(&s->lock);
  if (due_count > 0) dc__event_run_callbacks(ev, due, due_count);
  if (!alive) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'stream' was released", fn);
  }
  if (generation == 0) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot track the record", fn);
  }
  return DC_OK;
}

dc_status_t dc_stream_wait_event(dc_stream_t* st, dc_event_t* ev) {
  static const char* fn = "dc_stream_wait_event";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_RETURN_IF_ERROR(check_event(fn, st, ev, false));
  dc__scheduler_t* s = st->sched;
  pthread_mutex_lock(&s->lock);
  uint64_t generation = ev->recorded;
  pthread_mutex_unlock(&s->lock);
  if (generation == 0) return DC_OK;  // never recorded: nothing to wait for
  dc__cmd_t* cmd = new_cmd(fn, st, DC_CMD_WAIT, 0);
  if (cmd == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_event_retain(ev);
  cmd->u.event.event = ev;
  cmd->u.event.generation = generation;
  return push(fn, st, cmd);
}

//===-- Waiting and errors ----------------------------------------------===//

typedef struct drained_t {
  const dc_stream_t* stream;
  uint64_t sequence;  // every command up to this one has finished
} drained_t;

static bool is_drained(void* arg) {
  const drained_t* d = arg;
  return d->stream->head == NULL || d->stream->head->sequence > d->sequence;
}

// is_drained(), and if not, asks to be woken when it is (lock held).
static bool drained_or_register(void* arg) {
  drained_t* d = arg;
  if (is_drained(d)) return true;
  dc_stream_t* st = (dc_stream_t*)d->stream;
  if (st->wake_at > d->sequence) st->wake_at = d->sequence;
  return false;
}

// Whether the command |d|->sequence has finished, read without the lock.
static bool reached(const void* arg) {
  const drained_t* d = arg;
  return atomic_load_explicit(&((dc_stream_t*)d->stream)->done_seq,
                              memory_order_acquire) >= d->sequence;
}

// The stream's error into the caller's dc_last_error() (lock held).
static dc_status_t raise_error(const dc_stream_t* st) {
  if (st->error == DC_OK) return DC_OK;
  return dc_set_error(st->error, "%s", st->message);
}

static dc_status_t refuse_own_stream(const char* fn, const dc_stream_t* st) {
  if (dc__current_stream() == st) {
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "%s: called from a host callback of stream '%s', which "
                   "cannot wait for itself", fn, st->label);
  }
  return DC_OK;
}

dc_status_t dc_stream_sync(dc_stream_t* st, uint64_t timeout_ns) {
  static const char* fn = "dc_stream_sync";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_RETURN_IF_ERROR(refuse_own_stream(fn, st));
  dc__scheduler_t* s = st->sched;
  pthread_mutex_lock(&s->lock);
  drained_t d = {st, st->next_sequence};
  if (timeout_ns == DC_TIMEOUT_INFINITE) dc__stream_help_locked(st);
  dc__stream_hurry_locked(st);  // its thread stops waiting for more
  if (!is_drained(&d)) {  // short waits end polling, without a wake-up
    pthread_mutex_unlock(&s->lock);
    dc__poll_ns(reached, &d, DC_HOST_SPIN_NS, timeout_ns);
    pthread_mutex_lock(&s->lock);
  }
  dc_status_t status = dc__wait_locked(s, drained_or_register, &d,
                                       timeout_ns);
  if (status == DC_OK) {
    status = raise_error(st);
  } else {
    dc_set_error(status, "%s: stream '%s' still has %zu command(s) queued "
                 "after %llu ns", fn, st->label, st->queued,
                 (unsigned long long)timeout_ns);
  }
  pthread_mutex_unlock(&s->lock);
  return status;
}

dc_status_t dc_stream_query(const dc_stream_t* st) {
  DC_RETURN_IF_ERROR(check_stream("dc_stream_query", st));
  dc__scheduler_t* s = st->sched;
  pthread_mutex_lock(&s->lock);
  dc_status_t status = raise_error(st);
  if (status == DC_OK && st->head != NULL) status = DC_ERR_UNAVAILABLE;
  pthread_mutex_unlock(&s->lock);
  return status;
}

dc_status_t dc_stream_reset(dc_stream_t* st) {
  static const char* fn = "dc_stream_reset";
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  DC_RETURN_IF_ERROR(refuse_own_stream(fn, st));
  dc__scheduler_t* s = st->sched;
  pthread_mutex_lock(&s->lock);
  drained_t d = {st, st->next_sequence};
  dc__stream_hurry_locked(st);
  dc__wait_locked(s, drained_or_register, &d, DC_TIMEOUT_INFINITE);
  dc_status_t status = raise_error(st);
  st->error = DC_OK;
  st->message[0] = '\0';
  pthread_mutex_unlock(&s->lock);
  return status;
}

size_t dc_stream_cancel(dc_stream_t* st) {
  if (!is_stream(st)) return 0;
  dc__scheduler_t* s = st->sched;
  dc__cmd_t* cancelled = NULL;
  pthread_mutex_lock(&s->lock);
  size_t n = dc__stream_cancel_locked(st, &cancelled);
  pthread_mutex_unlock(&s->lock);
  dc__cancelled_free(s, cancelled);
  return n;
}

dc_status_t dc_stream_set_cancel_token(dc_stream_t* st,
                                       dc_cancel_token_t* token) {
  DC_RETURN_IF_ERROR(check_stream("dc_stream_set_cancel_token", st));
  if (token != NULL) {
    DC_RETURN_IF_ERROR(dc__resource_check("dc_stream_set_cancel_token",
                                          "token", DC__RES(token),
                                          &dc__cancel_token_type));
  }
  if (token != NULL && token->ctx != dc_device_context(st->device)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_stream_set_cancel_token: the token belongs to another "
                   "context");
  }
  dc_cancel_token_retain(token);
  pthread_mutex_lock(&st->sched->lock);
  dc_cancel_token_t* old = st->token;
  st->token = token;
  pthread_mutex_unlock(&st->sched->lock);
  dc_cancel_token_release(old);
  return DC_OK;
}

dc_status_t dc_stream_stats(const dc_stream_t* st,
                            dc_stream_stats_t* out_stats) {
  static const char* fn = "dc_stream_stats";
  DC_REQUIRE_ARG(out_stats, fn);
  DC_RETURN_IF_ERROR(check_stream(fn, st));
  pthread_mutex_lock(&st->sched->lock);
  *out_stats = st->stats;
  out_stats->queued = st->queued;
  out_stats->error = st->error;
  pthread_mutex_unlock(&st->sched->lock);
  return DC_OK;
}

void dc__context_foreach_stream(dc_context_t* ctx,
                                void (*fn)(dc_stream_t* stream,
                                           void* user_data),
                                void* user_data) {
  dc__scheduler_t* s = ctx->scheduler;
  pthread_mutex_lock(&s->lock);
  size_t count = 0;
  for (dc_stream_t* st = s->streams; st != NULL; st = st->all_next) {
    count += !st->released;
  }
  dc_stream_t** list =
      count ? dc_allocator_malloc(ctx->allocator, count * sizeof(*list))
            : NULL;
  size_t n = 0;
  for (dc_stream_t* st = s->streams; list && st != NULL; st = st->all_next) {
    // A stream whose last release is under way is passed over.
    if (dc__resource_try_retain(DC__RES(st), &dc__stream_type)) {
      list[n++] = st;
    }
  }
  pthread_mutex_unlock(&s->lock);
  // The list runs newest first; report in creation order.
  for (size_t i = n; i-- > 0;) fn(list[i], user_data);
  for (size_t i = 0; i < n; ++i) dc_stream_release(list[i]);
  if (list) dc_allocator_free(ctx->allocator, list, count * sizeof(*list));
}

//===-- Cancel tokens ---------------------------------------------------===//

dc_status_t dc_cancel_token_create(dc_context_t* ctx,
                                   dc_cancel_token_t** out_token) {
  static const char* fn = "dc_cancel_token_create";
  DC_REQUIRE_ARG(out_token, fn);
  *out_token = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  dc_cancel_token_t* t = dc__object_cache_alloc(&ctx->token_cache);
  if (t == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate a token", fn);
  }
  atomic_init(&t->cancelled, false);
  t->ctx = ctx;
  dc__context_ref(ctx);
  dc__resource_init(&t->header, &dc__cancel_token_type);
  *out_token = t;
  return DC_OK;
}

// The token holds one reference on its context for as long as it lives,
// so the scheduler may add references under its lock: a retain takes no
// other lock.
static void destroy_cancel_token(dc__resource_t* r) {
  dc_context_t* ctx = ((dc_cancel_token_t*)r)->ctx;
  dc__object_cache_free(&ctx->token_cache, r);
  dc__context_unref(ctx);  // last: it may destroy the context
}

const dc__resource_type_t dc__cancel_token_type = {
    .name = "cancel token",
    .destroy = destroy_cancel_token,
};
DC__RESOURCE_FIRST(dc_cancel_token_t, header);

void dc_cancel_token_retain(dc_cancel_token_t* t) {
  dc__resource_retain(DC__RES(t), &dc__cancel_token_type);
}

void dc_cancel_token_release(dc_cancel_token_t* t) {
  dc__resource_release(DC__RES(t), &dc__cancel_token_type);
}

size_t dc__cancel_token_object_size(void) { return sizeof(dc_cancel_token_t); }

dc_context_t* dc__cancel_token_context(const dc_cancel_token_t* t) {
  return dc__is_cancel_token(t) ? t->ctx : NULL;
}

bool dc_cancel_token_is_cancelled(const dc_cancel_token_t* t) {
  return dc__is_cancel_token(t) &&
         atomic_load(&((dc_cancel_token_t*)t)->cancelled);
}

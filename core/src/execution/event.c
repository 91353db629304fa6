// event.c: events, the per-device pools that recycle them, and the
// generations of their records that the scheduler completes.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "stream_internal.h"
#include "telemetry_internal.h"

static bool is_event(const dc_event_t* ev) {
  return dc__resource_live(DC__RES(ev), &dc__event_type);
}

static dc_status_t check_event(const char* fn, const char* param,
                               const dc_event_t* ev) {
  return dc__resource_check(fn, param, DC__RES(ev), &dc__event_type);
}

// The pool's free list runs through the events' resource headers.
static dc_event_t* next_free(const dc_event_t* ev) {
  return (dc_event_t*)ev->header.next_released;
}

static dc_status_t check_flags(const char* fn, uint32_t flags) {
  if ((flags & ~(uint32_t)DC_EVENT_TIMING) != 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: unknown event flags 0x%x (only DC_EVENT_TIMING)", fn,
                   flags & ~(uint32_t)DC_EVENT_TIMING);
  }
  return DC_OK;
}

//===-- The pool --------------------------------------------------------===//

// The pool of |device| for |flags|, after checking the flags.
static dc_status_t find_pool(const char* fn, dc_device_t* device,
                             uint32_t flags, dc__event_pool_t** out) {
  DC_RETURN_IF_ERROR(check_flags(fn, flags));
  *out = dc__event_pool_of(device, flags & DC_EVENT_TIMING);
  if (*out == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the device is not part of its context", fn);
  }
  return DC_OK;
}

static void update_peak(dc__event_pool_t* p) {
  if (p->stats.in_use > p->stats.peak_in_use) {
    p->stats.peak_in_use = p->stats.in_use;
  }
}

static void describe_event(const dc__live_node_t* node, char* buf,
                           size_t size) {
  const dc_event_t* ev =
      (const dc_event_t*)((const char*)node - offsetof(dc_event_t, live));
  snprintf(buf, size, "event %p (%s) on %s, recorded %llu time(s)",
           (const void*)ev, (ev->flags & DC_EVENT_TIMING) ? "timing" : "sync",
           ev->device->info.name, (unsigned long long)ev->recorded);
}

static dc_event_t* new_event(dc__event_pool_t* p) {
  dc_allocator_t a = p->device->context->allocator;
  dc_event_t* ev = dc_allocator_calloc(a, 1, sizeof(*ev));
  if (ev != NULL) {
    ev->device = p->device;
    ev->pool = p;
    ev->flags = p->flags;
    ev->live.kind = DC_LIVE_EVENT;
    ev->live.describe = describe_event;
  }
  return ev;
}

dc_status_t dc_event_create(dc_device_t* device, uint32_t flags,
                            dc_event_t** out_event) {
  static const char* fn = "dc_event_create";
  DC_REQUIRE_ARG(out_event, fn);
  *out_event = NULL;
  DC_REQUIRE_ARG(device, fn);
  dc__event_pool_t* p = NULL;
  DC_RETURN_IF_ERROR(find_pool(fn, device, flags, &p));
  pthread_mutex_lock(&p->lock);
  dc_event_t* ev = NULL;
  if (p->stats.cached > DC_EVENT_POOL_QUARANTINE) {
    ev = p->free_head;
    p->free_head = next_free(ev);
    if (p->free_head == NULL) p->free_tail = NULL;
    --p->stats.cached;
    ++p->stats.reused;
  } else {
    ev = new_event(p);
    if (ev != NULL) ++p->stats.created;
  }
  if (ev != NULL) {
    ++p->stats.in_use;
    update_peak(p);
  }
  pthread_mutex_unlock(&p->lock);
  if (ev == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate an event", fn);
  }
  // A pooled event keeps nothing from its last use.
  ev->header.next_released = NULL;
  ev->recorded = 0;
  ev->pending_count = 0;  // the array stays, for reuse
  atomic_store(&ev->recorded_now, 0);
  atomic_store(&ev->pending_now, 0u);
  ev->host_waiters = 0;
  ev->failed_count = 0;
  ev->time_ns = 0;
  ev->device_generation = 0;  // the marker, if any, is kept for reuse
  ev->waiters = NULL;
  ev->callback_count = 0;
  ev->message[0] = '\0';
  dc__resource_init(&ev->header, &dc__event_type);
  dc__context_track(device->context, &ev->live);
  *out_event = ev;
  return DC_OK;
}

// A released event goes to the back of its pool's free list, which is
// its quarantine: dc_event_create takes from the front.
static void destroy_event(dc__resource_t* r) {
  dc_event_t* ev = (dc_event_t*)r;
  dc__event_pool_t* p = ev->pool;
  dc_context_t* ctx = p->device->context;
  dc__resource_mark_released(&ev->header);
  dc__context_untrack(ctx, &ev->live);
  pthread_mutex_lock(&p->lock);
  ev->header.next_released = NULL;
  if (p->free_tail != NULL) {
    p->free_tail->header.next_released = &ev->header;
  } else {
    p->free_head = ev;
  }
  p->free_tail = ev;
  ++p->stats.cached;
  --p->stats.in_use;
  pthread_mutex_unlock(&p->lock);
  dc__context_unref(ctx);  // last: it may destroy the context
}

const dc__resource_type_t dc__event_type = {
    .name = "event",
    .destroy = destroy_event,
};
DC__RESOURCE_FIRST(dc_event_t, header);

void dc_event_retain(dc_event_t* ev) {
  dc__resource_retain(DC__RES(ev), &dc__event_type);
}

void dc_event_release(dc_event_t* ev) {
  dc__resource_release(DC__RES(ev), &dc__event_type);
}

dc_device_t* dc_event_device(const dc_event_t* ev) {
  return is_event(ev) ? ev->device : NULL;
}

static void fill_stats(const dc__event_pool_t* p,
                       dc_event_pool_stats_t* out) {
  *out = p->stats;
  uint64_t total = out->created + out->reused;
  out->reuse_ratio = total ? (double)out->reused / (double)total : 0.0;
}

dc_status_t dc_event_pool_stats(dc_device_t* device, uint32_t flags,
                                dc_event_pool_stats_t* out_stats) {
  static const char* fn = "dc_event_pool_stats";
  DC_REQUIRE_ARG(device, fn);
  DC_REQUIRE_ARG(out_stats, fn);
  dc__event_pool_t* p = NULL;
  DC_RETURN_IF_ERROR(find_pool(fn, device, flags, &p));
  pthread_mutex_lock(&p->lock);
  fill_stats(p, out_stats);
  pthread_mutex_unlock(&p->lock);
  return DC_OK;
}

dc_status_t dc_event_pool_reserve(dc_device_t* device, uint32_t flags,
                                  size_t count) {
  static const char* fn = "dc_event_pool_reserve";
  DC_REQUIRE_ARG(device, fn);
  dc__event_pool_t* p = NULL;
  DC_RETURN_IF_ERROR(find_pool(fn, device, flags, &p));
  dc_status_t st = DC_OK;
  pthread_mutex_lock(&p->lock);
  // The quarantined events are not for the taking.
  size_t want = count + DC_EVENT_POOL_QUARANTINE;
  while (p->stats.cached < want) {
    dc_event_t* ev = new_event(p);
    if (ev == NULL) {
      st = DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "%s: cannot allocate event %zu of %zu", fn,
                   p->stats.cached + 1, want);
      break;
    }
    // Never handed out: first in line.
    ev->header.next_released = DC__RES(p->free_head);
    p->free_head = ev;
    if (p->free_tail == NULL) p->free_tail = ev;
    ++p->stats.cached;
    ++p->stats.created;
  }
  pthread_mutex_unlock(&p->lock);
  return st;
}

// Frees cached events of |p| beyond |keep|, oldest first (lock held);
// returns how many.
static size_t trim_pool(dc__event_pool_t* p, size_t keep) {
  size_t freed = 0;
  while (p->stats.cached > keep) {
    dc_event_t* ev = p->free_head;
    p->free_head = next_free(ev);
    if (p->free_head == NULL) p->free_tail = NULL;
    dc_allocator_t a = p->device->context->allocator;
    if (ev->pending) {
      dc_allocator_free(a, ev->pending,
                        ev->pending_capacity * sizeof(uint64_t));
    }
    if (ev->device_event) {
      p->device->vtable->events->destroy(p->device, ev->device_event);
    }
    dc_allocator_free(a, ev, sizeof(*ev));
    --p->stats.cached;
    ++p->stats.destroyed;
    ++freed;
  }
  return freed;
}

size_t dc_event_pool_trim(dc_device_t* device, size_t keep) {
  if (device == NULL) return 0;
  // The quarantine stays: its events' handles may still be around.
  if (keep < DC_EVENT_POOL_QUARANTINE) keep = DC_EVENT_POOL_QUARANTINE;
  size_t freed = 0;
  for (int timing = 0; timing < 2; ++timing) {
    dc__event_pool_t* p = dc__event_pool_of(device, timing);
    if (p == NULL) return 0;
    pthread_mutex_lock(&p->lock);
    freed += trim_pool(p, keep);
    pthread_mutex_unlock(&p->lock);
  }
  return freed;
}

void dc__event_pool_deinit(dc__event_pool_t* p) {
  if (p->device != NULL) trim_pool(p, 0);
  pthread_mutex_destroy(&p->lock);
}

//===-- Waiting ---------------------------------------------------------===//

static dc__scheduler_t* sched_of(const dc_event_t* ev) {
  return ev->device->context->scheduler;
}

// Whether the event's last record (as of now) has completed (lock held).
static bool latest_done(const dc_event_t* ev) {
  return dc__event_done_locked(ev, ev->recorded);
}

dc_status_t dc_event_query(const dc_event_t* ev) {
  DC_RETURN_IF_ERROR(check_event("dc_event_query", "event", ev));
  dc__scheduler_t* s = sched_of(ev);
  pthread_mutex_lock(&s->lock);
  dc_status_t st = !latest_done(ev)
                       ? DC_ERR_UNAVAILABLE
                       : dc__event_outcome_locked(ev, ev->recorded);
  pthread_mutex_unlock(&s->lock);
  return st;
}

// Fills |ts| with the CLOCK_MONOTONIC time |timeout_ns| from now.
static void deadline_after(uint64_t timeout_ns, struct timespec* ts) {
  uint64_t at = dc__now_ns() + timeout_ns;
  ts->tv_sec = (time_t)(at / 1000000000u);
  ts->tv_nsec = (long)(at % 1000000000u);
}

dc_status_t dc__wait_on_locked(pthread_cond_t* cv, pthread_mutex_t* lock,
                               bool (*done)(void* arg), void* arg,
                               uint64_t timeout_ns) {
  if (done(arg)) return DC_OK;
  if (timeout_ns == 0) return DC_ERR_DEADLINE_EXCEEDED;
  bool infinite = timeout_ns == DC_TIMEOUT_INFINITE ||
                  timeout_ns > UINT64_MAX / 4;
  struct timespec ts;
  if (!infinite) deadline_after(timeout_ns, &ts);
  int err = 0;
  while (!done(arg) && err != ETIMEDOUT) {
    err = infinite ? pthread_cond_wait(cv, lock)
                   : pthread_cond_timedwait(cv, lock, &ts);
  }
  return done(arg) ? DC_OK : DC_ERR_DEADLINE_EXCEEDED;
}

dc_status_t dc__wait_locked(dc__scheduler_t* s, bool (*done)(void* arg),
                            void* arg, uint64_t timeout_ns) {
  return dc__wait_on_locked(&s->done_cv, &s->lock, done, arg, timeout_ns);
}

bool dc__poll_ns(bool (*done)(const void* arg), const void* arg,
                 uint64_t spin_ns, uint64_t timeout_ns) {
  if (done(arg)) return true;
  uint64_t start = dc__now_ns();
  uint64_t limit = DC_MIN(spin_ns, timeout_ns);
  while (dc__now_ns() - start < limit) {
    if (done(arg)) return true;
  }
  return false;
}

typedef struct event_target_t {
  const dc_event_t* event;
  uint64_t generation;
} event_target_t;

static bool target_done(void* arg) {
  const event_target_t* t = arg;
  return dc__event_done_locked(t->event, t->generation);
}

// Whether nothing recorded on the event is pending, read without the lock
// (a hint: the caller confirms under the lock).
static bool nothing_pending(const void* arg) {
  const dc_event_t* ev = arg;
  return atomic_load_explicit(&((dc_event_t*)ev)->pending_now,
                              memory_order_acquire) == 0u;
}

dc_status_t dc_event_wait(dc_event_t* ev, uint64_t timeout_ns) {
  static const char* fn = "dc_event_wait";
  DC_RETURN_IF_ERROR(check_event(fn, "event", ev));
  dc__scheduler_t* s = sched_of(ev);
  dc__telemetry_host_wait(ev->device->context);
  // Short waits end here, without a sleep and a wake-up.
  dc__poll_ns(nothing_pending, ev, DC_HOST_SPIN_NS, timeout_ns);
  pthread_mutex_lock(&s->lock);
  event_target_t target = {ev, ev->recorded};
  ++ev->host_waiters;
  dc_status_t st = dc__wait_locked(s, target_done, &target, timeout_ns);
  --ev->host_waiters;
  if (st == DC_OK) {
    st = dc__event_outcome_locked(ev, target.generation);
  } else {
    dc_set_error(st, "%s: the event did not complete within %llu ns", fn,
                 (unsigned long long)timeout_ns);
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

dc_status_t dc_event_elapsed_ns(const dc_event_t* start, const dc_event_t* end,
                                int64_t* out_ns) {
  static const char* fn = "dc_event_elapsed_ns";
  DC_REQUIRE_ARG(out_ns, fn);
  *out_ns = 0;
  DC_RETURN_IF_ERROR(check_event(fn, "start", start));
  DC_RETURN_IF_ERROR(check_event(fn, "end", end));
  if (!(start->flags & DC_EVENT_TIMING) || !(end->flags & DC_EVENT_TIMING)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: '%s' is not a timing event (create it with "
                   "DC_EVENT_TIMING)", fn,
                   (start->flags & DC_EVENT_TIMING) ? "end" : "start");
  }
  if (start->device->context != end->device->context) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the events belong to different contexts", fn);
  }
  dc__scheduler_t* s = sched_of(start);
  pthread_mutex_lock(&s->lock);
  dc_status_t st = DC_OK;
  const dc_event_t* evs[2] = {start, end};
  for (int i = 0; i < 2 && st == DC_OK; ++i) {
    if (evs[i]->recorded == 0 || !latest_done(evs[i])) {
      st = DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "%s: '%s' is %s", fn, i ? "end" : "start",
                   evs[i]->recorded == 0 ? "not recorded" : "still pending");
    } else {
      st = dc__event_outcome_locked(evs[i], evs[i]->recorded);
    }
  }
  if (st == DC_OK) *out_ns = (int64_t)(end->time_ns - start->time_ns);
  pthread_mutex_unlock(&s->lock);
  return st;
}

dc_status_t dc_event_on_complete(dc_event_t* ev, dc_event_callback_t callback,
                                 void* user_data) {
  static const char* fn = "dc_event_on_complete";
  DC_REQUIRE_ARG(callback, fn);
  DC_RETURN_IF_ERROR(check_event(fn, "event", ev));
  dc__scheduler_t* s = sched_of(ev);
  pthread_mutex_lock(&s->lock);
  if (latest_done(ev)) {
    dc_status_t status = dc__event_outcome_locked(ev, ev->recorded);
    pthread_mutex_unlock(&s->lock);
    callback(ev, status, user_data);
    return DC_OK;
  }
  if (ev->callback_count == DC_EVENT_CALLBACKS) {
    pthread_mutex_unlock(&s->lock);
    return DC_FAIL(DC_ERR_RESOURCE_EXHAUSTED,
                   "%s: the event already has %d callbacks pending", fn,
                   DC_EVENT_CALLBACKS);
  }
  ev->callbacks[ev->callback_count++] =
      (dc__event_callback_t){callback, user_data, ev->recorded};
  pthread_mutex_unlock(&s->lock);
  return DC_OK;
}

//===-- The scheduler's pools, one pair per device ----------------------===//

void dc__scheduler_add_device(dc__scheduler_t* s, size_t index,
                              dc_device_t* device) {
  for (int t = 0; t < 2; ++t) {
    s->event_pools[index][t].device = device;
    s->event_pools[index][t].flags = t ? DC_EVENT_TIMING : 0u;
  }
}

dc__event_pool_t* dc__event_pool_of(dc_device_t* device, bool timing) {
  dc_context_t* ctx = device->context;
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (ctx->devices[i] == device) {
      return &ctx->scheduler->event_pools[i][timing ? 1 : 0];
    }
  }
  return NULL;
}

//===-- Generations -----------------------------------------------------===//
//
// Each record of an event is a generation; the scheduler completes it when
// the stream reaches the record (lock held throughout).

bool dc__event_done_locked(const dc_event_t* ev, uint64_t generation) {
  if (generation > ev->recorded) return false;
  for (uint32_t i = 0; i < ev->pending_count; ++i) {
    if (ev->pending[i] == generation) return false;
  }
  return true;
}

bool dc__event_reserve_locked(dc_event_t* ev, uint32_t count) {
  if (count <= ev->pending_capacity) return true;
  dc_allocator_t a = ev->device->context->allocator;
  uint64_t* grown = dc_allocator_malloc(a, count * sizeof(uint64_t));
  if (grown == NULL) return false;
  if (ev->pending_count) {
    memcpy(grown, ev->pending, ev->pending_count * sizeof(uint64_t));
  }
  if (ev->pending) {
    dc_allocator_free(a, ev->pending, ev->pending_capacity * sizeof(uint64_t));
  }
  ev->pending = grown;
  ev->pending_capacity = count;
  return true;
}

uint64_t dc__event_new_generation_locked(dc_event_t* ev) {
  if (ev->pending_count == ev->pending_capacity &&
      !dc__event_reserve_locked(ev, DC_MAX(4u, ev->pending_capacity * 2))) {
    return 0;
  }
  ev->pending[ev->pending_count++] = ++ev->recorded;
  atomic_store_explicit(&ev->recorded_now, ev->recorded,
                        memory_order_relaxed);
  atomic_store_explicit(&ev->pending_now, ev->pending_count,
                        memory_order_release);
  return ev->recorded;
}

dc_status_t dc__event_outcome_locked(const dc_event_t* ev,
                                     uint64_t generation) {
  for (uint32_t i = 0; i < ev->failed_count; ++i) {
    if (ev->failed[i].generation == generation) {
      return dc_set_error(ev->failed[i].status, "%s", ev->message);
    }
  }
  return DC_OK;
}

void dc__event_wake_waiters_locked(dc_event_t* ev) {
  while (ev->waiters != NULL) {
    dc_stream_t* st = ev->waiters;
    ev->waiters = st->wait_next;
    st->wait_next = NULL;
    st->blocked = false;
    dc__stream_make_ready_locked(st);
  }
}

size_t dc__event_complete_locked(dc_event_t* ev, uint64_t generation,
                                 dc_status_t status, const char* message,
                                 dc__event_callback_t* due) {
  dc__scheduler_t* s = ev->device->context->scheduler;
  for (uint32_t i = 0; i < ev->pending_count; ++i) {
    if (ev->pending[i] == generation) {
      ev->pending[i] = ev->pending[--ev->pending_count];
      break;
    }
  }
  if (status != DC_OK) {
    if (ev->failed_count == DC_EVENT_FAILURES) {  // forget the oldest
      memmove(&ev->failed[0], &ev->failed[1],
              (DC_EVENT_FAILURES - 1) * sizeof(ev->failed[0]));
      --ev->failed_count;
    }
    ev->failed[ev->failed_count].generation = generation;
    ev->failed[ev->failed_count++].status = status;
    dc__strlcpy(ev->message, message, sizeof(ev->message));
  }
  if (generation == ev->recorded) ev->time_ns = dc__now_ns();
  dc__event_wake_waiters_locked(ev);
  size_t n = 0;
  for (uint32_t i = 0; i < ev->callback_count;) {
    if (dc__event_done_locked(ev, ev->callbacks[i].generation)) {
      due[n++] = ev->callbacks[i];
      ev->callbacks[i] = ev->callbacks[--ev->callback_count];
    } else {
      ++i;
    }
  }
  if (n > 0) dc_event_retain(ev);  // kept for the callbacks
  atomic_store_explicit(&ev->pending_now, ev->pending_count,
                        memory_order_release);
  if (ev->host_waiters > 0) pthread_cond_broadcast(&s->done_cv);
  return n;
}

void dc__event_run_callbacks(dc_event_t* ev, const dc__event_callback_t* due,
                             size_t count) {
  dc__scheduler_t* s = ev->device->context->scheduler;
  for (size_t i = 0; i < count; ++i) {
    pthread_mutex_lock(&s->lock);
    dc_status_t status = dc__event_outcome_locked(ev, due[i].generation);
    pthread_mutex_unlock(&s->lock);
    due[i].fn(ev, status, due[i].user_data);
  }
  dc_event_release(ev);
}

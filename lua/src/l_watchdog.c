// l_watchdog.c: the engine's time-limit thread (l_watchdog.h).
// SPDX-License-Identifier: MIT
#include "l_watchdog.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "dclua_internal.h"

// How early a wait that the deadline bounds may end and still count as
// ended by it.
#define WAIT_SLACK_NS 1000000u

struct dclua_watchdog_t {
  dc_context_t* context;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;  // on CLOCK_MONOTONIC, dclua_now_ns's clock
  uint64_t deadline_ns;    // guarded by lock; 0: disarmed
  bool fired;              // guarded by lock: since the last arm
  bool quit;               // guarded by lock
};

static void* watch(void* arg) {
  dclua_watchdog_t* w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->quit) {
    if (w->deadline_ns == 0) {
      pthread_cond_wait(&w->changed, &w->lock);
      continue;
    }
    uint64_t now = dclua_now_ns();
    if (now >= w->deadline_ns) {
      w->deadline_ns = 0;  // once: the run is over its limit
      w->fired = true;
      dc_context_interrupt(w->context);
      continue;
    }
    struct timespec at = {.tv_sec = (time_t)(w->deadline_ns / 1000000000u),
                          .tv_nsec = (long)(w->deadline_ns % 1000000000u)};
    pthread_cond_timedwait(&w->changed, &w->lock, &at);
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

dc_status_t dclua_watchdog_create(dc_context_t* context,
                                  dclua_watchdog_t** out_watchdog) {
  *out_watchdog = NULL;
  dclua_watchdog_t* w = calloc(1, sizeof(*w));
  if (w == NULL) {
    return dc_set_error(DC_ERR_OUT_OF_MEMORY, "no memory for a watchdog");
  }
  w->context = context;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->changed, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&w->lock, NULL);
  if (pthread_create(&w->thread, NULL, watch, w) != 0) {
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return dc_set_error(DC_ERR_RESOURCE_EXHAUSTED,
                        "no thread for the time limit's watchdog");
  }
  *out_watchdog = w;
  return DC_OK;
}

void dclua_watchdog_destroy(dclua_watchdog_t* w) {
  if (w == NULL) return;
  pthread_mutex_lock(&w->lock);
  w->quit = true;
  pthread_cond_signal(&w->changed);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->changed);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

void dclua_watchdog_arm(dclua_watchdog_t* w, uint64_t deadline_ns) {
  pthread_mutex_lock(&w->lock);
  w->deadline_ns = deadline_ns;
  if (deadline_ns != 0) w->fired = false;
  pthread_cond_signal(&w->changed);
  pthread_mutex_unlock(&w->lock);
}

bool dclua_watchdog_fired(dclua_watchdog_t* w) {
  pthread_mutex_lock(&w->lock);
  bool fired = w->fired;
  pthread_mutex_unlock(&w->lock);
  return fired;
}

//===-- Waits under the run's time limit --------------------------------===//

uint64_t dclua_wait_budget_ns(lua_State* L, uint64_t timeout_ns,
                              bool* limited) {
  *limited = false;
  uint64_t deadline = dclua_run_deadline_ns(L);
  if (deadline == 0) return timeout_ns;
  uint64_t now = dclua_now_ns();
  uint64_t left = now < deadline ? deadline - now : 0;
  if (left >= timeout_ns) return timeout_ns;  // the caller's is sooner
  *limited = true;
  return left;
}

dc_status_t dclua_wait_ended(lua_State* L, dc_status_t status, bool limited) {
  if (status != DC_ERR_DEADLINE_EXCEEDED || !limited) return status;
  // The work's own DEADLINE_EXCEEDED (a kernel's time limit) may end a
  // wait long before the deadline: only a deadline passed ends the run,
  // give or take a clock tick of the wait's own.
  uint64_t deadline = dclua_run_deadline_ns(L);
  if (deadline == 0 || dclua_now_ns() + WAIT_SLACK_NS < deadline) {
    return status;
  }
  return dclua_raise_time_limit(L);
}

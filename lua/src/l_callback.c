// l_callback.c: Lua functions called for engine threads, run on the Lua
// thread (see "Lua callbacks from engine threads" in dclua_internal.h).
//
// The queue is a mutex-protected list of calls. An engine thread appends a
// call and signals |posted|; a blocking caller then sleeps on |finished|
// until the Lua thread has run its call. The Lua thread takes calls only
// inside dclua_poll() and dclua_wait(); the latter moves the blocking
// wait itself onto a short-lived thread so that the Lua thread stays free
// to run calls until the wait ends.
//
// Registry references can only be dropped on the Lua thread, so a
// callback released on an engine thread leaves its reference in the
// queue's |dead| list, which the Lua thread clears on its next poll.
//
// Running the queued calls never raises. A blocking caller sleeps until
// its call is marked finished, and dclua_wait's waiter thread points at
// the waiting frame, so an error that escaped from there would leave an
// engine thread blocked forever and the waiter writing into a dead
// frame; a posted call that escaped would leak with its callback. So a
// call runs under lua_pcall, and what it raised is turned into a status
// and a message by dclua_describe_error, which runs script code (a
// __tostring, an __index) only under protection and falls back to a
// fixed text when that fails. Only the error value of a posted call is
// raised, by dclua_poll or dclua_wait, once every frame another thread
// knows of is gone.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dclua_internal.h"


typedef struct call_t {
  struct call_t* next;
  dclua_callback_t* callback;  // retained while queued
  dclua_push_fn_t push;
  void* user_data;
  void (*done)(void* user_data);  // posted calls
  bool blocking;
  // Blocking calls: set by the Lua thread under the lock.
  bool finished;
  dc_status_t status;
  char message[512];
} call_t;

struct dclua_queue_t {
  pthread_mutex_t lock;
  pthread_cond_t posted;    // the Lua thread: a call or a wait's end
  pthread_cond_t finished;  // blocking callers: a call ran
  call_t* head;
  call_t* tail;
  bool closed;
  atomic_uint refs;  // the state's and one per callback
  atomic_uint live;  // callbacks not yet released
  int* dead;         // registry refs to drop on the Lua thread
  size_t dead_count;
  size_t dead_capacity;
  call_t* running;  // the call invoke() is to run (Lua thread only)
};

struct dclua_callback_t {
  dclua_queue_t* queue;
  atomic_uint refs;
  int ref;  // the function, in the registry
  char what[96];
};

//===-- The queue -------------------------------------------------------===//

dclua_queue_t* dclua_queue_create(void) {
  dclua_queue_t* q = calloc(1, sizeof(*q));
  if (q == NULL) return NULL;
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->posted, NULL);
  pthread_cond_init(&q->finished, NULL);
  atomic_init(&q->refs, 1u);
  atomic_init(&q->live, 0u);
  return q;
}

static void queue_release(dclua_queue_t* q) {
  if (atomic_fetch_sub(&q->refs, 1u) != 1u) return;
  pthread_mutex_destroy(&q->lock);
  pthread_cond_destroy(&q->posted);
  pthread_cond_destroy(&q->finished);
  free(q->dead);
  free(q);
}

// Ends a posted call that will not run or has run: frees what it carries.
static void finish_posted(call_t* call) {
  if (call->done != NULL) call->done(call->user_data);
  dclua_callback_release(call->callback);
  free(call);
}

void dclua_queue_close(dclua_queue_t* q) {
  pthread_mutex_lock(&q->lock);
  q->closed = true;
  call_t* pending = q->head;
  q->head = q->tail = NULL;
  // Blocking callers own their calls: wake them to see the cancellation.
  call_t* posted = NULL;
  while (pending != NULL) {
    call_t* next = pending->next;
    if (pending->blocking) {
      pending->status = DC_ERR_CANCELLED;
      snprintf(pending->message, sizeof(pending->message),
               "%s: the Lua state closed before it could run",
               pending->callback->what);
      pending->finished = true;
    } else {
      pending->next = posted;
      posted = pending;
    }
    pending = next;
  }
  q->dead_count = 0;  // the registry goes with the state
  pthread_cond_broadcast(&q->finished);
  pthread_mutex_unlock(&q->lock);
  while (posted != NULL) {
    call_t* next = posted->next;
    finish_posted(posted);
    posted = next;
  }
  queue_release(q);
}

// Appends |call| unless the queue is closed. Called with the lock held.
static bool enqueue_locked(dclua_queue_t* q, call_t* call) {
  if (q->closed) return false;
  call->next = NULL;
  if (q->tail != NULL) {
    q->tail->next = call;
  } else {
    q->head = call;
  }
  q->tail = call;
  pthread_cond_signal(&q->posted);
  return true;
}

//===-- Callbacks -------------------------------------------------------===//

bool dclua_is_callable(lua_State* L, int index) {
  if (lua_isfunction(L, index)) return true;
  if (luaL_getmetafield(L, index, "__call") == LUA_TNIL) return false;
  lua_pop(L, 1);
  return true;
}

dclua_callback_t* dclua_callback_create(lua_State* L, int index,
                                        const char* what) {
  index = lua_absindex(L, index);
  if (!dclua_is_callable(L, index)) luaL_typeerror(L, index, "function");
  dclua_queue_t* q = dclua_state_queue(L);
  if (q == NULL) luaL_error(L, "dc: the Lua state is closing");
  lua_pushvalue(L, index);
  int ref = luaL_ref(L, LUA_REGISTRYINDEX);  // may raise: nothing to lose
  dclua_callback_t* cb = malloc(sizeof(*cb));
  if (cb == NULL) {
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    luaL_error(L, "dc: out of memory");
  }
  cb->ref = ref;
  cb->queue = q;
  atomic_init(&cb->refs, 1u);
  snprintf(cb->what, sizeof(cb->what), "%s", what != NULL ? what : "callback");
  atomic_fetch_add(&q->refs, 1u);
  atomic_fetch_add(&q->live, 1u);
  return cb;
}

void dclua_callback_retain(dclua_callback_t* cb) {
  if (cb != NULL) atomic_fetch_add(&cb->refs, 1u);
}

void dclua_callback_release(dclua_callback_t* cb) {
  if (cb == NULL || atomic_fetch_sub(&cb->refs, 1u) != 1u) return;
  dclua_queue_t* q = cb->queue;
  pthread_mutex_lock(&q->lock);
  if (!q->closed) {
    if (q->dead_count == q->dead_capacity) {
      size_t capacity = q->dead_capacity ? q->dead_capacity * 2 : 16;
      int* grown = realloc(q->dead, capacity * sizeof(*grown));
      if (grown != NULL) {
        q->dead = grown;
        q->dead_capacity = capacity;
      }
    }
    // Out of memory: the function stays referenced until the state closes.
    if (q->dead_count < q->dead_capacity) q->dead[q->dead_count++] = cb->ref;
  }
  pthread_mutex_unlock(&q->lock);
  atomic_fetch_sub(&q->live, 1u);
  free(cb);
  queue_release(q);
}

dc_status_t dclua_callback_call(dclua_callback_t* cb, dclua_push_fn_t push,
                                void* user_data) {
  dclua_queue_t* q = cb->queue;
  call_t call = {.callback = cb, .push = push, .user_data = user_data,
                 .blocking = true};
  dclua_callback_retain(cb);
  pthread_mutex_lock(&q->lock);
  if (enqueue_locked(q, &call)) {
    while (!call.finished) pthread_cond_wait(&q->finished, &q->lock);
  } else {
    call.status = DC_ERR_CANCELLED;
    snprintf(call.message, sizeof(call.message),
             "%s: the Lua state is closed", cb->what);
  }
  pthread_mutex_unlock(&q->lock);
  dclua_callback_release(cb);
  if (call.status == DC_OK) return DC_OK;
  return dc_set_error(call.status, "%s", call.message);
}

void dclua_callback_post(dclua_callback_t* cb, dclua_push_fn_t push,
                         void (*done)(void* user_data), void* user_data) {
  call_t* call = calloc(1, sizeof(*call));
  if (call == NULL) {
    // Nothing can carry the call: dropping it is all that is left, and
    // |done| still frees what it owns.
    if (done != NULL) done(user_data);
    return;
  }
  dclua_callback_retain(cb);
  call->callback = cb;
  call->push = push;
  call->done = done;
  call->user_data = user_data;
  pthread_mutex_lock(&cb->queue->lock);
  bool queued = enqueue_locked(cb->queue, call);
  pthread_mutex_unlock(&cb->queue->lock);
  if (!queued) finish_posted(call);
}

//===-- The Lua thread's side -------------------------------------------===//

// Message handler: a traceback for strings; error objects pass unchanged.
static int traceback(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING) {
    luaL_traceback(L, L, lua_tostring(L, 1), 1);
  }
  return 1;
}

// [-0, +0, e]  The protected part of a call: pushes the function of the
// queue's |running| call and its arguments, and calls it. It reads the
// call from the queue, not from its arguments, and only once, so that a
// script that got hold of this function (through the debug library) can
// make it do nothing but raise.
static int invoke(lua_State* L) {
  dclua_queue_t* q = dclua_state_queue(L);
  call_t* call = q != NULL ? q->running : NULL;
  if (call == NULL) return luaL_error(L, "dc: no callback to run");
  q->running = NULL;
  lua_rawgeti(L, LUA_REGISTRYINDEX, call->callback->ref);
  int nargs = call->push != NULL ? call->push(L, call->user_data) : 0;
  lua_call(L, nargs, 0);
  return 0;
}

// Calls |call|'s function under protection, with a traceback for string
// errors. Returns DC_OK, leaving the stack as it was; or the status of
// what the function raised, with the error value pushed and a message in
// |message|. Never raises.
// [-0, +(0|1), -]
static dc_status_t protected_call(lua_State* L, call_t* call, char* message,
                                  size_t size) {
  dclua_queue_t* q = call->callback->queue;
  int base = lua_gettop(L);
  if (!lua_checkstack(L, 4)) {  // the stack is full: nothing can run
    snprintf(message, size, "Lua stack overflow");
    return DC_ERR_RESOURCE_EXHAUSTED;
  }
  lua_pushcfunction(L, traceback);
  lua_pushcfunction(L, invoke);
  q->running = call;
  int rc = lua_pcall(L, 0, 0, base + 1);
  q->running = NULL;
  if (rc == LUA_OK) {
    lua_settop(L, base);
    return DC_OK;
  }
  lua_remove(L, base + 1);  // the handler; the error value stays
  return dclua_describe_error(L, -1, message, size);
}

// Runs |call| on the Lua thread; never raises. A blocking call gets its
// outcome; a posted call's error value is left on the stack (returns
// true) for the caller to raise later, after a lua_warning now.
static bool run_call(lua_State* L, call_t* call) {
  dclua_queue_t* q = call->callback->queue;
  int base = lua_gettop(L);
  char detail[sizeof(call->message) - sizeof(call->callback->what) - 4];
  dc_status_t status = protected_call(L, call, detail, sizeof(detail));
  if (call->blocking) {
    char message[sizeof(call->message)] = "";
    if (status != DC_OK) {
      snprintf(message, sizeof(message), "%s: %s", call->callback->what,
               detail);
    }
    lua_settop(L, base);
    pthread_mutex_lock(&q->lock);
    call->status = status;
    memcpy(call->message, message, sizeof(message));
    call->finished = true;
    pthread_cond_broadcast(&q->finished);
    pthread_mutex_unlock(&q->lock);
    return false;  // |call| belongs to its caller again
  }
  if (status != DC_OK) {
    lua_warning(L, call->callback->what, 1);
    lua_warning(L, ": ", 1);
    lua_warning(L, detail, 0);
  }
  finish_posted(call);
  return lua_gettop(L) > base;  // no value when the stack was full
}

// Takes the queued calls and the dead references. Called with the lock.
static call_t* take_locked(dclua_queue_t* q, int* dead, size_t* dead_count,
                           size_t dead_max) {
  call_t* calls = q->head;
  q->head = q->tail = NULL;
  *dead_count = q->dead_count < dead_max ? q->dead_count : dead_max;
  if (*dead_count > 0) {
    memcpy(dead, q->dead + (q->dead_count - *dead_count),
           *dead_count * sizeof(*dead));
  }
  q->dead_count -= *dead_count;
  return calls;
}

// Runs |calls| and forgets |dead|. Returns how many calls ran; the first
// error value of a posted call is left on the stack, *|failed| set (later
// errors are only warned about).
static int run_taken(lua_State* L, call_t* calls, const int* dead,
                     size_t dead_count, bool* failed) {
  // luaL_unref only writes slots that exist: it allocates nothing and
  // cannot raise, given a slot of stack (without one, the functions stay
  // referenced until the state closes).
  if (dead_count > 0 && lua_checkstack(L, 2)) {
    for (size_t i = 0; i < dead_count; ++i) {
      luaL_unref(L, LUA_REGISTRYINDEX, dead[i]);
    }
  }
  int ran = 0;
  while (calls != NULL) {
    call_t* next = calls->next;  // |calls| may be freed by run_call
    if (run_call(L, calls)) {
      if (*failed) {
        lua_pop(L, 1);
      } else {
        *failed = true;
      }
    }
    calls = next;
    ++ran;
  }
  return ran;
}

int dclua_poll(lua_State* L) {
  dclua_queue_t* q = dclua_state_queue(L);
  if (q == NULL) return 0;  // the state is closing: nothing runs any more
  int total = 0;
  bool failed = false;
  for (;;) {
    int dead[64];
    size_t dead_count = 0;
    pthread_mutex_lock(&q->lock);
    call_t* calls = take_locked(q, dead, &dead_count, 64);
    pthread_mutex_unlock(&q->lock);
    if (calls == NULL && dead_count == 0) break;
    total += run_taken(L, calls, dead, dead_count, &failed);
  }
  if (failed) lua_error(L);
  return total;
}

// The wait that dclua_wait() moves off the Lua thread.
typedef struct waiter_t {
  dclua_queue_t* queue;
  dc_status_t (*wait)(void* user_data);
  void* user_data;
  dc_status_t status;
  bool done;  // under the queue's lock
  char message[1024];
} waiter_t;

static void* waiter_main(void* arg) {
  waiter_t* w = arg;
  dc_status_t status = w->wait(w->user_data);
  pthread_mutex_lock(&w->queue->lock);
  w->status = status;
  if (status != DC_OK) snprintf(w->message, sizeof(w->message), "%s",
                                dc_last_error());
  w->done = true;
  pthread_cond_broadcast(&w->queue->posted);
  pthread_mutex_unlock(&w->queue->lock);
  return NULL;
}

dc_status_t dclua_wait(lua_State* L, dc_status_t (*wait)(void* user_data),
                       void* user_data) {
  dclua_queue_t* q = dclua_state_queue(L);
  if (q == NULL) return wait(user_data);  // closing: calls are refused
  dclua_poll(L);
  if (atomic_load(&q->live) == 0) return wait(user_data);
  waiter_t w = {.queue = q, .wait = wait, .user_data = user_data};
  pthread_t thread;
  if (pthread_create(&thread, NULL, waiter_main, &w) != 0) {
    return dc_set_error(DC_ERR_RESOURCE_EXHAUSTED,
                        "dc: cannot start a thread to wait on");
  }
  // From here to the join nothing may raise: the waiter thread points at
  // |w| in this frame (run_taken never raises).
  bool failed = false;
  for (;;) {
    int dead[64];
    size_t dead_count = 0;
    pthread_mutex_lock(&q->lock);
    while (q->head == NULL && q->dead_count == 0 && !w.done) {
      pthread_cond_wait(&q->posted, &q->lock);
    }
    bool done = w.done;
    call_t* calls = take_locked(q, dead, &dead_count, 64);
    pthread_mutex_unlock(&q->lock);
    run_taken(L, calls, dead, dead_count, &failed);
    if (done && calls == NULL && dead_count == 0) break;
  }
  pthread_join(thread, NULL);
  if (failed) lua_error(L);  // a posted call's error, after the wait
  if (w.status != DC_OK) dc_set_error(w.status, "%s", w.message);
  return w.status;
}

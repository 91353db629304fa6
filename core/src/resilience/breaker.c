// breaker.c: circuit breakers (closed, open, half-open) over a window of
// outcomes (breaker_window.c); the registry of named breakers is in
// breaker_registry.c.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "breaker_internal.h"
#include "breaker_window.h"
#include "context_internal.h"

#define NAME_SIZE DC__BREAKER_NAME_SIZE
#define REASON_SIZE 96
#define WHY_SIZE 256

// With neither a count nor a ratio given, a breaker opens when half the
// calls of its window fail, once the window holds 20: random faults that
// retries absorb stay far below that (at a 10% fault rate, 10 failures in
// the first 20 calls has a probability of about 1e-5), while a device
// that fails everything is cut off at its 20th call (a lost device at its
// first, dc_breaker_trip).
#define DEFAULT_RATIO 0.5
#define DEFAULT_MIN_CALLS 20u
#define DEFAULT_WINDOW_NS 10000000000ull  // 10 s
#define DEFAULT_OPEN_NS 1000000000ull     // 1 s
#define DEFAULT_PROBES 1u
// Slow calls open a breaker only when the whole window is slow, unless
// the params say otherwise: slowness alone rarely means a broken device.
#define DEFAULT_SLOW_RATIO 1.0

struct dc_breaker_t {
  dc__resource_t header;  // first (resource.h)
  dc_context_t* ctx;
  // Owned by the context's registry, whose reference holds no hold on the
  // context (every other one holds one); otherwise the breaker holds one
  // from create to destroy.
  bool in_registry;
  char name[NAME_SIZE];

  // While the breaker is closed, the permit dc_breaker_acquire() hands
  // out (epoch << 1, never 0); 0 otherwise. Written under the lock at
  // every transition, read without it: acquiring from a closed breaker
  // changes nothing, so it takes neither the lock nor the clock.
  _Atomic uint64_t closed_permit;
  // Copies of the params the lock-free paths read: the failure codes, the
  // slow-call time, and whether a quick success may skip the lock (a
  // time window and no ratio: then a success changes no state).
  _Atomic uint64_t failure_codes;
  _Atomic uint64_t slow_call_ns;
  atomic_bool fast_success;
  dc__clock_fn_t clock;
  void* clock_user;

  pthread_mutex_t lock;  // guards everything below
  dc_breaker_params_t params;  // resolved
  dc_breaker_state_t state;
  uint64_t epoch;  // counts transitions; permits carry it
  uint64_t since_ns;
  uint64_t open_until_ns;
  char open_reason[REASON_SIZE];  // " after 5 failures in 10 s"
  dc__window_t window;
  uint32_t probes_in_flight;
  uint32_t probes_succeeded;
  _Atomic uint64_t successes;  // also counted without the lock
  uint64_t failures;
  uint64_t ignored;
  uint64_t slow_calls;
  uint64_t rejections;
  uint64_t opens;
  uint64_t half_opens;
  uint64_t closes;
};

// Transitions are gathered under the lock and announced after it, with
// the hook as it was then.
typedef struct transition_t {
  dc_breaker_state_t from;
  dc_breaker_state_t to;
  char why[WHY_SIZE];
} transition_t;

typedef struct transitions_t {
  size_t count;
  transition_t items[2];
  dc_breaker_transition_fn_t hook;
  void* user_data;
} transitions_t;

//===-- Parameters ------------------------------------------------------===//

// What says something about the health of the guarded device or kernel:
// the transient and device classes (dc/status.h), but another breaker's
// refusal.
uint64_t dc_breaker_default_failure_codes(void) {
  static const dc_status_t codes[] = {
#define CODE_(name, value, cls, desc) DC_##name,
      DC_STATUS_MAP(CODE_)
#undef CODE_
  };
  uint64_t mask = 0;
  for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); ++i) {
    dc_status_class_t cls = dc_status_class(codes[i]);
    if (cls == DC_STATUS_CLASS_TRANSIENT || cls == DC_STATUS_CLASS_DEVICE) {
      mask |= DC_STATUS_BIT(codes[i]);
    }
  }
  return mask & ~DC_STATUS_BIT(DC_ERR_CIRCUIT_OPEN);
}

const char* dc_breaker_state_name(dc_breaker_state_t state) {
  switch (state) {
    case DC_BREAKER_CLOSED: return "closed";
    case DC_BREAKER_OPEN: return "open";
    case DC_BREAKER_HALF_OPEN: return "half_open";
  }
  return "unknown";
}

dc_status_t dc_breaker_params_check(const dc_breaker_params_t* params) {
  static const char* fn = "dc_breaker_params_check";
  DC_REQUIRE_ARG(params, fn);
  const dc_breaker_params_t* p = params;
  if (p->failure_ratio != 0.0 &&
      !(isfinite(p->failure_ratio) && p->failure_ratio > 0.0 &&
        p->failure_ratio <= 1.0)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: failure_ratio %g is invalid (0 for off, or in (0, 1])",
                   fn, p->failure_ratio);
  }
  if (p->window_ns != 0 && p->window_ns < DC__WINDOW_BUCKETS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: window_ns %llu is too short (at least %d ns: the "
                   "window is %d buckets)",
                   fn, (unsigned long long)p->window_ns, DC__WINDOW_BUCKETS,
                   DC__WINDOW_BUCKETS);
  }
  if (p->window_calls > DC_BREAKER_MAX_WINDOW_CALLS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: window_calls %u is too many (at most %u)", fn,
                   (unsigned)p->window_calls, DC_BREAKER_MAX_WINDOW_CALLS);
  }
  if (p->slow_call_ratio != 0.0 &&
      !(isfinite(p->slow_call_ratio) && p->slow_call_ratio > 0.0 &&
        p->slow_call_ratio <= 1.0)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: slow_call_ratio %g is invalid (0 for the default, "
                   "or in (0, 1])", fn, p->slow_call_ratio);
  }
  if (p->slow_call_ratio != 0.0 && p->slow_call_ns == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: slow_call_ratio needs slow_call_ns (which calls "
                   "are slow)", fn);
  }
  if ((p->failure_codes & DC_STATUS_BIT(DC_OK)) != 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: failure_codes includes OK", fn);
  }
  return DC_OK;
}

static void resolve_params(const dc_breaker_params_t* in,
                           dc_breaker_params_t* out) {
  dc_breaker_params_t p = {0};
  if (in != NULL) p = *in;
  if (!(p.failure_ratio > 0.0 && p.failure_ratio <= 1.0)) {
    p.failure_ratio = 0.0;
  }
  if (p.failure_threshold == 0 && p.failure_ratio == 0.0) {
    p.failure_ratio = DEFAULT_RATIO;
  }
  if (p.min_calls == 0) p.min_calls = DEFAULT_MIN_CALLS;
  if (p.window_ns == 0) p.window_ns = DEFAULT_WINDOW_NS;
  if (p.window_ns < DC__WINDOW_BUCKETS) p.window_ns = DC__WINDOW_BUCKETS;
  if (p.slow_call_ns == 0) {
    p.slow_call_ratio = 0.0;
  } else if (!(p.slow_call_ratio > 0.0 && p.slow_call_ratio <= 1.0)) {
    p.slow_call_ratio = DEFAULT_SLOW_RATIO;
  }
  if (p.open_ns == 0) p.open_ns = DEFAULT_OPEN_NS;
  if (p.half_open_probes == 0) p.half_open_probes = DEFAULT_PROBES;
  p.failure_codes &= ~DC_STATUS_BIT(DC_OK);
  if (p.failure_codes == 0) {
    p.failure_codes = dc_breaker_default_failure_codes();
  }
  *out = p;
}

//===-- Transitions -----------------------------------------------------===//

static uint64_t now_of(const dc_breaker_t* b) {
  return b->clock != NULL ? b->clock(b->clock_user) : dc__now_ns();
}

static transition_t* begin_transition(dc_breaker_t* b, transitions_t* t,
                                      dc_breaker_state_t to,
                                      uint64_t since_ns) {
  transition_t* tr = &t->items[t->count++];
  tr->from = b->state;
  tr->to = to;
  tr->why[0] = '\0';
  t->hook = b->params.on_transition;
  t->user_data = b->params.user_data;
  b->state = to;
  b->epoch += 1;
  atomic_store_explicit(&b->closed_permit,
                        to == DC_BREAKER_CLOSED ? b->epoch << 1 : 0,
                        memory_order_release);
  b->since_ns = since_ns;
  b->probes_in_flight = 0;
  b->probes_succeeded = 0;
  return tr;
}

// Opens the breaker at |now|; |reason| continues "is open for another
// 812 ms", e.g. " after 5 failures in 10 s".
static transition_t* open_now(dc_breaker_t* b, transitions_t* t,
                              uint64_t now, const char* reason) {
  transition_t* tr = begin_transition(b, t, DC_BREAKER_OPEN, now);
  b->open_until_ns = now > UINT64_MAX - b->params.open_ns
                         ? UINT64_MAX
                         : now + b->params.open_ns;
  dc__strlcpy(b->open_reason, reason, sizeof(b->open_reason));
  b->opens += 1;
  return tr;
}

static transition_t* close_now(dc_breaker_t* b, transitions_t* t,
                               uint64_t now) {
  transition_t* tr = begin_transition(b, t, DC_BREAKER_CLOSED, now);
  dc__window_clear(&b->window);
  b->closes += 1;
  return tr;
}

// Moves an open breaker whose time is up to half-open; the half-open
// period starts when the open one ended.
static void advance(dc_breaker_t* b, transitions_t* t, uint64_t now) {
  if (b->state != DC_BREAKER_OPEN || now < b->open_until_ns) return;
  transition_t* tr =
      begin_transition(b, t, DC_BREAKER_HALF_OPEN, b->open_until_ns);
  b->half_opens += 1;
  char open_for[32];
  dc__format_duration(b->params.open_ns, open_for, sizeof(open_for));
  snprintf(tr->why, sizeof(tr->why),
           "is half-open after %s open: letting %u probe%s through",
           open_for, b->params.half_open_probes,
           b->params.half_open_probes == 1 ? "" : "s");
}

// Announces |t| after the lock is released: the log and the hook.
static void announce(dc_breaker_t* b, const transitions_t* t) {
  for (size_t i = 0; i < t->count; ++i) {
    const transition_t* tr = &t->items[i];
    DC_LOG(b->ctx, DC_LOG_WARN, "breaker", "circuit '%s' %s", b->name,
           tr->why);
    if (t->hook != NULL) t->hook(b, tr->from, tr->to, t->user_data);
  }
}

// " in 10 s" or " in the last 100 calls": the window, for messages.
static void window_words(const dc_breaker_params_t* p, char* buf,
                         size_t size) {
  if (p->window_calls > 0) {
    snprintf(buf, size, " in the last %u calls", (unsigned)p->window_calls);
    return;
  }
  char window[32];
  dc__format_duration(p->window_ns, window, sizeof(window));
  snprintf(buf, size, " in %s", window);
}

// Opens a closed breaker if the window has reached a threshold.
static void check_thresholds(dc_breaker_t* b, transitions_t* t, uint64_t now,
                             dc_status_t last) {
  dc__window_totals_t w = dc__window_totals(&b->window, now);
  const dc_breaker_params_t* p = &b->params;
  bool enough = w.calls >= p->min_calls;
  char reason[REASON_SIZE];
  int n;
  if (p->failure_threshold > 0 && w.failures >= p->failure_threshold) {
    n = snprintf(reason, sizeof(reason), " after %u failure%s", w.failures,
                 w.failures == 1 ? "" : "s");
  } else if (p->failure_ratio > 0.0 && enough &&
             (double)w.failures / (double)w.calls >= p->failure_ratio) {
    n = snprintf(reason, sizeof(reason), " after %u of %u calls failed",
                 w.failures, w.calls);
  } else if (p->slow_call_ratio > 0.0 && enough &&
             (double)w.slow / (double)w.calls >= p->slow_call_ratio) {
    n = snprintf(reason, sizeof(reason), " after %u of %u calls were slow",
                 w.slow, w.calls);
  } else {
    return;
  }
  window_words(p, reason + n, sizeof(reason) - (size_t)n);
  transition_t* tr = open_now(b, t, now, reason);
  snprintf(tr->why, sizeof(tr->why), "opened%s (last: %s)", reason,
           dc_status_name(last));
}

//===-- Breakers --------------------------------------------------------===//

static bool is_breaker(const dc_breaker_t* b) {
  return dc__resource_live(DC__RES(b), &dc__breaker_type);
}

#define REQUIRE_BREAKER(b, fn_name)                                     \
  DC_RETURN_IF_ERROR(dc__resource_check((fn_name), "breaker", DC__RES(b), \
                                        &dc__breaker_type))

dc_status_t dc__breaker_check_name(const char* name, const char* fn) {
  size_t length = strlen(name);
  if (length == 0 || length >= NAME_SIZE) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: name '%s' is invalid (1 to %d bytes)", fn, name,
                   NAME_SIZE - 1);
  }
  return DC_OK;
}

dc_status_t dc__breaker_checked_params(const dc_breaker_params_t* params,
                                       const char* fn) {
  if (params == NULL) return DC_OK;
  dc_status_t st = dc_breaker_params_check(params);
  if (st != DC_OK) return DC_FAIL(st, "%s: %s", fn, dc_last_error());
  return DC_OK;
}

// Gives |b| the resolved |params| and an empty window of their shape
// (lock held, or |b| not yet shared).
static dc_status_t apply_params(dc_breaker_t* b,
                                const dc_breaker_params_t* params) {
  dc_breaker_params_t p;
  resolve_params(params, &p);
  DC_RETURN_IF_ERROR(dc__window_configure(&b->window, b->ctx->allocator,
                                          p.window_calls, p.window_ns));
  b->params = p;
  atomic_store(&b->failure_codes, p.failure_codes);
  atomic_store(&b->slow_call_ns, p.slow_call_ns);
  atomic_store(&b->fast_success, p.failure_ratio == 0.0 &&
                                     p.slow_call_ratio == 0.0 &&
                                     p.window_calls == 0);
  return DC_OK;
}

dc_status_t dc__breaker_new(dc_context_t* ctx, const char* name,
                            const dc_breaker_params_t* params,
                            bool in_registry, dc_breaker_t** out) {
  dc_breaker_t* b = dc__object_cache_alloc(&ctx->breaker_cache);
  if (b == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "cannot allocate the breaker '%s'", name);
  }
  b->ctx = ctx;
  dc__strlcpy(b->name, name, sizeof(b->name));
  dc_status_t st = apply_params(b, params);
  if (st != DC_OK) {
    dc__object_cache_free(&ctx->breaker_cache, b);
    return st;
  }
  b->in_registry = in_registry;
  pthread_mutex_init(&b->lock, NULL);
  b->state = DC_BREAKER_CLOSED;
  b->epoch = 1;
  atomic_init(&b->closed_permit, b->epoch << 1);
  b->since_ns = now_of(b);
  if (!in_registry) dc__context_ref(ctx);  // the breaker's hold
  dc__resource_init(&b->header, &dc__breaker_type);
  *out = b;
  return DC_OK;
}

static void destroy_breaker(dc__resource_t* r) {
  dc_breaker_t* b = (dc_breaker_t*)r;
  dc_context_t* ctx = b->ctx;
  bool in_registry = b->in_registry;
  dc__window_destroy(&b->window, ctx->allocator);
  pthread_mutex_destroy(&b->lock);
  dc__object_cache_free(&ctx->breaker_cache, b);
  if (!in_registry) dc__context_unref(ctx);  // last: may destroy the context
}

// A breaker of the registry must not keep the context that owns the
// registry alive, but a host's reference to it must (see
// dc__resource_type_t.pinned_context).
static dc_context_t* pinned_context(const dc__resource_t* r) {
  const dc_breaker_t* b = (const dc_breaker_t*)r;
  return b->in_registry ? b->ctx : NULL;
}

const dc__resource_type_t dc__breaker_type = {
    .name = "breaker",
    .destroy = destroy_breaker,
    .pinned_context = pinned_context,
};
DC__RESOURCE_FIRST(dc_breaker_t, header);

size_t dc__breaker_object_size(void) { return sizeof(dc_breaker_t); }

dc_status_t dc_breaker_create(dc_context_t* ctx, const char* name,
                              const dc_breaker_params_t* params,
                              dc_breaker_t** out_breaker) {
  static const char* fn = "dc_breaker_create";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  DC_RETURN_IF_ERROR(dc__breaker_check_name(name, fn));
  DC_RETURN_IF_ERROR(dc__breaker_checked_params(params, fn));
  dc_breaker_params_t defaults;
  if (params == NULL) {
    defaults = dc__breaker_context_defaults(ctx);
    params = &defaults;
  }
  return dc__breaker_new(ctx, name, params, false, out_breaker);
}

void dc_breaker_retain(dc_breaker_t* b) {
  dc__resource_retain(DC__RES(b), &dc__breaker_type);
}

void dc_breaker_release(dc_breaker_t* b) {
  dc__resource_release(DC__RES(b), &dc__breaker_type);
}

const char* dc_breaker_name(const dc_breaker_t* b) {
  return is_breaker(b) ? b->name : "";
}

void dc__breaker_set_clock(dc_breaker_t* b, dc__clock_fn_t now_ns,
                           void* user_data) {
  pthread_mutex_lock(&b->lock);
  b->clock = now_ns;
  b->clock_user = user_data;
  b->since_ns = now_of(b);
  pthread_mutex_unlock(&b->lock);
}

dc_status_t dc_breaker_set_params(dc_breaker_t* b,
                                  const dc_breaker_params_t* params) {
  static const char* fn = "dc_breaker_set_params";
  REQUIRE_BREAKER(b, fn);
  DC_RETURN_IF_ERROR(dc__breaker_checked_params(params, fn));
  dc_breaker_params_t defaults;
  if (params == NULL) {
    defaults = dc__breaker_context_defaults(b->ctx);
    params = &defaults;
  }
  pthread_mutex_lock(&b->lock);
  dc_status_t st = apply_params(b, params);
  pthread_mutex_unlock(&b->lock);
  return st;
}

dc_status_t dc_breaker_acquire(dc_breaker_t* b,
                               dc_breaker_permit_t* out_permit) {
  static const char* fn = "dc_breaker_acquire";
  DC_REQUIRE_ARG(out_permit, fn);
  *out_permit = DC_BREAKER_NO_PERMIT;
  REQUIRE_BREAKER(b, fn);
  uint64_t closed = atomic_load_explicit(&b->closed_permit,
                                         memory_order_acquire);
  if (closed != 0) {  // as if acquired under the lock just before a change
    *out_permit = closed;
    return DC_OK;
  }
  transitions_t t = {0};
  char refusal[WHY_SIZE] = "";
  pthread_mutex_lock(&b->lock);
  uint64_t now = now_of(b);
  advance(b, &t, now);
  switch (b->state) {
    case DC_BREAKER_CLOSED:
      *out_permit = b->epoch << 1;
      break;
    case DC_BREAKER_HALF_OPEN:
      if (b->probes_in_flight + b->probes_succeeded <
          b->params.half_open_probes) {
        b->probes_in_flight += 1;
        *out_permit = (b->epoch << 1) | 1u;
        break;
      }
      b->rejections += 1;
      snprintf(refusal, sizeof(refusal),
               "circuit '%s' is half-open and its %u probe%s taken", b->name,
               b->params.half_open_probes,
               b->params.half_open_probes == 1 ? " is" : "s are");
      break;
    case DC_BREAKER_OPEN: {
      b->rejections += 1;
      uint64_t left = b->open_until_ns - now;  // > 0: advance() ran
      unsigned long long ms = (unsigned long long)((left + 999999u) / 1000000u);
      snprintf(refusal, sizeof(refusal),
               "circuit '%s' is open for another %llu ms%s", b->name, ms,
               b->open_reason);
      break;
    }
  }
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
  if (refusal[0] != '\0') {
    return DC_FAIL(DC_ERR_CIRCUIT_OPEN, "%s", refusal);
  }
  return DC_OK;
}

typedef enum outcome_e {
  OUTCOME_SUCCESS,
  OUTCOME_FAILURE,
  OUTCOME_IGNORED,
} outcome_t;

static outcome_t classify(const dc_breaker_t* b, dc_status_t status) {
  if (status == DC_OK) return OUTCOME_SUCCESS;
  unsigned code = (unsigned)status;
  if (code >= 64) code = DC_ERR_UNKNOWN;
  return (atomic_load_explicit(&b->failure_codes, memory_order_relaxed) &
          DC_STATUS_BIT(code)) != 0
             ? OUTCOME_FAILURE
             : OUTCOME_IGNORED;
}

// Counts a quick success of an ordinary permit on a closed breaker
// without the lock, when it can: with a time window and no ratio, a
// success changes no state, only counters. Returns false to take the
// locked path. Racing a transition costs at most one success counted in a
// window about to be emptied, or one moment late.
static bool record_fast_success(dc_breaker_t* b, dc_breaker_permit_t permit,
                                uint64_t now) {
  if ((permit & 1u) != 0 ||
      !atomic_load_explicit(&b->fast_success, memory_order_relaxed) ||
      atomic_load_explicit(&b->closed_permit, memory_order_acquire) == 0 ||
      !dc__window_add_success_fast(&b->window, now)) {
    return false;
  }
  atomic_fetch_add_explicit(&b->successes, 1, memory_order_relaxed);
  return true;
}

// Moves a half-open breaker by the outcome of one of its probes: a slow
// success is no sign of recovery.
static void record_probe(dc_breaker_t* b, transitions_t* t, uint64_t now,
                         outcome_t kind, bool slow, dc_status_t outcome) {
  b->probes_in_flight -= 1;
  if (kind == OUTCOME_SUCCESS && !slow) {
    b->probes_succeeded += 1;
    if (b->probes_succeeded >= b->params.half_open_probes) {
      uint32_t n = b->probes_succeeded;
      transition_t* tr = close_now(b, t, now);
      snprintf(tr->why, sizeof(tr->why), "closed after %u probe%s", n,
               n == 1 ? " succeeded" : "s succeeded");
    }
  } else if (kind != OUTCOME_IGNORED) {
    const char* what = kind == OUTCOME_SUCCESS ? "slow" : "failed";
    char reason[REASON_SIZE];
    snprintf(reason, sizeof(reason), " after a %s probe", what);
    transition_t* tr = open_now(b, t, now, reason);
    snprintf(tr->why, sizeof(tr->why), "re-opened after a %s probe (%s)",
             what, dc_status_name(outcome));
  }
}

void dc__breaker_record_at(dc_breaker_t* b, dc_breaker_permit_t permit,
                           dc_status_t outcome, uint64_t duration_ns,
                           uint64_t now) {
  if (!is_breaker(b)) return;
  if (b->clock != NULL) now = now_of(b);
  outcome_t kind = classify(b, outcome);
  uint64_t slow_ns = atomic_load_explicit(&b->slow_call_ns,
                                          memory_order_relaxed);
  bool slow = kind != OUTCOME_IGNORED && slow_ns != 0 &&
              duration_ns >= slow_ns;
  if (kind == OUTCOME_SUCCESS && !slow &&
      record_fast_success(b, permit, now)) {
    return;
  }
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  advance(b, &t, now);
  switch (kind) {
    case OUTCOME_SUCCESS: b->successes += 1; break;
    case OUTCOME_FAILURE: b->failures += 1; break;
    case OUTCOME_IGNORED: b->ignored += 1; break;
  }
  b->slow_calls += slow;
  bool probe = (permit & 1u) != 0 && (permit >> 1) == b->epoch &&
               b->state == DC_BREAKER_HALF_OPEN;
  if (probe) {
    record_probe(b, &t, now, kind, slow, outcome);
  } else if (b->state == DC_BREAKER_CLOSED && kind != OUTCOME_IGNORED) {
    dc__window_add(&b->window, now, kind == OUTCOME_FAILURE, slow);
    check_thresholds(b, &t, now, outcome);
  }
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
}

void dc_breaker_record(dc_breaker_t* b, dc_breaker_permit_t permit,
                       dc_status_t outcome) {
  if (b != NULL) dc__breaker_record_at(b, permit, outcome, 0, dc__now_ns());
}

void dc_breaker_record_call(dc_breaker_t* b, dc_breaker_permit_t permit,
                            dc_status_t outcome, uint64_t duration_ns) {
  if (b != NULL) {
    dc__breaker_record_at(b, permit, outcome, duration_ns, dc__now_ns());
  }
}

dc_status_t dc_breaker_call(dc_breaker_t* b, dc_status_t (*fn)(void*),
                            void* user_data) {
  REQUIRE_BREAKER(b, "dc_breaker_call");
  DC_REQUIRE_ARG(fn, "dc_breaker_call");
  dc_breaker_permit_t permit;
  DC_RETURN_IF_ERROR(dc_breaker_acquire(b, &permit));
  uint64_t start = now_of(b);
  dc_status_t status = fn(user_data);
  uint64_t end = now_of(b);
  // Leaves dc_last_error() alone.
  dc__breaker_record_at(b, permit, status, end > start ? end - start : 0,
                        end);
  return status;
}

dc_breaker_state_t dc_breaker_state(dc_breaker_t* b) {
  if (!is_breaker(b)) return DC_BREAKER_CLOSED;
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  advance(b, &t, now_of(b));
  dc_breaker_state_t state = b->state;
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
  return state;
}

void dc_breaker_trip(dc_breaker_t* b) {
  if (!is_breaker(b)) return;
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  transition_t* tr =
      open_now(b, &t, now_of(b), " (tripped with dc_breaker_trip)");
  snprintf(tr->why, sizeof(tr->why), "opened by dc_breaker_trip");
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
}

void dc_breaker_reset(dc_breaker_t* b) {
  if (!is_breaker(b)) return;
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  if (b->state != DC_BREAKER_CLOSED) {
    transition_t* tr = close_now(b, &t, now_of(b));
    snprintf(tr->why, sizeof(tr->why), "closed by dc_breaker_reset");
  } else {
    dc__window_clear(&b->window);
  }
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
}

dc_status_t dc_breaker_stats(dc_breaker_t* b, dc_breaker_stats_t* out) {
  DC_REQUIRE_ARG(out, "dc_breaker_stats");
  memset(out, 0, sizeof(*out));
  REQUIRE_BREAKER(b, "dc_breaker_stats");
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  uint64_t now = now_of(b);
  advance(b, &t, now);
  out->state = b->state;
  out->time_in_state_ns = now > b->since_ns ? now - b->since_ns : 0;
  if (b->state == DC_BREAKER_OPEN) {
    out->open_remaining_ns = b->open_until_ns - now;
  }
  if (b->state == DC_BREAKER_CLOSED) {
    dc__window_totals_t w = dc__window_totals(&b->window, now);
    out->window_calls = w.calls;
    out->window_failures = w.failures;
    out->window_slow = w.slow;
  }
  out->probes_in_flight = b->probes_in_flight;
  out->probes_succeeded = b->probes_succeeded;
  out->calls = b->successes + b->failures;
  out->successes = b->successes;
  out->failures = b->failures;
  out->ignored = b->ignored;
  out->slow_calls = b->slow_calls;
  out->rejections = b->rejections;
  out->opens = b->opens;
  out->half_opens = b->half_opens;
  out->closes = b->closes;
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
  return DC_OK;
}

dc_status_t dc_breaker_params(const dc_breaker_t* breaker,
                              dc_breaker_params_t* out_params) {
  DC_REQUIRE_ARG(out_params, "dc_breaker_params");
  memset(out_params, 0, sizeof(*out_params));
  REQUIRE_BREAKER(breaker, "dc_breaker_params");
  dc_breaker_t* b = (dc_breaker_t*)breaker;  // the lock only
  pthread_mutex_lock(&b->lock);
  *out_params = b->params;
  pthread_mutex_unlock(&b->lock);
  return DC_OK;
}

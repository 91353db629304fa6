// breaker.c: circuit breakers (closed, open, half-open) with a rolling
// window of outcomes, and the per-context state of resilience: the
// breaker registry, its default parameters and each device's default
// retry policy.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "breaker_internal.h"
#include "context_internal.h"

#define BUCKETS 10
#define NAME_SIZE 64
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

// The default failures: what says something about the health of the
// guarded device or kernel.
#define DEFAULT_FAILURE_CODES                                            \
  (DC_STATUS_BIT(DC_ERR_DEADLINE_EXCEEDED) |                             \
   DC_STATUS_BIT(DC_ERR_RESOURCE_EXHAUSTED) |                            \
   DC_STATUS_BIT(DC_ERR_ABORTED) | DC_STATUS_BIT(DC_ERR_UNAVAILABLE) |   \
   DC_STATUS_BIT(DC_ERR_OUT_OF_MEMORY) | DC_STATUS_BIT(DC_ERR_UNKNOWN) | \
   DC_STATUS_BIT(DC_ERR_INTERNAL) | DC_STATUS_BIT(DC_ERR_DATA_LOSS) |    \
   DC_STATUS_BIT(DC_ERR_DEVICE_LOST))

// Atomic because a success on a closed breaker is counted without the lock
// (record_closed_success); everything else changes buckets under it.
typedef struct bucket_t {
  _Atomic uint64_t index;  // time / bucket_ns of the outcomes it holds
  _Atomic uint32_t calls;
  _Atomic uint32_t failures;
} bucket_t;

struct dc_breaker_t {
  atomic_uint refs;
  dc_context_t* ctx;
  bool holds_context;  // created standalone: keeps the context alive
  char name[NAME_SIZE];
  dc_breaker_params_t params;  // resolved
  uint64_t bucket_ns;
  dc__clock_fn_t clock;
  void* clock_user;

  // While the breaker is closed, the permit dc_breaker_acquire() hands
  // out (epoch << 1, never 0); 0 otherwise. Written under the lock at
  // every transition, read without it: acquiring from a closed breaker
  // changes nothing, so it takes neither the lock nor the clock.
  _Atomic uint64_t closed_permit;

  pthread_mutex_t lock;  // guards everything below
  dc_breaker_state_t state;
  uint64_t epoch;  // counts transitions; permits carry it
  uint64_t since_ns;
  uint64_t open_until_ns;
  char open_reason[REASON_SIZE];  // " after 5 failures in 10 s"
  bucket_t buckets[BUCKETS];
  uint32_t probes_in_flight;
  uint32_t probes_succeeded;
  _Atomic uint64_t successes;  // also counted without the lock
  uint64_t failures;
  uint64_t ignored;
  uint64_t rejections;
  uint64_t opens;
  uint64_t half_opens;
  uint64_t closes;
};

// Transitions are gathered under the lock and announced after it.
typedef struct transition_t {
  dc_breaker_state_t from;
  dc_breaker_state_t to;
  char why[WHY_SIZE];
} transition_t;

typedef struct transitions_t {
  size_t count;
  transition_t items[2];
} transitions_t;

//===-- Parameters ------------------------------------------------------===//

uint64_t dc_breaker_default_failure_codes(void) {
  return DEFAULT_FAILURE_CODES;
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
  if (p->window_ns != 0 && p->window_ns < BUCKETS) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: window_ns %llu is too short (at least %d ns: the "
                   "window is %d buckets)",
                   fn, (unsigned long long)p->window_ns, BUCKETS, BUCKETS);
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
  if (p.window_ns < BUCKETS) p.window_ns = BUCKETS;
  if (p.open_ns == 0) p.open_ns = DEFAULT_OPEN_NS;
  if (p.half_open_probes == 0) p.half_open_probes = DEFAULT_PROBES;
  p.failure_codes &= ~DC_STATUS_BIT(DC_OK);
  if (p.failure_codes == 0) p.failure_codes = DEFAULT_FAILURE_CODES;
  *out = p;
}

//===-- The per-context state -------------------------------------------===//

typedef struct dc__resilience_t {
  pthread_mutex_t lock;  // guards the fields below
  dc_breaker_params_t defaults;  // as set; zeroes mean built-in defaults
  dc_breaker_t** breakers;
  size_t count;
  size_t capacity;
  dc_retry_policy_t device_policy[DC_MAX_DEVICES];
} resilience_t;

// Returns the state of |ctx| (made on first use, kept in the context),
// creating it if |create|; NULL if there is none (or it cannot be
// allocated: then with the message set).
static resilience_t* state_of(dc_context_t* ctx, bool create) {
  pthread_mutex_lock(&ctx->lock);
  resilience_t* r = ctx->resilience;
  if (r == NULL && create) {
    r = dc_allocator_calloc(ctx->allocator, 1, sizeof(*r));
    if (r == NULL) {
      DC_FAIL(DC_ERR_OUT_OF_MEMORY,
              "cannot allocate the context's breaker registry");
    } else {
      pthread_mutex_init(&r->lock, NULL);
      ctx->resilience = r;
    }
  }
  pthread_mutex_unlock(&ctx->lock);
  return r;
}

static void breaker_destroy(dc_breaker_t* b);

void dc__resilience_context_destroy(dc_context_t* ctx) {
  if (ctx == NULL) return;
  resilience_t* r = ctx->resilience;
  ctx->resilience = NULL;
  if (r == NULL) return;
  for (size_t i = 0; i < r->count; ++i) breaker_destroy(r->breakers[i]);
  dc_allocator_free(ctx->allocator, r->breakers,
                    r->capacity * sizeof(*r->breakers));
  pthread_mutex_destroy(&r->lock);
  dc_allocator_free(ctx->allocator, r, sizeof(*r));
}

static int device_index(const dc_device_t* device) {
  const dc_context_t* ctx = device->context;
  if (ctx == NULL) return -1;
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (ctx->devices[i] == device) return (int)i;
  }
  return -1;
}

dc_status_t dc__resilience_set_device_policy(dc_device_t* device,
                                             const dc_retry_policy_t* policy) {
  int index = device_index(device);
  if (index < 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_device_set_retry_policy: device '%s' is not one of "
                   "its context's devices",
                   device->info.name);
  }
  resilience_t* r = state_of(device->context, true);
  if (r == NULL) return DC_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&r->lock);
  if (policy != NULL) {
    r->device_policy[index] = *policy;
  } else {
    r->device_policy[index] = (dc_retry_policy_t){0};
  }
  pthread_mutex_unlock(&r->lock);
  return DC_OK;
}

void dc__resilience_device_policy(const dc_device_t* device,
                                  dc_retry_policy_t* out_policy) {
  *out_policy = (dc_retry_policy_t){0};
  int index = device_index(device);
  if (index < 0) return;
  resilience_t* r = state_of(device->context, false);
  if (r == NULL) return;
  pthread_mutex_lock(&r->lock);
  *out_policy = r->device_policy[index];
  pthread_mutex_unlock(&r->lock);
}

//===-- The window ------------------------------------------------------===//

static uint64_t now_of(const dc_breaker_t* b) {
  return b->clock != NULL ? b->clock(b->clock_user) : dc__now_ns();
}

static void window_totals(const dc_breaker_t* b, uint64_t now,
                          uint32_t* out_calls, uint32_t* out_failures) {
  uint64_t current = now / b->bucket_ns;
  uint32_t calls = 0, failures = 0;
  for (int i = 0; i < BUCKETS; ++i) {
    const bucket_t* k = &b->buckets[i];
    if (k->calls == 0 || k->index > current ||
        current - k->index >= BUCKETS) {
      continue;
    }
    calls += k->calls;
    failures += k->failures;
  }
  *out_calls = calls;
  *out_failures = failures;
}

static void window_clear(dc_breaker_t* b) {
  for (int i = 0; i < BUCKETS; ++i) {
    atomic_store(&b->buckets[i].index, UINT64_MAX);  // no time's bucket
    atomic_store(&b->buckets[i].calls, 0);
    atomic_store(&b->buckets[i].failures, 0);
  }
}

static void window_add(dc_breaker_t* b, uint64_t now, bool failure) {
  uint64_t current = now / b->bucket_ns;
  bucket_t* k = &b->buckets[current % BUCKETS];
  if (k->index != current) {  // emptied before it is published
    k->calls = 0;
    k->failures = 0;
    k->index = current;
  }
  k->calls += 1;
  k->failures += failure ? 1 : 0;
}

//===-- Transitions -----------------------------------------------------===//

static transition_t* begin_transition(dc_breaker_t* b, transitions_t* t,
                                      dc_breaker_state_t to,
                                      uint64_t since_ns) {
  transition_t* tr = &t->items[t->count++];
  tr->from = b->state;
  tr->to = to;
  tr->why[0] = '\0';
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
  window_clear(b);
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
    if (b->params.on_transition != NULL) {
      b->params.on_transition(b, tr->from, tr->to, b->params.user_data);
    }
  }
}

// Opens a closed breaker if the window has reached a threshold.
static void check_thresholds(dc_breaker_t* b, transitions_t* t, uint64_t now,
                             dc_status_t last) {
  uint32_t calls, failures;
  window_totals(b, now, &calls, &failures);
  const dc_breaker_params_t* p = &b->params;
  char window[32], reason[REASON_SIZE];
  dc__format_duration(p->window_ns, window, sizeof(window));
  if (p->failure_threshold > 0 && failures >= p->failure_threshold) {
    snprintf(reason, sizeof(reason), " after %u failure%s in %s", failures,
             failures == 1 ? "" : "s", window);
  } else if (p->failure_ratio > 0.0 && calls >= p->min_calls &&
             (double)failures / (double)calls >= p->failure_ratio) {
    snprintf(reason, sizeof(reason), " after %u of %u calls failed in %s",
             failures, calls, window);
  } else {
    return;
  }
  transition_t* tr = open_now(b, t, now, reason);
  snprintf(tr->why, sizeof(tr->why), "opened%s (last: %s)", reason,
           dc_status_name(last));
}

//===-- Breakers --------------------------------------------------------===//

// DC_REQUIRE_ARG, naming the parameter as the header does.
#define REQUIRE_BREAKER(b, fn_name)                                      \
  do {                                                                   \
    if ((b) == NULL)                                                     \
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,                            \
                     "%s: 'breaker' must not be NULL", fn_name);         \
  } while (0)

static dc_status_t check_name(const char* name, const char* fn) {
  size_t length = strlen(name);
  if (length == 0 || length >= NAME_SIZE) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: name '%s' is invalid (1 to %d bytes)", fn, name,
                   NAME_SIZE - 1);
  }
  return DC_OK;
}

static dc_status_t checked_params(const dc_breaker_params_t* params,
                                  const char* fn) {
  if (params == NULL) return DC_OK;
  dc_status_t st = dc_breaker_params_check(params);
  if (st != DC_OK) return DC_FAIL(st, "%s: %s", fn, dc_last_error());
  return DC_OK;
}

// The context's defaults, as set.
static dc_breaker_params_t context_defaults(dc_context_t* ctx) {
  dc_breaker_params_t p = {0};
  resilience_t* r = state_of(ctx, false);
  if (r != NULL) {
    pthread_mutex_lock(&r->lock);
    p = r->defaults;
    pthread_mutex_unlock(&r->lock);
  }
  return p;
}

static dc_status_t breaker_new(dc_context_t* ctx, const char* name,
                               const dc_breaker_params_t* params,
                               bool holds_context, dc_breaker_t** out) {
  dc_breaker_t* b = dc_allocator_calloc(ctx->allocator, 1, sizeof(*b));
  if (b == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "cannot allocate the breaker '%s'", name);
  }
  atomic_init(&b->refs, 1u);
  b->ctx = ctx;
  b->holds_context = holds_context;
  dc__strlcpy(b->name, name, sizeof(b->name));
  resolve_params(params, &b->params);
  b->bucket_ns = b->params.window_ns / BUCKETS;
  window_clear(b);
  pthread_mutex_init(&b->lock, NULL);
  b->state = DC_BREAKER_CLOSED;
  b->epoch = 1;
  atomic_init(&b->closed_permit, b->epoch << 1);
  b->since_ns = now_of(b);
  if (holds_context) dc__context_ref(ctx);
  *out = b;
  return DC_OK;
}

static void breaker_destroy(dc_breaker_t* b) {
  dc_context_t* ctx = b->ctx;
  bool holds_context = b->holds_context;
  pthread_mutex_destroy(&b->lock);
  dc_allocator_free(ctx->allocator, b, sizeof(*b));
  if (holds_context) dc__context_unref(ctx);  // may destroy the context
}

dc_status_t dc_breaker_create(dc_context_t* ctx, const char* name,
                              const dc_breaker_params_t* params,
                              dc_breaker_t** out_breaker) {
  static const char* fn = "dc_breaker_create";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  DC_RETURN_IF_ERROR(check_name(name, fn));
  DC_RETURN_IF_ERROR(checked_params(params, fn));
  dc_breaker_params_t defaults;
  if (params == NULL) {
    defaults = context_defaults(ctx);
    params = &defaults;
  }
  return breaker_new(ctx, name, params, true, out_breaker);
}

void dc_breaker_retain(dc_breaker_t* b) {
  if (b != NULL) atomic_fetch_add(&b->refs, 1u);
}

void dc_breaker_release(dc_breaker_t* b) {
  if (b == NULL || atomic_fetch_sub(&b->refs, 1u) != 1u) return;
  breaker_destroy(b);
}

const char* dc_breaker_name(const dc_breaker_t* b) {
  return b != NULL ? b->name : "";
}

void dc__breaker_set_clock(dc_breaker_t* b, dc__clock_fn_t now_ns,
                           void* user_data) {
  pthread_mutex_lock(&b->lock);
  b->clock = now_ns;
  b->clock_user = user_data;
  b->since_ns = now_of(b);
  pthread_mutex_unlock(&b->lock);
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
  return (b->params.failure_codes & DC_STATUS_BIT(code)) != 0
             ? OUTCOME_FAILURE
             : OUTCOME_IGNORED;
}

// Counts a success of an ordinary permit on a closed breaker without the
// lock, when it can: a success changes no state unless a failure ratio is
// set, so only the counters move. Returns false to take the locked path:
// the breaker is not closed, or the time has moved to a bucket that must
// be emptied first. Racing a transition costs at most one success counted
// in a window about to be emptied, or one moment late.
static bool record_closed_success(dc_breaker_t* b,
                                  dc_breaker_permit_t permit, uint64_t now) {
  if ((permit & 1u) != 0 || b->params.failure_ratio > 0.0 ||
      atomic_load_explicit(&b->closed_permit, memory_order_acquire) == 0) {
    return false;
  }
  uint64_t current = now / b->bucket_ns;
  bucket_t* k = &b->buckets[current % BUCKETS];
  if (atomic_load_explicit(&k->index, memory_order_acquire) != current) {
    return false;
  }
  atomic_fetch_add_explicit(&k->calls, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&b->successes, 1, memory_order_relaxed);
  return true;
}

void dc__breaker_record_at(dc_breaker_t* b, dc_breaker_permit_t permit,
                           dc_status_t outcome, uint64_t now) {
  if (b == NULL) return;
  if (b->clock != NULL) now = now_of(b);
  outcome_t kind = classify(b, outcome);
  if (kind == OUTCOME_SUCCESS && record_closed_success(b, permit, now)) {
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
  bool probe = (permit & 1u) != 0 && (permit >> 1) == b->epoch &&
               b->state == DC_BREAKER_HALF_OPEN;
  if (probe) {
    b->probes_in_flight -= 1;
    if (kind == OUTCOME_SUCCESS) {
      b->probes_succeeded += 1;
      if (b->probes_succeeded >= b->params.half_open_probes) {
        uint32_t n = b->probes_succeeded;
        transition_t* tr = close_now(b, &t, now);
        snprintf(tr->why, sizeof(tr->why), "closed after %u probe%s", n,
                 n == 1 ? " succeeded" : "s succeeded");
      }
    } else if (kind == OUTCOME_FAILURE) {
      transition_t* tr = open_now(b, &t, now, " after a failed probe");
      snprintf(tr->why, sizeof(tr->why), "re-opened after a failed probe (%s)",
               dc_status_name(outcome));
    }
  } else if (b->state == DC_BREAKER_CLOSED && kind != OUTCOME_IGNORED) {
    window_add(b, now, kind == OUTCOME_FAILURE);
    if (kind == OUTCOME_FAILURE || b->params.failure_ratio > 0.0) {
      check_thresholds(b, &t, now, outcome);
    }
  }
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
}

void dc_breaker_record(dc_breaker_t* b, dc_breaker_permit_t permit,
                       dc_status_t outcome) {
  if (b != NULL) dc__breaker_record_at(b, permit, outcome, dc__now_ns());
}

dc_status_t dc_breaker_call(dc_breaker_t* b, dc_status_t (*fn)(void*),
                            void* user_data) {
  REQUIRE_BREAKER(b, "dc_breaker_call");
  DC_REQUIRE_ARG(fn, "dc_breaker_call");
  dc_breaker_permit_t permit;
  DC_RETURN_IF_ERROR(dc_breaker_acquire(b, &permit));
  dc_status_t status = fn(user_data);
  dc_breaker_record(b, permit, status);  // leaves dc_last_error() alone
  return status;
}

dc_breaker_state_t dc_breaker_state(dc_breaker_t* b) {
  if (b == NULL) return DC_BREAKER_CLOSED;
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  advance(b, &t, now_of(b));
  dc_breaker_state_t state = b->state;
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
  return state;
}

void dc_breaker_trip(dc_breaker_t* b) {
  if (b == NULL) return;
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  transition_t* tr =
      open_now(b, &t, now_of(b), " (tripped with dc_breaker_trip)");
  snprintf(tr->why, sizeof(tr->why), "opened by dc_breaker_trip");
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
}

void dc_breaker_reset(dc_breaker_t* b) {
  if (b == NULL) return;
  transitions_t t = {0};
  pthread_mutex_lock(&b->lock);
  if (b->state != DC_BREAKER_CLOSED) {
    transition_t* tr = close_now(b, &t, now_of(b));
    snprintf(tr->why, sizeof(tr->why), "closed by dc_breaker_reset");
  } else {
    window_clear(b);
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
    window_totals(b, now, &out->window_calls, &out->window_failures);
  }
  out->probes_in_flight = b->probes_in_flight;
  out->probes_succeeded = b->probes_succeeded;
  out->calls = b->successes + b->failures;
  out->successes = b->successes;
  out->failures = b->failures;
  out->ignored = b->ignored;
  out->rejections = b->rejections;
  out->opens = b->opens;
  out->half_opens = b->half_opens;
  out->closes = b->closes;
  pthread_mutex_unlock(&b->lock);
  announce(b, &t);
  return DC_OK;
}

dc_status_t dc_breaker_params(const dc_breaker_t* b,
                              dc_breaker_params_t* out_params) {
  DC_REQUIRE_ARG(out_params, "dc_breaker_params");
  memset(out_params, 0, sizeof(*out_params));
  REQUIRE_BREAKER(b, "dc_breaker_params");
  *out_params = b->params;  // fixed at creation
  return DC_OK;
}

//===-- The registry ----------------------------------------------------===//

dc_status_t dc_breaker_set_defaults(dc_context_t* ctx,
                                    const dc_breaker_params_t* params) {
  static const char* fn = "dc_breaker_set_defaults";
  DC_REQUIRE_ARG(ctx, fn);
  DC_RETURN_IF_ERROR(checked_params(params, fn));
  resilience_t* r = state_of(ctx, true);
  if (r == NULL) return DC_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&r->lock);
  r->defaults = params != NULL ? *params : (dc_breaker_params_t){0};
  pthread_mutex_unlock(&r->lock);
  return DC_OK;
}

dc_status_t dc_breaker_defaults(dc_context_t* ctx,
                                dc_breaker_params_t* out_params) {
  DC_REQUIRE_ARG(out_params, "dc_breaker_defaults");
  memset(out_params, 0, sizeof(*out_params));
  DC_REQUIRE_ARG(ctx, "dc_breaker_defaults");
  *out_params = context_defaults(ctx);
  return DC_OK;
}

static dc_breaker_t* find_locked(const resilience_t* r, const char* name) {
  for (size_t i = 0; i < r->count; ++i) {
    if (strcmp(r->breakers[i]->name, name) == 0) return r->breakers[i];
  }
  return NULL;
}

// Finds or adds the registry's breaker |name| (with |params|, NULL: the
// context's defaults). With |must_be_new|, an existing one is an error
// (dc_breaker_register).
static dc_status_t registry_get(dc_context_t* ctx, const char* name,
                                bool must_be_new,
                                const dc_breaker_params_t* params,
                                const char* fn, dc_breaker_t** out) {
  *out = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  DC_RETURN_IF_ERROR(check_name(name, fn));
  DC_RETURN_IF_ERROR(checked_params(params, fn));
  resilience_t* r = state_of(ctx, true);
  if (r == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc_status_t status = DC_OK;
  pthread_mutex_lock(&r->lock);
  dc_breaker_t* b = find_locked(r, name);
  if (b != NULL) {
    if (must_be_new) {
      status = DC_FAIL(DC_ERR_ALREADY_EXISTS,
                       "%s: the context already has a breaker named '%s'",
                       fn, name);
      b = NULL;
    }
  } else {
    if (r->count == r->capacity) {
      size_t grown = r->capacity ? 2 * r->capacity : 8;
      dc_breaker_t** items = ctx->allocator.fn(
          ctx->allocator.user_data, r->breakers,
          r->capacity * sizeof(*items), grown * sizeof(*items));
      if (items == NULL) {
        status = DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                         "%s: cannot grow the breaker registry", fn);
      } else {
        r->breakers = items;
        r->capacity = grown;
      }
    }
    if (status == DC_OK) {
      const dc_breaker_params_t* p = params != NULL ? params : &r->defaults;
      status = breaker_new(ctx, name, p, false, &b);
      if (status == DC_OK) r->breakers[r->count++] = b;
    }
  }
  pthread_mutex_unlock(&r->lock);
  *out = b;
  return status;
}

dc_status_t dc_breaker_for(dc_context_t* ctx, const char* name,
                           dc_breaker_t** out_breaker) {
  DC_REQUIRE_ARG(out_breaker, "dc_breaker_for");
  return registry_get(ctx, name, false, NULL, "dc_breaker_for", out_breaker);
}

dc_status_t dc_breaker_register(dc_context_t* ctx, const char* name,
                                const dc_breaker_params_t* params,
                                dc_breaker_t** out_breaker) {
  DC_REQUIRE_ARG(out_breaker, "dc_breaker_register");
  return registry_get(ctx, name, true, params, "dc_breaker_register",
                      out_breaker);
}

dc_status_t dc_breaker_find(dc_context_t* ctx, const char* name,
                            dc_breaker_t** out_breaker) {
  static const char* fn = "dc_breaker_find";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  resilience_t* r = state_of(ctx, false);
  if (r != NULL) {
    pthread_mutex_lock(&r->lock);
    *out_breaker = find_locked(r, name);
    pthread_mutex_unlock(&r->lock);
  }
  if (*out_breaker == NULL) {
    return DC_FAIL(DC_ERR_NOT_FOUND, "%s: the context has no breaker '%s'",
                   fn, name);
  }
  return DC_OK;
}

size_t dc_breaker_count(dc_context_t* ctx) {
  if (ctx == NULL) return 0;
  resilience_t* r = state_of(ctx, false);
  if (r == NULL) return 0;
  pthread_mutex_lock(&r->lock);
  size_t count = r->count;
  pthread_mutex_unlock(&r->lock);
  return count;
}

dc_status_t dc_breaker_at(dc_context_t* ctx, size_t index,
                          dc_breaker_t** out_breaker) {
  static const char* fn = "dc_breaker_at";
  DC_REQUIRE_ARG(out_breaker, fn);
  *out_breaker = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  resilience_t* r = state_of(ctx, false);
  size_t count = 0;
  if (r != NULL) {
    pthread_mutex_lock(&r->lock);
    count = r->count;
    if (index < count) *out_breaker = r->breakers[index];
    pthread_mutex_unlock(&r->lock);
  }
  if (*out_breaker == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: index %zu is past the %zu breaker(s)", fn, index,
                   count);
  }
  return DC_OK;
}

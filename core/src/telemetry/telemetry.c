// telemetry.c: a context's counters, per-kernel timing histograms and
// error summary (see dc/telemetry.h). The timeline is in trace.c, the
// health report in health.c.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <string.h>

#include "context_internal.h"
#include "dc/event.h"
#include "dc/memory_pool.h"
#include "program_internal.h"
#include "telemetry_internal.h"

//===-- Histograms ------------------------------------------------------===//
//
// Log-linear buckets: below 16 ns one bucket per nanosecond; above, each
// power of two [2^e, 2^(e+1)) is split into 16 buckets 2^(e-4) ns wide.
// A bucket is at most 1/16 of its lower bound wide, and a percentile is
// interpolated inside its bucket, so it is off by at most half of that
// (about 3%). Every field is atomic: recording takes no lock.

#define SUB_BITS 4
#define SUBS (1u << SUB_BITS)
#define BUCKET_COUNT (SUBS + (64 - SUB_BITS) * SUBS)

typedef struct histogram_t {
  _Atomic uint64_t count;
  _Atomic uint64_t total_ns;
  _Atomic uint64_t min_ns;  // UINT64_MAX while empty
  _Atomic uint64_t max_ns;
  _Atomic uint64_t buckets[BUCKET_COUNT];
  char name[];  // the kernel name
} histogram_t;

static size_t bucket_of(uint64_t ns) {
  if (ns < SUBS) return (size_t)ns;
  int e = 63 - __builtin_clzll(ns);  // e >= SUB_BITS
  size_t sub = (size_t)(ns >> (e - (int)SUB_BITS)) & (SUBS - 1);
  return SUBS + (size_t)(e - (int)SUB_BITS) * SUBS + sub;
}

// The lower bound and width of bucket |b|, in ns.
static void bucket_range(size_t b, double* out_low, double* out_width) {
  if (b < SUBS) {
    *out_low = (double)b;
    *out_width = 1.0;
    return;
  }
  int e = (int)((b - SUBS) / SUBS) + (int)SUB_BITS;
  double width = (double)((uint64_t)1 << (e - (int)SUB_BITS));
  *out_low = (double)((uint64_t)1 << e) + (double)((b - SUBS) % SUBS) * width;
  *out_width = width;
}

static void histogram_clear(histogram_t* h) {
  atomic_store_explicit(&h->count, 0, memory_order_relaxed);
  atomic_store_explicit(&h->total_ns, 0, memory_order_relaxed);
  atomic_store_explicit(&h->min_ns, UINT64_MAX, memory_order_relaxed);
  atomic_store_explicit(&h->max_ns, 0, memory_order_relaxed);
  for (size_t b = 0; b < BUCKET_COUNT; ++b) {
    atomic_store_explicit(&h->buckets[b], 0, memory_order_relaxed);
  }
}

static void histogram_add(histogram_t* h, uint64_t ns) {
  atomic_fetch_add_explicit(&h->buckets[bucket_of(ns)], 1,
                            memory_order_relaxed);
  atomic_fetch_add_explicit(&h->total_ns, ns, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
  uint64_t seen = atomic_load_explicit(&h->min_ns, memory_order_relaxed);
  while (ns < seen && !atomic_compare_exchange_weak_explicit(
                          &h->min_ns, &seen, ns, memory_order_relaxed,
                          memory_order_relaxed)) {
  }
  seen = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
  while (ns > seen && !atomic_compare_exchange_weak_explicit(
                          &h->max_ns, &seen, ns, memory_order_relaxed,
                          memory_order_relaxed)) {
  }
}

// The value below which a fraction |q| of the |n| samples in |counts|
// lie, interpolated linearly inside its bucket and kept in [min, max].
static double percentile(const uint64_t* counts, uint64_t n, double q,
                         double min, double max) {
  double rank = q * (double)n;
  uint64_t below = 0;
  for (size_t b = 0; b < BUCKET_COUNT; ++b) {
    if (counts[b] == 0) continue;
    if ((double)(below + counts[b]) >= rank) {
      double low, width;
      bucket_range(b, &low, &width);
      double value = low + width * (rank - (double)below) / (double)counts[b];
      return value < min ? min : value > max ? max : value;
    }
    below += counts[b];
  }
  return max;
}

// Reads |h| into |out|. Kernels may be recording meanwhile: the fields
// are each current, not necessarily from one instant. Returns false if
// the histogram is empty.
static bool histogram_read(histogram_t* h, dc_timing_stats_t* out) {
  memset(out, 0, sizeof(*out));
  uint64_t counts[BUCKET_COUNT];
  uint64_t n = 0;
  for (size_t b = 0; b < BUCKET_COUNT; ++b) {
    counts[b] = atomic_load_explicit(&h->buckets[b], memory_order_relaxed);
    n += counts[b];
  }
  uint64_t count = atomic_load_explicit(&h->count, memory_order_relaxed);
  uint64_t min = atomic_load_explicit(&h->min_ns, memory_order_relaxed);
  uint64_t max = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
  if (n == 0 || count == 0 || min > max) return false;
  out->count = count;
  out->total_ns =
      (double)atomic_load_explicit(&h->total_ns, memory_order_relaxed);
  out->mean_ns = out->total_ns / (double)count;
  out->min_ns = (double)min;
  out->max_ns = (double)max;
  out->p50_ns = percentile(counts, n, 0.50, out->min_ns, out->max_ns);
  out->p95_ns = percentile(counts, n, 0.95, out->min_ns, out->max_ns);
  out->p99_ns = percentile(counts, n, 0.99, out->min_ns, out->max_ns);
  return true;
}

//===-- The telemetry of a context --------------------------------------===//

// Counters that spans feed, in dc_counters_t's order.
typedef enum counter_e {
  C_DISPATCHES = 0,
  C_COPIES,
  C_BYTES_COPIED,
  C_FILLS,
  C_HOST_CALLBACKS,
  C_EVENTS_RECORDED,
  C_EVENT_WAITS,
  C_FAILED,
  C_SKIPPED,
  C_CANCELLED,
  COUNTER_COUNT,
} counter_t;

// Pool counters are the pools' own; a reset remembers where they stood.
typedef struct pool_base_t {
  uint64_t hits, misses, event_hits, event_misses;
} pool_base_t;

struct dc__telemetry_t {
  dc_allocator_t allocator;
  _Atomic uint64_t counters[COUNTER_COUNT];
  dc__trace_t* trace;

  pthread_mutex_t lock;  // guards everything below
  histogram_t** histograms;  // in the order the kernels first ran
  size_t histogram_count;
  size_t histogram_capacity;
  uint64_t error_total;
  uint64_t errors_by_status[DC_STATUS_COUNT];
  dc__error_entry_t recent[DC_RECENT_ERRORS];  // a ring
  size_t recent_next;
  size_t recent_count;
  pool_base_t pool_base;
};

dc_status_t dc__telemetry_create(dc_allocator_t allocator,
                                 dc__telemetry_t** out) {
  *out = NULL;
  dc__telemetry_t* t = dc_allocator_calloc(allocator, 1, sizeof(*t));
  if (t == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the telemetry");
  }
  t->allocator = allocator;
  for (size_t i = 0; i < COUNTER_COUNT; ++i) atomic_init(&t->counters[i], 0);
  dc_status_t status = dc__trace_create(allocator, &t->trace);
  if (status != DC_OK) {
    dc_allocator_free(allocator, t, sizeof(*t));
    return status;
  }
  pthread_mutex_init(&t->lock, NULL);
  *out = t;
  return DC_OK;
}

static size_t histogram_size(const char* name) {
  return sizeof(histogram_t) + strlen(name) + 1;
}

void dc__telemetry_destroy(dc__telemetry_t* t) {
  if (t == NULL) return;
  for (size_t i = 0; i < t->histogram_count; ++i) {
    histogram_t* h = t->histograms[i];
    dc_allocator_free(t->allocator, h, histogram_size(h->name));
  }
  dc_allocator_free(t->allocator, t->histograms,
                    t->histogram_capacity * sizeof(*t->histograms));
  dc__trace_destroy(t->trace);
  pthread_mutex_destroy(&t->lock);
  dc_allocator_free(t->allocator, t, sizeof(*t));
}

dc__trace_t* dc__telemetry_trace(dc_context_t* ctx) {
  return ctx->telemetry->trace;
}

static histogram_t* find_locked(dc__telemetry_t* t, const char* name) {
  for (size_t i = 0; i < t->histogram_count; ++i) {
    if (strcmp(t->histograms[i]->name, name) == 0) return t->histograms[i];
  }
  return NULL;
}

// Adds an empty histogram for |name|; NULL if memory runs out (the time
// then goes unrecorded: telemetry never fails the work it watches).
static histogram_t* add_locked(dc__telemetry_t* t, const char* name) {
  if (t->histogram_count == t->histogram_capacity) {
    size_t capacity = t->histogram_capacity ? 2 * t->histogram_capacity : 8;
    histogram_t** grown = t->allocator.fn(
        t->allocator.user_data, t->histograms,
        t->histogram_capacity * sizeof(*grown), capacity * sizeof(*grown));
    if (grown == NULL) return NULL;
    t->histograms = grown;
    t->histogram_capacity = capacity;
  }
  histogram_t* h = dc_allocator_malloc(t->allocator, histogram_size(name));
  if (h == NULL) return NULL;
  histogram_clear(h);
  memcpy(h->name, name, strlen(name) + 1);
  t->histograms[t->histogram_count++] = h;
  return h;
}

// The histogram of |kernel|'s name, cached in the kernel after the first
// lookup. Histograms live as long as the context, so the cached pointer
// stays valid for as long as the kernel can run.
static histogram_t* histogram_for(dc__telemetry_t* t,
                                  const dc_kernel_t* kernel) {
  dc_kernel_t* k = (dc_kernel_t*)kernel;  // |timing| is ours to set
  histogram_t* h = atomic_load_explicit(&k->timing, memory_order_acquire);
  if (h != NULL) return h;
  pthread_mutex_lock(&t->lock);
  h = find_locked(t, k->info.name);
  if (h == NULL) h = add_locked(t, k->info.name);
  pthread_mutex_unlock(&t->lock);
  if (h != NULL) atomic_store_explicit(&k->timing, h, memory_order_release);
  return h;
}

//===-- Hooks -----------------------------------------------------------===//

static void count(dc__telemetry_t* t, counter_t c, uint64_t n) {
  atomic_fetch_add_explicit(&t->counters[c], n, memory_order_relaxed);
}

static void count_ran(dc__telemetry_t* t, const dc__span_t* span) {
  bool ok = span->status == DC_OK;
  if (!ok) count(t, C_FAILED, 1);
  switch (span->kind) {
    case DC_SPAN_KERNEL:
      count(t, C_DISPATCHES, 1);
      // A failed run stops early; its time would only blur the others.
      if (ok && span->kernel != NULL) {
        histogram_t* h = histogram_for(t, span->kernel);
        uint64_t ns =
            span->end_ns > span->start_ns ? span->end_ns - span->start_ns : 0;
        if (h != NULL) histogram_add(h, ns);
      }
      break;
    case DC_SPAN_COPY:
      count(t, C_COPIES, 1);
      if (ok) count(t, C_BYTES_COPIED, span->bytes);
      break;
    case DC_SPAN_FILL:
      count(t, C_FILLS, 1);
      break;
    case DC_SPAN_HOST:
      count(t, C_HOST_CALLBACKS, 1);
      break;
    case DC_SPAN_RECORD:
      count(t, C_EVENTS_RECORDED, 1);
      break;
    case DC_SPAN_WAIT:
      count(t, C_EVENT_WAITS, 1);
      break;
    case DC_SPAN_KIND_COUNT:
      break;
  }
}

void dc__telemetry_span(dc_context_t* ctx, const dc__span_t* span) {
  if (ctx == NULL || ctx->telemetry == NULL || span == NULL) return;
  dc__telemetry_t* t = ctx->telemetry;
  switch (span->outcome) {
    case DC_SPAN_RAN:
      count_ran(t, span);
      break;
    case DC_SPAN_SKIPPED:
      count(t, C_SKIPPED, 1);
      break;
    case DC_SPAN_CANCELLED:
      count(t, C_CANCELLED, 1);
      break;
  }
  dc__trace_add(t->trace, span);
}

void dc__telemetry_host_wait(dc_context_t* ctx) {
  if (ctx == NULL || ctx->telemetry == NULL) return;
  count(ctx->telemetry, C_EVENT_WAITS, 1);
}

void dc__telemetry_error(dc_context_t* ctx, dc_status_t status,
                         const char* message) {
  if (ctx == NULL || ctx->telemetry == NULL || status == DC_OK) return;
  dc__telemetry_t* t = ctx->telemetry;
  uint64_t now = dc__now_ns();
  pthread_mutex_lock(&t->lock);
  t->error_total += 1;
  if ((unsigned)status < DC_STATUS_COUNT) t->errors_by_status[status] += 1;
  dc__error_entry_t* e = &t->recent[t->recent_next];
  e->status = status;
  e->time_ns = now;
  dc__strlcpy(e->message, message ? message : "", sizeof(e->message));
  t->recent_next = (t->recent_next + 1) % DC_RECENT_ERRORS;
  if (t->recent_count < DC_RECENT_ERRORS) t->recent_count += 1;
  pthread_mutex_unlock(&t->lock);
}

void dc__telemetry_errors(dc_context_t* ctx, dc__error_summary_t* out) {
  dc__telemetry_t* t = ctx->telemetry;
  pthread_mutex_lock(&t->lock);
  out->total = t->error_total;
  memcpy(out->by_status, t->errors_by_status, sizeof(out->by_status));
  out->recent_count = t->recent_count;
  for (size_t i = 0; i < t->recent_count; ++i) {
    size_t slot = (t->recent_next + DC_RECENT_ERRORS - 1 - i) %
                  DC_RECENT_ERRORS;
    out->recent[i] = t->recent[slot];
  }
  pthread_mutex_unlock(&t->lock);
}

//===-- Counters --------------------------------------------------------===//

// Sums the pool counters of every device of |ctx|.
static pool_base_t pool_totals(dc_context_t* ctx) {
  pool_base_t sum = {0};
  static const uint32_t kEventPools[] = {DC_EVENT_DEFAULT, DC_EVENT_TIMING};
  for (size_t i = 0; i < ctx->device_count; ++i) {
    dc_device_t* device = ctx->devices[i];
    dc_memory_pool_stats_t pool;
    if (dc_memory_pool_stats(device, &pool) == DC_OK) {
      sum.hits += pool.hits;
      sum.misses += pool.misses;
    }
    for (size_t p = 0; p < 2; ++p) {
      dc_event_pool_stats_t events;
      if (dc_event_pool_stats(device, kEventPools[p], &events) == DC_OK) {
        sum.event_hits += events.reused;
        sum.event_misses += events.created;
      }
    }
  }
  return sum;
}

static uint64_t since(uint64_t now, uint64_t base) {
  return now > base ? now - base : 0;
}

dc_status_t dc_telemetry_counters(dc_context_t* ctx,
                                  dc_counters_t* out_counters) {
  DC_REQUIRE_ARG(ctx, "dc_telemetry_counters");
  DC_REQUIRE_ARG(out_counters, "dc_telemetry_counters");
  dc__telemetry_t* t = ctx->telemetry;
  uint64_t c[COUNTER_COUNT];
  for (size_t i = 0; i < COUNTER_COUNT; ++i) {
    c[i] = atomic_load_explicit(&t->counters[i], memory_order_relaxed);
  }
  pool_base_t pools = pool_totals(ctx);
  pthread_mutex_lock(&t->lock);
  pool_base_t base = t->pool_base;
  pthread_mutex_unlock(&t->lock);
  *out_counters = (dc_counters_t){
      .dispatches = c[C_DISPATCHES],
      .copies = c[C_COPIES],
      .bytes_copied = c[C_BYTES_COPIED],
      .fills = c[C_FILLS],
      .host_callbacks = c[C_HOST_CALLBACKS],
      .events_recorded = c[C_EVENTS_RECORDED],
      .event_waits = c[C_EVENT_WAITS],
      .commands_failed = c[C_FAILED],
      .commands_skipped = c[C_SKIPPED],
      .commands_cancelled = c[C_CANCELLED],
      .pool_hits = since(pools.hits, base.hits),
      .pool_misses = since(pools.misses, base.misses),
      .event_pool_hits = since(pools.event_hits, base.event_hits),
      .event_pool_misses = since(pools.event_misses, base.event_misses),
  };
  return DC_OK;
}

void dc_telemetry_reset(dc_context_t* ctx) {
  if (ctx == NULL) return;
  dc__telemetry_t* t = ctx->telemetry;
  pool_base_t pools = pool_totals(ctx);
  for (size_t i = 0; i < COUNTER_COUNT; ++i) {
    atomic_store_explicit(&t->counters[i], 0, memory_order_relaxed);
  }
  pthread_mutex_lock(&t->lock);
  // Histograms stay (kernels cache pointers to them); they are emptied.
  for (size_t i = 0; i < t->histogram_count; ++i) {
    histogram_clear(t->histograms[i]);
  }
  t->error_total = 0;
  memset(t->errors_by_status, 0, sizeof(t->errors_by_status));
  t->recent_next = 0;
  t->recent_count = 0;
  t->pool_base = pools;
  pthread_mutex_unlock(&t->lock);
}

//===-- Kernel timing ---------------------------------------------------===//

dc_status_t dc_telemetry_kernel(dc_context_t* ctx, const char* kernel_name,
                                dc_timing_stats_t* out_stats) {
  DC_REQUIRE_ARG(out_stats, "dc_telemetry_kernel");
  memset(out_stats, 0, sizeof(*out_stats));
  DC_REQUIRE_ARG(ctx, "dc_telemetry_kernel");
  DC_REQUIRE_ARG(kernel_name, "dc_telemetry_kernel");
  dc__telemetry_t* t = ctx->telemetry;
  pthread_mutex_lock(&t->lock);
  histogram_t* h = find_locked(t, kernel_name);
  pthread_mutex_unlock(&t->lock);
  if (h == NULL || !histogram_read(h, out_stats)) {
    return DC_FAIL(DC_ERR_NOT_FOUND,
                   "dc_telemetry_kernel: no kernel named '%s' has run "
                   "(since the context was created or last reset)",
                   kernel_name);
  }
  return DC_OK;
}

size_t dc_telemetry_kernel_count(dc_context_t* ctx) {
  if (ctx == NULL) return 0;
  dc__telemetry_t* t = ctx->telemetry;
  size_t n = 0;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < t->histogram_count; ++i) {
    n += atomic_load_explicit(&t->histograms[i]->count,
                              memory_order_relaxed) > 0;
  }
  pthread_mutex_unlock(&t->lock);
  return n;
}

dc_status_t dc_telemetry_kernel_at(dc_context_t* ctx, size_t index,
                                   char* name, size_t name_size,
                                   dc_timing_stats_t* out_stats) {
  static const char* fn = "dc_telemetry_kernel_at";
  DC_REQUIRE_ARG(out_stats, fn);
  memset(out_stats, 0, sizeof(*out_stats));
  if (name != NULL && name_size > 0) name[0] = '\0';
  DC_REQUIRE_ARG(ctx, fn);
  if (name == NULL && name_size > 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'name' is NULL but name_size is %zu", fn, name_size);
  }
  dc__telemetry_t* t = ctx->telemetry;
  histogram_t* found = NULL;
  size_t with_timings = 0;
  pthread_mutex_lock(&t->lock);
  for (size_t i = 0; i < t->histogram_count; ++i) {
    histogram_t* h = t->histograms[i];
    if (atomic_load_explicit(&h->count, memory_order_relaxed) == 0) continue;
    if (with_timings++ == index) found = h;
  }
  pthread_mutex_unlock(&t->lock);
  if (found == NULL || !histogram_read(found, out_stats)) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: index %zu is past the %zu kernel(s) with timings",
                   fn, index, with_timings);
  }
  if (name != NULL && name_size > 0) {
    dc__strlcpy(name, found->name, name_size);
  }
  return DC_OK;
}

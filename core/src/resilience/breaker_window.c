// breaker_window.c: a circuit breaker's window of outcomes (see
// breaker_window.h).
// SPDX-License-Identifier: MIT
#include "breaker_window.h"

#include <string.h>

enum { FAILED = 1, SLOW = 2 };  // the bits of a count window's byte

dc_status_t dc__window_configure(dc__window_t* w, dc_allocator_t allocator,
                                 uint32_t calls, uint64_t window_ns) {
  uint8_t* ring = NULL;
  if (calls > 0) {
    ring = dc_allocator_calloc(allocator, calls, 1);
    if (ring == NULL) {
      return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "cannot allocate a breaker window of %u calls",
                     (unsigned)calls);
    }
  }
  dc__window_destroy(w, allocator);
  w->ring = ring;
  w->size = calls;
  if (window_ns < DC__WINDOW_BUCKETS) window_ns = DC__WINDOW_BUCKETS;
  atomic_store(&w->bucket_ns, window_ns / DC__WINDOW_BUCKETS);
  dc__window_clear(w);
  return DC_OK;
}

void dc__window_destroy(dc__window_t* w, dc_allocator_t allocator) {
  if (w->ring != NULL) dc_allocator_free(allocator, w->ring, w->size);
  w->ring = NULL;
  w->size = 0;
}

void dc__window_clear(dc__window_t* w) {
  for (int i = 0; i < DC__WINDOW_BUCKETS; ++i) {
    atomic_store(&w->buckets[i].index, UINT64_MAX);  // no time's bucket
    atomic_store(&w->buckets[i].calls, 0);
    atomic_store(&w->buckets[i].failures, 0);
    atomic_store(&w->buckets[i].slow, 0);
  }
  if (w->ring != NULL) memset(w->ring, 0, w->size);
  w->next = w->filled = w->failures = w->slow = 0;
}

static void ring_add(dc__window_t* w, bool failure, bool slow) {
  uint8_t* slot = &w->ring[w->next];
  if (w->filled == w->size) {  // the oldest outcome leaves
    w->failures -= (*slot & FAILED) != 0;
    w->slow -= (*slot & SLOW) != 0;
  } else {
    w->filled += 1;
  }
  *slot = (uint8_t)((failure ? FAILED : 0) | (slow ? SLOW : 0));
  w->failures += failure;
  w->slow += slow;
  w->next = w->next + 1 == w->size ? 0 : w->next + 1;
}

void dc__window_add(dc__window_t* w, uint64_t now, bool failure, bool slow) {
  if (w->size > 0) {
    ring_add(w, failure, slow);
    return;
  }
  uint64_t current = now / atomic_load(&w->bucket_ns);
  dc__window_bucket_t* k = &w->buckets[current % DC__WINDOW_BUCKETS];
  if (k->index != current) {  // emptied before it is published
    k->calls = 0;
    k->failures = 0;
    k->slow = 0;
    k->index = current;
  }
  k->calls += 1;
  k->failures += failure;
  k->slow += slow;
}

bool dc__window_add_success_fast(dc__window_t* w, uint64_t now) {
  uint64_t current =
      now / atomic_load_explicit(&w->bucket_ns, memory_order_relaxed);
  dc__window_bucket_t* k = &w->buckets[current % DC__WINDOW_BUCKETS];
  if (atomic_load_explicit(&k->index, memory_order_acquire) != current) {
    return false;
  }
  atomic_fetch_add_explicit(&k->calls, 1, memory_order_relaxed);
  return true;
}

dc__window_totals_t dc__window_totals(const dc__window_t* w, uint64_t now) {
  dc__window_totals_t t = {0};
  if (w->size > 0) {
    t.calls = w->filled;
    t.failures = w->failures;
    t.slow = w->slow;
    return t;
  }
  uint64_t current = now / atomic_load(&w->bucket_ns);
  for (int i = 0; i < DC__WINDOW_BUCKETS; ++i) {
    const dc__window_bucket_t* k = &w->buckets[i];
    if (k->calls == 0 || k->index > current ||
        current - k->index >= DC__WINDOW_BUCKETS) {
      continue;
    }
    t.calls += k->calls;
    t.failures += k->failures;
    t.slow += k->slow;
  }
  return t;
}

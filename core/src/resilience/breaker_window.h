// breaker_window.h: the outcomes a closed circuit breaker counts, over a
// time window or over its last N calls. Never installed.
//
// A time window is 10 buckets of window_ns/10: an outcome counts until
// its bucket is 10 buckets old, so for between 0.9 and 1 window. A count
// window is a ring of the last N outcomes. Each outcome is a call, maybe
// a failure, maybe slow.
//
// Thread safety: the owner's lock guards every function but
// dc__window_add_success_fast, which a success may call without it.
// SPDX-License-Identifier: MIT
#ifndef DC_BREAKER_WINDOW_H_
#define DC_BREAKER_WINDOW_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dc/allocator.h"
#include "internal.h"

#define DC__WINDOW_BUCKETS 10

// Atomic because a success may be counted without the lock.
typedef struct dc__window_bucket_t {
  _Atomic uint64_t index;  // time / bucket_ns of the outcomes it holds
  _Atomic uint32_t calls;
  _Atomic uint32_t failures;
  _Atomic uint32_t slow;
} dc__window_bucket_t;

typedef struct dc__window_t {
  _Atomic uint64_t bucket_ns;  // the time window's; read without the lock
  dc__window_bucket_t buckets[DC__WINDOW_BUCKETS];
  // The count window (size 0: none): one byte per call, oldest at |next|
  // once |filled| reaches |size|.
  uint8_t* ring;
  uint32_t size;
  uint32_t next;
  uint32_t filled;
  uint32_t failures;
  uint32_t slow;
} dc__window_t;

typedef struct dc__window_totals_t {
  uint32_t calls;
  uint32_t failures;
  uint32_t slow;
} dc__window_totals_t;

// Makes |w| a count window of |calls| outcomes when |calls| > 0, else a
// time window of |window_ns| (at least DC__WINDOW_BUCKETS ns), empty.
// |w| is zeroed or was configured before (its ring is replaced).
// Returns DC_ERR_OUT_OF_MEMORY (|w| unchanged) if the ring cannot be had.
DC_INTERNAL dc_status_t dc__window_configure(dc__window_t* w,
                                             dc_allocator_t allocator,
                                             uint32_t calls,
                                             uint64_t window_ns);

DC_INTERNAL void dc__window_destroy(dc__window_t* w,
                                    dc_allocator_t allocator);

DC_INTERNAL void dc__window_clear(dc__window_t* w);

DC_INTERNAL void dc__window_add(dc__window_t* w, uint64_t now, bool failure,
                                bool slow);

// Counts a quick success of a time window without the lock, when the
// current bucket is already in use. Returns false when it did not (a
// bucket to empty first): take the lock and call dc__window_add.
DC_INTERNAL bool dc__window_add_success_fast(dc__window_t* w, uint64_t now);

DC_INTERNAL dc__window_totals_t dc__window_totals(const dc__window_t* w,
                                                  uint64_t now);

#endif  // DC_BREAKER_WINDOW_H_

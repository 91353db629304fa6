// dc/event.h: events, the points in a stream's work that the host and
// other streams wait for, and the pool that recycles them.
// SPDX-License-Identifier: MIT
#ifndef DC_EVENT_H_
#define DC_EVENT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/device.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Events ----------------------------------------------------------===//
//
// An event marks a point in a stream: dc_stream_record() queues a command
// that completes the event once every earlier command of the stream has
// finished. The host waits for it (dc_event_wait), polls it
// (dc_event_query), another stream waits for it (dc_stream_wait_event), a
// callback runs when it completes, and two timing events give the time
// between them.
//
// Each record is a new generation of the event. A wait, on the host or on
// a stream, waits for the generation that was last recorded when the wait
// was made: recording the event again later does not move the target.
// Waiting for an event that was never recorded returns at once, as CUDA
// does. Because every wait refers to a record made before it, streams
// that wait for each other's events can never deadlock.
//
// An event's outcome is the outcome of its last completed record: DC_OK,
// or the error that poisoned it. A record is poisoned when its stream has
// failed (the stream's error: the original status and message), when it
// is cancelled (DC_ERR_CANCELLED), or when the stream it is on waited for
// an event that was itself poisoned (the original error again). Waiting
// for a poisoned event returns its error.
//
// Lifetime: reference counted. dc_event_create() returns one reference; a
// queued record or wait holds another. Released events go back to their
// device's event pool (below). An event belongs to one device and is
// recorded only on that device's streams.
//
// Thread safety: every function is thread-safe; an event may be recorded
// on one thread and waited for on others.

typedef struct dc_event_t dc_event_t;

typedef enum dc_event_flags_e {
  DC_EVENT_DEFAULT = 0,
  // Records the time at which the event completes, for
  // dc_event_elapsed_ns(). Timing events come from a pool of their own.
  DC_EVENT_TIMING = 1u << 0,
} dc_event_flags_t;

// Gets an event for |device| from its event pool (creating one if the
// pool has none cached). The event starts unrecorded.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or unknown flags,
// DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_event_create(dc_device_t* device, uint32_t flags,
                                   dc_event_t** out_event);

DC_API void dc_event_retain(dc_event_t* event);
// Drops a reference; the last one returns the event to its pool.
DC_API void dc_event_release(dc_event_t* event);

// Returns the event's device, NULL for NULL.
DC_API dc_device_t* dc_event_device(const dc_event_t* event);

// Returns whether the event's last record has completed: DC_OK when it
// has (or it was never recorded), DC_ERR_UNAVAILABLE while it is pending
// (a status, not a failure: nothing is logged or counted), or the error
// that poisoned it.
DC_API dc_status_t dc_event_query(const dc_event_t* event);

// Waits until the event's last record (as of this call) completes, for at
// most |timeout_ns| nanoseconds (DC_TIMEOUT_INFINITE: no limit; 0: poll).
// Returns DC_ERR_DEADLINE_EXCEEDED if the time ran out (the event stays
// pending), the poisoning error with its original message, or
// DC_ERR_INVALID_ARGUMENT for NULL.
DC_API dc_status_t dc_event_wait(dc_event_t* event, uint64_t timeout_ns);

#define DC_TIMEOUT_INFINITE UINT64_MAX

// Gets the time from |start|'s completion to |end|'s, in nanoseconds
// (negative if |end| completed first). Both must be timing events of one
// device whose last records have completed without error.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a non-timing event,
// DC_ERR_FAILED_PRECONDITION if either is unrecorded or still pending, or
// an event's poisoning error.
DC_API dc_status_t dc_event_elapsed_ns(const dc_event_t* start,
                                       const dc_event_t* end,
                                       int64_t* out_ns);

// Called once when a record of the event completes, with its outcome.
typedef void (*dc_event_callback_t)(dc_event_t* event, dc_status_t status,
                                    void* user_data);

// Runs |callback| when the event's last record (as of this call)
// completes: on the thread that completes it (an engine thread, or the
// thread calling dc_stream_record() on an idle stream, where the record is
// due at once), or at once on the calling thread if it already has
// completed (or the event was never recorded). The
// callback must not block for long; it may call any dc function except
// waiting for work queued after the event on the same stream. Up to 8
// callbacks may be pending per event.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers,
// DC_ERR_RESOURCE_EXHAUSTED when 8 are already pending.
DC_API dc_status_t dc_event_on_complete(dc_event_t* event,
                                        dc_event_callback_t callback,
                                        void* user_data);

//===-- The event pool --------------------------------------------------===//
//
// Each device keeps two pools of released events, one for timing events
// and one for sync events, so that creating an event in a loop costs a
// list operation. The pools grow on demand (dc_event_pool_reserve grows
// them ahead of time) and dc_event_pool_trim returns cached events to the
// system.

typedef struct dc_event_pool_stats_t {
  uint64_t created;     // events allocated since the context was created
  uint64_t reused;      // dc_event_create calls served from the cache
  uint64_t destroyed;   // events freed by trimming
  size_t in_use;        // events handed out and not yet returned
  size_t peak_in_use;
  size_t cached;        // events waiting in the pool
  double reuse_ratio;   // reused / (created + reused), 0 before any
} dc_event_pool_stats_t;

// Copies the statistics of |device|'s pool for |flags| (DC_EVENT_TIMING
// or DC_EVENT_DEFAULT) into |out_stats|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or unknown flags.
DC_API dc_status_t dc_event_pool_stats(dc_device_t* device, uint32_t flags,
                                       dc_event_pool_stats_t* out_stats);

// Released events wait in their pool before they are handed out again:
// the pool reuses an event only while more than this many wait, so the
// handle of a released event stays detectably stale (functions given it
// fail with DC_ERR_INVALID_ARGUMENT) for at least this many releases.
#define DC_EVENT_POOL_QUARANTINE 16

// Makes sure |device|'s pool for |flags| caches at least |count| events
// ready to hand out (beyond the quarantine).
// Returns DC_ERR_INVALID_ARGUMENT as above, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_event_pool_reserve(dc_device_t* device, uint32_t flags,
                                         size_t count);

// Frees cached events of both of |device|'s pools beyond |keep| each,
// oldest first; the last DC_EVENT_POOL_QUARANTINE released always stay.
// Returns the number freed (0 for NULL).
DC_API size_t dc_event_pool_trim(dc_device_t* device, size_t keep);

DC_EXTERN_C_END

#endif  // DC_EVENT_H_

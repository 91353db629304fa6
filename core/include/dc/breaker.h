// dc/breaker.h: circuit breakers, which stop calling a device or a kernel
// that keeps failing and let a few probes through once it may have
// recovered.
// SPDX-License-Identifier: MIT
#ifndef DC_BREAKER_H_
#define DC_BREAKER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/context.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Circuit breakers ------------------------------------------------===//
//
// A breaker guards calls to something that may fail for a while (a device,
// a kernel). Each call asks first (dc_breaker_acquire) and reports its
// outcome afterwards (dc_breaker_record, or dc_breaker_record_call with
// how long it took). The breaker has three states:
//
//   CLOSED     calls go ahead. Outcomes are counted in a window: the last
//              |window_calls| calls, or (by default) a rolling window of
//              |window_ns|, kept as 10 buckets of window_ns/10, so that an
//              outcome counts for between 0.9 and 1 window. The breaker
//              opens on the outcome that makes the window reach a
//              threshold, exactly at it, never one outcome later:
//                - failures >= |failure_threshold| (when set);
//                - failures/calls >= |failure_ratio|, once the window
//                  holds |min_calls| calls;
//                - slow calls/calls >= |slow_call_ratio|, once it holds
//                  |min_calls| (when |slow_call_ns| is set: a call that
//                  lasted at least that long is slow, whatever its outcome).
//   OPEN       calls fail fast with DC_ERR_CIRCUIT_OPEN ("circuit 'cuda:0'
//              is open for another 812 ms after 12 of 20 calls failed in
//              10 s") for |open_ns| after opening. The first query at or
//              after that moves the breaker to HALF_OPEN.
//   HALF_OPEN  up to |half_open_probes| probes go ahead: a call is let
//              through while probes in flight + probes that succeeded <
//              half_open_probes; others are rejected. When that many
//              probes have succeeded the breaker closes (with an empty
//              window); the first probe that fails, or succeeds slowly,
//              re-opens it for another open_ns. A probe whose outcome
//              counts neither way (below) frees its slot.
//
// Which outcomes count. DC_OK is a success. By default the failures are
// the codes that say something about the health of what the breaker
// guards: those dc_status_kind() calls transient or device-sticky
// (DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, UNAVAILABLE,
// OUT_OF_MEMORY, DEVICE_LOST, DATA_LOSS). Every other code counts neither
// way: the caller's mistakes (INVALID_ARGUMENT, OUT_OF_RANGE, ...) and
// every deterministic failure (COMPILE, INTERNAL, ...), CANCELLED, and
// CIRCUIT_OPEN itself (another breaker's refusal), so a caller passing bad
// arguments never opens a device's breaker. |failure_codes| replaces the
// default set. Values outside 0..63 are treated as UNKNOWN.
//
// Outcomes are matched to the state they were acquired in through the
// permit dc_breaker_acquire() hands out: only the probes of the current
// half-open period move a half-open breaker, and outcomes reported while
// the breaker is open or half-open (late results of calls made before it
// opened) do not enter the window. While closed, every outcome counts.
//
// Every transition is logged at warn level through the context's log
// (component "breaker"), counted (dc_breaker_stats), and passed to the
// params' on_transition hook; the health report lists the breakers of the
// context's registry with their state and counts.
//
// Lifetime: a breaker is reference counted (dc_breaker_retain and
// dc_breaker_release, for every breaker); each reference keeps its
// context alive. The registry holds its own breakers until the context
// goes.
//
// Time comes from the monotonic clock.
//
// Thread safety: every function is thread-safe; each breaker has a lock
// of its own, and the hook and the log are called outside it. Asking a
// closed breaker, and reporting a quick success to a closed breaker with
// a time window and neither ratio, take no lock, so guarding many short
// calls from several threads costs a few atomic operations each.

typedef struct dc_breaker_t dc_breaker_t;

typedef enum dc_breaker_state_e {
  DC_BREAKER_CLOSED = 0,
  DC_BREAKER_OPEN,
  DC_BREAKER_HALF_OPEN,
} dc_breaker_state_t;

// Returns "closed", "open" or "half_open" ("unknown" otherwise).
DC_API const char* dc_breaker_state_name(dc_breaker_state_t state);

// Called after each transition, outside the breaker's lock, on the thread
// whose call caused it. It may query the breaker but should be quick.
typedef void (*dc_breaker_transition_fn_t)(dc_breaker_t* breaker,
                                           dc_breaker_state_t from,
                                           dc_breaker_state_t to,
                                           void* user_data);

#ifndef DC_STATUS_BIT
#define DC_STATUS_BIT(status) ((uint64_t)1 << (unsigned)(status))
#endif

typedef struct dc_breaker_params_t {
  // Failures in the window that open the breaker (0: no count rule).
  uint32_t failure_threshold;
  // Opens when failures/calls in the window >= this, once the window has
  // min_calls calls (0: off when failure_threshold is set, else 0.5;
  // otherwise in (0, 1]). The zeroed params thus open on a failure rate
  // of half the calls: random faults that retries absorb never reach it
  // (docs/resilience.md has the reasoning).
  double failure_ratio;
  // Calls the window needs before a ratio applies (0: 20).
  uint32_t min_calls;
  // The rolling window (0: 10 s; at least 10 ns). Unused with
  // window_calls.
  uint64_t window_ns;
  // A window of the last this many calls instead of a time (0: the time
  // window; at most DC_BREAKER_MAX_WINDOW_CALLS).
  uint32_t window_calls;
  // Calls lasting at least this long are slow (0: none is).
  uint64_t slow_call_ns;
  // Opens when slow calls/calls in the window >= this, once the window
  // has min_calls calls (0: 1 when slow_call_ns is set; else in (0, 1]).
  double slow_call_ratio;
  // How long the breaker stays open (0: 1 s).
  uint64_t open_ns;
  // Probes that must succeed in half-open to close (0: 1).
  uint32_t half_open_probes;
  // Codes counted as failures, as DC_STATUS_BIT masks (0: the default
  // set above). May not include DC_OK.
  uint64_t failure_codes;
  // Called after each transition (NULL: none).
  dc_breaker_transition_fn_t on_transition;
  void* user_data;
} dc_breaker_params_t;

// The default set of failure codes (see above).
DC_API uint64_t dc_breaker_default_failure_codes(void);

#define DC_BREAKER_MAX_WINDOW_CALLS 1000000u

// Checks |params|. Returns DC_OK, or DC_ERR_INVALID_ARGUMENT with a
// message naming the bad field (NULL, a ratio outside (0, 1] or not
// finite, a window below 10 ns or over DC_BREAKER_MAX_WINDOW_CALLS calls,
// a slow-call ratio without slow_call_ns, failure_codes with DC_OK).
DC_API dc_status_t dc_breaker_params_check(const dc_breaker_params_t* params);

//===-- Breakers --------------------------------------------------------===//

// Creates a breaker named |name| (for messages and logs; at most 63
// bytes) with |params| (NULL: the context's defaults, see
// dc_breaker_set_defaults). It is not in the context's registry (see
// dc_breaker_for) and keeps the context alive until released. Starts
// closed.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, an empty or long
// name, or params dc_breaker_params_check() rejects,
// DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_breaker_create(dc_context_t* context, const char* name,
                                     const dc_breaker_params_t* params,
                                     dc_breaker_t** out_breaker);

// Adds a reference (NULL is a no-op).
DC_API void dc_breaker_retain(dc_breaker_t* breaker);
// Drops a reference: one from dc_breaker_create() or dc_breaker_retain().
// The registry's breakers (dc_breaker_for and the like) hand out none:
// their pointers are valid while the context lives. NULL is a no-op.
DC_API void dc_breaker_release(dc_breaker_t* breaker);

// Replaces the breaker's parameters (NULL: the context's defaults) while
// it is in use, say to tune a device's breaker at run time. The state is
// kept (an open breaker stays open for the time it had); the window
// starts empty.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL breaker or params
// dc_breaker_params_check() rejects, DC_ERR_OUT_OF_MEMORY (the breaker
// unchanged).
DC_API dc_status_t dc_breaker_set_params(dc_breaker_t* breaker,
                                         const dc_breaker_params_t* params);

// Returns the breaker's name, "" for NULL.
DC_API const char* dc_breaker_name(const dc_breaker_t* breaker);

// What dc_breaker_acquire() hands out, to give back to dc_breaker_record().
typedef uint64_t dc_breaker_permit_t;
// A permit for dc_breaker_record() when nothing was acquired: the outcome
// counts as an ordinary (non-probe) call.
#define DC_BREAKER_NO_PERMIT ((dc_breaker_permit_t)0)

// Asks whether a call may go ahead. Returns DC_OK with a permit in
// |out_permit|, after which the caller must report the call's outcome
// with dc_breaker_record() and that permit exactly once (report
// DC_ERR_CANCELLED for a call that did not happen): a half-open breaker
// waits for its probes. Otherwise returns DC_ERR_CIRCUIT_OPEN, counted
// as a rejection, with a message naming the breaker and saying for how
// much longer it stays open (or that its probes are taken).
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_breaker_acquire(dc_breaker_t* breaker,
                                      dc_breaker_permit_t* out_permit);

// Reports the outcome of a call acquired with |permit| (see above for
// what counts). May open, close or re-open the breaker. NULL is a no-op.
// The call counts as quick: dc_breaker_record_call says how long it took.
DC_API void dc_breaker_record(dc_breaker_t* breaker,
                              dc_breaker_permit_t permit,
                              dc_status_t outcome);

// dc_breaker_record() for a call that took |duration_ns|: slow when that
// is at least the params' slow_call_ns.
DC_API void dc_breaker_record_call(dc_breaker_t* breaker,
                                   dc_breaker_permit_t permit,
                                   dc_status_t outcome,
                                   uint64_t duration_ns);

// Acquires, calls |fn| and records its outcome and duration. Returns DC_ERR_CIRCUIT_OPEN
// without calling |fn| when the breaker refuses, else what |fn| returned.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_breaker_call(dc_breaker_t* breaker,
                                   dc_status_t (*fn)(void* user_data),
                                   void* user_data);

// Returns the current state (moving an open breaker whose time is up to
// half-open first). DC_BREAKER_CLOSED for NULL.
DC_API dc_breaker_state_t dc_breaker_state(dc_breaker_t* breaker);

// Opens the breaker now, for open_ns, whatever its state (say, when the
// device is known to be lost); an open breaker starts its time again.
// NULL is a no-op.
DC_API void dc_breaker_trip(dc_breaker_t* breaker);

// Closes the breaker now with an empty window (say, after the device was
// reset). The counters are kept. NULL is a no-op.
DC_API void dc_breaker_reset(dc_breaker_t* breaker);

typedef struct dc_breaker_stats_t {
  dc_breaker_state_t state;
  uint64_t time_in_state_ns;   // since the last transition (or creation)
  uint64_t open_remaining_ns;  // OPEN: time until half-open; else 0
  uint32_t window_calls;       // CLOSED: counted outcomes in the window
  uint32_t window_failures;    // CLOSED: failures in the window
  uint32_t window_slow;        // CLOSED: slow calls in the window
  uint32_t probes_in_flight;   // HALF_OPEN: acquired, not yet recorded
  uint32_t probes_succeeded;   // HALF_OPEN: of half_open_probes
  uint64_t calls;              // outcomes counted: successes + failures
  uint64_t successes;
  uint64_t failures;
  uint64_t ignored;            // outcomes that counted neither way
  uint64_t slow_calls;         // outcomes of calls that were slow
  uint64_t rejections;         // acquires refused
  uint64_t opens;              // transitions to OPEN (re-opens included)
  uint64_t half_opens;         // to HALF_OPEN
  uint64_t closes;             // to CLOSED
} dc_breaker_stats_t;

// Copies the breaker's statistics (since creation).
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_breaker_stats(dc_breaker_t* breaker,
                                    dc_breaker_stats_t* out_stats);

// Copies the breaker's parameters, with the defaults filled in.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_breaker_params(const dc_breaker_t* breaker,
                                     dc_breaker_params_t* out_params);

//===-- The context's registry ------------------------------------------===//
//
// Breakers for devices and kernels are found by name on their context:
// by convention the device's name ("cuda:0") for a device and "kernel:"
// followed by the kernel's name for a kernel. The registry's breakers
// belong to the context: the pointers stay valid while it lives, and the
// health report lists them, in the order they were created.

// Sets the parameters of the breakers created from now on without
// explicit parameters (copied; NULL: back to the built-in defaults).
// Returns DC_ERR_INVALID_ARGUMENT for a NULL context or params
// dc_breaker_params_check() rejects, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_breaker_set_defaults(dc_context_t* context,
                                           const dc_breaker_params_t* params);

// Copies the context's default parameters, as set (zeroes mean the
// built-in defaults).
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_breaker_defaults(dc_context_t* context,
                                       dc_breaker_params_t* out_params);

// Finds the registry's breaker named |name|, creating it with the
// context's defaults on first use.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a bad name,
// DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_breaker_for(dc_context_t* context, const char* name,
                                  dc_breaker_t** out_breaker);

// Creates the registry's breaker |name| with |params| (NULL: the
// context's defaults).
// Returns DC_ERR_ALREADY_EXISTS if the name is taken, otherwise as
// dc_breaker_create().
DC_API dc_status_t dc_breaker_register(dc_context_t* context,
                                       const char* name,
                                       const dc_breaker_params_t* params,
                                       dc_breaker_t** out_breaker);

// The registry's breaker of |device| (|kernel| NULL: named after the
// device) or of the kernel named |kernel| on it ("<device>/<kernel>"):
// the breakers graph ops ask. Made with the context's defaults on first
// use; dc_breaker_set_params() tunes it.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a name too long
// for a breaker, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_device_breaker(dc_device_t* device, const char* kernel,
                                     dc_breaker_t** out_breaker);

// Finds the registry's breaker |name| without creating it.
// Returns DC_ERR_NOT_FOUND if there is none, DC_ERR_INVALID_ARGUMENT for
// NULL pointers.
DC_API dc_status_t dc_breaker_find(dc_context_t* context, const char* name,
                                   dc_breaker_t** out_breaker);

// Returns the number of breakers in the registry (0 for NULL).
DC_API size_t dc_breaker_count(dc_context_t* context);

// Gets the registry's |index|-th breaker, in creation order.
// Returns DC_ERR_OUT_OF_RANGE past the end, DC_ERR_INVALID_ARGUMENT for
// NULL pointers.
DC_API dc_status_t dc_breaker_at(dc_context_t* context, size_t index,
                                 dc_breaker_t** out_breaker);

DC_EXTERN_C_END

#endif  // DC_BREAKER_H_

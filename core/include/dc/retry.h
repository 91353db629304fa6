// dc/retry.h: retry policies: how often, after which failures and after
// how long a failed operation is tried again.
// SPDX-License-Identifier: MIT
#ifndef DC_RETRY_H_
#define DC_RETRY_H_

#include <stdbool.h>
#include <stdint.h>

#include "dc/device.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Retry policies --------------------------------------------------===//
//
// A policy bounds everything a retry loop does, so failures never turn
// into a retry storm:
//   - at most |max_attempts| attempts in all, the first one included;
//   - only failures whose class (or code) the policy names are retried;
//     DC_OK, DC_ERR_INVALID_ARGUMENT and DC_ERR_CANCELLED never are;
//   - before retry number r (1-based) it waits a delay derived from the
//     exponential backoff
//         d(r) = min(max_delay_ns, base_delay_ns * multiplier^(r-1))
//     and the jitter mode (below); no delay exceeds max_delay_ns;
//   - with a budget, no delay is started that would end after
//     |budget_ns| from the start of the first attempt: the loop gives up
//     instead. (The budget limits when attempts start; it cannot cut an
//     attempt that is running.)
//
// Jitter spreads the retries of many callers that failed together. With
// d = d(r), previous = the delay before the previous retry (0 before the
// first), and uniform[a, b] an integer drawn uniformly from a to b
// inclusive:
//   DC_JITTER_FULL          uniform[0, d]                     (the default)
//   DC_JITTER_EQUAL         d/2 + uniform[0, d - d/2]          (in [d/2, d])
//   DC_JITTER_DECORRELATED  min(max_delay_ns,
//                               uniform[base, max(previous, base) * 3])
//                           (grows from the previous delay; ignores the
//                            multiplier)
//   DC_JITTER_NONE          d
// Full jitter is the default, as AWS recommends it: it spreads retries
// the most and costs the least time in total.
//
// A zeroed policy is a valid policy with every default: 3 attempts, 1 ms
// base delay doubling up to 1 s, full jitter, no budget, transient
// failures retried.
//
// Randomness comes from a small deterministic generator (splitmix64).
// With a non-zero |seed| every retry sequence of the policy draws the same
// delays (for tests and reproducible runs). With seed 0, each sequence
// started with dc_retry_begin() (and each dc_retry_call()) gets the next
// seed of a fixed process-wide series: a single-threaded program sees the
// same delays from run to run, while callers that fail together still
// draw different delays.

typedef enum dc_jitter_e {
  DC_JITTER_FULL = 0,  // uniform[0, d]; the default
  DC_JITTER_NONE,      // d
  DC_JITTER_EQUAL,     // d/2 + uniform[0, d - d/2]
  DC_JITTER_DECORRELATED,
} dc_jitter_t;

// The bit of |status| in a mask of codes (0 <= status < 64).
#ifndef DC_STATUS_BIT
#define DC_STATUS_BIT(status) ((uint64_t)1 << (unsigned)(status))
#endif

// Bits of dc_retry_policy_t.retry_on.
#define DC_RETRY_ON_TRANSIENT (1u << DC_STATUS_CLASS_TRANSIENT)
#define DC_RETRY_ON_DETERMINISTIC (1u << DC_STATUS_CLASS_DETERMINISTIC)
#define DC_RETRY_ON_DEVICE (1u << DC_STATUS_CLASS_DEVICE)

typedef struct dc_retry_policy_t {
  // Attempts in all, the first included (0: 3; 1: never retry).
  uint32_t max_attempts;
  // The delay before the first retry (0: 1 ms).
  uint64_t base_delay_ns;
  // Growth of the delay per retry (0: 2.0; otherwise finite and >= 1).
  double multiplier;
  // The cap on any one delay (0: 1 s; must be >= base_delay_ns).
  uint64_t max_delay_ns;
  dc_jitter_t jitter;
  // Total time for all attempts and delays, from the start of the first
  // attempt (0: no budget).
  uint64_t budget_ns;
  // Status classes retried, DC_RETRY_ON_* bits (0: DC_RETRY_ON_TRANSIENT).
  // Graph ops never retry a device-class failure on the device that
  // failed: they go to their fallback (dc/graph.h).
  uint32_t retry_on;
  // Codes retried whatever their class (DC_STATUS_BIT masks). May not
  // name DC_OK, DC_ERR_INVALID_ARGUMENT or DC_ERR_CANCELLED.
  uint64_t also_retry;
  // Codes never retried whatever their class; wins over everything else.
  uint64_t never_retry;
  // The jitter generator's seed (0: a process-wide series, see above).
  uint64_t seed;
} dc_retry_policy_t;

// Checks |policy|. Returns DC_OK, or DC_ERR_INVALID_ARGUMENT with a
// message naming the bad field (NULL, a multiplier below 1 or not finite,
// an unknown jitter, base_delay_ns above max_delay_ns after defaults,
// unknown retry_on bits, also_retry naming a code that is never retried).
DC_API dc_status_t dc_retry_policy_check(const dc_retry_policy_t* policy);

// Writes |policy| (NULL: the zeroed policy) with every default filled in
// to |out_policy|: what the other functions use. Fields a check would
// reject are clamped (a multiplier below 1 becomes 1, base_delay_ns
// above max_delay_ns becomes max_delay_ns), so every function stays
// within bounds even for a policy nobody checked.
DC_API void dc_retry_policy_resolve(const dc_retry_policy_t* policy,
                                    dc_retry_policy_t* out_policy);

// Returns whether the policy retries |status| at all, attempts and time
// aside: false for DC_OK, DC_ERR_INVALID_ARGUMENT, DC_ERR_CANCELLED and
// codes in never_retry; true for codes in also_retry and codes whose class
// is in retry_on (values that are not codes are deterministic). NULL: the
// defaults.
DC_API bool dc_retry_is_retryable(const dc_retry_policy_t* policy,
                                  dc_status_t status);

// Returns whether an operation that failed with |status| on attempt
// |attempt| (1-based), |elapsed_ns| after its first attempt started, may
// be tried again: |status| is retryable, attempt < max_attempts, and the
// budget (if any) has not run out (elapsed_ns < budget_ns). Whether the
// next delay fits the budget is for dc_retry_next() to say.
DC_API bool dc_retry_should(const dc_retry_policy_t* policy,
                            dc_status_t status, uint32_t attempt,
                            uint64_t elapsed_ns);

// Returns the delay before retry number |retry| (1-based; 0 counts as 1),
// per the formulas above. |previous_ns| is the delay before the previous
// retry (0 for the first); |rng_state| is the generator's state, kept by
// the caller between calls (start it at any value, e.g. the seed).
DC_API uint64_t dc_retry_delay_ns(const dc_retry_policy_t* policy,
                                  uint32_t retry, uint64_t previous_ns,
                                  uint64_t* rng_state);

//===-- Retry loops -----------------------------------------------------===//
//
// dc_retry_begin() and dc_retry_next() are the loop without the sleeping,
// for code that waits its own way (a scheduler re-queuing work, an event
// loop): after each failed attempt, dc_retry_next() says whether to try
// again and after how long.
//
//   dc_retry_state_t s;
//   dc_retry_begin(&policy, &s);
//   uint64_t start = now(), delay;
//   for (;;) {
//     dc_status_t st = attempt();
//     if (dc_retry_next(&policy, &s, st, now() - start, &delay) !=
//         DC_RETRY_AGAIN) return st;
//     sleep_ns(delay);
//   }

// Why a retry loop goes on or stops.
typedef enum dc_retry_verdict_e {
  DC_RETRY_AGAIN = 0,           // retry after the delay given
  DC_RETRY_SUCCEEDED,           // the attempt returned DC_OK
  DC_RETRY_NOT_RETRYABLE,       // the policy does not retry the status
  DC_RETRY_ATTEMPTS_EXHAUSTED,  // max_attempts attempts were made
  DC_RETRY_BUDGET_EXHAUSTED,    // the next delay would end past the budget
} dc_retry_verdict_t;

// Returns the verdict's name: "AGAIN", "SUCCEEDED", ...
DC_API const char* dc_retry_verdict_name(dc_retry_verdict_t verdict);

typedef struct dc_retry_state_t {
  uint32_t attempts;        // attempts finished so far
  uint64_t last_delay_ns;   // the latest delay handed out (0: none yet)
  uint64_t total_delay_ns;  // the sum of the delays handed out
  uint64_t rng;             // the jitter generator's state
} dc_retry_state_t;

// Starts a retry sequence for |policy| (NULL: the defaults): zeroes
// |state| and seeds its generator.
DC_API void dc_retry_begin(const dc_retry_policy_t* policy,
                           dc_retry_state_t* state);

// Reports the outcome |status| of the attempt that just ended,
// |elapsed_ns| after the first attempt started. Counts the attempt, then
// decides, in this order: SUCCEEDED for DC_OK; NOT_RETRYABLE;
// ATTEMPTS_EXHAUSTED when attempts == max_attempts; BUDGET_EXHAUSTED when
// elapsed_ns + the next delay > budget_ns; else AGAIN, with the delay in
// |out_delay_ns| (which may be NULL) and added to the state. Other
// verdicts write 0 there.
DC_API dc_retry_verdict_t dc_retry_next(const dc_retry_policy_t* policy,
                                        dc_retry_state_t* state,
                                        dc_status_t status,
                                        uint64_t elapsed_ns,
                                        uint64_t* out_delay_ns);

typedef struct dc_retry_report_t {
  uint32_t attempts;           // attempts made, the first included
  uint64_t total_delay_ns;     // time slept between attempts (as asked)
  uint64_t elapsed_ns;         // from the first attempt's start to the end
  dc_status_t last_status;     // what the last attempt returned
  dc_retry_verdict_t verdict;  // why the loop stopped
} dc_retry_report_t;

// The operation to retry; it must be safe to call more than once.
typedef dc_status_t (*dc_retry_fn_t)(void* user_data);

// Calls |fn| until it succeeds or |policy| (NULL: the defaults) gives up,
// sleeping the calling thread between attempts. Returns the last status
// |fn| returned, with the message it left in dc_last_error(). When the
// loop gave up on a retryable failure, the message gets the reason
// appended: "... (gave up after 3 attempts)" or "... (gave up after 4
// attempts: the 50 ms budget would be exceeded)". |out_report| (may be
// NULL) receives the account of the loop.
// Returns DC_ERR_INVALID_ARGUMENT, without calling |fn|, for a NULL |fn|
// or a policy dc_retry_policy_check() rejects.
DC_API dc_status_t dc_retry_call(const dc_retry_policy_t* policy,
                                 dc_retry_fn_t fn, void* user_data,
                                 dc_retry_report_t* out_report);

//===-- The device-wide default ------------------------------------------===//
//
// Each device has a default policy for the work that sets none (graph
// ops, calls without a policy of their own). Until set it is the zeroed
// policy, that is the built-in defaults.

// Sets |device|'s default policy (copied; NULL: back to the built-in
// defaults). Thread-safe.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL device or a policy
// dc_retry_policy_check() rejects, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_device_set_retry_policy(dc_device_t* device,
                                              const dc_retry_policy_t* policy);

// Copies |device|'s default policy, as set (fields left 0 mean their
// defaults; dc_retry_policy_resolve() fills them in).
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_device_retry_policy(const dc_device_t* device,
                                          dc_retry_policy_t* out_policy);

DC_EXTERN_C_END

#endif  // DC_RETRY_H_

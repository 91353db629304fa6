// breaker_internal.h: what the breakers (breaker.c) and the per-context
// state of resilience (breaker_registry.c: the breaker registry, its
// default parameters, each device's default retry policy) share, and a
// clock tests can replace. Never installed.
// SPDX-License-Identifier: MIT
#ifndef DC_BREAKER_INTERNAL_H_
#define DC_BREAKER_INTERNAL_H_

#include "dc/breaker.h"
#include "dc/retry.h"
#include "internal.h"

// The state hangs off the context (ctx->resilience), created on first
// use. The context drops it when it is destroyed, before the devices go.
// Safe to call for a context that never used breakers or retry policies,
// and more than once.
DC_INTERNAL void dc__resilience_context_destroy(dc_context_t* ctx);

// The device-wide default retry policy (retry.c's public functions).
// |policy| NULL resets it.
DC_INTERNAL dc_status_t dc__resilience_set_device_policy(
    dc_device_t* device, const dc_retry_policy_t* policy);
DC_INTERNAL void dc__resilience_device_policy(const dc_device_t* device,
                                              dc_retry_policy_t* out_policy);

// A breaker's name holds at most DC__BREAKER_NAME_SIZE - 1 bytes.
#define DC__BREAKER_NAME_SIZE 64

// Makes a breaker with |params| (checked; NULL: the built-in defaults).
// One |in_registry| is the registry's: its first reference holds no hold
// on the context, and the registry releases it when the context goes.
DC_INTERNAL dc_status_t dc__breaker_new(dc_context_t* ctx, const char* name,
                                        const dc_breaker_params_t* params,
                                        bool in_registry,
                                        dc_breaker_t** out_breaker);
// The size of struct dc_breaker_t, for the context's object cache.
DC_INTERNAL size_t dc__breaker_object_size(void);

// DC_ERR_INVALID_ARGUMENT, naming |fn|, for a bad name or bad params
// (NULL params are fine).
DC_INTERNAL dc_status_t dc__breaker_check_name(const char* name,
                                               const char* fn);
DC_INTERNAL dc_status_t dc__breaker_checked_params(
    const dc_breaker_params_t* params, const char* fn);

// The context's default params, as set (zeroes: the built-in defaults).
DC_INTERNAL dc_breaker_params_t dc__breaker_context_defaults(
    dc_context_t* ctx);

// Replaces the breaker's clock (default: dc__now_ns) with |now_ns|
// called with |user_data| (NULL |now_ns|: back to the default). For
// tests; set it before the breaker is used by other threads.
typedef uint64_t (*dc__clock_fn_t)(void* user_data);
DC_INTERNAL void dc__breaker_set_clock(dc_breaker_t* breaker,
                                       dc__clock_fn_t now_ns,
                                       void* user_data);

// dc_breaker_record_call() at |now_ns|, a time the caller has just read
// from dc__now_ns(), so that several breakers and the caller's own timing
// share one clock read. A breaker whose clock was replaced reads its own.
DC_INTERNAL void dc__breaker_record_at(dc_breaker_t* breaker,
                                       dc_breaker_permit_t permit,
                                       dc_status_t outcome,
                                       uint64_t duration_ns, uint64_t now_ns);

// Writes |ns| as "10 s", "1.5 s", "50 ms", "100 us" or "7 ns" into |buf|
// and returns |buf| (retry.c).
DC_INTERNAL const char* dc__format_duration(uint64_t ns, char* buf,
                                            size_t size);

#endif  // DC_BREAKER_INTERNAL_H_

// fault_internal.h: the engine's side of fault injection (fault.c).
// SPDX-License-Identifier: MIT
#ifndef DC_FAULT_INTERNAL_H_
#define DC_FAULT_INTERNAL_H_

#include "context_internal.h"
#include "dc/fault.h"

// Sets up a context's (empty) rule set.
DC_INTERNAL void dc__fault_set_init(dc__fault_set_t* set);

DC_INTERNAL dc_status_t dc__fault_check_slow(dc_context_t* ctx,
                                             dc_fault_site_t site,
                                             const dc_device_t* device,
                                             const char* name,
                                             bool* out_halfway);

// Whether |ctx| has no rule: then this one relaxed load is all a check
// costs.
static inline bool dc__fault_none(dc_context_t* ctx) {
  return atomic_load_explicit(&ctx->faults.rule_count,
                              memory_order_relaxed) == 0;
}

// Called at each site, after the call's own checks and before the device
// does anything: returns DC_OK, or the status of an injected fault with
// the message set (dc_set_error) and logged at level debug. |name| is the
// kernel, program or buffer label the call is about (NULL or "": none).
static inline dc_status_t dc__fault_check(dc_context_t* ctx,
                                          dc_fault_site_t site,
                                          const dc_device_t* device,
                                          const char* name) {
  if (dc__fault_none(ctx)) return DC_OK;
  return dc__fault_check_slow(ctx, site, device, name, NULL);
}

// dc__fault_check for a copy site, which may fail halfway: on a fault,
// *|out_halfway| says whether the rule lets the first half of the copy
// move before the failure is returned (dc/fault.h).
static inline dc_status_t dc__fault_check_copy(dc_context_t* ctx,
                                               const dc_device_t* device,
                                               const char* name,
                                               bool* out_halfway) {
  *out_halfway = false;
  if (dc__fault_none(ctx)) return DC_OK;
  return dc__fault_check_slow(ctx, DC_FAULT_COPY, device, name, out_halfway);
}

// Adds the rules of the environment variable DC_FAULTS to |ctx|, once its
// devices are known. Fails with DC_ERR_INVALID_ARGUMENT if it is malformed.
DC_INTERNAL dc_status_t dc__fault_init(dc_context_t* ctx);
// Logs what each rule of |ctx| did (level info) and frees them.
DC_INTERNAL void dc__fault_forget(dc_context_t* ctx);

#endif  // DC_FAULT_INTERNAL_H_

// l_watchdog.h: ends the checked kernels still running when an engine
// run's time limit passes (dc_context_interrupt), for runs a Lua count
// hook cannot stop because they wait in C: a dispatch in progress.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_L_WATCHDOG_H_
#define DCLUA_L_WATCHDOG_H_

#include <dc/dc.h>

typedef struct dclua_watchdog_t dclua_watchdog_t;

// Starts the watchdog's thread for |context| (borrowed; it must outlive
// the watchdog), disarmed. Returns DC_ERR_RESOURCE_EXHAUSTED when no
// thread can be had.
dc_status_t dclua_watchdog_create(dc_context_t* context,
                                  dclua_watchdog_t** out_watchdog);
// Stops the thread and frees the watchdog. NULL is a no-op.
void dclua_watchdog_destroy(dclua_watchdog_t* watchdog);

// Interrupts the context at |deadline_ns| (dclua_now_ns's clock) unless
// disarmed before; 0 disarms.
void dclua_watchdog_arm(dclua_watchdog_t* watchdog, uint64_t deadline_ns);
// Whether it interrupted the context since it was last armed.
bool dclua_watchdog_fired(dclua_watchdog_t* watchdog);

#endif  // DCLUA_L_WATCHDOG_H_

// l_watchdog.h: what makes an engine run's time limit hold where a Lua
// count hook cannot see it, because the run waits in C.
//
// Two things wait in C: checked kernels, which the watchdog's thread ends
// by interrupting the context when the deadline passes
// (dc_context_interrupt); and the module's blocking waits (stream, group
// and event waits, futures, graph runs), which bound themselves: each
// cuts its timeout to the time left before the run's deadline
// (dclua_wait_budget_ns) and, when that cut ended it, raises the same
// "time limit exceeded" error the count hook raises (dclua_wait_ended).
// The work a wait gave up on goes on in the engine; the engine still
// shuts down as usual.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_L_WATCHDOG_H_
#define DCLUA_L_WATCHDOG_H_

#include <dc/dc.h>
#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

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

//===-- Waits under the run's time limit --------------------------------===//

// Returns the deadline of the engine run in progress in |L|
// (dclua_now_ns's clock), or 0 when there is none: |L| is not an engine's
// state, the engine has no time limit, or no run is in progress
// (l_engine.c). Lua-thread only.
// [-0, +0, -]
uint64_t dclua_run_deadline_ns(lua_State* L);

// Whether the run in progress in |L| has met its time limit: the
// deadline passed, or its watchdog interrupted the context's kernels
// (then work that failed CANCELLED failed because of the limit).
// [-0, +0, -]
bool dclua_time_limit_stopped(lua_State* L);

// Raises the run's time-limit error, DEADLINE_EXCEEDED "time limit
// exceeded (N s)", and, as the count hook does, makes every later Lua
// instruction of the run raise it again, so that a pcall cannot hold it
// back (l_engine.c).
// [-0, +0, v]
int dclua_raise_time_limit(lua_State* L);

// Returns |timeout_ns| (DC_TIMEOUT_INFINITE: none) cut to the time left
// before the run's deadline, 0 when it has passed, and sets *|limited|
// when the deadline is what bounds the wait. Call it right before the
// wait; pass *|limited| to dclua_wait_ended after it.
// [-0, +0, -]
uint64_t dclua_wait_budget_ns(lua_State* L, uint64_t timeout_ns,
                              bool* limited);

// Ends a wait given dclua_wait_budget_ns's timeout: raises the run's
// time-limit error when |status| is DC_ERR_DEADLINE_EXCEEDED, the wait
// was |limited| by the deadline and the deadline has passed; else returns
// |status| unchanged.
// [-0, +0, v]
dc_status_t dclua_wait_ended(lua_State* L, dc_status_t status, bool limited);

#endif  // DCLUA_L_WATCHDOG_H_

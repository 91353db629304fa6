// dc/fault.h: fault injection: make launches, copies, allocations and
// compiles fail on purpose, to test what a pipeline does about failures.
// SPDX-License-Identifier: MIT
#ifndef DC_FAULT_H_
#define DC_FAULT_H_

#include <stdbool.h>
#include <stdint.h>

#include "dc/context.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Fault injection -------------------------------------------------===//
//
// A context holds a list of fault rules. Each rule watches some sites (the
// places where the engine calls a device) and makes a matching call fail,
// as if the device had failed, on the nth matching call or at random with
// a given rate. The call returns the rule's status with a message such as
//   "injected fault: launch of kernel 'blur_h' on cpu (rule 1, matching
//    call 17)"
// and does nothing else: no kernel runs, no byte moves (but see halfway
// copies below), no memory is taken.
// A failure on a stream or in a graph is reported as any other failure of
// work there is (a sticky error on the stream, the graph's launch status).
//
// Sites, and the name a rule's |name| filter compares with:
//   DC_FAULT_LAUNCH   every kernel run: dc_kernel_dispatch, streams, graphs,
//                     built-in kernels. Name: the kernel's.
//   DC_FAULT_COPY     dc_buffer_write, dc_buffer_read, dc_buffer_fill and
//                     dc_buffer_copy, also when a stream or graph runs
//                     them. Name: the label of the buffer written (read,
//                     for dc_buffer_read); device: that buffer's.
//   DC_FAULT_ALLOC    dc_buffer_create (views take no memory). Name: the
//                     buffer's label. Every request counts, whether the
//                     memory pool has a block cached or not, so the nth
//                     allocation is the nth buffer created.
//   DC_FAULT_COMPILE  dc_program_create, the built-in program included
//                     (built on the first dc_builtin_kernel of a device).
//                     Name: the program's ("program" when none is given).
// Calls are checked after their arguments: a call that is invalid anyway
// fails with its own message and is not counted.
//
// Firing. A rule counts the calls it matches (its site, and its device and
// name filters). It fires on the |nth| of them, or, with a |rate|, on each
// one with that probability, drawn from a generator seeded with |seed|: for
// a given sequence of matching calls the same calls fail on every run. With
// neither, it fires on every matching call. A |permanent| rule, once it has
// fired, fails every later matching call too (a lost device). |limit| caps
// the faults a rule injects; after that it lets every call through.
//
// Halfway copies. A copy that fails usually moves no byte. A |halfway|
// rule (copy site only) lets the first half of the copy's elements
// (rounded down) move before the failure, as a transfer cut off by a bus
// or device error: the destination then holds new data in front and old
// data behind, until a retry moves the whole range again. Streams and
// graphs retry a copy as they retry any transient failure, so a halfway
// fault tests that what they leave behind is whole. Its message ends
// "halfway: the first half moved".
//
// Rules are tried in the order they were added; the first that fires fails
// the call, and the later ones do not see it.
//
// The status of a fault, unless the rule gives one: DC_ERR_OUT_OF_MEMORY
// for an allocation (what the pool returns when a device runs out) and
// DC_ERR_UNAVAILABLE for the other sites, both transient; for a permanent
// rule DC_ERR_DEVICE_LOST, which is permanent.
//
// The environment variable DC_FAULTS holds rules in the syntax of
// dc_fault_parse(); dc_context_create() adds them, with ids 1, 2, ... in
// the order written, and fails with DC_ERR_INVALID_ARGUMENT if the text is
// malformed. docs/resilience.md has the syntax and examples.
//
// Cost: with no rule in any context, one relaxed atomic load per call.
// Each injected fault is logged at level debug (component "fault").
//
// Thread safety: thread-safe. Rules may be added and removed while other
// threads run work; a call that races with dc_fault_add may or may not see
// the new rule.

// Where faults can be injected; a rule's |sites| is a mask of these.
typedef enum dc_fault_site_e {
  DC_FAULT_LAUNCH = 1u << 0,   // kernel runs
  DC_FAULT_COPY = 1u << 1,     // buffer writes, reads, fills and copies
  DC_FAULT_ALLOC = 1u << 2,    // buffer allocations
  DC_FAULT_COMPILE = 1u << 3,  // program builds
} dc_fault_site_t;

typedef struct dc_fault_rule_t {
  uint32_t sites;      // required: a mask of dc_fault_site_t
  bool permanent;      // once it fires, every later matching call fails
  bool halfway;        // copies only: half the elements move, then it fails
  dc_status_t status;  // 0: the default status (see above); else an error
  uint64_t nth;        // fire on the nth matching call (from 1); 0: rate
  double rate;         // probability per matching call, in (0, 1]; 0: none
  uint64_t seed;       // seeds the draws of |rate|
  uint64_t limit;      // at most this many faults; 0: no limit
  const char* device;  // only on the device of this name, else on the
                       // devices of this backend ("cuda:1", "cuda"; "cpu"
                       // is the first CPU device, not cpu:1); NULL: any
  const char* name;    // only calls on this name (see Sites); NULL: any
} dc_fault_rule_t;

// What a rule has seen.
typedef struct dc_fault_stats_t {
  uint64_t matched;   // calls that reached the rule and matched it
  uint64_t injected;  // of which it failed
} dc_fault_stats_t;

// Adds a rule to |context| and writes its id (from 1, never reused within
// the context) to |out_id|, which may be NULL. The strings are copied.
// Returns DC_ERR_INVALID_ARGUMENT if |context| or |rule| is NULL, if
// |sites| is 0 or has bits that are no site, if |status| is not an error
// code, if |rate| is outside [0, 1], if both |nth| and |rate| are given,
// if |seed| is not 0 while |rate| is, if |halfway| is set on a rule that
// watches a site other than the copy site, or if |device| is empty or names no
// device or backend of the context, or |name| is empty or longer than 127
// characters; DC_ERR_OUT_OF_MEMORY if the rule cannot be stored.
DC_API dc_status_t dc_fault_add(dc_context_t* context,
                                const dc_fault_rule_t* rule,
                                uint32_t* out_id);

// Removes the rule |id|.
// Returns DC_ERR_INVALID_ARGUMENT if |context| is NULL, DC_ERR_NOT_FOUND if
// the context has no rule |id| (never had it, or it was removed).
DC_API dc_status_t dc_fault_remove(dc_context_t* context, uint32_t id);

// Removes every rule of |context|, those of DC_FAULTS included. NULL is a
// no-op.
DC_API void dc_fault_clear(dc_context_t* context);

// Copies what the rule |id| has seen into |out_stats|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, DC_ERR_NOT_FOUND if
// the context has no rule |id|.
DC_API dc_status_t dc_fault_stats(dc_context_t* context, uint32_t id,
                                  dc_fault_stats_t* out_stats);

// Parses |spec|, rules in the syntax of DC_FAULTS, and adds them all, or,
// if any is malformed, none. Rules are separated by ';'; each is a list of
// sites separated by ',', then ':'-separated fields:
//   rate=P       fire with probability P, 0 < P <= 1
//   seed=N       seed of the draws (needs rate; default 0)
//   nth=N        fire on the Nth matching call, N >= 1
//   limit=N      inject at most N faults, N >= 1
//   permanent    once fired, fail every later matching call
//   halfway      copies only: half the elements move before the failure
//   status=NAME  a status name as dc_status_name() spells it, any case
//                (UNAVAILABLE, OUT_OF_MEMORY, DEVICE_LOST, ...)
//   device=NAME  only on this device or backend
//   name=NAME    only calls on this kernel, program or buffer label
// Sites: launch, copy, alloc, compile. Sites, keys and status names may be
// in any case; spaces around the separators are ignored, and so are empty
// rules. A ':' in a device or name value is part of it unless a key
// follows ("device=cuda:0:nth=3"). For example
//   "launch:rate=0.1:seed=7; alloc:nth=3; compile,copy:device=cpu:permanent;
//    copy:nth=2:halfway"
// Returns DC_ERR_INVALID_ARGUMENT for a NULL pointer or a malformed spec,
// with a message that quotes the bad part and its rule, e.g.
//   "dc_fault_parse: 'lanch' is not a fault site (launch, copy, alloc,
//    compile), in rule 'lanch:rate=0.1'";
// DC_ERR_OUT_OF_MEMORY if the rules cannot be stored.
DC_API dc_status_t dc_fault_parse(dc_context_t* context, const char* spec);

DC_EXTERN_C_END

#endif  // DC_FAULT_H_

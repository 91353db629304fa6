// lower_c.h: what the files of the lowering to C (lower_c.c and the
// lower_c_*.c it includes) share: how a kernel's work-items run.
// SPDX-License-Identifier: MIT
#ifndef DC_LOWER_C_H_
#define DC_LOWER_C_H_

#include "ast.h"
#include "cgen.h"
#include "strbuf.h"

// How a kernel's work-items run on one thread (dc_lowered_kernel_t's
// execution: "loop", "regions", "fibers").
typedef enum dc__exec_mode_e {
  // No barrier: the group's work-items are a plain loop around the body,
  // which the C compiler inlines and can vectorise.
  DC_EXEC_LOOP = 0,
  // Barriers in structured, uniform control flow: the body is split at its
  // barriers into regions, each a loop over the work-items, with private
  // variables that live across a barrier kept per work-item.
  DC_EXEC_REGIONS,
  // The fallback for barriers the region transform cannot run (in a
  // switch, after a label, with goto, with break or continue leaving a loop
  // that holds a barrier, or in a helper function): each work-item runs on
  // a stack of its own, and a barrier switches to the next work-item.
  DC_EXEC_FIBERS,
} dc__exec_mode_t;

// Symbols the lowered program exports for kernel K (dc/kernel_abi_c.h):
//   void   dc_k_K_run(const dc_c_launch_t*, void* const* args,
//                     const size_t* lengths, size_t group_begin,
//                     size_t group_end, char* local_mem, char* scratch,
//                     dc_c_fault_t* fault);
//   size_t dc_k_K_local_size(void);           // static __local bytes
//   size_t dc_k_K_scratch_size(size_t wg);    // per-thread scratch bytes

#endif  // DC_LOWER_C_H_

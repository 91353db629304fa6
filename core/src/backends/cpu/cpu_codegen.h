// cpu_codegen.h: translates a parsed program into C for the CPU device.
// SPDX-License-Identifier: MIT
#ifndef DC_CPU_CODEGEN_H_
#define DC_CPU_CODEGEN_H_

#include "ast.h"
#include "cgen.h"
#include "strbuf.h"

// How a kernel's work-items run on one thread.
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

// Symbols the generated module exports for kernel K (see cpu_abi.h):
//   void   dc_k_K_run(const dc__launch_t*, void* const* args,
//                     const size_t* lengths, size_t group_begin,
//                     size_t group_end, char* local_mem, char* scratch,
//                     dc__fault_t* fault);
//   size_t dc_k_K_local_size(void);           // static __local bytes
//   size_t dc_k_K_scratch_size(size_t wg);    // per-thread scratch bytes

typedef struct dc__codegen_options_t {
  const char* file;     // the program's name, for #line
  bool checked;    // checked mode (cgen_checked.c)
} dc__codegen_options_t;

// Writes the C translation of |ast| to |out|, to be compiled after the
// prelude (and after <ucontext.h> when a kernel runs on fibers); |modes|
// (one per function of the AST) receives each kernel's execution mode.
// Reports what cannot be translated to |diag| (DC_ERR_COMPILE).
DC_INTERNAL dc_status_t dc__cpu_codegen(dc__arena_t* arena,
                                        const dc__program_ast_t* ast,
                                        const dc__codegen_options_t* options,
                                        dc__diag_t* diag, dc__strbuf_t* out,
                                        dc__exec_mode_t* modes);

#endif  // DC_CPU_CODEGEN_H_

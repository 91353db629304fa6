// cuda_codegen.h: translates a parsed program into CUDA C++ for NVRTC.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_CODEGEN_H_
#define DC_CUDA_CODEGEN_H_

#include "ast.h"
#include "cgen.h"
#include "strbuf.h"

// What the generated module exports for kernel K (see cuda_prelude.h):
//
//   extern "C" __global__ void dc_k_K(const dc__launch_t _wi,
//       [const dc__lengths_t<P> dc_len,]  // only in checked mode
//       ...the kernel's parameters...)
//
// in the kernel's parameter order, where a buffer is its device address,
// a value its bytes, and a __local pointer an unsigned long long: its
// byte offset into the group's dynamic shared memory (dc__smem). In
// checked mode, dc_len holds every buffer's and __local argument's size
// in bytes (P is the parameter count, at least 1), and the launch
// record's watchdog_ns the kernel time limit. A module with a
// grid-synchronising kernel has the global dc__grid (cuda_prelude.h), a
// checked one the global dc__fault.
#define DC_CUDA_KERNEL_PREFIX "dc_k_"

typedef struct dc__cuda_codegen_options_t {
  const char* file;   // the program's name, for #line
  bool checked;       // checked mode (cgen_checked.c)
} dc__cuda_codegen_options_t;

typedef struct dc__cuda_translation_t {
  const char* source;  // NUL-terminated CUDA C++, to compile after the
  size_t length;       // prelude
  // Per function of the AST: whether it reaches a barrier (or a grid
  // sync), itself or through the helpers it calls.
  bool* reaches_barrier;
  bool uses_grid_sync;  // some kernel synchronises its grid
} dc__cuda_translation_t;

// Writes the CUDA C++ translation of |ast| into |out| (allocated in
// |arena|). Reports what cannot be translated to |diag| (DC_ERR_COMPILE);
// DC_ERR_OUT_OF_MEMORY if the arena fails.
DC_INTERNAL dc_status_t
dc__cuda_codegen(dc__arena_t* arena, const dc__program_ast_t* ast,
                 const dc__cuda_codegen_options_t* options, dc__diag_t* diag,
                 dc__cuda_translation_t* out);

#endif  // DC_CUDA_CODEGEN_H_

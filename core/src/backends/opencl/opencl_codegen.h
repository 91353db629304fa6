// opencl_codegen.h: translates a parsed program into OpenCL C for the
// driver's compiler.
// SPDX-License-Identifier: MIT
#ifndef DC_OPENCL_CODEGEN_H_
#define DC_OPENCL_CODEGEN_H_

#include "ast.h"
#include "cgen.h"
#include "strbuf.h"

// What the generated program exports for kernel K:
//
//   __kernel void dc_k_K(...the kernel's parameters...,
//       [__local uchar* dc_lmem,]        // when it has __local pointers
//       [dc_len_K dc_len,                // only in checked mode:
//        volatile __global uint* dc_stop_word,
//        __global dc__fault_t* dc_fault])
//
// in the kernel's parameter order, where a __global or __constant buffer
// is two arguments, the cl_mem and a ulong byte offset into it (an
// encoded handle's two halves, opencl_internal.h), a __local pointer a
// ulong byte offset into dc_lmem (the group's __local arguments, one
// block), and a value its bytes (bool as uchar, size_t and ptrdiff_t as
// 64-bit integers, which OpenCL does not take as arguments). In checked
// mode, dc_len holds every argument's size in bytes (n[P], P the
// parameter count, at least 1), dc_stop_word the word the host sets to
// stop the dispatch, and dc_fault the fault record (dc__fault_t in
// opencl_prelude.h) followed by DC__SCRATCH_WORDS ulongs of scratch.
#define DC_OPENCL_KERNEL_PREFIX "dc_k_"

typedef struct dc__opencl_codegen_options_t {
  const char* file;  // the program's name, for #line
  bool checked;      // checked mode (cgen_checked.c)
} dc__opencl_codegen_options_t;

typedef struct dc__opencl_translation_t {
  const char* source;  // NUL-terminated OpenCL C, prelude included
  size_t length;
  // Per function of the AST: whether it reaches a barrier, itself or
  // through the helpers it calls.
  bool* reaches_barrier;
  uint32_t scratch_words;  // checked mode: DC__SCRATCH_WORDS
} dc__opencl_translation_t;

// Writes the OpenCL C translation of |ast|, after the prelude, into |out|
// (allocated in |arena|). Reports what cannot be translated to |diag|
// (DC_ERR_COMPILE): grid synchronisation, which OpenCL 1.2 cannot do.
// DC_ERR_OUT_OF_MEMORY if the arena fails.
DC_INTERNAL dc_status_t dc__opencl_codegen(
    dc__arena_t* arena, const dc__program_ast_t* ast,
    const dc__opencl_codegen_options_t* options, dc__diag_t* diag,
    dc__opencl_translation_t* out);

#endif  // DC_OPENCL_CODEGEN_H_

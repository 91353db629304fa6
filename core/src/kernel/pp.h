// pp.h: the kernel language preprocessor and build options.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_PP_H_
#define DC_KERNEL_PP_H_

#include "kernel_limits.h"
#include "lex.h"

// One -D or -U build option, in the order given.
typedef struct dc__macro_option_t {
  const char* name;   // an identifier
  const char* value;  // -D: the replacement ("1" for -D NAME); -U: NULL
} dc__macro_option_t;

// Build options, parsed from the option string a program is built with.
// Every option is one of a known set (docs/kernel-language.md); no text of
// the user's options reaches a compiler except through these fields.
typedef struct dc__build_options_t {
  bool fast_math;         // -cl-fast-relaxed-math, -cl-unsafe-math-...
  bool finite_math;       // -cl-finite-math-only
  bool no_signed_zeros;   // -cl-no-signed-zeros
  bool mad_enable;        // -cl-mad-enable
  bool opt_disable;       // -cl-opt-disable
  bool werror;            // -Werror
  bool no_warnings;       // -w
  bool checked;           // -dc-checked
  bool opt_max;           // -dc-O3
  bool no_coarsening;     // -dc-no-coarsening
  // -D definitions as "NAME" or "NAME=VALUE", in order (-U not included:
  // macro_options has both, in order).
  const char** defines;
  size_t define_count;
  // Accepted, recorded, and so far without effect on the code.
  bool fast_relaxed_math;           // -cl-fast-relaxed-math itself
  bool denorms_are_zero;            // -cl-denorms-are-zero
  bool single_precision_constant;   // -cl-single-precision-constant
  bool fp32_correctly_rounded_divide_sqrt;  // -cl-fp32-correctly-...
  bool kernel_arg_info;             // -cl-kernel-arg-info
  bool debug_info;                  // -g
  int cl_std;  // -cl-std=CL1.x as 100, 110 or 120 (the default)
  // Every -D and -U, in order.
  dc__macro_option_t* macro_options;
  size_t macro_option_count;
} dc__build_options_t;

// Parses |options| (may be NULL). Reports each unknown or malformed option
// to |diag| and returns DC_ERR_COMPILE; |out| is usable either way.
DC_INTERNAL dc_status_t dc__parse_build_options(dc__arena_t* arena,
                                                const char* options,
                                                dc__diag_t* diag,
                                                dc__build_options_t* out);

// Preprocesses |source|: directives, macro expansion, -D definitions.
// |out| receives the tokens of the translation unit, without newlines,
// ending with DC_TOK_EOF; `#pragma unroll` and `nounroll` become
// DC_TOK_PRAGMA tokens. Errors go to |diag| (DC_ERR_COMPILE), including
// each limit of kernel_limits.h the source exceeds.
DC_INTERNAL dc_status_t dc__preprocess(dc__arena_t* arena, const char* source,
                                       size_t length,
                                       const dc__build_options_t* options,
                                       dc__diag_t* diag,
                                       dc__token_list_t* out);

// Shared by the preprocessor and the build options (build_options.c):
// whether |t| is the punctuator # or ##, and whether the |n| bytes at |s|
// name what cannot be defined or undefined (defined, __VA_ARGS__,
// _Pragma, __LINE__, __FILE__).
DC_INTERNAL bool dc__tok_is_hash(const dc__token_t* t);
DC_INTERNAL bool dc__tok_is_paste(const dc__token_t* t);
DC_INTERNAL bool dc__pp_reserved_name(const char* s, size_t n);

#endif  // DC_KERNEL_PP_H_

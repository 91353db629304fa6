// pp.h: the kernel language preprocessor and build options.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_PP_H_
#define DC_KERNEL_PP_H_

#include "lex.h"

// Build options, parsed from the option string a program is built with.
typedef struct dc__build_options_t {
  bool fast_math;         // -cl-fast-relaxed-math, -cl-unsafe-math-...
  bool finite_math;       // -cl-finite-math-only
  bool no_signed_zeros;   // -cl-no-signed-zeros
  bool mad_enable;        // -cl-mad-enable
  bool opt_disable;       // -cl-opt-disable
  bool werror;            // -Werror
  bool no_warnings;       // -w
  bool bounds_check;      // -dc-bounds-check
  bool opt_max;           // -dc-O3
  // -D definitions as "NAME" or "NAME=VALUE", in order.
  const char** defines;
  size_t define_count;
} dc__build_options_t;

// Parses |options| (may be NULL). Reports an unknown option to |diag|.
DC_INTERNAL dc_status_t dc__parse_build_options(dc__arena_t* arena,
                                                const char* options,
                                                dc__diag_t* diag,
                                                dc__build_options_t* out);

// Preprocesses |source|: directives, macro expansion, -D definitions.
// |out| receives the tokens of the translation unit, without newlines,
// ending with DC_TOK_EOF. Errors go to |diag| (DC_ERR_COMPILE).
DC_INTERNAL dc_status_t dc__preprocess(dc__arena_t* arena, const char* source,
                                       size_t length,
                                       const dc__build_options_t* options,
                                       dc__diag_t* diag,
                                       dc__token_list_t* out);

#endif  // DC_KERNEL_PP_H_

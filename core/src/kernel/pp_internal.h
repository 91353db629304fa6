// pp_internal.h: the preprocessor's state, shared by its two files:
// pp.c (the macro table, reading and expanding tokens, #if expressions,
// the predefined macros) and pp_directives.c (#define and #undef,
// conditionals, #pragma, #line and the dispatch of directives).
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_PP_INTERNAL_H_
#define DC_KERNEL_PP_INTERNAL_H_

#include "kernel_limits.h"
#include "pp.h"

#define MACRO_BUCKETS 4096
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

typedef enum macro_kind_e { MACRO_PLAIN, MACRO_LINE, MACRO_FILE } macro_kind_t;

// Where a definition came from, for the redefinition warning.
typedef enum origin_e {
  ORIGIN_PREDEFINED,
  ORIGIN_OPTION,
  ORIGIN_SOURCE
} origin_t;

typedef struct macro_t {
  const char* name;
  uint32_t name_length;
  uint64_t hash;  // of the name
  bool function_like;
  bool variadic;
  bool disabled;  // being expanded
  macro_kind_t kind;
  origin_t origin;
  uint32_t line, col;  // of the name in #define (ORIGIN_SOURCE)
  size_t param_count;
  dc__token_t* params;
  dc__token_t* body;
  size_t body_count;
  struct macro_t* next;
} macro_t;

typedef struct frame_t {
  const dc__token_t* tokens;
  size_t count;
  size_t pos;
  macro_t* macro;  // re-enabled when the frame is popped; NULL otherwise
} frame_t;

typedef struct conditional_t {
  bool active;     // this branch is taken
  bool was_taken;  // some branch of this #if has been taken
  bool seen_else;
  uint32_t line, col;
} conditional_t;

typedef struct pp_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  const dc__build_options_t* options;
  macro_t* buckets[MACRO_BUCKETS];
  uint64_t hash_key;  // this run's own (see hash_name)
  size_t macro_count;
  frame_t frames[DC_LIMIT_MACRO_DEPTH + 1];  // the source, then expansions
  size_t depth;
  conditional_t conds[DC_LIMIT_IF_NESTING];
  size_t cond_count;
  size_t inactive;               // conditionals whose branch is not taken
  size_t expansion_tokens;       // charged to DC_LIMIT_MACRO_EXPANSION_TOKENS
  const dc__token_t* expanding;  // the innermost macro being expanded
  dc__token_t outermost;         // the invocation in the source it began at
  dc__token_list_t* out;
  bool failed;
  bool stopped;  // a limit was reached: read nothing more
} pp_t;

DC_INTERNAL macro_t* dc__pp_add_macro(pp_t* pp, const dc__token_t* tok);
DC_INTERNAL bool dc__pp_check_expr_nesting(pp_t* pp, const char* what,
                                           const dc__token_t* at,
                                           const dc__token_t* toks, size_t n);
DC_INTERNAL void dc__pp_error_at(pp_t* pp, const dc__token_t* tok,
                                 const char* message, const char* detail);
DC_INTERNAL bool dc__pp_eval_condition(pp_t* pp, const dc__token_t* directive,
                                       const dc__token_t* line, size_t n);
DC_INTERNAL void dc__pp_expand_directive(pp_t* pp, const dc__token_t* toks,
                                         size_t n, const dc__token_t* directive,
                                         dc__token_list_t* out);
DC_INTERNAL macro_t* dc__pp_find_macro(pp_t* pp, const char* name, size_t n);
DC_INTERNAL void dc__pp_limit_error(pp_t* pp, uint32_t line, uint32_t col,
                                    const char* format, ...)
    DC_PRINTF_LIKE(4, 5);
DC_INTERNAL bool dc__pp_name_eq(const dc__token_t* a, const dc__token_t* b);
DC_INTERNAL void dc__pp_output(pp_t* pp, dc__token_t tok);
DC_INTERNAL long dc__pp_param_index(const macro_t* m, const dc__token_t* tok);
DC_INTERNAL void dc__pp_remove_macro(pp_t* pp, const char* name, size_t n);
DC_INTERNAL char* dc__pp_token_text(pp_t* pp, const dc__token_t* tok);
DC_INTERNAL void dc__pp_warn_at(pp_t* pp, uint32_t line, uint32_t col,
                                const char* format, ...) DC_PRINTF_LIKE(4, 5);
// pp_directives.c.
DC_INTERNAL void dc__pp_define_macro(pp_t* pp, const dc__token_t* directive,
                                     const dc__token_t* line, size_t n,
                                     origin_t origin);
DC_INTERNAL void dc__pp_read_directive(pp_t* pp);
DC_INTERNAL bool dc__pp_skipping(const pp_t* pp);
// Whether |t| names an extension the engine implements on every device.
DC_INTERNAL bool dc__pp_known_extension(const dc__token_t* t);

#endif  // DC_KERNEL_PP_INTERNAL_H_

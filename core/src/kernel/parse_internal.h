// parse_internal.h: what the parser's files share: parse.c (statements,
// functions, the program, names), parse_types.c (specifiers, declarators,
// records, enums, attributes), parse_jumps.c and parse_calls.c (checks of
// a function's jumps and of the program's call graph).
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_PARSE_INTERNAL_H_
#define DC_KERNEL_PARSE_INTERNAL_H_

#include "sema.h"

// Declaration specifiers: the type they name and everything said about
// the declaration besides.
typedef struct dc__specs_t {
  const dc__ty_t* type;       // qualified: quals and address space applied
  bool has_space;             // an address space was written
  bool is_kernel;
  bool is_typedef;
  bool is_static;
  uint32_t reqd_group_size[3];   // reqd_work_group_size, or zeros
  uint32_t group_size_hint[3];   // work_group_size_hint, or zeros
  uint32_t align;                // aligned(N), 0 if none
  bool packed;
} dc__specs_t;

// Reads declaration specifiers at the cursor. False after an error.
DC_INTERNAL bool dc__parse_specifiers(dc__sema_t* s, dc__specs_t* out);

// Reads a declarator after |specs|: pointers, the name (token index into
// *out_name; none when |abstract|) and array suffixes. *out_type is the
// declared type. False after an error.
DC_INTERNAL bool dc__parse_declarator(dc__sema_t* s, const dc__specs_t* specs,
                                      bool abstract, uint32_t* out_name,
                                      const dc__ty_t** out_type);

// Reads __attribute__((...)) lists at the cursor into |specs| (any number,
// none is fine).
DC_INTERNAL void dc__parse_attributes(dc__sema_t* s, dc__specs_t* specs);

// True if |t| is a storage, inlining, address-space or type qualifier
// keyword, or __attribute__.
DC_INTERNAL bool dc__is_qualifier(const dc__token_t* t);

// Scopes and declarations.
DC_INTERNAL void dc__sema_push_scope(dc__sema_t* s);
DC_INTERNAL void dc__sema_pop_scope(dc__sema_t* s);
// Declares |name| in the innermost scope; an earlier declaration of the
// same name in that scope is an error (except a function's prototype).
DC_INTERNAL dc__decl_t* dc__sema_declare(dc__sema_t* s, dc__decl_kind_t kind,
                                         const dc__token_t* name,
                                         const dc__ty_t* type);
// The tag |name| (struct, union or enum) visible here, or NULL; with
// |innermost|, only one declared in the innermost scope.
DC_INTERNAL const dc__ty_t* dc__sema_find_tag(const dc__sema_t* s,
                                              const dc__token_t* name,
                                              bool innermost);
DC_INTERNAL void dc__sema_add_tag(dc__sema_t* s, const dc__token_t* name,
                                  const dc__ty_t* type);

// The old, flat description of a type that the code generators and the
// reflection still read (ast.h's dc__type_t).
DC_INTERNAL dc__type_t dc__legacy_type(const dc__ty_t* type);

// Whether |name| (|length| bytes) is the text of identifier |t|.
DC_INTERNAL bool dc__same_name(const char* name, uint32_t length,
                               const dc__token_t* t);

// Checks that every break, continue, case, default and goto of |fn|'s
// body has the statement it belongs in or jumps to (parse_jumps.c).
DC_INTERNAL void dc__check_jumps(dc__sema_t* s, const dc__function_t* fn);

// Checks the call graph of the |count| functions once all are parsed
// (parse_calls.c): no recursion, direct or through other functions, and
// no kernel whose private memory with the helpers it calls, along its
// worst chain of calls, passes DC_LIMIT_PRIVATE_BYTES. Completes what
// each function reaches through its calls (calls_grid_sync,
// helper_reaches_barrier).
DC_INTERNAL void dc__check_calls(dc__sema_t* s, dc__function_t* fns,
                                 uint32_t count);

#endif  // DC_KERNEL_PARSE_INTERNAL_H_

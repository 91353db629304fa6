// sema.h: the state shared by the parser (parse.c: declarations,
// statements, types) and the semantic analysis of expressions
// (sema_expr.c). The two run as one pass over the preprocessed tokens:
// every name is resolved when it is read, and every expression is typed
// as soon as it is parsed.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_SEMA_H_
#define DC_KERNEL_SEMA_H_

#include "ast.h"
#include "kernel_limits.h"
#include "tree.h"

// One name in scope.
typedef struct dc__binding_t {
  const char* name;
  uint32_t length;
  dc__decl_t* decl;
} dc__binding_t;

// Tags (struct, union and enum names) live in a namespace of their own.
typedef struct dc__tag_t {
  const char* name;
  uint32_t length;
  const dc__ty_t* type;
} dc__tag_t;

typedef struct dc__sema_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  dc__types_t* types;
  const dc__token_t* toks;
  uint32_t count;
  uint32_t pos;
  int depth;           // current nesting (see DC_LIMIT_NESTING)
  bool failed;
  uint32_t next_id;    // for dc__decl_t.id
  // Names: a stack of bindings; |scopes| holds where each open scope
  // starts. Scope 0 is the program's.
  dc__binding_t* bindings;
  uint32_t binding_count;
  uint32_t binding_capacity;
  // A nesting level opens at most two scopes (a for statement's and its
  // block's), and a function two more (its parameters' and its body's).
  uint32_t scopes[2 * DC_LIMIT_NESTING + 4];
  uint32_t scope_depth;
  dc__tag_t* tags;
  uint32_t tag_count;
  uint32_t tag_capacity;
  uint32_t tag_scopes[2 * DC_LIMIT_NESTING + 4];
  // The function whose body is being parsed (NULL at program scope), and
  // the bytes of private variables it declared so far.
  dc__decl_t* function;
  uint64_t private_bytes;
  // The declaration of every identifier token that names one, and what
  // each token names (both indexed by token), so passes over tokens can
  // tell what a name resolved to.
  dc__decl_t** token_decls;
  uint8_t* token_names;  // dc__name_kind_t
  // The overload each call of a built-in resolved to (at its name token).
  const dc__builtin_t** token_builtins;
} dc__sema_t;

//===-- Tokens (parse.c) --------------------------------------------------===//

DC_INTERNAL const dc__token_t* dc__sema_cur(const dc__sema_t* s);
DC_INTERNAL const dc__token_t* dc__sema_peek(const dc__sema_t* s, uint32_t k);
DC_INTERNAL bool dc__sema_at(const dc__sema_t* s, const char* text);
DC_INTERNAL bool dc__sema_accept(dc__sema_t* s, const char* text);
DC_INTERNAL bool dc__sema_expect(dc__sema_t* s, const char* text);
// Reports an error at |t| (caps the number reported) and marks the
// analysis failed.
DC_INTERNAL void dc__sema_error(dc__sema_t* s, const dc__token_t* t,
                                const char* format, ...) DC_PRINTF_LIKE(3, 4);
DC_INTERNAL void dc__sema_warning(dc__sema_t* s, const dc__token_t* t,
                                  const char* format, ...)
    DC_PRINTF_LIKE(3, 4);
// Makes room in an arena array of |count| items for one more.
DC_INTERNAL bool dc__sema_grow(dc__sema_t* s, void** items,
                               uint32_t* capacity, uint32_t count,
                               size_t size);
// The token's text as a NUL-terminated string in the arena.
DC_INTERNAL const char* dc__sema_spell(dc__sema_t* s, const dc__token_t* t);
// Enters one level of nesting; false (after an error naming the limit)
// when that would pass DC_LIMIT_NESTING. Each true needs a dc__sema_leave.
DC_INTERNAL bool dc__sema_enter(dc__sema_t* s, const dc__token_t* where);
DC_INTERNAL void dc__sema_leave(dc__sema_t* s);

//===-- Names (parse.c) ---------------------------------------------------===//

// The innermost declaration of the identifier |t|, or NULL.
DC_INTERNAL dc__decl_t* dc__sema_lookup(const dc__sema_t* s,
                                        const dc__token_t* t);
// Records that token |t| names |decl| (token_decls, token_names).
DC_INTERNAL void dc__sema_note_use(dc__sema_t* s, const dc__token_t* t,
                                   dc__decl_t* decl);
// Records that token |t| is a name of kind |kind| (a member, a tag, a
// label) that is no declaration.
DC_INTERNAL void dc__sema_note_name(dc__sema_t* s, const dc__token_t* t,
                                    dc__name_kind_t kind);

// Adds |bytes| of private memory that |name| takes (a variable, a
// parameter, a call's struct temporaries) to the function's count: its
// frame is held to DC_LIMIT_PRIVATE_BYTES by itself too, so the message
// can name what crossed it. False after that error.
DC_INTERNAL bool dc__sema_count_private(dc__sema_t* s, const dc__token_t* name,
                                        uint64_t bytes);

//===-- Types (parse.c) ---------------------------------------------------===//

// True if the cursor starts a type name: a type keyword, a vector type, a
// typedef name, struct/union/enum, or a qualifier.
DC_INTERNAL bool dc__sema_starts_type(const dc__sema_t* s);
// Parses a type name (specifiers and an abstract declarator, as in a cast
// or sizeof) at the cursor. NULL after an error.
DC_INTERNAL const dc__ty_t* dc__sema_type_name(dc__sema_t* s);

//===-- Expressions (sema_expr.c) -----------------------------------------===//

// An expression (with the comma operator) at the cursor. NULL after an
// error (reported).
DC_INTERNAL dc__expr_t* dc__sema_expression(dc__sema_t* s);
// An assignment-expression: a call argument, an initialiser's element.
DC_INTERNAL dc__expr_t* dc__sema_assignment(dc__sema_t* s);
// A conditional-expression that must be an integer constant expression
// (array sizes, case labels, enumerators, attribute arguments): its value
// goes to |out|. |what| names the context for messages ("array size").
DC_INTERNAL bool dc__sema_constant(dc__sema_t* s, const char* what,
                                   int64_t* out);
// The initialiser of a declaration of |type| after its '=': an
// assignment-expression or a braced list, converted to |type|.
DC_INTERNAL dc__expr_t* dc__sema_initializer(dc__sema_t* s,
                                             const dc__ty_t* type);
// |e| converted to |to| as by assignment (OpenCL C 6.2): NULL after an
// error naming |context| ("argument 2 of 'f'", "return", "initialiser").
DC_INTERNAL dc__expr_t* dc__sema_convert(dc__sema_t* s, dc__expr_t* e,
                                         const dc__ty_t* to,
                                         const char* context);
// |e| as the condition of if/while/for/do/?: : a scalar (arithmetic or
// pointer). NULL after an error.
DC_INTERNAL dc__expr_t* dc__sema_condition(dc__sema_t* s, dc__expr_t* e);

#endif  // DC_KERNEL_SEMA_H_

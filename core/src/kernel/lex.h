// lex.h: tokens of the kernel language and the lexer.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_LEX_H_
#define DC_KERNEL_LEX_H_

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "diag.h"
#include "internal.h"

typedef enum dc__tok_kind_e {
  DC_TOK_EOF = 0,
  DC_TOK_IDENT,
  DC_TOK_NUMBER,
  DC_TOK_STRING,
  DC_TOK_CHAR,
  DC_TOK_PUNCT,
  DC_TOK_NEWLINE,  // only inside the preprocessor, ends a directive
  // A #pragma the parser attaches to what follows (a loop): its text is
  // the pragma without "#pragma", normalised ("unroll", "unroll 4",
  // "nounroll"); its place is the '#'.
  DC_TOK_PRAGMA,
} dc__tok_kind_t;

enum {
  DC_TOKF_SPACE = 1u << 0,      // whitespace before the token
  DC_TOKF_LINE_START = 1u << 1, // first token of a line
  DC_TOKF_NO_EXPAND = 1u << 2,  // a macro name that must not expand again
};

// A token. |text| points into the source or into the preprocessor's
// string arena and is not NUL-terminated; |line| and |col| (1-based) are
// where the user wrote it (for a macro expansion: where the macro was used).
typedef struct dc__token_t {
  dc__tok_kind_t kind;
  uint32_t length;
  const char* text;
  uint32_t line;
  uint32_t col;
  uint32_t flags;
} dc__token_t;

// A growable array of tokens.
typedef struct dc__token_list_t {
  dc__token_t* items;
  size_t count;
  size_t capacity;
} dc__token_list_t;

// Appends |tok|, growing the array in |arena|. False when out of memory.
DC_INTERNAL bool dc__token_list_push(dc__arena_t* arena,
                                     dc__token_list_t* list, dc__token_t tok);

// The capacity |list| has after one more push: what that push allocates,
// if it differs from the present one.
DC_INTERNAL size_t dc__token_list_grown_capacity(const dc__token_list_t* list);

// Makes room for at least |capacity| tokens in |list| at once (no growth
// by doubling). False when out of memory.
DC_INTERNAL bool dc__token_list_reserve(dc__arena_t* arena,
                                        dc__token_list_t* list,
                                        size_t capacity);

// True if |tok| is the punctuator or identifier spelled |s|.
DC_INTERNAL bool dc__tok_is(const dc__token_t* tok, const char* s);

// True if |tok| is an assignment operator ("=", "+=", ..., "++", "--").
DC_INTERNAL bool dc__tok_is_assignment(const dc__token_t* tok);

// The index of the token that closes the bracket ("(", "[" or "{") opened
// at |toks|[i], or |end| when none does before it.
DC_INTERNAL uint32_t dc__tok_matching(const dc__token_t* toks, uint32_t i,
                                      uint32_t end);

// Parses a vector component selector ("x", "xy", "s01", "S0f", ...) into
// |lanes|. Returns the lane count, 0 if |tok| is not a selector, and -1
// for "lo", "hi", "even" and "odd", whose lanes depend on the width.
DC_INTERNAL int dc__tok_swizzle(const dc__token_t* tok, int lanes[16]);

// Splits |source| into tokens, newlines included (DC_TOK_NEWLINE, one for
// a run of line ends), ending with DC_TOK_EOF. Comments become whitespace;
// backslash-newline joins lines. Reports malformed input (an unterminated
// comment or string, a stray character, a control character inside a
// literal, more than DC_LIMIT_TOKENS tokens) to |diag| and returns
// DC_ERR_COMPILE; it stops after DC_LIMIT_ERRORS errors.
DC_INTERNAL dc_status_t dc__lex(dc__arena_t* arena, const char* source,
                                size_t length, dc__diag_t* diag,
                                dc__token_list_t* out);

#endif  // DC_KERNEL_LEX_H_

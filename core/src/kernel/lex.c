// lex.c: the kernel language lexer.
// SPDX-License-Identifier: MIT
#include "lex.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "kernel_limits.h"

size_t dc__token_list_grown_capacity(const dc__token_list_t* list) {
  if (list->count < list->capacity) return list->capacity;
  // Small lists start small: the preprocessor makes one per macro
  // argument and replacement, and charges their memory to its limits.
  return list->capacity ? list->capacity * 2 : 8;
}

bool dc__token_list_reserve(dc__arena_t* arena, dc__token_list_t* list,
                            size_t capacity) {
  if (capacity <= list->capacity) return true;
  if (capacity > SIZE_MAX / sizeof(dc__token_t)) return false;
  dc__token_t* items = dc__arena_alloc(arena, capacity * sizeof(*items));
  if (items == NULL) return false;
  if (list->count) memcpy(items, list->items, list->count * sizeof(*items));
  list->items = items;
  list->capacity = capacity;
  return true;
}

bool dc__token_list_push(dc__arena_t* arena, dc__token_list_t* list,
                         dc__token_t tok) {
  if (list->count == list->capacity &&
      !dc__token_list_reserve(arena, list,
                              dc__token_list_grown_capacity(list))) {
    return false;
  }
  list->items[list->count++] = tok;
  return true;
}

bool dc__tok_is(const dc__token_t* tok, const char* s) {
  // The parser asks this of every token against lists of words: the first
  // byte rules out almost all of them without measuring |s|.
  if ((tok->kind != DC_TOK_PUNCT && tok->kind != DC_TOK_IDENT) ||
      tok->length == 0 || tok->text[0] != s[0]) {
    return false;
  }
  size_t n = strlen(s);
  return tok->length == n && memcmp(tok->text, s, n) == 0;
}

bool dc__tok_is_assignment(const dc__token_t* tok) {
  static const char* const kOps[] = {"=",  "+=", "-=", "*=",  "/=", "%=",
                                     "&=", "|=", "^=", "<<=", ">>=", "++",
                                     "--"};
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    if (dc__tok_is(tok, kOps[i])) return true;
  }
  return false;
}

uint32_t dc__tok_matching(const dc__token_t* toks, uint32_t i, uint32_t end) {
  int depth = 0;
  for (uint32_t k = i; k < end; ++k) {
    const dc__token_t* t = &toks[k];
    if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) {
      ++depth;
    } else if (dc__tok_is(t, ")") || dc__tok_is(t, "]") ||
               dc__tok_is(t, "}")) {
      if (--depth == 0) return k;
    }
  }
  return end;
}

// Lane index of a selector letter (sN digits when |numeric|), or -1.
static int lane_of(char c, bool numeric) {
  if (numeric) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  const char* p = strchr("xyzw", c);
  return p && c ? (int)(p - "xyzw") : -1;
}

int dc__tok_swizzle(const dc__token_t* tok, int lanes[16]) {
  if (dc__tok_is(tok, "lo") || dc__tok_is(tok, "hi") ||
      dc__tok_is(tok, "even") || dc__tok_is(tok, "odd")) {
    return -1;
  }
  bool numeric =
      tok->length >= 2 && (tok->text[0] == 's' || tok->text[0] == 'S');
  int n = 0;
  for (uint32_t i = numeric ? 1 : 0; i < tok->length; ++i) {
    int lane = lane_of(tok->text[i], numeric);
    if (n == 16 || lane < 0) return 0;
    lanes[n++] = lane;
  }
  return n;
}

// Punctuators, longest first so that the first match is the longest.
static const char* const kPuncts[] = {
    "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
    "!=",  "&&",  "||",  "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=",
    "##",  "[",   "]",   "(",  ")",  "{",  "}",  ".",  "&",  "*",  "+",
    "-",   "~",   "!",   "/",  "%",  "<",  ">",  "^",  "|",  "?",  ":",
    ";",   "=",   ",",   "#",
};

typedef struct lexer_t {
  const char* src;
  size_t length;
  size_t pos;
  uint32_t line;
  uint32_t col;
  dc__diag_t* diag;
} lexer_t;

static int peek(const lexer_t* lx, size_t ahead) {
  size_t p = lx->pos + ahead;
  return p < lx->length ? (unsigned char)lx->src[p] : -1;
}

static void advance(lexer_t* lx, size_t n) {
  for (size_t i = 0; i < n && lx->pos < lx->length; ++i) {
    if (lx->src[lx->pos++] == '\n') {
      ++lx->line;
      lx->col = 1;
    } else {
      ++lx->col;
    }
  }
}

// Skips spaces, comments and line continuations (not newlines). Returns
// false after reporting an unterminated comment.
static bool skip_space(lexer_t* lx, bool* saw_space) {
  for (;;) {
    int c = peek(lx, 0);
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      advance(lx, 1);
    } else if (c == '\\' && peek(lx, 1) == '\n') {
      advance(lx, 2);
    } else if (c == '\\' && peek(lx, 1) == '\r' && peek(lx, 2) == '\n') {
      advance(lx, 3);
    } else if (c == '/' && peek(lx, 1) == '/') {
      // Lines are joined before comments end (C's translation phase 2):
      // a line comment that ends in a backslash goes on over the next line.
      while (peek(lx, 0) != -1 && peek(lx, 0) != '\n') {
        if (peek(lx, 0) == '\\' && peek(lx, 1) == '\n') {
          advance(lx, 1);
        } else if (peek(lx, 0) == '\\' && peek(lx, 1) == '\r' &&
                   peek(lx, 2) == '\n') {
          advance(lx, 2);
        }
        advance(lx, 1);
      }
    } else if (c == '/' && peek(lx, 1) == '*') {
      uint32_t line = lx->line, col = lx->col;
      advance(lx, 2);
      while (peek(lx, 0) != -1 && !(peek(lx, 0) == '*' && peek(lx, 1) == '/')) {
        advance(lx, 1);
      }
      if (peek(lx, 0) == -1) {
        dc__diag_error(lx->diag, line, col, "unterminated comment");
        return false;
      }
      advance(lx, 2);
    } else {
      return true;
    }
    *saw_space = true;
  }
}

// A pp-number as C defines it: digits, letters, '_', '.', and a sign
// right after an exponent letter (e, E, p, P).
static size_t scan_number(const lexer_t* lx) {
  size_t n = 0;
  for (;;) {
    int c = peek(lx, n);
    bool exponent_sign = (c == '+' || c == '-') && n > 0 &&
                         strchr("eEpP", peek(lx, n - 1)) != NULL;
    if (!(isalnum(c) || c == '.' || c == '_' || exponent_sign)) return n;
    ++n;
  }
}

// A byte a literal may not hold as it is. C compilers take a lone '\r'
// as a line end, so a string holding one would reach the generated C as
// two lines, the second free to be a directive; other control bytes have
// escapes too.
static bool is_control(int c) {
  return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

// The length of the string or character literal at the current position,
// or 0 after reporting what is wrong with it.
static size_t scan_quoted(lexer_t* lx, int quote) {
  const char* what = quote == '"' ? "string" : "character";
  size_t n = 1;
  for (;;) {
    int c = peek(lx, n);
    if (c == '\\' && peek(lx, n + 1) == '\n') {  // a continued line
      n += 2;
      continue;
    }
    bool escaped = c == '\\';
    if (escaped) c = peek(lx, ++n);
    if (c == -1 || c == '\n') {
      dc__diag_error(lx->diag, lx->line, lx->col, "unterminated %s literal",
                     what);
      return 0;
    }
    if (is_control(c)) {
      dc__diag_error(lx->diag, lx->line, lx->col,
                     "%s literal holds the control byte 0x%02x; write it as "
                     "the escape \\x%02x",
                     what, (unsigned)c, (unsigned)c);
      return 0;
    }
    ++n;
    if (c == quote && !escaped) return n;
  }
}

static size_t scan_punct(const lexer_t* lx) {
  for (size_t i = 0; i < sizeof(kPuncts) / sizeof(kPuncts[0]); ++i) {
    size_t n = strlen(kPuncts[i]);
    if (lx->pos + n <= lx->length &&
        memcmp(lx->src + lx->pos, kPuncts[i], n) == 0) {
      return n;
    }
  }
  return 0;
}

// Scans one token at the current position into |tok|.
static bool scan_token(lexer_t* lx, dc__token_t* tok) {
  int c = peek(lx, 0);
  size_t n = 0;
  if (c == '\n') {
    tok->kind = DC_TOK_NEWLINE;
    n = 1;
  } else if (isalpha(c) || c == '_') {
    tok->kind = DC_TOK_IDENT;
    while (isalnum(peek(lx, n)) || peek(lx, n) == '_') ++n;
  } else if (isdigit(c) || (c == '.' && isdigit(peek(lx, 1)))) {
    tok->kind = DC_TOK_NUMBER;
    n = scan_number(lx);
  } else if (c == '"' || c == '\'') {
    tok->kind = c == '"' ? DC_TOK_STRING : DC_TOK_CHAR;
    n = scan_quoted(lx, c);
    if (n == 0) return false;
  } else {
    tok->kind = DC_TOK_PUNCT;
    n = scan_punct(lx);
    if (n == 0) {
      if (isprint(c)) {
        dc__diag_error(lx->diag, lx->line, lx->col, "unexpected character '%c'",
                       c);
      } else {
        dc__diag_error(lx->diag, lx->line, lx->col,
                       "unexpected byte 0x%02x", (unsigned)c);
      }
      return false;
    }
  }
  tok->text = lx->src + lx->pos;
  tok->length = (uint32_t)n;
  tok->line = lx->line;
  tok->col = lx->col;
  advance(lx, n);
  return true;
}

// After a bad token: skips the rest of a broken literal's line, or the one
// bad byte, so that one mistake gives one error.
static void skip_bad_token(lexer_t* lx) {
  int c = peek(lx, 0);
  if (c == '"' || c == '\'') {
    while (peek(lx, 0) != -1 && peek(lx, 0) != '\n') advance(lx, 1);
  } else {
    advance(lx, 1);
  }
}

dc_status_t dc__lex(dc__arena_t* arena, const char* source, size_t length,
                    dc__diag_t* diag, dc__token_list_t* out) {
  lexer_t lx = {.src = source, .length = length, .line = 1, .col = 1,
                .diag = diag};
  bool line_start = true;
  size_t tokens = 0;  // newlines aside
  for (;;) {
    bool space = false;
    if (!skip_space(&lx, &space)) return DC_ERR_COMPILE;
    dc__token_t tok = {0};
    if (diag->errors >= DC_LIMIT_ERRORS) {
      dc__diag_error(diag, lx.line, lx.col,
                     "stopping after %u errors (the error limit)",
                     DC_LIMIT_ERRORS);
      return DC_ERR_COMPILE;
    }
    if (lx.pos >= lx.length) {
      tok = (dc__token_t){.kind = DC_TOK_EOF, .text = "", .line = lx.line,
                          .col = lx.col};
      if (!dc__token_list_push(arena, out, tok)) return DC_ERR_OUT_OF_MEMORY;
      return diag->errors ? DC_ERR_COMPILE : DC_OK;
    }
    if (!scan_token(&lx, &tok)) {
      skip_bad_token(&lx);
      continue;
    }
    tok.flags = (space ? DC_TOKF_SPACE : 0) |
                (line_start ? DC_TOKF_LINE_START : 0);
    // One newline token ends a line as well as many: blank lines cost no
    // memory.
    if (tok.kind == DC_TOK_NEWLINE && line_start && out->count > 0) continue;
    line_start = tok.kind == DC_TOK_NEWLINE;
    if (tok.kind != DC_TOK_NEWLINE && ++tokens > DC_LIMIT_TOKENS) {
      dc__diag_error(diag, tok.line, tok.col,
                     "the source has more than %u tokens (the token limit)",
                     DC_LIMIT_TOKENS);
      return DC_ERR_COMPILE;
    }
    if (!dc__token_list_push(arena, out, tok)) return DC_ERR_OUT_OF_MEMORY;
  }
}

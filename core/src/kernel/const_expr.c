// const_expr.c: integer constant expressions (see const_expr.h).
// Recursive descent with one function per precedence level; arithmetic
// wraps as unsigned so that no expression a user writes is undefined
// behaviour here.
// SPDX-License-Identifier: MIT
#include "const_expr.h"

#include <stdlib.h>
#include <string.h>

typedef struct expr_t {
  const dc__token_t* toks;
  size_t count;
  size_t pos;
  bool names_are_zero;
  const char* what;
  const dc__token_t* where;  // for an empty or truncated expression
  dc__diag_t* diag;
  bool error;
} expr_t;

static long long parse_ternary(expr_t* e);

static const dc__token_t* peek(const expr_t* e) {
  return e->pos < e->count ? &e->toks[e->pos] : NULL;
}

static bool accept(expr_t* e, const char* op) {
  const dc__token_t* t = peek(e);
  if (t && t->kind == DC_TOK_PUNCT && dc__tok_is(t, op)) {
    ++e->pos;
    return true;
  }
  return false;
}

// Reports the first problem only: later ones follow from it.
static void fail(expr_t* e, const char* problem) {
  if (!e->error) {
    const dc__token_t* t = peek(e);
    if (t == NULL) t = e->where;
    dc__diag_error(e->diag, t->line, t->col, "%s in %s expression", problem,
                   e->what);
  }
  e->error = true;
}

static long long number_value(expr_t* e, const dc__token_t* t) {
  char buf[64];
  if (t->length >= sizeof(buf)) {
    fail(e, "number too long");
    return 0;
  }
  memcpy(buf, t->text, t->length);
  buf[t->length] = '\0';
  size_t n = t->length;
  while (n > 0 && strchr("uUlL", buf[n - 1])) buf[--n] = '\0';
  char* end = NULL;
  unsigned long long v = strtoull(buf, &end, 0);
  if (*end != '\0') fail(e, "invalid integer constant");
  return (long long)v;
}

static long long parse_primary(expr_t* e) {
  const dc__token_t* t = peek(e);
  if (t == NULL) {
    fail(e, "missing operand");
    return 0;
  }
  ++e->pos;
  if (t->kind == DC_TOK_NUMBER) return number_value(e, t);
  if (t->kind == DC_TOK_CHAR) {
    return t->length >= 3 ? (unsigned char)t->text[1] : 0;
  }
  if (t->kind == DC_TOK_IDENT && e->names_are_zero) return 0;
  if (dc__tok_is(t, "(")) {
    long long v = parse_ternary(e);
    if (!accept(e, ")")) fail(e, "expected ')'");
    return v;
  }
  if (dc__tok_is(t, "-")) {
    return (long long)(0ull - (unsigned long long)parse_primary(e));
  }
  if (dc__tok_is(t, "+")) return parse_primary(e);
  if (dc__tok_is(t, "!")) return !parse_primary(e);
  if (dc__tok_is(t, "~")) return ~parse_primary(e);
  --e->pos;
  fail(e, t->kind == DC_TOK_IDENT ? "a name that is not a constant"
                                  : "unexpected token");
  return 0;
}

// Binary operators by precedence level, lowest first.
static const char* const kLevels[][4] = {
    {"||"}, {"&&"}, {"|"}, {"^"}, {"&"}, {"==", "!="},
    {"<", ">", "<=", ">="}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"},
};
#define LEVEL_COUNT (sizeof(kLevels) / sizeof(kLevels[0]))

static long long apply(expr_t* e, const char* op, long long a, long long b) {
  unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
  switch (op[0]) {
    case '|': return op[1] ? (a || b) : (a | b);
    case '&': return op[1] ? (a && b) : (a & b);
    case '^': return a ^ b;
    case '=': return a == b;
    case '!': return a != b;
    case '<': return op[1] == '<' ? (long long)(ua << (b & 63))
                     : op[1] ? a <= b : a < b;
    case '>': return op[1] == '>' ? a >> (b & 63) : op[1] ? a >= b : a > b;
    case '+': return (long long)(ua + ub);
    case '-': return (long long)(ua - ub);
    case '*': return (long long)(ua * ub);
    default:
      if (b == 0 || (a == -0x7fffffffffffffffll - 1 && b == -1)) {
        fail(e, b == 0 ? "division by zero" : "division overflow");
        return 0;
      }
      return op[0] == '/' ? a / b : a % b;
  }
}

static long long parse_level(expr_t* e, size_t level) {
  if (level == LEVEL_COUNT) return parse_primary(e);
  long long value = parse_level(e, level + 1);
  for (;;) {
    const char* matched = NULL;
    for (int i = 0; i < 4 && kLevels[level][i] && !matched; ++i) {
      if (accept(e, kLevels[level][i])) matched = kLevels[level][i];
    }
    if (matched == NULL) return value;
    long long rhs = parse_level(e, level + 1);
    value = apply(e, matched, value, rhs);
  }
}

static long long parse_ternary(expr_t* e) {
  long long cond = parse_level(e, 0);
  if (!accept(e, "?")) return cond;
  long long a = parse_ternary(e);
  if (!accept(e, ":")) fail(e, "expected ':'");
  long long b = parse_ternary(e);
  return cond ? a : b;
}

bool dc__eval_const_expr(const dc__token_t* toks, size_t count,
                         bool names_are_zero, const char* what,
                         const dc__token_t* where, dc__diag_t* diag,
                         long long* out_value) {
  expr_t e = {toks, count, 0, names_are_zero, what, where, diag, false};
  long long v = parse_ternary(&e);
  if (!e.error && e.pos != e.count) fail(&e, "unexpected token");
  *out_value = e.error ? 0 : v;
  return !e.error;
}

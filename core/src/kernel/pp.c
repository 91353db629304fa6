// pp.c: the preprocessor of the kernel language.
//
// Supports what OpenCL C programs use: object-like and function-like
// macros (variadic too, with # and ##), #undef, #if/#ifdef/#ifndef/#elif/
// #else/#endif with full integer expressions and defined(), #error,
// #pragma (ignored) and #line (ignored). #include is rejected: programs
// are single sources, and definitions come from -D options.
//
// Macro expansion reads from a stack of token frames. Expanding a macro
// pushes its replacement as a new frame and disables the macro until that
// frame is consumed; a disabled macro's name met in the meantime is
// painted NO_EXPAND for good, which is how C stops recursion.
// SPDX-License-Identifier: MIT
#include "pp.h"
#include "const_expr.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MACRO_BUCKETS 256
#define MAX_FRAMES 1024
#define MAX_CONDITIONALS 64

typedef struct macro_t {
  const char* name;
  uint32_t name_length;
  bool function_like;
  bool variadic;
  bool disabled;  // being expanded
  int kind;       // MACRO_PLAIN, MACRO_LINE, MACRO_FILE
  size_t param_count;
  dc__token_t* params;
  dc__token_t* body;
  size_t body_count;
  struct macro_t* next;
} macro_t;

enum { MACRO_PLAIN, MACRO_LINE, MACRO_FILE };

typedef struct frame_t {
  const dc__token_t* tokens;
  size_t count;
  size_t pos;
  macro_t* macro;  // re-enabled when the frame is popped; NULL for base
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
  macro_t* buckets[MACRO_BUCKETS];
  frame_t frames[MAX_FRAMES];
  size_t depth;
  conditional_t conds[MAX_CONDITIONALS];
  size_t cond_count;
  dc__token_list_t* out;
  bool failed;
} pp_t;

//===-- Macro table -----------------------------------------------------===//

static unsigned hash_name(const char* s, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h % MACRO_BUCKETS;
}

static macro_t* find_macro(pp_t* pp, const char* name, size_t n) {
  for (macro_t* m = pp->buckets[hash_name(name, n)]; m; m = m->next) {
    if (m->name_length == n && memcmp(m->name, name, n) == 0) return m;
  }
  return NULL;
}

static void remove_macro(pp_t* pp, const char* name, size_t n) {
  macro_t** link = &pp->buckets[hash_name(name, n)];
  for (; *link; link = &(*link)->next) {
    if ((*link)->name_length == n && memcmp((*link)->name, name, n) == 0) {
      *link = (*link)->next;
      return;
    }
  }
}

static macro_t* add_macro(pp_t* pp, const char* name, size_t n) {
  remove_macro(pp, name, n);
  macro_t* m = dc__arena_alloc(pp->arena, sizeof(*m));
  if (m == NULL) return NULL;
  memset(m, 0, sizeof(*m));
  m->name = name;
  m->name_length = (uint32_t)n;
  unsigned h = hash_name(name, n);
  m->next = pp->buckets[h];
  pp->buckets[h] = m;
  return m;
}

//===-- Reading tokens --------------------------------------------------===//

static void error_at(pp_t* pp, const dc__token_t* tok, const char* message,
                     const char* detail) {
  pp->failed = true;
  if (detail) {
    dc__diag_error(pp->diag, tok->line, tok->col, "%s '%s'", message, detail);
  } else {
    dc__diag_error(pp->diag, tok->line, tok->col, "%s", message);
  }
}

static bool push_frame(pp_t* pp, const dc__token_t* tokens, size_t count,
                       macro_t* macro, const dc__token_t* at) {
  if (pp->depth == MAX_FRAMES) {
    error_at(pp, at, "macro expansion nested too deeply", NULL);
    return false;
  }
  pp->frames[pp->depth++] = (frame_t){tokens, count, 0, macro};
  if (macro) macro->disabled = true;
  return true;
}

// Pops exhausted frames above |floor|, re-enabling their macros.
static void pop_exhausted(pp_t* pp, size_t floor) {
  while (pp->depth > floor + 1) {
    frame_t* f = &pp->frames[pp->depth - 1];
    if (f->pos < f->count) return;
    if (f->macro) f->macro->disabled = false;
    --pp->depth;
  }
}

// The next token at or above frame |floor|, or NULL when those frames are
// exhausted (the base frame always ends with EOF).
static const dc__token_t* next_token(pp_t* pp, size_t floor) {
  pop_exhausted(pp, floor);
  frame_t* f = &pp->frames[pp->depth - 1];
  if (f->pos >= f->count) return NULL;
  return &f->tokens[f->pos++];
}

// Peeks at the next token that is not a newline without consuming it.
static const dc__token_t* peek_token(pp_t* pp, size_t floor) {
  for (size_t d = pp->depth; d-- > floor;) {
    frame_t* f = &pp->frames[d];
    for (size_t i = f->pos; i < f->count; ++i) {
      if (f->tokens[i].kind != DC_TOK_NEWLINE) return &f->tokens[i];
    }
  }
  return NULL;
}

static bool emit(pp_t* pp, dc__token_list_t* out, dc__token_t tok) {
  if (!dc__token_list_push(pp->arena, out, tok)) {
    pp->failed = true;
    return false;
  }
  return true;
}

static bool name_eq(const dc__token_t* a, const dc__token_t* b) {
  return a->length == b->length && memcmp(a->text, b->text, a->length) == 0;
}

//===-- Macro invocation ------------------------------------------------===//

typedef struct arg_t {
  const dc__token_t* tokens;  // raw tokens, newlines removed
  size_t count;
  dc__token_list_t expanded;
  bool expanded_ready;
} arg_t;

static void process_token(pp_t* pp, const dc__token_t* tok, size_t floor,
                          dc__token_list_t* out);

// Fully expands |tokens| on their own, as C does with macro arguments.
static void expand_isolated(pp_t* pp, const dc__token_t* tokens, size_t n,
                            const dc__token_t* at, dc__token_list_t* out) {
  size_t floor = pp->depth;
  if (n == 0 || !push_frame(pp, tokens, n, NULL, at)) return;
  const dc__token_t* tok;
  while (!pp->failed && (tok = next_token(pp, floor)) != NULL) {
    process_token(pp, tok, floor, out);
  }
  while (pp->depth > floor) {  // drop what an error left behind
    frame_t* f = &pp->frames[--pp->depth];
    if (f->macro) f->macro->disabled = false;
  }
}

// Reads a macro's arguments after its name; the next token is '('.
// Returns the number of arguments, or -1 after reporting an error.
static long collect_args(pp_t* pp, const macro_t* m, const dc__token_t* name,
                         size_t floor, arg_t* args, size_t max_args) {
  next_token(pp, floor);  // '('
  dc__token_list_t current = {0};
  size_t count = 0;
  int depth = 0;
  for (;;) {
    const dc__token_t* tok = next_token(pp, floor);
    if (tok == NULL || tok->kind == DC_TOK_EOF) {
      error_at(pp, name, "unterminated argument list invoking macro",
               dc__arena_strndup(pp->arena, name->text, name->length));
      return -1;
    }
    if (tok->kind == DC_TOK_NEWLINE) continue;
    bool is_close = dc__tok_is(tok, ")");
    bool splits = dc__tok_is(tok, ",") && depth == 0 &&
                  !(m->variadic && count + 1 >= m->param_count);
    if ((is_close && depth == 0) || splits) {
      if (count == max_args) {
        error_at(pp, name, "too many arguments to macro",
                 dc__arena_strndup(pp->arena, name->text, name->length));
        return -1;
      }
      args[count++] = (arg_t){.tokens = current.items, .count = current.count};
      current = (dc__token_list_t){0};
      if (is_close) return (long)count;
      continue;
    }
    if (dc__tok_is(tok, "(")) ++depth;
    if (is_close) --depth;
    if (!emit(pp, &current, *tok)) return -1;
  }
}

static bool check_arg_count(pp_t* pp, const macro_t* m, const dc__token_t* name,
                            long* count, arg_t* args) {
  // "F()" passes one empty argument, which is right for a one-parameter
  // macro and means "no arguments" for a zero-parameter one.
  if (m->param_count == 0 && *count == 1 && args[0].count == 0) *count = 0;
  // A variadic macro may be called without its variadic part.
  if (m->variadic && (size_t)*count + 1 == m->param_count) {
    args[(*count)++] = (arg_t){0};
  }
  if ((size_t)*count != m->param_count) {
    char* macro = dc__arena_strndup(pp->arena, name->text, name->length);
    pp->failed = true;
    dc__diag_error(pp->diag, name->line, name->col,
                   "macro '%s' takes %zu argument(s), %ld given", macro,
                   m->param_count, *count);
    return false;
  }
  return true;
}

static long param_index(const macro_t* m, const dc__token_t* tok) {
  if (tok->kind != DC_TOK_IDENT) return -1;
  for (size_t i = 0; i < m->param_count; ++i) {
    if (name_eq(&m->params[i], tok)) return (long)i;
  }
  return -1;
}

// Makes the string literal of #arg.
static dc__token_t stringize(pp_t* pp, const arg_t* arg, dc__token_t at) {
  size_t size = 3;
  for (size_t i = 0; i < arg->count; ++i) size += 2 * arg->tokens[i].length + 1;
  char* text = dc__arena_alloc(pp->arena, size);
  size_t n = 0;
  if (text != NULL) {
    text[n++] = '"';
    for (size_t i = 0; i < arg->count; ++i) {
      const dc__token_t* t = &arg->tokens[i];
      if (i > 0 && (t->flags & DC_TOKF_SPACE)) text[n++] = ' ';
      bool quoted = t->kind == DC_TOK_STRING || t->kind == DC_TOK_CHAR;
      for (uint32_t k = 0; k < t->length; ++k) {
        if (quoted && (t->text[k] == '"' || t->text[k] == '\\')) {
          text[n++] = '\\';
        }
        text[n++] = t->text[k];
      }
    }
    text[n++] = '"';
  }
  at.kind = DC_TOK_STRING;
  at.text = text ? text : "\"\"";
  at.length = text ? (uint32_t)n : 2;
  return at;
}

// Joins two tokens with ##; the result must lex as exactly one token.
static bool paste(pp_t* pp, dc__token_t* left, const dc__token_t* right) {
  size_t n = left->length + right->length;
  char* text = dc__arena_alloc(pp->arena, n + 1);
  if (text == NULL) return false;
  memcpy(text, left->text, left->length);
  memcpy(text + left->length, right->text, right->length);
  text[n] = '\0';
  dc__diag_t scratch;
  dc__diag_init(&scratch, pp->arena->allocator, pp->diag->file);
  dc__token_list_t lexed = {0};
  dc_status_t st = dc__lex(pp->arena, text, n, &scratch, &lexed);
  dc__diag_free(&scratch);
  if (st != DC_OK || lexed.count != 2) {  // the token and EOF
    pp->failed = true;
    dc__diag_error(pp->diag, left->line, left->col,
                   "pasting '%.*s' and '%.*s' does not give a valid token",
                   (int)left->length, left->text, (int)right->length,
                   right->text);
    return false;
  }
  left->kind = lexed.items[0].kind;
  left->text = text;
  left->length = (uint32_t)n;
  return true;
}

static const dc__token_list_t* expanded_arg(pp_t* pp, arg_t* arg,
                                            const dc__token_t* at) {
  if (!arg->expanded_ready) {
    expand_isolated(pp, arg->tokens, arg->count, at, &arg->expanded);
    arg->expanded_ready = true;
  }
  return &arg->expanded;
}

// Appends |count| tokens, each placed at the invocation |at|.
static void append_at(pp_t* pp, dc__token_list_t* out, const dc__token_t* toks,
                      size_t count, const dc__token_t* at) {
  for (size_t i = 0; i < count; ++i) {
    dc__token_t t = toks[i];
    t.line = at->line;
    t.col = at->col;
    emit(pp, out, t);
  }
}

// Builds the replacement list of |m| for |args|.
static void substitute(pp_t* pp, const macro_t* m, arg_t* args,
                       const dc__token_t* at, dc__token_list_t* out) {
  for (size_t i = 0; i < m->body_count && !pp->failed; ++i) {
    const dc__token_t* t = &m->body[i];
    bool next_is_paste = i + 1 < m->body_count &&
                         dc__tok_is(&m->body[i + 1], "##");
    if (m->function_like && dc__tok_is(t, "#") && i + 1 < m->body_count &&
        param_index(m, &m->body[i + 1]) >= 0) {
      dc__token_t s = stringize(pp, &args[param_index(m, &m->body[++i])], *at);
      s.flags = t->flags;
      emit(pp, out, s);
      continue;
    }
    if (dc__tok_is(t, "##") && i + 1 < m->body_count) {
      const dc__token_t* r = &m->body[++i];
      long p = param_index(m, r);
      const dc__token_t* rtoks = p >= 0 ? args[p].tokens : r;
      size_t rcount = p >= 0 ? args[p].count : 1;
      if (rcount == 0) continue;
      if (out->count == 0) {
        append_at(pp, out, rtoks, rcount, at);
      } else if (paste(pp, &out->items[out->count - 1], &rtoks[0])) {
        append_at(pp, out, rtoks + 1, rcount - 1, at);
      }
      continue;
    }
    long p = param_index(m, t);
    if (p < 0) {
      append_at(pp, out, t, 1, at);
    } else if (next_is_paste) {
      append_at(pp, out, args[p].tokens, args[p].count, at);
    } else {
      const dc__token_list_t* e = expanded_arg(pp, &args[p], at);
      append_at(pp, out, e->items, e->count, at);
    }
  }
}

static dc__token_t builtin_macro(pp_t* pp, const macro_t* m,
                                 const dc__token_t* at) {
  dc__token_t t = *at;
  char* text = m->kind == MACRO_LINE
                   ? dc__arena_printf(pp->arena, "%u", at->line)
                   : dc__arena_printf(pp->arena, "\"%s\"", pp->diag->file);
  t.kind = m->kind == MACRO_LINE ? DC_TOK_NUMBER : DC_TOK_STRING;
  t.text = text ? text : "0";
  t.length = text ? (uint32_t)strlen(text) : 1;
  return t;
}

static void process_token(pp_t* pp, const dc__token_t* tok, size_t floor,
                          dc__token_list_t* out) {
  macro_t* m = NULL;
  if (tok->kind == DC_TOK_IDENT && !(tok->flags & DC_TOKF_NO_EXPAND)) {
    m = find_macro(pp, tok->text, tok->length);
  }
  if (m == NULL) {
    emit(pp, out, *tok);
    return;
  }
  if (m->disabled) {
    dc__token_t painted = *tok;
    painted.flags |= DC_TOKF_NO_EXPAND;
    emit(pp, out, painted);
    return;
  }
  if (m->kind != MACRO_PLAIN) {
    emit(pp, out, builtin_macro(pp, m, tok));
    return;
  }
  arg_t args[64];
  long count = 0;
  if (m->function_like) {
    const dc__token_t* next = peek_token(pp, floor);
    if (next == NULL || !dc__tok_is(next, "(")) {
      emit(pp, out, *tok);  // a function-like macro's name alone
      return;
    }
    count = collect_args(pp, m, tok, floor, args, 64);
    if (count < 0 || !check_arg_count(pp, m, tok, &count, args)) return;
  }
  dc__token_list_t replacement = {0};
  substitute(pp, m, args, tok, &replacement);
  if (replacement.count > 0 && !pp->failed) {
    replacement.items[0].flags |= tok->flags & DC_TOKF_SPACE;
    push_frame(pp, replacement.items, replacement.count, m, tok);
  }
}

//===-- #if expressions -------------------------------------------------===//

// Replaces defined X / defined(X) with 0 or 1, before macro expansion.
static void resolve_defined(pp_t* pp, const dc__token_t* line, size_t n,
                            dc__token_list_t* out) {
  for (size_t i = 0; i < n; ++i) {
    if (!dc__tok_is(&line[i], "defined") || line[i].kind != DC_TOK_IDENT) {
      emit(pp, out, line[i]);
      continue;
    }
    bool paren = i + 1 < n && dc__tok_is(&line[i + 1], "(");
    size_t name = i + 1 + paren;
    if (name >= n || line[name].kind != DC_TOK_IDENT ||
        (paren && (name + 1 >= n || !dc__tok_is(&line[name + 1], ")")))) {
      error_at(pp, &line[i], "'defined' needs a macro name", NULL);
      return;
    }
    dc__token_t v = line[i];
    v.kind = DC_TOK_NUMBER;
    v.text = find_macro(pp, line[name].text, line[name].length) ? "1" : "0";
    v.length = 1;
    emit(pp, out, v);
    i = name + paren;
  }
}

static bool eval_condition(pp_t* pp, const dc__token_t* directive,
                           const dc__token_t* line, size_t n) {
  if (n == 0) {
    error_at(pp, directive, "#if needs an expression", NULL);
    return false;
  }
  dc__token_list_t resolved = {0}, expanded = {0};
  resolve_defined(pp, line, n, &resolved);
  expand_isolated(pp, resolved.items, resolved.count, directive, &expanded);
  long long v = 0;
  if (!dc__eval_const_expr(expanded.items, expanded.count, true, "#if",
                           directive, pp->diag, &v)) {
    pp->failed = true;
    return false;
  }
  return v != 0;
}

//===-- Directives ------------------------------------------------------===//

static bool skipping(const pp_t* pp) {
  for (size_t i = 0; i < pp->cond_count; ++i) {
    if (!pp->conds[i].active) return true;
  }
  return false;
}

static void define_macro(pp_t* pp, const dc__token_t* directive,
                         const dc__token_t* line, size_t n) {
  if (n == 0 || line[0].kind != DC_TOK_IDENT) {
    error_at(pp, n ? &line[0] : directive, "#define needs a macro name", NULL);
    return;
  }
  if (dc__tok_is(&line[0], "defined")) {
    error_at(pp, &line[0], "'defined' cannot be defined as a macro", NULL);
    return;
  }
  macro_t* m = add_macro(pp, line[0].text, line[0].length);
  if (m == NULL) return;
  size_t i = 1;
  if (n > 1 && dc__tok_is(&line[1], "(") && !(line[1].flags & DC_TOKF_SPACE)) {
    m->function_like = true;
    m->params = (dc__token_t*)&line[2];
    for (i = 2; i < n && !dc__tok_is(&line[i], ")"); ++i) {
      const dc__token_t* p = &line[i];
      if (dc__tok_is(p, "...")) {
        m->variadic = true;
        ((dc__token_t*)p)->kind = DC_TOK_IDENT;  // renamed below
        ((dc__token_t*)p)->text = "__VA_ARGS__";
        ((dc__token_t*)p)->length = 11;
      } else if (p->kind != DC_TOK_IDENT) {
        error_at(pp, p, "expected a parameter name in #define", NULL);
        remove_macro(pp, m->name, m->name_length);
        return;
      }
      ++m->param_count;
      if (i + 1 < n && dc__tok_is(&line[i + 1], ",")) ++i;
    }
    if (i >= n) {
      error_at(pp, &line[1], "missing ')' in macro parameter list", NULL);
      remove_macro(pp, m->name, m->name_length);
      return;
    }
    // Parameters are every other token (names and commas); compact them.
    size_t k = 0;
    for (size_t j = 2; j < i; ++j) {
      if (!dc__tok_is(&line[j], ",")) m->params[k++] = line[j];
    }
    ++i;
  }
  m->body = (dc__token_t*)&line[i];
  m->body_count = n - i;
}

static void directive_conditional(pp_t* pp, const dc__token_t* d,
                                  const dc__token_t* line, size_t n) {
  bool outer_skipping = skipping(pp);
  if (dc__tok_is(d, "if") || dc__tok_is(d, "ifdef") || dc__tok_is(d, "ifndef")) {
    if (pp->cond_count == MAX_CONDITIONALS) {
      error_at(pp, d, "#if nested too deeply", NULL);
      return;
    }
    bool value = false;
    if (!outer_skipping) {
      if (dc__tok_is(d, "if")) {
        value = eval_condition(pp, d, line, n);
      } else if (n == 0 || line[0].kind != DC_TOK_IDENT) {
        error_at(pp, d, "#ifdef needs a macro name", NULL);
      } else {
        value = (find_macro(pp, line[0].text, line[0].length) != NULL) ==
                dc__tok_is(d, "ifdef");
      }
    }
    pp->conds[pp->cond_count++] =
        (conditional_t){value, value || outer_skipping, false, d->line, d->col};
    return;
  }
  if (pp->cond_count == 0) {
    error_at(pp, d, "unmatched directive",
             dc__arena_strndup(pp->arena, d->text, d->length));
    return;
  }
  conditional_t* c = &pp->conds[pp->cond_count - 1];
  if (dc__tok_is(d, "endif")) {
    --pp->cond_count;
    return;
  }
  if (c->seen_else) {
    error_at(pp, d, "directive after #else", NULL);
    return;
  }
  --pp->cond_count;  // evaluate #elif in the enclosing state
  bool enclosing_skipping = skipping(pp);
  ++pp->cond_count;
  if (dc__tok_is(d, "else")) {
    c->seen_else = true;
    c->active = !c->was_taken;
  } else {  // elif
    c->active = !c->was_taken && !enclosing_skipping &&
                eval_condition(pp, d, line, n);
  }
  c->was_taken |= c->active;
}

static void handle_directive(pp_t* pp, const dc__token_t* d,
                             const dc__token_t* line, size_t n) {
  static const char* const kConditionals[] = {"if", "ifdef", "ifndef", "elif",
                                              "else", "endif"};
  for (size_t i = 0; i < 6; ++i) {
    if (dc__tok_is(d, kConditionals[i])) {
      directive_conditional(pp, d, line, n);
      return;
    }
  }
  if (skipping(pp)) return;
  if (dc__tok_is(d, "define")) {
    define_macro(pp, d, line, n);
  } else if (dc__tok_is(d, "undef")) {
    if (n == 0 || line[0].kind != DC_TOK_IDENT) {
      error_at(pp, d, "#undef needs a macro name", NULL);
    } else {
      remove_macro(pp, line[0].text, line[0].length);
    }
  } else if (dc__tok_is(d, "error")) {
    const char* text = n ? line[0].text : "";
    size_t len = n ? (size_t)(line[n - 1].text + line[n - 1].length - text) : 0;
    pp->failed = true;
    dc__diag_error(pp->diag, d->line, d->col, "#error %.*s", (int)len, text);
  } else if (dc__tok_is(d, "warning")) {
    const char* text = n ? line[0].text : "";
    size_t len = n ? (size_t)(line[n - 1].text + line[n - 1].length - text) : 0;
    dc__diag_warning(pp->diag, d->line, d->col, "#warning %.*s", (int)len,
                     text);
  } else if (dc__tok_is(d, "include")) {
    error_at(pp, d,
             "#include is not supported: a program is one source; pass "
             "definitions with -D options",
             NULL);
  } else if (!dc__tok_is(d, "pragma") && !dc__tok_is(d, "line")) {
    error_at(pp, d, "unknown preprocessor directive",
             dc__arena_strndup(pp->arena, d->text, d->length));
  }
}

// Reads the directive starting at the '#' the base frame stands on.
static void read_directive(pp_t* pp) {
  frame_t* base = &pp->frames[0];
  const dc__token_t* hash = &base->tokens[base->pos++];
  const dc__token_t* d = &base->tokens[base->pos];
  if (d->kind == DC_TOK_NEWLINE || d->kind == DC_TOK_EOF) return;  // "#"
  ++base->pos;
  size_t start = base->pos;
  while (base->tokens[base->pos].kind != DC_TOK_NEWLINE &&
         base->tokens[base->pos].kind != DC_TOK_EOF) {
    ++base->pos;
  }
  if (d->kind != DC_TOK_IDENT && !skipping(pp)) {
    error_at(pp, hash, "expected a directive name after '#'", NULL);
    return;
  }
  handle_directive(pp, d, &base->tokens[start], base->pos - start);
}

//===-- Driver ----------------------------------------------------------===//

static void define_text(pp_t* pp, const char* name, const char* value) {
  const char* text = dc__arena_printf(pp->arena, "%s %s", name, value);
  dc__token_list_t toks = {0};
  if (text == NULL ||
      dc__lex(pp->arena, text, strlen(text), pp->diag, &toks) != DC_OK) {
    pp->failed = true;
    return;
  }
  dc__token_t directive = toks.items[0];
  define_macro(pp, &directive, toks.items, toks.count - 1);  // without EOF
}

static void predefine(pp_t* pp, const dc__build_options_t* options) {
  static const char* const kPredefined[][2] = {
      {"__OPENCL_VERSION__", "120"}, {"__OPENCL_C_VERSION__", "120"},
      {"CL_VERSION_1_0", "100"},     {"CL_VERSION_1_1", "110"},
      {"CL_VERSION_1_2", "120"},     {"__ENDIAN_LITTLE__", "1"},
      {"__DCLUA__", "1"},            {"__kernel_exec(X, typen)", "__kernel"},
  };
  for (size_t i = 0; i < sizeof(kPredefined) / sizeof(kPredefined[0]); ++i) {
    define_text(pp, kPredefined[i][0], kPredefined[i][1]);
  }
  if (options->fast_math) define_text(pp, "__FAST_RELAXED_MATH__", "1");
  macro_t* line = add_macro(pp, "__LINE__", 8);
  macro_t* file = add_macro(pp, "__FILE__", 8);
  if (line) line->kind = MACRO_LINE;
  if (file) file->kind = MACRO_FILE;
  for (size_t i = 0; i < options->define_count; ++i) {
    // "-D NAME=VALUE" defines NAME as VALUE; "-D NAME" as 1.
    const char* def = options->defines[i];
    const char* eq = strchr(def, '=');
    const char* name = eq ? dc__arena_strndup(pp->arena, def, (size_t)(eq - def))
                          : def;
    if (name) define_text(pp, name, eq ? eq + 1 : "1");
  }
}

dc_status_t dc__preprocess(dc__arena_t* arena, const char* source,
                           size_t length, const dc__build_options_t* options,
                           dc__diag_t* diag, dc__token_list_t* out) {
  dc__token_list_t raw = {0};
  DC_RETURN_IF_ERROR(dc__lex(arena, source, length, diag, &raw));
  pp_t* pp = dc__arena_alloc(arena, sizeof(*pp));
  if (pp == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(pp, 0, sizeof(*pp));
  pp->arena = arena;
  pp->diag = diag;
  pp->out = out;
  predefine(pp, options);
  pp->frames[0] = (frame_t){raw.items, raw.count, 0, NULL};
  pp->depth = 1;
  for (;;) {
    pop_exhausted(pp, 0);
    if (pp->depth == 1) {
      frame_t* base = &pp->frames[0];
      const dc__token_t* t = &base->tokens[base->pos];
      if (t->kind == DC_TOK_EOF) break;
      if (dc__tok_is(t, "#") && (t->flags & DC_TOKF_LINE_START)) {
        read_directive(pp);
        continue;
      }
      if (t->kind == DC_TOK_NEWLINE || skipping(pp)) {
        ++base->pos;
        continue;
      }
    }
    const dc__token_t* tok = next_token(pp, 0);
    if (tok->kind == DC_TOK_NEWLINE) continue;
    process_token(pp, tok, 0, out);
  }
  if (pp->cond_count > 0) {
    conditional_t* c = &pp->conds[pp->cond_count - 1];
    pp->failed = true;
    dc__diag_error(diag, c->line, c->col, "#if without #endif");
  }
  dc__token_t eof = raw.items[raw.count - 1];
  emit(pp, out, eof);
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return pp->failed || diag->errors ? DC_ERR_COMPILE : DC_OK;
}

//===-- Build options ---------------------------------------------------===//

dc_status_t dc__parse_build_options(dc__arena_t* arena, const char* options,
                                    dc__diag_t* diag,
                                    dc__build_options_t* out) {
  static const struct {
    const char* name;
    size_t offset;
  } kFlags[] = {
      {"-cl-fast-relaxed-math", offsetof(dc__build_options_t, fast_math)},
      {"-cl-unsafe-math-optimizations",
       offsetof(dc__build_options_t, fast_math)},
      {"-cl-finite-math-only", offsetof(dc__build_options_t, finite_math)},
      {"-cl-no-signed-zeros", offsetof(dc__build_options_t, no_signed_zeros)},
      {"-cl-mad-enable", offsetof(dc__build_options_t, mad_enable)},
      {"-cl-opt-disable", offsetof(dc__build_options_t, opt_disable)},
      {"-Werror", offsetof(dc__build_options_t, werror)},
      {"-w", offsetof(dc__build_options_t, no_warnings)},
      {"-dc-bounds-check", offsetof(dc__build_options_t, bounds_check)},
      {"-dc-O3", offsetof(dc__build_options_t, opt_max)},
  };
  memset(out, 0, sizeof(*out));
  if (options == NULL) return DC_OK;
  size_t cap = strlen(options) / 2 + 1;
  out->defines = dc__arena_alloc(arena, cap * sizeof(char*));
  if (out->defines == NULL) return DC_ERR_OUT_OF_MEMORY;
  const char* p = options;
  dc_status_t status = DC_OK;
  while (*p) {
    while (isspace((unsigned char)*p)) ++p;
    if (!*p) break;
    const char* start = p;
    while (*p && !isspace((unsigned char)*p)) ++p;
    char* word = dc__arena_strndup(arena, start, (size_t)(p - start));
    if (word == NULL) return DC_ERR_OUT_OF_MEMORY;
    bool known = false;
    for (size_t i = 0; i < sizeof(kFlags) / sizeof(kFlags[0]); ++i) {
      if (strcmp(word, kFlags[i].name) == 0) {
        *(bool*)((char*)out + kFlags[i].offset) = true;
        known = true;
      }
    }
    if (known || strcmp(word, "-cl-std=CL1.0") == 0 ||
        strcmp(word, "-cl-std=CL1.1") == 0 ||
        strcmp(word, "-cl-std=CL1.2") == 0 || strcmp(word, "-g") == 0) {
      continue;
    }
    if (strncmp(word, "-D", 2) == 0) {
      const char* def = word + 2;
      if (*def == '\0') {  // "-D NAME"
        while (isspace((unsigned char)*p)) ++p;
        start = p;
        while (*p && !isspace((unsigned char)*p)) ++p;
        def = dc__arena_strndup(arena, start, (size_t)(p - start));
      }
      if (def == NULL || *def == '\0' || !(isalpha((unsigned char)*def) ||
                                          *def == '_')) {
        dc__diag_error(diag, 0, 0, "build option -D needs a macro name");
        status = DC_ERR_COMPILE;
        continue;
      }
      out->defines[out->define_count++] = def;
      continue;
    }
    dc__diag_error(diag, 0, 0, "unknown build option '%s'", word);
    status = DC_ERR_COMPILE;
  }
  return status;
}

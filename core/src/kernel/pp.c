// pp.c: the preprocessor of the kernel language (build options are parsed
// in build_options.c).
//
// Supports what OpenCL C programs use: object-like and function-like
// macros (variadic too, with # and ##), #undef, #if/#ifdef/#ifndef/#elif/
// #else/#endif with full integer expressions and defined(), #error,
// #warning, #pragma (OPENCL EXTENSION and FP_CONTRACT checked, unroll and
// nounroll passed on to the parser as DC_TOK_PRAGMA) and #line with a
// number. #include and its relatives are rejected: programs are single
// sources, and definitions come from -D options.
//
// Macro expansion reads from a stack of token frames. Expanding a macro
// pushes its replacement as a new frame and disables the macro until that
// frame is consumed; a disabled macro's name met in the meantime is
// painted NO_EXPAND for good, which is how C stops recursion.
//
// The source comes from untrusted scripts, so every resource is bounded
// (kernel_limits.h): frames, #if nesting, macros, the tokens expansion
// stores, the tokens it outputs. Running into a limit reports it and stops
// the preprocessor at once. The base frame's EOF is never consumed, so no
// reader can walk past the end of the source.
// SPDX-License-Identifier: MIT
#include "pp_internal.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "const_expr.h"


//===-- Diagnostics -----------------------------------------------------===//

void dc__pp_error_at(pp_t* pp, const dc__token_t* tok, const char* message,
                     const char* detail) {
  pp->failed = true;
  if (detail) {
    dc__diag_error(pp->diag, tok->line, tok->col, "%s '%s'", message, detail);
  } else {
    dc__diag_error(pp->diag, tok->line, tok->col, "%s", message);
  }
}

// Reports a limit (whose message names it and its value) and stops.
void dc__pp_limit_error(pp_t* pp, uint32_t line, uint32_t col,
                        const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (!pp->stopped) dc__diag_error(pp->diag, line, col, "%s", message);
  pp->failed = true;
  pp->stopped = true;
}

// A warning, as -w (none), -Werror (an error) and DC_LIMIT_WARNINGS have it.
void dc__pp_warn_at(pp_t* pp, uint32_t line, uint32_t col, const char* format,
                    ...) {
  if (pp->options->no_warnings) return;
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  if (pp->options->werror) {
    pp->failed = true;
    dc__diag_error(pp->diag, line, col, "%s [-Werror]", message);
  } else if (pp->diag->warnings < DC_LIMIT_WARNINGS) {
    dc__diag_warning(pp->diag, line, col, "%s", message);
  } else if (pp->diag->warnings == DC_LIMIT_WARNINGS) {
    dc__diag_warning(pp->diag, line, col,
                     "more warnings follow; the limit of %u is reached and "
                     "they are not shown",
                     DC_LIMIT_WARNINGS);
  }
}

char* dc__pp_token_text(pp_t* pp, const dc__token_t* tok) {
  return dc__arena_strndup(pp->arena, tok->text, tok->length);
}

//===-- Macro table -----------------------------------------------------===//

// FNV-1a from a starting state of each run's own, then a finalizer that
// spreads every bit: a hostile source cannot choose names that all fall
// into one bucket, which would make every lookup walk every macro.
static uint64_t hash_name(const pp_t* pp, const char* s, size_t n) {
  uint64_t h = 14695981039346656037ull ^ pp->hash_key;
  for (size_t i = 0; i < n; ++i) {
    h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

static bool named(const macro_t* m, uint64_t hash, const char* name,
                  size_t n) {
  return m->hash == hash && m->name_length == n &&
         memcmp(m->name, name, n) == 0;
}

macro_t* dc__pp_find_macro(pp_t* pp, const char* name, size_t n) {
  uint64_t h = hash_name(pp, name, n);
  for (macro_t* m = pp->buckets[h % MACRO_BUCKETS]; m; m = m->next) {
    if (named(m, h, name, n)) return m;
  }
  return NULL;
}

void dc__pp_remove_macro(pp_t* pp, const char* name, size_t n) {
  uint64_t h = hash_name(pp, name, n);
  for (macro_t** link = &pp->buckets[h % MACRO_BUCKETS]; *link;
       link = &(*link)->next) {
    if (named(*link, h, name, n)) {
      *link = (*link)->next;
      --pp->macro_count;
      return;
    }
  }
}

// Adds a macro named by |tok|, replacing one of that name, or returns NULL
// (out of memory, or past DC_LIMIT_MACROS).
macro_t* dc__pp_add_macro(pp_t* pp, const dc__token_t* tok) {
  dc__pp_remove_macro(pp, tok->text, tok->length);
  if (pp->macro_count == DC_LIMIT_MACROS) {
    dc__pp_limit_error(pp, tok->line, tok->col,
                "macro count limit (%u) exceeded by the definition of "
                "'%.*s'",
                DC_LIMIT_MACROS, (int)tok->length, tok->text);
    return NULL;
  }
  macro_t* m = dc__arena_zalloc(pp->arena, 1, sizeof(*m));
  if (m == NULL) return NULL;
  m->name = tok->text;
  m->name_length = tok->length;
  m->hash = hash_name(pp, tok->text, tok->length);
  m->next = pp->buckets[m->hash % MACRO_BUCKETS];
  pp->buckets[m->hash % MACRO_BUCKETS] = m;
  ++pp->macro_count;
  return m;
}

// Names C reserves for the preprocessor itself.
bool dc__pp_reserved_name(const char* s, size_t n) {
  static const char* const kReserved[] = {"defined", "__VA_ARGS__",
                                          "_Pragma", "__LINE__", "__FILE__"};
  for (size_t i = 0; i < COUNT_OF(kReserved); ++i) {
    if (strlen(kReserved[i]) == n && memcmp(kReserved[i], s, n) == 0) {
      return true;
    }
  }
  return false;
}

//===-- Reading tokens --------------------------------------------------===//

// The name |pp| is expanding, for messages: " while expanding 'F'", with
// the invocation in the source it began at when that is another macro.
static void describe_expansion(const pp_t* pp, char* buf, size_t size) {
  const dc__token_t* in = pp->expanding;
  if (in == NULL) {
    snprintf(buf, size, " in a directive's expression");
  } else if (pp->outermost.text != NULL &&
             (pp->outermost.length != in->length ||
              memcmp(pp->outermost.text, in->text, in->length) != 0)) {
    snprintf(buf, size, " while expanding '%.*s' (in '%.*s')",
             (int)in->length, in->text, (int)pp->outermost.length,
             pp->outermost.text);
  } else {
    snprintf(buf, size, " while expanding '%.*s'", (int)in->length, in->text);
  }
}

static bool push_frame(pp_t* pp, const dc__token_t* tokens, size_t count,
                       macro_t* macro, const dc__token_t* at) {
  if (pp->stopped) return false;
  if (pp->depth > DC_LIMIT_MACRO_DEPTH) {
    char where[160];
    describe_expansion(pp, where, sizeof(where));
    dc__pp_limit_error(pp, at->line, at->col,
                "macro expansion depth limit (%u) exceeded%s",
                DC_LIMIT_MACRO_DEPTH, where);
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
// exhausted. The source's EOF is returned but never consumed.
static const dc__token_t* next_token(pp_t* pp, size_t floor) {
  pop_exhausted(pp, floor);
  frame_t* f = &pp->frames[pp->depth - 1];
  if (f->pos >= f->count) return NULL;
  const dc__token_t* t = &f->tokens[f->pos];
  if (t->kind != DC_TOK_EOF) ++f->pos;
  return t;
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

bool dc__pp_name_eq(const dc__token_t* a, const dc__token_t* b) {
  return a->length == b->length && memcmp(a->text, b->text, a->length) == 0;
}

bool dc__tok_is_hash(const dc__token_t* t) {
  return t->kind == DC_TOK_PUNCT && dc__tok_is(t, "#");
}

bool dc__tok_is_paste(const dc__token_t* t) {
  return t->kind == DC_TOK_PUNCT && dc__tok_is(t, "##");
}

//===-- Storing tokens --------------------------------------------------===//

// Charges |tokens| (of memory) to the expansion limit; false once over it.
static bool charge(pp_t* pp, size_t tokens, const dc__token_t* at) {
  if (pp->stopped) return false;
  if (tokens <= DC_LIMIT_MACRO_EXPANSION_TOKENS - pp->expansion_tokens) {
    pp->expansion_tokens += tokens;
    return true;
  }
  char where[160];
  describe_expansion(pp, where, sizeof(where));
  dc__pp_limit_error(pp, at->line, at->col,
              "macro expansion limit (%u tokens) exceeded%s",
              DC_LIMIT_MACRO_EXPANSION_TOKENS, where);
  return false;
}

// Appends |tok| to |list|, a list of macro expansion's own, charging what
// the list allocates to the expansion limit.
static bool store(pp_t* pp, dc__token_list_t* list, dc__token_t tok) {
  size_t grown = dc__token_list_grown_capacity(list);
  if (grown != list->capacity && !charge(pp, grown, &tok)) return false;
  if (!dc__token_list_push(pp->arena, list, tok)) {
    pp->failed = true;
    return false;
  }
  return true;
}

// Appends |tok| to the translation unit.
void dc__pp_output(pp_t* pp, dc__token_t tok) {
  if (pp->stopped) return;
  if (dc__tok_is_hash(&tok) || dc__tok_is_paste(&tok)) {
    // '#' means nothing outside a directive; passing it on would let a
    // macro put a directive into the generated code.
    pp->failed = true;
    dc__diag_error(pp->diag, tok.line, tok.col,
                   "stray '%.*s' in program (a directive must start a line)",
                   (int)tok.length, tok.text);
    return;
  }
  if (pp->out->count >= DC_LIMIT_TOKENS) {
    dc__pp_limit_error(pp, tok.line, tok.col,
                "token limit (%u tokens after preprocessing) exceeded",
                DC_LIMIT_TOKENS);
    return;
  }
  if (!dc__token_list_push(pp->arena, pp->out, tok)) pp->failed = true;
}

static void put(pp_t* pp, dc__token_list_t* list, dc__token_t tok) {
  if (list == pp->out) {
    dc__pp_output(pp, tok);
  } else {
    store(pp, list, tok);
  }
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

// Reads a macro's arguments after its name; the next token that is not a
// newline is '('. Returns the number of arguments, or -1 after reporting
// an error.
static long collect_args(pp_t* pp, const macro_t* m, const dc__token_t* name,
                         size_t floor, arg_t* args, size_t max_args) {
  const dc__token_t* open;
  do {
    open = next_token(pp, floor);  // newlines, then '(' (invoked() saw it)
  } while (open != NULL && open->kind == DC_TOK_NEWLINE);
  dc__token_list_t current = {0};
  size_t count = 0;
  size_t depth = 0;
  for (;;) {
    const dc__token_t* tok = next_token(pp, floor);
    if (tok == NULL || tok->kind == DC_TOK_EOF) {
      dc__pp_error_at(pp, name, "unterminated argument list invoking macro",
               dc__pp_token_text(pp, name));
      return -1;
    }
    if (tok->kind == DC_TOK_NEWLINE) continue;
    bool is_close = dc__tok_is(tok, ")");
    bool splits = dc__tok_is(tok, ",") && depth == 0 &&
                  !(m->variadic && count + 1 >= m->param_count);
    if ((is_close && depth == 0) || splits) {
      if (count == max_args) {
        dc__pp_error_at(pp, name, "too many arguments to macro",
                 dc__pp_token_text(pp, name));
        return -1;
      }
      args[count++] = (arg_t){.tokens = current.items, .count = current.count};
      current = (dc__token_list_t){0};
      if (is_close) return (long)count;
      continue;
    }
    if (dc__tok_is(tok, "(")) ++depth;
    if (is_close) --depth;
    if (!store(pp, &current, *tok)) return -1;
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
    pp->failed = true;
    dc__diag_error(pp->diag, name->line, name->col,
                   "macro '%.*s' takes %zu argument(s), %ld given",
                   (int)name->length, name->text, m->param_count, *count);
    return false;
  }
  return true;
}

long dc__pp_param_index(const macro_t* m, const dc__token_t* tok) {
  if (tok->kind != DC_TOK_IDENT) return -1;
  for (size_t i = 0; i < m->param_count; ++i) {
    if (dc__pp_name_eq(&m->params[i], tok)) return (long)i;
  }
  return -1;
}

// Makes the string literal of #arg.
static dc__token_t stringize(pp_t* pp, const arg_t* arg, dc__token_t at) {
  size_t size = 3;
  for (size_t i = 0; i < arg->count; ++i) size += 2 * arg->tokens[i].length + 1;
  char* text = charge(pp, 1 + size / 32, &at)
                   ? dc__arena_alloc(pp->arena, size)
                   : NULL;
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
  size_t n = (size_t)left->length + right->length;
  if (!charge(pp, 1 + n / 32, left)) return false;
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
  for (size_t i = 0; i < count && !pp->stopped; ++i) {
    dc__token_t t = toks[i];
    t.line = at->line;
    t.col = at->col;
    store(pp, out, t);
  }
}

// The right operand of the ## at m->body[*i]: a parameter's raw tokens, a
// stringized parameter or a plain token. Advances *i past it.
static size_t paste_operand(pp_t* pp, const macro_t* m, arg_t* args,
                            size_t* i, const dc__token_t* at,
                            dc__token_t* scratch, const dc__token_t** toks) {
  const dc__token_t* r = &m->body[++*i];
  if (m->function_like && dc__tok_is_hash(r)) {
    *scratch = stringize(pp, &args[dc__pp_param_index(m, &m->body[++*i])], *at);
    *toks = scratch;
    return 1;
  }
  long p = dc__pp_param_index(m, r);
  *toks = p >= 0 ? args[p].tokens : r;
  return p >= 0 ? args[p].count : 1;
}

// Builds the replacement list of |m| for |args|. An empty argument next
// to ## is a placemarker: pasting onto it gives the other operand.
static void substitute(pp_t* pp, const macro_t* m, arg_t* args,
                       const dc__token_t* at, dc__token_list_t* out) {
  bool placemarker = false;  // the last operand appended was empty
  for (size_t i = 0; i < m->body_count && !pp->stopped && !pp->failed; ++i) {
    const dc__token_t* t = &m->body[i];
    bool before_paste = i + 1 < m->body_count && dc__tok_is_paste(&m->body[i + 1]);
    if (m->function_like && dc__tok_is_hash(t)) {  // a parameter follows (#define)
      dc__token_t s = stringize(pp, &args[dc__pp_param_index(m, &m->body[++i])], *at);
      s.flags = t->flags;
      store(pp, out, s);
      placemarker = false;
      continue;
    }
    if (dc__tok_is_paste(t)) {  // never first or last (#define checks)
      dc__token_t scratch;
      const dc__token_t* rtoks;
      size_t rcount = paste_operand(pp, m, args, &i, at, &scratch, &rtoks);
      if (rcount == 0) continue;  // the left operand stays as it is
      if (placemarker || out->count == 0) {
        append_at(pp, out, rtoks, rcount, at);
      } else if (paste(pp, &out->items[out->count - 1], &rtoks[0])) {
        append_at(pp, out, rtoks + 1, rcount - 1, at);
      }
      placemarker = false;
      continue;
    }
    long p = dc__pp_param_index(m, t);
    if (p < 0) {
      append_at(pp, out, t, 1, at);
      placemarker = false;
    } else if (before_paste) {
      append_at(pp, out, args[p].tokens, args[p].count, at);
      placemarker = args[p].count == 0;
    } else {
      const dc__token_list_t* e = expanded_arg(pp, &args[p], at);
      append_at(pp, out, e->items, e->count, at);
    }
  }
}

// The text __FILE__ gives: the program's name as a string literal, with
// any byte that is not plainly a file name's made '_' (so that it keeps
// its length, which sizeof(__FILE__) shows).
static char* file_literal(pp_t* pp) {
  const char* name = pp->diag->file;
  size_t n = strlen(name);
  char* text = dc__arena_alloc(pp->arena, n + 3);
  if (text == NULL) return NULL;
  text[0] = '"';
  for (size_t i = 0; i < n; ++i) {
    char c = name[i];
    text[i + 1] = isalnum((unsigned char)c) || strchr("._-+/", c) ? c : '_';
  }
  text[n + 1] = '"';
  text[n + 2] = '\0';
  return text;
}

static dc__token_t builtin_macro(pp_t* pp, const macro_t* m,
                                 const dc__token_t* at) {
  dc__token_t t = *at;
  char* text = m->kind == MACRO_LINE
                   ? dc__arena_printf(pp->arena, "%u", at->line)
                   : file_literal(pp);
  t.kind = m->kind == MACRO_LINE ? DC_TOK_NUMBER : DC_TOK_STRING;
  t.text = text ? text : "0";
  t.length = text ? (uint32_t)strlen(text) : 1;
  return t;
}

// Whether a function-like macro's name is followed by '(' (an invocation).
static bool invoked(pp_t* pp, size_t floor) {
  const dc__token_t* next = peek_token(pp, floor);
  return next != NULL && dc__tok_is(next, "(");
}

// Room for the arguments of |m|, charged to the expansion limit (arg_t is
// about two tokens' size).
static arg_t* new_args(pp_t* pp, const macro_t* m, const dc__token_t* at,
                       size_t* max_args) {
  *max_args = m->param_count ? m->param_count : 1;
  if (!charge(pp, 2 * *max_args, at)) return NULL;
  return dc__arena_zalloc(pp->arena, *max_args, sizeof(arg_t));
}

// Room for what substitute() makes of |m|'s body, allocated at once and
// charged: an upper bound on the replacement's length (the ## themselves
// are counted). Expands the arguments that need it.
static bool reserve_replacement(pp_t* pp, const macro_t* m, arg_t* args,
                                const dc__token_t* at,
                                dc__token_list_t* out) {
  size_t n = 0;
  for (size_t i = 0; i < m->body_count && !pp->stopped; ++i) {
    const dc__token_t* t = &m->body[i];
    long p = dc__pp_param_index(m, t);
    bool pasted = (i + 1 < m->body_count && dc__tok_is_paste(&m->body[i + 1])) ||
                  (i > 0 && dc__tok_is_paste(&m->body[i - 1]));
    if (m->function_like && dc__tok_is_hash(t)) {
      ++i;  // #param: one string
      ++n;
    } else if (p < 0) {
      ++n;
    } else if (pasted) {
      n += args[p].count;
    } else {
      n += expanded_arg(pp, &args[p], at)->count;
    }
  }
  if (pp->stopped || pp->failed || !charge(pp, n, at)) return false;
  if (!dc__token_list_reserve(pp->arena, out, n)) {
    pp->failed = true;
    return false;
  }
  return true;
}

// Expands the invocation of |m| named by |tok|: pushes its replacement.
static void expand_macro(pp_t* pp, macro_t* m, const dc__token_t* tok,
                         size_t floor) {
  arg_t* args = NULL;
  long count = 0;
  if (m->function_like) {
    size_t max_args = 0;
    args = new_args(pp, m, tok, &max_args);
    if (args == NULL) return;
    count = collect_args(pp, m, tok, floor, args, max_args);
    if (count < 0 || !check_arg_count(pp, m, tok, &count, args)) return;
  }
  dc__token_list_t replacement = {0};
  if (!reserve_replacement(pp, m, args, tok, &replacement)) return;
  substitute(pp, m, args, tok, &replacement);
  if (replacement.count > 0 && !pp->failed) {
    replacement.items[0].flags |= tok->flags & DC_TOKF_SPACE;
    push_frame(pp, replacement.items, replacement.count, m, tok);
  }
}

static void process_token(pp_t* pp, const dc__token_t* tok, size_t floor,
                          dc__token_list_t* out) {
  if (pp->stopped) return;
  macro_t* m = NULL;
  if (tok->kind == DC_TOK_IDENT && !(tok->flags & DC_TOKF_NO_EXPAND)) {
    if (dc__tok_is(tok, "_Pragma")) {
      dc__pp_error_at(pp, tok,
               "_Pragma is not supported; write #pragma on a line of its own",
               NULL);
      return;
    }
    m = dc__pp_find_macro(pp, tok->text, tok->length);
  }
  if (m == NULL) {
    put(pp, out, *tok);
    return;
  }
  if (m->disabled) {
    dc__token_t painted = *tok;
    painted.flags |= DC_TOKF_NO_EXPAND;
    put(pp, out, painted);
    return;
  }
  if (m->function_like && !invoked(pp, floor)) {
    put(pp, out, *tok);  // a function-like macro's name alone
    return;
  }
  if (m->kind != MACRO_PLAIN) {
    put(pp, out, builtin_macro(pp, m, tok));
    return;
  }
  if (pp->depth == 1) pp->outermost = *tok;
  const dc__token_t* enclosing = pp->expanding;
  pp->expanding = tok;
  expand_macro(pp, m, tok, floor);
  pp->expanding = enclosing;
}

//===-- #if expressions -------------------------------------------------===//

// Replaces defined X / defined(X) with 0 or 1, before macro expansion.
static bool resolve_defined(pp_t* pp, const dc__token_t* line, size_t n,
                            dc__token_list_t* out) {
  for (size_t i = 0; i < n; ++i) {
    if (!dc__tok_is(&line[i], "defined") || line[i].kind != DC_TOK_IDENT) {
      if (!store(pp, out, line[i])) return false;
      continue;
    }
    bool paren = i + 1 < n && dc__tok_is(&line[i + 1], "(");
    size_t name = i + 1 + paren;
    if (name >= n || line[name].kind != DC_TOK_IDENT ||
        (paren && (name + 1 >= n || !dc__tok_is(&line[name + 1], ")")))) {
      dc__pp_error_at(pp, &line[i], "'defined' needs a macro name", NULL);
      return false;
    }
    dc__token_t v = line[i];
    v.kind = DC_TOK_NUMBER;
    v.text = dc__pp_find_macro(pp, line[name].text, line[name].length) ? "1" : "0";
    v.length = 1;
    if (!store(pp, out, v)) return false;
    i = name + paren;
  }
  return true;
}

static bool is_operand(const dc__token_t* t) {
  return t->kind == DC_TOK_NUMBER || t->kind == DC_TOK_IDENT ||
         t->kind == DC_TOK_CHAR || t->kind == DC_TOK_STRING;
}

// How deeply dc__eval_const_expr recurses on |toks|, at worst: one level
// per open parenthesis, per ?: not yet closed by a parenthesis, and per
// unary operator waiting for its operand. Stops counting past the limit.
// Expansion only adds to it, so the tokens of a #if line as written give
// a first answer before any memory is spent on expanding them ("defined
// X" and "defined(X)" count as the one operand they become).
typedef struct open_paren_t {
  size_t depth, unary;  // before the '('
} open_paren_t;

static size_t expr_nesting(const dc__token_t* toks, size_t n) {
  open_paren_t open[DC_LIMIT_IF_EXPR_NESTING + 1];
  size_t parens = 0, depth = 0, unary = 0, worst = 0;
  bool want_operand = true;
  for (size_t i = 0; i < n && worst <= DC_LIMIT_IF_EXPR_NESTING; ++i) {
    const dc__token_t* t = &toks[i];
    if (dc__tok_is(t, "defined") && i + 1 < n) {
      i += dc__tok_is(&toks[i + 1], "(") ? 3 : 1;
    }
    bool closes = dc__tok_is(t, ")") && parens > 0;
    if (is_operand(t) || closes) {
      if (closes) {  // back to the depth before '(', its unary ops waiting
        --parens;
        depth = open[parens].depth;
        unary = open[parens].unary;
      }
      depth -= unary;  // the operand completes its unary operators
      unary = 0;
      want_operand = false;
    } else if (dc__tok_is(t, "(")) {
      open[parens++] = (open_paren_t){depth, unary};
      ++depth;
      unary = 0;
      want_operand = true;
    } else if (want_operand) {  // - + ! ~ (or junk the evaluator reports)
      ++depth;
      ++unary;
    } else {
      depth += dc__tok_is(t, "?");  // until the enclosing ')' or the end
      want_operand = true;
    }
    if (depth > worst) worst = depth;
  }
  return worst;
}

// Refuses |toks|, the expression of |what| ("#if") at |at|, when it nests
// deeper than the evaluator may recurse.
bool dc__pp_check_expr_nesting(pp_t* pp, const char* what,
                               const dc__token_t* at, const dc__token_t* toks,
                               size_t n) {
  if (expr_nesting(toks, n) <= DC_LIMIT_IF_EXPR_NESTING) return true;
  dc__pp_limit_error(pp, at->line, at->col,
              "%s expression nesting limit (%u) exceeded", what,
              DC_LIMIT_IF_EXPR_NESTING);
  return false;
}

// Expands the operands of a directive (#if, #pragma unroll).
void dc__pp_expand_directive(pp_t* pp, const dc__token_t* toks, size_t n,
                             const dc__token_t* directive,
                             dc__token_list_t* out) {
  pp->expanding = NULL;
  pp->outermost = (dc__token_t){0};
  expand_isolated(pp, toks, n, directive, out);
}

bool dc__pp_eval_condition(pp_t* pp, const dc__token_t* directive,
                           const dc__token_t* line, size_t n) {
  if (n == 0) {
    dc__pp_error_at(pp, directive, "#if needs an expression", NULL);
    return false;
  }
  dc__token_list_t resolved = {0}, expanded = {0};
  if (!dc__pp_check_expr_nesting(pp, "#if", directive, line, n) ||
      !resolve_defined(pp, line, n, &resolved)) {
    return false;
  }
  dc__pp_expand_directive(pp, resolved.items, resolved.count, directive, &expanded);
  if (pp->failed ||
      !dc__pp_check_expr_nesting(pp, "#if", directive, expanded.items,
                          expanded.count)) {
    return false;
  }
  long long v = 0;
  if (!dc__eval_const_expr(expanded.items, expanded.count, true, "#if",
                           directive, pp->diag, &v)) {
    pp->failed = true;
    return false;
  }
  return v != 0;
}

//===-- Predefined macros -----------------------------------------------===//

// Extensions the engine implements on every device, each a macro defined
// to 1 (docs/kernel-builtins.md: doubles and every 32- and 64-bit atomic).
static const char* const kExtensions[] = {
    "cl_khr_fp64",
    "cl_khr_global_int32_base_atomics",
    "cl_khr_global_int32_extended_atomics",
    "cl_khr_local_int32_base_atomics",
    "cl_khr_local_int32_extended_atomics",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "cl_khr_byte_addressable_store",
};

bool dc__pp_known_extension(const dc__token_t* t) {
  for (size_t i = 0; i < COUNT_OF(kExtensions); ++i) {
    if (dc__tok_is(t, kExtensions[i])) return true;
  }
  return false;
}


// Defines |name| (with its parameters, if any) as |value|, both trusted
// or validated text.
static void define_text(pp_t* pp, const char* name, const char* value,
                        origin_t origin) {
  const char* text = dc__arena_printf(pp->arena, "%s %s", name, value);
  dc__token_list_t toks = {0};
  if (text == NULL ||
      dc__lex(pp->arena, text, strlen(text), pp->diag, &toks) != DC_OK) {
    pp->failed = true;
    return;
  }
  // Options have no place in the source: their macros are at line 0.
  for (size_t i = 0; i < toks.count; ++i) toks.items[i].line = 0;
  dc__pp_define_macro(pp, &toks.items[0], toks.items, toks.count - 1, origin);
}

// OpenCL C 1.2's macros (section 6.10), its limits and math constants
// (6.12.2, 6.12.3) with the values the CPU prelude has, and the engine's.
// MAXFLOAT, HUGE_VAL(F), INFINITY, NAN, FP_ILOGB0, FP_ILOGBNAN and the CLK_*
// flags are not here: the semantic analysis knows them as constants.
static const char* const kPredefined[][2] = {
    {"__OPENCL_VERSION__", "120"},
    {"CL_VERSION_1_0", "100"},
    {"CL_VERSION_1_1", "110"},
    {"CL_VERSION_1_2", "120"},
    {"__ENDIAN_LITTLE__", "1"},
    {"__DCLUA__", "1"},
    {"__kernel_exec(X, typen)", "__kernel"},
    {"CHAR_BIT", "8"},
    {"SCHAR_MAX", "127"},
    {"SCHAR_MIN", "(-127 - 1)"},
    {"CHAR_MAX", "127"},
    {"CHAR_MIN", "(-127 - 1)"},
    {"UCHAR_MAX", "255"},
    {"SHRT_MAX", "32767"},
    {"SHRT_MIN", "(-32767 - 1)"},
    {"USHRT_MAX", "65535"},
    {"INT_MAX", "2147483647"},
    {"INT_MIN", "(-2147483647 - 1)"},
    {"UINT_MAX", "0xffffffffU"},
    {"LONG_MAX", "0x7fffffffffffffffL"},
    {"LONG_MIN", "(-0x7fffffffffffffffL - 1)"},
    {"ULONG_MAX", "0xffffffffffffffffUL"},
    {"FLT_DIG", "6"},
    {"FLT_MANT_DIG", "24"},
    {"FLT_MAX_10_EXP", "38"},
    {"FLT_MAX_EXP", "128"},
    {"FLT_MIN_10_EXP", "(-37)"},
    {"FLT_MIN_EXP", "(-125)"},
    {"FLT_RADIX", "2"},
    {"FLT_MAX", "0x1.fffffep127f"},
    {"FLT_MIN", "0x1.0p-126f"},
    {"FLT_EPSILON", "0x1.0p-23f"},
    {"DBL_DIG", "15"},
    {"DBL_MANT_DIG", "53"},
    {"DBL_MAX_10_EXP", "308"},
    {"DBL_MAX_EXP", "1024"},
    {"DBL_MIN_10_EXP", "(-307)"},
    {"DBL_MIN_EXP", "(-1021)"},
    {"DBL_MAX", "0x1.fffffffffffffp1023"},
    {"DBL_MIN", "0x1.0p-1022"},
    {"DBL_EPSILON", "0x1.0p-52"},
    {"M_E_F", "2.71828182845904523536f"},
    {"M_LOG2E_F", "1.44269504088896340736f"},
    {"M_LOG10E_F", "0.434294481903251827651f"},
    {"M_LN2_F", "0.693147180559945309417f"},
    {"M_LN10_F", "2.30258509299404568402f"},
    {"M_PI_F", "3.14159265358979323846f"},
    {"M_PI_2_F", "1.57079632679489661923f"},
    {"M_PI_4_F", "0.785398163397448309616f"},
    {"M_1_PI_F", "0.318309886183790671538f"},
    {"M_2_PI_F", "0.636619772367581343076f"},
    {"M_2_SQRTPI_F", "1.12837916709551257390f"},
    {"M_SQRT2_F", "1.41421356237309504880f"},
    {"M_SQRT1_2_F", "0.707106781186547524401f"},
    {"M_E", "2.71828182845904523536"},
    {"M_LOG2E", "1.44269504088896340736"},
    {"M_LOG10E", "0.434294481903251827651"},
    {"M_LN2", "0.693147180559945309417"},
    {"M_LN10", "2.30258509299404568402"},
    {"M_PI", "3.14159265358979323846"},
    {"M_PI_2", "1.57079632679489661923"},
    {"M_PI_4", "0.785398163397448309616"},
    {"M_1_PI", "0.318309886183790671538"},
    {"M_2_PI", "0.636619772367581343076"},
    {"M_2_SQRTPI", "1.12837916709551257390"},
    {"M_SQRT2", "1.41421356237309504880"},
    {"M_SQRT1_2", "0.707106781186547524401"},
};

static void add_builtin(pp_t* pp, const char* name, macro_kind_t kind) {
  dc__token_t tok = {.kind = DC_TOK_IDENT, .text = name,
                     .length = (uint32_t)strlen(name)};
  macro_t* m = dc__pp_add_macro(pp, &tok);
  if (m) m->kind = kind;
}

// The tokens of kPredefined and kExtensions: the same for every program,
// so they are lexed once per process, into an arena that lives as long.
typedef struct lexed_t {
  dc__token_t* toks;
  size_t count;  // the EOF token included
} lexed_t;

static lexed_t g_predefined[COUNT_OF(kPredefined) + COUNT_OF(kExtensions)];
static bool g_predefined_ok;
static pthread_once_t g_predefined_once = PTHREAD_ONCE_INIT;

static void lex_predefined(void) {
  static dc__arena_t arena;
  dc__arena_init(&arena, dc_allocator_system());
  dc__diag_t diag;
  dc__diag_init(&diag, dc_allocator_system(), "predefined");
  g_predefined_ok = true;
  for (size_t i = 0; i < COUNT_OF(g_predefined); ++i) {
    bool extension = i >= COUNT_OF(kPredefined);
    const char* text =
        extension ? dc__arena_printf(&arena, "%s 1",
                                     kExtensions[i - COUNT_OF(kPredefined)])
                  : dc__arena_printf(&arena, "%s %s", kPredefined[i][0],
                                     kPredefined[i][1]);
    dc__token_list_t toks = {0};
    if (text == NULL ||
        dc__lex(&arena, text, strlen(text), &diag, &toks) != DC_OK) {
      g_predefined_ok = false;
      break;
    }
    for (size_t k = 0; k < toks.count; ++k) toks.items[k].line = 0;
    g_predefined[i] = (lexed_t){toks.items, toks.count};
  }
  dc__diag_free(&diag);
}

static void predefine(pp_t* pp) {
  const dc__build_options_t* options = pp->options;
  pthread_once(&g_predefined_once, lex_predefined);
  if (!g_predefined_ok) {
    pp->failed = true;
    return;
  }
  for (size_t i = 0; i < COUNT_OF(g_predefined); ++i) {
    const lexed_t* m = &g_predefined[i];
    dc__pp_define_macro(pp, &m->toks[0], m->toks, m->count - 1, ORIGIN_PREDEFINED);
  }
  const char* version = options->cl_std == 100   ? "100"
                        : options->cl_std == 110 ? "110"
                                                 : "120";
  define_text(pp, "__OPENCL_C_VERSION__", version, ORIGIN_PREDEFINED);
  if (options->fast_relaxed_math) {
    define_text(pp, "__FAST_RELAXED_MATH__", "1", ORIGIN_PREDEFINED);
  }
  add_builtin(pp, "__LINE__", MACRO_LINE);
  add_builtin(pp, "__FILE__", MACRO_FILE);
  // -D and -U in order; their text was validated with the options.
  for (size_t i = 0; i < options->macro_option_count; ++i) {
    const dc__macro_option_t* o = &options->macro_options[i];
    if (o->value != NULL) {
      define_text(pp, o->name, o->value, ORIGIN_OPTION);
    } else {
      dc__pp_remove_macro(pp, o->name, strlen(o->name));
    }
  }
}

//===-- Driver ----------------------------------------------------------===//

// Refuses a source over DC_LIMIT_SOURCE_BYTES, at the line and column
// where it crosses the limit.
static bool check_source_size(dc__diag_t* diag, const char* source,
                              size_t length) {
  if (length <= DC_LIMIT_SOURCE_BYTES) return true;
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < DC_LIMIT_SOURCE_BYTES; ++i) {
    if (source[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  dc__diag_error(diag, line, col,
                 "source size limit (%u bytes, %u MiB) exceeded: the source "
                 "is %zu bytes",
                 DC_LIMIT_SOURCE_BYTES, DC_LIMIT_SOURCE_BYTES >> 20, length);
  return false;
}

// A key no source can know in advance: where this run's state lives and
// the time it started.
static uint64_t hash_key(const pp_t* pp) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ((uint64_t)(uintptr_t)pp * 0x9e3779b97f4a7c15ull) ^
         ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec;
}

static bool is_directive_start(const dc__token_t* t) {
  return dc__tok_is_hash(t) && (t->flags & DC_TOKF_LINE_START);
}

static void run(pp_t* pp) {
  frame_t* base = &pp->frames[0];
  while (!pp->stopped) {
    if (pp->diag->errors >= DC_LIMIT_ERRORS) {
      const dc__token_t* t = &base->tokens[base->pos];
      dc__pp_limit_error(pp, t->line, t->col,
                  "stopping after %u errors (the error limit)",
                  DC_LIMIT_ERRORS);
      break;
    }
    pop_exhausted(pp, 0);
    if (pp->depth == 1) {
      const dc__token_t* t = &base->tokens[base->pos];
      if (t->kind == DC_TOK_EOF) break;
      if (is_directive_start(t)) {
        dc__pp_read_directive(pp);
        continue;
      }
      if (t->kind == DC_TOK_NEWLINE || dc__pp_skipping(pp)) {
        ++base->pos;
        continue;
      }
    }
    const dc__token_t* tok = next_token(pp, 0);
    if (tok->kind == DC_TOK_NEWLINE) continue;
    process_token(pp, tok, 0, pp->out);
  }
}

dc_status_t dc__preprocess(dc__arena_t* arena, const char* source,
                           size_t length, const dc__build_options_t* options,
                           dc__diag_t* diag, dc__token_list_t* out) {
  if (!check_source_size(diag, source, length)) return DC_ERR_COMPILE;
  dc__token_list_t raw = {0};
  DC_RETURN_IF_ERROR(dc__lex(arena, source, length, diag, &raw));
  pp_t* pp = dc__arena_zalloc(arena, 1, sizeof(*pp));
  if (pp == NULL) return DC_ERR_OUT_OF_MEMORY;
  pp->arena = arena;
  pp->diag = diag;
  pp->options = options;
  pp->out = out;
  pp->hash_key = hash_key(pp);
  predefine(pp);
  pp->frames[0] = (frame_t){raw.items, raw.count, 0, NULL};
  pp->depth = 1;
  run(pp);
  if (pp->cond_count > 0 && !pp->stopped) {
    conditional_t* c = &pp->conds[pp->cond_count - 1];
    pp->failed = true;
    dc__diag_error(diag, c->line, c->col, "#if without #endif");
  }
  if (!dc__token_list_push(arena, out, raw.items[raw.count - 1])) {
    return DC_ERR_OUT_OF_MEMORY;
  }
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return pp->failed || diag->errors ? DC_ERR_COMPILE : DC_OK;
}

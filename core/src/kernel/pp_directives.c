// pp_directives.c: the preprocessor's directives: #define and #undef,
// #if and its kin, #pragma, #line, and the refusal of the rest.
// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "const_expr.h"
#include "pp_internal.h"

//===-- #define ---------------------------------------------------------===//

// Reads the parameter list of "#define F(" starting at line[2]; returns the
// index just past ')', or 0 after reporting an error.
static size_t read_params(pp_t* pp, macro_t* m, const dc__token_t* line,
                          size_t n) {
  size_t most = n < DC_LIMIT_MACRO_PARAMS ? n : DC_LIMIT_MACRO_PARAMS;
  m->params = dc__arena_zalloc(pp->arena, most, sizeof(dc__token_t));
  if (m->params == NULL) return 0;
  size_t i = 2;
  if (i < n && dc__tok_is(&line[i], ")")) return i + 1;
  for (; i < n; i += 2) {
    dc__token_t p = line[i];
    if (m->variadic) break;  // '...' must be last
    if (dc__tok_is(&p, "...")) {
      m->variadic = true;
      p.kind = DC_TOK_IDENT;
      p.text = "__VA_ARGS__";
      p.length = 11;
    } else if (p.kind != DC_TOK_IDENT || dc__tok_is(&p, "__VA_ARGS__")) {
      dc__pp_error_at(pp, &p, "expected a parameter name in #define, not",
               dc__pp_token_text(pp, &p));
      return 0;
    }
    if (dc__pp_param_index(m, &p) >= 0) {
      dc__pp_error_at(pp, &p, "duplicate macro parameter", dc__pp_token_text(pp, &p));
      return 0;
    }
    if (m->param_count == DC_LIMIT_MACRO_PARAMS) {
      dc__pp_limit_error(pp, p.line, p.col,
                  "macro parameter limit (%u) exceeded in the definition "
                  "of '%.*s'",
                  DC_LIMIT_MACRO_PARAMS, (int)m->name_length, m->name);
      return 0;
    }
    m->params[m->param_count++] = p;
    if (i + 1 < n && dc__tok_is(&line[i + 1], ")")) return i + 2;
    if (i + 1 >= n || !dc__tok_is(&line[i + 1], ",")) break;
  }
  dc__pp_error_at(pp, &line[1],
           m->variadic ? "'...' must be the last macro parameter"
                       : "expected ',' or ')' in the macro parameter list",
           NULL);
  return 0;
}

// C's rules for the body: # must name a parameter (function-like
// macros), ## cannot stand at either end, and __VA_ARGS__ belongs to
// variadic macros. Reports the first violation.
static bool check_body(pp_t* pp, const macro_t* m) {
  for (size_t i = 0; i < m->body_count; ++i) {
    const dc__token_t* t = &m->body[i];
    if (m->function_like && dc__tok_is_hash(t) &&
        (i + 1 == m->body_count || dc__pp_param_index(m, &m->body[i + 1]) < 0)) {
      dc__pp_error_at(pp, t, "'#' is not followed by a macro parameter", NULL);
      return false;
    }
    if (dc__tok_is_paste(t) && (i == 0 || i + 1 == m->body_count)) {
      dc__pp_error_at(pp, t, "'##' cannot appear at either end of a macro body",
               NULL);
      return false;
    }
    if (!m->variadic && dc__tok_is(t, "__VA_ARGS__")) {
      dc__pp_error_at(pp, t,
               "__VA_ARGS__ can only appear in the body of a variadic macro",
               NULL);
      return false;
    }
  }
  return true;
}

// Whether two definitions are the same as C means it: parameters, and
// body tokens with the same spelling and spacing.
static bool same_definition(const macro_t* a, const macro_t* b) {
  if (a->kind != b->kind || a->function_like != b->function_like ||
      a->variadic != b->variadic || a->param_count != b->param_count ||
      a->body_count != b->body_count) {
    return false;
  }
  for (size_t i = 0; i < a->param_count; ++i) {
    if (!dc__pp_name_eq(&a->params[i], &b->params[i])) return false;
  }
  for (size_t i = 0; i < a->body_count; ++i) {
    const dc__token_t* x = &a->body[i];
    const dc__token_t* y = &b->body[i];
    if (x->kind != y->kind || !dc__pp_name_eq(x, y)) return false;
    if (i > 0 && (x->flags & DC_TOKF_SPACE) != (y->flags & DC_TOKF_SPACE)) {
      return false;
    }
  }
  return true;
}

// Warns when |m| replaces a different definition |old|, as C compilers do.
static void check_redefinition(pp_t* pp, const macro_t* old,
                               const macro_t* m, const dc__token_t* name) {
  if (old == NULL || same_definition(old, m)) return;
  char previous[64];
  if (old->origin == ORIGIN_SOURCE) {
    snprintf(previous, sizeof(previous), "the previous definition is at %u:%u",
             old->line, old->col);
  } else {
    snprintf(previous, sizeof(previous), "it was %s",
             old->origin == ORIGIN_PREDEFINED ? "predefined"
                                              : "defined by a build option");
  }
  dc__pp_warn_at(pp, name->line, name->col, "'%.*s' redefined (%s)",
          (int)name->length, name->text, previous);
}

// Defines the macro of a #define line (or a -D option's tokens).
void dc__pp_define_macro(pp_t* pp, const dc__token_t* directive,
                         const dc__token_t* line, size_t n, origin_t origin) {
  if (n == 0 || line[0].kind != DC_TOK_IDENT) {
    dc__pp_error_at(pp, n ? &line[0] : directive, "#define needs a macro name", NULL);
    return;
  }
  if (dc__pp_reserved_name(line[0].text, line[0].length)) {
    dc__pp_error_at(pp, &line[0], "cannot define a macro named",
             dc__pp_token_text(pp, &line[0]));
    return;
  }
  macro_t m = {.name = line[0].text, .name_length = line[0].length,
               .origin = origin, .line = line[0].line, .col = line[0].col};
  size_t body = 1;
  if (n > 1 && dc__tok_is(&line[1], "(") && !(line[1].flags & DC_TOKF_SPACE)) {
    m.function_like = true;
    body = read_params(pp, &m, line, n);
    if (body == 0) return;
  }
  m.body = (dc__token_t*)&line[body];
  m.body_count = n - body;
  if (!check_body(pp, &m)) return;
  check_redefinition(pp, dc__pp_find_macro(pp, m.name, m.name_length), &m, &line[0]);
  macro_t* added = dc__pp_add_macro(pp, &line[0]);
  if (added == NULL) return;
  m.hash = added->hash;
  m.next = added->next;
  *added = m;
}

static void undefine_macro(pp_t* pp, const dc__token_t* d,
                           const dc__token_t* line, size_t n) {
  if (n == 0 || line[0].kind != DC_TOK_IDENT) {
    dc__pp_error_at(pp, d, "#undef needs a macro name", NULL);
    return;
  }
  if (dc__pp_reserved_name(line[0].text, line[0].length)) {
    dc__pp_error_at(pp, &line[0], "cannot undefine", dc__pp_token_text(pp, &line[0]));
    return;
  }
  if (n > 1) {
    dc__pp_warn_at(pp, line[1].line, line[1].col, "extra tokens after #undef %.*s",
            (int)line[0].length, line[0].text);
  }
  dc__pp_remove_macro(pp, line[0].text, line[0].length);
}

//===-- Conditionals ----------------------------------------------------===//

bool dc__pp_skipping(const pp_t* pp) { return pp->inactive > 0; }

static void set_active(pp_t* pp, conditional_t* c, bool active) {
  if (c->active && !active) ++pp->inactive;
  if (!c->active && active) --pp->inactive;
  c->active = active;
}

static void open_conditional(pp_t* pp, const dc__token_t* d,
                             const dc__token_t* line, size_t n) {
  if (pp->cond_count == DC_LIMIT_IF_NESTING) {
    dc__pp_limit_error(pp, d->line, d->col, "#if nesting limit (%u) exceeded",
                DC_LIMIT_IF_NESTING);
    return;
  }
  bool outer_skipping = dc__pp_skipping(pp);
  bool value = false;
  if (!outer_skipping) {
    if (dc__tok_is(d, "if")) {
      value = dc__pp_eval_condition(pp, d, line, n);
    } else if (n == 0 || line[0].kind != DC_TOK_IDENT) {
      dc__pp_error_at(pp, d, "#ifdef needs a macro name", NULL);
    } else {
      value = (dc__pp_find_macro(pp, line[0].text, line[0].length) != NULL) ==
              dc__tok_is(d, "ifdef");
      if (n > 1) {
        dc__pp_warn_at(pp, line[1].line, line[1].col, "extra tokens after #%.*s %.*s",
                (int)d->length, d->text, (int)line[0].length, line[0].text);
      }
    }
  }
  conditional_t* c = &pp->conds[pp->cond_count++];
  *c = (conditional_t){true, value || outer_skipping, false, d->line, d->col};
  set_active(pp, c, value);
}

static void directive_conditional(pp_t* pp, const dc__token_t* d,
                                  const dc__token_t* line, size_t n) {
  if (dc__tok_is(d, "if") || dc__tok_is(d, "ifdef") ||
      dc__tok_is(d, "ifndef")) {
    open_conditional(pp, d, line, n);
    return;
  }
  if (pp->cond_count == 0) {
    dc__pp_error_at(pp, d, "unmatched directive", dc__pp_token_text(pp, d));
    return;
  }
  conditional_t* c = &pp->conds[pp->cond_count - 1];
  if (dc__tok_is(d, "endif")) {
    set_active(pp, c, true);
    --pp->cond_count;
    return;
  }
  if (c->seen_else) {
    dc__pp_error_at(pp, d, "directive after #else", NULL);
    return;
  }
  set_active(pp, c, true);  // evaluate #elif in the enclosing state
  bool enclosing_skipping = dc__pp_skipping(pp);
  bool active;
  if (dc__tok_is(d, "else")) {
    c->seen_else = true;
    active = !c->was_taken;
  } else {  // elif
    active = !c->was_taken && !enclosing_skipping &&
             dc__pp_eval_condition(pp, d, line, n);
  }
  set_active(pp, c, active);
  c->was_taken |= active;
}

//===-- #pragma and #line -----------------------------------------------===//

// #pragma OPENCL EXTENSION name : enable | disable | require. Every known
// extension is always on, so the pragma changes nothing.
static void pragma_extension(pp_t* pp, const dc__token_t* d,
                             const dc__token_t* line, size_t n) {
  const dc__token_t* name = n > 2 ? &line[2] : NULL;
  const dc__token_t* how = n > 4 ? &line[4] : NULL;
  if (n != 5 || name->kind != DC_TOK_IDENT || !dc__tok_is(&line[3], ":") ||
      !(dc__tok_is(how, "enable") || dc__tok_is(how, "disable") ||
        dc__tok_is(how, "require"))) {
    dc__pp_error_at(pp, d,
             "malformed #pragma OPENCL EXTENSION: expected 'NAME : enable', "
             "'disable' or 'require'",
             NULL);
    return;
  }
  if (dc__pp_known_extension(name) || dc__tok_is(name, "all")) return;
  if (dc__tok_is(how, "require")) {
    dc__pp_error_at(pp, name, "required extension is not supported:",
             dc__pp_token_text(pp, name));
  } else {
    dc__pp_warn_at(pp, name->line, name->col,
            "unknown OpenCL extension '%.*s' in #pragma; ignored",
            (int)name->length, name->text);
  }
}

static void pragma_fp_contract(pp_t* pp, const dc__token_t* d,
                               const dc__token_t* line, size_t n) {
  if (n != 3 || !(dc__tok_is(&line[2], "ON") || dc__tok_is(&line[2], "OFF") ||
                  dc__tok_is(&line[2], "DEFAULT"))) {
    dc__pp_error_at(pp, d,
             "malformed #pragma OPENCL FP_CONTRACT: expected ON, OFF or "
             "DEFAULT",
             NULL);
  }
}

// #pragma unroll [N] and #pragma nounroll become a DC_TOK_PRAGMA token
// for the parser; N is a constant expression from 1 to INT32_MAX.
static void pragma_unroll(pp_t* pp, const dc__token_t* hash,
                          const dc__token_t* line, size_t n) {
  bool nounroll = dc__tok_is(&line[0], "nounroll");
  char* text = NULL;
  if (n == 1) {
    text = nounroll ? "nounroll" : "unroll";
  } else if (nounroll) {
    dc__pp_error_at(pp, &line[1], "#pragma nounroll takes nothing after it", NULL);
    return;
  } else {
    dc__token_list_t expanded = {0};
    if (!dc__pp_check_expr_nesting(pp, "#pragma unroll", &line[1], &line[1],
                            n - 1)) {
      return;
    }
    dc__pp_expand_directive(pp, &line[1], n - 1, &line[0], &expanded);
    long long v = 0;
    if (pp->failed ||
        !dc__pp_check_expr_nesting(pp, "#pragma unroll", &line[1], expanded.items,
                            expanded.count)) {
      return;
    }
    if (!dc__eval_const_expr(expanded.items, expanded.count, false,
                             "#pragma unroll", &line[0], pp->diag, &v)) {
      pp->failed = true;  // reported
      return;
    }
    if (v < 1 || v > INT32_MAX) {
      pp->failed = true;
      dc__diag_error(pp->diag, line[1].line, line[1].col,
                     "#pragma unroll count %lld is out of range (1 to %d)",
                     v, INT32_MAX);
      return;
    }
    text = dc__arena_printf(pp->arena, "unroll %lld", v);
    if (text == NULL) return;
  }
  dc__token_t t = {.kind = DC_TOK_PRAGMA, .length = (uint32_t)strlen(text),
                   .text = text, .line = hash->line, .col = hash->col,
                   .flags = hash->flags};
  dc__pp_output(pp, t);
}

static void directive_pragma(pp_t* pp, const dc__token_t* hash,
                             const dc__token_t* d, const dc__token_t* line,
                             size_t n) {
  if (n == 0) {
    dc__pp_warn_at(pp, d->line, d->col, "empty #pragma ignored");
  } else if (dc__tok_is(&line[0], "OPENCL") && n > 1 &&
             dc__tok_is(&line[1], "EXTENSION")) {
    pragma_extension(pp, d, line, n);
  } else if (dc__tok_is(&line[0], "OPENCL") && n > 1 &&
             dc__tok_is(&line[1], "FP_CONTRACT")) {
    pragma_fp_contract(pp, d, line, n);
  } else if (dc__tok_is(&line[0], "unroll") ||
             dc__tok_is(&line[0], "nounroll")) {
    pragma_unroll(pp, hash, line, n);
  } else {
    int shown = line[0].length > 40 ? 40 : (int)line[0].length;
    dc__pp_warn_at(pp, line[0].line, line[0].col, "unknown #pragma '%.*s%s' ignored",
            shown, line[0].text, (int)line[0].length > shown ? "..." : "");
  }
}

// #line N: accepted and ignored (diagnostics stay in the source's own
// lines). A file name is refused: nothing the user writes may reach a
// #line of the generated code.
static void directive_line(pp_t* pp, const dc__token_t* d,
                           const dc__token_t* line, size_t n) {
  bool digits = n > 0 && line[0].kind == DC_TOK_NUMBER && line[0].length <= 10;
  uint64_t number = 0;
  for (uint32_t i = 0; digits && i < line[0].length; ++i) {
    digits = isdigit((unsigned char)line[0].text[i]) != 0;
    number = number * 10 + (uint64_t)(line[0].text[i] - '0');
  }
  if (!digits || number == 0 || number > INT32_MAX) {
    dc__pp_error_at(pp, n ? &line[0] : d,
             "#line needs a decimal line number from 1 to 2147483647", NULL);
  } else if (n > 1 && line[1].kind == DC_TOK_STRING) {
    dc__pp_error_at(pp, &line[1],
             "#line with a file name is not supported: messages name the "
             "program as it was built",
             NULL);
  } else if (n > 1) {
    dc__pp_error_at(pp, &line[1], "unexpected token after the #line number:",
             dc__pp_token_text(pp, &line[1]));
  }
}

//===-- Directives ------------------------------------------------------===//

static bool is_one_of(const dc__token_t* t, const char* const* names,
                      size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (dc__tok_is(t, names[i])) return true;
  }
  return false;
}

// Directives other compilers have and this language refuses.
static bool refused_directive(pp_t* pp, const dc__token_t* d) {
  static const char* const kIncludes[] = {"include", "include_next",
                                          "import"};
  static const char* const kOthers[] = {"ident", "sccs", "assert", "unassert"};
  if (is_one_of(d, kIncludes, COUNT_OF(kIncludes))) {
    pp->failed = true;
    dc__diag_error(pp->diag, d->line, d->col,
                   "#%.*s is not supported: a program is one source; pass "
                   "definitions with -D options",
                   (int)d->length, d->text);
    return true;
  }
  if (is_one_of(d, kOthers, COUNT_OF(kOthers))) {
    pp->failed = true;
    dc__diag_error(pp->diag, d->line, d->col,
                   "#%.*s is not supported by the kernel language",
                   (int)d->length, d->text);
    return true;
  }
  return false;
}

static void print_directive(pp_t* pp, const dc__token_t* d,
                            const dc__token_t* line, size_t n) {
  const char* text = n ? line[0].text : "";
  size_t len = n ? (size_t)(line[n - 1].text + line[n - 1].length - text) : 0;
  if (len > 400) len = 400;  // the message is what matters, not its size
  if (dc__tok_is(d, "error")) {
    pp->failed = true;
    dc__diag_error(pp->diag, d->line, d->col, "#error %.*s", (int)len, text);
  } else {
    dc__pp_warn_at(pp, d->line, d->col, "#warning %.*s", (int)len, text);
  }
}

static void handle_directive(pp_t* pp, const dc__token_t* hash,
                             const dc__token_t* d, const dc__token_t* line,
                             size_t n) {
  static const char* const kConditionals[] = {"if",   "ifdef", "ifndef",
                                              "elif", "else",  "endif"};
  if (is_one_of(d, kConditionals, COUNT_OF(kConditionals))) {
    directive_conditional(pp, d, line, n);
    return;
  }
  if (dc__pp_skipping(pp)) return;
  if (dc__tok_is(d, "define")) {
    dc__pp_define_macro(pp, d, line, n, ORIGIN_SOURCE);
  } else if (dc__tok_is(d, "undef")) {
    undefine_macro(pp, d, line, n);
  } else if (dc__tok_is(d, "error") || dc__tok_is(d, "warning")) {
    print_directive(pp, d, line, n);
  } else if (dc__tok_is(d, "pragma")) {
    directive_pragma(pp, hash, d, line, n);
  } else if (dc__tok_is(d, "line")) {
    directive_line(pp, d, line, n);
  } else if (!refused_directive(pp, d)) {
    dc__pp_error_at(pp, d, "unknown preprocessor directive", dc__pp_token_text(pp, d));
  }
}

// Reads the directive starting at the '#' the base frame stands on.
void dc__pp_read_directive(pp_t* pp) {
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
  if (d->kind != DC_TOK_IDENT) {
    if (!dc__pp_skipping(pp)) {
      dc__pp_error_at(pp, hash, "expected a directive name after '#'", NULL);
    }
    return;
  }
  handle_directive(pp, hash, d, &base->tokens[start], base->pos - start);
}


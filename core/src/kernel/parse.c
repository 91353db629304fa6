// parse.c: the parser of the kernel language: statements, functions, the
// program, and the scopes its names live in.
//
// Recursive descent over the preprocessed tokens, in one pass with the
// semantic analysis: declarations are typed as they are read
// (parse_types.c), and every expression is parsed and typed by
// sema_expr.c, so each name is resolved to its declaration in the scope
// where it is used. Statements become dc__stmt_t trees that keep, beside
// the typed expressions, the token ranges they came from (ast.h).
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_internal.h"
#include "sema_internal.h"

// Errors after this many are not reported: the first ones say enough.
#define MAX_REPORTED_ERRORS 20

//===-- Tokens ------------------------------------------------------------===//

const dc__token_t* dc__sema_cur(const dc__sema_t* s) {
  return &s->toks[s->pos];
}

const dc__token_t* dc__sema_peek(const dc__sema_t* s, uint32_t k) {
  uint32_t at = s->pos + k;
  return &s->toks[at < s->count ? at : s->count - 1];
}

bool dc__sema_at(const dc__sema_t* s, const char* text) {
  return dc__tok_is(dc__sema_cur(s), text);
}

bool dc__sema_accept(dc__sema_t* s, const char* text) {
  if (!dc__sema_at(s, text)) return false;
  ++s->pos;
  return true;
}

const char* dc__sema_spell(dc__sema_t* s, const dc__token_t* t) {
  if (t->kind == DC_TOK_EOF) return "end of input";
  const char* text = dc__arena_strndup(s->arena, t->text, t->length);
  return text ? text : "";
}

bool dc__sema_expect(dc__sema_t* s, const char* text) {
  if (dc__sema_accept(s, text)) return true;
  dc__sema_error(s, dc__sema_cur(s), "expected '%s' before '%s'", text,
                 dc__sema_spell(s, dc__sema_cur(s)));
  return false;
}

static void report(dc__sema_t* s, bool error, const dc__token_t* t,
                   const char* format, va_list args) {
  char message[400];
  vsnprintf(message, sizeof(message), format, args);
  if (error) dc__diag_error(s->diag, t->line, t->col, "%s", message);
  else dc__diag_warning(s->diag, t->line, t->col, "%s", message);
}

void dc__sema_error(dc__sema_t* s, const dc__token_t* t, const char* format,
                    ...) {
  if (s->diag->errors < MAX_REPORTED_ERRORS) {
    va_list args;
    va_start(args, format);
    report(s, true, t, format, args);
    va_end(args);
  }
  s->failed = true;
}

void dc__sema_warning(dc__sema_t* s, const dc__token_t* t, const char* format,
                      ...) {
  va_list args;
  va_start(args, format);
  report(s, false, t, format, args);
  va_end(args);
}

bool dc__sema_enter(dc__sema_t* s, const dc__token_t* where) {
  if (s->depth >= DC_LIMIT_NESTING) {
    if (!s->failed) {
      dc__sema_error(s, where, "nesting limit (%d levels of statements, "
                     "blocks and parentheses) exceeded", DC_LIMIT_NESTING);
    }
    s->failed = true;
    return false;
  }
  ++s->depth;
  return true;
}

void dc__sema_leave(dc__sema_t* s) { --s->depth; }

//===-- Scopes ------------------------------------------------------------===//

void dc__sema_push_scope(dc__sema_t* s) {
  s->scopes[++s->scope_depth] = s->binding_count;
  s->tag_scopes[s->scope_depth] = s->tag_count;
}

void dc__sema_pop_scope(dc__sema_t* s) {
  s->binding_count = s->scopes[s->scope_depth];
  s->tag_count = s->tag_scopes[s->scope_depth];
  --s->scope_depth;
}

bool dc__same_name(const char* name, uint32_t length, const dc__token_t* t) {
  return length == t->length && memcmp(name, t->text, length) == 0;
}

dc__decl_t* dc__sema_lookup(const dc__sema_t* s, const dc__token_t* t) {
  if (t->kind != DC_TOK_IDENT) return NULL;
  for (uint32_t i = s->binding_count; i-- > 0;) {
    const dc__binding_t* b = &s->bindings[i];
    if (dc__same_name(b->name, b->length, t)) return b->decl;
  }
  return NULL;
}

void dc__sema_note_name(dc__sema_t* s, const dc__token_t* t,
                        dc__name_kind_t kind) {
  ptrdiff_t at = t - s->toks;
  if (at >= 0 && (uint32_t)at < s->count) s->token_names[at] = (uint8_t)kind;
}

void dc__sema_note_use(dc__sema_t* s, const dc__token_t* t, dc__decl_t* decl) {
  ptrdiff_t at = t - s->toks;
  if (at >= 0 && (uint32_t)at < s->count) s->token_decls[at] = decl;
  dc__sema_note_name(s, t, DC_NAME_DECL);
  if (decl->token != t) decl->is_used = true;
}

bool dc__sema_grow(dc__sema_t* s, void** items, uint32_t* capacity,
                 uint32_t count, size_t size) {
  if (count < *capacity) return true;
  uint32_t n = *capacity ? *capacity * 2 : 64;
  void* grown = dc__arena_alloc(s->arena, n * size);
  if (grown == NULL) return false;
  if (count) memcpy(grown, *items, count * size);
  *items = grown;
  *capacity = n;
  return true;
}

// Declares |name| in scope |level| (0 is the program's; usually the
// innermost): a function is declared in the program's scope while its
// parameters' scope is open.
static dc__decl_t* declare_at(dc__sema_t* s, uint32_t level,
                              dc__decl_kind_t kind, const dc__token_t* name,
                              const dc__ty_t* type) {
  uint32_t begin = s->scopes[level];
  uint32_t end = level == s->scope_depth ? s->binding_count
                                         : s->scopes[level + 1];
  for (uint32_t i = begin; i < end; ++i) {
    const dc__binding_t* b = &s->bindings[i];
    if (dc__same_name(b->name, b->length, name)) {
      dc__sema_error(s, name, "redefinition of '%s' (first declared at line "
                     "%u)", dc__sema_spell(s, name), b->decl->token->line);
      return NULL;
    }
  }
  dc__decl_t* d = dc__arena_zalloc(s->arena, 1, sizeof(*d));
  if (d == NULL || !dc__sema_grow(s, (void**)&s->bindings, &s->binding_capacity,
                         s->binding_count, sizeof(dc__binding_t))) {
    return NULL;
  }
  d->kind = kind;
  d->id = ++s->next_id;
  d->name = dc__sema_spell(s, name);
  d->token = name;
  d->type = type;
  memmove(&s->bindings[end + 1], &s->bindings[end],
          (s->binding_count - end) * sizeof(dc__binding_t));
  s->bindings[end] = (dc__binding_t){name->text, name->length, d};
  ++s->binding_count;
  for (uint32_t k = level + 1; k <= s->scope_depth; ++k) ++s->scopes[k];
  dc__sema_note_use(s, name, d);
  return d;
}

dc__decl_t* dc__sema_declare(dc__sema_t* s, dc__decl_kind_t kind,
                             const dc__token_t* name, const dc__ty_t* type) {
  return declare_at(s, s->scope_depth, kind, name, type);
}

const dc__ty_t* dc__sema_find_tag(const dc__sema_t* s, const dc__token_t* name,
                                  bool innermost) {
  uint32_t low = innermost ? s->tag_scopes[s->scope_depth] : 0;
  for (uint32_t i = s->tag_count; i-- > low;) {
    if (dc__same_name(s->tags[i].name, s->tags[i].length, name)) {
      return s->tags[i].type;
    }
  }
  return NULL;
}

void dc__sema_add_tag(dc__sema_t* s, const dc__token_t* name,
                      const dc__ty_t* type) {
  if (!dc__sema_grow(s, (void**)&s->tags, &s->tag_capacity, s->tag_count,
            sizeof(dc__tag_t))) {
    return;
  }
  s->tags[s->tag_count++] = (dc__tag_t){name->text, name->length, type};
}

//===-- Declarations ------------------------------------------------------===//

static bool is_record_or_enum(const dc__ty_t* t) {
  return t->kind == DC_TY_RECORD || t->kind == DC_TY_ENUM;
}

// Checks a variable's type where it is declared (in a function when
// |in_function|).
static bool check_variable(dc__sema_t* s, const dc__token_t* name,
                           const dc__ty_t* type, bool in_function) {
  const dc__ty_t* element = type;
  while (element->kind == DC_TY_ARRAY) element = element->base;
  if (element->kind == DC_TY_VOID) {
    dc__sema_error(s, name, "variable '%s' has type void",
                   dc__sema_spell(s, name));
    return false;
  }
  if (element->kind == DC_TY_RECORD && !element->record->is_complete) {
    dc__sema_error(s, name, "variable '%s' has incomplete type %s",
                   dc__sema_spell(s, name), dc__ty_name(s->arena, element));
    return false;
  }
  if (in_function && type->space == DC_ADDRESS_GLOBAL) {
    dc__sema_error(s, name, "variable '%s' cannot be declared __global: "
                   "global memory is reached through kernel arguments",
                   dc__sema_spell(s, name));
    return false;
  }
  if (!in_function && type->space != DC_ADDRESS_CONSTANT) {
    dc__sema_error(s, name, "a variable outside functions must be "
                   "__constant");
    return false;
  }
  return true;
}

bool dc__sema_count_private(dc__sema_t* s, const dc__token_t* name,
                            uint64_t bytes) {
  s->private_bytes += bytes;
  if (s->private_bytes <= DC_LIMIT_PRIVATE_BYTES) return true;
  dc__sema_error(s, name, "private memory limit (%u bytes per function) "
                 "exceeded by '%s': use __local or __global memory for "
                 "large arrays", DC_LIMIT_PRIVATE_BYTES,
                 dc__sema_spell(s, name));
  return false;
}

// `typedef struct { ... } name_t;`: reflection calls the struct name_t.
static void name_anonymous(const dc__ty_t* type, const char* name) {
  if (type->kind == DC_TY_RECORD && type->record->tag[0] == '\0' &&
      type->record->alias == NULL) {
    type->record->alias = name;
  } else if (type->kind == DC_TY_ENUM && type->enumeration->tag[0] == '\0' &&
             type->enumeration->alias == NULL) {
    type->enumeration->alias = name;
  }
}

// Reads one declarator of a declaration and its initialiser.
static bool parse_init_declarator(dc__sema_t* s, const dc__specs_t* specs,
                                  dc__declarator_t* d, bool in_function) {
  d->declarator.begin = s->pos;
  const dc__ty_t* type = NULL;
  if (!dc__parse_declarator(s, specs, false, &d->name, &type)) return false;
  dc__specs_t after = *specs;
  dc__parse_attributes(s, &after);
  d->declarator.end = s->pos;
  d->initializer = (dc__range_t){s->pos, s->pos};
  const dc__token_t* name = &s->toks[d->name];
  if (specs->is_typedef) {
    d->decl = dc__sema_declare(s, DC_DECL_TYPEDEF, name, type);
    if (d->decl != NULL) name_anonymous(type, d->decl->name);
    return d->decl != NULL;
  }
  if (!check_variable(s, name, type, in_function)) return false;
  if (in_function && type->space == DC_ADDRESS_PRIVATE &&
      !dc__sema_count_private(s, name, dc__ty_size(type))) {
    return false;
  }
  d->decl = dc__sema_declare(s, in_function ? DC_DECL_VAR : DC_DECL_GLOBAL,
                             name, type);
  if (d->decl == NULL) return false;
  d->decl->align = after.align;
  if (dc__sema_accept(s, "=")) {
    d->initializer.begin = s->pos;
    if (type->space == DC_ADDRESS_LOCAL) {
      dc__sema_error(s, name, "a __local variable cannot be initialised "
                     "('%s')", dc__sema_spell(s, name));
      return false;
    }
    d->decl->init = dc__sema_initializer(s, type);
    d->initializer.end = s->pos;
    if (d->decl->init == NULL) return false;
    d->decl->type = d->decl->init->type->kind == DC_TY_ARRAY
                        ? d->decl->init->type
                        : type;
  } else if (!in_function) {
    dc__sema_error(s, name, "__constant variable '%s' must be initialised",
                   dc__sema_spell(s, name));
    return false;
  }
  if (d->decl->type->kind == DC_TY_ARRAY && d->decl->type->length == 0) {
    dc__sema_error(s, name, "array '%s' needs a size or an initialiser",
                   dc__sema_spell(s, name));
    return false;
  }
  return true;
}

static void check_no_barrier(dc__sema_t* s, dc__range_t r);

// Reads the declarators of a declaration after its specifiers, through
// the closing ';'.
static dc__stmt_t* parse_declaration_rest(dc__sema_t* s, uint32_t first,
                                          const dc__specs_t* specs,
                                          bool in_function) {
  dc__stmt_t* st = dc__arena_zalloc(s->arena, 1, sizeof(*st));
  dc__declarator_t list[64];
  uint32_t n = 0;
  if (st == NULL) return NULL;
  st->kind = DC_STMT_DECL;
  st->token = first;
  st->specifiers = (dc__range_t){first, s->pos};
  st->address_space = specs->type->space;
  if (specs->is_static && in_function) {
    dc__sema_error(s, &s->toks[first], "'static' variables in functions are "
                   "not supported (OpenCL C 6.8)");
    return NULL;
  }
  if (dc__sema_at(s, ";") && is_record_or_enum(specs->type)) {
    ++s->pos;  // "struct pair { ... };" declares only the type
    return st;
  }
  do {
    if (n == 64) {
      dc__sema_error(s, dc__sema_cur(s),
                     "too many declarators in one declaration");
      return NULL;
    }
    memset(&list[n], 0, sizeof(list[n]));
    if (!parse_init_declarator(s, specs, &list[n], in_function)) return NULL;
    check_no_barrier(s, list[n].initializer);
    ++n;
  } while (dc__sema_accept(s, ","));
  if (!dc__sema_expect(s, ";")) return NULL;
  st->declarators = dc__arena_alloc(s->arena, n * sizeof(*list));
  if (st->declarators == NULL) return NULL;
  memcpy(st->declarators, list, n * sizeof(*list));
  st->declarator_count = n;
  return st;
}

//===-- Statements --------------------------------------------------------===//

static dc__stmt_t* parse_statement(dc__sema_t* s);

// True if |t| starts a statement with a keyword (if, for, return, ...).
static bool is_keyword_start(const dc__token_t* t) {
  static const char* const kKeywords[] = {
      "if", "while", "switch", "do", "for", "return", "break", "continue",
      "goto", "case", "default",
  };
  for (size_t i = 0; i < sizeof(kKeywords) / sizeof(kKeywords[0]); ++i) {
    if (dc__tok_is(t, kKeywords[i])) return true;
  }
  return false;
}

static dc__stmt_t* new_stmt(dc__sema_t* s, dc__stmt_kind_t kind) {
  dc__stmt_t* st = dc__arena_zalloc(s->arena, 1, sizeof(*st));
  if (st == NULL) return NULL;
  st->kind = kind;
  st->token = s->pos;
  return st;
}

// After an error in the statement that starts at token |first|: skips
// past its ';' (or its closing '}' when it is a compound statement), or
// up to the '}' that closes the enclosing block, so that the rest of the
// block is still checked and its errors reported too.
static void skip_statement(dc__sema_t* s, uint32_t first) {
  bool compound = is_keyword_start(&s->toks[first]) ||
                  dc__tok_is(&s->toks[first], "{");
  int depth = 0;
  for (s->pos = first; s->toks[s->pos].kind != DC_TOK_EOF; ++s->pos) {
    const dc__token_t* t = &s->toks[s->pos];
    if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) {
      ++depth;
    } else if (dc__tok_is(t, ")") || dc__tok_is(t, "]")) {
      --depth;
    } else if (dc__tok_is(t, "}")) {
      if (depth <= 0) return;  // the enclosing block ends here
      if (--depth == 0 && compound) {
        ++s->pos;
        return;
      }
    } else if (dc__tok_is(t, ";") && depth <= 0) {
      ++s->pos;
      return;
    }
  }
}

// Reads a block; |own_scope| is false for a function's body, whose
// outermost block shares the parameters' scope (C 6.2.1: redeclaring a
// parameter there is an error).
static dc__stmt_t* parse_block_in(dc__sema_t* s, bool own_scope) {
  dc__stmt_t* st = new_stmt(s, DC_STMT_BLOCK);
  if (st == NULL || !dc__sema_expect(s, "{")) return NULL;
  dc__stmt_t** items = NULL;
  uint32_t n = 0, capacity = 0;
  if (own_scope) dc__sema_push_scope(s);
  while (!dc__sema_at(s, "}") && dc__sema_cur(s)->kind != DC_TOK_EOF) {
    uint32_t first = s->pos, errors = s->diag->errors;
    dc__stmt_t* child = parse_statement(s);
    if (child == NULL && s->diag->errors > errors && !s->arena->failed) {
      skip_statement(s, first);  // reported: go on to find more errors
      s->failed = false;
      continue;
    }
    if (child == NULL || !dc__sema_grow(s, (void**)&items, &capacity, n,
                               sizeof(*items))) {
      if (own_scope) dc__sema_pop_scope(s);
      return NULL;
    }
    items[n++] = child;
  }
  if (own_scope) dc__sema_pop_scope(s);
  if (!dc__sema_expect(s, "}")) return NULL;
  st->child_count = n;
  st->children = items;
  return st;
}

static dc__stmt_t* parse_block(dc__sema_t* s) {
  return parse_block_in(s, true);
}

// Reads an expression into |range| and |value|.
static bool parse_expr_into(dc__sema_t* s, dc__range_t* range,
                            dc__expr_t** value) {
  range->begin = s->pos;
  *value = dc__sema_expression(s);
  range->end = s->pos;
  return *value != NULL;
}

// Reads "( expr )" as the condition of a statement.
static bool parse_condition(dc__sema_t* s, dc__stmt_t* st) {
  if (!dc__sema_expect(s, "(")) return false;
  if (dc__sema_at(s, ")")) {
    dc__sema_error(s, dc__sema_cur(s), "expected an expression before ')'");
    return false;
  }
  if (!parse_expr_into(s, &st->expr, &st->value)) return false;
  if (st->kind == DC_STMT_SWITCH) {
    if (!dc__ty_is_integer(st->value->type)) {
      dc__sema_error(s, st->value->token, "the value of a switch must be an "
                     "integer, not %s", dc__ty_name(s->arena,
                                                    st->value->type));
      return false;
    }
  } else {
    st->value = dc__sema_condition(s, st->value);
    if (st->value == NULL) return false;
  }
  return dc__sema_expect(s, ")");
}

// True if |t| names a synchronisation that must be a statement of its own.
// wait_group_events is one: it waits for the group's async copies, which
// every work-item shares, so it synchronises the group as a barrier does.
static bool is_sync_name(const dc__token_t* t) {
  return t->kind == DC_TOK_IDENT &&
         (dc__tok_is(t, "barrier") || dc__tok_is(t, "work_group_barrier") ||
          dc__tok_is(t, "wait_group_events") ||
          dc__tok_is(t, "dc_grid_sync"));
}

// True if the range is a call of barrier(), work_group_barrier() or
// dc_grid_sync().
static bool is_barrier_call(const dc__sema_t* s, dc__range_t r) {
  if (r.end - r.begin < 3) return false;
  return is_sync_name(&s->toks[r.begin]) &&
         dc__tok_is(&s->toks[r.begin + 1], "(") &&
         dc__tok_is(&s->toks[r.end - 1], ")");
}

// A barrier used inside a larger expression cannot be scheduled.
static void check_no_barrier(dc__sema_t* s, dc__range_t r) {
  for (uint32_t i = r.begin; i < r.end; ++i) {
    const dc__token_t* t = &s->toks[i];
    if (is_sync_name(t) && s->token_decls[i] == NULL) {
      bool grid = dc__tok_is(t, "dc_grid_sync");
      dc__sema_error(s, t, "%s must be called as a statement of its own: "
                     "'%s'", dc__sema_spell(s, t),
                     grid ? "dc_grid_sync();" : "barrier(CLK_LOCAL_MEM_FENCE);");
    }
  }
}

static dc__stmt_t* parse_expression_statement(dc__sema_t* s) {
  dc__stmt_t* st = new_stmt(s, DC_STMT_EXPR);
  if (st == NULL || !parse_expr_into(s, &st->expr, &st->value)) return NULL;
  if (!dc__sema_expect(s, ";")) return NULL;
  if (is_barrier_call(s, st->expr) && st->value->kind == DC_EXPR_BUILTIN) {
    bool grid = dc__tok_is(&s->toks[st->expr.begin], "dc_grid_sync");
    st->kind = grid ? DC_STMT_GRID_SYNC : DC_STMT_BARRIER;
    st->has_barrier = true;
  } else {
    check_no_barrier(s, st->expr);
  }
  return st;
}

static bool parse_for_head(dc__sema_t* s, dc__stmt_t* st) {
  if (!dc__sema_expect(s, "(")) return false;
  if (dc__sema_starts_type(s)) {
    uint32_t first = s->pos;
    dc__specs_t specs;
    if (!dc__parse_specifiers(s, &specs)) return false;
    st->init = parse_declaration_rest(s, first, &specs, true);
    if (st->init == NULL) return false;
  } else if (!dc__sema_accept(s, ";")) {
    st->init = parse_expression_statement(s);
    if (st->init == NULL) return false;
  }
  st->expr = (dc__range_t){s->pos, s->pos};
  if (!dc__sema_at(s, ";")) {
    if (!parse_expr_into(s, &st->expr, &st->value)) return false;
    if ((st->value = dc__sema_condition(s, st->value)) == NULL) return false;
  }
  if (!dc__sema_expect(s, ";")) return false;
  st->step = (dc__range_t){s->pos, s->pos};
  if (!dc__sema_at(s, ")") &&
      !parse_expr_into(s, &st->step, &st->step_value)) {
    return false;
  }
  if (!dc__sema_expect(s, ")")) return false;
  check_no_barrier(s, st->expr);
  check_no_barrier(s, st->step);
  return true;
}

static dc__stmt_t* parse_for(dc__sema_t* s) {
  dc__stmt_t* st = new_stmt(s, DC_STMT_FOR);
  ++s->pos;
  if (st == NULL) return NULL;
  dc__sema_push_scope(s);
  bool ok = parse_for_head(s, st) && (st->body = parse_statement(s)) != NULL;
  dc__sema_pop_scope(s);
  return ok ? st : NULL;
}

static dc__stmt_t* parse_return(dc__sema_t* s) {
  dc__stmt_t* st = new_stmt(s, DC_STMT_RETURN);
  const dc__token_t* keyword = dc__sema_cur(s);
  ++s->pos;
  if (st == NULL) return NULL;
  const dc__ty_t* want = s->function->type;
  st->expr = (dc__range_t){s->pos, s->pos};
  if (dc__sema_at(s, ";")) {
    if (want->kind != DC_TY_VOID) {
      dc__sema_error(s, keyword, "'%s' must return a value of type %s",
                     s->function->name, dc__ty_name(s->arena, want));
      return NULL;
    }
  } else {
    if (!parse_expr_into(s, &st->expr, &st->value)) return NULL;
    if (want->kind == DC_TY_VOID) {
      dc__sema_error(s, keyword, "'%s' returns void and cannot return a "
                     "value", s->function->name);
      return NULL;
    }
    st->value = dc__sema_convert(s, st->value, want, "return");
    if (st->value == NULL) return NULL;
    check_no_barrier(s, st->expr);
  }
  return dc__sema_expect(s, ";") ? st : NULL;
}

// case X: / default:
static dc__stmt_t* parse_case(dc__sema_t* s) {
  dc__stmt_t* st = new_stmt(s, DC_STMT_CASE);
  if (st == NULL) return NULL;
  if (dc__sema_accept(s, "default")) {
    st->expr = (dc__range_t){s->pos, s->pos};
  } else {
    ++s->pos;
    const dc__token_t* at = dc__sema_cur(s);
    int64_t v = 0;
    st->expr.begin = s->pos;
    if (!dc__sema_constant(s, "a case label", &v)) return NULL;
    st->expr.end = s->pos;
    st->value = dc__sema_int(s, dc__ty_scalar(s->types, DC_SCALAR_INT),
                             (uint64_t)v, at);
  }
  return dc__sema_expect(s, ":") ? st : NULL;
}

static dc__stmt_t* parse_loop_or_branch(dc__sema_t* s) {
  dc__stmt_kind_t kind = dc__sema_at(s, "if")      ? DC_STMT_IF
                         : dc__sema_at(s, "while") ? DC_STMT_WHILE
                                                   : DC_STMT_SWITCH;
  dc__stmt_t* st = new_stmt(s, kind);
  ++s->pos;
  if (st == NULL || !parse_condition(s, st)) return NULL;
  check_no_barrier(s, st->expr);
  if ((st->body = parse_statement(s)) == NULL) return NULL;
  if (kind == DC_STMT_IF && dc__sema_accept(s, "else")) {
    if ((st->else_body = parse_statement(s)) == NULL) return NULL;
  }
  return st;
}

static dc__stmt_t* parse_keyword_statement(dc__sema_t* s) {
  dc__stmt_t* st = NULL;
  if (dc__sema_at(s, "if") || dc__sema_at(s, "while") ||
      dc__sema_at(s, "switch")) {
    return parse_loop_or_branch(s);
  }
  if (dc__sema_at(s, "do")) {
    st = new_stmt(s, DC_STMT_DO);
    ++s->pos;
    if (st == NULL || (st->body = parse_statement(s)) == NULL) return NULL;
    if (!dc__sema_expect(s, "while") || !parse_condition(s, st)) return NULL;
    check_no_barrier(s, st->expr);
    return dc__sema_expect(s, ";") ? st : NULL;
  }
  if (dc__sema_at(s, "for")) return parse_for(s);
  if (dc__sema_at(s, "return")) return parse_return(s);
  if (dc__sema_at(s, "break") || dc__sema_at(s, "continue")) {
    st = new_stmt(s, dc__sema_at(s, "break") ? DC_STMT_BREAK
                                             : DC_STMT_CONTINUE);
    ++s->pos;
    return st && dc__sema_expect(s, ";") ? st : NULL;
  }
  if (dc__sema_at(s, "goto")) {
    st = new_stmt(s, DC_STMT_GOTO);
    ++s->pos;
    if (st == NULL || dc__sema_cur(s)->kind != DC_TOK_IDENT) {
      dc__sema_error(s, dc__sema_cur(s), "expected a label after goto");
      return NULL;
    }
    st->expr = (dc__range_t){s->pos, s->pos + 1};
    dc__sema_note_name(s, dc__sema_cur(s), DC_NAME_LABEL);
    ++s->pos;
    return dc__sema_expect(s, ";") ? st : NULL;
  }
  return parse_case(s);
}

static bool is_keyword_statement(const dc__sema_t* s) {
  return is_keyword_start(dc__sema_cur(s));
}

// #pragma unroll [N] / nounroll (a DC_TOK_PRAGMA token from the
// preprocessor) and the loop it applies to.
static dc__stmt_t* parse_unrolled(dc__sema_t* s) {
  const dc__token_t* pragma = dc__sema_cur(s);
  ++s->pos;
  dc__stmt_t* st = parse_statement(s);
  if (st == NULL) return NULL;
  if (st->kind != DC_STMT_FOR && st->kind != DC_STMT_WHILE &&
      st->kind != DC_STMT_DO) {
    dc__sema_warning(s, pragma, "#pragma %s applies to a loop; ignored",
                     dc__sema_spell(s, pragma));
  } else if (pragma->length == 8 &&
             memcmp(pragma->text, "nounroll", 8) == 0) {
    st->unroll = DC_UNROLL_NEVER;
  } else if (pragma->length > 7) {  // "unroll N", N checked by the pp
    st->unroll = (int32_t)strtol(pragma->text + 7, NULL, 10);
  } else {
    st->unroll = DC_UNROLL_FULL;
  }
  return st;
}

static dc__stmt_t* parse_statement_inner(dc__sema_t* s) {
  if (dc__sema_cur(s)->kind == DC_TOK_PRAGMA) return parse_unrolled(s);
  if (dc__sema_at(s, "{")) return parse_block(s);
  if (dc__sema_at(s, ";")) {
    dc__stmt_t* st = new_stmt(s, DC_STMT_EMPTY);
    ++s->pos;
    return st;
  }
  if (is_keyword_statement(s)) return parse_keyword_statement(s);
  if (dc__sema_cur(s)->kind == DC_TOK_IDENT &&
      dc__tok_is(dc__sema_peek(s, 1), ":")) {
    dc__stmt_t* st = new_stmt(s, DC_STMT_LABEL);
    if (st == NULL) return NULL;
    st->expr = (dc__range_t){s->pos, s->pos + 1};
    dc__sema_note_name(s, dc__sema_cur(s), DC_NAME_LABEL);
    s->pos += 2;
    st->body = parse_statement(s);
    return st->body ? st : NULL;
  }
  if (dc__sema_starts_type(s)) {
    uint32_t first = s->pos;
    dc__specs_t specs;
    if (!dc__parse_specifiers(s, &specs)) return NULL;
    return parse_declaration_rest(s, first, &specs, true);
  }
  return parse_expression_statement(s);
}

// Marks which statements reach a barrier (or a grid sync), bottom up.
static bool mark_barriers(dc__stmt_t* st) {
  if (st == NULL) return false;
  bool found = st->kind == DC_STMT_BARRIER || st->kind == DC_STMT_GRID_SYNC;
  for (uint32_t i = 0; i < st->child_count; ++i) {
    found |= mark_barriers(st->children[i]);
  }
  found |= mark_barriers(st->init);
  found |= mark_barriers(st->body);
  found |= mark_barriers(st->else_body);
  st->has_barrier = found;
  return found;
}

// True if |st| holds a dc_grid_sync() statement.
static bool has_grid_sync(const dc__stmt_t* st) {
  if (st == NULL || !st->has_barrier) return false;
  if (st->kind == DC_STMT_GRID_SYNC) return true;
  for (uint32_t i = 0; i < st->child_count; ++i) {
    if (has_grid_sync(st->children[i])) return true;
  }
  return has_grid_sync(st->init) || has_grid_sync(st->body) ||
         has_grid_sync(st->else_body);
}

static dc__stmt_t* parse_statement(dc__sema_t* s) {
  if (!dc__sema_enter(s, dc__sema_cur(s))) return NULL;
  dc__stmt_t* st = parse_statement_inner(s);
  dc__sema_leave(s);
  return st;
}

//===-- Functions and the program -----------------------------------------===//

#define MAX_PARAMS DC_KERNEL_MAX_ARGS

// The program's top-level items, in arrays that grow in the arena.
typedef struct items_t {
  dc__function_t* functions;
  uint32_t function_count;
  uint32_t function_capacity;
  dc__global_t* globals;
  uint32_t global_count;
  uint32_t global_capacity;
  int32_t* order;  // functions (>= 0) and globals (~index), as written
  uint32_t order_count;
  uint32_t order_capacity;
} items_t;

// Makes room for one more item of each kind.
static bool grow_items(dc__sema_t* s, items_t* items) {
  return dc__sema_grow(s, (void**)&items->functions, &items->function_capacity,
              items->function_count, sizeof(dc__function_t)) &&
         dc__sema_grow(s, (void**)&items->globals, &items->global_capacity,
              items->global_count, sizeof(dc__global_t)) &&
         dc__sema_grow(s, (void**)&items->order, &items->order_capacity,
              items->order_count, sizeof(int32_t));
}

// True if the declarator at the cursor has no name ("const char*" in a
// prototype).
static bool abstract_declarator(const dc__sema_t* s) {
  uint32_t at = s->pos;
  while (dc__tok_is(&s->toks[at], "*") || dc__is_qualifier(&s->toks[at])) {
    ++at;
  }
  return s->toks[at].kind != DC_TOK_IDENT;
}

// Reads one parameter into |param| (declared in the open scope; a
// prototype's parameters may be unnamed).
static bool parse_param(dc__sema_t* s, dc__param_t* param, uint32_t index) {
  uint32_t first = s->pos;
  dc__specs_t specs;
  if (!dc__parse_specifiers(s, &specs)) return false;
  if (specs.is_kernel || specs.is_typedef || specs.is_static) {
    dc__sema_error(s, &s->toks[first], "a parameter cannot be 'kernel', "
                   "'typedef' or 'static'");
    return false;
  }
  const dc__ty_t* type = NULL;
  bool unnamed = abstract_declarator(s);
  uint32_t name = first;
  if (!dc__parse_declarator(s, &specs, unnamed, &name, &type)) return false;
  if (type->kind == DC_TY_ARRAY) {  // "float a[]" is "float* a"
    type = dc__ty_pointer(s->types, type->base);
    if (type == NULL) return false;
  }
  if (type->kind == DC_TY_VOID) {
    dc__sema_error(s, &s->toks[name], "parameter %u has type void",
                   index + 1);
    return false;
  }
  param->name = name;
  param->tokens = (dc__range_t){first, s->pos};
  param->type = dc__legacy_type(type);
  if (unnamed) {  // typed, but not in scope
    param->decl = dc__arena_zalloc(s->arena, 1, sizeof(*param->decl));
    if (param->decl == NULL) return false;
    *param->decl = (dc__decl_t){.kind = DC_DECL_PARAM, .name = "",
                                .token = &s->toks[first], .type = type};
  } else {
    param->decl = dc__sema_declare(s, DC_DECL_PARAM, &s->toks[name], type);
    if (param->decl == NULL) return false;
  }
  param->decl->param_index = index;
  return true;
}

static bool parse_params(dc__sema_t* s, dc__function_t* fn) {
  dc__param_t params[MAX_PARAMS];
  uint32_t n = 0;
  if (!dc__sema_expect(s, "(")) return false;
  if (dc__sema_at(s, "void") && dc__tok_is(dc__sema_peek(s, 1), ")")) {
    ++s->pos;
  }
  while (!dc__sema_at(s, ")") && !s->failed) {
    if (n == MAX_PARAMS) {
      dc__sema_error(s, dc__sema_cur(s), "too many parameters (at most %d)",
                     MAX_PARAMS);
      return false;
    }
    if (!parse_param(s, &params[n], n)) return false;
    ++n;
    if (!dc__sema_at(s, ")") && !dc__sema_expect(s, ",")) return false;
  }
  if (!dc__sema_expect(s, ")")) return false;
  fn->params = dc__arena_alloc(s->arena, (n + 1) * sizeof(*params));
  if (fn->params == NULL) return false;
  memcpy(fn->params, params, n * sizeof(*params));
  fn->param_count = n;
  return true;
}

// A struct or union passed by value: the host gives its bytes, so it
// cannot hold what has no host value (OpenCL C 6.9).
static void check_record_param(dc__sema_t* s, const dc__token_t* at,
                               const char* name, const dc__ty_t* t) {
  if (!t->record->is_complete) {
    dc__sema_error(s, at, "kernel parameter '%s' has incomplete type %s",
                   name, dc__ty_name(s->arena, t));
    return;
  }
  const dc__ty_t* bad = NULL;
  const char* member = dc__record_arg_flaw(s->arena, t, &bad);
  if (member != NULL) {
    dc__sema_error(s, at, "kernel parameter '%s' has type %s, whose member "
                   "'%s' has type %s: a struct or union kernel argument "
                   "cannot hold pointers, bool, size_t, ptrdiff_t, "
                   "intptr_t, uintptr_t or event_t (OpenCL C 6.9)",
                   name, dc__ty_name(s->arena, t), member,
                   dc__ty_name(s->arena, bad));
  }
}

// The arguments must fit one launch on every device.
static void check_arg_bytes(dc__sema_t* s, const dc__function_t* fn) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__ty_t* t = fn->params[i].decl->type;
    bytes += t->kind == DC_TY_POINTER ? 8u : dc__ty_size(t);
  }
  if (bytes > DC_LIMIT_KERNEL_ARG_BYTES && !s->failed) {
    const dc__token_t* at = &s->toks[fn->name];
    dc__sema_error(s, at, "the arguments of kernel '%s' take %llu bytes "
                   "(each value at its size, each pointer 8), over the "
                   "limit of %u; pass large structs in a buffer",
                   dc__sema_spell(s, at), (unsigned long long)bytes,
                   DC_LIMIT_KERNEL_ARG_BYTES);
  }
}

// Enforces OpenCL C's rules for kernel signatures, so that every argument
// can be bound from the host.
static void check_kernel_signature(dc__sema_t* s, const dc__function_t* fn,
                                   const dc__ty_t* result) {
  if (result->kind != DC_TY_VOID) {
    dc__sema_error(s, &s->toks[fn->name], "kernel '%s' must return void",
                   dc__sema_spell(s, &s->toks[fn->name]));
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__ty_t* t = fn->params[i].decl->type;
    const dc__token_t* at = &s->toks[fn->params[i].name];
    const char* name = dc__sema_spell(s, at);
    if (t->kind == DC_TY_POINTER && t->base->kind == DC_TY_POINTER) {
      dc__sema_error(s, at, "kernel parameter '%s' is a pointer to a "
                     "pointer, which a kernel cannot receive", name);
    } else if (t->kind == DC_TY_POINTER &&
               t->base->space == DC_ADDRESS_PRIVATE) {
      dc__sema_error(s, at, "kernel pointer parameter '%s' must be "
                     "__global, __constant or __local", name);
    } else if (t->kind != DC_TY_POINTER && t->space != DC_ADDRESS_PRIVATE) {
      dc__sema_error(s, at, "kernel parameter '%s' is not a pointer and "
                     "cannot have an address space", name);
    } else if (t->kind == DC_TY_SCALAR &&
               (t->scalar == DC_SCALAR_BOOL ||
                t->scalar == DC_SCALAR_SIZE_T ||
                t->scalar == DC_SCALAR_PTRDIFF_T)) {
      dc__sema_error(s, at, "kernel parameter '%s' cannot have type bool, "
                     "size_t, ptrdiff_t, intptr_t, uintptr_t or void "
                     "(OpenCL C 6.9)", name);
    } else if (t->kind == DC_TY_EVENT) {
      dc__sema_error(s, at, "kernel parameter '%s' cannot be an event_t",
                     name);
    } else if (t->kind == DC_TY_RECORD) {
      check_record_param(s, at, name, t);
    }
  }
  check_arg_bytes(s, fn);
}

static bool same_signature(const dc__decl_t* a, const dc__function_t* fn,
                           const dc__ty_t* result) {
  if (a->type != result || a->param_count != fn->param_count) return false;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (a->params[i]->type->unqualified !=
        fn->params[i].decl->type->unqualified) {
      return false;
    }
  }
  return true;
}

// Declares the function (or checks it against its earlier prototype).
static dc__decl_t* declare_function(dc__sema_t* s, dc__function_t* fn,
                                    const dc__ty_t* result, uint32_t index) {
  const dc__token_t* name = &s->toks[fn->name];
  dc__decl_t* d = dc__sema_lookup(s, name);
  if (d != NULL && d->kind == DC_DECL_FUNCTION) {
    if (!same_signature(d, fn, result) || d->is_kernel != fn->is_kernel) {
      dc__sema_error(s, name, "'%s' does not match its declaration at line "
                     "%u", d->name, d->token->line);
      return NULL;
    }
    dc__sema_note_use(s, name, d);
  } else {
    d = declare_at(s, 0, DC_DECL_FUNCTION, name, result);
    if (d == NULL) return NULL;
    d->is_kernel = fn->is_kernel;
    d->param_count = fn->param_count;
    d->params = dc__arena_alloc(s->arena,
                                (fn->param_count + 1) * sizeof(*d->params));
    if (d->params == NULL) return NULL;
    for (uint32_t i = 0; i < fn->param_count; ++i) {
      d->params[i] = fn->params[i].decl;
    }
  }
  // A prototype after the definition must not point the calls at itself:
  // the call graph (parse_calls.c) follows |function| to the body.
  if (!d->is_defined) d->function = index;
  return d;
}

// Counts the parameters in the function's private memory: a struct
// passed by value is copied onto the stack like a variable.
static bool count_params(dc__sema_t* s, const dc__function_t* fn) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* p = fn->params[i].decl;
    // An array parameter is a pointer (8 bytes).
    uint32_t bytes = p->type->kind == DC_TY_ARRAY ? 8u : dc__ty_size(p->type);
    if (!dc__sema_count_private(s, p->token, bytes)) return false;
  }
  return true;
}

static bool parse_function_body(dc__sema_t* s, dc__function_t* fn,
                                dc__decl_t* d) {
  if (!dc__sema_at(s, "{")) {
    dc__sema_error(s, dc__sema_cur(s), "expected '{' or ';' after the "
                   "parameters of '%s'", d->name);
    return false;
  }
  if (d->is_defined) {
    dc__sema_error(s, &s->toks[fn->name], "redefinition of '%s'", d->name);
    return false;
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (fn->params[i].decl->name[0] == '\0') {
      dc__sema_error(s, fn->params[i].decl->token, "parameter %u of '%s' "
                     "needs a name", i + 1, d->name);
      return false;
    }
  }
  d->is_defined = true;
  s->private_bytes = 0;
  if (!count_params(s, fn)) return false;
  s->function = d;
  fn->body = parse_block_in(s, false);
  s->function = NULL;
  if (fn->body == NULL) return false;
  fn->private_bytes = (uint32_t)s->private_bytes;
  dc__check_jumps(s, fn);
  fn->body_end = s->pos;
  fn->calls_barrier = mark_barriers(fn->body);
  fn->calls_grid_sync = has_grid_sync(fn->body);
  return true;
}

static bool parse_function(dc__sema_t* s, items_t* items, uint32_t first,
                           dc__specs_t* specs, const dc__ty_t* result,
                           uint32_t name) {
  if (!grow_items(s, items)) return false;
  uint32_t index = items->function_count;
  dc__function_t* fn = &items->functions[index];
  memset(fn, 0, sizeof(*fn));
  fn->name = name;
  fn->is_kernel = specs->is_kernel;
  fn->return_type = (dc__range_t){first, name};
  dc__sema_push_scope(s);  // the parameters'
  bool ok = parse_params(s, fn);
  if (ok) {
    dc__parse_attributes(s, specs);
    memcpy(fn->required_group_size, specs->reqd_group_size,
           sizeof(fn->required_group_size));
    fn->head = (dc__range_t){first, s->pos};
    if (fn->is_kernel) check_kernel_signature(s, fn, result);
  }
  dc__decl_t* d = ok && !s->failed ? declare_function(s, fn, result, index)
                                   : NULL;
  fn->decl = d;
  ok = d != NULL && (dc__sema_accept(s, ";") ||
                     parse_function_body(s, fn, d));
  dc__sema_pop_scope(s);
  if (!ok) return false;
  items->function_count++;
  items->order[items->order_count++] = (int32_t)index;
  return true;
}

static bool add_global(dc__sema_t* s, items_t* items, uint32_t first,
                       bool is_typedef, dc__stmt_t* decl) {
  if (!grow_items(s, items)) return false;
  items->globals[items->global_count] =
      (dc__global_t){{first, s->pos}, is_typedef, decl};
  items->order[items->order_count++] = ~(int32_t)items->global_count++;
  return true;
}

// True when the cursor, after specifiers, starts a function: pointer
// stars, a name and '('.
static bool starts_function(const dc__sema_t* s, uint32_t* out_name) {
  uint32_t at = s->pos;
  while (dc__tok_is(&s->toks[at], "*")) ++at;
  if (s->toks[at].kind != DC_TOK_IDENT || !dc__tok_is(&s->toks[at + 1], "(")) {
    return false;
  }
  *out_name = at;
  return true;
}

static bool parse_top_level(dc__sema_t* s, items_t* items) {
  uint32_t first = s->pos;
  dc__specs_t specs;
  if (!dc__parse_specifiers(s, &specs)) return false;
  uint32_t name = 0;
  if (!specs.is_typedef && starts_function(s, &name)) {
    const dc__ty_t* result = specs.type;
    while (dc__sema_accept(s, "*")) {
      result = dc__ty_pointer(s->types, result);
    }
    ++s->pos;  // the name
    return result != NULL &&
           parse_function(s, items, first, &specs, result, name);
  }
  if (specs.is_kernel) {
    dc__sema_error(s, &s->toks[first], "'kernel' applies to functions only");
    return false;
  }
  bool type_only = specs.is_typedef || (dc__sema_at(s, ";") &&
                                        is_record_or_enum(specs.type));
  dc__stmt_t* decl = parse_declaration_rest(s, first, &specs, false);
  return decl != NULL && add_global(s, items, first, type_only, decl);
}

// Every function a program calls must be defined in it: there is nothing
// outside the program to link with.
static void check_definitions(dc__sema_t* s, const items_t* items) {
  bool any_kernel = false;
  for (uint32_t i = 0; i < items->function_count; ++i) {
    const dc__function_t* fn = &items->functions[i];
    if (fn->decl == NULL) continue;
    any_kernel |= fn->is_kernel && fn->decl->is_defined;
    if (!fn->decl->is_defined && fn->decl->is_used) {
      dc__sema_error(s, &s->toks[fn->name], "function '%s' is called but "
                     "never defined", fn->decl->name);
    }
  }
  if (!any_kernel && !s->failed) {
    dc__sema_error(s, &s->toks[s->count - 1], "the program defines no "
                   "kernel (a kernel is a function declared with "
                   "'__kernel void')");
  }
}

static dc__sema_t* new_sema(dc__arena_t* arena, const dc__token_list_t* tokens,
                            dc__diag_t* diag) {
  dc__sema_t* s = dc__arena_zalloc(arena, 1, sizeof(*s));
  if (s == NULL) return NULL;
  s->arena = arena;
  s->diag = diag;
  s->types = dc__types_new(arena);
  s->toks = tokens->items;
  s->count = (uint32_t)tokens->count;
  s->token_decls = dc__arena_zalloc(arena, s->count, sizeof(dc__decl_t*));
  s->token_names = dc__arena_zalloc(arena, s->count, 1);
  s->token_builtins = dc__arena_zalloc(arena, s->count, sizeof(void*));
  return s->types && s->token_decls && s->token_names && s->token_builtins
             ? s
             : NULL;
}

dc_status_t dc__parse(dc__arena_t* arena, const dc__token_list_t* tokens,
                      dc__diag_t* diag, dc__program_ast_t* out) {
  memset(out, 0, sizeof(*out));
  dc__sema_t* s = new_sema(arena, tokens, diag);
  items_t* items = dc__arena_zalloc(arena, 1, sizeof(*items));
  if (s == NULL || items == NULL) return DC_ERR_OUT_OF_MEMORY;
  while (dc__sema_cur(s)->kind != DC_TOK_EOF && !s->failed) {
    if (dc__sema_accept(s, ";")) continue;
    if (dc__sema_cur(s)->kind == DC_TOK_PRAGMA) {
      dc__sema_warning(s, dc__sema_cur(s), "#pragma %s applies to a loop; "
                       "ignored", dc__sema_spell(s, dc__sema_cur(s)));
      ++s->pos;
      continue;
    }
    parse_top_level(s, items);
  }
  if (!s->failed && diag->errors == 0) {
    check_definitions(s, items);
    if (!s->failed) {
      dc__check_calls(s, items->functions, items->function_count);
    }
  }
  out->tokens = tokens->items;
  out->token_count = (uint32_t)tokens->count;
  out->functions = items->functions;
  out->function_count = items->function_count;
  out->globals = items->globals;
  out->global_count = items->global_count;
  out->order = items->order;
  out->order_count = items->order_count;
  out->token_decls = s->token_decls;
  out->token_names = s->token_names;
  out->token_builtins = s->token_builtins;
  out->types = s->types;
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return s->failed || diag->errors ? DC_ERR_COMPILE : DC_OK;
}

const char* dc__type_name(dc__arena_t* arena, const dc__type_t* type) {
  static const char* const kSpaces[] = {
      [DC_ADDRESS_PRIVATE] = "",
      [DC_ADDRESS_GLOBAL] = "__global ",
      [DC_ADDRESS_CONSTANT] = "__constant ",
      [DC_ADDRESS_LOCAL] = "__local ",
  };
  char width[4] = "";
  if (type->vector_width > 1) snprintf(width, sizeof(width), "%u",
                                       type->vector_width);
  return dc__arena_printf(arena, "%s%s%s%s%s", kSpaces[type->address_space],
                          type->is_const ? "const " : "",
                          dc__scalar_name(type->scalar), width,
                          type->pointer_depth == 2  ? "**"
                          : type->pointer_depth == 1 ? "*"
                                                     : "");
}

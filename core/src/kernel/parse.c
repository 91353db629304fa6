// parse.c: the parser of the kernel language.
//
// Recursive descent over the preprocessed tokens. Declarations and
// statements become dc__stmt_t trees; expressions stay token ranges (see
// ast.h). Types are understood as far as kernels need: element types,
// vector types, one level of pointer, address spaces and qualifiers, and
// typedef names. What the language subset leaves out (structs, unions,
// enums, images, half) is rejected here with a message that says so.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "const_expr.h"

#define MAX_TYPEDEFS 256
#define MAX_DEPTH 200

typedef struct typedef_t {
  const dc__token_t* name;
  dc__type_t type;
} typedef_t;

typedef struct parser_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  const dc__token_t* toks;
  uint32_t count;
  uint32_t pos;
  typedef_t typedefs[MAX_TYPEDEFS];
  uint32_t typedef_count;
  int depth;
  bool failed;
} parser_t;

//===-- Tokens ----------------------------------------------------------===//

static const dc__token_t* cur(const parser_t* p) { return &p->toks[p->pos]; }

static bool at(const parser_t* p, const char* s) {
  return dc__tok_is(cur(p), s);
}

static bool at_eof(const parser_t* p) { return cur(p)->kind == DC_TOK_EOF; }

static void error_tok(parser_t* p, const dc__token_t* t, const char* fmt,
                      ...) DC_PRINTF_LIKE(3, 4);
static void error_tok(parser_t* p, const dc__token_t* t, const char* fmt,
                      ...) {
  if (!p->failed || p->diag->errors < 20) {
    char message[300];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    dc__diag_error(p->diag, t->line, t->col, "%s", message);
  }
  p->failed = true;
}

static const char* spell(parser_t* p, const dc__token_t* t) {
  if (t->kind == DC_TOK_EOF) return "end of input";
  return dc__arena_strndup(p->arena, t->text, t->length);
}

static bool accept(parser_t* p, const char* s) {
  if (!at(p, s)) return false;
  ++p->pos;
  return true;
}

static bool expect(parser_t* p, const char* s) {
  if (accept(p, s)) return true;
  error_tok(p, cur(p), "expected '%s' before '%s'", s, spell(p, cur(p)));
  return false;
}

// Skips to just past the matching closer of the opener at the cursor.
static bool skip_balanced(parser_t* p) {
  const dc__token_t* open = cur(p);
  int depth = 0;
  do {
    if (at_eof(p)) {
      error_tok(p, open, "unbalanced '%s'", spell(p, open));
      return false;
    }
    if (at(p, "(") || at(p, "[") || at(p, "{")) ++depth;
    if (at(p, ")") || at(p, "]") || at(p, "}")) --depth;
    ++p->pos;
  } while (depth > 0);
  return true;
}

// Reads an expression up to (not including) one of |stops| at depth 0.
static dc__range_t read_expr(parser_t* p, const char* stop1,
                             const char* stop2) {
  dc__range_t r = {p->pos, p->pos};
  while (!at_eof(p) && !at(p, stop1) && !(stop2 && at(p, stop2))) {
    if (at(p, "(") || at(p, "[") || at(p, "{")) {
      if (!skip_balanced(p)) break;
      continue;
    }
    if (at(p, ")") || at(p, "]") || at(p, "}") || at(p, ";")) break;
    ++p->pos;
  }
  r.end = p->pos;
  return r;
}

//===-- Types -----------------------------------------------------------===//

static const struct {
  const char* name;
  dc__scalar_t scalar;
} kScalars[] = {
    {"void", DC_SCALAR_VOID},     {"bool", DC_SCALAR_BOOL},
    {"char", DC_SCALAR_CHAR},     {"uchar", DC_SCALAR_UCHAR},
    {"short", DC_SCALAR_SHORT},   {"ushort", DC_SCALAR_USHORT},
    {"int", DC_SCALAR_INT},       {"uint", DC_SCALAR_UINT},
    {"long", DC_SCALAR_LONG},     {"ulong", DC_SCALAR_ULONG},
    {"float", DC_SCALAR_FLOAT},   {"double", DC_SCALAR_DOUBLE},
    {"size_t", DC_SCALAR_SIZE_T}, {"ptrdiff_t", DC_SCALAR_PTRDIFF_T},
    {"intptr_t", DC_SCALAR_PTRDIFF_T}, {"uintptr_t", DC_SCALAR_SIZE_T},
};

// Names the language reserves that the subset leaves out, with the reason
// given to users.
static const struct {
  const char* name;
  const char* why;
} kRejected[] = {
    {"struct", "struct types are not supported by the kernel language"},
    {"union", "union types are not supported by the kernel language"},
    {"enum", "enum types are not supported; use #define or const int"},
    {"half", "the half type is not supported; use float"},
    {"image1d_t", "images are not supported; use buffers"},
    {"image2d_t", "images are not supported; use buffers"},
    {"image3d_t", "images are not supported; use buffers"},
    {"sampler_t", "samplers are not supported; use buffers"},
    {"event_t", "events and async copies are not supported"},
    {"__read_only", "images are not supported; use buffers"},
    {"__write_only", "images are not supported; use buffers"},
    {"read_only", "images are not supported; use buffers"},
    {"write_only", "images are not supported; use buffers"},
};

// Parses "float4", "uint16" etc. into a scalar and a width.
static bool vector_type(const dc__token_t* t, dc__scalar_t* scalar,
                        uint8_t* width) {
  static const uint8_t kWidths[] = {2, 3, 4, 8, 16};
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    size_t n = strlen(kScalars[i].name);
    if (kScalars[i].scalar < DC_SCALAR_CHAR ||
        kScalars[i].scalar > DC_SCALAR_DOUBLE || t->length <= n ||
        memcmp(t->text, kScalars[i].name, n) != 0) {
      continue;
    }
    for (size_t w = 0; w < sizeof(kWidths); ++w) {
      char digits[4];
      int d = snprintf(digits, sizeof(digits), "%u", kWidths[w]);
      if (t->length == n + (size_t)d && memcmp(t->text + n, digits, d) == 0) {
        *scalar = kScalars[i].scalar;
        *width = kWidths[w];
        return true;
      }
    }
  }
  return false;
}

static const typedef_t* find_typedef(const parser_t* p, const dc__token_t* t) {
  for (uint32_t i = 0; i < p->typedef_count; ++i) {
    const dc__token_t* n = p->typedefs[i].name;
    if (n->length == t->length && memcmp(n->text, t->text, t->length) == 0) {
      return &p->typedefs[i];
    }
  }
  return NULL;
}

static bool is_type_name(const parser_t* p, const dc__token_t* t) {
  if (t->kind != DC_TOK_IDENT) return false;
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    if (dc__tok_is(t, kScalars[i].name)) return true;
  }
  dc__scalar_t s;
  uint8_t w;
  return vector_type(t, &s, &w) || find_typedef(p, t) != NULL ||
         dc__tok_is(t, "unsigned") || dc__tok_is(t, "signed");
}

static bool is_qualifier(const dc__token_t* t) {
  static const char* const kQualifiers[] = {
      "const",    "volatile",   "restrict",  "__global", "global",
      "__local",  "local",      "__constant", "constant", "__private",
      "private",  "static",     "inline",    "extern",   "__kernel",
      "kernel",   "__attribute__", "__inline", "__restrict", "typedef",
  };
  for (size_t i = 0; i < sizeof(kQualifiers) / sizeof(kQualifiers[0]); ++i) {
    if (dc__tok_is(t, kQualifiers[i])) return true;
  }
  return false;
}

// True when the cursor starts a declaration (rather than an expression).
static bool starts_declaration(const parser_t* p) {
  const dc__token_t* t = cur(p);
  if (is_qualifier(t) || is_type_name(p, t)) return true;
  for (size_t i = 0; i < sizeof(kRejected) / sizeof(kRejected[0]); ++i) {
    if (dc__tok_is(t, kRejected[i].name)) return true;
  }
  return false;
}

typedef struct specifiers_t {
  dc__type_t type;
  bool is_kernel;
  bool is_typedef;
  bool has_type;
  bool is_unsigned;
  bool is_signed;
  uint32_t reqd_group_size[3];
} specifiers_t;

static dc__scalar_t make_unsigned(dc__scalar_t s) {
  switch (s) {
    case DC_SCALAR_CHAR: return DC_SCALAR_UCHAR;
    case DC_SCALAR_SHORT: return DC_SCALAR_USHORT;
    case DC_SCALAR_INT: return DC_SCALAR_UINT;
    case DC_SCALAR_LONG: return DC_SCALAR_ULONG;
    default: return s;
  }
}

// Reads reqd_work_group_size's three arguments, integer constant
// expressions, from the '(' at the parser's position.
static void parse_required_size(parser_t* p, specifiers_t* spec) {
  const dc__token_t* open = cur(p);
  ++p->pos;
  for (int d = 0; d < 3; ++d) {
    dc__range_t r = read_expr(p, ",", ")");
    long long v = 0;
    if (!dc__eval_const_expr(&p->toks[r.begin], r.end - r.begin, false,
                             "reqd_work_group_size", open, p->diag, &v)) {
      p->failed = true;
      return;
    }
    if (v < 1 || v > 65536) {
      error_tok(p, &p->toks[r.begin],
                "reqd_work_group_size: dimension %d is %lld (must be 1 to "
                "65536)", d, v);
      return;
    }
    spec->reqd_group_size[d] = (uint32_t)v;
    if (!accept(p, d < 2 ? "," : ")")) {
      error_tok(p, cur(p), "reqd_work_group_size takes three sizes (x, y, "
                "z), found '%s'", spell(p, cur(p)));
      return;
    }
  }
}

// Reads __attribute__((...)); remembers reqd_work_group_size(x, y, z).
static void parse_attribute(parser_t* p, specifiers_t* spec) {
  ++p->pos;
  uint32_t start = p->pos;
  if (!at(p, "(") || !skip_balanced(p)) {
    error_tok(p, cur(p), "expected '((' after __attribute__");
    return;
  }
  uint32_t end = p->pos;
  for (uint32_t i = start; i + 1 < end; ++i) {
    if (!dc__tok_is(&p->toks[i], "reqd_work_group_size") ||
        !dc__tok_is(&p->toks[i + 1], "(")) {
      continue;
    }
    p->pos = i + 1;
    parse_required_size(p, spec);
    break;
  }
  p->pos = end;
}

static void apply_address_space(parser_t* p, specifiers_t* spec,
                                dc_address_space_t space) {
  if (spec->type.address_space != DC_ADDRESS_PRIVATE &&
      spec->type.address_space != space) {
    error_tok(p, cur(p), "conflicting address spaces");
  }
  spec->type.address_space = space;
}

// Reads declaration specifiers: qualifiers, address spaces and one type.
static bool parse_specifiers(parser_t* p, specifiers_t* spec) {
  memset(spec, 0, sizeof(*spec));
  spec->type.vector_width = 1;
  for (;;) {
    const dc__token_t* t = cur(p);
    for (size_t i = 0; i < sizeof(kRejected) / sizeof(kRejected[0]); ++i) {
      if (dc__tok_is(t, kRejected[i].name)) {
        error_tok(p, t, "%s", kRejected[i].why);
        return false;
      }
    }
    dc__scalar_t scalar;
    uint8_t width = 1;
    const typedef_t* td = NULL;
    if (dc__tok_is(t, "__global") || dc__tok_is(t, "global")) {
      apply_address_space(p, spec, DC_ADDRESS_GLOBAL);
    } else if (dc__tok_is(t, "__local") || dc__tok_is(t, "local")) {
      apply_address_space(p, spec, DC_ADDRESS_LOCAL);
    } else if (dc__tok_is(t, "__constant") || dc__tok_is(t, "constant")) {
      apply_address_space(p, spec, DC_ADDRESS_CONSTANT);
    } else if (dc__tok_is(t, "__private") || dc__tok_is(t, "private")) {
      apply_address_space(p, spec, DC_ADDRESS_PRIVATE);
    } else if (dc__tok_is(t, "const")) {
      spec->type.is_const = true;
    } else if (dc__tok_is(t, "volatile")) {
      spec->type.is_volatile = true;
    } else if (dc__tok_is(t, "restrict") || dc__tok_is(t, "__restrict")) {
      spec->type.is_restrict = true;
    } else if (dc__tok_is(t, "__kernel") || dc__tok_is(t, "kernel")) {
      spec->is_kernel = true;
    } else if (dc__tok_is(t, "typedef")) {
      spec->is_typedef = true;
    } else if (dc__tok_is(t, "static") || dc__tok_is(t, "inline") ||
               dc__tok_is(t, "__inline") || dc__tok_is(t, "extern")) {
      // storage and inlining hints: the back ends decide
    } else if (dc__tok_is(t, "__attribute__")) {
      parse_attribute(p, spec);
      continue;
    } else if (dc__tok_is(t, "unsigned") || dc__tok_is(t, "signed")) {
      if (dc__tok_is(t, "unsigned")) spec->is_unsigned = true;
      else spec->is_signed = true;
      if (!spec->has_type) {
        spec->type.scalar = DC_SCALAR_INT;
        spec->has_type = true;
      }
    } else if (t->kind == DC_TOK_IDENT && !spec->has_type &&
               (vector_type(t, &scalar, &width) ||
                (td = find_typedef(p, t)) != NULL ||
                is_type_name(p, t))) {
      if (td != NULL) {
        dc_address_space_t space = spec->type.address_space;
        bool is_const = spec->type.is_const;
        spec->type = td->type;
        if (space != DC_ADDRESS_PRIVATE) spec->type.address_space = space;
        spec->type.is_const |= is_const;
      } else if (width > 1) {
        spec->type.scalar = scalar;
        spec->type.vector_width = width;
      } else {
        for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
          if (dc__tok_is(t, kScalars[i].name)) {
            spec->type.scalar = kScalars[i].scalar;
          }
        }
      }
      spec->has_type = true;
    } else if (t->kind == DC_TOK_IDENT && spec->has_type &&
               spec->type.scalar == DC_SCALAR_INT &&
               (spec->is_unsigned || spec->is_signed) &&
               (dc__tok_is(t, "char") || dc__tok_is(t, "short") ||
                dc__tok_is(t, "int") || dc__tok_is(t, "long"))) {
      // "unsigned char", "signed int", ...
      for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
        if (dc__tok_is(t, kScalars[i].name)) {
          spec->type.scalar = kScalars[i].scalar;
        }
      }
    } else {
      break;
    }
    ++p->pos;
  }
  if (spec->is_unsigned) spec->type.scalar = make_unsigned(spec->type.scalar);
  if (!spec->has_type) {
    error_tok(p, cur(p), "expected a type before '%s'", spell(p, cur(p)));
    return false;
  }
  return true;
}

//===-- Declarations ----------------------------------------------------===//

// Reads one declarator: pointer stars (with their qualifiers), the name,
// array suffixes. Updates |type|'s pointer depth.
static bool parse_declarator(parser_t* p, dc__type_t* type,
                             dc__declarator_t* d) {
  d->declarator.begin = p->pos;
  while (accept(p, "*")) {
    ++type->pointer_depth;
    while (at(p, "const") || at(p, "restrict") || at(p, "volatile") ||
           at(p, "__restrict")) {
      if (at(p, "restrict") || at(p, "__restrict")) type->is_restrict = true;
      ++p->pos;
    }
  }
  if (cur(p)->kind != DC_TOK_IDENT) {
    error_tok(p, cur(p), "expected a name before '%s'", spell(p, cur(p)));
    return false;
  }
  d->name = p->pos++;
  while (at(p, "[")) {
    if (!skip_balanced(p)) return false;
  }
  d->declarator.end = p->pos;
  d->initializer = (dc__range_t){p->pos, p->pos};
  return true;
}

static void check_no_barrier(parser_t* p, dc__range_t r);

// Reads the declarators of a declaration after its specifiers, through
// the closing ';'.
static dc__stmt_t* parse_declaration_rest(parser_t* p, uint32_t first,
                                          const specifiers_t* spec) {
  dc__stmt_t* s = dc__arena_alloc(p->arena, sizeof(*s));
  dc__declarator_t list[64];
  uint32_t n = 0;
  if (s == NULL) return NULL;
  memset(s, 0, sizeof(*s));
  s->kind = DC_STMT_DECL;
  s->token = first;
  s->specifiers = (dc__range_t){first, p->pos};
  s->address_space = spec->type.address_space;
  do {
    dc__type_t type = spec->type;
    if (n == 64) {
      error_tok(p, cur(p), "too many declarators in one declaration");
      return NULL;
    }
    if (!parse_declarator(p, &type, &list[n])) return NULL;
    if (accept(p, "=")) {
      list[n].initializer = read_expr(p, ",", ";");
      if (list[n].initializer.begin == list[n].initializer.end) {
        error_tok(p, cur(p), "expected an initializer before '%s'",
                  spell(p, cur(p)));
        return NULL;
      }
      check_no_barrier(p, list[n].initializer);
    }
    ++n;
  } while (accept(p, ","));
  if (!expect(p, ";")) return NULL;
  s->declarators = dc__arena_alloc(p->arena, n * sizeof(*list));
  if (s->declarators == NULL) return NULL;
  memcpy(s->declarators, list, n * sizeof(*list));
  s->declarator_count = n;
  return s;
}

static void add_typedefs(parser_t* p, const dc__stmt_t* decl,
                         const specifiers_t* spec) {
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    if (p->typedef_count == MAX_TYPEDEFS) {
      error_tok(p, &p->toks[decl->token], "too many typedefs");
      return;
    }
    dc__type_t type = spec->type;
    for (uint32_t k = decl->declarators[i].declarator.begin;
         k < decl->declarators[i].name; ++k) {
      if (dc__tok_is(&p->toks[k], "*")) ++type.pointer_depth;
    }
    p->typedefs[p->typedef_count++] =
        (typedef_t){&p->toks[decl->declarators[i].name], type};
  }
}

//===-- Statements ------------------------------------------------------===//

static dc__stmt_t* parse_statement(parser_t* p);

static dc__stmt_t* new_stmt(parser_t* p, dc__stmt_kind_t kind) {
  dc__stmt_t* s = dc__arena_alloc(p->arena, sizeof(*s));
  if (s == NULL) return NULL;
  memset(s, 0, sizeof(*s));
  s->kind = kind;
  s->token = p->pos;
  return s;
}

static dc__stmt_t* parse_block(parser_t* p) {
  dc__stmt_t* s = new_stmt(p, DC_STMT_BLOCK);
  if (s == NULL || !expect(p, "{")) return NULL;
  dc__stmt_t* items[1024];
  uint32_t n = 0;
  dc__stmt_t** chunks = NULL;  // overflow beyond the local array
  uint32_t chunk_count = 0;
  while (!at(p, "}") && !at_eof(p)) {
    dc__stmt_t* child = parse_statement(p);
    if (child == NULL) return NULL;
    if (n == 1024) {  // rare: spill into the arena and keep going
      dc__stmt_t** all =
          dc__arena_alloc(p->arena, (chunk_count + n + 1) * sizeof(*all));
      if (all == NULL) return NULL;
      if (chunk_count) memcpy(all, chunks, chunk_count * sizeof(*all));
      memcpy(all + chunk_count, items, n * sizeof(*all));
      chunks = all;
      chunk_count += n;
      n = 0;
    }
    items[n++] = child;
  }
  if (!expect(p, "}")) return NULL;
  s->child_count = chunk_count + n;
  s->children = dc__arena_alloc(p->arena, (s->child_count + 1) * sizeof(*items));
  if (s->children == NULL) return NULL;
  if (chunk_count) memcpy(s->children, chunks, chunk_count * sizeof(*items));
  memcpy(s->children + chunk_count, items, n * sizeof(*items));
  return s;
}

// Reads "( expr )" and returns the range inside the parentheses.
static bool parse_condition(parser_t* p, dc__range_t* out) {
  if (!expect(p, "(")) return false;
  *out = read_expr(p, ")", NULL);
  if (out->begin == out->end) {
    error_tok(p, cur(p), "expected an expression before '%s'",
              spell(p, cur(p)));
    return false;
  }
  return expect(p, ")");
}

// True if |t| names a synchronisation that must be a statement of its own.
static bool is_sync_name(const dc__token_t* t) {
  return t->kind == DC_TOK_IDENT &&
         (dc__tok_is(t, "barrier") || dc__tok_is(t, "work_group_barrier") ||
          dc__tok_is(t, "dc_grid_sync"));
}

// True if the range is a call of barrier(), work_group_barrier() or
// dc_grid_sync().
static bool is_barrier_call(const parser_t* p, dc__range_t r) {
  if (r.end - r.begin < 3) return false;
  return is_sync_name(&p->toks[r.begin]) &&
         dc__tok_is(&p->toks[r.begin + 1], "(") &&
         dc__tok_is(&p->toks[r.end - 1], ")");
}

// A barrier used inside a larger expression cannot be scheduled.
static void check_no_barrier(parser_t* p, dc__range_t r) {
  for (uint32_t i = r.begin; i < r.end; ++i) {
    const dc__token_t* t = &p->toks[i];
    if (is_sync_name(t)) {
      bool grid = dc__tok_is(t, "dc_grid_sync");
      error_tok(p, t, "%s must be called as a statement of its own: '%s'",
                spell(p, t),
                grid ? "dc_grid_sync();" : "barrier(CLK_LOCAL_MEM_FENCE);");
    }
  }
}

static dc__stmt_t* parse_expression_statement(parser_t* p) {
  dc__stmt_t* s = new_stmt(p, DC_STMT_EXPR);
  if (s == NULL) return NULL;
  s->expr = read_expr(p, ";", NULL);
  if (s->expr.begin == s->expr.end) {
    error_tok(p, cur(p), "expected a statement before '%s'", spell(p, cur(p)));
    return NULL;
  }
  if (!expect(p, ";")) return NULL;
  if (is_barrier_call(p, s->expr)) {
    bool grid = dc__tok_is(&p->toks[s->expr.begin], "dc_grid_sync");
    s->kind = grid ? DC_STMT_GRID_SYNC : DC_STMT_BARRIER;
    s->has_barrier = true;
    if (grid && s->expr.end - s->expr.begin != 3) {
      error_tok(p, &p->toks[s->expr.begin + 2],
                "dc_grid_sync takes no arguments: 'dc_grid_sync();'");
    }
  } else {
    check_no_barrier(p, s->expr);
  }
  return s;
}

static dc__stmt_t* parse_for(parser_t* p) {
  dc__stmt_t* s = new_stmt(p, DC_STMT_FOR);
  ++p->pos;
  if (s == NULL || !expect(p, "(")) return NULL;
  if (starts_declaration(p)) {
    uint32_t first = p->pos;
    specifiers_t spec;
    if (!parse_specifiers(p, &spec)) return NULL;
    s->init = parse_declaration_rest(p, first, &spec);
    if (s->init == NULL) return NULL;
  } else if (!accept(p, ";")) {
    s->init = parse_expression_statement(p);
    if (s->init == NULL) return NULL;
  }
  s->expr = read_expr(p, ";", NULL);
  if (!expect(p, ";")) return NULL;
  s->step = read_expr(p, ")", NULL);
  if (!expect(p, ")")) return NULL;
  check_no_barrier(p, s->expr);
  check_no_barrier(p, s->step);
  s->body = parse_statement(p);
  return s->body ? s : NULL;
}

static dc__stmt_t* parse_keyword_statement(parser_t* p) {
  dc__stmt_t* s = NULL;
  if (at(p, "if") || at(p, "while") || at(p, "switch")) {
    s = new_stmt(p, at(p, "if") ? DC_STMT_IF
                    : at(p, "while") ? DC_STMT_WHILE : DC_STMT_SWITCH);
    ++p->pos;
    if (s == NULL || !parse_condition(p, &s->expr)) return NULL;
    check_no_barrier(p, s->expr);
    if ((s->body = parse_statement(p)) == NULL) return NULL;
    if (s->kind == DC_STMT_IF && accept(p, "else")) {
      if ((s->else_body = parse_statement(p)) == NULL) return NULL;
    }
    return s;
  }
  if (at(p, "do")) {
    s = new_stmt(p, DC_STMT_DO);
    ++p->pos;
    if (s == NULL || (s->body = parse_statement(p)) == NULL) return NULL;
    if (!expect(p, "while") || !parse_condition(p, &s->expr)) return NULL;
    check_no_barrier(p, s->expr);
    return expect(p, ";") ? s : NULL;
  }
  if (at(p, "for")) return parse_for(p);
  if (at(p, "return")) {
    s = new_stmt(p, DC_STMT_RETURN);
    ++p->pos;
    if (s == NULL) return NULL;
    s->expr = read_expr(p, ";", NULL);
    check_no_barrier(p, s->expr);
    return expect(p, ";") ? s : NULL;
  }
  if (at(p, "break") || at(p, "continue")) {
    s = new_stmt(p, at(p, "break") ? DC_STMT_BREAK : DC_STMT_CONTINUE);
    ++p->pos;
    return s && expect(p, ";") ? s : NULL;
  }
  if (at(p, "goto")) {
    s = new_stmt(p, DC_STMT_GOTO);
    ++p->pos;
    if (s == NULL || cur(p)->kind != DC_TOK_IDENT) {
      error_tok(p, cur(p), "expected a label after goto");
      return NULL;
    }
    s->expr = (dc__range_t){p->pos, p->pos + 1};
    ++p->pos;
    return expect(p, ";") ? s : NULL;
  }
  // case X: / default:
  s = new_stmt(p, DC_STMT_CASE);
  if (s == NULL) return NULL;
  if (accept(p, "default")) {
    s->expr = (dc__range_t){p->pos, p->pos};
  } else {
    ++p->pos;
    s->expr = read_expr(p, ":", NULL);
  }
  return expect(p, ":") ? s : NULL;
}

static bool is_keyword_statement(const parser_t* p) {
  static const char* const kKeywords[] = {
      "if", "while", "switch", "do", "for", "return", "break", "continue",
      "goto", "case", "default",
  };
  for (size_t i = 0; i < sizeof(kKeywords) / sizeof(kKeywords[0]); ++i) {
    if (at(p, kKeywords[i])) return true;
  }
  return false;
}

static dc__stmt_t* parse_statement_inner(parser_t* p) {
  if (at(p, "{")) return parse_block(p);
  if (at(p, ";")) {
    dc__stmt_t* s = new_stmt(p, DC_STMT_EMPTY);
    ++p->pos;
    return s;
  }
  if (is_keyword_statement(p)) return parse_keyword_statement(p);
  if (cur(p)->kind == DC_TOK_IDENT && dc__tok_is(&p->toks[p->pos + 1], ":")) {
    dc__stmt_t* s = new_stmt(p, DC_STMT_LABEL);
    if (s == NULL) return NULL;
    s->expr = (dc__range_t){p->pos, p->pos + 1};
    p->pos += 2;
    s->body = parse_statement(p);
    return s->body ? s : NULL;
  }
  if (starts_declaration(p)) {
    uint32_t first = p->pos;
    specifiers_t spec;
    if (!parse_specifiers(p, &spec)) return NULL;
    dc__stmt_t* s = parse_declaration_rest(p, first, &spec);
    if (s && spec.is_typedef) add_typedefs(p, s, &spec);
    return s;
  }
  return parse_expression_statement(p);
}

// Marks which statements reach a barrier (or a grid sync), bottom up.
static bool mark_barriers(dc__stmt_t* s) {
  if (s == NULL) return false;
  bool found = s->kind == DC_STMT_BARRIER || s->kind == DC_STMT_GRID_SYNC;
  for (uint32_t i = 0; i < s->child_count; ++i) {
    found |= mark_barriers(s->children[i]);
  }
  found |= mark_barriers(s->init);
  found |= mark_barriers(s->body);
  found |= mark_barriers(s->else_body);
  s->has_barrier = found;
  return found;
}

// True if |s| holds a dc_grid_sync() statement.
static bool has_grid_sync(const dc__stmt_t* s) {
  if (s == NULL || !s->has_barrier) return false;
  if (s->kind == DC_STMT_GRID_SYNC) return true;
  for (uint32_t i = 0; i < s->child_count; ++i) {
    if (has_grid_sync(s->children[i])) return true;
  }
  return has_grid_sync(s->init) || has_grid_sync(s->body) ||
         has_grid_sync(s->else_body);
}

static dc__stmt_t* parse_statement(parser_t* p) {
  if (++p->depth > MAX_DEPTH) {
    error_tok(p, cur(p), "statements nested too deeply");
    return NULL;
  }
  dc__stmt_t* s = parse_statement_inner(p);
  --p->depth;
  return s;
}

//===-- Functions and the program ---------------------------------------===//

typedef struct items_t {
  dc__function_t functions[512];
  uint32_t function_count;
  dc__global_t globals[512];
  uint32_t global_count;
  int32_t order[1024];
  uint32_t order_count;
} items_t;

static bool parse_params(parser_t* p, dc__function_t* fn) {
  dc__param_t params[128];
  uint32_t n = 0;
  if (!expect(p, "(")) return false;
  if (at(p, "void") && dc__tok_is(&p->toks[p->pos + 1], ")")) ++p->pos;
  while (!at(p, ")") && !p->failed) {
    if (n == 128) {
      error_tok(p, cur(p), "too many parameters");
      return false;
    }
    uint32_t first = p->pos;
    specifiers_t spec;
    dc__declarator_t d;
    if (!parse_specifiers(p, &spec)) return false;
    dc__type_t type = spec.type;
    if (!parse_declarator(p, &type, &d)) return false;
    params[n++] = (dc__param_t){d.name, {first, p->pos}, type};
    if (!at(p, ")") && !expect(p, ",")) return false;
  }
  if (!expect(p, ")")) return false;
  fn->params = dc__arena_alloc(p->arena, (n + 1) * sizeof(*params));
  if (fn->params == NULL) return false;
  memcpy(fn->params, params, n * sizeof(*params));
  fn->param_count = n;
  return true;
}

// Enforces OpenCL C's rules for kernel signatures, so that every argument
// can be bound from the host.
static void check_kernel_signature(parser_t* p, const dc__function_t* fn,
                                   const specifiers_t* spec) {
  if (spec->type.scalar != DC_SCALAR_VOID || spec->type.pointer_depth) {
    error_tok(p, &p->toks[fn->name], "kernel '%s' must return void",
              spell(p, &p->toks[fn->name]));
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__param_t* a = &fn->params[i];
    const dc__token_t* at_name = &p->toks[a->name];
    const char* name = spell(p, at_name);
    if (a->type.pointer_depth > 1) {
      error_tok(p, at_name,
                "kernel parameter '%s' is a pointer to a pointer, which a "
                "kernel cannot receive",
                name);
    } else if (a->type.pointer_depth == 1 &&
               a->type.address_space == DC_ADDRESS_PRIVATE) {
      error_tok(p, at_name,
                "kernel pointer parameter '%s' must be __global, __constant "
                "or __local",
                name);
    } else if (a->type.pointer_depth == 0 &&
               a->type.address_space != DC_ADDRESS_PRIVATE) {
      error_tok(p, at_name,
                "kernel parameter '%s' is not a pointer and cannot have an "
                "address space",
                name);
    } else if (a->type.pointer_depth == 0 &&
               (a->type.scalar == DC_SCALAR_BOOL ||
                a->type.scalar == DC_SCALAR_SIZE_T ||
                a->type.scalar == DC_SCALAR_PTRDIFF_T ||
                a->type.scalar == DC_SCALAR_VOID)) {
      error_tok(p, at_name,
                "kernel parameter '%s' cannot have type bool, size_t, "
                "ptrdiff_t, intptr_t, uintptr_t or void (OpenCL C 6.9)",
                name);
    }
  }
}

static bool parse_function(parser_t* p, items_t* items, uint32_t first,
                           const specifiers_t* spec, uint32_t name) {
  if (items->function_count == 512 || items->order_count == 1024) {
    error_tok(p, cur(p), "too many functions in one program");
    return false;
  }
  dc__function_t* fn = &items->functions[items->function_count];
  memset(fn, 0, sizeof(*fn));
  fn->name = name;
  fn->is_kernel = spec->is_kernel;
  fn->return_type = (dc__range_t){first, name};
  memcpy(fn->required_group_size, spec->reqd_group_size,
         sizeof(fn->required_group_size));
  if (!parse_params(p, fn)) return false;
  fn->head = (dc__range_t){first, p->pos};
  if (fn->is_kernel) check_kernel_signature(p, fn, spec);
  if (!accept(p, ";")) {
    if (!at(p, "{")) {
      error_tok(p, cur(p), "expected '{' or ';' after the parameters of '%s'",
                spell(p, &p->toks[name]));
      return false;
    }
    for (uint32_t i = 0; i < items->function_count; ++i) {
      const dc__function_t* other = &items->functions[i];
      const dc__token_t* a = &p->toks[other->name];
      const dc__token_t* b = &p->toks[name];
      if (other->body != NULL && a->length == b->length &&
          memcmp(a->text, b->text, a->length) == 0) {
        error_tok(p, b, "redefinition of '%s' (first defined at line %u)",
                  spell(p, b), a->line);
        return false;
      }
    }
    fn->body = parse_block(p);
    if (fn->body == NULL) return false;
    fn->body_end = p->pos;
    fn->calls_barrier = mark_barriers(fn->body);
    fn->calls_grid_sync = has_grid_sync(fn->body);
  }
  items->order[items->order_count++] = (int32_t)items->function_count++;
  return true;
}

static bool add_global(parser_t* p, items_t* items, uint32_t first,
                       bool is_typedef) {
  if (items->global_count == 512 || items->order_count == 1024) {
    error_tok(p, cur(p), "too many declarations in one program");
    return false;
  }
  items->globals[items->global_count] =
      (dc__global_t){{first, p->pos}, is_typedef};
  items->order[items->order_count++] = ~(int32_t)items->global_count++;
  return true;
}

static bool parse_top_level(parser_t* p, items_t* items) {
  uint32_t first = p->pos;
  specifiers_t spec;
  if (!parse_specifiers(p, &spec)) return false;
  if (spec.is_typedef) {
    dc__stmt_t* decl = parse_declaration_rest(p, first, &spec);
    if (decl == NULL) return false;
    add_typedefs(p, decl, &spec);
    return add_global(p, items, first, true);
  }
  uint32_t name = p->pos;
  while (at(p, "*")) ++name, ++p->pos;
  if (cur(p)->kind == DC_TOK_IDENT && dc__tok_is(&p->toks[p->pos + 1], "(")) {
    ++p->pos;
    return parse_function(p, items, first, &spec, name);
  }
  p->pos = name;
  if (spec.type.address_space != DC_ADDRESS_CONSTANT) {
    error_tok(p, &p->toks[first],
              "a variable outside functions must be __constant");
    return false;
  }
  dc__stmt_t* decl = parse_declaration_rest(p, first, &spec);
  return decl != NULL && add_global(p, items, first, false);
}

// A function that calls one reaching dc_grid_sync() reaches it too, so the
// reflection of a kernel says so whichever helper holds the call (every
// back end needs it to know the dispatch is cooperative).
static void propagate_grid_sync(const parser_t* p, items_t* items) {
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < items->function_count; ++i) {
      dc__function_t* fn = &items->functions[i];
      if (fn->body == NULL || fn->calls_grid_sync) continue;
      for (uint32_t k = fn->body->token; k + 1 < fn->body_end; ++k) {
        const dc__token_t* t = &p->toks[k];
        if (t->kind != DC_TOK_IDENT || !dc__tok_is(&p->toks[k + 1], "(")) {
          continue;
        }
        for (uint32_t h = 0; h < items->function_count; ++h) {
          const dc__function_t* callee = &items->functions[h];
          const dc__token_t* n = &p->toks[callee->name];
          if (callee->calls_grid_sync && n->length == t->length &&
              memcmp(n->text, t->text, t->length) == 0) {
            fn->calls_grid_sync = true;
            changed = true;
            break;
          }
        }
        if (fn->calls_grid_sync) break;
      }
    }
  }
}

dc_status_t dc__parse(dc__arena_t* arena, const dc__token_list_t* tokens,
                      dc__diag_t* diag, dc__program_ast_t* out) {
  memset(out, 0, sizeof(*out));
  parser_t* p = dc__arena_alloc(arena, sizeof(*p));
  items_t* items = dc__arena_alloc(arena, sizeof(*items));
  if (p == NULL || items == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(p, 0, sizeof(*p));
  memset(items, 0, sizeof(*items));
  p->arena = arena;
  p->diag = diag;
  p->toks = tokens->items;
  p->count = (uint32_t)tokens->count;
  while (!at_eof(p) && !p->failed) {
    if (accept(p, ";")) continue;
    parse_top_level(p, items);
  }
  if (!p->failed) propagate_grid_sync(p, items);
  out->tokens = tokens->items;
  out->token_count = (uint32_t)tokens->count;
  out->functions = items->functions;
  out->function_count = items->function_count;
  out->globals = items->globals;
  out->global_count = items->global_count;
  out->order = items->order;
  out->order_count = items->order_count;
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return p->failed || diag->errors ? DC_ERR_COMPILE : DC_OK;
}

const char* dc__type_name(dc__arena_t* arena, const dc__type_t* type) {
  static const char* const kNames[] = {
      [DC_SCALAR_VOID] = "void",     [DC_SCALAR_BOOL] = "bool",
      [DC_SCALAR_CHAR] = "char",     [DC_SCALAR_UCHAR] = "uchar",
      [DC_SCALAR_SHORT] = "short",   [DC_SCALAR_USHORT] = "ushort",
      [DC_SCALAR_INT] = "int",       [DC_SCALAR_UINT] = "uint",
      [DC_SCALAR_LONG] = "long",     [DC_SCALAR_ULONG] = "ulong",
      [DC_SCALAR_FLOAT] = "float",   [DC_SCALAR_DOUBLE] = "double",
      [DC_SCALAR_SIZE_T] = "size_t", [DC_SCALAR_PTRDIFF_T] = "ptrdiff_t",
  };
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
                          kNames[type->scalar], width,
                          type->pointer_depth == 2  ? "**"
                          : type->pointer_depth == 1 ? "*"
                                                     : "");
}

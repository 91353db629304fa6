// cpu_codegen.c: the CPU back end's translation of kernels into C.
//
// The emitter walks the statement trees and writes C, rewriting each
// expression token by token: address-space keywords disappear, `char`
// becomes signed, vector literals and swizzles become prelude macros,
// calls to helper functions gain the work-item argument, and names resolve
// through a scope stack to what they became (a per-work-item array slot
// for a private variable that lives across a barrier, a pointer into the
// group's local memory for a __local variable). A #line directive before
// every source line keeps the C compiler's messages in the user's lines.
//
// Kernels with barriers are split into regions (see dc__exec_mode_t). The
// control flow around a barrier must be the same for every work-item of a
// group (OpenCL requires it), so it runs once per group, with conditions
// read from work-item 0, and everything between barriers runs as a loop
// over the work-items.
// SPDX-License-Identifier: MIT
#include "cpu_codegen.h"

#include <stdio.h>
#include <string.h>

#define MAX_SYMBOLS 4096
#define MAX_SCOPES 256

typedef enum sym_kind_e {
  SYM_PLAIN,     // an ordinary C variable: emitted as written
  SYM_HOISTED,   // private, lives across a barrier: dc_h_N[_w]
  SYM_LOCALMEM,  // __local variable of a kernel body: (*dc_l_N)
  SYM_REMAT,     // recomputed in every region (see rematerializable())
  SYM_BUFFER,    // a kernel's __global/__constant pointer parameter
} sym_kind_t;

typedef struct sym_t {
  const dc__token_t* name;
  sym_kind_t kind;
  uint32_t id;  // hoisted or localmem index; parameter index for buffers
  const dc__stmt_t* decl;  // SYM_REMAT: the declaration to repeat
  uint32_t declarator;
  bool is_param;           // a kernel parameter
} sym_t;

// A declaration that gets storage outside the normal C scopes.
typedef struct storage_t {
  const dc__stmt_t* decl;
  uint32_t declarator;
} storage_t;

typedef struct emitter_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  const dc__program_ast_t* ast;
  const dc__token_t* toks;
  const dc__codegen_options_t* options;
  dc__strbuf_t* out;
  const dc__function_t* fn;  // function being emitted
  bool in_kernel;
  dc__exec_mode_t mode;
  sym_t syms[MAX_SYMBOLS];
  uint32_t sym_count;
  uint32_t scopes[MAX_SCOPES];
  uint32_t scope_depth;
  storage_t hoisted[MAX_SYMBOLS];
  uint32_t hoisted_count;
  storage_t localmem[256];
  uint32_t localmem_count;
  uint32_t region;          // number of the open region, 0 if none
  uint32_t region_counter;
  bool uses_done;           // a return inside a region: per-item flags
  bool calls_helpers;       // helpers read the work-item from _wi
  uint32_t promoted[MAX_SYMBOLS];  // hoisted ids held in registers in the
  uint32_t promoted_count;         // open region (dc_r_N)
  uint32_t loop_depth;      // user loops and switches around the code
  uint32_t line;            // line of the last #line emitted
  bool failed;
  bool static_init;         // emitting a program-scope initialiser
} emitter_t;

static void fail(emitter_t* e, const dc__token_t* t, const char* message) {
  e->failed = true;
  dc__diag_error(e->diag, t->line, t->col, "%s", message);
}

//===-- Symbols ---------------------------------------------------------===//

static void push_scope(emitter_t* e) {
  if (e->scope_depth < MAX_SCOPES) e->scopes[e->scope_depth++] = e->sym_count;
}

static void pop_scope(emitter_t* e) {
  if (e->scope_depth > 0) e->sym_count = e->scopes[--e->scope_depth];
}

static void declare(emitter_t* e, const dc__token_t* name, sym_kind_t kind,
                    uint32_t id) {
  if (e->sym_count == MAX_SYMBOLS) {
    fail(e, name, "too many variables in one function");
    return;
  }
  e->syms[e->sym_count++] = (sym_t){name, kind, id, NULL, 0, false};
}

static const sym_t* lookup(const emitter_t* e, const dc__token_t* t) {
  for (uint32_t i = e->sym_count; i-- > 0;) {
    const dc__token_t* n = e->syms[i].name;
    if (n->length == t->length && memcmp(n->text, t->text, t->length) == 0) {
      return &e->syms[i];
    }
  }
  return NULL;
}

static const dc__function_t* find_function(const emitter_t* e,
                                           const dc__token_t* t) {
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__token_t* n = &e->toks[e->ast->functions[i].name];
    if (n->length == t->length && memcmp(n->text, t->text, t->length) == 0) {
      return &e->ast->functions[i];
    }
  }
  return NULL;
}

//===-- Output ----------------------------------------------------------===//

static void puts_out(emitter_t* e, const char* s) {
  dc__strbuf_puts(e->out, s);
}

// Moves the output to |line| of the user's source with a #line directive.
static void at_line(emitter_t* e, uint32_t line) {
  if (line == e->line || line == 0) return;
  dc__strbuf_printf(e->out, "\n#line %u \"%s\"\n", line, e->options->file);
  e->line = line;
}

static void emit_text(emitter_t* e, const dc__token_t* t, const char* text,
                      size_t length) {
  at_line(e, t->line);
  dc__strbuf_append(e->out, " ", 1);
  dc__strbuf_append(e->out, text, length);
}

static void emit_token(emitter_t* e, const dc__token_t* t) {
  emit_text(e, t, t->text, t->length);
}

// The C spelling of a language keyword, or NULL to drop it, or |t| itself.
static const char* keyword_spelling(const dc__token_t* t, bool* drop) {
  static const char* const kDropped[] = {
      "__global", "global", "__local", "local", "__private", "private",
      "__kernel", "kernel",
  };
  *drop = false;
  if (t->kind != DC_TOK_IDENT) return NULL;
  for (size_t i = 0; i < sizeof(kDropped) / sizeof(kDropped[0]); ++i) {
    if (dc__tok_is(t, kDropped[i])) {
      *drop = true;
      return NULL;
    }
  }
  if (dc__tok_is(t, "__constant") || dc__tok_is(t, "constant")) return "const";
  if (dc__tok_is(t, "char")) return "dc_char";
  return NULL;
}

//===-- Expressions -----------------------------------------------------===//

static void emit_range(emitter_t* e, uint32_t begin, uint32_t end);

// Index of the token closing the group opened at |i|.
static uint32_t matching(const emitter_t* e, uint32_t i, uint32_t end) {
  int depth = 0;
  for (uint32_t k = i; k < end; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) {
      ++depth;
    } else if (dc__tok_is(t, ")") || dc__tok_is(t, "]") ||
               dc__tok_is(t, "}")) {
      if (--depth == 0) return k;
    }
  }
  return end;
}

// Recognises vector type names: "float4" gives width 4. 0 if not one.
static unsigned vector_width_of(const dc__token_t* t) {
  static const char* const kBases[] = {"char",  "uchar", "short", "ushort",
                                       "int",   "uint",  "long",  "ulong",
                                       "float", "double"};
  if (t->kind != DC_TOK_IDENT) return 0;
  for (size_t b = 0; b < sizeof(kBases) / sizeof(kBases[0]); ++b) {
    size_t n = strlen(kBases[b]);
    if (t->length <= n || memcmp(t->text, kBases[b], n) != 0) continue;
    const char* digits = t->text + n;
    size_t dn = t->length - n;
    if (dn == 1 && strchr("234", digits[0]) && digits[0] != '\0') {
      return (unsigned)(digits[0] - '0');
    }
    if (dn == 1 && digits[0] == '8') return 8;
    if (dn == 2 && digits[0] == '1' && digits[1] == '6') return 16;
  }
  return 0;
}

// Lane index of a swizzle letter, or -1.
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

// Parses a component selector (x, xy, s01, lo, even, ...) into lanes.
// Returns the lane count, 0 if |t| is not a selector. lo/hi/even/odd need
// the vector width, which is unknown here; they are written as prelude
// macros instead (count -1).
static int parse_swizzle(const dc__token_t* t, int lanes[16]) {
  if (dc__tok_is(t, "lo") || dc__tok_is(t, "hi") || dc__tok_is(t, "even") ||
      dc__tok_is(t, "odd")) {
    return -1;
  }
  bool numeric = t->length >= 2 && (t->text[0] == 's' || t->text[0] == 'S');
  uint32_t start = numeric ? 1 : 0;
  int n = 0;
  for (uint32_t i = start; i < t->length; ++i) {
    if (n == 16) return 0;
    int lane = lane_of(t->text[i], numeric);
    if (lane < 0) return 0;
    lanes[n++] = lane;
  }
  return n;
}

static bool is_assignment(const dc__token_t* t) {
  static const char* const kOps[] = {"=",  "+=", "-=", "*=",  "/=", "%=",
                                     "&=", "|=", "^=", "<<=", ">>=", "++",
                                     "--"};
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    if (dc__tok_is(t, kOps[i])) return true;
  }
  return false;
}

// Writes .x as [0] and .xy as DC_SWIZZLE(operand, 0, 1), inserting the
// macro name before the operand that starts at |operand_start|.
static uint32_t emit_swizzle(emitter_t* e, uint32_t i, uint32_t end,
                             size_t operand_start) {
  const dc__token_t* sel = &e->toks[i + 1];
  int lanes[16];
  int n = parse_swizzle(sel, lanes);
  bool assigned = i + 2 < end && is_assignment(&e->toks[i + 2]);
  if (n == 0) {
    fail(e, sel,
         "not a vector component selector (struct members do not exist in "
         "the kernel language)");
    return i + 2;
  }
  if (n == 1) {
    char text[16];
    int len = snprintf(text, sizeof(text), "[%d]", lanes[0]);
    emit_text(e, sel, text, (size_t)len);
    return i + 2;
  }
  if (assigned) {
    fail(e, sel,
         "assigning to several vector components at once is not supported; "
         "assign them one by one");
    return i + 2;
  }
  if (n < 0) {
    char macro[32];
    snprintf(macro, sizeof(macro), " DC_%.*s(", (int)sel->length, sel->text);
    for (char* c = macro + 4; *c && *c != '('; ++c) *c = (char)(*c & ~0x20);
    dc__strbuf_insert(e->out, operand_start, macro);
    puts_out(e, ")");
    return i + 2;
  }
  dc__strbuf_insert(e->out, operand_start, " DC_SWIZZLE(");
  for (int k = 0; k < n; ++k) dc__strbuf_printf(e->out, ", %d", lanes[k]);
  puts_out(e, ")");
  return i + 2;
}

// (float4)(a, b, c, d) and (float4)(x): returns the index after it, or 0
// if |i| does not start a vector literal.
static uint32_t emit_vector_literal(emitter_t* e, uint32_t i, uint32_t end) {
  if (i + 3 >= end) return 0;
  const dc__token_t* type = &e->toks[i + 1];
  unsigned width = vector_width_of(type);
  if (width == 0 || !dc__tok_is(&e->toks[i + 2], ")") ||
      !dc__tok_is(&e->toks[i + 3], "(")) {
    return 0;
  }
  uint32_t close = matching(e, i + 3, end);
  if (e->static_init) {
    // A compound literal is no constant for gcc: a program-scope vector
    // gets a plain initialiser list, its one value repeated for a splat.
    bool splat = true;
    for (uint32_t k = i + 4, d = 0; k < close; ++k) {
      const dc__token_t* t = &e->toks[k];
      if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) ++d;
      if (dc__tok_is(t, ")") || dc__tok_is(t, "]") || dc__tok_is(t, "}")) --d;
      if (d == 0 && dc__tok_is(t, ",")) splat = false;
    }
    emit_text(e, &e->toks[i], "{", 1);
    for (unsigned w = 0; w < (splat ? width : 1); ++w) {
      if (w > 0) puts_out(e, ",");
      emit_range(e, i + 4, close);
    }
    puts_out(e, "}");
    return close + 1;
  }
  int commas = 0, depth = 0;
  for (uint32_t k = i + 4; k < close; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) ++depth;
    if (dc__tok_is(t, ")") || dc__tok_is(t, "]") || dc__tok_is(t, "}")) --depth;
    if (depth == 0 && dc__tok_is(t, ",")) ++commas;
  }
  char head[64];
  snprintf(head, sizeof(head), "%s(%.*s, ", commas == 0 ? "DC_SPLAT" : "DC_VEC",
           (int)type->length, type->text);
  emit_text(e, &e->toks[i], head, strlen(head));
  emit_range(e, i + 4, close);
  puts_out(e, ")");
  return close + 1;
}

// name[index] on a buffer argument, checked when bounds checking is on.
static uint32_t emit_checked_index(emitter_t* e, const sym_t* s, uint32_t i,
                                   uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  uint32_t close = matching(e, i + 1, end);
  char head[128];
  snprintf(head, sizeof(head), "(*DC_IDX(%.*s, (", (int)t->length, t->text);
  emit_text(e, t, head, strlen(head));
  emit_range(e, i + 2, close);
  dc__strbuf_printf(e->out, "), %u, %u))", s->id, t->line);
  return close + 1;
}

static bool is_promoted(const emitter_t* e, uint32_t id) {
  for (uint32_t i = 0; i < e->promoted_count; ++i) {
    if (e->promoted[i] == id) return true;
  }
  return false;
}

// Emits identifier |i|, resolved and rewritten; returns the next index.
static uint32_t emit_identifier(emitter_t* e, uint32_t i, uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  bool drop;
  const char* spelling = keyword_spelling(t, &drop);
  if (drop) return i + 1;
  // "unsigned char" and "signed char" are C's own: only a plain char
  // becomes dc_char.
  if (spelling && dc__tok_is(t, "char") && i > 0 &&
      (dc__tok_is(&e->toks[i - 1], "unsigned") ||
       dc__tok_is(&e->toks[i - 1], "signed"))) {
    spelling = NULL;
  }
  if (spelling) {
    emit_text(e, t, spelling, strlen(spelling));
    return i + 1;
  }
  if (vector_width_of(t) == 3) {
    fail(e, t, "3-component vector types are not supported; use the "
               "4-component type");
    return i + 1;
  }
  bool call = i + 1 < end && dc__tok_is(&e->toks[i + 1], "(");
  bool indexed = i + 1 < end && dc__tok_is(&e->toks[i + 1], "[");
  const sym_t* s = lookup(e, t);
  char text[64];
  if (s && s->kind == SYM_HOISTED && is_promoted(e, s->id)) {
    snprintf(text, sizeof(text), "dc_r_%u", s->id);
  } else if (s && s->kind == SYM_HOISTED) {
    snprintf(text, sizeof(text), "(dc_h_%u[_w])", s->id);
  } else if (s && s->kind == SYM_LOCALMEM) {
    snprintf(text, sizeof(text), "(*dc_l_%u)", s->id);
  } else if (s && s->kind == SYM_BUFFER && indexed &&
             e->options->bounds_check) {
    return emit_checked_index(e, s, i, end);
  } else if (!s && call) {
    const dc__function_t* f = find_function(e, t);
    if (f && f->is_kernel) {
      fail(e, t, "a kernel cannot call another kernel; move the shared code "
                 "into a helper function");
      return i + 1;
    }
    if (f) {
      emit_token(e, t);
      bool no_args = i + 2 < end && dc__tok_is(&e->toks[i + 2], ")");
      puts_out(e, no_args ? "(_wi" : "(_wi,");
      uint32_t close = matching(e, i + 1, end);
      emit_range(e, i + 2, close);
      puts_out(e, ")");
      return close + 1;
    }
    emit_token(e, t);
    return i + 1;
  } else {
    emit_token(e, t);
    return i + 1;
  }
  emit_text(e, t, text, strlen(text));
  return i + 1;
}

static void emit_range(emitter_t* e, uint32_t begin, uint32_t end) {
  size_t operand_start = e->out->length;
  const dc__token_t* prev = NULL;
  for (uint32_t i = begin; i < end && !e->failed;) {
    const dc__token_t* t = &e->toks[i];
    bool after_operand =
        prev && (prev->kind == DC_TOK_IDENT || dc__tok_is(prev, ")") ||
                 dc__tok_is(prev, "]"));
    uint32_t next;
    if (dc__tok_is(t, ".") && i + 1 < end &&
        e->toks[i + 1].kind == DC_TOK_IDENT) {
      next = emit_swizzle(e, i, end, operand_start);
    } else if (dc__tok_is(t, "(") && !after_operand &&
               (next = emit_vector_literal(e, i, end)) != 0) {
      // a vector literal is an operand of its own
    } else if (dc__tok_is(t, "(") || dc__tok_is(t, "[") ||
               dc__tok_is(t, "{")) {
      // A call or an index extends the operand before it; any other
      // group (parentheses, a cast, braces) starts a new operand.
      bool postfix = after_operand && !dc__tok_is(t, "{");
      size_t group_start = e->out->length;
      uint32_t close = matching(e, i, end);
      emit_token(e, t);
      emit_range(e, i + 1, close);
      if (close < end) emit_token(e, &e->toks[close]);
      if (!postfix) operand_start = group_start;
      next = close + 1;
    } else if (t->kind == DC_TOK_IDENT) {
      if (!(prev && (dc__tok_is(prev, ".") || dc__tok_is(prev, "->")))) {
        operand_start = e->out->length;
      }
      next = emit_identifier(e, i, end);
    } else {
      if (t->kind != DC_TOK_PUNCT) operand_start = e->out->length;
      emit_token(e, t);
      next = i + 1;
    }
    prev = &e->toks[next - 1];
    i = next;
  }
}

//===-- Declarations ----------------------------------------------------===//

// Emits the specifiers of |decl| without address spaces and, when
// |strip_const|, without const (storage the code writes to).
static void emit_specifiers(emitter_t* e, const dc__stmt_t* decl,
                            bool strip_const) {
  for (uint32_t k = decl->specifiers.begin; k < decl->specifiers.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    bool constant = dc__tok_is(t, "__constant") || dc__tok_is(t, "constant");
    if (strip_const && (dc__tok_is(t, "const") || constant)) continue;
    emit_range(e, k, k + 1);
  }
}

// typedef <specifiers> <declarator with its name replaced by |name|>;
static void emit_storage_typedef(emitter_t* e, const storage_t* st,
                                 const char* name) {
  const dc__declarator_t* d = &st->decl->declarators[st->declarator];
  puts_out(e, "\ntypedef");
  emit_specifiers(e, st->decl, /*strip_const=*/true);
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    if (k == d->name) {
      emit_text(e, &e->toks[k], name, strlen(name));
    } else {
      emit_range(e, k, k + 1);
    }
  }
  puts_out(e, ";");
}

static bool name_used_in(const emitter_t* e, const dc__token_t* name,
                         const dc__stmt_t* s);

static bool is_array_declarator(const emitter_t* e, const storage_t* st) {
  const dc__declarator_t* d = &st->decl->declarators[st->declarator];
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    if (dc__tok_is(&e->toks[k], "[")) return true;
  }
  return false;
}

// A block-level declaration is hoisted when a later statement after a
// barrier uses its name: only then must its value survive the barrier.
static bool needs_hoisting(const emitter_t* e, const dc__stmt_t* block,
                           uint32_t index, const dc__token_t* name) {
  uint32_t k = index + 1;
  while (k < block->child_count && !block->children[k]->has_barrier) ++k;
  for (; k < block->child_count; ++k) {
    if (name_used_in(e, name, block->children[k])) return true;
  }
  return false;
}

static bool range_uses(const emitter_t* e, const dc__token_t* name,
                       dc__range_t r) {
  for (uint32_t k = r.begin; k < r.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (t->kind == DC_TOK_IDENT && t->length == name->length &&
        memcmp(t->text, name->text, t->length) == 0 &&
        !(k > 0 && dc__tok_is(&e->toks[k - 1], "."))) {
      return true;
    }
  }
  return false;
}

static bool name_used_in(const emitter_t* e, const dc__token_t* name,
                         const dc__stmt_t* s) {
  if (s == NULL) return false;
  if (range_uses(e, name, s->expr) || range_uses(e, name, s->step)) {
    return true;
  }
  for (uint32_t i = 0; i < s->declarator_count; ++i) {
    if (range_uses(e, name, s->declarators[i].declarator) ||
        range_uses(e, name, s->declarators[i].initializer)) {
      return true;
    }
  }
  for (uint32_t i = 0; i < s->child_count; ++i) {
    if (name_used_in(e, name, s->children[i])) return true;
  }
  return name_used_in(e, name, s->init) || name_used_in(e, name, s->body) ||
         name_used_in(e, name, s->else_body);
}

static uint32_t add_storage(emitter_t* e, storage_t* list, uint32_t* count,
                            uint32_t cap, const dc__stmt_t* decl,
                            uint32_t declarator) {
  if (*count == cap) {
    fail(e, &e->toks[decl->token], "too many variables in one kernel");
    return 0;
  }
  list[*count] = (storage_t){decl, declarator};
  return (*count)++;
}

// True for a declaration of __local storage, false for everything else,
// including private pointers to __local memory (`__local int* p = a;`).
static bool is_localmem_decl(const emitter_t* e, const dc__stmt_t* decl) {
  if (decl->address_space != DC_ADDRESS_LOCAL) return false;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    if (dc__tok_is(&e->toks[decl->declarators[i].declarator.begin], "*")) {
      return false;
    }
  }
  return true;
}

// A __local declaration in a kernel: storage in the group's local memory.
static void declare_localmem(emitter_t* e, const dc__stmt_t* decl) {
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    if (d->initializer.begin != d->initializer.end) {
      fail(e, &e->toks[d->name], "a __local variable cannot be initialised");
      return;
    }
    uint32_t id = add_storage(e, e->localmem, &e->localmem_count, 256, decl, i);
    declare(e, &e->toks[d->name], SYM_LOCALMEM, id);
  }
}

// Writes `dc_ht_N tmp = init; memcpy(&dc_h_N[_w], &tmp, ...)`, which works
// for scalars, vectors and arrays with brace initialisers alike.
static void emit_hoisted_init(emitter_t* e, uint32_t id,
                              const dc__declarator_t* d) {
  at_line(e, e->toks[d->name].line);
  dc__strbuf_printf(e->out, " { dc_ht_%u dc_init =", id);
  emit_range(e, d->initializer.begin, d->initializer.end);
  dc__strbuf_printf(e->out,
                    "; __builtin_memcpy(&dc_h_%u[_w], &dc_init, "
                    "sizeof(dc_init)); }",
                    id);
}

// An ordinary declaration, emitted as C.
static void emit_plain_decl(emitter_t* e, const dc__stmt_t* decl) {
  at_line(e, e->toks[decl->token].line);
  emit_specifiers(e, decl, /*strip_const=*/false);
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    if (i > 0) puts_out(e, ",");
    for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
      // The name is declared here, not looked up: it may shadow a
      // variable the transform renamed (hoisted, promoted, __local).
      if (k == d->name) {
        emit_token(e, &e->toks[k]);
      } else {
        emit_range(e, k, k + 1);
      }
    }
    declare(e, &e->toks[d->name], SYM_PLAIN, 0);
    if (d->initializer.begin != d->initializer.end) {
      puts_out(e, " =");
      emit_range(e, d->initializer.begin, d->initializer.end);
    }
  }
  puts_out(e, ";");
}

//===-- Statements ------------------------------------------------------===//

static void emit_stmt(emitter_t* e, const dc__stmt_t* s);
static void emit_group_stmt(emitter_t* e, const dc__stmt_t* s);

static void emit_remat_decl(emitter_t* e, const sym_t* s);
static bool is_array_declarator(const emitter_t* e, const storage_t* st);
static bool address_taken(const emitter_t* e, const dc__token_t* name);

// Loads each hoisted scalar or vector in scope into a local for the
// region (dc_r_N), which the compiler keeps in a register; close_region()
// stores it back. Arrays stay in place: copying them would cost more.
static void promote_hoisted(emitter_t* e) {
  e->promoted_count = 0;
  for (uint32_t i = 0; i < e->sym_count; ++i) {
    const sym_t* s = &e->syms[i];
    if (s->kind != SYM_HOISTED ||
        is_array_declarator(e, &e->hoisted[s->id]) ||
        address_taken(e, s->name)) {
      continue;  // a pointer to the register copy would outlive the region
    }
    dc__strbuf_printf(e->out, " dc_ht_%u dc_r_%u = dc_h_%u[_w];", s->id,
                      s->id, s->id);
    e->promoted[e->promoted_count++] = s->id;
  }
}

// Declares, at the top of a region, every rematerialised variable in
// scope, in the order they were declared (later ones may use earlier ones).
static void emit_remat(emitter_t* e) {
  for (uint32_t i = 0; i < e->sym_count; ++i) {
    if (e->syms[i].kind != SYM_REMAT) continue;
    // A later declaration of the same name shadows this one.
    bool shadowed = false;
    for (uint32_t k = i + 1; k < e->sym_count && !shadowed; ++k) {
      const dc__token_t* a = e->syms[i].name;
      const dc__token_t* b = e->syms[k].name;
      shadowed = a->length == b->length &&
                 memcmp(a->text, b->text, a->length) == 0;
    }
    if (!shadowed) emit_remat_decl(e, &e->syms[i]);
  }
}

// The start of a region: a loop over the group's work-items. The innermost
// loop is marked `omp simd`: work-items of a group do not synchronise
// between barriers (OpenCL makes their interleaving unspecified), so the C
// compiler may run several at once in vector lanes. The counters are ints
// (a group has at most 1024 work-items): kernels usually keep ids in int
// variables, and with int counters their index arithmetic stays affine, so
// the compiler emits contiguous vector accesses instead of gathers.
static void open_region(emitter_t* e) {
  if (e->region != 0) return;
  e->region = ++e->region_counter;
  puts_out(e,
           "\nfor (int _lz = 0; _lz < (int)_ls2; ++_lz)"
           " for (int _ly = 0; _ly < (int)_ls1; ++_ly)"
           "\n#pragma omp simd\n"
           "for (int _lx = 0; _lx < (int)_ls0; ++_lx) {"
           " const int _w = (_lz * (int)_ls1 + _ly) * (int)_ls0 + _lx;"
           " (void)_w;");
  if (e->calls_helpers) {
    puts_out(e, " _wi->local[0] = _lx; _wi->local[1] = _ly;"
                " _wi->local[2] = _lz;");
  }
  if (e->uses_done) puts_out(e, " if (dc_done[_w]) continue;");
  puts_out(e, " {");
  emit_remat(e);
  promote_hoisted(e);
  e->line = 0;  // the next user token needs its #line again
  push_scope(e);
}

// Ends the open region. Hoisted names declared inside it stay visible:
// their storage outlives the region.
static void close_region(emitter_t* e) {
  if (e->region == 0) return;
  uint32_t mark = e->scope_depth ? e->scopes[e->scope_depth - 1] : 0;
  uint32_t kept = mark;
  for (uint32_t i = mark; i < e->sym_count; ++i) {
    sym_kind_t kind = e->syms[i].kind;
    if (kind == SYM_HOISTED || kind == SYM_REMAT || kind == SYM_LOCALMEM) {
      e->syms[kept++] = e->syms[i];
    }
  }
  e->sym_count = kept;
  if (e->scope_depth) --e->scope_depth;
  for (uint32_t i = 0; i < e->promoted_count; ++i) {
    dc__strbuf_printf(e->out, " dc_h_%u[_w] = dc_r_%u;", e->promoted[i],
                      e->promoted[i]);
  }
  e->promoted_count = 0;
  dc__strbuf_printf(e->out, "\n} dc_next_%u:; }", e->region);
  e->line = 0;
  e->region = 0;
}

// Emits |expr| as work-item 0 sees it: the value of uniform control flow.
// Outside the region loops, the run function's _lx, _ly, _lz and _w are 0.
static void emit_uniform(emitter_t* e, dc__range_t expr) {
  puts_out(e, "({");
  emit_remat(e);
  puts_out(e, " (");
  if (e->calls_helpers) {
    puts_out(e, "_wi->local[0] = 0, _wi->local[1] = 0, _wi->local[2] = 0, ");
  }
  puts_out(e, "(");
  emit_range(e, expr.begin, expr.end);
  puts_out(e, ")); })");
}

static void emit_return(emitter_t* e, const dc__stmt_t* s) {
  if (e->in_kernel && e->mode != DC_EXEC_FIBERS) {
    // A work-item that returns skips the rest of its region and, when
    // there are several regions, every later one. Outside user loops that
    // is a plain `continue` of the work-item loop, which keeps it
    // vectorisable.
    if (e->uses_done) puts_out(e, " { dc_done[_w] = 1;");
    if (e->loop_depth == 0) {
      puts_out(e, " continue;");
    } else {
      dc__strbuf_printf(e->out, " goto dc_next_%u;", e->region);
    }
    if (e->uses_done) puts_out(e, " }");
    return;
  }
  puts_out(e, " return");
  emit_range(e, s->expr.begin, s->expr.end);
  puts_out(e, ";");
}

static void emit_for(emitter_t* e, const dc__stmt_t* s) {
  puts_out(e, " {");
  push_scope(e);
  puts_out(e, " for (");
  if (s->init && s->init->kind == DC_STMT_DECL) {
    emit_plain_decl(e, s->init);
  } else {
    if (s->init) emit_range(e, s->init->expr.begin, s->init->expr.end);
    puts_out(e, ";");
  }
  emit_range(e, s->expr.begin, s->expr.end);
  puts_out(e, ";");
  emit_range(e, s->step.begin, s->step.end);
  puts_out(e, ")");
  emit_stmt(e, s->body);
  pop_scope(e);
  puts_out(e, " }");
}

// Emits a statement as ordinary C, inside a work-item's context.
static void emit_stmt(emitter_t* e, const dc__stmt_t* s) {
  if (e->failed) return;
  at_line(e, e->toks[s->token].line);
  switch (s->kind) {
    case DC_STMT_BLOCK:
      puts_out(e, " {");
      push_scope(e);
      for (uint32_t i = 0; i < s->child_count; ++i) emit_stmt(e, s->children[i]);
      pop_scope(e);
      puts_out(e, " }");
      break;
    case DC_STMT_DECL:
      if (e->in_kernel && is_localmem_decl(e, s)) {
        declare_localmem(e, s);
      } else {
        emit_plain_decl(e, s);
      }
      break;
    case DC_STMT_EXPR:
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ";");
      break;
    case DC_STMT_IF:
      puts_out(e, " if (");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ")");
      emit_stmt(e, s->body);
      if (s->else_body) {
        puts_out(e, " else");
        emit_stmt(e, s->else_body);
      }
      break;
    case DC_STMT_FOR:
      ++e->loop_depth;
      emit_for(e, s);
      --e->loop_depth;
      break;
    case DC_STMT_WHILE:
    case DC_STMT_SWITCH:
      puts_out(e, s->kind == DC_STMT_WHILE ? " while (" : " switch (");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ")");
      ++e->loop_depth;
      emit_stmt(e, s->body);
      --e->loop_depth;
      break;
    case DC_STMT_DO:
      puts_out(e, " do");
      ++e->loop_depth;
      emit_stmt(e, s->body);
      --e->loop_depth;
      puts_out(e, " while (");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ");");
      break;
    case DC_STMT_CASE:
      if (s->expr.begin == s->expr.end) {
        puts_out(e, " default:");
      } else {
        puts_out(e, " case");
        emit_range(e, s->expr.begin, s->expr.end);
        puts_out(e, ":");
      }
      break;
    case DC_STMT_RETURN:
      emit_return(e, s);
      break;
    case DC_STMT_BREAK:
      puts_out(e, " break;");
      break;
    case DC_STMT_CONTINUE:
      puts_out(e, " continue;");
      break;
    case DC_STMT_GOTO:
      puts_out(e, " goto");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ";");
      break;
    case DC_STMT_LABEL:
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ":");
      emit_stmt(e, s->body);
      break;
    case DC_STMT_BARRIER:  // regions handle theirs at group level
      puts_out(e, " dc__fiber_barrier(_wi);");
      break;
    case DC_STMT_EMPTY:
      puts_out(e, " ;");
      break;
  }
}

static bool is_type_keyword(const dc__token_t* t) {
  static const char* const kNames[] = {
      "char",  "uchar",  "short", "ushort", "int",    "uint",    "long",
      "ulong", "float",  "double", "bool",  "size_t", "ptrdiff_t",
      "unsigned", "signed", "const", "intptr_t", "uintptr_t", "sizeof",
  };
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (dc__tok_is(t, kNames[i])) return true;
  }
  return false;
}

static bool is_work_item_function(const dc__token_t* t) {
  static const char* const kNames[] = {
      "get_global_id",   "get_local_id",      "get_group_id",
      "get_local_size",  "get_global_size",   "get_num_groups",
      "get_global_offset", "get_work_dim",    "get_enqueued_local_size",
      "min", "max", "clamp", "mad24", "mul24", "abs",
  };
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (dc__tok_is(t, kNames[i])) return true;
  }
  return false;
}

// True if the function body assigns to |name| (other than in the
// declaration at token |declared|), or takes its address.
static bool assigned_in_function(const emitter_t* e, const dc__token_t* name,
                                 uint32_t declared) {
  const dc__stmt_t* body = e->fn->body;
  for (uint32_t k = body->token; k < e->ast->token_count; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (t->kind == DC_TOK_EOF) break;
    if (k == declared || t->kind != DC_TOK_IDENT || t->length != name->length ||
        memcmp(t->text, name->text, t->length) != 0) {
      continue;
    }
    const dc__token_t* prev = k > 0 ? &e->toks[k - 1] : NULL;
    const dc__token_t* next = &e->toks[k + 1];
    if (dc__tok_is(next, ".") && e->toks[k + 2].kind == DC_TOK_IDENT) {
      next = &e->toks[k + 3];  // v.x = ... assigns to v as well
    }
    if (is_assignment(next) || (prev && (dc__tok_is(prev, "++") ||
                                         dc__tok_is(prev, "--") ||
                                         dc__tok_is(prev, "&")))) {
      return true;
    }
  }
  return false;
}

// True if the function body takes the address of |name| anywhere.
static bool address_taken(const emitter_t* e, const dc__token_t* name) {
  for (uint32_t k = e->fn->body->token + 1; k < e->ast->token_count; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (t->kind == DC_TOK_EOF) break;
    if (t->kind == DC_TOK_IDENT && t->length == name->length &&
        memcmp(t->text, name->text, t->length) == 0 &&
        dc__tok_is(&e->toks[k - 1], "&")) {
      return true;
    }
  }
  return false;
}

// A private variable can be recomputed in each region instead of kept per
// work-item when its value depends only on the work-item's ids, uniform
// values (kernel parameters) and other such variables, and the kernel
// never changes it: `int gx = get_global_id(0);`. Reads of memory and calls
// other than pure built-ins rule it out, as their result may change
// between regions.
static bool rematerializable(const emitter_t* e, const dc__stmt_t* decl,
                             uint32_t index) {
  const dc__declarator_t* d = &decl->declarators[index];
  if (d->initializer.begin == d->initializer.end) return false;
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    if (dc__tok_is(&e->toks[k], "[")) return false;  // arrays are stored
  }
  if (assigned_in_function(e, &e->toks[d->name], d->name)) return false;
  for (uint32_t k = d->initializer.begin; k < d->initializer.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    const dc__token_t* prev = k > d->initializer.begin ? &e->toks[k - 1] : NULL;
    if (dc__tok_is(t, "[") || dc__tok_is(t, "->") || dc__tok_is(t, "{")) {
      return false;
    }
    if (dc__tok_is(t, "*") && (prev == NULL || (prev->kind == DC_TOK_PUNCT &&
                                                !dc__tok_is(prev, ")") &&
                                                !dc__tok_is(prev, "]")))) {
      return false;  // a dereference
    }
    if (t->kind != DC_TOK_IDENT) continue;
    const sym_t* s = lookup(e, t);
    bool call = dc__tok_is(&e->toks[k + 1], "(");
    if (s != NULL) {
      if (s->kind != SYM_REMAT &&
          !(s->is_param && !assigned_in_function(e, t, UINT32_MAX))) {
        return false;
      }
    } else if (call && !is_work_item_function(t)) {
      return false;
    } else if (!call && vector_width_of(t) == 0 && !is_type_keyword(t)) {
      return false;  // an unknown name: play safe
    }
  }
  return true;
}

static void emit_remat_decl(emitter_t* e, const sym_t* s) {
  const dc__declarator_t* d = &s->decl->declarators[s->declarator];
  at_line(e, e->toks[d->name].line);
  emit_specifiers(e, s->decl, /*strip_const=*/false);
  emit_text(e, &e->toks[d->name], "", 0);
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    // The declarator's own name is emitted as written, not looked up.
    if (k == d->name) {
      emit_token(e, &e->toks[k]);
    } else {
      emit_range(e, k, k + 1);
    }
  }
  puts_out(e, " =");
  emit_range(e, d->initializer.begin, d->initializer.end);
  puts_out(e, ";");
}

// A declaration directly inside a block that contains a barrier.
static void emit_group_decl(emitter_t* e, const dc__stmt_t* block,
                            uint32_t index) {
  const dc__stmt_t* decl = block->children[index];
  if (is_localmem_decl(e, decl)) {
    declare_localmem(e, decl);
    return;
  }
  bool any_hoisted = false;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    any_hoisted |= needs_hoisting(e, block, index,
                                  &e->toks[decl->declarators[i].name]);
  }
  open_region(e);
  if (!any_hoisted) {
    emit_plain_decl(e, decl);
    return;
  }
  bool remat = true;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    remat &= rematerializable(e, decl, i);
  }
  if (remat) {
    // Cheaper to recompute in every region than to keep per work-item,
    // and the compiler then sees work-item ids as what they are.
    for (uint32_t i = 0; i < decl->declarator_count; ++i) {
      declare(e, &e->toks[decl->declarators[i].name], SYM_REMAT, 0);
      e->syms[e->sym_count - 1].decl = decl;
      e->syms[e->sym_count - 1].declarator = i;
      emit_remat_decl(e, &e->syms[e->sym_count - 1]);
    }
    return;
  }
  // All declarators of a hoisted declaration are hoisted together, which
  // keeps declarations like `int a = 1, b = a;` in order.
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    uint32_t id = add_storage(e, e->hoisted, &e->hoisted_count, MAX_SYMBOLS,
                              decl, i);
    declare(e, &e->toks[d->name], SYM_HOISTED, id);
    if (d->initializer.begin != d->initializer.end) {
      emit_hoisted_init(e, id, d);
    }
  }
}

// A for loop with a barrier inside: init and step run per work-item, the
// condition once per group.
static void emit_group_for(emitter_t* e, const dc__stmt_t* s) {
  push_scope(e);
  if (s->init && s->init->kind == DC_STMT_DECL) {
    open_region(e);
    for (uint32_t i = 0; i < s->init->declarator_count; ++i) {
      const dc__declarator_t* d = &s->init->declarators[i];
      uint32_t id = add_storage(e, e->hoisted, &e->hoisted_count, MAX_SYMBOLS,
                                s->init, i);
      declare(e, &e->toks[d->name], SYM_HOISTED, id);
      if (d->initializer.begin != d->initializer.end) {
        emit_hoisted_init(e, id, d);
      }
    }
  } else if (s->init) {
    emit_group_stmt(e, s->init);
  }
  close_region(e);
  puts_out(e, " for (;;) {");
  if (s->expr.begin != s->expr.end) {
    puts_out(e, " if (!");
    emit_uniform(e, s->expr);
    puts_out(e, ") break;");
  }
  emit_group_stmt(e, s->body);
  if (s->step.begin != s->step.end) {
    open_region(e);
    emit_range(e, s->step.begin, s->step.end);
    puts_out(e, ";");
    close_region(e);
  }
  close_region(e);
  puts_out(e, " }");
  pop_scope(e);
}

// Emits a statement of a barrier kernel at group level: statements without
// a barrier join the open region; those with one become control flow that
// runs once per group.
static void emit_group_stmt(emitter_t* e, const dc__stmt_t* s) {
  if (e->failed) return;
  if (!s->has_barrier) {
    open_region(e);
    emit_stmt(e, s);
    return;
  }
  at_line(e, e->toks[s->token].line);
  switch (s->kind) {
    case DC_STMT_BARRIER:
      close_region(e);  // all work-items reach it before any goes on
      break;
    case DC_STMT_BLOCK:
      push_scope(e);
      for (uint32_t i = 0; i < s->child_count; ++i) {
        if (s->children[i]->kind == DC_STMT_DECL) {
          emit_group_decl(e, s, i);
        } else {
          emit_group_stmt(e, s->children[i]);
        }
      }
      close_region(e);
      pop_scope(e);
      break;
    case DC_STMT_IF:
      close_region(e);
      puts_out(e, " if (");
      emit_uniform(e, s->expr);
      puts_out(e, ") {");
      emit_group_stmt(e, s->body);
      close_region(e);
      puts_out(e, " }");
      if (s->else_body) {
        puts_out(e, " else {");
        emit_group_stmt(e, s->else_body);
        close_region(e);
        puts_out(e, " }");
      }
      break;
    case DC_STMT_FOR:
      // The loop's scope outlives its regions, so the open region (whose
      // scope sits on the same stack) is closed before the loop opens it.
      close_region(e);
      emit_group_for(e, s);
      break;
    case DC_STMT_WHILE:
      close_region(e);
      puts_out(e, " for (;;) { if (!");
      emit_uniform(e, s->expr);
      puts_out(e, ") break;");
      emit_group_stmt(e, s->body);
      close_region(e);
      puts_out(e, " }");
      break;
    case DC_STMT_DO:
      close_region(e);
      puts_out(e, " do {");
      emit_group_stmt(e, s->body);
      close_region(e);
      puts_out(e, " } while (");
      emit_uniform(e, s->expr);
      puts_out(e, ");");
      break;
    default:  // rejected by check_barrier_placement
      break;
  }
}

//===-- Barrier placement -----------------------------------------------===//

typedef struct placement_t {
  emitter_t* e;
  const dc__stmt_t* loops[MAX_SCOPES];  // enclosing loops and switches
  uint32_t depth;
  bool has_return;
  bool needs_fibers;  // a shape the region transform cannot run
} placement_t;

// Checks that every barrier sits in control flow the region transform can
// run once per group (else the kernel runs on fibers), and notes whether
// the kernel returns early.
static void check_placement(placement_t* p, const dc__stmt_t* s) {
  if (s == NULL) return;
  if (s->kind == DC_STMT_RETURN) p->has_return = true;
  if ((s->has_barrier && (s->kind == DC_STMT_SWITCH ||
                          s->kind == DC_STMT_LABEL)) ||
      s->kind == DC_STMT_GOTO) {
    p->needs_fibers = true;
  }
  if ((s->kind == DC_STMT_BREAK || s->kind == DC_STMT_CONTINUE) &&
      p->depth > 0) {
    const dc__stmt_t* target = p->loops[p->depth - 1];
    if (s->kind == DC_STMT_CONTINUE) {
      for (uint32_t i = p->depth; i-- > 0;) {
        if (p->loops[i]->kind != DC_STMT_SWITCH) {
          target = p->loops[i];
          break;
        }
      }
    }
    if (target->has_barrier) p->needs_fibers = true;
  }
  bool loop = s->kind == DC_STMT_FOR || s->kind == DC_STMT_WHILE ||
              s->kind == DC_STMT_DO || s->kind == DC_STMT_SWITCH;
  if (loop && p->depth < MAX_SCOPES) p->loops[p->depth++] = s;
  for (uint32_t i = 0; i < s->child_count; ++i) {
    check_placement(p, s->children[i]);
  }
  check_placement(p, s->init);
  check_placement(p, s->body);
  check_placement(p, s->else_body);
  if (loop) --p->depth;
}

// True if |fn| calls a helper function whose body reaches a barrier.
static const dc__function_t* helper_with_barrier(const emitter_t* e,
                                                 const dc__function_t* fn) {
  if (fn->body == NULL) return NULL;
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* h = &e->ast->functions[i];
    if (h == fn || !h->calls_barrier || h->is_kernel) continue;
    if (name_used_in(e, &e->toks[h->name], fn->body)) return h;
  }
  return NULL;
}

// Helpers that call helpers with barriers reach a barrier too.
static void propagate_barriers(emitter_t* e) {
  dc__function_t* fns = (dc__function_t*)e->ast->functions;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < e->ast->function_count; ++i) {
      if (!fns[i].calls_barrier && helper_with_barrier(e, &fns[i])) {
        fns[i].calls_barrier = true;
        changed = true;
      }
    }
  }
}

//===-- Functions -------------------------------------------------------===//

// Writes a parameter list, each parameter as written (address spaces
// dropped), declaring the names.
static void emit_params(emitter_t* e, const dc__function_t* fn,
                        bool with_wi) {
  puts_out(e, "(");
  if (with_wi) puts_out(e, "dc__wi_t* _wi");
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (with_wi || i > 0) puts_out(e, ",");
    emit_range(e, fn->params[i].tokens.begin, fn->params[i].tokens.end);
  }
  if (!with_wi && fn->param_count == 0) puts_out(e, "void");
  puts_out(e, ")");
}

static void emit_return_type(emitter_t* e, const dc__function_t* fn) {
  for (uint32_t k = fn->return_type.begin; k < fn->return_type.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (dc__tok_is(t, "static") || dc__tok_is(t, "inline") ||
        dc__tok_is(t, "__inline") || dc__tok_is(t, "extern")) {
      continue;
    }
    if (dc__tok_is(t, "__attribute__")) {  // skip its (( ... ))
      k = matching(e, k + 1, fn->return_type.end);
      continue;
    }
    emit_range(e, k, k + 1);
  }
}

static void emit_helper(emitter_t* e, const dc__function_t* fn,
                        bool prototype) {
  at_line(e, e->toks[fn->name].line);
  puts_out(e, "\nstatic inline __attribute__((unused))");
  emit_return_type(e, fn);
  emit_token(e, &e->toks[fn->name]);
  push_scope(e);
  e->fn = fn;
  e->in_kernel = false;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    declare(e, &e->toks[fn->params[i].name], SYM_PLAIN, 0);
  }
  emit_params(e, fn, /*with_wi=*/true);
  if (prototype || fn->body == NULL) {
    puts_out(e, ";");
  } else {
    puts_out(e, " { DC_WI_FROM(_wi) DC_WI_LOCAL(_wi)");
    emit_stmt(e, fn->body);
    puts_out(e, " }");
  }
  pop_scope(e);
}

// Declares a kernel parameter from the argument table |_args|.
static void emit_unpack(emitter_t* e, const dc__param_t* p, uint32_t index) {
  const dc__token_t* name = &e->toks[p->name];
  if (p->type.pointer_depth == 0) {
    for (uint32_t k = p->tokens.begin; k < p->tokens.end; ++k) {
      if (!dc__tok_is(&e->toks[k], "const")) emit_range(e, k, k + 1);
    }
    dc__strbuf_printf(e->out, "; __builtin_memcpy(&%.*s, _args[%u], "
                              "sizeof(%.*s));",
                      (int)name->length, name->text, index,
                      (int)name->length, name->text);
    declare(e, name, SYM_PLAIN, 0);
    e->syms[e->sym_count - 1].is_param = true;
    return;
  }
  emit_range(e, p->tokens.begin, p->tokens.end);
  if (p->type.address_space == DC_ADDRESS_LOCAL) {
    dc__strbuf_printf(e->out, " = (void*)(_localmem + (uintptr_t)_args[%u]);",
                      index);
    declare(e, name, SYM_PLAIN, 0);
  } else {
    dc__strbuf_printf(e->out, " = _args[%u];", index);
    declare(e, name, SYM_BUFFER, index);
  }
  e->syms[e->sym_count - 1].is_param = true;
}

// Storage layout code shared by the run function and the size queries.
static void emit_layout(emitter_t* e, bool pointers) {
  puts_out(e, "\n  size_t _loff = 0, _soff = 0; (void)_loff; (void)_soff;");
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    if (pointers) {
      dc__strbuf_printf(e->out,
                        "\n  dc_lt_%u* restrict dc_l_%u ="
                        " (dc_lt_%u*)(_localmem + _loff);",
                        i, i, i);
    }
    dc__strbuf_printf(e->out, "\n  _loff += DC_ALIGN64(sizeof(dc_lt_%u));", i);
  }
  for (uint32_t i = 0; i < e->hoisted_count; ++i) {
    if (pointers) {
      dc__strbuf_printf(e->out,
                        "\n  dc_ht_%u* restrict dc_h_%u ="
                        " (dc_ht_%u*)(_scratch + _soff);",
                        i, i, i);
    }
    dc__strbuf_printf(e->out,
                      "\n  _soff += DC_ALIGN64(sizeof(dc_ht_%u) * _wg);", i);
  }
  if (e->uses_done && pointers) {
    puts_out(e, "\n  unsigned char* dc_done = (unsigned char*)(_scratch + _soff);");
  }
  if (e->uses_done) puts_out(e, "\n  _soff += DC_ALIGN64(_wg);");
}

// Writes into |types| the typedefs of the kernel's __local and hoisted
// storage (dc_lt_N, dc_ht_N). Their numbers restart with every kernel, so
// each function that uses them declares them in its own block scope.
static void emit_storage_typedefs(emitter_t* e, dc__strbuf_t* types) {
  dc__strbuf_t* saved = e->out;
  dc__strbuf_init(types, e->arena);
  e->out = types;
  e->line = 0;
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    char type[32];
    snprintf(type, sizeof(type), "dc_lt_%u", i);
    emit_storage_typedef(e, &e->localmem[i], type);
  }
  for (uint32_t i = 0; i < e->hoisted_count; ++i) {
    char type[32];
    snprintf(type, sizeof(type), "dc_ht_%u", i);
    emit_storage_typedef(e, &e->hoisted[i], type);
  }
  e->out = saved;
  e->line = 0;
}

static void emit_kernel(emitter_t* e, const dc__function_t* fn,
                        dc__exec_mode_t mode) {
  const dc__token_t* name = &e->toks[fn->name];
  e->fn = fn;
  e->in_kernel = true;
  e->mode = mode;
  e->hoisted_count = e->localmem_count = 0;
  e->region = 0;
  push_scope(e);
  // The body goes to a side buffer first: it decides which typedefs and
  // storage the function needs, and those come before it.
  dc__strbuf_t* main_out = e->out;
  dc__strbuf_t header, body;
  dc__strbuf_init(&header, e->arena);
  dc__strbuf_init(&body, e->arena);
  e->out = &header;
  e->line = 0;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    puts_out(e, "\n  ");
    emit_unpack(e, &fn->params[i], i);
  }
  e->out = &body;
  e->line = 0;
  placement_t placement = {.e = e};
  check_placement(&placement, fn->body);
  e->uses_done = mode == DC_EXEC_REGIONS && placement.has_return;
  e->calls_helpers = false;
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* h = &e->ast->functions[i];
    e->calls_helpers |= !h->is_kernel &&
                        name_used_in(e, &e->toks[h->name], fn->body);
  }
  push_scope(e);
  if (mode == DC_EXEC_LOOP) {
    open_region(e);
    emit_stmt(e, fn->body);
    close_region(e);
  } else {
    emit_group_stmt(e, fn->body);
    close_region(e);
  }
  pop_scope(e);
  dc__strbuf_t types;
  emit_storage_typedefs(e, &types);
  e->out = main_out;
  e->line = 0;
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) void "
                    "dc_k_%.*s_run(const dc__launch_t* _launch_in, "
                    "void* const* _args, const size_t* dc_len, "
                    "size_t _gbegin, size_t _gend, char* _localmem, "
                    "char* _scratch, dc__fault_t* dc_fault) {",
                    (int)name->length, name->text);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  dc__strbuf_printf(e->out,
                    "\n  (void)dc_len; (void)dc_fault; (void)_localmem;"
                    "\n  dc__wi_t _wi_storage = {.launch = _launch_in};"
                    "\n  dc__wi_t* const _wi = &_wi_storage; (void)_wi;"
                    "\n  DC_WI_FROM(_wi)"
                    "\n  const size_t _wg = _ls0 * _ls1 * _ls2; (void)_wg;"
                    "\n  const int _lx = 0, _ly = 0, _lz = 0, _w = 0;"
                    " (void)_lx; (void)_ly; (void)_lz; (void)_w;");
  dc__strbuf_append(e->out, header.data ? header.data : "", header.length);
  emit_layout(e, /*pointers=*/true);
  puts_out(e, "\n  for (size_t _g = _gbegin; _g < _gend; ++_g) {"
              "\n  const size_t _grp0 = _g % _ng0, _grp1 = (_g / _ng0) % _ng1,"
              " _grp2 = _g / (_ng0 * _ng1);"
              " (void)_grp0; (void)_grp1; (void)_grp2;");
  if (e->calls_helpers) {
    puts_out(e, "\n  _wi->group[0] = _grp0; _wi->group[1] = _grp1;"
                " _wi->group[2] = _grp2;");
  }
  if (e->uses_done) puts_out(e, "\n  __builtin_memset(dc_done, 0, _wg);");
  dc__strbuf_append(e->out, body.data ? body.data : "", body.length);
  puts_out(e, "\n  }\n}");
  e->line = 0;
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) size_t "
                    "dc_k_%.*s_local_size(void) { size_t _wg = 0;",
                    (int)name->length, name->text);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  (void)_wg; return _loff;\n}");
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) size_t "
                    "dc_k_%.*s_scratch_size(size_t _wg) {",
                    (int)name->length, name->text);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  return _soff;\n}\n");
  pop_scope(e);
}

//===-- Fibers ----------------------------------------------------------===//

// The fiber runtime of a generated module: each work-item of a group runs
// on its own stack (ucontext); barrier() switches back to the scheduler,
// which runs every other work-item up to the barrier before resuming any.
// Correct for any control flow, but a switch per work-item per barrier
// costs far more than a region loop, so only kernels the region transform
// cannot run use it.
static const char kFiberSupport[] =
    "\n#define DC_FIBER_STACK (64 * 1024)"
    "\ntypedef struct dc__fiber_t { ucontext_t ctx; dc__wi_t wi; int done; }"
    " dc__fiber_t;"
    "\ntypedef struct dc__fiber_group_t { ucontext_t main;"
    " dc__fiber_t* fibers; int current; const void* args; }"
    " dc__fiber_group_t;"
    "\nstatic _Thread_local dc__fiber_group_t* dc__fg;"
    "\nstatic void dc__fiber_barrier(dc__wi_t* wi) { (void)wi;"
    " dc__fiber_group_t* g = dc__fg;"
    " swapcontext(&g->fibers[g->current].ctx, &g->main); }"
    "\n#define DC_FIBER_SCRATCH(wg) (DC_ALIGN64(sizeof(dc__fiber_t) * (wg))"
    " + (size_t)(wg) * DC_FIBER_STACK)"
    "\nstatic void dc__fibers_run(const dc__wi_t* proto, int count,"
    " char* scratch, void (*entry)(void), const void* args) {"
    "\n  dc__fiber_group_t g = {.fibers = (dc__fiber_t*)scratch,"
    " .args = args};"
    "\n  char* stacks = scratch + DC_ALIGN64(sizeof(dc__fiber_t) * count);"
    "\n  const size_t* ls = proto->launch->local_size;"
    "\n  dc__fiber_group_t* saved = dc__fg; dc__fg = &g;"
    "\n  for (int w = 0; w < count; ++w) {"
    "\n    dc__fiber_t* f = &g.fibers[w];"
    "\n    f->wi = *proto; f->done = 0;"
    "\n    f->wi.local[0] = w % ls[0]; f->wi.local[1] = (w / ls[0]) % ls[1];"
    " f->wi.local[2] = w / (ls[0] * ls[1]);"
    "\n    getcontext(&f->ctx);"
    "\n    f->ctx.uc_stack.ss_sp = stacks + (size_t)w * DC_FIBER_STACK;"
    "\n    f->ctx.uc_stack.ss_size = DC_FIBER_STACK;"
    "\n    f->ctx.uc_link = &g.main;"
    "\n    makecontext(&f->ctx, entry, 0);"
    "\n  }"
    "\n  for (int live = count; live > 0;) {"
    "\n    for (int w = 0; w < count; ++w) {"
    "\n      if (g.fibers[w].done) continue;"
    "\n      g.current = w; swapcontext(&g.main, &g.fibers[w].ctx);"
    "\n      if (g.fibers[w].done) --live;"
    "\n    }"
    "\n  }"
    "\n  dc__fg = saved;"
    "\n}\n";

// Writes the names of |fn|'s parameters, comma-separated, each prefixed.
static void emit_param_names(emitter_t* e, const dc__function_t* fn,
                             const char* prefix) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__token_t* n = &e->toks[fn->params[i].name];
    dc__strbuf_printf(e->out, "%s%s%.*s", i ? ", " : "", prefix,
                      (int)n->length, n->text);
  }
}

// Copies the dispatch's arguments into the fiber kernel's argument pack.
static void emit_pack(emitter_t* e, const dc__function_t* fn) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__param_t* p = &fn->params[i];
    const dc__token_t* n = &e->toks[p->name];
    if (p->type.pointer_depth == 0) {
      dc__strbuf_printf(e->out,
                        "\n  __builtin_memcpy(&_p.%.*s, _args[%u],"
                        " sizeof(_p.%.*s));",
                        (int)n->length, n->text, i, (int)n->length, n->text);
    } else if (p->type.address_space == DC_ADDRESS_LOCAL) {
      dc__strbuf_printf(e->out,
                        "\n  _p.%.*s = (void*)(_localmem +"
                        " (uintptr_t)_args[%u]);",
                        (int)n->length, n->text, i);
    } else {
      dc__strbuf_printf(e->out, "\n  _p.%.*s = _args[%u];", (int)n->length,
                        n->text, i);
    }
  }
}

// A kernel on fibers: its body becomes a function of one work-item, run by
// the fiber runtime through a trampoline that reads the argument pack.
static void emit_fiber_kernel(emitter_t* e, const dc__function_t* fn) {
  const dc__token_t* name = &e->toks[fn->name];
  int nl = (int)name->length;
  const char* nt = name->text;
  e->fn = fn;
  e->in_kernel = true;
  e->mode = DC_EXEC_FIBERS;
  e->hoisted_count = e->localmem_count = 0;
  e->region = 0;
  e->uses_done = false;
  push_scope(e);
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__param_t* p = &fn->params[i];
    bool buffer = p->type.pointer_depth > 0 &&
                  p->type.address_space != DC_ADDRESS_LOCAL;
    declare(e, &e->toks[p->name], buffer ? SYM_BUFFER : SYM_PLAIN, i);
    e->syms[e->sym_count - 1].is_param = true;
  }
  dc__strbuf_t* main_out = e->out;
  dc__strbuf_t body;
  dc__strbuf_init(&body, e->arena);
  e->out = &body;
  e->line = 0;
  emit_stmt(e, fn->body);
  dc__strbuf_t types;
  emit_storage_typedefs(e, &types);
  e->out = main_out;
  e->line = 0;
  dc__strbuf_printf(e->out, "\ntypedef struct dc_kp_%.*s {", nl, nt);
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__range_t r = fn->params[i].tokens;
    for (uint32_t k = r.begin; k < r.end; ++k) {
      if (!dc__tok_is(&e->toks[k], "const")) emit_range(e, k, k + 1);
    }
    puts_out(e, ";");
  }
  dc__strbuf_printf(e->out, " char dc_unused; } dc_kp_%.*s;", nl, nt);
  dc__strbuf_printf(e->out, "\nstatic void dc_kb_%.*s", nl, nt);
  emit_params(e, fn, /*with_wi=*/true);
  puts_out(e, " { DC_WI_FROM(_wi) DC_WI_LOCAL(_wi)"
              "\n  const size_t* dc_len = _wi->lengths; (void)dc_len;"
              "\n  dc__fault_t* dc_fault = _wi->fault; (void)dc_fault;"
              "\n  char* _localmem = _wi->localmem; char* _scratch = 0;"
              " const size_t _wg = 0; (void)_scratch; (void)_wg;");
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/true);
  dc__strbuf_append(e->out, body.data ? body.data : "", body.length);
  puts_out(e, "\n}");
  e->line = 0;
  dc__strbuf_printf(e->out,
                    "\nstatic void dc_kt_%.*s(void) {"
                    " dc__fiber_group_t* g = dc__fg;"
                    " dc__fiber_t* f = &g->fibers[g->current];"
                    " const dc_kp_%.*s* p = g->args; dc_kb_%.*s(&f->wi",
                    nl, nt, nl, nt, nl, nt);
  if (fn->param_count) puts_out(e, ", ");
  emit_param_names(e, fn, "p->");
  puts_out(e, "); f->done = 1; }");
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) void "
                    "dc_k_%.*s_run(const dc__launch_t* _launch_in, "
                    "void* const* _args, const size_t* dc_len, "
                    "size_t _gbegin, size_t _gend, char* _localmem, "
                    "char* _scratch, dc__fault_t* dc_fault) {"
                    "\n  dc_kp_%.*s _p;"
                    "\n  dc__wi_t _proto = {.launch = _launch_in,"
                    " .localmem = _localmem, .lengths = dc_len,"
                    " .fault = dc_fault};"
                    "\n  const size_t _ng0 = _launch_in->num_groups[0],"
                    " _ng1 = _launch_in->num_groups[1];"
                    "\n  const size_t* _ls = _launch_in->local_size;",
                    nl, nt, nl, nt);
  emit_pack(e, fn);
  puts_out(e, "\n  for (size_t _g = _gbegin; _g < _gend; ++_g) {"
              "\n    _proto.group[0] = _g % _ng0;"
              " _proto.group[1] = (_g / _ng0) % _ng1;"
              " _proto.group[2] = _g / (_ng0 * _ng1);");
  dc__strbuf_printf(e->out,
                    "\n    dc__fibers_run(&_proto, (int)(_ls[0] * _ls[1] *"
                    " _ls[2]), _scratch, dc_kt_%.*s, &_p);\n  }\n}",
                    nl, nt);
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) size_t "
                    "dc_k_%.*s_local_size(void) { size_t _wg = 0;",
                    nl, nt);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  (void)_wg; return _loff;\n}");
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) size_t "
                    "dc_k_%.*s_scratch_size(size_t _wg) {"
                    " return DC_FIBER_SCRATCH(_wg); }\n",
                    nl, nt);
  pop_scope(e);
}

//===-- The module ------------------------------------------------------===//

// Definitions every generated module needs after the prelude and the ABI:
// the bounds check of buffer indexing.
static const char kModuleSupport[] =
    // Work-item functions read variables that every kernel and helper
    // declares (DC_WI_VARS in kernels, DC_WI_FROM in helpers), so inside a
    // region loop they are plain registers the compiler can vectorise.
    // The prelude defines them for host-side use; these replace them.
    "\n#undef get_work_dim\n#undef get_local_id\n#undef get_group_id"
    "\n#undef get_local_size\n#undef get_enqueued_local_size"
    "\n#undef get_global_size\n#undef get_num_groups"
    "\n#undef get_global_offset\n#undef get_global_id"
    "\n#define get_work_dim() ((unsigned)_dims)"
    "\n#define DC__PICK(d, a, b, c, none) ((d) == 0 ? (a) : (d) == 1 ? (b) :"
    " (d) == 2 ? (c) : (none))"
    "\n#define get_local_id(d) ((size_t)DC__PICK(d, _lx, _ly, _lz, 0))"
    "\n#define get_group_id(d) ((size_t)DC__PICK(d, _grp0, _grp1, _grp2, 0))"
    "\n#define get_local_size(d) ((size_t)DC__PICK(d, _ls0, _ls1, _ls2, 1))"
    "\n#define get_enqueued_local_size(d) get_local_size(d)"
    "\n#define get_global_size(d) ((size_t)DC__PICK(d, _gs0, _gs1, _gs2, 1))"
    "\n#define get_num_groups(d) ((size_t)DC__PICK(d, _ng0, _ng1, _ng2, 1))"
    "\n#define get_global_offset(d) ((size_t)DC__PICK(d, _go0, _go1, _go2, 0))"
    "\n#define get_global_id(d) (get_global_offset(d) + get_group_id(d) *"
    " get_local_size(d) + get_local_id(d))"
    "\n#define DC_WI_FROM(wi) const dc__launch_t* _launch = (wi)->launch;"
    " const unsigned _dims = _launch->work_dim;"
    " const size_t _ls0 = _launch->local_size[0], _ls1 = _launch->local_size[1],"
    " _ls2 = _launch->local_size[2], _gs0 = _launch->global_size[0],"
    " _gs1 = _launch->global_size[1], _gs2 = _launch->global_size[2],"
    " _ng0 = _launch->num_groups[0], _ng1 = _launch->num_groups[1],"
    " _ng2 = _launch->num_groups[2], _go0 = _launch->global_offset[0],"
    " _go1 = _launch->global_offset[1], _go2 = _launch->global_offset[2];"
    " (void)_dims; (void)_ls0; (void)_ls1; (void)_ls2; (void)_gs0; (void)_gs1;"
    " (void)_gs2; (void)_ng0; (void)_ng1; (void)_ng2; (void)_go0; (void)_go1;"
    " (void)_go2;"
    "\n#define DC_WI_LOCAL(wi) const size_t _lx = (wi)->local[0],"
    " _ly = (wi)->local[1], _lz = (wi)->local[2], _grp0 = (wi)->group[0],"
    " _grp1 = (wi)->group[1], _grp2 = (wi)->group[2];"
    " (void)_lx; (void)_ly; (void)_lz; (void)_grp0; (void)_grp1; (void)_grp2;"
    "\nstatic _Thread_local _Alignas(64) unsigned char dc__sink[256];"
    "\nstatic void* dc__oob(dc__fault_t* f, unsigned a, unsigned line,"
    " long long i, size_t n) {"
    "\n  int expected = 0;"
    "\n  if (__atomic_compare_exchange_n(&f->set, &expected, 2, 0,"
    " __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {"
    "\n    f->arg = a; f->line = line; f->index = i; f->length = n;"
    "\n    __atomic_store_n(&f->set, 1, __ATOMIC_RELEASE);"
    "\n  }"
    "\n  return dc__sink;"
    "\n}"
    "\n#define DC_IDX(p, i, a, line) ({ __typeof__(&(p)[0]) dc_p_ = (p);"
    " long long dc_i_ = (long long)(i);"
    " (dc_i_ >= 0 && (unsigned long long)dc_i_ < dc_len[a]) ? dc_p_ + dc_i_"
    " : (__typeof__(dc_p_))dc__oob(dc_fault, a, line, dc_i_, dc_len[a]); })"
    "\n";

static void emit_global(emitter_t* e, const dc__global_t* g) {
  at_line(e, e->toks[g->tokens.begin].line);
  if (!g->is_typedef) puts_out(e, " static");
  e->static_init = !g->is_typedef;
  emit_range(e, g->tokens.begin, g->tokens.end);
  e->static_init = false;
}

// Chooses each kernel's execution mode: loops without barriers, regions
// for barriers in structured control flow, fibers for the rest.
static void plan_kernels(emitter_t* e, dc__exec_mode_t* modes) {
  propagate_barriers(e);
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* fn = &e->ast->functions[i];
    modes[i] = DC_EXEC_LOOP;
    if (!fn->is_kernel && fn->calls_barrier) {
      modes[i] = DC_EXEC_FIBERS;  // a helper with a barrier needs the runtime
    }
    if (!fn->is_kernel || fn->body == NULL || !fn->calls_barrier) continue;
    placement_t p = {.e = e};
    check_placement(&p, fn->body);
    bool fibers = p.needs_fibers || helper_with_barrier(e, fn) != NULL;
    modes[i] = fibers ? DC_EXEC_FIBERS : DC_EXEC_REGIONS;
  }
}

dc_status_t dc__cpu_codegen(dc__arena_t* arena, const dc__program_ast_t* ast,
                            const dc__codegen_options_t* options,
                            dc__diag_t* diag, dc__strbuf_t* out,
                            dc__exec_mode_t* modes) {
  emitter_t* e = dc__arena_alloc(arena, sizeof(*e));
  if (e == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(e, 0, sizeof(*e));
  *e = (emitter_t){.arena = arena, .diag = diag, .ast = ast,
                   .toks = ast->tokens, .options = options, .out = out};
  plan_kernels(e, modes);
  if (e->failed) return DC_ERR_COMPILE;
  puts_out(e, kModuleSupport);
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (modes[i] == DC_EXEC_FIBERS) {
      puts_out(e, kFiberSupport);
      break;
    }
  }
  // Typedefs first: the helpers' prototypes below may use them.
  for (uint32_t k = 0; k < ast->order_count; ++k) {
    int32_t item = ast->order[k];
    if (item < 0 && ast->globals[~item].is_typedef) {
      emit_global(e, &ast->globals[~item]);
    }
  }
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (!ast->functions[i].is_kernel) {
      emit_helper(e, &ast->functions[i], /*prototype=*/true);
    }
  }
  for (uint32_t k = 0; k < ast->order_count && !e->failed; ++k) {
    int32_t item = ast->order[k];
    if (item < 0) {
      if (!ast->globals[~item].is_typedef) {
        emit_global(e, &ast->globals[~item]);
      }
      continue;
    }
    const dc__function_t* fn = &ast->functions[item];
    if (fn->body == NULL) continue;
    if (fn->is_kernel && modes[item] == DC_EXEC_FIBERS) {
      emit_fiber_kernel(e, fn);
    } else if (fn->is_kernel) {
      emit_kernel(e, fn, modes[item]);
    } else {
      emit_helper(e, fn, /*prototype=*/false);
    }
  }
  puts_out(e, "\n");
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return e->failed ? DC_ERR_COMPILE : DC_OK;
}

// cuda_codegen.c: the CUDA back end's translation of kernels into CUDA
// C++, which NVRTC compiles after the prelude (cuda_prelude.h).
//
// A GPU runs every work-item as a thread of its own, so unlike the CPU's
// code generator this one keeps the program's structure as it is: a
// kernel becomes an `extern "C" __global__` function, a helper a device
// function, a barrier __syncthreads(). What it rewrites, token by token:
// address spaces disappear (CUDA pointers are generic), `char` becomes
// signed, `void*` becomes the prelude's dc__vptr (C's implicit
// conversions from void*, which C++ lacks), vector literals become
// constructor calls, components become dc__lane / dc__swizzle calls,
// convert_*, as_*, vloadN and vstoreN become the prelude's templates,
// helper calls gain the launch record _wi, C++ keywords used as names get
// a prefix, and character constants stay ints. A #line directive before
// every source line keeps NVRTC's messages in the user's lines, and marks
// record where each token went, so that a message's column can be taken
// back to the user's column.
//
// __local variables of a kernel become __shared__ variables; __local
// pointer parameters become byte offsets into the group's dynamic shared
// memory, turned back into pointers at the top of the kernel. A kernel
// that synchronises its grid runs its body as a lambda, so that its
// returns lead to dc__grid_exit() (cuda_prelude.h).
// SPDX-License-Identifier: MIT
#include "cuda_codegen.h"

#include <stdio.h>
#include <string.h>

#include "cuda_names.h"

#define MAX_SYMBOLS 4096
#define MAX_SCOPES 256

typedef enum sym_kind_e {
  SYM_PLAIN,   // emitted as written
  SYM_BUFFER,  // a kernel's __global/__constant pointer parameter
} sym_kind_t;

typedef struct sym_t {
  const dc__token_t* name;
  sym_kind_t kind;
  uint32_t arg;  // parameter index of a buffer
} sym_t;

typedef struct emitter_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  const dc__program_ast_t* ast;
  const dc__token_t* toks;
  const dc__cuda_codegen_options_t* options;
  const char* file_literal;  // the program's name, escaped for #line
  dc__strbuf_t out;
  dc__cuda_mark_t* marks;
  size_t mark_count;
  size_t mark_capacity;
  sym_t syms[MAX_SYMBOLS];
  uint32_t sym_count;
  uint32_t scopes[MAX_SCOPES];
  uint32_t scope_depth;
  bool in_kernel;
  uint32_t line;  // line of the last #line emitted
  bool failed;
  const dc__token_t* typedefs[256];  // program-scope typedef names
  uint32_t typedef_count;
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
                    uint32_t arg) {
  if (e->sym_count == MAX_SYMBOLS) {
    fail(e, name, "too many variables in one function");
    return;
  }
  e->syms[e->sym_count++] = (sym_t){name, kind, arg};
}

static bool same_text(const dc__token_t* a, const dc__token_t* b) {
  return a->length == b->length && memcmp(a->text, b->text, a->length) == 0;
}

static const sym_t* lookup(const emitter_t* e, const dc__token_t* t) {
  for (uint32_t i = e->sym_count; i-- > 0;) {
    if (same_text(e->syms[i].name, t)) return &e->syms[i];
  }
  return NULL;
}

static const dc__function_t* find_function(const emitter_t* e,
                                           const dc__token_t* t) {
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    if (same_text(&e->toks[e->ast->functions[i].name], t)) {
      return &e->ast->functions[i];
    }
  }
  return NULL;
}

//===-- Output ----------------------------------------------------------===//

static void puts_out(emitter_t* e, const char* s) {
  dc__strbuf_puts(&e->out, s);
}

// Moves the output to |line| of the user's source with a #line directive.
static void at_line(emitter_t* e, uint32_t line) {
  if (line == e->line || line == 0) return;
  dc__strbuf_printf(&e->out, "\n#line %u \"%s\"\n", line, e->file_literal);
  e->line = line;
}

static void add_mark(emitter_t* e, const dc__token_t* t, size_t length) {
  if (e->mark_count == e->mark_capacity) {
    size_t capacity = e->mark_capacity ? 2 * e->mark_capacity : 1024;
    dc__cuda_mark_t* marks =
        dc__arena_alloc(e->arena, capacity * sizeof(*marks));
    if (marks == NULL) return;  // the arena reports the failure
    if (e->mark_count > 0) {
      memcpy(marks, e->marks, e->mark_count * sizeof(*marks));
    }
    e->marks = marks;
    e->mark_capacity = capacity;
  }
  e->marks[e->mark_count++] = (dc__cuda_mark_t){.offset = e->out.length,
                                                .length = (uint32_t)length,
                                                .line = t->line,
                                                .col = t->col};
}

// Writes |text| for the user's token |t|, on its line.
static void emit_text(emitter_t* e, const dc__token_t* t, const char* text,
                      size_t length) {
  at_line(e, t->line);
  dc__strbuf_append(&e->out, " ", 1);
  add_mark(e, t, length);
  dc__strbuf_append(&e->out, text, length);
}

// Token |t| as the generated code spells it (spelling.h).
static const char* spelled(const emitter_t* e, const dc__token_t* t) {
  return dc__token_spelling(e->arena, e->ast, t);
}

static void emit_token(emitter_t* e, const dc__token_t* t) {
  const char* text = spelled(e, t);
  emit_text(e, t, text, strlen(text));
}

// Inserts |text| at |offset| of the output; the marks after it move too.
static void insert_text(emitter_t* e, size_t offset, const char* text) {
  size_t n = strlen(text);
  dc__strbuf_insert(&e->out, offset, text);
  for (size_t i = e->mark_count; i-- > 0 && e->marks[i].offset >= offset;) {
    e->marks[i].offset += n;
  }
}

// The vector width of a vector type name ("float4": 4), 0 for others.
static unsigned vector_width_of(const dc__token_t* t) {
  char name[32];
  unsigned width = dc__cuda_type_name(t, 0, name, sizeof(name));
  return width > 1 ? width : 0;
}

//===-- Expressions -----------------------------------------------------===//

static void emit_range(emitter_t* e, uint32_t begin, uint32_t end);

// Whether |t| can start a type name, as in a cast "(unsigned int)x".
static bool starts_type(const emitter_t* e, const dc__token_t* t) {
  static const char* const kWords[] = {
      "void",      "bool",     "char",   "uchar",     "short",
      "ushort",    "int",      "uint",   "long",      "ulong",
      "float",     "double",   "size_t", "ptrdiff_t", "intptr_t",
      "uintptr_t", "unsigned", "signed", "const",     "volatile",
  };
  if (t->kind != DC_TOK_IDENT) return false;
  for (size_t i = 0; i < sizeof(kWords) / sizeof(kWords[0]); ++i) {
    if (dc__tok_is(t, kWords[i])) return true;
  }
  if (dc__cuda_keyword_spelling(t) != NULL || vector_width_of(t) != 0) return true;
  for (uint32_t i = 0; i < e->typedef_count; ++i) {
    if (same_text(e->typedefs[i], t)) return true;
  }
  return false;
}

// .x becomes dc__lane<0>(operand), .xy dc__swizzle<0, 1>(operand), .lo
// dc__lo(operand): the call's head is inserted before the operand, which
// starts at |operand_start| of the output.
static uint32_t emit_swizzle(emitter_t* e, uint32_t i, uint32_t end,
                             size_t operand_start) {
  const dc__token_t* sel = &e->toks[i + 1];
  int lanes[16];
  int n = dc__tok_swizzle(sel, lanes);
  bool assigned = i + 2 < end && dc__tok_is_assignment(&e->toks[i + 2]);
  if (n == 0) {
    fail(e, sel,
         "not a vector component selector (struct members do not exist in "
         "the kernel language)");
  } else if (n > 1 && assigned) {
    fail(e, sel,
         "assigning to several vector components at once is not supported; "
         "assign them one by one");
  } else if (n == 3 || (n > 4 && n != 8 && n != 16)) {
    fail(e, sel,
         n == 3 ? "3-component vector types are not supported; use the "
                  "4-component type"
                : "a swizzle must select 1, 2, 4, 8 or 16 components");
  }
  if (e->failed) return i + 2;
  char head[128];
  if (n < 0) {
    snprintf(head, sizeof(head), " dc__%.*s(", (int)sel->length, sel->text);
  } else {
    int used =
        snprintf(head, sizeof(head), " dc__%s<", n == 1 ? "lane" : "swizzle");
    for (int k = 0; k < n; ++k) {
      used += snprintf(head + used, sizeof(head) - (size_t)used, "%s%d",
                       k ? ", " : "", lanes[k]);
    }
    snprintf(head + used, sizeof(head) - (size_t)used, ">(");
  }
  insert_text(e, operand_start, head);
  puts_out(e, ")");
  return i + 2;
}

// (float4)(a, b, c, d) and (float4)(x) become float4(...), the vector's
// constructor (a splat for one value). Returns the index after it, or 0
// if |i| does not start a vector literal.
static uint32_t emit_vector_literal(emitter_t* e, uint32_t i, uint32_t end) {
  if (i + 3 >= end) return 0;
  const dc__token_t* type = &e->toks[i + 1];
  unsigned width = vector_width_of(type);
  if (width == 0 || !dc__tok_is(&e->toks[i + 2], ")") ||
      !dc__tok_is(&e->toks[i + 3], "(")) {
    return 0;
  }
  if (width == 3) {
    fail(e, type,
         "3-component vector types are not supported; use the "
         "4-component type");
    return i + 1;
  }
  uint32_t close = dc__tok_matching(e->toks, i + 3, end);
  emit_token(e, type);
  puts_out(e, "(");
  emit_range(e, i + 4, close);
  puts_out(e, ")");
  return close + 1;
}

// name[index] on a buffer argument, checked when bounds checking is on.
static uint32_t emit_checked_index(emitter_t* e, const sym_t* s, uint32_t i,
                                   uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  uint32_t close = dc__tok_matching(e->toks, i + 1, end);
  const char* head = dc__arena_printf(e->arena, "(*dc__idx(%s, (",
                                      spelled(e, t));
  if (head == NULL) return close + 1;  // the arena reports it
  emit_text(e, t, head, strlen(head));
  emit_range(e, i + 2, close);
  dc__strbuf_printf(&e->out, "), %uu, %uu, dc_len.n[%u]))", s->arg, t->line,
                    s->arg);
  return close + 1;
}

// An identifier that is no keyword of the language: declared names are
// mangled, other C++ keywords get a prefix.
static void emit_name(emitter_t* e, const dc__token_t* t) {
  char text[96];
  if (e->ast->token_decls[t - e->toks] == NULL &&
      dc__cuda_is_cxx_keyword(t)) {
    snprintf(text, sizeof(text), "dc_u_%.*s", (int)t->length, t->text);
    emit_text(e, t, text, strlen(text));
  } else {
    emit_token(e, t);
  }
}

// A call of function |f| of the program: helpers receive the launch
// record first.
static uint32_t emit_call(emitter_t* e, const dc__function_t* f, uint32_t i,
                          uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  if (f->is_kernel) {
    fail(e, t,
         "a kernel cannot call another kernel; move the shared code "
         "into a helper function");
    return i + 1;
  }
  emit_name(e, t);
  bool no_args = i + 2 < end && dc__tok_is(&e->toks[i + 2], ")");
  puts_out(e, no_args ? "(_wi" : "(_wi,");
  uint32_t close = dc__tok_matching(e->toks, i + 1, end);
  emit_range(e, i + 2, close);
  puts_out(e, ")");
  return close + 1;
}

// `void` followed (after qualifiers) by `*` is a void pointer: written as
// dc__vptr without the star. Returns 0 if |i| is another `void`.
static uint32_t emit_void_pointer(emitter_t* e, uint32_t i, uint32_t end) {
  uint32_t j = i + 1;
  while (j < end && (dc__tok_is(&e->toks[j], "const") ||
                     dc__tok_is(&e->toks[j], "volatile") ||
                     (dc__cuda_keyword_spelling(&e->toks[j]) != NULL &&
                      !dc__tok_is(&e->toks[j], "restrict") &&
                      !dc__tok_is(&e->toks[j], "__restrict")))) {
    ++j;
  }
  if (j >= end || !dc__tok_is(&e->toks[j], "*")) return 0;
  emit_text(e, &e->toks[i], "dc__vptr", 8);
  emit_range(e, i + 1, j);
  // restrict qualifies pointers only, and dc__vptr is a class.
  for (++j; j < end && (dc__tok_is(&e->toks[j], "restrict") ||
                        dc__tok_is(&e->toks[j], "__restrict"));) {
    ++j;
  }
  return j;
}

// Emits identifier |i|, resolved and rewritten; returns the next index.
static uint32_t emit_identifier(emitter_t* e, uint32_t i, uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  const char* fixed = dc__fixed_spelling(e->arena, e->ast, i);
  if (fixed != NULL) {
    emit_text(e, t, fixed, strlen(fixed));
    return i + 1;
  }
  const char* spelling = dc__cuda_keyword_spelling(t);
  char text[96];
  if (spelling != NULL) {
    if (*spelling) emit_text(e, t, spelling, strlen(spelling));
    return i + 1;
  }
  // "unsigned char" and "signed char" are C++'s own: only a plain char
  // becomes the signed dc_char.
  if (dc__tok_is(t, "char")) {
    bool qualified = i > 0 && (dc__tok_is(&e->toks[i - 1], "unsigned") ||
                               dc__tok_is(&e->toks[i - 1], "signed"));
    emit_text(e, t, qualified ? "char" : "dc_char", qualified ? 4 : 7);
    return i + 1;
  }
  if (dc__tok_is(t, "void")) {
    uint32_t next = emit_void_pointer(e, i, end);
    if (next != 0) return next;
  }
  if (vector_width_of(t) == 3) {
    fail(e, t,
         "3-component vector types are not supported; use the "
         "4-component type");
    return i + 1;
  }
  bool call = i + 1 < end && dc__tok_is(&e->toks[i + 1], "(");
  bool indexed = i + 1 < end && dc__tok_is(&e->toks[i + 1], "[");
  const sym_t* s = lookup(e, t);
  if (s != NULL) {
    if (s->kind == SYM_BUFFER && indexed && e->options->bounds_check) {
      return emit_checked_index(e, s, i, end);
    }
  } else if (call && find_function(e, t) != NULL) {
    return emit_call(e, find_function(e, t), i, end);
  } else if (dc__cuda_templated_builtin(t, text, sizeof(text))) {
    emit_text(e, t, text, strlen(text));
    return i + 1;
  }
  emit_name(e, t);
  return i + 1;
}

static void emit_range(emitter_t* e, uint32_t begin, uint32_t end) {
  size_t operand_start = e->out.length;
  const dc__token_t* prev = NULL;
  bool after_cast = false;  // the previous group was a cast
  for (uint32_t i = begin; i < end && !e->failed;) {
    const dc__token_t* t = &e->toks[i];
    bool after_operand = prev && !after_cast &&
                         (prev->kind == DC_TOK_IDENT || dc__tok_is(prev, ")") ||
                          dc__tok_is(prev, "]"));
    size_t here = e->out.length;
    after_cast = false;
    uint32_t next;
    if (dc__tok_is(t, ".") && i + 1 < end &&
        e->ast->token_names[i + 1] == DC_NAME_FIELD) {
      emit_token(e, t);  // a member of a struct or union
      emit_token(e, &e->toks[i + 1]);
      next = i + 2;
    } else if (dc__tok_is(t, ".") && i + 1 < end &&
               e->toks[i + 1].kind == DC_TOK_IDENT) {
      next = emit_swizzle(e, i, end, operand_start);
    } else if (dc__tok_is(t, "(") && !after_operand &&
               (next = emit_vector_literal(e, i, end)) != 0) {
      operand_start = here;  // a vector literal is an operand of its own
    } else if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) {
      // A call or an index extends the operand before it; any other
      // group (parentheses, a cast, braces) starts a new operand.
      bool postfix = after_operand && !dc__tok_is(t, "{");
      uint32_t close = dc__tok_matching(e->toks, i, end);
      emit_token(e, t);
      emit_range(e, i + 1, close);
      if (close < end) emit_token(e, &e->toks[close]);
      if (!postfix) operand_start = here;
      after_cast = !postfix && dc__tok_is(t, "(") && i + 1 < close &&
                   starts_type(e, &e->toks[i + 1]);
      next = close + 1;
    } else if (t->kind == DC_TOK_IDENT) {
      if (!(prev && (dc__tok_is(prev, ".") || dc__tok_is(prev, "->")))) {
        operand_start = here;
      }
      next = emit_identifier(e, i, end);
    } else if (t->kind == DC_TOK_CHAR) {
      // A character constant is an int in C, a char in C++ (sizeof('a'),
      // overloads): keep C's type.
      char text[64];
      snprintf(text, sizeof(text), "((int)%.*s)", (int)t->length, t->text);
      operand_start = here;
      emit_text(e, t, text, strlen(text));
      next = i + 1;
    } else {
      if (t->kind != DC_TOK_PUNCT) operand_start = here;
      emit_token(e, t);
      next = i + 1;
    }
    prev = &e->toks[next - 1];
    i = next;
  }
}

//===-- Declarations and statements -------------------------------------===//

static void emit_stmt(emitter_t* e, const dc__stmt_t* s);

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

// A declaration; a kernel's __local variables become __shared__ ones,
// which (as in OpenCL) cannot be initialised.
static void emit_decl(emitter_t* e, const dc__stmt_t* decl) {
  bool shared = e->in_kernel && is_localmem_decl(e, decl);
  at_line(e, e->toks[decl->token].line);
  if (shared) puts_out(e, " __shared__");
  emit_range(e, decl->specifiers.begin, decl->specifiers.end);
  for (uint32_t i = 0; i < decl->declarator_count && !e->failed; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    if (i > 0) puts_out(e, ",");
    emit_range(e, d->declarator.begin, d->declarator.end);
    declare(e, &e->toks[d->name], SYM_PLAIN, 0);
    if (d->initializer.begin == d->initializer.end) continue;
    if (shared) {
      fail(e, &e->toks[d->name], "a __local variable cannot be initialised");
      return;
    }
    puts_out(e, " =");
    emit_range(e, d->initializer.begin, d->initializer.end);
  }
  puts_out(e, ";");
}

static void emit_block(emitter_t* e, const dc__stmt_t* s) {
  puts_out(e, " {");
  push_scope(e);
  for (uint32_t i = 0; i < s->child_count; ++i) emit_stmt(e, s->children[i]);
  pop_scope(e);
  puts_out(e, " }");
}

// What #pragma unroll asked of the loop |s|, as NVRTC spells it (on a
// line of its own: the next token needs its #line again).
static void emit_unroll(emitter_t* e, const dc__stmt_t* s) {
  if (s->unroll == 0) return;
  if (s->unroll == DC_UNROLL_FULL) {
    puts_out(e, "\n#pragma unroll\n");
  } else {
    dc__strbuf_printf(&e->out, "\n#pragma unroll %d\n",
                      s->unroll == DC_UNROLL_NEVER ? 1 : (int)s->unroll);
  }
  e->line = 0;
}

static void emit_for(emitter_t* e, const dc__stmt_t* s) {
  puts_out(e, " {");
  push_scope(e);
  emit_unroll(e, s);
  puts_out(e, " for (");
  if (s->init && s->init->kind == DC_STMT_DECL) {
    emit_decl(e, s->init);
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

// Statements whose head is a keyword and a parenthesised expression.
static void emit_conditional(emitter_t* e, const dc__stmt_t* s) {
  static const char* const kHeads[] = {[DC_STMT_IF] = " if (",
                                       [DC_STMT_WHILE] = " while (",
                                       [DC_STMT_SWITCH] = " switch ("};
  puts_out(e, kHeads[s->kind]);
  emit_range(e, s->expr.begin, s->expr.end);
  puts_out(e, ")");
  emit_stmt(e, s->body);
  if (s->kind == DC_STMT_IF && s->else_body) {
    puts_out(e, " else");
    emit_stmt(e, s->else_body);
  }
}

// Emits the expression of |s| between |head| and |tail|.
static void emit_wrapped(emitter_t* e, const char* head, const dc__stmt_t* s,
                         const char* tail) {
  puts_out(e, head);
  emit_range(e, s->expr.begin, s->expr.end);
  puts_out(e, tail);
}

static void emit_stmt(emitter_t* e, const dc__stmt_t* s) {
  if (e->failed) return;
  at_line(e, e->toks[s->token].line);
  switch (s->kind) {
    case DC_STMT_BLOCK:
      emit_block(e, s);
      break;
    case DC_STMT_DECL:
      emit_decl(e, s);
      break;
    case DC_STMT_EXPR:
      emit_wrapped(e, "", s, ";");
      break;
    case DC_STMT_IF:
    case DC_STMT_WHILE:
    case DC_STMT_SWITCH:
      if (s->kind == DC_STMT_WHILE) emit_unroll(e, s);
      emit_conditional(e, s);
      break;
    case DC_STMT_FOR:
      emit_for(e, s);
      break;
    case DC_STMT_DO:
      emit_unroll(e, s);
      puts_out(e, " do");
      emit_stmt(e, s->body);
      emit_wrapped(e, " while (", s, ");");
      break;
    case DC_STMT_CASE:
      if (s->expr.begin == s->expr.end) {
        puts_out(e, " default:");
      } else {
        emit_wrapped(e, " case", s, ":");
      }
      break;
    case DC_STMT_RETURN:
      emit_wrapped(e, " return", s, ";");
      break;
    case DC_STMT_BREAK:
      puts_out(e, " break;");
      break;
    case DC_STMT_CONTINUE:
      puts_out(e, " continue;");
      break;
    case DC_STMT_GOTO:
      emit_wrapped(e, " goto", s, ";");
      break;
    case DC_STMT_LABEL:
      emit_wrapped(e, "", s, ":");
      emit_stmt(e, s->body);
      break;
    // __syncthreads() also orders the group's global and shared memory
    // accesses, whatever the flags ask for.
    case DC_STMT_BARRIER:
      puts_out(e, " __syncthreads();");
      break;
    case DC_STMT_GRID_SYNC:
      puts_out(e, " dc__grid_sync();");
      break;
    case DC_STMT_EMPTY:
      puts_out(e, " ;");
      break;
  }
}

//===-- Functions -------------------------------------------------------===//

// The return type without storage classes, inline and attributes.
static void emit_return_type(emitter_t* e, const dc__function_t* fn) {
  for (uint32_t k = fn->return_type.begin; k < fn->return_type.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (dc__tok_is(t, "static") || dc__tok_is(t, "inline") ||
        dc__tok_is(t, "__inline") || dc__tok_is(t, "extern")) {
      continue;
    }
    if (dc__tok_is(t, "__attribute__")) {  // skip its (( ... ))
      k = dc__tok_matching(e->toks, k + 1, fn->return_type.end);
      continue;
    }
    emit_range(e, k, k + 1);
  }
}

// Starts a function on a line of its own, at the user's |line|.
static void start_function(emitter_t* e, uint32_t line) {
  e->line = 0;
  at_line(e, line);
}

static void emit_helper(emitter_t* e, const dc__function_t* fn,
                        bool prototype) {
  start_function(e, e->toks[fn->return_type.begin].line);
  puts_out(e, "static");
  emit_return_type(e, fn);
  emit_name(e, &e->toks[fn->name]);
  push_scope(e);
  e->in_kernel = false;
  puts_out(e, "(const dc__launch_t _wi");
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    puts_out(e, ",");
    emit_range(e, fn->params[i].tokens.begin, fn->params[i].tokens.end);
    declare(e, &e->toks[fn->params[i].name], SYM_PLAIN, 0);
  }
  puts_out(e, ")");
  if (prototype || fn->body == NULL) {
    puts_out(e, ";");
  } else {
    emit_stmt(e, fn->body);
  }
  pop_scope(e);
}

static bool is_local_pointer(const dc__param_t* p) {
  return p->type.pointer_depth > 0 && p->type.address_space == DC_ADDRESS_LOCAL;
}

// The kernel's parameter list, as cuda_codegen.h describes it.
static void emit_kernel_params(emitter_t* e, const dc__function_t* fn) {
  puts_out(e, "(const dc__launch_t _wi");
  if (e->options->bounds_check) {
    dc__strbuf_printf(&e->out, ", const dc__lengths_t<%u> dc_len",
                      fn->param_count ? fn->param_count : 1);
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__param_t* p = &fn->params[i];
    puts_out(e, ",");
    if (is_local_pointer(p)) {
      dc__strbuf_printf(&e->out, " unsigned long long dc_loff_%u", i);
      continue;
    }
    emit_range(e, p->tokens.begin, p->tokens.end);
    bool buffer = p->type.pointer_depth > 0;
    declare(e, &e->toks[p->name], buffer ? SYM_BUFFER : SYM_PLAIN, i);
  }
  puts_out(e, ") {");
}

// __local pointer parameters: pointers into the dynamic shared memory.
static void emit_local_params(emitter_t* e, const dc__function_t* fn) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__param_t* p = &fn->params[i];
    if (!is_local_pointer(p)) continue;
    const dc__token_t* name = &e->toks[p->name];
    emit_range(e, p->tokens.begin, p->tokens.end);
    dc__strbuf_printf(&e->out, " = (decltype(%s))(dc__smem + dc_loff_%u);",
                      spelled(e, name), i);
    declare(e, name, SYM_PLAIN, 0);
  }
}

static void emit_kernel(emitter_t* e, const dc__function_t* fn) {
  const dc__token_t* name = &e->toks[fn->name];
  const uint32_t* req = fn->required_group_size;
  uint64_t group =
      (uint64_t)req[0] * (req[1] ? req[1] : 1) * (req[2] ? req[2] : 1);
  start_function(e, e->toks[fn->head.begin].line);
  puts_out(e, "extern \"C\" __global__ void");
  // A fixed group size lets the compiler budget registers for it.
  if (req[0] != 0 && group <= 1024) {
    dc__strbuf_printf(&e->out, " __launch_bounds__(%u)", (unsigned)group);
  }
  char* entry = dc__arena_printf(e->arena, "%s%.*s", DC_CUDA_KERNEL_PREFIX,
                                 (int)name->length, name->text);
  if (entry == NULL) return;  // the arena reports it
  emit_text(e, name, entry, strlen(entry));
  push_scope(e);
  e->in_kernel = true;
  emit_kernel_params(e, fn);
  emit_local_params(e, fn);
  if (fn->calls_grid_sync) puts_out(e, " [&]() {");
  emit_stmt(e, fn->body);
  if (fn->calls_grid_sync) puts_out(e, " }(); dc__grid_exit();");
  puts_out(e, " }");
  pop_scope(e);
}

// A program-scope __constant variable or typedef. The variables are
// constant device memory: `static __device__ const`.
static void emit_global(emitter_t* e, const dc__global_t* g) {
  at_line(e, e->toks[g->tokens.begin].line);
  if (!g->is_typedef) puts_out(e, " static __device__");
  e->in_kernel = false;
  emit_range(e, g->tokens.begin, g->tokens.end);
}

// Whether function |i| reaches a barrier, itself or through the helpers
// its body names, for every function.
static void find_barriers(const emitter_t* e, bool* reaches) {
  const dc__program_ast_t* ast = e->ast;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    reaches[i] =
        ast->functions[i].calls_barrier || ast->functions[i].calls_grid_sync;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < ast->function_count; ++i) {
      const dc__function_t* fn = &ast->functions[i];
      if (reaches[i] || fn->body == NULL) continue;
      for (uint32_t k = fn->body->token; k < fn->body_end && !reaches[i]; ++k) {
        const dc__function_t* h = find_function(e, &e->toks[k]);
        if (h != NULL && h != fn && reaches[h - ast->functions]) {
          reaches[i] = changed = true;
        }
      }
    }
  }
}

// The names program-scope typedefs declare: the identifier before each
// ',', ';' or '[' outside brackets.
static void collect_typedefs(emitter_t* e) {
  for (uint32_t g = 0; g < e->ast->global_count; ++g) {
    const dc__global_t* global = &e->ast->globals[g];
    if (!global->is_typedef) continue;
    int depth = 0;
    for (uint32_t k = global->tokens.begin + 1; k < global->tokens.end; ++k) {
      const dc__token_t* t = &e->toks[k];
      if (dc__tok_is(t, "(") || dc__tok_is(t, "[")) ++depth;
      if (dc__tok_is(t, ")") || dc__tok_is(t, "]")) --depth;
      bool ends =
          dc__tok_is(t, ";") || dc__tok_is(t, ",") || dc__tok_is(t, "[");
      if (ends && depth <= (dc__tok_is(t, "[") ? 1 : 0) &&
          e->toks[k - 1].kind == DC_TOK_IDENT && e->typedef_count < 256) {
        e->typedefs[e->typedef_count++] = &e->toks[k - 1];
      }
    }
  }
}

// The program's name as a string literal's contents.
static const char* escape_file(dc__arena_t* arena, const char* file) {
  size_t n = strlen(file);
  char* out = dc__arena_alloc(arena, 2 * n + 1);
  if (out == NULL) return "";
  char* o = out;
  for (const char* c = file; *c; ++c) {
    if (*c == '"' || *c == '\\') *o++ = '\\';
    *o++ = (*c == '\n') ? ' ' : *c;
  }
  *o = '\0';
  return out;
}

static void emit_program(emitter_t* e) {
  const dc__program_ast_t* ast = e->ast;
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
    if (fn->is_kernel) {
      emit_kernel(e, fn);
    } else {
      emit_helper(e, fn, /*prototype=*/false);
    }
  }
  puts_out(e, "\n");
}

dc_status_t dc__cuda_codegen(dc__arena_t* arena, const dc__program_ast_t* ast,
                             const dc__cuda_codegen_options_t* options,
                             dc__diag_t* diag, dc__cuda_translation_t* out) {
  memset(out, 0, sizeof(*out));
  emitter_t* e = dc__arena_alloc(arena, sizeof(*e));
  bool* reaches = dc__arena_zalloc(arena, ast->function_count + 1, 1);
  if (e == NULL || reaches == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(e, 0, sizeof(*e));
  e->arena = arena;
  e->diag = diag;
  e->ast = ast;
  e->toks = ast->tokens;
  e->options = options;
  e->file_literal = escape_file(arena, options->file);
  dc__strbuf_init(&e->out, arena);
  collect_typedefs(e);
  find_barriers(e, reaches);
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    out->uses_grid_sync |=
        ast->functions[i].is_kernel && ast->functions[i].calls_grid_sync;
  }
  // What the prelude compiles only for programs that need it.
  if (out->uses_grid_sync) puts_out(e, "#define DC__GRID_SYNC 1\n");
  if (options->bounds_check) puts_out(e, "#define DC__BOUNDS_CHECK 1\n");
  puts_out(e, "#include \"dclua_prelude.cuh\"\n");
  emit_program(e);
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  if (e->failed) return DC_ERR_COMPILE;
  out->source = e->out.data;
  out->length = e->out.length;
  out->marks = e->marks;
  out->mark_count = e->mark_count;
  out->reaches_barrier = reaches;
  return DC_OK;
}

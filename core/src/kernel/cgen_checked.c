// cgen_checked.c: checked mode (-dc-checked, dclua --sandbox), for kernels
// nobody vetted.
//
// Every pointer is a fat pointer, dc_fptr in both preludes: its address,
// the bounds [lo, hi) of the allocation it came from, and that
// allocation's origin (a kernel argument's index, or DC_ORIGIN_OBJECT). A
// pointer comes from a kernel argument (bounded by the buffer, or by the
// __local size the dispatch gave), from an object's address or an array
// (bounded by that object), or from arithmetic on another pointer, which
// keeps its bounds; every access through one is checked against them
// (DC_AT, DC_SPAN), and a failed check ends the dispatch before the
// access. Whatever a kernel computes, it reaches no memory outside what it
// was given. A pointer could be forged only by writing the memory that
// holds one as something else, so pointers live in private variables and
// arrays only, and no cast lets memory holding one be reinterpreted.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "builtin_table.h"
#include "cgen.h"
#include "tree_walk.h"

static void put(dc__cgen_t* g, const char* text) { dc__cgen_puts(g, text); }

static void emit(dc__cgen_t* g, const dc__expr_t* e) { dc__cgen_expr(g, e); }

static bool is_pointer(const dc__ty_t* t) { return t->kind == DC_TY_POINTER; }

static bool has_op(const dc__expr_t* e, const char* op) {
  return e->op != NULL && strcmp(e->op, op) == 0;
}

bool dc__cgen_holds_pointer(const dc__ty_t* t) {
  while (t->kind == DC_TY_ARRAY) t = t->base;
  if (t->kind == DC_TY_POINTER) return true;
  if (t->kind != DC_TY_RECORD) return false;
  for (uint32_t i = 0; i < t->record->field_count; ++i) {
    if (dc__cgen_holds_pointer(t->record->fields[i].type)) return true;
  }
  return false;
}

// "T (*)": a plain pointer to |base|, what a checked access yields.
static const char* raw_pointer(dc__cgen_t* g, const dc__ty_t* base) {
  return dc__cgen_declaration(g, base, "(*)", DC__CGEN_POINTEE);
}

static const char* size_of(dc__cgen_t* g, const dc__ty_t* t) {
  const char* text = dc__arena_printf(
      g->arena, "sizeof(%s)", dc__cgen_declaration(g, t, NULL, 0));
  return text ? text : "1";
}

static void emit_index_value(dc__cgen_t* g, const dc__expr_t* index) {
  put(g, "(long long)(");
  emit(g, index);
  put(g, ")");
}

//===-- Accesses and addresses --------------------------------------------===//

// The object |index| elements (NULL: 0) past the pointer |p|, checked.
static void emit_access(dc__cgen_t* g, const dc__expr_t* p,
                        const dc__expr_t* index, const dc__token_t* at) {
  const dc__ty_t* base = p->type->base;
  dc__cgen_printf(g, "(*(%s)DC_AT(", raw_pointer(g, base));
  emit(g, p);
  put(g, ", ");
  if (index != NULL) {
    emit_index_value(g, index);
  } else {
    put(g, "0");
  }
  dc__cgen_printf(g, ", %s, %uu))", size_of(g, base), at->line);
}

// p[i] whose index range was checked before the chunk ran (cgen_ranges.c).
static void emit_prechecked(dc__cgen_t* g, const dc__expr_t* e) {
  const dc__ty_t* base = e->lhs->type->base;
  dc__cgen_printf(g, "(*(%s)DC_AT_PRECHECKED(", raw_pointer(g, base));
  emit(g, e->lhs);
  put(g, ", ");
  emit_index_value(g, e->rhs);
  dc__cgen_printf(g, ", %s))", size_of(g, base));
}

// The lvalue |x| as a pointer bounded by x itself.
static void emit_object(dc__cgen_t* g, const dc__expr_t* x) {
  put(g, "DC_FP_OBJ(&(");
  emit(g, x);
  dc__cgen_printf(g, "), %s)", size_of(g, x->type));
}

// &x: the address of an element keeps the bounds of the pointer or array
// it indexes (an address one past the end is a pointer, not an access);
// &*p is p; any other object is bounded by itself.
static void emit_address(dc__cgen_t* g, const dc__expr_t* x) {
  if (x->kind == DC_EXPR_INDEX) {
    put(g, "dc_fp_add(");
    if (is_pointer(x->lhs->type)) {
      emit(g, x->lhs);
    } else {
      emit_object(g, x->lhs);
    }
    put(g, ", ");
    emit_index_value(g, x->rhs);
    dc__cgen_printf(g, " * (long long)%s)", size_of(g, x->type));
  } else if (x->kind == DC_EXPR_UNARY && has_op(x, "*")) {
    emit(g, x->lhs);
  } else {
    emit_object(g, x);
  }
}

//===-- Operators ---------------------------------------------------------===//

// p + i, i + p, p - i (bytes, scaled here); p - q (elements).
static bool emit_arithmetic(dc__cgen_t* g, const dc__expr_t* e) {
  bool minus = has_op(e, "-");
  if (!has_op(e, "+") && !minus) return false;
  if (is_pointer(e->lhs->type) && is_pointer(e->rhs->type)) {
    dc__cgen_printf(g, "((%s)((long long)((", dc__cgen_declaration(
                                                  g, e->type, NULL, 0));
    emit(g, e->lhs);
    put(g, ").p - (");
    emit(g, e->rhs);
    dc__cgen_printf(g, ").p) / (long long)%s))",
                    size_of(g, e->lhs->type->base));
    return true;
  }
  bool left = is_pointer(e->lhs->type);
  const dc__expr_t* p = left ? e->lhs : e->rhs;
  put(g, "dc_fp_add(");
  emit(g, p);
  put(g, minus ? ", -" : ", ");
  emit_index_value(g, left ? e->rhs : e->lhs);
  dc__cgen_printf(g, " * (long long)%s)", size_of(g, p->type->base));
  return true;
}

static bool emit_binary(dc__cgen_t* g, const dc__expr_t* e) {
  bool lp = is_pointer(e->lhs->type), rp = is_pointer(e->rhs->type);
  if (!lp && !rp) return false;
  if (is_pointer(e->type) || (lp && rp && has_op(e, "-"))) {
    return emit_arithmetic(g, e);
  }
  bool logical = has_op(e, "&&") || has_op(e, "||");
  put(g, "((int)(");
  if (logical) {
    dc__cgen_condition(g, e->lhs);
    dc__cgen_printf(g, " %s ", e->op);
    dc__cgen_condition(g, e->rhs);
  } else {  // a comparison of two pointers (a null one is DC_FP_NULL)
    put(g, "(");
    emit(g, e->lhs);
    dc__cgen_printf(g, ").p %s (", e->op);
    emit(g, e->rhs);
    put(g, ").p");
  }
  put(g, "))");
  return true;
}

// ++p, p--, p += i, p -= i: dc_fp_step on the lvalue, evaluated once.
static void emit_step(dc__cgen_t* g, const dc__expr_t* p, bool minus,
                      const dc__expr_t* by, bool post) {
  put(g, "dc_fp_step(&(");
  emit(g, p);
  put(g, minus ? "), -" : "), ");
  if (by != NULL) {
    emit_index_value(g, by);
  } else {
    put(g, "1ll");
  }
  dc__cgen_printf(g, " * (long long)%s, %d)", size_of(g, p->type->base),
                  post ? 1 : 0);
}

static bool emit_unary(dc__cgen_t* g, const dc__expr_t* e) {
  if (has_op(e, "*")) {
    emit_access(g, e->lhs, NULL, e->token);
    return true;
  }
  if (has_op(e, "&")) {
    emit_address(g, e->lhs);
    return true;
  }
  if (!is_pointer(e->lhs->type)) return false;
  if (has_op(e, "!")) {
    put(g, "((int)!(");
    emit(g, e->lhs);
    put(g, ").p)");
    return true;
  }
  bool post = e->op[0] == 'x';
  emit_step(g, e->lhs, strstr(e->op, "--") != NULL, NULL, post);
  return true;
}

static bool emit_assign(dc__cgen_t* g, const dc__expr_t* e) {
  if (!is_pointer(e->lhs->type) || has_op(e, "=")) return false;
  emit_step(g, e->lhs, has_op(e, "-="), e->rhs, false);
  return true;
}

//===-- Conversions -------------------------------------------------------===//

static bool emit_cast(dc__cgen_t* g, const dc__expr_t* e) {
  switch (e->conv) {
    case DC_CONV_NULL:
      if (!is_pointer(e->type)) return false;  // an event_t
      put(g, "DC_FP_NULL");
      return true;
    case DC_CONV_POINTER:
      emit(g, e->lhs);  // a fat pointer has no pointee type
      return true;
    case DC_CONV_ARRAY_DECAY:
      emit_object(g, e->lhs);
      return true;
    case DC_CONV_POINTER_TO_INT:
      dc__cgen_printf(g, "((%s)(",
                      dc__cgen_declaration(g, e->type, NULL, 0));
      emit(g, e->lhs);
      put(g, ").p)");
      return true;
    case DC_CONV_TO_BOOL:
      if (!is_pointer(e->lhs->type)) return false;
      put(g, "((bool)((");
      emit(g, e->lhs);
      put(g, ").p != 0))");
      return true;
    default:
      return false;
  }
}

//===-- Built-ins ---------------------------------------------------------===//

static bool has_pointer_param(const dc__builtin_t* b) {
  for (uint32_t i = 0; i < b->param_count; ++i) {
    if (is_pointer(b->params[i])) return true;
  }
  return false;
}

// Argument |i| of a checked built-in call, its value in temporary
// dc_b<n>_<i>: a pointer becomes the plain pointer the built-in accesses
// through, checked for all it reaches: vloadN and vstoreN N elements at
// their offset (which becomes 0), async copies and wait_group_events
// their counts (strided on the __global side), prefetch nothing (a hint),
// the rest one element.
static void emit_builtin_arg(dc__cgen_t* g, const dc__builtin_t* b,
                             uint32_t n, uint32_t i, uint32_t line) {
  const dc__ty_t* t = b->params[i];
  const char* name = b->name;
  bool vload = b->klass == DC_BUILTIN_VLOAD;
  uint32_t offset_arg = strncmp(name, "vstore", 6) == 0 ? 1 : 0;
  if (!is_pointer(t)) {
    if (vload && i == offset_arg) {
      put(g, "0");
    } else {
      dc__cgen_printf(g, "dc_b%u_%u", n, i);
    }
    return;
  }
  const char* raw = raw_pointer(g, t->base);
  const char* size = size_of(g, t->base);
  if (strcmp(name, "prefetch") == 0) {
    dc__cgen_printf(g, "(%s)(uintptr_t)dc_b%u_%u.p", raw, n, i);
  } else if (vload) {
    uint32_t width = offset_arg ? b->params[0]->width : b->result->width;
    dc__cgen_printf(g, "(%s)DC_AT(dc_b%u_%u, (long long)dc_b%u_%u, %u * %s, "
                    "%uu)",
                    raw, n, i, n, offset_arg, width, size, line);
  } else if (b->klass == DC_BUILTIN_ASYNC) {
    bool wait = strcmp(name, "wait_group_events") == 0;
    uint32_t count = wait ? 0 : 2;
    bool strided = b->param_count == 5 && t->base->space == DC_ADDRESS_GLOBAL;
    dc__cgen_printf(g, "(%s)DC_SPAN(dc_b%u_%u, (unsigned long long)dc_b%u_%u",
                    raw, n, i, n, count);
    if (strided) {
      dc__cgen_printf(g, ", (unsigned long long)dc_b%u_3", n);
    } else {
      put(g, ", 1");
    }
    dc__cgen_printf(g, ", %s, %uu)", size, line);
  } else {
    dc__cgen_printf(g, "(%s)DC_AT(dc_b%u_%u, 0, %s, %uu)", raw, n, i, size,
                    line);
  }
}

// A built-in that takes a pointer: its arguments are evaluated once each,
// in order, into temporaries; then it is called with checked pointers.
static bool emit_builtin(dc__cgen_t* g, const dc__expr_t* e) {
  const dc__builtin_t* b = e->builtin;
  if (!has_pointer_param(b)) return false;
  uint32_t n = ++g->temps;
  bool cxx = g->hooks->cxx;
  dc__cgen_open_block(g);
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    dc__cgen_printf(g, "%s dc_b%u_%u = ", cxx ? "auto" : "__auto_type", n, i);
    emit(g, e->args[i]);
    put(g, "; ");
  }
  dc__strbuf_t* saved = g->out;
  dc__strbuf_t call;
  dc__strbuf_init(&call, g->arena);
  g->out = &call;
  const char* spelling = b->spelling ? b->spelling : b->name;
  const char* hooked = g->hooks->builtin ? g->hooks->builtin(g, b) : NULL;
  dc__cgen_printf(g, "%s(", hooked ? hooked : spelling);
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    if (i > 0) put(g, ", ");
    emit_builtin_arg(g, b, n, i, e->token->line);
  }
  put(g, ")");
  g->out = saved;
  dc__cgen_close_block(g, call.data ? call.data : "");
  return true;
}

//===-- Expressions -------------------------------------------------------===//

bool dc__cgen_checked_expr(dc__cgen_t* g, const dc__expr_t* e) {
  switch (e->kind) {
    case DC_EXPR_INDEX:
      if (!is_pointer(e->lhs->type)) return false;
      if (dc__cgen_prechecked(g, e)) {
        emit_prechecked(g, e);
      } else {
        emit_access(g, e->lhs, e->rhs, e->token);
      }
      return true;
    case DC_EXPR_MEMBER:
      if (!e->arrow) return false;
      put(g, "(");
      emit_access(g, e->lhs, NULL, e->token);
      dc__cgen_printf(g, ")." DC_USER_PREFIX "%s", e->field->name);
      return true;
    case DC_EXPR_UNARY:
      return emit_unary(g, e);
    case DC_EXPR_BINARY:
      return emit_binary(g, e);
    case DC_EXPR_ASSIGN:
      return emit_assign(g, e);
    case DC_EXPR_CAST:
      return emit_cast(g, e);
    case DC_EXPR_BUILTIN:
      return emit_builtin(g, e);
    default:
      return false;
  }
}

void dc__cgen_poll(dc__cgen_t* g, const dc__token_t* at) {
  if (!g->checked) return;
  // OpenCL C: in a function that reaches a barrier, a stopped work-item
  // leaves the loop (DC_POLL_BREAK) instead of jumping to dc_stop past
  // the barriers, which OpenCL leaves undefined (pocl miscompiles the
  // loops around such a jump even when it is never taken).
  bool leave = g->hooks->opencl && g->loop_depth > 0 && g->fn != NULL &&
               (g->fn->calls_barrier || g->fn->helper_reaches_barrier);
  dc__cgen_printf(g, leave ? " DC_POLL_BREAK(%uu);" : " DC_POLL(%uu);",
                  at->line);
}

//===-- What checked mode refuses -----------------------------------------===//

// (The front end already keeps pointer variables in private memory.)
static void refuse_member(dc__cgen_t* g, const dc__field_t* f) {
  if (!g->failed) {
    dc__diag_error(g->diag, f->line, f->col,
                   "a pointer member '%s' is not allowed in checked mode: a "
                   "pointer may be kept in private variables and arrays "
                   "only",
                   f->name);
  }
  g->failed = true;
}

// A pointer conversion that would let memory holding a pointer be read or
// written as another type (or as one, memory that holds none).
static bool forges(const dc__expr_t* e, void* ctx) {
  dc__cgen_t* g = ctx;
  if (e->kind != DC_EXPR_CAST || e->conv != DC_CONV_POINTER) return false;
  const dc__ty_t* from = e->lhs->type->base;
  const dc__ty_t* to = e->type->base;
  bool from_holds = dc__cgen_holds_pointer(from);
  bool to_holds = dc__cgen_holds_pointer(to);
  if ((!from_holds && !to_holds) ||
      (from_holds && to_holds && from->unqualified == to->unqualified)) {
    return false;
  }
  if (!g->failed) {
    dc__diag_error(g->diag, e->token->line, e->token->col,
                   "in checked mode a pointer to memory that holds pointers "
                   "cannot be converted to a pointer of another type ('%s' "
                   "to '%s')",
                   dc__ty_name(g->arena, e->lhs->type),
                   dc__ty_name(g->arena, e->type));
  }
  g->failed = true;
  return true;
}

void dc__cgen_checked_program(dc__cgen_t* g) {
  const dc__program_ast_t* ast = g->ast;
  if (ast->types != NULL) {
    uint32_t count;
    dc__record_t* const* records = dc__types_records(ast->types, &count);
    for (uint32_t i = 0; i < count; ++i) {
      const dc__record_t* r = records[i];
      for (uint32_t f = 0; f < r->field_count; ++f) {
        if (dc__cgen_holds_pointer(r->fields[f].type)) {
          refuse_member(g, &r->fields[f]);
        }
      }
    }
  }
  for (uint32_t i = 0; i < ast->function_count && !g->failed; ++i) {
    dc__stmt_any(ast->functions[i].body, forges, g);
  }
}

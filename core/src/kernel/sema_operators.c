// sema_operators.c: what each operator of OpenCL C means (6.3): which
// operands it takes, how they are converted (the usual arithmetic
// conversions, extended to vectors by 6.2.6), the type of its result,
// which results are lvalues, and the folding of integer constants with
// C's wrap-around and OpenCL C's shift counts.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "sema_internal.h"

//===-- Operators ---------------------------------------------------------===//

// The binary operators with their precedence (higher binds tighter) and
// their compound assignment forms.
static const struct {
  const char* text;
  const char* assign;
  dc__op_t op;
  int precedence;
} kBinary[] = {
    {"*", "*=", DC_OP_MUL, 10},   {"/", "/=", DC_OP_DIV, 10},
    {"%", "%=", DC_OP_MOD, 10},   {"+", "+=", DC_OP_ADD, 9},
    {"-", "-=", DC_OP_SUB, 9},    {"<<", "<<=", DC_OP_SHL, 8},
    {">>", ">>=", DC_OP_SHR, 8},  {"<", NULL, DC_OP_LT, 7},
    {">", NULL, DC_OP_GT, 7},     {"<=", NULL, DC_OP_LE, 7},
    {">=", NULL, DC_OP_GE, 7},    {"==", NULL, DC_OP_EQ, 6},
    {"!=", NULL, DC_OP_NE, 6},    {"&", "&=", DC_OP_AND, 5},
    {"^", "^=", DC_OP_XOR, 4},    {"|", "|=", DC_OP_OR, 3},
    {"&&", NULL, DC_OP_LAND, 2},  {"||", NULL, DC_OP_LOR, 1},
};
enum { kBinaryCount = sizeof(kBinary) / sizeof(kBinary[0]) };

int dc__sema_binary_operator(const dc__token_t* t, dc__op_t* op) {
  if (t->kind != DC_TOK_PUNCT) return 0;
  for (int i = 0; i < kBinaryCount; ++i) {
    if (dc__tok_is(t, kBinary[i].text)) {
      *op = kBinary[i].op;
      return kBinary[i].precedence;
    }
  }
  return 0;
}

static const char* op_text(dc__op_t op) {
  for (int i = 0; i < kBinaryCount; ++i) {
    if (kBinary[i].op == op) return kBinary[i].text;
  }
  return op == DC_OP_SELECT ? "?:" : "=";
}

bool dc__sema_assignment_operator(const dc__token_t* t, dc__op_t* out) {
  if (t->kind != DC_TOK_PUNCT) return false;
  if (dc__tok_is(t, "=")) {
    *out = DC_OP_NONE;
    return true;
  }
  for (int i = 0; i < kBinaryCount; ++i) {
    if (kBinary[i].assign && dc__tok_is(t, kBinary[i].assign)) {
      *out = kBinary[i].op;
      return true;
    }
  }
  return false;
}

// The text of |op|'s assignment form: "=" for DC_OP_NONE, "+=" for
// DC_OP_ADD, ...
static const char* assignment_text(dc__op_t op) {
  for (int i = 0; i < kBinaryCount; ++i) {
    if (kBinary[i].op == op && kBinary[i].assign) return kBinary[i].assign;
  }
  return "=";
}

static bool is_comparison(dc__op_t op) {
  return op >= DC_OP_LT && op <= DC_OP_NE;
}

static bool needs_integers(dc__op_t op) {
  return op == DC_OP_MOD || op == DC_OP_AND || op == DC_OP_XOR ||
         op == DC_OP_OR || op == DC_OP_SHL || op == DC_OP_SHR;
}

//===-- Type classes ------------------------------------------------------===//

static bool is_vector(const dc__ty_t* t) { return t->kind == DC_TY_VECTOR; }

static bool is_pointer(const dc__ty_t* t) { return t->kind == DC_TY_POINTER; }

// A scalar number or a vector of them: what arithmetic accepts.
static bool is_number(const dc__ty_t* t) {
  return dc__ty_is_arithmetic(t) || is_vector(t);
}

// An integer scalar or a vector of integers.
static bool is_integral(const dc__ty_t* t) {
  if (is_vector(t)) {
    return t->scalar != DC_SCALAR_FLOAT && t->scalar != DC_SCALAR_DOUBLE;
  }
  return dc__ty_is_integer(t);
}

static bool is_floating_scalar(dc__scalar_t scalar) {
  return scalar == DC_SCALAR_FLOAT || scalar == DC_SCALAR_DOUBLE;
}

//===-- Folding -----------------------------------------------------------===//

// The value of |l| |op| |r| for integer constants of the operation's type
// (|l|'s), with C's wrap-around and OpenCL C's shift counts (taken modulo
// the width, 6.3.j). False after an error (division by zero).
static bool fold_values(dc__sema_t* s, dc__op_t op, const dc__expr_t* l,
                        const dc__expr_t* r, uint64_t* out) {
  uint64_t a = (uint64_t)l->value.i, b = (uint64_t)r->value.i;
  int64_t sa = l->value.i, sb = r->value.i;
  dc__scalar_t scalar = dc__sema_scalar_of(l->type);
  bool uns = dc__sema_is_unsigned(scalar);
  uint64_t count = b & (dc__scalar_size(scalar) * 8 - 1);
  switch (op) {
    case DC_OP_MUL: *out = a * b; return true;
    case DC_OP_ADD: *out = a + b; return true;
    case DC_OP_SUB: *out = a - b; return true;
    case DC_OP_DIV:
    case DC_OP_MOD:
      if (b == 0) {
        dc__sema_error(s, r->token, "division by zero in a constant "
                                    "expression");
        return false;
      }
      if (uns) {
        *out = op == DC_OP_DIV ? a / b : a % b;
      } else if (sb == -1) {  // INT64_MIN / -1 would trap on the host
        *out = op == DC_OP_DIV ? 0 - a : 0;
      } else {
        *out = (uint64_t)(op == DC_OP_DIV ? sa / sb : sa % sb);
      }
      return true;
    case DC_OP_SHL: *out = a << count; return true;
    case DC_OP_SHR: *out = uns || sa >= 0 ? a >> count : ~(~a >> count);
      return true;
    case DC_OP_LT: *out = uns ? a < b : sa < sb; return true;
    case DC_OP_GT: *out = uns ? a > b : sa > sb; return true;
    case DC_OP_LE: *out = uns ? a <= b : sa <= sb; return true;
    case DC_OP_GE: *out = uns ? a >= b : sa >= sb; return true;
    case DC_OP_EQ: *out = a == b; return true;
    case DC_OP_NE: *out = a != b; return true;
    case DC_OP_AND: *out = a & b; return true;
    case DC_OP_XOR: *out = a ^ b; return true;
    case DC_OP_OR: *out = a | b; return true;
    case DC_OP_LAND: *out = a != 0 && b != 0; return true;
    case DC_OP_LOR: *out = a != 0 || b != 0; return true;
    case DC_OP_NONE:
    case DC_OP_SELECT: break;
  }
  return false;
}

// A binary node of |type|, folded to a constant when both operands are
// integer constants and the result is an integer scalar.
static dc__expr_t* make_binary(dc__sema_t* s, dc__op_t op, dc__expr_t* l,
                               dc__expr_t* r, const dc__ty_t* type) {
  if (l == NULL || r == NULL) return NULL;
  if (l->is_constant && r->is_constant && dc__ty_is_integer(type)) {
    uint64_t v;
    if (!fold_values(s, op, l, r, &v)) return NULL;
    return dc__sema_int(s, type, v, l->token);
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_BINARY, type, l->token);
  if (e == NULL) return NULL;
  e->op = op_text(op);
  e->lhs = l;
  e->rhs = r;
  return e;
}

//===-- Lvalues -----------------------------------------------------------===//

// The name under |e|, looking through components, members, elements,
// dereferences and conversions, or NULL.
static const char* name_under(const dc__expr_t* e) {
  while (e != NULL && e->kind != DC_EXPR_NAME) {
    bool through = e->kind == DC_EXPR_SWIZZLE || e->kind == DC_EXPR_MEMBER ||
                   e->kind == DC_EXPR_INDEX || e->kind == DC_EXPR_CAST ||
                   (e->kind == DC_EXPR_UNARY && e->op[0] == '*');
    e = through ? e->lhs : NULL;
  }
  return e ? e->decl->name : NULL;
}

// Names what the lvalue |e| is, for messages: "'x'", "an element of 'p'".
static const char* describe(dc__sema_t* s, const dc__expr_t* e) {
  const char* name = name_under(e);
  if (e->kind == DC_EXPR_NAME) return dc__arena_printf(s->arena, "'%s'", name);
  const char* how = e->kind == DC_EXPR_INDEX    ? "an element of"
                    : e->kind == DC_EXPR_MEMBER  ? "a member of"
                    : e->kind == DC_EXPR_SWIZZLE ? "a component of"
                    : e->kind == DC_EXPR_UNARY   ? "what is pointed to by"
                                                 : NULL;
  if (name == NULL || how == NULL) return "this expression";
  return dc__arena_printf(s->arena, "%s '%s'", how, name);
}

// The first const member of |record|, at any depth, or NULL.
static const dc__field_t* const_member(const dc__record_t* record) {
  for (uint32_t i = 0; i < record->field_count; ++i) {
    const dc__field_t* f = &record->fields[i];
    const dc__ty_t* t = f->type;
    while (t->kind == DC_TY_ARRAY) t = t->base;
    if (t->quals & DC_Q_CONST) return f;
    if (t->kind == DC_TY_RECORD && const_member(t->record)) return f;
  }
  return NULL;
}

// Checks that |e| can be stored to (|verb|: "assign to", "increment", ...).
static bool check_modifiable(dc__sema_t* s, const dc__expr_t* e,
                             const char* verb) {
  const dc__ty_t* t = e->type;
  const char* problem = NULL;
  if (!e->is_lvalue) {
    problem = e->kind == DC_EXPR_SWIZZLE && e->lhs->is_lvalue
                  ? ": it selects a component more than once"
                  : ": it is not a variable, an element or a member";
  } else if (t->kind == DC_TY_ARRAY) {
    problem = dc__arena_printf(s->arena, ": it is an array ('%s')",
                               dc__sema_ty(s, t));
  } else if (t->space == DC_ADDRESS_CONSTANT) {
    problem = " in the __constant address space";
  } else if (t->quals & DC_Q_CONST) {
    problem = dc__arena_printf(s->arena, ": its type '%s' is const",
                               dc__sema_ty(s, t));
  } else if (t->kind == DC_TY_RECORD && const_member(t->record)) {
    problem = dc__arena_printf(s->arena, ": its member '%s' is const",
                               const_member(t->record)->name);
  } else if (!dc__sema_is_complete(t)) {
    problem = dc__arena_printf(s->arena, ": it has type '%s'",
                               dc__sema_ty(s, t));
  }
  if (problem == NULL) return true;
  dc__sema_error(s, e->token, "cannot %s %s%s", verb, describe(s, e), problem);
  return false;
}

//===-- Arithmetic operands -----------------------------------------------===//

static dc__expr_t* invalid_operands(dc__sema_t* s, dc__op_t op,
                                    const dc__token_t* where,
                                    const dc__ty_t* l, const dc__ty_t* r) {
  dc__sema_error(s, where, "invalid operands to '%s' ('%s' and '%s')",
                 op_text(op), dc__sema_ty(s, l), dc__sema_ty(s, r));
  return NULL;
}

// Reports two vector types that cannot meet in |op| (OpenCL C 6.2.6: no
// implicit conversion between vector types).
static const dc__ty_t* vector_mix(dc__sema_t* s, dc__op_t op,
                                  const dc__token_t* where,
                                  const dc__ty_t* l, const dc__ty_t* r) {
  const char* a = dc__sema_ty(s, l);
  const char* b = dc__sema_ty(s, r);
  if (l->width != r->width) {
    dc__sema_error(s, where,
                   "cannot mix %s and %s in '%s': the vectors have different "
                   "widths",
                   a, b, op_text(op));
  } else {
    bool right =
        is_floating_scalar(r->scalar) && !is_floating_scalar(l->scalar);
    dc__sema_error(s, where,
                   "cannot mix %s and %s in '%s': convert one with "
                   "convert_%s()",
                   a, b, op_text(op), right ? b : a);
  }
  return NULL;
}

// The usual arithmetic conversions extended to vectors (OpenCL C 6.2.6):
// converts |*l| and |*r| (rvalues) to the type the operation is done in
// and returns it. Two vectors must have one type; a scalar meeting a vector
// is converted to the element type and repeated.
static const dc__ty_t* arith_operands(dc__sema_t* s, dc__op_t op,
                                      const dc__token_t* where,
                                      dc__expr_t** l, dc__expr_t** r) {
  const dc__ty_t* lt = (*l)->type;
  const dc__ty_t* rt = (*r)->type;
  if (!is_number(lt) || !is_number(rt)) {
    invalid_operands(s, op, where, lt, rt);
    return NULL;
  }
  if (!is_vector(lt) && !is_vector(rt)) {
    dc__scalar_t c = dc__sema_common(dc__sema_scalar_of(lt),
                                     dc__sema_scalar_of(rt));
    const dc__ty_t* type = dc__sema_scalar(s, c);
    *l = dc__sema_arith(s, *l, type, true);
    *r = dc__sema_arith(s, *r, type, true);
    return *l && *r ? type : NULL;
  }
  if (is_vector(lt) && is_vector(rt)) {
    return lt == rt ? lt : vector_mix(s, op, where, lt, rt);
  }
  dc__expr_t** scalar = is_vector(lt) ? r : l;
  const dc__ty_t* vt = is_vector(lt) ? lt : rt;
  if (dc__ty_is_floating((*scalar)->type) && !is_floating_scalar(vt->scalar)) {
    dc__sema_error(s, where,
                   "cannot mix %s and %s in '%s': the %s would lose its "
                   "fraction; cast it, or convert the vector with "
                   "convert_%s%u()",
                   dc__sema_ty(s, lt), dc__sema_ty(s, rt), op_text(op),
                   dc__sema_ty(s, (*scalar)->type),
                   dc__sema_ty(s, (*scalar)->type), vt->width);
    return NULL;
  }
  *scalar = dc__sema_splat(s, *scalar, vt, true);
  return *scalar ? vt : NULL;
}

//===-- Pointer arithmetic ------------------------------------------------===//

bool dc__sema_check_steppable(dc__sema_t* s, const dc__ty_t* pointer,
                              const dc__token_t* where) {
  const dc__ty_t* base = pointer->base;
  if (dc__sema_is_complete(base)) return true;
  dc__sema_error(s, where,
                 "arithmetic on '%s' needs the size of what it points to%s",
                 dc__sema_ty(s, pointer),
                 base->kind == DC_TY_VOID ? ": cast it to a pointer to an "
                                            "object type first"
                                          : "");
  return false;
}

// p + i, i + p, p - i: the pointer's type; p - q: ptrdiff_t.
static dc__expr_t* pointer_additive(dc__sema_t* s, dc__op_t op,
                                    const dc__token_t* where, dc__expr_t* l,
                                    dc__expr_t* r) {
  const dc__ty_t* lt = l->type;
  const dc__ty_t* rt = r->type;
  if (is_pointer(lt) && is_pointer(rt) && op == DC_OP_SUB) {
    if (lt->base->space != rt->base->space ||
        lt->base->unqualified != rt->base->unqualified) {
      dc__sema_error(s, where,
                     "cannot subtract '%s' from '%s': they point to "
                     "different types or address spaces",
                     dc__sema_ty(s, rt), dc__sema_ty(s, lt));
      return NULL;
    }
    if (!dc__sema_check_steppable(s, lt, where)) return NULL;
    return make_binary(s, op, l, r, dc__sema_scalar(s, DC_SCALAR_PTRDIFF_T));
  }
  const dc__ty_t* pt = is_pointer(lt) ? lt : rt;
  const dc__ty_t* it = is_pointer(lt) ? rt : lt;
  if (!dc__ty_is_integer(it) || (op == DC_OP_SUB && !is_pointer(lt))) {
    return invalid_operands(s, op, where, lt, rt);
  }
  if (!dc__sema_check_steppable(s, pt, where)) return NULL;
  return make_binary(s, op, l, r, pt);
}

// p == q, p < q, p == 0, ...: pointers into one address space, to one
// type or one of them void*; a null pointer constant meets any pointer.
static dc__expr_t* pointer_compare(dc__sema_t* s, dc__op_t op,
                                   const dc__token_t* where, dc__expr_t* l,
                                   dc__expr_t* r) {
  const dc__ty_t* lt = l->type;
  const dc__ty_t* rt = r->type;
  bool equality = op == DC_OP_EQ || op == DC_OP_NE;
  bool l_null = dc__sema_is_null_pointer(l);
  if (!is_pointer(lt) || !is_pointer(rt) || l_null ||
      dc__sema_is_null_pointer(r)) {
    dc__expr_t** null = l_null || !is_pointer(lt) ? &l : &r;
    const dc__ty_t* pt = null == &l ? rt : lt;
    if (!equality || !dc__sema_is_null_pointer(*null) || !is_pointer(pt)) {
      return invalid_operands(s, op, where, lt, rt);
    }
    *null = dc__sema_null_pointer(s, *null, pt, true);
    return make_binary(s, op, l, r, dc__sema_int_ty(s));
  }
  if (lt->base->space != rt->base->space) {
    dc__sema_error(s, where,
                   "cannot compare '%s' and '%s': they point into different "
                   "address spaces",
                   dc__sema_ty(s, lt), dc__sema_ty(s, rt));
    return NULL;
  }
  if (lt->base->unqualified != rt->base->unqualified) {
    bool l_void = lt->base->kind == DC_TY_VOID;
    if (!l_void && rt->base->kind != DC_TY_VOID) {
      dc__sema_error(s, where,
                     "cannot compare '%s' and '%s': they point to different "
                     "types",
                     dc__sema_ty(s, lt), dc__sema_ty(s, rt));
      return NULL;
    }
    if (l_void) {
      r = dc__sema_cast_node(s, r, lt, DC_CONV_POINTER, true);
    } else {
      l = dc__sema_cast_node(s, l, rt, DC_CONV_POINTER, true);
    }
  }
  return make_binary(s, op, l, r, dc__sema_int_ty(s));
}

//===-- Binary operators --------------------------------------------------===//

// && and ||: scalars (numbers or pointers) give an int; with a vector,
// component by component, a mask (OpenCL C 6.3.h).
static dc__expr_t* logical(dc__sema_t* s, dc__op_t op, const dc__token_t* where,
                           dc__expr_t* l, dc__expr_t* r) {
  if (is_vector(l->type) || is_vector(r->type)) {
    const dc__ty_t* t = arith_operands(s, op, where, &l, &r);
    return t ? make_binary(s, op, l, r, dc__sema_mask_type(s, t)) : NULL;
  }
  if (!dc__ty_is_scalar(l->type) || !dc__ty_is_scalar(r->type)) {
    return invalid_operands(s, op, where, l->type, r->type);
  }
  return make_binary(s, op, l, r, dc__sema_int_ty(s));
}

// << and >> (6.3.j): integers; the result has the promoted left operand's
// type; a vector shifted by a scalar repeats the scalar.
static dc__expr_t* shift(dc__sema_t* s, dc__op_t op, const dc__token_t* where,
                         dc__expr_t* l, dc__expr_t* r) {
  const dc__ty_t* lt = l->type;
  const dc__ty_t* rt = r->type;
  if (!is_integral(lt) || !is_integral(rt)) {
    dc__sema_error(s, where, "the operands of '%s' must be integers, not '%s'",
                   op_text(op), dc__sema_ty(s, is_integral(lt) ? rt : lt));
    return NULL;
  }
  if (!is_vector(lt)) {
    if (is_vector(rt)) {
      dc__sema_error(s, where,
                     "cannot shift the scalar '%s' by the vector '%s'",
                     dc__sema_ty(s, lt), dc__sema_ty(s, rt));
      return NULL;
    }
    l = dc__sema_arith(s, l, dc__sema_scalar(s, dc__sema_promote(
                                                    dc__sema_scalar_of(lt))),
                       true);
    r = dc__sema_arith(s, r, dc__sema_scalar(s, dc__sema_promote(
                                                    dc__sema_scalar_of(rt))),
                       true);
  } else if (!is_vector(rt)) {
    r = dc__sema_splat(s, r, lt, true);
  } else if (lt != rt) {
    vector_mix(s, op, where, lt, rt);
    return NULL;
  }
  return l ? make_binary(s, op, l, r, l->type) : NULL;
}

dc__expr_t* dc__sema_binary(dc__sema_t* s, dc__op_t op,
                            const dc__token_t* where, dc__expr_t* l,
                            dc__expr_t* r) {
  l = dc__sema_rvalue(s, l);
  r = dc__sema_rvalue(s, r);
  if (l == NULL || r == NULL) return NULL;
  if (op == DC_OP_LAND || op == DC_OP_LOR) return logical(s, op, where, l, r);
  if (is_pointer(l->type) || is_pointer(r->type)) {
    if (op == DC_OP_ADD || op == DC_OP_SUB) {
      return pointer_additive(s, op, where, l, r);
    }
    if (is_comparison(op)) return pointer_compare(s, op, where, l, r);
    return invalid_operands(s, op, where, l->type, r->type);
  }
  if (op == DC_OP_SHL || op == DC_OP_SHR) return shift(s, op, where, l, r);
  const dc__ty_t* t = arith_operands(s, op, where, &l, &r);
  if (t == NULL) return NULL;
  if (needs_integers(op) && !is_integral(t)) {
    dc__sema_error(s, where, "the operands of '%s' must be integers, not '%s'",
                   op_text(op), dc__sema_ty(s, t));
    return NULL;
  }
  // An integer division by zero traps: on the CPU it would end the host.
  if ((op == DC_OP_DIV || op == DC_OP_MOD) && is_integral(t) &&
      r->is_constant && r->value.i == 0) {
    dc__sema_error(s, r->token, "division by zero");
    return NULL;
  }
  return make_binary(s, op, l, r,
                     is_comparison(op) ? dc__sema_mask_type(s, t) : t);
}

dc__expr_t* dc__sema_comma(dc__sema_t* s, dc__expr_t* l, dc__expr_t* r) {
  r = dc__sema_rvalue(s, r);
  if (l == NULL || r == NULL) return NULL;
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_BINARY, r->type, l->token);
  if (e == NULL) return NULL;
  e->op = ",";
  e->lhs = l;
  e->rhs = r;
  return e;
}

//===-- Unary operators ---------------------------------------------------===//

static dc__expr_t* make_unary(dc__sema_t* s, const char* op, dc__expr_t* e,
                              const dc__ty_t* type, const dc__token_t* where) {
  dc__expr_t* u = dc__sema_node(s, DC_EXPR_UNARY, type, where);
  if (u == NULL) return NULL;
  u->op = op;
  u->lhs = e;
  return u;
}

// -e, +e, ~e folded when |e| is a constant (an integer, or a floating
// constant for - and +).
static dc__expr_t* fold_unary(dc__sema_t* s, char op, dc__expr_t* e,
                              const dc__token_t* where) {
  if (e->kind == DC_EXPR_FLOAT && (op == '-' || op == '+')) {
    dc__expr_t* f = dc__sema_node(s, DC_EXPR_FLOAT, e->type, where);
    if (f != NULL) f->value.f = op == '-' ? -e->value.f : e->value.f;
    return f;
  }
  uint64_t a = (uint64_t)e->value.i;
  uint64_t v = op == '-' ? 0 - a : op == '~' ? ~a : op == '!' ? a == 0 : a;
  const dc__ty_t* type = op == '!' ? dc__sema_int_ty(s) : e->type;
  return dc__sema_int(s, type, v, where);
}

// -e, +e, ~e, !e (6.3.c, 6.3.f, 6.3.g).
static dc__expr_t* unary_value(dc__sema_t* s, const dc__token_t* where,
                               char op, dc__expr_t* e) {
  e = dc__sema_rvalue(s, e);
  if (e == NULL) return NULL;
  const dc__ty_t* t = e->type;
  bool ok = op == '!' ? dc__ty_is_scalar(t) || is_vector(t)
            : op == '~' ? is_integral(t)
                        : is_number(t);
  if (!ok) {
    dc__sema_error(s, where, "invalid operand to unary '%c' ('%s')", op,
                   dc__sema_ty(s, t));
    return NULL;
  }
  const dc__ty_t* result = t;
  if (op == '!') {
    result = dc__sema_mask_type(s, t);
  } else if (dc__ty_is_arithmetic(t)) {
    e = dc__sema_arith(s, e, dc__sema_scalar(s, dc__sema_promote(
                                                    dc__sema_scalar_of(t))),
                       true);
    if (e == NULL) return NULL;
    result = e->type;
  }
  bool foldable = (e->is_constant && dc__ty_is_integer(e->type)) ||
                  (e->kind == DC_EXPR_FLOAT && op != '!' && op != '~');
  if (foldable) return fold_unary(s, op, e, where);
  static const char* const kOps[] = {"-", "+", "~", "!"};
  return make_unary(s, kOps[strchr("-+~!", op) - "-+~!"], e, result, where);
}

// &e: a pointer into the address space |e| lives in.
static dc__expr_t* address_of(dc__sema_t* s, const dc__token_t* where,
                              dc__expr_t* e) {
  if (e->kind == DC_EXPR_SWIZZLE) {
    dc__sema_error(s, where, "cannot take the address of a vector component");
    return NULL;
  }
  if (!e->is_lvalue) {
    dc__sema_error(s, where,
                   "cannot take the address of a value of type '%s': '&' "
                   "needs a variable, an element or a member",
                   dc__sema_ty(s, e->type));
    return NULL;
  }
  dc__sema_mark_assigned(e);
  return make_unary(s, "&", e, dc__ty_pointer(s->types, e->type), where);
}

// *e: the lvalue |e| points to, in the pointer's address space.
static dc__expr_t* dereference(dc__sema_t* s, const dc__token_t* where,
                               dc__expr_t* e) {
  e = dc__sema_rvalue(s, e);
  if (e == NULL) return NULL;
  if (!is_pointer(e->type) || e->type->base->kind == DC_TY_VOID) {
    dc__sema_error(s, where, "cannot dereference '%s'%s",
                   dc__sema_ty(s, e->type),
                   is_pointer(e->type) ? ": cast it to a pointer to an object "
                                         "type first"
                                       : ": it is not a pointer");
    return NULL;
  }
  dc__expr_t* u = make_unary(s, "*", e, e->type->base, where);
  if (u != NULL) u->is_lvalue = true;
  return u;
}

// ++e, --e, e++, e-- on a modifiable number, vector or pointer.
static dc__expr_t* increment(dc__sema_t* s, const dc__token_t* where,
                             dc__expr_t* e, bool postfix) {
  bool up = where->text[0] == '+';
  if (!check_modifiable(s, e, up ? "increment" : "decrement")) return NULL;
  const dc__ty_t* t = e->type->unqualified;
  if (is_pointer(t) ? !dc__sema_check_steppable(s, t, where) : !is_number(t)) {
    if (!is_pointer(t)) {
      dc__sema_error(s, where, "cannot %s a value of type '%s'",
                     up ? "increment" : "decrement", dc__sema_ty(s, t));
    }
    return NULL;
  }
  dc__sema_mark_assigned(e);
  const char* op = postfix ? (up ? "x++" : "x--") : (up ? "++x" : "--x");
  return make_unary(s, op, e, t, postfix ? e->token : where);
}

dc__expr_t* dc__sema_unary(dc__sema_t* s, const dc__token_t* op,
                           dc__expr_t* e) {
  if (e == NULL) return NULL;
  if (dc__tok_is(op, "++") || dc__tok_is(op, "--")) {
    return increment(s, op, e, /*postfix=*/false);
  }
  switch (op->text[0]) {
    case '&': return address_of(s, op, e);
    case '*': return dereference(s, op, e);
    default: return unary_value(s, op, op->text[0], e);
  }
}

dc__expr_t* dc__sema_postfix_step(dc__sema_t* s, const dc__token_t* op,
                                  dc__expr_t* e) {
  return e ? increment(s, op, e, /*postfix=*/true) : NULL;
}

//===-- Conditional expressions -------------------------------------------===//

// Converts both arms of a '?:' to |type|.
static bool arms_to(dc__sema_t* s, dc__expr_t** a, dc__expr_t** b,
                    const dc__ty_t* type) {
  *a = dc__sema_convert(s, *a, type, "the operands of '?:'");
  *b = *a ? dc__sema_convert(s, *b, type, "the operands of '?:'") : NULL;
  return *b != NULL;
}

// The type both pointer arms of a '?:' take: pointers into one space, to
// one type (qualifiers joined) or one of them void*; or a null constant.
// NULL if there is none.
static const dc__ty_t* pointer_arms(dc__sema_t* s, const dc__expr_t* a,
                                    const dc__expr_t* b) {
  if (dc__sema_is_null_pointer(a) && is_pointer(b->type)) return b->type;
  if (dc__sema_is_null_pointer(b) && is_pointer(a->type)) return a->type;
  if (!is_pointer(a->type) || !is_pointer(b->type)) return NULL;
  const dc__ty_t* pa = a->type->base;
  const dc__ty_t* pb = b->type->base;
  if (pa->space != pb->space) return NULL;
  const dc__ty_t* base = pa->unqualified == pb->unqualified ? pa
                         : pa->kind == DC_TY_VOID          ? pa
                         : pb->kind == DC_TY_VOID          ? pb
                                                           : NULL;
  if (base == NULL) return NULL;
  base = dc__ty_qualified(s->types, base, pa->quals | pb->quals, pa->space);
  return dc__ty_pointer(s->types, base);
}

// The type of c ? a : b for a scalar condition (C99 6.5.15, OpenCL C
// 6.3.i): numbers meet as in arithmetic, vectors as in 6.2.6; pointers,
// records and void as C has them.
static const dc__ty_t* arms_type(dc__sema_t* s, const dc__token_t* where,
                                 dc__expr_t** a, dc__expr_t** b) {
  const dc__ty_t* ta = (*a)->type;
  const dc__ty_t* tb = (*b)->type;
  if (is_number(ta) && is_number(tb)) {
    return arith_operands(s, DC_OP_SELECT, where, a, b);
  }
  const dc__ty_t* t = NULL;
  if (is_pointer(ta) || is_pointer(tb)) {
    t = pointer_arms(s, *a, *b);
  } else if (ta == tb && (ta->kind == DC_TY_RECORD || ta->kind == DC_TY_VOID ||
                          ta->kind == DC_TY_EVENT)) {
    return ta;
  }
  if (t == NULL) {
    bool spaces = is_pointer(ta) && is_pointer(tb) &&
                  ta->base->space != tb->base->space;
    dc__sema_error(s, where, "the operands of '?:' have incompatible types "
                             "('%s' and '%s')%s",
                   dc__sema_ty(s, ta), dc__sema_ty(s, tb),
                   spaces ? ": they point into different address spaces" : "");
    return NULL;
  }
  return arms_to(s, a, b, t) ? t : NULL;
}

// The type of c ? a : b for a vector condition: a component-wise select
// whose operands have as many components as |c|, each of the same size.
static const dc__ty_t* select_type(dc__sema_t* s, const dc__token_t* where,
                                   const dc__ty_t* c, dc__expr_t** a,
                                   dc__expr_t** b) {
  if (!is_integral(c)) {
    dc__sema_error(s, where, "the condition of '?:' must be a scalar or an "
                             "integer vector, not %s", dc__sema_ty(s, c));
    return NULL;
  }
  const dc__ty_t* t = arith_operands(s, DC_OP_SELECT, where, a, b);
  if (t == NULL) return NULL;
  if (!is_vector(t)) t = dc__ty_vector(s->types, t->scalar, c->width);
  if (t->width != c->width ||
      dc__scalar_size(t->scalar) != dc__scalar_size(c->scalar)) {
    dc__sema_error(s, where, "the condition of '?:' has type %s but the "
                             "operands %s: they need as many components, each "
                             "of the same size",
                   dc__sema_ty(s, c), dc__sema_ty(s, t));
    return NULL;
  }
  return arms_to(s, a, b, t) ? t : NULL;
}

dc__expr_t* dc__sema_select(dc__sema_t* s, const dc__token_t* where,
                            dc__expr_t* c, dc__expr_t* a, dc__expr_t* b) {
  c = dc__sema_rvalue(s, c);
  a = dc__sema_rvalue(s, a);
  b = dc__sema_rvalue(s, b);
  if (c == NULL || a == NULL || b == NULL) return NULL;
  const dc__ty_t* t;
  if (is_vector(c->type)) {
    t = select_type(s, where, c->type, &a, &b);
  } else {
    c = dc__sema_condition(s, c);
    t = c ? arms_type(s, where, &a, &b) : NULL;
  }
  if (t == NULL) return NULL;
  if (c->is_constant && a->is_constant && b->is_constant &&
      dc__ty_is_integer(t)) {
    return dc__sema_int(s, t, (uint64_t)(c->value.i ? a : b)->value.i,
                        c->token);
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_COND, t, c->token);
  if (e == NULL) return NULL;
  e->cond = c;
  e->lhs = a;
  e->rhs = b;
  return e;
}

//===-- Assignment --------------------------------------------------------===//

// The value a compound assignment |l| op= |r| stores before converting it
// back: |r| converted as in |l| op |r|. The node's |rhs| is that operand;
// the operation is done in its type (for shifts: in |l|'s promoted type).
static dc__expr_t* compound_operand(dc__sema_t* s, dc__op_t op,
                                    const dc__token_t* where, dc__expr_t* l,
                                    dc__expr_t* r) {
  dc__expr_t* value = dc__sema_binary(s, op, where, l, r);
  if (value == NULL) return NULL;
  const dc__ty_t* lt = l->type->unqualified;
  const dc__ty_t* vt = value->type;
  bool fits =
      vt == lt || (dc__ty_is_arithmetic(vt) && dc__ty_is_arithmetic(lt));
  if (!fits) {
    dc__sema_error(s, where, "cannot convert '%s' to '%s' in '%s='",
                   dc__sema_ty(s, vt), dc__sema_ty(s, lt), op_text(op));
    return NULL;
  }
  // A folded constant has no operands left: |r| is then one too.
  return value->kind == DC_EXPR_BINARY ? value->rhs
                                       : dc__sema_rvalue(s, r);
}

dc__expr_t* dc__sema_assign(dc__sema_t* s, const dc__token_t* where,
                            dc__op_t op, dc__expr_t* l, dc__expr_t* r) {
  if (!check_modifiable(s, l, "assign to")) return NULL;
  dc__expr_t* value = op == DC_OP_NONE
                          ? dc__sema_convert(s, r, l->type, "assignment")
                          : compound_operand(s, op, where, l, r);
  if (value == NULL) return NULL;
  dc__sema_mark_assigned(l);
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_ASSIGN, l->type->unqualified,
                                l->token);
  if (e == NULL) return NULL;
  e->op = assignment_text(op);
  e->lhs = l;
  e->rhs = value;
  return e;
}

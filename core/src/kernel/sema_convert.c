// sema_convert.c: the conversions of OpenCL C (sections 6.2.1-6.2.6, C99
// 6.3 where OpenCL defers to it) and the folding of integer constants.
//
// Every conversion the analysis inserts is a DC_EXPR_CAST node, so code
// generators never apply C's or OpenCL's rules themselves. Conversions of
// constants are folded into new constant nodes instead: a generator then
// prints a value already of the right type, and no arithmetic the user
// wrote on constants (a shift past the width, a signed overflow) is left
// for a host compiler to treat as undefined.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <string.h>

#include "sema_internal.h"
#include "tree_walk.h"

//===-- Nodes -------------------------------------------------------------===//

dc__expr_t* dc__sema_node(dc__sema_t* s, dc__expr_kind_t kind,
                          const dc__ty_t* type, const dc__token_t* token) {
  dc__expr_t* e = type ? dc__arena_zalloc(s->arena, 1, sizeof(*e)) : NULL;
  if (e == NULL) {
    dc__sema_error(s, token, "out of memory while compiling");
    return NULL;
  }
  e->kind = kind;
  e->type = type;
  e->token = token;
  return e;
}

dc__expr_t* dc__sema_int(dc__sema_t* s, const dc__ty_t* type, uint64_t bits,
                         const dc__token_t* token) {
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_INT, type, token);
  if (e == NULL) return NULL;
  e->is_constant = true;
  e->value.i = dc__sema_wrap(dc__sema_scalar_of(type), bits);
  return e;
}

dc__expr_t* dc__sema_cast_node(dc__sema_t* s, dc__expr_t* e,
                               const dc__ty_t* to, dc__conv_t conv,
                               bool implicit) {
  if (e == NULL) return NULL;
  dc__expr_t* c = dc__sema_node(s, DC_EXPR_CAST, to, e->token);
  if (c == NULL) return NULL;
  c->lhs = e;
  c->conv = conv;
  c->implicit = implicit;
  return c;
}

const char* dc__sema_ty(dc__sema_t* s, const dc__ty_t* type) {
  return dc__ty_name(s->arena, type);
}

//===-- Types -------------------------------------------------------------===//

const dc__ty_t* dc__sema_scalar(dc__sema_t* s, dc__scalar_t scalar) {
  return dc__ty_scalar(s->types, scalar);
}

const dc__ty_t* dc__sema_int_ty(dc__sema_t* s) {
  return dc__ty_scalar(s->types, DC_SCALAR_INT);
}

dc__scalar_t dc__sema_scalar_of(const dc__ty_t* t) {
  return t->kind == DC_TY_ENUM ? DC_SCALAR_INT : t->scalar;
}

bool dc__sema_is_unsigned(dc__scalar_t scalar) {
  switch (scalar) {
    case DC_SCALAR_BOOL:
    case DC_SCALAR_UCHAR:
    case DC_SCALAR_USHORT:
    case DC_SCALAR_UINT:
    case DC_SCALAR_ULONG:
    case DC_SCALAR_SIZE_T:
      return true;
    default:
      return false;
  }
}

// The integer conversion rank of C99 6.3.1.1, floating types above all.
static int rank_of(dc__scalar_t scalar) {
  switch (scalar) {
    case DC_SCALAR_BOOL: return 0;
    case DC_SCALAR_CHAR:
    case DC_SCALAR_UCHAR: return 1;
    case DC_SCALAR_SHORT:
    case DC_SCALAR_USHORT: return 2;
    case DC_SCALAR_INT:
    case DC_SCALAR_UINT: return 3;
    case DC_SCALAR_FLOAT: return 5;
    case DC_SCALAR_DOUBLE: return 6;
    default: return 4;  // long, ulong, size_t, ptrdiff_t
  }
}

dc__scalar_t dc__sema_promote(dc__scalar_t scalar) {
  return rank_of(scalar) < 3 ? DC_SCALAR_INT : scalar;
}

// size_t and ptrdiff_t are typedefs of ulong and long in OpenCL C; where
// two types of one rank and signedness meet, the plain one wins.
static dc__scalar_t plain_of(dc__scalar_t scalar) {
  if (scalar == DC_SCALAR_SIZE_T) return DC_SCALAR_ULONG;
  if (scalar == DC_SCALAR_PTRDIFF_T) return DC_SCALAR_LONG;
  return scalar;
}

dc__scalar_t dc__sema_common(dc__scalar_t a, dc__scalar_t b) {
  if (a == DC_SCALAR_DOUBLE || b == DC_SCALAR_DOUBLE) return DC_SCALAR_DOUBLE;
  if (a == DC_SCALAR_FLOAT || b == DC_SCALAR_FLOAT) return DC_SCALAR_FLOAT;
  a = dc__sema_promote(a);
  b = dc__sema_promote(b);
  if (a == b) return a;
  int ra = rank_of(a), rb = rank_of(b);
  bool ua = dc__sema_is_unsigned(a), ub = dc__sema_is_unsigned(b);
  if (ua == ub) return ra > rb ? a : rb > ra ? b : plain_of(a);
  dc__scalar_t u = ua ? a : b, i = ua ? b : a;
  // A signed type of a higher rank holds every value of the unsigned one
  // here (long and int), so it wins; otherwise the unsigned type does.
  return rank_of(u) >= rank_of(i) ? u : i;
}

// The signed integer scalar of |size| bytes.
static dc__scalar_t signed_of_size(uint32_t size) {
  switch (size) {
    case 1: return DC_SCALAR_CHAR;
    case 2: return DC_SCALAR_SHORT;
    case 4: return DC_SCALAR_INT;
    default: return DC_SCALAR_LONG;
  }
}

const dc__ty_t* dc__sema_mask_type(dc__sema_t* s, const dc__ty_t* t) {
  if (t->kind != DC_TY_VECTOR) return dc__sema_int_ty(s);
  dc__scalar_t m = signed_of_size(dc__scalar_size(t->scalar));
  return dc__ty_vector(s->types, m, t->width);
}

bool dc__sema_is_complete(const dc__ty_t* t) {
  switch (t->kind) {
    case DC_TY_VOID: return false;
    case DC_TY_RECORD: return t->record->is_complete;
    case DC_TY_ARRAY: return t->length > 0 && dc__sema_is_complete(t->base);
    default: return true;
  }
}

//===-- Constants ---------------------------------------------------------===//

int64_t dc__sema_wrap(dc__scalar_t scalar, uint64_t bits) {
  switch (scalar) {
    case DC_SCALAR_BOOL: return bits != 0;
    case DC_SCALAR_CHAR: return (int8_t)bits;
    case DC_SCALAR_UCHAR: return (uint8_t)bits;
    case DC_SCALAR_SHORT: return (int16_t)bits;
    case DC_SCALAR_USHORT: return (uint16_t)bits;
    case DC_SCALAR_INT: return (int32_t)bits;
    case DC_SCALAR_UINT: return (uint32_t)bits;
    default: return (int64_t)bits;  // 64-bit types keep every bit
  }
}

bool dc__sema_is_null_pointer(const dc__expr_t* e) {
  if (e->is_constant && dc__ty_is_integer(e->type)) return e->value.i == 0;
  return e->kind == DC_EXPR_CAST && e->conv == DC_CONV_NULL &&
         e->type->kind == DC_TY_POINTER && e->type->base->kind == DC_TY_VOID &&
         e->type->base->quals == 0 &&
         e->type->base->space == DC_ADDRESS_PRIVATE;
}

bool dc__sema_is_arithmetic_constant(const dc__expr_t* e) {
  return e->is_constant || e->kind == DC_EXPR_FLOAT;
}

// The value of the integer constant |e| as a double.
static double int_value_as_double(const dc__expr_t* e) {
  if (dc__sema_is_unsigned(dc__sema_scalar_of(e->type))) {
    return (double)(uint64_t)e->value.i;
  }
  return (double)e->value.i;
}

// True if the floating value |v| truncated fits the integer scalar |to|,
// so that converting it is defined (C99 6.3.1.4).
static bool fits_integer(double v, dc__scalar_t to) {
  if (to == DC_SCALAR_BOOL) return !isnan(v);
  uint32_t bits = dc__scalar_size(to) * 8;
  double t = trunc(v);
  if (dc__sema_is_unsigned(to)) return t >= 0 && t < ldexp(1.0, (int)bits);
  return t >= -ldexp(1.0, (int)bits - 1) && t < ldexp(1.0, (int)bits - 1);
}

// A floating constant of |to| with the value |v| rounded to it.
static dc__expr_t* float_constant(dc__sema_t* s, const dc__ty_t* to,
                                  double v, const dc__token_t* token) {
  dc__expr_t* f = dc__sema_node(s, DC_EXPR_FLOAT, to, token);
  if (f != NULL) f->value.f = to->scalar == DC_SCALAR_FLOAT ? (float)v : v;
  return f;
}

// |e| (a constant) converted to the arithmetic scalar type |to| as a new
// constant, or NULL when it cannot be folded (|e| is not a constant, or a
// floating value out of the integer type's range).
static dc__expr_t* fold_conversion(dc__sema_t* s, dc__expr_t* e,
                                   const dc__ty_t* to) {
  dc__scalar_t target = dc__sema_scalar_of(to);
  bool to_floating = dc__ty_is_floating(to);
  if (e->is_constant && dc__ty_is_integer(e->type)) {
    if (to_floating) {
      return float_constant(s, to, int_value_as_double(e), e->token);
    }
    return dc__sema_int(s, to, (uint64_t)e->value.i, e->token);
  }
  if (e->kind != DC_EXPR_FLOAT) return NULL;
  if (to_floating) return float_constant(s, to, e->value.f, e->token);
  if (target == DC_SCALAR_BOOL) {
    return dc__sema_int(s, to, e->value.f != 0.0, e->token);
  }
  if (!fits_integer(e->value.f, target)) return NULL;
  double t = trunc(e->value.f);
  uint64_t bits = t >= 0x1p63 ? (uint64_t)t : (uint64_t)(int64_t)t;
  return dc__sema_int(s, to, bits, e->token);
}

//===-- Conversions -------------------------------------------------------===//

void dc__sema_mark_assigned(const dc__expr_t* e) {
  dc__decl_t* d = dc__expr_root(e);
  if (d != NULL) d->is_assigned = true;
}

dc__expr_t* dc__sema_rvalue(dc__sema_t* s, dc__expr_t* e) {
  if (e == NULL) return NULL;
  const dc__ty_t* t = e->type;
  if (t->kind == DC_TY_ARRAY) {  // the array's address is taken
    dc__sema_mark_assigned(e);
    const dc__ty_t* p = dc__ty_pointer(s->types, t->base);
    return dc__sema_cast_node(s, e, p, DC_CONV_ARRAY_DECAY, true);
  }
  if (t == t->unqualified || t->kind == DC_TY_VOID) return e;
  return dc__sema_cast_node(s, e, t->unqualified, DC_CONV_NONE, true);
}

dc__expr_t* dc__sema_arith(dc__sema_t* s, dc__expr_t* e, const dc__ty_t* to,
                           bool implicit) {
  if (e == NULL || to == NULL) return NULL;
  if (e->type == to) return e;
  dc__expr_t* folded = fold_conversion(s, e, to);
  if (folded != NULL) return folded;
  if (e->kind == DC_EXPR_FLOAT && dc__ty_is_integer(to)) {
    dc__sema_warning(s, e->token,
                     "%g does not fit '%s': the converted value is undefined",
                     e->value.f, dc__sema_ty(s, to));
  }
  dc__conv_t conv = to->kind == DC_TY_SCALAR && to->scalar == DC_SCALAR_BOOL
                        ? DC_CONV_TO_BOOL
                        : DC_CONV_ARITH;
  return dc__sema_cast_node(s, e, to, conv, implicit);
}

// -(x converted to int or long), for a bool cast to an integer vector.
static dc__expr_t* bool_mask(dc__sema_t* s, dc__expr_t* e,
                             const dc__ty_t* element) {
  bool wide = dc__scalar_size(element->scalar) == 8;
  const dc__ty_t* t =
      dc__sema_scalar(s, wide ? DC_SCALAR_LONG : DC_SCALAR_INT);
  e = dc__sema_arith(s, e, t, /*implicit=*/true);
  dc__expr_t* minus = e ? dc__sema_node(s, DC_EXPR_UNARY, t, e->token) : NULL;
  if (minus == NULL) return NULL;
  minus->op = "-";
  minus->lhs = e;
  return minus;
}

dc__expr_t* dc__sema_splat(dc__sema_t* s, dc__expr_t* e,
                           const dc__ty_t* vector, bool implicit) {
  const dc__ty_t* element = dc__sema_scalar(s, vector->scalar);
  // An explicit cast of a bool to an integer vector sets every bit of
  // each component for true (6.2.2): (uchar4)true is 255 in each.
  if (!implicit && e != NULL && e->type->kind == DC_TY_SCALAR &&
      e->type->scalar == DC_SCALAR_BOOL && dc__ty_is_integer(element)) {
    e = bool_mask(s, e, element);
  }
  e = dc__sema_arith(s, e, element, /*implicit=*/true);
  return dc__sema_cast_node(s, e, vector, DC_CONV_SPLAT, implicit);
}

dc__expr_t* dc__sema_null_pointer(dc__sema_t* s, dc__expr_t* e,
                                  const dc__ty_t* to, bool implicit) {
  // (void*)0 becomes a null pointer of |to| directly, not through void*,
  // so that it fits a pointer into any address space.
  if (e->kind == DC_EXPR_CAST && e->conv == DC_CONV_NULL) e = e->lhs;
  return dc__sema_cast_node(s, e, to, DC_CONV_NULL, implicit);
}

// Reports that |e| cannot become |to| in |context|, with |why| (may be "")
// appended.
static dc__expr_t* cannot_convert(dc__sema_t* s, const dc__expr_t* e,
                                  const dc__ty_t* to, const char* context,
                                  const char* why) {
  dc__sema_error(s, e->token, "cannot convert '%s' to '%s' in %s%s",
                 dc__sema_ty(s, e->type), dc__sema_ty(s, to), context, why);
  return NULL;
}

// The name of the convert_T() built-in that turns a vector into |to|.
static const char* convert_hint(dc__sema_t* s, const dc__ty_t* to) {
  return dc__arena_printf(s->arena, ": use convert_%s()", dc__sema_ty(s, to));
}

// |e| (an rvalue pointer, or a null pointer constant) as the pointer type
// |to| by assignment: same address space; same pointed-to type, or void*
// on either side; dropping a qualifier of the pointed-to type is warned
// about, as clang does for OpenCL C.
static dc__expr_t* pointer_by_assignment(dc__sema_t* s, dc__expr_t* e,
                                         const dc__ty_t* to,
                                         const char* context) {
  if (dc__sema_is_null_pointer(e)) return dc__sema_null_pointer(s, e, to, true);
  const dc__ty_t* from = e->type;
  if (from->kind != DC_TY_POINTER) {
    if (!dc__ty_is_integer(from)) return cannot_convert(s, e, to, context, "");
    dc__sema_error(s, e->token,
                   "cannot convert an integer to a pointer ('%s' to '%s') in "
                   "%s",
                   dc__sema_ty(s, from), dc__sema_ty(s, to), context);
    return NULL;
  }
  const dc__ty_t* fb = from->base;
  const dc__ty_t* tb = to->base;
  if (fb->space != tb->space) {
    return cannot_convert(s, e, to, context,
                          ": they point into different address spaces");
  }
  bool same = fb->unqualified == tb->unqualified;
  if (!same && fb->kind != DC_TY_VOID && tb->kind != DC_TY_VOID) {
    return cannot_convert(s, e, to, context,
                          ": they point to different types (an explicit "
                          "cast converts them)");
  }
  if (fb->quals & ~tb->quals) {
    dc__sema_warning(s, e->token,
                     "converting '%s' to '%s' in %s discards the '%s' "
                     "qualifier",
                     dc__sema_ty(s, from), dc__sema_ty(s, to), context,
                     (fb->quals & ~tb->quals & DC_Q_CONST) ? "const"
                                                           : "volatile");
  }
  return dc__sema_cast_node(s, e, to, same ? DC_CONV_NONE : DC_CONV_POINTER,
                            true);
}

// |e| (an rvalue) as the arithmetic scalar type |to| by assignment.
static dc__expr_t* scalar_by_assignment(dc__sema_t* s, dc__expr_t* e,
                                        const dc__ty_t* to,
                                        const char* context) {
  const dc__ty_t* from = e->type;
  if (dc__ty_is_arithmetic(from)) return dc__sema_arith(s, e, to, true);
  bool to_bool = to->kind == DC_TY_SCALAR && to->scalar == DC_SCALAR_BOOL;
  if (from->kind == DC_TY_POINTER && to_bool) {
    return dc__sema_cast_node(s, e, to, DC_CONV_TO_BOOL, true);
  }
  if (from->kind == DC_TY_VECTOR) {
    return cannot_convert(s, e, to, context,
                          ": select a component (.x, .s0, ...) or reduce "
                          "the vector");
  }
  return cannot_convert(s, e, to, context, "");
}

// |e| (an rvalue) as the vector type |to| by assignment: a scalar is
// converted and repeated; another vector type needs convert_T().
static dc__expr_t* vector_by_assignment(dc__sema_t* s, dc__expr_t* e,
                                        const dc__ty_t* to,
                                        const char* context) {
  if (dc__ty_is_arithmetic(e->type)) return dc__sema_splat(s, e, to, true);
  if (e->type->kind == DC_TY_VECTOR && e->type->width == to->width) {
    return cannot_convert(s, e, to, context, convert_hint(s, to));
  }
  return cannot_convert(s, e, to, context, "");
}

dc__expr_t* dc__sema_convert(dc__sema_t* s, dc__expr_t* e, const dc__ty_t* to,
                             const char* context) {
  e = dc__sema_rvalue(s, e);
  if (e == NULL || to == NULL) return NULL;
  const dc__ty_t* target = to->unqualified;
  if (e->type == target) return e;
  if (e->type->kind == DC_TY_VOID) {
    dc__sema_error(s, e->token, "a void expression has no value to use in %s",
                   context);
    return NULL;
  }
  switch (target->kind) {
    case DC_TY_SCALAR:
    case DC_TY_ENUM:
      return scalar_by_assignment(s, e, target, context);
    case DC_TY_VECTOR:
      return vector_by_assignment(s, e, target, context);
    case DC_TY_POINTER:
      return pointer_by_assignment(s, e, target, context);
    case DC_TY_ARRAY:
      dc__sema_error(s, e->token,
                     "cannot assign to an array ('%s') in %s: assign its "
                     "elements",
                     dc__sema_ty(s, to), context);
      return NULL;
    case DC_TY_EVENT:  // 0 is "no event", as OpenCL compilers accept
      if (dc__sema_is_null_pointer(e)) {
        return dc__sema_null_pointer(s, e, to, true);
      }
      return cannot_convert(s, e, to, context, "");
    default:  // records and void: only the same type would do
      return cannot_convert(s, e, to, context, "");
  }
}

//===-- Explicit casts ----------------------------------------------------===//

static dc__expr_t* cannot_cast(dc__sema_t* s, const dc__token_t* where,
                               const dc__ty_t* from, const dc__ty_t* to,
                               const char* why) {
  dc__sema_error(s, where, "cannot cast '%s' to '%s'%s", dc__sema_ty(s, from),
                 dc__sema_ty(s, to), why);
  return NULL;
}

// (T)e to an arithmetic scalar T. A pointer may become an integer (to
// test its alignment, say); an integer can never become a pointer.
static dc__expr_t* cast_to_scalar(dc__sema_t* s, dc__expr_t* e,
                                  const dc__ty_t* to,
                                  const dc__token_t* where) {
  const dc__ty_t* from = e->type;
  if (from == to && (e->is_constant || e->kind == DC_EXPR_FLOAT)) {
    dc__expr_t* copy = dc__sema_node(s, e->kind, to, e->token);
    if (copy != NULL) *copy = *e;  // (int)1 is still a constant
    return copy;
  }
  if (from == to) {  // still a cast: (int)x is not an lvalue
    return dc__sema_cast_node(s, e, to, DC_CONV_NONE, false);
  }
  if (dc__ty_is_arithmetic(from)) return dc__sema_arith(s, e, to, false);
  if (from->kind == DC_TY_POINTER) {
    if (to->kind == DC_TY_SCALAR && to->scalar == DC_SCALAR_BOOL) {
      return dc__sema_cast_node(s, e, to, DC_CONV_TO_BOOL, false);
    }
    if (dc__ty_is_floating(to)) return cannot_cast(s, where, from, to, "");
    return dc__sema_cast_node(s, e, to, DC_CONV_POINTER_TO_INT, false);
  }
  if (from->kind == DC_TY_VECTOR) {
    return cannot_cast(s, where, from, to,
                       ": select a component (.x, .s0, ...) instead");
  }
  return cannot_cast(s, where, from, to, "");
}

// (T)e to a vector type T (6.2.2): a scalar is converted and repeated;
// vectors of another type need convert_T() or as_T() (6.2.4).
static dc__expr_t* cast_to_vector(dc__sema_t* s, dc__expr_t* e,
                                  const dc__ty_t* to,
                                  const dc__token_t* where) {
  const dc__ty_t* from = e->type;
  if (dc__ty_is_arithmetic(from)) return dc__sema_splat(s, e, to, false);
  if (from == to) return dc__sema_cast_node(s, e, to, DC_CONV_NONE, false);
  if (from->kind == DC_TY_VECTOR) {
    const char* name = dc__sema_ty(s, to);
    return cannot_cast(s, where, from, to,
                       dc__arena_printf(s->arena,
                                        ": use convert_%s() or as_%s()", name,
                                        name));
  }
  return cannot_cast(s, where, from, to, "");
}

// (T*)e: between pointers of one address space; the integer 0 gives a
// null pointer, and no other integer ever becomes a pointer.
static dc__expr_t* cast_to_pointer(dc__sema_t* s, dc__expr_t* e,
                                   const dc__ty_t* to,
                                   const dc__token_t* where) {
  const dc__ty_t* from = e->type;
  if (dc__sema_is_null_pointer(e)) {
    return dc__sema_null_pointer(s, e, to, false);
  }
  if (dc__ty_is_integer(from)) {
    dc__sema_error(s, where,
                   "cannot convert an integer to a pointer ('%s' to '%s'): "
                   "only the constant 0 makes a (null) pointer",
                   dc__sema_ty(s, from), dc__sema_ty(s, to));
    return NULL;
  }
  if (from->kind != DC_TY_POINTER) return cannot_cast(s, where, from, to, "");
  if (from->base->space != to->base->space) {
    return cannot_cast(s, where, from, to,
                       ": they point into different address spaces");
  }
  dc__conv_t conv = from->base->unqualified == to->base->unqualified
                        ? DC_CONV_NONE
                        : DC_CONV_POINTER;
  return dc__sema_cast_node(s, e, to, conv, false);
}

// The explicit cast of |e| to |to|; dc__sema_explicit_cast below dates
// the result at the cast's '('.
static dc__expr_t* explicit_cast(dc__sema_t* s, dc__expr_t* e,
                                 const dc__ty_t* to,
                                 const dc__token_t* where) {
  if (e == NULL || to == NULL) return NULL;
  const dc__ty_t* target = to->unqualified;  // a cast's value is unqualified
  if (target->kind == DC_TY_VOID) {
    return dc__sema_cast_node(s, e, target, DC_CONV_VOID, false);
  }
  e = dc__sema_rvalue(s, e);
  if (e == NULL) return NULL;
  switch (target->kind) {
    case DC_TY_SCALAR:
    case DC_TY_ENUM:
      return cast_to_scalar(s, e, target, where);
    case DC_TY_VECTOR:
      return cast_to_vector(s, e, target, where);
    case DC_TY_POINTER:
      return cast_to_pointer(s, e, target, where);
    case DC_TY_ARRAY:
      return cannot_cast(s, where, e->type, to, ": arrays cannot be cast");
    default:  // records and event_t: only to their own type
      if (e->type == target) {
        return dc__sema_cast_node(s, e, target, DC_CONV_NONE, false);
      }
      return cannot_cast(s, where, e->type, to, "");
  }
}

dc__expr_t* dc__sema_explicit_cast(dc__sema_t* s, dc__expr_t* e,
                                   const dc__ty_t* to,
                                   const dc__token_t* where) {
  dc__expr_t* c = explicit_cast(s, e, to, where);
  if (c != NULL) c->token = where;  // the cast starts at its '('
  return c;
}

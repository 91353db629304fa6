// cgen_expr.c: expressions, written from the typed tree.
//
// Every operation is parenthesised, so C's precedence never has to be
// reconstructed; every conversion is a cast the analysis put in the tree.
// What C or C++ spell differently from OpenCL C is written out: a vector
// literal with vector parts, a swizzle assigned to, a vector `?:`, a
// comparison's int result in C++, a shift count masked to the width
// (OpenCL defines shifts past it; C does not), and on the CPU an integer
// division that must not trap.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "builtin_table.h"
#include "cgen.h"

static void emit(dc__cgen_t* g, const dc__expr_t* e) { dc__cgen_expr(g, e); }

static void put(dc__cgen_t* g, const char* text) { dc__cgen_puts(g, text); }

static const char* type_text(dc__cgen_t* g, const dc__ty_t* t) {
  return dc__cgen_declaration(g, t, NULL, 0);
}

static bool is_vector(const dc__ty_t* t) { return t->kind == DC_TY_VECTOR; }

static bool is_bool(const dc__ty_t* t) {
  return t->kind == DC_TY_SCALAR && t->scalar == DC_SCALAR_BOOL;
}

static bool has_op(const dc__expr_t* e, const char* op) {
  return e->op != NULL && strcmp(e->op, op) == 0;
}

//===-- Constants ---------------------------------------------------------===//

// |v| cut to the width of |scalar| (and sign-extended when it is signed).
static int64_t normalized(dc__scalar_t scalar, int64_t v, bool is_signed) {
  unsigned bits = 8 * dc__scalar_size(scalar);
  if (bits >= 64 || bits == 0) return v;
  uint64_t mask = (UINT64_C(1) << bits) - 1;
  uint64_t u = (uint64_t)v & mask;
  if (is_signed && (u >> (bits - 1)) != 0) u |= ~mask;
  return (int64_t)u;
}

static void emit_integer(dc__cgen_t* g, const dc__ty_t* t, int64_t value) {
  dc__scalar_t scalar = dc__ty_element(t);
  bool is_signed = dc__ty_is_signed(t);
  int64_t v = normalized(scalar, value, is_signed);
  long long s = (long long)v;
  unsigned long long u = (unsigned long long)v;
  switch (scalar) {
    case DC_SCALAR_INT:
      if (v == INT32_MIN) {
        put(g, "(-2147483647-1)");
      } else {
        dc__cgen_printf(g, v < 0 ? "(%lld)" : "%lld", s);
      }
      return;
    case DC_SCALAR_UINT:
      dc__cgen_printf(g, "%lluu", u);
      return;
    case DC_SCALAR_ULONG:
      dc__cgen_printf(g, "%lluul", u);
      return;
    case DC_SCALAR_BOOL:
      dc__cgen_printf(g, "((bool)%d)", v != 0);
      return;
    default:
      break;
  }
  if (scalar == DC_SCALAR_LONG) {
    if (v == INT64_MIN) {
      put(g, "(-9223372036854775807l-1)");
    } else {
      dc__cgen_printf(g, v < 0 ? "(%lldl)" : "%lldl", s);
    }
    return;
  }
  const char* cast = type_text(g, t);
  if (!is_signed) {
    dc__cgen_printf(g, "((%s)%lluul)", cast, u);
  } else if (v == INT64_MIN) {
    dc__cgen_printf(g, "((%s)(-9223372036854775807l-1))", cast);
  } else {
    dc__cgen_printf(g, "((%s)%lldl)", cast, s);
  }
}

static void emit_floating(dc__cgen_t* g, const dc__ty_t* t, double f) {
  bool single = dc__ty_element(t) == DC_SCALAR_FLOAT;
  if (isinf(f)) {  // a literal too large for its type
    dc__cgen_printf(g, "(%s%sINFINITY)", single ? "" : "(double)",
                    f < 0 ? "-" : "");
  } else {
    dc__cgen_printf(g, signbit(f) ? "(%a%s)" : "%a%s", f, single ? "f" : "");
  }
}

//===-- Names and calls ---------------------------------------------------===//

static void emit_name(dc__cgen_t* g, const dc__decl_t* d) {
  if (d->kind == DC_DECL_ENUM_CONST) {
    dc__cgen_printf(g, "%lld", (long long)d->value);
    return;
  }
  if (g->hooks->name != NULL && g->hooks->name(g, d)) return;
  put(g, dc__cgen_name(g, d));
}

static const char* builtin_name(dc__cgen_t* g, const dc__builtin_t* b) {
  const char* name = g->hooks->builtin ? g->hooks->builtin(g, b) : NULL;
  if (name != NULL) return name;
  return b->spelling ? b->spelling : b->name;
}

static void emit_args(dc__cgen_t* g, const dc__expr_t* e, bool first) {
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    if (!first || i > 0) put(g, ", ");
    const char* through =
        e->kind == DC_EXPR_BUILTIN && g->hooks->builtin_arg != NULL
            ? g->hooks->builtin_arg(g, e->builtin, i)
            : NULL;
    if (through != NULL) dc__cgen_printf(g, "%s(", through);
    emit(g, e->args[i]);
    if (through != NULL) put(g, ")");
  }
  put(g, ")");
}

// A helper's call: helpers receive the work-item record first. (The
// analysis refuses calls of kernels.)
static void emit_call(dc__cgen_t* g, const dc__expr_t* e) {
  dc__cgen_printf(g, "%s(_wi", dc__cgen_name(g, e->decl));
  emit_args(g, e, false);
}

//===-- Operators ---------------------------------------------------------===//

// An operand written either from the tree or as text (a temporary).
typedef struct operand_t {
  const dc__expr_t* expr;
  const char* text;
} operand_t;

static void emit_operand(dc__cgen_t* g, operand_t o) {
  if (o.expr != NULL) {
    emit(g, o.expr);
  } else {
    put(g, o.text);
  }
}

// The integer constant |o| holds (through a splat), if it is one.
static bool constant_of(operand_t o, int64_t* value) {
  const dc__expr_t* e = o.expr;
  if (e != NULL && e->kind == DC_EXPR_CAST && e->conv == DC_CONV_SPLAT) {
    e = e->lhs;
  }
  if (e == NULL || !e->is_constant) return false;
  *value = e->value.i;
  return true;
}

static bool is_comparison(const char* op) {
  return strcmp(op, "<") == 0 || strcmp(op, ">") == 0 ||
         strcmp(op, "<=") == 0 || strcmp(op, ">=") == 0 ||
         strcmp(op, "==") == 0 || strcmp(op, "!=") == 0 ||
         strcmp(op, "&&") == 0 || strcmp(op, "||") == 0;
}

// Whether `a op b` in |type| is an integer division that must go through
// the prelude's DC_DIV or DC_MOD: its divisor |b| is no constant known
// not to trap (0, or -1 for a signed type).
static bool needs_safe_division(const dc__cgen_t* g, const char* op,
                                const dc__ty_t* type, operand_t b) {
  dc__scalar_t element = dc__ty_element(type);
  bool integer = element != DC_SCALAR_FLOAT && element != DC_SCALAR_DOUBLE;
  int64_t k;
  bool safe = constant_of(b, &k) && k != 0 &&
              !(dc__ty_is_signed(type) && k == -1);
  return (op[0] == '/' || op[0] == '%') && op[1] == '\0' && integer &&
         g->hooks->safe_division && !safe;
}

// The float constant |b| divides by, when `a / b` in |type| is a float
// division by a finite nonzero constant that the hooks ask to divide
// through its reciprocal (reciprocal_division: the prelude's dc__div_by,
// which rounds the double nearest x / c to float). Not a power of two,
// whose exact reciprocal the device compiler multiplies by itself.
//
// Why that is the float nearest x / c for every float x: it can differ
// only if a float midpoint m (halfway between neighbouring floats; also
// the overflow threshold), M 2^d with M odd and below 2^25, lies between
// x / c and the double, which is x / c itself when that is a double and
// otherwise within 2^-52 relative of it. With x = X 2^a and c = C 2^b
// (X, C below 2^24), x - m c = X 2^a - M C 2^(d+b) is a multiple of
// 2^min(a, d+b). When d+b <= a it is 0 (then x / c = m is a double and
// comes out as m, rounding to even as the division does) or at least
// 2^(d+b), which is more than 2^-49 of m c = M C 2^(d+b). When a < d+b
// (only for a subnormal m: a normal one has M >= 2^24 > X), X 2^a near
// M C 2^(d+b) with X < 2^24 puts 2^a above M C 2^(d+b-24), a 2^-24 part
// of m c. So every other midpoint is farther from x / c than the double
// is. tests/unit/check_exact_rounding.c runs the same arithmetic over
// every significand, every subnormal and every exact subnormal tie, for
// ten divisors.
static bool reciprocal_divisor(const dc__cgen_t* g, const char* op,
                               const dc__ty_t* type, operand_t b, float* c) {
  if (!g->hooks->reciprocal_division || strcmp(op, "/") != 0 ||
      is_vector(type) || dc__ty_element(type) != DC_SCALAR_FLOAT ||
      b.expr == NULL || b.expr->kind != DC_EXPR_FLOAT) {
    return false;
  }
  *c = (float)b.expr->value.f;
  int exponent;
  return isfinite(*c) && *c != 0.0f && fabsf(frexpf(*c, &exponent)) != 0.5f;
}

// `a op b` for operands of |type|, the type the operation is done in.
static void emit_binop(dc__cgen_t* g, const char* op, const dc__ty_t* type,
                       operand_t a, operand_t b) {
  bool vector = is_vector(type);
  int64_t k = 0;
  bool constant = constant_of(b, &k);
  if (needs_safe_division(g, op, type, b)) {
    dc__cgen_printf(g, "%s(", op[0] == '/' ? (vector ? "DC_VDIV" : "DC_DIV")
                                           : (vector ? "DC_VMOD" : "DC_MOD"));
    emit_operand(g, a);
    put(g, ", ");
    emit_operand(g, b);
    put(g, ")");
    return;
  }
  float c;
  if (reciprocal_divisor(g, op, type, b, &c)) {
    put(g, "dc__div_by(");
    emit_operand(g, a);
    dc__cgen_printf(g, ", %a, %a)", 1.0 / (double)c, (double)c);
    return;
  }
  bool shift = strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0;
  unsigned bits = 8 * dc__scalar_size(dc__ty_element(type));
  bool masked = shift && !(constant && k >= 0 && (uint64_t)k < bits);
  bool logical = strcmp(op, "&&") == 0 || strcmp(op, "||") == 0;
  if (vector && logical && !g->hooks->cxx) {
    // C has no vector && and ||: both sides are tested (OpenCL evaluates
    // both for vectors), each giving a -1/0 mask.
    const char* zero = dc__arena_printf(
        g->arena, g->hooks->opencl ? "((%s)(0))" : "((%s){0})",
        type_text(g, type));
    put(g, "((");
    emit_operand(g, a);
    dc__cgen_printf(g, " != %s) %s (", zero, op[0] == '&' ? "&" : "|");
    emit_operand(g, b);
    dc__cgen_printf(g, " != %s))", zero);
    return;
  }
  // C++ gives comparisons a bool; OpenCL an int.
  bool as_int = !vector && g->hooks->cxx && is_comparison(op);
  put(g, as_int ? "((int)(" : "(");
  emit_operand(g, a);
  dc__cgen_printf(g, " %s ", op);
  if (masked) put(g, "(");
  emit_operand(g, b);
  if (masked) dc__cgen_printf(g, " & %u)", bits - 1);
  put(g, as_int ? "))" : ")");
}

static void emit_binary(dc__cgen_t* g, const dc__expr_t* e) {
  if (has_op(e, ",")) {
    put(g, "(");
    emit(g, e->lhs);
    put(g, ", ");
    emit(g, e->rhs);
    put(g, ")");
    return;
  }
  emit_binop(g, e->op, e->lhs->type, (operand_t){e->lhs, NULL},
             (operand_t){e->rhs, NULL});
}

void dc__cgen_open_block(dc__cgen_t* g) {
  put(g, g->hooks->cxx ? "[&]() { " : "({ ");
}

void dc__cgen_close_block(dc__cgen_t* g, const char* result) {
  dc__cgen_printf(g, g->hooks->cxx ? "return %s; }()" : "%s; })", result);
}

void dc__cgen_condition(dc__cgen_t* g, const dc__expr_t* e) {
  if (g->checked && e != NULL && e->type->kind == DC_TY_POINTER) {
    put(g, "((");
    emit(g, e);
    put(g, ").p != 0)");
  } else {
    emit(g, e);
  }
}

static const char* auto_word(const dc__cgen_t* g) {
  return g->hooks->cxx ? "auto" : "__auto_type";
}

// Lanes |lanes| of the vector |base| (text) of |width| lanes, as a value.
static const char* swizzle_text(dc__cgen_t* g, const char* base,
                                unsigned width, const uint8_t* lanes,
                                uint8_t count) {
  if (g->hooks->opencl) {  // OpenCL's own: v.s0, v.s12f
    char names[17] = "";
    for (uint8_t k = 0; k < count; ++k) {
      names[k] = "0123456789abcdef"[lanes[k] & 15];
    }
    return dc__arena_printf(g->arena, "(%s).s%s", base, names);
  }
  if (count == 1) return dc__arena_printf(g->arena, "(%s)[%u]", base, lanes[0]);
  char list[17 * 4] = "";
  size_t used = 0;
  for (uint8_t k = 0; k < count; ++k) {
    used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%u",
                             k ? ", " : "", lanes[k]);
  }
  // In C a 3-lane vector is its 4-lane type (lower_c_prelude.h): its 4th lane
  // copies a lane of |base|, so that it stays defined (lane 3 makes .xyz
  // of a 4-lane vector no shuffle at all).
  if (count == 3 && !g->hooks->cxx) {
    snprintf(list + used, sizeof(list) - used, ", %u", width >= 3 ? 3u : 0u);
  }
  return g->hooks->cxx
             ? dc__arena_printf(g->arena, "dc__swizzle<%s>(%s)", list, base)
             : dc__arena_printf(g->arena, "DC_SWIZZLE(%s, %s)", base, list);
}

// The vector a swizzle reads or writes, with its lanes composed through
// swizzles of swizzles.
static const dc__expr_t* swizzle_base(const dc__expr_t* e, uint8_t* lanes) {
  memcpy(lanes, e->lanes, e->lane_count);
  const dc__expr_t* base = e->lhs;
  while (base->kind == DC_EXPR_SWIZZLE) {
    for (uint8_t k = 0; k < e->lane_count; ++k) {
      lanes[k] = base->lanes[lanes[k]];
    }
    base = base->lhs;
  }
  return base;
}

// An update of the lvalue |lhs| that C cannot write as one operator:
// several lanes of a vector at once, an integer division that must not
// trap, ++ on a C++ bool. Through a pointer to the lvalue, which is so
// evaluated once: the old value (for `op=` and `x++`), the new one
// (`old op rhs`, converted back), stored lane by lane or whole.
static void emit_update(dc__cgen_t* g, const dc__expr_t* lhs, const char* op,
                        const dc__ty_t* op_type, operand_t rhs, bool post) {
  uint32_t n = ++g->temps;
  uint8_t lanes[16];
  bool swizzle = lhs->kind == DC_EXPR_SWIZZLE;
  const dc__expr_t* target = swizzle ? swizzle_base(lhs, lanes) : lhs;
  dc__cgen_open_block(g);
  dc__cgen_printf(g, "%s dc_p%u = &(", auto_word(g), n);
  emit(g, target);
  put(g, "); ");
  const char* place = dc__arena_printf(g->arena, "(*dc_p%u)", n);
  const char* read = swizzle ? swizzle_text(g, place, target->type->width,
                                            lanes, lhs->lane_count)
                             : place;
  const char* lhs_type = type_text(g, lhs->type);
  if (*op != '\0') {
    dc__cgen_printf(g, "%s dc_o%u = %s; %s dc_v%u = ", lhs_type, n, read,
                    lhs_type, n);
    const char* old = dc__arena_printf(g->arena, "((%s)dc_o%u)",
                                       type_text(g, op_type), n);
    if (is_bool(lhs->type)) {
      dc__cgen_printf(g, op[0] == '+' ? "1" : "!dc_o%u", n);  // C++ bool
    } else {
      dc__cgen_printf(g, "(%s)", lhs_type);
      emit_binop(g, op, op_type, (operand_t){NULL, old}, rhs);
    }
  } else {
    dc__cgen_printf(g, "%s dc_v%u = ", lhs_type, n);
    emit_operand(g, rhs);
  }
  put(g, "; ");
  if (!swizzle) {
    dc__cgen_printf(g, "*dc_p%u = dc_v%u; ", n, n);
  } else if (lhs->lane_count == 1) {
    dc__cgen_printf(g, "(*dc_p%u)[%u] = dc_v%u; ", n, lanes[0], n);
  } else {
    for (uint8_t k = 0; k < lhs->lane_count; ++k) {
      dc__cgen_printf(g, "(*dc_p%u)[%u] = dc_v%u[%u]; ", n, lanes[k], n, k);
    }
  }
  dc__cgen_close_block(g, dc__arena_printf(g->arena, post ? "dc_o%u" : "dc_v%u", n));
}

static bool needs_update(const dc__cgen_t* g, const dc__expr_t* lhs,
                         const char* op, const dc__ty_t* op_type,
                         const dc__expr_t* rhs) {
  // Several lanes, or lanes of lanes (v.hi.x): C has no such lvalue.
  if (lhs->kind == DC_EXPR_SWIZZLE &&
      (lhs->lane_count > 1 || lhs->lhs->kind == DC_EXPR_SWIZZLE)) {
    return true;
  }
  if (g->hooks->cxx && is_bool(lhs->type) &&
      (op[0] == '+' || op[0] == '-')) {
    return true;
  }
  float c;
  return needs_safe_division(g, op, op_type, (operand_t){rhs, NULL}) ||
         reciprocal_divisor(g, op, op_type, (operand_t){rhs, NULL}, &c);
}

static void emit_assign(dc__cgen_t* g, const dc__expr_t* e) {
  size_t length = strlen(e->op);
  char op[4] = "";
  if (length >= 2 && length <= 4) memcpy(op, e->op, length - 1);
  op[length >= 2 ? length - 1 : 0] = '\0';
  if (needs_update(g, e->lhs, op, e->rhs->type, e->rhs)) {
    emit_update(g, e->lhs, op, e->rhs->type, (operand_t){e->rhs, NULL},
                false);
    return;
  }
  bool shift = strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0;
  int64_t k;
  unsigned bits = 8 * dc__scalar_size(dc__ty_element(e->lhs->type));
  bool masked = shift && !(constant_of((operand_t){e->rhs, NULL}, &k) &&
                           k >= 0 && (uint64_t)k < bits);
  put(g, "(");
  emit(g, e->lhs);
  dc__cgen_printf(g, " %s ", e->op);
  if (masked) put(g, "(");
  emit(g, e->rhs);
  if (masked) dc__cgen_printf(g, " & %u)", bits - 1);
  put(g, ")");
}

static void emit_unary(dc__cgen_t* g, const dc__expr_t* e) {
  const char* op = e->op;
  bool increment = strstr(op, "++") != NULL || strstr(op, "--") != NULL;
  if (increment) {
    bool post = op[0] == 'x';
    const char* sign = strstr(op, "++") ? "+" : "-";
    if (needs_update(g, e->lhs, sign, e->lhs->type, NULL)) {
      emit_update(g, e->lhs, sign, e->lhs->type, (operand_t){NULL, "1"},
                  post);
      return;
    }
    put(g, "(");
    if (!post) put(g, op[0] == '+' ? "++" : "--");
    emit(g, e->lhs);
    if (post) put(g, op[1] == '+' ? "++" : "--");
    put(g, ")");
    return;
  }
  if (strcmp(op, "!") == 0 && is_vector(e->lhs->type) && !g->hooks->cxx) {
    put(g, "(");
    emit(g, e->lhs);
    dc__cgen_printf(g, g->hooks->opencl ? " == ((%s)(0)))" : " == ((%s){0}))",
                    type_text(g, e->lhs->type));
    return;
  }
  bool as_int = strcmp(op, "!") == 0 && g->hooks->cxx &&
                !is_vector(e->lhs->type);
  dc__cgen_printf(g, as_int ? "((int)%s(" : "(%s(", op);
  emit(g, e->lhs);
  put(g, "))");
}

//===-- Conversions -------------------------------------------------------===//

static void emit_cast(dc__cgen_t* g, const dc__expr_t* e) {
  const char* to = type_text(g, e->type);
  switch (e->conv) {
    case DC_CONV_NONE:
    case DC_CONV_ARRAY_DECAY:
      emit(g, e->lhs);
      return;
    case DC_CONV_SPLAT:
      if (g->static_init && !g->hooks->cxx) {
        put(g, "{");
        for (unsigned i = 0; i < e->type->width; ++i) {
          if (i > 0) put(g, ", ");
          emit(g, e->lhs);
        }
        put(g, "}");
      } else {
        dc__cgen_printf(g, g->hooks->cxx ? "%s(" : "DC_SPLAT(%s, ", to);
        emit(g, e->lhs);
        put(g, ")");
      }
      return;
    case DC_CONV_NULL:
      dc__cgen_printf(g, "((%s)0)", to);
      return;
    case DC_CONV_POINTER_TO_INT:
      dc__cgen_printf(g, "((%s)(size_t)(", to);
      emit(g, e->lhs);
      put(g, "))");
      return;
    case DC_CONV_VOID:
    case DC_CONV_ARITH:
    case DC_CONV_TO_BOOL:
    case DC_CONV_POINTER:
      dc__cgen_printf(g, "((%s)(", to);
      emit(g, e->lhs);
      put(g, "))");
      return;
    case DC_CONV_VECTOR:
      break;
  }
  dc__cgen_fail(g, e->token, "internal: a conversion between vector types");
}

//===-- Vectors -----------------------------------------------------------===//

// Whether the part |p| of a vector literal can be written lane by lane
// without a temporary: a scalar, or a vector literal or splat of them.
static bool flat(const dc__expr_t* p) {
  if (!is_vector(p->type)) return true;
  if (p->kind == DC_EXPR_CAST && p->conv == DC_CONV_SPLAT) {
    return p->lhs->is_constant || p->lhs->kind == DC_EXPR_FLOAT;
  }
  if (p->kind != DC_EXPR_VECTOR) return false;
  for (uint32_t i = 0; i < p->arg_count; ++i) {
    if (!flat(p->args[i])) return false;
  }
  return true;
}

// Writes the lanes of |p|, comma-separated; |temp| names the temporary of
// each part that is not flat (in order, from *next).
static void emit_lanes(dc__cgen_t* g, const dc__expr_t* p, bool* first,
                       uint32_t* next) {
  if (!is_vector(p->type)) {
    if (!*first) put(g, ", ");
    *first = false;
    emit(g, p);
    return;
  }
  if (p->kind == DC_EXPR_CAST && p->conv == DC_CONV_SPLAT && flat(p)) {
    for (unsigned i = 0; i < p->type->width; ++i) {
      emit_lanes(g, p->lhs, first, next);
    }
    return;
  }
  if (p->kind == DC_EXPR_VECTOR && flat(p)) {
    for (uint32_t i = 0; i < p->arg_count; ++i) {
      emit_lanes(g, p->args[i], first, next);
    }
    return;
  }
  uint32_t t = (*next)++;
  for (unsigned i = 0; i < p->type->width; ++i) {
    dc__cgen_printf(g, "%sdc_t%u[%u]", *first ? "" : ", ", t, i);
    *first = false;
  }
}

// Declares a temporary for each part of |e| that is not flat.
static void declare_parts(dc__cgen_t* g, const dc__expr_t* e, uint32_t* next) {
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    const dc__expr_t* p = e->args[i];
    if (flat(p)) continue;
    dc__cgen_printf(g, "%s dc_t%u = ", type_text(g, p->type), (*next)++);
    emit(g, p);
    put(g, "; ");
  }
}

static void emit_vector(dc__cgen_t* g, const dc__expr_t* e) {
  const char* to = type_text(g, e->type);
  bool all_flat = flat(e);
  if (!all_flat && g->static_init) {
    dc__cgen_fail(g, e->token,
                  "a program-scope initialiser must be constant");
    return;
  }
  uint32_t first_temp = g->temps + 1;
  g->temps += e->arg_count;
  uint32_t next = first_temp;
  if (!all_flat) {
    dc__cgen_open_block(g);
    declare_parts(g, e, &next);
    if (g->hooks->cxx) put(g, "return ");
  }
  if (g->static_init && !g->hooks->cxx) {
    put(g, "{");
  } else {
    dc__cgen_printf(g, g->hooks->cxx ? "%s(" : "((%s){", to);
  }
  bool first = true;
  next = first_temp;
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    emit_lanes(g, e->args[i], &first, &next);
  }
  put(g, g->static_init && !g->hooks->cxx ? "}" : g->hooks->cxx ? ")" : "})");
  if (!all_flat) put(g, g->hooks->cxx ? "; }()" : "; })");
}

// |e| as text, for code that wraps it.
static const char* expr_text(dc__cgen_t* g, const dc__expr_t* e) {
  dc__strbuf_t* saved = g->out;
  dc__strbuf_t text;
  dc__strbuf_init(&text, g->arena);
  g->out = &text;
  emit(g, e);
  g->out = saved;
  return text.data ? text.data : "";
}

static void emit_swizzle(dc__cgen_t* g, const dc__expr_t* e) {
  const char* text = swizzle_text(g, expr_text(g, e->lhs),
                                  e->lhs->type->width, e->lanes,
                                  e->lane_count);
  if (text != NULL) put(g, text);  // NULL: the arena reports it
}

//===-- Aggregates and memory ---------------------------------------------===//

// Whether |t| holds a vector, in itself, its elements or its members.
static bool holds_vector(const dc__ty_t* t) {
  while (t->kind == DC_TY_ARRAY) t = t->base;
  if (t->kind == DC_TY_VECTOR) return true;
  if (t->kind != DC_TY_RECORD) return false;
  for (uint32_t i = 0; i < t->record->field_count; ++i) {
    if (holds_vector(t->record->fields[i].type)) return true;
  }
  return false;
}

// A zero of |t|. In C++ a vector's default constructor leaves it
// uninitialised (so vectors can live in __shared__ memory), which a
// constant initialiser cannot call: what holds one is zeroed explicitly.
static void emit_zero(dc__cgen_t* g, const dc__ty_t* t) {
  if (g->checked && t->kind == DC_TY_POINTER) {
    put(g, "DC_FP_NULL");
  } else if (dc__ty_is_scalar(t) || t->kind == DC_TY_ENUM) {
    put(g, "0");
  } else if (g->hooks->opencl && t->kind == DC_TY_VECTOR) {
    dc__cgen_printf(g, "((%s)(0))", type_text(g, t));  // every lane named
  } else if (!g->hooks->cxx && !(g->hooks->opencl && holds_vector(t))) {
    put(g, "{0}");
  } else if (!holds_vector(t)) {
    put(g, "{}");
  } else if (t->kind == DC_TY_VECTOR) {
    dc__cgen_printf(g, "%s(0)", type_text(g, t));
  } else if (t->kind == DC_TY_ARRAY) {
    put(g, "{ ");
    for (uint32_t i = 0; i < t->length; ++i) {
      if (i > 0) put(g, ", ");
      emit_zero(g, t->base);
    }
    put(g, " }");
  } else {
    uint32_t count = t->record->is_union ? 1 : t->record->field_count;
    put(g, "{ ");
    for (uint32_t i = 0; i < count; ++i) {
      if (i > 0) put(g, ", ");
      emit_zero(g, t->record->fields[i].type);
    }
    put(g, " }");
  }
}

// A union initialised through |e->field|. C++17 has no designated
// initialisers: a member other than the first is stored in a lambda,
// which a constant (program-scope) initialiser cannot run.
static void emit_union(dc__cgen_t* g, const dc__expr_t* e) {
  bool first = e->field == &e->type->record->fields[0];
  if (!g->hooks->cxx || first) {
    dc__cgen_printf(g, first ? "{ " : "{ ." DC_USER_PREFIX "%s = ",
                    e->field->name);
    dc__cgen_initializer(g, e->args[0]);
    put(g, " }");
    return;
  }
  if (g->static_init) {
    dc__cgen_fail(g, e->token,
                  "on this device a program-scope union can be initialised "
                  "through its first member only");
    return;
  }
  uint32_t n = ++g->temps;
  dc__cgen_printf(g, "[&]() { %s dc_u%u{}; dc_u%u." DC_USER_PREFIX "%s = ",
                  type_text(g, e->type), n, n, e->field->name);
  dc__cgen_initializer(g, e->args[0]);
  dc__cgen_printf(g, "; return dc_u%u; }()", n);
}

// A braced list: each slot an initialiser, the slots the program left out
// zero.
static void emit_braces(dc__cgen_t* g, const dc__expr_t* e) {
  const dc__ty_t* t = e->type;
  if (t->kind == DC_TY_RECORD && t->record->is_union && e->arg_count > 0) {
    emit_union(g, e);
    return;
  }
  if (e->arg_count == 0) {
    emit_zero(g, t);
    return;
  }
  put(g, "{ ");
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    if (i > 0) put(g, ", ");
    if (e->args[i] != NULL) {
      dc__cgen_initializer(g, e->args[i]);
    } else if (t->kind == DC_TY_ARRAY) {
      emit_zero(g, t->base);
    } else {
      emit_zero(g, t->record->fields[i].type);
    }
  }
  // The slots of an array past the list are zero: in C++, explicitly.
  bool fill = g->hooks->cxx && t->kind == DC_TY_ARRAY && holds_vector(t);
  for (uint32_t i = e->arg_count; fill && i < t->length; ++i) {
    put(g, ", ");
    emit_zero(g, t->base);
  }
  put(g, " }");
}

void dc__cgen_initializer(dc__cgen_t* g, const dc__expr_t* e) {
  if (e != NULL && e->kind == DC_EXPR_INIT_LIST && !g->failed) {
    emit_braces(g, e);
  } else {
    dc__cgen_expr(g, e);
  }
}

// A braced list in an expression: a compound literal (C99).
static void emit_compound_literal(dc__cgen_t* g, const dc__expr_t* e) {
  const char* type = type_text(g, e->type);
  if (!g->hooks->cxx) {
    dc__cgen_printf(g, "((%s)", type);
    emit_braces(g, e);
    put(g, ")");
    return;
  }
  if (e->type->kind == DC_TY_ARRAY) {
    dc__cgen_fail(g, e->token,
                  "an array compound literal is not supported on this "
                  "device; declare an array variable");
    return;
  }
  uint32_t n = ++g->temps;
  dc__cgen_open_block(g);
  dc__cgen_printf(g, "%s dc_c%u = ", type, n);
  emit_braces(g, e);
  put(g, "; ");
  dc__cgen_close_block(g, dc__arena_printf(g->arena, "dc_c%u", n));
}

static void emit_index(dc__cgen_t* g, const dc__expr_t* e) {
  const dc__ty_t* array = e->lhs->type;
  if (g->checked && array->kind == DC_TY_ARRAY && array->length > 0 &&
      !dc__cgen_prechecked(g, e)) {
    put(g, "(");
    emit(g, e->lhs);
    put(g, ")[DC_AIDX(");
    emit(g, e->rhs);
    dc__cgen_printf(g, ", %u, %u)]", array->length, e->token->line);
    return;
  }
  put(g, "(");
  emit(g, e->lhs);
  put(g, ")[");
  emit(g, e->rhs);
  put(g, "]");
}

static void emit_member(dc__cgen_t* g, const dc__expr_t* e) {
  put(g, "(");
  emit(g, e->lhs);
  dc__cgen_printf(g, ")%s" DC_USER_PREFIX "%s", e->arrow ? "->" : ".",
                  e->field->name);
}

//===-- Expressions -------------------------------------------------------===//

void dc__cgen_expr(dc__cgen_t* g, const dc__expr_t* e) {
  if (g->failed || e == NULL) return;
  if (g->checked && dc__cgen_checked_expr(g, e)) return;
  if (e->is_constant && dc__ty_is_integer(e->type) && !e->is_lvalue) {
    emit_integer(g, e->type, e->value.i);
    return;
  }
  switch (e->kind) {
    case DC_EXPR_INT:
    case DC_EXPR_SIZEOF:
      emit_integer(g, e->type, e->value.i);
      return;
    case DC_EXPR_FLOAT:
      emit_floating(g, e->type, e->value.f);
      return;
    case DC_EXPR_NAME:
      emit_name(g, e->decl);
      return;
    case DC_EXPR_CONSTANT:
      put(g, builtin_name(g, e->builtin));
      return;
    case DC_EXPR_CALL:
      emit_call(g, e);
      return;
    case DC_EXPR_BUILTIN:
      dc__cgen_printf(g, "%s(", builtin_name(g, e->builtin));
      emit_args(g, e, true);
      return;
    case DC_EXPR_UNARY:
      emit_unary(g, e);
      return;
    case DC_EXPR_BINARY:
      emit_binary(g, e);
      return;
    case DC_EXPR_ASSIGN:
      emit_assign(g, e);
      return;
    case DC_EXPR_COND:
      if (is_vector(e->cond->type)) {
        // OpenCL defines a vector ?: as select(b, a, cond).
        put(g, "select(");
        emit(g, e->rhs);
        put(g, ", ");
        emit(g, e->lhs);
        put(g, ", ");
        emit(g, e->cond);
        put(g, ")");
      } else {
        put(g, "(");
        dc__cgen_condition(g, e->cond);
        put(g, " ? ");
        emit(g, e->lhs);
        put(g, " : ");
        emit(g, e->rhs);
        put(g, ")");
      }
      return;
    case DC_EXPR_CAST:
      emit_cast(g, e);
      return;
    case DC_EXPR_INDEX:
      emit_index(g, e);
      return;
    case DC_EXPR_MEMBER:
      emit_member(g, e);
      return;
    case DC_EXPR_SWIZZLE:
      emit_swizzle(g, e);
      return;
    case DC_EXPR_VECTOR:
      emit_vector(g, e);
      return;
    case DC_EXPR_INIT_LIST:
      emit_compound_literal(g, e);
      return;
  }
}

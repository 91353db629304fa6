// sema_internal.h: what the files of the analysis of expressions share.
//
//   sema_expr.c       the grammar: primary, postfix, unary and cast
//                     expressions, precedence climbing, names and calls
//   sema_operators.c  what each operator means: operand conversions,
//                     result types, lvalues, folding of constants
//   sema_literal.c    integer, floating, character and string literals
//   sema_convert.c    nodes, the arithmetic of types and the conversions
//                     of OpenCL C 6.2 (implicit and explicit)
//   sema_init.c       initialisers and vector literals
//
// Internal to the semantic analysis; parse.c needs only sema.h.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_SEMA_INTERNAL_H_
#define DC_KERNEL_SEMA_INTERNAL_H_

#include "sema.h"

//===-- Nodes -------------------------------------------------------------===//

// A zeroed node of |kind| and |type| at |token|; NULL (after an error) when
// |type| is NULL or the arena is out of memory.
DC_INTERNAL dc__expr_t* dc__sema_node(dc__sema_t* s, dc__expr_kind_t kind,
                                      const dc__ty_t* type,
                                      const dc__token_t* token);
// An integer constant (DC_EXPR_INT) of the integer type |type|; |bits| is
// wrapped to the type as a conversion in C would.
DC_INTERNAL dc__expr_t* dc__sema_int(dc__sema_t* s, const dc__ty_t* type,
                                     uint64_t bits, const dc__token_t* token);
// A DC_EXPR_CAST of |e| to |to| doing |conv|.
DC_INTERNAL dc__expr_t* dc__sema_cast_node(dc__sema_t* s, dc__expr_t* e,
                                           const dc__ty_t* to,
                                           dc__conv_t conv, bool implicit);
// The spelling of |type| for messages.
DC_INTERNAL const char* dc__sema_ty(dc__sema_t* s, const dc__ty_t* type);

//===-- Types -------------------------------------------------------------===//

DC_INTERNAL const dc__ty_t* dc__sema_scalar(dc__sema_t* s,
                                            dc__scalar_t scalar);
DC_INTERNAL const dc__ty_t* dc__sema_int_ty(dc__sema_t* s);
// The scalar of an arithmetic type (DC_SCALAR_INT for an enum).
DC_INTERNAL dc__scalar_t dc__sema_scalar_of(const dc__ty_t* t);
DC_INTERNAL bool dc__sema_is_unsigned(dc__scalar_t scalar);
// C99 6.3.1.1: bool, char and short (signed or not) become int.
DC_INTERNAL dc__scalar_t dc__sema_promote(dc__scalar_t scalar);
// C99 6.3.1.8 for two scalars; size_t ranks as ulong, ptrdiff_t as long.
DC_INTERNAL dc__scalar_t dc__sema_common(dc__scalar_t a, dc__scalar_t b);
// The type of a comparison of values of |t| (OpenCL C 6.3.d): int for a
// scalar, for a vector the signed integer vector of as many components of
// the same size (float4 -> int4, double2 -> long2, uchar16 -> char16).
DC_INTERNAL const dc__ty_t* dc__sema_mask_type(dc__sema_t* s,
                                               const dc__ty_t* t);
// True if an object of |t| can be read and written whole: not void, not
// an incomplete record, not an array of unknown length.
DC_INTERNAL bool dc__sema_is_complete(const dc__ty_t* t);

//===-- Constants ---------------------------------------------------------===//

// |bits| converted to the integer scalar |scalar| (two's complement
// wrap-around; bool: != 0), held as dc__expr_t.value.i holds it.
DC_INTERNAL int64_t dc__sema_wrap(dc__scalar_t scalar, uint64_t bits);
// True if |e| is a null pointer constant: an integer constant expression
// of value 0, or one cast to void*.
DC_INTERNAL bool dc__sema_is_null_pointer(const dc__expr_t* e);
// True if |e| is an arithmetic constant (an integer constant expression or
// a folded floating constant), as a program-scope initialiser needs.
DC_INTERNAL bool dc__sema_is_arithmetic_constant(const dc__expr_t* e);

//===-- Conversions -------------------------------------------------------===//

// Marks the variable whose storage the lvalue |e| designates (through
// components, members and array elements) as stored to or having its
// address taken (dc__decl_t.is_assigned).
DC_INTERNAL void dc__sema_mark_assigned(const dc__expr_t* e);
// |e| as a value (C99 6.3.2.1): an array decays to a pointer to its first
// element (DC_CONV_ARRAY_DECAY, which takes the array's address);
// qualifiers and the address space of an lvalue's type are dropped
// (DC_CONV_NONE). NULL stays NULL.
DC_INTERNAL dc__expr_t* dc__sema_rvalue(dc__sema_t* s, dc__expr_t* e);
// The arithmetic value |e| (an rvalue) converted to the arithmetic scalar
// type |to| (DC_CONV_ARITH or DC_CONV_TO_BOOL), folded when |e| is a
// constant.
DC_INTERNAL dc__expr_t* dc__sema_arith(dc__sema_t* s, dc__expr_t* e,
                                       const dc__ty_t* to, bool implicit);
// The arithmetic scalar |e| (an rvalue) converted to |vector|'s element
// type and repeated (DC_CONV_SPLAT).
DC_INTERNAL dc__expr_t* dc__sema_splat(dc__sema_t* s, dc__expr_t* e,
                                       const dc__ty_t* vector, bool implicit);
// The null pointer constant |e| as a null pointer of |to| (DC_CONV_NULL).
DC_INTERNAL dc__expr_t* dc__sema_null_pointer(dc__sema_t* s, dc__expr_t* e,
                                              const dc__ty_t* to,
                                              bool implicit);
// An explicit cast of |e| to |to| (OpenCL C 6.2.1-6.2.4), |where| being the
// cast's '(' (for messages). NULL after an error.
DC_INTERNAL dc__expr_t* dc__sema_explicit_cast(dc__sema_t* s, dc__expr_t* e,
                                               const dc__ty_t* to,
                                               const dc__token_t* where);

//===-- Literals (sema_literal.c) -----------------------------------------===//

// The number (integer or floating constant) |t|.
DC_INTERNAL dc__expr_t* dc__sema_number_literal(dc__sema_t* s,
                                                const dc__token_t* t);
// The character constant |t|: an int with the value of a (signed) char.
DC_INTERNAL dc__expr_t* dc__sema_char_literal(dc__sema_t* s,
                                              const dc__token_t* t);
// The type of the string literals at the cursor (adjacent ones joined),
// which it passes: __constant char[N]. Only sizeof may hold one.
DC_INTERNAL const dc__ty_t* dc__sema_string_type(dc__sema_t* s);
// The string literals at the cursor (adjacent ones joined) as the
// initialiser of the char or uchar array |type| (its length from the
// string when it has none): a list of the bytes, with the NUL where
// there is room (C99 6.7.8p14).
DC_INTERNAL dc__expr_t* dc__sema_string_init(dc__sema_t* s,
                                             const dc__ty_t* type);

//===-- Operators (sema_operators.c) --------------------------------------===//

typedef enum dc__op_e {
  DC_OP_NONE,  // plain '='
  DC_OP_MUL, DC_OP_DIV, DC_OP_MOD, DC_OP_ADD, DC_OP_SUB, DC_OP_SHL,
  DC_OP_SHR, DC_OP_LT, DC_OP_GT, DC_OP_LE, DC_OP_GE, DC_OP_EQ, DC_OP_NE,
  DC_OP_AND, DC_OP_XOR, DC_OP_OR, DC_OP_LAND, DC_OP_LOR,
  DC_OP_SELECT,  // the arms of '?:', for messages
} dc__op_t;

// If |t| is a binary operator, sets *op and returns its precedence (1 for
// '||' up to 10 for '*'); else returns 0.
DC_INTERNAL int dc__sema_binary_operator(const dc__token_t* t, dc__op_t* op);
// True if |t| is an assignment operator; *op is DC_OP_NONE for '='.
DC_INTERNAL bool dc__sema_assignment_operator(const dc__token_t* t,
                                              dc__op_t* op);
// |l| |op| |r| (every binary operator but the comma); |where| is the
// operator, for messages.
DC_INTERNAL dc__expr_t* dc__sema_binary(dc__sema_t* s, dc__op_t op,
                                        const dc__token_t* where,
                                        dc__expr_t* l, dc__expr_t* r);
DC_INTERNAL dc__expr_t* dc__sema_comma(dc__sema_t* s, dc__expr_t* l,
                                       dc__expr_t* r);
// The prefix operator |op| ('&', '*', '+', '-', '~', '!', '++', '--')
// applied to |e|.
DC_INTERNAL dc__expr_t* dc__sema_unary(dc__sema_t* s, const dc__token_t* op,
                                       dc__expr_t* e);
// e++ or e-- (|op| is the operator).
DC_INTERNAL dc__expr_t* dc__sema_postfix_step(dc__sema_t* s,
                                              const dc__token_t* op,
                                              dc__expr_t* e);
// c ? a : b (|where| is the '?').
DC_INTERNAL dc__expr_t* dc__sema_select(dc__sema_t* s,
                                        const dc__token_t* where,
                                        dc__expr_t* c, dc__expr_t* a,
                                        dc__expr_t* b);
// l = r and l op= r (|where| is the operator).
DC_INTERNAL dc__expr_t* dc__sema_assign(dc__sema_t* s,
                                        const dc__token_t* where, dc__op_t op,
                                        dc__expr_t* l, dc__expr_t* r);
// Checks that arithmetic may step over |pointer|'s pointed-to objects
// (they have a size).
DC_INTERNAL bool dc__sema_check_steppable(dc__sema_t* s,
                                          const dc__ty_t* pointer,
                                          const dc__token_t* where);

//===-- Expressions (sema_expr.c) and initialisers (sema_init.c) ----------===//

// A conditional-expression at the cursor.
DC_INTERNAL dc__expr_t* dc__sema_conditional(dc__sema_t* s);
// The vector |type| built from |parts| (scalars and vectors of its element
// type whose components add up to its width): a vector literal
// (DC_EXPR_VECTOR). |what| names the construct for messages ("vector
// literal", "initialiser").
DC_INTERNAL dc__expr_t* dc__sema_vector_parts(dc__sema_t* s,
                                              const dc__ty_t* type,
                                              dc__expr_t** parts,
                                              uint32_t count,
                                              const dc__token_t* where,
                                              const char* what);

#endif  // DC_KERNEL_SEMA_INTERNAL_H_

// const_expr.h: integer constant expressions of the kernel language, as
// #if conditions and attribute arguments (reqd_work_group_size) need them.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_CONST_EXPR_H_
#define DC_KERNEL_CONST_EXPR_H_

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "lex.h"

// Evaluates the |count| tokens at |toks| (macros already expanded) as one
// integer constant expression: numbers, character constants, parentheses,
// unary - + ! ~, the binary operators of C and ?:. A name is 0 when
// |names_are_zero| (the #if rule) and an error otherwise. On failure,
// reports one error into |diag| at the offending token (|where| when the
// expression is empty or ends early), its message naming |what| ("#if"),
// and returns false.
DC_INTERNAL bool dc__eval_const_expr(const dc__token_t* toks, size_t count,
                                     bool names_are_zero, const char* what,
                                     const dc__token_t* where,
                                     dc__diag_t* diag, long long* out_value);

#endif  // DC_KERNEL_CONST_EXPR_H_

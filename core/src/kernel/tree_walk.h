// tree_walk.h: visits the expressions of a typed program, for the
// analyses code generators make (which variables a statement uses, which
// built-ins a function reaches, whose address it takes).
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_TREE_WALK_H_
#define DC_KERNEL_TREE_WALK_H_

#include "ast.h"
#include "tree.h"

// Returns true when |visit| is for an expression.
typedef bool (*dc__expr_visit_t)(const dc__expr_t* e, void* ctx);

// Calls |visit| on |e| and on every expression inside it, operands before
// the expressions that hold them, until one call returns true; returns
// whether one did.
DC_INTERNAL bool dc__expr_any(const dc__expr_t* e, dc__expr_visit_t visit,
                              void* ctx);
// The same for every expression of the statement |s| and the statements
// in it (conditions, steps, initialisers of declarations).
DC_INTERNAL bool dc__stmt_any(const dc__stmt_t* s, dc__expr_visit_t visit,
                              void* ctx);

// The variable an lvalue designates storage of: `a` for a, a.f, a[i] of
// an array, a.xy (not for p->f or p[i], which designate what the pointer
// p points to). NULL when there is none.
DC_INTERNAL dc__decl_t* dc__expr_root(const dc__expr_t* e);
// Whether |s| reads or writes the variable |d| anywhere.
DC_INTERNAL bool dc__stmt_uses(const dc__stmt_t* s, const dc__decl_t* d);

#endif  // DC_KERNEL_TREE_WALK_H_

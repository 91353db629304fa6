// tree_walk.c: visits the expressions of a typed program.
// SPDX-License-Identifier: MIT
#include "tree_walk.h"

bool dc__expr_any(const dc__expr_t* e, dc__expr_visit_t visit, void* ctx) {
  if (e == NULL) return false;
  if (dc__expr_any(e->lhs, visit, ctx) || dc__expr_any(e->rhs, visit, ctx) ||
      dc__expr_any(e->cond, visit, ctx)) {
    return true;
  }
  for (uint32_t i = 0; i < e->arg_count; ++i) {
    if (dc__expr_any(e->args[i], visit, ctx)) return true;
  }
  return visit(e, ctx);
}

bool dc__stmt_any(const dc__stmt_t* s, dc__expr_visit_t visit, void* ctx) {
  if (s == NULL) return false;
  if (dc__expr_any(s->value, visit, ctx) ||
      dc__expr_any(s->step_value, visit, ctx)) {
    return true;
  }
  for (uint32_t i = 0; i < s->declarator_count; ++i) {
    const dc__decl_t* d = s->declarators[i].decl;
    if (d != NULL && dc__expr_any(d->init, visit, ctx)) return true;
  }
  for (uint32_t i = 0; i < s->child_count; ++i) {
    if (dc__stmt_any(s->children[i], visit, ctx)) return true;
  }
  return dc__stmt_any(s->init, visit, ctx) ||
         dc__stmt_any(s->body, visit, ctx) ||
         dc__stmt_any(s->else_body, visit, ctx);
}

dc__decl_t* dc__expr_root(const dc__expr_t* e) {
  for (; e != NULL; e = e->lhs) {
    if (e->kind == DC_EXPR_NAME) return e->decl;
    bool inside = e->kind == DC_EXPR_SWIZZLE ||
                  (e->kind == DC_EXPR_MEMBER && !e->arrow) ||
                  (e->kind == DC_EXPR_INDEX &&
                   e->lhs->type->kind == DC_TY_ARRAY) ||
                  (e->kind == DC_EXPR_CAST && e->conv == DC_CONV_NONE);
    if (!inside) return NULL;
  }
  return NULL;
}

static bool names(const dc__expr_t* e, void* d) {
  return e->kind == DC_EXPR_NAME && e->decl == d;
}

bool dc__stmt_uses(const dc__stmt_t* s, const dc__decl_t* d) {
  return dc__stmt_any(s, names, (void*)d);
}

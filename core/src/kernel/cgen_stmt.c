// cgen_stmt.c: statements, variables and functions, written from the tree.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "cgen.h"

static const dc__token_t* token_at(const dc__cgen_t* g, uint32_t index) {
  return &g->ast->tokens[index];
}

void dc__cgen_variable(dc__cgen_t* g, const dc__decl_t* d, const char* name) {
  if (d->align != 0) {
    dc__cgen_printf(g, " %s(%u)", g->hooks->cxx ? "alignas" : "_Alignas",
                    d->align);
  }
  dc__cgen_printf(g, " %s",
                  dc__cgen_declaration(g, d->type,
                                       name ? name : dc__cgen_name(g, d), 0));
  if (d->init != NULL) {
    dc__cgen_puts(g, " = ");
    dc__cgen_initializer(g, d->init);
  } else if (g->checked && dc__cgen_holds_pointer(d->type)) {
    // A pointer never holds what the stack did.
    dc__cgen_puts(g, g->hooks->cxx ? " = {}" : " = {0}");
  }
  dc__cgen_puts(g, ";");
}

// What #pragma unroll asked of the loop |s|, as gcc or NVRTC spell it (on
// a line of its own: the next token needs its #line again).
static void emit_unroll(dc__cgen_t* g, const dc__stmt_t* s) {
  if (s->unroll == 0) return;
  if (g->hooks->cxx) {
    if (s->unroll == DC_UNROLL_FULL) {
      dc__cgen_puts(g, "\n#pragma unroll\n");
    } else {
      dc__cgen_printf(g, "\n#pragma unroll %d\n",
                      s->unroll == DC_UNROLL_NEVER ? 1 : (int)s->unroll);
    }
  } else {
    int count = s->unroll == DC_UNROLL_FULL    ? 65534
                : s->unroll == DC_UNROLL_NEVER ? 1
                : s->unroll > 65534            ? 65534
                                               : s->unroll;
    dc__cgen_printf(g, "\n#pragma GCC unroll %d\n", count);
  }
  dc__cgen_new_line(g);
}

// A loop's or a switch's body; a checked loop polls first
// (cgen_checked.c) when |loop| says so: a short loop needs no poll
// (cgen_ranges.c).
static void emit_body(dc__cgen_t* g, const dc__stmt_t* body, bool loop) {
  bool poll = loop && g->checked;
  ++g->loop_depth;
  if (poll) {
    dc__cgen_puts(g, " {");
    dc__cgen_poll(g, token_at(g, body->token));
  }
  dc__cgen_stmt(g, body);
  if (poll) dc__cgen_puts(g, " }");
  --g->loop_depth;
}

// for (init; cond; step): a declaration in |init| goes before the loop,
// in a block of its own (C allows one declaration there, the tree holds
// one variable per declarator).
static void emit_for(dc__cgen_t* g, const dc__stmt_t* s) {
  dc__cgen_puts(g, " {");
  if (s->init != NULL && s->init->kind == DC_STMT_DECL) {
    dc__cgen_stmt(g, s->init);
  }
  emit_unroll(g, s);
  dc__cgen_puts(g, " for (");
  if (s->init != NULL && s->init->kind == DC_STMT_EXPR) {
    dc__cgen_expr(g, s->init->value);
  }
  dc__cgen_puts(g, "; ");
  dc__cgen_condition(g, s->value);
  dc__cgen_puts(g, "; ");
  dc__cgen_expr(g, s->step_value);
  dc__cgen_puts(g, ")");
  emit_body(g, s->body, g->checked && !dc__cgen_short_loop(g, s));
  dc__cgen_puts(g, " }");
}

static void emit_label_name(dc__cgen_t* g, const dc__stmt_t* s) {
  const dc__token_t* t = token_at(g, s->expr.begin);
  dc__cgen_printf(g, " " DC_USER_PREFIX "%.*s", (int)t->length, t->text);
}

// A value between |head| and |tail|.
static void emit_wrapped(dc__cgen_t* g, const char* head,
                         const dc__expr_t* e, const char* tail) {
  dc__cgen_puts(g, head);
  dc__cgen_expr(g, e);
  dc__cgen_puts(g, tail);
}

// A condition between |head| and |tail|.
static void emit_test(dc__cgen_t* g, const char* head, const dc__expr_t* e,
                      const char* tail) {
  dc__cgen_puts(g, head);
  dc__cgen_condition(g, e);
  dc__cgen_puts(g, tail);
}

void dc__cgen_stmt(dc__cgen_t* g, const dc__stmt_t* s) {
  if (g->failed || s == NULL) return;
  dc__cgen_at_line(g, token_at(g, s->token)->line);
  if (g->hooks->stmt != NULL && g->hooks->stmt(g, s)) return;
  switch (s->kind) {
    case DC_STMT_BLOCK:
      dc__cgen_puts(g, " {");
      for (uint32_t i = 0; i < s->child_count; ++i) {
        dc__cgen_stmt(g, s->children[i]);
      }
      dc__cgen_puts(g, " }");
      return;
    case DC_STMT_DECL:
      for (uint32_t i = 0; i < s->declarator_count; ++i) {
        dc__cgen_variable(g, s->declarators[i].decl, NULL);
      }
      return;
    case DC_STMT_EXPR:
      emit_wrapped(g, " ", s->value, ";");
      return;
    case DC_STMT_IF:
      emit_test(g, " if (", s->value, ")");
      dc__cgen_stmt(g, s->body);
      if (s->else_body != NULL) {
        dc__cgen_puts(g, " else");
        dc__cgen_stmt(g, s->else_body);
      }
      return;
    case DC_STMT_FOR:
      emit_for(g, s);
      return;
    case DC_STMT_WHILE:
      emit_unroll(g, s);
      emit_test(g, " while (", s->value, ")");
      emit_body(g, s->body, true);
      return;
    case DC_STMT_DO:
      emit_unroll(g, s);
      dc__cgen_puts(g, " do");
      emit_body(g, s->body, true);
      emit_test(g, " while (", s->value, ");");
      return;
    case DC_STMT_SWITCH:
      emit_wrapped(g, " switch (", s->value, ")");
      emit_body(g, s->body, false);
      return;
    case DC_STMT_CASE:
      if (s->value == NULL) {
        dc__cgen_puts(g, " default:;");
      } else {
        emit_wrapped(g, " case ", s->value, ":;");
      }
      return;
    case DC_STMT_RETURN:
      emit_wrapped(g, s->value ? " return " : " return", s->value, ";");
      return;
    case DC_STMT_BREAK:
      dc__cgen_puts(g, " break;");
      return;
    case DC_STMT_CONTINUE:
      dc__cgen_puts(g, " continue;");
      return;
    case DC_STMT_GOTO:
      dc__cgen_puts(g, " goto");
      emit_label_name(g, s);
      dc__cgen_puts(g, ";");
      return;
    case DC_STMT_LABEL:
      emit_label_name(g, s);
      dc__cgen_puts(g, ":;");
      dc__cgen_poll(g, token_at(g, s->token));  // a goto may loop here
      dc__cgen_stmt(g, s->body);
      return;
    case DC_STMT_EMPTY:
      dc__cgen_puts(g, " ;");
      return;
    case DC_STMT_BARRIER:
    case DC_STMT_GRID_SYNC:
      break;  // each back end runs its own (hooks->stmt)
  }
  dc__cgen_fail(g, token_at(g, s->token),
                "internal: a barrier the back end did not place");
}

//===-- Functions ---------------------------------------------------------===//

void dc__cgen_helper(dc__cgen_t* g, const dc__function_t* fn,
                     bool prototype) {
  const dc__decl_t* d = fn->decl;
  g->fn = fn;
  g->in_kernel = false;
  dc__cgen_new_line(g);
  dc__cgen_at_line(g, d->token->line);
  dc__strbuf_t* saved = g->out;
  dc__strbuf_t head;
  dc__strbuf_init(&head, g->arena);
  g->out = &head;
  dc__cgen_printf(g, "%s(%s", dc__cgen_name(g, d), g->hooks->wi_param);
  for (uint32_t i = 0; i < d->param_count; ++i) {
    const dc__decl_t* p = d->params[i];
    dc__cgen_printf(g, ", %s",
                    dc__cgen_declaration(g, p->type, dc__cgen_name(g, p), 0));
  }
  dc__cgen_puts(g, ")");
  g->out = saved;
  dc__cgen_printf(g, "%s %s", g->hooks->helper_prefix,
                  dc__cgen_declaration(g, d->type, head.data ? head.data : "",
                                       0));
  if (prototype || fn->body == NULL) {
    dc__cgen_puts(g, ";");
    return;
  }
  dc__cgen_printf(g, " {%s", g->hooks->helper_body_prefix);
  dc__cgen_stmt(g, fn->body);
  if (g->hooks->helper_body_suffix != NULL) {
    dc__cgen_puts(g, g->hooks->helper_body_suffix);
  }
  dc__cgen_puts(g, " }");
}

void dc__cgen_global(dc__cgen_t* g, const dc__decl_t* d) {
  dc__cgen_at_line(g, d->token->line);
  dc__cgen_puts(g, g->hooks->global_prefix);
  g->static_init = true;
  dc__cgen_variable(g, d, NULL);
  g->static_init = false;
}

void dc__cgen_program(dc__cgen_t* g) {
  const dc__program_ast_t* ast = g->ast;
  if (g->checked) dc__cgen_checked_program(g);
  dc__cgen_records(g);
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (!ast->functions[i].is_kernel) {
      dc__cgen_helper(g, &ast->functions[i], /*prototype=*/true);
    }
  }
  for (uint32_t k = 0; k < ast->order_count && !g->failed; ++k) {
    int32_t item = ast->order[k];
    if (item < 0) {
      const dc__global_t* global = &ast->globals[~item];
      for (uint32_t i = 0; !global->is_typedef &&
                           i < global->decl->declarator_count; ++i) {
        dc__cgen_global(g, global->decl->declarators[i].decl);
      }
      continue;
    }
    const dc__function_t* fn = &ast->functions[item];
    if (fn->body == NULL) continue;
    if (fn->is_kernel) {
      g->hooks->kernel(g, fn);
    } else {
      dc__cgen_helper(g, fn, /*prototype=*/false);
    }
  }
  dc__cgen_puts(g, "\n");
}

// parse_jumps.c: what a function's jumps need: break and continue a
// loop or switch around them, case and default a switch (each value
// once), goto a label of the function (each label once).
// SPDX-License-Identifier: MIT
#include "parse_internal.h"

// The switch statement around a case label, for duplicate labels.
typedef struct switch_t {
  const dc__stmt_t** cases;
  uint32_t count;
  uint32_t capacity;
} switch_t;

// What surrounds a statement: loops, the innermost switch, the function.
typedef struct jumps_t {
  uint32_t loops;
  switch_t* current;
  const dc__function_t* fn;
} jumps_t;

static const dc__stmt_t* find_label(const dc__sema_t* s, const dc__stmt_t* st,
                                    const dc__token_t* name,
                                    const dc__stmt_t* except) {
  if (st == NULL) return NULL;
  if (st->kind == DC_STMT_LABEL && st != except &&
      dc__same_name(name->text, name->length, &s->toks[st->expr.begin])) {
    return st;
  }
  for (uint32_t i = 0; i < st->child_count; ++i) {
    const dc__stmt_t* found = find_label(s, st->children[i], name, except);
    if (found) return found;
  }
  const dc__stmt_t* found = find_label(s, st->init, name, except);
  if (!found) found = find_label(s, st->body, name, except);
  if (!found) found = find_label(s, st->else_body, name, except);
  return found;
}

static void check_case(dc__sema_t* s, const dc__stmt_t* st, switch_t* sw) {
  const dc__token_t* at = &s->toks[st->token];
  if (sw == NULL) {
    dc__sema_error(s, at, "'%s' outside a switch",
                   st->value ? "case" : "default");
    return;
  }
  for (uint32_t i = 0; i < sw->count; ++i) {
    const dc__stmt_t* other = sw->cases[i];
    bool same = st->value ? other->value &&
                                other->value->value.i == st->value->value.i
                          : other->value == NULL;
    if (same) {
      dc__sema_error(s, at, "duplicate %s in a switch (the first is at line "
                     "%u)", st->value ? "case value" : "'default'",
                     s->toks[other->token].line);
      return;
    }
  }
  if (dc__sema_grow(s, (void**)&sw->cases, &sw->capacity, sw->count,
           sizeof(*sw->cases))) {
    sw->cases[sw->count++] = st;
  }
}

// Checks that every break, continue, case, default and goto of |st| has
// the statement it jumps to or belongs in.
static void check_jumps(dc__sema_t* s, const dc__stmt_t* st, jumps_t j) {
  if (st == NULL) return;
  const dc__token_t* at = &s->toks[st->token];
  switch (st->kind) {
    case DC_STMT_BREAK:
      if (j.loops == 0 && j.current == NULL) {
        dc__sema_error(s, at, "'break' outside a loop or switch");
      }
      return;
    case DC_STMT_CONTINUE:
      if (j.loops == 0) dc__sema_error(s, at, "'continue' outside a loop");
      return;
    case DC_STMT_CASE:
      check_case(s, st, j.current);
      return;
    case DC_STMT_GOTO:
      if (!find_label(s, j.fn->body, &s->toks[st->expr.begin], NULL)) {
        dc__sema_error(s, &s->toks[st->expr.begin], "goto to label '%s', "
                       "which the function does not have",
                       dc__sema_spell(s, &s->toks[st->expr.begin]));
      }
      return;
    case DC_STMT_LABEL: {
      const dc__stmt_t* other =
          find_label(s, j.fn->body, &s->toks[st->expr.begin], st);
      if (other != NULL && other->token < st->token) {
        dc__sema_error(s, at, "duplicate label '%s' (the first is at line "
                       "%u)", dc__sema_spell(s, at), s->toks[other->token].line);
      }
      break;
    }
    case DC_STMT_FOR:
    case DC_STMT_WHILE:
    case DC_STMT_DO:
      ++j.loops;
      break;
    case DC_STMT_SWITCH: {
      switch_t* sw = dc__arena_zalloc(s->arena, 1, sizeof(*sw));
      if (sw == NULL) return;
      j.current = sw;
      break;
    }
    default:
      break;
  }
  for (uint32_t i = 0; i < st->child_count; ++i) {
    check_jumps(s, st->children[i], j);
  }
  check_jumps(s, st->init, j);
  check_jumps(s, st->body, j);
  check_jumps(s, st->else_body, j);
}

void dc__check_jumps(dc__sema_t* s, const dc__function_t* fn) {
  check_jumps(s, fn->body, (jumps_t){.fn = fn});
}

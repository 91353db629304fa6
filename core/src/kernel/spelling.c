// spelling.c: how code generators spell the names of a program.
// SPDX-License-Identifier: MIT
#include "spelling.h"

#include "builtin_table.h"

const char* dc__token_spelling(dc__arena_t* arena,
                               const dc__program_ast_t* ast,
                               const dc__token_t* t) {
  bool user = t->kind == DC_TOK_IDENT &&
              ast->token_names[t - ast->tokens] != DC_NAME_NONE;
  const char* text = user ? dc__arena_printf(arena, DC_USER_PREFIX "%.*s",
                                             (int)t->length, t->text)
                          : dc__arena_strndup(arena, t->text, t->length);
  return text ? text : "";
}

const char* dc__fixed_spelling(dc__arena_t* arena,
                               const dc__program_ast_t* ast, uint32_t i) {
  const struct dc__builtin_t* builtin = ast->token_builtins[i];
  if (builtin != NULL && builtin->spelling != NULL) return builtin->spelling;
  dc__name_kind_t named = (dc__name_kind_t)ast->token_names[i];
  if (named == DC_NAME_FIELD || named == DC_NAME_TAG ||
      named == DC_NAME_LABEL) {
    return dc__token_spelling(arena, ast, &ast->tokens[i]);
  }
  return NULL;
}

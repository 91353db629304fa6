// spelling.h: how code generators spell the names of a program (every
// name the program chose carries DC_USER_PREFIX, tree.h), shared by the
// CPU's and the CUDA device's generators.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_SPELLING_H_
#define DC_KERNEL_SPELLING_H_

#include "ast.h"
#include "tree.h"

// Token |t| of |ast| as generated code spells it: a name the program
// chose with DC_USER_PREFIX, anything else as written. In |arena|.
DC_INTERNAL const char* dc__token_spelling(dc__arena_t* arena,
                                           const dc__program_ast_t* ast,
                                           const dc__token_t* t);

// The spelling of identifier token |i| when it does not depend on the
// generator: a built-in that the preludes implement under another name,
// or a member, tag or label (names of their own, never variables). NULL
// for every other token, which the generator resolves itself.
DC_INTERNAL const char* dc__fixed_spelling(dc__arena_t* arena,
                                           const dc__program_ast_t* ast,
                                           uint32_t i);

#endif  // DC_KERNEL_SPELLING_H_

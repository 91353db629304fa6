// fuzz_frontend.c: the kernel compiler's front end as a fuzz target:
// build options, the preprocessor and the parser over one input, then
// every lowering (C, CUDA C++ and OpenCL C, with and without bounds
// checks) over every program the analysis accepts, in a fresh arena and
// build log, all freed at the end.
//
// The input's first line holds the build options when it starts with '-'
// (e.g. "-DN=4 -cl-fast-relaxed-math"); otherwise all of it is source.
// Besides crashes and sanitizer reports, the target aborts when the front
// end breaks a promise the rest of the engine relies on (see
// check_invariants), so the fuzzer reports that too.
//
// Built as a libFuzzer binary (fuzz_frontend, clang with DC_FUZZ=ON) and,
// always, into fuzz_replay (replay_main.c), which runs it over a seed
// corpus and deterministic mutations of it in the normal test suite.
// docs/fuzzing.md has the commands.
// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/ast.h"
#include "kernel/kernel_limits.h"
#include "kernel/lower.h"
#include "kernel/pp.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// The bytes the last input made the front end allocate: fuzz_replay
// gives fewer mutations to seeds that cost much (a deterministic measure,
// unlike time).
size_t dc_fuzz_last_arena_bytes;

// What the whole front end may allocate for one input, at most: the
// preprocessor's limits bound it far below this.
#define FUZZ_MAX_ARENA_BYTES ((size_t)1 << 30)

static void violated(const char* what) {
  fprintf(stderr, "fuzz_frontend: invariant violated: %s\n", what);
  abort();
}

// A string or character token may hold no line end a C compiler would
// see (a CR anywhere, an LF not escaped) and no other control byte.
static bool literal_is_plain(const dc__token_t* t) {
  for (uint32_t i = 0; i < t->length; ++i) {
    unsigned char c = (unsigned char)t->text[i];
    bool continued = c == '\n' && i > 0 && t->text[i - 1] == '\\';
    if ((c < 0x20 && c != '\t' && !continued) || c == 0x7f) return false;
  }
  return true;
}

// What the preprocessor promises about the tokens it hands on.
static void check_tokens(const dc__token_list_t* tokens) {
  if (tokens->count == 0 ||
      tokens->items[tokens->count - 1].kind != DC_TOK_EOF) {
    violated("the token list does not end with EOF");
  }
  if (tokens->count > (size_t)DC_LIMIT_TOKENS + 1) {
    violated("more tokens than DC_LIMIT_TOKENS");
  }
  for (size_t i = 0; i + 1 < tokens->count; ++i) {
    const dc__token_t* t = &tokens->items[i];
    if (t->kind == DC_TOK_EOF || t->kind == DC_TOK_NEWLINE) {
      violated("an EOF or newline token inside the translation unit");
    }
    if (t->kind == DC_TOK_PUNCT &&
        (dc__tok_is(t, "#") || dc__tok_is(t, "##"))) {
      violated("a '#' token left the preprocessor");
    }
    if ((t->kind == DC_TOK_STRING || t->kind == DC_TOK_CHAR) &&
        !literal_is_plain(t)) {
      violated("a literal holds a line end or control byte");
    }
    if (t->line == 0 && t->kind != DC_TOK_PRAGMA) {
      violated("a token of the translation unit has no line");
    }
  }
}

static void check_status(dc_status_t st, const dc__diag_t* diag,
                         const dc__arena_t* arena) {
  if (st != DC_OK && st != DC_ERR_COMPILE && st != DC_ERR_OUT_OF_MEMORY) {
    violated("a front-end status other than OK, COMPILE or OUT_OF_MEMORY");
  }
  if (st == DC_ERR_COMPILE && diag->errors == 0) {
    violated("COMPILE without an error in the build log");
  }
  if (arena->bytes > FUZZ_MAX_ARENA_BYTES) {
    violated("the front end allocated more than 1 GiB");
  }
}

// What every lowering promises on success: text of the length it says,
// and one description per kernel.
static void check_lowered(dc_status_t st, const dc_lowered_program_t* l,
                          const dc__program_ast_t* ast, const char* what) {
  if (st != DC_OK) return;
  size_t kernels = 0;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    kernels += ast->functions[i].is_kernel && ast->functions[i].body != NULL;
  }
  if (l->text == NULL || strlen(l->text) != l->length) violated(what);
  if (l->kernel_count != kernels || (kernels > 0 && l->kernels == NULL)) {
    violated(what);
  }
}

// Lowers |ast| to every dialect: a lowering may refuse a program the
// analysis took only with COMPILE and a message (a form it documents as
// unsupported), never crash or fail otherwise.
static void generate(dc__arena_t* arena, const dc__program_ast_t* ast,
                     dc__diag_t* diag) {
  typedef dc_status_t (*lower_fn)(dc__arena_t*, const dc__program_ast_t*,
                                  const char*, bool, dc__diag_t*,
                                  dc_lowered_program_t*);
  static const struct {
    lower_fn lower;
    const char* what;
  } kDialects[] = {
      {dc__lower_c, "the C lowering's text or kernels are wrong"},
      {dc__lower_cuda, "the CUDA C++ lowering's text or kernels are wrong"},
      {dc__lower_opencl, "the OpenCL C lowering's text or kernels are wrong"},
  };
  for (int bounds = 0; bounds < 2; ++bounds) {
    for (size_t d = 0; d < sizeof(kDialects) / sizeof(kDialects[0]); ++d) {
      dc_lowered_program_t lowered;
      dc_status_t st =
          kDialects[d].lower(arena, ast, "fuzz.cl", bounds, diag, &lowered);
      check_status(st, diag, arena);
      check_lowered(st, &lowered, ast, kDialects[d].what);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* source = (const char*)data;
  size_t length = size;
  char* options = NULL;
  if (size > 0 && data[0] == '-') {
    const uint8_t* eol = memchr(data, '\n', size);
    size_t n = eol ? (size_t)(eol - data) : size;
    options = malloc(n + 1);
    if (options == NULL) return 0;
    memcpy(options, data, n);
    options[n] = '\0';  // a NUL inside ends the options early, as in C
    source += eol ? n + 1 : n;
    length -= eol ? n + 1 : n;
  }
  dc__arena_t arena;
  dc__arena_init(&arena, dc_allocator_system());
  dc__diag_t diag;
  dc__diag_init(&diag, dc_allocator_system(), "fuzz.cl");
  dc__build_options_t parsed;
  dc__token_list_t tokens = {0};
  dc_status_t st = dc__parse_build_options(&arena, options, &diag, &parsed);
  if (st == DC_OK) {
    st = dc__preprocess(&arena, source, length, &parsed, &diag, &tokens);
    if (st == DC_OK) check_tokens(&tokens);
  }
  if (st == DC_OK) {
    dc__program_ast_t ast;
    st = dc__parse(&arena, &tokens, &diag, &ast);
    if (st == DC_OK) generate(&arena, &ast, &diag);
  }
  check_status(st, &diag, &arena);
  dc_fuzz_last_arena_bytes = arena.bytes;
  dc__diag_free(&diag);
  dc__arena_free_all(&arena);
  free(options);
  return 0;
}

// check_kernel_pp.c: the kernel language's lexer, preprocessor and build
// options, through their internal functions: reading at the end of the
// source, the limits of kernel_limits.h, predefined macros, pragmas,
// refused directives and options; then a few programs built and run end
// to end on the CPU device.
// SPDX-License-Identifier: MIT
#include <time.h>

#include "kernel_fixture.h"
#include "kernel/kernel_limits.h"
#include "kernel/pp.h"

//===-- Helpers ---------------------------------------------------------===//

// One run of the front end's first half: options, then the preprocessor.
typedef struct pp_run_t {
  dc__arena_t arena;
  dc__diag_t diag;
  dc__build_options_t options;
  dc__token_list_t tokens;
  dc_status_t status;
  char* text;  // the output tokens' spellings joined by spaces
} pp_run_t;

static void run_pp_n(pp_run_t* r, const char* options, const char* source,
                     size_t length) {
  memset(r, 0, sizeof(*r));
  dc__arena_init(&r->arena, dc_allocator_system());
  dc__diag_init(&r->diag, dc_allocator_system(), "test.cl");
  r->status = dc__parse_build_options(&r->arena, options, &r->diag,
                                      &r->options);
  if (r->status == DC_OK) {
    r->status = dc__preprocess(&r->arena, source, length, &r->options,
                               &r->diag, &r->tokens);
  }
  size_t size = 1;
  for (size_t i = 0; i < r->tokens.count; ++i) {
    size += r->tokens.items[i].length + 1;
  }
  r->text = calloc(1, size);
  ck_assert_ptr_nonnull(r->text);
  char* end = r->text;
  for (size_t i = 0; i + 1 < r->tokens.count; ++i) {  // not the EOF
    if (i > 0) *end++ = ' ';
    memcpy(end, r->tokens.items[i].text, r->tokens.items[i].length);
    end += r->tokens.items[i].length;
  }
}

static void run_pp(pp_run_t* r, const char* options, const char* source) {
  run_pp_n(r, options, source, strlen(source));
}

static void free_run(pp_run_t* r) {
  free(r->text);
  dc__diag_free(&r->diag);
  dc__arena_free_all(&r->arena);
}

static const char* log_of(const pp_run_t* r) {
  return r->diag.log ? r->diag.log : "";
}

// Asserts that |source| preprocesses without errors or warnings to the
// tokens spelled |want| (joined by single spaces).
static void expect_output(const char* options, const char* source,
                          const char* want) {
  pp_run_t r;
  run_pp(&r, options, source);
  ck_assert_msg(r.status == DC_OK, "'%s': %s: %s", source,
                dc_status_name(r.status), log_of(&r));
  ck_assert_msg(r.diag.warnings == 0, "'%s' warned: %s", source, log_of(&r));
  ck_assert_msg(strcmp(r.text, want) == 0, "'%s' gave '%s', expected '%s'",
                source, r.text, want);
  free_run(&r);
}

// Asserts that |source| (|length| bytes) fails to preprocess and that the
// log holds "test.cl:|where|: error: " followed by |message| ("" for
// |where|: a build option's error, with no place).
static void expect_error_n(const char* options, const char* source,
                           size_t length, const char* where,
                           const char* message) {
  pp_run_t r;
  run_pp_n(&r, options, source, length);
  char want[1024];
  snprintf(want, sizeof(want), "test.cl%s%s: error: %s", *where ? ":" : "",
           where, message);
  ck_assert_msg(r.status == DC_ERR_COMPILE, "got %s, expected COMPILE for %s",
                dc_status_name(r.status), want);
  ck_assert_msg(strstr(log_of(&r), want) != NULL, "log '%.2000s' lacks '%s'",
                log_of(&r), want);
  free_run(&r);
}

static void expect_error(const char* options, const char* source,
                         const char* where, const char* message) {
  expect_error_n(options, source, strlen(source), where, message);
}

// Asserts that |source| preprocesses to |want| with a warning holding
// |message| at |where|.
static void expect_warning(const char* options, const char* source,
                           const char* where, const char* message,
                           const char* want) {
  pp_run_t r;
  run_pp(&r, options, source);
  char line[512];
  snprintf(line, sizeof(line), "test.cl%s%s: warning: %s", *where ? ":" : "",
           where, message);
  ck_assert_msg(r.status == DC_OK, "'%s': %s: %s", source,
                dc_status_name(r.status), log_of(&r));
  ck_assert_msg(strstr(log_of(&r), line) != NULL, "log '%s' lacks '%s'",
                log_of(&r), line);
  ck_assert_msg(strcmp(r.text, want) == 0, "'%s' gave '%s', expected '%s'",
                source, r.text, want);
  free_run(&r);
}

// A NUL-terminated string of |pieces| strings, each |piece| repeated
// |count| times in turn (caller frees).
static char* repeat(const char* piece, size_t count) {
  size_t n = strlen(piece);
  char* s = malloc(n * count + 1);
  ck_assert_ptr_nonnull(s);
  for (size_t i = 0; i < count; ++i) memcpy(s + i * n, piece, n);
  s[n * count] = '\0';
  return s;
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

//===-- eof: no reader walks past the end of the source -----------------===//

START_TEST(test_pp_unterminated_macro_call_at_the_end) {
  expect_error(NULL, "#define F(x) x\nF(1, 2", "2:1",
               "unterminated argument list invoking macro 'F'");
  expect_error(NULL, "#define F(x) x\nint a; F(", "2:8",
               "unterminated argument list invoking macro 'F'");
  expect_error(NULL, "#define F(x) x\nF((1)", "2:1",
               "unterminated argument list invoking macro 'F'");
  expect_error(NULL, "#define V(...) __VA_ARGS__\nV(1,\n\n", "2:1",
               "unterminated argument list invoking macro 'V'");
  // Inside an argument being expanded, and inside a #if expression.
  expect_error(NULL, "#define F(x) x\n#define G(x) x\nG(F(1)", "3:1",
               "unterminated argument list invoking macro 'G'");
  expect_error(NULL, "#define F(x) x\n#define G(x) x F\nG(1)(", "3:1",
               "unterminated argument list invoking macro 'F'");
  expect_error(NULL, "#define F(x) x\n#if F(1\n#endif\n", "2:5",
               "unterminated argument list invoking macro 'F'");
}
END_TEST

START_TEST(test_pp_function_like_name_last) {
  expect_output(NULL, "#define F(x) x\nF", "F");
  expect_output(NULL, "#define F(x) x\n#define G F\nG", "F");
  expect_output(NULL, "#define F(x) [x]\nF\n\n(1)", "[ 1 ]");
  expect_output(NULL, "#define F() 1\nF", "F");
}
END_TEST

START_TEST(test_pp_directives_at_the_end) {
  expect_output(NULL, "int a;\n#", "int a ;");
  expect_output(NULL, "#\n#\n", "");
  expect_error(NULL, "#define", "1:2", "#define needs a macro name");
  expect_error(NULL, "#define F(", "1:10",
               "expected ',' or ')' in the macro parameter list");
  expect_error(NULL, "#define F(x", "1:10",
               "expected ',' or ')' in the macro parameter list");
  expect_error(NULL, "#define F(x,", "1:10",
               "expected ',' or ')' in the macro parameter list");
  expect_error(NULL, "#undef", "1:2", "#undef needs a macro name");
  expect_error(NULL, "#ifdef", "1:2", "#ifdef needs a macro name");
  expect_error(NULL, "#if", "1:2", "#if needs an expression");
  expect_error(NULL, "#if 1\nint a;", "1:2", "#if without #endif");
  expect_error(NULL, "#if 0\nint a;\n#else", "1:2", "#if without #endif");
  expect_error(NULL, "#elif 1", "1:2", "unmatched directive 'elif'");
  expect_error(NULL, "#endif", "1:2", "unmatched directive 'endif'");
  expect_error(NULL, "#if defined\n#endif", "1:5",
               "'defined' needs a macro name");
  expect_error(NULL, "#if defined(\n#endif", "1:5",
               "'defined' needs a macro name");
  expect_error(NULL, "#if defined(X\n#endif", "1:5",
               "'defined' needs a macro name");
  expect_error(NULL, "#line", "1:2",
               "#line needs a decimal line number from 1 to 2147483647");
  expect_error(NULL, "#error", "1:2", "#error ");
  expect_warning(NULL, "#pragma", "1:2", "empty #pragma ignored", "");
}
END_TEST

START_TEST(test_pp_paste_and_stringize_at_the_ends) {
  expect_error(NULL, "#define A ##\nA", "1:11",
               "'##' cannot appear at either end of a macro body");
  expect_error(NULL, "#define A ## b\nA", "1:11",
               "'##' cannot appear at either end of a macro body");
  expect_error(NULL, "#define F(x) x ##\nF(1)", "1:16",
               "'##' cannot appear at either end of a macro body");
  expect_error(NULL, "#define F(x) #y\nF(1)", "1:14",
               "'#' is not followed by a macro parameter");
  expect_error(NULL, "#define F(x) x #\nF(1)", "1:16",
               "'#' is not followed by a macro parameter");
  expect_error(NULL, "#define F(x, ..., y) x\n", "1:10",
               "'...' must be the last macro parameter");
  expect_error(NULL, "#define F(x, x) x\n", "1:14",
               "duplicate macro parameter 'x'");
  expect_error(NULL, "#define A __VA_ARGS__\n", "1:11",
               "__VA_ARGS__ can only appear in the body of a variadic macro");
}
END_TEST

START_TEST(test_pp_paste_with_empty_operands) {
  static const char kCat[] = "#define CAT(a, b) [a ## b]\n";
  char source[256];
  snprintf(source, sizeof(source), "%sCAT(,2) CAT(1,) CAT(,) CAT(x, y)",
           kCat);
  expect_output(NULL, source, "[ 2 ] [ 1 ] [ ] [ xy ]");
  expect_output(NULL, "#define C3(a, b, c) a ## b ## c\nC3(,,z) C3(p,,q)",
                "z pq");
  expect_output(NULL, "#define S(x) #x\n#define J(a, x) a ## #x\nJ(, 1)",
                "\"1\"");
  expect_output(NULL, "#define S(x) #x\nS( a  \"b\\\\\"  'c' )",
                "\"a \\\"b\\\\\\\\\\\" 'c'\"");
  expect_error(NULL, "#define P(a, b) a ## b\nP(+, /)", "2:1",
               "pasting '+' and '/' does not give a valid token");
}
END_TEST

START_TEST(test_pp_stray_hash_is_refused) {
  // Passing '#' on would let a macro put a directive into generated code.
  expect_error(NULL, "#define H #\nH include <x>", "2:1",
               "stray '#' in program (a directive must start a line)");
  expect_error(NULL, "#define ID(x) x\nID(#) include", "2:1",
               "stray '#' in program");
  expect_error(NULL, "int a; # include <x>", "1:8", "stray '#' in program");
  expect_error(NULL, "#define D ##\n", "1:11", "'##' cannot appear");
  expect_error(NULL, "#define ID(x) x\nID(##)", "2:1",
               "stray '##' in program");
}
END_TEST

START_TEST(test_pp_line_numbers_survive_blank_lines) {
  pp_run_t r;
  run_pp(&r, NULL, "\n\n\n  x\n\n\n\ny\n#define L __LINE__\nL");
  ck_assert_int_eq(r.status, DC_OK);
  ck_assert_uint_eq(r.tokens.count, 4);
  ck_assert_uint_eq(r.tokens.items[0].line, 4);
  ck_assert_uint_eq(r.tokens.items[0].col, 3);
  ck_assert_uint_eq(r.tokens.items[1].line, 8);
  ck_assert_str_eq(r.text, "x y 10");
  free_run(&r);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_pp_limit_source_size) {
  // "x\n" lines: the limit is crossed at the start of line 2 MiB + 1.
  size_t lines = DC_LIMIT_SOURCE_BYTES / 2 + 1;
  char* source = repeat("x\n", lines);
  char where[32];
  snprintf(where, sizeof(where), "%zu:1", lines);
  expect_error_n(NULL, source, strlen(source), where,
                 "source size limit (4194304 bytes, 4 MiB) exceeded: the "
                 "source is 4194306 bytes");
  // Exactly at the limit the size is fine (and so is the token count).
  source[DC_LIMIT_SOURCE_BYTES - 1] = '\n';
  pp_run_t r;
  run_pp_n(&r, NULL, source, DC_LIMIT_SOURCE_BYTES);
  ck_assert_msg(strstr(log_of(&r), "size limit") == NULL, "%s", log_of(&r));
  free_run(&r);
  free(source);
}
END_TEST

START_TEST(test_pp_limit_source_tokens) {
  char* source = repeat(";", DC_LIMIT_TOKENS + 1);
  expect_error(NULL, source, "1:1000001",
               "the source has more than 1000000 tokens (the token limit)");
  free(source);
}
END_TEST

START_TEST(test_pp_limit_output_tokens) {
  // 100,001 uses of ten tokens each: past 1,000,000 after preprocessing.
  char* uses = repeat("T ", DC_LIMIT_TOKENS / 10 + 1);
  size_t n = strlen(uses) + 64;
  char* source = malloc(n);
  ck_assert_ptr_nonnull(source);
  snprintf(source, n, "#define T ; ; ; ; ; ; ; ; ; ;\n%s", uses);
  char where[32];
  snprintf(where, sizeof(where), "2:%u", 2 * (DC_LIMIT_TOKENS / 10) + 1);
  expect_error(NULL, source, where,
               "token limit (1000000 tokens after preprocessing) exceeded");
  free(uses);
  free(source);
}
END_TEST

START_TEST(test_pp_limit_macro_depth) {
  // A chain of 300 object-like macros: A300 -> A299 -> ... -> A0.
  char* source = malloc(300 * 32 + 64);
  ck_assert_ptr_nonnull(source);
  size_t n = (size_t)sprintf(source, "#define A0 x\n");
  for (int i = 1; i <= 300; ++i) {
    n += (size_t)sprintf(source + n, "#define A%d A%d\n", i, i - 1);
  }
  sprintf(source + n, "int y = A300;\n");
  pp_run_t r;
  run_pp(&r, NULL, source);
  ck_assert_int_eq(r.status, DC_ERR_COMPILE);
  DC_CK_STR_HAS(log_of(&r), "test.cl:302:9: error: macro expansion depth "
                            "limit (256) exceeded while expanding 'A");
  DC_CK_STR_HAS(log_of(&r), "' (in 'A300')");
  ck_assert_uint_eq(r.diag.errors, 1);
  free_run(&r);
  sprintf(source + n, "int y = A200;\n");
  expect_output(NULL, source, "int y = x ;");
  free(source);
  // Nested calls: each argument is expanded a level deeper.
  char* calls = malloc(300 * 3 + 64);
  ck_assert_ptr_nonnull(calls);
  n = (size_t)sprintf(calls, "#define F(x) x\n");
  for (int i = 0; i < 300; ++i) n += (size_t)sprintf(calls + n, "F(");
  n += (size_t)sprintf(calls + n, "1");
  for (int i = 0; i < 300; ++i) n += (size_t)sprintf(calls + n, ")");
  expect_error(NULL, calls, "2:513",  // the innermost F( is where it was
               "macro expansion depth limit (256) exceeded while expanding "
               "'F'");
  free(calls);
}
END_TEST

// The "macro bomb": each line doubles the one before; A22 would be 2^23
// tokens (it once took 17 GB and 40 s). It must fail fast, in little
// memory.
START_TEST(test_pp_limit_macro_bomb) {
  char source[1024];
  size_t n = (size_t)sprintf(source, "#define A0 x x\n");
  for (int i = 1; i <= 22; ++i) {
    n += (size_t)sprintf(source + n, "#define A%d A%d A%d\n", i, i - 1,
                         i - 1);
  }
  sprintf(source + n, "int y = A22;\n");
  double start = seconds_now();
  pp_run_t r;
  run_pp(&r, NULL, source);
  double took = seconds_now() - start;
  ck_assert_int_eq(r.status, DC_ERR_COMPILE);
  DC_CK_STR_HAS(log_of(&r),
                "test.cl:24:9: error: macro expansion limit (2000000 tokens) "
                "exceeded while expanding 'A");
  DC_CK_STR_HAS(log_of(&r), "(in 'A22')");
  ck_assert_uint_eq(r.diag.errors, 1);
  ck_assert_msg(r.arena.bytes < (200u << 20), "the bomb took %zu bytes",
                r.arena.bytes);
  ck_assert_msg(took < 10.0, "the bomb took %.1f s", took);
  free_run(&r);
  // Through arguments: F doubles its argument's expansion.
  char* open = repeat("F(", 23);
  char* close = repeat(")", 23);
  snprintf(source, sizeof(source), "#define F(x) x x\n%s1%s", open, close);
  expect_error(NULL, source, "2:9",
               "macro expansion limit (2000000 tokens) exceeded while "
               "expanding 'F'");
  free(open);
  free(close);
  // Through #: each level stringizes a string twice its size.
  expect_error(NULL,
               "#define S(x) #x #x #x #x\n#define T(x) S(x)\n"
               "T(T(T(T(T(T(T(T(T(T(T(T(T(T(1))))))))))))))",
               "3:11",
               "macro expansion limit (2000000 tokens) exceeded while "
               "expanding 'S' (in 'T')");
}
END_TEST

START_TEST(test_pp_limit_if_nesting) {
  char* source = repeat("#if 1\n", DC_LIMIT_IF_NESTING + 1);
  expect_error(NULL, source, "65:2", "#if nesting limit (64) exceeded");
  free(source);
  // Skipped #ifs count too.
  source = repeat("#if 0\n", DC_LIMIT_IF_NESTING + 1);
  expect_error(NULL, source, "65:2", "#if nesting limit (64) exceeded");
  free(source);
  char* ok = repeat("#if 1\n", DC_LIMIT_IF_NESTING);
  char* ends = repeat("#endif\n", DC_LIMIT_IF_NESTING);
  char* both = malloc(strlen(ok) + strlen(ends) + 8);
  ck_assert_ptr_nonnull(both);
  sprintf(both, "%sx\n%s", ok, ends);
  expect_output(NULL, both, "x");
  free(ok);
  free(ends);
  free(both);
}
END_TEST

START_TEST(test_pp_limit_if_expression_nesting) {
  // Each shape would recurse once per level in the evaluator: a million
  // levels overflowed the stack.
  static const struct {
    const char* open;
    const char* close;
    size_t levels;
  } kShapes[] = {
      {"(", ")", 65},   {"- ", "", 65},    {"!(", ")", 40},
      {"(", ")", 400000},  {"- ", "", 400000},
      {"1 ? 1 : ", "", 65},
  };
  for (size_t i = 0; i < sizeof(kShapes) / sizeof(kShapes[0]); ++i) {
    char* open = repeat(kShapes[i].open, kShapes[i].levels);
    char* close = repeat(kShapes[i].close, kShapes[i].levels);
    size_t n = strlen(open) + strlen(close) + 32;
    char* source = malloc(n);
    ck_assert_ptr_nonnull(source);
    snprintf(source, n, "#if %s1%s\n#endif\n", open, close);
    expect_error(NULL, source, "1:2",
                 "#if expression nesting limit (64) exceeded");
    free(open);
    free(close);
    free(source);
  }
  // Within the limit, and macros such as INT_MIN (a parenthesis and a
  // minus each) many times side by side.
  char* open = repeat("(", 60);
  char* close = repeat(")", 60);
  char source[512];
  snprintf(source, sizeof(source), "#if %s-1%s < 0\nyes\n#endif\n", open,
           close);
  expect_output(NULL, source, "yes");
  free(open);
  free(close);
  char* many = repeat("INT_MIN + ", 200);
  char* big = malloc(strlen(many) + 64);
  ck_assert_ptr_nonnull(big);
  sprintf(big, "#if %s1 < 0\nyes\n#endif\n", many);
  expect_output(NULL, big, "yes");
  free(many);
  free(big);
}
END_TEST

START_TEST(test_pp_limit_macro_count) {
  char* source = malloc((size_t)DC_LIMIT_MACROS * 40);
  ck_assert_ptr_nonnull(source);
  size_t n = 0;
  for (unsigned i = 0; i < DC_LIMIT_MACROS; ++i) {
    n += (size_t)sprintf(source + n, "#define M%u 1\n", i);
  }
  pp_run_t r;
  run_pp(&r, NULL, source);
  ck_assert_int_eq(r.status, DC_ERR_COMPILE);
  DC_CK_STR_HAS(log_of(&r), ":9: error: macro count limit (16384) exceeded "
                            "by the definition of 'M");
  ck_assert_uint_eq(r.diag.errors, 1);
  free_run(&r);
  // Redefining and #undef keep the count.
  n = 0;
  for (unsigned i = 0; i < DC_LIMIT_MACROS; ++i) {
    n += (size_t)sprintf(source + n, "#define M %u\n#undef M\n", i);
  }
  sprintf(source + n, "M");
  expect_output(NULL, source, "M");
  free(source);
}
END_TEST

START_TEST(test_pp_limit_macro_parameters) {
  char source[2048];
  size_t n = (size_t)sprintf(source, "#define F(p0");
  for (int i = 1; i <= 127; ++i) n += (size_t)sprintf(source + n, ", p%d", i);
  sprintf(source + n, ") p0\n");
  char where[32];
  snprintf(where, sizeof(where), "1:%d",
           (int)(strstr(source, "p127") - source) + 1);
  expect_error(NULL, source, where,
               "macro parameter limit (127) exceeded in the definition of "
               "'F'");
  *strstr(source, ", p127") = '\0';  // 127 parameters are fine
  strcat(source, ") p126\nF(");
  for (int i = 0; i < 126; ++i) strcat(source, "0,");
  strcat(source, "42)");
  expect_output(NULL, source, "42");
}
END_TEST

START_TEST(test_pp_limit_define_option_length) {
  char* value = repeat("1", DC_LIMIT_DEFINE_BYTES);
  size_t n = strlen(value) + 16;
  char* option = malloc(n);
  ck_assert_ptr_nonnull(option);
  snprintf(option, n, "-DX=%s", value);
  expect_error(option, "X", "",
               "build option -D is 4098 bytes, over the limit of 4096 bytes "
               "for one definition");
  snprintf(option, n, "-D X=%s", value + 2);  // 4096 bytes: fine
  expect_output(option, "X", value + 2);
  free(value);
  free(option);
  char* huge = repeat("-w ", DC_LIMIT_OPTIONS_BYTES / 3 + 1);
  expect_error(huge, "X", "",
               "build options are 65538 bytes, over the limit of 65536 "
               "bytes");
  free(huge);
}
END_TEST

START_TEST(test_pp_limit_errors_and_warnings) {
  char* source = repeat("#frobnicate\n", 500);
  pp_run_t r;
  run_pp(&r, NULL, source);
  ck_assert_int_eq(r.status, DC_ERR_COMPILE);
  ck_assert_uint_le(r.diag.errors, DC_LIMIT_ERRORS + 1);
  DC_CK_STR_HAS(log_of(&r), "error: stopping after 100 errors (the error "
                            "limit)");
  free_run(&r);
  free(source);
  source = repeat("@", 500);
  run_pp(&r, NULL, source);
  ck_assert_uint_le(r.diag.errors, DC_LIMIT_ERRORS + 1);
  DC_CK_STR_HAS(log_of(&r), "stopping after 100 errors");
  free_run(&r);
  free(source);
  source = repeat("#pragma foo\n", 500);
  run_pp(&r, NULL, source);
  ck_assert_int_eq(r.status, DC_OK);
  ck_assert_uint_le(r.diag.warnings, DC_LIMIT_WARNINGS + 1);
  DC_CK_STR_HAS(log_of(&r), "more warnings follow; the limit of 100 is "
                            "reached and they are not shown");
  free_run(&r);
  free(source);
}
END_TEST

//===-- predefined macros -----------------------------------------------===//

START_TEST(test_pp_predefined_versions_and_extensions) {
  expect_output(NULL,
                "__OPENCL_VERSION__ __OPENCL_C_VERSION__ CL_VERSION_1_0 "
                "CL_VERSION_1_1 CL_VERSION_1_2 __ENDIAN_LITTLE__",
                "120 120 100 110 120 1");
  expect_output("-cl-std=CL1.1", "__OPENCL_C_VERSION__ __OPENCL_VERSION__",
                "110 120");
  expect_output("-cl-std=CL1.0", "__OPENCL_C_VERSION__", "100");
  static const char* const kExtensions[] = {
      "cl_khr_fp64",
      "cl_khr_global_int32_base_atomics",
      "cl_khr_global_int32_extended_atomics",
      "cl_khr_local_int32_base_atomics",
      "cl_khr_local_int32_extended_atomics",
      "cl_khr_int64_base_atomics",
      "cl_khr_int64_extended_atomics",
      "cl_khr_byte_addressable_store",
  };
  for (size_t i = 0; i < sizeof(kExtensions) / sizeof(kExtensions[0]); ++i) {
    char source[256];
    snprintf(source, sizeof(source), "#ifdef %s\n%s\n#endif\n",
             kExtensions[i], kExtensions[i]);
    expect_output(NULL, source, "1");
  }
  // Not defined: no images, no half, no fast fma; constants the semantic
  // analysis knows.
  expect_output(NULL,
                "#if defined(__IMAGE_SUPPORT__) || defined(cl_khr_fp16) || "
                "defined(FP_FAST_FMA) || defined(FP_FAST_FMAF) || "
                "defined(MAXFLOAT) || defined(HUGE_VALF) || defined(HUGE_VAL) "
                "|| defined(INFINITY) || defined(NAN) || defined(FP_ILOGB0) || "
                "defined(FP_ILOGBNAN) || defined(CLK_LOCAL_MEM_FENCE)\n"
                "bad\n#endif\n",
                "");
}
END_TEST

START_TEST(test_pp_predefined_limits_and_constants) {
  expect_output(NULL,
                "CHAR_BIT SCHAR_MAX SCHAR_MIN CHAR_MAX CHAR_MIN UCHAR_MAX "
                "SHRT_MAX SHRT_MIN USHRT_MAX INT_MAX INT_MIN UINT_MAX",
                "8 127 ( - 127 - 1 ) 127 ( - 127 - 1 ) 255 32767 "
                "( - 32767 - 1 ) 65535 2147483647 ( - 2147483647 - 1 ) "
                "0xffffffffU");
  expect_output(NULL, "LONG_MAX LONG_MIN ULONG_MAX",
                "0x7fffffffffffffffL ( - 0x7fffffffffffffffL - 1 ) "
                "0xffffffffffffffffUL");
  expect_output(NULL,
                "FLT_DIG FLT_MANT_DIG FLT_MAX_10_EXP FLT_MAX_EXP "
                "FLT_MIN_10_EXP FLT_MIN_EXP FLT_RADIX FLT_MAX FLT_MIN "
                "FLT_EPSILON",
                "6 24 38 128 ( - 37 ) ( - 125 ) 2 0x1.fffffep127f 0x1.0p-126f "
                "0x1.0p-23f");
  expect_output(NULL,
                "DBL_DIG DBL_MANT_DIG DBL_MAX_10_EXP DBL_MAX_EXP "
                "DBL_MIN_10_EXP DBL_MIN_EXP DBL_MAX DBL_MIN DBL_EPSILON",
                "15 53 308 1024 ( - 307 ) ( - 1021 ) 0x1.fffffffffffffp1023 "
                "0x1.0p-1022 0x1.0p-52");
  expect_output(NULL, "M_PI_F M_PI M_SQRT1_2_F M_E",
                "3.14159265358979323846f 3.14159265358979323846 "
                "0.707106781186547524401f 2.71828182845904523536");
  // Visible to #if, with the values C's headers give.
  expect_output(NULL,
                "#if INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1 && "
                "UINT_MAX == 4294967295 && LONG_MIN < 0 && ULONG_MAX + 1 == 0 "
                "&& CHAR_BIT == 8 && SHRT_MIN == -32768 && FLT_RADIX == 2 && "
                "DBL_MANT_DIG == 53 && FLT_MIN_EXP == -125\nyes\n#endif\n",
                "yes");
  expect_output(NULL, "#if defined(FLT_MAX) && defined M_PI_F\nyes\n#endif",
                "yes");
}
END_TEST

START_TEST(test_pp_predefined_file_and_line) {
  expect_output(NULL, "__LINE__\n\n__LINE__ __FILE__", "1 3 \"test.cl\"");
  expect_output(NULL, "#define L __LINE__\n\nL", "3");
  expect_error(NULL, "#define __LINE__ 3", "1:9",
               "cannot define a macro named '__LINE__'");
  expect_error(NULL, "#undef __FILE__", "1:8", "cannot undefine '__FILE__'");
  expect_error(NULL, "#define defined 1", "1:9",
               "cannot define a macro named 'defined'");
  // The program's name reaches the code as a plain string.
  pp_run_t r;
  memset(&r, 0, sizeof(r));
  dc__arena_init(&r.arena, dc_allocator_system());
  dc__diag_init(&r.diag, dc_allocator_system(), "a\"b\\c\nd.cl");
  dc__build_options_t o;
  DC_CK_OK(dc__parse_build_options(&r.arena, NULL, &r.diag, &o));
  DC_CK_OK(dc__preprocess(&r.arena, "__FILE__", 8, &o, &r.diag, &r.tokens));
  ck_assert_uint_eq(r.tokens.count, 2);
  ck_assert_int_eq(r.tokens.items[0].kind, DC_TOK_STRING);
  ck_assert_uint_eq(r.tokens.items[0].length, strlen("\"a_b_c_d.cl\""));
  ck_assert_int_eq(memcmp(r.tokens.items[0].text, "\"a_b_c_d.cl\"", 12), 0);
  free_run(&r);
}
END_TEST

START_TEST(test_pp_redefining_predefined_macros) {
  expect_warning(NULL, "#define INT_MAX 5\nINT_MAX", "1:9",
                 "'INT_MAX' redefined (it was predefined)", "5");
  expect_output(NULL, "#define INT_MAX 2147483647\nINT_MAX", "2147483647");
  expect_output(NULL, "#undef M_PI\nM_PI", "M_PI");
  expect_output(NULL, "#undef cl_khr_fp64\n#ifdef cl_khr_fp64\nx\n#endif", "");
  expect_warning(NULL, "#define A 1\n#define A 2\nA", "2:9",
                 "'A' redefined (the previous definition is at 1:9)", "2");
  expect_output(NULL, "#define A (1 + x)\n#define A (1 + x)\nA",
                "( 1 + x )");
  expect_warning(NULL, "#define A (1+x)\n#define A (1 + x)\nA", "2:9",
                 "'A' redefined", "( 1 + x )");
  expect_warning(NULL, "#define F(a) a\n#define F(b) b\nF(1)", "2:9",
                 "'F' redefined", "1");
  expect_warning("-DINT_MAX=3", "INT_MAX", "",
                 "'INT_MAX' redefined (it was predefined)", "3");
  expect_warning("-DX=1", "#define X 2\nX", "1:9",
                 "'X' redefined (it was defined by a build option)", "2");
  // -w silences warnings; -Werror makes them errors.
  expect_output("-w", "#define INT_MAX 5\nINT_MAX", "5");
  expect_error("-Werror", "#define INT_MAX 5\nINT_MAX", "1:9",
               "'INT_MAX' redefined (it was predefined) [-Werror]");
  expect_output("-UINT_MAX -U M_PI_F", "INT_MAX M_PI_F", "INT_MAX M_PI_F");
}
END_TEST

START_TEST(test_pp_lexer_takes_hex_floats_and_pp_numbers) {
  pp_run_t r;
  run_pp(&r, NULL, "0x1.fffffep127f 0x1.0p-126f 0X1P+3 1e+5 .5e-3f 1.f 0x10UL");
  ck_assert_int_eq(r.status, DC_OK);
  ck_assert_uint_eq(r.tokens.count, 8);
  for (size_t i = 0; i < 7; ++i) {
    ck_assert_int_eq(r.tokens.items[i].kind, DC_TOK_NUMBER);
  }
  ck_assert_str_eq(r.text,
                   "0x1.fffffep127f 0x1.0p-126f 0X1P+3 1e+5 .5e-3f 1.f 0x10UL");
  free_run(&r);
}
END_TEST

//===-- pragmas ---------------------------------------------------------===//

START_TEST(test_pp_pragma_opencl_extension) {
  expect_output(NULL,
                "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
                "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : require\n"
                "#pragma OPENCL EXTENSION cl_khr_fp64 : disable\n"
                "#pragma OPENCL EXTENSION all : disable\nx",
                "x");
  expect_warning(NULL, "#pragma OPENCL EXTENSION cl_khr_gl_sharing : enable\n",
                 "1:26",
                 "unknown OpenCL extension 'cl_khr_gl_sharing' in #pragma; "
                 "ignored",
                 "");
  expect_error(NULL, "#pragma OPENCL EXTENSION cl_khr_fp16 : require\n",
               "1:26",
               "required extension is not supported: 'cl_khr_fp16'");
  expect_error(NULL, "#pragma OPENCL EXTENSION cl_khr_fp64 enable\n", "1:2",
               "malformed #pragma OPENCL EXTENSION: expected 'NAME : "
               "enable', 'disable' or 'require'");
  expect_error(NULL, "#pragma OPENCL EXTENSION cl_khr_fp64 : on\n", "1:2",
               "malformed #pragma OPENCL EXTENSION");
  expect_error(NULL, "#pragma OPENCL EXTENSION\n", "1:2",
               "malformed #pragma OPENCL EXTENSION");
}
END_TEST

START_TEST(test_pp_pragma_fp_contract) {
  expect_output(NULL,
                "#pragma OPENCL FP_CONTRACT ON\n#pragma OPENCL FP_CONTRACT "
                "OFF\n#pragma OPENCL FP_CONTRACT DEFAULT\nx",
                "x");
  expect_error(NULL, "#pragma OPENCL FP_CONTRACT MAYBE\n", "1:2",
               "malformed #pragma OPENCL FP_CONTRACT: expected ON, OFF or "
               "DEFAULT");
  expect_error(NULL, "#pragma OPENCL FP_CONTRACT\n", "1:2",
               "malformed #pragma OPENCL FP_CONTRACT");
  expect_warning(NULL, "#pragma OPENCL SELECT_ROUNDING_MODE rte\nx", "1:9",
                 "unknown #pragma 'OPENCL' ignored", "x");
}
END_TEST

// Asserts that |source| gives exactly one DC_TOK_PRAGMA token, spelled
// |want|, at |line|:|col|, before the token |next|.
static void expect_pragma(const char* source, const char* want, uint32_t line,
                          uint32_t col, const char* next) {
  pp_run_t r;
  run_pp(&r, NULL, source);
  ck_assert_msg(r.status == DC_OK, "%s", log_of(&r));
  size_t found = 0;
  for (size_t i = 0; i < r.tokens.count; ++i) {
    const dc__token_t* t = &r.tokens.items[i];
    if (t->kind != DC_TOK_PRAGMA) continue;
    ++found;
    ck_assert_uint_eq(t->length, strlen(want));
    ck_assert_msg(memcmp(t->text, want, t->length) == 0, "pragma '%.*s'",
                  (int)t->length, t->text);
    ck_assert_uint_eq(t->line, line);
    ck_assert_uint_eq(t->col, col);
    ck_assert(i + 1 < r.tokens.count && dc__tok_is(&t[1], next));
  }
  ck_assert_uint_eq(found, 1);
  free_run(&r);
}

START_TEST(test_pp_pragma_unroll_reaches_the_parser) {
  expect_pragma("{\n  #pragma unroll\n  for", "unroll", 2, 3, "for");
  expect_pragma("#pragma unroll 4\nfor", "unroll 4", 1, 1, "for");
  expect_pragma("#define N 4\n#pragma unroll (N * 2)\nwhile", "unroll 8", 2,
                1, "while");
  expect_pragma("#pragma nounroll\ndo", "nounroll", 1, 1, "do");
  expect_pragma("#if 0\n#pragma unroll 2\n#endif\n#pragma unroll 3\nfor",
                "unroll 3", 4, 1, "for");
  expect_error(NULL, "#pragma unroll 0\nfor", "1:16",
               "#pragma unroll count 0 is out of range (1 to 2147483647)");
  expect_error(NULL, "#pragma unroll n\nfor", "1:16",
               "a name that is not a constant in #pragma unroll expression");
  expect_error(NULL, "#pragma nounroll 2\nfor", "1:18",
               "#pragma nounroll takes nothing after it");
  char* deep = repeat("(", 100);
  char source[256];
  snprintf(source, sizeof(source), "#pragma unroll %s4\nfor", deep);
  expect_error(NULL, source, "1:16",
               "#pragma unroll expression nesting limit (64) exceeded");
  free(deep);
}
END_TEST

START_TEST(test_pp_other_pragmas_warn) {
  expect_warning(NULL, "#pragma omp parallel for\nx", "1:9",
                 "unknown #pragma 'omp' ignored", "x");
  expect_warning(NULL, "#pragma once\nx", "1:9",
                 "unknown #pragma 'once' ignored", "x");
  expect_output("-w", "#pragma weird\nx", "x");
  expect_error("-Werror", "#pragma weird\nx", "1:9",
               "unknown #pragma 'weird' ignored [-Werror]");
  expect_error(NULL, "_Pragma(\"unroll\") for", "1:1",
               "_Pragma is not supported; write #pragma on a line of its own");
  expect_error(NULL, "#define P _Pragma(\"x\")\nP", "2:1",
               "_Pragma is not supported");
}
END_TEST

//===-- directives ------------------------------------------------------===//

START_TEST(test_pp_refused_directives) {
  static const char* const kIncludes[] = {"include", "include_next",
                                          "import"};
  for (size_t i = 0; i < 3; ++i) {
    char source[128], message[256];
    snprintf(source, sizeof(source), "#%s <math.h>\nx", kIncludes[i]);
    snprintf(message, sizeof(message),
             "#%s is not supported: a program is one source; pass "
             "definitions with -D options",
             kIncludes[i]);
    expect_error(NULL, source, "1:2", message);
  }
  static const char* const kOthers[] = {"ident", "sccs", "assert",
                                        "unassert"};
  for (size_t i = 0; i < 4; ++i) {
    char source[128], message[256];
    snprintf(source, sizeof(source), "#%s \"x\"\nx", kOthers[i]);
    snprintf(message, sizeof(message),
             "#%s is not supported by the kernel language", kOthers[i]);
    expect_error(NULL, source, "1:2", message);
  }
  expect_error(NULL, "  #  frobnicate 1\n", "1:6",
               "unknown preprocessor directive 'frobnicate'");
  expect_error(NULL, "# 12 \"x.c\"\n", "1:1",
               "expected a directive name after '#'");
  // Skipped blocks may hold anything.
  expect_output(NULL, "#if 0\n#include <x>\n#frob\n# 1\n#endif\ny", "y");
}
END_TEST

START_TEST(test_pp_line_directive) {
  expect_output(NULL, "#line 500\n__LINE__", "2");  // accepted, ignored
  expect_output(NULL, "#line 2147483647\nx", "x");
  expect_error(NULL, "#line 500 \"evil.c\"\nx", "1:11",
               "#line with a file name is not supported: messages name the "
               "program as it was built");
  expect_error(NULL, "#line 0\n", "1:7",
               "#line needs a decimal line number from 1 to 2147483647");
  expect_error(NULL, "#line 2147483648\n", "1:7", "#line needs a decimal");
  expect_error(NULL, "#line 0x10\n", "1:7", "#line needs a decimal");
  expect_error(NULL, "#line __LINE__\n", "1:7", "#line needs a decimal");
  expect_error(NULL, "#line 10 20\n", "1:10",
               "unexpected token after the #line number: '20'");
}
END_TEST

START_TEST(test_pp_extra_tokens_warn) {
  expect_warning(NULL, "#define A\n#ifdef A B\nx\n#endif", "2:10",
                 "extra tokens after #ifdef A", "x");
  expect_warning(NULL, "#define A\n#undef A B\nA", "2:10",
                 "extra tokens after #undef A", "A");
}
END_TEST

//===-- lexer -----------------------------------------------------------===//

START_TEST(test_lex_control_bytes_in_literals) {
  // A lone CR is a line end to C compilers: inside a string it would
  // start a line of its own in the generated code.
  expect_error(NULL, "char* s = \"a\r#include <x>\";", "1:11",
               "string literal holds the control byte 0x0d; write it as "
               "the escape \\x0d");
  expect_error(NULL, "char c = '\r';", "1:10",
               "character literal holds the control byte 0x0d");
  expect_error(NULL, "char* s = \"\\\r\";", "1:11",
               "string literal holds the control byte 0x0d");
  expect_error_n(NULL, "char* s = \"a\0b\";", 16, "1:11",
                 "string literal holds the control byte 0x00");
  expect_error(NULL, "char* s = \"\x7f\";", "1:11",
               "string literal holds the control byte 0x7f");
  // Tabs, escapes, and a line ending in CR LF are fine.
  expect_output(NULL, "\"a\tb\" \"\\r\\n\\\"\" '\\''\r\nx", "\"a\tb\" "
                "\"\\r\\n\\\"\" '\\'' x");
  expect_output(NULL, "#define A 1 \\\r\n + 2\nA", "1 + 2");
  expect_error(NULL, "\"abc", "1:1", "unterminated string literal");
  expect_error(NULL, "x = 'a", "1:5", "unterminated character literal");
}
END_TEST

//===-- build options ---------------------------------------------------===//

START_TEST(test_options_known_set) {
  pp_run_t r;
  run_pp(&r,
         "-cl-single-precision-constant -cl-denorms-are-zero "
         "-cl-fp32-correctly-rounded-divide-sqrt -cl-opt-disable "
         "-cl-mad-enable -cl-no-signed-zeros -cl-unsafe-math-optimizations "
         "-cl-finite-math-only -cl-fast-relaxed-math -cl-std=CL1.1 "
         "-cl-kernel-arg-info -w -Werror -g -dc-O3 -dc-checked",
         "__FAST_RELAXED_MATH__");
  ck_assert_int_eq(r.status, DC_OK);
  const dc__build_options_t* o = &r.options;
  ck_assert(o->single_precision_constant && o->denorms_are_zero &&
            o->fp32_correctly_rounded_divide_sqrt && o->opt_disable &&
            o->mad_enable && o->no_signed_zeros && o->fast_math &&
            o->finite_math && o->fast_relaxed_math && o->kernel_arg_info &&
            o->no_warnings && o->werror && o->debug_info && o->opt_max &&
            o->checked);
  ck_assert_int_eq(o->cl_std, 110);
  ck_assert_str_eq(r.text, "1");
  free_run(&r);
  run_pp(&r, "-dc-checked", "x");
  ck_assert(r.options.checked && !r.options.fast_math);
  ck_assert_int_eq(r.options.cl_std, 120);
  free_run(&r);
  // Only -cl-fast-relaxed-math defines __FAST_RELAXED_MATH__.
  expect_output("-cl-unsafe-math-optimizations", "__FAST_RELAXED_MATH__",
                "__FAST_RELAXED_MATH__");
}
END_TEST

START_TEST(test_options_refused) {
  expect_error("-O2", "x", "", "unknown build option '-O2'");
  expect_error("-I/usr/include", "x", "",
               "build option -I is not supported: a program is one source "
               "and #include is refused");
  expect_error("-I /usr/include -w", "x", "", "build option -I");
  expect_error("-cl-std=CL2.0", "x", "",
               "build option '-cl-std=CL2.0' names an unknown version "
               "(CL1.0, CL1.1 or CL1.2)");
  expect_error("-x\x01\x7f'", "x", "",
               "unknown build option '-x\\x01\\x7f\\x27'");
  char* longword = repeat("a", 200);
  pp_run_t r;
  run_pp(&r, longword, "x");
  DC_CK_STR_HAS(log_of(&r), "unknown build option 'aaaaaaaaaaaaaaaaaaaaaaaa"
                            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
  free_run(&r);
  free(longword);
}
END_TEST

START_TEST(test_options_define_and_undefine) {
  expect_output("-D A -DB -DC=3 -D D=(1+2) -DE= -DF=a=b", "A B C D E F",
                "1 1 3 ( 1 + 2 ) a = b");
  expect_output("-DX=1 -UX", "X", "X");
  expect_output("-UX -DX=2", "X", "2");
  expect_output("-U X", "X", "X");
  expect_output("-DS=\"a\\\"b\"", "S", "\"a\\\"b\"");
  expect_error("-D", "x", "", "build option -D needs a macro name");
  expect_error("-D=3", "x", "", "build option -D needs a macro name");
  expect_error("-U", "x", "", "build option -U needs a macro name");
  expect_error("-D1X", "x", "",
               "build option '-D1X': '1X' is not a macro name (an "
               "identifier)");
  expect_error("-DF(x)=x", "x", "",
               "build option '-DF(x)=x': 'F(x)' is not a macro name");
  expect_error("-D -DX", "x", "",
               "build option '-D-DX': '-DX' is not a macro name");
  expect_error("-DX=#include", "x", "",
               "build option '-DX=#include': a value cannot contain '#'");
  expect_error("-DX=a##b", "x", "",
               "build option '-DX=a##b': a value cannot contain '#'");
  expect_error("-DX=\"abc", "x", "",
               "build option '-DX=\"abc': the value is not valid tokens "
               "(unterminated string literal)");
  expect_error("-DX=\x01", "x", "",
               "build option '-DX=\\x01': the value is not valid tokens "
               "(unexpected byte 0x01)");
  expect_error("-DX=/*", "x", "",
               "build option '-DX=/*': the value is not valid tokens "
               "(unterminated comment)");
  expect_error("-Ddefined", "x", "", "build option -D cannot define "
                                     "'defined'");
  expect_error("-U__LINE__", "x", "", "build option -U cannot undefine "
                                      "'__LINE__'");
  expect_error("-D_Pragma=1", "x", "",
               "build option -D cannot define '_Pragma'");
  // The -D list keeps its old form for its readers.
  pp_run_t r;
  run_pp(&r, "-DA -UB -DC=2", "x");
  ck_assert_uint_eq(r.options.define_count, 2);
  ck_assert_str_eq(r.options.defines[0], "A");
  ck_assert_str_eq(r.options.defines[1], "C=2");
  ck_assert_uint_eq(r.options.macro_option_count, 3);
  ck_assert_str_eq(r.options.macro_options[1].name, "B");
  ck_assert_ptr_null(r.options.macro_options[1].value);
  free_run(&r);
}
END_TEST

//===-- engine: programs built and run on the CPU device ----------------===//

// Builds |source| (one kernel "k" writing |n| ints) and returns what it
// wrote (caller frees).
static int32_t* run_kernel(const char* source, const char* options,
                           size_t n) {
  dc_program_t* p = build("pp.cl", source, options);
  dc_buffer_t* out = dc_test_buffer_new(cpu, DC_DTYPE_I32, n, "out");
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(out, 0, n, &zero));
  dc_arg_t arg = dc_arg_buffer(out);
  dc_dispatch_t grid = {.dims = 1, .global = {1}};
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "k"), &grid, &arg, 1));
  int32_t* values = malloc(n * sizeof(*values));
  ck_assert_ptr_nonnull(values);
  DC_CK_OK(dc_buffer_read(out, 0, values, n));
  dc_buffer_release(out);
  dc_program_release(p);
  return values;
}

START_TEST(test_engine_predefined_constants_compile) {
  static const char kSource[] =
      "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
      "__kernel void k(__global int* o) {\n"
      "  o[0] = INT_MAX == 2147483647 && INT_MIN < -INT_MAX;\n"
      "  o[1] = FLT_MAX > 3.4e38f && FLT_MIN < 1.2e-38f && FLT_MIN > 0.0f;\n"
      "  o[2] = 1.0f + FLT_EPSILON != 1.0f && 1.0f + FLT_EPSILON / 2 == 1.0f;\n"
      "  o[3] = DBL_MAX > 1e308 && 1.0 + DBL_EPSILON != 1.0;\n"
      "  o[4] = (int)(M_PI_F * 1000.0f);\n"
      "  o[5] = (int)(M_PI * 1000000.0);\n"
      "  o[6] = UINT_MAX == 0xffffffffu && ULONG_MAX == (ulong)-1;\n"
      "  o[7] = CHAR_MIN + SHRT_MIN + SCHAR_MAX;\n"
      "#if defined(cl_khr_int64_base_atomics) && __OPENCL_C_VERSION__ >= 120\n"
      "  o[8] = 1;\n"
      "#endif\n"
      "}\n";
  int32_t* v = run_kernel(kSource, NULL, 9);
  ck_assert_int_eq(v[0], 1);
  ck_assert_int_eq(v[1], 1);
  ck_assert_int_eq(v[2], 1);
  ck_assert_int_eq(v[3], 1);
  ck_assert_int_eq(v[4], 3141);
  ck_assert_int_eq(v[5], 3141592);
  ck_assert_int_eq(v[6], 1);
  ck_assert_int_eq(v[7], -128 - 32768 + 127);
  ck_assert_int_eq(v[8], 1);
  free(v);
}
END_TEST

START_TEST(test_engine_front_end_errors) {
  dc_program_t* p = SENTINEL;
  static const char kOk[] = "__kernel void k(__global int* o) { o[0] = 1; }\n";
  DC_CK_FAIL(try_build(cpu, "opts.cl", kOk, "-DX=#include -dc-checked", &p),
             DC_ERR_COMPILE,
             "opts.cl: error: build option '-DX=#include': a value cannot "
             "contain '#'");
  ck_assert_ptr_null(p);
  DC_CK_FAIL(try_build(cpu, "inc.cl", "#include_next <x>\n", NULL, &p),
             DC_ERR_COMPILE, "inc.cl:1:2: error: #include_next is not "
                             "supported");
  dc_program_t* ok = build("ok.cl", kOk, "-dc-checked -cl-kernel-arg-info");
  dc_program_release(ok);
}
END_TEST

//===-- Suite -----------------------------------------------------------===//

static Suite* kernel_pp_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_pp", "dc-check-kernel-pp");
  TCase* eof = tcase_create("eof");
  tcase_add_test(eof, test_pp_unterminated_macro_call_at_the_end);
  tcase_add_test(eof, test_pp_function_like_name_last);
  tcase_add_test(eof, test_pp_directives_at_the_end);
  tcase_add_test(eof, test_pp_paste_and_stringize_at_the_ends);
  tcase_add_test(eof, test_pp_paste_with_empty_operands);
  tcase_add_test(eof, test_pp_stray_hash_is_refused);
  tcase_add_test(eof, test_pp_line_numbers_survive_blank_lines);
  suite_add_tcase(s, eof);

  TCase* limits = tcase_create("limits");
  tcase_set_timeout(limits, 120);
  tcase_add_test(limits, test_pp_limit_source_size);
  tcase_add_test(limits, test_pp_limit_source_tokens);
  tcase_add_test(limits, test_pp_limit_output_tokens);
  tcase_add_test(limits, test_pp_limit_macro_depth);
  tcase_add_test(limits, test_pp_limit_macro_bomb);
  tcase_add_test(limits, test_pp_limit_if_nesting);
  tcase_add_test(limits, test_pp_limit_if_expression_nesting);
  tcase_add_test(limits, test_pp_limit_macro_count);
  tcase_add_test(limits, test_pp_limit_macro_parameters);
  tcase_add_test(limits, test_pp_limit_define_option_length);
  tcase_add_test(limits, test_pp_limit_errors_and_warnings);
  suite_add_tcase(s, limits);

  TCase* predefined = tcase_create("predefined");
  tcase_add_test(predefined, test_pp_predefined_versions_and_extensions);
  tcase_add_test(predefined, test_pp_predefined_limits_and_constants);
  tcase_add_test(predefined, test_pp_predefined_file_and_line);
  tcase_add_test(predefined, test_pp_redefining_predefined_macros);
  tcase_add_test(predefined, test_pp_lexer_takes_hex_floats_and_pp_numbers);
  suite_add_tcase(s, predefined);

  TCase* pragmas = tcase_create("pragmas");
  tcase_add_test(pragmas, test_pp_pragma_opencl_extension);
  tcase_add_test(pragmas, test_pp_pragma_fp_contract);
  tcase_add_test(pragmas, test_pp_pragma_unroll_reaches_the_parser);
  tcase_add_test(pragmas, test_pp_other_pragmas_warn);
  suite_add_tcase(s, pragmas);

  TCase* directives = tcase_create("directives");
  tcase_add_test(directives, test_pp_refused_directives);
  tcase_add_test(directives, test_pp_line_directive);
  tcase_add_test(directives, test_pp_extra_tokens_warn);
  tcase_add_test(directives, test_lex_control_bytes_in_literals);
  suite_add_tcase(s, directives);

  TCase* options = tcase_create("options");
  tcase_add_test(options, test_options_known_set);
  tcase_add_test(options, test_options_refused);
  tcase_add_test(options, test_options_define_and_undefine);
  suite_add_tcase(s, options);

  TCase* engine = dc_test_kernel_tcase(s, "engine");
  tcase_add_test(engine, test_engine_predefined_constants_compile);
  tcase_add_test(engine, test_engine_front_end_errors);
  return s;
}

DC_CHECK_MAIN(kernel_pp_suite)

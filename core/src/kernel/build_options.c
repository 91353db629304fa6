// build_options.c: the build options of a program, parsed into a known
// set of flags and macro definitions (pp.h). No option text reaches a
// compiler: each device turns the flags into its own compiler's arguments.
// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_limits.h"
#include "pp.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

//===-- Build options ---------------------------------------------------===//

typedef struct options_parser_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  dc__build_options_t* out;
  const char* p;  // the next word
  dc_status_t status;
} options_parser_t;

// |text| as a message may quote it: at most 64 bytes, other bytes than
// printable ASCII as \xNN.
static const char* quotable(dc__arena_t* arena, const char* text) {
  char* q = dc__arena_alloc(arena, 64 * 4 + 4);
  if (q == NULL) return "";
  size_t n = 0, i = 0;
  for (; text[i] != '\0' && i < 64; ++i) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      q[n++] = (char)c;
    } else {
      n += (size_t)snprintf(q + n, 5, "\\x%02x", c);
    }
  }
  if (text[i] != '\0') n += (size_t)snprintf(q + n, 4, "...");
  q[n] = '\0';
  return q;
}

static void option_error(options_parser_t* op, const char* format, ...)
    DC_PRINTF_LIKE(2, 3);
static void option_error(options_parser_t* op, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  dc__diag_error(op->diag, 0, 0, "%s", message);
  op->status = DC_ERR_COMPILE;
}

// The next whitespace-separated word, or NULL at the end (or out of
// memory, which the caller finds in the arena).
static char* next_word(options_parser_t* op) {
  while (isspace((unsigned char)*op->p)) ++op->p;
  if (*op->p == '\0') return NULL;
  const char* start = op->p;
  while (*op->p && !isspace((unsigned char)*op->p)) ++op->p;
  return dc__arena_strndup(op->arena, start, (size_t)(op->p - start));
}

static bool is_identifier(const char* s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < n; ++i) {
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
  }
  return true;
}

// Whether |value| lexes as tokens none of which is '#' or '##'; reports
// why not.
static bool check_define_value(options_parser_t* op, const char* def,
                               const char* value) {
  dc__diag_t scratch;
  dc__diag_init(&scratch, op->arena->allocator, "option");
  dc__token_list_t toks = {0};
  dc_status_t st = dc__lex(op->arena, value, strlen(value), &scratch, &toks);
  const char* why = strstr(scratch.first_error, "error: ");
  char reason[160];
  snprintf(reason, sizeof(reason), "%s", why ? why + 7 : "out of memory");
  dc__diag_free(&scratch);
  if (st != DC_OK) {
    option_error(op, "build option '-D%s': the value is not valid tokens (%s)",
                 quotable(op->arena, def), reason);
    return false;
  }
  for (size_t i = 0; i < toks.count; ++i) {
    if (dc__tok_is_hash(&toks.items[i]) || dc__tok_is_paste(&toks.items[i])) {
      option_error(op, "build option '-D%s': a value cannot contain '#'",
                   quotable(op->arena, def));
      return false;
    }
  }
  return true;
}

// Checks the name of -D or -U (|flag|), |n| bytes of |def|.
static bool check_macro_name(options_parser_t* op, char flag, const char* def,
                             size_t n) {
  if (n == 0) {
    option_error(op, "build option -%c needs a macro name", flag);
    return false;
  }
  if (!is_identifier(def, n)) {
    const char* name = dc__arena_strndup(op->arena, def, n);
    option_error(op,
                 "build option '-%c%s': '%s' is not a macro name (an "
                 "identifier)",
                 flag, quotable(op->arena, def),
                 name ? quotable(op->arena, name) : "");
    return false;
  }
  if (dc__pp_reserved_name(def, n)) {
    option_error(op, "build option -%c cannot %s '%.*s'", flag,
                 flag == 'D' ? "define" : "undefine", (int)n, def);
    return false;
  }
  return true;
}

// -D NAME, -D NAME=VALUE, -U NAME: |def| is what follows the flag.
static void parse_macro_option(options_parser_t* op, char flag,
                               const char* def) {
  if (def == NULL) def = "";
  size_t length = strlen(def);
  if (length > DC_LIMIT_DEFINE_BYTES) {
    option_error(op,
                 "build option -%c is %zu bytes, over the limit of %u bytes "
                 "for one definition",
                 flag, length, DC_LIMIT_DEFINE_BYTES);
    return;
  }
  const char* eq = flag == 'D' ? strchr(def, '=') : NULL;
  size_t name_length = eq ? (size_t)(eq - def) : length;
  if (!check_macro_name(op, flag, def, name_length)) return;
  const char* value = eq ? eq + 1 : flag == 'D' ? "1" : NULL;
  if (value != NULL && !check_define_value(op, def, value)) return;
  dc__build_options_t* out = op->out;
  out->macro_options[out->macro_option_count++] = (dc__macro_option_t){
      dc__arena_strndup(op->arena, def, name_length), value};
  if (flag == 'D') out->defines[out->define_count++] = def;
}

static bool parse_flag(options_parser_t* op, const char* word) {
  static const struct {
    const char* name;
    size_t offset;
  } kFlags[] = {
      {"-cl-fast-relaxed-math", offsetof(dc__build_options_t, fast_math)},
      {"-cl-fast-relaxed-math",
       offsetof(dc__build_options_t, fast_relaxed_math)},
      {"-cl-unsafe-math-optimizations",
       offsetof(dc__build_options_t, fast_math)},
      {"-cl-finite-math-only", offsetof(dc__build_options_t, finite_math)},
      {"-cl-no-signed-zeros", offsetof(dc__build_options_t, no_signed_zeros)},
      {"-cl-mad-enable", offsetof(dc__build_options_t, mad_enable)},
      {"-cl-opt-disable", offsetof(dc__build_options_t, opt_disable)},
      {"-cl-denorms-are-zero",
       offsetof(dc__build_options_t, denorms_are_zero)},
      {"-cl-single-precision-constant",
       offsetof(dc__build_options_t, single_precision_constant)},
      {"-cl-fp32-correctly-rounded-divide-sqrt",
       offsetof(dc__build_options_t, fp32_correctly_rounded_divide_sqrt)},
      {"-cl-kernel-arg-info", offsetof(dc__build_options_t, kernel_arg_info)},
      {"-Werror", offsetof(dc__build_options_t, werror)},
      {"-w", offsetof(dc__build_options_t, no_warnings)},
      {"-g", offsetof(dc__build_options_t, debug_info)},
      {"-dc-checked", offsetof(dc__build_options_t, checked)},
      {"-dc-O3", offsetof(dc__build_options_t, opt_max)},
      {"-dc-no-coarsening", offsetof(dc__build_options_t, no_coarsening)},
  };
  static const struct {
    const char* name;
    int version;
  } kStd[] = {{"-cl-std=CL1.0", 100}, {"-cl-std=CL1.1", 110},
              {"-cl-std=CL1.2", 120}};
  bool known = false;
  for (size_t i = 0; i < COUNT_OF(kFlags); ++i) {
    if (strcmp(word, kFlags[i].name) == 0) {
      *(bool*)((char*)op->out + kFlags[i].offset) = true;
      known = true;
    }
  }
  for (size_t i = 0; i < COUNT_OF(kStd); ++i) {
    if (strcmp(word, kStd[i].name) == 0) {
      op->out->cl_std = kStd[i].version;
      known = true;
    }
  }
  return known;
}

static void parse_word(options_parser_t* op, const char* word) {
  if (parse_flag(op, word)) return;
  if (word[0] == '-' && (word[1] == 'D' || word[1] == 'U')) {
    const char* def = word[2] ? word + 2 : next_word(op);  // "-D NAME"
    parse_macro_option(op, word[1], def);
  } else if (strncmp(word, "-I", 2) == 0) {
    if (word[2] == '\0') next_word(op);  // "-I DIR": one error for both
    option_error(op,
                 "build option -I is not supported: a program is one source "
                 "and #include is refused");
  } else if (strncmp(word, "-cl-std=", 8) == 0) {
    option_error(op,
                 "build option '%s' names an unknown version (CL1.0, CL1.1 "
                 "or CL1.2)",
                 quotable(op->arena, word));
  } else {
    option_error(op, "unknown build option '%s'", quotable(op->arena, word));
  }
}

dc_status_t dc__parse_build_options(dc__arena_t* arena, const char* options,
                                    dc__diag_t* diag,
                                    dc__build_options_t* out) {
  memset(out, 0, sizeof(*out));
  out->cl_std = 120;
  if (options == NULL) return DC_OK;
  size_t length = strlen(options);
  if (length > DC_LIMIT_OPTIONS_BYTES) {
    dc__diag_error(diag, 0, 0,
                   "build options are %zu bytes, over the limit of %u bytes",
                   length, DC_LIMIT_OPTIONS_BYTES);
    return DC_ERR_COMPILE;
  }
  size_t words = length / 2 + 1;  // at most this many
  out->defines = dc__arena_zalloc(arena, words, sizeof(char*));
  out->macro_options =
      dc__arena_zalloc(arena, words, sizeof(*out->macro_options));
  if (out->defines == NULL || out->macro_options == NULL) {
    return DC_ERR_OUT_OF_MEMORY;
  }
  options_parser_t op = {arena, diag, out, options, DC_OK};
  for (const char* word; diag->errors < DC_LIMIT_ERRORS &&
                         (word = next_word(&op)) != NULL;) {
    parse_word(&op, word);
  }
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return op.status;
}

// sema_literal.c: the literals of kernel source: integer constants with
// C99's typing rules less long long (OpenCL C has none: long is 64 bits),
// floating constants (decimal and hexadecimal; 'f' makes a float, no
// suffix a double, and neither long double nor half exists here),
// character constants, and the sizes of string literals, which only
// sizeof may hold.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema_internal.h"

static int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static bool is_hex_prefixed(const dc__token_t* t) {
  return t->length >= 2 && t->text[0] == '0' &&
         (t->text[1] == 'x' || t->text[1] == 'X');
}

// A number is floating when it has a '.', or an exponent: 'e' in decimal,
// 'p' in hexadecimal (where 'e' is a digit).
static bool is_floating_literal(const dc__token_t* t) {
  bool hex = is_hex_prefixed(t);
  for (uint32_t i = 0; i < t->length; ++i) {
    char c = t->text[i];
    if (c == '.') return true;
    if (!hex && (c == 'e' || c == 'E')) return true;
    if (hex && (c == 'p' || c == 'P')) return true;
  }
  return false;
}

typedef struct suffix_t {
  bool is_unsigned;
  bool is_long;
} suffix_t;

// Reads an integer constant's suffix (u, l, ul, lu in any case) from
// |t|'s text at |start|. OpenCL C has no long long: long is 64 bits.
static bool integer_suffix(dc__sema_t* s, const dc__token_t* t, uint32_t start,
                           suffix_t* out) {
  memset(out, 0, sizeof(*out));
  for (uint32_t i = start; i < t->length; ++i) {
    char c = t->text[i];
    if ((c == 'u' || c == 'U') && !out->is_unsigned) {
      out->is_unsigned = true;
    } else if ((c == 'l' || c == 'L') && !out->is_long) {
      if (i + 1 < t->length && (t->text[i + 1] == 'l' ||
                                t->text[i + 1] == 'L')) {
        dc__sema_error(s, t,
                       "'%s': OpenCL C has no long long; long is 64 bits, "
                       "use the suffix 'l'",
                       dc__sema_spell(s, t));
        return false;
      }
      out->is_long = true;
    } else {
      dc__sema_error(s, t, "invalid suffix '%s' on integer constant '%s'",
                     dc__arena_strndup(s->arena, t->text + start,
                                       t->length - start),
                     dc__sema_spell(s, t));
      return false;
    }
  }
  return true;
}

// The type of an integer constant of value |v| (C99 6.4.4.1 without long
// long): decimal ones are signed unless suffixed 'u'.
static dc__scalar_t integer_literal_type(uint64_t v, bool decimal,
                                         suffix_t suffix, bool* too_big) {
  *too_big = false;
  if (!suffix.is_long && !suffix.is_unsigned) {
    if (v <= INT32_MAX) return DC_SCALAR_INT;
    if (!decimal && v <= UINT32_MAX) return DC_SCALAR_UINT;
  }
  if (suffix.is_unsigned && !suffix.is_long && v <= UINT32_MAX) {
    return DC_SCALAR_UINT;
  }
  if (!suffix.is_unsigned) {
    if (v <= INT64_MAX) return DC_SCALAR_LONG;
    *too_big = decimal;
  }
  return DC_SCALAR_ULONG;
}

static dc__expr_t* integer_literal(dc__sema_t* s, const dc__token_t* t) {
  const char* p = t->text;
  uint32_t i = 0, base = 10;
  if (is_hex_prefixed(t)) {
    base = 16;
    i = 2;
  } else if (p[0] == '0') {
    base = 8;
  }
  uint32_t first = i;
  uint64_t v = 0;
  bool overflow = false;
  for (; i < t->length; ++i) {
    int d = digit_value(p[i]);
    if (d < 0 || d >= (base == 8 ? 10 : (int)base)) break;
    if (d >= (int)base) {
      dc__sema_error(s, t, "invalid digit '%c' in octal constant '%s'", p[i],
                     dc__sema_spell(s, t));
      return NULL;
    }
    if (v > (UINT64_MAX - (uint64_t)d) / base) overflow = true;
    v = v * base + (uint64_t)d;
  }
  if (i == first) {
    dc__sema_error(s, t, "invalid integer constant '%s'", dc__sema_spell(s, t));
    return NULL;
  }
  if (overflow) {
    dc__sema_error(s, t, "integer constant '%s' is too large for ulong",
                   dc__sema_spell(s, t));
    return NULL;
  }
  suffix_t suffix;
  if (!integer_suffix(s, t, i, &suffix)) return NULL;
  bool too_big;
  dc__scalar_t type = integer_literal_type(v, base == 10, suffix, &too_big);
  if (too_big) {
    dc__sema_warning(s, t,
                     "integer constant '%s' is too large for long; it is a "
                     "ulong",
                     dc__sema_spell(s, t));
  }
  return dc__sema_int(s, dc__sema_scalar(s, type), v, t);
}

// Reads a floating constant's suffix; *scalar is its type. f: float, none:
// double; long double and half do not exist here.
static bool floating_suffix(dc__sema_t* s, const dc__token_t* t, char last,
                            dc__scalar_t* scalar) {
  *scalar = DC_SCALAR_DOUBLE;
  if (last == 'f' || last == 'F') {
    *scalar = DC_SCALAR_FLOAT;
  } else if (last == 'l' || last == 'L') {
    dc__sema_error(s, t, "'%s': long double is not supported in kernels",
                   dc__sema_spell(s, t));
    return false;
  } else if (last == 'h' || last == 'H') {
    dc__sema_error(s, t, "'%s': half is not supported: use float",
                   dc__sema_spell(s, t));
    return false;
  }
  return true;
}

// strtod reads the locale's decimal point; OpenCL C's is always '.'.
static void to_locale_decimal_point(char* text) {
  const char* point = localeconv()->decimal_point;
  if (point == NULL || point[0] == '.' || point[0] == '\0' || point[1]) return;
  for (char* c = text; *c; ++c) {
    if (*c == '.') *c = point[0];
  }
}

static dc__expr_t* floating_literal(dc__sema_t* s, const dc__token_t* t) {
  char text[128];
  if (t->length >= sizeof(text)) {
    dc__sema_error(s, t, "floating constant is too long");
    return NULL;
  }
  memcpy(text, t->text, t->length);
  uint32_t n = t->length;
  text[n] = '\0';
  bool hex = is_hex_prefixed(t);
  dc__scalar_t scalar;
  // In hexadecimal the exponent is mandatory, so a last 'f' is a suffix.
  if (!floating_suffix(s, t, text[n - 1], &scalar)) return NULL;
  if (scalar == DC_SCALAR_FLOAT) text[--n] = '\0';
  if (hex && strpbrk(text, "pP") == NULL) {
    dc__sema_error(s, t,
                   "hexadecimal floating constant '%s' needs an exponent "
                   "('p')",
                   dc__sema_spell(s, t));
    return NULL;
  }
  to_locale_decimal_point(text);
  char* end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (end != text + n) {
    dc__sema_error(s, t, "invalid floating constant '%s'",
                   dc__sema_spell(s, t));
    return NULL;
  }
  bool overflows = scalar == DC_SCALAR_FLOAT ? isinf((float)v) : isinf(v);
  if (overflows) {
    dc__sema_warning(s, t, "floating constant '%s' is too large for %s",
                     dc__sema_spell(s, t), scalar == DC_SCALAR_FLOAT ? "float"
                                                            : "double");
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_FLOAT, dc__sema_scalar(s, scalar),
                                t);
  if (e != NULL) e->value.f = scalar == DC_SCALAR_FLOAT ? (float)v : v;
  return e;
}

// Reads the escape sequence at *p (just past the backslash) of the
// character constant |t|.
static bool escape_value(dc__sema_t* s, const dc__token_t* t, const char** p,
                         const char* end, unsigned* out) {
  static const char kSimple[] = "a\ab\bf\fn\nr\rt\tv\v\\\\''\"\"??";
  if (*p >= end) {  // the lexer never ends a literal so; a guard all the same
    dc__sema_error(s, t, "incomplete escape sequence in %s",
                   dc__sema_spell(s, t));
    return false;
  }
  char c = *(*p)++;
  for (const char* k = kSimple; *k; k += 2) {
    if (k[0] == c) {
      *out = (unsigned char)k[1];
      return true;
    }
  }
  unsigned v = 0, digits = 0;
  bool hex = c == 'x';
  if (!hex && (c < '0' || c > '7')) {
    dc__sema_error(s, t, "unknown escape sequence '\\%c'", c);
    return false;
  }
  if (!hex) --*p;
  for (; *p < end && (hex || digits < 3); ++*p, ++digits) {
    int d = digit_value(**p);
    if (d < 0 || d >= (hex ? 16 : 8)) break;
    v = v * (hex ? 16 : 8) + (unsigned)d;
    if (v > 255) {
      dc__sema_error(s, t, "escape sequence out of range in %s",
                     dc__sema_spell(s, t));
      return false;
    }
  }
  if (digits == 0) {
    dc__sema_error(s, t, "'\\x' needs hexadecimal digits");
    return false;
  }
  *out = v;
  return true;
}

// One character or escape.
dc__expr_t* dc__sema_char_literal(dc__sema_t* s, const dc__token_t* t) {
  const char* p = t->text + 1;
  const char* end = t->text + t->length - 1;  // the closing quote
  unsigned value = 0;
  if (p >= end) {
    dc__sema_error(s, t, "empty character constant");
    return NULL;
  }
  if (*p == '\\') {
    ++p;
    if (!escape_value(s, t, &p, end, &value)) return NULL;
  } else {
    value = (unsigned char)*p++;
  }
  if (p != end) {
    dc__sema_error(s, t, "multi-character constant %s is not supported",
                   dc__sema_spell(s, t));
    return NULL;
  }
  return dc__sema_int(s, dc__sema_int_ty(s), (uint64_t)(int64_t)(int8_t)value,
                      t);
}

// The bytes of the string literal |t| (escapes decoded), without its NUL.
static bool string_length(dc__sema_t* s, const dc__token_t* t,
                          uint32_t* out) {
  const char* p = t->text + 1;
  const char* end = t->text + t->length - 1;  // the closing quote
  uint32_t n = 0;
  for (unsigned ignored; p < end; ++n) {
    if (*p++ != '\\') continue;
    if (!escape_value(s, t, &p, end, &ignored)) return false;
  }
  *out = n;
  return true;
}

// sizeof may hold a string literal (the preprocessor's # and __FILE__ make
// them); anywhere else it is an error: kernels have no strings.
const dc__ty_t* dc__sema_string_type(dc__sema_t* s) {
  uint32_t total = 1;  // the NUL
  while (dc__sema_cur(s)->kind == DC_TOK_STRING) {
    uint32_t n;
    if (!string_length(s, dc__sema_cur(s), &n)) return NULL;
    total += n;
    ++s->pos;
  }
  const dc__ty_t* c = dc__ty_qualified(
      s->types, dc__sema_scalar(s, DC_SCALAR_CHAR), 0, DC_ADDRESS_CONSTANT);
  return dc__ty_array(s->types, c, total);
}

// Appends the bytes of the string literal |t| to |bytes| (grown in the
// arena); false after an error.
static bool string_bytes(dc__sema_t* s, const dc__token_t* t,
                         unsigned char** bytes, uint32_t* count,
                         uint32_t* capacity) {
  const char* p = t->text + 1;
  const char* end = t->text + t->length - 1;  // the closing quote
  while (p < end) {
    unsigned value = (unsigned char)*p;
    if (*p++ == '\\' && !escape_value(s, t, &p, end, &value)) return false;
    if (!dc__sema_grow(s, (void**)bytes, capacity, *count, 1)) return false;
    (*bytes)[(*count)++] = (unsigned char)value;
  }
  return true;
}

dc__expr_t* dc__sema_string_init(dc__sema_t* s, const dc__ty_t* type) {
  const dc__token_t* at = dc__sema_cur(s);
  const dc__ty_t* element = type->base;
  if (element->kind != DC_TY_SCALAR ||
      (element->scalar != DC_SCALAR_CHAR &&
       element->scalar != DC_SCALAR_UCHAR)) {
    dc__sema_error(s, at, "a string literal initialises an array of char or "
                   "uchar, not '%s'", dc__sema_ty(s, type));
    return NULL;
  }
  unsigned char* bytes = NULL;
  uint32_t count = 0, capacity = 0;
  while (dc__sema_cur(s)->kind == DC_TOK_STRING) {  // adjacent ones join
    if (!string_bytes(s, dc__sema_cur(s), &bytes, &count, &capacity)) {
      return NULL;
    }
    ++s->pos;
  }
  // The NUL is kept where there is room for it (C99 6.7.8p14).
  uint32_t length = type->length ? type->length : count + 1;
  if (count > length) {
    dc__sema_error(s, at, "the string has %u characters, more than '%s' "
                   "holds", count, dc__sema_ty(s, type));
    return NULL;
  }
  uint32_t slots = count < length ? count + 1 : count;
  dc__expr_t** args = dc__arena_alloc(s->arena, (slots + 1) * sizeof(*args));
  if (args == NULL) return NULL;
  const dc__ty_t* plain = element->unqualified;
  for (uint32_t i = 0; i < slots; ++i) {
    uint64_t v = i < count ? bytes[i] : 0;
    if (plain->scalar == DC_SCALAR_CHAR) v = (uint64_t)(int64_t)(int8_t)v;
    if ((args[i] = dc__sema_int(s, plain, v, at)) == NULL) return NULL;
  }
  const dc__ty_t* array = type->length ? type : dc__ty_array(s->types, element,
                                                             length);
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_INIT_LIST, array, at);
  if (e == NULL) return NULL;
  e->args = args;
  e->arg_count = slots;
  return e;
}

dc__expr_t* dc__sema_number_literal(dc__sema_t* s, const dc__token_t* t) {
  return is_floating_literal(t) ? floating_literal(s, t)
                                : integer_literal(s, t);
}

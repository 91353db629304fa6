// json_check.h: a small, strict JSON reader for tests that check what the
// engine writes (traces, health reports). It parses a whole text into a
// tree, or says where the text stops being JSON.
// SPDX-License-Identifier: MIT
//
// Everything is static inline and uses only the C library, so any test can
// include it. Strict means RFC 8259: no trailing commas, no comments, no
// control characters in strings, nothing after the value, numbers in the
// JSON grammar. Strings are decoded (escapes and \u pairs) into UTF-8.
//
//   char why[128];
//   dc_json_t* root = dc_json_parse(text, strlen(text), why, sizeof(why));
//   ck_assert_msg(root != NULL, "invalid JSON: %s", why);
//   const dc_json_t* events = dc_json_get(root, "traceEvents");
//   ...
//   dc_json_free(root);
#ifndef DC_JSON_CHECK_H_
#define DC_JSON_CHECK_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum dc_json_kind_e {
  DC_JSON_NULL,
  DC_JSON_BOOL,
  DC_JSON_NUMBER,
  DC_JSON_STRING,
  DC_JSON_ARRAY,
  DC_JSON_OBJECT,
} dc_json_kind_t;

typedef struct dc_json_t dc_json_t;
struct dc_json_t {
  dc_json_kind_t kind;
  bool boolean;
  double number;
  char* string;      // DC_JSON_STRING, decoded, NUL-terminated
  size_t count;      // items of an array or members of an object
  dc_json_t* items;  // the values
  char** keys;       // DC_JSON_OBJECT: the member names
};

typedef struct dc_json_parser_t {
  const char* text;
  size_t length;
  size_t at;
  char* error;
  size_t error_size;
  bool failed;
  int depth;
} dc_json_parser_t;

#define DC_JSON_MAX_DEPTH 64

static inline bool dc_json_fail(dc_json_parser_t* p, const char* format,
                                ...) {
  if (!p->failed && p->error != NULL && p->error_size > 0) {
    char what[96];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof(what), format, args);
    va_end(args);
    snprintf(p->error, p->error_size, "at byte %zu: %s", p->at, what);
  }
  p->failed = true;
  return false;
}

static inline void dc_json_skip_space(dc_json_parser_t* p) {
  while (p->at < p->length &&
         (p->text[p->at] == ' ' || p->text[p->at] == '\t' ||
          p->text[p->at] == '\n' || p->text[p->at] == '\r')) {
    p->at++;
  }
}

static inline int dc_json_peek(const dc_json_parser_t* p) {
  return p->at < p->length ? (unsigned char)p->text[p->at] : -1;
}

static inline bool dc_json_literal(dc_json_parser_t* p, const char* word) {
  size_t n = strlen(word);
  if (p->length - p->at < n || memcmp(p->text + p->at, word, n) != 0) {
    int c = dc_json_peek(p);
    return dc_json_fail(p, "unexpected character '%c'", c < 0 ? '?' : c);
  }
  p->at += n;
  return true;
}

static inline bool dc_json_digits(dc_json_parser_t* p) {
  size_t start = p->at;
  while (dc_json_peek(p) >= '0' && dc_json_peek(p) <= '9') p->at++;
  return p->at > start || dc_json_fail(p, "a digit is missing");
}

static inline bool dc_json_number(dc_json_parser_t* p, dc_json_t* out) {
  size_t start = p->at;
  if (dc_json_peek(p) == '-') p->at++;
  if (dc_json_peek(p) == '0') {
    p->at++;
  } else if (!dc_json_digits(p)) {
    return false;
  }
  if (dc_json_peek(p) == '.') {
    p->at++;
    if (!dc_json_digits(p)) return false;
  }
  if (dc_json_peek(p) == 'e' || dc_json_peek(p) == 'E') {
    p->at++;
    if (dc_json_peek(p) == '+' || dc_json_peek(p) == '-') p->at++;
    if (!dc_json_digits(p)) return false;
  }
  char copy[64];
  size_t n = p->at - start;
  if (n >= sizeof(copy)) return dc_json_fail(p, "the number is too long");
  memcpy(copy, p->text + start, n);
  copy[n] = '\0';
  out->kind = DC_JSON_NUMBER;
  out->number = strtod(copy, NULL);
  return true;
}

static inline int dc_json_hex4(dc_json_parser_t* p) {
  if (p->length - p->at < 4) return -1;
  int value = 0;
  for (int i = 0; i < 4; ++i) {
    char c = p->text[p->at + (size_t)i];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  p->at += 4;
  return value;
}

static inline size_t dc_json_put_utf8(char* out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

// Decodes the escape after a backslash into |out|; returns its length.
static inline size_t dc_json_escape(dc_json_parser_t* p, char* out) {
  int c = dc_json_peek(p);
  p->at++;
  switch (c) {
    case '"': *out = '"'; return 1;
    case '\\': *out = '\\'; return 1;
    case '/': *out = '/'; return 1;
    case 'b': *out = '\b'; return 1;
    case 'f': *out = '\f'; return 1;
    case 'n': *out = '\n'; return 1;
    case 'r': *out = '\r'; return 1;
    case 't': *out = '\t'; return 1;
    case 'u': break;
    default:
      dc_json_fail(p, "bad escape '\\%c'", c < 0 ? '?' : c);
      return 0;
  }
  int cp = dc_json_hex4(p);
  if (cp < 0) {
    dc_json_fail(p, "bad \\u escape");
    return 0;
  }
  if (cp >= 0xD800 && cp <= 0xDBFF) {  // a surrogate pair
    int low = -1;
    if (dc_json_literal(p, "\\u")) low = dc_json_hex4(p);
    if (low < 0xDC00 || low > 0xDFFF) {
      dc_json_fail(p, "an unpaired surrogate");
      return 0;
    }
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    dc_json_fail(p, "an unpaired surrogate");
    return 0;
  }
  return dc_json_put_utf8(out, (uint32_t)cp);
}

// Parses a string at '"' into a malloc'ed copy, or NULL.
static inline char* dc_json_string_text(dc_json_parser_t* p) {
  p->at++;  // the opening quote
  char* out = malloc(p->length - p->at + 1);  // decoding never grows
  if (out == NULL) {
    dc_json_fail(p, "out of memory");
    return NULL;
  }
  size_t n = 0;
  for (;;) {
    int c = dc_json_peek(p);
    if (c < 0) {
      dc_json_fail(p, "the string does not end");
      break;
    }
    if (c == '"') {
      p->at++;
      out[n] = '\0';
      return out;
    }
    if (c < 0x20) {
      dc_json_fail(p, "control character 0x%02x in a string", c);
      break;
    }
    p->at++;
    if (c == '\\') {
      size_t k = dc_json_escape(p, out + n);
      if (k == 0) break;
      n += k;
    } else {
      out[n++] = (char)c;
    }
  }
  free(out);
  return NULL;
}

static inline bool dc_json_value(dc_json_parser_t* p, dc_json_t* out);

static inline bool dc_json_push(dc_json_parser_t* p, dc_json_t* v,
                                size_t* capacity, char* key) {
  if (v->count == *capacity) {
    size_t grown = *capacity ? 2 * *capacity : 4;
    dc_json_t* items = realloc(v->items, grown * sizeof(*items));
    if (items == NULL) return dc_json_fail(p, "out of memory");
    v->items = items;
    if (v->kind == DC_JSON_OBJECT) {
      char** keys = realloc(v->keys, grown * sizeof(*keys));
      if (keys == NULL) return dc_json_fail(p, "out of memory");
      v->keys = keys;
    }
    *capacity = grown;
  }
  dc_json_t* item = &v->items[v->count];
  memset(item, 0, sizeof(*item));
  if (v->kind == DC_JSON_OBJECT) v->keys[v->count] = key;
  v->count++;
  return dc_json_value(p, item);
}

// Parses an array or object at its opening bracket.
static inline bool dc_json_container(dc_json_parser_t* p, dc_json_t* out,
                                     bool object) {
  out->kind = object ? DC_JSON_OBJECT : DC_JSON_ARRAY;
  if (++p->depth > DC_JSON_MAX_DEPTH) return dc_json_fail(p, "too deep");
  p->at++;
  size_t capacity = 0;
  dc_json_skip_space(p);
  if (dc_json_peek(p) == (object ? '}' : ']')) {
    p->at++;
    p->depth--;
    return true;
  }
  for (;;) {
    char* key = NULL;
    if (object) {
      dc_json_skip_space(p);
      if (dc_json_peek(p) != '"') return dc_json_fail(p, "a key is missing");
      key = dc_json_string_text(p);
      if (key == NULL) return false;
      dc_json_skip_space(p);
      if (dc_json_peek(p) != ':') {
        free(key);
        return dc_json_fail(p, "':' is missing");
      }
      p->at++;
    }
    if (!dc_json_push(p, out, &capacity, key)) {
      if (object && (out->count == 0 || out->keys[out->count - 1] != key)) {
        free(key);
      }
      return false;
    }
    dc_json_skip_space(p);
    int c = dc_json_peek(p);
    p->at++;
    if (c == ',') continue;
    if (c == (object ? '}' : ']')) break;
    p->at--;
    return dc_json_fail(p, "',' or '%c' expected", object ? '}' : ']');
  }
  p->depth--;
  return true;
}

static inline bool dc_json_value(dc_json_parser_t* p, dc_json_t* out) {
  dc_json_skip_space(p);
  int c = dc_json_peek(p);
  switch (c) {
    case '{': return dc_json_container(p, out, true);
    case '[': return dc_json_container(p, out, false);
    case '"':
      out->kind = DC_JSON_STRING;
      out->string = dc_json_string_text(p);
      return out->string != NULL;
    case 't':
      out->kind = DC_JSON_BOOL;
      out->boolean = true;
      return dc_json_literal(p, "true");
    case 'f':
      out->kind = DC_JSON_BOOL;
      return dc_json_literal(p, "false");
    case 'n':
      out->kind = DC_JSON_NULL;
      return dc_json_literal(p, "null");
    case -1:
      return dc_json_fail(p, "a value is missing");
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return dc_json_number(p, out);
      return dc_json_fail(p, "unexpected character '%c'", c);
  }
}

static inline void dc_json_clear(dc_json_t* v) {
  for (size_t i = 0; i < v->count; ++i) {
    dc_json_clear(&v->items[i]);
    if (v->keys != NULL) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->string);
}

static inline void dc_json_free(dc_json_t* v) {
  if (v == NULL) return;
  dc_json_clear(v);
  free(v);
}

// Parses the |length| bytes of |text|. Returns the tree (free it with
// dc_json_free), or NULL with the reason in |error|.
static inline dc_json_t* dc_json_parse(const char* text, size_t length,
                                       char* error, size_t error_size) {
  dc_json_parser_t p = {.text = text, .length = length, .error = error,
                        .error_size = error_size};
  if (error != NULL && error_size > 0) error[0] = '\0';
  dc_json_t* root = calloc(1, sizeof(*root));
  if (root == NULL) return NULL;
  if (dc_json_value(&p, root)) {
    dc_json_skip_space(&p);
    if (p.at != p.length) dc_json_fail(&p, "text after the value");
  }
  if (p.failed) {
    dc_json_free(root);
    return NULL;
  }
  return root;
}

// The member |key| of object |v|, or NULL.
static inline const dc_json_t* dc_json_get(const dc_json_t* v,
                                           const char* key) {
  if (v == NULL || v->kind != DC_JSON_OBJECT) return NULL;
  for (size_t i = 0; i < v->count; ++i) {
    if (strcmp(v->keys[i], key) == 0) return &v->items[i];
  }
  return NULL;
}

// The string member |key| of |v|, or NULL if absent or not a string.
static inline const char* dc_json_get_string(const dc_json_t* v,
                                             const char* key) {
  const dc_json_t* m = dc_json_get(v, key);
  return m != NULL && m->kind == DC_JSON_STRING ? m->string : NULL;
}

// The number member |key| of |v|, or |fallback|.
static inline double dc_json_get_number(const dc_json_t* v, const char* key,
                                        double fallback) {
  const dc_json_t* m = dc_json_get(v, key);
  return m != NULL && m->kind == DC_JSON_NUMBER ? m->number : fallback;
}

// Reads the whole file |path| into a malloc'ed, NUL-terminated buffer;
// NULL if it cannot be read.
static inline char* dc_json_read_file(const char* path, size_t* out_length) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t capacity = 1 << 16, n = 0;
  char* text = malloc(capacity);
  while (text != NULL) {
    n += fread(text + n, 1, capacity - n - 1, f);
    if (n < capacity - 1) break;
    char* grown = realloc(text, capacity * 2);
    if (grown == NULL) {
      free(text);
      text = NULL;
      break;
    }
    text = grown;
    capacity *= 2;
  }
  fclose(f);
  if (text == NULL) return NULL;
  text[n] = '\0';
  *out_length = n;
  return text;
}

#endif  // DC_JSON_CHECK_H_

// json_writer.c: streaming JSON into a FILE or a fixed buffer.
// SPDX-License-Identifier: MIT
#include "json_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

static void put(dc__json_t* w, const char* text, size_t n) {
  if (w->file != NULL) {
    if (!w->failed && n > 0 && fwrite(text, 1, n, w->file) != n) {
      w->failed = true;
      w->error = errno;
    }
  } else if (w->size > 0 && w->length < w->size - 1) {
    size_t fits = DC_MIN(n, w->size - 1 - w->length);
    memcpy(w->buffer + w->length, text, fits);
    w->buffer[w->length + fits] = '\0';
  }
  w->length += n;
}

static void put_str(dc__json_t* w, const char* text) {
  put(w, text, strlen(text));
}

static void init(dc__json_t* w, uint32_t wrap_depth) {
  w->length = 0;
  w->failed = false;
  w->error = 0;
  w->wrap_depth = wrap_depth;
  w->depth = 0;
  memset(w->has_items, 0, sizeof(w->has_items));
  w->after_key = false;
}

void dc__json_init_buffer(dc__json_t* w, char* buffer, size_t size,
                          uint32_t wrap_depth) {
  init(w, wrap_depth);
  w->file = NULL;
  w->buffer = size > 0 ? buffer : NULL;
  w->size = w->buffer != NULL ? size : 0;
  if (w->size > 0) w->buffer[0] = '\0';
}

void dc__json_init_file(dc__json_t* w, FILE* file, uint32_t wrap_depth) {
  init(w, wrap_depth);
  w->file = file;
  w->buffer = NULL;
  w->size = 0;
}

static void newline(dc__json_t* w, uint32_t depth) {
  static const char kSpaces[] = "                                ";
  put(w, "\n", 1);
  put(w, kSpaces, DC_MIN(2 * (size_t)depth, sizeof(kSpaces) - 1));
}

// Starts an item of the innermost container: a comma after the first, and
// a line of its own where the container wraps.
static void separate(dc__json_t* w) {
  uint32_t d = w->depth;
  if (d == 0 || d > DC_JSON_MAX_DEPTH) return;
  if (w->has_items[d]) put(w, ",", 1);
  w->has_items[d] = true;
  if (d <= w->wrap_depth) newline(w, d);
}

static void before_value(dc__json_t* w) {
  if (w->after_key) {
    w->after_key = false;
  } else {
    separate(w);
  }
}

static void open_container(dc__json_t* w, const char* bracket) {
  before_value(w);
  put(w, bracket, 1);
  w->depth += 1;
  if (w->depth <= DC_JSON_MAX_DEPTH) w->has_items[w->depth] = false;
}

static void close_container(dc__json_t* w, const char* bracket) {
  uint32_t d = w->depth;
  if (d == 0) return;
  bool wrapped = d <= DC_JSON_MAX_DEPTH && w->has_items[d] &&
                 d <= w->wrap_depth;
  w->depth -= 1;
  if (wrapped) newline(w, w->depth);
  put(w, bracket, 1);
}

void dc__json_begin_object(dc__json_t* w) { open_container(w, "{"); }
void dc__json_end_object(dc__json_t* w) { close_container(w, "}"); }
void dc__json_begin_array(dc__json_t* w) { open_container(w, "["); }
void dc__json_end_array(dc__json_t* w) { close_container(w, "]"); }

// Returns the length of the valid UTF-8 sequence at |s|, or 0.
static size_t utf8_length(const unsigned char* s) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  }
  return n;
}

static void put_escaped(dc__json_t* w, const char* text) {
  const unsigned char* s = (const unsigned char*)text;
  put(w, "\"", 1);
  while (*s != '\0') {
    const unsigned char* run = s;  // bytes that need no escaping
    while (*s >= 0x20 && *s != '"' && *s != '\\' && *s < 0x80) ++s;
    put(w, (const char*)run, (size_t)(s - run));
    if (*s == '\0') break;
    char escape[8];
    switch (*s) {
      case '"': put(w, "\\\"", 2); break;
      case '\\': put(w, "\\\\", 2); break;
      case '\n': put(w, "\\n", 2); break;
      case '\r': put(w, "\\r", 2); break;
      case '\t': put(w, "\\t", 2); break;
      case '\b': put(w, "\\b", 2); break;
      case '\f': put(w, "\\f", 2); break;
      default:
        if (*s < 0x20) {
          snprintf(escape, sizeof(escape), "\\u%04x", *s);
          put(w, escape, 6);
        } else {
          size_t n = utf8_length(s);
          if (n == 0) {
            put(w, "\\ufffd", 6);
            n = 1;
          } else {
            put(w, (const char*)s, n);
          }
          s += n;
          continue;
        }
    }
    ++s;
  }
  put(w, "\"", 1);
}

void dc__json_key(dc__json_t* w, const char* key) {
  separate(w);
  put_escaped(w, key);
  put(w, ":", 1);
  w->after_key = true;
}

void dc__json_string(dc__json_t* w, const char* text) {
  if (text == NULL) {
    dc__json_null(w);
    return;
  }
  before_value(w);
  put_escaped(w, text);
}

void dc__json_u64(dc__json_t* w, uint64_t value) {
  char text[24];
  snprintf(text, sizeof(text), "%" PRIu64, value);
  before_value(w);
  put_str(w, text);
}

void dc__json_i64(dc__json_t* w, int64_t value) {
  char text[24];
  snprintf(text, sizeof(text), "%" PRId64, value);
  before_value(w);
  put_str(w, text);
}

void dc__json_double(dc__json_t* w, double value) {
  if (!isfinite(value)) {
    dc__json_null(w);
    return;
  }
  // 15 significant digits: short, and read back as the same text.
  char text[32];
  snprintf(text, sizeof(text), "%.15g", value);
  before_value(w);
  put_str(w, text);
}

void dc__json_thousandths(dc__json_t* w, int64_t value) {
  char text[32];
  uint64_t magnitude =
      value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
  snprintf(text, sizeof(text), "%s%" PRIu64 ".%03u", value < 0 ? "-" : "",
           magnitude / 1000, (unsigned)(magnitude % 1000));
  before_value(w);
  put_str(w, text);
}

void dc__json_bool(dc__json_t* w, bool value) {
  before_value(w);
  put_str(w, value ? "true" : "false");
}

void dc__json_null(dc__json_t* w) {
  before_value(w);
  put(w, "null", 4);
}

void dc__json_member_string(dc__json_t* w, const char* key,
                            const char* text) {
  dc__json_key(w, key);
  dc__json_string(w, text);
}

void dc__json_member_u64(dc__json_t* w, const char* key, uint64_t value) {
  dc__json_key(w, key);
  dc__json_u64(w, value);
}

void dc__json_member_double(dc__json_t* w, const char* key, double value) {
  dc__json_key(w, key);
  dc__json_double(w, value);
}

// cuda_names.c: the names the CUDA code generator rewrites: the
// language's keywords, its type names, the built-ins whose names carry a
// type or a width, C++ keywords, and functions CUDA has but the language
// does not.
// SPDX-License-Identifier: MIT
#include "cuda_names.h"

#include <stdio.h>
#include <string.h>

// C++ keywords that C lacks: valid names in a kernel, renamed dc_u_<name>.
bool dc__cuda_is_cxx_keyword(const dc__token_t* t) {
  static const char* const kKeywords[] = {
      "alignas",   "alignof",       "and",         "and_eq",
      "asm",       "bitand",        "bitor",       "catch",
      "char8_t",   "char16_t",      "char32_t",    "class",
      "compl",     "concept",       "consteval",   "constexpr",
      "constinit", "const_cast",    "co_await",    "co_return",
      "co_yield",  "decltype",      "delete",      "dynamic_cast",
      "explicit",  "export",        "friend",      "mutable",
      "namespace", "new",           "noexcept",    "not",
      "not_eq",    "nullptr",       "operator",    "or",
      "or_eq",     "protected",     "public",      "reinterpret_cast",
      "requires",  "static_assert", "static_cast", "template",
      "this",      "thread_local",  "throw",       "try",
      "typeid",    "typename",      "using",       "virtual",
      "wchar_t",   "xor",           "xor_eq",
  };
  for (size_t i = 0; i < sizeof(kKeywords) / sizeof(kKeywords[0]); ++i) {
    if (dc__tok_is(t, kKeywords[i])) return true;
  }
  return false;
}

// The CUDA spelling of a language keyword: NULL to keep |t|, "" to drop
// it.
const char* dc__cuda_keyword_spelling(const dc__token_t* t) {
  static const char* const kDropped[] = {
      "__global", "global",   "__local", "local",    "__private",
      "private",  "__kernel", "kernel",  "register",
  };
  if (t->kind != DC_TOK_IDENT) return NULL;
  for (size_t i = 0; i < sizeof(kDropped) / sizeof(kDropped[0]); ++i) {
    if (dc__tok_is(t, kDropped[i])) return "";
  }
  if (dc__tok_is(t, "__constant") || dc__tok_is(t, "constant")) return "const";
  if (dc__tok_is(t, "restrict") || dc__tok_is(t, "__restrict")) {
    return "__restrict__";
  }
  return NULL;
}

// Recognises the language's type names: writes the prelude's spelling of
// "float4" (dc_float4) or "char" (dc_char) to |out| and returns the
// vector width (1 for scalars), or 0 if |t| (from |skip| bytes in) is not
// one.
unsigned dc__cuda_type_name(const dc__token_t* t, size_t skip, char* out,
                            size_t size) {
  static const char* const kBases[] = {"char",  "uchar", "short", "ushort",
                                       "int",   "uint",  "long",  "ulong",
                                       "float", "double"};
  if (t->kind != DC_TOK_IDENT || t->length <= skip) return 0;
  const char* text = t->text + skip;
  size_t length = t->length - skip;
  for (size_t b = 0; b < sizeof(kBases) / sizeof(kBases[0]); ++b) {
    size_t n = strlen(kBases[b]);
    if (length < n || memcmp(text, kBases[b], n) != 0) continue;
    unsigned width = 0;
    if (length == n) {
      width = 1;
    } else if (length == n + 1 && strchr("2348", text[n]) && text[n]) {
      width = (unsigned)(text[n] - '0');
    } else if (length == n + 2 && text[n] == '1' && text[n + 1] == '6') {
      width = 16;
    } else {
      continue;
    }
    if (width == 1) {
      snprintf(out, size, "%s", b == 0 ? "dc_char" : kBases[b]);
    } else {
      snprintf(out, size, "dc_%.*s", (int)length, text);
    }
    return width;
  }
  return 0;
}


static bool starts_with(const dc__token_t* t, const char* prefix) {
  size_t n = strlen(prefix);
  return t->length > n && memcmp(t->text, prefix, n) == 0;
}

// convert_<T>[_sat][_<mode>] -> dc__convert<T', SAT, MODE>. Returns false
// if |t| is no such name.
static bool conversion_name(const dc__token_t* t, char* out, size_t size) {
  static const char* const kModes[] = {"", "_rte", "_rtz", "_rtp", "_rtn"};
  if (!starts_with(t, "convert_")) return false;
  size_t end = t->length;
  int mode = 0;
  for (int m = 1; m < 5; ++m) {
    if (end > 4 && memcmp(t->text + end - 4, kModes[m], 4) == 0) {
      mode = m;
      end -= 4;
      break;
    }
  }
  bool sat = end > 4 && memcmp(t->text + end - 4, "_sat", 4) == 0;
  if (sat) end -= 4;
  dc__token_t base = *t;
  base.length = (uint32_t)end;
  char type[32];
  unsigned width = dc__cuda_type_name(&base, 8, type, sizeof(type));
  if (width == 0 || width == 3) return false;
  bool floating = strstr(type, "float") != NULL || strstr(type, "double");
  if (sat && floating) return false;  // OpenCL has no convert_float_sat
  snprintf(out, size, "dc__convert<%s, %d, %d>", type, sat ? 1 : 0, mode);
  return true;
}

// The name families of built-ins that take a type or width in their name:
// convert_*, as_*, vloadN and vstoreN become the prelude's templates.
bool dc__cuda_templated_builtin(const dc__token_t* t, char* out, size_t size) {
  char type[32];
  if (conversion_name(t, out, size)) return true;
  unsigned width = starts_with(t, "as_")
                       ? dc__cuda_type_name(t, 3, type, sizeof(type))
                       : 0;
  if (width != 0 && width != 3) {
    snprintf(out, size, "dc__as<%s>", type);
    return true;
  }
  static const char* const kWidths[] = {"2", "4", "8", "16"};
  for (size_t w = 0; w < 4; ++w) {
    char load[16], store[16];
    snprintf(load, sizeof(load), "vload%s", kWidths[w]);
    snprintf(store, sizeof(store), "vstore%s", kWidths[w]);
    if (dc__tok_is(t, load) || dc__tok_is(t, store)) {
      snprintf(out, size, "dc__%s<%s>",
               dc__tok_is(t, load) ? "vload" : "vstore", kWidths[w]);
      return true;
    }
  }
  return false;
}

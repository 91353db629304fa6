// lower_cuda_names.c: the built-ins whose names carry a type or a width, which
// the CUDA prelude implements as templates.
// SPDX-License-Identifier: MIT
#include "lower_cuda_names.h"

#include <stdio.h>
#include <string.h>

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
  if (width == 0) return false;
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
  if (width != 0) {
    snprintf(out, size, "dc__as<%s>", type);
    return true;
  }
  static const char* const kWidths[] = {"2", "3", "4", "8", "16"};
  for (size_t w = 0; w < 5; ++w) {
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

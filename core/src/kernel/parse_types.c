// parse_types.c: declaration specifiers, declarators, structs, unions,
// enums and attributes of the kernel language.
//
// Every type the program writes becomes an interned dc__ty_t here. What
// OpenCL C 1.2 allows is accepted; what it leaves out, and what would let
// a program reach past the language (extern declarations, inline
// assembly, GNU extensions), is an error that says so.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "parse_internal.h"

static const struct {
  const char* name;
  dc__scalar_t scalar;
} kScalars[] = {
    {"void", DC_SCALAR_VOID},     {"bool", DC_SCALAR_BOOL},
    {"char", DC_SCALAR_CHAR},     {"uchar", DC_SCALAR_UCHAR},
    {"short", DC_SCALAR_SHORT},   {"ushort", DC_SCALAR_USHORT},
    {"int", DC_SCALAR_INT},       {"uint", DC_SCALAR_UINT},
    {"long", DC_SCALAR_LONG},     {"ulong", DC_SCALAR_ULONG},
    {"float", DC_SCALAR_FLOAT},   {"double", DC_SCALAR_DOUBLE},
    {"size_t", DC_SCALAR_SIZE_T}, {"ptrdiff_t", DC_SCALAR_PTRDIFF_T},
    {"intptr_t", DC_SCALAR_PTRDIFF_T}, {"uintptr_t", DC_SCALAR_SIZE_T},
};

// Names the language reserves that the engine does not offer, and words
// that would reach past the language, with the message users get.
static const struct {
  const char* name;
  const char* why;
} kRejected[] = {
    {"half", "the half type is not supported; use float"},
    {"image1d_t", "images are not supported; use buffers"},
    {"image1d_array_t", "images are not supported; use buffers"},
    {"image1d_buffer_t", "images are not supported; use buffers"},
    {"image2d_t", "images are not supported; use buffers"},
    {"image2d_array_t", "images are not supported; use buffers"},
    {"image3d_t", "images are not supported; use buffers"},
    {"sampler_t", "samplers are not supported; use buffers"},
    {"__read_only", "images are not supported; use buffers"},
    {"__write_only", "images are not supported; use buffers"},
    {"__read_write", "images are not supported; use buffers"},
    {"read_only", "images are not supported; use buffers"},
    {"write_only", "images are not supported; use buffers"},
    {"read_write", "images are not supported; use buffers"},
    {"extern",
     "'extern' is not supported: a program is one source, so define the "
     "function or variable in it"},
    {"asm", "inline assembly is not supported"},
    {"__asm", "inline assembly is not supported"},
    {"__asm__", "inline assembly is not supported"},
    {"register", "the 'register' storage class is not supported (OpenCL C "
                 "6.8)"},
    {"auto", "the 'auto' storage class is not supported (OpenCL C 6.8)"},
    {"typeof", "'typeof' is a GNU extension and is not supported"},
    {"__typeof", "'__typeof' is a GNU extension and is not supported"},
    {"__typeof__", "'__typeof__' is a GNU extension and is not supported"},
    {"__extension__", "'__extension__' is a GNU extension and is not "
                      "supported"},
    {"_Complex", "complex types are not supported"},
    {"_Imaginary", "complex types are not supported"},
    {"_Atomic", "C11 atomics are not supported; use the atomic_* "
                "built-ins"},
    {"_Thread_local", "thread-local storage is not supported"},
    {"__thread", "thread-local storage is not supported"},
    {"_Noreturn", "'_Noreturn' is not supported"},
    {"_Static_assert", "'_Static_assert' is not supported"},
};

static const char* rejected_reason(const dc__token_t* t) {
  if (t->kind != DC_TOK_IDENT) return NULL;
  for (size_t i = 0; i < sizeof(kRejected) / sizeof(kRejected[0]); ++i) {
    if (dc__tok_is(t, kRejected[i].name)) return kRejected[i].why;
  }
  return NULL;
}

// "float4" gives float and 4. Widths are 2, 3, 4, 8 and 16.
static bool vector_name(const dc__token_t* t, dc__scalar_t* scalar,
                        unsigned* width) {
  if (t->kind != DC_TOK_IDENT || t->length < 3) return false;
  const char* end = t->text + t->length;
  const char* digits = end - (end[-2] == '1' && end[-1] == '6' ? 2 : 1);
  unsigned w = digits + 2 == end ? 16u : (unsigned)(end[-1] - '0');
  if (w != 2 && w != 3 && w != 4 && w != 8 && w != 16) return false;
  size_t n = (size_t)(digits - t->text);
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    dc__scalar_t sc = kScalars[i].scalar;
    if (sc >= DC_SCALAR_CHAR && sc <= DC_SCALAR_DOUBLE &&
        strlen(kScalars[i].name) == n &&
        memcmp(t->text, kScalars[i].name, n) == 0) {
      *scalar = sc;
      *width = w;
      return true;
    }
  }
  return false;
}

static bool scalar_name(const dc__token_t* t, dc__scalar_t* out) {
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    if (dc__tok_is(t, kScalars[i].name)) {
      *out = kScalars[i].scalar;
      return true;
    }
  }
  return false;
}

static bool is_typedef_name(const dc__sema_t* s, const dc__token_t* t) {
  const dc__decl_t* d = dc__sema_lookup(s, t);
  return d != NULL && d->kind == DC_DECL_TYPEDEF;
}

bool dc__is_qualifier(const dc__token_t* t) {
  static const char* const kWords[] = {
      "const",    "volatile", "restrict",   "__restrict", "__global",
      "global",   "__local",  "local",      "__constant", "constant",
      "__private", "private", "static",     "inline",     "__inline",
      "__kernel", "kernel",   "__attribute__", "typedef",  "unsigned",
      "signed",   "struct",   "union",      "enum",
  };
  if (t->kind != DC_TOK_IDENT) return false;
  for (size_t i = 0; i < sizeof(kWords) / sizeof(kWords[0]); ++i) {
    if (dc__tok_is(t, kWords[i])) return true;
  }
  return false;
}

bool dc__sema_starts_type(const dc__sema_t* s) {
  const dc__token_t* t = dc__sema_cur(s);
  dc__scalar_t sc;
  unsigned w;
  if (t->kind != DC_TOK_IDENT) return false;
  return dc__is_qualifier(t) || scalar_name(t, &sc) ||
         vector_name(t, &sc, &w) || dc__tok_is(t, "event_t") ||
         is_typedef_name(s, t) || rejected_reason(t) != NULL;
}

//===-- Attributes --------------------------------------------------------===//

// Reads "(x, y, z)" of reqd_work_group_size and work_group_size_hint.
static void parse_group_size(dc__sema_t* s, const char* name,
                             uint32_t out[3]) {
  if (!dc__sema_expect(s, "(")) return;
  for (int d = 0; d < 3; ++d) {
    const dc__token_t* at = dc__sema_cur(s);
    int64_t v = 0;
    if (!dc__sema_constant(s, name, &v)) return;
    if (v < 1 || v > 65536) {
      dc__sema_error(s, at, "%s: dimension %d is %lld (must be 1 to 65536)",
                     name, d, (long long)v);
      return;
    }
    out[d] = (uint32_t)v;
    if (!dc__sema_accept(s, d < 2 ? "," : ")")) {
      dc__sema_error(s, dc__sema_cur(s),
                     "%s takes three sizes (x, y, z), found '%s'", name,
                     dc__sema_spell(s, dc__sema_cur(s)));
      return;
    }
  }
}

static void parse_aligned(dc__sema_t* s, dc__specs_t* specs) {
  if (!dc__sema_accept(s, "(")) {
    specs->align = 16;  // the largest alignment of any type here
    return;
  }
  const dc__token_t* at = dc__sema_cur(s);
  int64_t v = 0;
  if (!dc__sema_constant(s, "aligned", &v)) return;
  if (v < 1 || v > 4096 || (v & (v - 1)) != 0) {
    dc__sema_error(s, at, "aligned(%lld): the alignment must be a power of "
                   "two from 1 to 4096", (long long)v);
    return;
  }
  specs->align = (uint32_t)v;
  dc__sema_expect(s, ")");
}

// One attribute of a list: a name and, for some, arguments.
static void parse_attribute(dc__sema_t* s, dc__specs_t* specs) {
  const dc__token_t* name = dc__sema_cur(s);
  if (name->kind != DC_TOK_IDENT) {
    dc__sema_error(s, name, "expected an attribute name before '%s'",
                   dc__sema_spell(s, name));
    return;
  }
  ++s->pos;
  if (dc__tok_is(name, "reqd_work_group_size")) {
    parse_group_size(s, "reqd_work_group_size", specs->reqd_group_size);
  } else if (dc__tok_is(name, "work_group_size_hint")) {
    parse_group_size(s, "work_group_size_hint", specs->group_size_hint);
  } else if (dc__tok_is(name, "vec_type_hint")) {
    if (!dc__sema_expect(s, "(")) return;
    const dc__ty_t* hint = dc__sema_type_name(s);
    if (hint && hint->kind != DC_TY_SCALAR && hint->kind != DC_TY_VECTOR) {
      dc__sema_error(s, name, "vec_type_hint takes a scalar or vector type, "
                     "not %s", dc__ty_name(s->arena, hint));
    }
    dc__sema_expect(s, ")");
  } else if (dc__tok_is(name, "aligned") || dc__tok_is(name, "__aligned__")) {
    parse_aligned(s, specs);
  } else if (dc__tok_is(name, "packed") || dc__tok_is(name, "__packed__")) {
    specs->packed = true;
  } else if (dc__tok_is(name, "endian")) {
    // endian(host) or endian(device) (6.11.3): the same on every device
    // the engine has (little-endian).
    if (!dc__sema_expect(s, "(")) return;
    const dc__token_t* which = dc__sema_cur(s);
    if (!dc__tok_is(which, "host") && !dc__tok_is(which, "device")) {
      dc__sema_error(s, which, "endian takes host or device");
      return;
    }
    ++s->pos;
    dc__sema_expect(s, ")");
  } else if (dc__tok_is(name, "always_inline") ||
             dc__tok_is(name, "noinline") ||
             dc__tok_is(name, "__always_inline__") ||
             dc__tok_is(name, "__noinline__")) {
    // inlining hints: the back ends decide
  } else {
    dc__sema_error(s, name, "unknown attribute '%s' (the kernel language "
                   "knows reqd_work_group_size, work_group_size_hint, "
                   "vec_type_hint, aligned, packed, endian, always_inline "
                   "and noinline)", dc__sema_spell(s, name));
  }
}

void dc__parse_attributes(dc__sema_t* s, dc__specs_t* specs) {
  while (!s->failed && dc__sema_at(s, "__attribute__")) {
    ++s->pos;
    if (!dc__sema_expect(s, "(") || !dc__sema_expect(s, "(")) return;
    while (!s->failed && !dc__sema_at(s, ")")) {
      parse_attribute(s, specs);
      if (!dc__sema_accept(s, ",")) break;
    }
    if (!dc__sema_expect(s, ")")) return;
    dc__sema_expect(s, ")");
  }
}

//===-- Records and enums -------------------------------------------------===//

static bool parse_fields(dc__sema_t* s, dc__record_t* r) {
  dc__field_t* fields = NULL;
  uint32_t count = 0, capacity = 0;
  while (!s->failed && !dc__sema_at(s, "}")) {
    if (dc__sema_cur(s)->kind == DC_TOK_EOF) {
      dc__sema_error(s, dc__sema_cur(s), "expected '}' to end the %s",
                     r->is_union ? "union" : "struct");
      return false;
    }
    dc__specs_t specs;
    const dc__token_t* first = dc__sema_cur(s);
    if (!dc__parse_specifiers(s, &specs)) return false;
    if (specs.is_kernel || specs.is_typedef || specs.is_static) {
      dc__sema_error(s, first, "a member of a %s cannot have a storage "
                     "class or 'kernel'",
                     r->is_union ? "union" : "struct");
      return false;
    }
    uint32_t shared_align = specs.align;  // before the type: every member
    do {
      uint32_t name = 0;
      const dc__ty_t* type = NULL;
      specs.align = shared_align;
      if (!dc__parse_declarator(s, &specs, false, &name, &type)) return false;
      const dc__token_t* at = &s->toks[name];
      // A pointer member may point into any address space; the member
      // itself lives where its record does.
      if (type->space != DC_ADDRESS_PRIVATE) {
        dc__sema_error(s, first, "member '%s' of a %s cannot have an address "
                       "space: it lives where the %s does",
                       dc__sema_spell(s, at), r->is_union ? "union" : "struct",
                       r->is_union ? "union" : "struct");
        return false;
      }
      dc__sema_note_name(s, at, DC_NAME_FIELD);
      if (dc__sema_at(s, ":")) {
        dc__sema_error(s, dc__sema_cur(s), "bit-fields are not supported "
                       "(OpenCL C 6.9)");
        return false;
      }
      dc__parse_attributes(s, &specs);
      if (dc__ty_size(type) == 0) {
        dc__sema_error(s, at, "member '%s' has incomplete type %s",
                       dc__sema_spell(s, at), dc__ty_name(s->arena, type));
        return false;
      }
      for (uint32_t i = 0; i < count; ++i) {
        if (strcmp(fields[i].name, dc__sema_spell(s, at)) == 0) {
          dc__sema_error(s, at, "duplicate member '%s'",
                         dc__sema_spell(s, at));
          return false;
        }
      }
      if (count == capacity) {
        capacity = capacity ? capacity * 2 : 8;
        dc__field_t* grown = dc__arena_alloc(s->arena,
                                             capacity * sizeof(*grown));
        if (grown == NULL) return false;
        if (count) memcpy(grown, fields, count * sizeof(*grown));
        fields = grown;
      }
      fields[count++] = (dc__field_t){.name = dc__sema_spell(s, at),
                                      .type = type,
                                      .align = specs.align,
                                      .line = at->line,
                                      .col = at->col};
    } while (dc__sema_accept(s, ","));
    if (!dc__sema_expect(s, ";")) return false;
  }
  if (count == 0) {
    dc__sema_error(s, dc__sema_cur(s), "a %s must have at least one member",
                   r->is_union ? "union" : "struct");
    return false;
  }
  r->fields = fields;
  r->field_count = count;
  return true;
}

// struct/union [attributes] [tag] [{ members } [attributes]]
static const dc__ty_t* parse_record(dc__sema_t* s, dc__specs_t* specs) {
  const dc__token_t* keyword = dc__sema_cur(s);
  bool is_union = dc__tok_is(keyword, "union");
  ++s->pos;
  dc__parse_attributes(s, specs);
  const dc__token_t* tag = NULL;
  if (dc__sema_cur(s)->kind == DC_TOK_IDENT) tag = &s->toks[s->pos++];
  if (tag) dc__sema_note_name(s, tag, DC_NAME_TAG);
  bool has_body = dc__sema_at(s, "{");
  if (tag == NULL && !has_body) {
    dc__sema_error(s, dc__sema_cur(s), "expected a name or '{' after '%s'",
                   is_union ? "union" : "struct");
    return NULL;
  }
  const dc__ty_t* type = tag ? dc__sema_find_tag(s, tag, has_body) : NULL;
  if (tag && !has_body && type == NULL) {
    type = dc__sema_find_tag(s, tag, false);
  }
  if (type != NULL && (type->kind != DC_TY_RECORD ||
                       type->record->is_union != is_union)) {
    dc__sema_error(s, tag, "'%s' was declared as another kind of tag",
                   dc__sema_spell(s, tag));
    return NULL;
  }
  if (type == NULL) {
    dc__record_t* r = dc__record_new(s->types, tag ? dc__sema_spell(s, tag)
                                                   : "", is_union);
    if (r == NULL) return NULL;
    r->line = keyword->line;
    r->col = keyword->col;
    type = dc__ty_record(s->types, r);
    if (type == NULL) return NULL;
    if (tag) dc__sema_add_tag(s, tag, type);
  }
  if (!has_body) return type;
  dc__record_t* r = type->record;
  if (r->is_complete) {
    dc__sema_error(s, tag, "redefinition of '%s %s' (first defined at line "
                   "%u)", is_union ? "union" : "struct",
                   dc__sema_spell(s, tag), r->line);
    return NULL;
  }
  ++s->pos;
  if (!parse_fields(s, r) || !dc__sema_expect(s, "}")) return NULL;
  dc__specs_t after = {0};
  dc__parse_attributes(s, &after);
  r->is_packed = specs->packed || after.packed;
  r->align_attr = specs->align > after.align ? specs->align : after.align;
  specs->packed = false;
  specs->align = 0;
  uint64_t bytes = 0;  // what the layout adds up (its sizes are 32-bit)
  for (uint32_t i = 0; i < r->field_count; ++i) {
    bytes += dc__ty_size(r->fields[i].type) + dc__field_align(r, &r->fields[i]);
  }
  if (bytes > DC_LIMIT_OBJECT_BYTES) {
    dc__sema_error(s, keyword, "%s too large: over the limit of %u bytes "
                   "for one object", is_union ? "union" : "struct",
                   DC_LIMIT_OBJECT_BYTES);
    return NULL;
  }
  dc__record_layout(r);
  return type;
}

static bool parse_enumerators(dc__sema_t* s) {
  int64_t next = 0;
  ++s->pos;  // '{'
  while (!s->failed && !dc__sema_at(s, "}")) {
    const dc__token_t* name = dc__sema_cur(s);
    if (name->kind != DC_TOK_IDENT) {
      dc__sema_error(s, name, "expected an enumerator name before '%s'",
                     dc__sema_spell(s, name));
      return false;
    }
    ++s->pos;
    if (dc__sema_accept(s, "=") && !dc__sema_constant(s, "an enumerator's "
                                                      "value", &next)) {
      return false;
    }
    if (next < INT32_MIN || next > INT32_MAX) {
      dc__sema_error(s, name, "the value of '%s' (%lld) does not fit in an "
                     "int", dc__sema_spell(s, name), (long long)next);
      return false;
    }
    dc__decl_t* d = dc__sema_declare(s, DC_DECL_ENUM_CONST, name,
                                     dc__ty_scalar(s->types, DC_SCALAR_INT));
    if (d == NULL) return false;
    d->value = next++;
    if (!dc__sema_accept(s, ",")) break;
  }
  return dc__sema_expect(s, "}");
}

// enum [tag] [{ A, B = 2, ... }]
static const dc__ty_t* parse_enum(dc__sema_t* s) {
  ++s->pos;
  const dc__token_t* tag = NULL;
  if (dc__sema_cur(s)->kind == DC_TOK_IDENT) tag = &s->toks[s->pos++];
  if (tag) dc__sema_note_name(s, tag, DC_NAME_TAG);
  bool has_body = dc__sema_at(s, "{");
  if (tag == NULL && !has_body) {
    dc__sema_error(s, dc__sema_cur(s), "expected a name or '{' after 'enum'");
    return NULL;
  }
  const dc__ty_t* type = tag ? dc__sema_find_tag(s, tag, has_body) : NULL;
  if (tag && !has_body && type == NULL) {
    dc__sema_error(s, tag, "unknown enum '%s'", dc__sema_spell(s, tag));
    return NULL;
  }
  if (type != NULL && type->kind != DC_TY_ENUM) {
    dc__sema_error(s, tag, "'%s' was declared as another kind of tag",
                   dc__sema_spell(s, tag));
    return NULL;
  }
  if (type == NULL) {
    dc__enum_t* e = dc__enum_new(s->types, tag ? dc__sema_spell(s, tag) : "");
    if (e == NULL) return NULL;
    type = dc__ty_enum(s->types, e);
    if (type == NULL) return NULL;
    if (tag) dc__sema_add_tag(s, tag, type);
  }
  if (!has_body) return type;
  if (type->enumeration->is_complete) {
    dc__sema_error(s, tag, "redefinition of 'enum %s'",
                   dc__sema_spell(s, tag));
    return NULL;
  }
  if (!parse_enumerators(s)) return NULL;
  type->enumeration->is_complete = true;
  return type;
}

//===-- Specifiers --------------------------------------------------------===//

// The parts of a type written with keywords: "unsigned long int".
typedef struct keywords_t {
  const dc__token_t* first;
  const char* base;   // "char", "short", "int", "long", or NULL
  bool is_unsigned;
  bool is_signed;
  int longs;
} keywords_t;

static dc__scalar_t keyword_scalar(const keywords_t* k) {
  bool u = k->is_unsigned;
  if (k->longs) return u ? DC_SCALAR_ULONG : DC_SCALAR_LONG;
  if (k->base && strcmp(k->base, "char") == 0) {
    return u ? DC_SCALAR_UCHAR : DC_SCALAR_CHAR;
  }
  if (k->base && strcmp(k->base, "short") == 0) {
    return u ? DC_SCALAR_USHORT : DC_SCALAR_SHORT;
  }
  return u ? DC_SCALAR_UINT : DC_SCALAR_INT;
}

// Reads one of the words of a keyword type; false if |t| is none.
static bool add_keyword(dc__sema_t* s, keywords_t* k, const dc__token_t* t,
                        bool has_other_type) {
  bool sign = dc__tok_is(t, "unsigned") || dc__tok_is(t, "signed");
  bool size = dc__tok_is(t, "char") || dc__tok_is(t, "short") ||
              dc__tok_is(t, "int") || dc__tok_is(t, "long");
  if (!sign && !size) return false;
  if (has_other_type) {
    dc__sema_error(s, t, "two types in one declaration ('%s' after another "
                   "type)", dc__sema_spell(s, t));
    return true;
  }
  if (k->first == NULL) k->first = t;
  if (sign) {
    bool u = dc__tok_is(t, "unsigned");
    if ((u && k->is_signed) || (!u && k->is_unsigned)) {
      dc__sema_error(s, t, "both 'signed' and 'unsigned' in one type");
    }
    if (u) k->is_unsigned = true;
    else k->is_signed = true;
  } else if (dc__tok_is(t, "long")) {
    if (++k->longs > 1) {
      dc__sema_error(s, t, "'long long' is not a type of OpenCL C; use "
                     "long (64 bits)");
    }
  } else if (dc__tok_is(t, "int")) {
    if (k->base && strcmp(k->base, "int") == 0) {
      dc__sema_error(s, t, "'int int' is not a type");
    }
    if (k->base == NULL) k->base = "int";
  } else {
    if (k->base && strcmp(k->base, "int") != 0) {
      dc__sema_error(s, t, "two types in one declaration");
    }
    k->base = dc__tok_is(t, "char") ? "char" : "short";
  }
  return true;
}

static bool apply_space(dc__sema_t* s, dc__specs_t* specs,
                        dc_address_space_t* space, const dc__token_t* t,
                        dc_address_space_t want) {
  if (specs->has_space && *space != want) {
    dc__sema_error(s, t, "conflicting address spaces");
    return false;
  }
  specs->has_space = true;
  *space = want;
  return true;
}

// Reads a qualifier or storage word at the cursor; false if it is none.
static bool parse_qualifier(dc__sema_t* s, dc__specs_t* specs,
                            unsigned* quals, dc_address_space_t* space) {
  const dc__token_t* t = dc__sema_cur(s);
  if (dc__tok_is(t, "__global") || dc__tok_is(t, "global")) {
    apply_space(s, specs, space, t, DC_ADDRESS_GLOBAL);
  } else if (dc__tok_is(t, "__local") || dc__tok_is(t, "local")) {
    apply_space(s, specs, space, t, DC_ADDRESS_LOCAL);
  } else if (dc__tok_is(t, "__constant") || dc__tok_is(t, "constant")) {
    apply_space(s, specs, space, t, DC_ADDRESS_CONSTANT);
  } else if (dc__tok_is(t, "__private") || dc__tok_is(t, "private")) {
    apply_space(s, specs, space, t, DC_ADDRESS_PRIVATE);
  } else if (dc__tok_is(t, "const")) {
    *quals |= DC_Q_CONST;
  } else if (dc__tok_is(t, "volatile")) {
    *quals |= DC_Q_VOLATILE;
  } else if (dc__tok_is(t, "restrict") || dc__tok_is(t, "__restrict")) {
    dc__sema_error(s, t, "'restrict' applies to pointers: write it after "
                   "the '*'");
  } else if (dc__tok_is(t, "__kernel") || dc__tok_is(t, "kernel")) {
    specs->is_kernel = true;
  } else if (dc__tok_is(t, "typedef")) {
    specs->is_typedef = true;
  } else if (dc__tok_is(t, "static")) {
    specs->is_static = true;
  } else if (dc__tok_is(t, "inline") || dc__tok_is(t, "__inline")) {
    // an inlining hint: the back ends decide
  } else {
    return false;
  }
  ++s->pos;
  return true;
}

// Reads a type word that is not a keyword combination: a scalar or
// vector name, event_t, a typedef name, struct, union or enum. NULL if
// the cursor holds none (without an error) or after an error.
static const dc__ty_t* parse_named_type(dc__sema_t* s, dc__specs_t* specs,
                                        bool* matched) {
  const dc__token_t* t = dc__sema_cur(s);
  dc__scalar_t sc;
  unsigned width;
  *matched = true;
  if (dc__tok_is(t, "struct") || dc__tok_is(t, "union")) {
    return parse_record(s, specs);
  }
  if (dc__tok_is(t, "enum")) return parse_enum(s);
  ++s->pos;
  if (vector_name(t, &sc, &width)) {
    return dc__ty_vector(s->types, sc, width);
  }
  if (dc__tok_is(t, "event_t")) return dc__ty_event(s->types);
  if (!dc__tok_is(t, "char") && !dc__tok_is(t, "short") &&
      !dc__tok_is(t, "int") && !dc__tok_is(t, "long") &&
      scalar_name(t, &sc)) {
    return dc__ty_scalar(s->types, sc);
  }
  dc__decl_t* d = dc__sema_lookup(s, t);
  if (d != NULL && d->kind == DC_DECL_TYPEDEF) {
    dc__sema_note_use(s, t, d);
    d->is_used = true;
    return d->type;
  }
  --s->pos;
  *matched = false;
  return NULL;
}

bool dc__parse_specifiers(dc__sema_t* s, dc__specs_t* specs) {
  memset(specs, 0, sizeof(*specs));
  unsigned quals = 0;
  dc_address_space_t space = DC_ADDRESS_PRIVATE;
  const dc__ty_t* type = NULL;
  keywords_t words = {0};
  while (!s->failed) {
    const dc__token_t* t = dc__sema_cur(s);
    const char* why = rejected_reason(t);
    if (why != NULL) {
      dc__sema_error(s, t, "%s", why);
      return false;
    }
    if (dc__tok_is(t, "__attribute__")) {
      dc__parse_attributes(s, specs);
      continue;
    }
    if (parse_qualifier(s, specs, &quals, &space)) continue;
    if (t->kind != DC_TOK_IDENT) break;
    if (add_keyword(s, &words, t, type != NULL)) {
      ++s->pos;
      continue;
    }
    if (type != NULL || words.first != NULL) break;  // the declarator
    bool matched = false;
    type = parse_named_type(s, specs, &matched);
    if (!matched) break;
    if (type == NULL) return false;
  }
  if (s->failed) return false;
  if (words.first != NULL) type = dc__ty_scalar(s->types,
                                                keyword_scalar(&words));
  if (type == NULL) {
    const dc__token_t* t = dc__sema_cur(s);
    if (t->kind == DC_TOK_IDENT) {
      dc__sema_error(s, t, "unknown type name '%s'", dc__sema_spell(s, t));
    } else {
      dc__sema_error(s, t, "expected a type before '%s'",
                     dc__sema_spell(s, t));
    }
    return false;
  }
  // A typedef's own qualifiers and space stay; the declaration adds its.
  quals |= type->quals;
  if (!specs->has_space) space = type->space;
  specs->type = dc__ty_qualified(s->types, type, quals, space);
  return specs->type != NULL;
}

//===-- Declarators -------------------------------------------------------===//

#define MAX_DIMENSIONS 8

// Reads "[N]" suffixes; a missing size is 0 (unknown), allowed only for
// the first dimension.
static bool parse_dimensions(dc__sema_t* s, uint32_t* dims, uint32_t* count) {
  *count = 0;
  while (dc__sema_at(s, "[")) {
    const dc__token_t* open = dc__sema_cur(s);
    ++s->pos;
    if (*count == MAX_DIMENSIONS) {
      dc__sema_error(s, open, "arrays have at most %d dimensions",
                     MAX_DIMENSIONS);
      return false;
    }
    int64_t n = 0;
    if (dc__sema_at(s, "]")) {
      if (*count > 0) {
        dc__sema_error(s, open, "only the first dimension of an array may "
                       "be left out");
        return false;
      }
    } else {
      const dc__token_t* at = dc__sema_cur(s);
      if (!dc__sema_constant(s, "an array size", &n)) return false;
      if (n <= 0 || n > (1 << 24)) {
        dc__sema_error(s, at, "array size %lld is out of range (1 to %d)",
                       (long long)n, 1 << 24);
        return false;
      }
    }
    dims[(*count)++] = (uint32_t)n;
    if (!dc__sema_expect(s, "]")) return false;
  }
  return true;
}

// Reads what may follow a '*': qualifiers of the pointer itself.
static bool parse_pointer_quals(dc__sema_t* s, unsigned* quals,
                                dc_address_space_t* space) {
  for (;;) {
    const dc__token_t* t = dc__sema_cur(s);
    if (dc__tok_is(t, "const")) *quals |= DC_Q_CONST;
    else if (dc__tok_is(t, "volatile")) *quals |= DC_Q_VOLATILE;
    else if (dc__tok_is(t, "restrict") || dc__tok_is(t, "__restrict"))
      *quals |= DC_Q_RESTRICT;
    else if (dc__tok_is(t, "__private") || dc__tok_is(t, "private"))
      *space = DC_ADDRESS_PRIVATE;
    else if (dc__tok_is(t, "__global") || dc__tok_is(t, "global") ||
             dc__tok_is(t, "__local") || dc__tok_is(t, "local") ||
             dc__tok_is(t, "__constant") || dc__tok_is(t, "constant")) {
      dc__sema_error(s, t, "a pointer variable lives in private memory: "
                     "write the address space of what it points to before "
                     "the '*'");
      return false;
    } else {
      return true;
    }
    ++s->pos;
  }
}

bool dc__parse_declarator(dc__sema_t* s, const dc__specs_t* specs,
                          bool abstract, uint32_t* out_name,
                          const dc__ty_t** out_type) {
  const dc__ty_t* type = specs->type;
  while (dc__sema_at(s, "*")) {
    ++s->pos;
    unsigned quals = 0;
    dc_address_space_t space = DC_ADDRESS_PRIVATE;
    if (!parse_pointer_quals(s, &quals, &space)) return false;
    type = dc__ty_qualified(s->types, dc__ty_pointer(s->types, type), quals,
                            space);
    if (type == NULL) return false;
  }
  const dc__token_t* t = dc__sema_cur(s);
  if (dc__tok_is(t, "(")) {
    dc__sema_error(s, t, "parenthesised declarators (pointers to arrays or "
                   "functions) are not supported");
    return false;
  }
  if (!abstract) {
    if (t->kind != DC_TOK_IDENT || dc__is_qualifier(t)) {
      dc__sema_error(s, t, "expected a name before '%s'",
                     dc__sema_spell(s, t));
      return false;
    }
    *out_name = s->pos++;
  }
  uint32_t dims[MAX_DIMENSIONS], count = 0;
  if (!parse_dimensions(s, dims, &count)) return false;
  for (uint32_t i = count; i-- > 0;) {
    if ((uint64_t)dims[i] * dc__ty_size(type) > DC_LIMIT_OBJECT_BYTES) {
      dc__sema_error(s, t, "array too large: %llu bytes, over the limit of "
                     "%u bytes for one object",
                     (unsigned long long)dims[i] * dc__ty_size(type),
                     DC_LIMIT_OBJECT_BYTES);
      return false;
    }
    type = dc__ty_array(s->types, type, dims[i]);
    if (type == NULL) return false;
  }
  *out_type = type;
  return true;
}

const dc__ty_t* dc__sema_type_name(dc__sema_t* s) {
  dc__specs_t specs;
  const dc__token_t* first = dc__sema_cur(s);
  if (!dc__parse_specifiers(s, &specs)) return NULL;
  if (specs.is_kernel || specs.is_typedef || specs.is_static) {
    dc__sema_error(s, first, "a type name cannot have 'kernel', 'typedef' "
                   "or 'static'");
    return NULL;
  }
  uint32_t name = 0;
  const dc__ty_t* type = NULL;
  if (!dc__parse_declarator(s, &specs, true, &name, &type)) return NULL;
  return type;
}

//===-- The old, flat form ------------------------------------------------===//

dc__type_t dc__legacy_type(const dc__ty_t* type) {
  dc__type_t out;
  memset(&out, 0, sizeof(out));
  out.vector_width = 1;
  const dc__ty_t* t = type;
  if (t->kind == DC_TY_ARRAY) {  // a parameter's array is a pointer
    ++out.pointer_depth;
    t = t->base;
  }
  while (t->kind == DC_TY_POINTER) {
    if (t->quals & DC_Q_RESTRICT) out.is_restrict = true;
    ++out.pointer_depth;
    t = t->base;
  }
  out.scalar = dc__ty_element(t);
  out.vector_width = t->kind == DC_TY_VECTOR ? t->width : 1;
  out.address_space = t->space;
  out.is_const = (t->quals & DC_Q_CONST) != 0;
  out.is_volatile = (t->quals & DC_Q_VOLATILE) != 0;
  return out;
}

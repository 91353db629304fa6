// cgen_type.c: the code generator's output, names and types.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cgen.h"

// The program's name as a string literal's contents.
static const char* escape_file(dc__arena_t* arena, const char* file) {
  size_t n = strlen(file);
  char* out = dc__arena_alloc(arena, 2 * n + 1);
  if (out == NULL) return "";
  char* o = out;
  for (const char* c = file; *c; ++c) {
    if (*c == '"' || *c == '\\') *o++ = '\\';
    *o++ = (*c == '\n') ? ' ' : *c;
  }
  *o = '\0';
  return out;
}

void dc__cgen_init(dc__cgen_t* g, dc__arena_t* arena, dc__diag_t* diag,
                   const dc__program_ast_t* ast,
                   const dc__cgen_hooks_t* hooks, dc__strbuf_t* out,
                   const char* file) {
  *g = (dc__cgen_t){.arena = arena, .diag = diag, .ast = ast, .hooks = hooks,
                    .out = out, .file = escape_file(arena, file)};
}

void dc__cgen_fail(dc__cgen_t* g, const dc__token_t* at, const char* message) {
  if (!g->failed) dc__diag_error(g->diag, at->line, at->col, "%s", message);
  g->failed = true;
}

void dc__cgen_puts(dc__cgen_t* g, const char* text) {
  dc__strbuf_puts(g->out, text);
}

void dc__cgen_printf(dc__cgen_t* g, const char* format, ...) {
  va_list args;
  va_start(args, format);
  dc__strbuf_vprintf(g->out, format, args);
  va_end(args);
}

void dc__cgen_at_line(dc__cgen_t* g, uint32_t line) {
  if (line == g->line || line == 0) return;
  dc__cgen_printf(g, "\n#line %u \"%s\"\n", line, g->file);
  g->line = line;
}

void dc__cgen_new_line(dc__cgen_t* g) { g->line = 0; }

//===-- Names -------------------------------------------------------------===//

const char* dc__cgen_name(dc__cgen_t* g, const dc__decl_t* d) {
  const char* name = dc__arena_printf(g->arena, DC_USER_PREFIX "%s", d->name);
  return name ? name : "";
}

bool dc__cgen_is_local_pointer(const dc__decl_t* d) {
  return d->type->kind == DC_TY_POINTER &&
         d->type->base->space == DC_ADDRESS_LOCAL;
}

//===-- Types -------------------------------------------------------------===//

static const char* scalar_spelling(dc__scalar_t scalar) {
  switch (scalar) {
    case DC_SCALAR_CHAR:
      return "dc_char";  // OpenCL's char is signed; C's may not be
    default:
      return dc__scalar_name(scalar);
  }
}

// The type specifier of a type that is neither a pointer nor an array.
static const char* specifier(dc__cgen_t* g, const dc__ty_t* t) {
  switch (t->kind) {
    case DC_TY_VOID:
      return "void";
    case DC_TY_SCALAR:
      return scalar_spelling(t->scalar);
    case DC_TY_VECTOR:
      return dc__arena_printf(g->arena, "%s%s%u", g->hooks->vector_prefix,
                              dc__scalar_name(t->scalar), t->width);
    case DC_TY_RECORD:
      return dc__arena_printf(g->arena, "%s dc_r%u",
                              t->record->is_union ? "union" : "struct",
                              t->record->id);
    case DC_TY_ENUM:
      return "int";  // an enum's values are ints (types.c lays it out so)
    case DC_TY_EVENT:
      return "event_t";
    case DC_TY_POINTER:
      return "dc_fptr";  // checked mode's fat pointer (cgen_checked.c)
    case DC_TY_ARRAY:
      break;
  }
  return "void";
}

// The qualifiers written for an object of |t|: its own, with const for
// __constant memory, less |drop|; in OpenCL C with its address space when
// |pointee| (private, OpenCL's default, is not written).
static const char* qualifiers(dc__cgen_t* g, const dc__ty_t* t, unsigned drop,
                              bool pointee) {
  unsigned q = t->quals;
  if (t->space == DC_ADDRESS_CONSTANT) q |= DC_Q_CONST;
  q &= ~drop;
  static const char* const kC[] = {"",
                                   "const ",
                                   "volatile ",
                                   "const volatile "};
  const char* text = kC[q & (DC_Q_CONST | DC_Q_VOLATILE)];
  if (!g->hooks->opencl || !pointee) return text;
  static const char* const kSpace[] = {
      [DC_ADDRESS_PRIVATE] = "",
      [DC_ADDRESS_GLOBAL] = "__global ",
      [DC_ADDRESS_CONSTANT] = "__constant ",
      [DC_ADDRESS_LOCAL] = "__local ",
  };
  const char* space = kSpace[t->space];
  if (*space == '\0') return text;
  const char* both = dc__arena_printf(g->arena, "%s%s", text, space);
  return both ? both : text;
}

const char* dc__cgen_declaration(dc__cgen_t* g, const dc__ty_t* type,
                                 const char* name, unsigned drop) {
  const char* inner = name ? name : "";
  const dc__ty_t* t = type;
  // Whether the type being written is pointed to (its space is written).
  bool pointee = (drop & DC__CGEN_POINTEE) != 0;
  // Walk from the declared name outwards: pointers prefix '*', arrays
  // suffix "[n]" (parenthesised when a pointer holds an array).
  bool last_pointer = false;
  while (t->kind == DC_TY_POINTER || t->kind == DC_TY_ARRAY) {
    if (t->kind == DC_TY_POINTER && g->checked) break;  // a dc_fptr
    if (t->kind == DC_TY_POINTER) {
      const char* restrict_word =
          (t->quals & DC_Q_RESTRICT)
              ? (g->hooks->cxx ? " __restrict__" : " restrict")
              : "";
      inner = dc__arena_printf(g->arena, "*%s %s%s", restrict_word,
                               qualifiers(g, t, drop, pointee), inner);
      drop = 0;  // qualifiers of what it points to are kept
      pointee = true;
      last_pointer = true;
    } else {
      if (last_pointer) inner = dc__arena_printf(g->arena, "(%s)", inner);
      inner = t->length ? dc__arena_printf(g->arena, "%s[%u]", inner,
                                           t->length)
                        : dc__arena_printf(g->arena, "%s[]", inner);
      last_pointer = false;
    }
    if (inner == NULL) return "";
    t = t->base;
  }
  const char* text = dc__arena_printf(g->arena, "%s%s%s%s",
                                      qualifiers(g, t, drop, pointee),
                                      specifier(g, t),
                                      *inner ? " " : "", inner);
  return text ? text : "";
}

//===-- Records -----------------------------------------------------------===//

// The record |t| holds by value (through arrays), or NULL.
static const dc__record_t* held_record(const dc__ty_t* t) {
  while (t->kind == DC_TY_ARRAY) t = t->base;
  return t->kind == DC_TY_RECORD ? t->record : NULL;
}

static void define_record(dc__cgen_t* g, const dc__record_t* r,
                          uint8_t* state);

static void define_fields(dc__cgen_t* g, const dc__record_t* r,
                          uint8_t* state) {
  for (uint32_t i = 0; i < r->field_count; ++i) {
    const dc__record_t* inner = held_record(r->fields[i].type);
    if (inner != NULL) define_record(g, inner, state);
  }
}

// Writes |r| after the records it holds; |state| (by record id) marks
// those written (2) and in progress (1).
static void define_record(dc__cgen_t* g, const dc__record_t* r,
                          uint8_t* state) {
  if (state[r->id] != 0 || !r->is_complete) return;
  state[r->id] = 1;
  define_fields(g, r, state);
  state[r->id] = 2;
  const char* kind = r->is_union ? "union" : "struct";
  // Attributes go after the keyword, where both gcc and NVRTC honour
  // them (NVRTC ignores them after the closing brace).
  dc__cgen_printf(g, "\n%s", kind);
  if (r->is_packed) dc__cgen_puts(g, " __attribute__((packed))");
  if (r->align_attr != 0) {
    dc__cgen_printf(g, g->hooks->cxx ? " alignas(%u)"
                                     : " __attribute__((aligned(%u)))",
                    r->align_attr);
  }
  dc__cgen_printf(g, " dc_r%u {", r->id);
  for (uint32_t i = 0; i < r->field_count; ++i) {
    const dc__field_t* f = &r->fields[i];
    const char* name = dc__arena_printf(g->arena, DC_USER_PREFIX "%s",
                                        f->name);
    // Alignment as the analysis laid the record out (types.c), which the
    // host sees; the preludes' own types may be aligned less.
    if (!r->is_packed || f->align != 0) {
      dc__cgen_printf(g, " %s(%u)", g->hooks->cxx ? "alignas" : "_Alignas",
                      dc__field_align(r, f));
    }
    dc__cgen_printf(g, " %s;",
                    dc__cgen_declaration(g, f->type, name ? name : "", 0));
  }
  dc__cgen_puts(g, " };");
  // A layout that differs from the analysis's would pass data the host
  // laid out one way to code that reads it another: fail the compile.
  const char* assert_word = g->hooks->cxx ? "static_assert" : "_Static_assert";
  const char* align_word = g->hooks->cxx ? "alignof" : "_Alignof";
  dc__cgen_printf(g,
                  "\n%s(sizeof(%s dc_r%u) == %u && %s(%s dc_r%u) == %u,"
                  " \"layout of dc_r%u\");",
                  assert_word, kind, r->id, r->size, align_word, kind, r->id,
                  r->align, r->id);
  // NVRTC has no __builtin_offsetof; the fields are aligned explicitly,
  // so a matching size and alignment there is the same layout.
  for (uint32_t i = 0; i < r->field_count && !r->is_union && !g->hooks->cxx;
       ++i) {
    dc__cgen_printf(g,
                    "\n%s(__builtin_offsetof(%s dc_r%u, " DC_USER_PREFIX
                    "%s) == %u, \"layout of dc_r%u\");",
                    assert_word, kind, r->id, r->fields[i].name,
                    r->fields[i].offset, r->id);
  }
}

void dc__cgen_records(dc__cgen_t* g) {
  if (g->ast->types == NULL) return;
  uint32_t count;
  dc__record_t* const* records = dc__types_records(g->ast->types, &count);
  uint32_t max_id = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (records[i]->id > max_id) max_id = records[i]->id;
    // Declared first, so that pointers to any of them can be written.
    dc__cgen_printf(g, "\n%s dc_r%u;",
                    records[i]->is_union ? "union" : "struct", records[i]->id);
  }
  uint8_t* state = dc__arena_zalloc(g->arena, max_id + 1, 1);
  if (state == NULL) return;  // the arena reports it
  for (uint32_t i = 0; i < count; ++i) define_record(g, records[i], state);
  dc__cgen_new_line(g);
}

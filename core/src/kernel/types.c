// types.c: interned OpenCL C types and their layout.
// SPDX-License-Identifier: MIT
#include "types.h"

#include <string.h>

// Interning: an open hash table keyed by every field of dc__ty_t that makes
// a type what it is. Compiles see a few hundred types, so a small table
// that doubles when half full is enough.
struct dc__types_t {
  dc__arena_t* arena;
  const dc__ty_t** slots;
  uint32_t capacity;  // a power of two
  uint32_t count;
  uint32_t next_id;   // for records and enums
  dc__record_t** records;  // in the order they were declared
  uint32_t record_count;
  uint32_t record_capacity;
};

dc__types_t* dc__types_new(dc__arena_t* arena) {
  dc__types_t* types = dc__arena_zalloc(arena, 1, sizeof(*types));
  if (types == NULL) return NULL;
  types->arena = arena;
  types->capacity = 256;
  types->slots = dc__arena_zalloc(arena, types->capacity, sizeof(void*));
  return types->slots ? types : NULL;
}

static uint64_t hash_key(const dc__ty_t* k) {
  uint64_t h = 1469598103934665603ull;
  uint64_t parts[] = {
      (uint64_t)k->kind,   (uint64_t)k->scalar, k->width,
      k->quals,            (uint64_t)k->space,  (uint64_t)(uintptr_t)k->base,
      k->length,           (uint64_t)(uintptr_t)k->record,
      (uint64_t)(uintptr_t)k->enumeration,
  };
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    h = (h ^ parts[i]) * 1099511628211ull;
  }
  return h ^ (h >> 29);
}

static bool same_key(const dc__ty_t* a, const dc__ty_t* b) {
  return a->kind == b->kind && a->scalar == b->scalar &&
         a->width == b->width && a->quals == b->quals &&
         a->space == b->space && a->base == b->base &&
         a->length == b->length && a->record == b->record &&
         a->enumeration == b->enumeration;
}

static bool grow(dc__types_t* types) {
  uint32_t capacity = types->capacity * 2;
  const dc__ty_t** slots = dc__arena_zalloc(types->arena, capacity,
                                            sizeof(void*));
  if (slots == NULL) return false;
  for (uint32_t i = 0; i < types->capacity; ++i) {
    const dc__ty_t* t = types->slots[i];
    if (t == NULL) continue;
    uint32_t at = (uint32_t)hash_key(t) & (capacity - 1);
    while (slots[at] != NULL) at = (at + 1) & (capacity - 1);
    slots[at] = t;
  }
  types->slots = slots;
  types->capacity = capacity;
  return true;
}

static const dc__ty_t* intern(dc__types_t* types, const dc__ty_t* key);

// The unqualified form of |key|, itself interned.
static const dc__ty_t* unqualified_of(dc__types_t* types, const dc__ty_t* key) {
  if (key->quals == 0 && key->space == DC_ADDRESS_PRIVATE) return NULL;
  dc__ty_t plain = *key;
  plain.quals = 0;
  plain.space = DC_ADDRESS_PRIVATE;
  plain.unqualified = NULL;
  if (plain.kind == DC_TY_ARRAY && plain.base != NULL) {
    plain.base = plain.base->unqualified;
  }
  return intern(types, &plain);
}

static const dc__ty_t* intern(dc__types_t* types, const dc__ty_t* key) {
  if (types == NULL) return NULL;
  uint32_t mask = types->capacity - 1;
  uint32_t at = (uint32_t)hash_key(key) & mask;
  for (const dc__ty_t* t; (t = types->slots[at]) != NULL;
       at = (at + 1) & mask) {
    if (same_key(t, key)) return t;
  }
  const dc__ty_t* plain = unqualified_of(types, key);
  if (plain == NULL && (key->quals || key->space)) return NULL;
  if (types->count + 1 > types->capacity / 2) {
    if (!grow(types)) return NULL;
    return intern(types, key);
  }
  dc__ty_t* t = dc__arena_alloc(types->arena, sizeof(*t));
  if (t == NULL) return NULL;
  *t = *key;
  t->unqualified = plain ? plain : t;
  // unqualified_of may have grown the table: find a free slot anew.
  mask = types->capacity - 1;
  at = (uint32_t)hash_key(key) & mask;
  while (types->slots[at] != NULL) at = (at + 1) & mask;
  types->slots[at] = t;
  ++types->count;
  return t;
}

static dc__ty_t key_of(dc__ty_kind_t kind) {
  dc__ty_t k;
  memset(&k, 0, sizeof(k));
  k.kind = kind;
  k.width = 1;
  return k;
}

const dc__ty_t* dc__ty_void(dc__types_t* types) {
  dc__ty_t k = key_of(DC_TY_VOID);
  k.scalar = DC_SCALAR_VOID;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_scalar(dc__types_t* types, dc__scalar_t scalar) {
  if (scalar == DC_SCALAR_VOID) return dc__ty_void(types);
  dc__ty_t k = key_of(DC_TY_SCALAR);
  k.scalar = scalar;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_vector(dc__types_t* types, dc__scalar_t scalar,
                              unsigned width) {
  if (width <= 1) return dc__ty_scalar(types, scalar);
  dc__ty_t k = key_of(DC_TY_VECTOR);
  k.scalar = scalar;
  k.width = (uint8_t)width;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_pointer(dc__types_t* types, const dc__ty_t* pointee) {
  if (pointee == NULL) return NULL;
  dc__ty_t k = key_of(DC_TY_POINTER);
  k.base = pointee;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_array(dc__types_t* types, const dc__ty_t* element,
                             uint32_t length) {
  if (element == NULL) return NULL;
  dc__ty_t k = key_of(DC_TY_ARRAY);
  k.base = element;
  k.length = length;
  k.quals = element->quals;
  k.space = element->space;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_record(dc__types_t* types, dc__record_t* record) {
  dc__ty_t k = key_of(DC_TY_RECORD);
  k.record = record;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_enum(dc__types_t* types, dc__enum_t* enumeration) {
  dc__ty_t k = key_of(DC_TY_ENUM);
  k.enumeration = enumeration;
  k.scalar = DC_SCALAR_INT;
  return intern(types, &k);
}

const dc__ty_t* dc__ty_event(dc__types_t* types) {
  return intern(types, &(dc__ty_t){.kind = DC_TY_EVENT, .width = 1});
}

const dc__ty_t* dc__ty_qualified(dc__types_t* types, const dc__ty_t* type,
                                 unsigned quals, dc_address_space_t space) {
  if (type == NULL) return NULL;
  dc__ty_t k = *type;
  k.unqualified = NULL;
  k.quals = (uint8_t)quals;
  k.space = space;
  if (k.kind == DC_TY_ARRAY) {
    k.base = dc__ty_qualified(types, type->base, quals, space);
    if (k.base == NULL) return NULL;
  }
  return intern(types, &k);
}

dc__record_t* dc__record_new(dc__types_t* types, const char* tag,
                             bool is_union) {
  dc__record_t* r = dc__arena_zalloc(types->arena, 1, sizeof(*r));
  if (r == NULL) return NULL;
  r->tag = tag ? tag : "";
  r->id = ++types->next_id;
  r->is_union = is_union;
  if (types->record_count == types->record_capacity) {
    uint32_t capacity = types->record_capacity ? 2 * types->record_capacity
                                               : 16;
    dc__record_t** grown =
        dc__arena_alloc(types->arena, capacity * sizeof(*grown));
    if (grown == NULL) return NULL;
    if (types->record_count > 0) {
      memcpy(grown, types->records, types->record_count * sizeof(*grown));
    }
    types->records = grown;
    types->record_capacity = capacity;
  }
  types->records[types->record_count++] = r;
  return r;
}

dc__record_t* const* dc__types_records(const dc__types_t* types,
                                       uint32_t* count) {
  *count = types->record_count;
  return types->records;
}

dc__enum_t* dc__enum_new(dc__types_t* types, const char* tag) {
  dc__enum_t* e = dc__arena_zalloc(types->arena, 1, sizeof(*e));
  if (e == NULL) return NULL;
  e->tag = tag ? tag : "";
  e->id = ++types->next_id;
  return e;
}

static uint32_t round_up(uint32_t n, uint32_t align) {
  return align ? (n + align - 1) / align * align : n;
}

uint32_t dc__field_align(const dc__record_t* record, const dc__field_t* f) {
  uint32_t a = record->is_packed ? 1 : dc__ty_align(f->type);
  return f->align > a ? f->align : a;
}

void dc__record_layout(dc__record_t* r) {
  uint32_t offset = 0, size = 0, align = 1;
  for (uint32_t i = 0; i < r->field_count; ++i) {
    dc__field_t* f = &r->fields[i];
    uint32_t a = dc__field_align(r, f);
    if (a > align) align = a;
    if (r->is_union) {
      f->offset = 0;
      if (dc__ty_size(f->type) > size) size = dc__ty_size(f->type);
    } else {
      f->offset = round_up(offset, a);
      offset = f->offset + dc__ty_size(f->type);
      size = offset;
    }
  }
  if (r->align_attr > align) align = r->align_attr;
  r->align = align;
  r->size = round_up(size, align);
  r->is_complete = true;
}

const dc__field_t* dc__record_field(const dc__record_t* r, const char* name,
                                    uint32_t length) {
  for (uint32_t i = 0; i < r->field_count; ++i) {
    const char* n = r->fields[i].name;
    if (strlen(n) == length && memcmp(n, name, length) == 0) {
      return &r->fields[i];
    }
  }
  return NULL;
}

static const char* arg_flaw(dc__arena_t* arena, const dc__ty_t* t,
                            const char* path, const dc__ty_t** out_type) {
  for (; t->kind == DC_TY_ARRAY; t = t->base) {
    path = dc__arena_printf(arena, "%s[0]", path);
    if (path == NULL) return NULL;  // out of memory: the arena says so
  }
  *out_type = t;
  switch (t->kind) {
    case DC_TY_POINTER:
    case DC_TY_EVENT:
      return path;
    case DC_TY_SCALAR:
      return t->scalar == DC_SCALAR_BOOL || t->scalar == DC_SCALAR_SIZE_T ||
                     t->scalar == DC_SCALAR_PTRDIFF_T
                 ? path
                 : NULL;
    case DC_TY_RECORD:
      for (uint32_t i = 0; i < t->record->field_count; ++i) {
        const dc__field_t* f = &t->record->fields[i];
        const char* inner = dc__arena_printf(arena, "%s%s%s", path,
                                             *path ? "." : "", f->name);
        if (inner == NULL) return NULL;
        const char* found = arg_flaw(arena, f->type, inner, out_type);
        if (found != NULL) return found;
      }
      return NULL;
    default:
      return NULL;
  }
}

const char* dc__record_arg_flaw(dc__arena_t* arena, const dc__ty_t* type,
                                const dc__ty_t** out_type) {
  return arg_flaw(arena, type, "", out_type);
}

//===-- Predicates --------------------------------------------------------===//

bool dc__ty_is_integer(const dc__ty_t* t) {
  if (t->kind == DC_TY_ENUM) return true;
  return t->kind == DC_TY_SCALAR && t->scalar != DC_SCALAR_FLOAT &&
         t->scalar != DC_SCALAR_DOUBLE;
}

bool dc__ty_is_floating(const dc__ty_t* t) {
  return t->kind == DC_TY_SCALAR &&
         (t->scalar == DC_SCALAR_FLOAT || t->scalar == DC_SCALAR_DOUBLE);
}

bool dc__ty_is_arithmetic(const dc__ty_t* t) {
  return t->kind == DC_TY_SCALAR || t->kind == DC_TY_ENUM;
}

bool dc__ty_is_scalar(const dc__ty_t* t) {
  return dc__ty_is_arithmetic(t) || t->kind == DC_TY_POINTER;
}

bool dc__ty_is_signed(const dc__ty_t* t) {
  switch (dc__ty_element(t)) {
    case DC_SCALAR_CHAR:
    case DC_SCALAR_SHORT:
    case DC_SCALAR_INT:
    case DC_SCALAR_LONG:
    case DC_SCALAR_PTRDIFF_T:
    case DC_SCALAR_FLOAT:
    case DC_SCALAR_DOUBLE:
      return true;
    default:
      return false;
  }
}

bool dc__ty_same_unqualified(const dc__ty_t* a, const dc__ty_t* b) {
  return a->unqualified == b->unqualified;
}

dc__scalar_t dc__ty_element(const dc__ty_t* t) {
  if (t->kind == DC_TY_ENUM) return DC_SCALAR_INT;
  if (t->kind == DC_TY_SCALAR || t->kind == DC_TY_VECTOR) return t->scalar;
  return DC_SCALAR_VOID;
}

//===-- Layout ------------------------------------------------------------===//

uint32_t dc__scalar_size(dc__scalar_t scalar) {
  switch (scalar) {
    case DC_SCALAR_VOID: return 0;
    case DC_SCALAR_BOOL:
    case DC_SCALAR_CHAR:
    case DC_SCALAR_UCHAR: return 1;
    case DC_SCALAR_SHORT:
    case DC_SCALAR_USHORT: return 2;
    case DC_SCALAR_INT:
    case DC_SCALAR_UINT:
    case DC_SCALAR_FLOAT: return 4;
    default: return 8;
  }
}

uint32_t dc__ty_size(const dc__ty_t* t) {
  switch (t->kind) {
    case DC_TY_SCALAR: return dc__scalar_size(t->scalar);
    case DC_TY_ENUM: return 4;
    case DC_TY_VECTOR:
      return dc__scalar_size(t->scalar) * (t->width == 3 ? 4u : t->width);
    case DC_TY_POINTER:
    case DC_TY_EVENT: return 8;
    case DC_TY_ARRAY: return t->length * dc__ty_size(t->base);
    case DC_TY_RECORD: return t->record->is_complete ? t->record->size : 0;
    default: return 0;
  }
}

uint32_t dc__ty_align(const dc__ty_t* t) {
  switch (t->kind) {
    case DC_TY_ARRAY: return dc__ty_align(t->base);
    case DC_TY_RECORD: return t->record->is_complete ? t->record->align : 0;
    default: return dc__ty_size(t);  // vectors align to their size
  }
}

//===-- Names -------------------------------------------------------------===//

const char* dc__scalar_name(dc__scalar_t s) {
  static const char* const kNames[] = {
      [DC_SCALAR_VOID] = "void",     [DC_SCALAR_BOOL] = "bool",
      [DC_SCALAR_CHAR] = "char",     [DC_SCALAR_UCHAR] = "uchar",
      [DC_SCALAR_SHORT] = "short",   [DC_SCALAR_USHORT] = "ushort",
      [DC_SCALAR_INT] = "int",       [DC_SCALAR_UINT] = "uint",
      [DC_SCALAR_LONG] = "long",     [DC_SCALAR_ULONG] = "ulong",
      [DC_SCALAR_FLOAT] = "float",   [DC_SCALAR_DOUBLE] = "double",
      [DC_SCALAR_SIZE_T] = "size_t", [DC_SCALAR_PTRDIFF_T] = "ptrdiff_t",
  };
  return kNames[s];
}

static const char* prefix_of(dc__arena_t* arena, const dc__ty_t* t) {
  static const char* const kSpaces[] = {
      [DC_ADDRESS_PRIVATE] = "",
      [DC_ADDRESS_GLOBAL] = "__global ",
      [DC_ADDRESS_CONSTANT] = "__constant ",
      [DC_ADDRESS_LOCAL] = "__local ",
  };
  return dc__arena_printf(arena, "%s%s%s", kSpaces[t->space],
                          (t->quals & DC_Q_CONST) ? "const " : "",
                          (t->quals & DC_Q_VOLATILE) ? "volatile " : "");
}

const char* dc__ty_name(dc__arena_t* arena, const dc__ty_t* t) {
  if (t == NULL) return "<error>";
  const char* prefix = prefix_of(arena, t);
  switch (t->kind) {
    case DC_TY_VOID:
    case DC_TY_SCALAR:
      return dc__arena_printf(arena, "%s%s", prefix, dc__scalar_name(t->scalar));
    case DC_TY_VECTOR:
      return dc__arena_printf(arena, "%s%s%u", prefix, dc__scalar_name(t->scalar),
                              t->width);
    case DC_TY_POINTER:
      return dc__arena_printf(arena, "%s*%s", dc__ty_name(arena, t->base),
                              (t->quals & DC_Q_CONST) ? " const" : "");
    case DC_TY_ARRAY: {
      // The dimensions read outward in: int[2][3] is 2 arrays of int[3].
      const dc__ty_t* element = t;
      const char* dims = "";
      for (; element->kind == DC_TY_ARRAY; element = element->base) {
        dims = element->length
                   ? dc__arena_printf(arena, "%s[%u]", dims, element->length)
                   : dc__arena_printf(arena, "%s[]", dims);
      }
      return dc__arena_printf(arena, "%s%s", dc__ty_name(arena, element),
                              dims);
    }
    case DC_TY_RECORD:
      return dc__arena_printf(arena, "%s%s %s", prefix,
                              t->record->is_union ? "union" : "struct",
                              t->record->tag[0] ? t->record->tag
                                                : "<anonymous>");
    case DC_TY_ENUM:
      return dc__arena_printf(arena, "%senum %s", prefix,
                              t->enumeration->tag[0] ? t->enumeration->tag
                                                     : "<anonymous>");
    case DC_TY_EVENT:
      return dc__arena_printf(arena, "%sevent_t", prefix);
  }
  return "<error>";
}

// sema_init.c: initialisers (C99 6.7.8, which OpenCL C keeps) and the
// vector literals of OpenCL C 6.1.6, both values built from parts.
//
// A braced list becomes a DC_EXPR_INIT_LIST whose arguments are the slots
// of the object in order: an array's elements, a struct's members (every
// member has a slot), a union's one member (|field|). A NULL argument, and
// for an array every slot at or past |arg_count|, is zero-initialised.
// Braces may be elided as C allows (an inner aggregate or vector then
// takes as many of the list's elements as it needs); designators
// ('.member =' and '[index] =') are taken one level deep.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "sema_internal.h"

//===-- Vector literals ---------------------------------------------------===//

// One part of a vector literal as a value of |element| or of a vector of
// it; *lanes grows by its components. NULL after an error.
static dc__expr_t* vector_part(dc__sema_t* s, const dc__ty_t* type,
                               dc__expr_t* part, uint32_t* lanes,
                               const char* what) {
  part = dc__sema_rvalue(s, part);
  if (part == NULL) return NULL;
  const dc__ty_t* t = part->type;
  if (dc__ty_is_arithmetic(t)) {
    *lanes += 1;
    return dc__sema_arith(s, part, dc__sema_scalar(s, type->scalar), true);
  }
  if (t->kind == DC_TY_VECTOR && t->scalar == type->scalar) {
    *lanes += t->width;
    return part;
  }
  const char* hint =
      t->kind == DC_TY_VECTOR
          ? dc__arena_printf(s->arena, ": convert it with convert_%s%u()",
                             dc__sema_ty(s, dc__sema_scalar(s, type->scalar)),
                             t->width)
          : "";
  dc__sema_error(s, part->token, "a %s of %s cannot take a '%s'%s", what,
                 dc__sema_ty(s, type), dc__sema_ty(s, t), hint);
  return NULL;
}

dc__expr_t* dc__sema_vector_parts(dc__sema_t* s, const dc__ty_t* type,
                                  dc__expr_t** parts, uint32_t count,
                                  const dc__token_t* where, const char* what) {
  uint32_t lanes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    parts[i] = vector_part(s, type, parts[i], &lanes, what);
    if (parts[i] == NULL) return NULL;
  }
  if (lanes != type->width) {
    dc__sema_error(s, where, "the %s has %u component%s, but %s has %u",
                   what, lanes, lanes == 1 ? "" : "s", dc__sema_ty(s, type),
                   type->width);
    return NULL;
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_VECTOR, type->unqualified, where);
  if (e == NULL) return NULL;
  e->args = parts;
  e->arg_count = count;
  return e;
}

//===-- Slots -------------------------------------------------------------===//

// The slots of an aggregate being initialised, grown in the arena.
typedef struct slots_t {
  dc__expr_t** items;
  uint32_t count;     // one past the highest slot set
  uint32_t capacity;
} slots_t;

static bool slots_reserve(dc__sema_t* s, slots_t* a, uint32_t n,
                          const dc__token_t* where) {
  if (n <= a->capacity) return true;
  uint32_t capacity = a->capacity ? a->capacity : 8;
  while (capacity < n) capacity *= 2;
  dc__expr_t** items = dc__arena_zalloc(s->arena, capacity, sizeof(*items));
  if (items == NULL) {
    dc__sema_error(s, where, "out of memory while compiling");
    return false;
  }
  if (a->count) memcpy(items, a->items, a->count * sizeof(*items));
  a->items = items;
  a->capacity = capacity;
  return true;
}

static bool slots_put(dc__sema_t* s, slots_t* a, uint32_t index,
                      dc__expr_t* e) {
  if (!slots_reserve(s, a, index + 1, e->token)) return false;
  a->items[index] = e;  // a later designator may override an earlier one
  if (index >= a->count) a->count = index + 1;
  return true;
}

//===-- Aggregates --------------------------------------------------------===//

// An array, struct or union being initialised.
typedef struct aggregate_t {
  const dc__ty_t* type;
  uint32_t limit;             // how many slots it has
  const dc__field_t* field;   // a union's initialised member
  slots_t slots;
} aggregate_t;

static bool is_aggregate(const dc__ty_t* t) {
  return t->kind == DC_TY_ARRAY || t->kind == DC_TY_RECORD;
}

// Starts initialising |type|; only the declared object itself (|top|) may
// be an array of unknown size, which its initialiser completes.
static bool aggregate_begin(dc__sema_t* s, aggregate_t* a,
                            const dc__ty_t* type, bool top,
                            const dc__token_t* where) {
  memset(a, 0, sizeof(*a));
  a->type = type;
  bool unsized = type->kind == DC_TY_ARRAY && type->length == 0;
  bool complete = unsized ? dc__sema_is_complete(type->base)
                          : dc__sema_is_complete(type);
  if (!complete || (unsized && !top)) {
    dc__sema_error(s, where, "cannot initialise an object of incomplete type "
                             "'%s'", dc__sema_ty(s, type));
    return false;
  }
  if (type->kind == DC_TY_ARRAY) {
    a->limit = unsized || type->length > DC_LIMIT_INIT_SLOTS ? DC_LIMIT_INIT_SLOTS
                                                        : type->length;
  } else if (type->record->is_union) {
    a->limit = 1;
    a->field = type->record->field_count ? &type->record->fields[0] : NULL;
  } else {
    a->limit = type->record->field_count;
  }
  return true;
}

// The type of slot |i| of |a|.
static const dc__ty_t* slot_type(const aggregate_t* a, uint32_t i) {
  if (a->type->kind == DC_TY_ARRAY) return a->type->base;
  if (a->field != NULL) return a->field->type;
  return a->type->record->fields[i].type;
}

// The INIT_LIST of |a|, completing an array of unknown size.
static dc__expr_t* aggregate_end(dc__sema_t* s, aggregate_t* a,
                                 const dc__token_t* where) {
  const dc__ty_t* type = a->type;
  if (type->kind == DC_TY_ARRAY && type->length == 0) {
    if (a->slots.count == 0) {
      dc__sema_error(s, where, "an array of unknown size needs at least one "
                               "element in its initialiser");
      return NULL;
    }
    type = dc__ty_array(s->types, type->base, a->slots.count);
  } else if (type->kind == DC_TY_RECORD) {
    // Every member has a slot, so a generator can name them in order.
    uint32_t n = type->record->is_union ? 1 : a->limit;
    if (!slots_reserve(s, &a->slots, n, where)) return NULL;
    a->slots.count = n;
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_INIT_LIST, type, where);
  if (e == NULL) return NULL;
  e->args = a->slots.items;
  e->arg_count = a->slots.count;
  e->field = a->field;
  return e;
}

//===-- Initialisers ------------------------------------------------------===//

static dc__expr_t* braced(dc__sema_t* s, const dc__ty_t* type, bool top);

// True if the list goes on with another element that belongs to an object
// whose braces were elided: not its end, and not a designator (which
// always refers to the object of the nearest braces).
static bool elided_continues(dc__sema_t* s) {
  if (!dc__sema_at(s, ",")) return false;
  const dc__token_t* next = dc__sema_peek(s, 1);
  return !dc__tok_is(next, "}") && !dc__tok_is(next, ".") &&
         !dc__tok_is(next, "[");
}

static dc__expr_t* init_value(dc__sema_t* s, const dc__ty_t* type,
                              dc__expr_t* pending);

// An aggregate without its own braces: it takes the elements that follow,
// |first| (already read) included, up to its number of slots.
static dc__expr_t* elided_aggregate(dc__sema_t* s, const dc__ty_t* type,
                                    dc__expr_t* first) {
  aggregate_t a;
  if (!aggregate_begin(s, &a, type, /*top=*/false, first->token)) return NULL;
  uint32_t next = 0;
  dc__expr_t* pending = first;
  do {
    if (pending == NULL) ++s->pos;  // the ',' before the next element
    dc__expr_t* v = init_value(s, slot_type(&a, next), pending);
    pending = NULL;
    if (v == NULL || !slots_put(s, &a.slots, next, v)) return NULL;
    ++next;
  } while (next < a.limit && elided_continues(s));
  return aggregate_end(s, &a, first->token);
}

// A vector without its own braces (as clang takes OpenCL C): the scalars
// and vectors that follow, |first| included, until it is full.
static dc__expr_t* elided_vector(dc__sema_t* s, const dc__ty_t* type,
                                 dc__expr_t* first) {
  dc__expr_t* parts[16];
  uint32_t count = 0, lanes = 0;
  dc__expr_t* part = first;
  for (;;) {
    const dc__ty_t* t = part->type;
    lanes += t->kind == DC_TY_VECTOR ? t->width : 1;
    parts[count++] = part;
    if (lanes >= type->width || count == 16 || !elided_continues(s)) break;
    ++s->pos;
    part = dc__sema_assignment(s);
    if (part == NULL) return NULL;
  }
  dc__expr_t** kept = dc__arena_alloc(s->arena, count * sizeof(*kept));
  if (kept == NULL) return NULL;
  memcpy(kept, parts, count * sizeof(*kept));
  return dc__sema_vector_parts(s, type->unqualified, kept, count,
                               first->token, "initialiser");
}

// The initialiser of one object of |type| inside a braced list: a braced
// list of its own, or (braces elided) as many of the list's elements as it
// takes. |pending| is its first element, already read, or NULL.
static dc__expr_t* init_value(dc__sema_t* s, const dc__ty_t* type,
                              dc__expr_t* pending) {
  if (pending == NULL && dc__sema_at(s, "{")) return braced(s, type, false);
  dc__expr_t* e = pending ? pending : dc__sema_assignment(s);
  if (e == NULL) return NULL;
  bool whole = e->type->unqualified == type->unqualified;
  if (!whole && is_aggregate(type)) return elided_aggregate(s, type, e);
  if (!whole && type->kind == DC_TY_VECTOR &&
      (dc__ty_is_arithmetic(e->type) || e->type->kind == DC_TY_VECTOR)) {
    return elided_vector(s, type, e);
  }
  return dc__sema_convert(s, e, type, "initialiser");
}

// Reads one '[index]' or '.member' and moves *next to the slot it names.
static bool designator_step(dc__sema_t* s, aggregate_t* a, uint32_t* next) {
  const dc__token_t* t = dc__sema_cur(s);
  bool index = dc__tok_is(t, "[");
  if (index != (a->type->kind == DC_TY_ARRAY)) {
    dc__sema_error(s, t, "'%s' designates %s, but '%s' is not %s",
                   index ? "[...] =" : ".member =",
                   index ? "an array element" : "a member",
                   dc__sema_ty(s, a->type),
                   index ? "an array" : "a struct or a union");
    return false;
  }
  ++s->pos;
  if (index) {
    int64_t v;
    if (!dc__sema_constant(s, "an array designator", &v)) return false;
    if (v < 0 || (uint64_t)v >= a->limit) {
      bool big = a->limit == DC_LIMIT_INIT_SLOTS &&
                 (a->type->length == 0 || (uint64_t)v < a->type->length);
      dc__sema_error(s, t, "designator [%lld] is %s '%s'", (long long)v,
                     big ? "beyond the elements an initialiser may set in"
                         : "outside",
                     dc__sema_ty(s, a->type));
      return false;
    }
    *next = (uint32_t)v;
    if (!dc__sema_expect(s, "]")) return false;
  } else {
    const dc__token_t* name = dc__sema_cur(s);
    const dc__record_t* r = a->type->record;
    const dc__field_t* f =
        name->kind == DC_TOK_IDENT
            ? dc__record_field(r, name->text, name->length)
            : NULL;
    if (f == NULL) {
      dc__sema_error(s, name, "no member named '%s' in '%s'",
                     dc__sema_spell(s, name), dc__sema_ty(s, a->type));
      return false;
    }
    dc__sema_note_name(s, name, DC_NAME_FIELD);
    ++s->pos;
    *next = r->is_union ? 0 : (uint32_t)(f - r->fields);
    if (r->is_union) a->field = f;
  }
  return true;
}

static bool at_designator(dc__sema_t* s) {
  return dc__sema_at(s, ".") || dc__sema_at(s, "[");
}

// The rest of a designator chain (".b[2] = v" after ".a"), in the object
// of |type| whose initialiser so far is |so_far| (NULL if none): a copy of
// it with the designated part, read with its value, set.
static dc__expr_t* designated(dc__sema_t* s, const dc__ty_t* type,
                              dc__expr_t* so_far, const dc__token_t* where) {
  if (!is_aggregate(type)) {
    dc__sema_error(s, dc__sema_cur(s), "'%s' has no members or elements to "
                   "designate", dc__sema_ty(s, type));
    return NULL;
  }
  if (so_far != NULL && so_far->kind != DC_EXPR_INIT_LIST) {
    dc__sema_error(s, dc__sema_cur(s), "a designator cannot set part of a "
                   "'%s' initialised whole", dc__sema_ty(s, type));
    return NULL;
  }
  if (!dc__sema_enter(s, where)) return NULL;
  aggregate_t a;
  dc__expr_t* e = NULL;
  uint32_t next = 0;
  if (aggregate_begin(s, &a, type, /*top=*/false, where) &&
      designator_step(s, &a, &next)) {
    bool kept = true;
    for (uint32_t i = 0; so_far != NULL && i < so_far->arg_count && kept;
         ++i) {
      kept = so_far->args[i] == NULL || slots_put(s, &a.slots, i,
                                                  so_far->args[i]);
    }
    if (so_far != NULL && so_far->field != NULL && a.field == NULL) {
      a.field = so_far->field;
    }
    dc__expr_t* inner = next < a.slots.count ? a.slots.items[next] : NULL;
    dc__expr_t* v = !kept ? NULL
                    : at_designator(s)
                        ? designated(s, slot_type(&a, next), inner, where)
                    : dc__sema_expect(s, "=")
                        ? init_value(s, slot_type(&a, next), NULL)
                        : NULL;
    if (v != NULL && slots_put(s, &a.slots, next, v)) {
      e = aggregate_end(s, &a, where);
    }
  }
  dc__sema_leave(s);
  return e;
}

// Reads a designator and its value into |a|: '[index] = v', '.member = v',
// or a chain ('.a.b = v', '.rs[1].hi = v') that sets part of a member.
// *next is the slot it named; *filled whether the value was read (chains).
static bool designator(dc__sema_t* s, aggregate_t* a, uint32_t* next,
                       bool* filled) {
  const dc__token_t* where = dc__sema_cur(s);
  *filled = false;
  if (!designator_step(s, a, next)) return false;
  if (!at_designator(s)) return dc__sema_expect(s, "=");
  dc__expr_t* so_far = *next < a->slots.count ? a->slots.items[*next] : NULL;
  dc__expr_t* v = designated(s, slot_type(a, *next), so_far, where);
  *filled = true;
  return v != NULL && slots_put(s, &a->slots, *next, v);
}

// '{' already read: the elements of an array, a struct or a union, up to
// the '}'.
static dc__expr_t* braced_aggregate(dc__sema_t* s, const dc__ty_t* type,
                                    const dc__token_t* open, bool top) {
  aggregate_t a;
  if (!aggregate_begin(s, &a, type, top, open)) return NULL;
  uint32_t next = 0;
  bool after_chain = false;  // the last element was a designator chain
  while (!dc__sema_at(s, "}")) {
    bool filled = false;
    if (at_designator(s)) {
      if (!designator(s, &a, &next, &filled)) return NULL;
    } else if (after_chain) {
      // C would go on inside the member the chain reached; not supported.
      dc__sema_error(s, dc__sema_cur(s), "after a designator such as "
                     "'.a.b = ...', the next element needs a designator of "
                     "its own");
      return NULL;
    }
    after_chain = filled;
    if (next >= a.limit) {
      dc__sema_error(s, dc__sema_cur(s),
                     "excess elements in the initialiser of '%s'",
                     dc__sema_ty(s, type));
      return NULL;
    }
    if (!filled) {
      dc__expr_t* v = init_value(s, slot_type(&a, next), NULL);
      if (v == NULL || !slots_put(s, &a.slots, next, v)) return NULL;
    }
    ++next;
    if (!dc__sema_accept(s, ",")) break;
  }
  if (!dc__sema_expect(s, "}")) return NULL;
  return aggregate_end(s, &a, open);
}

// '{' already read: the components of a vector, which must add up to its
// width as in a vector literal; '{}' is all zeros.
static dc__expr_t* braced_vector(dc__sema_t* s, const dc__ty_t* type,
                                 const dc__token_t* open) {
  dc__expr_t* parts[16];
  uint32_t count = 0;
  while (!dc__sema_at(s, "}")) {
    if (count == 16) {
      dc__sema_error(s, dc__sema_cur(s),
                     "excess elements in the initialiser of '%s'",
                     dc__sema_ty(s, type));
      return NULL;
    }
    if ((parts[count++] = dc__sema_assignment(s)) == NULL) return NULL;
    if (!dc__sema_accept(s, ",")) break;
  }
  if (!dc__sema_expect(s, "}")) return NULL;
  if (count == 0) return dc__sema_node(s, DC_EXPR_INIT_LIST, type, open);
  dc__expr_t** kept = dc__arena_alloc(s->arena, count * sizeof(*kept));
  if (kept == NULL) return NULL;
  memcpy(kept, parts, count * sizeof(*kept));
  return dc__sema_vector_parts(s, type->unqualified, kept, count, open,
                               "initialiser");
}

// '{' already read: a scalar or a pointer in braces, '{ x }'.
static dc__expr_t* braced_scalar(dc__sema_t* s, const dc__ty_t* type,
                                 const dc__token_t* open) {
  if (dc__sema_at(s, "}")) {
    dc__sema_error(s, open, "the initialiser of a '%s' needs a value",
                   dc__sema_ty(s, type));
    return NULL;
  }
  dc__expr_t* v = init_value(s, type, NULL);
  if (v == NULL) return NULL;
  dc__sema_accept(s, ",");
  if (!dc__sema_at(s, "}")) {
    dc__sema_error(s, dc__sema_cur(s),
                   "excess elements in the initialiser of '%s'",
                   dc__sema_ty(s, type));
    return NULL;
  }
  ++s->pos;
  return v;
}

// A braced initialiser of |type| at the cursor's '{'.
static dc__expr_t* braced(dc__sema_t* s, const dc__ty_t* type, bool top) {
  const dc__token_t* open = dc__sema_cur(s);
  if (!dc__sema_enter(s, open)) return NULL;
  ++s->pos;
  dc__expr_t* e = is_aggregate(type) ? braced_aggregate(s, type, open, top)
                  : type->kind == DC_TY_VECTOR ? braced_vector(s, type, open)
                                               : braced_scalar(s, type, open);
  dc__sema_leave(s);
  return e;
}

dc__expr_t* dc__sema_initializer(dc__sema_t* s, const dc__ty_t* type) {
  if (type == NULL) return NULL;
  if (dc__sema_at(s, "{")) return braced(s, type, /*top=*/true);
  if (type->kind == DC_TY_ARRAY && dc__sema_cur(s)->kind == DC_TOK_STRING) {
    return dc__sema_string_init(s, type);
  }
  if (type->kind == DC_TY_ARRAY) {
    dc__sema_error(s, dc__sema_cur(s),
                   "an array ('%s') is initialised with a braced list "
                   "'{ ... }'",
                   dc__sema_ty(s, type));
    return NULL;
  }
  return dc__sema_convert(s, dc__sema_assignment(s), type, "initialiser");
}

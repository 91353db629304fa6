// sema_expr.c: the analysis of expressions: a recursive-descent parser of
// C expressions (precedence climbing for the binary operators) over the
// tokens at the cursor, which resolves every name (to a declaration of the
// program or an entry of the built-in table) and builds the typed tree:
// each node with its OpenCL C 1.2 type, each implicit conversion a node of
// its own. What the operators mean is sema_operators.c's; the conversions
// are sema_convert.c's.
//
// Each parenthesised group, unary operator, cast, call, subscript, '?:'
// and assignment enters one level of nesting (dc__sema_enter), so input
// nested deeper than DC_LIMIT_NESTING is an error, never a stack overflow.
// Every function returns NULL after reporting an error; the cursor is then
// somewhere inside the expression, and the statement parser recovers.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "builtin_table.h"
#include "sema_internal.h"

//===-- Tokens ------------------------------------------------------------===//

static const dc__token_t* cur(const dc__sema_t* s) { return dc__sema_cur(s); }

static bool at(const dc__sema_t* s, const char* text) {
  return dc__sema_at(s, text);
}

static void advance(dc__sema_t* s) {
  if (cur(s)->kind != DC_TOK_EOF) ++s->pos;
}

// True if the token after the cursor is |text|.
static bool next_is(const dc__sema_t* s, const char* text) {
  return dc__tok_is(dc__sema_peek(s, 1), text);
}

// True if the cursor is at '(' and a type name follows it: a cast, a
// compound literal, or sizeof/vec_step of a type.
static bool type_in_parens(dc__sema_t* s) {
  if (!at(s, "(")) return false;
  ++s->pos;
  bool yes = dc__sema_starts_type(s);
  --s->pos;
  return yes;
}

static const char* spell(dc__sema_t* s, const dc__token_t* t) {
  return dc__sema_spell(s, t);
}

//===-- Type classes ------------------------------------------------------===//

static bool is_vector(const dc__ty_t* t) { return t->kind == DC_TY_VECTOR; }

static bool is_pointer(const dc__ty_t* t) { return t->kind == DC_TY_POINTER; }

// A scalar number or a vector of them.
static bool is_number(const dc__ty_t* t) {
  return dc__ty_is_arithmetic(t) || is_vector(t);
}

// True if the integer constant |e| is negative (as its type reads it).
static bool is_negative(const dc__expr_t* e) {
  return !dc__sema_is_unsigned(dc__sema_scalar_of(e->type)) && e->value.i < 0;
}

//===-- Names and calls ---------------------------------------------------===//

static dc__expr_t* name_expr(dc__sema_t* s, dc__decl_t* d,
                             const dc__token_t* t) {
  switch (d->kind) {
    case DC_DECL_ENUM_CONST:
      return dc__sema_int(s, dc__sema_int_ty(s), (uint64_t)d->value, t);
    case DC_DECL_TYPEDEF:
      dc__sema_error(s, t, "'%s' is a type, not a value", d->name);
      return NULL;
    case DC_DECL_FUNCTION:
      dc__sema_error(s, t,
                     "'%s' is a function: call it (kernels have no function "
                     "pointers)",
                     d->name);
      return NULL;
    default: {
      dc__expr_t* e = dc__sema_node(s, DC_EXPR_NAME, d->type, t);
      if (e == NULL) return NULL;
      e->decl = d;
      e->is_lvalue = true;
      return e;
    }
  }
}

// A growable array of argument nodes in the arena.
typedef struct args_t {
  dc__expr_t** items;
  uint32_t count;
  uint32_t capacity;
} args_t;

static bool push_arg(dc__sema_t* s, args_t* a, dc__expr_t* e) {
  if (a->count == a->capacity) {
    uint32_t capacity = a->capacity ? a->capacity * 2 : 4;
    dc__expr_t** items = dc__arena_alloc(s->arena, capacity * sizeof(*items));
    if (items == NULL) {
      dc__sema_error(s, e->token, "out of memory while compiling");
      return false;
    }
    if (a->count) memcpy(items, a->items, a->count * sizeof(*items));
    a->items = items;
    a->capacity = capacity;
  }
  a->items[a->count++] = e;
  return true;
}

// Reads a call's '(' arguments ')' (assignment-expressions).
static bool call_arguments(dc__sema_t* s, args_t* out) {
  memset(out, 0, sizeof(*out));
  const dc__token_t* open = cur(s);
  if (!dc__sema_enter(s, open)) return false;
  advance(s);
  bool ok = true;
  if (!at(s, ")")) {
    do {
      dc__expr_t* e = dc__sema_assignment(s);
      ok = e != NULL && push_arg(s, out, e);
    } while (ok && dc__sema_accept(s, ","));
  }
  ok = ok && dc__sema_expect(s, ")");
  dc__sema_leave(s);
  return ok;
}

static dc__expr_t* call_node(dc__sema_t* s, dc__expr_kind_t kind,
                             const dc__ty_t* type, const dc__token_t* name,
                             const args_t* args) {
  dc__expr_t* e = dc__sema_node(s, kind, type, name);
  if (e == NULL) return NULL;
  e->args = args->items;
  e->arg_count = args->count;
  return e;
}

// The type a parameter of |f| receives its argument as: an array
// parameter is a pointer to its first element (C99 6.7.5.3).
static const dc__ty_t* parameter_type(dc__sema_t* s, const dc__decl_t* f,
                                      uint32_t i) {
  const dc__ty_t* t = f->params[i]->type;
  return t->kind == DC_TY_ARRAY ? dc__ty_pointer(s->types, t->base) : t;
}

// A call of the program's function |f|: arguments converted to its
// parameters' types as by assignment.
static dc__expr_t* call_function(dc__sema_t* s, dc__decl_t* f,
                                 const dc__token_t* name) {
  args_t args;
  if (!call_arguments(s, &args)) return NULL;
  if (f->is_kernel) {
    dc__sema_error(s, name,
                   "a kernel cannot call another kernel; move the shared "
                   "code into a helper function");
    return NULL;
  }
  if (args.count != f->param_count) {
    dc__sema_error(s, name, "too %s arguments to '%s' (expects %u, got %u)",
                   args.count > f->param_count ? "many" : "few", f->name,
                   f->param_count, args.count);
    return NULL;
  }
  for (uint32_t i = 0; i < args.count; ++i) {
    char context[128];  // for messages only: no need to keep it
    snprintf(context, sizeof(context), "argument %u of '%s'", i + 1, f->name);
    args.items[i] = dc__sema_convert(s, args.items[i], parameter_type(s, f, i),
                                     context);
    if (args.items[i] == NULL) return NULL;
  }
  // Structs passed or returned by value are copies in the caller's frame.
  uint64_t copies = f->type->kind == DC_TY_RECORD ? dc__ty_size(f->type) : 0;
  for (uint32_t i = 0; i < args.count; ++i) {
    const dc__ty_t* t = args.items[i]->type;
    if (t->kind == DC_TY_RECORD) copies += dc__ty_size(t);
  }
  if (copies > 0 && s->function != NULL &&
      !dc__sema_count_private(s, name, copies)) {
    return NULL;
  }
  dc__expr_t* e = call_node(s, DC_EXPR_CALL, f->type->unqualified, name, &args);
  if (e != NULL) e->decl = f;
  return e;
}

// Resolves the built-in |name| for |args| (rvalues), reporting the table's
// reason at the name when no overload fits.
static const dc__builtin_t* resolve_builtin(dc__sema_t* s,
                                            const dc__token_t* name,
                                            const args_t* args) {
  char why[320] = "";
  const dc__builtin_t* b =
      dc__builtin_resolve(s->types, s->arena, name->text, name->length,
                          args->items, args->count, why, sizeof(why));
  if (b == NULL) {
    if (why[0] == '\0') {
      snprintf(why, sizeof(why), "no overload of '%s' takes these arguments",
               spell(s, name));
    }
    dc__sema_error(s, name, "%s", why);
    return NULL;
  }
  if (b->param_count != args->count ||
      b->param_count > DC_BUILTIN_MAX_PARAMS) {
    dc__sema_error(s, name, "'%s' takes %u argument(s), not %u",
                   spell(s, name), b->param_count, args->count);
    return NULL;
  }
  return b;
}

// True if |name| is a synchronisation the CPU schedules as a statement of
// its own (the parser places them; no expression may hold one).
static bool is_statement_builtin(const dc__token_t* name) {
  return dc__tok_is(name, "barrier") ||
         dc__tok_is(name, "work_group_barrier") ||
         dc__tok_is(name, "wait_group_events") ||
         dc__tok_is(name, "dc_grid_sync");
}

// True if the token before |name| may end what comes before a statement.
static bool starts_statement(const dc__sema_t* s, const dc__token_t* name) {
  static const char* const kBefore[] = {";", "{", "}", ")", ":", "else",
                                        "do"};
  if (name == s->toks) return true;
  for (size_t i = 0; i < sizeof(kBefore) / sizeof(kBefore[0]); ++i) {
    if (dc__tok_is(name - 1, kBefore[i])) return true;
  }
  return false;
}

// Reports a barrier whose call is not a statement of its own, in the
// parser's words, before its void value meets an operator and gets a less
// helpful message.
static bool check_statement_builtin(dc__sema_t* s, const dc__token_t* name) {
  if (!is_statement_builtin(name)) return true;
  if (at(s, ";") && starts_statement(s, name)) return true;
  const char* example = dc__tok_is(name, "dc_grid_sync")
                            ? "dc_grid_sync();"
                        : dc__tok_is(name, "wait_group_events")
                            ? "wait_group_events(1, &event);"
                            : "barrier(CLK_LOCAL_MEM_FENCE);";
  dc__sema_error(s, name, "%s must be called as a statement of its own: '%s'",
                 spell(s, name), example);
  return false;
}

// A call of a built-in function: the overload is chosen on the arguments'
// own types, then each argument is converted to its parameter's type.
static dc__expr_t* call_builtin(dc__sema_t* s, const dc__token_t* name) {
  args_t args;
  if (!call_arguments(s, &args) || !check_statement_builtin(s, name)) {
    return NULL;
  }
  if (dc__tok_is(name, "dc_grid_sync") && args.count > 0) {
    dc__sema_error(s, args.items[0]->token,
                   "dc_grid_sync takes no arguments: 'dc_grid_sync();'");
    return NULL;
  }
  for (uint32_t i = 0; i < args.count; ++i) {
    args.items[i] = dc__sema_rvalue(s, args.items[i]);
    if (args.items[i] == NULL) return NULL;
  }
  const dc__builtin_t* b = resolve_builtin(s, name, &args);
  if (b == NULL) return NULL;
  for (uint32_t i = 0; i < args.count; ++i) {
    char context[128];
    snprintf(context, sizeof(context), "argument %u of '%s'", i + 1,
             b->name);
    args.items[i] = dc__sema_convert(s, args.items[i], b->params[i], context);
    if (args.items[i] == NULL) return NULL;
  }
  dc__expr_t* e = call_node(s, DC_EXPR_BUILTIN, b->result, name, &args);
  if (e != NULL) e->builtin = b;
  s->token_builtins[name - s->toks] = b;
  return e;
}

static dc__expr_t* builtin_constant(dc__sema_t* s, const dc__token_t* t) {
  const dc__builtin_t* b =
      dc__builtin_constant(s->types, s->arena, t->text, t->length);
  if (b == NULL) {
    dc__sema_error(s, t, "use of undeclared identifier '%s'", spell(s, t));
    return NULL;
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_CONSTANT, b->result, t);
  if (e == NULL) return NULL;
  e->builtin = b;
  if (dc__ty_is_integer(b->result)) {  // CLK_LOCAL_MEM_FENCE | ... folds
    e->is_constant = true;
    e->value.i = dc__sema_wrap(b->result->scalar, (uint64_t)b->value.i);
  }
  return e;
}

// true, false and NULL: the values of OpenCL C 6.1.1 and C99 7.17 (bool
// 1 and 0, as clang types them, and (void*)0).
static dc__expr_t* language_constant(dc__sema_t* s, const dc__token_t* t,
                                     bool* found) {
  *found = true;
  if (dc__tok_is(t, "true") || dc__tok_is(t, "false")) {
    return dc__sema_int(s, dc__sema_scalar(s, DC_SCALAR_BOOL),
                        dc__tok_is(t, "true"), t);
  }
  if (dc__tok_is(t, "NULL")) {
    const dc__ty_t* p = dc__ty_pointer(s->types, dc__ty_void(s->types));
    dc__expr_t* zero = dc__sema_int(s, dc__sema_int_ty(s), 0, t);
    return dc__sema_cast_node(s, zero, p, DC_CONV_NULL, false);
  }
  *found = false;
  return NULL;
}

// True for C keywords that can never start an expression.
static bool is_statement_keyword(const dc__token_t* t) {
  static const char* const kKeywords[] = {
      "if",    "else",  "while", "do",       "for",    "switch",
      "case",  "default", "return", "break",  "continue", "goto",
      "struct", "union", "enum",  "typedef",
  };
  for (size_t i = 0; i < sizeof(kKeywords) / sizeof(kKeywords[0]); ++i) {
    if (dc__tok_is(t, kKeywords[i])) return true;
  }
  return false;
}

// An identifier: a declaration of the program (then maybe its call), a
// built-in constant, or a call of a built-in function. Anything else is
// an error: no name the program did not declare reaches a code generator.
static dc__expr_t* identifier(dc__sema_t* s) {
  const dc__token_t* t = cur(s);
  if (dc__sema_starts_type(s) || is_statement_keyword(t)) {
    bool ctor = dc__sema_starts_type(s) && next_is(s, "(");
    dc__sema_error(s, t, "expected an expression before '%s'%s",
                   spell(s, t),
                   ctor ? ": a vector literal is written '(float4)(...)'" : "");
    return NULL;
  }
  bool called = next_is(s, "(");
  dc__decl_t* d = dc__sema_lookup(s, t);
  advance(s);
  if (d != NULL) {
    dc__sema_note_use(s, t, d);
    if (d->kind == DC_DECL_FUNCTION && called) return call_function(s, d, t);
    return name_expr(s, d, t);
  }
  bool found;
  dc__expr_t* e = language_constant(s, t, &found);
  if (found) return e;
  bool is_constant = false;
  if (dc__builtin_known(t->text, t->length, &is_constant)) {
    if (is_constant) return builtin_constant(s, t);
    if (called) return call_builtin(s, t);
    dc__sema_error(s, t, "built-in function '%s' must be called",
                   spell(s, t));
    return NULL;
  }
  dc__sema_error(s, t, "%s '%s'",
                 called ? "call to undeclared function"
                        : "use of undeclared identifier",
                 spell(s, t));
  return NULL;
}

//===-- Postfix operators -------------------------------------------------===//

// Checks a constant index into an array of known length: every such
// access past the end is a bug, and on the CPU it would write the host's
// stack.
static bool check_constant_index(dc__sema_t* s, const dc__ty_t* array,
                                 const dc__expr_t* index) {
  if (!index->is_constant || array->length == 0) return true;
  if (!is_negative(index) && (uint64_t)index->value.i < array->length) {
    return true;
  }
  dc__sema_error(s, index->token,
                 "index %lld is outside '%s' (valid indices: 0 to %u)",
                 (long long)index->value.i, dc__sema_ty(s, array),
                 array->length - 1);
  return false;
}

// |base|[|index|] (C allows |index|[|base|] too): an lvalue of the element
// type in the array's or the pointed-to address space.
static dc__expr_t* index_expr(dc__sema_t* s, dc__expr_t* base,
                              dc__expr_t* index, const dc__token_t* where) {
  if (dc__ty_is_integer(base->type) && (is_pointer(index->type) ||
                                        index->type->kind == DC_TY_ARRAY)) {
    dc__expr_t* t = base;
    base = index;
    index = t;
  }
  index = dc__sema_rvalue(s, index);
  if (index == NULL) return NULL;
  if (!dc__ty_is_integer(index->type)) {
    dc__sema_error(s, index->token, "an index must be an integer, not '%s'",
                   dc__sema_ty(s, index->type));
    return NULL;
  }
  const dc__ty_t* element;
  if (base->type->kind == DC_TY_ARRAY) {  // indexed in place, not decayed
    if (!check_constant_index(s, base->type, index)) return NULL;
    element = base->type->base;
  } else {
    base = dc__sema_rvalue(s, base);
    if (base == NULL) return NULL;
    if (!is_pointer(base->type)) {
      dc__sema_error(s, where, "cannot index '%s'%s",
                     dc__sema_ty(s, base->type),
                     is_vector(base->type)
                         ? ": select a component with .s0-.sF instead"
                         : ": it is not an array or a pointer");
      return NULL;
    }
    if (!dc__sema_check_steppable(s, base->type, where)) return NULL;
    element = base->type->base;
  }
  dc__expr_t* e = dc__sema_node(s, DC_EXPR_INDEX, element, base->token);
  if (e == NULL) return NULL;
  e->lhs = base;
  e->rhs = index;
  e->is_lvalue = true;
  return e;
}

static dc__expr_t* subscript(dc__sema_t* s, dc__expr_t* base) {
  const dc__token_t* open = cur(s);
  if (!dc__sema_enter(s, open)) return NULL;
  advance(s);
  dc__expr_t* index = dc__sema_expression(s);
  bool closed = index != NULL && dc__sema_expect(s, "]");
  dc__sema_leave(s);
  return closed ? index_expr(s, base, index, open) : NULL;
}

// The lanes of .lo, .hi, .even and .odd of a |width|-component vector;
// a 3-component vector acts as a 4-component one (6.1.7).
static int half_lanes(const dc__token_t* name, unsigned width, int lanes[16]) {
  int half = (width == 3 ? 4 : (int)width) / 2;
  for (int i = 0; i < half; ++i) {
    lanes[i] = dc__tok_is(name, "lo")     ? i
               : dc__tok_is(name, "hi")   ? half + i
               : dc__tok_is(name, "even") ? 2 * i
                                          : 2 * i + 1;
  }
  return half;
}

// Checks that every lane of the selector |name| exists in |vt|: x, y, z, w
// name the first four lanes of a vector of up to four; s0-sF any lane.
static bool check_lanes(dc__sema_t* s, const dc__token_t* name,
                        const dc__ty_t* vt, const int* lanes, int n) {
  bool numeric = name->text[0] == 's' || name->text[0] == 'S';
  if (!numeric && vt->width > 4) {
    dc__sema_error(s, name,
                   "'.%s': x, y, z and w select from vectors of up to 4 "
                   "components; %s needs .s0-.s%X",
                   spell(s, name), dc__sema_ty(s, vt), vt->width - 1u);
    return false;
  }
  for (int i = 0; i < n; ++i) {
    if (lanes[i] < vt->width) continue;
    const char* valid = !numeric ? (vt->width == 2   ? "x, y"
                                    : vt->width == 3 ? "x, y, z"
                                                     : "x, y, z, w")
                                 : dc__arena_printf(s->arena, "s0-s%X",
                                                    vt->width - 1u);
    dc__sema_error(s, name,
                   "'.%s' is out of range for %s, which has %u components "
                   "(%s)",
                   spell(s, name), dc__sema_ty(s, vt), vt->width, valid);
    return false;
  }
  return true;
}

static bool lanes_repeat(const int* lanes, int n) {
  for (int i = 0; i < n; ++i) {
    for (int k = i + 1; k < n; ++k) {
      if (lanes[i] == lanes[k]) return true;
    }
  }
  return false;
}

// v.xyzw, v.s01, v.hi, ... (6.1.7): an lvalue when |e| is one and no lane
// repeats.
static dc__expr_t* swizzle(dc__sema_t* s, dc__expr_t* e,
                           const dc__token_t* name) {
  const dc__ty_t* vt = e->type;
  const dc__ty_t* plain = vt->unqualified;  // for messages
  int lanes[16];
  int n = dc__tok_swizzle(name, lanes);
  if (n == 0) {
    dc__sema_error(s, name,
                   "'%s' is not a component of %s: use .x, .y, .z, .w, "
                   ".s0-.sF, .lo, .hi, .even or .odd",
                   spell(s, name), dc__sema_ty(s, plain));
    return NULL;
  }
  if (n < 0) {
    n = half_lanes(name, vt->width, lanes);
  } else if (!check_lanes(s, name, plain, lanes, n)) {
    return NULL;
  }
  if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16) {
    dc__sema_error(s, name,
                   "'.%s' selects %d components; a vector has 2, 3, 4, 8 or "
                   "16",
                   spell(s, name), n);
    return NULL;
  }
  const dc__ty_t* type = dc__ty_qualified(
      s->types, dc__ty_vector(s->types, vt->scalar, (unsigned)n), vt->quals,
      vt->space);
  dc__expr_t* z = dc__sema_node(s, DC_EXPR_SWIZZLE, type, e->token);
  if (z == NULL) return NULL;
  z->lhs = e;
  z->lane_count = (uint8_t)n;
  // n is at most 16 (checked above); the second bound says so to gcc 13,
  // which otherwise warns of an overflow of lanes[].
  for (size_t i = 0; i < (size_t)n && i < sizeof(z->lanes); ++i) {
    z->lanes[i] = (uint8_t)lanes[i];
  }
  z->is_lvalue = e->is_lvalue && !lanes_repeat(lanes, n);
  return z;
}

// s.f or p->f: an lvalue in the record's address space, with the record's
// qualifiers added to the member's.
static dc__expr_t* field_access(dc__sema_t* s, dc__expr_t* e,
                                const dc__ty_t* rt, const dc__token_t* name,
                                bool arrow) {
  const dc__record_t* r = rt->record;
  if (!r->is_complete) {
    dc__sema_error(s, name, "'%s' is incomplete here: its members are not "
                            "known", dc__sema_ty(s, rt));
    return NULL;
  }
  const dc__field_t* f = dc__record_field(r, name->text, name->length);
  if (f == NULL) {
    dc__sema_error(s, name, "no member named '%s' in '%s'", spell(s, name),
                   dc__sema_ty(s, rt->unqualified));
    return NULL;
  }
  dc__sema_note_name(s, name, DC_NAME_FIELD);
  const dc__ty_t* type = dc__ty_qualified(s->types, f->type,
                                          f->type->quals | rt->quals,
                                          rt->space);
  dc__expr_t* m = dc__sema_node(s, DC_EXPR_MEMBER, type, e->token);
  if (m == NULL) return NULL;
  m->lhs = e;
  m->field = f;
  m->arrow = arrow;
  m->is_lvalue = arrow || e->is_lvalue;
  return m;
}

// e.name and e->name.
static dc__expr_t* member(dc__sema_t* s, dc__expr_t* e) {
  const dc__token_t* op = cur(s);
  bool arrow = dc__tok_is(op, "->");
  advance(s);
  const dc__token_t* name = cur(s);
  if (name->kind != DC_TOK_IDENT) {
    dc__sema_error(s, name, "expected a member name after '%s', found '%s'",
                   arrow ? "->" : ".", spell(s, name));
    return NULL;
  }
  advance(s);
  if (arrow) {
    e = dc__sema_rvalue(s, e);
    if (e == NULL) return NULL;
    if (!is_pointer(e->type) || e->type->base->kind != DC_TY_RECORD) {
      dc__sema_error(s, op, "'->' needs a pointer to a struct or union, not "
                            "'%s'", dc__sema_ty(s, e->type));
      return NULL;
    }
    return field_access(s, e, e->type->base, name, true);
  }
  if (is_vector(e->type)) return swizzle(s, e, name);
  if (e->type->kind == DC_TY_RECORD) {
    return field_access(s, e, e->type, name, false);
  }
  dc__sema_error(s, op,
                 "'.%s' needs a struct, a union or a vector, not '%s'%s",
                 spell(s, name), dc__sema_ty(s, e->type),
                 is_pointer(e->type) && e->type->base->kind == DC_TY_RECORD
                     ? ": use '->'"
                     : "");
  return NULL;
}

// The postfix operators after the primary expression |e|.
static dc__expr_t* postfix_suffixes(dc__sema_t* s, dc__expr_t* e) {
  while (e != NULL) {
    const dc__token_t* t = cur(s);
    if (dc__tok_is(t, "[")) {
      e = subscript(s, e);
    } else if (dc__tok_is(t, ".") || dc__tok_is(t, "->")) {
      e = member(s, e);
    } else if (dc__tok_is(t, "++") || dc__tok_is(t, "--")) {
      advance(s);
      e = dc__sema_postfix_step(s, t, e);
    } else if (dc__tok_is(t, "(")) {
      dc__sema_error(s, t, "a value of type '%s' cannot be called",
                     dc__sema_ty(s, e->type));
      return NULL;
    } else {
      break;
    }
  }
  return e;
}

//===-- Primary expressions -----------------------------------------------===//

static dc__expr_t* parenthesised(dc__sema_t* s) {
  const dc__token_t* open = cur(s);
  if (!dc__sema_enter(s, open)) return NULL;
  advance(s);
  dc__expr_t* e = dc__sema_expression(s);
  bool closed = e != NULL && dc__sema_expect(s, ")");
  dc__sema_leave(s);
  return closed ? e : NULL;
}

static dc__expr_t* primary(dc__sema_t* s) {
  const dc__token_t* t = cur(s);
  switch (t->kind) {
    case DC_TOK_NUMBER:
      advance(s);
      return dc__sema_number_literal(s, t);
    case DC_TOK_CHAR:
      advance(s);
      return dc__sema_char_literal(s, t);
    case DC_TOK_STRING:
      dc__sema_error(s, t, "string literals are not supported in kernels");
      return NULL;
    case DC_TOK_IDENT:
      return identifier(s);
    default:
      break;
  }
  if (dc__tok_is(t, "(")) return parenthesised(s);
  dc__sema_error(s, t, "expected an expression before '%s'", spell(s, t));
  return NULL;
}

//===-- sizeof and vec_step -----------------------------------------------===//

static dc__expr_t* unary_expression(dc__sema_t* s);

// The operand of sizeof or vec_step: a parenthesised type name (or a
// compound literal) or a unary-expression; only its type matters (it is
// never evaluated).
static const dc__ty_t* operand_type(dc__sema_t* s) {
  if (cur(s)->kind == DC_TOK_STRING) return dc__sema_string_type(s);
  if (at(s, "(") && dc__sema_peek(s, 1)->kind == DC_TOK_STRING) {
    advance(s);
    const dc__ty_t* type = dc__sema_string_type(s);
    return type && dc__sema_expect(s, ")") ? type : NULL;
  }
  if (!type_in_parens(s)) {
    dc__expr_t* e = unary_expression(s);
    return e ? e->type : NULL;
  }
  advance(s);
  const dc__ty_t* type = dc__sema_type_name(s);
  if (type == NULL || !dc__sema_expect(s, ")")) return NULL;
  if (!at(s, "{")) return type;
  dc__expr_t* literal = dc__sema_initializer(s, type);
  return literal ? literal->type : NULL;
}

static dc__expr_t* folded_size(dc__sema_t* s, const char* op,
                               const dc__ty_t* type, uint64_t value,
                               const dc__token_t* where) {
  dc__expr_t* e = dc__sema_int(s, type, value, where);
  if (e == NULL) return NULL;
  e->kind = DC_EXPR_SIZEOF;
  e->op = op;
  return e;
}

// sizeof: a size_t constant; a 3-component vector takes the room of four.
static dc__expr_t* size_of(dc__sema_t* s, const dc__token_t* where,
                           const dc__ty_t* t) {
  if (t->kind == DC_TY_VOID || !dc__sema_is_complete(t)) {
    dc__sema_error(s, where, "cannot take the size of %s'%s'",
                   t->kind == DC_TY_VOID ? "" : "the incomplete type ",
                   dc__sema_ty(s, t));
    return NULL;
  }
  return folded_size(s, "sizeof", dc__sema_scalar(s, DC_SCALAR_SIZE_T),
                     dc__ty_size(t), where);
}

// vec_step (6.11.12 in 1.2's numbering of built-ins): the number of
// components, 1 for a scalar and 4 for a 3-component vector.
static dc__expr_t* vec_step(dc__sema_t* s, const dc__token_t* where,
                            const dc__ty_t* t) {
  if (!is_number(t)) {
    dc__sema_error(s, where, "vec_step needs a scalar or vector type, not "
                             "'%s'", dc__sema_ty(s, t));
    return NULL;
  }
  unsigned n = is_vector(t) ? (t->width == 3 ? 4u : t->width) : 1u;
  return folded_size(s, "vec_step", dc__sema_int_ty(s), n, where);
}

static dc__expr_t* size_operator(dc__sema_t* s) {
  const dc__token_t* t = cur(s);
  bool is_vec_step = dc__tok_is(t, "vec_step");
  if (is_vec_step && !next_is(s, "(")) {
    dc__sema_error(s, t, "vec_step needs a parenthesised type or expression");
    return NULL;
  }
  if (!dc__sema_enter(s, t)) return NULL;
  advance(s);
  const dc__ty_t* type = operand_type(s);
  dc__sema_leave(s);
  if (type == NULL) return NULL;
  return is_vec_step ? vec_step(s, t, type) : size_of(s, t, type);
}

//===-- Unary expressions and casts ---------------------------------------===//

static dc__expr_t* cast_expression(dc__sema_t* s);

// The unary operator |t| (just passed) applied to its operand: a
// unary-expression for ++ and --, a cast-expression for the others.
static dc__expr_t* unary_operator(dc__sema_t* s, const dc__token_t* t) {
  bool step = dc__tok_is(t, "++") || dc__tok_is(t, "--");
  return dc__sema_unary(s, t,
                        step ? unary_expression(s) : cast_expression(s));
}

static bool is_unary_operator(const dc__token_t* t) {
  static const char* const kOps[] = {"++", "--", "&", "*", "+", "-", "~", "!"};
  if (t->kind != DC_TOK_PUNCT) return false;
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    if (dc__tok_is(t, kOps[i])) return true;
  }
  return false;
}

// A unary-expression (C99 6.5.3).
static dc__expr_t* unary_expression(dc__sema_t* s) {
  const dc__token_t* t = cur(s);
  if (dc__tok_is(t, "sizeof") || dc__tok_is(t, "vec_step")) {
    return size_operator(s);
  }
  if (!is_unary_operator(t)) return postfix_suffixes(s, primary(s));
  if (!dc__sema_enter(s, t)) return NULL;
  advance(s);
  dc__expr_t* e = unary_operator(s, t);
  dc__sema_leave(s);
  return e;
}

// After '(' vector-type ')' and at '(': a vector literal when the
// parentheses hold a list (6.1.6), else a cast of the parenthesised
// expression (and its postfix operators), which repeats a scalar.
static dc__expr_t* vector_cast(dc__sema_t* s, const dc__ty_t* type,
                               const dc__token_t* where) {
  const dc__token_t* open = cur(s);
  args_t parts;
  if (!call_arguments(s, &parts)) return NULL;
  if (parts.count == 0) {
    dc__sema_error(s, open, "a vector literal needs components");
    return NULL;
  }
  if (parts.count == 1) {
    dc__expr_t* e = postfix_suffixes(s, parts.items[0]);
    return dc__sema_explicit_cast(s, e, type, where);
  }
  const dc__token_t* after = cur(s);
  if (dc__tok_is(after, ".") || dc__tok_is(after, "[") ||
      dc__tok_is(after, "->")) {
    dc__sema_error(s, after,
                   "put the vector literal in parentheses to use '%s' on it",
                   spell(s, after));
    return NULL;
  }
  return dc__sema_vector_parts(s, type->unqualified, parts.items, parts.count,
                               where, "vector literal");
}

// After '(' type ')': a compound literal, a vector literal or a cast.
static dc__expr_t* cast_rest(dc__sema_t* s, const dc__ty_t* type,
                             const dc__token_t* open) {
  if (at(s, "{")) {
    return postfix_suffixes(s, dc__sema_initializer(s, type));
  }
  if (type->kind == DC_TY_VECTOR && at(s, "(")) {
    return vector_cast(s, type, open);
  }
  return dc__sema_explicit_cast(s, cast_expression(s), type, open);
}

// A cast-expression (C99 6.5.4).
static dc__expr_t* cast_expression(dc__sema_t* s) {
  if (!type_in_parens(s)) return unary_expression(s);
  const dc__token_t* open = cur(s);
  if (!dc__sema_enter(s, open)) return NULL;
  advance(s);
  const dc__ty_t* type = dc__sema_type_name(s);
  dc__expr_t* e = NULL;
  if (type != NULL && dc__sema_expect(s, ")")) e = cast_rest(s, type, open);
  dc__sema_leave(s);
  return e;
}

//===-- Binary, conditional, assignment and comma expressions -------------===//

// Precedence climbing over the binary operators binding at least as tight
// as |min_precedence|; each operator is left-associative.
static dc__expr_t* binary_expression(dc__sema_t* s, int min_precedence) {
  dc__expr_t* l = cast_expression(s);
  while (l != NULL) {
    const dc__token_t* t = cur(s);
    dc__op_t op;
    int precedence = dc__sema_binary_operator(t, &op);
    if (precedence == 0 || precedence < min_precedence) break;
    advance(s);
    dc__expr_t* r = binary_expression(s, precedence + 1);
    l = r ? dc__sema_binary(s, op, t, l, r) : NULL;
  }
  return l;
}

// A conditional-expression: c ? a : b, right-associative.
dc__expr_t* dc__sema_conditional(dc__sema_t* s) {
  dc__expr_t* c = binary_expression(s, 1);
  if (c == NULL || !at(s, "?")) return c;
  const dc__token_t* q = cur(s);
  if (!dc__sema_enter(s, q)) return NULL;
  advance(s);
  dc__expr_t* a = dc__sema_expression(s);
  dc__expr_t* b = NULL;
  if (a != NULL && dc__sema_expect(s, ":")) b = dc__sema_conditional(s);
  dc__sema_leave(s);
  return b ? dc__sema_select(s, q, c, a, b) : NULL;
}

//===-- Entry points ------------------------------------------------------===//

dc__expr_t* dc__sema_assignment(dc__sema_t* s) {
  dc__expr_t* l = dc__sema_conditional(s);
  const dc__token_t* t = cur(s);
  dc__op_t op;
  if (l == NULL || !dc__sema_assignment_operator(t, &op)) return l;
  if (!dc__sema_enter(s, t)) return NULL;
  advance(s);
  dc__expr_t* r = dc__sema_assignment(s);
  dc__sema_leave(s);
  return r ? dc__sema_assign(s, t, op, l, r) : NULL;
}

dc__expr_t* dc__sema_expression(dc__sema_t* s) {
  dc__expr_t* e = dc__sema_assignment(s);
  while (e != NULL && at(s, ",")) {
    advance(s);
    e = dc__sema_comma(s, e, dc__sema_assignment(s));
  }
  return e;
}

bool dc__sema_constant(dc__sema_t* s, const char* what, int64_t* out) {
  const dc__token_t* t = cur(s);
  dc__expr_t* e = dc__sema_conditional(s);
  if (e == NULL) return false;
  if (!e->is_constant || !dc__ty_is_integer(e->type)) {
    dc__sema_error(s, t, "%s must be an integer constant expression", what);
    return false;
  }
  *out = e->value.i;
  return true;
}

dc__expr_t* dc__sema_condition(dc__sema_t* s, dc__expr_t* e) {
  e = dc__sema_rvalue(s, e);
  if (e == NULL) return NULL;
  if (dc__ty_is_scalar(e->type)) return e;
  dc__sema_error(s, e->token, "the condition must be a scalar, not %s%s",
                 dc__sema_ty(s, e->type),
                 is_vector(e->type) ? ": use any() or all()" : "");
  return NULL;
}

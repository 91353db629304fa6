// builtin_table.c: the built-in functions and constants of the kernel
// language, and the resolution of a call against their overloads.
// SPDX-License-Identifier: MIT
#include "builtin_table.h"

#include "builtin_families.h"

#include <assert.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


//===-- Patterns ----------------------------------------------------------===//

typedef enum slot_kind_e {
  K_VOID,
  K_G,
  K_S,
  K_V,
  K_U,
  K_K,
  K_R,
  K_I,
  K_W,
  K_INT,
  K_UINT,
  K_SIZE,
  K_EVENT,
} slot_kind_t;

// One token of a pattern, parsed.
typedef struct slot_t {
  uint8_t kind;     // slot_kind_t: the value's, or the pointee's
  bool pointer;
  uint8_t quals;    // pointer: the pointee's DC_Q_* qualifiers
  uint8_t spaces;   // pointer: bit per dc_address_space_t allowed
} slot_t;

typedef struct signature_t {
  slot_t result;
  slot_t params[DC_BUILTIN_MAX_PARAMS];
  uint32_t count;
} signature_t;

static bool parse_kind(const char* text, size_t length, uint8_t* out) {
  static const struct {
    const char* text;
    slot_kind_t kind;
  } kKinds[] = {
      {"G", K_G},         {"S", K_S},       {"V", K_V},
      {"U", K_U},         {"K", K_K},       {"R", K_R},
      {"I", K_I},         {"W", K_W},       {"void", K_VOID},
      {"int", K_INT},     {"uint", K_UINT}, {"size_t", K_SIZE},
      {"event_t", K_EVENT},
  };
  for (size_t i = 0; i < sizeof(kKinds) / sizeof(kKinds[0]); ++i) {
    if (strlen(kKinds[i].text) == length &&
        memcmp(kKinds[i].text, text, length) == 0) {
      *out = (uint8_t)kKinds[i].kind;
      return true;
    }
  }
  return false;
}

static bool parse_spaces(const char* text, size_t length, uint8_t* out) {
  *out = 0;
  for (size_t i = 0; i < length; ++i) {
    const char* at = strchr("gclp", text[i]);
    if (at == NULL || text[i] == '\0') return false;
    static const dc_address_space_t kSpaces[] = {
        DC_ADDRESS_GLOBAL, DC_ADDRESS_CONSTANT, DC_ADDRESS_LOCAL,
        DC_ADDRESS_PRIVATE};
    *out |= (uint8_t)(1u << kSpaces[at - "gclp"]);
  }
  return *out != 0;
}

static bool parse_slot(const char* text, size_t length, slot_t* out) {
  *out = (slot_t){0};
  const char* star = memchr(text, '*', length);
  size_t type_length = star ? (size_t)(star - text) : length;
  if (star != NULL) {
    out->pointer = true;
    if (!parse_spaces(star + 1, length - type_length - 1, &out->spaces)) {
      return false;
    }
    // A lower-case c or v before an upper-case token qualifies the pointee.
    if (type_length >= 2 && (text[0] == 'c' || text[0] == 'v') &&
        text[1] >= 'A' && text[1] <= 'Z') {
      out->quals = text[0] == 'c' ? DC_Q_CONST : DC_Q_VOLATILE;
      ++text;
      --type_length;
    }
  }
  return parse_kind(text, type_length, &out->kind);
}

static bool parse_pattern(const char* pattern, signature_t* out) {
  *out = (signature_t){0};
  bool first = true;
  for (const char* at = pattern; *at != '\0';) {
    size_t length = strcspn(at, " ");
    slot_t slot;
    if (!parse_slot(at, length, &slot)) return false;
    if (first) {
      out->result = slot;
      first = false;
    } else if (out->count == DC_BUILTIN_MAX_PARAMS) {
      return false;
    } else {
      out->params[out->count++] = slot;
    }
    at += length;
    if (*at == ' ') ++at;
  }
  return !first;
}

//===-- The index ---------------------------------------------------------===//

// The families sorted by name (then by their order in dc__builtin_families, so a
// name's lines are tried as written), and their parsed patterns. Built
// once, then read-only: safe for concurrent compiles.
static uint16_t g_order[DC_BUILTIN_FAMILY_MAX];
static signature_t g_signatures[DC_BUILTIN_FAMILY_MAX];
static pthread_once_t g_index_once = PTHREAD_ONCE_INIT;

static int compare_families(const void* a, const void* b) {
  uint16_t x = *(const uint16_t*)a, y = *(const uint16_t*)b;
  int c = strcmp(dc__builtin_families[x].name, dc__builtin_families[y].name);
  return c != 0 ? c : (x > y) - (x < y);
}

static void build_index(void) {
  for (size_t i = 0; i < dc__builtin_family_count; ++i) {
    g_order[i] = (uint16_t)i;
    bool parsed = parse_pattern(dc__builtin_families[i].pattern, &g_signatures[i]);
    assert(parsed && "a pattern in dc__builtin_families is malformed");
    (void)parsed;
  }
  qsort(g_order, dc__builtin_family_count, sizeof(g_order[0]), compare_families);
}

// Orders |name| (|length| bytes) against the NUL-terminated |s|.
static int compare_name(const char* name, size_t length, const char* s) {
  size_t n = strlen(s);
  int c = memcmp(name, s, length < n ? length : n);
  return c != 0 ? c : (length > n) - (length < n);
}

// The range [*lo, *hi) of g_order holding |name|'s families; false if none.
static bool find_families(const char* name, size_t length, size_t* lo,
                          size_t* hi) {
  pthread_once(&g_index_once, build_index);
  size_t a = 0, b = dc__builtin_family_count;
  while (a < b) {  // the first entry not below |name|
    size_t mid = a + (b - a) / 2;
    if (compare_name(name, length, dc__builtin_families[g_order[mid]].name) > 0) {
      a = mid + 1;
    } else {
      b = mid;
    }
  }
  size_t end = a;
  while (end < dc__builtin_family_count &&
         compare_name(name, length, dc__builtin_families[g_order[end]].name) == 0) {
    ++end;
  }
  *lo = a;
  *hi = end;
  return end > a;
}

//===-- Shapes: what a slot is for one gentype ----------------------------===//

// A by-value type without building it: void, event_t, or a number (a
// scalar when |width| is 1, else a vector).
typedef struct shape_t {
  dc__ty_kind_t kind;  // DC_TY_VOID, DC_TY_EVENT or DC_TY_SCALAR
  dc__scalar_t elem;
  uint8_t width;
} shape_t;

static shape_t number(dc__scalar_t elem, unsigned width) {
  return (shape_t){DC_TY_SCALAR, elem, (uint8_t)width};
}

static dc__scalar_t int_of_size(uint32_t bytes, bool is_signed) {
  switch (bytes) {
    case 1: return is_signed ? DC_SCALAR_CHAR : DC_SCALAR_UCHAR;
    case 2: return is_signed ? DC_SCALAR_SHORT : DC_SCALAR_USHORT;
    case 4: return is_signed ? DC_SCALAR_INT : DC_SCALAR_UINT;
    default: return is_signed ? DC_SCALAR_LONG : DC_SCALAR_ULONG;
  }
}

static bool is_signed_element(dc__scalar_t e) {
  return e == DC_SCALAR_CHAR || e == DC_SCALAR_SHORT || e == DC_SCALAR_INT ||
         e == DC_SCALAR_LONG || e == DC_SCALAR_PTRDIFF_T;
}

static bool is_floating_element(dc__scalar_t e) {
  return e == DC_SCALAR_FLOAT || e == DC_SCALAR_DOUBLE;
}

static shape_t slot_shape(uint8_t kind, dc__scalar_t e, unsigned w,
                          unsigned n) {
  uint32_t bytes = dc__scalar_size(e);
  switch ((slot_kind_t)kind) {
    case K_G: return number(e, w);
    case K_S: return number(e, 1);
    case K_V: return number(e, n);
    case K_U: return number(int_of_size(bytes, false), w);
    case K_K: return number(int_of_size(bytes, true), w);
    case K_R:
      return w == 1 ? number(DC_SCALAR_INT, 1)
                    : number(int_of_size(bytes, true), w);
    case K_I: return number(DC_SCALAR_INT, w);
    case K_W: return number(int_of_size(2 * bytes, is_signed_element(e)), w);
    case K_INT: return number(DC_SCALAR_INT, 1);
    case K_UINT: return number(DC_SCALAR_UINT, 1);
    case K_SIZE: return number(DC_SCALAR_SIZE_T, 1);
    case K_EVENT: return (shape_t){DC_TY_EVENT, DC_SCALAR_VOID, 1};
    case K_VOID: break;
  }
  return (shape_t){DC_TY_VOID, DC_SCALAR_VOID, 1};
}

// Tokens whose width is G's: a scalar argument may widen to them (see
// match_family), and their arguments' widths are candidates for G's.
static bool carries_width(uint8_t kind) {
  return kind == K_G || kind == K_U || kind == K_K || kind == K_R ||
         kind == K_I || kind == K_W;
}

// Tokens whose element is G's: their arguments decide the target gentype.
static bool carries_element(uint8_t kind) {
  return kind == K_G || kind == K_S || kind == K_V;
}

static const dc__ty_t* shape_type(dc__types_t* types, shape_t s) {
  if (s.kind == DC_TY_VOID) return dc__ty_void(types);
  if (s.kind == DC_TY_EVENT) return dc__ty_event(types);
  return dc__ty_vector(types, s.elem, s.width);
}

//===-- Arguments and their conversions -----------------------------------===//

// An argument as resolution sees it.
typedef struct arg_view_t {
  const dc__ty_t* type;     // without qualifiers; NULL if untyped
  const dc__ty_t* pointee;  // a pointer's target, an array's element
  bool weak;                // a literal that adapts (see target_of)
  bool zero;                // an integer constant expression of value 0
} arg_view_t;

static const dc__ty_t* unqualified(const dc__ty_t* t) {
  return t != NULL && t->unqualified != NULL ? t->unqualified : t;
}

// A literal that adopts the other arguments' type (step 3), possibly
// signed: an unsuffixed integer one of type int (1, -1), or any floating
// one (0.5, 2.0f). A suffixed or too-large integer literal (3u, 1L) keeps
// its type, as its writer asked.
static bool is_weak_literal(const dc__expr_t* e) {
  const dc__ty_t* type = unqualified(e->type);
  while (e->kind == DC_EXPR_UNARY && e->op != NULL && e->lhs != NULL &&
         (strcmp(e->op, "-") == 0 || strcmp(e->op, "+") == 0)) {
    e = e->lhs;
  }
  if (type == NULL || type->kind != DC_TY_SCALAR) return false;
  return (e->kind == DC_EXPR_INT && type->scalar == DC_SCALAR_INT) ||
         e->kind == DC_EXPR_FLOAT;
}

static arg_view_t view_of(const dc__expr_t* e) {
  arg_view_t v = {0};
  if (e == NULL || e->type == NULL) return v;
  v.type = unqualified(e->type);
  // An array decays to a pointer to its first element, which keeps the
  // array's address space and qualifiers.
  if (e->type->kind == DC_TY_POINTER || e->type->kind == DC_TY_ARRAY) {
    v.pointee = e->type->base;
  }
  v.weak = is_weak_literal(e);
  v.zero = e->is_constant && dc__ty_is_integer(v.type) && e->value.i == 0;
  return v;
}

// Conversion costs: lower is better; an exact match costs nothing.
enum {
  COST_EXACT = 0,
  COST_QUALIFY = 1,  // a pointer gains const or volatile
  COST_PROMOTE = 1,  // integer promotion, float to double
  COST_CONVERT = 2,  // any other arithmetic conversion
  COST_SPLAT = 3,    // a scalar repeated into a vector
  NOT_VIABLE = -1,
};

// C's integer promotion; enums are ints.
static dc__scalar_t promoted(dc__scalar_t e) {
  switch (e) {
    case DC_SCALAR_BOOL:
    case DC_SCALAR_CHAR:
    case DC_SCALAR_UCHAR:
    case DC_SCALAR_SHORT:
    case DC_SCALAR_USHORT: return DC_SCALAR_INT;
    default: return e;
  }
}

static int scalar_cost(const dc__ty_t* from, dc__scalar_t to) {
  dc__scalar_t e = dc__ty_element(from);
  if (from->kind == DC_TY_SCALAR && e == to) return COST_EXACT;
  if (promoted(e) == to) return COST_PROMOTE;
  if (e == DC_SCALAR_FLOAT && to == DC_SCALAR_DOUBLE) return COST_PROMOTE;
  return COST_CONVERT;
}

// The cost of passing |arg| by value as |shape|. A scalar may widen to a
// vector only where |may_splat|.
static int value_cost(const arg_view_t* arg, shape_t shape, bool may_splat) {
  const dc__ty_t* t = arg->type;
  if (t == NULL) return NOT_VIABLE;
  if (shape.kind == DC_TY_EVENT) {  // or 0, "no event", as clang takes it
    return t->kind == DC_TY_EVENT ? COST_EXACT
           : arg->zero            ? COST_CONVERT
                                  : NOT_VIABLE;
  }
  if (shape.kind != DC_TY_SCALAR) return NOT_VIABLE;
  if (t->kind == DC_TY_VECTOR) {  // never to another vector type
    return t->width == shape.width && t->scalar == shape.elem ? COST_EXACT
                                                              : NOT_VIABLE;
  }
  if (!dc__ty_is_arithmetic(t)) return NOT_VIABLE;
  if (shape.width > 1) return may_splat ? COST_SPLAT : NOT_VIABLE;
  return scalar_cost(t, shape.elem);
}

static bool has_shape(const dc__ty_t* t, shape_t s) {
  if (s.kind == DC_TY_EVENT) return t->kind == DC_TY_EVENT;
  if (s.width == 1) return t->kind == DC_TY_SCALAR && t->scalar == s.elem;
  return t->kind == DC_TY_VECTOR && t->width == s.width && t->scalar == s.elem;
}

// The cost of passing |arg| as a pointer to |shape| in one of the slot's
// address spaces (written to *space). The pointee must be |shape| exactly;
// the pointer may only gain const or volatile, never lose them.
static int pointer_cost(const arg_view_t* arg, const slot_t* slot,
                        shape_t shape, dc_address_space_t* space) {
  const dc__ty_t* p = arg->pointee;
  if (p == NULL || !(slot->spaces & (1u << p->space))) return NOT_VIABLE;
  if (!has_shape(unqualified(p), shape)) return NOT_VIABLE;
  unsigned quals = p->quals & (DC_Q_CONST | DC_Q_VOLATILE);
  if (quals & ~(unsigned)slot->quals) return NOT_VIABLE;
  *space = p->space;
  return quals == slot->quals ? COST_EXACT : COST_QUALIFY;
}

//===-- Resolution --------------------------------------------------------===//

// How a call picks its overload (OpenCL C 1.2 section 6.12, read the way
// clang reads it where clang is definite):
//
//  1. Candidates: for each family line of the name with as many parameters
//     as the call has arguments, each gentype G (an element of the
//     family's set, at width 1 or at the width of a vector argument) whose
//     parameters every argument converts to implicitly:
//       - by value, a scalar to any scalar number (promotions and integer
//         <-> floating conversions included); a vector only to the same
//         vector type; a scalar to a vector parameter of G's width only
//         after an earlier argument has fixed that width (fma(v, v, s),
//         pown(v, 2), the engine's "later arguments may be scalars");
//       - a pointer (or an array, decayed) only to a pointer whose pointee
//         has the same unqualified type, in one of the allowed address
//         spaces, gaining const or volatile but never losing them;
//       - event_t only to event_t, which the integer constant 0 (no
//         event) also converts to, as clang has it:
//         async_work_group_copy(l, g, n, 0);
//  2. An exact match (every argument's type is the parameter's, ignoring a
//     by-value argument's qualifiers) wins outright; lines and gentypes are
//     tried in table order.
//  3. Otherwise the target gentype is the usual arithmetic conversion of
//     the arguments passed as G, S or V (vector beats scalar), with three
//     refinements: a literal (an unsuffixed integer, any floating one)
//     adopts the other arguments' type, so rotate(c, 1) stays char,
//     fmin(f, 1.0) stays float and fmin(d, 1.0f) stays double, while a
//     floating literal among integers makes the target floating
//     (fmax(i, 0.5) is double); where float and double variables still
//     meet, float wins (clang calls fmin(float, double) ambiguous; the
//     float overload is the cheap one every device has); an integer
//     scalar given to a floating-only built-in computes in double
//     (sqrt(2), pow(i, 2)), or float where the built-in has no double
//     form (native_*, half_*). Among the candidates, one of the target
//     gentype wins over others, then the lowest total conversion cost (a
//     scalar parameter beats a splat: max(float4, 0) takes
//     max(float4, float)), then table order.
//  4. If no candidate has the target gentype and the cheapest ones differ
//     in gentype (upsample(long, ulong), mul24(long, long), nan(5)), the
//     call is ambiguous, as clang finds it: an error rather than a guess
//     that would truncate.
//  5. No candidate: an error naming the built-in, the argument types and
//     what it accepts.

// A gentype: its element and width.
typedef struct gentype_t {
  dc__scalar_t elem;
  uint8_t width;
} gentype_t;

// The target of step 3 while it is computed.
typedef struct target_t {
  enum { TARGET_NONE, TARGET_SET, TARGET_CONFLICT } state;
  gentype_t type;
} target_t;

static int integer_rank(dc__scalar_t e) {
  return dc__scalar_size(e) >= 8 ? 2 : 1;
}

// C's usual arithmetic conversions on two scalar elements, except that
// float wins over double (step 3).
static dc__scalar_t arithmetic_conversion(dc__scalar_t a, dc__scalar_t b) {
  if (a == b) return a;
  if (is_floating_element(a) || is_floating_element(b)) {
    return a == DC_SCALAR_FLOAT || b == DC_SCALAR_FLOAT ? DC_SCALAR_FLOAT
                                                        : DC_SCALAR_DOUBLE;
  }
  a = promoted(a);
  b = promoted(b);
  if (a == b) return a;
  bool sa = is_signed_element(a), sb = is_signed_element(b);
  if (sa == sb) {
    if (integer_rank(a) != integer_rank(b)) {
      return integer_rank(a) > integer_rank(b) ? a : b;
    }
    return int_of_size(8, sa);  // size_t beside ulong: ulong
  }
  dc__scalar_t u = sa ? b : a, s = sa ? a : b;
  // A longer signed type (long) holds every value of a shorter unsigned.
  return integer_rank(u) >= integer_rank(s) ? u : s;
}

static void merge_target(target_t* t, gentype_t g) {
  if (t->state == TARGET_CONFLICT) return;
  if (t->state == TARGET_NONE) {
    *t = (target_t){TARGET_SET, g};
  } else if (t->type.width > 1 && g.width > 1) {
    if (t->type.width != g.width || t->type.elem != g.elem) {
      t->state = TARGET_CONFLICT;
    }
  } else if (g.width > 1) {
    t->type = g;  // a vector and a scalar: the vector's type
  } else if (t->type.width == 1) {
    t->type.elem = arithmetic_conversion(t->type.elem, g.elem);
  }
}

static bool gentype_of(const dc__ty_t* t, gentype_t* out) {
  if (t == NULL) return false;
  if (t->kind == DC_TY_VECTOR) {
    *out = (gentype_t){t->scalar, t->width};
    return true;
  }
  if (!dc__ty_is_arithmetic(t)) return false;
  *out = (gentype_t){dc__ty_element(t), 1};
  return true;
}

// Step 3's target for one family line, or TARGET_NONE. |elements| are
// those of all the name's lines (abs has an integer and a floating one).
static target_t target_of(const signature_t* sig, uint32_t elements,
                          const arg_view_t* args) {
  target_t strong = {0}, weak = {0};
  dc__scalar_t weak_floating = DC_SCALAR_VOID;  // floating literals' type
  for (uint32_t i = 0; i < sig->count; ++i) {
    const slot_t* slot = &sig->params[i];
    gentype_t g;
    if (!carries_element(slot->kind)) continue;
    if (slot->pointer) {
      if (gentype_of(unqualified(args[i].pointee), &g)) {
        merge_target(&strong, g);
      }
    } else if (gentype_of(args[i].type, &g)) {
      merge_target(args[i].weak ? &weak : &strong, g);
      if (args[i].weak && is_floating_element(g.elem)) {
        weak_floating = weak_floating == DC_SCALAR_VOID
                            ? g.elem
                            : arithmetic_conversion(weak_floating, g.elem);
      }
    }
  }
  target_t t = strong.state == TARGET_NONE ? weak : strong;
  if (t.state != TARGET_SET) return t;
  bool integer = !is_floating_element(t.type.elem);
  if (strong.state == TARGET_SET && weak_floating != DC_SCALAR_VOID &&
      integer) {
    t.type.elem = weak_floating;  // fmax(i, 0.5): double
    integer = false;
  }
  if (integer && t.type.width == 1 && !(elements & EL_INTEGER)) {
    t.type.elem = (elements & EL(DOUBLE)) ? DC_SCALAR_DOUBLE
                                           : DC_SCALAR_FLOAT;
  }
  return t;
}

// The widths G may have for |sig|: 1 and each vector argument's width,
// among the family's.
static uint32_t candidate_widths(const signature_t* sig, const dc__builtin_family_t* f,
                                 const arg_view_t* args) {
  uint32_t widths = W_ONE;
  for (uint32_t i = 0; i < sig->count; ++i) {
    if (!carries_width(sig->params[i].kind)) continue;
    const dc__ty_t* t =
        sig->params[i].pointer ? unqualified(args[i].pointee) : args[i].type;
    if (t != NULL && t->kind == DC_TY_VECTOR) widths |= WD(t->width);
  }
  return widths & f->widths;
}

// One way to call the built-in: a family line at one gentype.
typedef struct candidate_t {
  uint32_t family;  // index into dc__builtin_families
  gentype_t gentype;
  int cost;
  bool on_target;
  // Best so far only: another candidate off the target, as cheap, has
  // another gentype (step 4).
  bool ambiguous;
  dc_address_space_t spaces[DC_BUILTIN_MAX_PARAMS];  // of pointer params
} candidate_t;

// The total cost of calling family line |c->family| at |c->gentype| with
// |args|, filling c->spaces; NOT_VIABLE if an argument does not convert.
static int match_family(candidate_t* c, const arg_view_t* args) {
  const dc__builtin_family_t* f = &dc__builtin_families[c->family];
  const signature_t* sig = &g_signatures[c->family];
  int total = 0;
  bool width_fixed = false;  // an earlier argument set G's width
  for (uint32_t i = 0; i < sig->count; ++i) {
    const slot_t* slot = &sig->params[i];
    shape_t shape = slot_shape(slot->kind, c->gentype.elem, c->gentype.width,
                               f->n);
    int cost = slot->pointer
                   ? pointer_cost(&args[i], slot, shape, &c->spaces[i])
                   : value_cost(&args[i], shape,
                                width_fixed && carries_width(slot->kind));
    if (cost == NOT_VIABLE) return NOT_VIABLE;
    width_fixed |= carries_width(slot->kind);
    total += cost;
  }
  return total;
}

static bool better(const candidate_t* a, const candidate_t* b) {
  if (b->cost == NOT_VIABLE) return true;
  if (a->on_target != b->on_target) return a->on_target;
  return a->cost < b->cost;
}

// Keeps |c| in *best if it is better; notes a tie that makes the call
// ambiguous.
static void consider(const candidate_t* c, candidate_t* best) {
  if (better(c, best)) {
    *best = *c;
  } else if (!c->on_target && !best->on_target && c->cost == best->cost &&
             (c->gentype.elem != best->gentype.elem ||
              c->gentype.width != best->gentype.width)) {
    best->ambiguous = true;
  }
}

// Tries every gentype of family line |index|; keeps the best in *best.
// |name_elements|: those of every line of the name. True once an exact
// match is found (step 2).
static bool try_family(uint32_t index, uint32_t name_elements,
                       const arg_view_t* args, candidate_t* best) {
  const dc__builtin_family_t* f = &dc__builtin_families[index];
  const signature_t* sig = &g_signatures[index];
  target_t target = target_of(sig, name_elements, args);
  uint32_t widths = candidate_widths(sig, f, args);
  uint32_t elements = f->elements ? f->elements : EL(VOID);
  for (unsigned w = 1; w <= 16; ++w) {
    if (!(widths & WD(w))) continue;
    for (unsigned e = 0; e <= DC_SCALAR_PTRDIFF_T; ++e) {
      if (!(elements & (1u << e))) continue;
      if (w > 1 && (e == DC_SCALAR_SIZE_T || e == DC_SCALAR_PTRDIFF_T)) {
        continue;  // no vectors of these
      }
      candidate_t c = {.family = index,
                       .gentype = {(dc__scalar_t)e, (uint8_t)w}};
      c.cost = match_family(&c, args);
      if (c.cost == NOT_VIABLE) continue;
      c.on_target = target.state == TARGET_SET && target.type.elem == e &&
                    target.type.width == w;
      if (c.cost == COST_EXACT) {
        *best = c;
        return true;
      }
      consider(&c, best);
    }
  }
  return false;
}

static const dc__ty_t* slot_type(dc__types_t* types, const slot_t* slot,
                                 const candidate_t* c, unsigned n,
                                 dc_address_space_t space) {
  shape_t shape =
      slot_shape(slot->kind, c->gentype.elem, c->gentype.width, n);
  const dc__ty_t* t = shape_type(types, shape);
  if (!slot->pointer) return t;
  return dc__ty_pointer(types, dc__ty_qualified(types, t, slot->quals, space));
}

// The chosen overload, typed; NULL if the arena is out of memory.
static dc__builtin_t* build_overload(dc__types_t* types, dc__arena_t* arena,
                                     const candidate_t* c) {
  const dc__builtin_family_t* f = &dc__builtin_families[c->family];
  const signature_t* sig = &g_signatures[c->family];
  dc__builtin_t* b = dc__arena_zalloc(arena, 1, sizeof(*b));
  if (b == NULL) return NULL;
  b->name = f->name;
  b->spelling = f->spelling;
  b->klass = (dc__builtin_class_t)f->klass;
  b->result = slot_type(types, &sig->result, c, f->n, DC_ADDRESS_PRIVATE);
  b->param_count = sig->count;
  bool complete = b->result != NULL;
  for (uint32_t i = 0; i < sig->count; ++i) {
    const slot_t* slot = &sig->params[i];
    b->params[i] = slot_type(types, slot, c, f->n, c->spaces[i]);
    complete &= b->params[i] != NULL;
    if (slot->pointer && !(slot->quals & DC_Q_CONST)) {
      b->writes_through |= 1u << i;
    }
  }
  return complete ? b : NULL;
}

//===-- Messages ----------------------------------------------------------===//

// Appends to a fixed buffer, truncating (the caller's |why|).
typedef struct text_t {
  char* at;
  size_t left;
} text_t;

static void append(text_t* t, const char* format, ...) DC_PRINTF_LIKE(2, 3);
static void append(text_t* t, const char* format, ...) {
  if (t->left == 0) return;
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(t->at, t->left, format, ap);
  va_end(ap);
  if (n < 0) return;
  size_t used = (size_t)n < t->left ? (size_t)n : t->left - 1;
  t->at += used;
  t->left -= used;
}

// "no overload of 'name' takes (int, float4); it takes <accepts>".
static void explain(char* why, size_t why_size, dc__arena_t* arena,
                    const char* name, size_t length,
                    dc__expr_t* const* args, uint32_t arg_count,
                    const char* accepts) {
  if (why == NULL || why_size == 0) return;
  text_t t = {why, why_size};
  append(&t, "no overload of '%.*s' takes (", (int)length, name);
  for (uint32_t i = 0; i < arg_count; ++i) {
    const dc__ty_t* type = args[i] ? args[i]->type : NULL;
    append(&t, "%s%s", i ? ", " : "", dc__ty_name(arena, type));
  }
  append(&t, "); it takes %s", accepts);
}

static void fail(char* why, size_t why_size, const char* format, ...)
    DC_PRINTF_LIKE(3, 4);
static void fail(char* why, size_t why_size, const char* format, ...) {
  if (why == NULL || why_size == 0) return;
  va_list ap;
  va_start(ap, format);
  vsnprintf(why, why_size, format, ap);
  va_end(ap);
}

//===-- Families ----------------------------------------------------------===//

static const dc__builtin_t* resolve_family(
    dc__types_t* types, dc__arena_t* arena, size_t lo, size_t hi,
    dc__expr_t* const* args, uint32_t arg_count, char* why,
    size_t why_size) {
  const char* name = dc__builtin_families[g_order[lo]].name;
  const char* accepts = dc__builtin_families[g_order[lo]].accepts;
  candidate_t best = {.cost = NOT_VIABLE};
  if (arg_count <= DC_BUILTIN_MAX_PARAMS) {
    arg_view_t views[DC_BUILTIN_MAX_PARAMS];
    for (uint32_t i = 0; i < arg_count; ++i) views[i] = view_of(args[i]);
    uint32_t elements = 0;
    for (size_t k = lo; k < hi; ++k) elements |= dc__builtin_families[g_order[k]].elements;
    for (size_t k = lo; k < hi; ++k) {
      if (g_signatures[g_order[k]].count != arg_count) continue;
      if (try_family(g_order[k], elements, views, &best)) break;
    }
  }
  if (best.cost == NOT_VIABLE || best.ambiguous) {
    explain(why, why_size, arena, name, strlen(name), args, arg_count,
            accepts);
    return NULL;
  }
  const dc__builtin_t* b = build_overload(types, arena, &best);
  if (b == NULL) fail(why, why_size, "out of memory resolving '%s'", name);
  return b;
}

//===-- convert_<type> and as_<type> --------------------------------------===//

// The 600 conversion names and 60 reinterpretations are parsed, not listed.
typedef struct named_type_t {
  dc__scalar_t scalar;
  unsigned width;
} named_type_t;

// Reads a type name (char ... double, then an optional width) at the
// start of |text|; returns the bytes it took, 0 if none.
static size_t read_type_name(const char* text, size_t length,
                             named_type_t* out) {
  static const struct {
    const char* name;
    dc__scalar_t scalar;
  } kNames[] = {
      {"char", DC_SCALAR_CHAR},   {"uchar", DC_SCALAR_UCHAR},
      {"short", DC_SCALAR_SHORT}, {"ushort", DC_SCALAR_USHORT},
      {"int", DC_SCALAR_INT},     {"uint", DC_SCALAR_UINT},
      {"long", DC_SCALAR_LONG},   {"ulong", DC_SCALAR_ULONG},
      {"float", DC_SCALAR_FLOAT}, {"double", DC_SCALAR_DOUBLE},
  };
  static const char* const kWidths[] = {"16", "2", "3", "4", "8"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    size_t n = strlen(kNames[i].name);
    if (n > length || memcmp(text, kNames[i].name, n) != 0) continue;
    *out = (named_type_t){kNames[i].scalar, 1};
    for (size_t w = 0; w < sizeof(kWidths) / sizeof(kWidths[0]); ++w) {
      size_t d = strlen(kWidths[w]);
      if (n + d <= length && memcmp(text + n, kWidths[w], d) == 0) {
        out->width = (unsigned)atoi(kWidths[w]);
        return n + d;
      }
    }
    return n;
  }
  return 0;
}

static bool starts_with(const char* text, size_t length, const char* prefix) {
  size_t n = strlen(prefix);
  return length >= n && memcmp(text, prefix, n) == 0;
}

// convert_<type>[_sat][_rte|_rtz|_rtp|_rtn]; _sat only to integer types.
static bool parse_convert(const char* name, size_t length, named_type_t* to) {
  if (!starts_with(name, length, "convert_")) return false;
  size_t at = 8;
  size_t n = read_type_name(name + at, length - at, to);
  if (n == 0) return false;
  at += n;
  if (starts_with(name + at, length - at, "_sat")) {
    if (is_floating_element(to->scalar)) return false;
    at += 4;
  }
  static const char* const kRounding[] = {"_rte", "_rtz", "_rtp", "_rtn"};
  for (size_t i = 0; i < 4 && at < length; ++i) {
    if (starts_with(name + at, length - at, kRounding[i])) at += 4;
  }
  return at == length;
}

static bool parse_as(const char* name, size_t length, named_type_t* to) {
  if (!starts_with(name, length, "as_")) return false;
  size_t n = read_type_name(name + 3, length - 3, to);
  return n != 0 && 3 + n == length;
}

static dc__builtin_t* unary_builtin(dc__types_t* types, dc__arena_t* arena,
                                    const char* name, size_t length,
                                    dc__builtin_class_t klass,
                                    named_type_t to, const dc__ty_t* param) {
  dc__builtin_t* b = dc__arena_zalloc(arena, 1, sizeof(*b));
  if (b == NULL) return NULL;
  b->name = dc__arena_strndup(arena, name, length);
  b->klass = klass;
  b->result = dc__ty_vector(types, to.scalar, to.width);
  b->params[0] = param;
  b->param_count = 1;
  return b->name && b->result && param ? b : NULL;
}

// The by-value parameter an arithmetic argument passes as: its own type,
// except that bool and enums pass as int.
static const dc__ty_t* number_param(dc__types_t* types, const dc__ty_t* t) {
  if (t->kind == DC_TY_ENUM ||
      (t->kind == DC_TY_SCALAR && t->scalar == DC_SCALAR_BOOL)) {
    return dc__ty_scalar(types, DC_SCALAR_INT);
  }
  return t;
}

// convert_<T>(x): x any scalar for a scalar T, any vector of T's width
// for a vector T; the result is exactly T.
static const dc__builtin_t* resolve_convert(
    dc__types_t* types, dc__arena_t* arena, const char* name, size_t length,
    named_type_t to, dc__expr_t* const* args, uint32_t arg_count, char* why,
    size_t why_size) {
  const dc__ty_t* t = arg_count == 1 ? view_of(args[0]).type : NULL;
  bool ok = t != NULL &&
            (to.width == 1 ? dc__ty_is_arithmetic(t)
                           : t->kind == DC_TY_VECTOR && t->width == to.width);
  if (!ok) {
    char accepts[64];
    if (to.width == 1) {
      snprintf(accepts, sizeof(accepts), "one scalar number");
    } else {
      snprintf(accepts, sizeof(accepts), "one %u-component vector", to.width);
    }
    explain(why, why_size, arena, name, length, args, arg_count, accepts);
    return NULL;
  }
  const dc__builtin_t* b = unary_builtin(types, arena, name, length,
                                         DC_BUILTIN_CONVERT, to,
                                         number_param(types, t));
  if (b == NULL) fail(why, why_size, "out of memory");
  return b;
}

// as_<T>(x): x any scalar or vector number (not bool) of T's size in bytes,
// a 3-component vector taking the room of a 4-component one.
static const dc__builtin_t* resolve_as(dc__types_t* types, dc__arena_t* arena,
                                       const char* name, size_t length,
                                       named_type_t to,
                                       dc__expr_t* const* args,
                                       uint32_t arg_count, char* why,
                                       size_t why_size) {
  uint32_t bytes =
      dc__scalar_size(to.scalar) * (to.width == 3 ? 4 : to.width);
  const dc__ty_t* t = arg_count == 1 ? view_of(args[0]).type : NULL;
  bool ok = t != NULL &&
            (t->kind == DC_TY_VECTOR || dc__ty_is_arithmetic(t)) &&
            dc__ty_element(t) != DC_SCALAR_BOOL && dc__ty_size(t) == bytes;
  if (!ok) {
    char accepts[64];
    snprintf(accepts, sizeof(accepts), "one scalar or vector of %u bytes",
             bytes);
    explain(why, why_size, arena, name, length, args, arg_count, accepts);
    return NULL;
  }
  const dc__builtin_t* b = unary_builtin(types, arena, name, length,
                                         DC_BUILTIN_REINTERPRET, to,
                                         number_param(types, t));
  if (b == NULL) fail(why, why_size, "out of memory");
  return b;
}

//===-- Constants ---------------------------------------------------------===//

// The constants a kernel may use that the preprocessor does not define
// (it predefines the limits, FLT_*, DBL_* and M_* macros as literals).
typedef struct constant_t {
  const char* name;
  dc__scalar_t type;
  int64_t i;
  double f;
} constant_t;

static const constant_t kConstants[] = {
    {"CLK_GLOBAL_MEM_FENCE", DC_SCALAR_UINT, 2, 0},  // cl_mem_fence_flags
    {"CLK_LOCAL_MEM_FENCE", DC_SCALAR_UINT, 1, 0},
    {"FP_ILOGB0", DC_SCALAR_INT, INT32_MIN, 0},  // as the preludes define
    {"FP_ILOGBNAN", DC_SCALAR_INT, INT32_MAX, 0},
    {"HUGE_VAL", DC_SCALAR_DOUBLE, 0, INFINITY},
    {"HUGE_VALF", DC_SCALAR_FLOAT, 0, INFINITY},
    {"INFINITY", DC_SCALAR_FLOAT, 0, INFINITY},
    {"MAXFLOAT", DC_SCALAR_FLOAT, 0, FLT_MAX},
    {"NAN", DC_SCALAR_FLOAT, 0, NAN},
};

static const constant_t* find_constant(const char* name, size_t length) {
  for (size_t i = 0; i < sizeof(kConstants) / sizeof(kConstants[0]); ++i) {
    if (compare_name(name, length, kConstants[i].name) == 0) {
      return &kConstants[i];
    }
  }
  return NULL;
}

//===-- API ---------------------------------------------------------------===//

bool dc__builtin_known(const char* name, size_t length,
                       bool* out_is_constant) {
  bool is_constant = find_constant(name, length) != NULL;
  if (out_is_constant != NULL) *out_is_constant = is_constant;
  size_t lo, hi;
  named_type_t to;
  return is_constant || find_families(name, length, &lo, &hi) ||
         parse_convert(name, length, &to) || parse_as(name, length, &to);
}

const dc__builtin_t* dc__builtin_constant(dc__types_t* types,
                                          dc__arena_t* arena,
                                          const char* name, size_t length) {
  const constant_t* c = find_constant(name, length);
  if (c == NULL) return NULL;
  dc__builtin_t* b = dc__arena_zalloc(arena, 1, sizeof(*b));
  if (b == NULL) return NULL;
  b->name = c->name;
  b->klass = DC_BUILTIN_CONSTANT;
  b->result = dc__ty_scalar(types, c->type);
  if (is_floating_element(c->type)) {
    b->value.f = c->f;
  } else {
    b->value.i = c->i;
  }
  return b->result != NULL ? b : NULL;
}

const dc__builtin_t* dc__builtin_resolve(dc__types_t* types,
                                         dc__arena_t* arena, const char* name,
                                         size_t length,
                                         dc__expr_t* const* args,
                                         uint32_t arg_count, char* why,
                                         size_t why_size) {
  if (why != NULL && why_size > 0) why[0] = '\0';
  size_t lo, hi;
  named_type_t to;
  if (find_families(name, length, &lo, &hi)) {
    return resolve_family(types, arena, lo, hi, args, arg_count, why,
                          why_size);
  }
  if (parse_convert(name, length, &to)) {
    return resolve_convert(types, arena, name, length, to, args, arg_count,
                           why, why_size);
  }
  if (parse_as(name, length, &to)) {
    return resolve_as(types, arena, name, length, to, args, arg_count, why,
                      why_size);
  }
  fail(why, why_size, "'%.*s' is not a built-in function", (int)length,
       name);
  return NULL;
}

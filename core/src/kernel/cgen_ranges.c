// cgen_ranges.c: the index ranges of a checked kernel's accesses, so that
// their checks can be made once for a chunk of work-groups instead of at
// every access.
//
// A checked access is a compare and a branch that may leave the dispatch,
// and a C compiler vectorises no loop that holds one. Yet most indexes of
// real kernels are simple functions of the work-item's position: get_
// global_id(0), row * n + col, a loop counter running to a constant. For
// those, the planner below writes C that computes, from the launch and the
// arguments alone, an interval that holds every value the index takes in a
// chunk of groups (interval arithmetic, in 128 bits, with every step
// checked to fit the type the kernel computes it in, so the interval is of
// the values C really computes). A back end that can run a kernel in two
// versions (the CPU's) then runs a chunk in the version without those
// checks when every interval lies in its array or buffer, and in the fully
// checked version otherwise: a fault is still found, at the access where
// it happens, and nothing outside the kernel's memory is ever reached.
//
// What an index may be made of: integer constants; the work-item functions
// (get_global_id and the rest, with a constant dimension); scalar kernel
// parameters and variables that are never assigned after their
// initialiser; counters of loops of the form for (i = a; i < b; i += c)
// whose body leaves i alone; and + - * of those, / % & >> by constants and
// conversions between integer types. Accesses are p[i] with p a pointer
// parameter the kernel never changes, and a[i] of any array.
// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <string.h>

#include "builtin_table.h"
#include "cgen.h"
#include "tree_walk.h"

enum {
  kMaxPrechecks = 512,    // accesses planned per kernel
  kMaxLoops = 64,         // loop counters known at once
  kMaxSubstitutions = 8,  // variables replaced by their initialisers
  kMaxText = 4096,        // characters of one interval's C
  kShortLoopTrips = 256,  // a loop this short needs no poll
};

typedef struct loop_fact_t {
  const dc__decl_t* counter;
  const char* range;  // C for the counter's interval in the body, or NULL
} loop_fact_t;

typedef struct planner_t {
  dc__cgen_t* g;
  const dc__function_t* fn;
  bool jumps;  // the function has goto or labels: no loop is known
  loop_fact_t loops[kMaxLoops];
  uint32_t loop_count;
  uint32_t substitutions;
  bool unplanned;  // a checked access that is not planned
  dc__strbuf_t* conditions;
} planner_t;

static bool has_op(const dc__expr_t* e, const char* op) {
  return e->op != NULL && strcmp(e->op, op) == 0;
}

static const dc__expr_t* strip_reads(const dc__expr_t* e) {
  while (e != NULL && e->kind == DC_EXPR_CAST && e->conv == DC_CONV_NONE) {
    e = e->lhs;
  }
  return e;
}

//===-- Integer types -----------------------------------------------------===//

// The bounds of integer type |t| as C literals of __int128 values; false
// for a type that is no integer (bool, floats, vectors, pointers).
static bool int_limits(const dc__ty_t* t, const char** lo, const char** hi) {
  if (t->kind == DC_TY_ENUM) {
    *lo = "(-2147483647 - 1)";
    *hi = "2147483647";
    return true;
  }
  if (t->kind != DC_TY_SCALAR) return false;
  switch (t->scalar) {
    case DC_SCALAR_CHAR: *lo = "(-128)"; *hi = "127"; return true;
    case DC_SCALAR_UCHAR: *lo = "0"; *hi = "255"; return true;
    case DC_SCALAR_SHORT: *lo = "(-32768)"; *hi = "32767"; return true;
    case DC_SCALAR_USHORT: *lo = "0"; *hi = "65535"; return true;
    case DC_SCALAR_INT: *lo = "(-2147483647 - 1)"; *hi = "2147483647"; return true;
    case DC_SCALAR_UINT: *lo = "0"; *hi = "4294967295u"; return true;
    case DC_SCALAR_LONG:
    case DC_SCALAR_PTRDIFF_T:
      *lo = "(-9223372036854775807ll - 1)";
      *hi = "9223372036854775807ll";
      return true;
    case DC_SCALAR_ULONG:
    case DC_SCALAR_SIZE_T:
      *lo = "0";
      *hi = "18446744073709551615ull";
      return true;
    default:
      return false;
  }
}

static bool is_unsigned64(const dc__ty_t* t) {
  return t->kind == DC_TY_SCALAR &&
         (t->scalar == DC_SCALAR_ULONG || t->scalar == DC_SCALAR_SIZE_T);
}

// The value of integer constant |e| as a C literal.
static const char* literal(dc__cgen_t* g, const dc__expr_t* e) {
  if (is_unsigned64(e->type)) {
    return dc__arena_printf(g->arena, "%" PRIu64 "ull", (uint64_t)e->value.i);
  }
  if (e->value.i == INT64_MIN) return "(-9223372036854775807ll - 1)";
  return dc__arena_printf(g->arena, "%" PRId64 "ll", e->value.i);
}

//===-- Loops -------------------------------------------------------------===//

typedef struct writes_t {
  const dc__decl_t* var;
  bool address;  // look for &var only, instead of stores and steps
} writes_t;

static bool writes_var(const dc__expr_t* e, void* ctx) {
  const writes_t* w = ctx;
  bool hit;
  if (w->address) {
    hit = e->kind == DC_EXPR_UNARY && has_op(e, "&");
  } else {
    hit = e->kind == DC_EXPR_ASSIGN ||
          (e->kind == DC_EXPR_UNARY && e->op != NULL &&
           (strstr(e->op, "++") != NULL || strstr(e->op, "--") != NULL));
  }
  return hit && dc__expr_root(e->lhs) == w->var;
}

static bool stmt_is(const dc__stmt_t* s, dc__stmt_kind_t a,
                    dc__stmt_kind_t b) {
  return s->kind == a || s->kind == b;
}

// Whether |s| holds a statement of kind |a| or |b|; a case label counts
// only when no switch inside |s| owns it (a jump into |s| from outside).
static bool holds(const dc__stmt_t* s, dc__stmt_kind_t a, dc__stmt_kind_t b,
                  bool in_switch) {
  if (s == NULL) return false;
  if (stmt_is(s, a, b) && (s->kind != DC_STMT_CASE || !in_switch)) {
    return true;
  }
  bool inner = in_switch || s->kind == DC_STMT_SWITCH;
  for (uint32_t i = 0; i < s->child_count; ++i) {
    if (holds(s->children[i], a, b, inner)) return true;
  }
  return holds(s->init, a, b, inner) || holds(s->body, a, b, inner) ||
         holds(s->else_body, a, b, inner);
}

static bool holds_loop(const dc__stmt_t* s) {
  return holds(s, DC_STMT_FOR, DC_STMT_WHILE, true) ||
         holds(s, DC_STMT_DO, DC_STMT_LABEL, true);
}

// The parts of a counted loop: for (i = init; i < end; i += step), or
// with <=, ++i, i++; i an integer variable whose address the function
// never takes and that nothing but the step changes; no case label of an
// outer switch inside the body.
typedef struct counted_t {
  const dc__decl_t* counter;
  const dc__expr_t* init;
  const dc__expr_t* end;
  int64_t step;
  bool inclusive;
} counted_t;

static bool counted_loop(const dc__function_t* fn, const dc__stmt_t* s,
                         counted_t* c) {
  if (s->kind != DC_STMT_FOR || s->init == NULL || s->value == NULL ||
      s->step_value == NULL) {
    return false;
  }
  const dc__decl_t* d = NULL;
  const dc__expr_t* init = NULL;
  if (s->init->kind == DC_STMT_DECL && s->init->declarator_count == 1) {
    d = s->init->declarators[0].decl;
    init = d != NULL ? d->init : NULL;
  } else if (s->init->kind == DC_STMT_EXPR && s->init->value != NULL &&
             s->init->value->kind == DC_EXPR_ASSIGN &&
             has_op(s->init->value, "=")) {
    const dc__expr_t* lhs = s->init->value->lhs;
    d = lhs->kind == DC_EXPR_NAME ? lhs->decl : NULL;
    init = s->init->value->rhs;
  }
  const char* lo;
  const char* hi;
  if (d == NULL || init == NULL || d->kind != DC_DECL_VAR ||
      (d->type->quals & DC_Q_VOLATILE) || !int_limits(d->type, &lo, &hi)) {
    return false;
  }
  // The test: the counter itself, unconverted, against the end.
  const dc__expr_t* test = s->value;
  while (test->kind == DC_EXPR_CAST && test->conv != DC_CONV_SPLAT &&
         test->conv != DC_CONV_VECTOR) {
    test = test->lhs;
  }
  if (test->kind != DC_EXPR_BINARY ||
      (!has_op(test, "<") && !has_op(test, "<="))) {
    return false;
  }
  const dc__expr_t* counter = strip_reads(test->lhs);
  if (counter->kind != DC_EXPR_NAME || counter->decl != d ||
      test->lhs->type->unqualified != d->type->unqualified) {
    return false;
  }
  // The step: ++i, i++, or i += a positive constant.
  const dc__expr_t* step = s->step_value;
  int64_t by = 0;
  if (step->kind == DC_EXPR_UNARY &&
      (has_op(step, "++x") || has_op(step, "x++"))) {
    by = 1;
  } else if (step->kind == DC_EXPR_ASSIGN && has_op(step, "+=") &&
             step->rhs->is_constant && step->rhs->value.i > 0 &&
             step->rhs->value.i < INT32_MAX) {
    by = step->rhs->value.i;
  }
  if (by == 0 || dc__expr_root(step->lhs) != d) return false;
  writes_t body_writes = {.var = d, .address = false};
  writes_t addresses = {.var = d, .address = true};
  if (dc__stmt_any(s->body, writes_var, &body_writes) ||
      dc__expr_any(s->value, writes_var, &body_writes) ||
      dc__stmt_any(fn->body, writes_var, &addresses) ||
      holds(s->body, DC_STMT_CASE, DC_STMT_CASE, false)) {
    return false;
  }
  *c = (counted_t){.counter = d,
                   .init = init,
                   .end = test->rhs,
                   .step = by,
                   .inclusive = has_op(test, "<=")};
  return true;
}

bool dc__cgen_short_loop(const dc__cgen_t* g, const dc__stmt_t* s) {
  counted_t c;
  if (g->fn == NULL || g->fn->body == NULL ||
      holds(g->fn->body, DC_STMT_GOTO, DC_STMT_LABEL, false) ||
      !counted_loop(g->fn, s, &c) || holds_loop(s->body) ||
      !c.init->is_constant || !c.end->is_constant ||
      is_unsigned64(c.init->type) || is_unsigned64(c.end->type)) {
    return false;
  }
  int64_t first = c.init->value.i;
  int64_t last = c.end->value.i - (c.inclusive ? 0 : 1);
  if (last < first) return true;  // never runs
  // Far below any type's limit, so the step cannot wrap the counter.
  return (last - first) / c.step < kShortLoopTrips &&
         last < INT32_MAX - c.step && first > INT32_MIN;
}

//===-- Intervals ---------------------------------------------------------===//

static const char* range_of(planner_t* p, const dc__expr_t* e);

// |text| (the C of an interval of |t|'s arithmetic) checked to fit |t|.
static const char* fit(planner_t* p, const dc__ty_t* t, const char* text) {
  const char* lo;
  const char* hi;
  if (text == NULL || !int_limits(t, &lo, &hi) || strlen(text) > kMaxText) {
    return NULL;
  }
  return dc__arena_printf(p->g->arena, "dc_rfit(%s, %s, %s)", text, lo, hi);
}

// The work-item functions, in the check function's terms: dc_glo/dc_ghi
// are the chunk's first and last group per dimension (the prelude's
// DC_GROUP_RANGE), _ls0.. and the rest the launch's.
static const char* work_item_range(planner_t* p, const dc__expr_t* e) {
  if (e->arg_count != 1 || !e->args[0]->is_constant) return NULL;
  int64_t d = e->args[0]->value.i;
  if (d < 0 || d > 2) return NULL;
  const char* name = e->builtin->name;
  dc__arena_t* a = p->g->arena;
  if (strcmp(name, "get_global_id") == 0) {
    return dc__arena_printf(
        a,
        "dc_rs((__int128)_go%d + (__int128)dc_glo[%d] * _ls%d,"
        " (__int128)_go%d + (__int128)dc_ghi[%d] * _ls%d + _ls%d - 1)",
        (int)d, (int)d, (int)d, (int)d, (int)d, (int)d, (int)d);
  }
  if (strcmp(name, "get_local_id") == 0) {
    return dc__arena_printf(a, "dc_rs(0, (__int128)_ls%d - 1)", (int)d);
  }
  if (strcmp(name, "get_group_id") == 0) {
    return dc__arena_printf(a, "dc_rs(dc_glo[%d], dc_ghi[%d])", (int)d,
                            (int)d);
  }
  static const struct {
    const char* name;
    const char* var;
  } kExact[] = {{"get_local_size", "_ls"},
                {"get_enqueued_local_size", "_ls"},
                {"get_global_size", "_gs"},
                {"get_num_groups", "_ng"},
                {"get_global_offset", "_go"}};
  for (size_t i = 0; i < sizeof(kExact) / sizeof(kExact[0]); ++i) {
    if (strcmp(name, kExact[i].name) == 0) {
      return dc__arena_printf(a, "dc_rk((__int128)%s%d)", kExact[i].var,
                              (int)d);
    }
  }
  return NULL;
}

static const char* name_range(planner_t* p, const dc__expr_t* e) {
  const dc__decl_t* d = e->decl;
  for (uint32_t i = p->loop_count; i-- > 0;) {
    if (p->loops[i].counter == d) return p->loops[i].range;
  }
  if (d->is_assigned || (d->type->quals & DC_Q_VOLATILE)) return NULL;
  if (d->kind == DC_DECL_PARAM) {
    bool own = d->param_index < p->fn->param_count &&
               p->fn->decl->params[d->param_index] == d;
    if (!own) return NULL;  // a helper's
    return fit(p, d->type,
               dc__arena_printf(p->g->arena, "dc_rk((__int128)%s)",
                                dc__cgen_name(p->g, d)));
  }
  if ((d->kind != DC_DECL_VAR && d->kind != DC_DECL_GLOBAL) ||
      d->init == NULL || p->substitutions == kMaxSubstitutions) {
    return NULL;
  }
  ++p->substitutions;
  const char* text = fit(p, d->type, range_of(p, d->init));
  --p->substitutions;
  return text;
}

static const char* binary_range(planner_t* p, const dc__expr_t* e) {
  dc__arena_t* a = p->g->arena;
  const char* l = range_of(p, e->lhs);
  if (l == NULL) return NULL;
  static const char* const kBoth[][2] = {
      {"+", "dc_radd"}, {"-", "dc_rsub"}, {"*", "dc_rmul"}};
  for (size_t i = 0; i < 3; ++i) {
    if (!has_op(e, kBoth[i][0])) continue;
    const char* r = range_of(p, e->rhs);
    if (r == NULL) return NULL;
    return dc__arena_printf(a, "%s(%s, %s)", kBoth[i][1], l, r);
  }
  // By a constant: c != 0 for / and %, c >= 0 for &, c below the width
  // for >> (OpenCL takes shift counts modulo it).
  if (!e->rhs->is_constant) return NULL;
  int64_t c = e->rhs->value.i;
  bool big = is_unsigned64(e->rhs->type) && c < 0;
  const char* k = literal(p->g, e->rhs);
  if (has_op(e, "/") && c != 0 && !big) {
    return dc__arena_printf(a, "dc_rdiv(%s, %s)", l, k);
  }
  if (has_op(e, "%") && c != 0 && !big) {
    return dc__arena_printf(a, "dc_rmod(%s, %s)", l, k);
  }
  if (has_op(e, "&") && c >= 0) {
    return dc__arena_printf(a, "dc_rand(%s, %s)", l, k);
  }
  if (has_op(e, ">>") && c >= 0 && c < 32) {
    return dc__arena_printf(a, "dc_rshr(%s, %d)", l, (int)c);
  }
  return NULL;
}

static const char* range_of(planner_t* p, const dc__expr_t* e) {
  const char* lo;
  const char* hi;
  if (e == NULL || !int_limits(e->type, &lo, &hi)) return NULL;
  if (e->is_constant) {
    return dc__arena_printf(p->g->arena, "dc_rk((__int128)%s)",
                            literal(p->g, e));
  }
  switch (e->kind) {
    case DC_EXPR_NAME:
      return name_range(p, e);
    case DC_EXPR_CAST:
      if (e->conv != DC_CONV_NONE && e->conv != DC_CONV_ARITH) return NULL;
      return fit(p, e->type, range_of(p, e->lhs));
    case DC_EXPR_BUILTIN:
      if (e->builtin->klass != DC_BUILTIN_WORK_ITEM) return NULL;
      return fit(p, e->type, work_item_range(p, e));
    case DC_EXPR_BINARY:
      return fit(p, e->type, binary_range(p, e));
    case DC_EXPR_UNARY:
      if (has_op(e, "+")) return range_of(p, e->lhs);
      if (!has_op(e, "-")) return NULL;
      const char* inner = range_of(p, e->lhs);
      return inner == NULL ? NULL
                           : fit(p, e->type,
                                 dc__arena_printf(p->g->arena, "dc_rneg(%s)",
                                                  inner));
    default:
      return NULL;
  }
}

// The interval of loop |s|'s counter in its body, NULL if unknown.
static const char* counter_range(planner_t* p, const dc__stmt_t* s,
                                 const dc__decl_t** counter) {
  counted_t c;
  *counter = NULL;
  if (p->jumps || !counted_loop(p->fn, s, &c)) return NULL;
  *counter = c.counter;
  const char* init = range_of(p, c.init);
  const char* end = range_of(p, c.end);
  const char* lo;
  const char* hi;
  if (init == NULL || end == NULL || !int_limits(c.counter->type, &lo, &hi)) {
    return NULL;
  }
  return dc__arena_printf(p->g->arena, "dc_rloop(%s, %s, %" PRId64 ", %d, %s)",
                          init, end, c.step, c.inclusive ? 1 : 0, hi);
}

//===-- Accesses ----------------------------------------------------------===//

// The kernel's own pointer parameter that |e| reads, if the kernel never
// changes it (it then points at the start of its buffer).
static const dc__decl_t* fixed_pointer(planner_t* p, const dc__expr_t* e) {
  e = strip_reads(e);
  if (e->kind != DC_EXPR_NAME || e->decl->kind != DC_DECL_PARAM) return NULL;
  const dc__decl_t* d = e->decl;
  bool own = d->param_index < p->fn->param_count &&
             p->fn->decl->params[d->param_index] == d;
  return own && !d->is_assigned && d->type->kind == DC_TY_POINTER ? d : NULL;
}

// Whether |e| is an access checked mode checks, or a call of a function
// that may make one.
static bool checks(const dc__expr_t* e) {
  switch (e->kind) {
    case DC_EXPR_INDEX:
      return e->lhs->type->kind == DC_TY_POINTER ||
             (e->lhs->type->kind == DC_TY_ARRAY && e->lhs->type->length > 0);
    case DC_EXPR_UNARY:
      return has_op(e, "*");
    case DC_EXPR_MEMBER:
      return e->arrow;
    case DC_EXPR_CALL:
      return true;
    case DC_EXPR_BUILTIN:
      for (uint32_t i = 0; i < e->builtin->param_count; ++i) {
        if (e->builtin->params[i]->kind == DC_TY_POINTER) return true;
      }
      return false;
    default:
      return false;
  }
}

static bool plan_access(const dc__expr_t* e, void* ctx) {
  planner_t* p = ctx;
  dc__cgen_t* g = p->g;
  if (!checks(e)) return false;
  bool unplanned_before = p->unplanned;
  p->unplanned = true;  // until planned below
  if (e->kind != DC_EXPR_INDEX || g->prechecked_count == kMaxPrechecks) {
    return false;
  }
  const dc__ty_t* t = e->lhs->type;
  const char* limit = NULL;
  if (t->kind == DC_TY_ARRAY && t->length > 0) {
    limit = dc__arena_printf(g->arena, "%u", t->length - 1);
  } else if (t->kind == DC_TY_POINTER) {
    const dc__decl_t* d = fixed_pointer(p, e->lhs);
    if (d == NULL) return false;
    limit = dc__arena_printf(
        g->arena, "(__int128)(dc_len[%u] / sizeof(%s)) - 1", d->param_index,
        dc__cgen_declaration(g, t->base, NULL, 0));
  }
  const char* range = limit != NULL ? range_of(p, e->rhs) : NULL;
  if (range == NULL) return false;
  g->prechecked[g->prechecked_count++] = e;
  p->unplanned = unplanned_before;
  dc__strbuf_printf(p->conditions, "\n  dc_ok = dc_ok && dc_rin(%s, 0, %s);",
                    range, limit);
  return false;
}

static void plan_expr(planner_t* p, const dc__expr_t* e) {
  if (e != NULL) dc__expr_any(e, plan_access, p);
}

static void plan_stmt(planner_t* p, const dc__stmt_t* s) {
  if (s == NULL) return;
  switch (s->kind) {
    case DC_STMT_DECL:
      for (uint32_t i = 0; i < s->declarator_count; ++i) {
        const dc__decl_t* d = s->declarators[i].decl;
        if (d != NULL) plan_expr(p, d->init);
      }
      return;
    case DC_STMT_FOR: {
      plan_stmt(p, s->init);
      plan_expr(p, s->value);
      plan_expr(p, s->step_value);
      const dc__decl_t* counter;
      const char* range = counter_range(p, s, &counter);
      bool known = counter != NULL && p->loop_count < kMaxLoops;
      if (known) p->loops[p->loop_count++] = (loop_fact_t){counter, range};
      plan_stmt(p, s->body);
      if (known) --p->loop_count;
      return;
    }
    default:
      plan_expr(p, s->value);
      for (uint32_t i = 0; i < s->child_count; ++i) {
        plan_stmt(p, s->children[i]);
      }
      plan_stmt(p, s->body);
      plan_stmt(p, s->else_body);
      return;
  }
}

bool dc__cgen_plan_prechecks(dc__cgen_t* g, const dc__function_t* fn,
                             dc__strbuf_t* conditions) {
  g->prechecked_count = 0;
  g->prechecked = dc__arena_alloc(g->arena,
                                  kMaxPrechecks * sizeof(*g->prechecked));
  if (g->prechecked == NULL || fn->body == NULL) return false;
  planner_t p = {.g = g,
                 .fn = fn,
                 .jumps = holds(fn->body, DC_STMT_GOTO, DC_STMT_LABEL, false),
                 .conditions = conditions};
  plan_stmt(&p, fn->body);
  g->prechecked_all = !p.unplanned;
  return g->prechecked_count > 0;
}

bool dc__cgen_prechecked(const dc__cgen_t* g, const dc__expr_t* e) {
  if (!g->skip_prechecked) return false;
  for (uint32_t i = 0; i < g->prechecked_count; ++i) {
    if (g->prechecked[i] == e) return true;
  }
  return false;
}

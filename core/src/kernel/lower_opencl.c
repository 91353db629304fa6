// lower_opencl.c: kernels lowered to OpenCL C for a driver's compiler,
// after the prelude (lower_opencl_prelude.h); the OpenCL device builds
// what comes out, and so can any backend (DC_KERNEL_DIALECT_OPENCL_C).
//
// The shared code generator (cgen.h) writes the program from its typed
// tree in the C dialect with OpenCL's own syntax (hooks.opencl): pointed-
// to types keep their address spaces, vector zeros and swizzles are
// OpenCL's. OpenCL C is the kernel language's own base, so, as on CUDA,
// the program keeps its structure: a kernel stays a __kernel function, a
// helper a function, a barrier barrier(), a __local variable a __local
// one. What differs is the entry point: a buffer arrives as its cl_mem
// and a byte offset (the two halves of an encoded handle), the __local
// arguments as offsets into one __local block, and a checked kernel's
// pointers are made fat there, with its bounds, scratch and fault record
// (dc/backend.h, DC_KERNEL_DIALECT_OPENCL_C).
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "builtin_table.h"
#include "cgen.h"
#include "lower.h"
#include "strbuf.h"
#include "tree_walk.h"

extern const char dc__opencl_prelude_text[];  // lower_opencl_prelude.h

// What each kernel's entry point is called: the kernel's own name could
// clash with the prelude's or the driver's names.
#define KERNEL_PREFIX "dc_k_"

// The least checked-mode scratch: a double16, the widest vload.
#define MIN_SCRATCH_BYTES 128u

// A list of statements or declarations, grown in the arena.
typedef struct list_t {
  const void** items;
  uint32_t count, capacity;
} list_t;

typedef struct emitter_t {
  dc__cgen_t g;  // first: the hooks receive it
  dc__strbuf_t out;
  // The kernel being written (plan_returns): the barrier statements of
  // its body's straight-line levels, in order, and the returns that
  // become "done" (done_targets[i]: the index of the barrier that
  // done_returns[i] skips to).
  list_t barriers;
  list_t done_returns;
  uint32_t* done_targets;
  // Its __local variables declared in nested blocks, which OpenCL C
  // takes only in a kernel's outermost scope: declared there instead,
  // named dc_lv<index>_<name>.
  list_t hoisted;
} emitter_t;

static bool push(dc__arena_t* arena, list_t* l, const void* item) {
  if (l->count == l->capacity) {
    uint32_t capacity = l->capacity ? 2 * l->capacity : 16;
    const void** items = dc__arena_alloc(arena, capacity * sizeof(*items));
    if (items == NULL) return false;
    if (l->count) memcpy(items, l->items, l->count * sizeof(*items));
    l->items = items;
    l->capacity = capacity;
  }
  l->items[l->count++] = item;
  return true;
}

// The index of |item| in |l|, or -1.
static int find(const list_t* l, const void* item) {
  for (uint32_t i = 0; i < l->count; ++i) {
    if (l->items[i] == item) return (int)i;
  }
  return -1;
}

static void puts_out(emitter_t* e, const char* s) { dc__cgen_puts(&e->g, s); }

//===-- Hooks -----------------------------------------------------------===//

static bool is_geometric(const char* name) {
  static const char* const kNames[] = {"dot", "length", "distance",
                                       "normalize", "fast_length",
                                       "fast_distance", "fast_normalize"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (strcmp(name, kNames[i]) == 0) return true;
  }
  return false;
}

// An atomic under the name OpenCL C 1.2 gives it for its width: atomic_
// for 32-bit integers, atom_ (cl_khr_int64_*) for 64-bit ones; the
// engine's double exchange is the prelude's.
static const char* atomic_name(dc__cgen_t* g, const dc__builtin_t* b) {
  const char* op = strchr(b->name, '_');
  const dc__ty_t* element = b->params[0]->base;
  if (op == NULL) return NULL;
  if (element->scalar == DC_SCALAR_DOUBLE) return "dc_atomic_xchg";
  bool wide = dc__ty_size(element) == 8;
  return dc__arena_printf(g->arena, "%s%s", wide ? "atom" : "atomic", op);
}

// Built-ins some drivers compute differently from OpenCL C or from the
// other devices, which the prelude's own forms replace (found by the
// differential tests on NVIDIA's driver): lgamma_r's sign, mad_sat of
// longs, saturating conversions of NaN. A program that calls one gets
// its forms (the prelude's DC__NEED_<macro>).
typedef enum quirk_e {
  QUIRK_NONE,
  QUIRK_LGAMMA_R,
  QUIRK_MAD_SAT_LONG,
  QUIRK_SAT_NAN0,
  QUIRK_COUNT
} quirk_t;
static const char* const kQuirkMacros[QUIRK_COUNT] = {
    NULL, "LGAMMA_R", "MAD_SAT_LONG", "SAT_NAN0"};

static quirk_t quirk_of(const dc__builtin_t* b) {
  dc__scalar_t element =
      b->param_count > 0 ? dc__ty_element(b->params[0]) : DC_SCALAR_VOID;
  if (strcmp(b->name, "lgamma_r") == 0) return QUIRK_LGAMMA_R;
  if (strcmp(b->name, "mad_sat") == 0 &&
      (element == DC_SCALAR_LONG || element == DC_SCALAR_PTRDIFF_T)) {
    return QUIRK_MAD_SAT_LONG;  // ptrdiff_t: long, or int (an overload)
  }
  if (b->klass == DC_BUILTIN_CONVERT && strstr(b->name, "_sat") != NULL &&
      (element == DC_SCALAR_FLOAT || element == DC_SCALAR_DOUBLE)) {
    return QUIRK_SAT_NAN0;
  }
  return QUIRK_NONE;
}

static bool note_quirk(const dc__expr_t* x, void* ctx) {
  bool* used = ctx;
  if (x->kind == DC_EXPR_BUILTIN) used[quirk_of(x->builtin)] = true;
  return false;
}

// A saturating conversion of a floating value converts dc_nan0(x), x with
// NaN made 0, through the driver's own (which may be a macro).
static const char* opencl_builtin_arg(dc__cgen_t* g, const dc__builtin_t* b,
                                      uint32_t index) {
  (void)g;
  return index == 0 && quirk_of(b) == QUIRK_SAT_NAN0 ? "dc_nan0" : NULL;
}

// The built-ins OpenCL C 1.2 spells differently from the table.
static const char* opencl_builtin(dc__cgen_t* g, const dc__builtin_t* b) {
  const char* name = b->name;
  dc__scalar_t element =
      b->param_count > 0 ? dc__ty_element(b->params[0]) : DC_SCALAR_VOID;
  if (strcmp(name, "abs") == 0 &&
      (element == DC_SCALAR_FLOAT || element == DC_SCALAR_DOUBLE)) {
    return "fabs";  // the engine's abs of floats
  }
  if (b->klass == DC_BUILTIN_MATH && is_geometric(name) &&
      b->params[0]->kind == DC_TY_VECTOR && b->params[0]->width > 4) {
    const char* base = strncmp(name, "fast_", 5) == 0 ? name + 5 : name;
    return dc__arena_printf(g->arena, "dc_%s", base);
  }
  if (b->klass == DC_BUILTIN_ATOMIC) return atomic_name(g, b);
  if (strcmp(name, "mul24") == 0) return "dc_mul24";  // opencl_prelude.h
  if (strcmp(name, "mad24") == 0) return "dc_mad24";
  switch (quirk_of(b)) {
    case QUIRK_LGAMMA_R:
      return "dc_lgamma_r";
    case QUIRK_MAD_SAT_LONG:
      return "dc_mad_sat";
    default:  // QUIRK_SAT_NAN0 keeps the driver's conversion
      break;
  }
  if (strcmp(name, "get_enqueued_local_size") == 0) {
    return "dc_get_local_size";  // uniform groups: global = local * groups
  }
  if (b->klass == DC_BUILTIN_WORK_ITEM && strcmp(name, "get_work_dim") != 0) {
    return dc__arena_printf(g->arena, "dc_%s", name);  // opencl_prelude.h
  }
  if (strcmp(name, "work_group_barrier") == 0) return "barrier";
  if (g->checked && b->klass == DC_BUILTIN_ASYNC) {
    if (strcmp(name, "async_work_group_copy") == 0) return "DC_ASYNC_COPY";
    if (strcmp(name, "wait_group_events") == 0) return "DC_WAIT_EVENTS";
    if (b->spelling != NULL) return "DC_ASYNC_STRIDED";
  }
  return NULL;
}

// A kernel's __local variables are declared __local (the generator
// writes the spaces of pointed-to types only); barriers order both local
// and global memory, whatever the flags ask for, as on the other devices.
// In a kernel with "done" returns (plan_returns), a return before a
// barrier marks the work-item done and jumps to that barrier, and after
// each barrier a done work-item jumps to the next (or returns after the
// last), so every work-item reaches each barrier of the group.
static bool opencl_stmt(dc__cgen_t* g, const dc__stmt_t* s) {
  emitter_t* e = (emitter_t*)g;
  switch (s->kind) {
    case DC_STMT_DECL:
      if (s->declarator_count == 0 ||
          s->declarators[0].decl->type->space != DC_ADDRESS_LOCAL) {
        return false;
      }
      for (uint32_t i = 0; i < s->declarator_count; ++i) {
        if (find(&e->hoisted, s->declarators[i].decl) >= 0) continue;
        dc__cgen_puts(g, " __local");
        dc__cgen_variable(g, s->declarators[i].decl, NULL);
      }
      return true;
    case DC_STMT_RETURN: {
      int r = g->in_kernel ? find(&e->done_returns, s) : -1;
      if (r < 0) return false;
      dc__cgen_printf(g, " { dc_done = 1; goto dc_b%u; }",
                      e->done_targets[r]);
      return true;
    }
    case DC_STMT_BARRIER: {
      int b = g->in_kernel && e->done_returns.count > 0
                  ? find(&e->barriers, s)
                  : -1;
      if (b >= 0) dc__cgen_printf(g, " dc_b%d: __attribute__((unused));", b);
      dc__cgen_puts(g, " barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);");
      if (b >= 0 && (uint32_t)b + 1 < e->barriers.count) {
        dc__cgen_printf(g, " if (dc_done) goto dc_b%d;", b + 1);
      } else if (b >= 0) {
        dc__cgen_puts(g, " if (dc_done) return;");  // no barrier follows
      }
      return true;
    }
    case DC_STMT_GRID_SYNC:
      // Never runs: the device has max_cooperative_groups 0, so the core
      // refuses every dispatch of a kernel that synchronises its grid.
      // The program builds, for its other kernels.
      dc__cgen_puts(g, " ;");
      return true;
    default:
      return false;
  }
}

// A hoisted __local variable's name (see emitter_t).
static bool opencl_name(dc__cgen_t* g, const dc__decl_t* d) {
  emitter_t* e = (emitter_t*)g;
  int h = g->in_kernel ? find(&e->hoisted, d) : -1;
  if (h < 0) return false;
  dc__cgen_printf(g, "dc_lv%d_%s", h, d->name);
  return true;
}

//===-- Returns before barriers -------------------------------------------===//
//
// The engine's language lets work-items return before a barrier that the
// rest of the group reaches (the returned ones count as arrived: the CPU
// splits kernels at barriers, CUDA's __syncthreads counts exited
// threads); OpenCL C leaves it undefined, and pocl computes garbage. So a
// kernel's body is seen as straight-line levels (its block, and the
// blocks in it that hold barriers), whose items are barrier statements,
// "plain" statements that reach no barrier, and "opaque" ones that do
// (a loop, a condition or a switch holding a barrier, a call of a helper
// that reaches one). A return in a plain statement followed by barriers
// only becomes a "done" return (opencl_stmt); a return that a barrier
// may follow in any other way has no such translation, and the kernel is
// refused at build time.

typedef struct returns_t {
  emitter_t* e;
  const dc__program_ast_t* ast;
  list_t items;       // the levels' items, in order
  list_t returns;     // a plain item's returns (collect_returns)
  const dc__stmt_t* refused;  // the return that cannot be translated
  const dc__stmt_t* seen;     // opaque_order: the first return met
  bool has_label;
} returns_t;

static bool calls_barrier_helper(const dc__expr_t* e, void* ctx) {
  const dc__program_ast_t* ast = ctx;
  if (e->kind != DC_EXPR_CALL || e->decl == NULL) return false;
  const dc__function_t* fn = &ast->functions[e->decl->function];
  return fn->calls_barrier || fn->helper_reaches_barrier;
}

static bool has_barrier_stmt(const dc__stmt_t* s) {
  if (s == NULL || !s->has_barrier) return false;
  if (s->kind == DC_STMT_BARRIER) return true;
  for (uint32_t i = 0; i < s->child_count; ++i) {
    if (has_barrier_stmt(s->children[i])) return true;
  }
  return has_barrier_stmt(s->init) || has_barrier_stmt(s->body) ||
         has_barrier_stmt(s->else_body);
}

// Whether |s| reaches a barrier: its own, or a helper's (grid syncs never
// run on OpenCL).
static bool reaches_barrier(const returns_t* r, const dc__stmt_t* s) {
  return s != NULL &&
         (has_barrier_stmt(s) ||
          dc__stmt_any(s, calls_barrier_helper, (void*)r->ast));
}

static void collect_returns(returns_t* r, const dc__stmt_t* s) {
  if (s == NULL) return;
  if (s->kind == DC_STMT_RETURN) push(r->e->g.arena, &r->returns, s);
  if (s->kind == DC_STMT_LABEL || s->kind == DC_STMT_GOTO) {
    r->has_label = true;
  }
  for (uint32_t i = 0; i < s->child_count; ++i) {
    collect_returns(r, s->children[i]);
  }
  collect_returns(r, s->init);
  collect_returns(r, s->body);
  collect_returns(r, s->else_body);
}

// The first return in opaque item |s| that a barrier of |s| may follow:
// one written before a barrier, or one in a loop that reaches a barrier.
static void opaque_order(returns_t* r, const dc__stmt_t* s) {
  if (s == NULL || r->refused != NULL) return;
  bool loop = s->kind == DC_STMT_FOR || s->kind == DC_STMT_WHILE ||
              s->kind == DC_STMT_DO;
  if (loop && reaches_barrier(r, s)) {
    r->returns.count = 0;
    collect_returns(r, s);
    if (r->returns.count > 0) {
      r->refused = r->returns.items[0];
      return;
    }
  }
  switch (s->kind) {
    case DC_STMT_RETURN:
      if (r->seen == NULL) r->seen = s;
      return;
    case DC_STMT_EXPR:
    case DC_STMT_DECL:
    case DC_STMT_BARRIER:
      if (r->seen != NULL && reaches_barrier(r, s)) r->refused = r->seen;
      return;
    default:
      break;
  }
  if (r->seen != NULL && s->value != NULL &&
      dc__expr_any(s->value, calls_barrier_helper, (void*)r->ast)) {
    r->refused = r->seen;
  }
  opaque_order(r, s->init);
  for (uint32_t i = 0; i < s->child_count; ++i) {
    opaque_order(r, s->children[i]);
  }
  opaque_order(r, s->body);
  opaque_order(r, s->else_body);
}

// Lists the items of the straight-line level |block|.
static void level_items(returns_t* r, const dc__stmt_t* block) {
  for (uint32_t i = 0; i < block->child_count; ++i) {
    const dc__stmt_t* c = block->children[i];
    if (c->kind == DC_STMT_BLOCK && reaches_barrier(r, c)) {
      level_items(r, c);
    } else {
      push(r->e->g.arena, &r->items, c);
    }
  }
}

// Plans kernel |fn|'s returns (see above); false, with the kernel refused
// at the return's line, when one cannot be translated.
static bool plan_returns(emitter_t* e, const dc__function_t* fn) {
  dc__cgen_t* g = &e->g;
  e->barriers.count = 0;
  e->done_returns.count = 0;
  if (!(fn->calls_barrier || fn->helper_reaches_barrier)) return true;
  returns_t r = {.e = e, .ast = g->ast};
  if (fn->body->kind == DC_STMT_BLOCK) {
    level_items(&r, fn->body);
  } else {
    push(g->arena, &r.items, fn->body);
  }
  uint32_t n = r.items.count;
  // after[i]: whether an item reaching a barrier follows item i;
  // opaque_after[i]: one that is not a barrier statement.
  bool* after = dc__arena_zalloc(g->arena, 2 * (size_t)n + 2, 1);
  if (after == NULL) return true;  // the arena failed: reported later
  bool* opaque_after = after + n + 1;
  for (uint32_t i = n; i-- > 1;) {
    const dc__stmt_t* c = r.items.items[i];
    bool barrier = c->kind == DC_STMT_BARRIER;
    bool opaque = !barrier && reaches_barrier(&r, c);
    after[i - 1] = after[i] || barrier || opaque;
    opaque_after[i - 1] = opaque_after[i] || opaque;
  }
  list_t targets = {0};
  for (uint32_t i = 0; i < n && r.refused == NULL; ++i) {
    const dc__stmt_t* c = r.items.items[i];
    if (c->kind == DC_STMT_BARRIER) {
      push(g->arena, &e->barriers, c);
      continue;
    }
    r.returns.count = 0;
    collect_returns(&r, c);
    if (r.returns.count == 0 || !after[i]) continue;
    if (reaches_barrier(&r, c) || opaque_after[i]) {
      r.refused = r.returns.items[0];
      break;
    }
    for (uint32_t k = 0; k < r.returns.count; ++k) {
      push(g->arena, &e->done_returns, r.returns.items[k]);
      push(g->arena, &targets, (const void*)(uintptr_t)e->barriers.count);
    }
  }
  // An opaque item last among barriers: its own returns must not come
  // before its barriers.
  for (uint32_t i = 0; i < n && r.refused == NULL; ++i) {
    const dc__stmt_t* c = r.items.items[i];
    if (c->kind != DC_STMT_BARRIER && reaches_barrier(&r, c) && !after[i]) {
      r.seen = NULL;
      opaque_order(&r, c);
    }
  }
  if (r.refused == NULL && e->done_returns.count > 0) {
    r.returns.count = 0;
    collect_returns(&r, fn->body);  // a goto may jump across barriers
    if (r.has_label) r.refused = e->done_returns.items[0];
  }
  if (r.refused != NULL) {
    const dc__token_t* at = &g->ast->tokens[r.refused->token];
    dc__cgen_fail(g, at, dc__arena_printf(
        g->arena, "kernel '%s' may reach a barrier after this return "
        "(line %u), and OpenCL leaves a barrier that returned work-items "
        "miss undefined; the OpenCL device keeps the engine's meaning "
        "only for a return followed by barriers outside loops, "
        "conditions, switches and helpers, in a kernel without goto: "
        "move the return after the kernel's last barrier or make the "
        "work that follows conditional instead", fn->decl->name,
        at->line));
    return false;
  }
  uint32_t* done_targets =
      dc__arena_zalloc(g->arena, targets.count + 1, sizeof(uint32_t));
  if (done_targets == NULL) return true;  // the arena failed
  e->done_targets = done_targets;
  for (uint32_t k = 0; k < targets.count; ++k) {
    done_targets[k] = (uint32_t)(uintptr_t)targets.items[k];
  }
  return true;
}

// Lists kernel |fn|'s __local variables of nested blocks (emitter_t).
static void hoist_locals(emitter_t* e, const dc__stmt_t* s, bool outermost) {
  if (s == NULL) return;
  if (s->kind == DC_STMT_DECL && !outermost) {
    for (uint32_t i = 0; i < s->declarator_count; ++i) {
      const dc__decl_t* d = s->declarators[i].decl;
      if (d->type->space == DC_ADDRESS_LOCAL) push(e->g.arena, &e->hoisted, d);
    }
  }
  for (uint32_t i = 0; i < s->child_count; ++i) {
    hoist_locals(e, s->children[i], false);
  }
  hoist_locals(e, s->init, false);
  hoist_locals(e, s->body, false);
  hoist_locals(e, s->else_body, false);
}

//===-- Kernels ---------------------------------------------------------===//

static const char* space_name(dc_address_space_t space) {
  return space == DC_ADDRESS_CONSTANT ? "__constant" : "__global";
}

// A value parameter's OpenCL type where OpenCL refuses the language's
// (bool, size_t, ptrdiff_t), else NULL.
static const char* value_carrier(const dc__ty_t* t) {
  if (t->kind != DC_TY_SCALAR) return NULL;
  switch (t->scalar) {
    case DC_SCALAR_BOOL:
      return "uchar";
    case DC_SCALAR_SIZE_T:
      return "ulong";
    case DC_SCALAR_PTRDIFF_T:
      return "long";
    default:
      return NULL;
  }
}

static bool has_local_pointer(const dc__function_t* fn) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (dc__cgen_is_local_pointer(fn->decl->params[i])) return true;
  }
  return false;
}

// The parameter list, as DC_KERNEL_DIALECT_OPENCL_C (dc/backend.h)
// describes it.
static void emit_kernel_params(emitter_t* e, const dc__function_t* fn) {
  dc__cgen_t* g = &e->g;
  const char* sep = "";
  puts_out(e, "(");
  for (uint32_t i = 0; i < fn->param_count; ++i, sep = ", ") {
    const dc__decl_t* d = fn->decl->params[i];
    const char* carrier = value_carrier(d->type);
    if (dc__cgen_is_local_pointer(d)) {
      dc__cgen_printf(g, "%sulong dc_loff_%u", sep, i);
    } else if (d->type->kind == DC_TY_POINTER) {
      dc__cgen_printf(g, "%s%s uchar* dc_a%u, ulong dc_o%u", sep,
                      space_name(d->type->base->space), i, i);
    } else if (carrier != NULL) {
      dc__cgen_printf(g, "%s%s dc_v%u", sep, carrier, i);
    } else {
      dc__cgen_printf(g, "%s%s", sep,
                      dc__cgen_declaration(g, d->type, dc__cgen_name(g, d),
                                           0));
    }
  }
  // A driver aligns the block as its pointed-to type: declared uchar it
  // may start at any byte (NVIDIA's does), and a wider access into it
  // faults.
  if (has_local_pointer(fn)) {
    dc__cgen_printf(g, "%s__local ulong16* dc_lmem", sep);
    sep = ", ";
  }
  if (g->checked) {
    dc__cgen_printf(g,
                    "%sdc_len_%s dc_len, volatile __global uint* "
                    "dc_stop_word, __global dc__fault_t* dc_fault, "
                    "dc__slice_t dc_slice",
                    sep, fn->decl->name);
    sep = ", ";
  }
  if (*sep == '\0') puts_out(e, "void");
  puts_out(e, ") {");
}

// The body's view of the parameters: pointers rebuilt from their
// halves (fat in checked mode), values converted from their carriers.
static void emit_param_views(emitter_t* e, const dc__function_t* fn) {
  dc__cgen_t* g = &e->g;
  bool checked = g->checked;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    const char* name = dc__cgen_name(g, d);
    const char* carrier = value_carrier(d->type);
    if (d->type->kind != DC_TY_POINTER) {
      if (carrier != NULL) {
        dc__cgen_printf(g, " %s = (%s)dc_v%u;",
                        dc__cgen_declaration(g, d->type, name, 0),
                        d->type->scalar == DC_SCALAR_BOOL ? "bool" :
                        dc__cgen_declaration(g, d->type, NULL, 0), i);
      }
      continue;
    }
    bool local = dc__cgen_is_local_pointer(d);
    const char* at =
        local ? dc__arena_printf(g->arena,
                                 "((__local uchar*)dc_lmem + dc_loff_%u)", i)
              : dc__arena_printf(g->arena, "(dc_a%u + dc_o%u)", i, i);
    if (checked) {
      const char* safe = local ? "dc_lscratch"
                         : d->type->base->space == DC_ADDRESS_CONSTANT
                             ? "dc__cscratch"
                             : "dc_gscratch";
      dc__cgen_printf(g,
                      " dc_fptr %s = dc_fp_make((ulong)%s, dc_len.n[%u], "
                      "%uu, (ulong)%s);",
                      name, at, i, i, safe);
    } else {
      dc__cgen_printf(g, " %s = (%s)%s;",
                      dc__cgen_declaration(g, d->type, name, 0),
                      dc__cgen_declaration(g, d->type, NULL, 0), at);
    }
  }
}

static void opencl_kernel(dc__cgen_t* g, const dc__function_t* fn) {
  emitter_t* e = (emitter_t*)g;
  const uint32_t* req = fn->required_group_size;
  g->fn = fn;
  g->in_kernel = true;
  dc__cgen_new_line(g);
  if (g->checked) {
    dc__cgen_printf(g, "\ntypedef struct { ulong n[%u]; } dc_len_%s;",
                    fn->param_count ? fn->param_count : 1, fn->decl->name);
  }
  dc__cgen_at_line(g, fn->decl->token->line);
  puts_out(e, "__kernel void");
  if (req[0] != 0) {
    dc__cgen_printf(g, " __attribute__((reqd_work_group_size(%u, %u, %u)))",
                    req[0], req[1] ? req[1] : 1, req[2] ? req[2] : 1);
  }
  dc__cgen_printf(g, " %s%s", KERNEL_PREFIX, fn->decl->name);
  emit_kernel_params(e, fn);
  if (g->checked) {
    puts_out(e,
             " __local ulong dc_lscratch[DC__SCRATCH_WORDS] DC__SCRATCH_ALIGN;"
             " __global ulong* dc_gscratch = (__global ulong*)((__global uchar*)"
             "dc_fault + DC__SCRATCH_OFFSET);"
             " dc__cwi_t dc_w = {.stop_word = dc_stop_word, .fault = dc_fault,"
             " .gscratch = dc_gscratch, .lscratch = dc_lscratch, .polls = 1u,"
             " .stop = 0, .slice = dc_slice}; dc__cwi_t* _wi = &dc_w;");
  } else {
    puts_out(e, " const int _wi = 0;");  // what helpers receive first
  }
  emit_param_views(e, fn);
  if (!plan_returns(e, fn)) return;
  if (e->done_returns.count > 0) puts_out(e, " int dc_done = 0;");
  // The body's statements go in the function's own block: OpenCL C
  // takes __local variables only in a kernel's outermost scope, where
  // those of nested blocks are declared too.
  e->hoisted.count = 0;
  if (fn->body->kind == DC_STMT_BLOCK) {
    for (uint32_t i = 0; i < fn->body->child_count; ++i) {
      const dc__stmt_t* c = fn->body->children[i];
      hoist_locals(e, c, c->kind == DC_STMT_DECL);
    }
  } else {
    hoist_locals(e, fn->body, false);
  }
  for (uint32_t i = 0; i < e->hoisted.count; ++i) {
    const dc__decl_t* d = e->hoisted.items[i];
    puts_out(e, " __local");
    dc__cgen_variable(g, d, dc__arena_printf(g->arena, "dc_lv%u_%s", i,
                                             d->name));
  }
  if (fn->body->kind == DC_STMT_BLOCK) {
    for (uint32_t i = 0; i < fn->body->child_count; ++i) {
      dc__cgen_stmt(g, fn->body->children[i]);
    }
  } else {
    dc__cgen_stmt(g, fn->body);
  }
  if (g->checked) puts_out(e, " dc_stop: __attribute__((unused));");
  puts_out(e, " }");
}

#define OPENCL_HOOKS(wi, suffix)                                         \
  {                                                                      \
    .cxx = false, .opencl = true, .vector_prefix = "", .wi_param = wi,   \
    .helper_prefix = "static", .helper_body_prefix = "",                 \
    .helper_body_suffix = suffix, .global_prefix = " __constant",        \
    .stmt = opencl_stmt, .builtin = opencl_builtin,                      \
    .builtin_arg = opencl_builtin_arg, .name = opencl_name,              \
    .kernel = opencl_kernel,                                             \
    .safe_division = false, /* x / 0 does not trap in OpenCL C */        \
  }
// A helper's first parameter is the shared generator's work-item slot:
// an int nothing reads (OpenCL's work-item functions need no record), or
// in checked mode the work-item's record; checked helpers end with the
// label that a stopped work-item's polls jump to.
static const dc__cgen_hooks_t kHooks = OPENCL_HOOKS("const int _wi", NULL);
static const dc__cgen_hooks_t kCheckedHooks = OPENCL_HOOKS(
    "dc__cwi_t* _wi", " dc_stop: __attribute__((unused));");

//===-- Scratch ---------------------------------------------------------===//

// The largest object any pointer of the program points to: what a failed
// check's access may touch in the scratch instead.
static bool widest_pointee(const dc__expr_t* e, void* ctx) {
  uint32_t* widest = ctx;
  if (e->type != NULL && e->type->kind == DC_TY_POINTER &&
      e->type->base->kind != DC_TY_VOID) {
    uint32_t size = dc__ty_size(e->type->base);
    if (size > *widest) *widest = size;
  }
  return false;
}

static uint32_t scratch_words(const dc__program_ast_t* ast) {
  uint32_t widest = MIN_SCRATCH_BYTES;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (ast->functions[i].body != NULL) {
      dc__stmt_any(ast->functions[i].body, widest_pointee, &widest);
    }
  }
  return (widest + 7) / 8;
}

dc_status_t dc__lower_opencl(dc__arena_t* arena, const dc__program_ast_t* ast,
                             const char* file, bool checked, dc__diag_t* diag,
                             dc_lowered_program_t* out) {
  memset(out, 0, sizeof(*out));
  emitter_t* e = dc__arena_alloc(arena, sizeof(*e));
  if (e == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(e, 0, sizeof(*e));
  out->kernels =
      dc__lower_describe_kernels(arena, ast, KERNEL_PREFIX, &out->kernel_count);
  if (out->kernels == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc__strbuf_init(&e->out, arena);
  dc__cgen_init(&e->g, arena, diag, ast, checked ? &kCheckedHooks : &kHooks,
                &e->out, file);
  e->g.checked = checked;
  if (checked) {
    uint32_t words = scratch_words(ast);
    out->checked_local_scratch = (size_t)words * 8;
    out->checked_state_size = DC_LOWER_SCRATCH_OFFSET + (size_t)words * 8;
    dc__cgen_printf(&e->g, "#define DC__CHECKED 1\n#define DC__SCRATCH_WORDS %u\n"
                    "#define DC__SCRATCH_OFFSET %u\n",
                    words, DC_LOWER_SCRATCH_OFFSET);
  }
  bool quirks[QUIRK_COUNT] = {false};
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (ast->functions[i].body != NULL) {
      dc__stmt_any(ast->functions[i].body, note_quirk, quirks);
    }
  }
  for (int q = QUIRK_NONE + 1; q < QUIRK_COUNT; ++q) {
    if (quirks[q]) {
      dc__cgen_printf(&e->g, "#define DC__NEED_%s 1\n", kQuirkMacros[q]);
    }
  }
  puts_out(e, dc__opencl_prelude_text);
  dc__cgen_new_line(&e->g);
  dc__cgen_program(&e->g);
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  if (e->g.failed) return DC_ERR_COMPILE;
  out->text = e->out.data;
  out->length = e->out.length;
  return DC_OK;
}

// lower_c.c: the lowering to C for the host's C compiler
// (DC_KERNEL_DIALECT_C, dc/kernel_abi_c.h), which the CPU device runs.
//
// The shared code generator (cgen.h) writes expressions, declarations and
// statements from the typed tree; this lowering adds what running
// work-items on a CPU thread takes. Its hooks keep a private variable that
// lives across a barrier in a per-work-item array slot and a __local
// variable in the group's local memory, and it wraps kernels in the loops
// that run a group's work-items. A #line directive before every statement
// keeps the output in the user's lines (for debuggers and fault reports).
//
// Kernels with barriers are split into regions (see dc__exec_mode_t). The
// control flow around a barrier must be the same for every work-item of a
// group (OpenCL requires it), so it runs once per group, with conditions
// read from work-item 0, and everything between barriers runs as a loop
// over the work-items.
// SPDX-License-Identifier: MIT
#include "lower_c.h"

#include <stdio.h>
#include <string.h>

#include "builtin_table.h"
#include "lower.h"
#include "tree_walk.h"

// The text every lowered program starts with (generated into the build
// from dc/kernel_abi_c.h and lower_c_prelude.h).
extern const char dc__c_prelude_text[];

#define MAX_SYMBOLS 4096
#define MAX_SCOPES 256

typedef enum sym_kind_e {
  SYM_HOISTED,   // private, lives across a barrier: dc_h_N[_w]
  SYM_LOCALMEM,  // __local variable of a kernel body: (*dc_l_N)
  SYM_REMAT,     // recomputed in every region (see rematerializable())
} sym_kind_t;

// A variable the back end keeps somewhere of its own, in scope.
typedef struct sym_t {
  const dc__decl_t* decl;
  sym_kind_t kind;
  uint32_t id;  // hoisted or localmem index
} sym_t;

typedef struct emitter_t {
  dc__cgen_t g;  // first: the hooks receive it
  const dc__exec_mode_t* modes;  // per function of the program
  dc__exec_mode_t mode;          // of the kernel being written
  sym_t syms[MAX_SYMBOLS];
  uint32_t sym_count;
  uint32_t scopes[MAX_SCOPES];
  uint32_t scope_depth;
  const dc__decl_t* hoisted[MAX_SYMBOLS];  // dc_h_N: the variable N
  uint32_t hoisted_count;
  const dc__decl_t* localmem[256];         // dc_l_N
  uint32_t localmem_count;
  uint32_t region;          // number of the open region, 0 if none
  uint32_t region_counter;
  bool uses_done;           // a return inside a region: per-item flags
  bool calls_helpers;       // helpers read the work-item from _wi
  uint32_t promoted[MAX_SYMBOLS];  // hoisted ids held in registers in the
  uint32_t promoted_count;         // open region (dc_r_N)
} emitter_t;

static void fail(emitter_t* e, const dc__token_t* t, const char* message) {
  dc__cgen_fail(&e->g, t, message);
}

static const dc__token_t* token_at(const emitter_t* e, uint32_t index) {
  return &e->g.ast->tokens[index];
}

//===-- Symbols ---------------------------------------------------------===//

static void push_scope(emitter_t* e) {
  if (e->scope_depth < MAX_SCOPES) e->scopes[e->scope_depth++] = e->sym_count;
}

static void pop_scope(emitter_t* e) {
  if (e->scope_depth > 0) e->sym_count = e->scopes[--e->scope_depth];
}

static void declare(emitter_t* e, const dc__decl_t* decl, sym_kind_t kind,
                    uint32_t id) {
  if (e->sym_count == MAX_SYMBOLS) {
    fail(e, decl->token, "too many variables in one function");
    return;
  }
  e->syms[e->sym_count++] = (sym_t){decl, kind, id};
}

static const sym_t* lookup(const emitter_t* e, const dc__decl_t* decl) {
  for (uint32_t i = e->sym_count; i-- > 0;) {
    if (e->syms[i].decl == decl) return &e->syms[i];
  }
  return NULL;
}

//===-- Output ----------------------------------------------------------===//

static void puts_out(emitter_t* e, const char* s) { dc__cgen_puts(&e->g, s); }

static void at_line(emitter_t* e, uint32_t line) {
  dc__cgen_at_line(&e->g, line);
}

// The emitter is one translation unit split by concept across these files
// (the way Lua's one-file builds and luv's sources are organised), so its
// many small helpers stay static.
#include "lower_c_stmt.c"
#include "lower_c_regions.c"
#include "lower_c_kernel.c"
#include "lower_c_fibers.c"

//===-- The module ------------------------------------------------------===//

// Definitions every generated module needs after the prelude and the ABI:
// the bounds check of buffer indexing.
static const char kModuleSupport[] =
    // Work-item functions read variables that every kernel and helper
    // declares (DC_WI_FROM), so inside a
    // region loop they are plain registers the compiler can vectorise.
    // The prelude defines them for host-side use; these replace them.
    "\n#undef get_work_dim\n#undef get_local_id\n#undef get_group_id"
    "\n#undef get_local_size\n#undef get_enqueued_local_size"
    "\n#undef get_global_size\n#undef get_num_groups"
    "\n#undef get_global_offset\n#undef get_global_id"
    "\n#define get_work_dim() ((unsigned)_dims)"
    "\n#define DC__PICK(d, a, b, c, none) ((d) == 0 ? (a) : (d) == 1 ? (b) :"
    " (d) == 2 ? (c) : (none))"
    "\n#define get_local_id(d) ((size_t)DC__PICK(d, _lx, _ly, _lz, 0))"
    "\n#define get_group_id(d) ((size_t)DC__PICK(d, _grp0, _grp1, _grp2, 0))"
    "\n#define get_local_size(d) ((size_t)DC__PICK(d, _ls0, _ls1, _ls2, 1))"
    "\n#define get_enqueued_local_size(d) get_local_size(d)"
    "\n#define get_global_size(d) ((size_t)DC__PICK(d, _gs0, _gs1, _gs2, 1))"
    "\n#define get_num_groups(d) ((size_t)DC__PICK(d, _ng0, _ng1, _ng2, 1))"
    "\n#define get_global_offset(d) ((size_t)DC__PICK(d, _go0, _go1, _go2, 0))"
    "\n#define get_global_id(d) (get_global_offset(d) + get_group_id(d) *"
    " get_local_size(d) + get_local_id(d))"
    // The group size comes from the launch, or is a constant for a kernel
    // with reqd_work_group_size (DC_WI_FROM_SIZED), which gives the
    // work-item loops known trip counts.
    "\n#define DC_WI_FROM(wi) DC_WI_FROM_SIZED(wi, (wi)->launch->local_size[0],"
    " (wi)->launch->local_size[1], (wi)->launch->local_size[2])"
    "\n#define DC_WI_FROM_SIZED(wi, l0, l1, l2)"
    " const dc_c_launch_t* _launch = (wi)->launch;"
    " const unsigned _dims = _launch->work_dim;"
    " const size_t _ls0 = (l0), _ls1 = (l1),"
    " _ls2 = (l2), _gs0 = _launch->global_size[0],"
    " _gs1 = _launch->global_size[1], _gs2 = _launch->global_size[2],"
    " _ng0 = _launch->num_groups[0], _ng1 = _launch->num_groups[1],"
    " _ng2 = _launch->num_groups[2], _go0 = _launch->global_offset[0],"
    " _go1 = _launch->global_offset[1], _go2 = _launch->global_offset[2];"
    " (void)_dims; (void)_ls0; (void)_ls1; (void)_ls2; (void)_gs0; (void)_gs1;"
    " (void)_gs2; (void)_ng0; (void)_ng1; (void)_ng2; (void)_go0; (void)_go1;"
    " (void)_go2;"
    "\n#define DC_WI_LOCAL(wi) const size_t _lx = (wi)->local[0],"
    " _ly = (wi)->local[1], _lz = (wi)->local[2], _grp0 = (wi)->group[0],"
    " _grp1 = (wi)->group[1], _grp2 = (wi)->group[2];"
    " (void)_lx; (void)_ly; (void)_lz; (void)_grp0; (void)_grp1; (void)_grp2;"
    "\n";

// What checked kernels (cgen_checked.c) call: fat pointers, their
// checks, and the polls that let a dispatch be stopped. A failed check or
// a stop records the fault and leaves the dispatch at once through the
// run function's __builtin_setjmp (dc__escape), so nothing past the fault
// runs and no access is ever made out of bounds.
static const char kCheckedSupport[] =
    "\n_Static_assert(DC_C_FAULT_POINTER == 1 && DC_C_FAULT_WATCHDOG == 3,"
    " \"fault kinds\");"
    "\n#define DC_POLL_EVERY 1024u"
    "\nstatic __attribute__((noinline, noreturn, cold)) void dc__escape("
    "dc__wi_t* wi, unsigned kind, unsigned arg, unsigned line, long long i,"
    " size_t n, size_t size) {"
    "\n  dc_c_fault_t* f = wi->fault; int expected = 0;"
    "\n  if (__atomic_compare_exchange_n(&f->set, &expected, 2, 0,"
    " __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {"
    "\n    f->kind = kind; f->arg = arg; f->line = line; f->index = i;"
    " f->length = n; f->size = size;"
    "\n    __atomic_store_n(&f->set, 1, __ATOMIC_RELEASE);"
    "\n  }"
    "\n  __builtin_longjmp(wi->escape, 1);"
    "\n}"
    // An index into an array of |n|, or the end of the dispatch.
    "\n#define DC_AIDX(i, n, line) ({ long long dc_a_ = (long long)(i);"
    " (dc_a_ >= 0 && dc_a_ < (long long)(n)) ? dc_a_"
    " : (dc__escape(_wi, DC_C_FAULT_INDEX, DC_C_FAULT_OBJECT, line, dc_a_, n,"
    " 1), 0ll); })"
    "\ntypedef struct dc_fptr { unsigned long long p, lo, hi;"
    " unsigned origin; } dc_fptr;"
    "\n#define DC_FP_NULL ((dc_fptr){0, 0, 0, 0})"
    "\nstatic inline dc_fptr dc_fp(const volatile void* p, size_t n,"
    " unsigned origin) {"
    " unsigned long long a = (unsigned long long)(uintptr_t)p;"
    " dc_fptr f = {a, a, a + n, origin}; return f; }"
    "\n#define DC_FP_OBJ(p, n) dc_fp(p, n, DC_C_FAULT_OBJECT)"
    "\nstatic inline dc_fptr dc_fp_add(dc_fptr f, long long bytes) {"
    " f.p += (unsigned long long)bytes; return f; }"
    "\nstatic inline dc_fptr dc_fp_step(dc_fptr* f, long long bytes,"
    " int post) { dc_fptr old = *f; f->p += (unsigned long long)bytes;"
    " return post ? old : *f; }"
    "\nstatic __attribute__((noreturn, cold)) void dc__fp_fault("
    "dc__wi_t* wi, dc_fptr f, unsigned long long a, size_t size,"
    " unsigned line) {"
    " dc__escape(wi, DC_C_FAULT_POINTER, f.origin, line, (long long)(a - f.lo),"
    " f.hi - f.lo, size); }"
    // The address |index| elements of |size| bytes past f, if |size| bytes
    // there lie in f's allocation (arithmetic modulo 2^64: the address
    // checked is the address used).
    "\nstatic inline void* dc_fp_at(dc__wi_t* wi, dc_fptr f, long long index,"
    " size_t size, unsigned line) {"
    " unsigned long long a = f.p + (unsigned long long)index * size;"
    " if (__builtin_expect(a - f.lo <= f.hi - f.lo && f.hi - a >= size, 1))"
    " return (void*)(uintptr_t)a;"
    " dc__fp_fault(wi, f, a, size, line); }"
    // count elements |stride| elements apart from f: the first and the last
    // in the allocation (none for count 0).
    "\nstatic inline void* dc_fp_span(dc__wi_t* wi, dc_fptr f,"
    " unsigned long long count, unsigned long long stride, size_t size,"
    " unsigned line) {"
    " if (count == 0) return (void*)(uintptr_t)f.p;"
    " unsigned long long room = f.p - f.lo <= f.hi - f.lo ?"
    " (f.hi - f.p) / size : 0;"
    " if (room == 0 || (stride != 0 && count - 1 > (room - 1) / stride))"
    " dc__fp_fault(wi, f, f.p + (count - 1) * stride * size, size, line);"
    " return (void*)(uintptr_t)f.p; }"
    "\n#define DC_AT(f, i, size, line) dc_fp_at(_wi, f, i, size, line)"
    "\n#define DC_SPAN(f, n, stride, size, line)"
    " dc_fp_span(_wi, f, n, stride, size, line)"
    // Loops poll: every DC_POLL_EVERY iterations the launch's poll says
    // whether to stop (an interrupt, the kernel time limit).
    "\nstatic __attribute__((noinline, cold)) void dc__poll(dc__wi_t* wi,"
    " unsigned line) {"
    " wi->polls = DC_POLL_EVERY;"
    " const dc_c_launch_t* l = wi->launch;"
    " unsigned kind = l->poll ? l->poll(l) : 0u;"
    " if (kind != 0) dc__escape(wi, kind, DC_C_FAULT_OBJECT, line, 0, 0, 0); }"
    "\n#define DC_POLL(line) do { if (__builtin_expect(--_wi->polls == 0, 0))"
    " dc__poll(_wi, line); } while (0)"
    // Intervals of index values over a chunk of groups (cgen_ranges.c): a
    // step that leaves its type's range, or a product past 128 bits, makes
    // the interval unknown (ok 0), and then the chunk runs fully checked.
    "\ntypedef struct dc_rng { __int128 lo, hi; int ok; } dc_rng;"
    "\nstatic inline dc_rng dc_rs(__int128 lo, __int128 hi) {"
    " dc_rng r = {lo, hi, lo <= hi}; return r; }"
    "\n#define dc_rk(v) dc_rs(v, v)"
    "\nstatic const dc_rng dc_rbad = {0, 0, 0};"
    "\nstatic inline dc_rng dc_rfit(dc_rng a, __int128 lo, __int128 hi) {"
    " return a.ok && a.lo >= lo && a.hi <= hi ? a : dc_rbad; }"
    "\nstatic inline dc_rng dc_rif(dc_rng r, int ok) {"
    " return ok ? r : dc_rbad; }"
    "\nstatic inline dc_rng dc_radd(dc_rng a, dc_rng b) {"
    " return dc_rif(dc_rs(a.lo + b.lo, a.hi + b.hi), a.ok && b.ok); }"
    "\nstatic inline dc_rng dc_rsub(dc_rng a, dc_rng b) {"
    " return dc_rif(dc_rs(a.lo - b.hi, a.hi - b.lo), a.ok && b.ok); }"
    "\nstatic inline dc_rng dc_rneg(dc_rng a) {"
    " return dc_rif(dc_rs(-a.hi, -a.lo), a.ok); }"
    "\nstatic inline dc_rng dc_rmul(dc_rng a, dc_rng b) {"
    " __int128 p[4]; int over = __builtin_mul_overflow(a.lo, b.lo, &p[0]) |"
    " __builtin_mul_overflow(a.lo, b.hi, &p[1]) |"
    " __builtin_mul_overflow(a.hi, b.lo, &p[2]) |"
    " __builtin_mul_overflow(a.hi, b.hi, &p[3]);"
    " __int128 lo = p[0], hi = p[0];"
    " for (int i = 1; i < 4; ++i) { if (p[i] < lo) lo = p[i];"
    " if (p[i] > hi) hi = p[i]; }"
    " return dc_rif(dc_rs(lo, hi), a.ok && b.ok && !over); }"
    "\nstatic inline dc_rng dc_rdiv(dc_rng a, __int128 c) {"
    " return dc_rif(c > 0 ? dc_rs(a.lo / c, a.hi / c)"
    " : dc_rs(a.hi / c, a.lo / c), a.ok); }"
    "\nstatic inline dc_rng dc_rmod(dc_rng a, __int128 c) {"
    " __int128 m = (c < 0 ? -c : c) - 1;"
    " return dc_rif(dc_rs(a.lo >= 0 ? 0 : a.lo > -m ? a.lo : -m,"
    " a.hi <= 0 ? 0 : a.hi < m ? a.hi : m), a.ok); }"
    "\nstatic inline dc_rng dc_rand(dc_rng a, __int128 c) {"
    " return dc_rif(dc_rs(0, a.lo >= 0 && a.hi < c ? a.hi : c), a.ok); }"
    "\nstatic inline dc_rng dc_rshr(dc_rng a, int k) {"
    " return dc_rif(dc_rs(a.lo >> k, a.hi >> k), a.ok); }"
    // The counter of for (i = init; i < end; i += step) in the body: from
    // init's least value to the last below end (the last the step reaches
    // when both are exact); unknown where i + step could wrap.
    "\nstatic inline dc_rng dc_rloop(dc_rng init, dc_rng end, __int128 step,"
    " int inclusive, __int128 max) {"
    " if (!init.ok || !end.ok) return dc_rbad;"
    " __int128 last = inclusive ? end.hi : end.hi - 1;"
    " if (last > max - step) return dc_rbad;"
    " if (last < init.lo) return dc_rk(init.lo);"
    " if (init.lo == init.hi && end.lo == end.hi)"
    " last = init.lo + (last - init.lo) / step * step;"
    " return dc_rs(init.lo, last); }"
    "\nstatic inline int dc_rin(dc_rng a, __int128 lo, __int128 hi) {"
    " return a.ok && a.lo >= lo && a.hi <= hi; }"
    // The first and last group of the chunk [b, e) per dimension: exact in
    // a dimension the chunk does not wrap around, the whole range in one it
    // does.
    "\n#define DC_GROUP_RANGE(b, e, glo, ghi) do {"
    " size_t dc_b = (b), dc_e = (e) - 1;"
    " size_t dc_br = dc_b / _ng0, dc_er = dc_e / _ng0;"
    " glo[0] = dc_br == dc_er ? dc_b % _ng0 : 0;"
    " ghi[0] = dc_br == dc_er ? dc_e % _ng0 : _ng0 - 1;"
    " size_t dc_bp = dc_br / _ng1, dc_ep = dc_er / _ng1;"
    " glo[1] = dc_bp == dc_ep ? dc_br % _ng1 : 0;"
    " ghi[1] = dc_bp == dc_ep ? dc_er % _ng1 : _ng1 - 1;"
    " glo[2] = dc_bp; ghi[2] = dc_ep; } while (0)"
    "\n#define DC_AT_PRECHECKED(f, i, size)"
    " ((void*)(uintptr_t)((f).p + (unsigned long long)(i) * (size)))"
    "\n";

// Chooses each kernel's execution mode: loops without barriers, regions
// for barriers in structured control flow, fibers for the rest.
static void plan_kernels(emitter_t* e, dc__exec_mode_t* modes) {
  for (uint32_t i = 0; i < e->g.ast->function_count; ++i) {
    const dc__function_t* fn = &e->g.ast->functions[i];
    bool barrier = fn->calls_barrier || fn->helper_reaches_barrier;
    modes[i] = DC_EXEC_LOOP;
    if (!fn->is_kernel && barrier) {
      modes[i] = DC_EXEC_FIBERS;  // a helper with a barrier needs the runtime
    }
    if (!fn->is_kernel || fn->body == NULL || !barrier) continue;
    placement_t p = {.e = e};
    check_placement(&p, fn->body);
    bool fibers = p.needs_fibers || fn->helper_reaches_barrier;
    modes[i] = fibers ? DC_EXEC_FIBERS : DC_EXEC_REGIONS;
  }
}

// A kernel's entry point, in the execution mode planned for it.
static void cpu_kernel(dc__cgen_t* g, const dc__function_t* fn) {
  emitter_t* e = (emitter_t*)g;
  dc__exec_mode_t mode = e->modes[fn - g->ast->functions];
  if (mode == DC_EXEC_FIBERS) {
    emit_fiber_kernel(e, fn);
  } else {
    emit_kernel(e, fn, mode);
  }
}

// A 3-component vector is its 4-component type in C (lower_c_prelude.h):
// conversions and reinterpretations to one are those to that type, and
// the built-ins that reduce over lanes take the prelude's 3-lane forms,
// which keep the 4th lane out (dc__dot3, dc__all3, ...).
static const char* cpu_builtin(dc__cgen_t* g, const dc__builtin_t* b) {
  static const char* const kReducing[] = {
      "dot",         "distance",      "length",         "normalize",
      "fast_length", "fast_distance", "fast_normalize", "any",
      "all"};
  if (b->klass == DC_BUILTIN_CONVERT || b->klass == DC_BUILTIN_REINTERPRET) {
    if (b->result->kind != DC_TY_VECTOR || b->result->width != 3) return NULL;
    // The width follows the element's name: convert_int3_sat, as_float3.
    char* name = dc__arena_strndup(g->arena, b->name, strlen(b->name));
    char* at = name ? strchr(strchr(name, '_') + 1, '3') : NULL;
    if (at == NULL) return NULL;  // the arena reports it
    *at = '4';
    return name;
  }
  const dc__ty_t* t = b->param_count > 0 ? b->params[0] : NULL;
  if (t == NULL || t->kind != DC_TY_VECTOR || t->width != 3) return NULL;
  for (size_t i = 0; i < sizeof(kReducing) / sizeof(kReducing[0]); ++i) {
    if (strcmp(b->name, kReducing[i]) == 0) {
      return dc__arena_printf(g->arena, "dc__%s3", b->name);
    }
  }
  return NULL;
}

static const dc__cgen_hooks_t kHooks = {
    .cxx = false,
    .vector_prefix = "",
    .wi_param = "dc__wi_t* _wi",
    .helper_prefix = "\nstatic inline __attribute__((unused))",
    .helper_body_prefix = " DC_WI_FROM(_wi) DC_WI_LOCAL(_wi)",
    .global_prefix = " static",
    .name = cpu_name,
    .stmt = cpu_stmt,
    .builtin = cpu_builtin,
    .kernel = cpu_kernel,
    .safe_division = true,
};

// Writes the C translation of |ast| to |out|, to be compiled after the
// prelude (and after <ucontext.h> when a kernel runs on fibers); |modes|
// (one per function of the AST) receives each kernel's execution mode.
// Reports what cannot be translated to |diag| (DC_ERR_COMPILE).
static dc_status_t generate(dc__arena_t* arena, const dc__program_ast_t* ast,
                            const char* file, bool checked, dc__diag_t* diag,
                            dc__strbuf_t* out, dc__exec_mode_t* modes) {
  emitter_t* e = dc__arena_alloc(arena, sizeof(*e));
  if (e == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(e, 0, sizeof(*e));
  dc__cgen_init(&e->g, arena, diag, ast, &kHooks, out, file);
  e->g.checked = checked;
  plan_kernels(e, modes);
  if (e->g.failed) return DC_ERR_COMPILE;
  puts_out(e, kModuleSupport);
  if (e->g.checked) puts_out(e, kCheckedSupport);
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (modes[i] == DC_EXEC_FIBERS) {
      puts_out(e, kFiberSupport);
      break;
    }
  }
  e->modes = modes;
  dc__cgen_program(&e->g);
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return e->g.failed ? DC_ERR_COMPILE : DC_OK;
}

//===-- Prelude sections ------------------------------------------------===//

// True if identifier |name| (|n| bytes) is a word of |list| (up to the end
// of its line).
static bool list_has_word(const char* list, const char* name, size_t n) {
  for (const char* p = list; *p && *p != '\n';) {
    while (*p == ' ') ++p;
    const char* start = p;
    while (*p && *p != ' ' && *p != '\n') ++p;
    if ((size_t)(p - start) == n && memcmp(start, name, n) == 0) return true;
  }
  return false;
}

// What the generated code calls in the prelude: the built-ins the program
// calls, and select for a vector ?: (which the generator writes so).
typedef struct prelude_calls_t {
  const char* names[256];
  uint32_t count;
  bool overflow;  // more than fit: every section is taken
} prelude_calls_t;

static bool note_prelude_call(const dc__expr_t* e, void* ctx) {
  prelude_calls_t* c = ctx;
  const char* name = NULL;
  if (e->kind == DC_EXPR_BUILTIN) name = e->builtin->name;
  // A conversion to a 3-component type is spelled as one to the
  // 4-component type (cpu_builtin); every conversion is in one section.
  if (e->kind == DC_EXPR_BUILTIN &&
      (e->builtin->klass == DC_BUILTIN_CONVERT ||
       e->builtin->klass == DC_BUILTIN_REINTERPRET)) {
    name = "convert_int";
  }
  if (e->kind == DC_EXPR_COND && e->cond->type->kind == DC_TY_VECTOR) {
    name = "select";
  }
  if (name == NULL) return false;
  for (uint32_t i = 0; i < c->count; ++i) {
    if (strcmp(c->names[i], name) == 0) return false;
  }
  if (c->count == sizeof(c->names) / sizeof(c->names[0])) {
    c->overflow = true;
    return true;
  }
  c->names[c->count++] = name;
  return false;
}

// Writes "#define DC_NEED_X 1" for each prelude section (listed in the
// prelude's "// @section NAME: ids..." lines) that the program calls into,
// so the C compiler parses only what the program needs.
static void emit_sections(const dc__program_ast_t* ast, dc__strbuf_t* out) {
  prelude_calls_t calls = {.count = 0};
  for (uint32_t i = 0; i < ast->function_count && !calls.overflow; ++i) {
    dc__stmt_any(ast->functions[i].body, note_prelude_call, &calls);
  }
  for (uint32_t i = 0; i < ast->global_count && !calls.overflow; ++i) {
    dc__stmt_any(ast->globals[i].decl, note_prelude_call, &calls);
  }
  static const char kTag[] = "// @section ";
  for (const char* p = strstr(dc__c_prelude_text, kTag); p != NULL;
       p = strstr(p + 1, kTag)) {
    const char* name = p + sizeof(kTag) - 1;
    const char* colon = strchr(name, ':');
    const char* eol = strchr(name, '\n');
    if (colon == NULL || (eol != NULL && colon > eol)) continue;
    bool needed = calls.overflow;
    for (uint32_t i = 0; i < calls.count && !needed; ++i) {
      needed = list_has_word(colon + 1, calls.names[i],
                             strlen(calls.names[i]));
    }
    if (needed) {
      dc__strbuf_printf(out, "#define %.*s 1\n", (int)(colon - name), name);
    }
  }
}

//===-- The lowered program ---------------------------------------------===//

static const char* const kModeNames[] = {
    [DC_EXEC_LOOP] = "loop",
    [DC_EXEC_REGIONS] = "regions",
    [DC_EXEC_FIBERS] = "fibers",
};

// The kernels' entry points (dc_k_K_run), modes and barriers.
static dc_lowered_kernel_t* describe(dc__arena_t* arena,
                                     const dc__program_ast_t* ast,
                                     const dc__exec_mode_t* modes,
                                     size_t* out_count) {
  dc_lowered_kernel_t* kernels =
      dc__lower_describe_kernels(arena, ast, "dc_k_", out_count);
  if (kernels == NULL) return NULL;
  size_t k = 0;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    const dc__function_t* fn = &ast->functions[i];
    if (!fn->is_kernel || fn->body == NULL) continue;
    kernels[k].entry = dc__arena_printf(arena, "%s_run", kernels[k].entry);
    kernels[k].execution = kModeNames[modes[i]];
    // One reached through a helper makes it a barrier kernel too; the
    // regions and fibers run the group's work-items together.
    kernels[k].reaches_barrier = modes[i] != DC_EXEC_LOOP;
    if (kernels[k++].entry == NULL) return NULL;
  }
  return kernels;
}

dc_status_t dc__lower_c(dc__arena_t* arena, const dc__program_ast_t* ast,
                        const char* file, bool checked, dc__diag_t* diag,
                        dc_lowered_program_t* out) {
  memset(out, 0, sizeof(*out));
  dc__exec_mode_t* modes =
      dc__arena_zalloc(arena, ast->function_count + 1, sizeof(*modes));
  if (modes == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc__strbuf_t generated, code;
  dc__strbuf_init(&generated, arena);
  dc__strbuf_init(&code, arena);
  DC_RETURN_IF_ERROR(
      generate(arena, ast, file, checked, diag, &generated, modes));
  // Libc headers must come before the prelude, whose macros share names
  // with libm functions.
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (modes[i] == DC_EXEC_FIBERS) {
      dc__strbuf_puts(&code, "#include <ucontext.h>\n");
      break;
    }
  }
  emit_sections(ast, &code);
  dc__strbuf_puts(&code, dc__c_prelude_text);
  dc__strbuf_append(&code, generated.data ? generated.data : "",
                    generated.length);
  out->kernels = describe(arena, ast, modes, &out->kernel_count);
  if (out->kernels == NULL || arena->failed || code.data == NULL) {
    return DC_ERR_OUT_OF_MEMORY;
  }
  out->text = code.data;
  out->length = code.length;
  return DC_OK;
}

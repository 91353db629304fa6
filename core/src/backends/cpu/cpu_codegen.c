// cpu_codegen.c: the CPU back end's translation of kernels into C.
//
// The emitter walks the statement trees and writes C, rewriting each
// expression token by token: address-space keywords disappear, `char`
// becomes signed, vector literals and swizzles become prelude macros,
// calls to helper functions gain the work-item argument, and names resolve
// through a scope stack to what they became (a per-work-item array slot
// for a private variable that lives across a barrier, a pointer into the
// group's local memory for a __local variable). A #line directive before
// every source line keeps the C compiler's messages in the user's lines.
//
// Kernels with barriers are split into regions (see dc__exec_mode_t). The
// control flow around a barrier must be the same for every work-item of a
// group (OpenCL requires it), so it runs once per group, with conditions
// read from work-item 0, and everything between barriers runs as a loop
// over the work-items.
// SPDX-License-Identifier: MIT
#include "cpu_codegen.h"

#include <stdio.h>
#include <string.h>

#define MAX_SYMBOLS 4096
#define MAX_SCOPES 256

typedef enum sym_kind_e {
  SYM_PLAIN,     // an ordinary C variable: emitted as written
  SYM_HOISTED,   // private, lives across a barrier: dc_h_N[_w]
  SYM_LOCALMEM,  // __local variable of a kernel body: (*dc_l_N)
  SYM_REMAT,     // recomputed in every region (see rematerializable())
  SYM_BUFFER,    // a kernel's __global/__constant pointer parameter
} sym_kind_t;

typedef struct sym_t {
  const dc__token_t* name;
  sym_kind_t kind;
  uint32_t id;  // hoisted or localmem index; parameter index for buffers
  const dc__stmt_t* decl;  // SYM_REMAT: the declaration to repeat
  uint32_t declarator;
  bool is_param;           // a kernel parameter
} sym_t;

// A declaration that gets storage outside the normal C scopes.
typedef struct storage_t {
  const dc__stmt_t* decl;
  uint32_t declarator;
} storage_t;

typedef struct emitter_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  const dc__program_ast_t* ast;
  const dc__token_t* toks;
  const dc__codegen_options_t* options;
  dc__strbuf_t* out;
  const dc__function_t* fn;  // function being emitted
  bool in_kernel;
  dc__exec_mode_t mode;
  sym_t syms[MAX_SYMBOLS];
  uint32_t sym_count;
  uint32_t scopes[MAX_SCOPES];
  uint32_t scope_depth;
  storage_t hoisted[MAX_SYMBOLS];
  uint32_t hoisted_count;
  storage_t localmem[256];
  uint32_t localmem_count;
  uint32_t region;          // number of the open region, 0 if none
  uint32_t region_counter;
  bool uses_done;           // a return inside a region: per-item flags
  bool calls_helpers;       // helpers read the work-item from _wi
  uint32_t promoted[MAX_SYMBOLS];  // hoisted ids held in registers in the
  uint32_t promoted_count;         // open region (dc_r_N)
  uint32_t loop_depth;      // user loops and switches around the code
  uint32_t line;            // line of the last #line emitted
  bool failed;
  bool static_init;         // emitting a program-scope initialiser
} emitter_t;

static void fail(emitter_t* e, const dc__token_t* t, const char* message) {
  e->failed = true;
  dc__diag_error(e->diag, t->line, t->col, "%s", message);
}

//===-- Symbols ---------------------------------------------------------===//

static void push_scope(emitter_t* e) {
  if (e->scope_depth < MAX_SCOPES) e->scopes[e->scope_depth++] = e->sym_count;
}

static void pop_scope(emitter_t* e) {
  if (e->scope_depth > 0) e->sym_count = e->scopes[--e->scope_depth];
}

static void declare(emitter_t* e, const dc__token_t* name, sym_kind_t kind,
                    uint32_t id) {
  if (e->sym_count == MAX_SYMBOLS) {
    fail(e, name, "too many variables in one function");
    return;
  }
  e->syms[e->sym_count++] = (sym_t){name, kind, id, NULL, 0, false};
}

static const sym_t* lookup(const emitter_t* e, const dc__token_t* t) {
  for (uint32_t i = e->sym_count; i-- > 0;) {
    const dc__token_t* n = e->syms[i].name;
    if (n->length == t->length && memcmp(n->text, t->text, t->length) == 0) {
      return &e->syms[i];
    }
  }
  return NULL;
}

static const dc__function_t* find_function(const emitter_t* e,
                                           const dc__token_t* t) {
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__token_t* n = &e->toks[e->ast->functions[i].name];
    if (n->length == t->length && memcmp(n->text, t->text, t->length) == 0) {
      return &e->ast->functions[i];
    }
  }
  return NULL;
}

//===-- Output ----------------------------------------------------------===//

static void puts_out(emitter_t* e, const char* s) {
  dc__strbuf_puts(e->out, s);
}

// Moves the output to |line| of the user's source with a #line directive.
static void at_line(emitter_t* e, uint32_t line) {
  if (line == e->line || line == 0) return;
  dc__strbuf_printf(e->out, "\n#line %u \"%s\"\n", line, e->options->file);
  e->line = line;
}

static void emit_text(emitter_t* e, const dc__token_t* t, const char* text,
                      size_t length) {
  at_line(e, t->line);
  dc__strbuf_append(e->out, " ", 1);
  dc__strbuf_append(e->out, text, length);
}

// Token |t| as the generated code spells it (spelling.h).
static const char* spelled(const emitter_t* e, const dc__token_t* t) {
  return dc__token_spelling(e->arena, e->ast, t);
}

static void emit_token(emitter_t* e, const dc__token_t* t) {
  const char* text = spelled(e, t);
  emit_text(e, t, text, strlen(text));
}

// The C spelling of a language keyword, or NULL to drop it, or |t| itself.
static const char* keyword_spelling(const dc__token_t* t, bool* drop) {
  static const char* const kDropped[] = {
      "__global", "global", "__local", "local", "__private", "private",
      "__kernel", "kernel",
  };
  *drop = false;
  if (t->kind != DC_TOK_IDENT) return NULL;
  for (size_t i = 0; i < sizeof(kDropped) / sizeof(kDropped[0]); ++i) {
    if (dc__tok_is(t, kDropped[i])) {
      *drop = true;
      return NULL;
    }
  }
  if (dc__tok_is(t, "__constant") || dc__tok_is(t, "constant")) return "const";
  if (dc__tok_is(t, "char")) return "dc_char";
  return NULL;
}

// The emitter is one translation unit split by concept across these files
// (the way Lua's one-file builds and luv's sources are organised), so its
// many small helpers stay static.
#include "cpu_emit_expr.c"
#include "cpu_emit_stmt.c"
#include "cpu_emit_regions.c"
#include "cpu_emit_kernel.c"
#include "cpu_emit_fibers.c"

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
    " const dc__launch_t* _launch = (wi)->launch;"
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
    "\nstatic _Thread_local _Alignas(64) unsigned char dc__sink[256];"
    "\nstatic void* dc__oob(dc__fault_t* f, unsigned a, unsigned line,"
    " long long i, size_t n) {"
    "\n  int expected = 0;"
    "\n  if (__atomic_compare_exchange_n(&f->set, &expected, 2, 0,"
    " __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {"
    "\n    f->arg = a; f->line = line; f->index = i; f->length = n;"
    "\n    __atomic_store_n(&f->set, 1, __ATOMIC_RELEASE);"
    "\n  }"
    "\n  return dc__sink;"
    "\n}"
    "\n#define DC_IDX(p, i, a, line) ({ __typeof__(&(p)[0]) dc_p_ = (p);"
    " long long dc_i_ = (long long)(i);"
    " (dc_i_ >= 0 && (unsigned long long)dc_i_ < dc_len[a]) ? dc_p_ + dc_i_"
    " : (__typeof__(dc_p_))dc__oob(dc_fault, a, line, dc_i_, dc_len[a]); })"
    "\n";

static void emit_global(emitter_t* e, const dc__global_t* g) {
  at_line(e, e->toks[g->tokens.begin].line);
  if (!g->is_typedef) puts_out(e, " static");
  e->static_init = !g->is_typedef;
  emit_range(e, g->tokens.begin, g->tokens.end);
  e->static_init = false;
}

// Chooses each kernel's execution mode: loops without barriers, regions
// for barriers in structured control flow, fibers for the rest.
static void plan_kernels(emitter_t* e, dc__exec_mode_t* modes) {
  propagate_barriers(e);
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* fn = &e->ast->functions[i];
    modes[i] = DC_EXEC_LOOP;
    if (!fn->is_kernel && fn->calls_barrier) {
      modes[i] = DC_EXEC_FIBERS;  // a helper with a barrier needs the runtime
    }
    if (!fn->is_kernel || fn->body == NULL || !fn->calls_barrier) continue;
    placement_t p = {.e = e};
    check_placement(&p, fn->body);
    bool fibers = p.needs_fibers || helper_with_barrier(e, fn) != NULL;
    modes[i] = fibers ? DC_EXEC_FIBERS : DC_EXEC_REGIONS;
  }
}

dc_status_t dc__cpu_codegen(dc__arena_t* arena, const dc__program_ast_t* ast,
                            const dc__codegen_options_t* options,
                            dc__diag_t* diag, dc__strbuf_t* out,
                            dc__exec_mode_t* modes) {
  emitter_t* e = dc__arena_alloc(arena, sizeof(*e));
  if (e == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(e, 0, sizeof(*e));
  *e = (emitter_t){.arena = arena, .diag = diag, .ast = ast,
                   .toks = ast->tokens, .options = options, .out = out};
  plan_kernels(e, modes);
  if (e->failed) return DC_ERR_COMPILE;
  puts_out(e, kModuleSupport);
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (modes[i] == DC_EXEC_FIBERS) {
      puts_out(e, kFiberSupport);
      break;
    }
  }
  // Typedefs first: the helpers' prototypes below may use them.
  for (uint32_t k = 0; k < ast->order_count; ++k) {
    int32_t item = ast->order[k];
    if (item < 0 && ast->globals[~item].is_typedef) {
      emit_global(e, &ast->globals[~item]);
    }
  }
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    if (!ast->functions[i].is_kernel) {
      emit_helper(e, &ast->functions[i], /*prototype=*/true);
    }
  }
  for (uint32_t k = 0; k < ast->order_count && !e->failed; ++k) {
    int32_t item = ast->order[k];
    if (item < 0) {
      if (!ast->globals[~item].is_typedef) {
        emit_global(e, &ast->globals[~item]);
      }
      continue;
    }
    const dc__function_t* fn = &ast->functions[item];
    if (fn->body == NULL) continue;
    if (fn->is_kernel && modes[item] == DC_EXEC_FIBERS) {
      emit_fiber_kernel(e, fn);
    } else if (fn->is_kernel) {
      emit_kernel(e, fn, modes[item]);
    } else {
      emit_helper(e, fn, /*prototype=*/false);
    }
  }
  puts_out(e, "\n");
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  return e->failed ? DC_ERR_COMPILE : DC_OK;
}

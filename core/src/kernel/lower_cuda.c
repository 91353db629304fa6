// lower_cuda.c: the lowering to CUDA C++ (DC_KERNEL_DIALECT_CUDA_C), which
// NVRTC compiles after the prelude (lower_cuda_prelude.h), for the CUDA
// device.
//
// The shared code generator (cgen.h) writes the program from its typed
// tree in the C++ dialect. A GPU runs every work-item as a thread of its
// own, so unlike the CPU's back end this one keeps the program's
// structure: a kernel becomes an `extern "C" __global__` function, a
// helper a device function (programs compile with -default-device), a
// barrier __syncthreads(), a kernel's __local variables __shared__ ones,
// and its __local pointer parameters byte offsets into the group's
// dynamic shared memory, turned back into pointers at the top of the
// kernel. A kernel that synchronises its grid runs its body as a lambda,
// so that its returns lead to dc__grid_exit() (lower_cuda_prelude.h).
// A kernel whose work-items cannot tell which thread runs them also gets
// a coarsened entry (coarsens(), below; docs/cuda.md), four work-items
// per thread, which the device launches over large grids.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "builtin_table.h"
#include "cgen.h"
#include "lower.h"
#include "lower_cuda_names.h"
#include "strbuf.h"
#include "tree_walk.h"

// The prelude (lower_cuda_prelude.h, lower_cuda_prelude_math.h and
// lower_cuda_prelude_builtins.h), embedded at build time, and the name
// the lowered text includes it by.
extern const char dc__cuda_prelude_text[];
#define PRELUDE_NAME "dclua_prelude.cuh"
#define KERNEL_PREFIX "dc_k_"

// The entry point of a kernel's coarsened form (lower_cuda_prelude.h,
// DC__ITEMS): it differs from KERNEL_PREFIX before any user name starts.
#define COARSE_PREFIX "dc_k4_"

typedef struct emitter_t {
  dc__cgen_t g;  // first: the hooks receive it
  dc__strbuf_t out;
  const bool* coarsens;  // per function of the program (coarsens())
} emitter_t;

static void puts_out(emitter_t* e, const char* s) { dc__cgen_puts(&e->g, s); }

//===-- Hooks -----------------------------------------------------------===//

// convert_*, as_*, vloadN and vstoreN: the prelude's templates.
static const char* cuda_builtin(dc__cgen_t* g, const dc__builtin_t* b) {
  dc__token_t name = {.kind = DC_TOK_IDENT,
                      .text = b->name,
                      .length = (uint32_t)strlen(b->name)};
  char text[96];
  if (!dc__cuda_templated_builtin(&name, text, sizeof(text))) return NULL;
  return dc__arena_strndup(g->arena, text, strlen(text));
}

// A kernel's __local variables are __shared__; barriers synchronise the
// block. __syncthreads() also
// orders the group's global and shared memory accesses, whatever the
// flags ask for.
static bool cuda_stmt(dc__cgen_t* g, const dc__stmt_t* s) {
  switch (s->kind) {
    case DC_STMT_DECL:
      if (!g->in_kernel || s->declarator_count == 0 ||
          s->declarators[0].decl->type->space != DC_ADDRESS_LOCAL) {
        return false;
      }
      for (uint32_t i = 0; i < s->declarator_count; ++i) {
        const dc__decl_t* d = s->declarators[i].decl;
        dc__cgen_puts(g, " __shared__");
        dc__cgen_variable(g, d, NULL);
      }
      return true;
    case DC_STMT_BARRIER:
      dc__cgen_puts(g, " __syncthreads();");
      return true;
    case DC_STMT_GRID_SYNC:
      dc__cgen_puts(g, " dc__grid_sync();");
      return true;
    default:
      return false;
  }
}


//===-- Kernels ---------------------------------------------------------===//

// The kernel's parameter list, as dc/backend.h describes it
// (DC_KERNEL_DIALECT_CUDA_C). A checked
// kernel receives its launch record as _wl and its pointers plain, as
// dc_a<i>: its body makes them fat (emit_pointer_params).
// With |coarse|, the record is _wl (each item makes its own _wi) and
// pointers are restrict: the dispatch runs that form only over buffers
// that do not overlap (cuda_dispatch.c).
static void emit_kernel_params(emitter_t* e, const dc__function_t* fn,
                               bool coarse) {
  bool checked = e->g.checked;
  puts_out(e, checked || coarse ? "(const dc__launch_t _wl"
                                : "(const dc__launch_t _wi");
  if (checked) {
    dc__cgen_printf(&e->g, ", const dc__lengths_t<%u> dc_len",
                    fn->param_count ? fn->param_count : 1);
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    if (dc__cgen_is_local_pointer(d)) {
      dc__cgen_printf(&e->g, ", unsigned long long dc_loff_%u", i);
    } else if (checked && d->type->kind == DC_TY_POINTER) {
      dc__cgen_printf(&e->g, ", void* dc_a%u", i);
    } else if (coarse && d->type->kind == DC_TY_POINTER &&
               !(d->type->quals & DC_Q_RESTRICT)) {
      const char* name = dc__arena_printf(e->g.arena, "__restrict__ %s",
                                          dc__cgen_name(&e->g, d));
      dc__cgen_printf(&e->g, ", %s",
                      dc__cgen_declaration(&e->g, d->type, name, 0));
    } else {
      dc__cgen_printf(&e->g, ", %s",
                      dc__cgen_declaration(&e->g, d->type,
                                           dc__cgen_name(&e->g, d), 0));
    }
  }
  puts_out(e, ") {");
}

// Pointer parameters in the body: __local ones point into the dynamic
// shared memory; a checked kernel's are fat, bounded by dc_len, and its
// work-item record (dc__cwi_t) starts its watchdog clock.
static void emit_pointer_params(emitter_t* e, const dc__function_t* fn) {
  bool checked = e->g.checked;
  if (checked) puts_out(e, " dc__cwi_t _wi(_wl);");
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    bool local = dc__cgen_is_local_pointer(d);
    if (!local && !(checked && d->type->kind == DC_TY_POINTER)) continue;
    const char* decl =
        dc__cgen_declaration(&e->g, d->type, dc__cgen_name(&e->g, d), 0);
    const char* at =
        local ? dc__arena_printf(e->g.arena, "dc__smem + dc_loff_%u", i)
              : dc__arena_printf(e->g.arena, "dc_a%u", i);
    if (checked) {
      dc__cgen_printf(&e->g, " %s = dc_fp(%s, dc_len.n[%u], %uu);", decl, at,
                      i, i);
    } else {
      dc__cgen_printf(&e->g, " %s = (%s)(%s);", decl,
                      dc__cgen_declaration(&e->g, d->type, NULL, 0), at);
    }
  }
}

// Opens the definition of kernel |fn|'s entry point |prefix|K.
static void open_entry(emitter_t* e, const dc__function_t* fn,
                       const char* prefix) {
  const uint32_t* req = fn->required_group_size;
  uint64_t group =
      (uint64_t)req[0] * (req[1] ? req[1] : 1) * (req[2] ? req[2] : 1);
  dc__cgen_new_line(&e->g);
  dc__cgen_at_line(&e->g, fn->decl->token->line);
  puts_out(e, "extern \"C\" __global__ void");
  // A fixed group size lets the compiler budget registers for it.
  if (req[0] != 0 && group <= 1024) {
    dc__cgen_printf(&e->g, " __launch_bounds__(%u)", (unsigned)group);
  }
  dc__cgen_printf(&e->g, " %s%s", prefix, fn->decl->name);
}

static void cuda_kernel(dc__cgen_t* g, const dc__function_t* fn) {
  emitter_t* e = (emitter_t*)g;
  e->g.fn = fn;
  e->g.in_kernel = true;
  open_entry(e, fn, KERNEL_PREFIX);
  emit_kernel_params(e, fn, false);
  emit_pointer_params(e, fn);
  if (fn->calls_grid_sync) puts_out(e, " [&]() {");
  dc__cgen_stmt(&e->g, fn->body);
  if (fn->calls_grid_sync) puts_out(e, " }(); dc__grid_exit();");
  puts_out(e, " }");
  if (!e->coarsens[fn - e->g.ast->functions]) return;
  // The coarsened form: the body once per item, as a lambda, so that a
  // return ends that item only. The loops have a constant count, which
  // the compiler unrolls where the body is small; with restrict pointers
  // it may then issue the items' loads before their stores. A 2-D launch
  // has a loop of its own, over consecutive rows (dc__row_record), where
  // the compiler sees the addresses that neighbouring rows share.
  open_entry(e, fn, COARSE_PREFIX);
  emit_kernel_params(e, fn, true);
  puts_out(e, " auto _item = [&](const dc__launch_t _wi) {");
  dc__cgen_stmt(&e->g, fn->body);
  puts_out(e, " }; if (_wl.dims == 2) {"
              " for (uint _k = 0; _k < DC__ITEMS; ++_k)"
              " _item(dc__row_record(_wl, _k)); } else {"
              " for (uint _k = 0; _k < DC__ITEMS; ++_k)"
              " _item(dc__item_record(_wl, _k)); } }");
}

//===-- Thread coarsening -----------------------------------------------===//

// What a work-item cannot call and still run as one of several items of
// a thread (lower_cuda_prelude.h, dc__item_record): the work-item
// functions but get_global_id and get_work_dim (the others would see the
// coarsened grid, or the group), anything that synchronises or works as a
// group, and a kernel called as a function.
static bool binds_to_launch(const dc__expr_t* x) {
  if (x->kind == DC_EXPR_CALL) return x->decl->is_kernel;
  if (x->kind != DC_EXPR_BUILTIN) return false;
  switch (x->builtin->klass) {
    case DC_BUILTIN_WORK_ITEM:
      return strcmp(x->builtin->name, "get_global_id") != 0 &&
             strcmp(x->builtin->name, "get_work_dim") != 0;
    case DC_BUILTIN_SYNC:
    case DC_BUILTIN_ASYNC:
      return true;
    default:
      return false;
  }
}

// A global or constant memory access of 16 bytes or more (a float4
// element, vload4, vstore4): such a work-item already keeps as many bytes
// in flight as a coarsened one would, and running four of them per thread
// measured about 1% slower (docs/cuda.md).
static bool is_wide_access(const dc__expr_t* x) {
  if (x->kind == DC_EXPR_BUILTIN) {
    const dc__builtin_t* b = x->builtin;
    return b->klass == DC_BUILTIN_VLOAD &&
           (dc__ty_size(b->result) >= 16 ||
            (b->param_count > 0 && dc__ty_size(b->params[0]) >= 16));
  }
  bool access = x->kind == DC_EXPR_INDEX || x->kind == DC_EXPR_MEMBER ||
                (x->kind == DC_EXPR_UNARY && x->op != NULL &&
                 strcmp(x->op, "*") == 0);
  return access && x->type != NULL &&
         (x->type->space == DC_ADDRESS_GLOBAL ||
          x->type->space == DC_ADDRESS_CONSTANT) &&
         dc__ty_size(x->type) >= 16;
}

// The walk behind coarsens(): the kernel's body and, once each, the
// helpers it reaches.
typedef struct reach_t {
  const dc__program_ast_t* ast;
  bool* seen;  // per function
} reach_t;

static bool keeps_one_item(const dc__expr_t* x, void* ctx) {
  reach_t* r = ctx;
  if (binds_to_launch(x) || is_wide_access(x)) return true;
  if (x->kind != DC_EXPR_CALL || r->seen[x->decl->function]) return false;
  r->seen[x->decl->function] = true;
  return dc__stmt_any(r->ast->functions[x->decl->function].body,
                      keeps_one_item, r);
}

// Whether kernel |fn| (described by |kernel|) also gets a coarsened form:
// its work-items are independent of each other and of the launch's shape,
// and each moves less than 16 bytes per access. Not in checked mode,
// whose watchdog and polls count per work-item.
static bool coarsens(const emitter_t* e, const dc__function_t* fn,
                     const dc_lowered_kernel_t* kernel) {
  if (e->g.checked || kernel->reaches_barrier || fn->calls_grid_sync ||
      kernel->local_size != 0) {
    return false;
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (dc__cgen_is_local_pointer(fn->decl->params[i])) return false;
  }
  const dc__program_ast_t* ast = e->g.ast;
  reach_t r = {ast, dc__arena_zalloc(e->g.arena, ast->function_count + 1, 1)};
  return r.seen != NULL && !dc__stmt_any(fn->body, keeps_one_item, &r);
}

#define CUDA_HOOKS(wi)                                \
  {                                                   \
    .cxx = true, .vector_prefix = "dc_", .wi_param = wi, \
    .helper_prefix = "static", .helper_body_prefix = "", \
    .global_prefix = " static __device__", .stmt = cuda_stmt, \
    .builtin = cuda_builtin, .kernel = cuda_kernel,   \
    .safe_division = false, /* a GPU does not trap on x / 0 */ \
    .reciprocal_division = true,                      \
  }
// Helpers receive the launch record; checked ones the work-item's record,
// whose polls they count down.
static const dc__cgen_hooks_t kHooks = CUDA_HOOKS("const dc__launch_t _wi");
static const dc__cgen_hooks_t kCheckedHooks = CUDA_HOOKS("dc__cwi_t& _wi");

dc_status_t dc__lower_cuda(dc__arena_t* arena, const dc__program_ast_t* ast,
                           const char* file, bool checked, dc__diag_t* diag,
                           dc_lowered_program_t* out) {
  memset(out, 0, sizeof(*out));
  emitter_t* e = dc__arena_alloc(arena, sizeof(*e));
  if (e == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(e, 0, sizeof(*e));
  size_t count = 0;
  dc_lowered_kernel_t* kernels =
      dc__lower_describe_kernels(arena, ast, KERNEL_PREFIX, &count);
  if (kernels == NULL) return DC_ERR_OUT_OF_MEMORY;
  dc__strbuf_init(&e->out, arena);
  dc__cgen_init(&e->g, arena, diag, ast, checked ? &kCheckedHooks : &kHooks,
                &e->out, file);
  e->g.checked = checked;
  bool* coarse = dc__arena_zalloc(arena, ast->function_count + 1, 1);
  if (coarse == NULL) return DC_ERR_OUT_OF_MEMORY;
  e->coarsens = coarse;
  // A kernel reaches a barrier, for the group sizes, also through a grid
  // sync.
  bool uses_grid_sync = false;
  for (uint32_t i = 0, k = 0; i < ast->function_count; ++i) {
    const dc__function_t* fn = &ast->functions[i];
    uses_grid_sync |= fn->is_kernel && fn->calls_grid_sync;
    if (!fn->is_kernel || fn->body == NULL) continue;
    kernels[k].reaches_barrier = fn->calls_barrier ||
                                 fn->calls_grid_sync ||
                                 fn->helper_reaches_barrier;
    coarse[i] = coarsens(e, fn, &kernels[k++]);
  }
  // What the prelude compiles only for programs that need it.
  if (uses_grid_sync) puts_out(e, "#define DC__GRID_SYNC 1\n");
  if (checked) puts_out(e, "#define DC__CHECKED 1\n");
  puts_out(e, "#include \"" PRELUDE_NAME "\"\n");
  dc__cgen_program(&e->g);
  if (arena->failed) return DC_ERR_OUT_OF_MEMORY;
  if (e->g.failed) return DC_ERR_COMPILE;
  out->text = e->out.data;
  out->length = e->out.length;
  out->header_name = PRELUDE_NAME;
  out->header = dc__cuda_prelude_text;
  out->kernel_count = count;
  out->kernels = kernels;
  return DC_OK;
}

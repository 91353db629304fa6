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
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "builtin_table.h"
#include "cgen.h"
#include "lower.h"
#include "lower_cuda_names.h"
#include "strbuf.h"

// The prelude (lower_cuda_prelude.h, lower_cuda_prelude_math.h and
// lower_cuda_prelude_builtins.h), embedded at build time, and the name
// the lowered text includes it by.
extern const char dc__cuda_prelude_text[];
#define PRELUDE_NAME "dclua_prelude.cuh"
#define KERNEL_PREFIX "dc_k_"

typedef struct emitter_t {
  dc__cgen_t g;  // first: the hooks receive it
  dc__strbuf_t out;
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
static void emit_kernel_params(emitter_t* e, const dc__function_t* fn) {
  bool checked = e->g.checked;
  puts_out(e, checked ? "(const dc__launch_t _wl" : "(const dc__launch_t _wi");
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

static void cuda_kernel(dc__cgen_t* g, const dc__function_t* fn) {
  emitter_t* e = (emitter_t*)g;
  const uint32_t* req = fn->required_group_size;
  uint64_t group =
      (uint64_t)req[0] * (req[1] ? req[1] : 1) * (req[2] ? req[2] : 1);
  e->g.fn = fn;
  e->g.in_kernel = true;
  dc__cgen_new_line(&e->g);
  dc__cgen_at_line(&e->g, fn->decl->token->line);
  puts_out(e, "extern \"C\" __global__ void");
  // A fixed group size lets the compiler budget registers for it.
  if (req[0] != 0 && group <= 1024) {
    dc__cgen_printf(&e->g, " __launch_bounds__(%u)", (unsigned)group);
  }
  dc__cgen_printf(&e->g, " %s%s", KERNEL_PREFIX, fn->decl->name);
  emit_kernel_params(e, fn);
  emit_pointer_params(e, fn);
  if (fn->calls_grid_sync) puts_out(e, " [&]() {");
  dc__cgen_stmt(&e->g, fn->body);
  if (fn->calls_grid_sync) puts_out(e, " }(); dc__grid_exit();");
  puts_out(e, " }");
}

#define CUDA_HOOKS(wi)                                \
  {                                                   \
    .cxx = true, .vector_prefix = "dc_", .wi_param = wi, \
    .helper_prefix = "static", .helper_body_prefix = "", \
    .global_prefix = " static __device__", .stmt = cuda_stmt, \
    .builtin = cuda_builtin, .kernel = cuda_kernel,   \
    .safe_division = false, /* a GPU does not trap on x / 0 */ \
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
  // A kernel reaches a barrier, for the group sizes, also through a grid
  // sync.
  bool uses_grid_sync = false;
  for (uint32_t i = 0, k = 0; i < ast->function_count; ++i) {
    const dc__function_t* fn = &ast->functions[i];
    uses_grid_sync |= fn->is_kernel && fn->calls_grid_sync;
    if (!fn->is_kernel || fn->body == NULL) continue;
    kernels[k++].reaches_barrier = fn->calls_barrier ||
                                   fn->calls_grid_sync ||
                                   fn->helper_reaches_barrier;
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

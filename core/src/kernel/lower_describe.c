// lower_describe.c: what every lowering reports of each kernel
// (dc_lowered_kernel_t): its entry point, whether it reaches a barrier,
// the bytes of its __local variables.
// SPDX-License-Identifier: MIT
#include "lower.h"
#include "tree.h"
#include "types.h"

// Adds the bytes of the __local variables declared in |s| to |*bytes|,
// each at its alignment (OpenCL C declares them in kernels only).
static void count_locals(const dc__stmt_t* s, size_t* bytes) {
  if (s == NULL) return;
  if (s->kind == DC_STMT_DECL) {
    for (uint32_t i = 0; i < s->declarator_count; ++i) {
      const dc__ty_t* t = s->declarators[i].decl->type;
      if (t->space != DC_ADDRESS_LOCAL) continue;
      size_t align = dc__ty_align(t) ? dc__ty_align(t) : 1;
      *bytes = (*bytes + align - 1) / align * align + dc__ty_size(t);
    }
  }
  for (uint32_t i = 0; i < s->child_count; ++i) {
    count_locals(s->children[i], bytes);
  }
  count_locals(s->init, bytes);
  count_locals(s->body, bytes);
  count_locals(s->else_body, bytes);
}

dc_lowered_kernel_t* dc__lower_describe_kernels(dc__arena_t* arena,
                                                const dc__program_ast_t* ast,
                                                const char* prefix,
                                                size_t* out_count) {
  size_t count = 0;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    count += ast->functions[i].is_kernel && ast->functions[i].body != NULL;
  }
  dc_lowered_kernel_t* kernels =
      dc__arena_zalloc(arena, count + 1, sizeof(*kernels));
  if (kernels == NULL) return NULL;
  size_t k = 0;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    const dc__function_t* fn = &ast->functions[i];
    if (!fn->is_kernel || fn->body == NULL) continue;
    kernels[k].entry =
        dc__arena_printf(arena, "%s%s", prefix, fn->decl->name);
    kernels[k].reaches_barrier =
        fn->calls_barrier || fn->helper_reaches_barrier;
    count_locals(fn->body, &kernels[k].local_size);
    if (kernels[k++].entry == NULL) return NULL;
  }
  *out_count = count;
  return kernels;
}


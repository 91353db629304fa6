// program_build.c: what a backend's program_build reads and writes
// (dc/backend.h, "Building kernels"): the lowered program, build errors,
// and the backend's data on programs and kernels.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>

#include "lower.h"
#include "program_internal.h"

// Whether |b| is a build in progress, which only program.c's build makes.
static bool in_progress(const dc_program_build_t* b) {
  return b != NULL && b->tree != NULL && b->program != NULL &&
         b->program->building;
}

dc_status_t dc_program_build_lower(dc_program_build_t* b,
                                   dc_kernel_dialect_t dialect,
                                   dc_lowered_program_t* out) {
  static const char* fn = "dc_program_build_lower";
  DC_REQUIRE_ARG(out, fn);
  memset(out, 0, sizeof(*out));
  if (!in_progress(b)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'build' is NULL or not a build in progress (call it "
                   "from program_build)", fn);
  }
  if (dialect != DC_KERNEL_DIALECT_OPENCL_C) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: unknown dialect %d", fn,
                   (int)dialect);
  }
  const struct dc__build_tree_t* t = b->tree;
  return dc__lower_opencl(t->arena, t->ast, t->diag->file, b->checked,
                          t->diag, out);
}

dc_status_t dc_program_build_error(dc_program_build_t* b, uint32_t line,
                                   const char* format, ...) {
  static const char* fn = "dc_program_build_error";
  DC_REQUIRE_ARG(format, fn);
  if (!in_progress(b)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'build' is NULL or not a build in progress", fn);
  }
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof(message), format, ap);
  va_end(ap);
  dc__diag_error(b->tree->diag, line, 0, "%s", message);
  return DC_ERR_COMPILE;
}

// Whether |k| is a kernel of a program being built.
static bool being_built(const dc_kernel_t* k) {
  return k != NULL && dc__program_valid(k->program) && k->program->building;
}

dc_status_t dc_kernel_bind(dc_kernel_t* k, const dc_kernel_binding_t* bind) {
  static const char* fn = "dc_kernel_bind";
  DC_REQUIRE_ARG(bind, fn);
  if (!being_built(k)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'kernel' is NULL or not of a program being built", fn);
  }
  if (bind->execution == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': 'execution' is NULL", fn, k->info.name);
  }
  k->impl = bind->data;
  k->info.execution = bind->execution;
  k->info.static_local_size = bind->static_local_size;
  k->info.uses_barrier |= bind->reaches_barrier;
  if (bind->max_group_size > 0 &&
      bind->max_group_size < k->info.max_group_size) {
    k->info.max_group_size = bind->max_group_size;
  }
  return DC_OK;
}

void* dc_kernel_backend_data(const dc_kernel_t* k) {
  return dc__kernel_valid(k) ? k->impl : NULL;
}

void dc_program_set_backend_data(dc_program_t* p, void* data) {
  if (dc__program_valid(p)) p->impl = data;
}

void* dc_program_backend_data(const dc_program_t* p) {
  return dc__program_valid(p) ? p->impl : NULL;
}

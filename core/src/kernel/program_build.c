// program_build.c: what a backend's program_build reads and writes
// (dc/backend.h, "Building kernels"): the lowered program and the
// dialects' fingerprints, the build log, the backend's data on programs
// and kernels, native kernels.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "lower.h"
#include "program_internal.h"

// Whether |b| is a build in progress, which only program.c's build makes.
static bool in_progress(const dc_program_build_t* b) {
  return b != NULL && b->tree != NULL && b->program != NULL &&
         b->program->building;
}

// With DC_KERNEL_DUMP set to a directory, writes |lowered| there as
// <build name>.<the dialect's extension> ('/' in the name become '_'), to
// read what a device's compiler was given; a failure is only logged.
static void dump_lowered(const dc_program_build_t* b,
                         dc_kernel_dialect_t dialect,
                         const dc_lowered_program_t* lowered) {
  const char* dir = getenv("DC_KERNEL_DUMP");
  if (dir == NULL || *dir == '\0') return;
  const char* extension = dialect == DC_KERNEL_DIALECT_OPENCL_C ? "cl"
                          : dialect == DC_KERNEL_DIALECT_CUDA_C ? "cu"
                                                                : "c";
  char path[1024];
  int n = snprintf(path, sizeof(path), "%s/%s.%s", dir, b->name, extension);
  if (n < 0 || (size_t)n >= sizeof(path)) {
    DC_LOG(b->program->device->context, DC_LOG_WARN, "kernel",
           "DC_KERNEL_DUMP: the path for '%s' is too long", b->name);
    return;
  }
  for (char* c = path + strlen(dir) + 1; *c; ++c) {
    if (*c == '/') *c = '_';
  }
  FILE* f = fopen(path, "w");
  bool ok = f != NULL &&
            fwrite(lowered->text, 1, lowered->length, f) == lowered->length;
  if (f != NULL && fclose(f) != 0) ok = false;
  dc_context_t* ctx = b->program->device->context;
  if (ok) {
    DC_LOG(ctx, DC_LOG_DEBUG, "kernel", "wrote %s", path);
  } else {
    DC_LOG(ctx, DC_LOG_WARN, "kernel", "DC_KERNEL_DUMP: cannot write %s",
           path);
  }
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
  const struct dc__build_tree_t* t = b->tree;
  dc_status_t st;
  switch (dialect) {
    case DC_KERNEL_DIALECT_OPENCL_C:
      st = dc__lower_opencl(t->arena, t->ast, t->diag->file, b->checked,
                            t->diag, out);
      break;
    case DC_KERNEL_DIALECT_C:
      st = dc__lower_c(t->arena, t->ast, t->diag->file, b->checked, t->diag,
                       out);
      break;
    case DC_KERNEL_DIALECT_CUDA_C:
      st = dc__lower_cuda(t->arena, t->ast, t->diag->file, b->checked,
                          t->diag, out);
      break;
    default:
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: unknown dialect %d", fn,
                     (int)dialect);
  }
  if (st == DC_OK) dump_lowered(b, dialect, out);
  return st;
}

// The fingerprint of the compiler's sources (core/src/kernel, every
// lowering and prelude, dc/kernel_abi_c.h), taken at build time
// (source_digest.cmake).
extern const char dc__compiler_digest[];

dc_status_t dc_kernel_dialect_fingerprint(dc_kernel_dialect_t dialect,
                                          const char** out) {
  static const char* fn = "dc_kernel_dialect_fingerprint";
  DC_REQUIRE_ARG(out, fn);
  *out = NULL;
  if (dialect != DC_KERNEL_DIALECT_OPENCL_C &&
      dialect != DC_KERNEL_DIALECT_C && dialect != DC_KERNEL_DIALECT_CUDA_C) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: unknown dialect %d", fn,
                   (int)dialect);
  }
  // One digest serves every dialect: they share the front end and the
  // code generator, and a change to any lowering is rare enough.
  *out = dc__compiler_digest;
  return DC_OK;
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

dc_status_t dc_program_build_append_log(dc_program_build_t* b,
                                        const char* text) {
  static const char* fn = "dc_program_build_append_log";
  DC_REQUIRE_ARG(text, fn);
  if (!in_progress(b)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'build' is NULL or not a build in progress", fn);
  }
  dc__diag_append(b->tree->diag, text);
  return DC_OK;
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

bool dc_kernel_native(const dc_kernel_t* k, dc_native_kernel_t* out) {
  if (out == NULL) return false;
  memset(out, 0, sizeof(*out));
  if (!dc__kernel_valid(k) || k->native_fn == NULL) return false;
  *out = (dc_native_kernel_t){.fn = k->native_fn,
                              .user_data = k->native_user_data,
                              .args = k->args,
                              .arg_count = k->info.arg_count};
  return true;
}

// native_kernel.c: host C functions registered as kernels.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "program_internal.h"

static const char* kFn = "dc_kernel_create_native";

static dc_status_t check_arg(const dc_kernel_arg_info_t* a, size_t i) {
  if (a->name == NULL || a->name[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: argument %zu has no name",
                   kFn, i);
  }
  bool width_ok = a->vector_width == 1 || a->vector_width == 2 ||
                  a->vector_width == 4 || a->vector_width == 8 ||
                  a->vector_width == 16;
  switch (a->kind) {
    case DC_ARG_SCALAR:
      if (dc_dtype_size(a->dtype) == 0 || !width_ok) {
        return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                       "%s: argument %zu '%s' is a value, so it needs a "
                       "dtype and a vector width of 1, 2, 4, 8 or 16",
                       kFn, i, a->name);
      }
      return DC_OK;
    case DC_ARG_BUFFER:
      if (a->vector_width > 1 && !width_ok) {
        return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                       "%s: argument %zu '%s' has vector width %u (1, 2, 4, "
                       "8 or 16)",
                       kFn, i, a->name, a->vector_width);
      }
      if (a->dtype != 0 && dc_dtype_size(a->dtype) == 0) {
        return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                       "%s: argument %zu '%s' has an unknown dtype %d", kFn,
                       i, a->name, (int)a->dtype);
      }
      return DC_OK;
    case DC_ARG_LOCAL:
      return DC_OK;
    case DC_ARG_RECORD:  // a description would need the whole layout
      return DC_FAIL(DC_ERR_UNSUPPORTED,
                     "%s: argument %zu '%s' is a struct (DC_ARG_RECORD): "
                     "native kernels take values, buffers and __local "
                     "sizes; pass the struct's fields as values, or its "
                     "bytes in a buffer", kFn, i, a->name);
  }
  return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                 "%s: argument %zu '%s' has an unknown kind %d", kFn, i,
                 a->name, (int)a->kind);
}

// The kernel language's name of |dtype|, as compiled kernels' reflection
// spells types ("__global const float*", "int4").
static const char* language_type(dc_dtype_t dtype) {
  switch (dtype) {
    case DC_DTYPE_I8: return "char";
    case DC_DTYPE_U8: return "uchar";
    case DC_DTYPE_I16: return "short";
    case DC_DTYPE_U16: return "ushort";
    case DC_DTYPE_I32: return "int";
    case DC_DTYPE_U32: return "uint";
    case DC_DTYPE_I64: return "long";
    case DC_DTYPE_U64: return "ulong";
    case DC_DTYPE_F32: return "float";
    case DC_DTYPE_F64: return "double";
  }
  return "void";
}

// Copies the caller's description of argument |i| and derives the rest.
static void copy_arg(dc_program_t* p, const dc_kernel_arg_info_t* in,
                     dc_kernel_arg_info_t* out) {
  *out = *in;
  out->name = dc__arena_strndup(&p->arena, in->name, strlen(in->name));
  const char* dtype = language_type(in->dtype);
  uint32_t width = in->vector_width ? in->vector_width : 1;
  out->vector_width = width;
  switch (in->kind) {
    case DC_ARG_SCALAR:
      out->address_space = DC_ADDRESS_PRIVATE;
      out->size = dc_dtype_size(in->dtype) * width;
      out->type_name = dc__arena_printf(&p->arena, "%s%.0u", dtype,
                                        width > 1 ? width : 0);
      break;
    case DC_ARG_BUFFER:
      out->address_space = DC_ADDRESS_GLOBAL;
      out->size = 0;
      out->type_name = dc__arena_printf(&p->arena, "__global %s%s*",
                                        in->is_const ? "const " : "", dtype);
      break;
    case DC_ARG_LOCAL:
      out->address_space = DC_ADDRESS_LOCAL;
      out->size = 0;
      out->type_name = dc__arena_printf(&p->arena, "__local %s*", dtype);
      break;
    case DC_ARG_RECORD:  // refused by check_arg
      break;
  }
  // Only records have members; a caller's pointers are not kept.
  out->align = 0;
  out->is_union = false;
  out->fields = NULL;
  out->field_count = 0;
}

static dc_status_t check_params(dc_device_t* device,
                                const dc_native_kernel_params_t* params) {
  DC_REQUIRE_ARG(device, kFn);
  DC_REQUIRE_ARG(params, kFn);
  if (params->name == NULL || params->name[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: the kernel needs a name",
                   kFn);
  }
  if (params->fn == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: kernel '%s' has no function",
                   kFn, params->name);
  }
  if (params->arg_count > DC_KERNEL_MAX_ARGS ||
      (params->arg_count > 0 && params->args == NULL)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' needs %zu argument descriptions (at most "
                   "%d)",
                   kFn, params->name, params->arg_count, DC_KERNEL_MAX_ARGS);
  }
  if (device->info.kind != DC_DEVICE_KIND_CPU ||
      device->vtable->kernels == NULL) {
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "%s: device %s cannot run host functions as kernels", kFn,
                   device->info.name);
  }
  for (size_t i = 0; i < params->arg_count; ++i) {
    DC_RETURN_IF_ERROR(check_arg(&params->args[i], i));
  }
  return DC_OK;
}

dc_status_t dc_kernel_create_native(dc_device_t* device,
                                    const dc_native_kernel_params_t* params,
                                    dc_kernel_t** out_kernel) {
  DC_REQUIRE_ARG(out_kernel, kFn);
  *out_kernel = NULL;
  DC_RETURN_IF_ERROR(check_params(device, params));
  char name[300];
  snprintf(name, sizeof(name), "native:%s", params->name);
  dc_program_t* p = NULL;
  DC_RETURN_IF_ERROR(dc__program_new(device, name, &p));
  size_t n = params->arg_count;
  p->kernels = dc__arena_alloc(&p->arena, sizeof(dc_kernel_t));
  dc_kernel_arg_info_t* args =
      dc__arena_alloc(&p->arena, (n + 1) * sizeof(*args));
  if (p->kernels != NULL && args != NULL) {
    memset(p->kernels, 0, sizeof(dc_kernel_t));
    for (size_t i = 0; i < n; ++i) copy_arg(p, &params->args[i], &args[i]);
  }
  dc_kernel_t* k = p->kernels;
  if (k == NULL || args == NULL || p->arena.failed) {
    dc__program_free(p);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate kernel '%s'",
                   kFn, params->name);
  }
  p->kernel_count = 1;
  k->program = p;
  k->args = args;
  k->info.name = p->name + strlen("native:");
  k->info.arg_count = n;
  k->info.execution = "native";
  k->info.max_group_size = device->info.max_work_group_size;
  k->native_fn = params->fn;
  k->native_user_data = params->user_data;
  dc__program_publish(p);
  *out_kernel = k;
  return DC_OK;
}

// reflect_record.c: the reflection of a value argument whose type is a
// struct, union or enum: its size, alignment and members, copied out of
// the compile's types into the program's arena (the types die with the
// compile). The layout is the front end's (types.c), which the generated
// code asserts the device compiler agrees with.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "program_internal.h"
#include "types.h"

dc_dtype_t dc__scalar_dtype(dc__scalar_t scalar) {
  switch (scalar) {
    case DC_SCALAR_CHAR: return DC_DTYPE_I8;
    case DC_SCALAR_UCHAR: return DC_DTYPE_U8;
    case DC_SCALAR_BOOL: return DC_DTYPE_U8;
    case DC_SCALAR_SHORT: return DC_DTYPE_I16;
    case DC_SCALAR_USHORT: return DC_DTYPE_U16;
    case DC_SCALAR_INT: return DC_DTYPE_I32;
    case DC_SCALAR_UINT: return DC_DTYPE_U32;
    case DC_SCALAR_LONG: return DC_DTYPE_I64;
    case DC_SCALAR_PTRDIFF_T: return DC_DTYPE_I64;
    case DC_SCALAR_ULONG: return DC_DTYPE_U64;
    case DC_SCALAR_SIZE_T: return DC_DTYPE_U64;
    case DC_SCALAR_FLOAT: return DC_DTYPE_F32;
    case DC_SCALAR_DOUBLE: return DC_DTYPE_F64;
    case DC_SCALAR_VOID: break;
  }
  return (dc_dtype_t)0;
}

// dc__ty_name(), but an anonymous struct, union or enum that a typedef
// named goes by that name ("params_t", "const params_t", "range_t[2]").
static const char* type_name(dc__arena_t* arena, const dc__ty_t* t) {
  const dc__ty_t* e = t;
  const char* dims = "";
  for (; e->kind == DC_TY_ARRAY && dims != NULL; e = e->base) {
    dims = dc__arena_printf(arena, "%s[%u]", dims, e->length);
  }
  const char* alias = e->kind == DC_TY_RECORD ? e->record->alias
                      : e->kind == DC_TY_ENUM ? e->enumeration->alias
                                              : NULL;
  if (alias == NULL || dims == NULL) return dc__ty_name(arena, t);
  return dc__arena_printf(arena, "%s%s%s",
                          (e->quals & DC_Q_CONST) ? "const " : "", alias,
                          dims);
}

// A record's members. The front end accepted the record as a kernel
// argument, so its members are scalars, vectors, enums, records and arrays
// of them; records nest as deep as they were declared.
static bool describe_fields(dc__arena_t* arena, const dc__record_t* r,
                            dc_kernel_field_t** out, size_t* out_count);

static bool describe_field(dc__arena_t* arena, const dc__field_t* in,
                           dc_kernel_field_t* out) {
  const dc__ty_t* t = in->type;
  memset(out, 0, sizeof(*out));
  out->name = dc__arena_strndup(arena, in->name, strlen(in->name));
  out->type_name = type_name(arena, t->unqualified);
  out->offset = in->offset;
  out->size = dc__ty_size(t);
  if (t->kind == DC_TY_ARRAY) {
    out->array_length = 1;
    for (; t->kind == DC_TY_ARRAY; t = t->base) out->array_length *= t->length;
  }
  out->vector_width = t->kind == DC_TY_VECTOR ? t->width : 1;
  if (t->kind == DC_TY_RECORD) {
    out->is_union = t->record->is_union;
    dc_kernel_field_t* fields = NULL;
    if (!describe_fields(arena, t->record, &fields, &out->field_count)) {
      return false;
    }
    out->fields = fields;
  } else {
    out->dtype = dc__scalar_dtype(dc__ty_element(t));
  }
  return out->name != NULL;
}

static bool describe_fields(dc__arena_t* arena, const dc__record_t* r,
                            dc_kernel_field_t** out, size_t* out_count) {
  dc_kernel_field_t* fields =
      dc__arena_zalloc(arena, r->field_count, sizeof(*fields));
  if (fields == NULL) return false;
  for (uint32_t i = 0; i < r->field_count; ++i) {
    if (!describe_field(arena, &r->fields[i], &fields[i])) return false;
  }
  *out = fields;
  *out_count = r->field_count;
  return true;
}

bool dc__reflect_value(dc__arena_t* arena, const struct dc__ty_t* type,
                       dc_kernel_arg_info_t* a) {
  a->type_name = type_name(arena, type);
  if (type->kind == DC_TY_ENUM) {  // passed as its int
    a->kind = DC_ARG_SCALAR;
    a->dtype = DC_DTYPE_I32;
    a->vector_width = 1;
    a->size = 4;
    return true;
  }
  if (type->kind != DC_TY_RECORD) return a->type_name != NULL;
  const dc__record_t* r = type->record;
  dc_kernel_field_t* fields = NULL;
  a->kind = DC_ARG_RECORD;
  a->dtype = (dc_dtype_t)0;
  a->vector_width = 1;
  a->size = r->size;
  a->align = r->align;
  a->is_union = r->is_union;
  if (!describe_fields(arena, r, &fields, &a->field_count)) return false;
  a->fields = fields;
  return a->type_name != NULL;
}

// dtype.c: element types and storage modes: sizes, names, parsing.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "dc/buffer.h"

static const struct {
  const char* name;
  size_t size;
} kDtypes[] = {
    [DC_DTYPE_I8] = {"i8", 1},   [DC_DTYPE_U8] = {"u8", 1},
    [DC_DTYPE_I16] = {"i16", 2}, [DC_DTYPE_U16] = {"u16", 2},
    [DC_DTYPE_I32] = {"i32", 4}, [DC_DTYPE_U32] = {"u32", 4},
    [DC_DTYPE_I64] = {"i64", 8}, [DC_DTYPE_U64] = {"u64", 8},
    [DC_DTYPE_F32] = {"f32", 4}, [DC_DTYPE_F64] = {"f64", 8},
};

static bool dtype_known(dc_dtype_t dtype) {
  return dtype >= DC_DTYPE_I8 && dtype <= DC_DTYPE_F64;
}

size_t dc_dtype_size(dc_dtype_t dtype) {
  return dtype_known(dtype) ? kDtypes[dtype].size : 0;
}

const char* dc_dtype_name(dc_dtype_t dtype) {
  return dtype_known(dtype) ? kDtypes[dtype].name : "?";
}

bool dc_dtype_parse(const char* name, dc_dtype_t* out_dtype) {
  if (name == NULL || out_dtype == NULL) return false;
  for (int d = DC_DTYPE_I8; d <= DC_DTYPE_F64; ++d) {
    if (strcmp(name, kDtypes[d].name) == 0) {
      *out_dtype = (dc_dtype_t)d;
      return true;
    }
  }
  return false;
}

static const char* const kModes[] = {
    [DC_STORAGE_PRIVATE] = "private",
    [DC_STORAGE_SHARED] = "shared",
    [DC_STORAGE_MANAGED] = "managed",
};

const char* dc_storage_mode_name(dc_storage_mode_t mode) {
  if (mode < DC_STORAGE_PRIVATE || mode > DC_STORAGE_MANAGED) return "?";
  return kModes[mode];
}

bool dc_storage_mode_parse(const char* name, dc_storage_mode_t* out_mode) {
  if (name == NULL || out_mode == NULL) return false;
  for (int m = DC_STORAGE_PRIVATE; m <= DC_STORAGE_MANAGED; ++m) {
    if (strcmp(name, kModes[m]) == 0) {
      *out_mode = (dc_storage_mode_t)m;
      return true;
    }
  }
  return false;
}

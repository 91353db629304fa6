// kernel_args.c: arguments kept beyond the call that gave them.
//
// A dc_arg_t borrows its buffer and, for a record larger than its inline
// value, the record's bytes. Whatever keeps arguments after the call
// returns (a stream's command, a graph's op and its instances, the
// encoder's slots) holds them through here: buffers retained, large
// records copied, so nothing it keeps points into the caller's memory.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "program_internal.h"

const void* dc__arg_data(const dc_arg_t* a) {
  return a->kind == DC_ARG_RECORD && a->bytes != NULL ? a->bytes : a->value;
}

dc_status_t dc__arg_hold(dc_allocator_t allocator, dc_arg_t* dst,
                         const dc_arg_t* src) {
  dc_arg_t held = *src;
  if (held.kind != DC_ARG_BUFFER) held.buffer = NULL;
  if (held.kind != DC_ARG_RECORD) held.bytes = NULL;
  if (held.kind == DC_ARG_RECORD && held.bytes != NULL) {
    if (held.size <= sizeof(held.value)) {  // fits: no allocation
      memcpy(held.value, src->bytes, held.size);
      held.bytes = NULL;
    } else {
      void* copy = dc_allocator_malloc(allocator, held.size);
      if (copy == NULL) {
        return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                       "cannot copy a struct argument of %zu bytes",
                       held.size);
      }
      memcpy(copy, src->bytes, held.size);
      held.bytes = copy;
    }
  }
  if (held.kind == DC_ARG_BUFFER) dc_buffer_retain(held.buffer);
  *dst = held;
  return DC_OK;
}

void dc__arg_drop(dc_allocator_t allocator, dc_arg_t* a) {
  if (a->kind == DC_ARG_BUFFER) dc_buffer_release(a->buffer);
  if (a->kind == DC_ARG_RECORD && a->bytes != NULL) {
    dc_allocator_free(allocator, (void*)a->bytes, a->size);
  }
  a->buffer = NULL;
  a->bytes = NULL;
}

dc_status_t dc__args_hold(dc_allocator_t allocator, dc_arg_t* dst,
                          const dc_arg_t* src, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    dc_status_t st = dc__arg_hold(allocator, &dst[i], &src[i]);
    if (st != DC_OK) {
      dc__args_drop(allocator, dst, i);
      return st;
    }
  }
  return DC_OK;
}

void dc__args_drop(dc_allocator_t allocator, dc_arg_t* args, size_t count) {
  for (size_t i = 0; args != NULL && i < count; ++i) {
    dc__arg_drop(allocator, &args[i]);
  }
}

// host_copy.c: dc_context_host_copy (dc/backend.h), a memcpy that a
// backend fills its staging buffers with: one thread's memcpy (about
// 8 GB/s on an H200 host) is far slower than a PCIe 5 bus, so large
// copies are split into pieces over the context's worker pool.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "dc/backend.h"
#include "dc/context.h"
#include "dc/worker_pool.h"
#include "internal.h"

// Copies of at least this many bytes go over the pool, in pieces of
// PIECE bytes.
#define PARALLEL_MIN ((size_t)2 << 20)
#define PIECE ((size_t)512 << 10)

typedef struct host_copy_t {
  char* dst;
  const char* src;
  size_t size;
} host_copy_t;

static dc_status_t copy_pieces(void* user_data, size_t begin, size_t end,
                               uint32_t thread_index) {
  (void)thread_index;
  const host_copy_t* c = user_data;
  size_t from = begin * PIECE;
  size_t to = DC_MIN(end * PIECE, c->size);
  memcpy(c->dst + from, c->src + from, to - from);
  return DC_OK;
}

void dc_context_host_copy(dc_context_t* context, void* dst, const void* src,
                          size_t size) {
  if (size == 0) return;
  dc_worker_pool_t* pool =
      context != NULL ? dc_context_worker_pool(context) : NULL;
  host_copy_t c = {dst, src, size};
  size_t pieces = (size + PIECE - 1) / PIECE;
  // A pool busy with another call (whose bodies, a native kernel's, might
  // wait for the caller's device) leaves the copy to the calling thread.
  if (size < PARALLEL_MIN || pool == NULL ||
      dc_worker_pool_thread_count(pool) < 2 ||
      dc_worker_pool_try_parallel_for(pool, 0, pieces, 1, copy_pieces, &c) !=
          DC_OK) {
    memcpy(dst, src, size);
  }
}

// sha256.h: SHA-256 (FIPS 180-4), streaming and one-shot.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_SHA256_H_
#define DC_KERNEL_SHA256_H_

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

// A portable implementation for content keys and checksums (the kernel
// cache), not for secrets: it makes no attempt to run in constant time or
// to wipe its state.
//
// Use: dc__sha256_init(), then dc__sha256_update() any number of times
// with any split of the input, then dc__sha256_final(). A context is
// thread-compatible: one thread at a time. It holds no pointers, so it may
// be copied to hash several inputs that share a prefix.

#define DC_SHA256_DIGEST_SIZE 32
#define DC_SHA256_BLOCK_SIZE 64

typedef struct dc__sha256_t {
  uint32_t state[8];
  uint64_t length;                      // bytes hashed so far
  uint8_t block[DC_SHA256_BLOCK_SIZE];  // pending input
  size_t block_used;                    // bytes pending in |block|
} dc__sha256_t;

// Starts a new hash in |ctx|.
DC_INTERNAL void dc__sha256_init(dc__sha256_t* ctx);
// Adds |size| bytes at |data| to the hash. |data| may be NULL if |size| is 0.
DC_INTERNAL void dc__sha256_update(dc__sha256_t* ctx, const void* data,
                                   size_t size);
// Writes the digest of everything added to |out|. |ctx| must be
// initialized again before reuse.
DC_INTERNAL void dc__sha256_final(dc__sha256_t* ctx,
                                  uint8_t out[DC_SHA256_DIGEST_SIZE]);
// Hashes |size| bytes at |data| in one call.
DC_INTERNAL void dc__sha256(const void* data, size_t size,
                            uint8_t out[DC_SHA256_DIGEST_SIZE]);
// Writes |size| bytes at |data| (usually a digest) as lowercase hex,
// NUL-terminated, into |out|, which must hold 2 * |size| + 1 chars.
DC_INTERNAL void dc__sha256_hex(const uint8_t* data, size_t size, char* out);

#endif  // DC_KERNEL_SHA256_H_

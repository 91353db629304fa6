// sha256.c: SHA-256 as specified by FIPS 180-4, in portable C.
// SPDX-License-Identifier: MIT
#include "kernel/sha256.h"

#include <string.h>

// The first 32 bits of the fractional parts of the cube roots of the first
// 64 primes (FIPS 180-4, 4.2.2).
static const uint32_t kRound[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu,
    0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u, 0xd807aa98u, 0x12835b01u,
    0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u,
    0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu,
    0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u,
    0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u,
    0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u,
    0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u, 0x1e376c08u,
    0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu,
    0x682e6ff3u, 0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u,
    0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u,
};

static inline uint32_t rotr(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32 - n));
}

static inline uint32_t load_be32(const uint8_t* p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

static inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

// Expands one 64-byte block into the 64-word message schedule (6.2.2 step 1).
static void expand_block(const uint8_t* block, uint32_t w[64]) {
  for (int i = 0; i < 16; ++i) w[i] = load_be32(block + 4 * i);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
}

// Runs the compression function on one block (6.2.2 steps 2-4).
static void compress(uint32_t state[8], const uint8_t* block) {
  uint32_t w[64];
  expand_block(block, w);
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + s1 + ch + kRound[i] + w[i];
    uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void dc__sha256_init(dc__sha256_t* ctx) {
  // The first 32 bits of the fractional parts of the square roots of the
  // first 8 primes (5.3.3).
  static const uint32_t kInitial[8] = {
      0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
      0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u,
  };
  memcpy(ctx->state, kInitial, sizeof(kInitial));
  ctx->length = 0;
  ctx->block_used = 0;
}

void dc__sha256_update(dc__sha256_t* ctx, const void* data, size_t size) {
  if (size == 0) return;  // |data| may be NULL then
  const uint8_t* p = data;
  ctx->length += size;
  if (ctx->block_used > 0) {  // top up the pending block first
    size_t take = DC_MIN(size, DC_SHA256_BLOCK_SIZE - ctx->block_used);
    memcpy(ctx->block + ctx->block_used, p, take);
    ctx->block_used += take;
    p += take;
    size -= take;
    if (ctx->block_used < DC_SHA256_BLOCK_SIZE) return;
    compress(ctx->state, ctx->block);
    ctx->block_used = 0;
  }
  for (; size >= DC_SHA256_BLOCK_SIZE; size -= DC_SHA256_BLOCK_SIZE) {
    compress(ctx->state, p);  // whole blocks straight from the input
    p += DC_SHA256_BLOCK_SIZE;
  }
  if (size > 0) memcpy(ctx->block, p, size);
  ctx->block_used = size;
}

void dc__sha256_final(dc__sha256_t* ctx, uint8_t out[DC_SHA256_DIGEST_SIZE]) {
  // Padding (5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, then the
  // message length in bits as a big-endian 64-bit number.
  uint64_t bits = ctx->length * 8;
  uint8_t pad[DC_SHA256_BLOCK_SIZE + 8] = {0x80};
  size_t pad_size = (ctx->block_used < 56 ? 56 : 120) - ctx->block_used;
  for (int i = 0; i < 8; ++i) {
    pad[pad_size + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
  }
  dc__sha256_update(ctx, pad, pad_size + 8);
  for (int i = 0; i < 8; ++i) store_be32(out + 4 * i, ctx->state[i]);
}

void dc__sha256(const void* data, size_t size,
                uint8_t out[DC_SHA256_DIGEST_SIZE]) {
  dc__sha256_t ctx;
  dc__sha256_init(&ctx);
  dc__sha256_update(&ctx, data, size);
  dc__sha256_final(&ctx, out);
}

void dc__sha256_hex(const uint8_t* data, size_t size, char* out) {
  static const char kDigits[] = "0123456789abcdef";
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  out[2 * size] = '\0';
}

// replay_main.c: runs the front-end fuzz target (fuzz_frontend.c) without
// libFuzzer, so that every build, gcc's too, has a short fuzz pass in its
// test suite (ctest fuzz.frontend_replay).
//
//   fuzz_replay [--mutations N] [--seed S] PATH...
//
// Each PATH is a file or a directory (its *.cl files, sorted, not
// recursing).
// Every file runs once as it is; then about N inputs (2000 by default)
// made by mutating them, an equal share each, with a fixed pseudo-random
// sequence per seed (from S), so that a failure repeats exactly: the
// input that crashed is the last one named on stderr before the crash.
// Seeds that are costly to run (they drive the preprocessor into its
// limits) get a few mutations only, to keep the pass at a few seconds.
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay_util.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern size_t dc_fuzz_last_arena_bytes;  // fuzz_frontend.c

// A seed whose run allocates more than this (it drives the preprocessor
// into a limit, as its mutants mostly do) gets only a few mutations.
#define COSTLY_BYTES ((size_t)16 << 20)
#define COSTLY_MUTATIONS 4

typedef struct seed_t {
  char* path;
  uint8_t* data;
  size_t size;
  size_t arena_bytes;  // what its first run allocated
} seed_t;

typedef struct corpus_t {
  seed_t* seeds;
  size_t count;
  size_t capacity;
} corpus_t;

//===-- Reading the corpus ----------------------------------------------===//

static void add_seed(corpus_t* c, const char* path) {
  seed_t s = {.path = replay_checked(strdup(path))};
  s.data = replay_read_file(path, &s.size);
  if (c->count == c->capacity) {
    c->capacity = c->capacity ? c->capacity * 2 : 64;
    c->seeds =
        replay_checked(realloc(c->seeds, c->capacity * sizeof(seed_t)));
  }
  c->seeds[c->count++] = s;
}

// Adds the *.cl files of directory |dir|, in name order.
static void add_directory(corpus_t* c, const char* dir) {
  size_t count = 0;
  char** names = replay_list_dir(dir, ".cl", &count);
  for (size_t i = 0; i < count; ++i) {
    add_seed(c, names[i]);
    free(names[i]);
  }
  free(names);
}

//===-- Mutations -------------------------------------------------------===//

static size_t below(uint64_t* rng, size_t n) {
  return n ? (size_t)(replay_next_random(rng) % n) : 0;
}

// Fragments that steer the preprocessor and parser into their corners.
static const char* const kDictionary[] = {
    "#define ", "#undef ", "#if ", "#ifdef X\n", "#elif ", "#else\n",
    "#endif\n", "#pragma unroll ", "#pragma OPENCL EXTENSION all : ",
    "#line 9 ", "#include ", "#error ", "\n#", "#", "##", "(", ")", ",",
    "...", "__VA_ARGS__", "defined(", "_Pragma(", "__LINE__", "__FILE__",
    "/*", "*/", "//", "\"", "'", "\\\n", "\r", "\n", "0x1.p-3f", "{", "}",
    "[", "]", ";", "F(", "#define F(x, ...) x ## __VA_ARGS__ #x\n",
    "-DX=1 ", "-U", "INT_MIN", "M_PI_F",
};

typedef struct buffer_t {
  uint8_t* data;
  size_t size;
  size_t capacity;
} buffer_t;

static void reserve(buffer_t* b, size_t extra) {
  if (b->size + extra <= b->capacity) return;
  b->capacity = (b->size + extra) * 2 + 64;
  b->data = replay_checked(realloc(b->data, b->capacity));
}

static void insert(buffer_t* b, size_t at, const uint8_t* bytes, size_t n) {
  reserve(b, n);
  memmove(b->data + at + n, b->data + at, b->size - at);
  memcpy(b->data + at, bytes, n);
  b->size += n;
}

// One random edit of |b|; |other| is another seed to splice from.
static void mutate_once(buffer_t* b, const seed_t* other, uint64_t* rng) {
  size_t at = below(rng, b->size + 1);
  switch (below(rng, 7)) {
    case 0:  // flip a bit
      if (b->size) {
        b->data[below(rng, b->size)] ^= (uint8_t)(1u << below(rng, 8));
      }
      break;
    case 1: {  // overwrite a byte with one that matters to the lexer
      static const char kBytes[] = "#()\n,\"'\\\r_ .+-*/<>=!?:;{}[]x1";
      if (b->size) {
        b->data[below(rng, b->size)] =
            (uint8_t)kBytes[below(rng, sizeof(kBytes) - 1)];
      }
      break;
    }
    case 2: {  // insert a dictionary fragment
      size_t words = sizeof(kDictionary) / sizeof(kDictionary[0]);
      const char* word = kDictionary[below(rng, words)];
      insert(b, at, (const uint8_t*)word, strlen(word));
      break;
    }
    case 3: {  // delete a range
      size_t n = below(rng, 17);
      if (at + n > b->size) n = b->size - at;
      memmove(b->data + at, b->data + at + n, b->size - at - n);
      b->size -= n;
      break;
    }
    case 4: {  // duplicate a range of itself somewhere
      if (b->size == 0) break;
      size_t from = below(rng, b->size);
      size_t n = 1 + below(rng, 64);
      if (from + n > b->size) n = b->size - from;
      uint8_t* copy = replay_checked(malloc(n));
      memcpy(copy, b->data + from, n);
      insert(b, at, copy, n);
      free(copy);
      break;
    }
    case 5: {  // splice in a range of another seed
      if (other->size == 0) break;
      size_t from = below(rng, other->size);
      size_t n = 1 + below(rng, 256);
      if (from + n > other->size) n = other->size - from;
      insert(b, at, other->data + from, n);
      break;
    }
    default:  // cut the end off
      b->size = at;
      break;
  }
}

//===-- Driver ----------------------------------------------------------===//

static void run_input(const char* what, const uint8_t* data, size_t size) {
  fprintf(stderr, "%s\n", what);  // the culprit, should it crash
  // libFuzzer's inputs are buffers of exactly |size| bytes, which lets
  // AddressSanitizer catch a read past the end; so are these.
  uint8_t* exact = replay_checked(malloc(size ? size : 1));
  memcpy(exact, data, size);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
}

static size_t mutations_for(const seed_t* s, size_t per_seed) {
  if (s->arena_bytes <= COSTLY_BYTES || per_seed < COSTLY_MUTATIONS) {
    return per_seed;
  }
  return COSTLY_MUTATIONS;
}

// Runs about |total| mutations of the seeds of |c|; returns how many.
static size_t run_mutations(corpus_t* c, size_t total, uint64_t seed) {
  size_t per_seed = (total + c->count - 1) / c->count;
  buffer_t b = {0};
  size_t done = 0;
  for (size_t i = 0; i < c->count; ++i) {
    uint64_t rng = (seed ^ (0x9e3779b97f4a7c15ull * (i + 1))) | 1;
    size_t n = mutations_for(&c->seeds[i], per_seed);
    for (size_t k = 0; k < n; ++k) {
      const seed_t* s = &c->seeds[i];
      b.size = 0;
      reserve(&b, s->size);
      if (s->size) memcpy(b.data, s->data, s->size);
      b.size = s->size;
      size_t edits = 1 + below(&rng, 4);
      for (size_t e = 0; e < edits; ++e) {
        mutate_once(&b, &c->seeds[below(&rng, c->count)], &rng);
      }
      char what[600];
      snprintf(what, sizeof(what), "mutation %zu of %s (seed %llu)", k,
               s->path, (unsigned long long)seed);
      run_input(what, b.data, b.size);
      ++done;
    }
  }
  free(b.data);
  return done;
}

int main(int argc, char** argv) {
  size_t mutations = 2000;
  uint64_t seed = 20240601;
  corpus_t corpus = {0};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
      mutations = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else {
      struct stat st;
      if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
        add_directory(&corpus, argv[i]);
      } else {
        add_seed(&corpus, argv[i]);
      }
    }
  }
  if (corpus.count == 0) {
    fprintf(stderr,
            "usage: fuzz_replay [--mutations N] [--seed S] PATH...\n");
    return 2;
  }
  for (size_t i = 0; i < corpus.count; ++i) {
    seed_t* s = &corpus.seeds[i];
    run_input(s->path, s->data, s->size);
    s->arena_bytes = dc_fuzz_last_arena_bytes;
  }
  size_t done = mutations ? run_mutations(&corpus, mutations, seed) : 0;
  printf("fuzz_replay: %zu seeds, %zu mutations: no failure\n",
         corpus.count, done);
  for (size_t i = 0; i < corpus.count; ++i) {
    free(corpus.seeds[i].path);
    free(corpus.seeds[i].data);
  }
  free(corpus.seeds);
  return 0;
}

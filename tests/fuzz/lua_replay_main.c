// lua_replay_main.c: runs the Lua fuzz target (fuzz_lua.c) without
// libFuzzer, so that every build, gcc's too, fuzzes the `dc` module for a
// bounded time in its test suite (ctest fuzz.lua_replay).
//
//   fuzz_lua_replay [--seconds S] [--runs N] [--seed K] [--max-len L]
//                   [--times] [PATH...]
//
// Each PATH is a file or a directory (its files, sorted, not recursing):
// every one runs once as it is. Then inputs of up to L bytes (512 by
// default) drawn from a pseudo-random sequence fixed by K run, half of
// them mutations of the seeds, until N inputs (default: no limit) or S
// seconds (default 10) have passed, whichever comes first. The sequence
// does not depend on time, so a failure repeats with the same K: the
// input that crashed is the last one named on stderr before the crash
// ("input I (seed K)"); --runs I+1 reproduces it, and DC_FUZZ_LUA_SAVE=path
// writes each input to path before running it. --times prints how long
// each input took.
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "replay_util.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
void dc_fuzz_lua_teardown(void);  // fuzz_lua.c

typedef struct input_t {
  uint8_t* data;
  size_t size;
} input_t;

typedef struct corpus_t {
  input_t* items;
  size_t count;
  size_t capacity;
} corpus_t;

static void add_file(corpus_t* c, const char* path) {
  size_t n = 0;
  uint8_t* buf = replay_read_file(path, &n);
  if (c->count == c->capacity) {
    c->capacity = c->capacity ? c->capacity * 2 : 16;
    c->items =
        replay_checked(realloc(c->items, c->capacity * sizeof(input_t)));
  }
  c->items[c->count++] = (input_t){buf, n};
}

// Adds file |path|, or every file of directory |path| in name order.
static void add_path(corpus_t* c, const char* path) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
    add_file(c, path);
    return;
  }
  size_t count = 0;
  char** names = replay_list_dir(path, NULL, &count);
  for (size_t i = 0; i < count; ++i) {
    add_file(c, names[i]);
    free(names[i]);
  }
  free(names);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// Fills |buf| with input |index| of the sequence |seed|: random bytes, or
// a seed with some bytes changed, cut or extended. Returns its size.
static size_t make_input(const corpus_t* c, uint64_t seed, size_t index,
                         uint8_t* buf, size_t max_len) {
  uint64_t rng = (seed ^ (0x9e3779b97f4a7c15ull * (index + 1))) | 1;
  size_t size = 1 + (size_t)(replay_next_random(&rng) % max_len);
  const input_t* base =
      c->count > 0 && replay_next_random(&rng) % 2 == 0
          ? &c->items[replay_next_random(&rng) % c->count] : NULL;
  for (size_t i = 0; i < size; ++i) {
    buf[i] = (uint8_t)(replay_next_random(&rng) >> 56);
  }
  if (base != NULL && base->size > 0) {
    size_t keep = base->size < size ? base->size : size;
    memcpy(buf, base->data, keep);
    size_t edits = 1 + (size_t)(replay_next_random(&rng) % 8);
    for (size_t e = 0; e < edits; ++e) {
      size_t at = replay_next_random(&rng) % keep;
      buf[at] = (uint8_t)(replay_next_random(&rng) >> 56);
    }
  }
  return size;
}

static bool g_times;  // --times: the seconds each input took

static void run_input(const char* what, const uint8_t* data, size_t size) {
  fprintf(stderr, "%s\n", what);  // the culprit, should it crash
  double start = now_seconds();
  const char* save = getenv("DC_FUZZ_LUA_SAVE");
  if (save != NULL) {
    FILE* f = fopen(save, "wb");
    if (f != NULL) {
      fwrite(data, 1, size, f);
      fclose(f);
    }
  }
  // An input of exactly |size| bytes, as libFuzzer gives, so that
  // AddressSanitizer catches a read past its end.
  uint8_t* exact = replay_checked(malloc(size ? size : 1));
  if (size > 0) memcpy(exact, data, size);
  LLVMFuzzerTestOneInput(exact, size);
  free(exact);
  if (g_times) {
    fprintf(stderr, "%s: %zu bytes, %.3f s\n", what, size,
            now_seconds() - start);
  }
}

int main(int argc, char** argv) {
  double seconds = 10;
  uint64_t runs = UINT64_MAX, seed = 20240616;
  size_t max_len = 512;
  corpus_t corpus = {0};
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = strtod(argv[++i], NULL);
    } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--max-len") == 0 && i + 1 < argc) {
      max_len = strtoull(argv[++i], NULL, 10);
      if (max_len == 0) max_len = 1;
    } else if (strcmp(argv[i], "--times") == 0) {
      g_times = true;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: fuzz_lua_replay [--seconds S] [--runs N] "
              "[--seed K] [--max-len L] [--times] [PATH...]\n");
      return 2;
    } else {
      add_path(&corpus, argv[i]);
    }
  }
  double start = now_seconds();
  for (size_t i = 0; i < corpus.count; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "seed file %zu", i);
    run_input(what, corpus.items[i].data, corpus.items[i].size);
  }
  uint8_t* buf = replay_checked(malloc(max_len));
  uint64_t done = 0;
  while (done < runs && now_seconds() - start < seconds) {
    char what[96];
    snprintf(what, sizeof(what), "input %llu (seed %llu)",
             (unsigned long long)done, (unsigned long long)seed);
    size_t size = make_input(&corpus, seed, (size_t)done, buf, max_len);
    run_input(what, buf, size);
    ++done;
  }
  printf("fuzz_lua_replay: %zu seed files and %llu inputs in %.1f s: no "
         "failure\n", corpus.count, (unsigned long long)done,
         now_seconds() - start);
  free(buf);
  for (size_t i = 0; i < corpus.count; ++i) free(corpus.items[i].data);
  free(corpus.items);
  dc_fuzz_lua_teardown();
  return 0;
}

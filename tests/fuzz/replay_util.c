// replay_util.c: see replay_util.h.
// SPDX-License-Identifier: MIT
#include "replay_util.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void* replay_checked(void* p) {
  if (p == NULL) {
    fprintf(stderr, "fuzz replay: out of memory\n");
    exit(2);
  }
  return p;
}

uint8_t* replay_read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "fuzz replay: cannot read %s\n", path);
    exit(2);
  }
  size_t capacity = 4096, n = 0, got;
  uint8_t* buf = replay_checked(malloc(capacity));
  while ((got = fread(buf + n, 1, capacity - n, f)) > 0) {
    n += got;
    if (n == capacity) buf = replay_checked(realloc(buf, capacity *= 2));
  }
  fclose(f);
  *size = n;
  return buf;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static bool has_suffix(const char* name, const char* suffix) {
  size_t len = strlen(name), n = suffix ? strlen(suffix) : 0;
  return len > n && strcmp(name + len - n, suffix ? suffix : "") == 0;
}

char** replay_list_dir(const char* dir, const char* suffix, size_t* count) {
  DIR* d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "fuzz replay: cannot open %s\n", dir);
    exit(2);
  }
  char** names = NULL;
  size_t n = 0, capacity = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || !has_suffix(e->d_name, suffix)) continue;
    if (n == capacity) {
      capacity = capacity ? capacity * 2 : 64;
      names = replay_checked(realloc(names, capacity * sizeof(char*)));
    }
    size_t size = strlen(dir) + strlen(e->d_name) + 2;
    names[n] = replay_checked(malloc(size));
    snprintf(names[n++], size, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (n > 0) qsort(names, n, sizeof(char*), compare_names);
  // Keep the regular files only.
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
      names[kept++] = names[i];
    } else {
      free(names[i]);
    }
  }
  *count = kept;
  return names;
}

uint64_t replay_next_random(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 2685821657736338717ull;
}

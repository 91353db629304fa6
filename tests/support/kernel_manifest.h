// kernel_manifest.h: reads tests/kernels/manifest.txt, the description of
// the kernel corpus's dispatches: which program, which kernel, the grid,
// every argument (buffers with their contents, values, __local sizes),
// which buffers are results, the values they must hold and how closely
// devices must agree. check_kernel_corpus.c runs it on every device.
// SPDX-License-Identifier: MIT
//
// The format, one directive per line ('#' starts a comment):
//
//   program FILE [OPTIONS...]   a source of the corpus (relative to the
//                               manifest) and its build options; it is
//                               built on every device even without runs
//   run KERNEL                  a dispatch of the current program's kernel
//     grid G0[xG1[xG2]] [local L0[xL1[xL2]]] [offset O0[xO1[xO2]]]
//     buffer NAME DTYPE COUNT INIT [out] [tol ulp:N | tol rel:R]
//     value DTYPE[xWIDTH] V0[,V1,...]
//     record SIZE DTYPE[xN]@OFFSET=V0[,V1,...] ...
//                               a struct or union by value: SIZE bytes,
//                               zero but for the N elements of each item
//                               written from byte OFFSET
//     local BYTES
//     expect NAME V0 V1 ...     the first elements of buffer NAME
//     status NAME               the dispatch must fail with this status
//                               ("OUT_OF_RANGE", ...) on every device
//     devices cpu               runs on the CPU device only
//   end
//
// Arguments are listed in the kernel's parameter order. INIT is zero,
// sentinel (every byte 0xA5), fill:V, iota[:START[:STEP]],
// rand:SEED:LO:HI (integers in [LO, HI], floats in [LO, HI)),
// randint:SEED:LO:HI (whole numbers in [LO, HI], floats too),
// values:V0,V1,... (repeated to COUNT), patterns:SEED (integers: random
// bit patterns mixed with every width's extremes) or specials:SEED
// (floats: NaN, infinities, signed zeros, denormals, extremes and random
// values). An "out" buffer is compared between devices: integers
// exactly, floats bit for bit (NaN equal to NaN) unless a tolerance is
// given: ulp:N (at most N representable values apart) or rel:R (apart by
// at most R * max(1, |a|, |b|)).
#ifndef DC_KERNEL_MANIFEST_H_
#define DC_KERNEL_MANIFEST_H_

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dc/dc.h"

#define DC_MANIFEST_MAX_ARGS 32

typedef enum dc_manifest_arg_kind_e {
  DC_MANIFEST_BUFFER,
  DC_MANIFEST_VALUE,
  DC_MANIFEST_LOCAL,
  DC_MANIFEST_RECORD,
} dc_manifest_arg_kind_t;

#define DC_MANIFEST_MAX_RECORD 256

typedef struct dc_manifest_arg_t {
  dc_manifest_arg_kind_t kind;
  char name[32];
  dc_dtype_t dtype;
  uint32_t width;  // values: the vector width
  size_t count;    // buffers: elements
  char init[512];
  bool out;
  char tol[32];  // "" (exact), "ulp:N" or "rel:R"
  unsigned char value[128];
  unsigned char record[DC_MANIFEST_MAX_RECORD];  // records: the bytes
  size_t record_size;
  size_t local_bytes;
  char expect[2048];  // "V0 V1 ..." or ""
} dc_manifest_arg_t;

typedef struct dc_manifest_run_t {
  char file[128];
  char options[256];
  char kernel[64];  // "" for a program built without runs
  int line;         // of the run in the manifest
  uint32_t dims;
  size_t global[3], local[3], offset[3];
  dc_manifest_arg_t args[DC_MANIFEST_MAX_ARGS];
  size_t arg_count;
  char status[48];  // the failure it must end with, "" for success
  bool cpu_only;
} dc_manifest_run_t;

typedef struct dc_manifest_t {
  dc_manifest_run_t* runs;
  size_t count;
  char error[512];  // why reading failed
} dc_manifest_t;

// Parses "AxBxC" into up to three sizes; returns how many.
static inline uint32_t dc_manifest_sizes(const char* text, size_t out[3]) {
  uint32_t n = 0;
  for (const char* p = text; *p && n < 3;) {
    char* end = NULL;
    out[n++] = (size_t)strtoull(p, &end, 10);
    if (end == p) return 0;
    p = *end == 'x' ? end + 1 : end;
    if (*end != 'x') break;
  }
  return n;
}

static inline bool dc_manifest_is_float(dc_dtype_t dtype) {
  return dtype == DC_DTYPE_F32 || dtype == DC_DTYPE_F64;
}

// Stores |text|'s number as element |i| of |dtype| at |bytes|.
static inline void dc_manifest_store(dc_dtype_t dtype, void* bytes, size_t i,
                                     const char* text) {
  // memcpy: |bytes| may be a value's unaligned storage.
  switch (dtype) {
    case DC_DTYPE_F32: {
      float f = strtof(text, NULL);
      memcpy((char*)bytes + i * sizeof(f), &f, sizeof(f));
      break;
    }
    case DC_DTYPE_F64: {
      double d = strtod(text, NULL);
      memcpy((char*)bytes + i * sizeof(d), &d, sizeof(d));
      break;
    }
    default: {  // integers: the low bytes (little-endian) of 64 bits
      uint64_t v = text[0] == '-' ? (uint64_t)strtoll(text, NULL, 0)
                                  : strtoull(text, NULL, 0);
      memcpy((char*)bytes + i * dc_dtype_size(dtype), &v,
             dc_dtype_size(dtype));
    }
  }
}

// "f32" or "i32x4".
static inline bool dc_manifest_type(const char* text, dc_dtype_t* dtype,
                                    uint32_t* width) {
  char name[16];
  const char* x = strchr(text, 'x');
  size_t n = x ? (size_t)(x - text) : strlen(text);
  if (n == 0 || n >= sizeof(name)) return false;
  memcpy(name, text, n);
  name[n] = '\0';
  *width = x ? (uint32_t)atoi(x + 1) : 1;
  return dc_dtype_parse(name, dtype) && *width >= 1 && *width <= 16;
}

static inline bool dc_manifest_fail(dc_manifest_t* m, int line,
                                    const char* what) {
  snprintf(m->error, sizeof(m->error), "manifest.txt:%d: %s", line, what);
  return false;
}

static inline bool dc_manifest_grid(dc_manifest_run_t* r, char* rest) {
  char* save = NULL;
  for (char* w = strtok_r(rest, " \t", &save); w != NULL;
       w = strtok_r(NULL, " \t", &save)) {
    if (strcmp(w, "local") == 0 || strcmp(w, "offset") == 0) {
      char* v = strtok_r(NULL, " \t", &save);
      size_t* into = w[0] == 'l' ? r->local : r->offset;
      if (v == NULL || dc_manifest_sizes(v, into) != r->dims) return false;
    } else if ((r->dims = dc_manifest_sizes(w, r->global)) == 0) {
      return false;
    }
  }
  return r->dims > 0;
}

static inline bool dc_manifest_buffer(dc_manifest_arg_t* a, char* rest) {
  char type[16], init[512], extra[4][32] = {{0}};
  int n = sscanf(rest, "%31s %15s %zu %511s %31s %31s %31s", a->name, type,
                 &a->count, init, extra[0], extra[1], extra[2]);
  uint32_t width;
  if (n < 4 || !dc_manifest_type(type, &a->dtype, &width) || width != 1) {
    return false;
  }
  a->kind = DC_MANIFEST_BUFFER;
  snprintf(a->init, sizeof(a->init), "%s", init);
  for (int i = 0; i + 4 < n; ++i) {
    if (strcmp(extra[i], "out") == 0) a->out = true;
    if (strcmp(extra[i], "tol") == 0 && i + 5 < n) {
      snprintf(a->tol, sizeof(a->tol), "%s", extra[i + 1]);
    }
  }
  return true;
}

static inline bool dc_manifest_value(dc_manifest_arg_t* a, char* rest) {
  char type[16], values[512];
  if (sscanf(rest, "%15s %511s", type, values) != 2 ||
      !dc_manifest_type(type, &a->dtype, &a->width) ||
      a->width * dc_dtype_size(a->dtype) > sizeof(a->value)) {
    return false;
  }
  a->kind = DC_MANIFEST_VALUE;
  uint32_t i = 0;
  char* save = NULL;
  for (char* v = strtok_r(values, ",", &save); v && i < a->width;
       v = strtok_r(NULL, ",", &save)) {
    dc_manifest_store(a->dtype, a->value, i++, v);
  }
  return i == a->width;
}

// "SIZE f32@0=1.5 i16x3@4=1,2,3": each item's elements stored from its
// offset into zeroed bytes.
static inline bool dc_manifest_record(dc_manifest_arg_t* a, char* rest) {
  char* save = NULL;
  char* w = strtok_r(rest, " \t", &save);
  if (w == NULL) return false;
  a->record_size = (size_t)strtoull(w, NULL, 10);
  if (a->record_size == 0 || a->record_size > sizeof(a->record)) return false;
  a->kind = DC_MANIFEST_RECORD;
  while ((w = strtok_r(NULL, " \t", &save)) != NULL) {
    char* at = strchr(w, '@');
    char* eq = at != NULL ? strchr(at, '=') : NULL;
    if (eq == NULL) return false;
    *at = '\0';
    dc_dtype_t dtype;
    uint32_t n;
    size_t offset = (size_t)strtoull(at + 1, NULL, 10);
    if (!dc_manifest_type(w, &dtype, &n) ||
        offset + n * dc_dtype_size(dtype) > a->record_size) {
      return false;
    }
    uint32_t i = 0;
    char* inner = NULL;
    for (char* v = strtok_r(eq + 1, ",", &inner); v && i < n;
         v = strtok_r(NULL, ",", &inner)) {
      dc_manifest_store(dtype, a->record + offset, i++, v);
    }
    if (i != n) return false;
  }
  return true;
}

static inline dc_manifest_arg_t* dc_manifest_find(dc_manifest_run_t* r,
                                                  const char* name) {
  for (size_t i = 0; i < r->arg_count; ++i) {
    if (r->args[i].kind == DC_MANIFEST_BUFFER &&
        strcmp(r->args[i].name, name) == 0) {
      return &r->args[i];
    }
  }
  return NULL;
}

// One directive inside a run; false if it is malformed.
static inline bool dc_manifest_run_line(dc_manifest_run_t* r, const char* word,
                                        char* rest) {
  if (strcmp(word, "grid") == 0) return dc_manifest_grid(r, rest);
  if (strcmp(word, "status") == 0) {
    return sscanf(rest, "%47s", r->status) == 1;
  }
  if (strcmp(word, "devices") == 0) {
    r->cpu_only = strncmp(rest, "cpu", 3) == 0;
    return true;
  }
  if (strcmp(word, "expect") == 0) {
    char name[32];
    int used = 0;
    if (sscanf(rest, "%31s %n", name, &used) != 1) return false;
    dc_manifest_arg_t* a = dc_manifest_find(r, name);
    if (a == NULL) return false;
    snprintf(a->expect, sizeof(a->expect), "%s", rest + used);
    return true;
  }
  if (r->arg_count == DC_MANIFEST_MAX_ARGS) return false;
  dc_manifest_arg_t* a = &r->args[r->arg_count];
  memset(a, 0, sizeof(*a));
  bool ok = false;
  if (strcmp(word, "buffer") == 0) ok = dc_manifest_buffer(a, rest);
  if (strcmp(word, "value") == 0) ok = dc_manifest_value(a, rest);
  if (strcmp(word, "record") == 0) ok = dc_manifest_record(a, rest);
  if (strcmp(word, "local") == 0) {
    a->kind = DC_MANIFEST_LOCAL;
    ok = sscanf(rest, "%zu", &a->local_bytes) == 1 && a->local_bytes > 0;
  }
  if (ok) ++r->arg_count;
  return ok;
}

static inline bool dc_manifest_add(dc_manifest_t* m,
                                   const dc_manifest_run_t* r) {
  dc_manifest_run_t* runs = realloc(m->runs, (m->count + 1) * sizeof(*m->runs));
  if (runs == NULL) return false;
  m->runs = runs;
  m->runs[m->count++] = *r;
  return true;
}

// Reads the manifest at |path| into |m| (free it with
// dc_manifest_free). Returns false with m->error set if it is malformed.
static inline bool dc_manifest_read(const char* path, dc_manifest_t* m) {
  memset(m, 0, sizeof(*m));
  FILE* f = fopen(path, "r");
  if (f == NULL) return dc_manifest_fail(m, 0, "cannot be opened");
  static dc_manifest_run_t program, run;  // large: not on the stack
  memset(&program, 0, sizeof(program));
  bool in_run = false, ok = true, has_program = false;
  char line[4096];
  for (int number = 1; ok && fgets(line, sizeof(line), f); ++number) {
    char* hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char word[32];
    int used = 0;
    if (sscanf(line, "%31s %n", word, &used) != 1) continue;
    char* rest = line + used;
    rest[strcspn(rest, "\r\n")] = '\0';
    if (strcmp(word, "program") == 0 && !in_run) {
      if (has_program && program.line >= 0) ok = dc_manifest_add(m, &program);
      memset(&program, 0, sizeof(program));
      if (sscanf(rest, "%127s %n", program.file, &used) != 1) {
        ok = dc_manifest_fail(m, number, "program needs a file");
      }
      snprintf(program.options, sizeof(program.options), "%s", rest + used);
      program.line = number;
      has_program = true;
    } else if (strcmp(word, "run") == 0 && has_program && !in_run) {
      run = program;
      run.line = number;
      in_run = sscanf(rest, "%63s", run.kernel) == 1;
      program.line = -1;  // it has runs: no build-only entry
      if (!in_run) ok = dc_manifest_fail(m, number, "run needs a kernel");
    } else if (strcmp(word, "end") == 0 && in_run) {
      in_run = false;
      if (run.dims == 0)
        ok = dc_manifest_fail(m, number, "run has no grid");
      else
        ok = dc_manifest_add(m, &run);
    } else if (!in_run || !dc_manifest_run_line(&run, word, rest)) {
      ok = dc_manifest_fail(m, number, "malformed directive");
    }
  }
  if (ok && in_run) ok = dc_manifest_fail(m, 0, "a run lacks its end");
  if (ok && has_program && program.line >= 0) {
    ok = dc_manifest_add(m, &program);
  }
  fclose(f);
  return ok;
}

static inline void dc_manifest_free(dc_manifest_t* m) {
  free(m->runs);
  m->runs = NULL;
  m->count = 0;
}

// Reads |dir|/manifest.txt, as dc_manifest_read().
static inline bool dc_corpus_read_manifest_in(const char* dir,
                                              dc_manifest_t* m) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/manifest.txt", dir);
  return dc_manifest_read(path, m);
}

// Reads |dir|/|file| whole: a malloc'd NUL-terminated string, or NULL if it
// cannot be read.
static inline char* dc_corpus_read_file_in(const char* dir, const char* file) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = n >= 0 ? malloc((size_t)n + 1) : NULL;
  size_t got = text != NULL ? fread(text, 1, (size_t)n, f) : 0;
  fclose(f);
  if (text != NULL) text[got] = '\0';
  return text;
}

#ifdef DC_KERNEL_CORPUS_DIR  // the corpus a test runs (tests/kernels, ...)
static inline bool dc_corpus_read_manifest(dc_manifest_t* m) {
  return dc_corpus_read_manifest_in(DC_KERNEL_CORPUS_DIR, m);
}

static inline char* dc_corpus_read_file(const char* file) {
  return dc_corpus_read_file_in(DC_KERNEL_CORPUS_DIR, file);
}
#endif

#endif  // DC_KERNEL_MANIFEST_H_

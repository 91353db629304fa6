// kernel_runs.h: runs one dispatch of the kernel corpus (a run of
// tests/kernels/manifest.txt, read by kernel_manifest.h) on a device and
// compares its results with another device's: the inputs each INIT of the
// manifest names, the dispatch, the results read back, and the element
// comparison under the run's tolerance. check_kernel_corpus.c and
// check_differential.c share it, so both draw the same inputs.
// SPDX-License-Identifier: MIT
//
// Like check_util.h, everything here is static (functions static inline),
// and helpers that fail call ck_assert, so they run inside tests only.
#ifndef DC_KERNEL_RUNS_H_
#define DC_KERNEL_RUNS_H_

#include <math.h>

#include "check_util.h"
#include "kernel_manifest.h"

//===-- Inputs ----------------------------------------------------------===//

static inline void dc_runs_put_float(dc_dtype_t dtype, void* bytes, size_t i,
                                     double v) {
  if (dtype == DC_DTYPE_F32) {
    ((float*)bytes)[i] = (float)v;
  } else {
    ((double*)bytes)[i] = v;
  }
}

static inline void dc_runs_put_int(dc_dtype_t dtype, void* bytes, size_t i,
                                   uint64_t v) {
  memcpy((char*)bytes + i * dc_dtype_size(dtype), &v, dc_dtype_size(dtype));
}

static inline void dc_runs_put_number(dc_dtype_t dtype, void* bytes,
                                      size_t i, double f, int64_t n) {
  if (dc_manifest_is_float(dtype)) {
    dc_runs_put_float(dtype, bytes, i, f);
  } else {
    dc_runs_put_int(dtype, bytes, i, (uint64_t)n);
  }
}

// patterns: random bits mixed with the extremes of every integer width.
static inline uint64_t dc_runs_pattern(uint64_t* seed) {
  static const uint64_t kSpecial[] = {
      0, 1, ~0ull, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
      0x80000000ull, 0xffffffffull, 0x7fffffffffffffffull,
      0x8000000000000000ull, 2, 3, 0x55, 0xaa};
  uint64_t r = dc_test_rand(seed);
  size_t n = sizeof(kSpecial) / sizeof(kSpecial[0]);
  if (r % 3 == 0) return kSpecial[(r >> 8) % n];
  if (r % 3 == 1) return (r >> 8) % 1000 - 500;
  return dc_test_rand(seed);
}

// specials: NaN, infinities, signed zeros, denormals, extremes and random
// values.
static inline double dc_runs_special(uint64_t* seed, bool single) {
  double kSpecial[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0,
                       single ? 1e-40 : 1e-310, single ? 3.4e38 : 1.7e308,
                       single ? 1.2e-38 : 2.3e-308, 0.5, 2.0};
  uint64_t r = dc_test_rand(seed);
  size_t n = sizeof(kSpecial) / sizeof(kSpecial[0]);
  if (r % 2 == 0) return kSpecial[(r >> 8) % n];
  return ((double)(r >> 11) * 0x1p-53 - 0.5) * 200.0;
}

// The generator of a seeded INIT: the same seed gives the same stream.
static inline uint64_t dc_runs_seed(unsigned long long seed) {
  return seed * 2654435761ull + 1;
}

static inline void dc_runs_fill_values(const dc_manifest_arg_t* a,
                                       void* bytes) {
  char list[512];
  snprintf(list, sizeof(list), "%s", a->init + 7);  // after "values:"
  char* items[256];
  size_t count = 0;
  char* save = NULL;
  for (char* v = strtok_r(list, ",", &save); v && count < 256;
       v = strtok_r(NULL, ",", &save)) {
    items[count++] = v;
  }
  for (size_t i = 0; i < a->count && count > 0; ++i) {
    dc_manifest_store(a->dtype, bytes, i, items[i % count]);
  }
}

// Writes the |a->count| elements |a->init| describes into |bytes|
// (kernel_manifest.h lists the INITs). False for an INIT it does not know.
static inline bool dc_runs_fill(const dc_manifest_arg_t* a, void* bytes) {
  const char* init = a->init;
  size_t n = a->count, size = dc_dtype_size(a->dtype);
  bool floating = dc_manifest_is_float(a->dtype);
  double lo = 0, hi = 0, start = 0, step = 1;
  unsigned long long seed = 0;
  if (strcmp(init, "zero") == 0) {
    memset(bytes, 0, n * size);
  } else if (strcmp(init, "sentinel") == 0) {
    memset(bytes, 0xA5, n * size);
  } else if (strncmp(init, "fill:", 5) == 0) {
    for (size_t i = 0; i < n; ++i) {
      dc_manifest_store(a->dtype, bytes, i, init + 5);
    }
  } else if (strncmp(init, "iota", 4) == 0) {
    sscanf(init, "iota:%lf:%lf", &start, &step);
    for (size_t i = 0; i < n; ++i) {
      double v = start + step * (double)i;
      dc_runs_put_number(a->dtype, bytes, i, v, (int64_t)v);
    }
  } else if (sscanf(init, "rand:%llu:%lf:%lf", &seed, &lo, &hi) == 3) {
    uint64_t s = dc_runs_seed(seed);
    for (size_t i = 0; i < n; ++i) {
      uint64_t r = dc_test_rand(&s);
      double f = lo + (hi - lo) * (double)(r >> 11) * 0x1p-53;
      int64_t k = (int64_t)lo + (int64_t)(r % (uint64_t)(hi - lo + 1));
      dc_runs_put_number(a->dtype, bytes, i, f, k);
    }
  } else if (sscanf(init, "randint:%llu:%lf:%lf", &seed, &lo, &hi) == 3) {
    uint64_t s = dc_runs_seed(seed);
    for (size_t i = 0; i < n; ++i) {
      int64_t k = (int64_t)lo +
                  (int64_t)(dc_test_rand(&s) % (uint64_t)(hi - lo + 1));
      dc_runs_put_number(a->dtype, bytes, i, (double)k, k);
    }
  } else if (sscanf(init, "patterns:%llu", &seed) == 1 && !floating) {
    uint64_t s = dc_runs_seed(seed);
    for (size_t i = 0; i < n; ++i) {
      dc_runs_put_int(a->dtype, bytes, i, dc_runs_pattern(&s));
    }
  } else if (sscanf(init, "specials:%llu", &seed) == 1 && floating) {
    uint64_t s = dc_runs_seed(seed);
    for (size_t i = 0; i < n; ++i) {
      dc_runs_put_float(a->dtype, bytes, i,
                        dc_runs_special(&s, a->dtype == DC_DTYPE_F32));
    }
  } else if (strncmp(init, "values:", 7) == 0) {
    dc_runs_fill_values(a, bytes);
  } else {
    return false;
  }
  return true;
}

//===-- Comparing -------------------------------------------------------===//

static inline double dc_runs_element(dc_dtype_t dtype, const void* bytes,
                                     size_t i) {
  return dtype == DC_DTYPE_F32 ? ((const float*)bytes)[i]
                               : ((const double*)bytes)[i];
}

// A float's bits as an integer that orders like the values, so that the
// difference of two is their distance in ulps.
static inline int64_t dc_runs_ordered(dc_dtype_t dtype, const void* bytes,
                                      size_t i) {
  if (dtype == DC_DTYPE_F32) {
    int32_t b;
    memcpy(&b, (const float*)bytes + i, 4);
    return b < 0 ? (int64_t)INT32_MIN - b : b;
  }
  int64_t b;
  memcpy(&b, (const double*)bytes + i, 8);
  return b < 0 ? INT64_MIN - b : b;
}

// Whether element |i| of |a| and |b| agree: integers exactly; floats bit
// for bit, NaN with NaN, or within |tol| ("ulp:N" or "rel:R"; "" none).
static inline bool dc_runs_same_element(dc_dtype_t dtype, const char* tol,
                                        const void* a, const void* b,
                                        size_t i) {
  size_t size = dc_dtype_size(dtype);
  if (memcmp((const char*)a + i * size, (const char*)b + i * size, size) ==
      0) {
    return true;
  }
  if (!dc_manifest_is_float(dtype)) return false;
  double x = dc_runs_element(dtype, a, i), y = dc_runs_element(dtype, b, i);
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (isinf(x) || isinf(y)) return x == y;
  unsigned long long ulps = 0;
  double rel = 0;
  if (sscanf(tol, "ulp:%llu", &ulps) == 1) {
    int64_t d = dc_runs_ordered(dtype, a, i) - dc_runs_ordered(dtype, b, i);
    return (unsigned long long)(d < 0 ? -d : d) <= ulps;
  }
  if (sscanf(tol, "rel:%lf", &rel) == 1) {
    double scale = fmax(1.0, fmax(fabs(x), fabs(y)));
    return fabs(x - y) <= rel * scale;
  }
  return x == y;  // +0 and -0 differ in bits but not in value
}

// Element |i| as text: every digit of a float, an integer with its sign.
static inline void dc_runs_describe(dc_dtype_t dtype, const void* bytes,
                                    size_t i, char* out, size_t size) {
  if (dc_manifest_is_float(dtype)) {
    snprintf(out, size, "%.17g", dc_runs_element(dtype, bytes, i));
    return;
  }
  int64_t v = 0;
  memcpy(&v, (const char*)bytes + i * dc_dtype_size(dtype),
         dc_dtype_size(dtype));
  size_t bits = 8 * dc_dtype_size(dtype);
  bool is_signed = dtype == DC_DTYPE_I8 || dtype == DC_DTYPE_I16 ||
                   dtype == DC_DTYPE_I32 || dtype == DC_DTYPE_I64;
  if (bits < 64 && is_signed && (v >> (bits - 1)) & 1) {
    v -= (int64_t)1 << bits;
  }
  if (!is_signed && bits < 64) v &= ((int64_t)1 << bits) - 1;
  snprintf(out, size, "%lld", (long long)v);
}

//===-- Running ---------------------------------------------------------===//

// What one run gave on one device: how it ended, and each buffer
// argument's contents afterwards (NULL for other arguments).
typedef struct dc_runs_result_t {
  dc_status_t status;
  char message[512];
  void* bytes[DC_MANIFEST_MAX_ARGS];
} dc_runs_result_t;

static inline void dc_runs_result_free(dc_runs_result_t* r) {
  for (size_t i = 0; i < DC_MANIFEST_MAX_ARGS; ++i) free(r->bytes[i]);
  memset(r, 0, sizeof(*r));
}

// Makes |run|'s argument |i| on |device|: a buffer holding its INIT (kept
// in |out| too, and in |*buffer|), a value, a record or a __local size.
static inline dc_arg_t dc_runs_make_arg(dc_device_t* device,
                                        const dc_manifest_run_t* run,
                                        size_t i, dc_runs_result_t* out,
                                        dc_buffer_t** buffer) {
  const dc_manifest_arg_t* a = &run->args[i];
  if (a->kind == DC_MANIFEST_VALUE) {
    return dc_arg_value(a->dtype, a->width, a->value);
  }
  if (a->kind == DC_MANIFEST_LOCAL) return dc_arg_local(a->local_bytes);
  if (a->kind == DC_MANIFEST_RECORD) {  // borrowed from the manifest
    return dc_arg_bytes(a->record, a->record_size);
  }
  size_t bytes = a->count * dc_dtype_size(a->dtype);
  out->bytes[i] = malloc(bytes ? bytes : 1);
  ck_assert_ptr_nonnull(out->bytes[i]);
  ck_assert_msg(dc_runs_fill(a, out->bytes[i]),
                "manifest line %d: unknown init '%s'", run->line, a->init);
  *buffer = dc_test_buffer_new(device, a->dtype, a->count, a->name);
  out->status = dc_buffer_write(*buffer, 0, out->bytes[i], a->count);
  return dc_arg_buffer(*buffer);
}

// Runs |run| with |kernel| (of a program built for |device|) on fresh
// buffers of |device| holding the run's inputs, and reads every buffer
// back into |out| (free it with dc_runs_result_free).
static inline void dc_runs_execute(dc_device_t* device, dc_kernel_t* kernel,
                                   const dc_manifest_run_t* run,
                                   dc_runs_result_t* out) {
  memset(out, 0, sizeof(*out));
  dc_arg_t args[DC_MANIFEST_MAX_ARGS];
  dc_buffer_t* buffers[DC_MANIFEST_MAX_ARGS] = {0};
  for (size_t i = 0; i < run->arg_count && out->status == DC_OK; ++i) {
    args[i] = dc_runs_make_arg(device, run, i, out, &buffers[i]);
  }
  dc_dispatch_t grid = {.dims = run->dims};
  memcpy(grid.global, run->global, sizeof(grid.global));
  memcpy(grid.local, run->local, sizeof(grid.local));
  memcpy(grid.offset, run->offset, sizeof(grid.offset));
  if (out->status == DC_OK) {
    out->status = dc_kernel_dispatch(kernel, &grid, args, run->arg_count);
  }
  snprintf(out->message, sizeof(out->message), "%s",
           out->status == DC_OK ? "" : dc_last_error());
  for (size_t i = 0; i < run->arg_count; ++i) {
    if (buffers[i] == NULL) continue;
    if (out->status == DC_OK) {
      out->status = dc_buffer_read(buffers[i], 0, out->bytes[i],
                                   run->args[i].count);
      if (out->status != DC_OK) {
        snprintf(out->message, sizeof(out->message), "%s", dc_last_error());
      }
    }
    dc_buffer_release(buffers[i]);
  }
}

#endif  // DC_KERNEL_RUNS_H_

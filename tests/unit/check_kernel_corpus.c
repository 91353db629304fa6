// check_kernel_corpus.c: runs the kernel corpus (tests/kernels, described
// by manifest.txt; see kernel_manifest.h) on every device of a context.
// The CPU device is the reference: its results must match the manifest's
// expected values, and every other device (a CUDA GPU, when the machine
// has one) must give the CPU's results, exactly or within the tolerance
// the manifest allows. Without a GPU it checks the corpus itself: every
// program builds and every run gives its expected values on the CPU.
// SPDX-License-Identifier: MIT
#include <ftw.h>
#include <math.h>

#include "check_util.h"
#include "kernel_manifest.h"

#ifndef DC_KERNEL_CORPUS_DIR
#error "DC_KERNEL_CORPUS_DIR must name the tests/kernels directory"
#endif

// The results of one run on one device: each buffer's bytes.
typedef struct results_t {
  dc_status_t status;
  char message[512];
  void* bytes[DC_MANIFEST_MAX_ARGS];
} results_t;

static void results_free(results_t* r) {
  for (size_t i = 0; i < DC_MANIFEST_MAX_ARGS; ++i) free(r->bytes[i]);
  memset(r, 0, sizeof(*r));
}

static int failures;

#define REPORT(...)               \
  do {                            \
    fprintf(stderr, "corpus: ");  \
    fprintf(stderr, __VA_ARGS__); \
    fprintf(stderr, "\n");        \
    ++failures;                   \
  } while (0)

//===-- Programs --------------------------------------------------------===//

typedef struct built_t {
  dc_device_t* device;
  char file[128];
  char options[256];
  dc_program_t* program;  // NULL: the build failed (reported once)
} built_t;

static built_t built[256];
static size_t built_count;

static char* read_source(const char* file) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", DC_KERNEL_CORPUS_DIR, file);
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = malloc((size_t)n + 1);
  size_t got = text ? fread(text, 1, (size_t)n, f) : 0;
  fclose(f);
  if (text) text[got] = '\0';
  return text;
}

// The program of |run| on |device|, built once.
static dc_program_t* program_of(dc_device_t* device,
                                const dc_manifest_run_t* run) {
  for (size_t i = 0; i < built_count; ++i) {
    if (built[i].device == device && strcmp(built[i].file, run->file) == 0 &&
        strcmp(built[i].options, run->options) == 0) {
      return built[i].program;
    }
  }
  ck_assert_uint_lt(built_count, sizeof(built) / sizeof(built[0]));
  built_t* b = &built[built_count++];
  *b = (built_t){.device = device};
  snprintf(b->file, sizeof(b->file), "%s", run->file);
  snprintf(b->options, sizeof(b->options), "%s", run->options);
  char* source = read_source(run->file);
  if (source == NULL) {
    REPORT("%s: cannot read it", run->file);
    return NULL;
  }
  const char* name = strrchr(run->file, '/');
  dc_program_params_t params = {.source = source,
                                .name = name ? name + 1 : run->file,
                                .options = run->options};
  dc_status_t st = dc_program_create(device, &params, &b->program);
  if (st != DC_OK) {
    REPORT("%s (%s) does not build on %s: %s", run->file, run->options,
           dc_device_info(device)->name, dc_last_error());
    b->program = NULL;
  }
  free(source);
  return b->program;
}

static void release_programs(void) {
  for (size_t i = 0; i < built_count; ++i) {
    dc_program_release(built[i].program);
  }
  built_count = 0;
}

//===-- Buffer contents -------------------------------------------------===//

static void put_float(dc_dtype_t dtype, void* bytes, size_t i, double v) {
  if (dtype == DC_DTYPE_F32) {
    ((float*)bytes)[i] = (float)v;
  } else {
    ((double*)bytes)[i] = v;
  }
}

static void put_int(dc_dtype_t dtype, void* bytes, size_t i, uint64_t v) {
  memcpy((char*)bytes + i * dc_dtype_size(dtype), &v, dc_dtype_size(dtype));
}

static void put_number(dc_dtype_t dtype, void* bytes, size_t i, double f,
                       int64_t n) {
  if (dc_manifest_is_float(dtype)) {
    put_float(dtype, bytes, i, f);
  } else {
    put_int(dtype, bytes, i, (uint64_t)n);
  }
}

// Random bits mixed with the extremes of every integer width.
static uint64_t pattern(uint64_t* seed) {
  static const uint64_t kSpecial[] = {0,
                                      1,
                                      ~0ull,
                                      0x7f,
                                      0x80,
                                      0xff,
                                      0x7fff,
                                      0x8000,
                                      0xffff,
                                      0x7fffffff,
                                      0x80000000ull,
                                      0xffffffffull,
                                      0x7fffffffffffffffull,
                                      0x8000000000000000ull,
                                      2,
                                      3,
                                      0x55,
                                      0xaa};
  uint64_t r = dc_test_rand(seed);
  size_t n = sizeof(kSpecial) / sizeof(kSpecial[0]);
  if (r % 3 == 0) return kSpecial[(r >> 8) % n];
  if (r % 3 == 1) return (r >> 8) % 1000 - 500;
  return dc_test_rand(seed);
}

// NaN, infinities, signed zeros, denormals, extremes and random values.
static double special(uint64_t* seed, bool single) {
  double kSpecial[] = {NAN,
                       INFINITY,
                       -INFINITY,
                       0.0,
                       -0.0,
                       1.0,
                       -1.0,
                       single ? 1e-40 : 1e-310,
                       single ? 3.4e38 : 1.7e308,
                       single ? 1.2e-38 : 2.3e-308,
                       0.5,
                       2.0};
  uint64_t r = dc_test_rand(seed);
  size_t n = sizeof(kSpecial) / sizeof(kSpecial[0]);
  if (r % 2 == 0) return kSpecial[(r >> 8) % n];
  return ((double)(r >> 11) * 0x1p-53 - 0.5) * 200.0;
}

static bool fill(const dc_manifest_arg_t* a, void* bytes) {
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
    for (size_t i = 0; i < n; ++i)
      dc_manifest_store(a->dtype, bytes, i, init + 5);
  } else if (strncmp(init, "iota", 4) == 0) {
    sscanf(init, "iota:%lf:%lf", &start, &step);
    for (size_t i = 0; i < n; ++i) {
      double v = start + step * (double)i;
      put_number(a->dtype, bytes, i, v, (int64_t)v);
    }
  } else if (sscanf(init, "rand:%llu:%lf:%lf", &seed, &lo, &hi) == 3) {
    uint64_t s = seed * 2654435761ull + 1;
    for (size_t i = 0; i < n; ++i) {
      uint64_t r = dc_test_rand(&s);
      double f = lo + (hi - lo) * (double)(r >> 11) * 0x1p-53;
      int64_t k = (int64_t)lo + (int64_t)(r % (uint64_t)(hi - lo + 1));
      put_number(a->dtype, bytes, i, f, k);
    }
  } else if (sscanf(init, "randint:%llu:%lf:%lf", &seed, &lo, &hi) == 3) {
    uint64_t s = seed * 2654435761ull + 1;
    for (size_t i = 0; i < n; ++i) {
      int64_t k =
          (int64_t)lo + (int64_t)(dc_test_rand(&s) % (uint64_t)(hi - lo + 1));
      put_number(a->dtype, bytes, i, (double)k, k);
    }
  } else if (sscanf(init, "patterns:%llu", &seed) == 1 && !floating) {
    uint64_t s = seed * 2654435761ull + 1;
    for (size_t i = 0; i < n; ++i) put_int(a->dtype, bytes, i, pattern(&s));
  } else if (sscanf(init, "specials:%llu", &seed) == 1 && floating) {
    uint64_t s = seed * 2654435761ull + 1;
    for (size_t i = 0; i < n; ++i) {
      put_float(a->dtype, bytes, i, special(&s, a->dtype == DC_DTYPE_F32));
    }
  } else if (strncmp(init, "values:", 7) == 0) {
    char list[512];
    snprintf(list, sizeof(list), "%s", init + 7);
    char* items[256];
    size_t count = 0;
    char* save = NULL;
    for (char* v = strtok_r(list, ",", &save); v && count < 256;
         v = strtok_r(NULL, ",", &save)) {
      items[count++] = v;
    }
    for (size_t i = 0; i < n && count > 0; ++i) {
      dc_manifest_store(a->dtype, bytes, i, items[i % count]);
    }
  } else {
    return false;
  }
  return true;
}

//===-- Comparing -------------------------------------------------------===//

static double element(dc_dtype_t dtype, const void* bytes, size_t i) {
  return dtype == DC_DTYPE_F32 ? ((const float*)bytes)[i]
                               : ((const double*)bytes)[i];
}

// Floats as integers ordered like the values (for ulp distances).
static int64_t ordered(dc_dtype_t dtype, const void* bytes, size_t i) {
  if (dtype == DC_DTYPE_F32) {
    int32_t b;
    memcpy(&b, (const float*)bytes + i, 4);
    return b < 0 ? (int64_t)INT32_MIN - b : b;
  }
  int64_t b;
  memcpy(&b, (const double*)bytes + i, 8);
  return b < 0 ? INT64_MIN - b : b;
}

static bool same_element(dc_dtype_t dtype, const char* tol, const void* a,
                         const void* b, size_t i) {
  size_t size = dc_dtype_size(dtype);
  if (memcmp((const char*)a + i * size, (const char*)b + i * size, size) == 0) {
    return true;
  }
  if (!dc_manifest_is_float(dtype)) return false;
  double x = element(dtype, a, i), y = element(dtype, b, i);
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  if (isinf(x) || isinf(y)) return x == y;
  unsigned long long ulps = 0;
  double rel = 0;
  if (sscanf(tol, "ulp:%llu", &ulps) == 1) {
    int64_t d = ordered(dtype, a, i) - ordered(dtype, b, i);
    return (unsigned long long)(d < 0 ? -d : d) <= ulps;
  }
  if (sscanf(tol, "rel:%lf", &rel) == 1) {
    double scale = fmax(1.0, fmax(fabs(x), fabs(y)));
    return fabs(x - y) <= rel * scale;
  }
  return x == y;  // +0 and -0 differ in bits but not in value
}

static void describe(dc_dtype_t dtype, const void* bytes, size_t i, char* out,
                     size_t size) {
  if (dc_manifest_is_float(dtype)) {
    snprintf(out, size, "%.17g", element(dtype, bytes, i));
    return;
  }
  int64_t v = 0;
  memcpy(&v, (const char*)bytes + i * dc_dtype_size(dtype),
         dc_dtype_size(dtype));
  size_t bits = 8 * dc_dtype_size(dtype);
  bool is_signed = dtype == DC_DTYPE_I8 || dtype == DC_DTYPE_I16 ||
                   dtype == DC_DTYPE_I32 || dtype == DC_DTYPE_I64;
  if (bits < 64 && is_signed && (v >> (bits - 1)) & 1) v -= (int64_t)1 << bits;
  if (!is_signed && bits < 64) v &= ((int64_t)1 << bits) - 1;
  snprintf(out, size, "%lld", (long long)v);
}

// Compares buffer |a| of a run on |device| with |reference|; reports up
// to five differing elements.
static void compare(const dc_manifest_run_t* run, const dc_manifest_arg_t* a,
                    const char* device, const void* got, const void* reference,
                    const char* reference_name) {
  int shown = 0;
  for (size_t i = 0; i < a->count; ++i) {
    if (same_element(a->dtype, a->tol, got, reference, i)) continue;
    char g[64], r[64];
    describe(a->dtype, got, i, g, sizeof(g));
    describe(a->dtype, reference, i, r, sizeof(r));
    if (shown++ < 5) {
      REPORT("%s:%s (manifest line %d) on %s: %s[%zu] = %s, %s gives %s",
             run->file, run->kernel, run->line, device, a->name, i, g,
             reference_name, r);
    } else {
      ++failures;
    }
  }
}

static void check_expect(const dc_manifest_run_t* run,
                         const dc_manifest_arg_t* a, const char* device,
                         const void* got) {
  if (a->expect[0] == '\0') return;
  char list[2048];
  snprintf(list, sizeof(list), "%s", a->expect);
  size_t size = dc_dtype_size(a->dtype);
  void* want = calloc(a->count, size);
  ck_assert_ptr_nonnull(want);
  size_t n = 0;
  char* save = NULL;
  for (char* v = strtok_r(list, " \t", &save); v && n < a->count;
       v = strtok_r(NULL, " \t", &save)) {
    dc_manifest_store(a->dtype, want, n++, v);
  }
  dc_manifest_arg_t first = *a;
  first.count = n;
  compare(run, &first, device, got, want, "the manifest");
  free(want);
}

//===-- Running ---------------------------------------------------------===//

// Whether |device| can run |run| at all: a grid-synchronising kernel
// needs every work-group resident, which a CPU with few worker threads
// cannot do for some grids.
static bool can_run(dc_device_t* device, const dc_manifest_run_t* run) {
  dc_program_t* program = program_of(device, run);
  dc_kernel_t* kernel = NULL;
  if (program == NULL ||
      dc_program_find_kernel(program, run->kernel, &kernel) != DC_OK) {
    return true;  // the run reports it
  }
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(kernel, &info));
  size_t groups = 1;
  for (uint32_t d = 0; d < run->dims; ++d) {
    groups *= run->local[d] ? run->global[d] / run->local[d] : 1;
  }
  if (!info.uses_grid_sync ||
      groups <= dc_device_info(device)->max_cooperative_groups) {
    return true;
  }
  printf(
      "corpus: %s:%s (manifest line %d) skipped on %s: %zu groups "
      "cannot all be resident\n",
      run->file, run->kernel, run->line, dc_device_info(device)->name, groups);
  return false;
}

static void run_on(dc_device_t* device, const dc_manifest_run_t* run,
                   results_t* out) {
  memset(out, 0, sizeof(*out));
  dc_program_t* program = program_of(device, run);
  out->status = DC_ERR_COMPILE;
  if (program == NULL) return;
  dc_kernel_t* kernel = NULL;
  out->status = dc_program_find_kernel(program, run->kernel, &kernel);
  dc_arg_t args[DC_MANIFEST_MAX_ARGS];
  dc_buffer_t* buffers[DC_MANIFEST_MAX_ARGS] = {0};
  for (size_t i = 0; i < run->arg_count && out->status == DC_OK; ++i) {
    const dc_manifest_arg_t* a = &run->args[i];
    if (a->kind == DC_MANIFEST_VALUE) {
      args[i] = dc_arg_value(a->dtype, a->width, a->value);
    } else if (a->kind == DC_MANIFEST_LOCAL) {
      args[i] = dc_arg_local(a->local_bytes);
    } else {
      size_t bytes = a->count * dc_dtype_size(a->dtype);
      out->bytes[i] = malloc(bytes ? bytes : 1);
      ck_assert_ptr_nonnull(out->bytes[i]);
      ck_assert_msg(fill(a, out->bytes[i]), "manifest line %d: bad init '%s'",
                    run->line, a->init);
      buffers[i] = dc_test_buffer_new(device, a->dtype, a->count, a->name);
      out->status = dc_buffer_write(buffers[i], 0, out->bytes[i], a->count);
      args[i] = dc_arg_buffer(buffers[i]);
    }
  }
  dc_dispatch_t grid = {.dims = run->dims};
  memcpy(grid.global, run->global, sizeof(grid.global));
  memcpy(grid.local, run->local, sizeof(grid.local));
  memcpy(grid.offset, run->offset, sizeof(grid.offset));
  if (out->status == DC_OK) {
    out->status = dc_kernel_dispatch(kernel, &grid, args, run->arg_count);
  }
  snprintf(out->message, sizeof(out->message), "%s", dc_last_error());
  for (size_t i = 0; i < run->arg_count; ++i) {
    if (buffers[i] == NULL) continue;
    if (out->status == DC_OK) {
      dc_status_t st =
          dc_buffer_read(buffers[i], 0, out->bytes[i], run->args[i].count);
      if (st != DC_OK) {
        out->status = st;
        snprintf(out->message, sizeof(out->message), "%s", dc_last_error());
      }
    }
    dc_buffer_release(buffers[i]);
  }
}

// Whether the run ended as the manifest says; reports it if not.
static bool check_status(const dc_manifest_run_t* run, const char* device,
                         const results_t* r) {
  const char* want = run->status[0] ? run->status : "OK";
  if (strcmp(dc_status_name(r->status), want) == 0) return true;
  REPORT("%s:%s (manifest line %d) on %s ended with %s, expected %s: %s",
         run->file, run->kernel, run->line, device, dc_status_name(r->status),
         want, r->message);
  return false;
}

static void run_everywhere(dc_context_t* ctx, const dc_manifest_run_t* run) {
  dc_device_t* cpu = NULL;
  DC_CK_OK(dc_context_device(ctx, 0, &cpu));
  if (run->kernel[0] == '\0') {  // build only
    for (size_t d = 0; d < dc_context_device_count(ctx); ++d) {
      dc_device_t* device = NULL;
      DC_CK_OK(dc_context_device(ctx, d, &device));
      (void)program_of(device, run);
    }
    return;
  }
  if (!can_run(cpu, run)) return;
  results_t reference;
  run_on(cpu, run, &reference);
  bool ok = check_status(run, "cpu", &reference);
  for (size_t i = 0; ok && reference.status == DC_OK && i < run->arg_count;
       ++i) {
    check_expect(run, &run->args[i], "cpu", reference.bytes[i]);
  }
  for (size_t d = 1; d < dc_context_device_count(ctx) && !run->cpu_only; ++d) {
    dc_device_t* device = NULL;
    DC_CK_OK(dc_context_device(ctx, d, &device));
    const char* name = dc_device_info(device)->name;
    if (!can_run(device, run)) continue;
    results_t got;
    run_on(device, run, &got);
    if (check_status(run, name, &got) && got.status == DC_OK && ok) {
      for (size_t i = 0; i < run->arg_count; ++i) {
        const dc_manifest_arg_t* a = &run->args[i];
        if (a->kind != DC_MANIFEST_BUFFER) continue;
        check_expect(run, a, name, got.bytes[i]);
        if (a->out)
          compare(run, a, name, got.bytes[i], reference.bytes[i], "cpu");
      }
    }
    results_free(&got);
  }
  results_free(&reference);
}

//===-- The test --------------------------------------------------------===//

static int remove_entry(const char* path, const struct stat* st, int flag,
                        struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

START_TEST(test_corpus_runs_alike_on_every_device) {
  dc_manifest_t m;
  char path[1024];
  snprintf(path, sizeof(path), "%s/manifest.txt", DC_KERNEL_CORPUS_DIR);
  ck_assert_msg(dc_manifest_read(path, &m), "%s", m.error);
  char cache[512];
  const char* tmp = getenv("TMPDIR");
  snprintf(cache, sizeof(cache), "%s/dc-check-corpus-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(cache));
  dc_context_params_t params = dc_test_quiet_params();
  params.kernel_cache_dir = cache;
  dc_context_t* ctx = dc_test_context_new(&params);
  for (size_t d = 0; d < dc_context_device_count(ctx); ++d) {
    dc_device_t* device = NULL;
    DC_CK_OK(dc_context_device(ctx, d, &device));
    printf("corpus: %zu runs on %s\n", m.count, dc_device_info(device)->name);
  }
  failures = 0;
  for (size_t i = 0; i < m.count; ++i) run_everywhere(ctx, &m.runs[i]);
  release_programs();
  dc_context_release(ctx);
  nftw(cache, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  dc_manifest_free(&m);
  ck_assert_msg(failures == 0, "%d difference(s) or failure(s); see above",
                failures);
}
END_TEST

static Suite* corpus_suite(void) {
  Suite* s = suite_create("kernel_corpus");
  TCase* tc = tcase_create("corpus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_corpus_runs_alike_on_every_device);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(corpus_suite)

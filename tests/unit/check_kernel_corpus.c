// check_kernel_corpus.c: runs the kernel corpus (tests/kernels, described
// by manifest.txt; see kernel_manifest.h) on every device of a context.
// The same source, built with DC_KERNEL_CORPUS_DIR naming another
// directory of the same form and DC_CORPUS_SUITE naming the suite, runs
// the OpenCL C conformance suite (tests/conformance) as check_conformance.
// The CPU device is the reference: its results must match the manifest's
// expected values, and every other device (a CUDA GPU, when the machine
// has one) must give the CPU's results, exactly or within the tolerance
// the manifest allows. Without a GPU it checks the corpus itself: every
// program builds and every run gives its expected values on the CPU.
// SPDX-License-Identifier: MIT

#include "check_util.h"
#include "kernel_manifest.h"
#include "kernel_runs.h"

#ifndef DC_KERNEL_CORPUS_DIR
#error "DC_KERNEL_CORPUS_DIR must name the corpus directory (tests/kernels)"
#endif
#ifndef DC_CORPUS_SUITE  // the Check suite's name
#define DC_CORPUS_SUITE "kernel_corpus"
#endif

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
  char* source = dc_corpus_read_file(run->file);
  if (source == NULL) {
    REPORT("%s: cannot read it", run->file);
    return NULL;
  }
  const char* name = strrchr(run->file, '/');
  dc_program_params_t params = {.source = source,
                                .name = name ? name + 1 : run->file,
                                .options = run->options};
  dc_status_t st = dc_program_create(device, &params, &b->program);
  // A run that says "status COMPILE" expects its program to be refused.
  if (st != DC_OK && strcmp(run->status, "COMPILE") != 0) {
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

//===-- Comparing ------------------------------------------------------===//

// Compares buffer |a| of a run on |device| with |reference|; reports up
// to five differing elements.
static void compare(const dc_manifest_run_t* run, const dc_manifest_arg_t* a,
                    const char* device, const void* got, const void* reference,
                    const char* reference_name) {
  int shown = 0;
  for (size_t i = 0; i < a->count; ++i) {
    if (dc_runs_same_element(a->dtype, a->tol, got, reference, i)) continue;
    char g[64], r[64];
    dc_runs_describe(a->dtype, got, i, g, sizeof(g));
    dc_runs_describe(a->dtype, reference, i, r, sizeof(r));
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
                   dc_runs_result_t* out) {
  memset(out, 0, sizeof(*out));
  dc_program_t* program = program_of(device, run);
  out->status = DC_ERR_COMPILE;
  if (program == NULL) return;
  dc_kernel_t* kernel = NULL;
  out->status = dc_program_find_kernel(program, run->kernel, &kernel);
  if (out->status != DC_OK) {
    snprintf(out->message, sizeof(out->message), "%s", dc_last_error());
    return;
  }
  dc_runs_execute(device, kernel, run, out);
}

// Whether the run ended as the manifest says; reports it if not.
static bool check_status(const dc_manifest_run_t* run, const char* device,
                         const dc_runs_result_t* r) {
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
  dc_runs_result_t reference;
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
    dc_runs_result_t got;
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
    dc_runs_result_free(&got);
  }
  dc_runs_result_free(&reference);
}

//===-- The test --------------------------------------------------------===//


START_TEST(test_corpus_runs_alike_on_every_device) {
  dc_manifest_t m;
  ck_assert_msg(dc_corpus_read_manifest(&m), "%s", m.error);
  char cache[512];
  dc_test_make_temp_dir(cache, sizeof(cache), "dc-check-corpus");
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
  dc_test_remove_tree(cache);
  dc_manifest_free(&m);
  ck_assert_msg(failures == 0, "%d difference(s) or failure(s); see above",
                failures);
}
END_TEST

static Suite* corpus_suite(void) {
  Suite* s = suite_create(DC_CORPUS_SUITE);
  TCase* tc = tcase_create("corpus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_corpus_runs_alike_on_every_device);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(corpus_suite)

// check_differential.c: the kernel corpus (tests/kernels/manifest.txt;
// see kernel_manifest.h) on the device under test (check_util.h) against
// the CPU. Every run of every program is dispatched with the same inputs
// (seeded, so the same on every machine) on the CPU device as built, the
// reference, and on the device under test as built and in checked mode
// (-dc-checked); each flavour must end as the reference did
// and give its results: integers exactly, floats bit for bit or within
// the tolerance the manifest gives the buffer (ulp:N for math built-ins,
// rel:R elsewhere). Under the default DC_TEST_DEVICE=cpu this compares
// the CPU in checked mode against the CPU without it: the checked
// code must compute what the unchecked code does. check_kernel_corpus.c
// checks the CPU's results against the manifest's expected values.
// SPDX-License-Identifier: MIT
#include <stdarg.h>

#include "kernel_fixture.h"
#include "kernel_runs.h"

#ifndef DC_KERNEL_CORPUS_DIR
#error "DC_KERNEL_CORPUS_DIR must name the tests/kernels directory"
#endif

#define CHECKED_MODE "-dc-checked"

//===-- The corpus ----------------------------------------------------===//

// Read once by the suite function, before Check forks the tests.
static dc_manifest_t corpus;
// The first run of each program (a file built with its options), in the
// manifest's order: one test iteration each.
static size_t programs[256];
static size_t program_count;

static bool same_program(const dc_manifest_run_t* a,
                         const dc_manifest_run_t* b) {
  return strcmp(a->file, b->file) == 0 && strcmp(a->options, b->options) == 0;
}

// Fills |programs|; false (with corpus.error set) if there are too many.
static bool index_programs(void) {
  for (size_t r = 0; r < corpus.count; ++r) {
    bool seen = false;
    for (size_t p = 0; p < program_count && !seen; ++p) {
      seen = same_program(&corpus.runs[programs[p]], &corpus.runs[r]);
    }
    if (seen) continue;
    if (program_count == sizeof(programs) / sizeof(programs[0])) {
      snprintf(corpus.error, sizeof(corpus.error),
               "the manifest has more than %zu programs",
               sizeof(programs) / sizeof(programs[0]));
      return false;
    }
    programs[program_count++] = r;
  }
  return true;
}


//===-- Flavours ------------------------------------------------------===//

// A way of building the program: on |device| with |options|.
typedef struct flavour_t {
  dc_device_t* device;
  char options[320];
  char label[96];        // "cuda:0", "cpu with -dc-checked"
  dc_program_t* program;
} flavour_t;

// Builds |first|'s program as |f| says; reports and returns false when it
// does not build.
static bool build_flavour(const dc_manifest_run_t* first, flavour_t* f) {
  char* source = dc_corpus_read_file(first->file);
  ck_assert_msg(source != NULL, "cannot read %s", first->file);
  const char* name = strrchr(first->file, '/');
  dc_program_params_t params = {.source = source,
                                .name = name ? name + 1 : first->file,
                                .options = f->options};
  dc_status_t st = dc_program_create(f->device, &params, &f->program);
  free(source);
  if (st != DC_OK) {
    fprintf(stderr, "differential: %s (%s) does not build on %s: %s\n",
            first->file, f->options, f->label, dc_last_error());
    f->program = NULL;
  }
  return st == DC_OK;
}

// The flavours to compare with the reference: the device under test as
// built (unless it is the reference's CPU itself) and in checked
// mode (unless the options already ask for it). Returns how many.
static size_t subject_flavours(const dc_manifest_run_t* first,
                               flavour_t out[2]) {
  size_t n = 0;
  if (dut != cpu) {
    out[n] = (flavour_t){.device = dut};
    snprintf(out[n].options, sizeof(out[n].options), "%s", first->options);
    snprintf(out[n].label, sizeof(out[n].label), "%s", dc_device_name(dut));
    ++n;
  }
  if (strstr(first->options, CHECKED_MODE) == NULL) {
    out[n] = (flavour_t){.device = dut};
    snprintf(out[n].options, sizeof(out[n].options), "%s %s",
             first->options, CHECKED_MODE);
    snprintf(out[n].label, sizeof(out[n].label), "%s with " CHECKED_MODE,
             dc_device_name(dut));
    ++n;
  }
  return n;
}

//===-- Comparing -----------------------------------------------------===//

// Differences found by the running test, and the first one's text.
static int differences;
static char first_difference[512];

static void report(const char* format, ...) DC_PRINTF_LIKE(1, 2);
static void report(const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  fprintf(stderr, "differential: %s\n", text);
  if (differences++ == 0) {
    snprintf(first_difference, sizeof(first_difference), "%s", text);
  }
}

// Compares out buffer |i| of |run| as |f| left it with the reference's;
// reports the first five elements that differ.
static void compare_buffer(const dc_manifest_run_t* run, size_t i,
                           const flavour_t* f, const void* got,
                           const void* want) {
  const dc_manifest_arg_t* a = &run->args[i];
  int shown = 0;
  for (size_t e = 0; e < a->count && shown < 5; ++e) {
    if (dc_runs_same_element(a->dtype, a->tol, got, want, e)) continue;
    char g[64], w[64];
    dc_runs_describe(a->dtype, got, e, g, sizeof(g));
    dc_runs_describe(a->dtype, want, e, w, sizeof(w));
    char tolerance[48] = "";
    if (a->tol[0] != '\0') {
      snprintf(tolerance, sizeof(tolerance), " (tolerance %s)", a->tol);
    }
    report("%s:%s (manifest line %d) on %s: %s[%zu] = %s, the CPU gives "
           "%s%s", run->file, run->kernel, run->line, f->label, a->name, e,
           g, w, tolerance);
    ++shown;
  }
}

// Runs |run| as flavour |f| and compares it with |reference|.
static void compare_run(const dc_manifest_run_t* run, const flavour_t* f,
                        const dc_runs_result_t* reference) {
  dc_kernel_t* kernel = NULL;
  DC_CK_OK(dc_program_find_kernel(f->program, run->kernel, &kernel));
  // A device that cannot run cooperative kernels (OpenCL 1.2 has no grid
  // barrier) is skipped for dc_grid_sync() kernels, as the manifest says;
  // opencl.grid_sync checks the refusal itself.
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(kernel, &info));
  if (info.uses_grid_sync &&
      dc_device_info(f->device)->max_cooperative_groups == 0) {
    return;
  }
  // Nor does a device run a work-group larger than its compiler allows
  // the kernel (NVIDIA's OpenCL: 256): check_dispatch tests the refusal.
  size_t group = 1;
  for (int d = 0; d < 3; ++d) group *= run->local[d] ? run->local[d] : 1;
  if (group > info.max_group_size) return;
  dc_runs_result_t got;
  dc_runs_execute(f->device, kernel, run, &got);
  if (got.status != reference->status) {
    report("%s:%s (manifest line %d) on %s ended with %s (%s), the CPU with "
           "%s (%s)", run->file, run->kernel, run->line, f->label,
           dc_status_name(got.status), got.message,
           dc_status_name(reference->status), reference->message);
  } else if (got.status == DC_OK) {
    for (size_t i = 0; i < run->arg_count; ++i) {
      if (run->args[i].kind == DC_MANIFEST_BUFFER && run->args[i].out) {
        compare_buffer(run, i, f, got.bytes[i], reference->bytes[i]);
      }
    }
  }
  dc_runs_result_free(&got);
}

//===-- The test ------------------------------------------------------===//

// Iteration |_i|: program |_i| of the corpus, every run of it.
START_TEST(test_differential_program_matches_the_cpu) {
  const dc_manifest_run_t* first = &corpus.runs[programs[_i]];
  differences = 0;
  flavour_t reference = {.device = cpu};
  snprintf(reference.options, sizeof(reference.options), "%s",
           first->options);
  snprintf(reference.label, sizeof(reference.label), "cpu");
  flavour_t subjects[2];
  size_t subject_count = subject_flavours(first, subjects);
  bool built = build_flavour(first, &reference);
  for (size_t s = 0; s < subject_count; ++s) {
    built &= build_flavour(first, &subjects[s]);
  }
  ck_assert_msg(built, "%s (%s) does not build everywhere; see above",
                first->file, first->options);
  for (size_t r = programs[_i]; r < corpus.count; ++r) {
    const dc_manifest_run_t* run = &corpus.runs[r];
    if (!same_program(run, first) || run->kernel[0] == '\0') continue;
    dc_kernel_t* kernel = NULL;
    DC_CK_OK(dc_program_find_kernel(reference.program, run->kernel, &kernel));
    dc_runs_result_t want;
    dc_runs_execute(cpu, kernel, run, &want);
    for (size_t s = 0; s < subject_count; ++s) {
      bool on_a_cpu =
          dc_device_info(subjects[s].device)->kind == DC_DEVICE_KIND_CPU;
      if (!run->cpu_only || on_a_cpu) compare_run(run, &subjects[s], &want);
    }
    dc_runs_result_free(&want);
  }
  dc_program_release(reference.program);
  for (size_t s = 0; s < subject_count; ++s) {
    dc_program_release(subjects[s].program);
  }
  ck_assert_msg(differences == 0, "%d difference(s), the first: %s",
                differences, first_difference);
}
END_TEST

// Stands in for the corpus when its manifest cannot be read.
START_TEST(test_differential_reads_the_manifest) {
  ck_assert_msg(false, "%s", corpus.error);
}
END_TEST

static Suite* differential_suite(void) {
  Suite* s = dc_test_kernel_suite("differential", "dc-check-differential");
  TCase* tc = dc_test_kernel_tcase(s, "corpus");
  tcase_set_timeout(tc, 300);
  if (!dc_corpus_read_manifest(&corpus) || !index_programs()) {
    tcase_add_test(tc, test_differential_reads_the_manifest);
    return s;
  }
  tcase_add_loop_test(tc, test_differential_program_matches_the_cpu, 0,
                      (int)program_count);
  return s;
}

DC_CHECK_DEVICE_MAIN(differential_suite)

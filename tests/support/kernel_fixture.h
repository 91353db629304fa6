// kernel_fixture.h: the fixture and helpers shared by the suites that build
// and run kernels (check_program, check_kernel_lang, check_dispatch).
// SPDX-License-Identifier: MIT
//
// Each test runs on a quiet context of its own whose kernel cache is a fresh
// directory, so that no test sees another's compiled programs. Like
// check_util.h, everything here is static (functions static inline), so each
// test file takes only what it uses.
//
// The fixture's state and the helpers the suites call on nearly every line
// keep short names: ctx, cpu, dut and cache_dir; try_build, build_on,
// build, kernel_of, expect_mode, expect_dut_mode, host, contents,
// buffer_from, buffer_on and SENTINEL. |dut| is the device under test
// (check_util.h): device-generic tests make their programs and buffers on
// it and read results back with contents(), never host(), which only
// host-visible memory has. A suite sets the fixture up with
//
//   Suite* s = dc_test_kernel_suite("name", "dc-check-name");
//   TCase* core = dc_test_kernel_tcase(s, "core");
//   tcase_add_test(core, ...);
#ifndef DC_KERNEL_FIXTURE_H_
#define DC_KERNEL_FIXTURE_H_

#include <stddef.h>
#include <unistd.h>

#include "check_util.h"

//===-- Environment and directories -------------------------------------===//

// Unsets what the kernel subsystem reads besides dc_test_clear_env()'s.
static inline void dc_test_clear_kernel_env(void) {
  dc_test_clear_env();
  static const char* const kVars[] = {"DC_CC", "DC_CACHE_DIR",
                                      "DC_CHECKED", "DC_AUTOTUNE",
                                      "DC_KERNEL_DUMP"};
  for (size_t i = 0; i < sizeof(kVars) / sizeof(kVars[0]); ++i) {
    unsetenv(kVars[i]);
  }
}

//===-- Fixture ---------------------------------------------------------===//

// The running test's kernel cache directory, and its context on it with
// that context's CPU device and device under test (the same device when
// the device under test is the CPU).
static char cache_dir[512];
static dc_context_t* ctx;
static dc_device_t* cpu;
static dc_device_t* dut;

// Buffers read back by contents() for the running test, newest first; the
// teardown frees them.
typedef struct dc_test_copy_t {
  struct dc_test_copy_t* next;
  max_align_t data[];  // aligned for every dtype
} dc_test_copy_t;
static dc_test_copy_t* dc_test_copies;

static inline void dc_test_free_copies(void) {
  while (dc_test_copies != NULL) {
    dc_test_copy_t* next = dc_test_copies->next;
    free(dc_test_copies);
    dc_test_copies = next;
  }
}

// Each test case's tests keep their caches under one directory,
// $TMPDIR/<prefix>-XXXXXX (the prefix given to dc_test_kernel_suite), made
// and removed by an unchecked fixture: a failing check ends a forked test
// without its teardown, but the case's teardown still runs.
static const char* dc_test_kernel_root_prefix = "dc-check-kernel";
static char dc_test_kernel_root[400];

static inline void dc_test_kernel_make_root(void) {
  dc_test_make_temp_dir(dc_test_kernel_root, sizeof(dc_test_kernel_root),
                        dc_test_kernel_root_prefix);
}

static inline void dc_test_kernel_remove_root(void) {
  dc_test_remove_tree(dc_test_kernel_root);
  dc_test_kernel_root[0] = '\0';
}

// What a context of dc_test_kernel_context() gets besides the defaults.
typedef struct dc_test_kernel_options_t {
  const char* cache_dir;   // NULL: the test's cache_dir
  const char* c_compiler;  // NULL: the default
  bool checked;
  bool autotune;
} dc_test_kernel_options_t;

// A quiet context with |options| (NULL: none), asserting success.
static inline dc_context_t* dc_test_kernel_context(
    const dc_test_kernel_options_t* options) {
  dc_test_kernel_options_t none = {0};
  const dc_test_kernel_options_t* o = options != NULL ? options : &none;
  dc_context_params_t p = dc_test_quiet_params();
  p.kernel_cache_dir = o->cache_dir != NULL ? o->cache_dir : cache_dir;
  p.c_compiler = o->c_compiler;
  p.checked_kernels = o->checked;
  p.autotune = o->autotune;
  return dc_test_context_new(&p);
}

// Checked fixture: a fresh cache directory and a context on it. It also
// resets the fake backend of check_util.h, for suites that register it.
static inline void dc_test_kernel_setup(void) {
  dc_test_clear_kernel_env();
  dc_test_fake_reset();
  snprintf(cache_dir, sizeof(cache_dir), "%s/test-XXXXXX",
           dc_test_kernel_root);
  ck_assert_ptr_nonnull(mkdtemp(cache_dir));
  ctx = dc_test_kernel_context(NULL);
  cpu = dc_test_cpu(ctx);
  dut = dc_test_device(ctx);
}

// Asserts that the test released every buffer, program and kernel it made,
// releases the context and removes the cache directory.
static inline void dc_test_kernel_teardown(void) {
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 0);  // programs too
  dc_context_release(ctx);
  ctx = NULL;
  cpu = NULL;
  dut = NULL;
  dc_test_free_copies();
  dc_test_remove_tree(cache_dir);
  cache_dir[0] = '\0';
}

// Creates the suite |name|, whose test cases keep their caches under
// $TMPDIR/|root_prefix|-XXXXXX.
static inline Suite* dc_test_kernel_suite(const char* name,
                                          const char* root_prefix) {
  dc_test_kernel_root_prefix = root_prefix;
  return suite_create(name);
}

// Adds to |s| the test case |name|, whose tests run in the fixture above,
// each with a timeout of 120 s.
static inline TCase* dc_test_kernel_tcase(Suite* s, const char* name) {
  TCase* tc = tcase_create(name);
  tcase_add_unchecked_fixture(tc, dc_test_kernel_make_root,
                              dc_test_kernel_remove_root);
  tcase_add_checked_fixture(tc, dc_test_kernel_setup,
                            dc_test_kernel_teardown);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return tc;
}

//===-- Programs, kernels and buffers -----------------------------------===//

// A non-NULL handle to preset out parameters with, so that a test sees
// whether a failing call cleared them.
static inline void* dc_test_sentinel(void) {
  static char storage;
  return &storage;
}
#define SENTINEL (dc_test_sentinel())

// Builds |source| as the program |name| with the build |options| on
// |device|.
static inline dc_status_t try_build(dc_device_t* device, const char* name,
                                    const char* source, const char* options,
                                    dc_program_t** out) {
  dc_program_params_t pp = {.source = source, .name = name,
                            .options = options};
  return dc_program_create(device, &pp, out);
}

// try_build, asserting success.
static inline dc_program_t* build_on(dc_device_t* device, const char* name,
                                     const char* source,
                                     const char* options) {
  dc_program_t* p = NULL;
  DC_CK_OK(try_build(device, name, source, options, &p));
  ck_assert_ptr_nonnull(p);
  return p;
}

// build_on the test's CPU.
static inline dc_program_t* build(const char* name, const char* source,
                                  const char* options) {
  return build_on(cpu, name, source, options);
}

// The kernel |name| of |p|.
static inline dc_kernel_t* kernel_of(dc_program_t* p, const char* name) {
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(p, name, &k));
  ck_assert_ptr_nonnull(k);
  return k;
}

// Asserts that |k| runs as |execution| ("loop", "regions", "fibers", ...).
static inline void expect_mode(dc_kernel_t* k, const char* execution) {
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert_msg(strcmp(info.execution, execution) == 0,
                "kernel '%s' runs as %s, expected %s", info.name,
                info.execution, execution);
}

// True when the test's device under test is a CPU device.
static inline bool dut_is_cpu(void) {
  return dc_device_info(dut)->kind == DC_DEVICE_KIND_CPU;
}

// expect_mode for a kernel built on the device under test: on a CPU it
// runs as |cpu_execution|; another device runs every kernel its own way,
// which its backend names after itself ("cuda", or "cuda-coarsened" for a
// kernel that may run several work-items per thread).
static inline void expect_dut_mode(dc_kernel_t* k,
                                   const char* cpu_execution) {
  if (dut_is_cpu()) {
    expect_mode(k, cpu_execution);
    return;
  }
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  const char* backend = dc_device_info(dut)->backend;
  size_t n = strlen(backend);
  ck_assert_msg(strncmp(info.execution, backend, n) == 0 &&
                    (info.execution[n] == '\0' || info.execution[n] == '-'),
                "kernel '%s' runs as %s, expected %s's way", info.name,
                info.execution, backend);
}

// The buffer's memory (CPU buffers are host memory).
static inline void* host(dc_buffer_t* b) {
  void* p = NULL;
  DC_CK_OK(dc_buffer_host_pointer(b, &p));
  return p;
}

// A copy of |b|'s elements as they are now, read through dc_buffer_read
// so that it works for every device and storage mode; it stays valid (and
// unchanged: read again after the next dispatch) until the test ends.
static inline void* contents(dc_buffer_t* b) {
  size_t bytes = dc_buffer_size_bytes(b);
  dc_test_copy_t* copy = malloc(sizeof(*copy) + bytes);
  ck_assert_ptr_nonnull(copy);
  copy->next = dc_test_copies;
  dc_test_copies = copy;
  DC_CK_OK(dc_buffer_read(b, 0, copy->data, dc_buffer_length(b)));
  return copy->data;
}

// A buffer on |device| holding the |n| |values| of |dtype|.
static inline dc_buffer_t* buffer_on(dc_device_t* device, dc_dtype_t dtype,
                                     size_t n, const void* values) {
  dc_buffer_t* b = dc_test_buffer_new(device, dtype, n, "values");
  DC_CK_OK(dc_buffer_write(b, 0, values, n));
  return b;
}

// A buffer on the test's CPU holding the |n| |values| of |dtype|.
static inline dc_buffer_t* buffer_from(dc_dtype_t dtype, size_t n,
                                       const void* values) {
  return buffer_on(cpu, dtype, n, values);
}

// Sets every byte of |b| to |byte| (a sentinel that shows the elements a
// kernel did not write), on any device.
static inline void fill_bytes(dc_buffer_t* b, unsigned char byte) {
  unsigned char element[16];
  memset(element, byte, sizeof(element));
  DC_CK_OK(dc_buffer_fill(b, 0, dc_buffer_length(b), element));
}

//===-- Matrices --------------------------------------------------------===//

// |count| floats drawn from |seed|: whole numbers from -(span / 2) to
// span / 2 (|span| odd), small enough that every sum of their products a
// test makes is exact. The caller frees them.
static inline float* dc_test_small_ints(size_t count, uint64_t* seed,
                                        int span) {
  float* values = malloc(count * sizeof(*values));
  ck_assert_ptr_nonnull(values);
  for (size_t i = 0; i < count; ++i) {
    values[i] = (float)((int)(dc_test_rand(seed) % (uint64_t)span) - span / 2);
  }
  return values;
}

// Asserts that the m x n matrix |c| is exactly the m x k matrix |a| times
// the k x n matrix |b|; |what| starts the message.
static inline void dc_test_check_matmul(const float* c, const float* a,
                                        const float* b, size_t m, size_t n,
                                        size_t k, const char* what) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float want = 0.0f;
      for (size_t x = 0; x < k; ++x) want += a[i * k + x] * b[x * n + j];
      ck_assert_msg(c[i * n + j] == want,
                    "%s %zux%zux%zu: C[%zu][%zu] = %g, expected %g", what, m,
                    n, k, i, j, c[i * n + j], want);
    }
  }
}

//===-- Marked sources --------------------------------------------------===//

// The mark a test writes in a kernel's source where its first error must
// point (check_kernel_sema, check_kernel_injection).
#define DC_TEST_MARK '`'

// |marked| without its DC_TEST_MARK (malloc'ed), and the "line:col" of the
// mark in |where|.
static inline char* dc_test_unmark(const char* marked, char* where,
                                   size_t where_size) {
  char* source = malloc(strlen(marked) + 1);
  ck_assert_ptr_nonnull(source);
  unsigned line = 1, col = 1;
  bool found = false;
  char* out = source;
  for (const char* p = marked; *p; ++p) {
    if (*p == DC_TEST_MARK && !found) {
      snprintf(where, where_size, "%u:%u", line, col);
      found = true;
      continue;
    }
    *out++ = *p;
    if (*p == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  *out = '\0';
  ck_assert_msg(found, "test source has no mark: %s", marked);
  return source;
}

// Asserts that building |marked| (the mark removed) as |name| on the CPU
// with |options| fails with DC_ERR_COMPILE and no program, that the first
// error is the front end's at the mark ("name:L:C: error: ") and that it
// says |message|.
static inline void dc_test_expect_error_at(const char* name,
                                           const char* marked,
                                           const char* options,
                                           const char* message) {
  char where[32], want[160];
  char* source = dc_test_unmark(marked, where, sizeof(where));
  snprintf(want, sizeof(want), "dc_program_create: %s:%s: error: ", name,
           where);
  dc_program_t* p = SENTINEL;
  dc_status_t st = try_build(cpu, name, source, options, &p);
  ck_assert_msg(st == DC_ERR_COMPILE, "got %s (%s) for:\n%s",
                dc_status_name(st), dc_last_error(), source);
  ck_assert_ptr_null(p);
  ck_assert_msg(strncmp(dc_last_error(), want, strlen(want)) == 0,
                "message '%s' does not start with '%s'", dc_last_error(),
                want);
  ck_assert_msg(strstr(dc_last_error(), message) != NULL,
                "message '%s' lacks '%s'", dc_last_error(), message);
  free(source);
}

// |head|, then |depth| parentheses around "1", then |tail| (malloc'ed): a
// source nested past every limit of the front end.
static inline char* dc_test_nested_parens(const char* head, size_t depth,
                                          const char* tail) {
  size_t h = strlen(head), t = strlen(tail);
  char* source = malloc(h + 2 * depth + 1 + t + 1);
  ck_assert_ptr_nonnull(source);
  memcpy(source, head, h);
  memset(source + h, '(', depth);
  source[h + depth] = '1';
  memset(source + h + depth + 1, ')', depth);
  memcpy(source + h + 2 * depth + 1, tail, t + 1);
  return source;
}

#endif  // DC_KERNEL_FIXTURE_H_

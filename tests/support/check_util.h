// check_util.h: assertions, fixtures and fakes shared by the unit tests.
// SPDX-License-Identifier: MIT
//
// Everything here is static (functions static inline), so each test file
// takes only what it uses. Helpers that fail call ck_assert, so they may be
// used only from inside a test or a checked fixture, never from a thread a
// test starts.
#ifndef DC_CHECK_UTIL_H_
#define DC_CHECK_UTIL_H_

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dc/backend.h"
#include "dc/dc.h"

//===-- Runner and assertions -------------------------------------------===//

// Defines main(): runs |suite_fn|'s suite, prints the usual Check summary and
// exits with EXIT_FAILURE if any test failed.
#define DC_CHECK_MAIN(suite_fn)                               \
  int main(void) {                                            \
    SRunner* dc_runner_ = srunner_create(suite_fn());         \
    srunner_run_all(dc_runner_, CK_NORMAL);                   \
    int dc_failed_ = srunner_ntests_failed(dc_runner_);       \
    srunner_free(dc_runner_);                                 \
    return dc_failed_ == 0 ? EXIT_SUCCESS : EXIT_FAILURE;     \
  }

// Asserts that |expr| returns DC_OK; on failure prints the status name and
// this thread's dc_last_error().
#define DC_CK_OK(expr)                                                     \
  do {                                                                     \
    dc_status_t dc_ck_st_ = (expr);                                        \
    ck_assert_msg(dc_ck_st_ == DC_OK, "%s failed with %s: %s", #expr,      \
                  dc_status_name(dc_ck_st_), dc_last_error());             \
  } while (0)

// Asserts that |expr| returns |status| and that dc_last_error() then
// contains |substring|.
#define DC_CK_FAIL(expr, status, substring)                                \
  do {                                                                     \
    dc_status_t dc_ck_got_ = (expr);                                       \
    dc_status_t dc_ck_want_ = (status);                                    \
    ck_assert_msg(dc_ck_got_ == dc_ck_want_,                               \
                  "%s returned %s, expected %s (message: '%s')", #expr,    \
                  dc_status_name(dc_ck_got_), dc_status_name(dc_ck_want_), \
                  dc_last_error());                                        \
    ck_assert_msg(strstr(dc_last_error(), (substring)) != NULL,            \
                  "%s: message '%s' lacks '%s'", #expr, dc_last_error(),   \
                  (substring));                                            \
  } while (0)

// Asserts that dc_last_error() contains |substring| (after a DC_CK_FAIL, to
// check more of the message).
#define DC_CK_ERROR_HAS(substring)                                         \
  ck_assert_msg(strstr(dc_last_error(), (substring)) != NULL,              \
                "message '%s' lacks '%s'", dc_last_error(), (substring))

// Asserts that the string |haystack| contains |needle|.
#define DC_CK_STR_HAS(haystack, needle)                                    \
  do {                                                                     \
    const char* dc_ck_h_ = (haystack);                                     \
    ck_assert_msg(dc_ck_h_ != NULL && strstr(dc_ck_h_, (needle)) != NULL,  \
                  "'%s' lacks '%s'", dc_ck_h_ ? dc_ck_h_ : "(null)",       \
                  (needle));                                               \
  } while (0)

//===-- Environment -----------------------------------------------------===//

// Check forks a child per test unless CK_FORK=no. Tests that leave global
// state behind (signals, process-wide registries) run only when it forks.
static inline bool dc_test_forking(void) {
  const char* fork_env = getenv("CK_FORK");
  return fork_env == NULL || strcmp(fork_env, "no") != 0;
}

// Unsets every variable the context reads, so tests see the built-in
// defaults whatever the calling shell exported. Use as a checked fixture
// (setup and teardown) in tests that set variables, so that a failing test
// leaves nothing behind when Check does not fork.
static inline void dc_test_clear_env(void) {
  static const char* const kVars[] = {
      "DC_LOG",           "DC_WORKERS",       "DC_IDLE",
      "DC_POOL_CACHE_LIMIT", "DC_MEMORY_BUDGET", "DC_DEVICES",
      "DC_FAULTS",
  };
  for (size_t i = 0; i < sizeof(kVars) / sizeof(kVars[0]); ++i) {
    unsetenv(kVars[i]);
  }
}

//===-- Temporary directories -------------------------------------------===//

// Makes a fresh directory $TMPDIR/|prefix|-XXXXXX (/tmp without TMPDIR)
// and writes its path into |out|; aborts if it cannot.
static inline void dc_test_make_temp_dir(char* out, size_t size,
                                         const char* prefix) {
  const char* tmp = getenv("TMPDIR");
  snprintf(out, size, "%s/%s-XXXXXX", tmp != NULL && *tmp != '\0' ? tmp
                                                                   : "/tmp",
           prefix);
  if (mkdtemp(out) == NULL) {
    perror(out);
    abort();
  }
}

static inline int dc_test_remove_entry(const char* path,
                                       const struct stat* st, int flag,
                                       struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

// Removes |dir| and everything under it; does nothing if |dir| is "".
static inline void dc_test_remove_tree(const char* dir) {
  if (dir[0] != '\0') {
    nftw(dir, dc_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  }
}

//===-- Device under test -----------------------------------------------===//
//
// The device-generic suites (docs/testing.md lists them) run their tests
// on the device that the environment variable DC_TEST_DEVICE names: an
// exact name ("cpu", "cpu:1", "cuda:0") or a backend's name ("cuda": its
// first device), as dc_context_find_device() reads it; "cpu" when unset or
// empty. CTest runs each such suite as unit.<suite> on the CPU and again
// as cuda.<suite> on a GPU. Their main() is DC_CHECK_DEVICE_MAIN, which
// exits with DC_TEST_SKIPPED, and CTest reports the test as skipped, when
// the device is not there. Tests that are about the CPU backend itself
// (its compiler, execution modes, native kernels, the fake backend) stay
// on the CPU, in test cases that a suite adds only when
// dc_test_device_is_the_cpu().

// The exit status that CTest's SKIP_RETURN_CODE turns into "Skipped".
#define DC_TEST_SKIPPED 77

// Set by DC_CHECK_DEVICE_MAIN. Any other suite runs everything on the
// CPU, whatever DC_TEST_DEVICE says, so that the variable set for a whole
// ctest run changes only the device-generic suites.
static bool dc_test_device_generic;

// The name of the device under test.
static inline const char* dc_test_device_name(void) {
  const char* name = getenv("DC_TEST_DEVICE");
  if (!dc_test_device_generic || name == NULL || name[0] == '\0') {
    return "cpu";
  }
  return name;
}

// True when the device under test is the CPU device "cpu" (device 0),
// the default. Suites add their CPU-only test cases only then: those use
// device 0 whatever is under test, so any other run would only repeat
// them. Decided by the name alone, as suite functions call this before
// any context exists.
static inline bool dc_test_device_is_the_cpu(void) {
  return strcmp(dc_test_device_name(), "cpu") == 0;
}

// True when the device under test is one of the CPU backend's devices
// ("cpu", "cpu:1", ...), which a context has whatever backends it enables.
static inline bool dc_test_device_is_a_cpu(void) {
  const char* name = dc_test_device_name();
  return strncmp(name, "cpu", 3) == 0 && (name[3] == '\0' || name[3] == ':');
}

//===-- Backends --------------------------------------------------------===//
//
// Which backends the tests' contexts enable. Most suites test what the
// engine does whatever the machine has: device counts and indices, the
// default device, messages that list the devices, the CPU device, a fake
// GPU. A real GPU in their contexts would change all of those, and its
// start-up (a driver context and a memory pool) would slow every context
// down, so their contexts enable the CPU backend alone, and the fake
// backend once the suite has registered it (dc_test_fake_register()).
// Contexts see every backend the machine has (the |backends| parameter
// left to DC_DEVICES, which the fixtures unset: "all") only
//
//  - in a device-generic suite whose device under test is not a CPU
//    (cuda.<suite>), and
//  - in a suite about every device, compiled with DC_TEST_EVERY_BACKEND
//    defined: the CUDA backend's own suites and the kernel corpus
//    (tests/unit/CMakeLists.txt defines it for them; a source may also
//    #define it before including this header).
//
// A test of discovery itself sets |backends| ("all", "cuda") and expects
// what the machine has (dc_test_machine_device_count()), never "no GPU".

// Set by dc_test_fake_register(): "fake" is then a backend name that
// contexts accept.
static bool dc_test_fake_registered;

// The |backends| parameter of the tests' contexts (NULL: DC_DEVICES).
// DC_TEST_BACKENDS, when set, replaces the choice below: for runs that
// leave a backend out (e.g. "cpu,opencl": a GPU through OpenCL alone).
static inline const char* dc_test_backends(void) {
  const char* forced = getenv("DC_TEST_BACKENDS");
  if (forced != NULL && *forced != '\0') return forced;
#ifdef DC_TEST_EVERY_BACKEND
  return NULL;
#else
  // OpenCL is enabled only by name (docs/backends.md), so a suite run on
  // an OpenCL device names it next to every default backend.
  if (strncmp(dc_test_device_name(), "opencl", 6) == 0) return "all,opencl";
  if (!dc_test_device_is_a_cpu()) return NULL;
  return dc_test_fake_registered ? "cpu,fake" : "cpu";
#endif
}

//===-- Contexts --------------------------------------------------------===//

// Parameters for a context that logs nothing, with the tests' backends.
static inline dc_context_params_t dc_test_quiet_params(void) {
  dc_context_params_t p = {0};
  p.log_level = DC_LOG_OFF;
  p.backends = dc_test_backends();
  return p;
}

// Creates a context with |params| (NULL: quiet defaults), asserting success.
static inline dc_context_t* dc_test_context_new(
    const dc_context_params_t* params) {
  dc_context_params_t quiet = dc_test_quiet_params();
  dc_context_t* ctx = NULL;
  DC_CK_OK(dc_context_create(params ? params : &quiet, &ctx));
  ck_assert_ptr_nonnull(ctx);
  return ctx;
}

// How many of |ctx|'s devices belong to |backend|.
static inline size_t dc_test_backend_device_count(dc_context_t* ctx,
                                                  const char* backend) {
  size_t count = 0;
  for (size_t i = 0; i < dc_context_device_count(ctx); ++i) {
    dc_device_t* device = NULL;
    DC_CK_OK(dc_context_device(ctx, i, &device));
    count += strcmp(dc_device_info(device)->backend, backend) == 0;
  }
  return count;
}

// How many devices the built-in backend |backend| ("cuda") finds on this
// machine: 0 without a driver or a GPU. Only from inside a test: a GPU
// driver that the suite's parent process initialised would be unusable
// in the children that Check forks.
static inline size_t dc_test_machine_device_count(const char* backend) {
  dc_context_params_t p = {0};
  p.log_level = DC_LOG_OFF;
  p.backends = backend;
  dc_context_t* ctx = dc_test_context_new(&p);
  size_t count = dc_test_backend_device_count(ctx, backend);
  dc_context_release(ctx);
  return count;
}

// Counts the cuda devices in a child process, for a suite's main() to
// decide before Check forks (a driver this process had initialised would
// be unusable in the children). Returns -1 if the child could not tell.
static inline int dc_test_probe_cuda_devices(void) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dc_context_params_t p = {.log_level = DC_LOG_OFF, .backends = "cuda"};
    dc_context_t* ctx = NULL;
    if (dc_context_create(&p, &ctx) != DC_OK) _exit(255);
    size_t n = 0;  // (no Check assertions outside a test)
    for (size_t i = 0; i < dc_context_device_count(ctx); ++i) {
      dc_device_t* d = NULL;
      dc_context_device(ctx, i, &d);
      n += strcmp(dc_device_info(d)->backend, "cuda") == 0;
    }
    dc_context_release(ctx);
    _exit(n > 100 ? 100 : (int)n);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) == 255) {
    return -1;
  }
  return WEXITSTATUS(status);
}

// The CPU device (index 0) of |ctx|.
static inline dc_device_t* dc_test_cpu(dc_context_t* ctx) {
  dc_device_t* device = NULL;
  DC_CK_OK(dc_context_device(ctx, 0, &device));
  ck_assert_ptr_nonnull(device);
  return device;
}

// Creates a buffer of |length| elements of |dtype| on |device|.
static inline dc_buffer_t* dc_test_buffer_new(dc_device_t* device,
                                              dc_dtype_t dtype, size_t length,
                                              const char* label) {
  dc_buffer_params_t bp = {0};
  bp.dtype = dtype;
  bp.length = length;
  bp.label = label;
  dc_buffer_t* buffer = NULL;
  DC_CK_OK(dc_buffer_create(device, &bp, &buffer));
  ck_assert_ptr_nonnull(buffer);
  return buffer;
}

// The pool statistics of |device|.
static inline dc_memory_pool_stats_t dc_test_pool_stats(dc_device_t* device) {
  dc_memory_pool_stats_t stats;
  memset(&stats, 0xAB, sizeof(stats));  // so a missed field shows
  DC_CK_OK(dc_memory_pool_stats(device, &stats));
  return stats;
}

//===-- Device under test in a context ----------------------------------===//

// Prints the warnings and debug lines of the backends while a context is
// made, which say why a device is missing.
static inline void dc_test_print_backend_log(void* user_data,
                                             const dc_log_record_t* r) {
  (void)user_data;
  if (strcmp(r->component, "cpu") != 0 &&
      strcmp(r->component, "context") != 0) {
    fprintf(stderr, "  [%s] %s\n", r->component, r->message);
  }
}

// The device under test in |ctx|. DC_CHECK_DEVICE_MAIN has checked that
// contexts have it, so a miss here is a failure, not a skip; what the
// backends say about it in a new context goes to stderr first.
static inline dc_device_t* dc_test_device(dc_context_t* ctx) {
  dc_device_t* device = NULL;
  if (dc_context_find_device(ctx, dc_test_device_name(), &device) != DC_OK) {
    fprintf(stderr, "%s is missing; the backends say:\n",
            dc_test_device_name());
    dc_context_params_t p = {.log_level = DC_LOG_DEBUG,
                             .backends = dc_test_backends(),
                             .log_fn = dc_test_print_backend_log};
    dc_context_t* probe = NULL;
    if (dc_context_create(&p, &probe) == DC_OK) dc_context_release(probe);
  }
  DC_CK_OK(dc_context_find_device(ctx, dc_test_device_name(), &device));
  ck_assert_ptr_nonnull(device);
  return device;
}

// Writes the names of |ctx|'s devices, comma-separated, into |out|.
static inline void dc_test_device_list(dc_context_t* ctx, char* out,
                                       size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < dc_context_device_count(ctx); ++i) {
    dc_device_t* device = NULL;
    if (dc_context_device(ctx, i, &device) != DC_OK || used >= size) break;
    int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "",
                     dc_device_name(device));
    if (n < 0) break;
    used += (size_t)n;
  }
}

// The child's half of dc_test_device_present(): exits with 0 when a
// context of the tests' environment has the device under test, else
// prints why and exits with DC_TEST_SKIPPED (or 1 when no context can be
// made at all).
static inline void dc_test_probe_device_and_exit(void) {
  dc_test_clear_env();  // as the tests' fixtures do
  dc_context_params_t params = dc_test_quiet_params();
  dc_context_t* ctx = NULL;
  if (dc_context_create(&params, &ctx) != DC_OK) {
    printf("DC_TEST_DEVICE=%s: cannot create a context: %s\n",
           dc_test_device_name(), dc_last_error());
    fflush(stdout);
    _exit(1);
  }
  dc_device_t* device = NULL;
  int status = 0;
  if (dc_context_find_device(ctx, dc_test_device_name(), &device) != DC_OK) {
    char devices[512];
    dc_test_device_list(ctx, devices, sizeof(devices));
    printf("DC_TEST_DEVICE=%s: no such device here (devices: %s): "
           "skipped\n", dc_test_device_name(), devices);
    status = DC_TEST_SKIPPED;
  }
  dc_context_release(ctx);
  fflush(stdout);
  _exit(status);
}

// Returns 0 when the device under test exists, else the status main()
// should exit with: DC_TEST_SKIPPED when it does not, EXIT_FAILURE when
// the check itself failed. The CPU always exists. Any other device is
// looked for in a child process, because a GPU driver that the parent
// initialised is unusable in the children that Check forks for its tests.
static inline int dc_test_device_present(void) {
  if (strcmp(dc_test_device_name(), "cpu") == 0) return 0;
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child < 0) {
    perror("DC_TEST_DEVICE: fork");
    return EXIT_FAILURE;
  }
  if (child == 0) dc_test_probe_device_and_exit();
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("DC_TEST_DEVICE: waitpid");
      return EXIT_FAILURE;
    }
  }
  if (!WIFEXITED(status)) {
    printf("DC_TEST_DEVICE=%s: looking for the device crashed (status "
           "%d)\n", dc_test_device_name(), status);
    return EXIT_FAILURE;
  }
  int code = WEXITSTATUS(status);
  return code == 0 || code == DC_TEST_SKIPPED ? code : EXIT_FAILURE;
}

// Whether the device under test has a capability |has| tests, asked in a
// child process as dc_test_device_present() does: 0 when it has, else
// DC_TEST_SKIPPED (having printed "|suite|: skipped, the device |why|")
// or EXIT_FAILURE when the probe itself failed. Call it after
// dc_test_device_present() returned 0.
static inline int dc_test_device_has(bool (*has)(dc_device_t* device),
                                     const char* suite, const char* why) {
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child < 0) {
    perror("dc_test_device_has: fork");
    return EXIT_FAILURE;
  }
  if (child == 0) {
    dc_test_clear_env();
    dc_context_params_t params = dc_test_quiet_params();
    dc_context_t* ctx = NULL;
    dc_device_t* device = NULL;
    int code = EXIT_FAILURE;
    if (dc_context_create(&params, &ctx) == DC_OK &&
        dc_context_find_device(ctx, dc_test_device_name(), &device) ==
            DC_OK) {
      code = has(device) ? 0 : DC_TEST_SKIPPED;
    }
    dc_context_release(ctx);
    _exit(code);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("dc_test_device_has: waitpid");
      return EXIT_FAILURE;
    }
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILURE;
  if (code == DC_TEST_SKIPPED) {
    printf("%s: skipped, the device %s %s\n", suite, dc_test_device_name(),
           why);
  }
  return code == 0 || code == DC_TEST_SKIPPED ? code : EXIT_FAILURE;
}

// DC_CHECK_MAIN for a device-generic suite: exits with DC_TEST_SKIPPED
// (having printed one line saying so) when the device under test is not
// there, before the suite is even made.
#define DC_CHECK_DEVICE_MAIN(suite_fn)                        \
  int main(void) {                                            \
    dc_test_device_generic = true;                            \
    int dc_absent_ = dc_test_device_present();                \
    if (dc_absent_ != 0) return dc_absent_;                   \
    SRunner* dc_runner_ = srunner_create(suite_fn());         \
    srunner_run_all(dc_runner_, CK_NORMAL);                   \
    int dc_failed_ = srunner_ntests_failed(dc_runner_);       \
    srunner_free(dc_runner_);                                 \
    return dc_failed_ == 0 ? EXIT_SUCCESS : EXIT_FAILURE;     \
  }

//===-- Capturing log sink ----------------------------------------------===//
//
// A sink that records every message it receives, for assertions on log
// output. It is thread-safe, as sinks must be. Records past the capacity
// are counted in |dropped| and otherwise ignored.

#define DC_TEST_LOG_CAPACITY 512

typedef struct dc_test_log_entry_t {
  dc_log_level_t level;
  uint64_t time_ns;
  char component[32];
  char message[256];
} dc_test_log_entry_t;

typedef struct dc_test_log_t {
  pthread_mutex_t lock;
  size_t count;
  size_t dropped;
  dc_test_log_entry_t entries[DC_TEST_LOG_CAPACITY];
} dc_test_log_t;

static inline dc_test_log_t* dc_test_log_new(void) {
  dc_test_log_t* log = calloc(1, sizeof(*log));
  ck_assert_ptr_nonnull(log);
  pthread_mutex_init(&log->lock, NULL);
  return log;
}

// Frees |log|. Only after every context that logs into it is destroyed.
static inline void dc_test_log_free(dc_test_log_t* log) {
  if (log == NULL) return;
  pthread_mutex_destroy(&log->lock);
  free(log);
}

static inline void dc_test_log_sink(void* user_data,
                                    const dc_log_record_t* record) {
  dc_test_log_t* log = user_data;
  pthread_mutex_lock(&log->lock);
  if (log->count < DC_TEST_LOG_CAPACITY) {
    dc_test_log_entry_t* e = &log->entries[log->count++];
    e->level = record->level;
    e->time_ns = record->time_ns;
    snprintf(e->component, sizeof(e->component), "%s",
             record->component ? record->component : "(null)");
    snprintf(e->message, sizeof(e->message), "%s",
             record->message ? record->message : "(null)");
  } else {
    log->dropped++;
  }
  pthread_mutex_unlock(&log->lock);
}

// Parameters that send messages at |level| or above to |log|, with the
// tests' backends.
static inline dc_context_params_t dc_test_log_params(dc_test_log_t* log,
                                                     dc_log_level_t level) {
  dc_context_params_t p = {0};
  p.log_level = level;
  p.backends = dc_test_backends();
  p.log_fn = dc_test_log_sink;
  p.log_user_data = log;
  return p;
}

static inline size_t dc_test_log_count(dc_test_log_t* log) {
  pthread_mutex_lock(&log->lock);
  size_t n = log->count;
  pthread_mutex_unlock(&log->lock);
  return n;
}

// Index of the first record from |from| whose message contains |needle|, or
// -1 if none.
static inline long dc_test_log_find(dc_test_log_t* log, size_t from,
                                    const char* needle) {
  long found = -1;
  pthread_mutex_lock(&log->lock);
  for (size_t i = from; i < log->count && found < 0; ++i) {
    if (strstr(log->entries[i].message, needle) != NULL) found = (long)i;
  }
  pthread_mutex_unlock(&log->lock);
  return found;
}

static inline void dc_test_log_clear(dc_test_log_t* log) {
  pthread_mutex_lock(&log->lock);
  log->count = 0;
  log->dropped = 0;
  pthread_mutex_unlock(&log->lock);
}

//===-- Counting and failing allocator ----------------------------------===//
//
// Wraps malloc and counts what the engine does with it. Each block carries a
// hidden header holding its size, so a free or resize that passes a wrong
// |old_size| is counted in |size_mismatches|. Setting |fail_at| to N makes
// the N-th allocation attempt (counted from 1, resizes included) fail; with
// |fail_once| only that one fails, else every later one fails too.

typedef struct dc_test_allocator_t {
  atomic_size_t attempts;         // allocations and resizes asked for
  atomic_size_t failures;         // of which failed on purpose
  atomic_size_t allocations;      // new blocks handed out
  atomic_size_t frees;            // blocks freed
  atomic_size_t live_blocks;      // handed out and not yet freed
  atomic_size_t live_bytes;
  atomic_size_t largest;          // largest single request seen
  atomic_size_t size_mismatches;  // frees or resizes with a wrong old_size
  size_t fail_at;                 // 0: never fail
  bool fail_once;
} dc_test_allocator_t;

typedef struct dc_test_block_header_t {
  size_t size;
  size_t magic;
} dc_test_block_header_t;

#define DC_TEST_BLOCK_MAGIC ((size_t)0xA110CA7EDu)

static inline bool dc_test_allocator_should_fail(dc_test_allocator_t* a) {
  size_t n = atomic_fetch_add(&a->attempts, 1) + 1;
  bool fail = a->fail_at != 0 &&
              (a->fail_once ? n == a->fail_at : n >= a->fail_at);
  if (fail) atomic_fetch_add(&a->failures, 1);
  return fail;
}

static inline void dc_test_allocator_note_size(dc_test_allocator_t* a,
                                               size_t size) {
  size_t seen = atomic_load(&a->largest);
  while (size > seen && !atomic_compare_exchange_weak(&a->largest, &seen,
                                                      size)) {
  }
}

static inline void* dc_test_allocator_fn(void* user_data, void* ptr,
                                         size_t old_size, size_t new_size) {
  dc_test_allocator_t* a = user_data;
  dc_test_block_header_t* h =
      ptr ? (dc_test_block_header_t*)ptr - 1 : NULL;
  if (h != NULL && (h->magic != DC_TEST_BLOCK_MAGIC || h->size != old_size)) {
    atomic_fetch_add(&a->size_mismatches, 1);
  }
  if (new_size == 0) {
    if (h == NULL) return NULL;
    atomic_fetch_add(&a->frees, 1);
    atomic_fetch_sub(&a->live_blocks, 1);
    atomic_fetch_sub(&a->live_bytes, h->size);
    h->magic = 0;
    free(h);
    return NULL;
  }
  dc_test_allocator_note_size(a, new_size);
  if (dc_test_allocator_should_fail(a)) return NULL;
  size_t before = h ? h->size : 0;
  dc_test_block_header_t* n = realloc(h, sizeof(*n) + new_size);
  if (n == NULL) return NULL;
  if (h == NULL) {
    atomic_fetch_add(&a->allocations, 1);
    atomic_fetch_add(&a->live_blocks, 1);
  }
  atomic_fetch_sub(&a->live_bytes, before);
  atomic_fetch_add(&a->live_bytes, new_size);
  n->size = new_size;
  n->magic = DC_TEST_BLOCK_MAGIC;
  return n + 1;
}

static inline dc_allocator_t dc_test_allocator(dc_test_allocator_t* a) {
  dc_allocator_t allocator = {dc_test_allocator_fn, a};
  return allocator;
}

// Asserts that every block |a| handed out came back with its right size.
#define DC_CK_ALLOCATOR_BALANCED(a)                                        \
  do {                                                                     \
    ck_assert_uint_eq(atomic_load(&(a)->live_blocks), 0);                  \
    ck_assert_uint_eq(atomic_load(&(a)->live_bytes), 0);                   \
    ck_assert_uint_eq(atomic_load(&(a)->size_mismatches), 0);              \
    ck_assert_uint_eq(atomic_load(&(a)->allocations),                      \
                      atomic_load(&(a)->frees));                           \
  } while (0)

//===-- Fake backend ----------------------------------------------------===//
//
// A GPU-like backend named "fake", driven from the tests: its devices keep
// buffers in host memory but hide private ones from the host (so
// dc_buffer_host_pointer fails on them, as on a real GPU), and they can be
// told to refuse allocations. Register it once, in the suite function, with
// dc_test_fake_register(); contexts get fake devices only while
// dc_test_fake.devices_to_add is non-zero. dc_test_fake_reset() is a
// checked fixture that puts the knobs back.

typedef struct dc_test_fake_state_t {
  atomic_int devices_to_add;      // devices each enumerate adds
  atomic_int enumerate_status;    // what enumerate returns after adding
  atomic_int refuse;              // allocations to refuse; -1: all
  atomic_size_t memory_size;      // memory_size of new devices
  atomic_size_t allocations;      // blocks obtained from fake devices
  atomic_size_t deallocations;
  atomic_size_t refusals;
  atomic_size_t destroys;         // fake devices destroyed
} dc_test_fake_state_t;

static dc_test_fake_state_t dc_test_fake;

typedef struct dc_test_fake_device_t {
  dc_device_t base;  // first, as the backend interface requires
  dc_allocator_t allocator;
} dc_test_fake_device_t;

static inline void dc_test_fake_reset(void) {
  atomic_store(&dc_test_fake.devices_to_add, 0);
  atomic_store(&dc_test_fake.enumerate_status, DC_OK);
  atomic_store(&dc_test_fake.refuse, 0);
  atomic_store(&dc_test_fake.memory_size, (size_t)64 << 20);
  atomic_store(&dc_test_fake.allocations, 0);
  atomic_store(&dc_test_fake.deallocations, 0);
  atomic_store(&dc_test_fake.refusals, 0);
  atomic_store(&dc_test_fake.destroys, 0);
}

static inline void dc_test_fake_destroy(dc_device_t* device) {
  dc_test_fake_device_t* fake = (dc_test_fake_device_t*)device;
  atomic_fetch_add(&dc_test_fake.destroys, 1);
  dc_allocator_free(fake->allocator, fake, sizeof(*fake));
}

static inline bool dc_test_fake_take_refusal(void) {
  int left = atomic_load(&dc_test_fake.refuse);
  while (left != 0) {
    if (left < 0) return true;
    if (atomic_compare_exchange_weak(&dc_test_fake.refuse, &left, left - 1)) {
      return true;
    }
  }
  return false;
}

static inline dc_status_t dc_test_fake_allocate(dc_device_t* device,
                                                size_t size,
                                                dc_storage_mode_t mode,
                                                void** out_memory) {
  (void)mode;
  *out_memory = NULL;
  if (dc_test_fake_take_refusal()) {
    atomic_fetch_add(&dc_test_fake.refusals, 1);
    return dc_set_error(DC_ERR_OUT_OF_MEMORY, "%s: refused %zu bytes",
                        device->info.name, size);
  }
  if (posix_memalign(out_memory, 64, size) != 0) {
    return dc_set_error(DC_ERR_OUT_OF_MEMORY, "fake: no memory");
  }
  atomic_fetch_add(&dc_test_fake.allocations, 1);
  return DC_OK;
}

static inline void dc_test_fake_deallocate(dc_device_t* device, void* memory,
                                           size_t size,
                                           dc_storage_mode_t mode) {
  (void)device;
  (void)size;
  (void)mode;
  atomic_fetch_add(&dc_test_fake.deallocations, 1);
  free(memory);
}

static inline void* dc_test_fake_host_pointer(dc_device_t* device,
                                              void* memory,
                                              dc_storage_mode_t mode) {
  (void)device;
  return mode == DC_STORAGE_PRIVATE ? NULL : memory;
}

static inline dc_status_t dc_test_fake_write(dc_device_t* device,
                                             void* memory, size_t offset,
                                             const void* src, size_t size) {
  (void)device;
  memcpy((char*)memory + offset, src, size);
  return DC_OK;
}

static inline dc_status_t dc_test_fake_read(dc_device_t* device,
                                            const void* memory, size_t offset,
                                            void* dst, size_t size) {
  (void)device;
  memcpy(dst, (const char*)memory + offset, size);
  return DC_OK;
}

static inline dc_status_t dc_test_fake_fill(dc_device_t* device, void* memory,
                                            size_t offset, size_t size,
                                            const void* pattern,
                                            size_t pattern_size) {
  (void)device;
  for (size_t i = 0; i < size; i += pattern_size) {
    memcpy((char*)memory + offset + i, pattern, pattern_size);
  }
  return DC_OK;
}

static inline dc_status_t dc_test_fake_copy(dc_device_t* device, void* dst,
                                            size_t dst_offset,
                                            const void* src,
                                            size_t src_offset, size_t size) {
  (void)device;
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, size);
  return DC_OK;
}

static const dc_device_memory_ops_t dc_test_fake_memory = {
    .allocate = dc_test_fake_allocate,
    .deallocate = dc_test_fake_deallocate,
    .host_pointer = dc_test_fake_host_pointer,
    .write = dc_test_fake_write,
    .read = dc_test_fake_read,
    .fill = dc_test_fake_fill,
    .copy = dc_test_fake_copy,
};

static const dc_device_vtable_t dc_test_fake_vtable = {
    .destroy = dc_test_fake_destroy,
    .memory = &dc_test_fake_memory,
};

// What a fake device named |name| says about itself.
static inline dc_device_info_t dc_test_fake_info(const char* name) {
  dc_device_info_t info;
  memset(&info, 0, sizeof(info));
  snprintf(info.name, sizeof(info.name), "%s", name);
  snprintf(info.backend, sizeof(info.backend), "fake");
  snprintf(info.model, sizeof(info.model), "Fake GPU for tests");
  info.kind = DC_DEVICE_KIND_GPU;
  info.compute_units = 4;
  info.worker_threads = 4;
  info.simd_width = 32;
  info.max_work_group_size = 256;
  info.local_memory_size = 48 << 10;
  info.memory_size = atomic_load(&dc_test_fake.memory_size);
  return info;
}

// Makes a fake device for |ctx| (not yet added) with |vtable| (the fake
// one, or a copy with more hooks) and |info|. Returns NULL on failure,
// with dc_last_error() set.
static inline dc_test_fake_device_t* dc_test_fake_device_make(
    dc_context_t* ctx, const dc_device_vtable_t* vtable,
    const dc_device_info_t* info) {
  dc_allocator_t allocator = dc_context_allocator(ctx);
  dc_test_fake_device_t* fake =
      dc_allocator_calloc(allocator, 1, sizeof(*fake));
  if (fake == NULL) {
    dc_set_error(DC_ERR_OUT_OF_MEMORY, "fake: cannot allocate a device");
    return NULL;
  }
  fake->allocator = allocator;
  if (dc_device_initialize(&fake->base, vtable, ctx, info) != DC_OK) {
    dc_allocator_free(allocator, fake, sizeof(*fake));
    return NULL;
  }
  return fake;
}

// A fake device named |name| for |ctx| (not yet added), or NULL.
static inline dc_test_fake_device_t* dc_test_fake_device_new(
    dc_context_t* ctx, const char* name) {
  dc_device_info_t info = dc_test_fake_info(name);
  return dc_test_fake_device_make(ctx, &dc_test_fake_vtable, &info);
}

static inline dc_status_t dc_test_fake_enumerate(dc_context_t* ctx,
                                                 void* user_data) {
  (void)user_data;
  int count = atomic_load(&dc_test_fake.devices_to_add);
  for (int i = 0; i < count; ++i) {
    char name[16];
    snprintf(name, sizeof(name), "fake:%d", i);
    dc_test_fake_device_t* fake = dc_test_fake_device_new(ctx, name);
    if (fake == NULL) return DC_ERR_OUT_OF_MEMORY;
    dc_status_t st = dc_context_add_device(ctx, &fake->base);
    if (st != DC_OK) {
      dc_test_fake_destroy(&fake->base);  // the caller still owns it
      return st;
    }
  }
  dc_status_t st = (dc_status_t)atomic_load(&dc_test_fake.enumerate_status);
  if (st != DC_OK) {
    return dc_set_error(st, "fake: enumerate failed on purpose");
  }
  return DC_OK;
}

// Registers the fake backend for the process. Call from the suite function
// (before the runner forks), not from a test.
static inline void dc_test_fake_register(void) {
  dc_test_fake_reset();
  dc_backend_t backend = {"fake", dc_test_fake_enumerate, NULL};
  dc_status_t st = dc_backend_register(&backend);
  if (st != DC_OK) {
    fprintf(stderr, "cannot register the fake backend: %s\n",
            dc_last_error());
    abort();
  }
  dc_test_fake_registered = true;
}

// A context with |fakes| fake devices after the CPU, quiet, with |params|
// (NULL: quiet defaults) otherwise. |params| must enable the tests'
// backends (dc_test_quiet_params() does), so that the CPU and the fakes
// are all there is.
static inline dc_context_t* dc_test_context_with_fakes(
    const dc_context_params_t* params, int fakes) {
  atomic_store(&dc_test_fake.devices_to_add, fakes);
  dc_context_t* ctx = dc_test_context_new(params);
  atomic_store(&dc_test_fake.devices_to_add, 0);
  ck_assert_uint_eq(dc_context_device_count(ctx), 1 + (size_t)fakes);
  return ctx;
}

//===-- Memory ----------------------------------------------------------===//

// malloc that fails the test instead of returning NULL.
static inline void* dc_test_xmalloc(size_t size) {
  void* p = malloc(size);
  ck_assert_ptr_nonnull(p);
  return p;
}

//===-- Threads ---------------------------------------------------------===//

// Starts |count| threads running |fn|, each given &args[i * arg_size].
static inline void dc_test_run_threads(size_t count, void* (*fn)(void*),
                                       void* args, size_t arg_size) {
  pthread_t threads[64];
  ck_assert_uint_le(count, 64);
  for (size_t i = 0; i < count; ++i) {
    ck_assert_int_eq(pthread_create(&threads[i], NULL, fn,
                                    (char*)args + i * arg_size),
                     0);
  }
  for (size_t i = 0; i < count; ++i) pthread_join(threads[i], NULL);
}

// A small, fast, per-thread deterministic generator (xorshift64*).
static inline uint64_t dc_test_rand(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

// Fills |size| bytes at |out| with pseudo-random bytes from |seed|.
static inline void dc_test_fill_random(void* out, size_t size,
                                       uint64_t seed) {
  uint64_t state = seed | 1;
  unsigned char* p = out;
  for (size_t i = 0; i < size; ++i) p[i] = (unsigned char)dc_test_rand(&state);
}

#endif  // DC_CHECK_UTIL_H_

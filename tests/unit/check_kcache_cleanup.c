// check_kcache_cleanup.c: the kernel cache removes the temporary files that
// writers killed during a store left behind (issue 16), when a context
// first opens it, and nothing else: not a live writer's file, not an
// entry, not a directory or a link, not a file outside the cache. The CPU
// device likewise removes the build directories ($TMPDIR/dclua-build-*)
// of processes killed while they compiled.
//
// A store writes `.<hex>.tmp-<pid>-<random>` and renames it to `<hex>.so`;
// a writer killed in between leaves the temporary file. These tests make
// such files by hand, with the pid of a process that has exited or of one
// still running, and ages set with utimensat, then open the cache through
// the public API (the first build on a CPU device opens it).
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"

static char root[400];       // the test's directory
static char cache_dir[512];  // the cache, inside it
static const char kKey[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static const char kSource[] =
    "__kernel void seven(__global int* o) { o[0] = 7; }";

static void setup(void) {
  dc_test_clear_env();
  unsetenv("DC_CACHE_DIR");
  unsetenv("DC_CC");
  dc_test_make_temp_dir(root, sizeof(root), "dc-kcache-cleanup");
  snprintf(cache_dir, sizeof(cache_dir), "%s/cache", root);
  ck_assert_int_eq(mkdir(cache_dir, 0700), 0);
}

static void teardown(void) {
  dc_test_remove_tree(root);
  root[0] = '\0';
}

//===-- Helpers ---------------------------------------------------------===//

// The path of |name| in |dir| (static storage, one at a time).
static const char* path_in(const char* dir, const char* name) {
  static char path[1024];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return path;
}

// Sets the modification time of |path| to |age_s| seconds ago.
static void age(const char* path, long age_s) {
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= age_s;
  times[1] = times[0];
  ck_assert_int_eq(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW),
                   0);
}

// Creates the file |name| in |dir| with some bytes, |age_s| seconds old.
static void make_file(const char* dir, const char* name, long age_s) {
  const char* path = path_in(dir, name);
  FILE* f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("a part of an entry", f);
  fclose(f);
  age(path, age_s);
}

static bool exists(const char* dir, const char* name) {
  struct stat st;
  return lstat(path_in(dir, name), &st) == 0;
}

// The pid of a process that has exited and been reaped.
static pid_t dead_pid(void) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(0);
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(kill(pid, 0) != 0 && errno == ESRCH);
  return pid;
}

// The name a store by |pid| gives its temporary file.
static const char* temp_name(pid_t pid, const char* suffix) {
  static char name[160];
  snprintf(name, sizeof(name), ".%s.tmp-%ld-%s", kKey, (long)pid, suffix);
  return name;
}

// Opens the cache at |dir| the way the engine does: a context on it
// builds a program on its CPU device. Returns the context's cache
// statistics after a build that must work.
static dc_program_cache_stats_t open_cache(const char* dir) {
  dc_context_params_t p = dc_test_quiet_params();
  p.kernel_cache_dir = dir;
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_device_t* cpu = dc_test_cpu(ctx);
  dc_program_params_t pp = {.source = kSource, .name = "seven.cl"};
  dc_program_t* program = NULL;
  DC_CK_OK(dc_program_create(cpu, &pp, &program));
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "seven", &k));
  dc_buffer_t* out = dc_test_buffer_new(cpu, DC_DTYPE_I32, 1, "out");
  dc_arg_t arg = dc_arg_buffer(out);
  dc_dispatch_t grid = {.dims = 1, .global = {1}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, &arg, 1));
  int32_t value = 0;
  DC_CK_OK(dc_buffer_read(out, 0, &value, 1));
  ck_assert_int_eq(value, 7);
  dc_program_cache_stats_t stats;
  DC_CK_OK(dc_program_cache_stats(cpu, &stats));
  dc_buffer_release(out);
  dc_program_release(program);
  dc_context_release(ctx);
  return stats;
}

// Counts the files of |dir| whose name has ".tmp-".
static int temp_count(const char* dir) {
  DIR* d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (strstr(e->d_name, ".tmp-") != NULL) ++n;
  }
  closedir(d);
  return n;
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_kcache_cleanup_dead_writer_removed) {
  pid_t dead = dead_pid();
  char name[160];
  snprintf(name, sizeof(name), "%s", temp_name(dead, "AbC123"));
  make_file(cache_dir, name, 60);
  open_cache(cache_dir);
  ck_assert_msg(!exists(cache_dir, name),
                "the temporary file of a dead writer is still there");
}
END_TEST

START_TEST(test_kcache_cleanup_stale_temporaries_removed) {
  // Untouched for longer than any store takes: left over, whoever wrote
  // them, in the format of today and of before (no pid), and the CPU
  // backend's compiler identity file too.
  char live[160];
  snprintf(live, sizeof(live), "%s", temp_name(getppid(), "Zz9y8X"));
  char old_format[160];
  snprintf(old_format, sizeof(old_format), ".%s.tmp-Qw3rTy", kKey);
  make_file(cache_dir, live, 2 * 3600);
  make_file(cache_dir, old_format, 2 * 3600);
  make_file(cache_dir, "compiler-1a2b3c.id.tmp-AAAAAA", 2 * 3600);
  open_cache(cache_dir);
  ck_assert(!exists(cache_dir, live));
  ck_assert(!exists(cache_dir, old_format));
  ck_assert(!exists(cache_dir, "compiler-1a2b3c.id.tmp-AAAAAA"));
}
END_TEST

START_TEST(test_kcache_cleanup_cache_works_after) {
  pid_t dead = dead_pid();
  make_file(cache_dir, temp_name(dead, "Left01"), 60);
  dc_program_cache_stats_t first = open_cache(cache_dir);
  ck_assert_uint_eq(first.disk_hits, 0);
  ck_assert_int_eq(temp_count(cache_dir), 0);
  // The entry the first context stored serves the second.
  dc_program_cache_stats_t second = open_cache(cache_dir);
  ck_assert_uint_eq(second.disk_hits, 1);
  ck_assert_int_eq(temp_count(cache_dir), 0);
}
END_TEST

//===-- errors: what must stay ------------------------------------------===//

START_TEST(test_kcache_cleanup_live_writer_kept) {
  // A writer still running (our parent, or this very process) may be
  // writing: its file stays, however many seconds it has been idle short
  // of the stale age.
  char parent[160], self[160];
  snprintf(parent, sizeof(parent), "%s", temp_name(getppid(), "Par001"));
  snprintf(self, sizeof(self), "%s", temp_name(getpid(), "Slf001"));
  make_file(cache_dir, parent, 120);
  make_file(cache_dir, self, 120);
  open_cache(cache_dir);
  ck_assert(exists(cache_dir, parent));
  ck_assert(exists(cache_dir, self));
}
END_TEST

START_TEST(test_kcache_cleanup_fresh_file_of_gone_pid_kept) {
  // Just written, by a pid that means nothing here (a writer on another
  // machine sharing the directory): its grace has not run out.
  pid_t dead = dead_pid();
  char fresh[160];
  snprintf(fresh, sizeof(fresh), "%s", temp_name(dead, "Frsh01"));
  make_file(cache_dir, fresh, 0);
  char old_format[160];
  snprintf(old_format, sizeof(old_format), ".%s.tmp-Qw3rTy", kKey);
  make_file(cache_dir, old_format, 5 * 60);  // no pid: only age counts
  open_cache(cache_dir);
  ck_assert(exists(cache_dir, fresh));
  ck_assert(exists(cache_dir, old_format));
}
END_TEST

START_TEST(test_kcache_cleanup_leaves_everything_else) {
  pid_t dead = dead_pid();
  // An entry, any other file, a directory and a link named like
  // temporaries, and a file outside the cache that a link points at.
  char entry[160];
  snprintf(entry, sizeof(entry), "%s.so", kKey);
  make_file(cache_dir, entry, 3 * 3600);
  make_file(cache_dir, "notes.txt", 3 * 3600);
  make_file(cache_dir, ".tmp-1-AAAAAA", 3 * 3600);  // no name before it
  char dir_name[160];
  snprintf(dir_name, sizeof(dir_name), "%s", temp_name(dead, "Dir001"));
  ck_assert_int_eq(mkdir(path_in(cache_dir, dir_name), 0700), 0);
  age(path_in(cache_dir, dir_name), 3 * 3600);
  make_file(root, "outside", 3 * 3600);
  char link_name[160];
  snprintf(link_name, sizeof(link_name), "%s", temp_name(dead, "Lnk001"));
  char target[600];
  snprintf(target, sizeof(target), "%s/outside", root);
  ck_assert_int_eq(symlink(target, path_in(cache_dir, link_name)), 0);
  age(path_in(cache_dir, link_name), 3 * 3600);
  open_cache(cache_dir);
  ck_assert(exists(cache_dir, entry));
  ck_assert(exists(cache_dir, "notes.txt"));
  ck_assert(exists(cache_dir, ".tmp-1-AAAAAA"));
  ck_assert(exists(cache_dir, dir_name));
  ck_assert(exists(cache_dir, link_name));
  ck_assert(exists(root, "outside"));
}
END_TEST

START_TEST(test_kcache_cleanup_off_touches_nothing) {
  pid_t dead = dead_pid();
  char name[160];
  snprintf(name, sizeof(name), "%s", temp_name(dead, "Off001"));
  make_file(cache_dir, name, 2 * 3600);
  setenv("DC_CACHE_DIR", cache_dir, 1);  // what "off" must not use
  open_cache("off");
  unsetenv("DC_CACHE_DIR");
  ck_assert(exists(cache_dir, name));
}
END_TEST

START_TEST(test_kcache_cleanup_build_dirs_of_killed_compiles) {
  // The builds' $TMPDIR is the test's own, for this test.
  char tmp[600];
  snprintf(tmp, sizeof(tmp), "%s/tmp", root);
  ck_assert_int_eq(mkdir(tmp, 0700), 0);
  const char* saved = getenv("TMPDIR");
  char* old_tmpdir = saved != NULL ? strdup(saved) : NULL;
  setenv("TMPDIR", tmp, 1);
  pid_t dead = dead_pid();
  char left[160], live[160], link_name[160];
  snprintf(left, sizeof(left), "dclua-build-%ld-AbCdEf", (long)dead);
  snprintf(live, sizeof(live), "dclua-build-%ld-GhIjKl", (long)getppid());
  snprintf(link_name, sizeof(link_name), "dclua-build-%ld-MnOpQr",
           (long)dead);
  ck_assert_int_eq(mkdir(path_in(tmp, left), 0700), 0);
  char inside[800];
  snprintf(inside, sizeof(inside), "%s/%s", tmp, left);
  make_file(inside, "kernel.c", 60);
  make_file(inside, "kernels.so", 60);
  age(path_in(tmp, left), 60);
  ck_assert_int_eq(mkdir(path_in(tmp, live), 0700), 0);
  age(path_in(tmp, live), 60);
  char target[600];
  snprintf(target, sizeof(target), "%s/elsewhere", root);
  ck_assert_int_eq(mkdir(target, 0700), 0);
  make_file(target, "keep", 60);
  ck_assert_int_eq(symlink(target, path_in(tmp, link_name)), 0);
  make_file(tmp, "dclua-build-notes", 3 * 3600);  // a file, not ours
  open_cache(cache_dir);
  if (old_tmpdir != NULL) {
    setenv("TMPDIR", old_tmpdir, 1);
    free(old_tmpdir);
  } else {
    unsetenv("TMPDIR");
  }
  ck_assert_msg(!exists(tmp, left), "a killed build's directory stayed");
  ck_assert(exists(tmp, live));
  ck_assert(exists(tmp, link_name));
  ck_assert(exists(target, "keep"));
  ck_assert(exists(tmp, "dclua-build-notes"));
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_kcache_cleanup_killed_writer) {
  // A process killed while it holds a temporary file in the cache (as a
  // store does between mkostemp and rename) leaves it behind; the next
  // context to open the cache, once the file has been idle past the
  // grace, removes it.
  int ready[2];
  ck_assert_int_eq(pipe(ready), 0);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    char tmp[700];
    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp-%ld-XXXXXX", cache_dir, kKey,
             (long)getpid());
    int fd = mkstemp(tmp);
    if (fd < 0 || write(fd, "half", 4) != 4) _exit(1);
    if (write(ready[1], "r", 1) != 1) _exit(1);
    for (;;) pause();  // killed mid-store
  }
  close(ready[1]);
  char byte = 0;
  ck_assert_int_eq(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  ck_assert_int_eq(kill(child, SIGKILL), 0);
  ck_assert_int_eq(waitpid(child, NULL, 0), child);
  ck_assert_int_eq(temp_count(cache_dir), 1);
  // Idle past the grace, as it would be by the next run.
  DIR* d = opendir(cache_dir);
  ck_assert_ptr_nonnull(d);
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (strstr(e->d_name, ".tmp-") != NULL) {
      age(path_in(cache_dir, e->d_name), 30);
    }
  }
  closedir(d);
  open_cache(cache_dir);
  ck_assert_int_eq(temp_count(cache_dir), 0);
}
END_TEST

static Suite* kcache_cleanup_suite(void) {
  Suite* s = suite_create("kcache_cleanup");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_kcache_cleanup_dead_writer_removed);
  tcase_add_test(core, test_kcache_cleanup_stale_temporaries_removed);
  tcase_add_test(core, test_kcache_cleanup_cache_works_after);
  tcase_add_test(core, test_kcache_cleanup_build_dirs_of_killed_compiles);
  suite_add_tcase(s, core);
  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_set_timeout(errors, 120);
  tcase_add_test(errors, test_kcache_cleanup_live_writer_kept);
  tcase_add_test(errors, test_kcache_cleanup_fresh_file_of_gone_pid_kept);
  tcase_add_test(errors, test_kcache_cleanup_leaves_everything_else);
  tcase_add_test(errors, test_kcache_cleanup_off_touches_nothing);
  suite_add_tcase(s, errors);
  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, setup, teardown);
  tcase_set_timeout(lifecycle, 120);
  tcase_add_test(lifecycle, test_kcache_cleanup_killed_writer);
  suite_add_tcase(s, lifecycle);
  return s;
}

DC_CHECK_MAIN(kcache_cleanup_suite)

// cpu_compile.c: runs the system C compiler and reads its messages.
//
// The compiler runs as a child process (posix_spawnp) with its output in a
// file, so a compiler that prints a lot cannot block on a full pipe. The
// generated code carries #line directives, so every message about the
// user's code already names the user's file and line; those lines are
// copied into the build log as they are. A program is compiled to an
// object file and then linked, in two steps, so that the link never sees
// the math flags (link_object() says why).
// SPDX-License-Identifier: MIT
#include "cpu_compile.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

// Runs |argv| with stdout and stderr into |output_path|; sets |exit_code|.
static dc_status_t run(char* const argv[], const char* output_path,
                       int* exit_code) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output_path,
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addclose(&actions, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return DC_FAIL(DC_ERR_UNAVAILABLE,
                   "cannot run the C compiler '%s': %s (set DC_CC or the "
                   "c_compiler parameter to a C compiler)",
                   argv[0], strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return DC_FAIL(DC_ERR_UNAVAILABLE, "waiting for '%s' failed: %s",
                     argv[0], strerror(errno));
    }
  }
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (*exit_code == 127) {  // the shell's "command not found"
    return DC_FAIL(DC_ERR_UNAVAILABLE,
                   "cannot run the C compiler '%s' (set DC_CC or the "
                   "c_compiler parameter to a C compiler)",
                   argv[0]);
  }
  return DC_OK;
}

// Reads at most |size| - 1 bytes of |path| into |buf|.
static size_t read_file(const char* path, char* buf, size_t size) {
  FILE* f = fopen(path, "r");
  size_t n = 0;
  if (f != NULL) {
    n = fread(buf, 1, size - 1, f);
    fclose(f);
  }
  buf[n] = '\0';
  return n;
}

// Finds the file |compiler| names: itself if it has a '/', else the first
// match on PATH.
static bool resolve_compiler(const char* compiler, char* path, size_t size) {
  if (strchr(compiler, '/') != NULL) {
    dc__strlcpy(path, compiler, size);
    return access(path, X_OK) == 0;
  }
  const char* dirs = getenv("PATH");
  if (dirs == NULL) dirs = "/usr/local/bin:/usr/bin:/bin";
  while (*dirs) {
    size_t n = strcspn(dirs, ":");
    snprintf(path, size, "%.*s/%s", (int)n, dirs, compiler);
    if (n > 0 && access(path, X_OK) == 0) return true;
    dirs += n + (dirs[n] == ':');
  }
  return false;
}

// The identity is cached in the kernel cache directory, keyed by the
// compiler's path and stamped with its file's size, times and inode: asking
// the compiler costs two process starts (milliseconds), and a cache hit
// must stay well under one. Any change to the compiler's file, such as an
// upgrade, changes the stamp and forces a fresh answer.
static bool stamp_of(const char* compiler, char* stamp, size_t size,
                     char* id_path, size_t id_size, const char* cache_dir) {
  char path[1024];
  struct stat st;
  if (cache_dir == NULL || strcmp(cache_dir, "off") == 0 ||
      !resolve_compiler(compiler, path, sizeof(path)) ||
      stat(path, &st) != 0) {
    return false;
  }
  snprintf(stamp, size, "%s %lld %lld.%09ld %llu %llu\n", path,
           (long long)st.st_size, (long long)st.st_mtim.tv_sec,
           st.st_mtim.tv_nsec, (unsigned long long)st.st_ino,
           (unsigned long long)st.st_dev);
  unsigned long h = 5381;
  for (const char* c = path; *c; ++c) h = h * 33 + (unsigned char)*c;
  snprintf(id_path, id_size, "%s/compiler-%lx.id", cache_dir, h);
  return true;
}

// Reads a cached identity whose stamp matches. Returns true on a hit.
static bool read_cached_identity(const char* id_path, const char* stamp,
                                 char* out, size_t size) {
  char text[2048];
  size_t n = read_file(id_path, text, sizeof(text));
  size_t stamp_len = strlen(stamp);
  if (n <= stamp_len || strncmp(text, stamp, stamp_len) != 0) return false;
  dc__strlcpy(out, text + stamp_len, size);
  return true;
}

// Writes the identity atomically (temp file, then rename); failures only
// cost the next process two compiler starts.
static void write_cached_identity(const char* id_path, const char* stamp,
                                  const char* identity) {
  char tmp[1200];
  snprintf(tmp, sizeof(tmp), "%s.tmp-" DC_MKTEMP_SUFFIX, id_path);
  int fd = mkstemp(tmp);
  if (fd < 0) return;
  FILE* f = fdopen(fd, "w");
  bool ok = f != NULL && fputs(stamp, f) >= 0 && fputs(identity, f) >= 0;
  if (f != NULL && fclose(f) != 0) ok = false;
  if (f == NULL) close(fd);
  if (!ok || rename(tmp, id_path) != 0) unlink(tmp);
}

static dc_status_t ask_compiler(const char* compiler, char* out,
                                size_t size) {
  char path[] = "/tmp/dclua-cc-" DC_MKTEMP_SUFFIX;
  int fd = mkstemp(path);
  if (fd < 0) {
    return DC_FAIL(DC_ERR_UNAVAILABLE, "cannot create a temporary file: %s",
                   strerror(errno));
  }
  close(fd);
  char* version[] = {(char*)compiler, "--version", NULL};
  char* machine[] = {(char*)compiler, "-dumpmachine", NULL};
  int code = 0;
  dc_status_t st = run(version, path, &code);
  size_t n = st == DC_OK ? read_file(path, out, size) : 0;
  if (st == DC_OK && code == 0) st = run(machine, path, &code);
  if (st == DC_OK && code == 0 && n + 1 < size) {
    read_file(path, out + n, size - n);
  }
  unlink(path);
  if (st == DC_OK && code != 0) {
    st = DC_FAIL(DC_ERR_UNAVAILABLE,
                 "the C compiler '%s' failed to report its version (exit "
                 "code %d)",
                 compiler, code);
  }
  return st;
}

dc_status_t dc__cpu_compiler_identify(const char* compiler,
                                      const char* cache_dir, char* out,
                                      size_t size) {
  char stamp[1200], id_path[1100];
  bool cacheable = stamp_of(compiler, stamp, sizeof(stamp), id_path,
                            sizeof(id_path), cache_dir);
  if (cacheable && read_cached_identity(id_path, stamp, out, size)) {
    return DC_OK;
  }
  DC_RETURN_IF_ERROR(ask_compiler(compiler, out, size));
  if (cacheable) write_cached_identity(id_path, stamp, out);
  return DC_OK;
}

// Compiler flags that follow the program's build options.
static size_t math_flags(const dc_build_flags_t* o, char** argv,
                         size_t n) {
  if (o->fast_math) argv[n++] = "-ffast-math";
  if (o->finite_math) argv[n++] = "-ffinite-math-only";
  if (o->no_signed_zeros) argv[n++] = "-fno-signed-zeros";
  if (o->mad_enable) argv[n++] = "-ffp-contract=fast";
  return n;
}

static dc_status_t write_source(const char* path, const char* code,
                                size_t length) {
  FILE* f = fopen(path, "w");
  bool ok = f != NULL && fwrite(code, 1, length, f) == length;
  if (f != NULL && fclose(f) != 0) ok = false;
  if (!ok) {
    return DC_FAIL(DC_ERR_UNAVAILABLE, "cannot write %s: %s", path,
                   strerror(errno));
  }
  return DC_OK;
}

// The first line of |log| that reports an error, without its newline.
static size_t first_error_line(const char* log, const char** out) {
  const char* at = strstr(log, ": error:");
  if (at == NULL) at = log;
  while (at > log && at[-1] != '\n') --at;
  *out = at;
  return strcspn(at, "\n");
}

// Runs one step of the build (|argv|, output into |output|). The front
// end checked the program, so the compiler failing on what the generator
// made of it is the engine's bug: DC_ERR_INTERNAL, naming |file| and |what|
// the step does, with the compiler's whole output in the build log; a
// missing system header or library is DC_ERR_UNAVAILABLE.
static dc_status_t run_step(char* const argv[], const char* output,
                            dc_program_build_t* build,
                            dc_allocator_t allocator, const char* what) {
  const char* file = build->name;
  int exit_code = 0;
  DC_RETURN_IF_ERROR(run(argv, output, &exit_code));
  if (exit_code == 0) return DC_OK;
  const size_t log_size = (size_t)1 << 16;
  char* log = dc_allocator_malloc(allocator, log_size);
  if (log == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for the compiler output");
  }
  read_file(output, log, log_size);
  dc_program_build_append_log(build, log);
  const char* line = NULL;
  size_t n = first_error_line(log, &line);
  // A system header or library the toolchain lacks is the machine's
  // problem, not the engine's.
  const char* missing = strstr(log, ": No such file or directory");
  if (missing == NULL) missing = strstr(log, "no include path in which");
  if (missing == NULL) missing = strstr(log, "cannot find -l");
  if (missing != NULL) {
    while (missing > log && missing[-1] != '\n') --missing;
    dc_status_t st = DC_FAIL(
        DC_ERR_UNAVAILABLE,
        "the C library's development files are missing (on Debian: "
        "apt-get install libc6-dev): the C compiler '%s' could not %s for "
        "program '%s': %.*s",
        argv[0], what, file, (int)strcspn(missing, "\n"), missing);
    dc_allocator_free(allocator, log, log_size);
    return st;
  }
  dc_status_t st = DC_FAIL(DC_ERR_INTERNAL,
                           "internal error: the C compiler '%s' could not %s "
                           "for program '%s' (exit code %d): %.*s; this is a "
                           "bug of the engine, please report it with the "
                           "program",
                           argv[0], what, file, exit_code, (int)n, line);
  dc_allocator_free(allocator, log, log_size);
  return st;
}

// Compiles |source| into the object file |object| with the flags of the
// build |options|.
static dc_status_t compile_object(const char* compiler, const char* source,
                                  const char* object,
                                  const dc_build_flags_t* options,
                                  const char* output,
                                  dc_program_build_t* build,
                                  dc_allocator_t allocator) {
  char* argv[32];
  size_t n = 0;
  argv[n++] = (char*)compiler;
  argv[n++] = "-std=gnu11";
  // -O2 by default: work-item loops are vectorised either way (they are
  // marked omp simd), and -O3 doubles the compile time of a typical
  // program. -O3 vectorises more work-item loops that contain inner loops
  // (the built-in matmul runs 1.6x faster), so -dc-O3 asks for it.
  argv[n++] = options->opt_disable ? "-O0" : options->opt_max ? "-O3" : "-O2";
  argv[n++] = "-pipe";
  argv[n++] = "-march=native";
  // 256-bit vectors even where the CPU has 512-bit ones, as compilers
  // choose by default for most AVX-512 targets: memory-bound kernels, the
  // common case, stream faster with them (docs/benchmarks.md has the
  // figures, and what compute-bound kernels give up).
  argv[n++] = "-mprefer-vector-width=256";
  argv[n++] = "-fPIC";
  argv[n++] = "-fno-math-errno";
  argv[n++] = "-fopenmp-simd";
  // No -w: it would also silence the three -Werror= below (gcc drops
  // them under -w), and an unknown function would then compile and only
  // fail in dlopen.
  argv[n++] = "-Werror=implicit-function-declaration";
  argv[n++] = "-Werror=int-conversion";
  argv[n++] = "-Werror=incompatible-pointer-types";
  n = math_flags(options, argv, n);
  argv[n++] = "-c";
  argv[n++] = "-o";
  argv[n++] = (char*)object;
  argv[n++] = (char*)source;
  argv[n] = NULL;
  return run_step(argv, output, build, allocator,
                  "compile the generated code");
}

// Links |object| into the shared object |so_path|: a step of its own,
// without the math flags. gcc and clang link crtfastmath.o into anything
// linked with -ffast-math; its constructor turns on flush-to-zero and
// denormals-are-zero in the thread that loads the module (and in the
// threads that thread creates later), which would change every later
// float result of the host and of the other kernels. (gcc 13's
// -mno-daz-ftz would keep it out in one step; gcc 12 and clang lack it.)
static dc_status_t link_object(const char* compiler, const char* object,
                               const char* so_path, const char* output,
                               dc_program_build_t* build,
                               dc_allocator_t allocator) {
  char* argv[] = {(char*)compiler, "-shared", "-o", (char*)so_path,
                  (char*)object,   "-lm",     NULL};
  return run_step(argv, output, build, allocator, "link the generated code");
}

dc_status_t dc__cpu_compile(const char* compiler, const char* work_dir,
                            const char* code, size_t length,
                            dc_program_build_t* build,
                            dc_allocator_t allocator, const char* so_path) {
  char source[4096], object[4096], output[4096];
  snprintf(source, sizeof(source), "%s/kernel.c", work_dir);
  snprintf(object, sizeof(object), "%s/kernel.o", work_dir);
  snprintf(output, sizeof(output), "%s/compiler.txt", work_dir);
  DC_RETURN_IF_ERROR(write_source(source, code, length));
  DC_RETURN_IF_ERROR(compile_object(compiler, source, object, &build->flags,
                                    output, build, allocator));
  return link_object(compiler, object, so_path, output, build, allocator);
}

// cpu_program.c: kernels on the CPU device: building (through the compile
// cache) and loading; cpu_dispatch.c runs them.
//
// A program's cache key is the SHA-256 of everything that decides the
// shared object: the engine's kernel ABI, prelude, code generator and
// compiler driver with its compile and link flags (a fingerprint of their
// sources, cpu_compile.c included, taken at build time, so the embedded
// prelude text needs no hashing at run time), the compiler's
// identity, the CPU it targets (-march=native), the build options and the
// source. Loaded objects are shared by every program with the same key
// (the module list), so building the same source again in one process
// costs a hash and a lookup; in a new process, a disk cache hit costs a
// file read and a dlopen.
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builtin_table.h"
#include "cpu_abi.h"
#include "cpu_codegen.h"
#include "cpu_compile.h"
#include "cpu_internal.h"
#include "kcache.h"
#include "log_internal.h"
#include "program_internal.h"
#include "sha256.h"
#include "tree_walk.h"

// The prelude and ABI text every generated module starts with (generated
// into the build from cpu_abi.h and cpu_prelude.h).
extern const char dc__cpu_prelude_text[];
extern const char dc__generator_digest[];  // see source_digest.cmake

// A loaded shared object, shared by the programs built from one key.
struct dc__cpu_module_t {
  uint8_t key[32];
  void* handle;
  unsigned refs;  // guarded by the device lock
  size_t kernel_count;
  uint8_t* modes;  // dc__exec_mode_t of each kernel, in source order
  dc__cpu_module_t* next;
};


static void free_module(dc__cpu_device_t* cpu, dc__cpu_module_t* m);

//===-- Device kernel state ---------------------------------------------===//

static void kcache_log(void* user_data, dc_log_level_t level,
                       const char* message) {
  dc_context_log(user_data, level, "kcache", "%s", message);
}

static void sweep_build_dirs(void);

// Probes the compiler and opens the cache, once; later calls return the
// outcome of the first. Called with the device lock held.
static dc_status_t prepare_kernels(dc__cpu_device_t* cpu) {
  if (cpu->kernels_ready) {
    if (cpu->kernels_status != DC_OK) {
      dc_set_error(cpu->kernels_status, "%s", cpu->kernels_message);
    }
    return cpu->kernels_status;
  }
  dc_context_t* ctx = cpu->base.context;
  dc_context_params_t params;
  dc_context_params(ctx, &params);
  sweep_build_dirs();
  dc_status_t st = dc__kcache_create(cpu->allocator, params.kernel_cache_dir,
                                     kcache_log, ctx, &cpu->kcache);
  if (st == DC_OK) {
    st = dc__cpu_compiler_identify(params.c_compiler,
                                   dc__kcache_dir(cpu->kcache),
                                   cpu->compiler_id, sizeof(cpu->compiler_id));
  }
  cpu->kernels_ready = true;
  cpu->kernels_status = st;
  if (st != DC_OK) {
    dc__strlcpy(cpu->kernels_message, dc_last_error(),
                sizeof(cpu->kernels_message));
  } else {
    DC_LOG(ctx, DC_LOG_DEBUG, "cpu", "kernel cache: %s",
           dc__kcache_dir(cpu->kcache));
  }
  return st;
}

void dc__cpu_kernels_teardown(dc__cpu_device_t* cpu) {
  dc__cpu_module_t* m = cpu->modules;
  while (m != NULL) {  // every program is gone: these are unused
    dc__cpu_module_t* next = m->next;
    free_module(cpu, m);
    m = next;
  }
  cpu->modules = NULL;
  dc__kcache_destroy(cpu->kcache);
  cpu->kcache = NULL;
}

static void compute_key(const dc__cpu_device_t* cpu,
                        const dc_program_build_t* b, uint8_t key[32]) {
  char abi[64];
  snprintf(abi, sizeof(abi), "dc-cpu-abi-%d bounds=%d", DC_CPU_ABI_VERSION,
           (int)b->checked);
  dc__sha256_t h;
  dc__sha256_init(&h);
  const char* parts[] = {abi, dc__generator_digest, cpu->compiler_id,
                         cpu->base.info.model, b->options};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    dc__sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  }
  uint32_t simd = cpu->base.info.simd_width;
  dc__sha256_update(&h, &simd, sizeof(simd));
  // __FILE__ expands to the program's name, which then shapes the code.
  if (memmem(b->source, b->source_length, "__FILE__", 8) != NULL) {
    dc__sha256_update(&h, b->program->name, strlen(b->program->name) + 1);
  }
  dc__sha256_update(&h, b->source, b->source_length);
  dc__sha256_final(&h, key);
}

//===-- Prelude sections ------------------------------------------------===//

// True if identifier |name| (|n| bytes) is a word of |list| (up to the end
// of its line).
static bool list_has_word(const char* list, const char* name, size_t n) {
  for (const char* p = list; *p && *p != '\n';) {
    while (*p == ' ') ++p;
    const char* start = p;
    while (*p && *p != ' ' && *p != '\n') ++p;
    if ((size_t)(p - start) == n && memcmp(start, name, n) == 0) return true;
  }
  return false;
}

// What the generated code calls in the prelude: the built-ins the program
// calls, and select for a vector ?: (which the generator writes so).
typedef struct prelude_calls_t {
  const char* names[256];
  uint32_t count;
  bool overflow;  // more than fit: every section is taken
} prelude_calls_t;

static bool note_prelude_call(const dc__expr_t* e, void* ctx) {
  prelude_calls_t* c = ctx;
  const char* name = NULL;
  if (e->kind == DC_EXPR_BUILTIN) name = e->builtin->name;
  // A conversion to a 3-component type is spelled as one to the
  // 4-component type (cpu_codegen.c); every conversion is in one section.
  if (e->kind == DC_EXPR_BUILTIN &&
      (e->builtin->klass == DC_BUILTIN_CONVERT ||
       e->builtin->klass == DC_BUILTIN_REINTERPRET)) {
    name = "convert_int";
  }
  if (e->kind == DC_EXPR_COND && e->cond->type->kind == DC_TY_VECTOR) {
    name = "select";
  }
  if (name == NULL) return false;
  for (uint32_t i = 0; i < c->count; ++i) {
    if (strcmp(c->names[i], name) == 0) return false;
  }
  if (c->count == sizeof(c->names) / sizeof(c->names[0])) {
    c->overflow = true;
    return true;
  }
  c->names[c->count++] = name;
  return false;
}

// Writes "#define DC_NEED_X 1" for each prelude section (listed in the
// prelude's "// @section NAME: ids..." lines) that the program calls into,
// so the C compiler parses only what the program needs.
static void emit_sections(const dc__program_ast_t* ast, dc__strbuf_t* out) {
  prelude_calls_t calls = {.count = 0};
  for (uint32_t i = 0; i < ast->function_count && !calls.overflow; ++i) {
    dc__stmt_any(ast->functions[i].body, note_prelude_call, &calls);
  }
  for (uint32_t i = 0; i < ast->global_count && !calls.overflow; ++i) {
    dc__stmt_any(ast->globals[i].decl, note_prelude_call, &calls);
  }
  static const char kTag[] = "// @section ";
  for (const char* p = strstr(dc__cpu_prelude_text, kTag); p != NULL;
       p = strstr(p + 1, kTag)) {
    const char* name = p + sizeof(kTag) - 1;
    const char* colon = strchr(name, ':');
    const char* eol = strchr(name, '\n');
    if (colon == NULL || (eol != NULL && colon > eol)) continue;
    bool needed = calls.overflow;
    for (uint32_t i = 0; i < calls.count && !needed; ++i) {
      needed = list_has_word(colon + 1, calls.names[i],
                             strlen(calls.names[i]));
    }
    if (needed) {
      dc__strbuf_printf(out, "#define %.*s 1\n", (int)(colon - name), name);
    }
  }
}

//===-- Building --------------------------------------------------------===//

static int remove_entry(const char* path, const struct stat* st, int flag,
                        struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

// With DC_KERNEL_DUMP set to a directory, keeps each program's generated C
// there as <name>.c, to read what the compiler was given.
static void dump_source(dc__cpu_device_t* cpu, const char* name,
                        const dc__strbuf_t* code) {
  const char* dir = getenv("DC_KERNEL_DUMP");
  if (dir == NULL || *dir == '\0') return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s.c", dir, name);
  for (char* c = path + strlen(dir) + 1; *c; ++c) {
    if (*c == '/') *c = '_';
  }
  FILE* f = fopen(path, "w");
  if (f == NULL || fwrite(code->data, 1, code->length, f) != code->length) {
    DC_LOG(cpu->base.context, DC_LOG_WARN, "cpu", "DC_KERNEL_DUMP: cannot "
           "write %s", path);
  } else {
    DC_LOG(cpu->base.context, DC_LOG_DEBUG, "cpu", "wrote %s", path);
  }
  if (f != NULL) fclose(f);
}

// Generates C for the program and compiles it into |so_path|; |modes|
// receives each function's execution mode.
static dc_status_t compile_program(dc__cpu_device_t* cpu,
                                   dc_program_build_t* b, const char* dir,
                                   const char* so_path,
                                   dc__exec_mode_t* modes) {
  dc__strbuf_t generated, code;
  dc__strbuf_init(&generated, b->tree->arena);
  dc__strbuf_init(&code, b->tree->arena);
  dc__codegen_options_t options = {.file = b->tree->diag->file,
                                   .checked = b->checked};
  DC_RETURN_IF_ERROR(dc__cpu_codegen(b->tree->arena, b->tree->ast, &options, b->tree->diag,
                                     &generated, modes));
  // Libc headers must come before the prelude, whose macros share names
  // with libm functions.
  for (uint32_t i = 0; i < b->tree->ast->function_count; ++i) {
    if (modes[i] == DC_EXEC_FIBERS) {
      dc__strbuf_puts(&code, "#include <ucontext.h>\n");
      break;
    }
  }
  emit_sections(b->tree->ast, &code);
  dc__strbuf_puts(&code, dc__cpu_prelude_text);
  dc__strbuf_append(&code, generated.data ? generated.data : "",
                    generated.length);
  dc_context_params_t params;
  dc_context_params(cpu->base.context, &params);
  dump_source(cpu, b->program->name, &code);
  return dc__cpu_compile(params.c_compiler, dir, code.data, code.length,
                         b->tree->options, b->program->name, b->tree->diag, so_path);
}

static void free_module(dc__cpu_device_t* cpu, dc__cpu_module_t* m) {
  dlclose(m->handle);
  dc_allocator_free(cpu->allocator, m, sizeof(*m) + m->kernel_count);
}

// The calling thread's floating-point control register: x86's MXCSR,
// AArch64's FPCR (flush-to-zero, denormals-are-zero, rounding). Elsewhere
// there is nothing to keep, and the separate link step (cpu_compile.c)
// alone keeps fast-math start files out of the modules.
#if defined(__SSE__)
typedef unsigned fp_control_t;
static fp_control_t fp_control_get(void) { return __builtin_ia32_stmxcsr(); }
static void fp_control_set(fp_control_t c) { __builtin_ia32_ldmxcsr(c); }
#elif defined(__aarch64__)
typedef uint64_t fp_control_t;
static fp_control_t fp_control_get(void) {
  uint64_t c;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(c));
  return c;
}
static void fp_control_set(fp_control_t c) {
  __asm__ __volatile__("msr fpcr, %0" : : "r"(c));
}
#else
typedef int fp_control_t;
static fp_control_t fp_control_get(void) { return 0; }
static void fp_control_set(fp_control_t c) { (void)c; }
#endif

// dlopen, keeping the calling thread's floating-point mode: a module's
// constructors run in this thread, and one that turned on flush-to-zero
// (crtfastmath.o does) would change the host's arithmetic and that of
// every thread created here later. The modules the engine links have no
// such constructor (cpu_compile.c); this keeps any other out too.
static void* open_module(const char* path) {
  fp_control_t mode = fp_control_get();
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  fp_control_set(mode);
  return handle;
}

// Loads the shared object at |path| as a module for |key| whose kernels
// run in |modes|.
static dc_status_t load_module(dc__cpu_device_t* cpu, const uint8_t key[32],
                               const char* path, const uint8_t* modes,
                               size_t kernel_count, dc__cpu_module_t** out) {
  void* handle = open_module(path);
  if (handle == NULL) {
    return DC_FAIL(DC_ERR_UNAVAILABLE, "cannot load the compiled kernels: %s",
                   dlerror());
  }
  dc__cpu_module_t* m =
      dc_allocator_calloc(cpu->allocator, 1, sizeof(*m) + kernel_count);
  if (m == NULL) {
    dlclose(handle);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a kernel module");
  }
  memcpy(m->key, key, 32);
  m->handle = handle;
  m->refs = 1;
  m->kernel_count = kernel_count;
  m->modes = (uint8_t*)(m + 1);
  memcpy(m->modes, modes, kernel_count);
  *out = m;
  return DC_OK;
}

//===-- Build directories -----------------------------------------------===//
//
// Each build compiles in a private directory, $TMPDIR/dclua-build-<pid>-
// <random>, removed when the build ends. A process killed while it compiles
// leaves its directory behind, so the first build of each device sweeps
// them: directories of ours with that prefix whose process is gone and
// which have not changed for BUILD_DEAD_AFTER_S (a grace for a pid of
// another machine or container sharing $TMPDIR), or which have not changed
// for BUILD_STALE_AFTER_S whoever made them (names without a pid, from
// before; no build takes that long).
#define BUILD_PREFIX "dclua-build-"
#define BUILD_DEAD_AFTER_S 10
#define BUILD_STALE_AFTER_S (24 * 3600)

static const char* build_root(void) {
  const char* tmp = getenv("TMPDIR");
  return tmp != NULL && *tmp != '\0' ? tmp : "/tmp";
}

// Whether the entry |name| of |dir_fd| is a build directory left over.
static bool build_dir_left_over(int dir_fd, const char* name, time_t now) {
  if (strncmp(name, BUILD_PREFIX, strlen(BUILD_PREFIX)) != 0) return false;
  struct stat st;
  if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
    return false;
  }
  time_t idle = now > st.st_mtime ? now - st.st_mtime : 0;
  if (idle >= BUILD_STALE_AFTER_S) return true;
  const char* p = name + strlen(BUILD_PREFIX);
  long pid = 0;
  while (*p >= '0' && *p <= '9' && pid < 1000000000L) {
    pid = pid * 10 + (*p++ - '0');
  }
  return *p == '-' && pid > 0 && pid != (long)getpid() &&
         idle >= BUILD_DEAD_AFTER_S && kill((pid_t)pid, 0) != 0 &&
         errno == ESRCH;
}

// Removes the build directories left over in $TMPDIR (see above).
static void sweep_build_dirs(void) {
  const char* root = build_root();
  DIR* d = opendir(root);
  if (d == NULL) return;
  time_t now = time(NULL);
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (!build_dir_left_over(dirfd(d), e->d_name, now)) continue;
    char path[PATH_MAX];
    int n = snprintf(path, sizeof(path), "%s/%s", root, e->d_name);
    if (n > 0 && (size_t)n < sizeof(path)) {
      nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    }
  }
  closedir(d);
}

// Compiles in a private temporary directory, stores the result in the
// cache, and loads it.
static dc_status_t build_module(dc__cpu_device_t* cpu, dc_program_build_t* b,
                                const uint8_t key[32], uint8_t* modes,
                                dc__cpu_module_t** out) {
  char dir[256];
  const char* tmp = build_root();
  snprintf(dir, sizeof(dir), "%s/" BUILD_PREFIX "%ld-" DC_MKTEMP_SUFFIX, tmp,
           (long)getpid());
  if (mkdtemp(dir) == NULL) {
    return DC_FAIL(DC_ERR_UNAVAILABLE,
                   "cannot create a build directory in %s: %s", tmp,
                   strerror(errno));
  }
  char so_path[300], entry[DC_KCACHE_PATH_SIZE];
  snprintf(so_path, sizeof(so_path), "%s/kernels.so", dir);
  dc__exec_mode_t* fn_modes =
      dc__arena_alloc(b->tree->arena, (b->tree->ast->function_count + 1) * sizeof(*fn_modes));
  dc_status_t st = fn_modes ? compile_program(cpu, b, dir, so_path, fn_modes)
                            : DC_ERR_OUT_OF_MEMORY;
  if (st == DC_OK) {
    for (size_t k = 0; k < b->program->kernel_count; ++k) {
      modes[k] = (uint8_t)fn_modes[b->program->kernels[k].function];
    }
    // A failed store only costs the next process a compile.
    if (dc__kcache_store(cpu->kcache, key, so_path, modes,
                         b->program->kernel_count, entry,
                         sizeof(entry)) != DC_OK) {
      DC_LOG(cpu->base.context, DC_LOG_INFO, "kcache", "%s", dc_last_error());
      dc__strlcpy(entry, so_path, sizeof(entry));
    }
    st = load_module(cpu, key, entry, modes, b->program->kernel_count, out);
  }
  nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
  return st;
}

// Finds a loaded module for |key| and takes a reference to it.
static dc__cpu_module_t* find_module(dc__cpu_device_t* cpu,
                                     const uint8_t key[32]) {
  for (dc__cpu_module_t* m = cpu->modules; m != NULL; m = m->next) {
    if (memcmp(m->key, key, 32) == 0) {
      ++m->refs;
      return m;
    }
  }
  return NULL;
}

// Adds one build to the counters: |counter| and the time since |start|.
static void count_build(dc__cpu_device_t* cpu, uint64_t* counter,
                        uint64_t* time, uint64_t start) {
  pthread_mutex_lock(&cpu->lock);
  *counter += 1;
  if (time != NULL) *time += dc__now_ns() - start;
  pthread_mutex_unlock(&cpu->lock);
}

// Gets the module from memory, else the disk cache, else the compiler.
static dc_status_t get_module(dc__cpu_device_t* cpu, dc_program_build_t* b,
                              const uint8_t key[32], dc__cpu_module_t** out) {
  uint64_t start = dc__now_ns();
  size_t count = b->program->kernel_count;
  uint8_t* modes = dc__arena_alloc(b->tree->arena, count + 1);
  if (modes == NULL) return DC_ERR_OUT_OF_MEMORY;
  pthread_mutex_lock(&cpu->lock);
  *out = find_module(cpu, key);
  pthread_mutex_unlock(&cpu->lock);
  if (*out != NULL) {
    count_build(cpu, &cpu->stats.memory_hits, &cpu->stats.hit_ns, start);
    return DC_OK;
  }
  char path[DC_KCACHE_PATH_SIZE];
  void* meta = NULL;
  size_t meta_size = 0;
  dc_status_t st = dc__kcache_lookup(cpu->kcache, key, path, sizeof(path),
                                     &meta, &meta_size);
  bool hit = st == DC_OK && meta_size == count &&
             load_module(cpu, key, path, meta, count, out) == DC_OK;
  dc_allocator_free(cpu->allocator, meta, meta_size);
  if (hit) {
    count_build(cpu, &cpu->stats.disk_hits, &cpu->stats.hit_ns, start);
  } else {
    dc_status_t built = build_module(cpu, b, key, modes, out);
    count_build(cpu, built == DC_OK ? &cpu->stats.compiles
                                    : &cpu->stats.failures,
                &cpu->stats.compile_ns, start);
    DC_RETURN_IF_ERROR(built);
  }
  pthread_mutex_lock(&cpu->lock);
  dc__cpu_module_t* raced = find_module(cpu, key);
  if (raced == NULL) {
    (*out)->next = cpu->modules;
    cpu->modules = *out;
  }
  pthread_mutex_unlock(&cpu->lock);
  if (raced != NULL) {  // another thread loaded the same key meanwhile
    free_module(cpu, *out);
    *out = raced;
  }
  return DC_OK;
}

static const char* const kModeNames[] = {
    [DC_EXEC_LOOP] = "loop",
    [DC_EXEC_REGIONS] = "regions",
    [DC_EXEC_FIBERS] = "fibers",
};

// The entry point dc_k_<kernel>_<what> of |m|, or NULL. Kernel names have
// no length limit: the symbol is spelled in |arena|.
static void* entry_point(dc__arena_t* arena, const dc__cpu_module_t* m,
                         const dc_kernel_t* k, const char* what) {
  const char* symbol =
      dc__arena_printf(arena, "dc_k_%s_%s", k->info.name, what);
  return symbol ? dlsym(m->handle, symbol) : NULL;
}

// Finds kernel |k|'s entry points in |m|.
static dc_status_t bind_kernel(dc_program_build_t* b, dc__cpu_module_t* m,
                               size_t index) {
  dc_kernel_t* k = &b->program->kernels[index];
  dc__cpu_kernel_t* ck = dc__arena_alloc(&b->program->arena, sizeof(*ck));
  if (ck == NULL) return DC_ERR_OUT_OF_MEMORY;
  *(void**)&ck->run = entry_point(b->tree->arena, m, k, "run");
  *(void**)&ck->scratch_size = entry_point(b->tree->arena, m, k, "scratch_size");
  size_t (*local_size)(void) = NULL;
  *(void**)&local_size = entry_point(b->tree->arena, m, k, "local_size");
  if (ck->run == NULL || ck->scratch_size == NULL || local_size == NULL) {
    return DC_FAIL(DC_ERR_INTERNAL,
                   "the compiled module lacks the entry points of kernel "
                   "'%s'",
                   k->info.name);
  }
  uint8_t mode = m->modes[index];
  ck->mode = (dc__exec_mode_t)mode;
  // The front end sees only the kernel's own barriers; one reached through
  // a helper makes it a barrier kernel too (group sizes depend on it).
  dc_kernel_binding_t binding = {
      .data = ck,
      .execution = kModeNames[mode <= DC_EXEC_FIBERS ? mode : 0],
      .static_local_size = local_size(),
      .reaches_barrier = mode != DC_EXEC_LOOP};
  return dc_kernel_bind(k, &binding);
}

dc_status_t dc__cpu_program_build(dc_device_t* device, dc_program_build_t* b) {
  dc__cpu_device_t* cpu = (dc__cpu_device_t*)device;
  pthread_mutex_lock(&cpu->lock);
  dc_status_t st = prepare_kernels(cpu);
  pthread_mutex_unlock(&cpu->lock);
  DC_RETURN_IF_ERROR(st);
  uint8_t key[32];
  compute_key(cpu, b, key);
  dc__cpu_module_t* m = NULL;
  DC_RETURN_IF_ERROR(get_module(cpu, b, key, &m));
  dc_program_set_backend_data(b->program, m);
  for (size_t i = 0; i < b->program->kernel_count && st == DC_OK; ++i) {
    st = bind_kernel(b, m, i);
  }
  return st;
}

void dc__cpu_program_destroy(dc_device_t* device, dc_program_t* program) {
  dc__cpu_device_t* cpu = (dc__cpu_device_t*)device;
  dc__cpu_module_t* m = program->impl;
  if (m == NULL) return;
  // The module stays loaded for the device's lifetime: it is the in-memory
  // compile cache, and a later program with the same key reuses it.
  pthread_mutex_lock(&cpu->lock);
  --m->refs;
  pthread_mutex_unlock(&cpu->lock);
}

void dc__cpu_program_cache_stats(dc_device_t* device,
                                 dc_program_cache_stats_t* out) {
  dc__cpu_device_t* cpu = (dc__cpu_device_t*)device;
  pthread_mutex_lock(&cpu->lock);
  *out = cpu->stats;
  if (cpu->kcache != NULL) {
    dc__kcache_stats_t k;
    dc__kcache_stats(cpu->kcache, &k);
    out->corrupt = k.corrupt;
  }
  pthread_mutex_unlock(&cpu->lock);
}

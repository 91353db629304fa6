// cpu_program.c: kernels on the CPU device: building (through the compile
// cache) and loading; cpu_dispatch.c runs them.
//
// A program is lowered to C (DC_KERNEL_DIALECT_C, dc/kernel_abi_c.h) and
// compiled by the host's C compiler (cpu_compile.c) into a shared object.
// Its cache key is the SHA-256 of everything that decides the shared
// object: the C kernel ABI, the compiler's fingerprint
// (dc_kernel_dialect_fingerprint: front end, lowering and prelude, taken
// at build time, so a hit needs no lowering), the compiler driver with
// its compile and link flags (a fingerprint of cpu_compile.c), the C
// compiler's identity, the CPU it targets (-march=native), the build options and the
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

#include "cpu_compile.h"
#include "cpu_internal.h"
#include "kcache.h"
#include "log_internal.h"
#include "sha256.h"

// The fingerprint of cpu_compile.c (see source_digest.cmake).
extern const char dc__cpu_compile_digest[];

// How a kernel's work-items run (dc_lowered_kernel_t.execution), as a
// module's cache entry keeps it: one byte per kernel, the index here.
static const char* const kModeNames[] = {"loop", "regions", "fibers"};
enum { MODE_LOOP = 0, MODE_COUNT = 3 };

// A loaded shared object, shared by the programs built from one key.
struct dc__cpu_module_t {
  uint8_t key[32];
  void* handle;
  unsigned refs;  // guarded by the device lock
  size_t kernel_count;
  uint8_t* modes;  // an index of kModeNames per kernel, in source order
  dc__cpu_module_t* next;
};

// A built program's backend data: its module and its kernels' data.
typedef struct cpu_program_t {
  dc__cpu_module_t* module;
  size_t kernel_count;
  dc__cpu_kernel_t kernels[];
} cpu_program_t;


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

static dc_status_t compute_key(const dc__cpu_device_t* cpu,
                               const dc_program_build_t* b, uint8_t key[32]) {
  char abi[64];
  snprintf(abi, sizeof(abi), "dc-cpu-abi-%d bounds=%d", DC_C_ABI_VERSION,
           (int)b->checked);
  const char* lowering = NULL;
  DC_RETURN_IF_ERROR(
      dc_kernel_dialect_fingerprint(DC_KERNEL_DIALECT_C, &lowering));
  dc__sha256_t h;
  dc__sha256_init(&h);
  const char* parts[] = {abi, lowering, dc__cpu_compile_digest,
                         cpu->compiler_id, cpu->base.info.model, b->options};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    dc__sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  }
  uint32_t simd = cpu->base.info.simd_width;
  dc__sha256_update(&h, &simd, sizeof(simd));
  // __FILE__ expands to the program's name, which then shapes the code.
  if (memmem(b->source, b->source_length, "__FILE__", 8) != NULL) {
    dc__sha256_update(&h, b->name, strlen(b->name) + 1);
  }
  dc__sha256_update(&h, b->source, b->source_length);
  dc__sha256_final(&h, key);
  return DC_OK;
}

//===-- Building --------------------------------------------------------===//

static int remove_entry(const char* path, const struct stat* st, int flag,
                        struct FTW* ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

// Lowers the program to C and compiles it into |so_path|; |modes|
// receives each kernel's execution mode (an index of kModeNames).
static dc_status_t compile_program(dc__cpu_device_t* cpu,
                                   dc_program_build_t* b, const char* dir,
                                   const char* so_path, uint8_t* modes) {
  dc_lowered_program_t lowered;
  DC_RETURN_IF_ERROR(
      dc_program_build_lower(b, DC_KERNEL_DIALECT_C, &lowered));
  for (size_t k = 0; k < lowered.kernel_count; ++k) {
    uint8_t mode = MODE_LOOP;
    while (mode < MODE_COUNT &&
           strcmp(kModeNames[mode], lowered.kernels[k].execution) != 0) {
      ++mode;
    }
    modes[k] = mode < MODE_COUNT ? mode : MODE_LOOP;
  }
  dc_context_params_t params;
  dc_context_params(cpu->base.context, &params);
  return dc__cpu_compile(params.c_compiler, dir, lowered.text,
                         lowered.length, b, cpu->allocator, so_path);
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
  size_t count = dc_program_kernel_count(b->program);
  dc_status_t st = compile_program(cpu, b, dir, so_path, modes);
  if (st == DC_OK) {
    // A failed store only costs the next process a compile.
    if (dc__kcache_store(cpu->kcache, key, so_path, modes, count, entry,
                         sizeof(entry)) != DC_OK) {
      DC_LOG(cpu->base.context, DC_LOG_INFO, "kcache", "%s", dc_last_error());
      dc__strlcpy(entry, so_path, sizeof(entry));
    }
    st = load_module(cpu, key, entry, modes, count, out);
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
  size_t count = dc_program_kernel_count(b->program);
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
    uint8_t* modes = dc_allocator_malloc(cpu->allocator, count + 1);
    dc_status_t built =
        modes ? build_module(cpu, b, key, modes, out)
              : DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a build");
    dc_allocator_free(cpu->allocator, modes, count + 1);
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

// The entry point dc_k_<kernel>_<what> of |m|, or NULL. Kernel names have
// no length limit: the symbol is spelled in memory from |allocator|.
static void* entry_point(dc_allocator_t allocator, const dc__cpu_module_t* m,
                         const char* kernel, const char* what) {
  size_t size = strlen(kernel) + strlen(what) + 7;
  char* symbol = dc_allocator_malloc(allocator, size);
  if (symbol == NULL) return NULL;
  snprintf(symbol, size, "dc_k_%s_%s", kernel, what);
  void* entry = dlsym(m->handle, symbol);
  dc_allocator_free(allocator, symbol, size);
  return entry;
}

// Finds kernel |index|'s entry points in |m| and binds them as |ck|.
static dc_status_t bind_kernel(dc__cpu_device_t* cpu, dc_program_build_t* b,
                               dc__cpu_module_t* m, size_t index,
                               dc__cpu_kernel_t* ck) {
  dc_kernel_t* k = NULL;
  DC_RETURN_IF_ERROR(dc_program_kernel(b->program, index, &k));
  dc_kernel_info_t info;
  DC_RETURN_IF_ERROR(dc_kernel_info(k, &info));
  *(void**)&ck->run = entry_point(cpu->allocator, m, info.name, "run");
  *(void**)&ck->scratch_size =
      entry_point(cpu->allocator, m, info.name, "scratch_size");
  size_t (*local_size)(void) = NULL;
  *(void**)&local_size =
      entry_point(cpu->allocator, m, info.name, "local_size");
  if (ck->run == NULL || ck->scratch_size == NULL || local_size == NULL) {
    return DC_FAIL(DC_ERR_INTERNAL,
                   "the compiled module lacks the entry points of kernel "
                   "'%s'",
                   info.name);
  }
  uint8_t mode = m->modes[index] < MODE_COUNT ? m->modes[index] : MODE_LOOP;
  ck->name = info.name;
  ck->uses_barrier = mode != MODE_LOOP;
  ck->uses_grid_sync = info.uses_grid_sync;
  // The front end sees only the kernel's own barriers; one reached through
  // a helper makes it a barrier kernel too (group sizes depend on it).
  dc_kernel_binding_t binding = {.data = ck,
                                 .execution = kModeNames[mode],
                                 .static_local_size = local_size(),
                                 .reaches_barrier = mode != MODE_LOOP};
  return dc_kernel_bind(k, &binding);
}

static size_t program_size(size_t kernel_count) {
  return sizeof(cpu_program_t) + kernel_count * sizeof(dc__cpu_kernel_t);
}

// Drops |prog|'s reference to its module and frees it.
static void free_program(dc__cpu_device_t* cpu, cpu_program_t* prog) {
  // The module stays loaded for the device's lifetime: it is the in-memory
  // compile cache, and a later program with the same key reuses it.
  pthread_mutex_lock(&cpu->lock);
  --prog->module->refs;
  pthread_mutex_unlock(&cpu->lock);
  dc_allocator_free(cpu->allocator, prog, program_size(prog->kernel_count));
}

dc_status_t dc__cpu_program_build(dc_device_t* device, dc_program_build_t* b) {
  dc__cpu_device_t* cpu = (dc__cpu_device_t*)device;
  pthread_mutex_lock(&cpu->lock);
  dc_status_t st = prepare_kernels(cpu);
  pthread_mutex_unlock(&cpu->lock);
  DC_RETURN_IF_ERROR(st);
  uint8_t key[32];
  DC_RETURN_IF_ERROR(compute_key(cpu, b, key));
  dc__cpu_module_t* m = NULL;
  DC_RETURN_IF_ERROR(get_module(cpu, b, key, &m));
  size_t count = dc_program_kernel_count(b->program);
  cpu_program_t* prog =
      dc_allocator_calloc(cpu->allocator, 1, program_size(count));
  if (prog == NULL) {
    pthread_mutex_lock(&cpu->lock);
    --m->refs;
    pthread_mutex_unlock(&cpu->lock);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a program's kernels");
  }
  prog->module = m;
  prog->kernel_count = count;
  for (size_t i = 0; i < count && st == DC_OK; ++i) {
    st = bind_kernel(cpu, b, m, i, &prog->kernels[i]);
  }
  if (st != DC_OK) {
    free_program(cpu, prog);
    return st;
  }
  dc_program_set_backend_data(b->program, prog);
  return DC_OK;
}

void dc__cpu_program_destroy(dc_device_t* device, dc_program_t* program) {
  cpu_program_t* prog = dc_program_backend_data(program);
  if (prog != NULL) free_program((dc__cpu_device_t*)device, prog);
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

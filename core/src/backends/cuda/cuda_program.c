// cuda_program.c: kernels on a CUDA device: building through the compile
// cache, loading modules, and finding each kernel's function.
//
// A program is lowered to CUDA C++ (DC_KERNEL_DIALECT_CUDA_C) and compiled
// by NVRTC (cuda_compile.c). Its cache key is the SHA-256 of everything
// that decides the module: the backend's kernel ABI, the compiler's
// fingerprint (dc_kernel_dialect_fingerprint: front end, lowering and
// prelude, taken at build time, so a hit needs no lowering), that of the
// NVRTC driver (cuda_compile.c), NVRTC's version, the architecture (sm_XY,
// or compute_XY for PTX), the NVRTC options, the build options and the
// source. Entries live in the
// same on-disk cache as the CPU's shared objects (kcache.h): the image
// (cubin or PTX) at offset 0, then metadata saying which it is, how long,
// and which kernels reach a barrier. Loaded modules are shared by every
// program with the same key, so building the same source again in one
// process costs a hash and a lookup; in a new process, a disk hit costs a
// file read and cuModuleLoadData.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_compile.h"
#include "cuda_kernel.h"
#include "kcache.h"
#include "log_internal.h"
#include "sha256.h"

// The fingerprint of cuda_compile.[ch] (see source_digest.cmake).
extern const char dc__cuda_compile_digest[];

// Kernel K's entry points in a module (dc/backend.h,
// DC_KERNEL_DIALECT_CUDA_C), found without lowering on a cache hit: the
// plain one, and the coarsened one some kernels also have.
#define KERNEL_PREFIX "dc_k_"
#define COARSE_PREFIX "dc_k4_"

// A built program's backend data: its module and its kernels' state.
typedef struct cuda_program_t {
  dc__cuda_module_t* module;
  size_t kernel_count;
  dc__cuda_kernel_t kernels[];
} cuda_program_t;

// Changes whenever the way the engine calls generated kernels changes.
#define CUDA_KERNEL_ABI 3

// The metadata of a cache entry, followed by one byte per kernel (1 when
// the kernel reaches a barrier, itself or through a helper).
typedef struct entry_meta_t {
  uint32_t abi;
  uint32_t ptx;  // the image is PTX (else a cubin)
  uint64_t image_size;
} entry_meta_t;

//===-- Device kernel state ---------------------------------------------===//

static void kcache_log(void* user_data, dc_log_level_t level,
                       const char* message) {
  dc_context_log(user_data, level, "kcache", "%s", message);
}

// Finds NVRTC, picks the architecture and opens the cache, once; later
// calls return the outcome of the first. Called with the device lock held.
static dc_status_t prepare_kernels(dc__cuda_device_t* cuda) {
  if (cuda->kernels_ready) {
    if (cuda->kernels_status != DC_OK) {
      dc_set_error(cuda->kernels_status, "%s", cuda->kernels_message);
    }
    return cuda->kernels_status;
  }
  const char* name = cuda->base.info.name;
  const dc__cuda_nvrtc_t* nvrtc = cuda->api->nvrtc;
  dc_status_t st = DC_OK;
  dc__cuda_target_t target = {0};
  if (nvrtc == NULL) {
    st = DC_FAIL(DC_ERR_UNAVAILABLE,
                 "%s: NVRTC (libnvrtc.so.13 or libnvrtc.so.12) cannot be "
                 "loaded, so no kernel can be built; install the CUDA "
                 "toolkit's NVRTC",
                 name);
  } else if ((st = dc__cuda_pick_target(nvrtc, cuda->cc_major, cuda->cc_minor,
                                        &target)) != DC_OK) {
    char why[400];
    dc__strlcpy(why, dc_last_error(), sizeof(why));
    st = DC_FAIL(st, "%s: %s", name, why);
  }
  dc_context_t* ctx = cuda->base.context;
  if (st == DC_OK) {
    dc_context_params_t params;
    dc_context_params(ctx, &params);
    st = dc__kcache_create(cuda->allocator, params.kernel_cache_dir, kcache_log,
                           ctx, &cuda->kcache);
  }
  cuda->target_arch = target.arch;
  cuda->target_ptx = target.ptx;
  cuda->kernels_ready = true;
  cuda->kernels_status = st;
  if (st != DC_OK) {
    dc__strlcpy(cuda->kernels_message, dc_last_error(),
                sizeof(cuda->kernels_message));
    return st;
  }
  int major = 0, minor = 0;
  nvrtc->version(&major, &minor);
  DC_LOG(ctx, DC_LOG_DEBUG, "cuda",
         "%s: kernels compile for %s_%d with NVRTC %d.%d%s; kernel cache: "
         "%s",
         name, target.ptx ? "compute" : "sm", target.arch, major, minor,
         target.ptx ? " (PTX: NVRTC predates the GPU, the driver compiles "
                      "it)"
                    : "",
         dc__kcache_dir(cuda->kcache));
  return DC_OK;
}

static void unload_module(dc__cuda_device_t* cuda, dc__cuda_module_t* m) {
  if (m->module != NULL) cuda->api->cu->module_unload(m->module);
  dc_allocator_free(cuda->allocator, m, sizeof(*m) + m->kernel_count + 1);
}

void dc__cuda_kernels_teardown(dc__cuda_device_t* cuda) {
  dc__cuda_module_t* m = cuda->modules;
  while (m != NULL) {  // every program is gone: these are unused
    dc__cuda_module_t* next = m->next;
    unload_module(cuda, m);
    m = next;
  }
  cuda->modules = NULL;
  dc__kcache_destroy(cuda->kcache);
  cuda->kcache = NULL;
}

static dc_status_t compute_key(const dc__cuda_device_t* cuda,
                               const dc_program_build_t* b, uint8_t key[32]) {
  const char* lowering = NULL;
  DC_RETURN_IF_ERROR(
      dc_kernel_dialect_fingerprint(DC_KERNEL_DIALECT_CUDA_C, &lowering));
  char abi[64], nvrtc[32], options[256];
  int major = 0, minor = 0;
  cuda->api->nvrtc->version(&major, &minor);
  snprintf(abi, sizeof(abi), "dc-cuda-abi-%d bounds=%d", CUDA_KERNEL_ABI,
           (int)b->checked);
  snprintf(nvrtc, sizeof(nvrtc), "nvrtc %d.%d", major, minor);
  dc__cuda_target_t target = {cuda->target_arch, cuda->target_ptx};
  dc__cuda_options_text(&b->flags, &target, options, sizeof(options));
  dc__sha256_t h;
  dc__sha256_init(&h);
  const char* parts[] = {abi,     lowering, dc__cuda_compile_digest,
                         nvrtc,   options,  b->options};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    dc__sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  }
  // __FILE__ expands to the program's name, which then shapes the code.
  if (memmem(b->source, b->source_length, "__FILE__", 8) != NULL) {
    dc__sha256_update(&h, b->name, strlen(b->name) + 1);
  }
  dc__sha256_update(&h, b->source, b->source_length);
  dc__sha256_final(&h, key);
  return DC_OK;
}

//===-- Compiling -------------------------------------------------------===//

// Appends NVRTC's log to the build's (dc__cuda_log_sink_t).
static void log_to_build(void* build, const char* text) {
  dc_program_build_append_log(build, text);
}

// Lowers the program to CUDA C++ and compiles it; |barriers| receives
// each kernel's barrier flag.
static dc_status_t compile_program(dc__cuda_device_t* cuda,
                                   dc_program_build_t* b,
                                   dc__cuda_image_t* image, uint8_t* barriers) {
  dc_lowered_program_t lowered;
  DC_RETURN_IF_ERROR(
      dc_program_build_lower(b, DC_KERNEL_DIALECT_CUDA_C, &lowered));
  for (size_t k = 0; k < lowered.kernel_count; ++k) {
    barriers[k] = lowered.kernels[k].reaches_barrier;
  }
  dc__cuda_target_t target = {cuda->target_arch, cuda->target_ptx};
  dc__cuda_log_sink_t sink = {log_to_build, b};
  return dc__cuda_nvrtc_compile(cuda->api->nvrtc, &lowered, b->name,
                                &b->flags, &target, &sink, cuda->allocator,
                                image);
}

// Stores |image| and its metadata in the cache, through a temporary file
// (the cache copies a file). A failed store only costs the next process
// a compile, so it is logged, not returned.
static void store_image(dc__cuda_device_t* cuda, const uint8_t key[32],
                        const dc__cuda_image_t* image, const void* meta,
                        size_t meta_size) {
  const char* tmp = getenv("TMPDIR");
  char path[600], entry[DC_KCACHE_PATH_SIZE];
  snprintf(path, sizeof(path), "%s/dclua-cuda-" DC_MKTEMP_SUFFIX,
           tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(path);
  bool written =
      fd >= 0 && write(fd, image->data, image->size) == (ssize_t)image->size;
  if (fd >= 0) close(fd);
  dc_status_t st = written ? dc__kcache_store(cuda->kcache, key, path, meta,
                                              meta_size, entry, sizeof(entry))
                           : DC_FAIL(DC_ERR_UNAVAILABLE,
                                     "cannot write a temporary file %s: %s",
                                     path, strerror(errno));
  if (st != DC_OK) {
    DC_LOG(cuda->base.context, DC_LOG_INFO, "kcache", "%s", dc_last_error());
  }
  if (fd >= 0) unlink(path);
}

// Reads the image of the cache entry at |path|: its first
// |meta->image_size| bytes, with a NUL after them (PTX is text).
static bool read_image(dc__cuda_device_t* cuda, const char* path,
                       const entry_meta_t* meta, dc__cuda_image_t* out) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return false;
  char* data = dc_allocator_malloc(cuda->allocator, meta->image_size + 1);
  bool ok =
      data != NULL && fread(data, 1, meta->image_size, f) == meta->image_size;
  fclose(f);
  if (!ok) {
    dc_allocator_free(cuda->allocator, data, meta->image_size + 1);
    return false;
  }
  data[meta->image_size] = '\0';
  *out = (dc__cuda_image_t){.data = data,
                            .size = meta->image_size + 1,
                            .ptx = meta->ptx != 0,
                            .allocator = cuda->allocator};
  return true;
}

//===-- Modules ---------------------------------------------------------===//

// The address of the module global |symbol|. Called with the lock held
// and the context current.
static dc_status_t module_global(dc__cuda_device_t* cuda, CUmodule module,
                                 const char* symbol, const char* program,
                                 CUdeviceptr* out) {
  size_t bytes = 0;
  CUresult r = cuda->api->cu->module_get_global(out, &bytes, module, symbol);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuModuleGetGlobal(%s) of program '%s'",
                           symbol, program);
  }
  return DC_OK;
}

// Loads |image| as a module for |key| whose kernels' barrier flags are
// |barriers|.
static dc_status_t load_module(dc__cuda_device_t* cuda, dc_program_build_t* b,
                               const uint8_t key[32],
                               const dc__cuda_image_t* image,
                               const uint8_t* barriers,
                               dc__cuda_module_t** out) {
  size_t count = dc_program_kernel_count(b->program);
  dc__cuda_module_t* m =
      dc_allocator_calloc(cuda->allocator, 1, sizeof(*m) + count + 1);
  if (m == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a kernel module");
  }
  memcpy(m->key, key, 32);
  m->refs = 1;
  m->kernel_count = count;
  m->barriers = (uint8_t*)(m + 1);
  memcpy(m->barriers, barriers, count);
  bool grid_sync = false;
  for (size_t k = 0; k < count; ++k) {
    dc_kernel_t* kernel = NULL;
    dc_kernel_info_t info;
    if (dc_program_kernel(b->program, k, &kernel) == DC_OK &&
        dc_kernel_info(kernel, &info) == DC_OK) {
      grid_sync |= info.uses_grid_sync;
    }
  }
  pthread_mutex_lock(&cuda->lock);
  dc_status_t st = dc__cuda_enter(cuda);
  CUresult r = CUDA_SUCCESS;
  if (st == DC_OK) r = cuda->api->cu->module_load_data(&m->module, image->data);
  if (st == DC_OK && r != CUDA_SUCCESS) {
    st = dc__cuda_failed(cuda, r, "cuModuleLoadData of program '%s' (%s)",
                         b->name, image->ptx ? "PTX" : "cubin");
  }
  if (st == DC_OK && grid_sync) {
    st = module_global(cuda, m->module, "dc__grid", b->name, &m->grid);
  }
  if (st == DC_OK && b->checked) {
    st = module_global(cuda, m->module, "dc__fault", b->name,
                       &m->fault);
  }
  if (st == DC_OK && b->checked) {
    st = module_global(cuda, m->module, "dc__stop", b->name, &m->stop);
  }
  if (st != DC_OK) {
    unload_module(cuda, m);
    m = NULL;
  }
  *out = m;
  return dc__cuda_leave(cuda, st);
}

// Finds a loaded module for |key| and takes a reference to it. Called
// with the lock held.
static dc__cuda_module_t* find_module(dc__cuda_device_t* cuda,
                                      const uint8_t key[32]) {
  for (dc__cuda_module_t* m = cuda->modules; m != NULL; m = m->next) {
    if (memcmp(m->key, key, 32) == 0) {
      ++m->refs;
      return m;
    }
  }
  return NULL;
}

// Adds one build to the counters: |counter| and the time since |start|.
static void count_build(dc__cuda_device_t* cuda, uint64_t* counter,
                        uint64_t* time, uint64_t start) {
  pthread_mutex_lock(&cuda->lock);
  *counter += 1;
  if (time != NULL) *time += dc__now_ns() - start;
  pthread_mutex_unlock(&cuda->lock);
}

// The image from the disk cache, if it holds |key| for this program.
static bool cached_image(dc__cuda_device_t* cuda, const uint8_t key[32],
                         size_t kernel_count, dc__cuda_image_t* image,
                         uint8_t* barriers) {
  char path[DC_KCACHE_PATH_SIZE];
  void* meta = NULL;
  size_t meta_size = 0;
  if (dc__kcache_lookup(cuda->kcache, key, path, sizeof(path), &meta,
                        &meta_size) != DC_OK) {
    return false;
  }
  entry_meta_t header;
  bool hit = meta_size == sizeof(header) + kernel_count;
  if (hit) {
    memcpy(&header, meta, sizeof(header));
    memcpy(barriers, (char*)meta + sizeof(header), kernel_count);
    hit =
        header.abi == CUDA_KERNEL_ABI && read_image(cuda, path, &header, image);
  }
  dc_allocator_free(cuda->allocator, meta, meta_size);
  return hit;
}

// Compiles the program and stores the result in the cache.
static dc_status_t build_image(dc__cuda_device_t* cuda, dc_program_build_t* b,
                               const uint8_t key[32], dc__cuda_image_t* image,
                               uint8_t* barriers) {
  size_t count = dc_program_kernel_count(b->program);
  DC_RETURN_IF_ERROR(compile_program(cuda, b, image, barriers));
  entry_meta_t header = {
      .abi = CUDA_KERNEL_ABI, .ptx = image->ptx, .image_size = image->size};
  size_t meta_size = sizeof(header) + count;
  char* meta = dc_allocator_malloc(cuda->allocator, meta_size + 1);
  if (meta == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a cache entry");
  }
  memcpy(meta, &header, sizeof(header));
  memcpy(meta + sizeof(header), barriers, count);
  store_image(cuda, key, image, meta, meta_size);
  dc_allocator_free(cuda->allocator, meta, meta_size + 1);
  return DC_OK;
}

// Gets the module from memory, else the disk cache, else NVRTC.
static dc_status_t get_module(dc__cuda_device_t* cuda, dc_program_build_t* b,
                              const uint8_t key[32], dc__cuda_module_t** out) {
  uint64_t start = dc__now_ns();
  size_t count = dc_program_kernel_count(b->program);
  pthread_mutex_lock(&cuda->lock);
  *out = find_module(cuda, key);
  pthread_mutex_unlock(&cuda->lock);
  if (*out != NULL) {
    count_build(cuda, &cuda->stats.memory_hits, &cuda->stats.hit_ns, start);
    return DC_OK;
  }
  uint8_t* barriers = dc_allocator_calloc(cuda->allocator, 1, count + 1);
  if (barriers == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a build");
  }
  dc__cuda_image_t image = {0};
  bool hit = cached_image(cuda, key, count, &image, barriers);
  dc_status_t st = hit ? DC_OK : build_image(cuda, b, key, &image, barriers);
  if (st == DC_OK) st = load_module(cuda, b, key, &image, barriers, out);
  dc__cuda_image_free(&image);
  dc_allocator_free(cuda->allocator, barriers, count + 1);
  if (hit && st == DC_OK) {
    count_build(cuda, &cuda->stats.disk_hits, &cuda->stats.hit_ns, start);
  } else if (!hit) {
    count_build(cuda,
                st == DC_OK ? &cuda->stats.compiles : &cuda->stats.failures,
                &cuda->stats.compile_ns, start);
  }
  DC_RETURN_IF_ERROR(st);
  pthread_mutex_lock(&cuda->lock);
  dc__cuda_module_t* raced = find_module(cuda, key);
  if (raced == NULL) {
    (*out)->next = cuda->modules;
    cuda->modules = *out;
  }
  pthread_mutex_unlock(&cuda->lock);
  if (raced != NULL) {  // another thread loaded the same key meanwhile
    pthread_mutex_lock(&cuda->lock);
    (void)dc__cuda_enter(cuda);  // unloading needs the context current
    unload_module(cuda, *out);
    pthread_mutex_unlock(&cuda->lock);
    *out = raced;
  }
  return DC_OK;
}

//===-- Kernels ---------------------------------------------------------===//

static dc_status_t function_attribute(dc__cuda_device_t* cuda, CUfunction f,
                                      int attribute, const char* name,
                                      const char* kernel, int* out) {
  CUresult r = cuda->api->cu->func_get_attribute(out, attribute, f);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuFuncGetAttribute(%s) of kernel '%s'",
                           name, kernel);
  }
  return DC_OK;
}

// Finds entry point |prefix|K of kernel K, |name|, in |m|: *out is NULL
// when the module has none and |optional| says that may be.
static dc_status_t find_entry(dc__cuda_device_t* cuda, dc_program_build_t* b,
                              dc__cuda_module_t* m, const char* prefix,
                              const char* name, bool optional,
                              CUfunction* out) {
  size_t size = strlen(prefix) + strlen(name) + 1;
  char* entry = dc_allocator_malloc(cuda->allocator, size);
  if (entry == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a kernel's name");
  }
  snprintf(entry, size, "%s%s", prefix, name);
  *out = NULL;
  CUresult r = cuda->api->cu->module_get_function(out, m->module, entry);
  dc_status_t st = DC_OK;
  if (r == CUDA_ERROR_NOT_FOUND && optional) {
    *out = NULL;
  } else if (r != CUDA_SUCCESS) {
    st = dc__cuda_failed(cuda, r, "cuModuleGetFunction(%s) of program '%s'",
                         entry, b->name);
  }
  dc_allocator_free(cuda->allocator, entry, size);
  return st;
}

// The kernel's coarsened entry, unless the build opted out or it would
// hold fewer threads on an SM than the plain entry (its registers for
// several work-items): coarsening trades threads for work per thread, and
// only pays while the SM stays as full.
static dc_status_t bind_coarse(dc__cuda_device_t* cuda, dc_program_build_t* b,
                               dc__cuda_module_t* m, const char* name,
                               dc__cuda_kernel_t* ck) {
  ck->coarse = NULL;
  if (b->flags.no_coarsening) return DC_OK;
  CUfunction coarse = NULL;
  DC_RETURN_IF_ERROR(
      find_entry(cuda, b, m, COARSE_PREFIX, name, true, &coarse));
  if (coarse == NULL) return DC_OK;
  int max_threads = 0;
  if (cuda->api->cu->func_get_attribute(
          &max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, coarse) !=
          CUDA_SUCCESS ||
      max_threads < ck->max_threads) {
    return DC_OK;
  }
  int block = ck->preferred_block;
  int plain = dc__cuda_resident_blocks(cuda, ck->function, block, 0);
  if (plain > 0 && dc__cuda_resident_blocks(cuda, coarse, block, 0) >= plain) {
    ck->coarse = coarse;
  }
  return DC_OK;
}

// Finds kernel |index|'s functions in |m| and reads what launches need
// into |ck|. Called with the lock held and the context current.
static dc_status_t bind_kernel(dc__cuda_device_t* cuda, dc_program_build_t* b,
                               dc__cuda_module_t* m, size_t index,
                               dc__cuda_kernel_t* ck) {
  dc_kernel_t* k = NULL;
  DC_RETURN_IF_ERROR(dc_program_kernel(b->program, index, &k));
  dc_kernel_info_t info;
  DC_RETURN_IF_ERROR(dc_kernel_info(k, &info));
  DC_RETURN_IF_ERROR(find_entry(cuda, b, m, KERNEL_PREFIX, info.name, false,
                                &ck->function));
  int shared = 0;
  DC_RETURN_IF_ERROR(function_attribute(
      cuda, ck->function, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      "MAX_THREADS_PER_BLOCK", info.name, &ck->max_threads));
  DC_RETURN_IF_ERROR(function_attribute(
      cuda, ck->function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
      "SHARED_SIZE_BYTES", info.name, &shared));
  DC_RETURN_IF_ERROR(dc__cuda_best_block(cuda, ck->function, 0,
                                         &ck->preferred_block, &ck->min_grid));
  DC_RETURN_IF_ERROR(bind_coarse(cuda, b, m, info.name, ck));
  ck->module = m;
  ck->static_shared = (size_t)shared;
  ck->checked = b->checked;
  ck->name = info.name;
  ck->arg_count = info.arg_count;
  ck->uses_grid_sync = info.uses_grid_sync;
  for (size_t i = 0; i < info.arg_count; ++i) {
    ck->arg_kinds[i] = (uint8_t)dc_kernel_arg_info(k, i)->kind;
  }
  // The front end sees only the kernel's own barriers; one reached
  // through a helper makes it a barrier kernel too.
  dc_kernel_binding_t binding = {.data = ck,
                                 .execution = ck->coarse != NULL
                                                  ? "cuda-coarsened"
                                                  : "cuda",
                                 .static_local_size = ck->static_shared,
                                 .reaches_barrier = m->barriers[index] != 0,
                                 .max_group_size = (size_t)ck->max_threads};
  return dc_kernel_bind(k, &binding);
}

static size_t program_size(size_t kernel_count) {
  return sizeof(cuda_program_t) + kernel_count * sizeof(dc__cuda_kernel_t);
}

// Drops |prog|'s reference to its module and frees it.
static void free_program(dc__cuda_device_t* cuda, cuda_program_t* prog) {
  // The module stays loaded for the device's lifetime: it is the
  // in-memory compile cache, and a later program with the same key
  // reuses it.
  pthread_mutex_lock(&cuda->lock);
  --prog->module->refs;
  pthread_mutex_unlock(&cuda->lock);
  dc_allocator_free(cuda->allocator, prog, program_size(prog->kernel_count));
}

dc_status_t dc__cuda_program_build(dc_device_t* device, dc_program_build_t* b) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  pthread_mutex_lock(&cuda->lock);
  dc_status_t st = prepare_kernels(cuda);
  pthread_mutex_unlock(&cuda->lock);
  DC_RETURN_IF_ERROR(st);
  uint8_t key[32];
  DC_RETURN_IF_ERROR(compute_key(cuda, b, key));
  dc__cuda_module_t* m = NULL;
  DC_RETURN_IF_ERROR(get_module(cuda, b, key, &m));
  size_t count = dc_program_kernel_count(b->program);
  cuda_program_t* prog =
      dc_allocator_calloc(cuda->allocator, 1, program_size(count));
  if (prog == NULL) {
    pthread_mutex_lock(&cuda->lock);
    --m->refs;
    pthread_mutex_unlock(&cuda->lock);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a program's kernels");
  }
  prog->module = m;
  prog->kernel_count = count;
  pthread_mutex_lock(&cuda->lock);
  st = dc__cuda_enter(cuda);
  for (size_t i = 0; i < count && st == DC_OK; ++i) {
    st = bind_kernel(cuda, b, m, i, &prog->kernels[i]);
  }
  st = dc__cuda_leave(cuda, st);
  if (st != DC_OK) {
    free_program(cuda, prog);
    return st;
  }
  dc_program_set_backend_data(b->program, prog);
  return DC_OK;
}

void dc__cuda_program_destroy(dc_device_t* device, dc_program_t* program) {
  cuda_program_t* prog = dc_program_backend_data(program);
  if (prog != NULL) free_program((dc__cuda_device_t*)device, prog);
}

void dc__cuda_program_cache_stats(dc_device_t* device,
                                  dc_program_cache_stats_t* out) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  pthread_mutex_lock(&cuda->lock);
  *out = cuda->stats;
  if (cuda->kcache != NULL) {
    dc__kcache_stats_t k;
    dc__kcache_stats(cuda->kcache, &k);
    out->corrupt = k.corrupt;
  }
  pthread_mutex_unlock(&cuda->lock);
}

// opencl_program.c: kernels on an OpenCL device: building through the
// in-memory compile cache, and finding each kernel's cl_kernel.
//
// A program's cache key is the SHA-256 of everything that decides the
// built cl_program: the backend's kernel ABI, the fingerprint of the
// front end, code generator and prelude sources (taken at build time),
// the device and its driver, the compiler options, the checked flag and
// the source. Built programs are shared by every program with the same
// key for the device's lifetime, so building the same source again in
// one process costs a hash and a lookup. (Drivers keep caches of their
// own across processes: pocl's kernel cache, NVIDIA's compute cache.)
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "log_internal.h"
#include "opencl_codegen.h"
#include "opencl_compile.h"
#include "opencl_kernel.h"
#include "program_internal.h"
#include "sha256.h"

extern const char dc__opencl_generator_digest[];  // see source_digest.cmake

// Changes whenever the way the engine calls generated kernels changes.
#define OPENCL_KERNEL_ABI 1

//===-- Device kernel state ---------------------------------------------===//

static void free_module(dc__opencl_device_t* ocl, dc__opencl_module_t* m) {
  if (m->program != NULL) ocl->cl->release_program(m->program);
  dc_allocator_free(ocl->allocator, m, sizeof(*m) + m->kernel_count + 1);
}

static void free_checked(dc__opencl_device_t* ocl, dc__opencl_checked_t* c) {
  if (c->stop_word != NULL) {
    ocl->cl->enqueue_unmap_mem_object(ocl->queue, c->control,
                                      (void*)c->stop_word, 0, NULL, NULL);
    ocl->cl->finish(ocl->queue);
  }
  if (c->control != NULL) ocl->cl->release_mem_object(c->control);
  if (c->state != NULL) ocl->cl->release_mem_object(c->state);
  dc_allocator_free(ocl->allocator, c, sizeof(*c));
}

void dc__opencl_kernels_teardown(dc__opencl_device_t* ocl) {
  dc__opencl_module_t* m = ocl->modules;
  while (m != NULL) {  // every program is gone: these are unused
    dc__opencl_module_t* next = m->next;
    free_module(ocl, m);
    m = next;
  }
  ocl->modules = NULL;
  dc__opencl_checked_t* c = ocl->checked_free;
  while (c != NULL) {
    dc__opencl_checked_t* next = c->next;
    free_checked(ocl, c);
    c = next;
  }
  ocl->checked_free = NULL;
}

static void compute_key(const dc__opencl_device_t* ocl,
                        const dc_program_build_t* b, const char* options,
                        uint8_t key[32]) {
  char abi[64];
  snprintf(abi, sizeof(abi), "dc-opencl-abi-%d bounds=%d", OPENCL_KERNEL_ABI,
           (int)b->checked);
  dc__sha256_t h;
  dc__sha256_init(&h);
  const char* parts[] = {abi,          dc__opencl_generator_digest,
                         ocl->base.info.model, ocl->version,
                         ocl->driver,  options,
                         b->options_text};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    dc__sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  }
  // __FILE__ expands to the program's name, which then shapes the code.
  if (memmem(b->source, b->source_length, "__FILE__", 8) != NULL) {
    dc__sha256_update(&h, b->program->name, strlen(b->program->name) + 1);
  }
  dc__sha256_update(&h, b->source, b->source_length);
  dc__sha256_final(&h, key);
}

static void count_build(dc__opencl_device_t* ocl, uint64_t* counter,
                        uint64_t* ns, uint64_t start) {
  pthread_mutex_lock(&ocl->lock);
  ++*counter;
  *ns += dc__now_ns() - start;
  pthread_mutex_unlock(&ocl->lock);
}

// Finds a built module for |key| and takes a reference to it. Called
// with the lock held.
static dc__opencl_module_t* find_module(dc__opencl_device_t* ocl,
                                        const uint8_t key[32]) {
  for (dc__opencl_module_t* m = ocl->modules; m != NULL; m = m->next) {
    if (memcmp(m->key, key, 32) == 0) {
      ++m->refs;
      return m;
    }
  }
  return NULL;
}

// Generates OpenCL C for the program and builds it into a new module.
static dc_status_t build_module(dc__opencl_device_t* ocl,
                                dc_program_build_t* b, const uint8_t key[32],
                                const char* options,
                                dc__opencl_module_t** out) {
  dc__opencl_codegen_options_t cg = {.file = b->diag->file,
                                     .checked = b->checked};
  dc__opencl_translation_t t;
  DC_RETURN_IF_ERROR(dc__opencl_codegen(b->arena, b->ast, &cg, b->diag, &t));
  size_t count = b->program->kernel_count;
  dc__opencl_module_t* m =
      dc_allocator_calloc(ocl->allocator, 1, sizeof(*m) + count + 1);
  if (m == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a kernel module");
  }
  memcpy(m->key, key, 32);
  m->refs = 1;
  m->kernel_count = count;
  m->scratch_words = t.scratch_words;
  m->barriers = (uint8_t*)(m + 1);
  for (size_t k = 0; k < count; ++k) {
    m->barriers[k] = t.reaches_barrier[b->program->kernels[k].function];
  }
  char path[1024];
  if (!dc__opencl_dump_source(b->program->name, t.source, t.length, path,
                              sizeof(path))) {
    DC_LOG(ocl->base.context, DC_LOG_WARN, "opencl",
           "DC_KERNEL_DUMP: cannot write %s", path);
  }
  dc_status_t st = dc__opencl_build_source(ocl, t.source, t.length, options,
                                           b->diag, &m->program);
  if (st != DC_OK) {
    free_module(ocl, m);
    return st;
  }
  *out = m;
  return DC_OK;
}

// Gets the module from memory, else builds it.
static dc_status_t get_module(dc__opencl_device_t* ocl, dc_program_build_t* b,
                              const uint8_t key[32], const char* options,
                              dc__opencl_module_t** out) {
  uint64_t start = dc__now_ns();
  pthread_mutex_lock(&ocl->lock);
  *out = find_module(ocl, key);
  pthread_mutex_unlock(&ocl->lock);
  if (*out != NULL) {
    count_build(ocl, &ocl->stats.memory_hits, &ocl->stats.hit_ns, start);
    return DC_OK;
  }
  dc_status_t st = build_module(ocl, b, key, options, out);
  count_build(ocl, st == DC_OK ? &ocl->stats.compiles : &ocl->stats.failures,
              &ocl->stats.compile_ns, start);
  DC_RETURN_IF_ERROR(st);
  pthread_mutex_lock(&ocl->lock);
  dc__opencl_module_t* raced = find_module(ocl, key);
  if (raced == NULL) {
    (*out)->next = ocl->modules;
    ocl->modules = *out;
  }
  pthread_mutex_unlock(&ocl->lock);
  if (raced != NULL) {  // another thread built the same key meanwhile
    free_module(ocl, *out);
    *out = raced;
  }
  return DC_OK;
}

//===-- Kernels ---------------------------------------------------------===//

static dc_status_t group_info(dc__opencl_device_t* ocl, cl_kernel kernel,
                              cl_kernel_work_group_info what,
                              const char* name, const char* kernel_name,
                              void* out, size_t size) {
  cl_int err = ocl->cl->get_kernel_work_group_info(kernel, ocl->device, what,
                                                   size, out, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "clGetKernelWorkGroupInfo(%s) of "
                             "kernel '%s'", name, kernel_name);
  }
  return DC_OK;
}

static bool has_local_arg(const dc_kernel_t* k) {
  for (size_t i = 0; i < k->info.arg_count; ++i) {
    if (k->args[i].kind == DC_ARG_LOCAL) return true;
  }
  return false;
}

// Creates kernel |index|'s cl_kernel and reads what launches need.
static dc_status_t bind_kernel(dc__opencl_device_t* ocl, dc_program_build_t* b,
                               dc__opencl_module_t* m, size_t index) {
  dc_kernel_t* k = &b->program->kernels[index];
  dc__opencl_kernel_t* ok = dc__arena_alloc(&b->program->arena, sizeof(*ok));
  if (ok == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(ok, 0, sizeof(*ok));
  char* entry = dc__arena_printf(b->arena, "%s%s", DC_OPENCL_KERNEL_PREFIX,
                                 k->info.name);
  if (entry == NULL) return DC_ERR_OUT_OF_MEMORY;
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = ocl->cl->create_kernel(m->program, entry, &err);
  if (kernel == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateKernel(%s) of program '%s'",
                             entry, b->program->name);
  }
  cl_ulong local = 0;
  dc_status_t st = group_info(ocl, kernel, CL_KERNEL_WORK_GROUP_SIZE,
                              "WORK_GROUP_SIZE", k->info.name, &ok->max_group,
                              sizeof(ok->max_group));
  if (st == DC_OK) {
    st = group_info(ocl, kernel, CL_KERNEL_LOCAL_MEM_SIZE, "LOCAL_MEM_SIZE",
                    k->info.name, &local, sizeof(local));
  }
  if (st == DC_OK) {
    st = group_info(ocl, kernel, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                    "PREFERRED_WORK_GROUP_SIZE_MULTIPLE", k->info.name,
                    &ok->group_multiple, sizeof(ok->group_multiple));
  }
  if (st != DC_OK) {
    ocl->cl->release_kernel(kernel);
    return st;
  }
  ok->kernel = kernel;
  pthread_mutex_init(&ok->args_lock, NULL);
  ok->module = m;
  // Checked kernels declare their __local scratch, which is the
  // backend's, not the program's: left out of the kernel's own size.
  size_t scratch = b->checked ? (size_t)m->scratch_words * 8 : 0;
  ok->static_local = (size_t)local > scratch ? (size_t)local - scratch : 0;
  ok->local_block = has_local_arg(k);
  ok->checked = b->checked;
  k->info.static_local_size = ok->static_local;
  k->info.execution = "opencl";
  // The front end sees only the kernel's own barriers; one reached
  // through a helper makes it a barrier kernel too.
  k->info.uses_barrier |= m->barriers[index] != 0;
  k->impl = ok;
  return DC_OK;
}

dc_status_t dc__opencl_program_build(dc_device_t* device,
                                     dc_program_build_t* b) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  char options[256];
  dc__opencl_options_text(b->options, options, sizeof(options));
  uint8_t key[32];
  compute_key(ocl, b, options, key);
  dc__opencl_module_t* m = NULL;
  DC_RETURN_IF_ERROR(get_module(ocl, b, key, options, &m));
  b->program->impl = m;
  dc_status_t st = DC_OK;
  for (size_t i = 0; i < b->program->kernel_count && st == DC_OK; ++i) {
    st = bind_kernel(ocl, b, m, i);
  }
  return st;
}

void dc__opencl_program_destroy(dc_device_t* device, dc_program_t* program) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  dc__opencl_module_t* m = program->impl;
  for (size_t i = 0; i < program->kernel_count; ++i) {
    dc__opencl_kernel_t* ok = program->kernels[i].impl;
    if (ok == NULL || ok->kernel == NULL) continue;
    ocl->cl->release_kernel(ok->kernel);
    pthread_mutex_destroy(&ok->args_lock);
    program->kernels[i].impl = NULL;
  }
  if (m == NULL) return;
  // The module stays built for the device's lifetime: it is the
  // in-memory compile cache, and a later program with the same key
  // reuses it.
  pthread_mutex_lock(&ocl->lock);
  --m->refs;
  pthread_mutex_unlock(&ocl->lock);
}

void dc__opencl_program_cache_stats(dc_device_t* device,
                                    dc_program_cache_stats_t* out) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  pthread_mutex_lock(&ocl->lock);
  *out = ocl->stats;
  pthread_mutex_unlock(&ocl->lock);
}

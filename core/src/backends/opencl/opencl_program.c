// opencl_program.c: kernels on an OpenCL device: the program lowered to
// OpenCL C (dc_program_build_lower), built through the in-memory compile
// cache, and each kernel's cl_kernel found. It reads the build through
// dc/backend.h alone, as a backend outside the tree would.
//
// A program's cache key is the SHA-256 of everything that decides the
// built cl_program: the backend's kernel ABI, the device and its driver,
// the compiler options and the lowered text (which holds the program's
// name in its #line directives, and checked mode). Built programs are
// shared by every program with the same key for the device's lifetime,
// so building the same source again in one process costs the front end,
// a hash and a lookup. (Drivers keep caches of their own across
// processes: pocl's kernel cache, NVIDIA's compute cache.)
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "log_internal.h"
#include "opencl_compile.h"
#include "opencl_kernel.h"
#include "sha256.h"

// Changes whenever the way the engine calls generated kernels changes.
#define OPENCL_KERNEL_ABI 2

//===-- Device kernel state ---------------------------------------------===//

static void free_module(dc__opencl_device_t* ocl, dc__opencl_module_t* m) {
  if (m->program != NULL) ocl->cl->release_program(m->program);
  dc_allocator_free(ocl->allocator, m, sizeof(*m));
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

static void compute_key(const dc__opencl_device_t* ocl, const char* options,
                        const dc_lowered_program_t* lowered, uint8_t key[32]) {
  char abi[32];
  snprintf(abi, sizeof(abi), "dc-opencl-abi-%d", OPENCL_KERNEL_ABI);
  dc__sha256_t h;
  dc__sha256_init(&h);
  const char* parts[] = {abi, ocl->base.info.model, ocl->version, ocl->driver,
                         options};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    dc__sha256_update(&h, parts[i], strlen(parts[i]) + 1);
  }
  dc__sha256_update(&h, lowered->text, lowered->length);
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

// Builds the lowered program into a new module.
static dc_status_t build_module(dc__opencl_device_t* ocl,
                                const dc_program_build_t* b,
                                const dc_lowered_program_t* lowered,
                                const uint8_t key[32], const char* options,
                                dc__opencl_module_t** out) {
  dc__opencl_module_t* m = dc_allocator_calloc(ocl->allocator, 1, sizeof(*m));
  if (m == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a kernel module");
  }
  memcpy(m->key, key, 32);
  m->refs = 1;
  m->state_size = lowered->checked_state_size;
  dc_status_t st = dc__opencl_build_source(ocl, b->name, lowered->text,
                                           lowered->length, options,
                                           &m->program);
  if (st != DC_OK) {
    free_module(ocl, m);
    return st;
  }
  *out = m;
  return DC_OK;
}

// Gets the module from memory, else builds it.
static dc_status_t get_module(dc__opencl_device_t* ocl,
                              const dc_program_build_t* b,
                              const dc_lowered_program_t* lowered,
                              const char* options, dc__opencl_module_t** out) {
  uint64_t start = dc__now_ns();
  uint8_t key[32];
  compute_key(ocl, options, lowered, key);
  pthread_mutex_lock(&ocl->lock);
  *out = find_module(ocl, key);
  pthread_mutex_unlock(&ocl->lock);
  if (*out != NULL) {
    count_build(ocl, &ocl->stats.memory_hits, &ocl->stats.hit_ns, start);
    return DC_OK;
  }
  dc_status_t st = build_module(ocl, b, lowered, key, options, out);
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

static bool has_local_arg(const dc_kernel_t* k, size_t arg_count) {
  for (size_t i = 0; i < arg_count; ++i) {
    if (dc_kernel_arg_info(k, i)->kind == DC_ARG_LOCAL) return true;
  }
  return false;
}

// Creates kernel |index|'s cl_kernel, reads what launches need and binds
// it.
static dc_status_t bind_kernel(dc__opencl_device_t* ocl,
                               const dc_program_build_t* b,
                               const dc_lowered_program_t* lowered,
                               dc__opencl_module_t* m, size_t index) {
  dc_kernel_t* k = NULL;
  DC_RETURN_IF_ERROR(dc_program_kernel(b->program, index, &k));
  dc_kernel_info_t info;
  DC_RETURN_IF_ERROR(dc_kernel_info(k, &info));
  const char* entry = lowered->kernels[index].entry;
  cl_int err = CL_SUCCESS;
  cl_kernel kernel = ocl->cl->create_kernel(m->program, entry, &err);
  if (kernel == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateKernel(%s) of program '%s'",
                             entry, b->name);
  }
  dc__opencl_kernel_t* ok = dc_allocator_calloc(ocl->allocator, 1, sizeof(*ok));
  cl_ulong local = 0;
  dc_status_t st =
      ok == NULL ? DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a kernel")
                 : group_info(ocl, kernel, CL_KERNEL_WORK_GROUP_SIZE,
                              "WORK_GROUP_SIZE", info.name, &ok->max_group,
                              sizeof(ok->max_group));
  if (st == DC_OK) {
    st = group_info(ocl, kernel, CL_KERNEL_LOCAL_MEM_SIZE, "LOCAL_MEM_SIZE",
                    info.name, &local, sizeof(local));
  }
  if (st == DC_OK) {
    st = group_info(ocl, kernel, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                    "PREFERRED_WORK_GROUP_SIZE_MULTIPLE", info.name,
                    &ok->group_multiple, sizeof(ok->group_multiple));
  }
  if (st != DC_OK) {
    ocl->cl->release_kernel(kernel);
    dc_allocator_free(ocl->allocator, ok, sizeof(*ok));
    return st;
  }
  ok->kernel = kernel;
  pthread_mutex_init(&ok->args_lock, NULL);
  ok->module = m;
  // Checked kernels declare their __local scratch, which is the
  // backend's, not the program's: left out of the kernel's own size.
  // Some drivers (NVIDIA's) report 0 before the first launch: the
  // lowering's count stands in.
  size_t scratch = lowered->checked_local_scratch;
  ok->static_local = (size_t)local > scratch ? (size_t)local - scratch : 0;
  if (ok->static_local < lowered->kernels[index].local_size) {
    ok->static_local = lowered->kernels[index].local_size;
  }
  ok->arg_count = info.arg_count;
  ok->local_block = has_local_arg(k, info.arg_count);
  ok->checked = b->checked;
  // The front end sees only the kernel's own barriers; one reached
  // through a helper makes it a barrier kernel too.
  dc_kernel_binding_t binding = {
      .data = ok,
      .execution = "opencl",
      .static_local_size = ok->static_local,
      .reaches_barrier = lowered->kernels[index].reaches_barrier,
      .max_group_size = ok->max_group};
  return dc_kernel_bind(k, &binding);
}

static void unbind_kernel(dc__opencl_device_t* ocl, dc_kernel_t* k) {
  dc__opencl_kernel_t* ok = dc_kernel_backend_data(k);
  if (ok == NULL) return;
  ocl->cl->release_kernel(ok->kernel);
  pthread_mutex_destroy(&ok->args_lock);
  dc_allocator_free(ocl->allocator, ok, sizeof(*ok));
}

dc_status_t dc__opencl_program_build(dc_device_t* device,
                                     dc_program_build_t* b) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  dc_lowered_program_t lowered;
  DC_RETURN_IF_ERROR(
      dc_program_build_lower(b, DC_KERNEL_DIALECT_OPENCL_C, &lowered));
  char options[256];
  dc__opencl_options_text(&b->flags, ocl->rounded_div_sqrt, options,
                          sizeof(options));
  dc__opencl_module_t* m = NULL;
  DC_RETURN_IF_ERROR(get_module(ocl, b, &lowered, options, &m));
  dc_program_set_backend_data(b->program, m);
  dc_status_t st = DC_OK;
  for (size_t i = 0; i < lowered.kernel_count && st == DC_OK; ++i) {
    st = bind_kernel(ocl, b, &lowered, m, i);
  }
  // A failed build is freed without program_destroy: undo it here.
  if (st != DC_OK) dc__opencl_program_destroy(device, b->program);
  return st;
}

void dc__opencl_program_destroy(dc_device_t* device, dc_program_t* program) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  dc__opencl_module_t* m = dc_program_backend_data(program);
  size_t count = dc_program_kernel_count(program);
  for (size_t i = 0; i < count; ++i) {
    dc_kernel_t* k = NULL;
    if (dc_program_kernel(program, i, &k) == DC_OK) unbind_kernel(ocl, k);
  }
  if (m == NULL) return;
  dc_program_set_backend_data(program, NULL);
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

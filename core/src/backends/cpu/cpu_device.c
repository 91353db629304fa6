// cpu_device.c: the CPU device: host memory and the context's worker pool.
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "context_internal.h"
#include "cpu_internal.h"

static void cpu_destroy(dc_device_t* device) {
  dc__cpu_device_t* cpu = (dc__cpu_device_t*)device;
  dc__cpu_kernels_teardown(cpu);
  pthread_mutex_destroy(&cpu->lock);
  dc_allocator_free(cpu->allocator, cpu, sizeof(*cpu));
}

// Every storage mode is host memory here. Large blocks are page aligned so
// that they start on a fresh page and vector loads never split one.
static dc_status_t cpu_allocate(dc_device_t* device, size_t size,
                                dc_storage_mode_t mode, void** out_memory) {
  (void)device;
  (void)mode;
  size_t alignment = size >= ((size_t)64 << 10) ? 4096 : 64;
  void* memory = NULL;
  if (posix_memalign(&memory, alignment, size) != 0) {
    *out_memory = NULL;
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "cpu: the system refused %zu bytes",
                   size);
  }
  *out_memory = memory;
  return DC_OK;
}

static void cpu_deallocate(dc_device_t* device, void* memory, size_t size,
                           dc_storage_mode_t mode) {
  (void)device;
  (void)size;
  (void)mode;
  free(memory);
}

static void* cpu_host_pointer(dc_device_t* device, void* memory,
                              dc_storage_mode_t mode) {
  (void)device;
  (void)mode;
  return memory;
}

static dc_status_t cpu_write(dc_device_t* device, void* memory, size_t offset,
                             const void* src, size_t size) {
  (void)device;
  memcpy((char*)memory + offset, src, size);
  return DC_OK;
}

static dc_status_t cpu_read(dc_device_t* device, const void* memory,
                            size_t offset, void* dst, size_t size) {
  (void)device;
  memcpy(dst, (const char*)memory + offset, size);
  return DC_OK;
}

// Writes the pattern once, then doubles the filled prefix with memcpy, so
// any element size fills in O(log n) calls.
static dc_status_t cpu_fill(dc_device_t* device, void* memory, size_t offset,
                            size_t size, const void* pattern,
                            size_t pattern_size) {
  (void)device;
  char* dst = (char*)memory + offset;
  const unsigned char* p = pattern;
  bool uniform = true;
  for (size_t i = 1; i < pattern_size; ++i) uniform &= p[i] == p[0];
  if (uniform) {
    memset(dst, p[0], size);
    return DC_OK;
  }
  memcpy(dst, pattern, pattern_size);
  for (size_t done = pattern_size; done < size;) {
    size_t n = DC_MIN(done, size - done);
    memcpy(dst + done, dst, n);
    done += n;
  }
  return DC_OK;
}

static dc_status_t cpu_copy(dc_device_t* device, void* dst, size_t dst_offset,
                            const void* src, size_t src_offset, size_t size) {
  (void)device;
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, size);
  return DC_OK;
}

static const dc_device_vtable_t kCpuVtable = {
    .destroy = cpu_destroy,
    .allocate = cpu_allocate,
    .deallocate = cpu_deallocate,
    .host_pointer = cpu_host_pointer,
    .write = cpu_write,
    .read = cpu_read,
    .fill = cpu_fill,
    .copy = cpu_copy,
    .program_build = dc__cpu_program_build,
    .program_destroy = dc__cpu_program_destroy,
    .dispatch = dc__cpu_dispatch,
    .program_cache_stats = dc__cpu_program_cache_stats,
};

// Adds the CPU device |index|: "cpu", then "cpu:1", "cpu:2"...
static dc_status_t add_cpu(dc_context_t* ctx, uint32_t index,
                           const dc_device_info_t* machine) {
  dc_allocator_t allocator = dc_context_allocator(ctx);
  dc__cpu_device_t* cpu = dc_allocator_calloc(allocator, 1, sizeof(*cpu));
  if (cpu == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the cpu device");
  }
  cpu->allocator = allocator;
  pthread_mutex_init(&cpu->lock, NULL);
  dc_device_info_t info = *machine;
  if (index > 0) snprintf(info.name, sizeof(info.name), "cpu:%u", index);
  dc_status_t status =
      dc_device_initialize(&cpu->base, &kCpuVtable, ctx, &info);
  if (status == DC_OK) status = dc_context_add_device(ctx, &cpu->base);
  if (status != DC_OK) {
    pthread_mutex_destroy(&cpu->lock);
    dc_allocator_free(allocator, cpu, sizeof(*cpu));
  }
  return status;
}

dc_status_t dc__cpu_enumerate(dc_context_t* ctx, void* user_data) {
  (void)user_data;
  dc_device_info_t machine;
  dc__cpu_read_info(dc_worker_pool_thread_count(dc_context_worker_pool(ctx)),
                    &machine);
  dc_context_params_t params;
  dc_context_params(ctx, &params);
  for (uint32_t i = 0; i < params.cpu_devices; ++i) {
    DC_RETURN_IF_ERROR(add_cpu(ctx, i, &machine));
  }
  return DC_OK;
}

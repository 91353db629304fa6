// cpu_device.c: the CPU devices: "cpu", "cpu:1", ... over the context's
// worker pool, their memory (cpu_memory.c) and kernels (cpu_program.c,
// cpu_dispatch.c).
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cpu_internal.h"
#include "log_internal.h"

static void cpu_destroy(dc_device_t* device) {
  dc__cpu_device_t* cpu = (dc__cpu_device_t*)device;
  dc__cpu_kernels_teardown(cpu);
  pthread_mutex_destroy(&cpu->lock);
  dc_allocator_free(cpu->allocator, cpu, sizeof(*cpu));
}

static const dc_device_memory_ops_t kCpuMemory = {
    .allocate = dc__cpu_allocate,
    .deallocate = dc__cpu_deallocate,
    .host_pointer = dc__cpu_host_pointer,
    .write = dc__cpu_write,
    .read = dc__cpu_read,
    .fill = dc__cpu_fill,
    .copy = dc__cpu_copy,
};

static const dc_device_kernel_ops_t kCpuKernels = {
    .program_build = dc__cpu_program_build,
    .program_destroy = dc__cpu_program_destroy,
    .dispatch = dc__cpu_dispatch,
    .program_cache_stats = dc__cpu_program_cache_stats,
};

// No queues, events or graphs: a CPU dispatch runs on the worker pool and
// returns when it has finished, so there is nothing to queue.
static const dc_device_vtable_t kCpuVtable = {
    .destroy = cpu_destroy,
    .memory = &kCpuMemory,
    .kernels = &kCpuKernels,
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

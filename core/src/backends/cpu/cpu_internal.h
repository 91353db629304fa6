// cpu_internal.h: the CPU backend's private declarations.
// SPDX-License-Identifier: MIT
#ifndef DC_CPU_INTERNAL_H_
#define DC_CPU_INTERNAL_H_

#include <pthread.h>

#include "dc/backend.h"
#include "internal.h"

typedef struct dc__kcache_t dc__kcache_t;
typedef struct dc__cpu_module_t dc__cpu_module_t;

// The CPU device. Kernel state (the compiler's identity, the disk cache,
// loaded modules) is set up on the first program build.
typedef struct dc__cpu_device_t {
  dc_device_t base;  // first, as the backend interface requires
  dc_allocator_t allocator;
  pthread_mutex_t lock;          // guards everything below
  bool kernels_ready;
  dc_status_t kernels_status;    // why kernels cannot be built, if so
  char kernels_message[512];
  char compiler_id[512];         // `cc --version`, `cc -dumpmachine`
  dc__kcache_t* kcache;
  dc__cpu_module_t* modules;     // loaded shared objects, by cache key
  dc_program_cache_stats_t stats;
} dc__cpu_device_t;

// Fills |info| from the machine: /proc/cpuinfo, sysfs cache descriptions,
// the CPU's vector extensions, sysconf. |worker_threads| is the pool size.
DC_INTERNAL void dc__cpu_read_info(uint32_t worker_threads,
                                   dc_device_info_t* info);

// Kernels on the CPU (cpu_program.c).
DC_INTERNAL dc_status_t dc__cpu_program_build(dc_device_t* device,
                                              dc_program_build_t* build);
DC_INTERNAL void dc__cpu_program_destroy(dc_device_t* device,
                                         dc_program_t* program);
DC_INTERNAL dc_status_t dc__cpu_dispatch(dc_device_t* device,
                                         dc_kernel_t* kernel,
                                         const dc_launch_t* launch,
                                         void* const* args,
                                         const size_t* lengths);
DC_INTERNAL void dc__cpu_program_cache_stats(dc_device_t* device,
                                             dc_program_cache_stats_t* out);
// Frees the kernel state of |cpu| (loaded modules, cache).
DC_INTERNAL void dc__cpu_kernels_teardown(dc__cpu_device_t* cpu);

#endif  // DC_CPU_INTERNAL_H_

// cpu_internal.h: the CPU backend's private declarations.
// SPDX-License-Identifier: MIT
#ifndef DC_CPU_INTERNAL_H_
#define DC_CPU_INTERNAL_H_

#include <pthread.h>

#include "dc/backend.h"
#include "dc/kernel_abi_c.h"
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

// Host memory (cpu_memory.c): every storage mode is host memory here.
DC_INTERNAL dc_status_t dc__cpu_allocate(dc_device_t* device, size_t size,
                                         dc_storage_mode_t mode,
                                         void** out_memory);
DC_INTERNAL void dc__cpu_deallocate(dc_device_t* device, void* memory,
                                    size_t size, dc_storage_mode_t mode);
DC_INTERNAL void* dc__cpu_host_pointer(dc_device_t* device, void* memory,
                                       dc_storage_mode_t mode);
DC_INTERNAL dc_status_t dc__cpu_write(dc_device_t* device, void* memory,
                                      size_t offset, const void* src,
                                      size_t size);
DC_INTERNAL dc_status_t dc__cpu_read(dc_device_t* device, const void* memory,
                                     size_t offset, void* dst, size_t size);
DC_INTERNAL dc_status_t dc__cpu_fill(dc_device_t* device, void* memory,
                                     size_t offset, size_t size,
                                     const void* pattern,
                                     size_t pattern_size);
DC_INTERNAL dc_status_t dc__cpu_copy(dc_device_t* device, void* dst,
                                     size_t dst_offset, const void* src,
                                     size_t src_offset, size_t size);

// Adds the CPU devices of |ctx| (the registry's enumerate for "cpu").
DC_INTERNAL dc_status_t dc__cpu_enumerate(dc_context_t* ctx, void* user_data);

// Fills |info| from the machine: /proc/cpuinfo, sysfs cache descriptions,
// the CPU's vector extensions, sysconf. |worker_threads| is the pool size.
DC_INTERNAL void dc__cpu_read_info(uint32_t worker_threads,
                                   dc_device_info_t* info);

// What a CPU program keeps per kernel (its dc_kernel_backend_data): the
// entry points of its module and what dispatches read of the kernel
// (cpu_program.c binds them, cpu_dispatch.c runs them).
typedef struct dc__cpu_kernel_t {
  dc_c_kernel_run_fn run;
  dc_c_kernel_size_fn scratch_size;
  const char* name;     // borrowed from the kernel
  bool uses_barrier;    // its groups run their work-items together
  bool uses_grid_sync;  // its dispatches are cooperative
} dc__cpu_kernel_t;

// Kernels on the CPU: building (cpu_program.c), running (cpu_dispatch.c).
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

// dc/context.h: the runtime that owns devices, workers, pools and settings.
// SPDX-License-Identifier: MIT
#ifndef DC_CONTEXT_H_
#define DC_CONTEXT_H_

#include <stddef.h>
#include <stdint.h>

#include "dc/allocator.h"
#include "dc/log.h"
#include "dc/status.h"
#include "dc/worker_pool.h"

DC_EXTERN_C_BEGIN

//===-- Types -----------------------------------------------------------===//

typedef struct dc_context_t dc_context_t;
typedef struct dc_device_t dc_device_t;

//===-- dc_context_t ----------------------------------------------------===//
//
// A context is one instance of the engine: it discovers the devices, starts
// the worker pool, holds the memory pools and caches, and carries the
// configuration and the log sink. Most programs make one; several contexts
// in one process are independent of each other.
//
// Configuration. dc_context_params_t holds every setting. A field left at
// zero (or NULL) takes its value from the environment variable named beside
// it, and else a built-in default, so `dc_context_params_t p = {0};` means
// "defaults, as the environment says". A field the host sets wins over the
// environment. docs/configuration.md lists every variable in one table.
//
// Lifetime. dc_context_create() returns one reference held by the host;
// dc_context_retain() and dc_context_release() add and drop more. Objects
// made in the context (buffers, and later streams, kernels and graphs) keep
// it alive on their own, so release order never matters. When the host
// drops its last reference the context shuts down: it logs a leak report of
// every buffer still alive (at level warn), and is destroyed as soon as the
// last of those objects is released too.
//
// Thread safety: thread-safe, except that a context must not be used after
// the host's last release.

typedef struct dc_context_params_t {
  // Host allocator for engine objects. {NULL} selects dc_allocator_system().
  dc_allocator_t allocator;
  // Log level. DC_LOG_DEFAULT: DC_LOG, else warn.
  dc_log_level_t log_level;
  // Log sink and its user data. NULL: the default sink (stderr).
  dc_log_fn_t log_fn;
  void* log_user_data;
  // Threads a parallel-for runs on, the caller included. 0: DC_WORKERS,
  // else one per logical core available to the process.
  uint32_t thread_count;
  // How idle workers wait. DC_IDLE_DEFAULT: DC_IDLE, else balanced.
  dc_idle_policy_t idle_policy;
  // Most bytes each device's memory pool keeps cached for reuse. 0:
  // DC_POOL_CACHE_LIMIT, else a quarter of the device memory, at most 1 GiB.
  size_t pool_cache_limit;
  // Most bytes each device may hold (in use plus cached). 0:
  // DC_MEMORY_BUDGET, else the device's memory size.
  size_t device_memory_budget;
  // Comma-separated backends to enable, e.g. "cpu". NULL: DC_DEVICES, else
  // every backend. The CPU device is always enabled.
  const char* backends;
  // The C compiler that builds kernels for the CPU device. NULL: DC_CC,
  // else "cc".
  const char* c_compiler;
  // Directory of the on-disk kernel cache; "off" keeps compiled kernels in
  // memory only. NULL: DC_CACHE_DIR, else $XDG_CACHE_HOME/dclua/kernels,
  // else $HOME/.cache/dclua/kernels.
  const char* kernel_cache_dir;
  // Compile every kernel in checked mode (docs/kernel-language.md,
  // "Checked mode"): every access through a pointer or into an array is
  // checked against the allocation it came from, and loops poll, so that
  // an interrupt or the kernel time limit ends a runaway kernel. For
  // kernels nobody vetted (dclua --sandbox); slower. false: DC_CHECKED=1
  // turns it on. A program's -dc-checked option does the same for that
  // program alone.
  bool checked_kernels;
  // How long one dispatch of a checked kernel may run before it is stopped
  // with DC_ERR_DEADLINE_EXCEEDED (on a GPU, each work-item's own time).
  // 0: DC_KERNEL_TIME_LIMIT_MS, else no limit.
  uint64_t kernel_time_limit_ns;
  // Time the candidate work-group sizes of a dispatch that leaves the
  // size to the engine, once per kernel and grid, and keep the fastest.
  // false: DC_AUTOTUNE=1 turns it on.
  bool autotune;
  // CPU devices to create (at most 8). 0: DC_CPU_DEVICES, else 1. The
  // extra ones, "cpu:1", "cpu:2"..., run on the same processor and worker
  // pool with memory pools and program caches of their own: they let a
  // pipeline that spans devices (copies between them, fallback from one to
  // another) run and be tested on a machine without a GPU.
  uint32_t cpu_devices;
} dc_context_params_t;

// Creates a context with |params| (borrowed; NULL means all defaults).
// Returns DC_ERR_INVALID_ARGUMENT if a parameter or an environment variable
// is malformed (the message names it), DC_ERR_NOT_FOUND if |backends| names
// an unknown backend, DC_ERR_OUT_OF_MEMORY or DC_ERR_RESOURCE_EXHAUSTED if
// memory or threads cannot be had.
DC_API dc_status_t dc_context_create(const dc_context_params_t* params,
                                     dc_context_t** out_context);

// Adds a host reference to |context|. NULL is a no-op.
DC_API void dc_context_retain(dc_context_t* context);

// Drops a host reference; see Lifetime above. NULL is a no-op.
DC_API void dc_context_release(dc_context_t* context);

// Copies the settings in force into |out_params|, with the defaults of the
// environment and of the machine resolved; pool_cache_limit and
// device_memory_budget stay 0 when they default per device (read those from
// dc_memory_pool_stats()). Its string fields point into the context.
// Returns DC_ERR_INVALID_ARGUMENT if either pointer is NULL.
DC_API dc_status_t dc_context_params(const dc_context_t* context,
                                     dc_context_params_t* out_params);

// Sets the kernel time limit at run time (see kernel_time_limit_ns; 0: no
// limit); dispatches that start later have it.
DC_API void dc_context_set_kernel_time_limit(dc_context_t* context,
                                             uint64_t limit_ns);

// Stops every checked kernel running on the context's CPU devices at its
// next poll: those dispatches fail with DC_ERR_CANCELLED. Dispatches that
// start later run normally. Unchecked kernels run to their end (a GPU's
// checked kernels stop at the kernel time limit). Async-signal-safe: a
// SIGINT handler may call it. NULL is a no-op.
DC_API void dc_context_interrupt(dc_context_t* context);

// Sets the log level at run time. DC_LOG_DEFAULT restores the level the
// context was created with.
DC_API void dc_context_set_log_level(dc_context_t* context,
                                     dc_log_level_t level);

// Returns the current log level.
DC_API dc_log_level_t dc_context_log_level(const dc_context_t* context);

// Sends a message to the context's sink, if |level| is enabled. Host code
// and bindings log through this so all messages share one format and sink.
DC_API void dc_context_log(dc_context_t* context, dc_log_level_t level,
                           const char* component, const char* format, ...)
    DC_PRINTF_LIKE(4, 5);

//===-- Devices ---------------------------------------------------------===//
//
// Devices are discovered when the context is created and live as long as
// the context; the pointers below are borrowed. Index 0 is always the CPU.

// The most devices a context holds, the CPU included.
#define DC_MAX_DEVICES 16

// Returns how many devices the context has (at least 1).
DC_API size_t dc_context_device_count(const dc_context_t* context);

// Gets the device at |index|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, DC_ERR_OUT_OF_RANGE if
// |index| >= dc_context_device_count().
DC_API dc_status_t dc_context_device(const dc_context_t* context, size_t index,
                                     dc_device_t** out_device);

// Finds a device by name: an exact name ("cpu", "cuda:1") or a backend
// name ("cuda"), which gives that backend's first device.
// Returns DC_ERR_NOT_FOUND if none matches; the message lists the devices.
DC_API dc_status_t dc_context_find_device(const dc_context_t* context,
                                          const char* name,
                                          dc_device_t** out_device);

// Gets the best device for general work: the first GPU if there is one,
// else the CPU.
DC_API dc_status_t dc_context_default_device(const dc_context_t* context,
                                             dc_device_t** out_device);

// Returns the worker pool (borrowed; lives as long as the context).
DC_API dc_worker_pool_t* dc_context_worker_pool(const dc_context_t* context);

//===-- Live objects ----------------------------------------------------===//

// Returns how many buffers (views included) are alive in |context|.
DC_API size_t dc_context_live_buffer_count(const dc_context_t* context);

// Logs, at level warn, one line for each live buffer (its label, type,
// length and size) and program (its name and kernels) and returns how many
// objects there were. The context does this
// by itself when the host releases it; hosts and tests call it to check for
// leaks at a point of their choosing.
DC_API size_t dc_context_report_leaks(dc_context_t* context);

DC_EXTERN_C_END

#endif  // DC_CONTEXT_H_

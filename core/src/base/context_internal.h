// context_internal.h: the context's private state, shared by the core.
// SPDX-License-Identifier: MIT
#ifndef DC_CONTEXT_INTERNAL_H_
#define DC_CONTEXT_INTERNAL_H_

#include <pthread.h>

#include "dc/backend.h"
#include "dc/context.h"
#include "fault_set.h"
#include "host_pins.h"
#include "internal.h"
#include "log_internal.h"
#include "object_cache.h"

// The engine's own state of a device (dc_device_t.core), kept in the
// context beside the device.
struct dc__device_core_t {
  struct dc__memory_pool_t* pool;  // created by dc_context_add_device()
  dc_program_t* builtins;          // the built-in kernels, once built
};

// What the context knows of a device's failures (device_health.c).
typedef struct dc__device_health_t {
  bool lost;
  uint64_t failures;
  uint64_t last_failure_ns;  // monotonic; 0: none since the last reset
  char reason[256];
  int announced;  // the worst state the callback was told about
} dc__device_health_t;

// Storage for the string settings of a context.
typedef struct dc__config_strings_t {
  char backends[128];
  char c_compiler[256];
  char kernel_cache_dir[512];
} dc__config_strings_t;

// Lifetime: the context is destroyed when both the host's references
// (host_refs) and the objects that depend on it (object_refs) are gone.
// Objects register under |lock|, which also guards the live list.
struct dc_context_t {
  dc_allocator_t allocator;
  dc_context_params_t params;  // resolved; strings point into |strings|
  dc__config_strings_t strings;
  dc_log_level_t initial_log_level;
  atomic_int log_level;
  // Checked kernels: their time limit, and a count of dc_context_interrupt
  // calls (a dispatch stops when it moves past the value it started with).
  _Atomic uint64_t kernel_time_limit_ns;
  atomic_uint interrupts;

  atomic_uint host_refs;
  pthread_mutex_t lock;
  size_t object_refs;     // guarded by lock
  bool shut_down;         // guarded by lock: host_refs reached zero
  dc__live_node_t live;   // guarded by lock: sentinel of live objects
  size_t live_counts[DC_LIVE_KIND_COUNT];  // guarded by lock

  dc_worker_pool_t* workers;
  struct dc__telemetry_t* telemetry;    // telemetry.c
  struct dc__scheduler_t* scheduler;    // stream threads, on first stream
  dc_device_t* devices[DC_MAX_DEVICES];
  struct dc__device_core_t device_cores[DC_MAX_DEVICES];
  size_t device_count;
  // The quarantines of released objects, one per type, so that checking
  // a stale handle never reads freed memory (resource.h). Events have
  // their device's event pool instead.
  dc__object_cache_t buffer_cache;
  dc__object_cache_t stream_cache;
  dc__object_cache_t graph_cache;
  dc__object_cache_t exec_cache;
  dc__object_cache_t program_cache;
  dc__object_cache_t breaker_cache;
  dc__object_cache_t group_cache;
  dc__object_cache_t token_cache;
  dc__object_cache_t encoder_cache;
  dc__fault_set_t faults;           // fault.c
  struct dc__resilience_t* resilience;  // breakers, policies (breaker.c)
  dc__device_health_t health[DC_MAX_DEVICES];  // guarded by lock
  dc_device_health_fn_t health_fn;             // guarded by lock
  void* health_user_data;
  // Bytes/s measured from devices[i] to devices[j], 0 until measured
  // (device_peer.c). Guarded by lock.
  uint64_t peer_bandwidth[DC_MAX_DEVICES][DC_MAX_DEVICES];
  dc__host_pins_t pins;  // host blocks pinned for DMA (host_pins.c)
};

DC_INTERNAL void dc__log_default_sink(void* user_data,
                                      const dc_log_record_t* record);

// Resolves |params| (NULL for defaults) against the environment into
// |out|, whose strings are copied into |strings|.
DC_INTERNAL dc_status_t dc__config_resolve(const dc_context_params_t* params,
                                           dc_context_params_t* out,
                                           dc__config_strings_t* strings);
// Points |params|' string fields into |strings| (after a copy).
DC_INTERNAL void dc__config_point_strings(dc_context_params_t* params,
                                          dc__config_strings_t* strings);

// Registers |node| as a live object; the object now keeps |ctx| alive.
DC_INTERNAL void dc__context_track(dc_context_t* ctx, dc__live_node_t* node);
// Takes |node| off the live list. The object still keeps |ctx| alive
// until it calls dc__context_unref(), its very last step.
DC_INTERNAL void dc__context_untrack(dc_context_t* ctx,
                                     dc__live_node_t* node);
// dc__context_ref() and dc__context_unref(), the holds of objects that are
// not on the live list, are declared in resource.h.

// Notes a failure of work on |device| (device_health.c): counts it, keeps
// its message, marks the device lost on DC_ERR_DEVICE_LOST (tripping its
// breaker), and tells the health callback when the device becomes
// quarantined or lost. Failures that are the caller's are ignored.
DC_INTERNAL void dc__device_failed(dc_device_t* device, dc_status_t status,
                                   const char* message);
// Whether |status| says something about the device that returned it: a
// transient failure (not an open breaker) or DEVICE_LOST.
DC_INTERNAL bool dc__status_about_device(dc_status_t status);
// Returns |status|, after telling |device|'s health about it when it is a
// failure (dc__device_failed), keeping the thread's error message: what
// the synchronous entry points (dispatches, copies, fills, compiles)
// return through.
DC_INTERNAL dc_status_t dc__device_outcome(dc_device_t* device,
                                           dc_status_t status);

// Whether dc_buffer_copy() from |src| to |dst| goes through the backend's
// copy_peer (two devices with one vtable that has it) rather than through
// host memory (device_peer.c).
DC_INTERNAL bool dc__device_copies_peer(const dc_device_t* dst,
                                        const dc_device_t* src);

// The size of struct dc_encoder_t, for the context's object cache
// (encoder.c; the other types declare theirs beside their structs).
DC_INTERNAL size_t dc__encoder_object_size(void);

// Runs every registered backend's enumerate on |ctx| (backends/registry.c).
DC_INTERNAL dc_status_t dc__backends_enumerate(dc_context_t* ctx,
                                               const char* enabled);

#endif  // DC_CONTEXT_INTERNAL_H_

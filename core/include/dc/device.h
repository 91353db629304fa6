// dc/device.h: compute devices and what they can do.
// SPDX-License-Identifier: MIT
#ifndef DC_DEVICE_H_
#define DC_DEVICE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/context.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- dc_device_t -----------------------------------------------------===//
//
// A device runs kernels and holds buffer memory. The CPU device ("cpu") is
// always present and runs work on the context's worker pool; GPU devices
// ("cuda:0", ...) appear when their driver is found at run time.
//
// Every capability is read from the machine or the driver when the context
// is created, never assumed; settings that depend on the device (default
// work-group size, stream count, pool limits) derive from these numbers.
//
// Devices belong to their context (see dc_context_device()) and are valid
// while it lives; objects made on a device keep the context alive.
//
// Thread safety: thread-safe.

// The broad kind of a device.
typedef enum dc_device_kind_e {
  DC_DEVICE_KIND_CPU = 1,
  DC_DEVICE_KIND_GPU = 2,
} dc_device_kind_t;

// What a device is and can do. Sizes are in bytes; 0 means unknown.
typedef struct dc_device_info_t {
  char name[32];      // unique in the context: "cpu", "cuda:0"
  char backend[16];   // the backend that drives it: "cpu", "cuda"
  char model[128];    // the hardware: CPU model name, GPU product name
  dc_device_kind_t kind;
  // Parallel units: logical cores available to the process on a CPU,
  // streaming multiprocessors on a GPU.
  uint32_t compute_units;
  // Threads that run work on this device (CPU: the worker pool's threads,
  // caller included; GPU: compute_units).
  uint32_t worker_threads;
  // Width of the widest vector unit in bytes (CPU: 16 for SSE/NEON, 32 for
  // AVX2, 64 for AVX-512), or the warp width in threads on a GPU.
  uint32_t simd_width;
  // Largest work-group a kernel may be dispatched with.
  uint32_t max_work_group_size;
  // Bytes of __local memory a work-group may use.
  size_t local_memory_size;
  // Memory the device has (CPU: the machine's physical memory).
  size_t memory_size;
  // Data cache sizes per level (CPU: per core for L1 and L2).
  size_t cache_l1d_size;
  size_t cache_l2_size;
  size_t cache_l3_size;
  size_t cache_line_size;
  // True when host and device share one address space, so host-visible
  // buffers need no copies.
  bool unified_memory;
  // Streams a stream group gets by default: enough to keep the device busy
  // while some streams wait (CPU: the worker threads, 2 to 8).
  uint32_t stream_count;
  // Most work-groups a cooperative dispatch (a kernel that uses
  // dc_grid_sync()) may have: all of them must be resident on the device
  // at once. CPU: the worker threads, as each group of such a dispatch
  // runs on a thread of its own. 0: the device cannot run cooperative
  // kernels.
  uint32_t max_cooperative_groups;
  // The hardware's PCI address, "dddd:bb:dd.f" in lower-case hex
  // ("0000:3b:00.0"), or "" where the driver does not say or it is no PCI
  // device (the CPU). Two backends that reach one GPU report one address:
  // a context adds such a GPU once (the OpenCL backend leaves out a device
  // that an earlier backend of the context drives already).
  char pci_bus_id[16];
} dc_device_info_t;

// Returns the device's capabilities (borrowed, valid while the context
// lives), or NULL if |device| is NULL.
DC_API const dc_device_info_t* dc_device_info(const dc_device_t* device);

// Returns the device's name ("cpu", "cuda:0"), or "" if |device| is NULL.
DC_API const char* dc_device_name(const dc_device_t* device);

// Returns the context the device belongs to (borrowed).
DC_API dc_context_t* dc_device_context(const dc_device_t* device);

//===-- Paths between devices -------------------------------------------===//
//
// dc_buffer_copy() between two devices moves the bytes along one of three
// paths, which dc_device_peer() reports for any two devices of a context
// (the health report lists every ordered pair under "peers"):
//
//   HOST    the engine stages the bytes through host memory: it reads them
//           from one device and writes them to the other. Every pair with
//           a CPU device takes it (two CPU devices too; a GPU does host
//           transfers), as do devices of different backends.
//   DRIVER  the backend copies between two of its devices itself, and its
//           driver stages the bytes through host memory: two GPUs without
//           peer access (CUDA's cuMemcpyPeerAsync).
//   DIRECT  the same, device to device over NVLink or PCIe peer-to-peer:
//           the backend enabled peer access between the two GPUs.
//
// A device is no peer of itself: copies within one device are the
// backend's own (dc_device_peer() refuses such a pair).

typedef enum dc_peer_path_e {
  DC_PEER_PATH_HOST = 1,
  DC_PEER_PATH_DRIVER = 2,
  DC_PEER_PATH_DIRECT = 3,
} dc_peer_path_t;

typedef struct dc_peer_info_t {
  dc_peer_path_t path;
  bool direct;         // path == DC_PEER_PATH_DIRECT (peer access is on)
  // Bytes per second of a copy from |from| to |to| along |path|, as
  // measured by dc_device_peer(..., measure = true); 0 until measured.
  uint64_t bandwidth;
} dc_peer_info_t;

// "host", "driver", "direct" ("unknown" otherwise).
DC_API const char* dc_peer_path_name(dc_peer_path_t path);

// Describes how dc_buffer_copy() moves bytes from |from| to |to| into
// |out_info|. With |measure|, the first call for the ordered pair times
// copies of 64 MiB (less if the devices' memory or budgets cannot hold
// it) along that path, in buffers made and freed for it, and the context
// keeps the figure; later calls return it without copying. Measure while
// the devices are otherwise idle: other work shares the link.
// Thread-safe; |out_info| is cleared on entry.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, devices of different
// contexts, a device not yet added to its context, or the same device
// twice; with |measure|, a failure to make the buffers or to copy
// (DC_ERR_OUT_OF_MEMORY, a device error), its message prefixed with
// "dc_device_peer: measuring <from> -> <to>: ". Borrows both devices.
DC_API dc_status_t dc_device_peer(dc_device_t* from, dc_device_t* to,
                                  bool measure, dc_peer_info_t* out_info);

//===-- Device health ---------------------------------------------------===//
//
// Each device's health follows from the failures of the work run on it
// (graph ops and stream dispatches) and from its circuit breaker, the one
// named after the device (dc/breaker.h):
//
//   HEALTHY      no failure in the breaker's window
//   DEGRADED     failures in the window, the breaker still closed
//   QUARANTINED  the breaker is open or half-open: work fails fast there
//                and graph ops go to their fallback device
//   LOST         it failed with a code of the device class
//                (DC_ERR_DEVICE_LOST, DC_ERR_DATA_LOSS: dc/status.h); its
//                breaker is tripped open and stays so until
//                dc_device_reset_health()
//
// The health report (dc_health_report) shows each device's health.

typedef enum dc_device_health_state_e {
  DC_DEVICE_HEALTHY = 0,
  DC_DEVICE_DEGRADED,
  DC_DEVICE_QUARANTINED,
  DC_DEVICE_LOST,
} dc_device_health_state_t;

typedef struct dc_device_health_t {
  dc_device_health_state_t state;
  uint64_t failures;   // failures seen since creation or the last reset
  char reason[256];    // the latest failure's message ("" if none)
} dc_device_health_t;

// "healthy", "degraded", "quarantined", "lost" ("unknown" otherwise).
DC_API const char* dc_device_health_name(dc_device_health_state_t state);

// Copies |device|'s health into |out_health|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_device_health(dc_device_t* device,
                                    dc_device_health_t* out_health);

// Puts a quarantined or lost device back into service: clears the lost
// mark, the failure count and the reason, and closes its breaker. It
// resets no hardware.
// Returns DC_ERR_INVALID_ARGUMENT for NULL, DC_ERR_FAILED_PRECONDITION for
// a device whose driver cannot recover in this process (a CUDA sticky
// error: only a new process gets the GPU back); it stays lost.
DC_API dc_status_t dc_device_reset_health(dc_device_t* device);

// Called when a device of the context becomes quarantined or lost, on
// the thread whose failure caused it. A host may log, alert, or exit.
typedef void (*dc_device_health_fn_t)(dc_device_t* device,
                                      const dc_device_health_t* health,
                                      void* user_data);

// Sets the context's health callback (NULL: none). Thread-safe.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL context.
DC_API dc_status_t dc_context_on_device_health(dc_context_t* context,
                                               dc_device_health_fn_t fn,
                                               void* user_data);

DC_EXTERN_C_END

#endif  // DC_DEVICE_H_

// dc/memory_pool.h: each device's caching allocator, its budget and stats.
// SPDX-License-Identifier: MIT
#ifndef DC_MEMORY_POOL_H_
#define DC_MEMORY_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "dc/device.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- The memory pool -------------------------------------------------===//
//
// Every device has one memory pool through which all of its buffer memory
// passes. Asking a device for memory is slow (a system call on the CPU, a
// driver call that may synchronise on a GPU), and pipelines allocate the
// same sizes over and over, so a released block is cached and handed out
// again to the next request of its size class.
//
// Size classes: requests are rounded up to a multiple of 256 bytes below
// 4 KiB, and above that to one of four steps per power of two (1, 1.25, 1.5
// and 1.75 times 2^k), so a block wastes at most a fifth of its size and a
// near miss still finds a cached block. Classes are kept apart per storage
// mode.
//
// Limits: the cache holds at most `cache_limit` bytes (a release that would
// exceed it frees the block instead). The device holds at most `budget`
// bytes, in use plus cached. A request that fits the budget only without
// the cache frees just enough of the cache; a request that the device
// refuses frees the whole cache and is tried once more. A request fails
// with DC_ERR_OUT_OF_MEMORY, and a message naming the function, the
// device, the size requested, the bytes in use and the budget, when it is
// larger than the whole budget, when the bytes in use alone leave no room
// for it, or when the device still refuses it. Other failures the device
// reports (a lost device, say) pass through unchanged.
//
// Thread safety: thread-safe.

// Counters and gauges of one device's pool. Byte counts are of size
// classes, i.e. of what the pool holds, not of what was asked for.
typedef struct dc_memory_pool_stats_t {
  uint64_t hits;          // requests served from the cache
  uint64_t misses;        // requests the cache could not serve
  uint64_t trims;         // trims that freed at least one block
  uint64_t failures;      // requests that failed with out-of-memory
  size_t bytes_in_use;    // handed out and not yet released
  size_t peak_bytes_in_use;
  size_t bytes_cached;    // free blocks kept for reuse
  size_t blocks_cached;
  size_t cache_limit;     // see Limits above
  size_t budget;
} dc_memory_pool_stats_t;

// Copies |device|'s pool statistics into |out_stats|.
// Returns DC_ERR_INVALID_ARGUMENT if either pointer is NULL.
DC_API dc_status_t dc_memory_pool_stats(dc_device_t* device,
                                        dc_memory_pool_stats_t* out_stats);

// Frees cached blocks of |device| until at most |keep_bytes| stay cached
// (0 empties the cache). Blocks in use are never touched.
// Returns DC_ERR_INVALID_ARGUMENT if |device| is NULL.
DC_API dc_status_t dc_memory_pool_trim(dc_device_t* device,
                                       size_t keep_bytes);

// Sets the device's memory budget (bytes in use plus cached). A budget
// below what is in use takes effect as blocks are released; the cache is
// trimmed at once to fit. 0 restores the default (the device's memory).
// Returns DC_ERR_INVALID_ARGUMENT if |device| is NULL.
DC_API dc_status_t dc_memory_pool_set_budget(dc_device_t* device,
                                             size_t budget);

// Sets the most bytes the cache keeps, trimming at once to fit. 0 disables
// caching: every release returns its memory to the device.
// Returns DC_ERR_INVALID_ARGUMENT if |device| is NULL.
DC_API dc_status_t dc_memory_pool_set_cache_limit(dc_device_t* device,
                                                  size_t cache_limit);

DC_EXTERN_C_END

#endif  // DC_MEMORY_POOL_H_

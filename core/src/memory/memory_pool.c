// memory_pool.c: a size-bucketed caching allocator in front of each
// device's memory (see dc/memory_pool.h for the policy).
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <string.h>

#include "context_internal.h"
#include "memory_pool_internal.h"

// Classes: 16 of 256-byte steps up to 4 KiB, then 4 per power of two.
#define SMALL_STEP 256u
#define SMALL_LIMIT 4096u
#define SMALL_CLASSES (SMALL_LIMIT / SMALL_STEP)
#define CLASS_COUNT (SMALL_CLASSES + 4 * 52)
#define MODE_COUNT 3

// A cached block. Nodes are recycled through |spare| so that a warm pool
// allocates nothing on either path.
typedef struct block_t {
  void* memory;
  size_t size;
  dc_storage_mode_t mode;
  struct block_t* next;
} block_t;

struct dc__memory_pool_t {
  dc_device_t* device;
  dc_allocator_t allocator;
  pthread_mutex_t lock;
  block_t* cached[MODE_COUNT][CLASS_COUNT];  // all guarded by lock
  block_t* spare;
  size_t cache_limit;
  size_t budget;
  size_t default_budget;
  dc_memory_pool_stats_t stats;
};

static int log2_floor(size_t x) { return 63 - __builtin_clzll(x); }

// Maps |size| to its class index and class size. Above 4 KiB a class is
// 5, 6, 7 or 8 quarters of a power of two.
static bool classify(size_t size, size_t* out_index, size_t* out_size) {
  if (size == 0) size = 1;
  if (size <= SMALL_LIMIT) {
    size_t steps = (size + SMALL_STEP - 1) / SMALL_STEP;
    *out_index = steps - 1;
    *out_size = steps * SMALL_STEP;
    return true;
  }
  if (size > ((size_t)1 << 62)) return false;
  int k = log2_floor(size - 1);  // 2^k < size <= 2^(k+1), k >= 12
  size_t quarter = (size_t)1 << (k - 2);
  size_t quarters = (size + quarter - 1) / quarter;  // 5..8
  *out_index = SMALL_CLASSES + (size_t)(k - 12) * 4 + (quarters - 5);
  *out_size = quarters * quarter;
  return true;
}

bool dc__memory_pool_class_size(size_t size, size_t* out_size) {
  size_t index;
  return classify(size, &index, out_size);
}

dc_status_t dc__memory_pool_create(dc_device_t* device, size_t cache_limit,
                                   size_t budget,
                                   dc__memory_pool_t** out_pool) {
  dc_allocator_t allocator = dc_context_allocator(device->context);
  dc__memory_pool_t* pool = dc_allocator_calloc(allocator, 1, sizeof(*pool));
  if (pool == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the memory pool of %s",
                   device->info.name);
  }
  pool->device = device;
  pool->allocator = allocator;
  pthread_mutex_init(&pool->lock, NULL);
  pool->default_budget =
      device->info.memory_size ? device->info.memory_size : SIZE_MAX;
  pool->budget = budget ? budget : pool->default_budget;
  pool->cache_limit = cache_limit;
  pool->stats.cache_limit = pool->cache_limit;
  pool->stats.budget = pool->budget;
  *out_pool = pool;
  return DC_OK;
}

// Unlinks cached blocks, largest classes first, until at most |keep| bytes
// stay cached. Returns them as a list, to be freed without the lock held
// (a device free can be slow; on a GPU it may synchronise).
static block_t* unlink_cached(dc__memory_pool_t* pool, size_t keep) {
  block_t* victims = NULL;
  for (size_t c = CLASS_COUNT; c-- > 0 && pool->stats.bytes_cached > keep;) {
    for (int m = 0; m < MODE_COUNT; ++m) {
      while (pool->cached[m][c] && pool->stats.bytes_cached > keep) {
        block_t* b = pool->cached[m][c];
        pool->cached[m][c] = b->next;
        pool->stats.bytes_cached -= b->size;
        pool->stats.blocks_cached -= 1;
        b->next = victims;
        victims = b;
      }
    }
  }
  if (victims != NULL) pool->stats.trims += 1;
  return victims;
}

// Gives a block back to the device, unpinning it first if it is host
// memory that a backend pinned (host_pins.h).
static void deallocate(dc__memory_pool_t* pool, void* memory, size_t size,
                       dc_storage_mode_t mode) {
  dc__host_pins_forget(pool->device, memory, mode);
  pool->device->vtable->memory->deallocate(pool->device, memory, size, mode);
}

// Frees |victims| to the device, then returns their nodes to |spare|.
static void free_unlinked(dc__memory_pool_t* pool, block_t* victims) {
  if (victims == NULL) return;
  size_t freed = 0;
  block_t* last = victims;
  for (block_t* b = victims; b != NULL; b = b->next) {
    deallocate(pool, b->memory, b->size, b->mode);
    freed += b->size;
    last = b;
  }
  pthread_mutex_lock(&pool->lock);
  last->next = pool->spare;
  pool->spare = victims;
  pthread_mutex_unlock(&pool->lock);
  char text[32];
  DC_LOG(pool->device->context, DC_LOG_DEBUG, "pool", "%s: freed %s of cache",
         pool->device->info.name, dc__format_bytes(freed, text, sizeof(text)));
}

void dc__memory_pool_destroy(dc__memory_pool_t* pool) {
  if (pool == NULL) return;
  pthread_mutex_lock(&pool->lock);
  block_t* victims = unlink_cached(pool, 0);
  pthread_mutex_unlock(&pool->lock);
  free_unlinked(pool, victims);
  for (block_t* b = pool->spare; b != NULL;) {
    block_t* next = b->next;
    dc_allocator_free(pool->allocator, b, sizeof(*b));
    b = next;
  }
  pthread_mutex_destroy(&pool->lock);
  dc_allocator_free(pool->allocator, pool, sizeof(*pool));
}

// Fails a request, counting it; called with the lock held.
static dc_status_t fail_locked(dc__memory_pool_t* pool, const char* fn,
                               size_t size, const char* why) {
  char want[32], used[32], budget[32];
  pool->stats.failures += 1;
  return DC_FAIL(
      DC_ERR_OUT_OF_MEMORY,
      "%s: %s cannot allocate %s: %s (%s in use, budget %s)", fn,
      pool->device->info.name, dc__format_bytes(size, want, sizeof(want)),
      why, dc__format_bytes(pool->stats.bytes_in_use, used, sizeof(used)),
      dc__format_bytes(pool->budget, budget, sizeof(budget)));
}

static void count_in_use(dc__memory_pool_t* pool, size_t size) {
  pool->stats.bytes_in_use += size;
  if (pool->stats.bytes_in_use > pool->stats.peak_bytes_in_use) {
    pool->stats.peak_bytes_in_use = pool->stats.bytes_in_use;
  }
}

// Makes room under the budget for |size| more bytes by trimming the cache;
// reserves the bytes on success. Called with the lock held.
static dc_status_t reserve_locked(dc__memory_pool_t* pool, const char* fn,
                                  size_t size, block_t** victims) {
  if (size > pool->budget) {
    return fail_locked(pool, fn, size, "larger than the whole budget");
  }
  size_t room = pool->budget - size;
  if (pool->stats.bytes_in_use > room) {
    return fail_locked(pool, fn, size, "the budget is used up");
  }
  if (pool->stats.bytes_in_use + pool->stats.bytes_cached > room) {
    *victims = unlink_cached(pool, room - pool->stats.bytes_in_use);
  }
  count_in_use(pool, size);
  return DC_OK;
}

// Gives back a reservation whose allocation failed; returns |status|, or
// the pool's own out-of-memory failure when the device ran out.
static dc_status_t unreserve(dc__memory_pool_t* pool, const char* fn,
                             size_t size, dc_status_t status) {
  pthread_mutex_lock(&pool->lock);
  pool->stats.bytes_in_use -= size;
  if (status == DC_ERR_OUT_OF_MEMORY) {
    status = fail_locked(pool, fn, size, "the device has no more");
  }
  pthread_mutex_unlock(&pool->lock);
  return status;
}

// Asks the device for a block. When it runs out, frees the whole cache and
// asks once more, as memory the cache holds may be what is missing. Other
// failures (a lost device) pass through with the backend's message.
static dc_status_t allocate_from_device(dc__memory_pool_t* pool,
                                        const char* fn, size_t size,
                                        dc_storage_mode_t mode,
                                        void** out_memory) {
  dc_device_t* device = pool->device;
  dc_status_t status = device->vtable->memory->allocate(device, size, mode, out_memory);
  if (status == DC_ERR_OUT_OF_MEMORY) {
    pthread_mutex_lock(&pool->lock);
    block_t* victims = unlink_cached(pool, 0);
    pthread_mutex_unlock(&pool->lock);
    free_unlinked(pool, victims);
    status = device->vtable->memory->allocate(device, size, mode, out_memory);
  }
  return status == DC_OK ? DC_OK : unreserve(pool, fn, size, status);
}

dc_status_t dc__memory_pool_acquire(dc__memory_pool_t* pool, const char* fn,
                                    size_t size, dc_storage_mode_t mode,
                                    void** out_memory,
                                    size_t* out_block_size) {
  size_t index, block_size;
  if (!classify(size, &index, &block_size)) {
    pthread_mutex_lock(&pool->lock);
    dc_status_t status = fail_locked(pool, fn, size, "no device can hold it");
    pthread_mutex_unlock(&pool->lock);
    return status;
  }
  *out_block_size = block_size;
  pthread_mutex_lock(&pool->lock);
  block_t* hit = pool->cached[mode][index];
  if (hit != NULL) {
    pool->cached[mode][index] = hit->next;
    pool->stats.hits += 1;
    pool->stats.bytes_cached -= block_size;
    pool->stats.blocks_cached -= 1;
    count_in_use(pool, block_size);
    *out_memory = hit->memory;
    hit->next = pool->spare;
    pool->spare = hit;
    pthread_mutex_unlock(&pool->lock);
    return DC_OK;
  }
  pool->stats.misses += 1;
  block_t* victims = NULL;
  dc_status_t status = reserve_locked(pool, fn, block_size, &victims);
  pthread_mutex_unlock(&pool->lock);
  free_unlinked(pool, victims);
  DC_RETURN_IF_ERROR(status);
  return allocate_from_device(pool, fn, block_size, mode, out_memory);
}

void dc__memory_pool_release(dc__memory_pool_t* pool, void* memory,
                             size_t block_size, dc_storage_mode_t mode) {
  // |block_size| came from classify(), so it always has a class.
  size_t index = 0, class_size = 0;
  classify(block_size, &index, &class_size);
  pthread_mutex_lock(&pool->lock);
  pool->stats.bytes_in_use -= block_size;
  bool fits = pool->stats.bytes_cached + block_size <= pool->cache_limit &&
              pool->stats.bytes_in_use + pool->stats.bytes_cached +
                      block_size <= pool->budget;
  block_t* node = NULL;
  if (fits) {
    node = pool->spare;
    if (node != NULL) {
      pool->spare = node->next;
    } else {
      node = dc_allocator_malloc(pool->allocator, sizeof(*node));
    }
  }
  if (node != NULL) {
    *node = (block_t){memory, block_size, mode, pool->cached[mode][index]};
    pool->cached[mode][index] = node;
    pool->stats.bytes_cached += block_size;
    pool->stats.blocks_cached += 1;
  }
  pthread_mutex_unlock(&pool->lock);
  if (node == NULL) {
    deallocate(pool, memory, block_size, mode);
  }
}

//===-- Public API ------------------------------------------------------===//

dc_status_t dc_memory_pool_stats(dc_device_t* device,
                                 dc_memory_pool_stats_t* out_stats) {
  DC_REQUIRE_ARG(device, "dc_memory_pool_stats");
  DC_REQUIRE_ARG(out_stats, "dc_memory_pool_stats");
  dc__memory_pool_t* pool = device->core->pool;
  pthread_mutex_lock(&pool->lock);
  *out_stats = pool->stats;
  out_stats->cache_limit = pool->cache_limit;
  out_stats->budget = pool->budget;
  pthread_mutex_unlock(&pool->lock);
  return DC_OK;
}

dc_status_t dc_memory_pool_trim(dc_device_t* device, size_t keep_bytes) {
  DC_REQUIRE_ARG(device, "dc_memory_pool_trim");
  dc__memory_pool_t* pool = device->core->pool;
  pthread_mutex_lock(&pool->lock);
  block_t* victims = unlink_cached(pool, keep_bytes);
  pthread_mutex_unlock(&pool->lock);
  free_unlinked(pool, victims);
  return DC_OK;
}

// Applies new limits (NULL keeps one as it is), then trims the cache to
// fit both of them.
static void set_limits(dc__memory_pool_t* pool, const size_t* cache_limit,
                       const size_t* budget) {
  pthread_mutex_lock(&pool->lock);
  if (cache_limit != NULL) pool->cache_limit = *cache_limit;
  if (budget != NULL) pool->budget = *budget ? *budget : pool->default_budget;
  size_t room = pool->budget > pool->stats.bytes_in_use
                    ? pool->budget - pool->stats.bytes_in_use
                    : 0;
  block_t* victims = unlink_cached(pool, DC_MIN(pool->cache_limit, room));
  pthread_mutex_unlock(&pool->lock);
  free_unlinked(pool, victims);
}

dc_status_t dc_memory_pool_set_budget(dc_device_t* device, size_t budget) {
  DC_REQUIRE_ARG(device, "dc_memory_pool_set_budget");
  set_limits(device->core->pool, NULL, &budget);
  return DC_OK;
}

dc_status_t dc_memory_pool_set_cache_limit(dc_device_t* device,
                                           size_t cache_limit) {
  DC_REQUIRE_ARG(device, "dc_memory_pool_set_cache_limit");
  set_limits(device->core->pool, &cache_limit, NULL);
  return DC_OK;
}

bool dc__memory_pool_could_fit(dc__memory_pool_t* pool, size_t size) {
  size_t index, block_size;
  if (!classify(size, &index, &block_size)) return false;
  pthread_mutex_lock(&pool->lock);
  bool fits = block_size <= pool->budget;
  pthread_mutex_unlock(&pool->lock);
  return fits;
}

// check_pool_stress.c: many threads creating and releasing buffers on one
// device while another trims, retunes and reads the pool's statistics.
// SPDX-License-Identifier: MIT
#include <sched.h>

#include "check_util.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define THREADS 4
#define HELD 8  // buffers each thread holds at most

static const dc_dtype_t kDtypes[] = {
    DC_DTYPE_U8,  DC_DTYPE_I16, DC_DTYPE_U32,
    DC_DTYPE_F32, DC_DTYPE_I64, DC_DTYPE_F64,
};

static void env_fixture(void) { dc_test_clear_env(); }

// What one creating thread did. Threads never call ck_assert (Check
// cannot report from them when it does not fork); they count, and the
// test asserts on the counts.
typedef struct maker_t {
  dc_device_t* device;
  unsigned id;
  int ops;
  size_t max_bytes;
  size_t created;
  size_t out_of_memory;
  size_t views;
  size_t corrupted;      // a buffer did not hold what was written
  size_t unexpected;     // a call failed in a way it must not
  char first_unexpected[160];
} maker_t;

static void note_unexpected(maker_t* m, dc_status_t st) {
  if (m->unexpected++ == 0) {
    snprintf(m->first_unexpected, sizeof(m->first_unexpected), "%s: %s",
             dc_status_name(st), dc_last_error());
  }
}

// The value thread |id| writes into its buffer in slot |slot|.
static uint8_t stamp(unsigned id, unsigned slot, unsigned round) {
  return (uint8_t)(1 + id * 31 + slot * 7 + round * 3);
}

// Checks that the bytes of |b| are all |value|: a sample of them through
// its host pointer (every byte of small buffers), and the last element
// through a read.
static bool holds(dc_buffer_t* b, uint8_t value) {
  unsigned char* p = NULL;
  if (dc_buffer_host_pointer(b, (void**)&p) != DC_OK) return false;
  size_t n = dc_buffer_size_bytes(b);
  size_t stride = n <= 4096 ? 1 : 61;
  for (size_t i = 0; i < n; i += stride) {
    if (p[i] != value) return false;
  }
  unsigned char last[8];
  if (dc_buffer_read(b, dc_buffer_length(b) - 1, last, 1) != DC_OK) {
    return false;
  }
  return last[0] == value;
}

static void* maker_thread(void* arg) {
  maker_t* m = arg;
  uint64_t rng = 0x1234567ull + m->id * 0x9E3779B9ull;
  dc_buffer_t* held[HELD] = {0};
  uint8_t values[HELD] = {0};
  for (int op = 0; op < m->ops; ++op) {
    unsigned slot = (unsigned)(dc_test_rand(&rng) % HELD);
    if (held[slot] != NULL) {
      if (!holds(held[slot], values[slot])) m->corrupted++;
      dc_buffer_release(held[slot]);
      held[slot] = NULL;
      continue;
    }
    dc_dtype_t dtype = kDtypes[dc_test_rand(&rng) % 6];
    size_t esize = dc_dtype_size(dtype);
    size_t bytes = 1 + (size_t)(dc_test_rand(&rng) % m->max_bytes);
    dc_buffer_params_t p = {dtype, (bytes + esize - 1) / esize,
                            (dc_storage_mode_t)(dc_test_rand(&rng) % 3),
                            "stress"};
    dc_buffer_t* b = NULL;
    dc_status_t st = dc_buffer_create(m->device, &p, &b);
    if (st == DC_ERR_OUT_OF_MEMORY &&
        strstr(dc_last_error(), "cannot allocate") != NULL) {
      m->out_of_memory++;
      continue;
    }
    if (st != DC_OK) {
      note_unexpected(m, st);
      continue;
    }
    m->created++;
    // Every element gets the same byte repeated, so that the contents can
    // be checked byte by byte whatever the dtype.
    uint8_t v = stamp(m->id, slot, (unsigned)op);
    unsigned char pattern[8];
    memset(pattern, v, sizeof(pattern));
    st = dc_buffer_fill(b, 0, p.length, pattern);
    if (st != DC_OK) note_unexpected(m, st);
    // Sometimes keep only a view: the parent must live on through it.
    if (p.length > 2 && dc_test_rand(&rng) % 4 == 0) {
      dc_buffer_t* view = NULL;
      st = dc_buffer_create_view(b, 1, p.length - 2, &view);
      if (st != DC_OK) {
        note_unexpected(m, st);
      } else {
        m->views++;
        dc_buffer_release(b);
        b = view;
      }
    }
    held[slot] = b;
    values[slot] = v;
  }
  for (unsigned slot = 0; slot < HELD; ++slot) {
    if (held[slot] == NULL) continue;
    if (!holds(held[slot], values[slot])) m->corrupted++;
    dc_buffer_release(held[slot]);
  }
  return NULL;
}

// The thread that trims, retunes and reads stats while the makers run.
typedef struct janitor_t {
  dc_device_t* device;
  atomic_bool* stop;
  bool retune;            // also change the cache limit
  size_t snapshots;
  size_t broken;          // snapshots that break an invariant
  char first_broken[160];
} janitor_t;

static void* janitor_thread(void* arg) {
  janitor_t* j = arg;
  uint64_t rng = 99;
  while (!atomic_load(j->stop)) {
    dc_memory_pool_stats_t s;
    if (dc_memory_pool_stats(j->device, &s) != DC_OK) {
      j->broken++;
      continue;
    }
    j->snapshots++;
    // Each snapshot is taken under the pool's lock, so it is consistent.
    bool ok = s.bytes_cached <= s.cache_limit &&
              s.bytes_in_use + s.bytes_cached <= s.budget &&
              (s.blocks_cached == 0) == (s.bytes_cached == 0) &&
              s.peak_bytes_in_use >= s.bytes_in_use;
    if (!ok && j->broken++ == 0) {
      snprintf(j->first_broken, sizeof(j->first_broken),
               "in use %zu, cached %zu (%zu blocks), limit %zu, budget %zu",
               s.bytes_in_use, s.bytes_cached, s.blocks_cached,
               s.cache_limit, s.budget);
    }
    switch (dc_test_rand(&rng) % 4) {
      case 0:
        dc_memory_pool_trim(j->device, (size_t)(dc_test_rand(&rng) % MIB));
        break;
      case 1:
        if (j->retune) {
          size_t limit = 256 * KIB + (size_t)(dc_test_rand(&rng) % (2 * MIB));
          dc_memory_pool_set_cache_limit(j->device, limit);
        }
        break;
      default:
        sched_yield();
        break;
    }
  }
  return NULL;
}

typedef struct run_t {
  dc_device_t* device;
  size_t attempts;
  size_t created;
  size_t out_of_memory;
  size_t views;
} run_t;

// Runs THREADS makers and one janitor on |device| and asserts on what
// they saw.
static run_t run_stress(dc_device_t* device, int ops, size_t max_bytes,
                        bool retune) {
  maker_t makers[THREADS];
  memset(makers, 0, sizeof(makers));
  for (unsigned i = 0; i < THREADS; ++i) {
    makers[i] = (maker_t){.device = device, .id = i, .ops = ops,
                          .max_bytes = max_bytes};
  }
  atomic_bool stop = false;
  janitor_t janitor = {.device = device, .stop = &stop, .retune = retune};
  pthread_t jt;
  ck_assert_int_eq(pthread_create(&jt, NULL, janitor_thread, &janitor), 0);
  dc_test_run_threads(THREADS, maker_thread, makers, sizeof(makers[0]));
  atomic_store(&stop, true);
  pthread_join(jt, NULL);

  run_t run = {.device = device};
  for (unsigned i = 0; i < THREADS; ++i) {
    ck_assert_msg(makers[i].unexpected == 0, "thread %u: %zu failures: %s",
                  i, makers[i].unexpected, makers[i].first_unexpected);
    ck_assert_msg(makers[i].corrupted == 0,
                  "thread %u: %zu buffers lost their contents", i,
                  makers[i].corrupted);
    run.created += makers[i].created;
    run.out_of_memory += makers[i].out_of_memory;
    run.views += makers[i].views;
  }
  run.attempts = run.created + run.out_of_memory;
  ck_assert_msg(janitor.broken == 0, "%zu inconsistent snapshots, first: %s",
                janitor.broken, janitor.first_broken);
  ck_assert_uint_gt(janitor.snapshots, 0);
  ck_assert_uint_gt(run.created, 0);
  return run;
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_pool_stress_create_release_with_trims) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 1;
  p.pool_cache_limit = 1 * MIB;
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_device_t* cpu = dc_test_cpu(ctx);

  run_t run = run_stress(cpu, 4000, 64 * KIB, true);

  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  ck_assert_uint_eq(run.out_of_memory, 0);
  ck_assert_uint_eq(s.failures, 0);
  ck_assert_uint_eq(s.hits + s.misses, run.created);  // views take none
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_gt(s.peak_bytes_in_use, 0);
  ck_assert_uint_le(s.bytes_cached, s.cache_limit);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  ck_assert_uint_gt(run.views, 0);
  dc_context_release(ctx);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

START_TEST(test_pool_stress_tight_budget) {
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 1;
  p.pool_cache_limit = 1 * MIB;
  p.device_memory_budget = 2 * MIB;
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_device_t* cpu = dc_test_cpu(ctx);

  run_t run = run_stress(cpu, 4000, 256 * KIB, false);

  dc_memory_pool_stats_t s = dc_test_pool_stats(cpu);
  // Every refusal was an out-of-memory the pool counted, and nothing else.
  ck_assert_uint_gt(run.out_of_memory, 0);
  ck_assert_uint_eq(s.failures, run.out_of_memory);
  ck_assert_uint_eq(s.hits + s.misses, run.attempts);
  ck_assert_uint_eq(s.bytes_in_use, 0);
  ck_assert_uint_le(s.peak_bytes_in_use, 2 * MIB);
  ck_assert_uint_eq(dc_context_live_buffer_count(ctx), 0);
  dc_context_release(ctx);
}
END_TEST

//===-- lifecycle: one buffer, many views, many threads -------------------===//

typedef struct viewer_t {
  dc_buffer_t* root;
  size_t length;
  atomic_int* started;
  int rounds;
  size_t wrong;
  size_t failed;
} viewer_t;

static void* viewer_thread(void* arg) {
  viewer_t* v = arg;
  uint64_t rng = (uint64_t)(uintptr_t)v;
  // Take a view first: the host may drop the root once all have one.
  dc_buffer_t* mine = NULL;
  if (dc_buffer_create_view(v->root, 0, v->length, &mine) != DC_OK) {
    v->failed++;
    atomic_fetch_add(v->started, 1);
    return NULL;
  }
  atomic_fetch_add(v->started, 1);
  for (int r = 0; r < v->rounds; ++r) {
    size_t off = (size_t)(dc_test_rand(&rng) % v->length);
    size_t n = 1 + (size_t)(dc_test_rand(&rng) % (v->length - off));
    dc_buffer_t* view = NULL;
    if (dc_buffer_create_view(mine, off, n, &view) != DC_OK) {
      v->failed++;
      continue;
    }
    dc_buffer_retain(view);
    uint32_t first = 0, last = 0;
    if (dc_buffer_read(view, 0, &first, 1) != DC_OK ||
        dc_buffer_read(view, n - 1, &last, 1) != DC_OK) {
      v->failed++;
    } else if (first != off || last != off + n - 1) {
      v->wrong++;
    }
    dc_buffer_release(view);
    dc_buffer_release(view);
  }
  dc_buffer_release(mine);
  return NULL;
}

START_TEST(test_pool_stress_views_of_one_buffer) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  p.thread_count = 1;
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_device_t* cpu = dc_test_cpu(ctx);
  size_t n = 4096;
  dc_buffer_t* root = dc_test_buffer_new(cpu, DC_DTYPE_U32, n, "shared");
  uint32_t* host = NULL;
  DC_CK_OK(dc_buffer_host_pointer(root, (void**)&host));
  for (size_t i = 0; i < n; ++i) host[i] = (uint32_t)i;

  atomic_int started = 0;
  viewer_t viewers[THREADS];
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    viewers[i] = (viewer_t){root, n, &started, 4000, 0, 0};
    ck_assert_int_eq(
        pthread_create(&threads[i], NULL, viewer_thread, &viewers[i]), 0);
  }
  // Drop the host's references while the views are in use.
  while (atomic_load(&started) < THREADS) sched_yield();
  dc_buffer_release(root);
  dc_context_release(ctx);
  for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < THREADS; ++i) {
    ck_assert_uint_eq(viewers[i].failed, 0);
    ck_assert_uint_eq(viewers[i].wrong, 0);
  }
  // The last view released the root, its memory and the context.
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

static Suite* pool_stress_suite(void) {
  Suite* s = suite_create("pool_stress");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, env_fixture, env_fixture);
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_pool_stress_create_release_with_trims);
  tcase_add_test(core, test_pool_stress_tight_budget);
  suite_add_tcase(s, core);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, env_fixture, env_fixture);
  tcase_set_timeout(lifecycle, 120);
  tcase_add_test(lifecycle, test_pool_stress_views_of_one_buffer);
  suite_add_tcase(s, lifecycle);
  return s;
}

DC_CHECK_MAIN(pool_stress_suite)

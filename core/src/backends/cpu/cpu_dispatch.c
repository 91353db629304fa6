// cpu_dispatch.c: running a CPU kernel: its work-groups over the
// context's worker pool, cooperative kernels with a grid barrier, native
// kernels, and a checked kernel's faults and stops.
// SPDX-License-Identifier: MIT
#include <limits.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "futex.h"
#include "log_internal.h"

//===-- The grid barrier -------------------------------------------------===//

// dc_grid_sync() across the groups of a cooperative dispatch, one thread
// per group (dc_worker_pool_gang): a sense-reversing barrier. Each thread
// reads the generation, then arrives; the last to arrive resets the count
// and moves the generation on, which releases the others (they spin a
// little, then sleep on it). The arrivals' read-modify-writes and the
// generation's store and loads order every group's memory accesses before
// the barrier ahead of every group's accesses after it.
//
// A group whose kernel returns while another waits at a barrier (the
// kernel reached dc_grid_sync() in some groups but not in others) would
// leave that one waiting for ever: arriving and exiting each check the
// other's counter (sequentially consistent on both sides, so at least one
// sees the other), and whichever notices breaks the barrier (an arrival
// only while the generation has not moved: exits after a release are
// normal): it releases every waiter and lets every later dc_grid_sync()
// through, the dispatch runs to its end and fails. A bounds-check fault does not stop a group
// (the access is skipped), so a faulting group still arrives.
typedef struct cpu_grid_t {
  unsigned count;     // groups, one thread each
  uint64_t spin_ns;   // how long a waiter spins before it sleeps
  alignas(64) atomic_uint arrived;
  alignas(64) atomic_uint generation;
  atomic_uint sleepers;
  atomic_uint exited;  // groups whose kernel has returned
  atomic_bool broken;
} cpu_grid_t;

static void grid_break(cpu_grid_t* g) {
  atomic_store(&g->broken, true);
  atomic_fetch_add(&g->generation, 1u);
  dc__futex_wake(&g->generation, INT_MAX);
}

static void grid_sync(void* ctx) {
  cpu_grid_t* g = ctx;
  if (atomic_load(&g->broken)) return;
  unsigned gen = atomic_load(&g->generation);
  if (atomic_fetch_add(&g->arrived, 1u) + 1u == g->count) {
    atomic_store(&g->arrived, 0u);  // before anyone can arrive again
    atomic_store(&g->generation, gen + 1u);
    if (atomic_load(&g->sleepers) != 0u) {
      dc__futex_wake(&g->generation, INT_MAX);
    }
    return;
  }
  // An exit breaks the barrier only if the barrier still holds: the last
  // group may have arrived since, released it, and it or another group
  // returned, all before this look. exited is read first: an exit seen
  // here that came after the release also shows the moved generation.
  if (atomic_load(&g->exited) != 0u && atomic_load(&g->generation) == gen) {
    grid_break(g);  // a group returned without arriving: it never will
    return;
  }
  uint64_t deadline = 0;
  for (unsigned i = 1; atomic_load(&g->generation) == gen; ++i) {
    dc__cpu_relax();
    if ((i & 63) != 0) continue;
    uint64_t now = dc__now_ns();
    if (deadline == 0) deadline = now + g->spin_ns;
    if (now >= deadline) break;
  }
  if (atomic_load(&g->generation) != gen) return;
  atomic_fetch_add(&g->sleepers, 1u);
  while (atomic_load(&g->generation) == gen) {
    dc__futex_wait(&g->generation, gen);
  }
  atomic_fetch_sub(&g->sleepers, 1u);
}

// A group's kernel has returned: it arrives at no barrier any more.
static void grid_exit(cpu_grid_t* g) {
  atomic_fetch_add(&g->exited, 1u);
  if (atomic_load(&g->arrived) != 0u) grid_break(g);
}

//===-- Dispatch --------------------------------------------------------===//

typedef struct cpu_job_t {
  const dc__cpu_kernel_t* kernel;
  const dc_c_launch_t* launch;
  void* const* args;
  const size_t* lengths;
  char* memory;        // per thread: local memory, then scratch
  size_t per_thread;
  size_t local_bytes;
  dc_c_fault_t fault;
  cpu_grid_t* grid;    // a cooperative dispatch's barrier, else NULL
} cpu_job_t;

static dc_status_t run_groups(void* user_data, size_t begin, size_t end,
                              uint32_t thread) {
  cpu_job_t* job = user_data;
  char* mem = job->memory ? job->memory + thread * job->per_thread : NULL;
  job->kernel->run(job->launch, job->args, job->lengths, begin, end, mem,
                   mem ? mem + job->local_bytes : NULL, &job->fault);
  if (job->grid != NULL) grid_exit(job->grid);
  return DC_OK;
}

// Runs a cooperative dispatch: every group at once, each on a thread of
// its own, meeting at grid_sync(). dc__kernel_prepare() has checked that
// the groups fit the pool (max_cooperative_groups).
static dc_status_t run_cooperative(const dc__cpu_kernel_t* k,
                                   dc_worker_pool_t* pool, size_t groups,
                                   dc_c_launch_t* launch, cpu_job_t* job) {
  cpu_grid_t grid = {
      .count = (unsigned)groups,
      .spin_ns = dc_worker_pool_idle_policy(pool) == DC_IDLE_POWER ? 0
                                                                   : 50000,
  };
  launch->grid_sync = grid_sync;
  launch->grid_sync_ctx = &grid;
  job->grid = &grid;
  dc_status_t st =
      dc_worker_pool_gang(pool, (uint32_t)groups, run_groups, job);
  if (st != DC_OK) {
    char why[512];
    dc__strlcpy(why, dc_last_error(), sizeof(why));
    return DC_FAIL(st, "dc_kernel_dispatch: kernel '%s' synchronises its "
                   "grid (dc_grid_sync), but its %zu work-groups cannot run "
                   "at once: %s",
                   k->name, groups, why);
  }
  if (atomic_load(&grid.broken) && !job->fault.set) {
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "dc_kernel_dispatch: kernel '%s' reached dc_grid_sync() "
                   "in some work-groups but not in others (every work-group "
                   "must reach each one); its results are undefined",
                   k->name);
  }
  return DC_OK;
}

static dc_status_t report_fault(const dc_kernel_t* k, const dc_c_fault_t* f) {
  _Static_assert(DC_C_FAULT_POINTER == (int)DC_KERNEL_FAULT_POINTER &&
                     DC_C_FAULT_WATCHDOG == (int)DC_KERNEL_FAULT_WATCHDOG &&
                     DC_C_FAULT_OBJECT == DC_KERNEL_FAULT_OBJECT,
                 "dc/kernel_abi_c.h's fault kinds are dc/backend.h's");
  dc_kernel_fault_t fault = {.set = 1, .kind = (uint32_t)f->kind,
                             .arg = f->arg, .line = f->line,
                             .index = f->index, .length = f->length,
                             .size = f->size};
  return dc_kernel_fault_status(k, "dc_kernel_dispatch", &fault);
}

// What a checked kernel's polls ask (dc/kernel_abi_c.h): whether the context was
// interrupted since the dispatch started, or its time limit has passed.
typedef struct cpu_watch_t {
  const unsigned* interrupts;
  unsigned interrupts_at_start;
  uint64_t deadline_ns;  // 0: none
} cpu_watch_t;

static unsigned cpu_poll(const dc_c_launch_t* launch) {
  const cpu_watch_t* w = launch->poll_ctx;
  if (w->interrupts != NULL &&
      __atomic_load_n(w->interrupts, __ATOMIC_RELAXED) !=
          w->interrupts_at_start) {
    return DC_C_FAULT_STOPPED;
  }
  if (w->deadline_ns != 0 && dc__now_ns() > w->deadline_ns) {
    return DC_C_FAULT_WATCHDOG;
  }
  return 0;
}

// A native kernel's work-groups: one call of the host function each, with
// __local arguments pointing into the thread's block.
typedef struct native_job_t {
  const dc_native_kernel_t* kernel;
  const dc_launch_t* launch;
  void* const* args;
  char* memory;
  size_t per_thread;
} native_job_t;

static dc_status_t run_native_groups(void* user_data, size_t begin, size_t end,
                                     uint32_t thread) {
  native_job_t* job = user_data;
  const dc_native_kernel_t* k = job->kernel;
  const dc_launch_t* l = job->launch;
  void* args[DC_KERNEL_MAX_ARGS];
  char* local = job->memory ? job->memory + thread * job->per_thread : NULL;
  for (size_t i = 0; i < k->arg_count; ++i) {
    args[i] = k->args[i].kind == DC_ARG_LOCAL
                  ? local + (uintptr_t)job->args[i]
                  : job->args[i];
  }
  dc_native_group_t g = {.dims = l->dims, .thread_index = thread};
  for (size_t group = begin; group < end; ++group) {
    size_t rest = group;
    for (int d = 0; d < 3; ++d) {
      g.group_id[d] = rest % l->groups[d];
      rest /= l->groups[d];
      g.local_size[d] = l->local[d];
      g.global_size[d] = l->global[d];
      g.first_global_id[d] = l->offset[d] + g.group_id[d] * l->local[d];
    }
    DC_RETURN_IF_ERROR(k->fn(k->user_data, &g, args));
  }
  return DC_OK;
}

// Allocates |threads| blocks of |per_thread| bytes, 64-byte aligned; NULL
// for zero bytes. |*out_size| receives what to free.
static dc_status_t thread_blocks(dc_device_t* device, const char* kernel,
                                 size_t per_thread, size_t threads,
                                 void** out_block, char** out_memory,
                                 size_t* out_size) {
  *out_block = NULL;
  *out_memory = NULL;
  *out_size = per_thread ? threads * per_thread + 64 : 0;
  if (*out_size == 0) return DC_OK;
  *out_block = dc_allocator_malloc(dc_context_allocator(device->context),
                                   *out_size);
  if (*out_block == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_kernel_dispatch: kernel '%s': no memory for %zu bytes "
                   "of work-group storage",
                   kernel, *out_size);
  }
  *out_memory = (char*)DC_ALIGN_UP((uintptr_t)*out_block, 64);
  return DC_OK;
}

static dc_status_t dispatch_native(dc_device_t* device, dc_kernel_t* kernel,
                                   const dc_launch_t* l, void* const* args) {
  dc_native_kernel_t native;
  if (!dc_kernel_native(kernel, &native)) {
    return DC_FAIL(DC_ERR_INTERNAL,
                   "dc_kernel_dispatch: kernel '%s' was not built for the "
                   "CPU device",
                   dc_kernel_name(kernel));
  }
  dc_worker_pool_t* pool = dc_context_worker_pool(device->context);
  size_t threads = dc_worker_pool_thread_count(pool);
  size_t groups = l->groups[0] * l->groups[1] * l->groups[2];
  native_job_t job = {.kernel = &native, .launch = l, .args = args,
                      .per_thread = DC_ALIGN_UP(l->local_memory, 64)};
  void* block;
  size_t size;
  DC_RETURN_IF_ERROR(thread_blocks(device, dc_kernel_name(kernel),
                                   job.per_thread, threads, &block,
                                   &job.memory, &size));
  size_t chunk = DC_MAX(groups / (threads * 4), (size_t)1);
  dc_status_t st = dc_worker_pool_parallel_for(pool, 0, groups, chunk,
                                               run_native_groups, &job);
  dc_allocator_free(dc_context_allocator(device->context), block, size);
  return st;
}

dc_status_t dc__cpu_dispatch(dc_device_t* device, dc_kernel_t* kernel,
                             const dc_launch_t* l, void* const* args,
                             const size_t* lengths) {
  // A native kernel has no build, so no backend data.
  const dc__cpu_kernel_t* ck = dc_kernel_backend_data(kernel);
  if (ck == NULL) return dispatch_native(device, kernel, l, args);
  cpu_watch_t watch = {
      .interrupts = l->interrupts,
      .interrupts_at_start = l->interrupts_at_start,
      .deadline_ns = l->time_limit_ns ? dc__now_ns() + l->time_limit_ns : 0};
  dc_c_launch_t launch = {.work_dim = l->dims, .poll = cpu_poll,
                         .poll_ctx = &watch};
  for (int d = 0; d < 3; ++d) {
    launch.global_size[d] = l->global[d];
    launch.global_offset[d] = l->offset[d];
    launch.local_size[d] = l->local[d];
    launch.num_groups[d] = l->groups[d];
  }
  size_t group_size = l->local[0] * l->local[1] * l->local[2];
  size_t groups = l->groups[0] * l->groups[1] * l->groups[2];
  dc_worker_pool_t* pool = dc_context_worker_pool(device->context);
  size_t threads = dc_worker_pool_thread_count(pool);
  cpu_job_t job = {.kernel = ck, .launch = &launch, .args = args,
                   .lengths = lengths,
                   .local_bytes = DC_ALIGN_UP(l->local_memory, 64)};
  job.per_thread = job.local_bytes +
                   DC_ALIGN_UP(ck->scratch_size(group_size), 64);
  void* block;
  size_t memory_size;
  DC_RETURN_IF_ERROR(thread_blocks(device, ck->name, job.per_thread,
                                   threads, &block, &job.memory,
                                   &memory_size));
  // Kernels without barriers do the same work in every group: one
  // contiguous range per thread, as a static OpenMP loop splits it, streams
  // memory best. Barrier kernels keep smaller chunks to balance.
  size_t chunks_per_thread = ck->uses_barrier ? 4 : 1;
  size_t chunk = DC_MAX((groups + threads * chunks_per_thread - 1) /
                            (threads * chunks_per_thread),
                        (size_t)1);
  dc_status_t st =
      ck->uses_grid_sync
          ? run_cooperative(ck, pool, groups, &launch, &job)
          : dc_worker_pool_parallel_for(pool, 0, groups, chunk, run_groups,
                                        &job);
  dc_allocator_free(dc_context_allocator(device->context), block,
                    memory_size);
  if (st == DC_OK && job.fault.set) st = report_fault(kernel, &job.fault);
  return st;
}


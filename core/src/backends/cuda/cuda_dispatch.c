// cuda_dispatch.c: launching kernels on a CUDA device, the group size the
// occupancy API suggests, and the matrix product through cuBLAS.
//
// A dispatch is one launch of the kernel's function (a cooperative launch
// for a kernel that synchronises its grid), either on the device stream
// followed by a synchronize, as every synchronous operation of the
// backend ends (cuda_internal.h), or on a device queue without waiting. A
// kernel whose outcome the host must read back (bounds checking, grid
// sync) always waits, on the queue when it has one. A checked one runs
// in slices of its groups (dc_launch_slicer_t), the next queued behind
// the one that runs, which the host watches: once the time limit passes
// or dc_context_interrupt() is called, it writes the module's stop word
// on a stream of its own, which the copy engine runs beside the kernel,
// for the kernel's loops to read, and queues no further slice.
// Its parameters follow cuda_codegen.h: the launch record, the buffer
// lengths when bounds checking, then the kernel's arguments, where a
// __local argument is its offset into the dynamic shared memory. The
// engine places __local arguments after the kernel's own __local
// variables (their size rounded up to 64 bytes, kernel.c); on CUDA those
// variables are static shared memory of their own, so the dynamic part
// starts at that rounded size, which is subtracted from each offset.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "cuda_kernel.h"

// What a block may use without opting in to more.
#define DEFAULT_SHARED_LIMIT ((size_t)48 << 10)
// CUDA's limits on block and grid dimensions (every GPU since Kepler).
#define MAX_BLOCK_XY 1024
#define MAX_BLOCK_Z 64
#define MAX_GRID_X 2147483647u
#define MAX_GRID_YZ 65535u

static const char* kFn = "dc_kernel_dispatch";

static size_t dynamic_base(const dc__cuda_kernel_t* ck) {
  return DC_ALIGN_UP(ck->static_shared, 64);
}

static void pack_params(const dc__cuda_kernel_t* ck, const dc_launch_t* l, void* const* args,
                        const size_t* lengths, dc__cuda_params_t* p) {
  size_t n = 0, count = ck->arg_count;
  p->record.dims = l->dims;
  for (int d = 0; d < 3; ++d) p->record.offset[d] = l->offset[d];
  p->record.watchdog_ns = ck->checked ? l->time_limit_ns : 0;
  for (int d = 0; d < 3; ++d) {
    p->record.group_base[d] = 0;
    p->record.groups[d] = l->groups[d];
  }
  p->params[n++] = &p->record;
  if (ck->checked) {
    p->lengths[0] = 0;  // a kernel without arguments still takes one
    for (size_t i = 0; i < count; ++i) p->lengths[i] = lengths[i];
    p->params[n++] = p->lengths;
  }
  for (size_t i = 0; i < count; ++i) {
    switch (ck->arg_kinds[i]) {
      case DC_ARG_BUFFER:  // the argument is the device address
        p->params[n++] = (void*)&args[i];
        break;
      case DC_ARG_LOCAL:
        p->local_offsets[i] = (uintptr_t)args[i] - dynamic_base(ck);
        p->params[n++] = &p->local_offsets[i];
        break;
      case DC_ARG_SCALAR:  // the argument points to the value's bytes
      case DC_ARG_RECORD:
        // The driver copies each parameter with its size and alignment
        // from the function's own parameter layout, which the generated
        // code asserts equals the front end's (the host's).
        p->params[n++] = args[i];
        break;
    }
  }
}

// The launch shapes CUDA refuses, with messages that say why.
static dc_status_t check_shape(const dc__cuda_device_t* cuda,
                               const dc__cuda_kernel_t* ck,
                               const dc_launch_t* l) {
  const char* name = cuda->base.info.name;
  size_t block = l->local[0] * l->local[1] * l->local[2];
  if (block > (size_t)ck->max_threads) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' runs at most %d work-items per group on "
                   "%s (what its registers allow); the dispatch asks for %zu",
                   kFn, ck->name, ck->max_threads, name, block);
  }
  if (l->local[0] > MAX_BLOCK_XY || l->local[1] > MAX_BLOCK_XY ||
      l->local[2] > MAX_BLOCK_Z) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': a work-group of %zux%zux%zu is more than "
                   "%s allows per dimension (%dx%dx%d)",
                   kFn, ck->name, l->local[0], l->local[1], l->local[2],
                   name, MAX_BLOCK_XY, MAX_BLOCK_XY, MAX_BLOCK_Z);
  }
  if (l->groups[0] > MAX_GRID_X || l->groups[1] > MAX_GRID_YZ ||
      l->groups[2] > MAX_GRID_YZ) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': %zux%zux%zu work-groups are more than %s "
                   "allows per dimension (%ux%ux%u); use larger groups or "
                   "put the largest dimension first",
                   kFn, ck->name, l->groups[0], l->groups[1], l->groups[2],
                   name, MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ);
  }
  return DC_OK;
}

// Whether a launch with |dynamic| bytes of dynamic shared memory must
// first opt the kernel in to more than it has.
static bool needs_opt_in(const dc__cuda_kernel_t* ck, size_t dynamic) {
  return ck->static_shared + dynamic > DEFAULT_SHARED_LIMIT &&
         dynamic > (size_t)atomic_load(&ck->dynamic_limit);
}

// Opts the kernel in to |dynamic| bytes of dynamic shared memory when its
// total passes the default limit. Called with the lock held.
static dc_status_t allow_dynamic_shared(dc__cuda_device_t* cuda,
                                        dc__cuda_kernel_t* ck,
                                        size_t dynamic) {
  if (!needs_opt_in(ck, dynamic)) return DC_OK;
  CUresult r = cuda->api->cu->func_set_attribute(
      ck->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
      (int)dynamic);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r,
                           "kernel '%s': opting in to %zu bytes of dynamic "
                           "shared memory",
                           ck->name, dynamic);
  }
  atomic_store(&ck->dynamic_limit, (int)dynamic);
  return DC_OK;
}

// A grid-synchronising kernel needs every group resident at once: at most
// the occupancy API's blocks per SM times the SMs. Called with the lock
// held.
static dc_status_t check_residency(dc__cuda_device_t* cuda,
                                   const dc__cuda_kernel_t* ck,
                                   const dc_launch_t* l, size_t dynamic) {
  const char* name = cuda->base.info.name;
  size_t groups = l->groups[0] * l->groups[1] * l->groups[2];
  size_t block = l->local[0] * l->local[1] * l->local[2];
  if (!cuda->cooperative) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' synchronises its grid (dc_grid_sync) but "
                   "%s cannot run cooperative kernels",
                   kFn, ck->name, name);
  }
  int per_sm = 0;
  CUresult r = cuda->api->cu->occupancy_max_active_blocks(&per_sm, ck->function,
                                                          (int)block, dynamic);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r,
                           "cuOccupancyMaxActiveBlocksPerMultiprocessor of "
                           "kernel '%s'",
                           ck->name);
  }
  size_t resident = (size_t)per_sm * (size_t)cuda->sm_count;
  if (groups > resident) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' synchronises its grid (dc_grid_sync) but "
                   "its %zu work-groups cannot all be resident on %s at once "
                   "(at most %zu of %zu work-items); use fewer, larger "
                   "groups",
                   kFn, ck->name, groups, name, resident, block);
  }
  return DC_OK;
}

// Zeroes the module's grid barrier and fault record before a launch that
// uses them. Called with the lock held.
static dc_status_t reset_state(dc__cuda_device_t* cuda,
                               const dc__cuda_kernel_t* ck, CUstream stream) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = CUDA_SUCCESS;
  if (ck->uses_grid_sync) {
    r = cu->memset_d32_async(ck->module->grid, 0,
                             sizeof(dc__cuda_grid_state_t) / 4, stream);
  }
  if (r == CUDA_SUCCESS && ck->checked) {
    r = cu->memset_d32_async(ck->module->fault, 0,
                             sizeof(dc__cuda_fault_state_t) / 4, stream);
  }
  if (r == CUDA_SUCCESS && ck->checked) {
    r = cu->memset_d32_async(ck->module->stop, 0, 1, stream);
  }
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "resetting kernel '%s''s state",
                           ck->name);
  }
  return DC_OK;
}

// Launches on |stream|, and with |wait| waits for the kernel to finish.
static dc_status_t launch(dc__cuda_device_t* cuda,
                          const dc__cuda_kernel_t* ck, const dc_launch_t* l,
                          size_t dynamic, dc__cuda_params_t* p,
                          CUstream stream, bool wait) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  unsigned gx = p->grid[0], gy = p->grid[1], gz = p->grid[2];
  unsigned bx = (unsigned)l->local[0], by = (unsigned)l->local[1],
           bz = (unsigned)l->local[2];
  CUresult r =
      ck->uses_grid_sync
          ? cu->launch_cooperative_kernel(p->function, gx, gy, gz, bx, by, bz,
                                          (unsigned)dynamic, stream, p->params)
          : cu->launch_kernel(p->function, gx, gy, gz, bx, by, bz,
                              (unsigned)dynamic, stream, p->params, NULL);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(
        cuda, r,
        "%s of kernel '%s' (%ux%ux%u groups of "
        "%ux%ux%u)",
        ck->uses_grid_sync ? "cuLaunchCooperativeKernel" : "cuLaunchKernel",
        ck->name, gx, gy, gz, bx, by, bz);
  }
  if (!wait) return DC_OK;
  char what[300];
  snprintf(what, sizeof(what), "kernel '%s'", ck->name);
  return dc__cuda_wait(cuda, stream, what);
}

// Reads |size| bytes of module state back after the launch.
static dc_status_t read_state(dc__cuda_device_t* cuda,
                              const dc__cuda_kernel_t* ck, CUdeviceptr from,
                              void* to, size_t size, CUstream stream) {
  CUresult r = cuda->api->cu->memcpy_dtoh_async(to, from, size, stream);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "reading kernel '%s''s state",
                           ck->name);
  }
  return dc__cuda_wait(cuda, stream, "reading a kernel's state");
}

//===-- Checked dispatches in slices ------------------------------------===//

// Makes the control stream and the slice events on the first checked
// dispatch. Called with the lock held and the context current.
static dc_status_t ready_slicing(dc__cuda_device_t* cuda) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  CUresult r = CUDA_SUCCESS;
  if (cuda->control == NULL) {
    r = cu->stream_create(&cuda->control, CU_STREAM_NON_BLOCKING);
  }
  for (int i = 0; i < 2 && r == CUDA_SUCCESS; ++i) {
    if (cuda->slice_done[i] == NULL) {
      r = cu->event_create(&cuda->slice_done[i], CU_EVENT_DISABLE_TIMING);
    }
  }
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "making the stream and events of "
                           "checked dispatches");
  }
  return DC_OK;
}

void dc__cuda_dispatch_teardown(dc__cuda_device_t* cuda) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  if (cuda->control != NULL) cu->stream_destroy(cuda->control);
  cuda->control = NULL;
  for (int i = 0; i < 2; ++i) {
    if (cuda->slice_done[i] != NULL) cu->event_destroy(cuda->slice_done[i]);
    cuda->slice_done[i] = NULL;
  }
}

// Launches the slicer's next slice, if any, and records |done| behind it
// (*launched: whether there was one).
static dc_status_t launch_next(dc__cuda_device_t* cuda,
                               const dc__cuda_kernel_t* ck,
                               const dc_launch_t* l, size_t dynamic,
                               dc__cuda_params_t* p, CUstream stream,
                               dc_launch_slicer_t* slicer, CUevent done,
                               bool* launched) {
  dc_launch_slice_t slice;
  *launched = dc_launch_slicer_next(slicer, &slice);
  if (!*launched) return DC_OK;
  // The driver copies the parameters at the launch: the record is free
  // for the next slice once this returns.
  for (int d = 0; d < 3; ++d) {
    p->record.group_base[d] = slice.first[d];
    p->grid[d] = (unsigned)slice.groups[d];
  }
  DC_RETURN_IF_ERROR(launch(cuda, ck, l, dynamic, p, stream, false));
  CUresult r = cuda->api->cu->event_record(done, stream);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "recording the end of a slice of kernel "
                           "'%s'", ck->name);
  }
  return DC_OK;
}

// The values of the stop word (DC_KFAULT_*). Static: the copy that
// writes one may read it after the call that enqueued it returned.
static const uint32_t kStopped = DC_KERNEL_FAULT_STOPPED,
                      kWatchdog = DC_KERNEL_FAULT_WATCHDOG;

// Waits for the slice that ends at |done|. Once the dispatch must stop,
// now or before (|*stop| is then the fault kind), writes the module's
// stop word on the control stream for the kernel's loops to read
// (|*told|: it was written).
static dc_status_t watch(dc__cuda_device_t* cuda, const dc__cuda_kernel_t* ck,
                         const dc_launch_slicer_t* slicer, CUevent done,
                         int* stop, bool* told) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  uint64_t begun = dc__now_ns();
  CUresult r;
  while ((r = cu->event_query(done)) == CUDA_ERROR_NOT_READY) {
    if (*stop < 0) *stop = dc_launch_stop_reason(slicer);
    if (*stop >= 0 && !*told) {
      r = cu->memcpy_htod_async(
          ck->module->stop,
          *stop == DC_KERNEL_FAULT_STOPPED ? &kStopped : &kWatchdog,
          sizeof(uint32_t), cuda->control);
      if (r != CUDA_SUCCESS) break;
      *told = true;
    }
    dc_launch_watch_pause(begun, false);
  }
  if (r != CUDA_SUCCESS) {
    // Whatever failed, the slice must end before its state is reused.
    cu->event_synchronize(done);
    return dc__cuda_failed(cuda, r, "kernel '%s'", ck->name);
  }
  return DC_OK;
}

// Runs a checked kernel in slices (dc_launch_slicer_t) until the last or
// until the dispatch must stop: then |*stop| is the fault kind (else -1).
// While one slice runs and is watched, the next waits behind it on the
// stream, so that the GPU never idles between two; a stop launches no
// further slice. A kernel that synchronises its grid needs all of it at
// once; its groups are few (all resident), so it runs whole.
static dc_status_t launch_slices(dc__cuda_device_t* cuda,
                                 const dc__cuda_kernel_t* ck,
                                 const dc_launch_t* l, size_t dynamic,
                                 dc__cuda_params_t* p, CUstream stream,
                                 int* stop) {
  *stop = -1;
  if (ck->uses_grid_sync) return launch(cuda, ck, l, dynamic, p, stream, true);
  DC_RETURN_IF_ERROR(ready_slicing(cuda));
  dc_launch_slicer_t slicer;
  dc_launch_slicer_init(&slicer, l);
  uint64_t since = slicer.start_ns;
  bool told = false, running = false, queued = false;
  int now = 0;  // the slice_done event of the slice that runs
  dc_status_t st = launch_next(cuda, ck, l, dynamic, p, stream, &slicer,
                               cuda->slice_done[now], &running);
  while (st == DC_OK && running) {
    if (*stop < 0 && (*stop = dc_launch_stop_reason(&slicer)) < 0) {
      st = launch_next(cuda, ck, l, dynamic, p, stream, &slicer,
                       cuda->slice_done[1 - now], &queued);
    }
    dc_status_t ended =
        watch(cuda, ck, &slicer, cuda->slice_done[now], stop, &told);
    if (st == DC_OK) st = ended;
    uint64_t t = dc__now_ns();
    dc_launch_slicer_took(&slicer, t - since);  // queued back to back
    since = t;
    running = queued;
    queued = false;
    now = 1 - now;
  }
  if (running) cuda->api->cu->event_synchronize(cuda->slice_done[now]);
  // The stop word's write lands before its next reset.
  if (told) {
    dc_status_t landed = dc__cuda_wait(cuda, cuda->control, "a stop word");
    if (st == DC_OK) st = landed;
  }
  // A stop fails a dispatch that had slices left, whatever the fault
  // record says; one seen while the last slice ran only if it recorded it.
  if (slicer.done) *stop = -1;
  return st;
}

// After the launch: a bounds-check fault, a stop between slices (|stop|,
// a fault kind, or -1), or a grid barrier some groups never reached,
// fails the dispatch as on the CPU device.
static dc_status_t check_outcome(dc__cuda_device_t* cuda, const dc_kernel_t* k,
                                 const dc__cuda_kernel_t* ck, int stop,
                                 CUstream stream) {
  if (ck->checked) {
    dc__cuda_fault_state_t f;
    DC_RETURN_IF_ERROR(
        read_state(cuda, ck, ck->module->fault, &f, sizeof(f), stream));
    if (f.set) {
      dc_kernel_fault_t fault = {.set = 1, .kind = f.kind, .arg = f.arg,
                                 .line = f.line, .index = f.index,
                                 .length = f.length, .size = f.size};
      return dc_kernel_fault_status(k, kFn, &fault);
    }
    if (stop >= 0) {
      dc_kernel_fault_t fault = {.set = 1, .kind = (uint32_t)stop};
      return dc_kernel_fault_status(k, kFn, &fault);
    }
  }
  if (ck->uses_grid_sync) {
    dc__cuda_grid_state_t g;
    DC_RETURN_IF_ERROR(
        read_state(cuda, ck, ck->module->grid, &g, sizeof(g), stream));
    if (g.broken) {
      return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                     "%s: kernel '%s' reached dc_grid_sync() in some "
                     "work-groups but not in others (every work-group must "
                     "reach each one); its results are undefined",
                     kFn, ck->name);
    }
  }
  return DC_OK;
}

// Whether two buffer arguments of a launch share a byte.
static bool buffers_overlap(const dc__cuda_kernel_t* ck, void* const* args,
                            const size_t* lengths) {
  for (size_t i = 0; i < ck->arg_count; ++i) {
    if (ck->arg_kinds[i] != DC_ARG_BUFFER || lengths[i] == 0) continue;
    uintptr_t a = (uintptr_t)args[i];
    for (size_t j = i + 1; j < ck->arg_count; ++j) {
      if (ck->arg_kinds[j] != DC_ARG_BUFFER || lengths[j] == 0) continue;
      uintptr_t b = (uintptr_t)args[j];
      if (a < b + lengths[j] && b < a + lengths[i]) return true;
    }
  }
  return false;
}

// Whether launch |l| runs the kernel's coarsened entry: the kernel has
// one, the groups of the last dimension divide by DC_CUDA_ITEMS, the
// grid's threads still fill the GPU at least COARSE_MIN_FILLS times, and
// no two buffers overlap (its pointers are restrict). One thread then
// keeps several items' loads in flight, which is what a memory-bound
// kernel of one element per work-item lacks (docs/cuda.md).
#define COARSE_MIN_FILLS 4
static bool runs_coarse(const dc__cuda_kernel_t* ck, const dc_launch_t* l,
                        void* const* args, const size_t* lengths) {
  if (ck->coarse == NULL || l->dims < 1 || l->dims > 3 ||
      l->groups[l->dims - 1] % DC_CUDA_ITEMS != 0) {
    return false;
  }
  size_t threads = l->global[0] * l->global[1] * l->global[2] / DC_CUDA_ITEMS;
  size_t fill = (size_t)ck->min_grid * (size_t)ck->preferred_block;
  return threads >= COARSE_MIN_FILLS * fill &&
         !buffers_overlap(ck, args, lengths);
}

dc_status_t dc__cuda_prepare_launch(dc__cuda_device_t* cuda,
                                    dc__cuda_kernel_t* ck,
                                    const dc_launch_t* l, void* const* args,
                                    const size_t* lengths,
                                    dc__cuda_params_t* p,
                                    size_t* out_dynamic) {
  DC_RETURN_IF_ERROR(check_shape(cuda, ck, l));
  size_t base = dynamic_base(ck);
  *out_dynamic = l->local_memory > base ? l->local_memory - base : 0;
  pack_params(ck, l, args, lengths, p);
  p->function = ck->function;
  for (int d = 0; d < 3; ++d) p->grid[d] = (unsigned)l->groups[d];
  if (runs_coarse(ck, l, args, lengths)) {
    p->function = ck->coarse;
    p->grid[l->dims - 1] /= DC_CUDA_ITEMS;
  }
  return allow_dynamic_shared(cuda, ck, *out_dynamic);
}

// Runs a dispatch on |stream| (NULL: the device stream), waiting for it
// when |wait| or when its outcome must be read back.
static dc_status_t dispatch_on(dc_device_t* device, CUstream stream,
                               bool wait, dc_kernel_t* kernel,
                               const dc_launch_t* l, void* const* args,
                               const size_t* lengths) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  dc__cuda_kernel_t* ck = dc_kernel_backend_data(kernel);
  bool outcome = ck->checked || ck->uses_grid_sync;
  dc__cuda_params_t p;
  size_t base = dynamic_base(ck);
  size_t dynamic = l->local_memory > base ? l->local_memory - base : 0;
  // Held through the wait: the module's outcome state is shared, and so
  // is the device stream. A launch on a queue that reads nothing back and
  // opts in to nothing touches nothing shared: it goes without the lock,
  // so that it never waits behind another stream's copy or write.
  bool exclusive = wait || outcome || stream == NULL ||
                   needs_opt_in(ck, dynamic);
  if (exclusive) pthread_mutex_lock(&cuda->lock);
  if (stream == NULL) stream = cuda->stream;
  dc_status_t st = dc__cuda_enter(cuda);
  if (st == DC_OK) {
    st = dc__cuda_prepare_launch(cuda, ck, l, args, lengths, &p, &dynamic);
  }
  if (st == DC_OK && ck->uses_grid_sync) {
    st = check_residency(cuda, ck, l, dynamic);
  }
  if (st == DC_OK && outcome) st = reset_state(cuda, ck, stream);
  int stop = -1;
  if (st == DC_OK && ck->checked) {
    st = launch_slices(cuda, ck, l, dynamic, &p, stream, &stop);
  } else if (st == DC_OK) {
    st = launch(cuda, ck, l, dynamic, &p, stream, wait || outcome);
  }
  if (st == DC_OK && outcome) {
    st = check_outcome(cuda, kernel, ck, stop, stream);
  }
  return exclusive ? dc__cuda_leave(cuda, st) : dc__cuda_settle(cuda, st);
}

dc_status_t dc__cuda_dispatch(dc_device_t* device, dc_kernel_t* kernel,
                              const dc_launch_t* l, void* const* args,
                              const size_t* lengths) {
  return dispatch_on(device, NULL, true, kernel, l, args, lengths);
}

dc_status_t dc__cuda_dispatch_queued(dc_device_t* device,
                                     dc_device_queue_t* queue,
                                     dc_kernel_t* kernel, const dc_launch_t* l,
                                     void* const* args, const size_t* lengths) {
  return dispatch_on(device, (CUstream)queue, false, kernel, l, args,
                     lengths);
}

//===-- Work-group size -------------------------------------------------===//

int dc__cuda_resident_blocks(dc__cuda_device_t* cuda, CUfunction function,
                             int block, size_t dynamic) {
  int per_sm = 0;
  if (cuda->api->cu->occupancy_max_active_blocks(&per_sm, function, block,
                                                 dynamic) != CUDA_SUCCESS) {
    return 0;
  }
  return per_sm;
}

dc_status_t dc__cuda_best_block(dc__cuda_device_t* cuda, CUfunction function,
                                size_t dynamic, int* out_block,
                                int* out_min_grid) {
  CUresult r = cuda->api->cu->occupancy_max_potential_block_size(
      out_min_grid, out_block, function, NULL, dynamic, 0);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuOccupancyMaxPotentialBlockSize");
  }
  // The API gives the largest block that reaches the best occupancy;
  // smaller blocks that reach it too spread the grid over the SMs in
  // finer pieces, which streaming kernels run measurably faster
  // (docs/benchmarks.md, vector add).
  int best = *out_block * dc__cuda_resident_blocks(cuda, function,
                                                   *out_block, dynamic);
  static const int kSmaller[] = {256, 512};
  for (size_t i = 0; i < sizeof(kSmaller) / sizeof(kSmaller[0]); ++i) {
    int c = kSmaller[i];
    if (c >= *out_block) break;
    int per_sm = dc__cuda_resident_blocks(cuda, function, c, dynamic);
    if (per_sm > 0 && c * per_sm >= best) {
      *out_block = c;
      *out_min_grid = per_sm * cuda->sm_count;
      break;
    }
  }
  return DC_OK;
}

size_t dc__cuda_preferred_group_size(dc_device_t* device,
                                     const dc_kernel_t* kernel,
                                     size_t work_items, size_t local_memory) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  const dc__cuda_kernel_t* ck = dc_kernel_backend_data(kernel);
  if (ck == NULL) return 0;
  int block = ck->preferred_block, min_grid = ck->min_grid;
  size_t base = dynamic_base(ck);
  if (local_memory > base) {  // __local arguments change the answer
    pthread_mutex_lock(&cuda->lock);
    dc_status_t st = dc__cuda_enter(cuda);
    if (st == DC_OK && dc__cuda_best_block(cuda, ck->function,
                                           local_memory - base, &block,
                                           &min_grid) != DC_OK) {
      block = ck->preferred_block;
      min_grid = ck->min_grid;
    }
    pthread_mutex_unlock(&cuda->lock);
  }
  // A grid too small to fill the GPU with groups of that size gets
  // smaller groups, whole warps still, so that more SMs share the work.
  size_t warp = DC_MAX(device->info.simd_width, 1u);
  size_t size = block > 0 ? (size_t)block : warp;
  if (min_grid > 0 && work_items / size < (size_t)min_grid) {
    size_t spread = work_items / (size_t)min_grid / warp * warp;
    size = DC_MAX(spread, warp);
  }
  return size;
}

//===-- Matrix product --------------------------------------------------===//

const char* dc__cuda_matmul_library(dc_device_t* device) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  return cuda->api->cublas != NULL ? "cublas" : NULL;
}

// Creates the device's cuBLAS handle on first use, on the device stream.
// Called with the lock held and the context current.
static dc_status_t cublas_handle(dc__cuda_device_t* cuda) {
  const dc__cuda_cublas_t* blas = cuda->api->cublas;
  if (cuda->cublas != NULL) return DC_OK;
  cublasStatus_t s = blas->create(&cuda->cublas);
  if (s != CUBLAS_STATUS_SUCCESS) {
    cuda->cublas = NULL;
    return DC_FAIL(DC_ERR_UNAVAILABLE, "%s: cublasCreate failed (status %d)",
                   cuda->base.info.name, s);
  }
  s = blas->set_stream(cuda->cublas, cuda->stream);
  if (s != CUBLAS_STATUS_SUCCESS) {
    return DC_FAIL(DC_ERR_INTERNAL, "%s: cublasSetStream failed (status %d)",
                   cuda->base.info.name, s);
  }
  return DC_OK;
}

dc_status_t dc__cuda_matmul(dc_device_t* device, const void* a, const void* b,
                            void* c, size_t m, size_t n, size_t k) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  const dc__cuda_cublas_t* blas = cuda->api->cublas;
  if (blas == NULL) {
    return DC_FAIL(DC_ERR_UNSUPPORTED, "%s: cuBLAS cannot be loaded",
                   device->info.name);
  }
  pthread_mutex_lock(&cuda->lock);
  dc_status_t st = dc__cuda_enter(cuda);
  if (st == DC_OK) st = cublas_handle(cuda);
  if (st == DC_OK) {
    // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS reads the
    // row-major B as the column-major n x k matrix B^T, A as k x m.
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t s =
        blas->sgemm(cuda->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m,
                    (int)k, &alpha, b, (int)n, a, (int)k, &beta, c, (int)n);
    if (s != CUBLAS_STATUS_SUCCESS) {
      st = DC_FAIL(DC_ERR_INTERNAL,
                   "%s: cublasSgemm of %zux%zu by %zux%zu failed (status %d)",
                   device->info.name, m, k, k, n, s);
    }
  }
  if (st == DC_OK) st = dc__cuda_sync(cuda, "matrix product (cuBLAS)");
  return dc__cuda_leave(cuda, st);
}

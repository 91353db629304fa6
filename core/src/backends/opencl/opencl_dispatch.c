// opencl_dispatch.c: launching kernels on an OpenCL device, and the group
// size it suggests.
//
// A dispatch sets the kernel's arguments (DC_KERNEL_DIALECT_OPENCL_C in
// dc/backend.h: a buffer's handle decoded into its cl_mem and byte
// offset, a __local argument's offset into the one __local block, a
// value's bytes) and enqueues it
// with clEnqueueNDRangeKernel, the launch's global offset and its
// explicit group size, either on the device queue followed by clFinish,
// as every synchronous operation ends (opencl_internal.h), or on a
// device queue without waiting. The engine places __local arguments
// after the kernel's own __local variables (their size rounded up to 64
// bytes, kernel.c); on OpenCL those variables are the driver's, so the
// block starts at that rounded size, which is subtracted from each
// offset.
//
// A checked kernel always waits, on its queue when it has one: its fault
// record is read back after it. It runs in slices of its groups
// (dc_launch_slicer_t), each enqueued with the global offset of its first
// work-item and the dc_slice argument that keeps the work-item functions
// the whole dispatch's. While a slice runs, the host watches the time
// limit and the context's interrupt count, and when either ends the
// dispatch it writes the stop word that the kernel's polls read, and
// enqueues no further slice. On a device that shares the host's memory
// (pocl) the word stays mapped and the host stores to it: the driver's
// threads may all be running the kernel, leaving none to run a command.
// On the others it lives in device memory and the host enqueues the
// write on the device's control queue, which the driver runs beside the
// kernel's: a discrete GPU does not see a store through a mapping while a
// kernel runs (NVIDIA's driver did not, and runaway kernels ran on), and
// the kernel's own queue would run the write only after it.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "opencl_kernel.h"

static const char* kFn = "dc_kernel_dispatch";

static size_t local_base(const dc__opencl_kernel_t* ok) {
  return DC_ALIGN_UP(ok->static_local, 64);
}

// The group shapes the device refuses, with a message that says why
// (the core checked the group's size against the kernel's own limit).
static dc_status_t check_shape(const dc__opencl_device_t* ocl,
                               const dc_kernel_t* k, const dc_launch_t* l) {
  const char* name = ocl->base.info.name;
  for (int d = 0; d < 3; ++d) {
    if (l->local[d] > ocl->max_item_sizes[d]) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: kernel '%s': a work-group of %zux%zux%zu is more "
                     "than %s allows per dimension (%zux%zux%zu)",
                     kFn, dc_kernel_name(k), l->local[0], l->local[1],
                     l->local[2], name, ocl->max_item_sizes[0], ocl->max_item_sizes[1],
                     ocl->max_item_sizes[2]);
    }
  }
  return DC_OK;
}

// Sets argument |index| of the cl_kernel (args_lock held) unless it holds
// these bytes already (opencl_kernel.h): comparing the bytes given to
// clSetKernelArg makes a skipped call the same as a repeated one, so a
// different buffer, view offset or value is always set.
static dc_status_t set_arg(dc__opencl_device_t* ocl, const dc_kernel_t* k,
                           cl_uint index, size_t size, const void* value,
                           const char* what) {
  dc__opencl_kernel_t* ok = dc_kernel_backend_data(k);
  dc__opencl_arg_cache_t* c =
      index < DC_OPENCL_CACHED_ARGS ? &ok->args[index] : NULL;
  bool local = value == NULL;
  if (c != NULL && c->size != 0 && c->size == size && c->local == local &&
      (local || memcmp(c->bytes, value, size) == 0)) {
    return DC_OK;
  }
  cl_int err = ocl->cl->set_kernel_arg(ok->kernel, index, size, value);
  if (c != NULL) {
    bool keep = err == CL_SUCCESS &&
                (local || size <= DC_OPENCL_CACHED_ARG_BYTES);
    c->size = keep ? size : 0;
    c->local = local;
    if (keep && !local) memcpy(c->bytes, value, size);
  }
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "clSetKernelArg(%u: %s) of kernel '%s'",
                             index, what, dc_kernel_name(k));
  }
  return DC_OK;
}

// Sets the kernel's own arguments; |*next| gets the index after them.
static dc_status_t set_args(dc__opencl_device_t* ocl, const dc_kernel_t* k,
                            const dc_launch_t* l, void* const* args,
                            cl_uint* next) {
  const dc__opencl_kernel_t* ok = dc_kernel_backend_data(k);
  cl_uint n = 0;
  for (size_t i = 0; i < ok->arg_count; ++i) {
    const dc_kernel_arg_info_t* a = dc_kernel_arg_info(k, i);
    switch (a->kind) {
      case DC_ARG_BUFFER: {
        cl_mem mem;
        size_t at;
        DC_RETURN_IF_ERROR(
            dc__opencl_decode(ocl, args[i], 0, a->name, &mem, &at));
        cl_ulong offset = at;
        DC_RETURN_IF_ERROR(set_arg(ocl, k, n++, sizeof(mem), &mem, a->name));
        DC_RETURN_IF_ERROR(
            set_arg(ocl, k, n++, sizeof(offset), &offset, a->name));
        break;
      }
      case DC_ARG_LOCAL: {
        cl_ulong offset = (uintptr_t)args[i] - local_base(ok);
        DC_RETURN_IF_ERROR(
            set_arg(ocl, k, n++, sizeof(offset), &offset, a->name));
        break;
      }
      case DC_ARG_SCALAR:  // the argument points to the value's bytes
      case DC_ARG_RECORD:
        DC_RETURN_IF_ERROR(set_arg(ocl, k, n++, a->size, args[i], a->name));
        break;
    }
  }
  if (ok->local_block) {
    size_t base = local_base(ok);
    size_t block = l->local_memory > base ? l->local_memory - base : 1;
    DC_RETURN_IF_ERROR(set_arg(ocl, k, n++, block, NULL, "__local block"));
  }
  *next = n;
  return DC_OK;
}

//===-- Checked mode ----------------------------------------------------===//

// Takes an idle state of at least |state_size| bytes, or makes one.
static dc_status_t take_checked(dc__opencl_device_t* ocl, size_t state_size,
                                dc__opencl_checked_t** out) {
  pthread_mutex_lock(&ocl->lock);
  dc__opencl_checked_t** at = &ocl->checked_free;
  while (*at != NULL && (*at)->state_size < state_size) at = &(*at)->next;
  dc__opencl_checked_t* c = *at;
  if (c != NULL) *at = c->next;
  pthread_mutex_unlock(&ocl->lock);
  if (c != NULL) {
    *out = c;
    return DC_OK;
  }
  c = dc_allocator_calloc(ocl->allocator, 1, sizeof(*c));
  if (c == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: no memory for a checked "
                   "dispatch", ocl->base.info.name);
  }
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_int err = CL_SUCCESS;
  cl_mem_flags flags = CL_MEM_READ_WRITE;
  if (ocl->host_unified) flags |= CL_MEM_ALLOC_HOST_PTR;
  c->control = cl->create_buffer(ocl->context, flags, sizeof(cl_uint), NULL,
                                 &err);
  bool mapped = true;
  if (c->control != NULL && ocl->host_unified) {
    c->stop_word = cl->enqueue_map_buffer(ocl->queue, c->control, CL_TRUE,
                                          CL_MAP_WRITE, 0, sizeof(cl_uint), 0,
                                          NULL, NULL, &err);
    mapped = c->stop_word != NULL;
  }
  if (c->control != NULL && mapped) {
    c->state_size = state_size;
    c->state = cl->create_buffer(ocl->context, CL_MEM_READ_WRITE, state_size,
                                 NULL, &err);
  }
  if (c->state == NULL) {
    dc_status_t st = dc__opencl_failed(ocl, err, "checked-mode state");
    if (c->stop_word != NULL) {
      cl->enqueue_unmap_mem_object(ocl->queue, c->control,
                                   (void*)c->stop_word, 0, NULL, NULL);
      cl->finish(ocl->queue);
    }
    if (c->control != NULL) cl->release_mem_object(c->control);
    dc_allocator_free(ocl->allocator, c, sizeof(*c));
    return st;
  }
  *out = c;
  return DC_OK;
}

static void give_checked(dc__opencl_device_t* ocl, dc__opencl_checked_t* c) {
  pthread_mutex_lock(&ocl->lock);
  c->next = ocl->checked_free;
  ocl->checked_free = c;
  pthread_mutex_unlock(&ocl->lock);
}

// The values of the stop word (DC_KFAULT_*; 0: run on). Static: an
// enqueued write reads its source later.
static const cl_uint kRunOn = 0, kStopped = DC_KERNEL_FAULT_STOPPED,
                     kWatchdog = DC_KERNEL_FAULT_WATCHDOG;

// The dc_slice argument (dc/backend.h, DC_KERNEL_DIALECT_OPENCL_C).
typedef struct dc__opencl_slice_t {
  cl_ulong offset[3];
  cl_ulong group_base[3];
  cl_ulong groups[3];
} dc__opencl_slice_t;

// Writes |*value| to |c|'s stop word: through its mapping, or enqueued on
// |queue| (the caller flushes or finishes it).
static cl_int write_stop_word(dc__opencl_device_t* ocl,
                              dc__opencl_checked_t* c, cl_command_queue queue,
                              const cl_uint* value) {
  if (c->stop_word != NULL) {
    *c->stop_word = *value;
    return CL_SUCCESS;
  }
  return ocl->cl->enqueue_write_buffer(queue, c->control, CL_FALSE, 0,
                                       sizeof(*value), value, 0, NULL, NULL);
}

// The checked-mode arguments after the kernel's own, from |next|: the
// lengths, the stop word, the fault record and |slice|.
static dc_status_t set_checked_args(dc__opencl_device_t* ocl,
                                    const dc_kernel_t* k,
                                    const size_t* lengths,
                                    const dc__opencl_checked_t* c,
                                    const dc__opencl_slice_t* slice,
                                    cl_uint next) {
  uint64_t n[DC_KERNEL_MAX_ARGS] = {0};
  const dc__opencl_kernel_t* ok = dc_kernel_backend_data(k);
  size_t count = ok->arg_count;
  for (size_t i = 0; i < count; ++i) n[i] = lengths[i];
  DC_RETURN_IF_ERROR(set_arg(ocl, k, next, sizeof(uint64_t) * DC_MAX(count, 1),
                             n, "lengths"));
  DC_RETURN_IF_ERROR(
      set_arg(ocl, k, next + 1, sizeof(cl_mem), &c->control, "stop word"));
  DC_RETURN_IF_ERROR(
      set_arg(ocl, k, next + 2, sizeof(cl_mem), &c->state, "fault record"));
  return set_arg(ocl, k, next + 3, sizeof(*slice), slice, "slice");
}

// Clears the stop word and the fault record on |queue| before a dispatch.
static dc_status_t reset_checked(dc__opencl_device_t* ocl,
                                 const dc_kernel_t* k,
                                 dc__opencl_checked_t* c,
                                 cl_command_queue queue) {
  dc_kernel_fault_t clear = {0};
  cl_int err = write_stop_word(ocl, c, queue, &kRunOn);
  if (err == CL_SUCCESS) {
    err = ocl->cl->enqueue_write_buffer(queue, c->state, CL_FALSE, 0,
                                        sizeof(clear), &clear, 0, NULL, NULL);
  }
  // The write above reads |clear| later: wait for it before returning.
  if (err == CL_SUCCESS) err = ocl->cl->finish(queue);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "resetting kernel '%s''s fault record",
                             dc_kernel_name(k));
  }
  return DC_OK;
}

// Waits for a checked slice's |done| event. Once the dispatch must stop,
// now or before (|*stop| is then the fault kind), writes the stop word
// for the kernel's polls to read.
static dc_status_t watch(dc__opencl_device_t* ocl, const dc_kernel_t* k,
                         const dc_launch_slicer_t* slicer,
                         dc__opencl_checked_t* c, cl_command_queue queue,
                         cl_event done, int* stop) {
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_int err = cl->flush(queue);
  const dc_launch_t* l = slicer->launch;
  bool watching = l->time_limit_ns != 0 || l->interrupts != NULL;
  bool told = false;
  uint64_t begun = dc__now_ns();
  while (err == CL_SUCCESS && watching) {
    cl_int status = CL_QUEUED;
    err = cl->get_event_info(done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof(status), &status, NULL);
    if (err != CL_SUCCESS || status <= CL_COMPLETE) break;
    if (*stop < 0) *stop = dc_launch_stop_reason(slicer);
    if (*stop >= 0 && !told) {
      err = write_stop_word(ocl, c, ocl->control_queue,
                            *stop == DC_KERNEL_FAULT_STOPPED ? &kStopped
                                                             : &kWatchdog);
      if (err == CL_SUCCESS && c->stop_word == NULL) {
        err = cl->flush(ocl->control_queue);  // to the device now
      }
      told = true;
    }
    dc_launch_watch_pause(begun, ocl->host_unified);
  }
  if (err == CL_SUCCESS) err = cl->wait_for_events(1, &done);
  // An enqueued stop must land before the state's next reset.
  if (err == CL_SUCCESS && told && c->stop_word == NULL) {
    err = cl->finish(ocl->control_queue);
  }
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "kernel '%s'", dc_kernel_name(k));
  }
  return DC_OK;
}

// Reads the fault record back: a fault, or a stop the host made between
// slices (|stop|, a fault kind, or -1), fails the dispatch as on the CPU.
static dc_status_t check_outcome(dc__opencl_device_t* ocl,
                                 const dc_kernel_t* k,
                                 dc__opencl_checked_t* c, int stop,
                                 cl_command_queue queue) {
  dc_kernel_fault_t f;
  cl_int err = ocl->cl->enqueue_read_buffer(queue, c->state, CL_TRUE, 0,
                                            sizeof(f), &f, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "reading kernel '%s''s fault record",
                             dc_kernel_name(k));
  }
  if (f.set == 0 && stop < 0) return DC_OK;
  if (f.set == 0) f = (dc_kernel_fault_t){.set = 1, .kind = (uint32_t)stop};
  return dc_kernel_fault_status(k, kFn, &f);
}

//===-- Launching -------------------------------------------------------===//

// Sets the arguments (with the checked-mode ones when |c| is not NULL)
// and enqueues |slice| of |l|'s groups on |queue|, with |done| (if not
// NULL) its event.
static dc_status_t enqueue(dc__opencl_device_t* ocl, cl_command_queue queue,
                           dc_kernel_t* kernel, const dc_launch_t* l,
                           void* const* args, const size_t* lengths,
                           const dc__opencl_checked_t* c,
                           const dc_launch_slice_t* slice, cl_event* done) {
  dc__opencl_kernel_t* ok = dc_kernel_backend_data(kernel);
  size_t offset[3], global[3];
  for (int d = 0; d < 3; ++d) {
    offset[d] = l->offset[d] + slice->first[d] * l->local[d];
    global[d] = slice->groups[d] * l->local[d];
  }
  pthread_mutex_lock(&ok->args_lock);
  cl_uint next = 0;
  dc_status_t st = set_args(ocl, kernel, l, args, &next);
  if (st == DC_OK && c != NULL) {
    dc__opencl_slice_t arg;
    for (int d = 0; d < 3; ++d) {
      arg.offset[d] = l->offset[d];
      arg.group_base[d] = slice->first[d];
      arg.groups[d] = l->groups[d];
    }
    st = set_checked_args(ocl, kernel, lengths, c, &arg, next);
  }
  if (st == DC_OK) {
    cl_int err = ocl->cl->enqueue_nd_range_kernel(
        queue, ok->kernel, l->dims, offset, global, l->local, 0, NULL, done);
    if (err != CL_SUCCESS) {
      st = dc__opencl_failed(ocl, err,
                             "clEnqueueNDRangeKernel of kernel '%s' (%zux%zux%zu "
                             "work-items in groups of %zux%zux%zu)",
                             dc_kernel_name(kernel), global[0], global[1],
                             global[2], l->local[0], l->local[1],
                             l->local[2]);
    }
  }
  pthread_mutex_unlock(&ok->args_lock);
  return st;
}

// Enqueues the next slice, if any, with |*done| its event (NULL when
// every slice has been).
static dc_status_t enqueue_next(dc__opencl_device_t* ocl,
                                cl_command_queue queue, dc_kernel_t* kernel,
                                const dc_launch_t* l, void* const* args,
                                const size_t* lengths,
                                const dc__opencl_checked_t* c,
                                dc_launch_slicer_t* slicer, cl_event* done) {
  dc_launch_slice_t slice;
  *done = NULL;
  if (!dc_launch_slicer_next(slicer, &slice)) return DC_OK;
  return enqueue(ocl, queue, kernel, l, args, lengths, c, &slice, done);
}

// Runs a checked dispatch in slices (dc_launch_slicer_t) until the last or
// until it must stop. While one slice runs and is watched, the next
// waits in the queue behind it, so that the device never idles between
// two; a stop enqueues no further slice.
static dc_status_t run_checked(dc__opencl_device_t* ocl,
                               cl_command_queue queue, dc_kernel_t* kernel,
                               const dc_launch_t* l, void* const* args,
                               const size_t* lengths,
                               dc__opencl_checked_t* c) {
  DC_RETURN_IF_ERROR(reset_checked(ocl, kernel, c, queue));
  dc_launch_slicer_t slicer;
  dc_launch_slicer_init(&slicer, l);
  uint64_t since = slicer.start_ns;
  int stop = -1;
  cl_event running = NULL, queued = NULL;
  dc_status_t st = enqueue_next(ocl, queue, kernel, l, args, lengths, c,
                                &slicer, &running);
  while (st == DC_OK && running != NULL) {
    if (stop < 0 && (stop = dc_launch_stop_reason(&slicer)) < 0) {
      st = enqueue_next(ocl, queue, kernel, l, args, lengths, c, &slicer,
                        &queued);
    }
    // Watched even after a failure: the slice must end before the state
    // goes back to the free list.
    dc_status_t ended = watch(ocl, kernel, &slicer, c, queue, running, &stop);
    if (st == DC_OK) st = ended;
    ocl->cl->release_event(running);
    uint64_t now = dc__now_ns();
    dc_launch_slicer_took(&slicer, now - since);  // queued back to back
    since = now;
    running = queued;
    queued = NULL;
  }
  if (running != NULL) {  // a failure left a slice in the queue
    ocl->cl->wait_for_events(1, &running);
    ocl->cl->release_event(running);
  }
  // A stop fails a dispatch that had slices left, whatever the fault
  // record says; one seen while the last slice ran only if it recorded it.
  if (st == DC_OK) {
    st = check_outcome(ocl, kernel, c, slicer.done ? -1 : stop, queue);
  }
  return st;
}

// Runs a dispatch on |queue| (NULL: the device queue), waiting for it
// when |wait| or when it is checked.
static dc_status_t dispatch_on(dc_device_t* device, cl_command_queue queue,
                               bool wait, dc_kernel_t* kernel,
                               const dc_launch_t* l, void* const* args,
                               const size_t* lengths) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  dc__opencl_kernel_t* ok = dc_kernel_backend_data(kernel);
  if (queue == NULL) queue = ocl->queue;
  DC_RETURN_IF_ERROR(check_shape(ocl, kernel, l));
  if (ok->checked) {
    dc__opencl_checked_t* c = NULL;
    DC_RETURN_IF_ERROR(take_checked(ocl, ok->module->state_size, &c));
    dc_status_t st = run_checked(ocl, queue, kernel, l, args, lengths, c);
    give_checked(ocl, c);
    return st;
  }
  dc_launch_slice_t whole = {{0, 0, 0}, {l->groups[0], l->groups[1], l->groups[2]}};
  dc_status_t st = enqueue(ocl, queue, kernel, l, args, lengths, NULL, &whole,
                           NULL);
  if (st == DC_OK && wait) {
    cl_int err = ocl->cl->finish(queue);
    if (err != CL_SUCCESS) {
      st = dc__opencl_failed(ocl, err, "kernel '%s'", dc_kernel_name(kernel));
    }
  }
  return st;
}

dc_status_t dc__opencl_dispatch(dc_device_t* device, dc_kernel_t* kernel,
                                const dc_launch_t* l, void* const* args,
                                const size_t* lengths) {
  return dispatch_on(device, NULL, true, kernel, l, args, lengths);
}

dc_status_t dc__opencl_dispatch_queued(dc_device_t* device,
                                       dc_device_queue_t* queue,
                                       dc_kernel_t* kernel,
                                       const dc_launch_t* l, void* const* args,
                                       const size_t* lengths) {
  return dispatch_on(device, (cl_command_queue)queue, false, kernel, l, args,
                     lengths);
}

//===-- Work-group size -------------------------------------------------===//

// What the driver allows for the kernel, at most 256 work-items (a group
// per compute unit's worth of lanes leaves a CPU's cores and a GPU's
// schedulers enough groups to share), in whole multiples of the
// kernel's preferred multiple.
size_t dc__opencl_preferred_group_size(dc_device_t* device,
                                       const dc_kernel_t* kernel,
                                       size_t work_items,
                                       size_t local_memory) {
  (void)device;
  (void)work_items;
  (void)local_memory;
  const dc__opencl_kernel_t* ok = dc_kernel_backend_data(kernel);
  if (ok == NULL) return 0;
  size_t size = DC_MIN(ok->max_group, (size_t)256);
  size_t multiple = ok->group_multiple > 0 ? ok->group_multiple : 1;
  if (size >= multiple) size = size / multiple * multiple;
  return size;
}

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
// record is read back after it. While it runs, the host watches its time
// limit and the context's interrupt count, and when either ends the
// dispatch it writes the stop word that the kernel's polls read. On a
// device that shares the host's memory (pocl) the word stays mapped and
// the host stores to it: the driver's threads may all be running the
// kernel, leaving none to run a command. On the others it lives in device
// memory and the host enqueues the write on the device's control queue,
// which the driver runs beside the kernel's: a discrete GPU does not see
// a store through a mapping while a kernel runs (NVIDIA's driver did not,
// and runaway kernels ran on), and the kernel's own queue would run the
// write only after it.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "opencl_kernel.h"

static const char* kFn = "dc_kernel_dispatch";

// How long the host sleeps between looks at a running checked kernel.
#define WATCH_INTERVAL_NS 200000L

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
static const cl_uint kRunOn = 0, kStopped = 2, kWatchdog = 3;

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
// lengths, the stop word and the fault record (both reset on |queue|).
static dc_status_t set_checked_args(dc__opencl_device_t* ocl,
                                    const dc_kernel_t* k,
                                    const size_t* lengths,
                                    dc__opencl_checked_t* c,
                                    cl_command_queue queue, cl_uint next) {
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
  dc_kernel_fault_t clear = {0};
  cl_int err = write_stop_word(ocl, c, queue, &kRunOn);
  if (err == CL_SUCCESS) {
    err = ocl->cl->enqueue_write_buffer(queue, c->state, CL_FALSE, 0,
                                        sizeof(clear), &clear, 0, NULL, NULL);
  }
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "resetting kernel '%s''s fault record",
                             dc_kernel_name(k));
  }
  // The write above reads |clear| later: wait for it before returning.
  err = ocl->cl->finish(queue);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "resetting kernel '%s''s fault record",
                             dc_kernel_name(k));
  }
  return DC_OK;
}

// Waits for a checked kernel's |done| event, stopping it through the stop
// word when the launch's time limit passes or the context is interrupted.
static dc_status_t watch(dc__opencl_device_t* ocl, const dc_kernel_t* k,
                         const dc_launch_t* l, dc__opencl_checked_t* c,
                         cl_command_queue queue, cl_event done) {
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_int err = cl->flush(queue);
  uint64_t start = dc__now_ns();
  bool watching = l->time_limit_ns != 0 || l->interrupts != NULL;
  const cl_uint* stop = NULL;
  while (err == CL_SUCCESS && watching) {
    cl_int status = CL_QUEUED;
    err = cl->get_event_info(done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                             sizeof(status), &status, NULL);
    if (err != CL_SUCCESS || status <= CL_COMPLETE) break;
    if (stop == NULL) {
      if (l->time_limit_ns != 0 && dc__now_ns() - start > l->time_limit_ns) {
        stop = &kWatchdog;
      } else if (l->interrupts != NULL &&
                 __atomic_load_n(l->interrupts, __ATOMIC_ACQUIRE) !=
                     l->interrupts_at_start) {
        stop = &kStopped;
      }
      if (stop != NULL) {
        err = write_stop_word(ocl, c, ocl->control_queue, stop);
        if (err == CL_SUCCESS && c->stop_word == NULL) {
          err = cl->flush(ocl->control_queue);  // to the device now
        }
      }
    }
    struct timespec pause = {0, WATCH_INTERVAL_NS};
    nanosleep(&pause, NULL);
  }
  if (err == CL_SUCCESS) err = cl->wait_for_events(1, &done);
  // An enqueued stop must land before the state's next reset.
  if (err == CL_SUCCESS && stop != NULL && c->stop_word == NULL) {
    err = cl->finish(ocl->control_queue);
  }
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "kernel '%s'", dc_kernel_name(k));
  }
  return DC_OK;
}

// Reads the fault record back: a fault fails the dispatch as on the CPU.
static dc_status_t check_outcome(dc__opencl_device_t* ocl,
                                 const dc_kernel_t* k,
                                 dc__opencl_checked_t* c,
                                 cl_command_queue queue) {
  dc_kernel_fault_t f;
  cl_int err = ocl->cl->enqueue_read_buffer(queue, c->state, CL_TRUE, 0,
                                            sizeof(f), &f, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "reading kernel '%s''s fault record",
                             dc_kernel_name(k));
  }
  if (f.set == 0) return DC_OK;
  return dc_kernel_fault_status(k, kFn, &f);
}

//===-- Launching -------------------------------------------------------===//

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
  dc__opencl_checked_t* c = NULL;
  if (ok->checked) {
    size_t size = ok->module->state_size;
    DC_RETURN_IF_ERROR(take_checked(ocl, size, &c));
  }
  cl_event done = NULL;
  pthread_mutex_lock(&ok->args_lock);
  cl_uint next = 0;
  dc_status_t st = set_args(ocl, kernel, l, args, &next);
  if (st == DC_OK && c != NULL) {
    st = set_checked_args(ocl, kernel, lengths, c, queue, next);
  }
  if (st == DC_OK) {
    cl_int err = ocl->cl->enqueue_nd_range_kernel(
        queue, ok->kernel, l->dims, l->offset, l->global, l->local, 0, NULL,
        c != NULL ? &done : NULL);
    if (err != CL_SUCCESS) {
      st = dc__opencl_failed(ocl, err,
                             "clEnqueueNDRangeKernel of kernel '%s' (%zux%zux%zu "
                             "work-items in groups of %zux%zux%zu)",
                             dc_kernel_name(kernel), l->global[0], l->global[1],
                             l->global[2], l->local[0], l->local[1],
                             l->local[2]);
    }
  }
  pthread_mutex_unlock(&ok->args_lock);
  if (st == DC_OK && c != NULL) {
    st = watch(ocl, kernel, l, c, queue, done);
    if (st == DC_OK) st = check_outcome(ocl, kernel, c, queue);
  } else if (st == DC_OK && wait) {
    cl_int err = ocl->cl->finish(queue);
    if (err != CL_SUCCESS) {
      st = dc__opencl_failed(ocl, err, "kernel '%s'", dc_kernel_name(kernel));
    }
  }
  if (done != NULL) ocl->cl->release_event(done);
  if (c != NULL) give_checked(ocl, c);
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

// opencl_queue.c: device queues (dc/backend.h) as in-order OpenCL command
// queues, and device events as markers.
//
// A queue is an in-order cl_command_queue of the device's context (OpenCL
// 1.2 has no queue priorities, so every engine stream's queue is alike);
// copies between the device's buffers go on it too (OpenCL pins no host
// memory, so copies with the host run on the host).
// A device event holds the cl_event of the marker last recorded for it
// (clEnqueueMarkerWithWaitList); a wait puts a barrier on the waiting
// queue that waits for that marker (clEnqueueBarrierWithWaitList), so the
// device orders the two queues without the host. Events are created,
// recorded and waited on under the scheduler's lock (dc/backend.h), so
// their cl_event needs no lock of its own.
// SPDX-License-Identifier: MIT
#include "opencl_internal.h"

dc_status_t dc__opencl_queue_create(dc_device_t* device,
                                    dc_priority_t priority,
                                    dc_device_queue_t** out_queue) {
  (void)priority;
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_int err = CL_SUCCESS;
  cl_command_queue queue =
      ocl->cl->create_command_queue(ocl->context, ocl->device, 0, &err);
  *out_queue = (dc_device_queue_t*)queue;
  if (queue == NULL) return dc__opencl_failed(ocl, err, "clCreateCommandQueue");
  return DC_OK;
}

void dc__opencl_queue_destroy(dc_device_t* device, dc_device_queue_t* queue) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  ocl->cl->release_command_queue((cl_command_queue)queue);
}

dc_status_t dc__opencl_queue_finish(dc_device_t* device,
                                    dc_device_queue_t* queue) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_int err = ocl->cl->finish((cl_command_queue)queue);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "queued kernels (clFinish)");
  }
  return DC_OK;
}

// A copy between two buffers of the device (never two overlapping ranges
// of one: the engine runs those on the host), as clEnqueueCopyBuffer.
dc_status_t dc__opencl_queue_copy(dc_device_t* device,
                                  dc_device_queue_t* queue, void* dst,
                                  size_t dst_offset, const void* src,
                                  size_t src_offset, size_t size) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  cl_mem dst_mem = NULL, src_mem = NULL;
  size_t dst_at = 0, src_at = 0;
  DC_RETURN_IF_ERROR(dc__opencl_decode_copy(ocl, dst, dst_offset, src,
                                            src_offset, &dst_mem, &dst_at,
                                            &src_mem, &src_at));
  cl_int err = ocl->cl->enqueue_copy_buffer((cl_command_queue)queue, src_mem,
                                            dst_mem, src_at, dst_at, size, 0,
                                            NULL, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "queued copy of %zu bytes", size);
  }
  return DC_OK;
}

//===-- Device events ---------------------------------------------------===//

typedef struct opencl_event_t {
  cl_event latest;  // the marker last recorded, or NULL
} opencl_event_t;

dc_status_t dc__opencl_event_create(dc_device_t* device,
                                    dc_device_event_t** out_event) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  opencl_event_t* event = dc_allocator_calloc(ocl->allocator, 1,
                                              sizeof(*event));
  *out_event = (dc_device_event_t*)event;
  if (event == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: no memory for a device event",
                   device->info.name);
  }
  return DC_OK;
}

void dc__opencl_event_destroy(dc_device_t* device, dc_device_event_t* event) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  opencl_event_t* e = (opencl_event_t*)event;
  if (e->latest != NULL) ocl->cl->release_event(e->latest);
  dc_allocator_free(ocl->allocator, e, sizeof(*e));
}

dc_status_t dc__opencl_event_record(dc_device_t* device,
                                    dc_device_queue_t* queue,
                                    dc_device_event_t* event) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  opencl_event_t* e = (opencl_event_t*)event;
  cl_event marker = NULL;
  cl_int err = ocl->cl->enqueue_marker_with_wait_list(
      (cl_command_queue)queue, 0, NULL, &marker);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "clEnqueueMarkerWithWaitList");
  }
  if (e->latest != NULL) ocl->cl->release_event(e->latest);
  e->latest = marker;
  // Another queue may wait for the marker: it must reach the device.
  err = ocl->cl->flush((cl_command_queue)queue);
  if (err != CL_SUCCESS) return dc__opencl_failed(ocl, err, "clFlush");
  return DC_OK;
}

dc_status_t dc__opencl_event_wait(dc_device_t* device,
                                  dc_device_queue_t* queue,
                                  dc_device_event_t* event) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  opencl_event_t* e = (opencl_event_t*)event;
  if (e->latest == NULL) return DC_OK;  // never recorded: nothing to wait
  cl_int err = ocl->cl->enqueue_barrier_with_wait_list(
      (cl_command_queue)queue, 1, &e->latest, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "clEnqueueBarrierWithWaitList");
  }
  return DC_OK;
}

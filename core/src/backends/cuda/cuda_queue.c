// cuda_queue.c: device queues (dc/backend.h) as CUDA streams, and device
// events as CUDA events (without timing: the engine times on the host).
//
// A queue is a non-blocking CUDA stream of the device's primary context,
// with the CUDA priority of the engine stream it serves: high-priority
// engine streams get the GPU's greatest priority, the others its least
// (the default). Queues need no lock: the calling thread makes the
// context current, and CUDA streams may be used from any thread. Queued
// copies are cuMemcpyAsync on the stream, which finds from the addresses
// (unified addressing) whether each side is device memory or host
// memory; the engine queues host memory only when it is pinned, which
// the copy engines move without staging.
// SPDX-License-Identifier: MIT
#include "cuda_internal.h"

static int cuda_priority(const dc__cuda_device_t* cuda, dc_priority_t p) {
  return p == DC_PRIORITY_HIGH ? cuda->priority_greatest
                               : cuda->priority_least;
}

dc_status_t dc__cuda_queue_create(dc_device_t* device, dc_priority_t priority,
                                  dc_device_queue_t** out_queue) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  *out_queue = NULL;
  DC_RETURN_IF_ERROR(dc__cuda_settle(cuda, dc__cuda_enter(cuda)));
  CUstream stream = NULL;
  CUresult r = cuda->api->cu->stream_create_with_priority(
      &stream, CU_STREAM_NON_BLOCKING, cuda_priority(cuda, priority));
  if (r != CUDA_SUCCESS) {
    return dc__cuda_settle(
        cuda, dc__cuda_failed(cuda, r, "cuStreamCreateWithPriority"));
  }
  *out_queue = (dc_device_queue_t*)stream;
  return DC_OK;
}

void dc__cuda_queue_destroy(dc_device_t* device, dc_device_queue_t* queue) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  // A lost context cannot be made current; its streams went with it.
  if (dc__cuda_enter(cuda) == DC_OK) {
    cuda->api->cu->stream_destroy((CUstream)queue);
  }
}

dc_status_t dc__cuda_queue_finish(dc_device_t* device,
                                  dc_device_queue_t* queue) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  dc_status_t status = dc__cuda_enter(cuda);
  if (status == DC_OK) {
    status = dc__cuda_wait(cuda, (CUstream)queue, "queued kernels");
  }
  return dc__cuda_settle(cuda, status);
}

//===-- Queued copies ---------------------------------------------------===//

static dc_status_t queue_memcpy(dc_device_t* device, dc_device_queue_t* queue,
                                CUdeviceptr dst, CUdeviceptr src, size_t size,
                                const char* what) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  DC_RETURN_IF_ERROR(dc__cuda_settle(cuda, dc__cuda_enter(cuda)));
  CUresult r = cuda->api->cu->memcpy_async(dst, src, size, (CUstream)queue);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_settle(cuda, dc__cuda_failed(cuda, r, "cuMemcpyAsync of "
                                                 "%zu bytes (%s)", size,
                                                 what));
  }
  return DC_OK;
}

dc_status_t dc__cuda_queue_copy(dc_device_t* device, dc_device_queue_t* queue,
                                void* dst, size_t dst_offset, const void* src,
                                size_t src_offset, size_t size) {
  return queue_memcpy(device, queue, dc__cuda_address(dst, dst_offset),
                      dc__cuda_address(src, src_offset), size, "a copy");
}

dc_status_t dc__cuda_queue_write_pinned(dc_device_t* device,
                                        dc_device_queue_t* queue, void* memory,
                                        size_t offset, const void* host,
                                        size_t size) {
  return queue_memcpy(device, queue, dc__cuda_address(memory, offset),
                      dc__cuda_address(host, 0), size, "from pinned memory");
}

dc_status_t dc__cuda_queue_read_pinned(dc_device_t* device,
                                       dc_device_queue_t* queue,
                                       const void* memory, size_t offset,
                                       void* host, size_t size) {
  return queue_memcpy(device, queue, dc__cuda_address(host, 0),
                      dc__cuda_address(memory, offset), size,
                      "into pinned memory");
}

//===-- Device events ---------------------------------------------------===//

dc_status_t dc__cuda_event_create(dc_device_t* device,
                                  dc_device_event_t** out_event) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  *out_event = NULL;
  DC_RETURN_IF_ERROR(dc__cuda_settle(cuda, dc__cuda_enter(cuda)));
  CUevent event = NULL;
  CUresult r = cuda->api->cu->event_create(&event, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_settle(cuda, dc__cuda_failed(cuda, r, "cuEventCreate"));
  }
  *out_event = (dc_device_event_t*)event;
  return DC_OK;
}

void dc__cuda_event_destroy(dc_device_t* device, dc_device_event_t* event) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  if (dc__cuda_enter(cuda) == DC_OK) {
    cuda->api->cu->event_destroy((CUevent)event);
  }
}

dc_status_t dc__cuda_queue_record(dc_device_t* device, dc_device_queue_t* queue,
                                  dc_device_event_t* event) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  DC_RETURN_IF_ERROR(dc__cuda_settle(cuda, dc__cuda_enter(cuda)));
  CUresult r = cuda->api->cu->event_record((CUevent)event, (CUstream)queue);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_settle(cuda, dc__cuda_failed(cuda, r, "cuEventRecord"));
  }
  return DC_OK;
}

dc_status_t dc__cuda_queue_wait(dc_device_t* device, dc_device_queue_t* queue,
                                dc_device_event_t* event) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  DC_RETURN_IF_ERROR(dc__cuda_settle(cuda, dc__cuda_enter(cuda)));
  CUresult r = cuda->api->cu->stream_wait_event((CUstream)queue,
                                                (CUevent)event, 0);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_settle(cuda,
                           dc__cuda_failed(cuda, r, "cuStreamWaitEvent"));
  }
  return DC_OK;
}

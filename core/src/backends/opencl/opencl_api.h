// opencl_api.h: the part of the OpenCL 1.2 API that the OpenCL backend
// uses, resolved at run time from the ICD loader (libOpenCL.so.1).
//
// The declarations come from the Khronos headers (Debian's
// opencl-headers), restricted to OpenCL 1.2 so that every vendor's driver
// (NVIDIA's included) has each function. dclua never links with
// -lOpenCL: dc__opencl_api() opens the loader with dlopen and fills a
// table with dlsym the first time a context looks for OpenCL devices. A
// machine without the loader, or without any platform, simply has no
// opencl devices, which is not an error.
//
// Thread safety: the table is filled once (pthread_once) and read-only
// afterwards; OpenCL 1.2 functions are thread-safe (except
// clSetKernelArg on one cl_kernel, which the backend serialises).
// SPDX-License-Identifier: MIT
#ifndef DC_OPENCL_API_H_
#define DC_OPENCL_API_H_

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "internal.h"

// Device queries of extensions (the values their specifications give):
// the PCI address, from cl_khr_pci_bus_info (four cl_uint: domain, bus,
// device, function) or NVIDIA's cl_nv_device_attribute_query (the slot
// holds device << 3 | function).
#define DC_CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
#define DC_CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define DC_CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#define DC_CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A

// X(return type, symbol, field, parameters): every function the backend
// calls.
#define DC_OPENCL_FUNCTIONS(X)                                                \
  X(cl_int, "clGetPlatformIDs", get_platform_ids,                             \
    (cl_uint, cl_platform_id*, cl_uint*))                                     \
  X(cl_int, "clGetPlatformInfo", get_platform_info,                           \
    (cl_platform_id, cl_platform_info, size_t, void*, size_t*))               \
  X(cl_int, "clGetDeviceIDs", get_device_ids,                                 \
    (cl_platform_id, cl_device_type, cl_uint, cl_device_id*, cl_uint*))       \
  X(cl_int, "clGetDeviceInfo", get_device_info,                               \
    (cl_device_id, cl_device_info, size_t, void*, size_t*))                   \
  X(cl_context, "clCreateContext", create_context,                            \
    (const cl_context_properties*, cl_uint, const cl_device_id*,              \
     void(CL_CALLBACK*)(const char*, const void*, size_t, void*), void*,      \
     cl_int*))                                                                \
  X(cl_int, "clReleaseContext", release_context, (cl_context))                \
  X(cl_command_queue, "clCreateCommandQueue", create_command_queue,           \
    (cl_context, cl_device_id, cl_command_queue_properties, cl_int*))         \
  X(cl_int, "clReleaseCommandQueue", release_command_queue,                   \
    (cl_command_queue))                                                       \
  X(cl_int, "clFlush", flush, (cl_command_queue))                             \
  X(cl_int, "clFinish", finish, (cl_command_queue))                           \
  X(cl_mem, "clCreateBuffer", create_buffer,                                  \
    (cl_context, cl_mem_flags, size_t, void*, cl_int*))                       \
  X(cl_int, "clReleaseMemObject", release_mem_object, (cl_mem))               \
  X(cl_int, "clEnqueueReadBuffer", enqueue_read_buffer,                       \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint,       \
     const cl_event*, cl_event*))                                             \
  X(cl_int, "clEnqueueWriteBuffer", enqueue_write_buffer,                     \
    (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*,         \
     cl_uint, const cl_event*, cl_event*))                                    \
  X(cl_int, "clEnqueueFillBuffer", enqueue_fill_buffer,                       \
    (cl_command_queue, cl_mem, const void*, size_t, size_t, size_t, cl_uint,  \
     const cl_event*, cl_event*))                                             \
  X(cl_int, "clEnqueueCopyBuffer", enqueue_copy_buffer,                       \
    (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,       \
     const cl_event*, cl_event*))                                             \
  X(void*, "clEnqueueMapBuffer", enqueue_map_buffer,                          \
    (cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,         \
     cl_uint, const cl_event*, cl_event*, cl_int*))                           \
  X(cl_int, "clEnqueueUnmapMemObject", enqueue_unmap_mem_object,              \
    (cl_command_queue, cl_mem, void*, cl_uint, const cl_event*, cl_event*))   \
  X(cl_program, "clCreateProgramWithSource", create_program_with_source,      \
    (cl_context, cl_uint, const char**, const size_t*, cl_int*))              \
  X(cl_program, "clCreateProgramWithBinary", create_program_with_binary,      \
    (cl_context, cl_uint, const cl_device_id*, const size_t*,                 \
     const unsigned char**, cl_int*, cl_int*))                                \
  X(cl_int, "clBuildProgram", build_program,                                  \
    (cl_program, cl_uint, const cl_device_id*, const char*,                   \
     void(CL_CALLBACK*)(cl_program, void*), void*))                           \
  X(cl_int, "clGetProgramInfo", get_program_info,                             \
    (cl_program, cl_program_info, size_t, void*, size_t*))                    \
  X(cl_int, "clGetProgramBuildInfo", get_program_build_info,                  \
    (cl_program, cl_device_id, cl_program_build_info, size_t, void*,          \
     size_t*))                                                                \
  X(cl_int, "clReleaseProgram", release_program, (cl_program))                \
  X(cl_kernel, "clCreateKernel", create_kernel,                               \
    (cl_program, const char*, cl_int*))                                       \
  X(cl_int, "clReleaseKernel", release_kernel, (cl_kernel))                   \
  X(cl_int, "clSetKernelArg", set_kernel_arg,                                 \
    (cl_kernel, cl_uint, size_t, const void*))                                \
  X(cl_int, "clGetKernelWorkGroupInfo", get_kernel_work_group_info,           \
    (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*,       \
     size_t*))                                                                \
  X(cl_int, "clEnqueueNDRangeKernel", enqueue_nd_range_kernel,                \
    (cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,      \
     const size_t*, cl_uint, const cl_event*, cl_event*))                     \
  X(cl_int, "clEnqueueMarkerWithWaitList", enqueue_marker_with_wait_list,     \
    (cl_command_queue, cl_uint, const cl_event*, cl_event*))                  \
  X(cl_int, "clEnqueueBarrierWithWaitList", enqueue_barrier_with_wait_list,   \
    (cl_command_queue, cl_uint, const cl_event*, cl_event*))                  \
  X(cl_int, "clWaitForEvents", wait_for_events, (cl_uint, const cl_event*))   \
  X(cl_int, "clGetEventInfo", get_event_info,                                 \
    (cl_event, cl_event_info, size_t, void*, size_t*))                        \
  X(cl_int, "clRetainEvent", retain_event, (cl_event))                        \
  X(cl_int, "clReleaseEvent", release_event, (cl_event))

#define DC_OPENCL_FIELD_(ret, symbol, field, params) ret(CL_API_CALL* field) params;
typedef struct dc__opencl_functions_t {
  DC_OPENCL_FUNCTIONS(DC_OPENCL_FIELD_)
} dc__opencl_functions_t;
#undef DC_OPENCL_FIELD_

typedef struct dc__opencl_api_t {
  const dc__opencl_functions_t* cl;  // NULL: no loader, no opencl devices
  char library[64];                  // the file name that was loaded
  char why_missing[256];             // for the debug log when |cl| is NULL
} dc__opencl_api_t;

// Loads the ICD loader once and returns what was found (never NULL).
// Thread-safe. DC_OPENCL_LIBRARY, when set, names the library to open
// instead of libOpenCL.so.1 (the tests point it at a missing file to see
// a machine without OpenCL); it is read once per process.
DC_INTERNAL const dc__opencl_api_t* dc__opencl_api(void);

// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or
// "CL_ERROR_UNKNOWN".
DC_INTERNAL const char* dc__opencl_error_name(cl_int error);

// Sets the thread's error to "<what>: CL_X (n)" and returns the dc status
// that |error| maps to (docs/resilience.md follows this mapping).
DC_INTERNAL dc_status_t dc__opencl_fail(cl_int error, const char* what);

#endif  // DC_OPENCL_API_H_

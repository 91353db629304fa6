// opencl_loader.c: finds the OpenCL ICD loader at run time (see
// opencl_api.h) and maps OpenCL errors onto dc statuses.
//
// The loader is opened once per process and never closed: the function
// table is shared by every context, and unloading the drivers the loader
// opened while another thread may still call them buys nothing.
// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "opencl_api.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static dc__opencl_api_t api;
static dc__opencl_functions_t functions;

// Resolves every symbol; false (naming the first missing one in
// |missing|) if any is absent, as in a loader older than OpenCL 1.2.
#define DC_OPENCL_RESOLVE_(ret, symbol, field, params)                    \
  *(void**)&table->field = dlsym(handle, symbol);                          \
  if (table->field == NULL) {                                              \
    snprintf(missing, missing_size, "%s has no %s (OpenCL 1.2 needed)",    \
             library, symbol);                                             \
    return false;                                                          \
  }

static bool resolve(void* handle, dc__opencl_functions_t* table,
                    const char* library, char* missing, size_t missing_size) {
  DC_OPENCL_FUNCTIONS(DC_OPENCL_RESOLVE_)
  return true;
}
#undef DC_OPENCL_RESOLVE_

static void load(void) {
  const char* override = getenv("DC_OPENCL_LIBRARY");
  const char* names[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
  if (override != NULL && override[0] != '\0') {
    names[0] = override;
    names[1] = NULL;
  }
  void* handle = NULL;
  for (const char* const* n = names; *n != NULL && handle == NULL; ++n) {
    handle = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) snprintf(api.library, sizeof(api.library), "%s", *n);
  }
  if (handle == NULL) {
    snprintf(api.why_missing, sizeof(api.why_missing),
             "no OpenCL ICD loader (%s cannot be loaded: %s)", names[0],
             dlerror());
    return;
  }
  if (resolve(handle, &functions, api.library, api.why_missing,
              sizeof(api.why_missing))) {
    api.cl = &functions;
  }
}

const dc__opencl_api_t* dc__opencl_api(void) {
  pthread_once(&load_once, load);
  return &api;
}

//===-- Errors ----------------------------------------------------------===//

const char* dc__opencl_error_name(cl_int error) {
  switch (error) {
#define DC_OPENCL_NAME_(e) \
  case e:                  \
    return #e;
    DC_OPENCL_NAME_(CL_SUCCESS)
    DC_OPENCL_NAME_(CL_DEVICE_NOT_FOUND)
    DC_OPENCL_NAME_(CL_DEVICE_NOT_AVAILABLE)
    DC_OPENCL_NAME_(CL_COMPILER_NOT_AVAILABLE)
    DC_OPENCL_NAME_(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    DC_OPENCL_NAME_(CL_OUT_OF_RESOURCES)
    DC_OPENCL_NAME_(CL_OUT_OF_HOST_MEMORY)
    DC_OPENCL_NAME_(CL_MEM_COPY_OVERLAP)
    DC_OPENCL_NAME_(CL_BUILD_PROGRAM_FAILURE)
    DC_OPENCL_NAME_(CL_MAP_FAILURE)
    DC_OPENCL_NAME_(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    DC_OPENCL_NAME_(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    DC_OPENCL_NAME_(CL_LINK_PROGRAM_FAILURE)
    DC_OPENCL_NAME_(CL_INVALID_VALUE)
    DC_OPENCL_NAME_(CL_INVALID_DEVICE_TYPE)
    DC_OPENCL_NAME_(CL_INVALID_PLATFORM)
    DC_OPENCL_NAME_(CL_INVALID_DEVICE)
    DC_OPENCL_NAME_(CL_INVALID_CONTEXT)
    DC_OPENCL_NAME_(CL_INVALID_QUEUE_PROPERTIES)
    DC_OPENCL_NAME_(CL_INVALID_COMMAND_QUEUE)
    DC_OPENCL_NAME_(CL_INVALID_HOST_PTR)
    DC_OPENCL_NAME_(CL_INVALID_MEM_OBJECT)
    DC_OPENCL_NAME_(CL_INVALID_BINARY)
    DC_OPENCL_NAME_(CL_INVALID_BUILD_OPTIONS)
    DC_OPENCL_NAME_(CL_INVALID_PROGRAM)
    DC_OPENCL_NAME_(CL_INVALID_PROGRAM_EXECUTABLE)
    DC_OPENCL_NAME_(CL_INVALID_KERNEL_NAME)
    DC_OPENCL_NAME_(CL_INVALID_KERNEL)
    DC_OPENCL_NAME_(CL_INVALID_ARG_INDEX)
    DC_OPENCL_NAME_(CL_INVALID_ARG_VALUE)
    DC_OPENCL_NAME_(CL_INVALID_ARG_SIZE)
    DC_OPENCL_NAME_(CL_INVALID_KERNEL_ARGS)
    DC_OPENCL_NAME_(CL_INVALID_WORK_DIMENSION)
    DC_OPENCL_NAME_(CL_INVALID_WORK_GROUP_SIZE)
    DC_OPENCL_NAME_(CL_INVALID_WORK_ITEM_SIZE)
    DC_OPENCL_NAME_(CL_INVALID_GLOBAL_OFFSET)
    DC_OPENCL_NAME_(CL_INVALID_EVENT_WAIT_LIST)
    DC_OPENCL_NAME_(CL_INVALID_EVENT)
    DC_OPENCL_NAME_(CL_INVALID_OPERATION)
    DC_OPENCL_NAME_(CL_INVALID_BUFFER_SIZE)
    DC_OPENCL_NAME_(CL_INVALID_GLOBAL_WORK_SIZE)
    DC_OPENCL_NAME_(CL_INVALID_PROPERTY)
#undef DC_OPENCL_NAME_
    default:
      return "CL_ERROR_UNKNOWN";
  }
}

// The table in docs/resilience.md follows this function. OpenCL has no
// sticky "context lost" error in 1.2: a failed kernel shows as
// CL_OUT_OF_RESOURCES or a negative event status, which a retry may get
// past, so nothing maps to DC_ERR_DEVICE_LOST.
static dc_status_t status_of(cl_int error) {
  switch (error) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
      return DC_ERR_OUT_OF_MEMORY;
    case CL_OUT_OF_RESOURCES:
    case CL_DEVICE_NOT_AVAILABLE:
      return DC_ERR_UNAVAILABLE;
    case CL_COMPILER_NOT_AVAILABLE:
      return DC_ERR_UNAVAILABLE;
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_INVALID_GLOBAL_WORK_SIZE:
    case CL_INVALID_GLOBAL_OFFSET:
    case CL_INVALID_BUFFER_SIZE:
    case CL_INVALID_VALUE:
      return DC_ERR_INVALID_ARGUMENT;
    case CL_INVALID_BINARY:
      return DC_ERR_UNSUPPORTED;
    default:
      return DC_ERR_INTERNAL;
  }
}

dc_status_t dc__opencl_fail(cl_int error, const char* what) {
  return DC_FAIL(status_of(error), "%s: %s (%d)", what,
                 dc__opencl_error_name(error), (int)error);
}

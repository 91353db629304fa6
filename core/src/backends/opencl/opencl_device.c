// opencl_device.c: finds the OpenCL devices of every platform the ICD
// loader knows, reads their capabilities from the driver and sets each
// up as a dc device "opencl:N" (N counts the devices added across the
// platforms, in the loader's order). A GPU that an earlier backend of the
// context drives already (same PCI address) is left out.
//
// Each device holds a cl_context of its own and one in-order command
// queue on which every synchronous operation runs (opencl_internal.h).
//
// A machine without the loader, a platform or a device has no opencl
// devices; that is logged at debug level and is not an error. A device
// that is present but cannot be set up is left out with a warning naming
// the driver's error: the other devices, and the CPU, still work.
//
// Every OpenCL device has the kind DC_DEVICE_KIND_GPU, pocl's CPU device
// too: the kind says what the engine may assume of the device, and a
// device of kind CPU promises memory handles that are host pointers (the
// built-in matrix product hands them to OpenBLAS) and runs native
// kernels, neither of which an OpenCL device does.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "opencl_internal.h"

// Streams a stream group gets by default: each gets a command queue, and
// the driver runs their work side by side where it can.
#define OPENCL_STREAM_COUNT 4u

// The most devices one context takes from all platforms together.
#define OPENCL_MAX_DEVICES 16u

dc_status_t dc__opencl_failed(dc__opencl_device_t* ocl, cl_int error,
                              const char* format, ...) {
  char what[512];
  int n = snprintf(what, sizeof(what), "%s: ", ocl->base.info.name);
  va_list args;
  va_start(args, format);
  vsnprintf(what + n, sizeof(what) - (size_t)n, format, args);
  va_end(args);
  return dc__opencl_fail(error, what);
}

//===-- The vtable ------------------------------------------------------===//

// Runs alone: the context destroys a device after every buffer and
// program on it is gone.
static void opencl_destroy(dc_device_t* device) {
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)device;
  dc__opencl_kernels_teardown(ocl);
  dc__opencl_memory_teardown(ocl);  // unmaps the staging on the queue
  if (ocl->queue != NULL) {
    ocl->cl->finish(ocl->queue);
    ocl->cl->release_command_queue(ocl->queue);
  }
  if (ocl->control_queue != NULL) {
    ocl->cl->finish(ocl->control_queue);
    ocl->cl->release_command_queue(ocl->control_queue);
  }
  if (ocl->context != NULL) ocl->cl->release_context(ocl->context);
  pthread_mutex_destroy(&ocl->slots_lock);
  pthread_mutex_destroy(&ocl->lock);
  pthread_mutex_destroy(&ocl->staging_lock);
  dc_allocator_free(ocl->allocator, ocl, sizeof(*ocl));
}

static const dc_device_memory_ops_t kOpenclMemory = {
    .allocate = dc__opencl_allocate,
    .deallocate = dc__opencl_deallocate,
    .host_pointer = dc__opencl_host_pointer,
    .write = dc__opencl_write,
    .read = dc__opencl_read,
    .fill = dc__opencl_fill,
    .copy = dc__opencl_copy,
};

static const dc_device_kernel_ops_t kOpenclKernels = {
    .program_build = dc__opencl_program_build,
    .program_destroy = dc__opencl_program_destroy,
    .dispatch = dc__opencl_dispatch,
    .program_cache_stats = dc__opencl_program_cache_stats,
    .preferred_group_size = dc__opencl_preferred_group_size,
};

static const dc_device_queue_ops_t kOpenclQueues = {
    .create = dc__opencl_queue_create,
    .destroy = dc__opencl_queue_destroy,
    .dispatch = dc__opencl_dispatch_queued,
    .finish = dc__opencl_queue_finish,
    .copy = dc__opencl_queue_copy,
};

static const dc_device_event_ops_t kOpenclEvents = {
    .create = dc__opencl_event_create,
    .destroy = dc__opencl_event_destroy,
    .record = dc__opencl_event_record,
    .wait = dc__opencl_event_wait,
};

// No device graphs (graphs run op by op) and no peer copies (devices of
// different contexts share no memory).
static const dc_device_vtable_t kOpenclVtable = {
    .destroy = opencl_destroy,
    .memory = &kOpenclMemory,
    .kernels = &kOpenclKernels,
    .queues = &kOpenclQueues,
    .events = &kOpenclEvents,
};

//===-- Capabilities ----------------------------------------------------===//

// One clGetDeviceInfo of a fixed-size value.
static dc_status_t device_value(dc__opencl_device_t* ocl, cl_device_info what,
                                const char* name, void* out, size_t size) {
  cl_int err = ocl->cl->get_device_info(ocl->device, what, size, out, NULL);
  if (err != CL_SUCCESS) {
    return dc__opencl_failed(ocl, err, "clGetDeviceInfo(%s)", name);
  }
  return DC_OK;
}

// A string property, cut to |size|.
static void device_text(dc__opencl_device_t* ocl, cl_device_info what,
                        char* out, size_t size) {
  char text[1024] = "";
  ocl->cl->get_device_info(ocl->device, what, sizeof(text) - 1, text, NULL);
  text[sizeof(text) - 1] = '\0';
  dc__strlcpy(out, text, size);
}

// Whether the device's extension list names |extension|.
static bool has_extension(dc__opencl_device_t* ocl, const char* extension) {
  size_t size = 0;
  if (ocl->cl->get_device_info(ocl->device, CL_DEVICE_EXTENSIONS, 0, NULL,
                               &size) != CL_SUCCESS || size == 0) {
    return false;
  }
  char* list = dc_allocator_malloc(ocl->allocator, size + 1);
  if (list == NULL) return false;
  bool found = false;
  if (ocl->cl->get_device_info(ocl->device, CL_DEVICE_EXTENSIONS, size, list,
                               NULL) == CL_SUCCESS) {
    list[size] = '\0';
    size_t n = strlen(extension);
    for (const char* p = strstr(list, extension); p != NULL && !found;
         p = strstr(p + 1, extension)) {
      found = (p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0');
    }
  }
  dc_allocator_free(ocl->allocator, list, size + 1);
  return found;
}

// Writes the device's PCI address into |out| ("" where the driver does
// not say).
static void pci_address(dc__opencl_device_t* ocl, char* out, size_t size) {
  const dc__opencl_functions_t* cl = ocl->cl;
  cl_uint khr[4] = {0};  // domain, bus, device, function
  cl_uint bus = 0, slot = 0, domain = 0;
  out[0] = '\0';
  if (has_extension(ocl, "cl_khr_pci_bus_info") &&
      cl->get_device_info(ocl->device, DC_CL_DEVICE_PCI_BUS_INFO_KHR,
                          sizeof(khr), khr, NULL) == CL_SUCCESS) {
    snprintf(out, size, "%04x:%02x:%02x.%x", khr[0] & 0xffffu, khr[1] & 0xffu,
             khr[2] & 0x1fu, khr[3] & 7u);
  } else if (has_extension(ocl, "cl_nv_device_attribute_query") &&
             cl->get_device_info(ocl->device, DC_CL_DEVICE_PCI_BUS_ID_NV,
                                 sizeof(bus), &bus, NULL) == CL_SUCCESS &&
             cl->get_device_info(ocl->device, DC_CL_DEVICE_PCI_SLOT_ID_NV,
                                 sizeof(slot), &slot, NULL) == CL_SUCCESS) {
    // Older drivers have no domain query: domain 0, as on most hosts.
    cl->get_device_info(ocl->device, DC_CL_DEVICE_PCI_DOMAIN_ID_NV,
                        sizeof(domain), &domain, NULL);
    snprintf(out, size, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu,
             (slot >> 3) & 0x1fu, slot & 7u);
  }
}

// Whether transfers with host memory go through pinned staging: on a device
// with memory of its own (a discrete GPU), where the driver moves pageable
// memory at a fraction of the bus's speed; not where the device's memory
// is the host's (pocl, integrated GPUs), where staging would only add a
// copy. DC_OPENCL_STAGE=1 or 0 decides instead (tests use it to run the
// staged paths on pocl).
static bool stages_transfers(const dc__opencl_device_t* ocl, cl_bool unified) {
  const char* forced = getenv("DC_OPENCL_STAGE");
  if (forced != NULL &&
      (strcmp(forced, "1") == 0 || strcmp(forced, "0") == 0)) {
    return forced[0] == '1';
  }
  return (ocl->type & CL_DEVICE_TYPE_GPU) != 0 && !unified;
}

// Fills |info| and the backend's own limits from the driver's answers.
static dc_status_t describe(dc__opencl_device_t* ocl, dc_device_info_t* info) {
  cl_uint units = 0, line = 0;
  size_t group = 0;
  cl_ulong global = 0, local = 0, max_alloc = 0, cache = 0;
  cl_device_local_mem_type local_type = CL_LOCAL;
  cl_bool unified = CL_FALSE;
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_TYPE, "TYPE", &ocl->type,
                                  sizeof(ocl->type)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_MAX_COMPUTE_UNITS,
                                  "MAX_COMPUTE_UNITS", &units, sizeof(units)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                                  "MAX_WORK_GROUP_SIZE", &group,
                                  sizeof(group)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_MAX_WORK_ITEM_SIZES,
                                  "MAX_WORK_ITEM_SIZES", ocl->max_item_sizes,
                                  sizeof(ocl->max_item_sizes)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_GLOBAL_MEM_SIZE,
                                  "GLOBAL_MEM_SIZE", &global, sizeof(global)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_LOCAL_MEM_SIZE,
                                  "LOCAL_MEM_SIZE", &local, sizeof(local)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_LOCAL_MEM_TYPE,
                                  "LOCAL_MEM_TYPE", &local_type,
                                  sizeof(local_type)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                                  "MAX_MEM_ALLOC_SIZE", &max_alloc,
                                  sizeof(max_alloc)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
                                  "GLOBAL_MEM_CACHE_SIZE", &cache,
                                  sizeof(cache)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
                                  "GLOBAL_MEM_CACHELINE_SIZE", &line,
                                  sizeof(line)));
  DC_RETURN_IF_ERROR(device_value(ocl, CL_DEVICE_HOST_UNIFIED_MEMORY,
                                  "HOST_UNIFIED_MEMORY", &unified,
                                  sizeof(unified)));
  if (units == 0 || group == 0) {
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "%s: the driver reports no compute units or work-group "
                   "size",
                   ocl->base.info.name);
  }
  ocl->max_alloc = (size_t)max_alloc;
  ocl->host_unified = unified != CL_FALSE;
  ocl->stage_transfers = stages_transfers(ocl, unified);
  ocl->fp64 = has_extension(ocl, "cl_khr_fp64");
  cl_device_fp_config fp32 = 0;
  ocl->rounded_div_sqrt =
      ocl->cl->get_device_info(ocl->device, CL_DEVICE_SINGLE_FP_CONFIG,
                               sizeof(fp32), &fp32, NULL) == CL_SUCCESS &&
      (fp32 & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  ocl->int64_atomics = has_extension(ocl, "cl_khr_int64_base_atomics");
  device_text(ocl, CL_DEVICE_VERSION, ocl->version, sizeof(ocl->version));
  device_text(ocl, CL_DRIVER_VERSION, ocl->driver, sizeof(ocl->driver));
  *info = (dc_device_info_t){.kind = DC_DEVICE_KIND_GPU};  // see the top
  dc__strlcpy(info->name, ocl->base.info.name, sizeof(info->name));
  dc__strlcpy(info->backend, "opencl", sizeof(info->backend));
  device_text(ocl, CL_DEVICE_NAME, info->model, sizeof(info->model));
  info->compute_units = units;
  info->worker_threads = units;
  // The lanes a group should be a multiple of: a warp on NVIDIA and
  // (at least half) a wavefront on AMD; on a CPU the work-items of a
  // group are vectorised 8 floats wide (AVX2) by pocl and Intel's runtime.
  info->simd_width = (ocl->type & CL_DEVICE_TYPE_GPU) ? 32u : 8u;
  info->max_work_group_size = (uint32_t)DC_MIN(group, (size_t)UINT32_MAX);
  info->local_memory_size = (size_t)local;
  info->memory_size = (size_t)global;
  if (ocl->type & CL_DEVICE_TYPE_GPU) {
    info->cache_l2_size = (size_t)cache;
  } else {
    info->cache_l3_size = (size_t)cache;
  }
  info->cache_line_size = line;
  info->unified_memory = false;  // no memory is host-visible (memory.c)
  info->stream_count = OPENCL_STREAM_COUNT;
  info->max_cooperative_groups = 0;  // OpenCL 1.2 has no grid barrier
  pci_address(ocl, info->pci_bus_id, sizeof(info->pci_bus_id));
  return DC_OK;
}

//===-- Setting a device up ---------------------------------------------===//

static dc_status_t open_device(dc__opencl_device_t* ocl) {
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)ocl->platform, 0};
  ocl->context =
      ocl->cl->create_context(props, 1, &ocl->device, NULL, NULL, &err);
  if (ocl->context == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateContext");
  }
  ocl->queue = ocl->cl->create_command_queue(ocl->context, ocl->device, 0,
                                             &err);
  if (ocl->queue == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateCommandQueue");
  }
  if (ocl->host_unified) return DC_OK;  // stop words are mapped there
  ocl->control_queue = ocl->cl->create_command_queue(
      ocl->context, ocl->device, 0, &err);
  if (ocl->control_queue == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateCommandQueue (control)");
  }
  return DC_OK;
}

static void log_device(dc_context_t* ctx, const dc__opencl_device_t* ocl) {
  const dc_device_info_t* info = &ocl->base.info;
  char memory[32], local[32];
  DC_LOG(ctx, DC_LOG_INFO, "opencl",
         "%s: %s (%s), %u compute units, %s, %s local memory, groups up to "
         "%u; %s, driver %s%s",
         info->name, info->model,
         (ocl->type & CL_DEVICE_TYPE_GPU) ? "GPU"
         : (ocl->type & CL_DEVICE_TYPE_CPU) ? "CPU"
                                            : "accelerator",
         info->compute_units,
         dc__format_bytes(info->memory_size, memory, sizeof(memory)),
         dc__format_bytes(info->local_memory_size, local, sizeof(local)),
         info->max_work_group_size, ocl->version, ocl->driver,
         ocl->fp64 ? ", fp64" : "");
}

// The device of |ctx| at PCI address |pci|, or NULL ("" matches none).
static dc_device_t* device_at(dc_context_t* ctx, const char* pci) {
  for (size_t i = 0; pci[0] != '\0' && i < dc_context_device_count(ctx);
       ++i) {
    dc_device_t* device = NULL;
    if (dc_context_device(ctx, i, &device) == DC_OK &&
        strcmp(dc_device_info(device)->pci_bus_id, pci) == 0) {
      return device;
    }
  }
  return NULL;
}

// Whether the context drives |info|'s hardware already through an
// earlier backend (a GPU that CUDA and NVIDIA's OpenCL both reach): one
// process using a GPU through both drivers at once is not something
// their vendors support, and NVIDIA's fails kernels when CUDA holds the
// GPU (docs/backends.md).
static bool driven_already(dc_context_t* ctx, const dc_device_info_t* info) {
  dc_device_t* twin = device_at(ctx, info->pci_bus_id);
  if (twin == NULL) return false;
  const dc_device_info_t* t = dc_device_info(twin);
  DC_LOG(ctx, DC_LOG_INFO, "opencl",
         "%s (PCI %s) left out: it is %s, which the context drives already; "
         "leave '%s' out of the backends to use it through OpenCL",
         info->model, info->pci_bus_id, t->name, t->backend);
  return true;
}

// Adds device |id| of |platform| as opencl:|*ordinal| and counts it. A
// device the driver cannot set up, or one the context has already
// through another backend, is skipped (returns DC_OK, not counted); only
// a failure of the host (no memory, a full context) fails the context's
// creation.
static dc_status_t add_device(dc_context_t* ctx,
                              const dc__opencl_functions_t* cl,
                              cl_platform_id platform, cl_device_id id,
                              int* ordinal) {
  dc_allocator_t allocator = dc_context_allocator(ctx);
  dc__opencl_device_t* ocl = dc_allocator_calloc(allocator, 1, sizeof(*ocl));
  if (ocl == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the opencl:%d device",
                   *ordinal);
  }
  ocl->cl = cl;
  ocl->allocator = allocator;
  ocl->ordinal = *ordinal;
  ocl->platform = platform;
  ocl->device = id;
  pthread_mutex_init(&ocl->slots_lock, NULL);
  pthread_mutex_init(&ocl->lock, NULL);
  pthread_mutex_init(&ocl->staging_lock, NULL);
  // The name is needed by error messages before the device is initialised.
  snprintf(ocl->base.info.name, sizeof(ocl->base.info.name), "opencl:%d",
           *ordinal);
  cl->get_platform_info(platform, CL_PLATFORM_NAME,
                        sizeof(ocl->platform_name) - 1, ocl->platform_name,
                        NULL);
  dc_device_info_t info;
  dc_status_t status = describe(ocl, &info);
  if (status == DC_OK && driven_already(ctx, &info)) {
    opencl_destroy(&ocl->base);
    return DC_OK;
  }
  if (status == DC_OK) status = open_device(ocl);
  if (status != DC_OK) {
    DC_LOG(ctx, DC_LOG_WARN, "opencl", "opencl:%d left out: %s", *ordinal,
           dc_last_error());
    opencl_destroy(&ocl->base);
    return DC_OK;
  }
  status = dc_device_initialize(&ocl->base, &kOpenclVtable, ctx, &info);
  if (status == DC_OK) status = dc_context_add_device(ctx, &ocl->base);
  if (status != DC_OK) {
    opencl_destroy(&ocl->base);  // the context did not take it
    return status;
  }
  log_device(ctx, ocl);
  ++*ordinal;
  return DC_OK;
}

dc_status_t dc__opencl_enumerate(dc_context_t* ctx) {
  const dc__opencl_api_t* api = dc__opencl_api();
  if (api->cl == NULL) {
    DC_LOG(ctx, DC_LOG_DEBUG, "opencl", "no devices: %s", api->why_missing);
    return DC_OK;
  }
  const dc__opencl_functions_t* cl = api->cl;
  cl_platform_id platforms[16];
  cl_uint platform_count = 0;
  cl_int err = cl->get_platform_ids(16, platforms, &platform_count);
  if (err != CL_SUCCESS || platform_count == 0) {
    DC_LOG(ctx, DC_LOG_DEBUG, "opencl",
           "no devices: the ICD loader (%s) finds no platform (%s)",
           api->library,
           err == CL_SUCCESS ? "none installed" : dc__opencl_error_name(err));
    return DC_OK;
  }
  int ordinal = 0;
  for (cl_uint p = 0; p < platform_count && p < 16; ++p) {
    cl_device_id ids[OPENCL_MAX_DEVICES];
    cl_uint count = 0;
    if (cl->get_device_ids(platforms[p], CL_DEVICE_TYPE_ALL,
                           OPENCL_MAX_DEVICES, ids, &count) != CL_SUCCESS) {
      continue;  // a platform without devices answers CL_DEVICE_NOT_FOUND
    }
    for (cl_uint d = 0; d < count && d < OPENCL_MAX_DEVICES &&
                        ordinal < (int)OPENCL_MAX_DEVICES;
         ++d) {
      DC_RETURN_IF_ERROR(add_device(ctx, cl, platforms[p], ids[d], &ordinal));
    }
  }
  if (ordinal == 0) {
    DC_LOG(ctx, DC_LOG_DEBUG, "opencl",
           "no devices: %u platform(s), no device added from them",
           platform_count);
  }
  return DC_OK;
}

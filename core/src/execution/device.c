// device.c: device accessors, lookup, and how backends add devices.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "context_internal.h"
#include "memory_pool_internal.h"
#include "stream_internal.h"

const dc_device_info_t* dc_device_info(const dc_device_t* device) {
  return device ? &device->info : NULL;
}

const char* dc_device_name(const dc_device_t* device) {
  return device ? device->info.name : "";
}

dc_context_t* dc_device_context(const dc_device_t* device) {
  return device ? device->context : NULL;
}

dc_status_t dc_device_initialize(dc_device_t* device,
                                 const dc_device_vtable_t* vtable,
                                 dc_context_t* context,
                                 const dc_device_info_t* info) {
  static const char* fn = "dc_device_initialize";
  DC_REQUIRE_ARG(device, fn);
  DC_REQUIRE_ARG(vtable, fn);
  DC_REQUIRE_ARG(context, fn);
  DC_REQUIRE_ARG(info, fn);
  if (!vtable->destroy || !vtable->allocate || !vtable->deallocate ||
      !vtable->host_pointer || !vtable->write || !vtable->read ||
      !vtable->fill || !vtable->copy) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the vtable of device '%s' lacks a function", fn,
                   info->name);
  }
  bool queues = vtable->queue_create != NULL;
  if (queues != (vtable->queue_destroy != NULL) ||
      queues != (vtable->dispatch_queued != NULL) ||
      queues != (vtable->queue_finish != NULL)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the vtable of device '%s' has some of the queue "
                   "functions but not all four",
                   fn, info->name);
  }
  bool events = vtable->event_create != NULL;
  if (events != (vtable->event_destroy != NULL) ||
      events != (vtable->queue_record != NULL) ||
      events != (vtable->queue_wait != NULL) || (events && !queues)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the vtable of device '%s' has some of the event "
                   "functions but not all four, or events without queues",
                   fn, info->name);
  }
  bool graphs = vtable->graph_create != NULL;
  if (graphs != (vtable->graph_run != NULL) ||
      graphs != (vtable->graph_destroy != NULL)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the vtable of device '%s' has some of the graph "
                   "functions but not all three",
                   fn, info->name);
  }
  if (info->name[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: the device has no name", fn);
  }
  device->vtable = vtable;
  device->context = context;
  device->info = *info;
  device->pool = NULL;
  device->builtins = NULL;
  if (device->info.stream_count == 0) device->info.stream_count = 2;
  return DC_OK;
}

// A quarter of the device's memory, at most 1 GiB: enough to keep a
// pipeline's working set cached without hoarding a small device.
static size_t default_cache_limit(const dc_device_info_t* info) {
  size_t quarter = info->memory_size / 4;
  size_t gib = (size_t)1 << 30;
  return (quarter == 0 || quarter > gib) ? gib : quarter;
}

dc_status_t dc_context_add_device(dc_context_t* ctx, dc_device_t* device) {
  static const char* fn = "dc_context_add_device";
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(device, fn);
  if (device->vtable == NULL || device->context != ctx) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: device was not initialised for this context", fn);
  }
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (strcmp(ctx->devices[i]->info.name, device->info.name) == 0) {
      return DC_FAIL(DC_ERR_ALREADY_EXISTS, "%s: a device named '%s' exists",
                     fn, device->info.name);
    }
  }
  if (ctx->device_count == DC_MAX_DEVICES) {
    return DC_FAIL(DC_ERR_RESOURCE_EXHAUSTED,
                   "%s: the context already has %d devices", fn,
                   DC_MAX_DEVICES);
  }
  size_t cache_limit = ctx->params.pool_cache_limit;
  if (cache_limit == 0) cache_limit = default_cache_limit(&device->info);
  DC_RETURN_IF_ERROR(dc__memory_pool_create(
      device, cache_limit, ctx->params.device_memory_budget, &device->pool));
  dc__scheduler_add_device(ctx->scheduler, ctx->device_count, device);
  ctx->devices[ctx->device_count++] = device;
  DC_LOG(ctx, DC_LOG_DEBUG, "device", "added %s (%s)", device->info.name,
         device->info.model);
  return DC_OK;
}

size_t dc_context_device_count(const dc_context_t* ctx) {
  return ctx ? ctx->device_count : 0;
}

dc_status_t dc_context_device(const dc_context_t* ctx, size_t index,
                              dc_device_t** out_device) {
  DC_REQUIRE_ARG(out_device, "dc_context_device");
  *out_device = NULL;
  DC_REQUIRE_ARG(ctx, "dc_context_device");
  if (index >= ctx->device_count) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "dc_context_device: index %zu is out of range (the "
                   "context has %zu device(s))",
                   index, ctx->device_count);
  }
  *out_device = ctx->devices[index];
  return DC_OK;
}

// Writes "cpu, cuda:0" into |buf|, for messages.
static const char* list_devices(const dc_context_t* ctx, char* buf,
                                size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < ctx->device_count && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     ctx->devices[i]->info.name);
    if (n < 0) break;
    used += (size_t)n;
  }
  return buf;
}

dc_status_t dc_context_find_device(const dc_context_t* ctx, const char* name,
                                   dc_device_t** out_device) {
  static const char* fn = "dc_context_find_device";
  DC_REQUIRE_ARG(out_device, fn);
  *out_device = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  DC_REQUIRE_ARG(name, fn);
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (strcmp(ctx->devices[i]->info.name, name) == 0) {
      *out_device = ctx->devices[i];
      return DC_OK;
    }
  }
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (strcmp(ctx->devices[i]->info.backend, name) == 0) {
      *out_device = ctx->devices[i];
      return DC_OK;
    }
  }
  char names[256];
  return DC_FAIL(DC_ERR_NOT_FOUND,
                 "%s: no device named '%s' (devices: %s)", fn, name,
                 list_devices(ctx, names, sizeof(names)));
}

dc_status_t dc_context_default_device(const dc_context_t* ctx,
                                      dc_device_t** out_device) {
  DC_REQUIRE_ARG(out_device, "dc_context_default_device");
  *out_device = NULL;
  DC_REQUIRE_ARG(ctx, "dc_context_default_device");
  for (size_t i = 0; i < ctx->device_count; ++i) {
    if (ctx->devices[i]->info.kind == DC_DEVICE_KIND_GPU) {
      *out_device = ctx->devices[i];
      return DC_OK;
    }
  }
  *out_device = ctx->devices[0];
  return DC_OK;
}

// device.c: device accessors, lookup, and how backends add devices.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "context_internal.h"
#include "memory_pool_internal.h"
#include "scheduler.h"

const dc_device_info_t* dc_device_info(const dc_device_t* device) {
  return device ? &device->info : NULL;
}

const char* dc_device_name(const dc_device_t* device) {
  return device ? device->info.name : "";
}

dc_context_t* dc_device_context(const dc_device_t* device) {
  return device ? device->context : NULL;
}

// What is wrong with |vt| (a phrase that follows "the vtable of device
// 'x'"), or NULL: every table present complete, and present with what it
// needs.
static const char* vtable_gap(const dc_device_vtable_t* vt) {
  const dc_device_memory_ops_t* m = vt->memory;
  if (vt->destroy == NULL) return "has no destroy function";
  if (m == NULL) return "has no memory table";
  if (!m->allocate || !m->deallocate || !m->host_pointer || !m->write ||
      !m->read || !m->fill || !m->copy) {
    return "has a memory table that lacks a function";
  }
  const dc_device_kernel_ops_t* k = vt->kernels;
  if (k != NULL && (!k->program_build || !k->program_destroy || !k->dispatch ||
                    (k->matmul == NULL) != (k->matmul_library == NULL))) {
    return "has a kernel table that lacks a function (matmul and "
           "matmul_library go together)";
  }
  const dc_device_queue_ops_t* q = vt->queues;
  if (q != NULL && (!q->create || !q->destroy || !q->dispatch || !q->finish)) {
    return "has a queue table that lacks a function";
  }
  if (q != NULL && k == NULL) return "has queues but no kernels";
  if (q != NULL && (q->write_pinned == NULL) != (q->read_pinned == NULL)) {
    return "has a queue table with one of write_pinned and read_pinned "
           "(they go together)";
  }
  if (q != NULL && q->write_pinned != NULL && vt->pinning == NULL) {
    return "has queued pinned copies but no pinning table";
  }
  const dc_device_event_ops_t* e = vt->events;
  if (e != NULL && (!e->create || !e->destroy || !e->record || !e->wait)) {
    return "has an event table that lacks a function";
  }
  if (e != NULL && q == NULL) return "has events but no queues";
  const dc_device_graph_ops_t* g = vt->graphs;
  if (g != NULL && (!g->create || !g->run || !g->destroy)) {
    return "has a graph table that lacks a function";
  }
  if (g != NULL && k == NULL) return "has graphs but no kernels";
  if (vt->peer != NULL && vt->peer->copy == NULL) {
    return "has a peer table without copy";
  }
  const dc_device_pinning_ops_t* p = vt->pinning;
  if (p != NULL &&
      (!p->pin || !p->unpin || !p->write_pinned || !p->read_pinned)) {
    return "has a pinning table that lacks a function";
  }
  return NULL;
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
  const char* missing = vtable_gap(vtable);
  if (missing != NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the vtable of device '%s' %s", fn, info->name,
                   missing);
  }
  if (info->name[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: the device has no name", fn);
  }
  device->vtable = vtable;
  device->context = context;
  device->info = *info;
  device->core = NULL;
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
  struct dc__device_core_t* core = &ctx->device_cores[ctx->device_count];
  *core = (struct dc__device_core_t){0};
  DC_RETURN_IF_ERROR(dc__memory_pool_create(
      device, cache_limit, ctx->params.device_memory_budget, &core->pool));
  device->core = core;
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

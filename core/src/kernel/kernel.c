// kernel.c: kernel reflection and dispatch: every check happens here,
// once, before the backend runs anything.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "buffer_internal.h"
#include "fault_internal.h"
#include "program_internal.h"
#include "telemetry_internal.h"

// A kernel is part of its program: it is live while the program is. A
// released program keeps its kernels readable while it waits in the
// quarantine (dc__program_evict), so this reads no freed memory.
static bool is_kernel(const dc_kernel_t* k) {
  return k != NULL &&
         dc__resource_live(DC__RES(k->program), &dc__program_type);
}

void dc_kernel_retain(dc_kernel_t* k) {
  if (is_kernel(k)) dc_program_retain(k->program);
}

void dc_kernel_release(dc_kernel_t* k) {
  if (is_kernel(k)) dc_program_release(k->program);
}

const char* dc_kernel_name(const dc_kernel_t* k) {
  return is_kernel(k) ? k->info.name : "";
}

dc_status_t dc_kernel_info(const dc_kernel_t* k, dc_kernel_info_t* out_info) {
  DC_REQUIRE_ARG(out_info, "dc_kernel_info");
  if (!is_kernel(k)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_kernel_info: 'kernel' is NULL or a released kernel");
  }
  *out_info = k->info;
  return DC_OK;
}

const dc_kernel_arg_info_t* dc_kernel_arg_info(const dc_kernel_t* k,
                                               size_t index) {
  if (!is_kernel(k) || index >= k->info.arg_count) return NULL;
  return &k->args[index];
}

// Writes "(a, b, c)" into |buf|, for messages.
static const char* arg_names(const dc_kernel_t* k, char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < k->info.arg_count && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     k->args[i].name);
    if (n > 0) used += (size_t)n;
  }
  return buf;
}

dc_status_t dc_kernel_find_arg(const dc_kernel_t* k, const char* name,
                               size_t* out_index) {
  static const char* fn = "dc_kernel_find_arg";
  DC_REQUIRE_ARG(name, fn);
  DC_REQUIRE_ARG(out_index, fn);
  if (!is_kernel(k)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'kernel' is NULL", fn);
  }
  for (size_t i = 0; i < k->info.arg_count; ++i) {
    if (strcmp(k->args[i].name, name) == 0) {
      *out_index = i;
      return DC_OK;
    }
  }
  char names[256];
  return DC_FAIL(DC_ERR_NOT_FOUND, "%s: kernel '%s' has no argument '%s' "
                 "(arguments: %s)", fn, k->info.name, name,
                 arg_names(k, names, sizeof(names)));
}

//===-- Argument checks -------------------------------------------------===//

static const char* kind_name(dc_arg_kind_t kind) {
  switch (kind) {
    case DC_ARG_SCALAR: return "a value";
    case DC_ARG_BUFFER: return "a buffer";
    case DC_ARG_LOCAL: return "a __local size";
    case DC_ARG_RECORD: return "a struct's bytes (dc_arg_bytes)";
  }
  return "an unknown kind of argument";
}

static dc_status_t arg_error(const char* fn, const dc_kernel_t* k, size_t i,
                             const char* detail) {
  return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                 "%s: kernel '%s': argument %zu '%s' (%s): %s", fn,
                 k->info.name, i, k->args[i].name, k->args[i].type_name,
                 detail);
}

static dc_status_t check_buffer_arg(const char* fn, const dc_kernel_t* k,
                                    size_t i, const dc_arg_t* a) {
  const dc_kernel_arg_info_t* info = &k->args[i];
  char detail[200];
  if (a->buffer == NULL || dc_buffer_device(a->buffer) == NULL) {
    return arg_error(fn, k, i, "the buffer is NULL or a released buffer");
  }
  if (a->buffer->device != k->program->device) {
    snprintf(detail, sizeof(detail),
             "the buffer lives on %s, the kernel on %s; copy it first",
             a->buffer->device->info.name, k->program->device->info.name);
    return arg_error(fn, k, i, detail);
  }
  if (info->dtype != 0 && info->dtype != a->buffer->dtype) {
    snprintf(detail, sizeof(detail), "the buffer holds %s, the kernel "
             "expects %s", dc_dtype_name(a->buffer->dtype),
             dc_dtype_name(info->dtype));
    return arg_error(fn, k, i, detail);
  }
  // A 3-component vector takes the room of 4 elements (OpenCL C 6.1.5).
  uint32_t slots = info->vector_width == 3 ? 4 : info->vector_width;
  if (slots > 1 && a->buffer->length % slots != 0) {
    snprintf(detail, sizeof(detail), "the buffer's %zu elements are not "
             "whole %sx%u vectors%s", a->buffer->length,
             dc_dtype_name(info->dtype), info->vector_width,
             info->vector_width == 3 ? " (each takes the room of 4)" : "");
    return arg_error(fn, k, i, detail);
  }
  return DC_OK;
}

// A struct passed by value: exactly its bytes, as the front end laid it
// out (the host's layout of the same declaration).
static dc_status_t check_record_arg(const char* fn, const dc_kernel_t* k,
                                    size_t i, const dc_arg_t* a) {
  const dc_kernel_arg_info_t* info = &k->args[i];
  char detail[200];
  if (a->size != info->size) {
    snprintf(detail, sizeof(detail), "got %zu bytes, the kernel's %s "
             "takes %zu", a->size, info->is_union ? "union" : "struct",
             info->size);
    return arg_error(fn, k, i, detail);
  }
  if (a->bytes == NULL && a->size > sizeof(a->value)) {
    return arg_error(fn, k, i, "its bytes are NULL");
  }
  return DC_OK;
}

dc_status_t dc__kernel_check_arg(const char* fn, const dc_kernel_t* k,
                                 size_t i, const dc_arg_t* a) {
  const dc_kernel_arg_info_t* info = &k->args[i];
  char detail[200];
  if (a->kind != info->kind) {
    snprintf(detail, sizeof(detail), "expected %s, got %s",
             kind_name(info->kind), kind_name(a->kind));
    return arg_error(fn, k, i, detail);
  }
  switch (a->kind) {
    case DC_ARG_BUFFER:
      return check_buffer_arg(fn, k, i, a);
    case DC_ARG_LOCAL:
      if (a->local_size == 0) return arg_error(fn, k, i, "the __local size is 0");
      return DC_OK;
    case DC_ARG_SCALAR:
      if (a->dtype != info->dtype || a->vector_width != info->vector_width) {
        snprintf(detail, sizeof(detail), "got a value of %s%s%.0u",
                 dc_dtype_name(a->dtype), a->vector_width > 1 ? "x" : "",
                 a->vector_width > 1 ? a->vector_width : 0);
        return arg_error(fn, k, i, detail);
      }
      return DC_OK;
    case DC_ARG_RECORD:
      return check_record_arg(fn, k, i, a);
  }
  return arg_error(fn, k, i, "unknown argument kind");
}

//===-- Geometry --------------------------------------------------------===//

// The largest divisor of |n| that is at most |limit|, preferring multiples
// of |step| (vector lanes) when one exists.
static size_t best_divisor(size_t n, size_t limit, size_t step) {
  if (limit >= n) return n;
  if (limit == 0) limit = 1;
  for (size_t c = limit - limit % step; step > 1 && c >= step; c -= step) {
    if (n % c == 0) return c;
  }
  for (size_t c = limit; c > 1; --c) {
    if (n % c == 0) return c;
  }
  return 1;
}

// The smallest divisor of |n| in [|low|, |limit|], or 0 if none.
static size_t divisor_at_least(size_t n, size_t low, size_t limit) {
  for (size_t c = DC_MAX(low, (size_t)1); c <= DC_MIN(n, limit); ++c) {
    if (n % c == 0) return c;
  }
  return 0;
}

static size_t group_count(const dc_launch_t* l) {
  return (l->global[0] / l->local[0]) * (l->global[1] / l->local[1]) *
         (l->global[2] / l->local[2]);
}

// Grows |l|'s groups until the grid has at most |max_groups| of them, as a
// cooperative dispatch needs, dimension 0 first, keeping each group within
// |max_size| work-items and each size a divisor of the grid. Leaves the
// closest it got when no size fits; the dispatch then refuses the grid.
static void fit_groups(dc_launch_t* l, size_t max_groups, size_t max_size) {
  max_groups = DC_MAX(max_groups, (size_t)1);
  for (uint32_t dim = 0; dim < 3 && group_count(l) > max_groups; ++dim) {
    size_t groups = l->global[dim] / l->local[dim];
    size_t others = group_count(l) / groups;
    size_t budget = DC_MAX(max_groups / others, (size_t)1);
    size_t size_others = l->local[0] * l->local[1] * l->local[2] /
                         l->local[dim];
    size_t limit = DC_MAX(max_size / size_others, (size_t)1);
    size_t need = (l->global[dim] + budget - 1) / budget;
    size_t c = divisor_at_least(l->global[dim], need, limit);
    if (c == 0) c = best_divisor(l->global[dim], limit, 1);
    if (c > l->local[dim]) l->local[dim] = c;
  }
}

// The threadgroup optimiser: picks a work-group size that divides the grid,
// spans whole vectors in dimension 0 where it can, and stays small for
// barrier kernels, whose private variables live per work-item. |want| is
// the number of work-items to aim for; 0 picks one that keeps each worker
// busy with several groups. A kernel that synchronises its grid aims at
// one group per resident slot instead, and its groups grow until they fit.
void dc__choose_local(const dc_kernel_t* k, dc_launch_t* l, size_t want) {
  dc_device_t* device = k->program->device;
  const dc_device_info_t* d = &device->info;
  size_t lanes = d->kind == DC_DEVICE_KIND_CPU ? DC_MAX(d->simd_width / 4, 1u)
                                               : d->simd_width;
  size_t cap = k->info.uses_barrier ? 256 : k->info.max_group_size;
  size_t total = l->global[0] * l->global[1] * l->global[2];
  size_t slots = DC_MAX(d->max_cooperative_groups, 1u);
  // A device that knows better (a GPU's occupancy calculator) says how
  // large a group to aim at; l->local_memory is already known.
  const dc_device_kernel_ops_t* ops = device->vtable->kernels;
  size_t preferred =
      want == 0 && !k->info.uses_grid_sync && ops->preferred_group_size != NULL
          ? ops->preferred_group_size(device, k, total, l->local_memory)
          : 0;
  if (preferred > 0) {
    want = preferred;
    cap = k->info.max_group_size;
  } else if (want == 0 && k->info.uses_grid_sync) {
    want = DC_MAX((total + slots - 1) / slots, lanes);
  } else if (want == 0) {
    size_t target_groups = (size_t)DC_MAX(d->worker_threads, 1u) * 8;
    want = DC_MAX(total / target_groups, lanes);
    if (k->info.uses_barrier) want = DC_MIN(want, (size_t)64);
  } else {
    want *= lanes;
  }
  size_t left = DC_MIN(DC_MIN(want, cap), k->info.max_group_size);
  for (uint32_t dim = 0; dim < 3; ++dim) {
    l->local[dim] = best_divisor(l->global[dim], left, dim == 0 ? lanes : 1);
    left = DC_MAX(left / l->local[dim], (size_t)1);
  }
  if (k->info.uses_grid_sync) fit_groups(l, slots, k->info.max_group_size);
}

static dc_status_t check_grid(const char* fn, const dc_kernel_t* k,
                              const dc_dispatch_t* g, dc_launch_t* l) {
  const char* name = k->info.name;
  if (g->dims < 1 || g->dims > 3) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': dims is %u (must be 1, 2 or 3)",
                   fn, name, g->dims);
  }
  bool local_given = false;
  for (uint32_t d = 0; d < g->dims; ++d) local_given |= g->local[d] != 0;
  const uint32_t* req = k->info.required_group_size;
  bool required = req[0] != 0;
  *l = (dc_launch_t){.dims = g->dims};
  for (uint32_t d = 0; d < 3; ++d) {
    bool used = d < g->dims;
    l->global[d] = used ? g->global[d] : 1;
    l->offset[d] = used ? g->offset[d] : 0;
    l->local[d] = used ? (local_given ? g->local[d] : required ? req[d] : 0)
                       : 1;
    if (used && l->global[d] == 0) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: kernel '%s': the grid is empty (global size of "
                     "dimension %u is 0)",
                     fn, name, d);
    }
    if (used && (local_given || required) && l->local[d] == 0) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: kernel '%s': work-group size of dimension %u is 0 "
                     "(give every dimension, or none)",
                     fn, name, d);
    }
  }
  return DC_OK;
}

static dc_status_t check_group(const char* fn, const dc_kernel_t* k,
                               dc_launch_t* l) {
  const char* name = k->info.name;
  const dc_device_info_t* dev = &k->program->device->info;
  const uint32_t* req = k->info.required_group_size;
  size_t size = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    if (l->global[d] % l->local[d] != 0) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: kernel '%s': global size %zu of dimension %u is "
                     "not a multiple of the work-group size %zu",
                     fn, name, l->global[d], d, l->local[d]);
    }
    if (req[0] != 0 && l->local[d] != req[d]) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: kernel '%s' requires work-groups of %ux%ux%u "
                     "(reqd_work_group_size)",
                     fn, name, req[0], req[1], req[2]);
    }
    l->groups[d] = l->global[d] / l->local[d];
    size *= l->local[d];
  }
  if (size > dev->max_work_group_size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': a work-group of %zu work-items is more "
                   "than %s allows (%u)",
                   fn, name, size, dev->name, dev->max_work_group_size);
  }
  if (size > k->info.max_group_size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': a work-group of %zu work-items is more "
                   "than the kernel takes on %s (%zu, as its compiler says)",
                   fn, name, size, dev->name, k->info.max_group_size);
  }
  return DC_OK;
}

// A kernel that synchronises its grid waits, at each dc_grid_sync(), for
// every group of the dispatch: groups that had to wait for a free slot
// would never arrive. So all of them must be resident at once. The grid
// is what the caller asked for, and a device's slots do not free up with
// time, so a grid too large is an invalid argument (not a transient
// shortage of resources): the same dispatch would fail the same way again.
static dc_status_t check_residency(const char* fn, const dc_kernel_t* k,
                                   const dc_launch_t* l) {
  if (!k->info.uses_grid_sync) return DC_OK;
  const dc_device_info_t* dev = &k->program->device->info;
  size_t groups = l->groups[0] * l->groups[1] * l->groups[2];
  if (dev->max_cooperative_groups == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' synchronises its grid (dc_grid_sync) but "
                   "%s cannot run cooperative kernels",
                   fn, k->info.name, dev->name);
  }
  if (groups > dev->max_cooperative_groups) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' synchronises its grid (dc_grid_sync) but "
                   "its %zu work-groups cannot all be resident on %s at once "
                   "(at most %u); use fewer, larger groups",
                   fn, k->info.name, groups, dev->name,
                   dev->max_cooperative_groups);
  }
  return DC_OK;
}

//===-- Dispatch --------------------------------------------------------===//

// Sums the kernel's own __local variables and its __local arguments, each
// 64-byte aligned, into |l|->local_memory and checks it against the device.
static dc_status_t size_local_memory(const char* fn, const dc_kernel_t* k,
                                     const dc_arg_t* args, dc_launch_t* l) {
  size_t local = DC_ALIGN_UP(k->info.static_local_size, 64);
  for (size_t i = 0; i < k->info.arg_count; ++i) {
    if (args[i].kind == DC_ARG_LOCAL) {
      local += DC_ALIGN_UP(args[i].local_size, 64);
    }
  }
  const dc_device_info_t* dev = &k->program->device->info;
  l->local_memory = local;
  if (local > dev->local_memory_size) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' needs %zu bytes of __local memory per "
                   "work-group; %s has %zu",
                   fn, k->info.name, local, dev->name,
                   dev->local_memory_size);
  }
  return DC_OK;
}

// __local arguments are placed after the kernel's own __local variables,
// as size_local_memory() counted them.
void dc__kernel_pack_args(const dc_kernel_t* k, const dc_arg_t* args,
                          void** values, size_t* lengths) {
  size_t local = DC_ALIGN_UP(k->info.static_local_size, 64);
  for (size_t i = 0; i < k->info.arg_count; ++i) {
    const dc_arg_t* a = &args[i];
    lengths[i] = 0;
    if (a->kind == DC_ARG_BUFFER) {
      values[i] = (char*)a->buffer->memory + a->buffer->byte_offset;
      lengths[i] = a->buffer->length * dc_dtype_size(a->buffer->dtype);
    } else if (a->kind == DC_ARG_LOCAL) {
      values[i] = (void*)(uintptr_t)local;
      lengths[i] = a->local_size;
      local += DC_ALIGN_UP(a->local_size, 64);
    } else {  // a value or a record: the device copies its bytes
      values[i] = (void*)dc__arg_data(a);
    }
  }
}

bool dc__kernel_valid(const dc_kernel_t* k) { return is_kernel(k); }

dc_status_t dc__kernel_prepare(const char* fn, dc_kernel_t* k,
                               const dc_dispatch_t* dispatch,
                               const dc_arg_t* args, size_t arg_count,
                               dc__prepared_t* out) {
  DC_REQUIRE_ARG(dispatch, fn);
  if (!is_kernel(k)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'kernel' is NULL or a released kernel", fn);
  }
  if (arg_count != k->info.arg_count || (arg_count > 0 && args == NULL)) {
    char names[256];
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s' expects %zu argument(s) (%s), got %zu",
                   fn, k->info.name, k->info.arg_count,
                   arg_names(k, names, sizeof(names)),
                   args == NULL ? 0 : arg_count);
  }
  for (size_t i = 0; i < arg_count; ++i) {
    DC_RETURN_IF_ERROR(dc__kernel_check_arg(fn, k, i, &args[i]));
  }
  dc_launch_t* launch = &out->launch;
  DC_RETURN_IF_ERROR(check_grid(fn, k, dispatch, launch));
  // Before the group size is chosen: a device's suggestion depends on it.
  DC_RETURN_IF_ERROR(size_local_memory(fn, k, args, launch));
  out->tuning = -1;
  if (launch->local[0] == 0) {
    dc_context_params_t params;
    dc_context_params(k->program->device->context, &params);
    if (params.autotune) {
      out->tuning = dc__autotune_pick(k, launch);
    } else {
      dc__choose_local(k, launch, 0);
    }
  }
  DC_RETURN_IF_ERROR(check_group(fn, k, launch));
  return check_residency(fn, k, launch);
}

// Hands a prepared dispatch to the device: on |queue| when given, else
// waiting for it. A fault injected at launch fails it first.
static dc_status_t launch(dc_kernel_t* k, const dc__prepared_t* prepared,
                          const dc_arg_t* args, dc_device_queue_t* queue) {
  void* values[DC_KERNEL_MAX_ARGS];
  size_t lengths[DC_KERNEL_MAX_ARGS];
  dc__kernel_pack_args(k, args, values, lengths);
  dc_device_t* device = k->program->device;
  DC_RETURN_IF_ERROR(
      dc__fault_check(device->context, DC_FAULT_LAUNCH, device, k->info.name));
  dc_launch_t l = prepared->launch;
  dc_context_t* ctx = device->context;
  l.time_limit_ns = atomic_load(&ctx->kernel_time_limit_ns);
  l.interrupts = (const unsigned*)&ctx->interrupts;
  l.interrupts_at_start = atomic_load(&ctx->interrupts);
  if (queue != NULL) {
    return device->vtable->queues->dispatch(device, queue, k, &l, values,
                                           lengths);
  }
  return device->vtable->kernels->dispatch(device, k, &l, values, lengths);
}

dc_status_t dc__kernel_run(dc_kernel_t* k, const dc__prepared_t* prepared,
                           const dc_arg_t* args) {
  if (prepared->tuning < 0) return launch(k, prepared, args, NULL);
  uint64_t start = dc__now_ns();  // a timed autotune candidate
  dc_status_t st = launch(k, prepared, args, NULL);
  if (st == DC_OK) {
    dc__autotune_record(k, &prepared->launch, prepared->tuning,
                        dc__now_ns() - start);
  }
  return st;
}

dc_status_t dc__kernel_queue(dc_kernel_t* k, const dc__prepared_t* prepared,
                             const dc_arg_t* args, dc_device_queue_t* queue) {
  return launch(k, prepared, args, queue);
}

dc_status_t dc_kernel_dispatch(dc_kernel_t* k, const dc_dispatch_t* dispatch,
                               const dc_arg_t* args, size_t arg_count) {
  static const char* fn = "dc_kernel_dispatch";
  dc__prepared_t prepared;
  DC_RETURN_IF_ERROR(
      dc__kernel_prepare(fn, k, dispatch, args, arg_count, &prepared));
  uint64_t start = dc__now_ns();
  dc_status_t st = dc__kernel_run(k, &prepared, args);
  uint64_t end = dc__now_ns();
  dc_context_t* ctx = k->program->device->context;
  dc__span_t span = {.kind = DC_SPAN_KERNEL, .status = st,
                     .name = k->info.name, .start_ns = start,
                     .end_ns = end, .kernel = k};
  if (st != DC_OK) dc__telemetry_error(ctx, st, dc_last_error());
  dc__telemetry_span(ctx, &span);
  return dc__device_outcome(k->program->device, st);
}

// The bytes of one element of argument |arg| (its pointee), 1 if unknown.
static size_t arg_element_size(const dc_kernel_t* k, uint32_t arg) {
  const dc_kernel_arg_info_t* a = &k->args[arg];
  uint32_t slots = a->vector_width == 3 ? 4 : a->vector_width;
  size_t n = a->dtype ? dc_dtype_size(a->dtype) * slots : 0;
  return n ? n : 1;
}

static dc_status_t pointer_fault(const dc_kernel_t* k, const char* fn,
                                 const dc_kernel_fault_t* f) {
  long long index = (long long)f->index;
  unsigned long long length = f->length, size = f->size;
  if (f->arg >= k->info.arg_count) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: kernel '%s' (%s:%u): an access of %llu byte(s) at "
                   "byte %lld is outside the %llu-byte object its pointer "
                   "points into",
                   fn, k->info.name, k->program->name, f->line, size, index,
                   length);
  }
  size_t n = arg_element_size(k, f->arg);
  if (size == n && index % (long long)n == 0) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: kernel '%s' (%s:%u): index %lld of argument %u '%s' "
                   "is outside its %llu element(s)",
                   fn, k->info.name, k->program->name, f->line,
                   index / (long long)n, f->arg, k->args[f->arg].name,
                   length / n);
  }
  return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                 "%s: kernel '%s' (%s:%u): an access of %llu byte(s) at byte "
                 "%lld of argument %u '%s' is outside its %llu byte(s)",
                 fn, k->info.name, k->program->name, f->line, size, index,
                 f->arg, k->args[f->arg].name, length);
}

dc_status_t dc_kernel_fault_status(const dc_kernel_t* k, const char* fn,
                                   const dc_kernel_fault_t* f) {
  if (fn == NULL) fn = "dc_kernel_dispatch";
  if (!dc__kernel_valid(k)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_kernel_fault_status: 'kernel' is NULL or a released kernel");
  }
  DC_REQUIRE_ARG(f, "dc_kernel_fault_status");
  dc_kernel_fault_t at = *f;
  if (at.line == 0) at.line = k->line;  // stopped outside any poll
  f = &at;
  switch ((dc_kernel_fault_kind_t)f->kind) {
    case DC_KERNEL_FAULT_INDEX:
      return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                     "%s: kernel '%s' (%s:%u): index %lld is outside an "
                     "array of %llu element(s)",
                     fn, k->info.name, k->program->name, f->line,
                     (long long)f->index, (unsigned long long)f->length);
    case DC_KERNEL_FAULT_POINTER:
      return pointer_fault(k, fn, f);
    case DC_KERNEL_FAULT_STOPPED:
      return DC_FAIL(DC_ERR_CANCELLED,
                     "%s: kernel '%s' (%s:%u) was interrupted while it ran",
                     fn, k->info.name, k->program->name, f->line);
    case DC_KERNEL_FAULT_WATCHDOG:
      return DC_FAIL(DC_ERR_DEADLINE_EXCEEDED,
                     "%s: kernel '%s' (%s:%u) ran past the kernel time limit "
                     "and was stopped",
                     fn, k->info.name, k->program->name, f->line);
  }
  return DC_FAIL(DC_ERR_INTERNAL, "%s: kernel '%s': unknown fault %u", fn,
                 k->info.name, f->kind);
}

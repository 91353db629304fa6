// graph_replay.c: running an instantiated graph as one device graph
// (dc/backend.h), when every op is a dispatch on one device that records
// graphs. The graph is recorded on the first replay and again after
// dc_graph_exec_set_arg() changed an argument; graph_exec.c decides when a
// run may replay and reports the outcome.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "graph_internal.h"

void dc__replay_init(dc__replay_t* r, const dc__replay_op_t* ops,
                     size_t count) {
  memset(r, 0, sizeof(*r));
  dc_device_t* device = NULL;
  for (size_t i = 0; i < count; ++i) {
    const dc__replay_op_t* op = &ops[i];
    dc_device_t* d = op->kernel ? op->kernel->program->device : NULL;
    // Every op a dispatch, on one device, with its group size settled.
    if (d == NULL || (device != NULL && d != device) ||
        op->prepared->tuning >= 0) {
      return;
    }
    device = d;
  }
  if (device != NULL && device->vtable->graphs != NULL) {
    r->device = device;
  }
}

bool dc__replay_possible(const dc__replay_t* r) {
  return r->device != NULL && !r->unsupported;
}

void dc__replay_free(dc__replay_t* r) {
  if (r->graph != NULL) r->device->vtable->graphs->destroy(r->device, r->graph);
  r->graph = NULL;
}

// The arguments of every op in the backend's form, and the dependencies
// as dep_first/deps, in one allocation.
typedef struct recording_t {
  dc_kernel_t** kernels;
  dc_launch_t* launches;
  void*** values;
  size_t** lengths;
  uint32_t* dep_first;
  uint32_t* deps;
} recording_t;

static dc_status_t record(dc__replay_t* r, const dc__replay_op_t* ops,
                          size_t count) {
  dc_device_t* device = r->device;
  dc_allocator_t allocator = dc_context_allocator(device->context);
  size_t args = 0, deps = 0;
  for (size_t i = 0; i < count; ++i) {
    args += ops[i].kernel->info.arg_count;
    deps += ops[i].pred_count;
  }
  // One block: the arrays of pointers first, then the 4-byte ones.
  size_t bytes = count * (sizeof(dc_kernel_t*) + sizeof(dc_launch_t) +
                          sizeof(void**) + sizeof(size_t*)) +
                 args * (sizeof(void*) + sizeof(size_t)) +
                 (count + 1 + deps) * sizeof(uint32_t);
  char* block = dc_allocator_malloc(allocator, bytes);
  if (block == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_graph_exec_run: cannot record the graph for %s",
                   device->info.name);
  }
  recording_t rec;
  char* at = block;
  rec.launches = (dc_launch_t*)at, at += count * sizeof(dc_launch_t);
  rec.kernels = (dc_kernel_t**)at, at += count * sizeof(dc_kernel_t*);
  rec.values = (void***)at, at += count * sizeof(void**);
  rec.lengths = (size_t**)at, at += count * sizeof(size_t*);
  void** values = (void**)at;
  at += args * sizeof(void*);
  size_t* lengths = (size_t*)at;
  at += args * sizeof(size_t);
  rec.dep_first = (uint32_t*)at;
  rec.deps = rec.dep_first + count + 1;
  size_t next_arg = 0, next_dep = 0;
  for (size_t i = 0; i < count; ++i) {
    const dc__replay_op_t* op = &ops[i];
    rec.kernels[i] = op->kernel;
    rec.launches[i] = op->prepared->launch;
    rec.values[i] = values + next_arg;
    rec.lengths[i] = lengths + next_arg;
    dc__kernel_pack_args(op->kernel, op->args, rec.values[i], rec.lengths[i]);
    next_arg += op->kernel->info.arg_count;
    rec.dep_first[i] = (uint32_t)next_dep;
    for (size_t d = 0; d < op->pred_count; ++d) {
      rec.deps[next_dep++] = op->preds[d];
    }
  }
  rec.dep_first[count] = (uint32_t)next_dep;
  dc_status_t st = device->vtable->graphs->create(
      device, count, rec.kernels, rec.launches,
      (void* const* const*)rec.values, (const size_t* const*)rec.lengths,
      rec.dep_first, rec.deps, &r->graph);
  dc_allocator_free(allocator, block, bytes);
  if (st == DC_ERR_UNSUPPORTED) r->unsupported = true;
  return st;
}

dc_status_t dc__replay_run(dc__replay_t* r, const dc__replay_op_t* ops,
                           size_t count, bool* out_started) {
  *out_started = false;
  if (r->graph != NULL && r->stale) dc__replay_free(r);
  if (r->graph == NULL) {
    DC_RETURN_IF_ERROR(record(r, ops, count));
    r->stale = false;
  }
  return r->device->vtable->graphs->run(r->device, r->graph, out_started);
}

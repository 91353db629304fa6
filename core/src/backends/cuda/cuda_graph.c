// cuda_graph.c: device graphs (dc/backend.h) as CUDA graphs.
//
// A recording becomes a CUDA graph of kernel nodes with the engine's
// dependencies as edges, instantiated once and launched on a stream of its
// own; each replay is one cuGraphLaunch and one synchronize. Kernels whose
// outcome the host reads back after each dispatch (bounds checking, grid
// sync) cannot be recorded: the engine then runs the graph op by op.
// SPDX-License-Identifier: MIT
#include "cuda_kernel.h"

typedef struct cuda_graph_t {
  CUgraph graph;
  CUgraphExec exec;
  CUstream stream;
} cuda_graph_t;

static void destroy(dc__cuda_device_t* cuda, cuda_graph_t* g) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  if (g->exec != NULL) cu->graph_exec_destroy(g->exec);
  if (g->graph != NULL) cu->graph_destroy(g->graph);
  if (g->stream != NULL) cu->stream_destroy(g->stream);
  dc_allocator_free(cuda->allocator, g, sizeof(*g));
}

static dc_status_t check_recordable(const dc__cuda_device_t* cuda,
                                    dc_kernel_t* const* kernels,
                                    size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const dc__cuda_kernel_t* ck = dc_kernel_backend_data(kernels[i]);
    if (ck->checked || ck->uses_grid_sync) {
      return DC_FAIL(DC_ERR_UNSUPPORTED,
                     "%s: kernel '%s' has its outcome read back after each "
                     "dispatch (%s), which a CUDA graph cannot do",
                     cuda->base.info.name, ck->name,
                     ck->checked ? "bounds checking" : "grid sync");
    }
  }
  return DC_OK;
}

// Adds dispatch |i| as a kernel node after the nodes |deps| names.
static dc_status_t add_node(dc__cuda_device_t* cuda, cuda_graph_t* g,
                            CUgraphNode* nodes, CUgraphNode* scratch,
                            dc_kernel_t* kernel, const dc_launch_t* l,
                            void* const* args, const size_t* lengths,
                            const uint32_t* deps, size_t dep_count,
                            size_t i) {
  dc__cuda_kernel_t* ck = dc_kernel_backend_data(kernel);
  dc__cuda_params_t p;
  size_t dynamic = 0;
  DC_RETURN_IF_ERROR(
      dc__cuda_prepare_launch(cuda, ck, l, args, lengths, &p, &dynamic));
  for (size_t d = 0; d < dep_count; ++d) scratch[d] = nodes[deps[d]];
  CUDA_KERNEL_NODE_PARAMS node = {
      .func = p.function,
      .grid_x = p.grid[0],
      .grid_y = p.grid[1],
      .grid_z = p.grid[2],
      .block_x = (unsigned)l->local[0],
      .block_y = (unsigned)l->local[1],
      .block_z = (unsigned)l->local[2],
      .shared_bytes = (unsigned)dynamic,
      .params = p.params,  // the driver copies the values
  };
  CUresult r = cuda->api->cu->graph_add_kernel_node(&nodes[i], g->graph,
                                                    scratch, dep_count, &node);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuGraphAddKernelNode of kernel '%s'",
                           ck->name);
  }
  return DC_OK;
}

static dc_status_t build(dc__cuda_device_t* cuda, cuda_graph_t* g,
                         size_t count, dc_kernel_t* const* kernels,
                         const dc_launch_t* launches, void* const* const* args,
                         const size_t* const* lengths,
                         const uint32_t* dep_first, const uint32_t* deps) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  size_t bytes = (count + dep_first[count]) * sizeof(CUgraphNode);
  CUgraphNode* nodes = dc_allocator_malloc(cuda->allocator, bytes);
  if (nodes == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot record a graph of %zu "
                   "dispatches", cuda->base.info.name, count);
  }
  CUgraphNode* scratch = nodes + count;
  CUresult r = cu->graph_create(&g->graph, 0);
  dc_status_t st = r == CUDA_SUCCESS
                       ? DC_OK
                       : dc__cuda_failed(cuda, r, "cuGraphCreate");
  for (size_t i = 0; st == DC_OK && i < count; ++i) {
    st = add_node(cuda, g, nodes, scratch, kernels[i], &launches[i], args[i],
                  lengths[i], deps + dep_first[i],
                  dep_first[i + 1] - dep_first[i], i);
  }
  if (st == DC_OK && (r = cu->graph_instantiate(&g->exec, g->graph, 0)) !=
                         CUDA_SUCCESS) {
    st = dc__cuda_failed(cuda, r, "cuGraphInstantiate of %zu kernel nodes",
                         count);
  }
  if (st == DC_OK &&
      (r = cu->stream_create(&g->stream, CU_STREAM_NON_BLOCKING)) !=
          CUDA_SUCCESS) {
    st = dc__cuda_failed(cuda, r, "cuStreamCreate");
  }
  dc_allocator_free(cuda->allocator, nodes, bytes);
  return st;
}

dc_status_t dc__cuda_graph_create(
    dc_device_t* device, size_t count, dc_kernel_t* const* kernels,
    const dc_launch_t* launches, void* const* const* args,
    const size_t* const* lengths, const uint32_t* dep_first,
    const uint32_t* deps, dc_device_graph_t** out_graph) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  *out_graph = NULL;
  DC_RETURN_IF_ERROR(check_recordable(cuda, kernels, count));
  cuda_graph_t* g = dc_allocator_calloc(cuda->allocator, 1, sizeof(*g));
  if (g == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot record a graph",
                   device->info.name);
  }
  // Locked: preparing a launch may opt a kernel in to more shared memory.
  pthread_mutex_lock(&cuda->lock);
  dc_status_t st = dc__cuda_enter(cuda);
  if (st == DC_OK) {
    st = build(cuda, g, count, kernels, launches, args, lengths, dep_first,
               deps);
  }
  if (st != DC_OK) {
    dc__saved_error_t saved;
    dc__error_save(&saved);
    destroy(cuda, g);
    dc__error_restore(&saved);
  } else {
    *out_graph = (dc_device_graph_t*)g;
  }
  return dc__cuda_leave(cuda, st);
}

dc_status_t dc__cuda_graph_run(dc_device_t* device, dc_device_graph_t* graph,
                               bool* out_started) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  cuda_graph_t* g = (cuda_graph_t*)graph;
  *out_started = false;
  dc_status_t st = dc__cuda_enter(cuda);
  if (st == DC_OK) {
    CUresult r = cuda->api->cu->graph_launch(g->exec, g->stream);
    if (r != CUDA_SUCCESS) {
      st = dc__cuda_failed(cuda, r, "cuGraphLaunch");
    } else {
      *out_started = true;
      st = dc__cuda_wait(cuda, g->stream, "a graph replay");
    }
  }
  return dc__cuda_settle(cuda, st);
}

void dc__cuda_graph_destroy(dc_device_t* device, dc_device_graph_t* graph) {
  dc__cuda_device_t* cuda = (dc__cuda_device_t*)device;
  // A lost context cannot be made current; its graphs went with it, and
  // only the host memory is left to free.
  if (dc__cuda_enter(cuda) == DC_OK) {
    destroy(cuda, (cuda_graph_t*)graph);
  } else {
    dc_allocator_free(cuda->allocator, graph, sizeof(cuda_graph_t));
  }
}

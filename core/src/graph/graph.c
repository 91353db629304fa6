// graph.c: building graphs: ops, names, explicit dependencies and the
// buffer accesses that imply the others.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "buffer_internal.h"
#include "graph_internal.h"

static bool is_graph(const dc_graph_t* g) {
  return dc__resource_live(DC__RES(g), &dc__graph_type);
}

static dc_status_t check_graph(const char* fn, const char* param,
                               const dc_graph_t* g) {
  return dc__resource_check(fn, param, DC__RES(g), &dc__graph_type);
}

size_t dc__graph_object_size(void) { return sizeof(struct dc_graph_t); }


const char* dc__op_kind_name(dc__op_kind_t kind) {
  switch (kind) {
    case DC_OP_DISPATCH: return "dispatch";
    case DC_OP_INDIRECT: return "indirect dispatch";
    case DC_OP_COPY: return "copy";
    case DC_OP_FILL: return "fill";
    case DC_OP_HOST: return "host";
    case DC_OP_GRAPH: return "graph";
    case DC_OP_SUBFLOW: return "subflow";
  }
  return "op";
}

//===-- Lifetime --------------------------------------------------------===//

static void describe_graph(const dc__live_node_t* node, char* buf,
                           size_t size) {
  const dc_graph_t* g =
      (const dc_graph_t*)((const char*)node - offsetof(dc_graph_t, live));
  snprintf(buf, size, "graph '%s' with %zu op(s)", g->name, g->count);
}

dc_status_t dc_graph_create(dc_context_t* ctx, const dc_graph_params_t* params,
                            dc_graph_t** out_graph) {
  static const char* fn = "dc_graph_create";
  DC_REQUIRE_ARG(out_graph, fn);
  *out_graph = NULL;
  DC_REQUIRE_ARG(ctx, fn);
  dc_graph_params_t p = params ? *params : (dc_graph_params_t){0};
  if ((unsigned)p.error_mode > DC_ERRORS_COLLECT_ALL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: unknown error mode %d", fn,
                   (int)p.error_mode);
  }
  if (p.retry != NULL && dc_retry_policy_check(p.retry) != DC_OK) {
    dc__saved_error_t why;
    dc__error_save(&why);
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: retry: %s", fn, why.message);
  }
  if (p.fallback != NULL && dc_device_context(p.fallback) != ctx) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: the fallback device belongs to another context", fn);
  }
  dc_graph_t* g = dc__object_cache_alloc(&ctx->graph_cache);
  if (g == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate a graph", fn);
  }
  g->ctx = ctx;
  g->error_mode = p.error_mode;
  g->fallback = p.fallback;
  g->no_fallback = p.no_fallback;
  g->no_breakers = p.no_breakers;
  g->breaker = p.breaker;
  if (g->breaker != NULL) dc_breaker_retain(g->breaker);
  if (p.retry != NULL) {
    g->retry = *p.retry;
    g->has_retry = true;
  }
  dc__strlcpy(g->name, p.name && p.name[0] ? p.name : "graph",
              sizeof(g->name));
  g->live.kind = DC_LIVE_GRAPH;
  g->live.describe = describe_graph;
  dc__resource_init(&g->header, &dc__graph_type);
  dc__context_track(ctx, &g->live);
  *out_graph = g;
  return DC_OK;
}

static void free_op(dc_allocator_t a, dc__op_t* op) {
  dc__args_drop(a, op->args, op->arg_count);
  if (op->args)
    dc_allocator_free(a, op->args, op->arg_count * sizeof(dc_arg_t));
  dc_kernel_release(op->kernel);
  dc_buffer_release(op->grid_buffer);
  dc_buffer_release(op->dst);
  dc_buffer_release(op->src);
  dc_graph_release(op->child);
  dc_breaker_release(op->breaker);
  for (size_t i = 0; i < op->after_count; ++i) {
    dc_allocator_free(a, op->after[i], strlen(op->after[i]) + 1);
  }
  if (op->after) {
    dc_allocator_free(a, op->after, op->after_capacity * sizeof(char*));
  }
  for (size_t i = 0; i < op->access_count; ++i) {
    dc_buffer_release(op->access[i].buffer);
  }
  if (op->access) {
    dc_allocator_free(a, op->access, op->access_count * sizeof(dc__access_t));
  }
  dc_allocator_free(a, op->name, strlen(op->name) + 1);
}

static void destroy_graph(dc__resource_t* r) {
  dc_graph_t* g = (dc_graph_t*)r;
  dc_allocator_t a = g->ctx->allocator;
  dc_context_t* ctx = g->ctx;
  for (size_t i = 0; i < g->count; ++i) {
    free_op(a, g->ops[i]);
    dc_allocator_free(a, g->ops[i], sizeof(dc__op_t));
  }
  if (g->ops) dc_allocator_free(a, g->ops, g->capacity * sizeof(dc__op_t*));
  if (g->names) {
    dc_allocator_free(a, g->names, g->names_capacity * sizeof(uint32_t));
  }
  dc_breaker_release(g->breaker);
  dc__context_untrack(ctx, &g->live);
  dc__object_cache_free(&ctx->graph_cache, g);
  dc__context_unref(ctx);  // last: it may destroy the context
}

const dc__resource_type_t dc__graph_type = {
    .name = "graph",
    .destroy = destroy_graph,
};
DC__RESOURCE_FIRST(dc_graph_t, header);

void dc_graph_retain(dc_graph_t* g) {
  dc__resource_retain(DC__RES(g), &dc__graph_type);
}

void dc_graph_release(dc_graph_t* g) {
  dc__resource_release(DC__RES(g), &dc__graph_type);
}

size_t dc_graph_op_count(const dc_graph_t* g) {
  return is_graph(g) ? g->count : 0;
}

//===-- Names -----------------------------------------------------------===//

static uint32_t hash_name(const char* s) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

long dc__graph_find_op(const dc_graph_t* g, const char* name) {
  if (g->names_capacity == 0) return -1;
  size_t mask = g->names_capacity - 1;
  for (size_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
    uint32_t slot = g->names[i];
    if (slot == 0) return -1;
    if (strcmp(g->ops[slot - 1]->name, name) == 0) return (long)slot - 1;
  }
}

static bool grow_names(dc_graph_t* g) {
  size_t capacity = g->names_capacity ? g->names_capacity * 2 : 64;
  uint32_t* names =
      dc_allocator_calloc(g->ctx->allocator, capacity, sizeof(uint32_t));
  if (names == NULL) return false;
  for (size_t k = 0; k < g->count; ++k) {
    size_t i = hash_name(g->ops[k]->name) & (capacity - 1);
    while (names[i] != 0) i = (i + 1) & (capacity - 1);
    names[i] = (uint32_t)k + 1;
  }
  if (g->names) {
    dc_allocator_free(g->ctx->allocator, g->names,
                      g->names_capacity * sizeof(uint32_t));
  }
  g->names = names;
  g->names_capacity = capacity;
  return true;
}

static char* copy_string(dc_allocator_t a, const char* s) {
  size_t n = strlen(s) + 1;
  char* copy = dc_allocator_malloc(a, n);
  if (copy) memcpy(copy, s, n);
  return copy;
}

//===-- Adding ops ------------------------------------------------------===//

static dc_status_t oom(const char* fn, const char* name) {
  return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: op '%s': out of memory", fn,
                 name);
}

// Checks the graph and the name of a new op.
static dc_status_t check_new(const char* fn, const dc_graph_t* g,
                             const char* name) {
  DC_RETURN_IF_ERROR(check_graph(fn, "graph", g));
  if (name == NULL || name[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: the op needs a name", fn);
  }
  if (dc__graph_find_op(g, name) >= 0) {
    return DC_FAIL(DC_ERR_ALREADY_EXISTS,
                   "%s: graph '%s' already has an op named '%s'", fn,
                   g->name, name);
  }
  return DC_OK;
}

static dc_status_t add_access(dc_allocator_t a, dc__op_t* op,
                              dc_buffer_t* b, dc_access_t mode) {
  dc__access_t* grown = dc_allocator_malloc(
      a, (op->access_count + 1) * sizeof(dc__access_t));
  if (grown == NULL) return DC_ERR_OUT_OF_MEMORY;
  if (op->access_count) {
    memcpy(grown, op->access, op->access_count * sizeof(dc__access_t));
    dc_allocator_free(a, op->access, op->access_count * sizeof(dc__access_t));
  }
  const dc_buffer_t* root = b->root ? b->root : b;
  size_t esize = dc_dtype_size(b->dtype);
  dc_buffer_retain(b);
  grown[op->access_count++] = (dc__access_t){
      .buffer = b,
      .root = root,
      .begin = b->byte_offset,
      .end = b->byte_offset + b->length * esize,
      .mode = mode,
  };
  op->access = grown;
  return DC_OK;
}

static dc_status_t add_after(dc_allocator_t a, dc__op_t* op,
                             const char* name) {
  if (op->after_count == op->after_capacity) {
    size_t capacity = op->after_capacity ? op->after_capacity * 2 : 4;
    char** grown = dc_allocator_malloc(a, capacity * sizeof(char*));
    if (grown == NULL) return DC_ERR_OUT_OF_MEMORY;
    if (op->after_count) {
      memcpy(grown, op->after, op->after_count * sizeof(char*));
      dc_allocator_free(a, op->after, op->after_capacity * sizeof(char*));
    }
    op->after = grown;
    op->after_capacity = capacity;
  }
  char* copy = copy_string(a, name);
  if (copy == NULL) return DC_ERR_OUT_OF_MEMORY;
  op->after[op->after_count++] = copy;
  return DC_OK;
}

// Checks |options| of the op |name|.
static dc_status_t check_options(const char* fn, const char* name,
                                 const dc_op_options_t* o) {
  if (o == NULL) return DC_OK;
  if (o->after_count > 0 && o->after == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': after_count is %zu but after is NULL", fn,
                   name, o->after_count);
  }
  for (size_t i = 0; i < o->after_count; ++i) {
    if (o->after[i] == NULL || o->after[i][0] == '\0') {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: op '%s': after[%zu] is empty", fn, name, i);
    }
  }
  if (o->access_count > 0 && o->access == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': access_count is %zu but access is NULL", fn,
                   name, o->access_count);
  }
  if (o->retry != NULL && dc_retry_policy_check(o->retry) != DC_OK) {
    dc__saved_error_t why;
    dc__error_save(&why);
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: op '%s': retry: %s", fn,
                   name, why.message);
  }
  for (size_t i = 0; i < o->access_count; ++i) {
    char param[48];
    snprintf(param, sizeof(param), "access[%zu].buffer", i);
    DC_RETURN_IF_ERROR(dc__buffer_check(o->access[i].buffer, fn, param));
    dc_access_t m = o->access[i].access;
    if (m != DC_ACCESS_READ && m != DC_ACCESS_WRITE &&
        m != DC_ACCESS_READ_WRITE) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: op '%s': access[%zu] has unknown mode %d", fn, name,
                     i, (int)m);
    }
  }
  return DC_OK;
}

// Appends |op| (whose name, accesses and references it takes over) with
// |options| to |g|. On failure the op is freed.
static dc_status_t commit_op(const char* fn, dc_graph_t* g, dc__op_t* op,
                             const dc_op_options_t* o) {
  dc_allocator_t a = g->ctx->allocator;
  dc_status_t st = DC_OK;
  for (size_t i = 0; o && i < o->after_count && st == DC_OK; ++i) {
    st = add_after(a, op, o->after[i]);
  }
  for (size_t i = 0; o && i < o->access_count && st == DC_OK; ++i) {
    st = add_access(a, op, o->access[i].buffer, o->access[i].access);
  }
  if (o != NULL) {
    op->fallback = o->fallback;
    op->no_snapshot = o->no_snapshot;
    op->breaker = o->breaker;
    if (op->breaker != NULL) dc_breaker_retain(op->breaker);
    if (o->retry != NULL) {
      op->retry = *o->retry;
      op->has_retry = true;
    }
  }
  if (st == DC_OK && g->count == g->capacity) {
    size_t capacity = g->capacity ? g->capacity * 2 : 16;
    dc__op_t** grown = dc_allocator_malloc(a, capacity * sizeof(dc__op_t*));
    if (grown == NULL) {
      st = DC_ERR_OUT_OF_MEMORY;
    } else {
      if (g->count) memcpy(grown, g->ops, g->count * sizeof(dc__op_t*));
      if (g->ops) {
        dc_allocator_free(a, g->ops, g->capacity * sizeof(dc__op_t*));
      }
      g->ops = grown;
      g->capacity = capacity;
    }
  }
  if (st == DC_OK && (g->count + 1) * 2 > g->names_capacity &&
      !grow_names(g)) {
    st = DC_ERR_OUT_OF_MEMORY;
  }
  // Ops live apart from the array: instances keep pointers to them while
  // the graph grows.
  dc__op_t* stored = NULL;
  if (st == DC_OK) {
    stored = dc_allocator_malloc(a, sizeof(dc__op_t));
    if (stored == NULL) st = DC_ERR_OUT_OF_MEMORY;
  }
  if (st != DC_OK) {
    dc_status_t fail = oom(fn, op->name);
    free_op(a, op);
    return fail;
  }
  *stored = *op;
  g->ops[g->count++] = stored;
  size_t mask = g->names_capacity - 1;
  size_t i = hash_name(op->name) & mask;
  while (g->names[i] != 0) i = (i + 1) & mask;
  g->names[i] = (uint32_t)g->count;
  return DC_OK;
}

// Starts an op of |kind| called |name| after the common checks.
static dc_status_t begin_op(const char* fn, dc_graph_t* g, const char* name,
                            dc__op_kind_t kind, const dc_op_options_t* o,
                            dc__op_t* op) {
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  DC_RETURN_IF_ERROR(check_options(fn, name, o));
  memset(op, 0, sizeof(*op));
  op->kind = kind;
  op->name = copy_string(g->ctx->allocator, name);
  return op->name ? DC_OK : oom(fn, name);
}

// Copies the arguments of a dispatch op, retaining buffers, and records
// each buffer argument as a read (const) or read-write access.
static dc_status_t take_args(dc_graph_t* g, dc__op_t* op,
                             const dc_arg_t* args, size_t count) {
  dc_allocator_t a = g->ctx->allocator;
  op->arg_count = count;
  if (count == 0) return DC_OK;
  op->args = dc_allocator_malloc(a, count * sizeof(dc_arg_t));
  if (op->args == NULL) {
    op->arg_count = 0;
    return DC_ERR_OUT_OF_MEMORY;
  }
  // All first: free_op drops all.
  if (dc__args_hold(a, op->args, args, count) != DC_OK) {
    dc_allocator_free(a, op->args, count * sizeof(dc_arg_t));
    op->args = NULL;
    op->arg_count = 0;
    return DC_ERR_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < count; ++i) {
    if (args[i].kind != DC_ARG_BUFFER) continue;
    const dc_kernel_arg_info_t* info = dc_kernel_arg_info(op->kernel, i);
    dc_access_t mode = info->is_const        ? DC_ACCESS_READ
                       : info->is_write_only ? DC_ACCESS_WRITE
                                             : DC_ACCESS_READ_WRITE;
    if (add_access(a, op, args[i].buffer, mode) != DC_OK) {
      return DC_ERR_OUT_OF_MEMORY;
    }
  }
  return DC_OK;
}

dc_status_t dc_graph_dispatch(dc_graph_t* g, const char* name,
                              dc_kernel_t* kernel,
                              const dc_dispatch_t* dispatch,
                              const dc_arg_t* args, size_t arg_count,
                              const dc_op_options_t* options) {
  static const char* fn = "dc_graph_dispatch";
  dc__op_t op;
  dc__prepared_t prepared;
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  DC_RETURN_IF_ERROR(
      dc__kernel_prepare(fn, kernel, dispatch, args, arg_count, &prepared));
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_DISPATCH, options, &op));
  dc_kernel_retain(kernel);
  op.kernel = kernel;
  op.prepared = prepared;
  op.dispatch = *dispatch;
  if (take_args(g, &op, args, arg_count) != DC_OK) {
    free_op(g->ctx->allocator, &op);
    return oom(fn, name);
  }
  return commit_op(fn, g, &op, options);
}

dc_status_t dc_graph_dispatch_indirect(
    dc_graph_t* g, const char* name, dc_kernel_t* kernel, uint32_t dims,
    dc_buffer_t* grid_buffer, size_t grid_offset, const size_t* local,
    const dc_arg_t* args, size_t arg_count, const dc_op_options_t* options) {
  static const char* fn = "dc_graph_dispatch_indirect";
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  if (!dc__kernel_valid(kernel)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': 'kernel' is NULL or a released kernel", fn, name);
  }
  if (dims < 1 || dims > 3) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': dims is %u (must be 1, 2 or 3)", fn, name,
                   dims);
  }
  DC_RETURN_IF_ERROR(dc__buffer_check(grid_buffer, fn, "grid_buffer"));
  dc_dtype_t t = grid_buffer->dtype;
  if (t != DC_DTYPE_U32 && t != DC_DTYPE_U64) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': the grid buffer holds %s; it must hold u32 "
                   "or u64 sizes", fn, name, dc_dtype_name(t));
  }
  DC_RETURN_IF_ERROR(dc__buffer_check_range(grid_buffer, grid_offset, dims,
                                            fn, "grid_buffer"));
  if (arg_count != kernel->info.arg_count || (arg_count && args == NULL)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': kernel '%s' expects %zu argument(s), got "
                   "%zu", fn, name, kernel->info.name, kernel->info.arg_count,
                   args ? arg_count : 0);
  }
  for (size_t i = 0; i < arg_count; ++i) {
    DC_RETURN_IF_ERROR(dc__kernel_check_arg(fn, kernel, i, &args[i]));
  }
  dc__op_t op;
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_INDIRECT, options, &op));
  dc_kernel_retain(kernel);
  op.kernel = kernel;
  op.dims = dims;
  dc_buffer_retain(grid_buffer);
  op.grid_buffer = grid_buffer;
  op.grid_offset = grid_offset;
  for (uint32_t d = 0; local && d < dims; ++d) op.local[d] = local[d];
  if (take_args(g, &op, args, arg_count) != DC_OK ||
      add_access(g->ctx->allocator, &op, grid_buffer, DC_ACCESS_READ) !=
          DC_OK) {
    free_op(g->ctx->allocator, &op);
    return oom(fn, name);
  }
  return commit_op(fn, g, &op, options);
}

dc_status_t dc_graph_copy(dc_graph_t* g, const char* name, dc_buffer_t* dst,
                          size_t dst_offset, dc_buffer_t* src,
                          size_t src_offset, size_t count,
                          const dc_op_options_t* options) {
  static const char* fn = "dc_graph_copy";
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  DC_RETURN_IF_ERROR(dc__buffer_check(dst, fn, "dst"));
  DC_RETURN_IF_ERROR(dc__buffer_check(src, fn, "src"));
  DC_RETURN_IF_ERROR(dc__buffer_check_range(dst, dst_offset, count, fn, "dst"));
  DC_RETURN_IF_ERROR(dc__buffer_check_range(src, src_offset, count, fn, "src"));
  if (dst->dtype != src->dtype) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': dtypes differ (dst is %s, src is %s)", fn,
                   name, dc_dtype_name(dst->dtype), dc_dtype_name(src->dtype));
  }
  dc__op_t op;
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_COPY, options, &op));
  dc_buffer_retain(dst);
  dc_buffer_retain(src);
  op.dst = dst;
  op.src = src;
  op.dst_offset = dst_offset;
  op.src_offset = src_offset;
  op.count = count;
  dc_allocator_t a = g->ctx->allocator;
  if (add_access(a, &op, src, DC_ACCESS_READ) != DC_OK ||
      add_access(a, &op, dst, DC_ACCESS_WRITE) != DC_OK) {
    free_op(a, &op);
    return oom(fn, name);
  }
  return commit_op(fn, g, &op, options);
}

dc_status_t dc_graph_fill(dc_graph_t* g, const char* name, dc_buffer_t* buffer,
                          size_t offset, size_t count, const void* value,
                          const dc_op_options_t* options) {
  static const char* fn = "dc_graph_fill";
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  DC_REQUIRE_ARG(value, fn);
  DC_RETURN_IF_ERROR(dc__buffer_check(buffer, fn, "buffer"));
  DC_RETURN_IF_ERROR(
      dc__buffer_check_range(buffer, offset, count, fn, "buffer"));
  dc__op_t op;
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_FILL, options, &op));
  dc_buffer_retain(buffer);
  op.dst = buffer;
  op.dst_offset = offset;
  op.count = count;
  memcpy(op.value, value, dc_dtype_size(buffer->dtype));
  if (add_access(g->ctx->allocator, &op, buffer, DC_ACCESS_WRITE) != DC_OK) {
    free_op(g->ctx->allocator, &op);
    return oom(fn, name);
  }
  return commit_op(fn, g, &op, options);
}

dc_status_t dc_graph_host(dc_graph_t* g, const char* name, dc_host_fn_t host,
                          void* user_data, const dc_op_options_t* options) {
  static const char* fn = "dc_graph_host";
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  if (host == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': 'fn' must not be NULL", fn, name);
  }
  dc__op_t op;
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_HOST, options, &op));
  op.host_fn = host;
  op.user_data = user_data;
  return commit_op(fn, g, &op, options);
}

dc_status_t dc_graph_subflow(dc_graph_t* g, const char* name,
                             dc_subflow_fn_t subflow, void* user_data,
                             const dc_op_options_t* options) {
  static const char* fn = "dc_graph_subflow";
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  if (subflow == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': 'fn' must not be NULL", fn, name);
  }
  dc__op_t op;
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_SUBFLOW, options, &op));
  op.subflow_fn = subflow;
  op.user_data = user_data;
  return commit_op(fn, g, &op, options);
}

// Whether |g| is |target| or holds it, at any depth.
static bool contains(const dc_graph_t* g, const dc_graph_t* target) {
  if (g == target) return true;
  for (size_t i = 0; i < g->count; ++i) {
    if (g->ops[i]->child && contains(g->ops[i]->child, target)) return true;
  }
  return false;
}

dc_status_t dc_graph_add_graph(dc_graph_t* g, const char* name,
                               dc_graph_t* child,
                               const dc_op_options_t* options) {
  static const char* fn = "dc_graph_add_graph";
  DC_RETURN_IF_ERROR(check_new(fn, g, name));
  if (!is_graph(child)) {
    char where[160];
    snprintf(where, sizeof(where), "%s: op '%s'", fn, name);
    return check_graph(where, "child", child);
  }
  if (child->ctx != g->ctx || contains(child, g)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: op '%s': graph '%s' %s", fn, name, child->name,
                   child->ctx != g->ctx ? "belongs to another context"
                                        : "contains this graph (a cycle)");
  }
  dc__op_t op;
  DC_RETURN_IF_ERROR(begin_op(fn, g, name, DC_OP_GRAPH, options, &op));
  dc_graph_retain(child);
  op.child = child;
  return commit_op(fn, g, &op, options);
}

dc_status_t dc_graph_after(dc_graph_t* g, const char* op_name,
                           const char* after) {
  static const char* fn = "dc_graph_after";
  DC_RETURN_IF_ERROR(check_graph(fn, "graph", g));
  DC_REQUIRE_ARG(op_name, fn);
  DC_REQUIRE_ARG(after, fn);
  long i = dc__graph_find_op(g, op_name);
  if (i < 0) {
    return DC_FAIL(DC_ERR_NOT_FOUND, "%s: graph '%s' has no op '%s'", fn,
                   g->name, op_name);
  }
  if (after[0] == '\0') {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: op '%s': 'after' is empty",
                   fn, op_name);
  }
  if (add_after(g->ctx->allocator, g->ops[i], after) != DC_OK) {
    return oom(fn, op_name);
  }
  return DC_OK;
}

//===-- Validation and DOT ----------------------------------------------===//

dc_status_t dc_graph_validate(dc_graph_t* g, char* warnings,
                              size_t warnings_size) {
  static const char* fn = "dc_graph_validate";
  DC_RETURN_IF_ERROR(check_graph(fn, "graph", g));
  if (warnings && warnings_size) warnings[0] = '\0';
  dc__flat_t flat;
  DC_RETURN_IF_ERROR(dc__graph_flatten(fn, g, &flat));
  dc__graph_warn_uninitialised(g, &flat, warnings, warnings_size);
  dc__flat_free(&flat);
  return DC_OK;
}

dc_status_t dc_graph_to_dot(dc_graph_t* g, char* buffer, size_t size,
                            size_t* out_length) {
  static const char* fn = "dc_graph_to_dot";
  DC_REQUIRE_ARG(out_length, fn);
  DC_RETURN_IF_ERROR(check_graph(fn, "graph", g));
  dc__flat_t flat;
  DC_RETURN_IF_ERROR(dc__graph_flatten(fn, g, &flat));
  dc_status_t st = dc__flat_to_dot(g->name, &flat, NULL, NULL, buffer, size,
                                   out_length);
  dc__flat_free(&flat);
  return st;
}

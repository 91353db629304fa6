// encoder.c: the command encoder: a kernel, its arguments bound one at a
// time and checked as they are bound, a grid, and dispatches to a stream
// with a short history of what was submitted or refused.
//
// The encoder does the dispatch check once per geometry, not per dispatch:
// each argument is checked when it is bound (dc__kernel_check_arg), and the
// rest of dc__kernel_prepare (grid, group, __local memory) depends only on
// the kernel, the grid, the group and the __local sizes, so its success is
// remembered in |checked| until one of those changes. A dispatch whose
// geometry passed before then costs two clock reads and a record on top of
// dc_stream_dispatch().
// SPDX-License-Identifier: MIT
#include "dc/encoder.h"

#include <stdio.h>
#include <string.h>

#include "context_internal.h"
#include "program_internal.h"

struct dc_encoder_t {
  dc__resource_t header;     // first (resource.h)
  dc_context_t* ctx;         // of the first stream; the encoder keeps it
                             // alive, since its cache holds the encoder
  dc_allocator_t allocator;  // the context's: made |args|
  dc_stream_t* stream;       // retained
  uint32_t stream_id;
  dc_kernel_t* kernel;       // retained; NULL until one is selected
  // One slot per kernel argument; kind 0 marks an unbound slot. Bound
  // buffers are retained. |capacity| slots are allocated, kept across
  // dc_encoder_set_kernel() calls that need no more.
  dc_arg_t* args;
  size_t arg_count;
  size_t capacity;
  size_t unbound;            // slots of |args| not bound yet
  dc_dispatch_t dispatch;    // dims 0: no grid yet
  // The dispatch check passed for the current kernel, grid, group and
  // __local sizes (other arguments were checked when bound).
  bool checked;
  uint64_t sequence;         // records written so far
  dc_encoder_record_t history[DC_ENCODER_HISTORY];
  dc_encoder_stats_t stats;
};

//===-- Helpers ---------------------------------------------------------===//

#define REQUIRE_ENCODER(encoder, fn)                                      \
  DC_RETURN_IF_ERROR(dc__resource_check((fn), "encoder", DC__RES(encoder), \
                                        &dc__encoder_type))

static dc_device_t* kernel_device(const dc_kernel_t* kernel) {
  return kernel->program->device;
}

static dc_status_t no_kernel(const char* fn) {
  return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                 "%s: no kernel selected (call dc_encoder_set_kernel first)",
                 fn);
}

static dc_status_t no_grid(const char* fn, const dc_kernel_t* kernel) {
  return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                 "%s: kernel '%s': no grid (call dc_encoder_set_grid first)",
                 fn, kernel->info.name);
}

static dc_status_t wrong_device(const char* fn, const dc_kernel_t* kernel,
                                const dc_device_t* stream_device) {
  return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                 "%s: kernel '%s' lives on %s, the stream on %s", fn,
                 kernel->info.name, kernel_device(kernel)->info.name,
                 stream_device->info.name);
}

// Writes the names of |kernel|'s arguments, those not bound in |args| only
// when |args| is given, separated by ", ", into |buf|.
static const char* list_args(const dc_kernel_t* kernel, const dc_arg_t* args,
                             char* buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < kernel->info.arg_count && used < size; ++i) {
    if (args != NULL && args[i].kind != 0) continue;
    int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                     kernel->args[i].name);
    if (n > 0) used += (size_t)n;
  }
  return buf;
}

// Drops the bindings: releases the bound buffers and marks every slot
// unbound.
static void clear_bindings(dc_encoder_t* e) {
  dc__args_drop(e->allocator, e->args, e->arg_count);
  if (e->args != NULL) memset(e->args, 0, e->capacity * sizeof(*e->args));
  e->unbound = e->arg_count;
}

//===-- Lifetime --------------------------------------------------------===//

dc_status_t dc_encoder_create(dc_stream_t* stream, dc_encoder_t** out_encoder) {
  static const char* fn = "dc_encoder_create";
  DC_REQUIRE_ARG(out_encoder, fn);
  *out_encoder = NULL;
  DC_REQUIRE_ARG(stream, fn);
  dc_device_t* device = dc_stream_device(stream);
  if (device == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'stream' has no device "
                   "(is it released?)", fn);
  }
  dc_context_t* ctx = device->context;
  dc_encoder_t* e = dc__object_cache_alloc(&ctx->encoder_cache);
  if (e == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate the encoder",
                   fn);
  }
  e->ctx = ctx;
  dc__context_ref(ctx);
  e->allocator = ctx->allocator;
  dc_stream_retain(stream);
  e->stream = stream;
  e->stream_id = dc_stream_id(stream);
  dc__resource_init(&e->header, &dc__encoder_type);
  *out_encoder = e;
  return DC_OK;
}

static void destroy_encoder(dc__resource_t* r) {
  dc_encoder_t* e = (dc_encoder_t*)r;
  dc_context_t* ctx = e->ctx;
  clear_bindings(e);
  dc_kernel_release(e->kernel);
  dc_allocator_free(e->allocator, e->args, e->capacity * sizeof(*e->args));
  dc_stream_release(e->stream);
  dc__object_cache_free(&ctx->encoder_cache, e);
  dc__context_unref(ctx);  // last: it may destroy the context
}

const dc__resource_type_t dc__encoder_type = {
    .name = "encoder",
    .destroy = destroy_encoder,
};
DC__RESOURCE_FIRST(dc_encoder_t, header);

size_t dc__encoder_object_size(void) { return sizeof(dc_encoder_t); }

void dc_encoder_retain(dc_encoder_t* encoder) {
  dc__resource_retain(DC__RES(encoder), &dc__encoder_type);
}

void dc_encoder_release(dc_encoder_t* encoder) {
  dc__resource_release(DC__RES(encoder), &dc__encoder_type);
}

dc_status_t dc_encoder_set_stream(dc_encoder_t* encoder, dc_stream_t* stream) {
  static const char* fn = "dc_encoder_set_stream";
  REQUIRE_ENCODER(encoder, fn);
  DC_REQUIRE_ARG(stream, fn);
  dc_device_t* device = dc_stream_device(stream);
  if (device == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: 'stream' has no device "
                   "(is it released?)", fn);
  }
  if (encoder->kernel != NULL && kernel_device(encoder->kernel) != device) {
    return wrong_device(fn, encoder->kernel, device);
  }
  dc_stream_retain(stream);  // first: |stream| may be the current one
  dc_stream_release(encoder->stream);
  encoder->stream = stream;
  encoder->stream_id = dc_stream_id(stream);
  return DC_OK;
}

//===-- Kernel and arguments --------------------------------------------===//

dc_status_t dc_encoder_set_kernel(dc_encoder_t* encoder, dc_kernel_t* kernel) {
  static const char* fn = "dc_encoder_set_kernel";
  REQUIRE_ENCODER(encoder, fn);
  dc_encoder_t* e = encoder;
  if (!dc__kernel_valid(kernel)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'kernel' is NULL or a released kernel", fn);
  }
  dc_device_t* device = dc_stream_device(e->stream);
  if (kernel_device(kernel) != device) {
    return wrong_device(fn, kernel, device);
  }
  // Allocate before changing anything, so that a failure leaves the
  // encoder as it was.
  size_t count = kernel->info.arg_count;
  dc_arg_t* slots = NULL;
  if (count > e->capacity) {
    slots = dc_allocator_calloc(e->allocator, count, sizeof(*slots));
    if (slots == NULL) {
      return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "%s: kernel '%s': cannot allocate %zu argument slots",
                     fn, kernel->info.name, count);
    }
  }
  dc_kernel_retain(kernel);  // first: |kernel| may be the current one
  clear_bindings(e);
  dc_kernel_release(e->kernel);
  if (slots != NULL) {
    dc_allocator_free(e->allocator, e->args, e->capacity * sizeof(*e->args));
    e->args = slots;
    e->capacity = count;
  }
  e->kernel = kernel;
  e->arg_count = count;
  e->unbound = count;
  memset(&e->dispatch, 0, sizeof(e->dispatch));
  e->checked = false;
  return DC_OK;
}

// Binds |arg| to slot |index| of |e|'s kernel after checking it.
static dc_status_t bind(const char* fn, dc_encoder_t* e, size_t index,
                        const dc_arg_t* arg) {
  DC_RETURN_IF_ERROR(dc__kernel_check_arg(fn, e->kernel, index, arg));
  dc_arg_t* slot = &e->args[index];
  // Held: a buffer retained, a large record's bytes copied.
  dc_arg_t held;
  dc_status_t st = dc__arg_hold(e->allocator, &held, arg);
  if (st != DC_OK) {
    return DC_FAIL(st, "%s: kernel '%s': argument %zu: %s", fn,
                   e->kernel->info.name, index, dc_last_error());
  }
  dc__arg_drop(e->allocator, slot);
  if (slot->kind == 0) e->unbound--;
  // __local sizes change the group's memory: check the geometry again.
  if (arg->kind == DC_ARG_LOCAL || slot->kind == DC_ARG_LOCAL) {
    e->checked = false;
  }
  *slot = held;
  return DC_OK;
}

static dc_status_t set_arg(dc_encoder_t* e, size_t index,
                           const dc_arg_t* arg) {
  static const char* fn = "dc_encoder_set_arg";
  DC_REQUIRE_ARG(arg, fn);
  if (e->kernel == NULL) return no_kernel(fn);
  if (index >= e->arg_count) {
    char names[512];
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: kernel '%s': argument index %zu is out of range (it "
                   "has %zu argument(s): %s)",
                   fn, e->kernel->info.name, index, e->arg_count,
                   list_args(e->kernel, NULL, names, sizeof(names)));
  }
  return bind(fn, e, index, arg);
}

dc_status_t dc_encoder_set_arg(dc_encoder_t* encoder, size_t index,
                               const dc_arg_t* arg) {
  REQUIRE_ENCODER(encoder, "dc_encoder_set_arg");
  dc_status_t st = set_arg(encoder, index, arg);
  if (st == DC_OK) {
    encoder->stats.args_bound++;
  } else {
    encoder->stats.arg_errors++;
  }
  return st;
}

static dc_status_t set_arg_by_name(dc_encoder_t* e, const char* name,
                                   const dc_arg_t* arg) {
  static const char* fn = "dc_encoder_set_arg_by_name";
  DC_REQUIRE_ARG(name, fn);
  DC_REQUIRE_ARG(arg, fn);
  if (e->kernel == NULL) return no_kernel(fn);
  size_t index = 0;
  dc_status_t st = dc_kernel_find_arg(e->kernel, name, &index);
  if (st != DC_OK) {
    // "dc_kernel_find_arg: kernel 'k' has no argument ..." under our name.
    static const char kPrefix[] = "dc_kernel_find_arg: ";
    const char* message = dc_last_error();
    if (strncmp(message, kPrefix, sizeof(kPrefix) - 1) == 0) {
      message += sizeof(kPrefix) - 1;
    }
    return DC_FAIL(st, "%s: %s", fn, message);
  }
  return bind(fn, e, index, arg);
}

dc_status_t dc_encoder_set_arg_by_name(dc_encoder_t* encoder,
                                       const char* name, const dc_arg_t* arg) {
  REQUIRE_ENCODER(encoder, "dc_encoder_set_arg_by_name");
  dc_status_t st = set_arg_by_name(encoder, name, arg);
  if (st == DC_OK) {
    encoder->stats.args_bound++;
  } else {
    encoder->stats.arg_errors++;
  }
  return st;
}

//===-- Grid ------------------------------------------------------------===//

dc_status_t dc_encoder_set_grid(dc_encoder_t* encoder, uint32_t dims,
                                const size_t* global) {
  static const char* fn = "dc_encoder_set_grid";
  REQUIRE_ENCODER(encoder, fn);
  DC_REQUIRE_ARG(global, fn);
  const dc_kernel_t* k = encoder->kernel;
  if (k == NULL) return no_kernel(fn);
  if (dims < 1 || dims > 3) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: kernel '%s': dims is %u (must be 1, 2 or 3)", fn,
                   k->info.name, dims);
  }
  for (uint32_t d = 0; d < dims; ++d) {
    if (global[d] == 0) {
      return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                     "%s: kernel '%s': the grid is empty (global size of "
                     "dimension %u is 0)",
                     fn, k->info.name, d);
    }
  }
  dc_dispatch_t* g = &encoder->dispatch;
  memset(g, 0, sizeof(*g));
  g->dims = dims;
  memcpy(g->global, global, dims * sizeof(*global));
  encoder->checked = false;
  return DC_OK;
}

dc_status_t dc_encoder_set_group(dc_encoder_t* encoder, const size_t* local) {
  static const char* fn = "dc_encoder_set_group";
  REQUIRE_ENCODER(encoder, fn);
  const dc_kernel_t* k = encoder->kernel;
  if (k == NULL) return no_kernel(fn);
  dc_dispatch_t* g = &encoder->dispatch;
  if (g->dims == 0) return no_grid(fn, k);
  if (local != NULL) {
    for (uint32_t d = 0; d < g->dims; ++d) {
      if (local[d] == 0) {
        return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                       "%s: kernel '%s': work-group size of dimension %u is "
                       "0 (give every dimension, or NULL to let the engine "
                       "choose)",
                       fn, k->info.name, d);
      }
    }
  }
  memset(g->local, 0, sizeof(g->local));
  if (local != NULL) memcpy(g->local, local, g->dims * sizeof(*local));
  encoder->checked = false;
  return DC_OK;
}

dc_status_t dc_encoder_set_offset(dc_encoder_t* encoder,
                                  const size_t* offset) {
  static const char* fn = "dc_encoder_set_offset";
  REQUIRE_ENCODER(encoder, fn);
  const dc_kernel_t* k = encoder->kernel;
  if (k == NULL) return no_kernel(fn);
  dc_dispatch_t* g = &encoder->dispatch;
  if (g->dims == 0) return no_grid(fn, k);
  memset(g->offset, 0, sizeof(g->offset));
  if (offset != NULL) memcpy(g->offset, offset, g->dims * sizeof(*offset));
  return DC_OK;  // the offset takes no part in the dispatch check
}

//===-- Validation and dispatch -----------------------------------------===//

// Everything dc_encoder_validate() checks, with messages naming |fn|.
static dc_status_t check_ready(const char* fn, const dc_encoder_t* e) {
  dc_kernel_t* k = e->kernel;
  if (k == NULL) return no_kernel(fn);
  if (e->dispatch.dims == 0) return no_grid(fn, k);
  if (e->unbound > 0) {
    char names[512];
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "%s: kernel '%s': arguments not bound: %s", fn,
                   k->info.name, list_args(k, e->args, names, sizeof(names)));
  }
  if (e->checked) return DC_OK;
  // Left to the engine, the group is chosen here as dc__kernel_prepare()
  // would choose it, so that checking does not take a turn of autotuning
  // (whose candidates all divide the grid as this choice does). A required
  // group size is taken by dc__kernel_prepare() itself.
  dc_dispatch_t g = e->dispatch;
  if (g.local[0] == 0 && k->info.required_group_size[0] == 0) {
    dc_launch_t l = {.dims = g.dims};
    for (uint32_t d = 0; d < 3; ++d) l.global[d] = d < g.dims ? g.global[d] : 1;
    dc__choose_local(k, &l, 0);
    for (uint32_t d = 0; d < g.dims; ++d) g.local[d] = l.local[d];
  }
  dc__prepared_t prepared;
  return dc__kernel_prepare(fn, k, &g, e->args, e->arg_count, &prepared);
}

dc_status_t dc_encoder_validate(const dc_encoder_t* encoder) {
  static const char* fn = "dc_encoder_validate";
  REQUIRE_ENCODER(encoder, fn);
  return check_ready(fn, encoder);
}

static void record(dc_encoder_t* e, dc_status_t status, uint64_t ns) {
  dc_encoder_record_t* r = &e->history[e->sequence % DC_ENCODER_HISTORY];
  r->sequence = ++e->sequence;
  if (e->kernel != NULL) {
    dc__strlcpy(r->kernel, e->kernel->info.name, sizeof(r->kernel));
  } else {
    r->kernel[0] = '\0';
  }
  r->stream_id = e->stream_id;
  r->dims = e->dispatch.dims;
  memcpy(r->global, e->dispatch.global, sizeof(r->global));
  memcpy(r->local, e->dispatch.local, sizeof(r->local));
  r->status = status;
  r->encode_ns = ns;
  if (status == DC_OK) {
    e->stats.dispatches++;
  } else {
    e->stats.rejected++;
  }
  e->stats.encode_ns += ns;
}

dc_status_t dc_encoder_dispatch(dc_encoder_t* encoder) {
  static const char* fn = "dc_encoder_dispatch";
  REQUIRE_ENCODER(encoder, fn);
  dc_encoder_t* e = encoder;
  uint64_t start = dc__now_ns();
  dc_status_t st = check_ready(fn, e);
  if (st == DC_OK) {
    e->checked = true;
    st = dc_stream_dispatch(e->stream, e->kernel, &e->dispatch, e->args,
                            e->arg_count);
  }
  record(e, st, dc__now_ns() - start);
  return st;
}

//===-- History and statistics ------------------------------------------===//

static size_t history_length(const dc_encoder_t* e) {
  return e->sequence < DC_ENCODER_HISTORY ? (size_t)e->sequence
                                          : DC_ENCODER_HISTORY;
}

dc_status_t dc_encoder_history(const dc_encoder_t* encoder, size_t index,
                               dc_encoder_record_t* out_record) {
  static const char* fn = "dc_encoder_history";
  DC_REQUIRE_ARG(out_record, fn);
  memset(out_record, 0, sizeof(*out_record));
  REQUIRE_ENCODER(encoder, fn);
  size_t length = history_length(encoder);
  if (index >= length) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: index %zu is past the history's %zu record(s)", fn,
                   index, length);
  }
  *out_record =
      encoder->history[(encoder->sequence - 1 - index) % DC_ENCODER_HISTORY];
  return DC_OK;
}

dc_status_t dc_encoder_stats(const dc_encoder_t* encoder,
                             dc_encoder_stats_t* out_stats) {
  static const char* fn = "dc_encoder_stats";
  DC_REQUIRE_ARG(out_stats, fn);
  memset(out_stats, 0, sizeof(*out_stats));
  REQUIRE_ENCODER(encoder, fn);
  *out_stats = encoder->stats;
  out_stats->history_length = history_length(encoder);
  return DC_OK;
}

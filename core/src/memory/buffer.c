// buffer.c: buffers and views: validation, lifetime, and transfers, on top
// of each device's memory pool and vtable.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "buffer_internal.h"
#include "fault_internal.h"
#include "host_pins.h"
#include "memory_pool_internal.h"
#include "scheduler.h"

// Cross-device copies go through host memory in pieces of this size.
#define STAGING_BYTES ((size_t)4 << 20)

size_t dc__buffer_object_size(void) { return sizeof(struct dc_buffer_t); }

dc_status_t dc__buffer_check(const dc_buffer_t* buffer, const char* fn,
                             const char* param) {
  return dc__resource_check(fn, param, DC__RES(buffer), &dc__buffer_type);
}

static bool is_live(const dc_buffer_t* buffer) {
  return dc__resource_live(DC__RES(buffer), &dc__buffer_type);
}

// Checks that |count| elements from |offset| lie inside |buffer|.
dc_status_t dc__buffer_check_range(const dc_buffer_t* buffer, size_t offset,
                               size_t count, const char* fn,
                               const char* param) {
  if (count == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: element count is 0 (must be at least 1)", fn);
  }
  if (offset > buffer->length || count > buffer->length - offset) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "%s: elements [%zu, %zu + %zu) are outside '%s' (%s, "
                   "length %zu)",
                   fn, offset, offset, count, param,
                   buffer->label[0] ? buffer->label : "unnamed",
                   buffer->length);
  }
  return DC_OK;
}

static void describe_buffer(const dc__live_node_t* node, char* buf,
                            size_t size) {
  const dc_buffer_t* b =
      (const dc_buffer_t*)((const char*)node - offsetof(dc_buffer_t, live));
  char bytes[32];
  snprintf(buf, size, "%s '%s' %s[%zu] (%s, %s) on %s",
           b->root ? "view" : "buffer", b->label[0] ? b->label : "unnamed",
           dc_dtype_name(b->dtype), b->length,
           dc__format_bytes(b->length * dc_dtype_size(b->dtype), bytes,
                            sizeof(bytes)),
           dc_storage_mode_name(b->storage), b->device->info.name);
}

static dc_status_t check_params(const dc_buffer_params_t* p, const char* fn) {
  size_t esize = dc_dtype_size(p->dtype);
  if (esize == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: dtype %d is not a dc_dtype_t",
                   fn, (int)p->dtype);
  }
  if (p->storage < DC_STORAGE_PRIVATE || p->storage > DC_STORAGE_MANAGED) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: storage mode %d is not a dc_storage_mode_t", fn,
                   (int)p->storage);
  }
  if (p->length == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: length 0 is invalid (a buffer holds at least one "
                   "element)",
                   fn);
  }
  if (p->length > SIZE_MAX / esize) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: length %zu of %s overflows the size in bytes", fn,
                   p->length, dc_dtype_name(p->dtype));
  }
  return DC_OK;
}

// Makes a buffer struct for |device|. The caller fills it in and only then
// puts it on the live list (publish()), where leak reports read it from
// other threads.
static dc_buffer_t* new_buffer(dc_device_t* device) {
  dc_context_t* ctx = device->context;
  dc_buffer_t* b = dc__object_cache_alloc(&ctx->buffer_cache);
  if (b == NULL) return NULL;
  dc__resource_init(&b->header, &dc__buffer_type);
  b->device = device;
  b->live.describe = describe_buffer;
  b->live.kind = DC_LIVE_BUFFER;
  return b;
}

static void publish(dc_buffer_t* b) {
  dc__context_track(b->device->context, &b->live);
}

// How long an allocation waits, at most, for work in flight to give back
// memory before it fails.
#define MEMORY_WAIT_NS 5000000000ull

// Memory pressure: when the pool cannot give |bytes| (it has already
// trimmed its cache), work still queued on the context's streams may be
// holding buffers it is about to release, so wait for it to make progress
// and try again, up to MEMORY_WAIT_NS. A request larger than the whole
// budget fails at once: no release can make room for it.
static dc_status_t acquire_memory(dc_device_t* device, const char* fn,
                                  size_t bytes, dc_storage_mode_t mode,
                                  void** memory, size_t* block_size) {
  dc__memory_pool_t* pool = device->core->pool;
  dc_status_t st =
      dc__memory_pool_acquire(pool, fn, bytes, mode, memory, block_size);
  if (st != DC_ERR_OUT_OF_MEMORY || !dc__memory_pool_could_fit(pool, bytes)) {
    return st;
  }
  uint64_t start = dc__now_ns();
  dc__scheduler_t* s = device->context->scheduler;
  while (st == DC_ERR_OUT_OF_MEMORY &&
         dc__now_ns() - start < MEMORY_WAIT_NS &&
         dc__scheduler_wait_progress(s, 10000000)) {
    st = dc__memory_pool_acquire(pool, fn, bytes, mode, memory, block_size);
  }
  return st;
}

dc_status_t dc_buffer_create(dc_device_t* device,
                             const dc_buffer_params_t* params,
                             dc_buffer_t** out_buffer) {
  static const char* fn = "dc_buffer_create";
  DC_REQUIRE_ARG(out_buffer, fn);
  *out_buffer = NULL;
  DC_REQUIRE_ARG(device, fn);
  DC_REQUIRE_ARG(params, fn);
  DC_RETURN_IF_ERROR(check_params(params, fn));
  DC_RETURN_IF_ERROR(dc__fault_check(device->context, DC_FAULT_ALLOC, device,
                                     params->label));
  size_t bytes = params->length * dc_dtype_size(params->dtype);
  void* memory = NULL;
  size_t block_size = 0;
  DC_RETURN_IF_ERROR(acquire_memory(device, fn, bytes, params->storage,
                                    &memory, &block_size));
  dc_buffer_t* b = new_buffer(device);
  if (b == NULL) {
    dc__memory_pool_release(device->core->pool, memory, block_size, params->storage);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate the buffer", fn);
  }
  b->memory = memory;
  b->block_size = block_size;
  b->length = params->length;
  b->dtype = params->dtype;
  b->storage = params->storage;
  if (params->label) dc__strlcpy(b->label, params->label, sizeof(b->label));
  publish(b);
  *out_buffer = b;
  return DC_OK;
}

dc_status_t dc_buffer_create_view(dc_buffer_t* buffer, size_t offset,
                                  size_t count, dc_buffer_t** out_view) {
  static const char* fn = "dc_buffer_create_view";
  DC_REQUIRE_ARG(out_view, fn);
  *out_view = NULL;
  DC_RETURN_IF_ERROR(dc__buffer_check(buffer, fn, "buffer"));
  DC_RETURN_IF_ERROR(
      dc__buffer_check_range(buffer, offset, count, fn, "buffer"));
  dc_buffer_t* root = buffer->root ? buffer->root : buffer;
  dc_buffer_t* v = new_buffer(buffer->device);
  if (v == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate the view", fn);
  }
  dc_buffer_retain(root);
  v->root = root;
  v->memory = root->memory;
  v->block_size = root->block_size;
  v->byte_offset = buffer->byte_offset + offset * dc_dtype_size(buffer->dtype);
  v->length = count;
  v->dtype = buffer->dtype;
  v->storage = buffer->storage;
  memcpy(v->label, buffer->label, sizeof(v->label));
  publish(v);
  *out_view = v;
  return DC_OK;
}

// A view holds a reference to its root, dropped after the view's storage
// went back to the cache.
static void destroy_buffer(dc__resource_t* r) {
  dc_buffer_t* buffer = (dc_buffer_t*)r;
  dc_device_t* device = buffer->device;
  dc_context_t* ctx = device->context;
  dc_buffer_t* root = buffer->root;
  dc__context_untrack(ctx, &buffer->live);
  if (root == NULL) {
    dc__memory_pool_release(device->core->pool, buffer->memory,
                            buffer->block_size, buffer->storage);
  }
  dc__object_cache_free(&ctx->buffer_cache, buffer);
  dc_buffer_release(root);
  dc__context_unref(ctx);  // last: it may destroy the context
}

const dc__resource_type_t dc__buffer_type = {
    .name = "buffer",
    .destroy = destroy_buffer,
};
DC__RESOURCE_FIRST(dc_buffer_t, header);

void dc_buffer_retain(dc_buffer_t* buffer) {
  dc__resource_retain(DC__RES(buffer), &dc__buffer_type);
}

void dc_buffer_release(dc_buffer_t* buffer) {
  dc__resource_release(DC__RES(buffer), &dc__buffer_type);
}

//===-- Accessors -------------------------------------------------------===//

dc_dtype_t dc_buffer_dtype(const dc_buffer_t* b) {
  return is_live(b) ? b->dtype : (dc_dtype_t)0;
}
size_t dc_buffer_length(const dc_buffer_t* b) {
  return is_live(b) ? b->length : 0;
}
size_t dc_buffer_size_bytes(const dc_buffer_t* b) {
  return is_live(b) ? b->length * dc_dtype_size(b->dtype) : 0;
}
dc_storage_mode_t dc_buffer_storage_mode(const dc_buffer_t* b) {
  return is_live(b) ? b->storage : DC_STORAGE_PRIVATE;
}
dc_device_t* dc_buffer_device(const dc_buffer_t* b) {
  return is_live(b) ? b->device : NULL;
}
const char* dc_buffer_label(const dc_buffer_t* b) {
  return is_live(b) ? b->label : "";
}
bool dc_buffer_is_view(const dc_buffer_t* b, size_t* out_offset) {
  if (!is_live(b) || b->root == NULL) return false;
  if (out_offset) *out_offset = b->byte_offset / dc_dtype_size(b->dtype);
  return true;
}

//===-- Transfers -------------------------------------------------------===//

void dc__buffer_mark_written(dc_buffer_t* b) {
  dc_buffer_t* root = b->root ? b->root : b;
  atomic_store_explicit(&root->written, true, memory_order_relaxed);
}

bool dc__buffer_was_written(const dc_buffer_t* b) {
  const dc_buffer_t* root = b->root ? b->root : b;
  return atomic_load_explicit(&((dc_buffer_t*)root)->written,
                              memory_order_relaxed);
}

// A transfer's fault check (dc/fault.h), made after its own checks.
// Without a fault it moves all of its *count elements; with one it moves
// none (returning false, with the fault's status), or, for a halfway
// rule, the first half of them, and transfer_end reports the fault once
// they have moved.
typedef struct transfer_fault_t {
  dc_status_t status;
  dc__saved_error_t message;  // the fault's, kept while the half moves
} transfer_fault_t;

static bool transfer_may_start(const dc_buffer_t* b, size_t* count,
                               transfer_fault_t* fault) {
  bool halfway = false;
  fault->status =
      dc__fault_check_copy(b->device->context, b->device, b->label, &halfway);
  if (fault->status == DC_OK) return true;
  *count = halfway ? *count / 2 : 0;
  if (*count == 0) return false;
  dc__error_save(&fault->message);
  return true;
}

// What a transfer that transfer_may_start let begin comes to: its own
// failure if the move failed, else the fault, if there was one.
static dc_status_t transfer_end(const transfer_fault_t* fault,
                                dc_status_t moved) {
  if (fault->status == DC_OK || moved != DC_OK) return moved;
  dc__error_restore(&fault->message);
  return fault->status;
}

dc_status_t dc__buffer_write(dc_buffer_t* buffer, size_t offset,
                            const void* src, size_t count) {
  static const char* fn = "dc_buffer_write";
  DC_RETURN_IF_ERROR(dc__buffer_check(buffer, fn, "buffer"));
  DC_REQUIRE_ARG(src, fn);
  DC_RETURN_IF_ERROR(
      dc__buffer_check_range(buffer, offset, count, fn, "buffer"));
  transfer_fault_t fault;
  if (!transfer_may_start(buffer, &count, &fault)) return fault.status;
  size_t esize = dc_dtype_size(buffer->dtype);
  dc_device_t* d = buffer->device;
  dc__buffer_mark_written(buffer);
  return transfer_end(&fault, d->vtable->memory->write(
                                  d, buffer->memory,
                                  buffer->byte_offset + offset * esize, src,
                                  count * esize));
}

dc_status_t dc__buffer_read(const dc_buffer_t* buffer, size_t offset,
                           void* dst, size_t count) {
  static const char* fn = "dc_buffer_read";
  DC_RETURN_IF_ERROR(dc__buffer_check(buffer, fn, "buffer"));
  DC_REQUIRE_ARG(dst, fn);
  DC_RETURN_IF_ERROR(
      dc__buffer_check_range(buffer, offset, count, fn, "buffer"));
  transfer_fault_t fault;
  if (!transfer_may_start(buffer, &count, &fault)) return fault.status;
  size_t esize = dc_dtype_size(buffer->dtype);
  dc_device_t* d = buffer->device;
  return transfer_end(&fault, d->vtable->memory->read(
                                  d, buffer->memory,
                                  buffer->byte_offset + offset * esize, dst,
                                  count * esize));
}

dc_status_t dc__buffer_fill(dc_buffer_t* buffer, size_t offset, size_t count,
                           const void* value) {
  static const char* fn = "dc_buffer_fill";
  DC_RETURN_IF_ERROR(dc__buffer_check(buffer, fn, "buffer"));
  DC_REQUIRE_ARG(value, fn);
  DC_RETURN_IF_ERROR(
      dc__buffer_check_range(buffer, offset, count, fn, "buffer"));
  transfer_fault_t fault;
  if (!transfer_may_start(buffer, &count, &fault)) return fault.status;
  size_t esize = dc_dtype_size(buffer->dtype);
  dc_device_t* d = buffer->device;
  dc__buffer_mark_written(buffer);
  return transfer_end(&fault, d->vtable->memory->fill(
                                  d, buffer->memory,
                                  buffer->byte_offset + offset * esize,
                                  count * esize, value, esize));
}

// The host pointer of |b|'s block, or NULL when the host cannot see it.
static void* host_block(const dc_buffer_t* b) {
  return b->device->vtable->memory->host_pointer(b->device, b->memory,
                                                 b->storage);
}

// Copies between devices: by the backend when it copies between its own
// devices (copy_peer: GPU to GPU, without host memory in between where
// the GPUs reach each other); straight from or into the host block when
// one side is host memory (host_pins.h: pinned when it pays); else
// through a bounded host staging buffer.
static dc_status_t copy_across_devices(dc_buffer_t* dst, size_t dst_byte,
                                       const dc_buffer_t* src,
                                       size_t src_byte, size_t bytes) {
  dc_device_t* s = src->device;
  dc_device_t* d = dst->device;
  if (dc__device_copies_peer(d, s)) {
    return d->vtable->peer->copy(d, dst->memory, dst_byte, s, src->memory,
                                 src_byte, bytes, NULL);
  }
  void* block = host_block(src);
  if (block != NULL) {
    return dc__host_pins_write(d, dst->memory, dst_byte, block,
                               src->block_size, src_byte, bytes);
  }
  block = host_block(dst);
  if (block != NULL) {
    return dc__host_pins_read(s, src->memory, src_byte, block,
                              dst->block_size, dst_byte, bytes);
  }
  dc_allocator_t allocator = dc_context_allocator(d->context);
  size_t stage_size = DC_MIN(bytes, STAGING_BYTES);
  void* stage = dc_allocator_malloc(allocator, stage_size);
  if (stage == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_buffer_copy: cannot allocate %zu bytes of staging",
                   stage_size);
  }
  dc_status_t status = DC_OK;
  for (size_t done = 0; done < bytes && status == DC_OK;) {
    size_t n = DC_MIN(stage_size, bytes - done);
    status = s->vtable->memory->read(s, src->memory, src_byte + done, stage, n);
    if (status == DC_OK) {
      status =
          d->vtable->memory->write(d, dst->memory, dst_byte + done, stage, n);
    }
    done += n;
  }
  dc_allocator_free(allocator, stage, stage_size);
  return status;
}

dc_status_t dc__buffer_copy(dc_buffer_t* dst, size_t dst_offset,
                           const dc_buffer_t* src, size_t src_offset,
                           size_t count) {
  static const char* fn = "dc_buffer_copy";
  DC_RETURN_IF_ERROR(dc__buffer_check(dst, fn, "dst"));
  DC_RETURN_IF_ERROR(dc__buffer_check(src, fn, "src"));
  if (dst->dtype != src->dtype) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: dtypes differ (dst is %s, src is %s)", fn,
                   dc_dtype_name(dst->dtype), dc_dtype_name(src->dtype));
  }
  DC_RETURN_IF_ERROR(dc__buffer_check_range(dst, dst_offset, count, fn, "dst"));
  DC_RETURN_IF_ERROR(dc__buffer_check_range(src, src_offset, count, fn, "src"));
  transfer_fault_t fault;
  if (!transfer_may_start(dst, &count, &fault)) return fault.status;
  size_t esize = dc_dtype_size(dst->dtype);
  size_t dst_byte = dst->byte_offset + dst_offset * esize;
  size_t src_byte = src->byte_offset + src_offset * esize;
  dc__buffer_mark_written(dst);
  dc_device_t* d = dst->device;
  dc_status_t moved =
      d != src->device
          ? copy_across_devices(dst, dst_byte, src, src_byte, count * esize)
          : d->vtable->memory->copy(d, dst->memory, dst_byte, src->memory,
                                    src_byte, count * esize);
  return transfer_end(&fault, moved);
}

//===-- Copies on a device queue ----------------------------------------===//

static bool in_range(const dc_buffer_t* b, size_t offset, size_t count) {
  return count > 0 && offset <= b->length && count <= b->length - offset;
}

// How a copy goes on a queue of a device (dc__buffer_copy_queueable).
typedef enum queued_copy_e {
  QUEUED_NONE,   // it runs on the host
  QUEUED_LOCAL,  // both buffers on the device: the queue's copy
  QUEUED_WRITE,  // from a pinned host block: write_pinned
  QUEUED_READ,   // into one: read_pinned
} queued_copy_t;

static queued_copy_t queued_copy_kind(const dc_buffer_t* dst,
                                      size_t dst_offset,
                                      const dc_buffer_t* src,
                                      size_t src_offset, size_t count,
                                      dc_device_t* device) {
  const dc_device_queue_ops_t* q = device->vtable->queues;
  if (q == NULL || !is_live(dst) || !is_live(src) ||
      dst->dtype != src->dtype || !in_range(dst, dst_offset, count) ||
      !in_range(src, src_offset, count)) {
    return QUEUED_NONE;
  }
  size_t esize = dc_dtype_size(dst->dtype);
  size_t bytes = count * esize;
  if (dst->device == device && src->device == device) {
    size_t to = dst->byte_offset + dst_offset * esize;
    size_t from = src->byte_offset + src_offset * esize;
    bool overlap = dst->memory == src->memory && to < from + bytes &&
                   from < to + bytes;
    return q->copy != NULL && !overlap ? QUEUED_LOCAL : QUEUED_NONE;
  }
  if (q->write_pinned == NULL || bytes < DC__PIN_MIN_BYTES) return QUEUED_NONE;
  if (dst->device == device && host_block(src) != NULL &&
      dc__host_pins_ready(device, host_block(src))) {
    return QUEUED_WRITE;
  }
  if (src->device == device && host_block(dst) != NULL &&
      dc__host_pins_ready(device, host_block(dst))) {
    return QUEUED_READ;
  }
  return QUEUED_NONE;
}

bool dc__buffer_copy_queueable(const dc_buffer_t* dst, size_t dst_offset,
                               const dc_buffer_t* src, size_t src_offset,
                               size_t count, dc_device_t* device) {
  return queued_copy_kind(dst, dst_offset, src, src_offset, count, device) !=
         QUEUED_NONE;
}

dc_status_t dc__buffer_copy_queue(dc_buffer_t* dst, size_t dst_offset,
                                  const dc_buffer_t* src, size_t src_offset,
                                  size_t count, dc_device_t* device,
                                  dc_device_queue_t* queue) {
  queued_copy_t kind =
      queued_copy_kind(dst, dst_offset, src, src_offset, count, device);
  size_t esize = dc_dtype_size(dst->dtype);
  size_t to = dst->byte_offset + dst_offset * esize;
  size_t from = src->byte_offset + src_offset * esize;
  size_t bytes = count * esize;
  const dc_device_queue_ops_t* q = device->vtable->queues;
  dc__buffer_mark_written(dst);
  switch (kind) {
    case QUEUED_LOCAL:
      return q->copy(device, queue, dst->memory, to, src->memory, from, bytes);
    case QUEUED_WRITE:
      return q->write_pinned(device, queue, dst->memory, to,
                             (const char*)host_block(src) + from, bytes);
    case QUEUED_READ:
      return q->read_pinned(device, queue, src->memory, from,
                            (char*)host_block(dst) + to, bytes);
    case QUEUED_NONE:
      break;
  }
  return DC_FAIL(DC_ERR_INTERNAL,
                 "dc_stream_copy: the copy can no longer go on %s's queue",
                 device->info.name);
}

dc_status_t dc_buffer_host_pointer(dc_buffer_t* buffer, void** out_pointer) {
  static const char* fn = "dc_buffer_host_pointer";
  DC_REQUIRE_ARG(out_pointer, fn);
  *out_pointer = NULL;
  DC_RETURN_IF_ERROR(dc__buffer_check(buffer, fn, "buffer"));
  dc_device_t* d = buffer->device;
  char* base = d->vtable->memory->host_pointer(d, buffer->memory, buffer->storage);
  if (base == NULL) {
    return DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                   "%s: %s memory of '%s' on %s is not visible to the host; "
                   "use dc_buffer_read/write or a shared buffer",
                   fn, dc_storage_mode_name(buffer->storage),
                   buffer->label[0] ? buffer->label : "unnamed",
                   d->info.name);
  }
  *out_pointer = base + buffer->byte_offset;
  dc__buffer_mark_written(buffer);  // the host may write through it
  return DC_OK;
}

//===-- The synchronous entry points -----------------------------------===//
// A failure of the device (not the caller's mistake) counts against its
// health here; streams and graphs call the dc__buffer_ forms and count
// the failures of their commands themselves. (A failure that is the
// caller's, such as a stale handle, never reaches |b|.)

static dc_status_t counted(const dc_buffer_t* b, dc_status_t st) {
  return dc__status_about_device(st) ? dc__device_outcome(b->device, st)
                                     : st;
}

dc_status_t dc_buffer_write(dc_buffer_t* buffer, size_t offset,
                            const void* src, size_t count) {
  dc_status_t st = dc__buffer_write(buffer, offset, src, count);
  return counted(buffer, st);
}

dc_status_t dc_buffer_read(const dc_buffer_t* buffer, size_t offset,
                           void* dst, size_t count) {
  dc_status_t st = dc__buffer_read(buffer, offset, dst, count);
  return counted(buffer, st);
}

dc_status_t dc_buffer_fill(dc_buffer_t* buffer, size_t offset, size_t count,
                           const void* value) {
  dc_status_t st = dc__buffer_fill(buffer, offset, count, value);
  return counted(buffer, st);
}

dc_status_t dc_buffer_copy(dc_buffer_t* dst, size_t dst_offset,
                           const dc_buffer_t* src, size_t src_offset,
                           size_t count) {
  dc_status_t st = dc__buffer_copy(dst, dst_offset, src, src_offset, count);
  return counted(dst, st);
}

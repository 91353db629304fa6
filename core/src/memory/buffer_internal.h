// buffer_internal.h: the buffer object, for the core's other modules.
// SPDX-License-Identifier: MIT
#ifndef DC_BUFFER_INTERNAL_H_
#define DC_BUFFER_INTERNAL_H_

#include "context_internal.h"
#include "dc/buffer.h"

// A buffer or a view. A root buffer owns a block from its device's pool; a
// view points into its root's block and holds a reference to the root.
struct dc_buffer_t {
  dc__resource_t header;  // first (resource.h)
  dc_device_t* device;
  dc_buffer_t* root;      // NULL for a root buffer
  void* memory;           // the root's block
  size_t block_size;      // the root's block size (its pool class)
  size_t byte_offset;     // of this buffer's first element in the block
  size_t length;          // elements
  dc_dtype_t dtype;
  dc_storage_mode_t storage;
  dc__live_node_t live;
  atomic_bool written;    // the root: something may have written it
  char label[48];
};

// dc__resource_check() for a buffer: DC_ERR_INVALID_ARGUMENT unless
// |buffer| is a live buffer; messages name |fn| and |param|.
DC_INTERNAL dc_status_t dc__buffer_check(const dc_buffer_t* buffer,
                                         const char* fn, const char* param);
// Fails unless |count| (> 0) elements from |offset| lie inside |buffer|.
DC_INTERNAL dc_status_t dc__buffer_check_range(const dc_buffer_t* buffer,
                                               size_t offset, size_t count,
                                               const char* fn,
                                               const char* param);

// Notes that |buffer|'s memory may now hold data (for the graph's
// "reads a buffer nothing wrote" warning).
DC_INTERNAL void dc__buffer_mark_written(dc_buffer_t* buffer);
DC_INTERNAL bool dc__buffer_was_written(const dc_buffer_t* buffer);

// The size of struct dc_buffer_t, for the context's object cache.
DC_INTERNAL size_t dc__buffer_object_size(void);

// dc_buffer_write, _read, _fill and _copy without counting a device's
// failure against its health: for streams and graphs, which count the
// failures of their commands themselves.
DC_INTERNAL dc_status_t dc__buffer_write(dc_buffer_t* buffer, size_t offset,
                                         const void* src, size_t count);
DC_INTERNAL dc_status_t dc__buffer_read(const dc_buffer_t* buffer,
                                        size_t offset, void* dst,
                                        size_t count);
DC_INTERNAL dc_status_t dc__buffer_fill(dc_buffer_t* buffer, size_t offset,
                                        size_t count, const void* value);
DC_INTERNAL dc_status_t dc__buffer_copy(dc_buffer_t* dst, size_t dst_offset,
                                        const dc_buffer_t* src,
                                        size_t src_offset, size_t count);

// Copies on a device queue (dc/backend.h, the queue table's copy,
// write_pinned and read_pinned), for the scheduler. A copy may go on a
// queue of |device| when both buffers are valid, alike and in range, and
// either both lie on |device| without overlapping, or one is on |device|
// and the other a host block (a CPU device's) that |device|'s backend
// has already pinned, the copy moving at least DC__PIN_MIN_BYTES. Looks
// only: pins nothing, sets no error (the scheduler asks with its lock
// held; a copy refused here runs on the host as dc__buffer_copy).
DC_INTERNAL bool dc__buffer_copy_queueable(const dc_buffer_t* dst,
                                           size_t dst_offset,
                                           const dc_buffer_t* src,
                                           size_t src_offset, size_t count,
                                           dc_device_t* device);
// Puts a copy that dc__buffer_copy_queueable allowed on |queue| of
// |device|. The buffers (and so the pinned block) must stay alive until
// the queue has finished it. Fault rules do not apply: the scheduler
// queues copies only while none is armed.
DC_INTERNAL dc_status_t dc__buffer_copy_queue(dc_buffer_t* dst,
                                              size_t dst_offset,
                                              const dc_buffer_t* src,
                                              size_t src_offset, size_t count,
                                              dc_device_t* device,
                                              dc_device_queue_t* queue);

#endif  // DC_BUFFER_INTERNAL_H_

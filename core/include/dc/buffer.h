// dc/buffer.h: typed device memory, views, and host transfers.
// SPDX-License-Identifier: MIT
#ifndef DC_BUFFER_H_
#define DC_BUFFER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/device.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Types and enums -------------------------------------------------===//

// Element types. The numbering is part of the ABI.
typedef enum dc_dtype_e {
  DC_DTYPE_I8 = 1,
  DC_DTYPE_U8,
  DC_DTYPE_I16,
  DC_DTYPE_U16,
  DC_DTYPE_I32,
  DC_DTYPE_U32,
  DC_DTYPE_I64,
  DC_DTYPE_U64,
  DC_DTYPE_F32,
  DC_DTYPE_F64,
} dc_dtype_t;

// Where a buffer's bytes live. These matter on GPUs; the CPU device keeps
// every buffer in host memory but records the mode, so the same program
// behaves the same on every device.
typedef enum dc_storage_mode_e {
  DC_STORAGE_PRIVATE = 0,  // device memory; the host reads and writes it
                           // only through copies (the default)
  DC_STORAGE_SHARED,       // host memory the device can reach directly
  DC_STORAGE_MANAGED,      // migrates between host and device on use
} dc_storage_mode_t;

// Returns the size of one element of |dtype| in bytes, or 0 if unknown.
DC_API size_t dc_dtype_size(dc_dtype_t dtype);

// Returns the dtype's name: "i8" ... "f64", or "?" if unknown.
DC_API const char* dc_dtype_name(dc_dtype_t dtype);

// Parses a dtype name ("f32", ...). Returns false if unknown.
DC_API bool dc_dtype_parse(const char* name, dc_dtype_t* out_dtype);

// Returns the mode's name: "private", "shared" or "managed" ("?" if
// unknown).
DC_API const char* dc_storage_mode_name(dc_storage_mode_t mode);

// Parses a storage mode name. Returns false if unknown.
DC_API bool dc_storage_mode_parse(const char* name,
                                  dc_storage_mode_t* out_mode);

//===-- dc_buffer_t -----------------------------------------------------===//
//
// A buffer is a fixed-length array of elements of one type on one device.
// Its memory comes from the device's memory pool, is aligned to at least 64
// bytes, and is not initialised.
//
// A view is a window (offset and count, in elements) onto another buffer.
// It shares the parent's memory and keeps it alive; a view of a view is a
// view of the original buffer. Every operation takes offsets and counts in
// elements relative to the buffer or view it is given, and checks them
// against its length.
//
// Lifetime: reference counted. dc_buffer_create() returns one reference;
// the buffer keeps its context alive, and a view keeps its root buffer
// alive (so the root still counts as a live buffer). Using a buffer after
// its last release fails with DC_ERR_INVALID_ARGUMENT ("'buffer' is NULL
// or a released buffer"), as for every engine object, instead of reading
// freed memory, for as long as the context lives and at least the next 256
// buffer releases of that context (after that the struct may be reused,
// and a stale handle may name a new buffer).
//
// Thread safety: the object is thread-safe. Its contents are not guarded:
// concurrent writes to overlapping ranges race, as with any memory.

typedef struct dc_buffer_t dc_buffer_t;

typedef struct dc_buffer_params_t {
  dc_dtype_t dtype;           // element type (required)
  size_t length;              // element count (required, > 0)
  dc_storage_mode_t storage;  // default DC_STORAGE_PRIVATE
  const char* label;          // shown in leak reports; copied; may be NULL
} dc_buffer_params_t;

// Creates a buffer on |device| as |params| describes.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL pointer, an unknown dtype or
// storage mode, a zero length or one whose size in bytes overflows;
// DC_ERR_OUT_OF_MEMORY if the device's memory or budget cannot hold it.
DC_API dc_status_t dc_buffer_create(dc_device_t* device,
                                    const dc_buffer_params_t* params,
                                    dc_buffer_t** out_buffer);

// Creates a view of |count| elements of |buffer| starting at element
// |offset|. Retains the root buffer that owns the memory.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL pointer or a zero count, and
// DC_ERR_OUT_OF_RANGE if the window does not fit inside |buffer|.
DC_API dc_status_t dc_buffer_create_view(dc_buffer_t* buffer, size_t offset,
                                         size_t count,
                                         dc_buffer_t** out_view);

// Adds a reference. NULL is a no-op.
DC_API void dc_buffer_retain(dc_buffer_t* buffer);

// Drops a reference; the last one frees the buffer (returning its memory to
// the pool once no view uses it). NULL is a no-op.
DC_API void dc_buffer_release(dc_buffer_t* buffer);

// Accessors. Each returns 0 (or NULL, or "") for a NULL or released buffer.
DC_API dc_dtype_t dc_buffer_dtype(const dc_buffer_t* buffer);
DC_API size_t dc_buffer_length(const dc_buffer_t* buffer);  // elements
DC_API size_t dc_buffer_size_bytes(const dc_buffer_t* buffer);
DC_API dc_storage_mode_t dc_buffer_storage_mode(const dc_buffer_t* buffer);
DC_API dc_device_t* dc_buffer_device(const dc_buffer_t* buffer);
DC_API const char* dc_buffer_label(const dc_buffer_t* buffer);
// True for a view; |out_offset| (may be NULL) gets its offset in elements
// within the original buffer.
DC_API bool dc_buffer_is_view(const dc_buffer_t* buffer, size_t* out_offset);

// Copies |count| elements from host memory |src| into |buffer| at element
// |offset|. Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a zero
// count and DC_ERR_OUT_OF_RANGE if the range does not fit.
DC_API dc_status_t dc_buffer_write(dc_buffer_t* buffer, size_t offset,
                                   const void* src, size_t count);

// Copies |count| elements of |buffer| starting at |offset| into host memory
// |dst|. Errors as dc_buffer_write().
DC_API dc_status_t dc_buffer_read(const dc_buffer_t* buffer, size_t offset,
                                  void* dst, size_t count);

// Sets |count| elements from |offset| to the one element at |value| (of
// dc_dtype_size() bytes). Errors as dc_buffer_write().
DC_API dc_status_t dc_buffer_fill(dc_buffer_t* buffer, size_t offset,
                                  size_t count, const void* value);

// Copies |count| elements from |src| at |src_offset| to |dst| at
// |dst_offset|. The buffers may be on different devices (the copy then
// goes GPU to GPU where the backend can, else through host memory; see
// dc_device_peer()) and may overlap (views of one buffer): the result is
// as if the source were first copied aside.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, a zero count or
// different dtypes, DC_ERR_OUT_OF_RANGE if either range does not fit.
DC_API dc_status_t dc_buffer_copy(dc_buffer_t* dst, size_t dst_offset,
                                  const dc_buffer_t* src, size_t src_offset,
                                  size_t count);

// Gets a host pointer to the buffer's first element, for host-visible
// memory (every buffer on a device with unified memory, such as the CPU;
// shared and managed buffers on a GPU). The pointer is valid while the
// buffer lives. Returns DC_ERR_FAILED_PRECONDITION if the memory is not
// host-visible.
DC_API dc_status_t dc_buffer_host_pointer(dc_buffer_t* buffer,
                                          void** out_pointer);

DC_EXTERN_C_END

#endif  // DC_BUFFER_H_

// dc/kernel.h: programs in the kernel language, kernel reflection, and
// validated dispatch.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_H_
#define DC_KERNEL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dc/buffer.h"
#include "dc/device.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Programs --------------------------------------------------------===//
//
// A program is a source in the kernel language (a documented subset of
// OpenCL C 1.2, see docs/kernel-language.md) built for one device. It holds
// every kernel (`__kernel` function) of the source. Building runs the
// preprocessor (with the -D options given), parses the source, and
// compiles it for the device: on the CPU into C, compiled by the system C
// compiler and loaded as a shared object. Results are cached in memory and
// on disk, so building the same source again is cheap.
//
// Errors point into the user's own source as "name:line:col: error: ...";
// that holds for the C compiler's messages too.
//
// Lifetime: reference counted; a program keeps its device's context alive,
// and each of its kernels keeps the program alive.
// Thread safety: thread-safe.

typedef struct dc_program_t dc_program_t;
typedef struct dc_kernel_t dc_kernel_t;

typedef struct dc_program_params_t {
  // The source. NUL-terminated unless |source_length| is set.
  const char* source;
  size_t source_length;
  // Name used in messages and #line ("program" if NULL). It is kept as
  // letters, digits and "._-+/" (any other byte becomes '_'), at most 127
  // of them.
  const char* name;
  // Build options, separated by spaces: -D NAME[=VALUE], -U NAME,
  // -cl-fast-relaxed-math, -cl-mad-enable, -cl-finite-math-only,
  // -cl-no-signed-zeros, -cl-unsafe-math-optimizations, -cl-opt-disable,
  // -cl-std=CL1.x and the other -cl-* options of OpenCL 1.2, -w, -Werror,
  // -dc-checked (checked mode), -dc-O3. Unknown options are errors
  // (docs/kernel-language.md, Build options).
  const char* options;
} dc_program_params_t;

// Builds |params|' source for |device|.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or an empty source,
// DC_ERR_COMPILE with the first diagnostic (and how many followed) in
// dc_last_error() when the source does not compile, DC_ERR_UNAVAILABLE if
// the device's compiler cannot be run (the message says which and why).
DC_API dc_status_t dc_program_create(dc_device_t* device,
                                     const dc_program_params_t* params,
                                     dc_program_t** out_program);

DC_API void dc_program_retain(dc_program_t* program);
DC_API void dc_program_release(dc_program_t* program);

// Builds the source |program| was built from, with the same name and
// options, for |device| (another device, for running the same kernels
// there: fallback uses this). Errors as dc_program_create(), and
// DC_ERR_INVALID_ARGUMENT for a NULL or released program.
DC_API dc_status_t dc_program_build_for(const dc_program_t* program,
                                        dc_device_t* device,
                                        dc_program_t** out_program);

// Returns the warnings of the build ("" when there were none).
DC_API const char* dc_program_build_log(const dc_program_t* program);

// Returns the number of kernels, 0 for NULL.
DC_API size_t dc_program_kernel_count(const dc_program_t* program);

// Gets the kernel at |index| in source order (borrowed: valid while the
// program lives; dc_kernel_retain() keeps it longer).
// Returns DC_ERR_OUT_OF_RANGE for a bad index.
DC_API dc_status_t dc_program_kernel(dc_program_t* program, size_t index,
                                     dc_kernel_t** out_kernel);

// Gets a kernel by name (borrowed, as above).
// Returns DC_ERR_NOT_FOUND, listing the program's kernels, if none has it.
DC_API dc_status_t dc_program_find_kernel(dc_program_t* program,
                                          const char* name,
                                          dc_kernel_t** out_kernel);

// Counters of a device's program builds since its context was created.
typedef struct dc_program_cache_stats_t {
  uint64_t memory_hits;   // builds served by a module already loaded
  uint64_t disk_hits;     // builds served by the on-disk cache
  uint64_t compiles;      // builds that ran the compiler
  uint64_t failures;      // builds the device's compiler rejected
  uint64_t corrupt;       // disk entries found corrupt and rebuilt
  uint64_t compile_ns;    // time spent compiling, in total
  uint64_t hit_ns;        // time spent on builds served from a cache
} dc_program_cache_stats_t;

// Copies |device|'s build counters into |out_stats|. Where the disk cache
// lives is in dc_context_params_t.kernel_cache_dir.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers.
DC_API dc_status_t dc_program_cache_stats(dc_device_t* device,
                                          dc_program_cache_stats_t* out_stats);

//===-- Kernel reflection -----------------------------------------------===//

typedef enum dc_address_space_e {
  DC_ADDRESS_PRIVATE = 0,
  DC_ADDRESS_GLOBAL,
  DC_ADDRESS_CONSTANT,
  DC_ADDRESS_LOCAL,
} dc_address_space_t;

// How an argument is bound.
typedef enum dc_arg_kind_e {
  DC_ARG_SCALAR = 1,  // a value: scalar or vector (or enum), passed by copy
  DC_ARG_BUFFER,      // a __global or __constant pointer: a dc_buffer_t
  DC_ARG_LOCAL,       // a __local pointer: a size in bytes, per work-group
  DC_ARG_RECORD,      // a struct or union passed by value: its bytes
} dc_arg_kind_t;

// One member of a struct or union argument, laid out as a C compiler for
// the host lays out the same declaration (docs/kernel-language.md, Struct
// layout), so a host struct of the same members can be passed as is.
typedef struct dc_kernel_field_t {
  const char* name;
  const char* type_name;     // "float4", "int[4]", "struct range"
  size_t offset;             // bytes from the start of the enclosing record
  size_t size;               // bytes of the whole member (every element)
  // A scalar, vector or enum member (or array of them): the element type
  // (an enum is DC_DTYPE_I32) and vector width; 0 and 1 for a record
  // member.
  dc_dtype_t dtype;
  uint32_t vector_width;
  // Elements of an array member, every dimension multiplied in (int m[2][3]
  // has 6, row-major); 0 when it is not an array.
  size_t array_length;
  // A struct or union member (or array of them): its members, offsets
  // counted from the start of one element.
  const struct dc_kernel_field_t* fields;
  size_t field_count;
  bool is_union;
} dc_kernel_field_t;

typedef struct dc_kernel_arg_info_t {
  const char* name;
  const char* type_name;           // "__global const float*", "int4",
                                   // "struct params"
  dc_arg_kind_t kind;
  dc_address_space_t address_space;  // of the pointee for pointers
  dc_dtype_t dtype;                // element type (the pointee's); 0: void
                                   // or a record
  uint32_t vector_width;           // 1, 2, 3, 4, 8 or 16
  size_t size;                     // bytes of a DC_ARG_SCALAR value or a
                                   // DC_ARG_RECORD
  bool is_const;                   // the kernel does not write through it
  // The kernel only stores to it (every use is `name[index] = value;`),
  // so what it held before is never read: retries need no snapshot of it
  // and it carries no read dependency. A conservative analysis: false
  // whenever in doubt (a helper call, a compound assignment, any read).
  bool is_write_only;
  // DC_ARG_RECORD: its alignment, whether it is a union, and its members
  // in declaration order (borrowed from the program, as the strings are).
  size_t align;
  bool is_union;
  const dc_kernel_field_t* fields;
  size_t field_count;
} dc_kernel_arg_info_t;

// The most parameters a kernel (or any function of the language) has.
#define DC_KERNEL_MAX_ARGS 128

typedef struct dc_kernel_info_t {
  const char* name;
  size_t arg_count;
  bool uses_barrier;                 // barrier() or dc_grid_sync()
  size_t static_local_size;          // bytes of __local variables
  uint32_t required_group_size[3];   // reqd_work_group_size, or zeros
  // How its work-items run: on a CPU device "loop", "regions", "fibers"
  // or "native"; elsewhere the backend's name ("cuda", "opencl"), or
  // "cuda-coarsened" for a kernel the CUDA device may run several
  // work-items per thread (docs/cuda.md).
  const char* execution;
  // The kernel (or a helper it calls) synchronises its whole grid with
  // dc_grid_sync(): every work-group of a dispatch must be resident at
  // once, so the dispatch is cooperative and its group count is limited by
  // the device's max_cooperative_groups.
  bool uses_grid_sync;
  // The most work-items per group the kernel takes on its device: the
  // device's max_work_group_size, or less where the device's compiler
  // says so for this kernel (registers, __local memory).
  size_t max_group_size;
} dc_kernel_info_t;

DC_API void dc_kernel_retain(dc_kernel_t* kernel);
DC_API void dc_kernel_release(dc_kernel_t* kernel);

// Returns the kernel's name, "" for NULL.
DC_API const char* dc_kernel_name(const dc_kernel_t* kernel);

// Copies the kernel's description into |out_info| (strings borrowed).
DC_API dc_status_t dc_kernel_info(const dc_kernel_t* kernel,
                                  dc_kernel_info_t* out_info);

// Returns argument |index|'s description (borrowed), NULL if out of range.
DC_API const dc_kernel_arg_info_t* dc_kernel_arg_info(
    const dc_kernel_t* kernel, size_t index);

// Finds an argument by name. Returns DC_ERR_NOT_FOUND (listing the
// arguments) if the kernel has none of that name.
DC_API dc_status_t dc_kernel_find_arg(const dc_kernel_t* kernel,
                                      const char* name, size_t* out_index);

//===-- Arguments -------------------------------------------------------===//

// One argument of a dispatch. Build them with the dc_arg_* helpers below.
typedef struct dc_arg_t {
  dc_arg_kind_t kind;
  dc_dtype_t dtype;        // DC_ARG_SCALAR: element type of |value|
  uint32_t vector_width;   // DC_ARG_SCALAR: 1, 2, 3, 4, 8 or 16
  dc_buffer_t* buffer;     // DC_ARG_BUFFER (borrowed)
  size_t local_size;       // DC_ARG_LOCAL: bytes
  // DC_ARG_RECORD: |size| bytes, at |bytes| (borrowed until the call that
  // takes the argument returns; whatever keeps it longer copies them) or,
  // when |bytes| is NULL, in |value|.
  const void* bytes;
  size_t size;
  _Alignas(16) unsigned char value[128];  // DC_ARG_SCALAR: the bytes
} dc_arg_t;

static inline dc_arg_t dc_arg_buffer(dc_buffer_t* buffer) {
  dc_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = DC_ARG_BUFFER;
  a.buffer = buffer;
  return a;
}

static inline dc_arg_t dc_arg_local(size_t bytes) {
  dc_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = DC_ARG_LOCAL;
  a.local_size = bytes;
  return a;
}

// A value of |vector_width| elements of |dtype| copied from |bytes|.
static inline dc_arg_t dc_arg_value(dc_dtype_t dtype, uint32_t vector_width,
                                    const void* bytes) {
  dc_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = DC_ARG_SCALAR;
  a.dtype = dtype;
  a.vector_width = vector_width;
  size_t n = dc_dtype_size(dtype) * vector_width;
  if (bytes != NULL && n <= sizeof(a.value)) memcpy(a.value, bytes, n);
  return a;
}

// A struct or union passed by value: |size| bytes laid out as the
// kernel's declaration (dc_kernel_arg_info_t.fields), such as a host
// struct of the same members. Up to sizeof(value) bytes are copied into
// the argument; larger ones are borrowed from |bytes| until the call that
// takes the argument returns (streams, graphs and the encoder copy them).
// A NULL |bytes| gives zeros when they fit in |value|; a dispatch refuses
// it for a larger struct, and refuses any size but the reflected one.
static inline dc_arg_t dc_arg_bytes(const void* bytes, size_t size) {
  dc_arg_t a;
  memset(&a, 0, sizeof(a));
  a.kind = DC_ARG_RECORD;
  a.size = size;
  if (size <= sizeof(a.value)) {
    if (bytes != NULL && size > 0) memcpy(a.value, bytes, size);
  } else {
    a.bytes = bytes;
  }
  return a;
}

#define DC_ARG_SCALAR_HELPER_(suffix, ctype, dtype)        \
  static inline dc_arg_t dc_arg_##suffix(ctype v) {        \
    return dc_arg_value(dtype, 1, &v);                     \
  }
DC_ARG_SCALAR_HELPER_(i8, int8_t, DC_DTYPE_I8)
DC_ARG_SCALAR_HELPER_(u8, uint8_t, DC_DTYPE_U8)
DC_ARG_SCALAR_HELPER_(i16, int16_t, DC_DTYPE_I16)
DC_ARG_SCALAR_HELPER_(u16, uint16_t, DC_DTYPE_U16)
DC_ARG_SCALAR_HELPER_(i32, int32_t, DC_DTYPE_I32)
DC_ARG_SCALAR_HELPER_(u32, uint32_t, DC_DTYPE_U32)
DC_ARG_SCALAR_HELPER_(i64, int64_t, DC_DTYPE_I64)
DC_ARG_SCALAR_HELPER_(u64, uint64_t, DC_DTYPE_U64)
DC_ARG_SCALAR_HELPER_(f32, float, DC_DTYPE_F32)
DC_ARG_SCALAR_HELPER_(f64, double, DC_DTYPE_F64)
#undef DC_ARG_SCALAR_HELPER_

//===-- Dispatch --------------------------------------------------------===//

// The grid of a dispatch. |global| counts work-items per dimension and
// must be a multiple of |local| where |local| is given; a zero |local|
// (all three) lets the engine choose the work-group size.
typedef struct dc_dispatch_t {
  uint32_t dims;     // 1, 2 or 3
  size_t global[3];
  size_t offset[3];  // get_global_offset()
  size_t local[3];
} dc_dispatch_t;

// Runs |kernel| over |dispatch| with |args| (one per kernel argument, in
// order) and returns when every work-item has finished. Everything is
// checked before anything runs: the argument count and each argument's
// kind and type (a struct's size) against the kernel's reflection, that
// buffers live on the kernel's device, the grid (non-empty, at most 3
// dimensions, divisible by the group), the group size against the device
// and the kernel, the
// local memory against the device, and, for a kernel that uses
// dc_grid_sync(), that the device can keep every work-group of the grid
// resident at once (at most max_cooperative_groups groups).
// Returns DC_ERR_INVALID_ARGUMENT (naming the kernel and the argument) for
// any of those, DC_ERR_OUT_OF_RANGE when bounds checking caught an access
// outside a buffer (naming the argument, the index and the source line),
// or a failure of the device.
DC_API dc_status_t dc_kernel_dispatch(dc_kernel_t* kernel,
                                      const dc_dispatch_t* dispatch,
                                      const dc_arg_t* args, size_t arg_count);

// Gets the work-group size that autotuning found fastest for |kernel| over
// a grid of |dims| dimensions sized |global| (see the autotune context
// parameter) into |out_local| (3 entries).
// Returns DC_ERR_NOT_FOUND until every candidate size has run once.
DC_API dc_status_t dc_kernel_tuned_group_size(dc_kernel_t* kernel,
                                              uint32_t dims,
                                              const size_t* global,
                                              size_t* out_local);

//===-- Native kernels --------------------------------------------------===//
//
// A host C function can run as a kernel on the CPU device, through the same
// dispatch path: arguments are checked against the description given here,
// the grid is split into work-groups, and the groups run on the worker
// pool, one call of the function per group.

// The work-group a native kernel is called for.
typedef struct dc_native_group_t {
  uint32_t dims;
  size_t group_id[3];
  size_t local_size[3];
  size_t global_size[3];
  size_t first_global_id[3];  // global id of the group's work-item 0
  uint32_t thread_index;      // the worker running it (see dc_range_fn_t)
} dc_native_group_t;

// Runs one work-group. |args| holds one pointer per argument: the first
// element of a buffer, the bytes of a value, or the start of a __local
// argument's memory (private to this call). A failure stops the dispatch
// and is reported by it with this function's status and message.
typedef dc_status_t (*dc_native_kernel_fn_t)(void* user_data,
                                             const dc_native_group_t* group,
                                             void* const* args);

typedef struct dc_native_kernel_params_t {
  const char* name;               // shown in messages; required
  dc_native_kernel_fn_t fn;       // required
  void* user_data;
  // One description per argument: name, kind, dtype and vector_width (and
  // is_const) are read; type_name, address_space and size are derived.
  const dc_kernel_arg_info_t* args;
  size_t arg_count;
} dc_native_kernel_params_t;

// Creates a native kernel on |device| (which must be the CPU) and returns
// a reference to it; release it with dc_kernel_release().
// Returns DC_ERR_INVALID_ARGUMENT for a missing name or function or a bad
// argument description, DC_ERR_UNSUPPORTED if |device| cannot run host
// code.
DC_API dc_status_t dc_kernel_create_native(
    dc_device_t* device, const dc_native_kernel_params_t* params,
    dc_kernel_t** out_kernel);

DC_EXTERN_C_END

#endif  // DC_KERNEL_H_

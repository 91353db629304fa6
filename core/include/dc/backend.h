// dc/backend.h: the interface a device backend implements. Backend authors
// only; applications never need this header.
// SPDX-License-Identifier: MIT
#ifndef DC_BACKEND_H_
#define DC_BACKEND_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/allocator.h"
#include "dc/buffer.h"
#include "dc/context.h"
#include "dc/device.h"
#include "dc/kernel.h"
#include "dc/status.h"
#include "dc/stream.h"

DC_EXTERN_C_BEGIN

//===-- How a backend plugs in ------------------------------------------===//
//
// A backend is a name and an enumerate function. When a context is created
// it calls each enabled backend's enumerate, which finds the backend's
// devices (a missing driver is not an error: it finds none, and logs why at
// debug level) and hands each to dc_context_add_device().
//
// A device is a struct of the backend's own whose first member is a
// dc_device_t, set up with dc_device_initialize(). Everything above this
// interface (buffers and pools, streams, events and graphs, retries and
// breakers, validation) is shared code that reaches the hardware only
// through the vtable. Validation happens before the vtable is called: a backend
// function receives only arguments that were already checked (non-NULL,
// in range, sizes that fit its allocations).
//
// The CPU backend (core/src/backends/cpu) is the reference to copy.

//===-- Building kernels --------------------------------------------------===//
//
// The engine's front end parses and checks every program before a backend
// sees it: the preprocessor, the types and struct layouts, the language's
// rejections, each kernel's reflection (dc_program_kernel, dc_kernel_info,
// dc_kernel_arg_info). A backend's program_build then compiles what the
// build describes. It reads the program in a form lowered from the typed
// tree for its compiler (dc_program_build_lower), so rejections, layouts
// and checked mode behave as on every other device; compile errors go to
// the build log with dc_program_build_error; what it made goes on the
// program and its kernels with dc_program_set_backend_data and
// dc_kernel_bind. docs/backends.md walks through it.

// Options of a build that change the code, parsed from its text.
typedef struct dc_build_flags_t {
  bool fast_math;        // -cl-fast-relaxed-math, -cl-unsafe-math-optimizations
  bool finite_math;      // -cl-finite-math-only
  bool no_signed_zeros;  // -cl-no-signed-zeros
  bool mad_enable;       // -cl-mad-enable
  bool opt_disable;      // -cl-opt-disable
  bool opt_max;          // -dc-O3
  // -dc-no-coarsening: every work-item runs as a thread of its own (no
  // DC_KERNEL_DIALECT_CUDA_C coarsened entries are launched).
  bool no_coarsening;
} dc_build_flags_t;

// A program being built: the input of program_build. Every field is
// read-only and valid during the call only.
typedef struct dc_program_build_t {
  // The program, with its kernels and their reflection filled in
  // (dc_program_kernel_count, dc_program_kernel): program_build attaches
  // its results to it.
  dc_program_t* program;
  const char* name;        // the program's name, as messages and #line say it
  const char* source;      // as given, source_length bytes (not terminated)
  size_t source_length;
  const char* options;     // as given ("" if none)
  dc_build_flags_t flags;
  bool checked;  // build in checked mode (-dc-checked, or the context's
                 // checked_kernels): bounds, interrupts, time limits
  // The typed tree and diagnostics, the compiler's own
  // (core/src/kernel/program_internal.h): dc_program_build_lower reads
  // them; backends read the lowered form.
  struct dc__build_tree_t* tree;
} dc_program_build_t;

// Forms a program can be lowered to. Each says how a kernel is called;
// every dialect lowers a program whole, its kernels in the order of
// dc_program_kernel, and keeps the user's lines (#line directives naming
// the build's name).
typedef enum dc_kernel_dialect_e {
  // OpenCL C 1.2, for a driver's compiler. Each kernel K becomes
  //
  //   __kernel void <entry>(...K's parameters...,
  //       [__local ulong16* dc_lmem,]     // when K has __local pointers
  //       [dc_len_K dc_len,               // checked mode only:
  //        volatile __global uint* dc_stop_word,
  //        __global dc_kernel_fault_t* dc_fault,
  //        dc__slice_t dc_slice])
  //
  // with K's parameters in order, where a __global or __constant buffer is
  // two arguments, a pointer to its allocation and a ulong byte offset
  // into it; a __local pointer a ulong byte offset into dc_lmem (one block
  // holding the group's __local arguments in order, each aligned to 128
  // bytes; typed so that drivers align the block itself to 128 bytes); a
  // value its bytes (bool as uchar, size_t and ptrdiff_t as 64-bit
  // integers). In checked mode dc_len holds every argument's size
  // in bytes (ulong n[P], P the parameter count, at least 1), dc_stop_word
  // the word that stops the dispatch when the host sets it to nonzero (the
  // kernel reads it while it runs: the write must reach a running kernel,
  // which on a discrete GPU means a command on another queue), and
  // dc_fault the fault record (dc_kernel_fault_t's layout) followed by
  // scratch: checked_state_size bytes in all, zeroed before the dispatch.
  // A checked dispatch may be enqueued in slices, boxes of whole groups,
  // each with the global offset of its first work-item: dc_slice is
  // { ulong offset[3], group_base[3], groups[3]; }, the dispatch's own
  // global offset, the slice's first group and the dispatch's groups, from
  // which the kernel's get_group_id, get_num_groups, get_global_size and
  // get_global_offset answer for the whole dispatch.
  // OpenCL C 1.2 cannot synchronise a grid: dc_grid_sync() lowers to
  // nothing, and a device that builds this dialect reports
  // max_cooperative_groups 0, so that the engine refuses to dispatch such
  // a kernel (the program's other kernels run).
  DC_KERNEL_DIALECT_OPENCL_C = 1,
  // C (gcc >= 12 or clang >= 14, -std=gnu11) for the host's compiler, to
  // be built into a shared object whose kernels run on the engine's
  // threads; dc/kernel_abi_c.h spells the calling convention, and is the
  // start of the text. Kernel K exports dc_k_K_run (its entry),
  // dc_k_K_scratch_size and dc_k_K_local_size. run runs a range of K's
  // work-groups on the calling thread, each group's work-items in turn, as
  // the kernel's execution says ("loop": no barrier; "regions" or
  // "fibers": the group's work-items run together through its barriers).
  // It takes the vtable dispatch's |args| and |lengths| as they are (a
  // buffer's host pointer, a value's bytes, a __local argument's offset
  // into the group's local memory). In checked mode every access is
  // bounded by |lengths| and the program's own objects, loops call
  // launch->poll, and the first fault (or stop) fills the fault record
  // and ends the call. dc_grid_sync() calls launch->grid_sync, which the
  // backend sets for a kernel that uses it, running every group of the
  // dispatch at once, one thread each.
  DC_KERNEL_DIALECT_C = 2,
  // CUDA C++ (C++17) for NVRTC with -default-device. The text includes
  // the prelude by name (#include "<header_name>", |header| its text, for
  // nvrtcCreateProgram's headers). Each kernel K becomes
  //
  //   extern "C" __global__ void dc_k_K(const dc__launch_t record,
  //       [const dc__lengths_t<P> dc_len,]   // checked mode only
  //       ...K's parameters...)
  //
  // where record is { uint32 dims; uint64 offset[3]; uint64 watchdog_ns;
  // uint64 group_base[3]; uint64 groups[3]; } (the dispatch's dimensions,
  // its global offset, in checked mode the kernel time limit in ns, 0:
  // none, which every work-item keeps on its own clock, then the first
  // group of the slice this launch runs and the dispatch's groups: a
  // checked dispatch may be launched in slices, boxes of whole groups,
  // and its work-item functions answer for the whole dispatch); a buffer is its device address, a __local pointer a
  // 64-bit byte offset into the block's dynamic shared memory, which
  // holds the group's __local arguments (the kernel's own __shared__
  // variables are static); a value its bytes. In checked mode dc_len
  // holds every argument's size in bytes (uint64 n[P], P the parameter
  // count, at least 1). A program with a kernel that synchronises its
  // grid has the global dc__grid { uint32 arrived, generation, exited,
  // broken; }, to zero before each launch of such a kernel, which is
  // cooperative (cuLaunchCooperativeKernel); broken is nonzero after it
  // when some groups did not reach a dc_grid_sync() that others did. A
  // checked program has the global dc__fault (dc_kernel_fault_t's layout),
  // to zero before each launch and read after it, and the global uint32
  // dc__stop, zeroed before each launch too: its loops' polls read it,
  // and a nonzero value (a DC_KERNEL_FAULT_* kind the host writes while
  // the kernel runs, through a stream of its own) ends them as a fault of
  // that kind at the poll's line. An unchecked kernel
  // whose work-items call no work-item function but get_global_id and
  // get_work_dim, no barrier, fence, async copy or other kernel, and use
  // no __local memory also has dc_k4_K, with the same parameters but its
  // pointers restrict: each thread runs 4 work-items of the launch's last
  // dimension, so it takes a grid of a quarter of the groups in that
  // dimension (thread t of group g runs items (4 g + k) * size + t), and
  // only buffers that do not overlap.
  DC_KERNEL_DIALECT_CUDA_C = 3,
} dc_kernel_dialect_t;

// One kernel of a lowered program.
typedef struct dc_lowered_kernel_t {
  const char* entry;     // its function's name in the text
  // It reaches a barrier, itself or through the helpers it calls (the
  // kernel's reflection counts only its own): its work-groups must run
  // their work-items together.
  bool reaches_barrier;
  // Bytes of the __local variables it declares, each at its alignment,
  // for a driver that does not say (CL_KERNEL_LOCAL_MEM_SIZE may be 0);
  // the checked-mode scratch is not counted.
  size_t local_size;
  // How its work-items run, for dc_kernel_binding_t.execution:
  // DC_KERNEL_DIALECT_C's "loop", "regions" or "fibers"; NULL in the
  // other dialects, where the device runs every work-item itself.
  const char* execution;
} dc_lowered_kernel_t;

// A program lowered to one dialect; it lives as long as the build.
typedef struct dc_lowered_program_t {
  // NUL-terminated; everything it needs is included, but for |header|.
  const char* text;
  size_t length;
  // The header the text includes by name, for a compiler that takes
  // headers apart (DC_KERNEL_DIALECT_CUDA_C's prelude); NULL for none.
  const char* header_name;
  const char* header;  // its text, NUL-terminated
  size_t kernel_count;  // as dc_program_kernel_count, in the same order
  const dc_lowered_kernel_t* kernels;
  // DC_KERNEL_DIALECT_OPENCL_C in checked mode (0 otherwise): the bytes
  // of the state buffer behind dc_fault (the fault record, then scratch),
  // and of the __local scratch each kernel declares itself (part of its
  // static __local size).
  size_t checked_state_size;
  size_t checked_local_scratch;
} dc_lowered_program_t;

// The record a checked kernel writes at its first fault (in the state
// buffer of DC_KERNEL_DIALECT_OPENCL_C, in dc__fault of
// DC_KERNEL_DIALECT_CUDA_C; dc_c_fault_t has its layout). |set| is nonzero
// once written.
typedef struct dc_kernel_fault_t {
  int32_t set;
  uint32_t kind;  // dc_kernel_fault_kind_t
  uint32_t arg;   // the argument (DC_KERNEL_FAULT_OBJECT: other memory)
  uint32_t line;  // in the program's source; 0: the kernel's own line
                  // (a stop outside any poll: between slices)
  int64_t index;
  uint64_t length;
  uint64_t size;
} dc_kernel_fault_t;

typedef enum dc_kernel_fault_kind_e {
  DC_KERNEL_FAULT_INDEX = 0,  // |index| into an array of |length| elements
  DC_KERNEL_FAULT_POINTER,    // |size| bytes at byte |index| of an
                              // allocation of |length| bytes
  DC_KERNEL_FAULT_STOPPED,    // interrupted (dc_context_interrupt)
  DC_KERNEL_FAULT_WATCHDOG,   // ran past the kernel time limit
} dc_kernel_fault_kind_t;
#define DC_KERNEL_FAULT_OBJECT 0xFFFFFFFFu

// Lowers the program of |build| to |dialect|. Call only from program_build.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, a build that is not
// in progress or an unknown dialect, DC_ERR_COMPILE (with the reasons in
// the build log) for what the dialect cannot express, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dc_program_build_lower(dc_program_build_t* build,
                                          dc_kernel_dialect_t dialect,
                                          dc_lowered_program_t* out_lowered);

// Adds an error to the build log of |build|, as "name:line: error: ..."
// (|line| 0: no line), and returns DC_ERR_COMPILE for program_build to
// return. Use it for what the device's compiler rejected; the message is
// formatted as printf's. NULL |build| or |format|: DC_ERR_INVALID_ARGUMENT.
DC_API dc_status_t dc_program_build_error(dc_program_build_t* build,
                                          uint32_t line, const char* format,
                                          ...) DC_PRINTF_LIKE(3, 4);

// Appends |text| as it is to the build log of |build|: the device
// compiler's own output, whose lines already name the program and line
// (the lowered text's #line directives). NULL |build| or |text|, or a
// build not in progress: DC_ERR_INVALID_ARGUMENT.
DC_API dc_status_t dc_program_build_append_log(dc_program_build_t* build,
                                               const char* text);

// Sets |*out_fingerprint| to a fingerprint of the front end and the
// lowering to |dialect|, their preludes included, taken when the library
// was built (a hexadecimal digest). A compile cache keyed by it, the
// build's options and its source finds its entry without lowering the
// program. Returns DC_ERR_INVALID_ARGUMENT for a NULL |out_fingerprint|
// or an unknown dialect.
DC_API dc_status_t dc_kernel_dialect_fingerprint(dc_kernel_dialect_t dialect,
                                                 const char** out_fingerprint);

// What a backend's build attaches to one kernel.
typedef struct dc_kernel_binding_t {
  void* data;  // the backend's, read back with dc_kernel_backend_data
  // How the kernel runs, for dc_kernel_info().execution: a string that
  // outlives the program ("opencl").
  const char* execution;
  // Bytes of __local memory the kernel declares itself, as the device's
  // compiler counts them (dc_kernel_info().static_local_size).
  size_t static_local_size;
  // It reaches a barrier through a helper (dc_lowered_kernel_t).
  bool reaches_barrier;
  // The most work-items per group the compiled kernel takes, when its
  // compiler says less than the device's max_work_group_size (0: the
  // device's). The engine's group choices and checks respect it.
  size_t max_group_size;
} dc_kernel_binding_t;

// Attaches |binding| to |kernel|, a kernel of the program being built.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a NULL execution.
DC_API dc_status_t dc_kernel_bind(dc_kernel_t* kernel,
                                  const dc_kernel_binding_t* binding);
// The data dc_kernel_bind attached (NULL: none, or a NULL kernel).
DC_API void* dc_kernel_backend_data(const dc_kernel_t* kernel);
// The backend's data of the whole program, set during its build and read
// back by program_destroy and dispatches (NULL: none).
DC_API void dc_program_set_backend_data(dc_program_t* program, void* data);
DC_API void* dc_program_backend_data(const dc_program_t* program);

// The status a checked dispatch of |kernel| ends with after |fault| (a
// record the kernel set): DC_ERR_OUT_OF_RANGE naming the argument, line
// and index, DC_ERR_CANCELLED, or DC_ERR_DEADLINE_EXCEEDED, with |fn| (the
// function the dispatch came through) in the message.
DC_API dc_status_t dc_kernel_fault_status(const dc_kernel_t* kernel,
                                          const char* fn,
                                          const dc_kernel_fault_t* fault);

// What dispatch needs of a native kernel (dc_kernel_create_native), which
// runs on a CPU device without a build: its function, its user data and
// its arguments' descriptions (borrowed from the kernel, |arg_count| of
// them, in order).
typedef struct dc_native_kernel_t {
  dc_native_kernel_fn_t fn;
  void* user_data;
  const dc_kernel_arg_info_t* args;
  size_t arg_count;
} dc_native_kernel_t;

// Fills |out_native| when |kernel| is a native kernel and returns true;
// returns false, |out_native| cleared, for a kernel of a built program or
// a NULL or released kernel (and for a NULL |out_native|).
DC_API bool dc_kernel_native(const dc_kernel_t* kernel,
                             dc_native_kernel_t* out_native);

// The geometry of one dispatch, checked and completed by the core: every
// dimension up to 3 is filled (unused ones are 1 work-item, offset 0), and
// global[d] == local[d] * groups[d].
typedef struct dc_launch_t {
  uint32_t dims;
  size_t global[3];
  size_t offset[3];
  size_t local[3];
  size_t groups[3];
  size_t local_memory;  // bytes of __local memory per group, all of it
  // For kernels compiled in checked mode, which poll while they run: how
  // long the dispatch may run (0: no limit), and the context's interrupt
  // count with its value when the dispatch started (it stops once the
  // count moves on: dc_context_interrupt). Read the count atomically.
  uint64_t time_limit_ns;
  const unsigned* interrupts;
  unsigned interrupts_at_start;
} dc_launch_t;

// Slices of a checked dispatch. A GPU's checked work-items poll only in
// loops, and a queued launch cannot be called back, so a backend runs a
// checked dispatch as slices, boxes of whole work-groups, one after the
// other, and stops between two once dc_launch_stop_reason says so: a vast
// grid of loop-free work-items stops too. The first slice holds about
// 2^18 work-items (a GPU's worth of resident threads); each that took
// less than 5 ms (dc_launch_slicer_took) makes the next up to 16 times
// larger, so that a long dispatch soon runs in slices of several
// milliseconds and a stop comes within a slice or two. The kernel must
// still see the whole dispatch: the dialects above pass each slice's
// first group and the dispatch's groups.
typedef struct dc_launch_slice_t {
  size_t first[3];   // the slice's first group, per dimension
  size_t groups[3];  // its groups, per dimension
} dc_launch_slice_t;

// The walk over a launch's slices (its fields are the slicer's own). A
// slice spans the grid in the dimensions below |dim|, |span| groups in
// |dim| and one group in those above.
typedef struct dc_launch_slicer_t {
  const dc_launch_t* launch;
  uint64_t start_ns;  // when dc_launch_slicer_init ran (CLOCK_MONOTONIC, ns)
  size_t grid[3];     // the launch's groups
  size_t next[3];     // the next slice's first group
  int dim;
  size_t span;
  bool done;  // every group has had its slice
} dc_launch_slicer_t;

#define DC_LAUNCH_SLICE_FIRST_ITEMS ((size_t)1 << 18)
#define DC_LAUNCH_SLICE_TARGET_NS ((uint64_t)10000000)

// Starts the walk over |launch|'s groups, which must outlive it (NULL:
// a walk without slices). Every function below takes a NULL slicer as
// one without slices, that never stops.
DC_API void dc_launch_slicer_init(dc_launch_slicer_t* slicer,
                                  const dc_launch_t* launch);
// Fills |out| with the next slice; false when every group has had one.
DC_API bool dc_launch_slicer_next(dc_launch_slicer_t* slicer,
                                  dc_launch_slice_t* out);
// Tells the slicer that a slice took |elapsed_ns|: under half of
// DC_LAUNCH_SLICE_TARGET_NS makes the next larger, doubled until it would
// take about that half, at most 16 times.
DC_API void dc_launch_slicer_took(dc_launch_slicer_t* slicer,
                                  uint64_t elapsed_ns);
// Whether the dispatch must stop now: DC_KERNEL_FAULT_STOPPED once the
// context was interrupted since it started, DC_KERNEL_FAULT_WATCHDOG
// past its time limit (counted from dc_launch_slicer_init), -1 otherwise.
DC_API int dc_launch_stop_reason(const dc_launch_slicer_t* slicer);
// Pauses the host thread between two looks at a running slice it began
// watching at |since_ns| (CLOCK_MONOTONIC in ns, the clock of the
// slicer's start_ns). For a device with memory of its own the thread
// spins for the first DC_LAUNCH_WATCH_BUSY_NS, then yields the core
// between looks up to DC_LAUNCH_WATCH_SPIN_NS (slices often end within
// tens of microseconds, which a sleep would overshoot), then sleeps
// DC_LAUNCH_WATCH_SLEEP_NS; a device that runs on the host's cores
// (|shares_cores|) only sleeps, leaving them to it.
DC_API void dc_launch_watch_pause(uint64_t since_ns, bool shares_cores);
#define DC_LAUNCH_WATCH_BUSY_NS ((uint64_t)20000)
#define DC_LAUNCH_WATCH_SPIN_NS ((uint64_t)1000000)
#define DC_LAUNCH_WATCH_SLEEP_NS ((uint64_t)200000)

// Handles of the optional device objects. Each backend defines the struct
// behind them (or casts its own); the core only passes them back.
typedef struct dc_device_queue_t dc_device_queue_t;
typedef struct dc_device_event_t dc_device_event_t;
typedef struct dc_device_graph_t dc_device_graph_t;

// Memory: the one table every device has. Memory handles are opaque to
// the core, which adds byte offsets to them (buffer views): a host pointer
// on the CPU, a device address on a GPU, an encoded (buffer, offset) pair
// where the driver has no addresses (OpenCL).
typedef struct dc_device_memory_ops_t {
  // Obtains |size| bytes (a multiple of 256) aligned to at least 64 bytes.
  // Returns DC_ERR_OUT_OF_MEMORY if the device has none to give (the pool
  // then frees its cache and tries once more); any other failure reaches
  // the caller as the backend reported it.
  dc_status_t (*allocate)(dc_device_t* device, size_t size,
                          dc_storage_mode_t mode, void** out_memory);
  // Returns memory obtained from allocate with the same |size| and |mode|.
  void (*deallocate)(dc_device_t* device, void* memory, size_t size,
                     dc_storage_mode_t mode);
  // Returns a host pointer to |memory|, or NULL if memory of |mode| is not
  // visible to the host.
  void* (*host_pointer)(dc_device_t* device, void* memory,
                        dc_storage_mode_t mode);
  // Byte transfers. |offset|s are in bytes into the device memory handle.
  dc_status_t (*write)(dc_device_t* device, void* memory, size_t offset,
                       const void* src, size_t size);
  dc_status_t (*read)(dc_device_t* device, const void* memory, size_t offset,
                      void* dst, size_t size);
  // Repeats the |pattern_size|-byte |pattern| |size| / |pattern_size| times.
  dc_status_t (*fill)(dc_device_t* device, void* memory, size_t offset,
                      size_t size, const void* pattern, size_t pattern_size);
  // Copies between two allocations of this device; the ranges may overlap.
  dc_status_t (*copy)(dc_device_t* device, void* dst, size_t dst_offset,
                      const void* src, size_t src_offset, size_t size);
} dc_device_memory_ops_t;

// Kernels (optional: a device without them fails program builds with
// DC_ERR_UNSUPPORTED). program_build, program_destroy and dispatch are
// required in the table; the rest may be NULL.
typedef struct dc_device_kernel_ops_t {
  // Compiles the program |build| describes and attaches the backend's
  // result to its program and kernels. Compile errors go to the build's
  // diagnostics (DC_ERR_COMPILE).
  dc_status_t (*program_build)(dc_device_t* device, dc_program_build_t* build);
  // Frees what program_build attached to |program|.
  void (*program_destroy)(dc_device_t* device, dc_program_t* program);
  // Runs |kernel| over |launch| and returns when it has finished. |args|
  // holds one pointer per argument: the device memory handle of a buffer
  // (offset included), the bytes of a value, or, for a __local argument,
  // its byte offset into the group's local memory cast to a pointer.
  // |lengths| holds each buffer argument's size in bytes, and each
  // __local argument's (what checked kernels bound their pointers by).
  dc_status_t (*dispatch)(dc_device_t* device, dc_kernel_t* kernel,
                          const dc_launch_t* launch, void* const* args,
                          const size_t* lengths);
  // Optional. Copies the backend's build counters (NULL: all zero).
  void (*program_cache_stats)(dc_device_t* device,
                              dc_program_cache_stats_t* out_stats);
  // Optional (NULL: none). The work-group size, in work-items, the device
  // suggests for |kernel| over a grid of |work_items| whose groups each
  // have |local_memory| bytes of __local memory, or 0 for none. When a
  // dispatch gives no group size, the engine takes the largest size up to
  // this one that divides the grid (a GPU asks its occupancy calculator),
  // instead of its own choice, which is made for CPU worker threads.
  size_t (*preferred_group_size)(dc_device_t* device,
                                 const dc_kernel_t* kernel,
                                 size_t work_items, size_t local_memory);
  // Optional, both or none. C = A * B for row-major f32 matrices, m x k
  // times k x n, whose memory handles (offsets included) are |a|, |b| and
  // |c|, through a vendor library; returns when it has finished.
  // dc_builtin_matmul() uses it before the built-in kernel, which it runs
  // instead when this returns DC_ERR_UNSUPPORTED (no library).
  // |matmul_library| names the library ("cublas"), NULL when it is missing.
  dc_status_t (*matmul)(dc_device_t* device, const void* a, const void* b,
                        void* c, size_t m, size_t n, size_t k);
  const char* (*matmul_library)(dc_device_t* device);
} dc_device_kernel_ops_t;

// Queues (optional, with kernels; every function required in the table):
// ordered queues of device work, such as CUDA streams or OpenCL command
// queues. Without them every dispatch waits. The scheduler gives each
// engine stream on the device a queue of its own and puts runs of
// consecutive dispatches on it without waiting for each, then waits once
// with finish before anything that depends on them runs (the stream's
// next other command, an event record, the end of the run), so a stream's
// commands still finish in order.
typedef struct dc_device_queue_ops_t {
  // Creates a queue for work of |priority|.
  dc_status_t (*create)(dc_device_t* device, dc_priority_t priority,
                        dc_device_queue_t** out_queue);
  // Destroys a queue with nothing left on it.
  void (*destroy)(dc_device_t* device, dc_device_queue_t* queue);
  // As the kernel table's dispatch, but returns once the launch is on
  // |queue|. A launch the device refuses fails here; a failure while the
  // kernel runs shows in finish.
  dc_status_t (*dispatch)(dc_device_t* device, dc_device_queue_t* queue,
                          dc_kernel_t* kernel, const dc_launch_t* launch,
                          void* const* args, const size_t* lengths);
  // Returns when everything on |queue| has finished, with the first
  // failure of that work.
  dc_status_t (*finish)(dc_device_t* device, dc_device_queue_t* queue);
  // Queued copies (optional; NULL: a stream's copies run on the host
  // between its queued dispatches). Each returns once the copy is on
  // |queue|, behind the work queued there so far; a failure while it
  // runs shows in finish. copy: as the memory table's copy, between two
  // allocations of the device, or two ranges of one that do not overlap.
  dc_status_t (*copy)(dc_device_t* device, dc_device_queue_t* queue,
                      void* dst, size_t dst_offset, const void* src,
                      size_t src_offset, size_t size);
  // As the pinning table's write_pinned and read_pinned (the two go
  // together, and only with a pinning table): |host| lies in memory this
  // backend pinned, which the engine keeps pinned and alive until the
  // queue has finished the copy.
  dc_status_t (*write_pinned)(dc_device_t* device, dc_device_queue_t* queue,
                              void* memory, size_t offset, const void* host,
                              size_t size);
  dc_status_t (*read_pinned)(dc_device_t* device, dc_device_queue_t* queue,
                             const void* memory, size_t offset, void* host,
                             size_t size);
} dc_device_queue_ops_t;

// Events (optional, with queues; every function required in the table):
// markers on a device queue that another queue of the same device can
// wait for without the host (CUDA events, cl_event). When a stream records
// an engine event right after its dispatches, the scheduler also records
// the event's marker on the stream's queue; a stream of the same device
// that waits for that record then waits on the device and goes on queuing
// its dispatches. The engine event still completes on the host
// (docs/execution.md).
typedef struct dc_device_event_ops_t {
  dc_status_t (*create)(dc_device_t* device, dc_device_event_t** out_event);
  void (*destroy)(dc_device_t* device, dc_device_event_t* event);
  // Records |event| on |queue|, after the work queued on it so far; a
  // later record replaces this one for waits queued after it.
  dc_status_t (*record)(dc_device_t* device, dc_device_queue_t* queue,
                        dc_device_event_t* event);
  // Makes the work queued on |queue| from now on wait until the device
  // has passed the latest record of |event| (as of this call).
  dc_status_t (*wait)(dc_device_t* device, dc_device_queue_t* queue,
                      dc_device_event_t* event);
} dc_device_event_ops_t;

// Graphs (optional, with kernels; every function required in the table):
// a fixed set of dispatches with their dependencies, recorded once and run
// whole by the device (CUDA graphs). Without them graphs run op by op.
// dc_graph_exec_run() replays a graph through one when every op is a
// dispatch on this device (docs/graphs.md says when exactly).
typedef struct dc_device_graph_ops_t {
  // Records |count| dispatches: dispatch i is |kernels|[i] over
  // |launches|[i] with |args|[i] and |lengths|[i] (as for dispatch), and
  // runs after dispatches deps[dep_first[i] .. dep_first[i + 1]), all
  // below i. The argument values are copied. Returns DC_ERR_UNSUPPORTED
  // when the device cannot record one of the dispatches (the engine then
  // runs the graph op by op, and does not ask again).
  dc_status_t (*create)(dc_device_t* device, size_t count,
                        dc_kernel_t* const* kernels,
                        const dc_launch_t* launches, void* const* const* args,
                        const size_t* const* lengths,
                        const uint32_t* dep_first, const uint32_t* deps,
                        dc_device_graph_t** out_graph);
  // Runs the graph once and returns when it has finished. On a failure,
  // |*out_started| says whether any of it may have run (false: the device
  // refused it before anything ran).
  dc_status_t (*run)(dc_device_t* device, dc_device_graph_t* graph,
                     bool* out_started);
  void (*destroy)(dc_device_t* device, dc_device_graph_t* graph);
} dc_device_graph_ops_t;

// Peer copies (optional; copy required in the table, direct optional).
typedef struct dc_device_peer_ops_t {
  // Copies |size| bytes from memory of |src_device| to memory of
  // |dst_device|, two different devices with this vtable (handles and
  // offsets as for the memory table's copy), and returns when it has
  // finished. dc_buffer_copy() uses it between such devices instead of
  // staging the bytes through host memory with read and write. With
  // |out_seconds| (else NULL) it stores how long the copy took on the
  // device, for dc_device_peer()'s measurement.
  dc_status_t (*copy)(dc_device_t* dst_device, void* dst, size_t dst_offset,
                      dc_device_t* src_device, const void* src,
                      size_t src_offset, size_t size, double* out_seconds);
  // Optional (NULL: never direct). Whether copy moves bytes from |from| to
  // |to| device to device (peer access) rather than through host memory
  // that its driver stages.
  bool (*direct)(dc_device_t* from, dc_device_t* to);
} dc_device_peer_ops_t;

// Pinning (optional; every function required in the table): page-locking
// host memory so that this backend's devices move it by DMA at the bus's
// speed, without staging it (cuMemHostRegister). The engine pins the
// pool blocks of host-visible buffers (a CPU device's) when a copy of at
// least 1 MiB between them and such a device happens, keeps them pinned
// while its pool caches them, and unpins them before they are freed
// (docs/c/buffers.md, "dc_buffer_copy"). A pin counts for every device of
// the backend, as a portable registration does.
typedef struct dc_device_pinning_ops_t {
  // Pins [host, host + size). Returns DC_ERR_OUT_OF_MEMORY when the
  // system refuses to lock more memory (the engine then stages the copy).
  dc_status_t (*pin)(dc_device_t* device, void* host, size_t size);
  // Undoes pin(|host|, |size|), made through any device of the backend.
  void (*unpin)(dc_device_t* device, void* host, size_t size);
  // As the memory table's write and read, with |host| inside memory this
  // backend pinned: straight between it and the device, no staging.
  dc_status_t (*write_pinned)(dc_device_t* device, void* memory,
                              size_t offset, const void* host, size_t size);
  dc_status_t (*read_pinned)(dc_device_t* device, const void* memory,
                             size_t offset, void* host, size_t size);
} dc_device_pinning_ops_t;

// A device's operations: lifetime, the memory table every device has, and
// one table per optional capability, NULL where the device lacks it.
// dc_device_initialize() checks that each table present is complete.
typedef struct dc_device_vtable_t {
  // Frees the backend's device. Called once, when the context is
  // destroyed, after every buffer is gone.
  void (*destroy)(dc_device_t* device);
  // Optional (NULL: never). Whether a failure broke the device's driver
  // state for the rest of the process, as a CUDA sticky error does (the
  // driver recovers only in a new process). dc_device_reset_health()
  // refuses such a device. Thread-safe.
  bool (*broken)(dc_device_t* device);
  const dc_device_memory_ops_t* memory;  // required
  const dc_device_kernel_ops_t* kernels;
  const dc_device_queue_ops_t* queues;   // needs kernels
  const dc_device_event_ops_t* events;   // needs queues
  const dc_device_graph_ops_t* graphs;   // needs kernels
  const dc_device_peer_ops_t* peer;
  const dc_device_pinning_ops_t* pinning;
} dc_device_vtable_t;

// The part of every device that the core owns. Backends embed it first in
// their own struct and treat every field as read-only; |core| is the
// engine's own state of the device (its memory pool, its built-in
// kernels), opaque to backends.
struct dc_device_t {
  const dc_device_vtable_t* vtable;
  dc_context_t* context;  // borrowed: the context owns the device
  dc_device_info_t info;
  struct dc__device_core_t* core;  // made by dc_context_add_device()
};

// Fills the core part of |device|: its vtable, context and capabilities
// (copied). Call before dc_context_add_device().
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers, a vtable without
// destroy or memory, a table missing a required function, a table whose
// prerequisite is absent (events without queues), or an empty device name.
DC_API dc_status_t dc_device_initialize(dc_device_t* device,
                                        const dc_device_vtable_t* vtable,
                                        dc_context_t* context,
                                        const dc_device_info_t* info);

// Adds |device| to |context| and gives it its memory pool. Call only from
// the backend's enumerate function, while the context is being created.
// Takes ownership: on success the context destroys the device; on failure
// the caller still owns it.
// Returns DC_ERR_INVALID_ARGUMENT for NULL pointers or a device not
// initialised for |context|, DC_ERR_ALREADY_EXISTS if the name is taken,
// DC_ERR_RESOURCE_EXHAUSTED if the context holds its maximum of devices,
// DC_ERR_OUT_OF_MEMORY if its pool cannot be allocated.
DC_API dc_status_t dc_context_add_device(dc_context_t* context,
                                         dc_device_t* device);

// Tells the engine about a failure of |device| that the backend found
// outside a call the engine made and checks (a sticky error seen on a
// path of its own, say): the device's health counts it as a failure with
// |message|, and a failure of the device class (dc_status_class) marks
// the device lost and trips its breaker, as a failed call would. Ignores
// DC_OK, deterministic failures and NULL arguments. Thread-safe.
DC_API void dc_device_report_failure(dc_device_t* device, dc_status_t status,
                                     const char* message);

// Returns the host allocator of |context|, for backend bookkeeping.
DC_API dc_allocator_t dc_context_allocator(const dc_context_t* context);

// Copies |size| bytes from |src| to |dst| (which must not overlap), as a
// backend fills a pinned staging buffer from memory the engine did not
// pin: a large copy is split over |context|'s worker pool, whose threads
// together outrun one thread's memcpy, unless the pool is busy with
// another call; then the calling thread copies alone (it never waits for
// the pool, so it may be called with a device lock held). A NULL context
// copies on the calling thread.
DC_API void dc_context_host_copy(dc_context_t* context, void* dst,
                                 const void* src, size_t size);

// A backend: a name (as DC_DEVICES and dc_context_params_t.backends spell
// it) and the function that finds its devices.
typedef struct dc_backend_t {
  const char* name;
  dc_status_t (*enumerate)(dc_context_t* context, void* user_data);
  void* user_data;
} dc_backend_t;

// Registers a backend for every context created afterwards. The struct is
// copied; its name must stay valid. Thread-safe.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL backend, name or function,
// DC_ERR_ALREADY_EXISTS if the name is registered or reserved ("cpu",
// "cuda", "all"), DC_ERR_RESOURCE_EXHAUSTED past 16 backends.
DC_API dc_status_t dc_backend_register(const dc_backend_t* backend);

DC_EXTERN_C_END

#endif  // DC_BACKEND_H_

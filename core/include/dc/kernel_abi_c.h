// dc/kernel_abi_c.h: how a backend calls kernels lowered to C
// (DC_KERNEL_DIALECT_C, dc/backend.h): the launch record, the fault record
// and the entry points' types. Backend authors only.
//
// The lowering places this file, as text, at the top of every lowered
// program, so the engine and the kernels see one definition. It must stay
// plain C that needs no headers but <stddef.h>.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_ABI_C_H_
#define DC_KERNEL_ABI_C_H_

#include <stddef.h>

// Changes whenever anything here or in the lowering changes the binary
// interface: part of a compile cache's key.
#define DC_C_ABI_VERSION 5

// The dispatch, as every work-item of it sees it. Unused dimensions have
// size 1 and offset 0.
typedef struct dc_c_launch_t {
  unsigned work_dim;
  size_t global_size[3];
  size_t global_offset[3];
  size_t local_size[3];
  size_t num_groups[3];
  // dc_grid_sync(): the group's thread calls grid_sync(grid_sync_ctx) once
  // every work-item of its group has reached it, and returns when every
  // group has (a barrier of the whole grid, with full memory fences). Set
  // by the engine for a kernel that uses it; NULL otherwise.
  void (*grid_sync)(void* ctx);
  void* grid_sync_ctx;
  // Checked kernels call poll(launch) now and then from their loops: a
  // nonzero answer (DC_C_FAULT_STOPPED, DC_C_FAULT_WATCHDOG) ends the
  // dispatch there. NULL: never stop.
  unsigned (*poll)(const struct dc_c_launch_t* launch);
  void* poll_ctx;
} dc_c_launch_t;

// Why a checked dispatch stopped or what it did wrong first (the values
// of dc_kernel_fault_kind_t).
enum {
  DC_C_FAULT_INDEX = 0,  // an array index: |index| of |length| elements
  DC_C_FAULT_POINTER,    // an access of |size| bytes at byte |index| of the
                         // |length|-byte allocation the pointer came from
  DC_C_FAULT_STOPPED,    // launch->poll asked to stop (an interrupt)
  DC_C_FAULT_WATCHDOG,   // launch->poll: the kernel ran past its time limit
};
// The origin of an allocation other than a kernel argument.
#define DC_C_FAULT_OBJECT (~0u)

// The fault record of a checked dispatch, zeroed by the engine before it
// and set by the first fault (dc_kernel_fault_t's layout).
typedef struct dc_c_fault_t {
  int set;
  unsigned kind;     // DC_C_FAULT_*
  unsigned arg;      // kernel argument index, or DC_C_FAULT_OBJECT
  unsigned line;     // source line of the access
  long long index;
  size_t length;
  size_t size;
} dc_c_fault_t;

// Kernel K's entry points in the compiled program are dc_k_K_run, of type
// dc_c_kernel_run_fn, dc_k_K_scratch_size and dc_k_K_local_size (its
// static __local bytes, taking no argument). run runs the work-groups
// group_begin up to group_end (counted with dimension 0 fastest) of
// |launch| on the calling thread: |args| and |lengths| as the vtable's
// dispatch receives them, |local_mem| the group's __local memory (the
// launch's local_memory bytes, 64-byte aligned), |scratch| the thread's
// scratch_size(work-items per group) bytes, |fault| the fault record.
typedef void (*dc_c_kernel_run_fn)(const dc_c_launch_t* launch,
                                   void* const* args, const size_t* lengths,
                                   size_t group_begin, size_t group_end,
                                   char* local_mem, char* scratch,
                                   dc_c_fault_t* fault);
typedef size_t (*dc_c_kernel_size_fn)(size_t work_group_size);

#endif  // DC_KERNEL_ABI_C_H_

// launch_slices.h: a checked dispatch on a GPU, run as slices of its
// work-groups so that the host can stop it between them.
//
// A GPU's checked work-items poll only in loops and at labels, and a
// launch, once queued, cannot be called back: a dispatch of loop-free
// work-items over a vast grid would run to its end however long that
// takes. So the CUDA and OpenCL backends launch such a dispatch in
// slices, each a box of whole work-groups, and look at the time limit and
// the context's interrupt count between them. The first slice holds
// about DC_SLICE_FIRST_ITEMS work-items (a GPU's worth of resident
// threads); one that takes less than half of DC_SLICE_TARGET_NS makes the
// next up to 16 times larger, so that a long dispatch soon runs in slices
// of several milliseconds, each boundary costing the device ~10 us, and a
// stop comes within a slice or two. Every work-item still sees the whole
// dispatch: its group's id is the slice's first group plus its group's id
// within the slice, and the group count is the dispatch's (the kernels
// read both from the slice the backend passes them, dc/backend.h).
// SPDX-License-Identifier: MIT
#ifndef DC_LAUNCH_SLICES_H_
#define DC_LAUNCH_SLICES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/backend.h"
#include "internal.h"

#define DC_SLICE_FIRST_ITEMS ((size_t)1 << 18)
#define DC_SLICE_TARGET_NS ((uint64_t)10000000)

// One slice: its first group and its groups, per dimension.
typedef struct dc__slice_t {
  size_t first[3];
  size_t groups[3];
} dc__slice_t;

// Walks a launch's groups in slices. A slice spans the whole grid in the
// dimensions below |dim|, |span| groups in |dim|, and one group in those
// above.
typedef struct dc__slicer_t {
  size_t grid[3];  // the launch's groups
  size_t next[3];  // the next slice's first group
  int dim;
  size_t span;
  bool done;
} dc__slicer_t;

DC_INTERNAL void dc__slicer_init(dc__slicer_t* s, const dc_launch_t* launch);

// Fills |out| with the next slice; false when every group has had one.
DC_INTERNAL bool dc__slicer_next(dc__slicer_t* s, dc__slice_t* out);

// Tells the slicer that the last slice took |elapsed_ns|: a quick one
// makes the next larger, doubled until it would take about half the
// target, at most 16 times.
DC_INTERNAL void dc__slicer_took(dc__slicer_t* s, uint64_t elapsed_ns);

// Whether the launch must stop now: DC_KERNEL_FAULT_WATCHDOG past its
// time limit (counted from |start_ns|), DC_KERNEL_FAULT_STOPPED once the
// context was interrupted, -1 otherwise.
DC_INTERNAL int dc__launch_stop_reason(const dc_launch_t* launch,
                                       uint64_t start_ns);

#endif  // DC_LAUNCH_SLICES_H_

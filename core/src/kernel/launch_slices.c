// launch_slices.c: the slices of a checked dispatch (dc/backend.h,
// dc_launch_slicer_t), which the CUDA and OpenCL backends run one after
// the other so that the host can stop a dispatch between them, and how
// the host pauses while it watches one (dc_launch_watch_pause).
// SPDX-License-Identifier: MIT
#include <sched.h>
#include <time.h>

#include "dc/backend.h"
#include "internal.h"

// Sets the slice shape for about |items| work-items a slice: whole
// dimensions from the first up while they fit, then a span of the next.
static void shape(dc_launch_slicer_t* s, size_t group_items, size_t items) {
  size_t groups = DC_MAX(items / DC_MAX(group_items, (size_t)1), (size_t)1);
  size_t below = 1;  // groups in a whole box of the dimensions below dim
  s->dim = 0;
  while (s->dim < 2 && s->grid[s->dim] <= groups / below) {
    below *= s->grid[s->dim++];
  }
  s->span = DC_MIN(DC_MAX(groups / below, (size_t)1), s->grid[s->dim]);
}

void dc_launch_slicer_init(dc_launch_slicer_t* s, const dc_launch_t* l) {
  if (s == NULL) return;
  static const dc_launch_t kNone = {0};  // no groups: no slice
  if (l == NULL) l = &kNone;
  size_t group_items = 1;
  s->launch = l;
  s->start_ns = dc__now_ns();
  for (int d = 0; d < 3; ++d) {
    s->grid[d] = l->groups[d];
    s->next[d] = 0;
    group_items *= l->local[d];
  }
  s->done = s->grid[0] == 0 || s->grid[1] == 0 || s->grid[2] == 0;
  s->dim = 0;
  s->span = 1;
  if (!s->done) shape(s, group_items, DC_LAUNCH_SLICE_FIRST_ITEMS);
}

bool dc_launch_slicer_next(dc_launch_slicer_t* s, dc_launch_slice_t* out) {
  if (s == NULL || out == NULL || s->done) return false;
  int k = s->dim;
  for (int d = 0; d < 3; ++d) {
    out->first[d] = s->next[d];
    out->groups[d] = d < k ? s->grid[d] : 1;
  }
  out->groups[k] = DC_MIN(s->span, s->grid[k] - s->next[k]);
  // Move on in dimension k, carrying into the ones above it.
  s->next[k] += out->groups[k];
  for (int d = k; d < 3 && s->next[d] >= s->grid[d]; ++d) {
    s->next[d] = 0;
    if (d == 2) {
      s->done = true;
    } else {
      s->next[d + 1]++;
    }
  }
  return true;
}

// Doubles the slice: a longer span in its dimension, or, once that spans
// the grid, a span of two in the next (at the start of a row only).
static void grow(dc_launch_slicer_t* s) {
  int k = s->dim;
  if (s->span < s->grid[k]) {
    s->span = s->span > s->grid[k] / 2 ? s->grid[k] : s->span * 2;
  } else if (k < 2 && s->next[k] == 0) {
    s->dim = k + 1;
    s->span = DC_MIN((size_t)2, s->grid[k + 1]);
  }
}

void dc_launch_slicer_took(dc_launch_slicer_t* s, uint64_t elapsed_ns) {
  if (s == NULL || s->done) return;
  // Up to 16 times larger at once: the waits between slices are few.
  uint64_t t = DC_MAX(elapsed_ns, (uint64_t)1);
  for (int steps = 0; t < DC_LAUNCH_SLICE_TARGET_NS / 2 && steps < 4;
       ++steps) {
    grow(s);
    t *= 2;
  }
}

int dc_launch_stop_reason(const dc_launch_slicer_t* s) {
  if (s == NULL || s->launch == NULL) return -1;
  const dc_launch_t* l = s->launch;
  if (l->interrupts != NULL &&
      __atomic_load_n(l->interrupts, __ATOMIC_ACQUIRE) !=
          l->interrupts_at_start) {
    return DC_KERNEL_FAULT_STOPPED;
  }
  if (l->time_limit_ns != 0 &&
      dc__now_ns() - s->start_ns > l->time_limit_ns) {
    return DC_KERNEL_FAULT_WATCHDOG;
  }
  return -1;
}

// The spin lasts 1 ms: with 0.1 ms, a checked 2^26-item float add over
// NVIDIA's OpenCL on an H200 took 0.44 ms, against 0.30 with 1 ms. Its
// first 20 us do not even yield: on CUDA, small checked dispatches ended
// 1 to 2 us sooner so (docs/benchmarks.md).
void dc_launch_watch_pause(uint64_t since_ns, bool shares_cores) {
  uint64_t waited = dc__now_ns() - since_ns;
  if (!shares_cores && waited < DC_LAUNCH_WATCH_SPIN_NS) {
    if (waited >= DC_LAUNCH_WATCH_BUSY_NS) sched_yield();
    return;
  }
  struct timespec pause = {0, (long)DC_LAUNCH_WATCH_SLEEP_NS};
  nanosleep(&pause, NULL);
}

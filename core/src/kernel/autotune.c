// autotune.c: picks work-group sizes by timing real dispatches.
//
// With autotuning on, the first dispatches of a kernel over a given grid
// each run with another candidate group size and are timed; once every
// candidate has run, the fastest is used for that grid from then on. Each
// dispatch still runs exactly once, so tuning never changes results, even
// for kernels that accumulate into their outputs.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "program_internal.h"

#define MAX_CANDIDATES 6

typedef struct dc__tune_entry_t {
  uint32_t dims;
  size_t global[3];
  size_t candidates[MAX_CANDIDATES][3];
  uint64_t times[MAX_CANDIDATES];
  uint32_t candidate_count;
  uint32_t tried;
  uint32_t best;
  struct dc__tune_entry_t* next;
} dc__tune_entry_t;

static bool same_grid(const dc__tune_entry_t* t, const dc_launch_t* l) {
  return t->dims == l->dims && memcmp(t->global, l->global,
                                      sizeof(t->global)) == 0;
}

// Distinct group sizes worth timing: from one vector of lanes up to the
// largest group the kernel may use.
static void make_candidates(const dc_kernel_t* k, const dc_launch_t* l,
                            dc__tune_entry_t* t) {
  static const size_t kWants[] = {1, 4, 16, 64, 256, 1024};
  for (size_t i = 0; i < sizeof(kWants) / sizeof(kWants[0]); ++i) {
    dc_launch_t trial = *l;
    dc__choose_local(k, &trial, kWants[i]);
    bool seen = false;
    for (uint32_t c = 0; c < t->candidate_count && !seen; ++c) {
      seen = memcmp(t->candidates[c], trial.local, sizeof(trial.local)) == 0;
    }
    if (!seen) {
      memcpy(t->candidates[t->candidate_count++], trial.local,
             sizeof(trial.local));
    }
  }
}

static dc__tune_entry_t* find_entry(dc_kernel_t* k, const dc_launch_t* l) {
  for (dc__tune_entry_t* t = k->tune; t != NULL; t = t->next) {
    if (same_grid(t, l)) return t;
  }
  dc__tune_entry_t* t = dc_allocator_calloc(
      dc_context_allocator(k->program->device->context), 1, sizeof(*t));
  if (t == NULL) return NULL;  // tuning is optional: carry on untuned
  t->dims = l->dims;
  memcpy(t->global, l->global, sizeof(t->global));
  make_candidates(k, l, t);
  t->next = k->tune;
  k->tune = t;
  return t;
}

int dc__autotune_pick(dc_kernel_t* k, dc_launch_t* l) {
  pthread_mutex_lock(&k->program->lock);
  dc__tune_entry_t* t = find_entry(k, l);
  int slot = -1;
  if (t != NULL) {
    slot = t->tried < t->candidate_count ? (int)t->tried++ : -1;
    memcpy(l->local, t->candidates[slot >= 0 ? (uint32_t)slot : t->best],
           sizeof(l->local));
  }
  pthread_mutex_unlock(&k->program->lock);
  return slot;
}

void dc__autotune_record(dc_kernel_t* k, const dc_launch_t* l, int slot,
                         uint64_t ns) {
  if (slot < 0) return;
  pthread_mutex_lock(&k->program->lock);
  dc__tune_entry_t* t = find_entry(k, l);
  if (t != NULL) {
    t->times[slot] = ns;
    if (ns < t->times[t->best] || t->times[t->best] == 0) {
      t->best = (uint32_t)slot;
    }
  }
  pthread_mutex_unlock(&k->program->lock);
}

dc_status_t dc_kernel_tuned_group_size(dc_kernel_t* k, uint32_t dims,
                                       const size_t* global,
                                       size_t* out_local) {
  static const char* fn = "dc_kernel_tuned_group_size";
  DC_REQUIRE_ARG(k, fn);
  DC_REQUIRE_ARG(global, fn);
  DC_REQUIRE_ARG(out_local, fn);
  dc_launch_t l = {.dims = dims};
  for (uint32_t d = 0; d < 3; ++d) l.global[d] = d < dims ? global[d] : 1;
  bool found = false;
  pthread_mutex_lock(&k->program->lock);
  for (dc__tune_entry_t* t = k->tune; t != NULL && !found; t = t->next) {
    if (same_grid(t, &l) && t->tried == t->candidate_count) {
      memcpy(out_local, t->candidates[t->best], 3 * sizeof(size_t));
      found = true;
    }
  }
  pthread_mutex_unlock(&k->program->lock);
  if (found) return DC_OK;
  return DC_FAIL(DC_ERR_NOT_FOUND,
                 "%s: kernel '%s' has not finished tuning this grid", fn,
                 k->info.name);
}

void dc__autotune_free(dc_kernel_t* k) {
  dc_allocator_t allocator = dc_context_allocator(k->program->device->context);
  while (k->tune != NULL) {
    dc__tune_entry_t* next = k->tune->next;
    dc_allocator_free(allocator, k->tune, sizeof(*k->tune));
    k->tune = next;
  }
}

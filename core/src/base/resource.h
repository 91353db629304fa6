// resource.h: the header every reference-counted engine object starts
// with, the one retain, release and handle check that all of them use, and
// the context's list of live objects.
//
// The model. Buffers, programs, streams, events, graphs, graph instances,
// stream groups, encoders, circuit breakers and cancel tokens each start
// with a dc__resource_t:
//
//   type           the type's static descriptor (its name as messages
//                  spell it, "buffer", and its destroy); NULL once the
//                  object is released
//   refs           the reference count; create hands out the first one
//   next_released  the link of the quarantine that holds the object after
//                  its release (object_cache.h; events: their pool's)
//
// Stale handles are caught by quarantine, not by generation counters (the
// public API passes plain pointers, so a generation would have nowhere to
// travel). A destroy never frees the object's storage: it hands it to its
// context's object cache, which reuses it only after more than |quarantine|
// further releases of that type and frees it only when the context goes.
// So reading the header of a stale handle is always defined, and finds
// type == NULL until the storage is reused; a handle staler than the
// quarantine may name a new object. The check is a debugging aid.
//
// One check, three uses. dc__resource_live() is the test (not NULL and of
// the expected type); every function that returns a status validates its
// handles with dc__resource_check() (DC_ERR_INVALID_ARGUMENT naming the
// function and the type), getters return an empty value when
// dc__resource_live() fails, and dc__resource_retain()/_release() ignore
// such a handle, so a second release does nothing.
//
// Retain is an atomic add and one pointer compare; the type's hooks run
// only on the last release, or for the few types the engine itself owns
// (pinned_context below).
// SPDX-License-Identifier: MIT
#ifndef DC_RESOURCE_H_
#define DC_RESOURCE_H_

#include <stddef.h>
#include <stdint.h>

#include "dc/context.h"
#include "internal.h"

typedef struct dc__resource_t dc__resource_t;

// What a type shares with every object of it. One static const instance
// per type, named dc__<type>_type.
typedef struct dc__resource_type_t {
  // The type as messages name it: "buffer", "graph instance".
  const char* name;
  // Ends an object when its last reference goes: drops what it holds,
  // leaves the context's live list, hands its storage back to its cache
  // (dc__object_cache_free, which marks it released) and, as its very last
  // step, drops its hold on the context (which may destroy the context).
  // Until the storage goes back the object still passes its check, so
  // hooks it calls (a backend's program_destroy) may read it through the
  // API; an object whose storage outlives its destroy (a stream that
  // drains first, a pooled event) calls dc__resource_mark_released.
  void (*destroy)(dc__resource_t* resource);
  // Optional (NULL for most types). For objects the engine itself may own
  // (the built-in program, the breakers of a context's registry): such an
  // object must not keep its own context alive, yet every reference the
  // host holds must. Returns the context that each reference but the last
  // one holds (the last is the owner's), or NULL when this object's
  // references hold none. Read before the count changes.
  dc_context_t* (*pinned_context)(const dc__resource_t* resource);
} dc__resource_type_t;

struct dc__resource_t {
  _Atomic(const dc__resource_type_t*) type;  // NULL: released
  atomic_uint refs;
  dc__resource_t* next_released;  // guarded by the quarantine's lock
};

// Every resource type of the engine, each defined beside its struct, so
// that any module can check any handle. (A kernel is part of its program
// and is checked through it.)
DC_INTERNAL const dc__resource_type_t dc__buffer_type;
DC_INTERNAL const dc__resource_type_t dc__program_type;
DC_INTERNAL const dc__resource_type_t dc__stream_type;
DC_INTERNAL const dc__resource_type_t dc__stream_group_type;
DC_INTERNAL const dc__resource_type_t dc__event_type;
DC_INTERNAL const dc__resource_type_t dc__cancel_token_type;
DC_INTERNAL const dc__resource_type_t dc__encoder_type;
DC_INTERNAL const dc__resource_type_t dc__graph_type;
DC_INTERNAL const dc__resource_type_t dc__graph_exec_type;
DC_INTERNAL const dc__resource_type_t dc__breaker_type;

// Each object type puts its header first, so that a handle is a pointer to
// its header (and a NULL handle a NULL header).
#define DC__RESOURCE_FIRST(struct_type, member)           \
  _Static_assert(offsetof(struct_type, member) == 0,      \
                 #struct_type ": the resource header comes first")

// A handle's header: NULL for NULL.
#define DC__RES(handle) ((dc__resource_t*)(handle))

// Adds a hold on |ctx| for an object (or a reference) that keeps it alive.
DC_INTERNAL void dc__context_ref(dc_context_t* ctx);
// Drops such a hold; destroys the context if the host has released it and
// this was the last hold.
DC_INTERNAL void dc__context_unref(dc_context_t* ctx);

// Makes |r| a live object of |type| with one reference (storage from the
// object cache is zeroed, so nothing else needs setting). Call it once the
// object is complete enough for other threads to check it.
static inline void dc__resource_init(dc__resource_t* r,
                                     const dc__resource_type_t* type) {
  atomic_init(&r->refs, 1u);
  atomic_store_explicit(&r->type, type, memory_order_release);
}

// Makes |r| fail every check from now on: what dc__object_cache_free does
// as a destroy ends.
static inline void dc__resource_mark_released(dc__resource_t* r) {
  atomic_store_explicit(&r->type, NULL, memory_order_relaxed);
}

// Whether |r| is a live object of |type|: the one test behind every check.
static inline bool dc__resource_live(const dc__resource_t* r,
                                     const dc__resource_type_t* type) {
  return r != NULL &&
         atomic_load_explicit(&((dc__resource_t*)r)->type,
                              memory_order_relaxed) == type;
}

// Reports a handle that failed dc__resource_live (object_cache.c).
DC_INTERNAL dc_status_t dc__resource_check_failed(
    const char* fn, const char* param, const dc__resource_t* r,
    const dc__resource_type_t* type);

// DC_OK if |r| is a live object of |type|, else DC_ERR_INVALID_ARGUMENT:
// "fn: 'param' is NULL or a released buffer".
static inline dc_status_t dc__resource_check(const char* fn,
                                             const char* param,
                                             const dc__resource_t* r,
                                             const dc__resource_type_t* type) {
  if (dc__resource_live(r, type)) return DC_OK;
  return dc__resource_check_failed(fn, param, r, type);
}

// Adds a reference to |r|; ignores anything but a live object of |type|.
static inline void dc__resource_retain(dc__resource_t* r,
                                       const dc__resource_type_t* type) {
  if (!dc__resource_live(r, type)) return;
  atomic_fetch_add_explicit(&r->refs, 1u, memory_order_relaxed);
  if (type->pinned_context != NULL) {
    dc_context_t* ctx = type->pinned_context(r);
    if (ctx != NULL) dc__context_ref(ctx);
  }
}

// Adds a reference to |r| unless its count already reached zero; returns
// whether it did. For lists that see objects without holding a reference
// (the scheduler's list of streams), which may meet one being released.
static inline bool dc__resource_try_retain(dc__resource_t* r,
                                           const dc__resource_type_t* type) {
  if (!dc__resource_live(r, type) || type->pinned_context != NULL) {
    return false;  // the pinning types are never in such lists
  }
  unsigned n = atomic_load_explicit(&r->refs, memory_order_relaxed);
  while (n != 0 && !atomic_compare_exchange_weak_explicit(
                       &r->refs, &n, n + 1, memory_order_relaxed,
                       memory_order_relaxed)) {
  }
  return n != 0;
}

// Drops a reference to |r|; ignores anything but a live object of |type|
// (so a second release of a handle does nothing). The last one runs the
// type's destroy.
static inline void dc__resource_release(dc__resource_t* r,
                                        const dc__resource_type_t* type) {
  if (!dc__resource_live(r, type)) return;
  // Read before the decrement: after it, another thread may end |r|.
  dc_context_t* pinned =
      type->pinned_context != NULL ? type->pinned_context(r) : NULL;
  if (atomic_fetch_sub_explicit(&r->refs, 1u, memory_order_acq_rel) == 1u) {
    type->destroy(r);
  } else if (pinned != NULL) {
    dc__context_unref(pinned);  // may destroy the context
  }
}

// Kinds of objects the context tracks, counted apart.
typedef enum dc__live_kind_e {
  DC_LIVE_BUFFER = 0,
  DC_LIVE_PROGRAM,
  DC_LIVE_STREAM,
  DC_LIVE_EVENT,
  DC_LIVE_GRAPH,
  DC_LIVE_KIND_COUNT,
} dc__live_kind_t;

// A link in the context's list of live objects, embedded in each tracked
// object. |describe| writes one line about the object for leak reports.
typedef struct dc__live_node_t {
  struct dc__live_node_t* prev;
  struct dc__live_node_t* next;
  void (*describe)(const struct dc__live_node_t* node, char* buf,
                   size_t size);
  dc__live_kind_t kind;
} dc__live_node_t;

#endif  // DC_RESOURCE_H_

// resource.h: what every engine object starts with, for the checks of
// stale handles (object_cache.h) and the context's list of live objects
// (context.c), shared by the core and the backends' view of programs.
// SPDX-License-Identifier: MIT
#ifndef DC_RESOURCE_H_
#define DC_RESOURCE_H_

#include <stddef.h>
#include <stdint.h>

// Every cached object starts with this header. |magic| tells a live
// object of the cache's type from a released one; the cache never frees a
// released object until the context goes, so reading the magic of a stale
// handle is always defined.
typedef struct dc__object_header_t {
  uint32_t magic;
  struct dc__object_header_t* next_released;
} dc__object_header_t;

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

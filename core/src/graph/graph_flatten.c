// graph_flatten.c: from a graph to its flat form: nested graphs expanded,
// every dependency derived (explicit, read-after-write, write-after-read,
// write-after-write), names and cycles checked; and DOT output.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "buffer_internal.h"
#include "graph_internal.h"

//===-- Growing arrays --------------------------------------------------===//

// Makes room for one more element in |*items| (|*count| used of
// |*capacity|, each |size| bytes).
static bool reserve(dc_allocator_t a, void** items, size_t* capacity,
                    size_t count, size_t size) {
  if (count < *capacity) return true;
  size_t grown = *capacity ? *capacity * 2 : 16;
  void* p = dc_allocator_malloc(a, grown * size);
  if (p == NULL) return false;
  if (count) memcpy(p, *items, count * size);
  if (*items) dc_allocator_free(a, *items, *capacity * size);
  *items = p;
  *capacity = grown;
  return true;
}

static bool add_edge(dc__flat_t* f, uint32_t from, uint32_t to,
                     dc__edge_kind_t kind) {
  if (!reserve(f->allocator, (void**)&f->edges, &f->edge_capacity,
               f->edge_count, sizeof(dc__edge_t))) {
    return false;
  }
  f->edges[f->edge_count++] = (dc__edge_t){from, to, kind};
  return true;
}

void dc__flat_free(dc__flat_t* f) {
  dc_allocator_t a = f->allocator;
  for (size_t i = 0; i < f->count; ++i) {
    dc_allocator_free(a, f->names[i], strlen(f->names[i]) + 1);
  }
  if (f->ops) dc_allocator_free(a, f->ops, f->capacity * sizeof(*f->ops));
  if (f->names) dc_allocator_free(a, f->names, f->capacity * sizeof(char*));
  if (f->edges) {
    dc_allocator_free(a, f->edges, f->edge_capacity * sizeof(dc__edge_t));
  }
  memset(f, 0, sizeof(*f));
}

//===-- Units: an op, or a nested graph's ops ---------------------------===//

// The flat ops one op of a graph became: [begin, end), of which |entries|
// have no dependency inside the unit and |exits| no dependent inside it.
typedef struct unit_t {
  uint32_t begin, end;
  uint32_t self;  // a one-op unit's entry and exit, without allocations
  uint32_t* entries;
  uint32_t* exits;
  size_t entry_count, exit_count;
} unit_t;

static void free_unit(dc_allocator_t a, unit_t* u) {
  if (u->entries == &u->self) return;
  size_t n = u->end - u->begin;
  if (u->entries) dc_allocator_free(a, u->entries, n * sizeof(uint32_t));
  if (u->exits) dc_allocator_free(a, u->exits, n * sizeof(uint32_t));
}

// Fills the entries and exits of |u| from the edges among its ops.
static bool finish_unit(dc__flat_t* f, unit_t* u) {
  size_t n = u->end - u->begin;
  if (n == 0) return true;
  dc_allocator_t a = f->allocator;
  bool* has_in = dc_allocator_calloc(a, n, sizeof(bool));
  bool* has_out = dc_allocator_calloc(a, n, sizeof(bool));
  u->entries = dc_allocator_malloc(a, n * sizeof(uint32_t));
  u->exits = dc_allocator_malloc(a, n * sizeof(uint32_t));
  bool ok = has_in && has_out && u->entries && u->exits;
  for (size_t e = 0; ok && e < f->edge_count; ++e) {
    const dc__edge_t* edge = &f->edges[e];
    if (edge->from >= u->begin && edge->from < u->end &&
        edge->to >= u->begin && edge->to < u->end) {
      has_out[edge->from - u->begin] = true;
      has_in[edge->to - u->begin] = true;
    }
  }
  for (size_t i = 0; ok && i < n; ++i) {
    if (!has_in[i]) u->entries[u->entry_count++] = u->begin + (uint32_t)i;
    if (!has_out[i]) u->exits[u->exit_count++] = u->begin + (uint32_t)i;
  }
  if (has_in) dc_allocator_free(a, has_in, n * sizeof(bool));
  if (has_out) dc_allocator_free(a, has_out, n * sizeof(bool));
  if (!ok) {
    free_unit(a, u);
    u->entries = u->exits = NULL;
  }
  return ok;
}

// Adds the edges that make unit |to| depend on unit |from|.
static bool connect(dc__flat_t* f, const unit_t* from, const unit_t* to,
                    dc__edge_kind_t kind) {
  for (size_t x = 0; x < from->exit_count; ++x) {
    for (size_t y = 0; y < to->entry_count; ++y) {
      if (!add_edge(f, from->exits[x], to->entries[y], kind)) return false;
    }
  }
  return true;
}

//===-- Hazards: who last wrote and read each buffer --------------------===//

typedef struct touch_t {
  uint32_t unit;
  size_t begin, end;
} touch_t;

typedef struct buffer_state_t {
  const dc_buffer_t* root;
  touch_t* writes;  // the writes not hidden by a later covering write
  touch_t* reads;   // the reads since those writes
  size_t write_count, write_capacity, read_count, read_capacity;
} buffer_state_t;

typedef struct hazards_t {
  dc_allocator_t allocator;
  buffer_state_t* table;  // open addressing by root; capacity a power of 2
  size_t capacity, count;
} hazards_t;

static size_t hash_pointer(const void* p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17;
  x *= 0xed5ad4bbu;
  x ^= x >> 11;
  return (size_t)x;
}

static buffer_state_t* state_of(hazards_t* h, const dc_buffer_t* root) {
  if ((h->count + 1) * 2 > h->capacity) {
    size_t capacity = h->capacity ? h->capacity * 2 : 16;
    buffer_state_t* table =
        dc_allocator_calloc(h->allocator, capacity, sizeof(buffer_state_t));
    if (table == NULL) return NULL;
    for (size_t i = 0; i < h->capacity; ++i) {
      if (h->table[i].root == NULL) continue;
      size_t j = hash_pointer(h->table[i].root) & (capacity - 1);
      while (table[j].root != NULL) j = (j + 1) & (capacity - 1);
      table[j] = h->table[i];
    }
    if (h->table) {
      dc_allocator_free(h->allocator, h->table,
                        h->capacity * sizeof(buffer_state_t));
    }
    h->table = table;
    h->capacity = capacity;
  }
  size_t mask = h->capacity - 1;
  size_t i = hash_pointer(root) & mask;
  while (h->table[i].root != NULL && h->table[i].root != root) {
    i = (i + 1) & mask;
  }
  if (h->table[i].root == NULL) {
    h->table[i].root = root;
    ++h->count;
  }
  return &h->table[i];
}

static void free_hazards(hazards_t* h) {
  for (size_t i = 0; i < h->capacity; ++i) {
    buffer_state_t* s = &h->table[i];
    if (s->writes) {
      dc_allocator_free(h->allocator, s->writes,
                        s->write_capacity * sizeof(touch_t));
    }
    if (s->reads) {
      dc_allocator_free(h->allocator, s->reads,
                        s->read_capacity * sizeof(touch_t));
    }
  }
  if (h->table) {
    dc_allocator_free(h->allocator, h->table,
                      h->capacity * sizeof(buffer_state_t));
  }
}

static bool overlaps(const touch_t* t, size_t begin, size_t end) {
  return t->begin < end && begin < t->end;
}

// Drops the touches that [begin, end) covers: a later access that overlaps
// one of them overlaps the covering write too, and so depends on it.
static void drop_covered(touch_t* list, size_t* count, size_t begin,
                         size_t end) {
  size_t kept = 0;
  for (size_t i = 0; i < *count; ++i) {
    if (!(list[i].begin >= begin && list[i].end <= end)) list[kept++] = list[i];
  }
  *count = kept;
}

// Applies one access of unit |u| to the hazard state, adding its edges.
static bool apply_access(dc__flat_t* f, hazards_t* h, const unit_t* units,
                         uint32_t u, const dc__access_t* a) {
  buffer_state_t* s = state_of(h, a->root);
  if (s == NULL) return false;
  bool reads = a->mode & DC_ACCESS_READ, writes = a->mode & DC_ACCESS_WRITE;
  for (size_t i = 0; i < s->write_count; ++i) {
    const touch_t* w = &s->writes[i];
    if (w->unit == u || !overlaps(w, a->begin, a->end)) continue;
    if (!connect(f, &units[w->unit], &units[u],
                 reads ? DC_EDGE_RAW : DC_EDGE_WAW)) {
      return false;
    }
  }
  touch_t t = {u, a->begin, a->end};
  if (!writes) {
    if (!reserve(h->allocator, (void**)&s->reads, &s->read_capacity,
                 s->read_count, sizeof(touch_t))) {
      return false;
    }
    s->reads[s->read_count++] = t;
    return true;
  }
  for (size_t i = 0; i < s->read_count; ++i) {
    const touch_t* r = &s->reads[i];
    if (r->unit == u || !overlaps(r, a->begin, a->end)) continue;
    if (!connect(f, &units[r->unit], &units[u], DC_EDGE_WAR)) return false;
  }
  drop_covered(s->writes, &s->write_count, a->begin, a->end);
  drop_covered(s->reads, &s->read_count, a->begin, a->end);
  if (!reserve(h->allocator, (void**)&s->writes, &s->write_capacity,
               s->write_count, sizeof(touch_t))) {
    return false;
  }
  s->writes[s->write_count++] = t;
  return true;
}

//===-- Flattening ------------------------------------------------------===//

static dc_status_t flatten_graph(const char* fn, dc__flat_t* f,
                                 const dc_graph_t* g, const char* prefix,
                                 unit_t* out);

static dc_status_t oom(const char* fn, const dc_graph_t* g) {
  return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: graph '%s': out of memory", fn,
                 g->name);
}

// Adds op |op| of |g| as a unit: itself, or its child graph's ops.
static dc_status_t add_unit(const char* fn, dc__flat_t* f,
                            const dc_graph_t* g, const dc__op_t* op,
                            const char* prefix, unit_t* u) {
  size_t n = strlen(prefix) + strlen(op->name) + 1;  // the name and a NUL
  char* name = dc_allocator_malloc(f->allocator, n);
  if (name == NULL) return oom(fn, g);
  snprintf(name, n, "%s%s", prefix, op->name);
  if (op->kind == DC_OP_GRAPH) {
    char* child_prefix = dc_allocator_malloc(f->allocator, n + 1);
    if (child_prefix == NULL) {
      dc_allocator_free(f->allocator, name, n);
      return oom(fn, g);
    }
    snprintf(child_prefix, n + 1, "%s/", name);
    dc_allocator_free(f->allocator, name, n);
    dc_status_t st = flatten_graph(fn, f, op->child, child_prefix, u);
    dc_allocator_free(f->allocator, child_prefix, n + 1);
    return st;
  }
  size_t old_capacity = f->capacity;
  if (!reserve(f->allocator, (void**)&f->ops, &f->capacity, f->count,
               sizeof(*f->ops))) {
    dc_allocator_free(f->allocator, name, n);
    return oom(fn, g);
  }
  if (f->capacity != old_capacity) {  // names grow with ops
    char** names = dc_allocator_malloc(f->allocator,
                                       f->capacity * sizeof(char*));
    if (names == NULL) {
      dc_allocator_free(f->allocator, name, n);
      return oom(fn, g);
    }
    if (f->count) memcpy(names, f->names, f->count * sizeof(char*));
    if (f->names) {
      dc_allocator_free(f->allocator, f->names, old_capacity * sizeof(char*));
    }
    f->names = names;
  }
  f->ops[f->count] = op;
  f->names[f->count] = name;
  uint32_t index = (uint32_t)f->count++;
  *u = (unit_t){.begin = index, .end = index + 1, .self = index};
  u->entries = u->exits = &u->self;
  u->entry_count = u->exit_count = 1;
  return DC_OK;
}

static dc_status_t flatten_graph(const char* fn, dc__flat_t* f,
                                 const dc_graph_t* g, const char* prefix,
                                 unit_t* out) {
  dc_allocator_t a = f->allocator;
  unit_t* units = g->count ? dc_allocator_calloc(a, g->count, sizeof(unit_t))
                           : NULL;
  if (g->count && units == NULL) return oom(fn, g);
  uint32_t begin = (uint32_t)f->count;
  dc_status_t st = DC_OK;
  for (size_t i = 0; i < g->count && st == DC_OK; ++i) {
    st = add_unit(fn, f, g, g->ops[i], prefix, &units[i]);
  }
  // Explicit edges.
  for (size_t i = 0; i < g->count && st == DC_OK; ++i) {
    const dc__op_t* op = g->ops[i];
    for (size_t k = 0; k < op->after_count && st == DC_OK; ++k) {
      long found = dc__graph_find_op(g, op->after[k]);
      size_t j = found < 0 ? g->count : (size_t)found;
      if (j == g->count) {
        st = DC_FAIL(DC_ERR_NOT_FOUND,
                     "%s: op '%s%s' runs after '%s', which is not in graph "
                     "'%s'", fn, prefix, op->name, op->after[k], g->name);
      } else if (!connect(f, &units[j], &units[i], DC_EDGE_AFTER)) {
        st = oom(fn, g);
      }
    }
  }
  // Implicit edges, in the order the ops were added.
  hazards_t h = {.allocator = a};
  for (size_t i = 0; i < g->count && st == DC_OK; ++i) {
    for (uint32_t x = units[i].begin; x < units[i].end && st == DC_OK; ++x) {
      const dc__op_t* op = f->ops[x];
      for (size_t k = 0; k < op->access_count && st == DC_OK; ++k) {
        if (!apply_access(f, &h, units, (uint32_t)i, &op->access[k])) {
          st = oom(fn, g);
        }
      }
    }
  }
  free_hazards(&h);
  for (size_t i = 0; i < g->count; ++i) free_unit(a, &units[i]);
  if (units) dc_allocator_free(a, units, g->count * sizeof(unit_t));
  if (st != DC_OK) return st;
  *out = (unit_t){.begin = begin, .end = (uint32_t)f->count};
  return finish_unit(f, out) ? DC_OK : oom(fn, g);
}

static int by_endpoints(const void* x, const void* y) {
  const dc__edge_t* a = x;
  const dc__edge_t* b = y;
  if (a->from != b->from) return a->from < b->from ? -1 : 1;
  if (a->to != b->to) return a->to < b->to ? -1 : 1;
  return (int)a->kind - (int)b->kind;
}

// Sorts the edges and keeps one per pair of ops (the first kind).
static void dedupe_edges(dc__flat_t* f) {
  if (f->edge_count == 0) return;
  qsort(f->edges, f->edge_count, sizeof(dc__edge_t), by_endpoints);
  size_t kept = 1;
  for (size_t i = 1; i < f->edge_count; ++i) {
    const dc__edge_t* prev = &f->edges[kept - 1];
    if (f->edges[i].from != prev->from || f->edges[i].to != prev->to) {
      f->edges[kept++] = f->edges[i];
    }
  }
  f->edge_count = kept;
}

//===-- Cycles ----------------------------------------------------------===//

// Writes "a -> b -> a" for a cycle among the ops Kahn's algorithm could not
// order (|left|), following edges backwards from one of them.
static void describe_cycle(const dc__flat_t* f, const bool* left,
                           dc__arena_t* scratch, char* buf, size_t size) {
  size_t n = f->count;
  // Every op left has a predecessor that is left; walking predecessors
  // must revisit an op, and the walk from there is the cycle.
  uint32_t* step = dc__arena_alloc(scratch, n * sizeof(uint32_t));
  long* seen_at = dc__arena_alloc(scratch, n * sizeof(long));
  if (step == NULL || seen_at == NULL) {
    snprintf(buf, size, "(cannot list the ops: out of memory)");
    return;
  }
  for (size_t i = 0; i < n; ++i) seen_at[i] = -1;
  uint32_t at = 0;
  while (!left[at]) ++at;
  size_t len = 0;
  while (seen_at[at] < 0) {
    seen_at[at] = (long)len;
    step[len++] = at;
    for (size_t e = 0; e < f->edge_count; ++e) {
      if (f->edges[e].to == at && left[f->edges[e].from]) {
        at = f->edges[e].from;
        break;
      }
    }
  }
  // step[seen_at[at] .. len) walked backwards is the cycle, in edge order.
  size_t used = 0;
  buf[0] = '\0';
  for (size_t k = len; k-- > (size_t)seen_at[at] && used < size;) {
    int w = snprintf(buf + used, size - used, "%s -> ", f->names[step[k]]);
    if (w > 0) used += (size_t)w;
  }
  // ... and back to where the walk first met the cycle.
  if (used < size) {
    snprintf(buf + used, size - used, "%s", f->names[step[len - 1]]);
  }
}

// Orders the ops topologically (Kahn); fails naming a cycle.
static dc_status_t check_cycles(const char* fn, const char* graph_name,
                                const dc__flat_t* f) {
  size_t n = f->count;
  if (n == 0) return DC_OK;
  dc__arena_t scratch;
  dc__arena_init(&scratch, f->allocator);
  uint32_t* indegree = dc__arena_alloc(&scratch, n * sizeof(uint32_t));
  uint32_t* queue = dc__arena_alloc(&scratch, n * sizeof(uint32_t));
  size_t* first = dc__arena_alloc(&scratch, (n + 1) * sizeof(size_t));
  bool* left = dc__arena_alloc(&scratch, n * sizeof(bool));
  dc_status_t st = DC_OK;
  if (!indegree || !queue || !first || !left) {
    dc__arena_free_all(&scratch);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  memset(indegree, 0, n * sizeof(uint32_t));
  memset(first, 0, (n + 1) * sizeof(size_t));  // edges are sorted by from
  for (size_t e = 0; e < f->edge_count; ++e) {
    ++indegree[f->edges[e].to];
    ++first[f->edges[e].from + 1];
  }
  for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  size_t head = 0, tail = 0;
  for (size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) queue[tail++] = (uint32_t)i;
  }
  while (head < tail) {
    uint32_t op = queue[head++];
    for (size_t e = first[op]; e < first[op + 1]; ++e) {
      if (--indegree[f->edges[e].to] == 0) queue[tail++] = f->edges[e].to;
    }
  }
  if (tail < n) {
    for (size_t i = 0; i < n; ++i) left[i] = indegree[i] != 0;
    char cycle[512];
    describe_cycle(f, left, &scratch, cycle, sizeof(cycle));
    st = DC_FAIL(DC_ERR_FAILED_PRECONDITION,
                 "%s: graph '%s' has a cycle: %s", fn, graph_name, cycle);
  }
  dc__arena_free_all(&scratch);
  return st;
}

dc_status_t dc__graph_flatten(const char* fn, dc_graph_t* g, dc__flat_t* f) {
  memset(f, 0, sizeof(*f));
  f->allocator = g->ctx->allocator;
  unit_t all;
  dc_status_t st = flatten_graph(fn, f, g, "", &all);
  if (st == DC_OK) {
    free_unit(f->allocator, &all);
    dedupe_edges(f);
    st = check_cycles(fn, g->name, f);
  }
  if (st != DC_OK) dc__flat_free(f);
  return st;
}

//===-- Warnings --------------------------------------------------------===//

static bool written_in_graph(const dc__flat_t* f, const dc__access_t* r) {
  for (size_t i = 0; i < f->count; ++i) {
    const dc__op_t* op = f->ops[i];
    for (size_t k = 0; k < op->access_count; ++k) {
      const dc__access_t* a = &op->access[k];
      if ((a->mode & DC_ACCESS_WRITE) && a->root == r->root &&
          a->begin < r->end && r->begin < a->end) {
        return true;
      }
    }
  }
  return false;
}

void dc__graph_warn_uninitialised(dc_graph_t* g, const dc__flat_t* f,
                                  char* warnings, size_t size) {
  size_t used = warnings && size ? strlen(warnings) : 0;
  for (size_t i = 0; i < f->count; ++i) {
    const dc__op_t* op = f->ops[i];
    for (size_t k = 0; k < op->access_count; ++k) {
      const dc__access_t* a = &op->access[k];
      if (a->mode != DC_ACCESS_READ || dc__buffer_was_written(a->buffer) ||
          written_in_graph(f, a)) {
        continue;
      }
      const char* label = dc_buffer_label(a->buffer);
      char line[256];
      snprintf(line, sizeof(line),
               "graph '%s': op '%s' reads buffer '%s', which nothing writes "
               "and was never initialised", g->name, f->names[i],
               label[0] ? label : "unnamed");
      DC_LOG(g->ctx, DC_LOG_WARN, "graph", "%s", line);
      if (warnings && used + 1 < size) {
        int w = snprintf(warnings + used, size - used, "%s\n", line);
        if (w > 0) used = DC_MIN(used + (size_t)w, size - 1);
      }
    }
  }
}

//===-- DOT -------------------------------------------------------------===//

// Appends to a DOT buffer snprintf-style.
typedef struct dot_t {
  char* buf;
  size_t size, length;
} dot_t;

static void put(dot_t* d, const char* fmt, ...) DC_PRINTF_LIKE(2, 3);
static void put(dot_t* d, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  size_t room = d->length < d->size ? d->size - d->length : 0;
  int n = vsnprintf(room ? d->buf + d->length : NULL, room, fmt, args);
  va_end(args);
  if (n > 0) d->length += (size_t)n;
}

// Writes |s| as a DOT string body (quotes and backslashes escaped).
static void put_escaped(dot_t* d, const char* s) {
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') put(d, "\\");
    put(d, "%c", *s);
  }
}

static const char* const kEdgeLabels[] = {"after", "RAW", "WAR", "WAW"};
static const char* const kStateColors[] = {"white", "palegreen", "salmon",
                                           "lightgrey"};

dc_status_t dc__flat_to_dot(const char* graph_name, const dc__flat_t* f,
                            const uint32_t* stream_of,
                            const dc_op_state_t* state_of, char* buffer,
                            size_t size, size_t* out_length) {
  dot_t d = {buffer, buffer ? size : 0, 0};
  put(&d, "digraph \"");
  put_escaped(&d, graph_name);
  put(&d, "\" {\n  node [shape=box, style=filled, fillcolor=white];\n");
  for (size_t i = 0; i < f->count; ++i) {
    put(&d, "  op%zu [label=\"", i);
    put_escaped(&d, f->names[i]);
    put(&d, "\\n%s", dc__op_kind_name(f->ops[i]->kind));
    if (stream_of) put(&d, "\\nstream %u", stream_of[i]);
    put(&d, "\"");
    if (state_of) put(&d, ", fillcolor=%s", kStateColors[state_of[i]]);
    put(&d, "];\n");
  }
  for (size_t e = 0; e < f->edge_count; ++e) {
    put(&d, "  op%u -> op%u [label=\"%s\"];\n", f->edges[e].from,
        f->edges[e].to, kEdgeLabels[f->edges[e].kind]);
  }
  put(&d, "}\n");
  if (buffer && size) buffer[DC_MIN(d.length, size - 1)] = '\0';
  *out_length = d.length;
  return DC_OK;
}

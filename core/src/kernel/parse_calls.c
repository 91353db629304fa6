// parse_calls.c: the checks of a program's call graph, made once every
// function is parsed (a call may reach a function defined later, through
// its prototype).
//
// A work-item's private memory is a stack: on the CPU, a worker thread's,
// or a fiber's of 64 KiB without a guard page, where an overflow
// overwrites memory of the engine. So no function may reach itself again
// (OpenCL C 1.2 6.9 forbids recursion, and a stack could not bound it),
// and a kernel's private memory, with that of every chain of helpers it
// calls, must stay within DC_LIMIT_PRIVATE_BYTES.
// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "parse_internal.h"

// One function a function calls, and the name token of its first call
// there (where an error about the call is reported).
typedef struct edge_t {
  uint32_t callee;
  uint32_t token;
} edge_t;

enum { NEW, OPEN, DONE };  // a function's state in the search
#define NONE UINT32_MAX

typedef struct graph_t {
  dc__function_t* fns;  // indexed as dc__program_ast_t.functions
  uint32_t count;
  // The calls of function i are edges[first[i] .. first[i + 1]), each
  // callee once, in the order of their first calls.
  uint32_t* first;
  edge_t* edges;
  uint32_t edge_count;
  uint32_t edge_capacity;
  uint8_t* state;   // NEW, OPEN (on the search's path) or DONE
  uint64_t* bytes;  // DONE: the most private bytes of a chain from it
  uint32_t* next;   // DONE: the callee that chain goes on to, or NONE
  uint32_t* path;   // room for a chain, to spell it in a message
} graph_t;

//===-- The graph ---------------------------------------------------------===//

// Records the calls in function |from|'s body. Every name of a function
// in a body is a call (kernels have no function pointers), and each
// resolved to its declaration, whose |function| is the definition's index.
static bool add_calls(dc__sema_t* s, graph_t* g, uint32_t from,
                      uint32_t* seen) {
  const dc__function_t* fn = &g->fns[from];
  g->first[from] = g->edge_count;
  if (fn->body == NULL) return true;
  for (uint32_t k = fn->body->token; k < fn->body_end; ++k) {
    const dc__decl_t* d = s->token_decls[k];
    if (d == NULL || d->kind != DC_DECL_FUNCTION ||
        seen[d->function] == from) {
      continue;
    }
    seen[d->function] = from;
    if (!dc__sema_grow(s, (void**)&g->edges, &g->edge_capacity,
                       g->edge_count, sizeof(edge_t))) {
      return false;
    }
    g->edges[g->edge_count++] = (edge_t){d->function, k};
  }
  return true;
}

static bool build_graph(dc__sema_t* s, graph_t* g, dc__function_t* fns,
                        uint32_t count) {
  *g = (graph_t){.fns = fns, .count = count};
  g->first = dc__arena_alloc(s->arena, (count + 1) * sizeof(uint32_t));
  g->state = dc__arena_zalloc(s->arena, count + 1, 1);
  g->bytes = dc__arena_zalloc(s->arena, count + 1, sizeof(uint64_t));
  g->next = dc__arena_alloc(s->arena, (count + 1) * sizeof(uint32_t));
  g->path = dc__arena_alloc(s->arena, (count + 1) * sizeof(uint32_t));
  uint32_t* seen = dc__arena_alloc(s->arena, (count + 1) * sizeof(uint32_t));
  if (!g->first || !g->state || !g->bytes || !g->next || !g->path || !seen) {
    return false;
  }
  for (uint32_t i = 0; i < count; ++i) seen[i] = NONE;
  for (uint32_t i = 0; i < count; ++i) {
    if (!add_calls(s, g, i, seen)) return false;
  }
  g->first[count] = g->edge_count;
  return true;
}

//===-- Messages ----------------------------------------------------------===//

static void append(char* text, size_t size, size_t* len, const char* a,
                   const char* b) {
  if (*len + 1 >= size) return;
  int n = snprintf(text + *len, size - *len, "%s%s", a, b);
  if (n > 0) *len += (size_t)n;
}

// Spells the chain g->path[0 .. n) as "k calls f calls g" into |text|,
// leaving out the middle of a long one so that the message stays short.
static void spell_chain(const graph_t* g, uint32_t n, char* text,
                        size_t size) {
  enum { kHead = 4, kTail = 3 };
  size_t len = 0;
  text[0] = '\0';
  for (uint32_t i = 0; i < n; ++i) {
    if (n > kHead + kTail + 1 && i == kHead) {
      append(text, size, &len, " calls ...", "");
      i = n - kTail;
    }
    append(text, size, &len, i > 0 ? " calls " : "",
           g->fns[g->path[i]].decl->name);
  }
}

// Reports the call |e| that closes a cycle: it calls a function that is
// open on the search's |stack| (of |depth| functions).
static void report_cycle(dc__sema_t* s, graph_t* g, const uint32_t* stack,
                         uint32_t depth, const edge_t* e) {
  uint32_t from = depth - 1;
  while (stack[from] != e->callee) --from;
  uint32_t n = 0;
  for (uint32_t i = from; i < depth; ++i) g->path[n++] = stack[i];
  g->path[n++] = e->callee;
  char chain[256];
  spell_chain(g, n, chain, sizeof(chain));
  dc__sema_error(s, &s->toks[e->token], "recursion is not allowed in "
                 "OpenCL C (%s)", chain);
}

//===-- The search --------------------------------------------------------===//

// Function |u|'s calls are all DONE: its worst chain is its own bytes and
// the worst of its callees' (a chain through a callee counts it once), and
// it reaches what they reach.
static void finish(graph_t* g, uint32_t u) {
  uint64_t most = 0;
  g->next[u] = NONE;
  dc__function_t* fn = &g->fns[u];
  for (uint32_t k = g->first[u]; k < g->first[u + 1]; ++k) {
    uint32_t v = g->edges[k].callee;
    if (g->bytes[v] > most || g->next[u] == NONE) {
      most = g->bytes[v];
      g->next[u] = v;
    }
    const dc__function_t* callee = &g->fns[v];
    fn->calls_grid_sync |= callee->calls_grid_sync;
    fn->helper_reaches_barrier |= callee->calls_barrier ||
                                  callee->calls_grid_sync ||
                                  callee->helper_reaches_barrier;
  }
  // Each call level also takes a frame the count of variables misses.
  g->bytes[u] = g->fns[u].private_bytes +
                (g->next[u] != NONE ? most + DC_LIMIT_CALL_FRAME_BYTES : 0);
  g->state[u] = DONE;
}

// Depth-first from |root|, with a stack of its own (|stack|, |at|: room
// for every function) since a chain of helpers may be thousands long.
// False after reporting a cycle.
static bool search(dc__sema_t* s, graph_t* g, uint32_t* stack, uint32_t* at,
                   uint32_t root) {
  uint32_t depth = 0;
  stack[depth] = root;
  at[depth++] = g->first[root];
  g->state[root] = OPEN;
  while (depth > 0) {
    uint32_t u = stack[depth - 1];
    if (at[depth - 1] == g->first[u + 1]) {
      finish(g, u);
      --depth;
      continue;
    }
    const edge_t* e = &g->edges[at[depth - 1]++];
    if (g->state[e->callee] == OPEN) {
      report_cycle(s, g, stack, depth, e);
      return false;
    }
    if (g->state[e->callee] == NEW) {
      g->state[e->callee] = OPEN;
      stack[depth] = e->callee;
      at[depth++] = g->first[e->callee];
    }
  }
  return true;
}

// Reports kernel |k| if its worst chain of calls passes the limit.
static void check_kernel_private(dc__sema_t* s, graph_t* g, uint32_t k) {
  if (g->bytes[k] <= DC_LIMIT_PRIVATE_BYTES) return;
  uint32_t n = 0;
  for (uint32_t f = k; f != NONE; f = g->next[f]) g->path[n++] = f;
  char chain[256];
  spell_chain(g, n, chain, sizeof(chain));
  dc__sema_error(s, &s->toks[g->fns[k].name], "private memory limit (%u "
                 "bytes for a kernel and the helpers it calls) exceeded by "
                 "kernel '%s': %llu bytes along %s; use __local or __global "
                 "memory for large arrays", DC_LIMIT_PRIVATE_BYTES,
                 g->fns[k].decl->name, (unsigned long long)g->bytes[k],
                 chain);
}

void dc__check_calls(dc__sema_t* s, dc__function_t* fns, uint32_t count) {
  graph_t g;
  uint32_t* stack = dc__arena_alloc(s->arena, (count + 1) * sizeof(uint32_t));
  uint32_t* at = dc__arena_alloc(s->arena, (count + 1) * sizeof(uint32_t));
  if (!stack || !at || !build_graph(s, &g, fns, count)) return;
  for (uint32_t i = 0; i < count; ++i) {
    if (fns[i].body != NULL && g.state[i] == NEW &&
        !search(s, &g, stack, at, i)) {
      return;
    }
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (fns[i].is_kernel && fns[i].body != NULL) {
      check_kernel_private(s, &g, i);
    }
  }
}

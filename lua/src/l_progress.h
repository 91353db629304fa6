// l_progress.h: a progress line on standard error for work that lasts
// (graph runs, kernel compiles, large buffer transfers, and a script's
// own long set-up through dc.progress).
//
// A piece of work that may last *begins* an item and *ends* it when done.
// While items are open, the newest one that has lasted the delay (0.5 s)
// is drawn as one line on standard error, "label: 512/1000 ops  1.2 s",
// redrawn in place with \r at most every 200 ms by a thread of the item's
// own. When an item that was drawn (or that lasted the delay) ends, its
// final state is drawn once more and finished with a newline, so the line
// never stays half-written under what comes next; an older item that is
// still open is redrawn on the next line. Fast work draws nothing.
//
// Whether items draw at all is decided when they begin:
//   - DC_PROGRESS=off: never; =on: always, after the delay; =always:
//     always, with no delay, so that even short work leaves its final line
//     (for tests and logs); unset, empty or =auto: the host's setting
//     (dclua_set_progress; the runner turns it on when standard error is a
//     terminal).
//   - A caller's own request (g:run { progress = bool }) overrides the
//     host's setting; DC_PROGRESS=off overrides everything, and a request
//     for no line is always honoured.
// When they do not draw, dclua_progress_begin returns NULL, no thread is
// started and nothing is written: every function takes NULL as a no-op.
//
// Thread safety: dclua_progress_set and dclua_progress_end may be called
// from any thread; one process-wide lock orders the writes to stderr, so
// items of several lua_States never tear each other's lines. begin and
// the Lua-facing functions are Lua-thread only.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_L_PROGRESS_H_
#define DCLUA_L_PROGRESS_H_

#include <stdint.h>

#include "dclua_internal.h"

#define DCLUA_PROGRESS "dc.progress"

typedef struct dclua_progress_t dclua_progress_t;

// What the line shows after the label.
typedef enum dclua_progress_kind_e {
  DCLUA_PROGRESS_ELAPSED,  // "compiling 'k.cl' on cpu  1.3 s"
  DCLUA_PROGRESS_COUNT,    // "graph 'g': 512/1000 ops  1.2 s"
  DCLUA_PROGRESS_BYTES,    // "buf:read: 64.0/256.0 MiB  1.2 s"
} dclua_progress_kind_t;

// A caller's request: the default (DC_PROGRESS, then the host's setting),
// a line, or none.
enum {
  DCLUA_PROGRESS_DEFAULT = -1,
  DCLUA_PROGRESS_OFF = 0,
  DCLUA_PROGRESS_ON = 1,
};

// Reads the amount done at each redraw, for work that counts it elsewhere
// (a graph instance's finished ops). Called on the item's thread, and on
// the thread that ends the item, under the progress lock: it must not
// block or take locks that a caller of the progress functions holds.
typedef uint64_t (*dclua_progress_poll_fn_t)(void* user_data);

typedef struct dclua_progress_params_t {
  const char* label;  // copied (at most 200 bytes; control bytes become ?)
  dclua_progress_kind_t kind;
  const char* unit;  // COUNT only: the word after the count; may be NULL
  uint64_t total;    // COUNT and BYTES: 0 when unknown (no "/total")
  dclua_progress_poll_fn_t poll;  // NULL: dclua_progress_set gives it
  void* poll_data;
  int request;  // DCLUA_PROGRESS_DEFAULT, _OFF or _ON
} dclua_progress_params_t;

// The longest label kept, in bytes (dc.progress refuses longer ones).
#define DCLUA_PROGRESS_LABEL_MAX 200

// Whether an item that |L| begins with |request| would draw.
// [-0, +0, -]
bool dclua_progress_wanted(lua_State* L, int request);

// Begins an item of |params| and returns it, or NULL when it is not to
// draw (see above) or when out of memory. The caller owns the item and
// must end it; a Lua caller that may raise before then uses
// dclua_progress_push instead. Lua-thread only.
// [-0, +0, -]
dclua_progress_t* dclua_progress_begin(lua_State* L,
                                       const dclua_progress_params_t* params);

// Sets the amount done (items or bytes). Any thread; NULL is a no-op.
void dclua_progress_set(dclua_progress_t* progress, uint64_t done);

// Ends |progress|: stops its thread, draws the final line if it was drawn
// or lasted the delay, and frees it. Any thread; NULL is a no-op.
void dclua_progress_end(dclua_progress_t* progress);

// Begins an item as dclua_progress_begin does and pushes a dc.progress
// that owns it, for the caller to mark with lua_toclose: closing it (or
// an error that unwinds the stack) ends the item. Returns the item (NULL
// when it does not draw; the object is pushed all the same).
// [-0, +1, m]
dclua_progress_t* dclua_progress_push(lua_State* L,
                                      const dclua_progress_params_t* params);

// Checks DC_PROGRESS (raises INVALID_ARGUMENT for a value that is none of
// auto, on, off, always), creates the dc.progress class and adds
// dc.progress to the module table at the top of the stack.
// [-0, +0, e]
void dclua_open_progress(lua_State* L);

#endif  // DCLUA_L_PROGRESS_H_

// l_progress.c: the progress line on standard error (l_progress.h) and
// the dc.progress class, through which scripts show their own long work.
//
// Each open item that draws has a thread of its own, which sleeps until
// the item has lasted its delay and then redraws it every TICK_NS while it
// is the item the line shows. Items exist only while lines are on, and
// only for work that may last (compiles, graph runs of two ops or more,
// transfers of 64 MiB or more), so a thread each costs little next to the
// work and keeps the lifetime simple: the thread is joined when its item
// ends, and none outlives the module (dc.so may be unloaded at lua_close).
//
// All drawing happens under |g_lock|, which also guards the list of open
// items and what the unfinished line on stderr holds, so lines from
// several items, threads and lua_States never interleave.
// SPDX-License-Identifier: MIT
#include "l_progress.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DELAY_NS 500000000u  // work shorter than this draws nothing
#define TICK_NS 200000000u   // redraws at most this often
#define LINE_MAX_BYTES (DCLUA_PROGRESS_LABEL_MAX + 96)

// An open item. The fields above |stop| are set before its thread starts
// and read-only afterwards.
struct dclua_progress_t {
  char label[DCLUA_PROGRESS_LABEL_MAX + 1];
  char unit[24];
  dclua_progress_kind_t kind;
  uint64_t total;
  dclua_progress_poll_fn_t poll;
  void* poll_data;
  uint64_t start_ns;
  uint64_t delay_ns;
  pthread_cond_t wake;  // waits with |g_lock|
  pthread_t thread;
  bool ticking;  // |thread| runs
  bool stop;     // under g_lock: the item is ending
  bool drawn;    // under g_lock
  dclua_progress_t* older;  // under g_lock: the list, newest first
  dclua_progress_t* newer;
  _Atomic uint64_t done;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static dclua_progress_t* g_newest;  // under g_lock
static size_t g_partial;  // under g_lock: bytes of the unfinished line
static bool g_exiting;    // under g_lock: exit() has begun; draw no more
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

//===-- Settings --------------------------------------------------------===//

typedef enum env_mode_e {
  MODE_AUTO,  // the host's setting
  MODE_OFF,
  MODE_ON,
  MODE_ALWAYS,  // on, with no delay
  MODE_INVALID,
} env_mode_t;

static env_mode_t parse_mode(const char* text) {
  if (text == NULL || *text == '\0' || strcmp(text, "auto") == 0) {
    return MODE_AUTO;
  }
  if (strcmp(text, "off") == 0) return MODE_OFF;
  if (strcmp(text, "on") == 0) return MODE_ON;
  if (strcmp(text, "always") == 0) return MODE_ALWAYS;
  return MODE_INVALID;  // refused when the module opens; auto afterwards
}

static bool wanted(lua_State* L, env_mode_t mode, int request) {
  if (mode == MODE_OFF || request == DCLUA_PROGRESS_OFF) return false;
  if (mode == MODE_ON || mode == MODE_ALWAYS) return true;
  return request == DCLUA_PROGRESS_ON || dclua_progress_enabled(L);
}

bool dclua_progress_wanted(lua_State* L, int request) {
  return wanted(L, parse_mode(getenv("DC_PROGRESS")), request);
}

//===-- Drawing ---------------------------------------------------------===//

// The amount the line shows: "64.0/256.0 MiB", or GiB from 1 GiB on.
static int format_bytes(char* buf, size_t size, uint64_t done,
                        uint64_t total) {
  uint64_t scale_of = total > 0 ? total : done;
  bool gib = scale_of >= ((uint64_t)1 << 30);
  double unit = gib ? (double)((uint64_t)1 << 30) : (double)(1u << 20);
  const char* name = gib ? "GiB" : "MiB";
  if (total == 0) {
    return snprintf(buf, size, "%.1f %s", (double)done / unit, name);
  }
  return snprintf(buf, size, "%.1f/%.1f %s", (double)done / unit,
                  (double)total / unit, name);
}

// The count the line shows: "512/1000 ops", "512 ops", "512/1000".
static int format_count(char* buf, size_t size, const dclua_progress_t* p,
                        uint64_t done) {
  const char* space = p->unit[0] != '\0' ? " " : "";
  if (p->total == 0) {
    return snprintf(buf, size, "%" PRIu64 "%s%s", done, space, p->unit);
  }
  return snprintf(buf, size, "%" PRIu64 "/%" PRIu64 "%s%s", done, p->total,
                  space, p->unit);
}

// Formats the line of |p| into |buf| (truncated to fit). g_lock held.
static void format_line(const dclua_progress_t* p, char* buf, size_t size) {
  double seconds = (double)(dclua_now_ns() - p->start_ns) / 1e9;
  if (p->kind == DCLUA_PROGRESS_ELAPSED) {
    snprintf(buf, size, "%s  %.1f s", p->label, seconds);
    return;
  }
  uint64_t done = p->poll != NULL ? p->poll(p->poll_data)
                                  : atomic_load(&p->done);
  char amount[64];
  if (p->kind == DCLUA_PROGRESS_BYTES) {
    format_bytes(amount, sizeof(amount), done, p->total);
  } else {
    format_count(amount, sizeof(amount), p, done);
  }
  snprintf(buf, size, "%s: %s  %.1f s", p->label, amount, seconds);
}

// Draws |p| in place of the unfinished line on stderr, first blanking what
// a longer line left; |final| finishes the line with a newline. One write,
// so that other writers to stderr cannot split it. g_lock held.
static void draw(dclua_progress_t* p, bool final) {
  if (g_exiting) return;
  char line[LINE_MAX_BYTES];
  format_line(p, line, sizeof(line));
  size_t length = strlen(line);
  char out[2 * LINE_MAX_BYTES + 4];
  size_t n = 0;
  if (length < g_partial) {
    out[n++] = '\r';
    memset(out + n, ' ', g_partial);
    n += g_partial;
  }
  out[n++] = '\r';
  memcpy(out + n, line, length);
  n += length;
  if (final) out[n++] = '\n';
  fwrite(out, 1, n, stderr);
  fflush(stderr);
  g_partial = final ? 0 : length;
  p->drawn = true;
}

// Whether |p| is what the line shows: the newest open item that has
// lasted its delay. g_lock held.
static bool is_shown(const dclua_progress_t* p, uint64_t now) {
  for (const dclua_progress_t* q = g_newest; q != NULL; q = q->older) {
    if (now - q->start_ns >= q->delay_ns) return q == p;
  }
  return false;
}

//===-- Items -----------------------------------------------------------===//

// At exit (a script's os.exit while items are open, whose threads then
// never end them): finishes the unfinished line, so the shell's prompt
// starts on a line of its own, and stops all drawing. It never waits for
// a thread that holds the lock (one blocked writing to stderr, say). In
// dc.so this runs when the module is unloaded instead (glibc ties a shared
// object's atexit to it), when no item is open any more.
static void finish_at_exit(void) {
  if (pthread_mutex_trylock(&g_lock) != 0) return;
  if (g_partial > 0) fputc('\n', stderr);
  g_partial = 0;
  g_exiting = true;
  pthread_mutex_unlock(&g_lock);
}

static void register_at_exit(void) { atexit(finish_at_exit); }

// Sleeps on |p|'s condition until |deadline_ns| (dclua_now_ns's clock, the
// condition's) or a signal. g_lock held.
static void wait_until(dclua_progress_t* p, uint64_t deadline_ns) {
  struct timespec until = {
      .tv_sec = (time_t)(deadline_ns / 1000000000u),
      .tv_nsec = (long)(deadline_ns % 1000000000u),
  };
  pthread_cond_timedwait(&p->wake, &g_lock, &until);
}

// The thread of an item: waits out the delay, then redraws the line every
// TICK_NS while the item is the one shown. It touches no Lua state.
static void* tick_main(void* arg) {
  dclua_progress_t* p = arg;
  pthread_mutex_lock(&g_lock);
  uint64_t next = p->start_ns + p->delay_ns;
  while (!p->stop) {
    uint64_t now = dclua_now_ns();
    if (now < next) {
      wait_until(p, next);
      continue;
    }
    if (is_shown(p, now)) draw(p, false);
    next = now + TICK_NS;
  }
  pthread_mutex_unlock(&g_lock);
  return NULL;
}

// Starts |p|'s thread with every signal blocked, so that signals go to
// the threads that handle them (the runner's Ctrl-C). A thread that
// cannot start only means no redraws: the final line still comes.
static void start_thread(dclua_progress_t* p) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  p->ticking = pthread_create(&p->thread, NULL, tick_main, p) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

// Copies |label| into |dst|, at most DCLUA_PROGRESS_LABEL_MAX bytes, with
// control bytes (which would break the line) made '?'.
static void copy_label(char* dst, const char* label) {
  size_t n = 0;
  for (; label != NULL && label[n] != '\0' && n < DCLUA_PROGRESS_LABEL_MAX;
       ++n) {
    unsigned char c = (unsigned char)label[n];
    dst[n] = c < 0x20 || c == 0x7f ? '?' : (char)c;
  }
  dst[n] = '\0';
}

// Allocates an item of |params|, not yet linked; NULL when out of memory.
static dclua_progress_t* new_item(const dclua_progress_params_t* params,
                                  uint64_t delay_ns) {
  dclua_progress_t* p = calloc(1, sizeof(*p));
  if (p == NULL) return NULL;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);  // dclua_now_ns's
  int failed = pthread_cond_init(&p->wake, &attr);
  pthread_condattr_destroy(&attr);
  if (failed != 0) {
    free(p);
    return NULL;
  }
  copy_label(p->label, params->label);
  if (params->unit != NULL) {
    snprintf(p->unit, sizeof(p->unit), "%s", params->unit);
  }
  p->kind = params->kind;
  p->total = params->kind == DCLUA_PROGRESS_ELAPSED ? 0 : params->total;
  p->poll = params->poll;
  p->poll_data = params->poll_data;
  p->delay_ns = delay_ns;
  atomic_init(&p->done, 0);
  p->start_ns = dclua_now_ns();
  return p;
}

dclua_progress_t* dclua_progress_begin(lua_State* L,
                                       const dclua_progress_params_t* params) {
  env_mode_t mode = parse_mode(getenv("DC_PROGRESS"));
  if (!wanted(L, mode, params->request)) return NULL;
  dclua_progress_t* p = new_item(params, mode == MODE_ALWAYS ? 0 : DELAY_NS);
  if (p == NULL) return NULL;
  pthread_once(&g_once, register_at_exit);
  pthread_mutex_lock(&g_lock);
  p->older = g_newest;
  if (g_newest != NULL) g_newest->newer = p;
  g_newest = p;
  pthread_mutex_unlock(&g_lock);
  start_thread(p);
  return p;
}

void dclua_progress_set(dclua_progress_t* progress, uint64_t done) {
  if (progress != NULL) atomic_store(&progress->done, done);
}

// Takes |p| out of the list of open items. g_lock held.
static void unlink_item(dclua_progress_t* p) {
  if (p->newer != NULL) p->newer->older = p->older;
  if (p->older != NULL) p->older->newer = p->newer;
  if (g_newest == p) g_newest = p->older;
}

void dclua_progress_end(dclua_progress_t* progress) {
  dclua_progress_t* p = progress;
  if (p == NULL) return;
  pthread_mutex_lock(&g_lock);
  p->stop = true;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&g_lock);
  if (p->ticking) pthread_join(p->thread, NULL);
  pthread_mutex_lock(&g_lock);
  unlink_item(p);
  // The final state stays on a line of its own.
  if (p->drawn || dclua_now_ns() - p->start_ns >= p->delay_ns) draw(p, true);
  pthread_mutex_unlock(&g_lock);
  pthread_cond_destroy(&p->wake);
  free(p);
}

//===-- dc.progress -----------------------------------------------------===//

// A dc.progress: the Lua object that owns an item. It is open (and checks
// its arguments) whether or not the item draws; |item| is NULL when not.
typedef struct progress_box_t {
  dclua_progress_t* item;
  bool open;
  bool has_total;
  uint64_t total;
  uint64_t done;
  char label[DCLUA_PROGRESS_LABEL_MAX + 1];
} progress_box_t;

// Pushes a new open dc.progress that owns an item of |params| (NULL when
// the item does not draw). The box is made before the item, so a memory
// error leaks nothing.
static dclua_progress_t* push_box(lua_State* L,
                                  const dclua_progress_params_t* params,
                                  bool has_total) {
  progress_box_t* b = lua_newuserdatauv(L, sizeof(*b), 0);
  memset(b, 0, sizeof(*b));
  luaL_setmetatable(L, DCLUA_PROGRESS);
  copy_label(b->label, params->label);
  b->has_total = has_total;
  b->total = params->total;
  b->open = true;
  b->item = dclua_progress_begin(L, params);
  return b->item;
}

dclua_progress_t* dclua_progress_push(lua_State* L,
                                      const dclua_progress_params_t* params) {
  return push_box(L, params, params->kind != DCLUA_PROGRESS_ELAPSED);
}

static progress_box_t* check_open(lua_State* L, int index) {
  progress_box_t* b = dclua_udata_check(L, index, DCLUA_PROGRESS);
  if (!b->open) luaL_error(L, "attempt to use a closed " DCLUA_PROGRESS);
  return b;
}

// A label for dc.progress: a non-empty string of at most
// DCLUA_PROGRESS_LABEL_MAX bytes, with no control characters.
static const char* check_label(lua_State* L, int arg) {
  luaL_argexpected(L, lua_type(L, arg) == LUA_TSTRING, arg, "string");
  size_t n = 0;
  const char* label = lua_tolstring(L, arg, &n);
  luaL_argcheck(L, n > 0, arg, "label must not be empty");
  if (n > DCLUA_PROGRESS_LABEL_MAX) {
    luaL_argerror(L, arg, lua_pushfstring(L, "label must be at most %d "
                  "bytes, got %I", DCLUA_PROGRESS_LABEL_MAX, (lua_Integer)n));
  }
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)label[i];
    luaL_argcheck(L, c >= 0x20 && c != 0x7f, arg,
                  "label must not hold control characters (a newline, a tab)");
  }
  return label;
}

// A count (|what|: "total", "done") at |arg|: an integer, or a float with
// an integral value, not negative.
static uint64_t check_count(lua_State* L, int arg, const char* what) {
  luaL_argexpected(L, lua_type(L, arg) == LUA_TNUMBER, arg, "number");
  int is_integer = 0;
  lua_Integer value = lua_tointegerx(L, arg, &is_integer);
  if (!is_integer) {
    luaL_argerror(L, arg, lua_pushfstring(L, "%s must be an integer, got %f",
                                          what, lua_tonumber(L, arg)));
  }
  if (value < 0) {
    luaL_argerror(L, arg, lua_pushfstring(L, "%s must not be negative, got "
                                          "%I", what, value));
  }
  return (uint64_t)value;
}

// [-(1|2), +1, e]  dc.progress(label [, total]) -> dc.progress: a progress
// line for the script's own work ("label: done/total  1.2 s"), shown as
// the module's own lines are; a no-op object when they are off.
static int l_progress(lua_State* L) {
  dclua_progress_params_t params = {
      .label = check_label(L, 1),
      .kind = DCLUA_PROGRESS_COUNT,
      .request = DCLUA_PROGRESS_DEFAULT,
  };
  bool has_total = !lua_isnoneornil(L, 2);
  if (has_total) params.total = check_count(L, 2, "total");
  luaL_argcheck(L, lua_gettop(L) <= 2, 3, "no more arguments expected "
                "(dc.progress(label [, total]))");
  push_box(L, &params, has_total);
  return 1;
}

// [-2, +1, e]  p:update(done) -> p: sets the amount done (0..total)
static int progress_update(lua_State* L) {
  progress_box_t* b = check_open(L, 1);
  uint64_t done = check_count(L, 2, "done");
  if (b->has_total && done > b->total) {
    luaL_argerror(L, 2, lua_pushfstring(L, "done must be at most the total "
                  "(%I), got %I", (lua_Integer)b->total, (lua_Integer)done));
  }
  b->done = done;
  dclua_progress_set(b->item, done);
  lua_settop(L, 1);
  return 1;
}

// [-(1|2), +0, -]  p:close(), also __close and __gc: ends the line (its
// final state stays, if it was shown); closing again does nothing
static int progress_close(lua_State* L) {
  progress_box_t* b = dclua_udata_check(L, 1, DCLUA_PROGRESS);
  dclua_progress_t* item = b->item;
  b->item = NULL;
  b->open = false;
  dclua_progress_end(item);
  return 0;
}

// [-1, +1, m]  tostring(p) -> "dc.progress 'label': 3/10" or
// "dc.progress 'label' (closed)"
static int progress_tostring(lua_State* L) {
  progress_box_t* b = dclua_udata_check(L, 1, DCLUA_PROGRESS);
  if (!b->open) {
    lua_pushfstring(L, DCLUA_PROGRESS " '%s' (closed)", b->label);
  } else if (b->has_total) {
    lua_pushfstring(L, DCLUA_PROGRESS " '%s': %I/%I", b->label,
                    (lua_Integer)b->done, (lua_Integer)b->total);
  } else {
    lua_pushfstring(L, DCLUA_PROGRESS " '%s': %I", b->label,
                    (lua_Integer)b->done);
  }
  return 1;
}

void dclua_open_progress(lua_State* L) {
  static const luaL_Reg meta[] = {{"__gc", progress_close},
                                  {"__close", progress_close},
                                  {"__tostring", progress_tostring},
                                  {NULL, NULL}};
  static const luaL_Reg methods[] = {{"update", progress_update},
                                     {"close", progress_close},
                                     {NULL, NULL}};
  const char* env = getenv("DC_PROGRESS");
  if (parse_mode(env) == MODE_INVALID) {
    dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "DC_PROGRESS: '%s' is not "
                 "one of auto, on, off, always", env);
  }
  dclua_class_new(L, DCLUA_PROGRESS, meta, methods);
  lua_pushcfunction(L, l_progress);
  lua_setfield(L, -2, "progress");
}

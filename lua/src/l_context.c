// l_context.c: the state the binding keeps per lua_State: the context the
// module works in, the queue of Lua calls posted by engine threads, and
// the runner's settings (progress line, the directory a sandboxed script
// may write to).
//
// The state lives in the registry under the address of |state_key|, in a
// userdata whose __gc closes the queue (so no engine thread waits for Lua
// any more) and then releases the context when the lua_State closes.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dclua_internal.h"

static const char state_key = 's';

#define STATE_MT "dc.state"

typedef struct dclua_state_t {
  dc_context_t* context;  // NULL until first use
  dclua_queue_t* queue;   // NULL once closed
  bool progress;
  char* write_root;  // realpath of the writable directory; NULL: any
  bool sandboxed;
} dclua_state_t;

static int state_gc(lua_State* L) {
  dclua_state_t* state = luaL_checkudata(L, 1, STATE_MT);
  if (state->queue != NULL) dclua_queue_close(state->queue);
  state->queue = NULL;
  free(state->write_root);
  state->write_root = NULL;
  dc_context_release(state->context);
  state->context = NULL;
  return 0;
}

static dclua_state_t* find_state(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &state_key);
  dclua_state_t* state = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return state;
}

// Creates the state empty first, so that an error while filling it leaks
// nothing.
static dclua_state_t* state(lua_State* L) {
  dclua_state_t* s = find_state(L);
  if (s != NULL) return s;
  s = lua_newuserdatauv(L, sizeof(*s), 0);
  memset(s, 0, sizeof(*s));
  if (luaL_newmetatable(L, STATE_MT)) {
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &state_key);
  s->queue = dclua_queue_create();
  if (s->queue == NULL) luaL_error(L, "dc: out of memory");
  return s;
}

dc_status_t dclua_set_context(lua_State* L, dc_context_t* context) {
  if (L == NULL || context == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_set_context: NULL state or context");
  }
  dclua_state_t* s = find_state(L);
  if (s != NULL && s->context != NULL) {
    return dc_set_error(DC_ERR_FAILED_PRECONDITION,
                        "dclua_set_context: the state already has a context");
  }
  s = state(L);
  dc_context_retain(context);
  s->context = context;
  return DC_OK;
}

dc_context_t* dclua_context(lua_State* L) {
  dclua_state_t* s = state(L);
  if (s->context == NULL) {
    dc_context_t* context = NULL;
    DCLUA_CHECK(L, dc_context_create(NULL, &context));
    s->context = context;
  }
  return s->context;
}

dclua_queue_t* dclua_state_queue(lua_State* L) { return state(L)->queue; }

void dclua_set_progress(lua_State* L, bool enabled) {
  if (L != NULL) state(L)->progress = enabled;
}

bool dclua_progress_enabled(lua_State* L) { return state(L)->progress; }

bool dclua_sandboxed(lua_State* L) { return state(L)->sandboxed; }

dc_status_t dclua_set_write_root(lua_State* L, const char* directory) {
  if (L == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_set_write_root: NULL state");
  }
  char* root = NULL;
  if (directory != NULL) {
    root = realpath(directory, NULL);
    if (root == NULL) {
      return dc_set_error(DC_ERR_NOT_FOUND,
                          "dclua_set_write_root: '%s': %s", directory,
                          strerror(errno));
    }
  }
  dclua_state_t* s = state(L);
  free(s->write_root);
  s->write_root = root;
  s->sandboxed = true;
  return DC_OK;
}

// Whether |path| names a file below |root|: its directory, resolved, must
// be |root| or under it (so "..", links and absolute paths cannot leave).
static bool is_below(const char* root, const char* path) {
  char dir[PATH_MAX];
  const char* slash = strrchr(path, '/');
  if (slash == NULL) {
    strcpy(dir, ".");
  } else if (slash == path) {
    strcpy(dir, "/");
  } else {
    size_t n = (size_t)(slash - path);
    if (n >= sizeof(dir)) return false;
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  char resolved[PATH_MAX];
  if (realpath(dir, resolved) == NULL) return false;
  size_t n = strlen(root);
  return strncmp(resolved, root, n) == 0 &&
         (resolved[n] == '\0' || resolved[n] == '/' || strcmp(root, "/") == 0);
}

bool dclua_path_writable(lua_State* L, const char* path) {
  dclua_state_t* s = state(L);
  if (!s->sandboxed) return true;
  return s->write_root != NULL && path != NULL && is_below(s->write_root, path);
}

void dclua_check_writable(lua_State* L, const char* path) {
  if (dclua_path_writable(L, path)) return;
  dclua_state_t* s = state(L);
  if (s->write_root == NULL) {
    dclua_raisef(L, DC_ERR_PERMISSION_DENIED,
                 "sandbox: writing '%s' is not allowed (no writable "
                 "directory)", path);
  }
  dclua_raisef(L, DC_ERR_PERMISSION_DENIED,
               "sandbox: writing '%s' is not allowed (only below %s)", path,
               s->write_root);
}

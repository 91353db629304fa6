// l_engine.c: the embedding API (dclua_engine_t, see dclua.h): a Lua state
// with the module open, globals shared with the host, runs that turn
// script errors into statuses, and the memory and time limits.
//
// The engine is its state's allocator user data, so the allocator, the
// count hook and the message handler find it from any thread of the state
// (coroutines included) through lua_getallocf. Every access to the state
// that may raise (a memory error, a metamethod of _G) runs in protected
// mode, so a host never meets a Lua panic.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <lualib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dclua_internal.h"
#include "l_sandbox.h"
#include "l_watchdog.h"

// Lua instructions between two looks at the clock under a time limit.
#define HOOK_COUNT 1000

#define RETURN_IF_ERROR(expr)             \
  do {                                    \
    dc_status_t status_ = (expr);         \
    if (status_ != DC_OK) return status_; \
  } while (0)

struct dclua_engine_t {
  lua_State* L;
  dc_context_t* context;     // borrowed: the state holds a reference
  char* error;               // message of the last failed run; NULL: none
  dc_status_t error_status;  // of the error value, set by message_handler
  bool usage_error;          // the error value was a usage error
  bool sandboxed;            // chunks load from source only
  // Memory limit: every allocation of the state goes through
  // engine_alloc, which counts the bytes.
  size_t memory_used;
  size_t memory_limit;  // 0: none
  bool memory_refused;  // engine_alloc refused a block during this run
  // Time limit: a count hook compares the clock with the deadline, the
  // module's waits end by it (dclua_run_deadline_ns); the
  // watchdog interrupts the checked kernels still running then, and the
  // context's kernel time limit (saved_kernel_limit outside runs) is the
  // run's own.
  double time_limit;  // seconds; 0: none
  uint64_t deadline_ns;  // dclua_now_ns's clock; 0 outside runs
  bool deadline_passed;
  dclua_watchdog_t* watchdog;  // made by the first time limit
  uint64_t saved_kernel_limit;
  int run_depth;  // runs in progress (a host function may call back in)
};

// Registry key of the engine (light userdata), for the module's waits
// (dclua_run_deadline_ns): a state the engine did not make has none, so
// its allocator's user data tells nothing.
static const char engine_key = 'e';

static dclua_engine_t* engine_of(lua_State* L) {
  void* user_data = NULL;
  lua_getallocf(L, &user_data);
  return user_data;
}

// The engine whose state |L| is, or NULL.
static dclua_engine_t* registered_engine(lua_State* L) {
  dclua_engine_t* engine = NULL;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &engine_key) == LUA_TLIGHTUSERDATA) {
    engine = lua_touserdata(L, -1);
  }
  lua_pop(L, 1);
  return engine;
}

// Checks the arguments every public function shares.
static dc_status_t check_name(const dclua_engine_t* engine, const char* name,
                              const char* fn) {
  if (engine == NULL || name == NULL || name[0] == '\0') {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "%s: NULL engine, or NULL or empty name", fn);
  }
  return DC_OK;
}

//===-- Errors ----------------------------------------------------------===//

// Pushes the text of the error value at |index|: itself if a string, its
// __tostring (dc error objects: "CODE: message"), or its type.
static const char* push_error_text(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TSTRING || lua_type(L, index) == LUA_TNUMBER) {
    lua_pushvalue(L, index);
    return lua_tostring(L, -1);
  }
  if (luaL_callmeta(L, index, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
    return lua_tostring(L, -1);
  }
  return lua_pushfstring(L, "(error object is a %s value)",
                         luaL_typename(L, index));
}

// Whether the error value at |index| is a usage error: a table with
// usage = true and a string message (a script's bad command line).
static bool is_usage_error(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE) return false;
  lua_pushliteral(L, "usage");
  bool usage = lua_rawget(L, index) == LUA_TBOOLEAN && lua_toboolean(L, -1);
  lua_pushliteral(L, "message");
  bool text = lua_rawget(L, index) == LUA_TSTRING;
  lua_pop(L, 2);
  return usage && text;
}

// [-1, +1, m]  The message handler of runs: notes the status of the error
// value and turns it into its text with a traceback (a usage error: its
// message alone, which is all its user needs).
static int message_handler(lua_State* L) {
  dclua_engine_t* engine = engine_of(L);
  engine->usage_error = is_usage_error(L, 1);
  if (engine->usage_error) {
    engine->error_status = DC_ERR_INVALID_ARGUMENT;
    lua_pushliteral(L, "message");
    lua_rawget(L, 1);
    return 1;
  }
  engine->error_status = dclua_error_status(L, 1);
  luaL_traceback(L, L, push_error_text(L, 1), 1);
  return 1;
}

// Keeps |message| as the engine's error and the thread's dc_last_error().
static dc_status_t set_error(dclua_engine_t* engine, dc_status_t status,
                             const char* message) {
  free(engine->error);
  engine->error = strdup(message);
  return dc_set_error(status, "%s", message);
}

// Runs |fn| with the light userdata |user_data| in protected mode, for the
// functions that only set up the state. An error becomes its status, with
// the message of a dc error object or the text of any other value.
static dc_status_t protect(dclua_engine_t* engine, lua_CFunction fn,
                           void* user_data) {
  lua_State* L = engine->L;
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, user_data);
  int lua_status = lua_pcall(L, 1, 0, 0);
  if (lua_status == LUA_OK) return DC_OK;
  dc_status_t status = lua_status == LUA_ERRMEM ? DC_ERR_OUT_OF_MEMORY
                                                : dclua_error_status(L, -1);
  if (dclua_is_error(L, -1)) {
    lua_getfield(L, -1, "message");
  } else {
    lua_pushstring(L, lua_tostring(L, -1));
  }
  const char* message = lua_tostring(L, -1);
  dc_set_error(status, "%s", message != NULL ? message : "error");
  lua_pop(L, 2);
  return status;
}

//===-- Memory limit ----------------------------------------------------===//

// The state's lua_Alloc: realloc and free, counting the bytes, and
// refusing to grow past the limit.
static void* engine_alloc(void* user_data, void* block, size_t old_size,
                          size_t new_size) {
  dclua_engine_t* engine = user_data;
  if (block == NULL) old_size = 0;  // then it tells the kind of object
  if (new_size == 0) {
    free(block);
    engine->memory_used -= old_size;
    return NULL;
  }
  if (new_size > old_size && engine->memory_limit != 0 &&
      engine->memory_used + (new_size - old_size) > engine->memory_limit) {
    engine->memory_refused = true;
    return NULL;
  }
  void* p = realloc(block, new_size);
  if (p != NULL) engine->memory_used += new_size - old_size;  // mod 2^n
  return p;
}

dc_status_t dclua_engine_set_memory_limit(dclua_engine_t* engine,
                                          size_t bytes) {
  if (engine == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_set_memory_limit: NULL engine");
  }
  engine->memory_limit = bytes;
  return DC_OK;
}

size_t dclua_engine_memory_used(dclua_engine_t* engine) {
  return engine != NULL ? engine->memory_used : 0;
}

//===-- Time limit ------------------------------------------------------===//

// Raises the time-limit error in |L|, noting that the deadline passed. The
// hook then runs at every instruction of the thread, so that a pcall that
// catches the error only makes the next instruction raise again: the run
// unwinds.
static int raise_time_limit(lua_State* L, dclua_engine_t* engine);

// The count hook: raises once the deadline has passed.
static void time_hook(lua_State* L, lua_Debug* ar) {
  (void)ar;
  dclua_engine_t* engine = engine_of(L);
  if (engine->deadline_ns == 0) {  // outside runs: back to the usual count
    lua_sethook(L, time_hook, LUA_MASKCOUNT, HOOK_COUNT);
    return;
  }
  if (!engine->deadline_passed && dclua_now_ns() < engine->deadline_ns) {
    return;
  }
  raise_time_limit(L, engine);
}

static int raise_time_limit(lua_State* L, dclua_engine_t* engine) {
  engine->deadline_passed = true;
  lua_sethook(L, time_hook, LUA_MASKCOUNT, 1);
  return dclua_raisef(L, DC_ERR_DEADLINE_EXCEEDED,
                      "time limit exceeded (%g s)", engine->time_limit);
}

uint64_t dclua_run_deadline_ns(lua_State* L) {
  dclua_engine_t* engine = registered_engine(L);
  return engine != NULL ? engine->deadline_ns : 0;
}

bool dclua_time_limit_stopped(lua_State* L) {
  dclua_engine_t* engine = registered_engine(L);
  return engine != NULL && engine->deadline_ns != 0 &&
         (engine->deadline_passed ||
          (engine->watchdog != NULL &&
           dclua_watchdog_fired(engine->watchdog)));
}

int dclua_raise_time_limit(lua_State* L) {
  dclua_engine_t* engine = registered_engine(L);
  if (engine != NULL && engine->deadline_ns != 0) {
    return raise_time_limit(L, engine);
  }
  // No run in progress (a finalizer after it): the error alone.
  return dclua_raisef(L, DC_ERR_DEADLINE_EXCEEDED, "time limit exceeded");
}

dc_status_t dclua_engine_set_time_limit(dclua_engine_t* engine,
                                        double seconds) {
  if (engine == NULL || !isfinite(seconds) || seconds < 0) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_set_time_limit: NULL engine, or a "
                        "negative or infinite limit");
  }
  if (seconds > 0 && engine->watchdog == NULL) {
    RETURN_IF_ERROR(dclua_watchdog_create(engine->context, &engine->watchdog));
  }
  engine->time_limit = seconds;
  return DC_OK;
}

// The run's time limit also bounds the kernels it dispatches.
static void limit_kernels(dclua_engine_t* engine) {
  uint64_t limit = dclua_seconds_to_ns(engine->time_limit);
  dc_context_params_t params;
  if (dc_context_params(engine->context, &params) == DC_OK) {
    engine->saved_kernel_limit = params.kernel_time_limit_ns;
  }
  dc_context_set_kernel_time_limit(engine->context, limit);
  dclua_watchdog_arm(engine->watchdog, engine->deadline_ns);
}

// Starts the outermost run: clears what the last one noted and starts the
// clock.
static void begin_run(dclua_engine_t* engine) {
  if (engine->run_depth++ > 0) return;
  engine->memory_refused = false;
  engine->deadline_passed = false;
  if (engine->time_limit > 0) {
    uint64_t now = dclua_now_ns();
    engine->deadline_ns = now + dclua_seconds_to_ns(engine->time_limit);
    lua_sethook(engine->L, time_hook, LUA_MASKCOUNT, HOOK_COUNT);
    limit_kernels(engine);
  }
}

static void end_run(dclua_engine_t* engine) {
  if (--engine->run_depth > 0) return;
  if (engine->deadline_ns != 0 && engine->watchdog != NULL) {
    dclua_watchdog_arm(engine->watchdog, 0);
    dc_context_set_kernel_time_limit(engine->context,
                                     engine->saved_kernel_limit);
  }
  engine->deadline_ns = 0;
  engine->deadline_passed = false;
  if (lua_gethook(engine->L) == time_hook) {
    lua_sethook(engine->L, time_hook, LUA_MASKCOUNT, HOOK_COUNT);
  }
}

//===-- Runs ------------------------------------------------------------===//

// Describes a memory failure, naming the limit when there is one.
static dc_status_t memory_failure(dclua_engine_t* engine) {
  char message[128];
  if (engine->memory_limit == 0) {
    snprintf(message, sizeof(message), "not enough memory");
  } else {
    snprintf(message, sizeof(message),
             "not enough memory (the memory limit of %.1f MiB was reached)",
             (double)engine->memory_limit / (1024.0 * 1024.0));
  }
  return set_error(engine, DC_ERR_OUT_OF_MEMORY, message);
}

// Turns a failed lua_pcall (its error value on top, popped here) into the
// run's status and message.
static dc_status_t run_failure(dclua_engine_t* engine, int lua_status) {
  lua_State* L = engine->L;
  const char* text = lua_tostring(L, -1);
  dc_status_t status = DC_ERR_UNKNOWN;
  // A kernel the time limit interrupted failed its call: the limit ended
  // the run.
  if (!engine->deadline_passed && engine->watchdog != NULL &&
      engine->deadline_ns != 0 && dclua_watchdog_fired(engine->watchdog)) {
    engine->deadline_passed = true;
    text = NULL;
  }
  if (engine->deadline_passed) {
    status = DC_ERR_DEADLINE_EXCEEDED;
    if (lua_status != LUA_ERRRUN || text == NULL) text = "time limit exceeded";
  } else if (lua_status == LUA_ERRMEM ||
             (lua_status == LUA_ERRERR && engine->memory_refused)) {
    lua_pop(L, 1);
    return memory_failure(engine);
  } else if (lua_status == LUA_ERRRUN) {
    status = engine->error_status;
  }
  status = set_error(engine, status, text != NULL ? text : "error");
  lua_pop(L, 1);
  return status;
}

// Calls the function below |nargs| arguments with the message handler,
// as one run.
static dc_status_t run_call(dclua_engine_t* engine, int nargs, int nresults) {
  lua_State* L = engine->L;
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  engine->usage_error = false;
  begin_run(engine);
  int lua_status = lua_pcall(L, nargs, nresults, base);
  lua_remove(L, base);
  dc_status_t status =
      lua_status == LUA_OK ? DC_OK : run_failure(engine, lua_status);
  end_run(engine);
  return status;
}

// Turns a failed load (its message on top, popped here) into a status.
static dc_status_t load_failure(dclua_engine_t* engine, int lua_status,
                                const char* path) {
  engine->usage_error = false;
  dc_status_t status = DC_ERR_INVALID_ARGUMENT;  // a syntax error
  if (lua_status == LUA_ERRMEM) {
    lua_pop(engine->L, 1);
    return memory_failure(engine);
  }
  if (lua_status == LUA_ERRFILE) {
    if (path == NULL) {
      status = DC_ERR_UNAVAILABLE;  // standard input could not be read
    } else if (access(path, F_OK) != 0) {
      status = DC_ERR_NOT_FOUND;
    } else if (access(path, R_OK) != 0) {
      status = DC_ERR_PERMISSION_DENIED;
    }
  }
  const char* text = lua_tostring(engine->L, -1);
  status = set_error(engine, status, text != NULL ? text : "cannot load");
  lua_pop(engine->L, 1);
  return status;
}

// [-0, +n, e]  Pushes arg[1..#arg], the arguments of a script.
static int push_script_args(lua_State* L) {
  if (lua_getglobal(L, "arg") != LUA_TTABLE) return 0;
  lua_Integer n = luaL_len(L, 1);
  luaL_checkstack(L, (int)(n > 200 ? 200 : n), "too many script arguments");
  for (lua_Integer i = 1; i <= n; ++i) {
    if (i % 200 == 0) luaL_checkstack(L, 200, "too many script arguments");
    lua_geti(L, 1, i);
  }
  return (int)n;
}

dc_status_t dclua_engine_run_file(dclua_engine_t* engine, const char* path) {
  if (engine == NULL || path == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_run_file: NULL engine or path");
  }
  lua_State* L = engine->L;
  const char* file = strcmp(path, "-") == 0 ? NULL : path;
  int lua_status = luaL_loadfilex(L, file, engine->sandboxed ? "t" : NULL);
  if (lua_status != LUA_OK) return load_failure(engine, lua_status, file);
  int top = lua_gettop(L);
  lua_pushcfunction(L, push_script_args);
  lua_status = lua_pcall(L, 0, LUA_MULTRET, 0);
  if (lua_status != LUA_OK) {
    dc_status_t status = run_failure(engine, lua_status);
    lua_pop(L, 1);  // the chunk
    return status;
  }
  return run_call(engine, lua_gettop(L) - top, 0);
}

dc_status_t dclua_engine_run_string(dclua_engine_t* engine, const char* chunk,
                                    const char* chunk_name) {
  if (engine == NULL || chunk == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_run_string: NULL engine or chunk");
  }
  int lua_status = luaL_loadbufferx(engine->L, chunk, strlen(chunk),
                                    chunk_name != NULL ? chunk_name : "=chunk",
                                    engine->sandboxed ? "t" : NULL);
  if (lua_status != LUA_OK) return load_failure(engine, lua_status, NULL);
  return run_call(engine, 0, 0);
}

dc_status_t dclua_engine_call(dclua_engine_t* engine, int nargs, int nresults) {
  if (engine == NULL || nargs < 0 || nresults < LUA_MULTRET ||
      lua_gettop(engine->L) < nargs + 1) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_call: NULL engine, bad counts, or "
                        "fewer than %d values on the stack",
                        nargs < 0 ? 1 : nargs + 1);
  }
  if (nresults != LUA_MULTRET && !lua_checkstack(engine->L, nresults)) {
    return dc_set_error(DC_ERR_OUT_OF_MEMORY,
                        "dclua_engine_call: no stack for %d results", nresults);
  }
  return run_call(engine, nargs, nresults);
}

const char* dclua_engine_error(dclua_engine_t* engine) {
  if (engine == NULL) return NULL;
  return engine->error != NULL ? engine->error : "";
}

bool dclua_engine_usage_error(const dclua_engine_t* engine) {
  return engine != NULL && engine->usage_error;
}

//===-- Globals ---------------------------------------------------------===//

// A global to set or read, for the protected functions below.
typedef struct global_t {
  const char* name;
  int type;      // LUA_TNUMBER, LUA_TSTRING, LUA_TBOOLEAN, LUA_TUSERDATA (a
                 // dc.buffer) or LUA_TFUNCTION (a C function)
  bool integer;  // a number that is an integer
  lua_Number number;
  lua_Integer integer_value;
  bool boolean;
  const char* string;  // to set
  char* out;           // get_string's copy
  size_t out_size;
  size_t out_length;
  dc_buffer_t* buffer;
  lua_CFunction fn;
  void* user_data;
} global_t;

// [-0, +0, e]  Sets the global a global_t describes.
static int set_global(lua_State* L) {
  global_t* g = lua_touserdata(L, 1);
  switch (g->type) {
    case LUA_TNUMBER:
      if (g->integer) {
        lua_pushinteger(L, g->integer_value);
      } else {
        lua_pushnumber(L, g->number);
      }
      break;
    case LUA_TSTRING:
      lua_pushstring(L, g->string);
      break;
    case LUA_TBOOLEAN:
      lua_pushboolean(L, g->boolean);
      break;
    case LUA_TUSERDATA:
      dc_buffer_retain(g->buffer);
      dclua_push_buffer(L, g->buffer);  // takes over the reference
      break;
    default:
      lua_pushlightuserdata(L, g->user_data);
      lua_pushcclosure(L, g->fn, 1);
      break;
  }
  lua_setglobal(L, g->name);
  return 0;
}

static dc_status_t set_value(dclua_engine_t* engine, global_t* g,
                             const char* fn) {
  RETURN_IF_ERROR(check_name(engine, g->name, fn));
  return protect(engine, set_global, g);
}

dc_status_t dclua_engine_set_number(dclua_engine_t* engine, const char* name,
                                    double value) {
  global_t g = {.name = name, .type = LUA_TNUMBER, .number = value};
  return set_value(engine, &g, "dclua_engine_set_number");
}

dc_status_t dclua_engine_set_integer(dclua_engine_t* engine, const char* name,
                                     int64_t value) {
  global_t g = {.name = name,
                .type = LUA_TNUMBER,
                .integer = true,
                .integer_value = (lua_Integer)value};
  return set_value(engine, &g, "dclua_engine_set_integer");
}

dc_status_t dclua_engine_set_string(dclua_engine_t* engine, const char* name,
                                    const char* value) {
  if (value == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_set_string: NULL value");
  }
  global_t g = {.name = name, .type = LUA_TSTRING, .string = value};
  return set_value(engine, &g, "dclua_engine_set_string");
}

dc_status_t dclua_engine_set_boolean(dclua_engine_t* engine, const char* name,
                                     bool value) {
  global_t g = {.name = name, .type = LUA_TBOOLEAN, .boolean = value};
  return set_value(engine, &g, "dclua_engine_set_boolean");
}

dc_status_t dclua_engine_set_buffer(dclua_engine_t* engine, const char* name,
                                    dc_buffer_t* buffer) {
  static const char* fn = "dclua_engine_set_buffer";
  RETURN_IF_ERROR(check_name(engine, name, fn));
  dc_device_t* device = dc_buffer_device(buffer);
  if (device == NULL) {  // the one stale-handle message (conventions.md)
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "%s: 'buffer' is NULL or a released buffer", fn);
  }
  if (dc_device_context(device) != engine->context) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "%s: buffer of another context", fn);
  }
  global_t g = {.name = name, .type = LUA_TUSERDATA, .buffer = buffer};
  return set_value(engine, &g, fn);
}

dc_status_t dclua_engine_register(dclua_engine_t* engine, const char* name,
                                  lua_CFunction fn, void* user_data) {
  static const char* what = "dclua_engine_register";
  RETURN_IF_ERROR(check_name(engine, name, what));
  if (fn == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT, "%s: NULL function", what);
  }
  global_t g = {
      .name = name, .type = LUA_TFUNCTION, .fn = fn, .user_data = user_data};
  return protect(engine, set_global, &g);
}

// [-0, +0, v]  Raises INVALID_ARGUMENT: the global on top is not a
// |wanted|.
static int wrong_type(lua_State* L, const global_t* g) {
  static const char* const wanted[] = {[LUA_TNUMBER] = "a number",
                                       [LUA_TSTRING] = "a string",
                                       [LUA_TBOOLEAN] = "a boolean",
                                       [LUA_TUSERDATA] = "a dc.buffer"};
  const char* got = luaL_typename(L, -1);
  if (luaL_getmetafield(L, -1, "__name") == LUA_TSTRING) {
    got = lua_tostring(L, -1);
  }
  return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "global '%s' is a %s, not %s",
                      g->name, got,
                      g->integer ? "an integer" : wanted[g->type]);
}

// Copies the string on top into the caller's buffer, as snprintf does.
static void copy_string(lua_State* L, global_t* g) {
  size_t length = 0;
  const char* s = lua_tolstring(L, -1, &length);
  g->out_length = length;
  if (g->out_size == 0) return;
  size_t n = length < g->out_size - 1 ? length : g->out_size - 1;
  memcpy(g->out, s, n);
  g->out[n] = '\0';
}

// Reads the dc.buffer on top, retained.
static void read_buffer(lua_State* L, global_t* g) {
  dclua_box_t* box = dclua_box_test(L, -1, DCLUA_BUFFER);
  if (box == NULL) wrong_type(L, g);
  if (box->p == NULL) {
    dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
                 "global '%s' is a closed dc.buffer", g->name);
  }
  g->buffer = dclua_check_buffer(L, lua_gettop(L));
  dc_buffer_retain(g->buffer);
}

// [-0, +0, e]  Reads the global a global_t describes into it.
static int get_global(lua_State* L) {
  global_t* g = lua_touserdata(L, 1);
  int type = lua_getglobal(L, g->name);
  if (type == LUA_TNIL) {
    return dclua_raisef(L, DC_ERR_NOT_FOUND, "global '%s' is not set", g->name);
  }
  if (g->type == LUA_TUSERDATA) {
    read_buffer(L, g);
  } else if (type != g->type) {
    wrong_type(L, g);
  } else if (type == LUA_TBOOLEAN) {
    g->boolean = lua_toboolean(L, -1);
  } else if (type == LUA_TSTRING) {
    copy_string(L, g);
  } else if (!g->integer) {
    g->number = lua_tonumber(L, -1);
  } else {
    int exact = 0;
    g->integer_value = lua_tointegerx(L, -1, &exact);
    if (!exact) {
      return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT,
                          "global '%s' is %s, not an integer", g->name,
                          luaL_tolstring(L, -1, NULL));
    }
  }
  return 0;
}

static dc_status_t get_value(dclua_engine_t* engine, global_t* g,
                             const void* out, const char* fn) {
  RETURN_IF_ERROR(check_name(engine, g->name, fn));
  if (out == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT, "%s: NULL out pointer", fn);
  }
  return protect(engine, get_global, g);
}

dc_status_t dclua_engine_get_number(dclua_engine_t* engine, const char* name,
                                    double* out) {
  global_t g = {.name = name, .type = LUA_TNUMBER};
  RETURN_IF_ERROR(get_value(engine, &g, out, "dclua_engine_get_number"));
  *out = g.number;
  return DC_OK;
}

dc_status_t dclua_engine_get_integer(dclua_engine_t* engine, const char* name,
                                     int64_t* out) {
  global_t g = {.name = name, .type = LUA_TNUMBER, .integer = true};
  RETURN_IF_ERROR(get_value(engine, &g, out, "dclua_engine_get_integer"));
  *out = (int64_t)g.integer_value;
  return DC_OK;
}

dc_status_t dclua_engine_get_boolean(dclua_engine_t* engine, const char* name,
                                     bool* out) {
  global_t g = {.name = name, .type = LUA_TBOOLEAN};
  RETURN_IF_ERROR(get_value(engine, &g, out, "dclua_engine_get_boolean"));
  *out = g.boolean;
  return DC_OK;
}

dc_status_t dclua_engine_get_string(dclua_engine_t* engine, const char* name,
                                    char* buffer, size_t size,
                                    size_t* out_length) {
  static const char* fn = "dclua_engine_get_string";
  global_t g = {
      .name = name, .type = LUA_TSTRING, .out = buffer, .out_size = size};
  if (buffer == NULL && size != 0) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT, "%s: NULL buffer of %zu bytes",
                        fn, size);
  }
  RETURN_IF_ERROR(check_name(engine, name, fn));
  RETURN_IF_ERROR(protect(engine, get_global, &g));
  if (out_length != NULL) *out_length = g.out_length;
  return DC_OK;
}

dc_status_t dclua_engine_get_buffer(dclua_engine_t* engine, const char* name,
                                    dc_buffer_t** out_buffer) {
  global_t g = {.name = name, .type = LUA_TUSERDATA};
  RETURN_IF_ERROR(get_value(engine, &g, out_buffer, "dclua_engine_get_buffer"));
  *out_buffer = g.buffer;
  return DC_OK;
}

// The arguments of dclua_engine_set_args, for set_arg_table.
typedef struct args_t {
  int argc;
  const char* const* argv;
} args_t;

// [-0, +0, e]  Sets the global `arg` from an args_t.
static int set_arg_table(lua_State* L) {
  const args_t* a = lua_touserdata(L, 1);
  lua_createtable(L, a->argc > 1 ? a->argc - 1 : 0, 1);
  for (int i = 0; i < a->argc; ++i) {
    lua_pushstring(L, a->argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_setglobal(L, "arg");
  return 0;
}

dc_status_t dclua_engine_set_args(dclua_engine_t* engine, int argc,
                                  const char* const* argv) {
  bool valid = engine != NULL && argc >= 0 && (argc == 0 || argv != NULL);
  for (int i = 0; valid && i < argc; ++i) valid = argv[i] != NULL;
  if (!valid) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_set_args: NULL engine, negative argc "
                        "or a NULL argument");
  }
  args_t a = {argc, argv};
  return protect(engine, set_arg_table, &a);
}

//===-- The engine ------------------------------------------------------===//

// [-0, +0, e]  Opens the libraries and the module into a new engine's
// state, in the context given as light userdata (NULL: its own).
static int open_state(lua_State* L) {
  dc_context_t* context = lua_touserdata(L, 1);
  lua_pushlightuserdata(L, engine_of(L));
  lua_rawsetp(L, LUA_REGISTRYINDEX, &engine_key);
  luaL_openlibs(L);
  if (context != NULL) DCLUA_CHECK(L, dclua_set_context(L, context));
  luaL_requiref(L, "dc", luaopen_dc, 1);
  lua_pop(L, 1);
  engine_of(L)->context = dclua_context(L);
  return 0;
}

dc_status_t dclua_engine_create(dc_context_t* context,
                                dclua_engine_t** out_engine) {
  if (out_engine == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_create: NULL out_engine");
  }
  *out_engine = NULL;
  dclua_engine_t* engine = calloc(1, sizeof(*engine));
  if (engine != NULL) engine->L = luaL_newstate();
  if (engine == NULL || engine->L == NULL) {
    free(engine);
    return dc_set_error(DC_ERR_OUT_OF_MEMORY,
                        "dclua_engine_create: no memory for a Lua state");
  }
  // From here the engine counts the state's bytes; its blocks so far came
  // from realloc too, so engine_alloc can free them.
  lua_State* L = engine->L;
  engine->memory_used =
      (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
  lua_setallocf(L, engine_alloc, engine);
  dc_status_t status = protect(engine, open_state, context);
  if (status != DC_OK) {
    dclua_engine_destroy(engine);
    return status;
  }
  *out_engine = engine;
  return DC_OK;
}

void dclua_engine_destroy(dclua_engine_t* engine) {
  if (engine == NULL) return;
  engine->memory_limit = 0;  // finalizers may still allocate
  engine->time_limit = 0;
  dclua_watchdog_destroy(engine->watchdog);
  lua_close(engine->L);
  free(engine->error);
  free(engine);
}

lua_State* dclua_engine_state(dclua_engine_t* engine) {
  return engine != NULL ? engine->L : NULL;
}

dc_context_t* dclua_engine_context(dclua_engine_t* engine) {
  return engine != NULL ? engine->context : NULL;
}

// [-0, +0, e]  Applies the sandbox to the state; the root comes as light
// userdata.
static int open_sandbox(lua_State* L) {
  dclua_sandbox_open(L, lua_touserdata(L, 1));
  return 0;
}

dc_status_t dclua_engine_sandbox(dclua_engine_t* engine,
                                 const char* write_dir) {
  if (engine == NULL) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "dclua_engine_sandbox: NULL engine");
  }
  RETURN_IF_ERROR(dclua_set_write_root(engine->L, write_dir));
  char* root = write_dir != NULL ? realpath(write_dir, NULL) : NULL;
  if (write_dir != NULL && root == NULL) {
    return dc_set_error(DC_ERR_NOT_FOUND, "dclua_engine_sandbox: '%s': %s",
                        write_dir, strerror(errno));
  }
  engine->sandboxed = true;  // even if the rest fails: no way back
  dc_status_t status = protect(engine, open_sandbox, root);
  free(root);
  return status;
}

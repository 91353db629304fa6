// l_stream.c: streams, stream groups, cancel tokens, and the futures that
// stream reads return, as Lua objects.
//
// A dc.stream owns one reference to a dc_stream_t. Its commands are queued
// at once and run later on engine threads; the core's commands hold
// references to the buffers, kernels and events they use, so a script may
// drop its own objects as soon as a command is queued.
//
// Host memory is the one thing the core does not keep alive, and Lua
// tables cannot be read by engine threads at all. So s:write converts its
// values *now* into a staging buffer on the CPU (filled by buf:write, which
// checks every value exactly as buffers do) and queues a buffer-to-buffer
// copy; s:read queues a copy into a staging buffer and returns a dc.future
// holding it and an event recorded after the copy. Both staging buffers
// are ordinary dc_buffer_t objects that the queued copy retains, so
// nothing a command touches can be freed under it, whatever happens to
// the script's objects or the stream.
//
// A host function (s:host) is a Lua function, and Lua runs only on the Lua
// thread: the engine thread that reaches the command calls it through
// dclua_callback_call and waits, and the Lua thread runs it inside its next
// blocking call or dc.poll(). The callback is released by a completion
// callback of an event recorded right after the host command, because that
// record completes whether the host command ran, was skipped after a
// failure, or was cancelled. A host function that syncs its own stream
// would wait for itself; the binding keeps a registry table of the streams
// whose host function is running and refuses such a sync.
//
// Every wait goes through dclua_wait, with the object waited for retained,
// so that a Lua callback run during the wait may even close it, and ends
// by the engine run's deadline when there is one (l_watchdog.h).
// SPDX-License-Identifier: MIT
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dclua_internal.h"
#include "l_watchdog.h"

#define DCLUA_FUTURE "dc.future"

// Registry field: a table of the streams (light userdata) whose host
// function is running on the Lua thread, with how many. l_event.c reads it
// too, to refuse a wait that would wait for its own host function.
#define RUNNING_HOSTS "dc.running_hosts"
#define HOST_MARK "dc.host_mark"  // see host_trampoline

static const char* const priority_names[] = {"normal", "low", "high", NULL};

//===-- Argument helpers ------------------------------------------------===//

// Reads an optional 1-based element index at |index| (default 1) and
// returns it 0-based.
static size_t opt_first(lua_State* L, int index) {
  lua_Integer first = luaL_optinteger(L, index, 1);
  luaL_argcheck(L, first >= 1, index, "element indexes start at 1");
  return (size_t)(first - 1);
}

// Reads an optional element count at |index| (default |def|).
static size_t opt_count(lua_State* L, int index, size_t def) {
  lua_Integer count = luaL_optinteger(L, index, (lua_Integer)def);
  luaL_argcheck(L, count >= 0, index, "count must be >= 0");
  return (size_t)count;
}

// Raises OUT_OF_RANGE unless elements [first, first + count) lie in
// |buffer|; messages count from 1, as scripts do.
static void check_range(lua_State* L, const char* fname, dc_buffer_t* buffer,
                        size_t first, size_t count) {
  size_t length = dc_buffer_length(buffer);
  if (first > length || count > length - first) {
    dclua_raisef(L, DC_ERR_OUT_OF_RANGE,
                 "%s: elements %zu..%zu are outside the buffer (%s, length "
                 "%zu)", fname, first + 1, first + count,
                 dc_dtype_name(dc_buffer_dtype(buffer)), length);
  }
}

static dc_device_t* cpu_device(lua_State* L) {
  dc_device_t* cpu = NULL;
  DCLUA_CHECK(L, dc_context_device(dclua_context(L), 0, &cpu));
  return cpu;
}

// Returns |text| past |prefix| if it starts with it.
static const char* skip_prefix(const char* text, const char* prefix) {
  size_t n = strlen(prefix);
  return strncmp(text, prefix, n) == 0 ? text + n : text;
}

// Re-raises the error of buf:write at the top of the stack as an error of
// |fname|, the call the script made: "stream:write: element 2: 300 does
// not fit in u8" (for a fill, of one value, without the element).
static int rethrow_in(lua_State* L, const char* fname, bool one_value) {
  if (!dclua_is_error(L, -1)) {
    return dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "%s: %s", fname,
                        luaL_tolstring(L, -1, NULL));
  }
  lua_getfield(L, -1, "message");
  const char* message = skip_prefix(luaL_optstring(L, -1, ""), "buf:write: ");
  if (one_value) message = skip_prefix(message, "element 1: ");
  lua_pushfstring(L, "%s: %s", fname, message);
  lua_setfield(L, -3, "message");
  lua_pop(L, 1);
  return lua_error(L);
}

// Creates a CPU buffer of |count| elements of |dtype| for a staging copy.
// Directly, not through dev:buffer, whose creation polls: queuing a
// command never runs Lua callbacks. (Under memory pressure the core waits
// a bounded time for queued work, then fails.)
static dc_buffer_t* new_staging(lua_State* L, dc_dtype_t dtype, size_t count,
                                const char* label) {
  dc_buffer_params_t params = {.dtype = dtype, .length = count,
                               .label = label};
  dc_buffer_t* staging = NULL;
  DCLUA_CHECK(L, dc_buffer_create(cpu_device(L), &params, &staging));
  dclua_push_buffer(L, staging);
  return staging;
}

// Pushes a staging buffer of |dtype| holding the values of the non-empty
// table or string at |init|, written by buf:write, which checks and
// converts every value exactly as buffers do. Errors name |fname|.
static dc_buffer_t* push_staging(lua_State* L, const char* fname,
                                 dc_dtype_t dtype, int init) {
  init = lua_absindex(L, init);
  size_t count = (size_t)luaL_len(L, init);
  size_t esize = dc_dtype_size(dtype);
  if (lua_type(L, init) == LUA_TSTRING) {
    if (count % esize != 0) {
      dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "%s: a string of %zu bytes "
                   "is not a whole number of %s elements", fname, count,
                   dc_dtype_name(dtype));
    }
    count /= esize;
  }
  dc_buffer_t* staging = new_staging(L, dtype, count, fname);
  lua_getfield(L, -1, "write");
  lua_pushvalue(L, -2);
  lua_pushvalue(L, init);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) rethrow_in(L, fname, count == 1);
  return staging;
}

// Closes the object at |index| now instead of at the next collection.
static void close_now(lua_State* L, int index) {
  if (luaL_callmeta(L, index, "__close")) lua_pop(L, 1);
}

//===-- Waiting ---------------------------------------------------------===//

// Whether a host function of |stream| is running on the Lua thread.
static bool host_running(lua_State* L, dc_stream_t* stream) {
  lua_getfield(L, LUA_REGISTRYINDEX, RUNNING_HOSTS);
  bool running = lua_rawgetp(L, -1, stream) != LUA_TNIL;
  lua_pop(L, 2);
  return running;
}

// Raises FAILED_PRECONDITION if waiting for |stream| would wait for the
// host function that is calling us.
static void refuse_own_stream(lua_State* L, dc_stream_t* stream,
                              const char* fname) {
  if (!host_running(L, stream)) return;
  dclua_raisef(L, DC_ERR_FAILED_PRECONDITION,
               "%s: called from a host function of stream '%s', which "
               "cannot wait for its own stream", fname,
               dc_stream_label(stream));
}

typedef struct stream_wait_t {
  dc_stream_t* stream;  // retained for the wait
  uint64_t timeout_ns;
} stream_wait_t;

static dc_status_t wait_sync(void* p) {
  stream_wait_t* w = p;
  return dc_stream_sync(w->stream, w->timeout_ns);
}

// Whether |stream| still has commands queued or running.
static bool stream_busy(const dc_stream_t* stream) {
  dc_stream_stats_t s;
  return dc_stream_stats(stream, &s) == DC_OK && s.queued > 0;
}

// dc_stream_reset waits without a limit, so under one it waits for the
// stream to drain first; its DEADLINE_EXCEEDED may also be the stream's
// own error, which the reset then clears and returns.
static dc_status_t wait_reset(void* p) {
  stream_wait_t* w = p;
  if (w->timeout_ns != DC_TIMEOUT_INFINITE &&
      dc_stream_sync(w->stream, w->timeout_ns) == DC_ERR_DEADLINE_EXCEEDED &&
      stream_busy(w->stream)) {
    return DC_ERR_DEADLINE_EXCEEDED;
  }
  return dc_stream_reset(w->stream);
}

// Runs |wait| for |stream| through dclua_wait, holding a reference, for at
// most |timeout_ns| and the time left before the run's deadline (then
// *|limited| is set: see dclua_wait_ended).
static dc_status_t stream_wait(lua_State* L, dc_stream_t* stream,
                               dc_status_t (*wait)(void*),
                               uint64_t timeout_ns, bool* limited) {
  stream_wait_t w = {stream, dclua_wait_budget_ns(L, timeout_ns, limited)};
  dc_stream_retain(stream);
  dc_status_t st = dclua_wait(L, wait, &w);
  dc_stream_release(stream);
  return st;
}

//===-- Streams ---------------------------------------------------------===//

dc_stream_t* dclua_check_stream(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_STREAM);
}

// Pushes a dc.stream holding a new reference to |stream|.
static void push_stream_ref(lua_State* L, dc_stream_t* stream) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_STREAM, 0);
  dc_stream_retain(stream);
  box->p = stream;
}

// Reads `priority` of the options table at |index| (default normal).
static dc_priority_t opt_priority(lua_State* L, int index) {
  int type = lua_getfield(L, index, "priority");
  int priority = type == LUA_TNIL ? 0 : -1;
  for (int i = 0; type == LUA_TSTRING && priority_names[i] != NULL; ++i) {
    if (strcmp(priority_names[i], lua_tostring(L, -1)) == 0) priority = i;
  }
  if (priority < 0) {
    luaL_argerror(L, index, "field 'priority' must be \"low\", \"normal\" "
                  "or \"high\"");
  }
  lua_pop(L, 1);
  return (dc_priority_t)priority;
}

// Reads an optional string field |key| of the table at |index| onto the
// stack (so that it stays valid) and returns it, or NULL.
static const char* opt_label(lua_State* L, int index) {
  int type = lua_getfield(L, index, "label");
  if (type != LUA_TNIL && type != LUA_TSTRING) {
    luaL_argerror(L, index, "field 'label' must be a string");
  }
  return lua_tostring(L, -1);
}

// [-0, +1, e]  dev:stream([{ priority = "normal", label = "..." }])
//              -> dc.stream
static int device_stream(lua_State* L) {
  static const char* const fields[] = {"priority", "label", NULL};
  dc_device_t* device = dclua_check_device(L, 1, false);
  dc_stream_params_t params = {0};
  if (!lua_isnoneornil(L, 2)) {
    dclua_check_options(L, 2, fields);
    params.priority = opt_priority(L, 2);
    params.label = opt_label(L, 2);
  }
  dclua_box_t* box = dclua_box_new(L, DCLUA_STREAM, 0);
  dc_stream_t* stream = NULL;
  DCLUA_CHECK(L, dc_stream_create(device, &params, &stream));
  box->p = stream;
  return 1;
}

// [-0, +0, -]  s:close(); also __gc and __close: drops the reference. Work
// already queued still runs; it is not waited for.
static int stream_close(lua_State* L) {
  dc_stream_release(dclua_box_take(L, 1, DCLUA_STREAM));
  return 0;
}

// [-(2+n), +1, e]  s:dispatch(kernel, launch, args...) -> s
static int stream_dispatch(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  dc_kernel_t* kernel = dclua_check_kernel(L, 2);
  dc_dispatch_t dispatch;
  dclua_check_dispatch(L, 3, kernel, &dispatch);
  dclua_args_t args;
  dclua_args_from_stack(L, kernel, 4, lua_gettop(L), &args);
  dc_status_t st =
      dc_stream_dispatch(stream, kernel, &dispatch, args.args, args.count);
  if (st != DC_OK) dclua_raise_with(L, st, "kernel", dc_kernel_name(kernel));
  lua_settop(L, 1);
  return 1;
}

// [-5, +1, e]  s:copy(dst, src [, dst_first, src_first, count]) -> s
// Indexes are 1-based; count defaults to the rest of src.
static int stream_copy(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  dc_buffer_t* dst = dclua_check_buffer(L, 2);
  dc_buffer_t* src = dclua_check_buffer(L, 3);
  size_t dst_first = opt_first(L, 4);
  size_t src_first = opt_first(L, 5);
  size_t src_length = dc_buffer_length(src);
  size_t rest = src_first < src_length ? src_length - src_first : 0;
  size_t count = opt_count(L, 6, rest);
  check_range(L, "stream:copy (source)", src, src_first, count);
  check_range(L, "stream:copy (destination)", dst, dst_first, count);
  if (count > 0) {
    DCLUA_CHECK(L, dc_stream_copy(stream, dst, dst_first, src, src_first,
                                  count));
  }
  lua_settop(L, 1);
  return 1;
}

// [-3, +1, e]  s:write(buf, values [, first]) -> s
// |values| is a table of numbers or a binary string, taken now.
static int stream_write(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  dc_buffer_t* dst = dclua_check_buffer(L, 2);
  int type = lua_type(L, 3);
  luaL_argexpected(L, type == LUA_TTABLE || type == LUA_TSTRING, 3,
                   "table or string");
  size_t first = opt_first(L, 4);
  if (luaL_len(L, 3) == 0) {
    check_range(L, "stream:write", dst, first, 0);
  } else {
    dc_buffer_t* staging =
        push_staging(L, "stream:write", dc_buffer_dtype(dst), 3);
    size_t count = dc_buffer_length(staging);
    check_range(L, "stream:write", dst, first, count);
    DCLUA_CHECK(L, dc_stream_copy(stream, dst, first, staging, 0, count));
    close_now(L, -1);  // the queued copy holds its own reference
  }
  lua_settop(L, 1);
  return 1;
}

// [-5, +1, e]  s:fill(buf, value [, first, count]) -> s
static int stream_fill(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  dc_buffer_t* buffer = dclua_check_buffer(L, 2);
  int type = lua_type(L, 3);
  luaL_argexpected(L, type == LUA_TNUMBER || type == LUA_TBOOLEAN, 3,
                   "number");
  size_t first = opt_first(L, 4);
  size_t length = dc_buffer_length(buffer);
  size_t count = opt_count(L, 5, first < length ? length - first : 0);
  check_range(L, "stream:fill", buffer, first, count);
  // The value is converted as a one-element buffer would convert it.
  lua_createtable(L, 1, 0);
  lua_pushvalue(L, 3);
  lua_rawseti(L, -2, 1);
  dc_buffer_t* staging =
      push_staging(L, "stream:fill", dc_buffer_dtype(buffer), -1);
  _Alignas(16) unsigned char value[16];
  DCLUA_CHECK(L, dc_buffer_read(staging, 0, value, 1));
  close_now(L, -1);
  if (count > 0) {
    DCLUA_CHECK(L, dc_stream_fill(stream, buffer, first, count, value));
  }
  lua_settop(L, 1);
  return 1;
}

//===-- Host functions --------------------------------------------------===//

// Adds |delta| to the count of running host functions of |stream|.
static void mark_running(lua_State* L, void* stream, int delta) {
  lua_getfield(L, LUA_REGISTRYINDEX, RUNNING_HOSTS);
  lua_Integer n = (lua_rawgetp(L, -1, stream) == LUA_TNIL)
                      ? 0 : lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (n + delta > 0) {
    lua_pushinteger(L, n + delta);
  } else {
    lua_pushnil(L);
  }
  lua_rawsetp(L, -2, stream);
  lua_pop(L, 1);
}

// [-1, +0, -]  __close of the mark a running host function leaves on the
// stack: unmarks its stream, also when the function raises.
static int host_mark_close(lua_State* L) {
  void** stream = luaL_checkudata(L, 1, HOST_MARK);
  if (*stream != NULL) mark_running(L, *stream, -1);
  *stream = NULL;
  return 0;
}

// [-0, +0, e]  The Lua side of a host command: upvalues are the script's
// function, its dc.stream and the dc_stream_t. Calls fn(s), marked as
// running so that a sync of the same stream is refused, not deadlocked.
// The mark is a to-be-closed slot rather than a pcall, so that an error
// keeps its traceback from where it was raised.
static int host_trampoline(lua_State* L) {
  void* stream = lua_touserdata(L, lua_upvalueindex(3));
  void** mark = lua_newuserdatauv(L, sizeof(*mark), 0);
  *mark = NULL;
  luaL_setmetatable(L, HOST_MARK);
  int slot = lua_gettop(L);
  lua_toclose(L, slot);
  mark_running(L, stream, 1);
  *mark = stream;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_call(L, 1, 0);
  lua_closeslot(L, slot);
  return 0;
}

// Engine thread: runs the host command's Lua function on the Lua thread.
static dc_status_t run_host(void* user_data) {
  return dclua_callback_call(user_data, NULL, NULL);
}

// Engine thread (or the Lua thread): the record after the host command
// completed, so the command is over, run or not.
static void release_host(dc_event_t* event, dc_status_t status,
                         void* user_data) {
  (void)event;
  (void)status;
  dclua_callback_release(user_data);
}

// Queues the record that releases |callback| once the host command before
// it is over. Out of memory, it waits for the stream instead.
static void release_after(lua_State* L, dc_stream_t* stream,
                          dc_event_t* done, dclua_callback_t* callback) {
  dc_status_t st = dc_stream_record(stream, done);
  if (st == DC_OK) st = dc_event_on_complete(done, release_host, callback);
  dc_event_release(done);
  if (st == DC_OK) return;
  char message[512];
  snprintf(message, sizeof(message), "%s", dc_last_error());
  // From a host function of this stream the wait would never end: the
  // callback is then left to the state's close (out of memory only).
  if (!host_running(L, stream)) {
    bool limited = false;
    stream_wait(L, stream, wait_sync, DC_TIMEOUT_INFINITE, &limited);
    // Past the run's deadline the command may still be queued: the
    // callback is then left to the state's close.
    if (!stream_busy(stream)) dclua_callback_release(callback);
  }
  dclua_raisef(L, st, "%s", message);
}

// [-2, +1, e]  s:host(fn) -> s: fn(s) runs on the Lua thread after every
// earlier command of s and before any later one.
static int stream_host(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  luaL_argexpected(L, dclua_is_callable(L, 2), 2, "function");
  lua_settop(L, 2);
  lua_pushvalue(L, 1);
  lua_pushlightuserdata(L, stream);
  lua_pushcclosure(L, host_trampoline, 3);
  char what[96];
  snprintf(what, sizeof(what), "host function on stream '%s'",
           dc_stream_label(stream));
  dclua_callback_t* callback = dclua_callback_create(L, -1, what);
  dc_event_t* done = NULL;
  dc_status_t st =
      dc_event_create(dc_stream_device(stream), DC_EVENT_DEFAULT, &done);
  if (st == DC_OK) st = dc_stream_host(stream, run_host, callback);
  if (st != DC_OK) {
    dc_event_release(done);
    dclua_callback_release(callback);
    dclua_raise(L, st);
  }
  release_after(L, stream, done, callback);
  lua_settop(L, 1);
  return 1;
}

//===-- Events on streams -----------------------------------------------===//

// [-2, +1, e]  s:record([event | { timing = bool }]) -> dc.event
// Records |event|, or a new event made by s.device:event(opts).
static int stream_record(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  lua_settop(L, 2);
  if (dclua_box_test(L, 2, DCLUA_EVENT) == NULL) {
    luaL_argexpected(L, lua_isnil(L, 2) || lua_istable(L, 2), 2,
                     "dc.event or options table");
    dclua_push_new_event(L, dc_stream_device(stream), 2);
    lua_replace(L, 2);
  }
  DCLUA_CHECK(L, dc_stream_record(stream, dclua_check_event(L, 2)));
  // ev:wait refuses to wait from a host function of this stream while
  // this record is pending (it would wait for itself).
  lua_pushlightuserdata(L, stream);
  lua_setiuservalue(L, 2, 1);
  return 1;
}

// [-2, +1, e]  s:wait(event) -> s: later commands wait for the event's last
// record as of now.
static int stream_wait_event(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  DCLUA_CHECK(L, dc_stream_wait_event(stream, dclua_check_event(L, 2)));
  lua_settop(L, 1);
  return 1;
}

//===-- Waiting, errors, cancellation -----------------------------------===//

// [-2, +1, e]  s:sync([timeout_ms]) -> s; raises the stream's error, or
// DEADLINE_EXCEEDED when the time runs out.
static int stream_sync(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  uint64_t timeout_ns = dclua_opt_timeout_ns(L, 2);
  refuse_own_stream(L, stream, "stream:sync");
  bool limited = false;
  dc_status_t st = stream_wait(L, stream, wait_sync, timeout_ns, &limited);
  st = dclua_wait_ended(L, st, limited);
  if (st != DC_OK) dclua_raise(L, st);
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  s:query() -> "done" | "pending"; raises the stream's error.
static int stream_query(lua_State* L) {
  return dclua_push_query(L, dc_stream_query(dclua_check_stream(L, 1)));
}

// [-1, +2, e]  s:reset() -> s, err | nil: waits for the stream to drain,
// clears its error and returns it (an error object, not raised).
static int stream_reset(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  refuse_own_stream(L, stream, "stream:reset");
  bool limited = false;
  dc_status_t st =
      stream_wait(L, stream, wait_reset, DC_TIMEOUT_INFINITE, &limited);
  if (limited && st == DC_ERR_DEADLINE_EXCEEDED && stream_busy(stream)) {
    dclua_wait_ended(L, st, limited);  // raises: nothing was reset
  }
  lua_settop(L, 1);
  if (st == DC_OK) {
    lua_pushnil(L);
  } else {
    dclua_push_error(L, st);
  }
  return 2;
}

// [-1, +1, e]  s:cancel() -> n: cancels the commands not yet started.
static int stream_cancel(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)dc_stream_cancel(dclua_check_stream(L, 1)));
  return 1;
}

static dc_cancel_token_t* check_token(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_TOKEN);
}

// [-2, +1, e]  s:set_cancel_token(token | nil) -> s
static int stream_set_cancel_token(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  dc_cancel_token_t* token = NULL;
  if (!lua_isnoneornil(L, 2)) token = check_token(L, 2);
  DCLUA_CHECK(L, dc_stream_set_cancel_token(stream, token));
  lua_settop(L, 1);
  return 1;
}

// Pushes a table of |stream|'s statistics.
static void push_stats(lua_State* L, dc_stream_t* stream) {
  dc_stream_stats_t s;
  DCLUA_CHECK(L, dc_stream_stats(stream, &s));
  lua_createtable(L, 0, 13);
  dclua_set_string(L, "label", dc_stream_label(stream));
  dclua_set_integer(L, "id", dc_stream_id(stream));
  dclua_set_integer(L, "submitted", s.submitted);
  dclua_set_integer(L, "completed", s.completed);
  dclua_set_integer(L, "failed", s.failed);
  dclua_set_integer(L, "skipped", s.skipped);
  dclua_set_integer(L, "cancelled", s.cancelled);
  dclua_set_integer(L, "queued", s.queued);
  dclua_set_integer(L, "busy_ns", s.busy_ns);
  dclua_set_number(L, "busy_ms", (lua_Number)s.busy_ns / 1e6);
  dclua_set_string(L, "priority", priority_names[s.priority]);
  if (s.error != DC_OK) dclua_set_string(L, "error", dc_status_name(s.error));
}

// [-1, +1, e]  s:stats() -> { submitted, completed, failed, skipped,
//   cancelled, queued, busy_ns, busy_ms, priority, label, id, error }
static int stream_stats(lua_State* L) {
  push_stats(L, dclua_check_stream(L, 1));
  return 1;
}

// [-2, +1, e]  s.label, s.id, s.device, s.priority, or a method
static int stream_index(lua_State* L) {
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;  // a method
  dc_stream_t* stream = dclua_check_stream(L, 1);
  if (strcmp(key, "label") == 0) {
    lua_pushstring(L, dc_stream_label(stream));
  } else if (strcmp(key, "id") == 0) {
    lua_pushinteger(L, dc_stream_id(stream));
  } else if (strcmp(key, "device") == 0) {
    dclua_push_device(L, dc_stream_device(stream));
  } else if (strcmp(key, "priority") == 0) {
    dc_stream_stats_t s;
    DCLUA_CHECK(L, dc_stream_stats(stream, &s));
    lua_pushstring(L, priority_names[s.priority]);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-1, +1, -]  tostring(s) -> "dc.stream: 'label' #id on cpu"
static int stream_tostring(lua_State* L) {
  dc_stream_t* stream = dclua_box_for_tostring(L, 1, DCLUA_STREAM);
  if (stream == NULL) return 1;  // "dc.stream (closed)"
  lua_pushfstring(L, "dc.stream: '%s' #%d on %s", dc_stream_label(stream),
                  (int)dc_stream_id(stream),
                  dc_device_name(dc_stream_device(stream)));
  return 1;
}

//===-- Futures: the result of s:read -----------------------------------===//
//
// A dc.future owns the event recorded after its copy; its user value is
// the staging dc.buffer that the copy fills.

static dc_event_t* check_future(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_FUTURE);
}

// [-4, +1, e]  s:read(buf [, first, count]) -> dc.future
static int stream_read(lua_State* L) {
  dc_stream_t* stream = dclua_check_stream(L, 1);
  dc_buffer_t* src = dclua_check_buffer(L, 2);
  size_t first = opt_first(L, 3);
  size_t length = dc_buffer_length(src);
  size_t count = opt_count(L, 4, first < length ? length - first : 0);
  check_range(L, "stream:read", src, first, count);
  if (count == 0) {
    dclua_raisef(L, DC_ERR_OUT_OF_RANGE, "stream:read: nothing to read "
                 "(element %zu of a buffer of length %zu)", first + 1,
                 length);
  }
  lua_settop(L, 2);
  dclua_box_t* future = dclua_box_new(L, DCLUA_FUTURE, 2);
  lua_pushlightuserdata(L, stream);
  lua_setiuservalue(L, 3, 2);
  dc_buffer_t* staging =
      new_staging(L, dc_buffer_dtype(src), count, "stream:read");
  lua_setiuservalue(L, 3, 1);
  dc_event_t* done = NULL;
  DCLUA_CHECK(L, dc_event_create(dc_stream_device(stream), DC_EVENT_DEFAULT,
                                 &done));
  future->p = done;
  DCLUA_CHECK(L, dc_stream_copy(stream, staging, 0, src, first, count));
  DCLUA_CHECK(L, dc_stream_record(stream, done));
  return 1;
}

// Waits for the future's copy; raises its error or DEADLINE_EXCEEDED, or
// FAILED_PRECONDITION from a host function of the stream while the copy,
// queued after that function, is pending.
static void future_wait_for(lua_State* L, int index, uint64_t timeout_ns) {
  dc_event_t* done = check_future(L, index);
  if (dc_event_query(done) == DC_ERR_UNAVAILABLE) {
    lua_getiuservalue(L, index, 2);
    dc_stream_t* stream = lua_touserdata(L, -1);
    lua_pop(L, 1);
    refuse_own_stream(L, stream, "dc.future");
  }
  dc_status_t st = dclua_wait_event(L, done, timeout_ns);
  if (st != DC_OK) dclua_raise(L, st);
}

// [-2, +1, e]  f:wait([timeout_ms]) -> f
static int future_wait(lua_State* L) {
  future_wait_for(L, 1, dclua_opt_timeout_ns(L, 2));
  lua_settop(L, 1);
  return 1;
}

// Waits, then calls staging:<method>() and returns its result.
static int future_call(lua_State* L, const char* method) {
  future_wait_for(L, 1, dclua_opt_timeout_ns(L, 2));
  lua_getiuservalue(L, 1, 1);
  lua_getfield(L, -1, method);
  lua_insert(L, -2);
  lua_call(L, 1, 1);
  return 1;
}

// [-2, +1, e]  f:get([timeout_ms]) -> { values } (waits if needed)
static int future_get(lua_State* L) { return future_call(L, "read"); }

// [-2, +1, e]  f:bytes([timeout_ms]) -> string (waits if needed)
static int future_bytes(lua_State* L) { return future_call(L, "bytes"); }

// [-1, +1, e]  f:query() -> "done" | "pending"; raises the copy's error.
static int future_query(lua_State* L) {
  return dclua_push_query(L, dc_event_query(check_future(L, 1)));
}

// [-1, +1, -]  #f -> the number of elements read
static int future_len(lua_State* L) {
  check_future(L, 1);
  lua_getiuservalue(L, 1, 1);
  lua_pushinteger(L, (lua_Integer)dc_buffer_length(dclua_check_buffer(L, -1)));
  return 1;
}

// [-2, +1, e]  f.event (the dc.event after the copy), f.buffer (the
// staging dc.buffer on the CPU), or a method
static int future_index(lua_State* L) {
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;  // a method
  dc_event_t* event = check_future(L, 1);
  if (strcmp(key, "event") == 0) {
    dc_event_retain(event);
    dclua_push_event(L, event);
  } else if (strcmp(key, "buffer") == 0) {
    lua_getiuservalue(L, 1, 1);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-0, +0, -]  f:close(); also __gc and __close
static int future_close(lua_State* L) {
  dc_event_release(dclua_box_take(L, 1, DCLUA_FUTURE));
  lua_pushnil(L);
  lua_setiuservalue(L, 1, 1);
  return 0;
}

//===-- Stream groups ---------------------------------------------------===//
//
// A dc.group owns the dc_stream_group_t; its user value is a table of one
// dc.stream per stream of the group (each with its own reference, so that
// a stream outlives the group while the script holds it), which g[i] and
// g:next() return.

#define GROUP_MAX 64

static dc_stream_group_t* check_group(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_GROUP);
}

// Reads dev:group's argument: a count, or { count, priority, label }.
static void group_params(lua_State* L, int index,
                         dc_stream_group_params_t* params) {
  static const char* const fields[] = {"count", "priority", "label", NULL};
  lua_Integer count = 0;
  if (lua_type(L, index) == LUA_TTABLE) {
    dclua_check_options(L, index, fields);
    params->priority = opt_priority(L, index);
    params->label = opt_label(L, index);  // stays on the stack
    lua_getfield(L, index, "count");
    if (!lua_isnil(L, -1) && !lua_isinteger(L, -1)) {
      luaL_argerror(L, index, "field 'count' must be an integer");
    }
    count = lua_tointeger(L, -1);
    lua_pop(L, 1);
  } else if (!lua_isnoneornil(L, index)) {
    count = luaL_checkinteger(L, index);
  }
  luaL_argcheck(L, count >= 0 && count <= GROUP_MAX, index,
                "a group has 1 to 64 streams (0 or none: the device's "
                "stream count)");
  params->count = (size_t)count;
}

// [-2, +1, e]  dev:group([count | { count, priority, label }]) -> dc.group
static int device_group(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  dc_stream_group_params_t params = {0};
  group_params(L, 2, &params);
  dclua_box_t* box = dclua_box_new(L, DCLUA_GROUP, 1);
  int group_index = lua_gettop(L);
  dc_stream_group_t* group = NULL;
  DCLUA_CHECK(L, dc_stream_group_create(device, &params, &group));
  box->p = group;
  size_t size = dc_stream_group_size(group);
  lua_createtable(L, (int)size, 0);
  for (size_t i = 0; i < size; ++i) {
    push_stream_ref(L, dc_stream_group_stream(group, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setiuservalue(L, group_index, 1);
  return 1;
}

// Pushes the dc.stream of |stream| from the group at |index|.
static void push_member(lua_State* L, int index, dc_stream_t* stream) {
  dc_stream_group_t* group = check_group(L, index);
  lua_getiuservalue(L, index, 1);
  for (size_t i = 0; i < dc_stream_group_size(group); ++i) {
    if (dc_stream_group_stream(group, i) == stream) {
      lua_rawgeti(L, -1, (lua_Integer)i + 1);
      lua_remove(L, -2);
      return;
    }
  }
  luaL_error(L, "dc.group: stream not found in its group");
}

// [-2, +1, e]  g:next(["round_robin" | "least_loaded"]) -> dc.stream
static int group_next(lua_State* L) {
  static const char* const picks[] = {"round_robin", "least_loaded", NULL};
  dc_stream_group_t* group = check_group(L, 1);
  dc_pick_t pick = (dc_pick_t)luaL_checkoption(L, 2, "round_robin", picks);
  push_member(L, 1, dc_stream_group_next(group, pick));
  return 1;
}

typedef struct group_wait_t {
  dc_stream_t* streams[GROUP_MAX];  // retained for the wait
  size_t count;
  uint64_t timeout_ns;
} group_wait_t;

// Syncs every stream within one timeout in all, as dc_stream_group_sync
// does, but over retained streams: a Lua callback run during the wait may
// close the group.
static dc_status_t wait_group(void* p) {
  group_wait_t* w = p;
  bool infinite = w->timeout_ns == DC_TIMEOUT_INFINITE;
  uint64_t start = dclua_now_ns();
  dc_status_t first = DC_OK;
  char message[1024] = "";
  for (size_t i = 0; i < w->count; ++i) {
    uint64_t left = DC_TIMEOUT_INFINITE;
    if (!infinite) {
      uint64_t spent = dclua_now_ns() - start;
      left = spent < w->timeout_ns ? w->timeout_ns - spent : 0;
    }
    dc_status_t st = dc_stream_sync(w->streams[i], left);
    if (st == DC_ERR_DEADLINE_EXCEEDED) return st;
    if (st != DC_OK && first == DC_OK) {
      first = st;
      snprintf(message, sizeof(message), "%s", dc_last_error());
    }
  }
  if (first != DC_OK) dc_set_error(first, "%s", message);
  return first;
}

// [-2, +1, e]  g:sync([timeout_ms]) -> g; raises the first failed stream's
// error (in index order) or DEADLINE_EXCEEDED.
static int group_sync(lua_State* L) {
  dc_stream_group_t* group = check_group(L, 1);
  group_wait_t w = {.count = dc_stream_group_size(group)};
  uint64_t timeout_ns = dclua_opt_timeout_ns(L, 2);
  for (size_t i = 0; i < w.count; ++i) {
    w.streams[i] = dc_stream_group_stream(group, i);
    refuse_own_stream(L, w.streams[i], "group:sync");
  }
  bool limited = false;
  w.timeout_ns = dclua_wait_budget_ns(L, timeout_ns, &limited);
  for (size_t i = 0; i < w.count; ++i) dc_stream_retain(w.streams[i]);
  dc_status_t st = dclua_wait(L, wait_group, &w);
  for (size_t i = 0; i < w.count; ++i) dc_stream_release(w.streams[i]);
  st = dclua_wait_ended(L, st, limited);
  if (st != DC_OK) dclua_raise(L, st);
  lua_settop(L, 1);
  return 1;
}

// [-1, +1, e]  g:stats() -> { stream stats, ... } in index order
static int group_stats(lua_State* L) {
  dc_stream_group_t* group = check_group(L, 1);
  size_t size = dc_stream_group_size(group);
  lua_createtable(L, (int)size, 0);
  for (size_t i = 0; i < size; ++i) {
    push_stats(L, dc_stream_group_stream(group, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

// [-2, +1, e]  g[i] -> the i-th dc.stream (1-based), or a method
static int group_index(lua_State* L) {
  if (dclua_push_method(L)) return 1;
  dc_stream_group_t* group = check_group(L, 1);
  if (!lua_isinteger(L, 2)) {
    lua_pushnil(L);
    return 1;
  }
  lua_Integer i = lua_tointeger(L, 2);
  if (i < 1 || (size_t)i > dc_stream_group_size(group)) {
    return luaL_error(L, "dc.group: index %d is out of range (1..%d)",
                      (int)i, (int)dc_stream_group_size(group));
  }
  lua_getiuservalue(L, 1, 1);
  lua_rawgeti(L, -1, i);
  return 1;
}

// [-1, +1, -]  #g -> the number of streams
static int group_len(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)dc_stream_group_size(check_group(L, 1)));
  return 1;
}

// [-0, +0, -]  g:close(); also __gc and __close: the group's streams stay
// usable through the dc.stream objects the script holds.
static int group_close(lua_State* L) {
  dc_stream_group_release(dclua_box_take(L, 1, DCLUA_GROUP));
  return 0;
}

// [-1, +1, -]  tostring(g) -> "dc.group: 4 streams"
static int group_tostring(lua_State* L) {
  dc_stream_group_t* group = dclua_box_for_tostring(L, 1, DCLUA_GROUP);
  if (group == NULL) return 1;  // "dc.group (closed)"
  lua_pushfstring(L, "dc.group: %d streams",
                  (int)dc_stream_group_size(group));
  return 1;
}

//===-- Cancel tokens ---------------------------------------------------===//

// [-0, +1, e]  dc.token() -> dc.token
static int l_token(lua_State* L) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_TOKEN, 0);
  dc_cancel_token_t* token = NULL;
  DCLUA_CHECK(L, dc_cancel_token_create(dclua_context(L), &token));
  box->p = token;
  return 1;
}

// [-1, +1, e]  tok:cancel() -> tok: commands carrying it that have not
// started never run
static int token_cancel(lua_State* L) {
  dc_cancel_token_cancel(check_token(L, 1));
  lua_settop(L, 1);
  return 1;
}

// [-2, +1, e]  tok.cancelled -> boolean, or a method
static int token_index(lua_State* L) {
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;  // a method
  dc_cancel_token_t* token = check_token(L, 1);
  if (strcmp(key, "cancelled") == 0) {
    lua_pushboolean(L, dc_cancel_token_is_cancelled(token));
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-0, +0, -]  tok:close(); also __gc and __close
static int token_close(lua_State* L) {
  dc_cancel_token_release(dclua_box_take(L, 1, DCLUA_TOKEN));
  return 0;
}

// [-1, +1, -]  tostring(tok) -> "dc.token: active" | "dc.token: cancelled"
static int token_tostring(lua_State* L) {
  dc_cancel_token_t* token = dclua_box_for_tostring(L, 1, DCLUA_TOKEN);
  if (token == NULL) return 1;  // "dc.token (closed)"
  lua_pushstring(L, dc_cancel_token_is_cancelled(token)
                        ? "dc.token: cancelled" : "dc.token: active");
  return 1;
}

//===-- Registration ----------------------------------------------------===//

static void open_streams(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", stream_index}, {"__gc", stream_close},
      {"__close", stream_close}, {"__tostring", stream_tostring},
      {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"dispatch", stream_dispatch}, {"copy", stream_copy},
      {"write", stream_write}, {"read", stream_read}, {"fill", stream_fill},
      {"host", stream_host}, {"record", stream_record},
      {"wait", stream_wait_event}, {"sync", stream_sync},
      {"query", stream_query}, {"reset", stream_reset},
      {"cancel", stream_cancel}, {"set_cancel_token", stream_set_cancel_token},
      {"stats", stream_stats}, {"close", stream_close}, {NULL, NULL}};
  dclua_class_new(L, DCLUA_STREAM, meta, methods);
}

static void open_futures(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", future_index}, {"__gc", future_close},
      {"__close", future_close}, {"__len", future_len}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"get", future_get}, {"bytes", future_bytes}, {"wait", future_wait},
      {"query", future_query}, {"close", future_close}, {NULL, NULL}};
  dclua_class_new(L, DCLUA_FUTURE, meta, methods);
}

static void open_groups(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", group_index}, {"__len", group_len}, {"__gc", group_close},
      {"__close", group_close}, {"__tostring", group_tostring},
      {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"next", group_next}, {"sync", group_sync}, {"stats", group_stats},
      {"close", group_close}, {NULL, NULL}};
  dclua_class_new(L, DCLUA_GROUP, meta, methods);
}

static void open_tokens(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", token_index}, {"__gc", token_close},
      {"__close", token_close}, {"__tostring", token_tostring},
      {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"cancel", token_cancel}, {"close", token_close}, {NULL, NULL}};
  dclua_class_new(L, DCLUA_TOKEN, meta, methods);
}

void dclua_open_stream(lua_State* L) {
  static const luaL_Reg device_methods[] = {
      {"stream", device_stream}, {"group", device_group}, {NULL, NULL}};
  open_streams(L);
  open_futures(L);
  open_groups(L);
  open_tokens(L);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, RUNNING_HOSTS);
  luaL_newmetatable(L, HOST_MARK);
  lua_pushcfunction(L, host_mark_close);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 1);
  lua_pushcfunction(L, l_token);
  lua_setfield(L, -2, "token");
}

// check_lua_engine.c: the embedding API of the Lua binding (dclua_engine_t
// in dclua.h): creation, globals both ways, shared buffers, host
// functions, runs and their error statuses, the memory and time limits
// and the sandbox.
// SPDX-License-Identifier: MIT
#include <lauxlib.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"
#include "dclua.h"

static dc_context_t* g_ctx;
static dclua_engine_t* g_eng;

static void engine_setup(void) {
  dc_test_clear_env();
  setenv("DC_CACHE_DIR", "off", 1);
  g_ctx = dc_test_context_new(NULL);
  DC_CK_OK(dclua_engine_create(g_ctx, &g_eng));
}

static void engine_teardown(void) {
  dclua_engine_destroy(g_eng);
  g_eng = NULL;
  ck_assert_uint_eq(dc_context_live_buffer_count(g_ctx), 0);
  dc_context_release(g_ctx);
  g_ctx = NULL;
}

// Runs |chunk| and asserts that it succeeds.
static void run_ok(const char* chunk) {
  dc_status_t status = dclua_engine_run_string(g_eng, chunk, "=test");
  ck_assert_msg(status == DC_OK, "'%s' failed with %s: %s", chunk,
                dc_status_name(status), dclua_engine_error(g_eng));
}

// Runs |chunk| and asserts that it fails with |status| and a message
// holding |substring|, in both dclua_engine_error and dc_last_error.
static void run_fails(const char* chunk, dc_status_t status,
                      const char* substring) {
  DC_CK_FAIL(dclua_engine_run_string(g_eng, chunk, "=test"), status, substring);
  DC_CK_STR_HAS(dclua_engine_error(g_eng), substring);
}

static double seconds_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

//===-- core ------------------------------------------------------------===//

START_TEST(test_engine_create_with_context) {
  ck_assert_ptr_eq(dclua_engine_context(g_eng), g_ctx);
  lua_State* L = dclua_engine_state(g_eng);
  ck_assert_ptr_nonnull(L);
  ck_assert_str_eq(dclua_engine_error(g_eng), "");
  run_ok("assert(dc == require('dc')) assert(dc.version)");
  run_ok("assert(string and table and math and io and os and debug)");
  run_ok("assert(dc.device().name == 'cpu')");
  ck_assert_int_eq(lua_gettop(L), 0);
}
END_TEST

START_TEST(test_engine_create_own_context) {
  dclua_engine_t* eng = NULL;
  DC_CK_OK(dclua_engine_create(NULL, &eng));
  dc_context_t* ctx = dclua_engine_context(eng);
  ck_assert_ptr_nonnull(ctx);
  ck_assert_ptr_ne(ctx, g_ctx);
  DC_CK_OK(dclua_engine_run_string(eng, "x = dc.devices()[1].name", NULL));
  char name[16];
  DC_CK_OK(dclua_engine_get_string(eng, "x", name, sizeof(name), NULL));
  ck_assert_str_eq(name, "cpu");
  dclua_engine_destroy(eng);
}
END_TEST

START_TEST(test_engine_null_arguments) {
  DC_CK_FAIL(dclua_engine_create(NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_create");
  dclua_engine_destroy(NULL);
  ck_assert_ptr_null(dclua_engine_state(NULL));
  ck_assert_ptr_null(dclua_engine_context(NULL));
  ck_assert_ptr_null(dclua_engine_error(NULL));
  ck_assert_uint_eq(dclua_engine_memory_used(NULL), 0);
  double d = 0;
  int64_t i = 0;
  bool b = false;
  char s[4];
  dc_buffer_t* buf = NULL;
  DC_CK_FAIL(dclua_engine_set_number(NULL, "x", 1), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_number");
  DC_CK_FAIL(dclua_engine_set_number(g_eng, NULL, 1), DC_ERR_INVALID_ARGUMENT,
             "empty name");
  DC_CK_FAIL(dclua_engine_set_integer(g_eng, "", 1), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_integer");
  DC_CK_FAIL(dclua_engine_set_string(g_eng, "x", NULL), DC_ERR_INVALID_ARGUMENT,
             "NULL value");
  DC_CK_FAIL(dclua_engine_set_boolean(NULL, "x", true), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_boolean");
  DC_CK_FAIL(dclua_engine_set_buffer(g_eng, "x", NULL), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL");
  DC_CK_FAIL(dclua_engine_get_number(g_eng, "x", NULL), DC_ERR_INVALID_ARGUMENT,
             "NULL out");
  DC_CK_FAIL(dclua_engine_get_integer(NULL, "x", &i), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_get_integer");
  DC_CK_FAIL(dclua_engine_get_boolean(g_eng, NULL, &b), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_get_boolean");
  DC_CK_FAIL(dclua_engine_get_string(g_eng, "x", NULL, 4, NULL),
             DC_ERR_INVALID_ARGUMENT, "NULL buffer");
  DC_CK_FAIL(dclua_engine_get_string(NULL, "x", s, sizeof(s), NULL),
             DC_ERR_INVALID_ARGUMENT, "dclua_engine_get_string");
  DC_CK_FAIL(dclua_engine_get_buffer(g_eng, "x", NULL), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_get_buffer");
  DC_CK_FAIL(dclua_engine_register(g_eng, "f", NULL, NULL),
             DC_ERR_INVALID_ARGUMENT, "NULL function");
  DC_CK_FAIL(dclua_engine_set_args(g_eng, -1, NULL), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_args");
  const char* args[] = {"a", NULL};
  DC_CK_FAIL(dclua_engine_set_args(g_eng, 2, args), DC_ERR_INVALID_ARGUMENT,
             "NULL argument");
  DC_CK_FAIL(dclua_engine_run_file(g_eng, NULL), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_run_file");
  DC_CK_FAIL(dclua_engine_run_string(NULL, "x = 1", NULL),
             DC_ERR_INVALID_ARGUMENT, "dclua_engine_run_string");
  DC_CK_FAIL(dclua_engine_run_string(g_eng, NULL, NULL),
             DC_ERR_INVALID_ARGUMENT, "dclua_engine_run_string");
  DC_CK_FAIL(dclua_engine_call(NULL, 0, 0), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_call");
  DC_CK_FAIL(dclua_engine_sandbox(NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_sandbox");
  DC_CK_FAIL(dclua_engine_set_memory_limit(NULL, 1), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_memory_limit");
  DC_CK_FAIL(dclua_engine_set_time_limit(g_eng, -1), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_time_limit");
  DC_CK_FAIL(dclua_engine_set_time_limit(g_eng, NAN), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_set_time_limit");
  DC_CK_FAIL(dclua_set_default_device(NULL, "cpu"), DC_ERR_INVALID_ARGUMENT,
             "NULL state");
  (void)d;
  (void)buf;
  ck_assert_int_eq(lua_gettop(dclua_engine_state(g_eng)), 0);
}
END_TEST

//===-- globals ---------------------------------------------------------===//

START_TEST(test_engine_globals_from_host) {
  DC_CK_OK(dclua_engine_set_number(g_eng, "ratio", 0.25));
  DC_CK_OK(dclua_engine_set_integer(g_eng, "width", INT64_C(1) << 40));
  DC_CK_OK(dclua_engine_set_string(g_eng, "mode", "fast"));
  DC_CK_OK(dclua_engine_set_boolean(g_eng, "verbose", true));
  run_ok("assert(ratio == 0.25 and math.type(ratio) == 'float')");
  run_ok("assert(width == 1 << 40 and math.type(width) == 'integer')");
  run_ok("assert(mode == 'fast' and verbose == true)");
  DC_CK_OK(dclua_engine_set_boolean(g_eng, "verbose", false));
  run_ok("assert(verbose == false)");
}
END_TEST

START_TEST(test_engine_globals_to_host) {
  run_ok(
      "n = 3 * 0.5; i = 7 * 6; f = 8.0; s = ('ab'):rep(3); b = true; "
      "big = math.maxinteger");
  double d = 0;
  int64_t i = 0;
  bool b = false;
  DC_CK_OK(dclua_engine_get_number(g_eng, "n", &d));
  ck_assert_double_eq(d, 1.5);
  DC_CK_OK(dclua_engine_get_number(g_eng, "i", &d));  // integers are numbers
  ck_assert_double_eq(d, 42.0);
  DC_CK_OK(dclua_engine_get_integer(g_eng, "i", &i));
  ck_assert_int_eq(i, 42);
  DC_CK_OK(dclua_engine_get_integer(g_eng, "f", &i));  // exact float
  ck_assert_int_eq(i, 8);
  DC_CK_OK(dclua_engine_get_integer(g_eng, "big", &i));
  ck_assert_int_eq(i, INT64_MAX);
  DC_CK_OK(dclua_engine_get_boolean(g_eng, "b", &b));
  ck_assert(b);
  char s[16];
  size_t length = 0;
  DC_CK_OK(dclua_engine_get_string(g_eng, "s", s, sizeof(s), &length));
  ck_assert_str_eq(s, "ababab");
  ck_assert_uint_eq(length, 6);
  DC_CK_OK(dclua_engine_get_string(g_eng, "s", s, 4, &length));  // truncated
  ck_assert_str_eq(s, "aba");
  ck_assert_uint_eq(length, 6);
  DC_CK_OK(dclua_engine_get_string(g_eng, "s", NULL, 0, &length));
  ck_assert_uint_eq(length, 6);
}
END_TEST

START_TEST(test_engine_globals_wrong_or_missing) {
  run_ok("n = 2.5; s = 'x'; t = {}; b = false");
  double d = -1;
  int64_t i = -1;
  bool b = true;
  char s[8] = "keep";
  DC_CK_FAIL(dclua_engine_get_number(g_eng, "missing", &d), DC_ERR_NOT_FOUND,
             "global 'missing' is not set");
  DC_CK_FAIL(dclua_engine_get_number(g_eng, "s", &d), DC_ERR_INVALID_ARGUMENT,
             "global 's' is a string, not a number");
  DC_CK_FAIL(dclua_engine_get_integer(g_eng, "n", &i), DC_ERR_INVALID_ARGUMENT,
             "global 'n' is 2.5, not an integer");
  DC_CK_FAIL(dclua_engine_get_integer(g_eng, "s", &i), DC_ERR_INVALID_ARGUMENT,
             "is a string, not an integer");
  DC_CK_FAIL(dclua_engine_get_boolean(g_eng, "n", &b), DC_ERR_INVALID_ARGUMENT,
             "global 'n' is a number, not a boolean");
  DC_CK_FAIL(dclua_engine_get_string(g_eng, "n", s, sizeof(s), NULL),
             DC_ERR_INVALID_ARGUMENT, "is a number, not a string");
  DC_CK_FAIL(dclua_engine_get_string(g_eng, "t", s, sizeof(s), NULL),
             DC_ERR_INVALID_ARGUMENT, "is a table, not a string");
  ck_assert_double_eq(d, -1);  // left as they were
  ck_assert_int_eq(i, -1);
  ck_assert(b);
  ck_assert_str_eq(s, "keep");
  DC_CK_OK(dclua_engine_get_boolean(g_eng, "b", &b));
  ck_assert(!b);
}
END_TEST

START_TEST(test_engine_global_errors_from_metamethods) {
  // A strict _G raises on reading an unset global: the host gets the
  // script's error, not a panic.
  run_ok(
      "setmetatable(_G, { __index = function(_, k) "
      "error(dc.error('NOT_FOUND', 'strict: ' .. k)) end })");
  double d = 0;
  DC_CK_FAIL(dclua_engine_get_number(g_eng, "nothing", &d), DC_ERR_NOT_FOUND,
             "strict: nothing");
  run_ok(
      "setmetatable(_G, { __newindex = function() error('read-only') end"
      " })");
  DC_CK_FAIL(dclua_engine_set_number(g_eng, "fresh", 1), DC_ERR_UNKNOWN,
             "read-only");
}
END_TEST

//===-- buffers ---------------------------------------------------------===//

START_TEST(test_engine_buffer_from_host) {
  dc_buffer_t* buf =
      dc_test_buffer_new(dc_test_cpu(g_ctx), DC_DTYPE_F32, 4, "host");
  float in[4] = {1, 2, 3, 4};
  DC_CK_OK(dc_buffer_write(buf, 0, in, 4));
  DC_CK_OK(dclua_engine_set_buffer(g_eng, "frame", buf));
  run_ok(
      "assert(#frame == 4 and frame[3] == 3)"
      "for i = 1, #frame do frame[i] = frame[i] * 10 end");
  float out[4];
  DC_CK_OK(dc_buffer_read(buf, 0, out, 4));
  for (int i = 0; i < 4; ++i) ck_assert_float_eq(out[i], in[i] * 10);
  // The script's object holds its own reference: closing it leaves ours.
  run_ok("frame:close()");
  DC_CK_OK(dc_buffer_read(buf, 0, out, 1));
  ck_assert_float_eq(out[0], 10);
  dc_buffer_release(buf);
}
END_TEST

START_TEST(test_engine_buffer_to_host) {
  run_ok("result = dc.device():buffer('i32', { 5, 6, 7 })");
  dc_buffer_t* buf = NULL;
  DC_CK_OK(dclua_engine_get_buffer(g_eng, "result", &buf));
  ck_assert_uint_eq(dc_buffer_length(buf), 3);
  run_ok("result = nil; collectgarbage(); collectgarbage()");
  int32_t out[3];
  DC_CK_OK(dc_buffer_read(buf, 0, out, 3));  // retained: still alive
  ck_assert_int_eq(out[0], 5);
  ck_assert_int_eq(out[2], 7);
  // Shared back: both sides see one buffer.
  DC_CK_OK(dclua_engine_set_buffer(g_eng, "again", buf));
  run_ok("again[1] = 50");
  DC_CK_OK(dc_buffer_read(buf, 0, out, 1));
  ck_assert_int_eq(out[0], 50);
  dc_buffer_release(buf);
}
END_TEST

START_TEST(test_engine_buffer_errors) {
  dc_buffer_t* buf = NULL;
  DC_CK_FAIL(dclua_engine_get_buffer(g_eng, "none", &buf), DC_ERR_NOT_FOUND,
             "global 'none' is not set");
  run_ok("n = 1; t = {}; closed = dc.buffer('u8', 2); closed:close()");
  DC_CK_FAIL(dclua_engine_get_buffer(g_eng, "n", &buf), DC_ERR_INVALID_ARGUMENT,
             "global 'n' is a number, not a "
             "dc.buffer");
  DC_CK_FAIL(dclua_engine_get_buffer(g_eng, "t", &buf), DC_ERR_INVALID_ARGUMENT,
             "is a table, not a dc.buffer");
  DC_CK_FAIL(dclua_engine_get_buffer(g_eng, "closed", &buf),
             DC_ERR_FAILED_PRECONDITION, "closed dc.buffer");
  ck_assert_ptr_null(buf);
  // A buffer of another context, and one already released.
  dc_context_t* other = dc_test_context_new(NULL);
  dc_buffer_t* foreign =
      dc_test_buffer_new(dc_test_cpu(other), DC_DTYPE_U8, 2, "foreign");
  DC_CK_FAIL(dclua_engine_set_buffer(g_eng, "f", foreign),
             DC_ERR_INVALID_ARGUMENT, "another context");
  dc_buffer_release(foreign);
  DC_CK_FAIL(dclua_engine_set_buffer(g_eng, "f", foreign),
             DC_ERR_INVALID_ARGUMENT, "'buffer' is NULL or a released buffer");
  dc_context_release(other);
}
END_TEST

//===-- host functions --------------------------------------------------===//

typedef struct host_state_t {
  int calls;
  double sum;
} host_state_t;

// host_add(a, b) -> a + b; counts its calls in its user data.
static int host_add(lua_State* L) {
  host_state_t* state = lua_touserdata(L, lua_upvalueindex(1));
  double a = luaL_checknumber(L, 1);
  double b = luaL_checknumber(L, 2);
  state->calls++;
  state->sum += a + b;
  lua_pushnumber(L, a + b);
  return 1;
}

// host_twice(f, x) -> f(f(x)): calls back into Lua through the engine.
static int host_twice(lua_State* L) {
  dclua_engine_t* eng = lua_touserdata(L, lua_upvalueindex(1));
  for (int i = 0; i < 2; ++i) {
    lua_pushvalue(L, 1);
    lua_insert(L, -2);
    if (dclua_engine_call(eng, 1, 1) != DC_OK) {
      return luaL_error(L, "host_twice: %s", dclua_engine_error(eng));
    }
  }
  return 1;
}

START_TEST(test_engine_host_functions) {
  host_state_t state = {0};
  DC_CK_OK(dclua_engine_register(g_eng, "host_add", host_add, &state));
  DC_CK_OK(dclua_engine_register(g_eng, "host_twice", host_twice, g_eng));
  run_ok("assert(host_add(1, 2) == 3 and host_add(0.5, 0.25) == 0.75)");
  ck_assert_int_eq(state.calls, 2);
  ck_assert_double_eq(state.sum, 3.75);
  run_ok("assert(host_twice(function(x) return x * 3 end, 2) == 18)");
  run_fails("host_add('a', 1)", DC_ERR_UNKNOWN,
            "bad argument #1 to 'host_add'");
  run_fails(
      "host_twice(function(x) error(dc.error('ABORTED', 'inner')) end,"
      " 1)",
      DC_ERR_UNKNOWN, "ABORTED: inner");
  ck_assert_int_eq(state.calls, 2);
}
END_TEST

//===-- runs ------------------------------------------------------------===//

START_TEST(test_engine_run_errors) {
  run_fails("local x = ", DC_ERR_INVALID_ARGUMENT, "test:1:");
  run_fails("local t = nil; t.x = 1", DC_ERR_UNKNOWN, "attempt to index");
  DC_CK_STR_HAS(dclua_engine_error(g_eng), "stack traceback");
  run_fails("error(dc.error('UNAVAILABLE', 'backend busy'))",
            DC_ERR_UNAVAILABLE, "UNAVAILABLE: backend busy");
  run_fails("error({})", DC_ERR_UNKNOWN, "error object is a table value");
  run_fails(
      "error(setmetatable({}, { __tostring = function() "
      "return 'custom' end }))",
      DC_ERR_UNKNOWN, "custom");
  // The module's own errors keep their code.
  run_fails("dc.device('no-such-device')", DC_ERR_NOT_FOUND, "no-such-device");
  // A failure leaves the stack as it was, and the engine usable.
  ck_assert_int_eq(lua_gettop(dclua_engine_state(g_eng)), 0);
  run_ok("ok = true");  // the message stays until the next failure
  DC_CK_STR_HAS(dclua_engine_error(g_eng), "no-such-device");
}
END_TEST

START_TEST(test_engine_run_file) {
  char path[] = "/tmp/check_lua_engine_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  const char* script =
      "local a, b = ...\n"
      "joined = table.concat({ arg[0], a, b }, ',')\n"
      "count = select('#', ...)\n";
  ck_assert_int_eq(write(fd, script, strlen(script)), (ssize_t)strlen(script));
  close(fd);
  const char* argv[] = {path, "one", "two"};
  DC_CK_OK(dclua_engine_set_args(g_eng, 3, argv));
  DC_CK_OK(dclua_engine_run_file(g_eng, path));
  char joined[256];
  DC_CK_OK(
      dclua_engine_get_string(g_eng, "joined", joined, sizeof(joined), NULL));
  char want[256];
  snprintf(want, sizeof(want), "%s,one,two", path);
  ck_assert_str_eq(joined, want);
  int64_t count = 0;
  DC_CK_OK(dclua_engine_get_integer(g_eng, "count", &count));
  ck_assert_int_eq(count, 2);
  DC_CK_OK(dclua_engine_set_args(g_eng, 0, NULL));
  DC_CK_OK(dclua_engine_run_file(g_eng, path));
  DC_CK_OK(dclua_engine_get_integer(g_eng, "count", &count));
  ck_assert_int_eq(count, 0);
  unlink(path);
  DC_CK_FAIL(dclua_engine_run_file(g_eng, path), DC_ERR_NOT_FOUND,
             "cannot open");
  DC_CK_FAIL(dclua_engine_run_file(g_eng, "/"), DC_ERR_INVALID_ARGUMENT,
             "cannot read");
}
END_TEST

START_TEST(test_engine_call) {
  lua_State* L = dclua_engine_state(g_eng);
  run_ok(
      "function divmod(a, b) return a // b, a % b end "
      "function fail(code) error(dc.error(code, 'asked to')) end");
  lua_getglobal(L, "divmod");
  lua_pushinteger(L, 17);
  lua_pushinteger(L, 5);
  DC_CK_OK(dclua_engine_call(g_eng, 2, LUA_MULTRET));
  ck_assert_int_eq(lua_gettop(L), 2);
  ck_assert_int_eq(lua_tointeger(L, 1), 3);
  ck_assert_int_eq(lua_tointeger(L, 2), 2);
  lua_settop(L, 0);
  lua_getglobal(L, "fail");
  lua_pushstring(L, "DATA_LOSS");
  DC_CK_FAIL(dclua_engine_call(g_eng, 1, 1), DC_ERR_DATA_LOSS, "asked to");
  ck_assert_int_eq(lua_gettop(L), 0);
  DC_CK_FAIL(dclua_engine_call(g_eng, 0, 0), DC_ERR_INVALID_ARGUMENT,
             "fewer than 1 values");
  lua_pushnil(L);
  DC_CK_FAIL(dclua_engine_call(g_eng, 1, 0), DC_ERR_INVALID_ARGUMENT,
             "fewer than 2 values");
  DC_CK_FAIL(dclua_engine_call(g_eng, -1, 0), DC_ERR_INVALID_ARGUMENT,
             "dclua_engine_call");
  DC_CK_FAIL(dclua_engine_call(g_eng, 0, 0), DC_ERR_UNKNOWN,
             "attempt to call a nil value");
  ck_assert_int_eq(lua_gettop(L), 0);
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_engine_destroy_with_objects_alive) {
  dc_buffer_t* shared =
      dc_test_buffer_new(dc_test_cpu(g_ctx), DC_DTYPE_F64, 8, "shared");
  DC_CK_OK(dclua_engine_set_buffer(g_eng, "shared", shared));
  run_ok(
      "local dev = dc.device() "
      "keep = { dev:buffer('f32', 1024), dev:buffer('u8', 7), shared,"
      "         shared:view(2, 3) }");
  ck_assert_uint_ge(dc_context_live_buffer_count(g_ctx), 3);
  dclua_engine_destroy(g_eng);
  g_eng = NULL;
  // Only the host's buffer is left, and it still works.
  ck_assert_uint_eq(dc_context_live_buffer_count(g_ctx), 1);
  double one = 1;
  DC_CK_OK(dc_buffer_fill(shared, 0, 8, &one));
  dc_buffer_release(shared);
  DC_CK_OK(dclua_engine_create(g_ctx, &g_eng));  // for the teardown
}
END_TEST

START_TEST(test_engine_many_engines_share_a_context) {
  dclua_engine_t* engines[4];
  for (int i = 0; i < 4; ++i) {
    DC_CK_OK(dclua_engine_create(g_ctx, &engines[i]));
    DC_CK_OK(dclua_engine_set_integer(engines[i], "id", i));
    DC_CK_OK(dclua_engine_run_string(engines[i], "b = dc.buffer('i32', { id })",
                                     NULL));
  }
  for (int i = 0; i < 4; ++i) {
    int64_t id = -1;
    DC_CK_OK(dclua_engine_run_string(engines[i], "id = b[1]", NULL));
    DC_CK_OK(dclua_engine_get_integer(engines[i], "id", &id));
    ck_assert_int_eq(id, i);
    dclua_engine_destroy(engines[i]);
  }
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_engine_memory_limit) {
  size_t used = dclua_engine_memory_used(g_eng);
  ck_assert_uint_gt(used, 1024);
  run_ok("big = ('x'):rep(1 << 20)");
  ck_assert_uint_gt(dclua_engine_memory_used(g_eng), used + (1 << 20));
  run_ok("big = nil; collectgarbage()");
  DC_CK_OK(dclua_engine_set_memory_limit(g_eng, used + (4u << 20)));
  run_fails("local t = {} for i = 1, 1e9 do t[i] = ('y'):rep(64) .. i end",
            DC_ERR_OUT_OF_MEMORY, "memory limit of");
  // pcall catches it; the script goes on within the limit.
  run_ok(
      "local ok, err = pcall(string.rep, 'z', 64 << 20) "
      "assert(not ok and err == 'not enough memory')");
  ck_assert_uint_le(dclua_engine_memory_used(g_eng), used + (4u << 20));
  DC_CK_OK(dclua_engine_set_memory_limit(g_eng, 0));
  run_ok("collectgarbage() local s = ('z'):rep(8 << 20) assert(#s == 8 << 20)");
}
END_TEST

START_TEST(test_engine_time_limit) {
  DC_CK_OK(dclua_engine_set_time_limit(g_eng, 0.2));
  run_ok("local n = 0 for i = 1, 1000 do n = n + i end");
  double start = seconds_now();
  run_fails("while true do end", DC_ERR_DEADLINE_EXCEEDED,
            "time limit exceeded");
  double took = seconds_now() - start;
  ck_assert_double_ge(took, 0.19);
  ck_assert_double_lt(took, 5.0);
  // pcall cannot hold it back, nor can a coroutine.
  start = seconds_now();
  run_fails("while true do pcall(function() while true do end end) end",
            DC_ERR_DEADLINE_EXCEEDED, "time limit exceeded");
  run_fails(
      "while true do coroutine.resume(coroutine.create(function() "
      "while true do end end)) end",
      DC_ERR_DEADLINE_EXCEEDED, "time limit exceeded");
  ck_assert_double_lt(seconds_now() - start, 5.0);
  // Each run has its own budget: two runs that each sleep 2.5 s (wall
  // time, which a loaded machine only lengthens by its scheduling delay)
  // and then run Lua code past the hook's next look at the clock take
  // longer together than the 4 s limit, one alone 1.5 s less (room for a
  // slow fork under a sanitizer on a busy machine).
  DC_CK_OK(dclua_engine_set_time_limit(g_eng, 4.0));
  for (int i = 0; i < 2; ++i) {
    run_ok("os.execute('sleep 2.5') for i = 1, 100000 do end");
  }
  DC_CK_OK(dclua_engine_set_time_limit(g_eng, 0));
  run_ok("for i = 1, 1000000 do end");
}
END_TEST

//===-- sandbox ---------------------------------------------------------===//

START_TEST(test_engine_sandbox) {
  char dir[] = "/tmp/check_lua_sandbox_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  DC_CK_FAIL(dclua_engine_sandbox(g_eng, "/no/such/dir"), DC_ERR_NOT_FOUND,
             "/no/such/dir");
  DC_CK_OK(dclua_engine_sandbox(g_eng, dir));
  DC_CK_OK(dclua_engine_set_string(g_eng, "dir", dir));
  run_ok("assert(os.execute == nil and io.popen == nil and os.exit == nil)");
  run_ok("assert(debug == nil and package.loadlib == nil)");
  run_ok("assert(package.cpath == '' and #package.searchers == 2)");
  run_ok(
      "local f, err = io.open('/tmp/check_lua_outside', 'w') "
      "assert(f == nil and err:find('sandbox: writing', 1, true))");
  run_ok(
      "local f = assert(io.open(dir .. '/inside.txt', 'w')) "
      "f:write('ok') f:close() "
      "assert(io.open(dir .. '/inside.txt'):read('a') == 'ok') "
      "assert(os.remove(dir .. '/inside.txt'))");
  run_ok("assert(load(string.dump(function() end)) == nil)");
  run_fails("dc.trace.start() dc.trace.write('/tmp/check_lua_trace.json')",
            DC_ERR_PERMISSION_DENIED, "sandbox");
  rmdir(dir);
}
END_TEST

START_TEST(test_engine_sandbox_without_directory) {
  DC_CK_OK(dclua_engine_sandbox(g_eng, NULL));
  run_ok(
      "local f, err = io.open('x.txt', 'a') "
      "assert(f == nil and err:find('no writable directory', 1, true))");
  run_fails("os.tmpname()", DC_ERR_PERMISSION_DENIED, "no writable");
  run_ok("assert(io.open('/dev/null', 'r'))");  // reading stays
}
END_TEST

// Asserts that dc.device() in |eng| is |ctx|'s default device: the first
// GPU, else the CPU.
static void expect_contexts_default_device(dclua_engine_t* eng,
                                           dc_context_t* ctx) {
  dc_device_t* want = NULL;
  DC_CK_OK(dc_context_default_device(ctx, &want));
  DC_CK_OK(dclua_engine_run_string(eng, "name = dc.device().name", "=test"));
  char name[64];
  DC_CK_OK(dclua_engine_get_string(eng, "name", name, sizeof(name), NULL));
  ck_assert_str_eq(name, dc_device_name(want));
}

START_TEST(test_engine_default_device) {
  lua_State* L = dclua_engine_state(g_eng);
  DC_CK_OK(dclua_set_default_device(L, "cpu"));
  run_ok("assert(dc.device().name == 'cpu')");
  DC_CK_OK(dclua_set_default_device(L, "nothing"));
  run_fails("dc.device()", DC_ERR_NOT_FOUND, "nothing");
  DC_CK_OK(dclua_set_default_device(L, NULL));
  expect_contexts_default_device(g_eng, g_ctx);  // the CPU backend alone
  run_ok("assert(dc.device() == dc.devices()[1])");
}
END_TEST

// On a context with every backend (a GPU where the machine has one),
// dc.device() is the context's default device, and dc.devices() lists
// the context's devices in its order, the CPU first.
START_TEST(test_engine_default_device_with_every_backend) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "all";
  dc_context_t* ctx = dc_test_context_new(&p);
  dclua_engine_t* eng = NULL;
  DC_CK_OK(dclua_engine_create(ctx, &eng));
  expect_contexts_default_device(eng, ctx);
  DC_CK_OK(dclua_engine_run_string(eng, "count = #dc.devices() "
                                        "first = dc.devices()[1].name",
                                   "=test"));
  int64_t count = 0;
  DC_CK_OK(dclua_engine_get_integer(eng, "count", &count));
  ck_assert_int_eq(count, (int64_t)dc_context_device_count(ctx));
  char first[16];
  DC_CK_OK(dclua_engine_get_string(eng, "first", first, sizeof(first), NULL));
  ck_assert_str_eq(first, "cpu");
  dclua_engine_destroy(eng);
  dc_context_release(ctx);
}
END_TEST

static Suite* lua_engine_suite(void) {
  Suite* s = suite_create("lua_engine");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, engine_setup, engine_teardown);
  // An engine that makes its own context gets every backend: on a GPU
  // machine that starts the driver, more than Check's default 4 s.
  tcase_set_timeout(core, 60);
  tcase_add_test(core, test_engine_create_with_context);
  tcase_add_test(core, test_engine_create_own_context);
  tcase_add_test(core, test_engine_null_arguments);
  tcase_add_test(core, test_engine_run_errors);
  tcase_add_test(core, test_engine_run_file);
  tcase_add_test(core, test_engine_call);
  tcase_add_test(core, test_engine_host_functions);
  suite_add_tcase(s, core);

  TCase* globals = tcase_create("globals");
  tcase_add_checked_fixture(globals, engine_setup, engine_teardown);
  tcase_add_test(globals, test_engine_globals_from_host);
  tcase_add_test(globals, test_engine_globals_to_host);
  tcase_add_test(globals, test_engine_globals_wrong_or_missing);
  tcase_add_test(globals, test_engine_global_errors_from_metamethods);
  tcase_add_test(globals, test_engine_buffer_from_host);
  tcase_add_test(globals, test_engine_buffer_to_host);
  tcase_add_test(globals, test_engine_buffer_errors);
  suite_add_tcase(s, globals);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, engine_setup, engine_teardown);
  tcase_add_test(lifecycle, test_engine_destroy_with_objects_alive);
  tcase_add_test(lifecycle, test_engine_many_engines_share_a_context);
  suite_add_tcase(s, lifecycle);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, engine_setup, engine_teardown);
  tcase_set_timeout(limits, 30);
  tcase_add_test(limits, test_engine_memory_limit);
  tcase_add_test(limits, test_engine_time_limit);
  tcase_add_test(limits, test_engine_sandbox);
  tcase_add_test(limits, test_engine_sandbox_without_directory);
  tcase_add_test(limits, test_engine_default_device);
  tcase_add_test(limits, test_engine_default_device_with_every_backend);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(lua_engine_suite)

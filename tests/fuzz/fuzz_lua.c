// fuzz_lua.c: the `dc` module as a fuzz target. Each input runs
// fuzz_lua.lua (embedded at build time as dc_fuzz_lua_driver) in a fresh
// engine, sandboxed to a scratch directory, with a cap on the Lua heap and
// a time limit: the driver turns the input's bytes into calls of every
// function and method of the module with hostile arguments (see its
// header). All inputs share one context, as the scripts of a long-lived
// host do, so that compiled kernels are cached across inputs.
//
// Besides crashes, sanitizer reports and hangs, the target aborts when an
// input leaves the engine unusable: after the engine is destroyed (every
// object of the script closed) a plain stream must still fill and read a
// buffer within a few seconds.
//
// Built as a libFuzzer binary (fuzz_lua, clang with DC_FUZZ=ON) and,
// always, into fuzz_lua_replay (lua_replay_main.c), which runs it over the
// seeds and pseudo-random inputs for a bounded time in the normal test
// suite. docs/fuzzing.md has the commands.
// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <lauxlib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dc/dc.h"
#include "dclua.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Releases the shared context and removes the scratch directory (also at
// exit); the next input sets them up again.
void dc_fuzz_lua_teardown(void);
extern const char dc_fuzz_lua_driver[];  // fuzz_lua.lua, embedded

// What one input may use: the Lua heap, each device's buffers, the wall
// time of a run, and the time of one dispatch of a (checked) kernel.
#define FUZZ_LUA_HEAP ((size_t)64 << 20)
#define FUZZ_DEVICE_BUDGET ((size_t)16 << 20)
#define FUZZ_RUN_SECONDS 2.0
#define FUZZ_KERNEL_NS 200000000ull

static dc_context_t* g_context;
static char g_scratch[64];  // the sandbox's writable directory

static void fail(const char* what) {
  fprintf(stderr, "fuzz_lua: %s: %s\n", what, dc_last_error());
  abort();
}

// Removes the files an input wrote into the scratch directory.
static void clear_scratch(bool remove_dir) {
  DIR* d = opendir(g_scratch);
  if (d == NULL) return;
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[sizeof(g_scratch) + 256];
    snprintf(path, sizeof(path), "%s/%s", g_scratch, e->d_name);
    unlink(path);
  }
  closedir(d);
  if (remove_dir) rmdir(g_scratch);
}

static void set_up(void) {
  snprintf(g_scratch, sizeof(g_scratch), "/tmp/dc_fuzz_lua.XXXXXX");
  if (mkdtemp(g_scratch) == NULL) {
    perror("fuzz_lua: mkdtemp");
    abort();
  }
  dc_context_params_t params = {
      .log_level = DC_LOG_OFF,
      .thread_count = 2,
      .device_memory_budget = FUZZ_DEVICE_BUDGET,
      .backends = "cpu",
      .kernel_cache_dir = "off",
      .checked_kernels = true,
      .kernel_time_limit_ns = FUZZ_KERNEL_NS,
  };
  if (dc_context_create(&params, &g_context) != DC_OK) fail("context");
  atexit(dc_fuzz_lua_teardown);  // libFuzzer's exit too
}

void dc_fuzz_lua_teardown(void) {
  if (g_context == NULL) return;
  dc_context_release(g_context);
  g_context = NULL;
  clear_scratch(true);
}

// Pushes { [name] = { meta = mt, tables = { t, ... } } } for every
// metatable the module registered ("dc.<class>"): the tables hold its
// functions (the metatable itself, its method table, and tables that its
// C closures keep as upvalues, such as dc.buffer's methods).
static void push_classes(lua_State* L) {
  lua_newtable(L);
  int classes = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TTABLE ||
        strncmp(lua_tostring(L, -2), "dc.", 3) != 0) {
      lua_pop(L, 1);
      continue;
    }
    int mt = lua_gettop(L);
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, mt);
    lua_setfield(L, -2, "meta");
    lua_newtable(L);
    int tables = lua_gettop(L);
    lua_Integer n = 0;
    lua_pushvalue(L, mt);
    lua_rawseti(L, tables, ++n);
    lua_pushnil(L);
    while (lua_next(L, mt) != 0) {
      if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushvalue(L, -1);
        lua_rawseti(L, tables, ++n);
      } else if (lua_iscfunction(L, -1)) {
        for (int i = 1; lua_getupvalue(L, -1, i) != NULL; ++i) {
          if (lua_type(L, -1) == LUA_TTABLE) {
            lua_rawseti(L, tables, ++n);
          } else {
            lua_pop(L, 1);
          }
        }
      }
      lua_pop(L, 1);
    }
    lua_setfield(L, -2, "tables");
    lua_pushvalue(L, -3);  // the name
    lua_insert(L, -2);
    lua_rawset(L, classes);
    lua_pop(L, 1);  // the metatable
  }
}

// Pushes a list of forged light userdata: pointers no object lives at.
static void push_lights(lua_State* L) {
  static const uintptr_t values[] = {0, 8, 0x41414141, (uintptr_t)-1};
  lua_createtable(L, 4, 0);
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); ++i) {
    lua_pushlightuserdata(L, (void*)values[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static uint64_t dc_fuzz_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// Runs the driver over one input in a fresh engine.
static void run_driver(const uint8_t* data, size_t size) {
  dclua_engine_t* engine = NULL;
  if (dclua_engine_create(g_context, &engine) != DC_OK) fail("engine");
  if (dclua_engine_sandbox(engine, g_scratch) != DC_OK ||
      dclua_engine_set_memory_limit(engine, FUZZ_LUA_HEAP) != DC_OK ||
      dclua_engine_set_time_limit(engine, FUZZ_RUN_SECONDS) != DC_OK) {
    fail("engine limits");
  }
  lua_State* L = dclua_engine_state(engine);
  if (luaL_loadbufferx(L, dc_fuzz_lua_driver, strlen(dc_fuzz_lua_driver),
                       "=fuzz_lua.lua", "t") != LUA_OK) {
    fprintf(stderr, "fuzz_lua: %s\n", lua_tostring(L, -1));
    abort();
  }
  lua_pushlstring(L, (const char*)data, size);
  push_classes(L);
  push_lights(L);
  bool verbose = getenv("DC_FUZZ_LUA_VERBOSE") != NULL;
  uint64_t start = dc_fuzz_now_ns();
  dc_status_t st = dclua_engine_call(engine, 3, 0);
  if (st != DC_OK && verbose) {
    fprintf(stderr, "fuzz_lua: the driver stopped: %s\n",
            dclua_engine_error(engine));
  }
  uint64_t ran = dc_fuzz_now_ns();
  dclua_engine_destroy(engine);
  if (verbose) {
    fprintf(stderr, "fuzz_lua: run %.3f s, engine destroyed in %.3f s\n",
            (double)(ran - start) * 1e-9,
            (double)(dc_fuzz_now_ns() - ran) * 1e-9);
  }
}

// Undoes what a script may leave in the shared context (fault rules, a
// timeline being recorded, open breakers, a device marked unhealthy), so
// that each input starts alike, then checks the engine still works.
static void reset_and_check(void) {
  dc_fault_clear(g_context);
  dc_trace_stop(g_context);
  for (size_t i = 0; i < dc_breaker_count(g_context); ++i) {
    dc_breaker_t* breaker = NULL;
    if (dc_breaker_at(g_context, i, &breaker) == DC_OK) {
      dc_breaker_reset(breaker);
    }
  }
  dc_device_t* cpu = NULL;
  if (dc_context_device(g_context, 0, &cpu) != DC_OK) fail("device");
  dc_device_reset_health(cpu);
  dc_device_set_retry_policy(cpu, NULL);
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = 16,
                           .label = "fuzz check"};
  dc_buffer_t* buffer = NULL;
  dc_stream_t* stream = NULL;
  if (dc_buffer_create(cpu, &bp, &buffer) != DC_OK) fail("check buffer");
  if (dc_stream_create(cpu, NULL, &stream) != DC_OK) fail("check stream");
  int32_t seven = 7, got[16] = {0};
  if (dc_stream_fill(stream, buffer, 0, 16, &seven) != DC_OK ||
      dc_stream_sync(stream, 10ull * 1000000000ull) != DC_OK ||
      dc_buffer_read(buffer, 0, got, 16) != DC_OK || got[15] != 7) {
    fail("the engine is unusable after the input");
  }
  dc_stream_release(stream);
  dc_buffer_release(buffer);
  clear_scratch(false);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_context == NULL) set_up();
  run_driver(data, size);
  reset_and_check();
  return 0;
}

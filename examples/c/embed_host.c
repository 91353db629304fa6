// embed_host.c: a C host that lets a Lua script configure its work.
//
// The host makes a context and an input buffer in C, shares them with a
// configuration script through an engine (dclua.h), runs the script,
// which compiles and runs a kernel, and reads the results back from the
// script's globals: an output buffer, a number and a string. It checks
// every value against its own computation, and shows how a failing script
// reaches the host as a status and a message.
//   Run: ./embed_host [examples/lua/embed_config.lua]
// SPDX-License-Identifier: MIT
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dclua.h"

#define N 1024
#define GAIN 2.0
#define BIAS 1.0  // as embed_config.lua sets it

// host_log(message): the script reports through the host's log.
static int host_log(lua_State* L) {
  const char* prefix = lua_touserdata(L, lua_upvalueindex(1));
  printf("%s%s\n", prefix, luaL_checkstring(L, 1));
  return 0;
}

static dc_buffer_t* make_input(dc_context_t* ctx) {
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_device(ctx, 0, &cpu));
  dc_buffer_params_t params = {
      .dtype = DC_DTYPE_F32, .length = N, .label = "input"};
  dc_buffer_t* input = NULL;
  DC_CHECK(dc_buffer_create(cpu, &params, &input));
  float values[N];
  for (int i = 0; i < N; ++i) values[i] = 0.5f * (float)i;
  DC_CHECK(dc_buffer_write(input, 0, values, N));
  return input;
}

// Reads the script's results and checks them; returns the mismatches.
static int check_results(dclua_engine_t* eng) {
  dc_buffer_t* output = NULL;
  DC_CHECK(dclua_engine_get_buffer(eng, "output", &output));
  float out[N];
  DC_CHECK(dc_buffer_read(output, 0, out, N));
  dc_buffer_release(output);
  int bad = 0;
  double want_total = 0;
  for (int i = 0; i < N; ++i) {
    float want = (float)GAIN * (0.5f * (float)i) + (float)BIAS;
    want_total += want;
    if (out[i] != want) ++bad;
  }
  double total = 0;
  DC_CHECK(dclua_engine_get_number(eng, "total", &total));
  if (total != want_total) ++bad;
  char summary[128];
  DC_CHECK(
      dclua_engine_get_string(eng, "summary", summary, sizeof(summary), NULL));
  if (strstr(summary, "scale_bias: 1024 values") == NULL) ++bad;
  printf("output checked: %d mismatches, total %.1f (want %.1f)\n", bad, total,
         want_total);
  return bad;
}

// A script error reaches the host as a status, with the message and a
// traceback.
static int show_failure(dclua_engine_t* eng) {
  dc_status_t status = dclua_engine_run_string(
      eng, "dc.device():compile('__kernel void k() { oops }')", "=broken");
  printf("a broken script fails with %s:\n  %.60s...\n", dc_status_name(status),
         dclua_engine_error(eng));
  return status == DC_ERR_COMPILE ? 0 : 1;
}

int main(int argc, char** argv) {
  const char* config = argc > 1 ? argv[1] : "examples/lua/embed_config.lua";
  dc_context_t* ctx = NULL;
  DC_CHECK(dc_context_create(NULL, &ctx));
  dc_buffer_t* input = make_input(ctx);

  dclua_engine_t* eng = NULL;
  DC_CHECK(dclua_engine_create(ctx, &eng));  // a Lua state with `dc` loaded
  DC_CHECK(dclua_engine_set_buffer(eng, "input", input));
  DC_CHECK(dclua_engine_set_integer(eng, "n", N));
  DC_CHECK(dclua_engine_set_number(eng, "gain", GAIN));
  DC_CHECK(dclua_engine_register(eng, "host_log", host_log, "[config] "));
  int failures = 0;
  if (dclua_engine_run_file(eng, config) != DC_OK) {
    fprintf(stderr, "%s failed: %s\n", config, dclua_engine_error(eng));
    failures = 1;
  } else {
    failures = check_results(eng) + show_failure(eng);
  }
  dclua_engine_destroy(eng);
  dc_buffer_release(input);
  dc_context_release(ctx);
  puts(failures == 0 ? "embed_host: ok" : "embed_host: FAILED");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

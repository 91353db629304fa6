// dclua.c: the dclua runner: runs pipeline scripts with the `dc` module.
//
//   dclua [options] [script.lua [args...]]
//
// Exit status: 0 on success, 1 when a script fails (the error and a
// traceback go to stderr), 2 on bad usage.
// SPDX-License-Identifier: MIT
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dclua.h"

#define EXIT_USAGE 2

static const char kUsage[] =
    "usage: dclua [options] [script.lua [args...]]\n"
    "  -e STAT          run the Lua statement STAT\n"
    "  -v, --version    print the version and exit\n"
    "  --list-devices   print the devices and their capabilities, then exit\n"
    "  --log LEVEL      log level: off, error, warn, info, debug, trace\n"
    "  -h, --help       print this help and exit\n"
    "  --               stop handling options\n"
    "With no script and no -e, dclua prints this help.\n";

typedef struct options_t {
  const char* statements[32];
  int statement_count;
  bool version;
  bool list_devices;
  const char* log_level;
  int script_index;  // index in argv of the script, 0 if none
} options_t;

static int usage_error(const char* message, const char* arg) {
  fprintf(stderr, "dclua: %s '%s'\n%s", message, arg, kUsage);
  return EXIT_USAGE;
}

// Returns 0 when the options are valid, else an exit status.
static int parse_options(int argc, char** argv, options_t* o) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "--") == 0) {
      ++i;
      break;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
      o->version = true;
    } else if (strcmp(a, "--list-devices") == 0) {
      o->list_devices = true;
    } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(kUsage, stdout);
      exit(EXIT_SUCCESS);
    } else if (strcmp(a, "-e") == 0 || strcmp(a, "--log") == 0) {
      if (i + 1 >= argc) return usage_error("missing value after", a);
      if (a[1] == 'e') {
        if (o->statement_count == 32) return usage_error("too many", a);
        o->statements[o->statement_count++] = argv[++i];
      } else {
        o->log_level = argv[++i];
      }
    } else {
      return usage_error("unknown option", a);
    }
  }
  o->script_index = i < argc ? i : 0;
  return 0;
}

// Message handler for lua_pcall: adds a traceback to string errors and to
// error objects (through their __tostring).
static int message_handler(lua_State* L) {
  const char* message = lua_tostring(L, 1);
  if (message == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
      message = lua_tostring(L, -1);
    } else {
      message = lua_pushfstring(L, "(error object is a %s value)",
                                luaL_typename(L, 1));
    }
  }
  luaL_traceback(L, L, message, 1);
  return 1;
}

static int report(lua_State* L, int status) {
  if (status != LUA_OK) {
    fprintf(stderr, "dclua: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  return status;
}

static int call_chunk(lua_State* L, int nargs) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  int status = lua_pcall(L, nargs, 0, base);
  lua_remove(L, base);
  return report(L, status);
}

// Sets the global `arg` as the stock interpreter does: the script at
// index 0, its arguments at 1..n, the interpreter and options below 0.
static void set_arg_table(lua_State* L, int argc, char** argv, int script) {
  lua_createtable(L, argc - script - 1, script + 1);
  for (int i = 0; i < argc; ++i) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

static int run_script(lua_State* L, int argc, char** argv, int script) {
  set_arg_table(L, argc, argv, script);
  const char* path = strcmp(argv[script], "-") == 0 ? NULL : argv[script];
  if (report(L, luaL_loadfile(L, path)) != LUA_OK) return LUA_ERRFILE;
  for (int i = script + 1; i < argc; ++i) lua_pushstring(L, argv[i]);
  return call_chunk(L, argc - script - 1);
}

static void print_devices(dc_context_t* context) {
  for (size_t i = 0; i < dc_context_device_count(context); ++i) {
    dc_device_t* device = NULL;
    if (dc_context_device(context, i, &device) != DC_OK) continue;
    const dc_device_info_t* d = dc_device_info(device);
    printf("%-8s %s\n", d->name, d->model);
    printf("         compute units %u, threads %u, simd %u bytes, "
           "memory %zu MiB\n",
           d->compute_units, d->worker_threads, d->simd_width,
           d->memory_size >> 20);
    printf("         caches L1d %zu KiB, L2 %zu KiB, L3 %zu KiB, "
           "max work-group %u, local memory %zu KiB\n",
           d->cache_l1d_size >> 10, d->cache_l2_size >> 10,
           d->cache_l3_size >> 10, d->max_work_group_size,
           d->local_memory_size >> 10);
  }
}

static dc_status_t create_context(const options_t* o, dc_context_t** out) {
  dc_context_params_t params = {0};
  if (o->log_level != NULL &&
      !dc_log_level_parse(o->log_level, &params.log_level)) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "--log '%s' is not a log level (off, error, warn, "
                        "info, debug, trace)",
                        o->log_level);
  }
  return dc_context_create(&params, out);
}

static int run(lua_State* L, int argc, char** argv, const options_t* o) {
  for (int i = 0; i < o->statement_count; ++i) {
    if (report(L, luaL_loadstring(L, o->statements[i])) != LUA_OK ||
        call_chunk(L, 0) != LUA_OK) {
      return EXIT_FAILURE;
    }
  }
  if (o->script_index > 0 &&
      run_script(L, argc, argv, o->script_index) != LUA_OK) {
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}

int main(int argc, char** argv) {
  options_t options = {0};
  int rc = parse_options(argc, argv, &options);
  if (rc != 0) return rc;
  if (options.version) printf("dclua %s (%s)\n", dc_version_string(),
                              LUA_RELEASE);
  bool nothing_to_run = options.script_index == 0 &&
                        options.statement_count == 0;
  if (nothing_to_run && !options.version && !options.list_devices) {
    fputs(kUsage, stdout);
    return EXIT_SUCCESS;
  }
  dc_context_t* context = NULL;
  dc_status_t status = create_context(&options, &context);
  if (status != DC_OK) {
    fprintf(stderr, "dclua: %s: %s\n", dc_status_name(status),
            dc_last_error());
    return status == DC_ERR_INVALID_ARGUMENT ? EXIT_USAGE : EXIT_FAILURE;
  }
  if (options.list_devices) print_devices(context);
  lua_State* L = luaL_newstate();
  if (L == NULL) {
    dc_context_release(context);
    fputs("dclua: cannot create a Lua state\n", stderr);
    return EXIT_FAILURE;
  }
  luaL_openlibs(L);
  dclua_set_context(L, context);
  luaL_requiref(L, "dc", luaopen_dc, 0);
  lua_pop(L, 1);
  rc = nothing_to_run ? EXIT_SUCCESS : run(L, argc, argv, &options);
  lua_close(L);
  dc_context_release(context);
  return rc;
}

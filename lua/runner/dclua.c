// dclua.c: the dclua runner: runs pipeline scripts with the `dc` module.
//
//   dclua [options] [script.lua [args...]]
//
// The runner is a host of the embedding API (dclua_engine_t): it makes
// the context from its options, an engine in it, and runs the -e and -l
// options, the script and the interactive loop there, in that order.
//
// Exit status: 0 on success, 1 when a script fails (the error and a
// traceback go to stderr), 2 on bad usage (also a script's own, see
// dclua_engine_usage_error).
// SPDX-License-Identifier: MIT
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner.h"

#define EXIT_USAGE 2
#define USAGE_HINT "usage: dclua [options] [script [args]]; dclua --help for more\n"
#define MAX_ACTIONS 64

#define RETURN_IF_ERROR(expr)             \
  do {                                    \
    dc_status_t status_ = (expr);         \
    if (status_ != DC_OK) return status_; \
  } while (0)

static const char kUsage[] =
    "usage: dclua [options] [script.lua [args...]]\n"
    "  -e STAT           run the Lua statement STAT\n"
    "  -l NAME           require module NAME into the global NAME\n"
    "  -l G=NAME         require module NAME into the global G\n"
    "  -i                enter interactive mode after the script (or "
    "without one)\n"
    "  -E                ignore LUA_INIT, LUA_PATH and LUA_CPATH\n"
    "  -W                turn warnings on\n"
    "  -v, --version     print the version\n"
    "  -h, --help        print this help and exit\n"
    "  --list-devices    print the devices and their capabilities\n"
    "  --device NAME     make dc.device() give device NAME (cpu, cuda:0)\n"
    "  --log LEVEL       log level: off, error, warn, info, debug, trace\n"
    "  --trace FILE      record a timeline and write it to FILE (Chrome "
    "trace JSON)\n"
    "                    at exit, even when the script fails\n"
    "  --stats           print telemetry counters and kernel times to "
    "stderr at exit\n"
    "  --metrics FILE    write the telemetry to FILE at exit, as OpenMetrics "
    "text\n"
    "  --sandbox[=DIR]   run untrusted code: no programs, C modules or "
    "debug library;\n"
    "                    files written only below DIR (none without DIR);\n"
    "                    kernels compiled in checked mode\n"
    "  --memory-limit MB cap the Lua heap and each device's buffers at MB "
    "MiB\n"
    "  --time-limit S    stop each chunk (-e, -l, the script, an "
    "interactive line)\n"
    "                    after S seconds\n"
    "  --progress[=WHEN] progress lines on stderr for long work; WHEN is "
    "auto (on a\n"
    "                    terminal: the default), on (also plain "
    "--progress), off, or\n"
    "                    always (even short work leaves its line); sets "
    "DC_PROGRESS\n"
    "  --                stop handling options\n"
    "LUA_INIT_5_4 or LUA_INIT (a chunk, or @file) runs first, then -e and\n"
    "-l in the order given, then the script; a script named - is read from\n"
    "standard input, as is the input when nothing is given and it is not a\n"
    "terminal (on one, the interactive mode starts). Ctrl-C stops the\n"
    "running chunk. Exit status: 0 success, 1 script error, 2 bad usage.\n";

typedef struct action_t {
  char kind;  // 'e': a statement; 'l': a module to require
  const char* value;
} action_t;

typedef struct options_t {
  action_t actions[MAX_ACTIONS];
  int action_count;
  bool version;
  bool list_devices;
  bool interactive;
  bool warnings;
  bool ignore_env;  // -E
  bool read_stdin;  // no script and nothing else to run: standard input
  bool stats;
  bool sandbox;
  const char* sandbox_dir;  // NULL: no writable directory
  const char* log_level;
  const char* device;
  const char* trace_path;
  const char* metrics_path;  // --metrics
  const char* progress;      // --progress: a DC_PROGRESS value; NULL: none
  double memory_limit_mb;  // 0: none
  double time_limit;       // seconds; 0: none
  int script_index;        // index in argv of the script, 0 if none
} options_t;

//===-- Options ---------------------------------------------------------===//

// One line and a hint, not the whole help.
static int usage_error(const char* message, const char* arg) {
  fprintf(stderr, "dclua: %s '%s'\n" USAGE_HINT, message, arg);
  return EXIT_USAGE;
}

// Matches argv[*i] against the option |name| that takes a value: "-e
// VALUE" and "-eVALUE" for a short one, "--name VALUE" and "--name=VALUE"
// for a long one. Sets |*value| (NULL when it is missing) and returns
// true on a match.
static bool match_value(int argc, char** argv, int* i, const char* name,
                        const char** value) {
  const char* a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) != 0) return false;
  if (a[n] == '\0') {
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return true;
  }
  bool is_long = name[1] == '-';
  if (is_long && a[n] != '=') return false;
  *value = a + n + (is_long ? 1 : 0);
  return true;
}

// Reads a positive number for |option|; returns an exit status or 0.
static int parse_positive(const char* option, const char* text, double* out) {
  char* end = NULL;
  double value = strtod(text, &end);
  if (end == text || *end != '\0' || !isfinite(value) || value <= 0) {
    fprintf(stderr, "dclua: %s '%s' is not a positive number\n" USAGE_HINT,
            option, text);
    return EXIT_USAGE;
  }
  *out = value;
  return 0;
}

static int add_action(options_t* o, char kind, const char* value,
                      const char* option) {
  if (o->action_count == MAX_ACTIONS) return usage_error("too many", option);
  o->actions[o->action_count++] = (action_t){kind, value};
  return 0;
}

// Stores the value |v| of the option |a| of |kind| (see parse_valued).
static int set_value(options_t* o, char kind, const char* a, const char* v) {
  switch (kind) {
    case 'e':
    case 'l':
      return add_action(o, kind, v, a);
    case 'm':
      return parse_positive(a, v, &o->memory_limit_mb);
    case 's':
      return parse_positive(a, v, &o->time_limit);
    case 'L':
      o->log_level = v;
      return 0;
    case 'd':
      o->device = v;
      return 0;
    case 'M':
      o->metrics_path = v;
      return 0;
    default:
      o->trace_path = v;
      return 0;
  }
}

// Handles one option that takes a value; returns an exit status, 0, or -1
// when |argv[*i]| is none of them.
static int parse_valued(int argc, char** argv, int* i, options_t* o) {
  static const struct {
    const char* name;
    char kind;
  } options[] = {{"-e", 'e'},          {"-l", 'l'},
                 {"--log", 'L'},       {"--device", 'd'},
                 {"--trace", 't'},     {"--memory-limit", 'm'},
                 {"--time-limit", 's'}, {"--metrics", 'M'}};
  const char* a = argv[*i];
  for (size_t k = 0; k < sizeof(options) / sizeof(options[0]); ++k) {
    const char* v = NULL;
    if (!match_value(argc, argv, i, options[k].name, &v)) continue;
    if (v == NULL || (v[0] == '\0' && options[k].name[1] == '-')) {
      return usage_error("missing value after", a);
    }
    return set_value(o, options[k].kind, a, v);
  }
  return -1;
}

// --progress=WHEN: one of the values of DC_PROGRESS; returns an exit
// status or 0.
static int parse_progress(const char* a, options_t* o) {
  static const char* const kWhen[] = {"auto", "on", "off", "always"};
  for (size_t k = 0; k < sizeof(kWhen) / sizeof(kWhen[0]); ++k) {
    if (strcmp(a + 11, kWhen[k]) == 0) {
      o->progress = kWhen[k];
      return 0;
    }
  }
  fprintf(stderr, "dclua: --progress '%s' is not auto, on, off or always\n"
          USAGE_HINT, a + 11);
  return EXIT_USAGE;
}

// Handles one option without a value; returns 0, an exit status, or -1
// when |a| is none.
static int parse_flag(const char* a, options_t* o) {
  if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
    o->version = true;
  } else if (strcmp(a, "-i") == 0) {
    o->interactive = true;
  } else if (strcmp(a, "-W") == 0) {
    o->warnings = true;
  } else if (strcmp(a, "-E") == 0) {
    o->ignore_env = true;
  } else if (strcmp(a, "--list-devices") == 0) {
    o->list_devices = true;
  } else if (strcmp(a, "--stats") == 0) {
    o->stats = true;
  } else if (strcmp(a, "--sandbox") == 0) {
    o->sandbox = true;
  } else if (strncmp(a, "--sandbox=", 10) == 0 && a[10] != '\0') {
    o->sandbox = true;
    o->sandbox_dir = a + 10;
  } else if (strcmp(a, "--progress") == 0) {
    o->progress = "on";
  } else if (strncmp(a, "--progress=", 11) == 0) {
    return parse_progress(a, o);
  } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
    fputs(kUsage, stdout);
    exit(EXIT_SUCCESS);
  } else {
    return -1;
  }
  return 0;
}

// Whether the directory of |path| exists and is writable, so that a
// trace written at exit fails now rather than after a long run.
static bool directory_writable(const char* path) {
  const char* slash = strrchr(path, '/');
  if (slash == NULL) return access(".", W_OK) == 0;
  if (slash == path) return access("/", W_OK) == 0;
  char* dir = strndup(path, (size_t)(slash - path));
  bool ok = dir != NULL && access(dir, W_OK) == 0;
  free(dir);
  return ok;
}

// Returns 0 when the options are valid, else an exit status.
static int parse_options(int argc, char** argv, options_t* o) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; ++i) {
    if (strcmp(argv[i], "--") == 0) {
      ++i;
      break;
    }
    int rc = parse_flag(argv[i], o);
    if (rc < 0) rc = parse_valued(argc, argv, &i, o);
    if (rc < 0) return usage_error("unknown option", argv[i]);
    if (rc > 0) return rc;
  }
  o->script_index = i < argc ? i : 0;
  if (o->trace_path != NULL && !directory_writable(o->trace_path)) {
    return usage_error("--trace: cannot write into the directory of",
                       o->trace_path);
  }
  if (o->metrics_path != NULL && !directory_writable(o->metrics_path)) {
    return usage_error("--metrics: cannot write into the directory of",
                       o->metrics_path);
  }
  if (o->sandbox_dir != NULL) {
    struct stat st;
    if (stat(o->sandbox_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      return usage_error("--sandbox: not a directory:", o->sandbox_dir);
    }
  }
  return 0;
}

//===-- Setting up ------------------------------------------------------===//

static int report_status(dc_status_t status, const char* what) {
  fprintf(stderr, "dclua: %s%s%s: %s\n", what, what[0] ? ": " : "",
          dc_status_name(status), dc_last_error());
  return status == DC_ERR_INVALID_ARGUMENT || status == DC_ERR_NOT_FOUND
             ? EXIT_USAGE
             : EXIT_FAILURE;
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
  params.device_memory_budget = (size_t)(o->memory_limit_mb * 1024.0 * 1024.0);
  // Kernels nobody vetted: every buffer access they make is checked. A
  // time limit needs checked mode's stopping points too, or a kernel that
  // never ends would outlive it.
  params.checked_kernels = o->sandbox || o->time_limit > 0;
  return dc_context_create(&params, out);
}

// [-2, +0, e]  Adds the runner and its options (argv before the script,
// light userdata and count) to `arg` at negative indices, as the stock
// interpreter does; dclua_engine_set_args set the script and its
// arguments at 0..n.
static int set_negative_args(lua_State* L) {
  char** argv = lua_touserdata(L, 1);
  int script = (int)lua_tointeger(L, 2);
  lua_getglobal(L, "arg");
  for (int i = 0; i < script; ++i) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  return 0;
}

static dc_status_t set_args(dclua_engine_t* engine, int argc, char** argv,
                            int script) {
  RETURN_IF_ERROR(dclua_engine_set_args(engine, argc - script,
                                        (const char* const*)(argv + script)));
  lua_State* L = dclua_engine_state(engine);
  lua_pushcfunction(L, set_negative_args);
  lua_pushlightuserdata(L, argv);
  lua_pushinteger(L, script);
  return dclua_engine_call(engine, 2, 0);
}

// [-0, +0, e]  -E: the search paths lua would have without LUA_PATH and
// LUA_CPATH (the engine read them when it opened the package library).
static int ignore_environment(lua_State* L) {
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  if (lua_getglobal(L, "package") != LUA_TTABLE) return 0;
  lua_pushliteral(L, LUA_PATH_DEFAULT);
  lua_setfield(L, -2, "path");
  lua_pushliteral(L, LUA_CPATH_DEFAULT);
  lua_setfield(L, -2, "cpath");
  return 0;
}

// Applies the options to a new engine.
static dc_status_t setup_engine(dclua_engine_t* engine, const options_t* o,
                                int argc, char** argv) {
  lua_State* L = dclua_engine_state(engine);
  if (o->ignore_env) {  // before the sandbox, which empties cpath
    lua_pushcfunction(L, ignore_environment);
    RETURN_IF_ERROR(dclua_engine_call(engine, 0, 0));
  }
  dclua_set_progress(L, isatty(STDERR_FILENO));
  if (o->warnings) lua_warning(L, "@on", 0);
  if (o->device != NULL) dclua_set_default_device(L, o->device);
  RETURN_IF_ERROR(dclua_engine_set_memory_limit(
      engine, (size_t)(o->memory_limit_mb * 1024.0 * 1024.0)));
  RETURN_IF_ERROR(dclua_engine_set_time_limit(engine, o->time_limit));
  if (o->sandbox) {
    RETURN_IF_ERROR(dclua_engine_sandbox(engine, o->sandbox_dir));
  }
  return set_args(engine, argc, argv, o->script_index);
}

//===-- Running ---------------------------------------------------------===//

// [-2, +0, e]  require(module) into the global |name|.
static int require_into(lua_State* L) {
  lua_getglobal(L, "require");
  lua_pushvalue(L, 2);
  lua_call(L, 1, 1);
  lua_setglobal(L, lua_tostring(L, 1));
  return 0;
}

// -l G=NAME, or -l NAME (the global is NAME up to a '-', as stock lua's).
static dc_status_t require_library(dclua_engine_t* engine, const char* spec) {
  lua_State* L = dclua_engine_state(engine);
  const char* equals = strchr(spec, '=');
  const char* module = equals != NULL ? equals + 1 : spec;
  size_t global_length =
      equals != NULL ? (size_t)(equals - spec) : strcspn(spec, "-");
  lua_pushcfunction(L, require_into);
  lua_pushlstring(L, spec, global_length);
  lua_pushstring(L, module);
  return dclua_engine_call(engine, 2, 0);
}

// LUA_INIT_5_4, else LUA_INIT: a chunk, or @file, as lua runs them. In
// the sandbox it runs sandboxed, as the script does.
static dc_status_t run_lua_init(dclua_engine_t* engine) {
  const char* name = "=LUA_INIT_5_4";
  const char* init = getenv("LUA_INIT_5_4");
  if (init == NULL) {
    name = "=LUA_INIT";
    init = getenv("LUA_INIT");
  }
  if (init == NULL) return DC_OK;
  if (init[0] != '@') return dclua_engine_run_string(engine, init, name);
  // "@-" names a file called "-", not standard input.
  return dclua_engine_run_file(engine,
                               strcmp(init + 1, "-") == 0 ? "./-" : init + 1);
}

// Runs one step (the 'i'nit, an 'e' or 'l' action, the 's'cript) with
// Ctrl-C stopping it.
static dc_status_t run_step(dclua_engine_t* engine, char kind,
                            const char* value) {
  dclua_signals_run_begin();
  dc_status_t status = kind == 'i'   ? run_lua_init(engine)
                       : kind == 'e' ? dclua_engine_run_string(
                                           engine, value, "=(command line)")
                       : kind == 'l' ? require_library(engine, value)
                                     : dclua_engine_run_file(engine, value);
  dclua_signals_run_end();
  return status;
}

static int run(dclua_engine_t* engine, const options_t* o, char** argv) {
  dc_status_t status = DC_OK;
  if (!o->ignore_env) status = run_step(engine, 'i', NULL);
  for (int i = 0; status == DC_OK && i < o->action_count; ++i) {
    status = run_step(engine, o->actions[i].kind, o->actions[i].value);
  }
  if (status == DC_OK && (o->script_index > 0 || o->read_stdin)) {
    status = run_step(engine, 's',
                      o->read_stdin ? "-" : argv[o->script_index]);
  }
  if (status != DC_OK && dclua_engine_usage_error(engine)) {
    // A script's bad command line: one line, as the runner's own.
    fprintf(stderr, "dclua: %s\n", dclua_engine_error(engine));
    return EXIT_USAGE;
  }
  if (status != DC_OK) {
    fprintf(stderr, "dclua: %s\n", dclua_engine_error(engine));
    return EXIT_FAILURE;
  }
  return o->interactive ? dclua_repl(engine) : EXIT_SUCCESS;
}

// What happens at exit, also when a script calls os.exit: the trace file
// and the statistics.
static struct {
  dc_context_t* context;
  const options_t* options;
  bool done;
} g_finish;

static int finish(void) {
  if (g_finish.done || g_finish.context == NULL) return EXIT_SUCCESS;
  g_finish.done = true;
  int rc = EXIT_SUCCESS;
  const options_t* o = g_finish.options;
  if (o->trace_path != NULL) {
    dc_trace_stop(g_finish.context);
    dc_status_t status = dc_trace_write(g_finish.context, o->trace_path);
    if (status != DC_OK) {
      report_status(status, "--trace");
      rc = EXIT_FAILURE;
    }
  }
  if (o->stats) dclua_print_stats(g_finish.context, stderr);
  if (o->metrics_path != NULL &&
      !dclua_write_metrics(g_finish.context, o->metrics_path)) {
    rc = EXIT_FAILURE;
  }
  return rc;
}

static void finish_at_exit(void) { finish(); }

static int run_engine(dc_context_t* context, const options_t* o, int argc,
                      char** argv) {
  // --progress works through DC_PROGRESS, which the module checks when it
  // opens and reads when work begins (programs the script starts inherit
  // it too).
  if (o->progress != NULL) setenv("DC_PROGRESS", o->progress, 1);
  dclua_engine_t* engine = NULL;
  dc_status_t status = dclua_engine_create(context, &engine);
  if (status == DC_OK) status = setup_engine(engine, o, argc, argv);
  if (status == DC_OK && o->trace_path != NULL) {
    status = dc_trace_start(context, 0);
  }
  if (status != DC_OK) {
    dclua_engine_destroy(engine);
    return report_status(status, "");
  }
  g_finish.context = context;
  g_finish.options = o;
  atexit(finish_at_exit);
  dclua_signals_install(dclua_engine_state(engine), context);
  int rc = run(engine, o, argv);
  dclua_signals_uninstall();
  dclua_engine_destroy(engine);
  int finish_rc = finish();
  return rc != EXIT_SUCCESS ? rc : finish_rc;
}

int main(int argc, char** argv) {
  options_t options = {0};
  int rc = parse_options(argc, argv, &options);
  if (rc != 0) return rc;
  if (options.version) {
    printf("dclua %s (%s)\n", dc_version_string(), LUA_RELEASE);
  }
  bool has_work = options.script_index > 0 || options.action_count > 0 ||
                  options.interactive;
  if (!has_work && !options.version && !options.list_devices) {
    // As lua: the interactive mode on a terminal, else the input as a script.
    options.interactive = isatty(STDIN_FILENO);
    options.read_stdin = !options.interactive;
    has_work = true;
  }
  dc_context_t* context = NULL;
  dc_status_t status = create_context(&options, &context);
  if (status != DC_OK) return report_status(status, "");
  dc_device_t* device = NULL;
  if (options.device != NULL &&
      (status = dc_context_find_device(context, options.device, &device)) !=
          DC_OK) {
    dc_context_release(context);
    return report_status(status, "--device");
  }
  if (options.list_devices) dclua_print_devices(context, stdout);
  rc = has_work ? run_engine(context, &options, argc, argv) : EXIT_SUCCESS;
  dc_context_release(context);
  return rc;
}

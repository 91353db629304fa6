// repl.c: the runner's interactive mode (-i): a read-eval-print loop over
// standard input, as the stock interpreter's, with GNU readline's line
// editing and history when the build found it (DCLUA_HAVE_READLINE).
//
// A line is first tried as an expression ("return <line>;"), whose values
// are printed; else as a statement, which may go on over more lines while
// the parser reports an unfinished chunk ("<eof>" at the end of its
// message). A leading '=' also means an expression, as in Lua 5.1. Lines
// run through dclua_engine_call, so the engine's traceback, sandbox and
// limits apply to each. Ctrl-C at the prompt drops the chunk being typed;
// two in a row end the loop (signals.c stops a running line).
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DCLUA_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#include "runner.h"

#define CHUNK_NAME "=stdin"
#define EXIT_INTERRUPTED 130

typedef enum { READ_LINE, READ_END, READ_CANCELLED } read_result_t;

static bool g_tty;  // standard input is a terminal: prompts, editing

#ifdef DCLUA_HAVE_READLINE
// Reads keys for readline; a Ctrl-C (the read fails with EINTR) makes it
// accept the line, which read_raw then drops.
static int getc_or_interrupt(FILE* stream) {
  for (;;) {
    unsigned char c;
    ssize_t n = read(fileno(stream), &c, 1);
    if (n == 1) return c;
    if (n == 0 || errno != EINTR) return EOF;
    if (dclua_signals_prompt_interrupted()) return '\n';
  }
}

static void init_input(void) {
  if (!g_tty) return;
  rl_readline_name = "dclua";
  rl_catch_signals = 0;  // signals.c handles SIGINT
  rl_getc_function = getc_or_interrupt;
  rl_inhibit_completion = 1;  // Tab inserts itself, as in plain input
  using_history();
}

static void remember(const char* chunk) {
  if (g_tty && chunk[0] != '\0') add_history(chunk);
}
#else
static void init_input(void) {}
static void remember(const char* chunk) { (void)chunk; }
#endif

// Reads one line of any length without its newline into |*out| (NULL
// unless READ_LINE). Prints |prompt| first on a terminal.
static read_result_t read_raw(const char* prompt, char** out) {
  *out = NULL;
  dclua_signals_prompt_begin();
#ifdef DCLUA_HAVE_READLINE
  if (g_tty) {
    char* line = readline(prompt);
    dclua_signals_prompt_end();
    if (dclua_signals_prompt_interrupted()) {
      free(line);
      return READ_CANCELLED;
    }
    if (line == NULL) return READ_END;
    *out = line;
    return READ_LINE;
  }
#endif
  if (g_tty) {
    fputs(prompt, stdout);
    fflush(stdout);
  }
  size_t capacity = 0;
  ssize_t length = getline(out, &capacity, stdin);
  dclua_signals_prompt_end();
  if (length < 0) {
    free(*out);
    *out = NULL;
    if (!dclua_signals_prompt_interrupted()) return READ_END;
    clearerr(stdin);
    if (g_tty) putchar('\n');
    return READ_CANCELLED;
  }
  if (length > 0 && (*out)[length - 1] == '\n') (*out)[length - 1] = '\0';
  return READ_LINE;
}

// read_raw, dropping on a terminal a line with escape bytes (a cursor key
// without line editing), which the parser could only call garbage.
static read_result_t read_line(const char* prompt, char** out) {
  for (;;) {
    read_result_t result = read_raw(prompt, out);
    if (result != READ_LINE || !g_tty || strchr(*out, 0x1b) == NULL) {
      return result;
    }
    fputs("dclua: line dropped: it holds escape characters (cursor keys?)\n",
          stderr);
    free(*out);
  }
}

// Whether a load failed only because the chunk is unfinished.
static bool incomplete(lua_State* L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t length = 0;
  const char* message = lua_tolstring(L, -1, &length);
  static const char eof[] = "<eof>";
  return length >= sizeof(eof) - 1 &&
         strcmp(message + length - (sizeof(eof) - 1), eof) == 0;
}

// Loads "return <expression>;" from |line|. Leaves the function or an
// error message on the stack.
static int load_expression(lua_State* L, const char* expression) {
  size_t size = strlen(expression) + sizeof("return ;");
  char* chunk = malloc(size);
  if (chunk == NULL) {
    lua_pushnil(L);  // in place of a message
    return LUA_ERRMEM;
  }
  snprintf(chunk, size, "return %s;", expression);
  int status = luaL_loadbuffer(L, chunk, strlen(chunk), CHUNK_NAME);
  free(chunk);
  return status;
}

// Appends "\n<more>" to the malloc'ed |text|; NULL when out of memory
// (|text| is then freed).
static char* append_line(char* text, const char* more) {
  size_t size = strlen(text) + strlen(more) + 2;
  char* longer = realloc(text, size);
  if (longer == NULL) {
    free(text);
    return NULL;
  }
  strcat(longer, "\n");
  strcat(longer, more);
  return longer;
}

// Loads |line| as statements, reading more lines while the chunk is
// unfinished. Takes |line|. Leaves the function or an error message, or
// nothing when a Ctrl-C drops the chunk (|*cancelled| is then set).
static int load_statements(lua_State* L, char* line, bool* cancelled) {
  for (;;) {
    int status = luaL_loadbuffer(L, line, strlen(line), CHUNK_NAME);
    if (!incomplete(L, status)) {
      remember(line);
      free(line);
      return status;
    }
    char* more = NULL;
    read_result_t result = read_line(">> ", &more);
    if (result != READ_LINE) {
      if (result == READ_CANCELLED) lua_pop(L, 1);
      *cancelled = result == READ_CANCELLED;
      if (!*cancelled) remember(line);  // the input ended inside the chunk
      free(line);
      return *cancelled ? LUA_OK : status;
    }
    lua_pop(L, 1);
    line = append_line(line, more);
    free(more);
    if (line == NULL) {
      lua_pushnil(L);  // in place of a message
      return LUA_ERRMEM;
    }
  }
}

// Loads a line read at the prompt. Takes |line|.
static int load_line(lua_State* L, char* line, bool* cancelled) {
  int status = load_expression(L, line[0] == '=' ? line + 1 : line);
  if (status == LUA_OK || line[0] == '=') {
    remember(line);
    free(line);
    return status;
  }
  lua_pop(L, 1);  // not an expression: statements
  return load_statements(L, line, cancelled);
}

// [-n, +0, e]  Calls print with the values on the stack.
static int print_values(lua_State* L) {
  int n = lua_gettop(L);
  lua_getglobal(L, "print");
  lua_insert(L, 1);
  lua_call(L, n, 0);
  return 0;
}

// Runs the loaded line at the top of the stack and prints its values.
static void run_line(dclua_engine_t* engine, lua_State* L) {
  int base = lua_gettop(L) - 1;
  dclua_signals_run_begin();
  dc_status_t status = dclua_engine_call(engine, 0, LUA_MULTRET);
  dclua_signals_run_end();
  if (status != DC_OK) {
    fprintf(stderr, "dclua: %s\n", dclua_engine_error(engine));
    return;
  }
  int n = lua_gettop(L) - base;
  if (n == 0) return;
  lua_pushcfunction(L, print_values);
  lua_insert(L, base + 1);
  if (dclua_engine_call(engine, n, 0) != DC_OK) {
    fprintf(stderr, "dclua: error calling 'print': %s\n",
            dclua_engine_error(engine));
  }
}

int dclua_repl(dclua_engine_t* engine) {
  lua_State* L = dclua_engine_state(engine);
  g_tty = isatty(STDIN_FILENO);
  init_input();
  if (g_tty) printf("dclua %s (%s)\n", dc_version_string(), LUA_RELEASE);
  int rc = EXIT_SUCCESS;
  bool cancelled_last = false;  // the last prompt ended with a Ctrl-C
  for (;;) {
    char* line = NULL;
    read_result_t result = read_line("> ", &line);
    if (result == READ_END) break;
    bool cancelled = result == READ_CANCELLED;
    int status = cancelled ? LUA_OK : load_line(L, line, &cancelled);
    if (cancelled && cancelled_last) {
      rc = EXIT_INTERRUPTED;
      break;
    }
    cancelled_last = cancelled;
    if (cancelled) continue;
    if (status == LUA_OK) {
      run_line(engine, L);
    } else {
      const char* message = lua_tostring(L, -1);
      fprintf(stderr, "dclua: %s\n",
              message != NULL ? message : "not enough memory");
    }
    lua_settop(L, 0);
  }
  if (g_tty) putchar('\n');
  return rc;
}

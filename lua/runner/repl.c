// repl.c: the runner's interactive mode (-i): a read-eval-print loop over
// standard input, as the stock interpreter's, without readline.
//
// A line is first tried as an expression ("return <line>;"), whose values
// are printed; else as a statement, which may go on over more lines while
// the parser reports an unfinished chunk ("<eof>" at the end of its
// message). A leading '=' also means an expression, as in Lua 5.1. Lines
// run through dclua_engine_call, so the engine's traceback, sandbox and
// limits apply to each.
// SPDX-License-Identifier: MIT
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"

#define CHUNK_NAME "=stdin"

// Reads one line of any length without its newline; NULL at the end of
// the input. Prints |prompt| first when it is not NULL.
static char* read_line(const char* prompt) {
  if (prompt != NULL) {
    fputs(prompt, stdout);
    fflush(stdout);
  }
  char* line = NULL;
  size_t capacity = 0;
  ssize_t length = getline(&line, &capacity, stdin);
  if (length < 0) {
    free(line);
    return NULL;
  }
  if (length > 0 && line[length - 1] == '\n') line[length - 1] = '\0';
  return line;
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
// unfinished. Takes |line|. Leaves the function or an error message.
static int load_statements(lua_State* L, char* line, bool tty) {
  for (;;) {
    int status = luaL_loadbuffer(L, line, strlen(line), CHUNK_NAME);
    if (!incomplete(L, status)) {
      free(line);
      return status;
    }
    char* more = read_line(tty ? ">> " : NULL);
    if (more == NULL) {  // the input ended inside the chunk
      free(line);
      return status;
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
static int load_line(lua_State* L, char* line, bool tty) {
  int status = load_expression(L, line[0] == '=' ? line + 1 : line);
  if (status == LUA_OK || line[0] == '=') {
    free(line);
    return status;
  }
  lua_pop(L, 1);  // not an expression: statements
  return load_statements(L, line, tty);
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
  if (dclua_engine_call(engine, 0, LUA_MULTRET) != DC_OK) {
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

void dclua_repl(dclua_engine_t* engine) {
  lua_State* L = dclua_engine_state(engine);
  bool tty = isatty(STDIN_FILENO);
  if (tty) printf("dclua %s (%s)\n", dc_version_string(), LUA_RELEASE);
  for (;;) {
    char* line = read_line(tty ? "> " : NULL);
    if (line == NULL) break;
    int status = load_line(L, line, tty);
    if (status == LUA_OK) {
      run_line(engine, L);
    } else {
      const char* message = lua_tostring(L, -1);
      fprintf(stderr, "dclua: %s\n",
              message != NULL ? message : "not enough memory");
    }
    lua_settop(L, 0);
  }
  if (tty) putchar('\n');
}

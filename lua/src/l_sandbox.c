// l_sandbox.c: what dclua_engine_sandbox changes in the standard
// libraries, for untrusted scripts (see dclua.h).
//
// A sandboxed script keeps the pure parts of Lua (strings, tables, math,
// coroutines), reading files, and the dc module. It loses every way to run
// programs or load native code, and writes files only below one directory.
// Functions that write are wrapped: the wrapper checks the path with
// dclua_path_writable, the rule the module's own writes follow, and then
// calls the original, kept as upvalue 1. Chunks load from source only,
// since malformed bytecode can crash the interpreter.
// SPDX-License-Identifier: MIT
#include "l_sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char root_key = 'r';  // registry: the writable directory

// Whether the script may write |path|: its directory is below the root
// and, when it is a symbolic link, so is its target.
static bool writable(lua_State* L, const char* path) {
  if (!dclua_path_writable(L, path)) return false;
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return true;
  char* target = realpath(path, NULL);
  bool ok = target != NULL && dclua_path_writable(L, target);
  free(target);
  return ok;
}

// [-0, +1, m]  Pushes why writing |path| is refused.
static const char* push_refusal(lua_State* L, const char* path) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &root_key);
  const char* root = lua_tostring(L, -1);
  const char* message =
      root != NULL ? lua_pushfstring(L,
                                     "sandbox: writing '%s' is not allowed "
                                     "(only below %s)",
                                     path, root)
                   : lua_pushfstring(L,
                                     "sandbox: writing '%s' is not allowed "
                                     "(no writable directory)",
                                     path);
  lua_remove(L, -2);
  return message;
}

// [-0, +3, m]  Returns what io.open and os.remove return on failure:
// nil, the message, an errno.
static int refuse(lua_State* L, const char* path) {
  lua_pushnil(L);
  push_refusal(L, path);
  lua_pushinteger(L, EACCES);
  return 3;
}

// Calls the original function (upvalue 1) with the arguments as given and
// returns all its results.
static int call_original(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

//===-- Writing files ---------------------------------------------------===//

// [-(1|2), +(1|3), e]  io.open(path [, mode]) -> file | nil, message, errno
// (modes that write only below the root)
static int sandbox_io_open(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  const char* mode = luaL_optstring(L, 2, "r");
  if (strpbrk(mode, "wa+") != NULL && !writable(L, path)) {
    return refuse(L, path);
  }
  return call_original(L);
}

// [-(0|1), +1, e]  io.output([file | path]) -> file (a path opens it for
// writing: only below the root)
static int sandbox_io_output(lua_State* L) {
  if (lua_isstring(L, 1) && !writable(L, lua_tostring(L, 1))) {
    return dclua_raisef(L, DC_ERR_PERMISSION_DENIED, "%s",
                        push_refusal(L, lua_tostring(L, 1)));
  }
  return call_original(L);
}

// [-1, +(1|3), e]  os.remove(path) -> true | nil, message, errno
static int sandbox_os_remove(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  if (!writable(L, path)) return refuse(L, path);
  return call_original(L);
}

// [-2, +(1|3), e]  os.rename(from, to) -> true | nil, message, errno
static int sandbox_os_rename(lua_State* L) {
  const char* from = luaL_checkstring(L, 1);
  const char* to = luaL_checkstring(L, 2);
  if (!writable(L, from)) return refuse(L, from);
  if (!writable(L, to)) return refuse(L, to);
  return call_original(L);
}

// [-0, +1, e]  os.tmpname() -> the name of a new empty file below the root
static int sandbox_os_tmpname(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &root_key);
  const char* root = lua_tostring(L, -1);
  if (root == NULL) {
    return dclua_raisef(L, DC_ERR_PERMISSION_DENIED,
                        "sandbox: os.tmpname: no writable directory");
  }
  char path[PATH_MAX];
  int n = snprintf(path, sizeof(path), "%s/lua_XXXXXX", root);
  int fd = n > 0 && (size_t)n < sizeof(path) ? mkstemp(path) : -1;
  if (fd < 0) return luaL_error(L, "unable to generate a unique filename");
  close(fd);
  lua_pushstring(L, path);
  return 1;
}

//===-- Loading chunks from source only ---------------------------------===//

// [-(1..4), +(1|2), -]  load(chunk [, name [, mode [, env]]]) with mode "t"
static int sandbox_load(lua_State* L) {
  if (lua_gettop(L) < 3) lua_settop(L, 3);
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  return call_original(L);
}

// [-(0..3), +(1|2), -]  loadfile([path [, mode [, env]]]) with mode "t"
static int sandbox_loadfile(lua_State* L) {
  if (lua_gettop(L) < 2) lua_settop(L, 2);
  lua_pushliteral(L, "t");
  lua_replace(L, 2);
  return call_original(L);
}

static int dofile_continue(lua_State* L, int status, lua_KContext context) {
  (void)status;
  (void)context;
  return lua_gettop(L) - 1;
}

// [-(0|1), +n, e]  dofile([path]) -> the chunk's results (source only)
static int sandbox_dofile(lua_State* L) {
  const char* path = luaL_optstring(L, 1, NULL);
  lua_settop(L, 1);
  if (luaL_loadfilex(L, path, "t") != LUA_OK) return lua_error(L);
  lua_callk(L, 0, LUA_MULTRET, 0, dofile_continue);
  return dofile_continue(L, 0, 0);
}

// [-1, +(1|2), e]  The Lua searcher of require under the sandbox: finds
// the file on package.path (upvalue 1: package; 2: package.searchpath) as
// the stock searcher does, and loads it as source.
static int search_lua_source(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  if (lua_getfield(L, lua_upvalueindex(1), "path") != LUA_TSTRING) {
    return luaL_error(L, "'package.path' must be a string");
  }
  lua_call(L, 2, 2);
  if (lua_isnil(L, -2)) return 1;  // the message: the files it tried
  const char* path = lua_tostring(L, -2);
  if (luaL_loadfilex(L, path, "t") != LUA_OK) {
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s",
                      name, path, lua_tostring(L, -1));
  }
  lua_pushstring(L, path);
  return 2;
}

//===-- Applying it -----------------------------------------------------===//

// Replaces the function |field| of the table at |index| by |fn|, which
// gets the original as upvalue 1. Does nothing where there is none.
static void wrap(lua_State* L, int index, const char* field, lua_CFunction fn) {
  index = lua_absindex(L, index);
  if (lua_getfield(L, index, field) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, index, field);
}

static void remove_field(lua_State* L, int index, const char* field) {
  index = lua_absindex(L, index);
  lua_pushnil(L);
  lua_setfield(L, index, field);
}

// Pushes the library |name| from package.loaded (the real table, even if
// a global of that name was changed), or an empty table if not loaded.
static void push_library(lua_State* L, const char* name) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, name) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  lua_remove(L, -2);
}

// Keeps only the preload searcher and the source-only Lua searcher, and
// takes away C modules.
static void sandbox_package(lua_State* L) {
  push_library(L, "package");
  remove_field(L, -1, "loadlib");
  lua_pushliteral(L, "");
  lua_setfield(L, -2, "cpath");
  lua_createtable(L, 2, 0);
  lua_getfield(L, -2, "searchers");
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_geti(L, -1, 1);  // the preload searcher
  } else {
    lua_pushnil(L);
  }
  lua_rawseti(L, -3, 1);
  lua_pop(L, 1);
  lua_pushvalue(L, -2);
  lua_getfield(L, -3, "searchpath");
  lua_pushcclosure(L, search_lua_source, 2);
  lua_rawseti(L, -2, lua_rawlen(L, -2) + 1);
  lua_setfield(L, -2, "searchers");
  lua_pop(L, 1);
}

void dclua_sandbox_open(lua_State* L, const char* root) {
  lua_pushstring(L, root);  // NULL pushes nil
  lua_rawsetp(L, LUA_REGISTRYINDEX, &root_key);
  push_library(L, "_G");
  remove_field(L, -1, "debug");
  wrap(L, -1, "load", sandbox_load);
  wrap(L, -1, "loadfile", sandbox_loadfile);
  lua_pushcfunction(L, sandbox_dofile);
  lua_setfield(L, -2, "dofile");
  push_library(L, "os");
  remove_field(L, -1, "execute");
  remove_field(L, -1, "exit");
  wrap(L, -1, "remove", sandbox_os_remove);
  wrap(L, -1, "rename", sandbox_os_rename);
  lua_pushcfunction(L, sandbox_os_tmpname);
  lua_setfield(L, -2, "tmpname");
  push_library(L, "io");
  remove_field(L, -1, "popen");
  remove_field(L, -1, "tmpfile");
  wrap(L, -1, "open", sandbox_io_open);
  wrap(L, -1, "output", sandbox_io_output);
  lua_pop(L, 3);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  remove_field(L, -1, "debug");
  lua_pop(L, 1);
  sandbox_package(L);
}

// l_sandbox.c: what dclua_engine_sandbox changes in the standard
// libraries, for untrusted scripts (see dclua.h).
//
// A sandboxed script keeps the pure parts of Lua (strings, tables, math,
// coroutines), reading files, and the dc module. It loses every way to run
// programs or load native code, and writes files only below one directory.
// Functions that write are wrapped: the wrapper checks the path with
// dclua_path_writable, the rule the module's own writes follow, and then
// calls the original, kept as upvalue 1. io.open and io.output open the
// files they write themselves, as the module's writers do
// (dclua_open_for_write). Chunks load from source only, since malformed
// bytecode can crash the interpreter.
// SPDX-License-Identifier: MIT
#include "l_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char root_key = 'r';  // registry: the writable directory

// Why the sandbox refused a write (dclua_open_for_write's |why|).
static const char kOutside[] = "outside the writable directory";
static const char kLinkOut[] =
    "a symbolic link that leads out of the writable directory";
static const char kNotFile[] = "not a regular file";
static const char kHardLinks[] =
    "a file with other hard links, which may lie outside";
static const char kMoved[] = "its directory changed while it was opened";

// Whether the script may write |path|: its directory is below the root
// and, when it is a symbolic link, so is its target. (A quick check on
// the path; the opens below check what they open.)
static bool writable(lua_State* L, const char* path) {
  if (!dclua_path_writable(L, path)) return false;
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return true;
  char* target = realpath(path, NULL);
  bool ok = target != NULL && dclua_path_writable(L, target);
  free(target);
  return ok;
}

const char* dclua_push_refusal(lua_State* L, const char* path,
                               const char* why) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &root_key);
  const char* root = lua_tostring(L, -1);
  const char* message;
  if (why == NULL || why == kOutside) {
    message = root != NULL ? lua_pushfstring(L,
                                             "sandbox: writing '%s' is not "
                                             "allowed (only below %s)",
                                             path, root)
                           : lua_pushfstring(L,
                                             "sandbox: writing '%s' is not "
                                             "allowed (no writable "
                                             "directory)",
                                             path);
  } else if (root != NULL) {
    message = lua_pushfstring(L, "sandbox: writing '%s' is not allowed "
                              "(%s; only below %s)", path, why, root);
  } else {
    message = lua_pushfstring(L, "sandbox: writing '%s' is not allowed (%s)",
                              path, why);
  }
  lua_remove(L, -2);
  return message;
}

// [-0, +3, m]  Returns what io.open and os.remove return on failure:
// nil, the message, an errno.
static int refuse(lua_State* L, const char* path, const char* why) {
  lua_pushnil(L);
  dclua_push_refusal(L, path, why);
  lua_pushinteger(L, EACCES);
  return 3;
}

//===-- Opening files below the root ------------------------------------===//
//
// The rule "only below the root" is checked on a path, but a path can
// change between the check and the open (a link made or swapped in), and
// its last part may be a link that leads out. So a sandboxed open holds
// the directory first and checks the directory it holds, then opens the
// file relative to it without following a link:
//   1. the directory part of the path is opened (O_DIRECTORY);
//   2. its resolved path must be below the root, and what that resolved
//      path names now must be the very directory held (same device and
//      inode): a swap between the open and the check cannot go unnoticed,
//      and once held, the directory is the one written into whatever
//      happens to the path;
//   3. the file is opened with openat(O_NOFOLLOW | O_NONBLOCK): a last
//      part that is a symbolic link fails with ELOOP, and a FIFO never
//      blocks the open. A link is followed only by starting again from
//      its resolved target, once, so a link to a file below the root
//      works as it does for io.open;
//   4. what was opened must be a regular file with one link, since another
//      hard link of it may lie outside (a FIFO or a device is refused
//      too); only then is it truncated (O_TRUNC waits until here).

// Whether the state is sandboxed: dclua_path_writable answers true for
// any path, NULL included, outside a sandbox, and false for NULL inside.
static bool sandboxed(lua_State* L) { return !dclua_path_writable(L, NULL); }

// Whether the directory |dir| (resolved) is below the root.
static bool dir_below_root(lua_State* L, const char* dir) {
  char probe[PATH_MAX + 3];
  int n = snprintf(probe, sizeof(probe), "%s/x", dir);
  return n > 0 && (size_t)n < sizeof(probe) && dclua_path_writable(L, probe);
}

// Splits |path| into its directory (into |dir|) and its last part, which
// it returns; NULL with errno set when it cannot.
static const char* split_path(const char* path, char* dir, size_t size) {
  const char* slash = strrchr(path, '/');
  const char* base = slash != NULL ? slash + 1 : path;
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (path[0] == '\0' || base[0] == '\0') {
    errno = path[0] == '\0' ? ENOENT : EISDIR;
    return NULL;
  }
  if (n + 2 > size || strlen(base) > NAME_MAX) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  if (slash == NULL) {
    memcpy(dir, ".", 2);
  } else {
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  return base;
}

// Sets *|why| and errno for a refusal; returns -1.
static int refused(const char** why, const char* reason) {
  *why = reason;
  errno = EACCES;
  return -1;
}

// Opens the directory |dir| and checks that it is below the root (steps 1
// and 2). Returns its descriptor, or -1 with errno (and *|why| for a
// refusal). |resolved| (PATH_MAX bytes, may be NULL) gets its real path.
static int open_dir_below_root(lua_State* L, const char* dir,
                               char* resolved, const char** why) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  char real[PATH_MAX];
  struct stat held, named;
  bool below = realpath(dir, real) != NULL && dir_below_root(L, real);
  bool same = below && fstat(fd, &held) == 0 && stat(real, &named) == 0 &&
              held.st_dev == named.st_dev && held.st_ino == named.st_ino;
  if (!same) {
    close(fd);
    return refused(why, below ? kMoved : kOutside);
  }
  if (resolved != NULL) memcpy(resolved, real, strlen(real) + 1);
  return fd;
}

// Checks what step 3 opened (step 4) and truncates it if asked. Returns
// |fd|, or -1 (closed) with errno and *|why|.
static int check_opened(int fd, int flags, const char** why) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  const char* reason = !S_ISREG(st.st_mode) ? kNotFile
                       : st.st_nlink > 1    ? kHardLinks
                                            : NULL;
  int error = 0;
  if (reason == NULL && (flags & O_TRUNC) && ftruncate(fd, 0) != 0) {
    error = errno;
  }
  int status_flags = fcntl(fd, F_GETFL);
  if (reason == NULL && error == 0 && status_flags != -1) {
    fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK);
  }
  if (reason == NULL && error == 0) return fd;
  close(fd);
  if (reason != NULL) return refused(why, reason);
  errno = error;
  return -1;
}

// Opens |path| below the root (steps 1 to 4), following a last symbolic
// link |links| more times.
static int open_below_root(lua_State* L, const char* path, int flags,
                           int links, const char** why) {
  char dir[PATH_MAX];
  const char* base = split_path(path, dir, sizeof(dir));
  if (base == NULL) return -1;
  int dir_fd = open_dir_below_root(L, dir, NULL, why);
  if (dir_fd < 0) return -1;
  int fd = openat(dir_fd, base,
                  (flags & ~O_TRUNC) | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
                      O_CLOEXEC,
                  0666);
  int error = errno;
  close(dir_fd);
  if (fd >= 0) return check_opened(fd, flags, why);
  if (error == ENXIO) return refused(why, kNotFile);  // a FIFO, a device
  if (error != ELOOP && error != EMLINK) {  // EMLINK: the BSDs' ELOOP
    errno = error;
    return -1;
  }
  char* target = links > 0 ? realpath(path, NULL) : NULL;
  if (target == NULL) return refused(why, kLinkOut);
  fd = dclua_path_writable(L, target)
           ? open_below_root(L, target, flags, links - 1, why)
           : refused(why, kLinkOut);
  free(target);
  if (fd < 0 && *why == kOutside) *why = kLinkOut;
  return fd;
}

int dclua_open_for_write(lua_State* L, const char* path, int flags,
                         const char** why) {
  *why = NULL;
  if (!sandboxed(L)) return open(path, flags | O_CLOEXEC, 0666);
  if (!dclua_path_writable(L, path)) return refused(why, kOutside);
  return open_below_root(L, path, flags, /*links=*/1, why);
}

// The open(2) flags of an fopen mode that writes, or -1 for one that only
// reads or is not a mode (liolib's rule: [rwa]+?b*).
static int write_flags(const char* mode) {
  const char* p = mode;
  if (*p == '\0' || strchr("rwa", *p) == NULL) return -1;
  char kind = *p++;
  bool plus = *p == '+';
  if (plus) ++p;
  if (strspn(p, "b") != strlen(p)) return -1;
  int access = plus ? O_RDWR : O_WRONLY;
  switch (kind) {
    case 'w': return access | O_CREAT | O_TRUNC;
    case 'a': return access | O_CREAT | O_APPEND;
    default: return plus ? O_RDWR : -1;  // "r+" writes; "r" does not
  }
}

FILE* dclua_fopen_for_write(lua_State* L, const char* path,
                            const char* mode) {
  int flags = write_flags(mode);
  if (flags < 0) {
    errno = EINVAL;
    return NULL;
  }
  if (sandboxed(L)) dclua_check_writable(L, path);  // its own message
  const char* why = NULL;
  int fd = dclua_open_for_write(L, path, flags, &why);
  if (fd < 0 && why != NULL) {
    dclua_push_refusal(L, path, why);
    dclua_raisef(L, DC_ERR_PERMISSION_DENIED, "%s", lua_tostring(L, -1));
  }
  if (fd < 0) return NULL;
  FILE* file = fdopen(fd, mode);
  if (file == NULL) {
    int error = errno;
    close(fd);
    errno = error;
  }
  return file;
}

const char* dclua_hold_dir(lua_State* L, const char* path,
                           dclua_held_dir_t* held) {
  held->fd = -1;
  if (!sandboxed(L)) return path;
  dclua_check_writable(L, path);
  char dir[PATH_MAX];
  const char* base = split_path(path, dir, sizeof(dir));
  const char* why = NULL;
  char real[PATH_MAX];
  int fd = base != NULL ? open_dir_below_root(L, dir, real, &why) : -1;
  if (fd < 0 && why != NULL) {
    dclua_push_refusal(L, path, why);
    dclua_raisef(L, DC_ERR_PERMISSION_DENIED, "%s", lua_tostring(L, -1));
  }
  if (fd < 0) {
    int error = errno;
    dc_status_t status = error == ENOENT || error == ENOTDIR
                             ? DC_ERR_NOT_FOUND
                             : DC_ERR_UNAVAILABLE;
    dclua_raisef(L, status, "cannot write '%s': %s", path, strerror(error));
  }
  held->fd = fd;
  char through[64];
  snprintf(through, sizeof(through), "/proc/self/fd/%d", fd);
  struct stat by_proc, by_fd;
  bool proc = stat(through, &by_proc) == 0 && fstat(fd, &by_fd) == 0 &&
              by_proc.st_dev == by_fd.st_dev && by_proc.st_ino == by_fd.st_ino;
  snprintf(held->path, sizeof(held->path), "%s/%s", proc ? through : real,
           base);
  return held->path;
}

void dclua_release_dir(dclua_held_dir_t* held) {
  if (held->fd >= 0) close(held->fd);
  held->fd = -1;
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

// [-1, +1, e]  __close and io.close of the files sandbox_io_open makes, as
// liolib's io_fclose (the stream is marked closed before this is called).
static int close_stream(lua_State* L) {
  luaL_Stream* p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  return luaL_fileresult(L, fclose(p->f) == 0, NULL);
}

// [-0, +(1|3), m]  Opens |path| with the fopen mode |mode| (one that
// writes) below the root, as a standard file handle: pushes it, or nil,
// a message and an errno (*|why| set for a refusal of the sandbox). The
// handle exists, closed, before the file is opened, so a memory error
// leaks nothing (liolib's newprefile).
static int open_stream(lua_State* L, const char* path, const char* mode,
                       const char** why) {
  luaL_Stream* p = lua_newuserdatauv(L, sizeof(*p), 0);
  p->f = NULL;
  p->closef = NULL;  // closed
  luaL_setmetatable(L, LUA_FILEHANDLE);
  int fd = dclua_open_for_write(L, path, write_flags(mode), why);
  if (fd < 0 && *why != NULL) return refuse(L, path, *why);
  p->f = fd >= 0 ? fdopen(fd, mode) : NULL;
  if (p->f == NULL) {
    int error = errno;
    if (fd >= 0) close(fd);
    errno = error;
    return luaL_fileresult(L, 0, path);
  }
  p->closef = close_stream;
  return 1;
}

// [-(1|2), +(1|3), e]  io.open(path [, mode]) -> file | nil, message, errno
// (modes that write only below the root, opened as dclua_open_for_write
// does)
static int sandbox_io_open(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  const char* mode = luaL_optstring(L, 2, "r");
  if (write_flags(mode) < 0) return call_original(L);  // reads, or invalid
  const char* why = NULL;
  return open_stream(L, path, mode, &why);
}

// [-(0|1), +1, e]  io.output([file | path]) -> file (a path opens it for
// writing, as io.open(path, "w"): only below the root)
static int sandbox_io_output(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER) {
    const char* path = lua_tostring(L, 1);
    const char* why = NULL;
    if (open_stream(L, path, "w", &why) != 1) {
      if (why != NULL) {
        return dclua_raisef(L, DC_ERR_PERMISSION_DENIED, "%s",
                            lua_tostring(L, -2));
      }
      return luaL_error(L, "cannot open file '%s' (%s)", path,
                        strerror((int)lua_tointeger(L, -1)));
    }
    lua_replace(L, 1);
    lua_settop(L, 1);
  }
  return call_original(L);
}

// [-1, +(1|3), e]  os.remove(path) -> true | nil, message, errno
static int sandbox_os_remove(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  if (!writable(L, path)) return refuse(L, path, kOutside);
  return call_original(L);
}

// [-2, +(1|3), e]  os.rename(from, to) -> true | nil, message, errno
static int sandbox_os_rename(lua_State* L) {
  const char* from = luaL_checkstring(L, 1);
  const char* to = luaL_checkstring(L, 2);
  if (!writable(L, from)) return refuse(L, from, kOutside);
  if (!writable(L, to)) return refuse(L, to, kOutside);
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

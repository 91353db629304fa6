// l_sandbox.h: the sandbox that dclua_engine_sandbox applies (l_sandbox.c).
// SPDX-License-Identifier: MIT
#ifndef DCLUA_L_SANDBOX_H_
#define DCLUA_L_SANDBOX_H_

#include <stdio.h>

#include "dclua_internal.h"

// Takes out of the standard libraries of |L| what reaches the operating
// system, wraps the functions that write files so that they write only
// where dclua_path_writable allows, and makes loading text-only (see
// dclua_engine_sandbox in dclua.h). |root| is the resolved writable
// directory (NULL: none), for messages. Call dclua_set_write_root first.
// [-0, +0, e]
void dclua_sandbox_open(lua_State* L, const char* root);

//===-- Writing files under the sandbox's rules -------------------------===//
//
// Every function of the module that writes a file a script names opens it
// through these, so that the sandbox's rule holds for all of them as it
// does for io.open: in a sandboxed state (dclua_set_write_root) a file is
// written only below the writable directory, and neither a symbolic link,
// nor a hard link, nor a path changed between the check and the open
// leads out of it (l_sandbox.c says how). Outside a sandbox they open as
// open(2) and fopen do.

// Opens |path| for writing as open(2) with |flags| does (O_WRONLY or
// O_RDWR, with O_CREAT, O_TRUNC, O_APPEND as wanted; O_CLOEXEC is added),
// mode 0666 less the umask. Returns the descriptor, or -1 with errno set.
// A refusal of the sandbox sets errno to EACCES and *|why| to the reason
// ("outside the writable directory", "a symbolic link that leads out of
// the writable directory", ...); any other failure leaves *|why| NULL.
// [-0, +0, -]
int dclua_open_for_write(lua_State* L, const char* path, int flags,
                         const char** why);

// Pushes the message of a refusal of |path| for |why|: "sandbox: writing
// '<path>' is not allowed (<why>; only below <dir>)".
// [-0, +1, m]
const char* dclua_push_refusal(lua_State* L, const char* path,
                               const char* why);

// Opens |path| as fopen(|path|, |mode|) does for a mode that writes ("w",
// "wb", "a", "r+", ...) through dclua_open_for_write. Raises
// PERMISSION_DENIED with the refusal's message when the sandbox refuses;
// returns NULL with errno set for any other failure.
// [-0, +0, v]
FILE* dclua_fopen_for_write(lua_State* L, const char* path,
                            const char* mode);

// A directory held open for a writer that takes a path and makes its
// file there itself (dc_trace_write: a temporary file renamed over
// |path|).
typedef struct dclua_held_dir_t {
  int fd;               // the directory; -1: none held
  char path[4200];      // what the writer is given
} dclua_held_dir_t;

// Returns the path a writer should be given for |path|: |path| itself
// outside a sandbox; inside one, after checking as dclua_open_for_write
// does that its directory is below the writable directory, a path through
// the directory now held open ("/proc/self/fd/<fd>/<name>"), so that
// renaming or relinking the directory meanwhile cannot send the writer
// elsewhere (where /proc is missing, the directory's resolved path).
// Raises PERMISSION_DENIED when the sandbox refuses, or the error of
// opening the directory. Release |held| with dclua_release_dir, also when
// the writer fails.
// [-0, +0, v]
const char* dclua_hold_dir(lua_State* L, const char* path,
                           dclua_held_dir_t* held);
void dclua_release_dir(dclua_held_dir_t* held);

#endif  // DCLUA_L_SANDBOX_H_

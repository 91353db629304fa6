// dclua.h: the Lua 5.4 binding of the dc engine, for C hosts that embed it.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_H_
#define DCLUA_H_

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/dc.h"

DC_EXTERN_C_BEGIN

//===-- The `dc` module -------------------------------------------------===//
//
// luaopen_dc() opens the module: `require("dc")` in a script, or
// luaL_requiref(L, "dc", luaopen_dc, 0) in a host. Every call into the
// module runs on the thread that owns the lua_State (Lua-thread only).
//
// The module works in one dc_context_t per lua_State. A host that already
// has a context hands it over with dclua_set_context() before the module
// is opened, so scripts and C share devices and buffers; otherwise the
// module creates a context with default parameters on first use and
// releases it when the state is closed.
//
// Errors: a failing call raises an error object, a table with fields
// `code` (a status name such as "INVALID_ARGUMENT"), `message`, and a
// __tostring that gives "CODE: message". See docs/lua/conventions.md.

// Opens the module and leaves its table on the stack.
// [-0, +1, e]
DC_API int luaopen_dc(lua_State* L);

// Makes |context| the one the module in |L| uses. Retains |context|; the
// reference is dropped when |L| is closed. Call before the first use of the
// module; a later call fails.
// [-0, +0, -]  Returns DC_ERR_FAILED_PRECONDITION if a context is already
// set, DC_ERR_INVALID_ARGUMENT for NULL arguments.
DC_API dc_status_t dclua_set_context(lua_State* L, dc_context_t* context);

// Returns the context of |L|, creating it if needed (borrowed; lives until
// the state is closed). Raises a Lua error object if it cannot be created.
// [-0, +0, e]
DC_API dc_context_t* dclua_context(lua_State* L);

// Pushes an error object for |status| with the message of the calling
// thread's dc_last_error().
// [-0, +1, m]
DC_API void dclua_push_error(lua_State* L, dc_status_t status);

// Makes long work in |L| (graph runs, compiles, large transfers,
// dc.progress) print a progress line on standard error (the runner turns
// it on when standard error is a terminal; DC_PROGRESS overrides it, see
// docs/lua/runner.md).
// [-0, +0, m]
DC_API void dclua_set_progress(lua_State* L, bool enabled);

// Sandboxes the module's file writes in |L|: from now on, functions of
// the module that write files (traces, images, reports) may write only
// below |directory|, or nowhere when |directory| is NULL. Writing
// elsewhere raises PERMISSION_DENIED. There is no way back.
// [-0, +0, m]  Returns DC_ERR_INVALID_ARGUMENT for a NULL state,
// DC_ERR_NOT_FOUND if |directory| does not exist.
DC_API dc_status_t dclua_set_write_root(lua_State* L, const char* directory);

// Makes dc.device() (and every function of the module that takes an
// optional device) give the device named |name| ("cpu", "cuda:1", or a
// backend name) instead of the best one; NULL restores the best one. The
// runner's --device option sets it. The name is looked up at each use, so
// a name that matches no device makes those calls raise NOT_FOUND.
// [-0, +0, m]  Returns DC_ERR_INVALID_ARGUMENT for a NULL state.
DC_API dc_status_t dclua_set_default_device(lua_State* L, const char* name);

//===-- Embedding: dclua_engine_t ---------------------------------------===//
//
// An engine is a Lua state ready to run pipeline scripts: the standard
// libraries are open, and so is the `dc` module, as the global `dc` and
// for require("dc"), working in a context the host shares or in one of
// its own. A host uses it to let scripts configure and drive its work: it
// makes buffers in C and shares them (dclua_engine_set_buffer), sets
// parameters as globals, runs a script (dclua_engine_run_file), and reads
// the results back from globals (dclua_engine_get_number, ...). The dclua
// runner is such a host.
//
//   dclua_engine_t* eng;
//   DC_CHECK(dclua_engine_create(ctx, &eng));
//   dclua_engine_set_buffer(eng, "frame", frame);
//   dclua_engine_set_integer(eng, "width", 640);
//   if (dclua_engine_run_file(eng, "config.lua") != DC_OK)
//     fprintf(stderr, "config failed: %s\n", dclua_engine_error(eng));
//   dclua_engine_destroy(eng);
//
// Errors. Every function returns a status with the message in
// dc_last_error(), as the core does. A run (dclua_engine_run_file,
// dclua_engine_run_string, dclua_engine_call) that fails returns:
//   - the code of the dc error object the script raised (err.code, so a
//     script's `error(dc.error("UNAVAILABLE", "..."))` reaches the host as
//     DC_ERR_UNAVAILABLE, and so do the module's own errors);
//   - DC_ERR_UNKNOWN for any other error value (error("text"), a runtime
//     error such as indexing nil);
//   - DC_ERR_INVALID_ARGUMENT for a syntax error, DC_ERR_NOT_FOUND or
//     DC_ERR_PERMISSION_DENIED when the file cannot be opened;
//   - DC_ERR_OUT_OF_MEMORY when Lua runs out of memory or past the memory
//     limit, DC_ERR_DEADLINE_EXCEEDED past the time limit.
// The message, with a stack traceback, is in dclua_engine_error() in full
// and in dc_last_error() (which holds at most 1 KiB).
//
// Untrusted scripts. dclua_engine_sandbox() takes away what a script
// could use to reach the operating system (running programs, loading C
// code, the debug library) and confines file writes to one directory;
// dclua_engine_set_memory_limit() caps the Lua heap and
// dclua_engine_set_time_limit() the time of each run. Set them before the
// first run: code and coroutines made earlier escape them.
//
// Thread safety: an engine, like a lua_State, is used by one thread at a
// time; engine threads reach its Lua code only through the module's
// callback queue (see dc.poll). Engines are independent of each other.

typedef struct dclua_engine_t dclua_engine_t;

// Creates an engine that works in |context| (retained until the engine is
// destroyed), or in a context of its own with default parameters when
// |context| is NULL.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL |out_engine|,
// DC_ERR_OUT_OF_MEMORY, or the status of creating the context.
DC_API dc_status_t dclua_engine_create(dc_context_t* context,
                                       dclua_engine_t** out_engine);

// Closes the Lua state, which closes every object the scripts still hold
// (buffers shared with the host stay alive while the host holds them),
// and releases the context. NULL is a no-op.
DC_API void dclua_engine_destroy(dclua_engine_t* engine);

// Returns the engine's Lua state (borrowed; NULL for NULL), for hosts
// that use the Lua C API directly. Do not close it, or replace its
// allocator or hook.
DC_API lua_State* dclua_engine_state(dclua_engine_t* engine);

// Returns the context the engine works in (borrowed; lives until the
// engine is destroyed). NULL for NULL.
DC_API dc_context_t* dclua_engine_context(dclua_engine_t* engine);

// Returns the message, with a traceback, of the last run that failed
// ("" if none has). The string belongs to the engine and changes with the
// next failure. NULL for NULL.
DC_API const char* dclua_engine_error(dclua_engine_t* engine);

// Whether the last run failed with a usage error: an error value that is
// a table with usage = true and a string `message` (what
// scripts/lib/options.lua raises for a bad command line). Such a run
// returns DC_ERR_INVALID_ARGUMENT and its error is the message alone,
// without a traceback; the dclua runner then exits with status 2.
DC_API bool dclua_engine_usage_error(const dclua_engine_t* engine);

//===-- Globals ---------------------------------------------------------===//
//
// A host passes values to scripts, and reads results back, through global
// variables. |name| is the global's name (not NULL, not empty).
//
// Every function below returns DC_ERR_INVALID_ARGUMENT for a NULL engine,
// name or pointer argument, or an empty name, and DC_ERR_OUT_OF_MEMORY.

// Set a global to a number, an integer, a copy of a string (not NULL), or
// a boolean.
DC_API dc_status_t dclua_engine_set_number(dclua_engine_t* engine,
                                           const char* name, double value);
DC_API dc_status_t dclua_engine_set_integer(dclua_engine_t* engine,
                                            const char* name, int64_t value);
DC_API dc_status_t dclua_engine_set_string(dclua_engine_t* engine,
                                           const char* name,
                                           const char* value);
DC_API dc_status_t dclua_engine_set_boolean(dclua_engine_t* engine,
                                            const char* name, bool value);

// Sets a global to a dc.buffer that shares |buffer| with the host: what
// scripts write, the host reads, and the reverse. Retains |buffer|; the
// reference goes when scripts close the dc.buffer or it is collected.
// Returns DC_ERR_INVALID_ARGUMENT also when |buffer| belongs to another
// context or was released.
DC_API dc_status_t dclua_engine_set_buffer(dclua_engine_t* engine,
                                           const char* name,
                                           dc_buffer_t* buffer);

// Read a global. Each returns DC_ERR_NOT_FOUND when the global is nil and
// DC_ERR_INVALID_ARGUMENT when it has another type (the message says
// which); |out| is then left as it was. A number that has no exact
// integer value is not an integer; get_number takes integers too. Only
// strings are strings (numbers are not converted) and only true and false
// are booleans.
DC_API dc_status_t dclua_engine_get_number(dclua_engine_t* engine,
                                           const char* name, double* out);
DC_API dc_status_t dclua_engine_get_integer(dclua_engine_t* engine,
                                            const char* name, int64_t* out);
DC_API dc_status_t dclua_engine_get_boolean(dclua_engine_t* engine,
                                            const char* name, bool* out);

// Copies a string global into |buffer| (|size| bytes, NUL-terminated,
// truncated to fit; |buffer| may be NULL when |size| is 0) and its length
// (without the NUL) into |out_length| (may be NULL), as snprintf does.
// Errors as dclua_engine_get_number.
DC_API dc_status_t dclua_engine_get_string(dclua_engine_t* engine,
                                           const char* name, char* buffer,
                                           size_t size, size_t* out_length);

// Gets the C buffer of a dc.buffer global, retained: the caller releases
// it. Errors as dclua_engine_get_number, and DC_ERR_FAILED_PRECONDITION
// when the script has closed it.
DC_API dc_status_t dclua_engine_get_buffer(dclua_engine_t* engine,
                                           const char* name,
                                           dc_buffer_t** out_buffer);

// Sets a global to the C function |fn|, so scripts can call into the
// host. |user_data| (may be NULL) is its first upvalue:
// lua_touserdata(L, lua_upvalueindex(1)). Raise errors with luaL_error or
// luaL_argerror as any Lua C function does.
DC_API dc_status_t dclua_engine_register(dclua_engine_t* engine,
                                         const char* name, lua_CFunction fn,
                                         void* user_data);

// Sets the global `arg` as the stock interpreter does: argv[0] (the
// script's name) at index 0 and argv[1..argc-1] at 1..argc-1 (copies).
// dclua_engine_run_file passes arg[1..#arg] to the script as `...`.
// |argv| may be NULL when |argc| is 0.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL engine, a negative |argc| or
// a NULL string.
DC_API dc_status_t dclua_engine_set_args(dclua_engine_t* engine, int argc,
                                         const char* const* argv);

//===-- Running scripts -------------------------------------------------===//

// Runs the Lua script in the file |path| ("-": standard input), with the
// arguments of `arg` as its `...`. Its results are dropped. Returns DC_OK
// or the status of the failure (see Errors above).
DC_API dc_status_t dclua_engine_run_file(dclua_engine_t* engine,
                                         const char* path);

// Runs |chunk|, Lua source; |chunk_name| names it in messages and
// tracebacks (NULL: "=chunk"; the usual prefixes apply: "=name" as is,
// "@file" as a file name). Errors as dclua_engine_run_file.
DC_API dc_status_t dclua_engine_run_string(dclua_engine_t* engine,
                                           const char* chunk,
                                           const char* chunk_name);

// Calls the function below the |nargs| arguments on top of the engine
// state's stack, as lua_pcall does, with the engine's traceback, error
// statuses and time limit, leaving |nresults| results (LUA_MULTRET: all
// of them) on success and nothing on failure.
// [-(nargs+1), +(nresults|0), -]  Returns DC_ERR_INVALID_ARGUMENT for a
// NULL engine, a negative |nargs| or too few values on the stack (which
// is then left as it was); else as run_file.
DC_API dc_status_t dclua_engine_call(dclua_engine_t* engine, int nargs,
                                     int nresults);

//===-- Limits and sandbox ----------------------------------------------===//

// Sandboxes the engine's scripts, for running untrusted ones. There is no
// way back. Afterwards:
//   - gone (nil): os.execute, os.exit, io.popen, io.tmpfile,
//     package.loadlib, the debug library;
//   - no C modules: package.cpath is "" and require has no C searchers;
//     Lua chunks load from source only (load, loadfile, dofile and require
//     refuse precompiled chunks, which could crash the interpreter);
//   - files are written only below |write_dir| (resolved once, so links
//     and ".." cannot leave it, and no symbolic or hard link leads a write
//     out of it), or nowhere when it is NULL: io.open with
//     a mode that writes ("w", "a", "+"), os.remove and os.rename answer
//     nil, message, errno outside it; io.output(name) raises; os.tmpname
//     names a file inside it; the dc module's own writes (traces, images)
//     obey it too (dclua_set_write_root);
//   - reading files, io.lines, io.read, print and the rest stay.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL engine, DC_ERR_NOT_FOUND if
// |write_dir| does not exist, DC_ERR_OUT_OF_MEMORY.
DC_API dc_status_t dclua_engine_sandbox(dclua_engine_t* engine,
                                        const char* write_dir);

// Caps the memory of the Lua heap at |bytes| (0: no cap). An allocation
// past it fails, which the script sees as the error "not enough memory"
// and the host as DC_ERR_OUT_OF_MEMORY. Buffers live outside the Lua heap:
// cap them with the context's device_memory_budget.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL engine.
DC_API dc_status_t dclua_engine_set_memory_limit(dclua_engine_t* engine,
                                                 size_t bytes);

// Returns the bytes the Lua heap holds now (0 for NULL).
DC_API size_t dclua_engine_memory_used(dclua_engine_t* engine);

// Limits each run (run_file, run_string, call) to |seconds| of wall-clock
// time (0: no limit). Past it the script fails with "time limit exceeded"
// (DC_ERR_DEADLINE_EXCEEDED) at its next Lua instruction, and pcall cannot
// hold it back: every Lua instruction raises again until the run ends.
// Time spent blocked in C counts too: the module's blocking waits (stream,
// event and graph waits, futures) end at the deadline with the same error,
// and checked kernels still running are stopped; an unchecked kernel runs
// to its end.
// Returns DC_ERR_INVALID_ARGUMENT for a NULL engine or a negative or not
// finite |seconds|.
DC_API dc_status_t dclua_engine_set_time_limit(dclua_engine_t* engine,
                                               double seconds);

DC_EXTERN_C_END

#endif  // DCLUA_H_

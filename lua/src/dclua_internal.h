// dclua_internal.h: what the binding's sources share.
//
// Each Lua class lives in one l_<class>.c file, which defines its
// metatable (named below) and the check/push functions declared here, so
// that other classes can take its objects as arguments. Every object is a
// *box*: a full userdata holding one owned reference to a core object.
// A box is created closed (pointer NULL, metatable set) before the core
// object is made, so an error raised in between leaks nothing; its __gc
// and __close share one function that drops the reference and closes it;
// using a closed box raises "attempt to use a closed dc.<class>".
//
// Every function here is Lua-thread only unless it says otherwise.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_INTERNAL_H_
#define DCLUA_INTERNAL_H_

#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

#include "dclua.h"

//===-- Class names (metatables in the registry) ------------------------===//

#define DCLUA_DEVICE "dc.device"
#define DCLUA_BUFFER "dc.buffer"
#define DCLUA_PROGRAM "dc.program"
#define DCLUA_KERNEL "dc.kernel"
#define DCLUA_STREAM "dc.stream"
#define DCLUA_GROUP "dc.group"
#define DCLUA_EVENT "dc.event"
#define DCLUA_ENCODER "dc.encoder"
#define DCLUA_TOKEN "dc.token"
#define DCLUA_GRAPH "dc.graph"
#define DCLUA_RETRY "dc.retry"
#define DCLUA_BREAKER "dc.breaker"
#define DCLUA_LOCAL "dc.local"  // a __local size for a dispatch argument

//===-- Boxes and classes (l_object.c) ----------------------------------===//

typedef struct dclua_box_t {
  void* p;  // the owned core object; NULL once closed
} dclua_box_t;

// Pushes a new closed box of class |class_name| with |user_values| Lua
// user values (for the Lua objects it keeps alive). The class must exist.
// [-0, +1, m]
dclua_box_t* dclua_box_new(lua_State* L, const char* class_name,
                           int user_values);

// Returns the open object of the box at |index|; raises an argument error
// if the value is not a |class_name|, and "attempt to use a closed
// <class_name>" if it is closed.
// [-0, +0, v]
void* dclua_box_check(lua_State* L, int index, const char* class_name);

// Returns the userdata at |index| if its metatable is |class_name|'s;
// else raises "bad self to 'dc.x.m' (dc.x expected, got number)" when
// |index| is the self of a method of a class, or the usual argument error
// of luaL_typeerror otherwise. Unlike dclua_box_check, also for userdata
// that are not boxes (dc.retry, dc.graph).
// [-0, +0, v]
void* dclua_udata_check(lua_State* L, int index, const char* class_name);

// Raises the type error dclua_udata_check raises, with |expected| the
// type the function wanted ("dc.device or device name").
// [-0, +0, v]
int dclua_type_error(lua_State* L, int index, const char* expected);

// Raises as dclua_udata_check does unless the value at |index| is a table
// whose metatable is |class_name|'s (classes made of tables: dc.report,
// dc.error).
// [-0, +0, v]
void dclua_table_check(lua_State* L, int index, const char* class_name);

// Returns the box at |index| if it is a |class_name| (open or closed),
// else NULL.
// [-0, +0, -]
dclua_box_t* dclua_box_test(lua_State* L, int index, const char* class_name);

// Returns the object of the box at |index| if it is an open |class_name|,
// else NULL (for a closed one too).
// [-0, +0, -]
void* dclua_box_object(lua_State* L, int index, const char* class_name);

// Closes the box at |index| and returns the object it held (NULL if it
// was closed already), for the class's close function to release. Raises
// an argument error if the value is not a |class_name|.
// [-0, +0, v]
void* dclua_box_take(lua_State* L, int index, const char* class_name);

// For a class's own __tostring: returns the object of the box at |index|,
// or pushes "<class_name> (closed)" and returns NULL when it is closed.
// Raises an argument error if the value is not a |class_name|.
// [-0, +(0|1), v]
void* dclua_box_for_tostring(lua_State* L, int index,
                             const char* class_name);

// Creates the metatable |class_name| (with __name, so that argument errors
// read "dc.stream expected"), sets |meta| on it (metamethods; may be
// NULL) and a default __tostring ("dc.stream: 0x..." or "dc.stream
// (closed)") unless |meta| has one. |methods| (may be NULL) become the
// __index table; a class with fields gives its own __index in |meta|
// instead, and the methods go to a table that __index asks first through
// dclua_push_method(). Leaves the stack as it was.
// [-0, +0, m]
void dclua_class_new(lua_State* L, const char* class_name,
                     const luaL_Reg* meta, const luaL_Reg* methods);

// Adds |methods| to the class |class_name|, so that a part can give
// methods to another part's objects (dev:buffer, s:encoder).
// [-0, +0, m]
void dclua_add_methods(lua_State* L, const char* class_name,
                       const luaL_Reg* methods);

// For the __index of a class with fields (object at 1, key at 2): pushes
// the method of that name and returns true, or returns false and pushes
// nothing.
// [-0, +(0|1), m]
bool dclua_push_method(lua_State* L);

// The same for an __index whose fields have string names: returns NULL
// when it pushed a method, else the key for the caller to look up ("" for
// a key that is not a string, which names no field).
// [-0, +(0|1), m]
const char* dclua_index_key(lua_State* L);

// Sets the functions of |funcs| into the table at the top of the stack.
// [-0, +0, m]
#define dclua_set_funcs(L, funcs) luaL_setfuncs((L), (funcs), 0)

//===-- Errors (l_error.c) ----------------------------------------------===//

// Whether the value at |index| is an error object of the module.
bool dclua_is_error(lua_State* L, int index);

// Pushes an error object for |status| with dc_last_error() as message.
// [-0, +1, m]
void dclua_push_error(lua_State* L, dc_status_t status);

// Raises an error object for |status| with dc_last_error() as message.
// Never returns.
int dclua_raise(lua_State* L, dc_status_t status);

// Describes the error value at |index| without letting script code
// escape: writes its text to |message| (|size| bytes; the value's
// __tostring runs under protection, and a value that cannot be shown
// reads as Lua's "(error object is a <type> value)") and returns its
// status (a dc error object's code, read raw; DC_ERR_UNKNOWN otherwise).
// For callbacks on engine threads, where an error must not unwind.
// [-0, +0, -]
dc_status_t dclua_describe_error(lua_State* L, int index, char* message,
                                 size_t size);

// Raises an error object for |status| with a formatted message (also set
// as the thread's dc_last_error()). Never returns.
int dclua_raisef(lua_State* L, dc_status_t status, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// Raises an error object for |status| with dc_last_error() and an extra
// string field |key| = |value| (e.g. "op", "kernel"). Never returns.
int dclua_raise_with(lua_State* L, dc_status_t status, const char* key,
                     const char* value);

// The status the error value at |index| stands for: the code of an error
// object of the module, else DC_ERR_UNKNOWN (a string or any other value
// a script raised).
// [-0, +0, -]
dc_status_t dclua_error_status(lua_State* L, int index);

// Raises |status| if it is not DC_OK.
#define DCLUA_CHECK(L, expr)                           \
  do {                                                 \
    dc_status_t dclua_st_ = (expr);                    \
    if (dclua_st_ != DC_OK) dclua_raise(L, dclua_st_); \
  } while (0)

//===-- Result tables, option tables, times (l_util.c) ------------------===//

// Set field |key| of the table at the top of the stack, for the results
// the module returns as tables (stats, reports, descriptions). Unsigned
// counts convert to lua_Integer as a cast does.
// [-0, +0, m]
void dclua_set_integer(lua_State* L, const char* key, lua_Integer value);
void dclua_set_number(lua_State* L, const char* key, lua_Number value);
void dclua_set_string(lua_State* L, const char* key, const char* value);
void dclua_set_boolean(lua_State* L, const char* key, bool value);

// Pushes a shallow copy of the table at |index|: its raw fields, without
// its metatable.
// [-0, +1, m]
void dclua_copy_table(lua_State* L, int index);

// Pushes the first key of the table at |index| that |allowed| (NULL-
// terminated) does not list and returns true; returns false and pushes
// nothing when it lists every key. Option tables are checked so that a
// misspelt option is an error, not a silently ignored default.
// [-0, +(0|1), -]
bool dclua_push_unknown_key(lua_State* L, int index,
                            const char* const* allowed);

// Pushes |names| (NULL-terminated) joined by ", " and returns it, for
// messages that list what is allowed.
// [-0, +1, m]
const char* dclua_push_names(lua_State* L, const char* const* names);

// Raises an argument error "unknown option 'x' (expected a, b)" for a key
// of the options table at |index| that |allowed| does not list, and a
// type error if the value is not a table.
// [-0, +0, v]
void dclua_check_options(lua_State* L, int index, const char* const* allowed);

// Raises INVALID_ARGUMENT "<what>: unknown field 'x' (fields: a, b)" for
// a key of the table at |index| that |fields| does not list: the error
// object of constructors such as dc.retry and dc.graph.
// [-0, +0, e]
void dclua_check_fields(lua_State* L, int index, const char* what,
                        const char* const* fields);

// Reads an optional timeout in milliseconds at |index| as nanoseconds:
// none, nil or one too long to count (math.huge) is DC_TIMEOUT_INFINITE.
// Raises an argument error for a negative one.
// [-0, +0, v]
uint64_t dclua_opt_timeout_ns(lua_State* L, int index);

// Converts a positive number of |seconds| to nanoseconds, rounded and at
// least 1, so that no positive duration reads as "none". Any thread.
uint64_t dclua_seconds_to_ns(double seconds);

// The monotonic clock, in nanoseconds. Any thread.
uint64_t dclua_now_ns(void);

//===-- The state of the binding (l_context.c) --------------------------===//

// Returns the context the module works in (creating it on first use).
// dclua_context() in dclua.h.

// The queue of Lua calls that engine threads post (l_callback.c). The
// state owns one reference; each callback another.
typedef struct dclua_queue_t dclua_queue_t;
dclua_queue_t* dclua_queue_create(void);  // NULL when out of memory
// Refuses every later call, cancels the queued ones (blocking callers get
// DC_ERR_CANCELLED) and drops the state's reference. Lua-thread only.
void dclua_queue_close(dclua_queue_t* queue);
dclua_queue_t* dclua_state_queue(lua_State* L);

// Whether the host asked for progress lines on long work (set with
// dclua_set_progress; off by default). l_progress.h combines it with
// DC_PROGRESS and a caller's own request.
bool dclua_progress_enabled(lua_State* L);

// Whether |L| runs under dclua_engine_sandbox: what only the host may set
// (a device's memory budget) is refused there.
bool dclua_sandboxed(lua_State* L);

// Whether a script may write |path| (see dclua_set_write_root).
bool dclua_path_writable(lua_State* L, const char* path);

// Raises a PERMISSION_DENIED error object unless the script may write |path|: true
// always outside a sandbox; inside one only below the allowed directory.
// Every module function that writes a file calls it first.
// [-0, +0, v]
void dclua_check_writable(lua_State* L, const char* path);

//===-- Lua callbacks from engine threads (l_callback.c) ----------------===//
//
// Engine threads never touch a lua_State. A Lua function that the engine
// calls (a stream's host function, a graph's host op, an event's
// completion callback) is a dclua_callback_t. An engine thread *posts* a
// call to the state's queue; the Lua thread runs queued calls whenever it
// is inside dclua_poll() or dclua_wait() (every blocking call of the
// module waits through dclua_wait), so Lua code runs only on the Lua
// thread while device work proceeds in parallel. Once the state closes,
// calls are refused with DC_ERR_CANCELLED instead of run.

typedef struct dclua_callback_t dclua_callback_t;

// Whether the value at |index| can be called: a function, or a value
// whose metatable has __call.
// [-0, +0, -]
bool dclua_is_callable(lua_State* L, int index);

// Pushes arguments for a call; runs on the Lua thread. Returns the number
// pushed.
typedef int (*dclua_push_fn_t)(lua_State* L, void* user_data);

// Makes a callback of the function at |index| (raises if it is not
// callable). |what| names it in error messages ("host op 'save'"); it is
// copied. The caller owns one reference.
// [-0, +0, m]
dclua_callback_t* dclua_callback_create(lua_State* L, int index,
                                        const char* what);

// Reference counting; thread-safe. The last release frees the callback;
// its function is forgotten on the Lua thread at the next poll.
void dclua_callback_retain(dclua_callback_t* callback);
void dclua_callback_release(dclua_callback_t* callback);

// Asks the Lua thread to call |callback| with the arguments |push| pushes
// (|push| may be NULL) and waits for it to return. Thread-safe; called
// from engine threads. Returns DC_OK; when the function raised, the code
// of the error object it raised (see dc.error) or DC_ERR_UNKNOWN for any
// other error value, with its message as dc_last_error(); or
// DC_ERR_CANCELLED when the state is closing. Must not be called on the
// Lua thread itself.
dc_status_t dclua_callback_call(dclua_callback_t* callback,
                                dclua_push_fn_t push, void* user_data);

// Queues a call of |callback| and returns at once; |push| and |user_data|
// are used later, on the Lua thread, and |done| (if not NULL) is called
// with |user_data| after that (or when the state closes without running
// it) so it can free |user_data|. An error the function raises is
// reported with lua_warning and re-raised by the dclua_poll() that ran it.
// Thread-safe.
void dclua_callback_post(dclua_callback_t* callback, dclua_push_fn_t push,
                         void (*done)(void* user_data), void* user_data);

// Runs every queued call. Returns how many ran. Raises the first error a
// posted call raised (after running the rest).
// [-0, +0, e]
int dclua_poll(lua_State* L);

// Runs |wait(user_data)|, a call that blocks until engine work finishes,
// and returns its status. While it blocks, the Lua thread runs the calls
// that engine threads post, so that a wait for work that calls Lua code
// never deadlocks. Without live callbacks it simply calls |wait|.
// [-0, +0, e]
dc_status_t dclua_wait(lua_State* L, dc_status_t (*wait)(void* user_data),
                       void* user_data);

//===-- Devices (l_device.c) --------------------------------------------===//

// The device at |index|: a dc.device, or a device name ("cpu", "cuda:0").
// With |optional| true, none or nil gives the context's default device.
// [-0, +0, v]
dc_device_t* dclua_check_device(lua_State* L, int index, bool optional);

// Pushes the dc.device of |device| (one per device, so == works).
// [-0, +1, m]
void dclua_push_device(lua_State* L, dc_device_t* device);


//===-- Buffers (l_buffer.c) --------------------------------------------===//

dc_buffer_t* dclua_check_buffer(lua_State* L, int index);
dc_buffer_t* dclua_test_buffer(lua_State* L, int index);  // NULL if not one
// Pushes a dc.buffer that takes over the reference |buffer|.
// [-0, +1, m]
void dclua_push_buffer(lua_State* L, dc_buffer_t* buffer);

// Creates a buffer of |params| on |device| and pushes it as a dc.buffer,
// as dev:buffer does: when the device is out of memory it collects garbage
// buffers and, if that freed any, tries once more; the new bytes are
// accounted to the collector. Raises the core's error on failure.
// [-0, +1, e]
dc_buffer_t* dclua_push_new_buffer(lua_State* L, dc_device_t* device,
                                   const dc_buffer_params_t* params);

//===-- Kernels, arguments and launch shapes (l_kernel.c, l_args.c) -----===//

dc_kernel_t* dclua_check_kernel(lua_State* L, int index);
dc_kernel_t* dclua_test_kernel(lua_State* L, int index);  // NULL if not one
// Pushes a dc.kernel that takes over the reference |kernel|.
void dclua_push_kernel(lua_State* L, dc_kernel_t* kernel);

// The arguments of one dispatch, converted from Lua values against the
// kernel's reflection. |args| points at |inline_args| or, past 16
// arguments, at a userdata left on the stack by the conversion; that
// userdata also holds the bytes of records larger than a dc_arg_t's inline
// value (|spill|; NULL when there are none), which their arguments borrow.
typedef struct dclua_args_t {
  dc_arg_t* args;
  size_t count;
  unsigned char* spill;
  dc_arg_t inline_args[16];
} dclua_args_t;

// Converts the values at stack slots |first|..|last| (inclusive; none when
// last < first) into |kernel|'s arguments: a dc.buffer for a buffer
// argument, a number (or boolean) for a scalar, a table of numbers for a
// vector, dc.localmem(bytes) or a byte count for a __local pointer, a
// table of members or a string of its bytes for a struct (l_record.c). Raises
// INVALID_ARGUMENT naming the kernel and the argument ("blur_h: expected 3
// arguments (in, out, w), got 0"; "blur_h: argument 3 (w) expects int,
// got a string").
// [-0, +(0|1), v]
void dclua_args_from_stack(lua_State* L, dc_kernel_t* kernel, int first,
                           int last, dclua_args_t* out);

// Like dclua_args_from_stack, from the array part of the table at |index|;
// named fields (`{ w = 640 }`) bind by argument name.
void dclua_args_from_table(lua_State* L, dc_kernel_t* kernel, int index,
                           dclua_args_t* out);

// Converts the value at |index| into argument |arg| (0-based) of |kernel|
// alone (|arg| below the kernel's argument count), by the rules and with
// the messages of dclua_args_from_stack (for enc:arg, which binds one
// argument at a time). A record larger than the argument's inline value
// is written into a userdata pushed on the stack, which |out| borrows.
// [-0, +(0|1), v]
void dclua_arg_from_value(lua_State* L, dc_kernel_t* kernel, size_t arg,
                          int index, dc_arg_t* out);

// Shared by the conversions (l_args.c): raises INVALID_ARGUMENT
// "<kernel>: <message>" with the error's field kernel set; describes the
// value at |index| for a "got ..." clause into |buf|; names a dtype as the
// kernel language does ("int"); converts the value at |index| to one
// element of |dtype| at |dst| and returns NULL, or why it cannot ("" for
// a value of the wrong type).
int dclua_args_fail(lua_State* L, const char* kernel, const char* format,
                    ...) __attribute__((format(printf, 3, 4)));
const char* dclua_args_describe(lua_State* L, int index, char* buf,
                                size_t size);
const char* dclua_c_type(dc_dtype_t dtype);
const char* dclua_put_element(lua_State* L, int index, dc_dtype_t dtype,
                              void* dst);

// Converts the table of members or the string of bytes at |index| into
// struct argument |arg| of |kernel|: its reflected size of bytes at |dst|
// (l_record.c). Raises as dclua_args_from_stack does, naming the member.
// [-0, +0, v]
void dclua_record_from_value(lua_State* L, const dc_kernel_t* kernel,
                             size_t arg, int index, unsigned char* dst);

// Reads a launch shape from the table at |index|: `grid` (a count or a
// table of 1-3 counts; required), `group` (same form; optional: the engine
// chooses), `offset` (optional). Raises INVALID_ARGUMENT naming |kernel|.
// [-0, +0, v]
void dclua_check_dispatch(lua_State* L, int index, dc_kernel_t* kernel,
                          dc_dispatch_t* out);

//===-- Streams and events (l_stream.c, l_event.c) ----------------------===//

dc_stream_t* dclua_check_stream(lua_State* L, int index);
dc_event_t* dclua_check_event(lua_State* L, int index);
// Pushes a dc.event that takes over the reference |event|.
void dclua_push_event(lua_State* L, dc_event_t* event);

// Pushes a new, unrecorded dc.event of |device| made with the options at
// |options| (none or nil: a sync event; { timing = bool }). Raises an
// argument error naming |options| for a bad options table.
// [-0, +1, e]
void dclua_push_new_event(lua_State* L, dc_device_t* device, int options);

// Waits up to |timeout_ns| for |event| through dclua_wait, holding a
// reference (so that a Lua callback run meanwhile may close its object),
// and returns the wait's status; raises the run's time-limit error when
// the run's deadline, not |timeout_ns|, ended the wait (l_watchdog.h).
// [-0, +0, e]
dc_status_t dclua_wait_event(lua_State* L, dc_event_t* event,
                             uint64_t timeout_ns);

// Pushes what a query of work (ev:query, s:query, f:query) returns for its
// |status|: "done" for DC_OK, "pending" for DC_ERR_UNAVAILABLE; raises
// any other status, the error of the work. Returns 1, the count pushed.
// [-0, +1, e]
int dclua_push_query(lua_State* L, dc_status_t status);

//===-- Policies (l_policy.c) -------------------------------------------===//

// Reads a retry policy from a dc.retry or a plain table of the same
// fields at |index| into |out|. Raises INVALID_ARGUMENT naming the field.
void dclua_check_retry(lua_State* L, int index, dc_retry_policy_t* out);

//===-- Breakers (l_breaker.c) ------------------------------------------===//

// Pushes the dc.breaker at |index|, or, for a plain table of dc.breaker's
// fields, a new one named |default_name| unless the table names it, and
// returns its breaker, which lives while the pushed value does (the core
// retains what it keeps). Raises INVALID_ARGUMENT naming a bad field, and
// for a closed breaker or another value.
// [-0, +1, e]
dc_breaker_t* dclua_push_breaker_of(lua_State* L, int index,
                                    const char* default_name);

//===-- Module parts: each registers its functions into the module table
//    at the top of the stack and creates its classes. ------------------===//

void dclua_open_error(lua_State* L);
void dclua_open_device(lua_State* L);
void dclua_open_buffer(lua_State* L);
void dclua_open_kernel(lua_State* L);
void dclua_open_stream(lua_State* L);
void dclua_open_event(lua_State* L);
void dclua_open_encoder(lua_State* L);
void dclua_open_graph(lua_State* L);
void dclua_open_policy(lua_State* L);
void dclua_open_breaker(lua_State* L);
void dclua_open_telemetry(lua_State* L);
void dclua_open_fault(lua_State* L);
void dclua_open_image(lua_State* L);

#endif  // DCLUA_INTERNAL_H_

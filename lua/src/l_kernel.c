// l_kernel.c: programs and kernels as Lua objects: compiling, reflection,
// synchronous dispatch, __local sizes, and the built-in kernels and
// operations.
//
// A dc.program owns one reference to its program. Its kernels read as
// fields (prog.blur_h) or by position (prog[1], so ipairs works); each is
// a dc.kernel made once and cached in the program's first user value, and
// it keeps the program object alive through its own user value. A
// dc.kernel owns one reference to its kernel (which keeps the core
// program alive), so a kernel stays usable after its program is closed.
//
// Calls that block (compiling, dispatching, the built-in operations) run
// through dclua_wait(), so Lua callbacks that engine threads post meanwhile
// still run. For the time of such a call the kernel and the buffers it
// uses are retained by a to-be-closed "hold" on the stack, so that a
// callback closing one of them cannot free memory the device is using.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dclua_internal.h"
#include "l_progress.h"

#define HOLD_MT "dc.hold"  // internal: references kept during a call

//===-- Holds -----------------------------------------------------------===//

// The references a blocking call keeps; released when its stack slot is
// closed (on return or on error) or, failing that, collected.
typedef struct hold_t {
  dc_kernel_t* kernel;
  size_t count;
  dc_buffer_t* buffers[];
} hold_t;

// [-1, +0, -]  __close / __gc of a hold
static int hold_release(lua_State* L) {
  hold_t* h = luaL_checkudata(L, 1, HOLD_MT);
  for (size_t i = 0; i < h->count; ++i) dc_buffer_release(h->buffers[i]);
  h->count = 0;
  dc_kernel_release(h->kernel);
  h->kernel = NULL;
  return 0;
}

// Pushes a to-be-closed hold of |kernel| (may be NULL) and the |count|
// buffers of |buffers| (NULLs skipped). Returns its stack index.
// [-0, +1, m]
static int push_hold(lua_State* L, dc_kernel_t* kernel,
                     dc_buffer_t* const* buffers, size_t count) {
  hold_t* h = lua_newuserdatauv(L, sizeof(*h) + count * sizeof(h->buffers[0]),
                                0);
  h->kernel = NULL;
  h->count = 0;
  luaL_setmetatable(L, HOLD_MT);
  lua_toclose(L, -1);
  // Nothing below raises: every reference taken is recorded at once.
  for (size_t i = 0; i < count; ++i) {
    if (buffers[i] == NULL) continue;
    dc_buffer_retain(buffers[i]);
    h->buffers[h->count++] = buffers[i];
  }
  if (kernel != NULL) dc_kernel_retain(kernel);
  h->kernel = kernel;
  return lua_gettop(L);
}

// Pushes a hold of |kernel| and the buffers among |args|.
static int push_args_hold(lua_State* L, dc_kernel_t* kernel,
                          const dclua_args_t* args) {
  dc_buffer_t* inline_buffers[16];
  dc_buffer_t** buffers = inline_buffers;
  if (args->count > 16) {
    buffers = lua_newuserdatauv(L, args->count * sizeof(*buffers), 0);
  }
  for (size_t i = 0; i < args->count; ++i) {
    buffers[i] = args->args[i].kind == DC_ARG_BUFFER ? args->args[i].buffer
                                                     : NULL;
  }
  return push_hold(L, kernel, buffers, args->count);
}

//===-- dc.localmem -----------------------------------------------------===//

// A DCLUA_LOCAL userdata holds one size_t: the bytes of __local memory per
// work-group that a __local pointer argument gets (read in l_args.c).

// [-1, +1, v]  dc.localmem(bytes) -> a __local size for a dispatch argument
static int l_localmem(lua_State* L) {
  lua_Integer bytes = luaL_checkinteger(L, 1);
  luaL_argcheck(L, bytes > 0, 1, "the size must be a positive byte count");
  size_t* box = lua_newuserdatauv(L, sizeof(size_t), 0);
  *box = (size_t)bytes;
  luaL_setmetatable(L, DCLUA_LOCAL);
  return 1;
}

// [-1, +1, -]  tostring(lm) -> "dc.localmem(256)"
static int localmem_tostring(lua_State* L) {
  const size_t* bytes = dclua_udata_check(L, 1, DCLUA_LOCAL);
  lua_pushfstring(L, "dc.localmem(%I)", (lua_Integer)*bytes);
  return 1;
}

// [-2, +1, -]  lm.bytes -> the size in bytes (other fields: nil)
static int localmem_index(lua_State* L) {
  const size_t* bytes = dclua_udata_check(L, 1, DCLUA_LOCAL);
  const char* key = lua_tostring(L, 2);
  if (key != NULL && strcmp(key, "bytes") == 0) {
    lua_pushinteger(L, (lua_Integer)*bytes);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

//===-- Kernels ---------------------------------------------------------===//

dc_kernel_t* dclua_check_kernel(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_KERNEL);
}

dc_kernel_t* dclua_test_kernel(lua_State* L, int index) {
  return dclua_box_object(L, index, DCLUA_KERNEL);
}

void dclua_push_kernel(lua_State* L, dc_kernel_t* kernel) {
  dclua_box_t* box = dclua_box_new(L, DCLUA_KERNEL, 1);
  box->p = kernel;
}

// [-1, +0, -]  __gc / __close / k:close() -> k
static int kernel_close(lua_State* L) {
  dc_kernel_release(dclua_box_take(L, 1, DCLUA_KERNEL));
  lua_settop(L, 1);
  return 1;
}

static const char* address_space_name(dc_address_space_t space) {
  switch (space) {
    case DC_ADDRESS_PRIVATE: return "private";
    case DC_ADDRESS_GLOBAL: return "global";
    case DC_ADDRESS_CONSTANT: return "constant";
    case DC_ADDRESS_LOCAL: return "local";
  }
  return "?";
}

static const char* kind_name(dc_arg_kind_t kind) {
  switch (kind) {
    case DC_ARG_SCALAR: return "scalar";
    case DC_ARG_BUFFER: return "buffer";
    case DC_ARG_LOCAL: return "local";
    case DC_ARG_RECORD: return "record";
  }
  return "?";
}

static void push_fields(lua_State* L, const dc_kernel_field_t* fields,
                        size_t count);

// Pushes the description of one member of a struct or union.
static void push_field(lua_State* L, const dc_kernel_field_t* f) {
  lua_createtable(L, 0, 9);
  dclua_set_string(L, "name", f->name);
  dclua_set_string(L, "type", f->type_name);
  dclua_set_integer(L, "offset", f->offset);
  dclua_set_integer(L, "size", f->size);
  if (f->dtype != 0) dclua_set_string(L, "dtype", dc_dtype_name(f->dtype));
  dclua_set_integer(L, "vector_width", f->vector_width);
  if (f->array_length != 0) {
    dclua_set_integer(L, "array_length", f->array_length);
  }
  if (f->fields != NULL) {
    dclua_set_boolean(L, "union", f->is_union);
    push_fields(L, f->fields, f->field_count);
    lua_setfield(L, -2, "fields");
  }
}

// Pushes a sequence of member descriptions.
static void push_fields(lua_State* L, const dc_kernel_field_t* fields,
                        size_t count) {
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; ++i) {
    push_field(L, &fields[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

// Pushes the description of one argument.
static void push_arg_info(lua_State* L, const dc_kernel_arg_info_t* a) {
  lua_createtable(L, 0, 9);
  dclua_set_string(L, "name", a->name);
  dclua_set_string(L, "type", a->type_name);
  dclua_set_string(L, "kind", kind_name(a->kind));
  dclua_set_string(L, "address_space", address_space_name(a->address_space));
  if (a->dtype != 0) dclua_set_string(L, "dtype", dc_dtype_name(a->dtype));
  dclua_set_integer(L, "vector_width", a->vector_width);
  if (a->kind == DC_ARG_SCALAR || a->kind == DC_ARG_RECORD) {
    dclua_set_integer(L, "size", a->size);
  }
  dclua_set_boolean(L, "const", a->is_const);
  dclua_set_boolean(L, "write_only", a->is_write_only);
  if (a->kind == DC_ARG_RECORD) {
    dclua_set_integer(L, "align", a->align);
    dclua_set_boolean(L, "union", a->is_union);
    push_fields(L, a->fields, a->field_count);
    lua_setfield(L, -2, "fields");
  }
}

// [-1, +1, e]  k:info() -> { name, args = { {name, type, kind, ...}, ... },
//   uses_barrier, uses_grid_sync, execution, static_local_size,
//   max_group_size, required_group_size = {x, y, z} or nil }
static int kernel_info(lua_State* L) {
  dc_kernel_t* kernel = dclua_check_kernel(L, 1);
  dc_kernel_info_t info;
  DCLUA_CHECK(L, dc_kernel_info(kernel, &info));
  lua_createtable(L, 0, 9);
  dclua_set_string(L, "name", info.name);
  lua_createtable(L, (int)info.arg_count, 0);
  for (size_t i = 0; i < info.arg_count; ++i) {
    push_arg_info(L, dc_kernel_arg_info(kernel, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "args");
  dclua_set_boolean(L, "uses_barrier", info.uses_barrier);
  dclua_set_boolean(L, "uses_grid_sync", info.uses_grid_sync);
  dclua_set_string(L, "execution", info.execution);
  dclua_set_integer(L, "static_local_size", info.static_local_size);
  dclua_set_integer(L, "max_group_size", info.max_group_size);
  if (info.required_group_size[0] != 0) {
    lua_createtable(L, 3, 0);
    for (int d = 0; d < 3; ++d) {
      lua_pushinteger(L, info.required_group_size[d]);
      lua_rawseti(L, -2, d + 1);
    }
    lua_setfield(L, -2, "required_group_size");
  }
  return 1;
}

// [-1, +1, e]  k:arg_index(name) -> the 1-based position of argument name
// (raises NOT_FOUND listing the arguments)
static int kernel_arg_index(lua_State* L) {
  dc_kernel_t* kernel = dclua_check_kernel(L, 1);
  const char* name = luaL_checkstring(L, 2);
  size_t index = 0;
  dc_status_t st = dc_kernel_find_arg(kernel, name, &index);
  if (st != DC_OK) dclua_raise_with(L, st, "kernel", dc_kernel_name(kernel));
  lua_pushinteger(L, (lua_Integer)index + 1);
  return 1;
}

typedef struct dispatch_job_t {
  dc_kernel_t* kernel;
  dc_dispatch_t dispatch;
  const dclua_args_t* args;
} dispatch_job_t;

static dc_status_t run_dispatch(void* user_data) {
  const dispatch_job_t* job = user_data;
  return dc_kernel_dispatch(job->kernel, &job->dispatch, job->args->args,
                            job->args->count);
}

// [-(2+n), +1, e]  k:dispatch(launch, args...) -> k, also k(launch, ...):
// runs the kernel over launch = { grid =, group =, offset = } and waits
// until it has finished.
static int kernel_dispatch(lua_State* L) {
  dispatch_job_t job = {.kernel = dclua_check_kernel(L, 1)};
  dclua_check_dispatch(L, 2, job.kernel, &job.dispatch);
  dclua_args_t args;
  dclua_args_from_stack(L, job.kernel, 3, lua_gettop(L), &args);
  job.args = &args;
  int hold = push_args_hold(L, job.kernel, &args);
  dc_status_t st = dclua_wait(L, run_dispatch, &job);
  lua_closeslot(L, hold);
  if (st != DC_OK) {
    dclua_raise_with(L, st, "kernel", dc_kernel_name(job.kernel));
  }
  lua_settop(L, 1);
  return 1;
}

// [-2, +1, e]  k:tuned_group_size(grid) -> {x[, y[, z]]}, or nil until
// autotuning has tried every candidate size for this grid
static int kernel_tuned_group_size(lua_State* L) {
  dc_kernel_t* kernel = dclua_check_kernel(L, 1);
  lua_createtable(L, 0, 1);  // reuse the launch checks: { grid = grid }
  lua_pushvalue(L, 2);
  lua_setfield(L, -2, "grid");
  dc_dispatch_t d;
  dclua_check_dispatch(L, -1, kernel, &d);
  size_t local[3] = {0, 0, 0};
  dc_status_t st = dc_kernel_tuned_group_size(kernel, d.dims, d.global,
                                              local);
  if (st == DC_ERR_NOT_FOUND) {
    lua_pushnil(L);
    return 1;
  }
  if (st != DC_OK) dclua_raise_with(L, st, "kernel", dc_kernel_name(kernel));
  lua_createtable(L, (int)d.dims, 0);
  for (uint32_t i = 0; i < d.dims; ++i) {
    lua_pushinteger(L, (lua_Integer)local[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

// [-2, +1, v]  k.name, k.program (nil for a built-in), k:method
static int kernel_index(lua_State* L) {
  const char* key = dclua_index_key(L);
  if (key == NULL) return 1;  // a method
  if (strcmp(key, "name") == 0) {
    lua_pushstring(L, dc_kernel_name(dclua_check_kernel(L, 1)));
  } else if (strcmp(key, "program") == 0) {
    lua_getiuservalue(L, 1, 1);
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// [-1, +1, e]  #k -> the number of arguments
static int kernel_len(lua_State* L) {
  dc_kernel_info_t info;
  DCLUA_CHECK(L, dc_kernel_info(dclua_check_kernel(L, 1), &info));
  lua_pushinteger(L, (lua_Integer)info.arg_count);
  return 1;
}

// [-1, +1, m]  tostring(k) -> "dc.kernel: blur_h(in, out, w)"
static int kernel_tostring(lua_State* L) {
  dc_kernel_t* kernel = dclua_box_for_tostring(L, 1, DCLUA_KERNEL);
  if (kernel == NULL) return 1;  // "dc.kernel (closed)"
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "dc.kernel: ");
  luaL_addstring(&b, dc_kernel_name(kernel));
  luaL_addchar(&b, '(');
  const dc_kernel_arg_info_t* a;
  for (size_t i = 0; (a = dc_kernel_arg_info(kernel, i)) != NULL; ++i) {
    if (i > 0) luaL_addstring(&b, ", ");
    luaL_addstring(&b, a->name);
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

//===-- Programs --------------------------------------------------------===//

// A program's user values: 1 the table of its dc.kernels by name, 2 its
// dc.device.

static dc_program_t* check_program(lua_State* L, int index) {
  return dclua_box_check(L, index, DCLUA_PROGRAM);
}

// [-1, +0, -]  __gc / __close / prog:close() -> prog
static int program_close(lua_State* L) {
  dc_program_release(dclua_box_take(L, 1, DCLUA_PROGRAM));
  lua_settop(L, 1);
  return 1;
}

// Pushes the dc.kernel |kernel| (borrowed from the program at |index|),
// made once and cached by name.
static void push_program_kernel(lua_State* L, int index, dc_kernel_t* kernel) {
  const char* name = dc_kernel_name(kernel);
  lua_getiuservalue(L, index, 1);
  dclua_box_t* box = NULL;
  if (lua_getfield(L, -1, name) != LUA_TNIL) {
    box = dclua_box_test(L, -1, DCLUA_KERNEL);
    if (box != NULL && box->p != NULL) {  // a closed one is made again
      lua_remove(L, -2);
      return;
    }
  }
  lua_pop(L, 1);
  box = dclua_box_new(L, DCLUA_KERNEL, 1);
  lua_pushvalue(L, index);
  lua_setiuservalue(L, -2, 1);
  dc_kernel_retain(kernel);
  box->p = kernel;
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, name);
  lua_remove(L, -2);
}

// Pushes the program at |index|'s kernel |name|; raises NOT_FOUND listing
// the program's kernels.
static void push_kernel_named(lua_State* L, int index, const char* name) {
  dc_kernel_t* kernel = NULL;
  dc_status_t st = dc_program_find_kernel(check_program(L, index), name,
                                          &kernel);
  if (st != DC_OK) dclua_raise_with(L, st, "kernel", name);
  push_program_kernel(L, index, kernel);
}

// [-2, +1, e]  prog:kernel(name) -> dc.kernel
static int program_kernel(lua_State* L) {
  push_kernel_named(L, 1, luaL_checkstring(L, 2));
  return 1;
}

// [-1, +1, e]  prog:kernels() -> { "name", ... } in source order
static int program_kernels(lua_State* L) {
  dc_program_t* program = check_program(L, 1);
  size_t count = dc_program_kernel_count(program);
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; ++i) {
    dc_kernel_t* kernel = NULL;
    DCLUA_CHECK(L, dc_program_kernel(program, i, &kernel));
    lua_pushstring(L, dc_kernel_name(kernel));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

// [-2, +1, e]  prog.name -> a kernel (raises NOT_FOUND if none has it),
// prog[i] -> kernel i (nil past the end), prog.build_log, prog.device,
// prog:method
static int program_index(lua_State* L) {
  if (dclua_push_method(L)) return 1;
  dc_program_t* program = check_program(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {  // 2.0 counts as 2, 2.5 finds none
    int isnum = 0;
    lua_Integer i = lua_tointegerx(L, 2, &isnum);
    dc_kernel_t* kernel = NULL;
    if (!isnum || i < 1 ||
        dc_program_kernel(program, (size_t)i - 1, &kernel) != DC_OK) {
      lua_pushnil(L);
      return 1;
    }
    push_program_kernel(L, 1, kernel);
    return 1;
  }
  const char* key = luaL_checkstring(L, 2);
  if (strcmp(key, "build_log") == 0) {
    lua_pushstring(L, dc_program_build_log(program));
  } else if (strcmp(key, "device") == 0) {
    lua_getiuservalue(L, 1, 2);
  } else {
    push_kernel_named(L, 1, key);
  }
  return 1;
}

// [-1, +1, e]  #prog -> the number of kernels
static int program_len(lua_State* L) {
  lua_pushinteger(L, (lua_Integer)dc_program_kernel_count(
                         check_program(L, 1)));
  return 1;
}

// [-1, +1, m]  tostring(prog) -> "dc.program: 2 kernels (add, scale)"
static int program_tostring(lua_State* L) {
  if (dclua_box_for_tostring(L, 1, DCLUA_PROGRAM) == NULL) return 1;
  lua_pushcfunction(L, program_kernels);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  int names = lua_gettop(L);
  size_t count = lua_rawlen(L, names);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "dc.program: %I kernel%s (", (lua_Integer)count,
                  count == 1 ? "" : "s");
  luaL_addvalue(&b);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) luaL_addstring(&b, ", ");
    lua_rawgeti(L, names, (lua_Integer)i + 1);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

//===-- Compiling -------------------------------------------------------===//

// Whether |s| is a C identifier (a macro name for -D).
static bool is_identifier(const char* s) {
  if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) {
    return false;
  }
  for (++s; *s; ++s) {
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9'))) {
      return false;
    }
  }
  return true;
}

// Pushes the C spelling of the float |x| that reads back as |x|, with a
// '.' or exponent so that it stays a floating constant.
static void push_float_literal(lua_State* L, lua_Number x) {
  char text[64];
  snprintf(text, sizeof(text), "%.15g", (double)x);
  if (strtod(text, NULL) != (double)x) {
    snprintf(text, sizeof(text), "%.17g", (double)x);
  }
  if (strpbrk(text, ".e") == NULL) strcat(text, ".0");
  lua_pushstring(L, text);
}

// Pushes "-DNAME[=VALUE]" for the define whose key and value are at the
// top of the stack (key below), or nothing for `false`. Returns whether it
// pushed. |arg| is the options' argument, for errors.
static bool push_define(lua_State* L, int arg) {
  const char* name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2)
                                                    : NULL;
  if (name == NULL || !is_identifier(name)) {
    return luaL_argerror(L, arg, "defines: keys must be macro names");
  }
  int type = lua_type(L, -1);
  if (type == LUA_TBOOLEAN) {
    if (!lua_toboolean(L, -1)) return false;
    lua_pushfstring(L, "-D%s", name);
    return true;
  }
  if (type == LUA_TNUMBER && lua_isinteger(L, -1)) {
    lua_pushfstring(L, "-D%s=%I", name, lua_tointeger(L, -1));
    return true;
  }
  if (type == LUA_TNUMBER && isfinite(lua_tonumber(L, -1))) {
    push_float_literal(L, lua_tonumber(L, -1));
  } else if (type == LUA_TSTRING) {
    lua_pushvalue(L, -1);
    const char* text = lua_tostring(L, -1);
    if (*text == '\0' || strpbrk(text, " \t\r\n") != NULL) {
      return luaL_argerror(L, arg, lua_pushfstring(L,
          "defines.%s: a value may not be empty or contain spaces", name));
    }
  } else {
    return luaL_argerror(L, arg, lua_pushfstring(L,
        "defines.%s: expected a number, string or boolean, got %s", name,
        luaL_typename(L, -1)));
  }
  lua_pushfstring(L, "-D%s=%s", name, lua_tostring(L, -1));
  lua_remove(L, -2);
  return true;
}

// Sorts the strings of the array at the top of the stack, so that the
// same defines always give the same options (and hit the build cache).
static void sort_strings(lua_State* L, lua_Integer n) {
  for (lua_Integer i = 2; i <= n; ++i) {
    for (lua_Integer j = i; j > 1; --j) {
      lua_rawgeti(L, -1, j - 1);
      lua_rawgeti(L, -2, j);
      bool less = lua_compare(L, -1, -2, LUA_OPLT);  // t[j] < t[j-1]
      if (!less) {
        lua_pop(L, 2);
        break;
      }
      lua_rawseti(L, -3, j - 1);  // swap: t[j-1] = t[j], t[j] = old t[j-1]
      lua_rawseti(L, -2, j);
    }
  }
}

// Checks the fields of the compile options at |arg|: defines (a table),
// options and name (strings), and device where |allow_device|. Nothing
// else, so that a misspelt option is not ignored.
static void check_compile_opts(lua_State* L, int arg, bool allow_device) {
  static const char* const with_device[] = {"defines", "options", "name",
                                            "device", NULL};
  static const char* const without_device[] = {"defines", "options", "name",
                                               NULL};
  static const int types[] = {LUA_TTABLE, LUA_TSTRING, LUA_TSTRING};
  if (lua_isnoneornil(L, arg)) return;
  dclua_check_options(L, arg, allow_device ? with_device : without_device);
  for (int i = 0; i < 3; ++i) {
    lua_pushstring(L, without_device[i]);
    int type = lua_rawget(L, arg);
    if (type != LUA_TNIL && type != types[i]) {
      luaL_argerror(L, arg, lua_pushfstring(L, "option '%s' must be a %s, "
                    "got %s", without_device[i], lua_typename(L, types[i]),
                    luaL_typename(L, -1)));
    }
    lua_pop(L, 1);
  }
}

// Pushes the build options: opts.options, then -D options made of
// opts.defines in sorted order.
// [-0, +1, v]
static void push_build_options(lua_State* L, int opts, int arg) {
  lua_newtable(L);
  int list = lua_gettop(L);
  lua_Integer n = 0;
  if (opts != 0 && lua_getfield(L, opts, "defines") == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, list + 1) != 0) {
      if (push_define(L, arg)) lua_rawseti(L, list, ++n);
      lua_pop(L, 1);
    }
  }
  lua_settop(L, list);
  sort_strings(L, n);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (opts != 0) {
    if (lua_getfield(L, opts, "options") == LUA_TSTRING) {
      luaL_addvalue(&b);
      if (n > 0) luaL_addchar(&b, ' ');
    } else {
      lua_pop(L, 1);
    }
  }
  for (lua_Integer i = 1; i <= n; ++i) {
    if (i > 1) luaL_addchar(&b, ' ');
    lua_rawgeti(L, list, i);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  lua_remove(L, list);
}

typedef struct compile_job_t {
  dc_device_t* device;
  dc_program_params_t params;
  dclua_box_t* box;  // gets the program at once: nothing leaks on error
} compile_job_t;

static dc_status_t run_compile(void* user_data) {
  compile_job_t* job = user_data;
  dc_program_t* program = NULL;
  dc_status_t st = dc_program_create(job->device, &job->params, &program);
  job->box->p = program;
  return st;
}

// Pushes the to-be-closed progress line of a compile of the program
// |name| (NULL: the core's default name) for |device|, "compiling
// 'blur.cl' on cpu  1.3 s", and returns its stack index.
// [-0, +1, m]
static int push_compile_progress(lua_State* L, dc_device_t* device,
                                 const char* name) {
  char label[192];
  snprintf(label, sizeof(label), "compiling '%s' on %s",
           name != NULL ? name : "program", dc_device_name(device));
  dclua_progress_params_t params = {.label = label,
                                    .kind = DCLUA_PROGRESS_ELAPSED,
                                    .request = DCLUA_PROGRESS_DEFAULT};
  dclua_progress_push(L, &params);
  lua_toclose(L, -1);
  return lua_gettop(L);
}

// Compiles the string at |source| for |device| with the options table at
// |opts| (0: none; |arg| is its argument number, for errors) and pushes
// the dc.program. |name| is the default source name.
// [-0, +1, e]
static void compile_program(lua_State* L, dc_device_t* device, int source,
                            int opts, int arg, const char* name) {
  compile_job_t job = {.device = device};
  job.params.source = lua_tolstring(L, source, &job.params.source_length);
  if (opts != 0 && lua_isnoneornil(L, opts)) opts = 0;
  push_build_options(L, opts, arg);
  const char* options = lua_tostring(L, -1);
  job.params.options = *options != '\0' ? options : NULL;
  if (opts != 0 && lua_getfield(L, opts, "name") == LUA_TSTRING) {
    name = lua_tostring(L, -1);
  }
  job.params.name = name;
  job.box = dclua_box_new(L, DCLUA_PROGRAM, 2);
  lua_newtable(L);
  lua_setiuservalue(L, -2, 1);
  dclua_push_device(L, device);
  lua_setiuservalue(L, -2, 2);
  int progress = push_compile_progress(L, device, name);
  dc_status_t status = dclua_wait(L, run_compile, &job);
  lua_closeslot(L, progress);  // the line ends before an error is raised
  lua_pop(L, 1);
  DCLUA_CHECK(L, status);
}

// [-(2|3), +1, e]  dev:compile(source [, opts]) -> dc.program
// opts: { defines = { N = 16, FAST = true }, options = "-cl-...",
//         name = "blur.cl" }
static int device_compile(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  luaL_checktype(L, 2, LUA_TSTRING);
  check_compile_opts(L, 3, false);
  lua_settop(L, 3);
  compile_program(L, device, 2, 3, 3, NULL);
  return 1;
}

// Pushes the contents of the file |path|; raises NOT_FOUND,
// PERMISSION_DENIED or INVALID_ARGUMENT when it cannot be read. The
// memory is Lua's before the file is opened, so no error leaks the file.
// [-0, +1, e]
static void push_file(lua_State* L, const char* path) {
  struct stat st;
  int found = stat(path, &st);
  if (found != 0 || S_ISDIR(st.st_mode)) {
    int e = found != 0 ? errno : EISDIR;
    dclua_raisef(L, e == ENOENT    ? DC_ERR_NOT_FOUND
                    : e == EACCES ? DC_ERR_PERMISSION_DENIED
                                  : DC_ERR_INVALID_ARGUMENT,
                 "compile_file: cannot read '%s': %s", path, strerror(e));
  }
  size_t size = (size_t)st.st_size;
  char* text = lua_newuserdatauv(L, size + 1, 0);
  FILE* f = fopen(path, "rb");
  size_t got = f != NULL ? fread(text, 1, size, f) : 0;
  int e = f == NULL ? errno : ferror(f) ? EIO : 0;
  if (f != NULL) fclose(f);
  if (e != 0) {
    dclua_raisef(L, e == EACCES ? DC_ERR_PERMISSION_DENIED
                                : DC_ERR_INVALID_ARGUMENT,
                 "compile_file: cannot read '%s': %s", path, strerror(e));
  }
  lua_pushlstring(L, text, got);
  lua_remove(L, -2);
}

// [-(2|3), +1, e]  dev:compile_file(path [, opts]) -> dc.program; messages
// name the file (or opts.name)
static int device_compile_file(lua_State* L) {
  dc_device_t* device = dclua_check_device(L, 1, false);
  const char* path = luaL_checkstring(L, 2);
  check_compile_opts(L, 3, false);
  lua_settop(L, 3);  // the source goes above the options, even absent ones
  push_file(L, path);
  compile_program(L, device, lua_gettop(L), 3, 3, path);
  return 1;
}

// The device of dc.compile's options at |opts|: opts.device or the
// default one.
static dc_device_t* opts_device(lua_State* L, int opts) {
  if (lua_isnoneornil(L, opts)) return dclua_check_device(L, opts, true);
  lua_getfield(L, opts, "device");
  dc_device_t* device = dclua_check_device(L, -1, true);
  lua_pop(L, 1);
  return device;
}

// [-(1|2), +1, e]  dc.compile(source [, opts]) -> dc.program on
// opts.device (default: dc.device())
static int l_compile(lua_State* L) {
  luaL_checktype(L, 1, LUA_TSTRING);
  check_compile_opts(L, 2, true);
  lua_settop(L, 2);
  compile_program(L, opts_device(L, 2), 1, 2, 2, NULL);
  return 1;
}

// [-(1|2), +1, e]  dc.compile_file(path [, opts]) -> dc.program
static int l_compile_file(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  check_compile_opts(L, 2, true);
  dc_device_t* device = opts_device(L, 2);
  lua_settop(L, 2);
  push_file(L, path);
  compile_program(L, device, lua_gettop(L), 2, 2, path);
  return 1;
}

//===-- Built-ins -------------------------------------------------------===//

typedef struct builtin_job_t {
  dc_device_t* device;
  const char* name;
  dclua_box_t* box;
  dc_buffer_t* buffers[3];
  size_t sizes[3];
  float sum;
} builtin_job_t;

static dc_status_t run_builtin_kernel(void* user_data) {
  builtin_job_t* job = user_data;
  dc_kernel_t* kernel = NULL;
  dc_status_t st = dc_builtin_kernel(job->device, job->name, &kernel);
  job->box->p = kernel;
  return st;
}

// [-2, +1, e]  dev:builtin(name) -> dc.kernel: add, mul, relu, sigmoid,
// matmul, sum (raises NOT_FOUND listing them)
static int device_builtin(lua_State* L) {
  builtin_job_t job = {.device = dclua_check_device(L, 1, false),
                       .name = luaL_checkstring(L, 2)};
  job.box = dclua_box_new(L, DCLUA_KERNEL, 1);
  dc_status_t st = dclua_wait(L, run_builtin_kernel, &job);
  if (st != DC_OK) dclua_raise_with(L, st, "kernel", job.name);
  return 1;
}

// A positive integer at |arg|.
static size_t check_size(lua_State* L, int arg) {
  lua_Integer n = luaL_checkinteger(L, arg);
  luaL_argcheck(L, n > 0, arg, "must be a positive integer");
  return (size_t)n;
}

static dc_status_t run_matmul(void* user_data) {
  builtin_job_t* job = user_data;
  return dc_builtin_matmul(job->buffers[0], job->buffers[1], job->buffers[2],
                           job->sizes[0], job->sizes[1], job->sizes[2]);
}

// [-6, +1, e]  dc.matmul(a, b, c, m, n, k) -> c: C = A * B for row-major
// f32 matrices, A m x k, B k x n, C m x n
static int l_matmul(lua_State* L) {
  builtin_job_t job = {.name = "matmul"};
  for (int i = 0; i < 3; ++i) {
    job.buffers[i] = dclua_check_buffer(L, i + 1);
    job.sizes[i] = check_size(L, i + 4);
  }
  int hold = push_hold(L, NULL, job.buffers, 3);
  dc_status_t st = dclua_wait(L, run_matmul, &job);
  lua_closeslot(L, hold);
  if (st != DC_OK) dclua_raise_with(L, st, "op", job.name);
  lua_settop(L, 3);
  return 1;
}

static dc_status_t run_sum(void* user_data) {
  builtin_job_t* job = user_data;
  return dc_builtin_sum(job->buffers[0], job->sizes[0], &job->sum);
}

// [-(1|2), +1, e]  dc.sum(buf [, count]) -> the sum of the first count
// (default: all) f32 elements, accumulated in float
static int l_sum(lua_State* L) {
  builtin_job_t job = {.name = "sum"};
  job.buffers[0] = dclua_check_buffer(L, 1);
  job.sizes[0] = lua_isnoneornil(L, 2) ? dc_buffer_length(job.buffers[0])
                                       : check_size(L, 2);
  int hold = push_hold(L, NULL, job.buffers, 1);
  dc_status_t st = dclua_wait(L, run_sum, &job);
  lua_closeslot(L, hold);
  if (st != DC_OK) dclua_raise_with(L, st, "op", job.name);
  lua_pushnumber(L, (lua_Number)job.sum);
  return 1;
}

// [-(0|1), +1, e]  dc.matmul_backend([dev]) -> "openblas" or "kernel"
static int l_matmul_backend(lua_State* L) {
  lua_pushstring(L, dc_builtin_matmul_backend(dclua_check_device(L, 1, true)));
  return 1;
}

//===-- Registration ----------------------------------------------------===//

static void open_program(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", program_index}, {"__len", program_len},
      {"__tostring", program_tostring}, {"__gc", program_close},
      {"__close", program_close}, {NULL, NULL}};
  static const luaL_Reg methods[] = {{"kernel", program_kernel},
                                     {"kernels", program_kernels},
                                     {"close", program_close},
                                     {NULL, NULL}};
  dclua_class_new(L, DCLUA_PROGRAM, meta, methods);
}

static void open_kernel_class(lua_State* L) {
  static const luaL_Reg meta[] = {
      {"__index", kernel_index}, {"__call", kernel_dispatch},
      {"__len", kernel_len}, {"__tostring", kernel_tostring},
      {"__gc", kernel_close}, {"__close", kernel_close}, {NULL, NULL}};
  static const luaL_Reg methods[] = {
      {"info", kernel_info}, {"arg_index", kernel_arg_index},
      {"dispatch", kernel_dispatch},
      {"tuned_group_size", kernel_tuned_group_size},
      {"close", kernel_close}, {NULL, NULL}};
  dclua_class_new(L, DCLUA_KERNEL, meta, methods);
}

static void open_helpers(lua_State* L) {
  static const luaL_Reg local_meta[] = {{"__index", localmem_index},
                                        {"__tostring", localmem_tostring},
                                        {NULL, NULL}};
  static const luaL_Reg hold_meta[] = {{"__gc", hold_release},
                                       {"__close", hold_release},
                                       {NULL, NULL}};
  dclua_class_new(L, DCLUA_LOCAL, local_meta, NULL);
  dclua_class_new(L, HOLD_MT, hold_meta, NULL);
}

void dclua_open_kernel(lua_State* L) {
  static const luaL_Reg device_methods[] = {
      {"compile", device_compile}, {"compile_file", device_compile_file},
      {"builtin", device_builtin}, {NULL, NULL}};
  static const luaL_Reg funcs[] = {
      {"compile", l_compile}, {"compile_file", l_compile_file},
      {"localmem", l_localmem}, {"matmul", l_matmul}, {"sum", l_sum},
      {"matmul_backend", l_matmul_backend}, {NULL, NULL}};
  open_program(L);
  open_kernel_class(L);
  open_helpers(L);
  dclua_add_methods(L, DCLUA_DEVICE, device_methods);
  dclua_set_funcs(L, funcs);
}

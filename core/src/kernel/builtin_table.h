// builtin_table.h: every built-in function and constant of the kernel
// language, with each of its overloads, and their resolution.
//
// The semantic analysis asks this table about every identifier that is not
// declared in the program. A call of a built-in resolves here against the
// signatures OpenCL C 1.2 lists (section 6.12) and the engine's own
// additions, so a misused built-in is an error at the user's line, and the
// resolved overload tells the code generators the exact parameter and
// result types.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_BUILTIN_TABLE_H_
#define DC_KERNEL_BUILTIN_TABLE_H_

#include "tree.h"

// What kind of built-in an entry is; code generators and analyses use it.
typedef enum dc__builtin_class_e {
  DC_BUILTIN_CONSTANT,    // M_PI_F, INFINITY, CLK_LOCAL_MEM_FENCE, ...
  DC_BUILTIN_WORK_ITEM,   // get_global_id, get_local_size, ...
  DC_BUILTIN_MATH,        // math, common, integer, geometric, relational
  DC_BUILTIN_CONVERT,     // convert_<type>[_sat][_<rounding>]
  DC_BUILTIN_REINTERPRET, // as_<type>
  DC_BUILTIN_VLOAD,       // vloadN, vstoreN
  DC_BUILTIN_SYNC,        // barrier, work_group_barrier, mem_fence, ...,
                          // dc_grid_sync
  DC_BUILTIN_ATOMIC,      // atomic_* and atom_*
  DC_BUILTIN_ASYNC,       // async_work_group_copy, ..._strided_copy,
                          // wait_group_events, prefetch
  DC_BUILTIN_SHUFFLE,     // shuffle, shuffle2
} dc__builtin_class_t;

// async_work_group_strided_copy has five.
#define DC_BUILTIN_MAX_PARAMS 5

// One resolved overload of a built-in (or a constant). Owned by the
// compile's arena or static; never freed by the caller.
struct dc__builtin_t {
  const char* name;             // as OpenCL C spells it: "mad", "vload4"
  // The name the preludes implement this overload under, when it differs
  // from |name| (NULL otherwise): what code generators emit.
  const char* spelling;
  dc__builtin_class_t klass;
  const dc__ty_t* result;       // the call's type (a constant's type)
  const dc__ty_t* params[DC_BUILTIN_MAX_PARAMS];
  uint32_t param_count;
  // Bit i set: argument i is a pointer the built-in writes through
  // (vstoreN's, atomics', fract's second, async copies' destination).
  uint32_t writes_through;
  // CONSTANT: its value; |f| for float and double constants, else |i|.
  union {
    int64_t i;
    double f;
  } value;
};

// True if |name| (|length| bytes, not NUL-terminated) names a built-in
// function or a built-in constant; *out_is_constant (if not NULL) says
// which. Thread-safe; the table is static.
DC_INTERNAL bool dc__builtin_known(const char* name, size_t length,
                                   bool* out_is_constant);

// The built-in constant |name|, typed, or NULL if there is none.
DC_INTERNAL const dc__builtin_t* dc__builtin_constant(dc__types_t* types,
                                                      dc__arena_t* arena,
                                                      const char* name,
                                                      size_t length);

// Resolves a call of the built-in function |name| with |args| (typed, not
// converted). On success returns the chosen overload: the caller converts
// argument i to params[i]. On failure returns NULL and writes into |why|
// (NUL-terminated) a message that says what was wrong, naming the
// built-in, the argument types given and, briefly, what it accepts:
// "no overload of 'mul_hi' takes (int, __global int*); it takes two
// integer scalars or vectors of one type".
DC_INTERNAL const dc__builtin_t* dc__builtin_resolve(
    dc__types_t* types, dc__arena_t* arena, const char* name, size_t length,
    dc__expr_t* const* args, uint32_t arg_count, char* why, size_t why_size);

#endif  // DC_KERNEL_BUILTIN_TABLE_H_

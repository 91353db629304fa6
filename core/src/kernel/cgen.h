// cgen.h: the code generator of kernel programs, shared by the devices
// that compile C-like source: the CPU device (C for the system compiler,
// after lower_c_prelude.h) and the CUDA device (C++ for NVRTC, after
// lower_cuda_prelude.h).
//
// It walks the typed tree (tree.h) and writes what the tree says, never
// the user's text: names are spelled from declarations (with
// DC_USER_PREFIX), numbers from their values, types from the interned
// types, and every implicit conversion the analysis made explicit is
// written as a cast. A back end differs from another only through the
// hooks below (how it spells vector types and the work-item record, which
// variables it keeps elsewhere, how its barriers, returns and __local
// declarations run) and through what it wraps around functions: the CPU
// back end splits kernels at barriers into loops over work-items
// (lower_c.c), the CUDA back end keeps their structure.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_CGEN_H_
#define DC_KERNEL_CGEN_H_

#include "ast.h"
#include "diag.h"
#include "strbuf.h"
#include "tree.h"
#include "types.h"

typedef struct dc__cgen_t dc__cgen_t;

typedef struct dc__cgen_hooks_t {
  // The dialect: false for C (gcc), true for C++ (NVRTC).
  bool cxx;
  // Vector types are spelled <prefix><element><width>: "float4", "dc_float4".
  const char* vector_prefix;
  // A helper function's first parameter, the work-item record "_wi".
  const char* wi_param;
  // What a helper function's definition starts with ("static inline ...").
  const char* helper_prefix;
  // What its body starts with, after the '{' (may be "").
  const char* helper_body_prefix;
  // What a program-scope __constant variable's definition starts with.
  const char* global_prefix;
  // Writes a reference to variable |d| when the back end keeps it
  // somewhere of its own (a per-work-item slot, group-local memory) and
  // returns true; false to spell it by its name.
  bool (*name)(dc__cgen_t* g, const dc__decl_t* d);
  // Emits |s| the back end's own way and returns true (declarations of
  // __local variables, returns, barriers); false for the shared emitter.
  bool (*stmt)(dc__cgen_t* g, const dc__stmt_t* s);
  // Writes kernel |fn|'s entry point (the back end's own).
  void (*kernel)(dc__cgen_t* g, const dc__function_t* fn);
  // The name a built-in is called by, when it is not the table's spelling
  // (CUDA: the prelude's templates for convert_, as_, vloadN; CPU: the
  // 3-component forms, a float3 being a float4 there); NULL to keep the
  // table's. May be NULL itself.
  const char* (*builtin)(dc__cgen_t* g, const dc__builtin_t* b);
  // A function of the prelude that argument |index| of a call of |b|
  // passes through first (OpenCL: dc_nan0 for a saturating conversion of
  // a floating value), or NULL. May be NULL itself. Not applied to calls
  // with pointer arguments in checked mode.
  const char* (*builtin_arg)(dc__cgen_t* g, const dc__builtin_t* b,
                             uint32_t index);
  // Integer division and remainder go through the prelude's DC_DIV and
  // DC_MOD (no trap on a zero divisor or on INT_MIN / -1): needed where
  // those trap (x86), not on a GPU.
  bool safe_division;
  // A float divided by a floating constant c becomes the prelude's
  // dc__div_by(x, 1/c, c), which may compute the same correctly rounded
  // quotient in straight-line double arithmetic (cgen_expr.c says why),
  // without the division's branch to a slow path, across which a GPU
  // compiler does not move the loads that follow (CUDA).
  bool reciprocal_division;
  // OpenCL C (the OpenCL device; with cxx false): pointed-to types keep
  // their address spaces (__global, __local, __constant; private is
  // OpenCL's default), and vector values use OpenCL's own syntax, which
  // names every lane: (float4)(0) for a zero, v.s012 for a swizzle.
  bool opencl;
  // What a helper's body ends with, before its closing '}' (NULL: none).
  const char* helper_body_suffix;
} dc__cgen_hooks_t;

// The generator's state. A back end embeds it as the first member of its
// own emitter, so its hooks can reach the rest.
struct dc__cgen_t {
  dc__arena_t* arena;
  dc__diag_t* diag;
  const dc__program_ast_t* ast;
  const dc__cgen_hooks_t* hooks;
  dc__strbuf_t* out;
  const char* file;          // the program's name, escaped for #line
  uint32_t line;             // of the last #line written
  bool failed;
  bool checked;              // checked mode (cgen_checked.c)
  const dc__function_t* fn;  // the function being written
  bool in_kernel;
  bool static_init;          // writing a program-scope initialiser
  uint32_t loop_depth;       // loops and switches around the statement
  uint32_t temps;            // names temporaries (dc_tN)
  // Checked mode: the accesses of the kernel being written whose ranges a
  // check function tests before a chunk runs (cgen_ranges.c), and whether
  // this version of the kernel writes them unchecked.
  const dc__expr_t** prechecked;
  uint32_t prechecked_count;
  bool prechecked_all;  // the kernel itself has no other checked access
  bool skip_prechecked;
};

DC_INTERNAL void dc__cgen_init(dc__cgen_t* g, dc__arena_t* arena,
                               dc__diag_t* diag, const dc__program_ast_t* ast,
                               const dc__cgen_hooks_t* hooks,
                               dc__strbuf_t* out, const char* file);

// Reports that |at| cannot be translated (DC_ERR_COMPILE, at the user's
// line and column).
DC_INTERNAL void dc__cgen_fail(dc__cgen_t* g, const dc__token_t* at,
                               const char* message);
DC_INTERNAL void dc__cgen_puts(dc__cgen_t* g, const char* text);
DC_INTERNAL void dc__cgen_printf(dc__cgen_t* g, const char* format, ...)
    DC_PRINTF_LIKE(2, 3);
// Moves the output to |line| of the user's source with a #line directive.
DC_INTERNAL void dc__cgen_at_line(dc__cgen_t* g, uint32_t line);
// Forgets the current line: the next dc__cgen_at_line writes one.
DC_INTERNAL void dc__cgen_new_line(dc__cgen_t* g);

//===-- Types (cgen_type.c) -----------------------------------------------===//

// A declaration of |name| (NULL: none, as in a cast) with |type|, in C's
// declarator syntax: "float* dcu_p", "int dcu_a[4]", "struct dc_r1". The
// address spaces go (the C and C++ preludes work with plain pointers)
// except in OpenCL C (hooks->opencl), which writes those of pointed-to
// types; a __constant object or pointee is const. |drop| removes those
// qualifiers (DC_Q_*) from the object itself (from an array's elements):
// storage the back end writes even though the program may not. With
// DC__CGEN_POINTEE in |drop|, |type| is what a pointer written around the
// declaration points to ("T (*)"): OpenCL C writes its address space too.
#define DC__CGEN_POINTEE (1u << 8)
DC_INTERNAL const char* dc__cgen_declaration(dc__cgen_t* g,
                                             const dc__ty_t* type,
                                             const char* name,
                                             unsigned drop);
// Whether the kernel parameter |d| is a __local pointer, which the back
// ends receive as an offset into the group's local memory.
DC_INTERNAL bool dc__cgen_is_local_pointer(const dc__decl_t* d);
// The name the output gives |d|: DC_USER_PREFIX and its own name.
DC_INTERNAL const char* dc__cgen_name(dc__cgen_t* g, const dc__decl_t* d);
// Defines every struct and union of the program (each before the records
// that hold it by value), with their layout asserted.
DC_INTERNAL void dc__cgen_records(dc__cgen_t* g);

//===-- Expressions (cgen_expr.c) -----------------------------------------===//

DC_INTERNAL void dc__cgen_expr(dc__cgen_t* g, const dc__expr_t* e);
// An initialiser: as dc__cgen_expr, with braces for lists (and, where
// g->static_init is set, for vectors: constant data, no code).
DC_INTERNAL void dc__cgen_initializer(dc__cgen_t* g, const dc__expr_t* e);

// Opens and closes an expression that runs statements: a GNU statement
// expression in C, a lambda called at once in C++. |result| is its value.
DC_INTERNAL void dc__cgen_open_block(dc__cgen_t* g);
DC_INTERNAL void dc__cgen_close_block(dc__cgen_t* g, const char* result);
// |e| used as a truth value (a condition, an operand of && || !).
DC_INTERNAL void dc__cgen_condition(dc__cgen_t* g, const dc__expr_t* e);

//===-- Checked mode (cgen_checked.c) -------------------------------------===//

// Whether |t| is or holds a pointer (in its elements or members).
DC_INTERNAL bool dc__cgen_holds_pointer(const dc__ty_t* t);
// Writes |e| the way checked mode does when it differs (an access through
// a pointer, pointer arithmetic, an address, a conversion of a pointer, a
// built-in taking one) and returns true; false for the shared emitter.
DC_INTERNAL bool dc__cgen_checked_expr(dc__cgen_t* g, const dc__expr_t* e);
// Refuses what would let a checked program forge a pointer: pointers kept
// in records, and casts that let memory holding a pointer be written as
// something else.
DC_INTERNAL void dc__cgen_checked_program(dc__cgen_t* g);
// The loop poll a checked function writes at the top of every loop body
// and label (DC_POLL).
DC_INTERNAL void dc__cgen_poll(dc__cgen_t* g, const dc__token_t* at);

//===-- Index ranges (cgen_ranges.c) -------------------------------------===//

// Finds the accesses of checked kernel |fn| whose index ranges over a
// chunk of work-groups can be computed before the chunk runs, records them
// in g->prechecked, and appends to |conditions| the statements that clear
// `int dc_ok` unless each such range lies in its array or buffer. They
// read the launch (DC_WI_FROM's _ls0 ...), the chunk's group bounds
// (DC_GROUP_RANGE's dc_glo, dc_ghi), dc_len and the kernel's scalar
// parameters by their names. Returns whether there is any.
DC_INTERNAL bool dc__cgen_plan_prechecks(dc__cgen_t* g,
                                         const dc__function_t* fn,
                                         dc__strbuf_t* conditions);
// Whether access |e| is written unchecked in this version of the kernel
// (g->skip_prechecked and |e| planned).
DC_INTERNAL bool dc__cgen_prechecked(const dc__cgen_t* g,
                                     const dc__expr_t* e);
// Whether loop |s| of the function being written surely ends within a few
// hundred iterations and holds no loop: it needs no poll.
DC_INTERNAL bool dc__cgen_short_loop(const dc__cgen_t* g,
                                     const dc__stmt_t* s);

//===-- Statements and functions (cgen_stmt.c) ----------------------------===//

DC_INTERNAL void dc__cgen_stmt(dc__cgen_t* g, const dc__stmt_t* s);
// `T name = init;` for the variable |d|, spelled |name| (NULL: its own).
DC_INTERNAL void dc__cgen_variable(dc__cgen_t* g, const dc__decl_t* d,
                                   const char* name);
// The whole program: its records, its helpers' prototypes, then its
// __constant variables, helpers and kernels (hooks->kernel) in the order
// they were written.
DC_INTERNAL void dc__cgen_program(dc__cgen_t* g);
// A helper function's definition (or prototype only).
DC_INTERNAL void dc__cgen_helper(dc__cgen_t* g, const dc__function_t* fn,
                                 bool prototype);
// The program-scope __constant variable |d|.
DC_INTERNAL void dc__cgen_global(dc__cgen_t* g, const dc__decl_t* d);

#endif  // DC_KERNEL_CGEN_H_

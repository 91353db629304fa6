// kernel_limits.h: the limits of the kernel language front end, in one
// place.
//
// Kernel source comes from sandboxed scripts, so no input may make the
// front end run out of memory or time, or overflow its stack. Each limit
// is reported as an error that names it and its value, at the place in
// the user's source that crossed it; docs/kernel-language.md lists them.
// The values are generous for real kernels (a kernel of a few thousand
// lines uses a few percent of each).
//
// Named kernel_limits.h, not limits.h: core/src/kernel is on the include
// path, and a limits.h there would hide the C library's <limits.h>.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_LIMITS_H_
#define DC_KERNEL_LIMITS_H_

//===-- Source and build options ----------------------------------------===//

// Bytes of one program's source (4 MiB).
#define DC_LIMIT_SOURCE_BYTES (4u << 20)
// Tokens of the source as written (newlines aside), and tokens of the
// translation unit after preprocessing: each bounds memory by itself.
#define DC_LIMIT_TOKENS 1000000u
// Bytes of the whole build option string, and of one -D option's
// NAME=VALUE.
#define DC_LIMIT_OPTIONS_BYTES 65536u
#define DC_LIMIT_DEFINE_BYTES 4096u

//===-- Preprocessor ----------------------------------------------------===//

// Macros defined at once (predefined ones, -D options and #define).
#define DC_LIMIT_MACROS 16384u
// Parameters of one function-like macro (C requires at least 127).
#define DC_LIMIT_MACRO_PARAMS 127u
// Macro expansions nested inside each other, an argument being expanded
// counting as one level; it also bounds the preprocessor's recursion.
#define DC_LIMIT_MACRO_DEPTH 256u
// Tokens that macro expansion may store in all, intermediate copies
// included (each argument's tokens, its expansion, each replacement
// list); the text that # and ## make counts one token per 32 bytes. A
// token takes 32 bytes, so this caps expansion at about 64 MiB of memory.
#define DC_LIMIT_MACRO_EXPANSION_TOKENS 2000000u
// #if, #ifdef and #ifndef nested inside each other.
#define DC_LIMIT_IF_NESTING 64u
// Nesting of parentheses, ?: and unary operators in one #if expression
// (its evaluator recurses once per level).
#define DC_LIMIT_IF_EXPR_NESTING 64u

//===-- Parser and semantic analysis -----------------------------------===//

// Nesting of statements, blocks, parentheses, calls and unary operators
// (each level recurses in the parser and the code generators).
#define DC_LIMIT_NESTING 256
// Bytes of private memory of a kernel with the helpers it calls: each
// function's private variables (all scopes together) and parameters,
// summed along the kernel's worst chain of calls (recursion is refused,
// so every chain ends), and each function's alone. A work-item's private
// memory is a stack: on a CPU fiber, 64 KiB without a guard page, so a
// deeper one would overwrite the engine's memory beyond it. A quarter of
// that leaves the rest to what the C compiler adds: temporaries, spilled
// registers, call frames and the prelude's own functions.
#define DC_LIMIT_PRIVATE_BYTES (16u << 10)
// What each level of a chain of calls counts on top of its variables: a
// return address, saved registers and alignment, so that a chain of
// helpers without variables is bounded too (to 256 levels).
#define DC_LIMIT_CALL_FRAME_BYTES 64u
// Bytes of one type (an array, a struct): sizes are 32-bit in the
// analysis and the code generators, and no buffer or local memory holds
// more.
#define DC_LIMIT_OBJECT_BYTES (1u << 30)
// Bytes of a kernel's arguments, each value (a struct passed by value
// too) at its size and each pointer 8: what every device can take in one
// launch (CUDA's parameter space is 4 KiB, which also holds the launch
// record and, when bounds checking, a length per argument).
#define DC_LIMIT_KERNEL_ARG_BYTES 2048u
// Slots of one braced initialiser, so a designator such as [100000000]
// cannot make the compiler allocate gigabytes.
#define DC_LIMIT_INIT_SLOTS (1u << 20)

//===-- Diagnostics -----------------------------------------------------===//

// Errors the lexer and preprocessor report before they stop, and warnings
// they report before they fall silent: a hostile source must not fill the
// build log with millions of lines.
#define DC_LIMIT_ERRORS 100u
#define DC_LIMIT_WARNINGS 100u

#endif  // DC_KERNEL_LIMITS_H_

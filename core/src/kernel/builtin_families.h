// builtin_families.h: the table of the kernel language's built-in
// functions (builtin_families.c), one family of overloads per line, as
// builtin_table.c reads it.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_BUILTIN_FAMILIES_H_
#define DC_KERNEL_BUILTIN_FAMILIES_H_

#include <stddef.h>
#include <stdint.h>

#include "builtin_table.h"

//===-- Element types and widths ------------------------------------------===//

// Bit sets of element types (bit i: dc__scalar_t i) and of widths (bit w:
// width w, 1 being the scalar).
#define EL(s) (1u << DC_SCALAR_##s)
#define EL_FLOAT EL(FLOAT)
#define EL_FLOATING (EL(FLOAT) | EL(DOUBLE))
#define EL_SIGNED (EL(CHAR) | EL(SHORT) | EL(INT) | EL(LONG))
#define EL_INT32 (EL(INT) | EL(UINT))
#define EL_NARROW (EL(CHAR) | EL(UCHAR) | EL(SHORT) | EL(USHORT) | EL_INT32)
#define EL_ATOMIC (EL_INT32 | EL(LONG) | EL(ULONG))
#define EL_XCHG (EL_ATOMIC | EL_FLOATING)
#define EL_DATA (EL_NARROW | EL(LONG) | EL(ULONG) | EL_FLOATING)
// size_t and ptrdiff_t have no vectors; as scalars they stand beside
// ulong and long, so min(get_global_id(0), n) stays a size_t.
#define EL_INTEGER                                                           \
  (EL_NARROW | EL(LONG) | EL(ULONG) | EL(SIZE_T) | EL(PTRDIFF_T))
#define EL_ANY (EL_INTEGER | EL_FLOATING)

#define WD(w) (1u << (w))
#define W_ONE WD(1)
#define W_ALL (WD(1) | WD(2) | WD(3) | WD(4) | WD(8) | WD(16))
#define W_CROSS (WD(3) | WD(4))

// Pattern language. A pattern is the result then each parameter, separated
// by single spaces. Each is a value token or a pointer token.
//
// Value tokens. G is the gentype: a scalar or vector whose element is one
// of the family's |elements| and whose width is one of its |widths|; every
// other letter derives from G's element e and width w:
//   G  e, width w             S  e (the scalar of G, OpenCL's sgentype)
//   V  e, width N of vloadN   U  the unsigned integer as wide as e, width w
//   K  the signed integer as wide as e, width w
//   R  a relational result: int for a scalar G, else K
//   I  int, width w           W  the integer twice as wide as e (upsample)
// and the fixed types void, int, uint, size_t, event_t.
// Pointer tokens: [c|v]<value token>*<spaces>: a pointer to the value
// token's type, its pointee const (c) or volatile (v), in one of the
// address spaces listed: g __global, c __constant, l __local, p __private.
// "G G S" is fmin(floatn, float); "V size_t cS*gclp" is vloadN.
typedef struct dc__builtin_family_t {
  const char* name;
  const char* pattern;
  const char* accepts;  // for messages: "it takes <accepts>"
  uint32_t elements;    // EL_*: the gentype's elements (0: no gentype)
  uint32_t widths;      // W_*: the gentype's widths
  uint8_t klass;        // dc__builtin_class_t
  uint8_t n;            // vloadN, vstoreN: N
  const char* spelling; // the preludes' name for it, if not |name|
} dc__builtin_family_t;

// The families, in the order they were written (a name's lines are tried
// in that order), and how many there are (at most DC_BUILTIN_FAMILY_MAX).
#define DC_BUILTIN_FAMILY_MAX 1024
DC_INTERNAL const dc__builtin_family_t dc__builtin_families[];
DC_INTERNAL const size_t dc__builtin_family_count;

#endif  // DC_KERNEL_BUILTIN_FAMILIES_H_

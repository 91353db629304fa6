// types.h: the types of OpenCL C as the semantic analysis sees them.
//
// Every type is interned: two types are the same type exactly when their
// pointers are equal, qualifiers and address space included. Types live in
// the compile's arena and die with it. Layout (size and alignment) follows
// OpenCL C 1.2 section 6.1.5 on an LP64 host: a 3-component vector takes
// the room of a 4-component one, and a struct lays its fields out as a C
// compiler for the same target does, so the host sees the same bytes.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_TYPES_H_
#define DC_KERNEL_TYPES_H_

#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"  // dc__scalar_t, dc_address_space_t

typedef enum dc__ty_kind_e {
  DC_TY_VOID,
  DC_TY_SCALAR,   // bool, the integer types, float, double, size_t, ...
  DC_TY_VECTOR,   // |scalar| x |width| (2, 3, 4, 8 or 16)
  DC_TY_POINTER,  // to |base|; the pointee's address space is base->space
  DC_TY_ARRAY,    // |length| x |base| (length 0: unknown, a parameter's)
  DC_TY_RECORD,   // struct or union: |record|
  DC_TY_ENUM,     // |enumeration|; its values are ints
  DC_TY_EVENT,    // event_t, the handle of an async copy
} dc__ty_kind_t;

// Qualifiers of a type, a bit set.
enum {
  DC_Q_CONST = 1u << 0,
  DC_Q_VOLATILE = 1u << 1,
  DC_Q_RESTRICT = 1u << 2,
};

typedef struct dc__ty_t dc__ty_t;

typedef struct dc__field_t {
  const char* name;
  const dc__ty_t* type;
  uint32_t offset;  // bytes from the start of the record
  uint32_t align;   // its aligned(N) attribute, 0 if none
  uint32_t line;    // where it was declared
  uint32_t col;
} dc__field_t;

typedef struct dc__record_t {
  const char* tag;        // "" for an anonymous record
  const char* alias;      // the first typedef naming an anonymous record,
                          // for reflection; NULL if none
  uint32_t id;            // unique in the program: names it in the output
  bool is_union;
  bool is_complete;       // its body has been seen
  bool is_packed;         // __attribute__((packed))
  uint32_t align_attr;    // __attribute__((aligned(N))), 0 if none
  dc__field_t* fields;
  uint32_t field_count;
  uint32_t size;          // bytes, padding included
  uint32_t align;
  uint32_t line;          // where it was declared
  uint32_t col;
} dc__record_t;

typedef struct dc__enum_t {
  const char* tag;
  const char* alias;      // as for records
  uint32_t id;
  bool is_complete;
} dc__enum_t;

struct dc__ty_t {
  dc__ty_kind_t kind;
  dc__scalar_t scalar;        // SCALAR, and the element of a VECTOR
  uint8_t width;              // VECTOR: 2, 3, 4, 8 or 16; else 1
  uint8_t quals;              // DC_Q_* of this type
  dc_address_space_t space;   // where an object of this type lives
  const dc__ty_t* base;       // POINTER: the pointee; ARRAY: the element
  uint32_t length;            // ARRAY
  dc__record_t* record;       // RECORD
  dc__enum_t* enumeration;    // ENUM
  const dc__ty_t* unqualified;  // this type without quals and space
};

// The interning table of one compile.
typedef struct dc__types_t dc__types_t;

DC_INTERNAL dc__types_t* dc__types_new(dc__arena_t* arena);

// Constructors. Each returns the one interned type (NULL only when the
// arena is out of memory). |width| 1 gives the scalar.
DC_INTERNAL const dc__ty_t* dc__ty_void(dc__types_t* types);
DC_INTERNAL const dc__ty_t* dc__ty_scalar(dc__types_t* types,
                                          dc__scalar_t scalar);
DC_INTERNAL const dc__ty_t* dc__ty_vector(dc__types_t* types,
                                          dc__scalar_t scalar,
                                          unsigned width);
DC_INTERNAL const dc__ty_t* dc__ty_pointer(dc__types_t* types,
                                           const dc__ty_t* pointee);
DC_INTERNAL const dc__ty_t* dc__ty_array(dc__types_t* types,
                                         const dc__ty_t* element,
                                         uint32_t length);
DC_INTERNAL const dc__ty_t* dc__ty_record(dc__types_t* types,
                                          dc__record_t* record);
DC_INTERNAL const dc__ty_t* dc__ty_enum(dc__types_t* types,
                                        dc__enum_t* enumeration);
DC_INTERNAL const dc__ty_t* dc__ty_event(dc__types_t* types);
// |type| with qualifiers |quals| (replacing its own) and address space
// |space|. An array's qualifiers and space apply to its elements too.
DC_INTERNAL const dc__ty_t* dc__ty_qualified(dc__types_t* types,
                                             const dc__ty_t* type,
                                             unsigned quals,
                                             dc_address_space_t space);
// New, empty records and enums, owned by |types|.
DC_INTERNAL dc__record_t* dc__record_new(dc__types_t* types, const char* tag,
                                         bool is_union);
DC_INTERNAL dc__enum_t* dc__enum_new(dc__types_t* types, const char* tag);
// Every record of the compile, in the order they were declared.
DC_INTERNAL dc__record_t* const* dc__types_records(const dc__types_t* types,
                                                   uint32_t* count);
// Lays out |record|'s fields (offsets, size, alignment) once they are all
// known, and marks it complete.
// The alignment |field| takes in |record|: its type's (1 when packed),
// raised by its own aligned(N).
DC_INTERNAL uint32_t dc__field_align(const dc__record_t* record,
                                     const dc__field_t* field);
DC_INTERNAL void dc__record_layout(dc__record_t* record);
// The field named |name| (NUL-terminated), or NULL.
DC_INTERNAL const dc__field_t* dc__record_field(const dc__record_t* record,
                                                const char* name,
                                                uint32_t length);

// The first member of record type |type|, at any depth, that a kernel
// cannot receive by value (OpenCL C 6.9): a pointer, bool, size_t,
// ptrdiff_t (intptr_t, uintptr_t) or event_t, alone or in an array. NULL
// if none; else its path ("p", "inner.flag", "items[0].n", in |arena|),
// with its type in |*out_type|.
DC_INTERNAL const char* dc__record_arg_flaw(dc__arena_t* arena,
                                            const dc__ty_t* type,
                                            const dc__ty_t** out_type);

// Predicates. Each looks through qualifiers.
DC_INTERNAL bool dc__ty_is_integer(const dc__ty_t* t);    // bool, enums too
DC_INTERNAL bool dc__ty_is_floating(const dc__ty_t* t);   // scalar float/dbl
DC_INTERNAL bool dc__ty_is_arithmetic(const dc__ty_t* t); // scalar number
DC_INTERNAL bool dc__ty_is_scalar(const dc__ty_t* t);     // arithmetic or ptr
DC_INTERNAL bool dc__ty_is_signed(const dc__ty_t* t);     // of an element
DC_INTERNAL bool dc__ty_same_unqualified(const dc__ty_t* a,
                                         const dc__ty_t* b);
// The element scalar of a scalar, vector or enum type (DC_SCALAR_INT for
// an enum).
DC_INTERNAL dc__scalar_t dc__ty_element(const dc__ty_t* t);

// Size and alignment in bytes on the host and every device; 0 for void,
// functions and incomplete types.
DC_INTERNAL uint32_t dc__ty_size(const dc__ty_t* t);
DC_INTERNAL uint32_t dc__ty_align(const dc__ty_t* t);
DC_INTERNAL uint32_t dc__scalar_size(dc__scalar_t scalar);

// "int", "float", "size_t", ...: the element type's name.
DC_INTERNAL const char* dc__scalar_name(dc__scalar_t scalar);

// Spells |type| as OpenCL C does, for messages: "__global const float*",
// "int4", "struct pair", "float[16]".
DC_INTERNAL const char* dc__ty_name(dc__arena_t* arena, const dc__ty_t* type);

#endif  // DC_KERNEL_TYPES_H_

// tree.h: the typed tree of a kernel program.
//
// The semantic analysis turns every expression into a tree in which each
// identifier is resolved to its declaration (a dc__decl_t of the program,
// or an entry of the built-in table) and each node carries its OpenCL C
// type. Implicit conversions are nodes of their own (DC_EXPR_CAST with
// |implicit| set), so a code generator never has to know C's or OpenCL's
// conversion rules: it spells what the tree says. Nothing of the user's
// source text reaches a code generator except through this tree: names are
// emitted from declarations (mangled), numbers from their values.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_TREE_H_
#define DC_KERNEL_TREE_H_

#include "types.h"

// Code generators spell every name the program declares with this prefix:
// no engine, prelude or C library name starts with it, so a kernel's names
// can never reach those.
#define DC_USER_PREFIX "dcu_"

// What an identifier token names, when the program chose the name (these
// are the tokens a code generator spells with DC_USER_PREFIX).
typedef enum dc__name_kind_e {
  DC_NAME_NONE = 0,  // a keyword, a type or built-in name, not a name
  DC_NAME_DECL,      // a declaration (variable, function, typedef, ...)
  DC_NAME_FIELD,     // a member of a struct or union
  DC_NAME_TAG,       // the tag of a struct, union or enum
  DC_NAME_LABEL,     // a goto label
} dc__name_kind_t;

typedef struct dc__expr_t dc__expr_t;
typedef struct dc__decl_t dc__decl_t;
typedef struct dc__builtin_t dc__builtin_t;  // builtin_table.h

typedef enum dc__decl_kind_e {
  DC_DECL_VAR,         // a variable in a function (private or __local)
  DC_DECL_PARAM,       // a function's parameter
  DC_DECL_GLOBAL,      // a program-scope __constant variable
  DC_DECL_FUNCTION,    // a kernel or helper function
  DC_DECL_TYPEDEF,
  DC_DECL_ENUM_CONST,  // an enumerator: |value|
} dc__decl_kind_t;

// A declaration of the program: each has a number, unique in the program,
// that the code generators use to name it (so a user's name can never be a
// name of the C library, the prelude or the engine).
struct dc__decl_t {
  dc__decl_kind_t kind;
  uint32_t id;
  const char* name;          // as written, for messages and reflection
  const dc__token_t* token;  // where it was declared
  const dc__ty_t* type;      // FUNCTION: the return type
  dc__expr_t* init;          // VAR, GLOBAL: the initialiser, or NULL
  int64_t value;             // ENUM_CONST
  uint32_t function;         // FUNCTION: index in dc__program_ast_t
  dc__decl_t** params;       // FUNCTION: its parameters (PARAM decls)
  uint32_t param_count;
  bool is_kernel;            // FUNCTION
  bool is_defined;           // FUNCTION: its body has been seen
  uint32_t param_index;      // PARAM
  uint32_t align;            // VAR, GLOBAL: its aligned(N), 0 if none
  bool is_used;              // referred to at least once
  bool is_assigned;          // stored to, or its address taken
};

typedef enum dc__expr_kind_e {
  DC_EXPR_INT,        // an integer constant: |value.i|
  DC_EXPR_FLOAT,      // a floating constant: |value.f|
  DC_EXPR_NAME,       // a variable, parameter or constant: |decl|
  DC_EXPR_CONSTANT,   // a built-in constant (M_PI_F, CLK_LOCAL_MEM_FENCE,
                      // INFINITY, ...): |builtin|
  DC_EXPR_CALL,       // a helper function: |decl|, |args|
  DC_EXPR_BUILTIN,    // a built-in function, overload resolved: |builtin|,
                      // |args| already converted to its parameter types
  DC_EXPR_UNARY,      // |op| |lhs|: "-", "+", "!", "~", "*", "&", "++x",
                      // "--x", "x++", "x--"
  DC_EXPR_BINARY,     // |lhs| |op| |rhs|: arithmetic, shifts, bitwise,
                      // comparisons (vector: -1/0 masks), "&&", "||", ","
  DC_EXPR_ASSIGN,     // |lhs| |op| |rhs|: "=", "+=", ...; for "op=" the
                      // |rhs| is converted to the type the operation is
                      // done in (for shifts, |lhs|'s promoted type), and
                      // the result converts back to |lhs|'s type
  DC_EXPR_COND,       // |cond| ? |lhs| : |rhs|; a vector |cond| selects
                      // component by component
  DC_EXPR_CAST,       // |lhs| converted to |type| (see dc__conv_t)
  DC_EXPR_INDEX,      // |lhs|[|rhs|]: a pointer or an array
  DC_EXPR_MEMBER,     // |lhs|.field or |lhs|->field (|arrow|): |field|
  DC_EXPR_SWIZZLE,    // |lhs|.xyzw: |lanes|[0..|lane_count|)
  DC_EXPR_VECTOR,     // (floatN)(parts...): |args|, scalars and vectors
                      // whose lanes add up to N, each already converted
                      // to the element type (or a vector of it)
  DC_EXPR_INIT_LIST,  // { ... } for an array or a record: |args| in
                      // slot order, each converted to its slot's type; a
                      // NULL arg, and for an array every slot at or past
                      // |arg_count|, is zero-initialised; a struct has one
                      // slot per member; a union has args[0] for |field|.
                      // A braced vector initialiser is a DC_EXPR_VECTOR,
                      // and {} an INIT_LIST without args.
  DC_EXPR_SIZEOF,     // sizeof or vec_step (|op|), folded into |value.i|
                      // (no operand kept; the generators emit it as an
                      // integer constant)
} dc__expr_kind_t;

// What a DC_EXPR_CAST does.
typedef enum dc__conv_e {
  DC_CONV_NONE,          // only qualifiers change (also: a value read
                         // from an lvalue)
  DC_CONV_ARITH,         // a scalar number to another scalar number
  DC_CONV_TO_BOOL,       // a scalar or pointer to bool (!= 0)
  DC_CONV_SPLAT,         // a scalar to a vector: converted, then repeated
  DC_CONV_VECTOR,        // a vector to one of another element type: only
                         // where OpenCL C allows it (never implicitly)
  DC_CONV_ARRAY_DECAY,   // an array to a pointer to its first element
  DC_CONV_POINTER,       // a pointer to another pointer type, same space
  DC_CONV_NULL,          // the integer constant 0 to a null pointer
  DC_CONV_POINTER_TO_INT,  // explicit only; refused in checked mode
  DC_CONV_VOID,          // (void)x: the value is discarded
} dc__conv_t;

struct dc__expr_t {
  dc__expr_kind_t kind;
  const dc__ty_t* type;       // the OpenCL C type of the value
  const dc__token_t* token;   // where it starts, for messages
  bool is_lvalue;
  bool is_constant;           // an integer constant expression (integer
                              // built-in constants too): |value.i|
  union {
    int64_t i;                // DC_EXPR_INT (uint64_t as the bits), and any
                              // folded integer constant expression
    double f;                 // DC_EXPR_FLOAT
  } value;
  const char* op;             // UNARY, BINARY, ASSIGN: the operator's text
  dc__expr_t* lhs;
  dc__expr_t* rhs;
  dc__expr_t* cond;           // COND
  dc__expr_t** args;          // CALL, BUILTIN, VECTOR, INIT_LIST
  uint32_t arg_count;
  dc__decl_t* decl;           // NAME, CALL
  const dc__builtin_t* builtin;  // CONSTANT, BUILTIN
  const dc__field_t* field;   // MEMBER, INIT_LIST of a union
  bool arrow;                 // MEMBER: through a pointer
  dc__conv_t conv;            // CAST
  bool implicit;              // CAST: inserted by the analysis
  uint8_t lanes[16];          // SWIZZLE
  uint8_t lane_count;
};

#endif  // DC_KERNEL_TREE_H_

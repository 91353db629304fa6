// ast.h: the parsed form of a kernel program.
//
// Statements form a tree; declarations and expressions are typed
// (tree.h: every name resolved, every expression typed, implicit
// conversions explicit), and the code generators write from them alone
// (cgen.h). Each statement also keeps the token ranges it was read from,
// for messages and the analyses that still read tokens.
// SPDX-License-Identifier: MIT
#ifndef DC_KERNEL_AST_H_
#define DC_KERNEL_AST_H_

#include "dc/kernel.h"
#include "lex.h"

// A range [begin, end) of the program's tokens.
typedef struct dc__range_t {
  uint32_t begin;
  uint32_t end;
} dc__range_t;

// Element types of the language. CHAR..DOUBLE have vector forms.
typedef enum dc__scalar_e {
  DC_SCALAR_VOID,
  DC_SCALAR_BOOL,
  DC_SCALAR_CHAR,
  DC_SCALAR_UCHAR,
  DC_SCALAR_SHORT,
  DC_SCALAR_USHORT,
  DC_SCALAR_INT,
  DC_SCALAR_UINT,
  DC_SCALAR_LONG,
  DC_SCALAR_ULONG,
  DC_SCALAR_FLOAT,
  DC_SCALAR_DOUBLE,
  DC_SCALAR_SIZE_T,     // also uintptr_t
  DC_SCALAR_PTRDIFF_T,  // also intptr_t
} dc__scalar_t;

// A type as the language spells it: an element type, a vector width and
// pointer levels (with the address space of what they point to).
typedef struct dc__type_t {
  dc__scalar_t scalar;
  uint8_t vector_width;     // 1 for scalars; 2, 3, 4, 8 or 16
  uint8_t pointer_depth;    // at most 1 in kernel signatures
  dc_address_space_t address_space;  // of the pointee, or of the variable
  bool is_const;            // the pointee (or the value) is const
  bool is_volatile;
  bool is_restrict;
} dc__type_t;

typedef enum dc__stmt_kind_e {
  DC_STMT_BLOCK,
  DC_STMT_DECL,      // declaration of one or more variables
  DC_STMT_EXPR,
  DC_STMT_BARRIER,   // barrier(flags); / work_group_barrier(flags);
  DC_STMT_GRID_SYNC, // dc_grid_sync(); a barrier of the whole grid
  DC_STMT_IF,
  DC_STMT_FOR,
  DC_STMT_WHILE,
  DC_STMT_DO,
  DC_STMT_SWITCH,
  DC_STMT_CASE,      // case X: / default:, inside a switch body
  DC_STMT_RETURN,
  DC_STMT_BREAK,
  DC_STMT_CONTINUE,
  DC_STMT_GOTO,
  DC_STMT_LABEL,
  DC_STMT_EMPTY,
} dc__stmt_kind_t;

// One declarator of a declaration: `float a[4] = {...}` has the name `a`,
// the declarator tokens `a[4]` and the initializer `{...}`.
typedef struct dc__decl_t dc__decl_t;
typedef struct dc__expr_t dc__expr_t;

typedef struct dc__declarator_t {
  uint32_t name;              // token index of the name
  dc__decl_t* decl;           // what it declares (tree.h)
  dc__range_t declarator;     // pointer stars, name, array suffixes
  dc__range_t initializer;    // empty if none
} dc__declarator_t;

typedef struct dc__stmt_t dc__stmt_t;

// #pragma unroll without a count, and #pragma nounroll.
enum { DC_UNROLL_FULL = -1, DC_UNROLL_NEVER = -2 };
struct dc__stmt_t {
  dc__stmt_kind_t kind;
  uint32_t token;             // first token, for messages and #line
  bool has_barrier;           // a barrier (or grid sync) is reached inside
                              // this statement
  // DECL: specifiers (types and qualifiers), declarators.
  dc__range_t specifiers;
  dc_address_space_t address_space;  // DECL: __local / __private / ...
  dc__declarator_t* declarators;
  uint32_t declarator_count;
  // EXPR, RETURN, BARRIER, CASE: the expression; IF, WHILE, DO, SWITCH: the
  // condition; FOR: the condition; GOTO, LABEL: the label name.
  dc__range_t expr;
  dc__range_t step;           // FOR
  dc__expr_t* value;          // |expr| typed (NULL where |expr| is empty;
                              // a condition is converted to a scalar test)
  dc__expr_t* step_value;     // |step| typed
  int32_t unroll;             // FOR, WHILE, DO: what #pragma unroll asked:
                              // 0 nothing, a count, or one of DC_UNROLL_*
  dc__stmt_t* init;           // FOR: DECL, EXPR or NULL
  dc__stmt_t* body;           // FOR, WHILE, DO, SWITCH, IF (then), LABEL
  dc__stmt_t* else_body;      // IF
  dc__stmt_t** children;      // BLOCK
  uint32_t child_count;
};

typedef struct dc__param_t {
  uint32_t name;              // token index
  dc__range_t tokens;         // the whole parameter
  dc__type_t type;
  dc__decl_t* decl;
} dc__param_t;

typedef struct dc__function_t {
  uint32_t name;              // token index
  dc__decl_t* decl;
  bool is_kernel;
  dc__range_t head;           // return type up to the closing ')'
  dc__range_t return_type;
  dc__param_t* params;
  uint32_t param_count;
  dc__stmt_t* body;           // NULL for a prototype
  uint32_t body_end;          // token just past the body's '}'
  bool calls_barrier;         // its own body reaches a barrier
  // Bytes of its own private variables (all scopes) and parameters; a
  // kernel's chains of calls add up these (parse_calls.c).
  uint32_t private_bytes;
  // Its body, or a helper it calls (at any depth), reaches dc_grid_sync().
  bool calls_grid_sync;
  // A helper it calls (at any depth) reaches a barrier or dc_grid_sync()
  // (parse_calls.c).
  bool helper_reaches_barrier;
  uint32_t required_group_size[3];  // reqd_work_group_size, or zeros
} dc__function_t;

// A top-level declaration other than a function: a __constant variable or
// a typedef; emitted as written.
typedef struct dc__global_t {
  dc__range_t tokens;
  bool is_typedef;            // a typedef, struct, union or enum
  dc__stmt_t* decl;           // its declarators
} dc__global_t;

typedef struct dc__program_ast_t {
  const dc__token_t* tokens;
  uint32_t token_count;
  dc__function_t* functions;
  uint32_t function_count;
  dc__global_t* globals;
  uint32_t global_count;
  // Items in source order: index into functions (>= 0) or ~index into
  // globals, so back ends emit them in the order they were written.
  int32_t* order;
  uint32_t order_count;
  // The declaration each identifier token names, or NULL (indexed by
  // token): what the code generators emit a name from.
  dc__decl_t* const* token_decls;
  // What each token names (tree.h's dc__name_kind_t): the code generators
  // spell every name the program chose in a namespace of its own.
  const uint8_t* token_names;
  // The overload each call of a built-in resolved to, at its name token
  // (builtin_table.h), or NULL.
  const struct dc__builtin_t* const* token_builtins;
  // The compile's types: its records, for the code generators.
  const struct dc__types_t* types;
} dc__program_ast_t;

// Parses and checks the preprocessed |tokens| (ending with EOF). Errors
// go to |diag|.
DC_INTERNAL dc_status_t dc__parse(dc__arena_t* arena,
                                  const dc__token_list_t* tokens,
                                  dc__diag_t* diag, dc__program_ast_t* out);

// Spells |type| as the language does: "__global const float*", "int4".
DC_INTERNAL const char* dc__type_name(dc__arena_t* arena,
                                      const dc__type_t* type);

#endif  // DC_KERNEL_AST_H_

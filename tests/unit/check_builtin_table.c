// check_builtin_table.c: the table of built-in functions and constants and
// the resolution of calls against their overloads (builtin_table.h).
// SPDX-License-Identifier: MIT
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "kernel/builtin_table.h"

//===-- Fixture: an arena and its types -----------------------------------===//

static dc__arena_t arena;
static dc__types_t* types;
static char why[512];

static void setup(void) {
  dc__arena_init(&arena, dc_allocator_system());
  types = dc__types_new(&arena);
  ck_assert_ptr_nonnull(types);
  why[0] = '\0';
}

static void teardown(void) { dc__arena_free_all(&arena); }

//===-- Types and arguments spelled as OpenCL C spells them ---------------===//

static bool take(const char** text, const char* word) {
  size_t n = strlen(word);
  if (strncmp(*text, word, n) != 0) return false;
  *text += n;
  return true;
}

static const dc__ty_t* parse_base(const char** text) {
  static const struct {
    const char* name;
    dc__scalar_t scalar;
  } kScalars[] = {
      {"bool", DC_SCALAR_BOOL},     {"uchar", DC_SCALAR_UCHAR},
      {"char", DC_SCALAR_CHAR},     {"ushort", DC_SCALAR_USHORT},
      {"short", DC_SCALAR_SHORT},   {"uint", DC_SCALAR_UINT},
      {"int", DC_SCALAR_INT},       {"ulong", DC_SCALAR_ULONG},
      {"long", DC_SCALAR_LONG},     {"float", DC_SCALAR_FLOAT},
      {"double", DC_SCALAR_DOUBLE}, {"size_t", DC_SCALAR_SIZE_T},
      {"ptrdiff_t", DC_SCALAR_PTRDIFF_T}, {"void", DC_SCALAR_VOID},
  };
  if (take(text, "event_t")) return dc__ty_event(types);
  for (size_t i = 0; i < sizeof(kScalars) / sizeof(kScalars[0]); ++i) {
    if (take(text, kScalars[i].name)) {
      char* end;
      unsigned long width = strtoul(*text, &end, 10);
      *text = end;
      return dc__ty_vector(types, kScalars[i].scalar,
                           width ? (unsigned)width : 1);
    }
  }
  ck_abort_msg("test bug: no type in '%s'", *text);
  return NULL;
}

// "__global const float*", "float4", "volatile __local int*", "float[9]"
// (a private array), "event_t".
static const dc__ty_t* parse_type(const char* text) {
  unsigned quals = 0;
  dc_address_space_t space = DC_ADDRESS_PRIVATE;
  for (bool more = true; more;) {
    more = true;
    if (take(&text, "__global ")) space = DC_ADDRESS_GLOBAL;
    else if (take(&text, "__local ")) space = DC_ADDRESS_LOCAL;
    else if (take(&text, "__constant ")) space = DC_ADDRESS_CONSTANT;
    else if (take(&text, "__private ")) space = DC_ADDRESS_PRIVATE;
    else if (take(&text, "const ")) quals |= DC_Q_CONST;
    else if (take(&text, "volatile ")) quals |= DC_Q_VOLATILE;
    else more = false;
  }
  const dc__ty_t* t = parse_base(&text);
  if (quals != 0 || space != DC_ADDRESS_PRIVATE) {
    t = dc__ty_qualified(types, t, quals, space);
  }
  if (take(&text, "*")) return dc__ty_pointer(types, t);
  if (take(&text, "[")) return dc__ty_array(types, t, (uint32_t)atoi(text));
  return t;
}

static dc__expr_t* new_expr(dc__expr_kind_t kind, const dc__ty_t* type) {
  dc__expr_t* e = dc__arena_zalloc(&arena, 1, sizeof(*e));
  ck_assert_ptr_nonnull(e);
  e->kind = kind;
  e->type = type;
  return e;
}

// A literal: "1" (int), "-1", "1u" (uint), "1ul" (ulong), "0.5" (double),
// "0.5f" (float).
static dc__expr_t* parse_literal(const char* text) {
  if (text[0] == '-') {
    dc__expr_t* inner = parse_literal(text + 1);
    dc__expr_t* e = new_expr(DC_EXPR_UNARY, inner->type);
    e->op = "-";
    e->lhs = inner;
    return e;
  }
  bool floating = strchr(text, '.') != NULL;
  char last = text[strlen(text) - 1];
  dc__scalar_t s = floating   ? (last == 'f' ? DC_SCALAR_FLOAT
                                             : DC_SCALAR_DOUBLE)
                    : last == 'u' ? DC_SCALAR_UINT
                    : last == 'l' ? DC_SCALAR_ULONG  // "1ul"
                                  : DC_SCALAR_INT;
  return new_expr(floating ? DC_EXPR_FLOAT : DC_EXPR_INT,
                  dc__ty_scalar(types, s));
}

// Splits |list| at commas into typed argument expressions (a type's
// variable, or a literal); returns how many.
static uint32_t parse_args(const char* list, dc__expr_t** out, uint32_t max) {
  uint32_t n = 0;
  char copy[256];
  snprintf(copy, sizeof(copy), "%s", list);
  for (char* save = NULL, *part = strtok_r(copy, ",", &save); part != NULL;
       part = strtok_r(NULL, ",", &save)) {
    while (*part == ' ') ++part;
    ck_assert_uint_lt(n, max);
    bool literal = (part[0] >= '0' && part[0] <= '9') || part[0] == '-';
    out[n++] = literal ? parse_literal(part)
                       : new_expr(DC_EXPR_NAME, parse_type(part));
  }
  return n;
}

static const dc__builtin_t* resolve(const char* name, const char* arg_list) {
  dc__expr_t* args[8];
  uint32_t n = parse_args(arg_list, args, 8);
  why[0] = '\0';
  return dc__builtin_resolve(types, &arena, name, strlen(name), args, n, why,
                             sizeof(why));
}

// |name|(|args|) resolves, and its result has type |result|.
static const dc__builtin_t* expect(const char* name, const char* args,
                                   const char* result) {
  const dc__builtin_t* b = resolve(name, args);
  ck_assert_msg(b != NULL, "%s(%s) refused: %s", name, args, why);
  ck_assert_msg(b->result == parse_type(result), "%s(%s) gives %s, not %s",
                name, args, dc__ty_name(&arena, b->result), result);
  return b;
}

// Parameter |i| of the overload |b| has type |type|.
static void expect_param(const dc__builtin_t* b, uint32_t i,
                         const char* type) {
  ck_assert_uint_lt(i, b->param_count);
  ck_assert_msg(b->params[i] == parse_type(type),
                "%s: parameter %u is %s, not %s", b->name, i,
                dc__ty_name(&arena, b->params[i]), type);
}

// |name|(|args|) is refused with a message that names it, and no internal
// name.
static void refuse(const char* name, const char* args) {
  const dc__builtin_t* b = resolve(name, args);
  ck_assert_msg(b == NULL, "%s(%s) resolved to %s", name, args,
                b ? dc__ty_name(&arena, b->result) : "");
  ck_assert_msg(strstr(why, name) != NULL, "message '%s' omits the name",
                why);
  ck_assert_msg(strstr(why, "dc__") == NULL && strstr(why, "DC_") == NULL,
                "message '%s' names internals", why);
}

//===-- core: each family ------------------------------------------------===//

START_TEST(test_builtin_table_work_items) {
  expect("get_work_dim", "", "uint");
  expect("get_global_id", "uint", "size_t");
  const dc__builtin_t* b = expect("get_local_size", "0", "size_t");
  expect_param(b, 0, "uint");
  ck_assert_int_eq(b->klass, DC_BUILTIN_WORK_ITEM);
  const char* const kNames[] = {"get_global_size", "get_local_id",
                                "get_num_groups", "get_group_id",
                                "get_global_offset"};
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    expect(kNames[i], "int", "size_t");
  }
}
END_TEST

START_TEST(test_builtin_table_math) {
  expect("sqrt", "float", "float");
  expect("sqrt", "double2", "double2");
  expect("exp10", "float3", "float3");
  expect("pow", "float4, float4", "float4");
  expect("atan2pi", "double16, double16", "double16");
  expect("fma", "float, float, float", "float");
  expect("mad", "double8, double8, double8", "double8");
  expect("ilogb", "float4", "int4");
  expect("ilogb", "double", "int");
  expect("nan", "uint4", "float4");
  expect("nan", "ulong", "double");
  expect("native_sin", "float8", "float8");
  expect("half_divide", "float2, float2", "float2");
  expect("native_sin", "double", "float");  // converted, as clang does
  refuse("native_sin", "double2");
  refuse("half_powr", "double2, double2");
  const dc__builtin_t* b =
      expect("ldexp", "float4, int4", "float4");
  expect_param(b, 1, "int4");
  b = expect("ldexp", "double2, int", "double2");
  expect_param(b, 1, "int");
}
END_TEST

// Built-ins that store through a pointer take __global, __local and
// __private pointers to the right type.
START_TEST(test_builtin_table_math_pointers) {
  const dc__builtin_t* b =
      expect("fract", "float4, __global float4*", "float4");
  expect_param(b, 1, "__global float4*");
  ck_assert_uint_eq(b->writes_through, 1u << 1);
  expect("modf", "double, __local double*", "double");
  expect("sincos", "float, float*", "float");
  expect("frexp", "double2, int2*", "double2");
  expect("lgamma_r", "float, __global int*", "float");
  b = expect("remquo", "float, float, __local int*", "float");
  ck_assert_uint_eq(b->writes_through, 1u << 2);
  refuse("sincos", "float, __constant float*");  // not writable
  refuse("fract", "float4, float*");             // pointee of another type
  refuse("frexp", "float2, int4*");
  refuse("frexp", "float, uint*");
}
END_TEST

// The sgentype forms, and the engine's scalar later arguments.
START_TEST(test_builtin_table_scalar_arguments) {
  const dc__builtin_t* b = expect("fmin", "float4, float", "float4");
  expect_param(b, 1, "float");  // fmin(floatn, float), not a splat
  b = expect("fmax", "double2, double", "double2");
  expect_param(b, 1, "double");
  b = expect("clamp", "float4, float, float", "float4");
  expect_param(b, 2, "float");
  b = expect("mix", "float4, float4, float", "float4");
  expect_param(b, 2, "float");
  b = expect("step", "float, float4", "float4");
  expect_param(b, 0, "float");
  b = expect("smoothstep", "double, double, double2", "double2");
  expect_param(b, 1, "double");
  b = expect("min", "int4, int", "int4");
  expect_param(b, 1, "int");
  // Later arguments widen to the vector a first one fixed.
  b = expect("pown", "float4, int", "float4");
  expect_param(b, 1, "int4");
  b = expect("fma", "float4, float4, float", "float4");
  expect_param(b, 2, "float4");
  expect("pow", "float4, float", "float4");
  expect("upsample", "char4, uchar", "short4");
  // A first scalar fixes a scalar gentype: no widening backwards.
  refuse("pow", "float, float4");
}
END_TEST

START_TEST(test_builtin_table_integer) {
  expect("abs", "int", "uint");
  expect("abs", "char4", "uchar4");
  expect("abs", "float", "float");
  expect("abs_diff", "short2, short2", "ushort2");
  expect("add_sat", "long, long", "long");
  expect("hadd", "uchar16, uchar16", "uchar16");
  expect("clz", "char", "char");  // no promotion to int
  expect("popcount", "ulong8", "ulong8");
  expect("mad_hi", "uint, uint, uint", "uint");
  expect("mad_sat", "short4, short4, short4", "short4");
  expect("mul24", "int, int", "int");
  expect("mad24", "uint4, uint4, uint4", "uint4");
  expect("upsample", "char, uchar", "short");
  expect("upsample", "ushort2, ushort2", "uint2");
  expect("upsample", "int4, uint4", "long4");
  expect("upsample", "uint, uint", "ulong");
  expect("rotate", "uint, uint", "uint");
  expect("max", "size_t, size_t", "size_t");
  refuse("mul24", "int4, uint4");
  refuse("upsample", "long, ulong");
  refuse("clz", "float");
}
END_TEST

START_TEST(test_builtin_table_geometric) {
  expect("dot", "float4, float4", "float");
  expect("dot", "double2, double2", "double");
  expect("dot", "float, float", "float");
  expect("length", "float", "float");
  expect("distance", "double4, double4", "double");
  expect("normalize", "float2", "float2");
  expect("fast_length", "float4", "float");
  expect("cross", "float4, float4", "float4");
  expect("cross", "double3, double3", "double3");
  refuse("cross", "float2, float2");
  refuse("dot", "float4, float2");
}
END_TEST

START_TEST(test_builtin_table_relational) {
  expect("isequal", "float4, float4", "int4");
  expect("isequal", "double2, double2", "long2");
  expect("isnan", "double", "int");
  expect("isless", "float, float", "int");
  expect("signbit", "float16", "int16");
  expect("isunordered", "double8, double8", "long8");
  expect("any", "int4", "int");
  expect("all", "long2", "int");
  expect("any", "char16", "int");
  refuse("any", "uint4");
  expect("bitselect", "float4, float4, float4", "float4");
  expect("bitselect", "uchar, uchar, uchar", "uchar");
  const dc__builtin_t* b = expect("select", "float4, float4, int4", "float4");
  expect_param(b, 2, "int4");
  b = expect("select", "float4, float4, uint4", "float4");
  expect_param(b, 2, "uint4");
  expect("select", "double2, double2, long2", "double2");
  expect("select", "short8, short8, ushort8", "short8");
  refuse("select", "float4, float4, short4");  // lanes of another size
  refuse("select", "float4, float4, int2");
}
END_TEST

START_TEST(test_builtin_table_vload_vstore) {
  const dc__builtin_t* b =
      expect("vload4", "size_t, __global const float*", "float4");
  ck_assert_uint_eq(b->writes_through, 0);
  ck_assert_int_eq(b->klass, DC_BUILTIN_VLOAD);
  b = expect("vload4", "0, __constant float*", "float4");
  expect_param(b, 1, "__constant const float*");
  b = expect("vload8", "size_t, __global uchar*", "uchar8");
  expect_param(b, 1, "__global const uchar*");  // gains const
  expect("vload2", "uint, __local double*", "double2");
  expect("vload16", "size_t, int*", "int16");
  expect("vload3", "size_t, short*", "short3");
  refuse("vload2", "size_t, __global float4*");  // a vector pointee
  refuse("vload4", "size_t, __global volatile float*");  // loses volatile
  b = expect("vstore4", "float4, size_t, __global float*", "void");
  ck_assert_uint_eq(b->writes_through, 1u << 2);
  expect("vstore16", "double16, 0, __local double*", "void");
  b = expect("vstore4", "float4, 0, float[9]", "void");  // array decays
  expect_param(b, 2, "float*");
  refuse("vstore4", "float4, size_t, __constant float*");
  refuse("vstore4", "float4, size_t, __global const float*");
  refuse("vstore4", "int4, size_t, __global float*");
  refuse("vstore4", "float2, size_t, __global float*");
}
END_TEST

START_TEST(test_builtin_table_atomics) {
  const dc__builtin_t* b = expect("atomic_add", "__local int*, int", "int");
  expect_param(b, 0, "volatile __local int*");
  ck_assert_uint_eq(b->writes_through, 1u);
  ck_assert_int_eq(b->klass, DC_BUILTIN_ATOMIC);
  refuse("atomic_add", "int*, int");  // __private
  refuse("atomic_add", "__constant int*, int");
  refuse("atomic_add", "__global const int*, int");
  expect("atomic_inc", "__global uint*", "uint");
  expect("atomic_sub", "__global volatile int*, 2", "int");
  expect("atom_add", "__global long*, long", "long");
  expect("atomic_add", "__global ulong*, ulong", "ulong");
  expect("atomic_xchg", "__global float*, float", "float");
  expect("atom_xchg", "__global double*, double", "double");
  refuse("atomic_add", "__global float*, float");
  expect("atomic_cmpxchg", "__global int*, int, int", "int");
  expect("atom_cmpxchg", "__local ulong*, ulong, ulong", "ulong");
  const char* const kOps[] = {"add", "sub", "min", "max", "and", "or", "xor"};
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i) {
    char name[32];
    snprintf(name, sizeof(name), "atomic_%s", kOps[i]);
    expect(name, "__global uint*, uint", "uint");
    snprintf(name, sizeof(name), "atom_%s", kOps[i]);
    expect(name, "__local long*, long", "long");
  }
}
END_TEST

START_TEST(test_builtin_table_sync) {
  expect("barrier", "uint", "void");
  expect("barrier", "1", "void");
  expect("work_group_barrier", "uint", "void");
  expect("mem_fence", "uint", "void");
  expect("read_mem_fence", "uint", "void");
  expect("write_mem_fence", "uint", "void");
  const dc__builtin_t* b = expect("dc_grid_sync", "", "void");
  ck_assert_int_eq(b->klass, DC_BUILTIN_SYNC);
  ck_assert_uint_eq(b->param_count, 0);
}
END_TEST

START_TEST(test_builtin_table_async) {
  const dc__builtin_t* b = expect(
      "async_work_group_copy",
      "__local float4*, __global const float4*, size_t, event_t", "event_t");
  ck_assert_uint_eq(b->writes_through, 1u);
  ck_assert_int_eq(b->klass, DC_BUILTIN_ASYNC);
  b = expect("async_work_group_copy",
             "__global int*, __local int*, 16, event_t", "event_t");
  expect_param(b, 1, "__local const int*");
  refuse("async_work_group_copy",
         "__global int*, __global int*, size_t, event_t");
  refuse("async_work_group_copy",
         "__local int*, __global float*, size_t, event_t");
  b = expect("async_work_group_strided_copy",
             "__local float*, __global float*, size_t, size_t, event_t",
             "event_t");
  ck_assert_uint_eq(b->param_count, 5);
  expect("wait_group_events", "1, event_t*", "void");
  expect("wait_group_events", "int, event_t[2]", "void");
  expect("prefetch", "__global const double2*, size_t", "void");
  refuse("prefetch", "__local double*, size_t");
}
END_TEST

START_TEST(test_builtin_table_convert) {
  const dc__builtin_t* b = expect("convert_uchar4_sat", "float4", "uchar4");
  expect_param(b, 0, "float4");
  ck_assert_int_eq(b->klass, DC_BUILTIN_CONVERT);
  ck_assert_str_eq(b->name, "convert_uchar4_sat");
  expect("convert_float", "long", "float");
  expect("convert_float_rtz", "ulong", "float");
  expect("convert_int_sat_rte", "double", "int");
  expect("convert_double3", "int3", "double3");
  expect("convert_short16_sat_rtn", "double16", "short16");
  expect("convert_char", "size_t", "char");
  b = expect("convert_int", "bool", "int");
  expect_param(b, 0, "int");
  refuse("convert_int4", "float2");
  refuse("convert_int4", "float");
  refuse("convert_int", "float4");
  refuse("convert_int", "float, float");
  bool is_constant = true;
  ck_assert(dc__builtin_known("convert_int8_sat_rtp", 20, &is_constant));
  ck_assert(!is_constant);
  ck_assert(!dc__builtin_known("convert_float_sat", 17, NULL));
  ck_assert(!dc__builtin_known("convert_int5", 12, NULL));
  ck_assert(!dc__builtin_known("convert_int_rtx", 15, NULL));
  ck_assert(!dc__builtin_known("convert_size_t", 14, NULL));
}
END_TEST

START_TEST(test_builtin_table_reinterpret) {
  const dc__builtin_t* b = expect("as_float", "int", "float");
  ck_assert_int_eq(b->klass, DC_BUILTIN_REINTERPRET);
  refuse("as_float", "short");
  refuse("as_float", "double");
  refuse("as_int", "bool");
  expect("as_int4", "float4", "int4");
  expect("as_uint2", "double", "uint2");
  expect("as_char16", "float4", "char16");
  expect("as_float", "0x3f800000", "float");
  expect("as_short", "ushort", "short");
  // A 3-component vector takes the room of a 4-component one.
  expect("as_float3", "int4", "float3");
  expect("as_float4", "float3", "float4");
  expect("as_long2", "int3", "long2");
  refuse("as_int3", "int2");
  ck_assert(!dc__builtin_known("as_int5", 7, NULL));
}
END_TEST

START_TEST(test_builtin_table_constants) {
  static const struct {
    const char* name;
    const char* type;
  } kConstants[] = {
      {"MAXFLOAT", "float"},    {"HUGE_VALF", "float"},
      {"HUGE_VAL", "double"},   {"INFINITY", "float"},
      {"NAN", "float"},         {"FP_ILOGB0", "int"},
      {"FP_ILOGBNAN", "int"},   {"CLK_LOCAL_MEM_FENCE", "uint"},
      {"CLK_GLOBAL_MEM_FENCE", "uint"},
  };
  for (size_t i = 0; i < sizeof(kConstants) / sizeof(kConstants[0]); ++i) {
    const char* name = kConstants[i].name;
    bool is_constant = false;
    ck_assert_msg(dc__builtin_known(name, strlen(name), &is_constant), "%s",
                  name);
    ck_assert(is_constant);
    const dc__builtin_t* c =
        dc__builtin_constant(types, &arena, name, strlen(name));
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(c->klass, DC_BUILTIN_CONSTANT);
    ck_assert_msg(c->result == parse_type(kConstants[i].type), "%s is %s",
                  name, dc__ty_name(&arena, c->result));
  }
  const dc__builtin_t* c = dc__builtin_constant(types, &arena,
                                                "CLK_GLOBAL_MEM_FENCE", 20);
  ck_assert_int_eq(c->value.i, 2);
  c = dc__builtin_constant(types, &arena, "FP_ILOGB0", 9);
  ck_assert_int_eq(c->value.i, INT32_MIN);
  c = dc__builtin_constant(types, &arena, "MAXFLOAT", 8);
  ck_assert(c->value.f == FLT_MAX);
  c = dc__builtin_constant(types, &arena, "NAN", 3);
  ck_assert(c->value.f != c->value.f);
  c = dc__builtin_constant(types, &arena, "HUGE_VAL", 8);
  ck_assert(c->value.f > DBL_MAX);
  // The preprocessor defines these as literals, not the table.
  ck_assert_ptr_null(dc__builtin_constant(types, &arena, "M_PI_F", 6));
  ck_assert_ptr_null(dc__builtin_constant(types, &arena, "INT_MAX", 7));
  // A prefix of a name is not the name.
  ck_assert_ptr_null(dc__builtin_constant(types, &arena, "NA", 2));
  ck_assert(!dc__builtin_known("CLK_LOCAL_MEM", 13, NULL));
}
END_TEST

//===-- core: which overload wins -----------------------------------------===//

// The target gentype (builtin_table.c, step 3): the usual arithmetic
// conversions, literals adopting the other arguments' type, float winning
// over double, integers computing in double in floating built-ins.
START_TEST(test_builtin_table_ranking) {
  const dc__builtin_t* b = expect("max", "float4, 0", "float4");
  expect_param(b, 1, "float");  // the scalar form beats a splat
  expect("max", "1.0f, 2", "float");
  expect("fmin", "float, 1.0", "float");
  expect("fmin", "double, 1.0f", "double");
  expect("fmin", "float, double", "float");  // clang: ambiguous
  expect("fmax", "int, 0.5f", "float");
  expect("fmin", "1.0f, 2.0", "float");
  expect("fmax", "int, 3.5", "double");
  expect("sqrt", "int", "double");
  expect("sqrt", "2", "double");
  expect("pow", "int, 2", "double");
  expect("native_sqrt", "int", "float");
  expect("rotate", "char, 1", "char");
  expect("rotate", "char, int", "int");
  expect("max", "uchar, 1", "uchar");
  expect("max", "uint, int", "uint");
  expect("max", "long, uint", "long");
  expect("min", "size_t, 16", "size_t");
  expect("min", "size_t, uint", "size_t");
  expect("clamp", "float4, 0, 1", "float4");
  expect("clamp", "int, 0, 255", "int");
  expect("select", "float, float, int", "float");
  expect("select", "double, double, int", "double");
  expect("any", "int", "int");
  expect("nan", "uint", "float");
  expect("mul24", "char, char", "int");
  expect("abs", "bool", "uint");
  // Ambiguous: no candidate of the target type, and the cheapest differ.
  refuse("upsample", "long, ulong");
  refuse("mul24", "long, long");
  refuse("nan", "5");
  refuse("any", "uint");
  b = expect("atomic_add", "__global int*, 1u", "int");
  expect_param(b, 1, "int");
}
END_TEST

// Calls as the kernel corpus (tests/kernels) writes them.
START_TEST(test_builtin_table_corpus_forms) {
  expect("step", "0.5f, float4", "float4");
  expect("smoothstep", "-1.0f, 2.0f, float4", "float4");
  expect("mad", "float4, float4, float4", "float4");
  expect("rootn", "float, int", "float");
  expect("upsample", "int, uint", "long");
  expect("mad24", "uint, uint, uint", "uint");
  expect("popcount", "0", "int");
  expect("abs", "-7", "uint");
  expect("fabs", "-2.5f", "float");
  expect("add_sat", "2147483647, 1", "int");
  expect("convert_uchar_sat", "300", "uchar");
  expect("as_float", "0x7fc00000", "float");
  expect("atomic_xchg", "__global float*, float", "float");
  expect("atom_sub", "__global ulong*, 1ul", "ulong");
  expect("distance", "double4, double4", "double");
  expect("length", "float2", "float");
  expect("isless", "float4, float4", "int4");
  expect("select", "double2, double2, long2", "double2");
  expect("vstore4", "float4, 0, float*", "void");
}
END_TEST

//===-- core: every name the preludes implement is known ------------------===//

static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = malloc((size_t)size + 1);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(fread(text, 1, (size_t)size, f), (size_t)size);
  text[size] = '\0';
  fclose(f);
  return text;
}

static void expect_known_function(const char* name, size_t length) {
  bool is_constant = true;
  ck_assert_msg(dc__builtin_known(name, length, &is_constant),
                "'%.*s' is not in the table", (int)length, name);
  ck_assert_msg(!is_constant, "'%.*s' is a constant", (int)length, name);
}

// Each name of the "// @section NAME: a b c" lines of the CPU prelude.
START_TEST(test_builtin_table_cpu_prelude_names) {
  char* text = read_text(DC_CPU_PRELUDE_PATH);
  int names = 0;
  for (char* line = strstr(text, "// @section "); line != NULL;
       line = strstr(line + 1, "// @section ")) {
    char* at = strchr(line, ':') + 1;
    char* end = strchr(line, '\n');
    while (at < end) {
      at += strspn(at, " ");
      size_t n = strcspn(at, " \n");
      if (n > 0) {
        expect_known_function(at, n);
        ++names;
      }
      at += n;
    }
  }
  ck_assert_int_gt(names, 600);
  free(text);
}
END_TEST

// Each OpenCL name the CUDA preludes define ("#define sin dc__sin", and the
// work-item functions).
START_TEST(test_builtin_table_cuda_prelude_names) {
  static const char* const kFiles[] = {"lower_cuda_prelude.h",
                                       "lower_cuda_prelude_builtins.h"};
  int names = 0;
  for (size_t f = 0; f < 2; ++f) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", DC_CUDA_PRELUDE_DIR, kFiles[f]);
    char* text = read_text(path);
    for (char* line = strstr(text, "\n#define "); line != NULL;
         line = strstr(line + 1, "\n#define ")) {
      char* name = line + 9;
      size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyz_0123456789");
      bool renamed = strncmp(name + n, " dc__", 5) == 0;
      bool work_item = strncmp(name, "get_", 4) == 0 && name[n] == '(';
      if (n == 0 || !(renamed || work_item)) continue;
      expect_known_function(name, n);
      ++names;
    }
    free(text);
  }
  ck_assert_int_gt(names, 150);
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_builtin_table_wrong_count) {
  refuse("dot", "float4");
  ck_assert_str_eq(why,
                   "no overload of 'dot' takes (float4); it takes two float "
                   "or double scalars or vectors of one type");
  refuse("sqrt", "");
  ck_assert_str_eq(why,
                   "no overload of 'sqrt' takes (); it takes one float or "
                   "double scalar or vector");
  refuse("get_global_id", "");
  refuse("get_work_dim", "uint");
  refuse("barrier", "uint, uint");
  refuse("dc_grid_sync", "int");
  refuse("fma", "float, float, float, float, float, float");
  refuse("atomic_inc", "__global int*, int");
  refuse("async_work_group_copy", "__local int*, __global int*, size_t");
}
END_TEST

START_TEST(test_builtin_table_messages) {
  refuse("mul_hi", "int, __global int*");
  ck_assert_str_eq(why,
                   "no overload of 'mul_hi' takes (int, __global int*); it "
                   "takes two integer scalars or vectors of one type");
  refuse("sqrt", "int4");  // no implicit vector conversion
  ck_assert_str_eq(why,
                   "no overload of 'sqrt' takes (int4); it takes one float "
                   "or double scalar or vector");
  refuse("fmin", "float4, float2");
  refuse("max", "int4, uint4");
  refuse("as_float", "short");
  ck_assert_str_eq(why,
                   "no overload of 'as_float' takes (short); it takes one "
                   "scalar or vector of 4 bytes");
  refuse("convert_int4", "float2");
  ck_assert_str_eq(why,
                   "no overload of 'convert_int4' takes (float2); it takes "
                   "one 4-component vector");
  refuse("vstore4", "float4, size_t, __constant float*");
  ck_assert_ptr_nonnull(strstr(why, "(float4, size_t, __constant float*)"));
  const dc__builtin_t* b = resolve("frobnicate", "int");
  ck_assert_ptr_null(b);
  ck_assert_str_eq(why, "'frobnicate' is not a built-in function");
  ck_assert(!dc__builtin_known("frobnicate", 10, NULL));
  ck_assert(!dc__builtin_known("sqr", 3, NULL));    // a prefix of sqrt
  ck_assert(!dc__builtin_known("sqrtf", 5, NULL));  // sqrt's extension
}
END_TEST

// A short |why| is cut, never overrun; a NULL one is allowed.
START_TEST(test_builtin_table_short_message_buffer) {
  dc__expr_t* args[1];
  parse_args("int4", args, 1);
  char small[12];
  memset(small, 'x', sizeof(small));
  ck_assert_ptr_null(dc__builtin_resolve(types, &arena, "sqrt", 4, args, 1,
                                         small, 8));
  ck_assert_uint_eq(strlen(small), 7);
  ck_assert_int_eq(small[8], 'x');
  ck_assert_ptr_null(
      dc__builtin_resolve(types, &arena, "sqrt", 4, args, 1, NULL, 0));
  ck_assert_ptr_null(
      dc__builtin_resolve(types, &arena, "nope", 4, args, 1, NULL, 0));
}
END_TEST

static Suite* builtin_table_suite(void) {
  Suite* s = suite_create("builtin_table");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_add_test(core, test_builtin_table_work_items);
  tcase_add_test(core, test_builtin_table_math);
  tcase_add_test(core, test_builtin_table_math_pointers);
  tcase_add_test(core, test_builtin_table_scalar_arguments);
  tcase_add_test(core, test_builtin_table_integer);
  tcase_add_test(core, test_builtin_table_geometric);
  tcase_add_test(core, test_builtin_table_relational);
  tcase_add_test(core, test_builtin_table_vload_vstore);
  tcase_add_test(core, test_builtin_table_atomics);
  tcase_add_test(core, test_builtin_table_sync);
  tcase_add_test(core, test_builtin_table_async);
  tcase_add_test(core, test_builtin_table_convert);
  tcase_add_test(core, test_builtin_table_reinterpret);
  tcase_add_test(core, test_builtin_table_constants);
  tcase_add_test(core, test_builtin_table_ranking);
  tcase_add_test(core, test_builtin_table_corpus_forms);
  tcase_add_test(core, test_builtin_table_cpu_prelude_names);
  tcase_add_test(core, test_builtin_table_cuda_prelude_names);
  suite_add_tcase(s, core);
  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_add_test(errors, test_builtin_table_wrong_count);
  tcase_add_test(errors, test_builtin_table_messages);
  tcase_add_test(errors, test_builtin_table_short_message_buffer);
  suite_add_tcase(s, errors);
  return s;
}

DC_CHECK_MAIN(builtin_table_suite)

// builtin_families.c: every built-in function of the kernel language, one
// family of overloads per line (the pattern language is in
// builtin_families.h): OpenCL C 1.2's section 6.12 and the engine's own.
// SPDX-License-Identifier: MIT
#include "builtin_families.h"

#define FAM(name, klass, el, w, pattern, accepts) \
  {name, pattern, accepts, el, w, (uint8_t)(klass), 0, NULL}

// What each family takes, as messages say it.
#define A_F1 "one float or double scalar or vector"
#define A_F2 "two float or double scalars or vectors of one type"
#define A_F2S A_F2 " (the second may be a scalar)"
#define A_F3 "three float or double scalars or vectors of one type"
#define A_N1 "one float scalar or vector"
#define A_N2 "two float scalars or vectors of one type"
#define A_I1 "one integer scalar or vector"
#define A_I2 "two integer scalars or vectors of one type"
#define A_I3 "three integer scalars or vectors of one type"
#define A_FINT                                                               \
  "a float or double scalar or vector and an int or int vector of its width"
#define A_FPTR                                                               \
  "a float or double scalar or vector and a pointer to its type (__global, " \
  "__local or __private)"
#define A_FIPTR                                                              \
  "a float or double scalar or vector and a pointer to an int or int "     \
  "vector of its width"
#define A_ATOMIC                                                             \
  "a pointer to a __global or __local int, uint, long or ulong and a value " \
  "of that type"

#define MATH(name, pattern, accepts) \
  FAM(#name, DC_BUILTIN_MATH, EL_FLOATING, W_ALL, pattern, accepts)
#define MATH1(name) MATH(name, "G G", A_F1)
#define MATH2(name) MATH(name, "G G G", A_F2)
#define NATIVE(name, pattern, accepts)                                      \
  FAM("native_" #name, DC_BUILTIN_MATH, EL_FLOAT, W_ALL, pattern, accepts), \
      FAM("half_" #name, DC_BUILTIN_MATH, EL_FLOAT, W_ALL, pattern, accepts)
#define NATIVE1(name) NATIVE(name, "G G", A_N1)
#define INTEGER(name, pattern, accepts) \
  FAM(#name, DC_BUILTIN_MATH, EL_INTEGER, W_ALL, pattern, accepts)
#define RELATIONAL(name, pattern, accepts) \
  FAM(#name, DC_BUILTIN_MATH, EL_FLOATING, W_ALL, pattern, accepts)
#define WORK_ITEM(name)                                            \
  FAM(#name, DC_BUILTIN_WORK_ITEM, 0, W_ONE, "size_t uint",        \
      "one dimension index (uint)")
#define FENCE(name)                                      \
  FAM(#name, DC_BUILTIN_SYNC, 0, W_ONE, "void uint",     \
      "one cl_mem_fence_flags value (uint)")
#define VLOAD(N)                                                          \
  {"vload" #N, "V size_t cS*gclp",                                        \
   "an offset (size_t) and a pointer to a scalar element", EL_DATA,       \
   W_ONE, DC_BUILTIN_VLOAD, N, NULL},                                     \
  {"vstore" #N, "void V size_t S*glp",                                    \
   "a " #N "-component vector, an offset (size_t) and a pointer to its "  \
   "element type (__global, __local or __private)",                       \
   EL_DATA, W_ONE, DC_BUILTIN_VLOAD, N, NULL}
// The engine offers each atomic under both names, atomic_ and atom_, for
// 32- and 64-bit integers alike (docs/kernel-builtins.md).
#define ATOMIC(op, el, pattern, accepts)                                   \
  FAM("atomic_" #op, DC_BUILTIN_ATOMIC, el, W_ONE, pattern, accepts),      \
      FAM("atom_" #op, DC_BUILTIN_ATOMIC, el, W_ONE, pattern, accepts)
#define ASYNC(name, pattern, accepts) \
  FAM(name, DC_BUILTIN_ASYNC, EL_DATA, W_ALL, pattern, accepts)
// An async copy whose direction the preludes must know: they implement it
// under |spelling| (a CPU pointer does not carry its address space).
#define ASYNC_SPELLED(name, spelling, pattern, accepts)                      \
  {name, pattern, accepts, EL_DATA, W_ALL, (uint8_t)DC_BUILTIN_ASYNC, 0,     \
   spelling}

// Every built-in function, each overload family on a line of its own; the
// lines of one name are tried in the order written here.
const dc__builtin_family_t dc__builtin_families[] = {
    // Work-item functions (6.12.1). get_enqueued_local_size is OpenCL
    // 2.0's; the CUDA prelude has it.
    FAM("get_work_dim", DC_BUILTIN_WORK_ITEM, 0, W_ONE, "uint",
        "no arguments"),
    WORK_ITEM(get_global_size), WORK_ITEM(get_global_id),
    WORK_ITEM(get_local_size), WORK_ITEM(get_local_id),
    WORK_ITEM(get_num_groups), WORK_ITEM(get_group_id),
    WORK_ITEM(get_global_offset), WORK_ITEM(get_enqueued_local_size),

    // Math (6.12.2).
    MATH1(acos), MATH1(acosh), MATH1(acospi), MATH1(asin), MATH1(asinh),
    MATH1(asinpi), MATH1(atan), MATH1(atanh), MATH1(atanpi), MATH1(cbrt),
    MATH1(ceil), MATH1(cos), MATH1(cosh), MATH1(cospi), MATH1(erfc),
    MATH1(erf), MATH1(exp), MATH1(exp2), MATH1(exp10), MATH1(expm1),
    MATH1(fabs), MATH1(floor), MATH1(lgamma), MATH1(log), MATH1(log2),
    MATH1(log10), MATH1(log1p), MATH1(logb), MATH1(rint), MATH1(round),
    MATH1(rsqrt), MATH1(sin), MATH1(sinh), MATH1(sinpi), MATH1(sqrt),
    MATH1(tan), MATH1(tanh), MATH1(tanpi), MATH1(tgamma), MATH1(trunc),
    MATH2(atan2), MATH2(atan2pi), MATH2(copysign), MATH2(fdim),
    MATH2(fmod), MATH2(hypot), MATH2(maxmag), MATH2(minmag),
    MATH2(nextafter), MATH2(pow), MATH2(powr), MATH2(remainder),
    MATH(fmax, "G G G", A_F2S), MATH(fmax, "G G S", A_F2S),
    MATH(fmin, "G G G", A_F2S), MATH(fmin, "G G S", A_F2S),
    MATH(fma, "G G G G", A_F3), MATH(mad, "G G G G", A_F3),
    MATH(ldexp, "G G I", A_FINT), MATH(ldexp, "G G int", A_FINT),
    MATH(pown, "G G I", A_FINT), MATH(rootn, "G G I", A_FINT),
    MATH(ilogb, "I G", A_F1),
    MATH(nan, "G U", "one uint or ulong scalar or vector"),
    MATH(fract, "G G G*glp", A_FPTR), MATH(modf, "G G G*glp", A_FPTR),
    MATH(sincos, "G G G*glp", A_FPTR),
    MATH(frexp, "G G I*glp", A_FIPTR), MATH(lgamma_r, "G G I*glp", A_FIPTR),
    MATH(remquo, "G G G I*glp",
         "two float or double scalars or vectors of one type and a pointer "
         "to an int or int vector of their width"),
    NATIVE1(cos), NATIVE1(exp), NATIVE1(exp2), NATIVE1(exp10), NATIVE1(log),
    NATIVE1(log2), NATIVE1(log10), NATIVE1(recip), NATIVE1(rsqrt),
    NATIVE1(sin), NATIVE1(sqrt), NATIVE1(tan), NATIVE(divide, "G G G", A_N2),
    NATIVE(powr, "G G G", A_N2),

    // Common (6.12.4); clamp, max and min also take integers (6.12.3).
    MATH1(degrees), MATH1(radians), MATH1(sign),
    MATH(mix, "G G G G", A_F3 " (the last may be a scalar)"),
    MATH(mix, "G G G S", A_F3 " (the last may be a scalar)"),
    MATH(step, "G G G", "an edge and a value: " A_F2 " (the edge may be a "
                        "scalar)"),
    MATH(step, "G S G", "an edge and a value: " A_F2 " (the edge may be a "
                        "scalar)"),
    MATH(smoothstep, "G G G G", "two edges and a value: " A_F3 " (the edges "
                                "may be scalars)"),
    MATH(smoothstep, "G S S G", "two edges and a value: " A_F3 " (the edges "
                                "may be scalars)"),
    FAM("clamp", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G G G",
        "three scalars or vectors of one type (the bounds may be scalars)"),
    FAM("clamp", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G S S",
        "three scalars or vectors of one type (the bounds may be scalars)"),
    FAM("max", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G G",
        "two scalars or vectors of one type (the second may be a scalar)"),
    FAM("max", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G S",
        "two scalars or vectors of one type (the second may be a scalar)"),
    FAM("min", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G G",
        "two scalars or vectors of one type (the second may be a scalar)"),
    FAM("min", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G S",
        "two scalars or vectors of one type (the second may be a scalar)"),

    // Integer (6.12.3). abs also takes floating types (the engine's).
    INTEGER(abs, "U G", "one integer or floating scalar or vector"),
    FAM("abs", DC_BUILTIN_MATH, EL_FLOATING, W_ALL, "G G", A_F1),
    INTEGER(abs_diff, "U G G", A_I2), INTEGER(add_sat, "G G G", A_I2),
    INTEGER(sub_sat, "G G G", A_I2), INTEGER(hadd, "G G G", A_I2),
    INTEGER(rhadd, "G G G", A_I2), INTEGER(mul_hi, "G G G", A_I2),
    INTEGER(rotate, "G G G", A_I2), INTEGER(clz, "G G", A_I1),
    INTEGER(popcount, "G G", A_I1), INTEGER(mad_hi, "G G G G", A_I3),
    INTEGER(mad_sat, "G G G G", A_I3),
    FAM("mul24", DC_BUILTIN_MATH, EL_INT32, W_ALL, "G G G",
        "two int or uint scalars or vectors of one type"),
    FAM("mad24", DC_BUILTIN_MATH, EL_INT32, W_ALL, "G G G G",
        "three int or uint scalars or vectors of one type"),
    FAM("upsample", DC_BUILTIN_MATH, EL_NARROW, W_ALL, "W G U",
        "a char, uchar, short, ushort, int or uint scalar or vector and the "
        "unsigned type of its shape"),

    // Geometric (6.12.5); the engine takes every width, not just 1 to 4.
    MATH(dot, "S G G", A_F2), MATH(distance, "S G G", A_F2),
    MATH(length, "S G", A_F1), MATH(normalize, "G G", A_F1),
    MATH(fast_distance, "S G G", A_F2), MATH(fast_length, "S G", A_F1),
    MATH(fast_normalize, "G G", A_F1),
    FAM("cross", DC_BUILTIN_MATH, EL_FLOATING, W_CROSS, "G G G",
        "two float3, float4, double3 or double4 vectors of one type"),

    // Relational (6.12.6).
    RELATIONAL(isequal, "R G G", A_F2), RELATIONAL(isnotequal, "R G G", A_F2),
    RELATIONAL(isgreater, "R G G", A_F2),
    RELATIONAL(isgreaterequal, "R G G", A_F2),
    RELATIONAL(isless, "R G G", A_F2), RELATIONAL(islessequal, "R G G", A_F2),
    RELATIONAL(islessgreater, "R G G", A_F2),
    RELATIONAL(isordered, "R G G", A_F2),
    RELATIONAL(isunordered, "R G G", A_F2), RELATIONAL(isfinite, "R G", A_F1),
    RELATIONAL(isinf, "R G", A_F1), RELATIONAL(isnan, "R G", A_F1),
    RELATIONAL(isnormal, "R G", A_F1), RELATIONAL(signbit, "R G", A_F1),
    FAM("any", DC_BUILTIN_MATH, EL_SIGNED, W_ALL, "int G",
        "one signed integer scalar or vector"),
    FAM("all", DC_BUILTIN_MATH, EL_SIGNED, W_ALL, "int G",
        "one signed integer scalar or vector"),
    FAM("bitselect", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G G G",
        "three scalars or vectors of one type"),
    FAM("select", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G G K",
        "two scalars or vectors of one type and an integer selector with "
        "as many lanes of the same size"),
    FAM("select", DC_BUILTIN_MATH, EL_ANY, W_ALL, "G G G U",
        "two scalars or vectors of one type and an integer selector with "
        "as many lanes of the same size"),

    // Vector data load and store (6.12.7); the engine has no half forms.
    VLOAD(2), VLOAD(3), VLOAD(4), VLOAD(8), VLOAD(16),

    // Synchronization (6.12.8, 6.12.9) and the engine's grid barrier.
    FENCE(barrier), FENCE(work_group_barrier), FENCE(mem_fence),
    FENCE(read_mem_fence), FENCE(write_mem_fence),
    FAM("dc_grid_sync", DC_BUILTIN_SYNC, 0, W_ONE, "void", "no arguments"),

    // Async copies and prefetch (6.12.10).
    ASYNC("async_work_group_copy", "event_t G*l cG*g size_t event_t",
          "a __local and a __global pointer to one type (either way round), "
          "a count (size_t) and an event"),
    ASYNC("async_work_group_copy", "event_t G*g cG*l size_t event_t",
          "a __local and a __global pointer to one type (either way round), "
          "a count (size_t) and an event"),
    // The stride applies to the __global side, so the two directions
    // differ: to __local dst[i] = src[i*stride], to __global
    // dst[i*stride] = src[i].
    ASYNC_SPELLED("async_work_group_strided_copy",
                  "dc_async_strided_copy_g2l",
                  "event_t G*l cG*g size_t size_t event_t",
                  "a __local and a __global pointer to one type (either way "
                  "round), a count and a stride (size_t) and an event"),
    ASYNC_SPELLED("async_work_group_strided_copy",
                  "dc_async_strided_copy_l2g",
                  "event_t G*g cG*l size_t size_t event_t",
                  "a __local and a __global pointer to one type (either way "
                  "round), a count and a stride (size_t) and an event"),
    FAM("wait_group_events", DC_BUILTIN_ASYNC, 0, W_ONE, "void int event_t*p",
        "a count (int) and a pointer to events"),
    ASYNC("prefetch", "void cG*g size_t",
          "a __global pointer and a count (size_t)"),

    // Atomics (6.12.11, and cl_khr_int64_base_atomics' atom_*).
    ATOMIC(add, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(sub, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(min, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(max, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(and, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(or, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(xor, EL_ATOMIC, "S vS*gl S", A_ATOMIC),
    ATOMIC(xchg, EL_XCHG, "S vS*gl S",
           "a pointer to a __global or __local int, uint, long, ulong, float "
           "or double and a value of that type"),
    ATOMIC(inc, EL_ATOMIC, "S vS*gl",
           "a pointer to a __global or __local int, uint, long or ulong"),
    ATOMIC(dec, EL_ATOMIC, "S vS*gl",
           "a pointer to a __global or __local int, uint, long or ulong"),
    ATOMIC(cmpxchg, EL_ATOMIC, "S vS*gl S S",
           "a pointer to a __global or __local int, uint, long or ulong and "
           "two values of that type"),
};


const size_t dc__builtin_family_count =
    sizeof(dc__builtin_families) / sizeof(dc__builtin_families[0]);
_Static_assert(sizeof(dc__builtin_families) /
                       sizeof(dc__builtin_families[0]) <=
                   DC_BUILTIN_FAMILY_MAX,
               "DC_BUILTIN_FAMILY_MAX is too small");

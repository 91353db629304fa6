// lower_opencl_prelude.h: what kernels lowered to OpenCL C need in
// front of them beyond OpenCL C 1.2 itself (see lower_opencl.c). The
// driver compiles it first in every program: OpenCL C has the language's
// types, vectors and built-ins natively, so this holds only the engine's
// additions, the spellings the code generator uses, and checked mode.
//
// It is OpenCL C, embedded as text by core/CMakeLists.txt; names start
// with dc_ or DC_, which kernel sources cannot declare.
// SPDX-License-Identifier: MIT
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef cl_khr_int64_base_atomics
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#ifdef cl_khr_int64_extended_atomics
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#endif

// OpenCL's char is signed; the generator writes it as dc_char.
typedef char dc_char;
#define DC_SPLAT(T, x) ((T)(x))
#define DC_OV __attribute__((overloadable))

// The work-item functions beyond the dispatch's dimensions: ids 0, sizes
// 1, as OpenCL C 1.2 says (some drivers answer 0 past dimension 2).
#define DC_WORK_ITEM(name, outside)                          \
  static inline size_t dc_##name(uint d) {                   \
    return d < get_work_dim() ? name(d) : (size_t)(outside); \
  }
DC_WORK_ITEM(get_global_id, 0)
DC_WORK_ITEM(get_local_id, 0)
DC_WORK_ITEM(get_group_id, 0)
DC_WORK_ITEM(get_global_offset, 0)
DC_WORK_ITEM(get_global_size, 1)
DC_WORK_ITEM(get_local_size, 1)
DC_WORK_ITEM(get_num_groups, 1)
#undef DC_WORK_ITEM

// async_work_group_strided_copy in each direction (the table's
// spellings: the stride applies to the __global side).
#define dc_async_strided_copy_g2l async_work_group_strided_copy
#define dc_async_strided_copy_l2g async_work_group_strided_copy

// The geometric functions on 8 and 16 lanes, which the engine takes and
// OpenCL C defines for 1 to 4 only.
#define DC_GEOMETRIC(T, N)                                                  \
  static inline T DC_OV dc_dot(T##N a, T##N b) {                            \
    T s = 0;                                                                \
    for (int i = 0; i < N; ++i) s = fma(a[i], b[i], s);                     \
    return s;                                                               \
  }                                                                         \
  static inline T DC_OV dc_length(T##N a) { return sqrt(dc_dot(a, a)); }    \
  static inline T DC_OV dc_distance(T##N a, T##N b) {                       \
    return dc_length(a - b);                                                \
  }                                                                         \
  static inline T##N DC_OV dc_normalize(T##N a) {                           \
    T l = dc_length(a);                                                     \
    return l == (T)0 ? a : a / l;                                           \
  }
DC_GEOMETRIC(float, 8)
DC_GEOMETRIC(float, 16)
#ifdef cl_khr_fp64
DC_GEOMETRIC(double, 8)
DC_GEOMETRIC(double, 16)
#endif
#undef DC_GEOMETRIC

// mul24 and mad24 as the other devices compute them: the product's low
// 32 bits (wrapping). pocl's own overflow as signed arithmetic does,
// which is undefined, and its results differ from the CPU's.
#define DC_MUL24(S, U)                                                      \
  static inline S DC_OV dc_mul24(S x, S y) {                                \
    return as_##S((U)(as_##U(x) * as_##U(y)));                            \
  }                                                                         \
  static inline S DC_OV dc_mad24(S x, S y, S z) {                           \
    return as_##S((U)(as_##U(x) * as_##U(y) + as_##U(z)));                 \
  }
#define DC_MUL24_ALL(S, U) \
  DC_MUL24(S, U) DC_MUL24(S##2, U##2) DC_MUL24(S##3, U##3) \
  DC_MUL24(S##4, U##4) DC_MUL24(S##8, U##8) DC_MUL24(S##16, U##16)
DC_MUL24_ALL(int, uint)
DC_MUL24_ALL(uint, uint)
#undef DC_MUL24_ALL
#undef DC_MUL24

// Where drivers differ from OpenCL C, or from the other devices, the
// lowering calls these instead of the driver's built-in (lower_opencl.c,
// quirk_of; found by the differential tests on NVIDIA's driver), each
// compiled only into the programs that call it (DC__NEED_*: every
// function here costs every build time). Every other built-in is the
// driver's own.

// Definitions by macro M for every vector width, of element type T (and
// address space S). No variadic macros: OpenCL C 1.2 has none (NVIDIA's
// compiler refuses them). A vector form computes lane by lane: it reads
// lanes by index, as DC_GEOMETRIC does, and assembles its result through
// a private array and vloadN (OpenCL C 1.2 has no lane assignment by
// index).
#define DC_EVERY_WIDTH(M, T) M(2, T) M(3, T) M(4, T) M(8, T) M(16, T)
#define DC_EVERY_WIDTH_IN(M, T, S) \
  M(2, T, S) M(3, T, S) M(4, T, S) M(8, T, S) M(16, T, S)

// lgamma_r's sign as every device gives it (kernel-builtins.md): +1 or -1
// as gamma(x)'s sign, -1 for -0, 0 at the poles (negative integers and
// -infinity) and for NaN. NVIDIA's driver stores 1 for a negative gamma
// and 0 otherwise.
#ifdef DC__NEED_LGAMMA_R
#define DC_LGAMMA_SIGN(T)                                   \
  static inline int DC_OV dc_lgamma_sign(T x) {             \
    if (x > (T)0) return 1;                                 \
    if (x == (T)0) return signbit(x) ? -1 : 1;              \
    T f = floor(x);                                         \
    if (f == x || isnan(x)) return 0;                       \
    return fmod(f, (T)2) == (T)0 ? 1 : -1;                  \
  }
#define DC_LGAMMA_R_VEC(N, T, S)                                       \
  static inline T##N DC_OV dc_lgamma_r(T##N x, S int##N* s) {          \
    int t_[N];                                                         \
    for (int i_ = 0; i_ < N; ++i_) t_[i_] = dc_lgamma_sign(x[i_]);     \
    *s = vload##N(0, t_);                                              \
    return lgamma(x);                                                  \
  }
#define DC_LGAMMA_R_SPACE(T, S)                                   \
  static inline T DC_OV dc_lgamma_r(T x, S int* s) {              \
    *s = dc_lgamma_sign(x);                                       \
    return lgamma(x);                                             \
  }                                                               \
  DC_EVERY_WIDTH_IN(DC_LGAMMA_R_VEC, T, S)
#define DC_LGAMMA_R(T)                 \
  DC_LGAMMA_SIGN(T)                    \
  DC_LGAMMA_R_SPACE(T, __global)       \
  DC_LGAMMA_R_SPACE(T, __local)        \
  DC_LGAMMA_R_SPACE(T, __private)
DC_LGAMMA_R(float)
#ifdef cl_khr_fp64
DC_LGAMMA_R(double)
#endif
#undef DC_LGAMMA_R
#undef DC_LGAMMA_R_SPACE
#undef DC_LGAMMA_R_VEC
#undef DC_LGAMMA_SIGN
#endif

#ifdef DC__NEED_MAD_SAT_LONG
// mad_sat of 64-bit signed integers: NVIDIA's driver wraps instead of
// saturating. The 128-bit a * b + c from mul_hi and the low product; it
// fits in a long when its high word is the sign of its low one.
static inline long DC_OV dc_mad_sat(long a, long b, long c) {
  ulong lo = (ulong)a * (ulong)b;
  ulong sum = lo + (ulong)c;
  long hi = mul_hi(a, b) + (c >> 63) + (sum < lo ? 1 : 0);
  long s = (long)sum;
  return hi == (s >> 63) ? s : (hi < 0 ? LONG_MIN : LONG_MAX);
}
#define DC_MAD_SAT_VEC(N, T)                                    \
  static inline T##N DC_OV dc_mad_sat(T##N a, T##N b, T##N c) { \
    T t_[N];                                                    \
    for (int i_ = 0; i_ < N; ++i_) {                            \
      t_[i_] = dc_mad_sat(a[i_], b[i_], c[i_]);                 \
    }                                                           \
    return vload##N(0, t_);                                     \
  }
DC_EVERY_WIDTH(DC_MAD_SAT_VEC, long)
#undef DC_MAD_SAT_VEC
// A ptrdiff_t of 32 bits (a device with 32-bit addresses) is an int,
// whose mad_sat is the driver's.
static inline int DC_OV dc_mad_sat(int a, int b, int c) {
  return mad_sat(a, b, c);
}
#endif

#ifdef DC__NEED_SAT_NAN0
// Saturating conversions of floating values: NaN converts to 0, as OpenCL
// C says (NVIDIA's driver gives the type's minimum, and other values from
// double). The lowering writes convert_T_sat(dc_nan0(x)).
#define DC_NAN0_VEC(N, T)                        \
  static inline T##N DC_OV dc_nan0(T##N x) {     \
    return select(x, (T##N)(0), isnan(x));       \
  }
#define DC_NAN0(T)                               \
  static inline T DC_OV dc_nan0(T x) {           \
    return isnan(x) ? (T)0 : x;                  \
  }                                              \
  DC_EVERY_WIDTH(DC_NAN0_VEC, T)
DC_NAN0(float)
#ifdef cl_khr_fp64
DC_NAN0(double)
#endif
#undef DC_NAN0
#undef DC_NAN0_VEC
#endif
#undef DC_EVERY_WIDTH_IN
#undef DC_EVERY_WIDTH

// atomic_xchg of a double (the engine's; OpenCL C has float only).
#ifdef cl_khr_int64_base_atomics
static inline double DC_OV dc_atomic_xchg(volatile __global double* p,
                                          double v) {
  return as_double(atom_xchg((volatile __global long*)p, as_long(v)));
}
static inline double DC_OV dc_atomic_xchg(volatile __local double* p,
                                          double v) {
  return as_double(atom_xchg((volatile __local long*)p, as_long(v)));
}
#endif

#ifdef DC__CHECKED
//===-- Checked mode (cgen_checked.c) -------------------------------------===//
//
// A failed check records the fault (the first of the dispatch wins), marks
// the work-item stopped and gives the access a scratch location of the
// same address space instead, so no access is ever made out of bounds.
// A stopped work-item leaves every loop at its next poll (DC_POLL jumps
// to the dc_stop label that ends each function) and skips async copies.
// Every DC_POLL_EVERY iterations a poll also reads the stop word the host
// writes when the dispatch is interrupted or runs past its time limit.
enum { DC_KFAULT_INDEX, DC_KFAULT_POINTER, DC_KFAULT_STOPPED,
       DC_KFAULT_WATCHDOG };
#define DC_ORIGIN_OBJECT (~0u)
#define DC_POLL_EVERY 1024u
// Every scratch is aligned for the widest type an access may be given it
// for (a double16): a vector access assumes its alignment (pocl's x86
// code faults on a misaligned int4 store).
#define DC__SCRATCH_ALIGN __attribute__((aligned(128)))
typedef struct dc__fault_t {
  int set;  // 0 none, 2 being written, 1 written
  uint kind, arg, line;
  long index;
  ulong length, size;
} dc__fault_t;

// A checked dispatch runs in slices of its groups (dc_launch_slicer_t,
// dc/backend.h), each enqueued with the global offset of its first
// work-item: the kernel's dc_slice argument gives the dispatch's offset
// and groups, and where the slice starts, so that get_group_id and the
// sizes are the dispatch's.
typedef struct dc__slice_t {
  ulong offset[3];      // the dispatch's global offset
  ulong group_base[3];  // the slice's first group
  ulong groups[3];      // the dispatch's groups
} dc__slice_t;

// The work-item record that checked functions receive as _wi.
typedef struct dc__cwi_t {
  volatile __global uint* stop_word;  // written by the host
  __global dc__fault_t* fault;
  __global ulong* gscratch;
  __local ulong* lscratch;
  uint polls;
  int stop;
  dc__slice_t slice;
  ulong pscratch[DC__SCRATCH_WORDS] DC__SCRATCH_ALIGN;
} dc__cwi_t;

static inline size_t dc__sliced_group_id(const dc__cwi_t* w, uint d) {
  return dc_get_group_id(d) + (d < 3 ? w->slice.group_base[d] : 0);
}
static inline size_t dc__sliced_num_groups(const dc__cwi_t* w, uint d) {
  return d < get_work_dim() ? w->slice.groups[d] : 1;
}
static inline size_t dc__sliced_offset(const dc__cwi_t* w, uint d) {
  return d < get_work_dim() ? w->slice.offset[d] : 0;
}
#define dc_get_group_id(d) dc__sliced_group_id(_wi, (d))
#define dc_get_num_groups(d) dc__sliced_num_groups(_wi, (d))
#define dc_get_global_size(d) \
  (dc__sliced_num_groups(_wi, (d)) * dc_get_local_size(d))
#define dc_get_global_offset(d) dc__sliced_offset(_wi, (d))
__constant ulong dc__cscratch[DC__SCRATCH_WORDS] DC__SCRATCH_ALIGN = {0};

static void dc__escape(dc__cwi_t* w, uint kind, uint arg, uint line,
                       long index, ulong length, ulong size) {
  __global dc__fault_t* f = w->fault;
  if (atomic_cmpxchg((volatile __global int*)&f->set, 0, 2) == 0) {
    f->kind = kind;
    f->arg = arg;
    f->line = line;
    f->index = index;
    f->length = length;
    f->size = size;
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_xchg((volatile __global int*)&f->set, 1);
  }
  w->stop = 1;
}

static inline long dc__aidx(dc__cwi_t* w, long i, ulong n, uint line) {
  if (i >= 0 && (ulong)i < n) return i;
  if (!w->stop) dc__escape(w, DC_KFAULT_INDEX, DC_ORIGIN_OBJECT, line, i, n, 1);
  return 0;  // a valid index: arrays have at least one element
}
#define DC_AIDX(i, n, line) dc__aidx(_wi, (long)(i), n, line)

// A fat pointer: its address, its allocation's bounds, where the
// allocation came from, and the scratch of its address space.
typedef struct dc_fptr {
  ulong p, lo, hi;
  uint origin;
  ulong safe;
} dc_fptr;
#define DC_FP_NULL ((dc_fptr){0, 0, 0, 0, 0})
static inline dc_fptr dc_fp_make(ulong a, ulong n, uint origin, ulong safe) {
  dc_fptr f = {a, a, a + n, origin, safe};
  return f;
}
static inline dc_fptr DC_OV dc_fp_obj(dc__cwi_t* w,
                                      const volatile __global void* p,
                                      ulong n) {
  return dc_fp_make((ulong)p, n, DC_ORIGIN_OBJECT, (ulong)w->gscratch);
}
static inline dc_fptr DC_OV dc_fp_obj(dc__cwi_t* w,
                                      const volatile __local void* p,
                                      ulong n) {
  return dc_fp_make((ulong)p, n, DC_ORIGIN_OBJECT, (ulong)w->lscratch);
}
static inline dc_fptr DC_OV dc_fp_obj(dc__cwi_t* w, const __constant void* p,
                                      ulong n) {
  return dc_fp_make((ulong)p, n, DC_ORIGIN_OBJECT, (ulong)dc__cscratch);
}
static inline dc_fptr DC_OV dc_fp_obj(dc__cwi_t* w,
                                      const volatile __private void* p,
                                      ulong n) {
  return dc_fp_make((ulong)p, n, DC_ORIGIN_OBJECT, (ulong)w->pscratch);
}
#define DC_FP_OBJ(p, n) dc_fp_obj(_wi, p, n)
static inline dc_fptr dc_fp_add(dc_fptr f, long bytes) {
  f.p += (ulong)bytes;
  return f;
}
static inline dc_fptr dc_fp_step(dc_fptr* f, long bytes, int post) {
  dc_fptr old = *f;
  f->p += (ulong)bytes;
  return post ? old : *f;
}
// The address |index| elements of |size| bytes past f if |size| bytes
// there lie in f's allocation (modulo 2^64: the address checked is the
// address used), else the scratch.
static inline ulong dc_fp_at(dc__cwi_t* w, dc_fptr f, long index, ulong size,
                             uint line) {
  ulong a = f.p + (ulong)index * size;
  if (a - f.lo <= f.hi - f.lo && f.hi - a >= size && !w->stop) return a;
  if (!w->stop) {
    dc__escape(w, DC_KFAULT_POINTER, f.origin, line, (long)(a - f.lo),
               f.hi - f.lo, size);
  }
  return f.safe;
}
// count elements |stride| elements apart from f: the first and the last
// in the allocation (none for count 0). A stopped work-item copies
// nothing (DC_ASYNC_*), so its span is never reached.
static inline ulong dc_fp_span(dc__cwi_t* w, dc_fptr f, ulong count,
                               ulong stride, ulong size, uint line) {
  if (count == 0 || w->stop) return f.p;
  ulong room = f.p - f.lo <= f.hi - f.lo ? (f.hi - f.p) / size : 0;
  if (room == 0 || (stride != 0 && count - 1 > (room - 1) / stride)) {
    dc__escape(w, DC_KFAULT_POINTER, f.origin, line,
               (long)(f.p + (count - 1) * stride * size - f.lo), f.hi - f.lo,
               size);
  }
  return f.p;
}
#define DC_AT(f, i, size, line) dc_fp_at(_wi, f, i, size, line)
#define DC_SPAN(f, n, stride, size, line) \
  dc_fp_span(_wi, f, n, stride, size, line)
// The async copies of a checked program: their pointers are checked
// first (the arguments), and a stopped work-item copies nothing. (An
// if, not ?: : OpenCL C takes no event_t operands in a conditional.)
#define DC_ASYNC_COPY(d, s, n, e)                               \
  ({                                                            \
    __auto_type dc_d_ = (d);                                    \
    __auto_type dc_s_ = (s);                                    \
    event_t dc_e_ = (e);                                        \
    if (!_wi->stop) dc_e_ = async_work_group_copy(dc_d_, dc_s_, n, dc_e_); \
    dc_e_;                                                      \
  })
#define DC_ASYNC_STRIDED(d, s, n, stride, e)                              \
  ({                                                                      \
    __auto_type dc_d_ = (d);                                              \
    __auto_type dc_s_ = (s);                                              \
    event_t dc_e_ = (e);                                                  \
    if (!_wi->stop) {                                                     \
      dc_e_ = async_work_group_strided_copy(dc_d_, dc_s_, n, stride, dc_e_); \
    }                                                                     \
    dc_e_;                                                                \
  })
#define DC_WAIT_EVENTS(n, list)            \
  ({                                       \
    __auto_type dc_l_ = (list);            \
    if (!_wi->stop) wait_group_events(n, dc_l_); \
  })

// Whether the work-item must stop: it faulted, or the host asked.
static inline int dc__poll(dc__cwi_t* w, uint line) {
  if (w->stop) return 1;
  if (--w->polls != 0) return 0;
  w->polls = DC_POLL_EVERY;
  uint kind = *w->stop_word;
  if (kind == 0) return 0;
  dc__escape(w, kind, DC_ORIGIN_OBJECT, line, 0, 0, 0);
  return 1;
}
#define DC_POLL(line) \
  if (dc__poll(_wi, line)) goto dc_stop
// The poll of a loop in a function that reaches a barrier: a stopped
// work-item leaves the loop and goes on to the barriers, touching only
// scratch (its checks fail), and leaves each later loop at its first poll.
#define DC_POLL_BREAK(line) \
  if (dc__poll(_wi, line)) break
#endif  // DC__CHECKED

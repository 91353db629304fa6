// structs.cl: OpenCL C 1.2 section 6.1.5 (alignment: every member at an
// offset that is a multiple of its size for scalars and vectors, a struct
// aligned to its most aligned member and padded to a multiple of it) and
// the C99 aggregates OpenCL C keeps (6.1, C99 6.7.2.1-6.7.2.3, 6.7.7,
// 6.7.8): structs, unions, enums and typedefs in __global, __local,
// __private and __constant memory; arrays of structs behind a pointer
// reached with ->; nested structs and arrays in structs; struct
// assignment, structs passed to and returned from helper functions;
// program-scope __constant tables of structs with nested and elided
// initialisers; designated initialisers of private and __constant
// structs (under DESIGNATED, below).
// (Compound literals are not OpenCL C 1.2; structs by value as kernel
// arguments are kernel_args.cl's.)
// DESIGNATED (designated initialisers, C99 6.7.8), NESTED_DESIGNATOR (a
// designator list such as '.rs[1].hi = ...') and ENUM_FROM_INT (an int
// converted implicitly to an enum type, C99 6.7.2.2 and 6.3.1.1), which
// C++ does not have as C does, are compiled only when the manifest's
// program line defines them.
// The runs and their expected outputs are in manifest.txt.

// x at 0, n at 4, v at 16 (a float4 is aligned to 16), id at 32; 48
// bytes, the last 12 of them padding.
typedef struct {
  float x;
  int n;
  float4 v;
  short id;
} particle_t;

typedef struct {
  int lo, hi;
} range_t;

typedef struct {
  range_t r;       // nested
  int counts[4];   // an array member
  range_t rs[2];   // an array of structs
} hist_t;

typedef union {
  float f;
  uint u;
  uchar bytes[4];
  ushort halves[2];
} bits_t;

typedef enum {
  SHAPE_NONE,
  SHAPE_BOX = 4,
  SHAPE_ROUND,    // 5
  SHAPE_LAST = 10
} shape_t;

// A __global array of structs, through ->, (*p). and p[i].; the padding
// is never written, so it keeps the buffer's sentinel.
__kernel void global_structs(__global particle_t* ps, __global const float* in,
                             __global int* o) {
  size_t i = get_global_id(0);
  __global particle_t* p = ps + i;
  float seed = in[i];
  p->x = seed;
  p->n = (int)i * 3;
  p->v = (float4)(seed, 1.0f, 2.0f, (float)i);
  p->id = (short)(-(int)i);
  ps[i].v.y += p->x;                   // 1 + seed
  (*p).n += 1;                         // 3i + 1
  p->v.w = ps[i].v.x + (p + 0)->v.z;   // seed + 2
  __global particle_t* first = ps;
  o[i] = (int)(p - first) * 100 + (int)(&p->v != &ps[i].v);  // 100 i
}

// A __local array of structs declared in the kernel and one behind a
// __local pointer argument: each work-item fills its element, then reads
// its neighbour's after the barrier.
__kernel void local_structs(__global int* o, __local range_t* arg) {
  __local hist_t tile[16];
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  tile[l].r.lo = (int)g;
  tile[l].r.hi = (int)g * 2;
  for (int k = 0; k < 4; ++k) tile[l].counts[k] = (int)l + k;
  tile[l].rs[1] = tile[l].r;           // struct assignment in __local
  __local range_t* mine = &arg[l];
  mine->lo = -(int)g;
  mine->hi = (int)l;
  barrier(CLK_LOCAL_MEM_FENCE);
  size_t next = (l + 1) % n;
  __local hist_t* h = &tile[next];
  o[g * 4 + 0] = h->r.lo + h->r.hi;                  // 3 * neighbour
  o[g * 4 + 1] = h->counts[3] - h->counts[0];        // 3
  o[g * 4 + 2] = h->rs[1].hi;                        // 2 * neighbour
  o[g * 4 + 3] = arg[next].lo * 1000 + arg[next].hi;
}

// Private structs: designated and nested initialisers, assignment,
// helpers taking and returning structs, pointers to private structs,
// unions and enums.
range_t widen(range_t r, int by) {
  r.lo -= by;          // the caller's copy is not changed
  r.hi += by;
  return r;
}

int width(const range_t* r) { return r->hi - r->lo; }

int total(hist_t h) {
  int s = 0;
  for (int k = 0; k < 4; ++k) s += h.counts[k];
  return s + h.r.lo + h.rs[1].hi;
}

shape_t next_shape(shape_t s) {
  return s == SHAPE_LAST ? SHAPE_NONE : (shape_t)(s + 1);
}

__kernel void private_structs(__global int* o, __global uint* u) {
  int i = (int)get_global_id(0);
  range_t a = {i, i + 10};
  range_t b = widen(a, 3);
  range_t c = {-i, 7 * i};
  hist_t h = {{1, 2}, {i, 2 * i, 3 * i, 4 * i}, {{5, 6}, {7, 8}}};
  hist_t z = {{0}, {0, 0, 9}, {{0}, {0, i}}};   // the rest is zero
  hist_t copy = h;
  copy.counts[0] = 100;                          // h keeps its own
  range_t* pr = &copy.rs[0];
  pr->lo = 50;
  pr[1].hi = 60;                                 // copy.rs[1]
  __global int* out = o + i * 16;
  out[0] = a.lo;
  out[1] = b.lo;
  out[2] = b.hi;
  out[3] = width(&b);
  out[4] = c.lo + c.hi;
  out[5] = total(h);                  // 10 i + 1 + 8
  out[6] = total(z);                  // 9 + i
  out[7] = h.counts[0] + copy.counts[0];
  out[8] = copy.rs[0].lo + copy.rs[1].hi + h.rs[0].lo + h.rs[1].hi;
  out[9] = z.r.lo + z.r.hi + z.rs[0].lo;        // 0
  shape_t s = (shape_t)(i % 3 == 0 ? SHAPE_BOX : SHAPE_LAST);
  out[10] = next_shape(s);
  out[11] = SHAPE_ROUND + SHAPE_LAST * 100;     // 1005
  out[12] = (int)sizeof(h);                     // 40
  bits_t bits;
  bits.f = (float)i - 2.5f;
  out[13] = bits.bytes[3];                      // the float's top byte
  out[14] = bits.halves[0];
  out[15] = (int)sizeof(bits_t);                // 4
  u[i] = bits.u;
}

// __constant tables of structs at program scope: nested braces, elided
// members and entries (zero), a union and an enum inside.
typedef struct {
  int id;
  float scale;
  float4 offset;
  shape_t shape;
  bits_t raw;
} entry_t;

__constant entry_t kTable[6] = {
    {1, 0.5f, (float4)(1.0f, 2.0f, 3.0f, 4.0f), SHAPE_BOX, {1.0f}},
    {2, 2.0f, {0.5f, 0.25f, 0.125f, 0.0625f}, SHAPE_ROUND, {-2.0f}},
    {0},
    {3, -1.0f},
    {4, 0.0f, {0.0f, 0.0f, 0.0f, 0.0f}, SHAPE_LAST, {0.75f}},
};

__constant range_t kRanges[2][2] = {{{1, 2}, {3, 4}}, {{5, 6}}};

__kernel void constant_structs(__global float* f, __global int* o,
                               __constant entry_t* arg) {
  int i = (int)get_global_id(0);
  __constant entry_t* e = &kTable[i];
  f[i * 3 + 0] = e->id * 10.0f + e->scale;
  f[i * 3 + 1] = e->offset.x + e->offset.y + e->offset.z + e->offset.w;
  f[i * 3 + 2] = kTable[i].raw.f;
  o[i * 4 + 0] = e->shape;
  o[i * 4 + 1] = (int)(e->raw.u >> 23);          // sign and exponent
  o[i * 4 + 2] = kRanges[i % 2][(i / 2) % 2].lo * 10 +
                 kRanges[i % 2][(i / 2) % 2].hi;
  o[i * 4 + 3] = arg[i % 2].id + (int)arg[i % 2].scale * 100;
}

// Layout (6.1.5): sizes, and offsets measured from private structs.
typedef struct { char c; int i; } ci_t;                // 4, 8
typedef struct { char a; short b; char c; } csc_t;     // 2, 4: 6
typedef struct { char c; double d; } cd_t;             // 8: 16
typedef struct { char c; long2 v; char d; } cvc_t;     // 16, 32: 48
typedef struct { uchar a; float2 v; } cf2_t;           // 8: 16
typedef struct { short s; char c[3]; } sc3_t;          // 5 rounded to 6
typedef struct { cvc_t inner; char tail; } outer_t;    // 48: 64
typedef union { char c[5]; int i; } u5_t;             // 8
typedef struct { int a[3]; char b; } arr_t;            // 16
typedef struct { char c; float8 v; } cf8_t;            // 32: 64
typedef struct { char c; ulong16 v; } cl16_t;          // 128: 256

#define OFFSET(s, m) ((int)((__private char*)&(s).m - (__private char*)&(s)))

__kernel void layout(__global int* o) {
  ci_t ci;
  csc_t csc;
  cvc_t cvc;
  cf2_t cf2;
  cd_t cd;
  outer_t out;
  particle_t pt;
  cf8_t cf8;
  cl16_t cl16;
  hist_t h;
  o[0] = sizeof(ci_t);
  o[1] = sizeof(csc_t);
  o[2] = sizeof(cd_t);
  o[3] = sizeof(cvc_t);
  o[4] = sizeof(cf2_t);
  o[5] = sizeof(sc3_t);
  o[6] = sizeof(outer_t);
  o[7] = sizeof(u5_t);
  o[8] = sizeof(arr_t);
  o[9] = sizeof(cf8_t);
  o[10] = sizeof(cl16_t);
  o[11] = sizeof(particle_t);
  o[12] = sizeof(hist_t);
  o[13] = sizeof(entry_t);
  o[14] = sizeof(range_t[3]);
  o[15] = OFFSET(ci, i);
  o[16] = OFFSET(csc, b) * 10 + OFFSET(csc, c);
  o[17] = OFFSET(cvc, v) * 100 + OFFSET(cvc, d);
  o[18] = OFFSET(cf2, v);
  o[19] = OFFSET(cd, d);
  o[20] = OFFSET(out, tail);
  o[21] = OFFSET(pt, n) * 100 + OFFSET(pt, v);
  o[22] = OFFSET(pt, id);
  o[23] = OFFSET(cf8, v);
  o[24] = OFFSET(cl16, v);
  o[25] = OFFSET(h, rs[1].hi);
}

#ifdef DESIGNATED
// C99 6.7.8: designators name the members and elements they initialise,
// in any order; the others are zero; a designator may be followed by
// positional values for the next members.
__constant entry_t kDesignated[4] = {
    [2] = {.shape = SHAPE_LAST, .id = 4, .raw = {0.75f}},
    [0] = {7, .offset = (float4)(1.0f, 2.0f, 3.0f, 4.0f)},
    [3] = {.scale = 2.5f},
};

__kernel void designated(__global int* o, __global float* f) {
  int i = (int)get_global_id(0);
  range_t c = {.hi = 7 * i, .lo = -i};
  hist_t z = {.counts = {[2] = 9, 10}, .rs = {[1] = {.hi = i}}, .r = {5}};
  int arr[6] = {[4] = i, [1] = 2, 3};           // 0 2 3 0 i 0
  o[i * 8 + 0] = c.lo + c.hi;                   // 6 i
  o[i * 8 + 1] = z.counts[2] * 100 + z.counts[3];  // 910
  o[i * 8 + 2] = z.rs[1].hi + z.rs[1].lo;       // i
  o[i * 8 + 3] = z.r.lo * 10 + z.r.hi;          // 50
  o[i * 8 + 4] = arr[1] * 100 + arr[2] * 10 + arr[3];  // 230
  o[i * 8 + 5] = arr[4];                        // i
  o[i * 8 + 6] = kDesignated[i].id;             // 7 0 4 0
  o[i * 8 + 7] = kDesignated[i].shape;          // 0 0 10 0
  f[i * 2 + 0] = kDesignated[i].offset.w + kDesignated[i].scale;
  f[i * 2 + 1] = kDesignated[i].raw.f;
}
#endif

#ifdef NESTED_DESIGNATOR
// C99 6.7.8: a designation may be a list of designators, each naming a
// member or element of the current object.
__kernel void nested_designator(__global int* o) {
  int i = (int)get_global_id(0);
  hist_t z = {.rs[1].hi = i, .counts[2] = 9, .r.lo = -1};
  o[i * 4 + 0] = z.rs[1].hi;
  o[i * 4 + 1] = z.counts[2] + z.counts[3];
  o[i * 4 + 2] = z.r.lo + z.r.hi;
  o[i * 4 + 3] = z.rs[0].lo + z.rs[1].lo;
}
#endif

#ifdef ENUM_FROM_INT
// C99: an enum type is compatible with an integer type, so an int is
// converted to it implicitly on assignment, initialisation, argument
// passing and return.
shape_t shape_after(shape_t s) { return s + 1; }
int shape_code(shape_t s) { return s * 10; }

__kernel void enum_from_int(__global int* o) {
  int i = (int)get_global_id(0);
  shape_t s = i;             // initialisation
  shape_t t;
  t = i + 4;                 // assignment
  o[i * 3 + 0] = shape_after(s);
  o[i * 3 + 1] = t;
  o[i * 3 + 2] = shape_code(i);  // an int argument for an enum parameter
}
#endif

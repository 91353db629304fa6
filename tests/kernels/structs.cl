// structs.cl: structs, unions and enums: a struct array behind a __global
// pointer, structs by value through helpers, nested structs and arrays in
// structs, a union that reinterprets a float, an enum in a switch, a
// __constant table of structs, and the OpenCL layout (float4 aligned to
// 16) that every device must share.
// The runs and their expected outputs are in manifest.txt.

// OpenCL layout: x at 0, n at 4, v at 16 (a float4 is aligned to 16):
// 32 bytes, 8 words, words 2 and 3 padding.
typedef struct {
  float x;
  int n;
  float4 v;
} particle_t;

// Writes particle i of |ps| through -> and . only (the padding keeps the
// buffer's sentinel); in[i] is its seed.
__kernel void particles(__global particle_t* ps, __global const float* in) {
  size_t i = get_global_id(0);
  __global particle_t* p = ps + i;
  p->x = in[i];
  p->n = (int)i * 3;
  p->v = (float4)(in[i], 1.0f, 2.0f, (float)i);
  ps[i].v.y += p->x;                           // 1 + in[i]
  ps[i].x = ps[i].x * 2.0f + (float)ps[i].n;   // 2 in[i] + 3i
  (*p).n += 1;                                 // 3i + 1
  p->v.w = ps[i].v.x + (p + 0)->v.z;           // in[i] + 2
}

// A struct by value: the helper works on its own copy and returns a new
// one.
typedef struct pair {
  int a;
  float b;
} pair_t;

pair_t swap_scale(pair_t p, int k) {
  pair_t r;
  r.a = (int)p.b * k;
  r.b = (float)p.a / 2.0f;
  p.a = -1;  // the caller's stays
  return r;
}

struct pair twice(struct pair p) {
  p.a *= 2;
  p.b *= 2.0f;
  return p;
}

__kernel void by_value(__global int* o) {
  int i = (int)get_global_id(0);
  pair_t p = {i, (float)(i * 2)};
  pair_t q = swap_scale(p, 3);
  pair_t c = q;
  c.a += 1;
  o[i * 6 + 0] = p.a;                            // i
  o[i * 6 + 1] = (int)p.b;                       // 2i
  o[i * 6 + 2] = q.a;                            // 6i
  o[i * 6 + 3] = (int)(q.b * 2.0f);              // i
  o[i * 6 + 4] = c.a - q.a;                      // 1
  o[i * 6 + 5] = twice(twice(p)).a + swap_scale(p, 1).a;  // 4i + 2i
}

// Nested structs and arrays inside a struct, through values and
// pointers.
typedef struct {
  int lo, hi;
} range_t;

typedef struct {
  range_t r;
  int counts[4];
  range_t rs[2];
} hist_t;

int total(const hist_t* h) {
  int s = 0;
  for (int k = 0; k < 4; ++k) s += h->counts[k];
  return s;
}

__kernel void nested(__global int* o) {
  int i = (int)get_global_id(0);
  hist_t h = {{i, i + 10}, {1, 2, 3, i}, {{5, 6}, {7, 8}}};
  h.counts[2] += h.r.hi;         // 13 + i
  h.rs[1].lo = h.rs[0].hi * 2;   // 12
  hist_t* hp = &h;
  hp->r.lo += 100;               // 100 + i
  range_t last = hp->rs[1];
  o[i * 5 + 0] = total(&h);                   // 16 + 2i
  o[i * 5 + 1] = h.r.lo + h.r.hi;             // 110 + 2i
  o[i * 5 + 2] = last.lo + last.hi;           // 20
  o[i * 5 + 3] = hp->counts[3] * h.rs[0].lo;  // 5i
  o[i * 5 + 4] = (int)sizeof(hist_t);         // 40
}

// A union reinterprets a float's bits.
typedef union {
  float f;
  uint u;
  uchar bytes[4];
} bits_t;

__kernel void unions(__global const float* in, __global uint* o) {
  int i = (int)get_global_id(0);
  bits_t b;
  b.f = in[i];
  o[i * 5 + 0] = b.u;             // the IEEE bits
  o[i * 5 + 1] = b.u >> 31;       // the sign
  o[i * 5 + 2] = b.bytes[3];      // the top byte (little-endian devices)
  b.u ^= 0x80000000u;             // the sign flipped
  o[i * 5 + 3] = as_uint(b.f);
  bits_t one = {1.0f};
  o[i * 5 + 4] = one.u;           // 0x3f800000
}

// An enum in a switch, with a value of its own after a gap.
typedef enum { OP_ADD, OP_SUB = 5, OP_MUL, OP_NEG } op_t;

enum shift { SHIFT = 1 << 2 };

int apply(op_t op, int a, int b) {
  switch (op) {
    case OP_ADD:
      return a + b;
    case OP_SUB:
      return a - b;
    case OP_MUL:
      return a * b;
    default:
      return -a;
  }
}

__kernel void enums(__global const int* a, __global int* o) {
  int i = (int)get_global_id(0);
  const op_t ops[4] = {OP_ADD, OP_SUB, OP_MUL, OP_NEG};
  op_t op = ops[i % 4];
  o[i * 2 + 0] = apply(op, a[i], SHIFT);
  o[i * 2 + 1] = op;  // 0, 5, 6, 7
}

// A __constant table of structs: nested braces, a vector literal, elided
// entries (zero). (Designated initialisers are accepted by the front end
// but not yet emitted for CUDA.)
typedef struct {
  int id;
  float scale;
  float4 offset;
} entry_t;

__constant entry_t kTable[4] = {
    {1, 0.5f, (float4)(1.0f, 2.0f, 3.0f, 4.0f)},
    {2, 2.0f, {0.5f, 0.25f, 0.125f, 0.0625f}},
    {0}, {4, -1.0f},
};

__kernel void table(__global float* o) {
  int i = (int)get_global_id(0);
  __constant entry_t* e = &kTable[i % 4];
  o[i * 2 + 0] = e->id * 10.0f + e->scale;
  o[i * 2 + 1] = e->offset.x + e->offset.y + e->offset.z + e->offset.w +
                 kTable[i % 4].offset.y;
}

// The OpenCL layout: sizes, and offsets measured from a private struct.
typedef struct { char c; float4 v; } c4_t;           // v at 16: 32
typedef struct { char a; short b; char c; } small_t; // 2, 4: 6
typedef struct { char c; double d; } cd_t;           // d at 8: 16
typedef struct { char c; int4 v; char d; } c4c_t;    // 16, 32: 48
typedef struct { uchar a; float2 v; } f2_t;          // v at 8: 16
typedef struct { short s; char c[3]; } sc_t;         // 5 rounded to 6
typedef struct { c4_t inner; char tail; } outer_t;   // tail at 32: 48
typedef struct { long l; char c; } lc_t;             // 16
typedef union { char c[5]; int i; } u5_t;            // 8
typedef struct { int a[3]; char b; } arr_t;          // 16

#define OFFSET(s, m) ((int)((__private char*)&(s).m - (__private char*)&(s)))

__kernel void layout(__global int* o) {
  c4_t c4;
  small_t sm;
  c4c_t c4c;
  f2_t f2;
  cd_t cd;
  outer_t out;
  particle_t pt;
  o[0] = sizeof(c4_t);
  o[1] = sizeof(small_t);
  o[2] = sizeof(cd_t);
  o[3] = sizeof(c4c_t);
  o[4] = sizeof(f2_t);
  o[5] = sizeof(float8);
  o[6] = sizeof(float16);
  o[7] = sizeof(double4);
  o[8] = sizeof(sc_t);
  o[9] = sizeof(outer_t);
  o[10] = sizeof(lc_t);
  o[11] = sizeof(u5_t);
  o[12] = sizeof(arr_t);
  o[13] = sizeof(particle_t);
  o[14] = sizeof(pair_t) + sizeof(range_t) * 100 + sizeof(entry_t) * 10000;
  o[15] = OFFSET(c4, v);
  o[16] = OFFSET(sm, b) * 10 + OFFSET(sm, c);
  o[17] = OFFSET(c4c, v) * 100 + OFFSET(c4c, d);
  o[18] = OFFSET(f2, v);
  o[19] = OFFSET(cd, d);
  o[20] = OFFSET(out, tail);
  o[21] = OFFSET(pt, n) * 100 + OFFSET(pt, v);
}

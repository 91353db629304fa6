// kernel_args.cl: OpenCL C 1.2 section 6.9 (restrictions (k): a kernel
// argument may be a struct or union, passed by value, as long as none of
// its members is bool, size_t, ptrdiff_t, intptr_t, uintptr_t or a
// pointer) with the layout of 6.1.5 as the host sees it (clSetKernelArg
// takes the host's bytes of the same declaration): every member at an
// offset that is a multiple of its alignment, vectors aligned to their
// size, packed and aligned(N) records (6.11.1), nested records, arrays of
// records and 2-D arrays, unions, enums (passed as their int), a struct
// larger than the engine's inline argument value, and a struct beside
// scalar and vector arguments.
// Each kernel copies its argument's members out, so the expected values
// are the record lines' own values (and the few sums the comments give).
// The runs and their expected outputs are in manifest.txt.

// c at 0, i at 4, v at 16, s at 32, d at 40, pair at 48, l at 56; 64
// bytes, aligned to 16.
typedef struct {
  char c;
  int i;
  float4 v;
  short s[3];
  double d;
  struct { uchar lo, hi; } pair;
  long l;
} mixed_t;

// o: c, i, s[0..2], pair.lo, pair.hi, l (as longs); f: v.x..v.w, d.
__kernel void mixed(__global long* o, __global double* f, mixed_t m) {
  o[0] = m.c;
  o[1] = m.i;
  o[2] = m.s[0];
  o[3] = m.s[1];
  o[4] = m.s[2];
  o[5] = m.pair.lo;
  o[6] = m.pair.hi;
  o[7] = m.l;
  f[0] = m.v.x;
  f[1] = m.v.y;
  f[2] = m.v.z;
  f[3] = m.v.w;
  f[4] = m.d;
}

typedef union {
  float f;
  uint u;
  uchar b[4];
} bits_t;

// A union given as its uint: o = the bytes, then the float doubled as
// bits.
__kernel void union_arg(__global uint* o, bits_t b) {
  for (int k = 0; k < 4; ++k) o[k] = b.b[k];
  bits_t twice;
  twice.f = b.f * 2.0f;
  o[4] = twice.u;
}

// c at 0, i at 1, d at 5: 13 bytes, aligned to 1.
struct __attribute__((packed)) tight {
  char c;
  int i;
  double d;
};

// x at 0, y at 16 (its own aligned(16)); the struct aligned to 32: 32
// bytes.
struct __attribute__((aligned(32))) wide {
  int x;
  int y __attribute__((aligned(16)));
};

typedef enum { ROUND_DOWN = -1, ROUND_NONE, ROUND_UP = 7 } round_t;

// A packed and an aligned struct, an enum and scalars around them: the
// arguments' own placement must not disturb any of them. o: t.c, t.i,
// (int)t.d, w.x, w.y, r, before, after.
__kernel void layouts(__global int* o, char before, struct tight t,
                      struct wide w, round_t r, short after) {
  o[0] = t.c;
  o[1] = t.i;
  o[2] = (int)t.d;
  o[3] = w.x;
  o[4] = w.y;
  o[5] = r;
  o[6] = before;
  o[7] = after;
  o[8] = r == ROUND_DOWN ? 100 : r == ROUND_UP ? 200 : 300;
}

// range at 0 (int2, 8 bytes), w at 8: 12 bytes, aligned to 8, so 16.
typedef struct {
  int2 range;
  float w;
} segment_t;

// segs at 0 (3 x 16), grid at 48 (2 x 3 ints), count at 72; 80 bytes.
typedef struct {
  segment_t segs[3];
  int grid[2][3];
  long count;
} nested_t;

// o: for each segment range.x, range.y, (int)(w * 4); then the grid in
// row-major order, then count.
__kernel void nested(__global int* o, nested_t n) {
  for (int k = 0; k < 3; ++k) {
    o[3 * k] = n.segs[k].range.x;
    o[3 * k + 1] = n.segs[k].range.y;
    o[3 * k + 2] = (int)(n.segs[k].w * 4.0f);
  }
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 3; ++c) o[9 + 3 * r + c] = n.grid[r][c];
  }
  o[15] = (int)n.count;
}

// 40 floats, then a uint: 164 bytes, larger than the engine's inline
// value of 128 bytes (so the dispatch borrows the bytes).
typedef struct {
  float taps[40];
  uint n;
} filter_t;

// o[i] = sum of taps[k] * in[i + k] for k < n, over a float4 scale
// argument's x beside it: each work-item one output.
__kernel void large(__global float* o, __global const float* in,
                    filter_t f, float4 scale) {
  size_t i = get_global_id(0);
  float acc = 0.0f;
  for (uint k = 0; k < f.n; ++k) acc += f.taps[k] * in[i + k];
  o[i] = acc * scale.x + scale.w;
}

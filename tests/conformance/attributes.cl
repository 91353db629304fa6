// attributes.cl: OpenCL C 1.2 section 6.11 (attribute qualifiers):
// reqd_work_group_size (a dispatch with another work-group size fails;
// one without a size gets the required one), work_group_size_hint and
// vec_type_hint (accepted, no effect on results), in the places 6.11
// allows (before the return type, after the parameter list); aligned(N)
// and packed on struct types, aligned(N) on struct members and on
// variables (6.11.1, 6.11.3), checked through sizeof, offsets and
// addresses, a packed struct read from a __global byte buffer; and the
// loop pragmas #pragma unroll [N] (an extension every OpenCL C compiler
// accepts: results must be those of the plain loop).
// ENDIAN (the endian(host|device) attribute of 6.11.3) is compiled only
// when the manifest's program line defines it.
// The runs and their expected outputs are in manifest.txt.

__kernel __attribute__((reqd_work_group_size(8, 2, 1)))
void required(__global int* o) {
  size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
  o[g * 3 + 0] = (int)get_local_size(0);
  o[g * 3 + 1] = (int)get_local_size(1);
  o[g * 3 + 2] = (int)(get_local_id(1) * 8 + get_local_id(0));
}

__kernel void hinted(__global float* o, __global const float4* in)
    __attribute__((work_group_size_hint(16, 1, 1)))
    __attribute__((vec_type_hint(float4))) {
  size_t i = get_global_id(0);
  float4 v = in[i];
  o[i] = v.x + v.y * 2.0f + v.z * 4.0f + v.w * 8.0f;
}

__kernel __attribute__((vec_type_hint(int)))
__attribute__((work_group_size_hint(4, 4, 1)))
void hinted2(__global int* o) {
  size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
  o[i] = (int)(get_global_id(0) * 100 + get_global_id(1));
}

__kernel __attribute__((vec_type_hint(double2)))
__attribute__((reqd_work_group_size(4, 1, 1)))
void both(__global int* o) {
  o[get_global_id(0)] = (int)get_local_size(0) * 10 + (int)get_local_id(0);
}

// aligned and packed.
typedef struct __attribute__((packed)) {
  char c;
  int i;
  short s;
  float f;
} packed_t;                                            // 11 bytes

typedef struct {
  char c;
  int i;
} __attribute__((packed)) packed_after_t;              // 5

typedef struct __attribute__((aligned(16))) {
  int i;
} aligned16_t;                                         // 16


typedef struct __attribute__((aligned(64))) {
  float4 v;
  char tail;
} aligned64_t;                                         // 64

typedef struct {
  char c;
  packed_t p;                                          // at 1
  char d;
} holds_packed_t;                                      // 13

#define OFFSET(s, m) ((int)((__private char*)&(s).m - (__private char*)&(s)))

__kernel void layout(__global int* o) {
  packed_t p;
  holds_packed_t h;
  __attribute__((aligned(32))) int x = 1;
  int y __attribute__((aligned(64))) = 2;
  o[0] = (int)sizeof(packed_t);
  o[1] = (int)sizeof(packed_after_t);
  o[2] = (int)sizeof(aligned16_t);
  o[3] = (int)sizeof(aligned64_t[2]);
  o[4] = (int)sizeof(aligned64_t);
  o[5] = (int)sizeof(holds_packed_t);
  o[6] = (int)sizeof(aligned16_t[3]);
  o[7] = OFFSET(p, i) * 100 + OFFSET(p, s) * 10 + OFFSET(p, f);  // 1 5 7
  o[8] = (int)sizeof(packed_after_t[3]);
  o[9] = OFFSET(h, p) * 100 + OFFSET(h, d);
  o[10] = ((size_t)&x % 32 == 0) + ((size_t)&y % 64 == 0) * 10 + x + y;
}

// aligned(N) on struct members (6.11.1): a member's offset is a multiple
// of it, and the struct's alignment is at least it.
typedef struct {
  char c;
  int i __attribute__((aligned(8)));                   // at 8
  char d __attribute__((aligned(32)));                 // at 32
} members_t;                                           // 64

typedef struct {
  short s;
  members_t m;                                         // at 32
} holds_members_t;                                     // 96

__kernel void aligned_members(__global int* o) {
  members_t m;
  holds_members_t h;
  o[0] = (int)sizeof(members_t);
  o[1] = OFFSET(m, i);
  o[2] = OFFSET(m, d);
  o[3] = (int)sizeof(holds_members_t);
  o[4] = OFFSET(h, m);
  o[5] = OFFSET(h, m.d);
}

// aligned(N) on __local arrays declared in a kernel (two of 128 bytes,
// so that a base address that happens to be aligned cannot hide a
// missing alignment).
__kernel void local_aligned(__global int* o) {
  __local char a[3];
  __local int b[8] __attribute__((aligned(128)));
  __local int c[8] __attribute__((aligned(128)));
  __local short d[4] __attribute__((aligned(64)));
  __local char e __attribute__((aligned(32)));
  size_t l = get_local_id(0);
  a[l % 3] = 1; b[l % 8] = 2; c[l % 8] = 3; d[l % 4] = 4; e = 5;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[0] = ((size_t)b % 128 == 0) + ((size_t)c % 128 == 0) * 10;
  o[1] = (size_t)d % 64 == 0;
  o[2] = (size_t)&e % 32 == 0;
  o[3] = a[0] + b[1] + c[2] + d[3] + e;
}

// A packed struct array in a __global buffer of bytes: each element's
// fields sit at unaligned addresses.
__kernel void packed_data(__global const packed_t* in, __global int* o) {
  size_t i = get_global_id(0);
  __global const packed_t* e = &in[i];
  o[i * 4 + 0] = e->c;
  o[i * 4 + 1] = e->i;
  o[i * 4 + 2] = in[i].s;
  o[i * 4 + 3] = (int)(e->f * 4.0f);
}

// Loop pragmas: the loops compute what they would without them.
__kernel void unrolled(__global int* o, int n) {
  int i = (int)get_global_id(0);
  int a = 0, b = 0, c = 1, d = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) a += k * i;
#pragma unroll 4
  for (int k = 0; k < n; ++k) b += k ^ i;
#pragma unroll 2
  for (int k = 0; k < 5; ++k) c *= 2;
#pragma nounroll
  for (int k = n; k > 0; k -= 3) d += k;
  int e = 0;
  int k = 0;
#pragma unroll 3
  while (k < n) e += k++;
  o[i * 5 + 0] = a;
  o[i * 5 + 1] = b;
  o[i * 5 + 2] = c;
  o[i * 5 + 3] = d;
  o[i * 5 + 4] = e;
}

#ifdef ENDIAN
// 6.11.3: endian(host) and endian(device) on pointer variables; on a
// little-endian host and device both leave the bytes as they are.
__kernel void endian(__global uint* o, __global const uint* in) {
  __global const uint* p __attribute__((endian(host))) = in;
  __global uint* q __attribute__((endian(device))) = o;
  q[get_global_id(0)] = p[get_global_id(0)];
}
#endif

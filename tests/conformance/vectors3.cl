// vectors3.cl: OpenCL C 1.2's 3-component vectors: the types (6.1.2) of
// every element type, their size and alignment, those of the
// 4-component type (6.1.5), in records, arrays and through pointers;
// literals (6.1.6), components (6.1.7: .xyz, .s012, .lo/.hi/.even/.odd,
// which see a 3-component vector as a 4-component one whose 4th
// component is undefined), operators, conversions and reinterpretations
// (6.2.4.2: as_float3 of a float4 keeps its bits), vec_step (4), and the
// built-ins that must not see the 4th lane of the storage: the geometric
// ones, any and all, integer division (whose 4th lane must not trap), and
// vload3/vstore3 (6.12.7), which read and write exactly 3 elements.
// The kernels plant values in that 4th lane (as_int3 of an int4) where a
// built-in could see it. Every output is a defined component: a store of
// a whole 3-component vector through a pointer also writes its padding,
// which the specification leaves undefined.
// The runs and their expected outputs are in manifest.txt.

typedef struct {
  char c;
  float3 v;
} holder3_t;

typedef struct {
  char c;
  int3 i;
  short3 s;
  double3 d;
} layout3_t;

__kernel void three(__global float* f, __global int* o) {
  float3 a = (float3)(1.0f, 2.0f, 3.0f);
  float3 b = a * 2.0f + (float3)(0.5f);
  f[0] = b.x; f[1] = b.y; f[2] = b.z;
  int3 i = (int3)(4, 5, 6);
  o[0] = i.x + i.y * 10 + i.z * 100;
  o[1] = (int)sizeof(float3);
  o[2] = (int)sizeof(int3);
  o[3] = (int)sizeof(holder3_t);
  vstore3((float3)(7.0f, 8.0f, 9.0f), 1, f);
  float3 m = vload3(1, f);
  f[6] = m.x + m.y + m.z;
  float4 w = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  float3 s = w.xyz;
  f[7] = s.z;
  o[4] = (int)sizeof(vload3(0, f));
}

// A program-scope table of 3-component vectors (16 bytes apart).
__constant float3 kPoints[2] = {(float3)(1.0f, 2.0f, 3.0f), (float3)(4.0f)};

// Sizes (6.1.5), a record's layout, an array's and a pointer's stride,
// vec_step of types and of values.
__kernel void three_layout(__global int* o, __global float3* p) {
  o[0] = sizeof(char3);   o[1] = sizeof(uchar3);
  o[2] = sizeof(short3);  o[3] = sizeof(ushort3);
  o[4] = sizeof(int3);    o[5] = sizeof(uint3);
  o[6] = sizeof(long3);   o[7] = sizeof(ulong3);
  o[8] = sizeof(float3);  o[9] = sizeof(double3);
  layout3_t t;
  __private char* base = (__private char*)&t;
  o[10] = sizeof(layout3_t);
  o[11] = (int)((__private char*)&t.i - base);
  o[12] = (int)((__private char*)&t.s - base);
  o[13] = (int)((__private char*)&t.d - base);
  float3 arr[3];
  o[14] = sizeof(arr);
  o[15] = (int)((__global char*)(p + 2) - (__global char*)p);
  o[16] = vec_step(float3);
  o[17] = vec_step(t.i);
  o[18] = vec_step(char3) + vec_step(double3);
  o[19] = sizeof(holder3_t);
  __constant float3* k = kPoints;
  o[20] = (int)(k[0].z * 10.0f + k[1].y) +
          (int)((__constant char*)(k + 1) - (__constant char*)k) * 100;
}

// Literals with scalar and vector parts, splats, implicit widening of a
// scalar, swizzles read and written, components of an argument.
__kernel void three_forms(__global float* f, float3 arg) {
  float3 a = (float3)(1.0f, 2.0f, 3.0f);
  float2 xy = (float2)(4.0f, 5.0f);
  vstore3((float3)(xy, 6.0f), 0, f);                  // 0..2
  vstore3((float3)(-1.0f, a.yz), 0, f + 3);           // 3..5
  vstore3((float3)(2.5f) + (float3)0.5f, 0, f + 6);   // 6..8
  vstore3(a * 2 + 1, 0, f + 9);                       // 9..11
  vstore3(arg.zyx, 0, f + 12);                        // 12..14
  vstore3(arg.s210 + arg.s012, 0, f + 15);            // 15..17
  f[18] = a.lo.y;
  f[19] = a.hi.x;    // .hi is (z, undefined)
  f[20] = a.even.y;  // (x, z)
  f[21] = a.odd.x;   // (y, undefined)
  float3 h = a;
  h.xz = (float2)(10.0f, 30.0f);
  h.y += 0.25f;
  h.s20 = h.s02;
  h.hi.x = h.hi.x - 7.0f;
  vstore3(h, 0, f + 22);                              // 22..24
  float3 g = arg;
  g.zx++;
  vstore3(g, 0, f + 25);                              // 25..27
  f[28] = (float)(a.xyz.zyx.x + arg.odd.x);
}

// Comparisons give int3 masks; ?: and select pick per component;
// conversions and reinterpretations; the other element types.
__kernel void three_ops(__global int* o, __global float* f,
                        __global long* l, __global double* d, int3 iarg) {
  float3 a = (float3)(1.0f, 2.0f, 3.0f);
  float3 b = (float3)(4.0f, 5.0f, 6.0f);
  float3 c = (float3)(-1.0f, 2.0f, 3.0f);
  int3 m = a > (float3)(1.5f);
  int3 n = a == c;
  vstore3(m, 0, o);                                   // 0..2
  vstore3(!m, 0, o + 3);                              // 3..5
  vstore3(m && (int3)(1, 0, 1), 0, o + 6);            // 6..8
  vstore3(n || (int3)(1, 0, 0), 0, o + 9);            // 9..11
  vstore3(m ? b : c, 0, f);                           // f 0..2
  vstore3(select(b, c, iarg < 0), 0, f + 3);          // f 3..5
  vstore3(convert_int3(b * 1.5f), 0, o + 12);         // 12..14
  vstore3(convert_int3_rte(b * 1.5f), 0, o + 15);     // 15..17
  vstore3(convert_int3(convert_uchar3_sat(iarg * 100)), 0, o + 18);
  vstore3(convert_float3(iarg) / 2, 0, f + 6);        // f 6..8
  float4 wide = as_float4(a);
  vstore3(wide.xyz, 0, f + 9);                        // f 9..11
  float3 narrow = as_float3((float4)(7.0f, 8.0f, 9.0f, 10.0f));
  vstore3(narrow, 0, f + 12);                         // f 12..14
  vstore3(as_int3(a), 0, o + 21);                     // 21..23
  char3 ch = (char3)(1, -2, 3) * (char)3;
  uchar3 uc = (uchar3)(250, 5, 7) + (uchar3)(10);
  short3 sh = (short3)(1000, -2000, 3000) + (short3)(1);
  ushort3 us = (ushort3)(65535, 1, 2) * (ushort)2;
  o[24] = ch.x + ch.y * 100 + ch.z * 10000;
  o[25] = uc.x + uc.y * 1000 + uc.z * 1000000;
  o[26] = sh.x + sh.y + sh.z * 10;
  o[27] = us.x + us.y * 100000 + us.z * 1000000;
  uint3 ui = as_uint3(iarg) >> 28;
  o[28] = (int)(ui.x + ui.y * 100 + ui.z * 10000);
  long3 lg = (long3)(1L << 40, -5L, 7L) >> 1;
  ulong3 ul = (ulong3)(1UL, 2UL, 3UL) << 62;
  vstore3(lg, 0, l);                                  // l 0..2
  vstore3(as_long3(ul), 0, l + 3);                    // l 3..5
  double3 db = (double3)(0.5, 1.5, -2.5) * 2.0 + 0.25;
  vstore3(db, 0, d);                                  // d 0..2
  vstore3(convert_double3(iarg) * 0.5, 0, d + 3);     // d 3..5
  o[29] = vec_step(m);
}

// The built-ins that must ignore the 4th lane of the storage, given
// vectors whose 4th lane holds a value (as_T3 of a 4-component vector
// keeps its bits, 6.2.4.2).
__kernel void three_lanes(__global float* f, __global int* o,
                          __global double* d) {
  float3 p = as_float3((float4)(3.0f, 4.0f, 12.0f, 100.0f));
  float3 q = as_float3((float4)(1.0f, 2.0f, 11.0f, -50.0f));
  f[0] = dot(p, q);
  f[1] = length(p);
  f[2] = distance(p, q);
  f[3] = fast_length(p);
  f[4] = fast_distance(p, q);
  float3 u = as_float3((float4)(0.0f, 3.0f, 4.0f, 100.0f));
  vstore3(normalize(u), 0, f + 5);                    // 5..7
  vstore3(fast_normalize(u), 0, f + 8);               // 8..10
  vstore3(cross(as_float3((float4)(1.0f, 2.0f, 3.0f, 9.0f)),
                as_float3((float4)(4.0f, 5.0f, 6.0f, 9.0f))), 0, f + 11);
  double3 dp = as_double3((double4)(3.0, 4.0, 12.0, 100.0));
  double3 dq = as_double3((double4)(1.0, 2.0, 11.0, -50.0));
  d[0] = dot(dp, dq);
  d[1] = length(dp);
  d[2] = distance(dp, dq);
  vstore3(normalize(as_double3((double4)(0.0, 3.0, 4.0, 7.0))), 0, d + 3);
  vstore3(cross(dp, dq), 0, d + 6);                   // d 6..8
  o[0] = any(as_int3((int4)(0, 0, 0, -1)));
  o[1] = all(as_int3((int4)(-1, -1, -1, 0)));
  o[2] = any(as_int3((int4)(0, -1, 0, 0)));
  o[3] = all(as_int3((int4)(-1, 0, -1, -1)));
  o[4] = any(as_char3((char4)(0, 0, 0, -1)));
  o[5] = all(as_long3((long4)(-1, -1, -1, 0)));
  o[6] = all(as_short3((short4)(-1, -2, -3, 5)));
  // Integer division and remainder: the 4th lanes (INT_MIN / -1, x / 0)
  // must neither trap nor change the 3 others.
  int3 num = as_int3((int4)(10, -21, INT_MIN, INT_MIN));
  int3 den = as_int3((int4)(3, 4, 7, -1));
  int3 den0 = as_int3((int4)(3, 4, 7, 0));
  vstore3(num / den, 0, o + 7);                       // 7..9
  vstore3(num % den, 0, o + 10);                      // 10..12
  vstore3(num / den0, 0, o + 13);                     // 13..15
  vstore3(num % den0, 0, o + 16);                     // 16..18
  uint3 un = as_uint3((int4)(100, 7, 9, 5));
  vstore3(as_int3(un / as_uint3((int4)(7, 7, 2, 0))), 0, o + 19);  // 19..21
  int3 acc = num;
  acc /= den0;
  vstore3(acc, 0, o + 22);                            // 22..24
  float3 big = as_float3((float4)(-4.0f, 9.0f, 16.0f, -1.0f));
  vstore3(sqrt(fabs(big)), 0, f + 14);                // 14..16
  vstore3(clamp(big, -1.0f, 10.0f), 0, f + 17);       // 17..19
  vstore3(mix(p, q, 0.5f), 0, f + 20);                // 20..22
  vstore3(max(as_int3((int4)(5, -5, 0, 99)), (int3)(1)), 0, o + 25);
}

// vload3 and vstore3 read and write exactly 3 elements at p + 3 * offset,
// at the ends of their buffers (checked mode checks those 3 only), from
// every address space.
__constant float kTable3[6] = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};

__kernel void three_vload(__global const int* in, __global int* o,
                          __global float* f, __local float* scratch) {
  int3 v = vload3(1, in);                 // in[3..5]: the last three
  int3 w = vload3(0, in + 1);             // in[1..3], not aligned
  vstore3(v * 10, 1, o);                  // o[3..5]; o[6] stays
  vstore3(w, 0, o + 7);                   // o[7..9]; o[10] stays
  float priv[6] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  float3 x = vload3(1, priv);             // 4 5 6
  float3 y = vload3(1, kTable3);          // 3.5 4.5 5.5
  vstore3(x + y, 0, scratch);
  __local float3 tile[1];
  float3 keep = x * 2.0f;                 // lives across the barrier
  tile[get_local_id(0)] = keep;
  barrier(CLK_LOCAL_MEM_FENCE);
  float3 z = vload3(0, scratch);
  vstore3(x, 0, f);                       // f[0..2]
  vstore3(z, 1, f);                       // f[3..5]
  vstore3(tile[0] + keep, 2, f);          // f[6..8]: the last three
  o[0] = v.x + v.y * 10 + v.z * 100;
  o[1] = w.x + w.y * 10 + w.z * 100;
  o[2] = (int)sizeof(vload3(0, in));
}

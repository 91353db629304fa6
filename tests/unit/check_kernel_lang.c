// check_kernel_lang.c: the kernel language end to end: every feature is
// compiled, run on the device under test (check_util.h) and its results
// checked on the host. Scalar and vector types, work-item functions over
// 1-, 2- and 3-D grids, __constant tables, helpers, the preprocessor,
// early returns, barriers in every shape (regions and fibers on the CPU),
// local memory, atomics, and a light touch of the built-in functions.
// Device-generic: on the CPU each kernel's execution mode is checked too.
// SPDX-License-Identifier: MIT
#include <math.h>

#include "kernel_fixture.h"

//===-- Helpers (the fixture is kernel_fixture.h's) ---------------------===//

// A buffer of |n| elements on the device under test, each of whose bytes
// is 0xA5 (a sentinel that shows elements the kernel did not write).
static dc_buffer_t* sentinel_buffer(dc_dtype_t dtype, size_t n) {
  dc_buffer_t* b = dc_test_buffer_new(dut, dtype, n, "lang");
  fill_bytes(b, 0xA5);
  return b;
}

static void dispatch(dc_kernel_t* k, uint32_t dims, const size_t* global,
                     const size_t* local, const size_t* offset,
                     const dc_arg_t* args, size_t n) {
  dc_dispatch_t grid = {.dims = dims};
  for (uint32_t d = 0; d < dims; ++d) {
    grid.global[d] = global[d];
    grid.local[d] = local ? local[d] : 0;
    grid.offset[d] = offset ? offset[d] : 0;
  }
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, n));
}

static void dispatch1(dc_kernel_t* k, size_t global, size_t local,
                      const dc_arg_t* args, size_t n) {
  dispatch(k, 1, &global, local ? &local : NULL, NULL, args, n);
}

#define SENTINEL32 ((int32_t)0xA5A5A5A5)
#define MAX_OF(a, b) ((a) > (b) ? (a) : (b))

//===-- core: scalar types ----------------------------------------------===//

static const char kScalars[] =
    "__kernel void scalars(__global const char* cin, __global int* o,\n"
    "                      __global long* lo, __global ulong* ulo,\n"
    "                      __global double* d, __global uchar* uo) {\n"
    "  o[0] = cin[0];\n"
    "  char c = (char)200; o[1] = c;\n"
    "  o[2] = c < 0;\n"
    "  uchar u = (uchar)200; o[3] = u;\n"
    "  unsigned char u2 = 255; u2 += 1; o[4] = u2;\n"
    "  signed char sc = -3; o[5] = sc;\n"
    "  short s = (short)40000; o[6] = s;\n"
    "  ushort us = (ushort)70000; o[7] = us;\n"
    "  o[8] = sizeof(char) * 1000 + sizeof(short) * 100 + sizeof(int) * 10;\n"
    "  o[9] = sizeof(long) * 100 + sizeof(double) * 10 + sizeof(float);\n"
    "  o[10] = sizeof(float4) + sizeof(int8) * 100 +\n"
    "          sizeof(double2) * 10000;\n"
    "  o[11] = -7 / 2;\n"
    "  o[12] = -7 % 2;\n"
    "  uint big = 0xFFFFFFFFu; big += 2; o[13] = (int)big;\n"
    "  o[14] = (int)2.9f + (int)-2.9f;\n"
    "  bool b = 5; o[15] = b;\n"
    "  size_t z = get_global_size(0); o[16] = (int)z * 3;\n"
    "  o[17] = cin[1] + cin[2];\n"
    "  o[18] = (cin[2] >> 1);\n"
    "  unsigned u3 = 7; signed int si = -9; o[19] = u3 + si;\n"
    "  lo[0] = 3000000000L * 3;\n"
    "  lo[1] = (long)INT_MAX + 1;\n"
    "  lo[2] = -(1L << 62);\n"
    "  long m = 1; for (int i = 0; i < 40; ++i) m *= 2; lo[3] = m;\n"
    "  lo[4] = LONG_MIN;\n"
    "  ulo[0] = 0xFFFFFFFFFFFFFFFFUL;\n"
    "  ulo[1] = (ulong)1 << 63;\n"
    "  unsigned long ul = 10; ul -= 11; ulo[2] = ul;\n"
    "  ulo[3] = (ulong)0x123456789UL * 16 >> 4;\n"
    "  ulo[4] = (ulong)UINT_MAX * UINT_MAX;\n"
    "  d[0] = 1.0 / 3.0;\n"
    "  d[1] = 1e300 * 10.0;\n"
    "  d[2] = (float)(1.0 / 3.0);\n"
    "  d[3] = 0.1 + 0.2;\n"
    "  uo[0] = cin[0];\n"
    "  uo[1] = (uchar)(cin[3] * 2);\n"
    "}\n"
    "__kernel void args(__global long* o, __global double* od, char c,\n"
    "                   uchar uc, short s, ushort us, int i, uint ui,\n"
    "                   long l, ulong ul, float f, double d) {\n"
    "  o[0] = c; o[1] = uc; o[2] = s; o[3] = us; o[4] = i; o[5] = ui;\n"
    "  o[6] = l; o[7] = (long)ul; o[8] = (long)(f * 4.0f);\n"
    "  od[0] = d; od[1] = f;\n"
    "}\n";

START_TEST(test_kernel_lang_scalar_types) {
  dc_program_t* p = build_on(dut, "scalars.cl", kScalars, NULL);
  int8_t cin[4] = {-1, 127, -128, 5};
  dc_buffer_t* bc = buffer_on(dut, DC_DTYPE_I8, 4, cin);
  dc_buffer_t* bo = sentinel_buffer(DC_DTYPE_I32, 20);
  dc_buffer_t* blo = sentinel_buffer(DC_DTYPE_I64, 5);
  dc_buffer_t* bulo = sentinel_buffer(DC_DTYPE_U64, 5);
  dc_buffer_t* bd = sentinel_buffer(DC_DTYPE_F64, 4);
  dc_buffer_t* buo = sentinel_buffer(DC_DTYPE_U8, 2);
  dc_arg_t args[6] = {dc_arg_buffer(bc),  dc_arg_buffer(bo),
                      dc_arg_buffer(blo), dc_arg_buffer(bulo),
                      dc_arg_buffer(bd),  dc_arg_buffer(buo)};
  dispatch1(kernel_of(p, "scalars"), 1, 0, args, 6);
  const int32_t* o = contents(bo);
  const int32_t want[20] = {-1, -56, 1, 200, 0, -3, -25536, 4464, 1240, 884,
                            163216, -3, -1, 1, 0, 1, 3, -1, -64, -2};
  for (int i = 0; i < 20; ++i) {
    ck_assert_msg(o[i] == want[i], "o[%d] = %d, expected %d", i, o[i],
                  want[i]);
  }
  const int64_t* lo = contents(blo);
  ck_assert_int_eq(lo[0], 9000000000LL);
  ck_assert_int_eq(lo[1], 2147483648LL);
  ck_assert_int_eq(lo[2], -(1LL << 62));
  ck_assert_int_eq(lo[3], 1LL << 40);
  ck_assert_int_eq(lo[4], INT64_MIN);
  const uint64_t* ulo = contents(bulo);
  ck_assert_uint_eq(ulo[0], UINT64_MAX);
  ck_assert_uint_eq(ulo[1], 1ULL << 63);
  ck_assert_uint_eq(ulo[2], UINT64_MAX);
  ck_assert_uint_eq(ulo[3], 0x123456789ULL);
  ck_assert_uint_eq(ulo[4], (uint64_t)UINT32_MAX * UINT32_MAX);
  const double* d = contents(bd);
  ck_assert(d[0] == 1.0 / 3.0);  // double precision, not float
  volatile double big = 1e300;
  ck_assert(d[1] == big * 10.0);
  ck_assert(d[2] == (double)(float)(1.0 / 3.0));
  ck_assert(d[3] == 0.1 + 0.2);
  const uint8_t* uo = contents(buo);
  ck_assert_uint_eq(uo[0], 255);
  ck_assert_uint_eq(uo[1], 10);

  // Every scalar type as an argument, with values that show sign and width.
  dc_buffer_t* bargs = sentinel_buffer(DC_DTYPE_I64, 9);
  dc_buffer_t* bdargs = sentinel_buffer(DC_DTYPE_F64, 2);
  dc_arg_t a[12] = {
      dc_arg_buffer(bargs),      dc_arg_buffer(bdargs),
      dc_arg_i8(-100),           dc_arg_u8(250),
      dc_arg_i16(-30000),        dc_arg_u16(65000),
      dc_arg_i32(-2000000000),   dc_arg_u32(4000000000u),
      dc_arg_i64(-(1LL << 50)),  dc_arg_u64((1ULL << 62) + 5),
      dc_arg_f32(-1.25f),        dc_arg_f64(1.0 / 7.0)};
  dispatch1(kernel_of(p, "args"), 1, 0, a, 12);
  const int64_t* ao = contents(bargs);
  const int64_t awant[9] = {-100,         250,          -30000,
                            65000,        -2000000000,  4000000000LL,
                            -(1LL << 50), (1LL << 62) + 5, -5};
  for (int i = 0; i < 9; ++i) {
    ck_assert_msg(ao[i] == awant[i], "argument %d: %lld, expected %lld", i,
                  (long long)ao[i], (long long)awant[i]);
  }
  const double* ad = contents(bdargs);
  ck_assert(ad[0] == 1.0 / 7.0);
  ck_assert(ad[1] == -1.25);
  dc_buffer_release(bargs);
  dc_buffer_release(bdargs);
  dc_buffer_release(bc);
  dc_buffer_release(bo);
  dc_buffer_release(blo);
  dc_buffer_release(bulo);
  dc_buffer_release(bd);
  dc_buffer_release(buo);
  dc_program_release(p);
}
END_TEST

//===-- core: work-item functions ---------------------------------------===//

// Every work-item writes what each work-item function returns for
// dimensions 0 to 3 into its own record: work_dim, then per dimension
// global id, local id, group id, global size, local size, groups, offset.
#define FIELDS 29

static const char kGrid[] =
    "#define FIELDS 29\n"
    "#define RECORD(o) do { \\\n"
    "  size_t x = get_global_id(0) - get_global_offset(0); \\\n"
    "  size_t y = get_global_id(1) - get_global_offset(1); \\\n"
    "  size_t z = get_global_id(2) - get_global_offset(2); \\\n"
    "  __global ulong* r = (o) + ((z * get_global_size(1) + y) * \\\n"
    "                             get_global_size(0) + x) * FIELDS; \\\n"
    "  r[0] = get_work_dim(); \\\n"
    "  for (uint d = 0; d < 4; ++d) { \\\n"
    "    r[1 + 7 * d] = get_global_id(d); \\\n"
    "    r[2 + 7 * d] = get_local_id(d); \\\n"
    "    r[3 + 7 * d] = get_group_id(d); \\\n"
    "    r[4 + 7 * d] = get_global_size(d); \\\n"
    "    r[5 + 7 * d] = get_local_size(d); \\\n"
    "    r[6 + 7 * d] = get_num_groups(d); \\\n"
    "    r[7 + 7 * d] = get_global_offset(d); \\\n"
    "  } } while (0)\n"
    "void record(__global ulong* o) { RECORD(o); }\n"
    "size_t flat_local(void) {\n"
    "  return (get_local_id(2) * get_local_size(1) + get_local_id(1)) *\n"
    "         get_local_size(0) + get_local_id(0);\n"
    "}\n"
    "__kernel void loop_direct(__global ulong* o) { RECORD(o); }\n"
    "__kernel void loop_helper(__global ulong* o) { record(o); }\n"
    "__kernel void regions_direct(__global ulong* o, __local int* t) {\n"
    "  size_t l = flat_local();\n"
    "  t[l] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  RECORD(o);\n"
    "}\n"
    "__kernel void regions_helper(__global ulong* o, __local int* t) {\n"
    "  t[flat_local()] = 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (t[0] == 1) record(o);\n"
    "}\n"
    "void group_sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "__kernel void fibers_helper(__global ulong* o, __local int* t) {\n"
    "  t[flat_local()] = 1;\n"
    "  group_sync();\n"
    "  record(o);\n"
    "}\n";

static void check_records(const char* kernel, const uint64_t* r,
                          uint32_t dims, const size_t* global,
                          const size_t* local, const size_t* offset) {
  size_t g[4] = {1, 1, 1, 1}, l[4] = {1, 1, 1, 1}, o[4] = {0, 0, 0, 0};
  for (uint32_t d = 0; d < dims; ++d) {
    g[d] = global[d];
    l[d] = local[d];
    o[d] = offset[d];
  }
  for (size_t z = 0; z < g[2]; ++z) {
    for (size_t y = 0; y < g[1]; ++y) {
      for (size_t x = 0; x < g[0]; ++x) {
        const uint64_t* rec = r + ((z * g[1] + y) * g[0] + x) * FIELDS;
        size_t id[4] = {x, y, z, 0};
        ck_assert_msg(rec[0] == dims, "%s: (%zu,%zu,%zu): work_dim %llu",
                      kernel, x, y, z, (unsigned long long)rec[0]);
        for (int d = 0; d < 4; ++d) {
          uint64_t want[7] = {o[d] + id[d], id[d] % l[d], id[d] / l[d],
                              g[d],         l[d],         g[d] / l[d],
                              o[d]};
          if (d == 3) {  // beyond every dispatch: ids 0, sizes 1
            want[0] = want[1] = want[2] = want[6] = 0;
            want[3] = want[4] = want[5] = 1;
          }
          for (int f = 0; f < 7; ++f) {
            ck_assert_msg(rec[1 + 7 * d + f] == want[f],
                          "%s: %u-D item (%zu,%zu,%zu): field %d of "
                          "dimension %d is %llu, expected %llu",
                          kernel, dims, x, y, z, f, d,
                          (unsigned long long)rec[1 + 7 * d + f],
                          (unsigned long long)want[f]);
          }
        }
      }
    }
  }
}

START_TEST(test_kernel_lang_work_item_functions_in_every_dimension) {
  static const struct {
    uint32_t dims;
    size_t global[3], local[3], offset[3];
  } kGrids[] = {
      {1, {24}, {6}, {5}},
      {2, {8, 6}, {4, 3}, {2, 7}},
      {3, {4, 6, 2}, {2, 3, 1}, {1, 2, 3}},
      {3, {2, 2, 4}, {1, 2, 4}, {0, 0, 0}},
  };
  static const char* const kKernels[] = {"loop_direct", "loop_helper",
                                         "regions_direct", "regions_helper",
                                         "fibers_helper"};
  static const char* const kModes[] = {"loop", "loop", "regions", "regions",
                                       "fibers"};
  dc_program_t* p = build_on(dut, "grid.cl", kGrid, NULL);
  for (size_t k = 0; k < 5; ++k) {
    dc_kernel_t* kernel = kernel_of(p, kKernels[k]);
    expect_dut_mode(kernel, kModes[k]);
    for (size_t c = 0; c < sizeof(kGrids) / sizeof(kGrids[0]); ++c) {
      size_t items = 1, group = 1;
      for (uint32_t d = 0; d < kGrids[c].dims; ++d) {
        items *= kGrids[c].global[d];
        group *= kGrids[c].local[d];
      }
      dc_buffer_t* out = sentinel_buffer(DC_DTYPE_U64, items * FIELDS);
      dc_arg_t args[2] = {dc_arg_buffer(out),
                          dc_arg_local(group * sizeof(int32_t))};
      dispatch(kernel, kGrids[c].dims, kGrids[c].global, kGrids[c].local,
               kGrids[c].offset, args, k < 2 ? 1 : 2);
      check_records(kKernels[k], contents(out), kGrids[c].dims,
                    kGrids[c].global, kGrids[c].local, kGrids[c].offset);
      dc_buffer_release(out);
    }
  }
  dc_program_release(p);
}
END_TEST

//===-- core: vectors ---------------------------------------------------===//

static const char kVectors[] =
    "float4 twice4(float4 v) { return v * 2.0f; }\n"
    "__kernel void vec(__global float* f, __global int* i, float4 arg,\n"
    "                  __global float4* fv, int4 iarg) {\n"
    "  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
    "  float4 s = (float4)(2.0f);\n"
    "  float4 r = a * s + 1.0f;\n"
    "  f[0] = r.x; f[1] = r.y; f[2] = r.z; f[3] = r.w;\n"
    "  float2 xy = a.xy; f[4] = xy.x; f[5] = xy.y;\n"
    "  float4 rev = a.wzyx; f[6] = rev.s0; f[7] = rev.s1; f[8] = rev.s2;\n"
    "  f[9] = rev.s3;\n"
    "  f[10] = a.s0 + a.S3;\n"
    "  float2 lo = a.lo, hi = a.hi; f[11] = lo.y; f[12] = hi.x;\n"
    "  float2 ev = a.even, od = a.odd; f[13] = ev.y; f[14] = od.x;\n"
    "  float4 q = a / (float4)(2.0f); f[15] = q.y;\n"
    "  float4 neg = -a; f[16] = neg.w;\n"
    "  f[17] = arg.x + arg.y * 10.0f + arg.z * 100.0f + arg.w * 1000.0f;\n"
    "  float8 e = (float8)(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);\n"
    "  float4 elo = e.lo; float4 ehi = e.hi; f[18] = elo.w; f[19] = ehi.x;\n"
    "  f[20] = e.s7;\n"
    "  float4 sw = e.s7654; f[21] = sw.y;\n"
    "  f[22] = (a + s).w;\n"
    "  float2 t = twice4(a).yx; f[23] = t.x * 10.0f + t.y;\n"
    "  float2 pr = (a * 3.0f).zw; f[24] = pr.x + pr.y;\n"
    "  double2 d2 = (double2)(0.5, 0.25); f[25] = (float)(d2.x + d2.y);\n"
    "  a.x = 10.0f; a.s2 = 30.0f; f[26] = a.x + a.z + a.y;\n"
    "  f[27] = fv[1].y;\n"
    "  float2 fxy = fv[1].xy; f[28] = fxy.x;\n"
    "  int4 b = (int4)(1, -2, 3, -4);\n"
    "  int4 c = (int4)(3);\n"
    "  int4 lt = b < c;\n"
    "  i[0] = lt.x; i[1] = lt.y; i[2] = lt.z; i[3] = lt.w;\n"
    "  int4 eq = b == (int4)(1, 2, 3, 4);\n"
    "  i[4] = eq.x; i[5] = eq.y; i[6] = eq.z; i[7] = eq.w;\n"
    "  int4 bits = (b & (int4)(6)) | (c << 4);\n"
    "  i[8] = bits.x; i[9] = bits.y; i[10] = bits.z; i[11] = bits.w;\n"
    "  int4 m = b * c - 1;\n"
    "  i[12] = m.x; i[13] = m.y; i[14] = m.z; i[15] = m.w;\n"
    "  int4 dv = b / 2;\n"
    "  i[16] = dv.x; i[17] = dv.y; i[18] = dv.z; i[19] = dv.w;\n"
    "  uint2 u2 = (uint2)(0xFFFFFFFFu, 1u); u2 += 1u;\n"
    "  i[20] = (int)u2.x; i[21] = (int)u2.y;\n"
    "  long4 l4 = (long4)(1L << 40); i[22] = (int)(l4.z >> 38);\n"
    "  int4 gt = a > (float4)(2.5f);\n"
    "  i[23] = gt.x; i[24] = gt.y; i[25] = gt.z; i[26] = gt.w;\n"
    "  int4 ne = b != c; i[27] = ne.x + ne.y * 10 + ne.z * 100;\n"
    "  i[28] = iarg.x + iarg.y + iarg.z + iarg.w;\n"
    "  int16 w = (int16)(7);\n"
    "  w.sA = 1; w.sf = 2; i[29] = w.s0 + w.sa * 10 + w.sF * 100;\n"
    "  uchar4 uc = (uchar4)(250, 5, 128, 0) + (uchar4)(10);\n"
    "  i[30] = uc.x + uc.y * 1000;\n"
    "  size_t g = get_global_id(0);\n"
    "  fv[g] = fv[g] * 2.0f + (float4)(0.0f, 1.0f, 2.0f, 3.0f);\n"
    "}\n";

START_TEST(test_kernel_lang_vectors) {
  dc_program_t* p = build_on(dut, "vec.cl", kVectors, NULL);
  dc_buffer_t* bf = sentinel_buffer(DC_DTYPE_F32, 29);
  dc_buffer_t* bi = sentinel_buffer(DC_DTYPE_I32, 31);
  float fvals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  dc_buffer_t* bfv = buffer_on(dut, DC_DTYPE_F32, 8, fvals);
  float arg[4] = {1, 2, 3, 4};
  int32_t iarg[4] = {10, 20, 30, -5};
  dc_arg_t args[5] = {dc_arg_buffer(bf), dc_arg_buffer(bi),
                      dc_arg_value(DC_DTYPE_F32, 4, arg),
                      dc_arg_buffer(bfv),
                      dc_arg_value(DC_DTYPE_I32, 4, iarg)};
  dispatch1(kernel_of(p, "vec"), 1, 0, args, 5);
  const float* f = contents(bf);
  const float fwant[29] = {3,  5, 7,    9, 1,  2,  4, 3,  2,  1,
                           5,  2, 3,    3, 2,  1,  -4, 4321, 3, 4,
                           7,  6, 6,    42, 21, 0.75f, 42, 6, 5};
  for (int k = 0; k < 29; ++k) {
    ck_assert_msg(f[k] == fwant[k], "f[%d] = %g, expected %g", k, f[k],
                  fwant[k]);
  }
  const int32_t* i = contents(bi);
  const int32_t iwant[31] = {-1, -1, 0,  -1, -1, 0,  -1, 0,  48, 54,
                             50, 52, 2,  -7, 8,  -13, 0, -1, 1,  -2,
                             0,  2,  4,  -1, 0,  -1, -1, -11, 55, 217,
                             15004};
  for (int k = 0; k < 31; ++k) {
    ck_assert_msg(i[k] == iwant[k], "i[%d] = %d, expected %d", k, i[k],
                  iwant[k]);
  }
  const float* fv = contents(bfv);
  for (int k = 0; k < 4; ++k) {
    ck_assert(fv[k] == fvals[k] * 2 + (float)k);  // work-item 0's vector
    ck_assert(fv[4 + k] == fvals[4 + k]);          // untouched
  }
  dc_buffer_release(bf);
  dc_buffer_release(bi);
  dc_buffer_release(bfv);
  dc_program_release(p);
}
END_TEST

// The vector forms C has no syntax for, which the code generators write
// out: literals with vector parts, typedef'd vector types, a cast of a
// scalar without parentheses, ?:, !, && and || on vectors, vec_step,
// several lanes assigned at once, and shift counts masked to the width.
static const char kVectorForms[] =
    "typedef float4 vec_t;\n"
    "__kernel void forms(__global float* f, __global int* i, int sh) {\n"
    "  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
    "  float2 b = (float2)(5.0f, 6.0f);\n"
    "  vec_t c = (vec_t)(a.xy, b);\n"
    "  f[0] = c.x; f[1] = c.y; f[2] = c.z; f[3] = c.w;\n"
    "  float4 d = (float4)2.0f;\n"
    "  f[4] = d.w;\n"
    "  int4 gt = a > (float4)(2.5f);\n"
    "  float4 s = gt ? a : d;\n"
    "  f[5] = s.x; f[6] = s.y; f[7] = s.z; f[8] = s.w;\n"
    "  int4 m = (int4)(1, 0, -1, 0);\n"
    "  int4 n = !m, both = m && gt, either = m || gt;\n"
    "  i[0] = n.x; i[1] = n.y; i[2] = n.z; i[3] = n.w;\n"
    "  i[4] = both.x; i[5] = both.y; i[6] = both.z; i[7] = both.w;\n"
    "  i[8] = either.x; i[9] = either.y; i[10] = either.z; i[11] = either.w;\n"
    "  i[12] = vec_step(float4) + vec_step(a.lo) * 10;\n"
    "  float4 v = a;\n"
    "  v.xy = b;\n"
    "  v.wx += (float2)(10.0f, 20.0f);\n"
    "  f[9] = v.x; f[10] = v.y; f[11] = v.z; f[12] = v.w;\n"
    "  v.zy = v.yz;\n"
    "  f[13] = v.y; f[14] = v.z;\n"
    "  float2 old = v.xy++;\n"
    "  f[15] = old.x; f[16] = v.x;\n"
    "  i[13] = 1 << sh;\n"
    "  int8 e = (int8)(m, (int2)(7), 8, 9);\n"
    "  i[14] = e.s4 + e.s7 * 10 + e.s2 * 100;\n"
    "}\n";

START_TEST(test_kernel_lang_vector_forms) {
  dc_program_t* p = build_on(dut, "forms.cl", kVectorForms, NULL);
  dc_buffer_t* bf = sentinel_buffer(DC_DTYPE_F32, 17);
  dc_buffer_t* bi = sentinel_buffer(DC_DTYPE_I32, 15);
  int32_t sh = 33;  // OpenCL masks a shift count to the width: 1 << 1
  dc_arg_t args[3] = {dc_arg_buffer(bf), dc_arg_buffer(bi),
                      dc_arg_value(DC_DTYPE_I32, 1, &sh)};
  dispatch1(kernel_of(p, "forms"), 1, 0, args, 3);
  const float* f = contents(bf);
  const float fwant[17] = {1, 2, 5, 6, 2, 2, 2, 3, 4,
                           25, 6, 3, 14, 3, 6, 25, 26};
  for (int k = 0; k < 17; ++k) {
    ck_assert_msg(f[k] == fwant[k], "f[%d] = %g, expected %g", k, f[k],
                  fwant[k]);
  }
  const int32_t* i = contents(bi);
  const int32_t iwant[15] = {0, -1, 0, -1, 0, 0, -1, 0,
                             -1, 0, -1, -1, 24, 2, -3};
  for (int k = 0; k < 15; ++k) {
    ck_assert_msg(i[k] == iwant[k], "i[%d] = %d, expected %d", k, i[k],
                  iwant[k]);
  }
  dc_buffer_release(bf);
  dc_buffer_release(bi);
  dc_program_release(p);
}
END_TEST

//===-- core: constants, typedefs, helpers, the preprocessor ------------===//

static const char kProgramScope[] =
    "#define N 8\n"
    "#define SQR(x) ((x) * (x))\n"
    "typedef float real;\n"
    "typedef int4 ivec;\n"
    "typedef unsigned int count_t;\n"
    "__constant real kWeights[N] = {1, 2, 3, 4, 5, 6, 7, 8};\n"
    "__constant int kOffsets[2][2] = {{1, 2}, {3, 4}};\n"
    "__constant real kScale = 0.5f;\n"
    "constant float4 kVec = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
    "__constant int4 kQuad[2] = {(int4)(1, 2, 3, 4), (int4)(7)};\n"
    "int fact(int n) { int r = 1; for (; n > 1; --n) r *= n; return r; }\n"
    "int fib(int n) {\n"
    "  int a = 0, b = 1;\n"
    "  for (; n > 0; --n) { int t = a + b; a = b; b = t; }\n"
    "  return a;\n"
    "}\n"
    "int id_twice(void) { return 2 * (int)get_global_id(0); }\n"
    "int via(int x) { return x + id_twice() - 2 * (int)get_global_id(0); }\n"
    "void store(__global real* o, real v) { o[get_global_id(0)] = v; }\n"
    "real weight(count_t i) { return kWeights[i % N] * kScale; }\n"
    "__kernel void tables(__global real* out, __constant int* extra,\n"
    "                     __global int* ints) {\n"
    "  count_t i = get_global_id(0);\n"
    "  ivec v = (int4)(kOffsets[0][0], kOffsets[0][1], kOffsets[1][0],\n"
    "                  kOffsets[1][1]);\n"
    "  store(out, weight(i) + SQR(v.w) + extra[i % 3] + BIAS + kVec.z +\n"
    "             kQuad[1].y + kQuad[0].w);\n"
    "  ints[i] = via(fact(i % 8) + fib(i % 10) * 100000);\n"
    "}\n";

START_TEST(test_kernel_lang_constants_typedefs_helpers_and_defines) {
  dc_program_t* p = build_on(dut, "scope.cl", kProgramScope, "-D BIAS=100");
  const size_t n = 40;
  int32_t extra[3] = {1000, 2000, 3000};
  dc_buffer_t* be = buffer_on(dut, DC_DTYPE_I32, 3, extra);
  dc_buffer_t* bo = sentinel_buffer(DC_DTYPE_F32, n);
  dc_buffer_t* bi = sentinel_buffer(DC_DTYPE_I32, n);
  dc_arg_t args[3] = {dc_arg_buffer(bo), dc_arg_buffer(be), dc_arg_buffer(bi)};
  dispatch1(kernel_of(p, "tables"), n, 8, args, 3);
  const float* o = contents(bo);
  const int32_t* ints = contents(bi);
  static const int kFact[8] = {1, 1, 2, 6, 24, 120, 720, 5040};
  static const int kFib[10] = {0, 1, 1, 2, 3, 5, 8, 13, 21, 34};
  for (size_t i = 0; i < n; ++i) {
    float want = (float)((i % 8) + 1) * 0.5f + 16.0f + (float)extra[i % 3] +
                 100.0f + 3.0f + 7.0f + 4.0f;
    ck_assert_msg(o[i] == want, "out[%zu] = %g, expected %g", i, o[i], want);
    ck_assert_int_eq(ints[i], kFact[i % 8] + kFib[i % 10] * 100000);
  }
  dc_buffer_release(be);
  dc_buffer_release(bo);
  dc_buffer_release(bi);
  dc_program_release(p);
}
END_TEST

//===-- core: early returns ---------------------------------------------===//

static const char kReturns[] =
    "__kernel void ret_loop(__global int* o, int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  o[i] = 1;\n"
    "  for (int k = 0; k < 100; ++k) {\n"
    "    if (k == i % 7) { o[i] += k; return; }\n"
    "  }\n"
    "  o[i] = -1;\n"
    "}\n"
    "__kernel void ret_switch(__global int* o) {\n"
    "  int i = get_global_id(0);\n"
    "  switch (i % 3) {\n"
    "    case 0: o[i] = 10; return;\n"
    "    case 1: o[i] = 11; break;\n"
    "    default: o[i] = 12;\n"
    "  }\n"
    "  o[i] += 100;\n"
    "}\n"
    "__kernel void ret_regions(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0), g = get_global_id(0);\n"
    "  if (get_group_id(0) == 1) return;\n"  // the whole group: uniform
    "  t[l] = l * 2;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int v = t[(l + 1) % get_local_size(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (l % 3 == 0) return;\n"
    "  o[g] = v;\n"
    "  for (int k = 0; k < 8; ++k) {\n"
    "    if (k == l % 4) { o[g] += 1000 * k; return; }\n"
    "  }\n"
    "  o[g] = -1;\n"
    "}\n"
    "__kernel void ret_fibers(__global int* o, __local int* t, int m) {\n"
    "  int l = get_local_id(0);\n"
    "  t[l] = l;\n"
    "  switch (m) { case 1: barrier(CLK_LOCAL_MEM_FENCE); break; }\n"
    "  if (l % 2) return;\n"
    "  for (int k = 0; ; ++k) {\n"
    "    if (k == 3) { o[get_global_id(0)] = t[(l + 1) % 16] + 50; return; }\n"
    "  }\n"
    "}\n";

START_TEST(test_kernel_lang_early_return) {
  dc_program_t* p = build_on(dut, "ret.cl", kReturns, NULL);
  const size_t n = 64;
  dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, n);

  dc_kernel_t* k = kernel_of(p, "ret_loop");
  expect_dut_mode(k, "loop");
  dc_arg_t a2[2] = {dc_arg_buffer(b), dc_arg_i32(50)};
  dispatch1(k, n, 16, a2, 2);
  const int32_t* o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    ck_assert_int_eq(o[i], i < 50 ? 1 + (int)(i % 7) : SENTINEL32);
  }

  dc_arg_t a1 = dc_arg_buffer(b);
  dispatch1(kernel_of(p, "ret_switch"), n, 0, &a1, 1);
  o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    ck_assert_int_eq(o[i], i % 3 == 0 ? 10 : i % 3 == 1 ? 111 : 112);
  }

  fill_bytes(b, 0xA5);
  k = kernel_of(p, "ret_regions");
  expect_dut_mode(k, "regions");
  dc_arg_t ar[2] = {dc_arg_buffer(b), dc_arg_local(16 * sizeof(int32_t))};
  dispatch1(k, n, 16, ar, 2);
  o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    int l = (int)(i % 16);
    int want = (i / 16 == 1 || l % 3 == 0)
                   ? SENTINEL32
                   : 2 * ((l + 1) % 16) + 1000 * (l % 4);
    ck_assert_msg(o[i] == want, "ret_regions: o[%zu] = %d, expected %d", i,
                  o[i], want);
  }

  fill_bytes(b, 0xA5);
  k = kernel_of(p, "ret_fibers");
  expect_dut_mode(k, "fibers");
  dc_arg_t af[3] = {dc_arg_buffer(b), dc_arg_local(16 * sizeof(int32_t)),
                    dc_arg_i32(1)};
  dispatch1(k, n, 16, af, 3);
  o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    int l = (int)(i % 16);
    ck_assert_int_eq(o[i], l % 2 ? SENTINEL32 : (l + 1) % 16 + 50);
  }
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- core: barriers --------------------------------------------------===//

static const char kReduce[] =
    "__kernel void reduce_static(__global const int* in,\n"
    "                            __global int* out) {\n"
    "  __local int s[256];\n"
    "  int l = get_local_id(0);\n"
    "  s[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int k = get_local_size(0) / 2; k > 0; k /= 2) {\n"
    "    if (l < k) s[l] += s[l + k];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (l == 0) out[get_group_id(0)] = s[0];\n"
    "}\n"
    "__kernel void reduce_arg(__global const int* in, __global int* out,\n"
    "                         __local int* s) {\n"
    "  int l = get_local_id(0);\n"
    "  s[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int k = get_local_size(0) / 2;\n"
    "  while (k > 0) {\n"
    "    if (l < k) s[l] += s[l + k];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    k >>= 1;\n"
    "  }\n"
    "  if (l == 0) out[get_group_id(0)] = s[0];\n"
    "}\n";

START_TEST(test_kernel_lang_barrier_tree_reduction) {
  dc_program_t* p = build_on(dut, "reduce.cl", kReduce, NULL);
  const size_t n = 8192;
  int32_t* in = malloc(n * sizeof(*in));
  uint64_t seed = 42;
  for (size_t i = 0; i < n; ++i) in[i] = (int32_t)(dc_test_rand(&seed) % 2001) - 1000;
  dc_buffer_t* bin = buffer_on(dut, DC_DTYPE_I32, n, in);
  static const size_t kGroups[] = {2, 16, 64, 256};
  for (int kernel = 0; kernel < 2; ++kernel) {
    dc_kernel_t* k = kernel_of(p, kernel ? "reduce_arg" : "reduce_static");
    expect_dut_mode(k, "regions");
    for (size_t g = 0; g < sizeof(kGroups) / sizeof(kGroups[0]); ++g) {
      size_t local = kGroups[g], groups = n / local;
      dc_buffer_t* bout = sentinel_buffer(DC_DTYPE_I32, groups);
      dc_arg_t args[3] = {dc_arg_buffer(bin), dc_arg_buffer(bout),
                          dc_arg_local(local * sizeof(int32_t))};
      dispatch1(k, n, local, args, kernel ? 3 : 2);
      const int32_t* out = contents(bout);
      for (size_t gi = 0; gi < groups; ++gi) {
        int32_t want = 0;
        for (size_t i = 0; i < local; ++i) want += in[gi * local + i];
        ck_assert_msg(out[gi] == want, "group %zu of %zu: %d, expected %d",
                      gi, local, out[gi], want);
      }
      dc_buffer_release(bout);
    }
  }
  free(in);
  dc_buffer_release(bin);
  dc_program_release(p);
}
END_TEST

static const char kMatmul[] =
    "#define T 16\n"
    "__kernel void matmul(__global const float* A, __global const float* B,\n"
    "                     __global float* C, int M, int N, int K) {\n"
    "  __local float As[T][T];\n"
    "  __local float Bs[T][T];\n"
    "  int tx = get_local_id(0), ty = get_local_id(1);\n"
    "  int col = get_global_id(0), row = get_global_id(1);\n"
    "  float acc = 0.0f;\n"
    "  for (int t = 0; t < K; t += T) {\n"
    "    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;\n"
    "    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (row < M && col < N) C[row * N + col] = acc;\n"
    "}\n";

// C = A * B with small integer entries, so that every sum is exact.
static void check_matmul(dc_kernel_t* k, int m, int n, int kk) {
  uint64_t seed = (uint64_t)(m * 1000 + n);
  float* a = dc_test_small_ints((size_t)m * kk, &seed, 7);
  float* b = dc_test_small_ints((size_t)kk * n, &seed, 5);
  dc_buffer_t* ba = buffer_on(dut, DC_DTYPE_F32, (size_t)m * kk, a);
  dc_buffer_t* bb = buffer_on(dut, DC_DTYPE_F32, (size_t)kk * n, b);
  dc_buffer_t* bc = sentinel_buffer(DC_DTYPE_F32, (size_t)m * n);
  dc_arg_t args[6] = {dc_arg_buffer(ba), dc_arg_buffer(bb), dc_arg_buffer(bc),
                      dc_arg_i32(m),     dc_arg_i32(n),     dc_arg_i32(kk)};
  size_t global[2] = {((size_t)n + 15) / 16 * 16, ((size_t)m + 15) / 16 * 16};
  size_t local[2] = {16, 16};
  dispatch(k, 2, global, local, NULL, args, 6);
  dc_test_check_matmul(contents(bc), a, b, (size_t)m, (size_t)n, (size_t)kk,
                       "matmul");
  free(a);
  free(b);
  dc_buffer_release(ba);
  dc_buffer_release(bb);
  dc_buffer_release(bc);
}

START_TEST(test_kernel_lang_barrier_tiled_matmul) {
  dc_program_t* p = build_on(dut, "matmul.cl", kMatmul, NULL);
  dc_kernel_t* k = kernel_of(p, "matmul");
  expect_dut_mode(k, "regions");
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert_uint_ge(info.static_local_size, 2 * 16 * 16 * sizeof(float));
  check_matmul(k, 64, 64, 64);
  check_matmul(k, 100, 100, 100);  // padded to 112 x 112
  check_matmul(k, 37, 21, 50);
  dc_program_release(p);
}
END_TEST

static const char kControl[] =
    "__kernel void scan(__global const int* in, __global int* out,\n"
    "                   __local int* a, __local int* b) {\n"
    "  int l = get_local_id(0), n = get_local_size(0);\n"
    "  __local int* src = a;\n"
    "  __local int* dst = b;\n"
    "  src[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int off = 1; off < n; off *= 2) {\n"
    "    dst[l] = l >= off ? src[l] + src[l - off] : src[l];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    __local int* tmp = src; src = dst; dst = tmp;\n"
    "  }\n"
    "  out[get_global_id(0)] = src[l];\n"
    "}\n"
    "__kernel void uniform_if(__global int* o, __local int* t, int mode) {\n"
    "  int l = get_local_id(0), g = get_global_id(0), n = get_local_size(0);\n"
    "  t[l] = g;\n"
    "  if (mode == 1 || get_group_id(0) % 2 == 1) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    o[g] = t[n - 1 - l];\n"
    "  } else {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    o[g] = t[(l + 1) % n] + 100000;\n"
    "  }\n"
    "}\n"
    "__kernel void loops(__global const int* in, __global int* out,\n"
    "                    __local int* s) {\n"
    "  int l = get_local_id(0);\n"
    "  s[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  int k = get_local_size(0) / 2;\n"
    "  while (k > 0) {\n"
    "    if (l < k) s[l] = max(s[l], s[l + k]);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    k >>= 1;\n"
    "  }\n"
    "  int rounds = 0;\n"
    "  do {\n"
    "    rounds++;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  } while (rounds < 3);\n"
    "  for (int outer = 0; outer < 2; ++outer) {\n"
    "    for (int inner = 0; inner < 2; ++inner) {\n"
    "      barrier(CLK_LOCAL_MEM_FENCE);\n"
    "      rounds += outer + inner;\n"
    "    }\n"
    "  }\n"
    "  out[get_global_id(0)] = s[0] * 100 + rounds;\n"
    "}\n"
    "__kernel void private_state(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0);\n"
    "  int priv[4];\n"
    "  for (int k = 0; k < 4; ++k) priv[k] = l * 10 + k;\n"
    "  int acc = l;\n"
    "  float4 v = (float4)(l);\n"
    "  t[l] = l;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  acc += t[(l + 1) % get_local_size(0)];\n"
    "  priv[2] += acc;\n"
    "  v.y = acc;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  t[l] = priv[3];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] = priv[0] + priv[1] + priv[2] + t[l] +\n"
    "                        acc * 1000 + (int)(v.x + v.y) * 100000;\n"
    "}\n";

START_TEST(test_kernel_lang_barrier_control_flow) {
  dc_program_t* p = build_on(dut, "control.cl", kControl, NULL);
  const size_t n = 256, local = 32;
  int32_t in[256];
  for (size_t i = 0; i < n; ++i) in[i] = (int32_t)((i * 37) % 101) - 50;
  dc_buffer_t* bin = buffer_on(dut, DC_DTYPE_I32, n, in);
  dc_buffer_t* bout = sentinel_buffer(DC_DTYPE_I32, n);

  dc_kernel_t* k = kernel_of(p, "scan");
  expect_dut_mode(k, "regions");
  dc_arg_t sa[4] = {dc_arg_buffer(bin), dc_arg_buffer(bout),
                    dc_arg_local(local * 4), dc_arg_local(local * 4)};
  dispatch1(k, n, local, sa, 4);
  const int32_t* out = contents(bout);
  for (size_t g = 0; g < n / local; ++g) {
    int32_t sum = 0;
    for (size_t l = 0; l < local; ++l) {
      sum += in[g * local + l];
      ck_assert_msg(out[g * local + l] == sum, "scan[%zu] = %d, not %d",
                    g * local + l, out[g * local + l], sum);
    }
  }

  k = kernel_of(p, "uniform_if");
  expect_dut_mode(k, "regions");
  for (int mode = 0; mode < 2; ++mode) {
    dc_arg_t ua[3] = {dc_arg_buffer(bout), dc_arg_local(local * 4),
                      dc_arg_i32(mode)};
    dispatch1(k, n, local, ua, 3);
    out = contents(bout);
    for (size_t i = 0; i < n; ++i) {
      size_t g = i / local, l = i % local;
      int32_t want = (mode == 1 || g % 2 == 1)
                         ? (int32_t)(g * local + local - 1 - l)
                         : (int32_t)(g * local + (l + 1) % local) + 100000;
      ck_assert_msg(out[i] == want, "uniform_if(%d)[%zu] = %d, not %d",
                    mode, i, out[i], want);
    }
  }

  k = kernel_of(p, "loops");
  expect_dut_mode(k, "regions");
  dc_arg_t la[3] = {dc_arg_buffer(bin), dc_arg_buffer(bout),
                    dc_arg_local(local * 4)};
  dispatch1(k, n, local, la, 3);
  out = contents(bout);
  for (size_t g = 0; g < n / local; ++g) {
    int32_t mx = INT32_MIN;
    for (size_t l = 0; l < local; ++l) mx = MAX_OF(mx, in[g * local + l]);
    for (size_t l = 0; l < local; ++l) {
      ck_assert_int_eq(out[g * local + l], mx * 100 + 3 + 4);
    }
  }

  k = kernel_of(p, "private_state");
  expect_dut_mode(k, "regions");
  dc_arg_t pa[2] = {dc_arg_buffer(bout), dc_arg_local(local * 4)};
  dispatch1(k, n, local, pa, 2);
  out = contents(bout);
  for (size_t i = 0; i < n; ++i) {
    int l = (int)(i % local);
    int acc = l + (l + 1) % (int)local;
    int want = (l * 10) + (l * 10 + 1) + (l * 10 + 2 + acc) + (l * 10 + 3) +
               acc * 1000 + (l + acc) * 100000;
    ck_assert_msg(out[i] == want, "private_state[%zu] = %d, not %d", i,
                  out[i], want);
  }
  dc_buffer_release(bin);
  dc_buffer_release(bout);
  dc_program_release(p);
}
END_TEST

// Private variables across regions: shadowing, declarations without an
// initialiser, several declarators, loops that accumulate, helpers that
// take a variable's address.
static const char kPrivates[] =
    "void bump(int* p, int by) { *p += by; }\n"
    "__kernel void privates(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0), n = get_local_size(0);\n"
    "  int x = l * 2;\n"
    "  int acc;\n"
    "  int a = l + 1, b = a * 3;\n"
    "  int s = 0;\n"
    "  for (int k = 0; k < 4; ++k) s += k * a;\n"
    "  int addr = 5;\n"
    "  bump(&addr, l);\n"
    "  acc = l;\n"
    "  t[l] = x;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  { int x = 100; t[l] += x; }\n"
    "  bump(&addr, 1000);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  acc += t[(l + 1) % n];\n"
    "  s *= 2;\n"
    "  if (l == n - 1) return;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] = t[l] + x + acc * 1000 + b * 100000 +\n"
    "                        s * 10000000 + addr * 0 + (addr - 1005 == l);\n"
    "}\n";

START_TEST(test_kernel_lang_private_variables_across_barriers) {
  dc_program_t* p = build_on(dut, "privates.cl", kPrivates, NULL);
  dc_kernel_t* k = kernel_of(p, "privates");
  expect_dut_mode(k, "regions");
  const size_t n = 64, local = 8;
  dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, n);
  dc_arg_t a[2] = {dc_arg_buffer(b), dc_arg_local(local * 4)};
  dispatch1(k, n, local, a, 2);
  const int32_t* o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    int l = (int)(i % local);
    if (l == (int)local - 1) {
      ck_assert_int_eq(o[i], SENTINEL32);
      continue;
    }
    int x = 2 * l, av = l + 1, bv = av * 3;
    int acc = l + (2 * ((l + 1) % (int)local) + 100);
    int sv = 2 * (0 + 1 + 2 + 3) * av;
    int want = (x + 100) + x + acc * 1000 + bv * 100000 + sv * 10000000 + 1;
    ck_assert_msg(o[i] == want, "privates[%zu] = %d, expected %d", i, o[i],
                  want);
  }
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

// Barriers where the region transform cannot go run on fibers.
static const char kFibers[] =
    "void sync_all(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "int exchange(__local int* t, int v) {\n"
    "  int l = get_local_id(0), n = get_local_size(0);\n"
    "  t[l] = v;\n"
    "  sync_all();\n"
    "  int r = t[n - 1 - l];\n"
    "  sync_all();\n"
    "  return r;\n"
    "}\n"
    "__kernel void in_helper(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0);\n"
    "  o[get_global_id(0)] = exchange(t, l * 3) + exchange(t, 1000);\n"
    "}\n"
    "__kernel void with_break(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0), n = get_local_size(0), rounds = 0;\n"
    "  if (l == 0) t[0] = 0;\n"
    "  for (;;) {\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (l == 0) t[0] += 1;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    rounds++;\n"
    "    if (t[0] >= 5) break;\n"
    "  }\n"
    "  o[get_global_id(0)] = rounds * 100 + t[0] + n * 0;\n"
    "}\n"
    "__kernel void in_switch(__global int* o, __local int* t, int m) {\n"
    "  int l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);\n"
    "  t[l] = l * m;\n"
    "  switch (m) {\n"
    "    case 2: barrier(CLK_LOCAL_MEM_FENCE); o[g] = t[n - 1 - l]; break;\n"
    "    default: barrier(CLK_LOCAL_MEM_FENCE); o[g] = -t[n - 1 - l]; break;\n"
    "  }\n"
    "}\n"
    "__kernel void with_goto(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0), n = get_local_size(0), v = 0;\n"
    "again:\n"
    "  t[l] = v;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  v += t[(l + 1) % n] + 1;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  if (v < 10) goto again;\n"
    "  o[get_global_id(0)] = v;\n"
    "}\n"
    "__kernel void with_continue(__global int* o, __local int* t) {\n"
    "  int l = get_local_id(0), n = get_local_size(0), sum = 0;\n"
    "  for (int i = 0; i < 6; ++i) {\n"
    "    t[l] = i * (l + 1);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int peer = t[(l + 1) % n];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (i % 2) continue;\n"
    "    sum += peer;\n"
    "  }\n"
    "  o[get_global_id(0)] = sum;\n"
    "}\n";

START_TEST(test_kernel_lang_barriers_on_fibers) {
  dc_program_t* p = build_on(dut, "fibers.cl", kFibers, NULL);
  const size_t n = 128, local = 16;
  dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, n);
  dc_arg_t a2[2] = {dc_arg_buffer(b), dc_arg_local(local * 4)};

  dc_kernel_t* k = kernel_of(p, "in_helper");
  expect_dut_mode(k, "fibers");
  dispatch1(k, n, local, a2, 2);
  const int32_t* o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    ck_assert_int_eq(o[i], (int)(local - 1 - i % local) * 3 + 1000);
  }
  k = kernel_of(p, "with_break");
  expect_dut_mode(k, "fibers");
  dispatch1(k, n, local, a2, 2);
  o = contents(b);
  for (size_t i = 0; i < n; ++i) ck_assert_int_eq(o[i], 505);

  k = kernel_of(p, "in_switch");
  expect_dut_mode(k, "fibers");
  for (int m = 1; m <= 2; ++m) {
    dc_arg_t a3[3] = {dc_arg_buffer(b), dc_arg_local(local * 4),
                      dc_arg_i32(m)};
    dispatch1(k, n, local, a3, 3);
    o = contents(b);
    for (size_t i = 0; i < n; ++i) {
      int want = (int)(local - 1 - i % local) * m;
      ck_assert_int_eq(o[i], m == 2 ? want : -want);
    }
  }
  k = kernel_of(p, "with_goto");
  expect_dut_mode(k, "fibers");
  dispatch1(k, n, local, a2, 2);
  o = contents(b);
  for (size_t i = 0; i < n; ++i) ck_assert_int_eq(o[i], 15);

  k = kernel_of(p, "with_continue");
  expect_dut_mode(k, "fibers");
  dispatch1(k, n, local, a2, 2);
  o = contents(b);
  for (size_t i = 0; i < n; ++i) {
    int peer = (int)((i % local + 1) % local) + 1;
    ck_assert_int_eq(o[i], (0 + 2 + 4) * peer);
  }
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- core: local memory arguments and atomics ------------------------===//

static const char kLocals[] =
    "__kernel void two_locals(__global int* o, __local int* a,\n"
    "                         __local float* b) {\n"
    "  int l = get_local_id(0), n = get_local_size(0);\n"
    "  __local int tile[8];\n"
    "  a[l] = l;\n"
    "  b[l] = l * 0.5f;\n"
    "  if (l < 8) tile[l] = 100 + l;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  o[get_global_id(0)] = a[n - 1 - l] +\n"
    "                        (int)(b[(l + 1) % n] * 2.0f) * 1000 +\n"
    "                        tile[l % 8] * 1000000;\n"
    "}\n"
    "__kernel void private_ptr(__global int* o, __local int* a) {\n"
    "  __local int* p = a + 1;\n"  // loop mode: a private pointer
    "  p[get_local_id(0)] = (int)get_local_id(0);\n"
    "  o[get_global_id(0)] = p[get_local_id(0)] * 2 + (int)(p - a);\n"
    "}\n";

START_TEST(test_kernel_lang_local_pointer_arguments) {
  dc_program_t* p = build_on(dut, "locals.cl", kLocals, NULL);
  dc_kernel_t* k = kernel_of(p, "two_locals");
  static const size_t kSizes[] = {8, 16, 64, 256};
  for (size_t s = 0; s < sizeof(kSizes) / sizeof(kSizes[0]); ++s) {
    size_t local = kSizes[s], n = local * 4;
    dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, n);
    dc_arg_t args[3] = {dc_arg_buffer(b), dc_arg_local(local * 4),
                        dc_arg_local(local * 4)};
    dispatch1(k, n, local, args, 3);
    const int32_t* o = contents(b);
    for (size_t i = 0; i < n; ++i) {
      size_t l = i % local;
      int want = (int)(local - 1 - l) + (int)((l + 1) % local) * 1000 +
                 (int)(100 + l % 8) * 1000000;
      ck_assert_msg(o[i] == want, "local %zu: o[%zu] = %d, not %d", local, i,
                    o[i], want);
    }
    dc_buffer_release(b);
  }
  k = kernel_of(p, "private_ptr");
  expect_dut_mode(k, "loop");
  dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, 32);
  dc_arg_t args[2] = {dc_arg_buffer(b), dc_arg_local(9 * 4)};
  dispatch1(k, 32, 8, args, 2);
  const int32_t* o = contents(b);
  for (size_t i = 0; i < 32; ++i) ck_assert_int_eq(o[i], (int)(i % 8) * 2 + 1);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

static const char kAtomics[] =
    "__kernel void hist_global(__global const uint* in, __global uint* bins,\n"
    "                          uint nbins) {\n"
    "  atomic_inc(&bins[in[get_global_id(0)] % nbins]);\n"
    "}\n"
    "__kernel void hist_local(__global const uint* in, __global uint* bins,\n"
    "                         uint nbins, __local uint* lb) {\n"
    "  uint l = get_local_id(0);\n"
    "  for (uint b = l; b < nbins; b += get_local_size(0)) lb[b] = 0;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  atomic_inc(&lb[in[get_global_id(0)] % nbins]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (uint b = l; b < nbins; b += get_local_size(0)) {\n"
    "    atomic_add(&bins[b], lb[b]);\n"
    "  }\n"
    "}\n"
    "__kernel void misc(__global int* v, __global long* lv) {\n"
    "  int i = get_global_id(0);\n"
    "  atomic_add(&v[0], i);\n"
    "  atomic_sub(&v[1], 2);\n"
    "  atomic_max(&v[2], i);\n"
    "  atomic_min(&v[3], -i);\n"
    "  atomic_or(&v[4], 1 << (i % 31));\n"
    "  atomic_dec(&v[5]);\n"
    "  int old;\n"
    "  do { old = v[6]; } while (atomic_cmpxchg(&v[6], old, old + 3) != old);\n"
    "  atom_add(&lv[0], (long)i << 32);\n"
    "  atomic_xchg(&v[7], 5);\n"
    "}\n";

START_TEST(test_kernel_lang_atomics_histogram) {
  dc_program_t* p = build_on(dut, "atomics.cl", kAtomics, NULL);
  const size_t n = 100000;
  uint32_t* in = malloc(n * sizeof(*in));
  uint64_t seed = 7;
  for (size_t i = 0; i < n; ++i) in[i] = (uint32_t)dc_test_rand(&seed);
  dc_buffer_t* bin = buffer_on(dut, DC_DTYPE_U32, n, in);
  for (int local_mem = 0; local_mem < 2; ++local_mem) {
    uint32_t nbins = local_mem ? 64 : 16;
    uint32_t zero = 0, want[64] = {0};
    for (size_t i = 0; i < n; ++i) ++want[in[i] % nbins];
    dc_buffer_t* bins = dc_test_buffer_new(dut, DC_DTYPE_U32, nbins, "bins");
    DC_CK_OK(dc_buffer_fill(bins, 0, nbins, &zero));
    dc_kernel_t* k = kernel_of(p, local_mem ? "hist_local" : "hist_global");
    dc_arg_t args[4] = {dc_arg_buffer(bin), dc_arg_buffer(bins),
                        dc_arg_u32(nbins), dc_arg_local(nbins * 4)};
    dispatch1(k, n, local_mem ? 160 : 0, args, local_mem ? 4 : 3);
    const uint32_t* got = contents(bins);
    for (uint32_t b = 0; b < nbins; ++b) {
      ck_assert_msg(got[b] == want[b], "%s: bin %u has %u, expected %u",
                    local_mem ? "local" : "global", b, got[b], want[b]);
    }
    dc_buffer_release(bins);
  }
  free(in);
  dc_buffer_release(bin);

  const int m = 5000;
  int32_t v[8] = {0, 0, INT32_MIN, INT32_MAX, 0, 0, 0, 0};
  int64_t lv = 0;
  dc_buffer_t* bv = buffer_on(dut, DC_DTYPE_I32, 8, v);
  dc_buffer_t* blv = buffer_on(dut, DC_DTYPE_I64, 1, &lv);
  dc_arg_t margs[2] = {dc_arg_buffer(bv), dc_arg_buffer(blv)};
  dispatch1(kernel_of(p, "misc"), (size_t)m, 0, margs, 2);
  const int32_t* got = contents(bv);
  ck_assert_int_eq(got[0], m * (m - 1) / 2);
  ck_assert_int_eq(got[1], -2 * m);
  ck_assert_int_eq(got[2], m - 1);
  ck_assert_int_eq(got[3], -(m - 1));
  ck_assert_int_eq(got[4], 0x7FFFFFFF);
  ck_assert_int_eq(got[5], -m);
  ck_assert_int_eq(got[6], 3 * m);
  ck_assert_int_eq(got[7], 5);
  ck_assert_int_eq(*(const int64_t*)contents(blv),
                   ((int64_t)m * (m - 1) / 2) << 32);
  dc_buffer_release(bv);
  dc_buffer_release(blv);
  dc_program_release(p);
}
END_TEST

//===-- core: reqd_work_group_size --------------------------------------===//

START_TEST(test_kernel_lang_reqd_work_group_size) {
  dc_program_t* p = build_on(
      dut, "reqd.cl",
      "__kernel __attribute__((reqd_work_group_size(8, 4, 1)))\n"
      "void reqd(__global int* o) {\n"
      "  o[get_global_id(1) * get_global_size(0) + get_global_id(0)] =\n"
      "      get_local_size(0) * 10 + get_local_size(1) +\n"
      "      get_num_groups(0) * 1000;\n"
      "}\n"
      "__kernel void __attribute__((reqd_work_group_size(16, 1, 1)))\n"
      "with_barrier(__global int* o, __local int* t) {\n"
      "  t[get_local_id(0)] = get_local_id(0);\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  o[get_global_id(0)] = t[15 - get_local_id(0)];\n"
      "}\n",
      NULL);
  dc_kernel_t* k = kernel_of(p, "reqd");
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert_uint_eq(info.required_group_size[0], 8);
  ck_assert_uint_eq(info.required_group_size[1], 4);
  ck_assert_uint_eq(info.required_group_size[2], 1);
  dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, 32 * 8);
  dc_arg_t arg = dc_arg_buffer(b);
  size_t global[2] = {32, 8};
  dispatch(k, 2, global, NULL, NULL, &arg, 1);  // the engine uses 8 x 4
  const int32_t* o = contents(b);
  for (size_t i = 0; i < 32 * 8; ++i) ck_assert_int_eq(o[i], 4084);
  size_t local[2] = {8, 4};
  dispatch(k, 2, global, local, NULL, &arg, 1);
  o = contents(b);
  for (size_t i = 0; i < 32 * 8; ++i) ck_assert_int_eq(o[i], 4084);

  // The sizes are constant expressions, macros included.
  dc_program_t* q = build_on(
      dut, "reqd_expr.cl",
      "#define TILE 16\n"
      "#define ROWS 4\n"
      "__kernel __attribute__((reqd_work_group_size(TILE, TILE / ROWS,\n"
      "                                             (1 << 1) - 1)))\n"
      "void k(__global int* o) { o[get_global_id(0)] = 1; }\n",
      "-dc-O3");
  DC_CK_OK(dc_kernel_info(kernel_of(q, "k"), &info));
  ck_assert_uint_eq(info.required_group_size[0], 16);
  ck_assert_uint_eq(info.required_group_size[1], 4);
  ck_assert_uint_eq(info.required_group_size[2], 1);
  dc_program_release(q);

  k = kernel_of(p, "with_barrier");
  DC_CK_OK(dc_kernel_info(k, &info));
  ck_assert_uint_eq(info.required_group_size[0], 16);
  dc_arg_t args[2] = {dc_arg_buffer(b), dc_arg_local(16 * 4)};
  dispatch1(k, 64, 0, args, 2);
  o = contents(b);
  for (size_t i = 0; i < 64; ++i) ck_assert_int_eq(o[i], 15 - (int)(i % 16));
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- core: a light touch of the built-in functions -------------------===//

static const char kBuiltins[] =
    "__kernel void builtins(__global float* f, __global int* i) {\n"
    "  f[0] = sqrt(16.0f); f[1] = fabs(-2.5f); f[2] = pow(2.0f, 10.0f);\n"
    "  f[3] = fmax(1.0f, 3.0f); f[4] = exp(0.0f); f[5] = floor(-1.5f);\n"
    "  f[6] = mad(2.0f, 3.0f, 1.0f); f[7] = clamp(5.0f, 0.0f, 1.0f);\n"
    "  float4 a = (float4)(1.0f, 2.0f, 3.0f, 4.0f);\n"
    "  f[8] = dot(a, a);\n"
    "  f[9] = length((float4)(3.0f, 4.0f, 0.0f, 0.0f));\n"
    "  float4 cr = cross((float4)(1.0f, 0.0f, 0.0f, 0.0f),\n"
    "                    (float4)(0.0f, 1.0f, 0.0f, 0.0f));\n"
    "  f[10] = cr.z;\n"
    "  float4 sq = sqrt((float4)(4.0f, 9.0f, 16.0f, 25.0f)); f[11] = sq.w;\n"
    "  float4 cf = convert_float4((int4)(1, 2, 3, 4)); f[12] = cf.w;\n"
    "  f[13] = sin(0.0f); f[14] = hypot(3.0f, 4.0f); f[15] = fmin(-1.0f, 2.0f);\n"
    "  f[16] = (float)sqrt(2.0);\n"
    "  i[0] = abs(-7); i[1] = min(3, -2); i[2] = max(3u, 7u);\n"
    "  i[3] = clamp(15, 0, 10); i[4] = popcount(0xF0F0);\n"
    "  i[5] = mul24(3, 4); i[6] = mad24(2, 3, 4); i[7] = rotate(1u, 3u);\n"
    "  i[8] = clz(1);\n"
    "  i[9] = convert_int(2.7f); i[10] = convert_int_sat(3e10f);\n"
    "  i[11] = convert_uchar_sat(300); i[12] = as_int(1.0f);\n"
    "  int4 ci = convert_int4((float4)(1.5f, -1.5f, 2.5f, 0.0f));\n"
    "  i[13] = ci.x * 1000 + ci.y * 100 + ci.z * 10;\n"
    "  i[14] = convert_int_rte(2.5f); i[15] = convert_char_sat(-200);\n"
    "  i[16] = abs_diff(-3, 4); i[17] = add_sat(2147483647, 1);\n"
    "}\n";

START_TEST(test_kernel_lang_builtins_lightly) {
  dc_program_t* p = build_on(dut, "builtins.cl", kBuiltins, NULL);
  dc_buffer_t* bf = sentinel_buffer(DC_DTYPE_F32, 17);
  dc_buffer_t* bi = sentinel_buffer(DC_DTYPE_I32, 18);
  dc_arg_t args[2] = {dc_arg_buffer(bf), dc_arg_buffer(bi)};
  dispatch1(kernel_of(p, "builtins"), 1, 0, args, 2);
  const float* f = contents(bf);
  const float fwant[17] = {4, 2.5f, 1024, 3, 1, -2, 7, 1, 30,
                           5, 1,    5,    4, 0, 5, -1, 1.41421356f};
  for (int k = 0; k < 17; ++k) {
    ck_assert_msg(fabsf(f[k] - fwant[k]) <= 1e-5f * fmaxf(1.0f, fabsf(fwant[k])),
                  "f[%d] = %.9g, expected %.9g", k, f[k], fwant[k]);
  }
  const int32_t* i = contents(bi);
  const int32_t iwant[18] = {7, -2, 7, 10, 8, 12, 10, 8, 31, 2,
                             INT32_MAX, 255, 0x3F800000, 920, 2, -128, 7,
                             INT32_MAX};
  for (int k = 0; k < 18; ++k) {
    ck_assert_msg(i[k] == iwant[k], "i[%d] = %d, expected %d", k, i[k],
                  iwant[k]);
  }
  dc_buffer_release(bf);
  dc_buffer_release(bi);
  dc_program_release(p);
}
END_TEST

//===-- core: correctly rounded division and square root ---------------===//

// Float division (by a variable, by constants, as `/=`) and sqrt, over
// bit patterns from every binade, subnormals and special values: the
// results must be the host's IEEE results bit for bit (NaN as any NaN),
// on every device (kernel-language.md: no fast-math options, correctly
// rounded). The CUDA lowering divides by a constant through its
// reciprocal (check_exact_rounding.c).
static const char kRounding[] =
    "__kernel void rounding(__global const float* x,\n"
    "                       __global const float* y, __global float* o) {\n"
    "  size_t i = get_global_id(0), n = get_global_size(0);\n"
    "  float v = x[i], w = v;\n"
    "  w /= -7.0f;\n"
    "  o[i] = v / y[i];\n"
    "  o[n + i] = v / 3;\n"
    "  o[2 * n + i] = v / 98.0f;\n"
    "  o[3 * n + i] = v / 0.1f;\n"
    "  o[4 * n + i] = w;\n"
    "  o[5 * n + i] = sqrt(v);\n"
    "}\n";

static float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

START_TEST(test_kernel_lang_division_and_sqrt_are_correctly_rounded) {
  enum { N = 1 << 15, OUTPUTS = 6 };
  static const uint32_t kSpecial[] = {
      0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
      0x7F7FFFFFu, 0x00800000u, 0x00000001u, 0x807FFFFFu, 0x3F800000u,
      0x00000003u, 0x00000093u, 0x0000012Cu, 0x00000126u};
  float* x = malloc(N * sizeof(float));
  float* y = malloc(N * sizeof(float));
  uint32_t state = 12345u;
  for (size_t i = 0; i < N; ++i) {
    state = state * 1664525u + 1013904223u;
    uint32_t a = state;
    state = state * 1664525u + 1013904223u;
    // A quarter subnormal (and the ties of / 98 among them), the rest
    // any pattern.
    if (i % 4 == 0) a &= 0x807FFFFFu;
    if (i < sizeof(kSpecial) / sizeof(kSpecial[0])) a = kSpecial[i];
    x[i] = bits_to_float(a);
    y[i] = bits_to_float(state);
  }
  for (uint32_t m = 1; m < 400; m += 2) {  // exact subnormal ties of / 98
    x[N - m] = bits_to_float(m * 49u);
  }
  dc_program_t* p = build_on(dut, "rounding.cl", kRounding, NULL);
  dc_buffer_t* bx = buffer_on(dut, DC_DTYPE_F32, N, x);
  dc_buffer_t* by = buffer_on(dut, DC_DTYPE_F32, N, y);
  dc_buffer_t* bo = sentinel_buffer(DC_DTYPE_F32, OUTPUTS * N);
  dc_arg_t args[3] = {dc_arg_buffer(bx), dc_arg_buffer(by),
                      dc_arg_buffer(bo)};
  dispatch1(kernel_of(p, "rounding"), N, 0, args, 3);
  const float* o = contents(bo);
  static const char* const kWhat[OUTPUTS] = {"x / y",    "x / 3",
                                             "x / 98.0f", "x / 0.1f",
                                             "x /= -7.0f", "sqrt(x)"};
  for (size_t i = 0; i < N; ++i) {
    volatile float v = x[i];
    float want[OUTPUTS] = {v / y[i], v / 3.0f,  v / 98.0f,
                           v / 0.1f, v / -7.0f, sqrtf(v)};
    for (int k = 0; k < OUTPUTS; ++k) {
      float got = o[(size_t)k * N + i];
      ck_assert_msg(memcmp(&got, &want[k], sizeof(got)) == 0 ||
                        (isnan(got) && isnan(want[k])),
                    "%s for x = %a, y = %a: %a, not %a", kWhat[k],
                    (double)x[i], (double)y[i], (double)got,
                    (double)want[k]);
    }
  }
  free(x);
  free(y);
  dc_buffer_release(bx);
  dc_buffer_release(by);
  dc_buffer_release(bo);
  dc_program_release(p);
}
END_TEST

//===-- core: loop-mode control flow ------------------------------------===//

START_TEST(test_kernel_lang_loop_control_flow) {
  dc_program_t* p = build_on(
      dut, "flow.cl",
      "__kernel void flow(__global int* o) {\n"
      "  int i = get_global_id(0), acc = 0;\n"
      "  for (int k = 0; k < 10; ++k) {\n"
      "    if (k == 2) continue;\n"
      "    if (k == 7) break;\n"
      "    acc += k;\n"
      "  }\n"
      "  int w = 0;\n"
      "  while (1) { if (++w >= i % 5) break; }\n"
      "  do { acc += 100; } while (0);\n"
      "  switch (i % 4) {\n"
      "    case 0: acc += 1000;\n"  // falls through
      "    case 1: acc += 1000; break;\n"
      "    default: acc -= 1;\n"
      "  }\n"
      "  acc += (i & 1) ? 10000 : 20000;\n"
      "  int x = 3, y = (x += 2, x * 2);\n"
      "  acc += y * 100000 + w * 1000000;\n"
      "  o[i] = acc;\n"
      "}\n",
      NULL);
  dc_buffer_t* b = sentinel_buffer(DC_DTYPE_I32, 40);
  dc_arg_t arg = dc_arg_buffer(b);
  dispatch1(kernel_of(p, "flow"), 40, 0, &arg, 1);
  const int32_t* o = contents(b);
  for (int i = 0; i < 40; ++i) {
    int acc = 0 + 1 + 3 + 4 + 5 + 6 + 100;
    acc += i % 4 == 0 ? 2000 : i % 4 == 1 ? 1000 : -1;
    acc += (i & 1) ? 10000 : 20000;
    int w = MAX_OF(i % 5, 1);
    acc += 10 * 100000 + w * 1000000;
    ck_assert_msg(o[i] == acc, "o[%d] = %d, expected %d", i, o[i], acc);
  }
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- core: attributes, qualifiers and fences -------------------------===//

static const char kQualifiers[] =
    "__kernel __attribute__((vec_type_hint(float4)))\n"
    "__attribute__((work_group_size_hint(16, 1, 1)))\n"
    "void quals(__global float* restrict o, __global const float* restrict i,\n"
    "           volatile __global float* fx) {\n"
    "  __attribute__((aligned(16))) __local float tile[16];\n"
    "  const int l = get_local_id(0);\n"
    "  private float p = i[get_global_id(0)];\n"
    "  tile[l] = p;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);\n"
    "  work_group_barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  mem_fence(CLK_GLOBAL_MEM_FENCE);\n"
    "  read_mem_fence(CLK_LOCAL_MEM_FENCE);\n"
    "  write_mem_fence(CLK_LOCAL_MEM_FENCE);\n"
    "  if (get_global_id(0) == 0) fx[1] = atomic_xchg(&fx[0], 2.5f);\n"
    "  o[get_global_id(0)] = tile[15 - l];\n"
    "}\n";

START_TEST(test_kernel_lang_attributes_qualifiers_and_fences) {
  dc_program_t* p = build_on(dut, "quals.cl", kQualifiers, NULL);
  dc_kernel_t* k = kernel_of(p, "quals");
  expect_dut_mode(k, "regions");
  float in[32], fx[2] = {-4.0f, 0.0f};
  for (int j = 0; j < 32; ++j) in[j] = (float)j * 0.25f;
  dc_buffer_t* bi = buffer_on(dut, DC_DTYPE_F32, 32, in);
  dc_buffer_t* bo = sentinel_buffer(DC_DTYPE_F32, 32);
  dc_buffer_t* bx = buffer_on(dut, DC_DTYPE_F32, 2, fx);
  dc_arg_t a[3] = {dc_arg_buffer(bo), dc_arg_buffer(bi), dc_arg_buffer(bx)};
  dispatch1(k, 32, 16, a, 3);
  const float* o = contents(bo);
  for (int j = 0; j < 32; ++j) {
    ck_assert(o[j] == in[(j / 16) * 16 + 15 - j % 16]);
  }
  ck_assert(((const float*)contents(bx))[0] == 2.5f);
  ck_assert(((const float*)contents(bx))[1] == -4.0f);
  dc_buffer_release(bi);
  dc_buffer_release(bo);
  dc_buffer_release(bx);
  dc_program_release(p);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

static const char kLimits[] =
    "__kernel void big_group(__global const int* in, __global int* out,\n"
    "                        __local int* s) {\n"
    "  int l = get_local_id(0);\n"
    "  s[l] = in[get_global_id(0)];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int k = get_local_size(0) / 2; k > 0; k /= 2) {\n"
    "    if (l < k) s[l] += s[l + k];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  out[get_global_id(0)] = s[0];\n"
    "}\n"
    "void group_step(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "__kernel void big_fibers(__global int* out, __local int* s) {\n"
    "  int l = get_local_id(0), n = get_local_size(0);\n"
    "  s[l] = l;\n"
    "  group_step();\n"
    "  out[get_global_id(0)] = s[n - 1 - l];\n"
    "}\n"
    "__kernel void wide(__global double* o, __global long* lo) {\n"
    "  double16 d = (double16)(0.5);\n"
    "  d.sF = 2.0; d.s0 = -1.0;\n"
    "  double8 h = d.hi;\n"
    "  o[0] = h.s7 + d.s0 + d.s7;\n"
    "  long16 l = (long16)(1L << 40);\n"
    "  long16 m = l * 3 + (long16)(1);\n"
    "  lo[0] = m.sA;\n"
    "  char16 c = (char16)(-1);\n"
    "  uchar16 u = (uchar16)(200);\n"
    "  lo[1] = c.s3 + u.sE;\n"
    "}\n"
    "int leaf(int n) {\n"
    "  volatile int a[1000];\n"
    "  for (int i = 0; i < 1000; ++i) a[i] = i + n;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  return a[999];\n"
    "}\n"
    "int middle(int n) {\n"
    "  volatile int a[1000];\n"
    "  for (int i = 0; i < 1000; ++i) a[i] = i * n;\n"
    "  return a[1] + leaf(n);\n"
    "}\n"
    "int outer(int n) {\n"
    "  volatile int a[1000];\n"
    "  for (int i = 0; i < 1000; ++i) a[i] = n - i;\n"
    "  return a[0] + middle(n);\n"
    "}\n"
    "__kernel void deep(__global int* o) {\n"
    "  volatile int a[1000];\n"
    "  for (int i = 0; i < 1000; ++i) a[i] = i;\n"
    "  int id = get_global_id(0);\n"
    "  o[id] = a[id] + outer(id);\n"
    "}\n";

START_TEST(test_kernel_lang_limits) {
  dc_program_t* p = build_on(dut, "limits.cl", kLimits, NULL);
  dc_kernel_info_t big_info;
  DC_CK_OK(dc_kernel_info(kernel_of(p, "big_group"), &big_info));
  const size_t max_group = big_info.max_group_size;
  ck_assert_uint_le(max_group, dc_device_info(dut)->max_work_group_size);
  const size_t n = max_group * 4;
  int32_t* in = malloc(n * sizeof(*in));
  for (size_t i = 0; i < n; ++i) in[i] = (int32_t)(i % 7);
  dc_buffer_t* bin = buffer_on(dut, DC_DTYPE_I32, n, in);
  dc_buffer_t* bout = sentinel_buffer(DC_DTYPE_I32, n);
  dc_arg_t a[3] = {dc_arg_buffer(bin), dc_arg_buffer(bout),
                   dc_arg_local(max_group * 4)};
  dispatch1(kernel_of(p, "big_group"), n, max_group, a, 3);
  const int32_t* out = contents(bout);
  for (size_t g = 0; g < 4; ++g) {
    int32_t want = 0;
    for (size_t i = 0; i < max_group; ++i) want += in[g * max_group + i];
    for (size_t i = 0; i < max_group; ++i) {
      ck_assert_int_eq(out[g * max_group + i], want);
    }
  }
  // A group of 256 (on the CPU: on fibers, 256 stacks per worker).
  dc_arg_t f[2] = {dc_arg_buffer(bout), dc_arg_local(256 * 4)};
  dispatch1(kernel_of(p, "big_fibers"), 1024, 256, f, 2);
  out = contents(bout);
  for (size_t i = 0; i < 1024; ++i) {
    ck_assert_int_eq(out[i], (int)(255 - i % 256));
  }
  dc_buffer_t* bd = sentinel_buffer(DC_DTYPE_F64, 1);
  dc_buffer_t* bl = sentinel_buffer(DC_DTYPE_I64, 2);
  dc_arg_t w[2] = {dc_arg_buffer(bd), dc_arg_buffer(bl)};
  dispatch1(kernel_of(p, "wide"), 1, 0, w, 2);
  ck_assert(*(const double*)contents(bd) == 2.0 - 1.0 + 0.5);
  ck_assert_int_eq(((const int64_t*)contents(bl))[0], 3 * (1LL << 40) + 1);
  ck_assert_int_eq(((const int64_t*)contents(bl))[1], 199);
  // A chain of helpers near the private memory limit, on fibers on the
  // CPU (a group of 256 stacks): 999 + 4 * id.
  dc_kernel_t* deep = kernel_of(p, "deep");
  expect_dut_mode(deep, "fibers");
  dc_arg_t one = dc_arg_buffer(bout);
  dispatch1(deep, 256, 256, &one, 1);
  out = contents(bout);
  for (int i = 0; i < 256; ++i) ck_assert_int_eq(out[i], 999 + 4 * i);
  free(in);
  dc_buffer_release(bin);
  dc_buffer_release(bout);
  dc_buffer_release(bd);
  dc_buffer_release(bl);
  dc_program_release(p);
}
END_TEST

static Suite* kernel_lang_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_lang", "dc-check-lang");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_kernel_lang_scalar_types);
  tcase_add_test(core, test_kernel_lang_work_item_functions_in_every_dimension);
  tcase_add_test(core, test_kernel_lang_vectors);
  tcase_add_test(core, test_kernel_lang_vector_forms);
  tcase_add_test(core, test_kernel_lang_constants_typedefs_helpers_and_defines);
  tcase_add_test(core, test_kernel_lang_early_return);
  tcase_add_test(core, test_kernel_lang_barrier_tree_reduction);
  tcase_add_test(core, test_kernel_lang_barrier_tiled_matmul);
  tcase_add_test(core, test_kernel_lang_barrier_control_flow);
  tcase_add_test(core, test_kernel_lang_private_variables_across_barriers);
  tcase_add_test(core, test_kernel_lang_barriers_on_fibers);
  tcase_add_test(core, test_kernel_lang_local_pointer_arguments);
  tcase_add_test(core, test_kernel_lang_atomics_histogram);
  tcase_add_test(core, test_kernel_lang_reqd_work_group_size);
  tcase_add_test(core, test_kernel_lang_builtins_lightly);
  tcase_add_test(core,
                 test_kernel_lang_division_and_sqrt_are_correctly_rounded);
  tcase_add_test(core, test_kernel_lang_loop_control_flow);
  tcase_add_test(core, test_kernel_lang_attributes_qualifiers_and_fences);

  TCase* limits = dc_test_kernel_tcase(s, "limits");
  tcase_add_test(limits, test_kernel_lang_limits);
  return s;
}

DC_CHECK_DEVICE_MAIN(kernel_lang_suite)

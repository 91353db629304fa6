// check_kernel_vec3.c: 3-component vectors (OpenCL C 1.2 6.1.2, 6.1.5)
// end to end on the device under test (check_util.h): every element
// type, values and buffers of them as kernel arguments (a 3-component
// vector takes the room of 4 elements), and the 4th slot of their
// storage, which the built-ins must ignore and which no operation may
// trap on (integer division on the CPU), in every CPU execution mode and
// in checked mode. The language's forms are in the conformance suite
// (tests/conformance/vectors3.cl); the errors in check_kernel_sema.c.
// SPDX-License-Identifier: MIT
#include <limits.h>
#include <math.h>

#include "kernel_fixture.h"

//===-- Every element type ----------------------------------------------===//

// k_T(io): io[0..5] hold a and b; the kernel writes what each form gives.
#define ELEMENT_KERNEL(T)                                                    \
  "__kernel void k_" #T "(__global " #T "* io) {\n"                          \
  "  " #T "3 a = vload3(0, io);\n"                                           \
  "  " #T "3 b = (" #T "3)(io[3], io[4], io[5]);\n"                          \
  "  vstore3(a + b * (" #T ")2 - (" #T "3)(1), 2, io);\n"                    \
  "  vstore3(convert_" #T "3(a < b), 3, io);\n"                              \
  "  vstore3(a.zxy, 4, io);\n"                                               \
  "  vstore3(max(a, b), 5, io);\n"                                           \
  "  io[18] = (" #T ")(sizeof(" #T "3) / sizeof(" #T "));\n"                 \
  "  io[19] = (" #T ")vec_step(a);\n"                                        \
  "}\n"

static const char kElements[] =
    ELEMENT_KERNEL(char) ELEMENT_KERNEL(uchar) ELEMENT_KERNEL(short)
        ELEMENT_KERNEL(ushort) ELEMENT_KERNEL(int) ELEMENT_KERNEL(uint)
            ELEMENT_KERNEL(long) ELEMENT_KERNEL(ulong) ELEMENT_KERNEL(float)
                ELEMENT_KERNEL(double);

// Runs k_<name> on io = {1, 2, 3, 7, 5, 3, ...} and checks every output
// against the same arithmetic in the host type C.
#define CHECK_ELEMENT(name, C, DTYPE)                                        \
  {                                                                          \
    C io[20] = {1, 2, 3, 7, 5, 3};                                           \
    dc_buffer_t* b = buffer_on(dut, DTYPE, 20, io);                          \
    dc_arg_t arg = dc_arg_buffer(b);                                         \
    dc_dispatch_t grid = {.dims = 1, .global = {1}};                         \
    DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "k_" #name), &grid, &arg, 1));  \
    const C* r = contents(b);                                                \
    const C m = (C)-1; /* a true lane of a mask, converted */                \
    const C want[14] = {(C)(1 + 14 - 1), (C)(2 + 10 - 1), (C)(3 + 6 - 1),    \
                        m, m, 0, 3, 1, 2, 7, 5, 3, 4, 4};                    \
    for (int i = 0; i < 14; ++i) {                                           \
      ck_assert_msg(r[6 + i] == want[i], #name ": io[%d] = %g, expected %g", \
                    6 + i, (double)r[6 + i], (double)want[i]);               \
    }                                                                        \
    dc_buffer_release(b);                                                    \
  }

START_TEST(test_vec3_every_element_type) {
  dc_program_t* p = build_on(dut, "elements.cl", kElements, NULL);
  CHECK_ELEMENT(char, int8_t, DC_DTYPE_I8)
  CHECK_ELEMENT(uchar, uint8_t, DC_DTYPE_U8)
  CHECK_ELEMENT(short, int16_t, DC_DTYPE_I16)
  CHECK_ELEMENT(ushort, uint16_t, DC_DTYPE_U16)
  CHECK_ELEMENT(int, int32_t, DC_DTYPE_I32)
  CHECK_ELEMENT(uint, uint32_t, DC_DTYPE_U32)
  CHECK_ELEMENT(long, int64_t, DC_DTYPE_I64)
  CHECK_ELEMENT(ulong, uint64_t, DC_DTYPE_U64)
  CHECK_ELEMENT(float, float, DC_DTYPE_F32)
  CHECK_ELEMENT(double, double, DC_DTYPE_F64)
  dc_program_release(p);
}
END_TEST

//===-- Arguments -------------------------------------------------------===//

static const char kScale[] =
    "__kernel void scale(__global float3* p, float3 k, int3 add,\n"
    "                    __global int* o) {\n"
    "  size_t i = get_global_id(0);\n"
    "  p[i] = p[i] * k + convert_float3(add) + (float)i;\n"
    "  if (i == 0) { o[0] = (int)sizeof(k); o[1] = add.x + add.y + add.z; }\n"
    "}\n";

// A buffer of float3 holds 4 floats per vector; a float3 value is 3
// floats from the host (dc_arg_value's width 3), 16 bytes to the kernel.
START_TEST(test_vec3_arguments_and_buffers) {
  dc_program_t* p = build_on(dut, "scale.cl", kScale, NULL);
  dc_kernel_t* k = kernel_of(p, "scale");
  const dc_kernel_arg_info_t* a = dc_kernel_arg_info(k, 0);
  ck_assert_int_eq(a->dtype, DC_DTYPE_F32);
  ck_assert_uint_eq(a->vector_width, 3);
  a = dc_kernel_arg_info(k, 1);
  ck_assert_int_eq(a->kind, DC_ARG_SCALAR);
  ck_assert_uint_eq(a->vector_width, 3);
  ck_assert_uint_eq(a->size, 16);
  ck_assert_str_eq(a->type_name, "float3");
  enum { N = 8 };
  float in[4 * N];
  for (int i = 0; i < N; ++i) {
    in[4 * i] = (float)i;
    in[4 * i + 1] = (float)i + 0.5f;
    in[4 * i + 2] = -(float)i;
    in[4 * i + 3] = NAN;  // the padding: no lane may show it
  }
  dc_buffer_t* b = buffer_on(dut, DC_DTYPE_F32, 4 * N, in);
  dc_buffer_t* o = dc_test_buffer_new(dut, DC_DTYPE_I32, 2, "o");
  float kv[3] = {2.0f, -1.0f, 0.5f};
  int32_t add[3] = {10, 20, 30};
  dc_arg_t args[4] = {dc_arg_buffer(b), dc_arg_value(DC_DTYPE_F32, 3, kv),
                      dc_arg_value(DC_DTYPE_I32, 3, add), dc_arg_buffer(o)};
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, 4));
  const float* r = contents(b);
  for (int i = 0; i < N; ++i) {
    for (int l = 0; l < 3; ++l) {
      float want = in[4 * i + l] * kv[l] + (float)add[l] + (float)i;
      ck_assert_msg(r[4 * i + l] == want, "p[%d].s%d = %g, expected %g", i,
                    l, r[4 * i + l], want);
    }
  }
  const int32_t* ro = contents(o);
  ck_assert_int_eq(ro[0], 16);
  ck_assert_int_eq(ro[1], 60);
  // A buffer that is no whole number of 4-element slots is refused, and
  // so is a value of another width.
  dc_buffer_t* odd = dc_test_buffer_new(dut, DC_DTYPE_F32, 6, "odd");
  args[0] = dc_arg_buffer(odd);
  DC_CK_FAIL(dc_kernel_dispatch(k, &grid, args, 4), DC_ERR_INVALID_ARGUMENT,
             "the buffer's 6 elements are not whole f32x3 vectors (each "
             "takes the room of 4)");
  args[0] = dc_arg_buffer(b);
  const float kv4[4] = {2.0f, -1.0f, 0.5f, 0.0f};
  args[1] = dc_arg_value(DC_DTYPE_F32, 4, kv4);
  DC_CK_FAIL(dc_kernel_dispatch(k, &grid, args, 4), DC_ERR_INVALID_ARGUMENT,
             "got a value of f32x4");
  dc_buffer_release(odd);
  dc_buffer_release(o);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- The 4th slot ----------------------------------------------------===//

// Vectors read from buffers whose 4th slots hold what a built-in or an
// integer division must not see: INT_MIN over -1, x over 0, NaN, and
// lanes with their sign bit set. The same body runs as a plain loop,
// split at a barrier (regions) and on fibers (a barrier in a helper).
#define SLOT_BODY                                                            \
  "  size_t i = get_global_id(0);\n"                                         \
  "  int3 q = num[i] / den[i], r = num[i] % den[i];\n"                       \
  "  uint3 uq = as_uint3(num[i]) / as_uint3(den[i]);\n"                      \
  "  q += (int3)(1) / den[i];\n"                                             \
  "  vstore3(q, 3 * i, o);\n"                                                \
  "  vstore3(r, 3 * i + 1, o);\n"                                            \
  "  vstore3(as_int3(uq), 3 * i + 2, o);\n"                                  \
  "  f[4 * i] = dot(v[i], v[i]);\n"                                          \
  "  f[4 * i + 1] = length(v[i]);\n"                                         \
  "  f[4 * i + 2] = any(den[i] < 0) + 10 * all(den[i] > 0);\n"               \
  "  f[4 * i + 3] = normalize(v[i]).y + cross(v[i], v[i]).z;\n"

static const char kSlots[] =
    "#define ARGS __global const int3* num, __global const int3* den,\\\n"
    "  __global const float3* v, __global int* o, __global float* f\n"
    "void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "__kernel void looped(ARGS) {\n" SLOT_BODY "}\n"
    "__kernel void regions(ARGS) {\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n" SLOT_BODY "}\n"
    "__kernel void fibers(ARGS) {\n"
    "  sync();\n" SLOT_BODY "}\n";

static void check_slots(dc_program_t* p, const char* kernel,
                        const char* mode) {
  enum { N = 16 };
  int32_t num[4 * N], den[4 * N];
  float v[4 * N];
  for (int i = 0; i < N; ++i) {
    int32_t n3[4] = {100 + i, -7 * i - 1, -50, i % 2 ? INT_MIN : 5};
    int32_t d3[4] = {7, 3, i + 1, i % 2 ? -1 : 0};
    memcpy(num + 4 * i, n3, sizeof(n3));
    memcpy(den + 4 * i, d3, sizeof(d3));
    float v3[4] = {0.0f, 3.0f, 4.0f, i % 2 ? NAN : 1e30f};
    memcpy(v + 4 * i, v3, sizeof(v3));
  }
  dc_buffer_t* bn = buffer_on(dut, DC_DTYPE_I32, 4 * N, num);
  dc_buffer_t* bd = buffer_on(dut, DC_DTYPE_I32, 4 * N, den);
  dc_buffer_t* bv = buffer_on(dut, DC_DTYPE_F32, 4 * N, v);
  dc_buffer_t* bo = dc_test_buffer_new(dut, DC_DTYPE_I32, 9 * N, "o");
  dc_buffer_t* bf = dc_test_buffer_new(dut, DC_DTYPE_F32, 4 * N, "f");
  dc_arg_t args[5] = {dc_arg_buffer(bn), dc_arg_buffer(bd), dc_arg_buffer(bv),
                      dc_arg_buffer(bo), dc_arg_buffer(bf)};
  dc_kernel_t* k = kernel_of(p, kernel);
  if (mode != NULL) expect_dut_mode(k, mode);
  dc_dispatch_t grid = {.dims = 1, .global = {N}, .local = {4}};
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, 5));
  const int32_t* o = contents(bo);
  const float* f = contents(bf);
  for (int i = 0; i < N; ++i) {
    for (int l = 0; l < 3; ++l) {
      int32_t n = num[4 * i + l], d = den[4 * i + l];
      int32_t want[3] = {n / d + 1 / d, n % d,
                         (int32_t)((uint32_t)n / (uint32_t)d)};
      for (int w = 0; w < 3; ++w) {
        ck_assert_msg(o[9 * i + 3 * w + l] == want[w],
                      "%s: item %d, result %d lane %d: %d, expected %d",
                      kernel, i, w, l, o[9 * i + 3 * w + l], want[w]);
      }
    }
    ck_assert_msg(f[4 * i] == 25.0f, "%s: dot %g", kernel, f[4 * i]);
    ck_assert_msg(f[4 * i + 1] == 5.0f, "%s: length %g", kernel,
                  f[4 * i + 1]);
    ck_assert_msg(f[4 * i + 2] == 10.0f, "%s: any/all %g", kernel,
                  f[4 * i + 2]);
    ck_assert_msg(f[4 * i + 3] == 0.6f, "%s: normalize %g", kernel,
                  f[4 * i + 3]);
  }
  dc_buffer_release(bn);
  dc_buffer_release(bd);
  dc_buffer_release(bv);
  dc_buffer_release(bo);
  dc_buffer_release(bf);
}

START_TEST(test_vec3_fourth_slot_is_ignored) {
  dc_program_t* p = build_on(dut, "slots.cl", kSlots, NULL);
  check_slots(p, "looped", "loop");
  check_slots(p, "regions", "regions");
  check_slots(p, "fibers", "fibers");
  dc_program_release(p);
  p = build_on(dut, "slots.cl", kSlots, "-dc-checked");
  check_slots(p, "looped", NULL);
  check_slots(p, "fibers", NULL);
  dc_program_release(p);
}
END_TEST

static Suite* kernel_vec3_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_vec3", "dc-check-kernel-vec3");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_vec3_every_element_type);
  tcase_add_test(core, test_vec3_arguments_and_buffers);
  tcase_add_test(core, test_vec3_fourth_slot_is_ignored);
  return s;
}

DC_CHECK_MAIN(kernel_vec3_suite)

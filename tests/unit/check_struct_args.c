// check_struct_args.c: structs, unions and enums passed by value as kernel
// arguments: what the front end accepts and refuses (OpenCL C 6.9), the
// reflection of their layout (compared with the host compiler's layout of
// the same declarations), and running kernels that take them through a
// dispatch, a stream, a graph and the encoder, each of which must keep its
// own copy of a struct's bytes. Device-generic: the dispatches run on the
// device under test.
// SPDX-License-Identifier: MIT
#include <stdalign.h>
#include <stdatomic.h>
#include <time.h>

#include "dc/encoder.h"
#include "dc/graph.h"
#include "dc/stream.h"
#include "kernel_fixture.h"

// The host's spelling of the kernel language's vectors (same size and
// alignment as float2 and float4).
typedef float hfloat2 __attribute__((vector_size(8)));
typedef float hfloat4 __attribute__((vector_size(16)));

//===-- Kernels and their host structs ----------------------------------===//

static const char kSource[] =
    "typedef struct {\n"
    "  float2 scale;\n"
    "  float2 shift;\n"
    "  int n;\n"
    "  uchar bias;\n"
    "} affine_t;\n"
    "struct big { double w[20]; int k; };\n"
    "typedef enum { ADD, MUL = 3 } op_t;\n"
    "typedef union { float f; uint u; } bits_t;\n"
    "__kernel void affine(__global const float* in, __global float* out,\n"
    "                     affine_t a) {\n"
    "  int i = (int)get_global_id(0);\n"
    "  float2 v = (float2)(in[2 * i], in[2 * i + 1]) * a.scale + a.shift;\n"
    "  if (i < a.n) { out[2 * i] = v.x + a.bias; out[2 * i + 1] = v.y; }\n"
    "}\n"
    "__kernel void weigh(__global double* out, const struct big b,\n"
    "                    op_t op) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = op == MUL ? b.w[i] * b.k : b.w[i] + b.k;\n"
    "}\n"
    "__kernel void reinterpret(__global uint* out, bits_t b) {\n"
    "  out[get_global_id(0)] = b.u;\n"
    "}\n";

typedef struct {
  hfloat2 scale;
  hfloat2 shift;
  int32_t n;
  uint8_t bias;
} host_affine_t;

struct host_big {
  double w[20];
  int32_t k;
};

enum { OP_ADD = 0, OP_MUL = 3 };

static dc_program_t* build_source(void) {
  return build_on(dut, "structs.cl", kSource, NULL);
}

static host_affine_t an_affine(void) {
  host_affine_t a;
  memset(&a, 0, sizeof(a));  // the padding too: the kernel gets every byte
  a.scale = (hfloat2){2.0f, 3.0f};
  a.shift = (hfloat2){1.0f, -1.0f};
  a.n = 3;
  a.bias = 10;
  return a;
}

// out = in * scale + shift (+ bias on x) for the first n pairs of
// in = 0, 1, 2, ...; the rest keeps -1.
static void expect_affine(const float* out, const host_affine_t* a,
                          size_t pairs) {
  for (size_t i = 0; i < pairs; ++i) {
    float x = -1.0f, y = -1.0f;
    if ((int)i < a->n) {
      x = (float)(2 * i) * a->scale[0] + a->shift[0] + a->bias;
      y = (float)(2 * i + 1) * a->scale[1] + a->shift[1];
    }
    ck_assert_msg(out[2 * i] == x && out[2 * i + 1] == y,
                  "pair %zu: got (%g, %g), expected (%g, %g)", i, out[2 * i],
                  out[2 * i + 1], x, y);
  }
}

static struct host_big a_big(int k) {
  struct host_big b;
  memset(&b, 0, sizeof(b));
  for (int i = 0; i < 20; ++i) b.w[i] = 0.5 * (i + 1);
  b.k = k;
  return b;
}

// out[i] = w[i] * k for i < 4.
static void expect_weighed(dc_buffer_t* out, int k) {
  const double* o = contents(out);
  for (size_t i = 0; i < 4; ++i) {
    ck_assert_msg(o[i] == 0.5 * (double)(i + 1) * k,
                  "out[%zu] = %g, expected %g", i, o[i],
                  0.5 * (double)(i + 1) * k);
  }
}

static const dc_dispatch_t kFour = {.dims = 1, .global = {4}};

// The input pairs 0..7 and an output of -1s.
static void affine_buffers(dc_buffer_t** in, dc_buffer_t** out) {
  float values[8], minus[8];
  for (int i = 0; i < 8; ++i) {
    values[i] = (float)i;
    minus[i] = -1.0f;
  }
  *in = buffer_on(dut, DC_DTYPE_F32, 8, values);
  *out = buffer_on(dut, DC_DTYPE_F32, 8, minus);
}

//===-- The front end ---------------------------------------------------===//

// Structs (nested, with arrays and vectors, const, typedef'd), unions and
// enums are accepted by value, and helpers may take them on.
START_TEST(test_struct_args_accepted) {
  dc_program_t* p = build(
      "accept.cl",
      "struct inner { int a[2]; float4 v; };\n"
      "typedef struct { struct inner in[2]; char c; } outer_t;\n"
      "union u { int i; float f; };\n"
      "enum e { X, Y };\n"
      "static int sum(outer_t o) { return o.in[1].a[0] + o.c; }\n"
      "__kernel void k(__global int* out, const outer_t o, union u un,\n"
      "                enum e which) {\n"
      "  out[0] = sum(o) + un.i + (which == Y);\n"
      "}\n",
      NULL);
  dc_kernel_t* k = kernel_of(p, "k");
  ck_assert_int_eq(dc_kernel_arg_info(k, 1)->kind, DC_ARG_RECORD);
  ck_assert_str_eq(dc_kernel_arg_info(k, 1)->type_name, "const outer_t");
  ck_assert(dc_kernel_arg_info(k, 1)->is_const);
  ck_assert_int_eq(dc_kernel_arg_info(k, 2)->kind, DC_ARG_RECORD);
  ck_assert(dc_kernel_arg_info(k, 2)->is_union);
  ck_assert_str_eq(dc_kernel_arg_info(k, 2)->type_name, "union u");
  // An enum is its int.
  const dc_kernel_arg_info_t* e = dc_kernel_arg_info(k, 3);
  ck_assert_int_eq(e->kind, DC_ARG_SCALAR);
  ck_assert_int_eq(e->dtype, DC_DTYPE_I32);
  ck_assert_uint_eq(e->size, 4);
  ck_assert_str_eq(e->type_name, "enum e");
  dc_program_release(p);
}
END_TEST

// What a host cannot give: pointers, bool, size_t and the like, event_t,
// at any depth, named by the member's path at the parameter.
START_TEST(test_struct_args_refused) {
  static const struct {
    const char* source;
    const char* message;
  } kCases[] = {
      {"struct s { int n; int* p; };\n"
       "__kernel void k(__global int* o, struct s `a) {}\n",
       "kernel parameter 'a' has type struct s, whose member 'p' has type "
       "int*: a struct or union kernel argument cannot hold pointers, bool, "
       "size_t, ptrdiff_t, intptr_t, uintptr_t or event_t (OpenCL C 6.9)"},
      {"typedef struct { float x; bool on; } flag_t;\n"
       "__kernel void k(__global int* o, flag_t `f) {}\n",
       "whose member 'on' has type bool"},
      {"struct in { int a; size_t n; };\n"
       "struct out { float f; struct in items[2]; };\n"
       "__kernel void k(__global int* o, struct out `s) {}\n",
       "whose member 'items[0].n' has type size_t"},
      {"union u { int i; intptr_t p; };\n"
       "__kernel void k(__global int* o, union u `x) {}\n",
       "kernel parameter 'x' has type union u, whose member 'p' has type "
       "ptrdiff_t"},
      {"struct e { event_t ev; };\n"
       "__kernel void k(__global int* o, struct e `x) {}\n",
       "whose member 'ev' has type event_t"},
      {"struct fwd;\n"
       "__kernel void k(__global int* o, struct fwd `s) {}\n",
       "kernel parameter 's' has incomplete type struct fwd"},
      {"struct big { float16 m[32]; };\n"
       "__kernel void `k(__global int* o, struct big a) {}\n",
       "the arguments of kernel 'k' take 2056 bytes (each value at its "
       "size, each pointer 8), over the limit of 2048; pass large structs "
       "in a buffer"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    dc_test_expect_error_at("refuse.cl", kCases[i].source, NULL,
                            kCases[i].message);
  }
}
END_TEST

//===-- Reflection ------------------------------------------------------===//

// Every member's offset and size, and the record's size and alignment,
// equal what the host compiler gives the same declarations: packed and
// aligned records, an aligned member, nested records and arrays of them,
// a 2-D array, a vector, a union and an enum.
static const char kLayoutSource[] =
    "typedef struct { short lo; char tag; } pair_t;\n"
    "struct __attribute__((packed)) tight { char c; int i; double d; };\n"
    "struct __attribute__((aligned(32))) wide { int x; };\n"
    "typedef union { float f; uint u; uchar b[4]; } bits_t;\n"
    "typedef enum { A, B } ab_t;\n"
    "struct all {\n"
    "  char c;\n"
    "  float4 v;\n"
    "  pair_t pairs[3];\n"
    "  int m[2][3];\n"
    "  struct tight t;\n"
    "  long l __attribute__((aligned(16)));\n"
    "  bits_t bits;\n"
    "  struct wide w;\n"
    "  ab_t e;\n"
    "};\n"
    "__kernel void k(__global int* o, struct all s) {\n"
    "  o[0] = s.c + s.pairs[2].tag + s.m[1][2] + s.t.i + (int)s.l +\n"
    "         (int)s.bits.u + s.w.x + s.e + (int)s.v.w;\n"
    "}\n";

typedef struct { int16_t lo; int8_t tag; } h_pair_t;
struct __attribute__((packed)) h_tight { int8_t c; int32_t i; double d; };
struct __attribute__((aligned(32))) h_wide { int32_t x; };
typedef union { float f; uint32_t u; uint8_t b[4]; } h_bits_t;
struct h_all {
  int8_t c;
  hfloat4 v;
  h_pair_t pairs[3];
  int32_t m[2][3];
  struct h_tight t;
  int64_t l __attribute__((aligned(16)));
  h_bits_t bits;
  struct h_wide w;
  int32_t e;
};

// Asserts member |i| of |fields|.
static const dc_kernel_field_t* expect_field(
    const dc_kernel_field_t* fields, size_t i, const char* name,
    const char* type, size_t offset, size_t size, dc_dtype_t dtype,
    uint32_t width, size_t array_length) {
  const dc_kernel_field_t* f = &fields[i];
  ck_assert_str_eq(f->name, name);
  ck_assert_str_eq(f->type_name, type);
  ck_assert_msg(f->offset == offset && f->size == size,
                "member '%s' at %zu (%zu bytes), the host has it at %zu "
                "(%zu bytes)", name, f->offset, f->size, offset, size);
  ck_assert_int_eq(f->dtype, dtype);
  ck_assert_uint_eq(f->vector_width, width);
  ck_assert_uint_eq(f->array_length, array_length);
  return f;
}

#define HOST(member) offsetof(struct h_all, member), \
                     sizeof(((struct h_all*)0)->member)

START_TEST(test_struct_args_reflect_layout) {
  dc_program_t* p = build("layout.cl", kLayoutSource, NULL);
  const dc_kernel_arg_info_t* a = dc_kernel_arg_info(kernel_of(p, "k"), 1);
  ck_assert_int_eq(a->kind, DC_ARG_RECORD);
  ck_assert_str_eq(a->type_name, "struct all");
  ck_assert_int_eq(a->address_space, DC_ADDRESS_PRIVATE);
  ck_assert_uint_eq(a->size, sizeof(struct h_all));
  ck_assert_uint_eq(a->align, alignof(struct h_all));
  ck_assert(!a->is_union);
  ck_assert_uint_eq(a->field_count, 9);
  const dc_kernel_field_t* f = a->fields;
  expect_field(f, 0, "c", "char", HOST(c), DC_DTYPE_I8, 1, 0);
  expect_field(f, 1, "v", "float4", HOST(v), DC_DTYPE_F32, 4, 0);
  const dc_kernel_field_t* pairs =
      expect_field(f, 2, "pairs", "pair_t[3]", HOST(pairs), 0, 1, 3);
  ck_assert_uint_eq(pairs->field_count, 2);
  ck_assert(!pairs->is_union);
  expect_field(pairs->fields, 0, "lo", "short", offsetof(h_pair_t, lo), 2,
               DC_DTYPE_I16, 1, 0);
  expect_field(pairs->fields, 1, "tag", "char", offsetof(h_pair_t, tag), 1,
               DC_DTYPE_I8, 1, 0);
  expect_field(f, 3, "m", "int[2][3]", HOST(m), DC_DTYPE_I32, 1, 6);
  const dc_kernel_field_t* t =
      expect_field(f, 4, "t", "struct tight", HOST(t), 0, 1, 0);
  ck_assert_uint_eq(t->field_count, 3);
  expect_field(t->fields, 1, "i", "int", offsetof(struct h_tight, i), 4,
               DC_DTYPE_I32, 1, 0);
  expect_field(t->fields, 2, "d", "double", offsetof(struct h_tight, d), 8,
               DC_DTYPE_F64, 1, 0);
  expect_field(f, 5, "l", "long", HOST(l), DC_DTYPE_I64, 1, 0);
  const dc_kernel_field_t* bits =
      expect_field(f, 6, "bits", "bits_t", HOST(bits), 0, 1, 0);
  ck_assert(bits->is_union);
  expect_field(bits->fields, 2, "b", "uchar[4]", 0, 4, DC_DTYPE_U8, 1, 4);
  expect_field(f, 7, "w", "struct wide", HOST(w), 0, 1, 0);
  expect_field(f, 8, "e", "ab_t", HOST(e), DC_DTYPE_I32, 1, 0);
  dc_program_release(p);
}
END_TEST

// 3-component members take the room and alignment of 4-component ones
// (OpenCL C 6.1.5), as the host's 4-lane vector types do; the kernel
// reads them from that layout.
static const char kVec3Source[] =
    "typedef struct { char tag; float3 p; short3 s; double3 d; } v3_t;\n"
    "__kernel void v3(__global float* o, v3_t a) {\n"
    "  vstore3(a.p * 2.0f + convert_float3(a.s), 0, o);\n"
    "  o[3] = a.tag + (float)(a.d.x + a.d.y + a.d.z);\n"
    "}\n";

typedef int16_t hshort4 __attribute__((vector_size(8)));
// OpenCL aligns double3 and double4 to 32 bytes; gcc without AVX, 16.
typedef double hdouble4 __attribute__((vector_size(32), aligned(32)));
typedef struct {
  int8_t tag;
  hfloat4 p;
  hshort4 s;
  hdouble4 d;
} h_v3_t;

START_TEST(test_struct_args_vec3_members) {
  dc_program_t* p = build_on(dut, "v3.cl", kVec3Source, NULL);
  dc_kernel_t* k = kernel_of(p, "v3");
  const dc_kernel_arg_info_t* a = dc_kernel_arg_info(k, 1);
  ck_assert_uint_eq(a->size, sizeof(h_v3_t));
  ck_assert_uint_eq(a->align, alignof(h_v3_t));
  ck_assert_uint_eq(a->field_count, 4);
  expect_field(a->fields, 1, "p", "float3", offsetof(h_v3_t, p), 16,
               DC_DTYPE_F32, 3, 0);
  expect_field(a->fields, 2, "s", "short3", offsetof(h_v3_t, s), 8,
               DC_DTYPE_I16, 3, 0);
  expect_field(a->fields, 3, "d", "double3", offsetof(h_v3_t, d), 32,
               DC_DTYPE_F64, 3, 0);
  h_v3_t h;
  memset(&h, 0, sizeof(h));
  h.tag = 7;
  h.p = (hfloat4){1.5f, -2.0f, 4.0f, 99.0f};
  h.s = (hshort4){10, -20, 30, 99};
  h.d = (hdouble4){0.5, 0.25, 0.25, 99.0};
  dc_buffer_t* o = dc_test_buffer_new(dut, DC_DTYPE_F32, 4, "o");
  dc_arg_t args[2] = {dc_arg_buffer(o), dc_arg_bytes(&h, sizeof(h))};
  DC_CK_OK(dc_kernel_dispatch(k, &(dc_dispatch_t){.dims = 1, .global = {1}},
                              args, 2));
  const float* r = contents(o);
  ck_assert(r[0] == 13.0f && r[1] == -24.0f && r[2] == 38.0f);
  ck_assert(r[3] == 8.0f);
  dc_buffer_release(o);
  dc_program_release(p);
}
END_TEST

//===-- Running ---------------------------------------------------------===//

// A small struct (in the argument), a large one (borrowed from the
// caller), a union and an enum, through dc_kernel_dispatch.
START_TEST(test_struct_args_dispatch) {
  dc_program_t* p = build_source();
  dc_buffer_t *in, *out;
  affine_buffers(&in, &out);
  host_affine_t a = an_affine();
  dc_arg_t args[] = {dc_arg_buffer(in), dc_arg_buffer(out),
                     dc_arg_bytes(&a, sizeof(a))};
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "affine"), &kFour, args, 3));
  expect_affine(contents(out), &a, 4);

  struct host_big b = a_big(3);
  dc_buffer_t* weighed = dc_test_buffer_new(dut, DC_DTYPE_F64, 4, "w");
  dc_arg_t wargs[] = {dc_arg_buffer(weighed), dc_arg_bytes(&b, sizeof(b)),
                      dc_arg_i32(OP_MUL)};
  ck_assert_ptr_eq(wargs[1].bytes, &b);  // too large to copy: borrowed
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "weigh"), &kFour, wargs, 3));
  expect_weighed(weighed, 3);

  h_bits_t bits = {.f = 1.0f};
  dc_buffer_t* u = dc_test_buffer_new(dut, DC_DTYPE_U32, 4, "u");
  dc_arg_t uargs[] = {dc_arg_buffer(u), dc_arg_bytes(&bits, sizeof(bits))};
  DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "reinterpret"), &kFour, uargs, 2));
  ck_assert_uint_eq(((const uint32_t*)contents(u))[3], 0x3f800000u);
  dc_buffer_release(u);
  dc_buffer_release(weighed);
  dc_buffer_release(in);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

// Holds a stream until the test opens it (10 s at most, then it fails).
static dc_status_t wait_at_gate(void* arg) {
  atomic_int* open = arg;
  struct timespec ms = {0, 1000000L};
  for (int i = 0; i < 10000 && !atomic_load(open); ++i) nanosleep(&ms, NULL);
  return atomic_load(open) ? DC_OK
                           : dc_set_error(DC_ERR_DEADLINE_EXCEEDED,
                                          "the gate never opened");
}

// Every way the CPU runs a kernel unpacks the struct: a loop, regions
// split at a barrier, fibers (a barrier in a helper).
START_TEST(test_struct_args_execution_modes) {
  dc_program_t* p = build_on(
      dut, "modes.cl",
      "struct p { int k; float4 v; int m[3]; };\n"
      "static void sync(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
      "#define BODY(SYNC) size_t l = get_local_id(0);                   \\\n"
      "  tmp[l] = s.k + (int)l; SYNC;                                   \\\n"
      "  out[get_global_id(0)] = tmp[(l + 1) % get_local_size(0)] +     \\\n"
      "                          s.m[2] + (int)s.v.w;\n"
      "__kernel void loop(__global int* out, struct p s) {\n"
      "  int tmp[4]; size_t l = get_local_id(0); tmp[(l + 1) % 4] = s.k +\n"
      "  (int)(l + 1) % 4; out[get_global_id(0)] = tmp[(l + 1) % 4] +\n"
      "  s.m[2] + (int)s.v.w;\n"
      "}\n"
      "__kernel void regions(__global int* out, __local int* tmp,\n"
      "                      struct p s) {\n"
      "  BODY(barrier(CLK_LOCAL_MEM_FENCE))\n"
      "}\n"
      "__kernel void fibers(__global int* out, __local int* tmp,\n"
      "                     struct p s) {\n"
      "  BODY(sync())\n"
      "}\n",
      NULL);
  struct {
    int32_t k;
    hfloat4 v;
    int32_t m[3];
  } s;
  memset(&s, 0, sizeof(s));
  s.k = 10;
  s.v = (hfloat4){1, 2, 3, 4};
  s.m[2] = 100;
  static const char* const kModes[] = {"loop", "regions", "fibers"};
  dc_dispatch_t grid = {.dims = 1, .global = {8}, .local = {4}};
  for (size_t m = 0; m < 3; ++m) {
    dc_kernel_t* k = kernel_of(p, kModes[m]);
    expect_dut_mode(k, kModes[m]);
    dc_buffer_t* out = dc_test_buffer_new(dut, DC_DTYPE_I32, 8, "out");
    dc_arg_t loop_args[] = {dc_arg_buffer(out), dc_arg_bytes(&s, sizeof(s))};
    dc_arg_t args[] = {dc_arg_buffer(out), dc_arg_local(16),
                       dc_arg_bytes(&s, sizeof(s))};
    DC_CK_OK(dc_kernel_dispatch(k, &grid, m == 0 ? loop_args : args,
                                m == 0 ? 2 : 3));
    const int32_t* o = contents(out);
    for (int i = 0; i < 8; ++i) {  // 10 + the next item's id + 100 + 4
      ck_assert_msg(o[i] == 114 + (i + 1) % 4, "%s: out[%d] = %d",
                    kModes[m], i, o[i]);
    }
    dc_buffer_release(out);
  }
  dc_program_release(p);
}
END_TEST

// A stream's command keeps its own copy: the caller's bytes change and are
// freed before the command runs.
START_TEST(test_struct_args_stream_copies) {
  dc_program_t* p = build_source();
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(dut, NULL, &s));
  dc_buffer_t *in, *out;
  affine_buffers(&in, &out);
  dc_buffer_t* weighed = dc_test_buffer_new(dut, DC_DTYPE_F64, 4, "w");
  // Holds the stream until both are queued, so neither has run yet.
  atomic_int gate = 0;
  DC_CK_OK(dc_stream_host(s, wait_at_gate, &gate));
  host_affine_t a = an_affine();
  dc_arg_t args[] = {dc_arg_buffer(in), dc_arg_buffer(out),
                     dc_arg_bytes(&a, sizeof(a))};
  DC_CK_OK(dc_stream_dispatch(s, kernel_of(p, "affine"), &kFour, args, 3));
  struct host_big* b = malloc(sizeof(*b));
  ck_assert_ptr_nonnull(b);
  *b = a_big(5);
  dc_arg_t wargs[] = {dc_arg_buffer(weighed), dc_arg_bytes(b, sizeof(*b)),
                      dc_arg_i32(OP_MUL)};
  DC_CK_OK(dc_stream_dispatch(s, kernel_of(p, "weigh"), &kFour, wargs, 3));
  memset(b, 0xff, sizeof(*b));
  free(b);
  host_affine_t expected = a;
  a.n = 0;
  atomic_store(&gate, 1);
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  expect_affine(contents(out), &expected, 4);
  expect_weighed(weighed, 5);
  dc_stream_release(s);
  dc_buffer_release(weighed);
  dc_buffer_release(in);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

// A graph's op and each instance keep their own copies; set_arg replaces
// an instance's, checked against the reflected size.
START_TEST(test_struct_args_graph) {
  dc_program_t* p = build_source();
  dc_kernel_t* k = kernel_of(p, "weigh");
  dc_buffer_t* weighed = dc_test_buffer_new(dut, DC_DTYPE_F64, 4, "w");
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(ctx, NULL, &g));
  struct host_big* b = malloc(sizeof(*b));
  ck_assert_ptr_nonnull(b);
  *b = a_big(2);
  dc_arg_t args[] = {dc_arg_buffer(weighed), dc_arg_bytes(b, sizeof(*b)),
                     dc_arg_i32(OP_MUL)};
  DC_CK_OK(dc_graph_dispatch(g, "weigh", k, &kFour, args, 3, NULL));
  memset(b, 0, sizeof(*b));
  dc_stream_group_t* grp = NULL;
  DC_CK_OK(dc_stream_group_create(dut, NULL, &grp));
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, grp, &e));
  dc_graph_release(g);  // the instance keeps what it needs
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  expect_weighed(weighed, 2);

  *b = a_big(7);
  dc_arg_t next = dc_arg_bytes(b, sizeof(*b));
  DC_CK_OK(dc_graph_exec_set_arg(e, "weigh", 1, &next));
  memset(b, 0, sizeof(*b));
  free(b);
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  expect_weighed(weighed, 7);
  DC_CK_OK(dc_graph_exec_run(e, NULL));  // a replay
  expect_weighed(weighed, 7);

  host_affine_t small = an_affine();
  dc_arg_t wrong = dc_arg_bytes(&small, sizeof(small));
  DC_CK_FAIL(dc_graph_exec_set_arg(e, "weigh", 1, &wrong),
             DC_ERR_INVALID_ARGUMENT,
             "dc_graph_exec_set_arg: kernel 'weigh': argument 1 'b' (const "
             "struct big): got 24 bytes, the kernel's struct takes 168");
  dc_graph_exec_release(e);
  dc_stream_group_release(grp);
  dc_buffer_release(weighed);
  dc_program_release(p);
}
END_TEST

// The encoder copies a bound struct, so a loop may reuse its variable; a
// refused binding keeps the previous one.
START_TEST(test_struct_args_encoder) {
  dc_program_t* p = build_source();
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(dut, NULL, &s));
  dc_encoder_t* enc = NULL;
  DC_CK_OK(dc_encoder_create(s, &enc));
  dc_buffer_t* weighed = dc_test_buffer_new(dut, DC_DTYPE_F64, 4, "w");
  DC_CK_OK(dc_encoder_set_kernel(enc, kernel_of(p, "weigh")));
  dc_arg_t out = dc_arg_buffer(weighed), op = dc_arg_i32(OP_MUL);
  DC_CK_OK(dc_encoder_set_arg(enc, 0, &out));
  DC_CK_OK(dc_encoder_set_arg(enc, 2, &op));
  size_t grid[1] = {4};
  DC_CK_OK(dc_encoder_set_grid(enc, 1, grid));
  struct host_big b = a_big(4);
  dc_arg_t arg = dc_arg_bytes(&b, sizeof(b));
  DC_CK_OK(dc_encoder_set_arg_by_name(enc, "b", &arg));
  memset(&b, 0, sizeof(b));
  dc_arg_t wrong = dc_arg_bytes(&b, sizeof(b) - 8);
  DC_CK_FAIL(dc_encoder_set_arg(enc, 1, &wrong), DC_ERR_INVALID_ARGUMENT,
             "got 160 bytes, the kernel's struct takes 168");
  DC_CK_OK(dc_encoder_dispatch(enc));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  expect_weighed(weighed, 4);
  dc_encoder_release(enc);
  dc_stream_release(s);
  dc_buffer_release(weighed);
  dc_program_release(p);
}
END_TEST

//===-- Errors ----------------------------------------------------------===//

// Wrong sizes, kinds and missing bytes, named with the kernel and the
// argument, on every path that takes arguments.
START_TEST(test_struct_args_errors) {
  dc_program_t* p = build_source();
  dc_kernel_t* affine = kernel_of(p, "affine");
  dc_buffer_t *in, *out;
  affine_buffers(&in, &out);
  host_affine_t a = an_affine();
  dc_arg_t args[] = {dc_arg_buffer(in), dc_arg_buffer(out),
                     dc_arg_bytes(&a, sizeof(a) - 4)};
  DC_CK_FAIL(dc_kernel_dispatch(affine, &kFour, args, 3),
             DC_ERR_INVALID_ARGUMENT,
             "dc_kernel_dispatch: kernel 'affine': argument 2 'a' "
             "(affine_t): got 20 bytes, the kernel's struct takes 24");
  args[2] = dc_arg_f32(1.0f);
  DC_CK_FAIL(dc_kernel_dispatch(affine, &kFour, args, 3),
             DC_ERR_INVALID_ARGUMENT,
             "argument 2 'a' (affine_t): expected a struct's bytes "
             "(dc_arg_bytes), got a value");
  args[2] = dc_arg_bytes(&a, sizeof(a));
  args[1] = dc_arg_bytes(&a, sizeof(a));
  DC_CK_FAIL(dc_kernel_dispatch(affine, &kFour, args, 3),
             DC_ERR_INVALID_ARGUMENT,
             "argument 1 'out' (__global float*): expected a buffer, got a "
             "struct's bytes (dc_arg_bytes)");
  args[1] = dc_arg_buffer(out);

  dc_buffer_t* weighed = dc_test_buffer_new(dut, DC_DTYPE_F64, 4, "w");
  dc_arg_t none[] = {dc_arg_buffer(weighed), dc_arg_bytes(NULL, 168),
                     dc_arg_i32(0)};
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "weigh"), &kFour, none, 3),
             DC_ERR_INVALID_ARGUMENT, "argument 1 'b' (const struct big): "
             "its bytes are NULL");
  dc_arg_t zeros = dc_arg_bytes(NULL, sizeof(a));  // fits: zeros
  ck_assert_uint_eq(zeros.value[0], 0);
  ck_assert_ptr_null(zeros.bytes);

  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(dut, NULL, &s));
  unsigned char raw[32] = {0};
  args[2] = dc_arg_bytes(raw, 25);
  DC_CK_FAIL(dc_stream_dispatch(s, affine, &kFour, args, 3),
             DC_ERR_INVALID_ARGUMENT,
             "dc_stream_dispatch: kernel 'affine': argument 2 'a' "
             "(affine_t): got 25 bytes, the kernel's struct takes 24");
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(ctx, NULL, &g));
  DC_CK_FAIL(dc_graph_dispatch(g, "op", affine, &kFour, args, 3, NULL),
             DC_ERR_INVALID_ARGUMENT, "got 25 bytes");
  dc_graph_release(g);
  dc_stream_release(s);
  dc_buffer_release(weighed);
  dc_buffer_release(in);
  dc_buffer_release(out);
  dc_program_release(p);
}
END_TEST

// A native kernel cannot describe a struct argument (CPU only).
START_TEST(test_struct_args_native_refused) {
  dc_kernel_arg_info_t desc[] = {
      {.name = "s", .kind = DC_ARG_RECORD, .size = 16}};
  dc_native_kernel_params_t params = {
      .name = "native", .fn = (dc_native_kernel_fn_t)1, .args = desc,
      .arg_count = 1};
  dc_kernel_t* k = SENTINEL;
  DC_CK_FAIL(dc_kernel_create_native(cpu, &params, &k), DC_ERR_UNSUPPORTED,
             "argument 0 's' is a struct (DC_ARG_RECORD): native kernels");
}
END_TEST

static Suite* struct_args_suite(void) {
  Suite* s = dc_test_kernel_suite("struct_args", "dc-check-struct-args");
  TCase* front = dc_test_kernel_tcase(s, "front_end");
  tcase_add_test(front, test_struct_args_accepted);
  tcase_add_test(front, test_struct_args_refused);
  tcase_add_test(front, test_struct_args_reflect_layout);
  tcase_add_test(front, test_struct_args_vec3_members);
  TCase* run = dc_test_kernel_tcase(s, "run");
  tcase_add_test(run, test_struct_args_dispatch);
  tcase_add_test(run, test_struct_args_execution_modes);
  tcase_add_test(run, test_struct_args_stream_copies);
  tcase_add_test(run, test_struct_args_graph);
  tcase_add_test(run, test_struct_args_encoder);
  TCase* errors = dc_test_kernel_tcase(s, "errors");
  tcase_add_test(errors, test_struct_args_errors);
  if (dc_test_device_is_the_cpu()) {
    tcase_add_test(errors, test_struct_args_native_refused);
  }
  return s;
}

DC_CHECK_DEVICE_MAIN(struct_args_suite)

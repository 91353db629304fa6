// pipeline_demo.c: an image pipeline on the CPU device, with kernels.
//
// Generates a 1024x768 test image, blurs it (a horizontal and a vertical
// pass), takes the gradient magnitude with a Sobel filter, and counts a
// 256-bin histogram with atomics. Every stage is a kernel in the kernel
// language, compiled at run time (and cached), and every result is checked
// against a plain serial computation on the host.
//   Run: ./pipeline_demo [width height]
// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dc/dc.h"

static const char kSource[] =
    "__kernel void blur_h(__global const float* in, __global float* out,\n"
    "                     int w) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  int l = max(x - 1, 0), r = min(x + 1, w - 1);\n"
    "  out[y * w + x] = (in[y * w + l] + in[y * w + x] + in[y * w + r]) /\n"
    "                   3.0f;\n"
    "}\n"
    "__kernel void blur_v(__global const float* in, __global float* out,\n"
    "                     int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  int u = max(y - 1, 0), d = min(y + 1, h - 1);\n"
    "  out[y * w + x] = (in[u * w + x] + in[y * w + x] + in[d * w + x]) /\n"
    "                   3.0f;\n"
    "}\n"
    "__kernel void sobel(__global const float* in, __global float* out,\n"
    "                    int w, int h) {\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  int l = max(x - 1, 0), r = min(x + 1, w - 1);\n"
    "  int u = max(y - 1, 0), d = min(y + 1, h - 1);\n"
    "  float gx = in[u * w + r] + 2.0f * in[y * w + r] + in[d * w + r]\n"
    "           - in[u * w + l] - 2.0f * in[y * w + l] - in[d * w + l];\n"
    "  float gy = in[d * w + l] + 2.0f * in[d * w + x] + in[d * w + r]\n"
    "           - in[u * w + l] - 2.0f * in[u * w + x] - in[u * w + r];\n"
    "  out[y * w + x] = sqrt(gx * gx + gy * gy);\n"
    "}\n"
    "__kernel void histogram(__global const float* in, __global uint* bins) {\n"
    "  uint v = (uint)clamp(in[get_global_id(0)], 0.0f, 255.0f);\n"
    "  atomic_inc(&bins[v]);\n"
    "}\n";

typedef struct image_t {
  int w, h;
  float* pixels;
} image_t;

// The host's version of each stage, to check the kernels against.
static float at(const image_t* im, int x, int y) {
  x = x < 0 ? 0 : x >= im->w ? im->w - 1 : x;
  y = y < 0 ? 0 : y >= im->h ? im->h - 1 : y;
  return im->pixels[y * im->w + x];
}

static void host_blur(const image_t* in, image_t* out, int dx, int dy) {
  for (int y = 0; y < in->h; ++y) {
    for (int x = 0; x < in->w; ++x) {
      out->pixels[y * in->w + x] =
          (at(in, x - dx, y - dy) + at(in, x, y) + at(in, x + dx, y + dy)) /
          3.0f;
    }
  }
}

static void host_sobel(const image_t* in, image_t* out) {
  for (int y = 0; y < in->h; ++y) {
    for (int x = 0; x < in->w; ++x) {
      float gx = at(in, x + 1, y - 1) + 2.0f * at(in, x + 1, y) +
                 at(in, x + 1, y + 1) - at(in, x - 1, y - 1) -
                 2.0f * at(in, x - 1, y) - at(in, x - 1, y + 1);
      float gy = at(in, x - 1, y + 1) + 2.0f * at(in, x, y + 1) +
                 at(in, x + 1, y + 1) - at(in, x - 1, y - 1) -
                 2.0f * at(in, x, y - 1) - at(in, x + 1, y - 1);
      out->pixels[y * in->w + x] = sqrtf(gx * gx + gy * gy);
    }
  }
}

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static dc_buffer_t* new_buffer(dc_device_t* dev, dc_dtype_t dtype, size_t n,
                               const char* label) {
  dc_buffer_params_t params = {.dtype = dtype, .length = n, .label = label};
  dc_buffer_t* b = NULL;
  DC_CHECK(dc_buffer_create(dev, &params, &b));
  return b;
}

static void run(dc_program_t* prog, const char* name, uint32_t dims,
                size_t w, size_t h, const dc_arg_t* args, size_t n) {
  dc_kernel_t* k = NULL;
  DC_CHECK(dc_program_find_kernel(prog, name, &k));
  dc_dispatch_t grid = {.dims = dims, .global = {dims == 1 ? w * h : w, h}};
  DC_CHECK(dc_kernel_dispatch(k, &grid, args, n));
}

// Compares |n| floats, allowing for the last-bit differences of sqrt and
// of the order of additions. Returns the number of mismatches.
static size_t compare(const float* a, const float* b, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    bad += fabsf(a[i] - b[i]) > 1e-3f * (1.0f + fabsf(b[i]));
  }
  return bad;
}

int main(int argc, char** argv) {
  int w = argc > 2 ? atoi(argv[1]) : 1024, h = argc > 2 ? atoi(argv[2]) : 768;
  if (w < 2 || h < 2) w = 1024, h = 768;
  size_t n = (size_t)w * (size_t)h;
  dc_context_t* ctx = NULL;
  DC_CHECK(dc_context_create(NULL, &ctx));
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_find_device(ctx, "cpu", &cpu));
  const dc_device_info_t* info = dc_device_info(cpu);
  printf("device %s: %s, %u threads, %u-byte SIMD\n", info->name, info->model,
         info->worker_threads, info->simd_width);

  double t0 = seconds();
  dc_program_params_t params = {.source = kSource, .name = "pipeline.cl"};
  dc_program_t* prog = NULL;
  DC_CHECK(dc_program_create(cpu, &params, &prog));
  double t1 = seconds();

  image_t src = {w, h, malloc(n * sizeof(float))};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      src.pixels[y * w + x] = 127.5f + 127.5f * sinf(0.05f * x) * cosf(0.07f * y);
    }
  }
  dc_buffer_t* image = new_buffer(cpu, DC_DTYPE_F32, n, "image");
  dc_buffer_t* tmp = new_buffer(cpu, DC_DTYPE_F32, n, "tmp");
  dc_buffer_t* blurred = new_buffer(cpu, DC_DTYPE_F32, n, "blurred");
  dc_buffer_t* edges = new_buffer(cpu, DC_DTYPE_F32, n, "edges");
  dc_buffer_t* bins = new_buffer(cpu, DC_DTYPE_U32, 256, "histogram");
  DC_CHECK(dc_buffer_write(image, 0, src.pixels, n));
  uint32_t zero = 0;
  DC_CHECK(dc_buffer_fill(bins, 0, 256, &zero));

  double t2 = seconds();
  run(prog, "blur_h", 2, w, h,
      (dc_arg_t[]){dc_arg_buffer(image), dc_arg_buffer(tmp), dc_arg_i32(w)},
      3);
  run(prog, "blur_v", 2, w, h,
      (dc_arg_t[]){dc_arg_buffer(tmp), dc_arg_buffer(blurred), dc_arg_i32(w),
                   dc_arg_i32(h)},
      4);
  run(prog, "sobel", 2, w, h,
      (dc_arg_t[]){dc_arg_buffer(blurred), dc_arg_buffer(edges),
                   dc_arg_i32(w), dc_arg_i32(h)},
      4);
  run(prog, "histogram", 1, w, h,
      (dc_arg_t[]){dc_arg_buffer(edges), dc_arg_buffer(bins)}, 2);
  double t3 = seconds();

  // The same pipeline on the host.
  image_t a = {w, h, malloc(n * sizeof(float))};
  image_t b = {w, h, malloc(n * sizeof(float))};
  image_t c = {w, h, malloc(n * sizeof(float))};
  host_blur(&src, &a, 1, 0);
  host_blur(&a, &b, 0, 1);
  host_sobel(&b, &c);
  float* got = malloc(n * sizeof(float));
  DC_CHECK(dc_buffer_read(edges, 0, got, n));
  size_t bad = compare(got, c.pixels, n);
  uint32_t hist[256], total = 0;
  DC_CHECK(dc_buffer_read(bins, 0, hist, 256));
  for (int i = 0; i < 256; ++i) total += hist[i];
  bad += total != n;

  printf("program built in %.1f ms (%s cache)\n", 1e3 * (t1 - t0),
         t1 - t0 < 0.005 ? "from the" : "not in the");
  printf("blur, blur, sobel, histogram over %dx%d: %.2f ms\n", w, h,
         1e3 * (t3 - t2));
  printf("histogram of %u pixels; results %s\n", total,
         bad ? "DIFFER from the host's" : "match the host's");

  dc_buffer_release(image);
  dc_buffer_release(tmp);
  dc_buffer_release(blurred);
  dc_buffer_release(edges);
  dc_buffer_release(bins);
  dc_program_release(prog);
  dc_context_release(ctx);
  free(src.pixels);
  free(a.pixels);
  free(b.pixels);
  free(c.pixels);
  free(got);
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

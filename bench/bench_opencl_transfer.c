// bench_opencl_transfer.c: bench_opencl_device's transfer rows: bytes
// between a CPU-device buffer and opencl:0 through the engine, against the
// same bytes moved by opencl:0's driver called directly (pocl, or the
// GPU's own driver where opencl:0 is a GPU), side by side in one run
// (issue 18: the same as on a GPU for every device pair):
//
//   CPU-device buffer to opencl:0    dc_buffer_copy from a buffer of the
//                                    cpu device vs a blocking
//                                    clEnqueueWriteBuffer from malloc'd
//                                    memory into a cl_mem of the driver's
//                                    own context, and the same from
//                                    pinned memory (a mapped
//                                    CL_MEM_ALLOC_HOST_PTR buffer: the
//                                    bus's speed, for reference)
//   opencl:0 to a CPU-device buffer  dc_buffer_copy back vs a blocking
//                                    clEnqueueReadBuffer
//
// 64 MiB each way, two copies a sample, GB/s beside the medians; each
// path is checked once against a byte pattern before anything is timed.
// Goal: at least 0.9x the driver from malloc'd memory (ratio<=1.11).
// SPDX-License-Identifier: MIT
#include "bench_opencl_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define BYTES ((size_t)64 << 20)
#define CALLS 2
#define GIB ((double)((size_t)1 << 30))

typedef struct transfer_t {
  dc_buffer_t* host;  // on the cpu device
  dc_buffer_t* dev;   // on opencl:0
  cl_command_queue q;
  cl_mem mem;         // pocl's
  uint8_t* plain;     // malloc'd, the driver's host side
  cl_mem pinned;      // CL_MEM_ALLOC_HOST_PTR, mapped at |pinned_host|
  uint8_t* pinned_host;
} transfer_t;

static uint8_t pattern(size_t i) { return (uint8_t)(i * 29u + (i >> 13)); }

static void check(const char* what, const uint8_t* p) {
  for (size_t i = 0; i < BYTES; i += 4093) {
    if (p[i] != pattern(i)) {
      fprintf(stderr, "bench_opencl_device: %s: byte %zu is %u, expected "
              "%u\n", what, i, p[i], pattern(i));
      abort();
    }
  }
}

static void to_dc(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(t->dev, 0, t->host, 0, BYTES));
  }
}

static void from_dc(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(t->host, 0, t->dev, 0, BYTES));
  }
}

static void to_cl(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    OCL_CHECK(clEnqueueWriteBuffer(t->q, t->mem, CL_TRUE, 0, BYTES, t->plain,
                                   0, NULL, NULL));
  }
}

static void pinned_to_cl(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    OCL_CHECK(clEnqueueWriteBuffer(t->q, t->mem, CL_TRUE, 0, BYTES,
                                   t->pinned_host, 0, NULL, NULL));
  }
}

static void from_cl(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    OCL_CHECK(clEnqueueReadBuffer(t->q, t->mem, CL_TRUE, 0, BYTES, t->plain,
                                  0, NULL, NULL));
  }
}

// Each side there and back once: what returns is what left.
static void check_paths(transfer_t* t) {
  uint8_t* host = NULL;
  DC_CHECK(dc_buffer_host_pointer(t->host, (void**)&host));
  for (size_t i = 0; i < BYTES; ++i) host[i] = t->plain[i] = pattern(i);
  to_dc(t, 1);
  memset(host, 0, BYTES);
  from_dc(t, 1);
  check("dc_buffer_copy there and back", host);
  to_cl(t, 1);
  memset(t->plain, 0, BYTES);
  from_cl(t, 1);
  check("clEnqueueWriteBuffer/ReadBuffer", t->plain);
  memcpy(t->pinned_host, host, BYTES);
  pinned_to_cl(t, 1);
  memset(t->plain, 0, BYTES);
  from_cl(t, 1);
  check("clEnqueueWriteBuffer from pinned memory", t->plain);
}

// Cases 0 and 1 are the engine and the driver from malloc'd memory; a
// third is a reference, reported beside them.
static void run_row(const char* name, bench_case_t* cases, int count) {
  const double gib = (double)BYTES / GIB;
  const double units[3] = {gib, gib, gib};
  bench_run_sampled(name, cases, count, bench_reps(), CALLS, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.11");
  if (count > 2) bench_print_ratio(name, &cases[0], &cases[2], NULL);
  for (int k = 0; k < count; ++k) {
    bench_print_rate(name, &cases[k], GIB, "GB/s");
  }
}

void bench_opencl_transfer(dc_context_t* ctx, dc_device_t* dev,
                           bench_ocl_t* ocl) {
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_find_device(ctx, "cpu", &cpu));
  transfer_t t = {.q = ocl->queues[0]};
  t.host = bench_dc_buffer(cpu, DC_DTYPE_U8, BYTES, "transfer host", NULL);
  t.dev = bench_dc_buffer(dev, DC_DTYPE_U8, BYTES, "transfer device", NULL);
  cl_int err = CL_SUCCESS;
  t.mem = clCreateBuffer(ocl->ctx, CL_MEM_READ_WRITE, BYTES, NULL, &err);
  OCL_CHECK(err);
  t.plain = bench_xmalloc(BYTES);
  t.pinned = clCreateBuffer(ocl->ctx, CL_MEM_ALLOC_HOST_PTR, BYTES, NULL,
                            &err);
  OCL_CHECK(err);
  t.pinned_host = clEnqueueMapBuffer(t.q, t.pinned, CL_TRUE,
                                     CL_MAP_READ | CL_MAP_WRITE, 0, BYTES, 0,
                                     NULL, NULL, &err);
  OCL_CHECK(err);
  check_paths(&t);
  const char* to = "CPU-device buffer to opencl:0, 64 MiB (per GiB)";
  bench_note(to, "dc: dc_buffer_copy from a buffer of the cpu device to one "
             "of opencl:0 (%s); driver: blocking clEnqueueWriteBuffer of "
             "malloc'd memory into a buffer of its own context, and of "
             "pinned memory (a mapped CL_MEM_ALLOC_HOST_PTR buffer); %d "
             "copies a sample; goal: at least 0.9x the driver from "
             "malloc'd memory (ratio<=1.11)", ocl->device_name, CALLS);
  bench_case_t there[3] = {
      {.variant = "dc_buffer_copy cpu -> opencl:0", .body = to_dc, .arg = &t},
      {.variant = "clEnqueueWriteBuffer", .body = to_cl, .arg = &t},
      {.variant = "clEnqueueWriteBuffer pinned", .body = pinned_to_cl,
       .arg = &t}};
  run_row(to, there, 3);
  const char* from = "opencl:0 to a CPU-device buffer, 64 MiB (per GiB)";
  bench_note(from, "the row before, the other way: dc_buffer_copy back vs "
             "a blocking clEnqueueReadBuffer");
  bench_case_t back[2] = {
      {.variant = "dc_buffer_copy opencl:0 -> cpu", .body = from_dc,
       .arg = &t},
      {.variant = "clEnqueueReadBuffer", .body = from_cl, .arg = &t}};
  run_row(from, back, 2);
  OCL_CHECK(clEnqueueUnmapMemObject(t.q, t.pinned, t.pinned_host, 0, NULL,
                                    NULL));
  OCL_CHECK(clFinish(t.q));
  OCL_CHECK(clReleaseMemObject(t.pinned));
  free(t.plain);
  OCL_CHECK(clReleaseMemObject(t.mem));
  dc_buffer_release(t.host);
  dc_buffer_release(t.dev);
}

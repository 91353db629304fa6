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
//   both ways at once                an upload and a download on two
//                                    engine streams vs a write and a read
//                                    on two in-order queues of the
//                                    driver, from and into malloc'd
//                                    memory, and from and into pinned
//                                    memory (for reference)
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

// One direction's buffers: the engine's, the driver's and their host
// sides. Both ways at once, [0] goes to the device and [1] comes back.
typedef struct transfer_side_t {
  dc_buffer_t* host;  // on the cpu device
  dc_buffer_t* dev;   // on opencl:0
  dc_stream_t* stream;  // on opencl:0
  cl_command_queue q;
  cl_mem mem;         // the driver's own
  uint8_t* plain;     // malloc'd, the driver's host side
  cl_mem pinned;      // CL_MEM_ALLOC_HOST_PTR, mapped at |pinned_host|
  uint8_t* pinned_host;
} transfer_side_t;

typedef struct transfer_t {
  transfer_side_t side[2];
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
  transfer_side_t* t = &((transfer_t*)arg)->side[0];
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(t->dev, 0, t->host, 0, BYTES));
  }
}

static void from_dc(void* arg, uint64_t calls) {
  transfer_side_t* t = &((transfer_t*)arg)->side[0];
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(t->host, 0, t->dev, 0, BYTES));
  }
}

// Writes |side|'s host memory (|pinned|: its pinned copy) to its buffer,
// blocking or not.
static void write_cl(transfer_side_t* t, bool pinned, cl_bool blocking) {
  OCL_CHECK(clEnqueueWriteBuffer(t->q, t->mem, blocking, 0, BYTES,
                                 pinned ? t->pinned_host : t->plain, 0, NULL,
                                 NULL));
}

static void read_cl(transfer_side_t* t, bool pinned, cl_bool blocking) {
  OCL_CHECK(clEnqueueReadBuffer(t->q, t->mem, blocking, 0, BYTES,
                                pinned ? t->pinned_host : t->plain, 0, NULL,
                                NULL));
}

static void to_cl(void* arg, uint64_t calls) {
  for (uint64_t i = 0; i < calls; ++i) {
    write_cl(&((transfer_t*)arg)->side[0], false, CL_TRUE);
  }
}

static void pinned_to_cl(void* arg, uint64_t calls) {
  for (uint64_t i = 0; i < calls; ++i) {
    write_cl(&((transfer_t*)arg)->side[0], true, CL_TRUE);
  }
}

static void from_cl(void* arg, uint64_t calls) {
  for (uint64_t i = 0; i < calls; ++i) {
    read_cl(&((transfer_t*)arg)->side[0], false, CL_TRUE);
  }
}

static void both_dc(void* arg, uint64_t calls) {
  transfer_side_t* up = &((transfer_t*)arg)->side[0];
  transfer_side_t* down = &((transfer_t*)arg)->side[1];
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_stream_copy(up->stream, up->dev, 0, up->host, 0, BYTES));
    DC_CHECK(dc_stream_copy(down->stream, down->host, 0, down->dev, 0,
                            BYTES));
    DC_CHECK(dc_stream_sync(up->stream, DC_TIMEOUT_INFINITE));
    DC_CHECK(dc_stream_sync(down->stream, DC_TIMEOUT_INFINITE));
  }
}

static void both_cl_from(transfer_t* t, bool pinned, uint64_t calls) {
  for (uint64_t i = 0; i < calls; ++i) {
    write_cl(&t->side[0], pinned, CL_FALSE);
    read_cl(&t->side[1], pinned, CL_FALSE);
    OCL_CHECK(clFlush(t->side[0].q));
    OCL_CHECK(clFlush(t->side[1].q));
    OCL_CHECK(clFinish(t->side[0].q));
    OCL_CHECK(clFinish(t->side[1].q));
  }
}

static void both_cl(void* arg, uint64_t calls) {
  both_cl_from(arg, false, calls);
}

static void both_cl_pinned(void* arg, uint64_t calls) {
  both_cl_from(arg, true, calls);
}

static uint8_t* host_of(dc_buffer_t* b) {
  uint8_t* host = NULL;
  DC_CHECK(dc_buffer_host_pointer(b, (void**)&host));
  return host;
}

// Each path there and back once: what returns is what left. Both ways
// at once, what comes back is what side [1]'s device buffer held.
static void check_paths(transfer_t* t) {
  transfer_side_t* a = &t->side[0];
  transfer_side_t* b = &t->side[1];
  uint8_t* host = host_of(a->host);
  for (size_t i = 0; i < BYTES; ++i) host[i] = a->plain[i] = pattern(i);
  to_dc(t, 1);
  memset(host, 0, BYTES);
  from_dc(t, 1);
  check("dc_buffer_copy there and back", host);
  to_cl(t, 1);
  memset(a->plain, 0, BYTES);
  from_cl(t, 1);
  check("clEnqueueWriteBuffer/ReadBuffer", a->plain);
  memcpy(a->pinned_host, host, BYTES);
  pinned_to_cl(t, 1);
  memset(a->plain, 0, BYTES);
  from_cl(t, 1);
  check("clEnqueueWriteBuffer from pinned memory", a->plain);
  // Both ways at once: side [1]'s device buffers get the pattern first.
  DC_CHECK(dc_buffer_copy(b->dev, 0, a->host, 0, BYTES));
  memcpy(b->plain, host, BYTES);
  write_cl(b, false, CL_TRUE);
  memset(b->plain, 0, BYTES);
  memset(b->pinned_host, 0, BYTES);
  both_dc(t, 1);
  check("both ways at once: the engine's download", host_of(b->host));
  DC_CHECK(dc_buffer_copy(b->host, 0, a->dev, 0, BYTES));
  check("both ways at once: the engine's upload", host_of(b->host));
  both_cl(t, 1);
  check("both ways at once: the driver's read", b->plain);
  memcpy(a->pinned_host, host, BYTES);
  both_cl_pinned(t, 1);
  check("both ways at once: the driver's pinned read", b->pinned_host);
}

// Cases 0 and 1 are the engine and the driver from malloc'd memory; a
// third is a reference, reported beside them. A call moves |bytes|.
static void run_row(const char* name, bench_case_t* cases, int count,
                    size_t bytes) {
  const double gib = (double)bytes / GIB;
  const double units[3] = {gib, gib, gib};
  bench_run_sampled(name, cases, count, bench_reps(), CALLS, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=1.11");
  if (count > 2) bench_print_ratio(name, &cases[0], &cases[2], NULL);
  for (int k = 0; k < count; ++k) {
    bench_print_rate(name, &cases[k], GIB, "GB/s");
  }
}

static void open_side(dc_device_t* cpu, dc_device_t* dev, bench_ocl_t* ocl,
                      transfer_side_t* t, cl_command_queue q) {
  t->host = bench_dc_buffer(cpu, DC_DTYPE_U8, BYTES, "transfer host", NULL);
  t->dev = bench_dc_buffer(dev, DC_DTYPE_U8, BYTES, "transfer device", NULL);
  DC_CHECK(dc_stream_create(dev, NULL, &t->stream));
  t->q = q;
  cl_int err = CL_SUCCESS;
  t->mem = clCreateBuffer(ocl->ctx, CL_MEM_READ_WRITE, BYTES, NULL, &err);
  OCL_CHECK(err);
  t->plain = bench_xmalloc(BYTES);
  t->pinned = clCreateBuffer(ocl->ctx, CL_MEM_ALLOC_HOST_PTR, BYTES, NULL,
                             &err);
  OCL_CHECK(err);
  t->pinned_host = clEnqueueMapBuffer(q, t->pinned, CL_TRUE,
                                      CL_MAP_READ | CL_MAP_WRITE, 0, BYTES, 0,
                                      NULL, NULL, &err);
  OCL_CHECK(err);
}

static void close_side(transfer_side_t* t) {
  OCL_CHECK(clEnqueueUnmapMemObject(t->q, t->pinned, t->pinned_host, 0, NULL,
                                    NULL));
  OCL_CHECK(clFinish(t->q));
  OCL_CHECK(clReleaseMemObject(t->pinned));
  free(t->plain);
  OCL_CHECK(clReleaseMemObject(t->mem));
  dc_stream_release(t->stream);
  dc_buffer_release(t->host);
  dc_buffer_release(t->dev);
}

void bench_opencl_transfer(dc_context_t* ctx, dc_device_t* dev,
                           bench_ocl_t* ocl) {
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_find_device(ctx, "cpu", &cpu));
  // The second direction's queue, of the driver's context, for the row
  // both ways at once.
  cl_int err = CL_SUCCESS;
  cl_command_queue back_q = clCreateCommandQueue(ocl->ctx, ocl->device, 0,
                                                 &err);
  OCL_CHECK(err);
  transfer_t t;
  open_side(cpu, dev, ocl, &t.side[0], ocl->queues[0]);
  open_side(cpu, dev, ocl, &t.side[1], back_q);
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
  run_row(to, there, 3, BYTES);
  const char* from = "opencl:0 to a CPU-device buffer, 64 MiB (per GiB)";
  bench_note(from, "the row before, the other way: dc_buffer_copy back vs "
             "a blocking clEnqueueReadBuffer");
  bench_case_t back[2] = {
      {.variant = "dc_buffer_copy opencl:0 -> cpu", .body = from_dc,
       .arg = &t},
      {.variant = "clEnqueueReadBuffer", .body = from_cl, .arg = &t}};
  run_row(from, back, 2, BYTES);
  const char* both = "both ways at once, 2 x 64 MiB (per GiB)";
  bench_note(both, "dc: an upload and a download of 64 MiB each on two "
             "streams of opencl:0 (dc_stream_copy, then dc_stream_sync "
             "of both); driver: a clEnqueueWriteBuffer and a "
             "clEnqueueReadBuffer on two in-order queues, then clFinish of "
             "both, of malloc'd memory, and of pinned memory");
  bench_case_t at_once[3] = {
      {.variant = "dc_stream_copy both ways", .body = both_dc, .arg = &t},
      {.variant = "clEnqueueWrite/ReadBuffer on two queues",
       .body = both_cl, .arg = &t},
      {.variant = "the same, pinned", .body = both_cl_pinned, .arg = &t}};
  run_row(both, at_once, 3, 2 * BYTES);
  close_side(&t.side[0]);
  close_side(&t.side[1]);
  OCL_CHECK(clReleaseCommandQueue(back_q));
}

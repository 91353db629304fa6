// bench_cuda_transfer.c: bench_cuda's transfer rows: bytes between the
// host and cuda:0, through the engine and through the driver called
// directly, side by side in one run (256 MiB each way):
//
//   host to device, CPU-device buffer   dc_buffer_copy from a buffer of
//                                       the cpu device to one of cuda:0
//                                       vs cuMemcpyHtoDAsync from pinned
//                                       memory (cuMemHostAlloc) + sync
//   device to host, CPU-device buffer   the way back: dc_buffer_copy vs
//                                       cuMemcpyDtoHAsync + sync
//   host to device, pageable memory     dc_buffer_write from malloc'd
//                                       memory (as a Lua string or a C
//                                       host pointer is) vs cuMemcpyHtoD
//                                       from the same memory
//   device to host, pageable memory     dc_buffer_read vs cuMemcpyDtoH
//   upload-compute-download pipeline    16 chunks of 16 MiB: each copied
//                                       from a CPU-device buffer to
//                                       cuda:0, doubled by a kernel, copied
//                                       back; on three streams joined by
//                                       events vs the same 48 commands on
//                                       one stream
//
// Every row's unit is the GiB moved, so the `rate` records are GB/s. The
// engine's side runs in a context of its own with the cpu and cuda
// backends (bench_cuda's main context has cuda alone). Each row checks
// its destination once before timing.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_cuda_parts.h"
#include "bench_util.h"

#define TRANSFER_BYTES ((size_t)256 << 20)
#define TRANSFER_CALLS 2  // copies per sample
#define GIB ((double)((size_t)1 << 30))

typedef struct transfer_t {
  bench_cu_t* cu;
  dc_context_t* ctx;
  dc_buffer_t* host_buffer;  // on the cpu device
  dc_buffer_t* gpu_buffer;   // on cuda:0
  uint8_t* pageable;         // malloc'd, every page touched
  void* pinned;              // cuMemHostAlloc
  CUdeviceptr raw;           // cuMemAlloc
} transfer_t;

static uint8_t pattern(size_t i) { return (uint8_t)(i * 131u + (i >> 12)); }

static void fill_pattern(uint8_t* p) {
  for (size_t i = 0; i < TRANSFER_BYTES; ++i) p[i] = pattern(i);
}

// Aborts unless |p| holds the pattern (every 4 KiB and the last byte).
static void check_pattern(const char* what, const uint8_t* p) {
  for (size_t i = 0; i < TRANSFER_BYTES; i += 4093) {
    if (p[i] != pattern(i)) {
      fprintf(stderr, "bench_cuda: %s: byte %zu is %u, expected %u\n", what,
              i, p[i], pattern(i));
      abort();
    }
  }
  if (p[TRANSFER_BYTES - 1] != pattern(TRANSFER_BYTES - 1)) {
    fprintf(stderr, "bench_cuda: %s: the last byte is wrong\n", what);
    abort();
  }
}

//===-- The bodies ------------------------------------------------------===//

static void to_gpu_dc(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(t->gpu_buffer, 0, t->host_buffer, 0,
                            TRANSFER_BYTES));
  }
}

static void from_gpu_dc(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_copy(t->host_buffer, 0, t->gpu_buffer, 0,
                            TRANSFER_BYTES));
  }
}

static void to_gpu_pinned(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  bench_cu_t* cu = t->cu;
  for (uint64_t i = 0; i < calls; ++i) {
    BENCH_CU(cu, cu->d.memcpy_htod_async(t->raw, t->pinned, TRANSFER_BYTES,
                                         cu->stream));
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

static void from_gpu_pinned(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  bench_cu_t* cu = t->cu;
  for (uint64_t i = 0; i < calls; ++i) {
    BENCH_CU(cu, cu->d.memcpy_dtoh_async(t->pinned, t->raw, TRANSFER_BYTES,
                                         cu->stream));
    BENCH_CU(cu, cu->d.stream_synchronize(cu->stream));
  }
}

static void write_dc(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_write(t->gpu_buffer, 0, t->pageable, TRANSFER_BYTES));
  }
}

static void read_dc(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  for (uint64_t i = 0; i < calls; ++i) {
    DC_CHECK(dc_buffer_read(t->gpu_buffer, 0, t->pageable, TRANSFER_BYTES));
  }
}

static void write_pageable(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  bench_cu_t* cu = t->cu;
  for (uint64_t i = 0; i < calls; ++i) {
    BENCH_CU(cu, cu->d.memcpy_htod(t->raw, t->pageable, TRANSFER_BYTES));
  }
}

static void read_pageable(void* arg, uint64_t calls) {
  transfer_t* t = arg;
  bench_cu_t* cu = t->cu;
  for (uint64_t i = 0; i < calls; ++i) {
    BENCH_CU(cu, cu->d.memcpy_dtoh(t->pageable, t->raw, TRANSFER_BYTES));
  }
}

//===-- Checks ----------------------------------------------------------===//

// Each direction of each side once, through fresh host memory: what
// arrives must be the pattern that left.
static void check_paths(transfer_t* t) {
  bench_cu_t* cu = t->cu;
  uint8_t* scratch = bench_xmalloc(TRANSFER_BYTES);
  void* host = NULL;
  DC_CHECK(dc_buffer_host_pointer(t->host_buffer, &host));

  fill_pattern(host);
  to_gpu_dc(t, 1);
  memset(host, 0, TRANSFER_BYTES);
  from_gpu_dc(t, 1);
  check_pattern("dc_buffer_copy there and back", host);

  fill_pattern(t->pinned);
  to_gpu_pinned(t, 1);
  memset(t->pinned, 0, TRANSFER_BYTES);
  from_gpu_pinned(t, 1);
  check_pattern("cuMemcpyHtoDAsync/DtoHAsync", t->pinned);

  fill_pattern(t->pageable);
  write_dc(t, 1);
  DC_CHECK(dc_buffer_read(t->gpu_buffer, 0, scratch, TRANSFER_BYTES));
  check_pattern("dc_buffer_write then dc_buffer_read", scratch);
  BENCH_CU(cu, cu->d.memcpy_htod(t->raw, t->pageable, TRANSFER_BYTES));
  BENCH_CU(cu, cu->d.memcpy_dtoh(scratch, t->raw, TRANSFER_BYTES));
  check_pattern("cuMemcpyHtoD then cuMemcpyDtoH", scratch);
  free(scratch);
}

//===-- The pipeline ----------------------------------------------------===//

#define CHUNKS 16
#define CHUNK_FLOATS ((size_t)4 << 20)  // 16 MiB
#define PIPE_FLOATS (CHUNKS * CHUNK_FLOATS)

static const char kTwice[] =
    "__kernel void twice(__global const float* in, __global float* out,\n"
    "                    uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) out[i] = in[i] * 2.0f;\n"
    "}\n";

typedef struct pipe_t {
  dc_context_t* ctx;
  dc_program_t* program;
  dc_kernel_t* twice;
  dc_buffer_t *in, *out;                   // cpu, PIPE_FLOATS each
  dc_buffer_t* in_chunk[CHUNKS];           // views of |in|
  dc_buffer_t* out_chunk[CHUNKS];          // views of |out|
  dc_buffer_t *gpu_in[CHUNKS], *gpu_out[CHUNKS];
  dc_stream_t *up, *compute, *down;        // on cuda:0
  dc_event_t *uploaded[CHUNKS], *computed[CHUNKS];
} pipe_t;

static void dispatch_twice(pipe_t* p, dc_stream_t* s, int i) {
  dc_arg_t args[3] = {dc_arg_buffer(p->gpu_in[i]), dc_arg_buffer(p->gpu_out[i]),
                      dc_arg_u32((uint32_t)CHUNK_FLOATS)};
  const dc_dispatch_t grid = {.dims = 1, .global = {CHUNK_FLOATS}};
  DC_CHECK(dc_stream_dispatch(s, p->twice, &grid, args, 3));
}

// Every step of every chunk on one stream, in order.
static void pipe_in_order(void* arg, uint64_t calls) {
  pipe_t* p = arg;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < CHUNKS; ++i) {
      DC_CHECK(dc_stream_copy(p->up, p->gpu_in[i], 0, p->in_chunk[i], 0,
                              CHUNK_FLOATS));
      dispatch_twice(p, p->up, i);
      DC_CHECK(dc_stream_copy(p->up, p->out_chunk[i], 0, p->gpu_out[i], 0,
                              CHUNK_FLOATS));
    }
    DC_CHECK(dc_stream_sync(p->up, DC_TIMEOUT_INFINITE));
  }
}

// Uploads on one stream, kernels on another, downloads on a third: chunk
// i's kernel waits for its upload, its download for its kernel, so chunk
// i + 1 goes up while chunk i is computed and chunk i - 1 comes down.
static void pipe_overlapped(void* arg, uint64_t calls) {
  pipe_t* p = arg;
  for (uint64_t c = 0; c < calls; ++c) {
    for (int i = 0; i < CHUNKS; ++i) {
      DC_CHECK(dc_stream_copy(p->up, p->gpu_in[i], 0, p->in_chunk[i], 0,
                              CHUNK_FLOATS));
      DC_CHECK(dc_stream_record(p->up, p->uploaded[i]));
      DC_CHECK(dc_stream_wait_event(p->compute, p->uploaded[i]));
      dispatch_twice(p, p->compute, i);
      DC_CHECK(dc_stream_record(p->compute, p->computed[i]));
      DC_CHECK(dc_stream_wait_event(p->down, p->computed[i]));
      DC_CHECK(dc_stream_copy(p->down, p->out_chunk[i], 0, p->gpu_out[i], 0,
                              CHUNK_FLOATS));
    }
    DC_CHECK(dc_stream_sync(p->down, DC_TIMEOUT_INFINITE));
    DC_CHECK(dc_stream_sync(p->compute, DC_TIMEOUT_INFINITE));
    DC_CHECK(dc_stream_sync(p->up, DC_TIMEOUT_INFINITE));
  }
}

static void pipe_check(pipe_t* p, const char* what) {
  float* out = NULL;
  DC_CHECK(dc_buffer_host_pointer(p->out, (void**)&out));
  for (size_t i = 0; i < PIPE_FLOATS; i += 997) {
    float want = (float)(i % 4096) * 2.0f;
    if (out[i] != want) {
      fprintf(stderr, "bench_cuda: %s: element %zu is %g, expected %g\n",
              what, i, (double)out[i], (double)want);
      abort();
    }
  }
  memset(out, 0, PIPE_FLOATS * sizeof(float));
}

static void pipe_setup(pipe_t* p, dc_context_t* ctx) {
  p->ctx = ctx;
  dc_device_t *cpu = NULL, *gpu = NULL;
  DC_CHECK(dc_context_find_device(ctx, "cpu", &cpu));
  DC_CHECK(dc_context_find_device(ctx, "cuda:0", &gpu));
  p->program = bench_dc_build(gpu, kTwice, "twice.cl");
  p->twice = bench_dc_find(p->program, "twice");
  float* in = NULL;
  p->in = bench_dc_buffer(cpu, DC_DTYPE_F32, PIPE_FLOATS, "pipe in",
                          (void**)&in);
  p->out = bench_dc_buffer(cpu, DC_DTYPE_F32, PIPE_FLOATS, "pipe out", NULL);
  for (size_t i = 0; i < PIPE_FLOATS; ++i) in[i] = (float)(i % 4096);
  for (int i = 0; i < CHUNKS; ++i) {
    size_t at = (size_t)i * CHUNK_FLOATS;
    DC_CHECK(dc_buffer_create_view(p->in, at, CHUNK_FLOATS, &p->in_chunk[i]));
    DC_CHECK(dc_buffer_create_view(p->out, at, CHUNK_FLOATS,
                                   &p->out_chunk[i]));
    p->gpu_in[i] = bench_dc_buffer(gpu, DC_DTYPE_F32, CHUNK_FLOATS, "in",
                                   NULL);
    p->gpu_out[i] = bench_dc_buffer(gpu, DC_DTYPE_F32, CHUNK_FLOATS, "out",
                                    NULL);
    DC_CHECK(dc_event_create(gpu, DC_EVENT_DEFAULT, &p->uploaded[i]));
    DC_CHECK(dc_event_create(gpu, DC_EVENT_DEFAULT, &p->computed[i]));
  }
  dc_stream_params_t sp = {.label = "up"};
  DC_CHECK(dc_stream_create(gpu, &sp, &p->up));
  sp.label = "compute";
  DC_CHECK(dc_stream_create(gpu, &sp, &p->compute));
  sp.label = "down";
  DC_CHECK(dc_stream_create(gpu, &sp, &p->down));
}

static void pipe_teardown(pipe_t* p) {
  for (int i = 0; i < CHUNKS; ++i) {
    dc_buffer_release(p->in_chunk[i]);
    dc_buffer_release(p->out_chunk[i]);
    dc_buffer_release(p->gpu_in[i]);
    dc_buffer_release(p->gpu_out[i]);
    dc_event_release(p->uploaded[i]);
    dc_event_release(p->computed[i]);
  }
  dc_stream_release(p->up);
  dc_stream_release(p->compute);
  dc_stream_release(p->down);
  dc_buffer_release(p->in);
  dc_buffer_release(p->out);
  dc_kernel_release(p->twice);
  dc_program_release(p->program);
}

static void bench_pipeline(dc_context_t* ctx) {
  const char* name = "upload-compute-download pipeline, 16 x 16 MiB";
  pipe_t p = {0};
  pipe_setup(&p, ctx);
  pipe_in_order(&p, 1);
  pipe_check(&p, "one stream");
  pipe_overlapped(&p, 1);
  pipe_check(&p, "three streams");
  bench_note(name, "a CPU-device buffer of 256 MiB goes to cuda:0 in 16 "
             "chunks, each doubled by a kernel and copied back into "
             "another CPU-device buffer (dc_stream_copy, dc_stream_dispatch); "
             "overlapped: uploads, kernels and downloads on three streams, "
             "each kernel waiting for its upload's event and each download "
             "for its kernel's; in order: the same 48 commands on one "
             "stream; results checked first; goal: overlapped at least "
             "1.6x faster (ratio<=0.625)");
  bench_case_t cases[2] = {
      {.variant = "three streams, overlapped", .body = pipe_overlapped,
       .arg = &p},
      {.variant = "one stream, in order", .body = pipe_in_order, .arg = &p}};
  const double units[2] = {1.0, 1.0};
  bench_run_sampled(name, cases, 2, bench_reps(), 2, units);
  bench_print_ratio(name, &cases[0], &cases[1], "ratio<=0.625");
  pipe_teardown(&p);
}

//===-- Rows ------------------------------------------------------------===//

static void run_row(const char* name, bench_case_t* cases, const char* goal) {
  const double gib = (double)TRANSFER_BYTES / GIB;
  const double units[2] = {gib, gib};
  bench_run_sampled(name, cases, 2, bench_reps(), TRANSFER_CALLS, units);
  bench_print_ratio(name, &cases[0], &cases[1], goal);
  for (int k = 0; k < 2; ++k) bench_print_rate(name, &cases[k], GIB, "GB/s");
}

static void setup(transfer_t* t) {
  dc_context_params_t params = {.backends = "cpu,cuda",
                                .kernel_cache_dir = "off"};
  DC_CHECK(dc_context_create(&params, &t->ctx));
  dc_device_t* cpu = NULL;
  dc_device_t* gpu = NULL;
  DC_CHECK(dc_context_find_device(t->ctx, "cpu", &cpu));
  DC_CHECK(dc_context_find_device(t->ctx, "cuda:0", &gpu));
  t->host_buffer = bench_dc_buffer(cpu, DC_DTYPE_U8, TRANSFER_BYTES,
                                   "transfer host", NULL);
  t->gpu_buffer = bench_dc_buffer(gpu, DC_DTYPE_U8, TRANSFER_BYTES,
                                  "transfer gpu", NULL);
  t->pageable = bench_xmalloc(TRANSFER_BYTES);
  memset(t->pageable, 1, TRANSFER_BYTES);  // every page present
  bench_cu_t* cu = t->cu;
  BENCH_CU(cu, cu->d.mem_host_alloc(&t->pinned, TRANSFER_BYTES, 0));
  BENCH_CU(cu, cu->d.mem_alloc(&t->raw, TRANSFER_BYTES));
}

static void teardown(transfer_t* t) {
  bench_cu_t* cu = t->cu;
  BENCH_CU(cu, cu->d.mem_free(t->raw));
  BENCH_CU(cu, cu->d.mem_free_host(t->pinned));
  free(t->pageable);
  dc_buffer_release(t->host_buffer);
  dc_buffer_release(t->gpu_buffer);
  dc_context_release(t->ctx);
}

void bench_transfer(bench_cu_t* cu) {
  transfer_t t = {.cu = cu};
  setup(&t);
  check_paths(&t);
  const char* to_name = "host to device 256 MiB, CPU-device buffer (per GiB)";
  bench_note(to_name, "dc: dc_buffer_copy from a buffer of the cpu device "
             "to one of cuda:0; raw: cuMemcpyHtoDAsync from cuMemHostAlloc "
             "memory + cuStreamSynchronize; %d copies per sample; goal: at "
             "least 0.9x the pinned copy (ratio<=1.11)", TRANSFER_CALLS);
  bench_case_t to[2] = {
      {.variant = "dc_buffer_copy cpu -> cuda:0", .body = to_gpu_dc,
       .arg = &t},
      {.variant = "cuMemcpyHtoDAsync pinned+sync", .body = to_gpu_pinned,
       .arg = &t}};
  run_row(to_name, to, "ratio<=1.11");

  const char* from_name = "device to host 256 MiB, CPU-device buffer (per GiB)";
  bench_note(from_name, "as the row before, the other way: dc_buffer_copy "
             "cuda:0 -> cpu vs cuMemcpyDtoHAsync to pinned memory + sync");
  bench_case_t from[2] = {
      {.variant = "dc_buffer_copy cuda:0 -> cpu", .body = from_gpu_dc,
       .arg = &t},
      {.variant = "cuMemcpyDtoHAsync pinned+sync", .body = from_gpu_pinned,
       .arg = &t}};
  run_row(from_name, from, "ratio<=1.11");

  const char* write_name = "host to device 256 MiB, pageable memory (per GiB)";
  bench_note(write_name, "dc: dc_buffer_write from malloc'd memory (every "
             "page present) to a cuda:0 buffer; raw: cuMemcpyHtoD from the "
             "same memory; goal: at least as fast (ratio<=1.0)");
  bench_case_t write[2] = {
      {.variant = "dc_buffer_write pageable", .body = write_dc, .arg = &t},
      {.variant = "cuMemcpyHtoD pageable", .body = write_pageable,
       .arg = &t}};
  run_row(write_name, write, "ratio<=1.0");

  const char* read_name = "device to host 256 MiB, pageable memory (per GiB)";
  bench_note(read_name, "as the row before, the other way: dc_buffer_read "
             "vs cuMemcpyDtoH into the same malloc'd memory");
  bench_case_t read[2] = {
      {.variant = "dc_buffer_read pageable", .body = read_dc, .arg = &t},
      {.variant = "cuMemcpyDtoH pageable", .body = read_pageable,
       .arg = &t}};
  run_row(read_name, read, "ratio<=1.0");
  bench_pipeline(t.ctx);
  teardown(&t);
}

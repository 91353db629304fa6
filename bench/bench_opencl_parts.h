// bench_opencl_parts.h: the parts of bench_opencl_device that live in
// files of their own, run against pocl as bench_opencl_device's main
// opened it (bench_opencl.h).
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_OPENCL_PARTS_H_
#define DC_BENCH_OPENCL_PARTS_H_

#include "bench_opencl.h"
#include "dc/dc.h"

// CPU-device buffer <-> opencl:0 copies (bench_opencl_transfer.c); |dev|
// is opencl:0 of |ctx|, which also has the cpu device.
void bench_opencl_transfer(dc_context_t* ctx, dc_device_t* dev,
                           bench_ocl_t* ocl);

#endif  // DC_BENCH_OPENCL_PARTS_H_

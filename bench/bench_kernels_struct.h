// bench_kernels_struct.h: bench_kernels' "struct" part
// (bench_kernels_struct.c): a kernel taking a struct argument against the
// same kernel with separate arguments and against plain C.
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_KERNELS_STRUCT_H_
#define DC_BENCH_KERNELS_STRUCT_H_

#include <stdint.h>

#include "dc/dc.h"

// Runs and reports the rows on |dev| (the CPU device), whose worker pool
// has |threads| threads (OpenMP gets as many).
void bench_struct_args(dc_device_t* dev, uint32_t threads);

#endif  // DC_BENCH_KERNELS_STRUCT_H_

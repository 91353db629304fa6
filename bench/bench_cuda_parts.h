// bench_cuda_parts.h: the parts of bench_cuda that live in files of their
// own. Each runs its rows against the raw side |cu| (bench_cuda_raw.h),
// opened by bench_cuda's main.
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_CUDA_PARTS_H_
#define DC_BENCH_CUDA_PARTS_H_

#include "bench_cuda_raw.h"

// Host <-> cuda:0 transfers (bench_cuda_transfer.c).
void bench_transfer(bench_cu_t* cu);

#endif  // DC_BENCH_CUDA_PARTS_H_

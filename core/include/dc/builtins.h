// dc/builtins.h: kernels and operations that ship with the library.
// SPDX-License-Identifier: MIT
#ifndef DC_BUILTINS_H_
#define DC_BUILTINS_H_

#include <stddef.h>

#include "dc/buffer.h"
#include "dc/device.h"
#include "dc/kernel.h"
#include "dc/status.h"

DC_EXTERN_C_BEGIN

//===-- Built-in kernels ------------------------------------------------===//
//
// The library ships a program in the kernel language (the same language
// users write), built for a device the first time one of its kernels is
// asked for, and then kept for the device's lifetime. Its kernels, all on
// f32 data:
//
//   add(a, b, out, n)      out[i] = a[i] + b[i], for i < n
//   mul(a, b, out, n)      out[i] = a[i] * b[i]
//   relu(in, out, n)       out[i] = max(in[i], 0)
//   sigmoid(in, out, n)    out[i] = 1 / (1 + exp(-in[i]))
//                          (element-wise: each work-item does 4 elements,
//                          one vector access each where the buffers are
//                          16-byte aligned, so a 1-D grid of ceil(n / 4)
//                          covers n; a larger grid works too)
//   matmul(A, B, C, m, n, k)   C = A * B, row-major, m x k times k x n;
//                          16x4 work-groups (reqd_work_group_size), each
//                          computing a 16x16 tile of C with local-memory
//                          tiles, 4 rows per work-item, over a 2-D grid of
//                          (n rounded up to 16, m rounded up to 16, / 4)
//   sum(in, partial, n, scratch)   partial[g] = sum of group g's slice;
//                          scratch is __local, one float per work-item
//
// The operations below choose the grid and the fastest path themselves.
//
// Thread safety: thread-safe.

// Gets built-in kernel |name| for |device| and returns a reference to it
// (release with dc_kernel_release()).
// Returns DC_ERR_NOT_FOUND (listing the names) for an unknown name, or the
// error of building the built-in program for the device.
DC_API dc_status_t dc_builtin_kernel(dc_device_t* device, const char* name,
                                     dc_kernel_t** out_kernel);

// C = A * B for row-major f32 matrices: |a| is |m| x |k|, |b| is |k| x
// |n|, |c| is |m| x |n|. On the CPU device it uses OpenBLAS's sgemm when
// the library (libopenblas.so.0) can be loaded, on a CUDA device cuBLAS's
// when it can, and the built-in matmul kernel otherwise;
// dc_builtin_matmul_backend() says which.
// Returns DC_ERR_INVALID_ARGUMENT for NULL buffers, zero sizes, buffers of
// another dtype, on another device, or shorter than the sizes say.
DC_API dc_status_t dc_builtin_matmul(dc_buffer_t* a, dc_buffer_t* b,
                                     dc_buffer_t* c, size_t m, size_t n,
                                     size_t k);

// Returns what dc_builtin_matmul() uses on |device|: "openblas",
// "cublas" or "kernel".
DC_API const char* dc_builtin_matmul_backend(dc_device_t* device);

// Sums the |count| f32 elements of |in| from element 0 into |out_sum|
// (accumulated in float, as the kernel does).
// Returns DC_ERR_INVALID_ARGUMENT for a NULL pointer, a zero count, a
// buffer of another dtype or shorter than |count|.
DC_API dc_status_t dc_builtin_sum(dc_buffer_t* in, size_t count,
                                  float* out_sum);

DC_EXTERN_C_END

#endif  // DC_BUILTINS_H_

// lower.h: the program lowered from the typed tree to a device
// compiler's language, one dialect per file (dc_program_build_lower:
// dc/backend.h says the shape of what comes out).
// SPDX-License-Identifier: MIT
#ifndef DC_LOWER_H_
#define DC_LOWER_H_

#include "ast.h"
#include "dc/backend.h"
#include "diag.h"

// Where the checked-mode scratch starts in the state buffer, past the
// fault record: 128 bytes, the alignment of the widest type a failed
// access may be given the scratch for (a double16; OpenCL 1.2's full
// profile aligns buffers to CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128
// bytes).
#define DC_LOWER_SCRATCH_OFFSET 128u
_Static_assert(sizeof(dc_kernel_fault_t) <= DC_LOWER_SCRATCH_OFFSET,
               "the fault record overlaps the scratch");

// Writes the OpenCL C lowering of |ast| (prelude included) into |out|,
// allocated in |arena|, kernels in the order of |ast|'s kernel functions.
// |file| names the program in #line directives. Reports what OpenCL C 1.2
// cannot express (grid synchronisation) to |diag| (DC_ERR_COMPILE);
// DC_ERR_OUT_OF_MEMORY if the arena fails.
DC_INTERNAL dc_status_t dc__lower_opencl(dc__arena_t* arena,
                                         const dc__program_ast_t* ast,
                                         const char* file, bool checked,
                                         dc__diag_t* diag,
                                         dc_lowered_program_t* out);

// Writes the C lowering of |ast| (DC_KERNEL_DIALECT_C: dc/kernel_abi_c.h
// and the prelude included) into |out|, as dc__lower_opencl does.
DC_INTERNAL dc_status_t dc__lower_c(dc__arena_t* arena,
                                    const dc__program_ast_t* ast,
                                    const char* file, bool checked,
                                    dc__diag_t* diag,
                                    dc_lowered_program_t* out);

// Writes the CUDA C++ lowering of |ast| (DC_KERNEL_DIALECT_CUDA_C: the
// text includes the prelude, out->header, by name) into |out|, as
// dc__lower_opencl does.
DC_INTERNAL dc_status_t dc__lower_cuda(dc__arena_t* arena,
                                       const dc__program_ast_t* ast,
                                       const char* file, bool checked,
                                       dc__diag_t* diag,
                                       dc_lowered_program_t* out);

// The kernels of |ast| in the order of the program's kernels (program.c's
// reflect: kernel functions with bodies), in |arena|: each one's entry
// point (|prefix| and its name), whether it reaches a barrier (itself or
// through a helper) and the bytes of its __local variables
// (lower_describe.c). NULL when |arena| ran out of memory.
DC_INTERNAL dc_lowered_kernel_t* dc__lower_describe_kernels(
    dc__arena_t* arena, const dc__program_ast_t* ast, const char* prefix,
    size_t* out_count);

#endif  // DC_LOWER_H_

// lower.h: the program lowered from the typed tree to a driver's
// language (dc_program_build_lower, dc/backend.h, says the shape of what
// comes out).
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

#endif  // DC_LOWER_H_

// lower_cuda_names.h: how the CUDA code generator spells the built-ins whose
// names carry a type or a width (lower_cuda_names.c).
// SPDX-License-Identifier: MIT
#ifndef DC_LOWER_CUDA_NAMES_H_
#define DC_LOWER_CUDA_NAMES_H_

#include "lex.h"

// Recognises the language's type names in |t| from |skip| bytes in:
// writes the prelude's spelling ("float4": dc_float4, "char": dc_char,
// "uint": uint) to |out| and returns the vector width (1 for a scalar),
// or 0 if it is none.
DC_INTERNAL unsigned dc__cuda_type_name(const dc__token_t* t, size_t skip,
                                        char* out, size_t size);

// The built-ins whose names carry a type or a width: convert_<T>[_sat]
// [_<mode>], as_<T>, vloadN and vstoreN, as the prelude's templates
// (dc__convert<dc_int4, 1, 1>, dc__as<float>, dc__vload<4>, ...) in
// |out|. Returns false if |t| is none of them.
DC_INTERNAL bool dc__cuda_templated_builtin(const dc__token_t* t, char* out,
                                            size_t size);

#endif  // DC_LOWER_CUDA_NAMES_H_

// opencl_compile.h: building generated OpenCL C with the driver's
// compiler (clBuildProgram).
// SPDX-License-Identifier: MIT
#ifndef DC_OPENCL_COMPILE_H_
#define DC_OPENCL_COMPILE_H_

#include "opencl_internal.h"

// The clBuildProgram options for a build with |flags| (NUL-terminated in
// |text|). Unless the build relaxes its math, they ask for correctly
// rounded float division and square root when |rounded_div_sqrt| (the
// device can: OpenCL C otherwise allows 2.5 and 3 ulp).
DC_INTERNAL void dc__opencl_options_text(const dc_build_flags_t* flags,
                                         bool rounded_div_sqrt, char* text,
                                         size_t size);

// Builds |source| (|length| bytes) of program |name| for |ocl|'s device
// into |out_program|. A build the driver rejects is the engine's bug,
// since the front end checked the program: DC_ERR_INTERNAL, with the start
// of the driver's build log (in the user's lines, through the lowering's
// #line directives) in the message. Other failures map as
// dc__opencl_failed.
DC_INTERNAL dc_status_t dc__opencl_build_source(dc__opencl_device_t* ocl,
                                                const char* name,
                                                const char* source,
                                                size_t length,
                                                const char* options,
                                                cl_program* out_program);

#endif  // DC_OPENCL_COMPILE_H_

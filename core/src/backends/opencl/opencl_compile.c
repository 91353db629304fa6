// opencl_compile.c: the driver's OpenCL C compiler, its options and its
// build log.
// SPDX-License-Identifier: MIT
#include "opencl_compile.h"

#include <stdio.h>

void dc__opencl_options_text(const dc_build_flags_t* f,
                             bool rounded_div_sqrt, char* text, size_t size) {
  // -w: C permits what the generated code does (a label at a function's
  // end, a helper parameter nothing reads), and the CPU device's compiler
  // is as quiet about it.
  snprintf(text, size, "-cl-std=CL1.2 -w%s%s%s%s%s%s",
           rounded_div_sqrt && !f->fast_math
               ? " -cl-fp32-correctly-rounded-divide-sqrt"
               : "",
           f->fast_math ? " -cl-fast-relaxed-math" : "",
           f->finite_math ? " -cl-finite-math-only" : "",
           f->no_signed_zeros ? " -cl-no-signed-zeros" : "",
           f->mad_enable ? " -cl-mad-enable" : "",
           f->opt_disable ? " -cl-opt-disable" : "");
}

// The start of the device's build log of |program|, in |log|.
static void read_log(dc__opencl_device_t* ocl, cl_program program, char* log,
                     size_t size) {
  size_t length = 0;
  if (ocl->cl->get_program_build_info(program, ocl->device,
                                      CL_PROGRAM_BUILD_LOG, 0, NULL,
                                      &length) != CL_SUCCESS ||
      length <= 1) {
    snprintf(log, size, "(the driver wrote no build log)");
    return;
  }
  char* full = dc_allocator_malloc(ocl->allocator, length + 1);
  if (full == NULL ||
      ocl->cl->get_program_build_info(program, ocl->device,
                                      CL_PROGRAM_BUILD_LOG, length, full,
                                      NULL) != CL_SUCCESS) {
    snprintf(log, size, "(the build log could not be read)");
  } else {
    full[length] = '\0';
    snprintf(log, size, "%s", full);
  }
  dc_allocator_free(ocl->allocator, full, length + 1);
}

dc_status_t dc__opencl_build_source(dc__opencl_device_t* ocl,
                                    const char* name, const char* source,
                                    size_t length, const char* options,
                                    cl_program* out_program) {
  *out_program = NULL;
  cl_int err = CL_SUCCESS;
  cl_program program = ocl->cl->create_program_with_source(
      ocl->context, 1, &source, &length, &err);
  if (program == NULL) {
    return dc__opencl_failed(ocl, err, "clCreateProgramWithSource");
  }
  err = ocl->cl->build_program(program, 1, &ocl->device, options, NULL, NULL);
  if (err == CL_BUILD_PROGRAM_FAILURE) {
    char log[768];
    read_log(ocl, program, log, sizeof(log));
    ocl->cl->release_program(program);
    return DC_FAIL(DC_ERR_INTERNAL,
                   "internal error: the OpenCL compiler of %s rejected the "
                   "code generated for program '%s'; this is a bug of the "
                   "engine, please report it with the program "
                   "(DC_KERNEL_DUMP keeps the code). The driver said: %s",
                   ocl->base.info.name, name, log);
  }
  if (err != CL_SUCCESS) {
    ocl->cl->release_program(program);
    return dc__opencl_failed(ocl, err, "clBuildProgram of program '%s'",
                             name);
  }
  *out_program = program;
  return DC_OK;
}

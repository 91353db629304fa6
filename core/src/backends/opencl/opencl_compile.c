// opencl_compile.c: the driver's OpenCL C compiler, its options and its
// build log.
// SPDX-License-Identifier: MIT
#include "opencl_compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dc__opencl_options_text(const dc__build_options_t* o, char* text,
                             size_t size) {
  // -w: C permits what the generated code does (a label at a function's
  // end, a helper parameter nothing reads), and the CPU device's compiler
  // is as quiet about it.
  snprintf(text, size, "-cl-std=CL1.2 -w%s%s%s%s%s",
           o->fast_math ? " -cl-fast-relaxed-math" : "",
           o->finite_math ? " -cl-finite-math-only" : "",
           o->no_signed_zeros ? " -cl-no-signed-zeros" : "",
           o->mad_enable ? " -cl-mad-enable" : "",
           o->opt_disable ? " -cl-opt-disable" : "");
}

// Appends the device's build log of |program| to |diag|.
static void append_log(dc__opencl_device_t* ocl, cl_program program,
                       dc__diag_t* diag) {
  size_t size = 0;
  ocl->cl->get_program_build_info(program, ocl->device, CL_PROGRAM_BUILD_LOG,
                                  0, NULL, &size);
  char* log = size > 1 ? dc_allocator_malloc(ocl->allocator, size + 1) : NULL;
  if (log != NULL &&
      ocl->cl->get_program_build_info(program, ocl->device,
                                      CL_PROGRAM_BUILD_LOG, size, log,
                                      NULL) == CL_SUCCESS) {
    log[size] = '\0';
    dc__diag_append(diag, log);
    if (size > 1 && log[strlen(log) - 1] != '\n') dc__diag_append(diag, "\n");
  } else {
    dc__diag_append(diag, "(the driver wrote no build log)\n");
  }
  dc_allocator_free(ocl->allocator, log, size + 1);
}

dc_status_t dc__opencl_build_source(dc__opencl_device_t* ocl,
                                    const char* source, size_t length,
                                    const char* options, dc__diag_t* diag,
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
    append_log(ocl, program, diag);
    ocl->cl->release_program(program);
    return DC_FAIL(DC_ERR_INTERNAL,
                   "internal error: the OpenCL compiler of %s rejected the "
                   "code generated for program '%s' (its log is in the "
                   "build log); this is a bug of the engine, please report "
                   "it with the program",
                   ocl->base.info.name, diag->file);
  }
  if (err != CL_SUCCESS) {
    ocl->cl->release_program(program);
    return dc__opencl_failed(ocl, err, "clBuildProgram of program '%s'",
                             diag->file);
  }
  *out_program = program;
  return DC_OK;
}

bool dc__opencl_dump_source(const char* name, const char* source,
                            size_t length, char* path, size_t path_size) {
  const char* dir = getenv("DC_KERNEL_DUMP");
  if (dir == NULL || *dir == '\0') return true;
  snprintf(path, path_size, "%s/%s.cl", dir, name);
  for (char* c = path + strlen(dir) + 1; *c; ++c) {
    if (*c == '/') *c = '_';
  }
  FILE* f = fopen(path, "w");
  bool ok = f != NULL && fwrite(source, 1, length, f) == length;
  if (f != NULL && fclose(f) != 0) ok = false;
  return ok;
}

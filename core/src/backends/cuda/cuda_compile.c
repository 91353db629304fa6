// cuda_compile.c: runs NVRTC on the program lowered to CUDA C++ and reads
// its messages.
//
// The prelude goes to NVRTC as a header of its own (the lowered program's
// header) and the lowered source carries #line directives, so NVRTC's messages
// name the user's program and line. The front end has checked the
// program, so any message is about the engine's code: the whole log is
// kept for the bug report, as the CPU device keeps its C compiler's.
// SPDX-License-Identifier: MIT
#include "cuda_compile.h"

#include <stdio.h>

enum {
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
};

//===-- Targets and options ---------------------------------------------===//

dc_status_t dc__cuda_pick_target(const dc__cuda_nvrtc_t* nvrtc, int major,
                                 int minor, dc__cuda_target_t* out) {
  int want = major * 10 + minor, count = 0, best = 0;
  int archs[128];
  if (nvrtc->get_num_supported_archs(&count) != NVRTC_SUCCESS || count < 1 ||
      count > 128 || nvrtc->get_supported_archs(archs) != NVRTC_SUCCESS) {
    return DC_FAIL(DC_ERR_UNAVAILABLE,
                   "NVRTC cannot list the GPU architectures it supports");
  }
  for (int i = 0; i < count; ++i) {
    if (archs[i] == want) {
      *out = (dc__cuda_target_t){.arch = want, .ptx = false};
      return DC_OK;
    }
    // PTX of an older architecture of the same major runs (JIT-compiled);
    // one of an older major does too, but NVIDIA's "a" and "f" variants
    // aside, the newest known is the best guess.
    if (archs[i] < want && archs[i] > best) best = archs[i];
  }
  if (best == 0) {
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "NVRTC supports no architecture that a GPU of compute "
                   "capability %d.%d runs (oldest known: sm_%d)",
                   major, minor, archs[0]);
  }
  *out = (dc__cuda_target_t){.arch = best, .ptx = true};
  return DC_OK;
}

// Fills |argv| (room for 16) with the NVRTC options for a build; |arch|
// holds the architecture option's text. Returns the count.
static int nvrtc_options(const dc_build_flags_t* o,
                         const dc__cuda_target_t* target, char arch[48],
                         const char** argv) {
  int n = 0;
  snprintf(arch, 48, "--gpu-architecture=%s_%d", target->ptx ? "compute" : "sm",
           target->arch);
  argv[n++] = arch;
  argv[n++] = "-default-device";  // every function is a device function
  argv[n++] = "--std=c++17";
  // C permits what C++ warns about (a goto past a declaration, a
  // narrowing initialiser, a doubled const); the CPU device's C compiler
  // prints nothing for them either.
  argv[n++] = "-w";
  argv[n++] = o->opt_disable ? "-G" : "-lineinfo";
  if (o->fast_math) argv[n++] = "--use_fast_math";
  return n;
}

void dc__cuda_options_text(const dc_build_flags_t* options,
                           const dc__cuda_target_t* target, char* text,
                           size_t size) {
  char arch[48];
  const char* argv[16];
  int n = nvrtc_options(options, target, arch, argv);
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; i < n && used < size; ++i) {
    int w = snprintf(text + used, size - used, "%s%s", i ? " " : "", argv[i]);
    if (w > 0) used += (size_t)w;
  }
}

//===-- Compiling -------------------------------------------------------===//

static dc_status_t nvrtc_failure(const dc__cuda_nvrtc_t* nvrtc, nvrtcResult r,
                                 const char* what) {
  dc_status_t status = r == NVRTC_ERROR_OUT_OF_MEMORY    ? DC_ERR_OUT_OF_MEMORY
                       : r == NVRTC_ERROR_INVALID_OPTION ? DC_ERR_UNSUPPORTED
                                                         : DC_ERR_INTERNAL;
  return DC_FAIL(status, "NVRTC: %s: %s (%d)", what, nvrtc->get_error_string(r),
                 r);
}

// Reads the program's log into memory from |allocator| (NULL if empty).
static char* program_log(const dc__cuda_nvrtc_t* nvrtc, nvrtcProgram p,
                         dc_allocator_t allocator, size_t* size) {
  *size = 0;
  if (nvrtc->get_program_log_size(p, size) != NVRTC_SUCCESS || *size < 2) {
    return NULL;
  }
  char* log = dc_allocator_malloc(allocator, *size);
  if (log != NULL && nvrtc->get_program_log(p, log) != NVRTC_SUCCESS) {
    log[0] = '\0';
  }
  return log;
}

// Takes the cubin or PTX out of a compiled program.
static dc_status_t take_image(const dc__cuda_nvrtc_t* nvrtc, nvrtcProgram p,
                              bool ptx, dc_allocator_t allocator,
                              dc__cuda_image_t* out) {
  size_t size = 0;
  nvrtcResult r =
      ptx ? nvrtc->get_ptx_size(p, &size) : nvrtc->get_cubin_size(p, &size);
  if (r != NVRTC_SUCCESS) {
    return nvrtc_failure(nvrtc, r,
                         ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize");
  }
  char* data = dc_allocator_malloc(allocator, size ? size : 1);
  if (data == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a %zu-byte module",
                   size);
  }
  r = ptx ? nvrtc->get_ptx(p, data) : nvrtc->get_cubin(p, data);
  if (r != NVRTC_SUCCESS) {
    dc_allocator_free(allocator, data, size ? size : 1);
    return nvrtc_failure(nvrtc, r, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN");
  }
  *out = (dc__cuda_image_t){
      .data = data, .size = size, .ptx = ptx, .allocator = allocator};
  return DC_OK;
}

// A failed compile. The front end checked the program, so NVRTC failing
// on what the generator made of it is the engine's bug: DC_ERR_INTERNAL,
// with NVRTC's messages (in the user's lines, through the generated
// #line directives) in the build log for the bug report.
static dc_status_t report_compile_errors(const char* log, const char* name,
                                         const dc__cuda_log_sink_t* sink) {
  sink->log(sink->ctx, log ? log : "(no output)\n");
  return DC_FAIL(
      DC_ERR_INTERNAL,
      "internal error: NVRTC rejected the CUDA code generated for program "
      "'%s'; this is a bug of the engine, please report it with the program",
      name);
}

dc_status_t dc__cuda_nvrtc_compile(const dc__cuda_nvrtc_t* nvrtc,
                                   const dc_lowered_program_t* lowered,
                                   const char* name,
                                   const dc_build_flags_t* options,
                                   const dc__cuda_target_t* target,
                                   const dc__cuda_log_sink_t* sink,
                                   dc_allocator_t allocator,
                                   dc__cuda_image_t* out) {
  const char* headers[] = {lowered->header};
  const char* names[] = {lowered->header_name};
  nvrtcProgram p = NULL;
  nvrtcResult r = nvrtc->create_program(&p, lowered->text,
                                        DC_CUDA_SOURCE_NAME, 1, headers,
                                        names);
  if (r != NVRTC_SUCCESS) {
    return nvrtc_failure(nvrtc, r, "nvrtcCreateProgram");
  }
  char arch[48];
  const char* argv[16];
  int argc = nvrtc_options(options, target, arch, argv);
  r = nvrtc->compile_program(p, argc, argv);
  size_t log_size = 0;
  char* log = program_log(nvrtc, p, allocator, &log_size);
  dc_status_t st = DC_OK;
  if (r == NVRTC_ERROR_COMPILATION) {
    st = report_compile_errors(log, name, sink);
  } else if (r != NVRTC_SUCCESS) {
    st = nvrtc_failure(nvrtc, r, arch);
  } else {
    st = take_image(nvrtc, p, target->ptx, allocator, out);
  }
  dc_allocator_free(allocator, log, log_size);
  nvrtc->destroy_program(&p);
  return st;
}

void dc__cuda_image_free(dc__cuda_image_t* image) {
  if (image->data == NULL) return;
  dc_allocator_free(image->allocator, image->data,
                    image->size ? image->size : 1);
  image->data = NULL;
  image->size = 0;
}

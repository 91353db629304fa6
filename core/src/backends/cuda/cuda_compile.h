// cuda_compile.h: NVRTC compiles the program lowered to CUDA C++
// (DC_KERNEL_DIALECT_CUDA_C) into a cubin for the GPU's architecture (or
// PTX when NVRTC predates the GPU), and its messages become the build's
// diagnostics in the user's lines.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_COMPILE_H_
#define DC_CUDA_COMPILE_H_

#include "cuda_api.h"
#include "dc/backend.h"

// The name of the lowered source given to NVRTC: a message about it (or
// the prelude, the header it includes) is about the engine's code, not
// the user's.
#define DC_CUDA_SOURCE_NAME "dclua_generated.cu"

// What to compile for: compute capability |arch| (major * 10 + minor),
// as SASS (a cubin for exactly that GPU) or as PTX for compute_<arch>,
// which the driver compiles when it loads the module.
typedef struct dc__cuda_target_t {
  int arch;
  bool ptx;
} dc__cuda_target_t;

// A compiled module: a cubin, or NUL-terminated PTX text.
typedef struct dc__cuda_image_t {
  char* data;
  size_t size;  // bytes of |data| (for PTX, the NUL included)
  bool ptx;
  dc_allocator_t allocator;
} dc__cuda_image_t;

// Picks the target for a GPU of compute capability |major|.|minor|: the
// cubin when NVRTC knows the architecture; otherwise PTX for the newest
// architecture it knows that the GPU runs (the driver JIT-compiles it,
// and its PTX version must not be newer than the driver's). Returns
// DC_ERR_UNSUPPORTED when NVRTC knows no architecture the GPU runs.
DC_INTERNAL dc_status_t dc__cuda_pick_target(const dc__cuda_nvrtc_t* nvrtc,
                                             int major, int minor,
                                             dc__cuda_target_t* out);

// The NVRTC options a build uses, written to |text| (for the cache key
// and messages) as one line separated by spaces.
DC_INTERNAL void dc__cuda_options_text(const dc_build_flags_t* options,
                                       const dc__cuda_target_t* target,
                                       char* text, size_t size);

// Where NVRTC's messages go: |log| receives its whole log, |ctx| passed
// back.
typedef struct dc__cuda_log_sink_t {
  void (*log)(void* ctx, const char* text);
  void* ctx;
} dc__cuda_log_sink_t;

// Compiles |lowered|, the program |name| lowered to CUDA C++, for
// |target| with the build's |options|. NVRTC rejecting the lowered code
// is an engine bug: DC_ERR_INTERNAL, with NVRTC's log given to |sink|. A
// failure of NVRTC itself is DC_ERR_UNSUPPORTED (an option or
// architecture it does not know), DC_ERR_OUT_OF_MEMORY or
// DC_ERR_INTERNAL, with its message. On success |out| owns memory from
// |allocator| (dc__cuda_image_free).
DC_INTERNAL dc_status_t dc__cuda_nvrtc_compile(
    const dc__cuda_nvrtc_t* nvrtc, const dc_lowered_program_t* lowered,
    const char* name, const dc_build_flags_t* options,
    const dc__cuda_target_t* target, const dc__cuda_log_sink_t* sink,
    dc_allocator_t allocator, dc__cuda_image_t* out);

DC_INTERNAL void dc__cuda_image_free(dc__cuda_image_t* image);

#endif  // DC_CUDA_COMPILE_H_

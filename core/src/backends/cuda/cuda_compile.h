// cuda_compile.h: NVRTC compiles the code generator's CUDA C++ into a
// cubin for the GPU's architecture (or PTX when NVRTC predates the GPU),
// and its messages become the build's diagnostics in the user's lines.
// SPDX-License-Identifier: MIT
#ifndef DC_CUDA_COMPILE_H_
#define DC_CUDA_COMPILE_H_

#include "cuda_api.h"
#include "cuda_codegen.h"
#include "pp.h"

// The name under which the prelude is given to NVRTC (the generated
// source includes it) and the name of the generated source itself: a
// message about either is about the engine's code, not the user's.
#define DC_CUDA_PRELUDE_NAME "dclua_prelude.cuh"
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
DC_INTERNAL void dc__cuda_options_text(const dc__build_options_t* options,
                                       const dc__cuda_target_t* target,
                                       char* text, size_t size);

// Compiles |t| for |target|. NVRTC rejecting the generated code is an
// engine bug: DC_ERR_INTERNAL, with NVRTC's log in |diag|. A failure of
// NVRTC itself is DC_ERR_UNSUPPORTED (an option or architecture it does
// not know), DC_ERR_OUT_OF_MEMORY or DC_ERR_INTERNAL, with its message. On
// success |out| owns memory from |allocator| (dc__cuda_image_free).
DC_INTERNAL dc_status_t dc__cuda_nvrtc_compile(
    const dc__cuda_nvrtc_t* nvrtc, const dc__cuda_translation_t* t,
    const dc__build_options_t* options, const dc__cuda_target_t* target,
    dc__diag_t* diag, dc_allocator_t allocator, dc__cuda_image_t* out);

DC_INTERNAL void dc__cuda_image_free(dc__cuda_image_t* image);

// With DC_KERNEL_DUMP set to a directory, writes the generated source of
// program |name| there as <name>.cu ('/' in the name become '_') and
// returns false if that fails (|path| says where); true otherwise.
DC_INTERNAL bool dc__cuda_dump_source(const char* name,
                                      const dc__cuda_translation_t* t,
                                      char* path, size_t path_size);

// For tests and tools, without a GPU: builds |source| (the program
// |name|, with the build |options|, may be NULL) as dc_program_create
// would for a CUDA device, for |arch| ("sm_90" for a cubin, "compute_90"
// for PTX), with bounds checking when |checked|. Returns what
// dc_program_create would (DC_ERR_COMPILE with the first error in
// dc_last_error()); the build log goes to |log| (|log_size| bytes,
// truncated, may be 0), the image to |out| when it compiled.
DC_INTERNAL dc_status_t dc__cuda_compile_for_arch(
    const dc__cuda_nvrtc_t* nvrtc, const char* name, const char* source,
    const char* options, const char* arch, bool checked,
    dc_allocator_t allocator, char* log, size_t log_size,
    dc__cuda_image_t* out);

#endif  // DC_CUDA_COMPILE_H_

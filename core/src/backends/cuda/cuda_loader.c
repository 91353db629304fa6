// cuda_loader.c: finds libcuda, NVRTC and cuBLAS at run time (see
// cuda_api.h) and maps driver errors onto dc statuses.
//
// The libraries are opened once per process and never closed: the
// function tables are shared by every context, and unloading a driver
// while another thread may still call it buys nothing.
// SPDX-License-Identifier: MIT
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_api.h"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static dc__cuda_api_t api;
static dc__cuda_driver_t driver;
static dc__cuda_nvrtc_t nvrtc;
static dc__cuda_cublas_t cublas;

// Opens the first of |names| (NULL-terminated) that loads; its name goes
// to |loaded| (may be NULL).
static void* open_first(const char* const* names, char* loaded,
                        size_t size) {
  for (const char* const* n = names; *n != NULL; ++n) {
    void* handle = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) {
      if (loaded != NULL) snprintf(loaded, size, "%s", *n);
      return handle;
    }
  }
  return NULL;
}

// Resolves every symbol of a table; false (naming the first missing one
// in api.why_missing when |required|) if any is absent.
#define DC_CUDA_RESOLVE_(ret, symbol, field, params)               \
  table->field = (ret(*) params)dlsym(handle, symbol);              \
  if (table->field == NULL) {                                       \
    snprintf(missing, missing_size, "%s has no %s", library, symbol); \
    return false;                                                   \
  }

static bool resolve_driver(void* handle, dc__cuda_driver_t* table,
                           const char* library, char* missing,
                           size_t missing_size) {
  DC_CUDA_DRIVER_FUNCTIONS(DC_CUDA_RESOLVE_)
  return true;
}

static bool resolve_nvrtc(void* handle, dc__cuda_nvrtc_t* table,
                          const char* library, char* missing,
                          size_t missing_size) {
  DC_CUDA_NVRTC_FUNCTIONS(DC_CUDA_RESOLVE_)
  return true;
}

static bool resolve_cublas(void* handle, dc__cuda_cublas_t* table,
                           const char* library, char* missing,
                           size_t missing_size) {
  DC_CUDA_CUBLAS_FUNCTIONS(DC_CUDA_RESOLVE_)
  return true;
}
#undef DC_CUDA_RESOLVE_

static void load_driver(void) {
  static const char* const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  char loaded[64] = "";
  void* handle = open_first(names, loaded, sizeof(loaded));
  if (handle == NULL) {
    snprintf(api.why_missing, sizeof(api.why_missing),
             "no NVIDIA driver (libcuda.so.1 cannot be loaded: %s)",
             dlerror());
    return;
  }
  if (!resolve_driver(handle, &driver, loaded, api.why_missing,
                      sizeof(api.why_missing))) {
    return;
  }
  CUresult r = driver.init(0);
  if (r != CUDA_SUCCESS) {
    const char* name = "?";
    driver.get_error_name(r, &name);
    snprintf(api.why_missing, sizeof(api.why_missing),
             "cuInit failed: %s (%d)", name, r);
    return;
  }
  driver.driver_get_version(&api.driver_version);
  api.cu = &driver;
}

// NVRTC is loaded on its own too (dc__cuda_nvrtc), for compiling without
// a GPU: the code generator's tests run wherever NVRTC is installed.
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;
static bool nvrtc_found;

static void load_nvrtc(void) {
  static const char* const names[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                      "libnvrtc.so", NULL};
  char missing[256];
  void* handle = open_first(names, api.nvrtc_library,
                            sizeof(api.nvrtc_library));
  nvrtc_found = handle != NULL &&
                resolve_nvrtc(handle, &nvrtc, api.nvrtc_library, missing,
                              sizeof(missing));
}

const dc__cuda_nvrtc_t* dc__cuda_nvrtc(void) {
  pthread_once(&nvrtc_once, load_nvrtc);
  return nvrtc_found ? &nvrtc : NULL;
}

static void load_cublas(void) {
  static const char* const names[] = {"libcublas.so.13", "libcublas.so.12",
                                      "libcublas.so", NULL};
  char missing[256], loaded[64];
  void* handle = open_first(names, loaded, sizeof(loaded));
  if (handle != NULL &&
      resolve_cublas(handle, &cublas, loaded, missing, sizeof(missing))) {
    api.cublas = &cublas;
  }
}

static void load(void) {
  load_driver();
  if (api.cu == NULL) return;  // no GPU to compile for or multiply on
  api.nvrtc = dc__cuda_nvrtc();
  load_cublas();
}

const dc__cuda_api_t* dc__cuda_api(void) {
  pthread_once(&load_once, load);
  return &api;
}

//===-- Errors ----------------------------------------------------------===//

bool dc__cuda_is_sticky(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
      return true;
    default:
      return false;
  }
}

// The table in docs/resilience.md follows this function.
static dc_status_t status_of(CUresult result) {
  switch (result) {
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
      return DC_ERR_DATA_LOSS;
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return DC_ERR_DEVICE_LOST;
    default:
      break;
  }
  if (dc__cuda_is_sticky(result)) return DC_ERR_DEVICE_LOST;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return DC_ERR_OUT_OF_MEMORY;
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NOT_READY:
    case CUDA_ERROR_SYSTEM_NOT_READY:
    case CUDA_ERROR_TIMEOUT:
      return DC_ERR_UNAVAILABLE;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      return DC_ERR_INVALID_ARGUMENT;
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
      return DC_ERR_UNSUPPORTED;
    default:
      return DC_ERR_INTERNAL;
  }
}

dc_status_t dc__cuda_fail(CUresult result, const char* what) {
  const char* name = "CUDA_ERROR_UNKNOWN";
  const char* text = "unknown error";
  if (api.cu != NULL) {
    api.cu->get_error_name(result, &name);
    api.cu->get_error_string(result, &text);
  }
  dc_status_t status = status_of(result);
  return DC_FAIL(status, "%s: %s (%d): %s", what, name, result, text);
}

// cpu_memory.c: the CPU device's memory: every storage mode is host
// memory.
// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

// Large blocks are page aligned so
// that they start on a fresh page and vector loads never split one.
dc_status_t dc__cpu_allocate(dc_device_t* device, size_t size,
                             dc_storage_mode_t mode, void** out_memory) {
  (void)device;
  (void)mode;
  size_t alignment = size >= ((size_t)64 << 10) ? 4096 : 64;
  void* memory = NULL;
  if (posix_memalign(&memory, alignment, size) != 0) {
    *out_memory = NULL;
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "cpu: the system refused %zu bytes",
                   size);
  }
  *out_memory = memory;
  return DC_OK;
}

void dc__cpu_deallocate(dc_device_t* device, void* memory, size_t size,
                        dc_storage_mode_t mode) {
  (void)device;
  (void)size;
  (void)mode;
  free(memory);
}

void* dc__cpu_host_pointer(dc_device_t* device, void* memory,
                           dc_storage_mode_t mode) {
  (void)device;
  (void)mode;
  return memory;
}

dc_status_t dc__cpu_write(dc_device_t* device, void* memory, size_t offset,
                          const void* src, size_t size) {
  (void)device;
  memcpy((char*)memory + offset, src, size);
  return DC_OK;
}

dc_status_t dc__cpu_read(dc_device_t* device, const void* memory, size_t offset,
                         void* dst, size_t size) {
  (void)device;
  memcpy(dst, (const char*)memory + offset, size);
  return DC_OK;
}

// Writes the pattern once, then doubles the filled prefix with memcpy, so
// any element size fills in O(log n) calls.
dc_status_t dc__cpu_fill(dc_device_t* device, void* memory, size_t offset,
                         size_t size, const void* pattern,
                         size_t pattern_size) {
  (void)device;
  char* dst = (char*)memory + offset;
  const unsigned char* p = pattern;
  bool uniform = true;
  for (size_t i = 1; i < pattern_size; ++i) uniform &= p[i] == p[0];
  if (uniform) {
    memset(dst, p[0], size);
    return DC_OK;
  }
  memcpy(dst, pattern, pattern_size);
  for (size_t done = pattern_size; done < size;) {
    size_t n = DC_MIN(done, size - done);
    memcpy(dst + done, dst, n);
    done += n;
  }
  return DC_OK;
}

dc_status_t dc__cpu_copy(dc_device_t* device, void* dst, size_t dst_offset,
                         const void* src, size_t src_offset, size_t size) {
  (void)device;
  memmove((char*)dst + dst_offset, (const char*)src + src_offset, size);
  return DC_OK;
}

// cpu_info.c: reads the CPU device's capabilities from the machine.
// SPDX-License-Identifier: MIT

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_internal.h"

// The first "model name" (x86) or "Model"/"Hardware" (Arm) line.
static void read_model(char* model, size_t size) {
  dc__strlcpy(model, "unknown CPU", size);
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0 &&
        strncmp(line, "Hardware", 8) != 0) {
      continue;
    }
    char* colon = strchr(line, ':');
    if (colon == NULL) continue;
    char* value = colon + 1;
    while (*value == ' ' || *value == '\t') ++value;
    value[strcspn(value, "\n")] = '\0';
    if (*value) {
      dc__strlcpy(model, value, size);
      break;
    }
  }
  fclose(f);
}

// Reads a sysfs file holding one line, e.g. "32K" or "Data".
static bool read_line(const char* path, char* buf, size_t size) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return false;
  bool ok = fgets(buf, (int)size, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

// Walks /sys/devices/system/cpu/cpu0/cache/index*/ for data and unified
// caches, which is what the kernel knows; falls back to sysconf.
static void read_caches(dc_device_info_t* info) {
  for (int i = 0; i < 8; ++i) {
    char path[128], type[32], level[8], size_text[32];
    const char* base = "/sys/devices/system/cpu/cpu0/cache/index";
    snprintf(path, sizeof(path), "%s%d/type", base, i);
    if (!read_line(path, type, sizeof(type))) break;
    if (strcmp(type, "Instruction") == 0) continue;
    snprintf(path, sizeof(path), "%s%d/level", base, i);
    if (!read_line(path, level, sizeof(level))) continue;
    snprintf(path, sizeof(path), "%s%d/size", base, i);
    size_t bytes = 0;
    if (!read_line(path, size_text, sizeof(size_text)) ||
        !dc__parse_size(size_text, &bytes)) {
      continue;
    }
    switch (atoi(level)) {
      case 1: info->cache_l1d_size = bytes; break;
      case 2: info->cache_l2_size = bytes; break;
      case 3: info->cache_l3_size = bytes; break;
      default: break;
    }
    snprintf(path, sizeof(path), "%s%d/coherency_line_size", base, i);
    char line_text[16];
    if (info->cache_line_size == 0 &&
        read_line(path, line_text, sizeof(line_text))) {
      info->cache_line_size = (size_t)atol(line_text);
    }
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (info->cache_l1d_size == 0) {
    long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (v > 0) info->cache_l1d_size = (size_t)v;
  }
  if (info->cache_l2_size == 0) {
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (v > 0) info->cache_l2_size = (size_t)v;
  }
  if (info->cache_l3_size == 0) {
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v > 0) info->cache_l3_size = (size_t)v;
  }
  if (info->cache_line_size == 0) {
    long v = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    if (v > 0) info->cache_line_size = (size_t)v;
  }
#endif
}

// The widest vector registers this CPU has, in bytes.
static uint32_t simd_width(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx")) {
    return 32;
  }
  if (__builtin_cpu_supports("sse2")) return 16;
  return 8;
#elif defined(__aarch64__) || defined(__ARM_NEON)
  return 16;
#else
  return (uint32_t)sizeof(long);
#endif
}

static uint32_t logical_cores(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return (uint32_t)CPU_COUNT(&set);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (uint32_t)n : 1u;
}

void dc__cpu_read_info(uint32_t worker_threads, dc_device_info_t* info) {
  memset(info, 0, sizeof(*info));
  dc__strlcpy(info->name, "cpu", sizeof(info->name));
  dc__strlcpy(info->backend, "cpu", sizeof(info->backend));
  read_model(info->model, sizeof(info->model));
  info->kind = DC_DEVICE_KIND_CPU;
  info->compute_units = logical_cores();
  info->worker_threads = worker_threads;
  info->simd_width = simd_width();
  read_caches(info);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    info->memory_size = (size_t)pages * (size_t)page_size;
  }
  // A work-group's work-items run as loops on one thread, and barrier
  // kernels keep per-work-item state, so groups are capped at 1024 work-
  // items. __local memory is plain host memory per group; sizing it to the
  // L2 keeps a group's local data in cache (at least 32 KiB).
  info->max_work_group_size = 1024;
  info->local_memory_size = DC_MAX(info->cache_l2_size, (size_t)32 << 10);
  info->unified_memory = true;
  // Kernels already use every worker; extra streams let copies, host
  // callbacks and waits overlap with them.
  info->stream_count = DC_MIN(DC_MAX(worker_threads, 2u), 8u);
  // A cooperative dispatch runs each group on a thread of its own, all at
  // once (dc_worker_pool_gang).
  info->max_cooperative_groups = worker_threads;
}

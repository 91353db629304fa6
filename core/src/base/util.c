// util.c: time, text and number parsing helpers for the core.
// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

uint64_t dc__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t dc__wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char* dc__format_bytes(size_t bytes, char* buf, size_t buf_size) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) {
    snprintf(buf, buf_size, "%zu B", bytes);
  } else {
    snprintf(buf, buf_size, "%.1f %s", value, units[unit]);
  }
  return buf;
}

void dc__strlcpy(char* dst, const char* src, size_t size) {
  if (size == 0) return;
  size_t n = strnlen(src, size - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

bool dc__str_ieq(const char* a, const char* b) {
  for (; *a && *b; ++a, ++b) {
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
  }
  return *a == *b;
}

bool dc__parse_size(const char* text, size_t* out_size) {
  if (text == NULL || !isdigit((unsigned char)text[0])) return false;
  errno = 0;
  char* end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0) return false;
  unsigned shift = 0;
  switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; ++end; break;
    case 'M': shift = 20; ++end; break;
    case 'G': shift = 30; ++end; break;
    case 'T': shift = 40; ++end; break;
    default: break;
  }
  if (shift != 0 && (*end == 'i' || *end == 'I')) ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return false;
  if (value > (SIZE_MAX >> shift)) return false;
  *out_size = (size_t)value << shift;
  return true;
}

bool dc__parse_u32(const char* text, uint32_t* out_value) {
  if (text == NULL || !isdigit((unsigned char)text[0])) return false;
  errno = 0;
  char* end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value > UINT32_MAX) return false;
  *out_value = (uint32_t)value;
  return true;
}

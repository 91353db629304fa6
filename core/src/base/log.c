// log.c: level names, the standard line format, and the default sink.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "context_internal.h"

static const struct {
  dc_log_level_t level;
  const char* name;
  char letter;
} kLevels[] = {
    {DC_LOG_DEFAULT, "default", '?'}, {DC_LOG_OFF, "off", '-'},
    {DC_LOG_ERROR, "error", 'E'},     {DC_LOG_WARN, "warn", 'W'},
    {DC_LOG_INFO, "info", 'I'},       {DC_LOG_DEBUG, "debug", 'D'},
    {DC_LOG_TRACE, "trace", 'T'},
};
#define LEVEL_COUNT (sizeof(kLevels) / sizeof(kLevels[0]))

const char* dc_log_level_name(dc_log_level_t level) {
  for (size_t i = 0; i < LEVEL_COUNT; ++i) {
    if (kLevels[i].level == level) return kLevels[i].name;
  }
  return "?";
}

bool dc_log_level_parse(const char* name, dc_log_level_t* out_level) {
  if (name == NULL || out_level == NULL) return false;
  if (dc__str_ieq(name, "warning")) name = "warn";
  for (size_t i = 1; i < LEVEL_COUNT; ++i) {  // "default" is not a level
    if (dc__str_ieq(name, kLevels[i].name)) {
      *out_level = kLevels[i].level;
      return true;
    }
  }
  return false;
}

static char level_letter(dc_log_level_t level) {
  for (size_t i = 0; i < LEVEL_COUNT; ++i) {
    if (kLevels[i].level == level) return kLevels[i].letter;
  }
  return '?';
}

void dc_log_format(const dc_log_record_t* record, char* buffer,
                   size_t size) {
  if (buffer == NULL || size == 0) return;
  if (record == NULL) {
    buffer[0] = '\0';
    return;
  }
  time_t seconds = (time_t)(record->time_ns / 1000000000u);
  unsigned micros = (unsigned)((record->time_ns % 1000000000u) / 1000u);
  struct tm utc;
  gmtime_r(&seconds, &utc);
  char stamp[32];
  strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(buffer, size, "%s.%06uZ %c %s: %s", stamp, micros,
           level_letter(record->level),
           record->component ? record->component : "dc",
           record->message ? record->message : "");
}

void dc__log_default_sink(void* user_data, const dc_log_record_t* record) {
  (void)user_data;
  char line[1200];
  dc_log_format(record, line, sizeof(line));
  // One fputs per line: stdio locks the stream, so lines never interleave.
  size_t n = strlen(line);
  if (n + 1 < sizeof(line)) {
    line[n] = '\n';
    line[n + 1] = '\0';
  }
  fputs(line, stderr);
}

// json_writer.h: a small streaming JSON writer, shared by the trace and
// the health report. It writes to a FILE or into a fixed buffer, which it
// truncates while counting the full length as snprintf does, so neither
// user builds the whole text in memory first.
// SPDX-License-Identifier: MIT
#ifndef DC_JSON_WRITER_H_
#define DC_JSON_WRITER_H_

#include <stdio.h>

#include "internal.h"

#define DC_JSON_MAX_DEPTH 16

// Commas and indentation are automatic: call dc__json_key() before each
// member of an object and nothing before array items. Containers at
// depth <= |wrap_depth| (the outermost is 1) put each item on a line of
// its own; deeper ones stay on one line.
typedef struct dc__json_t {
  FILE* file;          // NULL: write into |buffer|
  char* buffer;        // NUL-terminated after every write (if size > 0)
  size_t size;
  size_t length;       // bytes produced, counting those that did not fit
  bool failed;         // a write to |file| failed (errno kept in |error|)
  int error;
  uint32_t wrap_depth;
  uint32_t depth;      // open containers
  bool has_items[DC_JSON_MAX_DEPTH + 1];
  bool after_key;      // the next value completes a member
} dc__json_t;

DC_INTERNAL void dc__json_init_buffer(dc__json_t* w, char* buffer,
                                      size_t size, uint32_t wrap_depth);
DC_INTERNAL void dc__json_init_file(dc__json_t* w, FILE* file,
                                    uint32_t wrap_depth);

DC_INTERNAL void dc__json_begin_object(dc__json_t* w);
DC_INTERNAL void dc__json_end_object(dc__json_t* w);
DC_INTERNAL void dc__json_begin_array(dc__json_t* w);
DC_INTERNAL void dc__json_end_array(dc__json_t* w);
DC_INTERNAL void dc__json_key(dc__json_t* w, const char* key);

// Values. A NULL string is written as null; invalid UTF-8 becomes U+FFFD.
DC_INTERNAL void dc__json_string(dc__json_t* w, const char* text);
DC_INTERNAL void dc__json_u64(dc__json_t* w, uint64_t value);
DC_INTERNAL void dc__json_i64(dc__json_t* w, int64_t value);
// Non-finite values are written as null.
DC_INTERNAL void dc__json_double(dc__json_t* w, double value);
// |value| / 1000 with three decimals, exactly: nanoseconds written as
// microseconds, microseconds as milliseconds.
DC_INTERNAL void dc__json_thousandths(dc__json_t* w, int64_t value);
DC_INTERNAL void dc__json_bool(dc__json_t* w, bool value);
DC_INTERNAL void dc__json_null(dc__json_t* w);

// A member in one call: dc__json_key() then the value.
DC_INTERNAL void dc__json_member_string(dc__json_t* w, const char* key,
                                        const char* text);
DC_INTERNAL void dc__json_member_u64(dc__json_t* w, const char* key,
                                     uint64_t value);
DC_INTERNAL void dc__json_member_double(dc__json_t* w, const char* key,
                                        double value);

#endif  // DC_JSON_WRITER_H_

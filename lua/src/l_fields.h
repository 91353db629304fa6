// l_fields.h: reading the fields of option tables (dc.retry, dc.breaker)
// with every value checked: a typo or a bad value raises INVALID_ARGUMENT
// naming the table's maker (|what|, "dc.retry") and the field. Scripts
// write times in seconds; the engine keeps nanoseconds.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_FIELDS_H_
#define DCLUA_FIELDS_H_

#include <stddef.h>

#include "dclua_internal.h"

// Every retry class (DC_RETRY_ON_* bits).
#define DCLUA_ALL_CLASSES \
  (DC_RETRY_ON_TRANSIENT | DC_RETRY_ON_DETERMINISTIC | DC_RETRY_ON_DEVICE)

// Raises INVALID_ARGUMENT: "<what>: field '<field>' <problem>".
int dclua_field_error(lua_State* L, const char* what, const char* field,
                      const char* problem);

// Each reads field |field| of the table at |index| and returns false when
// it is absent; raises unless it is a finite number, an integer in
// [min, max], a positive number of seconds (into nanoseconds).
bool dclua_get_number(lua_State* L, int index, const char* what,
                      const char* field, double* out);
bool dclua_get_integer(lua_State* L, int index, const char* what,
                       const char* field, lua_Integer min, lua_Integer max,
                       lua_Integer* out);
bool dclua_get_seconds(lua_State* L, int index, const char* what,
                       const char* field, uint64_t* out_ns);

// Reads a field that is one status name or a list of them into |codes|
// (DC_STATUS_BIT mask); with |classes| non-NULL, class names too
// ("transient", "device", "deterministic", "all") into DC_RETRY_ON_*
// bits. False when absent.
bool dclua_get_codes(lua_State* L, int index, const char* what,
                     const char* field, uint64_t* codes, uint32_t* classes);

// Pushes the list of the names of the codes in |mask|.
void dclua_push_codes(lua_State* L, uint64_t mask);

// The status codes, in order: dclua_status_at(0 .. count - 1).
size_t dclua_status_count(void);
dc_status_t dclua_status_at(size_t index);

#endif  // DCLUA_FIELDS_H_

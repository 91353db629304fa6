// l_telemetry.c: what the engine has done, as Lua tables: counters and
// kernel timings (dc.stats), a profiling helper (dc.profile), the
// timeline (dc.trace) and the health report (dc.health).
//
// Times reach Lua in milliseconds (the core counts nanoseconds): scripts
// print and compare them at the scale kernels run at. The health report
// is JSON in the core; dc.health() decodes it with the small, strict
// decoder at the end of this file, so a script reads report.devices[1]
// instead of parsing text.
// SPDX-License-Identifier: MIT
#include <math.h>
#include <string.h>

#include "dclua_internal.h"
#include "l_sandbox.h"

#define NS_PER_MS 1e6

// Reads the integer option |key| (absent: |fallback|) of the table at
// |index|, which must lie in [|min|, |max|].
static lua_Integer opt_integer_field(lua_State* L, int index, const char* key,
                                     lua_Integer fallback, lua_Integer min,
                                     lua_Integer max) {
  lua_Integer value = fallback;
  int type = lua_getfield(L, index, key);
  if (type != LUA_TNIL) {
    int is_integer = 0;
    value = lua_tointegerx(L, -1, &is_integer);
    if (!is_integer || value < min || value > max) {
      luaL_argerror(L, index,
                    lua_pushfstring(L, "field '%s' must be an integer in "
                                    "[%I, %I]", key, min, max));
    }
  }
  lua_pop(L, 1);
  return value;
}

//===-- Counters and kernel timings -------------------------------------===//

// Pushes one kernel's timing: the count and times in milliseconds.
static void push_timing(lua_State* L, const dc_timing_stats_t* s) {
  lua_createtable(L, 0, 8);
  dclua_set_integer(L, "count", s->count);
  dclua_set_number(L, "total_ms", s->total_ns / NS_PER_MS);
  dclua_set_number(L, "mean_ms", s->mean_ns / NS_PER_MS);
  dclua_set_number(L, "min_ms", s->min_ns / NS_PER_MS);
  dclua_set_number(L, "max_ms", s->max_ns / NS_PER_MS);
  dclua_set_number(L, "p50_ms", s->p50_ns / NS_PER_MS);
  dclua_set_number(L, "p95_ms", s->p95_ns / NS_PER_MS);
  dclua_set_number(L, "p99_ms", s->p99_ns / NS_PER_MS);
}

// Sets the fields of |c| into the table at the top of the stack.
static void set_counters(lua_State* L, const dc_counters_t* c) {
  dclua_set_integer(L, "dispatches", c->dispatches);
  dclua_set_integer(L, "copies", c->copies);
  dclua_set_integer(L, "bytes_copied", c->bytes_copied);
  dclua_set_integer(L, "fills", c->fills);
  dclua_set_integer(L, "host_callbacks", c->host_callbacks);
  dclua_set_integer(L, "events_recorded", c->events_recorded);
  dclua_set_integer(L, "event_waits", c->event_waits);
  dclua_set_integer(L, "commands_failed", c->commands_failed);
  dclua_set_integer(L, "commands_skipped", c->commands_skipped);
  dclua_set_integer(L, "commands_cancelled", c->commands_cancelled);
  dclua_set_integer(L, "pool_hits", c->pool_hits);
  dclua_set_integer(L, "pool_misses", c->pool_misses);
  dclua_set_integer(L, "event_pool_hits", c->event_pool_hits);
  dclua_set_integer(L, "event_pool_misses", c->event_pool_misses);
}

// Pushes { [name] = timing, ... } for every kernel that has run. Walks
// until OUT_OF_RANGE rather than to a count read first: other threads
// may run new kernels meanwhile.
static void push_kernels(lua_State* L, dc_context_t* context) {
  lua_newtable(L);
  for (size_t i = 0;; ++i) {
    char name[1024];
    dc_timing_stats_t s;
    dc_status_t st = dc_telemetry_kernel_at(context, i, name, sizeof(name),
                                            &s);
    if (st == DC_ERR_OUT_OF_RANGE) break;
    if (st != DC_OK) dclua_raise(L, st);
    push_timing(L, &s);
    lua_setfield(L, -2, name);
  }
}

// [-0, +1, e]  dc.stats() -> { dispatches = n, ..., kernels = { [name] =
//   { count, total_ms, mean_ms, min_ms, max_ms, p50_ms, p95_ms, p99_ms } } }
static int l_stats(lua_State* L) {
  dc_context_t* context = dclua_context(L);
  dc_counters_t counters;
  DCLUA_CHECK(L, dc_telemetry_counters(context, &counters));
  lua_createtable(L, 0, 16);
  set_counters(L, &counters);
  push_kernels(L, context);
  lua_setfield(L, -2, "kernels");
  return 1;
}

// [-0, +0, e]  dc.reset_stats(): zeroes counters, kernel timings and the
// error summary of the health report
static int l_reset_stats(lua_State* L) {
  dc_telemetry_reset(dclua_context(L));
  return 0;
}

//===-- Profiling -------------------------------------------------------===//

// dc_profile() calls its function on the calling thread, here the Lua
// thread, so each step may call Lua directly. A Lua error must not
// unwind through dc_profile: the step catches it, parks the error value in
// stack slot |error_slot| and stops the run; l_profile re-raises it as it
// was (an error object keeps its code).
typedef struct profile_step_t {
  lua_State* L;
  int function;    // stack slot of the function
  int error_slot;  // stack slot for the error it raised
  bool raised;
} profile_step_t;

static dc_status_t profile_step(void* user_data) {
  profile_step_t* step = user_data;
  lua_State* L = step->L;
  lua_pushvalue(L, step->function);
  if (lua_pcall(L, 0, 0, 0) == LUA_OK) return DC_OK;
  lua_replace(L, step->error_slot);
  step->raised = true;
  return dc_set_error(DC_ERR_ABORTED, "dc.profile: the function raised");
}

// Pushes the result of a profile in milliseconds.
static void push_profile(lua_State* L, const dc_profile_result_t* r,
                         bool with_work) {
  lua_createtable(L, 0, 10);
  dclua_set_integer(L, "runs", r->iterations);
  dclua_set_number(L, "mean_ms", r->mean_ns / NS_PER_MS);
  dclua_set_number(L, "stddev_ms", r->stddev_ns / NS_PER_MS);
  dclua_set_number(L, "min_ms", r->min_ns / NS_PER_MS);
  dclua_set_number(L, "max_ms", r->max_ns / NS_PER_MS);
  dclua_set_number(L, "p50_ms", r->p50_ns / NS_PER_MS);
  dclua_set_number(L, "p95_ms", r->p95_ns / NS_PER_MS);
  dclua_set_number(L, "p99_ms", r->p99_ns / NS_PER_MS);
  dclua_set_number(L, "per_second", r->calls_per_second);
  if (with_work) dclua_set_number(L, "work_per_second", r->work_per_second);
}

// Reads dc.profile's options at |index| (a table or nil) into |params|;
// returns whether they give a work per call.
static bool check_profile_options(lua_State* L, int index,
                                  dc_profile_params_t* params) {
  static const char* const allowed[] = {"runs", "warmup", "work", NULL};
  params->iterations = 10;
  params->warmup = 1;
  params->work_per_call = 0.0;
  if (lua_isnoneornil(L, index)) return false;
  dclua_check_options(L, index, allowed);
  params->iterations =
      (uint32_t)opt_integer_field(L, index, "runs", 10, 1, 100000000);
  params->warmup =
      (uint32_t)opt_integer_field(L, index, "warmup", 1, 0, 100000000);
  bool has_work = lua_getfield(L, index, "work") != LUA_TNIL;
  if (has_work) {
    lua_Number work = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(work >= 0) || isinf(work)) {
      luaL_argerror(L, index, "field 'work' must be a finite number >= 0");
    }
    params->work_per_call = (double)work;
  }
  lua_pop(L, 1);
  return has_work;
}

// [-0, +1, e]  dc.profile(fn [, { runs = 10, warmup = 1, work = w }]) ->
//   { runs, mean_ms, stddev_ms, min_ms, max_ms, p50_ms, p95_ms, p99_ms,
//     per_second [, work_per_second] }
static int l_profile(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  dc_profile_params_t params;
  bool has_work = check_profile_options(L, 2, &params);
  lua_settop(L, 2);
  lua_pushnil(L);  // slot 3: the error the function raises
  profile_step_t step = {.L = L, .function = 1, .error_slot = 3};
  dc_profile_result_t result;
  dc_status_t st = dc_profile(profile_step, &step, &params, &result);
  if (step.raised) return lua_error(L);  // the value in slot 3, on top
  DCLUA_CHECK(L, st);
  push_profile(L, &result, has_work);
  return 1;
}

//===-- The timeline ----------------------------------------------------===//

// [-0, +0, e]  dc.trace.start([max_spans]): starts recording a timeline,
// discarding the previous one; max_spans 0 or none: 1,000,000
static int l_trace_start(lua_State* L) {
  lua_Integer max_spans = 0;
  if (!lua_isnoneornil(L, 1)) {
    int is_integer = 0;
    max_spans = lua_tointegerx(L, 1, &is_integer);
    luaL_argexpected(L, is_integer, 1, "integer");
    luaL_argcheck(L, max_spans >= 0, 1, "max_spans must be >= 0");
  }
  DCLUA_CHECK(L, dc_trace_start(dclua_context(L), (size_t)max_spans));
  return 0;
}

// [-0, +0, e]  dc.trace.stop(): stops recording; the spans stay
static int l_trace_stop(lua_State* L) {
  dc_trace_stop(dclua_context(L));
  return 0;
}

// [-0, +1, e]  dc.trace.active() -> boolean
static int l_trace_active(lua_State* L) {
  lua_pushboolean(L, dc_trace_active(dclua_context(L)));
  return 1;
}

// Raises |status| with the thread's last error, naming |path| where it
// names |given|, the path the writer was given instead.
static int raise_for_path(lua_State* L, dc_status_t status, const char* path,
                          const char* given) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  const char* message = dc_last_error();
  size_t n = strlen(given);
  for (const char* at; n > 0 && (at = strstr(message, given)) != NULL;
       message = at + n) {
    luaL_addlstring(&b, message, (size_t)(at - message));
    luaL_addstring(&b, path);
  }
  luaL_addstring(&b, message);
  luaL_pushresult(&b);
  return dclua_raisef(L, status, "%s", lua_tostring(L, -1));
}

// [-0, +0, e]  dc.trace.write(path): saves the spans so far as Chrome
// trace JSON (Perfetto opens it), atomically. In a sandbox the writer
// works in the directory held open (l_sandbox.h): the temporary file and
// the rename cannot be sent out of it, and a link at |path| is replaced,
// not followed.
static int l_trace_write(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  dclua_held_dir_t held;
  const char* target = dclua_hold_dir(L, path, &held);
  dc_status_t status = dc_trace_write(dclua_context(L), target);
  dclua_release_dir(&held);
  if (status != DC_OK) raise_for_path(L, status, path, target);
  return 0;
}

//===-- The health report and the metrics -------------------------------===//

// A report the engine writes as snprintf does: the health report (JSON)
// or the metrics (OpenMetrics text).
typedef dc_status_t (*report_fn)(dc_context_t* context, char* buffer,
                                 size_t size, size_t* out_length);

// Pushes a report as a Lua string. It may grow between asking its length
// and writing it (streams come and go on other threads), so this retries
// until it fits. A userdata holds the text while it is written so that a
// raised error frees it.
static void push_report(lua_State* L, report_fn write) {
  dc_context_t* context = dclua_context(L);
  size_t length = 0;
  DCLUA_CHECK(L, write(context, NULL, 0, &length));
  for (;;) {
    size_t size = length + 256;
    char* text = lua_newuserdatauv(L, size, 0);
    DCLUA_CHECK(L, write(context, text, size, &length));
    if (length < size) {
      lua_pushlstring(L, text, length);
      lua_remove(L, -2);
      return;
    }
    lua_pop(L, 1);
  }
}

// [-0, +1, e]  dc.health_json() -> the health report, a JSON string
static int l_health_json(lua_State* L) {
  push_report(L, dc_health_report);
  return 1;
}

// [-0, +1, e]  dc.metrics() -> the telemetry as OpenMetrics text
static int l_metrics(lua_State* L) {
  push_report(L, dc_telemetry_openmetrics);
  return 1;
}

static void json_decode(lua_State* L, const char* text, size_t length);

// [-0, +1, e]  dc.health() -> the health report as a table: engine,
// devices, streams, breakers, counters, errors (see docs/telemetry.md)
static int l_health(lua_State* L) {
  push_report(L, dc_health_report);
  size_t length = 0;
  const char* text = lua_tolstring(L, -1, &length);
  json_decode(L, text, length);
  return 1;
}

//===-- A strict JSON decoder -------------------------------------------===//
//
// Objects become tables with string keys, arrays sequences from 1,
// integers Lua integers (floats past the integer range), true/false
// booleans and null nil (so an object's null member is absent). Anything
// that is not RFC 8259 JSON raises INTERNAL: the text comes from the
// engine, so malformed text is the engine's bug, reported with its
// offset rather than decoded into a guess.

#define JSON_MAX_DEPTH 64

typedef struct json_t {
  const char* start;
  const char* p;
  const char* end;
  int depth;
} json_t;

static int json_fail(lua_State* L, json_t* j, const char* what) {
  return dclua_raisef(L, DC_ERR_INTERNAL,
                      "dc.health: malformed report at byte %zu: %s",
                      (size_t)(j->p - j->start), what);
}

static void json_skip_space(json_t* j) {
  while (j->p < j->end &&
         (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
    ++j->p;
  }
}

// Consumes |c| (after white space) if it comes next.
static bool json_accept(json_t* j, char c) {
  json_skip_space(j);
  if (j->p < j->end && *j->p == c) {
    ++j->p;
    return true;
  }
  return false;
}

static void json_expect(lua_State* L, json_t* j, char c, const char* what) {
  if (!json_accept(j, c)) json_fail(L, j, what);
}

// Reads 4 hex digits of a \u escape.
static unsigned json_hex4(lua_State* L, json_t* j) {
  if (j->end - j->p < 4) json_fail(L, j, "truncated \\u escape");
  unsigned value = 0;
  for (int i = 0; i < 4; ++i) {
    char c = *j->p++;
    unsigned digit = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
    if (digit == 16u) json_fail(L, j, "bad hex digit in \\u escape");
    value = value * 16u + digit;
  }
  return value;
}

// Adds code point |cp| to |b| as UTF-8.
static void json_add_utf8(luaL_Buffer* b, unsigned cp) {
  if (cp < 0x80) {
    luaL_addchar(b, (char)cp);
  } else if (cp < 0x800) {
    luaL_addchar(b, (char)(0xC0 | (cp >> 6)));
    luaL_addchar(b, (char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    luaL_addchar(b, (char)(0xE0 | (cp >> 12)));
    luaL_addchar(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
    luaL_addchar(b, (char)(0x80 | (cp & 0x3F)));
  } else {
    luaL_addchar(b, (char)(0xF0 | (cp >> 18)));
    luaL_addchar(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
    luaL_addchar(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
    luaL_addchar(b, (char)(0x80 | (cp & 0x3F)));
  }
}

// Decodes a \u escape (the backslash and 'u' consumed), joining a
// surrogate pair; a lone surrogate is malformed.
static void json_unicode(lua_State* L, json_t* j, luaL_Buffer* b) {
  unsigned cp = json_hex4(L, j);
  if (cp >= 0xDC00 && cp <= 0xDFFF) json_fail(L, j, "lone low surrogate");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
      json_fail(L, j, "high surrogate without its low half");
    }
    j->p += 2;
    unsigned low = json_hex4(L, j);
    if (low < 0xDC00 || low > 0xDFFF) json_fail(L, j, "bad surrogate pair");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  }
  json_add_utf8(b, cp);
}

// Decodes one escape sequence (the backslash consumed).
static void json_escape(lua_State* L, json_t* j, luaL_Buffer* b) {
  if (j->p >= j->end) json_fail(L, j, "unterminated string");
  char c = *j->p++;
  switch (c) {
    case '"': case '\\': case '/': luaL_addchar(b, c); break;
    case 'b': luaL_addchar(b, '\b'); break;
    case 'f': luaL_addchar(b, '\f'); break;
    case 'n': luaL_addchar(b, '\n'); break;
    case 'r': luaL_addchar(b, '\r'); break;
    case 't': luaL_addchar(b, '\t'); break;
    case 'u': json_unicode(L, j, b); break;
    default: --j->p; json_fail(L, j, "bad escape in string");
  }
}

// Pushes the string that starts at j->p (at its opening quote).
static void json_string(lua_State* L, json_t* j) {
  json_expect(L, j, '"', "expected a string");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (;;) {
    if (j->p >= j->end) json_fail(L, j, "unterminated string");
    unsigned char c = (unsigned char)*j->p++;
    if (c == '"') break;
    if (c < 0x20) {
      --j->p;
      json_fail(L, j, "control character in string");
    }
    if (c == '\\') {
      json_escape(L, j, &b);
    } else {
      luaL_addchar(&b, (char)c);
    }
  }
  luaL_pushresult(&b);
}

// Skips a run of digits; returns how many.
static size_t json_digits(json_t* j) {
  const char* first = j->p;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') ++j->p;
  return (size_t)(j->p - first);
}

// Pushes the number at j->p, checked against JSON's grammar (no leading
// zeros, '+', '.5', hex, inf or nan), converted by Lua.
static void json_number(lua_State* L, json_t* j) {
  const char* first = j->p;
  if (j->p < j->end && *j->p == '-') ++j->p;
  size_t whole = json_digits(j);
  if (whole == 0 || (whole > 1 && j->p[-(ptrdiff_t)whole] == '0')) {
    json_fail(L, j, "bad number");
  }
  if (j->p < j->end && *j->p == '.') {
    ++j->p;
    if (json_digits(j) == 0) json_fail(L, j, "bad fraction");
  }
  if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
    ++j->p;
    if (j->p < j->end && (*j->p == '+' || *j->p == '-')) ++j->p;
    if (json_digits(j) == 0) json_fail(L, j, "bad exponent");
  }
  char text[64];
  size_t n = (size_t)(j->p - first);
  if (n >= sizeof(text)) json_fail(L, j, "number too long");
  memcpy(text, first, n);
  text[n] = '\0';
  if (lua_stringtonumber(L, text) == 0) json_fail(L, j, "bad number");
}

// Consumes the literal |word| (true, false, null).
static bool json_word(json_t* j, const char* word) {
  size_t n = strlen(word);
  if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) return false;
  j->p += n;
  return true;
}

static void json_value(lua_State* L, json_t* j);

// Pushes the object whose '{' was consumed.
static void json_object(lua_State* L, json_t* j) {
  lua_newtable(L);
  if (json_accept(j, '}')) return;
  do {
    json_skip_space(j);
    json_string(L, j);
    json_expect(L, j, ':', "expected ':' after a key");
    json_value(L, j);
    lua_rawset(L, -3);  // a nil value (null) leaves the key absent
  } while (json_accept(j, ','));
  json_expect(L, j, '}', "expected ',' or '}' in an object");
}

// Pushes the array whose '[' was consumed.
static void json_array(lua_State* L, json_t* j) {
  lua_newtable(L);
  if (json_accept(j, ']')) return;
  lua_Integer i = 0;
  do {
    json_value(L, j);
    lua_rawseti(L, -2, ++i);
  } while (json_accept(j, ','));
  json_expect(L, j, ']', "expected ',' or ']' in an array");
}

// Pushes the value that starts at j->p (nil for null).
static void json_value(lua_State* L, json_t* j) {
  json_skip_space(j);
  if (j->p >= j->end) json_fail(L, j, "unexpected end");
  if (++j->depth > JSON_MAX_DEPTH) json_fail(L, j, "nested too deeply");
  luaL_checkstack(L, 4, "dc.health: report nested too deeply");
  char c = *j->p;
  if (c == '{' || c == '[') {
    ++j->p;
    if (c == '{') json_object(L, j); else json_array(L, j);
  } else if (c == '"') {
    json_string(L, j);
  } else if (c == '-' || (c >= '0' && c <= '9')) {
    json_number(L, j);
  } else if (json_word(j, "true")) {
    lua_pushboolean(L, 1);
  } else if (json_word(j, "false")) {
    lua_pushboolean(L, 0);
  } else if (json_word(j, "null")) {
    lua_pushnil(L);
  } else {
    json_fail(L, j, "unexpected character");
  }
  --j->depth;
}

// Pushes the value that |text| encodes; only white space may follow it.
static void json_decode(lua_State* L, const char* text, size_t length) {
  json_t j = {.start = text, .p = text, .end = text + length};
  json_value(L, &j);
  json_skip_space(&j);
  if (j.p != j.end) json_fail(L, &j, "text after the value");
}

//===-- Registration ----------------------------------------------------===//

void dclua_open_telemetry(lua_State* L) {
  static const luaL_Reg funcs[] = {{"stats", l_stats},
                                   {"reset_stats", l_reset_stats},
                                   {"profile", l_profile},
                                   {"health", l_health},
                                   {"health_json", l_health_json},
                                   {"metrics", l_metrics},
                                   {NULL, NULL}};
  static const luaL_Reg trace[] = {{"start", l_trace_start},
                                   {"stop", l_trace_stop},
                                   {"active", l_trace_active},
                                   {"write", l_trace_write},
                                   {NULL, NULL}};
  dclua_set_funcs(L, funcs);
  luaL_newlib(L, trace);
  lua_setfield(L, -2, "trace");
}

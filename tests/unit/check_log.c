// check_log.c: log levels, the line format, sinks and filtering.
// SPDX-License-Identifier: MIT
#include <regex.h>
#include <time.h>
#include <unistd.h>

#include "check_util.h"

static uint64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void env_fixture(void) { dc_test_clear_env(); }

static const dc_log_level_t kLevels[] = {
    DC_LOG_ERROR, DC_LOG_WARN, DC_LOG_INFO, DC_LOG_DEBUG, DC_LOG_TRACE,
};
#define LEVEL_COUNT (sizeof(kLevels) / sizeof(kLevels[0]))

//===-- core: names, parsing and the line format -------------------------===//

START_TEST(test_log_level_names) {
  ck_assert_str_eq(dc_log_level_name(DC_LOG_DEFAULT), "default");
  ck_assert_str_eq(dc_log_level_name(DC_LOG_OFF), "off");
  ck_assert_str_eq(dc_log_level_name(DC_LOG_ERROR), "error");
  ck_assert_str_eq(dc_log_level_name(DC_LOG_WARN), "warn");
  ck_assert_str_eq(dc_log_level_name(DC_LOG_INFO), "info");
  ck_assert_str_eq(dc_log_level_name(DC_LOG_DEBUG), "debug");
  ck_assert_str_eq(dc_log_level_name(DC_LOG_TRACE), "trace");
}
END_TEST

START_TEST(test_log_level_parse_accepts_names_in_any_case) {
  static const struct {
    const char* text;
    dc_log_level_t level;
  } kGood[] = {
      {"off", DC_LOG_OFF},       {"error", DC_LOG_ERROR},
      {"warn", DC_LOG_WARN},     {"warning", DC_LOG_WARN},
      {"WARNING", DC_LOG_WARN},  {"info", DC_LOG_INFO},
      {"Info", DC_LOG_INFO},     {"debug", DC_LOG_DEBUG},
      {"TRACE", DC_LOG_TRACE},   {"oFf", DC_LOG_OFF},
  };
  for (size_t i = 0; i < sizeof(kGood) / sizeof(kGood[0]); ++i) {
    dc_log_level_t level = DC_LOG_DEFAULT;
    ck_assert_msg(dc_log_level_parse(kGood[i].text, &level), "'%s'",
                  kGood[i].text);
    ck_assert_int_eq(level, kGood[i].level);
  }
  // Every name round-trips.
  for (size_t i = 0; i < LEVEL_COUNT; ++i) {
    dc_log_level_t level = DC_LOG_DEFAULT;
    ck_assert(dc_log_level_parse(dc_log_level_name(kLevels[i]), &level));
    ck_assert_int_eq(level, kLevels[i]);
  }
}
END_TEST

START_TEST(test_log_format_shape) {
  // 1700000000 s is 2023-11-14T22:13:20Z.
  dc_log_record_t r = {DC_LOG_WARN, "pool", "trimmed 64 MiB",
                       1700000000123456789ull};
  char line[128];
  dc_log_format(&r, line, sizeof(line));
  ck_assert_str_eq(line, "2023-11-14T22:13:20.123456Z W pool: trimmed 64 MiB");
}
END_TEST

START_TEST(test_log_format_level_letters) {
  static const char kLetters[] = {'E', 'W', 'I', 'D', 'T'};
  for (size_t i = 0; i < LEVEL_COUNT; ++i) {
    dc_log_record_t r = {kLevels[i], "c", "m", 0};
    char line[64];
    dc_log_format(&r, line, sizeof(line));
    char want[64];
    snprintf(want, sizeof(want), "1970-01-01T00:00:00.000000Z %c c: m",
             kLetters[i]);
    ck_assert_str_eq(line, want);
  }
}
END_TEST

START_TEST(test_log_format_missing_fields) {
  char line[64];
  dc_log_record_t r = {DC_LOG_ERROR, NULL, NULL, 999};  // 999 ns: 0 us
  dc_log_format(&r, line, sizeof(line));
  ck_assert_str_eq(line, "1970-01-01T00:00:00.000000Z E dc: ");
  memset(line, 'x', sizeof(line));
  dc_log_format(NULL, line, sizeof(line));
  ck_assert_str_eq(line, "");
}
END_TEST

//===-- core: sinks and filtering ---------------------------------------===//

START_TEST(test_log_sink_receives_component_level_and_timestamp) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  dc_context_t* ctx = dc_test_context_new(&p);
  size_t start = dc_test_log_count(log);
  uint64_t before = wall_ns();
  dc_context_log(ctx, DC_LOG_WARN, "mycomp", "value %d of %s", 42, "x");
  uint64_t after = wall_ns();
  ck_assert_uint_eq(dc_test_log_count(log), start + 1);
  dc_test_log_entry_t* e = &log->entries[start];
  ck_assert_int_eq(e->level, DC_LOG_WARN);
  ck_assert_str_eq(e->component, "mycomp");
  ck_assert_str_eq(e->message, "value 42 of x");
  // A wall-clock stamp taken during the call.
  ck_assert_uint_ge(e->time_ns, before);
  ck_assert_uint_le(e->time_ns, after);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_log_level_filters_messages) {
  for (size_t set = 0; set < LEVEL_COUNT; ++set) {
    dc_test_log_t* log = dc_test_log_new();
    dc_context_params_t p = dc_test_log_params(log, kLevels[set]);
    dc_context_t* ctx = dc_test_context_new(&p);
    ck_assert_int_eq(dc_context_log_level(ctx), kLevels[set]);
    for (size_t i = 0; i < LEVEL_COUNT; ++i) {
      size_t start = dc_test_log_count(log);
      dc_context_log(ctx, kLevels[i], "test", "at %s",
                     dc_log_level_name(kLevels[i]));
      bool delivered = dc_test_log_count(log) == start + 1;
      ck_assert_msg(delivered == (i <= set), "%s message at level %s",
                    dc_log_level_name(kLevels[i]),
                    dc_log_level_name(kLevels[set]));
    }
    dc_context_release(ctx);
    dc_test_log_free(log);
  }
}
END_TEST

START_TEST(test_log_off_silences_everything) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_OFF);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_buffer_t* b = dc_test_buffer_new(dc_test_cpu(ctx), DC_DTYPE_U8, 8, "z");
  for (size_t i = 0; i < LEVEL_COUNT; ++i) {
    dc_context_log(ctx, kLevels[i], "test", "never");
  }
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 1);  // counted, not logged
  dc_buffer_release(b);
  dc_context_release(ctx);
  ck_assert_uint_eq(dc_test_log_count(log), 0);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_log_context_reports_its_own_events) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_DEBUG);
  p.thread_count = 2;
  dc_context_t* ctx = dc_test_context_new(&p);
  long created = dc_test_log_find(log, 0, "created with");
  ck_assert_int_ge(created, 0);
  ck_assert_str_eq(log->entries[created].component, "context");
  ck_assert_int_eq(log->entries[created].level, DC_LOG_INFO);
  DC_CK_STR_HAS(log->entries[created].message, "2 threads");
  long added = dc_test_log_find(log, 0, "added cpu");
  ck_assert_int_ge(added, 0);
  ck_assert_str_eq(log->entries[added].component, "device");
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_log_set_level_at_run_time) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_ERROR);
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_context_log(ctx, DC_LOG_DEBUG, "t", "hidden");
  ck_assert_uint_eq(dc_test_log_count(log), 0);

  dc_context_set_log_level(ctx, DC_LOG_DEBUG);
  ck_assert_int_eq(dc_context_log_level(ctx), DC_LOG_DEBUG);
  dc_context_params_t now;
  DC_CK_OK(dc_context_params(ctx, &now));
  ck_assert_int_eq(now.log_level, DC_LOG_DEBUG);
  dc_context_log(ctx, DC_LOG_DEBUG, "t", "shown");
  ck_assert_int_ge(dc_test_log_find(log, 0, "shown"), 0);

  dc_context_set_log_level(ctx, DC_LOG_OFF);
  size_t n = dc_test_log_count(log);
  dc_context_log(ctx, DC_LOG_ERROR, "t", "silenced");
  ck_assert_uint_eq(dc_test_log_count(log), n);

  // DC_LOG_DEFAULT goes back to the level the context was created with.
  dc_context_set_log_level(ctx, DC_LOG_DEFAULT);
  ck_assert_int_eq(dc_context_log_level(ctx), DC_LOG_ERROR);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

// Redirects stderr into a temporary file around one log call and returns
// what was written.
static void capture_default_sink(dc_context_t* ctx, char* out, size_t size) {
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  FILE* tmp = tmpfile();
  ck_assert_ptr_nonnull(tmp);
  ck_assert_int_ge(dup2(fileno(tmp), STDERR_FILENO), 0);
  dc_context_log(ctx, DC_LOG_WARN, "sinktest", "hello %d", 7);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(tmp);
  size_t n = fread(out, 1, size - 1, tmp);
  out[n] = '\0';
  fclose(tmp);
}

START_TEST(test_log_default_sink_writes_one_line_to_stderr) {
  dc_context_params_t p = {0};
  p.log_level = DC_LOG_WARN;  // the default sink, at warn
  p.backends = dc_test_backends();
  dc_context_t* ctx = dc_test_context_new(&p);
  char text[512];
  capture_default_sink(ctx, text, sizeof(text));
  dc_context_release(ctx);
  regex_t re;
  ck_assert_int_eq(
      regcomp(&re,
              "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
              "\\.[0-9]{6}Z W sinktest: hello 7\n$",
              REG_EXTENDED | REG_NOSUB),
      0);
  int match = regexec(&re, text, 0, NULL, 0);
  regfree(&re);
  ck_assert_msg(match == 0, "stderr got '%s'", text);
}
END_TEST

//===-- core: DC_LOG ----------------------------------------------------===//

START_TEST(test_log_env_sets_the_level) {
  static const struct {
    const char* text;
    dc_log_level_t level;
  } kCases[] = {
      {"debug", DC_LOG_DEBUG}, {"ERROR", DC_LOG_ERROR},
      {"warning", DC_LOG_WARN}, {"off", DC_LOG_OFF},
      {"", DC_LOG_WARN},  // empty counts as unset
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); ++i) {
    setenv("DC_LOG", kCases[i].text, 1);
    dc_test_log_t* log = dc_test_log_new();
    dc_context_params_t p = dc_test_log_params(log, DC_LOG_DEFAULT);
    dc_context_t* ctx = dc_test_context_new(&p);
    ck_assert_msg(dc_context_log_level(ctx) == kCases[i].level,
                  "DC_LOG='%s' gave %s", kCases[i].text,
                  dc_log_level_name(dc_context_log_level(ctx)));
    dc_context_release(ctx);
    dc_test_log_free(log);
  }
  unsetenv("DC_LOG");
}
END_TEST

START_TEST(test_log_default_level_is_warn) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_DEFAULT);
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_int_eq(dc_context_log_level(ctx), DC_LOG_WARN);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

START_TEST(test_log_explicit_level_wins_over_env) {
  setenv("DC_LOG", "trace", 1);
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_ERROR);
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_int_eq(dc_context_log_level(ctx), DC_LOG_ERROR);
  dc_context_release(ctx);
  // Even a malformed variable is ignored when the host sets the level.
  setenv("DC_LOG", "loudest", 1);
  ctx = dc_test_context_new(&p);
  ck_assert_int_eq(dc_context_log_level(ctx), DC_LOG_ERROR);
  dc_context_release(ctx);
  unsetenv("DC_LOG");
  dc_test_log_free(log);
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_log_level_parse_rejects_other_text) {
  static const char* const kBad[] = {
      "default", "", "verbose", "warn ", " info", "err", "0", "6", "offf",
  };
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    dc_log_level_t level = DC_LOG_TRACE;
    ck_assert_msg(!dc_log_level_parse(kBad[i], &level), "'%s' parsed",
                  kBad[i]);
  }
  dc_log_level_t level = DC_LOG_TRACE;
  ck_assert(!dc_log_level_parse(NULL, &level));
  ck_assert(!dc_log_level_parse("warn", NULL));
  ck_assert_str_eq(dc_log_level_name((dc_log_level_t)42), "?");
}
END_TEST

START_TEST(test_log_env_malformed_is_an_error) {
  setenv("DC_LOG", "loudest", 1);
  dc_context_params_t p = {0};  // level from the environment
  dc_context_t* ctx = (dc_context_t*)&p;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "dc_context_create");
  DC_CK_ERROR_HAS("DC_LOG");
  DC_CK_ERROR_HAS("loudest");
  ck_assert_ptr_null(ctx);
  unsetenv("DC_LOG");
}
END_TEST

START_TEST(test_log_bad_level_in_params_is_an_error) {
  dc_context_params_t p = {0};
  p.log_level = (dc_log_level_t)(DC_LOG_TRACE + 1);
  dc_context_t* ctx = NULL;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "dc_context_create");
  DC_CK_ERROR_HAS("log_level");
  p.log_level = (dc_log_level_t)-1;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_INVALID_ARGUMENT,
             "log_level");
}
END_TEST

START_TEST(test_log_calls_with_bad_arguments_deliver_nothing) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_TRACE);
  dc_context_t* ctx = dc_test_context_new(&p);
  size_t n = dc_test_log_count(log);
  // Neither "off" nor "default" is a level a message can have.
  dc_context_log(ctx, DC_LOG_OFF, "t", "off");
  dc_context_log(ctx, DC_LOG_DEFAULT, "t", "default");
  dc_context_log(ctx, (dc_log_level_t)99, "t", "bogus");
  dc_context_log(ctx, DC_LOG_ERROR, "t", NULL);
  dc_context_log(NULL, DC_LOG_ERROR, "t", "no context");
  ck_assert_uint_eq(dc_test_log_count(log), n);
  // A NULL component is shown as "host".
  dc_context_log(ctx, DC_LOG_ERROR, NULL, "anonymous");
  ck_assert_uint_eq(dc_test_log_count(log), n + 1);
  ck_assert_str_eq(log->entries[n].component, "host");
  // Bad levels leave the current one alone.
  dc_context_set_log_level(ctx, (dc_log_level_t)99);
  dc_context_set_log_level(ctx, (dc_log_level_t)-3);
  ck_assert_int_eq(dc_context_log_level(ctx), DC_LOG_TRACE);
  dc_context_set_log_level(NULL, DC_LOG_DEBUG);
  ck_assert_int_eq(dc_context_log_level(NULL), DC_LOG_OFF);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_log_format_truncates_to_the_buffer) {
  dc_log_record_t r = {DC_LOG_INFO, "comp", "a message", 0};
  char full[128];
  dc_log_format(&r, full, sizeof(full));
  for (unsigned size = 1; size < 40; ++size) {
    char small[40];
    memset(small, '#', sizeof(small));
    dc_log_format(&r, small, size);
    ck_assert_uint_eq(strlen(small), size - 1);
    ck_assert_int_eq(strncmp(small, full, size - 1), 0);
    ck_assert_int_eq(small[size], '#');  // nothing past the buffer
  }
  char untouched[4] = "abc";
  dc_log_format(&r, untouched, 0);
  ck_assert_str_eq(untouched, "abc");
  dc_log_format(&r, NULL, 16);
}
END_TEST

typedef struct length_sink_t {
  size_t calls;
  size_t length;
  bool has_newline;
} length_sink_t;

static void length_sink(void* user_data, const dc_log_record_t* record) {
  length_sink_t* s = user_data;
  s->calls++;
  s->length = strlen(record->message);
  s->has_newline = strchr(record->message, '\n') != NULL;
}

START_TEST(test_log_long_message_is_truncated_not_dropped) {
  length_sink_t sink = {0};
  dc_context_params_t p = {0};
  p.log_level = DC_LOG_INFO;
  p.backends = dc_test_backends();
  p.log_fn = length_sink;
  p.log_user_data = &sink;
  dc_context_t* ctx = dc_test_context_new(&p);
  size_t calls = sink.calls;
  char big[8192];
  memset(big, 'm', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  dc_context_log(ctx, DC_LOG_ERROR, "big", "%s", big);
  ck_assert_uint_eq(sink.calls, calls + 1);
  ck_assert_uint_gt(sink.length, 500);
  ck_assert_uint_lt(sink.length, sizeof(big) - 1);
  ck_assert(!sink.has_newline);
  dc_context_release(ctx);
}
END_TEST

typedef struct logger_arg_t {
  dc_context_t* ctx;
  int id;
} logger_arg_t;

static void* logger_thread(void* arg) {
  logger_arg_t* a = arg;
  for (int i = 0; i < 50; ++i) {
    dc_context_log(a->ctx, DC_LOG_WARN, "thread", "t%d m%d", a->id, i);
  }
  return NULL;
}

START_TEST(test_log_sink_called_from_many_threads) {
  dc_test_log_t* log = dc_test_log_new();
  dc_context_params_t p = dc_test_log_params(log, DC_LOG_WARN);
  dc_context_t* ctx = dc_test_context_new(&p);
  size_t start = dc_test_log_count(log);
  logger_arg_t args[4];
  for (int i = 0; i < 4; ++i) args[i] = (logger_arg_t){ctx, i};
  dc_test_run_threads(4, logger_thread, args, sizeof(args[0]));
  ck_assert_uint_eq(dc_test_log_count(log), start + 200);
  ck_assert_int_ge(dc_test_log_find(log, start, "t3 m49"), 0);
  dc_context_release(ctx);
  dc_test_log_free(log);
}
END_TEST

static Suite* log_suite(void) {
  Suite* s = suite_create("log");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, env_fixture, env_fixture);
  tcase_add_test(core, test_log_level_names);
  tcase_add_test(core, test_log_level_parse_accepts_names_in_any_case);
  tcase_add_test(core, test_log_format_shape);
  tcase_add_test(core, test_log_format_level_letters);
  tcase_add_test(core, test_log_format_missing_fields);
  tcase_add_test(core, test_log_sink_receives_component_level_and_timestamp);
  tcase_add_test(core, test_log_level_filters_messages);
  tcase_add_test(core, test_log_off_silences_everything);
  tcase_add_test(core, test_log_context_reports_its_own_events);
  tcase_add_test(core, test_log_set_level_at_run_time);
  tcase_add_test(core, test_log_default_sink_writes_one_line_to_stderr);
  tcase_add_test(core, test_log_env_sets_the_level);
  tcase_add_test(core, test_log_default_level_is_warn);
  tcase_add_test(core, test_log_explicit_level_wins_over_env);
  suite_add_tcase(s, core);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, env_fixture, env_fixture);
  tcase_add_test(errors, test_log_level_parse_rejects_other_text);
  tcase_add_test(errors, test_log_env_malformed_is_an_error);
  tcase_add_test(errors, test_log_bad_level_in_params_is_an_error);
  tcase_add_test(errors, test_log_calls_with_bad_arguments_deliver_nothing);
  suite_add_tcase(s, errors);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, env_fixture, env_fixture);
  tcase_add_test(limits, test_log_format_truncates_to_the_buffer);
  tcase_add_test(limits, test_log_long_message_is_truncated_not_dropped);
  tcase_add_test(limits, test_log_sink_called_from_many_threads);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(log_suite)

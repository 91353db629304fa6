// check_metrics.c: dc_telemetry_openmetrics, the telemetry in the
// OpenMetrics text format: what it holds after known work, that every
// line is a well-formed family header or sample of a declared family,
// that it ends with "# EOF", and its snprintf contract.
// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <stdlib.h>

#include "kernel_fixture.h"

// The whole text, asserting success (the caller frees it).
static char* metrics(void) {
  size_t length = 0;
  DC_CK_OK(dc_telemetry_openmetrics(ctx, NULL, 0, &length));
  char* text = malloc(length + 1);
  ck_assert_ptr_nonnull(text);
  size_t again = 0;
  DC_CK_OK(dc_telemetry_openmetrics(ctx, text, length + 1, &again));
  ck_assert_uint_eq(again, length);
  ck_assert_uint_eq(strlen(text), length);
  return text;
}

static bool is_name_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == ':';
}

// Checks one sample line: NAME[{LABELS}] VALUE, NAME of a family a TYPE
// line declared (|families|, space-separated, each with a space after).
static void check_sample(const char* line, const char* families) {
  const char* p = line;
  while (is_name_char(*p)) ++p;
  ck_assert_msg(p > line, "no metric name: '%s'", line);
  char name[128];
  snprintf(name, sizeof(name), "%.*s", (int)(p - line), line);
  // The sample's family: the name less a suffix the family's type adds.
  static const char* const kSuffixes[] = {"_total", "_sum", "_count", ""};
  bool declared = false;
  for (size_t i = 0; i < 4 && !declared; ++i) {
    size_t n = strlen(name), s = strlen(kSuffixes[i]);
    if (n <= s || strcmp(name + n - s, kSuffixes[i]) != 0) continue;
    char family[140];
    snprintf(family, sizeof(family), " %.*s ", (int)(n - s), name);
    declared = strstr(families, family) != NULL;
  }
  ck_assert_msg(declared, "sample of an undeclared family: '%s'", line);
  if (*p == '{') {
    const char* close = strchr(p, '}');
    ck_assert_msg(close != NULL, "unclosed labels: '%s'", line);
    p = close + 1;
  }
  ck_assert_msg(*p == ' ', "no value: '%s'", line);
  char* end = NULL;
  strtod(p + 1, &end);
  ck_assert_msg(end != p + 1 && *end == '\0', "bad value: '%s'", line);
}

START_TEST(test_metrics_format_and_contents) {
  dc_program_t* p = build_on(dut, "m.cl",
                             "__kernel void scale(__global float* o) {"
                             " o[get_global_id(0)] *= 2.0f; }",
                             NULL);
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_F32, 64, "b");
  dc_arg_t a = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {64}};
  for (int i = 0; i < 3; ++i) {
    DC_CK_OK(dc_kernel_dispatch(kernel_of(p, "scale"), &grid, &a, 1));
  }
  char* text = metrics();
  DC_CK_STR_HAS(text, "dc_dispatches_total 3\n");
  DC_CK_STR_HAS(text, "# TYPE dc_kernel_duration_seconds summary\n");
  DC_CK_STR_HAS(text, "dc_kernel_duration_seconds_count{kernel=\"scale\"} 3\n");
  DC_CK_STR_HAS(text, "dc_kernel_duration_seconds{kernel=\"scale\","
                      "quantile=\"0.5\"} ");
  char line[160];
  snprintf(line, sizeof(line), "dc_device_health{device=\"%s\","
           "dc_device_health=\"healthy\"} 1\n", dc_device_name(dut));
  DC_CK_STR_HAS(text, line);
  snprintf(line, sizeof(line), "dc_device_memory_in_use_bytes{device=\"%s\"} ",
           dc_device_name(dut));
  DC_CK_STR_HAS(text, line);
  // Every line: a family header, a sample of a declared family, or the
  // final "# EOF".
  size_t length = strlen(text);
  ck_assert(length > 6 && strcmp(text + length - 6, "# EOF\n") == 0);
  char* families = calloc(1, length + 2);
  ck_assert_ptr_nonnull(families);
  strcpy(families, " ");
  for (char* l = strtok(text, "\n"); l != NULL; l = strtok(NULL, "\n")) {
    if (strncmp(l, "# TYPE ", 7) == 0) {
      char name[128], type[32];
      ck_assert_int_eq(sscanf(l + 7, "%127s %31s", name, type), 2);
      ck_assert_msg(strcmp(type, "counter") == 0 ||
                        strcmp(type, "gauge") == 0 ||
                        strcmp(type, "summary") == 0 ||
                        strcmp(type, "stateset") == 0,
                    "type '%s'", type);
      strcat(families, name);
      strcat(families, " ");
    } else if (strncmp(l, "# HELP ", 7) != 0 && strcmp(l, "# EOF") != 0) {
      check_sample(l, families);
    }
  }
  free(families);
  free(text);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

START_TEST(test_metrics_truncate_like_snprintf) {
  size_t full = 0;
  DC_CK_OK(dc_telemetry_openmetrics(ctx, NULL, 0, &full));
  char small[16];
  size_t length = 0;
  DC_CK_OK(dc_telemetry_openmetrics(ctx, small, sizeof(small), &length));
  ck_assert_uint_eq(length, full);
  ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
  ck_assert(strncmp(small, "# TYPE dc_dispa", sizeof(small) - 1) == 0);
}
END_TEST

START_TEST(test_metrics_reject_invalid_arguments) {
  size_t length = 0;
  char buffer[8];
  DC_CK_FAIL(dc_telemetry_openmetrics(NULL, buffer, 8, &length),
             DC_ERR_INVALID_ARGUMENT, "NULL context");
  DC_CK_FAIL(dc_telemetry_openmetrics(ctx, buffer, 8, NULL),
             DC_ERR_INVALID_ARGUMENT, "out_length");
  DC_CK_FAIL(dc_telemetry_openmetrics(ctx, NULL, 8, &length),
             DC_ERR_INVALID_ARGUMENT, "a NULL buffer of 8 bytes");
}
END_TEST

static Suite* metrics_suite(void) {
  Suite* s = dc_test_kernel_suite("metrics", "dc-check-metrics");
  TCase* core = dc_test_kernel_tcase(s, "core");
  tcase_add_test(core, test_metrics_format_and_contents);
  tcase_add_test(core, test_metrics_truncate_like_snprintf);
  tcase_add_test(core, test_metrics_reject_invalid_arguments);
  return s;
}

DC_CHECK_DEVICE_MAIN(metrics_suite)

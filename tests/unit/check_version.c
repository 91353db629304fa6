// check_version.c: the library reports the version its headers declare.
// SPDX-License-Identifier: MIT
#include "check_util.h"

START_TEST(test_version_matches_headers) {
  ck_assert_uint_eq(dc_version(), DC_VERSION);
  ck_assert_uint_eq(DC_VERSION, DC_VERSION_NUMBER(DC_VERSION_MAJOR,
                                                  DC_VERSION_MINOR,
                                                  DC_VERSION_PATCH));
}
END_TEST

START_TEST(test_version_string_spells_the_number) {
  char expected[32];
  snprintf(expected, sizeof(expected), "%d.%d.%d", DC_VERSION_MAJOR,
           DC_VERSION_MINOR, DC_VERSION_PATCH);
  ck_assert_str_eq(dc_version_string(), expected);
}
END_TEST

static Suite* version_suite(void) {
  Suite* s = suite_create("version");
  TCase* core = tcase_create("core");
  tcase_add_test(core, test_version_matches_headers);
  tcase_add_test(core, test_version_string_spells_the_number);
  suite_add_tcase(s, core);
  return s;
}

DC_CHECK_MAIN(version_suite)

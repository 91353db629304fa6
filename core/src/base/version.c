// version.c: the run-time library version.
// SPDX-License-Identifier: MIT
#include "dc/version.h"

#define DC_STR_(x) #x
#define DC_STR(x) DC_STR_(x)

unsigned dc_version(void) { return DC_VERSION; }

const char* dc_version_string(void) {
  return DC_STR(DC_VERSION_MAJOR) "." DC_STR(DC_VERSION_MINOR) "." DC_STR(
      DC_VERSION_PATCH);
}

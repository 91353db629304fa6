// dc/version.h: the library version, at compile time and at run time.
// SPDX-License-Identifier: MIT
#ifndef DC_VERSION_H_
#define DC_VERSION_H_

#include "dc/export.h"

DC_EXTERN_C_BEGIN

// Semantic version of the headers a program was compiled against. The ABI
// is stable within one major version.
#define DC_VERSION_MAJOR 0
#define DC_VERSION_MINOR 1
#define DC_VERSION_PATCH 0

// Packs a version into one comparable integer: 0xMMmmpp.
#define DC_VERSION_NUMBER(major, minor, patch) \
  (((major) << 16) | ((minor) << 8) | (patch))
#define DC_VERSION \
  DC_VERSION_NUMBER(DC_VERSION_MAJOR, DC_VERSION_MINOR, DC_VERSION_PATCH)

// Returns the version of the library linked at run time, as DC_VERSION does
// for the headers. A host can compare both to detect a mismatched install.
DC_API unsigned dc_version(void);

// Returns the run-time version as "major.minor.patch". The string is static.
DC_API const char* dc_version_string(void);

DC_EXTERN_C_END

#endif  // DC_VERSION_H_

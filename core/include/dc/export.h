// dc/export.h: symbol visibility and C++ linkage macros shared by all headers.
// SPDX-License-Identifier: MIT
#ifndef DC_EXPORT_H_
#define DC_EXPORT_H_

// DC_API marks every public symbol. The library is built with hidden
// visibility by default, so anything without DC_API stays internal.
#if defined(_WIN32)
#define DC_API __declspec(dllexport)
#else
#define DC_API __attribute__((visibility("default")))
#endif

// Wraps declarations so C++ hosts link against the C symbols.
#ifdef __cplusplus
#define DC_EXTERN_C_BEGIN extern "C" {
#define DC_EXTERN_C_END }
#else
#define DC_EXTERN_C_BEGIN
#define DC_EXTERN_C_END
#endif

// Marks printf-like functions so the compiler checks their arguments.
#if defined(__GNUC__) || defined(__clang__)
#define DC_PRINTF_LIKE(fmt_index, first_arg) \
  __attribute__((format(printf, fmt_index, first_arg)))
#else
#define DC_PRINTF_LIKE(fmt_index, first_arg)
#endif

#endif  // DC_EXPORT_H_

// cpu_compile.h: running the system C compiler for CPU kernels.
// SPDX-License-Identifier: MIT
#ifndef DC_CPU_COMPILE_H_
#define DC_CPU_COMPILE_H_

#include "dc/backend.h"
#include "internal.h"

// Writes what identifies |compiler| for the compile cache (the output of
// `--version` and `-dumpmachine`) into |out|. The answer is kept in
// |cache_dir| (NULL or "off": not kept) for as long as the compiler's file
// does not change.
// Returns DC_ERR_UNAVAILABLE, saying why, if the compiler cannot be run.
DC_INTERNAL dc_status_t dc__cpu_compiler_identify(const char* compiler,
                                                  const char* cache_dir,
                                                  char* out, size_t size);

// Compiles the C source |code| into the shared object |so_path|, with
// flags that follow |build|'s: compiled with them, linked without them,
// so that fast math never links a start file that changes the loading
// thread's floating-point mode. The compiler's diagnostics about the
// user's source (through #line) are added to |build|'s log; |allocator|
// holds them meanwhile.
// Returns DC_ERR_COMPILE when the source does not compile,
// DC_ERR_UNAVAILABLE when the compiler cannot be run.
DC_INTERNAL dc_status_t dc__cpu_compile(const char* compiler,
                                        const char* work_dir,
                                        const char* code, size_t length,
                                        dc_program_build_t* build,
                                        dc_allocator_t allocator,
                                        const char* so_path);

#endif  // DC_CPU_COMPILE_H_

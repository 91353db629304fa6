// replay_util.h: what the fuzz targets' replay programs (replay_main.c,
// lua_replay_main.c) share: reading seed files in a stable order, and the
// random generator their deterministic mutations draw from. A failure to
// read or to allocate ends the program with status 2.
// SPDX-License-Identifier: MIT
#ifndef DC_TESTS_FUZZ_REPLAY_UTIL_H_
#define DC_TESTS_FUZZ_REPLAY_UTIL_H_

#include <stddef.h>
#include <stdint.h>

// |p|, or the end of the program when it is NULL (out of memory).
void* replay_checked(void* p);

// The bytes of file |path| (malloc'd; *|size| set), or the end of the
// program when it cannot be read.
uint8_t* replay_read_file(const char* path, size_t* size);

// The regular files of directory |dir| whose names end in |suffix| (NULL:
// any) and do not start with '.', as "<dir>/<name>" in name order
// (malloc'd strings in a malloc'd array, *|count| of them).
char** replay_list_dir(const char* dir, const char* suffix, size_t* count);

// xorshift64*: the next number of the series in *|state| (never 0).
uint64_t replay_next_random(uint64_t* state);

#endif  // DC_TESTS_FUZZ_REPLAY_UTIL_H_

// bench_util.h: small helpers the benchmark programs share (allocation,
// part filters, temporary directories, waits for an idle process, dc
// programs and buffers).
//
// Errors that leave a benchmark nothing sensible to do (out of memory, no
// temporary directory) print a line prefixed with the program's name and
// abort.
// SPDX-License-Identifier: MIT
#ifndef DC_BENCH_UTIL_H_
#define DC_BENCH_UTIL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc/dc.h"
#include "harness.h"

// |bytes| of memory aligned to 64 bytes (a cache line, so that host
// buffers start where a vector load does), or abort.
void* bench_xmalloc(size_t bytes);

// |count| zeroed elements of |bytes| each, or abort.
void* bench_xcalloc(size_t count, size_t bytes);

// Whether part |part| is to run: true when the environment variable
// |env| (e.g. "BENCH_STREAMS") is unset or empty, or when its
// comma-separated list names |part| exactly.
bool bench_want_part(const char* env, const char* part);

// Threads in the process now (from /proc/self/status), or -1.
int bench_thread_count(void);

// The value of the environment variable |name|, or "(unset)", for notes.
const char* bench_env_or(const char* name);

// Makes a fresh private directory $TMPDIR/dc-bench-<tag>-XXXXXX (/tmp
// without TMPDIR) into |out|, or aborts.
void bench_make_temp_dir(char* out, size_t size, const char* tag);

// Removes |dir| and everything under it (links are not followed).
void bench_remove_tree(const char* dir);

// Waits until the process is idle (bench_quiesce); the first time it is
// not within 500 ms, notes that under |name| and sets |*warned|, so a
// row says it once.
void bench_settle(const char* name, bool* warned);

// OpenCL C sources that more than one benchmark builds (with dc, and with
// pocl where it is the baseline): "empty", a kernel with no arguments and
// no body, and "vadd", c[i] = a[i] + b[i] over float buffers.
extern const char bench_empty_source[];
extern const char bench_vadd_source[];

// dc_program_create() of |source| under |name|; prints dc's error and
// aborts on a failure (a build error is the engine's, not the
// benchmark's).
dc_program_t* bench_dc_build(dc_device_t* dev, const char* source,
                             const char* name);

// The kernel |name| of |p|, or abort.
dc_kernel_t* bench_dc_find(dc_program_t* p, const char* name);

// A buffer of |n| elements of |dtype| and, in |*host| unless |host| is
// NULL, its host pointer.
dc_buffer_t* bench_dc_buffer(dc_device_t* dev, dc_dtype_t dtype, size_t n,
                             const char* label, void** host);

// Runs the cases of a row whose operations are too slow for calibrated
// batches: one untimed call of each, then |reps| rounds, each timing
// body(arg, |calls|) of every case in turn after a wait for an idle
// process (bench_settle). A sample is that time divided by |calls| and by
// |units|[k] (kernels per call, nodes per replay, ...). Fills in the
// cases' results and prints their rows, as bench_run_group() does.
void bench_run_sampled(const char* name, bench_case_t* cases, int count,
                       int reps, uint64_t calls, const double* units);

#endif  // DC_BENCH_UTIL_H_

// runner.h: what the files of the dclua runner share.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_RUNNER_H_
#define DCLUA_RUNNER_H_

#include <stdio.h>

#include "dclua.h"

// Reads statements from standard input and runs them in |engine| until
// the end of the input, printing the values of expressions as the stock
// interpreter does (repl.c). Prompts and a banner only on a terminal.
void dclua_repl(dclua_engine_t* engine);

// Prints the devices of |context| and their capabilities (report.c).
void dclua_print_devices(dc_context_t* context, FILE* out);

// Prints the telemetry counters of |context| and the time of each kernel
// that ran (report.c).
void dclua_print_stats(dc_context_t* context, FILE* out);

#endif  // DCLUA_RUNNER_H_

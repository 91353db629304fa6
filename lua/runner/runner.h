// runner.h: what the files of the dclua runner share.
// SPDX-License-Identifier: MIT
#ifndef DCLUA_RUNNER_H_
#define DCLUA_RUNNER_H_

#include <stdbool.h>
#include <stdio.h>

#include "dclua.h"

// Reads statements from standard input and runs them in |engine| until
// the end of the input, printing the values of expressions as the stock
// interpreter does (repl.c). Prompts and a banner only on a terminal.
// Returns the exit status: 0 at the end of the input, 130 after two
// Ctrl-C in a row at the prompt.
int dclua_repl(dclua_engine_t* engine);

// Ctrl-C (signals.c). install: handle SIGINT for the state |L| and
// |context| (both outlive the handler until uninstall). run_begin and
// run_end bracket every chunk the runner runs; prompt_begin and
// prompt_end every read at the REPL prompt, after which
// prompt_interrupted says whether a Ctrl-C came.
void dclua_signals_install(lua_State* L, dc_context_t* context);
void dclua_signals_uninstall(void);
void dclua_signals_run_begin(void);
void dclua_signals_run_end(void);
void dclua_signals_prompt_begin(void);
void dclua_signals_prompt_end(void);
bool dclua_signals_prompt_interrupted(void);

// Prints the devices of |context| and their capabilities (report.c).
void dclua_print_devices(dc_context_t* context, FILE* out);

// Prints the telemetry counters of |context| and the time of each kernel
// that ran (report.c).
void dclua_print_stats(dc_context_t* context, FILE* out);

// Writes the telemetry as OpenMetrics text to |path| (--metrics); on a
// failure says why on stderr and returns false.
bool dclua_write_metrics(dc_context_t* context, const char* path);

#endif  // DCLUA_RUNNER_H_

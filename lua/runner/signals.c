// signals.c: Ctrl-C (SIGINT) in the runner, as the stock interpreter
// handles it, plus the engine work the script started.
//
// While a chunk runs, the first Ctrl-C sets a hook that raises
// "interrupted!" at the chunk's next Lua call, return or instruction (a
// normal runtime error, so the traceback, --trace and --stats follow), and
// interrupts the context's checked kernels so a long dispatch ends too. A
// second Ctrl-C before the first took effect (a wait in C that never
// returns) ends the process with the default action. At a REPL prompt a
// Ctrl-C only sets a flag the prompt reads (repl.c). Elsewhere (setting up,
// writing the trace) the default action applies.
// SPDX-License-Identifier: MIT
#include <lauxlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "runner.h"

enum { MODE_IDLE, MODE_RUNNING, MODE_PROMPT };

static lua_State* volatile g_state;
static dc_context_t* volatile g_context;
static volatile sig_atomic_t g_mode = MODE_IDLE;
static volatile sig_atomic_t g_pending;  // a Ctrl-C the hook has not seen
static volatile sig_atomic_t g_prompt_interrupted;
// The hook the interrupt replaced (the engine's time limit), put back
// when it fires or when the run ends.
static lua_Hook g_saved_hook;
static int g_saved_mask;
static int g_saved_count;
static bool g_installed;
// The thread that runs Lua: a SIGINT the kernel gives an engine thread
// goes on to it, so the hook is set where the state runs.
static pthread_t g_main_thread;

static void interrupt_hook(lua_State* L, lua_Debug* ar) {
  (void)ar;
  lua_sethook(L, g_saved_hook, g_saved_mask, g_saved_count);
  g_pending = 0;
  luaL_error(L, "interrupted!");
}

static void on_sigint(int sig) {
  if (!pthread_equal(pthread_self(), g_main_thread)) {
    pthread_kill(g_main_thread, sig);
    return;
  }
  if (g_mode == MODE_PROMPT) {
    g_prompt_interrupted = 1;
    return;
  }
  if (g_mode == MODE_RUNNING && !g_pending) {
    g_pending = 1;
    lua_State* L = g_state;
    if (lua_gethook(L) != interrupt_hook) {
      g_saved_hook = lua_gethook(L);
      g_saved_mask = lua_gethookmask(L);
      g_saved_count = lua_gethookcount(L);
    }
    lua_sethook(L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT,
                1);
    dc_context_interrupt(g_context);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void dclua_signals_install(lua_State* L, dc_context_t* context) {
  g_state = L;
  g_context = context;
  g_main_thread = pthread_self();
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a read at the prompt returns EINTR
  g_installed = sigaction(SIGINT, &action, NULL) == 0;
}

void dclua_signals_uninstall(void) {
  g_mode = MODE_IDLE;
  if (g_installed) signal(SIGINT, SIG_DFL);
  g_installed = false;
  g_state = NULL;
}

void dclua_signals_run_begin(void) {
  g_pending = 0;
  g_mode = MODE_RUNNING;
}

void dclua_signals_run_end(void) {
  g_mode = MODE_IDLE;
  // A Ctrl-C the chunk ended before seeing must not stop the next one.
  if (g_state != NULL && lua_gethook(g_state) == interrupt_hook) {
    lua_sethook(g_state, g_saved_hook, g_saved_mask, g_saved_count);
  }
  g_pending = 0;
}

void dclua_signals_prompt_begin(void) {
  g_prompt_interrupted = 0;
  g_mode = MODE_PROMPT;
}

void dclua_signals_prompt_end(void) { g_mode = MODE_IDLE; }

bool dclua_signals_prompt_interrupted(void) {
  return g_prompt_interrupted != 0;
}

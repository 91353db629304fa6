// check_kernel_injection.c: the kernel language as a trust boundary.
// Kernels come from scripts the engine does not trust, so nothing a
// program or its build options say may reach the host compiler as foreign
// text, call host code, or reach the engine's own names. Each route in is
// tried here, with its exact outcome:
//
//  - what the language refuses (inline assembly, extern, calls of the C
//    library and compiler built-ins, _Pragma, #include, unknown
//    attributes, GNU extensions, integers made into pointers, the engine's
//    internal names, build options the engine does not know) fails with
//    DC_ERR_COMPILE and the front end's own message at the user's line and
//    column, which names neither the C compiler nor anything internal;
//  - what it accepts with names the host or the generated code also uses
//    (system, memcpy, _wi, _args, dc_len, DC_IDX, ...) compiles and
//    computes the right values, in every execution mode of the CPU;
//  - program names with quotes, backslashes, newlines or 500 bytes build,
//    run, and reach messages only made safe;
//  - a macro bomb and 30,000 nested parentheses stop at a named limit;
//  - recursion, and chains of calls whose private memory would overflow a
//    work-item's stack, are refused;
//  - no program of the kernel corpus (tests/kernels) makes the host
//    compiler fail (DC_ERR_INTERNAL), with or without bounds checking.
// SPDX-License-Identifier: MIT
#include <dirent.h>

#include "kernel_fixture.h"
#include "kernel_manifest.h"

#ifndef DC_KERNEL_CORPUS_DIR
#error "DC_KERNEL_CORPUS_DIR must name the tests/kernels directory"
#endif

#ifndef COUNT_OF
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#endif

//===-- Helpers (the fixture is kernel_fixture.h's) ---------------------===//

// What a message would show if a program had reached the host compiler
// or the engine's insides: the compiler, its temporary files, the
// generated code's names (dcu_ spells user names there; dc__, _wi and
// dc_h_ are the engine's) and DC_ERR_INTERNAL's words.
static const char* const kForeign[] = {
    "C compiler", "gcc",   "cc'",       "NVRTC",    "nvrtc",
    "internal",   "bug of the engine",  "dclua-build", "kernel.c",
    "prelude",    "dcu_",  "dc__",      "_wi",      "dc_h_",
};

// Asserts that |text| shows nothing of kForeign. |allowed| (NULL: none)
// is an identifier of the user's own that the message may quote ('_wi'):
// its quoted occurrences are skipped.
static void expect_nothing_foreign(const char* text, const char* allowed) {
  char* copy = strdup(text);
  ck_assert_ptr_nonnull(copy);
  if (allowed != NULL) {
    char quoted[128];
    snprintf(quoted, sizeof(quoted), "'%s'", allowed);
    for (char* at = strstr(copy, quoted); at != NULL;
         at = strstr(at, quoted)) {
      memset(at, '#', strlen(quoted));
    }
  }
  for (size_t i = 0; i < COUNT_OF(kForeign); ++i) {
    ck_assert_msg(strstr(copy, kForeign[i]) == NULL,
                  "message '%s' shows '%s'", text, kForeign[i]);
  }
  free(copy);
}

// Asserts that building |marked| (DC_TEST_MARK removed) as "inj.cl" with
// |options| fails with DC_ERR_COMPILE and no program, that the first
// error is the front end's at the MARK ("inj.cl:L:C: error: "), that it
// says |message|, and that it shows nothing foreign (but |allowed|).
static void expect_refused(const char* marked, const char* options,
                           const char* message, const char* allowed) {
  dc_test_expect_error_at("inj.cl", marked, options, message);
  expect_nothing_foreign(dc_last_error(), allowed);
}

static dc_buffer_t* int_buffer(size_t n) {
  dc_buffer_t* b = dc_test_buffer_new(cpu, DC_DTYPE_I32, n, "inj");
  fill_bytes(b, 0xA5);
  return b;
}

static void dispatch1(dc_kernel_t* k, size_t global, size_t local,
                      const dc_arg_t* args, size_t n) {
  dc_dispatch_t grid = {.dims = 1};
  grid.global[0] = global;
  grid.local[0] = local;
  DC_CK_OK(dc_kernel_dispatch(k, &grid, args, n));
}

//===-- refused: host code ----------------------------------------------===//

// One way in that the front end must refuse: the source with its MARK,
// the build options, what the error says, and the user's own name the
// message may quote.
typedef struct route_t {
  const char* marked;
  const char* options;
  const char* message;
  const char* allowed;
} route_t;

#define KERNEL_OPEN "__kernel void k(__global int* o) {\n"

// Inline assembly, declarations of host functions, and calls of the C
// library and of compiler built-ins that no program declares.
static const route_t kHostCode[] = {
    {KERNEL_OPEN "  o[0] = 1;\n  `__asm__ volatile(\"syscall\");\n}\n", NULL,
     "inline assembly is not supported", NULL},
    {KERNEL_OPEN "  `asm(\"nop\");\n  o[0] = 1;\n}\n", NULL,
     "inline assembly is not supported", NULL},
    {KERNEL_OPEN "  o[0] = 1; `__asm(\"int3\");\n}\n", NULL,
     "inline assembly is not supported", NULL},
    {"`asm(\".globl dc_k_k_run\");\n" KERNEL_OPEN "  o[0] = 1;\n}\n", NULL,
     "inline assembly is not supported", NULL},
    {"`extern int system(const char*);\n" KERNEL_OPEN
     "  o[0] = system(0);\n}\n",
     NULL, "'extern' is not supported", NULL},
    // A prototype with no definition: nothing outside the program links.
    {"int `system(const char* command);\n" KERNEL_OPEN
     "  o[0] = system(0);\n}\n",
     NULL, "function 'system' is called but never defined", "system"},
    {KERNEL_OPEN "  o[0] = 1;\n  `system(\"touch /tmp/dc-pwned\");\n}\n", NULL,
     "call to undeclared function 'system'", "system"},
    {KERNEL_OPEN "  if (o[0]) `exit(1);\n}\n", NULL,
     "call to undeclared function 'exit'", "exit"},
    {KERNEL_OPEN "  `memcpy(o, o + 1, 4);\n}\n", NULL,
     "call to undeclared function 'memcpy'", "memcpy"},
    {KERNEL_OPEN "  if (o[0] < 0) `__builtin_trap();\n}\n", NULL,
     "call to undeclared function '__builtin_trap'", "__builtin_trap"},
    {KERNEL_OPEN "  `__builtin_memcpy(o, o + 1, 4);\n}\n", NULL,
     "call to undeclared function '__builtin_memcpy'", "__builtin_memcpy"},
    {KERNEL_OPEN "  o[0] = `printf(1);\n}\n", NULL,
     "call to undeclared function 'printf'", "printf"},
};

START_TEST(test_kernel_injection_host_code_refused) {
  const route_t* r = &kHostCode[_i];
  expect_refused(r->marked, r->options, r->message, r->allowed);
}
END_TEST

//===-- refused: the preprocessor ---------------------------------------===//

static const route_t kPreprocessor[] = {
    {KERNEL_OPEN "  `_Pragma(\"GCC diagnostic ignored \\\"-Wall\\\"\") "
                 "o[0] = 1;\n}\n",
     NULL, "_Pragma is not supported", NULL},
    // Through a macro, where it would be made by expansion.
    {"#define QUIET _Pragma(\"GCC visibility push(default)\")\n" KERNEL_OPEN
     "  `QUIET o[0] = 1;\n}\n",
     NULL, "_Pragma is not supported", NULL},
    {"#`include \"/etc/passwd\"\n" KERNEL_OPEN "  o[0] = 1;\n}\n", NULL,
     "#include is not supported", NULL},
    {"#`include <stdio.h>\n" KERNEL_OPEN "  o[0] = 1;\n}\n", NULL,
     "#include is not supported", NULL},
    {"#`include_next <stdlib.h>\n" KERNEL_OPEN "  o[0] = 1;\n}\n", NULL,
     "#include_next is not supported", NULL},
    // A file name in #line would reach the #line of generated code.
    {"#line 7 `\"x.c\"\n" KERNEL_OPEN "  o[0] = 1;\n}\n", NULL,
     "#line with a file name is not supported", NULL},
    // A '#' made by a macro is not a directive.
    {"#define HASH #\n" KERNEL_OPEN "  `HASH include <stdio.h>\n  o[0] = 1;\n"
                                    "}\n",
     NULL, "stray '#' in program", NULL},
};

START_TEST(test_kernel_injection_preprocessor_refused) {
  const route_t* r = &kPreprocessor[_i];
  expect_refused(r->marked, r->options, r->message, r->allowed);
}
END_TEST

//===-- refused: attributes and GNU extensions --------------------------===//

static const route_t kExtensions[] = {
    {"__attribute__((`constructor)) void f(void) {}\n" KERNEL_OPEN
     "  o[0] = 1;\n}\n",
     NULL, "unknown attribute 'constructor'", NULL},
    {"__attribute__((`section(\".init\"))) void f(void) {}\n" KERNEL_OPEN
     "  o[0] = 1;\n}\n",
     NULL, "unknown attribute 'section'", NULL},
    {"void f(int* p) { *p = 0; }\n" KERNEL_OPEN
     "  int x __attribute__((`cleanup(f))) = 1;\n  o[0] = x;\n}\n",
     NULL, "unknown attribute 'cleanup'", NULL},
    {KERNEL_OPEN "  o[0] = (`{ int x = 1; x; });\n}\n", NULL,
     "expected an expression before '{'", NULL},
    {KERNEL_OPEN "  `typeof(o[0]) x = 1;\n  o[0] = x;\n}\n", NULL,
     "'typeof' is a GNU extension and is not supported", NULL},
    {KERNEL_OPEN "  `__typeof__(o[0]) x = 1;\n  o[0] = x;\n}\n", NULL,
     "'__typeof__' is a GNU extension and is not supported", NULL},
    // A nested function: a declaration that goes on as a definition.
    {KERNEL_OPEN "  int twice`(int a) { return 2 * a; }\n  o[0] = twice(1);\n"
                 "}\n",
     NULL, "expected ';' before '('", NULL},
    // Labels as values.
    {KERNEL_OPEN "  __private void* at = `&&there;\nthere:\n  o[0] = 1;\n}\n",
     NULL, "expected an expression before '&&'", NULL},
    {KERNEL_OPEN "  switch (o[0]) {\n    case 1 `... 3: o[0] = 2; break;\n"
                 "  }\n}\n",
     NULL, "expected ':' before '...'", NULL},
    {KERNEL_OPEN "  `__int128 x = 1;\n  o[0] = (int)x;\n}\n", NULL,
     "use of undeclared identifier '__int128'", "__int128"},
    {KERNEL_OPEN "  long `long x = 1;\n  o[0] = (int)x;\n}\n", NULL,
     "'long long' is not a type of OpenCL C", NULL},
    {KERNEL_OPEN "  `__extension__ int x = 1;\n  o[0] = x;\n}\n", NULL,
     "'__extension__' is a GNU extension and is not supported", NULL},
};

START_TEST(test_kernel_injection_extensions_refused) {
  const route_t* r = &kExtensions[_i];
  expect_refused(r->marked, r->options, r->message, r->allowed);
}
END_TEST

//===-- refused: forged pointers ----------------------------------------===//

static const route_t kForgedPointers[] = {
    {KERNEL_OPEN "  __global int* p = `(__global int*)0x41414141;\n"
                 "  p[0] = 1;\n}\n",
     NULL, "cannot convert an integer to a pointer", NULL},
    {KERNEL_OPEN "  uintptr_t a = 0x41414141;\n"
                 "  __global int* p = `(__global int*)a;\n  p[0] = 1;\n}\n",
     NULL, "cannot convert an integer to a pointer", NULL},
    // A real address, moved as an integer, does not come back either.
    {KERNEL_OPEN "  uintptr_t a = (uintptr_t)o + 4096;\n"
                 "  *`(__global int*)a = 1;\n}\n",
     NULL, "cannot convert an integer to a pointer", NULL},
    {KERNEL_OPEN "  intptr_t a = -8;\n  __global int* p = o;\n  p = `a;\n"
                 "  p[0] = 1;\n}\n",
     NULL, "cannot convert an integer to a pointer", NULL},
};

START_TEST(test_kernel_injection_forged_pointers_refused) {
  const route_t* r = &kForgedPointers[_i];
  expect_refused(r->marked, r->options, r->message, r->allowed);
}
END_TEST

//===-- refused: stack bombs --------------------------------------------===//

// A work-item's stack (a CPU fiber's: 64 KiB, no guard page) must not
// overflow into the engine's memory: no recursion, and no chain of calls
// whose private memory passes the limit.
static const route_t kStackBombs[] = {
    {"int bomb(int n) {\n  int pad[1000];\n  pad[n % 1000] = n;\n"
     "  barrier(CLK_LOCAL_MEM_FENCE);\n  return pad[0] + `bomb(n + 1);\n}\n"
     KERNEL_OPEN "  o[0] = bomb(o[1]);\n}\n",
     NULL, "recursion is not allowed in OpenCL C (bomb calls bomb)", NULL},
    // Copies of a 12 KB struct passed down: the copy a call makes counts
    // in the caller, with the parameter it already holds.
    {"typedef struct big { int v[3000]; } big_t;\n"
     "int h3(big_t b) { barrier(CLK_LOCAL_MEM_FENCE); return b.v[0]; }\n"
     "int h2(big_t b) { return `h3(b); }\n"
     "int h1(big_t b) { return h2(b); }\n"
     "__kernel void k(__global int* o) {\n  big_t b;\n  b.v[0] = o[1];\n"
     "  o[0] = h1(b);\n}\n",
     NULL, "private memory limit (16384 bytes per function) exceeded by 'h3'",
     NULL},
    // Below the limit in every function, over it along the chain.
    {"typedef struct mid { int v[1500]; } mid_t;\n"
     "int h3(mid_t b) { barrier(CLK_LOCAL_MEM_FENCE); return b.v[0]; }\n"
     "int h2(mid_t b) { return h3(b); }\n"
     "int h1(mid_t b) { return h2(b); }\n"
     "__kernel void `k(__global int* o) {\n  mid_t b;\n  b.v[0] = o[1];\n"
     "  o[0] = h1(b);\n}\n",
     NULL, "exceeded by kernel 'k': 42200 bytes along k calls h1 calls h2 "
     "calls h3", NULL},
    // Sizes that overflow 32 bits would count as small.
    {"__constant char `table[65536][65536] = {1};\n" KERNEL_OPEN
     "  o[0] = table[1][2];\n}\n",
     NULL, "array too large: 4294967296 bytes, over the limit of 1073741824 "
     "bytes for one object", NULL},
    {"typedef `struct { int a[16000][16000]; int b[16000][16000]; } two_t;\n"
     KERNEL_OPEN "  o[0] = 1;\n}\n",
     NULL, "struct too large: over the limit", NULL},
};

START_TEST(test_kernel_injection_stack_bombs_refused) {
  const route_t* r = &kStackBombs[_i];
  expect_refused(r->marked, r->options, r->message, r->allowed);
}
END_TEST

//===-- refused: the engine's names -------------------------------------===//

// The names of the generated code and its prelude are not the program's:
// used undeclared, each is an undeclared identifier like any other.
static const char* const kInternalNames[] = {
    "_wi",     "_args",     "dc_h_0", "dc_fault", "dc_len",   "DC_IDX",
    "_p",      "_launch",   "_scratch", "_localmem", "dc__wi_t", "dc__fg",
    "dc__sink", "DC_FIBER_STACK", "dc_k_k_run",
};

START_TEST(test_kernel_injection_internal_names_undeclared) {
  const char* name = kInternalNames[_i];
  char marked[256], message[128];
  snprintf(marked, sizeof(marked), KERNEL_OPEN "  o[0] = 1 + `%s;\n}\n",
           name);
  snprintf(message, sizeof(message), "use of undeclared identifier '%s'",
           name);
  expect_refused(marked, NULL, message, name);
}
END_TEST

//===-- refused: build options ------------------------------------------===//

// A valid program, so that only the options can fail it.
static const char kValid[] = KERNEL_OPEN "  o[get_global_id(0)] = 7;\n}\n";

typedef struct option_route_t {
  const char* options;
  const char* message;
} option_route_t;

// Options of gcc that would load code, read files or change what is
// linked, and -D values that would carry a directive. Options are words
// separated by white space: a newline in a -D value ends the word, and
// what follows is an option of its own.
static const option_route_t kOptions[] = {
    {"-fplugin=x.so", "unknown build option '-fplugin=x.so'"},
    {"-include /etc/passwd", "unknown build option '-include'"},
    {"-I/tmp", "build option -I is not supported"},
    {"-I /tmp", "build option -I is not supported"},
    {"-Wl,-rpath,/tmp", "unknown build option '-Wl,-rpath,/tmp'"},
    {"-o /tmp/x", "unknown build option '-o'"},
    {"-DX=1 -fno-stack-protector",
     "unknown build option '-fno-stack-protector'"},
    {"-DX=1\n#include </etc/passwd>", "unknown build option '#include'"},
    {"-DX=1\r#define system exit", "unknown build option '#define'"},
    {"-DX=#include", "build option '-DX=#include': a value cannot contain "
                     "'#'"},
    {"-DX=a##b", "build option '-DX=a##b': a value cannot contain '#'"},
    {"-DX=\\", "build option '-DX=\\': the value is not valid tokens"},
    {"-DX=\"unterminated", "the value is not valid tokens"},
    {"-D__FILE__=1", "build option -D cannot define '__FILE__'"},
    {"-D_Pragma=x", "build option -D cannot define '_Pragma'"},
    {"-D1x=2", "'1x' is not a macro name"},
    {"-cl-std=CL2.0", "build option '-cl-std=CL2.0' names an unknown "
                      "version"},
};

START_TEST(test_kernel_injection_build_options_refused) {
  const option_route_t* r = &kOptions[_i];
  dc_program_t* p = SENTINEL;
  dc_status_t st = try_build(cpu, "inj.cl", kValid, r->options, &p);
  ck_assert_msg(st == DC_ERR_COMPILE, "options '%s': got %s (%s)",
                r->options, dc_status_name(st), dc_last_error());
  ck_assert_ptr_null(p);
  // Options have no place in the source: the message names the program.
  const char* want = "dc_program_create: inj.cl: error: ";
  ck_assert_msg(strncmp(dc_last_error(), want, strlen(want)) == 0,
                "message '%s' does not start with '%s'", dc_last_error(),
                want);
  ck_assert_msg(strstr(dc_last_error(), r->message) != NULL,
                "options '%s': message '%s' lacks '%s'", r->options,
                dc_last_error(), r->message);
  ck_assert_msg(strchr(dc_last_error(), '\n') == NULL &&
                    strchr(dc_last_error(), '\r') == NULL,
                "message '%s' holds a line end", dc_last_error());
  expect_nothing_foreign(dc_last_error(), NULL);
}
END_TEST

// -D may name a host function: it is a macro like any other, expanding
// to a name the program must declare.
START_TEST(test_kernel_injection_define_named_like_host_function) {
  dc_program_t* p = build("inj.cl",
                          "int twice(int x) { return 2 * x; }\n" KERNEL_OPEN
                          "  o[get_global_id(0)] = system(21) + memcpy;\n"
                          "}\n",
                          "-Dsystem=twice -Dmemcpy=1");
  dc_buffer_t* b = int_buffer(2);
  dc_arg_t a = dc_arg_buffer(b);
  dispatch1(kernel_of(p, "k"), 2, 0, &a, 1);
  const int32_t* o = host(b);
  ck_assert_int_eq(o[0], 43);
  ck_assert_int_eq(o[1], 43);
  dc_buffer_release(b);
  dc_program_release(p);
  // Expanding to a host function is a call of an undeclared one, at the
  // place of the macro.
  expect_refused(KERNEL_OPEN "  o[0] = `system(1);\n}\n", "-Dsystem=exit",
                 "call to undeclared function 'exit'", "exit");
  expect_refused(KERNEL_OPEN "  o[0] = 1;\n  `CALL;\n}\n",
                 "-DCALL=__asm__(\"syscall\")",
                 "inline assembly is not supported", NULL);
}
END_TEST

//===-- accepted: what never reaches the host compiler ------------------===//

// #pragma GCC ... is not the language's: it is ignored with a warning and
// never reaches gcc, which would otherwise refuse every later use of the
// poisoned names.
START_TEST(test_kernel_injection_pragma_gcc_poison_ignored) {
  dc_program_t* p = build("inj.cl",
                          "#pragma GCC poison o system get_global_id\n"
                          "#pragma GCC system_header\n" KERNEL_OPEN
                          "  o[get_global_id(0)] = 5;\n}\n",
                          NULL);
  const char* log = dc_program_build_log(p);
  DC_CK_STR_HAS(log, "inj.cl:1:9: warning: unknown #pragma 'GCC' ignored");
  DC_CK_STR_HAS(log, "inj.cl:2:9: warning: unknown #pragma 'GCC' ignored");
  expect_nothing_foreign(log, NULL);
  dc_buffer_t* b = int_buffer(3);
  dc_arg_t a = dc_arg_buffer(b);
  dispatch1(kernel_of(p, "k"), 3, 0, &a, 1);
  const int32_t* o = host(b);
  for (int i = 0; i < 3; ++i) ck_assert_int_eq(o[i], 5);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

// Integer division by zero and INT_MIN / -1 are undefined in OpenCL C,
// but on x86 they raise SIGFPE, which would end the host process: the CPU
// device divides by 1 instead, for scalars and vectors, / and %, and the
// compound assignments.
START_TEST(test_kernel_injection_division_traps_nothing) {
  dc_program_t* p = build(
      "inj.cl",
      "__kernel void k(__global int* o, int zero, int minus_one) {\n"
      "  int lo = (int)0x80000000;\n"
      "  o[0] = 7 / zero; o[1] = 7 % zero;\n"
      "  o[2] = lo / minus_one; o[3] = lo % minus_one;\n"
      "  long l = (long)0x8000000000000000UL;\n"
      "  o[4] = (int)((l / (long)minus_one) >> 32);\n"
      "  int4 v = (int4)(lo, 5, 9, -9) / (int4)(minus_one, zero, 2, 1);\n"
      "  o[5] = v.x; o[6] = v.y; o[7] = v.z; o[8] = v.w;\n"
      "  int q = 11; q /= zero; o[9] = q; q %= zero; o[10] = q;\n"
      "  uint u = 12u; o[11] = (int)(u / (uint)zero);\n"
      "}\n",
      NULL);
  dc_buffer_t* b = int_buffer(12);
  int32_t zero = 0, minus_one = -1;
  dc_arg_t a[3] = {dc_arg_buffer(b), dc_arg_value(DC_DTYPE_I32, 1, &zero),
                   dc_arg_value(DC_DTYPE_I32, 1, &minus_one)};
  dispatch1(kernel_of(p, "k"), 1, 0, a, 3);
  const int32_t* o = host(b);
  const int32_t want[12] = {7, 0, INT32_MIN, 0, INT32_MIN, INT32_MIN, 5, 4,
                            -9, 11, 0, 12};
  for (int i = 0; i < 12; ++i) {
    ck_assert_msg(o[i] == want[i], "o[%d] = %d, expected %d", i, o[i],
                  want[i]);
  }
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

// With bounds checks (as under dclua --sandbox), an index past a private
// array does not write over the stack: the dispatch fails and says where.
START_TEST(test_kernel_injection_private_array_checked) {
  dc_program_t* p = build("inj.cl",
                          "int poke(int i) {\n"
                          "  int t[4] = {1, 2, 3, 4};\n"
                          "  t[i] = 7;\n"
                          "  return t[0];\n"
                          "}\n" KERNEL_OPEN
                          "  o[0] = poke(o[1]);\n}\n",
                          "-dc-checked");
  dc_buffer_t* b = int_buffer(2);
  int32_t* o = host(b);
  o[1] = 100000;
  dc_arg_t a = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {1}};
  ck_assert_int_eq(dc_kernel_dispatch(kernel_of(p, "k"), &grid, &a, 1),
                   DC_ERR_OUT_OF_RANGE);
  DC_CK_STR_HAS(dc_last_error(), "kernel 'k' (inj.cl:3): index 100000 is "
                                 "outside an array of 4 element(s)");
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- accepted: user names that the host or the engine also uses ------===//

// Every user name is spelled with a prefix of its own in the generated
// code, so names of the C library, of the preludes' macros and of the
// generated code's variables are the program's to use: as helper
// functions, variables, a typedef, a struct tag and members, enumerators,
// a label and kernel parameters. BODY runs in each execution mode of the
// CPU: SYNC is nothing (a loop over work-items), a barrier (regions) or a
// barrier in a helper (fibers); the variables live across it.
static const char kHostNames[] =
    "typedef int size_t2;\n"
    "typedef struct dc__wi_t {\n"
    "  float NAN; float INFINITY; float sin; int _wi;\n"
    "} dc__wi_t;\n"
    "enum dc__fault_t { DC_FIBER_STACK = 3, DC_VEC = 4, dc__sink = 5,\n"
    "                   _launch = 6 };\n"
    "int system(int x) { return x + 1; }\n"
    "int memcpy(int dst, int src) { return dst * src; }\n"
    "int exit(int code) { return -code; }\n"
    "int malloc(int n) { return 2 * n; }\n"
    "int _wi(int x) { return x + 100; }\n"
    "int DC_IDX(int x) { return x + 1000; }\n"
    "int calls(int x) {\n"
    "  return system(x) + memcpy(x, 2) + exit(x) + malloc(x) + _wi(x) +\n"
    "         DC_IDX(x);\n"
    "}\n"
    // Locals named like the generated code's; each bit says one kept its
    // value.
    "int locals(int x) {\n"
    "  int _args = x, _p = 2, _w = 3, dc_h_0 = 4, dc_len = 5, _wi = 6;\n"
    "  int system = 7, memcpy = 8, exit = 9, malloc = 10, _scratch = 11;\n"
    "  int _loff = 12, _wg = 13, g = 14, f = 15, p = 16, dc_fault = 17;\n"
    "  int _localmem = 18, _gs0 = 19, _lx = 20, DC_WI_FROM = 21;\n"
    "  return (_args == x) | (_p == 2) << 1 | (_w == 3) << 2 |\n"
    "         (dc_h_0 == 4) << 3 | (dc_len == 5) << 4 | (_wi == 6) << 5 |\n"
    "         (system == 7) << 6 | (memcpy == 8) << 7 | (exit == 9) << 8 |\n"
    "         (malloc == 10) << 9 | (_scratch == 11) << 10 |\n"
    "         (_loff == 12) << 11 | (_wg == 13) << 12 | (g == 14) << 13 |\n"
    "         (f == 15) << 14 | (p == 16) << 15 | (dc_fault == 17) << 16 |\n"
    "         (_localmem == 18) << 17 | (_gs0 == 19) << 18 |\n"
    "         (_lx == 20) << 19 | (DC_WI_FROM == 21) << 20;\n"
    "}\n"
    // A label named like the work-item parameter every generated helper
    // has.
    "int looped(void) {\n"
    "  int i = 0, sum = 0;\n"
    "_wi:\n"
    "  sum += calls(i);\n"
    "  if (++i < 3) goto _wi;\n"
    "  return sum;\n"
    "}\n"
    "void sync_in_helper(void) { barrier(CLK_LOCAL_MEM_FENCE); }\n"
    "#define BODY(SYNC)                                                  \\\n"
    "  size_t2 dc_h_0 = get_global_id(0);                                \\\n"
    "  int _w = dc_h_0, dc_len = 0;                                      \\\n"
    "  dc__wi_t _wi = {1.5f, 2.5f, 3.5f, 4};                             \\\n"
    "  SYNC;                                                             \\\n"
    "  dc_len = looped();                                                \\\n"
    "  SYNC;                                                             \\\n"
    "  _args[_w * 4 + 0] = dc_len;                                       \\\n"
    "  _args[_w * 4 + 1] = locals(_w);                                   \\\n"
    "  _args[_w * 4 + 2] = _wi._wi + DC_FIBER_STACK * 10 + DC_VEC * 100 +\\\n"
    "                      dc__sink * 1000 + _launch * 10000;            \\\n"
    "  _args[_w * 4 + 3] = sizeof(dc__wi_t) + sizeof(size_t2) * 100;     \\\n"
    "  _p[_w] = _wi.NAN + _wi.INFINITY + _wi.sin + sin(0.0f) + _w\n"
    // A label of the kernel's own, beside its variable _wi.
    "__kernel void in_loop(__global int* _args, __global float* _p) {\n"
    "  if (get_global_id(0) >= 1000) goto _wi;\n"
    "  BODY(;);\n"
    "_wi:\n"
    "  return;\n"
    "}\n"
    "__kernel void in_regions(__global int* _args, __global float* _p) {\n"
    "  BODY(barrier(CLK_LOCAL_MEM_FENCE));\n"
    "}\n"
    "__kernel void in_fibers(__global int* _args, __global float* _p) {\n"
    "  BODY(sync_in_helper());\n"
    "}\n";

static void check_host_names(dc_program_t* p, const char* kernel,
                             const char* execution) {
  enum { kItems = 8 };
  dc_kernel_t* k = kernel_of(p, kernel);
  expect_mode(k, execution);
  dc_buffer_t* ints = int_buffer(kItems * 4);
  dc_buffer_t* floats = dc_test_buffer_new(cpu, DC_DTYPE_F32, kItems, "f");
  fill_bytes(floats, 0xA5);
  dc_arg_t a[2] = {dc_arg_buffer(ints), dc_arg_buffer(floats)};
  dispatch1(k, kItems, 4, a, 2);
  const int32_t* o = host(ints);
  const float* f = host(floats);
  for (int i = 0; i < kItems; ++i) {
    // calls(x) = (x + 1) + 2x - x + 2x + (x + 100) + (x + 1000) = 6x + 1101,
    // for x = 0, 1, 2.
    ck_assert_msg(o[i * 4 + 0] == 3 * 1101 + 6 * 3,
                  "%s: item %d: %d", kernel, i, o[i * 4 + 0]);
    ck_assert_msg(o[i * 4 + 1] == (1 << 21) - 1, "%s: item %d: locals %#x",
                  kernel, i, (unsigned)o[i * 4 + 1]);
    ck_assert_int_eq(o[i * 4 + 2], 4 + 30 + 400 + 5000 + 60000);
    ck_assert_int_eq(o[i * 4 + 3], 16 + 400);
    ck_assert_msg(f[i] == 7.5f + (float)i, "%s: item %d: %g", kernel, i,
                  (double)f[i]);
  }
  dc_buffer_release(ints);
  dc_buffer_release(floats);
}

START_TEST(test_kernel_injection_host_names_run) {
  static const char* const kChecks[] = {NULL, "-dc-checked"};
  for (size_t i = 0; i < COUNT_OF(kChecks); ++i) {
    dc_program_t* p = build("names.cl", kHostNames, kChecks[i]);
    check_host_names(p, "in_loop", "loop");
    check_host_names(p, "in_regions", "regions");
    check_host_names(p, "in_fibers", "fibers");
    dc_program_release(p);
  }
}
END_TEST

//===-- program names ---------------------------------------------------===//

// Program names reach messages and the #line directives of the generated
// code: one that closes the #line's string and declares a host function
// on a line of its own, one with a backslash, and one of 500 bytes.
typedef struct program_name_t {
  const char* name;
  const char* safe;  // how messages show it; NULL: a prefix of it
} program_name_t;

static const program_name_t kProgramNames[] = {
    {"we\"ird.cl", "we_ird.cl"},
    {"back\\slash.cl", "back_slash.cl"},
    {"x.cl\"\nint system(const char*);\n#line 1 \"y.cl",
     "x.cl__int_system_const_char_____line_1__y.cl"},
    {NULL, NULL},  // 500 bytes, made by the test
};

static const char kNamedProgram[] = KERNEL_OPEN
    "  o[get_global_id(0)] = 3 * (int)get_global_id(0);\n"
    "}\n";

// The same with an error at 2:13.
static const char kNamedProgramFaulty[] = KERNEL_OPEN
    "  o[0] = 3 +;\n"
    "}\n";

START_TEST(test_kernel_injection_program_names) {
  char long_name[501];
  memset(long_name, 'n', 500);
  long_name[500] = '\0';
  const program_name_t* n = &kProgramNames[_i];
  const char* name = n->name != NULL ? n->name : long_name;

  dc_program_t* p = build(name, kNamedProgram, NULL);
  dc_buffer_t* b = int_buffer(4);
  dc_arg_t a = dc_arg_buffer(b);
  dispatch1(kernel_of(p, "k"), 4, 0, &a, 1);
  const int32_t* o = host(b);
  for (int i = 0; i < 4; ++i) ck_assert_int_eq(o[i], 3 * i);
  dc_buffer_release(b);
  dc_program_release(p);

  // A message about the faulty version names the program made safe.
  p = SENTINEL;
  DC_CK_FAIL(try_build(cpu, name, kNamedProgramFaulty, NULL, &p),
             DC_ERR_COMPILE, ":2:13: error: expected an expression");
  ck_assert_ptr_null(p);
  const char* message = dc_last_error();
  const char* prefix = "dc_program_create: ";
  ck_assert(strncmp(message, prefix, strlen(prefix)) == 0);
  const char* shown = message + strlen(prefix);
  size_t shown_length = (size_t)(strstr(shown, ":2:13: ") - shown);
  if (n->safe != NULL) {
    ck_assert_msg(shown_length == strlen(n->safe) &&
                      strncmp(shown, n->safe, shown_length) == 0,
                  "message '%s' names the program other than '%s'", message,
                  n->safe);
  } else {
    ck_assert_msg(shown_length > 0 && shown_length < strlen(name) &&
                      strncmp(shown, name, shown_length) == 0,
                  "message '%s' does not name the program by a prefix",
                  message);
  }
  ck_assert_msg(strpbrk(message, "\"\\\n\r") == NULL,
                "message '%s' holds a quote, backslash or line end", message);
  expect_nothing_foreign(message, NULL);
}
END_TEST

// A dispatch that faults names the program too (kernel 'k' (NAME:LINE)),
// and must show it made safe like the compile messages do.
START_TEST(test_kernel_injection_program_name_in_fault_message) {
  const char* name = kProgramNames[2].name;
  dc_program_t* p = build(name,
                          KERNEL_OPEN "  o[get_global_id(0) + 100] = 1;\n}\n",
                          "-dc-checked");
  dc_buffer_t* b = int_buffer(4);
  dc_arg_t a = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {1}};
  DC_CK_FAIL(dc_kernel_dispatch(kernel_of(p, "k"), &grid, &a, 1),
             DC_ERR_OUT_OF_RANGE, "index 100 of argument 0 'o'");
  ck_assert_msg(strpbrk(dc_last_error(), "\"\\\n\r") == NULL,
                "message '%s' holds a quote, backslash or line end of the "
                "program's name",
                dc_last_error());
  DC_CK_ERROR_HAS("kernel 'k' (x.cl__int_system_const_char_____line_1__y.cl"
                  ":2)");
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

// A macro bomb of 2^23 tokens stops at a limit that its message names.
START_TEST(test_kernel_injection_macro_bomb) {
  char source[2048];
  size_t n = (size_t)snprintf(source, sizeof(source), "#define A0 x x\n");
  for (int i = 1; i <= 22; ++i) {
    n += (size_t)snprintf(source + n, sizeof(source) - n,
                          "#define A%d A%d A%d\n", i, i - 1, i - 1);
  }
  snprintf(source + n, sizeof(source) - n,
           KERNEL_OPEN "  int x = 1;\n  o[0] = A22;\n}\n");
  dc_program_t* p = SENTINEL;
  DC_CK_FAIL(try_build(cpu, "inj.cl", source, NULL, &p), DC_ERR_COMPILE,
             "inj.cl:26:10: error: ");
  DC_CK_ERROR_HAS("limit");
  ck_assert_ptr_null(p);
  expect_nothing_foreign(dc_last_error(), NULL);

  // Function-like macros nested in their own arguments.
  p = SENTINEL;
  DC_CK_FAIL(try_build(cpu, "inj.cl",
                       "#define F(x) x x\n"
                       "#define G(x) F(F(F(F(F(F(F(F(F(F(x))))))))))\n"
                       KERNEL_OPEN "  int x = 1;\n  o[0] = G(G(G(x)));\n}\n",
                       NULL, &p),
             DC_ERR_COMPILE, "inj.cl:5:");
  DC_CK_ERROR_HAS("limit");
  ck_assert_ptr_null(p);
}
END_TEST

// 30,000 nested parentheses: an error naming the nesting limit, never a
// stack overflow.
START_TEST(test_kernel_injection_deep_parentheses) {
  char* source =
      dc_test_nested_parens(KERNEL_OPEN "  o[0] = ", 30000, ";\n}\n");
  dc_program_t* p = SENTINEL;
  DC_CK_FAIL(try_build(cpu, "inj.cl", source, NULL, &p), DC_ERR_COMPILE,
             "inj.cl:2:");
  DC_CK_ERROR_HAS("nesting limit");
  ck_assert_ptr_null(p);
  expect_nothing_foreign(dc_last_error(), NULL);
  free(source);
}
END_TEST

//===-- the corpus never reaches DC_ERR_INTERNAL ------------------------===//

// The builds the corpus test has made: each file and options once.
typedef struct corpus_builds_t {
  char (*keys)[400];
  size_t count, capacity;
} corpus_builds_t;

// Builds |file| of the corpus with |options| unless it was built so
// already; fails the test if the host compiler refused what the generator
// made of it (DC_ERR_INTERNAL).
static void build_corpus_file(corpus_builds_t* done, const char* file,
                              const char* options) {
  char key[400];
  snprintf(key, sizeof(key), "%s|%s", file, options);
  for (size_t i = 0; i < done->count; ++i) {
    if (strcmp(done->keys[i], key) == 0) return;
  }
  if (done->count == done->capacity) {
    done->capacity = done->capacity ? 2 * done->capacity : 64;
    done->keys = realloc(done->keys, done->capacity * sizeof(*done->keys));
    ck_assert_ptr_nonnull(done->keys);
  }
  memcpy(done->keys[done->count++], key, sizeof(key));
  char* source = dc_corpus_read_file(file);
  if (source == NULL) {
    // The corpus suite reports files it cannot read.
    printf("injection: %s cannot be read; skipped\n", file);
    return;
  }
  const char* slash = strrchr(file, '/');
  dc_program_t* p = NULL;
  dc_status_t st = try_build(cpu, slash ? slash + 1 : file, source, options,
                             &p);
  ck_assert_msg(st != DC_ERR_INTERNAL, "%s (options '%s'): %s", file, options,
                dc_last_error());
  if (st != DC_OK) {
    ck_assert_msg(st == DC_ERR_COMPILE, "%s (options '%s'): %s: %s", file,
                  options, dc_status_name(st), dc_last_error());
    expect_nothing_foreign(dc_last_error(), NULL);
  }
  dc_program_release(p);
  free(source);
}

// Every program of the manifest with its options, with and without
// -dc-checked, and every source of the directory without options
// (some then lack their -D definitions: an error of the front end).
START_TEST(test_kernel_injection_corpus_never_internal) {
  corpus_builds_t done = {0};
  dc_manifest_t m;
  ck_assert_msg(dc_corpus_read_manifest(&m), "%s", m.error);
  for (size_t i = 0; i < m.count; ++i) {
    const dc_manifest_run_t* r = &m.runs[i];
    char checked[sizeof(r->options) + 32];
    snprintf(checked, sizeof(checked), "%s%s-dc-checked", r->options,
             r->options[0] ? " " : "");
    build_corpus_file(&done, r->file, r->options);
    build_corpus_file(&done, r->file, checked);
  }
  dc_manifest_free(&m);
  DIR* dir = opendir(DC_KERNEL_CORPUS_DIR);
  ck_assert_ptr_nonnull(dir);
  for (struct dirent* e = readdir(dir); e != NULL; e = readdir(dir)) {
    size_t n = strlen(e->d_name);
    if (n < 4 || strcmp(e->d_name + n - 3, ".cl") != 0) continue;
    build_corpus_file(&done, e->d_name, "");
    build_corpus_file(&done, e->d_name, "-dc-checked");
  }
  closedir(dir);
  ck_assert_uint_gt(done.count, 80);  // the corpus is there
  free(done.keys);
}
END_TEST

static Suite* kernel_injection_suite(void) {
  Suite* s = dc_test_kernel_suite("kernel_injection",
                                  "dc-check-kernel-injection");
  TCase* refused = dc_test_kernel_tcase(s, "refused");
  tcase_add_loop_test(refused, test_kernel_injection_host_code_refused, 0,
                      (int)COUNT_OF(kHostCode));
  tcase_add_loop_test(refused, test_kernel_injection_preprocessor_refused, 0,
                      (int)COUNT_OF(kPreprocessor));
  tcase_add_loop_test(refused, test_kernel_injection_extensions_refused, 0,
                      (int)COUNT_OF(kExtensions));
  tcase_add_loop_test(refused, test_kernel_injection_forged_pointers_refused,
                      0, (int)COUNT_OF(kForgedPointers));
  tcase_add_loop_test(refused, test_kernel_injection_stack_bombs_refused, 0,
                      (int)COUNT_OF(kStackBombs));
  tcase_add_loop_test(refused,
                      test_kernel_injection_internal_names_undeclared, 0,
                      (int)COUNT_OF(kInternalNames));
  tcase_add_loop_test(refused, test_kernel_injection_build_options_refused, 0,
                      (int)COUNT_OF(kOptions));

  TCase* accepted = dc_test_kernel_tcase(s, "accepted");
  tcase_add_test(accepted,
                 test_kernel_injection_define_named_like_host_function);
  tcase_add_test(accepted, test_kernel_injection_pragma_gcc_poison_ignored);
  tcase_add_test(accepted, test_kernel_injection_division_traps_nothing);
  tcase_add_test(accepted, test_kernel_injection_private_array_checked);
  tcase_add_test(accepted, test_kernel_injection_host_names_run);
  tcase_add_loop_test(accepted, test_kernel_injection_program_names, 0,
                      (int)COUNT_OF(kProgramNames));
  tcase_add_test(accepted,
                 test_kernel_injection_program_name_in_fault_message);

  TCase* limits = dc_test_kernel_tcase(s, "limits");
  tcase_add_test(limits, test_kernel_injection_macro_bomb);
  tcase_add_test(limits, test_kernel_injection_deep_parentheses);

  TCase* corpus = dc_test_kernel_tcase(s, "corpus");
  tcase_set_timeout(corpus, 600);
  tcase_add_test(corpus, test_kernel_injection_corpus_never_internal);
  return s;
}

DC_CHECK_MAIN(kernel_injection_suite)

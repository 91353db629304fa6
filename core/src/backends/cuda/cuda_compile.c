// cuda_compile.c: runs NVRTC on the code generator's output and reads its
// messages.
//
// The prelude goes to NVRTC as a header of its own (DC_CUDA_PRELUDE_NAME)
// and the generated source carries #line directives, so NVRTC names the
// user's program and line for every message about the user's code. Its
// messages have the shape
//
//   prog.cl(4): error: identifier "y" is undefined
//         out[i] = y;
//                  ^
//
// where the echoed line is the generated one: the code generator's marks
// (dc__cuda_user_column) turn the caret's position back into the user's
// column. A message inside the prelude (a built-in called with the wrong
// types) names the user's line where the template was instantiated
// ("... at line 4 of prog.cl"); that line is used. A message about
// anything else is the engine's fault: the whole log is kept, as the CPU
// device keeps its C compiler's.
// SPDX-License-Identifier: MIT
#include "cuda_compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program_internal.h"

// The prelude (cuda_prelude.h, cuda_prelude_math.h and
// cuda_prelude_builtins.h), embedded at build time.
extern const char dc__cuda_prelude_text[];

enum {
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
};

//===-- Targets and options ---------------------------------------------===//

dc_status_t dc__cuda_pick_target(const dc__cuda_nvrtc_t* nvrtc, int major,
                                 int minor, dc__cuda_target_t* out) {
  int want = major * 10 + minor, count = 0, best = 0;
  int archs[128];
  if (nvrtc->get_num_supported_archs(&count) != NVRTC_SUCCESS || count < 1 ||
      count > 128 || nvrtc->get_supported_archs(archs) != NVRTC_SUCCESS) {
    return DC_FAIL(DC_ERR_UNAVAILABLE,
                   "NVRTC cannot list the GPU architectures it supports");
  }
  for (int i = 0; i < count; ++i) {
    if (archs[i] == want) {
      *out = (dc__cuda_target_t){.arch = want, .ptx = false};
      return DC_OK;
    }
    // PTX of an older architecture of the same major runs (JIT-compiled);
    // one of an older major does too, but NVIDIA's "a" and "f" variants
    // aside, the newest known is the best guess.
    if (archs[i] < want && archs[i] > best) best = archs[i];
  }
  if (best == 0) {
    return DC_FAIL(DC_ERR_UNSUPPORTED,
                   "NVRTC supports no architecture that a GPU of compute "
                   "capability %d.%d runs (oldest known: sm_%d)",
                   major, minor, archs[0]);
  }
  *out = (dc__cuda_target_t){.arch = best, .ptx = true};
  return DC_OK;
}

// Fills |argv| (room for 16) with the NVRTC options for a build; |arch|
// holds the architecture option's text. Returns the count.
static int nvrtc_options(const dc__build_options_t* o,
                         const dc__cuda_target_t* target, char arch[48],
                         const char** argv) {
  int n = 0;
  snprintf(arch, 48, "--gpu-architecture=%s_%d", target->ptx ? "compute" : "sm",
           target->arch);
  argv[n++] = arch;
  argv[n++] = "-default-device";  // every function is a device function
  argv[n++] = "--std=c++17";
  // C permits what C++ warns about (a goto past a declaration, a
  // narrowing initialiser, a doubled const); the CPU device's C compiler
  // prints nothing for them either.
  argv[n++] = "-w";
  argv[n++] = o->opt_disable ? "-G" : "-lineinfo";
  if (o->fast_math) argv[n++] = "--use_fast_math";
  return n;
}

void dc__cuda_options_text(const dc__build_options_t* options,
                           const dc__cuda_target_t* target, char* text,
                           size_t size) {
  char arch[48];
  const char* argv[16];
  int n = nvrtc_options(options, target, arch, argv);
  size_t used = 0;
  text[0] = '\0';
  for (int i = 0; i < n && used < size; ++i) {
    int w = snprintf(text + used, size - used, "%s%s", i ? " " : "", argv[i]);
    if (w > 0) used += (size_t)w;
  }
}

//===-- Columns ---------------------------------------------------------===//

// The generated line around |offset|: [*begin, *end).
static void line_around(const dc__cuda_translation_t* t, size_t offset,
                        size_t* begin, size_t* end) {
  size_t b = offset, n = offset;
  while (b > 0 && t->source[b - 1] != '\n') --b;
  while (n < t->length && t->source[n] != '\n') ++n;
  *begin = b;
  *end = n;
}

// Trailing spaces do not count when an echoed line is compared.
static size_t trimmed(const char* text, size_t length) {
  while (length > 0 && (text[length - 1] == ' ' || text[length - 1] == '\r')) {
    --length;
  }
  return length;
}

uint32_t dc__cuda_user_column(const dc__cuda_translation_t* t, uint32_t line,
                              const char* echo, size_t echo_length,
                              size_t caret) {
  echo_length = trimmed(echo, echo_length);
  for (size_t i = 0; i < t->mark_count; ++i) {
    if (t->marks[i].line != line) continue;
    size_t begin, end;
    line_around(t, t->marks[i].offset, &begin, &end);
    if (trimmed(t->source + begin, end - begin) != echo_length ||
        memcmp(t->source + begin, echo, echo_length) != 0) {
      continue;
    }
    // The last token that starts at or before the caret.
    size_t at = begin + caret;
    const dc__cuda_mark_t* best = &t->marks[i];
    for (size_t k = i; k < t->mark_count && t->marks[k].offset <= at &&
                       t->marks[k].offset < end;
         ++k) {
      if (t->marks[k].line == line) best = &t->marks[k];
    }
    size_t inside = at >= best->offset ? at - best->offset : 0;
    return best->col + (uint32_t)(inside < best->length ? inside : 0);
  }
  return 0;
}

//===-- Messages --------------------------------------------------------===//

typedef struct span_t {
  const char* text;
  size_t length;
} span_t;

// One message of the log: its header "file(line): kind: message" and the
// lines that follow it (the echoed source, the caret, notes).
typedef struct message_t {
  span_t file;
  uint32_t line;
  bool error;
  span_t text;
  const span_t* rest;
  size_t rest_count;
} message_t;

static bool span_is(span_t s, const char* text) {
  return s.length == strlen(text) && memcmp(s.text, text, s.length) == 0;
}

// Parses "file(123): error: text"; false if |l| is not such a header.
static bool parse_header(span_t l, message_t* m) {
  const char* close = NULL;
  for (size_t i = 0; i + 2 < l.length && close == NULL; ++i) {
    if (memcmp(l.text + i, "): ", 3) == 0) close = l.text + i;
  }
  if (close == NULL) return false;
  const char* open = close;
  while (open > l.text && open[-1] >= '0' && open[-1] <= '9') --open;
  if (open == close || open == l.text || open[-1] != '(') return false;
  m->file = (span_t){l.text, (size_t)(open - 1 - l.text)};
  m->line = (uint32_t)strtoul(open, NULL, 10);
  const char* kind = close + 3;
  const char* end = l.text + l.length;
  const char* colon = memchr(kind, ':', (size_t)(end - kind));
  if (colon == NULL) return false;
  m->error = (size_t)(end - kind) >= 5 &&
             (memcmp(kind, "error", 5) == 0 ||
              memcmp(kind, "catastrophic error", 18) == 0);
  const char* text = colon + 1;
  while (text < end && *text == ' ') ++text;
  m->text = (span_t){text, (size_t)(end - text)};
  return true;
}

// Whether |l| is the caret line under an echoed source line.
static bool is_caret_line(span_t l, size_t* caret) {
  const char* hat = memchr(l.text, '^', l.length);
  if (hat == NULL) return false;
  for (const char* c = l.text; c < l.text + l.length; ++c) {
    if (*c != ' ' && *c != '^') return false;
  }
  *caret = (size_t)(hat - l.text);
  return true;
}

// The user's line named by a note such as 'detected during instantiation
// of "..." at line 12 of prog.cl', or 0.
static uint32_t instantiation_line(const message_t* m, const char* file) {
  for (size_t i = 0; i < m->rest_count; ++i) {
    span_t l = m->rest[i];
    for (size_t k = 0; k + 8 < l.length; ++k) {
      if (memcmp(l.text + k, "at line ", 8) != 0) continue;
      char* after = NULL;
      unsigned long line = strtoul(l.text + k + 8, &after, 10);
      size_t left = (size_t)(l.text + l.length - after);
      size_t n = strlen(file);
      // "at line 12 of prog.cl" or 'of "prog.cl"'
      if (left >= 4 + n && memcmp(after, " of ", 4) == 0 &&
          (memcmp(after + 4, file, n) == 0 ||
           (after[4] == '"' && left >= 6 + n &&
            memcmp(after + 5, file, n) == 0))) {
        return (uint32_t)line;
      }
    }
  }
  return 0;
}

// The first column the user's |line| has in the translation (1 if none).
static uint32_t first_column(const dc__cuda_translation_t* t, uint32_t line) {
  uint32_t col = 0;
  for (size_t i = 0; i < t->mark_count; ++i) {
    if (t->marks[i].line == line && (col == 0 || t->marks[i].col < col)) {
      col = t->marks[i].col;
    }
  }
  return col ? col : 1;
}

// The user's column of a message about the user's file: from the echoed
// line and its caret (which NVRTC indents by two spaces).
static uint32_t message_column(const dc__cuda_translation_t* t,
                               const message_t* m) {
  size_t caret;
  for (size_t i = 1; i < m->rest_count; ++i) {
    span_t echo = m->rest[i - 1];
    if (!is_caret_line(m->rest[i], &caret) || echo.length < 2 || caret < 2) {
      continue;
    }
    uint32_t col = dc__cuda_user_column(t, m->line, echo.text + 2,
                                        echo.length - 2, caret - 2);
    if (col != 0) return col;
  }
  return first_column(t, m->line);
}

// Whether |p| starts a name the code generator or the prelude made from
// one of the user's: dc__sin, dc_float4, dc_char, dc_u_new. Returns the
// prefix's length, 0 if none.
static size_t engine_prefix(const char* start, const char* p) {
  static const char* const kTypes[] = {"char",  "uchar", "short", "ushort",
                                       "int",   "uint",  "long",  "ulong",
                                       "float", "double"};
  if (p > start &&
      (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
       (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'))) {
    return 0;  // inside a longer name
  }
  if (strncmp(p, "dc__", 4) == 0) return 4;
  if (strncmp(p, "dc_u_", 5) == 0) return 5;
  if (strncmp(p, "dc_", 3) != 0) return 0;
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); ++i) {
    if (strncmp(p + 3, kTypes[i], strlen(kTypes[i])) == 0) return 3;
  }
  return 0;
}

// Writes the message |m| with the engine's names as the user wrote them
// (a call of sin that matches no overload is reported as "dc__sin").
static void tidy(span_t m, char* out, size_t size) {
  size_t n = 0;
  for (size_t i = 0; i < m.length && n + 1 < size;) {
    size_t skip = engine_prefix(m.text, m.text + i);
    if (skip > 0 && i + skip <= m.length) {
      i += skip;
      continue;
    }
    out[n++] = m.text[i++];
  }
  out[n] = '\0';
}

// Adds |m| to |diag| if it is about the user's source; returns whether it
// was an error that did.
static bool copy_message(const dc__cuda_translation_t* t, const message_t* m,
                         dc__diag_t* diag) {
  uint32_t line = 0, col = 0;
  if (span_is(m->file, diag->file)) {
    line = m->line;
    col = message_column(t, m);
  } else if ((line = instantiation_line(m, diag->file)) != 0) {
    col = first_column(t, line);
  }
  if (line == 0 || !m->error) return false;
  char text[512];
  tidy(m->text, text, sizeof(text));
  dc__diag_error(diag, line, col, "%s", text);
  // Notes (candidates, instantiation contexts) follow, as NVRTC wrote
  // them; the echoed generated line and its caret mean nothing to users.
  for (size_t i = 0; i < m->rest_count; ++i) {
    size_t caret;
    bool echo = i + 1 < m->rest_count && is_caret_line(m->rest[i + 1], &caret);
    if (echo || is_caret_line(m->rest[i], &caret)) continue;
    tidy(m->rest[i], text, sizeof(text) - 1);
    dc__diag_append(diag, text);
    dc__diag_append(diag, "\n");
  }
  return true;
}

// Splits |log| into lines (in |lines|, allocated from |arena|).
static size_t split_lines(dc__arena_t* arena, const char* log, span_t** lines) {
  size_t count = 1;
  for (const char* c = log; *c; ++c) count += *c == '\n';
  *lines = dc__arena_alloc(arena, count * sizeof(**lines));
  if (*lines == NULL) return 0;
  size_t n = 0;
  for (const char* l = log; *l;) {
    const char* end = strchr(l, '\n');
    size_t length = end ? (size_t)(end - l) : strlen(l);
    (*lines)[n++] = (span_t){l, length};
    l += length + (end ? 1 : 0);
  }
  return n;
}

// Copies NVRTC's messages about the user's code into |diag|. Returns how
// many errors it copied.
static uint32_t copy_log(dc__arena_t* arena, const dc__cuda_translation_t* t,
                         const char* log, dc__diag_t* diag) {
  span_t* lines = NULL;
  size_t count = split_lines(arena, log, &lines);
  uint32_t errors = 0;
  for (size_t i = 0; i < count; ++i) {
    message_t m;
    if (!parse_header(lines[i], &m)) continue;
    size_t end = i + 1;
    while (end < count && lines[end].length > 0) {
      message_t next;
      if (parse_header(lines[end], &next)) break;
      ++end;
    }
    m.rest = &lines[i + 1];
    m.rest_count = end - i - 1;
    errors += copy_message(t, &m, diag) ? 1 : 0;
    i = end - 1;
  }
  return errors;
}

//===-- Compiling -------------------------------------------------------===//

static dc_status_t nvrtc_failure(const dc__cuda_nvrtc_t* nvrtc, nvrtcResult r,
                                 const char* what) {
  dc_status_t status = r == NVRTC_ERROR_OUT_OF_MEMORY    ? DC_ERR_OUT_OF_MEMORY
                       : r == NVRTC_ERROR_INVALID_OPTION ? DC_ERR_UNSUPPORTED
                                                         : DC_ERR_INTERNAL;
  return DC_FAIL(status, "NVRTC: %s: %s (%d)", what, nvrtc->get_error_string(r),
                 r);
}

// Reads the program's log into memory from |allocator| (NULL if empty).
static char* program_log(const dc__cuda_nvrtc_t* nvrtc, nvrtcProgram p,
                         dc_allocator_t allocator, size_t* size) {
  *size = 0;
  if (nvrtc->get_program_log_size(p, size) != NVRTC_SUCCESS || *size < 2) {
    return NULL;
  }
  char* log = dc_allocator_malloc(allocator, *size);
  if (log != NULL && nvrtc->get_program_log(p, log) != NVRTC_SUCCESS) {
    log[0] = '\0';
  }
  return log;
}

// Takes the cubin or PTX out of a compiled program.
static dc_status_t take_image(const dc__cuda_nvrtc_t* nvrtc, nvrtcProgram p,
                              bool ptx, dc_allocator_t allocator,
                              dc__cuda_image_t* out) {
  size_t size = 0;
  nvrtcResult r =
      ptx ? nvrtc->get_ptx_size(p, &size) : nvrtc->get_cubin_size(p, &size);
  if (r != NVRTC_SUCCESS) {
    return nvrtc_failure(nvrtc, r,
                         ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize");
  }
  char* data = dc_allocator_malloc(allocator, size ? size : 1);
  if (data == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "no memory for a %zu-byte module",
                   size);
  }
  r = ptx ? nvrtc->get_ptx(p, data) : nvrtc->get_cubin(p, data);
  if (r != NVRTC_SUCCESS) {
    dc_allocator_free(allocator, data, size ? size : 1);
    return nvrtc_failure(nvrtc, r, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN");
  }
  *out = (dc__cuda_image_t){
      .data = data, .size = size, .ptx = ptx, .allocator = allocator};
  return DC_OK;
}

// A failed compile. The front end checked the program, so NVRTC failing
// on what the generator made of it is the engine's bug: DC_ERR_INTERNAL.
// NVRTC's messages, taken back to the user's lines where they can be, go
// to the build log for the bug report.
static dc_status_t report_compile_errors(const dc__cuda_translation_t* t,
                                         const char* log, dc__diag_t* diag) {
  dc__arena_t arena;
  dc__arena_init(&arena, diag->allocator);
  dc__diag_t mapped;
  dc__diag_init(&mapped, diag->allocator, diag->file);
  uint32_t errors = copy_log(&arena, t, log ? log : "", &mapped);
  dc__arena_free_all(&arena);
  dc__diag_append(diag, mapped.log ? mapped.log : "");
  dc__diag_append(diag, log ? log : "(no output)\n");
  dc_status_t st = DC_FAIL(
      DC_ERR_INTERNAL,
      "internal error: NVRTC rejected the CUDA code generated for program "
      "'%s'%s%s; this is a bug of the engine, please report it with the "
      "program",
      diag->file, errors ? ": " : "", errors ? mapped.first_error : "");
  dc__diag_free(&mapped);
  return st;
}

dc_status_t dc__cuda_nvrtc_compile(const dc__cuda_nvrtc_t* nvrtc,
                                   const dc__cuda_translation_t* t,
                                   const dc__build_options_t* options,
                                   const dc__cuda_target_t* target,
                                   dc__diag_t* diag, dc_allocator_t allocator,
                                   dc__cuda_image_t* out) {
  const char* headers[] = {dc__cuda_prelude_text};
  const char* names[] = {DC_CUDA_PRELUDE_NAME};
  nvrtcProgram p = NULL;
  nvrtcResult r = nvrtc->create_program(&p, t->source, DC_CUDA_SOURCE_NAME, 1,
                                        headers, names);
  if (r != NVRTC_SUCCESS) {
    return nvrtc_failure(nvrtc, r, "nvrtcCreateProgram");
  }
  char arch[48];
  const char* argv[16];
  int argc = nvrtc_options(options, target, arch, argv);
  r = nvrtc->compile_program(p, argc, argv);
  size_t log_size = 0;
  char* log = program_log(nvrtc, p, allocator, &log_size);
  dc_status_t st = DC_OK;
  if (r == NVRTC_ERROR_COMPILATION) {
    st = report_compile_errors(t, log, diag);
  } else if (r != NVRTC_SUCCESS) {
    st = nvrtc_failure(nvrtc, r, arch);
  } else {
    st = take_image(nvrtc, p, target->ptx, allocator, out);
  }
  dc_allocator_free(allocator, log, log_size);
  nvrtc->destroy_program(&p);
  return st;
}

void dc__cuda_image_free(dc__cuda_image_t* image) {
  if (image->data == NULL) return;
  dc_allocator_free(image->allocator, image->data,
                    image->size ? image->size : 1);
  image->data = NULL;
  image->size = 0;
}

bool dc__cuda_dump_source(const char* name, const dc__cuda_translation_t* t,
                          char* path, size_t path_size) {
  const char* dir = getenv("DC_KERNEL_DUMP");
  if (dir == NULL || *dir == '\0') return true;
  snprintf(path, path_size, "%s/%s.cu", dir, name);
  for (char* c = path + strlen(dir) + 1; *c; ++c) {
    if (*c == '/') *c = '_';
  }
  FILE* f = fopen(path, "w");
  bool ok = f != NULL && fwrite(t->source, 1, t->length, f) == t->length;
  if (f != NULL && fclose(f) != 0) ok = false;
  return ok;
}

//===-- Compiling without a device --------------------------------------===//

// Parses "sm_90" or "compute_90".
static bool parse_arch(const char* arch, dc__cuda_target_t* out) {
  char* end = NULL;
  const char* digits = NULL;
  if (strncmp(arch, "sm_", 3) == 0) digits = arch + 3;
  if (strncmp(arch, "compute_", 8) == 0) digits = arch + 8;
  if (digits == NULL) return false;
  long value = strtol(digits, &end, 10);
  out->arch = (int)value;
  out->ptx = digits == arch + 8;
  return end != digits && *end == '\0' && value > 0 && value < 1000;
}

// The front end and the code generator, as dc_program_create runs them.
static dc_status_t translate(dc__arena_t* arena, const char* source,
                             const char* options, bool bounds_check,
                             dc__diag_t* diag, dc__build_options_t* opts,
                             dc__cuda_translation_t* t) {
  dc__token_list_t tokens = {0};
  dc__program_ast_t ast;
  DC_RETURN_IF_ERROR(dc__parse_build_options(arena, options, diag, opts));
  DC_RETURN_IF_ERROR(
      dc__preprocess(arena, source, strlen(source), opts, diag, &tokens));
  DC_RETURN_IF_ERROR(dc__parse(arena, &tokens, diag, &ast));
  dc__cuda_codegen_options_t cg = {
      .file = diag->file, .bounds_check = bounds_check || opts->bounds_check};
  DC_RETURN_IF_ERROR(dc__cuda_codegen(arena, &ast, &cg, diag, t));
  char path[1024];
  (void)dc__cuda_dump_source(diag->file, t, path, sizeof(path));
  return DC_OK;
}

dc_status_t dc__cuda_compile_for_arch(const dc__cuda_nvrtc_t* nvrtc,
                                      const char* name, const char* source,
                                      const char* options, const char* arch,
                                      bool bounds_check,
                                      dc_allocator_t allocator, char* log,
                                      size_t log_size, dc__cuda_image_t* out) {
  static const char* fn = "dc__cuda_compile_for_arch";
  memset(out, 0, sizeof(*out));
  if (log_size > 0) log[0] = '\0';
  dc__cuda_target_t target;
  if (!parse_arch(arch, &target)) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: '%s' is no architecture (sm_XY or compute_XY)", fn,
                   arch);
  }
  dc__arena_t arena;
  dc__arena_init(&arena, allocator);
  dc__diag_t diag;
  dc__diag_init(&diag, allocator, name);
  dc__build_options_t opts;
  dc__cuda_translation_t t;
  dc_status_t st =
      translate(&arena, source, options, bounds_check, &diag, &opts, &t);
  if (st == DC_OK) {
    st = dc__cuda_nvrtc_compile(nvrtc, &t, &opts, &target, &diag, allocator,
                                out);
  }
  if (st == DC_ERR_COMPILE || (st != DC_OK && diag.errors > 0)) {
    st = dc__diag_fail(&diag, "dc_program_create");
  }
  if (log_size > 0 && diag.log != NULL) dc__strlcpy(log, diag.log, log_size);
  dc__diag_free(&diag);
  dc__arena_free_all(&arena);
  return st;
}

// program.c: building programs: the shared front end (preprocessor,
// parser, reflection) in front of each backend's compiler.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>

#include "fault_internal.h"
#include "program_internal.h"
#include "tree.h"

static const char* kFn = "dc_program_create";

static void describe_arg(dc_program_t* p, const dc__program_ast_t* ast,
                         const dc__param_t* param, dc_kernel_arg_info_t* a) {
  const dc__token_t* name = &ast->tokens[param->name];
  const dc__ty_t* type = param->decl->type;
  a->name = dc__arena_strndup(&p->arena, name->text, name->length);
  a->type_name = dc__type_name(&p->arena, &param->type);
  a->dtype = dc__scalar_dtype(param->type.scalar);
  a->vector_width = param->type.vector_width;
  a->is_const = param->type.is_const;
  a->address_space = param->type.address_space;
  if (type->kind == DC_TY_RECORD || type->kind == DC_TY_ENUM) {
    if (!dc__reflect_value(&p->arena, type, a)) p->arena.failed = true;
  } else if (param->type.pointer_depth == 0) {
    a->kind = DC_ARG_SCALAR;
    a->size = dc__ty_size(type);  // a 3-component vector takes 4 lanes
  } else {
    a->kind = param->type.address_space == DC_ADDRESS_LOCAL ? DC_ARG_LOCAL
                                                            : DC_ARG_BUFFER;
    a->is_const |= param->type.address_space == DC_ADDRESS_CONSTANT;
  }
}

// Fills the kernel table from the kernels the parser found.
// Whether every use of parameter |param| in |fn|'s body is a plain store
// `name[...] = ...` (not `==`, not a compound assignment): then the kernel
// never reads what the buffer held.
static bool only_stored_to(const dc__program_ast_t* ast,
                           const dc__function_t* fn,
                           const dc__param_t* param) {
  const dc__token_t* t = ast->tokens;
  const dc__token_t* name = &t[param->name];
  if (param->type.pointer_depth == 0 || fn->body == NULL) return false;
  bool used = false;
  for (uint32_t i = fn->body->token; i < fn->body_end; ++i) {
    if (t[i].kind != DC_TOK_IDENT || t[i].length != name->length ||
        memcmp(t[i].text, name->text, name->length) != 0) {
      continue;
    }
    used = true;
    if (i + 1 >= fn->body_end || !dc__tok_is(&t[i + 1], "[")) return false;
    // Skip the balanced index, then expect a plain '='.
    uint32_t j = i + 1;
    int depth = 0;
    for (; j < fn->body_end; ++j) {
      if (dc__tok_is(&t[j], "[")) ++depth;
      if (dc__tok_is(&t[j], "]") && --depth == 0) break;
    }
    if (j + 1 >= fn->body_end || !dc__tok_is(&t[j + 1], "=")) return false;
    // The store must start an expression statement, so the old value is
    // not used around it ("x = a[i] = 0" reads nothing either, but keep
    // it simple).
    if (i > 0 && !dc__tok_is(&t[i - 1], ";") && !dc__tok_is(&t[i - 1], "{") &&
        !dc__tok_is(&t[i - 1], "}") && !dc__tok_is(&t[i - 1], ")") &&
        !dc__tok_is(&t[i - 1], "else")) {
      return false;
    }
  }
  return used;
}

static dc_status_t reflect(dc_program_t* p, const dc__program_ast_t* ast) {
  size_t count = 0;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    count += ast->functions[i].is_kernel && ast->functions[i].body != NULL;
  }
  p->kernels = dc__arena_alloc(&p->arena, (count + 1) * sizeof(dc_kernel_t));
  if (p->kernels == NULL) return DC_ERR_OUT_OF_MEMORY;
  memset(p->kernels, 0, (count + 1) * sizeof(dc_kernel_t));
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    const dc__function_t* fn = &ast->functions[i];
    if (!fn->is_kernel || fn->body == NULL) continue;
    dc_kernel_t* k = &p->kernels[p->kernel_count++];
    const dc__token_t* name = &ast->tokens[fn->name];
    k->program = p;
    k->function = i;
    k->line = name->line;
    k->info.name = dc__arena_strndup(&p->arena, name->text, name->length);
    k->info.arg_count = fn->param_count;
    k->info.max_group_size = p->device->info.max_work_group_size;
    k->info.uses_barrier = fn->calls_barrier;
    k->info.uses_grid_sync = fn->calls_grid_sync;
    memcpy(k->info.required_group_size, fn->required_group_size,
           sizeof(k->info.required_group_size));
    k->args = dc__arena_alloc(&p->arena,
                              (fn->param_count + 1) * sizeof(*k->args));
    if (k->args == NULL) return DC_ERR_OUT_OF_MEMORY;
    memset(k->args, 0, (fn->param_count + 1) * sizeof(*k->args));
    for (uint32_t a = 0; a < fn->param_count; ++a) {
      describe_arg(p, ast, &fn->params[a], &k->args[a]);
      k->args[a].is_write_only = !k->args[a].is_const &&
                                 only_stored_to(ast, fn, &fn->params[a]);
    }
  }
  return p->arena.failed ? DC_ERR_OUT_OF_MEMORY : DC_OK;
}

static void describe_program(const dc__live_node_t* node, char* buf,
                             size_t size) {
  const dc_program_t* p =
      (const dc_program_t*)((const char*)node - offsetof(dc_program_t, live));
  snprintf(buf, size, "program '%s' with %zu kernel(s)%s%s on %s", p->name,
           p->kernel_count, p->kernel_count ? ", first " : "",
           p->kernel_count ? p->kernels[0].info.name : "",
           p->device->info.name);
}

// The arena (names, argument tables, the kernels themselves) stays until
// the quarantine lets the storage go (dc__program_evict), so that a stale
// kernel handle still finds its released program.
void dc__program_free(dc_program_t* p) {
  for (size_t i = 0; i < p->kernel_count; ++i) {
    dc__autotune_free(&p->kernels[i]);
  }
  pthread_mutex_destroy(&p->lock);
  dc__object_cache_free(&p->device->context->program_cache, p);
}

void dc__program_evict(void* program) {
  dc__arena_free_all(&((dc_program_t*)program)->arena);
}

dc_status_t dc__program_new(dc_device_t* device, const char* name,
                            dc_program_t** out_program) {
  dc_allocator_t allocator = dc_context_allocator(device->context);
  dc_program_t* p =
      dc__object_cache_alloc(&device->context->program_cache);
  if (p == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "cannot allocate a program");
  }
  dc__resource_init(&p->header, &dc__program_type);
  pthread_mutex_init(&p->lock, NULL);
  p->device = device;
  dc__arena_init(&p->arena, allocator);
  // Program names reach messages, #line directives and file names: they
  // keep only the bytes that are safe in all of them.
  char safe[DC_DIAG_FILE_SIZE];
  dc__safe_name(name, safe, sizeof(safe));
  p->name = dc__arena_strndup(&p->arena, safe, strlen(safe));
  if (p->name == NULL) {
    dc__program_free(p);
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "cannot allocate a program");
  }
  *out_program = p;
  return DC_OK;
}

void dc__program_publish(dc_program_t* p) {
  p->live.describe = describe_program;
  p->live.kind = DC_LIVE_PROGRAM;
  dc__context_track(p->device->context, &p->live);
}

// Runs the front end and the backend; fills |p| or reports why not.
static dc_status_t build(dc_program_t* p, const dc_program_params_t* params,
                         size_t length, dc__arena_t* scratch,
                         dc__diag_t* diag) {
  dc_context_params_t config;
  dc_context_params(p->device->context, &config);
  dc__build_options_t options;
  dc__token_list_t tokens = {0};
  dc__program_ast_t ast;
  dc_status_t st =
      dc__parse_build_options(scratch, params->options, diag, &options);
  if (st == DC_OK) {
    st = dc__preprocess(scratch, params->source, length, &options, diag,
                        &tokens);
  }
  if (st == DC_OK) st = dc__parse(scratch, &tokens, diag, &ast);
  if (st == DC_OK) st = reflect(p, &ast);
  if (st != DC_OK) return st;
  struct dc__build_tree_t tree = {
      .arena = scratch, .diag = diag, .ast = &ast, .options = &options};
  dc_program_build_t b = {
      .program = p,
      .name = p->name,
      .source = params->source,
      .source_length = length,
      .options = params->options ? params->options : "",
      .flags = {.fast_math = options.fast_math,
                .finite_math = options.finite_math,
                .no_signed_zeros = options.no_signed_zeros,
                .mad_enable = options.mad_enable,
                .opt_disable = options.opt_disable,
                .opt_max = options.opt_max,
                .no_coarsening = options.no_coarsening},
      .checked = options.checked || config.checked_kernels,
      .tree = &tree,
  };
  p->building = true;
  st = p->device->vtable->kernels->program_build(p->device, &b);
  p->building = false;
  return st;
}

static dc_status_t check_params(dc_device_t* device,
                                const dc_program_params_t* params,
                                size_t* out_length) {
  DC_REQUIRE_ARG(device, kFn);
  DC_REQUIRE_ARG(params, kFn);
  if (params->source == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: the source is NULL", kFn);
  }
  *out_length = params->source_length ? params->source_length
                                      : strlen(params->source);
  if (*out_length == 0) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: the source is empty", kFn);
  }
  if (device->vtable->kernels == NULL) {
    return DC_FAIL(DC_ERR_UNSUPPORTED, "%s: device %s does not run kernels",
                   kFn, device->info.name);
  }
  return DC_OK;
}

dc_status_t dc_program_create(dc_device_t* device,
                              const dc_program_params_t* params,
                              dc_program_t** out_program) {
  DC_REQUIRE_ARG(out_program, kFn);
  *out_program = NULL;
  size_t length = 0;
  DC_RETURN_IF_ERROR(check_params(device, params, &length));
  DC_RETURN_IF_ERROR(dc__device_outcome(
      device, dc__fault_check(device->context, DC_FAULT_COMPILE, device,
                              params->name ? params->name : "program")));
  dc_program_t* p = NULL;
  DC_RETURN_IF_ERROR(
      dc__program_new(device, params->name ? params->name : "program", &p));
  dc_allocator_t allocator = dc_context_allocator(device->context);
  dc__arena_t scratch;
  dc__arena_init(&scratch, allocator);
  dc__diag_t diag;
  dc__diag_init(&diag, allocator, p->name);
  dc_status_t st = build(p, params, length, &scratch, &diag);
  if (st == DC_ERR_COMPILE || (st != DC_OK && diag.errors > 0)) {
    st = dc__diag_fail(&diag, kFn);
  } else if (st == DC_ERR_OUT_OF_MEMORY && scratch.failed) {
    st = DC_FAIL(st, "%s: out of memory while building", kFn);
  }
  if (st == DC_OK) {
    p->build_log = dc__arena_strndup(&p->arena, diag.log ? diag.log : "",
                                     diag.log ? diag.length : 0);
    p->source = dc__arena_strndup(&p->arena, params->source, length);
    p->source_length = length;
    p->options = params->options
                     ? dc__arena_strndup(&p->arena, params->options,
                                         strlen(params->options))
                     : NULL;
    dc__program_publish(p);
    *out_program = p;
  } else {
    dc__program_free(p);
  }
  dc__diag_free(&diag);
  dc__arena_free_all(&scratch);
  return dc__device_outcome(device, st);  // a compiler that failed to run
}

dc_status_t dc_program_build_for(const dc_program_t* program,
                                 dc_device_t* device,
                                 dc_program_t** out_program) {
  static const char* fn = "dc_program_build_for";
  DC_REQUIRE_ARG(out_program, fn);
  *out_program = NULL;
  DC_RETURN_IF_ERROR(
      dc__resource_check(fn, "program", DC__RES(program), &dc__program_type));
  DC_REQUIRE_ARG(device, fn);
  if (program->source == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: program '%s' kept no source",
                   fn, program->name);
  }
  dc_program_params_t params = {.source = program->source,
                                .source_length = program->source_length,
                                .name = program->name,
                                .options = program->options};
  return dc_program_create(device, &params, out_program);
}

dc_status_t dc_program_cache_stats(dc_device_t* device,
                                   dc_program_cache_stats_t* out_stats) {
  DC_REQUIRE_ARG(device, "dc_program_cache_stats");
  DC_REQUIRE_ARG(out_stats, "dc_program_cache_stats");
  memset(out_stats, 0, sizeof(*out_stats));
  const dc_device_kernel_ops_t* ops = device->vtable->kernels;
  if (ops != NULL && ops->program_cache_stats != NULL) {
    ops->program_cache_stats(device, out_stats);
  }
  return DC_OK;
}

size_t dc__program_object_size(void) { return sizeof(struct dc_program_t); }

static bool is_program(const dc_program_t* p) {
  return dc__resource_live(DC__RES(p), &dc__program_type);
}

bool dc__program_valid(const dc_program_t* p) { return is_program(p); }

void dc__program_make_internal(dc_program_t* p) {
  dc__context_untrack(p->device->context, &p->live);
  dc__context_unref(p->device->context);
  p->internal = true;
}

// Only an engine-owned program's references each hold its context (see
// dc__resource_type_t.pinned_context); any other holds it once, from
// publish to destroy.
static dc_context_t* pinned_context(const dc__resource_t* r) {
  const dc_program_t* p = (const dc_program_t*)r;
  return p->internal ? p->device->context : NULL;
}

static void destroy_program(dc__resource_t* r) {
  dc_program_t* p = (dc_program_t*)r;
  dc_context_t* ctx = p->device->context;
  bool internal = p->internal;
  if (!internal) dc__context_untrack(ctx, &p->live);
  p->device->vtable->kernels->program_destroy(p->device, p);
  dc__program_free(p);
  if (!internal) dc__context_unref(ctx);  // last: it may destroy the context
}

const dc__resource_type_t dc__program_type = {
    .name = "program",
    .destroy = destroy_program,
    .pinned_context = pinned_context,
};
DC__RESOURCE_FIRST(dc_program_t, header);

void dc_program_retain(dc_program_t* p) {
  dc__resource_retain(DC__RES(p), &dc__program_type);
}

void dc_program_release(dc_program_t* p) {
  dc__resource_release(DC__RES(p), &dc__program_type);
}

const char* dc_program_build_log(const dc_program_t* p) {
  return is_program(p) && p->build_log ? p->build_log : "";
}

size_t dc_program_kernel_count(const dc_program_t* p) {
  return is_program(p) ? p->kernel_count : 0;
}

dc_status_t dc_program_kernel(dc_program_t* p, size_t index,
                              dc_kernel_t** out_kernel) {
  DC_REQUIRE_ARG(out_kernel, "dc_program_kernel");
  *out_kernel = NULL;
  DC_RETURN_IF_ERROR(dc__resource_check("dc_program_kernel", "program",
                                        DC__RES(p), &dc__program_type));
  if (index >= p->kernel_count) {
    return DC_FAIL(DC_ERR_OUT_OF_RANGE,
                   "dc_program_kernel: index %zu is out of range (program "
                   "'%s' has %zu kernel(s))",
                   index, p->name, p->kernel_count);
  }
  *out_kernel = &p->kernels[index];
  return DC_OK;
}

dc_status_t dc_program_find_kernel(dc_program_t* p, const char* name,
                                   dc_kernel_t** out_kernel) {
  static const char* fn = "dc_program_find_kernel";
  DC_REQUIRE_ARG(out_kernel, fn);
  *out_kernel = NULL;
  DC_RETURN_IF_ERROR(
      dc__resource_check(fn, "program", DC__RES(p), &dc__program_type));
  DC_REQUIRE_ARG(name, fn);
  char names[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < p->kernel_count; ++i) {
    if (strcmp(p->kernels[i].info.name, name) == 0) {
      *out_kernel = &p->kernels[i];
      return DC_OK;
    }
    if (used < sizeof(names)) {
      int n = snprintf(names + used, sizeof(names) - used, "%s%s",
                       i ? ", " : "", p->kernels[i].info.name);
      if (n > 0) used += (size_t)n;
    }
  }
  return DC_FAIL(DC_ERR_NOT_FOUND, "%s: program '%s' has no kernel '%s' "
                 "(kernels: %s)", fn, p->name, name,
                 p->kernel_count ? names : "none");
}

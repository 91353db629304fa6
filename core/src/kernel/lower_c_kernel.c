// lower_c_kernel.c: helper functions and kernel entry points.
// Part of lower_c.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

//===-- Kernels ---------------------------------------------------------===//

// A kernel parameter |d| spelled |name|, writable (the entry points copy
// arguments into it).
static const char* param_declaration(emitter_t* e, const dc__decl_t* d,
                                     const char* name) {
  return dc__cgen_declaration(&e->g, d->type, name, DC_Q_CONST);
}

// The value of pointer parameter |d| (argument |index|) from the argument
// table |_args|: buffers are pointers, __local pointers point into the
// group's local memory; in checked mode both are fat pointers bounded by
// the sizes in dc_len.
static const char* pointer_arg(emitter_t* e, const dc__decl_t* d) {
  uint32_t index = d->param_index;
  const char* at =
      dc__cgen_is_local_pointer(d)
          ? dc__arena_printf(e->g.arena, "(void*)(_localmem + (uintptr_t)_args[%u])",
                             index)
          : dc__arena_printf(e->g.arena, "_args[%u]", index);
  if (at == NULL) return "";
  if (!e->g.checked) return at;
  const char* fat = dc__arena_printf(e->g.arena, "dc_fp(%s, dc_len[%u], %uu)",
                                     at, index, index);
  return fat ? fat : "";
}

// Declares kernel parameter |d| from the argument table |_args|: values
// are copied, pointers as pointer_arg() makes them.
static void emit_unpack(emitter_t* e, const dc__decl_t* d) {
  const char* name = dc__cgen_name(&e->g, d);
  dc__cgen_printf(&e->g, "%s", param_declaration(e, d, name));
  if (d->type->kind != DC_TY_POINTER) {
    dc__cgen_printf(&e->g, "; __builtin_memcpy(&%s, _args[%u], sizeof(%s));",
                    name, d->param_index, name);
  } else {
    dc__cgen_printf(&e->g, " = %s;", pointer_arg(e, d));
  }
}

static const char kRunParams[] =
    "const dc_c_launch_t* _launch_in, void* const* _args, "
    "const size_t* dc_len, size_t _gbegin, size_t _gend, "
    "char* _localmem, char* _scratch, dc_c_fault_t* dc_fault";

// A checked kernel's run function (dc/kernel_abi_c.h's dc_c_kernel_run_fn): a
// wrapper whose __builtin_setjmp is where a fault or a stop leaves to
// (dc__escape) around the kernel's body, a function of its own that keeps
// every variable in registers (dc_kr_<name>). With prechecks
// (cgen_ranges.c) the body comes in two versions: a chunk whose index
// ranges all pass dc_kh_<name> runs in dc_kf_<name>, without their
// checks; otherwise each of its groups runs in the version its own ranges
// allow.
static void emit_checked_wrapper(emitter_t* e, const char* name, bool fibers,
                                 bool prechecks) {
  static const char kArgs[] = "_launch_in, _args, dc_len";
  static const char kRest[] = "_localmem, _scratch, dc_fault, dc_escape";
  dc__cgen_printf(&e->g,
                  "\nstatic __attribute__((noinline)) void dc_kr_%s(%s, "
                  "void** dc_escape);",
                  name, kRunParams);
  if (prechecks) {
    dc__cgen_printf(&e->g,
                    "\nstatic __attribute__((noinline)) void dc_kf_%s(%s, "
                    "void** dc_escape);"
                    "\nstatic int dc_kh_%s(const dc_c_launch_t* _launch_in,"
                    " void* const* _args, const size_t* dc_len,"
                    " size_t _gbegin, size_t _gend);",
                    name, kRunParams, name);
  }
  dc__cgen_printf(&e->g,
                  "\n__attribute__((visibility(\"default\"))) void "
                  "dc_k_%s_run(%s) {"
                  "\n  void* dc_escape[5];"
                  "\n  if (__builtin_setjmp(dc_escape)) { %s return; }",
                  name, kRunParams, fibers ? "dc__fg = 0;" : "");
  if (prechecks) {
    dc__cgen_printf(
        &e->g,
        "\n  if (dc_kh_%s(%s, _gbegin, _gend)) {"
        "\n    dc_kf_%s(%s, _gbegin, _gend, %s);"
        "\n    return;"
        "\n  }"
        "\n  for (size_t dc_g = _gbegin; dc_g < _gend; ++dc_g) {"
        "\n    if (dc_kh_%s(%s, dc_g, dc_g + 1)) {"
        "\n      dc_kf_%s(%s, dc_g, dc_g + 1, %s);"
        "\n    } else {"
        "\n      dc_kr_%s(%s, dc_g, dc_g + 1, %s);"
        "\n    }"
        "\n  }\n}",
        name, kArgs, name, kArgs, kRest, name, kArgs, name, kArgs, kRest,
        name, kArgs, kRest);
  } else {
    dc__cgen_printf(&e->g, "\n  dc_kr_%s(%s, _gbegin, _gend, %s);\n}", name,
                    kArgs, kRest);
  }
}

// The head of a kernel's body up to its opening brace: the run function
// itself for an unchecked kernel, else its version |version| ("r" checked,
// "f" without the prechecked checks) that the wrapper calls.
static void emit_run_head(emitter_t* e, const char* name,
                          const char* version) {
  if (!e->g.checked) {
    dc__cgen_printf(&e->g,
                    "\n__attribute__((visibility(\"default\"))) void "
                    "dc_k_%s_run(%s) {\n  void** const dc_escape = 0;",
                    name, kRunParams);
    return;
  }
  dc__cgen_printf(&e->g,
                  "\nstatic __attribute__((noinline)) void dc_k%s_%s(%s, "
                  "void** dc_escape) {",
                  version, name, kRunParams);
}

// The launch's sizes as the work-item functions read them (DC_WI_FROM),
// constants where the kernel requires a group size.
static void emit_launch(emitter_t* e, const dc__function_t* fn) {
  const uint32_t* req = fn->required_group_size;
  if (req[0] != 0) {  // dispatch checks that the launch has this size
    dc__cgen_printf(&e->g, "\n  DC_WI_FROM_SIZED(_wi, %u, %u, %u)", req[0],
                    req[1] ? req[1] : 1, req[2] ? req[2] : 1);
  } else {
    puts_out(e, "\n  DC_WI_FROM(_wi)");
  }
}

// dc_kh_<name>: whether every prechecked index range of a chunk of groups
// lies in its array or buffer (|conditions|, from cgen_ranges.c).
static void emit_precheck_function(emitter_t* e, const dc__function_t* fn,
                                   const dc__strbuf_t* conditions) {
  dc__cgen_printf(&e->g,
                  "\nstatic int dc_kh_%s(const dc_c_launch_t* _launch_in,"
                  " void* const* _args, const size_t* dc_len,"
                  " size_t _gbegin, size_t _gend) {"
                  "\n  dc__wi_t _wi_storage = {.launch = _launch_in};"
                  "\n  dc__wi_t* const _wi = &_wi_storage;",
                  fn->decl->name);
  emit_launch(e, fn);
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    if (d->type->kind != DC_TY_SCALAR && d->type->kind != DC_TY_ENUM) continue;
    puts_out(e, "\n  ");
    emit_unpack(e, d);
    dc__cgen_printf(&e->g, " (void)%s;", dc__cgen_name(&e->g, d));
  }
  puts_out(e, "\n  (void)_args; (void)dc_len;"
              "\n  if (_gbegin >= _gend) return 1;"
              "\n  size_t dc_glo[3], dc_ghi[3];"
              "\n  DC_GROUP_RANGE(_gbegin, _gend, dc_glo, dc_ghi);"
              "\n  int dc_ok = 1;");
  dc__strbuf_append(e->g.out, conditions->data ? conditions->data : "",
                    conditions->length);
  puts_out(e, "\n  return dc_ok;\n}");
  dc__cgen_new_line(&e->g);
}

// Storage layout code shared by the run function and the size queries.
// The group's local memory starts 64-byte aligned; a __local variable
// aligned further (aligned(N)) moves the kernel's own part of it up to
// the largest such alignment, which the local size leaves room for.
static uint32_t localmem_align(const emitter_t* e) {
  uint32_t align = 64;
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    if (e->localmem[i]->align > align) align = e->localmem[i]->align;
  }
  return align;
}

static void emit_layout(emitter_t* e, bool pointers) {
  puts_out(e, "\n  size_t _loff = 0, _soff = 0; (void)_loff; (void)_soff;");
  uint32_t base = localmem_align(e);
  if (base > 64 && pointers) {
    dc__cgen_printf(&e->g,
                    "\n  _localmem = (char*)(((uintptr_t)_localmem + %u) &"
                    " ~(uintptr_t)%u);",
                    base - 1, base - 1);
  }
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    uint32_t align = e->localmem[i]->align > 64 ? e->localmem[i]->align : 64;
    dc__cgen_printf(&e->g, "\n  _loff = (_loff + %u) & ~(size_t)%u;",
                    align - 1, align - 1);
    if (pointers) {
      dc__cgen_printf(&e->g,
                      "\n  dc_lt_%u* restrict dc_l_%u ="
                      " (dc_lt_%u*)(_localmem + _loff);",
                      i, i, i);
    }
    dc__cgen_printf(&e->g, "\n  _loff += sizeof(dc_lt_%u);", i);
  }
  dc__cgen_printf(&e->g, "\n  _loff = DC_ALIGN64(_loff) + %u;", base - 64);
  for (uint32_t i = 0; i < e->hoisted_count; ++i) {
    if (pointers) {
      dc__cgen_printf(&e->g,
                        "\n  dc_ht_%u* restrict dc_h_%u ="
                        " (dc_ht_%u*)(_scratch + _soff);",
                        i, i, i);
    }
    dc__cgen_printf(&e->g,
                      "\n  _soff += DC_ALIGN64(sizeof(dc_ht_%u) * _wg);", i);
  }
  if (e->uses_done && pointers) {
    puts_out(e, "\n  unsigned char* dc_done = (unsigned char*)(_scratch + _soff);");
  }
  if (e->uses_done) puts_out(e, "\n  _soff += DC_ALIGN64(_wg);");
}

// Writes into |types| the typedefs of the kernel's __local and hoisted
// storage (dc_lt_N, dc_ht_N). Their numbers restart with every kernel, so
// each function that uses them declares them in its own block scope.
static void emit_storage_typedefs(emitter_t* e, dc__strbuf_t* types) {
  dc__strbuf_t* saved = e->g.out;
  dc__strbuf_init(types, e->g.arena);
  e->g.out = types;
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    char type[32];
    snprintf(type, sizeof(type), "dc_lt_%u", i);
    emit_storage_typedef(e, e->localmem[i], type);
  }
  for (uint32_t i = 0; i < e->hoisted_count; ++i) {
    char type[32];
    snprintf(type, sizeof(type), "dc_ht_%u", i);
    emit_storage_typedef(e, e->hoisted[i], type);
  }
  e->g.out = saved;
  dc__cgen_new_line(&e->g);
}

// Whether a 1-D launch may run all the work-groups of a chunk as one
// work-item loop: an unchecked barrier-free kernel without __local memory whose
// work-items never ask where they are in their group or which group it is
// (get_local_id and get_group_id appear neither in it nor in any helper).
// The group size then changes nothing such a kernel can observe, and one
// long loop streams memory without restarting at every group.
static bool asks_group_position(const dc__expr_t* x, void* unused) {
  (void)unused;
  return x->kind == DC_EXPR_BUILTIN &&
         (strcmp(x->builtin->name, "get_local_id") == 0 ||
          strcmp(x->builtin->name, "get_group_id") == 0);
}

static bool runs_flat(const emitter_t* e, const dc__function_t* fn) {
  // A checked kernel polls once per group, so that a stop ends even a
  // kernel without loops on a vast grid.
  if (e->mode != DC_EXEC_LOOP || e->localmem_count != 0 || e->g.checked) {
    return false;
  }
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (dc__cgen_is_local_pointer(fn->decl->params[i])) return false;
  }
  const dc__program_ast_t* ast = e->g.ast;
  for (uint32_t i = 0; i < ast->function_count; ++i) {
    const dc__function_t* f = &ast->functions[i];
    if (f->is_kernel && f != fn) continue;
    if (dc__stmt_any(f->body, asks_group_position, NULL)) return false;
  }
  return true;
}

static bool calls_helper(const dc__expr_t* x, void* unused) {
  (void)unused;
  return x->kind == DC_EXPR_CALL;
}

// Opens the run function's loop over the groups [_gbegin, _gend). A loop
// kernel's work-item loops run from _lx_begin to _lx_end: one group's
// range, or for a flat kernel in a 1-D launch the whole chunk's, as group
// 0 of global ids offset by the chunk's first.
static void emit_group_loop(emitter_t* e, const dc__function_t* fn) {
  if (e->mode != DC_EXEC_LOOP) {
    puts_out(e, "\n  for (size_t _g = _gbegin; _g < _gend; ++_g) {"
                "\n  const size_t _grp0 = _g % _ng0,");
  } else {
    dc__cgen_printf(&e->g, "\n  const int _flat = %d && _dims == 1;",
                      runs_flat(e, fn) ? 1 : 0);
    puts_out(e, "\n  for (size_t _g = _gbegin; _g < _gend;"
                " _g = _flat ? _gend : _g + 1) {"
                "\n  const size_t _lx_begin = _flat ? _gbegin * _ls0 : 0,"
                " _lx_end = _flat ? _gend * _ls0 : _ls0;"
                "\n  const size_t _grp0 = _flat ? 0 : _g % _ng0,");
  }
  puts_out(e, " _grp1 = (_g / _ng0) % _ng1, _grp2 = _g / (_ng0 * _ng1);"
              " (void)_grp0; (void)_grp1; (void)_grp2;");
  dc__cgen_poll(&e->g, fn->decl->token);
}

// One version of kernel |fn|'s body (see emit_run_head); returns the
// typedefs of its storage, which the size queries declare too.
static dc__strbuf_t emit_kernel_version(emitter_t* e, const dc__function_t* fn,
                                        dc__exec_mode_t mode,
                                        const char* version) {
  e->g.fn = fn;
  e->g.in_kernel = true;
  e->mode = mode;
  e->hoisted_count = e->localmem_count = 0;
  e->region = 0;
  push_scope(e);
  // The body goes to a side buffer first: it decides which typedefs and
  // storage the function needs, and those come before it.
  dc__strbuf_t* main_out = e->g.out;
  dc__strbuf_t header, body;
  dc__strbuf_init(&header, e->g.arena);
  dc__strbuf_init(&body, e->g.arena);
  e->g.out = &header;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    puts_out(e, "\n  ");
    emit_unpack(e, fn->decl->params[i]);
  }
  e->g.out = &body;
  dc__cgen_new_line(&e->g);
  placement_t placement = {.e = e};
  check_placement(&placement, fn->body);
  e->uses_done = mode == DC_EXEC_REGIONS && placement.has_return;
  e->calls_helpers = dc__stmt_any(fn->body, calls_helper, NULL);
  push_scope(e);
  if (mode == DC_EXEC_LOOP) {
    open_region(e);
    dc__cgen_stmt(&e->g, fn->body);
    close_region(e);
  } else {
    emit_group_stmt(e, fn->body);
    close_region(e);
  }
  pop_scope(e);
  dc__strbuf_t types;
  emit_storage_typedefs(e, &types);
  e->g.out = main_out;
  dc__cgen_new_line(&e->g);
  emit_run_head(e, fn->decl->name, version);
  dc__strbuf_append(e->g.out, types.data ? types.data : "", types.length);
  puts_out(e, "\n  (void)dc_len; (void)dc_fault; (void)_localmem;"
              "\n  dc__wi_t _wi_storage = {.launch = _launch_in,"
              " .fault = dc_fault, .polls = 1, .escape = dc_escape};"
              "\n  dc__wi_t* const _wi = &_wi_storage; (void)_wi;");
  emit_launch(e, fn);
  puts_out(e, "\n  const size_t _wg = _ls0 * _ls1 * _ls2; (void)_wg;"
              "\n  const int _lx = 0, _ly = 0, _lz = 0, _w = 0;"
              " (void)_lx; (void)_ly; (void)_lz; (void)_w;");
  dc__strbuf_append(e->g.out, header.data ? header.data : "", header.length);
  emit_layout(e, /*pointers=*/true);
  emit_group_loop(e, fn);
  if (e->calls_helpers) {
    puts_out(e, "\n  _wi->group[0] = _grp0; _wi->group[1] = _grp1;"
                " _wi->group[2] = _grp2;");
  }
  if (e->uses_done) puts_out(e, "\n  __builtin_memset(dc_done, 0, _wg);");
  dc__strbuf_append(e->g.out, body.data ? body.data : "", body.length);
  puts_out(e, "\n  }\n}");
  dc__cgen_new_line(&e->g);
  pop_scope(e);
  return types;
}

static void emit_kernel(emitter_t* e, const dc__function_t* fn,
                        dc__exec_mode_t mode) {
  const char* name = fn->decl->name;
  dc__strbuf_t conditions;
  dc__strbuf_init(&conditions, e->g.arena);
  bool prechecks =
      e->g.checked && dc__cgen_plan_prechecks(&e->g, fn, &conditions);
  if (e->g.checked) emit_checked_wrapper(e, name, /*fibers=*/false, prechecks);
  if (prechecks) emit_precheck_function(e, fn, &conditions);
  dc__strbuf_t types = emit_kernel_version(e, fn, mode, "r");
  if (prechecks) {
    e->g.skip_prechecked = true;
    types = emit_kernel_version(e, fn, mode, "f");
    e->g.skip_prechecked = false;
  }
  dc__cgen_printf(&e->g,
                  "\n__attribute__((visibility(\"default\"))) size_t "
                  "dc_k_%s_local_size(void) { size_t _wg = 0;",
                  name);
  dc__strbuf_append(e->g.out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  (void)_wg; return _loff;\n}");
  dc__cgen_printf(&e->g,
                  "\n__attribute__((visibility(\"default\"))) size_t "
                  "dc_k_%s_scratch_size(size_t _wg) {",
                  name);
  dc__strbuf_append(e->g.out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  return _soff;\n}\n");
}

// cpu_emit_kernel.c: helper functions and kernel entry points.
// Part of cpu_codegen.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

//===-- Functions -------------------------------------------------------===//

// Writes a parameter list, each parameter as written (address spaces
// dropped), declaring the names.
static void emit_params(emitter_t* e, const dc__function_t* fn,
                        bool with_wi) {
  puts_out(e, "(");
  if (with_wi) puts_out(e, "dc__wi_t* _wi");
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (with_wi || i > 0) puts_out(e, ",");
    emit_range(e, fn->params[i].tokens.begin, fn->params[i].tokens.end);
  }
  if (!with_wi && fn->param_count == 0) puts_out(e, "void");
  puts_out(e, ")");
}

static void emit_return_type(emitter_t* e, const dc__function_t* fn) {
  for (uint32_t k = fn->return_type.begin; k < fn->return_type.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (dc__tok_is(t, "static") || dc__tok_is(t, "inline") ||
        dc__tok_is(t, "__inline") || dc__tok_is(t, "extern")) {
      continue;
    }
    if (dc__tok_is(t, "__attribute__")) {  // skip its (( ... ))
      k = dc__tok_matching(e->toks, k + 1, fn->return_type.end);
      continue;
    }
    emit_range(e, k, k + 1);
  }
}

static void emit_helper(emitter_t* e, const dc__function_t* fn,
                        bool prototype) {
  at_line(e, e->toks[fn->name].line);
  puts_out(e, "\nstatic inline __attribute__((unused))");
  emit_return_type(e, fn);
  emit_token(e, &e->toks[fn->name]);
  push_scope(e);
  e->fn = fn;
  e->in_kernel = false;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    declare(e, &e->toks[fn->params[i].name], SYM_PLAIN, 0);
  }
  emit_params(e, fn, /*with_wi=*/true);
  if (prototype || fn->body == NULL) {
    puts_out(e, ";");
  } else {
    puts_out(e, " { DC_WI_FROM(_wi) DC_WI_LOCAL(_wi)");
    emit_stmt(e, fn->body);
    puts_out(e, " }");
  }
  pop_scope(e);
}

// Declares a kernel parameter from the argument table |_args|.
static void emit_unpack(emitter_t* e, const dc__param_t* p, uint32_t index) {
  const dc__token_t* name = &e->toks[p->name];
  if (p->type.pointer_depth == 0) {
    for (uint32_t k = p->tokens.begin; k < p->tokens.end; ++k) {
      if (!dc__tok_is(&e->toks[k], "const")) emit_range(e, k, k + 1);
    }
    dc__strbuf_printf(e->out, "; __builtin_memcpy(&%s, _args[%u], "
                              "sizeof(%s));",
                      spelled(e, name), index, spelled(e, name));
    declare(e, name, SYM_PLAIN, 0);
    e->syms[e->sym_count - 1].is_param = true;
    return;
  }
  emit_range(e, p->tokens.begin, p->tokens.end);
  if (p->type.address_space == DC_ADDRESS_LOCAL) {
    dc__strbuf_printf(e->out, " = (void*)(_localmem + (uintptr_t)_args[%u]);",
                      index);
    declare(e, name, SYM_PLAIN, 0);
  } else {
    dc__strbuf_printf(e->out, " = _args[%u];", index);
    declare(e, name, SYM_BUFFER, index);
  }
  e->syms[e->sym_count - 1].is_param = true;
}

// Storage layout code shared by the run function and the size queries.
static void emit_layout(emitter_t* e, bool pointers) {
  puts_out(e, "\n  size_t _loff = 0, _soff = 0; (void)_loff; (void)_soff;");
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    if (pointers) {
      dc__strbuf_printf(e->out,
                        "\n  dc_lt_%u* restrict dc_l_%u ="
                        " (dc_lt_%u*)(_localmem + _loff);",
                        i, i, i);
    }
    dc__strbuf_printf(e->out, "\n  _loff += DC_ALIGN64(sizeof(dc_lt_%u));", i);
  }
  for (uint32_t i = 0; i < e->hoisted_count; ++i) {
    if (pointers) {
      dc__strbuf_printf(e->out,
                        "\n  dc_ht_%u* restrict dc_h_%u ="
                        " (dc_ht_%u*)(_scratch + _soff);",
                        i, i, i);
    }
    dc__strbuf_printf(e->out,
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
  dc__strbuf_t* saved = e->out;
  dc__strbuf_init(types, e->arena);
  e->out = types;
  e->line = 0;
  for (uint32_t i = 0; i < e->localmem_count; ++i) {
    char type[32];
    snprintf(type, sizeof(type), "dc_lt_%u", i);
    emit_storage_typedef(e, &e->localmem[i], type);
  }
  for (uint32_t i = 0; i < e->hoisted_count; ++i) {
    char type[32];
    snprintf(type, sizeof(type), "dc_ht_%u", i);
    emit_storage_typedef(e, &e->hoisted[i], type);
  }
  e->out = saved;
  e->line = 0;
}

// Whether a 1-D launch may run all the work-groups of a chunk as one
// work-item loop: a barrier-free kernel without __local memory whose
// work-items never ask where they are in their group or which group it is
// (get_local_id and get_group_id appear neither in it nor in any helper).
// The group size then changes nothing such a kernel can observe, and one
// long loop streams memory without restarting at every group.
static bool runs_flat(const emitter_t* e, const dc__function_t* fn) {
  static const dc__token_t kGroupPosition[] = {
      {.kind = DC_TOK_IDENT, .length = 12, .text = "get_local_id"},
      {.kind = DC_TOK_IDENT, .length = 12, .text = "get_group_id"},
  };
  if (e->mode != DC_EXEC_LOOP || e->localmem_count != 0) return false;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    if (fn->params[i].type.address_space == DC_ADDRESS_LOCAL) return false;
  }
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* f = &e->ast->functions[i];
    if (f->is_kernel && f != fn) continue;
    for (size_t k = 0; k < sizeof(kGroupPosition) / sizeof(kGroupPosition[0]);
         ++k) {
      if (name_used_in(e, &kGroupPosition[k], f->body)) return false;
    }
  }
  return true;
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
    dc__strbuf_printf(e->out, "\n  const int _flat = %d && _dims == 1;",
                      runs_flat(e, fn) ? 1 : 0);
    puts_out(e, "\n  for (size_t _g = _gbegin; _g < _gend;"
                " _g = _flat ? _gend : _g + 1) {"
                "\n  const size_t _lx_begin = _flat ? _gbegin * _ls0 : 0,"
                " _lx_end = _flat ? _gend * _ls0 : _ls0;"
                "\n  const size_t _grp0 = _flat ? 0 : _g % _ng0,");
  }
  puts_out(e, " _grp1 = (_g / _ng0) % _ng1, _grp2 = _g / (_ng0 * _ng1);"
              " (void)_grp0; (void)_grp1; (void)_grp2;");
}

static void emit_kernel(emitter_t* e, const dc__function_t* fn,
                        dc__exec_mode_t mode) {
  const dc__token_t* name = &e->toks[fn->name];
  e->fn = fn;
  e->in_kernel = true;
  e->mode = mode;
  e->hoisted_count = e->localmem_count = 0;
  e->region = 0;
  push_scope(e);
  // The body goes to a side buffer first: it decides which typedefs and
  // storage the function needs, and those come before it.
  dc__strbuf_t* main_out = e->out;
  dc__strbuf_t header, body;
  dc__strbuf_init(&header, e->arena);
  dc__strbuf_init(&body, e->arena);
  e->out = &header;
  e->line = 0;
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    puts_out(e, "\n  ");
    emit_unpack(e, &fn->params[i], i);
  }
  e->out = &body;
  e->line = 0;
  placement_t placement = {.e = e};
  check_placement(&placement, fn->body);
  e->uses_done = mode == DC_EXEC_REGIONS && placement.has_return;
  e->calls_helpers = false;
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* h = &e->ast->functions[i];
    e->calls_helpers |= !h->is_kernel &&
                        name_used_in(e, &e->toks[h->name], fn->body);
  }
  push_scope(e);
  if (mode == DC_EXEC_LOOP) {
    open_region(e);
    emit_stmt(e, fn->body);
    close_region(e);
  } else {
    emit_group_stmt(e, fn->body);
    close_region(e);
  }
  pop_scope(e);
  dc__strbuf_t types;
  emit_storage_typedefs(e, &types);
  e->out = main_out;
  e->line = 0;
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) void "
                    "dc_k_%.*s_run(const dc__launch_t* _launch_in, "
                    "void* const* _args, const size_t* dc_len, "
                    "size_t _gbegin, size_t _gend, char* _localmem, "
                    "char* _scratch, dc__fault_t* dc_fault) {",
                    (int)name->length, name->text);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  puts_out(e, "\n  (void)dc_len; (void)dc_fault; (void)_localmem;"
              "\n  dc__wi_t _wi_storage = {.launch = _launch_in};"
              "\n  dc__wi_t* const _wi = &_wi_storage; (void)_wi;");
  const uint32_t* req = fn->required_group_size;
  if (req[0] != 0) {  // dispatch checks that the launch has this size
    dc__strbuf_printf(e->out, "\n  DC_WI_FROM_SIZED(_wi, %u, %u, %u)", req[0],
                      req[1] ? req[1] : 1, req[2] ? req[2] : 1);
  } else {
    puts_out(e, "\n  DC_WI_FROM(_wi)");
  }
  dc__strbuf_printf(e->out,
                    "\n  const size_t _wg = _ls0 * _ls1 * _ls2; (void)_wg;"
                    "\n  const int _lx = 0, _ly = 0, _lz = 0, _w = 0;"
                    " (void)_lx; (void)_ly; (void)_lz; (void)_w;");
  dc__strbuf_append(e->out, header.data ? header.data : "", header.length);
  emit_layout(e, /*pointers=*/true);
  emit_group_loop(e, fn);
  if (e->calls_helpers) {
    puts_out(e, "\n  _wi->group[0] = _grp0; _wi->group[1] = _grp1;"
                " _wi->group[2] = _grp2;");
  }
  if (e->uses_done) puts_out(e, "\n  __builtin_memset(dc_done, 0, _wg);");
  dc__strbuf_append(e->out, body.data ? body.data : "", body.length);
  puts_out(e, "\n  }\n}");
  e->line = 0;
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) size_t "
                    "dc_k_%.*s_local_size(void) { size_t _wg = 0;",
                    (int)name->length, name->text);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  (void)_wg; return _loff;\n}");
  dc__strbuf_printf(e->out,
                    "\n__attribute__((visibility(\"default\"))) size_t "
                    "dc_k_%.*s_scratch_size(size_t _wg) {",
                    (int)name->length, name->text);
  dc__strbuf_append(e->out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  return _soff;\n}\n");
  pop_scope(e);
}


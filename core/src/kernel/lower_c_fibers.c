// lower_c_fibers.c: the fiber runtime and kernels that run on it.
// Part of lower_c.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

//===-- Fibers ----------------------------------------------------------===//

// The fiber runtime of a generated module: each work-item of a group runs
// on its own stack (ucontext); barrier() switches back to the scheduler,
// which runs every other work-item up to the barrier before resuming any.
// Correct for any control flow, but a switch per work-item per barrier
// costs far more than a region loop, so only kernels the region transform
// cannot run use it. dc_grid_sync() is a barrier that also flags the
// group: once every work-item has reached it, the scheduler (on the
// group's own stack) enters the grid barrier before resuming any.
static const char kFiberSupport[] =
    "\n#define DC_FIBER_STACK (64 * 1024)"
    "\ntypedef struct dc__fiber_t { ucontext_t ctx; dc__wi_t wi; int done; }"
    " dc__fiber_t;"
    "\ntypedef struct dc__fiber_group_t { ucontext_t main;"
    " dc__fiber_t* fibers; int current; int grid; const void* args; }"
    " dc__fiber_group_t;"
    "\nstatic _Thread_local dc__fiber_group_t* dc__fg;"
    "\nstatic void dc__fiber_barrier(dc__wi_t* wi) { (void)wi;"
    " dc__fiber_group_t* g = dc__fg;"
    " swapcontext(&g->fibers[g->current].ctx, &g->main); }"
    "\nstatic __attribute__((unused)) void dc__fiber_grid_sync(dc__wi_t* wi)"
    " { dc__fg->grid = 1; dc__fiber_barrier(wi); }"
    "\n#define DC_FIBER_SCRATCH(wg) (DC_ALIGN64(sizeof(dc__fiber_t) * (wg))"
    " + (size_t)(wg) * DC_FIBER_STACK)"
    "\nstatic void dc__fibers_run(const dc__wi_t* proto, int count,"
    " char* scratch, void (*entry)(void), const void* args) {"
    "\n  dc__fiber_group_t g = {.fibers = (dc__fiber_t*)scratch,"
    " .args = args};"
    "\n  char* stacks = scratch + DC_ALIGN64(sizeof(dc__fiber_t) * count);"
    "\n  const size_t* ls = proto->launch->local_size;"
    "\n  dc__fiber_group_t* saved = dc__fg; dc__fg = &g;"
    "\n  for (int w = 0; w < count; ++w) {"
    "\n    dc__fiber_t* f = &g.fibers[w];"
    "\n    f->wi = *proto; f->done = 0;"
    "\n    f->wi.local[0] = w % ls[0]; f->wi.local[1] = (w / ls[0]) % ls[1];"
    " f->wi.local[2] = w / (ls[0] * ls[1]);"
    "\n    getcontext(&f->ctx);"
    "\n    f->ctx.uc_stack.ss_sp = stacks + (size_t)w * DC_FIBER_STACK;"
    "\n    f->ctx.uc_stack.ss_size = DC_FIBER_STACK;"
    "\n    f->ctx.uc_link = &g.main;"
    "\n    makecontext(&f->ctx, entry, 0);"
    "\n  }"
    "\n  for (int live = count; live > 0;) {"
    "\n    for (int w = 0; w < count; ++w) {"
    "\n      if (g.fibers[w].done) continue;"
    "\n      g.current = w; swapcontext(&g.main, &g.fibers[w].ctx);"
    "\n      if (g.fibers[w].done) --live;"
    "\n    }"
    "\n    if (g.grid && proto->launch->grid_sync) {"
    "\n      g.grid = 0;"
    " proto->launch->grid_sync(proto->launch->grid_sync_ctx);"
    "\n    }"
    "\n  }"
    "\n  dc__fg = saved;"
    "\n}\n";

// Writes the names of |fn|'s parameters, comma-separated, each prefixed.
static void emit_param_names(emitter_t* e, const dc__function_t* fn,
                             const char* prefix) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    dc__cgen_printf(&e->g, "%s%s%s", i ? ", " : "", prefix,
                    dc__cgen_name(&e->g, fn->decl->params[i]));
  }
}

// Copies the dispatch's arguments into the fiber kernel's argument pack.
static void emit_pack(emitter_t* e, const dc__function_t* fn) {
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    const char* name = dc__cgen_name(&e->g, d);
    if (d->type->kind != DC_TY_POINTER) {
      dc__cgen_printf(&e->g,
                      "\n  __builtin_memcpy(&_p.%s, _args[%u], sizeof(_p.%s));",
                      name, i, name);
    } else {
      dc__cgen_printf(&e->g, "\n  _p.%s = %s;", name, pointer_arg(e, d));
    }
  }
}

// A kernel on fibers: its body becomes a function of one work-item, run by
// the fiber runtime through a trampoline that reads the argument pack.
static void emit_fiber_kernel(emitter_t* e, const dc__function_t* fn) {
  const char* name = fn->decl->name;
  e->g.fn = fn;
  e->g.in_kernel = true;
  e->mode = DC_EXEC_FIBERS;
  e->hoisted_count = e->localmem_count = 0;
  e->region = 0;
  e->uses_done = false;
  push_scope(e);
  dc__strbuf_t* main_out = e->g.out;
  dc__strbuf_t body;
  dc__strbuf_init(&body, e->g.arena);
  e->g.out = &body;
  dc__cgen_new_line(&e->g);
  dc__cgen_stmt(&e->g, fn->body);
  dc__strbuf_t types;
  emit_storage_typedefs(e, &types);
  e->g.out = main_out;
  dc__cgen_new_line(&e->g);
  dc__cgen_printf(&e->g, "\ntypedef struct dc_kp_%s {", name);
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    dc__cgen_printf(&e->g, " %s;",
                    param_declaration(e, d, dc__cgen_name(&e->g, d)));
  }
  dc__cgen_printf(&e->g, " char dc_unused; } dc_kp_%s;", name);
  dc__cgen_printf(&e->g, "\nstatic void dc_kb_%s(dc__wi_t* _wi", name);
  for (uint32_t i = 0; i < fn->param_count; ++i) {
    const dc__decl_t* d = fn->decl->params[i];
    dc__cgen_printf(&e->g, ", %s",
                    param_declaration(e, d, dc__cgen_name(&e->g, d)));
  }
  puts_out(e, ") { DC_WI_FROM(_wi) DC_WI_LOCAL(_wi)"
              "\n  const size_t* dc_len = _wi->lengths; (void)dc_len;"
              "\n  dc_c_fault_t* dc_fault = _wi->fault; (void)dc_fault;"
              "\n  char* _localmem = _wi->localmem; char* _scratch = 0;"
              " const size_t _wg = 0; (void)_scratch; (void)_wg;");
  dc__strbuf_append(e->g.out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/true);
  dc__strbuf_append(e->g.out, body.data ? body.data : "", body.length);
  puts_out(e, "\n}");
  dc__cgen_new_line(&e->g);
  dc__cgen_printf(&e->g,
                  "\nstatic void dc_kt_%s(void) {"
                  " dc__fiber_group_t* g = dc__fg;"
                  " dc__fiber_t* f = &g->fibers[g->current];"
                  " const dc_kp_%s* p = g->args; dc_kb_%s(&f->wi",
                  name, name, name);
  if (fn->param_count) puts_out(e, ", ");
  emit_param_names(e, fn, "p->");
  puts_out(e, "); f->done = 1; }");
  if (e->g.checked) emit_checked_wrapper(e, name, /*fibers=*/true, false);
  emit_run_head(e, name, "r");
  dc__cgen_printf(&e->g,
                  "\n  dc_kp_%s _p;"
                  "\n  dc__wi_t _proto = {.launch = _launch_in,"
                  " .localmem = _localmem, .lengths = dc_len,"
                  " .fault = dc_fault, .polls = 1, .escape = dc_escape};"
                  "\n  dc__wi_t* const _wi = &_proto; (void)_wi;"
                  "\n  const size_t _ng0 = _launch_in->num_groups[0],"
                  " _ng1 = _launch_in->num_groups[1];"
                  "\n  const size_t* _ls = _launch_in->local_size;",
                  name);
  emit_pack(e, fn);
  puts_out(e, "\n  for (size_t _g = _gbegin; _g < _gend; ++_g) {"
              "\n    _proto.group[0] = _g % _ng0;"
              " _proto.group[1] = (_g / _ng0) % _ng1;"
              " _proto.group[2] = _g / (_ng0 * _ng1);");
  dc__cgen_poll(&e->g, fn->decl->token);
  dc__cgen_printf(&e->g,
                  "\n    dc__fibers_run(&_proto, (int)(_ls[0] * _ls[1] *"
                  " _ls[2]), _scratch, dc_kt_%s, &_p);\n  }\n}",
                  name);
  dc__cgen_printf(&e->g,
                  "\n__attribute__((visibility(\"default\"))) size_t "
                  "dc_k_%s_local_size(void) { size_t _wg = 0;",
                  name);
  dc__strbuf_append(e->g.out, types.data ? types.data : "", types.length);
  emit_layout(e, /*pointers=*/false);
  puts_out(e, "\n  (void)_wg; return _loff;\n}");
  dc__cgen_printf(&e->g,
                  "\n__attribute__((visibility(\"default\"))) size_t "
                  "dc_k_%s_scratch_size(size_t _wg) {"
                  " return DC_FIBER_SCRATCH(_wg); }\n",
                  name);
  pop_scope(e);
}

// lower_c_stmt.c: the back end's hooks into the shared generator: where
// it keeps variables, and the statements it runs its own way.
// Part of lower_c.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

//===-- Storage ---------------------------------------------------------===//

static bool is_promoted(const emitter_t* e, uint32_t id) {
  for (uint32_t i = 0; i < e->promoted_count; ++i) {
    if (e->promoted[i] == id) return true;
  }
  return false;
}

// The hook that names variables: hoisted ones by their slot (or their
// register copy in the open region), __local ones in the group's memory.
static bool cpu_name(dc__cgen_t* g, const dc__decl_t* d) {
  emitter_t* e = (emitter_t*)g;
  const sym_t* s = lookup(e, d);
  if (s == NULL || s->kind == SYM_REMAT) return false;
  if (s->kind == SYM_HOISTED && is_promoted(e, s->id)) {
    dc__cgen_printf(g, "dc_r_%u", s->id);
  } else if (s->kind == SYM_HOISTED) {
    dc__cgen_printf(g, "(dc_h_%u[_w])", s->id);
  } else {
    dc__cgen_printf(g, "(*dc_l_%u)", s->id);
  }
  return true;
}

// typedef <the variable's type, writable> |name|;
static void emit_storage_typedef(emitter_t* e, const dc__decl_t* d,
                                 const char* name) {
  dc__cgen_printf(&e->g, "\ntypedef %s;",
                  dc__cgen_declaration(&e->g, d->type, name, DC_Q_CONST));
}

static bool is_array(const dc__decl_t* d) {
  return d->type->kind == DC_TY_ARRAY;
}

// A block-level declaration is hoisted when a later statement after a
// barrier uses it: only then must its value survive the barrier.
static bool needs_hoisting(const dc__stmt_t* block, uint32_t index,
                           const dc__decl_t* d) {
  uint32_t k = index + 1;
  while (k < block->child_count && !block->children[k]->has_barrier) ++k;
  for (; k < block->child_count; ++k) {
    if (dc__stmt_uses(block->children[k], d)) return true;
  }
  return false;
}

static uint32_t add_storage(emitter_t* e, const dc__decl_t** list,
                            uint32_t* count, uint32_t cap,
                            const dc__decl_t* d) {
  if (*count == cap) {
    fail(e, d->token, "too many variables in one kernel");
    return 0;
  }
  list[*count] = d;
  return (*count)++;
}

// True for a declaration of __local storage, false for everything else,
// including private pointers to __local memory (`__local int* p = a;`).
static bool is_localmem_decl(const dc__stmt_t* s) {
  return s->kind == DC_STMT_DECL && s->declarator_count > 0 &&
         s->declarators[0].decl->type->space == DC_ADDRESS_LOCAL;
}

// A __local declaration in a kernel: storage in the group's local memory.
static void declare_localmem(emitter_t* e, const dc__stmt_t* decl) {
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__decl_t* d = decl->declarators[i].decl;
    uint32_t id = add_storage(e, e->localmem, &e->localmem_count, 256, d);
    declare(e, d, SYM_LOCALMEM, id);
  }
}

// Writes `dc_ht_N tmp = init; memcpy(&dc_h_N[_w], &tmp, ...)`, which works
// for scalars, vectors and arrays with brace initialisers alike.
static void emit_hoisted_init(emitter_t* e, uint32_t id, const dc__decl_t* d) {
  at_line(e, d->token->line);
  dc__cgen_printf(&e->g, " { dc_ht_%u dc_init = ", id);
  dc__cgen_initializer(&e->g, d->init);
  dc__cgen_printf(&e->g,
                  "; __builtin_memcpy(&dc_h_%u[_w], &dc_init, "
                  "sizeof(dc_init)); }",
                  id);
}

// Hoists the variables of |decl|: each gets a slot per work-item.
static void hoist(emitter_t* e, const dc__stmt_t* decl) {
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__decl_t* d = decl->declarators[i].decl;
    uint32_t id = add_storage(e, e->hoisted, &e->hoisted_count, MAX_SYMBOLS,
                              d);
    declare(e, d, SYM_HOISTED, id);
    if (d->init != NULL) {
      emit_hoisted_init(e, id, d);
    } else if (e->g.checked && dc__cgen_holds_pointer(d->type)) {
      // Scratch memory holds what earlier dispatches left: no pointer may
      // be read from it (cgen_checked.c).
      dc__cgen_printf(&e->g,
                      " __builtin_memset(&dc_h_%u[_w], 0, sizeof(dc_h_%u[_w]));",
                      id, id);
    }
  }
}

//===-- Statements ------------------------------------------------------===//

static void emit_return(emitter_t* e) {
  // A work-item that returns skips the rest of its region and, when
  // there are several regions, every later one. Outside user loops that
  // is a plain `continue` of the work-item loop, which keeps it
  // vectorisable.
  if (e->uses_done) puts_out(e, " { dc_done[_w] = 1;");
  if (e->g.loop_depth == 0) {
    puts_out(e, " continue;");
  } else {
    dc__cgen_printf(&e->g, " goto dc_next_%u;", e->region);
  }
  if (e->uses_done) puts_out(e, " }");
}

// The hook for statements: __local declarations, a kernel's returns
// inside work-item loops, and barriers on fibers (regions place theirs at
// group level, lower_c_regions.c).
static bool cpu_stmt(dc__cgen_t* g, const dc__stmt_t* s) {
  emitter_t* e = (emitter_t*)g;
  switch (s->kind) {
    case DC_STMT_DECL:
      if (!g->in_kernel || !is_localmem_decl(s)) return false;
      declare_localmem(e, s);
      return true;
    case DC_STMT_RETURN:
      if (!g->in_kernel || e->mode == DC_EXEC_FIBERS) return false;
      emit_return(e);
      return true;
    case DC_STMT_BARRIER:
      puts_out(e, " dc__fiber_barrier(_wi);");
      return true;
    case DC_STMT_GRID_SYNC:
      puts_out(e, " dc__fiber_grid_sync(_wi);");
      return true;
    default:
      return false;
  }
}

// lower_c_regions.c: barrier kernels: what survives a barrier and how
// control flow around barriers runs once per group.
// Part of lower_c.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

// The built-ins a rematerialised value may call: their result depends
// only on their arguments and the work-item's position.
static bool is_pure_builtin(const dc__builtin_t* b) {
  static const char* const kPure[] = {"min", "max", "clamp", "mad24",
                                      "mul24", "abs"};
  if (b->klass == DC_BUILTIN_WORK_ITEM) return true;
  for (size_t i = 0; i < sizeof(kPure) / sizeof(kPure[0]); ++i) {
    if (strcmp(b->name, kPure[i]) == 0) return true;
  }
  return false;
}

// True for an expression a rematerialised value cannot contain.
static bool varies(const dc__expr_t* x, void* ctx) {
  emitter_t* e = ctx;
  switch (x->kind) {
    case DC_EXPR_INT:
    case DC_EXPR_FLOAT:
    case DC_EXPR_CONSTANT:
    case DC_EXPR_SIZEOF:
    case DC_EXPR_BINARY:
    case DC_EXPR_COND:
    case DC_EXPR_CAST:
    case DC_EXPR_SWIZZLE:
    case DC_EXPR_VECTOR:
      return false;
    case DC_EXPR_NAME: {
      const dc__decl_t* d = x->decl;
      if (d->kind == DC_DECL_ENUM_CONST) return false;
      const sym_t* s = lookup(e, d);
      if (s != NULL && s->kind == SYM_REMAT) return false;
      return !(d->kind == DC_DECL_PARAM && !d->is_assigned);
    }
    case DC_EXPR_BUILTIN:
      return !is_pure_builtin(x->builtin);
    case DC_EXPR_UNARY:  // a dereference, an address, ++ and --
      return strcmp(x->op, "*") == 0 || strcmp(x->op, "&") == 0 ||
             strstr(x->op, "++") != NULL || strstr(x->op, "--") != NULL;
    default:  // calls, assignments, memory reads
      return true;
  }
}

// A private variable can be recomputed in each region instead of kept per
// work-item when its value depends only on the work-item's ids, uniform
// values (kernel parameters the kernel never changes) and other such
// variables, and the kernel never changes it: `int gx = get_global_id(0);`.
// Reads of memory and calls other than pure built-ins rule it out, as
// their result may change between regions.
static bool rematerializable(emitter_t* e, const dc__decl_t* d) {
  return d->init != NULL && !is_array(d) && !d->is_assigned &&
         d->init->kind != DC_EXPR_INIT_LIST &&
         !dc__expr_any(d->init, varies, e);
}

// Whether the kernel being written takes the address of |d| anywhere.
static bool takes_address(const dc__expr_t* x, void* d) {
  return x->kind == DC_EXPR_UNARY && strcmp(x->op, "&") == 0 &&
         dc__expr_root(x->lhs) == d;
}

static bool address_taken(const emitter_t* e, const dc__decl_t* d) {
  return dc__stmt_any(e->g.fn->body, takes_address, (void*)d);
}

// Loads each hoisted scalar or vector in scope into a local for the
// region (dc_r_N), which the compiler keeps in a register; close_region()
// stores it back. Arrays stay in place: copying them would cost more.
static void promote_hoisted(emitter_t* e) {
  e->promoted_count = 0;
  for (uint32_t i = 0; i < e->sym_count; ++i) {
    const sym_t* s = &e->syms[i];
    if (s->kind != SYM_HOISTED || is_array(s->decl) ||
        address_taken(e, s->decl)) {
      continue;  // a pointer to the register copy would outlive the region
    }
    dc__cgen_printf(&e->g, " dc_ht_%u dc_r_%u = dc_h_%u[_w];", s->id, s->id,
                    s->id);
    e->promoted[e->promoted_count++] = s->id;
  }
}

// Declares, at the top of a region, every rematerialised variable in
// scope, in the order they were declared (later ones may use earlier ones).
static void emit_remat(emitter_t* e) {
  for (uint32_t i = 0; i < e->sym_count; ++i) {
    if (e->syms[i].kind != SYM_REMAT) continue;
    // A later declaration of the same name shadows this one.
    bool shadowed = false;
    for (uint32_t k = i + 1; k < e->sym_count && !shadowed; ++k) {
      shadowed = e->syms[k].kind == SYM_REMAT &&
                 strcmp(e->syms[i].decl->name, e->syms[k].decl->name) == 0;
    }
    if (!shadowed) dc__cgen_variable(&e->g, e->syms[i].decl, NULL);
  }
}

// The start of a region: a loop over the group's work-items. The innermost
// loop is marked `omp simd`: work-items of a group do not synchronise
// between barriers (OpenCL makes their interleaving unspecified), so the C
// compiler may run several at once in vector lanes. The counters are ints
// (a group has at most 1024 work-items): kernels usually keep ids in int
// variables, and with int counters their index arithmetic stays affine, so
// the compiler emits contiguous vector accesses instead of gathers.
// Checked code is not marked: its accesses may leave the dispatch, which
// no vector loop can, and gcc's vectoriser then takes minutes over a
// kernel of a few hundred checked accesses for nothing; the version of a
// checked kernel whose accesses were all checked before the chunk ran
// (cgen_ranges.c) is.
static void open_region(emitter_t* e) {
  if (e->region != 0) return;
  e->region = ++e->region_counter;
  puts_out(e,
           "\nfor (int _lz = 0; _lz < (int)_ls2; ++_lz)"
           " for (int _ly = 0; _ly < (int)_ls1; ++_ly)\n");
  if (!e->g.checked || (e->g.skip_prechecked && e->g.prechecked_all)) {
    puts_out(e, "#pragma omp simd\n");
  }
  if (e->mode == DC_EXEC_LOOP) {
    // The run function sets the range: one group's, or a flat chunk's.
    puts_out(e, "for (size_t _lx = _lx_begin; _lx < _lx_end; ++_lx) {");
  } else {
    puts_out(e, "for (int _lx = 0; _lx < (int)_ls0; ++_lx) {"
                " const int _w = (_lz * (int)_ls1 + _ly) * (int)_ls0 + _lx;"
                " (void)_w;");
  }
  if (e->calls_helpers) {
    puts_out(e, " _wi->local[0] = _lx; _wi->local[1] = _ly;"
                " _wi->local[2] = _lz;");
  }
  if (e->uses_done) puts_out(e, " if (dc_done[_w]) continue;");
  puts_out(e, " {");
  emit_remat(e);
  promote_hoisted(e);
  dc__cgen_new_line(&e->g);  // the next user statement needs its #line
  push_scope(e);
}

// Ends the open region. The variables the back end keeps stay visible:
// their storage outlives the region.
static void close_region(emitter_t* e) {
  if (e->region == 0) return;
  if (e->scope_depth) --e->scope_depth;
  for (uint32_t i = 0; i < e->promoted_count; ++i) {
    dc__cgen_printf(&e->g, " dc_h_%u[_w] = dc_r_%u;", e->promoted[i],
                    e->promoted[i]);
  }
  e->promoted_count = 0;
  dc__cgen_printf(&e->g, "\n} dc_next_%u:; }", e->region);
  dc__cgen_new_line(&e->g);
  e->region = 0;
}

// Emits |expr| as work-item 0 sees it: the value of uniform control flow.
// Outside the region loops, the run function's _lx, _ly, _lz and _w are 0.
static void emit_uniform(emitter_t* e, const dc__expr_t* expr) {
  puts_out(e, "({");
  emit_remat(e);
  puts_out(e, " (");
  if (e->calls_helpers) {
    puts_out(e, "_wi->local[0] = 0, _wi->local[1] = 0, _wi->local[2] = 0, ");
  }
  puts_out(e, "(");
  dc__cgen_expr(&e->g, expr);
  puts_out(e, ")); })");
}

static void emit_group_stmt(emitter_t* e, const dc__stmt_t* s);

// A declaration directly inside a block that contains a barrier.
static void emit_group_decl(emitter_t* e, const dc__stmt_t* block,
                            uint32_t index) {
  const dc__stmt_t* decl = block->children[index];
  if (is_localmem_decl(decl)) {
    declare_localmem(e, decl);
    return;
  }
  bool any_hoisted = false, remat = true;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__decl_t* d = decl->declarators[i].decl;
    any_hoisted |= needs_hoisting(block, index, d);
    remat &= rematerializable(e, d);
  }
  open_region(e);
  if (!any_hoisted) {
    dc__cgen_stmt(&e->g, decl);
    return;
  }
  if (remat) {
    // Cheaper to recompute in every region than to keep per work-item,
    // and the compiler then sees work-item ids as what they are.
    for (uint32_t i = 0; i < decl->declarator_count; ++i) {
      declare(e, decl->declarators[i].decl, SYM_REMAT, 0);
      dc__cgen_variable(&e->g, decl->declarators[i].decl, NULL);
    }
    return;
  }
  // All declarators of a hoisted declaration are hoisted together, which
  // keeps declarations like `int a = 1, b = a;` in order.
  hoist(e, decl);
}

// A for loop with a barrier inside: init and step run per work-item, the
// condition once per group.
static void emit_group_for(emitter_t* e, const dc__stmt_t* s) {
  push_scope(e);
  if (s->init && s->init->kind == DC_STMT_DECL) {
    open_region(e);
    hoist(e, s->init);
  } else if (s->init) {
    emit_group_stmt(e, s->init);
  }
  close_region(e);
  puts_out(e, " for (;;) {");
  dc__cgen_poll(&e->g, token_at(e, s->token));
  if (s->value != NULL) {
    puts_out(e, " if (!");
    emit_uniform(e, s->value);
    puts_out(e, ") break;");
  }
  emit_group_stmt(e, s->body);
  if (s->step_value != NULL) {
    open_region(e);
    puts_out(e, " ");
    dc__cgen_expr(&e->g, s->step_value);
    puts_out(e, ";");
    close_region(e);
  }
  close_region(e);
  puts_out(e, " }");
  pop_scope(e);
}

static void emit_group_stmt(emitter_t* e, const dc__stmt_t* s);

// Emits |s| as a C block of group-level code whose regions all close
// inside it.
static void emit_group_block(emitter_t* e, const dc__stmt_t* s) {
  puts_out(e, " {");
  emit_group_stmt(e, s);
  close_region(e);
  puts_out(e, " }");
}

// Emits a statement of a barrier kernel at group level: statements without
// a barrier join the open region; those with one become control flow that
// runs once per group.
static void emit_group_stmt(emitter_t* e, const dc__stmt_t* s) {
  if (e->g.failed) return;
  if (!s->has_barrier) {
    open_region(e);
    dc__cgen_stmt(&e->g, s);
    return;
  }
  at_line(e, token_at(e, s->token)->line);
  switch (s->kind) {
    case DC_STMT_BARRIER:
      close_region(e);  // all work-items reach it before any goes on
      break;
    case DC_STMT_GRID_SYNC:
      // A barrier of the group first, then of the grid: the group's
      // thread waits there for every other group's (see dc/kernel_abi_c.h).
      close_region(e);
      puts_out(e, " _launch->grid_sync(_launch->grid_sync_ctx);");
      break;
    case DC_STMT_BLOCK:
      push_scope(e);
      for (uint32_t i = 0; i < s->child_count; ++i) {
        if (s->children[i]->kind == DC_STMT_DECL) {
          emit_group_decl(e, s, i);
        } else {
          emit_group_stmt(e, s->children[i]);
        }
      }
      close_region(e);
      pop_scope(e);
      break;
    case DC_STMT_IF:
      close_region(e);
      puts_out(e, " if (");
      emit_uniform(e, s->value);
      puts_out(e, ")");
      emit_group_block(e, s->body);
      if (s->else_body) {
        puts_out(e, " else");
        emit_group_block(e, s->else_body);
      }
      break;
    case DC_STMT_FOR:
      // The loop's scope outlives its regions, so the open region (whose
      // scope sits on the same stack) is closed before the loop opens it.
      close_region(e);
      emit_group_for(e, s);
      break;
    case DC_STMT_WHILE:
      close_region(e);
      puts_out(e, " for (;;) {");
      dc__cgen_poll(&e->g, token_at(e, s->token));
      puts_out(e, " if (!");
      emit_uniform(e, s->value);
      puts_out(e, ") break;");
      emit_group_block(e, s->body);
      puts_out(e, " }");
      break;
    case DC_STMT_DO:
      close_region(e);
      puts_out(e, " do {");
      dc__cgen_poll(&e->g, token_at(e, s->token));
      emit_group_block(e, s->body);
      puts_out(e, " } while (");
      emit_uniform(e, s->value);
      puts_out(e, ");");
      break;
    default:  // rejected by check_barrier_placement
      break;
  }
}

//===-- Barrier placement -----------------------------------------------===//

typedef struct placement_t {
  emitter_t* e;
  const dc__stmt_t* loops[MAX_SCOPES];  // enclosing loops and switches
  uint32_t depth;
  bool has_return;
  bool needs_fibers;  // a shape the region transform cannot run
} placement_t;

// Checks that every barrier sits in control flow the region transform can
// run once per group (else the kernel runs on fibers), and notes whether
// the kernel returns early.
static void check_placement(placement_t* p, const dc__stmt_t* s) {
  if (s == NULL) return;
  if (s->kind == DC_STMT_RETURN) p->has_return = true;
  if ((s->has_barrier && (s->kind == DC_STMT_SWITCH ||
                          s->kind == DC_STMT_LABEL)) ||
      s->kind == DC_STMT_GOTO) {
    p->needs_fibers = true;
  }
  if ((s->kind == DC_STMT_BREAK || s->kind == DC_STMT_CONTINUE) &&
      p->depth > 0) {
    const dc__stmt_t* target = p->loops[p->depth - 1];
    if (s->kind == DC_STMT_CONTINUE) {
      for (uint32_t i = p->depth; i-- > 0;) {
        if (p->loops[i]->kind != DC_STMT_SWITCH) {
          target = p->loops[i];
          break;
        }
      }
    }
    if (target->has_barrier) p->needs_fibers = true;
  }
  bool loop = s->kind == DC_STMT_FOR || s->kind == DC_STMT_WHILE ||
              s->kind == DC_STMT_DO || s->kind == DC_STMT_SWITCH;
  if (loop && p->depth < MAX_SCOPES) p->loops[p->depth++] = s;
  for (uint32_t i = 0; i < s->child_count; ++i) {
    check_placement(p, s->children[i]);
  }
  check_placement(p, s->init);
  check_placement(p, s->body);
  check_placement(p, s->else_body);
  if (loop) --p->depth;
}

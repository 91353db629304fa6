// cpu_emit_regions.c: barrier kernels: what survives a barrier and how
// control flow around barriers runs once per group.
// Part of cpu_codegen.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

static bool is_type_keyword(const dc__token_t* t) {
  static const char* const kNames[] = {
      "char",  "uchar",  "short", "ushort", "int",    "uint",    "long",
      "ulong", "float",  "double", "bool",  "size_t", "ptrdiff_t",
      "unsigned", "signed", "const", "intptr_t", "uintptr_t", "sizeof",
  };
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (dc__tok_is(t, kNames[i])) return true;
  }
  return false;
}

static bool is_work_item_function(const dc__token_t* t) {
  static const char* const kNames[] = {
      "get_global_id",   "get_local_id",      "get_group_id",
      "get_local_size",  "get_global_size",   "get_num_groups",
      "get_global_offset", "get_work_dim",    "get_enqueued_local_size",
      "min", "max", "clamp", "mad24", "mul24", "abs",
  };
  for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
    if (dc__tok_is(t, kNames[i])) return true;
  }
  return false;
}

// True if the function body assigns to |name| (other than in the
// declaration at token |declared|), or takes its address.
static bool assigned_in_function(const emitter_t* e, const dc__token_t* name,
                                 uint32_t declared) {
  const dc__stmt_t* body = e->fn->body;
  for (uint32_t k = body->token; k < e->ast->token_count; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (t->kind == DC_TOK_EOF) break;
    if (k == declared || t->kind != DC_TOK_IDENT || t->length != name->length ||
        memcmp(t->text, name->text, t->length) != 0) {
      continue;
    }
    const dc__token_t* prev = k > 0 ? &e->toks[k - 1] : NULL;
    const dc__token_t* next = &e->toks[k + 1];
    if (dc__tok_is(next, ".") && e->toks[k + 2].kind == DC_TOK_IDENT) {
      next = &e->toks[k + 3];  // v.x = ... assigns to v as well
    }
    if (dc__tok_is_assignment(next) || (prev && (dc__tok_is(prev, "++") ||
                                         dc__tok_is(prev, "--") ||
                                         dc__tok_is(prev, "&")))) {
      return true;
    }
  }
  return false;
}

// True if the function body takes the address of |name| anywhere.
static bool address_taken(const emitter_t* e, const dc__token_t* name) {
  for (uint32_t k = e->fn->body->token + 1; k < e->ast->token_count; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (t->kind == DC_TOK_EOF) break;
    if (t->kind == DC_TOK_IDENT && t->length == name->length &&
        memcmp(t->text, name->text, t->length) == 0 &&
        dc__tok_is(&e->toks[k - 1], "&")) {
      return true;
    }
  }
  return false;
}

// A private variable can be recomputed in each region instead of kept per
// work-item when its value depends only on the work-item's ids, uniform
// values (kernel parameters) and other such variables, and the kernel
// never changes it: `int gx = get_global_id(0);`. Reads of memory and calls
// other than pure built-ins rule it out, as their result may change
// between regions.
static bool rematerializable(const emitter_t* e, const dc__stmt_t* decl,
                             uint32_t index) {
  const dc__declarator_t* d = &decl->declarators[index];
  if (d->initializer.begin == d->initializer.end) return false;
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    if (dc__tok_is(&e->toks[k], "[")) return false;  // arrays are stored
  }
  if (assigned_in_function(e, &e->toks[d->name], d->name)) return false;
  for (uint32_t k = d->initializer.begin; k < d->initializer.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    const dc__token_t* prev = k > d->initializer.begin ? &e->toks[k - 1] : NULL;
    if (dc__tok_is(t, "[") || dc__tok_is(t, "->") || dc__tok_is(t, "{")) {
      return false;
    }
    if (dc__tok_is(t, "*") && (prev == NULL || (prev->kind == DC_TOK_PUNCT &&
                                                !dc__tok_is(prev, ")") &&
                                                !dc__tok_is(prev, "]")))) {
      return false;  // a dereference
    }
    if (t->kind != DC_TOK_IDENT) continue;
    const sym_t* s = lookup(e, t);
    bool call = dc__tok_is(&e->toks[k + 1], "(");
    if (s != NULL) {
      if (s->kind != SYM_REMAT &&
          !(s->is_param && !assigned_in_function(e, t, UINT32_MAX))) {
        return false;
      }
    } else if (call && !is_work_item_function(t)) {
      return false;
    } else if (!call && vector_width_of(t) == 0 && !is_type_keyword(t)) {
      return false;  // an unknown name: play safe
    }
  }
  return true;
}

static void emit_remat_decl(emitter_t* e, const sym_t* s) {
  const dc__declarator_t* d = &s->decl->declarators[s->declarator];
  at_line(e, e->toks[d->name].line);
  emit_specifiers(e, s->decl, /*strip_const=*/false);
  emit_text(e, &e->toks[d->name], "", 0);
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    // The declarator's own name is emitted as written, not looked up.
    if (k == d->name) {
      emit_token(e, &e->toks[k]);
    } else {
      emit_range(e, k, k + 1);
    }
  }
  puts_out(e, " =");
  emit_range(e, d->initializer.begin, d->initializer.end);
  puts_out(e, ";");
}

// A declaration directly inside a block that contains a barrier.
static void emit_group_decl(emitter_t* e, const dc__stmt_t* block,
                            uint32_t index) {
  const dc__stmt_t* decl = block->children[index];
  if (is_localmem_decl(e, decl)) {
    declare_localmem(e, decl);
    return;
  }
  bool any_hoisted = false;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    any_hoisted |= needs_hoisting(e, block, index,
                                  &e->toks[decl->declarators[i].name]);
  }
  open_region(e);
  if (!any_hoisted) {
    emit_plain_decl(e, decl);
    return;
  }
  bool remat = true;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    remat &= rematerializable(e, decl, i);
  }
  if (remat) {
    // Cheaper to recompute in every region than to keep per work-item,
    // and the compiler then sees work-item ids as what they are.
    for (uint32_t i = 0; i < decl->declarator_count; ++i) {
      declare(e, &e->toks[decl->declarators[i].name], SYM_REMAT, 0);
      e->syms[e->sym_count - 1].decl = decl;
      e->syms[e->sym_count - 1].declarator = i;
      emit_remat_decl(e, &e->syms[e->sym_count - 1]);
    }
    return;
  }
  // All declarators of a hoisted declaration are hoisted together, which
  // keeps declarations like `int a = 1, b = a;` in order.
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    uint32_t id = add_storage(e, e->hoisted, &e->hoisted_count, MAX_SYMBOLS,
                              decl, i);
    declare(e, &e->toks[d->name], SYM_HOISTED, id);
    if (d->initializer.begin != d->initializer.end) {
      emit_hoisted_init(e, id, d);
    }
  }
}

// A for loop with a barrier inside: init and step run per work-item, the
// condition once per group.
static void emit_group_for(emitter_t* e, const dc__stmt_t* s) {
  push_scope(e);
  if (s->init && s->init->kind == DC_STMT_DECL) {
    open_region(e);
    for (uint32_t i = 0; i < s->init->declarator_count; ++i) {
      const dc__declarator_t* d = &s->init->declarators[i];
      uint32_t id = add_storage(e, e->hoisted, &e->hoisted_count, MAX_SYMBOLS,
                                s->init, i);
      declare(e, &e->toks[d->name], SYM_HOISTED, id);
      if (d->initializer.begin != d->initializer.end) {
        emit_hoisted_init(e, id, d);
      }
    }
  } else if (s->init) {
    emit_group_stmt(e, s->init);
  }
  close_region(e);
  puts_out(e, " for (;;) {");
  if (s->expr.begin != s->expr.end) {
    puts_out(e, " if (!");
    emit_uniform(e, s->expr);
    puts_out(e, ") break;");
  }
  emit_group_stmt(e, s->body);
  if (s->step.begin != s->step.end) {
    open_region(e);
    emit_range(e, s->step.begin, s->step.end);
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
  if (e->failed) return;
  if (!s->has_barrier) {
    open_region(e);
    emit_stmt(e, s);
    return;
  }
  at_line(e, e->toks[s->token].line);
  switch (s->kind) {
    case DC_STMT_BARRIER:
      close_region(e);  // all work-items reach it before any goes on
      break;
    case DC_STMT_GRID_SYNC:
      // A barrier of the group first, then of the grid: the group's
      // thread waits there for every other group's (see cpu_abi.h).
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
      emit_uniform(e, s->expr);
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
      puts_out(e, " for (;;) { if (!");
      emit_uniform(e, s->expr);
      puts_out(e, ") break;");
      emit_group_block(e, s->body);
      puts_out(e, " }");
      break;
    case DC_STMT_DO:
      close_region(e);
      puts_out(e, " do");
      emit_group_block(e, s->body);
      puts_out(e, " while (");
      emit_uniform(e, s->expr);
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

// True if |fn| calls a helper function whose body reaches a barrier.
static const dc__function_t* helper_with_barrier(const emitter_t* e,
                                                 const dc__function_t* fn) {
  if (fn->body == NULL) return NULL;
  for (uint32_t i = 0; i < e->ast->function_count; ++i) {
    const dc__function_t* h = &e->ast->functions[i];
    if (h == fn || !h->calls_barrier || h->is_kernel) continue;
    if (name_used_in(e, &e->toks[h->name], fn->body)) return h;
  }
  return NULL;
}

// Helpers that call helpers with barriers reach a barrier too.
static void propagate_barriers(emitter_t* e) {
  dc__function_t* fns = (dc__function_t*)e->ast->functions;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t i = 0; i < e->ast->function_count; ++i) {
      if (!fns[i].calls_barrier && helper_with_barrier(e, &fns[i])) {
        fns[i].calls_barrier = true;
        changed = true;
      }
    }
  }
}


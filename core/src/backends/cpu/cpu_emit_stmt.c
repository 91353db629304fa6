// cpu_emit_stmt.c: declarations, statements and region loops.
// Part of cpu_codegen.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

//===-- Declarations ----------------------------------------------------===//

// Emits the specifiers of |decl| without address spaces and, when
// |strip_const|, without const (storage the code writes to).
static void emit_specifiers(emitter_t* e, const dc__stmt_t* decl,
                            bool strip_const) {
  for (uint32_t k = decl->specifiers.begin; k < decl->specifiers.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    bool constant = dc__tok_is(t, "__constant") || dc__tok_is(t, "constant");
    if (strip_const && (dc__tok_is(t, "const") || constant)) continue;
    emit_range(e, k, k + 1);
  }
}

// typedef <specifiers> <declarator with its name replaced by |name|>;
static void emit_storage_typedef(emitter_t* e, const storage_t* st,
                                 const char* name) {
  const dc__declarator_t* d = &st->decl->declarators[st->declarator];
  puts_out(e, "\ntypedef");
  emit_specifiers(e, st->decl, /*strip_const=*/true);
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    if (k == d->name) {
      emit_text(e, &e->toks[k], name, strlen(name));
    } else {
      emit_range(e, k, k + 1);
    }
  }
  puts_out(e, ";");
}

static bool name_used_in(const emitter_t* e, const dc__token_t* name,
                         const dc__stmt_t* s);

static bool is_array_declarator(const emitter_t* e, const storage_t* st) {
  const dc__declarator_t* d = &st->decl->declarators[st->declarator];
  for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
    if (dc__tok_is(&e->toks[k], "[")) return true;
  }
  return false;
}

// A block-level declaration is hoisted when a later statement after a
// barrier uses its name: only then must its value survive the barrier.
static bool needs_hoisting(const emitter_t* e, const dc__stmt_t* block,
                           uint32_t index, const dc__token_t* name) {
  uint32_t k = index + 1;
  while (k < block->child_count && !block->children[k]->has_barrier) ++k;
  for (; k < block->child_count; ++k) {
    if (name_used_in(e, name, block->children[k])) return true;
  }
  return false;
}

static bool range_uses(const emitter_t* e, const dc__token_t* name,
                       dc__range_t r) {
  for (uint32_t k = r.begin; k < r.end; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (t->kind == DC_TOK_IDENT && t->length == name->length &&
        memcmp(t->text, name->text, t->length) == 0 &&
        !(k > 0 && dc__tok_is(&e->toks[k - 1], "."))) {
      return true;
    }
  }
  return false;
}

static bool name_used_in(const emitter_t* e, const dc__token_t* name,
                         const dc__stmt_t* s) {
  if (s == NULL) return false;
  if (range_uses(e, name, s->expr) || range_uses(e, name, s->step)) {
    return true;
  }
  for (uint32_t i = 0; i < s->declarator_count; ++i) {
    if (range_uses(e, name, s->declarators[i].declarator) ||
        range_uses(e, name, s->declarators[i].initializer)) {
      return true;
    }
  }
  for (uint32_t i = 0; i < s->child_count; ++i) {
    if (name_used_in(e, name, s->children[i])) return true;
  }
  return name_used_in(e, name, s->init) || name_used_in(e, name, s->body) ||
         name_used_in(e, name, s->else_body);
}

static uint32_t add_storage(emitter_t* e, storage_t* list, uint32_t* count,
                            uint32_t cap, const dc__stmt_t* decl,
                            uint32_t declarator) {
  if (*count == cap) {
    fail(e, &e->toks[decl->token], "too many variables in one kernel");
    return 0;
  }
  list[*count] = (storage_t){decl, declarator};
  return (*count)++;
}

// True for a declaration of __local storage, false for everything else,
// including private pointers to __local memory (`__local int* p = a;`).
static bool is_localmem_decl(const emitter_t* e, const dc__stmt_t* decl) {
  if (decl->address_space != DC_ADDRESS_LOCAL) return false;
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    if (dc__tok_is(&e->toks[decl->declarators[i].declarator.begin], "*")) {
      return false;
    }
  }
  return true;
}

// A __local declaration in a kernel: storage in the group's local memory.
static void declare_localmem(emitter_t* e, const dc__stmt_t* decl) {
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    if (d->initializer.begin != d->initializer.end) {
      fail(e, &e->toks[d->name], "a __local variable cannot be initialised");
      return;
    }
    uint32_t id = add_storage(e, e->localmem, &e->localmem_count, 256, decl, i);
    declare(e, &e->toks[d->name], SYM_LOCALMEM, id);
  }
}

// Writes `dc_ht_N tmp = init; memcpy(&dc_h_N[_w], &tmp, ...)`, which works
// for scalars, vectors and arrays with brace initialisers alike.
static void emit_hoisted_init(emitter_t* e, uint32_t id,
                              const dc__declarator_t* d) {
  at_line(e, e->toks[d->name].line);
  dc__strbuf_printf(e->out, " { dc_ht_%u dc_init =", id);
  emit_range(e, d->initializer.begin, d->initializer.end);
  dc__strbuf_printf(e->out,
                    "; __builtin_memcpy(&dc_h_%u[_w], &dc_init, "
                    "sizeof(dc_init)); }",
                    id);
}

// An ordinary declaration, emitted as C.
static void emit_plain_decl(emitter_t* e, const dc__stmt_t* decl) {
  at_line(e, e->toks[decl->token].line);
  emit_specifiers(e, decl, /*strip_const=*/false);
  for (uint32_t i = 0; i < decl->declarator_count; ++i) {
    const dc__declarator_t* d = &decl->declarators[i];
    if (i > 0) puts_out(e, ",");
    for (uint32_t k = d->declarator.begin; k < d->declarator.end; ++k) {
      // The name is declared here, not looked up: it may shadow a
      // variable the transform renamed (hoisted, promoted, __local).
      if (k == d->name) {
        emit_token(e, &e->toks[k]);
      } else {
        emit_range(e, k, k + 1);
      }
    }
    declare(e, &e->toks[d->name], SYM_PLAIN, 0);
    if (d->initializer.begin != d->initializer.end) {
      puts_out(e, " =");
      emit_range(e, d->initializer.begin, d->initializer.end);
    }
  }
  puts_out(e, ";");
}

//===-- Statements ------------------------------------------------------===//

// What #pragma unroll asked of the loop |s|, as gcc spells it (on a line
// of its own: the next token needs its #line again).
static void emit_unroll(emitter_t* e, const dc__stmt_t* s) {
  if (s->unroll == 0) return;
  int count = s->unroll == DC_UNROLL_FULL    ? 65534
              : s->unroll == DC_UNROLL_NEVER ? 1
              : s->unroll > 65534            ? 65534
                                             : s->unroll;
  dc__strbuf_printf(e->out, "\n#pragma GCC unroll %d\n", count);
  e->line = 0;
}

static void emit_stmt(emitter_t* e, const dc__stmt_t* s);
static void emit_group_stmt(emitter_t* e, const dc__stmt_t* s);

static void emit_remat_decl(emitter_t* e, const sym_t* s);
static bool is_array_declarator(const emitter_t* e, const storage_t* st);
static bool address_taken(const emitter_t* e, const dc__token_t* name);

// Loads each hoisted scalar or vector in scope into a local for the
// region (dc_r_N), which the compiler keeps in a register; close_region()
// stores it back. Arrays stay in place: copying them would cost more.
static void promote_hoisted(emitter_t* e) {
  e->promoted_count = 0;
  for (uint32_t i = 0; i < e->sym_count; ++i) {
    const sym_t* s = &e->syms[i];
    if (s->kind != SYM_HOISTED ||
        is_array_declarator(e, &e->hoisted[s->id]) ||
        address_taken(e, s->name)) {
      continue;  // a pointer to the register copy would outlive the region
    }
    dc__strbuf_printf(e->out, " dc_ht_%u dc_r_%u = dc_h_%u[_w];", s->id,
                      s->id, s->id);
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
      const dc__token_t* a = e->syms[i].name;
      const dc__token_t* b = e->syms[k].name;
      shadowed = a->length == b->length &&
                 memcmp(a->text, b->text, a->length) == 0;
    }
    if (!shadowed) emit_remat_decl(e, &e->syms[i]);
  }
}

// The start of a region: a loop over the group's work-items. The innermost
// loop is marked `omp simd`: work-items of a group do not synchronise
// between barriers (OpenCL makes their interleaving unspecified), so the C
// compiler may run several at once in vector lanes. The counters are ints
// (a group has at most 1024 work-items): kernels usually keep ids in int
// variables, and with int counters their index arithmetic stays affine, so
// the compiler emits contiguous vector accesses instead of gathers.
static void open_region(emitter_t* e) {
  if (e->region != 0) return;
  e->region = ++e->region_counter;
  puts_out(e,
           "\nfor (int _lz = 0; _lz < (int)_ls2; ++_lz)"
           " for (int _ly = 0; _ly < (int)_ls1; ++_ly)"
           "\n#pragma omp simd\n");
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
  e->line = 0;  // the next user token needs its #line again
  push_scope(e);
}

// Ends the open region. Hoisted names declared inside it stay visible:
// their storage outlives the region.
static void close_region(emitter_t* e) {
  if (e->region == 0) return;
  uint32_t mark = e->scope_depth ? e->scopes[e->scope_depth - 1] : 0;
  uint32_t kept = mark;
  for (uint32_t i = mark; i < e->sym_count; ++i) {
    sym_kind_t kind = e->syms[i].kind;
    if (kind == SYM_HOISTED || kind == SYM_REMAT || kind == SYM_LOCALMEM) {
      e->syms[kept++] = e->syms[i];
    }
  }
  e->sym_count = kept;
  if (e->scope_depth) --e->scope_depth;
  for (uint32_t i = 0; i < e->promoted_count; ++i) {
    dc__strbuf_printf(e->out, " dc_h_%u[_w] = dc_r_%u;", e->promoted[i],
                      e->promoted[i]);
  }
  e->promoted_count = 0;
  dc__strbuf_printf(e->out, "\n} dc_next_%u:; }", e->region);
  e->line = 0;
  e->region = 0;
}

// Emits |expr| as work-item 0 sees it: the value of uniform control flow.
// Outside the region loops, the run function's _lx, _ly, _lz and _w are 0.
static void emit_uniform(emitter_t* e, dc__range_t expr) {
  puts_out(e, "({");
  emit_remat(e);
  puts_out(e, " (");
  if (e->calls_helpers) {
    puts_out(e, "_wi->local[0] = 0, _wi->local[1] = 0, _wi->local[2] = 0, ");
  }
  puts_out(e, "(");
  emit_range(e, expr.begin, expr.end);
  puts_out(e, ")); })");
}

static void emit_return(emitter_t* e, const dc__stmt_t* s) {
  if (e->in_kernel && e->mode != DC_EXEC_FIBERS) {
    // A work-item that returns skips the rest of its region and, when
    // there are several regions, every later one. Outside user loops that
    // is a plain `continue` of the work-item loop, which keeps it
    // vectorisable.
    if (e->uses_done) puts_out(e, " { dc_done[_w] = 1;");
    if (e->loop_depth == 0) {
      puts_out(e, " continue;");
    } else {
      dc__strbuf_printf(e->out, " goto dc_next_%u;", e->region);
    }
    if (e->uses_done) puts_out(e, " }");
    return;
  }
  puts_out(e, " return");
  emit_range(e, s->expr.begin, s->expr.end);
  puts_out(e, ";");
}

static void emit_for(emitter_t* e, const dc__stmt_t* s) {
  puts_out(e, " {");
  push_scope(e);
  emit_unroll(e, s);
  puts_out(e, " for (");
  if (s->init && s->init->kind == DC_STMT_DECL) {
    emit_plain_decl(e, s->init);
  } else {
    if (s->init) emit_range(e, s->init->expr.begin, s->init->expr.end);
    puts_out(e, ";");
  }
  emit_range(e, s->expr.begin, s->expr.end);
  puts_out(e, ";");
  emit_range(e, s->step.begin, s->step.end);
  puts_out(e, ")");
  emit_stmt(e, s->body);
  pop_scope(e);
  puts_out(e, " }");
}

// Emits a statement as ordinary C, inside a work-item's context.
static void emit_stmt(emitter_t* e, const dc__stmt_t* s) {
  if (e->failed) return;
  at_line(e, e->toks[s->token].line);
  switch (s->kind) {
    case DC_STMT_BLOCK:
      puts_out(e, " {");
      push_scope(e);
      for (uint32_t i = 0; i < s->child_count; ++i) emit_stmt(e, s->children[i]);
      pop_scope(e);
      puts_out(e, " }");
      break;
    case DC_STMT_DECL:
      if (e->in_kernel && is_localmem_decl(e, s)) {
        declare_localmem(e, s);
      } else {
        emit_plain_decl(e, s);
      }
      break;
    case DC_STMT_EXPR:
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ";");
      break;
    case DC_STMT_IF:
      puts_out(e, " if (");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ")");
      emit_stmt(e, s->body);
      if (s->else_body) {
        puts_out(e, " else");
        emit_stmt(e, s->else_body);
      }
      break;
    case DC_STMT_FOR:
      ++e->loop_depth;
      emit_for(e, s);
      --e->loop_depth;
      break;
    case DC_STMT_WHILE:
    case DC_STMT_SWITCH:
      emit_unroll(e, s);
      puts_out(e, s->kind == DC_STMT_WHILE ? " while (" : " switch (");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ")");
      ++e->loop_depth;
      emit_stmt(e, s->body);
      --e->loop_depth;
      break;
    case DC_STMT_DO:
      emit_unroll(e, s);
      puts_out(e, " do");
      ++e->loop_depth;
      emit_stmt(e, s->body);
      --e->loop_depth;
      puts_out(e, " while (");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ");");
      break;
    case DC_STMT_CASE:
      if (s->expr.begin == s->expr.end) {
        puts_out(e, " default:");
      } else {
        puts_out(e, " case");
        emit_range(e, s->expr.begin, s->expr.end);
        puts_out(e, ":");
      }
      break;
    case DC_STMT_RETURN:
      emit_return(e, s);
      break;
    case DC_STMT_BREAK:
      puts_out(e, " break;");
      break;
    case DC_STMT_CONTINUE:
      puts_out(e, " continue;");
      break;
    case DC_STMT_GOTO:
      puts_out(e, " goto");
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ";");
      break;
    case DC_STMT_LABEL:
      emit_range(e, s->expr.begin, s->expr.end);
      puts_out(e, ":");
      emit_stmt(e, s->body);
      break;
    case DC_STMT_BARRIER:  // regions handle theirs at group level
      puts_out(e, " dc__fiber_barrier(_wi);");
      break;
    case DC_STMT_GRID_SYNC:  // likewise
      puts_out(e, " dc__fiber_grid_sync(_wi);");
      break;
    case DC_STMT_EMPTY:
      puts_out(e, " ;");
      break;
  }
}


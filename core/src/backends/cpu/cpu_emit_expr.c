// cpu_emit_expr.c: expressions, rewritten token by token.
// Part of cpu_codegen.c, which includes it (one translation unit keeps
// the emitter's helpers static); not compiled on its own.
// SPDX-License-Identifier: MIT

//===-- Expressions -----------------------------------------------------===//

static void emit_range(emitter_t* e, uint32_t begin, uint32_t end);

// Recognises vector type names: "float4" gives width 4. 0 if not one.
static unsigned vector_width_of(const dc__token_t* t) {
  static const char* const kBases[] = {"char",  "uchar", "short", "ushort",
                                       "int",   "uint",  "long",  "ulong",
                                       "float", "double"};
  if (t->kind != DC_TOK_IDENT) return 0;
  for (size_t b = 0; b < sizeof(kBases) / sizeof(kBases[0]); ++b) {
    size_t n = strlen(kBases[b]);
    if (t->length <= n || memcmp(t->text, kBases[b], n) != 0) continue;
    const char* digits = t->text + n;
    size_t dn = t->length - n;
    if (dn == 1 && strchr("234", digits[0]) && digits[0] != '\0') {
      return (unsigned)(digits[0] - '0');
    }
    if (dn == 1 && digits[0] == '8') return 8;
    if (dn == 2 && digits[0] == '1' && digits[1] == '6') return 16;
  }
  return 0;
}

// Writes .x as [0] and .xy as DC_SWIZZLE(operand, 0, 1), inserting the
// macro name before the operand that starts at |operand_start|.
static uint32_t emit_swizzle(emitter_t* e, uint32_t i, uint32_t end,
                             size_t operand_start) {
  const dc__token_t* sel = &e->toks[i + 1];
  int lanes[16];
  int n = dc__tok_swizzle(sel, lanes);
  bool assigned = i + 2 < end && dc__tok_is_assignment(&e->toks[i + 2]);
  if (n == 0) {
    fail(e, sel,
         "not a vector component selector (struct members do not exist in "
         "the kernel language)");
    return i + 2;
  }
  if (n == 1) {
    char text[16];
    int len = snprintf(text, sizeof(text), "[%d]", lanes[0]);
    emit_text(e, sel, text, (size_t)len);
    return i + 2;
  }
  if (assigned) {
    fail(e, sel,
         "assigning to several vector components at once is not supported; "
         "assign them one by one");
    return i + 2;
  }
  if (n < 0) {
    char macro[32];
    snprintf(macro, sizeof(macro), " DC_%.*s(", (int)sel->length, sel->text);
    for (char* c = macro + 4; *c && *c != '('; ++c) *c = (char)(*c & ~0x20);
    dc__strbuf_insert(e->out, operand_start, macro);
    puts_out(e, ")");
    return i + 2;
  }
  dc__strbuf_insert(e->out, operand_start, " DC_SWIZZLE(");
  for (int k = 0; k < n; ++k) dc__strbuf_printf(e->out, ", %d", lanes[k]);
  puts_out(e, ")");
  return i + 2;
}

// (float4)(a, b, c, d) and (float4)(x): returns the index after it, or 0
// if |i| does not start a vector literal.
static uint32_t emit_vector_literal(emitter_t* e, uint32_t i, uint32_t end) {
  if (i + 3 >= end) return 0;
  const dc__token_t* type = &e->toks[i + 1];
  unsigned width = vector_width_of(type);
  if (width == 0 || !dc__tok_is(&e->toks[i + 2], ")") ||
      !dc__tok_is(&e->toks[i + 3], "(")) {
    return 0;
  }
  uint32_t close = dc__tok_matching(e->toks, i + 3, end);
  if (e->static_init) {
    // A compound literal is no constant for gcc: a program-scope vector
    // gets a plain initialiser list, its one value repeated for a splat.
    bool splat = true;
    for (uint32_t k = i + 4, d = 0; k < close; ++k) {
      const dc__token_t* t = &e->toks[k];
      if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) ++d;
      if (dc__tok_is(t, ")") || dc__tok_is(t, "]") || dc__tok_is(t, "}")) --d;
      if (d == 0 && dc__tok_is(t, ",")) splat = false;
    }
    emit_text(e, &e->toks[i], "{", 1);
    for (unsigned w = 0; w < (splat ? width : 1); ++w) {
      if (w > 0) puts_out(e, ",");
      emit_range(e, i + 4, close);
    }
    puts_out(e, "}");
    return close + 1;
  }
  int commas = 0, depth = 0;
  for (uint32_t k = i + 4; k < close; ++k) {
    const dc__token_t* t = &e->toks[k];
    if (dc__tok_is(t, "(") || dc__tok_is(t, "[") || dc__tok_is(t, "{")) ++depth;
    if (dc__tok_is(t, ")") || dc__tok_is(t, "]") || dc__tok_is(t, "}")) --depth;
    if (depth == 0 && dc__tok_is(t, ",")) ++commas;
  }
  char head[64];
  snprintf(head, sizeof(head), "%s(%.*s, ", commas == 0 ? "DC_SPLAT" : "DC_VEC",
           (int)type->length, type->text);
  emit_text(e, &e->toks[i], head, strlen(head));
  emit_range(e, i + 4, close);
  puts_out(e, ")");
  return close + 1;
}

// name[index] on a buffer argument, checked when bounds checking is on.
static uint32_t emit_checked_index(emitter_t* e, const sym_t* s, uint32_t i,
                                   uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  uint32_t close = dc__tok_matching(e->toks, i + 1, end);
  const char* head = dc__arena_printf(e->arena, "(*DC_IDX(%s, (",
                                      spelled(e, t));
  if (head == NULL) return close + 1;  // the arena reports it
  emit_text(e, t, head, strlen(head));
  emit_range(e, i + 2, close);
  dc__strbuf_printf(e->out, "), %u, %u))", s->id, t->line);
  return close + 1;
}

static bool is_promoted(const emitter_t* e, uint32_t id) {
  for (uint32_t i = 0; i < e->promoted_count; ++i) {
    if (e->promoted[i] == id) return true;
  }
  return false;
}

// Emits identifier |i|, resolved and rewritten; returns the next index.
static uint32_t emit_identifier(emitter_t* e, uint32_t i, uint32_t end) {
  const dc__token_t* t = &e->toks[i];
  const char* fixed = dc__fixed_spelling(e->arena, e->ast, i);
  if (fixed != NULL) {
    emit_text(e, t, fixed, strlen(fixed));
    return i + 1;
  }
  bool drop;
  const char* spelling = keyword_spelling(t, &drop);
  if (drop) return i + 1;
  // "unsigned char" and "signed char" are C's own: only a plain char
  // becomes dc_char.
  if (spelling && dc__tok_is(t, "char") && i > 0 &&
      (dc__tok_is(&e->toks[i - 1], "unsigned") ||
       dc__tok_is(&e->toks[i - 1], "signed"))) {
    spelling = NULL;
  }
  if (spelling) {
    emit_text(e, t, spelling, strlen(spelling));
    return i + 1;
  }
  if (vector_width_of(t) == 3) {
    fail(e, t, "3-component vector types are not supported; use the "
               "4-component type");
    return i + 1;
  }
  bool call = i + 1 < end && dc__tok_is(&e->toks[i + 1], "(");
  bool indexed = i + 1 < end && dc__tok_is(&e->toks[i + 1], "[");
  const sym_t* s = lookup(e, t);
  char text[64];
  if (s && s->kind == SYM_HOISTED && is_promoted(e, s->id)) {
    snprintf(text, sizeof(text), "dc_r_%u", s->id);
  } else if (s && s->kind == SYM_HOISTED) {
    snprintf(text, sizeof(text), "(dc_h_%u[_w])", s->id);
  } else if (s && s->kind == SYM_LOCALMEM) {
    snprintf(text, sizeof(text), "(*dc_l_%u)", s->id);
  } else if (s && s->kind == SYM_BUFFER && indexed &&
             e->options->bounds_check) {
    return emit_checked_index(e, s, i, end);
  } else if (!s && call) {
    const dc__function_t* f = find_function(e, t);
    if (f && f->is_kernel) {
      fail(e, t, "a kernel cannot call another kernel; move the shared code "
                 "into a helper function");
      return i + 1;
    }
    if (f) {
      emit_token(e, t);
      bool no_args = i + 2 < end && dc__tok_is(&e->toks[i + 2], ")");
      puts_out(e, no_args ? "(_wi" : "(_wi,");
      uint32_t close = dc__tok_matching(e->toks, i + 1, end);
      emit_range(e, i + 2, close);
      puts_out(e, ")");
      return close + 1;
    }
    emit_token(e, t);
    return i + 1;
  } else {
    emit_token(e, t);
    return i + 1;
  }
  emit_text(e, t, text, strlen(text));
  return i + 1;
}

static void emit_range(emitter_t* e, uint32_t begin, uint32_t end) {
  size_t operand_start = e->out->length;
  const dc__token_t* prev = NULL;
  for (uint32_t i = begin; i < end && !e->failed;) {
    const dc__token_t* t = &e->toks[i];
    bool after_operand =
        prev && (prev->kind == DC_TOK_IDENT || dc__tok_is(prev, ")") ||
                 dc__tok_is(prev, "]"));
    uint32_t next;
    if (dc__tok_is(t, ".") && i + 1 < end &&
        e->ast->token_names[i + 1] == DC_NAME_FIELD) {
      emit_token(e, t);  // a member of a struct or union
      emit_token(e, &e->toks[i + 1]);
      next = i + 2;
    } else if (dc__tok_is(t, ".") && i + 1 < end &&
               e->toks[i + 1].kind == DC_TOK_IDENT) {
      next = emit_swizzle(e, i, end, operand_start);
    } else if (dc__tok_is(t, "(") && !after_operand &&
               (next = emit_vector_literal(e, i, end)) != 0) {
      // a vector literal is an operand of its own
    } else if (dc__tok_is(t, "(") || dc__tok_is(t, "[") ||
               dc__tok_is(t, "{")) {
      // A call or an index extends the operand before it; any other
      // group (parentheses, a cast, braces) starts a new operand.
      bool postfix = after_operand && !dc__tok_is(t, "{");
      size_t group_start = e->out->length;
      uint32_t close = dc__tok_matching(e->toks, i, end);
      emit_token(e, t);
      emit_range(e, i + 1, close);
      if (close < end) emit_token(e, &e->toks[close]);
      if (!postfix) operand_start = group_start;
      next = close + 1;
    } else if (t->kind == DC_TOK_IDENT) {
      if (!(prev && (dc__tok_is(prev, ".") || dc__tok_is(prev, "->")))) {
        operand_start = e->out->length;
      }
      next = emit_identifier(e, i, end);
    } else {
      if (t->kind != DC_TOK_PUNCT) operand_start = e->out->length;
      emit_token(e, t);
      next = i + 1;
    }
    prev = &e->toks[next - 1];
    i = next;
  }
}


// fault.c: fault injection (dc/fault.h): the rules, their parser and the
// check every site calls.
//
// Each context holds its rules (dc__fault_set_t) under a lock of its own.
// Fault injection is a testing tool: what matters is that a context with
// no rule pays a single relaxed load per call (its rule count, read by the
// inline dc__fault_check), and that a rule's decisions are reproducible,
// which a rule's generator advanced under the lock gives.
// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_internal.h"
#include "fault_internal.h"

#define SITE_MASK                                                   \
  ((uint32_t)(DC_FAULT_LAUNCH | DC_FAULT_COPY | DC_FAULT_ALLOC |    \
              DC_FAULT_COMPILE))
#define NAME_SIZE 128
#define DEVICE_SIZE sizeof(((dc_device_info_t*)0)->name)

typedef struct dc__fault_rule_t rule_t;
struct dc__fault_rule_t {
  rule_t* next;
  uint32_t id;
  dc_fault_rule_t spec;    // as given; |device| and |name| point below
  char device[DEVICE_SIZE];
  bool exact_device;       // |device| names a device, not only a backend
  char name[NAME_SIZE];
  uint64_t state;          // the generator of |rate|
  uint64_t matched;
  uint64_t injected;
  uint64_t tripped_at;     // permanent: the matching call it first fired on
};

static const struct {
  dc_fault_site_t site;
  const char* word;    // in DC_FAULTS
  const char* action;  // in messages
  const char* noun;
} kSites[] = {
    {DC_FAULT_LAUNCH, "launch", "launch", "kernel"},
    {DC_FAULT_COPY, "copy", "copy", "buffer"},
    {DC_FAULT_ALLOC, "alloc", "allocation", "buffer"},
    {DC_FAULT_COMPILE, "compile", "compile", "program"},
};
#define SITE_COUNT (sizeof(kSites) / sizeof(kSites[0]))
#define SITE_WORDS "launch, copy, alloc, compile"

static void free_rules(dc_allocator_t allocator, rule_t* rule) {
  while (rule != NULL) {
    rule_t* next = rule->next;
    dc_allocator_free(allocator, rule, sizeof(*rule));
    rule = next;
  }
}

//===-- Deciding --------------------------------------------------------===//

// splitmix64: small, fast and good enough for coin flips.
static uint64_t next_random(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static bool matches(const rule_t* r, dc_fault_site_t site,
                    const dc_device_t* device, const char* name) {
  if ((r->spec.sites & (uint32_t)site) == 0) return false;
  if (r->device[0] != '\0') {
    // A device's own name wins over a backend of that name: "cpu" is the
    // first CPU device, not cpu:1.
    bool same = device != NULL &&
                (strcmp(device->info.name, r->device) == 0 ||
                 (!r->exact_device &&
                  strcmp(device->info.backend, r->device) == 0));
    if (!same) return false;
  }
  return r->name[0] == '\0' || (name != NULL && strcmp(name, r->name) == 0);
}

// Decides about the matching call just counted in |r|->matched.
static bool fires(rule_t* r) {
  if (r->spec.limit != 0 && r->injected >= r->spec.limit) return false;
  if (r->tripped_at != 0) return true;
  bool fire = true;
  if (r->spec.nth != 0) {
    fire = r->matched == r->spec.nth;
  } else if (r->spec.rate > 0.0) {
    double draw = (double)(next_random(&r->state) >> 11) * 0x1.0p-53;
    fire = draw < r->spec.rate;
  }
  if (fire && r->spec.permanent) r->tripped_at = r->matched;
  return fire;
}

static dc_status_t status_of(const rule_t* r, dc_fault_site_t site) {
  if (r->spec.status != DC_OK) return r->spec.status;
  if (r->spec.permanent) return DC_ERR_DEVICE_LOST;
  return site == DC_FAULT_ALLOC ? DC_ERR_OUT_OF_MEMORY : DC_ERR_UNAVAILABLE;
}

static void describe_fault(const rule_t* r, dc_fault_site_t site,
                           const dc_device_t* device, const char* name,
                           char* buf, size_t size) {
  size_t s = 0;
  while (s + 1 < SITE_COUNT && kSites[s].site != site) ++s;
  char what[NAME_SIZE + 48];
  if (name != NULL && name[0] != '\0') {
    snprintf(what, sizeof(what), "%s '%s'", kSites[s].noun, name);
  } else {
    snprintf(what, sizeof(what), "an unnamed %s", kSites[s].noun);
  }
  char since[48] = "";
  if (r->tripped_at != 0 && r->tripped_at != r->matched) {
    snprintf(since, sizeof(since), ", permanent since call %llu",
             (unsigned long long)r->tripped_at);
  }
  snprintf(buf, size,
           "injected fault: %s of %s on %s (rule %u, matching call %llu%s)%s",
           kSites[s].action, what, device != NULL ? device->info.name : "?",
           r->id, (unsigned long long)r->matched, since,
           r->spec.halfway ? ", halfway: the first half moved" : "");
}

dc_status_t dc__fault_check_slow(dc_context_t* ctx, dc_fault_site_t site,
                                 const dc_device_t* device, const char* name,
                                 bool* out_halfway) {
  char message[440];
  dc_status_t status = DC_OK;
  dc__fault_set_t* set = &ctx->faults;
  pthread_mutex_lock(&set->lock);
  for (rule_t* r = set->rules; r != NULL; r = r->next) {
    if (!matches(r, site, device, name)) continue;
    r->matched += 1;
    if (!fires(r)) continue;
    r->injected += 1;
    status = status_of(r, site);
    if (out_halfway != NULL) *out_halfway = r->spec.halfway;
    describe_fault(r, site, device, name, message, sizeof(message));
    break;
  }
  pthread_mutex_unlock(&set->lock);
  if (status == DC_OK) return DC_OK;
  DC_LOG(ctx, DC_LOG_DEBUG, "fault", "%s: %s", message,
         dc_status_name(status));
  return DC_FAIL(status, "%s", message);
}

//===-- Rules -----------------------------------------------------------===//

// Reports a bad rule: "<prefix>: <detail>[, in rule '<text>']".
static dc_status_t rule_error(const char* prefix, const char* text,
                              int length, const char* format, ...)
    DC_PRINTF_LIKE(4, 5);
static dc_status_t rule_error(const char* prefix, const char* text,
                              int length, const char* format, ...) {
  char detail[512];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof(detail), format, args);
  va_end(args);
  if (text == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: %s", prefix, detail);
  }
  return DC_FAIL(DC_ERR_INVALID_ARGUMENT, "%s: %s, in rule '%.*s'", prefix,
                 detail, length, text);
}

// Writes "cpu, cuda:0" into |buf|.
static const char* device_names(const dc_context_t* ctx, char* buf,
                                size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < ctx->device_count && used < size; ++i) {
    int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                     ctx->devices[i]->info.name);
    if (n > 0) used += (size_t)n;
  }
  return buf;
}

static bool is_device_or_backend(const dc_context_t* ctx, const char* name) {
  for (size_t i = 0; i < ctx->device_count; ++i) {
    const dc_device_info_t* info = &ctx->devices[i]->info;
    if (strcmp(info->name, name) == 0 || strcmp(info->backend, name) == 0) {
      return true;
    }
  }
  return false;
}

// Checks |spec|; |text| (NULL for dc_fault_add) is the rule as written.
static dc_status_t check_rule(const dc_context_t* ctx,
                              const dc_fault_rule_t* spec,
                              const char* prefix, const char* text,
                              int length) {
  if (spec->sites == 0) {
    return rule_error(prefix, text, length,
                      "sites is 0 (a mask of DC_FAULT_LAUNCH, "
                      "DC_FAULT_COPY, DC_FAULT_ALLOC, DC_FAULT_COMPILE)");
  }
  if ((spec->sites & ~SITE_MASK) != 0) {
    return rule_error(prefix, text, length,
                      "sites 0x%x has bits that are no dc_fault_site_t",
                      (unsigned)spec->sites);
  }
  if (spec->status != DC_OK &&
      strcmp(dc_status_name(spec->status), "UNKNOWN_STATUS") == 0) {
    return rule_error(prefix, text, length,
                      "status %d is not a dc_status_t error code",
                      (int)spec->status);
  }
  if (!(spec->rate >= 0.0 && spec->rate <= 1.0)) {
    return rule_error(prefix, text, length, "rate %g is outside [0, 1]",
                      spec->rate);
  }
  if (spec->nth != 0 && spec->rate > 0.0) {
    return rule_error(prefix, text, length,
                      "nth (%llu) and rate (%g) exclude each other",
                      (unsigned long long)spec->nth, spec->rate);
  }
  if (spec->seed != 0 && spec->rate == 0.0) {
    return rule_error(prefix, text, length,
                      "seed %llu is given without a rate (a seed drives "
                      "the draws of rate)",
                      (unsigned long long)spec->seed);
  }
  if (spec->halfway && spec->sites != (uint32_t)DC_FAULT_COPY) {
    return rule_error(prefix, text, length,
                      "halfway applies to copies only, and the rule also "
                      "watches other sites (a halfway rule's sites must be "
                      "DC_FAULT_COPY alone)");
  }
  if (spec->device != NULL && spec->device[0] == '\0') {
    return rule_error(prefix, text, length,
                      "device is empty (NULL matches every device)");
  }
  if (spec->device != NULL && !is_device_or_backend(ctx, spec->device)) {
    char names[256];
    return rule_error(prefix, text, length,
                      "'%s' is neither a device nor a backend of this "
                      "context (devices: %s)",
                      spec->device, device_names(ctx, names, sizeof(names)));
  }
  if (spec->name != NULL && spec->name[0] == '\0') {
    return rule_error(prefix, text, length,
                      "name is empty (NULL matches every name)");
  }
  if (spec->name != NULL && strlen(spec->name) >= NAME_SIZE) {
    return rule_error(prefix, text, length,
                      "name '%.40s...' is longer than %d characters",
                      spec->name, NAME_SIZE - 1);
  }
  return DC_OK;
}

// Checks |spec| and copies it into a new rule, not yet registered.
static dc_status_t make_rule(dc_context_t* ctx, const dc_fault_rule_t* spec,
                             const char* prefix, const char* text,
                             int length, rule_t** out_rule) {
  DC_RETURN_IF_ERROR(check_rule(ctx, spec, prefix, text, length));
  rule_t* r = dc_allocator_calloc(dc_context_allocator(ctx), 1, sizeof(*r));
  if (r == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate a fault rule",
                   prefix);
  }
  r->spec = *spec;
  r->spec.device = NULL;
  r->spec.name = NULL;
  if (spec->device != NULL) {
    dc__strlcpy(r->device, spec->device, sizeof(r->device));
    r->spec.device = r->device;
    for (size_t i = 0; i < ctx->device_count; ++i) {
      r->exact_device |= strcmp(ctx->devices[i]->info.name, r->device) == 0;
    }
  }
  if (spec->name != NULL) {
    dc__strlcpy(r->name, spec->name, sizeof(r->name));
    r->spec.name = r->name;
  }
  r->state = spec->seed;
  *out_rule = r;
  return DC_OK;
}

// Registers the |count| rules chained from |rules|, giving them the next
// ids; the id of the first goes to |out_first_id| (may be NULL).
static void register_rules(dc_context_t* ctx, rule_t* rules, size_t count,
                           uint32_t* out_first_id) {
  dc__fault_set_t* set = &ctx->faults;
  pthread_mutex_lock(&set->lock);
  rule_t** tail = &set->rules;
  while (*tail != NULL) tail = &(*tail)->next;
  *tail = rules;
  if (out_first_id != NULL) *out_first_id = set->next_id;
  for (rule_t* r = rules; r != NULL; r = r->next) r->id = set->next_id++;
  atomic_fetch_add_explicit(&set->rule_count, (unsigned)count,
                            memory_order_relaxed);
  pthread_mutex_unlock(&set->lock);
}

dc_status_t dc_fault_add(dc_context_t* context, const dc_fault_rule_t* rule,
                         uint32_t* out_id) {
  static const char* fn = "dc_fault_add";
  if (out_id != NULL) *out_id = 0;
  DC_REQUIRE_ARG(context, fn);
  DC_REQUIRE_ARG(rule, fn);
  rule_t* r = NULL;
  DC_RETURN_IF_ERROR(make_rule(context, rule, fn, NULL, 0, &r));
  register_rules(context, r, 1, out_id);
  return DC_OK;
}

dc_status_t dc_fault_remove(dc_context_t* context, uint32_t id) {
  DC_REQUIRE_ARG(context, "dc_fault_remove");
  dc__fault_set_t* set = &context->faults;
  pthread_mutex_lock(&set->lock);
  rule_t** link = &set->rules;
  while (*link != NULL && (*link)->id != id) link = &(*link)->next;
  rule_t* found = *link;
  if (found != NULL) {
    *link = found->next;
    found->next = NULL;
    atomic_fetch_sub_explicit(&set->rule_count, 1u, memory_order_relaxed);
  }
  pthread_mutex_unlock(&set->lock);
  if (found == NULL) {
    return DC_FAIL(DC_ERR_NOT_FOUND,
                   "dc_fault_remove: the context has no fault rule %u", id);
  }
  free_rules(dc_context_allocator(context), found);
  return DC_OK;
}

// Takes every rule off |set|; returns them. Called with the lock held.
static rule_t* unlink_all(dc__fault_set_t* set) {
  rule_t* rules = set->rules;
  unsigned count = 0;
  for (rule_t* r = rules; r != NULL; r = r->next) ++count;
  set->rules = NULL;
  atomic_fetch_sub_explicit(&set->rule_count, count, memory_order_relaxed);
  return rules;
}

void dc_fault_clear(dc_context_t* context) {
  if (context == NULL) return;
  dc__fault_set_t* set = &context->faults;
  pthread_mutex_lock(&set->lock);
  rule_t* rules = unlink_all(set);
  pthread_mutex_unlock(&set->lock);
  free_rules(dc_context_allocator(context), rules);
}

dc_status_t dc_fault_stats(dc_context_t* context, uint32_t id,
                           dc_fault_stats_t* out_stats) {
  static const char* fn = "dc_fault_stats";
  DC_REQUIRE_ARG(context, fn);
  DC_REQUIRE_ARG(out_stats, fn);
  dc__fault_set_t* set = &context->faults;
  pthread_mutex_lock(&set->lock);
  rule_t* r = set->rules;
  while (r != NULL && r->id != id) r = r->next;
  if (r != NULL) {
    out_stats->matched = r->matched;
    out_stats->injected = r->injected;
  }
  pthread_mutex_unlock(&set->lock);
  if (r == NULL) {
    return DC_FAIL(DC_ERR_NOT_FOUND, "%s: the context has no fault rule %u",
                   fn, id);
  }
  return DC_OK;
}

//===-- The DC_FAULTS syntax --------------------------------------------===//

// Trims spaces from both ends of |s| in place.
static char* trim(char* s) {
  while (isspace((unsigned char)*s)) ++s;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

static bool parse_u64(const char* text, uint64_t* out) {
  if (!isdigit((unsigned char)text[0])) return false;
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = (uint64_t)v;
  return true;
}

static bool parse_rate(const char* text, double* out) {
  if (!(isdigit((unsigned char)text[0]) || text[0] == '.')) return false;
  char* end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || *end != '\0' || !(v > 0.0 && v <= 1.0)) return false;
  *out = v;
  return true;
}

// A status name in any case, with or without DC_ and ERR_.
static bool parse_status(const char* text, dc_status_t* out) {
  char upper[40];
  size_t n = 0;
  for (; text[n] != '\0' && n + 1 < sizeof(upper); ++n) {
    upper[n] = (char)toupper((unsigned char)text[n]);
  }
  if (text[n] != '\0') return false;
  upper[n] = '\0';
  const char* name = upper;
  if (strncmp(name, "DC_", 3) == 0) name += 3;
  if (strncmp(name, "ERR_", 4) == 0) name += 4;
  return dc_status_from_name(name, out);
}

static dc_status_t parse_sites(const char* prefix, const char* text,
                               int length, char* field, uint32_t* sites) {
  if (field[0] == '\0') {
    return rule_error(prefix, text, length,
                      "the rule names no site (" SITE_WORDS ")");
  }
  for (char* word = field; word != NULL;) {
    char* comma = strchr(word, ',');
    if (comma != NULL) *comma = '\0';
    word = trim(word);
    size_t s = 0;
    while (s < SITE_COUNT && !dc__str_ieq(word, kSites[s].word)) ++s;
    if (s == SITE_COUNT) {
      return rule_error(prefix, text, length,
                        "'%s' is not a fault site (" SITE_WORDS ")", word);
    }
    *sites |= (uint32_t)kSites[s].site;
    word = comma != NULL ? comma + 1 : NULL;
  }
  return DC_OK;
}

enum {
  KEY_RATE,
  KEY_SEED,
  KEY_NTH,
  KEY_LIMIT,
  KEY_PERMANENT,
  KEY_HALFWAY,
  KEY_STATUS,
  KEY_DEVICE,
  KEY_NAME,
  KEY_COUNT
};
static const char* const kKeys[KEY_COUNT] = {
    "rate",    "seed",   "nth",    "limit", "permanent",
    "halfway", "status", "device", "name"};
static const char* const kKeyExamples[KEY_COUNT] = {
    "rate=0.1", "seed=7", "nth=3", "limit=2", "permanent", "halfway",
    "status=UNAVAILABLE", "device=cpu", "name=blur"};

static dc_status_t parse_field(const char* prefix, const char* text,
                               int length, char* field,
                               dc_fault_rule_t* rule, bool* seen) {
  if (field[0] == '\0') {
    return rule_error(prefix, text, length, "a field is empty");
  }
  char* equals = strchr(field, '=');
  if (equals != NULL) *equals = '\0';
  char* key = trim(field);
  char* value = equals != NULL ? trim(equals + 1) : NULL;
  int k = 0;
  while (k < KEY_COUNT && !dc__str_ieq(key, kKeys[k])) ++k;
  if (k == KEY_COUNT) {
    return rule_error(prefix, text, length,
                      "'%s' is not a key (rate, seed, nth, limit, "
                      "permanent, halfway, status, device, name)",
                      key);
  }
  if (seen[k]) {
    return rule_error(prefix, text, length, "'%s' is given twice", kKeys[k]);
  }
  seen[k] = true;
  if (k == KEY_PERMANENT || k == KEY_HALFWAY) {
    if (value != NULL) {
      return rule_error(prefix, text, length, "'%s=%s': %s takes no value",
                        kKeys[k], value, kKeys[k]);
    }
    *(k == KEY_PERMANENT ? &rule->permanent : &rule->halfway) = true;
    return DC_OK;
  }
  if (value == NULL || value[0] == '\0') {
    return rule_error(prefix, text, length, "'%s' needs a value, as in %s",
                      kKeys[k], kKeyExamples[k]);
  }
  switch (k) {
    case KEY_RATE:
      if (parse_rate(value, &rule->rate)) return DC_OK;
      return rule_error(prefix, text, length,
                        "'rate=%s' is not a probability (0 < rate <= 1)",
                        value);
    case KEY_SEED:
      if (parse_u64(value, &rule->seed)) return DC_OK;
      return rule_error(prefix, text, length,
                        "'seed=%s' is not an unsigned integer", value);
    case KEY_NTH:
    case KEY_LIMIT: {
      uint64_t* target = k == KEY_NTH ? &rule->nth : &rule->limit;
      if (parse_u64(value, target) && *target != 0) return DC_OK;
      return rule_error(prefix, text, length,
                        "'%s=%s' is not a positive integer", kKeys[k], value);
    }
    case KEY_STATUS:
      if (!parse_status(value, &rule->status)) {
        return rule_error(prefix, text, length,
                          "'status=%s' is not a status name (e.g. "
                          "UNAVAILABLE, OUT_OF_MEMORY, DEVICE_LOST)",
                          value);
      }
      if (rule->status == DC_OK) {
        return rule_error(prefix, text, length,
                          "'status=%s' is not an error", value);
      }
      return DC_OK;
    case KEY_DEVICE:
      rule->device = value;
      return DC_OK;
    default:
      rule->name = value;
      return DC_OK;
  }
}

// The key |field| starts with ("rate", "rate=...", " permanent "), as an
// index of kKeys, or -1; |*after| is what follows it (spaces skipped).
static int leading_key(const char* field, char* after) {
  while (isspace((unsigned char)*field)) ++field;
  char word[16];
  size_t n = 0;
  for (; isalpha((unsigned char)field[n]) && n + 1 < sizeof(word); ++n) {
    word[n] = field[n];
  }
  word[n] = '\0';
  const char* rest = field + n;
  while (isspace((unsigned char)*rest)) ++rest;
  *after = *rest;
  for (int k = 0; k < KEY_COUNT; ++k) {
    if (dc__str_ieq(word, kKeys[k])) return k;
  }
  return -1;
}

// Whether |field| starts with a key, alone or with a value.
static bool starts_with_key(const char* field) {
  char after;
  int k = leading_key(field, &after);
  return k >= 0 && (after == '=' || after == ':' || after == '\0');
}

// Whether |field| is "device=..." or "name=...", whose values may hold
// ':' (device names do: "cuda:0").
static bool takes_colons(const char* field) {
  char after;
  int k = leading_key(field, &after);
  return after == '=' && (k == KEY_DEVICE || k == KEY_NAME);
}

// Parses the rule |text| (|length| characters), using |work| (a copy of
// it, NUL-terminated) as scratch, into a new rule.
static dc_status_t parse_rule(dc_context_t* ctx, const char* prefix,
                              const char* text, int length, char* work,
                              rule_t** out_rule) {
  dc_fault_rule_t rule = {0};
  bool seen[KEY_COUNT] = {false};
  char* field = work;
  for (bool first = true;; first = false) {
    char* colon = strchr(field, ':');
    // A ':' in a device or a name is part of it unless a key follows.
    while (!first && colon != NULL && takes_colons(field) &&
           !starts_with_key(colon + 1)) {
      colon = strchr(colon + 1, ':');
    }
    if (colon != NULL) *colon = '\0';
    char* f = trim(field);
    DC_RETURN_IF_ERROR(
        first ? parse_sites(prefix, text, length, f, &rule.sites)
              : parse_field(prefix, text, length, f, &rule, seen));
    if (colon == NULL) break;
    field = colon + 1;
  }
  return make_rule(ctx, &rule, prefix, text, length, out_rule);
}

// Parses every rule of |spec| and registers them all, or none.
static dc_status_t parse_spec(dc_context_t* ctx, const char* prefix,
                              const char* spec, size_t* out_count) {
  dc_allocator_t allocator = dc_context_allocator(ctx);
  size_t size = strlen(spec) + 1;
  char* work = dc_allocator_malloc(allocator, size);
  if (work == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes",
                   prefix, size);
  }
  rule_t* rules = NULL;
  rule_t** tail = &rules;
  size_t count = 0;
  dc_status_t status = DC_OK;
  for (const char* p = spec; status == DC_OK;) {
    const char* end = strchr(p, ';');
    if (end == NULL) end = p + strlen(p);
    const char* begin = p;
    const char* stop = end;
    while (begin < stop && isspace((unsigned char)*begin)) ++begin;
    while (stop > begin && isspace((unsigned char)stop[-1])) --stop;
    if (stop > begin) {
      size_t n = (size_t)(stop - begin);
      memcpy(work, begin, n);
      work[n] = '\0';
      status = parse_rule(ctx, prefix, begin, (int)n, work, tail);
      if (status == DC_OK) {
        tail = &(*tail)->next;
        ++count;
      }
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  dc_allocator_free(allocator, work, size);
  if (status == DC_OK && count > 0) register_rules(ctx, rules, count, NULL);
  if (status != DC_OK) {
    free_rules(allocator, rules);
    return status;
  }
  *out_count = count;
  return DC_OK;
}

dc_status_t dc_fault_parse(dc_context_t* context, const char* spec) {
  DC_REQUIRE_ARG(context, "dc_fault_parse");
  DC_REQUIRE_ARG(spec, "dc_fault_parse");
  size_t count = 0;
  return parse_spec(context, "dc_fault_parse", spec, &count);
}

//===-- The context's side ----------------------------------------------===//

dc_status_t dc__fault_init(dc_context_t* ctx) {
  const char* spec = getenv("DC_FAULTS");
  if (spec == NULL || spec[0] == '\0') return DC_OK;
  size_t count = 0;
  DC_RETURN_IF_ERROR(
      parse_spec(ctx, "dc_context_create: DC_FAULTS", spec, &count));
  if (count > 0) {
    DC_LOG(ctx, DC_LOG_WARN, "fault",
           "fault injection is on: DC_FAULTS='%s' (%zu rule(s))", spec,
           count);
  }
  return DC_OK;
}

// Writes |r| in the DC_FAULTS syntax into |buf|.
static void describe_rule(const rule_t* r, char* buf, size_t size) {
  size_t used = 0;
#define APPEND(...)                                                     \
  do {                                                                  \
    int n_ = used < size ? snprintf(buf + used, size - used, __VA_ARGS__) \
                         : 0;                                           \
    if (n_ > 0) used += (size_t)n_;                                     \
  } while (0)
  buf[0] = '\0';
  const char* sep = "";
  for (size_t s = 0; s < SITE_COUNT; ++s) {
    if (r->spec.sites & (uint32_t)kSites[s].site) {
      APPEND("%s%s", sep, kSites[s].word);
      sep = ",";
    }
  }
  if (r->spec.nth) APPEND(":nth=%llu", (unsigned long long)r->spec.nth);
  if (r->spec.rate > 0.0) {
    APPEND(":rate=%g:seed=%llu", r->spec.rate,
           (unsigned long long)r->spec.seed);
  }
  if (r->spec.limit) APPEND(":limit=%llu", (unsigned long long)r->spec.limit);
  if (r->spec.permanent) APPEND(":permanent");
  if (r->spec.halfway) APPEND(":halfway");
  if (r->spec.status) APPEND(":status=%s", dc_status_name(r->spec.status));
  if (r->device[0]) APPEND(":device=%s", r->device);
  if (r->name[0]) APPEND(":name=%s", r->name);
#undef APPEND
}

void dc__fault_set_init(dc__fault_set_t* set) {
  pthread_mutex_init(&set->lock, NULL);
  atomic_init(&set->rule_count, 0u);
  set->rules = NULL;
  set->next_id = 1;
}

void dc__fault_forget(dc_context_t* ctx) {
  dc__fault_set_t* set = &ctx->faults;
  pthread_mutex_lock(&set->lock);
  rule_t* rules = unlink_all(set);
  pthread_mutex_unlock(&set->lock);
  for (const rule_t* r = rules; r != NULL; r = r->next) {
    char text[NAME_SIZE + 160];
    describe_rule(r, text, sizeof(text));
    DC_LOG(ctx, DC_LOG_INFO, "fault",
           "rule %u (%s): %llu matching call(s), %llu fault(s)", r->id, text,
           (unsigned long long)r->matched, (unsigned long long)r->injected);
  }
  free_rules(dc_context_allocator(ctx), rules);
  pthread_mutex_destroy(&set->lock);
}

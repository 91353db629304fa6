// registry.c: the process-wide backend registry and device discovery.
//
// The built-in backends are one table, kBuiltin, which both the reserved
// names and discovery read: this is the one place in the core that names
// a backend. A backend list (DC_DEVICES, dc_context_params_t.backends) is
// comma-separated names; "all" stands for every backend enabled by
// default (the built-in ones marked so, and the registered ones), and may
// be combined with others ("all,opencl").
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cuda/cuda_internal.h"
#include "backends/opencl/opencl_internal.h"
#include "context_internal.h"

#define MAX_BACKENDS 16

typedef struct builtin_backend_t {
  const char* name;
  dc_status_t (*enumerate)(dc_context_t* ctx);
  // Part of "all". OpenCL is not: its drivers take long to load (pocl
  // brings up LLVM), which would slow every default context down, and
  // its GPUs would become the default device; it is enabled by naming it.
  bool in_all;
} builtin_backend_t;

static dc_status_t enumerate_cpu(dc_context_t* ctx) {
  return dc__cpu_enumerate(ctx, NULL);
}

// In discovery order: the CPU first, so that it is always device 0.
static const builtin_backend_t kBuiltin[] = {
    {"cpu", enumerate_cpu, true},
    {"cuda", dc__cuda_enumerate, true},
    {"opencl", dc__opencl_enumerate, false},
};
#define BUILTIN_COUNT (sizeof(kBuiltin) / sizeof(kBuiltin[0]))

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static dc_backend_t registry[MAX_BACKENDS];
static size_t registry_count;

// Whether |name| is a built-in backend's or "all".
static bool reserved(const char* name) {
  if (strcmp(name, "all") == 0) return true;
  for (size_t i = 0; i < BUILTIN_COUNT; ++i) {
    if (strcmp(name, kBuiltin[i].name) == 0) return true;
  }
  return false;
}

dc_status_t dc_backend_register(const dc_backend_t* backend) {
  static const char* fn = "dc_backend_register";
  DC_REQUIRE_ARG(backend, fn);
  if (backend->name == NULL || backend->name[0] == '\0' ||
      backend->enumerate == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: a backend needs a name and an enumerate function", fn);
  }
  if (reserved(backend->name)) {
    return DC_FAIL(DC_ERR_ALREADY_EXISTS, "%s: '%s' is a reserved name", fn,
                   backend->name);
  }
  dc_status_t status = DC_OK;
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < registry_count; ++i) {
    if (strcmp(registry[i].name, backend->name) == 0) {
      status = DC_FAIL(DC_ERR_ALREADY_EXISTS,
                       "%s: backend '%s' is already registered", fn,
                       backend->name);
    }
  }
  if (status == DC_OK && registry_count == MAX_BACKENDS) {
    status = DC_FAIL(DC_ERR_RESOURCE_EXHAUSTED,
                     "%s: %d backends are registered already", fn,
                     MAX_BACKENDS);
  }
  if (status == DC_OK) registry[registry_count++] = *backend;
  pthread_mutex_unlock(&registry_lock);
  return status;
}

// True if |name| appears in the comma-separated |list|.
static bool list_names(const char* list, const char* name) {
  size_t len = strlen(name);
  for (const char* p = list; *p;) {
    const char* comma = strchr(p, ',');
    size_t item = comma ? (size_t)(comma - p) : strlen(p);
    if (item == len && strncmp(p, name, len) == 0) return true;
    p += item + (comma ? 1 : 0);
  }
  return false;
}

// Whether |list| enables a backend |name| that "all" does (|in_all|) or
// does not include.
static bool list_has(const char* list, const char* name, bool in_all) {
  return list_names(list, name) || (in_all && list_names(list, "all"));
}

// Every name in |list| must be "all" or a known backend; a typo in
// DC_DEVICES would otherwise quietly leave a GPU unused. Called with the
// registry locked.
static dc_status_t check_backend_list(const char* list) {
  for (const char* p = list; *p;) {
    const char* comma = strchr(p, ',');
    size_t item = comma ? (size_t)(comma - p) : strlen(p);
    bool known = item == 3 && strncmp(p, "all", 3) == 0;
    for (size_t i = 0; i < BUILTIN_COUNT && !known; ++i) {
      known = strlen(kBuiltin[i].name) == item &&
              strncmp(p, kBuiltin[i].name, item) == 0;
    }
    for (size_t i = 0; i < registry_count && !known; ++i) {
      known = strlen(registry[i].name) == item &&
              strncmp(p, registry[i].name, item) == 0;
    }
    if (!known) {
      return DC_FAIL(DC_ERR_NOT_FOUND,
                     "dc_context_create: unknown backend '%.*s' in '%s'",
                     (int)item, p, list);
    }
    p += item + (comma ? 1 : 0);
  }
  return DC_OK;
}

dc_status_t dc__backends_enumerate(dc_context_t* ctx, const char* enabled) {
  pthread_mutex_lock(&registry_lock);
  size_t count = registry_count;
  dc_backend_t backends[MAX_BACKENDS];
  memcpy(backends, registry, sizeof(backends[0]) * count);
  dc_status_t status = check_backend_list(enabled);
  pthread_mutex_unlock(&registry_lock);
  // The CPU always, and first, so it is device 0; then the other
  // built-in backends the list enables, then the registered ones.
  for (size_t i = 0; i < BUILTIN_COUNT && status == DC_OK; ++i) {
    if (i > 0 && !list_has(enabled, kBuiltin[i].name, kBuiltin[i].in_all)) {
      continue;
    }
    status = kBuiltin[i].enumerate(ctx);
  }
  for (size_t i = 0; i < count && status == DC_OK; ++i) {
    if (!list_has(enabled, backends[i].name, true)) continue;
    status = backends[i].enumerate(ctx, backends[i].user_data);
  }
  return status;
}

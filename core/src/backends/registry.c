// registry.c: the process-wide backend registry and device discovery.
// SPDX-License-Identifier: MIT
#include <pthread.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "context_internal.h"

#define MAX_BACKENDS 16

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static dc_backend_t registry[MAX_BACKENDS];
static size_t registry_count;

dc_status_t dc_backend_register(const dc_backend_t* backend) {
  static const char* fn = "dc_backend_register";
  DC_REQUIRE_ARG(backend, fn);
  if (backend->name == NULL || backend->name[0] == '\0' ||
      backend->enumerate == NULL) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: a backend needs a name and an enumerate function", fn);
  }
  static const char* const kReserved[] = {"cpu", "cuda", "all"};
  for (size_t i = 0; i < sizeof(kReserved) / sizeof(kReserved[0]); ++i) {
    if (strcmp(backend->name, kReserved[i]) != 0) continue;
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

// True if |name| appears in the comma-separated |list| (or it is "all").
static bool list_has(const char* list, const char* name) {
  if (strcmp(list, "all") == 0) return true;
  size_t len = strlen(name);
  for (const char* p = list; *p;) {
    const char* comma = strchr(p, ',');
    size_t item = comma ? (size_t)(comma - p) : strlen(p);
    if (item == len && strncmp(p, name, len) == 0) return true;
    p += item + (comma ? 1 : 0);
  }
  return false;
}

// Every name in |list| must be a known backend; a typo in DC_DEVICES would
// otherwise quietly leave a GPU unused.
static dc_status_t check_backend_list(const char* list) {
  if (strcmp(list, "all") == 0) return DC_OK;
  for (const char* p = list; *p;) {
    const char* comma = strchr(p, ',');
    size_t item = comma ? (size_t)(comma - p) : strlen(p);
    bool known = (item == 3 && strncmp(p, "cpu", 3) == 0) ||
                 (item == 4 && strncmp(p, "cuda", 4) == 0);
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
  // The CPU comes first, so it is always device 0; then the built-in GPU
  // backends, then the registered ones.
  DC_RETURN_IF_ERROR(dc__cpu_enumerate(ctx, NULL));
  pthread_mutex_lock(&registry_lock);
  size_t count = registry_count;
  dc_backend_t backends[MAX_BACKENDS];
  memcpy(backends, registry, sizeof(backends[0]) * count);
  dc_status_t status = check_backend_list(enabled);
  pthread_mutex_unlock(&registry_lock);
  if (status == DC_OK && list_has(enabled, "cuda")) {
    status = dc__cuda_enumerate(ctx);
  }
  for (size_t i = 0; i < count && status == DC_OK; ++i) {
    if (!list_has(enabled, backends[i].name)) continue;
    status = backends[i].enumerate(ctx, backends[i].user_data);
  }
  return status;
}

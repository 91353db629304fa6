// status.c: status names and classes, the thread-local error message, and
// sticky errors for asynchronous work.
// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

// Big enough for a message that quotes a path or a compiler diagnostic.
#define DC_ERROR_MESSAGE_SIZE 1024

static _Thread_local char tls_message[DC_ERROR_MESSAGE_SIZE];

// The map spells codes with their ERR_ prefix; names are shown without it.
static const char* without_err_prefix(const char* name) {
  return strncmp(name, "ERR_", 4) == 0 ? name + 4 : name;
}

const char* dc_status_name(dc_status_t status) {
  switch (status) {
#define DC_STATUS_NAME_(name, value, cls, desc) \
  case DC_##name:                               \
    return without_err_prefix(#name);
    DC_STATUS_MAP(DC_STATUS_NAME_)
#undef DC_STATUS_NAME_
  }
  return "UNKNOWN_STATUS";
}

const char* dc_status_str(dc_status_t status) {
  switch (status) {
#define DC_STATUS_STR_(name, value, cls, desc) \
  case DC_##name:                              \
    return desc;
    DC_STATUS_MAP(DC_STATUS_STR_)
#undef DC_STATUS_STR_
  }
  return "unknown status";
}

dc_status_class_t dc_status_class(dc_status_t status) {
  switch (status) {
#define DC_STATUS_CLASS_(name, value, cls, desc) \
  case DC_##name:                                \
    return DC_STATUS_CLASS_##cls;
    DC_STATUS_MAP(DC_STATUS_CLASS_)
#undef DC_STATUS_CLASS_
  }
  return DC_STATUS_CLASS_DETERMINISTIC;
}

const char* dc_status_class_name(dc_status_class_t cls) {
  switch (cls) {
    case DC_STATUS_CLASS_OK: return "ok";
    case DC_STATUS_CLASS_TRANSIENT: return "transient";
    case DC_STATUS_CLASS_DETERMINISTIC: return "deterministic";
    case DC_STATUS_CLASS_DEVICE: return "device";
  }
  return "unknown";
}

bool dc_status_is_transient(dc_status_t status) {
  return dc_status_class(status) == DC_STATUS_CLASS_TRANSIENT;
}

bool dc_status_from_name(const char* name, dc_status_t* out_status) {
  if (name == NULL || out_status == NULL) return false;
  static const dc_status_t all[] = {
#define DC_STATUS_LIST_(name, value, cls, desc) DC_##name,
      DC_STATUS_MAP(DC_STATUS_LIST_)
#undef DC_STATUS_LIST_
  };
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i) {
    if (strcmp(dc_status_name(all[i]), name) == 0) {
      *out_status = all[i];
      return true;
    }
  }
  return false;
}

const char* dc_last_error(void) { return tls_message; }

void dc__error_set_raw(const char* message) {
  memcpy(tls_message, message, strlen(message) + 1);
}

dc_status_t dc_set_error(dc_status_t status, const char* format, ...) {
  // Formats aside first: the arguments may quote this thread's message.
  char message[DC_ERROR_MESSAGE_SIZE];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  memcpy(tls_message, message, strlen(message) + 1);
  return status;
}

void dc_check_(dc_status_t status, const char* expr, const char* file,
               int line) {
  if (status == DC_OK) return;
  fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, expr,
          dc_status_name(status), tls_message);
  abort();
}

void dc__error_save(dc__saved_error_t* saved) {
  dc__strlcpy(saved->message, tls_message, sizeof(saved->message));
}

void dc__error_restore(const dc__saved_error_t* saved) {
  dc__strlcpy(tls_message, saved->message, sizeof(tls_message));
}

//===-- Sticky errors ---------------------------------------------------===//

enum { STICKY_CLEAR = 0, STICKY_WRITING = 1, STICKY_SET = 2 };

void dc__sticky_init(dc__sticky_error_t* sticky) {
  atomic_init(&sticky->state, STICKY_CLEAR);
  sticky->status = DC_OK;
  sticky->message[0] = '\0';
}

bool dc__sticky_set_from_last_error(dc__sticky_error_t* sticky,
                                    dc_status_t status) {
  int expected = STICKY_CLEAR;
  // Claim the slot first; the release store below publishes the fields.
  if (!atomic_compare_exchange_strong_explicit(&sticky->state, &expected,
                                               STICKY_WRITING,
                                               memory_order_acquire,
                                               memory_order_relaxed)) {
    return false;
  }
  sticky->status = status;
  dc__strlcpy(sticky->message, tls_message, sizeof(sticky->message));
  atomic_store_explicit(&sticky->state, STICKY_SET, memory_order_release);
  return true;
}

dc_status_t dc__sticky_status(const dc__sticky_error_t* sticky) {
  int state = atomic_load_explicit(&((dc__sticky_error_t*)sticky)->state,
                                   memory_order_acquire);
  return state == STICKY_SET ? sticky->status : DC_OK;
}

dc_status_t dc__sticky_raise(const dc__sticky_error_t* sticky) {
  dc_status_t status = dc__sticky_status(sticky);
  if (status != DC_OK) {
    dc__strlcpy(tls_message, sticky->message, sizeof(tls_message));
  }
  return status;
}

void dc__sticky_clear(dc__sticky_error_t* sticky) {
  sticky->status = DC_OK;
  sticky->message[0] = '\0';
  atomic_store_explicit(&sticky->state, STICKY_CLEAR, memory_order_release);
}

// fault_set.h: the fault rules a context holds (fault.c), a part of the
// context.
// SPDX-License-Identifier: MIT
#ifndef DC_FAULT_SET_H_
#define DC_FAULT_SET_H_

#include <pthread.h>

#include "internal.h"

typedef struct dc__fault_set_t {
  pthread_mutex_t lock;         // guards the rules
  atomic_uint rule_count;       // read without the lock: 0 means no check
  struct dc__fault_rule_t* rules;  // in id order
  uint32_t next_id;             // ids are never reused within the context
} dc__fault_set_t;

#endif  // DC_FAULT_SET_H_

// futex.h: sleeping on a 32-bit word until another thread changes it.
// SPDX-License-Identifier: MIT
#ifndef DC_FUTEX_H_
#define DC_FUTEX_H_

#include <stdatomic.h>
#include <stdint.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// Sleeps while *|word| == |expected|. May return spuriously; callers loop.
static inline void dc__futex_wait(atomic_uint* word, unsigned expected) {
  syscall(SYS_futex, (uint32_t*)word, FUTEX_WAIT_PRIVATE, expected, NULL,
          NULL, 0);
}

// Wakes up to |count| threads sleeping on |word|.
static inline void dc__futex_wake(atomic_uint* word, int count) {
  syscall(SYS_futex, (uint32_t*)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL,
          0);
}
#else
#error "dc: futex.h needs a wait/wake primitive for this platform"
#endif

// Tells the core it is spinning, so a sibling hyper-thread can run.
static inline void dc__cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

#endif  // DC_FUTEX_H_

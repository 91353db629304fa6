// cpu_internal.h: the CPU backend's private declarations.
// SPDX-License-Identifier: MIT
#ifndef DC_CPU_INTERNAL_H_
#define DC_CPU_INTERNAL_H_

#include "dc/backend.h"
#include "internal.h"

// Fills |info| from the machine: /proc/cpuinfo, sysfs cache descriptions,
// the CPU's vector extensions, sysconf. |worker_threads| is the pool size.
DC_INTERNAL void dc__cpu_read_info(uint32_t worker_threads,
                                   dc_device_info_t* info);

#endif  // DC_CPU_INTERNAL_H_

// dc/dc.h: the whole public API of the dc compute engine in one include.
// SPDX-License-Identifier: MIT
#ifndef DC_DC_H_
#define DC_DC_H_

#include "dc/allocator.h"
#include "dc/breaker.h"
#include "dc/buffer.h"
#include "dc/builtins.h"
#include "dc/context.h"
#include "dc/device.h"
#include "dc/encoder.h"
#include "dc/event.h"
#include "dc/fault.h"
#include "dc/graph.h"
#include "dc/kernel.h"
#include "dc/log.h"
#include "dc/memory_pool.h"
#include "dc/retry.h"
#include "dc/status.h"
#include "dc/stream.h"
#include "dc/telemetry.h"
#include "dc/version.h"
#include "dc/worker_pool.h"

#endif  // DC_DC_H_

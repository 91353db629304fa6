// cuda_peer.c: several GPUs: peer access between them and the copies
// from one to another.
//
// Peer access is enabled when the context is created, once all its GPUs
// are found: for each ordered pair the driver says can do it
// (cuDeviceCanAccessPeer), the first GPU's context gets access to the
// second's (cuCtxEnablePeerAccess) and the second's stream-ordered pool is
// opened to the first (cuMemPoolSetAccess: pool memory follows only its
// pool's access list, not the context's peer access). Doing it up front
// costs a few milliseconds per pair once, and keeps every copy free of
// first-use setup and of the locking it would need. Both settings belong
// to the GPUs' primary contexts and default pools, which other CUDA users
// of the process share; they are left on when the context goes, as
// another dc context or library may rely on them. DC_CUDA_PEER=off skips
// it all (every pair is then staged by the driver): for testing that
// path on machines with NVLink, or where peer access misbehaves.
//
// A copy between two GPUs (copy_peer, which dc_buffer_copy uses instead
// of staging through host memory) is one cuMemcpyPeerAsync when both
// sides are device memory, else one cuMemcpyAsync that unified addressing
// routes (shared memory is pinned host memory, managed memory migrates).
// It runs on the source GPU's stream when that GPU reaches the
// destination's memory (it pushes: writes to a peer's memory are posted,
// reads wait a round trip), else on the destination's when that one
// reaches the source's. Without peer access either way, a copy between
// two device allocations runs on the source's stream and the driver
// stages it through host memory; a copy with host or managed memory on
// one side runs on the stream of the GPU that owns the device memory on
// the other, as no other GPU may touch that memory.
//
// Both devices are locked for a copy, in ordinal order, so copies in
// opposite directions at once cannot deadlock.
// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "log_internal.h"

// Peer access is tracked in a 64-bit mask per GPU (peer_access).
#define PEER_ORDINAL_LIMIT 64

static dc__cuda_device_t* cuda_of(dc_device_t* device) {
  return (dc__cuda_device_t*)device;
}

// Whether |a| reaches |b|'s memory directly.
static bool reaches(const dc__cuda_device_t* a, const dc__cuda_device_t* b) {
  return b->ordinal < PEER_ORDINAL_LIMIT &&
         ((a->peer_access >> b->ordinal) & 1u) != 0;
}

bool dc__cuda_peer_direct(dc_device_t* from, dc_device_t* to) {
  return reaches(cuda_of(from), cuda_of(to)) ||
         reaches(cuda_of(to), cuda_of(from));
}

//===-- Enabling peer access --------------------------------------------===//

// Lets |a| reach |b|'s memory: memory from cuMemAlloc through the
// contexts' peer access, pool memory through |b|'s pool's access list.
static dc_status_t open_access(dc__cuda_device_t* a, dc__cuda_device_t* b) {
  const dc__cuda_driver_t* cu = a->api->cu;
  DC_RETURN_IF_ERROR(dc__cuda_enter(a));
  CUresult r = cu->ctx_enable_peer_access(b->context, 0);
  // Another user of the primary contexts (or an earlier dc context whose
  // GPUs are still retained) may have enabled it already.
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
    return dc__cuda_failed(a, r, "cuCtxEnablePeerAccess toward %s",
                           b->base.info.name);
  }
  if (b->pool == NULL) return DC_OK;
  // One entry for |a| alone: the owner's own access cannot be set.
  CUmemAccessDesc access = {
      .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = a->ordinal},
      .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  r = cu->mem_pool_set_access(b->pool, &access, 1);
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(a, r, "cuMemPoolSetAccess (%s's pool)",
                           b->base.info.name);
  }
  return DC_OK;
}

// Enables |a| -> |b| where the hardware allows it. Returns whether it is
// on; a refusal or a failure is logged and leaves the pair to staged
// copies.
static bool enable_pair(dc_context_t* ctx, dc__cuda_device_t* a,
                        dc__cuda_device_t* b) {
  const char* name = a->base.info.name;
  const char* peer = b->base.info.name;
  if (a->ordinal >= PEER_ORDINAL_LIMIT || b->ordinal >= PEER_ORDINAL_LIMIT) {
    DC_LOG(ctx, DC_LOG_DEBUG, "cuda",
           "%s -> %s: no peer access past cuda:%d", name, peer,
           PEER_ORDINAL_LIMIT - 1);
    return false;
  }
  int can = 0;
  CUresult r = a->api->cu->device_can_access_peer(&can, a->device, b->device);
  if (r != CUDA_SUCCESS) {
    dc__cuda_failed(a, r, "cuDeviceCanAccessPeer toward %s", peer);
    DC_LOG(ctx, DC_LOG_WARN, "cuda", "%s", dc_last_error());
    return false;
  }
  if (!can) {
    DC_LOG(ctx, DC_LOG_DEBUG, "cuda",
           "%s cannot reach %s's memory directly: copies from one to the "
           "other are staged through host memory",
           name, peer);
    return false;
  }
  if (open_access(a, b) != DC_OK) {
    DC_LOG(ctx, DC_LOG_WARN, "cuda",
           "%s; copies between %s and %s are staged through host memory",
           dc_last_error(), name, peer);
    return false;
  }
  a->peer_access |= (uint64_t)1 << b->ordinal;
  return true;
}

// Logs "cuda:0: direct access to cuda:1, cuda:2" when there is any.
static void log_peers(dc_context_t* ctx, const dc__cuda_device_t* a,
                      dc__cuda_device_t* const* gpus, size_t count) {
  char list[256] = "";
  size_t used = 0;
  for (size_t i = 0; i < count && used < sizeof(list); ++i) {
    if (gpus[i] == a || !reaches(a, gpus[i])) continue;
    int n = snprintf(list + used, sizeof(list) - used, "%s%s",
                     used ? ", " : "", gpus[i]->base.info.name);
    if (n < 0) break;
    used += (size_t)n;
  }
  if (used > 0) {
    DC_LOG(ctx, DC_LOG_INFO, "cuda", "%s: direct access to %s",
           a->base.info.name, list);
  }
}

// Whether DC_CUDA_PEER asks to leave peer access off ("off", "0").
static bool peers_disabled(dc_context_t* ctx) {
  const char* env = getenv("DC_CUDA_PEER");
  if (env == NULL || (strcmp(env, "off") != 0 && strcmp(env, "0") != 0)) {
    return false;
  }
  DC_LOG(ctx, DC_LOG_INFO, "cuda",
         "DC_CUDA_PEER=%s: peer access left off; copies between GPUs are "
         "staged by the driver", env);
  return true;
}

void dc__cuda_enable_peers(dc_context_t* ctx) {
  dc__cuda_device_t* gpus[DC_MAX_DEVICES];
  size_t count = 0;
  for (size_t i = 0; i < dc_context_device_count(ctx); ++i) {
    dc_device_t* device = NULL;
    // "cuda" is a reserved backend name: these are this backend's.
    if (dc_context_device(ctx, i, &device) == DC_OK &&
        strcmp(device->info.backend, "cuda") == 0) {
      gpus[count++] = cuda_of(device);
    }
  }
  if (count < 2 || peers_disabled(ctx)) return;
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = 0; j < count; ++j) {
      if (i != j) enable_pair(ctx, gpus[i], gpus[j]);
    }
  }
  for (size_t i = 0; i < count; ++i) log_peers(ctx, gpus[i], gpus, count);
}

//===-- Copies ----------------------------------------------------------===//

// One copy between two GPUs.
typedef struct peer_copy_t {
  dc__cuda_device_t* dst;
  dc__cuda_device_t* src;
  CUdeviceptr to, from;
  size_t size;
  bool to_device, from_device;  // plain device memory at |to|, |from|
  dc__cuda_device_t* runner;    // whose stream carries it
} peer_copy_t;

// Whose stream carries |copy| (see the top of the file).
static dc__cuda_device_t* pick_runner(const peer_copy_t* copy) {
  if (reaches(copy->src, copy->dst)) return copy->src;
  if (reaches(copy->dst, copy->src)) return copy->dst;
  // Neither reaches the other: only the owner may touch device memory.
  if (copy->to_device && !copy->from_device) return copy->dst;
  return copy->src;
}

static void lock_pair(dc__cuda_device_t* a, dc__cuda_device_t* b) {
  dc__cuda_device_t* first = a->ordinal < b->ordinal ? a : b;
  pthread_mutex_lock(&first->lock);
  pthread_mutex_lock(&(first == a ? b : a)->lock);
}

// Whether |address| is plain device memory, which cuMemcpyPeerAsync
// copies (not pinned host or managed memory). Call with a context of
// |cuda| current; the queries touch no stream.
static dc_status_t is_device_memory(dc__cuda_device_t* cuda,
                                    CUdeviceptr address, bool* out) {
  const dc__cuda_driver_t* cu = cuda->api->cu;
  unsigned int type = 0, managed = 0;  // the driver may write one byte
  CUresult r = cu->pointer_get_attribute(
      &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  if (r == CUDA_SUCCESS) {
    r = cu->pointer_get_attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  address);
  }
  if (r != CUDA_SUCCESS) {
    return dc__cuda_failed(cuda, r, "cuPointerGetAttribute of 0x%llx",
                           (unsigned long long)address);
  }
  *out = type == CU_MEMORYTYPE_DEVICE && !managed;
  return DC_OK;
}

// Finds what memory each side of |copy| is, then who runs it.
static dc_status_t plan_copy(peer_copy_t* copy) {
  DC_RETURN_IF_ERROR(dc__cuda_enter(copy->src));
  DC_RETURN_IF_ERROR(is_device_memory(copy->src, copy->to, &copy->to_device));
  DC_RETURN_IF_ERROR(
      is_device_memory(copy->src, copy->from, &copy->from_device));
  copy->runner = pick_runner(copy);
  return DC_OK;
}

// Queues |copy| on its runner's stream.
static dc_status_t queue_copy(const peer_copy_t* copy) {
  dc__cuda_device_t* runner = copy->runner;
  const dc__cuda_driver_t* cu = runner->api->cu;
  const char* call = "cuMemcpyPeerAsync";
  CUresult r = CUDA_SUCCESS;
  if (copy->to_device && copy->from_device) {
    r = cu->memcpy_peer_async(copy->to, copy->dst->context, copy->from,
                              copy->src->context, copy->size,
                              runner->stream);
  } else {
    call = "cuMemcpyAsync";
    r = cu->memcpy_async(copy->to, copy->from, copy->size, runner->stream);
  }
  if (r == CUDA_SUCCESS) return DC_OK;
  return dc__cuda_failed(runner, r, "%s of %zu bytes from %s to %s", call,
                         copy->size, copy->src->base.info.name,
                         copy->dst->base.info.name);
}

// Queues |copy| between two timing events and waits for it; its device
// time goes to |out_seconds|. The events are made for it: measurements
// are rare.
static dc_status_t timed_copy(const peer_copy_t* copy, double* out_seconds) {
  dc__cuda_device_t* runner = copy->runner;
  const dc__cuda_driver_t* cu = runner->api->cu;
  CUevent marks[2] = {NULL, NULL};
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < 2 && r == CUDA_SUCCESS; ++i) {
    r = cu->event_create(&marks[i], CU_EVENT_DEFAULT);
  }
  dc_status_t status = r == CUDA_SUCCESS
                           ? DC_OK
                           : dc__cuda_failed(runner, r, "cuEventCreate");
  if (status == DC_OK) {
    r = cu->event_record(marks[0], runner->stream);
    if (r == CUDA_SUCCESS) {
      status = queue_copy(copy);
      if (status == DC_OK) r = cu->event_record(marks[1], runner->stream);
    }
    if (status == DC_OK && r == CUDA_SUCCESS) {
      r = cu->event_synchronize(marks[1]);
    }
    float ms = 0;
    if (status == DC_OK && r == CUDA_SUCCESS) {
      r = cu->event_elapsed_time(&ms, marks[0], marks[1]);
    }
    if (status == DC_OK && r != CUDA_SUCCESS) {
      status = dc__cuda_failed(runner, r, "timing a copy to %s",
                               copy->dst->base.info.name);
    }
    *out_seconds = (double)ms * 1e-3;
  }
  for (int i = 0; i < 2; ++i) {
    if (marks[i] != NULL) cu->event_destroy(marks[i]);
  }
  return status;
}

// Runs |copy| with both devices locked. The other GPU's stream may still
// hold an allocation or a free (those do not wait for the stream), which
// the copy must follow, so it is drained first. Returns the device that
// failed in |out_culprit|.
static dc_status_t run_copy(peer_copy_t* copy, double* out_seconds,
                            dc__cuda_device_t** out_culprit) {
  *out_culprit = copy->src;
  DC_RETURN_IF_ERROR(plan_copy(copy));
  dc__cuda_device_t* runner = copy->runner;
  dc__cuda_device_t* other = runner == copy->dst ? copy->src : copy->dst;
  *out_culprit = other;
  DC_RETURN_IF_ERROR(dc__cuda_enter(other));
  DC_RETURN_IF_ERROR(dc__cuda_sync(other, "draining before a peer copy"));
  *out_culprit = runner;
  DC_RETURN_IF_ERROR(dc__cuda_enter(runner));
  dc_status_t status = out_seconds != NULL ? timed_copy(copy, out_seconds)
                                           : queue_copy(copy);
  char what[128];
  snprintf(what, sizeof(what), "copy of %zu bytes from %s to %s", copy->size,
           copy->src->base.info.name, copy->dst->base.info.name);
  if (status == DC_OK) return dc__cuda_sync(runner, what);
  // Drained after a failure too, keeping the first failure's message.
  runner->api->cu->stream_synchronize(runner->stream);
  return status;
}

dc_status_t dc__cuda_copy_peer(dc_device_t* dst_device, void* dst,
                               size_t dst_offset, dc_device_t* src_device,
                               const void* src, size_t src_offset,
                               size_t size, double* out_seconds) {
  peer_copy_t copy = {
      .dst = cuda_of(dst_device),
      .src = cuda_of(src_device),
      .to = (CUdeviceptr)(uintptr_t)dst + dst_offset,
      .from = (CUdeviceptr)(uintptr_t)src + src_offset,
      .size = size,
  };
  lock_pair(copy.dst, copy.src);
  dc__cuda_device_t* culprit = NULL;
  dc_status_t status = run_copy(&copy, out_seconds, &culprit);
  // dc__cuda_leave unlocks the device the status belongs to and marks it
  // lost on a sticky failure; the other is unlocked first.
  dc__cuda_device_t* bystander = culprit == copy.dst ? copy.src : copy.dst;
  pthread_mutex_unlock(&bystander->lock);
  return dc__cuda_leave(culprit, status);
}

// device_peer.c: the paths between devices (dc_device_peer): which one
// dc_buffer_copy() takes from one device to another, and its bandwidth,
// measured on request and kept by the context.
//
// The path follows from the backends (dc/backend.h): two devices with one
// vtable that has copy_peer copy between themselves, directly when
// peer_direct says so; every other pair goes through host memory. The
// measurement copies along exactly that path, in buffers it makes through
// the devices' pools, so the memory budget applies to it like any other.
// SPDX-License-Identifier: MIT
#include <string.h>

#include "buffer_internal.h"
#include "context_internal.h"

// Bytes a measurement copies: enough that a copy's fixed costs (a launch,
// a synchronize: microseconds) vanish even over NVLink, where 64 MiB takes
// about 150 us. Halved while the devices cannot hold it, down to
// PROBE_MIN_BYTES.
#define PROBE_BYTES ((size_t)64 << 20)
#define PROBE_MIN_BYTES ((size_t)1 << 20)
// Timed copies per measurement, after one untimed copy that pays the
// costs of first use (mappings, staging buffers growing).
#define PROBE_REPEATS 3

const char* dc_peer_path_name(dc_peer_path_t path) {
  switch (path) {
    case DC_PEER_PATH_HOST: return "host";
    case DC_PEER_PATH_DRIVER: return "driver";
    case DC_PEER_PATH_DIRECT: return "direct";
  }
  return "unknown";
}

bool dc__device_copies_peer(const dc_device_t* dst, const dc_device_t* src) {
  return dst != src && dst->vtable == src->vtable &&
         dst->vtable->peer != NULL;
}

static dc_peer_path_t path_of(dc_device_t* from, dc_device_t* to) {
  if (!dc__device_copies_peer(to, from)) return DC_PEER_PATH_HOST;
  bool direct = from->vtable->peer->direct != NULL &&
                from->vtable->peer->direct(from, to);
  return direct ? DC_PEER_PATH_DIRECT : DC_PEER_PATH_DRIVER;
}

static size_t index_of(const dc_context_t* ctx, const dc_device_t* device) {
  size_t i = 0;
  while (i < ctx->device_count && ctx->devices[i] != device) ++i;
  return i;
}

static dc_status_t check_pair(const dc_device_t* from, const dc_device_t* to,
                              const char* fn) {
  if (from->context != to->context) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: '%s' and '%s' belong to different contexts", fn,
                   from->info.name, to->info.name);
  }
  if (from == to) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: 'from' and 'to' are the same device (%s); a device "
                   "is no peer of itself",
                   fn, from->info.name);
  }
  return DC_OK;
}

//===-- The context's figures -------------------------------------------===//

static uint64_t kept_bandwidth(dc_context_t* ctx, size_t from, size_t to) {
  pthread_mutex_lock(&ctx->lock);
  uint64_t bandwidth = ctx->peer_bandwidth[from][to];
  pthread_mutex_unlock(&ctx->lock);
  return bandwidth;
}

static void keep_bandwidth(dc_context_t* ctx, size_t from, size_t to,
                           uint64_t bandwidth) {
  pthread_mutex_lock(&ctx->lock);
  ctx->peer_bandwidth[from][to] = bandwidth;
  pthread_mutex_unlock(&ctx->lock);
}

//===-- Measuring -------------------------------------------------------===//

// A source buffer on one device and a destination of the same size on
// the other.
typedef struct probe_t {
  dc_buffer_t* src;
  dc_buffer_t* dst;
  size_t bytes;
} probe_t;

static dc_status_t make_buffer(dc_device_t* device, size_t bytes,
                               dc_buffer_t** out) {
  dc_buffer_params_t params = {.dtype = DC_DTYPE_U8, .length = bytes,
                               .label = "peer bandwidth probe"};
  return dc_buffer_create(device, &params, out);
}

// Makes the largest pair of buffers up to PROBE_BYTES that both devices
// can hold, and gives the source defined bytes to copy.
static dc_status_t make_probe(dc_device_t* from, dc_device_t* to,
                              probe_t* probe) {
  dc_status_t status = DC_OK;
  for (size_t bytes = PROBE_BYTES; bytes >= PROBE_MIN_BYTES; bytes /= 2) {
    status = make_buffer(from, bytes, &probe->src);
    if (status == DC_OK) {
      status = make_buffer(to, bytes, &probe->dst);
      if (status != DC_OK) dc_buffer_release(probe->src);
    }
    if (status != DC_ERR_OUT_OF_MEMORY) {
      probe->bytes = bytes;
      break;
    }
    probe->src = NULL;
  }
  if (status != DC_OK) {
    probe->src = probe->dst = NULL;
    return status;
  }
  uint8_t zero = 0;
  return dc_buffer_fill(probe->src, 0, probe->bytes, &zero);
}

// One copy of the whole probe along |path|, and the seconds it took: as
// the device timed it on a backend's path; by the host's clock on the
// host path, whose cost is the host's work as much as the bus's.
static dc_status_t copy_once(const probe_t* probe, dc_peer_path_t path,
                             double* out_seconds) {
  if (path == DC_PEER_PATH_HOST) {
    uint64_t start = dc__now_ns();
    DC_RETURN_IF_ERROR(
        dc_buffer_copy(probe->dst, 0, probe->src, 0, probe->bytes));
    *out_seconds = (double)(dc__now_ns() - start) * 1e-9;
    return DC_OK;
  }
  dc_device_t* d = probe->dst->device;
  return d->vtable->peer->copy(d, probe->dst->memory, 0, probe->src->device,
                              probe->src->memory, 0, probe->bytes,
                              out_seconds);
}

static dc_status_t time_copies(const probe_t* probe, dc_peer_path_t path,
                               double* out_seconds) {
  double total = 0;
  for (int i = 0; i <= PROBE_REPEATS; ++i) {
    double seconds = 0;
    DC_RETURN_IF_ERROR(copy_once(probe, path, &seconds));
    if (i > 0) total += seconds;  // the first one warms the path up
  }
  *out_seconds = total;
  return DC_OK;
}

// Puts "fn: measuring a -> b: " before the thread's message.
static dc_status_t explain(dc_status_t status, const char* fn,
                           const dc_device_t* from, const dc_device_t* to) {
  char cause[1024];
  dc__strlcpy(cause, dc_last_error(), sizeof(cause));
  return DC_FAIL(status, "%s: measuring %s -> %s: %s", fn, from->info.name,
                 to->info.name, cause);
}

static dc_status_t measure(dc_device_t* from, dc_device_t* to,
                           dc_peer_path_t path, const char* fn,
                           uint64_t* out_bandwidth) {
  probe_t probe = {0};
  double seconds = 0;
  dc_status_t status = make_probe(from, to, &probe);
  if (status == DC_OK) status = time_copies(&probe, path, &seconds);
  dc_buffer_release(probe.src);
  dc_buffer_release(probe.dst);
  if (status != DC_OK) return explain(status, fn, from, to);
  double bytes = (double)probe.bytes * PROBE_REPEATS;
  // At least 1 byte/s: 0 means "not measured".
  *out_bandwidth = (uint64_t)DC_MAX(bytes / DC_MAX(seconds, 1e-9), 1.0);
  char size[32];
  DC_LOG(from->context, DC_LOG_DEBUG, "device",
         "%s -> %s (%s path): %.2f GB/s over %s x %d", from->info.name,
         to->info.name, dc_peer_path_name(path),
         (double)*out_bandwidth * 1e-9,
         dc__format_bytes(probe.bytes, size, sizeof(size)), PROBE_REPEATS);
  return DC_OK;
}

dc_status_t dc_device_peer(dc_device_t* from, dc_device_t* to,
                           bool measure_it, dc_peer_info_t* out_info) {
  static const char* fn = "dc_device_peer";
  DC_REQUIRE_ARG(out_info, fn);
  memset(out_info, 0, sizeof(*out_info));
  DC_REQUIRE_ARG(from, fn);
  DC_REQUIRE_ARG(to, fn);
  DC_RETURN_IF_ERROR(check_pair(from, to, fn));
  dc_context_t* ctx = from->context;
  size_t i = index_of(ctx, from);
  size_t j = index_of(ctx, to);
  if (i == ctx->device_count || j == ctx->device_count) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "%s: '%s' is not a device of its context (not added)", fn,
                   i == ctx->device_count ? from->info.name : to->info.name);
  }
  dc_peer_path_t path = path_of(from, to);
  uint64_t bandwidth = kept_bandwidth(ctx, i, j);
  if (bandwidth == 0 && measure_it) {
    DC_RETURN_IF_ERROR(measure(from, to, path, fn, &bandwidth));
    keep_bandwidth(ctx, i, j, bandwidth);
  }
  out_info->path = path;
  out_info->direct = path == DC_PEER_PATH_DIRECT;
  out_info->bandwidth = bandwidth;
  return DC_OK;
}

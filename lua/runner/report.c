// report.c: what the runner prints about the engine: the devices
// (--list-devices), the telemetry summary (--stats) and the metrics
// (--metrics).
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

void dclua_print_devices(dc_context_t* context, FILE* out) {
  for (size_t i = 0; i < dc_context_device_count(context); ++i) {
    dc_device_t* device = NULL;
    if (dc_context_device(context, i, &device) != DC_OK) continue;
    const dc_device_info_t* d = dc_device_info(device);
    fprintf(out, "%-8s %s\n", d->name, d->model);
    fprintf(out,
            "         compute units %u, threads %u, simd %u bytes, "
            "memory %zu MiB\n",
            d->compute_units, d->worker_threads, d->simd_width,
            d->memory_size >> 20);
    fprintf(out,
            "         caches L1d %zu KiB, L2 %zu KiB, L3 %zu KiB, "
            "max work-group %u, local memory %zu KiB\n",
            d->cache_l1d_size >> 10, d->cache_l2_size >> 10,
            d->cache_l3_size >> 10, d->max_work_group_size,
            d->local_memory_size >> 10);
  }
}

static void print_counters(const dc_counters_t* c, FILE* out) {
  fprintf(out,
          "  dispatches %" PRIu64 ", copies %" PRIu64
          " (%.2f MiB), "
          "fills %" PRIu64 ", host callbacks %" PRIu64 "\n",
          c->dispatches, c->copies, (double)c->bytes_copied / (1024.0 * 1024.0),
          c->fills, c->host_callbacks);
  fprintf(out,
          "  events recorded %" PRIu64 ", event waits %" PRIu64
          "; commands failed %" PRIu64 ", skipped %" PRIu64
          ", cancelled %" PRIu64 "\n",
          c->events_recorded, c->event_waits, c->commands_failed,
          c->commands_skipped, c->commands_cancelled);
  fprintf(out,
          "  memory pool hits %" PRIu64 ", misses %" PRIu64
          "; event pool hits %" PRIu64 ", misses %" PRIu64 "\n",
          c->pool_hits, c->pool_misses, c->event_pool_hits,
          c->event_pool_misses);
}

// One line per kernel name, in the order they first ran.
static void print_kernels(dc_context_t* context, FILE* out) {
  size_t count = dc_telemetry_kernel_count(context);
  if (count == 0) {
    fputs("  no kernels ran\n", out);
    return;
  }
  fprintf(out, "  %-24s %8s %11s %10s %10s %10s %10s\n", "kernel", "runs",
          "total ms", "mean ms", "p50 ms", "p95 ms", "max ms");
  for (size_t i = 0; i < count; ++i) {
    char name[64];
    dc_timing_stats_t t;
    if (dc_telemetry_kernel_at(context, i, name, sizeof(name), &t) != DC_OK) {
      continue;
    }
    fprintf(out, "  %-24s %8" PRIu64 " %11.3f %10.3f %10.3f %10.3f %10.3f\n",
            name, t.count, t.total_ns * 1e-6, t.mean_ns * 1e-6, t.p50_ns * 1e-6,
            t.p95_ns * 1e-6, t.max_ns * 1e-6);
  }
}

void dclua_print_stats(dc_context_t* context, FILE* out) {
  dc_counters_t counters;
  if (dc_telemetry_counters(context, &counters) != DC_OK) return;
  fputs("dclua stats:\n", out);
  print_counters(&counters, out);
  print_kernels(context, out);
}

bool dclua_write_metrics(dc_context_t* context, const char* path) {
  size_t length = 0;
  char* text = NULL;
  dc_status_t status = dc_telemetry_openmetrics(context, NULL, 0, &length);
  // The text may grow between the two calls (streams on other threads).
  while (status == DC_OK) {
    size_t size = length + 256;
    char* grown = realloc(text, size);
    if (grown == NULL) {
      status = DC_ERR_OUT_OF_MEMORY;
      break;
    }
    text = grown;
    status = dc_telemetry_openmetrics(context, text, size, &length);
    if (status == DC_OK && length < size) break;
  }
  FILE* f = status == DC_OK ? fopen(path, "w") : NULL;
  bool ok = f != NULL && fwrite(text, 1, length, f) == length;
  if (f != NULL && fclose(f) != 0) ok = false;
  if (!ok) {
    fprintf(stderr, "dclua: --metrics: cannot write '%s': %s\n", path,
            status != DC_OK ? dc_last_error() : strerror(errno));
  }
  free(text);
  return ok;
}

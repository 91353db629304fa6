// trace.c: the timeline recorder. While recording, every span the engine
// reports is kept in memory; dc_trace_write() saves them as Chrome trace
// JSON for Perfetto and chrome://tracing.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "context_internal.h"
#include "dc/version.h"
#include "json_writer.h"
#include "telemetry_internal.h"

#define DEFAULT_MAX_SPANS ((size_t)1000000)
#define FIRST_CAPACITY ((size_t)1024)
// Synchronous work goes on one track per host thread. Their ids start
// here, far above any stream id, so that the two never collide.
#define HOST_TRACK_BASE 100000u

// One span as kept. Strings are interned copies, owned by the trace.
typedef struct record_t {
  const char* name;
  const char* label;  // the stream's label; NULL on host tracks
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t bytes;
  uint32_t track;     // the stream id, or HOST_TRACK_BASE + host thread
  uint8_t kind;
  uint8_t outcome;
  dc_status_t status;
} record_t;

struct dc__trace_t {
  dc_allocator_t allocator;
  atomic_bool recording;
  // Held by dc_trace_start() and dc_trace_write(), so that the interned
  // names a writer reads stay allocated while it writes without |lock|.
  pthread_mutex_t write_lock;
  pthread_mutex_t lock;  // guards everything below
  record_t* records;
  size_t count;
  size_t capacity;
  size_t max_spans;
  uint64_t dropped;
  uint64_t start_ns;
  dc__arena_t names;
  const char** table;  // open addressing over the names, for interning
  size_t table_capacity;
  size_t table_count;
};

//===-- Host threads ----------------------------------------------------===//

static atomic_uint host_threads_seen;
static _Thread_local uint32_t host_thread;  // 0: not numbered yet

// The calling thread's track: it is given a number the first time.
static uint32_t host_track(void) {
  if (host_thread == 0) {
    host_thread = atomic_fetch_add(&host_threads_seen, 1u) + 1u;
  }
  return HOST_TRACK_BASE + host_thread;
}

//===-- Storage ---------------------------------------------------------===//

dc_status_t dc__trace_create(dc_allocator_t allocator, dc__trace_t** out) {
  *out = NULL;
  dc__trace_t* tr = dc_allocator_calloc(allocator, 1, sizeof(*tr));
  if (tr == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_context_create: cannot allocate the trace recorder");
  }
  tr->allocator = allocator;
  atomic_init(&tr->recording, false);
  pthread_mutex_init(&tr->write_lock, NULL);
  pthread_mutex_init(&tr->lock, NULL);
  dc__arena_init(&tr->names, allocator);
  *out = tr;
  return DC_OK;
}

// Frees the spans and names.
static void clear_locked(dc__trace_t* tr) {
  dc_allocator_free(tr->allocator, tr->records,
                    tr->capacity * sizeof(*tr->records));
  tr->records = NULL;
  tr->count = tr->capacity = 0;
  dc_allocator_free(tr->allocator, (void*)tr->table,
                    tr->table_capacity * sizeof(*tr->table));
  tr->table = NULL;
  tr->table_capacity = tr->table_count = 0;
  dc__arena_free_all(&tr->names);
  dc__arena_init(&tr->names, tr->allocator);
}

void dc__trace_destroy(dc__trace_t* tr) {
  if (tr == NULL) return;
  clear_locked(tr);
  pthread_mutex_destroy(&tr->lock);
  pthread_mutex_destroy(&tr->write_lock);
  dc_allocator_free(tr->allocator, tr, sizeof(*tr));
}

static uint64_t hash_text(const char* text) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (const unsigned char* p = (const unsigned char*)text; *p; ++p) {
    h = (h ^ *p) * 1099511628211ull;
  }
  return h;
}

// Doubles the intern table (kept at most half full).
static bool grow_table_locked(dc__trace_t* tr) {
  size_t capacity = tr->table_capacity ? 2 * tr->table_capacity : 64;
  const char** table = dc_allocator_calloc(tr->allocator, capacity,
                                           sizeof(*table));
  if (table == NULL) return false;
  for (size_t i = 0; i < tr->table_capacity; ++i) {
    const char* name = tr->table[i];
    if (name == NULL) continue;
    size_t j = (size_t)hash_text(name) & (capacity - 1);
    while (table[j] != NULL) j = (j + 1) & (capacity - 1);
    table[j] = name;
  }
  dc_allocator_free(tr->allocator, (void*)tr->table,
                    tr->table_capacity * sizeof(*tr->table));
  tr->table = table;
  tr->table_capacity = capacity;
  return true;
}

// Returns the trace's copy of |text| (one per distinct string: spans
// repeat a few names), or NULL if memory runs out.
static const char* intern_locked(dc__trace_t* tr, const char* text) {
  if (2 * (tr->table_count + 1) > tr->table_capacity &&
      !grow_table_locked(tr)) {
    return NULL;
  }
  size_t mask = tr->table_capacity - 1;
  size_t i = (size_t)hash_text(text) & mask;
  for (; tr->table[i] != NULL; i = (i + 1) & mask) {
    if (strcmp(tr->table[i], text) == 0) return tr->table[i];
  }
  const char* copy = dc__arena_strndup(&tr->names, text, strlen(text));
  if (copy == NULL) return NULL;
  tr->table[i] = copy;
  tr->table_count += 1;
  return copy;
}

static bool append_locked(dc__trace_t* tr, const dc__span_t* span,
                          uint32_t track, uint64_t start_ns,
                          uint64_t end_ns) {
  if (tr->count == tr->max_spans) return false;
  if (tr->count == tr->capacity) {
    size_t capacity = DC_MIN(2 * tr->capacity, tr->max_spans);
    record_t* grown = tr->allocator.fn(
        tr->allocator.user_data, tr->records,
        tr->capacity * sizeof(*grown), capacity * sizeof(*grown));
    if (grown == NULL) return false;
    tr->records = grown;
    tr->capacity = capacity;
  }
  const char* name = intern_locked(tr, span->name ? span->name : "");
  const char* label = NULL;
  if (span->stream_id != 0 && span->stream_label != NULL) {
    label = intern_locked(tr, span->stream_label);
    if (label == NULL) return false;
  }
  if (name == NULL) return false;
  tr->records[tr->count++] = (record_t){
      .name = name,
      .label = label,
      .start_ns = start_ns,
      .end_ns = end_ns,
      .bytes = span->bytes,
      .track = track,
      .kind = (uint8_t)span->kind,
      .outcome = (uint8_t)span->outcome,
      .status = span->status,
  };
  return true;
}

void dc__trace_add(dc__trace_t* tr, const dc__span_t* span) {
  if (!atomic_load_explicit(&tr->recording, memory_order_relaxed)) return;
  uint32_t track = span->stream_id != 0 ? span->stream_id : host_track();
  uint64_t start = span->start_ns, end = span->end_ns;
  if (span->outcome != DC_SPAN_RAN && end == 0) start = end = dc__now_ns();
  pthread_mutex_lock(&tr->lock);
  // Spans that ended before the recording began belong to no recording;
  // one that straddles its start is cut there.
  if (atomic_load_explicit(&tr->recording, memory_order_relaxed) &&
      end >= tr->start_ns) {
    if (start < tr->start_ns) start = tr->start_ns;
    if (end < start) end = start;
    if (!append_locked(tr, span, track, start, end)) tr->dropped += 1;
  }
  pthread_mutex_unlock(&tr->lock);
}

//===-- Recording -------------------------------------------------------===//

dc_status_t dc_trace_start(dc_context_t* ctx, size_t max_spans) {
  DC_REQUIRE_ARG(ctx, "dc_trace_start");
  dc__trace_t* tr = dc__telemetry_trace(ctx);
  size_t max = max_spans ? max_spans : DEFAULT_MAX_SPANS;
  size_t capacity = DC_MIN(max, FIRST_CAPACITY);
  record_t* records =
      dc_allocator_malloc(tr->allocator, capacity * sizeof(*records));
  if (records == NULL) {
    return DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                   "dc_trace_start: cannot allocate room for %zu spans",
                   capacity);
  }
  pthread_mutex_lock(&tr->write_lock);
  pthread_mutex_lock(&tr->lock);
  clear_locked(tr);
  tr->records = records;
  tr->capacity = capacity;
  tr->max_spans = max;
  tr->dropped = 0;
  tr->start_ns = dc__now_ns();
  atomic_store_explicit(&tr->recording, true, memory_order_relaxed);
  pthread_mutex_unlock(&tr->lock);
  pthread_mutex_unlock(&tr->write_lock);
  return DC_OK;
}

void dc_trace_stop(dc_context_t* ctx) {
  if (ctx == NULL) return;
  dc__trace_t* tr = dc__telemetry_trace(ctx);
  pthread_mutex_lock(&tr->lock);
  atomic_store_explicit(&tr->recording, false, memory_order_relaxed);
  pthread_mutex_unlock(&tr->lock);
}

bool dc_trace_active(dc_context_t* ctx) {
  if (ctx == NULL) return false;
  return atomic_load_explicit(&dc__telemetry_trace(ctx)->recording,
                              memory_order_relaxed);
}

//===-- Writing ---------------------------------------------------------===//

// What dc_trace_write() copies out under the lock.
typedef struct snapshot_t {
  record_t* records;
  size_t count;
  size_t max_spans;
  uint64_t dropped;
  uint64_t start_ns;
  bool recording;
} snapshot_t;

static const char* const kCategories[DC_SPAN_KIND_COUNT] = {
    [DC_SPAN_KERNEL] = "kernel", [DC_SPAN_COPY] = "copy",
    [DC_SPAN_FILL] = "fill",     [DC_SPAN_HOST] = "host",
    [DC_SPAN_RECORD] = "record", [DC_SPAN_WAIT] = "wait",
};

static const char* category(uint8_t kind) {
  return kind < DC_SPAN_KIND_COUNT ? kCategories[kind] : "other";
}

static int by_track(const void* a, const void* b) {
  uint32_t x = ((const record_t*)a)->track, y = ((const record_t*)b)->track;
  return (x > y) - (x < y);
}

static void write_metadata(dc__json_t* w, const char* what, uint32_t track,
                           const char* key) {
  dc__json_begin_object(w);
  dc__json_member_string(w, "name", what);
  dc__json_member_string(w, "ph", "M");
  dc__json_member_u64(w, "pid", 1);
  dc__json_member_u64(w, "tid", track);
  dc__json_key(w, "args");
  dc__json_begin_object(w);
  dc__json_key(w, key);
}

// Names each track used: |tracks| is a copy of the |n| records sorted by
// track. Streams sort first, in id order, then host threads.
static void write_tracks(dc__json_t* w, const record_t* tracks, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && tracks[i].track == tracks[i - 1].track) continue;
    uint32_t track = tracks[i].track;
    char name[64];
    const char* label = tracks[i].label;
    if (track > HOST_TRACK_BASE) {
      snprintf(name, sizeof(name), "host thread %u", track - HOST_TRACK_BASE);
      label = name;
    } else if (label == NULL || label[0] == '\0') {
      snprintf(name, sizeof(name), "stream %u", track);
      label = name;
    }
    write_metadata(w, "thread_name", track, "name");
    dc__json_string(w, label);
    dc__json_end_object(w);
    dc__json_end_object(w);
    write_metadata(w, "thread_sort_index", track, "sort_index");
    dc__json_u64(w, track);
    dc__json_end_object(w);
    dc__json_end_object(w);
  }
}

static void write_span(dc__json_t* w, const record_t* r, uint64_t origin) {
  bool ran = r->outcome == DC_SPAN_RAN;
  dc__json_begin_object(w);
  dc__json_member_string(w, "name", r->name);
  dc__json_member_string(w, "cat", category(r->kind));
  dc__json_member_string(w, "ph", ran ? "X" : "i");
  dc__json_key(w, "ts");
  dc__json_thousandths(w, (int64_t)(r->start_ns - origin));
  if (ran) {
    dc__json_key(w, "dur");
    dc__json_thousandths(w, (int64_t)(r->end_ns - r->start_ns));
  } else {
    dc__json_member_string(w, "s", "t");  // an instant on its track
  }
  dc__json_member_u64(w, "pid", 1);
  dc__json_member_u64(w, "tid", r->track);
  dc__json_key(w, "args");
  dc__json_begin_object(w);
  if (!ran) {
    dc__json_member_string(
        w, "outcome", r->outcome == DC_SPAN_SKIPPED ? "skipped" : "cancelled");
  }
  dc__json_member_string(w, "status", dc_status_name(r->status));
  if (ran && (r->kind == DC_SPAN_COPY || r->kind == DC_SPAN_FILL)) {
    dc__json_member_u64(w, "bytes", r->bytes);
  }
  dc__json_end_object(w);
  dc__json_end_object(w);
}

static void write_json(dc__json_t* w, const snapshot_t* s,
                       const record_t* tracks) {
  dc__json_begin_object(w);
  dc__json_key(w, "traceEvents");
  dc__json_begin_array(w);
  write_metadata(w, "process_name", 0, "name");
  dc__json_string(w, "dclua");
  dc__json_end_object(w);
  dc__json_end_object(w);
  write_tracks(w, tracks, tracks ? s->count : 0);
  for (size_t i = 0; i < s->count; ++i) {
    write_span(w, &s->records[i], s->start_ns);
  }
  dc__json_end_array(w);
  dc__json_member_string(w, "displayTimeUnit", "ns");
  dc__json_key(w, "otherData");
  dc__json_begin_object(w);
  dc__json_member_string(w, "engine", "dclua");
  dc__json_member_string(w, "version", dc_version_string());
  dc__json_member_string(w, "clock", "CLOCK_MONOTONIC, from dc_trace_start");
  dc__json_member_u64(w, "spans", s->count);
  dc__json_member_u64(w, "dropped_spans", s->dropped);
  dc__json_member_u64(w, "max_spans", s->max_spans);
  dc__json_key(w, "recording");
  dc__json_bool(w, s->recording);
  dc__json_end_object(w);
  dc__json_end_object(w);
}

static dc_status_t status_of_errno(int err) {
  switch (err) {
    case EACCES: case EPERM: case EROFS:
      return DC_ERR_PERMISSION_DENIED;
    case ENOENT:
      return DC_ERR_NOT_FOUND;
    default:
      return DC_ERR_UNAVAILABLE;
  }
}

static dc_status_t io_fail(int err, const char* path) {
  return DC_FAIL(status_of_errno(err), "dc_trace_write: cannot write '%s': %s",
                 path, strerror(err));
}

// Writes the JSON to a temporary file beside |path|, then renames it over
// |path|: a reader sees the old file or the whole new one, never a part.
static dc_status_t write_file(const char* path, const snapshot_t* s,
                              const record_t* tracks) {
  char tmp[4200];
  if (strlen(path) > sizeof(tmp) - 16) {
    return DC_FAIL(DC_ERR_INVALID_ARGUMENT,
                   "dc_trace_write: the path '%.64s...' is too long", path);
  }
  snprintf(tmp, sizeof(tmp), "%s.tmp-" DC_MKTEMP_SUFFIX, path);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) return io_fail(errno, path);
  fchmod(fd, 0644);  // mkostemp makes it private; a trace is for sharing
  FILE* file = fdopen(fd, "w");
  if (file == NULL) {
    int err = errno;
    close(fd);
    unlink(tmp);
    return io_fail(err, path);
  }
  dc__json_t w;
  dc__json_init_file(&w, file, 2);
  write_json(&w, s, tracks);
  fputc('\n', file);
  int err = w.failed ? w.error : 0;
  if (fflush(file) != 0 && err == 0) err = errno;
  if (fclose(file) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp, path) != 0) err = errno;
  if (err != 0) {
    unlink(tmp);
    return io_fail(err, path);
  }
  return DC_OK;
}

dc_status_t dc_trace_write(dc_context_t* ctx, const char* path) {
  DC_REQUIRE_ARG(ctx, "dc_trace_write");
  DC_REQUIRE_ARG(path, "dc_trace_write");
  dc__trace_t* tr = dc__telemetry_trace(ctx);
  pthread_mutex_lock(&tr->write_lock);
  // Copy the records out, so that recording goes on while the file is
  // written; their names stay valid under |write_lock|.
  pthread_mutex_lock(&tr->lock);
  snapshot_t s = {
      .count = tr->count,
      .max_spans = tr->max_spans,
      .dropped = tr->dropped,
      .start_ns = tr->start_ns,
      .recording = atomic_load_explicit(&tr->recording, memory_order_relaxed),
  };
  size_t bytes = s.count * sizeof(record_t);
  s.records = s.count ? dc_allocator_malloc(tr->allocator, bytes) : NULL;
  if (s.records != NULL) memcpy(s.records, tr->records, bytes);
  pthread_mutex_unlock(&tr->lock);
  dc_status_t status = DC_OK;
  if (s.count > 0 && s.records == NULL) {
    status = DC_FAIL(DC_ERR_OUT_OF_MEMORY,
                     "dc_trace_write: cannot copy %zu spans to write '%s'",
                     s.count, path);
  } else {
    // The tracks are found by sorting a second copy; without memory for
    // it the file just lacks their names.
    record_t* tracks =
        s.count ? dc_allocator_malloc(tr->allocator, bytes) : NULL;
    if (tracks != NULL) {
      memcpy(tracks, s.records, bytes);
      qsort(tracks, s.count, sizeof(*tracks), by_track);
    }
    status = write_file(path, &s, tracks);
    dc_allocator_free(tr->allocator, tracks, bytes);
  }
  pthread_mutex_unlock(&tr->write_lock);
  dc_allocator_free(tr->allocator, s.records, bytes);
  return status;
}

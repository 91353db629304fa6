// check_queue.c: device queues and device graphs (dc/backend.h), as the
// scheduler and graph replays use them.
//
// The device here is a fake GPU with real queues: each queue has a thread
// that runs the launches put on it later, one after another, with a short
// delay each, so a scheduler that let a stream run ahead of its queue
// would read stale results. It records graphs too, and replays them on
// the calling thread. Its kernels are known by name and run in C:
//   add_one(a)   a[i] += 1 over the grid
//   refuse(a)    the launch is refused (dispatch_queued fails); a graph
//                holding it cannot be recorded
//   fault(a)     runs, then the queue (or the replay) reports a failure
//   twice(a)     a[i] *= 2 (so that order shows in the result)
// Its events are counters: a record job, when the queue runs it, says
// that the device passed that record; a wait job holds its queue until
// the device has passed the latest record as of its queuing. It queues
// copies too (a job that copies bytes), between its own buffers and
// with host memory it pinned (a pin only counts).
// SPDX-License-Identifier: MIT
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_util.h"
#include "dc/backend.h"
#include "dc/dc.h"

#define JOBS 4096

static const char* kKernels =
    "kernel void add_one(global int* a) { a[get_global_id(0)] += 1; }\n"
    "kernel void refuse(global int* a) { a[0] = 0; }\n"
    "kernel void fault(global int* a) { a[0] = 0; }\n"
    "kernel void twice(global int* a) { a[get_global_id(0)] *= 2; }\n";

typedef struct fake_event_t {
  atomic_ulong recorded;  // records queued
  atomic_ulong passed;    // the last record a queue ran
} fake_event_t;

typedef struct job_t {
  int* a;
  size_t offset, count;
  void* to;          // set: a copy of |bytes| from |from|
  const void* from;
  size_t bytes;
  bool fault, twice;
  fake_event_t* record;  // set: a record of this event, number |mark|
  fake_event_t* wait;    // set: wait until the device passed |mark|
  unsigned long mark;
} job_t;

typedef struct queue_t {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  pthread_t thread;
  job_t jobs[JOBS];
  size_t head, tail;  // jobs[head..tail) wait, in order
  bool busy, stopping;
  dc_status_t error;  // found while running, reported at the finish
} queue_t;

// What the fake device saw, for the tests to check.
static struct {
  atomic_int created, destroyed, finishes, launches;
  atomic_int high_priority;   // queues created for high-priority streams
  atomic_int largest_run;     // most launches between two finishes
  atomic_int run;             // launches since the last finish
  atomic_int dispatches;      // synchronous dispatches (op by op)
  atomic_int recordings, replays, graphs_destroyed;
  atomic_bool refuse_replay;  // the next replay is refused before it runs
  atomic_int device_records, device_waits, events_made, events_destroyed;
  atomic_int host_launches;  // launches made on the thread in |host|
  atomic_int queued_copies, pins, unpins;
  atomic_bool records_held;  // set: the device passes no record
  pthread_t host;
} seen;

static void pause_briefly(void) {
  struct timespec ts = {0, 100 * 1000};
  nanosleep(&ts, NULL);
}

static void run_job(const job_t* job) {
  if (job->to != NULL) {
    memcpy(job->to, job->from, job->bytes);
  } else if (job->record != NULL) {
    while (atomic_load(&seen.records_held)) pause_briefly();
    atomic_store(&job->record->passed, job->mark);
  } else if (job->wait != NULL) {
    while (atomic_load(&job->wait->passed) < job->mark) pause_briefly();
  } else if (job->twice) {
    for (size_t i = 0; i < job->count; ++i) job->a[job->offset + i] *= 2;
  } else {
    for (size_t i = 0; i < job->count; ++i) job->a[job->offset + i] += 1;
  }
}

static void* queue_thread(void* arg) {
  queue_t* q = arg;
  pthread_mutex_lock(&q->lock);
  for (;;) {
    while (q->head == q->tail && !q->stopping) {
      pthread_cond_wait(&q->changed, &q->lock);
    }
    if (q->head == q->tail) break;
    job_t job = q->jobs[q->head % JOBS];
    q->busy = true;
    pthread_mutex_unlock(&q->lock);
    pause_briefly();  // the device is slower than the host
    if (!job.fault) run_job(&job);
    pthread_mutex_lock(&q->lock);
    if (job.fault && q->error == DC_OK) q->error = DC_ERR_INTERNAL;
    ++q->head;
    q->busy = false;
    pthread_cond_broadcast(&q->changed);
  }
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

static dc_status_t queue_create(dc_device_t* device, dc_priority_t priority,
                                dc_device_queue_t** out_queue) {
  (void)device;
  queue_t* q = calloc(1, sizeof(*q));
  ck_assert_ptr_nonnull(q);
  pthread_mutex_init(&q->lock, NULL);
  pthread_cond_init(&q->changed, NULL);
  ck_assert_int_eq(pthread_create(&q->thread, NULL, queue_thread, q), 0);
  atomic_fetch_add(&seen.created, 1);
  if (priority == DC_PRIORITY_HIGH) atomic_fetch_add(&seen.high_priority, 1);
  *out_queue = (dc_device_queue_t*)q;
  return DC_OK;
}

static void queue_destroy(dc_device_t* device, dc_device_queue_t* queue) {
  (void)device;
  queue_t* q = (queue_t*)queue;
  pthread_mutex_lock(&q->lock);
  ck_assert_uint_eq(q->head, q->tail);  // the scheduler finished it first
  q->stopping = true;
  pthread_cond_broadcast(&q->changed);
  pthread_mutex_unlock(&q->lock);
  pthread_join(q->thread, NULL);
  pthread_cond_destroy(&q->changed);
  pthread_mutex_destroy(&q->lock);
  free(q);
  atomic_fetch_add(&seen.destroyed, 1);
}

static dc_status_t queue_finish(dc_device_t* device, dc_device_queue_t* queue) {
  (void)device;
  queue_t* q = (queue_t*)queue;
  pthread_mutex_lock(&q->lock);
  while (q->head != q->tail || q->busy) {
    pthread_cond_wait(&q->changed, &q->lock);
  }
  dc_status_t error = q->error;
  q->error = DC_OK;
  pthread_mutex_unlock(&q->lock);
  atomic_fetch_add(&seen.finishes, 1);
  int run = atomic_exchange(&seen.run, 0);
  int largest = atomic_load(&seen.largest_run);
  while (run > largest &&
         !atomic_compare_exchange_weak(&seen.largest_run, &largest, run)) {
  }
  if (error != DC_OK) {
    return dc_set_error(error, "qfake: kernel 'fault' faulted on the device");
  }
  return DC_OK;
}

static job_t job_of(const dc_kernel_t* kernel, const dc_launch_t* launch,
                    void* const* args) {
  job_t job = {.a = args[0],
               .offset = launch->offset[0],
               .count = launch->global[0],
               .fault = strcmp(dc_kernel_name(kernel), "fault") == 0,
               .twice = strcmp(dc_kernel_name(kernel), "twice") == 0};
  return job;
}

static void push_job(queue_t* q, job_t job) {
  pthread_mutex_lock(&q->lock);
  ck_assert_uint_lt(q->tail - q->head, JOBS);
  q->jobs[q->tail++ % JOBS] = job;
  pthread_cond_broadcast(&q->changed);
  pthread_mutex_unlock(&q->lock);
}

static dc_status_t event_create(dc_device_t* device,
                                dc_device_event_t** out_event) {
  (void)device;
  fake_event_t* ev = calloc(1, sizeof(*ev));
  ck_assert_ptr_nonnull(ev);
  atomic_fetch_add(&seen.events_made, 1);
  *out_event = (dc_device_event_t*)ev;
  return DC_OK;
}

static void event_destroy(dc_device_t* device, dc_device_event_t* event) {
  (void)device;
  free(event);
  atomic_fetch_add(&seen.events_destroyed, 1);
}

static dc_status_t queue_record(dc_device_t* device, dc_device_queue_t* queue,
                                dc_device_event_t* event) {
  (void)device;
  fake_event_t* ev = (fake_event_t*)event;
  job_t job = {.record = ev, .mark = atomic_fetch_add(&ev->recorded, 1) + 1};
  push_job((queue_t*)queue, job);
  atomic_fetch_add(&seen.device_records, 1);
  return DC_OK;
}

static dc_status_t queue_wait(dc_device_t* device, dc_device_queue_t* queue,
                              dc_device_event_t* event) {
  (void)device;
  fake_event_t* ev = (fake_event_t*)event;
  job_t job = {.wait = ev, .mark = atomic_load(&ev->recorded)};
  push_job((queue_t*)queue, job);
  atomic_fetch_add(&seen.device_waits, 1);
  return DC_OK;
}

static dc_status_t dispatch_queued(dc_device_t* device,
                                   dc_device_queue_t* queue,
                                   dc_kernel_t* kernel,
                                   const dc_launch_t* launch, void* const* args,
                                   const size_t* lengths) {
  (void)device;
  (void)lengths;
  if (strcmp(dc_kernel_name(kernel), "refuse") == 0) {
    return dc_set_error(DC_ERR_INVALID_ARGUMENT,
                        "qfake: the launch of 'refuse' was refused");
  }
  push_job((queue_t*)queue, job_of(kernel, launch, args));
  atomic_fetch_add(&seen.launches, 1);
  if (pthread_equal(pthread_self(), seen.host)) {
    atomic_fetch_add(&seen.host_launches, 1);
  }
  atomic_fetch_add(&seen.run, 1);
  return DC_OK;
}

static dc_status_t queue_copy_job(dc_device_queue_t* queue, void* to,
                                  const void* from, size_t bytes) {
  job_t job = {.to = to, .from = from, .bytes = bytes};
  push_job((queue_t*)queue, job);
  atomic_fetch_add(&seen.queued_copies, 1);
  return DC_OK;
}

static dc_status_t queue_copy(dc_device_t* device, dc_device_queue_t* queue,
                              void* dst, size_t dst_offset, const void* src,
                              size_t src_offset, size_t size) {
  (void)device;
  return queue_copy_job(queue, (char*)dst + dst_offset,
                        (const char*)src + src_offset, size);
}

static dc_status_t queue_write_pinned(dc_device_t* device,
                                      dc_device_queue_t* queue, void* memory,
                                      size_t offset, const void* host,
                                      size_t size) {
  (void)device;
  return queue_copy_job(queue, (char*)memory + offset, host, size);
}

static dc_status_t queue_read_pinned(dc_device_t* device,
                                     dc_device_queue_t* queue,
                                     const void* memory, size_t offset,
                                     void* host, size_t size) {
  (void)device;
  return queue_copy_job(queue, host, (const char*)memory + offset, size);
}

static dc_status_t pin(dc_device_t* device, void* host, size_t size) {
  (void)device;
  (void)host;
  (void)size;
  atomic_fetch_add(&seen.pins, 1);
  return DC_OK;
}

static void unpin(dc_device_t* device, void* host, size_t size) {
  (void)device;
  (void)host;
  (void)size;
  atomic_fetch_add(&seen.unpins, 1);
}

// Graph ops and dc_kernel_dispatch() wait for each launch.
static dc_status_t dispatch(dc_device_t* device, dc_kernel_t* kernel,
                            const dc_launch_t* launch, void* const* args,
                            const size_t* lengths) {
  (void)device;
  (void)lengths;
  job_t job = job_of(kernel, launch, args);
  atomic_fetch_add(&seen.dispatches, 1);
  if (job.fault) {
    return dc_set_error(DC_ERR_INTERNAL, "qfake: kernel 'fault' faulted");
  }
  run_job(&job);
  return DC_OK;
}

// A recorded graph: its jobs in order (the engine lists every dispatch
// after those it depends on, so order alone keeps the dependencies).
typedef struct recorded_t {
  size_t count;
  job_t jobs[];
} recorded_t;

static dc_status_t graph_create(dc_device_t* device, size_t count,
                                dc_kernel_t* const* kernels,
                                const dc_launch_t* launches,
                                void* const* const* args,
                                const size_t* const* lengths,
                                const uint32_t* dep_first, const uint32_t* deps,
                                dc_device_graph_t** out_graph) {
  (void)device;
  (void)lengths;
  for (size_t i = 0; i < count; ++i) {
    for (uint32_t d = dep_first[i]; d < dep_first[i + 1]; ++d) {
      ck_assert_uint_lt(deps[d], i);
    }
    if (strcmp(dc_kernel_name(kernels[i]), "refuse") == 0) {
      return dc_set_error(DC_ERR_UNSUPPORTED, "qfake: cannot record 'refuse'");
    }
  }
  recorded_t* g = malloc(sizeof(*g) + count * sizeof(job_t));
  ck_assert_ptr_nonnull(g);
  g->count = count;
  for (size_t i = 0; i < count; ++i) {
    g->jobs[i] = job_of(kernels[i], &launches[i], args[i]);
  }
  atomic_fetch_add(&seen.recordings, 1);
  *out_graph = (dc_device_graph_t*)g;
  return DC_OK;
}

static dc_status_t graph_run(dc_device_t* device, dc_device_graph_t* graph,
                             bool* out_started) {
  (void)device;
  recorded_t* g = (recorded_t*)graph;
  *out_started = false;
  if (atomic_exchange(&seen.refuse_replay, false)) {
    return dc_set_error(DC_ERR_UNAVAILABLE, "qfake: replay refused");
  }
  *out_started = true;
  atomic_fetch_add(&seen.replays, 1);
  bool fault = false;
  for (size_t i = 0; i < g->count; ++i) {
    if (g->jobs[i].fault) fault = true;
    if (!g->jobs[i].fault) run_job(&g->jobs[i]);
  }
  if (fault) {
    return dc_set_error(DC_ERR_UNAVAILABLE, "qfake: a kernel of the graph "
                        "faulted during the replay");
  }
  return DC_OK;
}

static void graph_destroy(dc_device_t* device, dc_device_graph_t* graph) {
  (void)device;
  free(graph);
  atomic_fetch_add(&seen.graphs_destroyed, 1);
}

static dc_status_t program_build(dc_device_t* device,
                                 dc_program_build_t* build) {
  (void)device;
  (void)build;
  return DC_OK;  // the kernels run in C above
}

static void program_destroy(dc_device_t* device, dc_program_t* program) {
  (void)device;
  (void)program;
}

static const dc_device_kernel_ops_t queued_kernels = {
    .program_build = program_build,
    .program_destroy = program_destroy,
    .dispatch = dispatch,
};
static const dc_device_queue_ops_t queued_queues = {
    .create = queue_create,
    .destroy = queue_destroy,
    .dispatch = dispatch_queued,
    .finish = queue_finish,
    .copy = queue_copy,
    .write_pinned = queue_write_pinned,
    .read_pinned = queue_read_pinned,
};
static const dc_device_pinning_ops_t queued_pinning = {
    .pin = pin,
    .unpin = unpin,
    .write_pinned = dc_test_fake_write,
    .read_pinned = dc_test_fake_read,
};
static const dc_device_event_ops_t queued_events = {
    .create = event_create,
    .destroy = event_destroy,
    .record = queue_record,
    .wait = queue_wait,
};
static const dc_device_graph_ops_t queued_graphs = {
    .create = graph_create,
    .run = graph_run,
    .destroy = graph_destroy,
};
// The fake device's memory with all the tables above (queue_suite()).
static dc_device_vtable_t queued_vtable;

static dc_status_t qfake_enumerate(dc_context_t* ctx, void* user_data) {
  (void)user_data;
  dc_allocator_t allocator = dc_context_allocator(ctx);
  dc_test_fake_device_t* fake =
      dc_allocator_calloc(allocator, 1, sizeof(*fake));
  if (fake == NULL) return DC_ERR_OUT_OF_MEMORY;
  fake->allocator = allocator;
  dc_device_info_t info = dc_test_fake_info("qfake:0");
  dc_status_t st =
      dc_device_initialize(&fake->base, &queued_vtable, ctx, &info);
  if (st == DC_OK) st = dc_context_add_device(ctx, &fake->base);
  if (st != DC_OK) dc_test_fake_destroy(&fake->base);
  return st;
}

typedef struct fixture_t {
  dc_context_t* ctx;
  dc_device_t* device;
  dc_program_t* program;
  dc_buffer_t* a;
  dc_stream_t* stream;
} fixture_t;

static dc_kernel_t* kernel(fixture_t* f, const char* name) {
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_find_kernel(f->program, name, &k));
  return k;
}

static void fixture_open(fixture_t* f, size_t length, dc_priority_t priority) {
  memset(&seen, 0, sizeof(seen));
  dc_context_params_t params = dc_test_quiet_params();
  params.backends = "cpu,qfake";
  f->ctx = dc_test_context_new(&params);
  DC_CK_OK(dc_context_find_device(f->ctx, "qfake:0", &f->device));
  dc_program_params_t pp = {.source = kKernels, .name = "queued"};
  DC_CK_OK(dc_program_create(f->device, &pp, &f->program));
  f->a = dc_test_buffer_new(f->device, DC_DTYPE_I32, length, "a");
  int zero = 0;
  DC_CK_OK(dc_buffer_fill(f->a, 0, length, &zero));
  dc_stream_params_t sp = {.priority = priority};
  DC_CK_OK(dc_stream_create(f->device, &sp, &f->stream));
}

static void fixture_close(fixture_t* f) {
  dc_stream_release(f->stream);
  dc_buffer_release(f->a);
  dc_program_release(f->program);
  dc_context_release(f->ctx);
  // Every queue was finished (queue_destroy checks) and destroyed.
  ck_assert_int_eq(atomic_load(&seen.created), atomic_load(&seen.destroyed));
}

static void add_one(fixture_t* f, size_t offset, size_t count) {
  dc_arg_t arg = dc_arg_buffer(f->a);
  dc_dispatch_t d = {.dims = 1, .global = {count}, .offset = {offset}};
  DC_CK_OK(dc_stream_dispatch(f->stream, kernel(f, "add_one"), &d, &arg, 1));
}

// The stream's counters, asserting they could be read.
static dc_stream_stats_t stats_of(dc_stream_t* stream) {
  dc_stream_stats_t stats;
  DC_CK_OK(dc_stream_stats(stream, &stats));
  return stats;
}

static void read_all(fixture_t* f, int* out, size_t length) {
  DC_CK_OK(dc_stream_read(f->stream, f->a, 0, out, length));
  DC_CK_OK(dc_stream_sync(f->stream, DC_TIMEOUT_INFINITE));
}

// A host callback that holds its stream until the test lets it go, so
// that the commands after it pile up.
typedef struct gate_t {
  atomic_bool open;
} gate_t;

static dc_status_t wait_at_gate(void* user_data) {
  gate_t* gate = user_data;
  while (!atomic_load(&gate->open)) pause_briefly();
  return DC_OK;
}

START_TEST(test_stream_order_holds_across_queued_dispatches) {
  fixture_t f;
  fixture_open(&f, 64, DC_PRIORITY_NORMAL);
  for (int i = 0; i < 100; ++i) add_one(&f, 0, 64);
  add_one(&f, 0, 32);  // the first half once more
  int out[64];
  read_all(&f, out, 64);  // a read runs only after the queue finished
  for (int i = 0; i < 64; ++i) ck_assert_int_eq(out[i], i < 32 ? 101 : 100);
  ck_assert_int_eq(atomic_load(&seen.launches), 101);
  ck_assert_int_ge(atomic_load(&seen.finishes), 1);
  ck_assert_int_eq(atomic_load(&seen.created), 1);  // one queue per stream
  dc_stream_stats_t stats = stats_of(f.stream);
  ck_assert_uint_eq(stats.completed, 102);
  ck_assert_uint_eq(stats.failed, 0);
  fixture_close(&f);
}
END_TEST

START_TEST(test_consecutive_dispatches_share_one_wait) {
  fixture_t f;
  fixture_open(&f, 16, DC_PRIORITY_NORMAL);
  gate_t gate = {false};
  DC_CK_OK(dc_stream_host(f.stream, wait_at_gate, &gate));
  for (int i = 0; i < 300; ++i) add_one(&f, 0, 16);
  atomic_store(&gate.open, true);
  int out[16];
  read_all(&f, out, 16);
  for (int i = 0; i < 16; ++i) ck_assert_int_eq(out[i], 300);
  // All 300 were queued when the stream reached them: one run, one wait.
  ck_assert_int_eq(atomic_load(&seen.finishes), 1);
  ck_assert_int_eq(atomic_load(&seen.largest_run), 300);
  fixture_close(&f);
}
END_TEST

START_TEST(test_events_complete_after_the_queue) {
  fixture_t f;
  fixture_open(&f, 8, DC_PRIORITY_NORMAL);
  dc_event_t* done = NULL;
  DC_CK_OK(dc_event_create(f.device, 0, &done));
  for (int i = 0; i < 50; ++i) add_one(&f, 0, 8);
  DC_CK_OK(dc_stream_record(f.stream, done));
  DC_CK_OK(dc_event_wait(done, DC_TIMEOUT_INFINITE));
  // The event completed, so the host may read the buffer directly.
  int out[8];
  DC_CK_OK(dc_buffer_read(f.a, 0, out, 8));
  for (int i = 0; i < 8; ++i) ck_assert_int_eq(out[i], 50);
  dc_event_release(done);
  fixture_close(&f);
}
END_TEST

START_TEST(test_refused_launch_fails_its_command_only) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  dc_arg_t arg = dc_arg_buffer(f.a);
  dc_dispatch_t d = {.dims = 1, .global = {4}};
  for (int i = 0; i < 3; ++i) add_one(&f, 0, 4);
  DC_CK_OK(dc_stream_dispatch(f.stream, kernel(&f, "refuse"), &d, &arg, 1));
  add_one(&f, 0, 4);  // skipped: the stream failed before it
  DC_CK_FAIL(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE),
             DC_ERR_INVALID_ARGUMENT, "launch of 'refuse' was refused");
  dc_stream_stats_t stats = stats_of(f.stream);
  ck_assert_uint_eq(stats.completed, 3);
  ck_assert_uint_eq(stats.failed, 1);
  ck_assert_uint_eq(stats.skipped, 1);
  DC_CK_FAIL(dc_stream_reset(f.stream), DC_ERR_INVALID_ARGUMENT, "refused");
  int out[4];
  read_all(&f, out, 4);
  for (int i = 0; i < 4; ++i) ck_assert_int_eq(out[i], 3);
  fixture_close(&f);
}
END_TEST

START_TEST(test_failure_found_at_the_wait_fails_the_stream) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  gate_t gate = {false};
  DC_CK_OK(dc_stream_host(f.stream, wait_at_gate, &gate));
  dc_arg_t arg = dc_arg_buffer(f.a);
  dc_dispatch_t d = {.dims = 1, .global = {4}};
  add_one(&f, 0, 4);
  DC_CK_OK(dc_stream_dispatch(f.stream, kernel(&f, "fault"), &d, &arg, 1));
  add_one(&f, 0, 4);
  atomic_store(&gate.open, true);
  DC_CK_FAIL(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE), DC_ERR_INTERNAL,
             "kernel 'fault' faulted");
  // The three were one run; the failure is charged to its last command.
  dc_stream_stats_t stats = stats_of(f.stream);
  ck_assert_uint_eq(stats.completed, 3);  // the host callback and two
  ck_assert_uint_eq(stats.failed, 1);
  fixture_close(&f);
}
END_TEST

START_TEST(test_cancel_leaves_queued_dispatches_to_finish) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  gate_t gate = {false};
  DC_CK_OK(dc_stream_host(f.stream, wait_at_gate, &gate));
  for (int i = 0; i < 200; ++i) add_one(&f, 0, 4);
  atomic_store(&gate.open, true);
  // Once the 200 are on the device queue, cancelling takes none of them.
  while (atomic_load(&seen.launches) < 200) pause_briefly();
  ck_assert_uint_eq(dc_stream_cancel(f.stream), 0);
  int out[4];
  read_all(&f, out, 4);
  for (int i = 0; i < 4; ++i) ck_assert_int_eq(out[i], 200);
  fixture_close(&f);
}
END_TEST

START_TEST(test_idle_stream_launches_on_the_calling_thread) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  add_one(&f, 0, 4);  // makes the stream's queue
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  seen.host = pthread_self();
  for (int i = 0; i < 10; ++i) {
    add_one(&f, 0, 4);
    DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  }
  ck_assert_int_eq(atomic_load(&seen.host_launches), 10);
  // Launched, so cancelling takes nothing: it finishes.
  add_one(&f, 0, 4);
  ck_assert_uint_eq(dc_stream_cancel(f.stream), 0);
  // Behind other work, or with fault rules armed, a stream thread does it.
  DC_CK_OK(dc_fault_parse(f.ctx, "compile:nth=1000"));
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  add_one(&f, 0, 4);
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&seen.host_launches), 11);
  dc_fault_clear(f.ctx);
  int out[4];
  read_all(&f, out, 4);
  for (int i = 0; i < 4; ++i) ck_assert_int_eq(out[i], 13);
  dc_stream_stats_t stats = stats_of(f.stream);
  ck_assert_uint_eq(stats.cancelled, 0);
  fixture_close(&f);
}
END_TEST

START_TEST(test_queue_priority_follows_the_stream) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_HIGH);
  add_one(&f, 0, 4);
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&seen.high_priority), 1);
  fixture_close(&f);
}
END_TEST

START_TEST(test_streams_run_their_queues_side_by_side) {
  fixture_t f;
  fixture_open(&f, 64, DC_PRIORITY_NORMAL);
  dc_stream_t* other = NULL;
  DC_CK_OK(dc_stream_create(f.device, NULL, &other));
  dc_arg_t arg = dc_arg_buffer(f.a);
  dc_kernel_t* k = kernel(&f, "add_one");
  for (int i = 0; i < 50; ++i) {
    dc_dispatch_t lo = {.dims = 1, .global = {32}};
    dc_dispatch_t hi = {.dims = 1, .global = {32}, .offset = {32}};
    DC_CK_OK(dc_stream_dispatch(f.stream, k, &lo, &arg, 1));
    DC_CK_OK(dc_stream_dispatch(other, k, &hi, &arg, 1));
  }
  DC_CK_OK(dc_stream_sync(other, DC_TIMEOUT_INFINITE));
  int out[64];
  read_all(&f, out, 64);
  for (int i = 0; i < 64; ++i) ck_assert_int_eq(out[i], 50);
  ck_assert_int_eq(atomic_load(&seen.created), 2);
  dc_stream_release(other);
  fixture_close(&f);
}
END_TEST

// Asserts that every element of f->a is |value|.
static void expect_all(fixture_t* f, int value) {
  int out[64];
  size_t n = dc_buffer_length(f->a);
  ck_assert_uint_le(n, 64);
  DC_CK_OK(dc_buffer_read(f->a, 0, out, n));
  for (size_t i = 0; i < n; ++i) ck_assert_int_eq(out[i], value);
}

//===-- Device events ---------------------------------------------------===//

// Two streams of the device: |f|'s and |other|, and a second buffer.
typedef struct pair_t {
  dc_stream_t* other;
  dc_buffer_t* b;
  dc_event_t* event;
} pair_t;

static void pair_open(fixture_t* f, pair_t* p) {
  DC_CK_OK(dc_stream_create(f->device, NULL, &p->other));
  p->b = dc_test_buffer_new(f->device, DC_DTYPE_I32, 4, "b");
  int zero = 0;
  DC_CK_OK(dc_buffer_fill(p->b, 0, 4, &zero));
  DC_CK_OK(dc_event_create(f->device, 0, &p->event));
}

static void pair_close(pair_t* p) {
  dc_event_release(p->event);
  dc_buffer_release(p->b);
  dc_stream_release(p->other);
}

static void on(dc_stream_t* s, fixture_t* f, const char* name,
               dc_buffer_t* buffer) {
  dc_arg_t arg = dc_arg_buffer(buffer);
  dc_dispatch_t d = {.dims = 1, .global = {dc_buffer_length(buffer)}};
  DC_CK_OK(dc_stream_dispatch(s, kernel(f, name), &d, &arg, 1));
}

// Holds |gate| closed until the first stream's record is on the device,
// so that the second stream meets it still pending there: the device
// passes no record until the second stream's wait is queued as well (or,
// should the scheduler wrongly wait on the host, after about ten seconds,
// and the test's count of device waits then fails). Timing alone cannot
// keep the record pending: a slow or loaded machine let it pass first.
static void open_after_device_record(gate_t* gate) {
  while (atomic_load(&seen.device_records) < 1) pause_briefly();
  atomic_store(&gate->open, true);
  for (int i = 0; i < 100000 && atomic_load(&seen.device_waits) < 1; ++i) {
    pause_briefly();
  }
  atomic_store(&seen.records_held, false);
}

START_TEST(test_wait_for_a_record_of_the_device_stays_on_the_device) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  pair_t p;
  pair_open(&f, &p);
  gate_t gate = {false};
  // other: its own work, then a wait for f's record, then doubling a.
  atomic_store(&seen.records_held, true);
  DC_CK_OK(dc_stream_host(p.other, wait_at_gate, &gate));
  on(p.other, &f, "add_one", p.b);
  // f: 200 increments of a (20 ms on the fake device), then the record.
  for (int i = 0; i < 200; ++i) on(f.stream, &f, "add_one", f.a);
  DC_CK_OK(dc_stream_record(f.stream, p.event));
  DC_CK_OK(dc_stream_wait_event(p.other, p.event));
  on(p.other, &f, "twice", f.a);
  open_after_device_record(&gate);
  DC_CK_OK(dc_stream_sync(p.other, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  expect_all(&f, 400);  // (0 + 200) * 2: doubled after the increments
  ck_assert_int_eq(atomic_load(&seen.device_waits), 1);
  dc_stream_stats_t stats = stats_of(p.other);
  ck_assert_uint_eq(stats.completed, 4);  // host fn, add, wait, twice
  pair_close(&p);
  fixture_close(&f);
  // The event's marker went with the pool.
  ck_assert_int_eq(atomic_load(&seen.events_made),
                   atomic_load(&seen.events_destroyed));
}
END_TEST

// A wait at the head of an idle stream, for a record that is on the
// device but not yet passed, goes on the stream's queue once the record
// is there (the scheduler wakes the waiting stream then), rather than
// after the host saw the record complete.
START_TEST(test_wait_at_the_head_follows_a_record_onto_the_device) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  pair_t p;
  pair_open(&f, &p);
  atomic_store(&seen.records_held, true);  // the device passes none yet
  for (int i = 0; i < 21; ++i) on(f.stream, &f, "add_one", f.a);
  DC_CK_OK(dc_stream_record(f.stream, p.event));
  DC_CK_OK(dc_stream_wait_event(p.other, p.event));  // other is idle
  on(p.other, &f, "twice", f.a);
  gate_t unused = {false};
  open_after_device_record(&unused);
  DC_CK_OK(dc_stream_sync(p.other, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  expect_all(&f, 42);  // (0 + 21) * 2
  ck_assert_int_eq(atomic_load(&seen.device_waits), 1);
  pair_close(&p);
  fixture_close(&f);
}
END_TEST

START_TEST(test_failed_record_fails_the_stream_that_waited_on_the_device) {
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  pair_t p;
  pair_open(&f, &p);
  gate_t gate = {false};
  atomic_store(&seen.records_held, true);
  DC_CK_OK(dc_stream_host(p.other, wait_at_gate, &gate));
  on(p.other, &f, "add_one", p.b);
  for (int i = 0; i < 200; ++i) on(f.stream, &f, "add_one", f.a);
  on(f.stream, &f, "fault", f.a);
  DC_CK_OK(dc_stream_record(f.stream, p.event));
  DC_CK_OK(dc_stream_wait_event(p.other, p.event));
  on(p.other, &f, "add_one", p.b);
  open_after_device_record(&gate);
  DC_CK_FAIL(dc_stream_sync(p.other, DC_TIMEOUT_INFINITE), DC_ERR_INTERNAL,
             "kernel 'fault' faulted");
  DC_CK_FAIL(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE), DC_ERR_INTERNAL,
             "kernel 'fault' faulted");
  ck_assert_int_eq(atomic_load(&seen.device_waits), 1);
  // The wait and the dispatch after it count as skipped: the failure was
  // known only once the device had run them.
  dc_stream_stats_t stats = stats_of(p.other);
  ck_assert_uint_eq(stats.skipped, 2);
  DC_CK_FAIL(dc_event_query(p.event), DC_ERR_INTERNAL, "faulted");
  pair_close(&p);
  fixture_close(&f);
}
END_TEST

//===-- Device graphs ---------------------------------------------------===//

// A graph of |count| add_one ops over f->a, each after the one before (they
// all write it), instantiated on a group of two streams.
typedef struct replay_t {
  dc_graph_t* graph;
  dc_stream_group_t* group;
  dc_graph_exec_t* exec;
} replay_t;

static void chain_of(fixture_t* f, replay_t* r, size_t count,
                     const char* last_kernel, const dc_graph_params_t* gp) {
  DC_CK_OK(dc_graph_create(f->ctx, gp, &r->graph));
  dc_arg_t arg = dc_arg_buffer(f->a);
  dc_dispatch_t d = {.dims = 1, .global = {dc_buffer_length(f->a)}};
  for (size_t i = 0; i < count; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "op%zu", i);
    const char* k = i + 1 == count && last_kernel ? last_kernel : "add_one";
    DC_CK_OK(dc_graph_dispatch(r->graph, name, kernel(f, k), &d, &arg, 1,
                               NULL));
  }
  dc_stream_group_params_t sp = {.count = 2};
  DC_CK_OK(dc_stream_group_create(f->device, &sp, &r->group));
  DC_CK_OK(dc_graph_instantiate(r->graph, r->group, &r->exec));
}

static void chain_free(replay_t* r) {
  dc_graph_exec_release(r->exec);
  dc_stream_group_release(r->group);
  dc_graph_release(r->graph);
}


START_TEST(test_graph_replays_as_one_device_graph) {
  fixture_t f;
  fixture_open(&f, 16, DC_PRIORITY_NORMAL);
  replay_t r;
  chain_of(&f, &r, 10, NULL, NULL);
  for (int run = 0; run < 3; ++run) DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  expect_all(&f, 30);
  ck_assert_int_eq(atomic_load(&seen.recordings), 1);  // recorded once
  ck_assert_int_eq(atomic_load(&seen.replays), 3);
  ck_assert_int_eq(atomic_load(&seen.dispatches), 0);  // no op by op
  // Every op reports the run, on the device; the device's breaker counted
  // one call per replay.
  dc_op_report_t report;
  DC_CK_OK(dc_graph_exec_op(r.exec, 9, &report));
  ck_assert_int_eq(report.state, DC_OP_SUCCEEDED);
  ck_assert_str_eq(report.device, "qfake:0");
  ck_assert_uint_eq(report.runs, 3);
  ck_assert_uint_eq(report.attempts, 1);
  dc_breaker_t* breaker = NULL;
  DC_CK_OK(dc_breaker_for(f.ctx, "qfake:0", &breaker));
  dc_breaker_stats_t bs;
  DC_CK_OK(dc_breaker_stats(breaker, &bs));
  ck_assert_uint_eq(bs.successes, 3);
  chain_free(&r);
  ck_assert_int_eq(atomic_load(&seen.graphs_destroyed), 1);
  fixture_close(&f);
}
END_TEST

START_TEST(test_changed_argument_records_again) {
  fixture_t f;
  fixture_open(&f, 8, DC_PRIORITY_NORMAL);
  replay_t r;
  chain_of(&f, &r, 4, NULL, NULL);
  DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  dc_buffer_t* other = dc_test_buffer_new(f.device, DC_DTYPE_I32, 8, "b");
  int zero = 0;
  DC_CK_OK(dc_buffer_fill(other, 0, 8, &zero));
  dc_arg_t arg = dc_arg_buffer(other);
  DC_CK_OK(dc_graph_exec_set_arg(r.exec, "op3", 0, &arg));
  DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  ck_assert_int_eq(atomic_load(&seen.recordings), 2);
  expect_all(&f, 4 + 3);  // the last op now adds to the other buffer
  int got[8];
  DC_CK_OK(dc_buffer_read(other, 0, got, 8));
  for (int i = 0; i < 8; ++i) ck_assert_int_eq(got[i], 1);
  dc_buffer_release(other);
  chain_free(&r);
  fixture_close(&f);
}
END_TEST

static dc_status_t nothing(void* user_data) {
  (void)user_data;
  return DC_OK;
}

START_TEST(test_what_runs_op_by_op_instead) {
  fixture_t f;
  fixture_open(&f, 8, DC_PRIORITY_NORMAL);
  // A graph with a host op cannot replay.
  replay_t r;
  chain_of(&f, &r, 3, NULL, NULL);
  chain_free(&r);
  DC_CK_OK(dc_graph_create(f.ctx, NULL, &r.graph));
  dc_arg_t arg = dc_arg_buffer(f.a);
  dc_dispatch_t d = {.dims = 1, .global = {8}};
  DC_CK_OK(dc_graph_dispatch(r.graph, "k", kernel(&f, "add_one"), &d, &arg,
                             1, NULL));
  DC_CK_OK(dc_graph_host(r.graph, "h", nothing, NULL, NULL));
  dc_stream_group_params_t sp = {.count = 2};
  DC_CK_OK(dc_stream_group_create(f.device, &sp, &r.group));
  DC_CK_OK(dc_graph_instantiate(r.graph, r.group, &r.exec));
  DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  ck_assert_int_eq(atomic_load(&seen.replays), 0);
  ck_assert_int_eq(atomic_load(&seen.dispatches), 1);
  chain_free(&r);
  // A run with a timeout, or with a fault rule armed, goes op by op.
  chain_of(&f, &r, 3, NULL, NULL);
  dc_run_params_t timed = {.timeout_ns = (uint64_t)10 * 1000 * 1000 * 1000};
  DC_CK_OK(dc_graph_exec_run(r.exec, &timed));
  ck_assert_int_eq(atomic_load(&seen.dispatches), 4);
  DC_CK_OK(dc_fault_parse(f.ctx, "compile:nth=1000"));
  DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  ck_assert_int_eq(atomic_load(&seen.dispatches), 7);
  dc_fault_clear(f.ctx);
  DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  ck_assert_int_eq(atomic_load(&seen.replays), 1);
  expect_all(&f, 1 + 3 * 3);
  chain_free(&r);
  fixture_close(&f);
}
END_TEST

START_TEST(test_unrecordable_graph_is_asked_once) {
  fixture_t f;
  fixture_open(&f, 8, DC_PRIORITY_NORMAL);
  replay_t r;
  chain_of(&f, &r, 3, NULL, NULL);
  chain_free(&r);
  // 'refuse' cannot be recorded; op by op it is refused at launch too,
  // so put it in a graph of its own next to a good one.
  dc_graph_params_t gp = {.no_fallback = true};
  DC_CK_OK(dc_graph_create(f.ctx, &gp, &r.graph));
  dc_arg_t arg = dc_arg_buffer(f.a);
  dc_dispatch_t d = {.dims = 1, .global = {8}};
  DC_CK_OK(dc_graph_dispatch(r.graph, "k", kernel(&f, "refuse"), &d, &arg, 1,
                             NULL));
  dc_stream_group_params_t sp = {.count = 1};
  DC_CK_OK(dc_stream_group_create(f.device, &sp, &r.group));
  DC_CK_OK(dc_graph_instantiate(r.graph, r.group, &r.exec));
  for (int run = 0; run < 3; ++run) DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  ck_assert_int_eq(atomic_load(&seen.recordings), 0);
  ck_assert_int_eq(atomic_load(&seen.replays), 0);
  ck_assert_int_eq(atomic_load(&seen.dispatches), 3);  // op by op, 3 runs
  chain_free(&r);
  fixture_close(&f);
}
END_TEST

START_TEST(test_replay_refused_before_it_ran_goes_op_by_op) {
  fixture_t f;
  fixture_open(&f, 8, DC_PRIORITY_NORMAL);
  replay_t r;
  chain_of(&f, &r, 5, NULL, NULL);
  atomic_store(&seen.refuse_replay, true);
  DC_CK_OK(dc_graph_exec_run(r.exec, NULL));
  ck_assert_int_eq(atomic_load(&seen.replays), 0);
  ck_assert_int_eq(atomic_load(&seen.dispatches), 5);
  expect_all(&f, 5);  // each op once, not twice
  // The refused replay counted neither way with the device's breaker.
  dc_breaker_t* breaker = NULL;
  DC_CK_OK(dc_breaker_for(f.ctx, "qfake:0", &breaker));
  dc_breaker_stats_t bs;
  DC_CK_OK(dc_breaker_stats(breaker, &bs));
  ck_assert_uint_eq(bs.failures, 0);
  ck_assert_uint_eq(bs.ignored, 1);
  chain_free(&r);
  fixture_close(&f);
}
END_TEST

START_TEST(test_failure_during_replay_fails_every_op) {
  fixture_t f;
  fixture_open(&f, 8, DC_PRIORITY_NORMAL);
  replay_t r;
  dc_graph_params_t gp = {.name = "faulty"};
  chain_of(&f, &r, 4, "fault", &gp);
  DC_CK_FAIL(dc_graph_exec_run(r.exec, NULL), DC_ERR_UNAVAILABLE,
             "faulted during the replay");
  ck_assert_int_eq(atomic_load(&seen.replays), 1);
  ck_assert_int_eq(atomic_load(&seen.dispatches), 0);  // nothing rerun
  for (size_t k = 0; k < 4; ++k) {
    dc_op_report_t report;
    DC_CK_OK(dc_graph_exec_op(r.exec, k, &report));
    ck_assert_int_eq(report.state, DC_OP_FAILED);
    DC_CK_STR_HAS(report.message, "faulted during the replay");
  }
  // The device is no longer healthy, so the next run goes op by op.
  dc_device_health_t health;
  DC_CK_OK(dc_device_health(f.device, &health));
  ck_assert_int_ne(health.state, DC_DEVICE_HEALTHY);
  chain_free(&r);
  fixture_close(&f);
}
END_TEST

//===-- Queued copies ---------------------------------------------------===//

// Copies between the device's buffers go on its queue among the
// dispatches, in stream order; one whose ranges overlap runs on the host
// once the queue is through.
START_TEST(test_copies_on_the_device_go_on_the_queue_in_order) {
  fixture_t f;
  fixture_open(&f, 64, DC_PRIORITY_NORMAL);
  dc_buffer_t* b = dc_test_buffer_new(f.device, DC_DTYPE_I32, 64, "b");
  int zero = 0;
  DC_CK_OK(dc_buffer_fill(b, 0, 64, &zero));
  on(f.stream, &f, "add_one", f.a);                        // a: 1
  DC_CK_OK(dc_stream_copy(f.stream, b, 0, f.a, 0, 64));    // b: 1
  on(f.stream, &f, "twice", b);
  on(f.stream, &f, "twice", b);                            // b: 4
  DC_CK_OK(dc_stream_copy(f.stream, f.a, 0, b, 32, 32));   // a[0, 32): 4
  on(f.stream, &f, "add_one", f.a);                        // 5 | 2
  DC_CK_OK(dc_stream_copy(f.stream, f.a, 48, f.a, 0, 16)); // a[48, 64): 5
  DC_CK_OK(dc_stream_copy(f.stream, f.a, 8, f.a, 0, 32));  // overlaps
  on(f.stream, &f, "add_one", f.a);
  DC_CK_OK(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE));
  int out[64];
  DC_CK_OK(dc_buffer_read(f.a, 0, out, 64));
  for (int i = 0; i < 64; ++i) {
    ck_assert_int_eq(out[i], i >= 40 && i < 48 ? 3 : 6);
  }
  DC_CK_OK(dc_buffer_read(b, 0, out, 64));
  for (int i = 0; i < 64; ++i) ck_assert_int_eq(out[i], 4);
  ck_assert_int_eq(atomic_load(&seen.queued_copies), 3);
  dc_stream_stats_t stats = stats_of(f.stream);
  ck_assert_uint_eq(stats.completed, 9);
  dc_buffer_release(b);
  fixture_close(&f);
}
END_TEST

// An upload, a kernel and a download per chunk on three streams chained
// by events: once the host blocks are pinned (by the first copy of each,
// which the host runs), the copies go on the queues, and each stream's
// work waits for the others' (on the device where their records already
// are, else on the host).
START_TEST(test_a_pipeline_of_queued_copies_across_streams) {
  enum { CHUNKS = 4, N = 1 << 18 };  // 1 MiB chunks: worth pinning
  fixture_t f;
  fixture_open(&f, 4, DC_PRIORITY_NORMAL);
  dc_device_t* cpu = NULL;
  DC_CK_OK(dc_context_find_device(f.ctx, "cpu", &cpu));
  dc_buffer_t* in = dc_test_buffer_new(cpu, DC_DTYPE_I32, CHUNKS * N, "in");
  dc_buffer_t* out = dc_test_buffer_new(cpu, DC_DTYPE_I32, CHUNKS * N, "out");
  int *host_in = NULL, *host_out = NULL;
  DC_CK_OK(dc_buffer_host_pointer(in, (void**)&host_in));
  DC_CK_OK(dc_buffer_host_pointer(out, (void**)&host_out));
  for (int i = 0; i < CHUNKS * N; ++i) host_in[i] = i;
  dc_buffer_t* chunk[CHUNKS];
  dc_event_t *uploaded[CHUNKS], *computed[CHUNKS];
  dc_stream_t *up, *compute, *down;
  DC_CK_OK(dc_stream_create(f.device, NULL, &up));
  DC_CK_OK(dc_stream_create(f.device, NULL, &compute));
  DC_CK_OK(dc_stream_create(f.device, NULL, &down));
  for (int c = 0; c < CHUNKS; ++c) {
    chunk[c] = dc_test_buffer_new(f.device, DC_DTYPE_I32, N, "chunk");
    DC_CK_OK(dc_event_create(f.device, 0, &uploaded[c]));
    DC_CK_OK(dc_event_create(f.device, 0, &computed[c]));
  }
  for (int round = 1; round <= 2; ++round) {
    memset(host_out, 0, CHUNKS * N * sizeof(int));
    for (int c = 0; c < CHUNKS; ++c) {
      DC_CK_OK(dc_stream_copy(up, chunk[c], 0, in, (size_t)c * N, N));
      DC_CK_OK(dc_stream_record(up, uploaded[c]));
      DC_CK_OK(dc_stream_wait_event(compute, uploaded[c]));
      on(compute, &f, "add_one", chunk[c]);
      DC_CK_OK(dc_stream_record(compute, computed[c]));
      DC_CK_OK(dc_stream_wait_event(down, computed[c]));
      DC_CK_OK(dc_stream_copy(down, out, (size_t)c * N, chunk[c], 0, N));
    }
    DC_CK_OK(dc_stream_sync(down, DC_TIMEOUT_INFINITE));
    DC_CK_OK(dc_stream_sync(compute, DC_TIMEOUT_INFINITE));
    DC_CK_OK(dc_stream_sync(up, DC_TIMEOUT_INFINITE));
    for (int i = 0; i < CHUNKS * N; ++i) {
      if (host_out[i] != i + 1) {
        ck_abort_msg("round %d: element %d is %d, not %d", round, i,
                     host_out[i], i + 1);
      }
    }
  }
  ck_assert_int_eq(atomic_load(&seen.pins), 2);  // each block once
  // The first upload and download ran on the host (and pinned); of the
  // 14 others, the queues took every one.
  ck_assert_int_eq(atomic_load(&seen.queued_copies), 2 * 2 * CHUNKS - 2);
  for (int c = 0; c < CHUNKS; ++c) {
    dc_event_release(uploaded[c]);
    dc_event_release(computed[c]);
    dc_buffer_release(chunk[c]);
  }
  dc_stream_release(up);
  dc_stream_release(compute);
  dc_stream_release(down);
  dc_buffer_release(in);
  dc_buffer_release(out);
  fixture_close(&f);
  ck_assert_int_eq(atomic_load(&seen.unpins), 2);
}
END_TEST

// While a fault rule is armed, copies run on the host, where the rules
// draw on them.
START_TEST(test_copies_meet_fault_rules_on_the_host) {
  fixture_t f;
  fixture_open(&f, 16, DC_PRIORITY_NORMAL);
  dc_buffer_t* b = dc_test_buffer_new(f.device, DC_DTYPE_I32, 16, "b");
  dc_fault_rule_t rule = {.sites = DC_FAULT_COPY, .nth = 2};
  uint32_t id = 0;
  DC_CK_OK(dc_fault_add(f.ctx, &rule, &id));
  on(f.stream, &f, "add_one", f.a);
  DC_CK_OK(dc_stream_copy(f.stream, b, 0, f.a, 0, 16));
  DC_CK_OK(dc_stream_copy(f.stream, b, 0, f.a, 0, 16));  // the 2nd: fails
  DC_CK_FAIL(dc_stream_sync(f.stream, DC_TIMEOUT_INFINITE),
             DC_ERR_UNAVAILABLE, "injected fault");
  ck_assert_int_eq(atomic_load(&seen.queued_copies), 0);
  DC_CK_OK(dc_fault_remove(f.ctx, id));
  dc_buffer_release(b);
  fixture_close(&f);
}
END_TEST

// dc_device_initialize() refuses |partial| with |message|.
static void expect_refused(dc_context_t* ctx, const dc_device_vtable_t* partial,
                           const char* message) {
  dc_test_fake_device_t fake = {0};
  dc_device_info_t info = dc_test_fake_info("partial:0");
  DC_CK_FAIL(dc_device_initialize(&fake.base, partial, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, message);
}

START_TEST(test_vtable_hooks_come_in_whole_sets) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_vtable_t partial = queued_vtable;
  dc_device_queue_ops_t queues = *queued_vtable.queues;
  queues.finish = NULL;
  partial.queues = &queues;
  expect_refused(ctx, &partial, "queue table that lacks a function");
  partial = queued_vtable;
  dc_device_event_ops_t events = *queued_vtable.events;
  events.wait = NULL;
  partial.events = &events;
  expect_refused(ctx, &partial, "event table that lacks a function");
  partial = queued_vtable;
  partial.queues = NULL;
  expect_refused(ctx, &partial, "has events but no queues");
  partial = queued_vtable;
  partial.kernels = NULL;
  expect_refused(ctx, &partial, "has queues but no kernels");
  partial = queued_vtable;
  dc_device_graph_ops_t graphs = *queued_vtable.graphs;
  graphs.run = NULL;
  partial.graphs = &graphs;
  expect_refused(ctx, &partial, "graph table that lacks a function");
  partial = queued_vtable;
  queues = *queued_vtable.queues;
  queues.read_pinned = NULL;
  partial.queues = &queues;
  expect_refused(ctx, &partial, "write_pinned and read_pinned");
  partial = queued_vtable;
  partial.pinning = NULL;
  expect_refused(ctx, &partial, "queued pinned copies but no pinning table");
  dc_context_release(ctx);
}
END_TEST

static Suite* queue_suite(void) {
  queued_vtable = dc_test_fake_vtable;
  queued_vtable.kernels = &queued_kernels;
  queued_vtable.queues = &queued_queues;
  queued_vtable.events = &queued_events;
  queued_vtable.graphs = &queued_graphs;
  queued_vtable.pinning = &queued_pinning;
  dc_backend_t backend = {"qfake", qfake_enumerate, NULL};
  if (dc_backend_register(&backend) != DC_OK) abort();
  Suite* s = suite_create("queue");
  TCase* tc = tcase_create("scheduler");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_stream_order_holds_across_queued_dispatches);
  tcase_add_test(tc, test_consecutive_dispatches_share_one_wait);
  tcase_add_test(tc, test_events_complete_after_the_queue);
  tcase_add_test(tc, test_refused_launch_fails_its_command_only);
  tcase_add_test(tc, test_failure_found_at_the_wait_fails_the_stream);
  tcase_add_test(tc, test_cancel_leaves_queued_dispatches_to_finish);
  tcase_add_test(tc, test_idle_stream_launches_on_the_calling_thread);
  tcase_add_test(tc, test_queue_priority_follows_the_stream);
  tcase_add_test(tc, test_streams_run_their_queues_side_by_side);
  tcase_add_test(tc, test_vtable_hooks_come_in_whole_sets);
  suite_add_tcase(s, tc);
  TCase* events = tcase_create("events");
  tcase_set_timeout(events, 60);
  tcase_add_test(events,
                 test_wait_for_a_record_of_the_device_stays_on_the_device);
  tcase_add_test(events,
                 test_failed_record_fails_the_stream_that_waited_on_the_device);
  tcase_add_test(events,
                 test_wait_at_the_head_follows_a_record_onto_the_device);
  suite_add_tcase(s, events);
  TCase* copies = tcase_create("copies");
  tcase_set_timeout(copies, 60);
  tcase_add_test(copies, test_copies_on_the_device_go_on_the_queue_in_order);
  tcase_add_test(copies, test_a_pipeline_of_queued_copies_across_streams);
  tcase_add_test(copies, test_copies_meet_fault_rules_on_the_host);
  suite_add_tcase(s, copies);
  TCase* graphs = tcase_create("graphs");
  tcase_set_timeout(graphs, 60);
  tcase_add_test(graphs, test_graph_replays_as_one_device_graph);
  tcase_add_test(graphs, test_changed_argument_records_again);
  tcase_add_test(graphs, test_what_runs_op_by_op_instead);
  tcase_add_test(graphs, test_unrecordable_graph_is_asked_once);
  tcase_add_test(graphs, test_replay_refused_before_it_ran_goes_op_by_op);
  tcase_add_test(graphs, test_failure_during_replay_fails_every_op);
  suite_add_tcase(s, graphs);
  return s;
}

DC_CHECK_MAIN(queue_suite)

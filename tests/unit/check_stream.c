// check_stream.c: streams, events, the event pool, stream groups and
// cancellation: ordering, concurrency, waits, timeouts, callbacks, failure
// propagation and statistics.
//
// Device-generic: every stream, event, buffer and kernel is on the device
// under test (check_util.h).
// SPDX-License-Identifier: MIT
#include <time.h>

#include "kernel_fixture.h"

//===-- Helpers ---------------------------------------------------------===//

static dc_stream_t* new_stream(dc_priority_t priority, const char* label) {
  dc_stream_params_t p = {.priority = priority, .label = label};
  dc_stream_t* st = NULL;
  DC_CK_OK(dc_stream_create(dut, &p, &st));
  return st;
}

static dc_event_t* new_event(uint32_t flags) {
  dc_event_t* ev = NULL;
  DC_CK_OK(dc_event_create(dut, flags, &ev));
  return ev;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

// A gate that host callbacks wait at: a callback blocks while the gate's
// value is below its own number (at most 10 s, then it fails).
typedef struct gate_t {
  atomic_int open;
  atomic_int entered;  // callbacks that reached the gate
} gate_t;

typedef struct gated_t {
  gate_t* gate;
  int number;
} gated_t;

static dc_status_t wait_at_gate(void* arg) {
  gated_t* g = arg;
  atomic_fetch_add(&g->gate->entered, 1);
  for (int i = 0; i < 10000; ++i) {
    if (atomic_load(&g->gate->open) >= g->number) return DC_OK;
    sleep_ms(1);
  }
  return dc_set_error(DC_ERR_DEADLINE_EXCEEDED, "gate %d never opened",
                      g->number);
}

// Appends its number to a shared log.
typedef struct log_t {
  atomic_int count;
  int entries[4096];
} log_t;

typedef struct logged_t {
  log_t* log;
  int value;
} logged_t;

static dc_status_t append(void* arg) {
  logged_t* l = arg;
  int at = atomic_fetch_add(&l->log->count, 1);
  if (at < 4096) l->log->entries[at] = l->value;
  return DC_OK;
}

static dc_status_t fail_boom(void* arg) {
  (void)arg;
  return dc_set_error(DC_ERR_DATA_LOSS, "boom: the host step lost its data");
}

static dc_status_t fail_silently(void* arg) {
  (void)arg;
  return DC_ERR_ABORTED;
}

static const char kIncrement[] =
    "__kernel void inc(__global int* x) { x[get_global_id(0)] += 1; }\n"
    "__kernel void twice(__global int* x) { x[get_global_id(0)] *= 2; }\n";

//===-- Order and data --------------------------------------------------===//

START_TEST(test_stream_runs_commands_in_order) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "order");
  static log_t log;
  static logged_t items[1000];
  atomic_store(&log.count, 0);
  for (int i = 0; i < 1000; ++i) {
    items[i] = (logged_t){&log, i};
    DC_CK_OK(dc_stream_host(st, append, &items[i]));
  }
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&log.count), 1000);
  for (int i = 0; i < 1000; ++i) ck_assert_int_eq(log.entries[i], i);
  dc_stream_stats_t stats;
  DC_CK_OK(dc_stream_stats(st, &stats));
  ck_assert_uint_eq(stats.submitted, 1000);
  ck_assert_uint_eq(stats.completed, 1000);
  ck_assert_uint_eq(stats.queued, 0);
  ck_assert_int_eq(stats.error, DC_OK);
  dc_stream_release(st);
}
END_TEST

// Dependent kernels, copies, fills, writes and reads on one stream see
// each other's results in queue order.
START_TEST(test_stream_commands_see_earlier_results) {
  enum { N = 1024 };
  dc_program_t* p = build_on(dut, "inc.cl", kIncrement, NULL);
  dc_kernel_t* inc = kernel_of(p, "inc");
  dc_kernel_t* twice = kernel_of(p, "twice");
  dc_buffer_t* a = dc_test_buffer_new(dut, DC_DTYPE_I32, N, "a");
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_I32, N, "b");
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "data");
  static int32_t in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = i;
  int32_t seven = 7;
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  dc_arg_t arg_a = dc_arg_buffer(a);
  dc_arg_t arg_b = dc_arg_buffer(b);
  DC_CK_OK(dc_stream_write(st, a, 0, in, N));               // a = i
  DC_CK_OK(dc_stream_dispatch(st, inc, &grid, &arg_a, 1));   // a = i + 1
  DC_CK_OK(dc_stream_dispatch(st, twice, &grid, &arg_a, 1)); // a = 2i + 2
  DC_CK_OK(dc_stream_fill(st, b, 0, N, &seven));
  DC_CK_OK(dc_stream_copy(st, b, 0, a, 0, N / 2));          // b = a | 7
  DC_CK_OK(dc_stream_dispatch(st, inc, &grid, &arg_b, 1));
  DC_CK_OK(dc_stream_read(st, b, 0, out, N));
  // The arguments were copied: changing them now changes nothing queued.
  arg_a = dc_arg_buffer(b);
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  for (int i = 0; i < N; ++i) {
    int want = i < N / 2 ? 2 * i + 3 : 8;
    ck_assert_msg(out[i] == want, "out[%d] = %d, expected %d", i, out[i],
                  want);
  }
  // The queued commands held their own references.
  dc_stream_release(st);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

// Objects may be released as soon as their commands are queued.
START_TEST(test_stream_commands_keep_objects_alive) {
  enum { N = 256 };
  dc_program_t* p = build_on(dut, "inc.cl", kIncrement, NULL);
  dc_kernel_t* inc = kernel_of(p, "inc");
  dc_kernel_retain(inc);
  dc_program_release(p);
  dc_buffer_t* a = dc_test_buffer_new(dut, DC_DTYPE_I32, N, "a");
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "keep");
  gate_t gate = {0};
  gated_t g = {&gate, 1};
  static int32_t out[N];
  int32_t zero = 0;
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &g));
  DC_CK_OK(dc_stream_fill(st, a, 0, N, &zero));
  dc_arg_t arg = dc_arg_buffer(a);
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  DC_CK_OK(dc_stream_dispatch(st, inc, &grid, &arg, 1));
  DC_CK_OK(dc_stream_read(st, a, 0, out, N));
  dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
  DC_CK_OK(dc_stream_record(st, ev));
  dc_kernel_release(inc);
  dc_buffer_release(a);
  dc_stream_release(st);
  atomic_store(&gate.open, 1);
  DC_CK_OK(dc_event_wait(ev, DC_TIMEOUT_INFINITE));
  dc_event_release(ev);
  for (int i = 0; i < N; ++i) ck_assert_int_eq(out[i], 1);
}
END_TEST

//===-- Concurrency and priority ----------------------------------------===//

typedef struct handshake_t {
  atomic_int a_started;
  atomic_int b_done;
} handshake_t;

static dc_status_t a_waits_for_b(void* arg) {
  handshake_t* h = arg;
  atomic_store(&h->a_started, 1);
  for (int i = 0; i < 10000 && !atomic_load(&h->b_done); ++i) sleep_ms(1);
  return atomic_load(&h->b_done)
             ? DC_OK
             : dc_set_error(DC_ERR_DEADLINE_EXCEEDED, "stream b never ran");
}

static dc_status_t b_runs(void* arg) {
  handshake_t* h = arg;
  for (int i = 0; i < 10000 && !atomic_load(&h->a_started); ++i) sleep_ms(1);
  atomic_store(&h->b_done, 1);
  return DC_OK;
}

// Stream a's callback runs until stream b's has run: only possible if the
// two streams run at the same time.
START_TEST(test_streams_run_concurrently) {
  dc_stream_t* a = new_stream(DC_PRIORITY_NORMAL, "a");
  dc_stream_t* b = new_stream(DC_PRIORITY_NORMAL, "b");
  handshake_t h = {0};
  DC_CK_OK(dc_stream_host(a, a_waits_for_b, &h));
  DC_CK_OK(dc_stream_host(b, b_runs, &h));
  DC_CK_OK(dc_stream_sync(a, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(b, DC_TIMEOUT_INFINITE));
  dc_stream_release(a);
  dc_stream_release(b);
}
END_TEST

// With every stream thread busy, the thread that frees up first takes the
// high-priority stream's command before the low one's, although the low
// one was queued first.
START_TEST(test_stream_priority_is_honoured) {
  enum { BLOCKERS = 8 };  // DC_MAX_STREAM_THREADS
  dc_stream_t* blockers[BLOCKERS];
  gate_t gate = {0};
  gated_t gated[BLOCKERS];
  for (int i = 0; i < BLOCKERS; ++i) {
    blockers[i] = new_stream(DC_PRIORITY_NORMAL, "blocker");
    gated[i] = (gated_t){&gate, i + 1};
    DC_CK_OK(dc_stream_host(blockers[i], wait_at_gate, &gated[i]));
  }
  dc_stream_t* low = new_stream(DC_PRIORITY_LOW, "low");
  dc_stream_t* high = new_stream(DC_PRIORITY_HIGH, "high");
  // Wait until every thread is inside a blocker.
  for (int i = 0; i < 10000 && atomic_load(&gate.entered) < BLOCKERS; ++i) {
    sleep_ms(1);
  }
  ck_assert_int_eq(atomic_load(&gate.entered), BLOCKERS);
  static log_t log;
  atomic_store(&log.count, 0);
  logged_t l = {&log, 1}, h = {&log, 2};
  DC_CK_OK(dc_stream_host(low, append, &l));
  DC_CK_OK(dc_stream_host(high, append, &h));
  atomic_store(&gate.open, 1);  // frees one thread
  DC_CK_OK(dc_stream_sync(high, DC_TIMEOUT_INFINITE));
  atomic_store(&gate.open, BLOCKERS);
  DC_CK_OK(dc_stream_sync(low, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&log.count), 2);
  ck_assert_int_eq(log.entries[0], 2);
  ck_assert_int_eq(log.entries[1], 1);
  for (int i = 0; i < BLOCKERS; ++i) {
    DC_CK_OK(dc_stream_sync(blockers[i], DC_TIMEOUT_INFINITE));
    dc_stream_release(blockers[i]);
  }
  dc_stream_release(low);
  dc_stream_release(high);
}
END_TEST

//===-- Events ----------------------------------------------------------===//

typedef struct slow_value_t {
  atomic_int value;
} slow_value_t;

static dc_status_t set_value_slowly(void* arg) {
  sleep_ms(30);
  atomic_store(&((slow_value_t*)arg)->value, 42);
  return DC_OK;
}

static dc_status_t expect_value(void* arg) {
  int v = atomic_load(&((slow_value_t*)arg)->value);
  return v == 42 ? DC_OK
                 : dc_set_error(DC_ERR_INTERNAL, "ran before the event: %d",
                                v);
}

START_TEST(test_stream_waits_for_another_streams_event) {
  dc_stream_t* a = new_stream(DC_PRIORITY_NORMAL, "producer");
  dc_stream_t* b = new_stream(DC_PRIORITY_NORMAL, "consumer");
  dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
  slow_value_t v = {0};
  DC_CK_OK(dc_stream_host(a, set_value_slowly, &v));
  DC_CK_OK(dc_stream_record(a, ev));
  DC_CK_OK(dc_stream_wait_event(b, ev));
  DC_CK_OK(dc_stream_host(b, expect_value, &v));
  // Re-recording the event later does not move b's wait.
  DC_CK_OK(dc_stream_sync(b, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(a, DC_TIMEOUT_INFINITE));
  dc_event_release(ev);
  dc_stream_release(a);
  dc_stream_release(b);
}
END_TEST

// Two streams take turns on one buffer, each waiting for the other's
// record: increments on one, doublings on the other. Any reordering shows
// in the result. (On a device with events the waits happen on the device:
// docs/execution.md.)
START_TEST(test_streams_take_turns_through_events) {
  enum { N = 256, ROUNDS = 20 };  // x stays below 2^23
  dc_program_t* p = build_on(dut, "inc.cl", kIncrement, NULL);
  dc_kernel_t* inc = kernel_of(p, "inc");
  dc_kernel_t* twice = kernel_of(p, "twice");
  dc_buffer_t* x = dc_test_buffer_new(dut, DC_DTYPE_I32, N, "x");
  int32_t zero = 0;
  DC_CK_OK(dc_buffer_fill(x, 0, N, &zero));
  dc_stream_t* a = new_stream(DC_PRIORITY_NORMAL, "inc");
  dc_stream_t* b = new_stream(DC_PRIORITY_NORMAL, "twice");
  dc_event_t* a_done = new_event(DC_EVENT_DEFAULT);
  dc_event_t* b_done = new_event(DC_EVENT_DEFAULT);
  dc_dispatch_t grid = {.dims = 1, .global = {N}};
  dc_arg_t arg = dc_arg_buffer(x);
  int64_t want = 0;
  for (int r = 0; r < ROUNDS; ++r) {
    if (r > 0) DC_CK_OK(dc_stream_wait_event(a, b_done));
    for (int k = 0; k < 3; ++k) {
      DC_CK_OK(dc_stream_dispatch(a, inc, &grid, &arg, 1));
    }
    DC_CK_OK(dc_stream_record(a, a_done));
    DC_CK_OK(dc_stream_wait_event(b, a_done));
    DC_CK_OK(dc_stream_dispatch(b, twice, &grid, &arg, 1));
    DC_CK_OK(dc_stream_record(b, b_done));
    want = (want + 3) * 2;
  }
  DC_CK_OK(dc_stream_sync(b, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_stream_sync(a, DC_TIMEOUT_INFINITE));
  const int32_t* got = contents(x);
  for (int i = 0; i < N; ++i) {
    ck_assert_msg(got[i] == want, "x[%d] = %d, expected %lld", i, got[i],
                  (long long)want);
  }
  dc_event_release(a_done);
  dc_event_release(b_done);
  dc_stream_release(a);
  dc_stream_release(b);
  dc_buffer_release(x);
  dc_program_release(p);
}
END_TEST

START_TEST(test_event_wait_query_and_timeout) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "timeouts");
  dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
  // Never recorded: complete at once, as in CUDA.
  DC_CK_OK(dc_event_query(ev));
  DC_CK_OK(dc_event_wait(ev, 0));
  DC_CK_OK(dc_stream_wait_event(st, ev));  // nothing to wait for
  gate_t gate = {0};
  gated_t g = {&gate, 1};
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &g));
  DC_CK_OK(dc_stream_record(st, ev));
  ck_assert_int_eq(dc_event_query(ev), DC_ERR_UNAVAILABLE);
  ck_assert_int_eq(dc_stream_query(st), DC_ERR_UNAVAILABLE);
  DC_CK_FAIL(dc_event_wait(ev, 2000000), DC_ERR_DEADLINE_EXCEEDED,
             "did not complete within 2000000 ns");
  DC_CK_FAIL(dc_stream_sync(st, 1000000), DC_ERR_DEADLINE_EXCEEDED,
             "'timeouts' still has 2 command(s) queued");
  atomic_store(&gate.open, 1);
  DC_CK_OK(dc_event_wait(ev, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_event_query(ev));
  DC_CK_OK(dc_stream_sync(st, 0));
  DC_CK_OK(dc_stream_query(st));
  dc_event_release(ev);
  dc_stream_release(st);
}
END_TEST

static dc_status_t sleep_20ms(void* arg) {
  (void)arg;
  sleep_ms(20);
  return DC_OK;
}

START_TEST(test_timing_events_measure_elapsed_time) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "timing");
  dc_event_t* t0 = new_event(DC_EVENT_TIMING);
  dc_event_t* t1 = new_event(DC_EVENT_TIMING);
  dc_event_t* plain = new_event(DC_EVENT_DEFAULT);
  int64_t ns = -1;
  DC_CK_FAIL(dc_event_elapsed_ns(t0, t1, &ns), DC_ERR_FAILED_PRECONDITION,
             "'start' is not recorded");
  DC_CK_OK(dc_stream_record(st, t0));
  DC_CK_OK(dc_stream_host(st, sleep_20ms, NULL));
  DC_CK_OK(dc_stream_record(st, t1));
  DC_CK_OK(dc_stream_record(st, plain));
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  DC_CK_OK(dc_event_elapsed_ns(t0, t1, &ns));
  ck_assert_int_ge(ns, 20000000);
  ck_assert_int_lt(ns, 2000000000);
  DC_CK_OK(dc_event_elapsed_ns(t1, t0, &ns));
  ck_assert_int_le(ns, -20000000);
  DC_CK_FAIL(dc_event_elapsed_ns(t0, plain, &ns), DC_ERR_INVALID_ARGUMENT,
             "'end' is not a timing event");
  DC_CK_FAIL(dc_event_elapsed_ns(t0, NULL, &ns), DC_ERR_INVALID_ARGUMENT,
             "'end' is NULL");
  dc_event_release(t0);
  dc_event_release(t1);
  dc_event_release(plain);
  dc_stream_release(st);
}
END_TEST

typedef struct calls_t {
  atomic_int count;
  atomic_int last_status;
} calls_t;

static void count_call(dc_event_t* ev, dc_status_t status, void* arg) {
  (void)ev;
  calls_t* c = arg;
  atomic_store(&c->last_status, (int)status);
  atomic_fetch_add(&c->count, 1);
}

START_TEST(test_event_callbacks_run_once) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "callbacks");
  dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
  calls_t now = {0}, later = {0};
  // Complete already (never recorded): runs at once.
  DC_CK_OK(dc_event_on_complete(ev, count_call, &now));
  ck_assert_int_eq(atomic_load(&now.count), 1);
  gate_t gate = {0};
  gated_t g = {&gate, 1};
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &g));
  DC_CK_OK(dc_stream_record(st, ev));
  for (int i = 0; i < 8; ++i) {
    DC_CK_OK(dc_event_on_complete(ev, count_call, &later));
  }
  DC_CK_FAIL(dc_event_on_complete(ev, count_call, &later),
             DC_ERR_RESOURCE_EXHAUSTED, "already has 8 callbacks pending");
  ck_assert_int_eq(atomic_load(&later.count), 0);
  // The event may be released before it completes: the record holds it.
  dc_event_release(ev);
  atomic_store(&gate.open, 1);
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&later.count), 8);
  ck_assert_int_eq(atomic_load(&later.last_status), DC_OK);
  dc_stream_release(st);
}
END_TEST

//===-- Failure ---------------------------------------------------------===//

// A failing command fails its stream; later commands are skipped, their
// events poisoned with the original error, and a stream waiting for them
// fails with it too. The failure is counted once.
START_TEST(test_stream_failure_propagates_once) {
  dc_stream_t* a = new_stream(DC_PRIORITY_NORMAL, "failing");
  dc_stream_t* b = new_stream(DC_PRIORITY_NORMAL, "downstream");
  dc_event_t* ea = new_event(DC_EVENT_DEFAULT);
  dc_event_t* eb = new_event(DC_EVENT_DEFAULT);
  static log_t log;
  atomic_store(&log.count, 0);
  logged_t never = {&log, 1};
  dc_counters_t before, after;
  DC_CK_OK(dc_telemetry_counters(ctx, &before));
  DC_CK_OK(dc_stream_host(a, fail_boom, NULL));
  DC_CK_OK(dc_stream_host(a, append, &never));
  DC_CK_OK(dc_stream_record(a, ea));
  DC_CK_OK(dc_stream_wait_event(b, ea));
  DC_CK_OK(dc_stream_host(b, append, &never));
  DC_CK_OK(dc_stream_record(b, eb));
  DC_CK_FAIL(dc_stream_sync(a, DC_TIMEOUT_INFINITE), DC_ERR_DATA_LOSS,
             "boom: the host step lost its data");
  DC_CK_FAIL(dc_event_wait(ea, DC_TIMEOUT_INFINITE), DC_ERR_DATA_LOSS,
             "boom");
  DC_CK_FAIL(dc_stream_sync(b, DC_TIMEOUT_INFINITE), DC_ERR_DATA_LOSS,
             "boom");
  DC_CK_FAIL(dc_event_wait(eb, DC_TIMEOUT_INFINITE), DC_ERR_DATA_LOSS,
             "boom");
  DC_CK_FAIL(dc_event_query(eb), DC_ERR_DATA_LOSS, "boom");
  // Still failed until reset.
  DC_CK_FAIL(dc_stream_query(a), DC_ERR_DATA_LOSS, "boom");
  ck_assert_int_eq(atomic_load(&log.count), 0);
  dc_stream_stats_t sa, sb;
  DC_CK_OK(dc_stream_stats(a, &sa));
  DC_CK_OK(dc_stream_stats(b, &sb));
  ck_assert_uint_eq(sa.failed, 1);
  ck_assert_uint_eq(sa.skipped, 2);
  ck_assert_uint_eq(sb.failed, 0);
  ck_assert_uint_eq(sb.skipped, 3);
  ck_assert_int_eq(sb.error, DC_ERR_DATA_LOSS);
  DC_CK_OK(dc_telemetry_counters(ctx, &after));
  ck_assert_uint_eq(after.commands_failed - before.commands_failed, 1);
  ck_assert_uint_eq(after.commands_skipped - before.commands_skipped, 5);
  // A reset returns the error it clears; then the stream works again.
  DC_CK_FAIL(dc_stream_reset(a), DC_ERR_DATA_LOSS, "boom");
  DC_CK_OK(dc_stream_reset(a));
  logged_t runs = {&log, 2};
  DC_CK_OK(dc_stream_host(a, append, &runs));
  DC_CK_OK(dc_stream_sync(a, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&log.count), 1);
  dc_event_release(ea);
  dc_event_release(eb);
  dc_stream_release(a);
  dc_stream_release(b);
}
END_TEST

START_TEST(test_host_callback_error_without_message) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "silent");
  DC_CK_OK(dc_stream_host(st, fail_silently, NULL));
  DC_CK_FAIL(dc_stream_sync(st, DC_TIMEOUT_INFINITE), DC_ERR_ABORTED,
             "a host callback failed with ABORTED (it gave no message)");
  dc_stream_release(st);
}
END_TEST

// A kernel fault found while running (bounds checking) fails the stream
// with the kernel's message.
START_TEST(test_stream_kernel_fault_fails_the_stream) {
  dc_program_t* p = build_on(dut, "over.cl",
                          "__kernel void over(__global int* x) {\n"
                          "  x[get_global_id(0) + 1] = 1;\n"
                          "}\n",
                          "-dc-checked");
  dc_buffer_t* b = dc_test_buffer_new(dut, DC_DTYPE_I32, 16, "small");
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "faulty");
  dc_arg_t arg = dc_arg_buffer(b);
  dc_dispatch_t grid = {.dims = 1, .global = {16}};
  DC_CK_OK(dc_stream_dispatch(st, kernel_of(p, "over"), &grid, &arg, 1));
  DC_CK_FAIL(dc_stream_sync(st, DC_TIMEOUT_INFINITE), DC_ERR_OUT_OF_RANGE,
             "over");
  dc_stream_release(st);
  dc_buffer_release(b);
  dc_program_release(p);
}
END_TEST

//===-- Cancellation ----------------------------------------------------===//

START_TEST(test_stream_cancel_drops_queued_commands) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "cancel");
  dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
  gate_t gate = {0};
  gated_t g = {&gate, 1};
  static log_t log;
  atomic_store(&log.count, 0);
  logged_t item = {&log, 1};
  calls_t calls = {0};
  DC_CK_OK(dc_stream_host(st, wait_at_gate, &g));
  // The gate callback is running: it is not cancelled.
  for (int i = 0; i < 10000 && atomic_load(&gate.entered) == 0; ++i) {
    sleep_ms(1);
  }
  for (int i = 0; i < 10; ++i) DC_CK_OK(dc_stream_host(st, append, &item));
  DC_CK_OK(dc_stream_record(st, ev));
  DC_CK_OK(dc_event_on_complete(ev, count_call, &calls));
  ck_assert_uint_eq(dc_stream_cancel(st), 11);
  ck_assert_int_eq(atomic_load(&calls.count), 1);
  ck_assert_int_eq(atomic_load(&calls.last_status), DC_ERR_CANCELLED);
  DC_CK_FAIL(dc_event_wait(ev, DC_TIMEOUT_INFINITE), DC_ERR_CANCELLED,
             "cancelled");
  atomic_store(&gate.open, 1);
  // Cancelling does not fail the stream.
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&log.count), 0);
  DC_CK_OK(dc_stream_host(st, append, &item));
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&log.count), 1);
  dc_stream_stats_t stats;
  DC_CK_OK(dc_stream_stats(st, &stats));
  ck_assert_uint_eq(stats.cancelled, 11);
  ck_assert_uint_eq(stats.completed, 2);
  ck_assert_uint_eq(dc_stream_cancel(NULL), 0);
  dc_event_release(ev);
  dc_stream_release(st);
}
END_TEST

// A released token's handle is refused or ignored, never read as freed
// memory, while its context lives.
START_TEST(test_cancel_token_stale_handle_is_refused) {
  dc_cancel_token_t* token = NULL;
  DC_CK_OK(dc_cancel_token_create(ctx, &token));
  dc_cancel_token_release(token);
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "stale token");
  DC_CK_FAIL(dc_stream_set_cancel_token(st, token), DC_ERR_INVALID_ARGUMENT,
             "'token' is NULL or a released cancel token");
  ck_assert(!dc_cancel_token_is_cancelled(token));
  dc_cancel_token_cancel(token);   // does nothing
  dc_cancel_token_retain(token);   // does nothing
  dc_cancel_token_release(token);  // does nothing
  ck_assert(!dc_cancel_token_is_cancelled(token));
  dc_stream_release(st);
}
END_TEST

START_TEST(test_cancel_token_spans_streams) {
  dc_cancel_token_t* token = NULL;
  DC_CK_OK(dc_cancel_token_create(ctx, &token));
  dc_stream_t* a = new_stream(DC_PRIORITY_NORMAL, "token a");
  dc_stream_t* b = new_stream(DC_PRIORITY_NORMAL, "token b");
  dc_event_t* gate_event = new_event(DC_EVENT_DEFAULT);
  dc_event_t* done = new_event(DC_EVENT_DEFAULT);
  gate_t gate = {0};
  gated_t g = {&gate, 1};
  static log_t log;
  atomic_store(&log.count, 0);
  logged_t before = {&log, 1}, tokened = {&log, 2}, after = {&log, 3};
  // a: gate, record; b waits for a's event behind the token.
  DC_CK_OK(dc_stream_host(a, wait_at_gate, &g));
  DC_CK_OK(dc_stream_record(a, gate_event));
  DC_CK_OK(dc_stream_host(b, append, &before));
  DC_CK_OK(dc_stream_set_cancel_token(a, token));
  DC_CK_OK(dc_stream_set_cancel_token(b, token));
  DC_CK_OK(dc_stream_host(a, append, &tokened));
  DC_CK_OK(dc_stream_record(a, done));
  DC_CK_OK(dc_stream_wait_event(b, gate_event));
  DC_CK_OK(dc_stream_host(b, append, &tokened));
  DC_CK_OK(dc_stream_set_cancel_token(b, NULL));
  DC_CK_OK(dc_stream_host(b, append, &after));
  ck_assert(!dc_cancel_token_is_cancelled(token));
  dc_cancel_token_cancel(token);
  dc_cancel_token_cancel(token);  // idempotent
  ck_assert(dc_cancel_token_is_cancelled(token));
  // b was parked on the gate's event: it goes on without waiting.
  DC_CK_OK(dc_stream_sync(b, DC_TIMEOUT_INFINITE));
  atomic_store(&gate.open, 1);
  DC_CK_OK(dc_stream_sync(a, DC_TIMEOUT_INFINITE));
  DC_CK_FAIL(dc_event_wait(done, DC_TIMEOUT_INFINITE), DC_ERR_CANCELLED,
             "cancel token");
  ck_assert_int_eq(atomic_load(&log.count), 2);
  ck_assert_int_eq(log.entries[0], 1);
  ck_assert_int_eq(log.entries[1], 3);
  dc_stream_stats_t sa, sb;
  DC_CK_OK(dc_stream_stats(a, &sa));
  DC_CK_OK(dc_stream_stats(b, &sb));
  ck_assert_uint_eq(sa.cancelled, 2);
  ck_assert_uint_eq(sb.cancelled, 2);
  dc_cancel_token_release(token);
  dc_event_release(gate_event);
  dc_event_release(done);
  dc_stream_release(a);
  dc_stream_release(b);
}
END_TEST

//===-- Waiting from the wrong place, lifetime --------------------------===//

typedef struct self_sync_t {
  dc_stream_t* stream;
  atomic_int status;
} self_sync_t;

static dc_status_t sync_own_stream(void* arg) {
  self_sync_t* s = arg;
  atomic_store(&s->status, (int)dc_stream_sync(s->stream, 0));
  return DC_OK;
}

START_TEST(test_stream_refuses_to_wait_for_itself) {
  dc_stream_t* st = new_stream(DC_PRIORITY_NORMAL, "self");
  self_sync_t s = {st, 0};
  DC_CK_OK(dc_stream_host(st, sync_own_stream, &s));
  DC_CK_OK(dc_stream_sync(st, DC_TIMEOUT_INFINITE));
  ck_assert_int_eq(atomic_load(&s.status), DC_ERR_FAILED_PRECONDITION);
  dc_stream_release(st);
}
END_TEST

static dc_status_t slow_append(void* arg) {
  sleep_ms(20);
  return append(arg);
}

// Releasing the context with work in flight waits for it.
START_TEST(test_context_release_finishes_work_in_flight) {
  dc_context_t* own = dc_test_kernel_context(NULL);
  dc_device_t* dev = dc_test_device(own);
  static log_t log;
  atomic_store(&log.count, 0);
  logged_t item = {&log, 1};
  dc_stream_t* st = NULL;
  DC_CK_OK(dc_stream_create(dev, NULL, &st));
  for (int i = 0; i < 5; ++i) DC_CK_OK(dc_stream_host(st, slow_append, &item));
  dc_stream_release(st);
  dc_context_release(own);
  ck_assert_int_eq(atomic_load(&log.count), 5);
}
END_TEST

//===-- Stream groups ---------------------------------------------------===//

START_TEST(test_stream_group_picks_and_syncs) {
  dc_stream_group_t* g = NULL;
  DC_CK_OK(dc_stream_group_create(dut, NULL, &g));
  ck_assert_uint_eq(dc_stream_group_size(g),
                    dc_device_info(dut)->stream_count);
  ck_assert_uint_ge(dc_stream_group_size(g), 2);
  dc_stream_group_release(g);

  dc_stream_group_params_t p = {.count = 3, .label = "grp"};
  DC_CK_OK(dc_stream_group_create(dut, &p, &g));
  ck_assert_str_eq(dc_stream_label(dc_stream_group_stream(g, 2)), "grp.2");
  ck_assert_ptr_null(dc_stream_group_stream(g, 3));
  // Round-robin visits each stream in turn.
  for (int i = 0; i < 6; ++i) {
    ck_assert_ptr_eq(dc_stream_group_next(g, DC_PICK_ROUND_ROBIN),
                     dc_stream_group_stream(g, (size_t)(i % 3)));
  }
  // Least-loaded avoids the busy streams.
  gate_t gate = {0};
  gated_t gated = {&gate, 1};
  DC_CK_OK(dc_stream_host(dc_stream_group_stream(g, 0), wait_at_gate,
                          &gated));
  DC_CK_OK(dc_stream_host(dc_stream_group_stream(g, 2), wait_at_gate,
                          &gated));
  for (int i = 0; i < 4; ++i) {
    ck_assert_ptr_eq(dc_stream_group_next(g, DC_PICK_LEAST_LOADED),
                     dc_stream_group_stream(g, 1));
  }
  DC_CK_FAIL(dc_stream_group_sync(g, 1000000), DC_ERR_DEADLINE_EXCEEDED,
             "did not drain");
  atomic_store(&gate.open, 1);
  DC_CK_OK(dc_stream_group_sync(g, DC_TIMEOUT_INFINITE));
  // The first failed stream's error, in index order.
  DC_CK_OK(dc_stream_host(dc_stream_group_stream(g, 1), fail_boom, NULL));
  DC_CK_FAIL(dc_stream_group_sync(g, DC_TIMEOUT_INFINITE), DC_ERR_DATA_LOSS,
             "boom");
  dc_stream_stats_t stats;
  DC_CK_OK(dc_stream_stats(dc_stream_group_stream(g, 0), &stats));
  ck_assert_uint_eq(stats.completed, 1);
  ck_assert_uint_gt(stats.busy_ns, 0);
  dc_stream_group_release(g);
  // A released group's handle is refused, never read as freed memory.
  ck_assert_uint_eq(dc_stream_group_size(g), 0);
  ck_assert_ptr_null(dc_stream_group_stream(g, 0));
  ck_assert_ptr_null(dc_stream_group_next(g, DC_PICK_ROUND_ROBIN));
  DC_CK_FAIL(dc_stream_group_sync(g, 0), DC_ERR_INVALID_ARGUMENT,
             "'group' is NULL or a released stream group");
  dc_stream_group_release(g);  // a second release does nothing
}
END_TEST

//===-- The event pool --------------------------------------------------===//

START_TEST(test_event_pool_recycles_events) {
  dc_event_pool_stats_t s0, s1;
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_DEFAULT, &s0));
  for (int i = 0; i < 1000; ++i) {
    dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
    dc_event_release(ev);
  }
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_DEFAULT, &s1));
  // Until the quarantine has filled, every create allocates; then none.
  size_t fill = s0.cached > DC_EVENT_POOL_QUARANTINE
                    ? 0
                    : DC_EVENT_POOL_QUARANTINE + 1 - s0.cached;
  ck_assert_uint_eq(s1.created - s0.created, fill);
  ck_assert_uint_eq(s1.reused - s0.reused, 1000 - fill);
  ck_assert_double_gt(s1.reuse_ratio, 0.9);
  ck_assert_uint_eq(s1.in_use, 0);
  // Timing events have a pool of their own.
  dc_event_t* held[5];
  for (int i = 0; i < 5; ++i) held[i] = new_event(DC_EVENT_TIMING);
  dc_event_pool_stats_t t;
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_TIMING, &t));
  ck_assert_uint_eq(t.in_use, 5);
  ck_assert_uint_eq(t.peak_in_use, 5);
  ck_assert_uint_eq(t.created, 5);
  for (int i = 0; i < 5; ++i) dc_event_release(held[i]);
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_TIMING, &t));
  ck_assert_uint_eq(t.in_use, 0);
  ck_assert_uint_eq(t.cached, 5);
  ck_assert_uint_eq(t.peak_in_use, 5);
  // Reserved events are ready beyond the quarantine: 32 creates allocate
  // nothing.
  DC_CK_OK(dc_event_pool_reserve(dut, DC_EVENT_DEFAULT, 32));
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_DEFAULT, &s1));
  ck_assert_uint_ge(s1.cached, 32 + DC_EVENT_POOL_QUARANTINE);
  dc_event_t* ready[32];
  for (int i = 0; i < 32; ++i) ready[i] = new_event(DC_EVENT_DEFAULT);
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_DEFAULT, &s0));
  ck_assert_uint_eq(s0.created, s1.created);
  for (int i = 0; i < 32; ++i) dc_event_release(ready[i]);
  // Trimming keeps the quarantine, whatever |keep| says.
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_DEFAULT, &s1));
  for (int i = 0; i < 2 * DC_EVENT_POOL_QUARANTINE; ++i) {
    held[0] = new_event(DC_EVENT_TIMING);
    held[1] = new_event(DC_EVENT_TIMING);
    dc_event_release(held[0]);
    dc_event_release(held[1]);
  }
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_TIMING, &t));
  size_t timing_cached = t.cached;
  ck_assert_uint_gt(timing_cached, DC_EVENT_POOL_QUARANTINE);
  ck_assert_uint_eq(dc_event_pool_trim(dut, 2),
                    s1.cached - DC_EVENT_POOL_QUARANTINE +
                        timing_cached - DC_EVENT_POOL_QUARANTINE);
  DC_CK_OK(dc_event_pool_stats(dut, DC_EVENT_TIMING, &t));
  ck_assert_uint_eq(t.cached, DC_EVENT_POOL_QUARANTINE);
}
END_TEST

// A released event's handle is refused, naming the event, for at least
// DC_EVENT_POOL_QUARANTINE more releases: it never names the next event.
START_TEST(test_event_stale_handle_is_refused) {
  dc_event_t* stale = new_event(DC_EVENT_DEFAULT);
  dc_event_release(stale);
  for (int i = 0; i < DC_EVENT_POOL_QUARANTINE; ++i) {
    dc_event_t* ev = new_event(DC_EVENT_DEFAULT);
    ck_assert_ptr_ne(ev, stale);
    DC_CK_FAIL(dc_event_query(stale), DC_ERR_INVALID_ARGUMENT,
               "'event' is NULL or a released event");
    dc_event_release(ev);
  }
  ck_assert_ptr_null(dc_event_device(stale));
  dc_event_release(stale);  // a second release does nothing
}
END_TEST

//===-- Invalid input ---------------------------------------------------===//

START_TEST(test_stream_rejects_bad_input) {
  dc_stream_t* st = SENTINEL;
  DC_CK_FAIL(dc_stream_create(NULL, NULL, &st), DC_ERR_INVALID_ARGUMENT,
             "'device' must not be NULL");
  ck_assert_ptr_null(st);
  DC_CK_FAIL(dc_stream_create(dut, NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "'out_stream'");
  dc_stream_params_t bad = {.priority = (dc_priority_t)9};
  DC_CK_FAIL(dc_stream_create(dut, &bad, &st), DC_ERR_INVALID_ARGUMENT,
             "unknown priority 9");
  st = new_stream(DC_PRIORITY_NORMAL, NULL);
  DC_CK_STR_HAS(dc_stream_label(st), "stream ");
  ck_assert_uint_gt(dc_stream_id(st), 0);
  ck_assert_ptr_eq(dc_stream_device(st), dut);
  dc_buffer_t* i32 = dc_test_buffer_new(dut, DC_DTYPE_I32, 8, "i32");
  dc_buffer_t* f32 = dc_test_buffer_new(dut, DC_DTYPE_F32, 8, "f32");
  int32_t host[8] = {0};
  DC_CK_FAIL(dc_stream_copy(st, i32, 0, f32, 0, 8), DC_ERR_INVALID_ARGUMENT,
             "dc_stream_copy: dtypes differ (dst is i32, src is f32)");
  DC_CK_FAIL(dc_stream_copy(st, i32, 4, i32, 0, 8), DC_ERR_OUT_OF_RANGE,
             "dc_stream_copy: elements [4, 4 + 8) are outside 'dst'");
  DC_CK_FAIL(dc_stream_write(st, i32, 0, NULL, 8), DC_ERR_INVALID_ARGUMENT,
             "'src' must not be NULL");
  DC_CK_FAIL(dc_stream_read(st, i32, 0, host, 0), DC_ERR_INVALID_ARGUMENT,
             "element count is 0");
  DC_CK_FAIL(dc_stream_fill(st, NULL, 0, 1, host), DC_ERR_INVALID_ARGUMENT,
             "'buffer' is NULL or a released buffer");
  DC_CK_FAIL(dc_stream_host(st, NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "'fn' must not be NULL");
  DC_CK_FAIL(dc_stream_record(st, NULL), DC_ERR_INVALID_ARGUMENT,
             "'event' is NULL or a released event");
  DC_CK_FAIL(dc_stream_wait_event(st, NULL), DC_ERR_INVALID_ARGUMENT,
             "'event' is NULL or a released event");
  DC_CK_FAIL(dc_stream_dispatch(st, NULL, &(dc_dispatch_t){.dims = 1},
                                NULL, 0),
             DC_ERR_INVALID_ARGUMENT, "dc_stream_dispatch: 'kernel' is NULL");
  dc_program_t* p = build_on(dut, "inc.cl", kIncrement, NULL);
  dc_arg_t wrong = dc_arg_buffer(f32);
  dc_dispatch_t grid = {.dims = 1, .global = {8}};
  DC_CK_FAIL(dc_stream_dispatch(st, kernel_of(p, "inc"), &grid, &wrong, 1),
             DC_ERR_INVALID_ARGUMENT,
             "dc_stream_dispatch: kernel 'inc': argument 0 'x' (__global "
             "int*): the buffer holds f32, the kernel expects i32");
  // Nothing above was queued.
  dc_stream_stats_t stats;
  DC_CK_OK(dc_stream_stats(st, &stats));
  ck_assert_uint_eq(stats.submitted, 0);
  DC_CK_FAIL(dc_stream_sync(NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "'stream' is NULL or a released stream");
  DC_CK_FAIL(dc_stream_query(NULL), DC_ERR_INVALID_ARGUMENT, "dc_stream_query");
  DC_CK_FAIL(dc_stream_reset(NULL), DC_ERR_INVALID_ARGUMENT, "dc_stream_reset");
  DC_CK_FAIL(dc_stream_stats(st, NULL), DC_ERR_INVALID_ARGUMENT,
             "'out_stats'");
  DC_CK_FAIL(dc_stream_set_cancel_token(NULL, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_stream_set_cancel_token");
  DC_CK_FAIL(dc_cancel_token_create(ctx, NULL), DC_ERR_INVALID_ARGUMENT,
             "out_token");
  dc_cancel_token_t* token = SENTINEL;
  DC_CK_FAIL(dc_cancel_token_create(NULL, &token), DC_ERR_INVALID_ARGUMENT,
             "ctx");
  ck_assert_ptr_null(token);
  // A token serves the streams of its own context only.
  dc_context_t* other = dc_test_context_new(NULL);
  DC_CK_OK(dc_cancel_token_create(other, &token));
  DC_CK_FAIL(dc_stream_set_cancel_token(st, token), DC_ERR_INVALID_ARGUMENT,
             "the token belongs to another context");
  dc_context_release(other);  // the token keeps it alive
  ck_assert(!dc_cancel_token_is_cancelled(token));
  dc_cancel_token_release(token);
  dc_event_t* ev = SENTINEL;
  DC_CK_FAIL(dc_event_create(dut, 0x10, &ev), DC_ERR_INVALID_ARGUMENT,
             "unknown event flags 0x10");
  ck_assert_ptr_null(ev);
  DC_CK_FAIL(dc_event_create(NULL, 0, &ev), DC_ERR_INVALID_ARGUMENT,
             "'device' must not be NULL");
  DC_CK_FAIL(dc_event_wait(NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "dc_event_wait: 'event' is NULL");
  DC_CK_FAIL(dc_event_query(NULL), DC_ERR_INVALID_ARGUMENT, "dc_event_query");
  DC_CK_FAIL(dc_event_pool_stats(dut, 0, NULL), DC_ERR_INVALID_ARGUMENT,
             "out_stats");
  DC_CK_FAIL(dc_event_pool_reserve(dut, 7, 1), DC_ERR_INVALID_ARGUMENT,
             "unknown event flags");
  ck_assert_uint_eq(dc_event_pool_trim(NULL, 0), 0);
  ck_assert_ptr_null(dc_event_device(NULL));
  dc_stream_group_t* g = SENTINEL;
  dc_stream_group_params_t big = {.count = 65};
  DC_CK_FAIL(dc_stream_group_create(dut, &big, &g), DC_ERR_INVALID_ARGUMENT,
             "65 streams asked for");
  ck_assert_ptr_null(g);
  DC_CK_FAIL(dc_stream_group_sync(NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "'group' is NULL");
  ck_assert_ptr_null(dc_stream_group_next(NULL, DC_PICK_ROUND_ROBIN));
  ck_assert_uint_eq(dc_stream_group_size(NULL), 0);
  // Releasing NULL is harmless.
  dc_stream_release(NULL);
  dc_event_release(NULL);
  dc_stream_group_release(NULL);
  dc_cancel_token_release(NULL);
  dc_program_release(p);
  dc_buffer_release(i32);
  dc_buffer_release(f32);
  dc_stream_release(st);
  // A released stream is refused, not used.
  DC_CK_FAIL(dc_stream_sync(st, 0), DC_ERR_INVALID_ARGUMENT,
             "'stream' is NULL or a released stream");
}
END_TEST

static Suite* stream_suite(void) {
  Suite* s = dc_test_kernel_suite("stream", "dc-check-stream");
  TCase* order = dc_test_kernel_tcase(s, "order");
  tcase_add_test(order, test_stream_runs_commands_in_order);
  tcase_add_test(order, test_stream_commands_see_earlier_results);
  tcase_add_test(order, test_stream_commands_keep_objects_alive);
  TCase* concurrency = dc_test_kernel_tcase(s, "concurrency");
  tcase_add_test(concurrency, test_streams_run_concurrently);
  tcase_add_test(concurrency, test_stream_priority_is_honoured);
  TCase* events = dc_test_kernel_tcase(s, "events");
  tcase_add_test(events, test_stream_waits_for_another_streams_event);
  tcase_add_test(events, test_streams_take_turns_through_events);
  tcase_add_test(events, test_event_wait_query_and_timeout);
  tcase_add_test(events, test_timing_events_measure_elapsed_time);
  tcase_add_test(events, test_event_callbacks_run_once);
  tcase_add_test(events, test_event_pool_recycles_events);
  tcase_add_test(events, test_event_stale_handle_is_refused);
  TCase* failure = dc_test_kernel_tcase(s, "failure");
  tcase_add_test(failure, test_stream_failure_propagates_once);
  tcase_add_test(failure, test_host_callback_error_without_message);
  tcase_add_test(failure, test_stream_kernel_fault_fails_the_stream);
  tcase_add_test(failure, test_stream_cancel_drops_queued_commands);
  tcase_add_test(failure, test_cancel_token_spans_streams);
  tcase_add_test(failure, test_cancel_token_stale_handle_is_refused);
  tcase_add_test(failure, test_stream_refuses_to_wait_for_itself);
  tcase_add_test(failure, test_context_release_finishes_work_in_flight);
  TCase* groups = dc_test_kernel_tcase(s, "groups");
  tcase_add_test(groups, test_stream_group_picks_and_syncs);
  tcase_add_test(groups, test_stream_rejects_bad_input);
  return s;
}

DC_CHECK_DEVICE_MAIN(stream_suite)

// check_lifetime.c: one object lifetime for every type (resource.h): a
// released handle is refused with DC_ERR_INVALID_ARGUMENT naming its type,
// getters answer empty, a second release is ignored, and retains and
// releases balance (nothing left alive, every block back to the
// allocator).
// SPDX-License-Identifier: MIT
#include <check.h>
#include <stdlib.h>

#include "check_util.h"

static dc_test_allocator_t counts;
static dc_context_t* ctx;
static dc_device_t* cpu;
static dc_stream_t* stream;  // for encoders and tokens

static void setup(void) {
  dc_test_clear_env();
  memset(&counts, 0, sizeof(counts));
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counts);
  ctx = dc_test_context_new(&p);
  cpu = dc_test_cpu(ctx);
  DC_CK_OK(dc_stream_create(cpu, NULL, &stream));
}

static dc_status_t nothing(void* user_data) {
  (void)user_data;
  return DC_OK;
}

//===-- One row per type --------------------------------------------------===//

// How each type is made, used, retained and released, and what its stale
// handle's message says.
typedef struct type_case_t {
  const char* type;   // as messages name it
  const char* param;  // the parameter |use| passes it as
  const char* fn;     // the function |use| calls
  void* (*create)(void);
  dc_status_t (*use)(void* handle);
  bool (*getter_empty)(void* handle);
  void (*retain)(void* handle);
  void (*release)(void* handle);
} type_case_t;

#define RETAIN_RELEASE(T, prefix)                                        \
  static void retain_##prefix(void* h) { prefix##_retain((T*)h); }       \
  static void release_##prefix(void* h) { prefix##_release((T*)h); }

RETAIN_RELEASE(dc_buffer_t, dc_buffer)
RETAIN_RELEASE(dc_program_t, dc_program)
RETAIN_RELEASE(dc_stream_t, dc_stream)
RETAIN_RELEASE(dc_stream_group_t, dc_stream_group)
RETAIN_RELEASE(dc_event_t, dc_event)
RETAIN_RELEASE(dc_cancel_token_t, dc_cancel_token)
RETAIN_RELEASE(dc_encoder_t, dc_encoder)
RETAIN_RELEASE(dc_graph_t, dc_graph)
RETAIN_RELEASE(dc_graph_exec_t, dc_graph_exec)
RETAIN_RELEASE(dc_breaker_t, dc_breaker)

static void* new_buffer(void) {
  return dc_test_buffer_new(cpu, DC_DTYPE_F32, 4, "lifetime");
}
static dc_status_t use_buffer(void* h) {
  float x = 1.0f;
  return dc_buffer_write(h, 0, &x, 1);
}
static bool empty_buffer(void* h) {
  return dc_buffer_label(h)[0] == '\0' && dc_buffer_length(h) == 0 &&
         dc_buffer_device(h) == NULL;
}

static void* new_program(void) {
  dc_program_params_t p = {
      .source = "__kernel void k(__global float* a) {\n"
                "  a[get_global_id(0)] = 1.0f;\n}\n",
      .name = "lifetime"};
  dc_program_t* program = NULL;
  DC_CK_OK(dc_program_create(cpu, &p, &program));
  return program;
}
static dc_status_t use_program(void* h) {
  dc_kernel_t* k = NULL;
  return dc_program_kernel(h, 0, &k);
}
static bool empty_program(void* h) {
  return dc_program_build_log(h)[0] == '\0' &&
         dc_program_kernel_count(h) == 0;
}

static void* new_stream(void) {
  dc_stream_t* st = NULL;
  DC_CK_OK(dc_stream_create(cpu, NULL, &st));
  return st;
}
static dc_status_t use_stream(void* h) {
  dc_stream_stats_t stats;
  return dc_stream_stats(h, &stats);
}
static bool empty_stream(void* h) {
  return dc_stream_label(h)[0] == '\0' && dc_stream_device(h) == NULL;
}

static void* new_group(void) {
  dc_stream_group_params_t p = {.count = 2};
  dc_stream_group_t* g = NULL;
  DC_CK_OK(dc_stream_group_create(cpu, &p, &g));
  return g;
}
static dc_status_t use_group(void* h) { return dc_stream_group_sync(h, 0); }
static bool empty_group(void* h) {
  return dc_stream_group_size(h) == 0 &&
         dc_stream_group_stream(h, 0) == NULL;
}

static void* new_event(void) {
  dc_event_t* ev = NULL;
  DC_CK_OK(dc_event_create(cpu, 0, &ev));
  return ev;
}
static dc_status_t use_event(void* h) { return dc_event_query(h); }
static bool empty_event(void* h) { return dc_event_device(h) == NULL; }

static void* new_token(void) {
  dc_cancel_token_t* t = NULL;
  DC_CK_OK(dc_cancel_token_create(ctx, &t));
  return t;
}
static dc_status_t use_token(void* h) {
  dc_status_t st = dc_stream_set_cancel_token(stream, h);
  if (st == DC_OK) DC_CK_OK(dc_stream_set_cancel_token(stream, NULL));
  return st;
}
static bool empty_token(void* h) {
  dc_cancel_token_cancel(h);  // ignored
  return !dc_cancel_token_is_cancelled(h);
}

static void* new_encoder(void) {
  dc_encoder_t* e = NULL;
  DC_CK_OK(dc_encoder_create(stream, &e));
  return e;
}
static dc_status_t use_encoder(void* h) {
  return dc_encoder_set_stream(h, stream);
}
static bool empty_encoder(void* h) {
  dc_encoder_stats_t stats;
  return dc_encoder_stats(h, &stats) == DC_ERR_INVALID_ARGUMENT;
}

static void* new_graph(void) {
  dc_graph_t* g = NULL;
  DC_CK_OK(dc_graph_create(ctx, NULL, &g));
  DC_CK_OK(dc_graph_host(g, "h", nothing, NULL, NULL));
  return g;
}
static dc_status_t use_graph(void* h) {
  return dc_graph_validate(h, NULL, 0);
}
static bool empty_graph(void* h) { return dc_graph_op_count(h) == 0; }

static void* new_exec(void) {
  dc_graph_t* g = new_graph();
  dc_stream_group_t* group = new_group();
  dc_graph_exec_t* e = NULL;
  DC_CK_OK(dc_graph_instantiate(g, group, &e));
  dc_graph_release(g);  // the instance keeps what it needs
  dc_stream_group_release(group);
  DC_CK_OK(dc_graph_exec_run(e, NULL));
  return e;
}
static dc_status_t use_exec(void* h) { return dc_graph_exec_run(h, NULL); }
static bool empty_exec(void* h) {
  dc_graph_exec_cancel(h);  // ignored
  return dc_graph_exec_op_count(h) == 0 && dc_graph_exec_finished(h) == 0;
}

static void* new_breaker(void) {
  dc_breaker_t* b = NULL;
  DC_CK_OK(dc_breaker_create(ctx, "lifetime", NULL, &b));
  return b;
}
static dc_status_t use_breaker(void* h) {
  dc_breaker_permit_t permit;
  return dc_breaker_acquire(h, &permit);
}
static bool empty_breaker(void* h) { return dc_breaker_name(h)[0] == '\0'; }

#define ROW(type, param, fn, name, prefix)                                   \
  {type, param, fn, new_##name, use_##name, empty_##name, retain_##prefix, \
   release_##prefix}

static const type_case_t kCases[] = {
    ROW("buffer", "buffer", "dc_buffer_write", buffer, dc_buffer),
    ROW("program", "program", "dc_program_kernel", program, dc_program),
    ROW("stream", "stream", "dc_stream_stats", stream, dc_stream),
    ROW("stream group", "group", "dc_stream_group_sync", group,
        dc_stream_group),
    ROW("event", "event", "dc_event_query", event, dc_event),
    ROW("cancel token", "token", "dc_stream_set_cancel_token", token,
        dc_cancel_token),
    ROW("encoder", "encoder", "dc_encoder_set_stream", encoder, dc_encoder),
    ROW("graph", "graph", "dc_graph_validate", graph, dc_graph),
    ROW("graph instance", "exec", "dc_graph_exec_run", exec, dc_graph_exec),
    ROW("breaker", "breaker", "dc_breaker_acquire", breaker, dc_breaker),
};
#define CASE_COUNT ((int)(sizeof(kCases) / sizeof(kCases[0])))

//===-- lifecycle ---------------------------------------------------------===//

// A released handle: refused, naming the function and the type; getters
// empty; retains and further releases ignored.
START_TEST(test_lifetime_stale_handle_names_its_type) {
  const type_case_t* c = &kCases[_i];
  void* h = c->create();
  DC_CK_OK(c->use(h));
  c->release(h);
  char want[160];
  snprintf(want, sizeof(want), "%s: '%s' is NULL or a released %s", c->fn,
           c->param, c->type);
  DC_CK_FAIL(c->use(h), DC_ERR_INVALID_ARGUMENT, want);
  ck_assert_msg(c->getter_empty(h), "%s: a getter answered", c->type);
  c->retain(h);   // ignored
  c->release(h);  // ignored: the second release
  c->release(h);
  DC_CK_FAIL(c->use(h), DC_ERR_INVALID_ARGUMENT, want);
  // NULL gets the same answer (but a NULL token clears a stream's), and
  // retain and release ignore it.
  if (strcmp(c->type, "cancel token") != 0) {
    DC_CK_FAIL(c->use(NULL), DC_ERR_INVALID_ARGUMENT, want);
  }
  c->retain(NULL);
  c->release(NULL);
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 1);  // |stream|
}
END_TEST

// Retains and releases balance: the object lives until the last release,
// then nothing of it is left alive.
START_TEST(test_lifetime_retain_release_balance) {
  const type_case_t* c = &kCases[_i];
  void* h = c->create();
  for (int i = 0; i < 3; ++i) c->retain(h);
  for (int i = 0; i < 3; ++i) {
    c->release(h);
    DC_CK_OK(c->use(h));  // references remain
  }
  c->release(h);
  ck_assert_int_eq(c->use(h), DC_ERR_INVALID_ARGUMENT);
  c->release(h);  // a second last release does nothing
  ck_assert_uint_eq(dc_context_report_leaks(ctx), 1);  // |stream|
}
END_TEST

// Objects keep their context alive: every type outlives the host's
// reference to the context, and the last release gives every block back.
START_TEST(test_lifetime_objects_outlive_the_context_reference) {
  void* handles[CASE_COUNT];
  for (int i = 0; i < CASE_COUNT; ++i) handles[i] = kCases[i].create();
  dc_context_release(ctx);
  ctx = NULL;
  for (int i = 0; i < CASE_COUNT; ++i) {
    DC_CK_OK(kCases[i].use(handles[i]));  // still alive
  }
  for (int i = CASE_COUNT; i-- > 0;) kCases[i].release(handles[i]);
  ck_assert_uint_gt(atomic_load(&counts.live_blocks), 0);  // the stream's
  dc_stream_release(stream);  // the last object: the context goes with it
  stream = NULL;
  DC_CK_ALLOCATOR_BALANCED(&counts);
}
END_TEST

// A kernel is part of its program: a kernel of a released program is
// refused, reading only the program's quarantined storage (which ASan
// checks).
START_TEST(test_lifetime_kernel_of_a_released_program) {
  dc_program_t* p = new_program();
  dc_kernel_t* k = NULL;
  DC_CK_OK(dc_program_kernel(p, 0, &k));
  dc_kernel_retain(k);
  dc_program_release(p);
  ck_assert_str_eq(dc_kernel_name(k), "k");  // the kernel's reference
  dc_kernel_release(k);
  ck_assert_str_eq(dc_kernel_name(k), "");
  dc_kernel_info_t info;
  ck_assert_int_eq(dc_kernel_info(k, &info), DC_ERR_INVALID_ARGUMENT);
  dc_kernel_release(k);  // ignored
}
END_TEST

// A stale handle stays recognisable while later objects of its type come
// and go (the quarantine), and the storage is then reused.
START_TEST(test_lifetime_quarantine_outlasts_later_releases) {
  dc_graph_t* stale = new_graph();
  dc_graph_release(stale);
  for (int i = 0; i < 40; ++i) dc_graph_release(new_graph());
  DC_CK_FAIL(dc_graph_validate(stale, NULL, 0), DC_ERR_INVALID_ARGUMENT,
             "'graph' is NULL or a released graph");
}
END_TEST

// Every block back to the allocator: nothing leaked a hold on the context.
static void checked_teardown(void) {
  dc_stream_release(stream);
  dc_context_release(ctx);
  DC_CK_ALLOCATOR_BALANCED(&counts);
}

static Suite* lifetime_suite(void) {
  Suite* s = suite_create("lifetime");
  TCase* tc = tcase_create("lifecycle");
  tcase_add_checked_fixture(tc, setup, checked_teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_lifetime_stale_handle_names_its_type, 0,
                      CASE_COUNT);
  tcase_add_loop_test(tc, test_lifetime_retain_release_balance, 0,
                      CASE_COUNT);
  tcase_add_test(tc, test_lifetime_objects_outlive_the_context_reference);
  tcase_add_test(tc, test_lifetime_kernel_of_a_released_program);
  tcase_add_test(tc, test_lifetime_quarantine_outlasts_later_releases);
  suite_add_tcase(s, tc);
  return s;
}

DC_CHECK_MAIN(lifetime_suite)

// check_device.c: device discovery, the CPU device's capabilities, device
// lookup, and the backend interface (registration, adding devices).
// SPDX-License-Identifier: MIT
#include <sched.h>
#include <unistd.h>

#include "check_util.h"

static void fixture(void) {
  dc_test_clear_env();
  dc_test_fake_reset();
}

// Quiet parameters whose backends are left to DC_DEVICES, for the tests
// of that variable.
static dc_context_params_t env_backends_params(void) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = NULL;
  return p;
}

// The first "model name" of /proc/cpuinfo, or "" if there is none.
static void proc_model_name(char* out, size_t size) {
  out[0] = '\0';
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (f == NULL) return;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char* value = strchr(line, ':');
    if (value == NULL) continue;
    ++value;
    while (*value == ' ' || *value == '\t') ++value;
    value[strcspn(value, "\n")] = '\0';
    snprintf(out, size, "%s", value);
    break;
  }
  fclose(f);
}

//===-- core: the CPU device --------------------------------------------===//

START_TEST(test_device_cpu_is_device_zero) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* cpu = dc_test_cpu(ctx);
  const dc_device_info_t* info = dc_device_info(cpu);
  ck_assert_ptr_nonnull(info);
  ck_assert_str_eq(info->name, "cpu");
  ck_assert_str_eq(info->backend, "cpu");
  ck_assert_str_eq(dc_device_name(cpu), "cpu");
  ck_assert_int_eq(info->kind, DC_DEVICE_KIND_CPU);
  ck_assert(info->unified_memory);
  ck_assert_ptr_eq(dc_device_context(cpu), ctx);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_extra_cpu_devices) {
  dc_context_params_t p = dc_test_quiet_params();
  p.cpu_devices = 3;
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(dc_context_device_count(ctx), 3);
  const char* names[] = {"cpu", "cpu:1", "cpu:2"};
  dc_device_t* d[3];
  for (size_t i = 0; i < 3; ++i) {
    DC_CK_OK(dc_context_device(ctx, i, &d[i]));
    ck_assert_str_eq(dc_device_name(d[i]), names[i]);
    ck_assert_str_eq(dc_device_info(d[i])->backend, "cpu");
  }
  // Separate devices: buffers live on one, and copies cross between them.
  dc_buffer_t* a = dc_test_buffer_new(d[0], DC_DTYPE_I32, 4, "on cpu");
  dc_buffer_t* b = dc_test_buffer_new(d[2], DC_DTYPE_I32, 4, "on cpu:2");
  int32_t in[4] = {1, 2, 3, 4}, out[4] = {0};
  DC_CK_OK(dc_buffer_write(a, 0, in, 4));
  DC_CK_OK(dc_buffer_copy(b, 0, a, 0, 4));
  DC_CK_OK(dc_buffer_read(b, 0, out, 4));
  ck_assert_mem_eq(in, out, sizeof(in));
  ck_assert_ptr_eq(dc_buffer_device(b), d[2]);
  dc_buffer_release(a);
  dc_buffer_release(b);
  dc_context_release(ctx);
  // From the environment, and bounded.
  setenv("DC_CPU_DEVICES", "2", 1);
  ctx = dc_test_context_new(NULL);
  ck_assert_uint_eq(dc_context_device_count(ctx), 2);
  dc_context_release(ctx);
  setenv("DC_CPU_DEVICES", "9", 1);
  dc_context_t* none = NULL;
  DC_CK_FAIL(dc_context_create(NULL, &none), DC_ERR_INVALID_ARGUMENT,
             "DC_CPU_DEVICES=9 is more than 8");
  unsetenv("DC_CPU_DEVICES");
  p.cpu_devices = 9;
  DC_CK_FAIL(dc_context_create(&p, &none), DC_ERR_INVALID_ARGUMENT,
             "cpu_devices 9 is more than 8");
}
END_TEST

START_TEST(test_device_cpu_info_is_read_from_the_machine) {
  dc_context_params_t p = dc_test_quiet_params();
  p.thread_count = 3;
  dc_context_t* ctx = dc_test_context_new(&p);
  const dc_device_info_t* info = dc_device_info(dc_test_cpu(ctx));

  cpu_set_t set;
  CPU_ZERO(&set);
  ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
  ck_assert_uint_eq(info->compute_units, (uint32_t)CPU_COUNT(&set));
  long configured = sysconf(_SC_NPROCESSORS_CONF);
  if (configured > 0) ck_assert_uint_le(info->compute_units, configured);
  ck_assert_uint_eq(info->worker_threads, 3);

  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  ck_assert_uint_gt(info->memory_size, 0);
  if (pages > 0 && page > 0) {
    ck_assert_uint_eq(info->memory_size, (size_t)pages * (size_t)page);
  }

  uint32_t w = info->simd_width;
  ck_assert_msg(w == 8 || w == 16 || w == 32 || w == 64, "simd_width %u", w);
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    ck_assert_uint_eq(w, 64);
  } else if (__builtin_cpu_supports("avx2")) {
    ck_assert_uint_eq(w, 32);
  } else {
    ck_assert_uint_ge(w, 16);  // SSE2 is part of x86-64
  }
#endif

  ck_assert_uint_gt(strlen(info->model), 0);
  char model[128];
  proc_model_name(model, sizeof(model));
  if (model[0] != '\0') ck_assert_str_eq(info->model, model);

  ck_assert_uint_gt(info->max_work_group_size, 0);
  ck_assert_uint_gt(info->local_memory_size, 0);
  if (info->cache_line_size != 0) {
    size_t line = info->cache_line_size;
    ck_assert_msg((line & (line - 1)) == 0 && line >= 16 && line <= 1024,
                  "cache line %zu", line);
  }
  if (info->cache_l1d_size != 0 && info->cache_l2_size != 0) {
    ck_assert_uint_lt(info->cache_l1d_size, info->cache_l2_size);
  }
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_find_by_name_and_backend) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* cpu = dc_test_cpu(ctx);
  dc_device_t* found = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "cpu", &found));
  ck_assert_ptr_eq(found, cpu);
  DC_CK_OK(dc_context_default_device(ctx, &found));
  ck_assert_ptr_eq(found, cpu);  // the CPU backend alone: the CPU
  dc_context_release(ctx);
}
END_TEST

// Every backend, as a host's context has them by default: the CPU
// devices first, then the machine's CUDA devices (none without a driver
// or a GPU), then the registered backends' devices in the order they
// were registered. The default device is the first GPU of all.
START_TEST(test_device_every_backend_in_discovery_order) {
  size_t gpus = dc_test_machine_device_count("cuda");
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "all";
  atomic_store(&dc_test_fake.devices_to_add, 2);
  dc_context_t* ctx = dc_test_context_new(&p);
  atomic_store(&dc_test_fake.devices_to_add, 0);
  size_t cpus = dc_test_backend_device_count(ctx, "cpu");
  ck_assert_uint_eq(dc_context_device_count(ctx), cpus + gpus + 2);
  ck_assert_str_eq(dc_device_name(dc_test_cpu(ctx)), "cpu");
  dc_device_t* d = NULL;
  for (size_t i = 0; i < gpus; ++i) {
    char name[32];
    snprintf(name, sizeof(name), "cuda:%zu", i);
    DC_CK_OK(dc_context_device(ctx, cpus + i, &d));
    ck_assert_str_eq(dc_device_name(d), name);
    ck_assert_str_eq(dc_device_info(d)->backend, "cuda");
    ck_assert_int_eq(dc_device_info(d)->kind, DC_DEVICE_KIND_GPU);
  }
  DC_CK_OK(dc_context_device(ctx, cpus + gpus, &d));
  ck_assert_str_eq(dc_device_name(d), "fake:0");
  DC_CK_OK(dc_context_default_device(ctx, &d));
  ck_assert_str_eq(dc_device_name(d), gpus > 0 ? "cuda:0" : "fake:0");
  dc_context_release(ctx);

  // Without fakes the default is the first CUDA device, else the CPU,
  // and the name "cuda" finds the first CUDA device, or fails listing
  // what there is.
  ctx = dc_test_context_new(&p);
  DC_CK_OK(dc_context_default_device(ctx, &d));
  ck_assert_str_eq(dc_device_name(d), gpus > 0 ? "cuda:0" : "cpu");
  if (gpus > 0) {
    DC_CK_OK(dc_context_find_device(ctx, "cuda", &d));
    ck_assert_str_eq(dc_device_name(d), "cuda:0");
  } else {
    DC_CK_FAIL(dc_context_find_device(ctx, "cuda", &d), DC_ERR_NOT_FOUND,
               "'cuda'");
    DC_CK_ERROR_HAS("cpu");
  }
  dc_context_release(ctx);
}
END_TEST

//===-- core: the fake backend ------------------------------------------===//

START_TEST(test_device_backend_devices_follow_the_cpu) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 2);
  dc_device_t* d = NULL;
  DC_CK_OK(dc_context_device(ctx, 0, &d));
  ck_assert_str_eq(dc_device_name(d), "cpu");
  DC_CK_OK(dc_context_device(ctx, 1, &d));
  ck_assert_str_eq(dc_device_name(d), "fake:0");
  ck_assert_int_eq(dc_device_info(d)->kind, DC_DEVICE_KIND_GPU);
  ck_assert_str_eq(dc_device_info(d)->model, "Fake GPU for tests");
  ck_assert_ptr_eq(dc_device_context(d), ctx);
  DC_CK_OK(dc_context_device(ctx, 2, &d));
  ck_assert_str_eq(dc_device_name(d), "fake:1");
  dc_context_release(ctx);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.destroys), 2);
}
END_TEST

START_TEST(test_device_find_prefers_exact_name_then_backend) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 2);
  dc_device_t *f0 = NULL, *f1 = NULL, *found = NULL;
  DC_CK_OK(dc_context_device(ctx, 1, &f0));
  DC_CK_OK(dc_context_device(ctx, 2, &f1));
  DC_CK_OK(dc_context_find_device(ctx, "fake:1", &found));
  ck_assert_ptr_eq(found, f1);
  DC_CK_OK(dc_context_find_device(ctx, "fake", &found));  // first of backend
  ck_assert_ptr_eq(found, f0);
  DC_CK_OK(dc_context_find_device(ctx, "cpu", &found));
  ck_assert_ptr_eq(found, dc_test_cpu(ctx));
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_default_is_the_first_gpu) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 2);
  dc_device_t* found = NULL;
  DC_CK_OK(dc_context_default_device(ctx, &found));
  ck_assert_str_eq(dc_device_name(found), "fake:0");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_backend_selection) {
  atomic_store(&dc_test_fake.devices_to_add, 1);
  dc_context_params_t from_env = env_backends_params();
  setenv("DC_DEVICES", "cpu", 1);
  dc_context_t* ctx = dc_test_context_new(&from_env);
  ck_assert_uint_eq(dc_context_device_count(ctx), 1);  // fake left out
  dc_context_release(ctx);
  setenv("DC_DEVICES", "cpu,fake", 1);
  ctx = dc_test_context_new(&from_env);
  ck_assert_uint_eq(dc_context_device_count(ctx), 2);
  dc_context_release(ctx);
  unsetenv("DC_DEVICES");
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "fake";  // the CPU is always there
  ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(dc_context_device_count(ctx), 2);
  ck_assert_str_eq(dc_device_name(dc_test_cpu(ctx)), "cpu");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_added_device_gets_a_pool) {
  atomic_store(&dc_test_fake.memory_size, (size_t)16 << 20);
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "fake", &fake));
  dc_memory_pool_stats_t s = dc_test_pool_stats(fake);
  ck_assert_uint_eq(s.budget, (size_t)16 << 20);     // its memory
  ck_assert_uint_eq(s.cache_limit, (size_t)4 << 20);  // a quarter
  dc_buffer_t* b = dc_test_buffer_new(fake, DC_DTYPE_F32, 256, "on fake");
  ck_assert_ptr_eq(dc_buffer_device(b), fake);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.allocations), 1);
  float in[256], out[256];
  for (int i = 0; i < 256; ++i) in[i] = (float)i * 0.5f;
  DC_CK_OK(dc_buffer_write(b, 0, in, 256));
  DC_CK_OK(dc_buffer_read(b, 0, out, 256));
  ck_assert_mem_eq(in, out, sizeof(in));
  dc_buffer_release(b);
  dc_context_release(ctx);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.deallocations),
                    atomic_load(&dc_test_fake.allocations));
}
END_TEST

START_TEST(test_device_add_after_creation) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_test_fake_device_t* fake = dc_test_fake_device_new(ctx, "late:0");
  ck_assert_ptr_nonnull(fake);
  DC_CK_OK(dc_context_add_device(ctx, &fake->base));
  ck_assert_uint_eq(dc_context_device_count(ctx), 2);
  dc_device_t* found = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "late:0", &found));
  ck_assert_ptr_eq(found, &fake->base);
  dc_context_release(ctx);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.destroys), 1);  // owned
}
END_TEST

//===-- errors ----------------------------------------------------------===//

START_TEST(test_device_index_out_of_range) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  size_t n = dc_context_device_count(ctx);
  dc_device_t* d = (dc_device_t*)ctx;
  DC_CK_FAIL(dc_context_device(ctx, n, &d), DC_ERR_OUT_OF_RANGE,
             "dc_context_device");
  DC_CK_ERROR_HAS("device(s)");
  ck_assert_ptr_null(d);
  d = (dc_device_t*)ctx;
  DC_CK_FAIL(dc_context_device(ctx, SIZE_MAX, &d), DC_ERR_OUT_OF_RANGE,
             "out of range");
  ck_assert_ptr_null(d);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_find_unknown_lists_devices) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 1);
  static const char* const kBad[] = {"gpu", "CPU", "cp", "", "fake:7",
                                     "cpu "};
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); ++i) {
    dc_device_t* d = (dc_device_t*)ctx;
    DC_CK_FAIL(dc_context_find_device(ctx, kBad[i], &d), DC_ERR_NOT_FOUND,
               "dc_context_find_device");
    DC_CK_ERROR_HAS("cpu, fake:0");  // what there is
    char quoted[32];
    snprintf(quoted, sizeof(quoted), "'%s'", kBad[i]);
    DC_CK_ERROR_HAS(quoted);
    ck_assert_ptr_null(d);
  }
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_null_arguments) {
  ck_assert_ptr_null(dc_device_info(NULL));
  ck_assert_str_eq(dc_device_name(NULL), "");
  ck_assert_ptr_null(dc_device_context(NULL));
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t* d = NULL;
  DC_CK_FAIL(dc_context_find_device(ctx, NULL, &d), DC_ERR_INVALID_ARGUMENT,
             "dc_context_find_device");
  DC_CK_ERROR_HAS("name");
  DC_CK_FAIL(dc_context_find_device(NULL, "cpu", &d), DC_ERR_INVALID_ARGUMENT,
             "dc_context_find_device");
  DC_CK_FAIL(dc_context_find_device(ctx, "cpu", NULL),
             DC_ERR_INVALID_ARGUMENT, "dc_context_find_device");
  DC_CK_FAIL(dc_context_default_device(NULL, &d), DC_ERR_INVALID_ARGUMENT,
             "dc_context_default_device");
  ck_assert_ptr_null(d);
  DC_CK_FAIL(dc_context_default_device(ctx, NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_context_default_device");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_backend_register_errors) {
  DC_CK_FAIL(dc_backend_register(NULL), DC_ERR_INVALID_ARGUMENT,
             "dc_backend_register");
  dc_backend_t b = {NULL, dc_test_fake_enumerate, NULL};
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_INVALID_ARGUMENT,
             "dc_backend_register");
  b.name = "";
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_INVALID_ARGUMENT,
             "dc_backend_register");
  b.name = "nofn";
  b.enumerate = NULL;
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_INVALID_ARGUMENT,
             "dc_backend_register");
  b.enumerate = dc_test_fake_enumerate;
  b.name = "cpu";
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_ALREADY_EXISTS, "'cpu'");
  b.name = "all";
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_ALREADY_EXISTS, "'all'");
  b.name = "fake";
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_ALREADY_EXISTS,
             "already registered");
}
END_TEST

static dc_status_t enumerate_nothing(dc_context_t* ctx, void* user_data) {
  (void)ctx;
  (void)user_data;
  return DC_OK;
}

// Fork mode only: fills the process-wide registry.
START_TEST(test_device_backend_registry_is_bounded) {
  static char names[32][8];
  dc_status_t st = DC_OK;
  int added = 0;
  for (int i = 0; i < 32 && st == DC_OK; ++i) {
    snprintf(names[i], sizeof(names[i]), "b%d", i);
    dc_backend_t b = {names[i], enumerate_nothing, NULL};
    st = dc_backend_register(&b);
    if (st == DC_OK) ++added;
  }
  ck_assert_int_eq(st, DC_ERR_RESOURCE_EXHAUSTED);
  DC_CK_ERROR_HAS("dc_backend_register");
  ck_assert_int_eq(added, 15);  // 16 with "fake"
  // Contexts still work, and enumerate every registered backend.
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "all";
  dc_context_t* ctx = dc_test_context_new(&p);
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_enumerate_failure_fails_create) {
  dc_test_allocator_t counting = {0};
  dc_context_params_t p = dc_test_quiet_params();
  p.allocator = dc_test_allocator(&counting);
  atomic_store(&dc_test_fake.devices_to_add, 2);
  atomic_store(&dc_test_fake.enumerate_status, DC_ERR_UNAVAILABLE);
  dc_context_t* ctx = (dc_context_t*)&p;
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_UNAVAILABLE,
             "enumerate failed on purpose");
  ck_assert_ptr_null(ctx);
  // The devices it had added were destroyed with the half-made context.
  ck_assert_uint_eq(atomic_load(&dc_test_fake.destroys), 2);
  DC_CK_ALLOCATOR_BALANCED(&counting);
}
END_TEST

static void noop_destroy(dc_device_t* device) { (void)device; }

// Never called: it only makes a kernel table non-empty.
static dc_status_t fake_dispatch(dc_device_t* device, dc_kernel_t* kernel,
                                 const dc_launch_t* launch, void* const* args,
                                 const size_t* lengths) {
  (void)device, (void)kernel, (void)launch, (void)args, (void)lengths;
  return DC_ERR_INTERNAL;
}

START_TEST(test_device_initialize_errors) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_device_t device;
  dc_device_info_t info = dc_test_fake_info("x");
  const char* fn = "dc_device_initialize";
  DC_CK_FAIL(dc_device_initialize(NULL, &dc_test_fake_vtable, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_device_initialize(&device, NULL, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_device_initialize(&device, &dc_test_fake_vtable, NULL, &info),
             DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_device_initialize(&device, &dc_test_fake_vtable, ctx, NULL),
             DC_ERR_INVALID_ARGUMENT, fn);
  // destroy and the memory table are required, and each function of the
  // memory table.
  dc_device_vtable_t bare = dc_test_fake_vtable;
  bare.destroy = NULL;
  DC_CK_FAIL(dc_device_initialize(&device, &bare, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, "has no destroy function");
  bare = dc_test_fake_vtable;
  bare.memory = NULL;
  DC_CK_FAIL(dc_device_initialize(&device, &bare, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, "has no memory table");
  for (size_t slot = 0; slot < 7; ++slot) {
    dc_device_memory_ops_t memory = dc_test_fake_memory;
    switch (slot) {
      case 0: memory.allocate = NULL; break;
      case 1: memory.deallocate = NULL; break;
      case 2: memory.host_pointer = NULL; break;
      case 3: memory.write = NULL; break;
      case 4: memory.read = NULL; break;
      case 5: memory.fill = NULL; break;
      default: memory.copy = NULL; break;
    }
    dc_device_vtable_t partial = dc_test_fake_vtable;
    partial.memory = &memory;
    DC_CK_FAIL(dc_device_initialize(&device, &partial, ctx, &info),
               DC_ERR_INVALID_ARGUMENT, "memory table that lacks a function");
  }
  // An optional table is whole, and comes with what it needs.
  dc_device_kernel_ops_t half_kernels = {.dispatch = fake_dispatch};
  dc_device_vtable_t partial = dc_test_fake_vtable;
  partial.kernels = &half_kernels;
  DC_CK_FAIL(dc_device_initialize(&device, &partial, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, "kernel table that lacks a function");
  dc_device_event_ops_t no_events = {0};
  partial = dc_test_fake_vtable;
  partial.events = &no_events;
  DC_CK_FAIL(dc_device_initialize(&device, &partial, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, "event table that lacks a function");
  dc_device_peer_ops_t no_copy = {0};
  partial = dc_test_fake_vtable;
  partial.peer = &no_copy;
  DC_CK_FAIL(dc_device_initialize(&device, &partial, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, "peer table without copy");
  info.name[0] = '\0';
  DC_CK_FAIL(dc_device_initialize(&device, &dc_test_fake_vtable, ctx, &info),
             DC_ERR_INVALID_ARGUMENT, "no name");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_device_add_errors) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  dc_context_t* other = dc_test_context_new(NULL);
  const char* fn = "dc_context_add_device";
  dc_device_vtable_t vt = dc_test_fake_vtable;
  vt.destroy = noop_destroy;  // these devices live on the stack
  dc_device_info_t info = dc_test_fake_info("stack:0");
  dc_device_t device;
  DC_CK_OK(dc_device_initialize(&device, &vt, ctx, &info));
  DC_CK_FAIL(dc_context_add_device(NULL, &device), DC_ERR_INVALID_ARGUMENT,
             fn);
  DC_CK_FAIL(dc_context_add_device(ctx, NULL), DC_ERR_INVALID_ARGUMENT, fn);
  DC_CK_FAIL(dc_context_add_device(other, &device), DC_ERR_INVALID_ARGUMENT,
             "not initialised for this context");
  dc_device_t blank;
  memset(&blank, 0, sizeof(blank));
  blank.context = ctx;
  DC_CK_FAIL(dc_context_add_device(ctx, &blank), DC_ERR_INVALID_ARGUMENT, fn);
  dc_device_info_t taken = dc_test_fake_info("cpu");
  dc_device_t clash;
  DC_CK_OK(dc_device_initialize(&clash, &vt, ctx, &taken));
  DC_CK_FAIL(dc_context_add_device(ctx, &clash), DC_ERR_ALREADY_EXISTS,
             "'cpu'");
  ck_assert_uint_eq(dc_context_device_count(ctx), 1);  // nothing added
  dc_context_release(other);
  dc_context_release(ctx);
}
END_TEST

//===-- lifecycle -------------------------------------------------------===//

START_TEST(test_device_outlives_host_release_with_buffers) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 1);
  dc_device_t* fake = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "fake:0", &fake));
  dc_buffer_t* b = dc_test_buffer_new(fake, DC_DTYPE_I32, 10, "kept");
  dc_context_release(ctx);
  // The buffer keeps the context, and so its devices, alive.
  ck_assert_uint_eq(atomic_load(&dc_test_fake.destroys), 0);
  ck_assert_str_eq(dc_device_name(dc_buffer_device(b)), "fake:0");
  int32_t v = 7;
  DC_CK_OK(dc_buffer_fill(b, 0, 10, &v));
  dc_buffer_release(b);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.destroys), 1);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.deallocations),
                    atomic_load(&dc_test_fake.allocations));
}
END_TEST

START_TEST(test_device_pointers_stable_for_the_context_lifetime) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 1);
  dc_device_t *a = NULL, *b = NULL;
  DC_CK_OK(dc_context_device(ctx, 1, &a));
  const dc_device_info_t* info = dc_device_info(a);
  for (int i = 0; i < 10; ++i) {
    dc_buffer_t* buf = dc_test_buffer_new(a, DC_DTYPE_U8, 100, "tmp");
    dc_buffer_release(buf);
  }
  DC_CK_OK(dc_context_find_device(ctx, "fake:0", &b));
  ck_assert_ptr_eq(a, b);
  ck_assert_ptr_eq(dc_device_info(b), info);
  dc_context_release(ctx);
}
END_TEST

//===-- limits ----------------------------------------------------------===//

START_TEST(test_device_context_holds_at_most_sixteen) {
  dc_context_t* ctx = dc_test_context_with_fakes(NULL, 15);
  ck_assert_uint_eq(dc_context_device_count(ctx), 16);
  dc_test_fake_device_t* extra = dc_test_fake_device_new(ctx, "extra");
  ck_assert_ptr_nonnull(extra);
  DC_CK_FAIL(dc_context_add_device(ctx, &extra->base),
             DC_ERR_RESOURCE_EXHAUSTED, "dc_context_add_device");
  dc_test_fake_destroy(&extra->base);  // still ours after a failure
  ck_assert_uint_eq(dc_context_device_count(ctx), 16);
  dc_context_release(ctx);
  ck_assert_uint_eq(atomic_load(&dc_test_fake.destroys), 16);

  // Enumerating one device too many fails the whole context cleanly.
  atomic_store(&dc_test_fake.devices_to_add, 16);
  dc_context_params_t p = dc_test_quiet_params();
  DC_CK_FAIL(dc_context_create(&p, &ctx), DC_ERR_RESOURCE_EXHAUSTED,
             "dc_context_add_device");
  ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(test_device_longest_name) {
  dc_context_t* ctx = dc_test_context_new(NULL);
  char name[32];
  memset(name, 'n', 31);
  name[31] = '\0';
  dc_test_fake_device_t* fake = dc_test_fake_device_new(ctx, name);
  ck_assert_ptr_nonnull(fake);
  DC_CK_OK(dc_context_add_device(ctx, &fake->base));
  dc_device_t* found = NULL;
  DC_CK_OK(dc_context_find_device(ctx, name, &found));
  ck_assert_str_eq(dc_device_name(found), name);
  dc_context_release(ctx);
}
END_TEST

static Suite* device_suite(void) {
  dc_test_fake_register();
  Suite* s = suite_create("device");
  TCase* core = tcase_create("core");
  tcase_add_checked_fixture(core, fixture, fixture);
  tcase_add_test(core, test_device_cpu_is_device_zero);
  tcase_add_test(core, test_device_extra_cpu_devices);
  tcase_add_test(core, test_device_cpu_info_is_read_from_the_machine);
  tcase_add_test(core, test_device_find_by_name_and_backend);
  tcase_add_test(core, test_device_backend_devices_follow_the_cpu);
  tcase_add_test(core, test_device_find_prefers_exact_name_then_backend);
  tcase_add_test(core, test_device_default_is_the_first_gpu);
  tcase_add_test(core, test_device_backend_selection);
  tcase_add_test(core, test_device_added_device_gets_a_pool);
  tcase_add_test(core, test_device_add_after_creation);
  suite_add_tcase(s, core);

  // Contexts with every backend: on a GPU machine each one starts the
  // driver, which takes longer than Check's default 4 s allows.
  TCase* every = tcase_create("every_backend");
  tcase_add_checked_fixture(every, fixture, fixture);
  tcase_set_timeout(every, 120);
  tcase_add_test(every, test_device_every_backend_in_discovery_order);
  suite_add_tcase(s, every);

  TCase* errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, fixture, fixture);
  // The full registry's context has every backend: a GPU's driver start.
  tcase_set_timeout(errors, 60);
  tcase_add_test(errors, test_device_index_out_of_range);
  tcase_add_test(errors, test_device_find_unknown_lists_devices);
  tcase_add_test(errors, test_device_null_arguments);
  tcase_add_test(errors, test_device_backend_register_errors);
  if (dc_test_forking()) {
    tcase_add_test(errors, test_device_backend_registry_is_bounded);
  }
  tcase_add_test(errors, test_device_enumerate_failure_fails_create);
  tcase_add_test(errors, test_device_initialize_errors);
  tcase_add_test(errors, test_device_add_errors);
  suite_add_tcase(s, errors);

  TCase* lifecycle = tcase_create("lifecycle");
  tcase_add_checked_fixture(lifecycle, fixture, fixture);
  tcase_add_test(lifecycle, test_device_outlives_host_release_with_buffers);
  tcase_add_test(lifecycle,
                 test_device_pointers_stable_for_the_context_lifetime);
  suite_add_tcase(s, lifecycle);

  TCase* limits = tcase_create("limits");
  tcase_add_checked_fixture(limits, fixture, fixture);
  tcase_add_test(limits, test_device_context_holds_at_most_sixteen);
  tcase_add_test(limits, test_device_longest_name);
  suite_add_tcase(s, limits);
  return s;
}

DC_CHECK_MAIN(device_suite)

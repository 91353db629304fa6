// check_opencl_device.c: the OpenCL backend's own behaviour: discovery
// with and without a driver, the capabilities it reads, encoded memory
// handles (offsets, views, offsets past 4 GiB, foreign handles) and the
// driver's build log in the message of a build it rejects.
//
// The tests that need a device run when the machine has one (pocl in
// CI); without one only the discovery tests run. Every context names the
// opencl backend, which "all" leaves out.
// SPDX-License-Identifier: MIT
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "opencl_compile.h"
#include "opencl_internal.h"

static int g_devices;  // OpenCL devices the probe found

static void fixture(void) { dc_test_clear_env(); }

static dc_context_t* opencl_context(void) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "cpu,opencl";
  return dc_test_context_new(&p);
}

static size_t opencl_device_count(dc_context_t* ctx) {
  size_t n = 0;
  for (size_t i = 0; i < dc_context_device_count(ctx); ++i) {
    dc_device_t* d = NULL;
    DC_CK_OK(dc_context_device(ctx, i, &d));
    if (strcmp(dc_device_info(d)->backend, "opencl") == 0) ++n;
  }
  return n;
}

// The OpenCL devices of a "cpu,opencl" context that |ctx| has through
// another backend (the same PCI address).
static size_t driven_by_others(dc_context_t* ctx) {
  dc_context_t* alone = opencl_context();
  size_t twins = 0;
  for (size_t i = 0; i < dc_context_device_count(alone); ++i) {
    dc_device_t* d = NULL;
    DC_CK_OK(dc_context_device(alone, i, &d));
    const dc_device_info_t* info = dc_device_info(d);
    if (strcmp(info->backend, "opencl") != 0 || info->pci_bus_id[0] == 0) {
      continue;
    }
    for (size_t j = 0; j < dc_context_device_count(ctx); ++j) {
      dc_device_t* o = NULL;
      DC_CK_OK(dc_context_device(ctx, j, &o));
      if (strcmp(dc_device_info(o)->backend, "opencl") != 0 &&
          strcmp(dc_device_info(o)->pci_bus_id, info->pci_bus_id) == 0) {
        ++twins;
      }
    }
  }
  dc_context_release(alone);
  return twins;
}

static dc_device_t* opencl_device(dc_context_t* ctx) {
  dc_device_t* d = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "opencl:0", &d));
  return d;
}

//===-- Discovery -------------------------------------------------------===//

START_TEST(test_opencl_is_enabled_by_name_only) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "cpu";
  dc_context_t* ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(opencl_device_count(ctx), 0);
  dc_context_release(ctx);
  p.backends = "all";
  ctx = dc_test_context_new(&p);
  ck_assert_uint_eq(opencl_device_count(ctx), 0);  // not part of "all"
  dc_context_release(ctx);
  p.backends = "all,opencl";
  ctx = dc_test_context_new(&p);
  // Every OpenCL device, but for a GPU that CUDA drives already.
  ck_assert_uint_eq(opencl_device_count(ctx),
                    (size_t)g_devices - driven_by_others(ctx));
  dc_device_t* first = NULL;
  DC_CK_OK(dc_context_device(ctx, 0, &first));
  ck_assert_str_eq(dc_device_info(first)->backend, "cpu");  // still device 0
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_one_piece_of_hardware_is_one_device) {
  dc_context_params_t p = dc_test_quiet_params();
  p.backends = "all,opencl";
  dc_context_t* ctx = dc_test_context_new(&p);
  size_t count = dc_context_device_count(ctx);
  for (size_t i = 0; i < count; ++i) {
    dc_device_t* a = NULL;
    DC_CK_OK(dc_context_device(ctx, i, &a));
    const char* pci = dc_device_info(a)->pci_bus_id;
    if (pci[0] == '\0') continue;
    ck_assert_uint_eq(strlen(pci), 12);  // dddd:bb:dd.f
    for (size_t j = i + 1; j < count; ++j) {
      dc_device_t* b = NULL;
      DC_CK_OK(dc_context_device(ctx, j, &b));
      ck_assert_msg(strcmp(pci, dc_device_info(b)->pci_bus_id) != 0,
                    "%s and %s are both PCI %s", dc_device_info(a)->name,
                    dc_device_info(b)->name, pci);
    }
  }
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_opencl_is_a_reserved_backend_name) {
  dc_backend_t b = {.name = "opencl",
                    .enumerate = (dc_status_t(*)(dc_context_t*, void*))1};
  DC_CK_FAIL(dc_backend_register(&b), DC_ERR_ALREADY_EXISTS,
             "'opencl' is a reserved name");
}
END_TEST

// A machine without the ICD loader: a child process points the loader
// at a file that does not exist, before anything loads it.
START_TEST(test_without_a_driver_there_are_no_devices) {
  fflush(stdout);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    setenv("DC_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
    dc_context_params_t p = dc_test_quiet_params();
    p.backends = "cpu,opencl";
    dc_context_t* ctx = NULL;
    if (dc_context_create(&p, &ctx) != DC_OK) _exit(2);
    size_t devices = dc_context_device_count(ctx);
    dc_device_t* d = NULL;
    bool found = dc_context_find_device(ctx, "opencl:0", &d) == DC_OK;
    dc_context_release(ctx);
    _exit(devices == 1 && !found ? 0 : 3);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

//===-- Capabilities ----------------------------------------------------===//

START_TEST(test_capabilities_come_from_the_driver) {
  dc_context_t* ctx = opencl_context();
  dc_device_t* d = opencl_device(ctx);
  const dc_device_info_t* info = dc_device_info(d);
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)d;
  ck_assert_str_eq(info->name, "opencl:0");
  ck_assert_str_eq(info->backend, "opencl");
  ck_assert_int_eq(info->kind, DC_DEVICE_KIND_GPU);
  char model[128] = "";
  ocl->cl->get_device_info(ocl->device, CL_DEVICE_NAME, sizeof(model) - 1,
                           model, NULL);
  ck_assert_str_eq(info->model, model);
  cl_uint units = 0;
  size_t group = 0;
  cl_ulong local = 0, global = 0;
  ocl->cl->get_device_info(ocl->device, CL_DEVICE_MAX_COMPUTE_UNITS,
                           sizeof(units), &units, NULL);
  ocl->cl->get_device_info(ocl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE,
                           sizeof(group), &group, NULL);
  ocl->cl->get_device_info(ocl->device, CL_DEVICE_LOCAL_MEM_SIZE,
                           sizeof(local), &local, NULL);
  ocl->cl->get_device_info(ocl->device, CL_DEVICE_GLOBAL_MEM_SIZE,
                           sizeof(global), &global, NULL);
  ck_assert_uint_eq(info->compute_units, units);
  ck_assert_uint_eq(info->max_work_group_size, group);
  ck_assert_uint_eq(info->local_memory_size, local);
  ck_assert_uint_eq(info->memory_size, global);
  ck_assert_uint_eq(info->max_cooperative_groups, 0);
  ck_assert(!info->unified_memory);
  dc_context_release(ctx);
}
END_TEST

//===-- Copies with the CPU ---------------------------------------------===//

// A copy between a CPU-device buffer and the OpenCL device goes straight
// from or into the CPU buffer's memory (no staging in between): any size,
// offsets and views, there and back, and a stream copy the same way.
START_TEST(test_copies_with_cpu_buffers_go_there_and_back) {
  dc_context_t* ctx = opencl_context();
  dc_device_t* cl = opencl_device(ctx);
  dc_device_t* cpu = NULL;
  DC_CK_OK(dc_context_find_device(ctx, "cpu", &cpu));
  const size_t n = ((size_t)5 << 20) + 3;
  dc_buffer_params_t p = {.dtype = DC_DTYPE_U8, .length = n + 64};
  dc_buffer_t *h = NULL, *d = NULL, *back = NULL;
  DC_CK_OK(dc_buffer_create(cpu, &p, &h));
  DC_CK_OK(dc_buffer_create(cl, &p, &d));
  DC_CK_OK(dc_buffer_create(cpu, &p, &back));
  uint8_t *in = NULL, *out = NULL;
  DC_CK_OK(dc_buffer_host_pointer(h, (void**)&in));
  DC_CK_OK(dc_buffer_host_pointer(back, (void**)&out));
  for (size_t i = 0; i < n + 64; ++i) in[i] = (uint8_t)(i * 7 + (i >> 10));
  memset(out, 0xEE, n + 64);
  dc_buffer_t* view = NULL;
  DC_CK_OK(dc_buffer_create_view(h, 11, n, &view));
  DC_CK_OK(dc_buffer_copy(d, 5, view, 0, n));
  dc_stream_t* s = NULL;
  DC_CK_OK(dc_stream_create(cl, NULL, &s));
  DC_CK_OK(dc_stream_copy(s, back, 2, d, 5, n));
  DC_CK_OK(dc_stream_sync(s, DC_TIMEOUT_INFINITE));
  for (size_t i = 0; i < n; ++i) {
    if (out[2 + i] != in[11 + i]) {
      ck_abort_msg("byte %zu is %u, expected %u", i, out[2 + i], in[11 + i]);
    }
  }
  ck_assert_uint_eq(out[1], 0xEE);
  ck_assert_uint_eq(out[2 + n], 0xEE);
  dc_stream_release(s);
  dc_buffer_release(view);
  dc_buffer_release(h);
  dc_buffer_release(d);
  dc_buffer_release(back);
  dc_context_release(ctx);
}
END_TEST

//===-- Encoded handles -------------------------------------------------===//

static const char kAddOne[] =
    "__kernel void add_one(__global int* data) {\n"
    "  data[get_global_id(0)] += 1;\n"
    "}\n";

// A kernel on a view sees the view's elements: the offset travels as a
// kernel argument next to the cl_mem.
START_TEST(test_views_offset_handles_in_transfers_and_kernels) {
  dc_context_t* ctx = opencl_context();
  dc_device_t* d = opencl_device(ctx);
  dc_buffer_t* buffer = NULL;
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = 1000};
  DC_CK_OK(dc_buffer_create(d, &bp, &buffer));
  int32_t host[1000];
  for (int i = 0; i < 1000; ++i) host[i] = i;
  DC_CK_OK(dc_buffer_write(buffer, 0, host, 1000));
  dc_buffer_t* view = NULL;
  DC_CK_OK(dc_buffer_create_view(buffer, 300, 100, &view));
  int32_t got[100];
  DC_CK_OK(dc_buffer_read(view, 10, got, 5));
  for (int i = 0; i < 5; ++i) ck_assert_int_eq(got[i], 310 + i);
  dc_program_t* program = NULL;
  dc_program_params_t pp = {.source = kAddOne, .name = "add_one.cl"};
  DC_CK_OK(dc_program_create(d, &pp, &program));
  dc_kernel_t* kernel = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "add_one", &kernel));
  dc_arg_t arg = dc_arg_buffer(view);
  dc_dispatch_t dispatch = {.dims = 1, .global = {100}};
  DC_CK_OK(dc_kernel_dispatch(kernel, &dispatch, &arg, 1));
  int32_t all[1000];
  DC_CK_OK(dc_buffer_read(buffer, 0, all, 1000));
  for (int i = 0; i < 1000; ++i) {
    ck_assert_int_eq(all[i], i + (i >= 300 && i < 400 ? 1 : 0));
  }
  // Copies through views.
  DC_CK_OK(dc_buffer_copy(view, 0, buffer, 0, 50));
  DC_CK_OK(dc_buffer_read(buffer, 300, all, 50));
  for (int i = 0; i < 50; ++i) ck_assert_int_eq(all[i], i);
  dc_kernel_release(kernel);
  dc_program_release(program);
  dc_buffer_release(view);
  dc_buffer_release(buffer);
  dc_context_release(ctx);
}
END_TEST

// Offsets past 4 GiB survive the encoding: a handle plus such an offset
// decodes into the same cl_mem and the whole offset.
START_TEST(test_large_offsets_decode) {
  dc_context_t* ctx = opencl_context();
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)opencl_device(ctx);
  void* handle = NULL;
  DC_CK_OK(dc__opencl_allocate(&ocl->base, 256, DC_STORAGE_PRIVATE, &handle));
  ck_assert_ptr_nonnull(handle);
  cl_mem base = NULL, mem = NULL;
  size_t at = 1;
  DC_CK_OK(dc__opencl_decode(ocl, handle, 0, "test", &base, &at));
  ck_assert_uint_eq(at, 0);
  uint64_t big = (UINT64_C(1) << 40) + 12345;
  char* moved = (char*)handle + big;  // as the core adds a view's offset
  DC_CK_OK(dc__opencl_decode(ocl, moved, 7, "test", &mem, &at));
  ck_assert_ptr_eq(mem, base);
  ck_assert_uint_eq(at, big + 7);
  // Fills at an offset, of a pattern size clEnqueueFillBuffer does not
  // take (written by doubling copies), and overlapping copies.
  const uint8_t three[3] = {1, 2, 3};
  uint8_t zero[256] = {0}, got[256];
  DC_CK_OK(dc__opencl_write(&ocl->base, handle, 0, zero, 256));
  DC_CK_OK(dc__opencl_fill(&ocl->base, (char*)handle + 5, 0, 30, three, 3));
  DC_CK_OK(dc__opencl_read(&ocl->base, handle, 0, got, 256));
  for (int i = 0; i < 256; ++i) {
    ck_assert_uint_eq(got[i], i >= 5 && i < 35 ? three[(i - 5) % 3] : 0);
  }
  DC_CK_OK(dc__opencl_copy(&ocl->base, handle, 7, handle, 5, 30));
  DC_CK_OK(dc__opencl_read(&ocl->base, handle, 7, got, 30));
  for (int i = 0; i < 30; ++i) ck_assert_uint_eq(got[i], three[i % 3]);
  // A handle this device never gave is refused, naming the operation.
  DC_CK_FAIL(dc__opencl_decode(ocl, (void*)(uintptr_t)12345, 0, "read", &mem,
                               &at),
             DC_ERR_INVALID_ARGUMENT, "read");
  dc__opencl_deallocate(&ocl->base, handle, 256, DC_STORAGE_PRIVATE);
  DC_CK_FAIL(dc__opencl_decode(ocl, handle, 0, "write", &mem, &at),
             DC_ERR_INVALID_ARGUMENT, "not a memory handle");
  dc_context_release(ctx);
}
END_TEST

START_TEST(test_shared_storage_is_refused) {
  dc_context_t* ctx = opencl_context();
  dc_buffer_t* b = NULL;
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_F32, .length = 16,
                           .storage = DC_STORAGE_SHARED};
  DC_CK_FAIL(dc_buffer_create(opencl_device(ctx), &bp, &b),
             DC_ERR_UNSUPPORTED, "shared storage is not available");
  dc_context_release(ctx);
}
END_TEST

// OpenCL 1.2 has no cooperative launch: a kernel that synchronises its
// grid builds (its reflection says so), and its dispatch is refused with
// a message that says why, instead of hanging at the first dc_grid_sync.
START_TEST(test_grid_sync_dispatch_is_refused) {
  dc_context_t* ctx = opencl_context();
  dc_device_t* d = opencl_device(ctx);
  ck_assert_uint_eq(dc_device_info(d)->max_cooperative_groups, 0);
  static const char kSync[] =
      "__kernel void sync(__global int* data) {\n"
      "  data[get_global_id(0)] = 1;\n"
      "  dc_grid_sync();\n"
      "}\n";
  dc_program_t* program = NULL;
  dc_program_params_t pp = {.source = kSync, .name = "sync.cl"};
  DC_CK_OK(dc_program_create(d, &pp, &program));
  dc_kernel_t* kernel = NULL;
  DC_CK_OK(dc_program_find_kernel(program, "sync", &kernel));
  dc_kernel_info_t info;
  DC_CK_OK(dc_kernel_info(kernel, &info));
  ck_assert(info.uses_grid_sync);
  dc_buffer_t* b = NULL;
  dc_buffer_params_t bp = {.dtype = DC_DTYPE_I32, .length = 64};
  DC_CK_OK(dc_buffer_create(d, &bp, &b));
  dc_arg_t arg = dc_arg_buffer(b);
  dc_dispatch_t dispatch = {.dims = 1, .global = {64}, .local = {16}};
  dc_status_t st = dc_kernel_dispatch(kernel, &dispatch, &arg, 1);
  ck_assert_int_ne(st, DC_OK);
  ck_assert_msg(strstr(dc_last_error(), "dc_grid_sync") != NULL ||
                    strstr(dc_last_error(), "cooperative") != NULL,
                "message: %s", dc_last_error());
  dc_buffer_release(b);
  dc_kernel_release(kernel);
  dc_program_release(program);
  dc_context_release(ctx);
}
END_TEST

//===-- Build logs ------------------------------------------------------===//

// What the driver's compiler rejects fails the build as the engine's bug,
// with the start of the driver's own log in the message.
START_TEST(test_driver_build_log_reaches_the_message) {
  dc_context_t* ctx = opencl_context();
  dc__opencl_device_t* ocl = (dc__opencl_device_t*)opencl_device(ctx);
  static const char kBroken[] =
      "__kernel void k(__global int* p) { p[0] = undeclared_name; }\n";
  cl_program program = NULL;
  DC_CK_FAIL(dc__opencl_build_source(ocl, "broken.cl", kBroken,
                                     strlen(kBroken), "", &program),
             DC_ERR_INTERNAL, "rejected the code generated");
  ck_assert_ptr_null(program);
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "broken.cl"));
  ck_assert_ptr_nonnull(strstr(dc_last_error(), "undeclared_name"));
  dc_context_release(ctx);
}
END_TEST

// Builds ask the driver for correctly rounded float division and sqrt
// (OpenCL C allows 2.5 and 3 ulp) where the device offers them, unless
// they relax their math.
START_TEST(test_builds_ask_for_correctly_rounded_division_and_sqrt) {
  static const char kFlag[] = "-cl-fp32-correctly-rounded-divide-sqrt";
  char text[256];
  dc_build_flags_t flags = {0};
  dc__opencl_options_text(&flags, true, text, sizeof(text));
  ck_assert_ptr_nonnull(strstr(text, kFlag));
  dc__opencl_options_text(&flags, false, text, sizeof(text));
  ck_assert_ptr_null(strstr(text, kFlag));
  flags.fast_math = true;
  dc__opencl_options_text(&flags, true, text, sizeof(text));
  ck_assert_ptr_null(strstr(text, kFlag));
  ck_assert_ptr_nonnull(strstr(text, "-cl-fast-relaxed-math"));
}
END_TEST

static Suite* opencl_device_suite(void) {
  Suite* s = suite_create("opencl_device");
  TCase* discovery = tcase_create("discovery");
  tcase_add_checked_fixture(discovery, fixture, fixture);
  tcase_set_timeout(discovery, 120);
  tcase_add_test(discovery, test_opencl_is_enabled_by_name_only);
  tcase_add_test(discovery, test_one_piece_of_hardware_is_one_device);
  tcase_add_test(discovery, test_opencl_is_a_reserved_backend_name);
  tcase_add_test(discovery, test_without_a_driver_there_are_no_devices);
  tcase_add_test(discovery,
                 test_builds_ask_for_correctly_rounded_division_and_sqrt);
  suite_add_tcase(s, discovery);
  if (g_devices > 0) {
    TCase* device = tcase_create("device");
    tcase_add_checked_fixture(device, fixture, fixture);
    tcase_set_timeout(device, 120);
    tcase_add_test(device, test_capabilities_come_from_the_driver);
    tcase_add_test(device, test_copies_with_cpu_buffers_go_there_and_back);
    tcase_add_test(device, test_views_offset_handles_in_transfers_and_kernels);
    tcase_add_test(device, test_large_offsets_decode);
    tcase_add_test(device, test_shared_storage_is_refused);
    tcase_add_test(device, test_grid_sync_dispatch_is_refused);
    tcase_add_test(device, test_driver_build_log_reaches_the_message);
    suite_add_tcase(s, device);
  }
  return s;
}

// Counts the OpenCL devices in a child, so that this process never loads
// a driver that Check's forked children would then share.
static int probe_devices(void) {
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    dc_context_params_t p = dc_test_quiet_params();
    p.backends = "cpu,opencl";
    dc_context_t* ctx = NULL;
    if (dc_context_create(&p, &ctx) != DC_OK) _exit(255);
    size_t n = dc_context_device_count(ctx) - 1;
    dc_context_release(ctx);
    _exit((int)n);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) == 255) {
    return -1;
  }
  return WEXITSTATUS(status);
}

int main(void) {
  dc_test_clear_env();
  g_devices = probe_devices();
  if (g_devices < 0) {
    printf("cannot probe for OpenCL devices\n");
    return EXIT_FAILURE;
  }
  if (g_devices == 0) printf("no OpenCL device: device tests skipped\n");
  SRunner* runner = srunner_create(opencl_device_suite());
  srunner_run_all(runner, CK_NORMAL);
  int failed = srunner_ntests_failed(runner);
  srunner_free(runner);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

// host.c: the smallest host of an installed dc: create a context, use a
// buffer, check the result, check the header and library versions agree.
#include <stdio.h>

#include <dc/dc.h>

int main(void) {
  if (dc_version() != DC_VERSION) {
    fprintf(stderr, "header version %x != library version %x\n", DC_VERSION,
            dc_version());
    return 1;
  }
  dc_context_t* ctx = NULL;
  DC_CHECK(dc_context_create(NULL, &ctx));
  dc_device_t* cpu = NULL;
  DC_CHECK(dc_context_default_device(ctx, &cpu));
  dc_buffer_t* buf = NULL;
  dc_buffer_params_t params = {.dtype = DC_DTYPE_I32, .length = 16};
  DC_CHECK(dc_buffer_create(cpu, &params, &buf));
  int value = 42, got[16];
  DC_CHECK(dc_buffer_fill(buf, 0, 16, &value));
  DC_CHECK(dc_buffer_read(buf, 0, got, 16));
  printf("host: dc %s on %s: %s\n", dc_version_string(),
         dc_device_name(cpu), got[15] == 42 ? "works" : "WRONG RESULT");
  dc_buffer_release(buf);
  dc_context_release(ctx);
  return got[15] == 42 ? 0 : 1;
}

// l_image.c: grey images for pipelines (dc.image): PGM files in and out,
// and synthetic images so a pipeline can run without input files.
//
// An image reaches Lua as { width, height, maxval, pixels }, where
// |pixels| holds width * height samples in rows from the top, in one of
// three forms a script chooses: a Lua table of integers (the default), a
// binary string (fast to keep and hash; one byte a sample, two in native
// order past maxval 255), or a dc.buffer on a device (no Lua table at all:
// a 1920x1080 image would otherwise be two million table entries).
//
// Inside, an image is an array of 16-bit samples (PGM's widest) in a
// userdata, so that an error raised half-way frees it with the stack.
// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dclua_internal.h"
#include "l_sandbox.h"

// Big enough for any real picture, small enough that width * height and
// the bytes of every form stay far from overflowing.
#define MAX_SIDE (1 << 20)
#define MAX_PIXELS ((size_t)1 << 28)

typedef struct image_t {
  size_t width;
  size_t height;
  unsigned maxval;    // 1..65535
  uint16_t* samples;  // width * height, in a userdata on the stack
} image_t;

// How a script wants the pixels.
typedef enum form_e { FORM_TABLE, FORM_STRING, FORM_BUFFER } form_t;

typedef struct output_t {
  form_t form;
  dc_dtype_t dtype;     // FORM_BUFFER
  dc_device_t* device;  // FORM_BUFFER
} output_t;

static size_t pixel_count(const image_t* img) {
  return img->width * img->height;
}

// Pushes a userdata holding the samples of |img| (its size set).
static void image_alloc(lua_State* L, image_t* img) {
  size_t n = pixel_count(img);
  img->samples = lua_newuserdatauv(L, n * sizeof(uint16_t), 0);
}

// Raises a status naming the function and the file.
static int image_fail(lua_State* L, dc_status_t status, const char* fn,
                      const char* path, const char* what) {
  return dclua_raisef(L, status, "dc.image.%s: '%s': %s", fn, path, what);
}

// The status of a failed open, read or write, from its errno.
static dc_status_t status_of_errno(int error) {
  switch (error) {
    case ENOENT: case ENOTDIR: return DC_ERR_NOT_FOUND;
    case EACCES: case EPERM: case EROFS: return DC_ERR_PERMISSION_DENIED;
    case EISDIR: return DC_ERR_INVALID_ARGUMENT;
    default: return DC_ERR_UNAVAILABLE;
  }
}

//===-- Options ---------------------------------------------------------===//

// Reads the option 'as' (at the top of the stack): nil gives
// |fallback|.
static form_t check_form(lua_State* L, int index, form_t fallback) {
  static const char* const forms[] = {"table", "string", "buffer"};
  if (lua_isnil(L, -1)) return fallback;
  const char* name = lua_tostring(L, -1);
  for (int i = 0; lua_type(L, -1) == LUA_TSTRING && i < 3; ++i) {
    if (strcmp(name, forms[i]) == 0) return (form_t)i;
  }
  return (form_t)luaL_argerror(L, index, "option 'as' must be \"table\", "
                               "\"string\" or \"buffer\"");
}

// Reads the form options (as, dtype, device) of the table at |index| (or
// none). A dtype or device alone means a buffer.
static void check_output(lua_State* L, int index, output_t* out) {
  out->form = FORM_TABLE;
  out->dtype = DC_DTYPE_F32;
  out->device = NULL;
  if (lua_isnoneornil(L, index)) return;
  bool has_dtype = lua_getfield(L, index, "dtype") != LUA_TNIL;
  bool has_device = lua_getfield(L, index, "device") != LUA_TNIL;
  lua_getfield(L, index, "as");
  out->form = check_form(L, index, has_dtype || has_device ? FORM_BUFFER
                                                           : FORM_TABLE);
  if (out->form != FORM_BUFFER && (has_dtype || has_device)) {
    luaL_argerror(L, index, "options 'dtype' and 'device' need as = "
                  "\"buffer\"");
  }
  if (out->form == FORM_BUFFER) {
    const char* name = has_dtype ? lua_tostring(L, -3) : "f32";
    if (name == NULL || !dc_dtype_parse(name, &out->dtype)) {
      luaL_argerror(L, index, "option 'dtype' must be a dtype name (\"u8\", "
                    "\"f32\", ...)");
    }
    if (has_device && lua_type(L, -2) != LUA_TSTRING &&
        dclua_box_test(L, -2, DCLUA_DEVICE) == NULL) {
      luaL_argerror(L, index, "option 'device' must be a dc.device or a "
                    "device name");
    }
    out->device = dclua_check_device(L, lua_absindex(L, -2), true);
  }
  lua_pop(L, 3);
}

// Reads the integer option |key| of the table at |index| (absent:
// |fallback|), which must lie in [|min|, |max|].
static lua_Integer opt_field(lua_State* L, int index, const char* key,
                             lua_Integer fallback, lua_Integer min,
                             lua_Integer max) {
  lua_Integer value = fallback;
  if (lua_istable(L, index) && lua_getfield(L, index, key) != LUA_TNIL) {
    int is_integer = 0;
    value = lua_tointegerx(L, -1, &is_integer);
    if (!is_integer || value < min || value > max) {
      luaL_argerror(L, index, lua_pushfstring(L, "option '%s' must be an "
                                              "integer in [%I, %I]", key,
                                              min, max));
    }
    lua_pop(L, 1);
  }
  return value;
}

// Reads width and height at |index| and |index| + 1.
static void check_size(lua_State* L, int index, image_t* img) {
  lua_Integer w = luaL_checkinteger(L, index);
  lua_Integer h = luaL_checkinteger(L, index + 1);
  luaL_argcheck(L, w >= 1 && w <= MAX_SIDE, index, "width out of range");
  luaL_argcheck(L, h >= 1 && h <= MAX_SIDE, index + 1, "height out of range");
  img->width = (size_t)w;
  img->height = (size_t)h;
  if (pixel_count(img) > MAX_PIXELS) {
    luaL_argerror(L, index, "width * height is over 2^28 pixels");
  }
}

//===-- Pushing an image ------------------------------------------------===//

static void push_table(lua_State* L, const image_t* img) {
  size_t n = pixel_count(img);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; ++i) {
    lua_pushinteger(L, img->samples[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static void push_string(lua_State* L, const image_t* img) {
  size_t n = pixel_count(img);
  if (img->maxval > 255) {
    lua_pushlstring(L, (const char*)img->samples, n * sizeof(uint16_t));
    return;
  }
  luaL_Buffer b;
  char* bytes = luaL_buffinitsize(L, &b, n);
  for (size_t i = 0; i < n; ++i) bytes[i] = (char)img->samples[i];
  luaL_pushresultsize(&b, n);
}

// The largest value |dtype| holds, for the integer types narrower than
// the samples.
static unsigned dtype_max(dc_dtype_t dtype) {
  switch (dtype) {
    case DC_DTYPE_I8: return 127;
    case DC_DTYPE_U8: return 255;
    case DC_DTYPE_I16: return 32767;
    default: return 65535;
  }
}

// Stores |value| as element |i| of the |dtype| array at |dst|.
static void store_element(dc_dtype_t dtype, void* dst, size_t i,
                          unsigned value) {
  switch (dtype) {
    case DC_DTYPE_I8: ((int8_t*)dst)[i] = (int8_t)value; break;
    case DC_DTYPE_U8: ((uint8_t*)dst)[i] = (uint8_t)value; break;
    case DC_DTYPE_I16: ((int16_t*)dst)[i] = (int16_t)value; break;
    case DC_DTYPE_U16: ((uint16_t*)dst)[i] = (uint16_t)value; break;
    case DC_DTYPE_I32: ((int32_t*)dst)[i] = (int32_t)value; break;
    case DC_DTYPE_U32: ((uint32_t*)dst)[i] = value; break;
    case DC_DTYPE_I64: ((int64_t*)dst)[i] = value; break;
    case DC_DTYPE_U64: ((uint64_t*)dst)[i] = value; break;
    case DC_DTYPE_F32: ((float*)dst)[i] = (float)value; break;
    case DC_DTYPE_F64: ((double*)dst)[i] = value; break;
  }
}

// Pushes a dc.buffer of out->dtype holding the samples. The host copy is
// a userdata, freed by the GC like the new buffer if anything raises.
static void push_buffer(lua_State* L, const image_t* img,
                        const output_t* out, const char* label) {
  if (img->maxval > dtype_max(out->dtype)) {
    dclua_raisef(L, DC_ERR_INVALID_ARGUMENT, "dc.image: dtype %s cannot "
                 "hold samples up to maxval %u", dc_dtype_name(out->dtype),
                 img->maxval);
  }
  size_t n = pixel_count(img);
  void* host = lua_newuserdatauv(L, n * dc_dtype_size(out->dtype), 0);
  for (size_t i = 0; i < n; ++i) {
    store_element(out->dtype, host, i, img->samples[i]);
  }
  dc_buffer_params_t params = {.dtype = out->dtype, .length = n,
                               .label = label};
  dc_buffer_t* buffer = dclua_push_new_buffer(L, out->device, &params);
  DCLUA_CHECK(L, dc_buffer_write(buffer, 0, host, n));
  lua_remove(L, -2);  // the host copy
}

// Pushes { width, height, maxval, pixels } for |img| in the form |out|.
static void push_image(lua_State* L, const image_t* img, const output_t* out,
                       const char* label) {
  lua_createtable(L, 0, 4);
  dclua_set_integer(L, "width", img->width);
  dclua_set_integer(L, "height", img->height);
  dclua_set_integer(L, "maxval", img->maxval);
  switch (out->form) {
    case FORM_TABLE: push_table(L, img); break;
    case FORM_STRING: push_string(L, img); break;
    case FORM_BUFFER: push_buffer(L, img, out, label); break;
  }
  lua_setfield(L, -2, "pixels");
}

//===-- Reading PGM -----------------------------------------------------===//

// The text being parsed, and where its errors point.
typedef struct pgm_t {
  lua_State* L;
  const char* path;
  const unsigned char* p;
  const unsigned char* end;
} pgm_t;

static int pgm_fail(pgm_t* f, const char* what) {
  return image_fail(f->L, DC_ERR_INVALID_ARGUMENT, "load_pgm", f->path, what);
}

static bool is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

// Skips white space and, where |comments|, '#' comments to the end of
// their line (the header allows them between any two fields).
static void pgm_skip(pgm_t* f, bool comments) {
  while (f->p < f->end) {
    if (is_space(*f->p)) {
      ++f->p;
    } else if (comments && *f->p == '#') {
      while (f->p < f->end && *f->p != '\n') ++f->p;
    } else {
      return;
    }
  }
}

// Reads a header field, a decimal number in [|min|, |max|]; |what|
// names it in errors.
static unsigned long pgm_field(pgm_t* f, const char* what, unsigned long min,
                               unsigned long max) {
  pgm_skip(f, /*comments=*/true);
  if (f->p >= f->end || *f->p < '0' || *f->p > '9') {
    pgm_fail(f, lua_pushfstring(f->L, "%s is missing or not a number",
                                what));
  }
  unsigned long value = 0;  // saturates past |max|: no overflow
  while (f->p < f->end && *f->p >= '0' && *f->p <= '9') {
    unsigned long digit = (unsigned long)(*f->p++ - '0');
    if (value <= max) value = value * 10 + digit;
  }
  if (f->p < f->end && !is_space(*f->p) && *f->p != '#') {
    pgm_fail(f, lua_pushfstring(f->L, "%s is not a number", what));
  }
  if (value < min || value > max) {
    pgm_fail(f, lua_pushfstring(f->L, "%s is out of range [%d, %d]", what,
                                (int)min, (int)max));
  }
  return value;
}

// Reads the magic and the header; returns whether the raster is binary
// (P5). Leaves f->p at the raster's first byte.
static bool pgm_header(pgm_t* f, image_t* img) {
  if (f->end - f->p < 2 || f->p[0] != 'P' ||
      (f->p[1] != '5' && f->p[1] != '2')) {
    pgm_fail(f, "not a PGM file (it does not start with P5 or P2)");
  }
  bool binary = f->p[1] == '5';
  f->p += 2;
  if (f->p < f->end && !is_space(*f->p) && *f->p != '#') {
    pgm_fail(f, "bad header: no white space after the magic number");
  }
  img->width = pgm_field(f, "bad header: width", 1, MAX_SIDE);
  img->height = pgm_field(f, "bad header: height", 1, MAX_SIDE);
  img->maxval = (unsigned)pgm_field(f, "bad header: maxval", 1, 65535);
  if (pixel_count(img) > MAX_PIXELS) {
    pgm_fail(f, "bad header: width * height is over 2^28 pixels");
  }
  // P5: exactly one white space character ends the header.
  if (binary) {
    if (f->p >= f->end) pgm_fail(f, "truncated: no pixel data");
    if (!is_space(*f->p)) pgm_fail(f, "bad header: no white space after "
                                   "maxval");
    ++f->p;
  }
  return binary;
}

// Raises for sample |i| of value |value| above maxval.
static int pgm_above_maxval(pgm_t* f, const image_t* img, size_t i,
                            unsigned long value) {
  return pgm_fail(f, lua_pushfstring(f->L, "sample at row %d, column %d "
                                     "is %d, above maxval %d",
                                     (int)(i / img->width),
                                     (int)(i % img->width), (int)value,
                                     (int)img->maxval));
}

// Reads a binary raster: one byte a sample, or two (most significant
// first) past maxval 255.
static void pgm_binary(pgm_t* f, image_t* img) {
  size_t n = pixel_count(img);
  size_t width = img->maxval > 255 ? 2 : 1;
  size_t have = (size_t)(f->end - f->p);
  if (have < n * width) {
    pgm_fail(f, lua_pushfstring(f->L, "truncated: %I of %I bytes of pixel "
                                "data", (lua_Integer)have,
                                (lua_Integer)(n * width)));
  }
  for (size_t i = 0; i < n; ++i) {
    unsigned value = width == 2 ? (unsigned)(f->p[2 * i] << 8 | f->p[2 * i + 1])
                                : f->p[i];
    if (value > img->maxval) pgm_above_maxval(f, img, i, value);
    img->samples[i] = (uint16_t)value;
  }
  f->p += n * width;
}

// Reads sample |i| of a plain raster, a decimal number.
static unsigned pgm_sample(pgm_t* f, const image_t* img, size_t i) {
  pgm_skip(f, /*comments=*/false);
  if (f->p >= f->end) {
    pgm_fail(f, lua_pushfstring(f->L, "truncated: %I of %I samples",
                                (lua_Integer)i,
                                (lua_Integer)pixel_count(img)));
  }
  unsigned long value = 0;
  const unsigned char* first = f->p;
  while (f->p < f->end && *f->p >= '0' && *f->p <= '9') {
    unsigned long digit = (unsigned long)(*f->p++ - '0');
    if (value <= 65535) value = value * 10 + digit;
  }
  if (f->p == first || (f->p < f->end && !is_space(*f->p))) {
    pgm_fail(f, lua_pushfstring(f->L, "sample at row %d, column %d is not "
                                "a number", (int)(i / img->width),
                                (int)(i % img->width)));
  }
  if (value > img->maxval) pgm_above_maxval(f, img, i, value);
  return (unsigned)value;
}

// Reads a plain (P2) raster: decimal samples between white space.
static void pgm_plain(pgm_t* f, image_t* img) {
  for (size_t i = 0; i < pixel_count(img); ++i) {
    img->samples[i] = (uint16_t)pgm_sample(f, img, i);
  }
}

// Pushes the contents of the file |path| as a userdata and returns it
// and its length. The room is taken before the file is opened, so that
// no Lua error can leave the file open.
static const unsigned char* read_file(lua_State* L, const char* path,
                                      size_t* out_length) {
  struct stat st;
  if (stat(path, &st) != 0) {
    int error = errno;
    image_fail(L, status_of_errno(error), "load_pgm", path, strerror(error));
  }
  size_t size = st.st_size > 0 ? (size_t)st.st_size : 0;
  unsigned char* bytes = lua_newuserdatauv(L, size + 1, 0);
  FILE* file = fopen(path, "rb");
  int error = file == NULL ? errno : 0;
  if (file != NULL) {
    errno = 0;
    *out_length = fread(bytes, 1, size, file);
    if (ferror(file)) error = errno != 0 ? errno : EIO;
    fclose(file);
  }
  if (error != 0) {
    image_fail(L, status_of_errno(error), "load_pgm", path, strerror(error));
  }
  return bytes;
}

// [-0, +1, e]  dc.image.load_pgm(path [, { as = "table"|"string"|"buffer",
//   dtype = "f32", device = dev }]) -> { width, height, maxval, pixels }
static int l_load_pgm(lua_State* L) {
  static const char* const allowed[] = {"as", "dtype", "device", NULL};
  const char* path = luaL_checkstring(L, 1);
  if (!lua_isnoneornil(L, 2)) dclua_check_options(L, 2, allowed);
  output_t out;
  check_output(L, 2, &out);
  size_t length = 0;
  const unsigned char* text = read_file(L, path, &length);
  pgm_t f = {.L = L, .path = path, .p = text, .end = text + length};
  image_t img;
  bool binary = pgm_header(&f, &img);
  image_alloc(L, &img);
  if (binary) {
    pgm_binary(&f, &img);
  } else {
    pgm_plain(&f, &img);
  }
  push_image(L, &img, &out, path);
  return 1;
}

//===-- Writing PGM -----------------------------------------------------===//

// A value as a sample: rounded to the nearest, clamped to [0, maxval];
// NaN gives 0.
static uint16_t to_sample(double value, unsigned maxval) {
  if (!(value > 0.0)) return 0;
  if (value >= (double)maxval) return (uint16_t)maxval;
  return (uint16_t)(value + 0.5);
}

// Element |i| of the |dtype| array at |src|, as a double.
static double load_element(dc_dtype_t dtype, const void* src, size_t i) {
  switch (dtype) {
    case DC_DTYPE_I8: return ((const int8_t*)src)[i];
    case DC_DTYPE_U8: return ((const uint8_t*)src)[i];
    case DC_DTYPE_I16: return ((const int16_t*)src)[i];
    case DC_DTYPE_U16: return ((const uint16_t*)src)[i];
    case DC_DTYPE_I32: return ((const int32_t*)src)[i];
    case DC_DTYPE_U32: return ((const uint32_t*)src)[i];
    case DC_DTYPE_I64: return (double)((const int64_t*)src)[i];
    case DC_DTYPE_U64: return (double)((const uint64_t*)src)[i];
    case DC_DTYPE_F32: return ((const float*)src)[i];
    case DC_DTYPE_F64: return ((const double*)src)[i];
  }
  return 0.0;
}

// Raises unless the pixels at |index| hold exactly |n| values.
static void check_count(lua_State* L, int index, size_t have, size_t n) {
  if (have != n) {
    luaL_argerror(L, index, lua_pushfstring(L, "%I pixel values for a "
                                            "%I-pixel image",
                                            (lua_Integer)have,
                                            (lua_Integer)n));
  }
}

// Fills |img| from the table of numbers at |index|.
static void samples_from_table(lua_State* L, int index, image_t* img) {
  size_t n = pixel_count(img);
  check_count(L, index, (size_t)luaL_len(L, index), n);
  for (size_t i = 0; i < n; ++i) {
    if (lua_rawgeti(L, index, (lua_Integer)i + 1) != LUA_TNUMBER) {
      luaL_argerror(L, index, lua_pushfstring(L, "pixels[%I] is a %s, not "
                                              "a number", (lua_Integer)i + 1,
                                              luaL_typename(L, -1)));
    }
    img->samples[i] = to_sample((double)lua_tonumber(L, -1), img->maxval);
    lua_pop(L, 1);
  }
}

// Fills |img| from the binary string at |index|: one byte a sample, or
// two in native order past maxval 255 (the form load_pgm gives).
static void samples_from_string(lua_State* L, int index, image_t* img) {
  size_t n = pixel_count(img), length = 0;
  const char* bytes = lua_tolstring(L, index, &length);
  size_t width = img->maxval > 255 ? sizeof(uint16_t) : 1;
  if (length != n * width) {
    luaL_argerror(L, index, lua_pushfstring(L, "a string of %I bytes for "
                                            "a %I-pixel image (needs %I)",
                                            (lua_Integer)length,
                                            (lua_Integer)n,
                                            (lua_Integer)(n * width)));
  }
  for (size_t i = 0; i < n; ++i) {
    uint16_t value = (uint8_t)bytes[i];
    if (width == 2) memcpy(&value, bytes + 2 * i, sizeof(value));
    img->samples[i] = value > img->maxval ? (uint16_t)img->maxval : value;
  }
}

// Fills |img| from the dc.buffer at |index|, read to the host.
static void samples_from_buffer(lua_State* L, int index, image_t* img) {
  dc_buffer_t* buffer = dclua_check_buffer(L, index);
  size_t n = pixel_count(img);
  check_count(L, index, dc_buffer_length(buffer), n);
  dc_dtype_t dtype = dc_buffer_dtype(buffer);
  void* host = lua_newuserdatauv(L, n * dc_dtype_size(dtype), 0);
  DCLUA_CHECK(L, dc_buffer_read(buffer, 0, host, n));
  for (size_t i = 0; i < n; ++i) {
    img->samples[i] = to_sample(load_element(dtype, host, i), img->maxval);
  }
  lua_pop(L, 1);
}

// Writes |img| to |path| as a binary PGM. The whole file is built first,
// so nothing that can raise runs while the file is open; a failed write
// removes the partial file. In a sandbox the file is opened under its
// rules (l_sandbox.h): a link cannot lead the write out of the directory.
static void write_pgm(lua_State* L, const char* path, const image_t* img) {
  char header[64];
  int header_length = snprintf(header, sizeof(header), "P5\n%zu %zu\n%u\n",
                               img->width, img->height, img->maxval);
  size_t n = pixel_count(img), width = img->maxval > 255 ? 2 : 1;
  unsigned char* raster = lua_newuserdatauv(L, n * width, 0);
  for (size_t i = 0; i < n; ++i) {
    if (width == 2) {
      raster[2 * i] = (unsigned char)(img->samples[i] >> 8);  // MSB first
      raster[2 * i + 1] = (unsigned char)(img->samples[i] & 0xFF);
    } else {
      raster[i] = (unsigned char)img->samples[i];
    }
  }
  FILE* file = dclua_fopen_for_write(L, path, "wb");  // the sandbox's rules
  int error = file == NULL ? errno : 0;
  if (file != NULL) {
    errno = 0;
    if (fwrite(header, 1, (size_t)header_length, file) !=
            (size_t)header_length ||
        fwrite(raster, 1, n * width, file) != n * width) {
      error = errno != 0 ? errno : EIO;
    }
    if (fclose(file) != 0 && error == 0) error = errno != 0 ? errno : EIO;
    if (error != 0) remove(path);
  }
  if (error != 0) {
    image_fail(L, status_of_errno(error), "save_pgm", path, strerror(error));
  }
  lua_pop(L, 1);
}

// Spreads an image table at 2 ({ width, height, maxval, pixels }) into
// the arguments pixels, width, height, maxval.
static void spread_image(lua_State* L) {
  lua_settop(L, 2);
  lua_getfield(L, 2, "pixels");
  lua_getfield(L, 2, "width");
  lua_getfield(L, 2, "height");
  lua_getfield(L, 2, "maxval");
  lua_remove(L, 2);
}

// [-0, +0, e]  dc.image.save_pgm(path, pixels, width, height [, maxval])
//   or dc.image.save_pgm(path, image): writes a binary PGM (P5); pixels
//   is a table of numbers, a binary string or a dc.buffer
static int l_save_pgm(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  if (lua_istable(L, 2) && lua_getfield(L, 2, "pixels") != LUA_TNIL) {
    spread_image(L);
  }
  lua_settop(L, 5);
  image_t img;
  check_size(L, 3, &img);
  lua_Integer maxval = luaL_optinteger(L, 5, 255);
  luaL_argcheck(L, maxval >= 1 && maxval <= 65535, 5, "maxval out of range");
  img.maxval = (unsigned)maxval;
  if (!lua_istable(L, 2) && lua_type(L, 2) != LUA_TSTRING &&
      dclua_box_test(L, 2, DCLUA_BUFFER) == NULL) {
    luaL_typeerror(L, 2, "table, string or dc.buffer");
  }
  dclua_check_writable(L, path);
  image_alloc(L, &img);
  if (lua_istable(L, 2)) {
    samples_from_table(L, 2, &img);
  } else if (lua_type(L, 2) == LUA_TSTRING) {
    samples_from_string(L, 2, &img);
  } else {
    samples_from_buffer(L, 2, &img);
  }
  write_pgm(L, path, &img);
  return 0;
}

//===-- Synthetic images ------------------------------------------------===//

// A diagonal ramp: round(maxval * (x + y) / (width + height - 2)), 0 at
// the top left and maxval at the bottom right.
static void make_gradient(image_t* img) {
  size_t span = img->width + img->height - 2;
  for (size_t y = 0; y < img->height; ++y) {
    for (size_t x = 0; x < img->width; ++x) {
      double v = span == 0 ? 0.0
                           : (double)(img->maxval * (x + y)) / (double)span;
      img->samples[y * img->width + x] = (uint16_t)floor(v + 0.5);
    }
  }
}

// Squares of |cell| pixels: 0 where (x // cell + y // cell) is even,
// maxval where it is odd.
static void make_checker(image_t* img, size_t cell) {
  for (size_t y = 0; y < img->height; ++y) {
    for (size_t x = 0; x < img->width; ++x) {
      unsigned odd = (unsigned)((x / cell + y / cell) % 2);
      img->samples[y * img->width + x] = (uint16_t)(odd * img->maxval);
    }
  }
}

// Uniform noise from splitmix64 seeded with |seed|, one draw per pixel
// in row order: the sample is (z >> 16) % (maxval + 1), so a script can
// reproduce it with Lua's 64-bit integers.
static void make_noise(image_t* img, uint64_t seed) {
  uint64_t state = seed;
  for (size_t i = 0; i < pixel_count(img); ++i) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    img->samples[i] = (uint16_t)((z >> 16) % (img->maxval + 1u));
  }
}

// [-0, +1, e]  dc.image.generate(width, height [, pattern [, options]])
//   -> { width, height, maxval, pixels }; pattern "gradient" (default),
//   "checker" or "noise"; options maxval = 255, cell = 8 (checker),
//   seed = 0 (noise), and as, dtype, device as for load_pgm
static int l_generate(lua_State* L) {
  static const char* const patterns[] = {"gradient", "checker", "noise",
                                         NULL};
  static const char* const allowed[] = {"maxval", "cell", "seed", "as",
                                        "dtype", "device", NULL};
  image_t img;
  check_size(L, 1, &img);
  int pattern = luaL_checkoption(L, 3, "gradient", patterns);
  if (!lua_isnoneornil(L, 4)) dclua_check_options(L, 4, allowed);
  img.maxval = (unsigned)opt_field(L, 4, "maxval", 255, 1, 65535);
  size_t cell = (size_t)opt_field(L, 4, "cell", 8, 1, MAX_SIDE);
  lua_Integer seed = opt_field(L, 4, "seed", 0, LUA_MININTEGER,
                               LUA_MAXINTEGER);
  output_t out;
  check_output(L, 4, &out);
  image_alloc(L, &img);
  switch (pattern) {
    case 0: make_gradient(&img); break;
    case 1: make_checker(&img, cell); break;
    default: make_noise(&img, (uint64_t)seed); break;
  }
  push_image(L, &img, &out, "dc.image.generate");
  return 1;
}

void dclua_open_image(lua_State* L) {
  static const luaL_Reg funcs[] = {{"load_pgm", l_load_pgm},
                                   {"save_pgm", l_save_pgm},
                                   {"generate", l_generate},
                                   {NULL, NULL}};
  luaL_newlib(L, funcs);
  lua_setfield(L, -2, "image");
}

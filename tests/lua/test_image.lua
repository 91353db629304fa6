-- test_image.lua: dc.image: PGM files in and out (binary and plain, 8-
-- and 16-bit), the three pixel forms (table, string, buffer), synthetic
-- images checked against values computed here, and every error path.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dir = t.tmpdir()
local function path(name) return dir .. "/" .. name end
local function write_file(name, bytes)
  return t.write_file(path(name), bytes)
end
local read_file = t.read_file

local function same_list(a, b, what)
  t.equal(#a, #b, what .. ": length")
  for i = 1, #b do t.equal(a[i], b[i], what .. "[" .. i .. "]") end
end

--===-- Synthetic images, against the formulas ---------------------------===--

do
  local w, h = 7, 5
  local img = dc.image.generate(w, h)  -- gradient, maxval 255
  t.equal(img.width, w, "width")
  t.equal(img.height, h, "height")
  t.equal(img.maxval, 255, "default maxval")
  local want = {}
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      want[#want + 1] = math.floor(255 * (x + y) / (w + h - 2) + 0.5)
    end
  end
  same_list(img.pixels, want, "gradient")
  t.equal(math.type(img.pixels[1]), "integer", "table pixels are integers")
  t.equal(dc.image.generate(1, 1).pixels[1], 0, "1x1 gradient")
end

do
  local w, h, cell = 9, 4, 3
  local img = dc.image.generate(w, h, "checker", { cell = cell, maxval = 9 })
  local want = {}
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      want[#want + 1] = ((x // cell + y // cell) % 2) * 9
    end
  end
  same_list(img.pixels, want, "checker")
  local default_cell = dc.image.generate(16, 1, "checker")
  t.equal(default_cell.pixels[8], 0, "checker: default cell is 8 wide")
  t.equal(default_cell.pixels[9], 255, "checker: second cell")
end

-- splitmix64 in Lua's wrapping 64-bit integers, as the docs describe.
local function noise(n, seed, maxval)
  local out, state = {}, seed
  for i = 1, n do
    state = state + 0x9E3779B97F4A7C15
    local z = state
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    z = z ~ (z >> 31)
    out[i] = (z >> 16) % (maxval + 1)
  end
  return out
end

do
  local img = dc.image.generate(13, 11, "noise", { seed = 42, maxval = 1000 })
  same_list(img.pixels, noise(13 * 11, 42, 1000), "noise seed 42")
  local neg = dc.image.generate(8, 8, "noise", { seed = -5 })
  same_list(neg.pixels, noise(64, -5, 255), "noise with a negative seed")
  local other = dc.image.generate(13, 11, "noise", { seed = 43, maxval = 1000 })
  local differ = 0
  for i = 1, #img.pixels do
    if img.pixels[i] ~= other.pixels[i] then differ = differ + 1 end
  end
  t.check(differ > 100, "another seed gives other noise")
end

--===-- Round trips through files ----------------------------------------===--

do  -- 8-bit: the exact bytes of the file, and back
  local p = path("small.pgm")
  dc.image.save_pgm(p, { 0, 1, 2, 253, 254, 255 }, 3, 2)
  t.equal(read_file(p), "P5\n3 2\n255\n\0\1\2\253\254\255", "8-bit file")
  local img = dc.image.load_pgm(p)
  t.equal(img.width, 3, "loaded width")
  t.equal(img.height, 2, "loaded height")
  t.equal(img.maxval, 255, "loaded maxval")
  same_list(img.pixels, { 0, 1, 2, 253, 254, 255 }, "8-bit round trip")
end

do  -- 16-bit: two bytes a sample, most significant first
  local p = path("deep.pgm")
  dc.image.save_pgm(p, { 0, 258, 65535, 4096 }, 2, 2, 65535)
  t.equal(read_file(p), "P5\n2 2\n65535\n\0\0\1\2\255\255\16\0", "16-bit")
  local img = dc.image.load_pgm(p)
  t.equal(img.maxval, 65535, "16-bit maxval")
  same_list(img.pixels, { 0, 258, 65535, 4096 }, "16-bit round trip")
  -- An image table saves as it loaded.
  dc.image.save_pgm(path("deep2.pgm"), img)
  t.equal(read_file(path("deep2.pgm")), read_file(p), "save_pgm(path, img)")
end

do  -- plain (P2) files, with comments in the header
  local p = write_file("plain.pgm",
    "P2\n# made by hand\n4 # width\n2\n# maxval next\n15\n" ..
    "0 1 2 3\n\t12  13\r\n14 15\n")
  local img = dc.image.load_pgm(p)
  t.equal(img.width, 4, "P2 width")
  t.equal(img.maxval, 15, "P2 maxval")
  same_list(img.pixels, { 0, 1, 2, 3, 12, 13, 14, 15 }, "P2 samples")
  local deep = dc.image.load_pgm(write_file("plain16.pgm",
    "P2 2 1 1000 999 1000"))
  same_list(deep.pixels, { 999, 1000 }, "P2 past 255")
  -- The comment after P5's maxval ends only at the one white space byte.
  local bin = dc.image.load_pgm(write_file("comment.pgm",
    "P5 #c\n2 1 255\n\35\10"))
  same_list(bin.pixels, { 35, 10 }, "P5 raster starting with '#'")
end

do  -- values are rounded and clamped to 0..maxval
  dc.image.save_pgm(path("clamp.pgm"),
    { -3, 0.4, 0.5, 1.49, 254.6, 300, 0 / 0, math.huge }, 4, 2)
  same_list(dc.image.load_pgm(path("clamp.pgm")).pixels,
            { 0, 0, 1, 1, 255, 255, 0, 255 }, "rounded and clamped")
  dc.image.save_pgm(path("clamp7.pgm"), { 6.6, 8, -1, 7 }, 2, 2, 7)
  same_list(dc.image.load_pgm(path("clamp7.pgm")).pixels, { 7, 7, 0, 7 },
            "clamped to maxval 7")
end

--===-- The string and buffer forms --------------------------------------===--

do
  local img = dc.image.generate(5, 4, "noise", { seed = 3 })
  dc.image.save_pgm(path("n.pgm"), img)
  local s = dc.image.load_pgm(path("n.pgm"), { as = "string" })
  t.equal(type(s.pixels), "string", "as string")
  t.equal(#s.pixels, 20, "one byte a sample")
  for i = 1, 20 do t.equal(s.pixels:byte(i), img.pixels[i], "byte " .. i) end
  dc.image.save_pgm(path("n2.pgm"), s.pixels, 5, 4)
  t.equal(read_file(path("n2.pgm")), read_file(path("n.pgm")), "string saves")

  local deep = dc.image.generate(3, 2, "noise", { seed = 9, maxval = 60000,
                                                  as = "string" })
  t.equal(#deep.pixels, 12, "two bytes a sample past 255")
  local want = noise(6, 9, 60000)
  for i = 1, 6 do
    t.equal(string.unpack("=I2", deep.pixels, 2 * i - 1), want[i],
            "native u16 sample " .. i)
  end
  dc.image.save_pgm(path("deep.pgm"), deep.pixels, 3, 2, 60000)
  same_list(dc.image.load_pgm(path("deep.pgm")).pixels, want,
            "16-bit string saves")
end

do
  local img = dc.image.generate(6, 3, "gradient", { as = "buffer" })
  t.check(tostring(img.pixels):find("f32[18]", 1, true), "an f32 buffer")
  local want = dc.image.generate(6, 3).pixels
  same_list(img.pixels:read(), want, "buffer holds the samples")
  local dev = dc.device("cpu")
  local u8 = dc.image.generate(6, 3, nil, { device = dev, dtype = "u8" })
  t.check(tostring(u8.pixels):find("u8[18] on cpu", 1, true), "a u8 buffer")
  same_list(u8.pixels:read(), want, "u8 buffer")
  dc.image.save_pgm(path("g.pgm"), want, 6, 3)
  local loaded = dc.image.load_pgm(path("g.pgm"), { dtype = "f64" })
  same_list(loaded.pixels:read(), want, "load into an f64 buffer")

  -- Saving a buffer: floats rounded and clamped, any dtype.
  local f = dc.buffer("f32", { -1, 0.49, 0.5, 128.2, 254.5, 999 })
  dc.image.save_pgm(path("f.pgm"), f, 3, 2)
  same_list(dc.image.load_pgm(path("f.pgm")).pixels, { 0, 0, 1, 128, 255, 255 },
            "buffer saved")
  local i32 = dc.buffer("i32", { -7, 70000, 3, 65535 })
  dc.image.save_pgm(path("i.pgm"), i32, 2, 2, 65535)
  same_list(dc.image.load_pgm(path("i.pgm")).pixels, { 0, 65535, 3, 65535 },
            "i32 buffer saved at 16 bits")
end

do  -- a full HD frame goes through buffers and strings quickly
  local start = os.clock()
  local img = dc.image.generate(1920, 1080, "noise", { seed = 1,
                                                       as = "buffer" })
  dc.image.save_pgm(path("hd.pgm"), img.pixels, 1920, 1080)
  local back = dc.image.load_pgm(path("hd.pgm"), { as = "string" })
  t.equal(#back.pixels, 1920 * 1080, "HD frame")
  local s = dc.image.generate(1920, 1080, "noise", { seed = 1,
                                                     as = "string" })
  t.check(s.pixels == back.pixels, "HD frame round trip")
  t.check(os.clock() - start < 10, "HD frame in under 10 s")
end

--===-- Errors -----------------------------------------------------------===--

local missing = path("missing.pgm")
t.raises("NOT_FOUND", missing, dc.image.load_pgm, missing)
t.raises("INVALID_ARGUMENT", "Is a directory", dc.image.load_pgm, dir)
local function bad(bytes, message)
  local p = write_file("bad.pgm", bytes)
  local err = t.raises("INVALID_ARGUMENT", message, dc.image.load_pgm, p)
  t.check(err.message:find(p, 1, true), "the message names the file")
end
bad("", "not a PGM file")
bad("P6\n1 1\n255\n\0\0\0", "not a PGM file")
bad("P5", "bad header: width is missing")
bad("P51 1 255\n\0", "no white space after the magic")
bad("P5\nx 1\n255\n\0", "bad header: width is missing or not a number")
bad("P5\n3x 1\n255\n\0", "bad header: width is not a number")
bad("P5\n0 1\n255\n\0", "bad header: width is out of range")
bad("P5\n1 99999999999999999999\n255\n\0", "bad header: height is out")
bad("P5\n1 1\n0\n\0", "bad header: maxval is out of range")
bad("P5\n1 1\n65536\n\0", "bad header: maxval is out of range")
bad("P5\n1048576 1048576\n255\n", "over 2^28 pixels")
bad("P5\n2 2\n255", "truncated: no pixel data")
bad("P5\n2 2\n255#\0\0\0\0", "no white space after maxval")
bad("P5\n3 2\n255\n\0\0\0\0\0", "truncated: 5 of 6 bytes")
bad("P5\n2 1\n65535\n\0\0\1", "truncated: 3 of 4 bytes")
bad("P5\n3 2\n200\n\0\0\0\0\201\0", "row 1, column 1 is 201, above maxval 200")
bad("P5\n2 1\n1000\n\0\0\3\233", "row 0, column 1 is 1001, above maxval 1000")
bad("P2\n2 2\n9\n1 2 3", "truncated: 3 of 4 samples")
bad("P2\n2 1\n9\n1 x", "row 0, column 1 is not a number")
bad("P2\n2 1\n9\n1 5x", "row 0, column 1 is not a number")
bad("P2\n2 1\n9\n10 1", "row 0, column 0 is 10, above maxval 9")

-- Options
t.raises(nil, "unknown option 'format'", dc.image.load_pgm, path("g.pgm"),
         { format = "x" })
t.raises(nil, "option 'as' must be", dc.image.load_pgm, path("g.pgm"),
         { as = "list" })
t.raises(nil, "option 'dtype' must be a dtype", dc.image.load_pgm,
         path("g.pgm"), { dtype = "f16" })
t.raises(nil, "need as = \"buffer\"", dc.image.load_pgm, path("g.pgm"),
         { as = "table", dtype = "f32" })
t.raises(nil, "option 'device' must be", dc.image.load_pgm, path("g.pgm"),
         { device = 3 })
t.raises("NOT_FOUND", nil, dc.image.load_pgm, path("g.pgm"),
         { device = "cuda:7" })
t.raises(nil, "table expected", dc.image.load_pgm, path("g.pgm"), "buffer")
t.raises(nil, "string expected", dc.image.load_pgm, nil)
t.raises("INVALID_ARGUMENT", "dtype u8 cannot hold samples up to maxval 300",
         dc.image.generate, 2, 2, "noise", { maxval = 300, dtype = "u8" })
t.raises("INVALID_ARGUMENT", "dtype i8 cannot hold",
         dc.image.generate, 2, 2, nil, { dtype = "i8" })

-- generate
t.raises(nil, "width out of range", dc.image.generate, 0, 1)
t.raises(nil, "height out of range", dc.image.generate, 1, 2 ^ 21 // 1)
t.raises(nil, "over 2^28 pixels", dc.image.generate, 2 ^ 20 // 1, 2 ^ 20 // 1)
t.raises(nil, "number expected", dc.image.generate, 2)
t.raises(nil, "number has no integer representation", dc.image.generate,
         2.5, 2)
t.raises(nil, "invalid option 'stripes'", dc.image.generate, 2, 2, "stripes")
t.raises(nil, "unknown option 'seeds'", dc.image.generate, 2, 2, "noise",
         { seeds = 1 })
t.raises(nil, "option 'maxval' must be an integer in [1, 65535]",
         dc.image.generate, 2, 2, nil, { maxval = 0 })
t.raises(nil, "option 'cell' must be an integer", dc.image.generate, 2, 2,
         "checker", { cell = 1.5 })
t.raises(nil, "option 'seed' must be an integer", dc.image.generate, 2, 2,
         "noise", { seed = "x" })

-- save_pgm
t.raises(nil, "4 pixel values for a 6-pixel image", dc.image.save_pgm,
         path("x.pgm"), { 1, 2, 3, 4 }, 3, 2)
t.raises(nil, "pixels[2] is a string, not a number", dc.image.save_pgm,
         path("x.pgm"), { 1, "2" }, 2, 1)
t.raises(nil, "a string of 3 bytes for a 2-pixel image (needs 4)",
         dc.image.save_pgm, path("x.pgm"), "abc", 2, 1, 300)
t.raises(nil, "table, string or dc.buffer expected", dc.image.save_pgm,
         path("x.pgm"), true, 1, 1)
t.raises(nil, "table, string or dc.buffer expected", dc.image.save_pgm,
         path("x.pgm"), nil, 1, 1)
t.raises(nil, "maxval out of range", dc.image.save_pgm, path("x.pgm"),
         { 1 }, 1, 1, 65536)
t.raises(nil, "width out of range", dc.image.save_pgm, path("x.pgm"),
         { 1 }, -1, 1)
t.raises(nil, "number expected", dc.image.save_pgm, path("x.pgm"),
         { pixels = { 1 } })
t.raises(nil, "3 pixel values for a 2-pixel image", dc.image.save_pgm,
         path("x.pgm"), dc.buffer("f32", 3), 2, 1)
t.check(io.open(path("x.pgm")) == nil, "no file after a failed save")
t.raises("NOT_FOUND", dir .. "/no/such/dir.pgm", dc.image.save_pgm,
         dir .. "/no/such/dir.pgm", { 1 }, 1, 1)
t.raises("INVALID_ARGUMENT", "Is a directory", dc.image.save_pgm, dir,
         { 1 }, 1, 1)
do
  local closed = dc.buffer("f32", 4)
  closed:close()
  t.raises(nil, "attempt to use a closed dc.buffer", dc.image.save_pgm,
           path("x.pgm"), closed, 2, 2)
end

-- Injected faults reach the caller: a failing allocation for the buffer
-- form, a failing read of the buffer to save.
do
  local id = dc.fault.add { site = "alloc" }
  t.raises("OUT_OF_MEMORY", "injected fault", dc.image.generate, 2, 2, nil,
           { as = "buffer" })
  dc.fault.remove(id)
  local buf = dc.buffer("f32", 4)
  id = dc.fault.add { site = "copy" }
  t.raises("UNAVAILABLE", "injected fault", dc.image.save_pgm, path("x.pgm"),
           buf, 2, 2)
  dc.fault.clear()
end

-- Inside the runner's sandbox only the allowed directory is writable.
do
  local box = path("box")
  local child = write_file("child.lua", [[
    local dc = require("dc")
    local box = ...
    local ok, err = pcall(dc.image.save_pgm, box .. "/../outside.pgm", { 1 },
                          1, 1)
    print(not ok and err.code or "wrote")
    dc.image.save_pgm(box .. "/inside.pgm", { 7 }, 1, 1)
    print(dc.image.load_pgm(box .. "/inside.pgm").pixels[1])
  ]])
  t.equal(t.run_sandboxed(box, child), "PERMISSION_DENIED\n7\n",
          "sandboxed save_pgm")
  t.check(io.open(path("outside.pgm")) == nil, "nothing written outside")
end

-- Buffers made here are collected like any other.
collectgarbage()
collectgarbage()
t.equal(dc.live_buffers(), 0, "no buffer left alive")

assert(os.execute("rm -rf '" .. dir .. "'"))
print("image: ok")

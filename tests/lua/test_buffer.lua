-- test_buffer.lua: dc.buffer: creation, transfers, views, element access,
-- conversions, errors, lifecycle and memory pressure.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

-- Fails unless the arrays |a| and |b| hold equal values (with math.type).
local function same(a, b, what)
  t.equal(#a, #b, what .. ": length")
  for i = 1, #b do
    if a[i] ~= b[i] or math.type(a[i]) ~= math.type(b[i]) then
      error(("check failed: %s: element %d: expected %s (%s), got %s (%s)")
        :format(what, i, tostring(b[i]), math.type(b[i]), tostring(a[i]),
                math.type(a[i])), 2)
    end
  end
end

local function range(first, last)
  local r = {}
  for i = first, last do r[#r + 1] = i end
  return r
end

-- Each integer dtype: its extremes round-trip, as integers; its string
-- packing format checks the bytes.
local ints = {
  i8 = { -128, 127, "i1" }, u8 = { 0, 255, "I1" },
  i16 = { -32768, 32767, "i2" }, u16 = { 0, 65535, "I2" },
  i32 = { -2147483648, 2147483647, "i4" }, u32 = { 0, 4294967295, "I4" },
  i64 = { math.mininteger, math.maxinteger, "i8" },
}

local function test_create_and_read()
  for dtype, r in pairs(ints) do
    local lo, hi, fmt = r[1], r[2], r[3]
    local values = { lo, hi, 0, 1, lo + 1, hi - 1 }
    local b = dev:buffer(dtype, values)
    t.equal(b.dtype, dtype, "dtype")
    t.equal(#b, 6, dtype .. " #")
    t.equal(b.length, 6, dtype .. " length")
    same(b:read(), values, dtype .. " read")
    local packed = ("<" .. fmt:rep(6)):pack(table.unpack(values))
    t.equal(b:bytes(), packed, dtype .. " bytes")
    t.equal(b.size, #packed, dtype .. " size")
    same(dev:buffer(dtype, packed):read(), values, dtype .. " from bytes")
  end
  -- Floats read back as floats, f32 rounded as string.pack("f") rounds.
  local f = dev:buffer("f32", { 0.1, -2.5, 3, 1e30 })
  local want = { string.unpack("<ffff", string.pack("<ffff", 0.1, -2.5, 3,
                                                     1e30)) }
  want[5] = nil
  same(f:read(), want, "f32")
  t.equal(math.type(f[3]), "float", "f32 element is a float")
  local d = dev:buffer("f64", { 0.1, 1 / 3, -0.0, 2 ^ 60 })
  same(d:read(), { 0.1, 1 / 3, -0.0, 2.0 ^ 60 }, "f64")
  t.check(1 / d[3] == -math.huge, "f64 keeps -0.0")
  local special = dev:buffer("f32", { math.huge, -math.huge, 0 / 0 })
  local s = special:read()
  t.check(s[1] == math.huge and s[2] == -math.huge and s[3] ~= s[3],
          "inf and nan pass into floats")
  -- A length makes a zeroed buffer.
  local z = dev:buffer("i32", 1000)
  local zr = z:read()
  t.equal(#zr, 1000, "zeroed length")
  for i = 1, 1000 do t.equal(zr[i], 0, "zeroed element") end
  same(dev:buffer("f64", 2.0):read(), { 0.0, 0.0 }, "integral float length")
end

local function test_u64()
  -- u64 maps bit for bit onto Lua integers, as string.pack("J") does.
  local values = { 0, math.maxinteger, -1, math.mininteger }
  local b = dev:buffer("u64", values)
  same(b:read(), values, "u64 bits")
  t.equal(b:bytes(), string.pack("<JJJJ", table.unpack(values)), "u64 bytes")
  b[1] = 2.0 ^ 63  -- floats from 2^63 name their unsigned value
  t.equal(b[1], math.mininteger, "u64 2^63")
  b[2] = 2.0 ^ 64 - 2048
  t.equal(b[2], -2048, "u64 just below 2^64")
  t.raises("INVALID_ARGUMENT", "does not fit in u64",
           function() b[1] = 2.0 ^ 64 end)
  t.raises("INVALID_ARGUMENT", "does not fit in i64",
           function() dev:buffer("i64", 1)[1] = 2.0 ^ 63 end)
end

local function test_opts_and_properties()
  local b = dev:buffer("f32", 1024, { storage = "shared", label = "frame" })
  t.equal(tostring(b), "dc.buffer: f32[1024] on cpu", "tostring")
  t.equal(b.storage, "shared", "storage")
  t.equal(b.label, "frame", "label")
  t.equal(b.size, 4096, "size")
  t.check(b.device == dev, "device")
  t.equal(b.no_such_field, nil, "unknown field")
  t.equal(b[true], nil, "boolean key")
  local p = dev:buffer("u8", 1)
  t.equal(p.storage, "private", "default storage")
  t.equal(p.label, nil, "no label")
  -- dc.buffer: the default device, or opts.device.
  local c = dc.buffer("i16", { 1, 2, 3 }, { device = "cpu", storage = "managed" })
  t.check(c.device == dev, "dc.buffer opts.device")
  t.equal(c.storage, "managed", "dc.buffer storage")
  t.check(dc.buffer("u8", 4, { device = dev }).device == dev, "device object")
  t.check(dc.buffer("u8", 4).device == dc.device(), "default device")
end

local function test_write_fill_copy()
  local b = dev:buffer("i32", 10)
  t.check(b:write({ 1, 2, 3 }) == b, "write returns self")
  same(b:read(1, 4), { 1, 2, 3, 0 }, "write at 1")
  b:write({ 7, 8 }, 9)
  same(b:read(8), { 0, 7, 8 }, "write at 9, read the rest")
  b:write(string.pack("<i4i4", -5, 6), 4)
  same(b:read(4, 2), { -5, 6 }, "write bytes")
  t.equal(b:bytes(4, 1), string.pack("<i4", -5), "bytes range")
  t.equal(b:bytes(11), "", "bytes: empty at the end")
  same(b:read(11), {}, "read: empty at the end")
  same(b:read(3, 0), {}, "read: count 0")
  b:write({}):write("", 11)  -- empty writes are no-ops
  t.check(b:fill(4) == b, "fill returns self")
  same(b:read(), { 4, 4, 4, 4, 4, 4, 4, 4, 4, 4 }, "fill all")
  b:fill(-1, 3, 2):fill(9, 10):fill(0, 1, 0)
  same(b:read(), { 4, 4, -1, -1, 4, 4, 4, 4, 4, 9 }, "fill ranges")
  local src = dev:buffer("i32", range(1, 10))
  t.check(b:copy_from(src) == b, "copy_from returns self")
  same(b:read(), range(1, 10), "copy all")
  b:copy_from(src, 1, 6)  -- the rest of src from 6: 5 elements
  same(b:read(), { 6, 7, 8, 9, 10, 6, 7, 8, 9, 10 }, "copy the rest")
  b:copy_from(src, 8, 1, 2)
  same(b:read(), { 6, 7, 8, 9, 10, 6, 7, 1, 2, 10 }, "copy a range")
  -- Overlapping views of one buffer copy as if through a temporary.
  local o = dev:buffer("i32", range(1, 8))
  o:view(3):copy_from(o:view(1, 6))
  same(o:read(), { 1, 2, 1, 2, 3, 4, 5, 6 }, "overlapping copy")
  -- Table values convert from integral floats too.
  same(dev:buffer("u8", { 1.0, 255.0 }):read(), { 1, 255 }, "integral floats")
end

local function test_elements()
  local b = dev:buffer("f64", { 1.5, 2.5, 3.5 })
  t.equal(b[1], 1.5, "b[1]")
  t.equal(b[3], 3.5, "b[3]")
  t.equal(b[2.0], 2.5, "integral float index")
  b[2] = 10
  t.equal(b[2], 10.0, "set")
  local sum = 0
  for i = 1, #b do sum = sum + b[i] end
  t.equal(sum, 15.0, "sum by index")
  local u = dev:buffer("u8", 3)
  u[3] = 255
  same(u:read(), { 0, 0, 255 }, "u8 set")
  t.raises("OUT_OF_RANGE", "index 0 is out of range 1..3",
           function() return u[0] end)
  t.raises("OUT_OF_RANGE", "index 4 is out of range 1..3",
           function() return u[4] end)
  t.raises("OUT_OF_RANGE", "index -1 is out of range 1..3",
           function() u[-1] = 1 end)
  t.raises("INVALID_ARGUMENT", "index 1.5 is not an integer",
           function() return u[1.5] end)
  t.raises("INVALID_ARGUMENT", "buf[2]: 256 does not fit in u8",
           function() u[2] = 256 end)
  t.raises("INVALID_ARGUMENT", "buf[1]: expected a number for u8, got nil",
           function() u[1] = nil end)
  t.raises(nil, "cannot set 'length'", function() u.length = 4 end)
  same(u:read(), { 0, 0, 255 }, "failed sets change nothing")
end

local function test_conversion_errors()
  local cases = {
    { "u8", { 1, 300 }, "element 2: 300 does not fit in u8" },
    { "u8", { -1 }, "element 1: -1 does not fit in u8" },
    { "i8", { 128 }, "element 1: 128 does not fit in i8" },
    { "i16", { 40000 }, "element 1: 40000 does not fit in i16" },
    { "u16", { 65536 }, "element 1: 65536 does not fit in u16" },
    { "i32", { 2147483648 }, "element 1: 2147483648 does not fit in i32" },
    { "u32", { 4294967296 }, "element 1: 4294967296 does not fit in u32" },
    { "i32", { 1, 2, 1.5 }, "element 3: 1.5 is not an integer, as i32 needs" },
    { "i32", { 0 / 0 }, "element 1: nan is not an integer, as i32 needs" },
    { "i64", { math.huge }, "element 1: inf does not fit in i64" },
    { "f32", { 1e300 }, "element 1: 1e+300 does not fit in f32" },
    { "f32", { 1, "2" }, "element 2: expected a number for f32, got string" },
    { "f64", { 1, true }, "element 2: expected a number for f64, got boolean" },
  }
  for _, c in ipairs(cases) do
    t.raises("INVALID_ARGUMENT", "dev:buffer: " .. c[3],
             function() dev:buffer(c[1], c[2]) end)
    local b = dev:buffer(c[1], #c[2] + 1)
    local before = b:bytes()
    t.raises("INVALID_ARGUMENT", "buf:write: " .. c[3],
             function() b:write(c[2]) end)
    t.equal(b:bytes(), before, "a failed write writes nothing")
  end
  t.raises("INVALID_ARGUMENT", "dc.buffer: element 1: 256",
           function() dc.buffer("u8", { 256 }) end)
  local u = dev:buffer("u8", 4)
  t.raises("INVALID_ARGUMENT", "buf:fill: value: 256 does not fit in u8",
           function() u:fill(256) end)
  t.raises("INVALID_ARGUMENT", "buf:fill: value: 0.5 is not an integer",
           function() u:fill(0.5) end)
  t.raises("INVALID_ARGUMENT", "expected a number for u8, got string",
           function() u:fill("1") end)
  -- Holes in a table are nil elements.
  t.raises("INVALID_ARGUMENT", "element 2: expected a number for f32, got nil",
           function() dev:buffer("f32", { 1, nil, 3 }) end)
end

local function test_argument_errors()
  t.raises(nil, "unknown dtype 'f16'", function() dev:buffer("f16", 4) end)
  t.raises(nil, "unknown dtype 'x'", function() dc.buffer("x", 4) end)
  t.raises(nil, "length, table or string expected, got boolean",
           function() dev:buffer("f32", true) end)
  t.raises(nil, "length must be at least 1", function() dev:buffer("f32", 0) end)
  t.raises(nil, "length must be at least 1", function() dev:buffer("f32", -3) end)
  t.raises(nil, "number has no integer representation",
           function() dev:buffer("f32", 2.5) end)
  t.raises(nil, "the table is empty", function() dev:buffer("f32", {}) end)
  t.raises(nil, "a string of 6 bytes is not a whole number of f32 elements",
           function() dev:buffer("f32", "abcdef") end)
  t.raises(nil, "a string of 0 bytes", function() dev:buffer("u8", "") end)
  t.raises(nil, "unknown option 'storge' (storage, label)",
           function() dev:buffer("f32", 4, { storge = "shared" }) end)
  t.raises(nil, "unknown option 'device' (storage, label)",
           function() dev:buffer("f32", 4, { device = "cpu" }) end)
  t.raises(nil, "unknown option '1' (storage, label, device)",
           function() dc.buffer("f32", 4, { "shared" }) end)
  t.raises(nil, "field 'storage' must be",
           function() dev:buffer("f32", 4, { storage = "pinned" }) end)
  t.raises(nil, "field 'label' must be a string",
           function() dev:buffer("f32", 4, { label = 5 }) end)
  t.raises(nil, "field 'device' must be a dc.device or a device name",
           function() dc.buffer("f32", 4, { device = 0 }) end)
  t.raises("NOT_FOUND", nil,
           function() dc.buffer("f32", 4, { device = "tpu:9" }) end)
  t.raises(nil, "table expected", function() dev:buffer("f32", 4, "shared") end)
  t.raises(nil, "dc.device", function() dev.buffer(42, "f32", 4) end)
  local b = dev:buffer("f32", 10)
  local i = dev:buffer("i32", 10)
  t.raises(nil, "first must be at least 1 (indexes are 1-based)",
           function() b:read(0) end)
  t.raises(nil, "count must not be negative", function() b:read(1, -1) end)
  t.raises(nil, "number has no integer representation",
           function() b:read(1.5) end)
  t.raises(nil, "table or string expected, got number",
           function() b:write(5) end)
  t.raises(nil, "a string of 3 bytes is not a whole number of f32 elements",
           function() b:write("abc") end)
  t.raises(nil, "dc.buffer expected", function() b:copy_from({}) end)
  t.raises(nil, "dc.buffer expected", function() b.read("x") end)
  t.raises(nil, "bad argument #1 to 'view'", function() b:view() end)
  t.raises(nil, "a view needs at least one element",
           function() b:view(1, 0) end)
  t.raises(nil, "bad argument #1 to 'fill'", function() b:fill() end)
  t.raises("INVALID_ARGUMENT", "dtypes differ (the buffer is f32, the source i32)",
           function() b:copy_from(i) end)
end

local function test_range_errors()
  local b = dev:buffer("u16", 10)
  local s = dev:buffer("u16", 4)
  local cases = {
    { "buf:read: elements 9..11 are outside the buffer (1..10)",
      function() b:read(9, 3) end },
    { "buf:read: first 12 is past the end of the buffer (10 elements)",
      function() b:read(12) end },
    { "buf:bytes: elements 1..11 are outside the buffer (1..10)",
      function() b:bytes(1, 11) end },
    { "buf:write: elements 10..11 are outside the buffer (1..10)",
      function() b:write({ 1, 2 }, 10) end },
    { "buf:write: elements 10..11", function() b:write("abcd", 10) end },
    { "buf:fill: elements 5..14", function() b:fill(1, 5, 10) end },
    { "buf:copy_from: elements 3..5 are outside the source (1..4)",
      function() b:copy_from(s, 1, 3, 3) end },
    { "buf:copy_from: elements 9..12 are outside the buffer (1..10)",
      function() b:copy_from(s, 9) end },
    { "buf:copy_from: elements 1..10 are outside the buffer (1..4)",
      function() s:copy_from(b) end },
    { "buf:view: elements 8..11 are outside the buffer (1..10)",
      function() b:view(8, 4) end },
    { "buf:view: elements 11..11 are outside the buffer (1..10)",
      function() b:view(11) end },
  }
  for _, c in ipairs(cases) do t.raises("OUT_OF_RANGE", c[1], c[2]) end
  same(b:read(), { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, "failed calls change nothing")
end

local function test_views()
  local b = dev:buffer("i32", range(1, 10), { label = "base" })
  local v = b:view(3, 4)
  t.equal(tostring(v), "dc.buffer: i32[4] on cpu", "view tostring")
  t.equal(#v, 4, "view length")
  t.equal(v.label, "base", "a view shares the label")
  same(v:read(), { 3, 4, 5, 6 }, "view read")
  v[1] = 30
  v:write({ 50, 60 }, 3)
  same(b:read(), { 1, 2, 30, 4, 50, 60, 7, 8, 9, 10 }, "writes through a view")
  local vv = v:view(2, 2)  -- a view of a view
  same(vv:read(), { 4, 50 }, "view of a view")
  same(b:view(9):read(), { 9, 10 }, "view of the rest")
  t.raises("OUT_OF_RANGE", "index 5 is out of range 1..4",
           function() return v[5] end)
  -- The view keeps its parent object alive; closing the parent does not
  -- end the view (the core keeps the memory).
  local weak = setmetatable({}, { __mode = "v" })
  do
    local parent = dev:buffer("f32", { 1, 2, 3, 4 })
    weak[1] = parent
    v = parent:view(2, 2)
  end
  collectgarbage()
  collectgarbage()
  t.check(weak[1] ~= nil, "the view keeps its parent alive")
  weak[1]:close()
  same(v:read(), { 2.0, 3.0 }, "a view outlives its closed parent")
  v:close()
end

local function test_lifecycle()
  collectgarbage()
  local live = dc.live_buffers()
  do
    local b <close> = dev:buffer("f32", 16)
    t.equal(dc.live_buffers(), live + 1, "one more live buffer")
  end
  t.equal(dc.live_buffers(), live, "<close> released it")
  local b = dev:buffer("f32", 16)
  local v = b:view(1, 4)
  t.equal(dc.live_buffers(), live + 2, "buffer and view")
  t.equal(b:close(), nil, "close returns nothing")
  b:close()  -- twice is fine
  t.equal(tostring(b), "dc.buffer (closed)", "closed tostring")
  t.equal(dc.live_buffers(), live + 2, "the view keeps its root")
  v:close()
  t.equal(dc.live_buffers(), live, "all released")
  local uses = {
    function() return b:read() end, function() return b:bytes() end,
    function() b:write({ 1 }) end, function() b:fill(0) end,
    function() b:view(1, 1) end, function() return b[1] end,
    function() b[1] = 1 end, function() return #b end,
    function() return b.length end, function() return b.device end,
    function() dev:buffer("f32", 16):copy_from(b) end,
    function() b:copy_from(dev:buffer("f32", 16)) end,
  }
  for _, use in ipairs(uses) do
    t.raises(nil, "attempt to use a closed dc.buffer", use)
  end
  -- Dropped buffers are released by the collector.
  for _ = 1, 100 do dev:buffer("u8", 100) end
  collectgarbage()
  collectgarbage()
  t.equal(dc.live_buffers(), live, "collected")
end

-- A loop that drops big buffers keeps memory bounded without
-- collectgarbage(), in both collector modes.
local function rss_mib()
  local f = io.open("/proc/self/statm")
  if not f then return 0 end
  local pages = f:read("n")
  pages = f:read("n")
  f:close()
  return pages * 4096 / 2 ^ 20
end

-- Each buffer stays alive for |ring| iterations, long enough in
-- generational mode to grow old, so that only a major collection frees it.
local function test_pressure(mode, count, ring)
  collectgarbage(mode)
  collectgarbage()
  local live = dc.live_buffers()
  local rss0 = rss_mib()
  local peak = 0
  local keep = {}
  for i = 1, count do
    local b = dev:buffer("u8", 4 * 2 ^ 20)
    b[i] = 1
    keep[i % ring] = b
    local n = dc.live_buffers() - live
    if n > peak then peak = n end
    t.check(n <= ring + 40, mode .. ": live buffers stay bounded (" .. n ..
            ")")
  end
  keep = nil
  local grown = rss_mib() - rss0
  t.check(grown < 1024, mode .. (": memory grew %.0f MiB"):format(grown))
  collectgarbage("incremental")
  return peak
end

-- Out of device memory, creation collects the garbage buffers and tries
-- again, even with the collector stopped. Run in a child with a budget.
local function test_out_of_memory()
  local exe
  for i = -1, -10, -1 do
    if arg[i] then exe = arg[i] end
  end
  if not exe or not os.execute("true") then return end
  local script = t.write_file(os.tmpname(), [[
    local dc = require("dc")
    collectgarbage("stop")
    for i = 1, 40 do dc.buffer("u8", 16 * 2 ^ 20) end
    local ok, err = pcall(dc.buffer, "u8", 128 * 2 ^ 20)
    assert(not ok and err.code == "OUT_OF_MEMORY", tostring(err))
    print("child: ok")
  ]])
  local p = io.popen(("DC_MEMORY_BUDGET=64M %q %q 2>&1"):format(exe, script))
  local out = p:read("a")
  local ok = p:close()
  os.remove(script)
  t.check(ok and out:find("child: ok", 1, true), "child failed: " .. out)
end

local function test_faults()
  local b = dev:buffer("f32", 4)
  local id = dc.fault.add { site = "copy", nth = 1, status = "UNAVAILABLE" }
  t.raises("UNAVAILABLE", nil, function() b:read() end)
  dc.fault.remove(id)
  id = dc.fault.add { site = "alloc", nth = 1, status = "UNAVAILABLE" }
  collectgarbage()
  local live = dc.live_buffers()
  t.raises("UNAVAILABLE", nil, function() dev:buffer("f32", 4) end)
  dc.fault.remove(id)
  collectgarbage()
  t.equal(dc.live_buffers(), live, "a failed creation leaves nothing")
  same(b:read(), { 0.0, 0.0, 0.0, 0.0 }, "works again")
  -- An injected OUT_OF_MEMORY is one failed call: creation does not
  -- collect and retry it, even with garbage buffers around.
  for _ = 1, 10 do dev:buffer("u8", 64) end
  id = dc.fault.add { site = "alloc", nth = 1 }
  t.raises("OUT_OF_MEMORY", "injected fault", function() dev:buffer("u8", 4) end)
  t.equal(dc.fault.stats(id).matched, 1, "one allocation request")
  dc.fault.remove(id)
end

test_create_and_read()
test_u64()
test_opts_and_properties()
test_write_fill_copy()
test_elements()
test_conversion_errors()
test_argument_errors()
test_range_errors()
test_views()
test_lifecycle()
for _, run in ipairs { { "incremental", 2000, 1 }, { "generational", 500, 1 },
                      { "incremental", 500, 8 }, { "generational", 500, 8 } } do
  local clock = os.clock()
  local peak = test_pressure(table.unpack(run))
  print(("pressure: %s, ring %d: peak %d live, %.2f s"):format(
    run[1], run[3], peak, os.clock() - clock))
end
test_out_of_memory()
test_faults()
print("buffer: ok")

-- test_encoder.lua: the command encoder: binding arguments one at a time
-- (by position and by name), the grid, validation, dispatch, history and
-- statistics, and every error naming the kernel and the argument.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

local prog = dev:compile([[
  __kernel void scale(__global float* x, float factor, uint n) {
    size_t i = get_global_id(0);
    if (i < n) x[i] *= factor;
  }
  __kernel void add2(__global int* out, int2 v) {
    size_t x = get_global_id(0) - get_global_offset(0);
    size_t y = get_global_id(1) - get_global_offset(1);
    size_t i = x * get_global_size(1) + y;
    out[i] = v.x * (int)get_global_offset(0) + v.y + (int)i;
  }
  __kernel void group_ids(__global int* out, __local int* tmp) {
    tmp[get_local_id(0)] = (int)get_group_id(0);
    out[get_global_id(0)] = tmp[get_local_id(0)];
  }
]], { name = "encoder_test.cl" })

local function list(tbl) return table.concat(tbl, ",") end

--===-- A first example: three dispatches that differ in one argument ---===--

do
  local s <close> = dev:stream()
  local x = dev:buffer("f32", 10)
  x:fill(1)
  local enc <close> = s:encoder()
  t.check(enc.stream == s, "enc.stream")
  t.equal(tostring(enc), "dc.encoder: no kernel", "tostring without kernel")
  t.check(enc:kernel(prog.scale) == enc, "kernel returns the encoder")
  t.equal(tostring(enc), "dc.encoder: kernel 'scale'", "tostring")
  enc:arg(1, x):arg("n", 8):grid(10)
  for factor = 2, 4 do enc:arg("factor", factor):dispatch() end
  s:sync()
  local want = {}
  for i = 1, 10 do want[i] = i <= 8 and 24.0 or 1.0 end
  t.equal(list(x:read()), list(want), "2 * 3 * 4 on the first 8")
  local st = enc:stats()
  t.equal(st.dispatches, 3, "dispatches")
  t.equal(st.args_bound, 5, "args_bound")
  t.equal(st.arg_errors, 0, "arg_errors")
  t.equal(st.rejected, 0, "rejected")
  t.equal(st.history_length, 3, "history_length")
  t.check(math.type(st.encode_ns) == "integer", "encode_ns")
  t.near(st.encode_ms, st.encode_ns / 1e6, "encode_ms")
  local h = enc:history()
  t.equal(#h, 3, "three records")
  t.equal(h[1].sequence, 3, "latest first")
  t.equal(h[3].sequence, 1, "oldest last")
  t.equal(h[1].kernel, "scale", "record kernel")
  t.equal(h[1].stream_id, s.id, "record stream")
  t.equal(h[1].dims, 1, "record dims")
  t.equal(list(h[1].grid), "10", "record grid")
  t.equal(h[1].group, nil, "engine chose the group")
  t.equal(h[1].status, "OK", "record status")
  t.equal(h[1].ok, true, "record ok")
  t.check(math.type(h[1].encode_ns) == "integer", "record encode_ns")
  -- dc.encoder(stream) is the same.
  local other <close> = dc.encoder(s)
  t.check(other.stream == s, "dc.encoder(stream)")
end

--===-- Vectors, 2-D grids, offsets, groups, local memory ---------------===--

do
  local s <close> = dev:stream()
  local out = dev:buffer("i32", 6)
  local enc <close> = s:encoder()
  enc:kernel(prog.add2):arg("out", out):arg(2, { 100, 7 })
  enc:grid(2, 3):offset(1, 0):validate():dispatch()
  s:sync()
  local want = {}
  for i = 0, 5 do want[i + 1] = 100 * 1 + 7 + i end
  t.equal(list(out:read()), list(want), "vector argument, 2-D grid, offset")
  enc:grid({ 2, 3 }):dispatch()            -- a new grid resets the offset
  s:sync()
  for i = 0, 5 do want[i + 1] = 7 + i end
  t.equal(list(out:read()), list(want), "offset back to 0")
  enc:offset({ 1, 0 }):offset(nil):dispatch()
  s:sync()
  t.equal(list(out:read()), list(want), "offset(nil) is 0")
  local ids = dev:buffer("i32", 8)
  enc:kernel(prog.group_ids):arg(1, ids):arg(2, dc.localmem(16))
  enc:grid(8):group(4):dispatch()
  s:sync()
  t.equal(list(ids:read()), "0,0,0,0,1,1,1,1", "group of 4, local memory")
  t.equal(list(enc:history()[1].group), "4", "record group")
  enc:arg("tmp", 16):group(nil):dispatch()     -- a byte count; engine group
  s:sync()
  -- Rebinding: set_stream sends later dispatches elsewhere.
  local s2 <close> = dev:stream()
  t.check(enc:set_stream(s2) == enc, "set_stream returns the encoder")
  t.check(enc.stream == s2, "enc.stream follows")
  ids:fill(-1)
  enc:dispatch()
  s2:sync()
  t.equal(enc:history()[1].stream_id, s2.id, "went to s2")
  t.check(ids[1] == 0, "ran on s2")
end

--===-- Errors name the kernel and the argument -------------------------===--

do
  local s <close> = dev:stream()
  local enc <close> = s:encoder()
  t.raises("FAILED_PRECONDITION", "encoder:arg: no kernel selected",
           enc.arg, enc, 1, 2)
  t.raises("FAILED_PRECONDITION", nil, enc.grid, enc, 4)
  t.raises("FAILED_PRECONDITION", "encoder:group: no kernel selected",
           enc.group, enc, 4)
  t.raises("FAILED_PRECONDITION", nil, enc.validate, enc)
  t.raises("FAILED_PRECONDITION", nil, enc.dispatch, enc)
  t.raises(nil, "dc.kernel expected", enc.kernel, enc, "scale")
  enc:kernel(prog.scale)
  local x = dev:buffer("f32", 4)
  local ints = dev:buffer("i32", 4)
  local e = t.raises("INVALID_ARGUMENT",
                     "scale: argument 2 (factor) expects float, got a string",
                     enc.arg, enc, "factor", "big")
  t.equal(e.kernel, "scale", "error.kernel")
  t.raises("INVALID_ARGUMENT",
           "scale: argument 1 (x) expects a dc.buffer of f32, got a " ..
           "dc.buffer of i32", enc.arg, enc, 1, ints)
  t.raises("INVALID_ARGUMENT", "scale: argument 3 (n) expects uint, got -1",
           enc.arg, enc, "n", -1)
  e = t.raises("NOT_FOUND", "encoder:arg: kernel 'scale' has no argument " ..
               "'size' (arguments: x, factor, n)", enc.arg, enc, "size", 1)
  t.equal(e.kernel, "scale", "not found names the kernel")
  t.raises("OUT_OF_RANGE", "kernel 'scale' has 3 argument(s) (x, factor, " ..
           "n); there is no argument 4", enc.arg, enc, 4, 1)
  t.raises("OUT_OF_RANGE", "there is no argument 0", enc.arg, enc, 0, 1)
  t.raises(nil, "bad argument #3", enc.arg, enc, 1)
  t.equal(enc:stats().arg_errors, 6, "every refused binding is counted")
  t.equal(enc:stats().args_bound, 0, "nothing bound")
  -- Missing arguments and grid: validate and dispatch say what is missing.
  t.raises("FAILED_PRECONDITION", "no grid set", enc.group, enc, 2)
  enc:grid(4)
  e = t.raises("FAILED_PRECONDITION", "arguments not bound: x, factor, n",
               enc.validate, enc)
  t.equal(e.kernel, "scale", "validate names the kernel")
  enc:arg(1, x):arg(2, 2)
  t.raises("FAILED_PRECONDITION", "arguments not bound: n",
           enc.dispatch, enc)
  enc:arg(3, 4)
  t.raises("INVALID_ARGUMENT", nil, function() enc:group(3):validate() end)
  t.raises("INVALID_ARGUMENT", nil, enc.dispatch, enc)  -- 3 does not divide 4
  local h = enc:history()
  t.equal(h[1].ok, false, "refused dispatch in the history")
  t.equal(h[1].status, "INVALID_ARGUMENT", "its status")
  t.equal(h[2].status, "FAILED_PRECONDITION", "the one before")
  t.equal(enc:stats().rejected, 3, "rejected dispatches (no kernel, n, group)")
  enc:group(nil):validate()
  -- Geometry errors.
  t.raises(nil, "encoder:grid takes 1 to 3 sizes", enc.grid, enc)
  t.raises(nil, "encoder:grid takes 1 to 3 sizes", enc.grid, enc, 1, 2, 3, 4)
  t.raises(nil, "encoder:grid takes 1 to 3 sizes", enc.grid, enc, {})
  t.raises(nil, "size 1 must be an integer >= 1", enc.grid, enc, 0)
  t.raises(nil, "size 2 must be an integer >= 1", enc.grid, enc, { 2, 1.5 })
  t.raises(nil, "encoder:group has 2 dimension(s) but the grid has 1",
           enc.group, enc, 2, 2)
  t.raises(nil, "size 1 must be an integer >= 0", enc.offset, enc, -1)
  enc:offset(0):offset({ 1 }):offset(nil)
  -- A refused call changes nothing: the encoder still dispatches.
  x:fill(1)
  enc:dispatch()
  s:sync()
  t.equal(list(x:read()), "2.0,2.0,2.0,2.0", "still dispatches")
  -- Selecting a kernel clears the bindings and the grid.
  enc:kernel(prog.scale)
  t.raises("FAILED_PRECONDITION", "no grid set", enc.group, enc, 2)
  t.raises("FAILED_PRECONDITION", "no grid", enc.validate, enc)
  enc:grid(4)
  t.raises("FAILED_PRECONDITION", "arguments not bound: x, factor, n",
           enc.validate, enc)
end

-- A closed stream: the encoder keeps its own reference.
do
  local s = dev:stream()
  local enc = s:encoder()
  s:close()
  enc:kernel(prog.scale)              -- the encoder holds its own stream
  t.raises(nil, "attempt to use a closed dc.stream", enc.set_stream, enc, s)
  t.raises(nil, "attempt to use a closed dc.stream", dc.encoder, s)
  t.raises(nil, "dc.stream expected", dc.encoder, 1)
  enc:close()
  enc:close()
  t.raises(nil, "attempt to use a closed dc.encoder", enc.grid, enc, 1)
  t.equal(tostring(enc), "dc.encoder (closed)", "tostring(closed)")
end

--===-- Lifetime: the encoder keeps what it binds ------------------------===--

do
  local s <close> = dev:stream()
  local enc = s:encoder()
  enc:kernel(prog.scale)
  do
    local tmp = dev:buffer("f32", 4)
    tmp:fill(3)
    enc:arg(1, tmp):arg(2, 2):arg(3, 4):grid(4)
  end
  collectgarbage()
  enc:dispatch()
  local f = s:read(dev:buffer("f32", 1))   -- only to have work after it
  s:sync()
  f:get()
  enc = nil
  collectgarbage()                         -- destroys the encoder
end

print("test_encoder: ok")

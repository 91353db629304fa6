-- test_kernel.lua: programs, kernels, argument conversion, launch shapes,
-- synchronous dispatch and the built-ins, checked against values computed
-- in Lua.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

local function read(buf) return buf:read() end

--===-- Compiling and reflection ----------------------------------------===--

local prog = dev:compile([[
  __kernel void blur_h(__global const float* in, __global float* out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    int l = max(x - 1, 0), r = min(x + 1, w - 1);
    out[y * w + x] = (in[y * w + l] + in[y * w + x] + in[y * w + r]) / 3.0f;
  }
  __kernel void ids(__global int* out) {
    out[get_global_id(0)] = (int)get_global_id(0);
  }
  __kernel __attribute__((reqd_work_group_size(4, 1, 1)))
  void group_sum(__global const float* in, __global float* out,
                 __local float* tmp) {
    __local float total[1];
    size_t l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
      total[0] = 0.0f;
      for (size_t i = 0; i < get_local_size(0); ++i) total[0] += tmp[i];
      out[get_group_id(0)] = total[0];
    }
  }
]], { name = "main.cl" })

t.equal(#prog, 3, "#prog")
local names = prog:kernels()
t.equal(table.concat(names, ","), "blur_h,ids,group_sum", "kernels()")
t.equal(type(prog.build_log), "string", "build_log")
t.check(prog.device == dev, "prog.device")
t.check(prog.blur_h == prog.blur_h, "kernels are cached")
t.check(prog[1] == prog.blur_h and prog[3] == prog.group_sum, "prog[i]")
t.equal(prog[4], nil, "prog[4]")
t.equal(prog[0], nil, "prog[0]")
local seen = {}
for i, k in ipairs(prog) do seen[i] = k.name end
t.equal(table.concat(seen, ","), "blur_h,ids,group_sum", "ipairs(prog)")
t.check(prog:kernel("ids") == prog.ids, "prog:kernel")
t.equal(tostring(prog), "dc.program: 3 kernels (blur_h, ids, group_sum)",
        "tostring(prog)")
t.equal(tostring(prog.blur_h), "dc.kernel: blur_h(in, out, w)",
        "tostring(kernel)")
t.equal(prog.blur_h.name, "blur_h", "k.name")
t.check(prog.blur_h.program == prog, "k.program")
t.equal(prog.blur_h.nothing, nil, "unknown kernel field")
t.equal(#prog.blur_h, 3, "#k")
t.equal(prog.blur_h:arg_index("w"), 3, "arg_index")

local err = t.raises("NOT_FOUND", "has no kernel 'nope' (kernels: blur_h, ids, group_sum)",
                     function() return prog.nope end)
t.equal(err.kernel, "nope", "err.kernel")
t.raises("NOT_FOUND", "has no kernel 'nope'", prog.kernel, prog, "nope")
t.raises(nil, "string expected, got table", prog.kernel, prog, {})
t.raises("NOT_FOUND", "has no argument 'h' (arguments: in, out, w)",
         prog.blur_h.arg_index, prog.blur_h, "h")

local info = prog.blur_h:info()
t.equal(info.name, "blur_h", "info.name")
t.equal(#info.args, 3, "#info.args")
t.equal(info.uses_barrier, false, "uses_barrier")
t.equal(info.uses_grid_sync, false, "uses_grid_sync")
t.equal(info.execution, "loop", "execution")
t.equal(info.required_group_size, nil, "no required_group_size")
local a1, a2, a3 = info.args[1], info.args[2], info.args[3]
t.equal(a1.name, "in", "arg1 name")
t.equal(a1.kind, "buffer", "arg1 kind")
t.equal(a1.address_space, "global", "arg1 space")
t.equal(a1.dtype, "f32", "arg1 dtype")
t.equal(a1.const, true, "arg1 const")
t.equal(a1.write_only, false, "arg1 write_only")
t.equal(a1.type, "__global const float*", "arg1 type")
t.equal(a2.write_only, true, "arg2 write_only")
t.equal(a2.const, false, "arg2 const")
t.equal(a3.kind, "scalar", "arg3 kind")
t.equal(a3.dtype, "i32", "arg3 dtype")
t.equal(a3.size, 4, "arg3 size")
t.equal(a3.vector_width, 1, "arg3 width")
t.equal(a3.type, "int", "arg3 type")

local ginfo = prog.group_sum:info()
t.equal(ginfo.uses_barrier, true, "group_sum uses_barrier")
t.equal(table.concat(ginfo.required_group_size, ","), "4,1,1",
        "required_group_size")
t.check(ginfo.static_local_size >= 4, "static_local_size")
t.check(ginfo.max_group_size >= 4 and
        ginfo.max_group_size <= dev:info().max_work_group_size,
        "max_group_size within the device's")
t.equal(ginfo.args[3].kind, "local", "local kind")
t.equal(ginfo.args[3].address_space, "local", "local space")

--===-- Synchronous dispatch --------------------------------------------===--

local w, h = 5, 3
local pixels = {}
for i = 1, w * h do pixels[i] = (i * 7) % 11 end
local src = dev:buffer("f32", pixels)
local dst = dev:buffer("f32", w * h)
t.check(prog.blur_h({ grid = { w, h } }, src, dst, w) == prog.blur_h,
        "k(...) returns k")
local out = read(dst)
for y = 0, h - 1 do
  for x = 0, w - 1 do
    local l, r = math.max(x - 1, 0), math.min(x + 1, w - 1)
    local want = (pixels[y * w + l + 1] + pixels[y * w + x + 1] +
                  pixels[y * w + r + 1]) / 3
    t.near(out[y * w + x + 1], want, ("blur %d,%d"):format(x, y), 1e-6)
  end
end

-- Group and offset: the offset shifts the global ids.
local idb = dev:buffer("i32", 12)
t.check(prog.ids:dispatch({ grid = 8, group = 4, offset = { 4 } }, idb) ==
        prog.ids, "dispatch returns k")
local ids = read(idb)
for i = 5, 12 do t.equal(ids[i], i - 1, "ids[" .. i .. "]") end

-- __local arguments: dc.localmem or a plain byte count.
local vals = {}
for i = 1, 16 do vals[i] = i * 0.5 end
local vin = dev:buffer("f32", vals)
local sums = dev:buffer("f32", 4)
for _, scratch in ipairs({ dc.localmem(16), 16 }) do
  prog.group_sum({ grid = 16, group = 4 }, vin, sums, scratch)
  local s = read(sums)
  for g = 0, 3 do
    local want = 0
    for i = 1, 4 do want = want + vals[g * 4 + i] end
    t.near(s[g + 1], want, "group sum " .. g)
  end
end
t.equal(tostring(dc.localmem(64)), "dc.localmem(64)", "tostring(localmem)")
t.equal(dc.localmem(64).bytes, 64, "localmem.bytes")
t.raises(nil, "positive byte count", dc.localmem, 0)
t.raises(nil, "number expected", dc.localmem, "x")

-- A kernel outlives its program object.
do
  local p <close> = dev:compile(
    "__kernel void one(__global int* o) { o[get_global_id(0)] = 1; }")
  local k = p.one
  p:close()
  t.raises(nil, "attempt to use a closed dc.program", function() return p.one end)
  t.equal(tostring(p), "dc.program (closed)", "tostring closed program")
  local ob = dev:buffer("i32", 3)
  k({ grid = 3 }, ob)
  t.equal(table.concat(read(ob), ","), "1,1,1", "kernel after program close")
  k:close()
  t.equal(tostring(k), "dc.kernel (closed)", "tostring closed kernel")
  t.raises(nil, "attempt to use a closed dc.kernel", k, { grid = 3 }, ob)
  t.raises(nil, "attempt to use a closed dc.kernel", k.info, k)
end

-- Closing a cached kernel: the program makes a new one.
do
  local p = dev:compile(
    "__kernel void two(__global int* o) { o[get_global_id(0)] = 2; }")
  local k = p.two
  k:close()
  local k2 = p.two
  t.check(k2 ~= k, "a closed cached kernel is made again")
  local ob = dev:buffer("i32", 2)
  k2({ grid = 2 }, ob)
  t.equal(table.concat(read(ob), ","), "2,2", "remade kernel runs")
end

--===-- Vectors, integer types and defines ------------------------------===--

local vprog = dev:compile([[
  __kernel void vec(__global float* out, float4 v, int2 p) {
    out[0] = v.x; out[1] = v.y; out[2] = v.z; out[3] = v.w;
    out[4] = (float)p.x; out[5] = (float)p.y;
  }
  __kernel void ints(__global long* out, char c, uchar uc, short s,
                     ushort us, int i, uint u, long l, ulong ul) {
    out[0] = c; out[1] = uc; out[2] = s; out[3] = us; out[4] = i;
    out[5] = (long)u; out[6] = l; out[7] = ul == 9223372036854775808UL;
  }
  __kernel void reals(__global double* out, float f, double d) {
    out[0] = f; out[1] = d;
  }
]])
local vb = dev:buffer("f32", 6)
vprog.vec({ grid = 1 }, vb, { 1.5, -2, 3.25, 4 }, { 7, -8 })
t.equal(table.concat(read(vb), ","), "1.5,-2.0,3.25,4.0,7.0,-8.0", "vectors")

local lb = dev:buffer("i64", 8)
vprog.ints({ grid = 1 }, lb, -128, 255, -32768, 65535, -2147483648,
           4294967295, math.mininteger, 2.0^63)
local li = read(lb)
local want_ints = { -128, 255, -32768, 65535, -2147483648, 4294967295,
                    math.mininteger, 1 }
for i = 1, 8 do t.equal(li[i], want_ints[i], "int arg " .. i) end
-- Booleans pass as 1 and 0 to integer arguments; integral floats pass.
vprog.ints({ grid = 1 }, lb, true, false, 3.0, 0, 0, 0, 0, 0)
li = read(lb)
t.equal(li[1], 1, "true -> 1")
t.equal(li[2], 0, "false -> 0")
t.equal(li[3], 3, "3.0 -> 3")

local rb = dev:buffer("f64", 2)
vprog.reals({ grid = 1 }, rb, 0.5, 1 / 3)
local r = read(rb)
t.equal(r[1], 0.5, "float arg")
t.equal(r[2], 1 / 3, "double arg")
vprog.reals({ grid = 1 }, rb, math.huge, 2)  -- inf is a float, not a range error
t.equal(read(rb)[1], math.huge, "inf float")

local dprog = dev:compile([[
  __kernel void k(__global float* out) {
  #ifdef OFF
    out[0] = -1.0f;
  #else
    out[0] = N * (FAST ? 2 : 1) + F + M + SCALE;
  #endif
  }
]], { defines = { N = 16, FAST = true, F = 0.25, OFF = false, SCALE = "100" },
      options = "-DM=3 -cl-fast-relaxed-math" })
local db = dev:buffer("f32", 1)
dprog.k({ grid = 1 }, db)
t.equal(read(db)[1], 16 * 2 + 0.25 + 3 + 100, "defines and options")

-- A float define stays a floating constant: 2.0 / 4 is 0.5, not 0.
local fprog = dev:compile(
  "__kernel void k(__global float* o) { o[0] = HALF_OF / 4; }",
  { defines = { HALF_OF = 2.0 } })
fprog.k({ grid = 1 }, db)
t.equal(read(db)[1], 0.5, "float define")

-- dc.compile on the default device and on opts.device.
local p1 = dc.compile("__kernel void k(__global float* o) { o[0] = 7.0f; }")
t.check(p1.device == dc.device(), "dc.compile default device")
local p2 = dc.compile("__kernel void k(__global float* o) { o[0] = 8.0f; }",
                      { device = "cpu", name = "eight" })
t.check(p2.device == dev, "dc.compile opts.device")
p2.k({ grid = 1 }, db)
t.equal(read(db)[1], 8, "dc.compile result")

-- Names have no length limit: a kernel named with 400 characters.
local long_name = ("k"):rep(400)
local pl = dev:compile("__kernel void " .. long_name ..
                       "(__global float* o) { o[0] = 3.0f; }")
pl[long_name]({ grid = 1 }, db)
t.equal(read(db)[1], 3, "a kernel with a 400-character name")

--===-- Compile errors and options errors -------------------------------===--

err = t.raises("COMPILE", "bad.cl:3:10: error:", dev.compile, dev,
               "__kernel void k(__global float* a) {\n  a[0] = 1.0f;\n  a[1] = b;\n}",
               { name = "bad.cl" })
t.check(err.message:find("use of undeclared identifier 'b'", 1, true),
        "compile message")
t.raises("COMPILE", "program:1:", dc.compile, "__kernel int k() { return 1; }")
t.raises("COMPILE", "unknown build option '-foo'", dev.compile, dev,
         "__kernel void k(__global float* a) {}", { options = "-foo" })
t.raises("INVALID_ARGUMENT", nil, dev.compile, dev, "")
t.raises(nil, "string expected, got number", dev.compile, dev, 42)
t.raises(nil, "unknown option 'defiens' (expected defines, options, name)",
         dev.compile, dev, "x", { defiens = {} })
t.raises(nil, "unknown option 'device'", dev.compile, dev, "x",
         { device = "cpu" })
t.raises(nil, "option 'defines' must be a table, got string", dev.compile,
         dev, "x", { defines = "N=1" })
t.raises(nil, "option 'options' must be a string, got number", dev.compile,
         dev, "x", { options = 1 })
t.raises(nil, "defines: keys must be macro names", dev.compile, dev, "x",
         { defines = { ["A-B"] = 1 } })
t.raises(nil, "defines: keys must be macro names", dev.compile, dev, "x",
         { defines = { 5 } })
t.raises(nil, "defines.X: a value may not be empty or contain spaces",
         dev.compile, dev, "x", { defines = { X = "1 + 2" } })
t.raises(nil, "defines.X: expected a number, string or boolean, got table",
         dev.compile, dev, "x", { defines = { X = {} } })
t.raises(nil, "defines.X: expected a number, string or boolean, got number",
         dev.compile, dev, "x", { defines = { X = 0 / 0 } })
t.raises(nil, "table expected", dev.compile, dev, "x", 5)
t.raises("NOT_FOUND", "no device", dc.compile, "x", { device = "cuda:9" })

-- compile_file: messages keep the file's name, line and column.
local path = t.write_file(os.tmpname(),
  "__kernel void k(__global float* a) {\n  a[0] = 2.0f\n}\n")
t.raises("COMPILE", path .. ":3:", dev.compile_file, dev, path)
t.write_file(path, "__kernel void k(__global float* a) { a[0] = V; }\n")
local fp = dev:compile_file(path, { defines = { V = 9 } })
fp.k({ grid = 1 }, db)
t.equal(read(db)[1], 9, "compile_file")
t.equal(#dc.compile_file(path, { defines = { V = 1 }, device = dev }), 1,
        "dc.compile_file")
t.write_file(path, "__kernel void k(__global float* a) { a[0] = V }\n")
t.raises("COMPILE", "renamed.cl:1:", dev.compile_file, dev, path,
         { name = "renamed.cl", defines = { V = 1 } })
os.remove(path)
t.raises("NOT_FOUND", "compile_file: cannot read '" .. path .. "'",
         dev.compile_file, dev, path)
t.raises("INVALID_ARGUMENT", "Is a directory", dev.compile_file, dev, "/tmp")

--===-- Argument errors -------------------------------------------------===--

local function bad(pattern, fn, ...)
  local e = t.raises("INVALID_ARGUMENT", pattern, fn, ...)
  t.check(e.kernel ~= nil, "error has a kernel field: " .. pattern)
  return e
end

-- The vision's message, exactly.
local ok, e = pcall(function() prog.blur_h { grid = { w, h } } end)
t.equal(ok, false, "no arguments fails")
t.equal(e.code, "INVALID_ARGUMENT", "no arguments code")
t.equal(e.message, "blur_h: expected 3 arguments (in, out, w), got 0",
        "no arguments message")
t.equal(e.kernel, "blur_h", "no arguments kernel")

bad("blur_h: expected 3 arguments (in, out, w), got 4", prog.blur_h,
    { grid = 1 }, src, dst, w, 1)
bad("ids: expected 1 argument (out), got 2", prog.ids, { grid = 1 }, idb, 1)
local noargs = dev:compile("__kernel void none() {}").none
noargs({ grid = 1 })
bad("none: expected no arguments, got 1", noargs, { grid = 1 }, 1)

bad("blur_h: argument 3 (w) expects int, got a string", prog.blur_h,
    { grid = 1 }, src, dst, "5")
bad("blur_h: argument 3 (w) expects int, got nil", prog.blur_h,
    { grid = 1 }, src, dst, nil)
bad("blur_h: argument 3 (w) expects int, got 2.5 (not an integer)",
    prog.blur_h, { grid = 1 }, src, dst, 2.5)
bad("argument 3 (w) expects int, got 2147483648 (out of range)", prog.blur_h,
    { grid = 1 }, src, dst, 2147483648)
bad("argument 3 (w) expects int, got inf (not an integer)", prog.blur_h,
    { grid = 1 }, src, dst, math.huge)
bad("blur_h: argument 1 (in) expects a dc.buffer, got a table", prog.blur_h,
    { grid = 1 }, {}, dst, w)
bad("blur_h: argument 2 (out) expects a dc.buffer, got 7", prog.blur_h,
    { grid = 1 }, src, 7, w)
bad("blur_h: argument 1 (in) expects a dc.buffer, got a dc.kernel",
    prog.blur_h, { grid = 1 }, prog.ids, dst, w)
bad("blur_h: argument 1 (in) expects a dc.buffer of f32, got a dc.buffer of i32",
    prog.blur_h, { grid = 1 }, idb, dst, w)
do
  local closed = dev:buffer("f32", 4)
  closed:close()
  bad("blur_h: argument 2 (out) is a closed dc.buffer", prog.blur_h,
      { grid = 1 }, src, closed, w)
end
bad("argument 2 (v) expects float4 (a table of 4 numbers), got a table of 3",
    vprog.vec, { grid = 1 }, vb, { 1, 2, 3 }, { 1, 2 })
bad("argument 2 (v) expects float4 (a table of 4 numbers), got 1",
    vprog.vec, { grid = 1 }, vb, 1, { 1, 2 })
bad("argument 2 (v) element 3 expects float, got a string",
    vprog.vec, { grid = 1 }, vb, { 1, 2, "3", 4 }, { 1, 2 })
bad("argument 3 (p) element 2 expects int, got 0.5 (not an integer)",
    vprog.vec, { grid = 1 }, vb, { 1, 2, 3, 4 }, { 1, 0.5 })
bad("argument 2 (c) expects char, got 128 (out of range)", vprog.ints,
    { grid = 1 }, lb, 128, 0, 0, 0, 0, 0, 0, 0)
bad("argument 3 (uc) expects uchar, got -1 (out of range)", vprog.ints,
    { grid = 1 }, lb, 0, -1, 0, 0, 0, 0, 0, 0)
bad("argument 4 (s) expects short, got 32768 (out of range)", vprog.ints,
    { grid = 1 }, lb, 0, 0, 32768, 0, 0, 0, 0, 0)
bad("argument 5 (us) expects ushort, got 65536 (out of range)", vprog.ints,
    { grid = 1 }, lb, 0, 0, 0, 65536, 0, 0, 0, 0)
bad("argument 7 (u) expects uint, got 4294967296 (out of range)", vprog.ints,
    { grid = 1 }, lb, 0, 0, 0, 0, 0, 4294967296, 0, 0)
bad("argument 8 (l) expects long, got 9.2233720368547758e+18 (out of range)",
    vprog.ints, { grid = 1 }, lb, 0, 0, 0, 0, 0, 0, 2.0^63, 0)
bad("argument 9 (ul) expects ulong, got -1 (out of range)", vprog.ints,
    { grid = 1 }, lb, 0, 0, 0, 0, 0, 0, 0, -1)
bad("argument 9 (ul) expects ulong, got 1.8446744073709552e+19 (out of range)",
    vprog.ints, { grid = 1 }, lb, 0, 0, 0, 0, 0, 0, 0, 2.0^64)
bad("argument 2 (f) expects float, got 1e+39 (out of range)", vprog.reals,
    { grid = 1 }, rb, 1e39, 0)
bad("argument 2 (f) expects float, got a boolean", vprog.reals,
    { grid = 1 }, rb, true, 0)
bad("argument 3 (tmp) is __local: expects dc.localmem(bytes) or a positive "
    .. "byte count, got 0", prog.group_sum, { grid = 4 }, vin, sums, 0)
bad("argument 3 (tmp) is __local: expects dc.localmem(bytes) or a positive "
    .. "byte count, got a string", prog.group_sum, { grid = 4 }, vin, sums, "16")

-- Errors the core finds: a group size the kernel does not allow.
e = bad("requires work-groups of 4x1x1", prog.group_sum,
        { grid = 16, group = 8 }, vin, sums, 32)
t.equal(e.kernel, "group_sum", "core error kernel field")
bad("needs", prog.group_sum, { grid = 16, group = 4 }, vin, sums,
    dev.local_memory_size + 1)

--===-- Launch shapes ---------------------------------------------------===--

local k = prog.ids
bad("ids: expected a launch table ({ grid = ... }), got 8", k, 8, idb)
bad("ids: expected a launch table ({ grid = ... }), got nil", k)
bad("ids: launch.grid is missing", k, {}, idb)
bad("ids: launch.grid is missing", k, { group = 4 }, idb)
bad("ids: launch table: unknown field 'grp' (expected grid, group, offset)",
    k, { grid = 4, grp = 4 }, idb)
bad("ids: launch table: unknown field 1 (expected grid, group, offset)",
    k, { 4, grid = 4 }, idb)
bad("ids: launch.grid must be a positive integer, got 0", k, { grid = 0 }, idb)
bad("ids: launch.grid[2] must be a positive integer, got -1", k,
    { grid = { 4, -1 } }, idb)
bad("ids: launch.grid[1] must be a positive integer, got 1.5", k,
    { grid = { 1.5 } }, idb)
bad("ids: launch.grid[1] must be a positive integer, got a string", k,
    { grid = { "4" } }, idb)
bad("ids: launch.grid has 4 dimensions (1 to 3 allowed)", k,
    { grid = { 1, 1, 1, 1 } }, idb)
bad("ids: launch.grid has 0 dimensions (1 to 3 allowed)", k, { grid = {} },
    idb)
bad("ids: launch.grid must be a count or a table of 1 to 3 counts, got a string",
    k, { grid = "4" }, idb)
bad("ids: launch.group must be a positive integer, got 0", k,
    { grid = 4, group = 0 }, idb)
bad("ids: launch.group has 2 dimensions but launch.grid has 1", k,
    { grid = 4, group = { 2, 1 } }, idb)
bad("ids: launch.offset has 1 dimension but launch.grid has 2", k,
    { grid = { 2, 2 }, offset = 1 }, idb)
bad("ids: launch.offset must be a non-negative integer, got -1", k,
    { grid = 4, offset = -1 }, idb)
bad("ids: launch.grid[1] = 6 is not a multiple of launch.group[1] = 4", k,
    { grid = 6, group = 4 }, idb)
k({ grid = 4, offset = 0 }, idb)  -- a zero offset is fine
local tuned = k:tuned_group_size(8)
t.check(tuned == nil or #tuned == 1, "tuned_group_size")
bad("ids: launch.grid must be a positive integer, got 0",
    k.tuned_group_size, k, 0)
t.raises(nil, "dc.kernel expected", prog.ids.dispatch, {}, { grid = 1 })

--===-- More than 16 arguments ------------------------------------------===--

do
  local params, terms = {}, {}
  for i = 1, 20 do
    params[i] = "int a" .. i
    terms[i] = "a" .. i .. " * " .. i
  end
  local many = dev:compile(("__kernel void many(__global int* o, %s) {\n" ..
                            "  o[0] = %s;\n}"):format(table.concat(params, ", "),
                                                     table.concat(terms, " + ")))
  local mb = dev:buffer("i32", 1)
  local args, want = {}, 0
  for i = 1, 20 do
    args[i] = i + 1
    want = want + (i + 1) * i
  end
  many.many({ grid = 1 }, mb, table.unpack(args))
  t.equal(read(mb)[1], want, "21 arguments")
  args[20] = "x"
  bad("many: argument 21 (a20) expects int, got a string", many.many,
      { grid = 1 }, mb, table.unpack(args))
  bad("many: expected 21 arguments", many.many, { grid = 1 }, mb, 1)
end

--===-- Built-ins -------------------------------------------------------===--

local n = 10
local av, bv = {}, {}
for i = 1, n do av[i], bv[i] = i * 0.5, i - 4 end
local ab, bb, cb = dev:buffer("f32", av), dev:buffer("f32", bv),
                   dev:buffer("f32", n)
local add = dev:builtin("add")
t.equal(tostring(add), "dc.kernel: add(a, b, out, n)", "builtin add")
t.equal(add.program, nil, "a built-in has no program object")
add({ grid = (n + 3) // 4 }, ab, bb, cb, n)  -- 4 elements a work-item
local c = read(cb)
for i = 1, n do t.near(c[i], av[i] + bv[i], "add " .. i) end
dev:builtin("relu")({ grid = n }, bb, cb, n)
c = read(cb)
for i = 1, n do t.near(c[i], math.max(bv[i], 0), "relu " .. i) end
t.raises("NOT_FOUND", "no built-in kernel 'nope' (built-in kernels: add, mul",
         dev.builtin, dev, "nope")

-- dc.matmul: A is m x kk, B is kk x nn, all row-major.
local m, nn, kk = 3, 4, 5
local A, B = {}, {}
for i = 1, m * kk do A[i] = (i % 7) - 3 end
for i = 1, kk * nn do B[i] = (i % 5) * 0.5 end
local Ab, Bb, Cb = dev:buffer("f32", A), dev:buffer("f32", B),
                   dev:buffer("f32", m * nn)
t.check(dc.matmul(Ab, Bb, Cb, m, nn, kk) == Cb, "matmul returns c")
local C = read(Cb)
for i = 0, m - 1 do
  for j = 0, nn - 1 do
    local want = 0
    for x = 0, kk - 1 do want = want + A[i * kk + x + 1] * B[x * nn + j + 1] end
    t.near(C[i * nn + j + 1], want, ("C[%d][%d]"):format(i, j), 1e-5)
  end
end
local backend = dc.matmul_backend()
t.check(backend == "openblas" or backend == "kernel", "matmul_backend")
t.equal(dc.matmul_backend(dev), backend, "matmul_backend(dev)")
t.raises(nil, "must be a positive integer", dc.matmul, Ab, Bb, Cb, 0, nn, kk)
t.raises(nil, "dc.buffer expected", dc.matmul, Ab, 1, Cb, m, nn, kk)
e = t.raises("INVALID_ARGUMENT", nil, dc.matmul, Ab, Bb, Cb, m, nn, kk + 100)
t.equal(e.op, "matmul", "matmul error op")
t.raises("INVALID_ARGUMENT", nil, dc.matmul, Ab, Bb, idb, 1, 1, 1)

local total = 0
for i = 1, n do total = total + av[i] end
t.near(dc.sum(ab), total, "dc.sum")
t.near(dc.sum(ab, 3), av[1] + av[2] + av[3], "dc.sum(count)")
t.raises(nil, "must be a positive integer", dc.sum, ab, 0)
e = t.raises("INVALID_ARGUMENT", nil, dc.sum, ab, n + 1)
t.equal(e.op, "sum", "sum error op")
t.raises("INVALID_ARGUMENT", nil, dc.sum, idb)

--===-- Lifecycle and collection -----------------------------------------===--

do
  local kept
  for i = 1, 20 do
    local p <close> = dev:compile(
      "__kernel void g(__global int* o, int v) { o[0] = v; }")
    kept = p.g
  end
  collectgarbage()
  collectgarbage()
  local ob = dev:buffer("i32", 1)
  kept({ grid = 1 }, ob, 5)
  t.equal(read(ob)[1], 5, "kernel kept past collection")
  for i = 1, 20 do local _ = dev:compile("__kernel void g(__global int* o) {}").g end
  collectgarbage()
end

--===-- Callbacks during a dispatch ------------------------------------===--

-- A Lua callback that runs while k(...) waits may close a buffer the
-- kernel uses: the dispatch holds it until it returns.
do
  local slow = dc.compile([[
    __kernel void slow(__global float* a, int n) {
      size_t i = get_global_id(0);
      float x = a[i];
      for (int j = 0; j < n; ++j) x = x * 0.5f + 1.0f;
      a[i] = x;
    }
  ]]).slow
  collectgarbage()
  collectgarbage()
  local before = dc.live_buffers()
  local s <close> = dev:stream()
  local b = dev:buffer("f32", 1 << 14)
  local ran = false
  s:host(function() ran = true; b:close(); collectgarbage() end)
  local t0 = os.clock()
  while os.clock() - t0 < 0.05 do end  -- let the stream post its call
  slow({ grid = 1 << 14 }, b, 200)
  t.check(ran, "the host function ran during the dispatch")
  t.equal(tostring(b), "dc.buffer (closed)", "closed by the callback")
  s:sync()
  t.equal(dc.live_buffers(), before, "the hold released the buffer")

  -- A posted callback that raises: the error comes out of k(...), and the
  -- hold is still released.
  local b2 = dev:buffer("f32", 64)
  local ev = s:record()
  ev:wait()
  ev:on_complete(function() error("boom from a callback") end)
  t.raises(nil, "boom from a callback", slow, { grid = 64 }, b2, 1)
  b2:close()
  t.equal(dc.live_buffers(), before, "released after a raising callback")
end

print("kernel: ok")

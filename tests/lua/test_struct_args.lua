-- test_struct_args.lua: structs, unions and enums passed by value: their
-- reflection in k:info(), the table form (members by name, nested tables,
-- sequences for arrays, tables for vectors, missing members zero) and the
-- string form (exactly the reflected bytes, e.g. from string.pack), on
-- every path that takes arguments (k(...), streams, graphs and their
-- instances, the encoder), and the errors that name the member.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

local prog = dev:compile([[
  typedef struct { short lo, hi; } range_t;
  typedef struct {
    float scale;
    int n;
    float4 shift;
    range_t ranges[2];
    uchar flags[3];
  } params_t;
  typedef union { float f; uint u; } bits_t;
  typedef enum { ADD, MUL = 3 } op_t;
  struct big { double w[20]; int k; };

  __kernel void apply(__global float* out, params_t p, op_t op) {
    int i = (int)get_global_id(0);
    float x = op == MUL ? p.scale * i : p.scale + i;
    out[i] = i < p.n ? x + p.shift.y + p.ranges[1].hi + p.flags[2] : -1.0f;
  }
  __kernel void bits(__global uint* out, bits_t b) {
    out[get_global_id(0)] = b.u;
  }
  __kernel void weigh(__global double* out, struct big b) {
    size_t i = get_global_id(0);
    out[i] = b.w[i] * b.k;
  }
]], { name = "structs.cl" })

--===-- Reflection ------------------------------------------------------===--

local info = prog.apply:info()
local p = info.args[2]
t.equal(p.kind, "record", "kind")
t.equal(p.type, "params_t", "type")
t.equal(p.size, 48, "size")  -- 43 bytes of members, aligned to 16
t.equal(p.align, 16, "align")
t.equal(p.union, false, "union")
t.equal(#p.fields, 5, "#fields")
local want = {
  { "scale", "float", 0, 4, "f32", 1 },
  { "n", "int", 4, 4, "i32", 1 },
  { "shift", "float4", 16, 16, "f32", 4 },
  { "ranges", "range_t[2]", 32, 8, nil, 1, 2 },
  { "flags", "uchar[3]", 40, 3, "u8", 1, 3 },
}
for i, w in ipairs(want) do
  local f = p.fields[i]
  t.equal(f.name, w[1], "field " .. i .. " name")
  t.equal(f.type, w[2], w[1] .. " type")
  t.equal(f.offset, w[3], w[1] .. " offset")
  t.equal(f.size, w[4], w[1] .. " size")
  t.equal(f.dtype, w[5], w[1] .. " dtype")
  t.equal(f.vector_width, w[6], w[1] .. " vector_width")
  t.equal(f.array_length, w[7], w[1] .. " array_length")
end
local ranges = p.fields[4]
t.equal(#ranges.fields, 2, "nested fields")
t.equal(ranges.fields[2].name, "hi", "nested name")
t.equal(ranges.fields[2].offset, 2, "nested offset")
t.equal(info.args[3].kind, "scalar", "an enum is a scalar")
t.equal(info.args[3].dtype, "i32", "an enum is an int")
t.equal(info.args[3].type, "op_t", "enum type")
t.equal(prog.bits:info().args[2].union, true, "a union")

--===-- The table form --------------------------------------------------===--

local out = dev:buffer("f32", 4)
local params = {
  scale = 2, n = 3, shift = { 0, 10, 0, 0 },
  ranges = { { lo = 1, hi = 2 }, { hi = 100 } }, flags = { 0, 0, 5 },
}
prog.apply({ grid = 4 }, out, params, 3)   -- MUL
t.equal(table.concat(out:read(), " "), "115.0 117.0 119.0 -1.0", "table form")
prog.apply({ grid = 4 }, out, { n = 4 }, 0)  -- the rest zero; ADD
t.equal(table.concat(out:read(), " "), "0.0 1.0 2.0 3.0", "missing are zero")

--===-- The string form -------------------------------------------------===--

-- scale, n, 8 bytes of padding, shift, ranges, flags, 5 bytes of padding
-- (string.pack's "x" is one byte of padding).
local function pad(n) return ("x"):rep(n) end
local bytes = string.pack("<fi4 " .. pad(8) .. " ffff hhhh BBB " .. pad(5),
                          1, 2, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0)
t.equal(#bytes, 48, "the packed string")
prog.apply({ grid = 4 }, out, bytes, 0)
t.equal(table.concat(out:read(), " "), "8.0 9.0 -1.0 -1.0", "string form")
local u = dev:buffer("u32", 2)
prog.bits({ grid = 2 }, u, { f = 1.0 })
t.equal(u[1], 0x3f800000, "a union member")
prog.bits({ grid = 2 }, u, string.pack("<I4", 42))
t.equal(u[2], 42, "a union's bytes")

--===-- Large structs on every path -------------------------------------===--

-- 168 bytes: more than a dc_arg_t holds inline.
local w = {}
for i = 1, 20 do w[i] = i end
local wout = dev:buffer("f64", 4)
local function weighed(k)
  local r = wout:read()
  for i = 1, 4 do t.equal(r[i], i * k, ("w[%d] with k = %d"):format(i, k)) end
end
prog.weigh({ grid = 4 }, wout, { w = w, k = 2 })
weighed(2)

local s = dev:stream()
s:dispatch(prog.weigh, { grid = 4 }, wout, { w = w, k = 3 })
collectgarbage()
s:sync()
weighed(3)

local enc = s:encoder()
enc:kernel(prog.weigh):arg(1, wout):arg("b", { w = w, k = 4 }):grid(4)
collectgarbage()
enc:dispatch()
s:sync()
weighed(4)
t.raises("INVALID_ARGUMENT", "weigh: argument 2 (b) member 'k' expects int",
         enc.arg, enc, "b", { k = "x" })
enc:dispatch()  -- the refused binding kept the previous one
s:sync()
weighed(4)

local g = dc.graph()
g:dispatch("weigh", prog.weigh, { grid = 4 }, { wout, b = { w = w, k = 5 } })
g:run()
weighed(5)
local exec = g:instantiate()
exec:run()
weighed(5)
exec:set_arg("weigh", "b", { w = w, k = 6 })
collectgarbage()
exec:run()
weighed(6)
t.raises("INVALID_ARGUMENT", "got a string of 3 bytes",
         exec.set_arg, exec, "weigh", "b", "abc")

--===-- Errors ----------------------------------------------------------===--

local function refused(pattern, value)
  t.raises("INVALID_ARGUMENT", pattern, prog.apply, { grid = 4 }, out,
           value, 0)
end
refused("apply: argument 2 (p): params_t has no member 'bogus' (members: "
        .. "scale, n, shift, ranges, flags)", { scale = 1, bogus = 2 })
refused("apply: argument 2 (p) member 'ranges[2]': range_t has no member "
        .. "'mid' (members: lo, hi)", { ranges = { {}, { mid = 1 } } })
refused("apply: argument 2 (p) member 'scale' expects float, got a string",
        { scale = "x" })
refused("apply: argument 2 (p) member 'n' expects int, got 2.5 (not an "
        .. "integer)", { n = 2.5 })
refused("apply: argument 2 (p) member 'ranges[1].lo' expects short, got "
        .. "40000 (out of range)", { ranges = { { lo = 40000 }, {} } })
refused("apply: argument 2 (p) member 'shift' expects float4 (a table of 4 "
        .. "numbers), got a table of 3", { shift = { 1, 2, 3 } })
refused("apply: argument 2 (p) member 'shift[2]' expects float, got a "
        .. "boolean", { shift = { 1, true, 3, 4 } })
refused("apply: argument 2 (p) member 'flags' expects uchar[3] (a sequence "
        .. "of 3 elements), got a table of 4", { flags = { 1, 2, 3, 4 } })
refused("apply: argument 2 (p) member 'ranges[1]' expects range_t (a table "
        .. "of its members, or a string of 4 bytes), got 7",
        { ranges = { 7, {} } })
refused("apply: argument 2 (p) expects params_t (a table of its members, or "
        .. "a string of 48 bytes), got a string of 47 bytes",
        bytes:sub(2))
refused("apply: argument 2 (p) expects params_t (a table of its members, or "
        .. "a string of 48 bytes), got 5", 5)
refused("apply: argument 2 (p): params_t has no member 1 (members: ",
        { 1, 2 })
t.raises("INVALID_ARGUMENT", "bits: argument 2 (b): bits_t is a union: give "
         .. "one member", prog.bits, { grid = 1 }, u, { f = 1, u = 2 })

print("struct_args: ok")

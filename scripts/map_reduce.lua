-- map_reduce.lua: the sum of f(x) over N numbers, with f a C expression
-- given on the command line compiled into the kernel, and the sum a
-- parallel reduction in two passes.
--
--   dclua scripts/map_reduce.lua [options]
--   dclua scripts/map_reduce.lua --expr "exp(-x * x)" --count 1000000 --check
--
-- The input is --count numbers in [0, 1), generated on the device from
-- --seed. The first pass maps each through f and sums them in work-groups:
-- each work-item adds up a strided slice, then the group combines its
-- items with a tree in __local memory, one barrier per level, and writes
-- one partial sum. The second pass reduces the partial sums the same way
-- in one work-group. Both are dispatches of one graph, with retries, a
-- circuit breaker and a CPU fallback.
--
-- As a module (dofile or require), it runs nothing and returns a table:
--   local mr = dofile("scripts/map_reduce.lua")
--   local result = mr.run { expr = "x * x", count = 4096, check = true }
--   print(result.value)
-- SPDX-License-Identifier: MIT

-- The directory of this file, to load lib/ beside it (from arg[0] where
-- there is no debug library, as under dclua --sandbox).
local function script_dir()
  local source = debug and debug.getinfo(1, "S").source or ""
  local path = source:match("^@(.*)$") or (arg and arg[0]) or ""
  return path:match("^(.-)[^/]*$")
end
local options = dofile(script_dir() .. "lib/options.lua")
local common = dofile(script_dir() .. "lib/common.lua")
local dc = require("dc")

local M = {}

M.spec = common.spec({
  name = "map_reduce",
  usage = "dclua scripts/map_reduce.lua [options]",
  about = "Sums f(x) over N numbers in [0, 1): f is a C expression of the "
       .. "float x compiled\ninto the kernel; the sum is a work-group "
       .. "reduction in __local memory, then a\nfinal pass over the "
       .. "partial sums.",
}, {
  { name = "expr", type = "string", arg = "EXPR", default = "x * x",
    help = "f(x), a C expression of the float x (OpenCL C math: sqrt, exp, "
        .. "sin, fabs, ...)" },
  { name = "lua-expr", type = "string", arg = "EXPR",
    help = "f(x) in Lua, for --check (default: --expr, with 1.5f read as "
        .. "1.5 and C math names as math.*)" },
  { name = "count", type = "integer", arg = "N", default = 1 << 20, min = 1,
    max = 1 << 28, help = "number of elements" },
  { name = "group", type = "choice", arg = "G", default = 256,
    values = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024 },
    help = "work-group size, a power of two" },
  { name = "groups", type = "integer", arg = "N", min = 1, max = 1 << 20,
    help = "work-groups of the first pass (default: enough for one "
        .. "element per item, at most 1024)" },
  { name = "seed", type = "integer", arg = "N", default = 1, min = 0,
    max = 0xffffffff, help = "seed of the input numbers" },
}, { warmup = 1, runs = 3 })

-- The kernels; MAP(x) is defined in front of them from --expr. GROUP_SUM
-- is a macro rather than a function so that its barriers stay in the
-- kernel's body, where the CPU runs them as cheap regions.
local SOURCE = [[
  uint hash(uint x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU;
    return x ^ (x >> 16);
  }
  // x[i] = a number in [0, 1) with 16 random bits, the same on every device.
  __kernel void generate(__global float* x, uint seed) {
    uint i = (uint)get_global_id(0);
    x[i] = (float)(hash(i ^ hash(seed)) & 0xffffu) / 65536.0f;
  }

  // Leaves the sum of every item's |acc| in t[0], for the whole group.
  #define GROUP_SUM(t, acc)                                       \
    do {                                                          \
      size_t l_ = get_local_id(0);                                \
      t[l_] = (acc);                                              \
      barrier(CLK_LOCAL_MEM_FENCE);                               \
      for (size_t s_ = get_local_size(0) / 2; s_ > 0; s_ >>= 1) { \
        if (l_ < s_) t[l_] += t[l_ + s_];                         \
        barrier(CLK_LOCAL_MEM_FENCE);                             \
      }                                                           \
    } while (0)

  __kernel void map_sum(__global const float* in, __global float* partial,
                        uint n, __local float* t) {
    float acc = 0.0f;
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) {
      float x = in[i];
      acc += MAP(x);
    }
    GROUP_SUM(t, acc);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = t[0];
  }

  __kernel void final_sum(__global const float* partial, __global float* out,
                          uint n, __local float* t) {
    float acc = 0.0f;
    for (size_t i = get_local_id(0); i < n; i += get_local_size(0)) {
      acc += partial[i];
    }
    GROUP_SUM(t, acc);
    if (get_local_id(0) == 0) out[0] = t[0];
  }
]]

-- The source with MAP(x) defined as |expr|, which must be one expression:
-- no statements, blocks, directives or comments that would reach past
-- the macro.
local function program_source(expr)
  local depth = 0
  for c in expr:gmatch("[()]") do
    depth = depth + (c == "(" and 1 or -1)
    if depth < 0 then break end
  end
  if expr:find("[;{}#\\\n\r]") or expr:find("/[/*]") or depth ~= 0 then
    error(("map_reduce: --expr must be one C expression of x, with "
           .. "balanced parentheses and no ';', '{', '}', '#', '\\', "
           .. "comments or line breaks, got '%s'"):format(expr), 0)
  end
  return ("#define MAP(x) (%s)\n%s"):format(expr, SOURCE)
end

--===-- The reference in Lua ---------------------------------------------===--

-- What a Lua version of a C expression may call.
local LUA_ENV = {
  sqrt = math.sqrt, exp = math.exp, log = math.log, sin = math.sin,
  cos = math.cos, tan = math.tan, asin = math.asin, acos = math.acos,
  atan = math.atan, fabs = math.abs, floor = math.floor, ceil = math.ceil,
  fmin = math.min, fmax = math.max, min = math.min, max = math.max,
  pow = function(a, b) return a ^ b end,
  exp2 = function(a) return 2.0 ^ a end,
  log2 = function(a) return math.log(a, 2) end,
  log10 = function(a) return math.log(a, 10) end,
  rsqrt = function(a) return 1 / math.sqrt(a) end,
  tanh = function(a) local e = math.exp(2 * a) return (e - 1) / (e + 1) end,
  M_PI = math.pi, M_PI_F = math.pi, M_E = math.exp(1), M_E_F = math.exp(1),
}

-- Compiles the Lua function f(x) for --check: --lua-expr, else --expr
-- with float suffixes (1.5f) dropped.
local function lua_map(config)
  local text = config.lua_expr
  if text == nil then
    text = config.expr:gsub("(%d%.?%d*[eE][-+]?%d+)[fF]%f[^%w_]", "%1")
                      :gsub("(%d%.%d*)[fF]%f[^%w_]", "%1")
                      :gsub("(%.%d+)[fF]%f[^%w_]", "%1")
  end
  local chunk = load("local x = ...; return " .. text, "=(f(x) in Lua)", "t",
                     LUA_ENV)
  if chunk == nil then
    error(("map_reduce: --check: '%s' is not a Lua expression; give f(x) "
           .. "in Lua with --lua-expr"):format(text), 0)
  end
  return chunk
end

-- The sum of f over the input in double precision, and of |f|, which
-- bounds the rounding error of any order of float additions.
local function lua_sum(f, values)
  local sum, abs_sum = 0.0, 0.0
  for _, x in ipairs(values) do
    local ok, y = pcall(f, x)
    if not ok or type(y) ~= "number" then
      error(("map_reduce: --check: f(%.9g) in Lua %s"):format(x,
        ok and "is not a number" or "failed: " .. tostring(y)), 0)
    end
    sum, abs_sum = sum + y, abs_sum + math.abs(y)
  end
  return sum, abs_sum
end

-- Compares the device's sum with Lua's. Float sums err by at most about
-- (additions in a chain) * 2^-24 * sum |f|: the items' strided loops, the
-- two trees, and a few ulps for f itself.
local function verify(config, x, value, groups)
  local reference, abs_sum = lua_sum(lua_map(config), x:read())
  local per_item = -(-config.count // (groups * config.group))
  local depth = per_item + math.log(config.group, 2) * 2 +
                -(-groups // config.group) + 8
  local allowed = depth * 2.0 ^ -24 * abs_sum + 1e-30
  local err = math.abs(value - reference)
  if not (err <= allowed) then
    common.check_failed("map_reduce", "the sum is %.9g, Lua says %.9g "
                        .. "(error %.3g, allowed %.3g)", value, reference,
                        err, allowed)
  end
  return reference, err / math.max(math.abs(reference), 1e-30)
end

--===-- Entry points ------------------------------------------------------===--

-- The graph of the two passes over |x| into |out|.
local function build(dev, config, prog, x, partial, out, groups)
  local g = common.graph(dev, config, "map_reduce")
  local group = config.group
  g:dispatch("map_sum", prog.map_sum, { grid = groups * group, group = group },
             { x, partial, config.count, dc.localmem(4 * group) },
             { reads = { x }, writes = { partial } })
  g:dispatch("final_sum", prog.final_sum, { grid = group, group = group },
             { partial, out, groups, dc.localmem(4 * group) },
             { reads = { partial }, writes = { out } })
  return g
end

-- M.run(config) -> result: sums f(x) with the settings of the table
-- |config| (the command line's options, as keys with underscores:
-- lua_expr). Raises on bad settings, a failed run or a failed check.
function M.run(config)
  config = options.resolve(M.spec, config)
  local dev = common.device(config)
  local prog = dev:compile(program_source(config.expr),
                           { name = "map_reduce.cl" })
  local n, group = config.count, config.group
  local groups = config.groups or math.min(-(-n // group), 1024)
  local x = dev:buffer("f32", n, { label = "x" })
  -- Outside the graph, so that timed runs do not repeat it; retried as
  -- the graph's ops are.
  dc.retry_call(common.retry(config), function()
    prog.generate({ grid = n }, x, config.seed)
  end)
  local partial = dev:buffer("f32", groups, { label = "partial" })
  local out = dev:buffer("f32", 1, { label = "sum" })
  local g <close> = build(dev, config, prog, x, partial, out, groups)
  local result = { config = config, device = dev.name, groups = groups }
  result.report, result.timing = common.run(g, config, 4 * n)
  result.value = out[1]
  if config.check then
    result.reference, result.relative_error =
      verify(config, x, result.value, groups)
    result.checked = true
  end
  return result
end

-- M.summary(result) -> the text the command line prints.
function M.summary(result)
  local c = result.config
  local lines = {
    ("map_reduce: sum of %s over %d numbers on %s, %d groups of %d, "
     .. "%d streams"):format(c.expr, c.count, result.device, result.groups,
                            c.group, c.streams),
    tostring(result.report),
    ("result: %.9g"):format(result.value),
    ("%s, %.3g GB/s"):format(common.time_line(result.timing),
                             result.timing.rate / 1e9),
  }
  if result.checked then
    lines[#lines + 1] = ("check: ok (Lua: %.9g, relative error %.2g)")
                        :format(result.reference, result.relative_error)
  end
  return table.concat(lines, "\n")
end

-- M.main(argv): the command line.
function M.main(argv)
  local config = options.parse(M.spec, argv)
  if config ~= nil then print(M.summary(M.run(config))) end
end

if options.is_main(...) then M.main({ ... }) end
return M

-- matmul_chain.lua: the product A1 * A2 * ... * An of a chain of matrices,
-- as a graph of matrix-multiply dispatches, with its GFLOP/s.
--
--   dclua scripts/matmul_chain.lua [options]
--   dclua scripts/matmul_chain.lua --dims 512,256,512,128 --order tree --check
--
-- --dims d0,d1,...,dn gives the sizes: Ai is d(i-1) x di. Each product is
-- one dispatch of the built-in matmul kernel (dev:builtin("matmul"), what
-- dc.matmul runs where OpenBLAS is missing) or of the tiled kernel below
-- (--kernel tiled). --order left multiplies from the left, one product
-- after the other; --order tree multiplies neighbours pairwise, so the
-- products of a level are independent and run on several streams. Each op
-- names what it reads and writes; the graph orders them.
--
-- As a module (dofile or require), it runs nothing and returns a table:
--   local chain = dofile("scripts/matmul_chain.lua")
--   local result = chain.run { dims = { 64, 32, 48 }, check = true }
--   print(result.gflops, chain.summary(result))
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
  name = "matmul_chain",
  usage = "dclua scripts/matmul_chain.lua [options]",
  about = "Multiplies a chain of matrices A1 * A2 * ... * An (Ai is "
       .. "d(i-1) x di) as a\ngraph of matrix-multiply dispatches and "
       .. "prints the GFLOP/s measured.",
}, {
  { name = "dims", type = "list", arg = "D0,D1,...", min_count = 3,
    max = 8192, default = { 256, 256, 256, 256, 256 },
    help = "matrix sizes: n+1 sizes for n >= 2 matrices" },
  { name = "kernel", type = "choice", arg = "NAME", default = "builtin",
    values = { "builtin", "tiled" },
    help = "builtin: dev:builtin(\"matmul\"); tiled: this script's kernel" },
  { name = "tile", type = "choice", arg = "T", default = 16,
    values = { 4, 8, 16, 32 }, help = "tile size of the tiled kernel" },
  { name = "order", type = "choice", arg = "ORDER", default = "left",
    values = { "left", "tree" },
    help = "left: ((A1*A2)*A3)...; tree: pairwise, level by level" },
  { name = "seed", type = "integer", arg = "N", default = 1, min = 0,
    help = "seed of the matrices' values" },
}, { warmup = 1, runs = 3 })

-- C (m x n) = A (m x k) * B (k x n), row-major: TILE x TILE work-groups
-- stage TILE x TILE blocks of A and B in local memory.
local TILED = [[
  __kernel void matmul_tiled(__global const float* A, __global const float* B,
                             __global float* C, int m, int n, int k) {
    __local float As[TILE * TILE];
    __local float Bs[TILE * TILE];
    int col = get_global_id(0), row = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    float acc = 0.0f;
    for (int t = 0; t < k; t += TILE) {
      As[ly * TILE + lx] = row < m && t + lx < k ? A[row * k + t + lx] : 0.0f;
      Bs[ly * TILE + lx] = t + ly < k && col < n ? B[(t + ly) * n + col] : 0.0f;
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int i = 0; i < TILE; ++i) {
        acc += As[ly * TILE + i] * Bs[i * TILE + lx];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < m && col < n) C[row * n + col] = acc;
  }
]]

local function round_up(x, to) return (x + to - 1) // to * to end

-- The kernel and a function giving the launch of an m x n product.
local function matmul_kernel(dev, config)
  if config.kernel == "builtin" then
    -- The built-in kernel: 16x4 groups, each work-item 4 rows of a
    -- 16x16 tile of C (core/src/kernel/builtin_kernels.cl).
    return dev:builtin("matmul"), function(m, n)
      return { grid = { round_up(n, 16), round_up(m, 16) // 4 },
               group = { 16, 4 } }
    end
  end
  local tile = config.tile
  local prog = dev:compile(TILED, { defines = { TILE = tile },
                                    name = "matmul_tiled.cl" })
  return prog.matmul_tiled, function(m, n)
    return { grid = { round_up(n, tile), round_up(m, tile) },
             group = { tile, tile } }
  end
end

--===-- Matrices ----------------------------------------------------------===--

-- The values of a rows x cols matrix: multiples of 1/1024 (exact in f32,
-- so Lua and the device start from the same numbers), scaled by a power
-- of two near 1/rows for all but the first, which keeps the products'
-- magnitudes steady along a long chain.
local function matrix_values(rows, cols, first)
  local scale = 1 / 1024
  if not first then scale = 2.0 ^ -(math.floor(math.log(rows, 2)) + 10) end
  local values = {}
  for i = 1, rows * cols do values[i] = math.random(0, 1023) * scale end
  return values
end

-- The operands: { buf, rows, cols, name, values } for A1..An.
local function make_operands(dev, dims, seed)
  math.randomseed(seed)
  local list = {}
  for i = 1, #dims - 1 do
    local values = matrix_values(dims[i], dims[i + 1], i == 1)
    list[i] = { rows = dims[i], cols = dims[i + 1], name = "A" .. i,
                values = values,
                buf = dev:buffer("f32", values, { label = "A" .. i }) }
  end
  return list
end

--===-- The graph ---------------------------------------------------------===--

-- Adds the op computing x * y to |g| and returns its result operand.
local function multiply(g, dev, kernel, launch, x, y, plan)
  local m, n, k = x.rows, y.cols, x.cols
  local name = "mm" .. (#plan + 1)
  local out = { rows = m, cols = n, name = name,
                buf = dev:buffer("f32", m * n, { label = name }),
                left = x, right = y }
  g:dispatch(name, kernel, launch(m, n), { x.buf, y.buf, out.buf, m, n, k },
             { reads = { x.buf, y.buf }, writes = { out.buf } })
  plan[#plan + 1] = { name = name, m = m, n = n, k = k,
                      text = ("%s = %s * %s"):format(name, x.name, y.name) }
  return out
end

-- Builds the chain's graph; returns it, the final operand and the plan
-- (one entry per product).
local function build(dev, config, operands)
  local g = common.graph(dev, config, "matmul_chain")
  local kernel, launch = matmul_kernel(dev, config)
  local plan, level = {}, operands
  if config.order == "left" then
    local acc = operands[1]
    for i = 2, #operands do
      acc = multiply(g, dev, kernel, launch, acc, operands[i], plan)
    end
    return g, acc, plan
  end
  while #level > 1 do
    local next_level = {}
    for i = 1, #level - 1, 2 do
      next_level[#next_level + 1] =
        multiply(g, dev, kernel, launch, level[i], level[i + 1], plan)
    end
    if #level % 2 == 1 then next_level[#next_level + 1] = level[#level] end
    level = next_level
  end
  return g, level[1], plan
end

--===-- Verification ------------------------------------------------------===--

-- C = A * B in Lua, on row-major tables.
local function lua_matmul(a, b, m, n, k)
  local c = {}
  for i = 0, m - 1 do
    for j = 1, n do
      local s = 0.0
      for p = 1, k do s = s + a[i * k + p] * b[(p - 1) * n + j] end
      c[i * n + j] = s
    end
  end
  return c
end

-- The reference value of an operand: its own values, or the product of
-- its two operands' references.
local function lua_value(op)
  if op.values == nil then
    op.values = lua_matmul(lua_value(op.left), lua_value(op.right), op.rows,
                           op.cols, op.left.cols)
  end
  return op.values
end

-- The chain applied to the vector x (#x = dn): A1 (A2 (... (An x))).
local function chain_times(operands, x)
  for i = #operands, 1, -1 do
    x = lua_matmul(operands[i].values, x, operands[i].rows, 1,
                   operands[i].cols)
  end
  return x
end

-- The final result times x, from the device's result read back.
local function result_times(c, rows, cols, x)
  return lua_matmul(c, x, rows, 1, cols)
end

-- All values are positive, so the relative error of each element stays
-- near k * 2^-24 per product; 1e-3 leaves a wide margin yet catches any
-- wrong element.
local TOLERANCE = 1e-3

local function compare(got, want, what)
  local worst = 0
  for i = 1, #want do
    local err = math.abs(got[i] - want[i]) / math.max(math.abs(want[i]), 1e-30)
    if err > TOLERANCE then
      common.check_failed("matmul_chain", "%s element %d is %.7g, expected "
                          .. "%.7g", what, i, got[i], want[i])
    end
    worst = math.max(worst, err)
  end
  return worst
end

-- Compares the result with the Lua reference: element by element when the
-- chain is small (at most 2e6 multiply-adds in Lua), else projected onto
-- two random vectors (Freivalds' check: C x = A1 (A2 (... (An x)))).
local function verify(operands, final, plan)
  local work = 0
  for _, p in ipairs(plan) do work = work + p.m * p.n * p.k end
  local got = final.buf:read()
  if work <= 2e6 then
    return "element by element", compare(got, lua_value(final), "result")
  end
  local worst = 0
  for _ = 1, 2 do
    local x = {}
    for i = 1, final.cols do x[i] = math.random() end
    local cx = result_times(got, final.rows, final.cols, x)
    worst = math.max(worst, compare(cx, chain_times(operands, x), "C*x"))
  end
  return "projected onto 2 random vectors", worst
end

--===-- Entry points ------------------------------------------------------===--

-- M.run(config) -> result: multiplies the chain with the settings of the
-- table |config| (the command line's options, as keys with underscores;
-- dims as { d0, d1, ... } or "d0,d1,..."). Raises on bad settings, a
-- failed run or a failed check.
function M.run(config)
  config = options.resolve(M.spec, config)
  local dev = common.device(config)
  local operands = make_operands(dev, config.dims, config.seed)
  local g <close>, final, plan = build(dev, config, operands)
  local flops = 0
  for _, p in ipairs(plan) do flops = flops + 2 * p.m * p.n * p.k end
  local result = { config = config, device = dev.name, plan = plan,
                   flops = flops, rows = final.rows, cols = final.cols }
  result.report, result.timing = common.run(g, config, flops)
  result.gflops = result.timing.rate / 1e9
  if config.check then
    result.check_mode, result.max_error = verify(operands, final, plan)
    result.checked = true
  end
  result.output = final.buf
  return result
end

-- M.summary(result) -> the text the command line prints.
function M.summary(result)
  local c = result.config
  local lines = {
    ("chain: %d matrices (%s), %s order, %s kernel on %s, %d streams"):format(
      #c.dims - 1, table.concat(c.dims, ","), c.order, c.kernel,
      result.device, c.streams),
  }
  for _, p in ipairs(result.plan) do
    lines[#lines + 1] = ("  %s   (%dx%d, k %d)"):format(p.text, p.m, p.n, p.k)
  end
  lines[#lines + 1] = tostring(result.report)
  lines[#lines + 1] = ("result: %dx%d, %.4g GFLOP per run"):format(
    result.rows, result.cols, result.flops / 1e9)
  lines[#lines + 1] = common.time_line(result.timing)
  lines[#lines + 1] = ("GFLOP/s: %.2f"):format(result.gflops)
  if result.checked then
    lines[#lines + 1] = ("check: ok (%s, max relative error %.2g)"):format(
      result.check_mode, result.max_error)
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

-- stream_pipeline.lua: data through a device in chunks, as a pipeline:
-- each chunk is copied from host memory to the device, transformed by a
-- kernel and copied back, and chunk i + 1 goes up while chunk i is
-- computed and chunk i - 1 comes down.
--
--   dclua scripts/stream_pipeline.lua [options]
--   dclua scripts/stream_pipeline.lua --device cuda:0 --chunks 16 --check
--
-- The pipeline is one graph. Its ops are ordered by the buffers they
-- touch alone: a kernel reads what its upload wrote, a download reads
-- what its kernel wrote. The chunks share --buffers sets of device
-- buffers (2: double buffering), so chunk i + 2's upload waits, through
-- the buffers, for chunk i's kernel to have read its input, and its
-- kernel for chunk i's download. The graph runs on a stream group, where
-- independent ops run at once: on a GPU, an upload and a download on the
-- two copy engines and a kernel on the SMs. The same ops on one stream
-- run one after the other; the script times both and prints the speedup.
--
-- The host buffers belong to the CPU device, so that a GPU copies them
-- at the bus's speed (the engine pins them on first use).
--
-- As a module (dofile or require), it runs nothing and returns a table:
--   local sp = dofile("scripts/stream_pipeline.lua")
--   local result = sp.run { chunks = 8, chunk_elements = 4096, check = true }
--   print(result.speedup)
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
  name = "stream_pipeline",
  usage = "dclua scripts/stream_pipeline.lua [options]",
  about = "Copies chunks of data to a device, transforms them with a "
       .. "kernel and copies them\nback, as a pipeline of uploads, kernels "
       .. "and downloads that overlap; compares it\nwith the same steps "
       .. "one after the other.",
}, {
  { name = "chunks", type = "integer", arg = "N", default = 16, min = 1,
    max = 4096, help = "chunks the data is cut into" },
  { name = "chunk-elements", type = "integer", arg = "N",
    default = 4 << 20, min = 1, max = 1 << 28,
    help = "f32 elements per chunk (default: 16 MiB of them)" },
  { name = "buffers", type = "integer", arg = "N", default = 2, min = 1,
    max = 64, help = "sets of device buffers the chunks take turns on "
        .. "(2: double buffering)" },
}, { warmup = 1, runs = 3 })

-- in[i] = i mod 4096 on the host; out = 2 * in + 1 on the device.
local SOURCE = [[
  __kernel void generate(__global float* x, uint n) {
    uint i = (uint)get_global_id(0);
    if (i < n) x[i] = (float)(i % 4096u);
  }
  __kernel void transform(__global const float* in, __global float* out,
                          uint n) {
    size_t i = get_global_id(0);
    if (i < n) out[i] = in[i] * 2.0f + 1.0f;
  }
]]

-- The graph that takes every chunk through |sets| (device buffer sets,
-- used in turn) on |streams| streams.
local function build(dev, config, prog, host, sets, streams)
  local g = common.graph(dev, setmetatable({ streams = streams },
                                           { __index = config }),
                         "stream_pipeline")
  local n = config.chunk_elements
  for i = 1, config.chunks do
    local set = sets[(i - 1) % #sets + 1]
    g:copy("up " .. i, set.input, host.input_chunks[i])
    g:dispatch("kernel " .. i, prog.transform, { grid = n },
               { set.input, set.output, n })
    g:copy("down " .. i, host.output_chunks[i], set.output)
  end
  return g
end

-- Host buffers on the CPU device, the input generated there, and a view
-- of each chunk.
local function host_buffers(config)
  local cpu = dc.device("cpu")
  local n, total = config.chunk_elements, config.chunk_elements * config.chunks
  local host = {
    input = cpu:buffer("f32", total, { label = "input" }),
    output = cpu:buffer("f32", total, { label = "output" }),
    input_chunks = {}, output_chunks = {},
  }
  cpu:compile(SOURCE, { name = "stream_pipeline.cl" })
     .generate({ grid = total }, host.input, total)
  for i = 1, config.chunks do
    host.input_chunks[i] = host.input:view((i - 1) * n + 1, n)
    host.output_chunks[i] = host.output:view((i - 1) * n + 1, n)
  end
  return host
end

-- Checks out = 2 * in + 1 at up to 65,536 places spread over the data,
-- the first and last element of every chunk among them.
local function verify(config, host, retry)
  local n, total = config.chunk_elements, config.chunk_elements * config.chunks
  local step = math.max(1, total // 65536)
  local function check_at(i)  -- 1-based
    local want = ((i - 1) % 4096) * 2.0 + 1.0
    local got = dc.retry_call(retry, function() return host.output[i] end)
    if got ~= want then
      common.check_failed("stream_pipeline", "element %d is %s, expected %s",
                          i, tostring(got), tostring(want))
    end
  end
  for i = 1, total, step do check_at(i) end
  for c = 1, config.chunks do
    check_at((c - 1) * n + 1)
    check_at(c * n)
  end
end

-- M.run(config) -> result: runs the pipeline with the settings of the
-- table |config| (the command line's options, as keys with underscores:
-- chunk_elements). Raises on bad settings, a failed run or a failed check.
function M.run(config)
  config = options.resolve(M.spec, config)
  local dev = common.device(config)
  local prog = dev:compile(SOURCE, { name = "stream_pipeline.cl" })
  -- The set-up is retried as the graph's ops are: making a buffer fills
  -- it, a copy that can fail like any other.
  local retry = common.retry(config)
  local host = dc.retry_call(retry, function() return host_buffers(config) end)
  local sets = {}
  for s = 1, math.min(config.buffers, config.chunks) do
    local function buffer(name)
      return dc.retry_call(retry, function()
        return dev:buffer("f32", config.chunk_elements, { label = name .. s })
      end)
    end
    sets[s] = { input = buffer("in"), output = buffer("out") }
  end
  local bytes = 2 * 4 * config.chunk_elements * config.chunks
  local in_order <close> = build(dev, config, prog, host, sets, 1)
  local overlapped <close> = build(dev, config, prog, host, sets,
                                   config.streams)
  local result = { config = config, device = dev.name }
  result.in_order_report, result.in_order = common.run(in_order, config,
                                                       bytes)
  dc.retry_call(retry, function() host.output:fill(0) end)
  result.report, result.timing = common.run(overlapped, config, bytes)
  result.speedup = result.in_order.p50_ms / result.timing.p50_ms
  if config.check then
    verify(config, host, retry)
    result.checked = true
  end
  return result
end

-- The attempts past the first of the ops of |report|, and the ops that
-- needed them.
local function retries(report, chunks)
  local extra, ops = 0, 0
  for i = 1, chunks do
    for _, step in ipairs({ "up ", "kernel ", "down " }) do
      local op = report[step .. i]
      if op ~= nil and op.attempts > 1 then
        extra, ops = extra + op.attempts - 1, ops + 1
      end
    end
  end
  return extra, ops
end

-- M.summary(result) -> the text the command line prints.
function M.summary(result)
  local c = result.config
  local lines = {
    ("stream_pipeline: %d chunks of %d f32 through %s, %d buffer set(s), "
     .. "%d streams"):format(c.chunks, c.chunk_elements, result.device,
                            math.min(c.buffers, c.chunks), c.streams),
    ("in order (1 stream): %s, %.3g GB/s"):format(
      common.time_line(result.in_order), result.in_order.rate / 1e9),
    ("pipelined: %s, %.3g GB/s"):format(common.time_line(result.timing),
                                        result.timing.rate / 1e9),
    ("speedup: %.2fx"):format(result.speedup),
  }
  local extra, ops = retries(result.report, c.chunks)
  if extra > 0 then
    lines[#lines + 1] = ("retried: %d more attempt(s) of %d op(s) in the "
                         .. "last pipelined run"):format(extra, ops)
  end
  if result.checked then lines[#lines + 1] = "check: ok" end
  return table.concat(lines, "\n")
end

-- M.main(argv): the command line.
function M.main(argv)
  local config = options.parse(M.spec, argv)
  if config ~= nil then print(M.summary(M.run(config))) end
end

if options.is_main(...) then M.main({ ... }) end
return M

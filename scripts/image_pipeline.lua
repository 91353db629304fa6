-- image_pipeline.lua: blur, edges and histogram of a grey image, as a
-- graph with retries, a circuit breaker and a CPU fallback.
--
--   dclua scripts/image_pipeline.lua [options] [input.pgm [blurred.pgm [edges.pgm]]]
--   dclua scripts/image_pipeline.lua --help
--
-- The input is a PGM file or, without one, a generated image (--size,
-- --pattern). The graph blurs it with a separable box filter (two passes,
-- radius --radius), takes the Sobel edge magnitude of the blurred image,
-- counts a 256-bin histogram of it (each work-group in __local bins, then
-- into the image's with atomic_add), and saves the blurred
-- and edge images as PGM when paths are given. Each op names the buffers it
-- reads and writes, so the graph orders them itself.
--
-- As a module (dofile or require), it runs nothing and returns a table:
--   local pipeline = dofile("scripts/image_pipeline.lua")
--   local result = pipeline.run { size = { 64, 48 }, check = true }
--   print(pipeline.summary(result))
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
  name = "image_pipeline",
  usage = "dclua scripts/image_pipeline.lua [options] "
       .. "[input.pgm [blurred.pgm [edges.pgm]]]",
  about = "Blurs a grey image (separable box filter, two passes), takes the "
       .. "Sobel edge\nmagnitude and a 256-bin histogram of the blurred "
       .. "image, as a graph with retries,\na circuit breaker and a CPU "
       .. "fallback. Without input.pgm it generates an image.",
  positionals = { "input", "blurred", "edges" },
}, {
  { name = "size", type = "size", arg = "WxH", max = 1 << 14,
    help = "size of the generated image (default 512x512); with an input "
        .. "file it must match" },
  { name = "pattern", type = "choice", arg = "NAME", default = "checker",
    values = { "gradient", "checker", "noise" },
    help = "generated image: gradient, checker or noise" },
  { name = "radius", type = "integer", arg = "R", default = 1, min = 0,
    max = 32, help = "blur radius: (2R+1)-pixel box in each pass" },
  { name = "blurred", type = "string", arg = "FILE",
    help = "save the blurred image here (also the 2nd argument)" },
  { name = "edges", type = "string", arg = "FILE",
    help = "save the edge image here (also the 3rd argument)" },
})

-- The kernels. R, the blur radius, comes as a define; pixels outside the
-- image repeat the nearest edge pixel.
local SOURCE = [[
  __kernel void blur_h(__global const float* in, __global float* out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    float s = 0.0f;
    for (int d = -R; d <= R; ++d) s += in[y * w + clamp(x + d, 0, w - 1)];
    out[y * w + x] = s / (2 * R + 1);
  }
  __kernel void blur_v(__global const float* in, __global float* out,
                       int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    float s = 0.0f;
    for (int d = -R; d <= R; ++d) s += in[clamp(y + d, 0, h - 1) * w + x];
    out[y * w + x] = s / (2 * R + 1);
  }
  __kernel void sobel(__global const float* in, __global float* out,
                      int w, int h) {
    int x = get_global_id(0), y = get_global_id(1);
    int l = max(x - 1, 0), r = min(x + 1, w - 1);
    int u = max(y - 1, 0), d = min(y + 1, h - 1);
    float gx = (in[u * w + r] + 2.0f * in[y * w + r] + in[d * w + r])
             - (in[u * w + l] + 2.0f * in[y * w + l] + in[d * w + l]);
    float gy = (in[d * w + l] + 2.0f * in[d * w + x] + in[d * w + r])
             - (in[u * w + l] + 2.0f * in[u * w + x] + in[u * w + r]);
    out[y * w + x] = sqrt(gx * gx + gy * gy);
  }
  __kernel void clear(__global uint* bins) {
    bins[get_global_id(0)] = 0;
  }
  // Each work-group counts its pixels (a strided share of them) in bins
  // of its own in __local memory, where atomics are cheap and contend
  // only within the group, then adds its counts to the image's bins:
  // 256 global atomics a group rather than one a pixel.
  __kernel void histogram(__global const float* in, __global uint* bins,
                          uint n) {
    __local uint counts[256];
    size_t l = get_local_id(0), size = get_local_size(0);
    for (size_t b = l; b < 256; b += size) counts[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) {
      atomic_inc(&counts[(uint)clamp(in[i], 0.0f, 255.0f)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t b = l; b < 256; b += size) {
      if (counts[b] != 0) atomic_add(&bins[b], counts[b]);
    }
  }
]]

--===-- Input -------------------------------------------------------------===--

-- Loads config.input, or generates an image, as an f32 buffer on |dev|.
-- Returns the image table and a description.
local function load_input(dev, config)
  if config.input == nil then
    local size = config.size or { 512, 512 }
    local cell = math.max(2, math.min(size[1], size[2]) // 8)
    local img = dc.image.generate(size[1], size[2], config.pattern,
                                  { cell = cell, device = dev, dtype = "f32" })
    return img, ("generated %s"):format(config.pattern)
  end
  local img = dc.image.load_pgm(config.input, { device = dev, dtype = "f32" })
  local size = config.size
  if size and (size[1] ~= img.width or size[2] ~= img.height) then
    error(("image_pipeline: --size %dx%d does not match %s (%dx%d)"):format(
      size[1], size[2], config.input, img.width, img.height), 0)
  end
  if img.maxval > 255 then
    error(("image_pipeline: %s has maxval %d; the histogram needs 8-bit "
           .. "samples (maxval up to 255)"):format(config.input, img.maxval),
          0)
  end
  return img, config.input
end

--===-- The graph ---------------------------------------------------------===--

-- The histogram's summary: pixels, min, max (the first and last non-empty
-- bins), mean, median and mode.
local function summarize(bins)
  local s = { pixels = 0, sum = 0, mode = 0 }
  for v = 0, 255 do
    local n = bins[v + 1]
    if n > 0 then
      s.min = s.min or v
      s.max = v
    end
    s.pixels, s.sum = s.pixels + n, s.sum + n * v
    if n > bins[s.mode + 1] then s.mode = v end
  end
  s.mean = s.sum / s.pixels
  local seen = 0
  for v = 0, 255 do
    seen = seen + bins[v + 1]
    if seen * 2 >= s.pixels then s.median = v break end
  end
  s.mode_count = bins[s.mode + 1]
  return s
end

-- Builds the graph over the buffers of |b| (src, tmp, blurred, edges,
-- hist). Host ops save the outputs and summarize the histogram into
-- |out.histogram| and |out.summary|.
local function build(dev, config, prog, b, w, h, out)
  local g = common.graph(dev, config, "image_pipeline")
  local grid = { grid = { w, h } }
  g:dispatch("blur_x", prog.blur_h, grid, { b.src, b.tmp, w },
             { reads = { b.src }, writes = { b.tmp } })
  g:dispatch("blur_y", prog.blur_v, grid, { b.tmp, b.blurred, w, h },
             { reads = { b.tmp }, writes = { b.blurred } })
  g:dispatch("sobel", prog.sobel, grid, { b.blurred, b.edges, w, h },
             { reads = { b.blurred }, writes = { b.edges } })
  -- A kernel rather than g:fill: dispatches are what fall back to
  -- another device when theirs fails.
  g:dispatch("clear_hist", prog.clear, { grid = 256 }, { b.hist },
             { writes = { b.hist } })
  -- Groups of 256, each over at least 16 pixels a work-item, at most
  -- 1024 of them.
  local groups = math.max(1, math.min(1024, (w * h) // (256 * 16)))
  g:dispatch("hist", prog.histogram, { grid = groups * 256, group = 256 },
             { b.blurred, b.hist, w * h },
             { reads = { b.blurred }, read_writes = { b.hist } })
  g:host("summary", function()
    out.histogram = b.hist:read()
    out.summary = summarize(out.histogram)
  end, { reads = { b.hist } })
  if config.blurred then
    g:host("save_blurred", function()
      dc.image.save_pgm(config.blurred, b.blurred, w, h)
    end, { reads = { b.blurred } })
  end
  if config.edges then
    g:host("save_edges", function()
      dc.image.save_pgm(config.edges, b.edges, w, h)
    end, { reads = { b.edges } })
  end
  return g
end

--===-- Verification ------------------------------------------------------===--

-- The reference in Lua (double precision): blurred and edge images.
local function reference(pixels, w, h, r)
  local function at(img, x, y)
    x = math.min(math.max(x, 0), w - 1)
    y = math.min(math.max(y, 0), h - 1)
    return img[y * w + x + 1]
  end
  local tmp, blurred, edges = {}, {}, {}
  for pass = 1, 2 do
    local from, to = pass == 1 and pixels or tmp, pass == 1 and tmp or blurred
    for y = 0, h - 1 do
      for x = 0, w - 1 do
        local s = 0.0
        for d = -r, r do
          s = s + (pass == 1 and at(from, x + d, y) or at(from, x, y + d))
        end
        to[y * w + x + 1] = s / (2 * r + 1)
      end
    end
  end
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      local function p(dx, dy) return at(blurred, x + dx, y + dy) end
      local gx = (p(1, -1) + 2 * p(1, 0) + p(1, 1))
               - (p(-1, -1) + 2 * p(-1, 0) + p(-1, 1))
      local gy = (p(-1, 1) + 2 * p(0, 1) + p(1, 1))
               - (p(-1, -1) + 2 * p(0, -1) + p(1, -1))
      edges[y * w + x + 1] = math.sqrt(gx * gx + gy * gy)
    end
  end
  return blurred, edges
end

-- Compares two images within |abs| + |rel| * |expected|.
local function compare(what, got, want, w, abs, rel)
  for i = 1, #want do
    if math.abs(got[i] - want[i]) > abs + rel * math.abs(want[i]) then
      common.check_failed("image_pipeline", "%s pixel (%d, %d) is %.6g, "
        .. "expected %.6g", what, (i - 1) % w, (i - 1) // w, got[i], want[i])
    end
  end
end

-- Checks the histogram against the reference blurred image. A value within
-- 1e-3 of an integer may land on either side of it in float, so each bin
-- must hold its certain pixels and at most the uncertain ones near it.
local function check_histogram(bins, blurred)
  local certain, maybe = {}, {}
  for v = 0, 255 do certain[v], maybe[v] = 0, 0 end
  for _, value in ipairs(blurred) do
    local lo = math.floor(math.min(math.max(value - 1e-3, 0), 255))
    local hi = math.floor(math.min(math.max(value + 1e-3, 0), 255))
    if lo == hi then
      certain[lo] = certain[lo] + 1
    else
      maybe[lo], maybe[hi] = maybe[lo] + 1, maybe[hi] + 1
    end
  end
  for v = 0, 255 do
    local n = bins[v + 1]
    if n < certain[v] or n > certain[v] + maybe[v] then
      common.check_failed("image_pipeline", "histogram bin %d holds %d "
        .. "pixels, expected %d to %d", v, n, certain[v],
        certain[v] + maybe[v])
    end
  end
end

local function verify(b, w, h, radius, histogram)
  local blurred, edges = reference(b.src:read(), w, h, radius)
  compare("blurred", b.blurred:read(), blurred, w, 1e-3, 1e-5)
  compare("edge", b.edges:read(), edges, w, 1e-3, 1e-4)
  check_histogram(histogram, blurred)
end

--===-- Entry points ------------------------------------------------------===--

-- M.run(config) -> result: runs the pipeline with the settings of the
-- table |config| (the command line's options, as keys with underscores:
-- retry_attempts; size as { w, h } or "WxH"; input, blurred, edges as
-- paths). Raises on bad settings, a failed run or a failed check.
function M.run(config)
  config = options.resolve(M.spec, config)
  local dev = common.device(config)
  local img, source = load_input(dev, config)
  local w, h = img.width, img.height
  local prog = dev:compile(SOURCE, { defines = { R = config.radius },
                                     name = "image_pipeline.cl" })
  local b = { src = img.pixels }
  for _, name in ipairs({ "tmp", "blurred", "edges" }) do
    b[name] = dev:buffer("f32", w * h, { label = name })
  end
  b.hist = dev:buffer("u32", 256, { label = "hist" })
  local result = { width = w, height = h, source = source, device = dev.name,
                   config = config, buffers = b }
  local g <close> = build(dev, config, prog, b, w, h, result)
  result.report, result.timing = common.run(g, config)
  if config.check then
    verify(b, w, h, config.radius, result.histogram)
    result.checked = true
  end
  return result
end

-- M.summary(result) -> the text the command line prints.
function M.summary(result)
  local c, s = result.config, result.summary
  local lines = {
    ("image: %dx%d %s on %s, radius %d, %d streams"):format(
      result.width, result.height, result.source, result.device, c.radius,
      c.streams),
    tostring(result.report),
    ("histogram: %d pixels, min %d, max %d, mean %.2f, median %d, mode %d "
     .. "(%d pixels)"):format(s.pixels, s.min, s.max, s.mean, s.median,
                               s.mode, s.mode_count),
    common.time_line(result.timing),
  }
  for _, key in ipairs({ "blurred", "edges" }) do
    if c[key] then lines[#lines + 1] = ("wrote %s"):format(c[key]) end
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

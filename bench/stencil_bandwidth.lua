-- stencil_bandwidth.lua: the 2-D stencils of scripts/image_pipeline.lua
-- (box blur along x, along y, Sobel) with the work-group the engine picks
-- for a 2-D grid, against a buffer copy on the same device, as bandwidth:
-- each kernel reads its input once and writes its output once, as the
-- copy does, so equal bytes per time means the stencil runs at the copy's
-- speed.
--
--   dclua bench/stencil_bandwidth.lua [DEVICE [WIDTH [RUNS]]]
--
-- Prints harness records (bench/harness.h): a row per case (median, min,
-- max ns of one synchronous call) and each stencil's time over the
-- copy's (goal: ratio<=1.11, at least 0.9x the copy's bandwidth).
-- SPDX-License-Identifier: MIT
local dc = require("dc")
local dev = dc.device(arg[1] or "cuda:0")
local w = math.tointeger(tonumber(arg[2] or 16384))
local runs = math.tointeger(tonumber(arg[3] or 21))
local h = w
local name = ("2-D stencils %dx%d f32 on %s vs copy"):format(w, h, dev.name)

local prog = dev:compile([[
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
]], { defines = { R = 1 }, name = "stencils.cl" })

local src = dev:buffer("f32", w * h, { label = "src" })
local dst = dev:buffer("f32", w * h, { label = "dst" })
src:fill(1.5)
local grid = { grid = { w, h } }
local cases = {
  { "buffer copy", function() dst:copy_from(src) end },
  { "blur_h", function() prog.blur_h(grid, src, dst, w) end },
  { "blur_v", function() prog.blur_v(grid, src, dst, w, h) end },
  { "sobel", function() prog.sobel(grid, src, dst, w, h) end },
}
local bytes = 2 * 4 * w * h
local medians = {}
for _, case in ipairs(cases) do
  local t = dc.profile(case[2], { runs = runs, warmup = 3 })
  medians[case[1]] = t.p50_ms
  print(("row\t%s\t%s\t%.0f\t%.0f\t%.0f"):format(name, case[1],
        t.p50_ms * 1e6, t.min_ms * 1e6, t.max_ms * 1e6))
  print(("rate\t%s\t%s\t%.0f\tGB/s"):format(name, case[1],
        bytes / (t.p50_ms * 1e-3) / 1e9))
end
for i = 2, #cases do
  print(("ratio\t%s\t%s\tbuffer copy\t%.3f\tratio<=1.11"):format(name,
        cases[i][1], medians[cases[i][1]] / medians["buffer copy"]))
end

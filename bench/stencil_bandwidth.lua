-- stencil_bandwidth.lua: the 2-D stencils of scripts/image_pipeline.lua
-- (box blur along x, along y, Sobel) and a copy kernel in 2-D and in 1-D,
-- with the work-group the engine picks, against a buffer copy on the
-- same device, as bandwidth: each kernel reads its input once and
-- writes its output once, as the copy does, so equal bytes per time means
-- the kernel runs at the copy's speed.
--
--   dclua bench/stencil_bandwidth.lua [DEVICE [WIDTH [RUNS]]]
--
-- Each kernel runs as the engine builds it by default (on a CUDA device,
-- coarsened: each thread runs 4 work-items, docs/cuda.md) and built with
-- -dc-no-coarsening ("one item per thread"). Each stencil also runs
-- written by hand for ROWS (4) pixels of a column per work-item ("x4
-- rows", built with -dc-no-coarsening too): restrict pointers, every load
-- before every store, the rows that neighbouring pixels share read once.
-- blur_h also runs multiplying by 1/3 instead of dividing by 3 ("blur_h
-- * (1/3)"). Every form's output is compared with the one-item form's on
-- the device before anything is timed.
--
-- Prints harness records (bench/harness.h): a row per case (median, min,
-- max ns of one synchronous call) and each kernel's time over the copy's
-- (goal: ratio<=1.11, at least 0.9x the copy's bandwidth).
-- SPDX-License-Identifier: MIT
local dc = require("dc")
local dev = dc.device(arg[1] or "cuda:0")
local w = math.tointeger(tonumber(arg[2] or 16384))
local runs = math.tointeger(tonumber(arg[3] or 21))
local h = w
local name = ("2-D stencils %dx%d f32 on %s vs copy"):format(w, h, dev.name)

local source = [[
  __kernel void blur_h(__global const float* in, __global float* out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    float s = 0.0f;
    for (int d = -R; d <= R; ++d) s += in[y * w + clamp(x + d, 0, w - 1)];
    out[y * w + x] = s / (2 * R + 1);
  }
  // blur_h multiplying by the reciprocal: a correctly rounded division
  // ends in a branch the GPU compiler does not move loads across, which a
  // coarsened thread pays for at each of its items, unless the engine
  // divides by the constant without one (docs/cuda.md): this row shows
  // whether it does.
  __kernel void blur_h_recip(__global const float* in, __global float* out,
                             int w) {
    int x = get_global_id(0), y = get_global_id(1);
    float s = 0.0f;
    for (int d = -R; d <= R; ++d) s += in[y * w + clamp(x + d, 0, w - 1)];
    out[y * w + x] = s * (1.0f / (2 * R + 1));
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

  // ROWS pixels of column x per work-item, rows y0 .. y0 + ROWS - 1:
  // every load first, then every store, so that all are in flight at once.
  __kernel void blur_h_rows(__global const float* restrict in,
                            __global float* restrict out, int w) {
    int x = get_global_id(0), y0 = get_global_id(1) * ROWS;
    int l = clamp(x - 1, 0, w - 1), r = clamp(x + 1, 0, w - 1);
    float s[ROWS];
    for (int k = 0; k < ROWS; ++k) {
      int row = (y0 + k) * w;
      s[k] = in[row + l] + in[row + x] + in[row + r];
    }
    for (int k = 0; k < ROWS; ++k) out[(y0 + k) * w + x] = s[k] / 3;
  }
  // The window of rows y0 - 1 .. y0 + ROWS, each read once.
  __kernel void blur_v_rows(__global const float* restrict in,
                            __global float* restrict out, int w, int h) {
    int x = get_global_id(0), y0 = get_global_id(1) * ROWS;
    float v[ROWS + 2];
    for (int k = 0; k < ROWS + 2; ++k) {
      v[k] = in[clamp(y0 + k - 1, 0, h - 1) * w + x];
    }
    for (int k = 0; k < ROWS; ++k) {
      out[(y0 + k) * w + x] = (v[k] + v[k + 1] + v[k + 2]) / 3;
    }
  }
  __kernel void sobel_rows(__global const float* restrict in,
                           __global float* restrict out, int w, int h) {
    int x = get_global_id(0), y0 = get_global_id(1) * ROWS;
    int l = max(x - 1, 0), r = min(x + 1, w - 1);
    float a[ROWS + 2], b[ROWS + 2], c[ROWS + 2];  // columns l, x, r
    for (int k = 0; k < ROWS + 2; ++k) {
      int row = clamp(y0 + k - 1, 0, h - 1) * w;
      a[k] = in[row + l];
      b[k] = in[row + x];
      c[k] = in[row + r];
    }
    for (int k = 0; k < ROWS; ++k) {
      float gx = (c[k] + 2.0f * c[k + 1] + c[k + 2])
               - (a[k] + 2.0f * a[k + 1] + a[k + 2]);
      float gy = (a[k + 2] + 2.0f * b[k + 2] + c[k + 2])
               - (a[k] + 2.0f * b[k] + c[k]);
      out[(y0 + k) * w + x] = sqrt(gx * gx + gy * gy);
    }
  }

  // A 2-D copy kernel: the ceiling of these shapes without arithmetic.
  __kernel void copy2d(__global const float* in, __global float* out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = in[y * w + x];
  }

  // The same over a 1-D grid: on a CUDA device its coarsened items are a
  // group apart, where a 2-D launch's are consecutive rows (docs/cuda.md).
  __kernel void copy1d(__global const float* in, __global float* out) {
    size_t i = get_global_id(0);
    out[i] = in[i];
  }

  // A pattern with edges in both directions.
  __kernel void pattern(__global float* out, int w) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = (float)((x * 7 + y * 13) % 17) + ((x / 5 + y / 3) & 1);
  }
  // Counts the elements where a and b differ.
  __kernel void count_diff(__global const float* a, __global const float* b,
                           __global int* bad) {
    size_t i = get_global_id(0);
    if (a[i] != b[i]) atomic_inc(bad);
  }
]]

local defines = { R = 1, ROWS = 4 }
local prog = dev:compile(source, { defines = defines, name = "stencils.cl" })
local one = dev:compile(source, { defines = defines, name = "stencils1.cl",
                                  options = "-dc-no-coarsening" })
local ROWS = 4
assert(h % ROWS == 0, "the height must be a multiple of 4")

local src = dev:buffer("f32", w * h, { label = "src" })
local dst = dev:buffer("f32", w * h, { label = "dst" })
local grid = { grid = { w, h } }
local rows = { grid = { w, h // ROWS } }
prog.pattern(grid, src, w)

local kernels = { "blur_h", "blur_h_recip", "blur_v", "sobel", "copy2d" }
local sizes = { blur_h = { w }, blur_h_recip = { w }, blur_v = { w, h },
                sobel = { w, h }, copy2d = { w } }
local by_hand = { blur_h = true, blur_v = true, sobel = true }

-- Every form of a kernel agrees with its one-item form exactly (the same
-- operations in the same order on the same values).
local ref = dev:buffer("f32", w * h, { label = "ref" })
local bad = dev:buffer("i32", 1)
local function agrees(what, run)
  dst:fill(-1)
  run()
  bad:fill(0)
  prog.count_diff({ grid = w * h }, ref, dst, bad)
  assert(bad[1] == 0, ("%s differs in %d pixels"):format(what, bad[1]))
end
for _, k in ipairs(kernels) do
  local size = sizes[k]
  one[k](grid, src, ref, table.unpack(size))
  agrees(k, function() prog[k](grid, src, dst, table.unpack(size)) end)
  if by_hand[k] then
    agrees(k .. " x4 rows", function()
      one[k .. "_rows"](rows, src, dst, table.unpack(size))
    end)
  end
end
one.copy1d({ grid = w * h }, src, ref)
agrees("copy1d", function() prog.copy1d({ grid = w * h }, src, dst) end)
ref:close()

local cases = { { "buffer copy", function() dst:copy_from(src) end } }
local labels = { copy2d = "2-D copy", blur_h_recip = "blur_h * (1/3)" }
for _, k in ipairs(kernels) do
  local label, size = labels[k] or k, sizes[k]
  cases[#cases + 1] = { label, function()
    prog[k](grid, src, dst, table.unpack(size))
  end }
  cases[#cases + 1] = { label .. " one item per thread", function()
    one[k](grid, src, dst, table.unpack(size))
  end }
  if by_hand[k] then
    cases[#cases + 1] = { label .. " x4 rows", function()
      one[k .. "_rows"](rows, src, dst, table.unpack(size))
    end }
  end
end
cases[#cases + 1] = { "1-D copy", function()
  prog.copy1d({ grid = w * h }, src, dst)
end }
cases[#cases + 1] = { "1-D copy one item per thread", function()
  one.copy1d({ grid = w * h }, src, dst)
end }
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

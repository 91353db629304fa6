-- checked_dispatch.lua: what checked mode costs a dispatch, side by side
-- on one device, each kernel built plain and with -dc-checked:
--
--   float add   c[i] = a[i] + b[i], over grids of 2^18 work-items up to
--               2^MAX: no loop, so the price of the checks and, on a
--               GPU, of running the dispatch in slices of its groups,
--               watched by the host (docs/kernel-language.md, runaway
--               kernels);
--   16-step sum c[i] = a[i] + a[i + n] + ... + a[i + 15 n], over grids of
--               2^18 up to 2^(MAX-2) work-items: a loop, whose checked
--               form also polls (the time limit, and on a GPU the stop
--               word the host writes).
--
--   dclua bench/checked_dispatch.lua [DEVICE [MAX [RUNS]]]
--
-- Both forms' results are checked (the first, middle and last element)
-- before anything is timed. Prints harness records (bench/harness.h): a
-- row per case (median, min, max ns of one synchronous dispatch) and the
-- checked form's time over the plain one's (no goal: the price of the
-- checks).
-- SPDX-License-Identifier: MIT
local dc = require("dc")
local dev = dc.device(arg[1] or "cuda:0")
local max = math.tointeger(tonumber(arg[2] or 26))
local runs = math.tointeger(tonumber(arg[3] or 21))

local source = [[
__kernel void add(__global const float* a, __global const float* b,
                  __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void sum16(__global const float* a, __global float* c) {
  size_t i = get_global_id(0), n = get_global_size(0);
  float s = 0.0f;
  for (int k = 0; k < 16; ++k) s += a[i + k * n];
  c[i] = s;
}
]]
local plain = dev:compile(source, { name = "checked_dispatch.cl" })
local checked = dev:compile(source, { name = "checked_dispatch.cl",
                                      options = "-dc-checked" })

-- Runs |kernel| of both forms over 2^log2 work-items with |args|: checks
-- that c holds |want| at its first, middle and last element, then times
-- both forms and prints their rows and ratio under |name|.
local function compare(name, kernel, log2, args, c, want)
  local n = 1 << log2
  local function run(form) form[kernel]({ grid = n }, table.unpack(args)) end
  for _, form in ipairs({ plain, checked }) do
    c:fill(0)
    run(form)
    for _, i in ipairs({ 1, n // 2 + 1, n }) do
      local v = c:read(i, 1)[1]
      assert(v == want, ("%s, 2^%d: element %d is %g, not %g"):format(
             name, log2, i, v, want))
    end
  end
  local medians = {}
  for _, case in ipairs({ { "plain", plain }, { "checked", checked } }) do
    local label = ("%s 2^%d"):format(case[1], log2)
    local t = dc.profile(function() run(case[2]) end,
                         { runs = runs, warmup = 3 })
    medians[case[1]] = t.p50_ms
    print(("row\t%s\t%s\t%.0f\t%.0f\t%.0f"):format(name, label,
          t.p50_ms * 1e6, t.min_ms * 1e6, t.max_ms * 1e6))
  end
  print(("ratio\t%s\tchecked 2^%d\tplain 2^%d\t%.3f\t-"):format(name, log2,
        log2, medians.checked / medians.plain))
end

for log2 = 18, max, 2 do
  local n = 1 << log2
  local a, b, c = dev:buffer("f32", n), dev:buffer("f32", n), dev:buffer("f32", n)
  a:fill(1.5)
  b:fill(2.25)
  compare(("checked float add on %s"):format(dev.name), "add", log2,
          { a, b, c }, c, 3.75)
  a:close()
  b:close()
  c:close()
end

for log2 = 18, max - 2, 2 do
  local n = 1 << log2
  local a, c = dev:buffer("f32", 16 * n), dev:buffer("f32", n)
  a:fill(1.5)
  compare(("checked 16-step sum on %s"):format(dev.name), "sum16", log2,
          { a, c }, c, 24.0)
  a:close()
  c:close()
end

-- checked_dispatch.lua: what checked mode costs a dispatch: a float add
-- c[i] = a[i] + b[i] built plain and with -dc-checked, side by side on
-- one device, over grids of 2^18 work-items up to 2^MAX. On a GPU a
-- checked dispatch also runs in slices of its groups, watched by the host
-- (docs/kernel-language.md, runaway kernels), which this measures too.
--
--   dclua bench/checked_dispatch.lua [DEVICE [MAX [RUNS]]]
--
-- Both forms' results are checked (the first, middle and last element)
-- before anything is timed. Prints harness records (bench/harness.h): a row per case
-- (median, min, max ns of one synchronous dispatch) and the checked
-- form's time over the plain one's (no goal: the price of the checks).
-- SPDX-License-Identifier: MIT
local dc = require("dc")
local dev = dc.device(arg[1] or "cuda:0")
local max = math.tointeger(tonumber(arg[2] or 26))
local runs = math.tointeger(tonumber(arg[3] or 21))
local name = ("checked float add on %s"):format(dev.name)

local source = [[
__kernel void add(__global const float* a, __global const float* b,
                  __global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
]]
local plain = dev:compile(source, { name = "add.cl" })
local checked = dev:compile(source, { name = "add.cl", options = "-dc-checked" })

local log2 = 18
while log2 <= max do
  local n = 1 << log2
  local a, b, c = dev:buffer("f32", n), dev:buffer("f32", n), dev:buffer("f32", n)
  a:fill(1.5)
  b:fill(2.25)
  for _, form in ipairs({ plain, checked }) do
    c:fill(0)
    form.add({ grid = n }, a, b, c)
    for _, i in ipairs({ 1, n // 2 + 1, n }) do
      local v = c:read(i, 1)[1]
      assert(v == 3.75, ("2^%d: element %d is %g, not 3.75"):format(log2, i, v))
    end
  end
  local medians = {}
  for _, case in ipairs({ { "plain", plain }, { "checked", checked } }) do
    local label = ("%s 2^%d"):format(case[1], log2)
    local t = dc.profile(function() case[2].add({ grid = n }, a, b, c) end,
                         { runs = runs, warmup = 3 })
    medians[case[1]] = t.p50_ms
    print(("row\t%s\t%s\t%.0f\t%.0f\t%.0f"):format(name, label,
          t.p50_ms * 1e6, t.min_ms * 1e6, t.max_ms * 1e6))
  end
  print(("ratio\t%s\tchecked 2^%d\tplain 2^%d\t%.3f\t-"):format(name, log2,
        log2, medians.checked / medians.plain))
  a:close()
  b:close()
  c:close()
  log2 = log2 + 2
end

-- embed_config.lua: the configuration script of examples/c/embed_host.c.
--
-- The host shares `input` (a dc.buffer of n floats it made in C), `n`,
-- `gain` and the function `host_log`; this script compiles a kernel, runs
-- it over the input, and leaves `output` (a dc.buffer), `total` and
-- `summary` for the host to read back.
--   Run: ./build/embed_host examples/lua/embed_config.lua
local dc = require("dc")

-- The kernel runs where the host put the data (the CPU, in embed_host.c).
local dev = input.device
local prog = dev:compile [[
  __kernel void scale_bias(__global const float* in, __global float* out,
                           float gain, float bias) {
    size_t i = get_global_id(0);
    out[i] = gain * in[i] + bias;
  }
]]

local bias = 1.0
output = dev:buffer("f32", n)
prog.scale_bias({ grid = n }, input, output, gain, bias)

total = 0
for _, v in ipairs(output:read()) do total = total + v end
summary = ("%s: %d values on %s, total %.1f"):format(
  prog.scale_bias.name, n, dev.name, total)
host_log(summary)

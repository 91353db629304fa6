-- common.lua: what the pipeline scripts in scripts/ share: the options
-- every one of them takes, the device, the graph with its retry policy,
-- circuit breaker and fallback, and timed runs.
-- SPDX-License-Identifier: MIT
local dc = require("dc")

local common = {}

-- The options every script takes, in --help order. |defaults| overrides
-- some defaults by key, e.g. { warmup = 1 }.
function common.options(defaults)
  defaults = defaults or {}
  local list = {
    { name = "device", type = "string", arg = "NAME",
      help = "device to run on: cpu, cpu:1, cuda:0 (default: dc.device(), "
          .. "which dclua --device sets)" },
    { name = "fallback", type = "string", arg = "NAME", default = "cpu",
      help = "device a failing dispatch reruns on, or 'none'" },
    { name = "streams", type = "integer", arg = "N", default = 4, min = 1,
      max = 64, help = "streams the graph runs on" },
    { name = "retry-attempts", type = "integer", arg = "N", default = 3,
      min = 1, max = 100, help = "attempts of each op before it fails" },
    { name = "runs", type = "integer", arg = "N", default = 1, min = 1,
      max = 1000000, help = "timed runs of the graph" },
    { name = "warmup", type = "integer", arg = "N", default = 0, min = 0,
      max = 1000000, help = "untimed runs first" },
    { name = "check", type = "flag", default = false,
      help = "verify the results against a reference computed in Lua" },
    { name = "help", type = "flag", help = "print this help and exit" },
  }
  for _, opt in ipairs(list) do
    local key = opt.name:gsub("-", "_")
    if defaults[key] ~= nil then opt.default = defaults[key] end
  end
  return list
end

-- Appends the options of |extra| before the common ones, so that each
-- script's own options come first in --help.
function common.spec(spec, extra, defaults)
  local list = {}
  table.move(extra, 1, #extra, 1, list)
  table.move(common.options(defaults), 1, 8, #list + 1, list)
  spec.options = list
  return spec
end

-- The device of |config|: config.device, else dc.device().
function common.device(config)
  if config.device ~= nil then return dc.device(config.device) end
  return dc.device()
end

-- The retry policy of |config|: config.retry_attempts attempts, with
-- exponential backoff from 1 ms to 50 ms and full jitter.
function common.retry(config)
  return dc.retry { attempts = config.retry_attempts, base = 0.001,
                    factor = 2, max = 0.05, jitter = "full" }
end

-- A graph named |name| on |dev| with the resilience of |config|: the retry
-- policy and the fallback device. Its ops ask the breakers of their device
-- and kernels (dev:breaker), which the host may tune.
function common.graph(dev, config, name)
  local fallback = config.fallback
  if fallback == "none" then
    fallback = false
  else
    fallback = dc.device(fallback)  -- an unknown name fails here, clearly
  end
  return dc.graph {
    name = name,
    device = dev,
    streams = config.streams,
    retry = common.retry(config),
    fallback = fallback,
  }
end

-- Runs |g| config.warmup times untimed, then config.runs times timed.
-- Returns the last run's report and the timing: dc.profile's result, and
-- with |work| (flops, bytes per run) `rate`, the work per second of the
-- median run (steadier than the mean on a busy machine).
function common.run(g, config, work)
  local report
  local timing = dc.profile(function() report = g:run() end,
                            { runs = config.runs, warmup = config.warmup })
  if work then timing.rate = work / (timing.p50_ms / 1000) end
  return report, timing
end

-- One line about the timing: "time: 1.234 ms median, 1.100 ms best of 5
-- runs" (each run from the start of g:run() to its end).
function common.time_line(timing)
  if timing.runs == 1 then
    return ("time: %.3f ms (1 run)"):format(timing.p50_ms)
  end
  return ("time: %.3f ms median, %.3f ms best of %d runs"):format(
    timing.p50_ms, timing.min_ms, timing.runs)
end

-- Fails a verification: a plain error naming the script.
function common.check_failed(script, format, ...)
  error(("%s: check failed: %s"):format(script, format:format(...)), 0)
end

return common

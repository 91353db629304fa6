-- test_telemetry.lua: dc.stats (counters and kernel timings),
-- dc.reset_stats, dc.profile, dc.trace and the health report.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")
local counter_names = {
  "dispatches", "copies", "bytes_copied", "fills", "host_callbacks",
  "events_recorded", "event_waits", "commands_failed", "commands_skipped",
  "commands_cancelled", "pool_hits", "pool_misses", "event_pool_hits",
  "event_pool_misses",
}

local dir = t.tmpdir()
local read_file = t.read_file

--===-- Counters --------------------------------------------------------===--

dc.reset_stats()
do
  local s = dc.stats()
  for _, name in ipairs(counter_names) do
    t.equal(math.type(s[name]), "integer", name .. " is an integer")
    t.equal(s[name], 0, name .. " after a reset")
  end
  t.equal(next(s.kernels), nil, "no kernel timings after a reset")
  local fields = 0
  for _ in pairs(s) do fields = fields + 1 end
  t.equal(fields, #counter_names + 1, "the counters and kernels, no more")
end

do  -- buffers come from the memory pool: a miss, then a hit
  local a = dc.buffer("f32", 1024)
  a:close()
  local b = dc.buffer("f32", 1024)
  local s = dc.stats()
  t.equal(s.pool_hits + s.pool_misses, 2, "two allocations")
  t.check(s.pool_hits >= 1, "the second reused the first's block")
  b:close()
  dc.reset_stats()
  t.equal(dc.stats().pool_hits, 0, "reset zeroes the pool counters")
end

--===-- Kernel timings --------------------------------------------------===--

local prog = dev:compile [[
__kernel void scale(__global float* x, float f) {
  x[get_global_id(0)] *= f;
}
]]
local n = 4096
local x = dc.buffer("f32", n)
x:fill(1)

dc.reset_stats()
for _ = 1, 25 do prog.scale({ grid = n }, x, 1.0) end
do
  local s = dc.stats()
  t.equal(s.dispatches, 25, "dispatches counted")
  t.equal(s.commands_failed, 0, "none failed")
  local k = s.kernels.scale
  t.check(k ~= nil, "scale has timings")
  t.equal(k.count, 25, "every run timed")
  t.check(k.min_ms > 0, "min is positive")
  t.check(k.min_ms <= k.p50_ms and k.p50_ms <= k.p95_ms and
          k.p95_ms <= k.p99_ms and k.p99_ms <= k.max_ms,
          "min <= p50 <= p95 <= p99 <= max")
  t.near(k.total_ms, k.mean_ms * k.count, "total = mean * count", 1e-9)
  t.check(k.max_ms < 1000, "times are in milliseconds")
  t.equal(s.kernels.nope, nil, "kernels that never ran are absent")
end

-- A failed run is a dispatch and a failure, not a timing.
do
  local id = dc.fault.add { site = "launch", nth = 1 }
  t.raises("UNAVAILABLE", "injected fault", prog.scale, { grid = n }, x, 1.0)
  dc.fault.remove(id)
  local s = dc.stats()
  t.equal(s.kernels.scale.count, 25, "a failed run is not timed")
end

--===-- dc.profile ------------------------------------------------------===--

-- A loop of |n| steps, which takes some time.
local function spin(n)
  local acc = 0
  for i = 1, n do acc = acc + i % 7 end
  return acc
end

do
  local calls = 0
  local r = dc.profile(function() calls = calls + 1 end,
                       { runs = 7, warmup = 3 })
  t.equal(calls, 10, "warmup + runs calls")
  t.equal(r.runs, 7, "runs")
  for _, f in ipairs({ "mean_ms", "stddev_ms", "min_ms", "max_ms", "p50_ms",
                       "p95_ms", "p99_ms", "per_second" }) do
    t.equal(math.type(r[f]), "float", f .. " is a number")
  end
  t.check(r.min_ms <= r.p50_ms and r.p50_ms <= r.p95_ms and
          r.p95_ms <= r.p99_ms and r.p99_ms <= r.max_ms, "ordered")
  t.equal(r.work_per_second, nil, "no work, no rate")

  calls = 0
  dc.profile(function() calls = calls + 1 end)
  t.equal(calls, 11, "default: 10 runs after 1 warmup")

  -- Real work takes measurable time. (How much is the machine's business:
  -- a test must not depend on it being idle, so no ratio of two timings.)
  r = dc.profile(function() spin(160000) end, { runs = 9, work = 1000 })
  t.check(r.min_ms > 0 and r.max_ms < 10000, "times are in milliseconds")
  t.near(r.per_second, 1000 / r.mean_ms, "per_second = 1000 / mean_ms")
  t.near(r.work_per_second, 1000 * r.per_second, "work_per_second")

  -- Profiling a kernel: its dispatches are counted too.
  dc.reset_stats()
  r = dc.profile(function() prog.scale({ grid = n }, x, 1.0) end,
                 { runs = 20, warmup = 2, work = 4 * n })
  t.equal(dc.stats().kernels.scale.count, 22, "profiled dispatches timed")
  t.check(r.work_per_second > 0, "bytes per second")
end

do  -- errors the function raises come out as they were raised
  local calls = 0
  local err = t.raises("DATA_LOSS", "bad block", dc.profile, function()
    calls = calls + 1
    if calls == 4 then error(dc.error("DATA_LOSS", "bad block")) end
  end, { runs = 10 })
  t.equal(calls, 4, "the run stops at the error")
  t.check(dc.is_error(err), "the same error object")
  t.raises(nil, "plain", dc.profile, function() error("plain") end)
  local value = {}
  local ok, got = pcall(dc.profile, function() error(value) end)
  t.check(not ok and got == value, "any error value passes through")
  t.raises(nil, "function expected", dc.profile, 5)
  t.raises(nil, "table expected", dc.profile, spin, 5)
  t.raises(nil, "unknown option 'iterations'", dc.profile, print,
           { iterations = 3 })
  t.raises(nil, "field 'runs' must be an integer in [1,", dc.profile, print,
           { runs = 0 })
  t.raises(nil, "field 'runs' must be an integer", dc.profile, print,
           { runs = 2.5 })
  t.raises(nil, "field 'warmup' must be an integer in [0,", dc.profile, print,
           { warmup = -1 })
  t.raises(nil, "field 'work' must be a finite number >= 0", dc.profile,
           print, { work = -1 })
  t.raises(nil, "field 'work' must be a finite number >= 0", dc.profile,
           print, { work = math.huge })
  t.raises(nil, "field 'work' must be a finite number >= 0", dc.profile,
           print, { work = "4" })
end

--===-- The timeline ----------------------------------------------------===--

do
  t.equal(dc.trace.active(), false, "not recording at first")
  dc.trace.start()
  t.equal(dc.trace.active(), true, "recording")
  for _ = 1, 3 do prog.scale({ grid = n }, x, 1.0) end
  local path = dir .. "/run.json"
  dc.trace.write(path)  -- while recording
  local text = read_file(path)
  t.check(text:find('"traceEvents"', 1, true), "Chrome trace format")
  local spans = select(2, text:gsub('"name":"scale"', ""))
  t.equal(spans, 3, "one span per dispatch")
  t.check(text:find('"recording":true', 1, true), "written while recording")
  dc.trace.stop()
  t.equal(dc.trace.active(), false, "stopped")
  prog.scale({ grid = n }, x, 1.0)  -- not recorded
  dc.trace.write(path)
  text = read_file(path)
  t.equal(select(2, text:gsub('"name":"scale"', "")), 3, "kept after stop")
  t.check(text:find('"recording":false', 1, true), "written after stop")

  dc.trace.start(2)  -- discards the earlier spans; keeps two
  for _ = 1, 3 do prog.scale({ grid = n }, x, 1.0) end
  dc.trace.stop()
  dc.trace.write(path)
  text = read_file(path)
  t.equal(select(2, text:gsub('"name":"scale"', "")), 2, "max_spans")
  t.check(text:find('"dropped_spans":1', 1, true), "the dropped span")

  t.raises(nil, "max_spans must be >= 0", dc.trace.start, -1)
  t.raises(nil, "integer expected", dc.trace.start, "many")
  t.raises(nil, "string expected", dc.trace.write)
  t.raises("NOT_FOUND", dir .. "/no/such", dc.trace.write,
           dir .. "/no/such/t.json")
  t.equal(dc.trace.active(), false, "failed calls leave it stopped")

  -- Inside the runner's sandbox only the allowed directory is writable.
  local box = dir .. "/box"
  local child = t.write_file(dir .. "/child.lua", [[
    local dc = require("dc")
    local box = ...
    local ok, err = pcall(dc.trace.write, box .. "/../outside.json")
    print(not ok and err.code or "wrote")
    dc.trace.write(box .. "/inside.json")
    print("inside")
  ]])
  t.equal(t.run_sandboxed(box, child), "PERMISSION_DENIED\ninside\n",
          "sandboxed trace.write")
  t.check(io.open(dir .. "/outside.json") == nil, "nothing written outside")
  t.check(io.open(box .. "/inside.json") ~= nil, "written inside")
end

--===-- The health report -----------------------------------------------===--

do
  dc.reset_stats()
  t.equal(dev:health().state, "degraded", "the fault above: degraded")
  dev:reset_health()
  prog.scale({ grid = n }, x, 1.0)
  local h = dc.health()
  t.equal(h.engine, dc.version, "engine version")
  t.equal(h.devices[1].name, "cpu", "the cpu device")
  t.equal(h.devices[1].compute_units, dev.compute_units, "capabilities")
  t.equal(math.type(h.devices[1].memory_size), "integer", "integers decode")
  t.equal(h.devices[1].health.state, "healthy", "device health")
  t.equal(type(h.devices[1].memory_pool.hits), "number", "pool stats")
  t.equal(type(h.devices[1].event_pools.sync.reuse_ratio), "number",
          "event pool stats")
  local s = dc.stats()
  for _, name in ipairs(counter_names) do
    t.equal(h.counters[name], s[name], "health counter " .. name)
  end
  t.equal(h.counters.dispatches, 1, "the dispatch since the reset")
  t.equal(h.errors.total, 0, "no errors since the reset")
  t.equal(type(h.streams), "table", "streams is a list")

  -- A failure shows in the error summary, newest first.
  local id = dc.fault.add { site = "launch", nth = 1 }
  pcall(prog.scale, { grid = n }, x, 1.0)
  dc.fault.remove(id)
  h = dc.health()
  t.equal(h.errors.total, 1, "one error")
  t.equal(h.errors.by_status.UNAVAILABLE, 1, "counted by status")
  t.equal(h.errors.recent[1].status, "UNAVAILABLE", "the recent error")
  t.check(h.errors.recent[1].message:find("injected fault", 1, true),
          "its message")

  -- Stream work: counters, the report's streams (labels decode exactly,
  -- escapes and all) and a failed stream's error.
  dc.reset_stats()
  local label = 'naïve "q" \\ tab\t😀 \1 /'
  local s <close> = dev:stream { label = label }
  local buf <close> = dc.buffer("f32", 256)
  s:fill(buf, 2)
  s:write(buf, { 1, 2, 3, 4 })
  s:sync()
  local st = dc.stats()
  t.equal(st.fills, 1, "a stream fill")
  t.equal(st.copies, 1, "a stream write")
  t.equal(st.bytes_copied, 16, "its bytes")
  local function mine(report)
    for _, info in ipairs(report.streams) do
      if info.id == s.id then return info end
    end
  end
  local info = mine(dc.health())
  t.equal(info.label, label, "the label, decoded")
  t.equal(info.completed, 2, "completed commands")
  t.equal(info.error, nil, "no error: null decodes as absent")
  s:host(function() error(dc.error("DATA_LOSS", "block 3: bad sum")) end)
  s:fill(buf, 0)
  t.raises("DATA_LOSS", "block 3: bad sum", s.sync, s)
  info = mine(dc.health())
  t.equal(info.error, "DATA_LOSS", "the stream's error")
  t.check(info.skipped >= 1, "the skipped fill")
  t.equal(info.failed, 1, "the failed host function")
  st = dc.stats()
  t.equal(st.commands_failed, 1, "the failed host function, counted")
  t.equal(st.commands_skipped, info.skipped, "the skipped commands")
  s:reset()

  local json = dc.health_json()
  t.equal(type(json), "string", "health_json is a string")
  t.equal(json:sub(1, 1), "{", "a JSON object")
  t.check(json:find('"engine":"' .. dc.version .. '"', 1, true), "engine")

  local metrics = dc.metrics()
  t.equal(type(metrics), "string", "metrics is a string")
  t.check(metrics:find("# TYPE dc_dispatches counter\n", 1, true),
          "a counter family")
  t.check(metrics:find("\ndc_commands_failed_total 1\n", 1, true),
          "the failed host function, in the metrics")
  t.equal(metrics:sub(-6), "# EOF\n", "metrics end with # EOF")
end

assert(os.execute("rm -rf '" .. dir .. "'"))
print("telemetry: ok")

-- test_breaker.lua: circuit breakers as objects (dc.breaker), the
-- device's and kernels' breakers (dev:breaker), parameters at run time,
-- and breakers given to graphs and ops.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")
local prog = dev:compile [[
  __kernel void inc(__global float* x) { x[get_global_id(0)] += 1.0f; }
]]

--===-- dc.breaker: parameters --------------------------------------------===--

do
  local b = dc.breaker { failures = 5, window = 10, open_for = 2 }
  t.equal(b.name, "breaker", "default name")
  t.equal(b.failures, 5, "failures")
  t.equal(b.window, 10, "window")
  t.equal(b.open_for, 2, "open_for")
  t.equal(b.probes, 1, "default probes")
  t.equal(b.min_calls, 20, "default min_calls")
  t.equal(b.ratio, nil, "no ratio")
  t.equal(b.window_calls, nil, "a time window")
  t.equal(b.slow_call, nil, "no slow calls")
  t.equal(b.nothing, nil, "unknown field")
  local has = {}
  for _, c in ipairs(b.failure_codes) do has[c] = true end
  t.check(has.UNAVAILABLE and has.DEVICE_LOST and has.DATA_LOSS, "counted")
  t.check(not has.INVALID_ARGUMENT and not has.INTERNAL and
          not has.CIRCUIT_OPEN, "deterministic failures do not count")
  t.equal(tostring(b), "dc.breaker 'breaker' (closed) { failures = 5, " ..
          "min_calls = 20, window = 10, open_for = 2, probes = 1 }",
          "tostring")
  local d = dc.breaker { name = "mine" }
  t.equal(d.name, "mine", "name")
  t.equal(d.failures, nil, "no count by default")
  t.equal(d.ratio, 0.5, "default: a failure rate of half the calls")
  t.equal(d.window, 10, "default window")
  t.equal(d.open_for, 1, "default open_for")
  local c = dc.breaker { window_calls = 100, slow_call = 0.25,
                         slow_ratio = 0.8, ratio = 0.3, min_calls = 4,
                         probes = 2, failure_codes = { "COMPILE" } }
  t.equal(c.window_calls, 100, "window_calls")
  t.equal(c.slow_call, 0.25, "slow_call")
  t.equal(c.slow_ratio, 0.8, "slow_ratio")
  t.equal(c.ratio, 0.3, "ratio")
  t.equal(c.probes, 2, "probes")
  t.equal(table.concat(c.failure_codes, ","), "COMPILE", "failure_codes")
  t.equal(dc.breaker { slow_call = 1 }.slow_ratio, 1, "default slow ratio")
  local function bad(fields, pattern)
    t.raises("INVALID_ARGUMENT", pattern, dc.breaker, fields)
  end
  bad({ failure = 3 }, "unknown field 'failure'")
  bad({ failures = 0 }, "field 'failures' must be an integer from 1")
  bad({ ratio = 0 }, "field 'ratio' must be in (0, 1]")
  bad({ ratio = 1.5 }, "field 'ratio'")
  bad({ window = 1e-9 }, "field 'window' must be at least")
  bad({ window = -1 }, "field 'window'")
  bad({ window_calls = 0 }, "field 'window_calls' must be an integer from 1")
  bad({ window_calls = 2000000 }, "field 'window_calls'")
  bad({ slow_ratio = 0.5 }, "field 'slow_ratio' needs 'slow_call'")
  bad({ slow_call = 1, slow_ratio = 2 }, "field 'slow_ratio' must be in")
  bad({ slow_call = 0 }, "field 'slow_call'")
  bad({ open_for = 0 }, "field 'open_for'")
  bad({ probes = 0 }, "field 'probes'")
  bad({ min_calls = -2 }, "field 'min_calls'")
  bad({ name = "" }, "field 'name' must be a string of 1 to 63 bytes")
  bad({ name = ("n"):rep(64) }, "field 'name'")
  bad({ failure_codes = { "OK" } }, "names an unknown status 'OK'")
  bad({ failure_codes = "transient" }, "names an unknown status")
  t.raises(nil, "table expected", dc.breaker, "x")
end

--===-- States, by hand ---------------------------------------------------===--

do
  local b = dc.breaker { name = "hand", failures = 1, open_for = 60 }
  local state, stats = b:state()
  t.equal(state, "closed", "closed")
  t.equal(stats.name, "hand", "stats.name")
  t.equal(stats.calls, 0, "no calls")
  t.equal(b:trip(), "open", "tripped")
  t.check(b:stats().open_remaining > 59, "open_remaining")
  t.check(tostring(b):find("(open)", 1, true), tostring(b))
  t.equal(b:reset(), "closed", "reset")
  b:close()
  t.raises(nil, "attempt to use a closed dc.breaker", b.state, b)
  t.equal(tostring(b), "dc.breaker (closed)", "closed tostring")
  b:close()  -- twice is fine
end

--===-- A graph's own breaker ---------------------------------------------===--

do
  local x = dev:buffer("f32", 8)
  local mine = dc.breaker { name = "mine", failures = 2, open_for = 30 }
  local g = dc.graph { name = "g1", breaker = mine, retry = { attempts = 1 },
                       fallback = false }
  g:dispatch("inc", prog.inc, { grid = 8 }, { x })
  -- Another graph on the same device with other parameters: no conflict.
  local h = dc.graph { name = "g2", breaker = { failures = 50 },
                       retry = { attempts = 1 }, fallback = false }
  h:dispatch("inc", prog.inc, { grid = 8 }, { x })
  t.equal(g:run().ok, true, "g runs")
  t.equal(h:run().ok, true, "h runs")
  t.equal(mine:stats().successes, 1, "g's ops asked its breaker")
  local rule = dc.fault.add { site = "launch", name = "inc",
                              status = "UNAVAILABLE" }
  t.raises("UNAVAILABLE", "injected fault", g.run, g)
  t.raises("UNAVAILABLE", "injected fault", g.run, g)
  t.equal(mine:state(), "open", "opened at 2 failures")
  dc.fault.remove(rule)
  local err = t.raises("CIRCUIT_OPEN", "circuit 'mine' is open", g.run, g)
  t.equal(err.op, "inc", "refused op")
  t.equal(h:run().ok, true, "the other graph's breaker is its own")
  -- The device's breaker saw none of it.
  local cpu = dev:breaker()
  t.equal(cpu.name, "cpu", "the device's breaker")
  t.equal(cpu:state(), "closed", "device breaker closed")
  t.equal(cpu:stats().failures, 0, "device breaker: no failures")
  -- Sharing is passing the same object: a graph made later shares it.
  local k = dc.graph { breaker = mine, retry = { attempts = 1 },
                       fallback = false }
  k:dispatch("inc", prog.inc, { grid = 8 }, { x })
  t.raises("CIRCUIT_OPEN", "circuit 'mine'", k.run, k)
  mine:reset()
  t.equal(k:run().ok, true, "shared breaker reset")
  -- The graph keeps its breaker alive after the script drops it.
  mine:close()
  t.equal(g:run().ok, true, "g still runs with its breaker")
end

--===-- An op's own breaker -----------------------------------------------===--

do
  local x = dev:buffer("f32", 8)
  local op_breaker = dc.breaker { name = "one-op", failures = 1 }
  local g = dc.graph { retry = { attempts = 1 }, fallback = false }
  g:dispatch("a", prog.inc, { grid = 8 }, { x }, { breaker = op_breaker })
  g:dispatch("b", prog.inc, { grid = 8 }, { x },
             { after = { "a" }, breaker = { failures = 3 } })
  t.equal(g:run().ok, true, "ops with breakers run")
  t.equal(op_breaker:stats().successes, 1, "op a asked its breaker")
  op_breaker:trip()
  local err = t.raises("CIRCUIT_OPEN", "circuit 'one-op'", g.run, g)
  t.equal(err.op, "a", "op a refused")
  t.raises("INVALID_ARGUMENT", "option 'breaker' must be a dc.breaker or a " ..
           "table, got number", g.dispatch, g, "c", prog.inc, { grid = 8 },
           { x }, { breaker = 3 })
end

--===-- The device's and kernels' breakers --------------------------------===--

do
  local x = dev:buffer("f32", 8)
  local g = dc.graph { retry = { attempts = 1 }, fallback = false }
  g:dispatch("inc", prog.inc, { grid = 8 }, { x })
  g:run()
  local cpu, kernel = dev:breaker(), dev:breaker(prog.inc)
  t.equal(kernel.name, "cpu/inc", "kernel breaker by kernel")
  t.equal(dev:breaker("inc").name, "cpu/inc", "kernel breaker by name")
  t.check(kernel:stats().successes >= 1, "kernel breaker counted")
  local names = {}
  for _, b in ipairs(dc.breakers()) do names[b.name] = b end
  t.check(names.cpu and names["cpu/inc"], "listed")
  -- Tuned at run time: a count rule, open for a minute.
  t.equal(cpu:configure { failures = 2, open_for = 60 }, cpu, "returns self")
  t.equal(cpu.failures, 2, "new failures")
  t.equal(dev:breaker().failures, 2, "the same breaker")
  local rule = dc.fault.add { site = "launch", name = "inc",
                              status = "UNAVAILABLE" }
  t.raises("UNAVAILABLE", nil, g.run, g)
  t.raises("UNAVAILABLE", nil, g.run, g)
  dc.fault.remove(rule)
  t.equal(cpu:state(), "open", "the device's breaker opened")
  t.equal(dev:health().state, "quarantined", "an open breaker quarantines")
  t.raises("CIRCUIT_OPEN", "circuit 'cpu' is open", g.run, g)
  t.equal(cpu:reset(), "closed", "reset")
  kernel:reset()
  t.equal(dev:health().state, "degraded", "recent failures: degraded")
  dev:reset_health()
  t.equal(dev:health().state, "healthy", "healthy after reset_health")
  cpu:configure {}
  t.equal(cpu.ratio, 0.5, "back to the defaults")
  t.raises("INVALID_ARGUMENT", "b:configure: field 'name' cannot change",
           cpu.configure, cpu, { name = "x" })
  t.raises("INVALID_ARGUMENT", "b:configure: field 'ratio'", cpu.configure,
           cpu, { ratio = 9 })
  t.raises("INVALID_ARGUMENT", "too long", dev.breaker, dev, ("k"):rep(80))
  -- Deterministic failures do not count against the device.
  local before = cpu:stats().failures
  local bug = dc.fault.add { site = "launch", name = "inc",
                             status = "INTERNAL" }
  t.raises("INTERNAL", nil, g.run, g)
  dc.fault.remove(bug)
  t.equal(cpu:stats().failures, before, "INTERNAL not counted")
  t.equal(dev:health().state, "healthy", "still healthy")
end

--===-- In a sandbox ------------------------------------------------------===--

do
  local dir = t.tmpdir()
  local child = t.write_file(dir .. "/child.lua", [[
    local dc = require("dc")
    local ok, err = pcall(function()
      return dc.device("cpu"):breaker():configure { failures = 1 }
    end)
    print(not ok and err.code or "configured")
    local mine = dc.breaker { failures = 1 }
    mine:configure { failures = 2 }
    print(mine.failures)
  ]])
  t.equal(t.run_sandboxed(dir .. "/box", child), "PERMISSION_DENIED\n2\n",
          "a sandbox tunes its own breakers, not the engine's")
end

--===-- A retry loop with a breaker -----------------------------------------===--

do
  local b = dc.breaker { name = "calls", failures = 2, open_for = 0.05 }
  local calls = 0
  local ok, err = pcall(dc.retry_call, { attempts = 2, base = 0.001 },
                        function()
                          calls = calls + 1
                          error(dc.error("UNAVAILABLE", "busy"))
                        end, b)
  t.check(not ok and err.code == "UNAVAILABLE", "the loop gave up")
  t.equal(calls, 2, "two attempts")
  t.equal(b:state(), "open", "the breaker counted both")
  -- Open: the first attempt is refused, the retry waits for the probe.
  local n = 0
  local result = dc.retry_call({ attempts = 3, base = 0.001 }, function()
    n = n + 1
    return "ok"
  end, b)
  t.equal(result, "ok", "the probe's result")
  t.equal(n, 1, "fn ran once, as the probe")
  t.equal(b:state(), "closed", "closed by the probe")
  t.check(b:stats().rejections >= 1, "the refusal was counted")
  -- Refused with no attempt left: CIRCUIT_OPEN, naming the breaker.
  b:trip()
  err = t.raises("CIRCUIT_OPEN", "circuit 'calls' is open", dc.retry_call,
                 { attempts = 1 }, function() return 1 end, b)
  t.raises(nil, "dc.breaker expected", dc.retry_call, nil,
           function() end, 5)
end

print("breaker: ok")

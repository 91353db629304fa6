-- test_policy.lua: retry policies (dc.retry), the device-wide default
-- policy and dc.retry_call.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

--===-- dc.retry ----------------------------------------------------------===--

do
  local p = dc.retry { attempts = 4, base = 0.005, factor = 2, max = 0.1,
                       jitter = "full" }
  t.equal(p.attempts, 4, "attempts")
  t.near(p.base, 0.005, "base")
  t.equal(p.factor, 2, "factor")
  t.near(p.max, 0.1, "max")
  t.equal(p.jitter, "full", "jitter")
  t.equal(p.budget, nil, "no budget")
  t.equal(p.retry_on, "transient", "retry_on")
  t.equal(p.seed, 0, "seed")
  t.equal(p.nothing, nil, "unknown field reads nil")
  t.equal(tostring(p), 'dc.retry { attempts = 4, base = 0.005, factor = 2, ' ..
          'max = 0.1, jitter = "full", retry_on = "transient" }', "tostring")
  -- Defaults: 3 attempts, 1 ms doubling up to 1 s, full jitter.
  local d = dc.retry {}
  t.equal(d.attempts, 3, "default attempts")
  t.near(d.base, 0.001, "default base")
  t.equal(d.factor, 2, "default factor")
  t.equal(d.max, 1, "default max")
  t.equal(d.jitter, "full", "default jitter")
  local b = dc.retry { budget = 0.25, seed = 7, jitter = "decorrelated" }
  t.near(b.budget, 0.25, "budget")
  t.equal(b.seed, 7, "seed")
  t.equal(b.jitter, "decorrelated", "decorrelated")
  t.check(tostring(b):find("budget = 0.25", 1, true), tostring(b))
  for _, j in ipairs { "none", "equal" } do
    t.equal(dc.retry { jitter = j }.jitter, j, "jitter " .. j)
  end
  -- retry_on: exactly the codes and classes listed.
  local codes = dc.retry { retry_on = { "UNAVAILABLE", "DATA_LOSS" } }
  t.equal(table.concat(codes.retry_on, ","), "UNAVAILABLE,DATA_LOSS",
          "listed codes")
  t.check(tostring(codes):find('retry_on = { "UNAVAILABLE", "DATA_LOSS" }',
                               1, true), tostring(codes))
  t.equal(dc.retry { retry_on = "all" }.retry_on, "all", "all")
  t.equal(dc.retry { retry_on = { "transient", "deterministic", "device" } }
          .retry_on, "all", "the three classes")
  local dev = dc.retry { retry_on = "device" }
  t.equal(table.concat(dev.retry_on, ","), "DATA_LOSS,DEVICE_LOST",
          "the device class")
  local one = dc.retry { retry_on = "ABORTED" }
  t.equal(table.concat(one.retry_on, ","), "ABORTED", "one code")
  local never = dc.retry { never_retry = { "UNAVAILABLE" } }
  local list = never.retry_on
  t.equal(type(list), "table", "never_retry narrows the list")
  for _, c in ipairs(list) do t.check(c ~= "UNAVAILABLE", "never retried") end
  t.equal(#list, 5, "the other transient codes")
end

-- Validation: each error names the field.
do
  local function bad(fields, pattern)
    t.raises("INVALID_ARGUMENT", pattern, dc.retry, fields)
  end
  bad({ attempt = 3 }, "unknown field 'attempt'")
  bad({ attempts = 0 }, "field 'attempts' must be an integer from 1")
  bad({ attempts = 1.5 }, "field 'attempts'")
  bad({ attempts = "3" }, "field 'attempts'")
  bad({ base = -1 }, "field 'base' must be a positive number of seconds")
  bad({ base = 0 }, "field 'base'")
  bad({ base = 0 / 0 }, "field 'base' must be a finite number")
  bad({ base = 2 }, "field 'base' (2 s) exceeds 'max' (1 s, the default)")
  bad({ base = 0.5, max = 0.1 }, "exceeds 'max' (0.1 s)")
  bad({ factor = 0.5 }, "field 'factor' must be >= 1, got 0.5")
  bad({ factor = 1 / 0 }, "field 'factor' must be a finite number")
  bad({ jitter = "lots" }, "field 'jitter' must be \"none\", \"full\"")
  bad({ budget = 0 }, "field 'budget'")
  bad({ retry_on = "sometimes" }, "names an unknown status 'sometimes'")
  bad({ retry_on = { 1 } }, "must list status names")
  bad({ retry_on = {} }, "field 'retry_on' is an empty list")
  bad({ retry_on = { "INVALID_ARGUMENT" } }, "never retried")
  bad({ retry_on = "CANCELLED" }, "never retried")
  bad({ never_retry = { "transient" } }, "names an unknown status")
  bad({ seed = -1 }, "field 'seed'")
  t.raises(nil, "table expected", dc.retry, 3)
  t.raises(nil, "table expected", dc.retry)
end

--===-- The device-wide default -------------------------------------------===--

do
  local dev = dc.device("cpu")
  t.equal(dev:retry().attempts, 3, "built-in default")
  t.check(dev:set_retry(dc.retry { attempts = 6, jitter = "none" }) == dev,
          "set_retry chains")
  local p = dev:retry()
  t.equal(p.attempts, 6, "set")
  t.equal(p.jitter, "none", "set jitter")
  dev:set_retry { attempts = 2 }  -- a plain table
  t.equal(dev:retry().attempts, 2, "from a table")
  dev:set_retry(nil)
  t.equal(dev:retry().attempts, 3, "back to the defaults")
  t.raises("INVALID_ARGUMENT", "field 'factor'", dev.set_retry, dev,
           { factor = 0 })
  t.raises(nil, "dc.retry or table expected", dev.set_retry, dev, 5)
end

--===-- dc.retry_call -----------------------------------------------------===--

do
  local fast = dc.retry { attempts = 5, base = 0.001, jitter = "none" }
  local seen = {}
  local a, b = dc.retry_call(fast, function(attempt)
    seen[#seen + 1] = attempt
    if attempt < 3 then error(dc.error("UNAVAILABLE", "busy " .. attempt)) end
    return "done", attempt
  end)
  t.equal(a, "done", "result")
  t.equal(b, 3, "third attempt")
  t.equal(table.concat(seen, ","), "1,2,3", "attempt numbers")
  t.equal(select("#", dc.retry_call(nil, function() end)), 0, "no results")
  -- Giving up: the last error, with the reason and the attempts.
  local err = t.raises("UNAVAILABLE", "busy 5 (gave up after 5 attempts)",
                       dc.retry_call, fast, function(n)
                         error(dc.error("UNAVAILABLE", "busy " .. n))
                       end)
  t.equal(err.attempts, 5, "err.attempts")
  -- Not retryable: one attempt, the message as it was.
  local calls = 0
  err = t.raises("DATA_LOSS", "gone", dc.retry_call, fast, function()
    calls = calls + 1
    error(dc.error("DATA_LOSS", "gone"))
  end)
  t.equal(calls, 1, "permanent: not retried")
  t.equal(err.message, "gone", "message unchanged")
  t.equal(err.attempts, 1, "one attempt")
  -- A plain Lua error is not a status: raised unchanged, not retried.
  calls = 0
  err = t.raises(nil, "plain", dc.retry_call, fast, function()
    calls = calls + 1
    error("plain", 0)
  end)
  t.equal(err, "plain", "the same value")
  t.equal(calls, 1, "plain errors are not retried")
  -- retry_on chooses the codes.
  calls = 0
  t.raises("DATA_LOSS", "(gave up after 2 attempts)", dc.retry_call,
           { attempts = 2, base = 0.001, retry_on = "DATA_LOSS" }, function()
             calls = calls + 1
             error(dc.error("DATA_LOSS", "again"))
           end)
  t.equal(calls, 2, "DATA_LOSS retried when listed")
  calls = 0
  t.raises("UNAVAILABLE", nil, dc.retry_call,
           { attempts = 3, retry_on = "DATA_LOSS" }, function()
             calls = calls + 1
             error(dc.error("UNAVAILABLE", "x"))
           end)
  t.equal(calls, 1, "UNAVAILABLE not listed: not retried")
  -- A budget stops the loop before a delay that would not fit.
  err = t.raises("ABORTED", "the 0.03 s budget would be exceeded",
                 dc.retry_call, { attempts = 50, base = 0.01, budget = 0.03,
                                  jitter = "none" }, function()
                   error(dc.error("ABORTED", "x"))
                 end)
  t.equal(err.attempts, 2, "10 ms, then 20 more would pass 30 ms")
  -- The delays are slept: measured by a graph op that calls it.
  local g = dc.graph()
  g:host("h", function()
    dc.retry_call({ attempts = 3, base = 0.02, jitter = "none" }, function(n)
      if n < 3 then error(dc.error("UNAVAILABLE", "x")) end
    end)
  end)
  t.check(g:run().h.time_ms >= 59, "slept 20 + 40 ms")
  t.raises(nil, "function expected", dc.retry_call, fast, 5)
  t.raises("INVALID_ARGUMENT", "unknown field", dc.retry_call, { x = 1 },
           function() end)
end

print("policy: ok")

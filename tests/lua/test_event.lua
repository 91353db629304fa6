-- test_event.lua: events (records, waits, queries, timing, completion
-- callbacks through dc.poll) and the event pool.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

-- Burns |ms| milliseconds of the Lua thread.
local function busy(ms)
  local start = os.clock()
  while (os.clock() - start) * 1000 < ms do end
end

--===-- Creating, recording, waiting ------------------------------------===--

do
  local ev <close> = dev:event()
  t.equal(ev:query(), "done", "an unrecorded event counts as done")
  t.check(ev:wait() == ev, "waiting for an unrecorded event returns")
  t.check(ev.device == dev, "ev.device")
  t.equal(ev.nothing, nil, "unknown field")
  t.equal(tostring(ev), "dc.event: done on cpu", "tostring")
  local s <close> = dev:stream()
  t.check(s:record(ev) == ev, "s:record(ev) records that event")
  ev:wait()
  local made = s:record()
  t.equal(getmetatable(made).__name, "dc.event", "s:record() makes one")
  made:wait(1000)
  local timing = s:record { timing = true }
  timing:wait()
  t.equal(timing:elapsed(timing), 0.0, "elapsed to itself")
end

t.raises(nil, "unknown option 'timeing' (expected timing)",
         dev.event, dev, { timeing = true })
t.raises(nil, "boolean field 'timing' expected", dev.event, dev,
         { timing = 1 })
t.raises(nil, "table expected, got string", dev.event, dev, "timing")
do
  local s <close> = dev:stream()
  t.raises(nil, "dc.event or options table expected", s.record, s, 5)
  t.raises(nil, "bad argument #1 to 'record' (unknown option 'sync' " ..
           "(expected timing))", function() s:record { sync = true } end)
  t.raises(nil, "boolean field 'timing' expected", s.record, s,
           { timing = "yes" })
  t.raises(nil, "dc.event expected", s.wait, s, {})
end

-- A record is pending while the stream is held by a host function that
-- has not run yet (Lua callbacks run only in blocking calls and dc.poll).
do
  local s <close> = dev:stream()
  local ran = false
  s:host(function() ran = true end)
  local ev = s:record()
  t.equal(ev:query(), "pending", "pending behind a host function")
  t.check(tostring(ev):find("pending", 1, true), "tostring(pending)")
  ev:wait()
  t.check(ran, "the wait ran the host function")
  t.equal(ev:query(), "done", "done after the wait")
end

-- Generations: a wait targets the record made before it. s1 records ev,
-- s2 waits for it, then s1 records ev again behind a host function that
-- only a poll can run: s2 must drain without it.
do
  local s1 <close> = dev:stream()
  local s2 <close> = dev:stream()
  local x = dev:buffer("i32", 1)
  local ev = dev:event()
  s1:record(ev)
  s2:wait(ev)
  s2:fill(x, 2)
  s1:host(function() end)
  s1:record(ev)                   -- a later generation
  local start = os.clock()
  while s2:query() ~= "done" and os.clock() - start < 10 do end
  t.equal(s2:query(), "done", "s2 drained without the later record")
  t.equal(x[1], 2, "s2's fill ran")
  t.equal(ev:query(), "pending", "the later generation is pending")
  s1:sync()
end

-- A poisoned event raises the stream's error where it is waited for.
do
  local s <close> = dev:stream { label = "bad" }
  s:host(function() error(dc.error("DATA_LOSS", "disk gone")) end)
  local ev = s:record()
  local e = t.raises("DATA_LOSS", "disk gone", ev.wait, ev)
  t.check(e.message:find("host function on stream 'bad'", 1, true),
          e.message)
  t.raises("DATA_LOSS", "disk gone", ev.query, ev)
  t.check(tostring(ev):find("DATA_LOSS", 1, true), "tostring(poisoned)")
  s:reset()
end

--===-- Timeouts --------------------------------------------------------===--

-- A host function of |s1| blocks the Lua thread while an event of |s2|,
-- which waits for a record of |s1| after that function, is waited for with
-- a timeout: the wait runs out. (Waiting for a later record of |s1| itself
-- would be refused: see test_stream.lua.)
do
  local s1 <close> = dev:stream()
  local s2 <close> = dev:stream()
  local ev
  local timed_out
  s1:host(function()
    local ok, err = pcall(ev.wait, ev, 5)
    timed_out = not ok and err
  end)
  s2:wait(s1:record())
  ev = s2:record()
  s1:sync()
  t.equal(timed_out.code, "DEADLINE_EXCEEDED", "timed wait runs out")
  t.check(timed_out.message:find("did not complete", 1, true),
          timed_out.message)
  ev:wait(0)
  t.raises(nil, "timeout must be >= 0 milliseconds", ev.wait, ev, -5)
end

--===-- Timing ----------------------------------------------------------===--

do
  local s <close> = dev:stream()
  local t0 = s:record { timing = true }
  s:host(function() busy(30) end)
  local t1 = s:record { timing = true }
  s:sync()
  local ms = t0:elapsed(t1)
  t.check(math.type(ms) == "float", "elapsed is a float")
  t.check(ms >= 15 and ms < 5000, "elapsed about 30 ms: " .. ms)
  local ns = t0:elapsed_ns(t1)
  t.check(math.type(ns) == "integer", "elapsed_ns is an integer")
  t.near(ms, ns / 1e6, "elapsed and elapsed_ns agree")
  t.equal(t1:elapsed_ns(t0), -ns, "reversed: negative")
  local plain = s:record()
  s:sync()
  t.raises("INVALID_ARGUMENT", "is not a timing event",
           t0.elapsed, t0, plain)
  local fresh = dev:event { timing = true }
  t.raises("FAILED_PRECONDITION", nil, t0.elapsed, t0, fresh)
  t.raises(nil, "dc.event expected", t0.elapsed, t0, 5)
  -- Pending: the record behind a host function that has not run.
  s:host(function() end)
  local later = s:record { timing = true }
  t.raises("FAILED_PRECONDITION", nil, t0.elapsed, t0, later)
  s:sync()
  t.check(t0:elapsed(later) >= ms, "later record, later time")
end

--===-- Completion callbacks --------------------------------------------===--

-- Polls until |done()| holds (engine threads post calls asynchronously),
-- for at most 10 s of CPU time; returns how many calls the polls ran.
local function poll_until(done)
  local ran, start = 0, os.clock()
  while not done() and os.clock() - start < 10 do ran = ran + dc.poll() end
  t.check(done(), "condition reached while polling")
  return ran
end

do
  local s <close> = dev:stream()
  local calls = {}
  s:host(function() end)
  local ev = s:record()
  t.check(ev:on_complete(function(e, err)
    calls[#calls + 1] = { e = e, err = err }
  end) == ev, "on_complete returns the event")
  -- The host function needs the Lua thread, so the event stays pending
  -- until a poll runs it (once the stream thread has posted it).
  -- The callback is posted when the event completes; it runs at a poll,
  -- on this thread, and nowhere else.
  t.equal(#calls, 0, "not called before the event completes")
  t.equal(poll_until(function() return #calls == 1 end), 2,
          "dc.poll ran the host function and the completion callback")
  t.equal(#calls, 1, "called once")
  t.check(calls[1].e == ev, "gets its event")
  t.equal(calls[1].err, nil, "no error")
  t.equal(dc.poll(), 0, "nothing left to run")
  -- On an event already complete: posted at once.
  ev:on_complete(function(e, err) calls[#calls + 1] = { e = e, err = err } end)
  t.equal(dc.poll(), 1, "already complete: runs at the next poll")
  t.equal(#calls, 2, "called")
  -- A blocking wait runs posted callbacks too.
  local waited = false
  s:host(function() end)
  local ev2 = s:record()
  ev2:on_complete(function() waited = true end)
  s:sync()
  t.check(waited, "sync ran the completion callback")
end

-- A poisoned event: the callback gets the error object.
do
  local s <close> = dev:stream()
  s:host(function() error(dc.error("ABORTED", "stopped early")) end)
  local ev = s:record()
  local got
  ev:on_complete(function(_, err) got = err end)
  pcall(s.sync, s)
  dc.poll()
  t.check(dc.is_error(got), "an error object")
  t.equal(got.code, "ABORTED", "its code")
  t.check(got.message:find("stopped early", 1, true), got.message)
  s:reset()
end

-- An error raised by a completion callback is raised again by dc.poll.
do
  local s <close> = dev:stream()
  local ev = s:record()
  ev:wait()
  local later = false
  ev:on_complete(function() error(dc.error("INTERNAL", "callback broke")) end)
  ev:on_complete(function() later = true end)
  t.raises("INTERNAL", "callback broke", dc.poll)
  t.check(later, "the other callbacks still ran")
  t.equal(dc.poll(), 0, "the failed call is gone")
end

-- Up to 8 callbacks may be pending on an event.
do
  local s <close> = dev:stream()
  s:host(function() end)
  local ev = s:record()
  local n = 0
  for _ = 1, 8 do ev:on_complete(function() n = n + 1 end) end
  t.raises("RESOURCE_EXHAUSTED", "8 callbacks pending", ev.on_complete, ev,
           function() end)
  s:sync()
  t.equal(n, 8, "all eight ran")
  t.raises(nil, "function expected, got no value", ev.on_complete, ev)
end

--===-- The event pool --------------------------------------------------===--

do
  -- Collected dc.event objects return their events to the pool: keep the
  -- collector out of the counts.
  collectgarbage()
  collectgarbage("stop")
  dev:event_pool_trim(0)
  local before = dev:event_pool_stats()
  for _, key in ipairs { "created", "reused", "destroyed", "in_use",
                         "peak_in_use", "cached" } do
    t.check(math.type(before[key]) == "integer", "pool stat " .. key)
  end
  t.check(math.type(before.reuse_ratio) == "float", "reuse_ratio")
  t.equal(before.quarantine, 16, "the quarantine")
  t.check(before.cached <= before.quarantine, "trimmed to the quarantine")
  t.check(dev:event_pool_reserve(5) == dev, "reserve returns the device")
  local after = dev:event_pool_stats("sync")
  t.equal(after.cached, 5 + after.quarantine, "reserved 5 beyond it")
  t.equal(after.created, before.created + after.cached - before.cached,
          "created what was missing")
  local evs = {}
  for i = 1, 5 do evs[i] = dev:event() end
  local used = dev:event_pool_stats()
  t.equal(used.reused, after.reused + 5, "served from the cache")
  t.equal(used.in_use, after.in_use + 5, "in use")
  t.check(used.peak_in_use >= used.in_use, "peak")
  for i = 1, 5 do evs[i]:close() end
  t.equal(dev:event_pool_stats().in_use, after.in_use, "returned")
  dev:event_pool_reserve(3, "timing")
  t.check(dev:event_pool_stats("timing").cached >= 3, "timing pool")
  local freed = dev:event_pool_trim(1)
  t.check(freed >= 6, "trim frees beyond 1 per pool: " .. freed)
  t.equal(dev:event_pool_stats().cached, 16, "sync pool trimmed")
  t.equal(dev:event_pool_stats("timing").cached, 16, "timing pool trimmed")
  t.equal(dev:event_pool_trim(), 0, "the quarantine stays")
  -- A closed event is refused, not taken for the next one.
  local closed = dev:event()
  closed:close()
  local next_one = dev:event()
  t.raises(nil, "attempt to use a closed dc.event", closed.query, closed)
  next_one:close()
  collectgarbage("restart")
end

t.raises(nil, "invalid option 'fast'", dev.event_pool_stats, dev, "fast")
t.raises(nil, "expected a count from 0", dev.event_pool_reserve, dev, -1)
t.raises(nil, "number expected, got no value", dev.event_pool_reserve, dev)
t.raises(nil, "expected a count >= 0", dev.event_pool_trim, dev, -2)

--===-- Lifetime --------------------------------------------------------===--

do
  local ev = dev:event()
  ev:close()
  ev:close()
  t.raises(nil, "attempt to use a closed dc.event", ev.wait, ev)
  t.equal(tostring(ev), "dc.event (closed)", "tostring(closed)")
  local s <close> = dev:stream()
  t.raises(nil, "attempt to use a closed dc.event", s.wait, s, ev)
  -- Dropped while recorded: the record still completes.
  local in_use = dev:event_pool_stats().in_use
  do
    local e <close> = s:host(function() end):record()
  end
  s:sync()
  t.equal(dev:event_pool_stats().in_use, in_use, "dropped event returned")
  -- Collected with a callback pending: the callback keeps it alive.
  local fired = false
  s:host(function() end):record():on_complete(function(e)
    fired = tostring(e) == "dc.event: done on cpu"
  end)
  collectgarbage()
  s:sync()
  t.check(fired, "callback of a collected event ran with its event")
end

print("test_event: ok")

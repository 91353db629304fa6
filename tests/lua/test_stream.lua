-- test_stream.lua: streams (commands, ordering, host functions, failures,
-- cancellation, reads), stream groups and cancel tokens, checked against
-- values computed in Lua.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

local function list(tbl) return table.concat(tbl, ",") end

-- Burns |ms| milliseconds of the Lua thread.
local function busy(ms)
  local start = os.clock()
  while (os.clock() - start) * 1000 < ms do end
end

local prog = dev:compile([[
  __kernel void inc(__global int* x, int by) {
    x[get_global_id(0)] += by;
  }
  __kernel void poke(__global int* x) {
    x[get_global_id(0) + 100] = 1;
  }
]], { name = "stream_test.cl", options = "-dc-checked" })

--===-- Creating streams -------------------------------------------------===--

do
  local s <close> = dev:stream()
  t.equal(s.priority, "normal", "default priority")
  t.check(s.label:match("^stream %d+$"), "default label " .. s.label)
  t.check(math.type(s.id) == "integer" and s.id >= 1, "s.id")
  t.check(s.device == dev, "s.device")
  t.equal(s.nothing, nil, "unknown field")
  local h <close> = dev:stream { priority = "high", label = "compute" }
  t.equal(h.priority, "high", "high priority")
  t.equal(h.label, "compute", "label")
  t.check(h.id ~= s.id, "ids differ")
  t.equal(tostring(h), ("dc.stream: 'compute' #%d on cpu"):format(h.id),
          "tostring")
  t.equal(dev:stream({ priority = "low" }).priority, "low", "low priority")
end

t.raises(nil, "field 'priority' must be \"low\", \"normal\" or \"high\"",
         dev.stream, dev, { priority = "urgent" })
t.raises(nil, "unknown option 'priorty' (expected priority, label)",
         dev.stream, dev, { priorty = "high" })
t.raises(nil, "field 'label' must be a string", dev.stream, dev, { label = 1 })
t.raises(nil, "table expected, got number", dev.stream, dev, 5)

--===-- Commands and their results --------------------------------------===--

do
  local s <close> = dev:stream()
  local x = dev:buffer("i32", 8)
  local y = dev:buffer("i32", 8)
  t.check(s:fill(x, 3) == s, "fill returns the stream")
  s:write(x, { 10, 20 }, 7)               -- elements 7 and 8
  s:dispatch(prog.inc, { grid = 8 }, x, 5)
  s:copy(y, x)                            -- all of x
  s:copy(y, x, 1, 7, 2)                   -- y[1..2] = x[7..8]
  s:fill(y, -1, 3, 2)                     -- y[3..4] = -1
  s:write(y, string.pack("<i4", 99), 8)   -- a binary string
  s:write(y, {}, 9)                       -- nothing, at the end: allowed
  local f = s:read(y, 2, 6)
  t.equal(#f, 6, "#future")
  t.check(s:sync() == s, "sync returns the stream")
  t.equal(list(x:read()), "8,8,8,8,8,8,15,25", "fill, write, dispatch")
  t.equal(list(y:read()), "15,25,-1,-1,8,8,15,99", "copy, fill, write")
  t.equal(list(f:get()), "25,-1,-1,8,8,15", "future:get")
  t.equal(f:bytes(), string.pack("<i4i4i4i4i4i4", 25, -1, -1, 8, 8, 15),
          "future:bytes")
  t.equal(f:query(), "done", "future:query")
  t.check(f:wait(0) == f, "future:wait")
  t.equal(f.buffer.length, 6, "future.buffer")
  t.equal(f.event:query(), "done", "future.event")
  t.equal(s:query(), "done", "query when idle")
  local floats = dev:buffer("f64", 3)
  s:fill(floats, 0.5):write(floats, { 1.25 }, 3):sync()
  t.equal(list(floats:read()), "0.5,0.5,1.25", "f64 fill and write")
end

-- Argument errors name the call, the argument and the range (1-based).
do
  local s <close> = dev:stream()
  local x = dev:buffer("i32", 4)
  local u8 = dev:buffer("u8", 4)
  local err = t.raises("OUT_OF_RANGE",
    "stream:write: elements 3..5 are outside the buffer (i32, length 4)",
    s.write, s, x, { 1, 2, 3 }, 3)
  t.check(err.message ~= nil, "error object")
  t.raises("OUT_OF_RANGE", "stream:read: elements 4..5 are outside",
           s.read, s, x, 4, 2)
  t.raises("OUT_OF_RANGE", "stream:read: nothing to read", s.read, s, x, 5)
  t.raises("OUT_OF_RANGE", "stream:fill: elements 2..5", s.fill, s, x, 0, 2, 4)
  t.raises("OUT_OF_RANGE", "stream:copy (destination): elements 1..4",
           s.copy, s, dev:buffer("i32", 2), x)
  t.raises("OUT_OF_RANGE", "stream:copy (source): elements 3..6",
           s.copy, s, x, x, 1, 3, 4)
  t.raises("INVALID_ARGUMENT", "stream:write: element 2: 300 does not fit "
           .. "in u8", s.write, s, u8, { 1, 300 })
  t.raises("INVALID_ARGUMENT", "stream:write: a string of 6 bytes is not a "
           .. "whole number of i32 elements", s.write, s, x, "abcdef")
  t.raises("INVALID_ARGUMENT", "stream:fill: 256 does not fit in u8",
           s.fill, s, u8, 256)
  t.raises("INVALID_ARGUMENT", "stream:fill:", s.fill, s, x, 1.5)
  t.raises(nil, "table or string expected, got number", s.write, s, x, 5)
  t.raises(nil, "number expected, got string", s.fill, s, x, "1")
  t.raises(nil, "element indexes start at 1", s.write, s, x, { 1 }, 0)
  t.raises(nil, "number has no integer representation", s.fill, s, x, 1, 1.5)
  t.raises(nil, "count must be >= 0", s.fill, s, x, 1, 1, -1)
  t.raises(nil, "dc.buffer expected", s.fill, s, 1, 1)
  t.raises("INVALID_ARGUMENT", "dc_stream_copy", s.copy, s, u8, x)
  -- Dispatch: the kernel's argument and launch errors, raised at once.
  local e = t.raises("INVALID_ARGUMENT",
                     "inc: expected 2 arguments (x, by), got 1",
                     s.dispatch, s, prog.inc, { grid = 4 }, x)
  t.equal(e.kernel, "inc", "error names the kernel")
  t.raises("INVALID_ARGUMENT", "inc: argument 2 (by) expects int",
           s.dispatch, s, prog.inc, { grid = 4 }, x, "two")
  t.raises("INVALID_ARGUMENT", "launch.grid is missing",
           s.dispatch, s, prog.inc, {}, x, 1)
  t.raises(nil, "dc.kernel expected", s.dispatch, s, 1, { grid = 4 })
  s:sync()
  t.equal(list(x:read()), "0,0,0,0", "refused commands were not queued")
  t.equal(s:stats().submitted, 0, "nothing submitted")
end

--===-- Ordering and host functions -------------------------------------===--

do
  local s <close> = dev:stream()
  local x = dev:buffer("i32", 16)
  local seen = {}
  s:fill(x, 1)
  s:dispatch(prog.inc, { grid = 16 }, x, 10)
  s:host(function(stream)
    t.check(stream == s, "the host function gets its stream")
    seen[#seen + 1] = x:read()
  end)
  s:dispatch(prog.inc, { grid = 16 }, x, 100)
  s:host(function() seen[#seen + 1] = x:read() end)
  s:sync()
  t.equal(#seen, 2, "both host functions ran")
  for i = 1, 16 do
    t.equal(seen[1][i], 11, "host sees the earlier dispatch, not the later")
    t.equal(seen[2][i], 111, "second host sees both")
  end
  -- A host function may queue more work and sync other streams.
  local other <close> = dev:stream()
  s:host(function()
    other:fill(x, 7)
    other:sync()
  end)
  s:sync()
  t.equal(x[1], 7, "work queued from a host function")
  -- Syncing its own stream from a host function is refused, not a hang.
  local refused
  s:host(function(stream)
    local ok, err = pcall(stream.sync, stream)
    refused = not ok and err
  end)
  s:sync()
  t.equal(refused.code, "FAILED_PRECONDITION", "own sync refused")
  t.check(refused.message:find("cannot wait for its own stream", 1, true),
          refused.message)
  -- So is waiting for a read or a record queued after the host function;
  -- a read queued before it is complete and may be used.
  local before = s:read(x)
  local got
  s:host(function(stream)
    got = before:get()
    local later = stream:read(x)
    local ok1, err1 = pcall(later.get, later)
    local ev = stream:record()
    local ok2, err2 = pcall(ev.wait, ev)
    refused = { not ok1 and err1.code, not ok2 and err2.code }
  end)
  s:sync()
  t.equal(got[1], 7, "earlier read from a host function")
  t.equal(list(refused), "FAILED_PRECONDITION,FAILED_PRECONDITION",
          "later read and record refused")
  t.raises(nil, "function expected, got number", s.host, s, 5)
  -- A callable table works too.
  local called = false
  s:host(setmetatable({}, { __call = function() called = true end })):sync()
  t.check(called, "callable table as host function")
end

--===-- Failures: the sticky error rule ---------------------------------===--

do
  local a <close> = dev:stream { label = "a" }
  local b <close> = dev:stream { label = "b" }
  local x = dev:buffer("i32", 4)
  local y = dev:buffer("i32", 4)
  a:host(function() error(dc.error("DATA_LOSS", "boom: lost it")) end)
  a:fill(x, 5)                        -- skipped
  local after = a:record()            -- poisoned with a's error
  b:wait(after)
  b:fill(y, 6)                        -- skipped: b waited for a failure
  local e = t.raises("DATA_LOSS", "boom: lost it", a.sync, a)
  t.check(e.message:find("host function on stream 'a'", 1, true), e.message)
  t.raises("DATA_LOSS", "boom: lost it", b.sync, b)
  t.raises("DATA_LOSS", "boom: lost it", a.query, a)
  t.raises("DATA_LOSS", "boom: lost it", after.wait, after)
  t.equal(list(x:read()), "0,0,0,0", "skipped fill")
  t.equal(list(y:read()), "0,0,0,0", "skipped fill on the waiting stream")
  local st = a:stats()
  t.equal(st.failed, 1, "failed")
  -- The fill, the record and the host function's own record after it.
  t.equal(st.skipped, 3, "skipped")
  t.equal(st.error, "DATA_LOSS", "stats.error")
  -- Until reset, new work is skipped too; reset returns the error.
  a:fill(x, 9)
  t.raises("DATA_LOSS", nil, a.sync, a)
  local same, cleared = a:reset()
  t.check(same == a, "reset returns the stream")
  t.equal(cleared.code, "DATA_LOSS", "reset returns the cleared error")
  t.check(dc.is_error(cleared), "an error object")
  t.equal(select(2, a:reset()), nil, "nothing left to clear")
  a:fill(x, 9):sync()
  t.equal(list(x:read()), "9,9,9,9", "runs again after reset")
  t.equal(a:stats().error, nil, "no error after reset")
  b:reset()
  -- A string error from a host function: UNKNOWN, with its text.
  a:host(function() error("plain failure") end)
  t.raises("UNKNOWN", "plain failure", a.sync, a)
  a:reset()
  -- An out-of-range access caught by bounds checking fails the stream.
  a:dispatch(prog.poke, { grid = 4 }, x)
  local f = a:read(x)
  t.raises("OUT_OF_RANGE", nil, a.sync, a)
  t.raises("OUT_OF_RANGE", nil, f.get, f)   -- the read was skipped
  t.raises("OUT_OF_RANGE", nil, f.query, f)
  a:reset()
end

--===-- Timeouts --------------------------------------------------------===--

-- A host function on |s1| blocks the Lua thread, so |s2|, which waits for
-- an event recorded on |s1| after it, cannot drain while it runs: a timed
-- sync of |s2| from inside it runs out, deterministically.
do
  local s1 <close> = dev:stream()
  local s2 <close> = dev:stream()
  local timed_out
  s1:host(function()
    local ok, err = pcall(s2.sync, s2, 5)
    timed_out = not ok and err
  end)
  s2:wait(s1:record())
  s2:fill(dev:buffer("i32", 1), 1)
  s1:sync()
  t.equal(timed_out.code, "DEADLINE_EXCEEDED", "timed sync runs out")
  t.check(timed_out.message:find("still has", 1, true), timed_out.message)
  s2:sync(math.huge)
  s2:sync(0)                        -- drained: a poll succeeds
  t.raises(nil, "timeout must be >= 0 milliseconds", s2.sync, s2, -1)
  t.raises(nil, "timeout must be >= 0 milliseconds", s2.sync, s2, 0 / 0)
  t.raises(nil, "number expected, got string", s2.sync, s2, "soon")
end

--===-- Cancellation ----------------------------------------------------===--

-- |gate| holds |s| back: it waits for an event that only completes once
-- the Lua thread runs the host function on |blocker|.
local function hold(s, blocker, ran)
  blocker:host(function() ran[#ran + 1] = true end)
  s:wait(blocker:record())
end

do
  local s <close> = dev:stream()
  local blocker <close> = dev:stream()
  local x = dev:buffer("i32", 4)
  local ran = {}
  hold(s, blocker, ran)
  s:fill(x, 1)
  local ev = s:record()
  s:fill(x, 2)
  t.equal(s:query(), "pending", "query while held")
  t.equal(s:cancel(), 4, "cancel: the wait, two fills and the record")
  t.raises("CANCELLED", nil, ev.wait, ev)
  blocker:sync()
  s:sync()                          -- cancelling does not fail the stream
  t.equal(list(x:read()), "0,0,0,0", "cancelled fills did not run")
  t.equal(s:stats().cancelled, 4, "stats.cancelled")
  t.equal(s:cancel(), 0, "nothing left to cancel")
  s:fill(x, 3):sync()
  t.equal(x[1], 3, "runs after cancel")
end

-- Cancel tokens cancel across streams.
do
  local tok = dc.token()
  t.equal(tok.cancelled, false, "new token")
  t.equal(tostring(tok), "dc.token: active", "tostring(token)")
  local s1 <close> = dev:stream()
  local s2 <close> = dev:stream()
  local blocker <close> = dev:stream()
  local x = dev:buffer("i32", 2)
  local ran = {}
  hold(s1, blocker, ran)
  hold(s2, blocker, ran)
  t.check(s1:set_cancel_token(tok) == s1, "set_cancel_token returns self")
  s2:set_cancel_token(tok)
  s1:fill(x, 1, 1, 1)
  s2:fill(x, 2, 2, 1)
  s2:set_cancel_token(nil)
  s2:fill(x, 5, 1, 1)               -- not carrying the token
  t.check(tok:cancel() == tok, "cancel returns the token")
  t.equal(tok.cancelled, true, "token cancelled")
  t.equal(tostring(tok), "dc.token: cancelled", "tostring(cancelled)")
  blocker:sync()
  s1:sync()
  s2:sync()
  t.equal(list(x:read()), "5,0", "token cancelled both fills, not the last")
  t.equal(s1:stats().cancelled, 1, "s1 cancelled")
  t.equal(s2:stats().cancelled, 1, "s2 cancelled")
  t.raises(nil, "dc.token expected", s1.set_cancel_token, s1, 5)
  tok:close()
  t.raises(nil, "attempt to use a closed dc.token", tok.cancel, tok)
  t.equal(tostring(tok), "dc.token (closed)", "tostring(closed token)")
end

--===-- Priorities ------------------------------------------------------===--

-- Sixteen streams, more than the engine's stream threads (at most 8), all
-- wait for one event; when it completes, the threads take the ready
-- streams highest priority first. Each stream's host function logs its
-- priority as it runs. Threads race to post their calls, so the order is
-- not exact, but over several rounds the high streams must run well
-- before the low ones. (They are made first: streams parked on an event
-- become ready newest first, so without priorities the low ones would
-- lead.)
do
  local rank_sum = { high = 0, low = 0 }
  for _ = 1, 5 do
    local gate <close> = dev:stream()
    gate:host(function() end)
    local open = gate:record()
    local streams, order = {}, {}
    for i = 1, 16 do
      local priority = i <= 4 and "high" or i > 12 and "low" or "normal"
      local s = dev:stream { priority = priority }
      s:wait(open)
      s:host(function() order[#order + 1] = priority end)
      streams[i] = s
    end
    for _, s in ipairs(streams) do s:sync():close() end
    for rank, priority in ipairs(order) do
      if rank_sum[priority] then
        rank_sum[priority] = rank_sum[priority] + rank
      end
    end
  end
  t.check(rank_sum.high < rank_sum.low,
          ("high streams run first (rank sums: high %d, low %d)"):format(
            rank_sum.high, rank_sum.low))
end

--===-- Statistics ------------------------------------------------------===--

do
  local s <close> = dev:stream { label = "counted", priority = "low" }
  local x = dev:buffer("i32", 4)
  s:fill(x, 1):fill(x, 2):host(function() busy(2) end):sync()
  local st = s:stats()
  t.equal(st.submitted, 4, "submitted (the host function adds a record)")
  t.equal(st.completed, 4, "completed")
  t.equal(st.failed, 0, "failed")
  t.equal(st.queued, 0, "queued")
  t.equal(st.priority, "low", "priority")
  t.equal(st.label, "counted", "label")
  t.equal(st.id, s.id, "id")
  t.check(st.busy_ns > 0 and math.type(st.busy_ns) == "integer", "busy_ns")
  t.near(st.busy_ms, st.busy_ns / 1e6, "busy_ms")
end

--===-- Stream groups ---------------------------------------------------===--

do
  local g <close> = dev:group(3)
  t.equal(#g, 3, "#g")
  t.equal(tostring(g), "dc.group: 3 streams", "tostring(group)")
  t.equal(g[1].label, "group.0", "g[1]")
  t.check(g[2] == g[2], "the same dc.stream each time")
  t.raises(nil, "index 4 is out of range (1..3)", function() return g[4] end)
  t.raises(nil, "index 0 is out of range", function() return g[0] end)
  t.equal(g.nothing, nil, "unknown field")
  local order = {}
  for i = 1, 6 do order[i] = g:next().label end
  t.equal(list(order), "group.0,group.1,group.2,group.0,group.1,group.2",
          "round robin")
  t.raises(nil, "invalid option 'random'", g.next, g, "random")
  -- Least loaded: the two held streams have queued work; g[3] has none.
  local blocker <close> = dev:stream()
  local ran = {}
  hold(g[1], blocker, ran)
  hold(g[2], blocker, ran)
  for _ = 1, 3 do
    t.check(g:next("least_loaded") == g[3], "least loaded picks g[3]")
  end
  local x = dev:buffer("i32", 3)
  for i = 1, 3 do g[i]:fill(x, i * 10, i, 1) end
  t.check(g:sync() == g, "group sync returns the group")
  t.equal(list(x:read()), "10,20,30", "every stream ran")
  local stats = g:stats()
  t.equal(#stats, 3, "one stats table per stream")
  t.equal(stats[1].label, "group.0", "stats in index order")
  t.equal(stats[1].completed, 2, "the wait and the fill completed")
  -- The first failed stream's error, in index order.
  g[3]:host(function() error(dc.error("ABORTED", "third gave up")) end)
  g[2]:host(function() error(dc.error("DATA_LOSS", "second lost it")) end)
  t.raises("DATA_LOSS", "second lost it", g.sync, g)
  g[2]:reset()
  t.raises("ABORTED", "third gave up", g.sync, g)
  g[3]:reset()
  -- A timed group sync from a host function of another stream that the
  -- group waits for (see Timeouts).
  local outside <close> = dev:stream()
  local timed_out
  outside:host(function()
    local ok, err = pcall(g.sync, g, 5)
    timed_out = not ok and err
  end)
  g[2]:wait(outside:record())
  outside:sync()
  t.equal(timed_out.code, "DEADLINE_EXCEEDED", "timed group sync")
  g:sync()
  -- Syncing a group from a host function of one of its streams.
  g[1]:host(function()
    local ok, err = pcall(g.sync, g)
    timed_out = not ok and err
  end)
  g:sync()
  t.equal(timed_out.code, "FAILED_PRECONDITION", "group sync from inside")
end

do
  local g = dev:group { count = 2, priority = "high", label = "work" }
  t.equal(#g, 2, "count option")
  t.equal(g[2].label, "work.1", "label option")
  t.equal(g[1].priority, "high", "priority option")
  local kept = g[1]
  g:close()
  t.raises(nil, "attempt to use a closed dc.group", g.sync, g)
  t.equal(tostring(g), "dc.group (closed)", "tostring(closed group)")
  kept:fill(dev:buffer("i32", 1), 1):sync()  -- the stream outlives the group
  local default = dev:group()
  t.check(#default >= 2 and #default <= 8, "default group size")
  default:close()
end

t.raises(nil, "a group has 1 to 64 streams", dev.group, dev, 65)
t.raises(nil, "a group has 1 to 64 streams", dev.group, dev, -1)
t.raises(nil, "unknown option 'size'", dev.group, dev, { size = 2 })
t.raises(nil, "field 'count' must be an integer", dev.group, dev,
         { count = "2" })
t.raises(nil, "field 'priority'", dev.group, dev, { priority = 1 })

--===-- Lifetime --------------------------------------------------------===--

do
  local s = dev:stream()
  s:close()
  s:close()                                  -- twice is fine
  t.raises(nil, "attempt to use a closed dc.stream", s.sync, s)
  t.raises(nil, "attempt to use a closed dc.stream",
           function() return s.label end)
  t.equal(tostring(s), "dc.stream (closed)", "tostring(closed)")
  t.raises(nil, "dc.stream expected", s.sync, dev)
end

-- Closing a stream with work in flight lets the work finish; an event
-- recorded last tells when.
do
  local x = dev:buffer("i32", 4)
  local ran = false
  local last
  do
    local s <close> = dev:stream()
    s:fill(x, 4)
    s:host(function(stream)
      ran = true
      t.raises(nil, "attempt to use a closed dc.stream", stream.sync, stream)
    end)
    last = s:fill(x, 8):record()
  end                                          -- closed here, work queued
  last:wait()                                  -- runs the host function
  t.check(ran, "the host function of a closed stream ran")
  t.equal(x[1], 8, "work of a closed stream finished")
  -- A stream the collector frees with work queued (held back by a gate).
  local gate <close> = dev:stream()
  gate:host(function() end)
  local s = dev:stream()
  s:wait(gate:record())
  last = s:fill(x, 1):fill(x, 12):record()
  local weak = setmetatable({ s }, { __mode = "v" })
  s = nil
  collectgarbage()
  collectgarbage()
  t.equal(weak[1], nil, "the dc.stream was collected")
  t.equal(x[1], 8, "its work waits for the gate")
  last:wait()
  t.equal(x[1], 12, "work of a collected stream finished")
  -- A future outlives its stream.
  local s2 = dev:stream()
  local f = s2:fill(x, 3):read(x)
  s2:close()
  t.equal(list(f:get()), "3,3,3,3", "future after its stream closed")
  f:close()
  t.raises(nil, "attempt to use a closed dc.future", f.get, f)
end

-- Work still queued when the script ends: the state closes without a hang.
local last = dev:stream()
local last_buffer = dev:buffer("i32", 2)
last:host(function() error("not run: the state closes first") end)
last:fill(last_buffer, 1)

print("test_stream: ok")

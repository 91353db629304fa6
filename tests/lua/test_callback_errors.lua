-- test_callback_errors.lua: Lua functions that engine threads have called
-- (stream host functions, graph host ops and subflows, event completion
-- callbacks) and that raise, yield or re-enter the module leave the engine
-- consistent (issue 16). In particular an error value whose __tostring
-- raises is described under protection: before the fix it escaped the
-- wait in the callback machinery, so a stream thread blocked forever (the
-- sync raised the __tostring's error and the process never exited), a
-- waiter thread wrote into a frame that was gone, and a posted
-- callback's error replaced by the __tostring's leaked the call.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")
local FALLBACK = "(error object is a table value)"

-- An error value that no code can turn into a string.
local function bad_error()
  return setmetatable({}, {
    __tostring = function() error("the __tostring raised") end,
  })
end

-- Runs queued callbacks until |done()| or 5 s; returns the first error a
-- poll raised, or nil.
local function poll_until(done)
  local start = os.clock()
  while not done() and os.clock() - start < 5 do
    local ok, err = pcall(dc.poll)
    if not ok then return err end
  end
end

--===-- A stream's host function ----------------------------------------===--

do
  local s <close> = dev:stream { label = "tostring" }
  s:host(function() error(bad_error()) end)
  local e = t.raises("UNKNOWN", FALLBACK, s.sync, s)
  t.check(e.message:find("host function on stream 'tostring'", 1, true),
          e.message)
  s:reset()
  local buf = dev:buffer("i32", 4)
  s:fill(buf, 7):sync()
  t.equal(buf[4], 7, "the stream works after the failure")
end

-- A __tostring that returns no string is as bad.
do
  local s <close> = dev:stream()
  s:host(function()
    error(setmetatable({}, { __tostring = function() return {} end }))
  end)
  t.raises("UNKNOWN", FALLBACK, s.sync, s)
end

-- An error object whose message was replaced keeps its code (read raw).
do
  local s <close> = dev:stream()
  s:host(function()
    local e = dc.error("UNAVAILABLE", "backend busy")
    e.message = bad_error()
    error(e)
  end)
  local e = t.raises("UNAVAILABLE", FALLBACK, s.sync, s)
  t.equal(e.code, "UNAVAILABLE", "the code survives")
end

-- A script may give the error metatable an __index that raises: the
-- binding reads error objects raw, so it never runs.
do
  local mt = getmetatable(dc.error("UNKNOWN", "x"))
  mt.__index = function() error("the __index raised") end
  local s <close> = dev:stream()
  s:host(function()
    local e = dc.error("DATA_LOSS", "no code")
    rawset(e, "code", nil)
    error(e)
  end)
  t.raises("UNKNOWN", "no code", s.sync, s)
  mt.__index = nil
end

--===-- A graph's host op and subflow, run through a waiter thread ------===--

do
  local g = dc.graph { name = "tostring" }
  g:host("bad", function() error(bad_error()) end)
  g:host("fine", function() end)
  local r = g:run { raise = false }
  t.equal(r.ok, false, "the run failed")
  t.equal(r.bad.state, "failed", "the op failed")
  t.check(r.bad.error.message:find(FALLBACK, 1, true), r.bad.error.message)
  t.equal(r.fine.state, "ok", "the other op ran")
  t.check(tostring(r):find("FAILED", 1, true), "tostring(report)")
  local sub = dc.graph { name = "sub" }
  sub:subflow("make", function() error(bad_error()) end)
  r = sub:run { raise = false }
  t.equal(r.make.state, "failed", "the subflow failed")
  t.check(g:run { raise = false }.bad.state == "failed", "a second run")
end

--===-- Posted completion callbacks -------------------------------------===--

do
  local s <close> = dev:stream()
  local ev = s:record()
  local bad = bad_error()
  local ran = 0
  ev:on_complete(function() ran = ran + 1; error(bad) end)
  ev:on_complete(function() ran = ran + 1 end)
  -- The event may be done already: then a wait runs the callbacks too.
  local ok, err = pcall(ev.wait, ev)
  if ok then err = poll_until(function() return ran == 2 end) end
  t.check(rawequal(err, bad), "the poll raised the callback's own error, "
          .. "not one of its __tostring")
  t.equal(ran, 2, "both callbacks ran")
  t.equal(dc.poll(), 0, "nothing is left queued")
end

-- A posted callback's error while a blocking call waits comes out of that
-- call once the wait is over.
do
  local s <close> = dev:stream()
  local ev = s:record()
  local bad = bad_error()
  ev:wait()
  ev:on_complete(function() error(bad) end)
  local g = dc.graph { name = "waits" }
  g:host("h", function() end)
  local ok, err = pcall(g.run, g)
  t.check(not ok and rawequal(err, bad), "g:run raised the posted error")
  t.check(g:run().ok, "the graph runs again")
end

--===-- Yielding and re-entering ----------------------------------------===--

-- A host function that yields fails its stream; the coroutine that waits
-- is not suspended from inside the engine's call.
do
  local s <close> = dev:stream { label = "yield" }
  local co = coroutine.wrap(function()
    s:host(function() coroutine.yield("escaped") end)
    return pcall(s.sync, s)
  end)
  local ok, err = co()
  t.check(ok == false, "the yield did not escape: " .. tostring(ok))
  t.check(dc.is_error(err) and err.message:find("yield", 1, true),
          tostring(err))
  s:reset()
  s:host(function() end):sync()
end

-- Host functions that re-enter the module: polls, waits on other streams,
-- graph runs, garbage collection, errors from nested waits.
do
  local s1 <close> = dev:stream { label = "outer" }
  local s2 <close> = dev:stream { label = "inner" }
  local buf = dev:buffer("f32", 64)
  local log = {}
  s1:host(function()
    dc.poll()
    s2:host(function() log[#log + 1] = "inner" end)
    s2:fill(buf, 3):sync()
    collectgarbage()
    local g = dc.graph { name = "nested" }
    g:host("h", function() log[#log + 1] = "graph" end)
    g:run()
    s2:host(function() error(bad_error()) end)
    local ok, err = pcall(s2.sync, s2)
    log[#log + 1] = (not ok and err.message:find(FALLBACK, 1, true))
                    and "nested error" or tostring(err)
    s2:reset()
  end)
  s1:sync()
  t.equal(table.concat(log, ","), "inner,graph,nested error", "the log")
  t.equal(buf[64], 3.0, "the inner fill ran")
end

-- Many failing callbacks of every kind, with collections in between: no
-- call is lost (the stream, the graph and every callback finish).
do
  local s <close> = dev:stream()
  local done = 0
  for i = 1, 50 do
    s:host(function()
      if i % 3 == 0 then collectgarbage("step") end
      error(i % 2 == 0 and bad_error() or dc.error("ABORTED", "n" .. i))
    end)
    pcall(s.sync, s)
    s:reset()
    local ev = s:record()
    ev:on_complete(function() done = done + 1; error(bad_error()) end)
  end
  local last
  repeat last = poll_until(function() return done == 50 end)
  until last == nil or done == 50
  while pcall(dc.poll) == false do end
  t.equal(done, 50, "every completion callback ran")
end

print("ok")

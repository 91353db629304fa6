-- test_graph.lua: graphs: ops, explicit and implicit dependencies,
-- validation, runs and reports, error modes, replay, nested graphs,
-- subflows, retries with injected faults, cancellation, lifecycle. The
-- breaker and fallback cases need a second CPU device and a progress
-- line needs its own standard error: they run in child processes of the
-- same runner (DC_CPU_DEVICES=2), started from here.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local N = 64

-- Compares a buffer with a list of numbers.
local function same(buf, want, what)
  local got = buf:read()
  t.equal(#got, #want, what .. ": length")
  for i = 1, #want do t.near(got[i], want[i], what .. "[" .. i .. "]") end
end

local function filled(n, value)
  local list = {}
  for i = 1, n do list[i] = value end
  return list
end

local SOURCE = [[
  __kernel void scale(__global const float* in, __global float* out,
                      float factor) {
    size_t i = get_global_id(0);
    out[i] = in[i] * factor;
  }
  __kernel void add(__global const float* a, __global const float* b,
                    __global float* out) {
    size_t i = get_global_id(0);
    out[i] = a[i] + b[i];
  }
  __kernel void bump(__global float* x) {
    size_t i = get_global_id(0);
    x[i] = x[i] + 1.0f;
  }
]]

--===-- Child processes ---------------------------------------------------===--

-- Runs this script again with |mode| as its argument and |env| in front;
-- returns whether it succeeded and what it wrote on standard error.
local function child(mode, env)
  local exe_index = -1
  while arg[exe_index - 1] ~= nil do exe_index = exe_index - 1 end
  local err = os.tmpname()
  local command = ("%s '%s' '%s' %s 2>'%s'"):format(env or "", arg[exe_index],
                                                   arg[0], mode, err)
  local ok = os.execute(command)
  local f = io.open(err)
  local text = f:read("a")
  f:close()
  os.remove(err)
  return ok, text
end

-- Fallback and breakers, on cpu:1 (DC_CPU_DEVICES=2).
local function child_fallback()
  local dev = dc.device("cpu:1")
  local prog = dev:compile(SOURCE)
  local a, b = dev:buffer("f32", N), dev:buffer("f32", N)
  local rule = dc.fault.add { site = "launch", device = "cpu:1",
                              permanent = true, status = "UNAVAILABLE" }
  -- The graphs below share one breaker of their own (by passing it).
  local fb = dc.breaker { name = "fb", failures = 4, open_for = 0.2 }
  local g = dc.graph { name = "fb", retry = { attempts = 2, base = 0.001 },
                       breaker = fb }
  g:fill("init", a, 1.5)
  g:dispatch("twice", prog.scale, { grid = N }, { a, b, 2 })
  local r = g:run()
  t.equal(r.twice.fell_back, true, "fell back")
  t.equal(r.twice.device, "cpu", "ran on the cpu")
  t.equal(r.twice.attempts, 3, "2 attempts on cpu:1, 1 on cpu")
  t.check(tostring(r):find("(fell back to cpu)", 1, true), "report marks it")
  same(b, filled(N, 3), "fallback result")
  local state, stats = fb:state()
  t.equal(state, "closed", "2 failures: still closed")
  t.equal(stats.failures, 2, "the graph's breaker counted the failures")
  t.equal(dc.device("cpu:1"):breaker():stats().failures, 0,
          "the device's breaker was not asked")
  t.equal(dc.device("cpu:1"):health().state, "degraded", "device degraded")
  -- Two more failures open it (failures = 4).
  r = g:run()
  t.equal(fb:state(), "open", "breaker opened")
  -- Open: a fill that cannot fall back and may not retry (attempts = 1)
  -- fails fast, naming the breaker; with retries it would wait for the
  -- half-open probe.
  local once = dc.graph { name = "once", retry = { attempts = 1 },
                          breaker = fb }
  once:fill("init", a, 1.5)
  once:dispatch("twice", prog.scale, { grid = N }, { a, b, 2 })
  local err = t.raises("CIRCUIT_OPEN", "circuit 'fb' is open", once.run,
                       once)
  t.equal(err.op, "init", "the fill failed")
  t.equal(err.report.twice.state, "cancelled", "its dependent cancelled")
  g = dc.graph { name = "fb2", breaker = fb }
  g:dispatch("twice", prog.scale, { grid = N }, { a, b, 2 })
  r = g:run()
  t.equal(r.twice.fell_back, true, "open breaker: straight to the fallback")
  -- A graph with other parameters brings its own: no conflict.
  local other = dc.graph { breaker = { failures = 9 } }
  other:dispatch("twice", prog.scale, { grid = N }, { a, b, 2 })
  t.equal(other:run().twice.fell_back, true, "own breaker, still closed")
  -- Half-open after open_for; the device works again: a probe closes it.
  dc.fault.remove(rule)
  local t0 = os.time()
  while fb:state() == "open" and os.time() - t0 < 5 do end
  t.equal(fb:state(), "half_open", "half-open after open_for")
  r = g:run()
  t.equal(r.twice.fell_back, false, "ran on cpu:1 again")
  t.equal(fb:state(), "closed", "closed by the probe")
  -- The device's own breaker quarantines it when it opens.
  dc.device("cpu:1"):breaker():trip()
  t.equal(dc.device("cpu:1"):health().state, "quarantined", "quarantined")
  dc.device("cpu:1"):reset_health()
  -- No fallback: the failure stays.
  dc.fault.add { site = "launch", device = "cpu:1", status = "UNAVAILABLE" }
  local nofb = dc.graph { name = "nofb", fallback = false, breaker = false,
                          retry = { attempts = 1 } }
  nofb:dispatch("twice", prog.scale, { grid = N }, { a, b, 2 })
  err = t.raises("UNAVAILABLE", "injected fault", nofb.run, nofb)
  t.equal(err.report.twice.fell_back, false, "no fallback")
  -- An op's own fallback device.
  local own = dc.graph { name = "own", fallback = false, breaker = false,
                         retry = { attempts = 1 } }
  own:dispatch("twice", prog.scale, { grid = N }, { a, b, 2 },
               { fallback = "cpu" })
  t.equal(own:run().twice.fell_back, true, "op fallback")
  print("graph child fallback: ok")
end

-- A progress line on standard error for a long run.
local function child_progress()
  local g = dc.graph { name = "long" }
  for i = 1, 4 do
    g:host("spin" .. i, function()
      local t0 = os.clock()
      while os.clock() - t0 < 0.2 do end
    end, i > 1 and { after = "spin" .. (i - 1) } or nil)
  end
  g:run { progress = true }
  local quiet = dc.graph { name = "quiet" }
  quiet:host("a", function() end)
  quiet:host("b", function() end)
  quiet:run { progress = true }  -- short: no line
end

if arg[1] == "fallback" then return child_fallback() end
if arg[1] == "progress" then return child_progress() end

local dev = dc.device("cpu")
local prog = dev:compile(SOURCE)

--===-- Host ops and explicit dependencies -------------------------------===--

do
  local log = {}
  local function note(name) return function() log[#log + 1] = name end end
  local g = dc.graph { name = "order" }
  t.equal(tostring(g), "dc.graph 'order' (0 ops)", "tostring(empty)")
  t.check(g:host("c", note("c"), { after = { "a", "b" } }) == g, "chains")
  g:host("a", note("a"))
  g:host("b", note("b"), { after = "a" })
  g:host("d", note("d"))
  g:after("d", "c", "b")
  t.equal(#g, 4, "#g")
  t.equal(tostring(g), "dc.graph 'order' (4 ops)", "tostring(g)")
  local r = g:run()
  t.equal(table.concat(log, ""), "abcd", "explicit order")
  t.equal(r.ok, true, "ok")
  t.equal(r.status, "OK", "status")
  t.equal(r.message, "", "no message")
  t.equal(#r, 4, "#report")
  t.check(r.elapsed_ms > 0, "elapsed")
  -- The report lists ops in the order they were added.
  local names = {}
  for i, op in ipairs(r.ops) do names[i] = op.name end
  t.equal(table.concat(names, ","), "c,a,b,d", "report order")
  t.equal(r.a, r.ops.a, "report[name]")
  t.equal(r.ops[2], r.ops.a, "ops by index and name")
  local op = r.b
  t.equal(op.state, "ok", "state")
  t.equal(op.kind, "host", "kind")
  t.equal(op.device, "host", "host ops have no device")
  t.equal(op.attempts, 1, "attempts")
  t.equal(op.fell_back, false, "fell_back")
  t.equal(op.error, nil, "no error")
  t.check(op.time_ms >= 0 and op.stream >= 0, "time and stream")
  local text = tostring(r)
  t.check(text:match("^c%s+ok%s+host%s+[%d.]+ ms\na%s"), "report text: " .. text)
  t.equal(select(2, text:gsub("\n", "")), 3, "one line per op")
  -- Metrics over the runs of g:run (one instance, reused).
  g:run()
  local m = g:metrics()
  t.equal(m.a.runs, 2, "metrics runs")
  t.check(m.a.mean_ms >= 0 and m.a.p95_ms >= 0 and m.a.last_ms >= 0,
          "metrics times")
end

--===-- Implicit dependencies from buffers --------------------------------===--

do
  local x = dev:buffer("f32", N)
  local y = dev:buffer("f32", N)
  local z = dev:buffer("f32", N)
  local g = dc.graph { name = "implicit", streams = 3 }
  g:fill("ones", x, 1)                                         -- x = 1
  g:dispatch("times3", prog.scale, { grid = N }, { x, y, 3 })  -- RAW: y = 3
  g:fill("twos", x, 2)                       -- WAR after times3, WAW after ones
  g:dispatch("times5", prog.scale, { grid = N }, { x, z, 5 })  -- RAW: z = 10
  g:dispatch("sum", prog.add, { grid = N }, { y, z, x })       -- x = 13
  g:dispatch("inc", prog.bump, { grid = N }, { x })            -- x = 14
  local seen
  g:host("check", function() seen = x:read() end, { reads = x })
  local dot = g:dot()
  t.check(dot:find("RAW", 1, true) and dot:find("WAR", 1, true) and
          dot:find("WAW", 1, true), "edge kinds in DOT: " .. dot)
  t.check(dot:find('digraph "implicit"', 1, true), "DOT names the graph")
  local r = g:run()
  t.equal(#seen, N, "host op saw the buffer")
  for i = 1, N do t.near(seen[i], 14, "1*3 + 2*5 + 1") end
  same(y, filled(N, 3), "y")
  same(z, filled(N, 10), "z")
  t.equal(r.inc.kind, "dispatch", "dispatch kind")
  t.equal(r.inc.device, "cpu", "dispatch device")
  -- Replay: the same instance runs again, from the fill on.
  g:run()
  same(x, filled(N, 14), "replay")
  t.equal(g:metrics().sum.runs, 2, "replayed")
  -- An explicit write access orders a host op before a dispatch.
  local h = dc.graph { name = "hostwrite" }
  h:host("produce", function() y:write(filled(N, 2)) end, { writes = y })
  h:dispatch("double", prog.scale, { grid = N }, { y, z, 2 })
  h:run()
  same(z, filled(N, 4), "host write then dispatch")
end

--===-- Copies, fills, indirect dispatch ----------------------------------===--

do
  local a = dev:buffer("f32", { 1, 2, 3, 4, 5, 6, 7, 8 })
  local b = dev:buffer("f32", 8)
  local g = dc.graph { name = "copies" }
  g:fill("zero", b, 0)
  g:copy("all", b, a, { count = 4 })
  g:copy("part", b, a, { dst_offset = 6, src_offset = 1, count = 2 })
  g:fill("mid", b, -1, { offset = 4, count = 2 })
  g:run()
  same(b, { 1, 2, 3, 4, -1, -1, 2, 3 }, "copies and fills")
  local bytes = dev:buffer("u8", 4)
  t.raises("INVALID_ARGUMENT", "fits u8", g.fill, g, "big", bytes, 300)
  t.raises("INVALID_ARGUMENT", "fits u8", g.fill, g, "neg", bytes, -1)
  t.raises("INVALID_ARGUMENT", "must be a number", g.fill, g, "s", b, "x")
  t.raises("INVALID_ARGUMENT", "the destination must be a dc.buffer",
           g.copy, g, "bad", {}, a)
  t.raises("OUT_OF_RANGE", "outside 'dst'", function()
    dc.graph():copy("over", b, a, { dst_offset = 6 }) end)
  -- Indirect: the grid comes from a buffer an earlier op fills.
  local grid = dev:buffer("u32", 1)
  local x = dev:buffer("f32", N)
  local ind = dc.graph { name = "indirect" }
  ind:fill("x", x, 0)
  ind:fill("size", grid, N // 2)
  ind:dispatch_indirect("bump", prog.bump, { buffer = grid, dims = 1 }, { x })
  ind:run()
  local got = x:read()
  t.equal(got[N // 2], 1.0, "first half bumped")
  t.equal(got[N // 2 + 1], 0.0, "second half not")
  t.raises("INVALID_ARGUMENT", "unknown grid field 'size'",
           ind.dispatch_indirect, ind, "b2", prog.bump, { size = 1 }, { x })
  t.raises("INVALID_ARGUMENT", "'dims' must be 1, 2 or 3",
           ind.dispatch_indirect, ind, "b3", prog.bump,
           { buffer = grid, dims = 4 }, { x })
  t.raises("INVALID_ARGUMENT", "'group' has 2 sizes",
           ind.dispatch_indirect, ind, "b4", prog.bump,
           { buffer = grid, group = { 1, 1 } }, { x })
end

--===-- Validation: names, cycles, warnings -------------------------------===--

do
  local g = dc.graph { name = "loop" }
  g:host("a", function() end, { after = "c" })
  g:host("b", function() end, { after = "a" })
  g:host("c", function() end, { after = "b" })
  local err = t.raises("FAILED_PRECONDITION", "has a cycle", g.validate, g)
  t.check(err.message:find("a -> b -> c -> a", 1, true) or
          err.message:find("b -> c -> a -> b", 1, true) or
          err.message:find("c -> a -> b -> c", 1, true), "cycle named")
  t.raises("FAILED_PRECONDITION", "has a cycle", g.run, g)
  local u = dc.graph { name = "names" }
  u:host("first", function() end, { after = "ghost" })
  t.raises("NOT_FOUND", "runs after 'ghost', which is not in graph 'names'",
           u.validate, u)
  err = t.raises("ALREADY_EXISTS", "first", u.host, u, "first", function() end)
  t.equal(err.op, "first", "err.op names the op")
  t.raises("NOT_FOUND", "has no op 'nobody'", u.after, u, "nobody", "first")
  t.raises("INVALID_ARGUMENT", nil, u.host, u, "", function() end)
  -- Warnings are for buffers never written; a dc.buffer starts zeroed, so
  -- reading a fresh one is no warning.
  local fresh = dev:buffer("f32", 4, { label = "fresh" })
  local w = dc.graph { name = "warn" }
  w:host("reads_fresh", function() end, { reads = fresh })
  t.equal(#w:validate(), 0, "a fresh buffer was written (zeros)")
  t.equal(#dc.graph():validate(), 0, "no warnings")
end

--===-- Failures, error modes ---------------------------------------------===--

do
  local g = dc.graph { name = "failing" }
  g:host("bad", function() error(dc.error("DATA_LOSS", "bad broke")) end)
  g:host("dep", function() end, { after = "bad" })
  g:host("dep2", function() end, { after = "dep" })
  local ran = false
  g:host("indep", function() ran = true end)
  local err = t.raises("DATA_LOSS", "graph 'failing': op 'bad' failed", g.run, g)
  t.check(err.message:find("bad broke", 1, true), "the op's message")
  t.equal(err.op, "bad", "err.op")
  local r = err.report
  t.equal(r.ok, false, "report.ok")
  t.equal(r.status, "DATA_LOSS", "report.status")
  t.equal(r.bad.state, "failed", "failed op")
  t.equal(r.bad.error.code, "DATA_LOSS", "op error code")
  t.equal(r.bad.error.op, "bad", "op error names the op")
  t.equal(r.dep.state, "cancelled", "dependent cancelled")
  t.equal(r.dep.error.code, "CANCELLED", "cancelled code")
  t.check(r.dep.error.message:find("'bad', which it depends on, failed", 1,
                                   true), r.dep.error.message)
  t.equal(r.dep2.state, "cancelled", "transitive dependent cancelled")
  t.equal(r.indep.state, "ok", "independent op ran (finish)")
  t.check(ran, "independent op ran")
  t.check(tostring(r):find("bad%s+FAILED%s+host.*DATA_LOSS: "), tostring(r))
  -- raise = false returns the report.
  local r2 = g:run { raise = false }
  t.equal(r2.ok, false, "raise = false")
  t.equal(r2.bad.state, "failed", "raise = false: state")
  t.check(r2.message:find("op 'bad' failed", 1, true), "report.message")
  -- A plain Lua error fails the op as UNKNOWN.
  local p = dc.graph { name = "plain" }
  p:host("oops", function() error("plain error") end)
  t.raises("UNKNOWN", "plain error", p.run, p)

  -- stop: ops that have not started are cancelled. One stream: "bad" has
  -- the longest chain after it, so it runs first.
  local function modes(mode)
    local m = dc.graph { name = mode, error_mode = mode, streams = 1 }
    m:host("bad", function() error(dc.error("DATA_LOSS", "a broke")) end)
    m:host("d1", function() end, { after = "bad" })
    m:host("d2", function() end, { after = "d1" })
    m:host("other", function() error(dc.error("INTERNAL", "b broke")) end)
    return m:run { raise = false }
  end
  local stop = modes("stop")
  t.equal(stop.other.state, "cancelled", "stop cancels independent ops")
  t.check(stop.other.error.message:find("stops at the first failure", 1,
                                        true), stop.other.error.message)
  local finish = modes("finish")
  t.equal(finish.other.state, "failed", "finish runs independent ops")
  t.check(not finish.message:find("2 ops failed", 1, true), "finish: first")
  local collect = modes("collect")
  t.check(collect.message:find("2 ops failed", 1, true) and
          collect.message:find("a broke", 1, true) and
          collect.message:find("b broke", 1, true), collect.message)
end

--===-- Cancellation and timeouts -----------------------------------------===--

do
  local g = dc.graph { name = "cancel", streams = 1 }
  g:host("a", function() g:cancel() end)
  g:host("b", function() end, { after = "a" })
  local err = t.raises("CANCELLED", "the run was cancelled", g.run, g)
  t.equal(err.report.b.state, "cancelled", "b cancelled")
  t.equal(err.report.a.state, "ok", "a finished")
  t.equal(g:run { raise = false }.ok, false, "cancelled again (same op)")
  local tok = dc.token()
  local k = dc.graph { name = "token" }
  k:host("a", function() tok:cancel() end)
  k:host("b", function() end, { after = "a" })
  t.raises("CANCELLED", "cancelled", k.run, k, { token = tok })
  -- The run holds its token and graph: closing them from an op is safe.
  local tok2 = dc.token()
  local k2 = dc.graph { name = "token2" }
  k2:host("a", function() tok2:cancel(); tok2:close(); k2:close() end)
  k2:host("b", function() end, { after = "a" })
  local err2 = t.raises("CANCELLED", "cancelled", k2.run, k2, { token = tok2 })
  t.equal(err2.report.b.state, "cancelled", "after the token closed")
  t.raises(nil, "attempt to use a closed dc.graph", k2.run, k2)
  local s = dc.graph { name = "slow" }
  s:host("spin", function()
    local t0 = os.clock()
    while os.clock() - t0 < 0.15 do end
  end)
  s:host("later", function() end, { after = "spin" })
  err = t.raises("DEADLINE_EXCEEDED", "passed its timeout", s.run, s,
                 { timeout = 0.02 })
  t.equal(err.report.later.state, "cancelled", "timed out op cancelled")
  t.equal(s:run { timeout = 5 }.ok, true, "within the timeout")
end

--===-- Replay with new arguments -----------------------------------------===--

do
  local x = dev:buffer("f32", filled(N, 1))
  local y = dev:buffer("f32", N)
  local y2 = dev:buffer("f32", N)
  local g = dc.graph { name = "replay" }
  g:dispatch("scale", prog.scale, { grid = N }, { x, y, 2 })
  local e <close> = g:instantiate()
  t.check(tostring(e):find("dc.exec of graph 'replay' (1 ops)", 1, true),
          tostring(e))
  t.equal(#e, 1, "#exec")
  t.equal(e:report(), nil, "no report before a run")
  e:run()
  same(y, filled(N, 2), "first run")
  t.check(e:set_arg("scale", 3, 10) == e, "set_arg chains")
  e:run()
  same(y, filled(N, 10), "new scalar by position")
  e:set_arg("scale", "factor", 4):set_arg("scale", "out", y2)
  e:run()
  same(y2, filled(N, 4), "new buffer and scalar by name")
  t.equal(e:report().ok, true, "last report")
  t.equal(e:metrics().scale.runs, 3, "instance metrics")
  t.check(e:dot():find("stream", 1, true), "instance DOT")
  t.raises("INVALID_ARGUMENT", "expects float", e.set_arg, e, "scale", 3, "x")
  t.raises("INVALID_ARGUMENT", "elements", e.set_arg, e, "scale", 2,
           dev:buffer("f32", 3))
  t.raises("NOT_FOUND", "has no op 'nope'", e.set_arg, e, "nope", 1, 1)
  t.raises("NOT_FOUND", "no argument 'zz'", e.set_arg, e, "scale", "zz", 1)
  t.raises("INVALID_ARGUMENT", "not a position", e.set_arg, e, "scale", 0, 1)
  -- The graph's own run uses another instance: unchanged arguments.
  g:run()
  same(y, filled(N, 2), "g:run keeps its arguments")
end

--===-- Nested graphs and subflows ----------------------------------------===--

do
  local log = {}
  local function note(name) return function() log[#log + 1] = name end end
  local child = dc.graph { name = "child" }
  child:host("x", note("x"))
  child:host("y", note("y"), { after = "x" })
  local g = dc.graph { name = "outer" }
  g:host("first", note("first"))
  g:graph("inner", child, { after = "first" })
  local kept
  g:subflow("dyn", function(sub)
    log[#log + 1] = "dyn"
    kept = sub
    for i = 1, 3 do
      sub:host("s" .. i, note("s" .. i), i > 1 and { after = "s" .. (i - 1) }
                                               or nil)
    end
  end, { after = "inner" })
  g:host("last", note("last"), { after = "dyn" })
  local r = g:run()
  t.equal(table.concat(log, " "), "first x y dyn s1 s2 s3 last", "order")
  t.equal(r["inner/x"].state, "ok", "nested ops are named <op>/<op>")
  t.equal(#r, 5, "nested graphs flattened; subflow ops inside their op")
  t.raises(nil, "attempt to use a closed dc.graph", kept.host, kept, "late",
           function() end)
  -- Changing the child closes the instances of the graphs nesting it.
  local e = g:instantiate()
  child:host("z", note("z"), { after = "y" })
  t.raises(nil, "attempt to use a closed dc.exec", e.run, e)
  log = {}
  r = g:run()
  t.equal(table.concat(log, " "), "first x y z dyn s1 s2 s3 last", "rebuilt")
  t.raises("INVALID_ARGUMENT", "cycle", child.graph, child, "loop", g)
  t.raises("INVALID_ARGUMENT", "cycle", g.graph, g, "self", g)
  -- A failing subflow function fails its op.
  local f = dc.graph { name = "subfail" }
  f:subflow("bad", function() error(dc.error("ABORTED", "no plan")) end)
  t.raises("ABORTED", "no plan", f.run, f, nil)
  -- Ops a subflow adds can fail too.
  local f2 = dc.graph { name = "subfail2" }
  f2:subflow("part", function(sub)
    sub:host("inner", function() error(dc.error("DATA_LOSS", "inner broke")) end)
  end)
  t.raises("DATA_LOSS", "inner broke", f2.run, f2)
  -- A subflow's graph cannot be run or nested on its own.
  local s2 = dc.graph()
  s2:subflow("try", function(sub)
    t.raises("FAILED_PRECONDITION", "runs as part of its op", sub.run, sub)
    t.raises("INVALID_ARGUMENT", "cannot be nested", s2.graph, dc.graph(),
             "n", sub)
  end)
  s2:run()
end

--===-- Retries -----------------------------------------------------------===--

do
  -- Injected launch faults: the op's retry policy tries again.
  local x = dev:buffer("f32", filled(N, 1))
  local y = dev:buffer("f32", N)
  local rule = dc.fault.add { site = "launch", name = "scale", nth = 1 }
  local g = dc.graph { name = "faults", breaker = false,
                       retry = dc.retry { attempts = 3, base = 0.001 } }
  g:dispatch("scale", prog.scale, { grid = N }, { x, y, 2 })
  local r = g:run()
  t.equal(r.scale.attempts, 2, "one injected fault retried")
  t.check(tostring(r):find("(1 failure retried)", 1, true), tostring(r))
  same(y, filled(N, 2), "result after the retry")
  dc.fault.remove(rule)
  -- A host op failing twice with a transient code, delays without jitter.
  local calls = 0
  local h = dc.graph { name = "flaky" }
  h:host("flaky", function()
    calls = calls + 1
    if calls < 3 then error(dc.error("UNAVAILABLE", "busy " .. calls)) end
  end, { retry = { attempts = 5, base = 0.02, factor = 2, jitter = "none" } })
  r = h:run()
  t.equal(calls, 3, "three calls")
  t.equal(r.flaky.attempts, 3, "attempts")
  t.check(r.flaky.time_ms >= 59, "delays of 20 and 40 ms: " .. r.flaky.time_ms)
  -- Permanent failures are not retried; exhausted attempts fail the op.
  calls = 0
  local p = dc.graph { name = "permanent" }
  p:host("p", function() calls = calls + 1; error(dc.error("DATA_LOSS", "x")) end,
         { retry = { attempts = 4, base = 0.001 } })
  t.equal(p:run { raise = false }.p.attempts, 1, "not retried")
  calls = 0
  local q = dc.graph { name = "exhausted", retry = { attempts = 2, base = 0.001 } }
  q:host("q", function() calls = calls + 1; error(dc.error("ABORTED", "again")) end)
  local err = t.raises("ABORTED", "again", q.run, q)
  t.equal(calls, 2, "graph policy: two attempts")
  t.equal(err.report.q.attempts, 2, "reported attempts")
end

--===-- Option errors -----------------------------------------------------===--

do
  local b = dev:buffer("f32", 4)
  local g = dc.graph()
  t.raises("INVALID_ARGUMENT", "unknown option 'raeds'", g.host, g, "h",
           function() end, { raeds = b })
  t.raises("INVALID_ARGUMENT", "option 'reads' must be a dc.buffer", g.host,
           g, "h", function() end, { reads = { b, 3 } })
  t.raises("INVALID_ARGUMENT", "option 'after' must be an op name", g.host,
           g, "h", function() end, { after = { 1 } })
  t.raises("INVALID_ARGUMENT", "option 'fallback' must be a dc.device",
           g.host, g, "h", function() end, { fallback = 1 })
  t.raises("NOT_FOUND", nil, g.host, g, "h", function() end,
           { fallback = "gpu:9" })
  t.raises("INVALID_ARGUMENT", "option 'retry' must be a dc.retry", g.host,
           g, "h", function() end, { retry = 3 })
  t.raises("INVALID_ARGUMENT", "dc.retry: field 'attempts'", g.host, g, "h",
           function() end, { retry = { attempts = 0 } })
  t.raises(nil, "function expected", g.host, g, "h", 42)
  t.raises(nil, "dc.kernel expected", g.dispatch, g, "d", "k", { grid = 1 }, {})
  t.raises("INVALID_ARGUMENT", "expected 3 arguments", g.dispatch, g, "d",
           prog.scale, { grid = N }, { b })
  t.raises("INVALID_ARGUMENT", "grid", g.dispatch, g, "d", prog.scale, {},
           { b, b, 1 })
  t.equal(#g, 0, "nothing was added")
  t.raises("INVALID_ARGUMENT", "unknown field 'retries'", dc.graph,
           { retries = 3 })
  t.raises("INVALID_ARGUMENT", "'error_mode' must be", dc.graph,
           { error_mode = "all" })
  t.raises("INVALID_ARGUMENT", "'streams' must be", dc.graph, { streams = 0 })
  t.raises("INVALID_ARGUMENT", "'name' must be", dc.graph, { name = "" })
  t.raises("INVALID_ARGUMENT", "'fallback' must be", dc.graph,
           { fallback = 1 })
  t.raises("INVALID_ARGUMENT", "'breaker' must be", dc.graph,
           { breaker = "x" })
  t.raises("INVALID_ARGUMENT", "'retry' must be", dc.graph, { retry = true })
  t.raises("INVALID_ARGUMENT", "'device' must be", dc.graph, { device = 1 })
  t.raises("NOT_FOUND", nil, dc.graph, { device = "cuda:9" })
  g:host("h", function() end)
  t.raises("INVALID_ARGUMENT", "unknown option 'timout'", g.run, g,
           { timout = 1 })
  t.raises("INVALID_ARGUMENT", "'timeout' must be", g.run, g, { timeout = -1 })
  t.raises("INVALID_ARGUMENT", "'token' must be a dc.token", g.run, g,
           { token = {} })
  t.raises(nil, "table expected", g.run, g, 5)
end

--===-- Lifecycle ---------------------------------------------------------===--

do
  local log = {}
  do
    local g <close> = dc.graph { name = "scoped" }
    g:host("a", function() log[#log + 1] = "a" end)
    g:run()
    CLOSED = g
  end
  t.equal(tostring(CLOSED), "dc.graph 'scoped' (closed)", "closed by <close>")
  t.raises(nil, "attempt to use a closed dc.graph", CLOSED.run, CLOSED)
  t.raises(nil, "attempt to use a closed dc.graph", CLOSED.host, CLOSED, "b",
           function() end)
  CLOSED:close()  -- twice is fine
  CLOSED = nil
  -- An instance outlives the graph it came from.
  local g = dc.graph { name = "outlive" }
  g:host("a", function() log[#log + 1] = "b" end)
  local e = g:instantiate()
  g:close()
  e:run()
  t.equal(table.concat(log), "ab", "instance ran after the graph closed")
  e:close()
  t.raises(nil, "attempt to use a closed dc.exec", e.run, e)
  t.equal(tostring(e), "dc.exec of graph 'outlive' (closed)", "closed exec")
  -- No changes while running; no closing a running instance.
  local r = dc.graph { name = "busy" }
  local inst
  r:host("a", function()
    t.raises("FAILED_PRECONDITION", "cannot change while it runs", r.host, r,
             "late", function() end)
    t.raises("FAILED_PRECONDITION", "already running", r.run, r)
  end)
  r:run()
  local r2 = dc.graph { name = "busy2" }
  r2:host("a", function()
    t.raises("FAILED_PRECONDITION", "cannot be closed while it runs",
             inst.close, inst)
  end)
  inst = r2:instantiate()
  inst:run()
  -- Garbage: graphs, instances and the functions of their ops go.
  for i = 1, 20 do
    local tmp = dc.graph()
    tmp:host("h", function() return i end)
    tmp:subflow("s", function(sub) sub:host("x", function() end) end)
    tmp:run()
  end
  collectgarbage()
  collectgarbage()
end

--===-- A script calling a graph's __gc itself ------------------------------===--

-- The graph's callbacks (its own and a nested graph's) stay alive while an
-- instance may run them; before, this read freed memory.
do
  local n = 0
  local g = dc.graph { name = "gc_self" }
  g:host("h", function() n = n + 1 end)
  local child = dc.graph { name = "gc_child" }
  child:host("ch", function() n = n + 10 end)
  g:graph("sub", child)
  local e = g:instantiate()
  getmetatable(g).__gc(g)
  getmetatable(child).__gc(child)
  collectgarbage()
  collectgarbage()
  local ok = pcall(e.run, e)
  t.check(ok, "the instance still runs")
  t.equal(n, 11, "both host ops ran")
end

-- The same for a callback a nested graph gains after it was nested, two
-- levels down: the graphs above hold it too.
do
  local n = 0
  local top, mid, leaf = dc.graph { name = "top" }, dc.graph { name = "mid" },
                         dc.graph { name = "leaf" }
  top:graph("mid", mid)
  mid:graph("leaf", leaf)
  leaf:host("late", function() n = n + 1 end)  -- after both nestings
  local e = top:instantiate()
  getmetatable(leaf).__gc(leaf)
  getmetatable(mid).__gc(mid)
  collectgarbage()
  collectgarbage()
  local ok, err = pcall(e.run, e)
  t.check(ok, "the late callback still runs: " .. tostring(err))
  t.equal(n, 1, "it ran once")
end

--===-- Child processes: fallback, breakers, progress ---------------------===--

do
  local ok, err = child("fallback", "DC_CPU_DEVICES=2")
  t.check(ok, "fallback child failed:\n" .. err)
  ok, err = child("progress")
  t.check(ok, "progress child failed:\n" .. err)
  t.check(err:find("\rgraph 'long': %d/4 ops  %d%.%d s"), "progress line: " .. err)
  t.check(err:find("graph 'long': 4/4 ops  [%d.]+ s\n"), "final count: " .. err)
  t.check(not err:find("quiet", 1, true), "no line for a short run")
end

print("graph: ok")

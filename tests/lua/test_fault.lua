-- test_fault.lua: dc.fault: rules from tables and from DC_FAULTS text,
-- the faults they inject at each site (alloc, copy, compile, launch) as
-- error objects with the right code, copies cut off halfway, their
-- statistics, and removal.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

-- Whether making a small buffer fails (and with which error).
local function alloc(label)
  local ok, err = pcall(dc.buffer, "f32", 4, { label = label })
  if ok then err:close() end
  return ok, err
end

-- The pattern of failures of |n| allocations, as a string of "x" and ".".
local function pattern(n)
  local out = {}
  for i = 1, n do out[i] = alloc() and "." or "x" end
  return table.concat(out)
end

--===-- Allocations --------------------------------------------------===--

do  -- nth: only the nth matching call fails, with OUT_OF_MEMORY
  local id = dc.fault.add { site = "alloc", nth = 2 }
  t.equal(math.type(id), "integer", "an integer id")
  local s = dc.fault.stats(id)
  t.equal(s.matched, 0, "no call matched yet")
  t.equal(s.injected, 0, "no fault yet")
  t.check(alloc(), "first allocation")
  local ok, err = alloc()
  t.check(not ok and dc.is_error(err), "second allocation fails")
  t.equal(err.code, "OUT_OF_MEMORY", "alloc's default status")
  t.check(err.message:find("injected fault", 1, true), err.message)
  t.check(err.message:find("rule " .. id, 1, true), "message names the rule")
  t.check(alloc(), "third allocation")
  s = dc.fault.stats(id)
  t.equal(s.matched, 3, "three calls matched")
  t.equal(s.injected, 1, "one fault")
  dc.fault.remove(id)
  t.raises("NOT_FOUND", "no fault rule " .. id, dc.fault.stats, id)
  t.raises("NOT_FOUND", "no fault rule " .. id, dc.fault.remove, id)
  t.equal(pattern(5), ".....", "no faults once removed")
end

do  -- ids grow and are never reused
  local a = dc.fault.add { site = "alloc", nth = 100 }
  local b = dc.fault.add { site = "alloc", nth = 100 }
  t.check(b > a, "ids grow")
  dc.fault.clear()
  local c = dc.fault.add { site = "alloc", nth = 100 }
  t.check(c > b, "ids are not reused after clear")
  dc.fault.clear()
end

do  -- status, permanent, limit
  dc.fault.add { site = "alloc", status = "UNAVAILABLE" }
  local _, err = alloc()
  t.equal(err.code, "UNAVAILABLE", "the rule's status")
  dc.fault.clear()

  local id = dc.fault.add { site = "alloc", nth = 2, permanent = true }
  t.equal(pattern(5), ".xxxx", "a permanent rule keeps failing")
  _, err = alloc()
  t.equal(err.code, "DEVICE_LOST", "a permanent rule's default status")
  t.equal(dc.fault.stats(id).injected, 5, "faults of a permanent rule")
  dc.fault.clear()

  dc.fault.add { site = "alloc", limit = 2 }
  t.equal(pattern(5), "xx...", "limit caps the faults")
  dc.fault.clear()
  t.equal(pattern(3), "...", "clear stops the faults")
end

do  -- rate and seed: the same calls fail on every run
  local id = dc.fault.add { site = "alloc", rate = 0.4, seed = 7 }
  local first = pattern(40)
  local injected = dc.fault.stats(id).injected
  t.equal(select(2, first:gsub("x", "")), injected, "stats count the faults")
  t.check(injected > 4 and injected < 30, "about 40% fail: " .. first)
  dc.fault.clear()
  dc.fault.add { site = "alloc", rate = 0.4, seed = 7 }
  t.equal(pattern(40), first, "same seed, same failures")
  dc.fault.clear()
  local ids = dc.fault.parse("alloc:rate=0.4:seed=7")
  t.equal(pattern(40), first, "the same rule from DC_FAULTS text")
  dc.fault.remove(ids[1])
  dc.fault.add { site = "alloc", rate = 0.4, seed = 8 }
  t.check(pattern(40) ~= first, "another seed, other failures")
  dc.fault.clear()
end

do  -- filters: the buffer's label, the device (a name or a dc.device)
  dc.fault.add { site = "alloc", name = "weights" }
  t.check(alloc("inputs"), "another label passes")
  t.check(not alloc("weights"), "the named label fails")
  dc.fault.clear()
  dc.fault.add { site = "alloc", device = dev }
  t.check(not alloc(), "a dc.device filter")
  dc.fault.clear()
  dc.fault.add { site = { "alloc", "copy" }, device = "cpu" }
  t.check(not alloc(), "a list of sites")
  dc.fault.clear()
end

--===-- Copies --------------------------------------------------------===--

do
  local buf = dc.buffer("f32", { 1, 2, 3, 4 })
  local id = dc.fault.add { site = "copy,alloc", nth = 2 }
  buf:write({ 5, 6 })  -- call 1
  local err = t.raises("UNAVAILABLE", "injected fault", buf.read, buf)
  t.check(err.message:find("copy", 1, true), "names the site")
  local back = buf:read()  -- call 3 passes
  t.equal(back[1], 5, "the write before went through")
  t.equal(back[3], 3, "nothing else changed")
  t.equal(dc.fault.stats(id).matched, 3, "copies matched")
  dc.fault.clear()
end

do  -- halfway: the first half moves, then the copy fails; a graph retries
  local n = 1001
  local src = dc.buffer("i32", n)
  for i = 1, n do src[i] = i * 3 end
  local dst = dc.buffer("i32", n, { label = "dst" })
  dst:fill(-1)
  local id = dc.fault.add { site = "copy", name = "dst", nth = 1,
                            halfway = true }
  local err = t.raises("UNAVAILABLE", "halfway: the first half moved",
                       dst.copy_from, dst, src)
  t.check(err.message:find("copy of buffer 'dst'", 1, true), err.message)
  local half = dst:read()
  t.equal(half[500], 1500, "the first half moved")
  t.equal(half[501], -1, "the second half did not")
  dc.fault.remove(id)
  dst:fill(-1)
  dc.fault.add { site = "copy", name = "dst", nth = 1, halfway = true }
  local g = dc.graph { retry = dc.retry { attempts = 3, base = 0.001 } }
  g:copy("up", dst, src)
  local report = g:run()
  t.equal(report.up.attempts, 2, "the cut copy was tried again")
  local whole = dst:read()
  for i = 1, n do
    if whole[i] ~= i * 3 then t.equal(whole[i], i * 3, "element " .. i) end
  end
  dc.fault.clear()
  t.raises("INVALID_ARGUMENT", "halfway applies to copies only",
           dc.fault.add, { site = "copy,launch", halfway = true })
  t.raises(nil, "field 'halfway' must be a boolean", dc.fault.add,
           { site = "copy", halfway = "yes" })
end

--===-- Compiles and launches -----------------------------------------===--

local source = [[
__kernel void add_one(__global float* x) { x[get_global_id(0)] += 1.0f; }
]]

do
  dc.fault.add { site = "compile" }
  t.raises("UNAVAILABLE", "injected fault", dev.compile, dev, source)
  dc.fault.clear()
  local prog = dev:compile(source)
  local x = dc.buffer("f32", { 1, 2, 3, 4 })
  prog.add_one({ grid = 4 }, x)
  t.equal(x[1], 2, "a launch without faults runs")

  local id = dc.fault.add { site = "launch", name = "add_one", nth = 2 }
  prog.add_one({ grid = 4 }, x)
  local err = t.raises("UNAVAILABLE", "launch of kernel 'add_one' on cpu",
                       prog.add_one, { grid = 4 }, x)
  t.check(err.message:find("rule " .. id, 1, true), "names the rule")
  t.equal(x[1], 3, "the failed launch ran nothing")
  prog.add_one({ grid = 4 }, x)
  t.equal(x[1], 4, "later launches run")
  dc.fault.remove(id)

  dc.fault.add { site = "launch", name = "other" }
  prog.add_one({ grid = 4 }, x)
  t.equal(x[1], 5, "a rule for another kernel does not fire")
  dc.fault.clear()

  dc.fault.parse("launch:status=ABORTED")
  t.raises("ABORTED", "injected fault", prog.add_one, { grid = 4 }, x)
  dc.fault.clear()
  prog.add_one({ grid = 4 }, x)
  t.equal(x[4], 9, "clear stops launch faults")
end

--===-- dc.fault.parse ------------------------------------------------===--

do
  local ids = dc.fault.parse(" alloc:nth=50 ;; launch,copy:rate=0.5:seed=3 ; ")
  t.equal(#ids, 2, "two rules, empty ones skipped")
  t.check(ids[2] > ids[1], "ids in the order written")
  for _, id in ipairs(ids) do t.equal(dc.fault.stats(id).matched, 0, "fresh") end
  dc.fault.remove(ids[1])
  dc.fault.remove(ids[2])
  t.equal(#dc.fault.parse(""), 0, "an empty spec adds nothing")
  local err = t.raises("INVALID_ARGUMENT", "'lanch' is not a fault site",
                       dc.fault.parse, "alloc:nth=1; lanch:rate=0.1")
  t.check(err.message:find("lanch:rate=0.1", 1, true), "quotes the rule")
  t.check(alloc(), "a malformed spec adds no rule at all")
  t.raises(nil, "string expected", dc.fault.parse, nil)
end

--===-- Argument errors -----------------------------------------------===--

t.raises(nil, "table expected", dc.fault.add, "alloc")
t.raises(nil, "field 'site' is required", dc.fault.add, { nth = 1 })
t.raises(nil, "unknown field 'count'", dc.fault.add,
         { site = "alloc", count = 3 })
t.raises(nil, "unknown field '1'", dc.fault.add, { "alloc" })
t.raises(nil, "'lanch', which is no fault site", dc.fault.add,
         { site = "lanch" })
t.raises(nil, "'', which is no fault site", dc.fault.add,
         { site = "alloc," })
t.raises(nil, "field 'site' must list site names", dc.fault.add,
         { site = { "alloc", 3 } })
t.raises(nil, "field 'site' names no site", dc.fault.add, { site = {} })
t.raises(nil, "field 'site' must be a site name", dc.fault.add, { site = 1 })
t.raises(nil, "field 'nth' must be an integer >= 0", dc.fault.add,
         { site = "alloc", nth = -1 })
t.raises(nil, "field 'nth' must be an integer >= 0", dc.fault.add,
         { site = "alloc", nth = 1.5 })
t.raises(nil, "field 'seed' must be an integer", dc.fault.add,
         { site = "alloc", rate = 0.5, seed = "x" })
t.raises(nil, "field 'limit' must be an integer", dc.fault.add,
         { site = "alloc", limit = true })
t.raises(nil, "field 'rate' must be a number", dc.fault.add,
         { site = "alloc", rate = "0.5" })
t.raises(nil, "field 'permanent' must be a boolean", dc.fault.add,
         { site = "alloc", permanent = 1 })
t.raises(nil, "field 'status' must be an error code name", dc.fault.add,
         { site = "alloc", status = "NOPE" })
t.raises(nil, "field 'status' must be an error code name", dc.fault.add,
         { site = "alloc", status = "OK" })
t.raises(nil, "field 'device' must be a device name", dc.fault.add,
         { site = "alloc", device = 0 })
t.raises(nil, "field 'name' must be a string", dc.fault.add,
         { site = "alloc", name = 5 })
-- What only the core can judge comes back as its error objects.
t.raises("INVALID_ARGUMENT", "rate 2 is outside [0, 1]", dc.fault.add,
         { site = "alloc", rate = 2 })
t.raises("INVALID_ARGUMENT", "'gpu' is neither a device nor a backend",
         dc.fault.add, { site = "alloc", device = "gpu" })
t.raises("INVALID_ARGUMENT", nil, dc.fault.add,
         { site = "alloc", nth = 2, rate = 0.5 })
t.raises("INVALID_ARGUMENT", nil, dc.fault.add, { site = "alloc", name = "" })
t.raises(nil, "not a rule id", dc.fault.remove, 0)
t.raises(nil, "number expected", dc.fault.remove, "one")
t.raises(nil, "not a rule id", dc.fault.stats, -1)
t.raises("NOT_FOUND", nil, dc.fault.stats, 123456)
t.check(alloc(), "no rule was left behind by the failures")

-- Rules from DC_FAULTS have the first ids, and clear removes them too.
do
  local child = t.write_file(os.tmpname(), [[
    local dc = require("dc")
    local ok, err = pcall(dc.buffer, "f32", 4)
    print(err.code, dc.fault.stats(1).injected, dc.fault.stats(2).matched)
    dc.fault.clear()
    print(pcall(dc.buffer, "f32", 4))
  ]])
  local runner = assert(arg[-1], "the runner's path in arg[-1]")
  local p = io.popen(("DC_FAULTS='alloc:nth=1; launch:nth=5' '%s' '%s' 2>&1")
                     :format(runner, child))
  local out = p:read("a")
  p:close()
  os.remove(child)
  t.check(out:find("OUT_OF_MEMORY\t1\t0\ntrue\tdc.buffer", 1, true), out)
end

print("fault: ok")

-- test_bad_self.lua: every method and metamethod of every class of the
-- module checks its self (issue 16). Each function of each metatable the
-- module registered (found in the registry, so new classes are covered)
-- is called with forged selves: numbers such as 0x41414141, strings,
-- tables, booleans, another library's userdata, a coroutine, and the
-- objects of every other class. None may crash the process; the ones
-- that fail say "bad self to 'dc.<class>.<name>' (... expected, got
-- ...)". Before the fix getmetatable(dev).__index(0x41414141, "x"),
-- getmetatable(k).__index(0x41414141, "program") and the report's
-- __index, __len and __tostring read through a pointer the script chose.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local dev = dc.device("cpu")

--===-- One object of every class ---------------------------------------===--

local prog = dev:compile [[
  __kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }
]]
local buf = dev:buffer("f32", { 1, 2, 3, 4 })
local s = dev:stream { label = "self" }
local g = dc.graph { name = "self" }
g:fill("zero", buf, 0)
local report = g:run()
local objects = {
  dev = dev, buf = buf, stream = s, prog = prog, kernel = prog.twice,
  event = s:record(), encoder = s:encoder(), graph = g, report = report,
  exec = g:instantiate(), retry = dc.retry { attempts = 2 },
  breaker = dc.breaker { failures = 3 }, token = dc.token(),
  group = dev:group(2), future = s:read(buf), localmem = dc.localmem(16),
  error = dc.error("UNAVAILABLE", "busy"),
}
s:sync()

local raising = setmetatable({}, {
  __tostring = function() error("a __tostring that raises") end,
  __index = function() error("an __index that raises") end,
})
local forged = {
  0x41414141, -1, 0, 2^63, 0/0, math.huge, "x", "", {}, raising, true,
  false, io.stdout, coroutine.create(print), print,
}
for _, o in pairs(objects) do forged[#forged + 1] = o end

--===-- The known crashes, by name --------------------------------------===--

local function bad_self(fn, self, pattern, ...)
  local ok, err = pcall(fn, self, ...)
  t.check(not ok, pattern .. ": expected an error")
  t.check(type(err) == "string" and err:find(pattern, 1, true),
          ("expected %q, got %s"):format(pattern, tostring(err)))
end

bad_self(getmetatable(dev).__index, 0x41414141,
         "bad self to 'dc.device.__index' (dc.device expected, got number)",
         "x")
bad_self(getmetatable(dev).__index, buf,
         "bad self to 'dc.device.__index' (dc.device expected, got dc.buffer)",
         "name")
bad_self(getmetatable(dev).__tostring, {},
         "bad self to 'dc.device.__tostring' (dc.device expected, got table)")
bad_self(dev.info, 7,
         "bad self to 'dc.device.info' (dc.device expected, got number)")
bad_self(dev.info, nil,
         "bad self to 'dc.device.info' (dc.device expected, got nil)")
t.check(select(2, pcall(dev.info)):find("got no value", 1, true),
        "dev.info() names no self")
bad_self(dev.stream, "cpu",
         "bad self to 'dc.device.stream' (dc.device expected, got string)")
local rmt = getmetatable(report)
bad_self(rmt.__index, 0x41414141,
         "bad self to 'dc.report.__index' (dc.report expected, got number)",
         "x")
bad_self(rmt.__len, 0x41414141,
         "bad self to 'dc.report.__len' (dc.report expected, got number)")
bad_self(rmt.__tostring, "x",
         "bad self to 'dc.report.__tostring' (dc.report expected, got string)")
bad_self(getmetatable(objects.event).__tostring, io.stdout,
         "bad self to 'dc.event.__tostring' (dc.event expected, got FILE*)")
bad_self(objects.event.wait, 1.5,
         "bad self to 'dc.event.wait' (dc.event expected, got number)")
bad_self(objects.encoder.grid, objects.event,
         "bad self to 'dc.encoder.grid' (dc.encoder expected, got dc.event)",
         4)
bad_self(getmetatable(objects.kernel).__index, 0x41414141,
         "bad self to 'dc.kernel.__index' (dc.kernel expected, got number)",
         "program")
bad_self(getmetatable(objects.stream).__index, objects.event,
         "bad self to 'dc.stream.__index' (dc.stream expected, got dc.event)",
         "sync")
bad_self(getmetatable(objects.error).__tostring, 0x41414141,
         "bad self to 'dc.error.__tostring' (dc.error expected, got number)")
bad_self(getmetatable(objects.retry).__index, {},
         "bad self to 'dc.retry.__index' (dc.retry expected, got table)",
         "attempts")
bad_self(getmetatable(objects.breaker).__tostring, objects.retry,
         "bad self to 'dc.breaker.__tostring' (dc.breaker expected, got "
         .. "dc.retry)")
bad_self(getmetatable(objects.graph).__gc, objects.retry,
         "bad self to 'dc.graph.__gc' (dc.graph expected, got dc.retry)")
bad_self(getmetatable(objects.exec).__close, 7,
         "bad self to 'dc.exec.close' (dc.exec expected, got number)")
bad_self(objects.breaker.configure, objects.graph,
         "bad self to 'dc.breaker.configure' (dc.breaker expected, got "
         .. "dc.graph)", {})
-- The objects still work.
t.equal(dev.name, "cpu", "dev.name")
t.equal(#report, 1, "#report")
t.equal(report.zero.state, "ok", "report.zero")
t.check(tostring(report):find("zero", 1, true), "tostring(report)")

--===-- Every function of every class, every forged self ----------------===--

-- The module's classes: metatables in the registry named "dc.<class>".
local classes = {}
for name, mt in pairs(debug.getregistry()) do
  if type(name) == "string" and name:match("^dc%.") and type(mt) == "table"
     and name ~= "dc.state" then  -- the binding's own state, not a class
    classes[#classes + 1] = name
  end
end
table.sort(classes)
t.check(#classes >= 15, "found the classes: " .. table.concat(classes, " "))

-- The functions of a class: its metamethods and its methods.
local function functions_of(mt)
  local fns = {}
  for _, tbl in ipairs { mt, rawget(mt, "methods"), rawget(mt, "__index") } do
    if type(tbl) == "table" then
      for k, v in pairs(tbl) do
        if type(v) == "function" and type(k) == "string" then
          fns[#fns + 1] = { k, v }
        end
      end
    end
  end
  table.sort(fns, function(a, b) return a[1] < b[1] end)
  return fns
end

-- Arguments: for an __index, every field name a class has (an __index
-- that reads a field before it checks its self is the bug to catch).
local ARGS = { {}, { "x" }, { 1, 2 } }
local FIELD_ARGS = { {}, { 1 }, { 0/0 } }
for _, field in ipairs { "x", "name", "program", "device", "event", "buffer",
                         "stream", "id", "label", "priority", "cancelled",
                         "kernels", "bytes", "length", "dtype", "close",
                         "methods" } do
  FIELD_ARGS[#FIELD_ARGS + 1] = { field }
end

local calls, failures = 0, 0
for _, class in ipairs(classes) do
  local mt = debug.getregistry()[class]
  for _, entry in ipairs(functions_of(mt)) do
    local name, fn = entry[1], entry[2]
    for _, self in ipairs(forged) do
      -- Only values of another class: the class's own objects are real.
      if getmetatable(self) ~= mt and name ~= "__gc" and name ~= "__close"
         and name ~= "close" then
        for _, args in ipairs(name == "__index" and FIELD_ARGS or ARGS) do
          calls = calls + 1
          local ok, err = pcall(fn, self, table.unpack(args))
          if not ok then
            failures = failures + 1
            -- A forged self is never taken for an object of the class.
            t.check(not (type(err) == "string" and
                         err:find("attempt to use a closed", 1, true)),
                    class .. "." .. name .. ": " .. tostring(err))
          end
        end
      end
    end
    collectgarbage("step")
  end
end
t.check(calls > 1000 and failures > calls / 2,
        ("%d calls, %d failed"):format(calls, failures))

-- __gc, __close and close with a forged self raise and close nothing.
for _, class in ipairs(classes) do
  local mt = debug.getregistry()[class]
  for _, name in ipairs { "__gc", "__close", "close" } do
    local fn = rawget(mt, name) or
               (type(rawget(mt, "methods")) == "table" and mt.methods[name])
    if type(fn) == "function" then
      for _, self in ipairs { 0x41414141, "x", {}, io.stdout } do
        local ok = pcall(fn, self)
        t.check(not ok, class .. "." .. name .. " took a forged self")
      end
    end
  end
end

-- Everything made above still works after the storm.
buf:write { 5, 6, 7, 8 }
s:dispatch(prog.twice, { grid = 4 }, buf):sync()
t.equal(buf[4], 16.0, "a dispatch after the forged calls")
t.equal(g:run().ok, true, "a graph run after the forged calls")
print(("ok: %d classes, %d forged calls, %d raised"):format(
  #classes, calls, failures))

-- test_device_memory.lua: dev:memory() and dev:set_memory_budget(), the
-- device's memory budget at run time; a sandboxed script may not set it.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dev = dc.device("cpu")

local m = dev:memory()
for _, k in ipairs { "in_use", "peak", "cached", "budget", "cache_limit",
                     "hits", "misses", "failures" } do
  t.check(math.type(m[k]) == "integer" and m[k] >= 0, "memory()." .. k)
end
local default = m.budget
t.check(default > 0, "a budget by default: the device's memory")

local b = dev:buffer("f32", 1024)  -- 4 KiB in use
t.check(dev:memory().in_use >= 4096, "in_use counts the buffer")

-- A small budget: a buffer past it fails, one within it works.
t.equal(dev:set_memory_budget(1 << 20), dev, "returns the device")
t.equal(dev:memory().budget, 1 << 20, "the budget as set")
local err = t.raises("OUT_OF_MEMORY", "budget", dev.buffer, dev, "f32",
                     1 << 20)
t.check(err.message:find("cpu", 1, true), "names the device: " .. err.message)
local fits = dev:buffer("f32", 1024)
t.check(dev:memory().failures >= 1, "the refusal is counted")
fits:close()

-- nil: back to the default.
dev:set_memory_budget(nil)
t.equal(dev:memory().budget, default, "nil restores the default")
local big = dev:buffer("f32", 1 << 20)
big:close()
b:close()

-- Bad arguments.
t.raises(nil, "a budget is at least 1 byte", dev.set_memory_budget, dev, 0)
t.raises(nil, "a budget is at least 1 byte", dev.set_memory_budget, dev, -5)
t.raises(nil, "number expected", dev.set_memory_budget, dev, "lots")
t.raises(nil, "number has no integer representation",
         dev.set_memory_budget, dev, 1.5)
t.raises(nil, "bad self", dev.memory, 42)

-- In a sandbox the budget is the host's (--memory-limit).
local exe_index = -1
while arg[exe_index - 1] ~= nil do exe_index = exe_index - 1 end
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir '" .. dir .. "'"))
local script = dir .. "/budget.lua"
local f = assert(io.open(script, "w"))
f:write([[
local ok, e = pcall(dc.device("cpu").set_memory_budget, dc.device("cpu"), 1e12)
print(ok, e.code, e.message)
print(dc.device("cpu"):memory().budget > 0)
]])
f:close()
local p = assert(io.popen(("'%s' --sandbox='%s' '%s' 2>&1"):format(
    arg[exe_index], dir, script)))
local out = p:read("a")
p:close()
os.execute("rm -rf '" .. dir .. "'")
t.check(out:find("false\tPERMISSION_DENIED\tsandbox: the memory budget of " ..
                 "cpu is the host's to set", 1, true), out)
t.check(out:find("\ntrue\n", 1, true), "memory() works in a sandbox: " .. out)
print("device memory ok")

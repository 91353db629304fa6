-- test_peer.lua: dev:peer(other [, measure]), how a copy travels between
-- two devices, and the "peers" of dc.health(). Runs on the CPU alone; a
-- child runner with two CPU devices covers a real pair.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local cpu = dc.device("cpu")

--===-- Arguments -------------------------------------------------------===--

t.raises("INVALID_ARGUMENT", "the same device (cpu)",
         function() return cpu:peer(cpu) end)
t.raises("INVALID_ARGUMENT", "no peer of itself",
         function() return cpu:peer("cpu", true) end)
t.raises(nil, "dc.device or device name", function() return cpu:peer() end)
t.raises(nil, "dc.device or device name", function() return cpu:peer(42) end)
t.raises("NOT_FOUND", "no device named 'nope'",
         function() return cpu:peer("nope") end)
t.raises(nil, "boolean expected",
         function() return cpu:peer("cpu", "yes") end)

--===-- Every pair this machine has -------------------------------------===--

local paths = { host = true, driver = true, direct = true }
local devices = dc.devices()
for _, from in ipairs(devices) do
  for _, to in ipairs(devices) do
    if from ~= to then
      local p = from:peer(to)
      local pair = from.name .. " -> " .. to.name
      t.check(paths[p.path], pair .. ": path " .. tostring(p.path))
      t.equal(p.direct, p.path == "direct", pair .. ": direct")
      t.equal(math.type(p.bandwidth), "integer", pair .. ": bandwidth")
      t.check(p.bandwidth >= 0, pair .. ": bandwidth")
      if from.kind == "cpu" or to.kind == "cpu" then
        t.equal(p.path, "host", pair .. ": a pair with the CPU")
      end
    end
  end
end
t.equal(#dc.health().peers, #devices * (#devices - 1), "one per pair")

--===-- Two CPU devices, in a child runner ------------------------------===--

local function test_two_cpus()
  local runner = arg[-1]
  if not runner or not os.execute("true") then return end
  local script = t.write_file(os.tmpname(), [[
    local dc = require("dc")
    local a, b = dc.device("cpu"), dc.device("cpu:1")
    local p = a:peer(b)
    assert(p.path == "host" and p.direct == false, p.path)
    assert(p.bandwidth == 0, "measured before asking")
    p = a:peer(b, true)
    assert(p.bandwidth > 0, "not measured")
    assert(a:peer("cpu:1").bandwidth == p.bandwidth, "not kept")
    assert(b:peer(a).bandwidth == 0, "the other way is another pair")
    local peers = dc.health().peers
    assert(#peers == 2, #peers)
    local found = false
    for _, q in ipairs(peers) do
      if q.from == "cpu" and q.to == "cpu:1" then
        found = q.path == "host" and q.bandwidth == p.bandwidth
      end
    end
    assert(found, "the health report lacks cpu -> cpu:1")
    print("child: ok")
  ]])
  local p = io.popen(("DC_DEVICES=cpu DC_CPU_DEVICES=2 %q %q 2>&1"):format(
    runner, script))
  local out = p:read("a")
  local ok = p:close()
  os.remove(script)
  t.check(ok and out:find("child: ok", 1, true), "child failed: " .. out)
end

test_two_cpus()
print("test_peer: ok")

-- test_module.lua: the dc module as a script sees it: version, devices,
-- error objects, and the `arg` table. Run with two arguments "one two".
local dc = require("dc")

local function check(cond, what)
  if not cond then error("check failed: " .. what, 2) end
end

check(type(dc.version) == "string" and dc.version:match("^%d+%.%d+%.%d+$"),
      "dc.version is major.minor.patch")

local devices = dc.devices()
check(#devices >= 1, "at least one device")
local cpu = devices[1]
check(cpu.name == "cpu" and cpu.backend == "cpu" and cpu.kind == "cpu",
      "device 1 is the cpu")
check(cpu.compute_units >= 1, "cpu has compute units")
check(cpu.worker_threads >= 1, "cpu has worker threads")
check(cpu.memory_size > 0, "cpu memory size read from the machine")
check(({[8]=true, [16]=true, [32]=true, [64]=true})[cpu.simd_width],
      "simd width is a vector width in bytes")
check(type(cpu.model) == "string" and #cpu.model > 0, "cpu model name")
check(cpu.unified_memory == true, "cpu memory is unified")
check(cpu.pci_bus_id == "", "the cpu has no PCI address")
for _, d in ipairs(dc.devices()) do
  check(d.pci_bus_id == "" or d.pci_bus_id:match(
          "^%x%x%x%x:%x%x:%x%x%.%x$") ~= nil,
        d.name .. ": a PCI address or none: " .. d.pci_bus_id)
end

-- Error objects: is_error recognises only them.
check(dc.is_error({}) == false, "a plain table is not an error object")
check(dc.is_error("x") == false, "a string is not an error object")

-- `arg` as the stock interpreter sets it.
check(arg[1] == "one" and arg[2] == "two", "script arguments in arg")
check(arg[0]:match("test_module%.lua$"), "script path in arg[0]")
check(select("#", ...) == 2, "arguments passed as varargs")

print("test_module: ok")

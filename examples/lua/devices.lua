-- devices.lua: lists the devices the engine found, from a script.
-- Run: dclua examples/lua/devices.lua
local dc = require("dc")

print(("dc %s"):format(dc.version))
for i, d in ipairs(dc.devices()) do
  print(("%d. %s (%s): %d compute units, %d-byte SIMD, %d MiB"):format(
    i, d.name, d.model, d.compute_units, d.simd_width,
    d.memory_size // (1024 * 1024)))
end

-- gpu_smoke.lua DEVICE DCLUA SCRIPTS: the Lua binding end to end on a GPU
-- (ctest cuda.lua). The lua.* tests run with DC_DEVICES=cpu so that their
-- counts, defaults and messages are the same on every machine; this
-- script is what covers the binding on the device DEVICE ("cuda:0"):
-- buffers, a kernel with a local-memory reduction, streams with events
-- and their elapsed time, a graph with a host op and retries, dc.matmul,
-- the runner's device options, and the scripts of SCRIPTS run with
-- --device DEVICE --check through the runner DCLUA.
--
-- Without DEVICE (no driver, no GPU) it prints why and exits with 77,
-- which CTest reports as skipped. Any device works, so the script itself
-- can be checked without a GPU: DC_CPU_DEVICES=2 and DEVICE "cpu:1".
-- Not named test_*.lua, so the lua.* glob leaves it out.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local SKIPPED = 77
local device_name, dclua, scripts = arg[1], arg[2], arg[3]
if not (device_name and dclua and scripts) then
  io.stderr:write("usage: dclua gpu_smoke.lua DEVICE DCLUA SCRIPTS\n")
  os.exit(2)
end

-- The device under test, or an exit with SKIPPED when this machine does
-- not have it. Any other failure to find it is a failure of the test.
local function device_or_skip(name)
  local ok, dev = pcall(dc.device, name)
  if ok then return dev end
  if not (dc.is_error(dev) and dev.code == "NOT_FOUND") then error(dev, 0) end
  local names = {}
  for _, d in ipairs(dc.devices()) do names[#names + 1] = d.name end
  print(("cuda.lua: no device '%s' here (devices: %s): skipped"):format(
    name, table.concat(names, ", ")))
  os.exit(SKIPPED)
end

local dev = device_or_skip(device_name)
local cpu = dc.device("cpu")
print(("cuda.lua: on %s (%s, %s)"):format(dev.name, dev.model, dev.kind))

--===-- Devices -----------------------------------------------------------===--

-- With every backend enabled the default device is the first GPU, and
-- the CPU stays first in the list.
t.equal(dc.devices()[1], cpu, "the CPU is device 1")
if dev.kind == "gpu" then
  t.equal(dc.device().kind, "gpu", "the default device is a GPU")
end
t.check(dev.memory_size > 0 and dev.compute_units > 0, "capabilities")
t.equal(dev:health().state, "healthy", "health")

--===-- Buffers -----------------------------------------------------------===--

do
  local ramp = {}
  for i = 1, 1000 do ramp[i] = i * 0.5 end
  local b = dev:buffer("f32", ramp, { label = "ramp" })
  t.equal(b.device, dev, "buffer device")
  t.equal(b:read(999, 2)[2], 500.0, "read back")
  b:write({ -1, -2 }, 10):fill(7, 100, 3)
  t.equal(table.concat(b:read(9, 4), ","), "4.5,-1.0,-2.0,6.0", "write")
  t.equal(b[101], 7.0, "fill")
  b[1000] = 3
  t.equal(b[1000], 3.0, "element write")
  t.equal(string.unpack("<f", b:bytes(10, 1)), -1.0, "bytes")

  -- Integer dtypes, a view, and copies both ways between devices.
  local host = cpu:buffer("i32", { 1, 2, 3, 4, 5, 6 })
  local on_dev = dev:buffer("i32", 8)
  on_dev:copy_from(host, 2)
  local view = on_dev:view(3, 4)
  view:fill(9, 2, 2)
  t.equal(table.concat(on_dev:read(), ","), "0,1,2,9,9,5,6,0", "view")
  local back = cpu:buffer("i32", 8):copy_from(on_dev)
  t.equal(table.concat(back:read(), ","), "0,1,2,9,9,5,6,0", "to the CPU")
  local bytes = dev:buffer("u8", string.rep("\255", 33))
  t.equal(bytes[33], 255, "u8 from a string")
  for _, storage in ipairs({ "shared", "managed" }) do
    local ok, s = pcall(dev.buffer, dev, "f64", { 1.25, 2.5 },
                        { storage = storage })
    if ok then
      t.equal(s.storage, storage, storage .. " storage")
      t.equal(s:read()[2], 2.5, storage .. " round trip")
    else  -- a GPU without managed memory says so
      t.check(storage == "managed" and s.code == "UNSUPPORTED", tostring(s))
      print("cuda.lua: no managed memory: " .. s.message)
    end
  end
end

--===-- Kernels -----------------------------------------------------------===--

local prog = dev:compile([[
  // Per-group sums by a tree reduction in local memory.
  __kernel void group_sum(__global const float* in, __global float* out,
                          __local float* tmp, uint n) {
    size_t g = get_global_id(0), l = get_local_id(0);
    tmp[l] = g < n ? in[g] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
      if (l < s) tmp[l] += tmp[l + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = tmp[0];
  }
  __kernel void scale(__global float* x, float k) {
    x[get_global_id(0)] *= k;
  }
  __kernel void coords(__global int* out, int w) {
    size_t x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = (int)(x * 1000 + y);
  }
]], { name = "gpu_smoke.cl" })

-- Sums of whole numbers stay exact in float, so the check is equality.
do
  local n, group = 100000, 256
  local groups = (n + group - 1) // group
  local values = {}
  for i = 1, n do values[i] = (i * 7) % 17 end
  local input = dev:buffer("f32", values)
  local sums = dev:buffer("f32", groups)
  prog.group_sum({ grid = groups * group, group = group }, input, sums,
                 dc.localmem(group * 4), n)
  local got = sums:read()
  for j = 1, groups do
    local want = 0
    for i = (j - 1) * group + 1, math.min(j * group, n) do
      want = want + values[i]
    end
    t.equal(got[j], want + 0.0, ("group %d's sum"):format(j))
  end
end

do  -- two dimensions, with a work-group shape and an offset
  local w, h = 64, 24
  local out = dev:buffer("i32", w * h)
  prog.coords({ grid = { w, h / 2 }, group = { 16, 4 }, offset = { 0, 12 } },
              out, w)
  t.equal(out[12 * w + 1], 12, "coords (0, 12)")
  t.equal(out[w * h], 63 * 1000 + 23, "coords (63, 23)")
  t.equal(out[1], 0, "rows outside the offset grid untouched")
end

--===-- Streams and events ------------------------------------------------===--

do
  local n = 1 << 20
  local s <close> = dev:stream()
  local other <close> = dev:stream()
  local x, y = dev:buffer("f32", n), dev:buffer("f32", n)
  local host_saw
  local t0 = s:record { timing = true }
  s:fill(x, 1):dispatch(prog.scale, { grid = n }, x, 3.0)
  s:host(function() host_saw = x[n] end)  -- after the dispatch
  local t1 = s:record { timing = true }
  local head = s:read(x, 1, 4)
  -- Another stream waits for t1 before it copies x.
  other:wait(t1):copy(y, x):dispatch(prog.scale, { grid = n }, y, 0.5)
  local tail = other:read(y, n - 1, 2)
  s:sync()
  other:sync()
  t.equal(table.concat(head:get(), ","), "3.0,3.0,3.0,3.0", "stream read")
  t.equal(host_saw, 3.0, "the host function ran after the dispatch")
  t.equal(table.concat(tail:get(), ","), "1.5,1.5", "waited for the event")
  t.equal(t1:query(), "done", "event done")
  local ms = t0:elapsed(t1)
  t.check(ms > 0 and math.type(t0:elapsed_ns(t1)) == "integer",
          "elapsed time " .. ms)
  print(("cuda.lua: fill and scale of %d floats: %.3f ms"):format(n, ms))
end

--===-- Graphs: a host op and retries -------------------------------------===--

do
  local n = 4096
  local a = dev:buffer("f32", n)
  local host_calls, total = 0, nil
  local g = dc.graph {
    name = "smoke",
    retry = dc.retry { attempts = 3, base = 0.001 },
    fallback = false,  -- a failure on the device must not hide on the CPU
  }
  g:fill("ones", a, 1)
  g:dispatch("triple", prog.scale, { grid = n }, { a, 3 })
  g:host("sum", function()
    host_calls = host_calls + 1
    if host_calls == 1 then
      error(dc.error("UNAVAILABLE", "the first call fails on purpose"))
    end
    total = 0
    for _, v in ipairs(a:read()) do total = total + v end
  end, { reads = { a } })
  -- The dispatch's first launch on the device fails too, once.
  local rule = dc.fault.add { site = "launch", device = dev, name = "scale",
                              nth = 1 }
  local report = g:run()
  dc.fault.remove(rule)
  t.check(report.ok, "graph ok")
  t.equal(total, 3.0 * n, "graph result")
  t.equal(report.triple.device, dev.name, "dispatch ran on the device")
  t.equal(report.triple.attempts, 2, "failed launch retried")
  t.equal(report.sum.attempts, 2, "failed host op retried")
  t.check(not report.triple.fell_back, "no fallback")
  local again = g:run()  -- no faults left: one attempt each
  t.check(again.ok and again.triple.runs == 2, "runs again")
  t.equal(again.triple.attempts + again.sum.attempts, 2, "no retries")
end

--===-- dc.matmul ---------------------------------------------------------===--

-- What dc.matmul must use on |d|: the vendor library when it loads here
-- (as the engine loads it), the built-in kernel otherwise.
local function expected_matmul_backend(d)
  local libraries = {
    cuda = { "cublas", { "libcublas.so.13", "libcublas.so.12",
                         "libcublas.so" } },
    cpu = { "openblas", { "libopenblas.so.0" } },
  }
  local entry = libraries[d.backend]
  if entry == nil or package.loadlib == nil then return nil end
  for _, lib in ipairs(entry[2]) do
    if package.loadlib(lib, "*") then return entry[1] end
  end
  return "kernel"
end

do
  local m, n, k = 37, 41, 29
  -- Values of ten bits or fewer are exact in every float format a GPU
  -- library may compute in (TF32 included).
  local av, bv = {}, {}
  for i = 1, m * k do av[i] = (i * 37 % 1024) / 1024 end
  for i = 1, k * n do bv[i] = (i * 53 % 1024) / 1024 end
  local a, b = dev:buffer("f32", av), dev:buffer("f32", bv)
  local c = dc.matmul(a, b, dev:buffer("f32", m * n), m, n, k)
  local got = c:read()
  for i = 0, m - 1 do
    for j = 0, n - 1 do
      local want = 0
      for p = 0, k - 1 do
        want = want + av[i * k + p + 1] * bv[p * n + j + 1]
      end
      t.near(got[i * n + j + 1], want, ("C[%d][%d]"):format(i, j), 1e-5)
    end
  end
  local backend = dc.matmul_backend(dev)
  local want = expected_matmul_backend(dev)
  print(("cuda.lua: dc.matmul on %s uses %s"):format(dev.name, backend))
  if want ~= nil then t.equal(backend, want, "matmul backend") end
end

--===-- The runner and the scripts ----------------------------------------===--

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs dclua with |args| (already quoted), returning its exit code and
-- output (stdout and stderr).
local function run_dclua(args)
  local pipe = assert(io.popen(quote(dclua) .. " " .. args .. " 2>&1"))
  local out = pipe:read("a")
  local _, _, code = pipe:close()
  return code, out
end

-- Fails, showing |out|, unless |cond| holds.
local function check_run(cond, what, out)
  if not cond then
    error(("check failed: %s; output:\n%s"):format(what, out), 2)
  end
end

do
  local code, out = run_dclua("--list-devices")
  check_run(code == 0 and ("\n" .. out):find("\n" .. dev.name .. " ", 1, true),
            "--list-devices lists " .. dev.name, out)
  code, out = run_dclua("--device " .. quote(dev.name) ..
                        " -e 'print(dc.device().name)'")
  check_run(code == 0 and out == dev.name .. "\n", "--device", out)
end

-- A sandboxed script's kernel without loops over a vast grid (2^53
-- work-items: an H200 runs 2^38 such items in less than the second
-- allowed) stops at the time limit on the GPU too: a checked dispatch
-- runs there in slices of its groups, and the host stops between two.
do
  local script = 'local dev = dc.device() local p = dev:compile(' ..
      '"__kernel void k(__global int* o) { if (get_global_id(0) == 0) ' ..
      'o[0] = 1; }", { name = "vast.cl" }) ' ..
      'p.k({ grid = { 1 << 38, 1 << 15 }, group = { 256, 1 } }, ' ..
      'dev:buffer("i32", 1)) print("not reached")'
  local code, out = run_dclua("--sandbox --time-limit 1 --device " ..
                              quote(dev.name) .. " -e " .. quote(script))
  check_run(code == 1 and out:find("time limit exceeded", 1, true) and
            not out:find("not reached", 1, true),
            "a vast loop-free grid under --time-limit", out)
  print("ok: a vast loop-free grid stops at the time limit")
end

-- Each script on the device, verified against Lua, with no fallback: an
-- op that fails on the device fails the run instead of moving to the CPU.
local runs = {
  { "image_pipeline.lua", "--size 64x48 --streams 2 --runs 2" },
  { "image_pipeline.lua", "--size 40x30 --pattern noise --radius 3" },
  { "matmul_chain.lua", "--dims 48,32,40,16,24 --runs 1" },
  { "matmul_chain.lua", "--dims 40,24,36,20 --kernel tiled --tile 8 "
                        .. "--order tree --runs 1" },
  { "map_reduce.lua", "--count 100000 --group 64 --groups 3" },
  { "map_reduce.lua", "--expr 'exp(-x * x) * 2.0f' --count 3000" },
}
for _, r in ipairs(runs) do
  local what = r[1] .. " " .. r[2]
  local code, out = run_dclua(quote(scripts .. "/" .. r[1]) .. " " .. r[2] ..
                              " --device " .. quote(dev.name) ..
                              " --fallback none --check")
  check_run(code == 0 and out:find("\ncheck: ok"), what .. ": checked", out)
  -- The report's lines: op, state, device (other lines have a colon).
  local ops = 0
  for op, state, where in out:gmatch("\n([%w_]+) +(%a+) +(%S+)") do
    check_run(state == "ok" and (where == dev.name or where == "host"),
              ("%s: op %s %s on %s"):format(what, op, state, where), out)
    ops = ops + 1
  end
  check_run(ops > 0, what .. ": a report", out)
  check_run(not out:find("fell back", 1, true), what .. ": no fallback", out)
  print("ok: " .. what)
end

print("cuda.lua: ok")

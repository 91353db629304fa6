-- fuzz_lua.lua: the Lua side of the fuzz target of the `dc` module
-- (fuzz_lua.c embeds this file and runs it once per input).
--
-- The input bytes are a program: each step reads an operation and its
-- operands from them and calls into the module: any function of the `dc`
-- table or any function of any class's metatable (found at run time, so
-- new functions are fuzzed as soon as they exist), with a self and
-- arguments drawn from a pool of values: the objects that earlier calls
-- returned (open, closed, half made), forged selves (numbers, light
-- userdata, tables, other classes' objects), huge, negative and not-a-
-- number numbers, odd strings, tables with raising metamethods, and Lua
-- functions that raise (strings, error objects, values whose __tostring
-- raises), yield, collect garbage or re-enter the driver. Between calls
-- it closes objects, collects garbage, polls, and runs calls inside
-- coroutines. Every call is protected: an error is an answer, not a
-- finding. Findings are crashes, sanitizer reports, hangs, and an engine
-- left unusable (fuzz_lua.c checks that after each input).
--
-- Arguments: the input (a string), the classes ({ [name] = { meta =
-- metatable, tables = { method table, ... } } }, built by fuzz_lua.c from
-- the registry) and a list of light userdata.
-- SPDX-License-Identifier: MIT
local data, classes, lights = ...
local dc = dc
local pcall, type, select, getmetatable, setmetatable, rawequal =
  pcall, type, select, getmetatable, setmetatable, rawequal

--===-- Reading the input -----------------------------------------------===--

local pos, size = 0, #data

local function more() return pos < size end

local function u8()
  pos = pos + 1
  if pos > size then return 0 end
  return data:byte(pos)
end

local function u16() return u8() * 256 + u8() end

-- An element of |list| chosen by the input.
local function pick(list)
  local n = #list
  if n == 0 then return nil end
  return list[(n > 256 and u16() or u8()) % n + 1]
end

--===-- Constant values -------------------------------------------------===--

local NUMBERS = {
  0, 1, -1, 2, 3, 4, 5, 7, 8, 16, 17, 64, 255, 256, 1000, 1024, 4096, 65536,
  1 << 20, 2^31, 2^32, 2^53, 2^63, -2^63, math.maxinteger, math.mininteger,
  -2^31, 0.5, -0.0, 1.5, 2.5, 1e308, -1e308, 1e-300, math.huge, -math.huge,
  0/0, 3.0, 16.0,
}

local STRINGS = {
  "", "x", "y", "a", "n", "cpu", "cpu:1", "cuda:0", "f32", "f64", "i8", "u8",
  "i16", "u16", "i32", "u32", "i64", "u64", "sync", "timing", "normal",
  "low", "high", "launch", "copy", "alloc", "compile", "launch,copy",
  "UNAVAILABLE", "DATA_LOSS", "OK", "CANCELLED", "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED", "transient", "permanent", "all", "full", "none",
  "equal", "decorrelated", "name", "grid", "group", "offset", "twice", "add",
  "rec", "spin", "matmul", "sum", "fill", "copy_u8", "%s%n%p%d", ("A"):rep(300),
  "a\0b", "\255\254\0", "launch:rate=0.5:seed=3", "alloc:nth=2",
  "compile:nth=1;copy:rate=1", "copy:nth=1:status=DATA_LOSS", "-DN=4",
  "-cl-fast-relaxed-math", "-dc-checked", "fuzz.pgm", "out/../fuzz.pgm",
  "/nonexistent/x.pgm", "P2\n2 2\n255\n0 1 2 3\n", "methods", "__index",
  "read", "bytes", "write", "view", "close", "length", "dtype", "device",
  "program", "event", "buffer", "cancelled", "label", "id", "priority",
  "stream", "kernels", "storage", "size", "copy:nth=2:halfway",
  "-dc-no-coarsening",
}

-- Kernel sources: a few fixed ones, so that the context's program cache
-- keeps compiles to the first input that needs each.
local SOURCES = {
  [[__kernel void twice(__global float* x) { x[get_global_id(0)] *= 2.0f; }]],
  [[__kernel void add(__global const int* a, __global const int* b,
                      __global int* c, int n) {
      size_t i = get_global_id(0);
      if (i < (size_t)n) c[i] = a[i] + b[i];
    }]],
  [[typedef struct { int lo; float hi; } pair_t;
    __kernel void rec(__global float* out, pair_t p, float4 v,
                      __local float* tmp) {
      size_t i = get_global_id(0);
      tmp[get_local_id(0)] = p.hi + v.x;
      barrier(CLK_LOCAL_MEM_FENCE);
      out[i] = tmp[get_local_id(0)] + (float)p.lo;
    }]],
  [[__kernel void spin(__global int* x, int n) {
      for (int i = 0; i < n; ++i) x[0] += i;
    }]],
  [[__kernel void broken(__global float* x) { x[0] = y; }]],
}

-- Option keys the module's functions read, and values that suit them.
local KEYS = {
  "grid", "group", "offset", "attempts", "base", "max", "factor", "jitter",
  "budget", "retry_on", "never_retry", "seed", "failures", "ratio",
  "min_calls", "window", "open_for", "probes", "failure_codes", "timing",
  "label", "priority", "count", "name", "streams", "device", "fallback",
  "retry", "breaker", "error_mode", "after", "reads", "writes",
  "read_writes", "no_snapshot", "timeout", "token", "raise", "progress",
  "defines", "options", "site", "nth", "rate", "limit", "permanent",
  "status", "runs", "warmup", "work", "dims", "buffer", "storage", "dtype",
  "dst_offset", "src_offset", "total", "unit", "N", "TWICE", 1, 2, 3, 4,
  "halfway",
}

-- Times in seconds and counts of repeats stay small: a script that asks
-- to sleep an hour or to profile a function 10^8 times is not a finding.
local SMALL = { 0, -1, 0/0, 1e-9, 0.001, 0.02, math.huge, 1, 2, 3, "x", true }
local SMALL_KEYS = {
  base = true, max = true, budget = true, window = true, open_for = true,
  timeout = true, runs = true, warmup = true, attempts = true,
}

--===-- The pool --------------------------------------------------------===--

local pool = {}
local POOL_MAX = 96
local next_slot = 0

local function put(v)
  if v == nil then return end
  if type(v) == "function" then  -- a C function: wrap it, so that the
    local f = v                  -- time limit can stop a loop calling it
    v = function(...) return f(...) end
  end
  if #pool < POOL_MAX then
    pool[#pool + 1] = v
  else
    next_slot = next_slot % POOL_MAX + 1
    pool[next_slot] = v
  end
end

local function from_pool() return pool[u8() % #pool + 1] end

local function bad_error()
  return setmetatable({}, {
    __tostring = function() error("fuzz: a __tostring that raises") end,
  })
end

local depth = 0
local step  -- forward

-- Runs up to |n| more steps from inside a callback (re-entering the
-- module from engine-thread callbacks, __gc and metamethods).
local function nested(n)
  if depth >= 3 then return end
  depth = depth + 1
  for _ = 1, n do
    if not more() then break end
    pcall(step)
  end
  depth = depth - 1
end

-- Lua functions scripts give the module: host functions, host ops,
-- subflows, completion callbacks, profiled functions, retried functions.
local CALLBACKS = {
  function() end,
  function(...) return ... end,
  function() error("fuzz: a string error") end,
  function() error(dc.error("UNAVAILABLE", "fuzz: transient")) end,
  function() error(dc.error("DATA_LOSS", "fuzz: permanent")) end,
  function() error(bad_error()) end,
  function()
    error(setmetatable({}, { __tostring = function() return {} end }))
  end,
  function() error() end,
  function() error(dc.error("UNKNOWN", "x"), 0) end,
  function(...) return coroutine.yield(...) end,
  function() collectgarbage() end,
  function() collectgarbage("step", 100) end,
  function() nested(4) end,
  function() nested(1); error("fuzz: after a nested step") end,
  function() pcall(dc.poll) end,
  function() return from_pool(), from_pool() end,
  function(sub) -- a subflow that adds ops to its graph
    if type(sub) == "userdata" then
      pcall(function() sub:host("h" .. u8(), function() end) end)
    end
  end,
  function()  -- fill the Lua heap up to the memory limit
    local t = {}
    for i = 1, 1e7 do t[i] = { i } end
  end,
}

-- Tables with metamethods that raise or misbehave.
local function hostile_table()
  local k = u8() % 6
  if k == 0 then return bad_error() end
  if k == 1 then
    return setmetatable({}, { __index = function() error("fuzz: __index") end })
  end
  if k == 2 then
    return setmetatable({ 1, 2 },
                        { __len = function() error("fuzz: __len") end })
  end
  if k == 3 then
    return setmetatable({}, { __len = function() return 2^53 end })
  end
  if k == 4 then
    return setmetatable({}, { __call = function(...) return nested(2) end })
  end
  return setmetatable({}, {
    __gc = function() nested(2) end,  -- re-enters from the collector
    __close = function() error("fuzz: __close") end,
  })
end

local make_table  -- forward

local function value()
  local k = u8() % 16
  if k <= 2 then return pick(NUMBERS) end
  if k <= 4 then return pick(STRINGS) end
  if k <= 8 then return from_pool() end
  if k == 9 then return pick(CALLBACKS) end
  if k == 10 then return make_table() end
  if k == 11 then return hostile_table() end
  if k == 12 then return pick(lights) end
  if k == 13 then return pick(SOURCES) end
  if k == 14 then
    local specials = { true, false, dc, coroutine.create(print),
                       coroutine.running(), io.stdout }
    return pick(specials)
  end
  return nil
end

-- A table of |n| random fields: option tables, launch tables, argument
-- lists, records.
make_table = function()
  if depth >= 4 then return {} end
  depth = depth + 1
  local t = {}
  local n = u8() % 6
  for i = 1, n do
    local key = u8() % 3 == 0 and i or pick(KEYS)
    local v
    if SMALL_KEYS[key] then v = pick(SMALL) else v = value() end
    if key ~= nil then t[key] = v end
  end
  if u8() % 8 == 0 then
    local mt = getmetatable(hostile_table())
    if mt ~= nil then setmetatable(t, mt) end
  end
  depth = depth - 1
  return t
end

--===-- What can be called ----------------------------------------------===--

local CALLABLES = {}  -- { name, function }, sorted by name
local METHODS = {}    -- metatable -> sorted list of method and field names

local function add_callable(name, fn)
  CALLABLES[#CALLABLES + 1] = { name, fn }
end

-- The dc table and its sub-tables (dc.trace, dc.fault, dc.image, ...).
local function walk(t, prefix, seen)
  for k, v in pairs(t) do
    if type(k) == "string" then
      if type(v) == "function" then
        add_callable(prefix .. k, v)
      elseif type(v) == "table" and not seen[v] then
        seen[v] = true
        walk(v, prefix .. k .. ".", seen)
      end
    end
  end
end
walk(dc, "dc.", {})

local EXTRA_NAMES = { "name", "length", "dtype", "device", "id", "label",
                      "stream", "event", "buffer", "kernels", "bytes" }
for cname, info in pairs(classes) do
  local names = {}
  for _, tbl in ipairs(info.tables) do
    for k, v in pairs(tbl) do
      if type(k) == "string" and type(v) == "function" then
        add_callable(cname .. "." .. k, v)
        names[#names + 1] = k
      end
    end
  end
  for _, k in ipairs(EXTRA_NAMES) do names[#names + 1] = k end
  table.sort(names)
  METHODS[info.meta] = names
end
table.sort(CALLABLES, function(a, b) return a[1] < b[1] end)

--===-- Steps -----------------------------------------------------------===--

-- Values for |n| arguments.
local function args(n)
  local list = {}
  for i = 1, n do list[i] = value() end
  return list, n
end

local function keep(ok, ...)
  if ok then
    for i = 1, math.min(select("#", ...), 3) do put((select(i, ...))) end
  else
    put((...))  -- errors are values too: error objects, forged ones
  end
end

-- DC_FUZZ_LUA_TRACE=1 prints each call (to triage an input).
local trace = os.getenv("DC_FUZZ_LUA_TRACE") and function(name, list, n)
  local parts = {}
  for i = 1, n do
    local v = list[i]
    parts[i] = type(v) == "string" and ("%q"):format(v:sub(1, 40))
               or type(v) == "number" and tostring(v) or type(v)
  end
  io.stderr:write(("%.3f %s%s(%s)\n"):format(os.clock(), ("  "):rep(depth),
                                             name, table.concat(parts, ", ")))
end or function() end

-- Any function of the module, any arguments (self included).
local function call_any()
  local entry = pick(CALLABLES)
  local list, n = args(u8() % 5)
  trace(entry[1], list, n)
  keep(pcall(entry[2], table.unpack(list, 1, n)))
end

-- A method of a pool object, with a self of its class (or, now and then,
-- the object of another).
local function call_method()
  local obj = from_pool()
  local mt = getmetatable(obj)
  local names = type(mt) == "table" and METHODS[mt]
  if not names then return call_any() end
  local name = pick(names)
  local ok, fn = pcall(function() return obj[name] end)
  if not ok then return end
  if type(fn) ~= "function" then return put(fn) end
  local self = u8() % 8 == 0 and from_pool() or obj
  local list, n = args(u8() % 4)
  trace(":" .. name, list, n)
  keep(pcall(fn, self, table.unpack(list, 1, n)))
end

-- The operators of a pool object: #, tostring, call, index, newindex,
-- comparison, concatenation, to-be-closed.
local function operate()
  local obj, other = from_pool(), value()
  local k = u8() % 8
  trace("operator " .. k, { obj, other }, 2)
  if k == 0 then keep(pcall(function() return #obj end))
  elseif k == 1 then keep(pcall(tostring, obj))
  elseif k == 2 then keep(pcall(obj, other, value()))
  elseif k == 3 then keep(pcall(function() return obj[other] end))
  elseif k == 4 then pcall(function() obj[other] = value() end)
  elseif k == 5 then pcall(function() return obj == other, obj < other end)
  elseif k == 6 then pcall(function() return obj .. "" end)
  else
    pcall(function()
      local c <close> = obj  -- raises unless it has __close
    end)
  end
end

-- Closes a pool object through its metatable (close, __close or __gc),
-- leaving it in the pool, closed.
local function close_one()
  local obj = from_pool()
  local mt = getmetatable(obj)
  if type(mt) ~= "table" then return end
  local fns = { rawget(mt, "__close"), rawget(mt, "__gc") }
  local fn = fns[u8() % 2 + 1]
  trace("close", { obj }, 1)
  if type(fn) == "function" then pcall(fn, obj) end
end

local function collect()
  local k = u8() % 4
  if k == 0 then collectgarbage()
  elseif k == 1 then collectgarbage("step", u8())
  elseif k == 2 then collectgarbage("generational")
  else collectgarbage("incremental") end
end

-- A step inside a coroutine, resumed again (or closed, or left
-- suspended) if a callback yielded it.
local function in_coroutine()
  local co = coroutine.create(function() return step() end)
  local ok = coroutine.resume(co)
  local k = u8() % 3
  if ok and coroutine.status(co) == "suspended" then
    if k == 0 then coroutine.resume(co, value())
    elseif k == 1 then coroutine.close(co)
    else put(co) end
  end
end

local STEPS = {
  call_any, call_any, call_any, call_any, call_any,
  call_method, call_method, call_method, call_method,
  operate, operate, close_one, collect,
  function() pcall(dc.poll) end,
  in_coroutine,
  function() put(value()) end,
}

step = function()
  return STEPS[u8() % #STEPS + 1]()
end

--===-- Setup: one object of each kind ----------------------------------===--

local function try(fn, ...)
  local ok, a, b = pcall(fn, ...)
  if ok then put(a); put(b) end
  return ok and a or nil
end

local dev = try(dc.device, "cpu")
if dev ~= nil then
  local f32 = try(dev.buffer, dev, "f32", 16)
  local i32 = try(dev.buffer, dev, "i32", { 1, 2, 3, 4, 5, 6, 7, 8 })
  try(dev.buffer, dev, "u8", 64)
  local s = try(dev.stream, dev, { label = "fuzz" })
  local ev = s and try(s.record, s)
  local prog = try(dev.compile, dev, SOURCES[u8() % 4 + 1])
  if prog then try(function() return prog.kernels and prog:kernels()[1] end) end
  if s then try(s.encoder, s); try(s.read, s, f32) end
  try(dev.group, dev, 2)
  try(dev.breaker, dev)
  try(dc.token)
  if ev then try(ev.on_complete, ev, pick(CALLBACKS)) end
  local g = try(dc.graph, { name = "fuzz" })
  if g and f32 then
    pcall(g.fill, g, "fill", f32, 1)
    pcall(g.host, g, "host", pick(CALLBACKS))
    try(g.instantiate, g)
    try(g.run, g, { raise = false })
  end
  if i32 then try(dc.sum, i32) end
end
try(dc.retry, { attempts = 2, base = 0.001 })
try(dc.breaker, { failures = 2, window = 1, open_for = 0.01 })
try(dc.localmem, 16)
try(dc.error, "UNAVAILABLE", "fuzz")
for _, v in ipairs { 0x41414141, -1, 0/0, "x", {}, true } do put(v) end

--===-- The run ---------------------------------------------------------===--

local steps = 0
while more() and steps < 400 do
  pcall(step)
  steps = steps + 1
end
for _ = 1, 4 do pcall(dc.poll) end

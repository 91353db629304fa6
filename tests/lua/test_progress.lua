-- test_progress.lua: progress lines on standard error (l_progress.c) for
-- graph runs, compiles, large transfers and dc.progress; DC_PROGRESS and
-- the runner's --progress option; dc.progress's argument checks.
--
-- The lines are checked in child processes whose standard error is a
-- file. With DC_PROGRESS=always a line has no delay, so every piece of
-- work that shows one leaves its final line however fast it ran: nothing
-- here depends on timing or on a terminal.
package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
local t = require("support")
local dc = require("dc")

local MiB = 1 << 20
local KERNEL = "__kernel void k(__global int* o) { o[0] = 1; }"

--===-- Children ----------------------------------------------------------===--

-- Every kind of work that shows a line, with output on stdout between.
local function child_work()
  local g = dc.graph { name = "pg" }
  g:host("a", function() end)
  g:host("b", function() end, { after = "a" })
  g:host("c", function() end, { after = "b" })
  g:run()
  local silent = dc.graph { name = "silent" }
  silent:host("a", function() end)
  silent:host("b", function() end)
  silent:run { progress = false }  -- a run may refuse the line
  local single = dc.graph { name = "single" }
  single:host("a", function() end)
  single:run()  -- one op: no line
  print("graphs done")
  dc.compile(KERNEL, { name = "prog.cl" })
  local a = dc.buffer("u8", 64 * MiB)  -- zeros: no transfer, no line
  local b = dc.buffer("u8", 64 * MiB)
  local bytes = a:bytes()
  b:copy_from(a)
  b:write(bytes)
  local c = dc.buffer("u8", bytes)
  local small = dc.buffer("f32", 16)
  small:read()  -- small transfers: no line
  small:bytes()
  a:close(); b:close(); c:close()
  local p <close> = dc.progress("generating inputs", 10)
  for i = 1, 7 do p:update(i) end
  p:close()
  local q = dc.progress("counting")
  q:update(5)
  q:close()
  local outer = dc.progress("outer", 2)  -- lines inside another's
  outer:update(1)
  g:run()
  outer:update(2)
  outer:close()
  print("work done")
end

-- Quick work that would show a line at once under DC_PROGRESS=always.
local function child_quick()
  local p = dc.progress("quick", 1)
  p:update(1)
  p:close()
  local g = dc.graph { name = "forced" }
  g:host("a", function() end)
  g:host("b", function() end)
  g:run { progress = true }
end

if arg[1] == "work" then return child_work() end
if arg[1] == "quick" then return child_quick() end

-- Runs this script as `dclua OPTS test_progress.lua MODE` with the
-- environment changes ENV (for env(1)); returns its exit code, stdout and
-- stderr. The kernel cache stays in memory.
local function child(mode, env, opts)
  local exe_index = -1
  while arg[exe_index - 1] ~= nil do exe_index = exe_index - 1 end
  local out, err = os.tmpname(), os.tmpname()
  local command = ("env -u DC_PROGRESS DC_CACHE_DIR=off %s '%s' %s '%s' %s " ..
                   ">'%s' 2>'%s'"):format(env or "", arg[exe_index],
                                          opts or "", arg[0], mode, out, err)
  local _, _, code = os.execute(command)
  local out_text, err_text = t.read_file(out), t.read_file(err)
  os.remove(out)
  os.remove(err)
  return code, out_text, err_text
end

-- Fails unless |text| holds |pattern| (a Lua pattern).
local function has(text, pattern, what)
  t.check(text:find(pattern), what .. ": no match for " ..
          ("%q"):format(pattern) .. " in:\n" .. text)
end

-- Fails unless |text| is only whole progress lines: each ends with a
-- newline and is made of \r-led segments that are a line
-- ("label  1.2 s") or blanks that clear a longer one.
local function only_lines(text, what)
  t.check(text ~= "" and text:sub(-1) == "\n", what .. ": ends with a newline")
  for line in text:gmatch("([^\n]*)\n") do
    t.check(line:sub(1, 1) == "\r",
            what .. ": line starts with \\r: " .. ("%q"):format(line))
    for segment in line:gmatch("\r([^\r]*)") do
      t.check(segment:find("^.+  %d+%.%d s$") or segment:find("^ *$"),
              what .. ": segment " .. ("%q"):format(segment))
    end
  end
end

local SECONDS = "  %d+%.%d s\n"

--===-- dc.progress: arguments and the object -----------------------------===--

do
  t.raises(nil, "string expected, got no value", dc.progress)
  t.raises(nil, "string expected, got number", dc.progress, 5)
  t.raises(nil, "label must not be empty", dc.progress, "")
  t.raises(nil, "label must be at most 200 bytes, got 201", dc.progress,
           ("x"):rep(201))
  t.raises(nil, "label must not hold control characters", dc.progress, "a\nb")
  t.raises(nil, "number expected, got string", dc.progress, "x", "10")
  t.raises(nil, "total must be an integer, got 1.5", dc.progress, "x", 1.5)
  t.raises(nil, "total must not be negative, got -1", dc.progress, "x", -1)
  t.raises(nil, "no more arguments expected", dc.progress, "x", 1, "items")
  local p = dc.progress("x", 10)
  t.equal(p:update(3), p, "update returns the object")
  t.equal(p:update(4.0), p, "an integral float is a count")
  t.equal(tostring(p), "dc.progress 'x': 4/10", "tostring")
  t.raises(nil, "done must be at most the total (10), got 11", p.update, p, 11)
  t.raises(nil, "done must not be negative, got -1", p.update, p, -1)
  t.raises(nil, "done must be an integer, got 0.5", p.update, p, 0.5)
  t.raises(nil, "number expected, got no value", p.update, p)
  t.raises(nil, "dc.progress expected, got table", p.update, {}, 1)
  p:close()
  p:close()  -- closing again does nothing
  t.raises(nil, "attempt to use a closed dc.progress", p.update, p, 1)
  t.equal(tostring(p), "dc.progress 'x' (closed)", "tostring when closed")
  do
    local q <close> = dc.progress("no total")
    q:update(123456)
    t.equal(tostring(q), "dc.progress 'no total': 123456", "without a total")
  end
  local zero = dc.progress("empty", 0)  -- nothing to do is allowed
  zero:update(0)
  t.raises(nil, "done must be at most the total (0), got 1", zero.update,
           zero, 1)
  zero:close()
end

--===-- Lines with DC_PROGRESS=always -------------------------------------===--

do
  local code, out, err = child("work", "DC_PROGRESS=always")
  t.equal(code, 0, "work child exit code (stderr:\n" .. err .. ")")
  t.equal(out, "graphs done\nwork done\n",
          "stdout holds only the script's output")
  only_lines(err, "always")
  has(err, "\rgraph 'pg': 3/3 ops" .. SECONDS, "graph run")
  local _, runs = err:gsub("\rgraph 'pg': 3/3 ops" .. SECONDS, "")
  t.equal(runs, 2, "a final line for each run of pg")
  t.check(not err:find("silent", 1, true), "progress = false: no line")
  t.check(not err:find("single", 1, true), "a one-op graph: no line")
  has(err, "\rcompiling 'prog%.cl' on cpu" .. SECONDS, "compile")
  has(err, "\rbuf:bytes: 64%.0/64%.0 MiB" .. SECONDS, "buf:bytes")
  has(err, "\rbuf:copy_from: 64%.0/64%.0 MiB" .. SECONDS, "buf:copy_from")
  has(err, "\rbuf:write: 64%.0/64%.0 MiB" .. SECONDS, "buf:write")
  has(err, "\rdc%.buffer: 64%.0/64%.0 MiB" .. SECONDS,
      "dc.buffer from a string")
  t.check(not err:find("buf:read", 1, true), "a small read: no line")
  t.check(not err:find("/0%.0 MiB"), "small transfers: no line")
  has(err, "\rgenerating inputs: 7/10" .. SECONDS, "dc.progress with a total")
  has(err, "\rcounting: 5" .. SECONDS, "dc.progress without a total")
  has(err, "\router: 2/2" .. SECONDS, "the outer line after the inner one")
end

--===-- No lines: off, not a terminal, the delay --------------------------===--

do
  -- Unset: the runner's setting, off since stderr is not a terminal.
  local code, out, err = child("work", "")
  t.equal(code, 0, "work child without DC_PROGRESS (stderr:\n" .. err .. ")")
  t.equal(out, "graphs done\nwork done\n", "stdout without lines")
  t.equal(err, "", "no lines off a terminal")
  code, _, err = child("quick", "DC_PROGRESS=off")
  t.equal(code, 0, "quick child, off")
  t.equal(err, "", "DC_PROGRESS=off overrides progress = true")
  code, _, err = child("quick", "DC_PROGRESS=auto")
  t.equal(code, 0, "quick child, auto")
  t.equal(err, "", "auto: dc.progress is silent off a terminal")
  -- on: lines off a terminal too, but only for work that lasts 0.5 s.
  -- The quick child's work takes far less on an idle machine, and draws
  -- nothing; on a loaded one it may last longer, so a whole line is
  -- accepted too (the test must not depend on the machine being idle).
  code, _, err = child("quick", "DC_PROGRESS=on")
  t.equal(code, 0, "quick child, on")
  if err ~= "" then only_lines(err, "quick on") end
  -- always, for the quick child: both lines.
  code, _, err = child("quick", "DC_PROGRESS=always")
  t.equal(code, 0, "quick child, always")
  only_lines(err, "quick always")
  has(err, "\rquick: 1/1" .. SECONDS, "quick dc.progress")
  has(err, "\rgraph 'forced': 2/2 ops" .. SECONDS, "quick graph")
end

--===-- The runner's --progress and a bad DC_PROGRESS ---------------------===--

do
  local code, _, err = child("quick", "DC_PROGRESS=off", "--progress=always")
  t.equal(code, 0, "--progress=always")
  has(err, "\rquick: 1/1" .. SECONDS, "--progress=always overrides DC_PROGRESS")
  code, _, err = child("quick", "DC_PROGRESS=always", "--progress=off")
  t.equal(code, 0, "--progress=off")
  t.equal(err, "", "--progress=off overrides DC_PROGRESS")
  code, _, err = child("quick", "DC_PROGRESS=always", "--progress")
  t.equal(code, 0, "--progress")
  if err ~= "" then only_lines(err, "--progress on") end  -- see "on" above
  code, _, err = child("quick", "", "--progress=sometimes")
  t.equal(code, 2, "a bad --progress is a usage error")
  has(err, "%-%-progress 'sometimes' is not auto, on, off or always",
      "--progress message")
  code, _, err = child("quick", "DC_PROGRESS=sometimes")
  t.equal(code, 2, "a bad DC_PROGRESS fails the module")
  has(err, "DC_PROGRESS: 'sometimes' is not one of auto, on, off, always",
      "DC_PROGRESS message")
end

print("progress: ok")

-- support.lua: what the Lua tests share. A test loads it with
--   package.path = arg[0]:match("^(.-)[^/]*$") .. "?.lua;" .. package.path
--   local t = require("support")
local dc = require("dc")

local t = {}

-- Fails the test with |what| unless |cond| holds.
function t.check(cond, what)
  if not cond then error("check failed: " .. tostring(what), 2) end
end

-- Fails unless a == b, showing both.
function t.equal(a, b, what)
  if a ~= b then
    error(("check failed: %s: expected %s, got %s"):format(
      what, tostring(b), tostring(a)), 2)
  end
end

-- Fails unless |a| and |b| are within |tol| (default 1e-6 relative).
function t.near(a, b, what, tol)
  tol = tol or 1e-6
  if math.abs(a - b) > tol * math.max(1, math.abs(b)) then
    error(("check failed: %s: expected %.9g, got %.9g"):format(
      what, b, a), 2)
  end
end

-- Calls fn(...) and requires it to raise. When |code| is given the error
-- must be a dc error object with that code; when |pattern| is given its
-- message (or the string error) must contain it (plain match). Returns
-- the error.
function t.raises(code, pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error("check failed: expected an error, got none", 2) end
  if code ~= nil then
    if not dc.is_error(err) then
      error("check failed: expected a dc error " .. code .. ", got: " ..
            tostring(err), 2)
    end
    if err.code ~= code then
      error(("check failed: expected code %s, got %s"):format(
        code, tostring(err)), 2)
    end
  end
  if pattern ~= nil then
    local text = dc.is_error(err) and err.message or tostring(err)
    if not text:find(pattern, 1, true) then
      error(("check failed: error %q does not mention %q"):format(
        text, pattern), 2)
    end
  end
  return err
end

-- Makes a new empty directory and returns its path.
function t.tmpdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p '" .. dir .. "'"))
  return dir
end

-- Returns the bytes of the file |path|.
function t.read_file(path)
  local f = assert(io.open(path, "rb"))
  local bytes = f:read("a")
  f:close()
  return bytes
end

-- Writes |bytes| to the file |path| and returns |path|.
function t.write_file(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
  return path
end

-- Runs the script |path| in a child runner sandboxed to the directory
-- |box| (made here), with |box| as its argument, and returns what it
-- printed (stderr included).
function t.run_sandboxed(box, path)
  assert(os.execute("mkdir -p '" .. box .. "'"))
  local runner = assert(arg[-1], "the runner's path in arg[-1]")
  local p = io.popen(("'%s' --sandbox='%s' '%s' '%s' 2>&1"):format(
    runner, box, path, box))
  local out = p:read("a")
  p:close()
  return out
end

return t

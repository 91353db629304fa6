-- options.lua: the configuration of the scripts in scripts/, from the
-- command line or from a table, described once by a spec.
--
-- A spec lists the script's options:
--
--   local spec = {
--     name = "image_pipeline",                       -- for messages
--     usage = "dclua scripts/image_pipeline.lua [options] [input.pgm]",
--     about = "What the script does, one paragraph.",
--     options = {
--       { name = "streams", type = "integer", default = 4, min = 1,
--         max = 64, arg = "N", help = "streams of the graph" },
--       ...
--     },
--     positionals = { "input", "blurred" },           -- config keys
--   }
--
-- Types: "string", "integer", "number", "flag" (a boolean; on the command
-- line it takes no value), "size" ("WxH" or { w, h }), "list" ("a,b,c" or
-- { a, b, c } of integers) and "choice" (one of `values`). An option
-- "retry-attempts" is the config key retry_attempts.
--
-- options.parse(spec, argv) reads a command line and options.resolve(spec,
-- config) checks a table; both give the same checked table with the
-- defaults filled in. resolve raises a plain error naming the field;
-- parse raises a usage error (a table with usage = true and message, see
-- raise_usage) naming the option.
-- Nothing here needs the dc module or the debug library.
-- SPDX-License-Identifier: MIT
local options = {}

-- The config key of an option name: dashes become underscores.
local function key_of(name)
  return (name:gsub("-", "_"))
end

-- Shows a value in a message: strings quoted, tables as "a table".
local function show(value)
  if type(value) == "string" then return ("'%s'"):format(value) end
  if type(value) == "table" then return "a table" end
  return tostring(value)
end

-- Reads one positive integer of a size or a list.
local function positive(value, min)
  local n = math.tointeger(tonumber(value))
  if n ~= nil and n >= (min or 1) then return n end
end

-- Each converter returns the checked value, or nil and what was expected.
local convert = {}

function convert.string(value)
  if type(value) == "string" and value ~= "" then return value end
  return nil, "a non-empty string"
end

-- Integers and numbers accept numerals from the command line and numbers
-- from tables, within the option's min and max.
local function range_text(opt, what)
  if opt.min and opt.max then
    return ("%s from %s to %s"):format(what, opt.min, opt.max)
  elseif opt.min then
    return ("%s of at least %s"):format(what, opt.min)
  end
  return what
end

local function in_range(opt, n)
  return (opt.min == nil or n >= opt.min) and (opt.max == nil or n <= opt.max)
end

function convert.integer(value, opt)
  local n = math.tointeger(tonumber(value))
  if n ~= nil and in_range(opt, n) then return n end
  return nil, range_text(opt, "an integer")
end

function convert.number(value, opt)
  local n = tonumber(value)
  if n ~= nil and n == n and in_range(opt, n) then return n + 0.0 end
  return nil, range_text(opt, "a number")
end

function convert.flag(value)
  if type(value) == "boolean" then return value end
  return nil, "true or false"
end

-- "WxH" or { w, h }, each a positive integer within opt.max.
function convert.size(value, opt)
  local w, h
  if type(value) == "string" then
    w, h = value:match("^(%d+)[xX](%d+)$")
  elseif type(value) == "table" and #value == 2 then
    w, h = value[1], value[2]
  end
  w, h = positive(w), positive(h)
  local max = opt.max or math.maxinteger
  if w and h and w <= max and h <= max then return { w, h } end
  return nil, ("WxH, two positive integers up to %d"):format(max)
end

-- "a,b,c" or { a, b, c }: at least opt.min_count integers, each >= 1.
function convert.list(value, opt)
  local items = {}
  if type(value) == "string" then
    for item in (value .. ","):gmatch("([^,]*),") do
      items[#items + 1] = item
    end
  elseif type(value) == "table" then
    table.move(value, 1, #value, 1, items)
  end
  local max = opt.max or math.maxinteger
  local want = ("a list of at least %d positive integers up to %d, as "
                .. "'a,b,c'"):format(opt.min_count or 1, max)
  if #items < (opt.min_count or 1) then return nil, want end
  for i, item in ipairs(items) do
    items[i] = positive(item)
    if items[i] == nil or items[i] > max then return nil, want end
  end
  return items
end

-- One of opt.values; a numeral from the command line matches a number.
function convert.choice(value, opt)
  for _, v in ipairs(opt.values) do
    if value == v or (type(value) == "string" and tostring(v) == value) then
      return v
    end
  end
  return nil, "one of " .. table.concat(opt.values, ", ")
end

-- The option of |spec| called |name| (a command-line name or a key).
local function find(spec, name)
  for _, opt in ipairs(spec.options) do
    if opt.name == name or key_of(opt.name) == name then return opt end
  end
end

-- Converts |value| for |opt| or raises "<where>: expected <what>, got
-- <value>" (through |raise|, default error).
local function checked(opt, value, where, raise)
  local v, expected = convert[opt.type](value, opt)
  if v == nil then
    local message = ("%s: expected %s, got %s"):format(where, expected,
                                                        show(value))
    if raise then raise(message) end
    error(message, 0)
  end
  return v
end

--===-- Tables ------------------------------------------------------------===--

-- options.resolve(spec, config) -> a new table: every option's checked
-- value or its default, and the positionals (strings). An unknown field
-- raises, so a misspelt setting is never ignored.
function options.resolve(spec, config)
  local caller = spec.name .. ".run"
  if config ~= nil and type(config) ~= "table" then
    error(("%s: expected a table of settings, got %s"):format(
      caller, type(config)), 0)
  end
  config = config or {}
  local out = {}
  for key, value in pairs(config) do
    local opt = find(spec, key)
    local is_positional = false
    for _, p in ipairs(spec.positionals or {}) do
      is_positional = is_positional or p == key
    end
    if is_positional then
      out[key] = checked({ type = "string" }, value,
                         ("%s: field '%s'"):format(caller, key))
    elseif opt == nil or type(key) ~= "string" or opt.name == "help" then
      error(("%s: unknown field %s (fields: %s)"):format(
        caller, show(key), options.fields(spec)), 0)
    else
      out[key_of(opt.name)] = checked(opt, value,
                                      ("%s: field '%s'"):format(caller, key))
    end
  end
  for _, opt in ipairs(spec.options) do
    local key = key_of(opt.name)
    if out[key] == nil and opt.default ~= nil then
      out[key] = type(opt.default) == "table"
                 and table.move(opt.default, 1, #opt.default, 1, {})
                 or opt.default
    end
  end
  return out
end

-- The field names a table may hold, for messages.
function options.fields(spec)
  local names, seen = {}, {}
  local function add(name)
    if not seen[name] then names[#names + 1], seen[name] = name, true end
  end
  for _, opt in ipairs(spec.options) do
    if opt.name ~= "help" then add(key_of(opt.name)) end
  end
  for _, p in ipairs(spec.positionals or {}) do add(p) end
  return table.concat(names, ", ")
end

--===-- Command lines -----------------------------------------------------===--

-- A command-line error: a table with usage = true, which dclua reports
-- as one line with exit status 2 (no traceback); tostring gives the text.
local UsageError = { __tostring = function(e) return e.message end }

local function raise_usage(message)
  error(setmetatable({ usage = true, message = message }, UsageError), 0)
end

-- Raises a usage error of |spec|'s command line.
local function usage_error(spec, format, ...)
  raise_usage(("%s: %s (see --help)"):format(spec.name, format:format(...)))
end

-- Splits "--name=value" into the option and its inline value.
local function split(spec, word)
  local name, value = word:match("^%-%-([^=]+)=(.*)$")
  name = name or word:match("^%-%-(.+)$") or word:match("^%-(%a)$")
  if name == "h" then name = "help" end
  local opt = name and find(spec, name)
  if opt == nil or key_of(opt.name) ~= key_of(name) then
    usage_error(spec, "unknown option '%s'", word)
  end
  return opt, value
end

-- options.parse(spec, argv) -> config, or nil after printing the usage
-- for --help. argv is a list of strings (the script's `...`).
function options.parse(spec, argv)
  local config, positional, i = {}, {}, 1
  local only_positionals = false
  while i <= #argv do
    local word = argv[i]
    if only_positionals or word == "-" or word:sub(1, 1) ~= "-" then
      positional[#positional + 1] = word
    elseif word == "--" then
      only_positionals = true
    else
      local opt, value = split(spec, word)
      if opt.name == "help" then
        print(options.usage(spec))
        return nil
      elseif opt.type == "flag" then
        if value ~= nil then
          usage_error(spec, "option --%s takes no value", opt.name)
        end
        value = true
      elseif value == nil then
        i = i + 1
        value = argv[i]
        if value == nil then
          usage_error(spec, "option --%s needs a value (%s)", opt.name,
                      opt.arg or "VALUE")
        end
      end
      config[key_of(opt.name)] = checked(opt, value, ("%s: option --%s")
                                         :format(spec.name, opt.name),
                                         raise_usage)
    end
    i = i + 1
  end
  local names = spec.positionals or {}
  if #positional > #names then
    usage_error(spec, "unexpected argument '%s'", positional[#names + 1])
  end
  for k, word in ipairs(positional) do
    if config[names[k]] ~= nil then
      usage_error(spec, "%s given twice", names[k])
    end
    config[names[k]] = word
  end
  return options.resolve(spec, config)
end

-- Appends |text| to |lines| after |left|, wrapped at 79 columns with the
-- lines after the first indented as far as |left|.
local function wrap(lines, left, text)
  local line = left
  for word in text:gmatch("%S+") do
    if #line + 1 + #word > 79 and #line > #left then
      lines[#lines + 1] = line
      line = (" "):rep(#left) .. word
    else
      line = line .. (#line > #left and " " or "") .. word
    end
  end
  lines[#lines + 1] = line
end

-- options.usage(spec) -> the --help text.
function options.usage(spec)
  local lines = { "usage: " .. spec.usage, "", spec.about, "", "options:" }
  for _, opt in ipairs(spec.options) do
    local left = "--" .. opt.name
    if opt.name == "help" then left = "-h, --help" end
    if opt.type ~= "flag" then left = left .. " " .. (opt.arg or "VALUE") end
    local help = opt.help
    if opt.default ~= nil and opt.type ~= "flag" then
      local d = opt.default
      if type(d) == "table" then
        d = table.concat(d, opt.type == "size" and "x" or ",")
      elseif type(d) == "string" and d:find(" ") then
        d = ("'%s'"):format(d)
      end
      help = ("%s (default %s)"):format(help, d)
    end
    wrap(lines, ("  %-22s "):format(left), help)
  end
  return table.concat(lines, "\n")
end

--===-- Script or module --------------------------------------------------===--

-- options.is_main(...) -> whether the chunk that calls it (passing its own
-- `...`) is the script the runner started, rather than a file loaded with
-- dofile or require. The runner passes the script its arguments both in
-- `...` and in `arg[1..n]`, and names it in arg[0]; require passes the
-- module name and path instead, dofile nothing. Where the debug library
-- exists the chunk's own file must also be arg[0], which tells a script
-- from a dofile of it by a main script without arguments; under
-- `dclua --sandbox` (no debug library) that one case cannot be told apart.
function options.is_main(...)
  if type(arg) ~= "table" or type(arg[0]) ~= "string" then return false end
  local n = select("#", ...)
  if n ~= #arg then return false end
  for i = 1, n do
    if select(i, ...) ~= arg[i] then return false end
  end
  if debug ~= nil and debug.getinfo ~= nil then
    local info = debug.getinfo(2, "S")
    return info ~= nil and info.source == "@" .. arg[0]
  end
  return true
end

return options

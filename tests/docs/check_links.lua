-- check_links.lua ROOT: every relative link of ROOT/README.md and of the
-- pages under ROOT/docs (subfolders included) must name a file that
-- exists, and a "#anchor" one of the target's headings, as GitHub renders
-- it (lower case, punctuation dropped, spaces made hyphens, "-1", "-2"...
-- after repeats). Links in code blocks and code spans are not links.
-- The sources' comments that name a docs page ("docs/graphs.md") must
-- name one that exists. Prints each broken link as file:line: target
-- (why) and exits 1 if there is one.

local root = assert(arg[1], "usage: check_links.lua ROOT")

local function read(path)
  local f = io.open(path, "r")
  if not f then return nil end
  local text = f:read("a")
  f:close()
  return text
end

-- The lines of |text| outside ``` fences, with their line numbers, and
-- with code spans blanked.
local function prose_lines(text)
  local lines, fenced, n = {}, false, 0
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if line:match("^%s*```") then
      fenced = not fenced
    elseif not fenced then
      lines[#lines + 1] = { n = n, text = line:gsub("`[^`]*`", "``") }
    end
  end
  return lines
end

-- GitHub's anchor of a heading's text.
local function slug(heading)
  local s = heading:lower():gsub("`", "")
  s = s:gsub("%[([^%]]*)%]%([^)]*%)", "%1")  -- a link keeps its text
  s = s:gsub("[^%w%- _\128-\255]", "")
  return (s:gsub(" ", "-"))
end

local anchors_of = {}
local function anchors(path)
  if anchors_of[path] == nil then
    local set, seen, text = {}, {}, read(path) or ""
    local fenced = false
    for line in (text .. "\n"):gmatch("(.-)\n") do
      if line:match("^%s*```") then
        fenced = not fenced
      elseif not fenced then
        local heading = line:match("^#+%s+(.-)%s*$")
        if heading then
          local base = slug(heading)
          local s = base
          if seen[base] then s = base .. "-" .. seen[base] end
          seen[base] = (seen[base] or 0) + 1
          set[s] = true
        end
      end
    end
    anchors_of[path] = set
  end
  return anchors_of[path]
end

local function dir_of(path) return path:match("^(.*)/[^/]*$") or "." end

local broken = 0
local function check(file, line, target)
  if target:match("^%a[%w+.-]*:") then return end  -- http:, mailto:, ...
  local path, anchor = target:match("^([^#]*)#?(.*)$")
  local resolved = path == "" and file or dir_of(file) .. "/" .. path
  local why
  if path ~= "" and not read(resolved) and
     not os.rename(resolved, resolved) then
    why = "no such file"
  elseif anchor ~= "" and resolved:match("%.md$") and
         not anchors(resolved)[anchor] then
    why = "no heading with that anchor"
  end
  if why then
    broken = broken + 1
    print(string.format("%s:%d: %s (%s)", file:sub(#root + 2), line, target,
                        why))
  end
end

-- README.md, then every .md file under docs/, subfolders included, in
-- sorted order (find lists what ls would not descend into).
local files = { root .. "/README.md" }
local list = assert(io.popen("find '" .. root .. "/docs' -name '*.md' -type f"))
local found = {}
for path in list:lines() do found[#found + 1] = path end
list:close()
table.sort(found)
for _, path in ipairs(found) do files[#files + 1] = path end
local count = 0
for _, file in ipairs(files) do
  for _, l in ipairs(prose_lines(assert(read(file), file))) do
    for target in l.text:gmatch("%]%(([^)%s]+)%)") do
      count = count + 1
      check(file, l.n, target)
    end
  end
end
-- The docs pages the sources name in their comments ("docs/graphs.md")
-- must exist too.
local sources = assert(io.popen("cd '" .. root .. "' && find core lua tests " ..
  "bench scripts examples -type f \\( -name '*.[ch]' -o -name '*.lua' " ..
  "-o -name '*.sh' -o -name 'CMakeLists.txt' \\) | sort"))
for path in sources:lines() do
  local n = 0
  for line in assert(io.lines(root .. "/" .. path)) do
    n = n + 1
    for page in line:gmatch("docs/[%w_/.-]-%.md") do
      count = count + 1
      if not read(root .. "/" .. page) then
        broken = broken + 1
        print(string.format("%s:%d: %s (no such page)", path, n, page))
      end
    end
  end
end
sources:close()
print(string.format("%d link(s) in %d file(s), %d broken", count, #files,
                    broken))
os.exit(broken == 0 and 0 or 1)

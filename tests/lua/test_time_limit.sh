#!/bin/sh
# test_time_limit.sh DCLUA: --time-limit ends every blocking wait of the
# module (issue 16): stream, group and event waits, futures, stream resets
# and graph runs end with "time limit exceeded" once the run's deadline
# passes, even when what they wait for never ends, and the runner still
# exits cleanly (exit 1, within a few seconds, no hang at shutdown).
#
# What never ends is built from a cycle no scheduler can break: a host
# function on stream s1 waits for the event `gate`, which s2 records only
# after s1's record that follows that very host function. Only the time
# limit ends the host function's wait; the work behind it then fails and
# drains, which is what lets the engine shut down.
set -u
dclua=$1
. "$(dirname "$0")/lib.sh"

# A guard against a hang: the test fails rather than blocking ctest.
guard=""
if command -v timeout >/dev/null 2>&1; then guard="timeout 60"; fi

# expect_limit WHAT SCRIPT: runs SCRIPT under a 0.5 s time limit and
# checks exit 1, "time limit exceeded" with DEADLINE_EXCEEDED, and that it
# took less than 15 s (sanitizer builds start slowly).
expect_limit() {
  what=$1
  printf '%s\n' "$2" >"$tmp/script.lua"
  start=$(date +%s)
  $guard "$dclua" --time-limit 0.5 "$tmp/script.lua" </dev/null \
    >"$tmp/out" 2>&1
  rc=$?
  elapsed=$(($(date +%s) - start))
  if [ "$rc" -eq 1 ] && grep -q "time limit exceeded" "$tmp/out" &&
     grep -q "DEADLINE_EXCEEDED" "$tmp/out" && [ "$elapsed" -lt 15 ]; then
    echo "ok: $what (${elapsed}s)"
  else
    echo "FAIL: $what -> exit $rc after ${elapsed}s, output:"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  fi
}

# The cycle: after it, `gate` never fires by itself.
cycle='local dev = dc.device()
local s1, s2 = dev:stream({ label = "s1" }), dev:stream({ label = "s2" })
local gate = dev:event()
s1:host(function() gate:wait() end)
s2:wait(s1:record())
s2:record(gate)'

expect_limit "a host function that never returns, then s:sync()" \
  'local s = dc.device():stream()
s:host(function() while true do end end)
s:sync()
print("not reached")'

expect_limit "s:sync() on a stream blocked by an endless wait" \
  "$cycle
s1:sync()"

expect_limit "ev:wait() for an event that never fires" \
  "$cycle
gate:wait()"

expect_limit "ev:wait() with a timeout longer than the limit" \
  "$cycle
gate:wait(60000)"

expect_limit "pcall cannot hold back the time limit of a wait" \
  "$cycle
for i = 1, 3 do pcall(gate.wait, gate) end
print('not reached')"

expect_limit "the wait of a blocked stream's future (f:get)" \
  "$cycle
local b = dev:buffer('i32', 4)
s2:read(b):get()"

expect_limit "g:sync() of a group with a blocked stream" \
  'local dev = dc.device()
local g = dev:group(2)
local gate = dev:event()
g[1]:host(function() gate:wait() end)
g[2]:wait(g[1]:record())
g[2]:record(gate)
g:sync()'

expect_limit "s:reset() of a blocked stream" \
  "$cycle
s2:reset()"

expect_limit "a graph op that blocks" \
  "$cycle
local g = dc.graph { name = 'blocked' }
g:host('block', function() gate:wait() end)
g:run()"

expect_limit "a graph op that never returns" \
  'local g = dc.graph { name = "spin" }
g:host("spin", function() while true do end end)
g:run()'

# Kernels that never end, outside the sandbox: a time limit builds every
# kernel with checked mode's stopping points, so it ends them too.
spin='local dev = dc.device("cpu")
local k = dev:compile [[
  __kernel void spin(__global int* x) { while (x[0] == 0) { x[1] += 1; } }
]].spin
local x = dev:buffer("i32", 2)'

# The limited runs find the kernel in a cache of this test's own, built
# beforehand under a generous limit (a limit builds the checked form): a
# compile on a loaded machine can take longer than the limit itself, which
# would then end the compile instead of the kernel.
DC_CACHE_DIR=$tmp/kernel-cache
export DC_CACHE_DIR
printf '%s\n' "$spin" >"$tmp/warm.lua"
$guard "$dclua" --time-limit 60 "$tmp/warm.lua" </dev/null >/dev/null 2>&1 ||
  echo "note: building the kernel beforehand failed; the runs below compile"

expect_limit "a kernel that never ends, dispatched synchronously" \
  "$spin
k({ grid = 1 }, x)"

expect_limit "a kernel that never ends, on a stream, then s:sync()" \
  "$spin
local s = dev:stream()
s:dispatch(k, { grid = 1 }, x)
s:sync()"
DC_CACHE_DIR=off

expect_limit "a wait inside a coroutine" \
  "$cycle
coroutine.wrap(function() gate:wait() end)()"

# A wait that the time limit does not bound still times out with its own
# error, and the run goes on. The wait is the host function's own: `gate`
# cannot fire while it runs, and once it gives up the cycle drains.
printf '%s\n' 'local dev = dc.device()
local s1, s2 = dev:stream(), dev:stream()
local gate = dev:event()
local ok, err
s1:host(function() ok, err = pcall(gate.wait, gate, 50) end)
s2:wait(s1:record())
s2:record(gate)
s1:sync() s2:sync() gate:wait()
print(ok, err.code, (err.message:find("time limit")) == nil)
print("done")' >"$tmp/script.lua"
$guard "$dclua" --time-limit 30 "$tmp/script.lua" </dev/null >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^false	DEADLINE_EXCEEDED	true$" "$tmp/out" &&
   grep -q "^done$" "$tmp/out"; then
  echo "ok: a wait's own timeout is its own error"
else
  echo "FAIL: a wait's own timeout -> exit $rc, output:"
  sed 's/^/  | /' "$tmp/out"
  failures=$((failures + 1))
fi

# Waits that end in time are untouched by a limit.
printf '%s\n' 'local dev = dc.device()
local s = dev:stream()
local ran = false
s:host(function() ran = true end)
s:sync()
local b = dev:buffer("i32", 4)
s:fill(b, 7)
assert(s:read(b):get()[4] == 7)
local ev = s:record()
ev:wait()
local g = dc.graph { name = "quick" }
g:host("h", function() end)
g:run()
assert(ran)
print("done")' >"$tmp/script.lua"
$guard "$dclua" --time-limit 30 "$tmp/script.lua" </dev/null >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^done$" "$tmp/out"; then
  echo "ok: waits that end in time"
else
  echo "FAIL: waits that end in time -> exit $rc, output:"
  sed 's/^/  | /' "$tmp/out"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all time-limit checks passed"

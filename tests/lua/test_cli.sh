#!/bin/sh
# test_cli.sh DCLUA SRCDIR: the runner's options, output and exit codes.
set -u
dclua=$1
dir=$2
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

TAB=$(printf '\t')

# The kernel cache stays in memory: the test writes nothing outside $tmp.
DC_CACHE_DIR=off
export DC_CACHE_DIR
# The CPU backend alone, as CTest sets it, also when run by hand: a GPU
# would change the default device and --list-devices (cuda.lua covers
# the GPU).
DC_DEVICES=cpu
export DC_DEVICES

# expect CODE PATTERN ARGS...: runs dclua ARGS (standard input from the
# file $stdin, /dev/null unless set), checks the exit code and that
# stdout+stderr match the grep pattern (if not empty).
stdin=/dev/null
expect() {
  code=$1; pattern=$2; shift 2
  "$dclua" "$@" <"$stdin" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$code" ] ||
     { [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/out"; }; then
    echo "FAIL: dclua $* -> exit $rc (want $code), output:"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  else
    echo "ok: dclua $*"
  fi
}

# check WHAT COMMAND...: runs a shell check on the last output or files.
check() {
  what=$1; shift
  if "$@"; then
    echo "ok: $what"
  else
    echo "FAIL: $what"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  fi
}

printf 'error("boom")\n' >"$tmp/fail.lua"
printf 'local x = \n' >"$tmp/syntax.lua"
printf 'print("args", ...)\n' >"$tmp/args.lua"

expect 0 "^dclua [0-9]" -v
expect 0 "^dclua [0-9]" --version
expect 0 "^cpu " --list-devices
expect 0 "usage: dclua" --help
expect 0 "hello" -e 'print("hello")'
expect 0 "args	a	b" "$tmp/args.lua" a b
expect 1 "boom" "$tmp/fail.lua"
expect 1 "stack traceback" "$tmp/fail.lua"
expect 1 "syntax.lua" "$tmp/syntax.lua"
expect 1 "cannot open" "$tmp/missing.lua"
expect 1 "attempt to call" -e 'nothing()'
expect 2 "^dclua: unknown option '--bogus'$" --bogus
check "a usage error is two lines" test "$(wc -l <"$tmp/out")" -eq 2
check "a usage error ends with the hint" grep -qx \
  "usage: dclua \[options\] \[script \[args\]\]; dclua --help for more" \
  "$tmp/out"
expect 2 "^dclua: --memory-limit 'x' is not a positive number$" \
  --memory-limit x
check "a bad value prints no help" sh -c "! grep -q -- '--stats' '$tmp/out'"
expect 2 "missing value after '-e'" -e
expect 2 "not a log level" --log loud -e 'x=1'
expect 0 "ok" --log debug -e 'print("ok")'
expect 0 "test_module: ok" "$dir/test_module.lua" one two

# Script from standard input, `arg` as the stock interpreter sets it.
printf 'print("stdin", ...)\n' >"$tmp/stdin.lua"
stdin=$tmp/stdin.lua
expect 0 "stdin	x	y" - x y
# Nothing to run and standard input not a terminal: it is the script.
printf 'print("from stdin")\n' >"$tmp/plain.lua"
stdin=$tmp/plain.lua
expect 0 "^from stdin$" 
expect 0 "^from stdin$" -W
stdin=/dev/null
expect 0 ""
check "empty input, empty output" test ! -s "$tmp/out"
check "echo 'print(1)' | dclua" \
  test "$(echo 'print(1)' | "$dclua" 2>&1)" = 1
printf '%s\n' \
  'print(table.concat({ arg[-2], arg[-1], arg[0], arg[1], arg[2] }, "|"))' \
  >"$tmp/argv.lua"
expect 0 "^-e|x = 1|.*argv.lua|p|-e$" -e 'x = 1' "$tmp/argv.lua" p -e
expect 3 "" -e 'os.exit(3)'
expect 0 "second" -e 'print("first")' -e 'print("second")'

# -l: modules into globals, in order with -e.
mkdir -p "$tmp/mods"
printf 'return { answer = 42 }\n' >"$tmp/mods/mymod.lua"
LUA_PATH="$tmp/mods/?.lua;;"
export LUA_PATH
expect 0 "42" -l mymod -e 'print(mymod.answer)'
expect 0 "42 true" -l m=mymod \
  -e 'print(m.answer .. " " .. tostring(mymod == nil))'
expect 0 "42" -lmymod -e 'print(mymod.answer)'
expect 1 "^x$" -e 'print("x")' -l nosuch_module_for_test -e 'print("y")'
check "-l stops at a missing module" sh -c "! grep -q '^y$' '$tmp/out'"
expect 1 "module 'nosuch_module_for_test' not found" -l nosuch_module_for_test
expect 2 "missing value after '-l'" -l
unset LUA_PATH

# -i: the interactive loop reads standard input (no prompts off a
# terminal): expressions print their values, =expr too, statements may
# span lines, an error does not end the loop.
cat >"$tmp/repl.txt" <<'LUA'
x = 6 * 7
x
=x + 1
for i = 1, 2 do
  print("loop" .. i)
end
error("oops")
print("after")
return 1, nil, "s"
LUA
stdin=$tmp/repl.txt
expect 0 "^42$" -i
expect 0 "^43$" -i
expect 0 "^loop2$" -i
expect 0 "oops" -i
expect 0 "^after$" -i
expect 0 "^1${TAB}nil${TAB}s$" -i
printf 'y\n' >"$tmp/repl_y.txt"
stdin=$tmp/repl_y.txt
expect 0 "^7$" -e 'y = 7' -i
expect 0 "^8$" -e 'y = 8' -i
printf 'print(arg[0])\n' >"$tmp/after.lua"
expect 0 "after.lua" -i "$tmp/after.lua"
stdin=/dev/null
check "-i prints no prompt off a terminal" \
  sh -c "! grep -q '^> ' '$tmp/out'"

# -W: warnings on.
expect 0 "Lua warning: careful" -W -e 'warn("careful")'
expect 0 "" -e 'warn("quiet")'
check "warnings are off by default" sh -c "! grep -q quiet '$tmp/out'"

# --device: the default device of dc.device().
expect 0 "^cpu$" --device cpu -e 'print(dc.device().name)'
expect 0 "^cpu$" --device=cpu -e 'print(dc.device().name)'
expect 2 "no device named 'nosuch'" --device nosuch -e 'x = 1'
expect 2 "missing value after '--device'" --device
expect 0 "compute units" --list-devices -e 'print(dc.device().name)'
check "--list-devices then runs the rest" grep -q '^cpu$' "$tmp/out"

# A small kernel for --trace and --stats.
cat >"$tmp/kernel.lua" <<'LUA'
local dev = dc.device()
local prog = dev:compile [[
  __kernel void twice_cli(__global float* x) {
    x[get_global_id(0)] = 2.0f * x[get_global_id(0)];
  }
]]
local x = dev:buffer("f32", { 1, 2, 3 })
for _ = 1, 3 do prog.twice_cli({ grid = 3 }, x) end
print(table.concat(x:read(), " "))
if arg[1] == "fail" then error("failed after the kernels") end
LUA

# --trace: Chrome trace JSON at exit, also when the script fails.
expect 0 "8.0 16.0 24.0" --trace "$tmp/trace.json" "$tmp/kernel.lua"
check "--trace writes JSON with the kernel" \
  grep -q '"name":"twice_cli"' "$tmp/trace.json"
check "--trace output is a traceEvents object" \
  sh -c "head -c 40 '$tmp/trace.json' | tr -d ' \n' |
         grep -q '^{\"traceEvents\"'"
rm -f "$tmp/trace.json"
expect 1 "failed after the kernels" --trace "$tmp/trace.json" \
  "$tmp/kernel.lua" fail
check "--trace is written when the script fails" \
  grep -q '"name":"twice_cli"' "$tmp/trace.json"
rm -f "$tmp/trace.json"
expect 3 "" --trace="$tmp/trace.json" -e 'os.exit(3)'
check "--trace is written at os.exit" test -s "$tmp/trace.json"
expect 2 "cannot write into the directory" --trace "$tmp/none/t.json" \
  -e 'x = 1'

# --stats: counters and kernel times on stderr.
expect 0 "dclua stats:" --stats "$tmp/kernel.lua"
expect 0 "dispatches 3" --stats "$tmp/kernel.lua"

# --metrics FILE: the telemetry as OpenMetrics text, written at exit.
expect 0 "" --metrics "$tmp/metrics.txt" "$tmp/kernel.lua"
check "--metrics counts the dispatches" \
  grep -q '^dc_dispatches_total 3$' "$tmp/metrics.txt"
check "--metrics ends with # EOF" sh -c "tail -n 1 '$tmp/metrics.txt' | grep -qx '# EOF'"
expect 2 "cannot write into the directory of" --metrics /no/such/dir/m.txt \
  -e 'x = 1'
expect 0 "twice_cli  *3 " --stats "$tmp/kernel.lua"
expect 1 "no kernels ran" --stats -e 'error("x")'
"$dclua" --stats -e 'x = 1' 2>/dev/null >"$tmp/out"
check "--stats writes to stderr" sh -c "! grep -q stats '$tmp/out'"

# --log, in both forms.
expect 0 "ok" --log=warn -e 'print("ok")'
expect 2 "missing value after '--log='" --log= -e 'x = 1'

# --sandbox: no programs, no C code, no debug library; writes only below
# DIR (nowhere without one).
mkdir -p "$tmp/box"
expect 0 "^nil${TAB}nil${TAB}nil${TAB}nil${TAB}nil$" --sandbox -e \
  'print(os.execute, io.popen, os.exit, package.loadlib, debug)'
expect 1 "attempt to call a nil value (field 'execute')" --sandbox \
  -e 'os.execute("echo escaped")'
expect 0 "^${TAB}2$" --sandbox -e 'print(package.cpath, #package.searchers)'
expect 0 "sandbox: writing '$tmp/outside.txt' is not allowed (only below" \
  "--sandbox=$tmp/box" -e "print(io.open('$tmp/outside.txt', 'w'))"
check "--sandbox wrote nothing outside" test ! -e "$tmp/outside.txt"
expect 0 "^inside$" "--sandbox=$tmp/box" -e "
  local f = assert(io.open('$tmp/box/in.txt', 'w'))
  f:write('inside') f:close()
  print(io.open('$tmp/box/in.txt'):read('a'))"
expect 0 "not allowed" "--sandbox=$tmp/box" \
  -e "print(io.open('$tmp/box/../escape.txt', 'a'))"
expect 0 "no writable directory" --sandbox \
  -e "print(io.open('$tmp/box/in.txt', 'w'))"
expect 0 "^inside$" --sandbox -e "print(io.open('$tmp/box/in.txt'):read('a'))"
expect 0 "^nil${TAB}nil${TAB}" "--sandbox=$tmp/box" \
  -e "print(os.remove('$tmp/args.lua'),
            os.rename('$tmp/box/in.txt', '$tmp/moved'))"
check "--sandbox kept files outside" test -e "$tmp/args.lua"
expect 0 "^$tmp/box/lua_" "--sandbox=$tmp/box" -e 'print(os.tmpname())'
expect 1 "PERMISSION_DENIED: sandbox" --sandbox \
  -e "dc.trace.start() dc.trace.write('$tmp/sandboxed.json')"
check "--sandbox: dc.trace.write refused" test ! -e "$tmp/sandboxed.json"
expect 0 "^written$" "--sandbox=$tmp/box" \
  -e "dc.trace.start() dc.trace.write('$tmp/box/t.json') print('written')"
expect 0 "binary chunk" --sandbox \
  -e 'print(load(string.dump(function() end)))'
expect 0 "42" --sandbox -e "package.path = '$tmp/mods/?.lua'" \
  -e 'print(require("mymod").answer)'
expect 2 "not a directory" "--sandbox=$tmp/missing" -e 'x = 1'
# A sandboxed script's kernels are compiled with bounds checks: a grid
# larger than its buffer stops at the buffer's end.
expect 1 "OUT_OF_RANGE" --sandbox -e '
  local b = dc.buffer("i32", 16)
  local p = dc.compile("__kernel void w(__global int* o) { o[get_global_id(0)] = 1; }")
  p.w({ grid = 1024 }, b)'
expect 0 "^done$" -e '
  local b = dc.buffer("i32", 16)
  local p = dc.compile("__kernel void w(__global int* o) { o[get_global_id(0) % 16] = 1; }")
  p.w({ grid = 1024 }, b) print("done")'

# --memory-limit: the Lua heap (and device buffers) capped.
expect 1 "not enough memory (the memory limit of 16.0 MiB" \
  --memory-limit 16 \
  -e 'local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(64) .. i end'
expect 1 "OUT_OF_MEMORY" --memory-limit 16 \
  -e 'local b = dc.buffer("f32", 64 * 1024 * 1024)'
expect 0 "^fits$" --memory-limit 16 \
  -e 'local s = ("x"):rep(1 << 20) print("fits")'
expect 2 "'-3' is not a positive number" --memory-limit -3 -e 'x = 1'
expect 2 "'lots' is not a positive number" --memory-limit lots -e 'x = 1'

# --time-limit: a loop that never ends stops, even behind pcall.
start=$(date +%s)
expect 1 "time limit exceeded" --time-limit 0.5 -e 'while true do end'
expect 1 "DEADLINE_EXCEEDED" --time-limit 0.5 \
  -e 'while true do pcall(function() while true do end end) end'
elapsed=$(($(date +%s) - start))
check "--time-limit stops loops in time (${elapsed}s)" test "$elapsed" -lt 10
expect 0 "^done$" --time-limit 5 -e 'for i = 1, 1e5 do end print("done")'
# In the sandbox kernels are checked: one that never ends stops too, and
# the script's time limit is what ends it.
spin='local o = dc.device():buffer("i32", 2)
dc.compile("__kernel void k(__global int* o) { while (o[0] == 0) o[1]++; }").k({ grid = 1 }, o)'
start=$(date +%s)
expect 1 "time limit exceeded" \
  --sandbox --time-limit 0.5 -e "$spin"
elapsed=$(($(date +%s) - start))
check "--time-limit stops a kernel in the sandbox (${elapsed}s)" \
  test "$elapsed" -lt 30
expect 2 "'0' is not a positive number" --time-limit 0 -e 'x = 1'
expect 2 "missing value after '--time-limit'" --time-limit

# LUA_INIT_5_4, else LUA_INIT (a chunk or @file), before -e and the
# script; -E ignores them and LUA_PATH, as lua's does.
printf 'print("init file")\n' >"$tmp/init.lua"
LUA_INIT='print("init")' expect 0 "^init$" -e 'x = 1'
LUA_INIT='x = 5' expect 0 "^5$" -e 'print(x)'
LUA_INIT="@$tmp/init.lua" expect 0 "^init file$" -e 'x = 1'
LUA_INIT_5_4='print("five four")' LUA_INIT='print("init")' \
  expect 0 "^five four$" -e 'x = 1'
check "LUA_INIT_5_4 wins over LUA_INIT" sh -c "! grep -qx init '$tmp/out'"
LUA_INIT='print("init")' expect 0 "^after$" -E -e 'print("after")'
check "-E ignores LUA_INIT" sh -c "! grep -q init '$tmp/out'"
LUA_PATH="$tmp/mods/?.lua" expect 1 "module 'mymod' not found" -E -l mymod
LUA_INIT='error("bad init")' expect 1 "LUA_INIT:1: bad init" -e 'x = 1'
LUA_INIT="@$tmp/missing.lua" expect 1 "cannot open" -e 'x = 1'
# In the sandbox LUA_INIT runs sandboxed, as the script does.
LUA_INIT='print(os.execute, debug)' expect 0 "^nil${TAB}nil$" --sandbox \
  -e 'x = 1'

# Ctrl-C: "interrupted!" with a traceback, exit 1 as lua, the trace and
# statistics still written. run_interrupted ARGS...: starts dclua ARGS in
# the background, waits for its "ready" line, sends SIGINT, and leaves
# the status in $rc and the output in $tmp/out.
run_interrupted() {
  : >"$tmp/out"
  "$dclua" "$@" </dev/null >"$tmp/out" 2>&1 &
  pid=$!
  n=0
  while ! grep -q '^ready$' "$tmp/out" && [ "$n" -lt 600 ]; do
    sleep 0.1; n=$((n + 1))
  done
  kill -INT "$pid"
  wait "$pid"
  rc=$?
}
ready='print("ready") io.stdout:flush()'
run_interrupted --trace "$tmp/int.json" --stats -e "$ready while true do end"
check "Ctrl-C: exit 1 (got $rc)" test "$rc" -eq 1
check "Ctrl-C: interrupted!" grep -q "^dclua: interrupted!$" "$tmp/out"
check "Ctrl-C: a traceback" grep -q "stack traceback" "$tmp/out"
check "Ctrl-C: --stats still printed" grep -q "dclua stats" "$tmp/out"
check "Ctrl-C: --trace still written" grep -q traceEvents "$tmp/int.json"
run_interrupted --time-limit 600 -e "$ready while true do end"
check "Ctrl-C under a time limit: interrupted! (exit $rc)" \
  grep -q "interrupted!" "$tmp/out"
# A checked kernel that never ends (the sandbox) stops too.
run_interrupted --sandbox -e "$ready $spin"
check "Ctrl-C stops a sandboxed kernel (exit $rc)" test "$rc" -eq 1
check "Ctrl-C in a kernel: interrupted or cancelled" \
  grep -q "interrupted!\|CANCELLED" "$tmp/out"
# The interactive loop: Ctrl-C stops the running line, the next one runs.
# The output file is emptied first: the shell opens it only once the fifo
# has a writer, so a "ready" left by the last run could be read before.
rm -f "$tmp/fifo"
mkfifo "$tmp/fifo"
: >"$tmp/out"
"$dclua" -i <"$tmp/fifo" >"$tmp/out" 2>&1 &
pid=$!
exec 3>"$tmp/fifo"
echo "$ready while true do end" >&3
n=0
while ! grep -q '^ready$' "$tmp/out" && [ "$n" -lt 600 ]; do
  sleep 0.1; n=$((n + 1))
done
kill -INT "$pid"
echo 'print("after " .. 1)' >&3
exec 3>&-
wait "$pid"
rc=$?
check "REPL Ctrl-C: exit 0 at the end of input (got $rc)" test "$rc" -eq 0
check "REPL Ctrl-C: interrupted!" grep -q "interrupted!" "$tmp/out"
check "REPL Ctrl-C: the next line runs" grep -q "^after 1$" "$tmp/out"

if [ "$failures" -ne 0 ]; then
  echo "$failures runner check(s) failed"
  exit 1
fi
echo "all runner checks passed"

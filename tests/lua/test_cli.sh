#!/bin/sh
# test_cli.sh DCLUA SRCDIR: the runner's options, output and exit codes.
set -u
dclua=$1
dir=$2
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect CODE PATTERN ARGS...: runs dclua ARGS, checks the exit code and
# that stdout+stderr match the grep pattern.
expect() {
  code=$1; pattern=$2; shift 2
  "$dclua" "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$code" ] || ! grep -q -- "$pattern" "$tmp/out"; then
    echo "FAIL: dclua $* -> exit $rc (want $code), output:"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  else
    echo "ok: dclua $*"
  fi
}

printf 'error("boom")\n' >"$tmp/fail.lua"
printf 'local x = \n' >"$tmp/syntax.lua"
printf 'print("args", ...)\n' >"$tmp/args.lua"

expect 0 "^dclua [0-9]" -v
expect 0 "^dclua [0-9]" --version
expect 0 "^cpu " --list-devices
expect 0 "usage: dclua" --help
expect 0 "usage: dclua"
expect 0 "hello" -e 'print("hello")'
expect 0 "args	a	b" "$tmp/args.lua" a b
expect 1 "boom" "$tmp/fail.lua"
expect 1 "stack traceback" "$tmp/fail.lua"
expect 1 "syntax.lua" "$tmp/syntax.lua"
expect 1 "cannot open" "$tmp/missing.lua"
expect 1 "attempt to call" -e 'nothing()'
expect 2 "unknown option '--bogus'" --bogus
expect 2 "missing value after '-e'" -e
expect 2 "not a log level" --log loud -e 'x=1'
expect 0 "ok" --log debug -e 'print("ok")'
expect 0 "test_module: ok" "$dir/test_module.lua" one two

if [ "$failures" -ne 0 ]; then
  echo "$failures runner check(s) failed"
  exit 1
fi
echo "all runner checks passed"

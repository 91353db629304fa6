#!/bin/sh
# test_scripts.sh DCLUA SCRIPTS: the ready-made pipeline scripts of
# scripts/ (image_pipeline, matmul_chain, map_reduce, stream_pipeline): their command
# lines, the table form, the files they write, runs with injected faults
# (retried, or moved to a fallback device), the sandbox, and checks that
# catch a broken kernel.
set -u
dclua=$1
scripts=$2
. "$(dirname "$0")/lib.sh"

# expect CODE PATTERN ARGS...: runs dclua ARGS, checks the exit code and
# that stdout+stderr match the grep pattern (if not empty) and hold no
# sanitizer report (a failure exit must not hide one).
expect() {
  code=$1; pattern=$2; shift 2
  "$dclua" "$@" </dev/null >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$code" ] ||
     grep -q "Sanitizer\|runtime error:" "$tmp/out" ||
     { [ -n "$pattern" ] && ! grep -q -- "$pattern" "$tmp/out"; }; then
    echo "FAIL: dclua $* -> exit $rc (want $code, output matching '$pattern'):"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  else
    echo "ok: dclua $(echo "$*" | head -n 1)"
  fi
}

# check WHAT COMMAND...: a shell check on the last output or on files.
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

# has PATTERN: the last output matches PATTERN.
has() { grep -q -- "$1" "$tmp/out"; }

img=$scripts/image_pipeline.lua
mm=$scripts/matmul_chain.lua
mr=$scripts/map_reduce.lua
sp=$scripts/stream_pipeline.lua

# --help: the usage, exit 0, nothing run.
expect 0 "usage: dclua scripts/image_pipeline.lua" "$img" --help
check "--help lists the options" has "--retry-attempts N"
check "--help runs nothing" eval '! grep -q "histogram:" "$tmp/out"'
expect 0 "usage: dclua scripts/matmul_chain.lua" "$mm" -h
expect 0 "usage: dclua scripts/map_reduce.lua" "$mr" --help

# Small runs verified against Lua.
expect 0 "check: ok" "$img" --size 64x48 --check --streams 2 --runs 2
check "image: the report lists the ops" has "^blur_y  *ok  *cpu"
check "image: the histogram summary" \
  has "histogram: 3072 pixels, min 0, max 255"
expect 0 "check: ok" "$img" --size 40x30 --pattern noise --radius 3 --check
expect 0 "check: ok (element by element" "$mm" --dims 48,32,40,16,24 --check
check "matmul: the plan" has "mm2 = mm1 \* A3"
check "matmul: GFLOP/s" has "^GFLOP/s: [0-9]"
expect 0 "check: ok (element by element" "$mm" --dims 40,24,36,20,16,8 \
  --order tree --kernel tiled --tile 8 --check
check "matmul tree: independent products" has "mm2 = A3 \* A4"
expect 0 "check: ok (projected" "$mm" --dims 200,160,200 --check --runs 1
expect 0 "check: ok" "$mr" --count 10000 --check
check "map_reduce: the result" has "^result: [0-9]"
expect 0 "check: ok" "$mr" --expr "exp(-x * x) * 2.0f" --count 3000 \
  --group 64 --groups 3 --check
expect 0 "check: ok" "$mr" --expr "x > 0.5f ? x : 0.0f" \
  --lua-expr "x > 0.5 and x or 0" --count 777 --group 1 --check
expect 0 "usage: dclua scripts/stream_pipeline.lua" "$sp" --help
expect 0 "check: ok" "$sp" --chunks 5 --chunk-elements 1000 --check
check "stream_pipeline: both orders timed" has "^speedup: [0-9]"
expect 0 "check: ok" "$sp" --chunks 3 --chunk-elements 7 --buffers 8 \
  --streams 3 --check --runs 1 --warmup 0
expect 2 "option --buffers: expected an integer from 1 to 64, got '0'" \
  "$sp" --buffers 0

# Bad command lines: one clear line and exit 2, as the runner's own usage
# errors, without a traceback.
expect 2 "image_pipeline: unknown option '--bogus' (see --help)" "$img" --bogus
expect 2 "option --streams: expected an integer from 1 to 64, got '0'" \
  "$img" --streams 0
expect 2 "option --size: expected WxH" "$img" --size 12
expect 2 "option --streams needs a value (N)" "$img" --streams
expect 2 "unexpected argument 'd.pgm'" "$img" a.pgm b.pgm c.pgm d.pgm
expect 2 "option --check takes no value" "$img" --check=yes
check "an option error has no traceback" eval '! grep -q traceback "$tmp/out"'
expect 1 "NOT_FOUND" "$img" "$tmp/missing.pgm"
expect 2 "option --dims: expected a list of at least 3 positive integers" \
  "$mm" --dims 16,16
expect 2 "option --kernel: expected one of builtin, tiled, got 'fast'" \
  "$mm" --kernel fast
expect 2 "option --group: expected one of 1, 2, 4" "$mr" --group 3
expect 1 "--expr must be one C expression" "$mr" --expr "x; }"
expect 1 "COMPILE" "$mr" --expr "y * 2" --count 10
expect 1 "give f(x) in Lua with --lua-expr" "$mr" --expr "x > 0 ? x : 0" \
  --count 10 --check

# The image pipeline on a PGM file, writing both outputs as PGM.
expect 0 "" -e "dc.image.save_pgm('$tmp/in.pgm',
  dc.image.generate(72, 40, 'noise', { seed = 3 }))"
expect 0 "check: ok" "$img" --check "$tmp/in.pgm" "$tmp/blur.pgm" \
  "$tmp/edge.pgm"
check "image: from the file" has "image: 72x40 $tmp/in.pgm"
check "image: wrote the blurred image" has "wrote $tmp/blur.pgm"
for f in blur edge; do
  check "$f.pgm is a binary PGM" \
    test "$(head -c 2 "$tmp/$f.pgm" 2>/dev/null)" = "P5"
  expect 0 "^72x40 255$" -e "local i = dc.image.load_pgm('$tmp/$f.pgm')
    print(i.width .. 'x' .. i.height .. ' ' .. i.maxval)"
done
expect 1 "does not match" "$img" "$tmp/in.pgm" --size 64x64
expect 0 "" -e "dc.image.save_pgm('$tmp/deep.pgm',
  dc.image.generate(8, 8, 'noise', { maxval = 1000 }))"
expect 1 "deep.pgm has maxval 1000" "$img" "$tmp/deep.pgm"
expect 0 "wrote $tmp/gen.pgm" "$img" --size 24x20 --blurred "$tmp/gen.pgm"
check "gen.pgm written" test -s "$tmp/gen.pgm"

# The table form: loading a script runs nothing; run(table) does.
cat >"$tmp/table.lua" <<'EOF'
local dir, tmp = ...
local dc = require("dc")
local img = dofile(dir .. "/image_pipeline.lua")
local mm = dofile(dir .. "/matmul_chain.lua")
local mr = dofile(dir .. "/map_reduce.lua")
assert(type(img.run) == "function" and type(mm.summary) == "function")

-- The image pipeline: outputs written, the blurred file is the blurred
-- buffer rounded and clamped, the histogram counts every pixel.
local path = tmp .. "/table_blur.pgm"
local r = img.run { size = "32x24", pattern = "gradient", radius = 2,
                    blurred = path, check = true, streams = 2 }
assert(r.checked and r.width == 32 and r.height == 24)
assert(r.summary.pixels == 32 * 24 and #r.histogram == 256)
local saved = dc.image.load_pgm(path).pixels
for i, v in ipairs(r.buffers.blurred:read()) do
  assert(saved[i] == math.floor(math.min(math.max(v, 0), 255) + 0.5),
         "saved pixel " .. i)
end
assert(r.report.ok and r.report.blur_x.state == "ok")
assert(img.summary(r):find("check: ok", 1, true))

-- matmul_chain: the result buffer against a product computed here.
local c = mm.run { dims = { 8, 4, 6 }, runs = 1, warmup = 0 }
math.randomseed(1)   -- the script's default seed: the same matrices
local a, b = {}, {}
for i = 1, 32 do a[i] = math.random(0, 1023) / 1024 end
for i = 1, 24 do b[i] = math.random(0, 1023) * 2.0 ^ -12 end
local out = c.output:read()
for i = 0, 7 do
  for j = 1, 6 do
    local s = 0
    for p = 1, 4 do s = s + a[i * 4 + p] * b[(p - 1) * 6 + j] end
    assert(math.abs(out[i * 6 + j] - s) <= 1e-5 * s, "C element")
  end
end
assert(c.flops == 2 * 8 * 6 * 4 and c.gflops > 0)

-- map_reduce: f(x) = 1 sums to the count exactly.
local s = mr.run { expr = "1.0f", count = 1000, check = true }
assert(s.value == 1000 and s.reference == 1000, s.value)

-- Bad tables raise, naming the field.
local function fails(fn, config, text)
  local ok, err = pcall(fn, config)
  assert(not ok and tostring(err):find(text, 1, true), tostring(err))
end
fails(img.run, { stream = 2 }, "image_pipeline.run: unknown field 'stream'")
fails(img.run, { size = { 0, 4 } }, "field 'size': expected WxH")
fails(mm.run, { dims = { 4, 4 } }, "field 'dims'")
fails(mr.run, { count = 0 }, "field 'count': expected an integer from 1")
fails(mr.run, 5, "expected a table of settings, got number")
print("table form: ok")
EOF
expect 0 "^table form: ok$" "$tmp/table.lua" "$scripts" "$tmp"
check "dofile printed nothing of the scripts" \
  test "$(wc -l <"$tmp/out")" -eq 1
expect 0 "^8x4 true$" -e "package.path = '$scripts/?.lua;' .. package.path
  local r = require('image_pipeline').run { size = { 8, 4 } }
  print(r.width .. 'x' .. r.height .. ' ' .. tostring(r.report.ok))"

# Injected launch faults (one launch in five fails): the retry policy
# tries again and every run still succeeds.
DC_FAULTS="launch:rate=0.2:seed=7"
export DC_FAULTS
expect 0 "check: ok" "$img" --size 48x32 --check --runs 3
retried=$(grep -c "retried" "$tmp/out")
expect 0 "check: ok" "$mm" --dims 48,32,40,16,24 --check
retried=$((retried + $(grep -c "retried" "$tmp/out")))
expect 0 "check: ok" "$mr" --count 5000 --check
retried=$((retried + $(grep -c "retried" "$tmp/out")))
check "faults were injected and retried ($retried ops)" test "$retried" -gt 0
# Copies that fail (three in ten) are retried and the data arrives whole.
# (A run of 24 copies without a fault has odds of 0.7^24, 0.02%, and the
# draws are seeded.)
DC_FAULTS="copy:rate=0.3:seed=11"
expect 0 "check: ok" "$sp" --chunks 8 --chunk-elements 3000 --check \
  --retry-attempts 30 --runs 1 --warmup 0
check "stream_pipeline: failed copies were retried" has "^retried: "
# Every launch fails and nothing retries: the run fails, visibly.
DC_FAULTS="launch:rate=1"
expect 1 "UNAVAILABLE: graph 'image_pipeline': op '.*' failed: injected fault" \
  "$img" --size 16x16 --retry-attempts 1
unset DC_FAULTS
# A lost device: its ops rerun on the CPU fallback.
DC_CPU_DEVICES=2
DC_FAULTS="launch:device=cpu:1:permanent"
export DC_CPU_DEVICES DC_FAULTS
expect 0 "check: ok" "$img" --size 32x32 --device cpu:1 --check
check "the ops fell back to cpu" has "blur_x .*(fell back to cpu)"
# Without a fallback the run fails: the first op to fail meets the lost
# device, ops that start after it meet its open breaker.
expect 1 "^dclua: \(DEVICE_LOST\|CIRCUIT_OPEN\): graph 'image_pipeline'" \
  "$img" --size 32x32 --device cpu:1 --fallback none
unset DC_CPU_DEVICES DC_FAULTS

# Under the sandbox: lib/ found from arg[0], outputs only inside DIR.
mkdir "$tmp/box"
expect 0 "check: ok" "--sandbox=$tmp/box" "$img" --size 16x16 --check \
  --blurred "$tmp/box/b.pgm"
check "sandbox: wrote inside DIR" test -s "$tmp/box/b.pgm"
expect 1 "PERMISSION_DENIED" "--sandbox=$tmp/box" "$img" --size 16x16 \
  --blurred "$tmp/outside.pgm"
check "sandbox: nothing outside DIR" test ! -e "$tmp/outside.pgm"

# The checks catch wrong results: copies of the scripts with a kernel
# broken on purpose fail with "check failed".
mkdir "$tmp/broken"
cp "$scripts"/*.lua "$tmp/broken/"
cp -R "$scripts/lib" "$tmp/broken/lib"
sed 's|atomic_inc(&counts\[(uint)clamp(in\[i\], 0.0f, 255.0f)\]);|atomic_inc(\&counts[(uint)clamp(in[i], 0.0f, 255.0f) / 2 * 2]);|' \
  "$scripts/image_pipeline.lua" >"$tmp/broken/hist_pipeline.lua"
sed -i 's|out\[y \* w + x\] = s / (2 \* R + 1);|out[y * w + x] = s / (2 * R + 1) + (x == 3 \&\& y == 2);|' \
  "$tmp/broken/image_pipeline.lua"
sed -i 's|acc += As\[ly \* TILE + i\] \* Bs\[i \* TILE + lx\];|acc += As[ly * TILE + i] * Bs[i * TILE + lx] * (row == 5 ? 1.01f : 1.0f);|' \
  "$tmp/broken/matmul_chain.lua"
sed -i 's|if (get_local_id(0) == 0) out\[0\] = t\[0\];|if (get_local_id(0) == 0) out[0] = t[0] * 1.001f;|' \
  "$tmp/broken/map_reduce.lua"
sed -i 's|if (i < n) out\[i\] = in\[i\] \* 2.0f + 1.0f;|if (i < n) out[i] = in[i] * 2.0f + 1.0f + (i == n - 1);|' \
  "$tmp/broken/stream_pipeline.lua"
for name in image_pipeline matmul_chain map_reduce stream_pipeline; do
  check "$name.lua was broken" eval \
    '! cmp -s "$scripts/$name.lua" "$tmp/broken/$name.lua"'
done
check "hist_pipeline.lua was broken" eval \
  '! cmp -s "$scripts/image_pipeline.lua" "$tmp/broken/hist_pipeline.lua"'
expect 1 "image_pipeline: check failed: blurred pixel (3, " \
  "$tmp/broken/image_pipeline.lua" --size 16x16 --check
expect 1 "image_pipeline: check failed: histogram bin" \
  "$tmp/broken/hist_pipeline.lua" --size 16x16 --check
expect 1 "matmul_chain: check failed: result element" \
  "$tmp/broken/matmul_chain.lua" --dims 16,16,16 --kernel tiled --check
expect 1 "map_reduce: check failed: the sum is" \
  "$tmp/broken/map_reduce.lua" --count 1000 --check
expect 1 "stream_pipeline: check failed: element" \
  "$tmp/broken/stream_pipeline.lua" --chunks 3 --chunk-elements 100 --check
expect 0 "check: ok" "$tmp/broken/matmul_chain.lua" --dims 16,16,16 --check

if [ "$failures" -ne 0 ]; then
  echo "$failures script check(s) failed"
  exit 1
fi
echo "all script checks passed"

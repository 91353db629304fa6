#!/bin/sh
# run.sh: build the benchmarks (Release) and run them all in one go, then
# print one table of medians, baselines, ratios and goals.
#
# usage: sh bench/run.sh [BUILD_DIR]     (default: build-bench/ in the repo)
#
# The harness options pass through the environment: BENCH_REPS (batches per
# case, default 31), BENCH_BATCH_MS (least time per batch, default 1),
# BENCH_IDLE_REPS and BENCH_IDLE_MS (bench_idle), BENCH_SLOW_REPS
# (bench_kernels' slow rows). BENCH_NO_BUILD=1 skips the build and runs what
# BUILD_DIR holds. The raw results (tab-separated, see bench/harness.h) are
# kept in BUILD_DIR/bench-results.tsv.
#
# Before building, scripts/install-bench-deps.sh installs what the
# benchmarks compare with (pocl, the OpenCL loader, OpenBLAS, StarPU); when
# it cannot, the benchmarks run without those baselines and say so.
# SPDX-License-Identifier: MIT
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build-bench"}
# bench_cuda runs on cuda:0; without a GPU it prints a note and exits 0.
benches="bench_memory_pool bench_parallel_for bench_idle bench_kernels
  bench_streams bench_graph bench_cuda"
# bench_opencl_device (the engine on opencl:0 vs pocl) exists only where
# CMake found OpenCL; it joins the list below when the tree has it.
optional="bench_opencl_device"
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

# The OpenMP baseline runs with OpenMP's own defaults, whatever the caller's
# shell says; see docs/benchmarks.md.
unset OMP_WAIT_POLICY GOMP_SPINCOUNT OMP_PROC_BIND OMP_PLACES OMP_DYNAMIC \
  OMP_NUM_THREADS OMP_SCHEDULE 2>/dev/null || true
# pocl and OpenBLAS likewise run with their defaults (every core); the
# kernel benchmark sets pocl's cache variables itself, to private
# directories.
unset POCL_MAX_PTHREAD_COUNT POCL_CPU_MAX_CU_COUNT POCL_AFFINITY \
  POCL_WORK_GROUP_METHOD POCL_DEBUG POCL_DEVICES POCL_KERNEL_CACHE \
  POCL_CACHE_DIR OPENBLAS_NUM_THREADS 2>/dev/null || true
# StarPU likewise: bench_graph gives it as many CPU workers as dc has stream
# threads and a private STARPU_HOME; its other settings are its defaults.
unset STARPU_NCPU STARPU_NCPUS STARPU_NCUDA STARPU_NOPENCL STARPU_SCHED \
  STARPU_WORKERS_NOBIND STARPU_WORKERS_CPUID STARPU_CALIBRATE \
  STARPU_PROFILING STARPU_HOME STARPU_SILENT 2>/dev/null || true

if [ "${BENCH_NO_BUILD:-0}" != 1 ]; then
  if ! sh "$root/scripts/install-bench-deps.sh"; then
    echo "run.sh: going on without the missing baselines" >&2
  fi
  mkdir -p "$build"
  log="$build/bench-build.log"
  # A fresh tree builds the core and the benchmarks only; an existing tree
  # keeps its other options.
  if [ -f "$build/CMakeCache.txt" ]; then
    extra=""
  else
    extra="-DDC_BUILD_TESTS=OFF -DDC_BUILD_LUA=OFF -DDC_BUILD_EXAMPLES=OFF"
  fi
  # shellcheck disable=SC2086
  if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
         -DDC_BUILD_BENCH=ON $extra >"$log" 2>&1; then
    cat "$log" >&2
    echo "run.sh: configure failed (log: $log)" >&2
    exit 1
  fi
  targets=$(cmake --build "$build" --target help 2>/dev/null || true)
  for b in $optional; do
    if printf '%s\n' "$targets" | grep -q "$b"; then
      benches="$benches $b"
    else
      echo "run.sh: $b not configured (no OpenCL); skipped" >&2
    fi
  done
  # shellcheck disable=SC2086
  if ! cmake --build "$build" -j "$jobs" --target $benches >>"$log" 2>&1
  then
    cat "$log" >&2
    echo "run.sh: build failed (log: $log)" >&2
    exit 1
  fi
else
  for b in $optional; do
    if [ -x "$build/bench/$b" ]; then benches="$benches $b"; fi
  done
fi

results="$build/bench-results.tsv"
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo \
        2>/dev/null || true)
[ -n "$cpu" ] || cpu=$(uname -m)
cc=$(awk -F= '/^CMAKE_C_COMPILER:/ { print $2; exit }' \
       "$build/CMakeCache.txt" 2>/dev/null || true)
ccver=""
if [ -n "$cc" ]; then
  ccver=$("$cc" --version 2>/dev/null | head -n 1 || true)
fi
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

echo "dc benchmarks  $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $cpu, $jobs logical cores, $(uname -sr)"
btype=$(awk -F= '/^CMAKE_BUILD_TYPE:/ { print $2; exit }' \
          "$build/CMakeCache.txt" 2>/dev/null || true)
echo "compiler: ${ccver:-unknown}; build: $build (${btype:-unknown})"
echo "load average before: $load_before"

: >"$results"
for b in $benches; do
  exe="$build/bench/$b"
  if [ ! -x "$exe" ]; then
    echo "run.sh: $exe is missing (build first)" >&2
    exit 1
  fi
  "$exe" >>"$results"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")"
echo

awk -F'\t' '
function fmt_ns(x) {
  if (x < 1000) return sprintf("%.1f ns", x)
  if (x < 1e6) return sprintf("%.2f us", x / 1e3)
  if (x < 1e9) return sprintf("%.2f ms", x / 1e6)
  return sprintf("%.2f s", x / 1e9)
}
function fmt_ratio(v,   s) {
  if (v > 0 && v < 1) return sprintf("%.3g (%.3gx faster)", v, 1 / v)
  if (v <= 0) return "-"
  s = v < 100 ? sprintf("%.2f", v) : sprintf("%.0f", v)
  return s " (" s "x slower)"
}
function fmt_goal(g,   n) {
  if (g ~ /^ratio<=/) {
    n = substr(g, 8) + 0
    if (n < 1) return sprintf("ratio <= %g (%gx faster)", n, 1 / n)
    return sprintf("ratio <= %g", n)
  }
  if (g ~ /^median</) return "median < " fmt_ns(substr(g, 8) + 0)
  return g
}
function met(g, v, m) {
  if (g ~ /^ratio<=/) return v <= substr(g, 8) + 0 ? "yes" : "NO"
  if (g ~ /^median</) return m < substr(g, 8) + 0 ? "yes" : "NO"
  return "-"
}
function add(c1, c2, c3, c4, c5, c6, c7) {
  n++
  cell[n, 1] = c1; cell[n, 2] = c2; cell[n, 3] = c3; cell[n, 4] = c4
  cell[n, 5] = c5; cell[n, 6] = c6; cell[n, 7] = c7
}
function fmt_med(key) {
  return fmt_ns(median[key]) (key in rate ? " (" rate[key] ")" : "")
}
$1 == "rate" { rate[$2 SUBSEP $3] = sprintf("%.3g %s", $4, $5) }
$1 == "row" {
  key = $2 SUBSEP $3
  median[key] = $4; lo[key] = $5; hi[key] = $6
  rows[++nrows] = key
}
$1 == "ratio" {
  c = $2 SUBSEP $3; b = $2 SUBSEP $4
  used[c] = 1; used[b] = 1
  g = met($6, $5, median[c])
  if (g == "yes") goals_met++
  if (g != "-") goals++
  add($2, $3 " vs " $4, fmt_med(c), fmt_med(b),
      fmt_ratio($5), fmt_goal($6), g)
}
$1 == "note" { notes[++nnotes] = $2 ": " $3 }
END {
  for (i = 1; i <= nrows; i++) {
    if (!(rows[i] in used)) {
      split(rows[i], parts, SUBSEP)
      add(parts[1], parts[2], fmt_med(rows[i]), "-", "-", "-", "-")
    }
  }
  split("benchmark|variant|median|baseline median|ratio|goal|met?", h, "|")
  for (j = 1; j <= 7; j++) { cell[0, j] = h[j]; w[j] = length(h[j]) }
  for (i = 1; i <= n; i++)
    for (j = 1; j <= 7; j++)
      if (length(cell[i, j]) > w[j]) w[j] = length(cell[i, j])
  for (i = 0; i <= n; i++) {
    line = ""
    for (j = 1; j <= 7; j++)
      line = line sprintf("%-" w[j] "s", cell[i, j]) (j < 7 ? " | " : "")
    sub(/ +$/, "", line)
    print line
    if (i == 0) {
      line = ""
      for (j = 1; j <= 7; j++) {
        dash = sprintf("%" w[j] "s", ""); gsub(/ /, "-", dash)
        line = line dash (j < 7 ? "-|-" : "")
      }
      print line
    }
  }
  printf "\ngoals met: %d of %d\n", goals_met, goals
  print "\nall rows (per operation; idle rows: CPU time per idle period;"
  print "GB/s and GFLOP/s are computed from the median):"
  for (i = 1; i <= nrows; i++) {
    split(rows[i], parts, SUBSEP)
    printf "  %s | %s | median %s | min %s | max %s\n", parts[1], parts[2],
      fmt_med(rows[i]), fmt_ns(lo[rows[i]]), fmt_ns(hi[rows[i]])
  }
  print "\nnotes:"
  for (i = 1; i <= nnotes; i++) print "  " notes[i]
}' "$results"
echo
echo "raw results: $results"

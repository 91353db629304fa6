#!/bin/sh
# bench_image_pipeline.sh DCLUA [DEVICE]: scripts/image_pipeline.lua on a
# GPU against the same pipeline in PyTorch (bench/image_pipeline_torch.py),
# eager and under torch.compile, side by side in one call: for each size,
# the engine's runs, then PyTorch's, on the same checker image. Prints
# harness records (bench/harness.h): a row per side with its median, min
# and max in ns (each run timed from its start to the histogram's arrival
# on the host), and the engine's ratio to each PyTorch mode, goal: at
# least as fast (ratio<=1.0).
#
# BENCH_IMAGE_SIZES (default "4096x4096 8192x8192 16384x16384"), BENCH_REPS
# (runs per side, default 11; 3 warm-up runs first). Needs a GPU and
# PyTorch with CUDA; without them it prints a note and exits 0.
# SPDX-License-Identifier: MIT
set -u
dclua=${1:?usage: bench_image_pipeline.sh DCLUA [DEVICE]}
device=${2:-cuda:0}
root=$(cd "$(dirname "$0")/.." && pwd)
sizes=${BENCH_IMAGE_SIZES:-"4096x4096 8192x8192 16384x16384"}
runs=${BENCH_REPS:-11}

if ! python3 -c "import torch, sys; sys.exit(not torch.cuda.is_available())" \
     2>/dev/null; then
  printf 'note\timage pipeline\tno PyTorch with CUDA here: rows skipped\n'
  exit 0
fi

ms_to_ns() { awk -v v="$1" 'BEGIN { printf "%.0f", v * 1e6 }'; }

for size in $sizes; do
  name="image pipeline $size (blur, Sobel, histogram)"
  dc=$("$dclua" -e "
    local r = dofile('$root/scripts/image_pipeline.lua').run {
      device = '$device', size = '$size', runs = $runs, warmup = 3 }
    print(('%.3f %.3f %.3f'):format(r.timing.p50_ms, r.timing.min_ms,
                                    r.timing.max_ms))") || {
    printf 'note\t%s\tthe engine failed on %s\n' "$name" "$device"
    continue
  }
  set -- $dc
  printf 'row\t%s\tdclua %s\t%s\t%s\t%s\n' "$name" "$device" \
    "$(ms_to_ns "$1")" "$(ms_to_ns "$2")" "$(ms_to_ns "$3")"
  dc_median=$1
  python3 "$root/bench/image_pipeline_torch.py" --size "$size" \
    --runs "$runs" --warmup 3 | while read -r mode median low high; do
    printf 'row\t%s\tPyTorch %s\t%s\t%s\t%s\n' "$name" "$mode" \
      "$(ms_to_ns "$median")" "$(ms_to_ns "$low")" "$(ms_to_ns "$high")"
    printf 'ratio\t%s\tdclua %s\tPyTorch %s\t%s\tratio<=1.0\n' "$name" \
      "$device" "$mode" "$(awk -v a="$dc_median" -v b="$median" \
                          'BEGIN { printf "%.3f", a / b }')"
  done
done

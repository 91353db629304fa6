#!/bin/sh
# install-bench-deps.sh: installs the benchmarks' baselines (pocl, the
# OpenCL loader and headers, OpenBLAS, StarPU) with what dclua itself needs; see
# install-deps.sh. bench/run.sh calls it; a missing baseline only drops its
# rows (the benchmark prints a note saying so).
exec sh "$(dirname "$0")/install-deps.sh" bench

#!/bin/sh
# install-bench-deps.sh: installs the baselines the kernel benchmarks
# compare dc with (bench/bench_kernels.c) on Debian 12: pocl (an OpenCL
# implementation for the CPU) with the OpenCL ICD loader and headers,
# OpenBLAS, and OpenMP.
#
# Checks each dependency first and installs only what is missing, with
# apt-get as root (or through sudo when that is available). When neither
# works it prints the exact command to run and exits non-zero. bench/run.sh
# calls it; a missing baseline only drops its rows (the benchmark prints a
# note saying so), so run.sh goes on either way.
set -eu

# Debian package names, each with the file or command that proves it present.
need=""
want() { # want PACKAGE TEST...
  pkg=$1; shift
  if ! "$@" >/dev/null 2>&1; then need="$need $pkg"; fi
}
have_file() { [ -e "$1" ]; }
# shellcheck disable=SC2086  # $1 is a glob, expanded on purpose
have_glob() { ls $1; }

# OpenCL: the ICD loader to link with (-lOpenCL), its headers, and pocl, the
# CPU implementation the loader finds through /etc/OpenCL/vendors/pocl.icd.
want ocl-icd-opencl-dev have_file /usr/include/CL/cl_icd.h
want opencl-headers     have_file /usr/include/CL/cl.h
want pocl-opencl-icd    have_file /etc/OpenCL/vendors/pocl.icd
# OpenBLAS: cblas.h and libopenblas.so for the direct baseline, and
# libopenblas.so.0, which dc_builtin_matmul loads as its fast path.
want libopenblas-dev    have_glob '/usr/lib/*/libopenblas.so'
# OpenMP: the runtime (omp.h ships with gcc itself).
want libgomp1           have_glob '/usr/lib/*/libgomp.so.1'

if [ -z "$need" ]; then
  exit 0
fi

echo "install-bench-deps: missing Debian packages:$need"
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "install-bench-deps: not root; run this once, then retry:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y$need" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086  # word splitting of the package list is intended
$sudo apt-get install -y -q --no-install-recommends$need

#!/bin/sh
# install-deps.sh [bench]: installs what dclua needs to build and test on
# Debian 12 (pocl and the OpenCL ICD loader included, for the OpenCL
# backend's tests); with "bench", also the baselines the benchmarks
# compare with (the loader's development files, OpenBLAS, StarPU).
#
# Checks each dependency first and installs only what is missing, with
# apt-get as root (or through sudo when that is available). When neither
# works it prints the exact command to run and exits non-zero.
set -eu

# Debian package names, each with the file or command that proves it present.
need=""
want() { # want PACKAGE TEST...
  pkg=$1; shift
  if ! "$@" >/dev/null 2>&1; then need="$need $pkg"; fi
}
have_file() { [ -e "$1" ]; }
have_cmd() { command -v "$1"; }
# shellcheck disable=SC2086  # $1 is a glob, expanded on purpose
have_glob() { ls $1; }

want make        have_cmd make
want cmake       have_cmd cmake
want gcc         have_cmd gcc
want libc6-dev   have_file /usr/include/stdio.h
want pkg-config  have_cmd pkg-config
want check       have_file /usr/include/check.h
want liblua5.4-dev have_file /usr/include/lua5.4/lua.h
want lua5.4      have_cmd lua5.4
# Line editing and history in dclua's interactive mode (optional at build
# time: without it the REPL reads plain lines).
want libreadline-dev have_file /usr/include/readline/readline.h
want luarocks    have_cmd luarocks
want libgomp1    have_glob '/usr/lib/*/libgomp.so.1'
# The OpenCL backend: the Khronos headers it builds with, the ICD loader it
# opens at run time (libOpenCL.so.1), and pocl, the CPU implementation the
# loader finds through its vendors file, which the opencl.* tests run on.
want opencl-headers     have_file /usr/include/CL/cl.h
want ocl-icd-libopencl1 have_glob '/usr/lib/*/libOpenCL.so.1'
want pocl-opencl-icd    have_file /etc/OpenCL/vendors/pocl.icd

if [ "${1:-}" = bench ]; then
  # OpenCL for the pocl baselines: the loader's development files, to link
  # with (-lOpenCL).
  want ocl-icd-opencl-dev have_file /usr/include/CL/cl_icd.h
  # OpenBLAS: cblas.h and libopenblas.so for the direct baseline, and
  # libopenblas.so.0, which dc_builtin_matmul loads as its fast path.
  want libopenblas-dev    have_glob '/usr/lib/*/libopenblas.so'
  # StarPU, bench_graph's baseline: its headers, library and pkg-config file
  # (Debian 12 ships StarPU 1.3 as starpu-1.3).
  want libstarpu-dev      have_glob '/usr/lib/*/pkgconfig/starpu-1.*.pc'
fi

if [ -z "$need" ]; then
  exit 0
fi

echo "install-deps: missing Debian packages:$need"
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "install-deps: not root; run this once, then retry:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y$need" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# shellcheck disable=SC2086  # word splitting of the package list is intended
$sudo apt-get install -y -q --no-install-recommends$need

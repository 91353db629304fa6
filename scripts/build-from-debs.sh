#!/bin/sh
# build-from-debs.sh: builds dclua on a machine that has a C compiler,
# CMake and ninja but no package registry to install from (a lent GPU
# machine, a sealed build host), from Debian 12 packages carried there.
#
#   sh scripts/build-from-debs.sh --fetch DEBS
#       on a Debian 12 machine: downloads the packages into DEBS
#   sh scripts/build-from-debs.sh DEBS BUILD [CMAKE_ARGS...]
#       on the other machine: unpacks DEBS/*.deb under BUILD/debs (never
#       into /) and configures and builds BUILD, Release with the
#       benchmarks unless CMAKE_ARGS say otherwise
#
# Programs of the build find Lua and the OpenCL loader through
#   export LD_LIBRARY_PATH=BUILD/debs/usr/lib/x86_64-linux-gnu
# (the script prints the line). docs/testing.md, "On a GPU machine".
# SPDX-License-Identifier: MIT
set -eu

# What the build needs that such a machine lacks: Lua 5.4 and Check (with
# its subunit dependency), the OpenCL headers and ICD loader, pkg-config.
PACKAGES="liblua5.4-dev liblua5.4-0 lua5.4 check libsubunit-dev libsubunit0
  opencl-c-headers ocl-icd-libopencl1 ocl-icd-opencl-dev pkgconf
  libpkgconf3 pkgconf-bin"

usage() {
  echo "usage: $0 --fetch DEBS | $0 DEBS BUILD [CMAKE_ARGS...]" >&2
  exit 2
}

[ $# -ge 2 ] || usage
if [ "$1" = "--fetch" ]; then
  mkdir -p "$2"
  # shellcheck disable=SC2086  # the list splits into package names
  (cd "$2" && apt-get download $PACKAGES)
  echo "build-from-debs: $(find "$2" -name '*.deb' | wc -l) packages in $2"
  exit 0
fi

debs=$(cd "$1" && pwd)
build=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/debs"
build=$(cd "$build" && pwd)
prefix=$build/debs
found=0
for deb in "$debs"/*.deb; do
  [ -e "$deb" ] || continue
  dpkg -x "$deb" "$prefix"
  found=$((found + 1))
done
if [ "$found" -eq 0 ]; then
  echo "build-from-debs: no .deb files in $debs" >&2
  exit 1
fi

lib=$prefix/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# pkg-config finds the unpacked .pc files first (Check is found this way),
# their prefix moved to where they were unpacked; the machine's own
# packages keep theirs.
for pc in "$lib"/pkgconfig/*.pc; do
  [ -e "$pc" ] || continue
  sed -i "s|^prefix=/usr\$|prefix=$prefix/usr|" "$pc"
done
export PKG_CONFIG_PATH="$lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
generator=""
if command -v ninja >/dev/null 2>&1; then generator="-G Ninja"; fi
# shellcheck disable=SC2086  # $generator is empty or two words
cmake -S "$root" -B "$build" $generator -DCMAKE_BUILD_TYPE=Release \
  -DDC_BUILD_BENCH=ON \
  -DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf" \
  -DLUA_INCLUDE_DIR="$prefix/usr/include/lua5.4" \
  -DLUA_LIBRARY="$lib/liblua5.4.so" \
  -DDC_OPENCL_INCLUDE_DIR="$prefix/usr/include" \
  -DOpenCL_INCLUDE_DIR="$prefix/usr/include" \
  -DOpenCL_LIBRARY="$lib/libOpenCL.so" \
  -DCMAKE_C_FLAGS="-I$prefix/usr/include/x86_64-linux-gnu" "$@"
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
echo "build-from-debs: built $build; run its programs with"
echo "  export LD_LIBRARY_PATH=$lib"

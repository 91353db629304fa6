#!/bin/sh
# check-debian-packages.sh: builds dclua's Debian packages (debian/) and
# tests them on a clean Debian 12 (bookworm) root.
#
#   1. copies the source tree (what git tracks, and untracked files that
#      git does not ignore) to a temporary directory and builds the binary
#      packages there with `dpkg-buildpackage -us -uc -b`, so the checkout
#      gets no build output; runs lintian on them when it is installed;
#   2. makes a minimal bookworm root with mmdebstrap (variant minbase),
#      once, and keeps it as a tarball in the cache directory; every run
#      unpacks a fresh copy of it;
#   3. installs the runner dclua alone in that root with apt-get, without
#      recommends, so that its dependencies come from the mirror as on a
#      new machine, and runs: dclua --version; a dclua -e one-liner that
#      makes a buffer on the CPU device; a script on standard input that
#      compiles and runs a kernel (the CPU device builds kernels with the
#      system C compiler, a dependency of the packages); then purges it
#      with what it pulled in;
#   4. the same for the Lua module lua-dc alone: require("dc") from the
#      stock lua5.4, and the kernel script run by lua5.4;
#   5. installs libdc-dev (with libdc0 and libdclua0) and builds, with
#      pkg-config, a C program that uses libdc and a C host that embeds
#      the engine through libdclua, and runs them.
#   Every stage also checks the man pages it installs. The .deb files apt
#   downloads are cached beside the root.
#
# Needs root (chroot, mount), network access to the mirror, and the
# packages dpkg-dev, debhelper, mmdebstrap (lintian optional) with dclua's
# build dependencies (`apt-get build-dep ./` from the top of the tree).
# Not part of ctest for those reasons; docs/packaging.md describes it.
#
# Environment:
#   DC_DEB_CACHE   where the root tarball and apt's downloads are kept
#                  (default /var/cache/dclua-deb-check); delete the
#                  tarball to make a new root
#   DC_DEB_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
#   DC_DEB_SECURITY_MIRROR  (default http://deb.debian.org/debian-security)
#   DC_DEB_JOBS    build parallelism (default: the number of cores)
#   DC_DEB_OUT     a directory to copy the built .deb files to
#   DC_DEB_KEEP    1: keep the temporary directory (sources, logs,
#                  packages and the root) instead of deleting it
#   DC_DEB_LINTIAN 0: skip lintian even when it is installed
#   TMPDIR         where the temporary directory goes (default /tmp)
#
# Exit status: 0 when every step and check passed, 1 otherwise (each
# failure is named on standard error), 2 when something it needs is
# missing.
set -eu

suite=bookworm
variant=minbase
me=check-debian-packages
cache=${DC_DEB_CACHE:-/var/cache/dclua-deb-check}
mirror=${DC_DEB_MIRROR:-http://deb.debian.org/debian}
security=${DC_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
jobs=${DC_DEB_JOBS:-$(nproc 2>/dev/null || echo 2)}
keep=${DC_DEB_KEEP:-0}

say() { printf '%s: %s\n' "$me" "$*"; }
fail() { printf '%s: FAILED: %s\n' "$me" "$*" >&2; exit 1; }
need() { printf '%s: %s\n' "$me" "$*" >&2; exit 2; }
now() { date +%s; }

repo=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$repo/debian/control" ] || need "no debian/control under $repo"

#===-- What the script needs ---------------------------------------------===#
[ "$(id -u)" = 0 ] || need "must run as root (it uses chroot and mount)"
missing=""
command -v dpkg-buildpackage >/dev/null 2>&1 || missing="$missing dpkg-dev"
command -v dh >/dev/null 2>&1 || missing="$missing debhelper"
command -v mmdebstrap >/dev/null 2>&1 || missing="$missing mmdebstrap"
if [ -n "$missing" ]; then
  need "missing tools; install them with: apt-get install$missing"
fi
if ! (cd "$repo" && dpkg-checkbuilddeps) 2>/dev/null; then
  (cd "$repo" && dpkg-checkbuilddeps) >&2 || true
  need "missing build dependencies; install them with: apt-get build-dep $repo"
fi
arch=$(dpkg --print-architecture)
version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
upstream=${version%-*}

#===-- A temporary directory, cleaned up on every exit -------------------===#
work=$(mktemp -d "${TMPDIR:-/tmp}/deb-dclua-check.XXXXXX")
root=$work/root
status=1

# unmount_root: unmounts whatever is mounted below the root, deepest first.
unmount_root() {
  awk -v r="$root" '$2 == r || index($2, r "/") == 1 { print $2 }' \
    /proc/self/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}

cleanup() {
  unmount_root
  if awk -v r="$root" 'index($2, r) == 1 { found = 1 } END { exit !found }' \
    /proc/self/mounts; then
    say "still mounted below $root; leaving $work in place" >&2
  elif [ "$keep" = 1 ]; then
    say "kept $work"
  elif [ "$status" = 0 ]; then
    rm -rf --one-file-system "$work"
  else
    # Keep what explains the failure (logs, packages), not the root.
    rm -rf --one-file-system "$root"
    say "logs and packages kept in $work" >&2
  fi
}
trap 'cleanup' EXIT
trap 'exit 130' INT TERM

start=$(now)
say "dclua $version for $arch; work directory $work"

#===-- 1. Build the packages ---------------------------------------------===#
t=$(now)
say "[1/5] building the packages (dpkg-buildpackage -us -uc -b -j$jobs)"
mkdir "$work/src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # Tracked files, and new files not yet added; a tracked file deleted in
  # the working tree is skipped.
  git -C "$repo" ls-files -z -co --exclude-standard |
    tar -C "$repo" --null --ignore-failed-read -T - -cf - 2>/dev/null |
    tar -C "$work/src" -xf -
else
  tar -C "$repo" --exclude='./build*' --exclude=./.git -cf - . |
    tar -C "$work/src" -xf -
fi
if ! (cd "$work/src" && nice dpkg-buildpackage -us -uc -b -j"$jobs") \
  >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log" >&2
  fail "dpkg-buildpackage failed (the end of $work/build.log is above)"
fi
# The packages to install: every .deb but the debug symbols; and their
# names.
debs=""
names=""
for f in "$work"/*.deb; do
  d=${f##*/}
  case $d in *-dbgsym_*) continue ;; esac
  [ -f "$f" ] || continue
  debs="$debs $d"
  names="$names ${d%%_*}"
done
[ -n "$debs" ] || fail "dpkg-buildpackage made no .deb file"
for d in $debs; do
  say "  $d ($(du -k "$work/$d" | cut -f1) KiB)"
done
if [ -n "${DC_DEB_OUT:-}" ]; then
  mkdir -p "$DC_DEB_OUT"
  (cd "$work" && cp ./*.deb ./*.changes ./*.buildinfo "$DC_DEB_OUT"/)
  say "  copied the packages to $DC_DEB_OUT"
fi
if [ "${DC_DEB_LINTIAN:-1}" != 0 ] && command -v lintian >/dev/null 2>&1; then
  lintian -I --pedantic "$work"/*.changes 2>&1 |
    grep -v 'running with root privileges' >"$work/lintian.log" || true
  if [ -s "$work/lintian.log" ]; then
    say "  lintian (informational, does not fail the check):"
    sed 's/^/    /' "$work/lintian.log"
  else
    say "  lintian: no tags"
  fi
fi
say "[1/5] done in $(($(now) - t)) s"

#===-- 2. A clean bookworm root ------------------------------------------===#
t=$(now)
tarball=$cache/$suite-$arch-$variant.tar
mkdir -p "$cache/archives/partial"
if [ ! -f "$tarball" ] || [ ! -s "$tarball" ]; then
  say "[2/5] making a $suite $variant root with mmdebstrap (cached as $tarball)"
  partial=$cache/$suite-$arch-$variant.partial.tar
  if ! mmdebstrap --mode=root --format=tar --variant="$variant" \
    --architectures="$arch" "$suite" "$partial" "deb $mirror $suite main" \
    "deb $mirror $suite-updates main" \
    "deb $security $suite-security main" >"$work/mmdebstrap.log" 2>&1; then
    rm -f "$partial"
    tail -n 30 "$work/mmdebstrap.log" >&2
    fail "mmdebstrap could not make the root (log: $work/mmdebstrap.log)"
  fi
  mv "$partial" "$tarball"
else
  say "[2/5] unpacking the cached $suite $variant root $tarball"
fi
mkdir "$root"
tar -C "$root" --numeric-owner -xpf "$tarball"
[ -f "$root/etc/debian_version" ] || fail "$tarball holds no Debian root"
say "  Debian $(cat "$root/etc/debian_version") root in $root"
say "[2/5] done in $(($(now) - t)) s"

#===-- Helpers for the root ----------------------------------------------===#
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
mount --bind "$cache/archives" "$root/var/cache/apt/archives"
mkdir -p "$root/tmp/dclua-debs"
for d in $debs; do cp "$work/$d" "$root/tmp/dclua-debs/"; done
chmod -R a+rX "$root/tmp/dclua-debs"

# in_root COMMAND...: runs COMMAND in the root with a plain environment.
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}

# apt_in_root LOG ARGS...: runs apt-get ARGS in the root, its output in
# $work/LOG; on failure shows the end of it and stops.
# (sh has no local variables: each function names its own.)
apt_in_root() {
  apt_log=$work/$1
  shift
  if ! in_root apt-get -q "$@" >>"$apt_log" 2>&1; then
    tail -n 30 "$apt_log" >&2
    fail "apt-get $* failed in the root (log: $apt_log)"
  fi
}

# install_in_root LOG PACKAGE...: installs the PACKAGEs without their
# recommends; a PACKAGE that this build made comes from its .deb file, the
# others (and every dependency) from the mirror.
install_in_root() {
  install_log=$1
  shift
  install_args=""
  for p in "$@"; do
    file=""
    for d in $debs; do
      case $d in "${p}_"*) file=/tmp/dclua-debs/$d ;; esac
    done
    install_args="$install_args ${file:-$p}"
  done
  # shellcheck disable=SC2086  # a list of names and paths without spaces
  apt_in_root "$install_log" install -y --no-install-recommends $install_args
  say "  apt-get installed $*:" \
    "$(grep -c '^Setting up' "$work/$install_log") packages set up"
}

# purge_in_root LOG PACKAGE...: removes the PACKAGEs and what was installed
# for them, so that the next stage starts from the bare root again.
purge_in_root() {
  purge_log=$1
  shift
  apt_in_root "$purge_log" purge -y --autoremove "$@"
  if in_root sh -c 'command -v cc' >/dev/null 2>&1; then
    fail "the root still has a C compiler after purging $*"
  fi
}

failures=0
# check NAME COMMAND...: runs COMMAND in the root; prints its last line.
check() {
  name=$1
  shift
  if out=$(in_root "$@" 2>&1); then
    say "  ok   $name: $(printf '%s\n' "$out" | tail -n 1)"
  else
    failures=$((failures + 1))
    printf '%s: FAIL %s\n' "$me" "$name" >&2
    printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /' >&2
  fi
}

#===-- The checks' files -------------------------------------------------===#
checks=$root/tmp/dclua-check
mkdir -p "$checks"

cat >"$checks/kernel.lua" <<'EOF'
-- Compiles a kernel on the CPU device (with the system C compiler) and
-- runs it.
local dc = require("dc")
local dev = dc.device("cpu")
local src = dev:buffer("f32", { 1, 2, 3, 4 })
local dst = dev:buffer("f32", 4)
local prog = dev:compile [[
  __kernel void twice(__global const float* in, __global float* out) {
    out[get_global_id(0)] = 2.0f * in[get_global_id(0)];
  }
]]
prog.twice({ grid = 4 }, src, dst)
local got = table.concat(dst:read(), " ")
assert(got == "2.0 4.0 6.0 8.0", "kernel result: " .. got)
print("kernel twice on " .. dev.name .. ": " .. got)
EOF

cat >"$checks/hello.c" <<'EOF'
/* Links libdc through pkg-config (libdc-dev): a buffer on the CPU. */
#include <dc/dc.h>
#include <stdio.h>

int main(void) {
  dc_context_t* ctx;
  DC_CHECK(dc_context_create(NULL, &ctx));
  dc_device_t* dev;
  DC_CHECK(dc_context_default_device(ctx, &dev));
  dc_buffer_t* buf;
  dc_buffer_params_t params = {.dtype = DC_DTYPE_F32, .length = 1024};
  DC_CHECK(dc_buffer_create(dev, &params, &buf));
  printf("C host: %zu floats on %s\n", dc_buffer_length(buf),
         dc_device_name(dev));
  dc_buffer_release(buf);
  dc_context_release(ctx);
  return 0;
}
EOF

cat >"$checks/embed.c" <<'EOF'
/* Embeds the engine through libdclua (pkg-config dclua): runs kernel.lua,
   then a chunk whose result it reads back. */
#include <dclua.h>
#include <inttypes.h>
#include <stdio.h>

int main(void) {
  dclua_engine_t* eng;
  DC_CHECK(dclua_engine_create(NULL, &eng));
  if (dclua_engine_run_file(eng, "/tmp/dclua-check/kernel.lua") != DC_OK ||
      dclua_engine_run_string(eng,
          "local b = require('dc').device('cpu'):buffer('i32', {1, 2, 3}) "
          "assert(b[3] == 3) n = #b", "=embed") != DC_OK) {
    fprintf(stderr, "script failed: %s\n", dclua_engine_error(eng));
    return 1;
  }
  int64_t n = 0;
  DC_CHECK(dclua_engine_get_integer(eng, "n", &n));
  printf("embedded engine: ran kernel.lua, then made a buffer of %" PRId64
         " i32\n", n);
  dclua_engine_destroy(eng);
  return n == 3 ? 0 : 1;
}
EOF
chmod -R a+rX "$checks"
apt_in_root apt.log update
in_root chown _apt:root /var/cache/apt/archives/partial

#===-- 3. dclua alone ----------------------------------------------------===#
t=$(now)
say "[3/5] the runner: dclua alone in the bare root"
install_in_root apt-dclua.log dclua
check "dclua --version" sh -c \
  "dclua --version | tee /dev/stderr | grep -q '^dclua $upstream '"
check "dclua -e (a buffer on the CPU device)" dclua -e \
  'local dc = require("dc")
   local b = dc.device("cpu"):buffer("f32", { 1, 2, 3, 4 })
   assert(#b == 4 and b[3] == 3.0)
   print(("a buffer of %d f32 on %s"):format(#b, b.device.name))'
check "dclua < script (a kernel compiled and run on the CPU)" sh -c \
  'dclua < /tmp/dclua-check/kernel.lua'
check "man page dclua(1)" ls /usr/share/man/man1/dclua.1.gz
purge_in_root apt-dclua.log dclua
say "[3/5] done in $(($(now) - t)) s"

#===-- 4. lua-dc alone ---------------------------------------------------===#
t=$(now)
say "[4/5] the Lua module: lua-dc alone in the bare root"
install_in_root apt-lua-dc.log lua-dc
check 'lua5.4 -e require("dc")' lua5.4 -e \
  'local dc = require("dc")
   local b = dc.device("cpu"):buffer("f32", 8)
   print(("lua5.4 loads dc %s from %s; a buffer of %d on %s"):format(
     dc.version, package.searchpath("dc", package.cpath), #b,
     b.device.name))'
check "lua5.4 script (a kernel compiled and run on the CPU)" \
  lua5.4 /tmp/dclua-check/kernel.lua
purge_in_root apt-lua-dc.log lua-dc
say "[4/5] done in $(($(now) - t)) s"

#===-- 5. libdc-dev ------------------------------------------------------===#
t=$(now)
say "[5/5] the development files: libdc-dev (with libdc0, libdclua0)"
# pkgconf is for the checks, not a dependency of libdc-dev.
install_in_root apt-dev.log libdc-dev libdc0 libdclua0 pkgconf
# The $(...) of these two is single-quoted on purpose: it runs in the root.
# shellcheck disable=SC2016
check "a C program built with pkg-config dc" sh -c \
  'cd /tmp/dclua-check && cc -o hello hello.c $(pkg-config --cflags --libs dc) && ./hello'
# shellcheck disable=SC2016
check "a C host embedding the engine, built with pkg-config dclua" sh -c \
  'cd /tmp/dclua-check && cc -o embed embed.c $(pkg-config --cflags --libs dclua) && ./embed'
check "man page libdc(3)" ls /usr/share/man/man3/libdc.3.gz
# shellcheck disable=SC2016  # a dpkg-query format
check "versions installed" dpkg-query -W -f '${Package}=${Version} ' \
  libdc-dev libdc0 libdclua0
say "[5/5] done in $(($(now) - t)) s"

if [ "$failures" -ne 0 ]; then
  fail "$failures check(s) failed in the $suite root (total $(($(now) - start)) s)"
fi
status=0
say "PASSED: the packages build, install on a clean $suite and work" \
  "(total $(($(now) - start)) s)"

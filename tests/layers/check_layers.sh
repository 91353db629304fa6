#!/bin/sh
# check_layers.sh ROOT: the include graph keeps the layers of
# docs/architecture.md apart. Each rule lists the includes it forbids;
# a violation prints the file and the include, and the test fails.
#
#   1. The core never includes Lua or the binding.
#   2. Above the backends, the core includes no backend's header: it
#      reaches backends through dc/backend.h and the registry
#      (backends/registry.c) alone. Outside execution/, nothing includes
#      stream_internal.h: the scheduler's API is scheduler.h.
#   3. A backend includes the interface (dc/*.h), its own headers and
#      the short list of shared utilities below; nothing of another
#      layer, other backends and the kernel compiler included: it builds
#      kernels from the lowered program (dc_program_build_lower) and
#      reads programs and kernels through dc/backend.h, as a backend
#      outside the tree would.
#   4. The binding includes only the public headers of the core.
set -u
root=$1
failures=0

# includes FILE: the quoted includes of FILE, one per line.
includes() {
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

fail() {
  echo "FAIL: $1 includes \"$2\": $3"
  failures=$((failures + 1))
}

# Headers a layer's folder holds, by base name.
headers_of() {
  for h in "$@"; do [ -d "$h" ] && ls "$h" | grep '\.h$'; done
}

# What a backend may include besides the interface and its own headers,
# and why:
#   internal.h      DC_FAIL, DC_RETURN_IF_ERROR, DC_INTERNAL: how the
#                   engine reports errors and hides its symbols
#   log_internal.h  DC_LOG, the engine's log lines
#   futex.h         sleeping on a word (the CPU's grid barrier)
#   sha256.h        the hash of compile-cache keys
#   kcache.h        the on-disk compile cache every compiling backend
#                   shares (one directory, atomic entries, checksums)
allowed_utilities="internal.h log_internal.h futex.h sha256.h kcache.h"

in_list() {
  item=$1
  shift
  for x in "$@"; do [ "$x" = "$item" ] && return 0; done
  return 1
}

# The backends: one folder each under core/src/backends.
backends=$(cd "$root/core/src/backends" && ls -d */ | tr -d /)

# names_backend INCLUDE: whether INCLUDE is one of a backend's headers.
names_backend() {
  for b in $backends; do
    case $1 in
      "$b"_*.h|*/"$b"/*) return 0 ;;
    esac
  done
  return 1
}

# 1 and 2: the core outside its backends.
for f in $(find "$root/core" -name '*.[ch]' ! -path '*/backends/*'); do
  for inc in $(includes "$f"); do
    case $inc in
      lua.h|lauxlib.h|lualib.h|dclua*.h|l_*.h)
        fail "$f" "$inc" "the core never includes Lua or the binding" ;;
    esac
    names_backend "$inc" &&
      fail "$f" "$inc" "backends are reached through the registry"
  done
done

# 2b: streams' and commands' internals stay in execution/; the rest of the
# core reaches the scheduler through scheduler.h.
for f in $(find "$root/core" -name '*.[ch]' ! -path '*/execution/*'); do
  for inc in $(includes "$f"); do
    [ "$inc" = stream_internal.h ] &&
      fail "$f" "$inc" "only execution/ sees streams' internals (scheduler.h)"
  done
done

# 2: the registry is the one place that names the backends.
for f in $(find "$root/core/src/backends" -maxdepth 1 -name '*.[ch]'); do
  [ "$(basename "$f")" = registry.c ] && continue
  for inc in $(includes "$f"); do
    names_backend "$inc" && fail "$f" "$inc" "only registry.c names backends"
  done
done

# 3: each backend.
for dir in "$root"/core/src/backends/*/; do
  own=$(headers_of "$dir")
  for f in $(find "$dir" -name '*.[ch]'); do
    for inc in $(includes "$f"); do
      base=$(basename "$inc")
      case $inc in
        dc/*) continue ;;
      esac
      in_list "$base" $own && continue
      in_list "$base" $allowed_utilities && continue
      fail "$f" "$inc" "a backend includes only the interface (dc/*.h), its own headers and $allowed_utilities"
    done
  done
done

# 4: the binding.
for f in $(find "$root/lua" -name '*.[ch]'); do
  for inc in $(includes "$f"); do
    case $inc in
      dc/*|dclua*.h|l_*.h|runner.h) ;;
      *) [ -f "$(dirname "$f")/$inc" ] ||
           fail "$f" "$inc" "the binding uses the core's public headers" ;;
    esac
  done
done

if [ "$failures" -ne 0 ]; then
  echo "$failures include(s) cross a layer"
  exit 1
fi
echo "layers: ok"

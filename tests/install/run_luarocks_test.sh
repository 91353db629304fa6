#!/bin/sh
# run_luarocks_test.sh SOURCE_DIR WORK_DIR: `luarocks make` of the
# rockspec into a scratch tree, then a stock lua5.4 requires the module
# from that tree. The module's CMake build tree (WORK_DIR/build) is kept
# between runs, so only the first run compiles the engine. Exits 77
# (skipped) when luarocks or lua5.4 is missing.
set -eu
src=$1 work=$2
for tool in luarocks lua5.4 cmake; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed"
    exit 77
  fi
done
rockspec=$(ls "$src"/rockspec/dclua-*.rockspec)
tree="$work/tree"
rm -rf "$tree"
mkdir -p "$work"
# luarocks builds in the current directory: the source tree. Its build
# tree goes to $DCLUA_ROCK_BUILD instead of build.luarocks/ there. HOME
# points at the scratch directory so that luarocks writes no user config.
cd "$src"
DCLUA_ROCK_BUILD="$work/build" HOME="$work" \
  luarocks --lua-version 5.4 --tree "$tree" make "$rockspec"
so=$(find "$tree" -name dc.so | head -n 1)
echo "installed: $so"
[ -n "$so" ] || { echo "luarocks installed no dc.so under $tree"; exit 1; }
out=$(LUA_CPATH="$tree/lib/lua/5.4/?.so;;" lua5.4 -e \
  'local dc = require("dc") print(tostring(dc.version ~= nil) .. " " .. package.searchpath("dc", package.cpath))')
echo "lua5.4: $out"
case $out in
  "true $tree/lib/lua/5.4/dc.so") ;;
  *) echo "require(\"dc\") did not load the rock's module"; exit 1 ;;
esac

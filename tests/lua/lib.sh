# lib.sh: what the shell tests of tests/lua share, sourced by each: a
# scratch directory $tmp removed at exit, a failure count, and the
# environment the Lua tests run in.
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The kernel cache stays in memory: the tests write nothing outside $tmp.
DC_CACHE_DIR=off
export DC_CACHE_DIR
# The CPU backend alone, as CTest sets it, also when run by hand: a GPU
# would change the default device the scripts run on (cuda.lua covers
# the GPU).
DC_DEVICES=cpu
export DC_DEVICES

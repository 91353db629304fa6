#!/bin/sh
# run_sh.sh DCLUA SOURCE_DIR WORK_DIR SCRIPT: runs one ```sh example block
# of the docs (SCRIPT, as extract_examples.cmake wrote it) the way a
# reader runs it after the README's set-up command, and fails if any of
# its commands fails (sh -e).
#
# WORK_DIR is made afresh and is the working directory. It looks like the
# top of a checkout after `make demo` and `make test`: scripts/, examples/
# and tests/ are links to the source tree's, and build-release/dclua and
# build/dclua are links to the build's dclua (DCLUA), which is also on the
# PATH as `dclua`, as after `make install`. Files a block writes stay in
# WORK_DIR (until the next run), never in the source tree, as long as the
# block writes only into directories it makes itself.
set -eu
if [ $# -ne 4 ]; then
  echo "usage: run_sh.sh DCLUA SOURCE_DIR WORK_DIR SCRIPT" >&2
  exit 2
fi
dclua=$1 src=$2 work=$3 script=$4

rm -rf "$work" "$work.bin"
mkdir -p "$work/build-release" "$work/build" "$work.bin"
for d in scripts examples tests; do ln -s "$src/$d" "$work/$d"; done
ln -s "$dclua" "$work/build-release/dclua"
ln -s "$dclua" "$work/build/dclua"
ln -s "$dclua" "$work.bin/dclua"

cd "$work"
PATH="$work.bin:$PATH"
export PATH
exec sh -e "$script"

#!/bin/sh
# test_sandbox_writes.sh DCLUA: in the runner's sandbox every function that
# writes a file a script names (dc.image.save_pgm, dc.trace.write, io.open,
# io.output) writes only below the sandbox's directory (issue 16): a
# symbolic link inside it that points out, a link to a directory outside,
# a hard link to a file outside, a FIFO, a missing directory or "..":
# each is refused, and nothing outside changes. Links that stay inside
# keep working.
set -u
dclua=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"

box="$tmp/box"
out="$tmp/out"

# setup: a fresh sandbox directory with every kind of trap in it, and the
# files outside that must never change.
setup() {
  rm -rf "$box" "$out"
  mkdir -p "$box/real" "$out"
  printf 'secret\n' >"$out/victim"
  printf 'secret\n' >"$out/hard_victim"
  ln -s "$out/victim" "$box/link"              # a file outside
  ln -s ../out/victim "$box/relative_link"     # the same, relative
  ln -s "$out/absent" "$box/dangling"          # a file to create outside
  ln -s "$out" "$box/outdir"                   # a directory outside
  ln -s real "$box/indir"                      # a directory inside
  printf 'inside\n' >"$box/real/target"
  ln -s real/target "$box/inlink"              # a file inside
  hard=no
  if ln "$out/hard_victim" "$box/hard" 2>/dev/null; then hard=yes; fi
  mkfifo "$box/fifo"
}

# untouched: the files outside are as they were, and nothing new is there.
untouched() {
  [ "$(cat "$out/victim")" = secret ] &&
    [ "$(cat "$out/hard_victim")" = secret ] &&
    [ ! -e "$out/absent" ] &&
    [ "$(ls "$out" | wc -l)" -eq 2 ]
}

# expect WHAT PATTERN CHUNK: runs CHUNK sandboxed to $box and checks that
# the output matches PATTERN and that nothing outside changed.
expect() {
  what=$1; pattern=$2; chunk=$3
  (cd "$tmp" && "$dclua" --sandbox="$box" -e "$chunk") </dev/null \
    >"$tmp/output" 2>&1
  if grep -q -- "$pattern" "$tmp/output" && untouched; then
    echo "ok: $what"
  else
    echo "FAIL: $what (want /$pattern/), output:"
    sed 's/^/  | /' "$tmp/output"
    ls -l "$out" | sed 's/^/  out: /'
    failures=$((failures + 1))
  fi
}

# refused KIND PATH...: each writer refuses PATH (relative to $tmp), in a
# fresh sandbox directory each (dc.trace.write replaces a link inside by
# its file, which is not a refusal but keeps the write inside).
refused() {
  kind=$1; shift
  for p in "$@"; do
    setup
    [ "$p" = box/hard ] && [ "$hard" = no ] && continue
    expect "save_pgm refuses $kind ($p)" "PERMISSION_DENIED: sandbox" \
      "dc.image.save_pgm('$p', { 1, 2, 3, 4 }, 2, 2)"
    expect "io.open refuses $kind ($p)" "^nil	sandbox: writing" \
      "print(io.open('$p', 'w'))"
    expect "io.open('a') refuses $kind ($p)" "^nil	sandbox: writing" \
      "print(io.open('$p', 'a'))"
    expect "io.open('r+') refuses $kind ($p)" \
      "^nil	sandbox: writing\|^nil	.*No such file" \
      "print(io.open('$p', 'r+'))"
    expect "io.output refuses $kind ($p)" "PERMISSION_DENIED: sandbox" \
      "io.output('$p')"
    expect "trace.write refuses or keeps inside $kind ($p)" \
      "PERMISSION_DENIED: sandbox\|^kept inside$" \
      "dc.trace.start() dc.trace.write('$p')
       print(io.open('$p'):read(1) == '{' and 'kept inside' or 'wrong')"
  done
}

refused "a symbolic link to a file outside" box/link box/relative_link
refused "a dangling link that would create a file outside" box/dangling
refused "a path through a link to a directory outside" box/outdir/new
refused "a path that leaves by .." box/../out/new box/real/../../out/new
refused "a hard link to a file outside" box/hard
refused "a path outside" out/victim "$tmp/out/new"

# A FIFO would block the writer (or be written to by another process):
# not a file the sandbox lets a script write.
setup
expect "save_pgm refuses a FIFO" "PERMISSION_DENIED: sandbox.*not a regular" \
  "dc.image.save_pgm('box/fifo', { 1 }, 1, 1)"
expect "io.open refuses a FIFO" "^nil	sandbox.*not a regular" \
  "print(io.open('box/fifo', 'w'))"

# dc.trace.write replaces a link that points out (rename), never writing
# through it.
setup
expect "trace.write replaces a link rather than following it" "^replaced$" \
  "dc.trace.start() dc.trace.write('box/link')
   print(io.open('box/link'):read(1) == '{' and 'replaced' or 'wrong')"
check_link() {
  if [ -L "$box/link" ]; then
    echo "FAIL: box/link is still a link"
    failures=$((failures + 1))
  fi
}
check_link

# What stays inside keeps working: plain files, links to files inside,
# links to directories inside, and a sandbox directory reached through a
# link itself.
setup
expect "save_pgm writes inside" "^4$" \
  "dc.image.save_pgm('box/a.pgm', { 1, 2, 3, 4 }, 2, 2)
   print(dc.image.load_pgm('box/a.pgm').pixels[4])"
expect "save_pgm through a link to a directory inside" "^4$" \
  "dc.image.save_pgm('box/indir/b.pgm', { 1, 2, 3, 4 }, 2, 2)
   print(dc.image.load_pgm('box/real/b.pgm').pixels[4])"
expect "save_pgm through a link to a file inside" "^4$" \
  "dc.image.save_pgm('box/inlink', { 1, 2, 3, 4 }, 2, 2)
   print(dc.image.load_pgm('box/real/target').pixels[4])"
expect "io.open through a link to a file inside" "^appended$" \
  "local f = assert(io.open('box/inlink', 'a')) f:write('x') f:close()
   print('appended')"
expect "io.open('w+') inside reads back" "^hello$" \
  "local f = assert(io.open('box/c.txt', 'w+'))
   f:write('hello') f:seek('set') print(f:read('a')) f:close()"
expect "io.output inside" "^hi$" \
  "io.output('box/d.txt') io.write('hi') io.close()
   print(io.open('box/d.txt'):read('a'))"
expect "trace.write inside, through a link to a directory" "^written$" \
  "dc.trace.start() dc.trace.write('box/indir/t.json')
   print(io.open('box/real/t.json'):read(1) == '{' and 'written')"
expect "a missing directory is refused, as before" \
  "^nil	sandbox: writing 'box/none/x' is not allowed" \
  "print(io.open('box/none/x', 'w'))"
ln -s "$box" "$tmp/boxlink"
(cd "$tmp" && "$dclua" --sandbox="$tmp/boxlink" -e "
  dc.image.save_pgm('$tmp/boxlink/e.pgm', { 9 }, 1, 1)
  print(dc.image.load_pgm('$box/e.pgm').pixels[1])") </dev/null \
  >"$tmp/output" 2>&1
if grep -q "^9$" "$tmp/output"; then
  echo "ok: a sandbox directory named through a link"
else
  echo "FAIL: a sandbox directory named through a link, output:"
  sed 's/^/  | /' "$tmp/output"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all sandbox write checks passed"

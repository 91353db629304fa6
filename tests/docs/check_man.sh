#!/bin/sh
# check_man.sh PAGE...: the manual pages format without a warning, with
# groff (-ww: all warnings) or else mandoc's linter. Exits 77 (skipped)
# when neither is installed.
set -u
if command -v groff >/dev/null 2>&1; then
  tool=groff
elif command -v mandoc >/dev/null 2>&1; then
  tool=mandoc
else
  echo "SKIP: neither groff nor mandoc is installed"
  exit 77
fi
status=0
for page in "$@"; do
  if [ "$tool" = groff ]; then
    # groff warns on stderr and still exits 0: any output is a failure.
    out=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  else
    out=$(mandoc -T lint -W warning "$page" 2>&1)
  fi
  if [ $? -ne 0 ] || [ -n "$out" ]; then
    echo "$page: $tool reports:"; echo "$out"; status=1
  else
    echo "ok: $page ($tool)"
  fi
done
exit $status

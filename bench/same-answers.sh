#!/usr/bin/env bash
# What issue 26's work must not change: `verify --json`, `events --json`
# and `list --json` of every ledger of the fuzz corpus, by two builds,
# byte for byte (each on its own copy of the ledger, the clock pinned;
# the milliseconds a pinned clock runs on while a command works are
# masked, as the two builds take different times).
#   bench/same-answers.sh OLD_BINARY NEW_BINARY [CORPUS_FOLDER]
set -euo pipefail
old=$1 new=$2 corpus=${3:-fuzz/corpus/replay}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DISCUSS_NOW=2026-12-01T00:00:00Z
files=0 differing=0
for ledger in "$corpus"/*; do
  files=$((files + 1))
  for build in old new; do
    for command in verify events list; do
      cp "$ledger" "$work/ledger.jsonl"
      status=0
      DISCUSS_LEDGER=$work/ledger.jsonl "${!build}" "$command" --json >"$work/out" 2>&1 || status=$?
      sed -E "s|$work/ledger.jsonl|LEDGER|g; s/2026-12-01T00:00:0[0-9]\.[0-9]{3}Z/NOW/g" "$work/out" \
        >"$work/$command.$build"
      echo "exit $status" >>"$work/$command.$build"
      rm -f "$work"/ledger.jsonl*
    done
  done
  for command in verify events list; do
    if ! cmp -s "$work/$command.old" "$work/$command.new"; then
      differing=$((differing + 1))
      echo "$command differs on $ledger" >&2
    fi
  done
done
echo "$files ledgers, $differing answers differ"
[ "$differing" -eq 0 ]

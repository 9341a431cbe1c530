#!/usr/bin/env bash
# Whole-ledger work, side by side in one run (issue 26): `verify --json`,
# `events --json`, the first `list --json` after the cache is deleted and
# a cold `show` (no cache), by two builds, against a Python script that
# reads every line and json.loads it. Prints seconds, peak resident memory
# and the ratio to the script (the median of the rounds', each round
# running the script too); checks that both builds print the same bytes.
#   bench/whole-ledger.sh OLD_BINARY NEW_BINARY LEDGER [RUNS [DATABASE_URL]]
# LEDGER: e.g. `target/release/examples/generate 1000000 > ledger.jsonl`.
# DATABASE_URL: a PostgreSQL ledger holding the same lines (`discuss
# --ledger URL ledger import LEDGER`); `verify`, `events` and a `list`
# without summaries (psql drops the table before each) are run on it too.
set -euo pipefail
old=$1 new=$2 ledger=$3 runs=${4:-2} database=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DISCUSS_LEDGER=$ledger DISCUSS_NOW=${DISCUSS_NOW:-2026-12-01T00:00:00Z}
bytes=$(stat -c %s "$ledger")

cat >"$work/loads.py" <<'EOF'
import json, sys
with open(sys.argv[1], 'rb') as f:
    for line in f:
        json.loads(line)
EOF

# Seconds and KiB of one command, its stdout to $work/out.
timed() {
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out"
  tail -1 "$work/time"
}

drop_cache() { rm -f "$ledger".index "$ledger".checkpoint "$ledger".summary; }

calc() { awk "BEGIN { print $1 }"; }
id=$("$new" list --json | grep -o '"discussion_id":"[^"]*"' | sed -n 1p | cut -d'"' -f4)
works="verify events list-cold show-cold"
if [ -n "$database" ]; then
  psql=$(command -v psql || ls /usr/lib/postgresql/*/bin/psql | sort -V | tail -1)
  works="$works pg-verify pg-events pg-list"
fi
# Rounds: each runs the script, then every work by each build, so that a
# ratio compares runs minutes apart at most (this machine's speed drifts
# by half from one quarter of an hour to the next). Per work and build:
# the best time, its peak memory, and the median of the rounds' ratios.
for round in $(seq "$runs"); do
  timed python3 "$work/loads.py" "$ledger" >"$work/python.$round"
  for work_name in $works; do
    for build in old new; do
      bin=${!build}
      case $work_name in
        verify) "$bin" ledger info >/dev/null; t=$(timed "$bin" verify --json || true) ;;
        events) "$bin" ledger info >/dev/null; t=$(timed "$bin" events --json) ;;
        list-cold) drop_cache; t=$(timed "$bin" list --json) ;;
        show-cold) drop_cache; t=$(timed "$bin" show "$id" --json) ;;
        pg-verify) t=$(DISCUSS_LEDGER=$database timed "$bin" verify --json || true) ;;
        pg-events) t=$(DISCUSS_LEDGER=$database timed "$bin" events --json) ;;
        pg-list)
          "$psql" -q "$database" -c "DROP TABLE IF EXISTS discuss_summaries" 2>/dev/null
          t=$(DISCUSS_LEDGER=$database timed "$bin" list --json) ;;
      esac
      cp "$work/out" "$work/$work_name.$build"
      echo "$t $(cut -d' ' -f1 "$work/python.$round")" >>"$work/times.$work_name.$build"
    done
    cmp -s "$work/$work_name.old" "$work/$work_name.new" || { echo "$work_name: the two builds differ" >&2; exit 1; }
  done
done
# Lines of "seconds KiB python-seconds": the best, its memory, the median ratio.
summary() {
  local best ratio
  best=$(sort -n "$1" | head -1 | cut -d' ' -f1,2)
  ratio=$(awk '{ print $1 / $3 }' "$1" | sort -n |
    awk '{ r[NR] = $1 } END { print (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')
  echo "$best $ratio"
}
python=$(cut -d' ' -f1 "$work"/python.* | sort -n | head -1)
printf '%-12s %-6s %8s %8s %8s %10s\n' work build seconds MiB/s "MiB RSS" "× python"
printf '%-12s %-6s %8s %8.0f %8s %10s\n' python - "$python" "$(calc "$bytes / 1048576 / $python")" - 1.00
for work_name in $works; do
  for build in old new; do
    read -r seconds kib ratio < <(summary "$work/times.$work_name.$build")
    printf '%-12s %-6s %8s %8.0f %8.0f %10.2f\n' "$work_name" "$build" "$seconds" \
      "$(calc "$bytes / 1048576 / $seconds")" "$(calc "$kib / 1024")" "$ratio"
  done
done
echo "the same bytes from both builds"

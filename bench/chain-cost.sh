#!/usr/bin/env bash
# What chaining costs a write, side by side in one run: `ask`, `wake` and
# `reply` by a build before chaining (OLD) and one with it (NEW), in
# alternating rounds, each on a ledger of its own (a file, or with two
# database URLs a PostgreSQL database each). Each command is timed from
# bash (EPOCHREALTIME) the same way for both builds; prints the median µs
# per command and NEW/OLD.
#   bench/chain-cost.sh OLD NEW [CYCLES] [ROUNDS] [DB_URL_OLD DB_URL_NEW]
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") cycles=${3:-100} rounds=${4:-3}
db_old=${5:-} db_new=${6:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DISCUSS_ACTOR=bench
us() { echo "${EPOCHREALTIME/./}"; }
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
cycle() { # BUILD LEDGER: one ask, wake and reply, each timed
  local bin=$1 t0 t1 out dsc head att
  t0=$(us); out=$(DISCUSS_LEDGER=$2 "$bin" --json ask --from a --to b --fleet f \
    --payload '{"body":"Refactor auth module?"}'); t1=$(us)
  echo $((t1 - t0)) >>"$work/$3.ask"
  dsc=$(field discussion_id <<<"$out") head=$(field head_message_id <<<"$out")
  t0=$(us); out=$(DISCUSS_LEDGER=$2 "$bin" --json wake --agent b --discussion "$dsc" \
    --expected-head "$head"); t1=$(us)
  echo $((t1 - t0)) >>"$work/$3.wake"
  att=$(field attempt_id <<<"$out")
  t0=$(us); DISCUSS_LEDGER=$2 "$bin" reply --agent b --discussion "$dsc" --attempt "$att" \
    --reply-to "$head" --type result --payload '{"body":"yes"}' --close >/dev/null; t1=$(us)
  echo $((t1 - t0)) >>"$work/$3.reply"
}
median_of() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# The builds take turns cycle by cycle, so that the machine's drift
# (large here from one minute to the next) weighs on both alike.
for round in $(seq "$rounds"); do
  for build in old new; do
    if [ -n "$db_old" ]; then
      ledger=$([ "$build" = old ] && echo "$db_old" || echo "$db_new")
    else
      ledger=$work/$build.$round.jsonl
    fi
    declare "ledger_$build=$ledger"
    DISCUSS_LEDGER=$ledger "${!build}" fleet add f a b >/dev/null
    DISCUSS_LEDGER=$ledger "${!build}" quota set 100000 --agent b >/dev/null
  done
  for _ in $(seq "$cycles"); do
    cycle "$old" "$ledger_old" old
    cycle "$new" "$ledger_new" new
  done
done
for op in ask wake reply; do
  o=$(median_of <"$work/old.$op") n=$(median_of <"$work/new.$op")
  awk -v op="$op" -v o="$o" -v n="$n" 'BEGIN { printf "%-6s old %6d µs  new %6d µs  new/old %.3f\n", op, o, n, n / o }'
done

#!/usr/bin/env bash
# What scoped kill-switches cost a wake: the same wakes on two copies of
# one ledger, side by side in alternating rounds, one copy with five scoped
# switches engaged (other fleets, agents and discussions: none covers the
# wakes) and one with five fleet records in their place (the same number of
# lines). Prints the median ms of one `wake` on each, and the ratio.
#   bench/scoped-switches.sh BINARY LEDGER [WAKES] [ROUNDS]
# LEDGER is copied (with none of its cache); a million records come from
#   cargo build --release --examples && target/release/examples/generate 1000000 > big.jsonl
set -euo pipefail
bin=$1 base=$2 wakes=${3:-50} rounds=${4:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

for copy in none scoped; do
  cp "$base" "$work/$copy.jsonl"
  export DISCUSS_LEDGER=$work/$copy.jsonl
  "$bin" fleet add bench-f bench-a bench-b >/dev/null
  "$bin" quota set 100000 --agent bench-b >/dev/null
  # The fleets and agents the switches halt must exist (both copies alike).
  "$bin" fleet add other-fleet other-agent-1 other-agent-2 >/dev/null
  "$bin" fleet add other-fleet-3 other-agent-1 >/dev/null
  if [ "$copy" = scoped ]; then
    "$bin" kill-switch on --fleet other-fleet --reason bench >/dev/null
    "$bin" kill-switch on --agent other-agent-1 --reason bench >/dev/null
    "$bin" kill-switch on --agent other-agent-2 --reason bench >/dev/null
    other=$("$bin" --json ask --from bench-a --to bench-b --fleet bench-f --payload '{}' | field discussion_id)
    "$bin" kill-switch on --discussion "$other" --reason bench >/dev/null
    "$bin" kill-switch on --fleet other-fleet-3 --reason bench >/dev/null
  else
    "$bin" --json ask --from bench-a --to bench-b --fleet bench-f --payload '{}' >/dev/null
    for i in 1 2 3 4 5; do "$bin" fleet add "padding-$i" padding-agent >/dev/null; done
  fi
  "$bin" list --status open >/dev/null # the cache, rebuilt once
done

# One round: WAKES asks (not timed) and their wakes (each timed) on a copy.
round() {
  export DISCUSS_LEDGER=$work/$1.jsonl
  local dsc head start end
  for _ in $(seq "$wakes"); do
    dsc=$("$bin" --json ask --from bench-a --to bench-b --fleet bench-f --payload '{"body":"x"}')
    head=$(field root_message_id <<<"$dsc"); dsc=$(field discussion_id <<<"$dsc")
    start=$(date +%s%N)
    "$bin" --json wake --agent bench-b --discussion "$dsc" --expected-head "$head" >/dev/null
    end=$(date +%s%N)
    echo $(( (end - start) / 1000 )) >>"$work/$1.us"
  done
}
for _ in $(seq "$rounds"); do
  round none
  round scoped
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
none=$(median "$work/none.us")
scoped=$(median "$work/scoped.us")
awk -v n="$none" -v s="$scoped" -v c="$((wakes * rounds))" 'BEGIN {
  printf "wake, median of %d: no scoped switch %.2f ms, five scoped switches %.2f ms (%.3fx)\n",
    c, n / 1000, s / 1000, s / n }'

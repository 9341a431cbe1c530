#!/usr/bin/env bash
# What spend costs a write: the same discussions (ask, wake, reply, a
# second wake and reply) written by two builds side by side, in rounds
# that alternate, and by the new build with budgets and --usage on every
# reply. Prints ms per write and the ratios.
#   bench/spend.sh OLD_BINARY NEW_BINARY [DISCUSSIONS] [ROUNDS]
set -euo pipefail
old=$1 new=$2 count=${3:-100} rounds=${4:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

# Runs COUNT discussions with BINARY; extra ask args in $3, extra reply args
# in $4 (word-split). Prints the elapsed ms of its writes.
run() {
  local bin=$1 ledger="$work/$RANDOM$RANDOM.jsonl" ask_extra=$3 reply_extra=$4
  export DISCUSS_LEDGER=$ledger
  "$bin" fleet add f a b >/dev/null
  "$bin" quota set 100000 >/dev/null
  local start end dsc head att
  start=$(date +%s%N)
  for _ in $(seq "$count"); do
    dsc=$("$bin" --json ask --from a --to b --fleet f --payload '{"body":"x"}' --max-turns 8 $ask_extra)
    head=$(field root_message_id <<<"$dsc"); dsc=$(field discussion_id <<<"$dsc")
    for agent in b a; do
      att=$("$bin" --json wake --agent $agent --discussion "$dsc" --expected-head "$head" | field attempt_id)
      head=$("$bin" --json reply --agent $agent --discussion "$dsc" --attempt "$att" --reply-to "$head" \
        --type question --payload '{"body":"y"}' $reply_extra | field message_id)
    done
  done
  end=$(date +%s%N)
  echo $(( (end - start) / 1000000 ))
}

writes=$((count * 5))
declare -A total=([old]=0 [new]=0 [spend]=0)
for round in $(seq "$rounds"); do
  o=$(run "$old" old "" "")
  n=$(run "$new" new "" "")
  s=$(run "$new" spend "--max-tokens 1000000 --max-cost-usd 1000" "--usage {\"input_tokens\":120,\"output_tokens\":30,\"cost_usd\":0.0015}")
  awk -v r="$round" -v o="$o" -v n="$n" -v s="$s" -v w="$writes" \
    'BEGIN { printf "round %d: old %.2f ms/write, new %.2f, new with spend %.2f\n", r, o / w, n / w, s / w }'
  total[old]=$((total[old] + o)); total[new]=$((total[new] + n)); total[spend]=$((total[spend] + s))
done
awk -v o="${total[old]}" -v n="${total[new]}" -v s="${total[spend]}" -v w="$writes" \
  'BEGIN { printf "all rounds: new/old %.3f, new with spend/old %.3f (%d writes a build a round)\n", n / o, s / o, w }'

#!/usr/bin/env bash
# What traces cost a command, side by side in one run: `discuss ask` with
# no endpoint, and with one (a local OTLP/HTTP receiver,
# examples/otlp-receiver.py, JSON), started the same way (bench/startup's
# posix_spawn harness) in alternating rounds; and `--version` and `ask`
# without an endpoint by a build before traces (OLD), with the page
# faults of each. Prints medians (µs) and ratios.
#   bench/traces.sh OLD NEW [RUNS] [ROUNDS]
set -euo pipefail
old=$(realpath "$1") new=$(realpath "$2") runs=${3:-200} rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
receiver=
trap '[ -n "$receiver" ] && kill "$receiver"; rm -rf "$work"' EXIT
cc -O2 -o "$work/spawn" "$here/startup/spawn.c"
python3 "$here/../examples/otlp-receiver.py" serve "$work/spans.jsonl" >"$work/port" &
receiver=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
endpoint=http://127.0.0.1:$(cat "$work/port")
export DISCUSS_ACTOR=bench
median_of() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ask=(ask --from a --to b --fleet f --payload '{"body":"x"}' -q)
for bin in old new; do DISCUSS_LEDGER=$work/$bin.jsonl "${!bin}" fleet add f a b >/dev/null; done
DISCUSS_LEDGER=$work/traced.jsonl "$new" fleet add f a b >/dev/null
for _ in $(seq "$rounds"); do
  "$work/spawn" "$runs" "$old" --version | cut -d' ' -f1 >>"$work/old.version"
  "$work/spawn" "$runs" "$new" --version | cut -d' ' -f1 >>"$work/new.version"
  DISCUSS_LEDGER=$work/old.jsonl "$work/spawn" "$runs" "$old" "${ask[@]}" | cut -d' ' -f1 >>"$work/old.ask"
  DISCUSS_LEDGER=$work/new.jsonl "$work/spawn" "$runs" "$new" "${ask[@]}" | cut -d' ' -f1 >>"$work/new.ask"
  DISCUSS_LEDGER=$work/traced.jsonl OTEL_EXPORTER_OTLP_ENDPOINT=$endpoint OTEL_EXPORTER_OTLP_PROTOCOL=http/json \
    "$work/spawn" "$runs" "$new" "${ask[@]}" | cut -d' ' -f1 >>"$work/traced.ask"
done
faults() { perf stat -x, -e page-faults -r 50 "$@" 2>&1 >/dev/null | cut -d, -f1; }
for what in version ask; do
  o=$(median_of <"$work/old.$what") n=$(median_of <"$work/new.$what")
  awk -v w="$what" -v o="$o" -v n="$n" 'BEGIN { printf "%-8s no endpoint: old %5d µs  new %5d µs  new/old %.3f\n", w, o, n, n / o }'
done
n=$(median_of <"$work/new.ask") t=$(median_of <"$work/traced.ask")
awk -v n="$n" -v t="$t" 'BEGIN { printf "ask      with an endpoint: %5d µs  (%.2fx the same build without)\n", t, t / n }'
if command -v perf >/dev/null; then
  echo "page faults of --version: old $(faults "$old" --version), new $(faults "$new" --version)"
fi
echo "spans received: $(python3 -c 'import json,sys; print(sum(len(s["spans"]) for l in open(sys.argv[1]) for r in json.loads(l)["resourceSpans"] for s in r["scopeSpans"]))' "$work/spans.jsonl")"

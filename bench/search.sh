#!/usr/bin/env bash
# `discuss search` at scale, side by side in one run: on a copy of LEDGER
# (e.g. `target/release/examples/generate 1000000`), `verify`'s time as a
# whole process, the first search with no index (it makes the index), the
# warm search's p50 and p99 over RUNS queries, and the index's size against
# the ledger's; with a PostgreSQL URL, the same for the ledger imported
# into a new database of it (the index there: discuss_search and its GIN
# index, against discuss_lines).
#   bench/search.sh BINARY LEDGER [RUNS] [POSTGRES_URL]
set -euo pipefail
bin=$(realpath "$1") source=$(realpath "$2") runs=${3:-30} pg=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$source" "$work/ledger.jsonl"
export DISCUSS_ACTOR=bench
ms() { python3 -c 'import sys,time; print(int(time.time()*1000))'; }
timed() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
queries=("result" "question turn" "\"more context\"" "fleet bench agent" "zeppelin")
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p/100+0.5); if (i<1) i=1; if (i>NR) i=NR; print a[i]}'; }
measure() { # LOCATION NAME SIZE_COMMAND
  local location=$1 name=$2
  export DISCUSS_LEDGER=$location
  "$bin" list -q >/dev/null 2>&1 || true # the cache, as a user's ledger has it
  local verify first
  verify=$(timed "$bin" verify)
  first=$(timed "$bin" search "${queries[0]}")
  for _ in $(seq "$runs"); do
    for q in "${queries[@]}"; do timed "$bin" search "$q"; done
  done >"$work/$name.warm"
  echo "$name: verify ${verify} ms; first search (no index) ${first} ms;" \
    "warm search p50 $(pct 50 <"$work/$name.warm") ms, p99 $(pct 99 <"$work/$name.warm") ms" \
    "over $(wc -l <"$work/$name.warm") searches; $3"
}
lines=$(wc -l <"$work/ledger.jsonl")
measure "$work/ledger.jsonl" "file ($lines lines)" \
  "index $(du -sm "$work/ledger.jsonl.search" 2>/dev/null | cut -f1) MiB against the ledger's $(( $(stat -c %s "$work/ledger.jsonl") / 1048576 )) MiB"
# measure's index size is read after it ran: say it again, exactly.
echo "file index: $(du -sb "$work/ledger.jsonl.search" | cut -f1) bytes; ledger $(stat -c %s "$work/ledger.jsonl") bytes"
if [[ -n $pg ]]; then
  DISCUSS_LEDGER=$pg "$bin" ledger import "$work/ledger.jsonl" >/dev/null
  measure "$pg" "postgresql" "(sizes below)"
  python3 - "$pg" <<'PY'
import subprocess, sys
url = sys.argv[1]
sql = ("SELECT pg_total_relation_size('discuss_search'), pg_total_relation_size('discuss_lines')")
out = subprocess.run(["psql", url, "-Atc", sql], capture_output=True, text=True).stdout.strip()
index, lines = (int(x) for x in out.split("|"))
print(f"postgresql index: {index} bytes (discuss_search and its GIN index); discuss_lines {lines} bytes")
PY
fi

#!/usr/bin/env bash
# A command's fixed cost, side by side in one run: `discuss --version`
# against an empty C program, and `discuss ask` against the floor of a
# write (open, flock, append a line, fdatasync: bench/startup/append.c).
# Each is started the same way (posix_spawn and waitpid, from
# bench/startup/spawn.c), in alternating rounds; prints the medians (µs)
# and the ratios. With a BASELINE (another build of discuss), it runs in
# the same rounds, on a ledger of its own.
#   bench/startup.sh BINARY [RUNS] [ROUNDS] [BASELINE]
# (the figures in docs/performance.md: BINARY from scripts/build-release,
# BASELINE from cargo build --release)
set -euo pipefail
runs=${2:-300} rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in spawn empty append; do
  cc -O2 -o "$work/$c" "$here/startup/$c.c"
done
names=(discuss) bins=("$(realpath "$1")")
if [[ -n ${4:-} ]]; then names+=(baseline) bins+=("$(realpath "$4")"); fi
export DISCUSS_ACTOR=bench
for i in "${!bins[@]}"; do
  DISCUSS_LEDGER=$work/${names[$i]}.jsonl "${bins[$i]}" fleet add f a b >/dev/null
done
median_of() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$rounds"); do
  "$work/spawn" "$runs" "$work/empty" | cut -d' ' -f1 >>"$work/empty.us"
  "$work/spawn" "$runs" "$work/append" "$work/floor.jsonl" | cut -d' ' -f1 >>"$work/floor.us"
  for i in "${!bins[@]}"; do
    n=${names[$i]} b=${bins[$i]}
    "$work/spawn" "$runs" "$b" --version | cut -d' ' -f1 >>"$work/$n.version.us"
    DISCUSS_LEDGER=$work/$n.jsonl "$work/spawn" "$runs" "$b" ask --from a --to b --fleet f \
      --payload '{"body":"x"}' -q | cut -d' ' -f1 >>"$work/$n.ask.us"
  done
done
empty=$(median_of <"$work/empty.us") floor=$(median_of <"$work/floor.us")
echo "empty C program $empty µs; open+flock+append+fdatasync $floor µs"
for n in "${names[@]}"; do
  version=$(median_of <"$work/$n.version.us") ask=$(median_of <"$work/$n.ask.us")
  awk -v n="$n" -v e="$empty" -v v="$version" -v f="$floor" -v a="$ask" 'BEGIN {
    printf "%-8s --version %d µs (%.2fx the empty program); ask %d µs (%.2fx the write floor)\n",
      n, v, v / e, a, a / f }'
done

#!/usr/bin/env bash
# A command's fixed cost, side by side in one run: `discuss --version`
# against an empty C program, and `discuss ask` against the floor of a
# write (open, flock, append a line, fdatasync: bench/startup/append.c).
# Each is started the same way (posix_spawn and waitpid, from
# bench/startup/spawn.c), in alternating rounds; prints the medians (µs)
# and the ratios.
#   bench/startup.sh BINARY [RUNS] [ROUNDS]
set -euo pipefail
bin=$(realpath "$1") runs=${2:-300} rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in spawn empty append; do
  cc -O2 -o "$work/$c" "$here/startup/$c.c"
done
export DISCUSS_LEDGER=$work/ledger.jsonl DISCUSS_ACTOR=bench
"$bin" fleet add f a b >/dev/null
median_of() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for _ in $(seq "$rounds"); do
  "$work/spawn" "$runs" "$work/empty" | cut -d' ' -f1 >>"$work/empty.us"
  "$work/spawn" "$runs" "$bin" --version | cut -d' ' -f1 >>"$work/version.us"
  "$work/spawn" "$runs" "$work/append" "$work/floor.jsonl" | cut -d' ' -f1 >>"$work/floor.us"
  "$work/spawn" "$runs" "$bin" ask --from a --to b --fleet f --payload '{"body":"x"}' -q \
    | cut -d' ' -f1 >>"$work/ask.us"
done
empty=$(median_of <"$work/empty.us") version=$(median_of <"$work/version.us")
floor=$(median_of <"$work/floor.us") ask=$(median_of <"$work/ask.us")
awk -v e="$empty" -v v="$version" -v f="$floor" -v a="$ask" 'BEGIN {
  printf "empty C program %d µs; discuss --version %d µs (%.2fx)\n", e, v, v / e
  printf "open+flock+append+fdatasync %d µs; discuss ask %d µs (%.2fx)\n", f, a, a / f }'

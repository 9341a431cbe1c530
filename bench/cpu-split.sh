#!/usr/bin/env bash
# Where a command's CPU goes on a machine shared with a local server (issue
# 26's PostgreSQL floor): its wall time, the machine's busy CPU over it
# (from /proc/stat), the command's own user and system time, and the rest,
# the server's on an otherwise idle machine. Its output goes to /dev/null;
# it needs GNU time (/usr/bin/time, the `time` package).
#   bench/cpu-split.sh COMMAND [ARGUMENT...]
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: bench/cpu-split.sh COMMAND [ARGUMENT...]" >&2; exit 2; }
busy() { awk '/^cpu /{print ($2 + $3 + $4 + $7 + $8) / 100}' /proc/stat; }
own=$(mktemp)
trap 'rm -f "$own"' EXIT
busy_before=$(busy) start=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o "$own" "$@" >/dev/null
end=$(date +%s.%N) busy_after=$(busy)
read -r user system <"$own"
awk -v wall="$start $end" -v busy="$busy_before $busy_after" -v own="$user $system" 'BEGIN {
  split(wall, w, " "); split(busy, b, " "); split(own, o, " ")
  machine = b[2] - b[1]; client = o[1] + o[2]
  printf "wall %.2f s  machine busy %.2f s  command %.2f s  rest (the server) %.2f s\n",
    w[2] - w[1], machine, client, machine - client
}'

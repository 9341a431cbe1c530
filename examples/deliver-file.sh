#!/usr/bin/env bash
# Delivers one escalation to a file: appends its JSON as one line (a file
# a person tails, a log shipper reads, a cron job mails).
#   discuss escalations deliver -- examples/deliver-file.sh escalations.jsonl
# The line goes out in one write, so deliveries side by side never
# interleave their lines.
# Needs bash and coreutils.
set -euo pipefail
file=${1:?usage: deliver-file.sh FILE}
line=$(tr -d '\n')
[[ -n $line ]] || { echo "no escalation on stdin" >&2; exit 1; }
printf '%s\n' "$line" >>"$file"

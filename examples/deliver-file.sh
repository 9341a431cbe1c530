#!/usr/bin/env bash
# Delivers one escalation to a file: appends its JSON as one line (a file
# a person tails, a log shipper reads, a cron job mails).
#   discuss escalations deliver -- examples/deliver-file.sh escalations.jsonl
# The line goes out in one write, so deliveries side by side never
# interleave their lines.
# `discuss` records each delivery exactly once, but hands an escalation to
# this script at least once: a deliverer that dies after the script ran
# and before `delivered` was recorded leaves it to be handed out again
# once its claim lapses. The escalation's receipt id is the key that
# drops such a repeat: a line with it already in the file is not added.
# Needs bash, grep and coreutils.
set -euo pipefail
file=${1:?usage: deliver-file.sh FILE}
key=${DISCUSS_RECEIPT_ID:?run by discuss escalations deliver}
line=$(tr -d '\n')
[[ -n $line ]] || { echo "no escalation on stdin" >&2; exit 1; }
if [[ -f $file ]] && grep -qF "\"receipt_id\":\"$key\"" "$file"; then
  echo "escalation $key is in $file already" >&2
  exit 0
fi
printf '%s\n' "$line" >>"$file"

#!/usr/bin/env bash
# Two scripted agents hold a real multi-turn discussion through supervised
# wakes: each wake runs the recipient's script for exactly one turn, with
# a 10 s deadline, and records how it ended. Needs only bash and sed.
# Uses a fresh ledger of its own unless DISCUSS_LEDGER names one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export DISCUSS_LEDGER=${DISCUSS_LEDGER:-$(mktemp -d)/ledger.jsonl}
export PATH="$(dirname "$(command -v "${DISCUSS:-discuss}")"):$PATH"

field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
# The location as discuss shows it: a database URL's password masked.
echo "ledger: $(discuss --json ledger info | field location)"

discuss fleet add fleet-alpha agent-a agent-b >/dev/null
ask=$(discuss --json ask --from agent-a --to agent-b --fleet fleet-alpha \
  --payload '{"body":"Refactor auth module?"}' --max-turns 6 --turn-timeout-ms 10000)
dsc=$(field discussion_id <<<"$ask")
head=$(field root_message_id <<<"$ask")
next=agent-b

# Nothing runs unless woken: the loop is the only thing that starts agents,
# one turn at a time, and the budget bounds it. A turn that does not
# complete ends the script with wake's own exit status (8 failed, 9
# deadman), after showing the discussion.
failed=0
while discuss --json show "$dsc" --no-receipts | grep -q '"status":"open"'; do
  out=$(discuss --json wake --agent "$next" --discussion "$dsc" --expected-head "$head" \
    -- "$here/agents/$next.sh") || { failed=$?; echo "turn of $next did not complete: $out" >&2; break; }
  head=$(field reply_message_id <<<"$out")
  echo "$next replied ($head)"
  if [ "$next" = agent-b ]; then next=agent-a; else next=agent-b; fi
done

discuss show "$dsc"
exit "$failed"

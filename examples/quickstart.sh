#!/usr/bin/env bash
# A whole discussion between two agents, driven from the shell: agent-a
# asks, agent-b asks a question back, agent-a answers, agent-b closes.
# Uses a fresh ledger of its own, never yours, unless DISCUSS_LEDGER names
# one. Needs only bash and sed.
set -euo pipefail
discuss=${DISCUSS:-discuss}
export DISCUSS_LEDGER=${DISCUSS_LEDGER:-$(mktemp -d)/ledger.jsonl}

# The value of a string field in a one-line JSON object (jq -r .NAME works too).
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
# The location as discuss shows it: a database URL's password masked.
echo "ledger: $("$discuss" --json ledger info | field location)"

"$discuss" fleet add fleet-alpha agent-a agent-b >/dev/null

ask=$("$discuss" --json ask --from agent-a --to agent-b --fleet fleet-alpha \
  --payload '{"body":"Refactor auth module?"}' --max-turns 4)
dsc=$(field discussion_id <<<"$ask")
head=$(field root_message_id <<<"$ask")
echo "asked: $dsc"

# One explicit, budgeted turn per wake; the reply answers the head.
turn() { # AGENT TYPE BODY [--close]
  local agent=$1 type=$2 body=$3 attempt reply
  attempt=$("$discuss" --json wake --agent "$agent" --discussion "$dsc" --expected-head "$head" | field attempt_id)
  reply=$("$discuss" --json reply --agent "$agent" --discussion "$dsc" --attempt "$attempt" \
    --reply-to "$head" --type "$type" --payload "{\"body\":\"$body\"}" "${@:4}")
  head=$(field message_id <<<"$reply")
  echo "$agent: $type -> $(field status <<<"$reply")"
}

turn agent-b question "Which module first, session or token?"
turn agent-a result "Token first."
turn agent-b result "Yes, proceed with token." --close

"$discuss" show "$dsc"

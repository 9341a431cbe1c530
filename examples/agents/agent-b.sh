#!/usr/bin/env bash
# A scripted peer. Run by `discuss wake -- ...`: the head message's body is
# on stdin and DISCUSS_* say which turn this is; it answers with `discuss
# reply`, which takes its ids from that environment.
set -euo pipefail
question=$(cat)
if [ "$DISCUSS_TURN" -le 2 ]; then
  discuss reply --type question --payload '{"body":"Which module first, session or token?"}'
else
  discuss reply --type result --close --payload '{"body":"Done: token module refactored."}'
fi >/dev/null
echo "agent-b saw: $question" >&2

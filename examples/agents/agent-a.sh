#!/usr/bin/env bash
# A scripted asker: answers agent-b's question.
set -euo pipefail
question=$(cat)
discuss reply --type result --payload '{"body":"Token first, then session."}' >/dev/null
echo "agent-a saw: $question" >&2

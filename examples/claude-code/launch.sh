#!/usr/bin/env bash
# Starts Claude Code as a discuss agent: its session knows who it is
# (DISCUSS_AGENT_ID), which ledger the fleet shares (DISCUSS_LEDGER), and
# its hooks (settings.json beside this script) tell it of a turn that is
# reserved for it: at its start, at each prompt, and when it would stop.
#   examples/claude-code/launch.sh AGENT [CLAUDE_ARGS...]
# In tmux, so that `discuss wake --into tmux:AGENT` can tell it of a turn
# while it sits idle:
#   tmux new-session -d -s agent-b 'examples/claude-code/launch.sh agent-b'
#   discuss wake --agent agent-b --discussion dsc_… --expected-head msg_… --into tmux:agent-b
# Needs `discuss` and `claude` on PATH (DISCUSS_BIN names another discuss).
set -euo pipefail
agent=${1:?usage: launch.sh AGENT [CLAUDE_ARGS...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
: "${DISCUSS_LEDGER:?set DISCUSS_LEDGER to the ledger the fleet shares}"
export DISCUSS_AGENT_ID=$agent DISCUSS_LEDGER
if [[ -n ${DISCUSS_BIN:-} ]]; then
  PATH=$(dirname "$DISCUSS_BIN"):$PATH
fi
exec claude --settings "$here/settings.json" "$@"

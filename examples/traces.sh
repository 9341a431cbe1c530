#!/usr/bin/env bash
# Traces end to end on this machine: a local OTLP/HTTP receiver
# (examples/otlp-receiver.py, standard-library Python), one supervised
# turn exported to it, and the spans it received printed as a tree:
#   wake_agent
#     invoke_agent agent-b          (the turn; the agent got TRACEPARENT)
#       reply_discussion            (the agent's own reply, nested)
# Point OTEL_EXPORTER_OTLP_ENDPOINT at a real collector (Jaeger, Tempo,
# an OpenTelemetry Collector) the same way. DISCUSS names the binary
# (default: discuss); the ledger is a temporary one.
set -euo pipefail
discuss=${DISCUSS:-discuss}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
receiver=
trap '[ -n "$receiver" ] && kill "$receiver"; rm -rf "$work"' EXIT
export DISCUSS_LEDGER=$work/ledger.jsonl
python3 "$here/otlp-receiver.py" serve "$work/spans.jsonl" >"$work/port" &
receiver=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
export OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$(cat "$work/port")
export OTEL_EXPORTER_OTLP_PROTOCOL=http/json OTEL_SERVICE_NAME=discuss-example
"$discuss" fleet add demo agent-a agent-b >/dev/null
asked=$("$discuss" --json ask --from agent-a --to agent-b --fleet demo \
  --payload '{"body":"Ship it?"}')
dsc=$(sed -n 's/.*"discussion_id":"\([^"]*\)".*/\1/p' <<<"$asked")
head=$(sed -n 's/.*"head_message_id":"\([^"]*\)".*/\1/p' <<<"$asked")
"$discuss" wake --agent agent-b --discussion "$dsc" --expected-head "$head" -- \
  sh -c "\"$discuss\" reply --type result --payload '{\"body\":\"Yes\"}' --close >/dev/null" >/dev/null
python3 "$here/otlp-receiver.py" tree "$work/spans.jsonl"

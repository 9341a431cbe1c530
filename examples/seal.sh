#!/usr/bin/env bash
# Keeps seals of the ledger somewhere its writers cannot reach, and checks
# the ledger against the latest one. Run it from cron (e.g. hourly) on the
# host that holds the ledger, with SEALS a folder on another host (an NFS
# mount, or rsync/scp the file after), or hand each seal to whatever keeps
# escalations (a ticket, a chat): a seal is one small JSON object.
#   examples/seal.sh KEY SEALS     # seal now, then verify against it
#   discuss ledger keygen --output KEY   # once; give KEY.pub to checkers
# A later `discuss verify --seal SEALS/latest.json --public-key KEY.pub`
# fails (seal_mismatch, exit 7) if the ledger was cut back below the
# sealed line, or its history rewritten and chained anew.
# Needs bash and coreutils; DISCUSS names the binary (default: discuss).
set -euo pipefail
key=${1:?usage: seal.sh KEY SEALS}
seals=${2:?usage: seal.sh KEY SEALS}
discuss=${DISCUSS:-discuss}
mkdir -p "$seals"
# The previous seal must still hold before a new one is made: a seal
# vouches only for the history it saw.
if [[ -f $seals/latest.json ]]; then
  "$discuss" verify --seal "$seals/latest.json" --public-key "$key.pub" >/dev/null
fi
seal=$("$discuss" ledger seal --key "$key")
stamp=$(date -u +%Y%m%dT%H%M%SZ)
printf '%s\n' "$seal" >"$seals/seal-$stamp.json"
cp "$seals/seal-$stamp.json" "$seals/latest.json.new"
mv "$seals/latest.json.new" "$seals/latest.json"
echo "sealed: $seal"

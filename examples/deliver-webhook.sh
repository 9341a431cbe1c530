#!/usr/bin/env bash
# Delivers one escalation to a webhook: `discuss escalations deliver`
# hands it the escalation's JSON on stdin, and this posts it as is.
#   discuss escalations deliver --follow -- examples/deliver-webhook.sh URL
# Exit 0 only when the server answered 2xx, so a failed post is retried
# (after 1 s, doubling, at most 10 minutes). Needs bash and curl.
set -euo pipefail
url=${1:?usage: deliver-webhook.sh URL}
curl --silent --show-error --fail --max-time 30 \
  --header 'Content-Type: application/json' \
  --data-binary @- \
  "$url" >/dev/null
echo "delivered escalation $DISCUSS_RECEIPT_ID of $DISCUSS_DISCUSSION_ID ($DISCUSS_REASON) to $url" >&2

#!/usr/bin/env bash
# Delivers one escalation to a webhook: `discuss escalations deliver`
# hands it the escalation's JSON on stdin, and this posts it as is.
#   discuss escalations deliver --follow -- examples/deliver-webhook.sh URL
# Exit 0 only when the server answered 2xx, so a failed post is retried
# (after 1 s, doubling, at most 10 minutes). Needs bash and curl.
# `discuss` records each delivery exactly once, but hands an escalation to
# this script at least once (a deliverer that dies between the post and
# recording it leaves the escalation to be handed out again once its claim
# lapses). The escalation's receipt id goes with the post as
# `Idempotency-Key`, so the receiver can drop a repeat.
# curl's own errors name the URL, which may carry a secret: they are not
# passed on (the failure's exit status says curl's reason).
set -euo pipefail
url=${1:?usage: deliver-webhook.sh URL}
key=${DISCUSS_RECEIPT_ID:?run by discuss escalations deliver}
status=0
curl --silent --fail --max-time 30 \
  --header 'Content-Type: application/json' \
  --header "Idempotency-Key: $key" \
  --data-binary @- \
  "$url" >/dev/null 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
  echo "the webhook post failed (curl exit $status)" >&2
  exit "$status"
fi
echo "delivered escalation $key of $DISCUSS_DISCUSSION_ID ($DISCUSS_REASON)" >&2

#!/usr/bin/env bash
# Tells a chat channel what needs a person: `discuss escalations deliver`
# hands this each pending escalation and approval request as JSON on
# stdin, and this posts one readable message to an incoming webhook.
#   discuss escalations deliver --follow -- examples/deliver-chat.sh URL
# The message is `{"text": ...}`, which Slack's, Mattermost's and Rocket.Chat's
# incoming webhooks take as is. An approval request's message carries the
# two commands that decide it (and the HTTP request, for a console or a bot).
# Exit 0 only when the server answered 2xx, so a failed post is retried
# (after 1 s, doubling, at most 10 minutes). Needs bash, jq and curl.
# The receipt id goes with the post as `Idempotency-Key`, so a receiver can
# drop the repeat a deliverer that died before recording may send. curl's
# own errors name the URL, which may carry a secret: they are not passed on.
set -euo pipefail
url=${1:?usage: deliver-chat.sh WEBHOOK_URL}
key=${DISCUSS_RECEIPT_ID:?run by discuss escalations deliver}
message=$(jq -c '
  def spent: "\(.spend.tokens // 0) tokens, $\(.spend.cost_usd // 0)";
  def who: (.participants // []) | join(" ⇄ ");
  {text: (
    if .kind == "approval" then
      "Approval needed: turn \(.turn) of \(.agent_id) in \(.discussion_id)"
      + " (fleet \(.fleet_id), \(who)), spent so far \(spent)."
      + " It expires at \(.expires_at) (then reads as denied).\n"
      + "Grant: \(.approve_command)\n"
      + "Deny:  \(.deny_command)\n"
      + "Over HTTP (operator token): \(.http.method) \(.http.path) with"
      + " {\"decision\":\"grant\"} or {\"decision\":\"deny\",\"reason\":\"…\"}"
    else
      "Escalation: \(.discussion_id) (fleet \(.fleet_id), \(who)) ended"
      + " (\(.reason)) after \(.turns_used) turns, spent \(spent).\n"
      + "Read it: discuss show \(.discussion_id)"
    end)}')
status=0
curl --silent --fail --max-time 30 \
  --header 'Content-Type: application/json' \
  --header "Idempotency-Key: $key" \
  --data-binary "$message" \
  "$url" >/dev/null 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
  echo "the chat post failed (curl exit $status)" >&2
  exit "$status"
fi
echo "told the chat of ${DISCUSS_KIND:-escalation} $key of $DISCUSS_DISCUSSION_ID" >&2

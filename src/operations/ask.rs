//! The seed's `ask_peer`: the root message, and with `wake_peer` the
//! peer's first reservation, in one write.

use crate::engine::{AskOutcome, AskRequest, idempotency, plan_ask};
use crate::error::Result;
use crate::record::ReceiptKind;
use crate::session::Session;

/// Writes the root (and the reservation); with an idempotency key already
/// used for this very request, writes nothing and answers the original
/// (`true` = replayed).
pub(crate) fn ask(
    session: &Session,
    request: &AskRequest,
    key: Option<&str>,
) -> Result<(AskOutcome, bool)> {
    // The new discussion, and the peer whose first turn it may reserve.
    let wakes: &[&str] = if request.wake_peer {
        &[&request.to]
    } else {
        &[]
    };
    let (outcome, replayed) = super::write_once(
        session,
        &[&request.discussion_id],
        wakes,
        key,
        &request.digest,
        |earlier| {
            let discussion = idempotency::as_written(earlier)?;
            // The reservation written with the root, if it asked for one.
            let attempt = earlier
                .discussion
                .iter()
                .filter(|r| r.op_id.as_deref() == Some(&earlier.first.id))
                .find_map(|r| match &r.body {
                    crate::ledger::Body::Receipt(receipt)
                        if receipt.kind() == Some(ReceiptKind::Reserved) =>
                    {
                        receipt.attempt_id.as_deref()
                    }
                    _ => None,
                })
                .and_then(|id| discussion.attempt(id).cloned());
            // Asked under a gate: refused again while its request waits.
            let approval_required = discussion
                .awaiting_approval(earlier.first.at_ms.max(session.now(None)))
                .filter(|_| attempt.is_none() && request.wake_peer)
                .map(|a| {
                    crate::engine::approval::required(&discussion.id, &a.approval_id, a.expires_ms)
                });
            Ok(AskOutcome {
                discussion,
                attempt,
                approval_required,
            })
        },
        |view| {
            let stamp = session.stamp(view.last_at_ms());
            plan_ask(&view.global(stamp.at_ms), request, &stamp)
        },
    )?;
    // Written and durable: the discussion is there, its wake waits.
    match outcome.approval_required {
        Some(refusal) => Err(refusal),
        None => Ok((outcome, replayed)),
    }
}

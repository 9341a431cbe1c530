//! The seed's `wake_agent`: one budgeted reservation, never a start.

use crate::discussion::{Attempt, Discussion};
use crate::engine::{WakeRequest, idempotency, plan_wake};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;

/// Reserves the attempt; with an idempotency key already used for this
/// very request, writes nothing and answers the original (`true` =
/// replayed).
pub(crate) fn wake(
    session: &Session,
    request: &WakeRequest,
    key: Option<&str>,
) -> Result<(Discussion, Attempt, bool)> {
    let ((discussion, attempt), replayed) = super::write_once(
        session,
        &[&request.discussion_id],
        &[&request.agent],
        key,
        &request.digest,
        |earlier| {
            let discussion = idempotency::as_written(earlier)?;
            let attempt = match &earlier.first.body {
                crate::ledger::Body::Receipt(r) => r.attempt_id.as_deref(),
                _ => None,
            }
            .and_then(|id| discussion.attempt(id).cloned())
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::Internal,
                    "the record of an idempotency key holds no reservation",
                )
            })?;
            Ok((discussion, attempt))
        },
        |view| {
            plan_wake(
                &view.global(session.now(view.last_at_ms())),
                &view.discussion(&request.discussion_id),
                request,
                &session.stamp(view.last_at_ms()),
            )
        },
    )
    .map_err(|err| crate::operations::near_match(err, session, &request.discussion_id))?;
    Ok((discussion, attempt, replayed))
}

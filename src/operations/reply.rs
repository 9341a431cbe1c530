//! The seed's `reply_discussion`: the answer within a live attempt.

use crate::discussion::Discussion;
use crate::engine::{ReplyRequest, idempotency, plan_reply};
use crate::error::Result;
use crate::session::Session;

/// Appends the reply; with an idempotency key already used for this very
/// request, writes nothing and answers the original (`true` = replayed).
pub(crate) fn reply(
    session: &Session,
    request: &ReplyRequest,
    key: Option<&str>,
) -> Result<(Discussion, String, bool)> {
    let ((discussion, message_id), replayed) = super::write_once(
        session,
        &[&request.discussion_id],
        &[],
        key,
        &request.digest,
        |earlier| Ok((idempotency::as_written(earlier)?, earlier.first.id.clone())),
        |view| {
            plan_reply(
                &view.global(session.now(view.last_at_ms())),
                &view.discussion(&request.discussion_id),
                request,
                &session.stamp(view.last_at_ms()),
            )
        },
    )
    .map_err(|err| crate::operations::near_match(err, session, &request.discussion_id))?;
    Ok((discussion, message_id, replayed))
}

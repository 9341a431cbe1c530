//! The seed's `wake_agent`: one budgeted reservation, never a start; under
//! an approval gate, a request a person decides first.

use crate::discussion::{ApprovalState, Attempt, Discussion};
use crate::engine::{WakeRequest, Woken, idempotency, plan_wake};
use crate::error::{Error, ErrorCode, Result};
use crate::session::Session;
use std::time::Duration;

/// How often a wake that waits for a decision looks at the ledger.
const APPROVAL_POLL: Duration = Duration::from_millis(50);

/// Reserves the attempt; with an idempotency key already used for this
/// very request, writes nothing and answers the original (`true` =
/// replayed). Under a gate, records the request (once) and is refused
/// `approval_required`; with `wait_approval`, waits for the decision or
/// the expiry and then reserves or is refused `approval_denied`.
pub(crate) fn wake(
    session: &Session,
    request: &WakeRequest,
    key: Option<&str>,
    wait_approval: bool,
) -> Result<(Discussion, Attempt, bool)> {
    let mut waited_for: Option<String> = None;
    loop {
        match wake_once(session, request, key) {
            Err(err) if err.code == ErrorCode::ApprovalRequired && wait_approval => {
                let approval_id = err
                    .details
                    .get("approval_id")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned();
                // The request waited for expired undecided: fail closed.
                if waited_for.as_deref() == Some(&approval_id) {
                    return Err(err);
                }
                if let Some(expired) = wait_for_decision(session, request, &approval_id)? {
                    return Err(expired);
                }
                waited_for = Some(approval_id);
            }
            other => return other,
        }
    }
}

/// Waits until `approval_id` is decided (`None`: wake again) or expires
/// (the `approval_denied` the waiting wake is refused with).
fn wait_for_decision(
    session: &Session,
    request: &WakeRequest,
    approval_id: &str,
) -> Result<Option<Error>> {
    let mut changes = super::watch::Changes::unseen();
    let mut expires_ms = None;
    super::watch::every(APPROVAL_POLL, || {
        let now = session.now(None);
        if let Some(expires) = expires_ms
            && now < expires
            && changes.fresh(session).is_none()
        {
            return Ok(None);
        }
        let version = session.ledger.version();
        let (discussion, now) = super::read::load(session, &request.discussion_id)?;
        changes.seen(version);
        let Some(approval) = discussion
            .approvals
            .iter()
            .find(|a| a.approval_id == approval_id)
        else {
            return Ok(Some(None));
        };
        expires_ms = Some(approval.expires_ms);
        Ok(match approval.state(now) {
            ApprovalState::Pending if !discussion.status.is_terminal() => None,
            ApprovalState::Expired => Some(Some(crate::engine::approval::denied(
                &discussion,
                approval,
                true,
            ))),
            _ => Some(None),
        })
    })
}

fn wake_once(
    session: &Session,
    request: &WakeRequest,
    key: Option<&str>,
) -> Result<(Discussion, Attempt, bool)> {
    let (woken, replayed) = super::write_once(
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
            Ok(Woken::Reserved(Box::new((discussion, attempt))))
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
    match woken {
        Woken::Reserved(reserved) => {
            let (discussion, attempt) = *reserved;
            Ok((discussion, attempt, replayed))
        }
        // Written and durable: now the refusal.
        Woken::ApprovalRequested(refusal) => Err(refusal),
    }
}

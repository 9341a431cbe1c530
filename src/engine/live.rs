//! Live sessions: the receipt that a turn's pointer was typed into its
//! session (`wake --into`), and the pickup (`discuss turn`, `take_turn`,
//! `GET /v1/turn`): the `started` receipt with `via: "pickup"` that
//! proves the session took the turn.

use super::{Stamp, finish_plan};
use crate::discussion::{Attempt, AttemptState, Discussion, derive};
use crate::error::{Error, ErrorCode, Result};
use crate::global::Global;
use crate::ids;
use crate::record::{Body, Receipt, ReceiptKind, Record};

/// `discussion.attempt.delivered` for the live attempt `attempt_id`,
/// reserved `--into` a session; nothing when it ended meanwhile or was
/// delivered already.
pub fn plan_pointer_delivered(
    discussion_id: &str,
    attempt_id: &str,
    existing: &[&Record],
    stamp: &Stamp,
) -> Result<(Vec<Record>, Option<Discussion>)> {
    let Some(discussion) = derive(discussion_id, existing, stamp.at_ms) else {
        return Ok((Vec::new(), None));
    };
    let deliverable = discussion
        .live_attempt()
        .filter(|a| a.attempt_id == attempt_id && a.delivered_at_ms.is_none());
    let Some(attempt) = deliverable else {
        return Ok((Vec::new(), Some(discussion)));
    };
    let receipt = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::Delivered.name().into(),
            discussion_id: discussion_id.into(),
            attempt_id: Some(attempt_id.into()),
            agent_id: Some(attempt.agent_id.clone()),
            into: attempt.into.clone(),
            ..Receipt::default()
        })),
    );
    let (records, state) = finish_plan(discussion_id, existing, vec![receipt], stamp)?;
    Ok((records, Some(state)))
}

/// The pickup of `attempt_id` by its agent's session: `started` with
/// `via: "pickup"` the first time, nothing after (a supervised turn is
/// started already). A turn no longer live is `no_live_turn`; a halt that
/// covers it refuses the pickup (`kill_switch_engaged`), as a reply is
/// refused.
pub fn plan_pickup(
    global: &Global,
    discussion_id: &str,
    attempt_id: &str,
    existing: &[&Record],
    stamp: &Stamp,
) -> Result<(Vec<Record>, (Discussion, Attempt))> {
    let discussion = derive(discussion_id, existing, stamp.at_ms)
        .ok_or_else(|| super::unknown_discussion(discussion_id))?;
    let Some(attempt) = discussion
        .live_attempt()
        .filter(|a| a.attempt_id == attempt_id)
        .cloned()
    else {
        return Err(no_live_turn_of(discussion_id, attempt_id));
    };
    global.check_halts(discussion.covered())?;
    if attempt.state != AttemptState::Reserved {
        return Ok((Vec::new(), (discussion, attempt)));
    }
    let started = stamp.record(
        ids::RECEIPT,
        Body::Receipt(Box::new(Receipt {
            receipt: ReceiptKind::Started.name().into(),
            discussion_id: discussion_id.into(),
            attempt_id: Some(attempt_id.into()),
            agent_id: Some(attempt.agent_id.clone()),
            via: Some("pickup".into()),
            ..Receipt::default()
        })),
    );
    let (records, state) = finish_plan(discussion_id, existing, vec![started], stamp)?;
    let attempt = state
        .attempt(attempt_id)
        .cloned()
        .expect("the pickup was accepted");
    Ok((records, (state, attempt)))
}

/// The turn `attempt_id` of `discussion_id` ended or lapsed before it was
/// taken.
fn no_live_turn_of(discussion_id: &str, attempt_id: &str) -> Error {
    Error::new(
        ErrorCode::NoLiveTurn,
        format!("{attempt_id} of {discussion_id} is no longer live"),
    )
    .detail("discussion_id", discussion_id)
    .detail("attempt_id", attempt_id)
    .hint(format!(
        "read what happened: `discuss show {discussion_id}`"
    ))
}

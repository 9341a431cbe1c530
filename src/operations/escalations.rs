//! Escalations and their delivery: every escalated discussion with how
//! far its delivery got, and the claim, `delivered` and `delivery_failed`
//! receipts a deliverer writes, each one write under the ledger's lock.

use super::{lists, read};
use crate::discussion::{Discussion, Status};
use crate::engine::{DeliveryStep, plan_delivery};
use crate::error::Result;
use crate::session::Session;
use std::collections::HashSet;

/// The ends that escalate: every terminal status but `closed`.
const UNRESOLVED: [Status; 4] = [
    Status::Exhausted,
    Status::Deadman,
    Status::Expired,
    Status::Invalid,
];

/// The discussions due an escalation that nobody has recorded yet (they
/// ended by time, or turned invalid, with no write to record it), derived
/// now; newest end first.
pub(crate) fn due(session: &Session) -> Result<Vec<Discussion>> {
    let (rows, _) = lists::listed(
        session,
        &[Status::Deadman, Status::Expired, Status::Invalid],
        None,
        None,
    )?;
    let mut due = Vec::new();
    for row in rows.iter().filter(|row| !row.escalated) {
        let (discussion, _) = read::load(session, &row.id)?;
        if crate::engine::due_escalation(&discussion).is_some() {
            due.push(discussion);
        }
    }
    Ok(due)
}

/// Records the escalation of every discussion that is due one, each in a
/// write under its discussion's lock (a racing writer that recorded it
/// first leaves nothing to record); how many this call recorded.
pub(crate) fn record_due(session: &Session) -> Result<usize> {
    let mut recorded = 0;
    for discussion in due(session)? {
        let wrote = session.ledger.append(&[&discussion.id], |view| {
            let (records, _) = crate::engine::plan_due_escalation(
                &discussion.id,
                &view.discussion(&discussion.id),
                &session.stamp(view.last_at_ms()),
            )?;
            let wrote = !records.is_empty();
            Ok((records, wrote))
        })?;
        recorded += usize::from(wrote);
    }
    Ok(recorded)
}

/// Every discussion with an escalation but those in `known_delivered` (a
/// delivered escalation stays delivered: a deliverer that follows need not
/// read it again), the newest escalation first, and the instant they were
/// derived at.
pub(crate) fn escalated(
    session: &Session,
    known_delivered: &HashSet<String>,
) -> Result<(Vec<Discussion>, i64)> {
    let (rows, now) = lists::listed(session, &UNRESOLVED, None, None)?;
    let mut escalated = Vec::new();
    for row in rows
        .iter()
        .filter(|row| row.escalated && !known_delivered.contains(&row.id))
    {
        let (discussion, _) = read::load(session, &row.id)?;
        if discussion.escalation.is_some() {
            escalated.push(discussion);
        }
    }
    let at = |d: &Discussion| d.escalation.as_ref().map_or(0, |e| e.at_ms);
    escalated.sort_by(|a, b| lists::newest_first((at(a), &a.id), (at(b), &b.id)));
    Ok((escalated, now))
}

/// Writes `step` for the escalation or approval request `receipt_id` of
/// `discussion_id`; whether it was written (a claim is not when another
/// deliverer holds it, when it waits out a backoff, when it was delivered
/// meanwhile, or when the request was decided first).
pub(crate) fn record(
    session: &Session,
    discussion_id: &str,
    receipt_id: &str,
    step: &DeliveryStep,
) -> Result<bool> {
    session.ledger.append(&[discussion_id], |view| {
        let (records, _) = plan_delivery(
            discussion_id,
            receipt_id,
            step,
            &view.discussion(discussion_id),
            &session.stamp(view.last_at_ms()),
        )?;
        let wrote = !records.is_empty();
        Ok((records, wrote))
    })
}
